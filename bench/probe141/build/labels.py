# Labels for probe141: PyTorch Lightning / Lightning Fabric internals (pre-NPU) + user scripts and configs.
# One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU + torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


T, F = True, False
IMPORT_NOTE = ("torch_npu must be imported to register the 'npu' device and torch.npu; the project pins torch 2.1 "
               "(no device-backend autoload, which only exists since torch_npu 2.5.1)")

# ---------------------------------------------------------------------------------------------------------------
# Accelerator modules: labelled as if the CUDA accelerator module is copied into the NPU accelerator (npu.py) and
# every line of the copy that would still talk to CUDA is edited.
# ---------------------------------------------------------------------------------------------------------------
E("fabric_cuda_accelerator", "src/lightning/fabric/accelerators/cuda.py", "explicit_replacement",
  "lightning.fabric.accelerators.cuda (CUDAAccelerator, num_cuda_devices, find_usable_cuda_devices, NVML count)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      IMPORT_NOTE + "; this module is imported by `import lightning`, so it is the one place the fork needs it"),
    C('if device.type != "cuda":', "device_type", "replace", T, 'if device.type != "npu":',
      "devices handed to the NPU accelerator are torch.device('npu', i); the CUDA check would raise ValueError"),
    C("_check_cuda_matmul_precision(device)", "device_capability_check", "removal", F, None,
      "TF32/tensor-core advice is CUDA-specific; on NPU the helper returns early because torch.cuda.is_available() "
      "is False, so keeping it is harmless"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", T, "torch.npu.set_device(device)",
      "torch.cuda.set_device raises on a host without CUDA; NPU needs torch.npu.set_device (torch_npu.npu.set_device)"),
    C("return _parse_gpu_ids(devices, include_cuda=True)", "device_type", "replace", T,
      "return _parse_gpu_ids(devices, include_npu=True)",
      "include_cuda validates requested ids against the CUDA device count (0 on an NPU host) -> MisconfigurationException"),
    C('return [torch.device("cuda", i) for i in devices]', "device_type", "replace", T,
      'return [torch.device("npu", i) for i in devices]',
      "parallel devices must be NPU devices, otherwise every strategy moves the model to 'cuda:i'"),
    C('=\"cuda\",', "device_type", "replace", T, '"npu",',
      "registry name of the new accelerator; connectors/configs select it with accelerator='npu'"),
    C('torch.tensor(0, device=torch.device("cuda", gpu_idx))', "tensor_to_device", "replace", T,
      'torch.tensor(0, device=torch.device("npu", gpu_idx))',
      "probe allocation on CUDA raises RuntimeError on every index -> every device reported as occupied"),
    C("=return torch.cuda.device_count()", "torch_cuda_api", "replace", T, "return torch.npu.device_count()",
      "live path for torch >= 2.0; torch.cuda.device_count() is 0 on an NPU host so is_available()/auto count fail"),
    C("return torch.cuda.device_count() if nvml_count < 0 else nvml_count", "torch_cuda_api", "replace", F,
      "return torch.npu.device_count()",
      "dead code for torch >= 2.0 (project pins 2.1); port only for consistency"),
    C("return torch.cuda.is_available() if _TORCH_GREATER_EQUAL_2_0 else num_cuda_devices() > 0", "torch_cuda_api",
      "replace", T, "return torch.npu.is_available()",
      "is_cuda_available() is False on an NPU host; the NPU availability check must ask torch.npu"),
    C("torch._C._cuda_clearCublasWorkspaces()", "torch_cuda_api", "removal", F, None,
      "cuBLAS workspace API; guarded by hasattr(torch._C, ...) so it is skipped on CPU-only torch builds used with "
      "torch_npu; dead code on NPU"),
    C("    torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "    torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op without CUDA; NPU cache would not be released at teardown (memory only)"),
  ])

