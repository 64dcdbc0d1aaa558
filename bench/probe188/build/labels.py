# Labels for probe188 (legged-robot / manipulation RL in GPU simulation, CUDA -> Ascend NPU).
# Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
# Porting target assumed throughout: the simulator runs on its CPU backend (Isaac Gym CPU PhysX,
# Isaac Lab --device cpu, ManiSkill3 physx_cpu) and the learner (policy/optimizer) runs on the NPU.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Reused notes
AUTOLOAD_OLD = ("Isaac Gym Preview 4 caps Python at 3.8, so the torch_npu that fits predates device autoload "
                "(2.5.1); without the import the 'npu' device type used by the learner is unknown")
AUTOLOAD_NEW = ("recommended only: this stack runs torch >= 2.5, where torch_npu registers itself through "
                "device-backend autoload")
SEED_NOOP = ("torch.cuda seeding is lazily queued and never runs without CUDA, so it is a silent no-op; "
             "torch.manual_seed already seeds the NPU generator via the PrivateUse1 hook (unconfirmed in knowledge base)")
CKPT = ("only checkpoints written on a CUDA host fail to deserialize without map_location; "
        "NPU-written ones load fine")

# --------------------------------------------------------------------------------------------
# legged_gym / rsl_rl (leggedrobotics)
# --------------------------------------------------------------------------------------------

E("lg_train", "legged_gym/scripts/train.py", "explicit_replacement",
  "legged_gym scripts/train.py (leggedrobotics/legged_gym)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
  ])

E("lg_play", "legged_gym/scripts/play.py", "explicit_replacement",
  "legged_gym scripts/play.py (policy playback + export_policy_as_jit)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the runner is built on args.rl_device ('npu:0' after the helpers change); " + AUTOLOAD_OLD),
  ])

E("lg_helpers", "legged_gym/utils/helpers.py", "explicit_replacement",
  "legged_gym utils/helpers.py (get_args, parse_sim_params, set_seed, export_policy_as_jit)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOOP),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
      C('{"name": "--rl_device", "type": str, "default": "cuda:0"', "device_type", "replace", True,
        '{"name": "--rl_device", "type": str, "default": "npu:0", "help": \'Device used by the RL algorithm, (cpu, npu:0, npu:1 etc..)\'},',
        "default learner device; OnPolicyRunner(device=args.rl_device) would allocate on cuda:0"),
      C("custom_parameters=custom_parameters)", "device_type", "npu_only_addition", True,
        'args.sim_device_type, args.compute_device_id, args.use_gpu, args.use_gpu_pipeline = "cpu", 0, False, False  # no CUDA PhysX on Ascend hosts',
        "gymutil.parse_arguments defaults to --sim_device cuda:0 --pipeline gpu; BaseTask then puts every env "
        "buffer on cuda:0. The sim has to run on CPU PhysX with the CPU pipeline; the rest of the file "
        "(parse_sim_params, the 'cuda' name alignment) then follows the args unchanged"),
  ])

E("lg_base_task", "legged_gym/envs/base/base_task.py", "explicit_replacement",
  "legged_gym envs/base/base_task.py (env device from sim_device/pipeline, JIT flags)",
  [])

E("lg_legged_robot", "legged_gym/envs/base/legged_robot.py", "explicit_replacement",
  "legged_gym envs/base/legged_robot.py with a parkour-fork depth camera (update_depth_buffer)",
  [
      C("depth_image_ = self.gym.get_camera_image_gpu_tensor(", "unsupported_op_workaround", "replace", True,
        "depth_image_ = self.gym.get_camera_image(self.sim, self.envs[i], self.cam_handles[i], gymapi.IMAGE_DEPTH)",
        "camera GPU tensors are CUDA-interop buffers of the GPU pipeline; with CPU PhysX the image comes back as numpy. "
        "Whether any camera renderer (Vulkan) exists on the NPU host is a separate, unconfirmed question"),
      C("depth_image = gymtorch.wrap_tensor(depth_image_)", "unsupported_op_workaround", "replace", True,
        "depth_image = torch.from_numpy(depth_image_).to(self.device)",
        "gymtorch.wrap_tensor only wraps gym GPU/CPU tensor descriptors, not the numpy array of the CPU path"),
  ])

