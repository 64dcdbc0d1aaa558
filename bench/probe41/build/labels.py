"""Labels for probe41 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"
EXPL, T2N, AGN = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

FBGEMM_NOTE = ("fbgemm_gpu's CUDA wheel links libcudart and registers torch.ops.fbgemm.* only for CUDA/CPU; "
               "on Ascend install fbgemm_gpu_cpu and import fbgemm_ascend (Ascend/fbgemm-ascend), which "
               "registers NPU kernels for jagged ops, asynchronous_complete_cumsum, block_bucketize_sparse_features, "
               "TBE and int-nbit TBE under the same torch.ops.fbgemm namespace")
TRITON_DEFAULT_NOTE = ("the default kernel path launches Triton kernels on NPU tensors; upstream triton has no "
                       "Ascend driver and the kernels are not ported to triton-ascend, so select the PYTORCH "
                       "reference kernels on NPU")

# ---------------------------------------------------------------------------------------------
# generative-recommenders (HSTU)
# ---------------------------------------------------------------------------------------------
E("gr_common", "generative_recommenders/common.py", EXPL,
  "meta-recsys/generative-recommenders common.py (HammerKernel TRITON/PYTORCH/CUDA switch, SM helpers)", [
    C("return HammerKernel.TRITON  # default kernel", "unsupported_op_workaround", R, True,
      "return HammerKernel.TRITON if torch.cuda.is_available() else HammerKernel.PYTORCH  # PYTORCH on NPU",
      TRITON_DEFAULT_NOTE),
    C("return HammerKernel.TRITON_CC", "unsupported_op_workaround", R, True,
      "return HammerKernel.TRITON_CC if torch.cuda.is_available() else HammerKernel.PYTORCH",
      "TRITON_CC = AOT-compiled Triton (cubin) for inference; no NPU equivalent"),
    C("if not torch.cuda.is_available() or torch.cuda.device_count() == 0:", "torch_cuda_api", R, True,
      "if not torch.npu.is_available() or torch.npu.device_count() == 0:",
      "test gate: on an NPU host every op test is silently skipped"),
    C('return torch.cuda.get_device_properties("cuda").multi_processor_count', "device_capability_check", R, True,
      'return torch.npu.get_device_properties().vector_core_num  # or cube_core_num',
      "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, "
      "cube_core_num, vector_core_num); reached from the persistent Triton grids on the default TRITON path"),
])

E("gr_hstu_attention", "generative_recommenders/ops/hstu_attention.py", EXPL,
  "generative-recommenders ops/hstu_attention.py (kernel dispatcher + fbgemm-based PyTorch reference)", [
    C("import fbgemm_gpu  # noqa: F401  (registers", "custom_cuda_extension", R, True,
      "import fbgemm_ascend  # noqa: F401  (registers torch.ops.fbgemm.* NPU kernels)",
      FBGEMM_NOTE + "; the PYTORCH path here calls jagged_to_padded_dense / dense_to_jagged"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", R, True,
      'major, _ = torch.cuda.get_device_capability(device) if device.type == "cuda" else (0, 0)',
      "called unconditionally from hstu_mha (enable_tma) with the NPU tensor's device: raises "
      "'Expected a cuda device'"),
])

E("gr_triton_jagged", "generative_recommenders/ops/triton/triton_jagged.py", EXPL,
  "generative-recommenders ops/triton/triton_jagged.py (autotuned jagged x dense bmm, persistent concat kernel)", [
    C("for num_warps in [4, 8]:", "triton_kernel_tuning", R, False,
      "for num_warps in [1]:  # triton-ascend: one program per AI core",
      "unconfirmed: warp counts are NVIDIA occupancy knobs; triton-ascend tuning differs"),
    C('eviction_policy="evict_last",', "triton_kernel_tuning", X, False, None,
      "unconfirmed: L2 eviction hints are a CUDA cache feature"),
    C("accumulator += tl.dot(jg, dn, allow_tf32=ALLOW_TF32)", "triton_kernel_tuning", R, False,
      "accumulator += tl.dot(jg, dn)",
      "unconfirmed: TF32 is an Ampere+ mode; how triton-ascend treats allow_tf32 is not documented here"),
    C("@torch.cuda.amp.custom_fwd", "amp", R, False,
      '@torch.amp.custom_fwd(device_type="npu")',
      "unconfirmed: records CUDA autocast state only; under NPU autocast backward runs without it"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False,
      '@torch.amp.custom_bwd(device_type="npu")', "pairs with custom_fwd; unconfirmed impact"),
    C("with torch.cuda.device(jagged.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(jagged.device.index):",
      "torch.cuda.device() needs a CUDA build; raises on the NPU host"),
    C("num_warps=4,", "triton_kernel_tuning", R, False, "num_warps=1,",
      "unconfirmed: launch-time warp count for the persistent kernel"),
])

E("gr_stu_module", "generative_recommenders/modules/stu.py", EXPL,
  "generative-recommenders modules/stu.py (STULayer / STUStack, fp32 LayerNorm island, NVTX ranges, KV cache)", [
    C('with torch.autocast("cuda", enabled=False):', "amp", R, True,
      'with torch.autocast("npu", enabled=False):',
      "the fp32 LayerNorm island only disables CUDA autocast; under NPU bf16 autocast the statistics are "
      "silently computed in bf16"),
    C('torch.cuda.nvtx.range_push("STULayer.forward")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("STULayer.forward")',
      "torch.cuda.nvtx is not aliased to NPU and raises 'NVTX functions not installed' without CUDA; "
      "mstx method name unconfirmed"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True,
      "torch_npu.npu.mstx.range_end(rng_id)", "pair of the range_push above; mstx method name unconfirmed"),
])

E("gr_jagged_tensors", "generative_recommenders/ops/jagged_tensors.py", EXPL,
  "generative-recommenders ops/jagged_tensors.py (concat/split 2D jagged, fbgemm reference path, is_cuda fast path)", [
    C("import fbgemm_gpu.sparse_ops  # noqa: F401", "custom_cuda_extension", R, True,
      "import fbgemm_ascend  # noqa: F401", FBGEMM_NOTE),
    C("selected, _ = torch.ops.fbgemm.jagged_index_select(values, offsets, indices)",
      "unsupported_op_workaround", R, False,
      "rows = torch.repeat_interleave(...); selected = values.index_select(0, rows)",
      "unconfirmed: fbgemm-ascend's README lists jagged ops generically; if jagged_index_select has no NPU "
      "kernel the call raises"),
])

E("gr_cuda_ops", "generative_recommenders/ops/cpp/cuda_ops.py", EXPL,
  "generative-recommenders ops/cpp Python registration of hstu::* ops (load_library, torch.library impl/custom_op)", [
    C("torch.ops.load_library(_find_library())", "custom_cuda_extension", R, True,
      "if torch.cuda.is_available(): torch.ops.load_library(_find_library())",
      "libhstu_ops.so is nvcc-built against libcudart; it cannot be built or loaded on the NPU host"),
    C('_lib.impl("concat_1d_jagged_jagged", _concat_1d_jagged_jagged_cuda, "CUDA")', "custom_cuda_extension", B, True,
      '_lib.impl("concat_1d_jagged_jagged", _concat_1d_jagged_jagged_ref, "PrivateUse1")',
      "op registered only for the CUDA dispatch key: NPU tensors hit NotImplementedError"),
    C('@torch.library.impl("hstu::expand_1d_jagged_to_dense", "CUDA")', "custom_cuda_extension", B, True,
      '@torch.library.impl("hstu::expand_1d_jagged_to_dense", "PrivateUse1")  # reuse the torch reference',
      "no PrivateUse1 kernel registered"),
    C('@torch.library.impl(_lib, "batched_complete_cumsum", "CUDA")', "custom_cuda_extension", B, True,
      '@torch.library.impl(_lib, "batched_complete_cumsum", "PrivateUse1")',
      "no PrivateUse1 kernel registered"),
    C('"hstu::get_hstu_attn_sort_order", mutates_args=(), device_types="cuda"', "custom_cuda_extension", R, True,
      '"hstu::get_hstu_attn_sort_order", mutates_args=(), device_types=("cuda", "npu")  # + torch.argsort body',
      "custom_op implemented for cuda only; called from sort_by_length on the NPU path"),
    C('device_types=("cpu", "cuda"),', "custom_cuda_extension", R, True,
      'device_types=("cpu", "cuda", "npu"),',
      "the body already has a pure-torch branch, but without 'npu' in device_types no kernel is registered "
      "for NPU tensors"),
])

E("gr_ops_setup", "generative_recommenders/ops/cpp/setup.py", EXPL,
  "generative-recommenders ops/cpp setup.py (CUDAExtension for jagged ops + FA3-style HSTU attention, CUTLASS)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDA_HOME, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch_npu.utils.cpp_extension import NpuExtension  # + BuildExtension",
      "no nvcc on the NPU host; kernels need Ascend C + NpuExtension, or the PYTORCH kernels are used"),
    C("check_if_cuda_home_none(PACKAGE_NAME)", "custom_cuda_extension", X, True, None,
      "CUDA_HOME is None on an NPU host: raises before anything is built"),
    C("_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "runs `nvcc -V`"),
    C('cc_flag.append("arch=compute_80,code=sm_80")', "custom_cuda_extension", X, False, None,
      "SM gencode flags, dead once the CUDA build is dropped"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0a"', "env_var", X, False, None,
      "only read by the CUDA build"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True,
      "NpuExtension(  # Ascend C ports of csrc/*.cu",
      ".cu sources compiled with nvcc"),
    C("attn_ext = CUDAExtension(", "custom_cuda_extension", R, True,
      "# HSTU attention: no Ascend build; use the PYTORCH kernel or npu_fusion_attention-based rewrite",
      "CUTLASS/sm80/sm90 attention kernels"),
])

E("gr_train", "generative_recommenders/research/trainer/train.py", EXPL,
  "generative-recommenders research trainer (mp.spawn launcher, rank is train_fn's first argument, bf16 autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the hccl backend need torch_npu loaded in every spawned worker"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL is not available"),
    C('device = torch.device(f"cuda:{rank}")', "device_type", R, True,
      'device = torch.device(f"npu:{rank}")', ""),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", ""),
    C("opt = torch.optim.AdamW(", "fused_optimizer", R, False,
      "opt = torch_npu.optim.NpuFusedAdamW(", "performance only (msFmkTransplt advice; more memory)"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16, enabled=main_module_bf16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16, enabled=main_module_bf16):',
      "torch.autocast('cuda') is disabled (with a warning) without CUDA: the bf16 run silently trains in fp32"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "torch.npu.max_memory_allocated(device)", "with an npu device it raises 'Expected a cuda device'"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; NPU cache not released"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "world_size = torch.npu.device_count()", "0 on an NPU host: mp.spawn starts no workers"),
])

E("gr_gin_config", "configs/ml-20m/hstu-sampled-softmax-n128-large-final.gin", EXPL,
  "generative-recommenders gin config (frozen ML-20M HSTU recipe with kernel / backend bindings)", [
    C('hstu_encoder.hammer_kernel = "TRITON"', "unsupported_op_workaround", R, True,
      'hstu_encoder.hammer_kernel = "PYTORCH"', TRITON_DEFAULT_NOTE),
    C("hstu_encoder.use_triton_layer_norm = True", "unsupported_op_workaround", R, True,
      "hstu_encoder.use_triton_layer_norm = False", "Triton LayerNorm kernel, same reason"),
    C('setup.backend = "nccl"', "dist_backend", R, True, 'setup.backend = "hccl"', ""),
])

E("gr_inference_runner", "generative_recommenders/inference/hstu_runner.py", EXPL,
  "HSTU low-latency inference runner (static buckets, per-bucket CUDA graph capture, TRITON_CC kernels)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below"),
    C('self._device = torch.device("cuda", device_id)', "device_type", R, True,
      'self._device = torch.device("npu", device_id)', ""),
    C("torch.cuda.set_device(self._device)", "torch_cuda_api", R, True, "torch.npu.set_device(self._device)", ""),
    C("model.set_hammer_kernel(HammerKernel.TRITON_CC)", "unsupported_op_workaround", R, True,
      "model.set_hammer_kernel(HammerKernel.PYTORCH)", "AOT Triton/CUDA kernels have no NPU build"),
    C("self._pool = torch.cuda.graph_pool_handle() if use_cuda_graph else None", "torch_cuda_api", R, True,
      "self._pool = torch.npu.graph_pool_handle() if use_cuda_graph else None", "NPU graphs are inference-only: fine here"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, True, "s = torch.npu.Stream()", ""),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "s.wait_stream(torch.npu.current_stream())", ""),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, True, "with torch.npu.stream(s):", ""),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(s)", ""),
    C("g = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "g = torch.npu.NPUGraph()", ""),
    C("with torch.cuda.graph(g, pool=self._pool):", "torch_cuda_api", R, True,
      "with torch.npu.graph(g, pool=self._pool):", ""),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", ""),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", ""),
])

E("gr_requirements", "requirements.txt", EXPL,
  "generative-recommenders-style requirements.txt pinned to cu124 wheels (fbgemm_gpu, torchrec, hstu-attn, faiss-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu124", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.6.0+cu124", "torch_cuda_api", R, True, "torch==2.6.0\ntorch-npu==2.6.0.post5",
      "CUDA build of torch; torch-npu must match torch exactly"),
    C("triton==3.2.0", "triton_kernel_tuning", R, False, "triton-ascend==3.2.0",
      "unconfirmed: only needed if the Triton kernels are ported; common.py imports triton unconditionally"),
    C("fbgemm_gpu==1.1.0+cu124", "custom_cuda_extension", R, True,
      "fbgemm_gpu_cpu==1.1.0  # + fbgemm-ascend built from source", FBGEMM_NOTE),
    C("torchrec==1.1.0+cu124", "distributed_framework", R, True,
      "# torchrec: Ascend RecSDK build (torchrec_npu / hybrid_torchrec)",
      "CUDA torchrec wheel pulls the CUDA fbgemm_gpu"),
    C("hstu-attn @ git+", "custom_cuda_extension", X, True, None, "nvcc build fails during pip install"),
    C("nvidia-cuda-nvcc-cu12==12.4.131", "custom_cuda_extension", X, False, None,
      "only feeds the CUDA extension build"),
    C("faiss-gpu-cu12==1.8.0", "custom_cuda_extension", R, True, "faiss-cpu==1.8.0",
      "GPU faiss needs CUDA (x86-only wheels)"),
    C("nvidia-ml-py>=12.535.133", "torch_cuda_api", X, False, None, "NVML has no NPU counterpart; unused at import"),
    C("gpustat>=1.1.1", "torch_cuda_api", X, False, None, "NVML-based monitor"),
])

E("gr_faiss_topk", "generative_recommenders/research/indexing/candidate_index.py", EXPL,
  "generative-recommenders-style eval top-k modules (brute-force MIPS + faiss GpuIndexIVFPQ)", [
    C("self._device_id = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "self._device_id = torch.npu.current_device()", ""),
    C("self._res = faiss.StandardGpuResources()", "custom_cuda_extension", R, True,
      "# faiss has no Ascend backend: build a CPU index on host copies",
      "faiss GPU resources need CUDA"),
    C("self._res.setTempMemory(512 * 1024 * 1024)", "custom_cuda_extension", X, True, None, "GPU scratch memory"),
    C("cfg = faiss.GpuIndexIVFPQConfig()", "custom_cuda_extension", X, True, None, "GPU-only config"),
    C("cfg.device = self._device_id", "custom_cuda_extension", X, True, None, "GPU-only config"),
    C("cfg.useFloat16LookupTables = use_float16_lookup_tables", "custom_cuda_extension", X, True, None,
      "GPU-only config"),
    C("self._index = faiss.GpuIndexIVFPQ(", "custom_cuda_extension", R, True,
      "self._index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, nlist, m, nbits, faiss.METRIC_INNER_PRODUCT)",
      "GPU-only index"),
    C("xb = item_embeddings.detach().float().contiguous()", "tensor_to_device", R, True,
      "xb = item_embeddings.detach().float().cpu().contiguous()",
      "faiss.contrib.torch_utils only handles CUDA or CPU tensors"),
    C("scores, idx = self._index.search(query_embeddings.detach().float().contiguous(), k)", "tensor_to_device", R, True,
      "scores, idx = self._index.search(query_embeddings.detach().float().cpu().contiguous(), k)",
      "results must be moved back with .to(query_embeddings.device)"),
])

# ---------------------------------------------------------------------------------------------
# TorchRec
# ---------------------------------------------------------------------------------------------
E("torchrec_dlrm_main", "torchrec_dlrm/dlrm_main.py", EXPL,
  "pytorch/torchrec examples/golden_training + torchrec_dlrm dlrm_main.py (DMP, planner, TrainPipelineSparseDist)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "an NPU host silently trains on CPU with gloo"),
    C('device: torch.device = torch.device(f"cuda:{rank}")', "device_type", R, True,
      'device: torch.device = torch.device(f"npu:{rank}")', ""),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"',
      "also feeds get_dataloader's pin_memory default (backend == 'nccl')"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", ""),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      "torch.npu.max_memory_allocated(device)", ""),
])

E("torchrec_plan_utils", "torchrec_dlrm/sharding/plan_utils.py", EXPL,
  "TorchRec sharding-plan helpers (Topology with HBM/NVLink numbers, UVM-caching constraints, fused params)", [
    C("hbm_cap = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", R, True,
      "hbm_cap = torch.npu.get_device_properties(0).total_memory", ""),
    C('compute_device="cuda",', "device_type", R, True, 'compute_device="npu",',
      "planner places shards and picks kernels for CUDA; the NPU value depends on Ascend RecSDK's torchrec"),
    C("compute_kernels=[EmbeddingComputeKernel.FUSED_UVM_CACHING.value],", "unsupported_op_workaround", R, False,
      "compute_kernels=[EmbeddingComputeKernel.FUSED.value],",
      "unconfirmed: UVM (cudaMallocManaged) has no torch_npu counterpart; fbgemm-ascend lists cache ops"),
    C("torch.cuda.get_device_name()", "torch_cuda_api", R, True, "torch.npu.get_device_name()",
      "raises without CUDA (rank-0 logging)"),
])

E("torchrec_dlrm_model", "torchrec_dlrm/models/dlrm_ebc.py", EXPL,
  "TorchRec DLRM model on EmbeddingBagCollection with NVTX ranges and a .cuda() smoke test", [
    C('with torch.cuda.nvtx.range("dlrm/dense_arch"):', "torch_cuda_api", R, True,
      'with torch.autograd.profiler.record_function("dlrm/dense_arch"):',
      "enable_nvtx defaults to True; torch.cuda.nvtx raises without CUDA"),
    C('with torch.cuda.nvtx.range("dlrm/sparse_arch"):', "torch_cuda_api", R, True,
      'with torch.autograd.profiler.record_function("dlrm/sparse_arch"):', ""),
    C('with torch.cuda.nvtx.range("dlrm/interaction+over"):', "torch_cuda_api", R, True,
      'with torch.autograd.profiler.record_function("dlrm/interaction+over"):', ""),
    C("=).cuda()", "tensor_to_device", R, True, ").npu()", "smoke test"),
    C("dense = torch.rand((B, 13)).cuda()", "tensor_to_device", R, True, "dense = torch.rand((B, 13)).npu()", ""),
    C(').to("cuda")', "tensor_to_device", R, True, ').to("npu")', ""),
])

E("torchrec_predict", "torchrec_dlrm/inference/dlrm_predict.py", EXPL,
  "TorchRec inference DLRMPredictFactory (int8 quantized EBC, shard_quant_model, BatchingMetadata)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("import fbgemm_gpu.sparse_ops  # noqa: F401, E402", "custom_cuda_extension", R, True,
      "import fbgemm_ascend  # noqa: F401  (int-nbit TBE inference on NPU)", FBGEMM_NOTE),
    C('def create_predict_module(self, world_size: int, device: str = "cuda")', "device_type", R, True,
      'def create_predict_module(self, world_size: int, device: str = "npu")', ""),
    C("torch.cuda.set_device(default_cuda_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(default_cuda_rank)", ""),
    C('compute_device="cuda",', "device_type", R, True, 'compute_device="npu",', "unconfirmed value name in RecSDK"),
    C('sharding_device="cuda",', "device_type", R, True, 'sharding_device="npu",', ""),
    C('"float_features": BatchingMetadata(type="dense", device="cuda", pinned=[]),', "device_type", R, True,
      '"float_features": BatchingMetadata(type="dense", device="npu", pinned=[]),',
      "the serving side copies batches to this device"),
    C('"id_list_features": BatchingMetadata(type="sparse", device="cuda", pinned=[]),', "device_type", R, True,
      '"id_list_features": BatchingMetadata(type="sparse", device="npu", pinned=[]),', ""),
    C('parser.add_argument("--world_size", type=int, default=torch.cuda.device_count())', "torch_cuda_api", R, True,
      'parser.add_argument("--world_size", type=int, default=torch.npu.device_count())',
      "0 on an NPU host: shards over zero devices"),
])

E("torchrec_launch_sh", "torchrec_dlrm/scripts/run_dlrm_multinode.sh", EXPL,
  "TorchRec DLRM multi-node torchrun launcher (nvidia-smi preflight, NCCL/IB env, SLURM)", [
    C("if ! nvidia-smi > /dev/null 2>&1; then", "device_type", R, True,
      "if ! npu-smi info > /dev/null 2>&1; then", "nvidia-smi absent: the script exits 1"),
    C("NPROC_PER_NODE=${NPROC_PER_NODE:-$(nvidia-smi --list-gpus | wc -l)}", "device_type", R, True,
      "NPROC_PER_NODE=${NPROC_PER_NODE:-$(npu-smi info -l | grep -c 'NPU ID')}", "set -euo pipefail aborts"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NPROC_PER_NODE - 1)))}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "ignored by HCCL; needed only if HCCL's automatic host-NIC choice is wrong"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_IB_HCA=mlx5", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_DEBUG=", "env_var", X, False, None, "NCCL-only logging"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog equivalent"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning only"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA hardware-queue knob"),
    C("export TORCH_NCCL_AVOID_RECORD_STREAMS=1", "env_var", X, False, None, "NCCL process-group knob"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version", "device_type", R, True,
      'npu-smi info | tee "${LOG_DIR}/npus_node${NODE_RANK}.txt"', "fails under set -e"),
])

E("torchrec_env_yml", "environment.yml", EXPL,
  "TorchRec DLRM conda environment.yml (pytorch-cuda, nvidia channel, fbgemm-gpu/torchrec pip list, CUDA env vars)", [
    C("=- nvidia", "torch_cuda_api", X, True, None, "CUDA runtime channel"),
    C("=- pytorch-cuda=12.1", "torch_cuda_api", R, True, "- cpuonly",
      "selects the CUDA build of pytorch"),
    C("=- cuda-nvcc=12.1", "custom_cuda_extension", X, False, None, "unconfirmed: installs on x86, useless"),
    C("=- nccl>=2.20", "dist_backend", X, False, None, "HCCL ships with CANN"),
    C("=- magma-cuda121", "torch_cuda_api", X, False, None, "CUDA linear-algebra package; linux-64 only"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.4.0.post4",
      "torch_npu matching pytorch 2.4.0 must be installed"),
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", ""),
    C("=- fbgemm-gpu==0.8.0", "custom_cuda_extension", R, True, "- fbgemm-gpu-cpu==0.8.0  # + fbgemm-ascend",
      FBGEMM_NOTE),
    C("=- torchrec==0.8.0", "distributed_framework", R, True, "# torchrec from Ascend RecSDK",
      "pulls the CUDA fbgemm-gpu"),
    C("nvidia-dlprof-pytorch-nvtx", "torch_cuda_api", X, False, None, "NVTX/DLProf tooling"),
    C("nvidia-ml-py==12.535.161", "torch_cuda_api", X, False, None, "NVML"),
    C("cupy-cuda12x==13.1.0", "custom_cuda_extension", X, False, None, "no Ascend support; unused at import"),
    C("CUDA_HOME: /usr/local/cuda-12.1", "env_var", X, False, None, ""),
    C('TORCH_CUDA_ARCH_LIST: "8.0;9.0"', "env_var", X, False, None, ""),
    C("CUDA_MODULE_LOADING: LAZY", "env_var", X, False, None, ""),
    C("NCCL_DEBUG: WARN", "env_var", X, False, None, ""),
])

# ---------------------------------------------------------------------------------------------
# fbgemm_gpu
# ---------------------------------------------------------------------------------------------
E("fbgemm_tbe_bench", "fbgemm_gpu/bench/tbe_training_benchmark.py", EXPL,
  "pytorch/FBGEMM fbgemm_gpu/bench split-TBE training benchmark (click CLI, EmbeddingLocation/ComputeDevice, CUDA events)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("import fbgemm_gpu  # noqa: F401", "custom_cuda_extension", R, True, "import fbgemm_ascend  # noqa: F401",
      FBGEMM_NOTE),
    C('return torch.device("cuda", torch.cuda.current_device())', "device_type", R, True,
      'return torch.device("npu", torch.npu.current_device())', ""),
    C("indices = indices.cuda()", "tensor_to_device", R, True, "indices = indices.npu()", ""),
    C("offsets = offsets.cuda()", "tensor_to_device", R, True, "offsets = offsets.npu()", ""),
    C("weights = weights.cuda() if weights is not None else None", "tensor_to_device", R, True,
      "weights = weights.npu() if weights is not None else None", ""),
    C("torch.cuda.synchronize()  # drain warm-up work", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C('device="cuda",', "device_type", R, True, 'device="npu",', "cache-flush buffer (--flush-gpu-cache-size-mb)"),
    C("torch.cuda.synchronize()  # make sure the flush finished", "torch_cuda_api", R, True,
      "torch.npu.synchronize()", ""),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_event = torch.npu.Event(enable_timing=True)", ""),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_event = torch.npu.Event(enable_timing=True)", ""),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("if torch.cuda.is_available()", "torch_cuda_api", R, True, "if torch.npu.is_available()",
      "otherwise --managed device silently puts the tables in host memory"),
    C("=managed_option = EmbeddingLocation.MANAGED", "unsupported_op_workaround", R, False,
      "managed_option = EmbeddingLocation.DEVICE",
      "unconfirmed: UVM (cudaMallocManaged) placement; no torch_npu counterpart documented"),
    C("managed_option = EmbeddingLocation.MANAGED_CACHING", "unsupported_op_workaround", R, False,
      "managed_option = EmbeddingLocation.DEVICE", "unconfirmed: UVM + device cache; fbgemm-ascend lists cache ops"),
    C("[(E, d, managed_option, ComputeDevice.CUDA) for d in Ds],", "device_type", R, True,
      "[(E, d, managed_option, ComputeDevice.CUDA) for d in Ds],  # fbgemm-ascend device selection",
      "CUDA compute device allocates on torch.cuda.current_device(); the fbgemm-ascend spelling is unconfirmed"),
    C('logging.info(f"Running on {torch.cuda.get_device_name()}, managed={managed}")', "torch_cuda_api", R, True,
      'logging.info(f"Running on {torch.npu.get_device_name()}, managed={managed}")', ""),
    C("use_cpu=not torch.cuda.is_available()", "torch_cuda_api", R, True,
      "use_cpu=not torch.npu.is_available()", "requests would stay on CPU while the module is on NPU"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      "torch.npu.max_memory_allocated() / 2**30", ""),
])

E("fbgemm_feature_ops", "recsys/features/sparse_ops.py", EXPL,
  "ranking-model feature preprocessing on torch.ops.fbgemm (permute_2D_sparse_data, block_bucketize, segment_sum_csr, NJT)", [
    C("import fbgemm_gpu  # noqa: F401  registers", "custom_cuda_extension", R, True,
      "import fbgemm_ascend  # noqa: F401  registers torch.ops.fbgemm.* NPU kernels", FBGEMM_NOTE),
    C("torch.ops.fbgemm.permute_2D_sparse_data(", "unsupported_op_workaround", R, False,
      "torch.ops.fbgemm.permute_2D_sparse_data(  # or index_select over a repeat_interleave'd row map",
      "unconfirmed: not named in fbgemm-ascend's README"),
    C("return torch.ops.fbgemm.segment_sum_csr(1, csr_seg, values)", "unsupported_op_workaround", R, False,
      "return torch.zeros(lengths.numel(), device=values.device).index_add_(0, torch.repeat_interleave("
      "torch.arange(lengths.numel(), device=values.device), lengths), values)",
      "unconfirmed: not named in fbgemm-ascend's README"),
    C("return torch.nested.nested_tensor_from_jagged(values, offsets=offsets)", "unsupported_op_workaround", R, True,
      "return values, offsets  # keep the (values, offsets) pair", "torch.nested.nested_tensor_from_jagged is ✘ on Ascend"),
    C("return torch.nested.to_padded_tensor(", "unsupported_op_workaround", R, True,
      "return torch.ops.fbgemm.jagged_to_padded_dense(values, [offsets], [max_len], padding_value)",
      "torch.nested.to_padded_tensor is ✘ on Ascend"),
])

# ---------------------------------------------------------------------------------------------
# facebookresearch/dlrm
# ---------------------------------------------------------------------------------------------
E("dlrm_s_pytorch", "dlrm_s_pytorch.py", T2N,
  "facebookresearch/dlrm dlrm_s_pytorch.py (single-process multi-GPU replicate/scatter/gather path, autograd profiler)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu covers the torch.cuda.* calls, cuda device strings and map_location"),
    C("ngpus = torch.cuda.device_count()", "unsupported_op_workaround", R, True,
      "ngpus = 1  # run one process per NPU through ext_dist instead",
      "with ndevices > 1 the model takes the DataParallel-style path (replicate/scatter/gather over "
      "torch.cuda.comm, ✘ on NPU, not patched by transfer_to_npu)"),
    C("self.bot_l_replicas = replicate(self.bot_l, device_ids)", "unsupported_op_workaround", R, False,
      "# removed: use DDP (ext_dist) instead of replicate",
      "only reached with ndevices > 1 (unreachable after the ngpus fix)"),
    C("dense_x = scatter(dense_x, device_ids, dim=0)", "unsupported_op_workaround", R, False,
      "# removed with parallel_forward", "torch.cuda.comm.scatter is ✘ on NPU"),
    C("p0 = gather(p, self.output_d, dim=0)", "unsupported_op_workaround", R, False,
      "# removed with parallel_forward", "torch.cuda.comm.gather is ✘ on NPU"),
    C("EE = nn.EmbeddingBag(n, m, mode=\"sum\", sparse=True)", "unsupported_op_workaround", R, False,
      "EE = nn.EmbeddingBag(n, m, mode=\"sum\", sparse=False)",
      "unconfirmed: sparse gradients on NPU (no sparse kernels in the op lists)"),
    C("with torch.autograd.profiler.profile(args.enable_profiling, use_cuda=use_gpu, record_shapes=True) as prof:",
      "torch_cuda_api", R, False,
      "with torch.autograd.profiler.profile(args.enable_profiling, use_device='npu' if use_gpu else None, record_shapes=True) as prof:",
      "unconfirmed: transfer_to_npu patches torch.profiler, not torch.autograd.profiler; Ascend's list asks "
      "for use_device='npu'"),
    C('sort_by="self_cuda_time_total" if use_gpu else "self_cpu_time_total"', "torch_cuda_api", R, False,
      'sort_by="self_npu_time_total" if use_gpu else "self_cpu_time_total"', "unconfirmed key name; cosmetic"),
])

E("dlrm_ext_dist", "extend_distributed.py", EXPL,
  "facebookresearch/dlrm extend_distributed.py (MPI/torchrun env detection, backend choice, all_to_all_single probe)", [
    C("elif use_gpu and dist.is_nccl_available():", "dist_backend", R, True,
      "elif use_gpu and dist.is_hccl_available():",
      "False on the NPU host: falls through to mpi/gloo"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', ""),
    C("if my_local_size > torch.cuda.device_count():", "torch_cuda_api", R, True,
      "if my_local_size > torch.npu.device_count():", "0 devices: exits with 'Not sufficient GPUs'"),
    C("% (my_local_size, torch.cuda.device_count())", "torch_cuda_api", R, False,
      "% (my_local_size, torch.npu.device_count())", "error-message path only"),
    C("torch.cuda.set_device(my_local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(my_local_rank)", ""),
    C("t = t.cuda()", "tensor_to_device", R, True, "t = t.npu()",
      "raises 'Torch not compiled with CUDA enabled' (an AssertionError the except does not catch)"),
    C('elif backend == "nccl" and alltoall_supported:', "dist_backend", R, True,
      'elif backend == "hccl" and alltoall_supported:',
      "backend-string comparison: silently falls back to the scatter/gather all-to-all"),
])

E("dlrm_run_sh", "bench/dlrm_s_criteo_terabyte_multigpu.sh", EXPL,
  "facebookresearch/dlrm bench/*.sh (Criteo Terabyte, torch.distributed.launch over all local GPUs)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", ""),
    C("ngpus=$(nvidia-smi -L | wc -l)", "device_type", R, True,
      "ngpus=$(npu-smi info -l | grep -c 'NPU ID')", "nvidia-smi absent: ngpus=0, no worker started"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, ""),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink-specific"),
    C("--dist-backend=nccl \\", "dist_backend", R, True, "--dist-backend=hccl \\", "passed verbatim to init_process_group"),
    C("nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader", "device_type", R, False,
      "npu-smi info", "post-run summary; fails harmlessly"),
])

# ---------------------------------------------------------------------------------------------
# DeepCTR-Torch
# ---------------------------------------------------------------------------------------------
E("deepctr_basemodel", "deepctr_torch/models/basemodel.py", AGN,
  "shenweichen/DeepCTR-Torch models/basemodel.py (device/gpus arguments, DataParallel in fit)", [
    C("model = torch.nn.DataParallel(model, device_ids=self.gpus)", "distributed_framework", R, True,
      "model = model  # DataParallel unsupported on NPU: single device, or DDP launched per NPU",
      "torch.nn.DataParallel is ✘ on Ascend"),
    C("batch_size *= len(self.gpus)", "distributed_framework", X, False, None,
      "per-GPU batch scaling belongs to the DataParallel wrapper removed above"),
    C("optim = torch.optim.Adam(self.parameters())  # 0.001", "fused_optimizer", R, False,
      "optim = torch_npu.optim.NpuFusedAdam(self.parameters())", "performance only"),
])

E("deepctr_run_din", "examples/run_din_multigpu.py", EXPL,
  "DeepCTR-Torch examples run_din.py / run_dien.py with the use_cuda device switch and gpus list", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if use_cuda and torch.npu.is_available():", "an NPU host silently trains on CPU"),
    C("device = 'cuda:{}'.format(gpus[0])", "device_type", R, True, "device = 'npu:{}'.format(gpus[0])", ""),
    C('if device.startswith("cuda"):', "device_type", R, False, 'if device.startswith("npu"):',
      "cosmetic: memory print skipped"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", R, False,
      "torch.npu.max_memory_allocated() / 2 ** 20", "only reached via the cosmetic branch above"),
])

# ---------------------------------------------------------------------------------------------
# RecBole
# ---------------------------------------------------------------------------------------------
E("recbole_configurator", "recbole/config/configurator.py", EXPL,
  "RUCAIBox/RecBole config/configurator.py (_init_device: gpu_id -> CUDA_VISIBLE_DEVICES, NCCL tcp init)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu_id', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu_id', ""),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below"),
    C("if len(gpu_id) == 0 or not torch.cuda.is_available()", "torch_cuda_api", R, True,
      "if len(gpu_id) == 0 or not torch.npu.is_available()", "an NPU host silently trains on CPU"),
    C('else torch.device("cuda")', "device_type", R, True, 'else torch.device("npu")', ""),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', ""),
    C('"cuda", self.final_config_dict["local_rank"]', "device_type", R, True,
      '"npu", self.final_config_dict["local_rank"]', ""),
    C('torch.cuda.set_device(self.final_config_dict["local_rank"])', "torch_cuda_api", R, True,
      'torch.npu.set_device(self.final_config_dict["local_rank"])', ""),
])

E("recbole_trainer", "recbole/trainer/trainer.py", EXPL,
  "RecBole trainer/trainer.py (torch.cuda.amp GradScaler gated on torch.cuda.is_available, GPU RAM postfix)", [
    C("import torch.cuda.amp as amp", "amp", R, True, "from torch_npu.npu import amp",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 runs without loss scaling"),
    C('self.gpu_available = torch.cuda.is_available() and config["use_gpu"]', "torch_cuda_api", R, False,
      'self.gpu_available = torch.npu.is_available() and config["use_gpu"]', "cosmetic: GPU RAM progress text only"),
    C('self.enable_scaler = torch.cuda.is_available() and config["enable_scaler"]', "torch_cuda_api", R, True,
      'self.enable_scaler = torch.npu.is_available() and config["enable_scaler"]', "scaler silently off on NPU"),
    C("optimizer = optim.Adam(params, lr=learning_rate, weight_decay=weight_decay)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr=learning_rate, weight_decay=weight_decay)",
      "performance only"),
])

E("recbole_utils", "recbole/utils/utils.py", EXPL,
  "RecBole utils/utils.py (init_seed, get_gpu_usage, get_environment)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued without CUDA, harmless; torch.manual_seed already seeds the default generators"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)", ""),
    C("reserved = torch.cuda.max_memory_reserved(device) / 1024**3", "torch_cuda_api", R, False,
      "reserved = torch.npu.max_memory_reserved(device) / 1024**3",
      "only reached through the gpu_available guards (cosmetic)"),
    C("total = torch.cuda.get_device_properties(device).total_memory / 1024**3", "torch_cuda_api", R, False,
      "total = torch.npu.get_device_properties(device).total_memory / 1024**3", "same"),
    C('if torch.cuda.is_available() and config["use_gpu"]', "torch_cuda_api", R, False,
      'if torch.npu.is_available() and config["use_gpu"]', "environment table shows 0.0 for the device"),
])

E("recbole_lightgcn", "recbole/model/general_recommender/lightgcn.py", EXPL,
  "RecBole LightGCN (normalised adjacency as a sparse COO tensor, torch.sparse.mm propagation)", [
    C("self.norm_adj_matrix = self.get_norm_adj_mat().to(self.device)", "unsupported_op_workaround", R, False,
      "self.adj_row, self.adj_col, self.adj_val = self.get_norm_adj_edges(self.device)",
      "unconfirmed: sparse COO creation is ✔ on A2; part of the sparse.mm rewrite"),
    C("all_embeddings = torch.sparse.mm(self.norm_adj_matrix, all_embeddings)", "unsupported_op_workaround", R, True,
      "all_embeddings = torch.zeros_like(all_embeddings).index_add_(0, self.adj_row, "
      "all_embeddings[self.adj_col] * self.adj_val.unsqueeze(1))",
      "no sparse kernels in the torch_npu op lists; sparse ops raise instead of falling back to CPU"),
])

# ---------------------------------------------------------------------------------------------
# HSTU training stack around it (NVIDIA recsys-examples-style)
# ---------------------------------------------------------------------------------------------
E("hstu_train_yaml", "examples/hstu/configs/kuairand_1k_ranking.yaml", EXPL,
  "NVIDIA recsys-examples-style HSTU ranking YAML (dynamicemb, CUTLASS attention, training CUDA graphs)", [
    C("device: cuda", "device_type", R, True, "device: npu", ""),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", ""),
    C("cuda_graph: true", "torch_cuda_api", R, True, "cuda_graph: false",
      "training-step graph capture: torch.npu.NPUGraph is inference-only per Ascend's 2.7.1 list"),
    C("storage: dynamicemb", "custom_cuda_extension", R, True, "storage: torchrec",
      "dynamicemb = CUDA HierarchicalKV extension, no NPU build"),
    C("uvm_fallback: true", "unsupported_op_workaround", R, False, "uvm_fallback: false", "unconfirmed: UVM"),
    C("kernel_backend: cutlass", "attention_kernel", R, True, "kernel_backend: pytorch",
      "CUTLASS hstu_attn extension is CUDA-only"),
    C("fused_layernorm: triton", "unsupported_op_workaround", R, True, "fused_layernorm: pytorch",
      "Triton kernel not ported to triton-ascend"),
    C("embedding_all_to_all_dtype: bf16", "unsupported_op_workaround", R, False, "embedding_all_to_all_dtype: fp32",
      "unconfirmed: Ascend's 2.7.1 list notes all_to_all_single output supports fp32 only"),
    C("nvtx: true", "torch_cuda_api", R, False, "nvtx: false  # or mstx ranges",
      "profiling is disabled by default"),
])

E("dynamicemb_table", "corelib/dynamicemb/dynamicemb/key_value_table.py", EXPL,
  "NVIDIA recsys-examples dynamicemb key-value table wrapper (HierarchicalKV extension, raw cudaStream_t handles)", [
    C("from dynamicemb_extensions import (  # built by setup.py", "custom_cuda_extension", R, True,
      "from torchrec_embcache import ...  # or a torch-only hash table",
      "CUDA/HierarchicalKV extension; nothing to import on an NPU host"),
    C("return torch.cuda.current_stream().cuda_stream", "torch_cuda_api", R, True,
      "return torch.npu.current_stream().npu_stream",
      "raw cudaStream_t handed to C++; NPU attribute name unconfirmed"),
    C("free_bytes, total_bytes = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "free_bytes, total_bytes = torch.npu.mem_get_info()", ""),
    C("else torch.cuda.current_device()", "torch_cuda_api", R, True, "else torch.npu.current_device()", ""),
    C('self.device = torch.device(f"cuda:{device_id}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{device_id}")', ""),
    C("on {torch.cuda.get_device_name(device_id)}", "torch_cuda_api", R, True,
      "on {torch.npu.get_device_name(device_id)}", ""),
    C("assert keys.is_cuda and keys.dtype == torch.int64", "device_type", R, True,
      'assert keys.device.type == "npu" and keys.dtype == torch.int64', "is_cuda is False for NPU tensors"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", R, True, "torch.npu.synchronize(self.device)", ""),
    C("torch.cuda.set_device(options.device_id or 0)", "torch_cuda_api", R, True,
      "torch.npu.set_device(options.device_id or 0)", ""),
])

E("hstu_dockerfile", "docker/Dockerfile", EXPL,
  "HSTU / TorchRec training image on NGC PyTorch (fbgemm-gpu + torchrec cu124 wheels, CUTLASS and HierarchicalKV builds)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.10-py3", "torch_cuda_api", R, True,
      "ARG BASE_IMAGE=<CANN 8.x + torch 2.4 + torch_npu image>", "CUDA base image"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0 9.0"', "env_var", X, False, None, ""),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "unconfirmed: devices can also be mounted with --device at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, ""),
    C("ENV CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, ""),
    C("pip install fbgemm-gpu==${FBGEMM_VERSION}", "custom_cuda_extension", R, True,
      "pip install fbgemm-gpu-cpu==${FBGEMM_VERSION} && pip install ./fbgemm-ascend", FBGEMM_NOTE),
    C("pip install torchrec==${TORCHREC_VERSION}", "distributed_framework", R, True,
      "# torchrec from Ascend RecSDK", ""),
    C("MAX_JOBS=${MAX_JOBS} HSTU_DISABLE_BACKWARD=FALSE python setup.py install", "custom_cuda_extension", X, True, None,
      "nvcc/CUTLASS build fails"),
    C("=python setup.py install", "custom_cuda_extension", X, True, None, "dynamicemb: CUDA + HierarchicalKV build"),
    C("pip install nvidia-ml-py==12.560.30", "torch_cuda_api", X, False, None, ""),
    C("import torch, fbgemm_gpu, torchrec, hstu_attn_cuda, dynamicemb", "import_torch_npu", R, True,
      'RUN python -c "import torch, torch_npu, fbgemm_ascend, torchrec; print(torch.__version__, torch_npu.__version__)"',
      "build-time check imports the CUDA-only extensions"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", X, False, None, ""),
    C("NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "HCCL_SOCKET_IFNAME=eth0", ""),
])
