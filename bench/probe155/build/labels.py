# Labels for probe155 (native PyTorch distributed parallelism: torchtitan / torchtune / PyTorch tutorials).
# One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU (torch_npu).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------------------------
E("titan_tools_utils", "torchtitan/tools/utils.py", "device_branch_or_abstraction",
  "torchtitan tools/utils.py (device_type/device_module helpers, GC, peak-FLOPS table)",
  [
      C("else:  # for other GPU types, assume A100", "device_capability_check", "add_branch", False,
        'elif "Ascend910" in device_name:  # add an Atlas A2 peak-FLOPS entry (value unconfirmed)',
        "get_peak_flops falls back to A100 numbers for Ascend device names, so MFU is misreported; "
        "metric only, and the Ascend peak figure is not in the knowledge base (unconfirmed)"),
  ])

E("titan_parallel_dims", "torchtitan/distributed/parallel_dims.py", "device_branch_or_abstraction",
  "torchtitan distributed/parallel_dims.py (ParallelDims.build_mesh)",
  [
      # build_mesh() takes device_type from the caller; nothing CUDA-specific in this file.
  ])

E("titan_dist_utils", "torchtitan/distributed/utils.py", "device_branch_or_abstraction",
  "torchtitan distributed/utils.py (init_distributed, set_determinism, clip_grad_norm_, CP context)",
  [
      C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "npu_only_addition", True,
        'os.environ["HCCL_DETERMINISTIC"] = "true"',
        "deterministic mode: CUBLAS_WORKSPACE_CONFIG is a no-op on NPU and HCCL reductions are not "
        "deterministic by default (HCCL_DETERMINISTIC default false); without it the requested determinism is silently lost"),
      C('="cuda",', "amp", "replace", True, '"npu",',
        "torch.autocast('cuda') on an NPU host only warns and disables itself, so DDP/single-device runs silently "
        "train in fp32"),
      C("=sdpa_kernel(", "attention_kernel", "replace", False,
        'contextlib.nullcontext() if device_type == "npu" else sdpa_kernel(',
        "CUDA SDPA backend selection (torch.backends.cuda sdp toggles are marked unsupported in Ascend's 2.7.1 list); "
        "NPU context parallel uses the NPU fused SDPA path. Effect of sdpa_kernel on NPU unconfirmed"),
      C('TRACE_BUFFER_SIZE = "TORCH_NCCL_TRACE_BUFFER_SIZE"', "env_var", "replace", False,
        'TRACE_BUFFER_SIZE = "TORCH_HCCL_TRACE_BUFFER_SIZE"',
        "NCCL flight-recorder knob is ignored by ProcessGroupHCCL; HCCL-side name unconfirmed in knowledge base"),
      C('TRACE_FILE = "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"', "env_var", "replace", False,
        'TRACE_FILE = "TORCH_HCCL_DEBUG_INFO_TEMP_FILE"',
        "flight-recorder dump path; no-op on HCCL, equivalent name unconfirmed"),
      C('DUMP_ON_TIMEOUT = "TORCH_NCCL_DUMP_ON_TIMEOUT"', "env_var", "replace", False,
        'DUMP_ON_TIMEOUT = "TORCH_HCCL_DUMP_ON_TIMEOUT"',
        "flight-recorder dump-on-timeout; no-op on HCCL, equivalent name unconfirmed"),
      C('ASYNC_ERROR_HANDLING = "TORCH_NCCL_ASYNC_ERROR_HANDLING"', "env_var", "replace", False,
        'ASYNC_ERROR_HANDLING = "HCCL_ASYNC_ERROR_HANDLING"',
        "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (default 1); the NCCL name is silently ignored. "
        "Whether value 3 (skip cleanup) is accepted by HCCL is unconfirmed"),
      C('os.environ["TORCH_NCCL_AVOID_RECORD_STREAMS"] = "1"', "env_var", "replace", False,
        'os.environ["TORCH_HCCL_AVOID_RECORD_STREAMS"] = "1"',
        "memory-only tuning for async collectives; NCCL name is a no-op on NPU, HCCL counterpart unconfirmed"),
      C('backend = "nccl"', "dist_backend", "replace", True, 'backend = "hccl"',
        "ProcessGroupNCCL does not exist on an Ascend host; HCCL is the collective backend"),
      C('backend = "cuda:nccl,cpu:gloo"', "dist_backend", "replace", True, 'backend = "npu:hccl,cpu:gloo"',
        "device-to-backend map string must name the npu device and hccl"),
      C("torch.distributed.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", True,
        "torch.distributed.barrier(device_ids=[torch.npu.current_device()])",
        "torch.cuda.current_device() fails without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() fails without CUDA"),
  ])