E("lg_shell", "scripts/train_go2.sh", "explicit_replacement",
  "legged_gym-style training launcher (conda env, CUDA_VISIBLE_DEVICES, --sim_device/--rl_device)",
  [
      C("conda activate legged_gym", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (libs, ASCEND_* paths) must be loaded before torch_npu is imported"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
        "CUDA_VISIBLE_DEVICES is ignored on Ascend: a non-zero GPU_ID would silently train on device 0"),
      C("=--sim_device cuda:0 \\", "device_type", "replace", True, "--sim_device cpu --pipeline cpu \\",
        "PhysX GPU simulation needs CUDA; simulate on CPU PhysX with the CPU pipeline"),
      C("=--rl_device cuda:0 \\", "device_type", "replace", True, "--rl_device npu:0 \\",
        "learner device"),
      C("python legged_gym/scripts/play.py --task=go2 --sim_device cuda:0", "device_type", "replace", True,
        "python legged_gym/scripts/play.py --task=go2 --sim_device cpu --pipeline cpu --rl_device npu:0 --num_envs 32",
        "same device flags for playback"),
  ])

E("rsl_runner", "rsl_rl/runners/on_policy_runner.py", "device_branch_or_abstraction",
  "rsl_rl 2.x runners/on_policy_runner.py (multi-GPU _configure_multi_gpu, save/load)",
  [
      C('if self.device != f"cuda:{self.gpu_local_rank}":', "device_type", "replace", True,
        'if self.device != f"{torch.device(self.device).type}:{self.gpu_local_rank}":',
        "in distributed runs the learner device is npu:<local_rank>, so the hard-coded cuda check raises ValueError"),
      C('torch.distributed.init_process_group(backend="nccl"', "dist_backend", "add_branch", True,
        'torch.distributed.init_process_group(backend="hccl" if self.device.startswith("npu") else "nccl", rank=self.gpu_global_rank, world_size=self.gpu_world_size)',
        "NCCL does not exist on Ascend; HCCL is the collective backend"),
      C("torch.cuda.set_device(self.gpu_local_rank)", "torch_cuda_api", "add_branch", True,
        'torch.npu.set_device(self.gpu_local_rank) if self.device.startswith("npu") else torch.cuda.set_device(self.gpu_local_rank)',
        "torch.cuda.set_device initialises CUDA and raises on a host without NVIDIA driver"),
      C("loaded_dict = torch.load(path, weights_only=False)", "tensor_to_device", "replace", False,
        "loaded_dict = torch.load(path, map_location=self.device, weights_only=False)", CKPT),
  ])

E("rsl_ppo", "rsl_rl/algorithms/ppo.py", "explicit_replacement",
  "rsl_rl 2.x algorithms/ppo.py (Adam, multi-GPU all_reduce of grads/KL)",
  [])

# --------------------------------------------------------------------------------------------
# Isaac Lab
# --------------------------------------------------------------------------------------------

E("il_train", "scripts/reinforcement_learning/rsl_rl/train.py", "explicit_replacement",
  "Isaac Lab scripts/reinforcement_learning/rsl_rl/train.py (AppLauncher, hydra, --distributed)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "TF32 switch has no effect on NPU matmuls; HF32 is the Ascend counterpart (allow_hf32 name unconfirmed in knowledge base)"),
      C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = True",
        "cuDNN TF32 switch is a no-op on NPU convolutions; HF32 counterpart (unconfirmed in knowledge base)"),
      C('env_cfg.sim.device = f"cuda:{app_launcher.local_rank}"', "device_type", "replace", True,
        'env_cfg.sim.device = "cpu"',
        "distributed branch forces GPU PhysX on the rank's GPU; only CPU PhysX is possible on an NPU host"),
      C('agent_cfg.device = f"cuda:{app_launcher.local_rank}"', "device_type", "replace", True,
        'agent_cfg.device = f"npu:{app_launcher.local_rank}"',
        "learner device per rank; rsl_rl's multi-GPU check compares it with the local rank"),
  ])

E("il_play", "scripts/reinforcement_learning/rsl_rl/play.py", "explicit_replacement",
  "Isaac Lab scripts/reinforcement_learning/rsl_rl/play.py (load, export jit/onnx, inference loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "runner is created on agent_cfg.device (npu:0 after the rl_cfg change); " + AUTOLOAD_NEW),
  ])

