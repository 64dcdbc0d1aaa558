# Labels for probe182 (parallel video-DiT inference: xDiT / yunchang / Wan2.1 / HunyuanVideo / Mochi / CogVideoX).
# One entry per upstream file; one C(...) per line a careful porter edits for Ascend NPU (torch_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


AUTOLOAD = "device registration only; torch_npu>=2.5.1 autoloads on `import torch`, so not strictly needed"
NEEDS_NS = "ported lines in this file reference the torch_npu namespace, so the import is needed"
MEMSTAT = "memory statistic only feeds a log line; on a CPU torch build it silently reports 0 instead of failing"

# ---------------------------------------------------------------- xDiT (xfuser)
E("xdit_parallel_state", "xfuser/core/distributed/parallel_state.py", "explicit_replacement",
  "xDiT xfuser/core/distributed/parallel_state.py (vLLM-derived world/SP/PP/CFG group setup, yunchang set_seq_parallel_pg)", [
    C("=import torch.distributed", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C('backend: str = "nccl",', "dist_backend", "replace", True, 'backend: str = "hccl",',
      "default backend of init_distributed_environment; NCCL is absent from the CPU torch build used on Ascend hosts"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device triggers CUDA lazy init and raises on an NPU host"),
])

E("xdit_group_coordinator", "xfuser/core/distributed/group_coordinator.py", "explicit_replacement",
  "xDiT GroupCoordinator / PipelineGroupCoordinator (device groups + gloo CPU groups, PipeFusion patch send/recv stream)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: coordinator device silently becomes CPU and every device-group buffer lands on the wrong device"),
    C('self.device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{local_rank}")', "per-rank device string"),
    C("self.comm_stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", "replace", True,
      "self.comm_stream = torch.npu.Stream(device=self.device)", "torch.cuda.Stream is a dummy class on a CPU build and raises when instantiated"),
    C("with torch.cuda.stream(self.comm_stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.comm_stream):", "stream context queries the CUDA current stream"),
    C("torch.cuda.current_stream().wait_stream(self.comm_stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.comm_stream)", "CUDA stream API; NPU equivalent exists in torch_npu.npu"),
])

E("xdit_args", "xfuser/config/args.py", "explicit_replacement",
  "xDiT xFuserArgs dataclass + FlexibleArgumentParser (--ulysses_degree/--ring_degree/--pipefusion_parallel_degree, offload/tiling flags)", [
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "dataclass default device used when xFuserArgs is built programmatically"),
    C('default="cuda",', "device_type", "replace", True, 'default="npu",', "CLI default device"),
    C('choices=["cuda", "cpu"],', "device_type", "replace", False, 'choices=["npu", "cuda", "cpu"],',
      "argparse does not validate the default against choices; only an explicit --device npu is rejected"),
    C('if self.device == "cuda" and torch.cuda.device_count() == 0:', "torch_cuda_api", "replace", False,
      'if self.device == "npu" and torch.npu.device_count() == 0:',
      "sanity check only; once the default is npu the unchanged line never fires"),
])

E("xdit_envs", "xfuser/envs.py", "device_branch_or_abstraction",
  "xDiT xfuser/envs.py (lazy env vars, PackagesEnvChecker for flash_attn/yunchang/diffusers, device helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401 (inside try/except ImportError so CUDA installs keep working)", AUTOLOAD),
    C('"CUDA_VISIBLE_DEVICES": lambda: os.environ.get("CUDA_VISIBLE_DEVICES", None),', "env_var", "add_branch", False,
      '"ASCEND_RT_VISIBLE_DEVICES": lambda: os.environ.get("ASCEND_RT_VISIBLE_DEVICES", None),',
      "exposed for logging/inspection only; NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C('"CUDA_VERSION": lambda: version.parse(torch.version.cuda),', "torch_cuda_api", "replace", False,
      '"CUDA_VERSION": lambda: version.parse(torch.version.cuda) if torch.version.cuda else None,',
      "lazy; torch.version.cuda is None on the CPU torch build, so any caller outside the _is_cuda() guard would TypeError"),
    C('return torch.device("cuda", local_rank)', "device_type", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu", local_rank)',
      "without an NPU branch get_device falls through to cpu and the pipeline silently runs on the host CPU"),
    C('return "cuda"', "device_type", "add_branch", True, 'if hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "same fallthrough to 'cpu' for the device name"),
    C('return "nccl"', "dist_backend", "add_branch", True, 'if hasattr(torch, "npu") and torch.npu.is_available(): return "hccl"',
      "falls through to gloo otherwise; gloo cannot run collectives on NPU tensors"),
])