E("pl_cuda_accelerator", "src/lightning/pytorch/accelerators/cuda.py", "explicit_replacement",
  "lightning.pytorch.accelerators.cuda (Trainer CUDAAccelerator, get_device_stats, get_nvidia_gpu_stats)", [
    C("from lightning.fabric.accelerators.cuda import _check_cuda_matmul_precision, _clear_cuda_memory, num_cuda_devices",
      "device_type", "replace", T,
      "from lightning.fabric.accelerators.npu import _clear_npu_memory as _clear_cuda_memory, "
      "num_npu_devices as num_cuda_devices",
      "num_cuda_devices() counts CUDA devices (0 on NPU) -> is_available()/auto_device_count() wrong; aliasing keeps "
      "the two identical _clear_cuda_memory() call sites untouched"),
    C('if device.type != "cuda":', "device_type", "replace", T, 'if device.type != "npu":',
      "root device is torch.device('npu', i); CUDA check raises MisconfigurationException"),
    C("_check_cuda_matmul_precision(device)", "device_capability_check", "removal", F, None,
      "CUDA tensor-core hint; returns early on NPU, so only cosmetic"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", T, "torch.npu.set_device(device)",
      "raises without CUDA; each rank must bind its NPU"),
    C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", F, None,
      "CUDA runtime ordering variable, meaningless for the Ascend runtime; harmless if left"),
    C('devices = os.getenv("CUDA_VISIBLE_DEVICES", all_gpu_ids)', "env_var", "replace", F,
      'devices = os.getenv("ASCEND_RT_VISIBLE_DEVICES", all_gpu_ids)',
      "only feeds an info log line; the Ascend runtime mask is ASCEND_RT_VISIBLE_DEVICES"),
    C("return torch.cuda.memory_stats(device)", "torch_cuda_api", "replace", T,
      "return torch.npu.memory_stats(device)",
      "without CUDA torch.cuda.memory_stats returns {} -> DeviceStatsMonitor silently logs nothing for the NPU"),
    C("return _parse_gpu_ids(devices, include_cuda=True)", "device_type", "replace", T,
      "return _parse_gpu_ids(devices, include_npu=True)",
      "device ids would be validated against the CUDA count (0) and rejected"),
    C('return [torch.device("cuda", i) for i in devices]', "device_type", "replace", T,
      'return [torch.device("npu", i) for i in devices]', "Trainer strategies need npu devices"),
    C('=\"cuda\",', "device_type", "replace", T, '"npu",', "registry name used by Trainer(accelerator='npu')"),
    C('nvidia_smi_path = shutil.which("nvidia-smi")', "torch_cuda_api", "replace", F,
      'npu_smi_path = shutil.which("npu-smi")',
      "public helper not called by Lightning 2.x itself; nvidia-smi is absent on NPU hosts and npu-smi has a different "
      "query syntax, so the function needs a rewrite (or dropping) in the NPU copy"),
    C('cuda_visible_devices = os.getenv("CUDA_VISIBLE_DEVICES", default=default).split(",")', "env_var", "replace", F,
      'visible_devices = os.getenv("ASCEND_RT_VISIBLE_DEVICES", default=default).split(",")',
      "only used by get_nvidia_gpu_stats (see above)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Connectors, strategies, plugins, utilities: an NPU branch is added next to the CUDA one.
# ---------------------------------------------------------------------------------------------------------------
E("pl_accelerator_connector", "src/lightning/pytorch/trainer/connectors/accelerator_connector.py",
  "device_branch_or_abstraction",
  "lightning.pytorch.trainer.connectors.accelerator_connector._AcceleratorConnector", [
    C("from lightning.pytorch.accelerators.cuda import CUDAAccelerator", "device_type", "npu_only_addition", T,
      "from lightning.pytorch.accelerators.npu import NPUAccelerator",
      "the NPU branches below need the NPU accelerator class"),
    C("if CUDAAccelerator.is_available():  # also true on ROCm builds of torch", "device_type", "add_branch", T,
      'if NPUAccelerator.is_available():\n            return "npu"',
      "accelerator='auto' (the default) silently falls back to 'cpu' on an NPU host"),
    C("if self._strategy_flag.parallel_devices[0].type == \"cuda\":", "device_type", "add_branch", F,
      'if self._strategy_flag.parallel_devices[0].type == "npu":',
      "only for strategy instances built with explicit parallel_devices; without the branch the flag stays 'auto' and "
      "the auto branch still resolves to npu"),
    C("and isinstance(self.accelerator, CUDAAccelerator)", "device_type", "add_branch", F,
      "and isinstance(self.accelerator, (CUDAAccelerator, NPUAccelerator))",
      "interactive/notebook single-device default; only matters inside Jupyter (otherwise all devices are used)"),
    C("if isinstance(self._accelerator_flag, (CUDAAccelerator, MPSAccelerator)) or (", "device_type", "add_branch", T,
      "if isinstance(self._accelerator_flag, (CUDAAccelerator, NPUAccelerator, MPSAccelerator)) or (",
      "single-device run with an accelerator instance: SingleDeviceStrategy would be created with device='cpu'"),
    C('and self._accelerator_flag in ("cuda", "gpu", "mps")', "device_type", "add_branch", T,
      'and self._accelerator_flag in ("cuda", "gpu", "mps", "npu")',
      "Trainer(accelerator='npu', devices=1) would silently train on the CPU"),
    C(') and self._accelerator_flag not in ("cuda", "gpu"):', "distributed_framework", "add_branch", F,
      ') and self._accelerator_flag not in ("cuda", "gpu", "npu"):',
      "FSDP gate; Ascend's 2.7.1 API table marks FullyShardedDataParallel as unsupported, so whether to open it for "
      "NPU is unconfirmed"),
    C('device = "cpu" if self._accelerator_flag == "cpu" else "cuda"', "amp", "replace", T,
      'device = "npu" if self._accelerator_flag == "npu" else ("cpu" if self._accelerator_flag == "cpu" else "cuda")',
      "MixedPrecision would autocast/scale for 'cuda': autocast is disabled with a warning and no AMP happens on NPU"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "npu_only_addition", F,
      'os.environ.setdefault("HCCL_DETERMINISTIC", "true")',
      "Trainer(deterministic=True): HCCL reductions are only deterministic with HCCL_DETERMINISTIC "
      "(ascend-distributed notes); the cuBLAS variable itself is harmless"),
  ])

E("pl_ddp_strategy", "src/lightning/pytorch/strategies/ddp.py", "device_branch_or_abstraction",
  "lightning.pytorch.strategies.ddp.DDPStrategy", [
    C("ctx = torch.cuda.stream(torch.cuda.Stream()) if device_ids is not None else nullcontext()", "torch_cuda_api",
      "add_branch", T,
      "ctx = (torch.npu.stream(torch.npu.Stream()) if self.root_device.type == \"npu\" else "
      "torch.cuda.stream(torch.cuda.Stream())) if device_ids is not None else nullcontext()",
      "device_ids is [index] for NPU too, so torch.cuda.Stream() is constructed and raises without CUDA"),
    C('if self.root_device.type == "cuda":', "device_type", "add_branch", T,
      'if self.root_device.type in ("cuda", "npu"):',
      "user-supplied ddp_comm_hook (e.g. fp16_compress) would be silently ignored on NPU; default hooks are listed "
      "as supported in Ascend's API table"),
    C('if torch.distributed.get_backend() == "nccl":', "dist_backend", "add_branch", F,
      'if torch.distributed.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison is not rewritten by transfer_to_npu; on HCCL the else-branch plain barrier() works, "
      "so this only restores the device_ids hint"),
  ])

E("pl_deepspeed_strategy", "src/lightning/pytorch/strategies/deepspeed.py", "device_branch_or_abstraction",
  "lightning.pytorch.strategies.deepspeed.DeepSpeedStrategy", [
    C("from lightning.pytorch.accelerators.cuda import CUDAAccelerator", "distributed_framework", "npu_only_addition",
      T, "from lightning.pytorch.accelerators.npu import NPUAccelerator", "needed by the accelerator gate below"),
    C("if not isinstance(self.accelerator, CUDAAccelerator):", "distributed_framework", "add_branch", T,
      "if not isinstance(self.accelerator, (CUDAAccelerator, NPUAccelerator)):",
      "strategy='deepspeed' raises RuntimeError on NPU; upstream DeepSpeed has an NPU accelerator (hccl backend)"),
  ])

E("pl_amp_precision", "src/lightning/pytorch/plugins/precision/amp.py", "device_branch_or_abstraction",
  "lightning.pytorch.plugins.precision.amp.MixedPrecision (GradScaler + torch.autocast)", [
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "add_branch", T,
      'scaler = torch.npu.amp.GradScaler() if device == "npu" else torch.cuda.amp.GradScaler()',
      "CUDA GradScaler disables itself without CUDA -> fp16 gradients unscaled on NPU (silent underflow); "
      "torch.cuda.amp.GradScaler maps to torch_npu.npu.amp.GradScaler"),
  ])

E("pl_gpu_stats_monitor", "src/pytorch_lightning/callbacks/gpu_stats_monitor.py", "explicit_replacement",
  "pytorch_lightning 1.5 callbacks.gpu_stats_monitor.GPUStatsMonitor (nvidia-smi polling)", [
    C('if shutil.which("nvidia-smi") is None:', "torch_cuda_api", "replace", T,
      'if shutil.which("npu-smi") is None:',
      "raises MisconfigurationException on every NPU host (no NVIDIA driver)"),
    C('if trainer.strategy.root_device.type != "cuda":', "device_type", "replace", T,
      'if trainer.strategy.root_device.type != "npu":', "raises in setup() when training on NPU"),
    C("default = \",\".join(str(i) for i in range(torch.cuda.device_count()))", "torch_cuda_api", "replace", T,
      "default = \",\".join(str(i) for i in range(torch.npu.device_count()))",
      "device_count is 0 without CUDA -> empty id list, IndexError for device_id > 0"),
    C('cuda_visible_devices: List[str] = os.getenv("CUDA_VISIBLE_DEVICES", default=default).split(",")', "env_var",
      "replace", T,
      'visible_devices: List[str] = os.getenv("ASCEND_RT_VISIBLE_DEVICES", default=default).split(",")',
      "logical->physical id mapping must follow the Ascend runtime mask, otherwise stats of the wrong NPUs are logged"),
    C('shutil.which("nvidia-smi"),  # type: ignore', "torch_cuda_api", "replace", T,
      'shutil.which("npu-smi"), "info", "-t", "usages", "-i", npu_id,',
      "nvidia-smi --query-gpu has no npu-smi equivalent flags; the query and its CSV parsing must be rewritten "
      "(npu-smi info -t usages / -t temp per device)"),
  ])

E("pl_utilities_memory", "src/pytorch_lightning/utilities/memory.py", "device_branch_or_abstraction",
  "pytorch_lightning.utilities.memory (OOM detection for batch-size finder, garbage_collection_cuda, nvidia-smi map)", [
    C('and "CUDA" in exception.args[0]', "device_type", "add_branch", F,
      'and ("CUDA" in exception.args[0] or "NPU" in exception.args[0])',
      "batch-size scaling would not recognise an NPU OOM and crash instead of backing off; exact NPU OOM message "
      "text is unconfirmed in the knowledge notes"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", F,
      "        torch.npu.empty_cache() if torch.npu.is_available() else torch.cuda.empty_cache()",
      "silent no-op without CUDA; NPU caching allocator not released between batch-size trials (memory only)"),
    C('nvidia_smi_path = shutil.which("nvidia-smi")', "torch_cuda_api", "replace", T,
      'npu_smi_path = shutil.which("npu-smi")',
      "Trainer(log_gpu_memory=...) in 1.x calls get_memory_profile -> FileNotFoundError on NPU hosts"),
    C('[nvidia_smi_path, "--query-gpu=memory.used", "--format=csv,nounits,noheader"],', "torch_cuda_api", "replace",
      T, '[npu_smi_path, "info", "-t", "usages", "-i", str(npu_id)],',
      "npu-smi does not understand --query-gpu; per-device query and parsing must be rewritten"),
  ])

E("pl_trainer_setup", "src/lightning/pytorch/trainer/setup.py", "device_branch_or_abstraction",
  "lightning.pytorch.trainer.setup._log_device_info", [
    C('rank_zero_info(f"TPU available: {XLAAccelerator.is_available()}, using: {num_tpu_cores} TPU cores")',
      "device_type", "npu_only_addition", F,
      'rank_zero_info(f"NPU available: {NPUAccelerator.is_available()}, using: '
      '{trainer.num_devices if isinstance(trainer.accelerator, NPUAccelerator) else 0} NPUs")',
      "log line only"),
    C("=CUDAAccelerator.is_available()", "device_type", "add_branch", F,
      "CUDAAccelerator.is_available() and not isinstance(trainer.accelerator, CUDAAccelerator) or "
      "NPUAccelerator.is_available() and not isinstance(trainer.accelerator, NPUAccelerator)",
      "'available but not used' warning; cosmetic"),
  ])

E("pl_pytorch_profiler", "src/lightning/pytorch/profilers/pytorch.py", "device_branch_or_abstraction",
  "lightning.pytorch.profilers.pytorch.PyTorchProfiler (kineto activities, emit_nvtx)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "the ported lines reference torch_npu.profiler by name"),
    C("from torch.profiler import ProfilerAction, ProfilerActivity, tensorboard_trace_handler", "torch_cuda_api",
      "replace", F,
      "from torch_npu.profiler import ProfilerAction, ProfilerActivity, tensorboard_trace_handler",
      "msFmkTransplt/transfer_to_npu redirect these names to torch_npu.profiler; whether torch_npu's profiler accepts "
      "torch.profiler enums from the schedule wrapper is unconfirmed"),
    C('if self._profiler_kwargs.get("use_cuda", is_cuda_available()):', "device_type", "add_branch", T,
      'if self._profiler_kwargs.get("use_npu", torch.npu.is_available()):\n'
      "            activities.append(torch_npu.profiler.ProfilerActivity.NPU)",
      "without an NPU activity the trace silently contains only host-side ops"),
    C("self._parent_profiler = torch.cuda.profiler.profile()", "torch_cuda_api", "add_branch", F,
      'raise MisconfigurationException("emit_nvtx is not available on NPU; use torch_npu.npu.mstx ranges")',
      "opt-in emit_nvtx path calls the CUDA profiler API and fails on NPU"),
    C("self.profiler = self._create_profiler(torch.autograd.profiler.emit_nvtx)", "unsupported_op_workaround",
      "add_branch", F, "self.profiler = self._create_profiler(torch_npu.profiler.profile)",
      "torch.autograd.profiler.emit_nvtx is marked unsupported in Ascend's 2.7.1 API table; opt-in only"),
    C("torch.profiler.profile if _KINETO_AVAILABLE else torch.autograd.profiler.profile", "torch_cuda_api",
      "replace", T, "torch_npu.profiler.profile if _KINETO_AVAILABLE else torch.autograd.profiler.profile",
      "NPU kernels are only captured by torch_npu.profiler.profile (profiler redirect in transfer_to_npu)"),
  ])

