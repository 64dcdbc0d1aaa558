# Labels for probe132 (RL-for-LLM framework internals: verl / OpenRLHF style), CUDA -> Ascend NPU.
# Format: see /work/main/bench/probe_build.py. One C(...) per upstream line a careful porter edits.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("p132_01_device", "verl/utils/device.py", "device_branch_or_abstraction",
  "verl utils/device.py helper layer (CUDA-only early version)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401  (guarded by is_npu_available = importlib.util.find_spec('torch_npu') is not None)",
      "explicit import recommended; since torch_npu 2.5.1 torch autoloads it (project pins torch 2.6), so not strictly required; the helper layer is where verl-style ports put it"),
    C("return torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      "return torch.cuda.is_available() or (is_npu_available and torch.npu.is_available())",
      "torch.cuda.is_available() is False on an Ascend host, so every caller would silently take the no-accelerator path"),
    C('return "cuda"', "device_type", "add_branch", True,
      'return "npu" if is_npu_available else "cuda"',
      "device type string feeds init_device_mesh/torch.device/autocast; 'cuda' fails on NPU"),
    C("=return torch.cuda", "torch_cuda_api", "add_branch", True,
      "return torch.npu if is_npu_available else torch.cuda",
      "namespace returned to all get_torch_device() callers; torch.cuda calls fail without CUDA"),
    C("return torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "return get_torch_device().current_device()",
      "torch.cuda.current_device -> torch_npu.npu.current_device"),
    C('return "nccl"', "dist_backend", "add_branch", True,
      'return "hccl" if is_npu_available else "nccl"',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C('return "CUDA_VISIBLE_DEVICES"', "env_var", "add_branch", True,
      'return "ASCEND_RT_VISIBLE_DEVICES" if is_npu_available else "CUDA_VISIBLE_DEVICES"',
      "device visibility on Ascend is ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is ignored, so callers would silently see all NPUs"),
    C('return "GPU"', "distributed_framework", "add_branch", False,
      'return "NPU" if is_npu_available else "GPU"',
      "Ray placement bundles must request the resource the Ascend node advertises (NPU); unconfirmed in knowledge (no Ray notes)"),
    C("torch.cuda.memory._set_allocator_settings", "torch_cuda_api", "replace", False,
      'get_torch_device().memory._set_allocator_settings(f"expandable_segments:{enable}")',
      "private allocator hook; wrapped in try/except so failure only logs; NPU equivalent (or PYTORCH_NPU_ALLOC_CONF) unconfirmed"),
    C("props = torch.cuda.get_device_properties(idx)", "torch_cuda_api", "replace", True,
      "props = get_torch_device().get_device_properties(idx)",
      "reached on NPU once is_cuda_available is fixed; torch.cuda call fails; NPU props carry name/total_memory"),
  ])


E("p132_02_fsdp_workers", "verl/workers/fsdp_workers.py", "device_branch_or_abstraction",
  "verl workers/fsdp_workers.py (ActorRolloutRefWorker / CriticWorker)", [
    C('init_device_mesh("cuda", mesh_shape=(world_size,)', "device_type", "replace", True,
      'device_mesh = init_device_mesh(get_device_name(), mesh_shape=(world_size,), mesh_dim_names=["fsdp"])',
      "init_device_mesh('cuda') needs a CUDA device; NPU mesh uses device type 'npu'"),
    C('init_device_mesh("cuda", mesh_shape=(world_size // fsdp_size', "device_type", "replace", True,
      'device_mesh = init_device_mesh(get_device_name(), mesh_shape=(world_size // fsdp_size, fsdp_size), mesh_dim_names=["ddp", "fsdp"])',
      "hybrid-shard mesh, same device-type fix"),
    C('backend="cpu:gloo,cuda:nccl",', "dist_backend", "replace", True,
      'backend=f"cpu:gloo,{get_device_name()}:{get_nccl_backend()}",',
      "per-device backend string: cuda:nccl -> npu:hccl"),
    C('mesh_dim_names=["dp", "sp"])', "device_type", "replace", True,
      'self.ulysses_device_mesh = init_device_mesh(get_device_name(), mesh_shape=(dp, self.ulysses_sequence_parallel_size), mesh_dim_names=["dp", "sp"])',
      "Ulysses SP mesh for the actor"),
    C("from liger_kernel.transformers.monkey_patch import _apply_liger_kernel_to_instance", "unsupported_op_workaround", "add_branch", True,
      "if is_npu_available: raise NotImplementedError('use_liger is not supported on NPU; use torch_npu fused rms_norm/swiglu patches')",
      "Liger kernels are CUDA Triton kernels with no NPU build; fails whenever model.use_liger=True (default off)"),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device_id=get_device_id(),",
      "FSDP device_id from torch.cuda fails without CUDA"),
    C('rollout_device_mesh = init_device_mesh("cuda"', "device_type", "replace", True,
      'rollout_device_mesh = init_device_mesh(get_device_name(), mesh_shape=(dp, infer_tp), mesh_dim_names=["dp", "infer_tp"])',
      "rollout (dp, infer_tp) mesh"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()",
      "torch.cuda.empty_cache -> torch.npu.empty_cache"),
    C("data = data.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "data = data.to(get_device_id())",
      "DataProto moved to the current CUDA device; must target the NPU"),
    C("load_fsdp_optimizer(optimizer=self.actor_optimizer, device_id=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "load_fsdp_optimizer(optimizer=self.actor_optimizer, device_id=get_device_id())",
      "optimizer state reload target device"),
    C("torch.cuda.max_memory_allocated() / (1024**3)", "torch_cuda_api", "replace", True,
      'metrics["perf/max_memory_allocated_gb"] = get_torch_device().max_memory_allocated() / (1024**3)',
      "memory metric via torch.cuda fails on NPU"),
    C("torch.cuda.max_memory_reserved() / (1024**3)", "torch_cuda_api", "replace", True,
      'metrics["perf/max_memory_reserved_gb"] = get_torch_device().max_memory_reserved() / (1024**3)',
      "memory metric via torch.cuda fails on NPU"),
    C("prompts = prompts.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "prompts = prompts.to(get_device_id())",
      "prompts moved to current CUDA device"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend=get_nccl_backend())",
      "critic process group: nccl -> hccl"),
    C('mesh_dim_names=("dp", "sp"))', "device_type", "replace", True,
      'self.ulysses_device_mesh = init_device_mesh(get_device_name(), mesh_shape=(dp, self.ulysses_sequence_parallel_size), mesh_dim_names=("dp", "sp"))',
      "critic Ulysses SP mesh"),
  ])