E("il_rl_cfg", "source/isaaclab_rl/isaaclab_rl/rsl_rl/rl_cfg.py", "explicit_replacement",
  "Isaac Lab isaaclab_rl/rsl_rl/rl_cfg.py (RslRlOnPolicyRunnerCfg configclasses)",
  [
      C('device: str = "cuda:0"', "device_type", "replace", True, 'device: str = "npu:0"',
        "default learner device of every rsl_rl task config"),
  ])

E("il_sim_cfg", "source/isaaclab/isaaclab/sim/simulation_cfg.py", "explicit_replacement",
  "Isaac Lab sim/simulation_cfg.py (SimulationCfg, PhysxCfg gpu_* buffers, RenderCfg)",
  [
      C('device: str = "cuda:0"', "device_type", "replace", True, 'device: str = "cpu"',
        "default physics device; PhysX GPU needs CUDA, so the NPU host can only run CPU PhysX "
        "(the gpu_* buffer sizes then simply go unused)"),
  ])

E("il_exporter", "source/isaaclab_rl/isaaclab_rl/rsl_rl/exporter.py", "explicit_replacement",
  "Isaac Lab isaaclab_rl/rsl_rl/exporter.py (TorchScript / ONNX policy export on CPU)",
  [])

E("il_launch_sh", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "single-node multi-GPU launcher for Isaac Lab rsl_rl training (torch.distributed.run, NCCL env)",
  [
      C("ISAACLAB_PATH=${ISAACLAB_PATH:-$HOME/IsaacLab}", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "load CANN before the ranks import torch_npu (set_env.sh reads unset variables, hence set +u under set -u)"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
        "device selection variable of the Ascend runtime; CUDA_VISIBLE_DEVICES is ignored"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "HCCL has no NCCL_DEBUG; CANN log level is the nearest knob (logging only)"),
      C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
        "NCCL-only tuning variable, ignored by HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "HCCL's host-NIC selector; only matters for multi-node root-info exchange, single node works without it"),
  ])

# --------------------------------------------------------------------------------------------
# IsaacGymEnvs + rl_games
# --------------------------------------------------------------------------------------------

E("ige_train", "isaacgymenvs/train.py", "explicit_replacement",
  "IsaacGymEnvs isaacgymenvs/train.py (hydra launch_rlg_hydra, rl_games Runner, multi_gpu)",
  [
      C("=import isaacgym", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # after isaacgym, which must be imported before torch", AUTOLOAD_OLD),
      C("cfg.sim_device = f'cuda:{rank}'", "device_type", "replace", True, "cfg.sim_device = 'cpu'",
        "multi-GPU branch pins GPU PhysX on each rank; only CPU PhysX exists on the NPU host"),
      C("cfg.rl_device = f'cuda:{rank}'", "device_type", "replace", True, "cfg.rl_device = f'npu:{rank}'",
        "per-rank learner device handed to rl_games"),
  ])

E("ige_config", "isaacgymenvs/cfg/config.yaml", "explicit_replacement",
  "IsaacGymEnvs cfg/config.yaml (hydra root config: pipeline, sim_device, rl_device)",
  [
      C("pipeline: 'gpu'", "device_type", "replace", False, "pipeline: 'cpu'",
        "VecTask already forces the CPU pipeline (with a warning) once sim_device is cpu; edited for clarity"),
      C("sim_device: 'cuda:0'", "device_type", "replace", True, "sim_device: 'cpu'",
        "physics device; PhysX GPU needs CUDA"),
      C("rl_device: 'cuda:0'", "device_type", "replace", True, "rl_device: 'npu:0'",
        "learner device passed to rl_games as config['device']"),
  ])

E("ige_ppo_yaml", "isaacgymenvs/cfg/train/AnymalTerrainPPO.yaml", "explicit_replacement",
  "IsaacGymEnvs cfg/train/AnymalTerrainPPO.yaml (rl_games PPO config)",
  [])

E("ige_utils", "isaacgymenvs/utils/utils.py", "explicit_replacement",
  "IsaacGymEnvs utils/utils.py (set_seed with cuBLAS determinism, misc helpers, memory summary)",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOOP),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
      C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "removal", False, None,
        "cuBLAS-only reproducibility setting; on NPU determinism comes from torch.use_deterministic_algorithms (kept)"),
      C("allocated = torch.cuda.memory_allocated(device_id) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(device_id) / 1024 ** 3",
        "returns 0 without CUDA instead of failing (logging only; unconfirmed in knowledge base)"),
      C("reserved = torch.cuda.memory_reserved(device_id) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(device_id) / 1024 ** 3", "logging only"),
      C("peak = torch.cuda.max_memory_allocated(device_id) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(device_id) / 1024 ** 3", "logging only"),
  ])

