# Labels for probe142: Hugging Face Accelerate internals before NPU support (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("acc_state", "src/accelerate/state.py", "device_branch_or_abstraction",
  "accelerate/state.py (PartialState/_prepare_backend/set_device, pre-NPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "if is_npu_available(check_device=False): import torch_npu  # noqa: F401",
      "state.py is the first accelerate module to touch devices; torch_npu must be imported (guarded) so the "
      "'npu' device and torch.npu exist on the torch 2.1-era stacks this code targets (autoload only from 2.5.1)"),
    C("self.backend = \"nccl\"", "dist_backend", "replace", True,
      "self.backend = \"hccl\" if is_npu_available() else \"nccl\"",
      "DeepSpeed path hard-codes NCCL; NCCL does not exist on Ascend, HCCL is the collective backend"),
    C("else torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "int(os.environ.get(\"LOCAL_RANK\", -1)) if not use_deepspeed else torch.npu.current_device()",
      "torch.cuda.current_device() raises on a host without CUDA (DeepSpeed launch path)"),
    C("=DistributedType.MULTI_GPU,", "device_type", "add_branch", True, "DistributedType.MULTI_NPU,",
      "wait_for_everyone would silently skip the barrier for a MULTI_NPU run"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available():",
      "single-process default device: without an NPU branch the script silently runs on CPU"),
    C("return torch.device(\"cuda\")", "device_type", "add_branch", True,
      "return torch.device(\"npu\")", "NPU counterpart of the default CUDA device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available():",
      "_prepare_backend: torchrun on NPU falls through to MULTI_CPU/gloo unless an NPU branch is added"),
    C("=backend = \"nccl\"", "dist_backend", "add_branch", True, "backend = \"hccl\"",
      "default collective backend of the new MULTI_NPU branch is HCCL"),
    C("if self.distributed_type in (DistributedType.MULTI_GPU, DistributedType.DEEPSPEED, DistributedType.FSDP):",
      "device_type", "replace", True,
      "if self.distributed_type in (DistributedType.MULTI_GPU, DistributedType.DEEPSPEED, DistributedType.FSDP) and not is_npu_available():",
      "DeepSpeed and FSDP runs on NPU would otherwise take the CUDA branch; the NPU branch must be able to claim them"),
    C("self.device = torch.device(\"cuda\", self.local_process_index)", "device_type", "add_branch", True,
      "self.device = torch.device(\"npu\", self.local_process_index)",
      "per-rank device for MULTI_NPU (and DeepSpeed/FSDP when running on NPU)"),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", "add_branch", True,
      "torch.npu.set_device(self.device)", "bind each rank to its NPU; torch.cuda.set_device fails without CUDA"),
    C("elif self.distributed_type == DistributedType.MULTI_GPU:", "device_type", "replace", True,
      "elif self.distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU]:",
      "FSDP / Megatron-LM plugins are only switched on for MULTI_GPU; an NPU run would silently drop FSDP"),
  ])

E("acc_imports", "src/accelerate/utils/imports.py", "device_branch_or_abstraction",
  "accelerate/utils/imports.py (is_cuda_available, is_bf16_available, package probes)", [
    C("=return available", "import_torch_npu", "npu_only_addition", True,
      "def is_npu_available(check_device=False): import torch_npu  # noqa: F401 ... return hasattr(torch, 'npu') and torch.npu.is_available()",
      "a guarded is_npu_available() (which performs `import torch_npu`) is the hook every NPU branch in the library needs"),
    C("return torch.cuda.is_bf16_supported()", "device_capability_check", "add_branch", False,
      "if is_npu_available(): return torch.npu.is_bf16_supported()",
      "on NPU the function falls through to `return True`; correct on Atlas A2/A3, wrong on first-gen 910 "
      "(bf16 support per chip not confirmed in the knowledge base)"),
  ])