E("titan_parallelize", "torchtitan/models/llama3/infra/parallelize.py", "device_branch_or_abstraction",
  "torchtitan models/llama3/infra/parallelize.py (TP plan, async TP, SAC, compile, FSDP2, DDP)",
  [
      C("torch._inductor.config._micro_pipeline_tp = True", "compile_mode", "replace", False,
        'torch._inductor.config._micro_pipeline_tp = device_type == "cuda"',
        "async-TP micro-pipelining is an Inductor pass built on CUDA symmetric memory; keep it off on NPU "
        "(NPU support unconfirmed in the knowledge base, so not marked required)"),
      C("enable_symm_mem_for_group(tp_mesh.get_group().group_name)", "unsupported_op_workaround", "replace", False,
        'if device_type == "cuda": enable_symm_mem_for_group(tp_mesh.get_group().group_name)',
        "torch.distributed._symmetric_memory is CUDA-only upstream as far as known; unconfirmed for torch_npu"),
      C("torch.ops.aten._scaled_dot_product_flash_attention.default,", "attention_kernel", "npu_only_addition", False,
        "torch.ops.npu.npu_fusion_attention.default,",
        "on NPU SDPA lowers to the NPU fused attention op, which is not in the SAC save list, so attention "
        "is recomputed in backward (performance only; op name unconfirmed)"),
  ])

E("titan_model", "torchtitan/models/llama3/model/model.py", "device_branch_or_abstraction",
  "torchtitan models/llama3/model/model.py (Llama3 Transformer with SDPA / FlexAttention)",
  [
      # Device-agnostic model code: SDPA dispatches to the NPU fused attention, buffers follow
      # buffer_device. FlexAttention is compiled lazily and only used when use_flex_attn=True.
  ])

E("titan_norms", "torchtitan/models/norms.py", "kernel_rewrite",
  "torchtitan models/norms.py (build_norm + Triton fused RMSNorm)",
  [
      C("triton.Config({}, num_warps=w) for w in (1, 2, 4, 8, 16, 32)", "triton_kernel_tuning", "replace", False,
        "triton.Config({}, num_warps=1)  # triton-ascend: tune BLOCK/grid per AI core instead of warps",
        "autotune space is expressed in CUDA warps; on triton-ascend warps are not the launch unit (performance only, unconfirmed)"),
      C("output = self._norm(x.float()).type_as(x)", "npu_fused_op", "replace", False,
        "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
        "plain rmsnorm is several elementwise kernels; torch_npu.npu_rms_norm fuses it (performance only)"),
      C("sm_count = torch.cuda.get_device_properties(x.device).multi_processor_count", "torch_cuda_api", "replace", True,
        "sm_count = torch.npu.get_device_properties(x.device).vector_core_num",
        "torch.cuda fails on NPU and NPU device properties have no multi_processor_count (only name, total_memory, "
        "L2_cache_size, cube_core_num, vector_core_num)"),
  ])

E("titan_checkpoint", "torchtitan/components/checkpoint.py", "device_branch_or_abstraction",
  "torchtitan components/checkpoint.py (DCP save/load, async save, pinned-memory staging process)",
  [
      C('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))', "torch_cuda_api", "replace", True,
        'torch.npu.set_device(int(os.environ["LOCAL_RANK"]))',
        "background checkpoint process binds its device through torch.cuda, which fails on NPU"),
      C("self.staging_stream = torch.cuda.Stream() if self.enable_staging else None", "torch_cuda_api", "replace", True,
        "self.staging_stream = torch.npu.Stream() if self.enable_staging else None",
        "CUDA stream creation fails on NPU (async_with_pinned_mem path)"),
      C("state_dict, pin_memory=True, share_memory=True", "pin_memory", "replace", False,
        "state_dict, pin_memory=False, share_memory=True",
        "torch's _create_cpu_state_dict pins through the CUDA runtime (cudaHostRegister); whether it works "
        "with torch_npu is unconfirmed - disable pinning or verify"),
      C("with torch.cuda.stream(self.staging_stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.staging_stream):",
        "torch.cuda.stream context fails on NPU"),
  ])

E("titan_profiling", "torchtitan/tools/profiling.py", "explicit_replacement",
  "torchtitan tools/profiling.py (torch.profiler traces, CUDA memory snapshots)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "elif torch.npu.is_available(): gpu_device_profiled = torch_npu.profiler.ProfilerActivity.NPU",
        "on NPU neither branch matches, gpu_device_profiled stays None and no device activity is recorded"),
      C("with torch.profiler.profile(", "torch_cuda_api", "replace", True,
        "with torch_npu.profiler.profile(",
        "NPU kernels are only captured by torch_npu.profiler (transfer_to_npu maps torch.profiler.profile to it)"),
      C("schedule=torch.profiler.schedule(wait=wait, warmup=warmup, active=active),", "torch_cuda_api", "replace", False,
        "schedule=torch_npu.profiler.schedule(wait=wait, warmup=warmup, active=active),",
        "keep schedule and profiler from the same package; whether torch.profiler.schedule works with "
        "torch_npu.profiler.profile is unconfirmed"),
      C("torch.cuda.memory._record_memory_history(", "torch_cuda_api", "replace", True,
        "torch_npu.npu.memory._record_memory_history(",
        "CUDA caching-allocator history is not available on NPU; the NPU allocator has its own"),
      C("pickle.dump(torch.cuda.memory._snapshot(), output)", "torch_cuda_api", "replace", True,
        "pickle.dump(torch_npu.npu.memory._snapshot(), output)",
        "CUDA allocator snapshot fails on NPU"),
  ])