E("rlg_a2c_common", "rl_games/common/a2c_common.py", "device_branch_or_abstraction",
  "rl_games common/a2c_common.py (A2CBase: multi_gpu init, ppo_device, GradScaler, train loop)",
  [
      C('dist.init_process_group("nccl", rank=self.global_rank, world_size=self.world_size)', "dist_backend", "add_branch", True,
        'dist.init_process_group("hccl" if str(config.get("device", "")).startswith("npu") else "nccl", rank=self.global_rank, world_size=self.world_size)',
        "NCCL is unavailable on Ascend; HCCL backend (config['device'] carries rl_device, npu:N after the port)"),
      C("self.device_name = 'cuda:' + str(self.local_rank)", "device_type", "add_branch", True,
        "self.device_name = ('npu:' if config.get('device', '').startswith('npu') else 'cuda:') + str(self.local_rank)",
        "multi-GPU path overwrites config['device'] with a CUDA device"),
      C("self.ppo_device = config.get('device', 'cuda:0')", "device_type", "replace", False,
        "self.ppo_device = config.get('device', 'npu:0')",
        "fallback default only; IsaacGymEnvs always passes config['device'] = rl_device"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.mixed_precision)", "amp", "replace", False,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.mixed_precision)",
        "the CUDA scaler disables itself without CUDA (training silently fp32); port together with the autocast "
        "in a2c_continuous, since NPU fp16 autocast without an NPU scaler would underflow (unconfirmed in knowledge base)"),
      C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "add_branch", True,
        "torch.npu.set_device(self.local_rank) if self.device_name.startswith('npu') else torch.cuda.set_device(self.local_rank)",
        "raises on a host without CUDA in multi-GPU runs"),
  ])

E("rlg_a2c_continuous", "rl_games/algos_torch/a2c_continuous.py", "explicit_replacement",
  "rl_games algos_torch/a2c_continuous.py (A2CAgent.calc_gradients with AMP)",
  [
      C("with torch.cuda.amp.autocast(enabled=self.mixed_precision):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.mixed_precision):",
        "CUDA autocast is disabled with a warning when CUDA is absent, so mixed_precision: True silently trains in fp32 (perf only)"),
  ])

# --------------------------------------------------------------------------------------------
# CleanRL / LeanRL
# --------------------------------------------------------------------------------------------

E("cr_ppo_isaacgym", "cleanrl/ppo_continuous_action_isaacgym/ppo_continuous_action_isaacgym.py", "transfer_to_npu",
  "CleanRL ppo_continuous_action_isaacgym.py (isaacgymenvs.make, RecordEpisodeStatisticsTorch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu  # imports torch_npu; patches torch.cuda.*, 'cuda' strings",
        "single-file script ported with transfer_to_npu: torch.cuda.is_available(), torch.device('cuda') and the "
        "rl_device string are then redirected to the NPU without further edits"),
      C('sim_device="cuda:0" if torch.cuda.is_available() and args.cuda else "cpu",', "device_type", "replace", True,
        'sim_device="cpu",  # Isaac Gym PhysX GPU needs CUDA; transfer_to_npu cannot redirect the simulator',
        "under transfer_to_npu torch.cuda.is_available() turns True on the NPU host, so this would ask Isaac Gym for GPU PhysX"),
  ])

E("cr_sac", "cleanrl/sac_continuous_action.py", "explicit_replacement",
  "CleanRL sac_continuous_action.py (tyro Args, SB3 ReplayBuffer on device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
        "torch.cuda.is_available() is False on the NPU host, so training silently runs on CPU"),
  ])