E("acc_memory", "src/accelerate/utils/memory.py", "device_branch_or_abstraction",
  "accelerate/utils/memory.py (release_memory, should_reduce_batch_size, find_executable_batch_size)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available(): torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is simply not released"),
    C("\"CUDA out of memory.\",  # CUDA OOM", "torch_cuda_api", "add_branch", False,
      "\"NPU out of memory.\",  # NPU OOM",
      "OOM detection by message text; the torch_npu OOM message is not documented in the knowledge base (unconfirmed), "
      "without it the batch-size search re-raises instead of halving"),
    C("torch.cuda.empty_cache()  # start every search", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache()  # start every search from an empty allocator cache",
      "no-op on an NPU host; NPU branch needed to actually clear the cache"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as oom:  # NPU OOM surfaces as RuntimeError",
      "the exception class raised by torch_npu on OOM is not confirmed in the knowledge base (unconfirmed)"),
    C("torch.cuda.empty_cache()  # drop the blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop the blocks cached by the failed attempt", "no-op on NPU host"),
    C("torch.cuda.empty_cache()  # cuDNN / CPU OOM path", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available(): torch.npu.empty_cache()", "no-op on NPU host"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "torch.cuda.current_device() lazily initialises CUDA and raises without it"),
    C("\"allocated\": torch.cuda.memory_allocated(device),", "torch_cuda_api", "replace", True,
      "\"allocated\": torch.npu.memory_allocated(device),",
      "torch.cuda memory stats return 0 when CUDA is uninitialised: silently wrong numbers on NPU"),
    C("\"reserved\": torch.cuda.memory_reserved(device),", "torch_cuda_api", "replace", True,
      "\"reserved\": torch.npu.memory_reserved(device),", "silently 0 on NPU host"),
    C("\"peak\": torch.cuda.max_memory_allocated(device),", "torch_cuda_api", "replace", True,
      "\"peak\": torch.npu.max_memory_allocated(device),", "silently 0 on NPU host"),
  ])