E("p132_03_sft_trainer", "verl/trainer/fsdp_sft_trainer.py", "device_branch_or_abstraction",
  "verl trainer/fsdp_sft_trainer.py (one-file FSDP SFT trainer)", [
    C('os.environ["NCCL_DEBUG"] = "WARN"', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")',
      "NCCL_DEBUG is a silent no-op on HCCL; logging verbosity only"),
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "entry script; explicit import recommended, autoload covers torch>=2.5"),
    C("from flash_attn.bert_padding import index_first_axis, pad_input, rearrange, unpad_input", "attention_kernel", "replace", True,
      "from transformers.integrations.npu_flash_attention import index_first_axis, pad_input, rearrange, unpad_input",
      "flash-attn cannot be installed on NPU: module-level ImportError; the padding helpers exist in transformers' NPU integration"),
    C("from liger_kernel.transformers.monkey_patch import _apply_liger_kernel_to_instance", "unsupported_op_workaround", "add_branch", True,
      "if is_torch_npu_available(): raise NotImplementedError('Liger kernels are CUDA-Triton only')",
      "fails whenever model.use_liger=True (default off): Liger is CUDA-Triton only"),
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device_id=torch.npu.current_device(),",
      "FSDP device_id via torch.cuda fails on NPU"),
    C('input_ids = batch["input_ids"].cuda()', "tensor_to_device", "replace", True,
      'input_ids = batch["input_ids"].to(self.device_name)', ".cuda() on an Ascend host"),
    C('attention_mask = batch["attention_mask"].cuda()', "tensor_to_device", "replace", True,
      'attention_mask = batch["attention_mask"].to(self.device_name)', ".cuda() on an Ascend host"),
    C('position_ids = batch["position_ids"].cuda()', "tensor_to_device", "replace", True,
      'position_ids = batch["position_ids"].to(self.device_name)', ".cuda() on an Ascend host"),
    C('loss_mask = batch.pop("loss_mask")[:, :-1].reshape(-1).cuda()', "tensor_to_device", "replace", True,
      'loss_mask = batch.pop("loss_mask")[:, :-1].reshape(-1).to(self.device_name)', ".cuda() on an Ascend host"),
    C('torch.autocast(device_type="cuda", dtype=torch.bfloat16)', "amp", "replace", True,
      'with context, torch.autocast(device_type=self.device_name, dtype=torch.bfloat16):',
      "autocast('cuda') is disabled with a warning when CUDA is absent, so NPU ops would silently run without bf16 autocast"),
    C("step_loss = torch.tensor(step_loss).cuda()", "tensor_to_device", "replace", True,
      "step_loss = torch.tensor(step_loss).to(self.device_name)",
      "all_reduce operand must live on the NPU for HCCL"),
    C("data = TensorDict(data, batch_size=self.config.data.train_batch_size).cuda()", "tensor_to_device", "replace", True,
      "data = TensorDict(data, batch_size=self.config.data.train_batch_size).to(self.device_name)",
      "TensorDict.cuda() fails on NPU"),
    C("val_data = TensorDict(val_data, batch_size=self.config.data.micro_batch_size_per_gpu).cuda()", "tensor_to_device", "replace", True,
      "val_data = TensorDict(val_data, batch_size=self.config.data.micro_batch_size_per_gpu).to(self.device_name)",
      "TensorDict.cuda() fails on NPU"),
    C(".to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "data = TensorDict(data, batch_size=self.config.data.micro_batch_size_per_gpu).to(self.device_name)",
      "torch.cuda.current_device() fails on NPU"),
    C('=device_mesh = init_device_mesh(device_type="cuda", mesh_shape=(world_size,), mesh_dim_names=("fsdp",))', "device_type", "replace", True,
      'device_mesh = init_device_mesh(device_type="npu", mesh_shape=(world_size,), mesh_dim_names=("fsdp",))',
      "FSDP mesh device type"),
    C('ulysses_device_mesh = init_device_mesh(device_type="cuda"', "device_type", "replace", True,
      'ulysses_device_mesh = init_device_mesh(device_type="npu", mesh_shape=(dp_size, config.ulysses_sequence_parallel_size), mesh_dim_names=("dp", "sp"))',
      "Ulysses mesh device type"),
  ])


