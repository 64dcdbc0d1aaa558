# Labels for probe130 (OpenMMLab MMEngine runtime, CUDA -> Ascend NPU).
# See ../README.md ("How the labels were chosen") for the policy behind them.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


DB = "device_branch_or_abstraction"
TN = "transfer_to_npu"
ER = "explicit_replacement"
KR = "kernel_rewrite"


# ---------------------------------------------------------------- mmengine.device
E("p130_01_device_utils", "mmengine/device/utils.py", DB,
  "mmengine/device/utils.py (get_device, is_cuda_available, get_max_cuda_memory) before NPU support", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\n    IS_NPU_AVAILABLE = hasattr(torch, 'npu') and torch.npu.is_available()\nexcept Exception:\n    IS_NPU_AVAILABLE = False",
      "central device module: torch.npu only exists once torch_npu is imported (autoload only since torch 2.5.1); every other mmengine module reaches the NPU through this import"),
    C("return int(mem_mb.item())", "torch_cuda_api", "npu_only_addition", False,
      "def get_max_npu_memory(device=None) -> int:\n    mem = torch.npu.max_memory_allocated(device=device)\n    ...\n    torch.npu.reset_peak_memory_stats()",
      "NPU counterpart of get_max_cuda_memory for the memory column of the log; get_max_cuda_memory itself is only reached on CUDA"),
    C("return torch.cuda.is_available()", "device_type", "npu_only_addition", True,
      "def is_npu_available() -> bool:\n    return IS_NPU_AVAILABLE",
      "is_npu_available() is needed by get_device() and by the AMP / launcher branches"),
    C("=return 'cuda'", "device_type", "add_branch", True,
      "elif is_npu_available():\n        return 'npu'",
      "without an npu branch get_device() returns 'cpu' on an Ascend host and Runner.wrap_model silently trains on CPU"),
    C("=if device == 'cuda':", "device_type", "add_branch", True,
      "elif device == 'npu':\n        return torch.npu.device_count()",
      "falls through to 'return 1' on NPU, so auto_scale_lr computes the wrong batch size"),
  ])

# ---------------------------------------------------------------- mmengine.dist
E("p130_02_dist_utils", "mmengine/dist/utils.py", DB,
  "mmengine/dist/utils.py (init_dist, _init_dist_pytorch/_mpi/_slurm, get_comm_device, cast_data_device)", [
    C("=backend='nccl',", "dist_backend", "replace", True,
      "backend='hccl',",
      "default used when init_dist is called without a dist_cfg; NCCL is not available in a torch_npu build"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available():\n        torch.npu.set_device(local_rank)\n        torch_dist.init_process_group(backend='hccl', rank=rank, world_size=int(os.environ['WORLD_SIZE']), **kwargs)",
      "pytorch launcher: the non-MLU branch binds a CUDA device (fails on an NPU host); add an NPU branch like the existing MLU one"),
    C("torch.cuda.set_device(local_rank)  # one process per GPU under mpirun", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)  # one process per NPU under mpirun",
      "mpi launcher binds a CUDA device"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host; the SLURM_LOCALID fallback then divides by zero"),
    C("torch.cuda.set_device(local_rank)  # SLURM_LOCALID", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)  # SLURM_LOCALID == NPU index on node",
      "slurm launcher binds a CUDA device"),
    C("if backend == torch_dist.Backend.NCCL:", "dist_backend", "add_branch", True,
      "elif backend == 'hccl':\n        return torch.device('npu', torch.npu.current_device())",
      "hccl falls through to torch.device('cpu'), so all_reduce/broadcast/all_gather hand CPU tensors to HCCL; the two cuda returns stay for nccl/smddp"),
    C("visible = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", "replace", False,
      "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
      "log-only helper; on NPU the visible-device variable is ASCEND_RT_VISIBLE_DEVICES"),
    C("return list(range(num_gpus or torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "return list(range(num_gpus or torch.npu.device_count()))",
      "log-only helper; returns an empty list on NPU"),
  ])