E("acc_modeling", "src/accelerate/utils/modeling.py", "device_branch_or_abstraction",
  "accelerate/utils/modeling.py (set_module_tensor_to_device, get_max_memory, get_balanced_memory, load_state_dict)", [
    C("old_value = getattr(module, tensor_name)", "device_type", "npu_only_addition", True,
      "if is_npu_available() and isinstance(device, int): device = f\"npu:{device}\"",
      "device maps use bare integers; torch treats an int device as cuda:N, so every dispatched weight would be "
      "sent to CUDA on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "if is_npu_available(): torch.npu.empty_cache()",
      "cleanup after each move; torch.cuda.empty_cache is a silent no-op without CUDA"),
    C("if not (torch.cuda.is_available() or is_xpu_available()):", "torch_cuda_api", "replace", True,
      "if not (torch.cuda.is_available() or is_npu_available() or is_xpu_available()):",
      "without it max_memory only lists 'cpu' and device_map='auto' silently places the whole model on CPU"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "add_branch", True,
      "for i in range(torch.npu.device_count()):", "torch.cuda.device_count() is 0 on an NPU host"),
    C("_ = torch.tensor([0], device=i)", "device_type", "add_branch", True,
      "_ = torch.tensor([0], device=torch.device(\"npu\", i))",
      "integer device means cuda:i; the warm-up allocation has to target the NPU"),
    C("max_memory = {i: torch.cuda.mem_get_info(i)[0]", "torch_cuda_api", "add_branch", True,
      "max_memory = {i: torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())}",
      "free-memory probe per device; torch.npu.mem_get_info exists (knowledge TSV)"),
    C("num_devices = torch.xpu.device_count() if is_xpu_available() else torch.cuda.device_count()", "torch_cuda_api",
      "replace", False,
      "num_devices = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "only feeds a warning; on NPU every user-given device id would be reported as unavailable"),
    C("num_devices = len([d for d in max_memory if torch.device(d).type == \"cuda\"", "device_type", "replace", False,
      "num_devices = len([d for d in max_memory if isinstance(d, int) and max_memory[d] > 0])",
      "counts accelerator ids via torch.device(int).type == 'cuda'; whether that still holds with the NPU "
      "PrivateUse1 backend registered is unconfirmed"),
    C("return safe_load_file(checkpoint_file, device=list(device_map.values())[0])", "device_type", "replace", True,
      "return safe_load_file(checkpoint_file, device=f\"npu:{d}\" if isinstance(d := list(device_map.values())[0], int) else d)",
      "safetensors reads an integer device as a CUDA index, so single-device loading would target CUDA"),
    C("with safe_open(checkpoint_file, framework=\"pt\", device=device) as f:", "device_type", "replace", True,
      "with safe_open(checkpoint_file, framework=\"pt\", device=f\"npu:{device}\" if isinstance(device, int) else device) as f:",
      "same integer-device issue for the per-device fast path"),
    C("return torch.autocast(device_type=\"cuda\", dtype=torch.float16, **autocast_kwargs)", "amp", "replace", True,
      "return torch.autocast(device_type=state.device.type, dtype=torch.float16, **autocast_kwargs)",
      "autocast('cuda') on a host without CUDA warns and disables itself: fp16 silently off on NPU"),
    C("state.distributed_type.MULTI_GPU,", "device_type", "add_branch", True, "state.distributed_type.MULTI_NPU,",
      "bf16 autocast is only enabled for the listed distributed types; MULTI_NPU would fall into the cuda branch"),
    C("return torch.autocast(device_type=\"cuda\", **autocast_kwargs)", "amp", "replace", True,
      "return torch.autocast(device_type=state.device.type, **autocast_kwargs)",
      "same autocast('cuda') problem in the fallback branch"),
  ])

E("acc_big_modeling", "src/accelerate/big_modeling.py", "device_branch_or_abstraction",
  "accelerate/big_modeling.py (init_on_device, cpu_offload, dispatch_model, load_checkpoint_and_dispatch)", [
    C("model.cuda = add_warning(model.cuda, model)", "tensor_to_device", "npu_only_addition", False,
      "if is_npu_available(): model.npu = add_warning(model.npu, model)",
      "the guard against moving a dispatched model only wraps .to/.cuda; the NPU mover needs the same warning"),
    C("device = list(device_map.values())[0]", "device_type", "npu_only_addition", True,
      "if is_npu_available() and isinstance(device, int): device = f\"npu:{device}\"",
      "single-device maps like {'': 0} end in model.to(0), which torch resolves to cuda:0"),
  ])

E("acc_operations", "src/accelerate/utils/operations.py", "device_branch_or_abstraction",
  "accelerate/utils/operations.py (send_to_device, gather, broadcast, pad_across_processes, reduce)", [
    C("elif hasattr(tensor, \"to\"):", "device_type", "npu_only_addition", True,
      "if is_npu_available() and isinstance(device, int): device = f\"npu:{device}\"",
      "hooks call send_to_device with the integer execution device from the device map; tensor.to(0) means cuda:0"),
  ])

E("acc_constants", "src/accelerate/utils/constants.py", "device_branch_or_abstraction",
  "accelerate/utils/constants.py (distributed-type groups used by the collective helpers)", [
    C("TORCH_DISTRIBUTED_OPERATION_TYPES = CUDA_DISTRIBUTED_TYPES + [\"MULTI_CPU\", \"MULTI_XPU\"]", "device_type",
      "replace", True,
      "TORCH_DISTRIBUTED_OPERATION_TYPES = CUDA_DISTRIBUTED_TYPES + [\"MULTI_NPU\", \"MULTI_CPU\", \"MULTI_XPU\"]",
      "gather/broadcast/reduce only run collectives for listed types; on MULTI_NPU they would silently return the "
      "local tensor"),
  ])

E("acc_random", "src/accelerate/utils/random.py", "device_branch_or_abstraction",
  "accelerate/utils/random.py (set_seed, synchronize_rng_state(s))", [
    C("=torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available(): torch.npu.manual_seed_all(seed)",
      "cuda seeding is deferred and never applied on an NPU host; torch.manual_seed may already seed the "
      "PrivateUse1 generator on torch>=2.1 (unconfirmed), so the explicit NPU call is belt-and-braces"),
    C("rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "add_branch", True,
      "elif rng_type == RNGType.NPU: rng_state = torch.npu.get_rng_state()",
      "torch.cuda.get_rng_state initialises CUDA and raises; NPU needs its own RNGType branch"),
    C("or state.distributed_type == DistributedType.MULTI_XPU", "device_type", "add_branch", True,
      "or state.distributed_type in (DistributedType.MULTI_XPU, DistributedType.MULTI_NPU)",
      "otherwise the rng state is never broadcast on MULTI_NPU and ranks silently diverge"),
    C("torch.cuda.set_rng_state(rng_state)", "torch_cuda_api", "add_branch", True,
      "elif rng_type == RNGType.NPU: torch.npu.set_rng_state(rng_state)", "mirror of the get branch"),
    C("return [\"cuda\", \"generator\"]", "device_type", "replace", True,
      "return [\"npu\" if is_npu_available() else \"cuda\", \"generator\"]",
      "DeepSpeed/FSDP runs on NPU are in CUDA_DISTRIBUTED_TYPES and would request the CUDA generator, which raises"),
  ])

E("acc_cmd_launch", "src/accelerate/commands/launch.py", "device_branch_or_abstraction",
  "accelerate/commands/launch.py (launch_command_parser, _validate_launch_command, multi_gpu_launcher)", [
    C("if defaults.distributed_type in (DistributedType.MULTI_GPU, DistributedType.MULTI_XPU)", "device_type",
      "replace", True,
      "if defaults.distributed_type in (DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.MULTI_XPU)",
      "a config file with distributed_type MULTI_NPU would otherwise launch a single plain process"),
    C("args.num_processes = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available(): args.num_processes = torch.npu.device_count()",
      "without a config, torch.cuda.device_count() is 0 on an NPU host, so num_processes becomes 0"),
    C("or (torch.cuda.device_count() > 1)", "torch_cuda_api", "replace", True,
      "or (is_npu_available() and torch.npu.device_count() > 1) or (torch.cuda.device_count() > 1)",
      "multi-device auto-detection silently never triggers on an 8-NPU box"),
  ])

E("acc_cmd_env", "src/accelerate/commands/env.py", "device_branch_or_abstraction",
  "accelerate/commands/env.py (`accelerate env` bug-report dump)", [
    C("pt_cuda_available = torch.cuda.is_available()", "torch_cuda_api", "npu_only_addition", False,
      "pt_npu_available = is_npu_available()",
      "informational only: the report would claim no accelerator on an NPU host"),
    C("info[\"GPU type\"] = torch.cuda.get_device_name()", "torch_cuda_api", "add_branch", False,
      "if pt_npu_available: info[\"NPU type\"] = torch.npu.get_device_name()",
      "report the Ascend chip name; informational only"),
  ])

E("acc_testing", "src/accelerate/test_utils/testing.py", "device_branch_or_abstraction",
  "accelerate/test_utils/testing.py (get_backend, require_cuda, require_multi_gpu, subprocess helpers)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available():",
      "torch_device drives every device-generic test; on an NPU host the suite would silently test CPU only"),
    C("return \"cuda\", torch.cuda.device_count()", "device_type", "add_branch", True,
      "return \"npu\", torch.npu.device_count()", "NPU backend name and device count for the test suite"),
    C("return unittest.skipUnless(not torch.cuda.is_available(), \"test requires only a CPU\")(test_case)",
      "torch_cuda_api", "replace", True,
      "return unittest.skipUnless(torch_device == \"cpu\", \"test requires only a CPU\")(test_case)",
      "CPU-only tests would run on an NPU host where the ported Accelerator picks the NPU, and fail"),
    C("return unittest.skipUnless(torch.cuda.is_available(), \"test requires a GPU\")(test_case)", "torch_cuda_api",
      "npu_only_addition", False,
      "def require_npu(test_case): return unittest.skipUnless(is_npu_available(), \"test requires a NPU\")(test_case)",
      "NPU counterpart of require_cuda; without it NPU tests are merely skipped"),
    C("return unittest.skipUnless(torch.cuda.device_count() == 1, \"test requires a GPU\")(test_case)",
      "torch_cuda_api", "npu_only_addition", False,
      "def require_single_npu(test_case): return unittest.skipUnless(torch.npu.device_count() == 1, \"test requires a NPU\")(test_case)",
      "single-device tests are skipped on NPU otherwise"),
    C("return unittest.skipUnless(torch.cuda.device_count() > 1, \"test requires multiple GPUs\")(test_case)",
      "torch_cuda_api", "npu_only_addition", False,
      "def require_multi_npu(test_case): return unittest.skipUnless(torch.npu.device_count() > 1, \"test requires multiple NPUs\")(test_case)",
      "the distributed-ops tests are the main NPU validation; otherwise skipped"),
    C("num_processes = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_processes = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "torchrun would be started with --nproc_per_node=0 on an NPU host"),
  ])