E("fabric_connector", "src/lightning/fabric/connector.py", "device_branch_or_abstraction",
  "lightning.fabric.connector._Connector", [
    C("from lightning.fabric.accelerators.cuda import CUDAAccelerator", "device_type", "npu_only_addition", T,
      "from lightning.fabric.accelerators.npu import NPUAccelerator", "needed by the NPU branches below"),
    C('if self._strategy_flag.parallel_devices[0].type == "cuda":', "device_type", "add_branch", F,
      'if self._strategy_flag.parallel_devices[0].type == "npu":',
      "explicit parallel_devices only; the auto branch already resolves npu"),
    C("=if CUDAAccelerator.is_available():", "device_type", "add_branch", T,
      'if NPUAccelerator.is_available():\n            return "npu"',
      "Fabric() with accelerator='auto' silently picks the CPU on an NPU host"),
    C("supported_accelerators = [CUDAAccelerator, MPSAccelerator]", "device_type", "replace", T,
      "supported_accelerators = [CUDAAccelerator, NPUAccelerator, MPSAccelerator]",
      "single-device Fabric with an NPUAccelerator instance would get a CPU SingleDeviceStrategy"),
    C('supported_accelerators_str = ["cuda", "gpu", "mps"]', "device_type", "replace", T,
      'supported_accelerators_str = ["cuda", "gpu", "mps", "npu"]',
      "Fabric(accelerator='npu', devices=1) would silently run on the CPU"),
    C(') and self._accelerator_flag not in ("cuda", "gpu"):', "distributed_framework", "add_branch", F,
      ') and self._accelerator_flag not in ("cuda", "gpu", "npu"):',
      "FSDP gate; FSDP is marked unsupported in Ascend's 2.7.1 API table, so opening it is unconfirmed"),
    C('device = "cpu" if self._accelerator_flag == "cpu" else "cuda"', "amp", "replace", T,
      'device = "npu" if self._accelerator_flag == "npu" else ("cpu" if self._accelerator_flag == "cpu" else "cuda")',
      "16-mixed/bf16-mixed would autocast for 'cuda' -> autocast disabled, no AMP on NPU"),
  ])