E("p130_03_dist_dist", "mmengine/dist/dist.py", DB,
  "mmengine/dist/dist.py (all_reduce, broadcast_object_list, collect_results_cpu/gpu, old-torch fallbacks)", [
    C("if get_backend(group) == torch_dist.Backend.NCCL:", "dist_backend", "replace", False,
      "if get_backend(group) in (torch_dist.Backend.NCCL, 'hccl'):",
      "unconfirmed: whether ProcessGroupHCCL implements gather/gather_object in the target torch_npu; emulating with all_gather_object is the safe port"),
    C("=device='cuda')", "device_type", "replace", True,
      "device='npu')",
      "collect_results_cpu builds the tmpdir-name tensor on CUDA"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')",
      "same tensor on rank 0"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
      "collect_results_gpu serialises results into a CUDA tensor"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')",
      "collect_results_gpu"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')",
      "collect_results_gpu"),
  ])

# ---------------------------------------------------------------- optim
E("p130_04_amp_optim_wrapper", "mmengine/optim/optimizer/amp_optimizer_wrapper.py", DB,
  "mmengine/optim/optimizer/amp_optimizer_wrapper.py (AmpOptimWrapper on torch.cuda.amp.GradScaler)", [
    C("from torch.cuda.amp import GradScaler", "amp", "add_branch", True,
      "if is_npu_available():\n    from torch.npu.amp import GradScaler\nelse:\n    from torch.cuda.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent, so fp16 training on NPU would run without loss scaling"),
    C("assert is_cuda_available(), (", "device_type", "replace", True,
      "assert is_cuda_available() or is_npu_available(), (",
      "AmpOptimWrapper refuses to build on an NPU host"),
    C("assert torch.cuda.is_bf16_supported(), (", "device_capability_check", "replace", True,
      "assert (torch.npu.is_bf16_supported() if is_npu_available() else torch.cuda.is_bf16_supported()), (",
      "bf16 capability probe goes to the CUDA runtime and fails/returns False on NPU"),
  ])

E("p130_05_optim_builder", "mmengine/optim/optimizer/builder.py", DB,
  "mmengine/optim/optimizer/builder.py (register_torch_optimizers + apex/dadaptation/lion/bnb registries)", [
    C("from apex.optimizers import (FusedAdam, FusedLAMB, FusedNovoGrad,", "fused_optimizer", "add_branch", False,
      "from torch_npu.optim import (NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb,\n                              NpuFusedSGD)",
      "CUDA apex fused optimizers are skipped on NPU and configs fall back to AdamW; registering torch_npu.optim.NpuFused* keeps the fused path (performance only)"),
    C("=return is_cuda_available()", "fused_optimizer", "replace", False,
      "return is_cuda_available() or is_npu_available()",
      "foreach (multi-tensor) torch optimizers default off on NPU although _foreach_* kernels exist in op-plugin; performance only"),
  ])

# ---------------------------------------------------------------- model
E("p130_06_data_preprocessor", "mmengine/model/base_model/data_preprocessor.py", DB,
  "mmengine/model/base_model/data_preprocessor.py (BaseDataPreprocessor.cuda/mlu/cpu, ImgDataPreprocessor)", [
    C("self._device = torch.device(torch.cuda.current_device())", "torch_cuda_api", "add_branch", False,
      "def npu(self, *args, **kwargs) -> nn.Module:\n        self._device = torch.device(torch.npu.current_device())\n        return super().npu()",
      "add an npu() override next to cuda()/mlu() so model.npu() updates the preprocessor device; the Runner itself goes through .to()"),
  ])

E("p130_07_base_model", "mmengine/model/base_model/base_model.py", DB,
  "mmengine/model/base_model/base_model.py (BaseModel.to/cuda/mlu/_set_device)", [
    C("device = torch.device('cuda', index=device)", "device_type", "add_branch", False,
      "def npu(self, device=None) -> nn.Module:\n        device = torch.device('npu', torch.npu.current_device())\n        self._set_device(device)\n        return super().npu()",
      "npu() override mirroring cuda()/mlu(); only needed by user code calling model.npu()"),
  ])