E("titan_metrics", "torchtitan/components/metrics.py", "explicit_replacement",
  "torchtitan components/metrics.py (device memory monitor, TensorBoard/W&B loggers)",
  [
      C('def __init__(self, device: str = "cuda:0"):', "device_type", "replace", False,
        'def __init__(self, device: str = "npu:0"):',
        "default argument only; build_device_memory_monitor passes the device explicitly"),
      C("self.device_name = torch.cuda.get_device_name(self.device)", "torch_cuda_api", "replace", True,
        "self.device_name = torch.npu.get_device_name(self.device)", "torch.cuda call fails on NPU"),
      C("self.device_index = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "self.device_index = torch.npu.current_device()", "torch.cuda call fails on NPU"),
      C("self.device_capacity = torch.cuda.get_device_properties(", "torch_cuda_api", "replace", True,
        "self.device_capacity = torch.npu.get_device_properties(",
        "torch.cuda call fails on NPU; total_memory is available on NPU properties"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(self.device)", "torch.cuda call fails on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU cache simply is not emptied"),
      C("cuda_info = torch.cuda.memory_stats(self.device)", "torch_cuda_api", "replace", True,
        "cuda_info = torch.npu.memory_stats(self.device)",
        "fails (or returns {} and the key lookups below raise KeyError)"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "torch.cuda call fails on NPU"),
      C('device_memory_monitor = DeviceMemoryMonitor("cuda")', "device_type", "replace", True,
        'device_memory_monitor = DeviceMemoryMonitor("npu")', "cuda device string on an NPU host"),
  ])

E("titan_train", "torchtitan/train.py", "explicit_replacement",
  "torchtitan train.py (main training loop: meshes, meta init, PP/SPMD step, MFU logging)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry point; torch_npu autoloads since 2.5.1 but the explicit import is still recommended"),
      C("device = torch.device(f\"cuda:{int(os.environ['LOCAL_RANK'])}\")", "device_type", "replace", True,
        "device = torch.device(f\"npu:{int(os.environ['LOCAL_RANK'])}\")", "cuda device on an NPU host"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "torch.cuda.set_device fails on NPU"),
      C('world_mesh = parallel_dims.build_mesh(device_type="cuda")', "device_type", "replace", True,
        'world_mesh = parallel_dims.build_mesh(device_type="npu")',
        "init_device_mesh with device_type cuda cannot create NCCL groups on NPU"),
      C('buffer_device = "cuda"', "device_type", "replace", True, 'buffer_device = "npu"',
        "CPU-offload path initialises RoPE buffers on cuda"),
      C('init_device = "cuda"', "device_type", "replace", True, 'init_device = "npu"',
        "to_empty(device='cuda') fails on NPU"),
      C("input_ids = input_ids.cuda()", "tensor_to_device", "replace", True, "input_ids = input_ids.npu()",
        ".cuda() fails on NPU"),
      C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
        ".cuda() fails on NPU"),
  ])

E("titan_toml", "torchtitan/models/llama3/train_configs/llama3_8b.toml", "explicit_replacement",
  "torchtitan models/llama3/train_configs/llama3_8b.toml (job config preset)",
  [
      C('norm_type = "fused_rmsnorm"  # layernorm / np_layernorm / rmsnorm / fused_rmsnorm', "triton_kernel_tuning",
        "replace", False, 'norm_type = "rmsnorm"  # layernorm / np_layernorm / rmsnorm / fused_rmsnorm',
        "fused_rmsnorm is a CUDA-tuned Triton kernel; use plain rmsnorm unless triton-ascend is installed and the "
        "kernel has been validated on NPU"),
  ])

E("titan_run_sh", "run_train.sh", "explicit_replacement",
  "torchtitan run_train.sh (single-node torchrun launcher)",
  [
      C("=set -ex", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or torch_npu cannot load libascendcl/libhccl"),
      C('if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", "replace", True,
        'if [ -z "${ASCEND_RT_VISIBLE_DEVICES}" ]; then',
        "checks the CUDA mask; on NPU the caller's ASCEND_RT_VISIBLE_DEVICES would be overridden"),
      C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))",
        "CUDA_VISIBLE_DEVICES does not restrict NPUs; device selection silently ignored"),
      C('PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" \\', "env_var", "replace", False,
        'PYTORCH_NPU_ALLOC_CONF="expandable_segments:True" \\',
        "allocator tuning; the CUDA variable is ignored on NPU (memory fragmentation only)"),
  ])

