"""Labels for probe50 (hand-written synthetic upstream files; see ../README.md).

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
EXPLICIT, TRANSFER, AGNOSTIC, KERNEL = ("explicit_replacement", "transfer_to_npu",
                                        "device_branch_or_abstraction", "kernel_rewrite")

IMPORT_NOTE = "torch.npu.* and the hccl backend need torch_npu loaded (explicit import recommended even with autoload)"
NVTX_NOTE = ("torch.cuda.nvtx is not redirected by transfer_to_npu and raises on a torch build without CUDA; "
             "torch_npu.npu.mstx is the NPU counterpart (exact mstx call names not checked)")

# ---------------------------------------------------------------------------------------------------------------
# FourCastNet
# ---------------------------------------------------------------------------------------------------------------

E("fcn_train", "train.py", EXPLICIT,
  "NVlabs/FourCastNet train.py (apex FusedAdam, torch.cuda.amp, NCCL env:// init)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("import torch.cuda.amp as amp", "amp", R, True, "import torch_npu.npu.amp as amp",
      "amp.autocast / amp.GradScaler from torch.cuda.amp are inactive for NPU tensors: --enable_amp would run fp32 "
      "without loss scaling; swapping the module keeps the call sites unchanged"),
    C("from apex import optimizers", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedAdam",
      "NVIDIA apex with FusedAdam cannot be built without nvcc; Ascend's apex patch has no FusedAdam (knowledge §6)"),
    C("self.device = torch.cuda.current_device() if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
      "self.device = torch.npu.current_device()",
      "is_available() is False on an NPU host: the whole run silently goes to the CPU"),
    C("self.optimizer = optimizers.FusedAdam(", "fused_optimizer", R, True,
      "self.optimizer = NpuFusedAdam(self.model.parameters(), lr = params.lr)",
      "apex FusedAdam (the config's default optimizer_type) is unavailable on Ascend"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only frees NPU cache once ported"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", R, True,
      "torch.npu.max_memory_allocated() / 1024**3",
      "returns 0 on a torch without CUDA: the logged peak memory is wrong"),
    C("map_location='cuda:{}'.format(self.params.local_rank)", "device_type", R, True,
      "checkpoint = torch.load(checkpoint_path, map_location='npu:{}'.format(self.params.local_rank))",
      "deserialising onto a cuda device fails without CUDA"),
    C("dist.init_process_group(backend='nccl',", "dist_backend", R, True, "dist.init_process_group(backend='hccl',",
      "NCCL is not available on Ascend; HCCL is"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises on a torch build without CUDA"),
]),

E("fcn_afnonet", "networks/afnonet.py", EXPLICIT,
  "NVlabs/FourCastNet networks/afnonet.py (AFNO2D spectral token mixer, fp32 FFT region)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type='npu', enabled=False):",
      "disabling CUDA autocast does not switch off NPU autocast: under the trainer's NPU autocast the spectral "
      "einsums would run in fp16 although the block is meant to stay fp32 (the FFT itself is fp32 via x.float())"),
    C("depth=12).cuda()", "tensor_to_device", R, True, "... depth=12).npu()",
      "smoke test in __main__; .cuda() fails without CUDA"),
    C("sample = torch.randn(1, 20, 720, 1440).cuda()", "tensor_to_device", R, True,
      "sample = torch.randn(1, 20, 720, 1440).npu()", "smoke test input; .cuda() fails without CUDA"),
]),

E("fcn_data_loader_multifiles", "utils/data_loader_multifiles.py", EXPLICIT,
  "NVlabs/FourCastNet utils/data_loader_multifiles.py (yearly HDF5 files, DistributedSampler)", [
    C("pin_memory=torch.cuda.is_available())", "pin_memory", R, False, "pin_memory=torch.npu.is_available())",
      "evaluates to False on an NPU host: no pinned host buffers, slower H2D copies only (performance)"),
]),

E("fcn_data_loader_dali", "utils/data_loader_dali_2.py", EXPLICIT,
  "NVlabs/FourCastNet utils/data_loader_dali_2.py (DALI external-source pipeline on the GPU)", [
    C("self.device_index = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "self.device_index = None  # CPU-only DALI pipeline; batches are moved to the NPU in __iter__",
      "raises without CUDA; DALI's device_id must be None for a CPU-only pipeline (DALI is not in the knowledge "
      "base; that its CPU-only mode works on the NPU host is assumed, unconfirmed)"),
    C("inp = inp.gpu()", "tensor_to_device", X, True, None,
      "DALI .gpu() needs a CUDA device"),
    C("tar = tar.gpu()", "tensor_to_device", X, True, None, "DALI .gpu() needs a CUDA device"),
    C('inp = fn.cat(inp[:, :, :, shift:], inp[:, :, :, :shift], device="gpu", axis = 3)', "device_type", R, True,
      'inp = fn.cat(inp[:, :, :, shift:], inp[:, :, :, :shift], device="cpu", axis = 3)',
      'DALI "gpu" operators need a CUDA device'),
    C('tar = fn.cat(tar[:, :, :, shift:], tar[:, :, :, :shift], device="gpu", axis = 3)', "device_type", R, True,
      'tar = fn.cat(tar[:, :, :, shift:], tar[:, :, :, :shift], device="cpu", axis = 3)',
      'DALI "gpu" operators need a CUDA device'),
    C('=device = "gpu",', "device_type", R, True, 'device = "cpu",', 'DALI "gpu" normalize needs a CUDA device'),
    C("=device = 'gpu',", "device_type", R, True, "device = 'cpu',", 'DALI "gpu" normalize needs a CUDA device'),
    C('inp = fn.noise.gaussian(inp, device = "gpu"', "device_type", R, True,
      'inp = fn.noise.gaussian(inp, device = "cpu", stddev = self.noise_std, seed = self.local_seed)',
      'DALI "gpu" noise operator needs a CUDA device'),
    C("inp = token[0]['inp']", "tensor_to_device", R, True,
      "inp = token[0]['inp'].to('npu', non_blocking=True)",
      "with a CPU pipeline the iterator yields host tensors; without the copy the NPU model gets CPU inputs"),
    C("tar = token[0]['tar']", "tensor_to_device", R, True,
      "tar = token[0]['tar'].to('npu', non_blocking=True)", "same as the input batch"),
]),

E("fcn_inference", "inference/inference.py", EXPLICIT,
  "NVlabs/FourCastNet inference/inference.py (autoregressive rollout, IC perturbation ensembles)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("def gaussian_perturb(x, level=0.01, device=0):", "device_type", R, True,
      "def gaussian_perturb(x, level=0.01, device='npu'):",
      "the perturbation call passes no device, so .to(0) means cuda:0 and fails on an NPU host"),
    C("checkpoint = torch.load(checkpoint_fname)", "device_type", R, True,
      "checkpoint = torch.load(checkpoint_fname, map_location='cpu')",
      "the checkpoint holds CUDA tensors (saved by train.py on the GPU); without map_location they are "
      "deserialised onto a cuda device, which fails without CUDA"),
    C("=device = torch.cuda.current_device() if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
      "device = torch.npu.current_device()", "is_available() is False on NPU: inference silently runs on the CPU"),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      "logging.info('Running on {}'.format(torch.npu.get_device_name(device)))", "raises without CUDA"),
    C("else 'cpu'  # same device as setup()", "device_type", R, True,
      "device = torch.npu.current_device()  # same device as setup()", "silently CPU on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the last step", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the last step before reading the clock", "raises without CUDA"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", R, True, "torch.npu.set_device(0)", "raises without CUDA"),
]),

E("fcn_afno_yaml", "config/AFNO.yaml", EXPLICIT,
  "NVlabs/FourCastNet config/AFNO.yaml (YAML anchors, NHWC / FusedAdam runtime knobs)", [
    C("enable_nhwc: !!bool True", "unsupported_op_workaround", R, False, "enable_nhwc: !!bool False",
      "channels_last is listed as unsupported in msFmkTransplt's documented limitations (use contiguous); "
      "whether it fails or is only slow on NPU is unconfirmed"),
]),

E("fcn_submit_slurm", "submit_batch.sh", EXPLICIT,
  "FourCastNet submit_batch.sh for Perlmutter (SLURM + shifter NGC image + export_DDP_vars.sh)", [
    C("#SBATCH -C gpu", "device_type", R, False, "#SBATCH -C npu",
      "site-specific constraint name; Slurm integration for Ascend is not documented in the knowledge (unconfirmed)"),
    C("#SBATCH --ntasks-per-node=4", "device_type", R, False, "#SBATCH --ntasks-per-node=8",
      "an Atlas 800T A2 node has 8 NPUs; 4 tasks leave half the node idle (performance)"),
    C("#SBATCH --gpus-per-node=4", "device_type", R, False, "#SBATCH --gres=npu:8",
      "GRES name for NPUs is site configuration (unconfirmed)"),
    C("#SBATCH --image=nersc/pytorch:ngc-22.02-v0", "device_type", R, True,
      "#SBATCH --image=<CANN + torch_npu image>",
      "the NGC container ships CUDA PyTorch without CANN or torch_npu"),
    C("module load cudatoolkit/11.7", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CANN environment (set_env.sh) must be sourced for torch_npu to load; the CUDA module is useless there"),
    C("module load nccl/2.15.5", "dist_backend", X, False, None, "HCCL ships with CANN"),
    C("export NCCL_NET_GDR_LEVEL=PHB", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=hsn", "env_var", R, False, "export HCCL_SOCKET_IFNAME=hsn",
      "HCCL ignores NCCL_*; its own HCCL_SOCKET_IFNAME picks the host NIC for root-info negotiation and matters "
      "only if the default choice is wrong"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2", "logging only"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES does not restrict NPUs "
      "(knowledge documents only the Ascend variable)"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv,noheader", "device_type", R, True,
      "srun -N ${SLURM_NNODES} --ntasks-per-node=1 npu-smi info",
      "nvidia-smi does not exist on an NPU node (npu-smi instead)"),
]),

# ---------------------------------------------------------------------------------------------------------------
# Pangu-Weather style
# ---------------------------------------------------------------------------------------------------------------

E("pangu_model", "pangu/models/earth_transformer.py", EXPLICIT,
  "Pangu-Weather-style 3-D Earth-specific transformer (apex FusedLayerNorm, xformers attention with Earth bias)", [
    C("from apex.normalization import FusedLayerNorm", "custom_cuda_extension", R, True,
      "from torch.nn import LayerNorm as FusedLayerNorm",
      "apex's fused layer norm is a CUDA kernel (fused_layer_norm_cuda); Ascend's apex patch has none (knowledge §6)"),
    C("import xformers.ops as xops", "attention_kernel", R, True, "import torch_npu",
      "xformers has no NPU backend (knowledge §6)"),
    C("x = xops.memory_efficient_attention(q, k, v, attn_bias=attn_bias,", "attention_kernel", R, True,
      "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'BSND', pse=attn_bias, scale=self.scale, "
      "keep_prob=1.0 - (self.attn_drop if self.training else 0.0))[0]",
      "memory-efficient attention with an additive float bias; NPU SDPA only takes a bool mask (2.7.1 list), so the "
      "bias goes in as pse of npu_fusion_attention"),
]),

E("pangu_train", "pangu/train.py", TRANSFER,
  "Pangu-Weather-style DDP pre-training script (bf16 autocast, NVTX step ranges, memory snapshots)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects torch.cuda.*, .cuda(), 'nccl', torch.cuda.memory._record_memory_history"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", R, False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL watchdog flag is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING defaults to 1 (MindCluster doc)"),
    C('bucket_mb = 100 if dist.get_backend() == "nccl" else 25', "dist_backend", R, False,
      'bucket_mb = 100 if dist.get_backend() in ("nccl", "hccl") else 25',
      "backend-string comparisons are not rewritten by transfer_to_npu (§2.4); here only the DDP bucket size "
      "differs (performance)"),
    C("model = torch.compile(model)", "compile_mode", R, False, "model = torch.compile(model, backend='npugraphs')",
      "transfer_to_npu forces has_triton=False for Inductor; which backend works for this model on NPU is "
      "unconfirmed"),
    C('torch.cuda.nvtx.range_push(f"step{global_step}")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start(f"step{global_step}")', NVTX_NOTE),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      NVTX_NOTE),
]),

E("pangu_onnx_infer", "inference_gpu.py", EXPLICIT,
  "198808xc/Pangu-Weather inference_gpu.py (onnxruntime CUDAExecutionProvider, hierarchical 24/6/3/1 h steps)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "device selection for the NPU runtime goes through ASCEND_RT_VISIBLE_DEVICES"),
    C('"cudnn_conv_algo_search": "DEFAULT",', "device_type", R, False, '"npu_mem_limit": 20 * 1024**3,',
      "cuDNN option of the CUDA provider; the CANN provider has its own option set (device_id, npu_mem_limit, "
      "arena_extend_strategy, enable_cann_graph, precision_mode per onnxruntime docs, not in the knowledge base); "
      "how it treats an unknown key is unconfirmed"),
    C('provider = ("CUDAExecutionProvider", cuda_provider_options)', "device_type", R, True,
      'provider = ("CANNExecutionProvider", cann_provider_options)',
      "with no CUDA the CUDA provider is unavailable and onnxruntime falls back to the CPU provider: the 1.1 GB "
      "models silently run on the host (CANN EP from onnxruntime-cann per onnxruntime docs)"),
]),

# ---------------------------------------------------------------------------------------------------------------
# NVIDIA Modulus / GraphCast
# ---------------------------------------------------------------------------------------------------------------

E("modulus_manager", "modulus/distributed/manager.py", AGNOSTIC,
  "NVIDIA/modulus distributed/manager.py (DistributedManager singleton: ENV / SLURM / OpenMPI wire-up)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('obj._device = torch.device(f"cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", B, True,
      'obj._device = torch.device("npu:0" if torch.npu.is_available() else "cuda:0" if torch.cuda.is_available() else "cpu")',
      "single-process default device: silently CPU on an NPU host"),
    C("obj._cuda = torch.cuda.is_available()", "device_type", R, False,
      "obj._cuda = torch.cuda.is_available() or torch.npu.is_available()",
      "consumers branch on manager.cuda (accelerator present); False on NPU"),
    C("if torch.cuda.is_available() and torch.distributed.is_nccl_available():", "dist_backend", B, True,
      "elif torch.npu.is_available(): return 'hccl'",
      "on an NPU host this returns gloo, which cannot reduce NPU tensors"),
    C("=local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", R, False,
      "local_rank = rank % torch.npu.device_count()",
      "unreachable in practice (os.environ.get of a present key is never None)"),
    C("local_rank = rank % torch.cuda.device_count()  # launcher did not export LOCAL_RANK", "torch_cuda_api", R,
      True, "local_rank = rank % torch.npu.device_count()  # launcher did not export LOCAL_RANK",
      "device_count() is 0 without CUDA: ZeroDivisionError when RANK is set but LOCAL_RANK is not"),
    C('os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0"', "env_var", R, False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "0"', "NCCL-only setting, ignored by HCCL"),
    C('port="12355", backend="nccl", method="env"):', "dist_backend", R, False,
      'def setup(rank=0, world_size=1, local_rank=None, addr="localhost", port="12355", backend="hccl", method="env"):',
      "default only; every caller passes get_available_backend()"),
    C("manager._local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", R, False,
      "manager._local_rank = rank % torch.npu.device_count()",
      "only when setup() is called without local_rank (no caller in this file does)"),
    C('f"cuda:{manager.local_rank}" if torch.cuda.is_available() else "cpu"', "device_type", B, True,
      'f"npu:{manager.local_rank}" if torch.npu.is_available() else f"cuda:{manager.local_rank}" if torch.cuda.is_available() else "cpu"',
      "every rank silently on the CPU on an NPU host"),
    C("if torch.cuda.is_available():  # bind this process to its local GPU", "device_type", B, True,
      "if manager.device.type in ('cuda', 'npu'):  # bind this process to its local accelerator",
      "without it no rank binds its NPU (all default to device 0)"),
    C("torch.cuda.set_device(manager.device)", "torch_cuda_api", R, False, "torch.npu.set_device(manager.device)",
      "only reached once the guard above admits NPU"),
    C("torch.cuda.device(manager.device)", "torch_cuda_api", R, False, "torch.npu.device(manager.device)",
      "only reached once the guard above admits NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "only reached once the guard above admits NPU; cache release only"),
]),

E("modulus_capture", "modulus/utils/capture.py", AGNOSTIC,
  "NVIDIA/modulus utils/capture.py (StaticCaptureTraining: AMP, GradScaler, CUDA-graph capture)", [
    C('if "cuda" in str(self.model.device):', "device_type", R, True,
      "if self.model.device.type in ('cuda', 'npu'):",
      "an NPU model takes the CPU branch: autocast('cpu') is inactive for NPU tensors and no scaler is used, so "
      "AMP silently does nothing"),
    C("self.cuda_graphs_enabled = use_graphs", "torch_cuda_api", R, False,
      "self.cuda_graphs_enabled = use_graphs and self.model.device.type == 'cuda'",
      "NPUGraph is inference-only (2.7.1 list), so training capture stays off on NPU; reached only once the "
      "branch admits NPU"),
    C('self.amp_device = "cuda"', "amp", R, False, "self.amp_device = self.model.device.type",
      "reached only once the branch admits NPU; then autocast must target 'npu'"),
    C("torch.cuda.is_bf16_supported()", "torch_cuda_api", R, False,
      "if amp_type == torch.bfloat16 and not torch.npu.is_bf16_supported():",
      "reached only once the branch admits NPU; raises without CUDA there"),
    C("self.replay_stream = torch.cuda.Stream(self.model.device)", "torch_cuda_api", R, False,
      "self.replay_stream = torch.npu.Stream(self.model.device)",
      "reached only once the branch admits NPU"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=scaler_enabled)", "amp", R, False,
      "scaler = torch.amp.GradScaler(self.amp_device, enabled=scaler_enabled)",
      "on the unchanged CPU path it is created disabled; an fp16 NPU branch needs an NPU scaler"),
]),

E("graphcast_mesh_mlp", "modulus/models/gnn_layers/mesh_graph_mlp.py", EXPLICIT,
  "NVIDIA/modulus gnn_layers/mesh_graph_mlp.py (TE LayerNorm behind a guarded import, recompute-SiLU autograd)",
  []),

E("graphcast_graph_utils", "modulus/models/gnn_layers/utils.py", EXPLICIT,
  "NVIDIA/modulus gnn_layers/utils.py (CuGraphCSC, cugraph-ops fast path, torch gather/scatter path)", [
    C('with torch.cuda.nvtx.range("concat_efeat"):', "torch_cuda_api", R, True,
      "with contextlib.nullcontext():  # or torch_npu.npu.mstx range markers", NVTX_NOTE),
    C('out.scatter_reduce_(0, index, efeat, reduce="amax", include_self=False)', "unsupported_op_workaround", R,
      False, "return torch_scatter-free amax via index_reduce_ / a segment max on sorted edges",
      "scatter_reduce has no NPU kernel and is ✘ in Ascend's list: it falls back to the CPU (§3.8), performance "
      "only; only for aggregation='max'"),
    C('torch.cuda.nvtx.range_push("aggregate_and_concat")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("aggregate_and_concat")', NVTX_NOTE),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      NVTX_NOTE),
]),

E("graphcast_train", "examples/weather/graphcast/train_graphcast.py", EXPLICIT,
  "NVIDIA/modulus examples/weather/graphcast/train_graphcast.py (apex FusedAdam, NVTX/cudaProfiler ranges)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from apex import optimizers", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedAdamW",
      "module-level import of NVIDIA apex, which cannot be built for Ascend (no nvcc; Ascend apex lacks FusedAdam)"),
    C('with torch.autocast(device_type="cuda", enabled=self.amp, dtype=self.amp_dtype):', "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=self.amp, dtype=self.amp_dtype):',
      "CUDA autocast is inactive for NPU tensors"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self.scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 AMP would run without loss scaling"),
    C("self.optimizer = optimizers.FusedAdam(", "fused_optimizer", R, False,
      "self.optimizer = NpuFusedAdamW(",
      "once the apex import is gone the bare except falls back to torch AdamW; the fused NPU optimizer is a "
      "performance change"),
    C("torch.cuda.set_per_process_memory_fraction(0.95, dist.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_per_process_memory_fraction(0.95, dist.local_rank)", "raises without CUDA"),
    C("with torch.autograd.profiler.emit_nvtx(enabled=cfg.profile):", "torch_cuda_api", R, False,
      "with contextlib.nullcontext():",
      "emit_nvtx is ✘ in Ascend's list; harmless while cfg.profile is false (the default)"),
    C("torch.cuda.profiler.start()", "torch_cuda_api", R, False, "torch_npu.profiler (schedule-based) instead",
      "only when cfg.profile is set"),
    C("torch.cuda.profiler.stop()", "torch_cuda_api", R, False, "torch_npu.profiler (schedule-based) instead",
      "only when cfg.profile is set"),
    C('torch.cuda.nvtx.range_push("Training iteration")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("Training iteration")', NVTX_NOTE + "; executed every iteration"),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      NVTX_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.max_memory_allocated(dist.device)", "torch_cuda_api", R, True,
      'f"max mem: {torch.npu.max_memory_allocated(dist.device) / 2**30:.1f} GiB")',
      "reports 0 without CUDA: the logged memory is wrong"),
    C("torch.cuda.empty_cache()  # before the final validation", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # before the final validation", "silent no-op without CUDA"),
]),

E("graphcast_conf", "examples/weather/graphcast/conf/config.yaml", EXPLICIT,
  "NVIDIA/modulus GraphCast hydra conf/config.yaml (TE LayerNorm, cugraph-ops, bf16, profiling switches)", [
    C("norm_type: TELayerNorm", "custom_cuda_extension", R, True, "norm_type: LayerNorm",
      "Transformer Engine has no NPU build (§6); with TE missing get_norm_layer raises ValueError"),
]),

# ---------------------------------------------------------------------------------------------------------------
# torch-harmonics / makani (SFNO)
# ---------------------------------------------------------------------------------------------------------------

E("th_disco_conv", "torch_harmonics/convolution.py", KERNEL,
  "NVIDIA/torch-harmonics convolution.py (DISCO S2 convolution: optional CUDA extension, sparse-psi torch path)", [
    C("psi = torch.sparse_coo_tensor(self.psi_idx, self.psi_vals,", "unsupported_op_workaround", R, False,
      "(keep psi as the (ker_idx, row_idx, col_idx, vals) index/value tensors and contract with index_select + index_add_)",
      "the buffers live on the NPU, so psi is built there; sparse_coo_tensor itself is ✔ in Ascend's 2.7.1 list, "
      "but coalesce() has no NPU kernel in the native op lists (unconfirmed whether it raises); rewritten together "
      "with the contraction. The x.is_cuda dispatch sends NPU inputs down exactly this path"),
    C("y[pout] = torch.bmm(psi, x.reshape(kernel_size, nlat_in * nlon_in, -1))", "unsupported_op_workaround", R,
      True, "y[pout] = _gather_contract(x, ker_idx, row_idx, col_idx, vals, kernel_size, nlat_out)",
      "sparse x dense bmm on the NPU: the native op lists hold no sparse kernels and sparse ops without kernels "
      "raise instead of falling back (§3.8)"),
]),

E("th_setup", "setup.py", EXPLICIT,
  "NVIDIA/torch-harmonics setup.py (DISCO CUDAExtension built only when CUDA or FORCE_CUDA_EXTENSION is present)",
  []),

E("makani_comm", "makani/utils/comm.py", EXPLICIT,
  "NVIDIA/makani utils/comm.py (model-parallel process grid, TCPStore wire-up, NCCL high-priority streams)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('num_gpu = int(os.getenv("NGPU_PER_NODE", torch.cuda.device_count()))', "torch_cuda_api", R, True,
      'num_gpu = int(os.getenv("NGPU_PER_NODE", torch.npu.device_count()))',
      "device_count() is 0 without CUDA: modulo by zero when LOCAL_RANK and NGPU_PER_NODE are unset"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
      'device = torch.device(f"npu:{local_rank}")', "a cuda device on an NPU host"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "raises without CUDA"),
    C('backend = "nccl" if torch.cuda.is_available() else "gloo"', "dist_backend", R, True,
      'backend = "hccl" if torch.npu.is_available() else "gloo"',
      "gloo on an NPU host: collectives on NPU tensors fail"),
    C("with torch.cuda.device(device):", "torch_cuda_api", R, True, "with torch.npu.device(device):",
      "entering a CUDA device context raises without CUDA"),
    C('if backend == "nccl":', "dist_backend", R, False, 'if backend == "hccl":',
      "the unchanged test is False on NPU, so only the high-priority-stream option is lost (performance)"),
    C("pg_options = dist.ProcessGroupNCCL.Options()", "dist_backend", R, False,
      "pg_options = torch_npu._C._distributed_c10d.ProcessGroupHCCL.Options()",
      "only reached with an NCCL backend; whether HCCL options expose is_high_priority_stream is unconfirmed"),
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", R, True,
      "dist.barrier(device_ids=[torch.npu.current_device()])", "current_device() raises without CUDA"),
]),

E("makani_monitor", "makani/utils/training/monitoring.py", EXPLICIT,
  "makani/modulus-style training monitor (pynvml sampler, allocator stats, memory snapshots, NVTX, CUDA events)", [
    C("=import pynvml", "custom_cuda_extension", X, False, None,
      "the ctypes wrapper imports without a driver; it is the NVML calls below that fail"),
    C("pynvml.nvmlInit()", "custom_cuda_extension", R, True, "# NVML has no NPU equivalent; sample torch.npu instead",
      "no NVIDIA driver / libnvidia-ml on an NPU host (knowledge §6: pynvml has no NPU equivalent in torch_npu)"),
    C("self.device_index = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "self.device_index = torch.npu.current_device()", "raises without CUDA"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(self.device_index)", "custom_cuda_extension", R, True,
      "self.handle = self.device_index", "NVML call"),
    C("self.device_name = pynvml.nvmlDeviceGetName(self.handle)", "custom_cuda_extension", R, True,
      "self.device_name = torch.npu.get_device_name(self.device_index)", "NVML call"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)", "custom_cuda_extension", R, True,
      "util = torch.npu.utilization(self.device_index)", "NVML call; torch.npu.utilization is the NPU counterpart"),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)", "custom_cuda_extension", R, True,
      "free, total = torch.npu.mem_get_info(self.device_index)", "NVML call"),
    C("power_w = pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0", "custom_cuda_extension", R, True,
      "power_w = float('nan')  # npu-smi only", "NVML call without a torch_npu counterpart"),
    C("pynvml.nvmlShutdown()", "custom_cuda_extension", X, True, None, "NVML call"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(device)", "raises without CUDA"),
    C('"allocated_gib": torch.cuda.memory_allocated(device) / 2**30,', "torch_cuda_api", R, True,
      '"allocated_gib": torch.npu.memory_allocated(device) / 2**30,', "reports 0 without CUDA"),
    C('"peak_allocated_gib": torch.cuda.max_memory_allocated(device) / 2**30,', "torch_cuda_api", R, True,
      '"peak_allocated_gib": torch.npu.max_memory_allocated(device) / 2**30,', "reports 0 without CUDA"),
    C("torch.cuda.memory._record_memory_history(max_entries=self.max_entries)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(max_entries=self.max_entries)",
      "CUDA allocator hook; transfer_to_npu maps it to the NPU version (§2.3), explicit port must"),
    C("torch.cuda.memory._dump_snapshot(", "torch_cuda_api", R, True, "torch_npu.npu.memory._dump_snapshot(",
      "CUDA allocator hook"),
    C("torch.cuda.memory._record_memory_history(enabled=None)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(enabled=None)", "CUDA allocator hook"),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", R, True, "range_id = torch_npu.npu.mstx.range_start(name)",
      NVTX_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)", NVTX_NOTE),
    C("ev = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "ev = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA"),
    C("props = torch.cuda.get_device_properties(torch.cuda.current_device())", "torch_cuda_api", R, True,
      "props = torch.npu.get_device_properties(torch.npu.current_device())", "raises without CUDA"),
    C('f"compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs"',
      "device_capability_check", R, True,
      'f"{props.cube_core_num} cube cores, {props.vector_core_num} vector cores"',
      "NPU device properties have no major/minor or multi_processor_count (only name, total_memory, "
      "L2_cache_size, cube_core_num, vector_core_num)"),
    C("torch.cuda.nccl.version()", "dist_backend", R, True, 'f"HCCL (CANN)")',
      "torch.cuda.nccl needs a CUDA build"),
]),

E("makani_spectral", "makani/models/common/spectral_convolution.py", EXPLICIT,
  "NVIDIA/makani models/common/spectral_convolution.py (SFNO SpectralConvS2 with an fp32 no-autocast region)", [
    C("from torch.cuda import amp", "amp", R, True, "from torch_npu.npu import amp",
      "amp.autocast(enabled=False) then only disables CUDA autocast; under NPU autocast the real-valued "
      "contraction on view_as_real(x) would be cast to fp16"),
    C('with torch.autocast(device_type="cuda", enabled=False):', "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=False):',
      "same: the inverse SHT's real einsums would run under NPU autocast"),
]),

E("makani_dockerfile", "Dockerfile", EXPLICIT,
  "makani / modulus training Dockerfile on the NGC PyTorch image (DALI, NVML, torch-harmonics CUDA build, apex)", [
    C("FROM nvcr.io/nvidia/pytorch:24.05-py3", "device_type", R, True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the NGC image is CUDA PyTorch; a CANN base image is needed (Ascend/cann-container-image)"),
    C("ENV DEBIAN_FRONTEND=noninteractive", "import_torch_npu", A, True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12",
      "torch and the matching torch_npu wheel must be installed on the CANN image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
      "read by the NVIDIA container runtime only; NPUs are passed as /dev/davinci* devices"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX"', "env_var", X, False, None, "nvcc arch list, unused without CUDA"),
    C("ENV FORCE_CUDA_EXTENSION=1", "env_var", X, True, None,
      "forces torch-harmonics to build its CUDAExtension with nvcc, which fails on the CANN image"),
    C("nvidia-dali-cuda120==1.37.1", "custom_cuda_extension", R, False, "nvidia-dali (CPU-only use)",
      "the ported loader keeps DALI on the CPU; whether the CUDA wheel installs and runs CPU-only there is unconfirmed"),
    C("nvidia-ml-py==12.535.161", "custom_cuda_extension", X, False, None,
      "installs anywhere; NVML itself is unusable without an NVIDIA driver"),
    C("pylibcugraphops-cu12==24.04.*", "custom_cuda_extension", X, False, None,
      "CUDA-only RAPIDS package; its import is guarded in gnn_layers/utils.py, so this is dead weight "
      "(whether the install itself fails is unconfirmed)"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", R, True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && bash scripts/build.sh --python=3.11",
      "NVIDIA apex with fused kernels cannot be built on Ascend; Ascend's apex patch is built differently"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext"',
      "custom_cuda_extension", X, True, None, "--cuda_ext / --fast_layer_norm need nvcc"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("ENV NCCL_NET_GDR_LEVEL=PHB", "env_var", X, False, None, "NCCL tuning, ignored by HCCL"),
    C("ENV CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA runtime setting, no NPU effect"),
]),

# ---------------------------------------------------------------------------------------------------------------
# earth2mip / ERA5 pipelines / ACE / Aurora / ClimaX
# ---------------------------------------------------------------------------------------------------------------

E("earth2mip_ensemble", "earth2mip/inference_ensemble.py", EXPLICIT,
  "NVIDIA/earth2mip inference_ensemble.py (per-rank ensemble slices, correlated / spectral IC noise, netCDF out)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("ky = torch.fft.fftfreq(nlat, device=device)", "unsupported_op_workaround", R, False,
      "ky = torch.fft.fftfreq(nlat).to(device)",
      "fftfreq is ✘ in Ascend's list and in msFmkTransplt's unsupported list; whether it fails or falls back on "
      "an NPU device is unconfirmed"),
    C("kx = torch.fft.rfftfreq(nlon, device=device)", "unsupported_op_workaround", R, False,
      "kx = torch.fft.rfftfreq(nlon).to(device)", "rfftfreq: same as fftfreq (unconfirmed failure mode)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("x = torch.from_numpy(ds.values).cuda()", "tensor_to_device", R, True,
      "x = torch.from_numpy(ds.values).to(model.device)", ".cuda() fails without CUDA"),
    C("torch.cuda.manual_seed(seed + dist.rank)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed + dist.rank)",
      "lazily queued without CUDA, harmless; the NPU generator stays unseeded (reproducibility only)"),
]),

E("earth2mip_regrid", "earth2mip/regrid.py", EXPLICIT,
  "NVIDIA/earth2mip regrid.py (TempestRemap sparse maps applied with torch.sparse.mm, bilinear fallback)", [
    C("self.M = torch.sparse_coo_tensor((i, j), M, [n_b, n_a], dtype=torch.float).coalesce()",
      "unsupported_op_workaround", R, False,
      "self.register_buffer('rows', torch.from_numpy(i)); self.register_buffer('cols', torch.from_numpy(j)); "
      "self.register_buffer('weights', torch.from_numpy(M).float())",
      "building the map on the CPU is fine; rewritten together with forward()"),
    C("self.M = self.M.to(device)", "unsupported_op_workaround", R, False,
      "self.rows, self.cols, self.weights = (t.to(device) for t in (self.rows, self.cols, self.weights))",
      "moves the sparse COO map to the NPU; sparse_coo_tensor is ✔ in Ascend's list, so the copy itself may work "
      "(unconfirmed); rewritten together with forward()"),
    C("x_regrid = torch.sparse.mm(self.M, x_flat)", "unsupported_op_workaround", R, True,
      "x_regrid = x_flat.new_zeros(n_b, x_flat.shape[1]).index_add_(0, self.rows, x_flat[self.cols] * self.weights[:, None])",
      "sparse x dense matmul on the NPU: no sparse kernels in the native op lists, and sparse ops without kernels "
      "raise (§3.8); a gather + index_add_ is dense and supported"),
]),

E("era5_stats", "data_process/compute_stats.py", EXPLICIT,
  "FourCastNet/ERA5-style normalisation-statistics job (mpi4py + NCCL all-reduce + CuPy percentiles)", [
    C("import cupy as cp", "custom_cuda_extension", X, True, None,
      "CuPy has no Ascend support (knowledge §6); percentiles go to numpy/torch"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank % torch.cuda.device_count()))',
      "torch_cuda_api", R, True,
      'local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank % torch.npu.device_count()))',
      "the default is evaluated eagerly: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("cp.cuda.Device(local_rank).use()", "custom_cuda_extension", X, True, None, "CuPy device selection"),
    C('dist.init_process_group("nccl", rank=rank, world_size=size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=size)', "NCCL is not available on Ascend"),
    C('return comm, rank, size, torch.device("cuda", local_rank)', "device_type", R, True,
      'return comm, rank, size, torch.device("npu", local_rank)', "a cuda device on an NPU host"),
    C("x = torch.from_numpy(block).to(device, non_blocking=True).double()", "unsupported_op_workaround", R, False,
      "x = torch.from_numpy(block).to(device, non_blocking=True).float()  # accumulate the sums on the CPU in fp64",
      "float64 reductions on the NPU: fp64 coverage differs per op (knowledge notes an fp64 caveat); unconfirmed"),
    C("tp = cp.asarray(np.concatenate(gathered))", "custom_cuda_extension", R, True,
      "tp = np.concatenate(gathered)", "CuPy"),
    C("tp = cp.log1p(tp / 1e-5)", "custom_cuda_extension", R, True, "tp = np.log1p(tp / 1e-5)", "CuPy"),
    C("q = cp.percentile(tp, cp.asarray([50.0, 90.0, 99.0, 99.9]))", "custom_cuda_extension", R, True,
      "q = np.percentile(tp, [50.0, 90.0, 99.0, 99.9])", "CuPy"),
    C("q = cp.asnumpy(q)", "custom_cuda_extension", X, True, None, "CuPy"),
]),

E("era5_zarr_loader", "climate_ml/data/era5_zarr.py", AGNOSTIC,
  "WeatherBench2-zarr ERA5 dataset with a side-stream CUDA prefetcher (ClimaX / Stormer-style data module)", [
    C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", R, False,
      "self.stream = torch.npu.Stream(device=device)", "reached only once build_loader admits NPU devices"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, False, "with torch.npu.stream(self.stream):",
      "reached only once build_loader admits NPU devices"),
    C("self._next = [t.cuda(self.device, non_blocking=True) for t in batch]", "tensor_to_device", R, False,
      "self._next = [t.to(self.device, non_blocking=True) for t in batch]",
      "reached only once build_loader admits NPU devices"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", R, False,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)",
      "reached only once build_loader admits NPU devices"),
    C("t.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, False,
      "t.record_stream(torch.npu.current_stream(self.device))", "reached only once build_loader admits NPU devices"),
    C('if device is not None and device.type == "cuda":', "device_type", R, True,
      'if device is not None and device.type in ("cuda", "npu"):',
      "an NPU device gets the plain loader: batches stay on the host and the NPU model receives CPU tensors"),
]),

E("triton_latweighted", "climate_ml/metrics/fused_lat_weighted.py", KERNEL,
  "Triton fused latitude-weighted RMSE / ACC reductions for ensemble scoring (capability-dependent autotune)", [
    C("cc_major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "cc_major = 0  # NPU: use the generic config list (triton-ascend)",
      "evaluated at import (decorator argument): raises without CUDA; on NPU the capability is only an "
      "env-configured stand-in (TORCH_NPU_DEVICE_CAPABILITY)"),
    C('triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK": 1024}),', "warp/stage tuning is CUDA-specific; triton-ascend tuning unconfirmed"),
    C('triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK": 2048}),', "triton-ascend tuning unconfirmed"),
    C('triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=3),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK": 4096}),', "triton-ascend tuning unconfirmed"),
    C("p = tl.load(pred_ptr + row * stride_row + offs, mask=mask, other=0.0, eviction_policy", "triton_kernel_tuning",
      R, False, "p = tl.load(pred_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32)",
      "cache eviction hint; triton-ascend support unconfirmed"),
    C("t = tl.load(tgt_ptr + row * stride_row + offs, mask=mask, other=0.0, eviction_policy", "triton_kernel_tuning",
      R, False, "t = tl.load(tgt_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32)",
      "cache eviction hint; triton-ascend support unconfirmed"),
    C('cache_modifier=".cg"', "triton_kernel_tuning", R, False,
      "c = tl.load(clim_ptr + chan * stride_clim + offs, mask=mask, other=0.0)",
      "PTX cache modifier; triton-ascend support unconfirmed"),
    C('assert pred.is_cuda and target.is_cuda, "fused metrics need CUDA tensors"', "device_type", R, True,
      'assert pred.device.type in ("cuda", "npu") and target.device == pred.device', "fails for NPU tensors"),
    C('assert pred.is_cuda, "fused metrics need CUDA tensors"', "device_type", R, True,
      'assert pred.device.type in ("cuda", "npu")', "fails for NPU tensors"),
]),

E("fme_distributed", "fme/core/distributed.py", AGNOSTIC,
  "ai2 ACE / full-model-emulation fme/core/distributed.py + device.py (get_device, Distributed singleton)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('return get_device().type == "cuda"', "device_type", R, True,
      'return get_device().type in ("cuda", "npu")',
      "callers pick backend, device binding, DDP device_ids and autocast from this; False on NPU"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      'if torch.npu.is_available(): return torch.device("npu", torch.npu.current_device())',
      "silently returns the CPU device on an NPU host"),
    C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, False,
      'torch.distributed.init_process_group(backend="hccl" if get_device().type == "npu" else "nccl", init_method="env://")',
      "reached only once using_gpu() admits NPU"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, False, "torch.npu.set_device(self.local_rank)",
      "reached only once using_gpu() admits NPU"),
    C('device_type = "cuda" if using_gpu() else "cpu"', "amp", R, True, "device_type = get_device().type",
      "on NPU this is 'cpu': CPU autocast is inactive for NPU tensors, so mixed precision silently does nothing"),
    C("return torch.cuda.amp.GradScaler(enabled=enabled and using_gpu())", "amp", R, True,
      "return torch.amp.GradScaler(get_device().type, enabled=enabled and using_gpu())",
      "CUDA scaler; disabled on NPU, so fp16 training would run without loss scaling"),
]),

E("aurora_hres_rollout", "examples/run_aurora_hres.py", EXPLICIT,
  "microsoft/aurora HRES 0.1-degree rollout example (bf16 autocast model, inference_mode rollout)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('model = model.to("cuda")', "device_type", R, True, 'model = model.to("npu")', "a cuda device on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "raises on a torch build without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB")', "reports 0 without CUDA"),
]),

E("earth2_requirements", "requirements.txt", EXPLICIT,
  "earth2mip-style inference / scoring requirements.txt pinned to cu118 wheels (onnxruntime-gpu, DALI, CuPy)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts install the CPU torch wheel under torch_npu (knowledge §1.1)"),
    C("--extra-index-url https://pypi.nvidia.com", "device_type", X, False, None, "only serves NVIDIA wheels"),
    C("torch==2.1.2+cu118", "device_type", R, True, "torch==2.1.0",
      "CUDA build; torch_npu wheels pair with exact torch versions (2.1.0, not 2.1.2)"),
    C("torchvision==0.16.2+cu118", "device_type", R, True, "torchvision==0.16.0",
      "CUDA build pinned to torch 2.1.2; 0.16.0 pairs with torch 2.1 (Ascend/vision table)"),
    C("=# model zoo / runtime", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "the torch_npu wheel matching torch 2.1.0"),
    C("onnxruntime-gpu==1.16.3", "custom_cuda_extension", R, True, "onnxruntime-cann==1.22.1",
      "CUDA execution provider only (Pangu inference would run on the CPU); onnxruntime-cann per onnxruntime "
      "docs, not in the knowledge base"),
    C("nvidia-dali-cuda110==1.32.0", "custom_cuda_extension", R, False, "nvidia-dali (CPU-only use)",
      "kept for the CPU-only DALI loader; install/runtime behaviour on the NPU host unconfirmed"),
    C("cupy-cuda11x==12.3.0", "custom_cuda_extension", X, True, None, "CuPy has no Ascend support (§6)"),
    C("nvidia-ml-py==12.535.133", "custom_cuda_extension", X, False, None,
      "installs anywhere; unusable without an NVIDIA driver"),
]),

E("climax_environment_yml", "docker/environment.yml", EXPLICIT,
  "microsoft/ClimaX docker/environment.yml (conda: pytorch-cuda 11.7, nvidia channel, xformers, deepspeed)", [
    C("=- nvidia", "device_type", X, False, None, "channel only needed for pytorch-cuda"),
    C("- pytorch=1.13.1", "device_type", R, True, "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.13 (knowledge §1)"),
    C("- torchvision=0.14.1", "device_type", R, True, "- torchvision=0.16.0", "must follow the torch version"),
    C("- torchaudio=0.13.1", "device_type", R, True, "- torchaudio=2.1.0", "must follow the torch version"),
    C("- pytorch-cuda=11.7", "device_type", X, True, None, "selects the CUDA build of pytorch from the nvidia channel"),
    C("- cudatoolkit-dev=11.7", "device_type", X, False, None, "unused on NPU; whether it installs is unconfirmed"),
    C("- nccl=2.14", "dist_backend", X, False, None, "HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12", "the torch_npu wheel goes in the pip list"),
    C("- xformers==0.0.16", "attention_kernel", X, False, None,
      "xformers has no NPU backend (§6); unused by the code in this probe, install behaviour unconfirmed"),
    C("- deepspeed==0.8.0", "distributed_framework", R, False, "- deepspeed>=0.10",
      "0.8.0 predates DeepSpeed's NPU accelerator; the ClimaX config trains with plain DDP, so only needed if a "
      "deepspeed strategy is chosen"),
]),

E("climax_config", "configs/global_forecast_climax.yaml", EXPLICIT,
  "microsoft/ClimaX configs/global_forecast_climax.yaml (LightningCLI trainer on GPUs, fp16, DDP)", [
    C("precision: 16", "amp", R, False, "precision: 32",
      "Lightning's fp16 plugin is tied to CUDA autocast/GradScaler; how it behaves with an NPU accelerator is "
      "unconfirmed"),
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "no CUDA GPU on the host, so Lightning refuses accelerator gpu; an NPU accelerator for Lightning is needed "
      "(not covered by the knowledge base)"),
    C("strategy: ddp", "dist_backend", R, False,
      "strategy: {class_path: pytorch_lightning.strategies.DDPStrategy, init_args: {process_group_backend: hccl}}",
      "Lightning picks nccl only for CUDA devices, gloo otherwise; unconfirmed for an NPU accelerator"),
]),