E("p130_08_separate_ddp", "mmengine/model/wrappers/seperate_distributed.py", DB,
  "mmengine/model/wrappers/seperate_distributed.py (MMSeparateDistributedDataParallel for GANs)", [
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[int(os.environ['LOCAL_RANK'])],",
      "torch.cuda.current_device() raises on an NPU host; LOCAL_RANK (or torch.npu.current_device()) is device-neutral"),
  ])

# ---------------------------------------------------------------- runner
E("p130_09_runner_amp", "mmengine/runner/amp.py", DB,
  "mmengine/runner/amp.py (autocast wrapper for cuda / cpu / mlu)", [
    C("=if is_cuda_available():", "amp", "add_branch", False,
      "elif is_npu_available():\n            with torch.npu.amp.autocast(enabled=enabled):\n                yield",
      "torch < 1.10 path; only reachable with the EOL torch_npu 1.8.1 line"),
    C("=if device_type == 'cuda':", "amp", "add_branch", True,
      "elif device_type == 'npu':\n            pass  # torch.autocast('npu') picks fp16 by default",
      "once get_device() returns 'npu' the final else raises ValueError whenever fp16 is enabled"),
  ])

E("p130_10_empty_cache_hook", "mmengine/hooks/empty_cache_hook.py", ER,
  "mmengine/hooks/empty_cache_hook.py (EmptyCacheHook)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op without CUDA: the NPU caching allocator is never trimmed"),
    C("torch.cuda.empty_cache()  # drop blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop blocks cached by the last loop",
      "silent no-op"),
    C("torch.cuda.empty_cache()  # before the val", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before the val loop allocates",
      "silent no-op"),
  ])

E("p130_11_log_processor", "mmengine/runner/log_processor.py", DB,
  "mmengine/runner/log_processor.py (LogProcessor with max-memory column)", [
    C("=if is_cuda_available():", "device_type", "add_branch", False,
      "if is_cuda_available() or is_npu_available():",
      "memory column silently disappears from the log on NPU"),
    C("return get_max_cuda_memory(device)", "torch_cuda_api", "replace", False,
      "return get_max_npu_memory(device) if is_npu_available() else get_max_cuda_memory(device)",
      "pairs with the branch above"),
  ])

E("p130_12_collect_env", "mmengine/utils/dl_utils/collect_env.py", DB,
  "mmengine/utils/dl_utils/collect_env.py (nvcc, CUDA_HOME, GPU names)", [
    C("=if cuda_available:", "device_type", "add_branch", False,
      "elif is_npu_available():\n        env_info['NPU available'] = True\n        for k in range(torch.npu.device_count()):\n            devices[torch.npu.get_device_name(k)].append(str(k))",
      "environment report only: on NPU the device section is simply missing"),
    C("if not torch.cuda.is_available():", "device_type", "add_branch", False,
      "if is_npu_available():\n        return f'{torch.npu.device_count()}x {torch.npu.get_device_name(0)}'",
      "log header says 'CPU only' on an NPU host"),
  ])

E("p130_13_time_counter", "mmengine/utils/dl_utils/time_counter.py", ER,
  "mmengine/utils/dl_utils/time_counter.py (TimeCounter) plus a CUDA-event timer", [
    C("if with_sync and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if with_sync and torch.npu.is_available():",
      "NPU kernels are asynchronous too; without the sync the counter times only the launch and reports wrong numbers"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "pairs with the guard above"),
    C("self.enable = enable and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.enable = enable and torch.npu.is_available()",
      "timer silently disables itself and returns nan on NPU"),
    C("self._start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
      "self._start = torch.npu.Event(enable_timing=True)",
      "torch.npu.Event supports enable_timing/elapsed_time"),
    C("self._end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
      "self._end = torch.npu.Event(enable_timing=True)",
      "see above"),
  ])