E("fabric_cli", "src/lightning/fabric/cli.py", "device_branch_or_abstraction",
  "lightning.fabric.cli (`lightning run model` / `fabric run`, torchrun launch)", [
    C("from lightning.fabric.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator", "device_type",
      "replace", T,
      "from lightning.fabric.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator, NPUAccelerator",
      "needed by the npu branch in _get_num_processes"),
    C('_SUPPORTED_ACCELERATORS = ("cpu", "gpu", "cuda", "mps", "tpu")', "device_type", "replace", T,
      '_SUPPORTED_ACCELERATORS = ("cpu", "gpu", "cuda", "mps", "tpu", "npu")',
      "click.Choice rejects `--accelerator npu`"),
    C('elif accelerator == "cuda":', "device_type", "add_branch", T,
      'elif accelerator == "npu":\n        parsed_devices = NPUAccelerator.parse_devices(devices)',
      "without it 'npu' falls through to CPU parsing: --devices auto / -1 / '0,1' raise, an int count only works by "
      "accident"),
  ])

E("fabric_distributed", "src/lightning/fabric/utilities/distributed.py", "device_branch_or_abstraction",
  "lightning.fabric.utilities.distributed (_init_dist_connection, _sync_ddp, default backend helper)", [
    C("if torch_distributed_backend == \"nccl\" and \"TORCH_NCCL_ASYNC_ERROR_HANDLING\" not in os.environ:", "env_var",
      "add_branch", F,
      'if torch_distributed_backend == "hccl" and "HCCL_ASYNC_ERROR_HANDLING" not in os.environ:',
      "torch_npu's watchdog uses HCCL_ASYNC_ERROR_HANDLING (MindCluster notes: default 1); behaviour tweak only"),
    C('return "nccl" if device.type == "cuda" else "gloo"', "dist_backend", "add_branch", T,
      'return "hccl" if device.type == "npu" else ("nccl" if device.type == "cuda" else "gloo")',
      "DDP/DeepSpeed on NPU would init a gloo group and all-reduce NPU tensors over gloo (fails)"),
  ])

E("fabric_device_parser", "src/lightning/fabric/utilities/device_parser.py", "device_branch_or_abstraction",
  "lightning.fabric.utilities.device_parser (_parse_gpu_ids, _sanitize_gpu_ids, _get_all_available_gpus)", [
    C("=include_mps: bool = False,", "device_type", "npu_only_addition", T, "include_npu: bool = False,",
      "the NPU accelerator's parse_devices passes include_npu=True"),
    C("gpus = _normalize_parse_gpu_input_to_list(gpus, include_cuda=include_cuda, include_mps=include_mps)",
      "device_type", "replace", T,
      "gpus = _normalize_parse_gpu_input_to_list(gpus, include_cuda=include_cuda, include_mps=include_mps, "
      "include_npu=include_npu)", "devices=-1 must expand to all NPUs"),
    C("and len(_get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps)) == 1", "device_type",
      "replace", F,
      "and len(_get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps, include_npu=include_npu)) "
      "== 1", "torchelastic sanity-skip heuristic only"),
    C("return _sanitize_gpu_ids(gpus, include_cuda=include_cuda, include_mps=include_mps)", "device_type", "replace",
      T, "return _sanitize_gpu_ids(gpus, include_cuda=include_cuda, include_mps=include_mps, include_npu=include_npu)",
      "otherwise sanitize sees no device type selected"),
    C("def _sanitize_gpu_ids(gpus: List[int], include_cuda: bool = False, include_mps: bool = False) -> List[int]:",
      "device_type", "replace", T,
      "def _sanitize_gpu_ids(gpus: List[int], include_cuda: bool = False, include_mps: bool = False, "
      "include_npu: bool = False) -> List[int]:", "signature plumbing for include_npu"),
    C("if sum((include_cuda, include_mps)) == 0:", "device_type", "replace", T,
      "if sum((include_cuda, include_mps, include_npu)) == 0:",
      "ValueError('At least one gpu type should be specified!') when only NPUs are requested"),
    C("all_available_gpus = _get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps)",
      "device_type", "replace", T,
      "all_available_gpus = _get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps, "
      "include_npu=include_npu)", "requested NPU ids are checked against an empty list -> MisconfigurationException"),
    C("gpus: Union[int, List[int], Tuple[int, ...]], include_cuda: bool, include_mps: bool", "device_type", "replace",
      T, "gpus: Union[int, List[int], Tuple[int, ...]], include_cuda: bool, include_mps: bool, include_npu: bool = False",
      "signature plumbing for include_npu"),
    C("=return _get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps)", "device_type", "replace",
      T, "return _get_all_available_gpus(include_cuda=include_cuda, include_mps=include_mps, include_npu=include_npu)",
      "devices=-1 would expand to [] -> 'GPUs requested but none are available'"),
    C("def _get_all_available_gpus(include_cuda: bool = False, include_mps: bool = False) -> List[int]:",
      "device_type", "replace", T,
      "def _get_all_available_gpus(include_cuda: bool = False, include_mps: bool = False, "
      "include_npu: bool = False) -> List[int]:", "signature plumbing for include_npu"),
    C("from lightning.fabric.accelerators.cuda import _get_all_visible_cuda_devices", "device_type",
      "npu_only_addition", T, "from lightning.fabric.accelerators.npu import _get_all_visible_npu_devices",
      "NPU device enumeration"),
    C("cuda_gpus = _get_all_visible_cuda_devices() if include_cuda else []", "device_type", "add_branch", T,
      "npu_gpus = _get_all_visible_npu_devices() if include_npu else []", "enumerate NPUs next to CUDA/MPS"),
    C("return cuda_gpus + mps_gpus", "device_type", "replace", T, "return cuda_gpus + mps_gpus + npu_gpus",
      "NPU ids must be part of the available list"),
  ])