E("p132_04_fsdp_utils", "verl/utils/fsdp_utils.py", "device_branch_or_abstraction",
  "verl utils/fsdp_utils.py (init_fn, FSDP param/optimizer offload, parallel safetensors load)", [
    C("x = x.to_empty(device=torch.cuda.current_device(), recurse=False)", "torch_cuda_api", "replace", True,
      "x = x.to_empty(device=get_device_id(), recurse=False)",
      "FSDP param_init_fn materializes meta params on the current CUDA device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()", "torch.cuda.empty_cache on NPU host"),
    C("torch.cuda.empty_cache()  # return the freed blocks", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()  # return the freed blocks so vLLM can grab them",
      "after offload; torch.cuda call fails on NPU"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = get_device_id()", "current device index"),
    C('handle.flat_param_to(torch.device(f"cuda:{device_id}"), non_blocking=True)', "device_type", "replace", True,
      'handle.flat_param_to(torch.device(f"{get_device_name()}:{device_id}"), non_blocking=True)',
      "hard-coded cuda:N device for reloading flat params"),
    C("=device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      'device = f"npu:{get_device_id()}"',
      "torch.cuda call fails; safetensors load_file also needs an explicit npu device string rather than a bare int (unconfirmed)"),
    C("param = torch.nn.Parameter(torch.empty_like(state.data, device=torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "param = torch.nn.Parameter(torch.empty_like(state.data, device=get_device_id()), requires_grad=state.requires_grad)",
      "parameter materialized on the CUDA device"),
    C("param = torch.empty_like(state.data, device=torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "param = torch.empty_like(state.data, device=get_device_id())",
      "buffer materialized on the CUDA device"),
  ])


E("p132_05_distributed", "verl/utils/distributed.py", "device_branch_or_abstraction",
  "verl utils/distributed.py (initialize_global_process_group)", [
    C('torch.distributed.init_process_group("nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(get_nccl_backend(), timeout=timedelta(seconds=timeout_second))',
      "nccl -> hccl"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "get_torch_device().set_device(local_rank)", "torch.cuda.set_device fails on NPU"),
    C('return torch.distributed.get_backend() == "nccl"', "dist_backend", "replace", False,
      'return torch.distributed.get_backend() in ("nccl", "hccl")',
      "backend-string comparison is not rewritten by transfer_to_npu; on hccl it silently falls back to the slower all_gather_object path"),
  ])


E("p132_06_checkpoint_manager", "verl/utils/checkpoint/checkpoint_manager.py", "device_branch_or_abstraction",
  "verl utils/checkpoint/checkpoint_manager.py (BaseCheckpointManager rng state)", [
    C('"cuda": torch.cuda.get_rng_state(),', "torch_cuda_api", "replace", True,
      '"cuda": get_torch_device().get_rng_state(),',
      "torch.cuda.get_rng_state -> torch_npu.npu.get_rng_state; the dict key can stay for checkpoint compatibility"),
    C('torch.cuda.set_rng_state(rng_state["cuda"])', "torch_cuda_api", "replace", True,
      'get_torch_device().set_rng_state(rng_state["cuda"])',
      "restoring device RNG on resume"),
  ])


E("p132_07_fsdp_ckpt", "verl/utils/checkpoint/fsdp_checkpoint_manager.py", "device_branch_or_abstraction",
  "verl utils/checkpoint/fsdp_checkpoint_manager.py", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "get_torch_device().synchronize()", "torch.cuda.synchronize fails on NPU host"),
  ])