E("p130_14_runner", "mmengine/runner/runner.py", DB,
  "mmengine/runner/runner.py excerpt (setup_env, wrap_model, resume, scale_lr)", [
    C("env_cfg: Dict = dict(dist_cfg=dict(backend='nccl')),", "dist_backend", "replace", True,
      "env_cfg: Dict = dict(dist_cfg=dict(backend='hccl')),",
      "default process-group backend when a config does not set env_cfg"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available():\n                device_id = torch.npu.current_device()\n                checkpoint = self.load_checkpoint(filename, map_location=lambda storage, loc: storage.npu(device_id))",
      "resume falls back to a CPU map_location on NPU, which still works (optimizer state is moved on load); performance only"),
  ])

E("p130_15_runner_utils", "mmengine/runner/utils.py", ER,
  "mmengine/runner/utils.py (set_random_seed, worker seeding) plus a DataLoader-kwargs helper", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; unconfirmed whether torch.manual_seed already seeds the NPU generator on the target torch/torch_npu pair"),
    C("torch.use_deterministic_algorithms(True)", "env_var", "npu_only_addition", False,
      "os.environ.setdefault('HCCL_DETERMINISTIC', 'true')",
      "deterministic=True on NPU also needs order-preserving HCCL reductions; cudnn flags are no-ops there"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      "pin_memory=torch.cuda.is_available() or torch.npu.is_available(),",
      "pinned host memory stays off on NPU, so non_blocking copies are synchronous; performance only"),
  ])

E("p130_16_profiler_hook", "mmengine/hooks/profiler_hook.py", ER,
  "mmengine/hooks/profiler_hook.py (ProfilerHook) plus an NVTX range hook", [
    C("from torch import profiler", "torch_cuda_api", "replace", True,
      "import torch_npu.profiler as profiler",
      "torch.profiler does not collect NPU activity; torch_npu.profiler is the NPU form (torch.profiler.ProfilerActivity is marked unsupported)"),
    C("self.activities.append(profiler.ProfilerActivity.CUDA)", "torch_cuda_api", "replace", True,
      "self.activities.append(profiler.ProfilerActivity.NPU)",
      "CUDA activity records nothing on NPU"),
    C("self.profiler = torch.profiler.profile(  # noqa", "torch_cuda_api", "replace", True,
      "self.profiler = profiler.profile(  # noqa",
      "must be torch_npu.profiler.profile to get device traces"),
    C("_on_trace_ready = torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", False,
      "_on_trace_ready = profiler.tensorboard_trace_handler(",
      "unconfirmed whether torch's handler works with torch_npu's profile object; torch_npu ships its own"),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", "removal", True, None,
      "torch.cuda.cudart() needs the CUDA runtime; no NPU equivalent for the capture-range API"),
    C("torch.cuda.nvtx.range_push(f'iter_{runner.iter}')", "torch_cuda_api", "replace", True,
      "self._range_id = torch_npu.npu.mstx.range_start(f'iter_{runner.iter}')",
      "torch.cuda.nvtx is not redirected by torch_npu and fails without CUDA; mstx is the NPU range API"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(self._range_id)",
      "see range_push"),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", "removal", True, None,
      "see cudaProfilerStart"),
  ])

E("p130_17_base_data_element", "mmengine/structures/base_data_element.py", DB,
  "mmengine/structures/base_data_element.py (BaseDataElement tensor-like methods)", [
    C("v = v.cuda()", "tensor_to_device", "add_branch", False,
      "def npu(self) -> 'BaseDataElement':\n        ...\n                v = v.npu()",
      "add an npu() method next to cuda()/mlu(); the data pipeline itself uses .to(device)"),
  ])