E("fabric_seed", "src/lightning/fabric/utilities/seed.py", "device_branch_or_abstraction",
  "lightning.fabric.utilities.seed (seed_everything, _collect_rng_states/_set_rng_states)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above is expected to seed registered custom devices too "
      "(unconfirmed in the knowledge notes), so reproducibility rather than correctness"),
    C('states["torch.cuda"] = torch.cuda.get_rng_state_all()', "torch_cuda_api", "add_branch", F,
      'states["torch.npu"] = torch.npu.get_rng_state_all()',
      "returns [] without CUDA: NPU RNG state is silently not checkpointed (exact-resume reproducibility only)"),
    C('torch.cuda.set_rng_state_all(rng_state_dict["torch.cuda"])', "torch_cuda_api", "add_branch", F,
      'torch.npu.set_rng_state_all(rng_state_dict["torch.npu"])', "counterpart of the collect branch"),
  ])

E("fabric_throughput", "src/lightning/fabric/utilities/throughput.py", "device_branch_or_abstraction",
  "lightning.fabric.utilities.throughput (get_available_flops, _CUDA_FLOPS table, ThroughputMonitor)", [
    C('if device.type == "cuda":', "device_type", "add_branch", F,
      'if device.type == "npu":\n        return _npu_available_flops(torch.npu.get_device_name(device), dtype)',
      "on npu get_available_flops returns None, so MFU is silently missing; Ascend peak-FLOPs figures are not in the "
      "knowledge notes (unconfirmed)"),
  ])

E("fabric_mp_launcher", "src/lightning/fabric/strategies/launchers/multiprocessing.py", "device_branch_or_abstraction",
  "lightning.fabric.strategies.launchers.multiprocessing (_MultiProcessingLauncher, _check_bad_cuda_fork)", [
    C("if not torch.cuda.is_initialized():", "torch_cuda_api", "add_branch", F,
      "if not torch.cuda.is_initialized() and not torch.npu.is_initialized():",
      "diagnostic guard for ddp_fork/ddp_notebook after the device was initialised; without it the user gets a "
      "less helpful error from the forked workers"),
  ])