E("acc_dataclasses", "src/accelerate/utils/dataclasses.py", "device_branch_or_abstraction",
  "accelerate/utils/dataclasses.py (DistributedType, RNGType, kwargs handlers, FSDP plugin)", [
    C("MULTI_GPU = \"MULTI_GPU\"", "device_type", "npu_only_addition", True, "MULTI_NPU = \"MULTI_NPU\"",
      "every NPU branch in state/launch/operations keys off a MULTI_NPU distributed type"),
    C("CUDA = \"cuda\"", "device_type", "npu_only_addition", True, "NPU = \"npu\"",
      "RNG synchronisation needs an NPU generator type (rng_types=['npu'])"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available(): device = torch.npu.current_device()",
      "FSDP sync_module_states materialises meta weights on the current device; torch.cuda.current_device raises on NPU"),
  ])

E("acc_accelerator", "src/accelerate/accelerator.py", "device_branch_or_abstraction",
  "accelerate/accelerator.py (Accelerator.__init__ mixed precision, prepare_model, backward, autocast)", [
    C("if self.device.type not in (\"xpu\", \"cuda\", \"mps\"):", "device_type", "replace", True,
      "if self.device.type not in (\"xpu\", \"cuda\", \"mps\", \"npu\"):",
      "fp16 on an NPU device would raise 'fp16 mixed precision requires a GPU'"),
    C("self.scaler = ShardedGradScaler(**kwargs)", "amp", "replace", False,
      "self.scaler = ShardedGradScaler(device=self.device.type, **kwargs)",
      "ShardedGradScaler defaults to device='cuda' in torch 2.x; effect on an NPU FSDP run unconfirmed "
      "(the 2.7.1 support table even marks FSDP as unsupported)"),
    C("self.scaler = torch.cuda.amp.GradScaler(**kwargs)", "amp", "add_branch", True,
      "elif is_npu_available(): self.scaler = torch.npu.amp.GradScaler(**kwargs)",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training on NPU silently loses loss scaling"),
    C("if self.distributed_type in (DistributedType.MULTI_GPU, DistributedType.MULTI_XPU):", "device_type",
      "replace", True,
      "if self.distributed_type in (DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.MULTI_XPU):",
      "without MULTI_NPU the model is never wrapped in DDP: gradients silently stay unsynchronised across NPUs"),
  ])

E("acc_utils_launch", "src/accelerate/utils/launch.py", "device_branch_or_abstraction",
  "accelerate/utils/launch.py (prepare_simple_launcher_cmd_env, prepare_multi_gpu_env, PrepareForLaunch)", [
    C("current_env[\"CUDA_VISIBLE_DEVICES\"] = args.gpu_ids", "env_var", "add_branch", True,
      "elif is_npu_available(): current_env[\"ASCEND_RT_VISIBLE_DEVICES\"] = args.gpu_ids",
      "--gpu_ids is ignored by the Ascend runtime unless mapped to ASCEND_RT_VISIBLE_DEVICES: the job silently "
      "lands on devices 0..n-1"),
    C("=current_env[\"CUDA_VISIBLE_DEVICES\"] = gpu_ids", "env_var", "add_branch", True,
      "elif is_npu_available(): current_env[\"ASCEND_RT_VISIBLE_DEVICES\"] = gpu_ids",
      "same device-masking issue for torchrun multi-device launches"),
    C("current_env[\"CUDA_VISIBLE_DEVICES\"] = gpu_ids  # only honoured", "env_var", "add_branch", True,
      "elif is_npu_available(): current_env[\"ASCEND_RT_VISIBLE_DEVICES\"] = gpu_ids",
      "same device-masking issue for DeepSpeed launches"),
    C("=DistributedType.MULTI_GPU,", "device_type", "add_branch", True, "DistributedType.MULTI_NPU,",
      "fork-launched (notebook) MULTI_NPU workers would otherwise never get LOCAL_RANK/RANK"),
  ])

E("acc_launchers", "src/accelerate/launchers.py", "device_branch_or_abstraction",
  "accelerate/launchers.py (notebook_launcher, debug_launcher)", [
    C("if torch.cuda.is_initialized():", "torch_cuda_api", "add_branch", False,
      "if is_npu_available() and torch.npu.is_initialized(): raise ValueError(...)",
      "fork-safety guard; an NPU initialised in the notebook before forking is not caught (fork behaviour of the "
      "NPU runtime is unconfirmed in the knowledge base)"),
  ])

E("acc_cfg_cluster", "src/accelerate/commands/config/cluster.py", "device_branch_or_abstraction",
  "accelerate/commands/config/cluster.py (`accelerate config` questionnaire)", [
    C("[\"No distributed training\", \"multi-CPU\", \"multi-XPU\", \"multi-GPU\", \"TPU\"],", "device_type",
      "add_branch", False,
      "[\"No distributed training\", \"multi-CPU\", \"multi-XPU\", \"multi-GPU\", \"multi-NPU\", \"TPU\"],",
      "lets the wizard write distributed_type MULTI_NPU; choosing multi-GPU on an NPU host still launches torchrun "
      "and the ported state picks the NPU, so this is UX rather than correctness"),
    C("if distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_XPU, DistributedType.MULTI_CPU]:",
      "device_type", "replace", False,
      "if distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.MULTI_XPU, DistributedType.MULTI_CPU]:",
      "multi-node questions for a multi-NPU answer (only reachable once the option exists)"),
    C("if distributed_type in [DistributedType.MULTI_GPU, DistributedType.NO] and not use_mps:", "device_type",
      "replace", False,
      "if distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.NO] and not use_mps:",
      "offer DeepSpeed for multi-NPU (upstream DeepSpeed has an NPU accelerator)"),
    C("=if distributed_type in [DistributedType.MULTI_GPU]:", "device_type", "replace", False,
      "if distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU]:",
      "offer FSDP for multi-NPU"),
    C("=DistributedType.MULTI_GPU,", "device_type", "add_branch", False, "DistributedType.MULTI_NPU,",
      "without it a multi-NPU answer silently gets num_processes = 1 in the written config"),
    C("distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_XPU, DistributedType.NO]", "device_type",
      "replace", False,
      "distributed_type in [DistributedType.MULTI_GPU, DistributedType.MULTI_NPU, DistributedType.MULTI_XPU, DistributedType.NO]",
      "ask for device ids (written to gpu_ids, mapped to ASCEND_RT_VISIBLE_DEVICES at launch) for multi-NPU too"),
  ])

E("acc_cfg_default", "src/accelerate/commands/config/default.py", "device_branch_or_abstraction",
  "accelerate/commands/config/default.py (write_basic_config)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available():",
      "on an NPU host the basic config is written with use_cpu: true, so every later `accelerate launch` "
      "silently trains on CPU"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "num_npus = torch.npu.device_count()", "device count for the NPU branch"),
    C("config[\"distributed_type\"] = \"MULTI_GPU\"", "device_type", "add_branch", True,
      "config[\"distributed_type\"] = \"MULTI_NPU\"", "multi-NPU default config"),
  ])