E("p130_18_test_dist", "tests/test_dist/test_dist.py", ER,
  "mmengine tests/test_dist/test_dist.py (GLOO and NCCL MultiProcessTestCase suites)", [
    C("torch.cuda.device_count() < 2, reason='need 2 gpu to test nccl')", "torch_cuda_api", "replace", True,
      "torch.npu.device_count() < 2, reason='need 2 npu to test hccl')",
      "on an NPU host the whole device suite is silently skipped"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on NPU -> modulo by zero"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "binds a CUDA device"),
    C("backend='nccl', rank=rank, world_size=world_size)", "dist_backend", "replace", True,
      "backend='hccl', rank=rank, world_size=world_size)", "NCCL not available"),
    C("device_types = ['cpu', 'cuda']", "device_type", "replace", True,
      "device_types = ['cpu', 'npu']", "device string"),
    C("for device_type in ('cpu', 'cuda'):", "device_type", "replace", True,
      "for device_type in ('cpu', 'npu'):", "device string"),
    C("for device_type in ['cpu', 'cuda']:", "device_type", "replace", True,
      "for device_type in ['cpu', 'npu']:", "device string"),
    C("return_value=torch.tensor(1024).cuda()) as mock_tensor:", "tensor_to_device", "replace", True,
      "return_value=torch.tensor(1024).npu()) as mock_tensor:", ".cuda()"),
    C("'key1': torch.tensor([0, 1], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key1': torch.tensor([0, 1], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key2': torch.tensor([1, 2], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key2': torch.tensor([1, 2], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key1': torch.tensor([2, 3], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key1': torch.tensor([2, 3], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key2': torch.tensor([3, 4], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key2': torch.tensor([3, 4], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key1': torch.tensor([2, 4], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key1': torch.tensor([2, 4], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key2': torch.tensor([4, 6], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key2': torch.tensor([4, 6], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key1': torch.tensor([1, 2], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key1': torch.tensor([1, 2], dtype=tensor_type).npu(),", ".cuda()"),
    C("'key2': torch.tensor([2, 3], dtype=tensor_type).cuda(),", "tensor_to_device", "replace", True,
      "'key2': torch.tensor([2, 3], dtype=tensor_type).npu(),", ".cuda()"),
    C("data = torch.ones(4, dtype=torch.bfloat16, device='cuda') * (", "device_type", "replace", True,
      "data = torch.ones(4, dtype=torch.bfloat16, device='npu') * (", "device string"),
    C("expected = torch.full((4, ), 3, dtype=torch.bfloat16, device='cuda')", "device_type", "replace", True,
      "expected = torch.full((4, ), 3, dtype=torch.bfloat16, device='npu')", "device string"),
  ])

# ---------------------------------------------------------------- downstream (mmdet-style project)
E("p130_19_tools_train", "tools/train.py", ER,
  "mmdetection 3.x tools/train.py with a --gpu-id pin added", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "recommended in the entry script; redundant once the ported mmengine.device imports torch_npu (and torch>=2.5.1 autoloads it)"),
    C("torch.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu_id)",
      "raises on an NPU host before the Runner is built"),
  ])

E("p130_20_mmdet_benchmark", "mmdet/utils/benchmark.py", ER,
  "mmdetection mmdet/utils/benchmark.py (InferenceBenchmark / DataLoaderBenchmark / DatasetBenchmark)", [
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()", ".cuda() on an NPU host"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "CUDA device query"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA; the timing needs an NPU sync"),
    C("torch.cuda.synchronize()  # test_step kernels are async", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # test_step kernels are async", "see above"),
    C("cuda_memory = get_max_cuda_memory()", "torch_cuda_api", "replace", True,
      "cuda_memory = get_max_npu_memory()",
      "get_max_cuda_memory ends in torch.cuda.reset_peak_memory_stats(), which initialises CUDA and raises"),
    C("print_log(f'cuda memory: {get_max_cuda_memory()} MB', self.logger)", "torch_cuda_api", "replace", True,
      "print_log(f'npu memory: {get_max_npu_memory()} MB', self.logger)", "see above"),
  ])