E("titan_slurm", "multinode_trainer.slurm", "explicit_replacement",
  "torchtitan multinode_trainer.slurm (AWS/EFA SLURM launcher)",
  [
      C("#SBATCH --gpus-per-task=8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "GPU GRES request; how Ascend nodes expose NPUs to Slurm is site-specific (no Ascend Slurm integration "
        "found in the knowledge base - unconfirmed)"),
      C("=export LOGLEVEL=INFO", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced on every node before torchrun"),
      C('export FI_PROVIDER="efa"', "env_var", "removal", False, None,
        "libfabric/EFA provider for NCCL; irrelevant to HCCL (no effect)"),
      C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL transport switch; HCCL uses the NPU RoCE NICs, no equivalent needed"),
      C("=export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging knob is ignored; CANN log level is the closest counterpart (debug only)"),
      C("=export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
        "0 is the default on both sides, so this is a no-op either way"),
      C('export NCCL_SOCKET_IFNAME="eth0,en,eth,em,bond"', "env_var", "replace", False,
        'export HCCL_SOCKET_IFNAME="eth0,en,eth,em,bond"',
        "host NIC selection for rendezvous; HCCL has its own variable with the same prefix-list syntax. Needed only "
        "when HCCL's default NIC choice cannot reach the root node"),
      C("=export NCCL_BUFFSIZE=2097152", "env_var", "replace", False, "export HCCL_BUFFSIZE=200",
        "HCCL_BUFFSIZE is in MB (default 200), NCCL_BUFFSIZE in bytes - do not copy the value; tuning only"),
      C("=export FI_EFA_SET_CUDA_SYNC_MEMOPS=0", "env_var", "removal", False, None,
        "EFA/CUDA memops switch, meaningless on Ascend"),
      C('srun --nodes=1 --ntasks=1 -w "$head_node" nvidia-smi --query-gpu=index,name,memory.total --format=csv',
        "device_capability_check", "replace", False, 'srun --nodes=1 --ntasks=1 -w "$head_node" npu-smi info',
        "nvidia-smi is absent on Ascend nodes; the script has no set -e so it only logs an error (inventory only)"),
      C("=dcgmi profile --pause", "device_capability_check", "removal", False, None,
        "NVIDIA DCGM profiling pause; not present on Ascend nodes (non-fatal without set -e)"),
      C("=dcgmi profile --resume", "device_capability_check", "removal", False, None,
        "NVIDIA DCGM profiling resume; not present on Ascend nodes"),
  ])

E("ex_log_utils", "distributed/tensor_parallelism/log_utils.py", "explicit_replacement",
  "pytorch/examples distributed/tensor_parallelism/log_utils.py (rank_log, GPU-count check)",
  [
      C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "has_cuda = torch.npu.is_available()",
        "returns False on an NPU host, so every example exits with 'Unable to locate sufficient gpus'"),
      C("gpu_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpu_count = torch.npu.device_count()", "returns 0 on an NPU host"),
  ])

E("ex_fsdp_tp", "distributed/tensor_parallelism/fsdp_tp_example.py", "explicit_replacement",
  "pytorch/examples distributed/tensor_parallelism/fsdp_tp_example.py (2-D FSDP2 + TP on Llama2)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('device_mesh = init_device_mesh("cuda", (dp_size, tp_size), mesh_dim_names=("dp", "tp"))', "device_type",
        "replace", True, 'device_mesh = init_device_mesh("npu", (dp_size, tp_size), mesh_dim_names=("dp", "tp"))',
        "a cuda device mesh cannot be built on NPU (no CUDA devices, no NCCL)"),
      C('model = Transformer.from_model_args(simple_llama2_config).to("cuda")', "tensor_to_device", "replace", True,
        'model = Transformer.from_model_args(simple_llama2_config).to("npu")', "cuda device string"),
      C('inp = torch.randint(32000, (8, 256), device="cuda")', "tensor_to_device", "replace", True,
        'inp = torch.randint(32000, (8, 256), device="npu")', "cuda device string"),
  ])

E("ex_sp", "distributed/tensor_parallelism/sequence_parallel_example.py", "explicit_replacement",
  "pytorch/examples distributed/tensor_parallelism/sequence_parallel_example.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('device_type="cuda", mesh_shape=(int(os.environ["WORLD_SIZE"]),)', "device_type", "replace", True,
        'device_type="npu", mesh_shape=(int(os.environ["WORLD_SIZE"]),)', "cuda device mesh on an NPU host"),
      C('model = ToyModel().to("cuda")', "tensor_to_device", "replace", True, 'model = ToyModel().to("npu")',
        "cuda device string"),
      C('inp = torch.rand(20, 10, device="cuda")', "tensor_to_device", "replace", True,
        'inp = torch.rand(20, 10, device="npu")', "cuda device string"),
  ])