E("p132_08_fsdp_vllm", "verl/workers/sharding_manager/fsdp_vllm.py", "device_branch_or_abstraction",
  "verl workers/sharding_manager/fsdp_vllm.py (FSDP -> vLLM weight resharding, rng juggling)", [
    C("cur_rng_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "cur_rng_state = get_torch_device().get_rng_state()", "device RNG state via torch.cuda"),
    C("torch.cuda.manual_seed(gen_dp_rank + 1000)", "torch_cuda_api", "replace", True,
      "get_torch_device().manual_seed(gen_dp_rank + 1000)  # make sure all tp ranks have the same random states",
      "torch.cuda.manual_seed -> torch.npu.manual_seed"),
    C("self.gen_random_states = torch.cuda.get_rng_state().clone()", "torch_cuda_api", "replace", True,
      "self.gen_random_states = get_torch_device().get_rng_state().clone()", "device RNG state"),
    C("torch.cuda.set_rng_state(cur_rng_state)", "torch_cuda_api", "replace", True,
      "get_torch_device().set_rng_state(cur_rng_state)", "device RNG state"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()", "before vLLM wake_up"),
    C("torch.cuda.empty_cache()  # drop the gathered", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()  # drop the gathered full state dict", "after weight sync"),
    C("self.torch_random_states = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self.torch_random_states = get_torch_device().get_rng_state()", "swap in generation RNG"),
    C("torch.cuda.set_rng_state(self.gen_random_states)", "torch_cuda_api", "replace", True,
      "get_torch_device().set_rng_state(self.gen_random_states)", "swap in generation RNG"),
    C("torch.cuda.empty_cache()  # vllm has released", "torch_cuda_api", "replace", True,
      "get_torch_device().empty_cache()  # vllm has released weights + kv cache", "after vLLM sleep"),
    C("=self.gen_random_states = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self.gen_random_states = get_torch_device().get_rng_state()", "restore training RNG"),
    C("torch.cuda.set_rng_state(self.torch_random_states)", "torch_cuda_api", "replace", True,
      "get_torch_device().set_rng_state(self.torch_random_states)", "restore training RNG"),
  ])


E("p132_09_torch_functional", "verl/utils/torch_functional.py", "device_branch_or_abstraction",
  "verl utils/torch_functional.py (logprob helpers, schedulers, check_cuda_is_available)", [
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", True,
      "from transformers.integrations.npu_flash_attention import pad_input, unpad_input",
      "lazy import of flash-attn padding helpers: ImportError whenever this rmpad path is called on NPU"),
    C("assert torch.cuda.is_available(),", "torch_cuda_api", "replace", True,
      'assert get_torch_device().is_available(), f"{get_device_name()} must be initialized before this call (vLLM sharding relies on it)"',
      "decorator guards FSDPVLLMShardingManager.__init__; assertion fails on every NPU run"),
  ])


E("p132_10_seqlen_balancing", "verl/utils/seqlen_balancing.py", "device_branch_or_abstraction",
  "verl utils/seqlen_balancing.py (Karmarkar-Karp micro-batch balancing)", [
    C('num_micro_batches = torch.tensor([num_micro_batches], device="cuda")', "tensor_to_device", "replace", True,
      "num_micro_batches = torch.tensor([num_micro_batches], device=get_device_name())",
      "all_reduce operand created on a hard-coded cuda device"),
  ])


E("p132_11_ray_trainer", "verl/trainer/ppo/ray_trainer.py", "device_branch_or_abstraction",
  "verl trainer/ppo/ray_trainer.py (ResourcePoolManager, RayPPOTrainer driver loop)", [
    C('node_available_gpus = {node: node_info.get("GPU", 0)', "distributed_framework", "replace", False,
      "node_available_gpus = {node: node_info.get(get_ray_resource_name(), 0) for node, node_info in node_available_resources.items()}",
      "Ray on an Ascend node does not report NPUs under the GPU key, so the availability check would raise; Ray's NPU resource name is unconfirmed in knowledge"),
  ])


E("p132_12_main_ppo", "verl/trainer/main_ppo.py", "device_branch_or_abstraction",
  "verl trainer/main_ppo.py (ray.init runtime_env, TaskRunner)", [
    C('os.environ["ENSURE_CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "")', "env_var", "replace", False,
      'os.environ["ENSURE_CUDA_VISIBLE_DEVICES"] = os.environ.get(get_visible_devices_keyword(), "")',
      "snapshot of device visibility for SGLang; on Ascend the relevant variable is ASCEND_RT_VISIBLE_DEVICES; only read on the SGLang path"),
    C('"NCCL_DEBUG": "WARN",', "env_var", "replace", False,
      '"ASCEND_GLOBAL_LOG_LEVEL": "3",',
      "NCCL_DEBUG has no effect on HCCL; log-level only"),
    C('"TORCH_NCCL_AVOID_RECORD_STREAMS": "1",', "env_var", "removal", False, None,
      "ProcessGroupNCCL-only knob; silent no-op under HCCL (an HCCL counterpart is unconfirmed)"),
  ])


E("p132_13_ray_base", "verl/single_controller/ray/base.py", "device_branch_or_abstraction",
  "verl single_controller/ray/base.py (RayResourcePool, RayClassWithInitArgs, RayWorkerGroup)", [
    C('pg_scheme = [[{"CPU": self.max_colocate_count, "GPU": 1}', "distributed_framework", "replace", False,
      'pg_scheme = [[{"CPU": self.max_colocate_count, get_ray_resource_name(): 1} if self.use_gpu else {"CPU": self.max_colocate_count} for _ in range(process_count)] for process_count in self._store]',
      "placement-group bundles request Ray's GPU resource, which an Ascend node does not advertise (pg.ready() would hang); Ray NPU resource naming unconfirmed in knowledge"),
    C('options["num_gpus"] = num_gpus', "distributed_framework", "add_branch", False,
      'options["resources"] = {"NPU": num_gpus}  # in an `if is_npu_available:` branch; keep options["num_gpus"] for CUDA',
      "actor resource request must use the NPU custom resource; unconfirmed in knowledge"),
  ])


E("p132_14_worker", "verl/single_controller/base/worker.py", "device_branch_or_abstraction",
  "verl single_controller/base/worker.py (Worker env setup, visible devices)", [
    C('"MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'return ["WORLD_SIZE", "RANK", "LOCAL_WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", get_visible_devices_keyword()]',
      "propagated visibility key; on Ascend ASCEND_RT_VISIBLE_DEVICES governs it and CUDA_VISIBLE_DEVICES is ignored, so a sharing_with actor silently sees every NPU"),
    C("torch.cuda.set_device(int(local_rank))", "torch_cuda_api", "replace", True,
      "get_torch_device().set_device(int(local_rank))",
      "reached when RAY_EXPERIMENTAL_NOSET_*_VISIBLE_DEVICES is set; torch.cuda.set_device fails on NPU"),
    C('cuda_visible_devices = os.environ.get("CUDA_VISIBLE_DEVICES", "not set")', "env_var", "replace", True,
      'cuda_visible_devices = os.environ.get(get_visible_devices_keyword(), "not set")',
      "would report 'not set' on Ascend, breaking sharing_with colocation; path rarely used"),
  ])


# vLLM runs on Ascend through the vllm-ascend platform plugin (auto-registered entry point), so the rollout code
# itself needs no edit: gpu_memory_utilization / enforce_eager ("CUDA graph") keep their names, the Megatron-only
# CUDA_TIMER_* env write is harmless. Deliberately an all-near-miss file.
E("p132_15_vllm_rollout", "verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py", "device_branch_or_abstraction",
  "verl workers/rollout/vllm_rollout/vllm_rollout_spmd.py (SPMD vLLM rollout)", [])


E("p132_16_dp_actor", "verl/workers/actor/dp_actor.py", "device_branch_or_abstraction",
  "verl workers/actor/dp_actor.py (DataParallelPPOActor, rmpad + Ulysses forward)", [
    C("from flash_attn.bert_padding import index_first_axis, pad_input, rearrange, unpad_input", "attention_kernel", "replace", True,
      "from transformers.integrations.npu_flash_attention import index_first_axis, pad_input, rearrange, unpad_input",
      "module-level flash-attn import: ImportError on NPU"),
    C("torch.compile(verl_F.entropy_from_logits, dynamic=True)", "compile_mode", "replace", False,
      "torch.compile(verl_F.entropy_from_logits, dynamic=True) if not is_npu_available else verl_F.entropy_from_logits",
      "Inductor on NPU exists in torch_npu>=2.6 but dynamic-shape compile of this helper is unverified; performance-only fallback, unconfirmed"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast(device_type=get_device_name(), dtype=torch.bfloat16):',
      "cuda autocast is disabled without CUDA; NPU forward would silently run without bf16 autocast"),
    C("data = {**data.batch.to(torch.cuda.current_device()), **data.non_tensor_batch}", "tensor_to_device", "replace", True,
      "data = {**data.batch.to(get_device_id()), **data.non_tensor_batch}",
      "micro-batch moved to current CUDA device"),
    C("data = data.to(torch.cuda.current_device())  # actor device is cpu", "tensor_to_device", "replace", True,
      "data = data.to(get_device_id())  # actor device is cpu when using offload",
      "micro-batch moved to current CUDA device"),
  ])


E("p132_17_dp_critic", "verl/workers/critic/dp_critic.py", "device_branch_or_abstraction",
  "verl workers/critic/dp_critic.py (DataParallelPPOCritic, partly migrated to verl.utils.device)", [
    C("from flash_attn.bert_padding import index_first_axis, pad_input, rearrange, unpad_input", "attention_kernel", "replace", True,
      "from transformers.integrations.npu_flash_attention import index_first_axis, pad_input, rearrange, unpad_input",
      "module-level flash-attn import: ImportError on NPU"),
  ])


# transformers' own _flash_attention_forward dispatches to its npu_flash_attention integration on Ascend, so the
# Ulysses wrapper and the FlashAttention2 class patches stay valid. Deliberately an all-near-miss file.
E("p132_18_monkey_patch", "verl/models/transformers/monkey_patch.py", "device_branch_or_abstraction",
  "verl models/transformers/monkey_patch.py (Ulysses all-to-all around _flash_attention_forward)", [])


E("p132_19_performance", "verl/utils/debug/performance.py", "device_branch_or_abstraction",
  "verl utils/debug/performance.py + flops_counter/nvtx helpers (memory logging, MFU table, NVTX ranges, torch.profiler)", [
    C("mem_allocated = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", True,
      "mem_allocated = get_torch_device().memory_allocated()",
      "called by log_gpu_memory_usage/GPUMemoryLogger around every worker step"),
    C("mem_reserved = torch.cuda.memory_reserved()", "torch_cuda_api", "replace", True,
      "mem_reserved = get_torch_device().memory_reserved()", "same"),
    C("mem_free, mem_total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
      "mem_free, mem_total = get_torch_device().mem_get_info()", "torch_npu.npu.mem_get_info exists"),
    C("device_name = torch.cuda.get_device_name()", "torch_cuda_api", "replace", True,
      "device_name = get_torch_device().get_device_name()",
      "fails on NPU; with the NPU name the existing '910B' table entry then applies"),
    C('torch.cuda.nvtx.range_push(message or "verl")', "torch_cuda_api", "replace", True,
      'torch_npu.npu.mstx.range_start(message or "verl")',
      "torch.cuda.nvtx is not aliased by transfer_to_npu; NPU counterpart is torch_npu.npu.mstx (only when VERL_NSYS_PROFILE=1)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(range_id)",
      "mstx ranges are closed by id; needs the id from range_start (VERL_NSYS_PROFILE=1 only)"),
    C("self.prof = torch.profiler.profile(", "torch_cuda_api", "replace", True,
      "self.prof = torch_npu.profiler.profile(",
      "NPU kernels are only captured by torch_npu.profiler (transfer_to_npu maps torch.profiler.* there)"),
    C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "ProfilerActivity.CUDA records nothing on an Ascend host: silently empty device trace"),
    C("schedule=torch.profiler.schedule(", "torch_cuda_api", "replace", False,
      'schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=config.get("active_steps", 1), repeat=1),',
      "kept consistent with torch_npu.profiler; whether torch's schedule object is accepted unchanged is unconfirmed"),
    C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", True,
      'on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(os.path.join(self.save_path, f"rank{rank}")),',
      "torch_npu profiler writes its own (ascend_pt) trace layout through its own handler"),
  ])


