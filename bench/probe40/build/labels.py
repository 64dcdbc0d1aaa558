"""Labels for probe40 (hand-written synthetic upstream files; see ../README.md).

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

LIB_IMPORT = ("library module that itself calls torch.npu.* after the port; the entry script already imports "
              "torch_npu (and torch>=2.5 autoloads it), so the explicit import here is belt-and-braces")
ENTRY_IMPORT = ("entry script: the 'npu' device / torch.npu.* need torch_npu loaded (explicit import recommended "
                "even with device-backend autoload, mandatory before torch 2.5)")
CKPT = ("torch.load without map_location restores tensors onto the device they were saved from: fails only for "
        "checkpoints written on a CUDA host (NPU-trained checkpoints load fine)")

# ---------------------------------------------------------------- Isaac Gym / rl_games / rsl_rl

E("igenvs_train", "isaacgymenvs/train.py", "explicit_replacement",
  "isaac-sim/IsaacGymEnvs train.py (hydra launcher, rl_games Runner, torchrun multi-GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C("_sim_device = f'cuda:{local_rank}'", "device_type", R, True, "_sim_device = 'cpu'",
      "Isaac Gym's GPU PhysX pipeline needs CUDA; on an NPU host the simulation runs on the CPU pipeline and "
      "only the learner moves to the NPU (judgement: Isaac Gym itself is outside the knowledge files)"),
    C("_rl_device = f'cuda:{local_rank}'", "device_type", R, True, "_rl_device = f'npu:{local_rank}'",
      "rl_games builds the policy/value nets and rollout buffers on this device; 'cuda:N' fails without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device needs a CUDA build"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "logging only: on an NPU host the peak-memory line is silently skipped"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
      'logging.info(f"Peak NPU memory before training: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "only reached in the CUDA branch above"),
])

E("igenvs_utils", "isaacgymenvs/utils/utils.py", "explicit_replacement",
  "IsaacGymEnvs utils/utils.py (set_seed with cuBLAS determinism, device summary, allocator snapshot)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "same as above"),
    C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", R, False,
      "os.environ['HCCL_DETERMINISTIC'] = 'true'",
      "cuBLAS-only knob, ignored on NPU; the NPU counterpart for deterministic reductions in multi-rank runs is "
      "HCCL_DETERMINISTIC (single-card determinism comes from use_deterministic_algorithms)"),
    C('if device.startswith("cuda") and torch.cuda.is_available():', "device_type", R, False,
      'if device.startswith("npu") and torch.npu.is_available():',
      "log summary only: the else branch returns the device string, which is correct on NPU"),
    C("props = torch.cuda.get_device_properties(idx)", "torch_cuda_api", R, False,
      "props = torch.npu.get_device_properties(idx)", "only reached in the CUDA branch"),
    C('return f"{props.name} ({props.total_memory / 2**30:.1f} GiB, sm_{props.major}{props.minor})"',
      "device_capability_check", R, False,
      'return f"{props.name} ({props.total_memory / 2**30:.1f} GiB)"',
      "NPU device properties carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num only - no "
      "major/minor; matters once the branch above is ported"),
    C("torch.cuda.memory._record_memory_history(max_entries=max_entries)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(max_entries=max_entries)",
      "calls into the CUDA caching allocator (torch._C._cuda_*), absent without a CUDA build; transfer_to_npu "
      "maps it to the NPU allocator"),
    C("return lambda: torch.cuda.memory._dump_snapshot(path)", "torch_cuda_api", R, True,
      "return lambda: torch_npu.npu.memory._dump_snapshot(path)", "same as above"),
])

E("igenvs_config_yaml", "isaacgymenvs/cfg/config.yaml", "explicit_replacement",
  "IsaacGymEnvs cfg/config.yaml (hydra root config: sim/rl/graphics devices, pipeline)", [
    C("pipeline: 'gpu'", "device_type", R, False, "pipeline: 'cpu'",
      "VecTask already forces the CPU pipeline when the sim device is not CUDA (prints a warning); changing it "
      "just makes the config honest (unconfirmed: Isaac Gym is not covered by the knowledge files)"),
    C("sim_device: 'cuda:0'", "device_type", R, True, "sim_device: 'cpu'",
      "GPU PhysX simulation needs an NVIDIA GPU; the NPU host simulates on the CPU"),
    C("rl_device: 'cuda:0'", "device_type", R, True, "rl_device: 'npu:0'",
      "the rl_games learner runs on this device"),
])

E("igenvs_torch_jit_utils", "isaacgymenvs/utils/torch_jit_utils.py", "explicit_replacement",
  "IsaacGymEnvs utils/torch_jit_utils.py (TorchScript quaternion / reward helpers; device-agnostic)", [])

E("rlgames_a2c_common", "rl_games/common/a2c_common.py", "explicit_replacement",
  "Denys88/rl_games common/a2c_common.py (A2CBase: torchrun multi-GPU, GradScaler, batched all-reduce)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C('dist.init_process_group("nccl", rank=self.global_rank, world_size=self.world_size)', "dist_backend", R,
      True, 'dist.init_process_group("hccl", rank=self.global_rank, world_size=self.world_size)',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("self.device_name = 'cuda:' + str(self.local_rank)", "device_type", R, True,
      "self.device_name = 'npu:' + str(self.local_rank)", "per-rank learner device"),
    C("self.ppo_device = config.get('device', 'cuda:0')", "device_type", R, True,
      "self.ppo_device = config.get('device', 'npu:0')",
      "default used by every config that does not set device (gym / envpool examples)"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.mixed_precision)", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.mixed_precision)",
      "with mixed_precision: True the CUDA scaler disables itself without CUDA: fp16 runs unscaled"),
    C("with torch.cuda.amp.autocast(enabled=self.mixed_precision):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.mixed_precision):",
      "CUDA autocast does not touch NPU tensors: mixed_precision silently trains in fp32"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(self.local_rank)",
      "needs a CUDA build"),
])

E("rlgames_running_mean_std", "rl_games/algos_torch/running_mean_std.py", "explicit_replacement",
  "rl_games algos_torch/running_mean_std.py (observation / value normalisers; device-agnostic)", [])

E("rsl_rl_on_policy_runner", "rsl_rl/runners/on_policy_runner.py", "explicit_replacement",
  "leggedrobotics/rsl_rl runners/on_policy_runner.py (IsaacLab PPO runner, torchrun multi-GPU)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("loaded_dict = torch.load(path, weights_only=False)", "device_type", R, False,
      'loaded_dict = torch.load(path, map_location=self.device, weights_only=False)', CKPT),
    C('if self.device != f"cuda:{self.gpu_local_rank}":', "device_type", R, True,
      'if self.device != f"npu:{self.gpu_local_rank}":',
      "with the learner on 'npu:N' this sanity check raises ValueError on every multi-rank run"),
    C('torch.distributed.init_process_group(backend="nccl"', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", rank=self.gpu_global_rank, world_size=self.gpu_world_size)',
      "NCCL -> HCCL"),
    C("torch.cuda.set_device(self.gpu_local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(self.gpu_local_rank)", "needs a CUDA build"),
])

# ---------------------------------------------------------------- Habitat

E("habitat_ddp_utils", "habitat_baselines/rl/ddppo/ddp_utils.py", "explicit_replacement",
  "facebookresearch/habitat-lab habitat_baselines/rl/ddppo/ddp_utils.py (SLURM / torchrun rendezvous on a TCPStore)", [
    C('backend: str = "nccl",', "dist_backend", R, True, 'backend: str = "hccl",',
      "default for callers that do not pass a backend; NCCL is unavailable on Ascend"),
    C('if "NCCL_SOCKET_IFNAME" not in os.environ:', "env_var", R, False,
      'if "HCCL_SOCKET_IFNAME" not in os.environ:',
      "HCCL reads HCCL_SOCKET_IFNAME; the NCCL variable is ignored (matters on multi-homed nodes only)"),
    C('os.environ["NCCL_SOCKET_IFNAME"] = get_ifname()', "env_var", R, False,
      'os.environ["HCCL_SOCKET_IFNAME"] = get_ifname()', "same as above"),
])

E("habitat_ppo_trainer", "habitat_baselines/rl/ppo/ppo_trainer.py", "explicit_replacement",
  "habitat-lab habitat_baselines/rl/ppo/ppo_trainer.py (DD-PPO trainer: distributed init, device choice)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "on an NPU host this is False and DD-PPO silently trains on the CPU"),
    C('"cuda", self.config.habitat_baselines.torch_gpu_id', "device_type", R, True,
      '"npu", self.config.habitat_baselines.torch_gpu_id', "learner device"),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", R, True, "torch.npu.set_device(self.device)",
      "needs a CUDA build"),
])

E("habitat_profiling_wrapper", "habitat/utils/profiling_wrapper.py", "explicit_replacement",
  "habitat-lab habitat/utils/profiling_wrapper.py (NVTX ranges for Nsight Systems, CUDA-event timers)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C('torch.cuda.nvtx.range_push("habitat_capture_range")', "torch_cuda_api", R, True,
      '_capture_id = torch_npu.npu.mstx.range_start("habitat_capture_range")',
      "torch.cuda.nvtx is not redirected by transfer_to_npu and raises without a CUDA build when "
      "HABITAT_PROFILING=1; mstx is the NPU counterpart (method names not verified)"),
    C("torch.cuda.nvtx.range_pop()  # habitat_capture_range", "torch_cuda_api", R, True,
      "torch_npu.npu.mstx.range_end(_capture_id)  # habitat_capture_range", "same as above"),
    C("torch.cuda.synchronize()  # flush queued kernels before the range opens", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # flush queued kernels before the range opens",
      "reached with HABITAT_PROFILING_SYNC=1; torch.cuda.synchronize fails without CUDA"),
    C("torch.cuda.nvtx.range_push(msg)", "torch_cuda_api", R, True,
      "_range_ids.append(torch_npu.npu.mstx.range_start(msg))", "reached whenever profiling is enabled"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("=torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(_range_ids.pop())",
      "as above"),
    C('self.use_events = device is not None and device.type == "cuda"', "device_type", R, False,
      'self.use_events = device is not None and device.type in ("cuda", "npu")',
      "timing only: NPU devices fall back to wall time, which measures launch latency of the async queue"),
    C("self._start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "self._start = torch.npu.Event(enable_timing=True)", "only reached once the branch above admits npu"),
    C("self._end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, False,
      "self._end = torch.npu.Event(enable_timing=True)", "as above"),
])

E("habitat_slurm_sh", "habitat_baselines/rl/ddppo/multi_node_slurm.sh", "explicit_replacement",
  "habitat-lab habitat_baselines/rl/ddppo/multi_node_slurm.sh (2x8-GPU DD-PPO SLURM launcher)", [
    C("#SBATCH --gres gpu:8", "device_type", R, False, "#SBATCH --gres npu:8",
      "unconfirmed: the generic-resource name for Ascend cards depends on the cluster's SLURM configuration"),
    C("export NCCL_DEBUG=INFO", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL logging knob, ignored by HCCL"),
    C("export NCCL_DEBUG_SUBSYS=INIT", "env_var", X, False, None, "no HCCL counterpart; harmless"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only; harmless"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, True, "export HCCL_SOCKET_IFNAME=ib0",
      "the script pins the rendezvous NIC because the default is wrong on this cluster; HCCL ignores the NCCL "
      "variable and picks its own host NIC (a NIC that cannot reach the root breaks link set-up)"),
    C("srun --ntasks=1 nvidia-smi", "torch_cuda_api", R, False, "srun --ntasks=1 npu-smi info",
      "inventory print only; nvidia-smi is absent on Ascend hosts and the script has no set -e"),
    C("habitat_baselines.rl.ddppo.distrib_backend=NCCL", "dist_backend", R, True,
      "habitat_baselines.rl.ddppo.distrib_backend=HCCL \\",
      "the trainer passes this value to init_distrib_slurm: NCCL is unavailable on Ascend"),
])

# ---------------------------------------------------------------- diffusion_policy

E("dp_train_workspace", "diffusion_policy/workspace/train_diffusion_unet_hybrid_workspace.py", "explicit_replacement",
  "real-stanford/diffusion_policy workspace/train_diffusion_unet_hybrid_workspace.py (device from the yaml)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the workspace is the training entry (hydra main at the bottom) and builds torch.device(cfg.training.device); "
      "'npu:0' needs torch_npu loaded (the project pins torch 1.12, long before autoload)"),
])

E("dp_config_yaml", "diffusion_policy/config/train_diffusion_unet_hybrid_workspace.yaml", "explicit_replacement",
  "diffusion_policy config/train_diffusion_unet_hybrid_workspace.yaml", [
    C("_target_: torch.optim.AdamW", "fused_optimizer", R, False, "_target_: torch_npu.optim.NpuFusedAdamW",
      "performance only (fused tensor update, ~+70% optimizer memory per msFmkTransplt advice)"),
    C('device: "cuda:0"', "device_type", R, True, 'device: "npu:0"', "training device"),
])

E("dp_conditional_unet1d", "diffusion_policy/model/diffusion/conditional_unet1d.py", "explicit_replacement",
  "diffusion_policy model/diffusion/conditional_unet1d.py (+ conv1d_components; device-agnostic)", [])

E("dp_transformer_for_diffusion", "diffusion_policy/model/diffusion/transformer_for_diffusion.py", "explicit_replacement",
  "diffusion_policy model/diffusion/transformer_for_diffusion.py (nn.Transformer{Encoder,Decoder}Layer trunk)", [
    C("encoder_layer = nn.TransformerEncoderLayer(", "unsupported_op_workaround", R, False,
      "encoder_layer = PreNormEncoderBlock(",
      "marked unsupported in Ascend's 2.7.1 list and msFmkTransplt's list; training composes supported ops "
      "(MultiheadAttention, Linear, LayerNorm), but the eval fast path calls "
      "aten::_transformer_encoder_layer_fwd, which has no NPU kernel (CPU fallback) - unconfirmed failure mode"),
    C("decoder_layer = nn.TransformerDecoderLayer(", "unsupported_op_workaround", R, False,
      "decoder_layer = PreNormDecoderBlock(",
      "marked unsupported in Ascend's list; composes supported ops - unconfirmed failure mode"),
    C("self.decoder = nn.TransformerDecoder(", "unsupported_op_workaround", R, False,
      "self.decoder = nn.ModuleList([copy.deepcopy(decoder_layer) for _ in range(n_layer)])",
      "marked unsupported in Ascend's list - unconfirmed failure mode"),
    C("bert_layer = nn.TransformerEncoderLayer(", "unsupported_op_workaround", R, False,
      "bert_layer = PreNormEncoderBlock(", "as the first encoder layer"),
])

E("dp_eval_real_robot", "eval_real_robot.py", "explicit_replacement",
  "diffusion_policy eval_real_robot.py (UR5 + RealSense closed-loop policy evaluation)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C("payload = torch.load(open(ckpt_path, 'rb'), pickle_module=dill)", "device_type", R, False,
      "payload = torch.load(open(ckpt_path, 'rb'), pickle_module=dill, map_location='cpu')", CKPT),
    C("=device = torch.device('cuda')", "device_type", R, True, "device = torch.device('npu')", "inference device"),
    C("device = torch.device('cuda')  # BCRNN", "device_type", R, True, "device = torch.device('npu')  # BCRNN",
      "as above"),
    C("device = torch.device('cuda')  # IBC", "device_type", R, True, "device = torch.device('npu')  # IBC",
      "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize fails without a CUDA build"),
    C('print(f"GPU memory after warm-up: {torch.cuda.memory_allocated()', "torch_cuda_api", R, False,
      'print(f"NPU memory after warm-up: {torch.npu.memory_allocated() / 2**20:.0f} MiB")',
      "returns 0 without an initialised CUDA context: wrong number, no failure"),
])

# ---------------------------------------------------------------- robomimic

E("robomimic_torch_utils", "robomimic/utils/torch_utils.py", "device_branch_or_abstraction",
  "ARISE-Initiative/robomimic utils/torch_utils.py (get_torch_device and optimizer helpers)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("if try_to_use_cuda and torch.cuda.is_available():", "torch_cuda_api", B, True,
      "elif try_to_use_cuda and torch.npu.is_available():",
      "on an NPU host the check is False and robomimic silently trains on the CPU; add an NPU branch"),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")',
      "device for the NPU branch"),
])

E("robomimic_train", "robomimic/scripts/train.py", "explicit_replacement",
  "robomimic scripts/train.py (main training entry, memory logging)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "logging only: device-memory stats silently skipped on NPU"),
    C("gpu_mem_usage = int(torch.cuda.max_memory_allocated(device) / 1000000)", "torch_cuda_api", R, False,
      "gpu_mem_usage = int(torch.npu.max_memory_allocated(device) / 1000000)", "only in the CUDA branch"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, False,
      "torch.npu.reset_peak_memory_stats(device)", "only in the CUDA branch"),
])

# ---------------------------------------------------------------- ACT / ALOHA / LeRobot / R3M

E("act_imitate_episodes", "imitate_episodes.py", "explicit_replacement",
  "tonyzhaozh/act imitate_episodes.py (ACT / CNNMLP training and sim/real evaluation)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C("curr_image = torch.from_numpy(curr_image / 255.0).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "curr_image = torch.from_numpy(curr_image / 255.0).float().npu().unsqueeze(0)", ".cuda() needs CUDA"),
    C("loading_status = policy.load_state_dict(torch.load(ckpt_path))", "device_type", R, False,
      "loading_status = policy.load_state_dict(torch.load(ckpt_path, map_location='cpu'))", CKPT),
    C("policy.cuda()  # evaluation runs on the first GPU", "tensor_to_device", R, True,
      "policy.npu()  # evaluation runs on the first NPU", ".cuda() needs CUDA"),
    C("all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).cuda()",
      "tensor_to_device", R, True,
      "all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).npu()",
      "temporal-ensembling buffer"),
    C("qpos_history = torch.zeros((1, max_timesteps, state_dim)).cuda()", "tensor_to_device", R, True,
      "qpos_history = torch.zeros((1, max_timesteps, state_dim)).npu()", ".cuda() needs CUDA"),
    C("qpos = torch.from_numpy(qpos).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "qpos = torch.from_numpy(qpos).float().npu().unsqueeze(0)", ".cuda() needs CUDA"),
    C("exp_weights = torch.from_numpy(exp_weights).cuda().unsqueeze(dim=1)", "tensor_to_device", R, True,
      "exp_weights = torch.from_numpy(exp_weights).float().npu().unsqueeze(dim=1)",
      ".cuda() needs CUDA; the numpy weights are float64, which the NPU casts to float (warning) - add .float()"),
    C("image_data, qpos_data, action_data, is_pad = image_data.cuda(), qpos_data.cuda(), action_data.cuda(), is_pad.cuda()",
      "tensor_to_device", R, True,
      "image_data, qpos_data, action_data, is_pad = image_data.npu(), qpos_data.npu(), action_data.npu(), is_pad.npu()",
      "every training / validation batch"),
    C("=policy.cuda()", "tensor_to_device", R, True, "policy.npu()", "training model placement"),
])

E("act_detr_main", "detr/main.py", "explicit_replacement",
  "tonyzhaozh/act detr/main.py (argparse shim + build_*_model_and_optimizer)", [
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "ACT model placement before the optimizer is built"),
    C("=cnnmlp.cuda()", "tensor_to_device", R, True, "cnnmlp.npu()", "CNNMLP baseline placement"),
])

E("act_requirements", "requirements.txt", "explicit_replacement",
  "ACT / ALOHA-style requirements.txt pinned to cu118 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu pairs with the CPU build of torch on x86 (plain PyPI torch on aarch64)"),
    C("torch==2.0.0+cu118", "torch_cuda_api", R, True, "torch==2.1.0",
      "no torch_npu release pairs with torch 2.0.0 (2.0.1 / 2.1.0 do); drop the +cu118 local version"),
    C("torchvision==0.15.1+cu118", "torch_cuda_api", R, True, "torchvision==0.16.0",
      "must match the torch version chosen above"),
    C("numpy==1.24.4", "import_torch_npu", A, True, "torch-npu==2.1.0.post10",
      "the torch_npu wheel itself (version = torch version + .postN, matched to the installed CANN)"),
    C("nvidia-ml-py==12.535.77", "torch_cuda_api", X, False, None,
      "NVML bindings install but have no device to talk to; npu-smi / torch.npu.mem_get_info instead"),
    C("=gpustat", "torch_cuda_api", X, False, None, "NVML-based CLI, useless on Ascend"),
    C("pytorch3d @ git+https://github.com/facebookresearch/pytorch3d.git@stable", "custom_cuda_extension", X,
      False, None,
      "builds CPU-only without nvcc and its CUDA ops have no NPU kernels; only the point-cloud ablation uses it"),
])

E("lerobot_utils", "lerobot/common/utils/utils.py", "device_branch_or_abstraction",
  "huggingface/lerobot common/utils/utils.py (device selection, AMP availability, RNG state helpers)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, True,
      'if hasattr(torch, "npu") and torch.npu.is_available():\n        return torch.device("npu")',
      "with policy.device unset (or reported unavailable) an NPU host is silently auto-selected onto the CPU"),
    C('raise ValueError(f"Unknown device {try_device}. Supported devices are: cuda, mps or cpu.")', "device_type", B,
      True, 'elif try_device == "npu":\n        return torch.npu.is_available()',
      "config validation calls this with policy.device; 'npu' raises ValueError"),
    C('if device in ["cuda", "cpu"]:', "device_type", R, True, 'if device in ["cuda", "npu", "cpu"]:',
      "with use_amp=true, 'npu' falls through to the ValueError branch"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed already seeds the NPU generator"),
    C("if torch.cuda.is_available():  # also capture the device generator", "torch_cuda_api", R, False,
      "if torch.npu.is_available():  # also capture the device generator",
      "resume is no longer bit-exact on NPU: the device RNG state is not saved"),
    C('rng_state_dict["torch_cuda_rng_state"] = torch.cuda.random.get_rng_state()', "torch_cuda_api", R, False,
      'rng_state_dict["torch_npu_rng_state"] = torch.npu.get_rng_state()', "as above"),
    C('torch.cuda.random.set_rng_state(rng_state_dict["torch_cuda_rng_state"])', "torch_cuda_api", R, False,
      'torch.npu.set_rng_state(rng_state_dict["torch_npu_rng_state"])',
      "only reached for CUDA-written checkpoints; lazily queued, harmless"),
])

E("lerobot_train", "lerobot/scripts/train.py", "explicit_replacement",
  "lerobot scripts/train.py (device.type-driven autocast / GradScaler, offline training loop)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script; everything else follows device.type ('npu' autocast, torch.amp.GradScaler('npu'))"),
])

E("r3m_loader", "r3m/__init__.py", "explicit_replacement",
  "facebookresearch/r3m r3m/__init__.py (pretrained visual representation loader used by policy learners)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "module-level device choice: an NPU host loads R3M onto the CPU while the policy runs on the NPU "
      "(device mismatch at the first forward)"),
    C('device = "cuda"', "device_type", R, True, 'device = "npu"', "as above"),
    C("=rep = torch.nn.DataParallel(rep)", "distributed_framework", R, True,
      'r3m_state_dict = {k.removeprefix("module."): v for k, v in r3m_state_dict.items()}',
      "torch.nn.DataParallel is unsupported on Ascend; drop the wrapper and strip the 'module.' prefix from the "
      "checkpoint keys instead"),
    C('rep = torch.nn.DataParallel(rep)  # checkpoint keys carry the "module." prefix', "distributed_framework", R,
      True, 'rep = rep  # load with the "module." prefix stripped from the checkpoint keys', "as above"),
])

# ---------------------------------------------------------------- ManiSkill

E("maniskill_ppo", "examples/baselines/ppo/ppo.py", "explicit_replacement",
  "haosulab/ManiSkill examples/baselines/ppo/ppo.py (cleanRL PPO on GPU-parallel ManiSkill3 envs)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", R,
      True, 'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "on an NPU host this silently trains on the CPU"),
    C('env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="physx_cuda")', "device_type", R,
      True, 'env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="physx_cpu")',
      "GPU PhysX needs CUDA; the NPU host simulates on the CPU (judgement: ManiSkill is outside the knowledge files)"),
    C("agent.load_state_dict(torch.load(args.checkpoint))", "device_type", R, False,
      "agent.load_state_dict(torch.load(args.checkpoint, map_location=device))", CKPT),
    C("eval_obs, eval_rew, eval_terminations, eval_truncations, eval_infos = eval_envs.step(agent.get_action(eval_obs, deterministic=True))",
      "tensor_to_device", R, False,
      "eval_obs, eval_rew, eval_terminations, eval_truncations, eval_infos = eval_envs.step(agent.get_action(eval_obs.to(device), deterministic=True))",
      "unconfirmed: with the CPU simulator the env returns host tensors that must be moved before the policy call"),
    C("next_obs, reward, terminations, truncations, infos = envs.step(clip_action(action))", "tensor_to_device", R,
      False,
      "next_obs, reward, terminations, truncations, infos = (t.to(device) if torch.is_tensor(t) else t for t in envs.step(clip_action(action)))",
      "unconfirmed: as above"),
])

E("maniskill_ppo_fast", "examples/baselines/ppo/ppo_fast.py", "explicit_replacement",
  "ManiSkill examples/baselines/ppo/ppo_fast.py (LeanRL-style: torch.compile + tensordict CudaGraphModule)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", R,
      True, 'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "on an NPU host this silently trains on the CPU"),
    C('env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="gpu")', "device_type", R, True,
      'env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="cpu")',
      "GPU simulation backend is CUDA PhysX"),
    C("agent.load_state_dict(torch.load(args.checkpoint))", "device_type", R, False,
      "agent.load_state_dict(torch.load(args.checkpoint, map_location=device))", CKPT),
    C("policy = CudaGraphModule(policy)", "compile_mode", X, True, None,
      "--cudagraphs: tensordict's CudaGraphModule captures with torch.cuda graphs/streams, which need CUDA; "
      "NPUGraph exists but only for inference (and is not what tensordict calls)"),
    C("gae = CudaGraphModule(gae)", "compile_mode", X, True, None, "as above"),
    C("update = CudaGraphModule(update)", "compile_mode", X, True, None,
      "as above; graph-captured training is not supported on NPU at all"),
    C("torch.compiler.cudagraph_mark_step_begin()", "compile_mode", X, False, None,
      "cudagraph-trees bookkeeping; expected to be a no-op without CUDA graphs (unconfirmed)"),
])

E("maniskill2_pointnet2_utils", "maniskill2_learn/networks/ops/pointnet2/pointnet2_utils.py", "kernel_rewrite",
  "ManiSkill2-Learn / Pointnet2.PyTorch pointnet2_utils.py (autograd Functions over the pointnet2_cuda extension)", [
    C("import pointnet2_cuda as pointnet2", "custom_cuda_extension", R, True,
      "from . import pointnet2_torch as pointnet2  # torch-op / NPU implementations",
      "nvcc-built extension: cannot be built or loaded on an Ascend host"),
    C("output = torch.cuda.IntTensor(B, npoint)", "torch_cuda_api", R, True,
      "output = torch.empty((B, npoint), dtype=torch.int32, device=xyz.device)",
      "legacy CUDA tensor constructor; needs CUDA"),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "torch_cuda_api", R, True,
      "temp = torch.full((B, N), 1e10, device=xyz.device)", "as above"),
    C("pointnet2.furthest_point_sampling_wrapper(", "custom_cuda_extension", R, True,
      "pointnet2.furthest_point_sampling(xyz, npoint, temp, output)", "CUDA kernel call site"),
    C("output = torch.cuda.FloatTensor(B, C, npoint)", "torch_cuda_api", R, True,
      "output = features.new_empty((B, C, npoint))", "as above"),
    C("pointnet2.gather_points_wrapper(", "custom_cuda_extension", R, True,
      "output = torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, C, -1))", "CUDA kernel call site"),
    C("=grad_features = Variable(torch.cuda.FloatTensor(B, C, N).zero_())", "torch_cuda_api", R, True,
      "grad_features = grad_out.new_zeros((B, C, N))", "as above"),
    C("pointnet2.gather_points_grad_wrapper(", "custom_cuda_extension", R, True,
      "grad_features.scatter_add_(2, idx.long().unsqueeze(1).expand(-1, C, -1), grad_out_data)",
      "CUDA kernel call site"),
    C("output = torch.cuda.FloatTensor(B, C, nfeatures, nsample)", "torch_cuda_api", R, True,
      "output = features.new_empty((B, C, nfeatures, nsample))", "as above"),
    C("pointnet2.group_points_wrapper(", "custom_cuda_extension", R, True,
      "output = pointnet2.group_points(features, idx)", "CUDA kernel call site"),
    C("# grouping grad buffer", "torch_cuda_api", R, True,
      "grad_features = grad_out.new_zeros((B, C, N))  # grouping grad buffer", "as above"),
    C("pointnet2.group_points_grad_wrapper(", "custom_cuda_extension", R, True,
      "pointnet2.group_points_grad(grad_out_data, idx, grad_features)", "CUDA kernel call site"),
    C("idx = torch.cuda.IntTensor(B, npoint, nsample).zero_()", "torch_cuda_api", R, True,
      "idx = torch.zeros((B, npoint, nsample), dtype=torch.int32, device=xyz.device)", "as above"),
    C("pointnet2.ball_query_wrapper(", "custom_cuda_extension", R, True,
      "pointnet2.ball_query(radius, nsample, new_xyz, xyz, idx)", "CUDA kernel call site"),
])

E("pointnet2_setup", "maniskill2_learn/networks/ops/pointnet2/setup.py", "kernel_rewrite",
  "Pointnet2 ops setup.py (CUDAExtension with nvcc flags and TORCH_CUDA_ARCH_LIST)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R,
      True, "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc path on Ascend; NpuExtension adds the torch_npu / ACL include and library paths"),
    C('_ext_sources = glob.glob(osp.join(_ext_src_root, "*.cpp")) + glob.glob(osp.join(_ext_src_root, "*.cu"))',
      "custom_cuda_extension", R, True, '_ext_sources = glob.glob(osp.join(_ext_src_root, "*.cpp"))',
      "the .cu kernels must be rewritten (Ascend C / torch ops); they cannot be compiled here"),
    C('if os.getenv("TORCH_CUDA_ARCH_LIST") is None:', "env_var", X, False, None, "CUDA-only build knob"),
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = "6.1;7.0;7.5;8.0;8.6+PTX"', "env_var", X, False, None,
      "CUDA-only build knob; ignored without nvcc"),
    C("cuda_version = get_cuda_version()", "custom_cuda_extension", X, True, None,
      "raises RuntimeError: CUDA_HOME is None on an Ascend host"),
    C('return {"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags}', "custom_cuda_extension", R, False,
      'return {"cxx": ["-O3", "-std=c++17"]}', "nvcc flags are unused by a C++/NPU extension"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(", "extension class"),
])

# ---------------------------------------------------------------- OpenVLA / RDT

E("openvla_finetune", "vla-scripts/finetune.py", "explicit_replacement",
  "openvla/openvla vla-scripts/finetune.py (LoRA fine-tuning with torchrun + DDP, bf16 autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ENTRY_IMPORT),
    C('assert torch.cuda.is_available(), "Fine-tuning assumes at least one GPU is available!"', "torch_cuda_api", R,
      True, 'assert torch.npu.is_available(), "Fine-tuning assumes at least one NPU is available!"',
      "fails immediately on an NPU host"),
    C("torch.cuda.set_device(device_id := distributed_state.local_process_index)", "torch_cuda_api", R, True,
      "torch.npu.set_device(device_id := distributed_state.local_process_index)", "needs a CUDA build"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context"),
    C("use_flash_attn = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "use_flash_attn = False  # flash-attn cannot be installed on Ascend; SDPA dispatches to the NPU FA kernel",
      "get_device_capability needs CUDA (on NPU it is only a configurable compatibility value)"),
    C('attn_implementation="flash_attention_2" if use_flash_attn else "eager",', "attention_kernel", R, True,
      'attn_implementation="sdpa",',
      "flash_attention_2 requires the flash-attn package; on NPU transformers' sdpa path reaches the fused "
      "attention kernel (eager would run but unfused)"),
    C("quantization_config = BitsAndBytesConfig(", "unsupported_op_workaround", R, False,
      "quantization_config = BitsAndBytesConfig(  # needs the Ascend-enabled (multi-backend) bitsandbytes build",
      "only with use_quantization; bitsandbytes NF4 on NPU exists only in the multi-backend work (unconfirmed "
      "for this version)"),
    C("vla = vla.to(device_id)", "tensor_to_device", R, True, 'vla = vla.to(f"npu:{device_id}")',
      "an int device means cuda:N"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast does not cover NPU tensors (the bf16 weights then meet fp32 activations)"),
    C('input_ids=batch["input_ids"].to(device_id),', "tensor_to_device", R, True,
      'input_ids=batch["input_ids"].to(f"npu:{device_id}"),', "an int device means cuda:N"),
    C('attention_mask=batch["attention_mask"].to(device_id),', "tensor_to_device", R, True,
      'attention_mask=batch["attention_mask"].to(f"npu:{device_id}"),', "as above"),
    C('pixel_values=batch["pixel_values"].to(torch.bfloat16).to(device_id),', "tensor_to_device", R, True,
      'pixel_values=batch["pixel_values"].to(torch.bfloat16).to(f"npu:{device_id}"),', "as above"),
    C('"peak_gpu_mem_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", R, False,
      '"peak_npu_mem_gb": torch.npu.max_memory_allocated() / 1e9,', "logs 0 instead of failing"),
])

E("openvla_pyproject", "pyproject.toml", "explicit_replacement",
  "openvla pyproject.toml (with the GPU training extras)", [
    C('"torch==2.2.0",', "import_torch_npu", A, True, '"torch-npu==2.2.0.post2",',
      "torch 2.2.0 has a (now EOL) torch_npu 2.2.0 line; the NPU build has to be declared next to torch"),
    C('"flash-attn==2.5.5",', "attention_kernel", X, True, None,
      "flash-attn cannot be installed on Ascend: the whole [train] extra fails to install"),
    C('"bitsandbytes==0.43.1",', "unsupported_op_workaround", R, False, '"bitsandbytes>=0.45.0",',
      "unconfirmed: NPU support lives in bitsandbytes' multi-backend work, not in 0.43.1"),
    C('"gpustat",', "torch_cuda_api", X, False, None, "NVML-based dev tool"),
])

E("rdt_fused_adaln", "models/rdt/fused_adaln.py", "kernel_rewrite",
  "RDT-1B-style fused RMSNorm + adaLN-modulate Triton kernel with a recompute backward (custom autograd Function)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIB_IMPORT),
    C("return torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R, True,
      "return torch.npu.get_device_properties(device).vector_core_num",
      "NPU device properties have no multi_processor_count (vector_core_num / cube_core_num instead)"),
    C("if torch.cuda.get_device_capability(device)[0] >= 9:", "device_capability_check", R, True,
      "if False:  # no SM generations on Ascend",
      "get_device_capability needs CUDA (NPU value is a configurable compatibility stub)"),
    C("num_warps = min(max(BLOCK_N // 128, 1), 16)", "triton_kernel_tuning", R, False, "num_warps = 1",
      "warp counts are a CUDA tuning notion; triton-ascend tiling differs (unconfirmed)"),
    C("num_warps = min(max(BLOCK_N // 256, 1), 8)", "triton_kernel_tuning", R, False, "num_warps = 1",
      "as above (unconfirmed)"),
    C("@torch.cuda.amp.custom_fwd", "amp", R, False, "@torch.amp.custom_fwd(device_type='npu')",
      "records CUDA autocast state only; under NPU autocast the backward runs without it (unconfirmed impact)"),
    C("grid = (min(M, 4 * _num_sms(x.device)),)", "triton_kernel_tuning", R, False,
      "grid = (min(M, _num_sms(x.device)),)",
      "persistent grid sized for SMs; one program per vector core on Ascend (unconfirmed)"),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(x.device.index):", "torch.cuda.device needs CUDA"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch.amp.custom_bwd(device_type='npu')", "as custom_fwd"),
    C('if x.device.type == "cpu" or not _TRITON_AVAILABLE:', "npu_fused_op", B, False,
      'if x.device.type == "npu":\n        return npu_rms_norm_modulate(x, weight, shift, scale, eps)  # torch_npu.npu_rms_norm + modulate',
      "without triton the reference path runs (correct, slower); npu_rms_norm is the fused NPU RMSNorm"),
])

# ---------------------------------------------------------------- container

E("robot_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "robot-learning training image (diffusion_policy / ACT / ManiSkill) on nvidia/cuda with a CUDA extension build", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA runtime base image; the NPU image needs the CANN toolkit (set_env.sh exports) instead"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or pass "
      "--device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None,
      "NVIDIA container runtime only"),
    C("ENV MUJOCO_GL=egl", "env_var", R, False, "ENV MUJOCO_GL=osmesa",
      "unconfirmed: headless EGL rendering expects a GPU EGL device; osmesa renders on the CPU"),
    C("ENV PYOPENGL_PLATFORM=egl", "env_var", R, False, "ENV PYOPENGL_PLATFORM=osmesa", "as above (unconfirmed)"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
      "torch_cuda_api", R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post10",
      "cu118 wheels; torch_npu pairs with torch 2.1.0 (CPU build on x86) and must be installed alongside"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0"', "env_var", X, False, None, "CUDA-only build knob"),
    C("ENV FORCE_CUDA=1", "env_var", X, False, None,
      "forces CUDA builds in extensions that read it; none can build without nvcc"),
    C("RUN cd /workspace/pointnet2 && python setup.py install", "custom_cuda_extension", R, False,
      "RUN . /usr/local/Ascend/ascend-toolkit/set_env.sh && cd /workspace/pointnet2 && python setup.py install",
      "the NpuExtension build (see the setup.py port) needs the CANN environment; CANN base images already "
      "export it through ENV lines, other bases must source set_env.sh in the RUN shell"),
    C("HEALTHCHECK --interval=60s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", R, False,
      "HEALTHCHECK --interval=60s CMD npu-smi info > /dev/null || exit 1",
      "container would be reported unhealthy (it still runs)"),
])