E("fabric_device_dtype_mixin", "src/lightning/fabric/utilities/device_dtype_mixin.py",
  "device_branch_or_abstraction", "lightning.fabric.utilities.device_dtype_mixin._DeviceDtypeModuleMixin", [
    C('if device.type == "cuda" and device.index is None:', "device_type", "add_branch", F,
      'if device.type in ("cuda", "npu") and device.index is None:',
      "cosmetic: module.device would report 'npu' without an index after .to('npu'); still usable"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Tests / benchmarks
# ---------------------------------------------------------------------------------------------------------------
E("tests_test_gpu", "tests/tests_pytorch/models/test_gpu.py", "explicit_replacement",
  "Lightning tests/tests_pytorch/models/test_gpu.py (RunIf(min_cuda_gpus=...), batch_to_device)", [
    C("@RunIf(min_cuda_gpus=2, sklearn=True)", "device_type", "replace", F, "@RunIf(min_npu_devices=2, sklearn=True)",
      "gate: on an NPU CI host the test is silently skipped rather than failing"),
    C('"accelerator": "gpu",', "device_type", "replace", T, '"accelerator": "npu",',
      "'gpu' resolves to CUDA/MPS only -> 'No supported gpu backend found!'"),
    C("=@RunIf(min_cuda_gpus=2)", "device_type", "replace", F, "@RunIf(min_npu_devices=2)", "skip gate"),
    C('"accelerator": "cuda",', "device_type", "replace", T, '"accelerator": "npu",', "CUDAAccelerator unavailable"),
    C("=@RunIf(min_cuda_gpus=1)", "device_type", "replace", F, "@RunIf(min_npu_devices=1)", "skip gate"),
    C('trainer = Trainer(accelerator="gpu", devices=1)', "device_type", "replace", T,
      'trainer = Trainer(accelerator="npu", devices=1)', "'gpu' is not an NPU alias"),
    C('device = torch.device("cuda:0")', "device_type", "replace", T, 'device = torch.device("npu:0")',
      "batch_to_device to cuda:0 raises without CUDA"),
    C('expected_type = "torch.cuda.FloatTensor"', "device_type", "replace", T,
      'expected_type = "torch.npu.FloatTensor"', "tensor.type() of an NPU tensor is torch.npu.FloatTensor"),
    C('assert batch.a.type() == "torch.cuda.FloatTensor"', "device_type", "replace", T,
      'assert batch.a.type() == "torch.npu.FloatTensor"', "same type-string assertion"),
    C('@RunIf(min_cuda_gpus=1, min_torch="2.0")', "device_type", "replace", F,
      '@RunIf(min_npu_devices=1, min_torch="2.0")', "skip gate"),
    C('target = torch.device("cuda", 0)', "device_type", "replace", T, 'target = torch.device("npu", 0)',
      "moving the batch to cuda:0 raises"),
  ])

E("parity_measure", "tests/parity_pytorch/test_basic_parity.py", "explicit_replacement",
  "Lightning tests/parity_pytorch/test_basic_parity.py (vanilla vs Lightning loop speed/memory parity)", [
    C('@pytest.mark.skipif(not torch.cuda.is_available(), reason="test requires GPU machine")', "torch_cuda_api",
      "replace", F, '@pytest.mark.skipif(not torch.npu.is_available(), reason="test requires NPU machine")',
      "gate: benchmark silently skipped on NPU hosts"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if torch.npu.is_available():",
      "memory would be NaN on NPU -> assert_parity_relative fails on NaN"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "raises without CUDA once the branch is taken"),
    C("used_memory = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", T,
      "used_memory = torch.npu.max_memory_allocated()", "CUDA stats report 0 for NPU work"),
    C('device_type = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", T,
      'device_type = "npu" if torch.npu.is_available() else "cpu"',
      "both loops would silently benchmark on the CPU"),
    C('if device_type == "cuda":', "device_type", "replace", T, 'if device_type == "npu":',
      "peak-memory counters would never be reset between runs"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "cache release between runs; memory only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", T, "torch.npu.reset_peak_memory_stats()",
      "raises without CUDA; peaks must be reset per run for the memory comparison"),
    C('def vanilla_loop(cls_model, idx, device_type: str = "cuda", num_epochs=10):', "device_type", "replace", F,
      'def vanilla_loop(cls_model, idx, device_type: str = "npu", num_epochs=10):',
      "default only; measure_loops always passes device_type"),
    C('def lightning_loop(cls_model, idx, device_type: str = "cuda", num_epochs=10):', "device_type", "replace", F,
      'def lightning_loop(cls_model, idx, device_type: str = "npu", num_epochs=10):', "default only"),
    C('accelerator="gpu" if device_type == "cuda" else "cpu",', "device_type", "replace", T,
      'accelerator="npu" if device_type == "npu" else "cpu",',
      "Lightning side would run on the CPU (or fail with 'gpu') while vanilla runs on NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# User-level examples and scripts
# ---------------------------------------------------------------------------------------------------------------
E("ex_imagenet_cli", "examples/pytorch/domain_templates/imagenet.py", "device_branch_or_abstraction",
  "Lightning examples/pytorch/domain_templates/imagenet.py (LightningCLI, DDP, 16-mixed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      IMPORT_NOTE + "; entry script"),
    C("channels_last: bool = True,", "unsupported_op_workaround", "replace", F, "channels_last: bool = False,",
      "channels_last is listed as unsupported by the transfer_to_npu limitations (use contiguous); native behaviour "
      "unconfirmed, and it is a GPU tensor-core optimisation anyway"),
    C('self.log("gpu_peak_mem_gb", torch.cuda.max_memory_allocated() / 2**30, rank_zero_only=True)', "torch_cuda_api",
      "replace", F, 'self.log("npu_peak_mem_gb", torch.npu.max_memory_allocated() / 2**30, rank_zero_only=True)',
      "opt-in metric; CUDA stats silently log 0 on NPU"),
    C("=pin_memory=True,", "pin_memory", "replace", F, 'pin_memory=True, pin_memory_device="npu",',
      "performance only; on torch 2.1 the loader pins only when torch.cuda.is_available() unless pin_memory_device "
      "is given (unconfirmed in the notes)"),
    C("self.eval_dataset, batch_size=self.batch_size, num_workers=self.workers, pin_memory=True", "pin_memory",
      "replace", F,
      'self.eval_dataset, batch_size=self.batch_size, num_workers=self.workers, pin_memory=True, '
      'pin_memory_device="npu"', "same as the train loader"),
    C('"accelerator": "gpu",', "device_type", "replace", T, '"accelerator": "npu",',
      "'gpu' maps to CUDA/MPS only; the CLI default would fail with 'No supported gpu backend found!'"),
  ])

E("ex_fabric_image_classifier", "examples/fabric/image_classifier/train_fabric.py", "device_branch_or_abstraction",
  "Lightning examples/fabric/image_classifier/train_fabric.py (MNIST with Fabric)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "device_capability_check", "add_branch", F,
      "if (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or "
      "(torch.npu.is_available() and torch.npu.is_bf16_supported()):",
      "falls back to 16-mixed on NPU, which still works; bf16 is the better default on Atlas A2"),
    C("use_pinned = torch.cuda.is_available()", "pin_memory", "replace", F,
      "use_pinned = torch.cuda.is_available() or torch.npu.is_available()", "pinning silently disabled; perf only"),
    C("        torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "        torch.npu.synchronize()",
      "raises 'Torch not compiled with CUDA enabled' on the CPU-only torch builds used with torch_npu"),
    C('fabric.print(f"Epoch {epoch} took {epoch_time:.1f}s, peak mem {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")',
      "torch_cuda_api", "replace", F,
      'fabric.print(f"Epoch {epoch} took {epoch_time:.1f}s, peak mem {torch.npu.max_memory_allocated() / 1e9:.2f} GB")',
      "log line; reports 0 GB on NPU"),
    C('parser.add_argument("--accelerator", type=str, default="cuda", help="cuda | cpu | mps")', "device_type",
      "replace", T, 'parser.add_argument("--accelerator", type=str, default="npu", help="npu | cpu")',
      "default accelerator 'cuda' is not available on an NPU host -> RuntimeError"),
  ])

E("ex_predict", "examples/pytorch/domain_templates/predict_imagenet.py", "explicit_replacement",
  "user inference/benchmark script for the Lightning ImageNet example (load_from_checkpoint, CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C('if prefer == "cuda" and torch.cuda.is_available():', "device_type", "replace", T,
      'if prefer == "npu" and torch.npu.is_available():', "silently falls back to the CPU"),
    C('return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))', "device_type", "replace", T,
      'return torch.device("npu", int(os.environ.get("LOCAL_RANK", 0)))', "NPU device for this rank"),
    C('map_location="cuda:0"', "tensor_to_device", "replace", T, 'map_location="cpu"',
      "deserialising onto cuda:0 raises without CUDA; load on CPU then .to(device)"),
    C(".pin_memory()", "pin_memory", "replace", F, '.pin_memory("npu")',
      "default pinned allocator is CUDA's on torch 2.1; likely raises or is ineffective on NPU (unconfirmed)"),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "batch = batch.to(device, non_blocking=True)", "Tensor.cuda raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", T,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=amp):',
      "CUDA autocast is disabled with a warning on NPU -> --amp silently runs fp32"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA Event cannot be created without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA Event cannot be created without CUDA"),
    C("torch.cuda.synchronize()  # drain warmup", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()  # drain warmup", "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()", "raises without CUDA"),
    C('parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])', "device_type", "replace", T,
      'parser.add_argument("--device", default="npu", choices=["npu", "cpu"])',
      "with the cuda default the script silently runs on the CPU"),
  ])

E("litgpt_pretrain", "pretrain/redpajama.py", "device_branch_or_abstraction",
  "Lightning-AI lit-gpt pretrain/redpajama.py (Fabric pretraining loop, SpeedMonitor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C('strategy = DDPStrategy(process_group_backend="nccl", timeout=timedelta(minutes=60), static_graph=True)',
      "dist_backend", "replace", T,
      'strategy = DDPStrategy(process_group_backend="hccl", timeout=timedelta(minutes=60), static_graph=True)',
      "explicit nccl backend: init_process_group('nccl') fails on NPU hosts"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", F,
      'model = torch.compile(model, backend="npugraphs")',
      "opt-in; max-autotune relies on Triton/cuBLAS autotuning, Inductor on NPU needs torch_npu >= 2.6 per the notes "
      "(this project pins 2.1) - unconfirmed what happens on 2.1, safest is to keep compile off"),
    C('fused=fabric.device.type == "cuda",', "fused_optimizer", "replace", F,
      'fused=False,  # or torch_npu.optim.NpuFusedAdamW',
      "on NPU fused=False is selected automatically; NpuFusedAdamW is a performance option only"),
    C('=if fabric.device.type == "cuda":', "device_type", "replace", F, 'if fabric.device.type == "npu":',
      "memory report skipped on NPU; cosmetic"),
    C('fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB")', "torch_cuda_api", "replace",
      F, 'fabric.print(f"Memory used: {torch.npu.max_memory_allocated() / 1e9:.02f} GB")',
      "goes with the device-type check above"),
    C("return DataLoader(combined_dataset, batch_size=batch_size, shuffle=False, pin_memory=True)", "pin_memory",
      "replace", F,
      'return DataLoader(combined_dataset, batch_size=batch_size, shuffle=False, pin_memory=True, '
      'pin_memory_device="npu")', "performance only (unconfirmed whether pinning happens without the device)"),
  ])