E("acc_data_loader", "src/accelerate/data_loader.py", "device_branch_or_abstraction",
  "accelerate/data_loader.py (BatchSamplerShard, DataLoaderShard, prepare_data_loader)", [
    C("if self.device is not None and self.device.type == \"cuda\" and self.pin_memory:", "pin_memory", "replace",
      False,
      "if self.device is not None and self.device.type in (\"cuda\", \"npu\") and self.pin_memory:",
      "pinned batches are copied synchronously to the NPU; performance only (msFmkTransplt recommends "
      "pin_memory + non_blocking on NPU)"),
  ])

E("acc_bnb", "src/accelerate/utils/bnb.py", "device_branch_or_abstraction",
  "accelerate/utils/bnb.py (load_and_quantize_model, get_quantized_model_device_map)", [
    C("if load_in_8bit and not is_8bit_bnb_available():", "unsupported_op_workaround", "npu_only_addition", False,
      "if load_in_8bit and is_npu_available(): raise ValueError(\"LLM.int8 (8-bit bitsandbytes) is not available on Ascend NPU; use load_in_4bit\")",
      "bitsandbytes' NPU backend covers NF4 4-bit only (knowledge §6); fail early with a clear message for 8-bit"),
    C("model.cuda(torch.cuda.current_device())", "tensor_to_device", "add_branch", False,
      "model.npu(torch.npu.current_device())",
      "sibling `elif model_device.type == \"npu\":` branch for an already-loaded NPU model; only meaningful with the "
      "multi-backend bitsandbytes NPU build"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False, "torch.npu.empty_cache()",
      "same sibling branch; cache release after moving the quantised model"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available():",
      "otherwise 'No GPU found' is raised on NPU; NPU quantisation depends on the partial bitsandbytes NPU backend"),
    C("model.to(torch.cuda.current_device())", "torch_cuda_api", "add_branch", False,
      "model.to(f\"npu:{torch.npu.current_device()}\")", "NPU placement for quantisation (partial bnb support)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif is_npu_available():", "default device map for quantised models raises 'No GPU found' on NPU"),
    C("device_map = {\"\": torch.cuda.current_device()}", "device_type", "add_branch", False,
      "device_map = {\"\": f\"npu:{torch.npu.current_device()}\"}",
      "must be an explicit npu:N string: a bare int would later be read as a CUDA index"),
  ])

