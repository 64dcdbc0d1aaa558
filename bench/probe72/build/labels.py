"""Labels for probe72 (hand-written synthetic upstream files; see ../README.md).

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
DEV = "device_branch_or_abstraction"   # the brief's "device_agnostic" style (the shared builder's name for it)
EXP = "explicit_replacement"
T2N = "transfer_to_npu"

E("dschat_sft_main", "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py", DEV,
  "microsoft/DeepSpeedExamples DeepSpeed-Chat step1 SFT main.py (ZeRO-3 + CPU offload, FusedAdam/DeepSpeedCPUAdam)", [
    C('device = torch.device("cuda")', "device_type", R, True,
      'device = torch.device(get_accelerator().device_name())',
      "single-process path: batches are moved to a CUDA device that does not exist on an NPU host"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "get_accelerator().set_device(args.local_rank)",
      "torch.cuda.set_device needs a CUDA build; every rank must pin its own NPU"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", R, True,
      "device = torch.device(get_accelerator().device_name(), args.local_rank)",
      "to_device(batch, device) would target cuda:N"),
    C("AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam", "fused_optimizer", R, False,
      "AdamOptimizer = DeepSpeedCPUAdam if args.offload else torch_npu.optim.NpuFusedAdamW",
      "FusedAdam is a CUDA op-builder kernel; DeepSpeed's NPU accelerator may build its own (unconfirmed), "
      "the safe port is a torch_npu fused optimizer; DeepSpeedCPUAdam (offload path) stays"),
])

E("dschat_run_sh",
  "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts/llama2/run_llama2_13b_zero3_offload.sh",
  DEV, "DeepSpeed-Chat training_scripts run_*.sh (deepspeed launcher, ZeRO-3 offload, NCCL/allocator env)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "device selection on Ascend is ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not read by the NPU runtime "
      "(the knowledge documents only the Ascend variable)"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL log level has no effect on HCCL; cosmetic"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None,
      "NCCL transport tuning, ignored by HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None,
      "NVLink P2P level, ignored by HCCL"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512",
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; without it fragmentation may OOM earlier under "
      "ZeRO-3 offload, but nothing fails"),
    C("GPUS_PER_NODE=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      "GPUS_PER_NODE=$(npu-smi info -l | awk '/Total Count/{print $NF}')",
      "no nvidia-smi on an Ascend host: GPUS_PER_NODE becomes 0 and the launcher gets --num_gpus 0"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", R, False,
      "npu-smi info >> $OUTPUT/training.log",
      "post-run memory dump only; fails harmlessly (exit status is preserved)"),
])

E("llama_recipes_finetuning", "src/llama_recipes/finetuning.py", DEV,
  "meta-llama/llama-recipes finetuning.py (FSDP + CPUOffload, low_cpu_fsdp meta init, xpu/cuda branches)", [
    C("from accelerate.utils import is_xpu_available", "import_torch_npu", A, True,
      "from accelerate.utils import is_npu_available, is_xpu_available",
      "the NPU branches below need an is_npu_available() probe (which also loads torch_npu)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", B, True,
      "elif is_npu_available(): torch.npu.set_device(local_rank)",
      "torch.cuda.is_available() is False on an NPU host, so no rank pins its device and all ranks pile onto npu:0"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", B, True,
      "elif is_npu_available(): device_id = torch.npu.current_device()",
      "device_id stays the int 0 on NPU: FSDP moves every rank's shard to device 0 (an int device id is read as CUDA)"),
    C('device=torch.device("cuda"), recurse=False', "device_type", R, True,
      'device=torch.device("npu"), recurse=False',
      "low_cpu_fsdp: non-zero ranks materialise the meta model on a CUDA device"),
    C('model.to("cuda")', "tensor_to_device", B, True,
      'elif is_npu_available(): model.to("npu:0")',
      "single-device path: the model silently stays on the CPU on an NPU host"),
])

E("llama_recipes_train_utils", "src/llama_recipes/utils/train_utils.py", DEV,
  "meta-llama/llama-recipes utils/train_utils.py (FSDP train loop, ShardedGradScaler, bf16 policy check, profiler)", [
    C("import torch.cuda.nccl as nccl", "torch_cuda_api", X, False, None,
      "only feeds the NCCL-version clause of the bf16 check; dropped once that check is rewritten"),
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", R, True,
      "torch_npu.profiler.ProfilerActivity.NPU,",
      "--use_profiler: the trace silently has no device activity; NPU profiling goes through torch_npu.profiler"),
    C("scaler = ShardedGradScaler()", "amp", R, False, 'scaler = ShardedGradScaler(device="npu")',
      "unconfirmed: ShardedGradScaler defaults to device='cuda' and would disable itself without CUDA (fp16 + FSDP only)"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler is inactive for NPU tensors: fp16 trains without loss scaling"),
    C("autocast = torch.cuda.amp.autocast if train_config.use_fp16 else nullcontext", "amp", R, True,
      "autocast = torch.npu.amp.autocast if train_config.use_fp16 else nullcontext",
      "CUDA autocast does not cast NPU ops: the fp16 run is silently fp32"),
    C("batch[key] = batch[key].to(local_rank)", "tensor_to_device", R, True,
      'batch[key] = batch[key].to(f"npu:{local_rank}")',
      "Tensor.to(int) means a CUDA ordinal (transfer_to_npu rewrites exactly this case)"),
    C("elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available(): batch[key] = batch[key].to("npu:0")',
      "non-FSDP path: on NPU the batch (and the model, see finetuning.py) silently stays on the CPU"),
    C("elif torch.cuda.device_count() > 1 and train_config.enable_fsdp:", "torch_cuda_api", B, True,
      "elif torch.npu.device_count() > 1 and train_config.enable_fsdp:",
      "device_count() is 0 without CUDA: the epoch loss is never all-reduced but still divided by world_size"),
    C("batch = {k: v.to(local_rank) for k, v in batch.items()}", "tensor_to_device", R, True,
      'batch = {k: v.to(f"npu:{local_rank}") for k, v in batch.items()}', "int ordinal = CUDA device"),
    C('batch = {k: v.to("cuda:0") for k, v in batch.items()}', "tensor_to_device", R, True,
      'batch = {k: v.to("npu:0") for k, v in batch.items()}', "else-branch is taken on NPU and fails"),
    C("=if torch.cuda.device_count() > 1 and train_config.enable_fsdp:", "torch_cuda_api", R, True,
      "if torch.npu.device_count() > 1 and train_config.enable_fsdp:",
      "eval loss is not reduced across ranks on NPU, so best_val_loss / checkpoint choice is wrong"),
    C('dist.init_process_group("nccl")', "dist_backend", R, True, 'dist.init_process_group("hccl")',
      "no NCCL on Ascend"),
    C('os.environ["NCCL_ASYNC_ERROR_HANDLING"] = str(1)', "env_var", R, False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = str(1)',
      "watchdog setting for NCCL only; HCCL's counterpart is HCCL_ASYNC_ERROR_HANDLING (default 1 per MindCluster doc)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; memory is just not released between phases"),
    C("=torch.version.cuda", "device_capability_check", B, True,
      "(torch.npu.is_available() and torch.npu.is_bf16_supported()) or",
      "torch.version.cuda is None on a torch_npu install: the bf16 check is False, FSDP silently runs without "
      "mixed precision (fp32, ~2x activation memory) and prints 'bFloat16 support not present'"),
])

E("torchtune_act_offload", "torchtune/training/_activation_offloading.py", DEV,
  "pytorch/torchtune training/_activation_offloading.py (saved_tensors_hooks CPU offload on a side stream)", [
    C("self.s0 = torch.cuda.default_stream()", "torch_cuda_api", R, True,
      "self.s0 = torch.npu.default_stream()", "constructor runs unconditionally; needs a CUDA build"),
    C("self.s1 = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "self.s1 = torch.npu.Stream()", "comms stream for the offload copies (use_streams=True by default)"),
    C("activation.is_cuda", "device_type", R, True, "activation.is_npu",
      "is_cuda is False for NPU activations: nothing is ever offloaded, the memory saving silently disappears"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, False, "with torch.npu.stream(stream):",
      "only reached once the is_cuda gate is ported"),
    C('gpu_tensor = maybe_gpu_tensor.to("cuda", non_blocking=True)', "tensor_to_device", R, False,
      'gpu_tensor = maybe_gpu_tensor.to("npu", non_blocking=True)', "only reached for tensors that were offloaded"),
    C("with torch.cuda.stream(self.s1):", "torch_cuda_api", R, False, "with torch.npu.stream(self.s1):",
      "only reached for tensors that were offloaded"),
    C('restored = maybe_gpu_tensor.to("cuda", non_blocking=True)', "tensor_to_device", R, False,
      'restored = maybe_gpu_tensor.to("npu", non_blocking=True)', "only reached for tensors that were offloaded"),
])

E("torchtitan_parallelize", "torchtitan/parallelisms/parallelize_llama.py", DEV,
  "pytorch/torchtitan parallelisms/parallelize_llama.py (FSDP2 + CPUOffloadPolicy, selective op AC, float8 gate)", [
    C("torch.ops.aten._scaled_dot_product_flash_attention.default,", "attention_kernel", A, False,
      "torch.ops.npu.npu_fusion_attention.default,",
      "op-level SAC saves SDPA's CUDA flash/efficient kernels by aten op name; on NPU SDPA lowers to the NPU "
      "fused-attention op, which is not in the list and is recomputed in backward (perf only; op name unconfirmed)"),
])

E("torchtitan_train", "train.py", DEV,
  "pytorch/torchtitan train.py (FSDP2/HSDP + CPU offload, meta init + to_empty, MFU logging)", [
    C('os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "3"', "env_var", R, False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"',
      "NCCL watchdog mode; HCCL has its own switch (flight-recorder variables around it are inert and left)"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', "no NCCL on Ascend"),
    C('backend = "cuda:nccl,cpu:gloo"', "dist_backend", R, True, 'backend = "npu:hccl,cpu:gloo"',
      "CPU-offload run: the device half of the per-device backend string must name npu/hccl "
      "(transfer_to_npu rewrites exactly this spelling)"),
    C("device = torch.device(f\"cuda:{int(os.environ['LOCAL_RANK'])}\")", "device_type", R, True,
      "device = torch.device(f\"npu:{int(os.environ['LOCAL_RANK'])}\")", "cuda device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "needs a CUDA build"),
    C('world_mesh = parallel_dims.build_mesh(device_type="cuda")', "device_type", R, True,
      'world_mesh = parallel_dims.build_mesh(device_type="npu")',
      "init_device_mesh('cuda', ...) on an NPU host: FSDP2 shards and collectives would target CUDA"),
    C('buffer_device = "cuda"', "device_type", R, True, 'buffer_device = "npu"',
      "CPU-offload path: buffers (freqs_cis) still live on the accelerator"),
    C('init_device = "cuda"', "device_type", R, True, 'init_device = "npu"',
      "to_empty(device='cuda') materialises the sharded model on CUDA"),
    C("input_ids = input_ids.cuda()", "tensor_to_device", R, True, "input_ids = input_ids.npu()", ".cuda()"),
    C("labels = labels.cuda()", "tensor_to_device", R, True, "labels = labels.npu()", ".cuda()"),
])

E("torchtitan_metrics", "torchtitan/metrics.py", DEV,
  "pytorch/torchtitan metrics.py (GPUMemoryMonitor / DeviceMemoryMonitor, peak-FLOPS table for MFU)", [
    C('def __init__(self, device: str = "cuda:0"):', "device_type", R, False,
      'def __init__(self, device: str = "npu:0"):', "default only; the caller below passes the device"),
    C("self.device_name = torch.cuda.get_device_name(self.device)", "torch_cuda_api", R, True,
      "self.device_name = torch.npu.get_device_name(self.device)", "needs a CUDA build"),
    C("self.device_index = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "self.device_index = torch.npu.current_device()", "needs a CUDA build"),
    C("self.device_capacity = torch.cuda.get_device_properties(", "torch_cuda_api", R, True,
      "self.device_capacity = torch.npu.get_device_properties(",
      "total_memory is one of the few properties the NPU version fills in"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "needs a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("cuda_info = torch.cuda.memory_stats(self.device)", "torch_cuda_api", R, True,
      "cuda_info = torch.npu.memory_stats(self.device)",
      "CUDA memory_stats returns {} when CUDA is not initialised: the key lookups below raise KeyError"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(self.device)", "needs a CUDA build"),
    C('device_memory_monitor = DeviceMemoryMonitor("cuda")', "device_type", R, True,
      'device_memory_monitor = DeviceMemoryMonitor("npu")', "cuda device string"),
    C("else:  # for other GPU types, assume A100", "device_capability_check", B, False,
      'elif "Ascend910" in device_name: return <vendor bf16 peak>',
      "MFU is computed against the A100 peak on an NPU; metric only (no Ascend peak figure in the knowledge)"),
])

E("torchtitan_profiling", "torchtitan/profiling.py", DEV,
  "pytorch/torchtitan profiling.py (Kineto traces + CUDA caching-allocator memory snapshots)", [
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", R, True,
      "torch_npu.profiler.ProfilerActivity.NPU,",
      "the trace silently records no device activity; NPU kernels are profiled through torch_npu.profiler"),
    C("=torch.cuda.memory._record_memory_history(", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(",
      "CUDA allocator hook; transfer_to_npu maps it to the NPU allocator's version"),
    C("pickle.dump(torch.cuda.memory._snapshot(), output)", "torch_cuda_api", R, True,
      "pickle.dump(torch_npu.npu.memory._snapshot(), output)", "CUDA allocator snapshot"),
    C("torch.cuda.memory._record_memory_history(enabled=None)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(enabled=None)", "CUDA allocator hook"),
])

E("colossal_llama_train", "applications/Colossal-LLaMA/train.py", DEV,
  "hpcaitech/ColossalAI applications/Colossal-LLaMA train.py (Gemini / LowLevelZero / HybridParallel plugins, HybridAdam)", [
    C("from colossal_llama.utils.flash_attention_patch import replace_with_flash_attention", "attention_kernel", R, True,
      "from colossal_llama.utils.npu_attention_patch import replace_with_npu_attention",
      "the patch module imports flash_attn at import time, so the script dies on an NPU host even without --use_flash_attn"),
    C("replace_with_flash_attention(model=model)", "attention_kernel", R, True,
      "replace_with_npu_attention(model=model)  # torch_npu.npu_fusion_attention",
      "--use_flash_attn with the ddp / zero2 plugins monkey-patches LLaMA attention with flash-attn kernels"),
    C("optimizer = HybridAdam(", "fused_optimizer", R, False,
      "optimizer = HybridAdam(  # after porting its fused kernel loader, or torch_npu.optim.NpuFusedAdamW",
      "HybridAdam's device half is a CUDA multi-tensor kernel (see colossal_hybrid_adam); the call site changes "
      "only if the library is not ported"),
])

E("colossal_op_builder", "op_builder/builder.py", DEV,
  "hpcaitech/ColossalAI op_builder/builder.py + utils.py (DeepSpeed-derived JIT/AOT CUDA kernel builder)", [
    C('max_arch = "".join(str(i) for i in torch.cuda.get_device_capability())', "device_capability_check", R, False,
      "max_arch = ...  # CUDA builds only",
      "only reached when compiling CUDA kernels (nvcc_flags); kept for GPU builds in a branching port"),
    C('if self.ext_type == "cuda":', "custom_cuda_extension", B, True,
      'if self.ext_type == "npu": return self._load_npu_op()  # NpuExtension / torch_npu ops',
      "on NPU the JIT path runs the CUDA environment check, which raises (CUDA_HOME is None, "
      "torch.cuda.is_available() is False): every kernel that is not prebuilt fails to load"),
    C("torch_cuda_version = torch.version.cuda", "custom_cuda_extension", R, False,
      "torch_npu_version = torch_npu.__version__",
      "cache folder is named ..._cuNone on NPU; cosmetic"),
    C("op_module = load(", "custom_cuda_extension", R, True,
      "op_module = self.import_npu_op()  # prebuilt with torch_npu.utils.cpp_extension.NpuExtension",
      "torch.utils.cpp_extension.load with extra_cuda_cflags: nvcc JIT build; cpp_extension.load is marked "
      "unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list"),
    C("return CUDAExtension(", "custom_cuda_extension", B, True,
      'if self.ext_type == "npu": return NpuExtension(name=self.prebuilt_import_path, sources=...)',
      "AOT build for setup.py: CUDAExtension needs nvcc; the NPU form is torch_npu.utils.cpp_extension.NpuExtension"),
])

E("colossal_mha", "colossalai/kernel/cuda_native/mha/mha.py", DEV,
  "hpcaitech/ColossalAI kernel/cuda_native/mha (ColoAttention over flash-attn 2 / xformers, pre-NPU era)", [
    C("from colossalai.utils.device import get_current_device", "import_torch_npu", A, True,
      "try: import torch_npu; HAS_NPU_FLASH_ATTN = hasattr(torch_npu, 'npu_fusion_attention') except ImportError: ...",
      "an NPU attention backend needs its own availability probe next to the flash-attn / xformers ones"),
    C("if not HAS_MEM_EFF_ATTN and not HAS_FLASH_ATTN:", "attention_kernel", B, True,
      "if not (HAS_MEM_EFF_ATTN or HAS_FLASH_ATTN or HAS_NPU_FLASH_ATTN):",
      "both guarded imports fail on Ascend (flash-attn / xformers have no NPU build), so constructing "
      "ColoAttention raises: the guarded imports have no working fallback"),
    C("attn = mem_eff_attention", "attention_kernel", B, True,
      "attn = npu_flash_attention if HAS_NPU_FLASH_ATTN else mem_eff_attention  # torch_npu.npu_fusion_attention",
      "dispatch point: varlen (padded) inputs map to npu_fusion_attention input_layout='TND' with cumulative seqlens"),
])

E("colossal_hybrid_adam", "colossalai/nn/optimizer/hybrid_adam.py", DEV,
  "hpcaitech/ColossalAI nn/optimizer/hybrid_adam.py (CPU Adam for offloaded shards + CUDA multi-tensor Adam)", [
    C("fused_optim = FusedOptimBuilder().load()", "custom_cuda_extension", B, True,
      "if get_accelerator().name == \"cuda\": fused_optim = FusedOptimBuilder().load()",
      "builds/loads the CUDA multi_tensor_adam extension in __init__: the optimizer cannot be constructed on NPU"),
    C("self._dummy_overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", R, True,
      "self._dummy_overflow_buf = torch.tensor([0], dtype=torch.int, device=get_current_device())",
      "legacy torch.cuda.IntTensor constructor needs a CUDA build"),
    C('elif target_device.type == "cuda":', "device_type", B, True,
      'elif target_device.type == "npu": self.torch_adam_update(...)  # or torch_npu fused Adam',
      "device-resident (non-offloaded) shards on an NPU fall through to `raise RuntimeError`; only the CPU "
      "(offloaded) half of the hybrid optimizer works unchanged"),
])

E("colossal_benchmark", "examples/language/llama/benchmark.py", DEV,
  "hpcaitech/ColossalAI examples/language/llama benchmark.py (Gemini offload fractions, FSDP cpu offload, 3d_cpu)", [
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", R, True,
      "activities=[ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "--profile: the trace silently records no NPU activity"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "get_accelerator().synchronize()",
      "step timer start: needs a CUDA build (the step-end twin already uses the accelerator API)"),
    C("torch.cuda.manual_seed(42)", "torch_cuda_api", R, False, "get_accelerator().manual_seed(42)",
      "lazily queued and never applied without CUDA; launch_from_torch(seed=42) already seeds every device"),
    C("optimizer = HybridAdam(model.parameters())", "fused_optimizer", R, False,
      "optimizer = HybridAdam(model.parameters())  # once its CUDA kernel loader is ported",
      "see colossal_hybrid_adam: fails in __init__ unless the library is ported"),
    C('f"Booster init max CUDA memory: {torch.cuda.max_memory_allocated()/1024**2:.2f} MB"', "torch_cuda_api", R, True,
      'f"Booster init max device memory: {get_accelerator().max_memory_allocated()/1024**2:.2f} MB"',
      "CUDA memory stats read 0 when CUDA is not initialised: the benchmark's memory figure is wrong"),
    C('coordinator.print_on_master(f"Max CUDA memory usage: {torch.cuda.max_memory_allocated()/1024**2:.2f} MB")',
      "torch_cuda_api", R, True,
      'coordinator.print_on_master(f"Max device memory usage: {get_accelerator().max_memory_allocated()/1024**2:.2f} MB")',
      "reports 0 MB on NPU"),
])

E("megatron_random", "megatron/core/tensor_parallel/random.py", EXP,
  "NVIDIA/Megatron-LM core/tensor_parallel/random.py (CUDA RNG tracker + recompute CheckpointFunction)", [
    C("from torch.cuda import _lazy_call", "torch_cuda_api", R, True, "from torch_npu.npu import _lazy_call",
      "torch.cuda._lazy_call queues the callback until CUDA initialises, which never happens on NPU: the RNG state "
      "is silently never restored, so recomputed dropout masks differ from the forward pass (wrong gradients)"),
    C("from torch.cuda import device as device_ctx_manager", "torch_cuda_api", R, False,
      "from torch_npu.npu import device as device_ctx_manager",
      "only used on the old-PyTorch branch (_C._cuda_setRNGState), which a torch_npu build never takes"),
    C("device = torch.device('cuda')", "device_type", R, True, "device = torch.device('npu')", "cuda device"),
    C("device = torch.device('cuda', device)", "device_type", R, True, "device = torch.device('npu', device)",
      "cuda device"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", R, True, "idx = torch.npu.current_device()",
      "needs a CUDA build"),
    C("default_generator = torch.cuda.default_generators[idx]", "torch_cuda_api", R, True,
      "default_generator = torch_npu.npu.default_generators[idx]",
      "CUDA generator list is empty without CUDA (knowledge: default_generators needs a manual change)"),
    C("orig_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "orig_rng_state = torch.npu.get_rng_state()", "needs a CUDA build"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, True, "torch.npu.manual_seed(seed)",
      "lazily queued and never applied: tracker states would not be seeded per tensor-parallel rank"),
    C("=self.states_[name] = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "self.states_[name] = torch.npu.get_rng_state()", "needs a CUDA build"),
    C("orig_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "orig_cuda_rng_state = torch.npu.get_rng_state()", "needs a CUDA build"),
    C("self.states_[name] = torch.cuda.get_rng_state()  # keep the advanced state", "torch_cuda_api", R, True,
      "self.states_[name] = torch.npu.get_rng_state()  # keep the advanced state", "needs a CUDA build"),
    C("torch.cuda.manual_seed(data_parallel_seed)", "torch_cuda_api", R, True,
      "torch.npu.manual_seed(data_parallel_seed)",
      "default NPU generator is never seeded with the data-parallel seed (lazy CUDA call): dropout outside "
      "TP regions diverges across tensor-parallel ranks"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "ctx.fwd_cuda_rng_state = torch.npu.get_rng_state()", "activation recompute: needs a CUDA build"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "bwd_cuda_rng_state = torch.npu.get_rng_state()", "activation recompute: needs a CUDA build"),
])

E("ds_checkpointing", "deepspeed/runtime/activation_checkpointing/checkpointing.py", DEV,
  "microsoft/DeepSpeed runtime/activation_checkpointing/checkpointing.py, pre-accelerator era "
  "(partitioned + CPU activation checkpoints, RNG-state restore for recompute)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "get_accelerator().synchronize()",
      "synchronize_checkpoint_boundary=true: needs a CUDA build"),
    C("cuda_device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "cuda_device = get_accelerator().current_device_name()",
      "first checkpointed forward always runs this; it is also the device the CPU checkpoints are brought back to"),
    C("transport_stream = torch.cuda.Stream(device=cuda_device)", "torch_cuda_api", R, True,
      "transport_stream = get_accelerator().Stream(device=cuda_device)", "needs a CUDA build"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "ctx.fwd_cuda_rng_state = get_accelerator().get_rng_state()",
      "device RNG state must be captured for a bit-identical recompute"),
    C("torch.cuda.synchronize()  # end of checkpointed forward", "torch_cuda_api", R, True,
      "get_accelerator().synchronize()  # end of checkpointed forward", "synchronize_checkpoint_boundary"),
    C("torch.cuda.synchronize()  # start of recompute", "torch_cuda_api", R, True,
      "get_accelerator().synchronize()  # start of recompute", "synchronize_checkpoint_boundary"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", R, True,
      "bwd_cuda_rng_state = get_accelerator().get_rng_state()", "needs a CUDA build"),
    C("torch.cuda.synchronize()  # end of recompute + backward", "torch_cuda_api", R, True,
      "get_accelerator().synchronize()  # end of recompute + backward", "synchronize_checkpoint_boundary"),
])

E("unsloth_utils", "unsloth/models/_utils.py", EXP,
  "unslothai/unsloth models/_utils.py (capability gate at import, xformers/FA2 probe, offloaded gradient checkpointer)", [
    C('torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="cuda")', "amp", R, True,
      'torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="npu")',
      "the checkpointer's forward records/uses the CUDA autocast state: under NPU autocast the recompute runs "
      "with the wrong precision (torch >= 2.4 path, i.e. torch_npu 2.5+)"),
    C('torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="cuda")', "amp", R, True,
      'torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="npu")', "same, backward side"),
    C("torch_amp_custom_fwd = torch.cuda.amp.custom_fwd", "amp", R, False,
      "torch_amp_custom_fwd = torch.npu.amp.custom_fwd", "legacy-torch branch (torch_npu 2.1)"),
    C("torch_amp_custom_bwd = torch.cuda.amp.custom_bwd", "amp", R, False,
      "torch_amp_custom_bwd = torch.npu.amp.custom_bwd", "legacy-torch branch (torch_npu 2.1)"),
    C("major_version, minor_version = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major_version, minor_version = 8, 0  # NPU: bf16 capable; no FA2/xformers probe",
      "module import fails without CUDA; torch.npu.get_device_capability() returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, so the unpacking would fail too"),
    C("import xformers.ops.fmha as xformers", "attention_kernel", R, True,
      "xformers = None  # attention via F.scaled_dot_product_attention / torch_npu.npu_fusion_attention",
      "unguarded xformers import: no NPU build"),
    C("gpu_stats = torch.cuda.get_device_properties(0)", "torch_cuda_api", R, True,
      "gpu_stats = torch.npu.get_device_properties(0)", "needs a CUDA build"),
    C("CUDA = {gpu_stats.major}.{gpu_stats.minor}", "device_capability_check", R, True,
      'f"O^O/ \\_/ \\    Pytorch: {torch.__version__}. torch_npu = {torch_npu.__version__}.\\n"',
      "NPU device properties carry no major/minor (only name, total_memory, L2_cache_size, cube/vector core "
      "counts): the banner raises AttributeError"),
    C('hidden_states = hidden_states.to("cuda", non_blocking=True).detach()', "tensor_to_device", R, True,
      'hidden_states = hidden_states.to("npu", non_blocking=True).detach()',
      "offloaded checkpoint is brought back to a CUDA device in backward"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op"),
])

E("unsloth_rms_kernel", "unsloth/kernels/rms_layernorm.py", EXP,
  "unslothai/unsloth kernels/rms_layernorm.py + utils.calculate_settings (Triton RMSNorm fwd/bwd, self-test)", [
    C("MAX_FUSED_SIZE = 65536", "triton_kernel_tuning", R, False, "MAX_FUSED_SIZE = 8192  # triton-ascend UB budget",
      "CUDA block-size ceiling; triton-ascend tiles against on-chip buffer limits (unconfirmed)"),
    C("=num_warps = 4", "triton_kernel_tuning", R, False, "num_warps = 1  # ignored / remapped by triton-ascend",
      "warp-count heuristic is a CUDA occupancy knob (unconfirmed for triton-ascend)"),
    C('Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device="cuda:0")', "device_type", R, True,
      "Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)", "hard-coded cuda:0"),
    C('r = torch.empty(n_rows, dtype=torch.float32, device="cuda:0")', "device_type", R, True,
      "r = torch.empty(n_rows, dtype=torch.float32, device=X.device)", "hard-coded cuda:0"),
    C("out = Fast_RMS_Layernorm.apply(X, W, eps, gemma)", "npu_fused_op", R, True,
      "out = torch_npu.npu_rms_norm(X, W + 1 if gemma else W, epsilon=eps)[0]",
      "the Triton kernels need a CUDA/ROCm driver; on Ascend the fused RMSNorm is torch_npu.npu_rms_norm "
      "(or the kernel is ported to triton-ascend)"),
    C('layernorm = LlamaRMSNorm((dim,), eps=eps).to("cuda")', "tensor_to_device", R, True,
      'layernorm = LlamaRMSNorm((dim,), eps=eps).to("npu")', "self-test"),
    C("torch.cuda.manual_seed(random_state)", "torch_cuda_api", R, False, "torch.npu.manual_seed(random_state)",
      "lazily queued, harmless (torch.manual_seed follows)"),
    C('X = torch.randn((bsz, seqlen, dim), dtype=dtype, device="cuda")', "device_type", R, True,
      'X = torch.randn((bsz, seqlen, dim), dtype=dtype, device="npu")', "self-test"),
    C('YY = torch.randn((bsz, seqlen, dim), dtype=dtype, device="cuda", requires_grad=True)', "device_type", R, True,
      'YY = torch.randn((bsz, seqlen, dim), dtype=dtype, device="npu", requires_grad=True)', "self-test"),
    C('with torch.autocast(device_type="cuda", dtype=dtype):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=dtype):', "self-test autocast on the wrong device type"),
])

E("qlora_train", "qlora.py", DEV,
  "artidoro/qlora qlora.py (4-bit NF4 base + LoRA, paged AdamW, per-GPU max_memory map)", [
    C('optim: str = field(default="paged_adamw_32bit", metadata={"help": "The optimizer to be used"})',
      "fused_optimizer", R, False,
      'optim: str = field(default="adamw_torch", metadata={"help": "The optimizer to be used"})',
      "bitsandbytes paged optimizers rely on CUDA unified memory; 8-bit/paged optimizers are not listed for NPU "
      "in the bitsandbytes multi-backend work (unconfirmed whether they fail or fall back)"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", B, True,
      "elif is_torch_npu_available(): n_gpus = torch.npu.device_count()",
      "neither branch runs on an NPU host, so n_gpus is undefined (NameError) before the max_memory map is built"),
    C("if torch.cuda.is_bf16_supported():", "device_capability_check", R, False,
      "if torch.npu.is_bf16_supported():",
      "hint only; unconfirmed whether the CUDA probe raises or returns False on a torch_npu build"),
])

E("bnb_functional_paged", "bitsandbytes/functional.py", DEV,
  "bitsandbytes-foundation/bitsandbytes functional.py, pre-multi-backend (ctypes CUDA lib, paged/managed memory, "
  "32-bit and 8-bit blockwise optimizer updates)", [
    C('cuda_version = torch.version.cuda.replace(".", "")', "custom_cuda_extension", B, True,
      'cuda_version = (torch.version.cuda or "").replace(".", "")  # + NPU backend selection',
      "torch.version.cuda is None on a torch_npu install: importing bitsandbytes raises AttributeError"),
    C('def get_paged(*shape, dtype=torch.float32, device=torch.device("cuda", index=0)):', "device_type", R, False,
      'def get_paged(*shape, dtype=torch.float32, device=torch.device("npu", index=0)):',
      "default only; paged allocation itself has no NPU counterpart (see next label)"),
    C("cuda_ptr = lib.cget_managed_ptr(ct.c_size_t(num_bytes))", "custom_cuda_extension", R, True,
      "raise NotImplementedError('paged optimizers need CUDA managed memory')  # use non-paged states on NPU",
      "cudaMallocManaged-backed paging of optimizer states: the symbol only exists in the CUDA build of the library"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "only reached for paged tensors, which cannot be created on NPU"),
    C("prev_device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "prev_device = torch.npu.current_device()", "every optimizer update goes through pre_call"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "every optimizer update goes through pre_call"),
    C("torch.cuda.set_device(prev_device)", "torch_cuda_api", R, True, "torch.npu.set_device(prev_device)",
      "post_call"),
    C('on_gpu &= t.device.type == "cuda" or is_paged', "device_type", R, True,
      'on_gpu &= t.device.type in ("cuda", "npu") or is_paged',
      "NPU tensors are rejected with 'All input tensors need to be on the same GPU'"),
    C("return ct.c_void_p(torch._C._cuda_getCurrentRawStream(tensor.device.index))", "torch_cuda_api", R, True,
      "return ct.c_void_p(torch.npu.current_stream(tensor.device).npu_stream)",
      "raw CUDA stream handle passed to the native kernels; private torch._C CUDA binding"),
])

E("galore_torchrun_main", "torchrun_main.py", EXP,
  "jiaweizzhao/GaLore torchrun_main.py (C4 pre-training, GaLore / 8-bit Adam, layer-wise optimizer hooks)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "explicit port: torch.npu.* calls and the hccl backend need torch_npu loaded"),
    C('parser.add_argument("--dtype", type=str, default="bfloat16" if torch.cuda.is_bf16_supported() else "float32")',
      "device_capability_check", R, True,
      'parser.add_argument("--dtype", type=str, default="bfloat16" if torch.npu.is_bf16_supported() else "float32")',
      "evaluated at argument parsing: raises, or silently defaults a bf16-capable NPU to float32 training"),
    C('world_size = int(os.environ["WORLD_SIZE"])', "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only: binary (non-JIT) kernels for the dynamic shapes of packed C4 batches"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs a CUDA build"),
    C('logger.info(f"Global rank {global_rank}, local rank {local_rank}, device: {torch.cuda.current_device()}")',
      "torch_cuda_api", R, True,
      'logger.info(f"Global rank {global_rank}, local rank {local_rank}, device: {torch.npu.current_device()}")',
      "needs a CUDA build"),
    C('dist.init_process_group(backend="nccl", rank=global_rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", rank=global_rank, world_size=world_size)', "no NCCL on Ascend"),
    C('device = f"cuda:{local_rank}"', "device_type", R, True, 'device = f"npu:{local_rank}"', "cuda device string"),
    C("optimizer = torch.optim.Adam(trainable_params, lr=args.lr, weight_decay=args.weight_decay)",
      "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(trainable_params, lr=args.lr, weight_decay=args.weight_decay)",
      "performance only (msFmkTransplt advice)"),
    C("optimizer = bnb.optim.Adam8bit(trainable_params, lr=args.lr, weight_decay=args.weight_decay)",
      "fused_optimizer", R, False,
      "optimizer = torch.optim.AdamW(trainable_params, lr=args.lr, weight_decay=args.weight_decay)",
      "bitsandbytes 8-bit optimizers are not listed for NPU (unconfirmed whether they fail)"),
    C("optimizer = GaLoreAdamW8bit(param_groups, lr=args.lr, weight_decay=args.weight_decay, betas=(0.9, 0.999))",
      "fused_optimizer", R, False,
      "optimizer = GaLoreAdamW(param_groups, lr=args.lr, weight_decay=args.weight_decay, betas=(0.9, 0.999))",
      "GaLoreAdamW8bit subclasses bitsandbytes' 8-bit optimizer (unconfirmed on NPU)"),
    C("optimizer_dict[p] = bnb.optim.Adam8bit([p], lr=args.lr, weight_decay=args.weight_decay)",
      "fused_optimizer", R, False,
      "optimizer_dict[p] = torch.optim.AdamW([p], lr=args.lr, weight_decay=args.weight_decay)",
      "layer-wise 8-bit Adam (unconfirmed on NPU)"),
    C('"max_memory_allocated_GB": torch.cuda.max_memory_allocated() / 1024 ** 3,', "torch_cuda_api", R, True,
      '"max_memory_allocated_GB": torch.npu.max_memory_allocated() / 1024 ** 3,',
      "reads 0 without CUDA: the memory curve the GaLore paper reports is wrong"),
])

E("torchao_cpu_offload", "torchao/prototype/low_bit_optim/cpu_offload.py", DEV,
  "pytorch/ao prototype/low_bit_optim/cpu_offload.py (CPUOffloadOptimizer: D2H grads on a side stream, fused CPU AdamW)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
      "constructor needs a CUDA build"),
    C("self.stream.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "self.stream.wait_stream(torch.npu.current_stream())",
      "grad hook: without waiting on the NPU compute stream the D2H copy can read unfinished gradients"),
    C("=with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "grad D2H copy in the post-accumulate-grad hook"),
    C("with torch.cuda.stream(self.stream):  # H2D copy of the updated param", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.stream):  # H2D copy of the updated param", "param H2D copy in step()"),
    C('def _smoke_test(device: str = "cuda"):', "device_type", R, True, 'def _smoke_test(device: str = "npu"):',
      "module __main__ smoke test"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "smoke test"),
    C('print("peak memory", torch.cuda.max_memory_allocated() / 2**20, "MiB")', "torch_cuda_api", R, True,
      'print("peak memory", torch.npu.max_memory_allocated() / 2**20, "MiB")', "reads 0 without CUDA"),
])

E("megatron_ds_attention", "megatron/model/flash_attention.py", EXP,
  "microsoft/Megatron-DeepSpeed FlashSelfAttention + DeepSpeed-Ulysses DistributedAttention wrapper", [
    C("=from flash_attn import flash_attn_func", "attention_kernel", R, True,
      "import torch_npu  # npu_fusion_attention replaces flash_attn_func",
      "unguarded flash-attn import: the module cannot be imported on an NPU host"),
    C("assert all((i.is_cuda for i in (q, k, v)))", "device_type", R, True,
      "assert all((i.is_npu for i in (q, k, v)))", "--use-flash-attn-v1 path: NPU tensors fail the assertion"),
    C("return flash_attn_func(", "attention_kernel", R, True,
      'return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", keep_prob=1.0 - p, scale=scale, '
      'atten_mask=causal_mask, sparse_mode=3)[0]',
      "local attention inside the Ulysses all-to-all; [b, s, h, d] maps to input_layout='BSND'"),
])

E("yunchang_usp_attention", "yunchang/hybrid/attn_layer.py", DEV,
  "feifeibear/long-context-attention (yunchang) hybrid/attn_layer.py (USP: Ulysses all-to-all x ring attention)", [
    C("attn_type: AttnType = AttnType.FA,", "attention_kernel", R, True,
      "attn_type: AttnType = AttnType.NPU,  # torch_npu.npu_fusion_attention per ring step",
      "default local kernel is flash-attn (its _flash_attn_forward/backward internals in every ring step); no NPU build"),
    C("gather_idx: int = 1, use_sync: bool = False, attn_type: AttnType = AttnType.FA) -> None:", "attention_kernel",
      R, True, "gather_idx: int = 1, use_sync: bool = False, attn_type: AttnType = AttnType.NPU) -> None:",
      "pure-Ulysses layer defaults to the flash-attn kernel too"),
    C('device = torch.device(f"cuda:{torch.cuda.current_device()}")', "device_type", R, True,
      'device = torch.device(f"npu:{torch.npu.current_device()}")', "needs a CUDA build"),
    C("gpu_name = torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      "gpu_name = torch.npu.get_device_name(device)",
      "GPU-name sniffing to fall back to the torch kernel on pre-Ampere cards"),
])

E("te_cp_attention", "megatron/core/transformer/custom_layers/transformer_engine.py", EXP,
  "NVIDIA/Megatron-LM core/transformer/custom_layers/transformer_engine.py (TE norms + TEDotProductAttention "
  "with context-parallel cp_stream)", [
    C("=import transformer_engine as te", "custom_cuda_extension", R, True,
      "import mindspeed.megatron_adaptor  # TE-equivalent modules on Ascend; or use the local (non-TE) layer spec",
      "TransformerEngine has no NPU build; the module import fails"),
    C('extra_transformer_engine_kwargs["device"] = torch.cuda.current_device()', "torch_cuda_api", R, True,
      'extra_transformer_engine_kwargs["device"] = torch.npu.current_device()', "needs a CUDA build"),
    C("cp_stream: torch.cuda.Stream = None", "torch_cuda_api", R, False, "cp_stream: torch.npu.Stream = None",
      "annotation only"),
    C("class TEDotProductAttention(te.pytorch.DotProductAttention):", "attention_kernel", R, True,
      "class NPUDotProductAttention(torch.nn.Module):  # torch_npu.npu_fusion_attention + ring/Ulysses CP",
      "TE's fused attention (and its context-parallel P2P ring) is CUDA-only; long-context CP on Ascend goes through "
      "MindSpeed's CP (Ulysses / ring) over npu_fusion_attention"),
    C("TEDotProductAttention.cp_stream = torch.cuda.Stream()", "torch_cuda_api", R, True,
      "TEDotProductAttention.cp_stream = torch.npu.Stream()", "context-parallel side stream"),
])

E("easycontext_train", "train.py", DEV,
  "jzhang38/EasyContext train.py (accelerate + DeepSpeed ZeRO-3 offload, zigzag ring / Ulysses sequence parallel)", [
    C("from flash_attn.losses.cross_entropy import CrossEntropyLoss", "unsupported_op_workaround", R, True,
      "from torch.nn import CrossEntropyLoss",
      "flash-attn's fused (Triton) cross-entropy: import fails on NPU; torch CE (with chunking) is the fallback"),
    C('_attn_implementation="flash_attention_2",', "attention_kernel", R, True,
      '_attn_implementation="sdpa",',
      "flash_attention_2 requires the flash-attn package; on NPU SDPA dispatches to the NPU fused attention "
      "(the seq-parallel monkey patch must then target the sdpa path)"),
    C("apply_seq_parallel_monkey_patch(args.parallel_mode, \"llama\")", "attention_kernel", R, True,
      'apply_seq_parallel_monkey_patch(args.parallel_mode, "llama")  # NPU build of the zigzag/ulysses kernels',
      "the zigzag-ring / dist_flash_attn patches call flash-attn's _flash_attn_forward/_backward per ring step"),
    C("loss_func = CrossEntropyLoss(inplace_backward=True)", "unsupported_op_workaround", R, True,
      "loss_func = CrossEntropyLoss()", "inplace_backward is a flash-attn CE argument"),
])

E("colossal_setup_py", "setup.py", DEV,
  "hpcaitech/ColossalAI setup.py, CUDA_EXT=1 era (AOT-builds every op_builder kernel as a CUDAExtension)", [
    C('BUILD_CUDA_EXT = int(os.environ.get("CUDA_EXT", "0")) == 1', "custom_cuda_extension", B, False,
      'BUILD_CUDA_EXT = int(os.environ.get("CUDA_EXT", "0")) == 1 and not is_npu_build()',
      "default CUDA_EXT=0 installs pure Python, so a plain install works on NPU; CUDA_EXT=1 (as in the "
      "project's docker/CI recipes) would need an NPU builder branch"),
    C("set_cuda_arch_list(CUDA_HOME)", "custom_cuda_extension", R, False,
      "# set_cuda_arch_list: CUDA builds only", "only on the CUDA_EXT=1 path"),
    C("ext_modules.append(builder_cls().builder())", "custom_cuda_extension", R, False,
      "ext_modules.append(builder_cls().builder())  # builder() returns NpuExtension on Ascend",
      "only on the CUDA_EXT=1 path; each builder returns a CUDAExtension (see colossal_op_builder)"),
])

E("longctx_requirements", "requirements.txt", EXP,
  "EasyContext / ring-attention-style long-context training requirements.txt pinned to cu121 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel on x86 (plain PyPI torch on aarch64); the cu121 index has no "
      "matching build for an Ascend host"),
    C("torch==2.2.2+cu121", "device_type", R, True, "torch==2.2.0",
      "CUDA local-version wheel; torch_npu 2.2.0.post2 pairs with torch 2.2.0 (torch_npu wheel = torch version)"),
    C("torchvision==0.17.2+cu121", "device_type", R, True, "torchvision==0.17.0",
      "CUDA local-version wheel"),
    C("=# core training stack", "import_torch_npu", A, True, "torch-npu==2.2.0.post2",
      "the adapter itself must be installed (CANN 8.0.RC1/RC2 per the version matrix)"),
    C("=flash-attn==2.5.8", "attention_kernel", X, True, None,
      "cannot be installed on an NPU host (nvcc build); replaced by torch_npu.npu_fusion_attention / SDPA"),
    C("ring-flash-attn==0.1.1", "attention_kernel", X, True, None,
      "pure-Python ring attention over flash-attn internals; unusable without flash-attn"),
    C("xformers==0.0.25.post1", "attention_kernel", X, False, None,
      "no NPU backend; its torch==2.2.2 pin also fights the torch_npu pairing (unconfirmed install failure)"),
    C("triton==2.2.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "Triton kernels need the Ascend fork (triton-ascend, Triton 3.2 line); version pairing unconfirmed"),
    C("liger-kernel==0.1.1", "npu_fused_op", X, False, None,
      "Triton-based fused RMSNorm/SwiGLU/RoPE/CE; on Ascend use torch_npu fused ops (unconfirmed whether it imports)"),
    C("bitsandbytes==0.43.1", "custom_cuda_extension", R, False, "bitsandbytes>=0.45  # multi-backend build with NPU support",
      "CUDA-only build before the multi-backend work; 8-bit optimizers not listed for NPU (unconfirmed)"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@23.08", "custom_cuda_extension", R, False,
      "apex  # Ascend/apex patch build (scripts/build.sh)",
      "NVIDIA apex CUDA kernels are unavailable; Ascend ships an apex patch (amp + NpuFused optimizers)"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "NVML has no NPU counterpart (use npu-smi)"),
    C("gpustat==1.1.1", "torch_cuda_api", X, False, None, "NVML-based monitor"),
])

E("zero_offload_dockerfile", "docker/Dockerfile", EXP,
  "DeepSpeed/FSDP offload training image on the NGC PyTorch base (prebuilt DS ops, flash-attn, apex --cuda_ext)", [
    C("FROM nvcr.io/nvidia/pytorch:24.03-py3", "device_type", R, True,
      "FROM ascendai/cann:8.0.rc2-910b-ubuntu22.04-py3.10  # + torch 2.2.0 / torch-npu 2.2.0.post2",
      "NGC CUDA base image: no CANN toolkit, no torch_npu"),
    C("ENV CUDA_HOME=/usr/local/cuda", "custom_cuda_extension", X, False, None,
      "CUDA toolkit path; the CANN image sets ASCEND_HOME_PATH via set_env.sh"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"', "custom_cuda_extension", X, False, None, "nvcc arch list; inert on NPU"),
    C("RUN DS_BUILD_CPU_ADAM=1 DS_BUILD_FUSED_ADAM=1 DS_BUILD_AIO=1 DS_BUILD_UTILS=1 \\", "fused_optimizer", R, False,
      "RUN DS_BUILD_CPU_ADAM=1 DS_BUILD_AIO=1 \\",
      "pre-building the CUDA fused-Adam op; with the NPU accelerator DeepSpeed selects its NPU op builders "
      "(unconfirmed which DS_BUILD_* flags they honour)"),
    C("RUN pip install --no-cache-dir flash-attn==2.5.8 --no-build-isolation", "attention_kernel", X, True, None,
      "nvcc build; no NPU build exists"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./',
      "custom_cuda_extension", R, True,
      "# Ascend apex: git clone https://gitee.com/ascend/apex && bash scripts/build.sh --python=3.10",
      "apex --cuda_ext compiles CUDA kernels with nvcc"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL-only watchdog switch"),
    C("ENV NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "RoCE GID for NCCL; HCCL uses the NPU's own RoCE NICs"),
    C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "ENV HCCL_SOCKET_IFNAME=eth0",
      "host NIC for HCCL's root-info negotiation; only matters when the default NIC choice cannot reach the root"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0)"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "no nvidia-smi in an Ascend container: the container is reported unhealthy"),
])

E("megatron_ds_sp_sh", "examples_deepspeed/sequence_parallel/ds_pretrain_gpt_6.7B_seq_parallel_128k.sh", EXP,
  "microsoft/Megatron-DeepSpeed examples_deepspeed/sequence_parallel launch script (Ulysses 128K, ZeRO-3 offload, "
  "CPU activation checkpoints)", [
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", X, False, None,
      "Mellanox HCA selection for NCCL; HCCL runs over the NPU's integrated RoCE ports"),
    C("export NCCL_NET_GDR_LEVEL=2", "env_var", X, False, None, "GPUDirect RDMA level, NCCL only"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=bond0",
      "host NIC for HCCL root-info negotiation (multi-node); defaults usually work on one node"),
    C("export DS_ACCELERATOR=cuda", "env_var", R, False, "export DS_ACCELERATOR=npu",
      "forces DeepSpeed's CUDA accelerator instead of auto-detecting the NPU one (DeepSpeed ships an NPU "
      "accelerator with hccl); the variable's handling is not in the knowledge, so unconfirmed"),
    C("--use-flash-attn-v2 \\", "attention_kernel", X, True, None,
      "selects the flash-attn 2 core attention (imports flash_attn); an NPU run needs the NPU fused-attention path"),
    C("--distributed-backend nccl \\", "dist_backend", R, True, "--distributed-backend hccl \\",
      "Megatron passes it straight to torch.distributed.init_process_group"),
])

E("llamafactory_qlora_yaml", "examples/train_qlora/llama3_lora_sft_longctx_offload.yaml", DEV,
  "hiyouga/LLaMA-Factory examples/train_qlora *.yaml (QLoRA, 32K packing, ZeRO-3 offload, paged 8-bit AdamW)", [
    C("flash_attn: fa2", "attention_kernel", R, False, "flash_attn: sdpa",
      "fa2 needs the flash-attn package; LLaMA-Factory is expected to warn and fall back when it is missing "
      "(unconfirmed), while sdpa selects the NPU fused attention explicitly"),
    C("enable_liger_kernel: true", "npu_fused_op", R, False, "enable_liger_kernel: false",
      "Liger's fused RMSNorm/SwiGLU/RoPE/CE are Triton kernels for CUDA/ROCm (unconfirmed behaviour on NPU); "
      "torch_npu fused ops are the Ascend counterpart"),
    C("use_unsloth_gc: true", "torch_cuda_api", R, False, "use_unsloth_gc: false",
      "unsloth-style offloaded checkpointing moves hidden states back to the GPU by device name (unconfirmed for NPU)"),
    C("optim: paged_adamw_8bit", "fused_optimizer", R, False, "optim: adamw_torch",
      "bitsandbytes paged 8-bit AdamW (CUDA managed memory); not listed for NPU, unconfirmed"),
    C("ddp_backend: nccl", "dist_backend", R, True, "ddp_backend: hccl",
      "TrainingArguments.ddp_backend is passed to init_process_group; HF accepts 'hccl' for Ascend"),
])

E("seqpar_pyproject", "pyproject.toml", EXP,
  "yunchang / ring-flash-attention-style pyproject.toml of a sequence-parallel attention package", [
    C('"flash-attn>=2.5.6",', "attention_kernel", X, True, None,
      "hard dependency: pip install of the package fails on an Ascend host (flash-attn needs nvcc)"),
    C('triton = ["triton>=2.2"]', "triton_kernel_tuning", R, False, 'triton = ["triton-ascend"]',
      "optional Triton kernels; the Ascend fork's version pairing is unconfirmed"),
    C('te = ["transformer-engine[pytorch]>=1.7"]', "custom_cuda_extension", X, False, None,
      "optional TransformerEngine extra; no NPU build"),
    C('bench = ["matplotlib", "pandas", "nvidia-ml-py"]', "torch_cuda_api", R, False,
      'bench = ["matplotlib", "pandas"]', "NVML is only used by the benchmarks"),
    C('cuda_arch_list = "8.0;8.6;9.0"', "custom_cuda_extension", R, False,
      '# NPU: build csrc with torch_npu.utils.cpp_extension.NpuExtension (Ascend C kernels)',
      "the optional CUDA extension is only built with SEQPAR_BUILD_EXT=1"),
])
