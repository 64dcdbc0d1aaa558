# Labels for probe119: distributed-training framework internals (DeepSpeed / Megatron-LM / ColossalAI style).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------------------------
E("ds_real_accelerator", "accelerator/real_accelerator.py", "device_branch_or_abstraction",
  "DeepSpeed accelerator/real_accelerator.py (get_accelerator before the NPU accelerator existed)", [
    C("SUPPORTED_ACCELERATOR_LIST = ['cuda', 'cpu', 'xpu']", "device_type", "replace", True,
      "SUPPORTED_ACCELERATOR_LIST = ['cuda', 'cpu', 'xpu', 'npu']",
      "is_current_accelerator_supported() would report an NPU accelerator as unsupported"),
    C('=elif accelerator_name == "cuda":', "device_type", "add_branch", True,
      'elif accelerator_name == "npu":\n            import torch_npu  # noqa: F401',
      "DS_ACCELERATOR=npu is rejected with ValueError by the override path"),
    C("if torch.cuda.is_available():  #ignore-cuda", "device_type", "add_branch", True,
      "if importlib.util.find_spec('torch_npu') is not None and torch.npu.is_available():\n                    accelerator_name = \"npu\"",
      "auto-detection only probes CUDA; on an Ascend host it silently falls back to the CPU accelerator"),
    C('=if accelerator_name == "cuda":', "device_type", "add_branch", True,
      'elif accelerator_name == "npu":\n        from .npu_accelerator import NPU_Accelerator\n        ds_accelerator = NPU_Accelerator()',
      "no accelerator object is constructed for 'npu'; ds_accelerator stays None and validation fails"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_engine", "deepspeed/runtime/engine.py", "device_branch_or_abstraction",
  "DeepSpeed runtime/engine.py with get_accelerator() adoption half done", [
    C("torch.cuda.set_device(device_rank)", "torch_cuda_api", "replace", True,
      "get_accelerator().set_device(device_rank)",
      "torch.cuda.set_device raises on a torch build without CUDA; route through the accelerator"),
    C('self.device = torch.device("cuda", device_rank)', "device_type", "replace", True,
      "self.device = torch.device(get_accelerator().device_name(), device_rank)",
      "hard-coded cuda device: every later .to(self.device) would target CUDA"),
    C('self.device = torch.device("cuda")', "device_type", "replace", True,
      "self.device = torch.device(get_accelerator().device_name())",
      "single-process fallback still hard-codes cuda"),
    C("            torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "            get_accelerator().empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; the NPU cache is not released"),
    C("return torch.cuda.memory_allocated(self.device) / (1024**3)", "torch_cuda_api", "replace", False,
      "return get_accelerator().memory_allocated(self.device) / (1024**3)",
      "diagnostic: torch.cuda memory stats return {} while CUDA is uninitialised, so this silently reports 0 GB"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_zero_stage3", "deepspeed/runtime/zero/stage3.py", "device_branch_or_abstraction",
  "DeepSpeed runtime/zero/stage3.py (ZeRO-3 optimizer: reduce/partition stream, events, IPG buffers)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not get_accelerator().is_available():",
      "is False on an Ascend host, so ZeRO-3 init raises SystemError('Cannot use fp16 without CUDA')"),
    C("backup_gpu_tensor = torch.randn(1, device='cuda').to(self.dtype)", "device_type", "replace", True,
      "backup_gpu_tensor = torch.randn(1, device=get_accelerator().current_device_name()).to(self.dtype)",
      "hard-coded 'cuda' device string in the partial-offload backup optimizer"),
    C("device=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device=get_accelerator().current_device_name(),",
      "inf/nan tracker allocated via torch.cuda.current_device(), which raises without CUDA"),
    C("self.device = torch.cuda.current_device() if not self.offload_optimizer else OffloadDeviceEnum.cpu",
      "torch_cuda_api", "replace", True,
      "self.device = get_accelerator().current_device_name() if not self.offload_optimizer else OffloadDeviceEnum.cpu",
      "optimizer-state device taken from torch.cuda"),
    C("self.reduce_and_partition_stream = torch.cuda.Stream() if overlap_comm else torch.cuda.default_stream()",
      "torch_cuda_api", "replace", True,
      "self.reduce_and_partition_stream = get_accelerator().Stream() if overlap_comm else get_accelerator().default_stream()",
      "side stream for reduce/partition must be an NPU stream"),
    C("device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device=get_accelerator().current_device_name())",
      "contiguous IPG gradient bucket allocated on the CUDA current device"),
    C("stream.wait_stream(torch.cuda.default_stream())", "torch_cuda_api", "replace", True,
      "stream.wait_stream(get_accelerator().default_stream())",
      "cross-stream dependency on the CUDA default stream"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True,
      "with get_accelerator().stream(stream):",
      "stream context manager from torch.cuda"),
    C("param.grad.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "param.grad.record_stream(get_accelerator().current_stream())",
      "record_stream itself is supported on NPU; the stream argument is not"),
    C("with torch.cuda.stream(self.reduce_and_partition_stream):", "torch_cuda_api", "replace", True,
      "with get_accelerator().stream(self.reduce_and_partition_stream):",
      "stream context manager from torch.cuda"),
    C('torch.cuda.nvtx.range_push("reduce_and_partition_ipg_grads")', "torch_cuda_api", "replace", True,
      'get_accelerator().range_push("reduce_and_partition_ipg_grads")',
      "torch.cuda.nvtx is not redirected to NPU and raises without a CUDA build (NPU form: torch_npu.npu.mstx)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "get_accelerator().range_pop()",
      "same as range_push"),
    C("event = torch.cuda.Event()", "torch_cuda_api", "replace", True,
      "event = get_accelerator().Event()",
      "reduce events must be NPU events"),
    C("memory_stats = torch.cuda.memory_stats()", "torch_cuda_api", "replace", False,
      "memory_stats = get_accelerator().memory_stats()",
      "returns {} without CUDA, so the allocator-flush warning silently never fires (diagnostic only)"),
    C("overflow_gpu = torch.cuda.ByteTensor([overflow])", "torch_cuda_api", "replace", True,
      "overflow_gpu = get_accelerator().ByteTensor([overflow])",
      "legacy torch.cuda tensor type is unavailable without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "get_accelerator().synchronize()",
      "torch.cuda.synchronize raises without CUDA"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_comm_torch", "deepspeed/comm/torch.py", "device_branch_or_abstraction",
  "DeepSpeed comm/torch.py TorchBackend plus init_distributed from comm/comm.py", [
    C('dist_backend = "nccl"', "dist_backend", "replace", True,
      "dist_backend = get_accelerator().communication_backend_name()",
      "default backend hard-coded to NCCL; torch_npu provides HCCL ('hccl'), NCCL is not available on Ascend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_op_builder_base", "op_builder/builder.py", "device_branch_or_abstraction",
  "DeepSpeed op_builder/builder.py (OpBuilder / CUDAOpBuilder / TorchCPUOpBuilder, nvcc flags, JIT load)", [
    C("self.build_for_cpu = not torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "self.build_for_npu = hasattr(torch, 'npu') and torch.npu.is_available()",
      "on an Ascend host this evaluates True and the CPU ops build CPU-only, which works; detecting the NPU is only "
      "needed to enable the CANN copy-back path (performance)"),
    C("CUDA_ENABLE = '-D__DISABLE_CUDA__' if self.build_for_cpu else '-D__ENABLE_CUDA__'", "custom_cuda_extension",
      "add_branch", False,
      "CUDA_ENABLE = '-D__ENABLE_CANN__' if self.build_for_npu else ('-D__DISABLE_CUDA__' if self.build_for_cpu else '-D__ENABLE_CUDA__')",
      "CPU Adam then updates fp16 device params through ACL instead of a host round-trip; performance only, unconfirmed "
      "in the knowledge notes"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_ops_fused_adam", "deepspeed/ops/adam/fused_adam.py", "device_branch_or_abstraction",
  "DeepSpeed ops/adam/fused_adam.py (apex-derived multi-tensor FusedAdam loaded through an op builder)", [
    C("fused_adam_cuda = FusedAdamBuilder().load()", "fused_optimizer", "replace", True,
      'fused_adam_cuda = get_accelerator().create_op_builder("FusedAdamBuilder").load()',
      "the CUDA builder JIT-compiles multi_tensor_adam.cu with nvcc; on Ascend the accelerator's builder must supply "
      "an NPU multi_tensor_adam (e.g. wrapping torch_npu's fused Adam kernels)"),
    C("self._dummy_overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", "replace", True,
      "self._dummy_overflow_buf = get_accelerator().IntTensor([0])",
      "legacy torch.cuda.IntTensor constructor is unavailable without CUDA"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_act_checkpointing", "deepspeed/runtime/activation_checkpointing/checkpointing.py", "device_branch_or_abstraction",
  "DeepSpeed runtime/activation_checkpointing/checkpointing.py (CUDA RNG tracker, partitioned/CPU checkpointing)", [
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", False,
      "with get_accelerator().device(device):",
      "only reached when torch._C._cuda_setRNGState exists (old CUDA builds); changed for consistency"),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device(get_accelerator().device_name())",
      "RNG state would be restored onto a cuda device"),
    C("device = torch.device('cuda', device)", "device_type", "replace", True,
      "device = torch.device(get_accelerator().device_name(), device)",
      "same, integer device index path"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "idx = get_accelerator().current_device()",
      "raises without CUDA"),
    C("default_generator = torch.cuda.default_generators[idx]", "torch_cuda_api", "replace", True,
      "default_generator = get_accelerator().default_generator(idx)",
      "torch.cuda.default_generators is empty without CUDA (IndexError); NPU generators live in torch_npu.npu.default_generators"),
    C("torch.cuda._lazy_call(cb)", "torch_cuda_api", "replace", True,
      "get_accelerator().lazy_call(cb)",
      "torch.cuda._lazy_call queues the callback until CUDA initialises, which never happens on NPU: the RNG state is "
      "silently never restored, so recomputed dropout masks differ from the forward pass"),
    C("orig_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_rng_state = get_accelerator().get_rng_state()",
      "device RNG state must come from the NPU generator"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True,
      "get_accelerator().manual_seed(seed)",
      "seeding the CUDA generator does not seed the NPU one: tracker states would all be identical/unseeded"),
    C("self.states_[name] = torch.cuda.get_rng_state().clone()", "torch_cuda_api", "replace", True,
      "self.states_[name] = get_accelerator().get_rng_state().clone()",
      "tracked model-parallel RNG state"),
    C("orig_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_cuda_rng_state = get_accelerator().get_rng_state()",
      "fork() snapshot of the device RNG"),
    C("=self.states_[name] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self.states_[name] = get_accelerator().get_rng_state()",
      "fork() write-back of the device RNG"),
    C("torch.cuda.manual_seed(data_parallel_seed)", "torch_cuda_api", "replace", True,
      "get_accelerator().manual_seed(data_parallel_seed)",
      "data-parallel default seed must seed the NPU generator"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "get_accelerator().synchronize()",
      "raises without CUDA (SYNCHRONIZE=True path); the matching calls later in the file already use get_accelerator()"),
    C("cuda_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cuda_device = get_accelerator().current_device_name()",
      "device used for every recomputation copy"),
    C("transport_stream = torch.cuda.Stream(device=cuda_device)", "torch_cuda_api", "replace", True,
      "transport_stream = get_accelerator().Stream(device=cuda_device)",
      "CUDA stream creation raises without CUDA"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "ctx.fwd_cuda_rng_state = get_accelerator().get_rng_state()",
      "forward RNG snapshot for recomputation"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "bwd_cuda_rng_state = get_accelerator().get_rng_state()",
      "backward RNG snapshot"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_launcher_runner", "deepspeed/launcher/runner.py", "device_branch_or_abstraction",
  "DeepSpeed launcher/runner.py (hostfile parsing, CUDA_VISIBLE_DEVICES handling, env export to remote nodes)", [
    C("EXPORT_ENVS = ['MLFLOW', 'NCCL', 'PYTHON', 'MV2', 'UCX']", "env_var", "replace", True,
      "EXPORT_ENVS = ['MLFLOW', 'PYTHON', 'MV2', 'UCX'] + get_accelerator().export_envs()  # npu: ['ASCEND', 'HCCL', 'LD_LIBRARY', 'PATH']",
      "only NCCL_* variables are forwarded to pdsh/MPI workers; HCCL_*/ASCEND_* settings on the launch node are "
      "silently dropped on remote ranks"),
    C('cuda_visible_devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")', "env_var", "replace", True,
      'cuda_visible_devices = os.environ.get(get_accelerator().visible_devices_envs()[0], "")  # ASCEND_RT_VISIBLE_DEVICES',
      "on Ascend the device restriction is ASCEND_RT_VISIBLE_DEVICES; reading CUDA_VISIBLE_DEVICES ignores it and "
      "the job spreads over every NPU"),
    C('del os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'del os.environ[get_accelerator().visible_devices_envs()[0]]',
      "once the read above switches to ASCEND_RT_VISIBLE_DEVICES this branch runs on hosts where CUDA_VISIBLE_DEVICES "
      "is unset, so deleting it raises KeyError"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = get_accelerator().device_count()",
      "returns 0 on an Ascend host, so the runner aborts with 'no GPU resources available'"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_launcher_launch", "deepspeed/launcher/launch.py", "device_branch_or_abstraction",
  "DeepSpeed launcher/launch.py (per-node process spawner setting CUDA_VISIBLE_DEVICES and rank env vars)", [
    C('if "NCCL" in k:', "env_var", "replace", False,
      'if "NCCL" in k or "HCCL" in k or "ASCEND" in k:',
      "only logs communication env vars; HCCL_*/ASCEND_* would not be echoed (diagnostic only)"),
    C('current_env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, local_gpu_ids))', "env_var", "replace", True,
      'current_env[get_accelerator().visible_devices_envs()[0]] = ",".join(map(str, local_gpu_ids))',
      "CANN ignores CUDA_VISIBLE_DEVICES: with --include host:2,3 the ranks would silently run on NPU 0,1; use "
      "ASCEND_RT_VISIBLE_DEVICES"),
    C("logger.info(f\"Setting CUDA_VISIBLE_DEVICES={current_env['CUDA_VISIBLE_DEVICES']}\")", "env_var", "replace", True,
      "logger.info(f\"Setting ASCEND_RT_VISIBLE_DEVICES={current_env['ASCEND_RT_VISIBLE_DEVICES']}\")",
      "reads the key back: raises KeyError once the line above stops setting CUDA_VISIBLE_DEVICES"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_setup", "setup.py", "device_branch_or_abstraction",
  "DeepSpeed setup.py (DS_BUILD_OPS pre-compilation, cupy extra, torch_info with cuda/nccl versions)", [
    C("if hasattr(torch.cuda, 'is_bf16_supported') and torch.cuda.is_available():", "device_type", "add_branch", False,
      "elif hasattr(torch, 'npu') and torch.npu.is_available():\n        bf16_support = torch.npu.is_bf16_supported()",
      "only the recorded build metadata (torch_info['bf16_support']) is wrong on an Ascend build host; nothing fails"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_requirements", "requirements/requirements.txt", "device_branch_or_abstraction",
  "DeepSpeed requirements/requirements.txt", [
    C("=nvidia-ml-py", "torch_cuda_api", "removal", False, None,
      "NVML bindings install fine but are useless on Ascend (npu-smi / torch.npu.mem_get_info instead)"),
    C("=torch", "import_torch_npu", "npu_only_addition", True,
      "torch-npu  # pin to the same x.y.z as torch, e.g. torch==2.1.0 + torch-npu==2.1.0.post12",
      "torch_npu is what provides the NPU device, HCCL and the npu accelerator backend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_runtime_utils", "deepspeed/runtime/utils.py", "device_branch_or_abstraction",
  "DeepSpeed runtime/utils.py (CheckOverflow, clip_grad_norm_, memory_status / see_memory_usage)", [
    C("torch_memory_reserved = torch.cuda.memory_reserved", "torch_cuda_api", "replace", False,
      "torch_memory_reserved = get_accelerator().memory_reserved",
      "diagnostic: returns 0 while CUDA is uninitialised, so see_memory_usage logs CA 0 GB"),
    C("torch_max_memory_reserved = torch.cuda.max_memory_reserved", "torch_cuda_api", "replace", False,
      "torch_max_memory_reserved = get_accelerator().max_memory_reserved",
      "diagnostic, same as above"),
    C("overflow_gpu = torch.cuda.FloatTensor([overflow])", "torch_cuda_api", "replace", True,
      "overflow_gpu = get_accelerator().FloatTensor([overflow])",
      "legacy torch.cuda tensor type; the all_reduce over HCCL also needs the flag on the NPU"),
    C("total_norm_cuda = torch.cuda.FloatTensor([total_norm.item()])", "torch_cuda_api", "replace", True,
      "total_norm_cuda = get_accelerator().FloatTensor([total_norm.item()])",
      "inf-norm path"),
    C("total_norm_cuda = torch.cuda.FloatTensor([float(total_norm)])", "torch_cuda_api", "replace", True,
      "total_norm_cuda = get_accelerator().FloatTensor([float(total_norm)])",
      "p-norm path"),
    C("scaled_norm_tensor = torch.cuda.FloatTensor([float(scaled_norm)])", "torch_cuda_api", "replace", True,
      "scaled_norm_tensor = get_accelerator().FloatTensor([float(scaled_norm)])",
      "MoE norm averaging tensor"),
    C("torch.cuda.reset_max_memory_cached()", "torch_cuda_api", "replace", True,
      "get_accelerator().reset_max_memory_cached()",
      "reset_* resolves the current CUDA device and raises without CUDA"),
    C("torch.cuda.reset_max_memory_allocated()", "torch_cuda_api", "replace", True,
      "get_accelerator().reset_max_memory_allocated()",
      "same"),
    C("new_alloced = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "new_alloced = get_accelerator().memory_allocated()",
      "diagnostic: silently 0 on NPU"),
    C("new_cached = torch.cuda.memory_cached()", "torch_cuda_api", "replace", False,
      "new_cached = get_accelerator().memory_cached()",
      "diagnostic: silently 0 on NPU"),
    C("max_alloced = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "max_alloced = get_accelerator().max_memory_allocated()",
      "diagnostic: silently 0 on NPU"),
    C("max_cached = torch.cuda.max_memory_cached()", "torch_cuda_api", "replace", False,
      "max_cached = get_accelerator().max_memory_cached()",
      "diagnostic: silently 0 on NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_parallel_state", "megatron/core/parallel_state.py", "explicit_replacement",
  "Megatron-LM core/parallel_state.py (initialize_model_parallel with NCCL communicator options, SHARP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the HCCL process-group options below reference torch_npu directly"),
    C("nccl_options = torch.distributed.ProcessGroupNCCL.Options()", "dist_backend", "replace", True,
      "nccl_options = torch_npu._C._distributed_c10d.ProcessGroupHCCL.Options()",
      "ProcessGroupNCCL does not exist in a torch build without NCCL; raises as soon as a communicator config file is given"),
    C("nccl_options.config.cga_cluster_size = ", "dist_backend", "removal", True, None,
      "NCCL CTA/CGA knobs have no HCCL counterpart; HCCL options expose hccl_config (e.g. hccl_buffer_size) instead"),
    C("nccl_options.config.max_ctas = ", "dist_backend", "removal", True, None,
      "NCCL-only option"),
    C("nccl_options.config.min_ctas = ", "dist_backend", "removal", True, None,
      "NCCL-only option"),
    C("group=get_data_parallel_group(), device_ids=[torch.cuda.current_device()]", "torch_cuda_api", "replace", False,
      "group=get_data_parallel_group(), device_ids=[torch.npu.current_device()]",
      "only under --use-sharp (InfiniBand SHARP), which has no Ascend meaning; fix or drop the option"),
    C('os.environ["NCCL_COLLNET_ENABLE"] = "0"', "env_var", "removal", False, None,
      "NCCL CollNet/SHARP switch; ignored by HCCL, only under --use-sharp"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_tp_random", "megatron/core/tensor_parallel/random.py", "explicit_replacement",
  "Megatron-LM core/tensor_parallel/random.py (CudaRNGStatesTracker, model_parallel_cuda_manual_seed, checkpoint)", [
    C("from torch.cuda import _lazy_call", "torch_cuda_api", "replace", True,
      "from torch_npu.npu import _lazy_call",
      "torch.cuda._lazy_call only queues callbacks until CUDA initialises, which never happens on NPU: the RNG state "
      "would silently never be set (torch_npu.npu._lazy_call location unconfirmed in the notes)"),
    C("from torch.cuda import device as device_ctx_manager", "torch_cuda_api", "replace", False,
      "from torch_npu.npu import device as device_ctx_manager",
      "only used on the old-PyTorch _cuda_setRNGState branch, which is not taken on a torch_npu build"),
    C("device = torch.device('cuda')", "device_type", "replace", True,
      "device = torch.device('npu')",
      "default RNG device"),
    C("device = torch.device('cuda', device)", "device_type", "replace", True,
      "device = torch.device('npu', device)",
      "integer device index path"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "idx = torch.npu.current_device()",
      "raises without CUDA"),
    C("default_generator = torch.cuda.default_generators[idx]", "torch_cuda_api", "replace", True,
      "default_generator = torch.npu.default_generators[idx]",
      "empty tuple without CUDA (IndexError); MSTT notes default_generators needs manual change"),
    C("orig_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_rng_state = torch.npu.get_rng_state()",
      "device RNG state"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(seed)",
      "seeding the CUDA generator leaves the NPU generator unseeded; TP ranks would share dropout masks"),
    C("new_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "new_state = torch.npu.get_rng_state()",
      "tracked state"),
    C("orig_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "orig_cuda_rng_state = torch.npu.get_rng_state()",
      "fork snapshot"),
    C("self.states_[name] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self.states_[name] = torch.npu.get_rng_state()",
      "fork write-back"),
    C("torch.cuda.manual_seed(data_parallel_seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(data_parallel_seed)",
      "data-parallel default seed"),
    C("ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "ctx.fwd_cuda_rng_state = torch.npu.get_rng_state()",
      "forward snapshot for recomputation"),
    C("bwd_cuda_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "bwd_cuda_rng_state = torch.npu.get_rng_state()",
      "backward snapshot"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_fused_kernels", "megatron/fused_kernels/__init__.py", "kernel_rewrite",
  "Megatron-LM fused_kernels/__init__.py (JIT nvcc build of the scaled masked softmax kernels)", [
    C("_, bare_metal_major, bare_metal_minor = _get_cuda_bare_metal_version(", "custom_cuda_extension", "replace", True,
      "return  # Ascend: no nvcc build; the masked softmax comes from torch_npu.npu_scaled_masked_softmax",
      "CUDA_HOME is None on an Ascend host, so probing nvcc raises before anything is built"),
    C("scaled_upper_triang_masked_softmax_cuda = _cpp_extention_load_helper(", "custom_cuda_extension", "removal", False,
      None, "dead once load() returns early; the .cu kernel has no NPU build"),
    C("scaled_masked_softmax_cuda = _cpp_extention_load_helper(", "custom_cuda_extension", "removal", False,
      None, "same"),
    C("scaled_softmax_cuda = _cpp_extention_load_helper(", "custom_cuda_extension", "removal", False,
      None, "same"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_fused_softmax", "megatron/model/fused_softmax.py", "kernel_rewrite",
  "Megatron-LM model/fused_softmax.py (FusedScaleMaskSoftmax over the JIT-built CUDA softmax kernels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the rewritten fused path calls torch_npu.npu_scaled_masked_softmax"),
    C("return scaled_masked_softmax_cuda.get_batch_per_block(sq, sk, b, np)", "custom_cuda_extension", "replace", True,
      "return 1  # torch_npu.npu_scaled_masked_softmax has no batch-per-block tiling constraint",
      "is_kernel_available() imports the nvcc-built module, which does not exist on Ascend (ImportError in forward)"),
    C("probs = ScaledUpperTriangMaskedSoftmax.apply(input, scale)", "npu_fused_op", "replace", True,
      "probs = torch_npu.npu_scaled_masked_softmax(input.view(b, np, sq, sk), mask, scale, True)",
      "CUDA upper-triangular softmax kernel replaced by the NPU fused op with fixed_triu_mask=True"),
    C("return ScaledMaskedSoftmax.apply(input, mask, scale)", "npu_fused_op", "replace", True,
      "return torch_npu.npu_scaled_masked_softmax(input, mask, scale, False)",
      "padding-mask path"),
    C("return ScaledSoftmax.apply(input, scale)", "npu_fused_op", "replace", True,
      "return torch_npu.npu_scaled_masked_softmax(input, torch.zeros_like(input, dtype=torch.bool), scale, False)",
      "no-mask path"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_tp_layers", "megatron/core/tensor_parallel/layers.py", "explicit_replacement",
  "Megatron-LM core/tensor_parallel/layers.py (VocabParallelEmbedding, ColumnParallelLinear, async TP linear)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "the CUDA decorators track CUDA autocast state; only matters when the model runs under NPU autocast, which "
      "Megatron's fp16/bf16 path does not use"),
    C("import fused_weight_gradient_mlp_cuda", "custom_cuda_extension", "replace", False,
      "fused_weight_gradient_mlp_cuda = None  # apex CUDA extension; no Ascend build",
      "guarded import: it just sets the flag False; the failures are labelled at the check and call sites"),
    C("device=torch.cuda.current_device(), dtype=config.params_dtype)", "torch_cuda_api", "replace", True,
      "device=torch.npu.current_device(), dtype=config.params_dtype)",
      "embedding weight allocated on the CUDA current device (raises without CUDA)"),
    C("dim_size, dtype=input.dtype, device=torch.cuda.current_device(), requires_grad=False", "torch_cuda_api",
      "replace", True,
      "dim_size, dtype=input.dtype, device=torch.npu.current_device(), requires_grad=False",
      "reduce-scatter output buffer for sequence parallelism"),
    C("fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32(", "custom_cuda_extension", "replace", True,
      "weight.main_grad.add_(torch.matmul(grad_output.t(), total_input))  # unfused wgrad accumulation on NPU",
      "apex CUDA kernel does not exist on Ascend; gradient_accumulation_fusion is on by default in Megatron"),
    C("fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp16(", "custom_cuda_extension", "replace", True,
      "weight.main_grad.add_(torch.matmul(grad_output.t(), total_input).to(weight.main_grad.dtype))",
      "same for fp16/bf16 main_grad"),
    C("=device=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device=torch.npu.current_device(),",
      "ColumnParallelLinear weight allocated on the CUDA current device"),
    C("torch.empty(self.output_size_per_partition, dtype=config.params_dtype).cuda()", "tensor_to_device", "replace", True,
      "torch.empty(self.output_size_per_partition, dtype=config.params_dtype).npu()",
      ".cuda() raises 'Torch not compiled with CUDA enabled'"),
    C("if self.gradient_accumulation_fusion and not _grad_accum_fusion_available:", "custom_cuda_extension", "replace", True,
      "if self.gradient_accumulation_fusion and not (_grad_accum_fusion_available or torch.npu.is_available()):",
      "with the default --gradient-accumulation-fusion the layer raises at construction on Ascend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_clip_grads", "megatron/core/optimizer/clip_grads.py", "explicit_replacement",
  "Megatron-LM core/optimizer/clip_grads.py (apex amp_C multi_tensor_l2norm / multi_tensor_scale)", [
    C("=import amp_C", "fused_optimizer", "removal", True, None,
      "amp_C is apex's CUDA extension; there is no Ascend build (msFmkTransplt deletes this import)"),
    C("from apex.multi_tensor_apply import multi_tensor_applier", "fused_optimizer", "removal", False, None,
      "dead once the amp_C calls are replaced; whether the Ascend apex patch still ships multi_tensor_apply is unconfirmed"),
    C("assert param.grad.type() == 'torch.cuda.FloatTensor'", "device_type", "replace", True,
      "assert param.grad.type() == 'torch.npu.FloatTensor'",
      "on Ascend the type string is torch.npu.FloatTensor, so the assert fires on every step"),
    C("total_norm_cuda = torch.tensor([float(total_norm)], dtype=torch.float, device='cuda')", "device_type", "replace",
      True, "total_norm_cuda = torch.tensor([float(total_norm)], dtype=torch.float, device='npu')",
      "inf-norm reduction buffer on a cuda device"),
    C("=dummy_overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", "removal", True, None,
      "only feeds the amp_C kernel; torch.cuda.IntTensor raises without CUDA"),
    C("grad_norm, _ = multi_tensor_applier(", "fused_optimizer", "replace", True,
      "grad_norm = torch.norm(torch.stack([torch.norm(g.float(), 2.0) for g in grads_for_norm]), 2.0)",
      "amp_C.multi_tensor_l2norm is a CUDA kernel; compute the L2 norm with torch ops (or torch._foreach_norm)"),
    C("grad_norm = torch.cuda.FloatTensor([0])", "torch_cuda_api", "replace", True,
      "grad_norm = torch.zeros(1, dtype=torch.float, device='npu')",
      "legacy torch.cuda tensor type"),
    C("clip_overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", "removal", True, None,
      "only feeds amp_C.multi_tensor_scale"),
    C("=multi_tensor_applier(", "fused_optimizer", "replace", True,
      "torch._foreach_mul_(grads, clip_coeff)",
      "amp_C.multi_tensor_scale replaced by a foreach scale"),
    C("total_num_zeros = torch.tensor([0.0], dtype=torch.float, device='cuda')", "device_type", "replace", True,
      "total_num_zeros = torch.tensor([0.0], dtype=torch.float, device='npu')",
      "zero-count accumulator reduced over HCCL must live on the NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_optimizer_init", "megatron/core/optimizer/__init__.py", "explicit_replacement",
  "Megatron-LM core/optimizer/__init__.py (apex FusedAdam/FusedSGD as the base optimizers)", [
    C("from apex.optimizers import FusedAdam as Adam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW as Adam",
      "apex FusedAdam needs apex's CUDA extensions (not available on Ascend); torch_npu ships NpuFusedAdamW "
      "(AdamW semantics, as Megatron uses decoupled weight decay)"),
    C("from apex.optimizers import FusedSGD as SGD", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedSGD as SGD",
      "same for SGD"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_initialize", "megatron/initialize.py", "explicit_replacement",
  "Megatron-LM initialize.py (initialize_megatron, _initialize_distributed, seeds, JIT fuser warm-up)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "first module of the training entry path that touches the device; registers the npu backend and HCCL"),
    C('assert torch.cuda.is_available(), "Megatron requires CUDA."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Megatron requires an NPU."',
      "always False on an Ascend host"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()",
      "0 on Ascend: set_device and the whole model-parallel group setup are silently skipped"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)",
      "raises without CUDA"),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 0:",
      "0 on Ascend, so the model-parallel RNG tracker is never seeded and the first tracker fork() raises"),
    C("torch._C._jit_set_nvfuser_enabled(True)", "compile_mode", "removal", False, None,
      "nvfuser is a CUDA-only TorchScript fuser; on NPU the JIT helpers run unfused (unconfirmed in the notes)"),
    C('args.ffn_hidden_size // args.tensor_model_parallel_size, dtype=dtype, device="cuda"', "device_type", "replace",
      True, 'args.ffn_hidden_size // args.tensor_model_parallel_size, dtype=dtype, device="npu"',
      "JIT warm-up tensors allocated on cuda"),
    C('=device="cuda",', "device_type", "replace", True,
      'device="npu",',
      "bias-gelu warm-up input"),
    C('(seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device="cuda",', "device_type", "replace",
      True, '(seq_length, args.micro_batch_size, args.hidden_size), dtype=dtype, device="npu",',
      "bias-dropout-add warm-up input"),
    C('(seq_length, args.micro_batch_size, args.hidden_size), device="cuda", dtype=dtype,', "device_type", "replace",
      True, '(seq_length, args.micro_batch_size, args.hidden_size), device="npu", dtype=dtype,',
      "bias-dropout-add warm-up residual"),
    C('bias = torch.rand((args.hidden_size), dtype=dtype, device="cuda").expand_as(residual)', "device_type", "replace",
      True, 'bias = torch.rand((args.hidden_size), dtype=dtype, device="npu").expand_as(residual)',
      "bias-dropout-add warm-up bias"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op without CUDA; the warm-up tensors' NPU cache is simply not released"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_arguments", "megatron/arguments.py", "explicit_replacement",
  "Megatron-LM arguments.py (validate_args checks and the distributed/mixed-precision argument groups)", [
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "--use-flash-attn maps to torch_npu.npu_fusion_attention on Ascend; get_device_capability raises without CUDA "
      "and returns None (or an env-configured fake) under torch_npu, so the sm80 gate is meaningless"),
    C('assert major >= 8, "--use-flash-attn requires an Ampere (sm80) or newer GPU"', "device_capability_check",
      "removal", True, None, "goes with the capability query above"),
    C("group.add_argument('--distributed-backend', default='nccl',", "dist_backend", "replace", True,
      "group.add_argument('--distributed-backend', default='hccl',",
      "init_process_group(backend='nccl') fails on Ascend; HCCL is the collective backend"),
    C("choices=['nccl', 'gloo'],", "dist_backend", "replace", True,
      "choices=['nccl', 'gloo', 'hccl'],",
      "otherwise '--distributed-backend hccl' is rejected by argparse"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_pretrain_sh", "examples/pretrain_gpt_distributed.sh", "explicit_replacement",
  "Megatron-LM examples/pretrain_gpt_distributed.sh (torchrun launcher with NCCL environment)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries and env must be loaded before torch_npu can start"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL InfiniBand switch; HCCL ignores it and has no equivalent"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL ignores NCCL_SOCKET_IFNAME and picks the host NIC by its own priority; on multi-NIC nodes the pinned "
      "NIC is silently lost and cross-node link setup can fail"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "log verbosity only"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored by CANN, but it lists every device of an 8-NPU node so nothing changes here; renamed to keep the intent"),
    C("--distributed-backend nccl", "dist_backend", "replace", True,
      "--distributed-backend hccl",
      "explicit NCCL backend overrides any default; fails at init_process_group on Ascend"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv", "device_type", "replace", False,
      "npu-smi info",
      "nvidia-smi is absent; the script has no set -e, so this only prints an error"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_flash_attention", "megatron/model/flash_attention.py", "kernel_rewrite",
  "Megatron-LM FlashSelfAttention (model/transformer.py) over flash-attn's varlen kernel", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention"),
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_func", "attention_kernel", "replace", False,
      "flash_attn_unpadded_func = torch_npu.npu_fusion_attention",
      "guarded import: flash-attn cannot be installed on Ascend, so it just leaves None; failures are at the assert "
      "and call site"),
    C("from flash_attn.flash_attn_interface import flash_attn_varlen_func as flash_attn_unpadded_func", "attention_kernel",
      "removal", False, None, "fallback import for newer flash-attn; dead on Ascend"),
    C("assert flash_attn_unpadded_func is not None, ('Please install FlashAttention first, '", "attention_kernel",
      "removal", True, None,
      "fires at construction on Ascend because flash-attn is absent"),
    C("assert all((i.is_cuda for i in (q, k, v)))", "device_type", "replace", True,
      "assert all((i.is_npu for i in (q, k, v)))",
      "is_cuda is False for NPU tensors"),
    C("output = flash_attn_unpadded_func(", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "TND", atten_mask=self.causal_mask if is_causal '
      'else None, scale=self.softmax_scale or 1.0 / math.sqrt(q.shape[-1]), keep_prob=1.0 - dropout_p, '
      'actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), '
      'sparse_mode=3 if is_causal else 0)[0]',
      "varlen flash-attn kernel -> NPU fusion attention in TND layout with cumulative sequence lengths"),
    C("with torch.random.fork_rng(devices=[torch.cuda.current_device()]):", "torch_cuda_api", "replace", True,
      'with torch.random.fork_rng(devices=[torch.npu.current_device()], device_type="npu"):',
      "fork_rng defaults to the cuda device type and queries torch.cuda.current_device(); both fail on Ascend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("cai_initialize", "colossalai/initialize.py", "device_branch_or_abstraction",
  "ColossalAI initialize.py (launch / launch_from_torch before the accelerator abstraction)", [
    C("index = dist.get_rank() % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "index = dist.get_rank() % get_accelerator().device_count()",
      "device_count() is 0 without CUDA (ZeroDivisionError) once the guard below is fixed"),
    C("torch.cuda.set_device(index)", "torch_cuda_api", "replace", True,
      "get_accelerator().set_device(index)",
      "raises without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True,
      "get_accelerator().manual_seed_all(seed)",
      "queued lazily for CUDA and never applied: the NPU generators stay unseeded"),
    C('=backend: str = "nccl",', "dist_backend", "replace", True,
      "backend: str = None,  # resolved to get_accelerator().communication_backend ('hccl' on Ascend)",
      "NCCL default for init_process_group fails on Ascend"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if get_accelerator().is_available():",
      "False on Ascend, so no rank ever binds its device and every process lands on NPU 0"),
    C("def launch_from_torch(", "dist_backend", "replace", True,
      "def launch_from_torch(config: Union[str, Path, Config, Dict], backend: str = None, seed: int = 1024, verbose: bool = True):",
      "torchrun entry point passes its own 'nccl' default down to launch()"),
])

# ---------------------------------------------------------------------------------------------------------------
E("cai_triton_rmsnorm", "colossalai/kernel/triton/rms_layernorm.py", "kernel_rewrite",
  "ColossalAI kernel/triton/rms_layernorm.py (Triton RMSNorm used by the inference engine)", [
    C("num_warps = min(max(BLOCK_SIZE // 256, 1), 8)", "triton_kernel_tuning", "replace", False,
      "num_warps = 1  # triton-ascend schedules programs onto AI vector cores; warp count is not the tuning knob",
      "CUDA warp heuristic; performance-only under triton-ascend, unconfirmed in the notes"),
    C("_rmsnorm_kernel[(M,)](x, y, weight, x.stride(0), N, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)",
      "triton_kernel_tuning", "replace", False,
      "_rmsnorm_kernel[(M,)](x, y, weight, x.stride(0), N, eps, BLOCK_SIZE=BLOCK_SIZE)",
      "one program per row with a CUDA warp hint; on Ascend a core-count-sized grid looping over rows (or "
      "torch_npu.npu_rms_norm) is the usual rewrite; performance-only, unconfirmed"),
])

# ---------------------------------------------------------------------------------------------------------------
E("ds_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DeepSpeed/Megatron training image (NGC PyTorch base, apex with CUDA extensions, flash-attn, DS_BUILD_OPS)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10  # then: pip install torch==2.1.0 torch-npu==2.1.0.post12",
      "NGC image ships a CUDA torch and no CANN/torch_npu; the Ascend image provides CANN (set_env) and the NPU driver "
      "mounts"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 8.0 8.6 9.0+PTX"', "env_var", "removal", False, None,
      "CUDA arch list; meaningless without nvcc"),
    C("ENV DS_BUILD_OPS=1", "custom_cuda_extension", "replace", False,
      "ENV DS_BUILD_OPS=0",
      "pre-building every op at install time assumes the CUDA builders; leaving ops to the NPU builders' JIT path is "
      "safer (unconfirmed whether the NPU builders pre-compile cleanly)"),
    C("RUN git clone https://github.com/NVIDIA/apex && cd apex && \\", "fused_optimizer", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex && cd apex && bash scripts/build.sh --python=3.10 && \\",
      "NVIDIA apex --cuda_ext needs nvcc and fails the image build; Ascend's apex patch is the NPU variant"),
    C("RUN pip install --no-cache-dir flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built on Ascend; the attention path uses torch_npu.npu_fusion_attention"),
    C("RUN pip install --no-cache-dir triton==2.1.0", "triton_kernel_tuning", "replace", False,
      "RUN pip install --no-cache-dir triton-ascend",
      "CUDA Triton cannot launch on NPU; the Triton kernels are optional (HAS_TRITON-guarded)"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (MindCluster default 1)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_environment", "environment.yml", "explicit_replacement",
  "Megatron-LM conda environment.yml (pytorch-cuda, nvcc, flash-attn, TransformerEngine)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "NVIDIA conda channel; harmless once the CUDA packages are gone"),
    C("=- pytorch-cuda=12.1", "device_type", "removal", True, None,
      "selects the CUDA build of torch; torch_npu is built against the CPU torch wheel (and there is no linux-aarch64 "
      "pytorch-cuda for Kunpeng hosts)"),
    C("=- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None,
      "only needed to JIT-build the CUDA fused kernels, which are not built on Ascend"),
    C("=- nccl", "dist_backend", "removal", False, None,
      "NCCL library unused with HCCL"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post12",
      "torch_npu pinned to the same torch 2.1.0"),
    C("=- flash-attn==2.3.6", "attention_kernel", "removal", True, None,
      "flash-attn build fails without CUDA, so the environment cannot be created"),
    C("=- transformer-engine[pytorch]==1.2.0", "distributed_framework", "removal", True, None,
      "no NPU build of TransformerEngine; MindSpeed provides the TE-equivalent modules on Ascend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("mg_utils", "megatron/utils.py", "explicit_replacement",
  "Megatron-LM utils.py (report_memory, model placement, TP batch broadcast, LTR masks)", [
    C("string += ' | allocated: {}'.format(torch.cuda.memory_allocated() / mega_bytes)", "torch_cuda_api", "replace",
      False, "string += ' | allocated: {}'.format(torch.npu.memory_allocated() / mega_bytes)",
      "diagnostic: silently 0 while CUDA is uninitialised"),
    C("string += ' | max allocated: {}'.format(torch.cuda.max_memory_allocated() / mega_bytes)", "torch_cuda_api",
      "replace", False, "string += ' | max allocated: {}'.format(torch.npu.max_memory_allocated() / mega_bytes)",
      "diagnostic"),
    C("string += ' | reserved: {}'.format(torch.cuda.memory_reserved() / mega_bytes)", "torch_cuda_api", "replace",
      False, "string += ' | reserved: {}'.format(torch.npu.memory_reserved() / mega_bytes)",
      "diagnostic"),
    C("string += ' | max reserved: {}'.format(torch.cuda.max_memory_reserved() / mega_bytes)", "torch_cuda_api",
      "replace", False, "string += ' | max reserved: {}'.format(torch.npu.max_memory_reserved() / mega_bytes)",
      "diagnostic"),
    C("model_module.cuda(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "model_module.npu(torch.npu.current_device())",
      "Module.cuda() and torch.cuda.current_device() both raise without CUDA"),
    C("flags = torch.cuda.LongTensor([1 if tokens.numel() > 0 else 0])", "torch_cuda_api", "replace", True,
      "flags = torch.tensor([1 if tokens.numel() > 0 else 0], dtype=torch.long, device='npu')",
      "legacy torch.cuda.LongTensor; the broadcast over HCCL needs an NPU tensor"),
])