E("p132_20_runtime_env", "verl/trainer/runtime_env.yaml", "explicit_replacement",
  "verl trainer/runtime_env.yaml (Ray job runtime env)", [
    C('TORCH_NCCL_AVOID_RECORD_STREAMS: "1"', "env_var", "removal", False, None,
      "ProcessGroupNCCL-only knob; silent no-op under HCCL"),
    C('NCCL_DEBUG: "WARN"', "env_var", "replace", False,
      'ASCEND_GLOBAL_LOG_LEVEL: "3"', "NCCL log level has no effect on HCCL"),
    C('PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"', "env_var", "replace", False,
      'PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True"',
      "torch_npu reads PYTORCH_NPU_ALLOC_CONF; the CUDA one is silently ignored (fragmentation only, not correctness)"),
  ])


E("p132_21_run_script", "examples/ppo_trainer/run_qwen2-7b_seq_balance.sh", "explicit_replacement",
  "verl examples/ppo_trainer/run_qwen2-7b_seq_balance.sh (hydra-override launcher)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded for torch_npu/HCCL; not needed when the container or shell profile already exports it"),
    C("=export VLLM_ATTENTION_BACKEND=XFORMERS", "env_var", "removal", False, None,
      "xformers has no NPU backend; vllm-ascend selects its own attention backend (whether it ignores this variable is unconfirmed)"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend: the job would silently grab NPUs 0-3 reserved for the reward server"),
  ])