E("litgpt_model", "lit_gpt/model.py", "kernel_rewrite",
  "Lightning-AI lit-gpt lit_gpt/model.py (GPT, CausalSelfAttention with flash-attn 2 / SDPA, RoPE, RMSNorm)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "only needed for the optional fused-op rewrites below; the entry script already imports torch_npu"),
    C('and q.device.type == "cuda"', "attention_kernel", "add_branch", F,
      'and q.device.type in ("cuda", "npu")  # npu: torch_npu.npu_fusion_attention(q, k, v, nh, "BSND", ...)',
      "flash-attn cannot be installed on NPU, but the guard already skips it there and the SDPA fallback dispatches to "
      "the NPU flash-attention kernel; an explicit npu_fusion_attention branch is optional"),
    C("x = torch.nn.functional.silu(x_fc_1) * x_fc_2", "npu_fused_op", "replace", F,
      "x = torch_npu.npu_swiglu(torch.cat((x_fc_1, x_fc_2), dim=-1), dim=-1)",
      "fused SwiGLU; performance only"),
    C("roped = (x * cos) + (rotated * sin)", "npu_fused_op", "replace", F,
      'roped = torch_npu.npu_rotary_mul(x, cos, sin, rotary_mode="half")', "fused RoPE; performance only"),
    C("x_normed = x * torch.rsqrt(norm_x + self.eps)", "npu_fused_op", "replace", F,
      "return torch_npu.npu_rms_norm(x.to(dtype), self.weight, epsilon=self.eps)[0]",
      "fused RMSNorm; performance only"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Configs, launchers, environment files
# ---------------------------------------------------------------------------------------------------------------
E("cfg_imagenet_yaml", "examples/pytorch/domain_templates/configs/resnet50_ddp_8gpu.yaml",
  "device_branch_or_abstraction", "LightningCLI trainer/model YAML for the ImageNet example", [
    C("accelerator: gpu", "device_type", "replace", T, "accelerator: npu",
      "'gpu' selects CUDA/MPS only -> MisconfigurationException on an NPU host"),
    C("process_group_backend: nccl", "dist_backend", "replace", T, "process_group_backend: hccl",
      "explicit nccl backend cannot be initialised on NPU"),
    C("sort_by_key: cuda_time_total", "torch_cuda_api", "replace", F, "sort_by_key: cpu_time_total",
      "NPU events carry no CUDA time, the table would be sorted by zeros; NPU-specific key unconfirmed"),
    C("use_cuda: true", "torch_cuda_api", "replace", F, "use_npu: true",
      "selects the CUDA kineto activity in the (ported) profiler; NPU activity needs its own switch (unconfirmed how "
      "torch_npu.profiler reacts to a CUDA activity)"),
    C("channels_last: true", "unsupported_op_workaround", "replace", F, "channels_last: false",
      "see the example: channels_last flagged by the transfer_to_npu limitations; unconfirmed natively"),
  ])

E("launch_multinode_sh", "scripts/train_multinode.sh", "explicit_replacement",
  "multi-node bash launcher for a LightningCLI DDP job (NCCL/InfiniBand env, nvidia-smi)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", T,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) is required before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", T,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device masking is ignored by the Ascend runtime -> overrides silently have no effect"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", F, None, "CUDA-only tuning knob; harmless"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", F, None,
      "no effect on HCCL; HCCL logging is controlled through CANN's log settings (not covered in the notes)"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", F, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL picks a host NIC by its own priority rules; set HCCL_SOCKET_IFNAME/HCCL_IF_IP if it picks an unreachable one"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", F, None,
      "InfiniBand switch for NCCL; HCCL uses the NPU RoCE ports configured with hccn_tool"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", F, None, "NCCL/IB only"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", F, None, "NCCL/IB only"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", F, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog switch (default 1 per MindCluster notes)"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", T,
      "npu-smi info", "command not found + `set -e` aborts the launcher on NPU hosts"),
  ])