E("leanrl_ppo", "leanrl/ppo_continuous_action_torchcompile.py", "explicit_replacement",
  "LeanRL ppo_continuous_action_torchcompile.py (torch.compile + tensordict CudaGraphModule)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
        "silently falls back to CPU on the NPU host"),
      C("=if args.cudagraphs:", "compile_mode", "replace", False,
        'if args.cudagraphs and device.type == "cuda":',
        "CudaGraphModule captures with CUDA graphs; NPU graph capture is inference-only in the 2.7.1 support list, "
        "and this wraps the training update. Off by default, breaks only with --cudagraphs"),
  ])

# --------------------------------------------------------------------------------------------
# ManiSkill3
# --------------------------------------------------------------------------------------------

WRAP = ("with the sim on CPU, ManiSkillVectorEnv hands back CPU tensors while the agent lives on the NPU; "
        "the script never moves obs/rewards/dones/final_observation/_final_info (and passes NPU actions to the sim), "
        "so a small wrapper moving outputs to the NPU and actions back to the CPU is needed")

E("ms_ppo", "examples/baselines/ppo/ppo.py", "explicit_replacement",
  "ManiSkill3 examples/baselines/ppo/ppo.py (GPU-parallel PPO, ManiSkillVectorEnv)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
        "silently falls back to CPU on the NPU host"),
      C('env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="physx_cuda")', "device_type", "replace", True,
        'env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="physx_cpu")',
        "SAPIEN GPU PhysX needs CUDA. The CPU backend may not batch 512 envs in one process (then a CPU vector env is "
        "needed) - unconfirmed"),
      C("envs = ManiSkillVectorEnv(envs, args.num_envs,", "tensor_to_device", "npu_only_addition", True,
        "envs = ToDeviceWrapper(envs, device)  # hand-written: env outputs -> NPU, actions -> CPU sim", WRAP),
      C("eval_envs = ManiSkillVectorEnv(eval_envs, args.num_eval_envs,", "tensor_to_device", "npu_only_addition", True,
        "eval_envs = ToDeviceWrapper(eval_envs, device)", WRAP),
      C("agent.load_state_dict(torch.load(args.checkpoint))", "tensor_to_device", "replace", False,
        "agent.load_state_dict(torch.load(args.checkpoint, map_location=device))", CKPT),
  ])

E("ms_sac", "examples/baselines/sac/sac.py", "explicit_replacement",
  "ManiSkill3 examples/baselines/sac/sac.py (device-resident replay buffer, sim_backend='gpu')",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C('buffer_device: str = "cuda"', "device_type", "replace", True, 'buffer_device: str = "npu"',
        "replay buffer is allocated with torch.device(args.buffer_device); 'cuda' fails on the NPU host"),
      C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
        "silently falls back to CPU on the NPU host"),
      C('env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="gpu")', "device_type", "replace", True,
        'env_kwargs = dict(obs_mode="state", render_mode="rgb_array", sim_backend="cpu")',
        "SAPIEN GPU PhysX needs CUDA (see ms_ppo for the CPU-batching caveat)"),
      C("envs = ManiSkillVectorEnv(envs, args.num_envs,", "tensor_to_device", "npu_only_addition", True,
        "envs = ToDeviceWrapper(envs, device)  # hand-written: env outputs -> NPU, actions -> CPU sim", WRAP),
      C("eval_envs = ManiSkillVectorEnv(eval_envs, args.num_eval_envs,", "tensor_to_device", "npu_only_addition", True,
        "eval_envs = ToDeviceWrapper(eval_envs, device)", WRAP),
      C("ckpt = torch.load(args.checkpoint)", "tensor_to_device", "replace", False,
        "ckpt = torch.load(args.checkpoint, map_location=device)", CKPT),
  ])

# --------------------------------------------------------------------------------------------
# PointNet++ CUDA ops used by point-cloud manipulation policies
# --------------------------------------------------------------------------------------------

E("pn2_setup", "pointnet2_ops_lib/setup.py", "kernel_rewrite",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops_lib/setup.py (CUDAExtension build)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "removal", False, None,
        "import itself is harmless; goes away with the extension"),
      C('os.environ["TORCH_CUDA_ARCH_LIST"]', "env_var", "removal", False, None,
        "CUDA arch list for nvcc; meaningless once nothing is compiled"),
      C("CUDAExtension(", "custom_cuda_extension", "removal", True, None,
        "no nvcc/CUDA_HOME on the Ascend host, so the build fails; the kernels are re-expressed with torch ops in "
        "pointnet2_utils.py (Ascend C via NpuExtension would be the high-performance alternative)"),
  ])