E("xdit_long_ctx_attn", "xfuser/core/long_ctx_attention/hybrid/attn_layer.py", "device_branch_or_abstraction",
  "xDiT xFuserLongContextAttention (yunchang LongContextAttention subclass with joint tensors, KV cache, FA3 path)", [
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return AttnType.NPU',
      "SM-arch probe raises on an NPU host (CUDA lazy init); Ascend needs its own kernel choice (npu_fusion_attention)"),
    C("out, _ = flash_attn_interface.flash_attn_func(", "attention_kernel", "replace", False,
      'raise RuntimeError("AttnType.FA3 (flash_attn_interface) is CUDA-only")',
      "FA3 call; unreachable on NPU once _pick_attn_type never returns FA3, guarded for clarity"),
])

E("xdit_cogvideox_example", "examples/cogvideox_example.py", "explicit_replacement",
  "xDiT examples/cogvideox_example.py (xFuserCogVideoXPipeline, offload/tiling flags, peak-memory benchmark print)", [
    C("=import torch.distributed", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("pipe.enable_sequential_cpu_offload(gpu_id=local_rank)", "device_type", "replace", False,
      'pipe.enable_sequential_cpu_offload(gpu_id=local_rank, device="npu")',
      "unconfirmed: older diffusers default the offload device to 'cuda'; newer ones detect the accelerator"),
    C("pipe.enable_model_cpu_offload(gpu_id=local_rank)", "device_type", "replace", False,
      'pipe.enable_model_cpu_offload(gpu_id=local_rank, device="npu")', "unconfirmed: same diffusers default-device question"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "pipeline placement"),
    C('generator=torch.Generator(device="cuda").manual_seed(0),', "device_type", "replace", True,
      'generator=torch.Generator(device="npu").manual_seed(0),', "CUDA generators cannot be created on a CPU torch build"),
    C('generator=torch.Generator(device="cuda").manual_seed(input_config.seed),', "device_type", "replace", True,
      'generator=torch.Generator(device="npu").manual_seed(input_config.seed),', "same, timed run"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device -> lazy init error"),
    C('peak_memory = torch.cuda.max_memory_allocated(device=f"cuda:{local_rank}")', "torch_cuda_api", "replace", False,
      'peak_memory = torch.npu.max_memory_allocated(device=f"npu:{local_rank}")', MEMSTAT),
    C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
      'print(f"NPU: {torch.npu.get_device_name(local_rank)}, world size {get_world_group().world_size}")',
      "get_device_name initialises CUDA and raises"),
])

E("xdit_run_sh", "examples/run_cogvideo.sh", "explicit_replacement",
  "xDiT examples/run_*.sh torchrun launcher (USP + CFG parallel flags, NCCL tuning exports)", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries must be on the path before torch_npu loads"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL knob; ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL knob; ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging only; unconfirmed which CANN log variable the team would pick"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA hardware-queue knob, meaningless on NPU"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning; NPU reads PYTORCH_NPU_ALLOC_CONF"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "user-selected device subsets are silently ignored on NPU, so ranks land on the wrong cards"),
    C("nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info", "diagnostic only; the script has no `set -e`, so a missing nvidia-smi just prints an error"),
])

E("xdit_setup", "setup.py", "explicit_replacement",
  "xDiT setup.py (nvcc-derived flash-attn extra, install_requires)", [
    C('fa_version = "flash-attn>=2.6.0" if cuda_version >= "11.8" else "flash-attn==2.5.9.post1"', "attention_kernel", "replace", False,
      'fa_version = "flash-attn>=2.6.0"  # CUDA-only extra; Ascend uses torch_npu.npu_fusion_attention',
      "optional extra; the nvcc probe is already guarded, so nothing breaks unless [flash-attn] is requested"),
])

