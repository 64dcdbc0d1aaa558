"""Labels for probe10 (hand-written synthetic upstream files; see ../README.md).

Theme: open-source libraries at the commit just before they added Ascend NPU support (device / accelerator
abstraction layers, trainer utilities, RNG / memory helpers, environment reporters, dtype checks, tests, CI).

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
DEV = "device_branch_or_abstraction"

E("accel_imports", "src/accelerate/utils/imports.py", DEV,
  "huggingface/accelerate utils/imports.py (is_*_available guards, NVML-based CUDA check)", [
    C('return hasattr(torch, "xpu") and torch.xpu.is_available()', "import_torch_npu", A, True,
      '@lru_cache\ndef is_npu_available(check_device=False):\n    if importlib.util.find_spec("torch_npu") is None:\n'
      '        return False\n    import torch_npu  # noqa: F401\n    return hasattr(torch, "npu") and torch.npu.is_available()',
      "new guarded helper after is_xpu_available: every NPU branch in state.py / launchers keys off it and it is where "
      "torch_npu gets imported. Near-misses left: is_bf16_available() already falls through to True on an NPU host; "
      "is_cuda_available()'s NVML trick and is_pynvml_available() are CUDA-only by design"),
])

E("accel_state", "src/accelerate/state.py", DEV,
  "huggingface/accelerate state.py (PartialState backend / device selection, AcceleratorState FSDP upgrade)", [
    C("=DistributedType.MULTI_GPU,", "device_type", B, True, "DistributedType.MULTI_GPU,\n            DistributedType.MULTI_NPU,",
      "wait_for_everyone() skips the barrier for any type not listed: multi-NPU runs would race past checkpoint saves"),
    C("=elif torch.cuda.is_available():", "device_type", B, True,
      'elif is_npu_available():\n            return torch.device("npu")\n        elif torch.cuda.is_available():',
      "default_device for non-distributed runs: without an npu branch a single-process job lands on the CPU"),
    C("elif torch.cuda.is_available():  # NCCL for multi-GPU", "dist_backend", B, True,
      'elif is_npu_available():\n                backend = "hccl"\n                distributed_type = DistributedType.MULTI_NPU\n'
      '            elif torch.cuda.is_available():  # NCCL for multi-GPU',
      "torchrun on an NPU host otherwise falls through to MULTI_CPU with gloo (CPU training, or gloo collectives on "
      "NPU tensors)"),
    C('if device not in ("cpu", "gpu", "mlu", "xpu"):', "device_type", R, True,
      'if device not in ("cpu", "gpu", "mlu", "npu", "xpu"):',
      "set_device() raises ValueError for MULTI_NPU; with 'npu' allowed, getattr(torch, 'npu') gives torch.npu.set_device"),
    C("elif self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_MLU, DistributedType.MULTI_XPU]:",
      "device_type", R, True,
      "elif self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_MLU, DistributedType.MULTI_NPU, "
      "DistributedType.MULTI_XPU]:",
      "FSDP / Megatron plugins are only honoured for the listed types: on NPU the FSDP plugin would be silently ignored. "
      "Near-misses: device.type == 'cuda' P2P/IB check and the dynamo TF32 switch (else paths fine on NPU), "
      "get_device_capability() in the fp8 warning (fp8 needs TE/MS-AMP, which is_fp8_available() already rejects)"),
])

E("ds_accel_selector", "accelerator/real_accelerator.py", DEV,
  "microsoft/DeepSpeed accelerator/real_accelerator.py (DS_ACCELERATOR override + auto-detection)", [
    C("SUPPORTED_ACCELERATOR_LIST = ['cuda', 'cpu', 'xpu', 'xpu.external', 'mps', 'hpu']", "device_type", R, True,
      "SUPPORTED_ACCELERATOR_LIST = ['cuda', 'cpu', 'xpu', 'xpu.external', 'npu', 'mps', 'hpu']",
      "DS_ACCELERATOR=npu is rejected and is_current_accelerator_supported() (used by op builders) is False otherwise"),
    C('elif accelerator_name == "hpu":', "import_torch_npu", B, False,
      'elif accelerator_name == "npu":\n        try:\n            import torch_npu  # noqa: F401\n        except ImportError as e:\n'
      '            raise ValueError("NPU_Accelerator requires torch_npu, which is not installed on this system.")\n'
      '    elif accelerator_name == "hpu":',
      "override validation only improves the error message: NPU_Accelerator imports torch_npu itself"),
    C('=accelerator_name = "hpu"', "import_torch_npu", A, True,
      'if accelerator_name is None:\n        try:\n            import torch_npu  # noqa: F401,F811\n\n'
      '            accelerator_name = "npu"\n        except ImportError as e:\n            pass',
      "auto-detection: without an npu probe an NPU host ends on the CPU catch-all. The torch.cuda.device_count() / "
      "is_available() probe itself stays as it is (it is the CUDA detection, correct for CUDA)"),
    C("=ds_accelerator = CPU_Accelerator()", "device_type", B, True,
      'ds_accelerator = CPU_Accelerator()\n    elif accelerator_name == "npu":\n        from .npu_accelerator import NPU_Accelerator\n\n'
      '        ds_accelerator = NPU_Accelerator()',
      "instantiate the NPU accelerator (hccl backend, torch.npu device module); otherwise ds_accelerator stays None "
      "and _validate_accelerator raises"),
])

E("mmengine_device", "mmengine/device/utils.py", DEV,
  "open-mmlab/mmengine device/utils.py (IS_*_AVAILABLE probes, get_device, memory and visibility helpers)", [
    C("=IS_MLU_AVAILABLE = False", "import_torch_npu", A, True,
      "try:\n    import torch_npu  # noqa: F401\n    IS_NPU_AVAILABLE = hasattr(torch, 'npu') and torch.npu.is_available()\n"
      "except Exception:\n    IS_NPU_AVAILABLE = False",
      "guarded import next to the torch_mlu / torch_dipu probes; the rest of the library asks IS_NPU_AVAILABLE"),
    C("=return IS_MLU_AVAILABLE", "device_type", A, True,
      "def is_npu_available() -> bool:\n    \"\"\"Returns True if Ascend PyTorch and npu devices exist.\"\"\"\n    return IS_NPU_AVAILABLE",
      "public is_npu_available() helper used by get_device() and dist/utils.py"),
    C("return get_max_cuda_memory(device)", "torch_cuda_api", B, False,
      "if is_npu_available():\n        mem = torch.npu.max_memory_allocated(device=device)\n"
      "        torch.npu.reset_peak_memory_stats()\n        return int(mem) // (1024 * 1024)",
      "logging only: without it the memory column silently disappears on NPU"),
    C("=return 'cuda'", "device_type", B, True,
      "return 'cuda'\n    elif is_npu_available():\n        return 'npu'",
      "get_device() is what the runner uses to place the model: an NPU host reports 'cpu' otherwise. "
      "get_device_count / canonical_device / to_device are already generic (getattr(torch, device_type))"),
    C("return 'CUDA_VISIBLE_DEVICES'", "env_var", B, True,
      "return 'CUDA_VISIBLE_DEVICES'\n    if device == 'npu':\n        return 'ASCEND_RT_VISIBLE_DEVICES'",
      "gpu_ids restriction is silently dropped on NPU (None => nothing exported); the Ascend runtime reads "
      "ASCEND_RT_VISIBLE_DEVICES"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "torch.cuda.empty_cache()\n    elif device == 'npu':\n        torch.npu.empty_cache()",
      "cache release is an optimisation; on NPU the function just does nothing"),
])

E("mmengine_dist", "mmengine/dist/utils.py", DEV,
  "open-mmlab/mmengine dist/utils.py (pytorch / mpi / slurm launchers, get_comm_device, sync_random_seed)", [
    C("=backend='nccl',", "dist_backend", B, True,
      "backend='nccl',\n              init_backend='torch',\n              **kwargs) -> None:\n"
      "    if is_npu_available() and backend == 'nccl':\n        backend = 'hccl'",
      "configs pass dist_cfg=dict(backend='nccl'); every launcher forwards it to init_process_group, which has no NCCL "
      "on an NPU host. Mapping it once in init_dist covers the pytorch, mpi and slurm paths"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", B, True,
      "elif is_npu_available():\n        torch.npu.set_device(local_rank)\n"
      "        torch_dist.init_process_group(backend='hccl', rank=rank, world_size=int(os.environ['WORLD_SIZE']), **kwargs)\n"
      "    else:\n        torch.cuda.set_device(local_rank)",
      "torch.cuda.set_device raises on a CUDA-less torch build: the torchrun path dies before init_process_group"),
    C("torch.cuda.set_device(mpi_local_rank)", "torch_cuda_api", R, True,
      "getattr(torch, get_device()).set_device(mpi_local_rank)",
      "mpi launcher: same failure as the pytorch path"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "returns 0 on an NPU host, so proc_id % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", R, True,
      "getattr(torch, get_device()).set_device(proc_id % num_gpus)",
      "slurm launcher: binds the process to its device"),
    C("elif backend == 'cncl':", "dist_backend", B, True,
      "elif backend == 'hccl':\n        import torch_npu  # noqa: F401\n        return torch.device('npu', torch.npu.current_device())\n"
      "    elif backend == 'cncl':",
      "hccl groups otherwise get the CPU as communication device: sync_random_seed / all_reduce helpers would hand CPU "
      "tensors to HCCL. The smddp branch and the docstrings naming 'nccl' are left as they are"),
])

E("fabric_connector", "src/lightning/fabric/connector.py", DEV,
  "Lightning-AI lightning_fabric connector.py (accelerator auto-choice, strategy / precision selection)", [
    C('return "nccl" if device.type == "cuda" else "gloo"', "dist_backend", R, True,
      'return {"cuda": "nccl", "npu": "hccl"}.get(device.type, "gloo")',
      "DDP on NPU devices would get gloo, which cannot run collectives on NPU tensors"),
    C("=if CUDAAccelerator.is_available():", "device_type", B, True,
      'if CUDAAccelerator.is_available():\n            return "cuda"\n        if NPUAccelerator.is_available():\n            return "npu"',
      "accelerator='auto' (the default) picks the CPU on an NPU host. Needs a registered NPUAccelerator "
      "(new file, not part of this one)"),
    C("=elif CUDAAccelerator.is_available():", "device_type", B, False,
      'elif CUDAAccelerator.is_available():\n            return "cuda"\n        elif NPUAccelerator.is_available():\n'
      '            return "npu"',
      "accelerator='gpu' is documented as CUDA/MPS; mapping it to npu is a convenience"),
    C("if isinstance(self._accelerator_flag, (CUDAAccelerator, MPSAccelerator)) or (", "device_type", R, True,
      "if isinstance(self._accelerator_flag, (CUDAAccelerator, NPUAccelerator, MPSAccelerator)) or (",
      "single-device strategy: an NPUAccelerator instance would get SingleDeviceStrategy(device='cpu')"),
    C('self._accelerator_flag in ("cuda", "gpu", "mps")', "device_type", R, True,
      'isinstance(self._accelerator_flag, str) and self._accelerator_flag in ("cuda", "gpu", "npu", "mps")',
      "Fabric(accelerator='npu', devices=1) would silently train on the CPU"),
    C('self._accelerator_flag not in ("cuda", "gpu"):', "device_type", R, False,
      'if strategy_flag in _FSDP_ALIASES and self._accelerator_flag not in ("cuda", "gpu", "npu"):',
      "FSDP guard; only matters for FSDP users. Unconfirmed: Ascend's 2.7.1 list marks FullyShardedDataParallel "
      "unsupported while transfer_to_npu wraps its __init__"),
    C('device = "cpu" if self._accelerator_flag == "cpu" else "cuda"', "amp", R, True,
      'device = self._accelerator_flag if self._accelerator_flag in ("cpu", "npu") else "cuda"',
      "16-mixed / bf16-mixed on NPU would build torch.autocast('cuda'), which is disabled without CUDA: the run "
      "silently stays fp32 (and fp16 gets no GradScaler)"),
])

E("d2_comm", "detectron2/utils/comm.py", DEV,
  "facebookresearch/detectron2 utils/comm.py (process-group helpers, gloo group for picklable data)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", R, False,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "keeps the pickled all_gather / gather traffic on a CPU gloo group under HCCL as it is under NCCL; without it "
      "all_gather_object runs over the HCCL world group (works through a device round-trip, unconfirmed for "
      "gather_object). Near-miss: synchronize() only passes torch.cuda.current_device() inside the NCCL branch, "
      "its plain dist.barrier() else-branch is right for HCCL; reduce_dict is device-agnostic"),
])

E("d2go_distributed", "d2go/distributed.py", DEV,
  "facebookresearch/d2go distributed.py (launch / distributed_worker with an explicit NCCL / GLOO backend)", [
    C('SUPPORTED_BACKENDS = ("NCCL", "GLOO")', "dist_backend", R, True, 'SUPPORTED_BACKENDS = ("NCCL", "HCCL", "GLOO")',
      "launch(backend='HCCL') is rejected by the whitelist"),
    C("return torch.cuda.device_count()", "torch_cuda_api", B, True,
      'return torch.cuda.device_count()\n    if backend == "HCCL":\n        return torch.npu.device_count()',
      "default worker count: an HCCL job would start one process per machine"),
    C('return "NCCL" if torch.cuda.is_available() else "GLOO"', "dist_backend", R, True,
      'if is_npu_available():\n        return "HCCL"\n    return "NCCL" if torch.cuda.is_available() else "GLOO"',
      "backend=None on an NPU host resolves to GLOO: CPU-only collectives for NPU tensors"),
    C("dist_params.num_processes_per_machine <= torch.cuda.device_count()", "torch_cuda_api", B, False,
      "if backend == \"HCCL\":\n        assert dist_params.num_processes_per_machine <= torch.npu.device_count()",
      "sanity assert only; the NCCL-guarded original is never reached for HCCL"),
    C("torch.cuda.set_device(dist_params.local_rank)", "torch_cuda_api", B, True,
      'torch.cuda.set_device(dist_params.local_rank)\n    elif backend == "HCCL":\n        torch.npu.set_device(dist_params.local_rank)',
      "without binding, every rank initialises HCCL on npu:0"),
    C('return torch.device("cuda", get_local_rank())', "device_type", B, True,
      'return torch.device("cuda", get_local_rank())\n    if backend == "HCCL":\n        return torch.device("npu", get_local_rank())',
      "rank tensors would stay on the CPU under HCCL"),
])

E("fairseq_dist_utils", "fairseq/distributed/utils.py", DEV,
  "facebookresearch/fairseq distributed/utils.py (init-method inference, spawn, all_gather_list, broadcast_object)", [
    C("torch.cuda.device_count(), cfg.distributed_world_size", "torch_cuda_api", R, True,
      "get_accelerator_device_count(), cfg.distributed_world_size",
      "distributed_num_procs becomes min(0, world_size) = 0 on an NPU host"),
    C("torch.cuda.set_device(cfg.device_id)", "torch_cuda_api", R, True,
      "torch.npu.set_device(cfg.device_id) if is_npu_available() else torch.cuda.set_device(cfg.device_id)",
      "raises on a CUDA-less torch build (no-spawn path with device_id > 0)"),
    C("cfg.device_id = cfg.distributed_rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.device_id = cfg.distributed_rank % get_accelerator_device_count()",
      "torchrun path: modulo by zero"),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus_per_node = get_accelerator_device_count()",
      "slurm one-task-per-node path computes world size 0"),
    C("cfg.distributed_world_size <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "cfg.distributed_world_size <= get_accelerator_device_count()",
      "single-node init asserts world_size <= 0 and stops"),
    C("dist.all_reduce(torch.zeros(1).cuda())", "tensor_to_device", B, False,
      "dist.all_reduce(torch.zeros(1).cuda())\n            elif is_npu_available():\n                dist.all_reduce(torch.zeros(1).npu())",
      "warm-up all-reduce only; HCCL initialises lazily on the first real collective"),
    C("if torch.cuda.is_available() and not cfg.common.cpu and not cfg.common.tpu:", "device_type", B, True,
      "elif is_npu_available() and not cfg.common.cpu:\n        torch.npu.set_device(cfg.distributed_training.device_id)",
      "spawned workers never bind their NPU: every rank runs on npu:0"),
    C("=torch.cuda.device_count(),", "torch_cuda_api", R, True, "get_accelerator_device_count(),",
      "mp.spawn(nprocs=min(0, world_size)) starts no worker"),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "tensor_to_device", R, True,
      "all_gather_list._buffer = torch.zeros(buffer_size, dtype=torch.uint8, device=get_accelerator_device())",
      "torch.cuda.ByteTensor is not available on an NPU host, and an HCCL all_reduce needs an NPU buffer"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", R, False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device=get_accelerator_device())",
      "unconfirmed: which device a bare Tensor.pin_memory() pins for under torch_npu; staging buffer only"),
    C('if torch.distributed.get_backend(group) == "nccl":', "dist_backend", B, True,
      'if torch.distributed.get_backend(group) == "nccl":\n            dist_device = torch.device("cuda")\n'
      '        elif torch.distributed.get_backend(group) == "hccl":\n            dist_device = torch.device("npu")',
      "broadcast_object would hand CPU tensors to an HCCL group. Near-misses: move_to_cpu, all_reduce_dict (device "
      "passed in), the 'random NCCL hangs' comment"),
])

E("hf_training_args", "src/transformers/training_args.py", DEV,
  "huggingface/transformers training_args.py (__post_init__ precision checks, _setup_devices, n_gpu)", [
    C('"choices": ["nccl", "gloo", "mpi", "ccl"],', "dist_backend", R, False,
      '"choices": ["nccl", "gloo", "mpi", "ccl", "hccl"],',
      "--ddp_backend hccl is rejected by the argument parser; the default (None) lets accelerate choose, so optional"),
    C('and (self.device.type != "cpu")', "device_type", B, True,
      'and (self.device.type != "cpu")\n            and (self.device.type != "npu")',
      "--bf16 on an NPU device raises 'can only be used on CUDA or CPU devices'. Near-miss: the fp16 check above "
      "only fires for a CPU device, and the bf16/gpu check is behind torch.cuda.is_available()"),
    C('"cuda:0" if torch.cuda.is_available() else os.environ.get("ACCELERATE_TORCH_DEVICE", "cpu")', "device_type", B, True,
      'elif is_torch_npu_available():\n                device = torch.device("npu:0")\n                torch.npu.set_device(device)\n'
      '                self._n_gpu = 1\n            else:\n                device = torch.device("cuda:0" if torch.cuda.is_available() '
      'else os.environ.get("ACCELERATE_TORCH_DEVICE", "cpu"))',
      "single-process runs overwrite accelerate's device with cuda:0-or-cpu: an NPU host trains on the CPU. "
      "The TF32 switches and the device.type == 'cuda' set_device inside this branch stay"),
])

E("hf_trainer_utils", "src/transformers/trainer_utils.py", DEV,
  "huggingface/transformers trainer_utils.py (set_seed, enable_full_determinism, TrainerMemoryTracker)", [
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"', "env_var", A, False,
      'os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"\n        # Ascend: deterministic HCCL collectives\n'
      '        os.environ["HCCL_DETERMINISTIC"] = "1"',
      "full_determinism is opt-in; without HCCL_DETERMINISTIC NPU all-reduces may be order-dependent. The CUDA "
      "variables themselves are harmless on NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", B, False,
      "torch.cuda.manual_seed_all(seed)\n        if is_torch_npu_available():\n            torch.npu.manual_seed_all(seed)",
      "on recent torch (2.1+, unconfirmed for older) torch.manual_seed also seeds the registered PrivateUse1 device (torch.random._seed_custom_device), and "
      "the CUDA call is lazily queued, so this is belt and braces"),
    C("=if is_torch_cuda_available():", "device_type", B, False,
      "elif is_torch_npu_available():\n            import torch\n\n            self.torch = torch\n            self.gpu = {}",
      "memory tracker: on NPU self.torch stays None and the *_mem_gpu_* metrics are silently skipped. Once this branch "
      "exists, the start/stop branches below must follow (stop() raises 'No available GPU device found!' otherwise)"),
    C("self.torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                self.torch.npu.reset_peak_memory_stats()\n                self.torch.npu.empty_cache()",
      "metrics only"),
    C("self.gpu_mem_used_at_start = self.torch.cuda.memory_allocated()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                self.gpu_mem_used_at_start = self.torch.npu.memory_allocated()",
      "metrics only"),
    C("self.torch.cuda.empty_cache()  # stop: release cached blocks", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                self.torch.npu.empty_cache()",
      "metrics only"),
    C("self.gpu_mem_used_now = self.torch.cuda.memory_allocated()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                self.gpu_mem_used_now = self.torch.npu.memory_allocated()\n"
      "                self.gpu_mem_used_peak = self.torch.npu.max_memory_allocated()",
      "metrics only (see the __init__ branch)"),
])

E("accel_checkpointing", "src/accelerate/checkpointing.py", DEV,
  "huggingface/accelerate checkpointing.py (save/load_accelerator_state with per-device RNG states)", [
    C('states["torch_cuda_manual_seed"] = torch.cuda.get_rng_state_all()', "torch_cuda_api", B, False,
      'elif is_npu_available():\n        states["torch_npu_manual_seed"] = torch.npu.get_rng_state_all()\n    else:\n'
      '        states["torch_cuda_manual_seed"] = torch.cuda.get_rng_state_all()',
      "on an NPU host torch.cuda.get_rng_state_all() returns [] (device_count() == 0): the NPU generators are not "
      "checkpointed, so a resumed run is not bit-identical (dropout masks differ) but trains fine"),
    C('torch.cuda.set_rng_state_all(states["torch_cuda_manual_seed"])', "torch_cuda_api", B, False,
      'elif is_npu_available():\n        torch.npu.set_rng_state_all(states["torch_npu_manual_seed"])\n    else:\n'
      '        torch.cuda.set_rng_state_all(states["torch_cuda_manual_seed"])',
      "restore side of the above; set_rng_state_all([]) is a no-op. Near-miss: `from torch.cuda.amp import "
      "GradScaler` is only a type annotation here, and map_location='on_device' already uses PartialState().device"),
])

E("peft_other", "src/peft/utils/other.py", DEV,
  "huggingface/peft utils/other.py (infer_device, prepare_model_for_kbit_training, ModulesToSaveWrapper)", [
    C('=return "cuda"', "device_type", B, False,
      'return "cuda"\n    elif is_npu_available():\n        return "npu"',
      "infer_device() picks where adapter checkpoints are loaded: on an NPU host they are read to the CPU and copied "
      "into the NPU parameters by load_state_dict, which works (slower). Everything else here (kbit prep, "
      "id_tensor_storage, cast_mixed_precision_params) is device-agnostic"),
])

E("st_util", "sentence_transformers/util.py", DEV,
  "UKPLab/sentence-transformers util.py (cos_sim, semantic_search, batch_to_device, get_device_name)", [
    C('def get_device_name() -> Literal["mps", "cuda", "hpu", "cpu"]:', "device_type", R, False,
      'def get_device_name() -> Literal["mps", "cuda", "npu", "hpu", "cpu"]:',
      "type annotation only"),
    C('=return "cuda"', "device_type", B, True,
      'return "cuda"\n    elif torch.backends.mps.is_available():\n        return "mps"\n    elif is_torch_npu_available():\n'
      '        return "npu"',
      "SentenceTransformer(device=None) uses get_device_name(): on an NPU host every encode() runs on the CPU"),
    C("return torch.cuda.device_count()", "torch_cuda_api", B, False,
      "return torch.cuda.device_count()\n    if is_torch_npu_available():\n        return torch.npu.device_count()",
      "worker count for the multi-process pool only. Near-misses: batch_to_device (takes the device), semantic_search "
      "(follows corpus_embeddings.device; its docstring says .to('cuda')), the faiss GPU cloner inside try/except"),
])

E("lmeval_hflm", "lm_eval/models/huggingface.py", DEV,
  "EleutherAI/lm-evaluation-harness models/huggingface.py (HFLM device / dtype / batch-size detection)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "if torch.cuda.is_available():\n        torch.cuda.empty_cache()\n    elif is_torch_npu_available():\n        torch.npu.empty_cache()",
      "cache release between batch-size probes; a no-op without CUDA"),
    C('"CUDA out of memory.",  # CUDA OOM', "device_type", A, False,
      '"CUDA out of memory.",  # CUDA OOM\n        "NPU out of memory.",  # Ascend OOM',
      "auto batch-size search only backs off on recognised OOM messages; unconfirmed: the exact NPU OOM text"),
    C("gpus = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus = torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()",
      "gpus == 0 on an NPU host: the model is never moved to self.device (guarded by gpus >= 1) and the "
      "accelerate data-parallel branch is skipped"),
    C('+ [f"cuda:{i}" for i in range(torch.cuda.device_count())]', "device_type", B, True,
      '+ [f"cuda:{i}" for i in range(torch.cuda.device_count())]\n                    + ["npu"]\n'
      '                    + [f"npu:{i}" for i in range(torch.npu.device_count())]',
      "--device npu / npu:N is not in the whitelist and silently becomes the CPU"),
    C("=if torch.cuda.is_available()", "device_type", B, False,
      'torch.device("cuda")\n                        if torch.cuda.is_available()\n                        else torch.device("npu")\n'
      '                        if is_torch_npu_available()\n                        else torch.device("cpu")',
      "fallback for an unknown device string only; the info log of torch.cuda.is_available() above stays"),
    C("=DistributedType.MULTI_GPU,", "device_type", B, True,
      "DistributedType.MULTI_GPU,\n                        DistributedType.MULTI_NPU,",
      "`accelerate launch` data parallelism on NPU trips the 'Only DDP and FSDP are supported' assertion"),
])

E("lf_misc", "src/llamafactory/extras/misc.py", DEV,
  "hiyouga/LLaMA-Factory extras/misc.py (get_current_device, get_device_count, torch_gc, infer_optim_dtype)", [
    C("=is_torch_mps_available,", "import_torch_npu", A, True, "is_torch_mps_available,\n    is_torch_npu_available,",
      "transformers' is_torch_npu_available() is what imports torch_npu for this module's NPU branches"),
    C("_is_fp16_available = is_torch_cuda_available()", "device_capability_check", R, True,
      "_is_fp16_available = is_torch_npu_available() or is_torch_cuda_available()",
      "infer_optim_dtype() falls back to float32 on an NPU host: half-precision inference / compute dtype never chosen "
      "(twice the memory, much slower)"),
    C("_is_bf16_available = is_torch_bf16_gpu_available()", "device_capability_check", R, True,
      "_is_bf16_available = is_torch_bf16_gpu_available() or (is_torch_npu_available() and torch.npu.is_bf16_supported())",
      "is_torch_bf16_gpu_available() is False without CUDA: bf16 checkpoints get fp16 (overflow risk) or fp32"),
    C('device = "cuda:{}".format(os.environ.get("LOCAL_RANK", "0"))', "device_type", B, True,
      'elif is_torch_npu_available():\n        device = "npu:{}".format(os.environ.get("LOCAL_RANK", "0"))\n'
      '    elif is_torch_cuda_available():\n        device = "cuda:{}".format(os.environ.get("LOCAL_RANK", "0"))',
      "device_map={'': get_current_device()} loads every model onto the CPU on an NPU host"),
    C("return torch.cuda.device_count()", "torch_cuda_api", B, True,
      "elif is_torch_npu_available():\n        return torch.npu.device_count()",
      "0 on an NPU host: the CLI decides whether to relaunch under torchrun from this count, so multi-NPU "
      "machines run one process"),
    C("return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n        return torch.npu.max_memory_allocated(), torch.npu.max_memory_reserved()",
      "reporting only (0, 0 on NPU)"),
    C("return is_torch_cuda_available() or is_torch_xpu_available()", "device_type", R, False,
      "return is_torch_npu_available() or is_torch_cuda_available() or is_torch_xpu_available()",
      "callers (not in this file) gate quantization / vLLM checks on it"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n        torch.npu.empty_cache()",
      "torch_gc() between stages; without it the NPU cache is simply not released. Near-misses: count_parameters, "
      "numpify (.cpu()), skip_check_imports' flash-attn comment"),
])

E("tm_distributed", "src/torchmetrics/utilities/distributed.py", DEV,
  "Lightning-AI/torchmetrics utilities/distributed.py + data.py helpers (gather_all_tensors, _bincount, _cumsum)", [
    C('if result.device.type == "cpu" and backend == "nccl":', "dist_backend", B, True,
      'if result.device.type == "cpu" and backend == "hccl":\n        return torch.device("npu", torch.npu.current_device())\n'
      '    if result.device.type == "cpu" and backend == "nccl":',
      "compute_on_cpu metric states would be handed to HCCL as CPU tensors and the sync fails. Near-misses: "
      "_cumsum's x.is_cuda deterministic fallback (NPU takes the native path), _bincount (bincount has an NPU "
      "kernel), gather_all_tensors' padding logic"),
])

E("kornia_helpers", "kornia/utils/helpers.py", DEV,
  "kornia/kornia utils/helpers.py (get_cuda_or_mps_device_if_available, dtype-cast linalg wrappers, autocast probe)", [
    C("=return get_cuda_device_if_available()", "device_type", B, False,
      "if is_npu_available():\n        return torch.device(\"npu:0\")\n    return get_cuda_device_if_available()",
      "convenience helper for examples / benchmarks; the operators themselves follow their inputs' device"),
    C("return torch.is_autocast_enabled() or torch.is_autocast_cpu_enabled()", "amp", R, False,
      "return (torch.is_autocast_enabled() or torch.is_autocast_cpu_enabled()\n"
      "            or (hasattr(torch, \"npu\") and torch.npu.is_autocast_enabled()))",
      "argument-less torch.is_autocast_enabled() only reports CUDA autocast, so ops that re-cast their outputs "
      "under autocast do not do so inside torch.autocast('npu'); unconfirmed which kornia ops then hit a dtype "
      "mismatch. Near-misses: get_cuda_device_if_available (CUDA by name), the fp32/fp64 cast wrappers, "
      "map_location_to_cpu"),
])

E("openclip_factory", "src/open_clip/factory.py", DEV,
  "mlfoundations/open_clip factory.py + training/precision.py helpers (create_model, load_openai_model, get_autocast)", [
    C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'if is_npu_available():\n        return "npu"\n    return "cuda" if torch.cuda.is_available() else "cpu"',
      "load_openai_model(device=None) puts the model on the CPU in fp32 on an NPU host (precision follows device)"),
    C("return torch.cuda.amp.autocast", "amp", R, True,
      "return partial(torch.autocast, device_type=device_type)",
      "--precision amp: CUDA autocast is inactive for NPU tensors, the run silently stays fp32"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", R, True,
      "return lambda: torch.autocast(device_type=device_type, dtype=torch.bfloat16)",
      "--precision amp_bf16: same"),
    C('return torch.cuda.amp.GradScaler() if precision == "amp" else None', "amp", R, True,
      'return torch.amp.GradScaler(device_type) if precision == "amp" else None',
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 AMP would run without loss scaling. "
      "Near-misses: create_model(device=...) takes the caller's device, precision default follows device != 'cpu'; "
      "torch.jit.script under jit=True left alone (unconfirmed on NPU)"),
])

E("timm_cuda", "timm/utils/cuda.py", DEV,
  "huggingface/pytorch-image-models timm/utils/cuda.py (ApexScaler / NativeScaler) + train.py AMP resolution", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self._scaler = torch.amp.GradScaler(device=device)",
      "NativeScaler(device='npu'): torch.cuda.amp.GradScaler disables itself without CUDA, fp16 runs unscaled"),
    C("if device.type == 'cuda' and amp_dtype == torch.float16:", "amp", R, True,
      "if device.type in ('cuda', 'npu') and amp_dtype == torch.float16:",
      "a device.type check whose else-branch is wrong on NPU: fp16 autocast gets no loss scaler (gradient underflow). "
      "The torch.autocast(device_type=device.type) line above is already generic"),
    C("if device.type == 'cuda':", "torch_cuda_api", B, True,
      "if device.type == 'cuda':\n        torch.cuda.synchronize(device)\n    elif device.type == 'npu':\n"
      "        torch.npu.synchronize(device)",
      "timing helper: NPU launches are asynchronous, so benchmark / validate throughput is measured without waiting"),
    C("if device.type != 'cuda':", "torch_cuda_api", R, False,
      "if device.type not in ('cuda', 'npu'):\n        return ''\n    dev_mod = getattr(torch, device.type)",
      "log line only. Near-misses: has_native_amp probe on torch.cuda.amp (attribute exists on any build), the "
      "apex-only device assert, the <1.10 torch.cuda.amp.autocast fallback, cudnn/TF32 flags behind is_available"),
])

E("timm_distributed", "timm/utils/distributed.py", DEV,
  "huggingface/pytorch-image-models timm/utils/distributed.py (init_distributed_device, device -> backend map)", [
    C('"cuda": "nccl",', "dist_backend", A, True, '"cuda": "nccl",\n            "npu": "hccl",',
      "--device npu under torchrun falls back to gloo. Note the existing \"hpu\": \"hccl\" entry is Habana's HCCL, "
      "a different library with the same name"),
    C("if device_type == 'cuda':", "device_type", A, False,
      "if device_type == 'npu':\n        assert torch.npu.is_available(), f'Ascend NPU is not available but {device} was specified.'",
      "clearer error only"),
    C("if device.startswith('cuda:'):", "torch_cuda_api", B, True,
      "if device.startswith('cuda:'):\n        torch.cuda.set_device(device)\n    elif device.startswith('npu:'):\n"
      "        torch.npu.set_device(device)",
      "distributed NPU ranks are never bound to their local device: all ranks initialise HCCL on npu:0. Near-misses: "
      "getattr(args, 'device', 'cuda') default (the user passes --device npu), reduce_tensor / distribute_bn / "
      "broadcast_seed take their device from the tensors"),
    C("if device.type == 'cuda':", "torch_cuda_api", B, False,
      "if device.type == 'cuda':\n        ...\n    elif device.type == 'npu':\n        props = torch.npu.get_device_properties(device)\n"
      "        _logger.info(f'{props.name}, {props.total_memory / 1024 ** 3:.1f} GiB')",
      "log only; NPU device properties have no major/minor"),
])

E("mmdet_train_api", "mmdet/apis/train.py", DEV,
  "open-mmlab/mmdetection 2.x apis/train.py + utils/util_distribution.py (build_dp/build_ddp, get_device, gpu_ids)", [
    C("model = model.cuda(kwargs['device_ids'][0])", "tensor_to_device", B, True,
      "elif device == 'npu':\n        from mmcv.device.npu import NPUDataParallel\n        dp_factory['npu'] = NPUDataParallel\n"
      "        torch.npu.set_device(kwargs['device_ids'][0])\n        model = model.npu()",
      "cfg.device == 'npu' has no DataParallel wrapper (KeyError) and plain nn.DataParallel is unsupported on Ascend"),
    C("assert device in ['cuda', 'mlu'], 'Only available for cuda or mlu devices.'", "device_type", R, True,
      "assert device in ['cuda', 'mlu', 'npu'], 'Only available for cuda, mlu or npu devices.'",
      "distributed training on NPU stops at this assert"),
    C("=model = model.cuda()", "tensor_to_device", B, True,
      "elif device == 'npu':\n        from mmcv.device.npu import NPUDistributedDataParallel\n"
      "        ddp_factory['npu'] = NPUDistributedDataParallel\n        model = model.npu()",
      "DDP wrapper and model placement for npu"),
    C("'cuda': torch.cuda.is_available(),", "device_type", A, True,
      "'cuda': torch.cuda.is_available(),\n        'npu': is_npu_available(),",
      "get_device() feeds cfg.device: an NPU host trains on the CPU otherwise"),
    C("=torch.cuda.manual_seed_all(seed)", "torch_cuda_api", B, False,
      "torch.cuda.manual_seed_all(seed)\n    if is_npu_available():\n        torch.npu.manual_seed_all(seed)",
      "torch.manual_seed also seeds the NPU generator on recent torch (see hf_trainer_utils). Near-misses: init_random_seed(device='cuda') default "
      "(tools/train.py passes cfg.device), num_gpus=len(cfg.gpu_ids), cudnn flags, Fp16OptimizerHook (mmcv's)"),
])

E("collect_env", "detectron2/utils/collect_env.py", DEV,
  "facebookresearch/detectron2 utils/collect_env.py (GPU names / arch, CUDA_HOME, cuDNN, nvidia-smi, NCCL self-test)", [
    C("=return rows", "device_type", A, False,
      "def query_npu_smi():\n    \"\"\"NPU chips as listed by `npu-smi info -l` (empty list if unavailable).\"\"\"\n    ...",
      "reporter: add an npu-smi query next to the nvidia-smi one"),
    C('data.append(("GPU available", has_gpu))', "device_type", A, False,
      'data.append(("GPU available", has_gpu))\n    if is_npu_available():\n        import torch_npu\n'
      '        data.append(("torch_npu", torch_npu.__version__))\n        for k in range(torch.npu.device_count()):\n'
      '            data.append((f"NPU {k}", torch.npu.get_device_name(k)))',
      "the report shows 'GPU available: False' and nothing about the NPUs; informational only. The CUDA-only rows "
      "(torch.version.cuda, cuDNN, CUDA_HOME, arch flags) are all behind has_gpu and stay"),
    C("=if torch.cuda.is_available():", "device_type", B, False,
      "elif is_npu_available():\n        for k in range(torch.npu.device_count()):\n"
      "            torch.tensor([1, 2.0]).to(f\"npu:{k}\")\n        if torch.npu.device_count() > 1:\n            test_hccl_ops()",
      "self-test of the __main__ entry point; its NCCL worker (backend='NCCL') is the CUDA test and stays"),
])

DM = "device_module = torch.npu if is_npu() else torch.cuda"

E("serve_memory_utils", "sglang/srt/mem_utils.py", DEV,
  "sgl-project/sglang srt/utils.py + vLLM-style memory profiling (get_available_gpu_memory, MemorySnapshot)", [
    C('if hasattr(torch, "cuda") and torch.cuda.is_available():', "device_type", B, False,
      'if is_npu():\n        return torch.npu.get_device_name(device_id)\n    if hasattr(torch, "cuda") and torch.cuda.is_available():',
      "device name is used for logs and tuned-config lookup only"),
    C('elif device == "cpu":', "torch_cuda_api", B, True,
      'elif device == "npu":\n        if empty_cache:\n            torch.npu.empty_cache()\n'
      '        free_gpu_memory, _ = torch.npu.mem_get_info(gpu_id)\n    elif device == "cpu":',
      "device='npu' leaves free_gpu_memory unbound (UnboundLocalError) when sizing the KV cache"),
    C("return torch.cuda.get_device_properties(gpu_id).total_memory", "torch_cuda_api", R, True,
      "return " + "(torch.npu if is_npu() else torch.cuda).get_device_properties(gpu_id).total_memory",
      "raises on a CUDA-less build; NPU device properties do carry total_memory"),
    C("torch.cuda.set_per_process_memory_fraction(fraction, gpu_id)", "torch_cuda_api", R, True,
      "(torch.npu if is_npu() else torch.cuda).set_per_process_memory_fraction(fraction, gpu_id)",
      "raises on a CUDA-less build"),
    C("torch.cuda.empty_cache()  # drop cached blocks", "torch_cuda_api", R, False,
      DM + "\n    device_module.empty_cache()  # drop cached blocks", "no-op without CUDA"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", R, True, "device_module.ipc_collect()",
      "torch.cuda.ipc_collect() lazily initialises CUDA and raises 'Torch not compiled with CUDA enabled'"),
    C('self.torch_peak = torch.cuda.memory_stats().get("allocated_bytes.all.peak", 0)', "torch_cuda_api", R, True,
      'self.torch_peak = device_module.memory_stats().get("allocated_bytes.all.peak", 0)',
      "silently 0 on NPU (memory_stats() returns {} when CUDA is uninitialised): KV budget overestimated"),
    C("self.free_memory, self.total_memory = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "self.free_memory, self.total_memory = device_module.mem_get_info()", "raises on a CUDA-less build"),
    C("self.torch_memory = torch.cuda.memory_reserved()", "torch_cuda_api", R, True,
      "self.torch_memory = device_module.memory_reserved()",
      "silently 0: non-torch memory is overstated and the KV-cache budget is wrong"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", R, True,
      "device_module.reset_peak_memory_stats(self.device)", "raises on a CUDA-less build"),
    C("return torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", R, True,
      "return device_module.max_memory_allocated(self.device)", "weights memory measured as 0 otherwise"),
    C("torch.cuda.empty_cache()  # start from a clean allocator", "torch_cuda_api", R, False,
      "device_module.empty_cache()  # start from a clean allocator", "no-op without CUDA"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "device_module.reset_peak_memory_stats()",
      "raises on a CUDA-less build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "device_module.synchronize()",
      "raises on a CUDA-less build; without a sync the peak is read before the dummy forward finished. "
      "Near-misses: get_compute_capability() is only reached through is_sm90_supported()'s is_cuda() guard; the "
      "cuda branch of get_available_gpu_memory stays as it is"),
])

E("hf_import_utils", "src/transformers/utils/import_utils.py", DEV,
  "huggingface/transformers utils/import_utils.py (is_torch_*_available, bf16 / tf32 / flash-attn / bnb probes)", [
    C("return hasattr(torch, \"xpu\") and torch.xpu.is_available()", "import_torch_npu", A, True,
      "@lru_cache\ndef is_torch_npu_available(check_device=False):\n    \"Checks if `torch_npu` is installed and potentially if a NPU is in the environment\"\n"
      "    if not _torch_available or importlib.util.find_spec(\"torch_npu\") is None:\n        return False\n\n"
      "    import torch\n    import torch_npu  # noqa: F401\n\n    if check_device:\n        try:\n"
      "            # Will raise a RuntimeError if no NPU is found\n            _ = torch.npu.device_count()\n"
      "            return torch.npu.is_available()\n        except RuntimeError:\n            return False\n"
      "    return hasattr(torch, \"npu\") and torch.npu.is_available()",
      "the guarded helper every downstream library (trainer, peft, LLaMA-Factory, sentence-transformers) imports"),
    C("return torch.xpu.is_bf16_supported()", "device_capability_check", B, True,
      "return torch.xpu.is_bf16_supported()\n    if is_torch_npu_available():\n        return torch.npu.is_bf16_supported()",
      "False on an NPU host: bf16 callers refuse --bf16 or silently fall back to fp16/fp32. Near-misses: "
      "is_torch_tf32_available() and is_flash_attn_2_available() returning False on NPU is the right answer "
      "(no TF32 switch to flip, flash-attn package not installable); is_torch_fp16_available_on_device probes the "
      "given device"),
    C("return _bitsandbytes_available and torch.cuda.is_available()", "device_type", R, False,
      "return _bitsandbytes_available and (torch.cuda.is_available() or is_torch_npu_available())",
      "only with a bitsandbytes build that has the NPU (multi-backend) NF4 path; unconfirmed for 8-bit"),
])

E("fairseq_utils", "fairseq/utils.py", DEV,
  "facebookresearch/fairseq utils.py (move_to_cuda, clip_grad_norm_ with amp_C, RNG-state helpers, CudaEnvironment)", [
    C("return apply_to_sample(_move_to_cuda, sample)", "tensor_to_device", A, True,
      "def move_to_npu(sample, device=None):\n    device = device or torch.npu.current_device()\n\n"
      "    def _move_to_npu(tensor):\n        return tensor.to(device=device, non_blocking=True)\n\n"
      "    return apply_to_sample(_move_to_npu, sample)",
      "the trainer's NPU branch needs a sample mover; move_to_cuda() itself stays (torch.cuda.current_device() "
      "raises on an NPU host, so it cannot simply be reused without a device)"),
    C("elif grads[0].device.type == \"xla\":", "device_type", B, False,
      "elif grads[0].device.type in (\"xla\", \"npu\"):",
      "without amp_C (never available on NPU) the per-parameter norms are copied to the CPU one by one: correct but "
      "a host sync per tensor each step. Near-misses: the guarded `from amp_C import` and multi_tensor_total_norm's "
      "device.type == 'cuda' branch (else path is plain torch.norm)"),
    C('state["cuda_rng_state"] = torch.cuda.get_rng_state()', "torch_cuda_api", B, False,
      'state["cuda_rng_state"] = torch.cuda.get_rng_state()\n    if is_npu_available():\n'
      '        state["npu_rng_state"] = torch.npu.get_rng_state()',
      "set_torch_seed() is a temporary reseed: torch.manual_seed also reseeds the NPU generator but the NPU state is "
      "never saved/restored, so code after the with-block keeps the fixed seed (reproducible but not the intended "
      "stream)"),
    C('torch.cuda.set_rng_state(state["cuda_rng_state"])', "torch_cuda_api", B, False,
      'torch.cuda.set_rng_state(state["cuda_rng_state"])\n    if "npu_rng_state" in state:\n'
      '        torch.npu.set_rng_state(state["npu_rng_state"])',
      "restore side of the above"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", B, False,
      "torch.cuda.manual_seed(seed)\n        if is_npu_available():\n            torch.npu.manual_seed(seed)",
      "redundant with torch.manual_seed; kept for symmetry. Near-miss: CudaEnvironment is only built by callers "
      "behind torch.cuda.is_available()"),
])

E("hf_testing_utils", "src/transformers/testing_utils.py", DEV,
  "huggingface/transformers testing_utils.py (torch_device, require_torch_gpu / multi_gpu, BACKEND_* dispatch tables)", [
    C('=torch_device = "cuda"', "device_type", B, False,
      'torch_device = "cuda"\n    elif is_torch_npu_available():\n        torch_device = "npu"',
      "tests: on an NPU host the suite silently runs on the CPU (TRANSFORMERS_TEST_DEVICE=npu already works, since "
      "torch.device('npu') is valid once torch_npu is loaded)"),
    C('return unittest.skipUnless(torch.cuda.device_count() > 1, "test requires multiple GPUs")(test_case)',
      "device_type", A, False,
      "def require_torch_multi_npu(test_case):\n    if not is_torch_npu_available():\n"
      "        return unittest.skip(reason=\"test requires PyTorch NPU\")(test_case)\n\n"
      "    return unittest.skipUnless(torch.npu.device_count() > 1, \"test requires multiple NPUs\")(test_case)",
      "multi-device tests are skipped on NPU hosts"),
    C('return unittest.skipUnless(torch_device == "cuda", "test requires CUDA")(test_case)', "device_type", A, False,
      "def require_torch_npu(test_case):\n    \"\"\"Decorator marking a test that requires NPU (in PyTorch).\"\"\"\n"
      "    return unittest.skipUnless(is_torch_npu_available(), \"test requires PyTorch NPU\")(test_case)",
      "new decorator beside require_torch_gpu; require_torch_accelerator is already generic"),
    C("=return torch.cuda.device_count()", "torch_cuda_api", B, False,
      "if is_torch_npu_available():\n            return torch.npu.device_count()\n        return torch.cuda.device_count()",
      "tests size their n_gpu expectations from this"),
    C('BACKEND_MANUAL_SEED = {"cuda": torch.cuda.manual_seed, "cpu": torch.manual_seed, "default": torch.manual_seed}',
      "torch_cuda_api", R, False,
      'BACKEND_MANUAL_SEED = {"cuda": torch.cuda.manual_seed, "npu": torch.npu.manual_seed, "cpu": torch.manual_seed, '
      '"default": torch.manual_seed}',
      "the 'default' entry already works for npu (torch.manual_seed)"),
    C('BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "cpu": None, "default": None}', "torch_cuda_api", R, False,
      'BACKEND_EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "npu": torch.npu.empty_cache, "cpu": None, "default": None}',
      "memory-sensitive tests do not release the NPU cache between cases"),
    C('BACKEND_DEVICE_COUNT = {"cuda": torch.cuda.device_count, "cpu": lambda: 0, "default": lambda: 1}',
      "torch_cuda_api", R, False,
      'BACKEND_DEVICE_COUNT = {"cuda": torch.cuda.device_count, "npu": torch.npu.device_count, "cpu": lambda: 0, '
      '"default": lambda: 1}',
      "'default' reports 1 device for npu. Near-misses: the CUDA_VISIBLE_DEVICES comment, the "
      "TRANSFORMERS_TEST_DEVICE == 'cuda' sanity check, require_torch_bf16_gpu / tf32 / flash_attn (CUDA features)"),
])

E("kornia_conftest", "conftest.py", DEV,
  "kornia/kornia conftest.py (--device / --dtype test matrix, environment report header)", [
    C('devices["cuda"] = torch.device("cuda:0")', "device_type", B, False,
      'devices["cuda"] = torch.device("cuda:0")\n    if is_npu_available():\n        devices["npu"] = torch.device("npu:0")',
      "tests only: `pytest --device npu` fails with KeyError in the device fixture, `--device all` skips the NPU"),
    C("- cuda: {torch.version.cuda}", "device_type", A, False,
      "- cuda: {torch.version.cuda}\n        - torch_npu: {getattr(torch_npu, '__version__', None)}",
      "report header only. Near-misses: torch.jit.script / torch.compile optimizer matrix, the nvidia-driver line"),
])

E("tm_test_ddp", "tests/unittests/bases/test_ddp.py", DEV,
  "Lightning-AI/torchmetrics tests/unittests/bases/test_ddp.py (spawned DDP tests, GPU-only skips, device parametrize)", [
    C('backend = "nccl" if torch.cuda.is_available() else "gloo"', "dist_backend", R, False,
      'backend = "nccl" if torch.cuda.is_available() else "hccl" if is_npu_available() else "gloo"',
      "tests: on an NPU host the DDP tests run over gloo on the CPU and never exercise HCCL"),
    C("=torch.cuda.set_device(rank)", "torch_cuda_api", B, False,
      "torch.cuda.set_device(rank)\n        elif is_npu_available():\n            torch.npu.set_device(rank)",
      "goes with the hccl backend"),
    C('return torch.device("cuda", rank) if torch.cuda.is_available() else torch.device("cpu")', "device_type", R, False,
      'return torch.device("cuda", rank) if torch.cuda.is_available() else torch.device("npu", rank) '
      'if is_npu_available() else torch.device("cpu")',
      "test tensors stay on the CPU"),
    C('@pytest.mark.skipif(not torch.cuda.is_available(), reason="Test requires GPU.")', "device_type", A, False,
      '@pytest.mark.skipif(not is_npu_available(), reason="Test requires NPU.")\n'
      'def test_state_dict_is_synced_on_npu(): ...',
      "GPU-only test is skipped on NPU hosts; an NPU twin would be added beside it"),
    C('@pytest.mark.parametrize("device", ["cpu", "cuda"])', "device_type", R, False,
      '@pytest.mark.parametrize("device", ["cpu", "cuda", "npu"])\n'
      '# + if device == "npu" and not is_npu_available(): pytest.skip("Test requires NPU support")',
      "device matrix of the test; the cuda case skips itself when CUDA is missing"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, False,
      'device = "cuda" if torch.cuda.is_available() else "npu" if is_npu_available() else "cpu"',
      "compute_on_cpu test then only checks CPU -> CPU"),
])

E("lightning_runif", "tests/tests_fabric/helpers/runif.py", DEV,
  "Lightning-AI lightning tests/helpers/runif.py + conftest collection filter (RunIf(min_cuda_gpus=...), PL_RUN_CUDA_TESTS)", [
    C("=min_cuda_gpus: int = 0,", "device_type", A, False, "min_cuda_gpus: int = 0,\n    min_npus: int = 0,",
      "tests: a RunIf condition for NPU tests"),
    C('kwargs["min_cuda_gpus"] = True', "device_type", A, False,
      'kwargs["min_cuda_gpus"] = True\n\n    if min_npus:\n        if num_npu_devices() < min_npus:\n'
      '            reasons.append(f"NPUs>={min_npus}")\n        kwargs["min_npus"] = True',
      "skip reason + marker kwarg that the collection filter keys on"),
    C('"min_cuda_gpus": "PL_RUN_CUDA_TESTS",', "env_var", A, False,
      '"min_cuda_gpus": "PL_RUN_CUDA_TESTS",\n        "min_npus": "PL_RUN_NPU_TESTS",',
      "lets an NPU CI job select its tests. Near-misses: bf16_cuda's CUDA-only probe (skips cleanly), the "
      "cuda_count_2 fixture that mocks CUDA for unit tests"),
])

E("gha_gpu_tests", ".github/workflows/accelerator-tests.yml", DEV,
  "accelerate / transformers-style GitHub Actions workflow with a cpu + self-hosted CUDA runner matrix", [
    C('=test-marks: ""', "device_type", A, False,
      '- device: npu\n            runner: [self-hosted, linux, arm64, ascend-910b]\n'
      '            torch-index: https://download.pytorch.org/whl/cpu\n            test-marks: ""',
      "CI only: an NPU matrix entry (aarch64 runner, CPU torch wheel + torch_npu)"),
    C("image: ${{ matrix.device == 'cuda' && 'nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04'", "device_type", R, False,
      "image: ${{ matrix.device == 'cuda' && 'nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04' || matrix.device == 'npu' "
      "&& 'ascendai/cann:latest' || 'python:3.10-slim' }}",
      "CI only; image name illustrative"),
    C("options: ${{ matrix.device == 'cuda' && '--gpus all --shm-size 16gb'", "device_type", R, False,
      "options: ${{ matrix.device == 'npu' && '--device /dev/davinci0 --device /dev/davinci1 --device /dev/davinci_manager "
      "--device /dev/devmm_svm --device /dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver "
      "-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi --shm-size 16gb' || ... }}",
      "--gpus all has no NPU meaning; Ascend containers get the davinci device nodes and the driver mounted"),
    C("CUDA_VISIBLE_DEVICES: ${{ matrix.device == 'cuda' && '0,1' || '' }}", "env_var", A, False,
      "CUDA_VISIBLE_DEVICES: ${{ matrix.device == 'cuda' && '0,1' || '' }}\n"
      "      ASCEND_RT_VISIBLE_DEVICES: ${{ matrix.device == 'npu' && '0,1' || '' }}",
      "device selection for the NPU job"),
    C("=run: nvidia-smi", "device_type", B, False,
      "run: ${{ matrix.device == 'cuda' && 'nvidia-smi' || 'npu-smi info' }}",
      "the step is gated on cuda; an npu-smi equivalent for the NPU job"),
    C("run: python3 -m pip install torch --index-url ${{ matrix.torch-index }}", "import_torch_npu", B, False,
      "run: |\n          python3 -m pip install torch --index-url ${{ matrix.torch-index }}\n"
      "          if [ \"${{ matrix.device }}\" = npu ]; then python3 -m pip install torch-npu; fi",
      "torch_npu wheel next to the CPU torch wheel"),
    C("if: ${{ matrix.device == 'cuda' }}", "device_type", R, False, "if: ${{ matrix.device != 'cpu' }}",
      "multi-device step only runs for CUDA"),
])

E("noxfile", "noxfile.py", DEV,
  "nox-based test matrix of a PyTorch library (cpu / cuda sessions, torch wheel index per device)", [
    C('DEVICES = ["cpu", "cuda"]', "device_type", R, False, 'DEVICES = ["cpu", "cuda", "npu"]', "CI / dev tooling only"),
    C('"cuda": "https://download.pytorch.org/whl/cu121",', "device_type", A, False,
      '"cuda": "https://download.pytorch.org/whl/cu121",\n    "npu": "https://download.pytorch.org/whl/cpu",',
      "NPU hosts take the CPU torch wheel (aarch64 uses plain PyPI torch) plus torch_npu"),
    C('return sum(1 for line in out.splitlines() if line.startswith("GPU "))', "device_type", A, False,
      "def _npu_count() -> int:\n    \"\"\"Number of Ascend NPUs (0 if npu-smi is missing).\"\"\"\n"
      "    if shutil.which(\"npu-smi\") is None:\n        return 0\n    ...",
      "device probe for the npu sessions"),
    C('session.install(TORCH_PINS[torch_version], "--index-url", TORCH_INDEX[device])', "import_torch_npu", B, False,
      'session.install(TORCH_PINS[torch_version], "--index-url", TORCH_INDEX[device])\n    if device == "npu":\n'
      '        session.install(TORCH_PINS[torch_version].replace("torch==", "torch-npu=="))',
      "torch_npu wheel version = torch version (+ .postN)"),
    C('if device == "cuda" and _gpu_count() == 0:', "device_type", B, False,
      'if device == "npu" and _npu_count() == 0:\n        session.skip("no Ascend NPU on this machine")',
      "skip guard for the npu session"),
    C('env["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")', "env_var", B, False,
      'if device == "npu":\n        env["ASCEND_RT_VISIBLE_DEVICES"] = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "device selection for the npu session; CUBLAS_WORKSPACE_CONFIG stays CUDA-only"),
    C('_install_torch(session, "cuda", TORCH_VERSIONS[-1])', "device_type", A, False,
      "@nox.session(python=\"3.10\")\ndef multi_npu(session: nox.Session) -> None:\n    ...  # torchrun with "
      "MYLIB_TEST_DEVICE=npu, HCCL instead of NCCL_DEBUG",
      "multi-device session twin. Near-miss: env_report prints torch.version.cuda / torch.cuda.* as a report"),
])

E("setup_extras", "setup.py", DEV,
  "hiyouga/LLaMA-Factory setup.py (optional-dependency extras, several of them CUDA-only)", [
    C('"torch": ["torch>=1.13.1"],', "import_torch_npu", A, False,
      '"torch": ["torch>=1.13.1"],\n    "torch-npu": ["torch==2.1.0", "torch-npu==2.1.0.post10", "decorator"],',
      "an install extra for Ascend hosts (the torch_npu wheel version must equal the torch version, + .postN); the "
      "base install already works on an NPU host. Near-misses: the install-time torch.version.cuda warning for "
      "CUDA-only extras, the CUDA-only extras themselves (optional), the 'Environment :: GPU :: NVIDIA CUDA' "
      "classifier"),
])