TORCH_OP = "the .cu kernel behind this call is not built on Ascend; re-expressed with torch ops that run on the NPU"

E("pn2_utils", "pointnet2_ops_lib/pointnet2_ops/pointnet2_utils.py", "kernel_rewrite",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops/pointnet2_utils.py (autograd Functions over _ext CUDA ops)",
  [
      C('os.environ["TORCH_CUDA_ARCH_LIST"]', "env_var", "removal", False, None, "nvcc arch list for the JIT build"),
      C("_ext = load(", "custom_cuda_extension", "replace", True,
        "_ext = None  # no nvcc on Ascend hosts; the Functions below use torch ops instead",
        "JIT-compiling the .cu sources with with_cuda=True fails at import time without a CUDA toolkit"),
      C("out = _ext.furthest_point_sampling(xyz, npoint)", "custom_cuda_extension", "replace", True,
        "out = _furthest_point_sample_torch(xyz, npoint)", TORCH_OP),
      C("return _ext.gather_points(features, idx)", "custom_cuda_extension", "replace", True,
        "return torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, features.size(1), -1))", TORCH_OP),
      C("grad_features = _ext.gather_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", "replace", True,
        "grad_features = grad_out.new_zeros(grad_out.size(0), grad_out.size(1), N).scatter_add_(2, idx.long().unsqueeze(1).expand_as(grad_out), grad_out)",
        TORCH_OP),
      C("dist2, idx = _ext.three_nn(unknown, known)", "custom_cuda_extension", "replace", True,
        "dist2, idx = torch.cdist(unknown, known).pow(2).topk(3, dim=-1, largest=False)", TORCH_OP),
      C("return _ext.three_interpolate(features, idx, weight)", "custom_cuda_extension", "replace", True,
        "return _three_interpolate_torch(features, idx, weight)", TORCH_OP),
      C("grad_features = _ext.three_interpolate_grad(", "custom_cuda_extension", "replace", True,
        "grad_features = _three_interpolate_grad_torch(", TORCH_OP),
      C("return _ext.group_points(features, idx)", "custom_cuda_extension", "replace", True,
        "return _group_points_torch(features, idx)", TORCH_OP),
      C("grad_features = _ext.group_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", "replace", True,
        "grad_features = _group_points_grad_torch(grad_out.contiguous(), idx, N)", TORCH_OP),
      C("output = _ext.ball_query(new_xyz, xyz, radius, nsample)", "custom_cuda_extension", "replace", True,
        "output = _ball_query_torch(new_xyz, xyz, radius, nsample)", TORCH_OP),
  ])

# --------------------------------------------------------------------------------------------
# Environment / packaging files
# --------------------------------------------------------------------------------------------