E("xdit_base_pipeline", "xfuser/model_executor/pipelines/base_pipeline.py", "explicit_replacement",
  "xDiT xFuserPipelineBaseWrapper (backbone conversion, torch.compile/onediff, warmup, profiler, CUDA-graph capture)", [
    C("=import torch.distributed", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler", "torch_cuda_api", "replace", False,
      "from torch_npu.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
      "torch.profiler runs but records no device activity on NPU; optional --use_profiler path"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity yields an empty device timeline"),
    C('generator=torch.Generator(device="cuda").manual_seed(42),', "device_type", "replace", True,
      'generator=torch.Generator(device="npu").manual_seed(42),', "warmup generator"),
    C("optimized_transformer_forward = torch.compile(", "compile_mode", "replace", False,
      "optimized_transformer_forward = torch.compile(  # inductor on NPU needs torch_npu>=2.6; drop max-autotune modes",
      "unconfirmed: max-autotune(-no-cudagraphs) are Triton-GPU autotune modes; opt-in flag"),
    C("optimized_transformer_forward = od_compile(", "compile_mode", "removal", False, None,
      "onediff/nexfort is CUDA-only; reject --use_onediff on NPU (opt-in flag, fails with ImportError)"),
    C("side_stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "side_stream = torch.npu.Stream()",
      "graph-capture path (--use_cuda_graph); dummy CUDA stream class raises"),
    C("side_stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "side_stream.wait_stream(torch.npu.current_stream())", "graph-capture path"),
    C("with torch.cuda.stream(side_stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(side_stream):",
      "graph-capture path"),
    C("torch.cuda.current_stream().wait_stream(side_stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(side_stream)", "graph-capture path"),
    C("self._cuda_graph = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "self._cuda_graph = torch.npu.NPUGraph()",
      "CUDAGraph -> NPUGraph (inference-only on NPU per Ascend's API list)"),
    C("with torch.cuda.graph(self._cuda_graph):", "torch_cuda_api", "replace", True, "with torch.npu.graph(self._cuda_graph):",
      "graph capture context"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "CUDA lazy init raises"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "dummy CUDA event class raises on instantiation"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "same"),
])

# ---------------------------------------------------------------- yunchang
E("yunchang_ring_flash", "yunchang/ring/ring_flash_attn.py", "kernel_rewrite",
  "yunchang / ring-flash-attention ring_flash_attn.py (RingComm P2P, LSE merge, flash_attn _flash_attn_forward/_backward)", [
    C("from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward", "attention_kernel", "replace", True,
      "import torch_npu", "flash-attn cannot be installed on Ascend; ImportError at module import"),
    C("block_out, _, _, _, _, block_lse, _, _ = _flash_attn_forward(", "attention_kernel", "replace", True,
      "block_out, softmax_max, softmax_sum, _, _, _, _ = torch_npu.npu_fusion_attention(",
      "per-step block attention; lse must be rebuilt as softmax_max + log(softmax_sum) for the ring merge"),
    C("=_flash_attn_backward(", "attention_kernel", "replace", False,
      "dq_, dk_, dv_, *_ = torch_npu.npu_fusion_attention_grad(",
      "backward only; never reached in no-grad video inference"),
])

E("yunchang_kernels", "yunchang/kernels/attention.py", "device_branch_or_abstraction",
  "yunchang kernels/attention.py (AttnType enum, FA2/FA3/SageAttention/torch SDPA forward wrappers returning out+lse)", [
    C("    HAS_SAGE_ATTN = False", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; HAS_NPU = True  # in the same try/except ImportError pattern, HAS_NPU = False on failure", NEEDS_NS),
    C('SPARSE_SAGE = "sparse_sage"', "attention_kernel", "npu_only_addition", True, 'NPU = "npu"',
      "no other AttnType yields a working fwd-only kernel with LSE on NPU"),
    C("out, lse = torch.ops.aten._scaled_dot_product_flash_attention(", "unsupported_op_workaround", "replace", False,
      "out, lse = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], \"BNSD\", scale=softmax_scale)[:2]",
      "aten op has no NPU kernel in the op lists -> CPU fallback (correct but very slow)"),
    C("out, lse = torch.ops.aten._scaled_dot_product_efficient_attention(", "unsupported_op_workaround", "replace", False,
      "out, lse = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], \"BNSD\", scale=softmax_scale)[:2]",
      "no NPU kernel; unconfirmed whether the CPU fallback exists for this CUDA-only op (likely errors)"),
    C("if impl_type == AttnType.FA:", "attention_kernel", "add_branch", True,
      "if impl_type == AttnType.NPU: return npu_fusion_attn_forward",
      "dispatch to a new wrapper around torch_npu.npu_fusion_attention returning (out, lse)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if HAS_NPU and torch.npu.is_available(): return AttnType.NPU",
      "default would otherwise be TORCH, whose fwd-only path uses CUDA-only aten SDPA variants"),
])

E("yunchang_hybrid", "yunchang/hybrid/attn_layer.py", "explicit_replacement",
  "yunchang hybrid/attn_layer.py (LongContextAttention / QKVPacked: Ulysses all-to-all around ring attention, NVTX ranges)", [
    C("=import torch.distributed as dist", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True,
      "_MSTX_IDS.append(torch_npu.npu.mstx.range_start(name))",
      "NVTX stubs raise on a non-CUDA build when YUNCHANG_NVTX=1; mstx is the NPU counterpart"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(_MSTX_IDS.pop())", "same"),
    C("=attn_type: AttnType = AttnType.FA,", "attention_kernel", "replace", True, "attn_type: AttnType = AttnType.NPU,",
      "default kernel is flash-attn, unavailable on Ascend"),
    C("attn_type: AttnType = AttnType.FA,  # FA2 kernels by default", "attention_kernel", "replace", True,
      "attn_type: AttnType = AttnType.NPU,", "same default in the QKV-packed variant"),
])

E("yunchang_triton_utils", "yunchang/ring/triton_utils.py", "kernel_rewrite",
  "ring-flash-attention triton_utils.py (flatten/unflatten varlen LSE Triton kernels)", [
    C("=BLOCK_M = 4", "triton_kernel_tuning", "replace", False, "BLOCK_M = 128",
      "unconfirmed perf: tiny tiles launch B*H*ceil(S/4) programs; Ascend vector cores prefer few, larger blocks (triton-ascend)"),
    C("with torch.cuda.device(lse.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(lse.device.index):", "CUDA device context raises on an NPU host"),
    C("BLOCK_M = 4  # must match flatten_varlen_lse", "triton_kernel_tuning", "replace", False,
      "BLOCK_M = 128  # must match flatten_varlen_lse", "same tuning for the inverse kernel"),
    C("with torch.cuda.device(output.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(output.device):", "same"),
    C("num_warps=4,", "triton_kernel_tuning", "removal", False, None,
      "warp count is a GPU launch knob; unconfirmed how triton-ascend treats it"),
])

E("yunchang_test_hybrid", "test/test_hybrid_attn.py", "explicit_replacement",
  "yunchang test/test_hybrid_attn.py (torchrun correctness check of USP vs single-device flash_attn_func)", [
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", True, "import torch_npu",
      "reference kernel import; flash-attn is not installable on Ascend"),
    C('parser.add_argument("--attn_impl", type=str, default="fa", choices=["fa", "fa3", "torch", "sage_auto"])', "attention_kernel", "replace", True,
      'parser.add_argument("--attn_impl", type=str, default="npu", choices=["npu", "torch"])',
      "default selects the FA2 kernels"),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")', "collective backend"),
    C('device = torch.device(f"cuda:{rank}")', "device_type", "replace", True, 'device = torch.device(f"npu:{rank}")',
      "device string (indexing by global rank is an upstream single-node assumption, left as is)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "CUDA lazy init raises"),
    C("out_ref, _, _ = flash_attn_func(", "attention_kernel", "replace", True,
      'out_ref = torch_npu.npu_fusion_attention(q, k, v, nheads, "BSND", scale=d ** -0.5, keep_prob=1.0 - dropout_p)[0]',
      "reference attention; the following flash-attn kwargs go away with it"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "timing sync"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "timing sync"),
    C("mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2**30", MEMSTAT),
])

# ---------------------------------------------------------------- Wan2.1
E("wan_generate", "generate.py", "explicit_replacement",
  "Wan2.1 generate.py (torchrun entry: --ulysses_size/--ring_size/--t5_fsdp/--dit_fsdp/--offload_model, xfuser init)", [
    C("import torch, random", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA lazy init raises"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "collective backend"),
    C("device=rank)", "device_type", "replace", True, 'device=f"npu:{local_rank}")',
      "a bare int device means a CUDA ordinal to Module.to(); prompt-extend Qwen model would be sent to cuda:<rank>"),
])

E("wan_attention", "wan/modules/attention.py", "kernel_rewrite",
  "Wan2.1 wan/modules/attention.py (flash_attention varlen wrapper: FA3 flash_attn_interface with FA2 fallback, SDPA fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("assert q.device.type == 'cuda' and q.size(-1) <= 256", "device_type", "replace", True,
      "assert q.device.type == 'npu' and q.size(-1) <= 256", "hard device assert in the DiT attention path"),
    C("=assert FLASH_ATTN_2_AVAILABLE", "attention_kernel", "removal", True, None,
      "flash-attn is not importable on Ascend, so the assert always fails"),
    C("x = flash_attn.flash_attn_varlen_func(", "attention_kernel", "replace", True,
      'x = torch_npu.npu_fusion_attention(q, k, v, q.size(1), "TND", scale=softmax_scale or q.size(-1) ** -0.5, actual_seq_qlen=cu_q[1:].tolist(), actual_seq_kvlen=cu_k[1:].tolist())[0].unflatten(0, (b, lq))',
      "varlen FA2 -> TND-layout npu_fusion_attention with cumulative lengths"),
    C("if FLASH_ATTN_2_AVAILABLE or FLASH_ATTN_3_AVAILABLE:", "attention_kernel", "add_branch", False,
      "if FLASH_ATTN_2_AVAILABLE or FLASH_ATTN_3_AVAILABLE or q.device.type == 'npu':",
      "otherwise NPU falls to SDPA with q_lens/k_lens padding ignored; accuracy impact depends on caller (unconfirmed)"),
])

E("wan_t2v", "wan/text2video.py", "explicit_replacement",
  "Wan2.1 wan/text2video.py (WanT2V: T5/VAE/DiT placement, USP patching, FSDP, autocast sampling loop, offload)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "torch.cuda.amp.autocast is silently disabled without CUDA: the 14B DiT would run fp32 instead of bf16"),
    C('self.device = torch.device(f"cuda:{device_id}")', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{device_id}")', "pipeline device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; cached NPU blocks just stay reserved during offload"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "CUDA lazy init raises"),
])

E("wan_xdit_cp", "wan/distributed/xdit_context_parallel.py", "explicit_replacement",
  "Wan2.1 wan/distributed/xdit_context_parallel.py (usp_dit_forward / usp_attn_forward, sharded complex RoPE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "the fp32 islands (autocast(enabled=False), autocast(dtype=float32)) must override the NPU bf16 autocast, "
      "else the time-embedding Linear runs in bf16 and `assert e.dtype == torch.float32` fails"),
    C("x_i = torch.view_as_complex(x[i, :s].to(torch.float64).reshape(", "unsupported_op_workaround", "replace", False,
      "x_i = torch.view_as_complex(x[i, :s].to(torch.float32).reshape(",
      "unconfirmed: complex128 RoPE on NPU (no fp64 on AI Core; may fall back or be slow); fp32 is the usual port"),
])

E("wan_fsdp", "wan/distributed/fsdp.py", "explicit_replacement",
  "Wan2.1 wan/distributed/fsdp.py (shard_model for --t5_fsdp/--dit_fsdp, free_model)", [
    C("device_id=device_id,", "device_type", "replace", False, 'device_id=torch.device("npu", device_id),',
      "unconfirmed: an int device_id may be read as a CUDA ordinal by FSDP (transfer_to_npu rewrites it, which suggests so)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
])

E("wan_model", "wan/modules/model.py", "explicit_replacement",
  "Wan2.1 wan/modules/model.py (WanModel DiT: sinusoidal/RoPE in fp64, RMSNorm, fp32 modulation islands)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "fp32 islands must disable/override the NPU autocast or the float32 asserts in blocks/head fail"),
    C("position = position.type(torch.float64)", "unsupported_op_workaround", "replace", False,
      "position = position.type(torch.float32)", "unconfirmed: fp64 outer/cos/sin on NPU"),
    C("x_i = torch.view_as_complex(x[i, :seq_len].to(torch.float64).reshape(", "unsupported_op_workaround", "replace", False,
      "x_i = torch.view_as_complex(x[i, :seq_len].to(torch.float32).reshape(", "unconfirmed: complex128 multiply on NPU"),
    C("return self._norm(x.float()).type_as(x) * self.weight", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x.float(), self.weight.float(), epsilon=self.eps)[0].type_as(x)",
      "performance: fused RMSNorm kernel"),
])