E("ex_ddp_multinode", "distributed/ddp-tutorial-series/multinode.py", "explicit_replacement",
  "pytorch/examples distributed/ddp-tutorial-series/multinode.py (torchrun DDP with snapshots)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))', "torch_cuda_api", "replace", True,
        'torch.npu.set_device(int(os.environ["LOCAL_RANK"]))', "torch.cuda.set_device fails on NPU"),
      C('init_process_group(backend="nccl")', "dist_backend", "replace", True, 'init_process_group(backend="hccl")',
        "NCCL backend unavailable on Ascend"),
      C("self.model = model.to(self.local_rank)", "tensor_to_device", "replace", False,
        'self.model = model.to(f"npu:{self.local_rank}")',
        "bare int device index: recent torch maps it to the registered PrivateUse1 (npu) device, older torch to "
        "CUDA (transfer_to_npu rewrites int .to() args); version-dependent, unconfirmed"),
      C('loc = f"cuda:{self.local_rank}"', "device_type", "replace", True, 'loc = f"npu:{self.local_rank}"',
        "map_location names a CUDA device; loading the snapshot fails on NPU"),
      C("source = source.to(self.local_rank)", "tensor_to_device", "replace", False,
        'source = source.to(f"npu:{self.local_rank}")', "bare int device index; version-dependent (see above)"),
      C("targets = targets.to(self.local_rank)", "tensor_to_device", "replace", False,
        'targets = targets.to(f"npu:{self.local_rank}")', "bare int device index; version-dependent (see above)"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "without a CUDA device the DataLoader may skip pinning (older torch) - host-to-device copy speed only"),
  ])

E("ex_fsdp_env", "distributed/FSDP/utils/environment.py", "explicit_replacement",
  "pytorch/examples distributed/FSDP/utils/environment.py (bfloat16 readiness check)",
  [
      C("=import torch.cuda.nccl as nccl", "dist_backend", "removal", False, None,
        "NCCL version probe is meaningless on Ascend once the check below is rewritten"),
      C("=torch.version.cuda", "device_capability_check", "replace", True, "torch.npu.is_available()",
        "torch.version.cuda is None on torch_npu hosts, so bf16 is silently disabled and FSDP trains in FP32"),
      C("and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        "and torch.npu.is_bf16_supported()", "CUDA bf16 query fails/false on NPU"),
      C("and packaging.version.parse(torch.version.cuda).release >= (11, 0)", "device_capability_check", "removal",
        True, None, "parses the CUDA toolkit version (None on NPU)"),
      C("and dist.is_nccl_available()", "dist_backend", "replace", True, "and dist.is_hccl_available()",
        "NCCL is not built into torch on Ascend hosts; torch_npu provides is_hccl_available"),
      C("and nccl.version() >= (2, 10)", "dist_backend", "removal", True, None,
        "calls into the NCCL library, absent on Ascend"),
  ])

E("ex_fsdp_train_utils", "distributed/FSDP/utils/train_utils.py", "explicit_replacement",
  "pytorch/examples distributed/FSDP/utils/train_utils.py (setup, train/validation loops)",
  [
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "NCCL backend unavailable on Ascend"),
      C("fsdp_loss = torch.zeros(2).to(local_rank)", "tensor_to_device", "replace", False,
        'fsdp_loss = torch.zeros(2).to(f"npu:{local_rank}")',
        "bare int device index; maps to npu on recent torch with torch_npu registered, CUDA on older torch "
        "(unconfirmed, version-dependent)"),
      C("batch[key] = batch[key].to(local_rank)", "tensor_to_device", "replace", False,
        'batch[key] = batch[key].to(f"npu:{local_rank}")', "bare int device index; version-dependent"),
      C("fsdp_loss = torch.zeros(3).to(local_rank)", "tensor_to_device", "replace", False,
        'fsdp_loss = torch.zeros(3).to(f"npu:{local_rank}")', "bare int device index; version-dependent"),
      C("batch = {key: value.to(local_rank) for key, value in batch.items()}", "tensor_to_device", "replace", False,
        'batch = {key: value.to(f"npu:{local_rank}") for key, value in batch.items()}',
        "bare int device index; version-dependent"),
  ])

E("ex_fsdp_t5", "distributed/FSDP/T5_training.py", "explicit_replacement",
  "pytorch/examples distributed/FSDP/T5_training.py (FSDP1 T5 fine-tuning)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C("'pin_memory': True,", "pin_memory", "replace", False, "'pin_memory': True, 'pin_memory_device': 'npu',",
        "pinning may be skipped without CUDA on older torch; copy speed only"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device fails on NPU"),
      C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
        "device_id=torch.npu.current_device(),",
        "FSDP device_id from torch.cuda fails on NPU (an int from torch.npu is accepted)"),
      C("format_metrics_to_gb(torch.cuda.memory_allocated())", "torch_cuda_api", "replace", True,
        "format_metrics_to_gb(torch.npu.memory_allocated())",
        "CUDA allocator stats report 0 (or fail) on NPU, so the memory tracking is wrong"),
      C("format_metrics_to_gb(torch.cuda.memory_reserved())", "torch_cuda_api", "replace", True,
        "format_metrics_to_gb(torch.npu.memory_reserved())", "same as above for reserved memory"),
  ])