E("p132_22_requirements", "requirements.txt", "explicit_replacement",
  "verl requirements.txt", [
    C("=flash-attn", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on an Ascend host; pip install -r fails"),
    C("=liger-kernel", "unsupported_op_workaround", "removal", False, None,
      "CUDA-Triton kernels, unusable on NPU; whether the install itself fails there is unconfirmed"),
    C("=torch==2.6.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.6.0",
      "torch_npu wheel pinned to the same torch version (x.y.z must match)"),
    C("=vllm==0.8.5", "distributed_framework", "npu_only_addition", True,
      "vllm-ascend==0.8.5rc1",
      "vLLM needs the vllm-ascend platform plugin on NPU (otherwise 'Failed to infer device type'); vllm itself must be the device-agnostic build"),
  ])


E("p132_23_dockerfile", "docker/Dockerfile.ngc.vllm", "explicit_replacement",
  "verl docker/Dockerfile.ngc.vllm (NGC base + vLLM + flash-attn + apex + TE)", [
    C("FROM nvcr.io/nvidia/pytorch:24.05-py3", "device_type", "replace", True,
      "FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "NGC CUDA base has no CANN toolkit/driver libs; torch_npu cannot load"),
    C("RUN pip3 install torch==2.6.0 torchvision==0.21.0 --index-url https://download.pytorch.org/whl/cu124", "device_type", "replace", True,
      "RUN pip3 install torch==2.6.0 torchvision==0.21.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend uses CPU torch (x86) or plain PyPI torch (aarch64, where cu124 wheels do not exist)"),
    C('"torch==2.6.0" \\', "import_torch_npu", "npu_only_addition", True,
      '"torch-npu==2.6.0" \\', "torch_npu pinned to the torch version"),
    C("RUN pip3 install --no-cache-dir vllm==0.8.5", "distributed_framework", "replace", True,
      "RUN VLLM_TARGET_DEVICE=empty pip3 install --no-cache-dir vllm==0.8.5 && pip3 install --no-cache-dir vllm-ascend==0.8.5rc1",
      "vLLM must be the device-agnostic build plus the vllm-ascend plugin"),
    C("flash-attn==2.7.4.post1", "attention_kernel", "removal", True, None,
      "flash-attn build needs nvcc/CUDA; fails on the CANN image"),
    C('--config-settings "--build-option=--cuda_ext"', "custom_cuda_extension", "removal", True, None,
      "apex --cuda_ext needs nvcc; Ascend apex is a separate patched build (or drop apex)"),
    C("git+https://github.com/NVIDIA/apex", "custom_cuda_extension", "removal", True, None,
      "continuation of the NVIDIA apex CUDA build"),
    C("git+https://github.com/NVIDIA/TransformerEngine.git@v1.7", "custom_cuda_extension", "removal", True, None,
      "TransformerEngine has no NPU build (MindSpeed provides TE-equivalent modules)"),
    C("RUN pip3 install --no-cache-dir liger-kernel", "unsupported_op_workaround", "removal", False, None,
      "CUDA-Triton kernels, unusable on NPU; install failure unconfirmed"),
    C("core_v0.12.0", "distributed_framework", "npu_only_addition", False,
      "RUN pip3 install git+https://gitcode.com/Ascend/MindSpeed.git  # import mindspeed.megatron_adaptor",
      "Megatron on NPU needs MindSpeed's adaptor; only used by the megatron strategy"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container-runtime knob, no effect on Ascend (devices are mounted with --device /dev/davinciN or Ascend Docker Runtime)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-runtime knob, no effect on Ascend"),
  ])


E("p132_24_triton_kernels", "verl/utils/kernel/kernels.py", "kernel_rewrite",
  "verl utils/kernel Triton fused log-prob/entropy kernels (persistent grid, autotune)", [
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "torch.cuda call on NPU host"),
    C("return props.multi_processor_count", "device_capability_check", "replace", True,
      "return props.vector_core_num",
      "NPU device properties expose only name/total_memory/L2_cache_size/cube_core_num/vector_core_num: AttributeError"),
    C('triton.Config({"BLOCK_V": 1024}, num_warps=4, num_stages=2),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_V": 1024}),',
      "num_warps/num_stages are SIMT-GPU knobs; triton-ascend tunes block size / multibuffer instead (unconfirmed)"),
    C('triton.Config({"BLOCK_V": 2048}, num_warps=8, num_stages=2),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_V": 2048}),', "same autotune list"),
    C('triton.Config({"BLOCK_V": 4096}, num_warps=16, num_stages=3),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_V": 4096}),', "same autotune list"),
    C('assert logits.is_cuda, "fused logprob kernel expects CUDA tensors"', "device_type", "replace", True,
      'assert logits.device.type in ("cuda", "npu"), "fused logprob kernel expects accelerator tensors"',
      "is_cuda is False for NPU tensors: assertion fails"),
    C("with torch.cuda.device(logits.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(logits.device):", "torch.cuda.device context with an NPU device"),
    C("_logprob_bwd_kernel[(n_rows,)](", "triton_kernel_tuning", "replace", False,
      "_logprob_bwd_kernel[(min(n_rows, _get_num_sms(logits.device)),)](",
      "one program per row oversubscribes the AI cores; triton-ascend favours grid <= core count with an in-kernel row loop (kernel change too; unconfirmed)"),
    C("=num_warps=16,", "triton_kernel_tuning", "removal", False, None,
      "launch-time num_warps meaningless on Ascend (unconfirmed)"),
  ])


E("p132_25_ds_strategy", "openrlhf/utils/deepspeed/deepspeed.py", "explicit_replacement",
  "OpenRLHF utils/deepspeed/deepspeed.py (DeepspeedStrategy)", [
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "replace", False,
      'os.environ["HCCL_DETERMINISTIC"] = "true"',
      "cuBLAS workspace knob is meaningless on NPU; deterministic HCCL reductions need HCCL_DETERMINISTIC (full_determinism only)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is a lazy call that never runs without CUDA: NPU RNG silently stays unseeded"),
    C("torch.cuda.set_device(self.args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.args.local_rank)", "torch.cuda.set_device fails on NPU"),
    C('deepspeed.init_distributed(dist_backend="nccl", timeout=timeout)', "dist_backend", "replace", True,
      'deepspeed.init_distributed(dist_backend=get_accelerator().communication_backend_name(), timeout=timeout)',
      "DeepSpeed's NPU accelerator uses hccl; explicit nccl fails"),
    C('self.ds_device_mesh = dist.init_device_mesh("cuda"', "device_type", "replace", True,
      'self.ds_device_mesh = dist.init_device_mesh(get_accelerator().device_name(), (dp_size, self.ring_attn_size), mesh_dim_names=("dp", "sp"))',
      "dp x sp mesh on a hard-coded cuda device type"),
    C("from ring_flash_attn import substitute_hf_flash_attn", "attention_kernel", "replace", True,
      "from openrlhf.models.ring_attn_npu import substitute_hf_flash_attn  # ring attention over npu_fusion_attention",
      "ring-flash-attn is built on flash-attn CUDA kernels; fails whenever ring_attn_size > 1"),
    C("AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else FusedAdam", "fused_optimizer", "replace", False,
      "AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else (torch_npu.optim.NpuFusedAdamW if is_npu else FusedAdam)",
      "DeepSpeed FusedAdam is a CUDA op build; knowledge says use torch_npu fused optimizers or DeepSpeed's NPU op builder - whether FusedAdam loads via the NPU builder is unconfirmed"),
    C("data = data.to(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "data = data.to(torch.npu.current_device())", "CPU scalar staged on CUDA for all_reduce"),
    C("ret = [torch.zeros_like(data).to(torch.cuda.current_device()) for _ in range(self.world_size)]", "tensor_to_device", "replace", True,
      "ret = [torch.zeros_like(data).to(torch.npu.current_device()) for _ in range(self.world_size)]", "all_gather buffers"),
    C("dist.all_gather(ret, data.to(torch.cuda.current_device()))", "tensor_to_device", "replace", True,
      "dist.all_gather(ret, data.to(torch.npu.current_device()))", "all_gather input"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "get_accelerator().empty_cache()", "after checkpoint save"),
  ])


E("p132_26_ring_attn", "openrlhf/models/ring_attn_utils.py", "explicit_replacement",
  "OpenRLHF models/ring_attn_utils.py (ring attention for packed samples)", [
    C("from flash_attn.utils.distributed import all_gather", "attention_kernel", "replace", True,
      "from openrlhf.utils.distributed_util import all_gather_autograd as all_gather",
      "module-level flash-attn import: ImportError on NPU even when ring attention is off"),
    C("position_ids = torch.zeros((1, end - start), dtype=torch.long, device=torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "position_ids = torch.zeros((1, end - start), dtype=torch.long, device=torch.npu.current_device())",
      "allocation on current CUDA device"),
    C("torch.tensor(packed_seq_lens, device=torch.cuda.current_device(), dtype=torch.int32),", "tensor_to_device", "replace", True,
      "torch.tensor(packed_seq_lens, device=torch.npu.current_device(), dtype=torch.int32),",
      "cu_seqlens on current CUDA device"),
    C("from ring_flash_attn import update_ring_flash_attn_params", "attention_kernel", "replace", True,
      "from openrlhf.models.ring_attn_npu import update_ring_flash_attn_params",
      "ring-flash-attn wraps flash-attn varlen CUDA kernels; an NPU ring implementation over npu_fusion_attention (TND) is needed"),
    C('torch.ones(1, pad_len, device="cuda", dtype=torch.float)', "tensor_to_device", "replace", True,
      '[attention_mask, (len(sequences) + 1) * torch.ones(1, pad_len, device=sequences.device, dtype=torch.float)], dim=-1',
      "hard-coded cuda device for the pad mask"),
  ])


E("p132_27_vllm_engine", "openrlhf/trainer/ray/vllm_engine.py", "explicit_replacement",
  "OpenRLHF trainer/ray/vllm_engine.py (LLMRayActor, create_vllm_engines with num_gpus_per_actor bundles)", [
    C('os.environ.pop("CUDA_VISIBLE_DEVICES", None)', "env_var", "add_branch", False,
      'os.environ.pop("ASCEND_RT_VISIBLE_DEVICES", None)',
      "the ray-executor hack must clear the Ascend visibility variable Ray sets for NPU actors; Ray/vllm-ascend behaviour unconfirmed"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(ray.get_gpu_ids()[0])', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(ray.get_runtime_context().get_accelerator_ids()["NPU"][0])',
      "CUDA_VISIBLE_DEVICES is ignored on Ascend so every engine would land on NPU 0; ray.get_gpu_ids() also has no NPUs to return"),
    C('bundles = [{"GPU": 1, "CPU": 1} for _ in range(num_engines * tensor_parallel_size)]', "distributed_framework", "replace", False,
      'bundles = [{"NPU": 1, "CPU": 1} for _ in range(num_engines * tensor_parallel_size)]',
      "placement group asks for Ray GPU resources an Ascend node does not advertise; Ray NPU resource naming unconfirmed in knowledge"),
    C("=num_gpus=num_gpus,", "distributed_framework", "replace", False,
      'resources={"NPU": num_gpus},',
      "actor resource request; unconfirmed in knowledge"),
  ])


E("p132_28_vllm_worker_wrap", "openrlhf/trainer/ray/vllm_worker_wrap.py", "explicit_replacement",
  "OpenRLHF trainer/ray/vllm_worker_wrap.py (vLLM worker extension for weight sync)", [
    C("from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator", "dist_backend", "replace", True,
      "from vllm_ascend.distributed.device_communicators.pyhccl import PyHcclCommunicator",
      "PyNccl dlopens libnccl, absent on Ascend; vllm-ascend ships an HCCL communicator"),
    C("pynccl = PyNcclCommunicator(pg, device=device)", "dist_backend", "replace", True,
      "pynccl = PyHcclCommunicator(pg, device=device)", "weight-sync communicator"),
    C('group_name, backend="nccl", use_ray=False):', "dist_backend", "replace", False,
      'def init_process_group(self, master_address, master_port, rank_offset, world_size, group_name, backend="hccl", use_ray=False):',
      "default only; callers pass --vllm_sync_backend explicitly"),
    C('weight = torch.empty(shape, dtype=dtype, device="cuda")', "tensor_to_device", "replace", True,
      'weight = torch.empty(shape, dtype=dtype, device="npu")', "receive buffer on a hard-coded cuda device"),
    C("self._model_update_group.broadcast(weight, src=0, stream=torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "self._model_update_group.broadcast(weight, src=0, stream=torch.npu.current_stream())", "torch.cuda stream on NPU"),
    C("handle = ipc_handles[torch.cuda.get_device_properties(self.device).uuid]", "torch_cuda_api", "replace", True,
      "handle = ipc_handles[f\"{socket.gethostname()}-{torch.npu.current_device()}\"]",
      "torch.cuda call, and NPU device properties carry no uuid; the CUDA-IPC path itself needs an NPU IPC mechanism (unconfirmed) or must be disabled"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize fails on NPU"),
  ])


E("p132_29_launcher", "openrlhf/trainer/ray/launcher.py", "explicit_replacement",
  "OpenRLHF trainer/ray/launcher.py (DistributedTorchRayActor, Reference/Reward actors, PPORayActorGroup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "module is imported in every Ray actor process; explicit import recommended, autoload covers torch>=2.5"),
    C('os.environ["LOCAL_RANK"] = str(ray.get_gpu_ids()[0]) if ray_noset_visible_devices() else "0"', "distributed_framework", "replace", False,
      'os.environ["LOCAL_RANK"] = str(ray.get_runtime_context().get_accelerator_ids()["NPU"][0]) if ray_noset_visible_devices() else "0"',
      "ray.get_gpu_ids() has no NPUs to return (only with RAY_EXPERIMENTAL_NOSET_*); Ray NPU accelerator ids unconfirmed in knowledge"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "reference forward device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()", "reference model empty_cache"),
    C("=sequences.cuda(),", "tensor_to_device", "replace", True,
      "sequences.npu(),", ".cuda() on NPU host"),
    C("=attention_mask.cuda(),", "tensor_to_device", "replace", True,
      "attention_mask.npu(),", ".cuda() on NPU host"),
    C("torch.cuda.empty_cache()  # reward model", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()  # reward model is offloaded between steps", "reward model empty_cache"),
    C('bundles = [{"GPU": self._num_gpus_per_node, "CPU": self._num_gpus_per_node}', "distributed_framework", "replace", False,
      'bundles = [{"NPU": self._num_gpus_per_node, "CPU": self._num_gpus_per_node} for _ in range(self._num_nodes)]',
      "placement group requests GPU resources; Ray NPU resource naming unconfirmed in knowledge"),
    C("actor_options = dict(num_cpus=num_gpus_per_actor, num_gpus=num_gpus_per_actor, resources=self._resources)", "distributed_framework", "replace", False,
      'actor_options = dict(num_cpus=num_gpus_per_actor, resources={**(self._resources or {}), "NPU": num_gpus_per_actor})',
      "num_gpus_per_actor must become an NPU resource request (also overrides the @ray.remote(num_gpus=1) defaults); unconfirmed in knowledge"),
  ])


E("p132_30_train_ppo_ray", "openrlhf/cli/train_ppo_ray.py", "explicit_replacement",
  "OpenRLHF cli/train_ppo_ray.py (Ray PPO entry point, argparse flags)", [
    C('bundles = [{"GPU": 1, "CPU": 1} for _ in range(args.actor_num_nodes * args.actor_num_gpus_per_node)]', "distributed_framework", "replace", False,
      'bundles = [{"NPU": 1, "CPU": 1} for _ in range(args.actor_num_nodes * args.actor_num_gpus_per_node)]',
      "colocation placement group requests GPU bundles; Ray NPU resource naming unconfirmed in knowledge"),
    C('parser.add_argument("--vllm_sync_backend", type=str, default="nccl"', "dist_backend", "replace", True,
      'parser.add_argument("--vllm_sync_backend", type=str, default="hccl", help="DeepSpeed -> vLLM weight sync backend")',
      "default backend for the actor->vLLM model-update process group; nccl does not exist on Ascend"),
    C('ray.init(runtime_env={"env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN"}})', "env_var", "replace", False,
      'ray.init(runtime_env={"env_vars": {"TOKENIZERS_PARALLELISM": "true", "ASCEND_GLOBAL_LOG_LEVEL": "3"}})',
      "NCCL_DEBUG is a no-op under HCCL; log level only"),
  ])


E("p132_31_ppo_script", "examples/scripts/train_ppo_llama_ray_hybrid_engine.sh", "explicit_replacement",
  "OpenRLHF examples/scripts/train_ppo_llama_ray_hybrid_engine.sh (ray start + ray job submit)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL; not needed if the container/profile already exports it"),
    C("ray start --head --node-ip-address 0.0.0.0 --num-gpus 8 --dashboard-host 0.0.0.0", "distributed_framework", "replace", False,
      "ray start --head --node-ip-address 0.0.0.0 --resources='{\"NPU\": 8}' --dashboard-host 0.0.0.0",
      "--num-gpus advertises GPU slots the NPU actors never use; NPU resource registration in Ray unconfirmed in knowledge"),
    C("export NCCL_CUMEM_ENABLE=0", "env_var", "removal", False, None,
      "NCCL allocator knob; no effect under HCCL"),
    C("--vllm_sync_backend nccl \\", "dist_backend", "replace", True,
      "--vllm_sync_backend hccl \\", "explicit nccl weight-sync backend fails on Ascend"),
  ])