E("wan_requirements", "requirements.txt", "explicit_replacement",
  "Wan2.1 requirements.txt", [
    C("=torch>=2.4.0", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.5.1  # and pin torch==2.5.1 to match",
      "torch_npu must be installed and its version must equal torch's"),
    C("=flash_attn", "attention_kernel", "removal", True, None, "flash-attn does not build without CUDA/nvcc; pip install -r fails"),
])

E("wan_gradio", "gradio/t2v_14B_singleGPU.py", "explicit_replacement",
  "Wan2.1 gradio/t2v_14B_singleGPU.py (single-card Gradio demo with prompt extension)", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")', "the demo addresses device 0 explicitly, so the ignored pin is harmless"),
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True, "free, total = torch.npu.mem_get_info()",
      "resolves the current CUDA device and raises; also runs at startup"),
    C("name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True, "name = torch.npu.get_device_name(0)",
      "CUDA lazy init raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("model_name=args.prompt_extend_model, is_vl=False, device=0)", "device_type", "replace", True,
      'model_name=args.prompt_extend_model, is_vl=False, device="npu:0")', "int device 0 means cuda:0 to Module.to()"),
])

# ---------------------------------------------------------------- HunyuanVideo
E("hy_sample_video", "sample_video.py", "explicit_replacement",
  "HunyuanVideo sample_video.py (entry script, timing + peak memory log)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("torch.cuda.synchronize(hunyuan_video_sampler.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(hunyuan_video_sampler.device)", "CUDA lazy init raises"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "same"),
    C('f"peak GPU memory {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB"', "torch_cuda_api", "replace", False,
      'f"peak NPU memory {torch.npu.max_memory_reserved() / 2**30:.1f} GiB"', MEMSTAT),
])