E("tune_device", "torchtune/utils/_device.py", "device_branch_or_abstraction",
  "torchtune utils/_device.py (get_device, device inference/validation, DeviceSupport)",
  [
      C('device = torch.device(type="cuda", index=local_rank)', "device_type", "replace", True,
        "device = torch.device(type=device.type, index=local_rank)",
        "once NPU devices are routed through _setup_device, the inferred index must keep the npu type"),
      C("if device.index >= torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if device.index >= getattr(torch, device.type).device_count():",
        "torch.cuda.device_count() is 0 on NPU, so every rank would raise"),
      C("=torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "getattr(torch, device.type).set_device(device)", "torch.cuda.set_device fails for an npu device"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'elif torch.npu.is_available(): device = "npu"',
        "without an NPU branch the default device silently falls back to CPU"),
      C('if device.type == "cuda" and local_rank is not None:', "device_type", "replace", False,
        'if device.type in ("cuda", "npu") and local_rank is not None:',
        "validation only: the index/rank consistency check is skipped for npu"),
      C('=if device.type == "cuda":', "device_type", "replace", True, 'if device.type in ("cuda", "npu"):',
        "npu devices would skip set_device/index inference, leaving every rank on npu:0"),
      C('CUDA = ("cuda", "GPU", "nccl")', "dist_backend", "npu_only_addition", True, 'NPU = ("npu", "NPU", "hccl")',
        "get_device_support() raises 'Unknown device type' once the device type resolves to npu"),
  ])

E("tune_distributed", "torchtune/training/_distributed.py", "device_branch_or_abstraction",
  "torchtune training/_distributed.py (init_distributed, FSDP2 shard_model, full<->sharded state dicts)",
  [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "backend-string comparison is not rewritten by any tool; with hccl the CPU tensor is broadcast "
        "without being moved to the device first"),
      C('tensor = tensor.to(get_device("cuda"))', "device_type", "replace", True,
        'tensor = tensor.to(get_device("npu"))', "cuda device string"),
      C("torch.cuda.device_count() if torch.cuda.is_available() else 1", "torch_cuda_api", "replace", False,
        "torch.npu.device_count() if torch.npu.is_available() else 1",
        "only sizes intra-op CPU threads; on NPU every rank would claim all cores (oversubscription, perf only)"),
      C('assert device is not None and device.type == "cuda", (', "device_type", "replace", True,
        'assert device is not None and device.type in ("cuda", "npu"), (',
        "CPU-offload path asserts a cuda device and fails for npu"),
  ])

E("tune_memory", "torchtune/training/memory.py", "explicit_replacement",
  "torchtune training/memory.py (cleanup_before_training, optimizer-in-backward, memory stats)",
  [
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; the NPU cache is simply not released before training"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "CUDA lazy init fails on an NPU host"),
      C('peak_memory_active = torch.cuda.memory_stats().get("active_bytes.all.peak", 0) / (', "torch_cuda_api",
        "replace", True, 'peak_memory_active = torch.npu.memory_stats().get("active_bytes.all.peak", 0) / (',
        "CUDA stats return {} so the reported peak is silently 0"),
      C("peak_mem_alloc = torch.cuda.max_memory_allocated(device) / (1024**3)", "torch_cuda_api", "replace", True,
        "peak_mem_alloc = torch.npu.max_memory_allocated(device) / (1024**3)",
        "torch.cuda API rejects an npu device"),
      C("peak_mem_reserved = torch.cuda.max_memory_reserved(device) / (1024**3)", "torch_cuda_api", "replace", True,
        "peak_mem_reserved = torch.npu.max_memory_reserved(device) / (1024**3)",
        "torch.cuda API rejects an npu device"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "torch.cuda API rejects an npu device"),
  ])

E("tune_recipe", "recipes/full_finetune_distributed.py", "device_branch_or_abstraction",
  "torchtune recipes/full_finetune_distributed.py (FSDP2 full finetune recipe)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "recipe entry point; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('if self._log_peak_memory_stats and self._device.type != "cuda":', "device_type", "replace", False,
        'if self._log_peak_memory_stats and self._device.type not in ("cuda", "npu"):',
        "peak-memory logging is silently switched off on NPU (logging only)"),
      C("torch.cuda.memory._record_memory_history()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.memory._record_memory_history()",
        "CUDA allocator history fails on NPU when profile_memory is enabled"),
      C("torch.cuda.memory._record_memory_history(enabled=None)", "torch_cuda_api", "replace", True,
        "torch_npu.npu.memory._record_memory_history(enabled=None)", "same, when stopping the recording"),
      C('init_process_group(backend="gloo" if cfg.device == "cpu" else "nccl")', "dist_backend", "replace", True,
        'init_process_group(backend="gloo" if cfg.device == "cpu" else "hccl")',
        "NCCL backend unavailable on Ascend"),
  ])

E("tune_yaml", "recipes/configs/llama3_1/8B_full.yaml", "explicit_replacement",
  "torchtune recipes/configs/llama3_1/8B_full.yaml (full finetune config)",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "recipe resolves the training device from this key"),
  ])