E("acc_checkpointing", "src/accelerate/checkpointing.py", "device_branch_or_abstraction",
  "accelerate/checkpointing.py (save_accelerator_state / load_accelerator_state)", [
    C("states[\"torch_cuda_manual_seed\"] = torch.cuda.get_rng_state_all()", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available(): states[\"torch_npu_manual_seed\"] = torch.npu.get_rng_state_all()",
      "torch.cuda.get_rng_state_all() returns [] without CUDA: checkpoints silently miss the NPU generator state, "
      "so resumed runs are not reproducible"),
    C("torch.cuda.set_rng_state_all(states[\"torch_cuda_manual_seed\"])", "torch_cuda_api", "add_branch", True,
      "elif is_npu_available(): torch.npu.set_rng_state_all(states[\"torch_npu_manual_seed\"])",
      "restore the NPU generators on resume; the CUDA call is a silent no-op on NPU"),
  ])

E("ex_fsdp_peak_mem", "examples/by_feature/fsdp_with_peak_mem_tracking.py", "explicit_replacement",
  "accelerate examples/by_feature/fsdp_with_peak_mem_tracking.py (TorchTracemalloc around an FSDP GLUE run)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu  # noqa: F401",
      "the ported accelerate already imports torch_npu before TorchTracemalloc runs; explicit import only makes the "
      "torch.npu.* calls below self-contained"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; NPU cache not released before measuring"),
    C("torch.cuda.reset_max_memory_allocated()  # reset the peak gauge to zero", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()  # reset the peak gauge to zero",
      "resolving the current CUDA device raises on an NPU host"),
    C("self.begin = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", True,
      "self.begin = torch.npu.memory_allocated()", "CUDA memory gauges read 0 on NPU: the report is silently wrong"),
    C("torch.cuda.empty_cache()  # free cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free cached blocks before reading the gauges", "no-op on NPU host"),
    C("self.end = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", True,
      "self.end = torch.npu.memory_allocated()", "silently 0 on NPU"),
    C("self.peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      "self.peak = torch.npu.max_memory_allocated()", "silently 0 on NPU"),
    C("collate_fn=collate_fn, batch_size=batch_size, pin_memory=True", "pin_memory", "replace", False,
      "tokenized_datasets[\"train\"], shuffle=True, collate_fn=collate_fn, batch_size=batch_size, pin_memory=True, pin_memory_device=\"npu\"",
      "DataLoader pinning is tied to CUDA availability unless pin_memory_device is given; performance only "
      "(unconfirmed for the torch_npu versions in the knowledge base)"),
  ])

E("bench_big_model", "benchmarks/big_model_inference.py", "explicit_replacement",
  "accelerate benchmarks/big_model_inference.py (device_map='auto' generation timing)", [
    C("inputs = tokenizer(prompt, return_tensors=\"pt\").to(0)", "tensor_to_device", "replace", True,
      "inputs = tokenizer(prompt, return_tensors=\"pt\").to(\"npu:0\")",
      "an integer target device means cuda:0; inputs must go to the first NPU"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "CUDA synchronize initialises CUDA and raises on an NPU host; the NPU stream must be drained for honest timings"),
  ])

E("bench_measures", "benchmarks/measures_util.py", "explicit_replacement",
  "accelerate benchmarks/measures_util.py (start_measure / end_measure / log_measures)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu  # noqa: F401",
      "the benchmark imports accelerate (which imports torch_npu) before measuring; explicit import keeps the "
      "helper usable on its own"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op on NPU host"),
    C("=for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):", "0 devices on an NPU host: per-device numbers silently vanish"),
    C("measures[str(i)] = torch.cuda.memory_allocated(i)", "torch_cuda_api", "replace", True,
      "measures[str(i)] = torch.npu.memory_allocated(i)", "CUDA gauge, not the NPU allocator"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolving the current CUDA device raises on an NPU host"),
    C("torch.cuda.empty_cache()  # so that memory_allocated", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # so that memory_allocated reflects live tensors only", "no-op on NPU host"),
    C("for i in range(torch.cuda.device_count()):  # same devices", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):  # same devices as in start_measure", "0 devices on NPU host"),
    C("measures[str(i)] = (torch.cuda.memory_allocated(i)", "torch_cuda_api", "replace", True,
      "measures[str(i)] = (torch.npu.memory_allocated(i) - start_measures[str(i)]) / 2**20", "NPU allocator gauge"),
    C("measures[f\"{i}-peak\"] = (torch.cuda.max_memory_allocated(i)", "torch_cuda_api", "replace", True,
      "measures[f\"{i}-peak\"] = (torch.npu.max_memory_allocated(i) - start_measures[str(i)]) / 2**20",
      "NPU peak gauge"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "otherwise nothing is logged per device"),
  ])

E("tests_big_modeling", "tests/test_big_modeling.py", "device_branch_or_abstraction",
  "accelerate tests/test_big_modeling.py (init_on_device, cpu_offload, dispatch_model tests)", [
    C("device = torch.device(0 if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(torch_device)",
      "ungated test: on an NPU host it silently exercises CPU offload to CPU instead of the NPU "
      "(and torch.device(0) would mean cuda:0)"),
  ])

E("docker_gpu", "docker/accelerate-gpu/Dockerfile", "explicit_replacement",
  "accelerate docker/accelerate-gpu/Dockerfile (conda stage + nvidia/cuda runtime stage)", [
    C("git+https://github.com/huggingface/accelerate#egg=accelerate[testing,test_trackers] \\", "import_torch_npu",
      "npu_only_addition", True, "torch==2.1.0 torch-npu==2.1.0.post8 \\",
      "the image needs torch_npu pinned to the exact torch version (knowledge §1.1)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64)"),
    C("RUN python3 -m pip install --no-cache-dir bitsandbytes", "unsupported_op_workaround", "removal", False, None,
      "CUDA build of bitsandbytes; on NPU only the multi-backend NF4 path exists, and an installed bnb makes "
      "@require_bnb tests run and fail"),
    C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04 AS build-image", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.rc3-910b-ubuntu22.04-py3.9 AS build-image",
      "runtime stage must carry the CANN toolkit that torch_npu loads; the CUDA base image has none"),
    C("RUN echo \"source activate accelerate\" >> ~/.profile", "import_torch_npu", "npu_only_addition", True,
      "RUN echo \"source /usr/local/Ascend/ascend-toolkit/set_env.sh\" >> ~/.profile",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before torch_npu can load"),
  ])

E("slurm_multigpu", "examples/slurm/submit_multigpu.sh", "explicit_replacement",
  "accelerate examples/slurm/submit_multigpu.sh (single-node sbatch + accelerate launch)", [
    C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
      "generic-resource name depends on the cluster's Slurm gres.conf (unconfirmed)"),
    C("source activateEnvironment.sh", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced in the job"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL variables are inert on Ascend; HCCL/CANN INFO logging goes through ASCEND_GLOBAL_LOG_LEVEL (plog)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL counterpart; torch_npu already defaults it to 1, so the edit is cosmetic"),
  ])

E("cfg_multi_gpu", "examples/config_yaml_templates/multi_gpu.yaml", "explicit_replacement",
  "accelerate examples/config_yaml_templates/multi_gpu.yaml (accelerate launch config)", [
    C("distributed_type: MULTI_GPU", "device_type", "replace", False, "distributed_type: MULTI_NPU",
      "with the ported library MULTI_GPU still goes through torchrun and the state picks the NPU, so this is "
      "clarity rather than correctness"),
  ])

E("gh_nightly", ".github/workflows/nightly.yml", "explicit_replacement",
  "accelerate .github/workflows/nightly.yml (self-hosted GPU runners, slow tests)", [
    C("runs-on: [self-hosted, single-gpu, nvidia-gpu, t4, ci]", "device_type", "replace", False,
      "runs-on: [self-hosted, single-npu, ascend-npu, ci]",
      "CI routing only: the job never reaches an Ascend runner otherwise"),
    C("CUDA_VISIBLE_DEVICES: \"0\"", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES: \"0\"",
      "device masking for the single-device job"),
    C("=image: huggingface/accelerate-gpu:latest", "import_torch_npu", "replace", True,
      "image: huggingface/accelerate-npu:latest",
      "the GPU image ships CUDA torch and no CANN/torch_npu"),
    C("=options: --gpus all --shm-size \"16gb\"", "device_type", "replace", True,
      "options: --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi --shm-size \"16gb\"",
      "--gpus is the NVIDIA container toolkit; NPUs are passed as /dev/davinci* plus the manager devices and driver mounts"),
    C("runs-on: [self-hosted, multi-gpu, nvidia-gpu, t4, ci]", "device_type", "replace", False,
      "runs-on: [self-hosted, multi-npu, ascend-npu, ci]", "CI routing only"),
    C("CUDA_VISIBLE_DEVICES: \"0,1\"", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES: \"0,1\"",
      "device masking for the two-device job"),
    C("image: huggingface/accelerate-gpu:latest  # same image", "import_torch_npu", "replace", True,
      "image: huggingface/accelerate-npu:latest  # same image, two NPUs visible", "CUDA image, no CANN"),
    C("options: --gpus all --shm-size \"16gb\" --ipc host", "device_type", "replace", True,
      "options: --device /dev/davinci0 --device /dev/davinci1 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /usr/local/dcmi:/usr/local/dcmi --shm-size \"16gb\" --ipc host",
      "NPU device nodes instead of --gpus"),
  ])

E("bench_reqs", "benchmarks/requirements.txt", "explicit_replacement",
  "requirements for the accelerate big-model benchmarks (CUDA 11.8 torch wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.1.0+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "the +cu118 local version does not exist on the CPU index and would not match torch_npu"),
    C("accelerate>=0.21.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post8",
      "torch_npu pinned to the same torch version"),
    C("bitsandbytes>=0.41.0", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only wheel; NPU needs the multi-backend build (NF4 only) or nothing"),
    C("deepspeed>=0.9.3", "distributed_framework", "replace", False, "deepspeed>=0.10.0",
      "needs a DeepSpeed with the upstream NPU accelerator (legacy deepspeed_npu only supports 0.9.2); exact "
      "minimum version unconfirmed"),
  ])