E("hy_inference", "hyvideo/inference.py", "explicit_replacement",
  "HunyuanVideo hyvideo/inference.py (Inference.from_pretrained with xDiT USP init, parallelize_transformer, HunyuanVideoSampler)", [
    C("=import torch.distributed as dist", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C('=else "cuda"', "device_type", "replace", True, 'else "npu"', "default device expression (first half)"),
    C("=if torch.cuda.is_available()", "torch_cuda_api", "replace", True, "if torch.npu.is_available()",
      "False on NPU -> default device silently becomes cpu"),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")', "USP backend"),
    C("device = torch.device(f\"cuda:{os.environ['LOCAL_RANK']}\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{os.environ['LOCAL_RANK']}\")", "per-rank device"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "single-card path silently picks cpu"),
    C("convert_fp8_linear(model, args.dit_weight, original_dtype=PRECISION_TO_TYPE[args.precision])", "unsupported_op_workaround", "replace", False,
      'raise NotImplementedError("--use-fp8 (float8_e4m3fn weights) is not supported on Ascend; use the bf16 checkpoint")',
      "unconfirmed: FP8 weight path not covered by the NPU support lists; opt-in flag"),
    C("pipeline.enable_sequential_cpu_offload()", "device_type", "replace", False,
      'pipeline.enable_sequential_cpu_offload(device="npu")', "unconfirmed: older diffusers default offload device is 'cuda'"),
])

E("hy_attention", "hyvideo/modules/attenion.py", "kernel_rewrite",
  "HunyuanVideo hyvideo/modules/attenion.py (flash/torch/vanilla attention modes, cu_seqlens, xDiT parallel_attention)", [
    C("=import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", True, "import torch_npu", NEEDS_NS),
    C('cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device="cuda")', "device_type", "replace", True,
      'cu_seqlens = torch.zeros([2 * batch_size + 1], dtype=torch.int32, device=text_mask.device)', "hard-coded CUDA allocation"),
    C("x = flash_attn_varlen_func(", "attention_kernel", "replace", True,
      'x = torch_npu.npu_fusion_attention(q, k, v, q.shape[-2], "TND", scale=q.shape[-1] ** -0.5, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_kv[1:].tolist())[0]',
      "default 'flash' mode; flash_attn_varlen_func is None on NPU"),
    C("if flash_attn.__version__ >= '2.7.0':", "attention_kernel", "replace", True,
      'attn2 = torch_npu.npu_fusion_attention(q[:, cu_seqlens_q[1]:], k[:, cu_seqlens_kv[1]:], v[:, cu_seqlens_kv[1]:], q.shape[-2], "BSND", scale=q.shape[-1] ** (-0.5))[0]',
      "flash_attn is None on NPU -> AttributeError in the xDiT parallel path"),
    C("=attn2, *_ = _flash_attn_forward(", "attention_kernel", "removal", True, None,
      "text-token attention call replaced by the line above"),
    C("attn2, *_ = _flash_attn_forward(  # flash-attn < 2.7 signature", "attention_kernel", "removal", False, None,
      "old-flash-attn branch; dead once the version switch is replaced"),
])

E("hy_run_sh", "scripts/run_sample_video_multigpu.sh", "explicit_replacement",
  "HunyuanVideo scripts/run_sample_video_multigpu.sh (torchrun 8-GPU Ulysses launch)", [
    C("export TOKENIZERS_PARALLELISM=false", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "lists every card anyway, so ignoring it changes nothing"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog behaviour; HCCL has its own variable"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL-only knob"),
])

E("hy_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "HunyuanVideo-style Dockerfile (nvidia/cuda devel base, cu124 torch, flash-attn source build, xfuser)", [
    C("FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "image has no CANN toolkit; torch_npu cannot load"),
    C('TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0" \\', "env_var", "removal", False, None, "nvcc arch list; nothing to compile for CUDA"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "device mounting is normally decided at `docker run` time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA container-runtime knob"),
    C("RUN pip install torch==2.4.0 torchvision==0.19.0 torchaudio==2.4.0 --index-url https://download.pytorch.org/whl/cu124", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.4.0 torchvision==0.19.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.4.0.post2",
      "torch-npu must be installed (version-matched); CPU wheel index instead of cu124"),
    C("MAX_JOBS=8 pip install git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3 --no-build-isolation", "attention_kernel", "removal", True, None,
      "source build needs nvcc; docker build fails"),
])

E("hy_environment", "environment.yml", "explicit_replacement",
  "HunyuanVideo-style conda environment.yml (pytorch + nvidia channels, pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; unneeded"),
    C("=- pytorch-cuda=12.4", "torch_cuda_api", "removal", False, None,
      "selects the CUDA build of pytorch; unconfirmed whether it breaks torch_npu (Ascend docs use CPU torch)"),
    C("=- cuda-nvcc=12.4", "torch_cuda_api", "removal", False, None, "CUDA compiler only needed for flash-attn builds"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.4.0.post2", "torch_npu pin matching pytorch=2.4.0"),
    C("=- nvidia-ml-py", "torch_cuda_api", "removal", False, None, "NVML bindings install fine but have no NPU counterpart"),
])