E("tut_pipelining", "intermediate_source/pipelining_tutorial.py", "explicit_replacement",
  "PyTorch tutorial: Introduction to Distributed Pipeline Parallelism (torch.distributed.pipelining)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('device = torch.device(f"cuda:{rank}") if torch.cuda.is_available() else torch.device("cpu")',
        "device_type", "replace", True,
        'device = torch.device(f"npu:{rank}") if torch.npu.is_available() else torch.device("cpu")',
        "on NPU the stages silently run on CPU over gloo"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events fail on NPU"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events fail on NPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize fails on NPU"),
  ])

E("tut_dcp", "recipes_source/distributed_checkpoint_recipe/dcp_fsdp2_example.py", "explicit_replacement",
  "PyTorch recipe: Getting Started with Distributed Checkpoint (DCP) with FSDP2",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('backend="cuda:nccl,cpu:gloo",', "dist_backend", "replace", True, 'backend="npu:hccl,cpu:gloo",',
        "device-to-backend string must name npu and hccl"),
      C('device_id=torch.device(f"cuda:{rank}"),', "device_type", "replace", True,
        'device_id=torch.device(f"npu:{rank}"),', "eager-init device for the process group"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
        "torch.cuda.set_device fails on NPU"),
      C("model = ToyModel().to(rank)", "tensor_to_device", "replace", False, 'model = ToyModel().to(f"npu:{rank}")',
        "bare int device index; maps to npu on recent torch with torch_npu registered, CUDA on older torch "
        "(unconfirmed, version-dependent)"),
      C('model(torch.rand(8, 16, device="cuda")).sum().backward()', "tensor_to_device", "replace", True,
        'model(torch.rand(8, 16, device="npu")).sum().backward()', "cuda device string"),
      C("batch = torch.rand(8, 16).cuda(rank)", "tensor_to_device", "replace", True,
        "batch = torch.rand(8, 16).npu(rank)", ".cuda() fails on NPU"),
      C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = torch.npu.device_count()", "returns 0 on NPU, so mp.spawn starts no workers"),
  ])

E("tut_dtensor", "distributed/tensor/dtensor_walkthrough.py", "explicit_replacement",
  "DTensor walkthrough in the style of the PyTorch DTensor README/tutorial (placements, redistribute, distribute_module)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "entry script; autoload since torch_npu 2.5.1, explicit import recommended"),
      C('local = torch.ones(4, 4, device="cuda") * (dist.get_rank() + 1)', "tensor_to_device", "replace", True,
        'local = torch.ones(4, 4, device="npu") * (dist.get_rank() + 1)', "cuda device string"),
      C('mesh_2d = init_device_mesh("cuda", (2, world_size // 2), mesh_dim_names=("replicate", "shard"))',
        "device_type", "replace", True,
        'mesh_2d = init_device_mesh("npu", (2, world_size // 2), mesh_dim_names=("replicate", "shard"))',
        "cuda device mesh on an NPU host"),
      C('parser.add_argument("--device", default="cuda", help="device type for the mesh (cuda or cpu)")',
        "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help="device type for the mesh (npu or cpu)")',
        "default device type feeds init_device_mesh and torch.device"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "runs for every non-CPU device type; torch.cuda fails on NPU"),
  ])