E("p130_21_mmdet_dist_utils", "mmdet/utils/dist_utils.py", ER,
  "mmdetection mmdet/utils/dist_utils.py (reduce_mean, obj2tensor, all_reduce_dict, sync_random_seed)", [
    C("def obj2tensor(pyobj, device='cuda'):", "device_type", "replace", True,
      "def obj2tensor(pyobj, device='npu'):",
      "all_reduce_dict calls obj2tensor() with the default device"),
    C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
      "if dist.get_backend() in ('nccl', 'hccl'):",
      "backend-string comparison is not rewritten by any tool; with hccl the CPU gloo group is never created and CPU objects are sent through HCCL"),
    C("def sync_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def sync_random_seed(seed=None, device='npu'):",
      "samplers call sync_random_seed() without a device"),
  ])

E("p130_22_focal_loss", "mmdet/models/losses/focal_loss.py", DB,
  "mmdetection mmdet/models/losses/focal_loss.py (mmcv sigmoid_focal_loss op vs. PyTorch fallback)", [
    C("elif torch.cuda.is_available() and pred.is_cuda:", "custom_cuda_extension", "add_branch", False,
      "elif (torch.cuda.is_available() and pred.is_cuda) or pred.device.type == 'npu':",
      "on NPU the loss silently takes the one-hot PyTorch path (correct, slower, more memory); routing to the mmcv op assumes mmcv was built with its NPU ops (unconfirmed)"),
  ])

E("p130_23_dist_train_sh", "tools/dist_train.sh", ER,
  "OpenMMLab tools/dist_train.sh with site NCCL tuning", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or importing torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
    C('if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", "replace", False,
      'if [ -z "${ASCEND_RT_VISIBLE_DEVICES}" ]; then',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))",
      "silent no-op on NPU; card selection needs ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=", "env_var", "removal", False, None,
      "no HCCL_* counterpart confirmed; harmless no-op"),
    C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None,
      "HCCL uses the NPU RoCE ports; no-op"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "host NIC for communicator setup in multi-node runs"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog switch (defaults to 1)"),
    C("nvidia-smi --query-gpu", "device_type", "replace", False,
      "npu-smi info",
      "nvidia-smi is missing on an NPU host; the script continues anyway"),
  ])

E("p130_24_slurm_train_sh", "tools/slurm_train.sh", ER,
  "OpenMMLab tools/slurm_train.sh with cluster module loads", [
    C("module load cuda/11.7", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CANN environment has to be sourced instead of the CUDA/NCCL modules (the module load failure is swallowed)"),
    C("export NCCL_IB_HCA=", "env_var", "removal", False, None,
      "no HCCL counterpart; no-op"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False,
      "--gres=npu:${GPUS_PER_NODE} \\",
      "unconfirmed: no Ascend Slurm gres integration is documented; the gres name is site-specific"),
  ])

E("p130_25_dockerfile", "docker/Dockerfile", ER,
  "mmdetection docker/Dockerfile (pytorch/pytorch CUDA devel image, NVIDIA apt keys, mmcv CUDA wheels, apex)", [
    C('ARG CUDA="11.6"', "env_var", "replace", False,
      'ARG CANN="8.0.0"', "only feeds the base-image tag"),
    C('ARG CUDNN="8"', "env_var", "removal", False, None, "only feeds the base-image tag"),
    C("FROM pytorch/pytorch:", "env_var", "replace", True,
      "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit; image name is a plausible placeholder"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None,
      "no nvcc; harmless"),
    C('TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "custom_cuda_extension", "removal", False, None,
      "no nvcc; harmless"),
    C('FORCE_CUDA="1"', "custom_cuda_extension", "replace", True,
      'FORCE_NPU="1"',
      "forces mmcv to build CUDAExtension ops, which fails without nvcc/CUDA_HOME"),
    C("RUN rm /etc/apt/sources.list.d/cuda.list", "env_var", "removal", True, None,
      "file does not exist outside the NVIDIA image; rm fails the build"),
    C("rm /etc/apt/sources.list.d/nvidia-ml.list", "env_var", "removal", True, None,
      "same"),
    C("apt-key del 7fa2af80", "env_var", "removal", False, None,
      "unconfirmed whether deleting a missing key fails the step"),
    C("3bf863cc.pub", "env_var", "removal", False, None, "NVIDIA repo key; pointless"),
    C("machine-learning/repos/ubuntu1804/x86_64/7fa2af80.pub", "env_var", "removal", False, None,
      "NVIDIA repo key; pointless"),
    C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10 pyyaml decorator attrs psutil",
      "torch_npu (and a matching torch) is not in the base image"),
    C("download.openmmlab.com/mmcv/dist/cu116", "custom_cuda_extension", "replace", True,
      'RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install "mmcv==2.0.1" --no-binary mmcv',
      "cu116 wheels link CUDA ops (libcudart); mmcv._ext cannot load on NPU"),
    C("RUN git clone https://github.com/NVIDIA/apex /apex", "fused_optimizer", "replace", False,
      "RUN git clone https://gitee.com/ascend/apex.git /apex \\",
      "NVIDIA apex source without the Ascend patch"),
    C('--config-settings "--build-option=--cpp_ext"', "fused_optimizer", "replace", True,
      "&& bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext build needs nvcc and fails"),
  ])