E("azure_gpu_ci", ".azure/gpu-tests-pytorch.yml", "explicit_replacement",
  "Lightning .azure/gpu-tests-pytorch.yml (Azure Pipelines GPU job in CUDA container)", [
    C('image: "pytorchlightning/pytorch_lightning:base-cuda-py3.10-torch2.1-cuda12.1.0"', "env_var", "replace", T,
      'image: "ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10"',
      "CUDA base image has no CANN toolkit/driver libs; torch_npu cannot load"),
    C('image: "pytorchlightning/pytorch_lightning:base-cuda-py3.11-torch2.1-cuda12.1.0"', "env_var", "replace", T,
      'image: "ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.11"', "same as above"),
    C("pool: lit-rtx-3090", "device_type", "replace", T, "pool: lit-ascend-910b",
      "agents must have NPUs"),
    C('PL_RUN_CUDA_TESTS: "1"', "env_var", "replace", F, 'PL_RUN_NPU_TESTS: "1"',
      "test-selection switch: CUDA-marked tests are skipped on NPU agents rather than failing"),
    C('TORCH_URL: "https://download.pytorch.org/whl/cu121/torch_stable.html"', "import_torch_npu", "replace", F,
      'TORCH_URL: "https://download.pytorch.org/whl/cpu/torch_stable.html"',
      "torch_npu pairs with the CPU torch wheel on x86 per the torch_npu README; CUDA wheel unconfirmed to break"),
    C('options: "--gpus=all --shm-size=2gb -v /var/tmp:/var/tmp"', "device_type", "replace", T,
      'options: "--device=/dev/davinci0 --device=/dev/davinci1 --device=/dev/davinci_manager --device=/dev/devmm_svm '
      '--device=/dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver --shm-size=2gb -v /var/tmp:/var/tmp"',
      "--gpus needs the NVIDIA container runtime; NPUs have to be mounted as davinci devices plus the driver"),
    C('echo "##vso[task.setvariable variable=CUDA_VISIBLE_DEVICES]$(DEVICES)"', "env_var", "replace", T,
      'echo "##vso[task.setvariable variable=ASCEND_RT_VISIBLE_DEVICES]$(DEVICES)"',
      "per-agent device split would be ignored; concurrent agents would share NPUs"),
    C("cuda_ver=$(python -c \"import torch ; print(''.join(map(str, torch.version.cuda.split('.')[:2])))\")",
      "torch_cuda_api", "removal", F, None,
      "torch.version.cuda is None on the CPU torch used with torch_npu; the step does not fail (no set -e)"),
    C('echo "##vso[task.setvariable variable=TORCH_URL]https://download.pytorch.org/whl/cu${cuda_ver}/torch_stable.html"',
      "import_torch_npu", "removal", F, None, "CUDA wheel index derived from the CUDA version"),
    C("=nvidia-smi", "torch_cuda_api", "replace", F, "npu-smi info",
      "info step without set -e; missing command only prints an error"),
    C('pip install "deepspeed>=0.12.0,<0.13.0" "bitsandbytes==0.41.3"', "unsupported_op_workaround", "replace", F,
      'pip install "deepspeed>=0.12.0,<0.13.0" "torch-npu==2.1.0.post12"',
      "bitsandbytes has no NPU build in this version (NPU NF4 support only in its later multi-backend work)"),
    C("python -c \"import torch ; mgpu = torch.cuda.device_count() ; assert mgpu == 2, f'GPU: {mgpu}'\"",
      "torch_cuda_api", "replace", T,
      "python -c \"import torch, torch_npu ; n = torch.npu.device_count() ; assert n == 2, f'NPU: {n}'\"",
      "assert fails (0 CUDA devices) and `set -e` fails the step"),
    C('NCCL_DEBUG: "INFO"', "env_var", "removal", F, None, "no effect on HCCL"),
  ])

E("requirements_txt", "requirements.txt", "explicit_replacement", "pinned pip requirements of a Lightning project", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", F,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu docs install CPU torch on x86 (aarch64 uses plain PyPI)"),
    C("torch==2.1.2+cu121", "import_torch_npu", "replace", T, "torch==2.1.0",
      "torch_npu wheels pair with an exact torch version (2.1.0.postN <-> torch 2.1.0); 2.1.2+cu121 is incompatible"),
    C("torchvision==0.16.2+cu121", "import_torch_npu", "replace", T, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("lightning==2.1.3", "import_torch_npu", "npu_only_addition", T, "torch-npu==2.1.0.post12",
      "the NPU backend itself (2.1.0.post12 pairs with CANN 8.1.RC1)"),
    C('flash-attn==2.4.2 ; platform_system == "Linux"', "attention_kernel", "removal", T, None,
      "flash-attn cannot be built/installed on NPU hosts (needs nvcc) -> pip install -r fails"),
    C("bitsandbytes==0.41.3", "unsupported_op_workaround", "removal", F, None,
      "CUDA-only in this version; installs but is unusable (unconfirmed whether import fails)"),
    C("nvidia-ml-py==12.535.133", "unsupported_op_workaround", "removal", F, None,
      "NVML bindings; installs but has no NPU equivalent (use npu-smi / torch.npu.mem_get_info)"),
  ])

E("dockerfile_cuda", "dockerfiles/cuda/Dockerfile", "explicit_replacement",
  "CUDA training image for a Lightning project (nvidia/cuda base, flash-attn and DeepSpeed op prebuild)", [
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu${UBUNTU_VERSION}", "env_var", "replace", T,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "base image must carry the CANN toolkit that torch_npu links against"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", F, "ASCEND_VISIBLE_DEVICES=all \\",
      "container-runtime device selection (Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", F, None, "NVIDIA runtime only"),
    C('TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0" \\', "env_var", "removal", F, None,
      "nvcc arch list; nothing is compiled for CUDA any more"),
    C("ARG TORCH_CHANNEL=cu121", "import_torch_npu", "removal", F, None,
      "only feeds the CUDA wheel index of the torch install line (replaced below)"),
    C("RUN python -m pip install --upgrade pip setuptools wheel", "env_var", "npu_only_addition", F,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /etc/bash.bashrc",
      "only needed if the chosen CANN base image does not already export the toolkit environment"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/${TORCH_CHANNEL}",
      "import_torch_npu", "replace", T,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "cu121 index has no aarch64 wheels and torch 2.1.2 does not pair with torch_npu; torch-npu itself is missing"),
    C("RUN pip install flash-attn==2.4.2 --no-build-isolation", "attention_kernel", "removal", T, None,
      "build needs nvcc/CUDA -> docker build fails"),
    C("RUN DS_BUILD_FUSED_ADAM=1 DS_BUILD_CPU_ADAM=1 pip install deepspeed==0.12.6 --force-reinstall --no-deps && \\",
      "custom_cuda_extension", "replace", T, "RUN pip install deepspeed==0.12.6 && \\",
      "pre-building the CUDA fused-Adam op needs nvcc; let DeepSpeed's NPU accelerator build its ops at runtime"),
  ])

E("environment_yml", "environment.yml", "explicit_replacement", "conda environment file for a Lightning project", [
    C("=- nvidia", "env_var", "removal", F, None, "NVIDIA conda channel; nothing needed from it"),
    C("  - pytorch=2.1.2", "import_torch_npu", "replace", T, "  - pytorch=2.1.0",
      "must match the torch_npu 2.1.0.postN pairing"),
    C("  - torchvision=0.16.2", "import_torch_npu", "replace", T, "  - torchvision=0.16.0", "matches torch 2.1.0"),
    C("  - pytorch-cuda=12.1", "import_torch_npu", "removal", T, None,
      "pulls the CUDA runtime and has no aarch64 build -> the env does not solve on Kunpeng NPU hosts"),
    C("  - cuda-nvcc=12.1.*", "custom_cuda_extension", "removal", F, None, "CUDA compiler; unused"),
    C("  - nccl>=2.18", "dist_backend", "removal", F, None, "HCCL ships with CANN"),
    C("      - lightning==2.1.3", "import_torch_npu", "npu_only_addition", T, "      - torch-npu==2.1.0.post12",
      "the NPU backend"),
    C("      - nvidia-ml-py==12.535.133", "unsupported_op_workaround", "removal", F, None, "NVML bindings; no use on NPU"),
  ])