# ---------------------------------------------------------------- Mochi
E("mochi_pipelines", "src/genmo/mochi_preview/pipelines.py", "explicit_replacement",
  "genmo Mochi src/genmo/mochi_preview/pipelines.py (model factories, FSDP sync, Euler sampler, single/multi-GPU Ray pipelines)", [
    C("=import torch.distributed as dist", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "CUDA lazy init raises"),
    C('model = model.to(torch.device(f"cuda:{device_id}"))  # type: ignore', "device_type", "replace", True,
      'model = model.to(torch.device(f"npu:{device_id}"))  # type: ignore', "T5 placement"),
    C('=model = model.to(torch.device(f"cuda:{device_id}"))', "device_type", "replace", True,
      'model = model.to(torch.device(f"npu:{device_id}"))', "DiT placement"),
    C('device = torch.device(f"cuda:{device_id}") if isinstance(device_id, int) else "cpu"', "device_type", "replace", True,
      'device = torch.device(f"npu:{device_id}") if isinstance(device_id, int) else "cpu"', "VAE decoder placement"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast is disabled (with a warning) on NPU: DiT runs in fp32 instead of bf16"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):', "same, unbatched CFG path"),
    C('self.device = torch.device("cuda:0")', "device_type", "replace", True, 'self.device = torch.device("npu:0")',
      "single-card pipeline device"),
    C('f"Max memory reserved: {torch.cuda.max_memory_reserved() / 1024**3:.2f} GB"', "torch_cuda_api", "replace", False,
      'f"Max memory reserved: {torch.npu.max_memory_reserved() / 1024**3:.2f} GB"', MEMSTAT),
    C('self.device = torch.device(f"cuda:{device_id}")', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{device_id}")', "per-actor device"),
    C('="nccl",', "dist_backend", "replace", True, '"hccl",', "collective backend"),
    C("RemoteClass.options(num_gpus=1).remote(", "distributed_framework", "replace", True,
      'RemoteClass.options(resources={"NPU": 1}).remote(',
      "Ray GPU request never schedules on an NPU-only host; NPU resource also makes Ray set ASCEND_RT_VISIBLE_DEVICES per actor"),
])

E("mochi_cli", "demos/cli.py", "explicit_replacement",
  "genmo Mochi demos/cli.py (click CLI choosing single- vs multi-GPU pipeline by device count)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "returns 0 on NPU, so the multi-GPU pipeline is chosen with world_size 0"),
])

E("mochi_pyproject", "pyproject.toml", "explicit_replacement",
  "genmo Mochi pyproject.toml (uv, cu124 index, optional flash-attn)", [
    C('"torch>=2.4.1",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.5.1",  # pin torch==2.5.1 to match',
      "torch_npu must be installed with the exact torch version"),
    C('"bitsandbytes>=0.44.1",', "custom_cuda_extension", "removal", False, None,
      "CUDA-kernel package; not imported by the inference path shown"),
    C('"flash-attn>=2.6.3"', "attention_kernel", "removal", False, None, "optional extra; only fails if [flash] is requested"),
    C('url = "https://download.pytorch.org/whl/cu124"', "torch_cuda_api", "replace", False,
      'url = "https://download.pytorch.org/whl/cpu"', "unconfirmed whether a CUDA torch wheel breaks torch_npu; Ascend installs CPU torch"),
])

# ---------------------------------------------------------------- CogVideoX
E("cogvideo_cli", "inference/cli_demo.py", "explicit_replacement",
  "THUDM CogVideo inference/cli_demo.py (diffusers CogVideoX t2v/i2v/v2v, offload modes, VAE tiling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD),
    C('pipe.to("cuda")', "device_type", "replace", True, 'pipe.to("npu")', "--offload none path"),
    C("=pipe.enable_model_cpu_offload()", "device_type", "replace", False, 'pipe.enable_model_cpu_offload(device="npu")',
      "unconfirmed: diffusers default offload device"),
    C("=pipe.enable_sequential_cpu_offload()", "device_type", "replace", False, 'pipe.enable_sequential_cpu_offload(device="npu")',
      "unconfirmed: diffusers default offload device (this is the default mode)"),
    C("pipe.transformer.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "channels_last is listed as unsupported by Ascend's migration tool; unconfirmed whether it errors or only slows"),
    C('pipe.transformer = torch.compile(pipe.transformer, mode="max-autotune", fullgraph=True)', "compile_mode", "replace", False,
      "pipe.transformer = torch.compile(pipe.transformer, fullgraph=True)",
      "unconfirmed: max-autotune is Triton-GPU autotuning; opt-in --compile"),
    C('generator = torch.Generator(device="cuda" if offload == "none" else "cpu").manual_seed(seed)', "device_type", "replace", True,
      'generator = torch.Generator(device="npu" if offload == "none" else "cpu").manual_seed(seed)', "--offload none path"),
    C('logging.info(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 1024**3:.2f} GiB")', "torch_cuda_api", "replace", False,
      'logging.info(f"peak NPU memory: {torch.npu.max_memory_allocated() / 1024**3:.2f} GiB")', MEMSTAT),
])