E("env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml of an Isaac Gym point-cloud dexterous-manipulation project (rlgpu-style)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves CUDA packages"),
      C("- pytorch-cuda=12.1", "device_type", "replace", True, "  - cpuonly",
        "torch_npu is built against the CPU torch build; pytorch-cuda pulls the CUDA variant and has no Ascend use"),
      C("- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None,
        "only needed to compile pointnet2_ops; dead weight once the CUDA ops are replaced"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch_npu pin matching pytorch=2.1.0 (Python 3.8 is supported by the 2.1.0 line)"),
      C("=- pynvml", "torch_cuda_api", "removal", False, None,
        "NVML has no Ascend backend; GPU-utilisation logging would use torch.npu.utilization / npu-smi"),
      C("pointnet2_ops @ git+https://github.com/erikwijmans/Pointnet2_PyTorch.git", "custom_cuda_extension", "replace", True,
        "    - -e ./third_party/pointnet2_ops_lib  # pure-torch port, no CUDA build",
        "pip builds the CUDAExtension at install time, which fails without nvcc/CUDA_HOME"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Isaac Gym / legged_gym Dockerfile (nvcr.io PyTorch base, NVIDIA Vulkan ICD, NVIDIA_* env)",
  [
      C("FROM nvcr.io/nvidia/pytorch:22.12-py3", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.8",
        "CUDA base image; an Ascend image brings CANN (tag plausible, not tested; Isaac Gym still needs an x86_64 host)"),
      C('ENV PATH="/home/gymuser/.local/bin:$PATH"', "import_torch_npu", "npu_only_addition", True,
        "RUN pip install -q torch==2.1.0 torch-npu==2.1.0.post12",
        "the nvcr base shipped torch; the CANN base has none, and isaacgym's setup.py needs torch first"),
      C("COPY docker/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json", "device_type", "removal", False, None,
        "NVIDIA Vulkan ICD for the viewer/cameras; no NVIDIA driver on the Ascend host (training runs headless)"),
      C("COPY docker/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json", "device_type", "removal", False, None,
        "NVIDIA EGL vendor file, same reason"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "device mounting on Ascend is done by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or explicit "
        "--device /dev/davinciN flags at run time"),
  ])

E("req_txt", "requirements.txt", "explicit_replacement",
  "LeanRL requirements/requirements.txt (cu124 wheel index, torch+cu124 pin)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu124", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch wheel (x86) or plain PyPI torch (aarch64)"),
      C("torch==2.5.1+cu124", "device_type", "replace", True, "torch==2.5.1",
        "the +cu124 local version does not exist on the CPU index / for aarch64"),
      C("=tensordict==0.6.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.5.1",
        "torch_npu pin matching torch 2.5.1 (the torch line itself carries the replace label, so the pin is "
        "anchored on the next line)"),
  ])

E("deploy", "deploy/deploy_policy.py", "device_branch_or_abstraction",
  "on-robot deployment script for an exported legged_gym policy (Jetson Orin, TorchScript, latency benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
      C('parser.add_argument("--device", type=str, default="cuda:0"', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu:0", help="inference device, e.g. npu:0 or cpu")',
        "with the default cuda:0 the guard below silently drops to CPU inference on an Ascend board"),
      C('self.fp16 = fp16 and self.device.type == "cuda"', "amp", "add_branch", False,
        'self.fp16 = fp16 and self.device.type in ("cuda", "npu")',
        "--fp16 is silently ignored on NPU (perf only)"),
      C('=if self.device.type == "cuda":', "torch_cuda_api", "add_branch", False,
        'if self.device.type in ("cuda", "npu"): getattr(torch, self.device.type).synchronize(self.device)',
        "without an NPU branch the benchmark warm-up does not wait for queued NPU work (timing only)"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)",
        "--benchmark path: recording a CUDA event initialises CUDA and raises on the NPU host"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "same"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (--benchmark path)"),
  ])

E("torch_utils", "dexpc/utils/torch_utils.py", "device_branch_or_abstraction",
  "project torch_utils.py: isaacgym/torch_utils.py quaternion math (TorchScript) plus device/seed/memory helpers",
  [
      C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
        'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu:0")',
        "'auto' silently resolves to CPU on the NPU host"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
      C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
        "cuBLAS-only; determinism on NPU comes from torch.use_deterministic_algorithms (kept)"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "memory stats silently come back empty on the NPU host (logging only)"),
      C('"mem/allocated_gb": torch.cuda.memory_allocated(device) / gb,', "torch_cuda_api", "replace", False,
        '"mem/allocated_gb": torch.npu.memory_allocated(device) / gb,', "logging only"),
      C('"mem/reserved_gb": torch.cuda.memory_reserved(device) / gb,', "torch_cuda_api", "replace", False,
        '"mem/reserved_gb": torch.npu.memory_reserved(device) / gb,', "logging only"),
      C('"mem/max_allocated_gb": torch.cuda.max_memory_allocated(device) / gb,', "torch_cuda_api", "replace", False,
        '"mem/max_allocated_gb": torch.npu.max_memory_allocated(device) / gb,', "logging only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA, so the NPU cache is never released after env re-creation (memory headroom only)"),
      C('def to_torch(x, dtype=torch.float, device="cuda:0", requires_grad=False):', "device_type", "replace", True,
        'def to_torch(x, dtype=torch.float, device="npu:0", requires_grad=False):',
        "callers that omit device= would allocate on cuda:0"),
  ])