E("p130_26_mmcv_setup", "setup.py", KR,
  "mmcv setup.py get_extensions (CUDAExtension / MLUExtension / MPS / CPU)", [
    C("if is_rocm_pytorch or torch.cuda.is_available() or os.getenv(", "custom_cuda_extension", "add_branch", True,
      "elif os.getenv('FORCE_NPU', '0') == '1':\n            from torch_npu.utils.cpp_extension import NpuExtension\n            define_macros += [('MMCV_WITH_NPU', None)]\n            op_files = glob.glob('./mmcv/ops/csrc/pytorch/*.cpp') + glob.glob('./mmcv/ops/csrc/pytorch/cpu/*.cpp') + glob.glob('./mmcv/ops/csrc/pytorch/npu/*.cpp')\n            extension = NpuExtension",
      "without an NPU branch mmcv._ext is built CPU-only and every mmcv op called with NPU tensors fails"),
  ])

E("p130_27_environment_yml", "environment.yml", ER,
  "conda environment.yml of a downstream OpenMMLab project (pytorch-cuda, cu117 index, apex)", [
    C("=- nvidia", "env_var", "removal", False, None, "NVIDIA channel only serves CUDA packages"),
    C("- pytorch=1.13.1", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "no torch_npu release exists for torch 1.13; torch must equal torch_npu's base version"),
    C("- torchvision=0.14.1", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0", "must match torch 2.1.0"),
    C("- pytorch-cuda=11.7", "env_var", "removal", True, None,
      "selects the CUDA build of pytorch"),
    C("- cudatoolkit-dev=11.7", "env_var", "removal", False, None, "CUDA toolkit, unused on NPU"),
    C("- cudnn=8.5", "env_var", "removal", False, None, "CUDA-only"),
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "env_var", "replace", False,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; nothing below resolves torch from it today"),
    C("- mmengine>=0.7.1,<1.0.0", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post10", "torch-npu pin"),
    C("- nvidia-ml-py>=11.495", "env_var", "removal", False, None, "NVML has no NPU backend"),
    C("- apex @ git+https://github.com/NVIDIA/apex.git@23.05", "fused_optimizer", "removal", False, None,
      "installs pure-Python NVIDIA apex; Ascend apex is built from source separately"),
  ])

E("p130_28_default_runtime", "configs/_base_/default_runtime.py", ER,
  "mmdetection configs/_base_/default_runtime.py", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", True,
      "dist_cfg=dict(backend='hccl'),",
      "passed straight to init_process_group by the Runner"),
  ])