E("bench_async_tp", "benchmarks/async_tp_bench.py", "explicit_replacement",
  "async-TP micro-benchmark in the style of torchtitan/PyTorch benchmarks (symmetric memory + Inductor micro-pipeline)",
  [
      C('os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")', "env_var", "replace", False,
        'os.environ.setdefault("TORCH_HCCL_AVOID_RECORD_STREAMS", "1")',
        "memory-only knob, ignored by HCCL; HCCL counterpart unconfirmed"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "HCCL_ASYNC_ERROR_HANDLING already defaults to 1, so this is cosmetic"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "torch.cuda.set_device fails on NPU"),
      C('dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", device_id=torch.device("npu", local_rank))',
        "NCCL backend and cuda device_id unavailable on Ascend"),
      C('mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("tp",))', "device_type", "replace", True,
        'mesh = init_device_mesh("npu", (world_size,), mesh_dim_names=("tp",))', "cuda device mesh on an NPU host"),
      C('model = FFN(args.dim, args.hidden).to(device="cuda", dtype=torch.bfloat16)', "tensor_to_device", "replace",
        True, 'model = FFN(args.dim, args.hidden).to(device="npu", dtype=torch.bfloat16)', "cuda device string"),
      C("inductor_config._micro_pipeline_tp = True", "compile_mode", "replace", False,
        "inductor_config._micro_pipeline_tp = False  # async TP not available on NPU",
        "micro-pipelined TP relies on CUDA symmetric memory; NPU support unconfirmed"),
      C("enable_symm_mem_for_group(mesh.get_group().group_name)", "unsupported_op_workaround", "removal", False, None,
        "symmetric memory is CUDA-only upstream as far as known (unconfirmed for torch_npu); the async variant "
        "cannot be benchmarked on NPU"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize fails on NPU"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events fail on NPU"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events fail on NPU"),
      C('print(f"GPU: {torch.cuda.get_device_name()} x{world}, capability {torch.cuda.get_device_capability()}")',
        "torch_cuda_api", "replace", True, 'print(f"NPU: {torch.npu.get_device_name()} x{world}")',
        "torch.cuda queries fail on NPU; NPU has no CUDA compute capability"),
      C("if torch.cuda.get_device_capability() < (9, 0):", "device_capability_check", "removal", True, None,
        "SM-version gate: fails on NPU (torch_npu get_device_capability returns None unless "
        "TORCH_NPU_DEVICE_CAPABILITY is set) and has no meaning there"),
      C('args.batch, args.seq // world, args.dim, device="cuda", dtype=torch.bfloat16, requires_grad=True',
        "tensor_to_device", "replace", True,
        'args.batch, args.seq // world, args.dim, device="npu", dtype=torch.bfloat16, requires_grad=True',
        "cuda device string"),
      C("peak = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated() / 2**30", "CUDA allocator stats are wrong/fail on NPU"),
      C('p.add_argument("--compile-mode", default="max-autotune-no-cudagraphs")', "compile_mode", "replace", False,
        'p.add_argument("--compile-mode", default="default")',
        "max-autotune relies on Triton GEMM autotuning for CUDA; behaviour with torch_npu's Inductor backend "
        "unconfirmed"),
  ])

E("titan_requirements", "requirements.txt", "explicit_replacement",
  "torchtitan requirements.txt (with a CUDA wheel index pinned)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu124", "custom_cuda_extension", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend docs install the CPU torch wheel on x86 (plain PyPI on aarch64); CUDA wheels drag in nvidia-* "
        "libraries. Whether they actually break torch_npu is unconfirmed"),
      C("=torch==2.6.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.6.0.post5",
        "torch_npu wheel matching torch 2.6.0 (v2.6.0-7.3.0 line, CANN 8.5.0)"),
      C("=torchao==0.9.0", "triton_kernel_tuning", "npu_only_addition", True, "triton-ascend==3.2.0",
        "torchtitan/models/norms.py imports triton at module level; CUDA torch wheels brought triton implicitly, "
        "the CPU wheel does not, so triton-ascend must be installed (pairs with CANN 8.5.0)"),
      C("=nvidia-ml-py", "custom_cuda_extension", "removal", False, None,
        "NVML bindings have no NPU counterpart; unused on Ascend"),
  ])

E("titan_dockerfile", "Dockerfile", "explicit_replacement",
  "torchtitan-style training Dockerfile on an NGC PyTorch base image",
  [
      C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.12-py3", "custom_cuda_extension", "replace", True,
        "ARG BASE_IMAGE=ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11",
        "NGC image carries CUDA/NCCL, not CANN; torch_npu needs the CANN toolkit in the image (image tag illustrative)"),
      C("NCCL_DEBUG=WARN \\", "env_var", "replace", False, "ASCEND_GLOBAL_LOG_LEVEL=2 \\",
        "NCCL logging knob is ignored on Ascend (debug only)"),
      C("TORCH_NCCL_ASYNC_ERROR_HANDLING=1 \\", "env_var", "replace", False, "HCCL_ASYNC_ERROR_HANDLING=1 \\",
        "HCCL watchdog variable; already defaults to 1"),
      C("CUDA_DEVICE_MAX_CONNECTIONS=1 \\", "env_var", "removal", False, None,
        "CUDA hardware-queue knob, no effect on NPU"),
      C("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning; CUDA variable ignored on NPU"),
      C("pip install --no-cache-dir --pre torch --index-url https://download.pytorch.org/whl/nightly/cu126 && \\",
        "import_torch_npu", "replace", True,
        "pip install --no-cache-dir torch==2.6.0 torch-npu==2.6.0.post5 --extra-index-url https://download.pytorch.org/whl/cpu && \\",
        "torch_npu pins an exact torch release; a CUDA nightly cannot be paired with any torch_npu wheel"),
  ])

E("tune_env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for torchtune on CUDA (pytorch + nvidia channels)",
  [
      C("=- nvidia", "custom_cuda_extension", "removal", False, None,
        "NVIDIA channel only supplies CUDA runtime packages"),
      C("=- pytorch-cuda=12.4", "custom_cuda_extension", "replace", False, "- cpuonly",
        "CUDA runtime metapackage; Ascend uses the CPU torch build plus torch_npu (install may also fail on "
        "aarch64 Ascend hosts - unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.5.1.post1",
        "torch_npu wheel for torch 2.5.1 (v2.5.1-7.1.0, CANN 8.2.RC1)"),
      C("=- bitsandbytes>=0.43.0", "custom_cuda_extension", "removal", False, None,
        "CUDA-kernel package; NPU support exists only for NF4 in the multi-backend branch and the full-finetune "
        "recipes do not use it"),
  ])
