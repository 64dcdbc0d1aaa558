# Labels for probe323: imitation-learning / VLA robot policies (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# Policy notes are in ../README.md ("How the labels were chosen").

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- Diffusion Policy (real-stanford/diffusion_policy)

E("dp_train_entry", "train.py", "explicit_replacement",
  "Diffusion Policy hydra entry point (train.py)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point: torch_npu must be imported before the workspace builds models on 'npu:0' "
        "(autoload only from torch_npu 2.5.1; this stack pins older torch)"),
  ])

E("dp_workspace", "diffusion_policy/workspace/train_diffusion_unet_hybrid_workspace.py", "explicit_replacement",
  "Diffusion Policy TrainDiffusionUnetHybridWorkspace (fork with fp16 AMP added)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the workspace is also runnable as __main__ (own hydra.main) and its ported lines use torch.npu.amp"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "torch.cuda.amp.GradScaler disables itself when CUDA is absent: use_amp=True would silently run unscaled"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):",
        "cuda autocast is silently disabled on an NPU host; configured mixed precision would not happen"),
      C("step_log['gpu_mem_peak_gb'] = torch.cuda.max_memory_allocated(device) / 1e9", "torch_cuda_api", "replace",
        False, "step_log['gpu_mem_peak_gb'] = torch.npu.max_memory_allocated(device) / 1e9",
        "CUDA allocator never initialised -> logs 0; metric only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; NPU cache is not released (memory hygiene only)"),
  ])

E("dp_config", "diffusion_policy/config/train_diffusion_unet_hybrid_workspace.yaml", "explicit_replacement",
  "Diffusion Policy hydra workspace config (training.device)",
  [
      C('device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"',
        "workspace does torch.device(cfg.training.device) and moves model/optimizer/batches there"),
  ])

E("dp_eval", "eval.py", "explicit_replacement",
  "Diffusion Policy sim evaluation script (click CLI)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("@click.option('-d', '--device', default='cuda:0')", "device_type", "replace", True,
        "@click.option('-d', '--device', default='npu:0')", "default device string fails without CUDA"),
      C("payload = torch.load(open(checkpoint, 'rb'), pickle_module=dill)", "device_type", "replace", True,
        "payload = torch.load(open(checkpoint, 'rb'), pickle_module=dill, map_location='cpu')",
        "released checkpoints were pickled from CUDA tensors; torch.load without map_location raises "
        "'Attempting to deserialize object on a CUDA device' on a host without CUDA"),
  ])

E("dp_eval_real", "eval_real_robot.py", "explicit_replacement",
  "Diffusion Policy real UR5 evaluation (SpaceMouse + RealSense)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("payload = torch.load(open(ckpt_path, 'rb'), pickle_module=dill)", "device_type", "replace", True,
        "payload = torch.load(open(ckpt_path, 'rb'), pickle_module=dill, map_location='cpu')",
        "policies are trained on a GPU workstation and copied to the robot PC; CUDA-pickled tensors cannot be "
        "restored without map_location"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "diffusion branch"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "robomimic (BCRNN) branch"),
      C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
        "IBC branch"),
  ])

E("dp_conda_env", "conda_environment.yaml", "explicit_replacement",
  "Diffusion Policy conda_environment.yaml (pytorch 1.12 + cudatoolkit 11.6)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None,
        "NVIDIA channel is dead weight once no CUDA packages are requested"),
      C("- cudatoolkit=11.6", "import_torch_npu", "removal", False, None,
        "selects the CUDA build of pytorch; not used on Ascend (CANN comes from the host/image)"),
      C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch_npu has no release for torch 1.12 (1.11 then 2.1+); torch_npu needs a matching CPU torch build"),
      C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "torchvision 0.13.1 pins torch 1.12.1; must follow the torch bump"),
      C("- pytorch3d=0.7.0", "custom_cuda_extension", "removal", True, None,
        "conda pytorch3d 0.7.0 is a CUDA build tied to pytorch 1.12; build pytorch3d from source with "
        "FORCE_CUDA=0 (only its pure-python rotation transforms are used) or vendor them"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch-npu pin goes at the top of the pip section"),
  ])

E("dp3_convert", "scripts/convert_real_robot_data.py", "explicit_replacement",
  "3D Diffusion Policy real-robot point-cloud conversion (pytorch3d FPS)",
  [
      C("points = torch.from_numpy(points).cuda()", "custom_cuda_extension", "replace", True,
        "points = torch.from_numpy(points)  # pytorch3d FPS has CPU/CUDA kernels only",
        "default use_cuda=True path feeds pytorch3d's CUDA sample_farthest_points; there is no NPU kernel, so "
        "keep FPS on the host (or rewrite FPS in torch ops on NPU)"),
  ])

# ---------------------------------------------------------------- ACT / ALOHA (tonyzhaozh/act)

E("act_imitate", "imitate_episodes.py", "explicit_replacement",
  "ACT imitate_episodes.py (train_bc / eval_bc with temporal ensembling)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("curr_image = torch.from_numpy(curr_image / 255.0).float().cuda().unsqueeze(0)", "tensor_to_device",
        "replace", True, "curr_image = torch.from_numpy(curr_image / 255.0).float().npu().unsqueeze(0)", ""),
      C("loading_status = policy.load_state_dict(torch.load(ckpt_path))", "device_type", "replace", False,
        "loading_status = policy.load_state_dict(torch.load(ckpt_path, map_location='cpu'))",
        "only fails for checkpoints produced on a CUDA box; checkpoints trained by the ported script restore to npu"),
      C("=policy.cuda()", "tensor_to_device", "replace", True, "policy.npu()", "eval_bc"),
      C("all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).cuda()",
        "tensor_to_device", "replace", True,
        "all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).npu()", ""),
      C("qpos_history = torch.zeros((1, max_timesteps, state_dim)).cuda()", "tensor_to_device", "replace", True,
        "qpos_history = torch.zeros((1, max_timesteps, state_dim)).npu()", ""),
      C("qpos = torch.from_numpy(qpos).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
        "qpos = torch.from_numpy(qpos).float().npu().unsqueeze(0)", ""),
      C("exp_weights = torch.from_numpy(exp_weights).cuda().unsqueeze(dim=1)", "tensor_to_device", "replace", True,
        "exp_weights = torch.from_numpy(exp_weights).float().npu().unsqueeze(dim=1)",
        "weights are float64 numpy; cast to fp32 while moving (fp64 on NPU is limited; not confirmed for mul)"),
      C("image_data, qpos_data, action_data, is_pad = image_data.cuda(), qpos_data.cuda(), action_data.cuda(), is_pad.cuda()",
        "tensor_to_device", "replace", True,
        "image_data, qpos_data, action_data, is_pad = image_data.npu(), qpos_data.npu(), action_data.npu(), is_pad.npu()",
        ""),
      C("policy.cuda()  # move params before building the optimizer", "tensor_to_device", "replace", True,
        "policy.npu()  # move params before building the optimizer", "train_bc"),
  ])

E("act_utils", "utils.py", "explicit_replacement",
  "ACT utils.py (EpisodicDataset, load_data, set_seed)",
  [
      C("train_dataloader = DataLoader(train_dataset,", "pin_memory", "replace", False,
        "train_dataloader = DataLoader(train_dataset, batch_size=batch_size_train, shuffle=True, pin_memory=True, "
        "pin_memory_device='npu', num_workers=1, prefetch_factor=1)",
        "without pin_memory_device the loader pins for CUDA only; on NPU pinning is skipped (perf only, unconfirmed)"),
      C("val_dataloader = DataLoader(val_dataset,", "pin_memory", "replace", False,
        "val_dataloader = DataLoader(val_dataset, batch_size=batch_size_val, shuffle=True, pin_memory=True, "
        "pin_memory_device='npu', num_workers=1, prefetch_factor=1)",
        "as above (perf only, unconfirmed)"),
  ])

E("act_detr_main", "detr/main.py", "explicit_replacement",
  "ACT detr/main.py (build_ACT_model_and_optimizer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; .npu() works once the entry script imported torch_npu"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "ACT model"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "CNNMLP model"),
  ])

E("act_detr_misc", "detr/util/misc.py", "explicit_replacement",
  "DETR util/misc.py as vendored by ACT (distributed helpers, MetricLogger)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; uses torch.npu.* after the port"),
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "all_reduce buffer must live on the HCCL device"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', ""),
      C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
        'local_size = torch.tensor([tensor.numel()], device="npu")', ""),
      C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
        'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', ""),
      C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace",
        True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', ""),
      C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
        "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', ""),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "only chooses the log format (adds 'max mem')"),
      C("if torch.cuda.is_available():  # max mem is only tracked on GPU", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():  # max mem is only tracked on the accelerator", "log format only"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "logged metric only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 without CUDA -> ZeroDivisionError"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL is not available on Ascend"),
  ])

E("act_conda_env", "conda_env.yaml", "explicit_replacement",
  "ACT / ALOHA conda_env.yaml",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA channel unused after the port"),
      C("- pytorch=2.0.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "no torch_npu wheel for torch 2.0.0 (2.0.1 is EOL); use a supported pair such as 2.1.0"),
      C("- torchvision=0.15.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must follow the torch version"),
      C("- pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
        "forces the CUDA build of pytorch; torch_npu is built against the CPU torch wheel"),
      C("- ipython=8.12.0", "import_torch_npu", "npu_only_addition", True, '  - pip: ["torch-npu==2.1.0.post10"]',
        "add the torch-npu pin (pip) at the end of the dependency list"),
  ])

E("act_train_sh", "scripts/train_sim.sh", "explicit_replacement",
  "ACT sim training launcher (one task per GPU)",
  [
      C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment is needed before torch_npu can load (libascendcl/libhccl)"),
      C("export MUJOCO_GL=egl", "env_var", "replace", False, "export MUJOCO_GL=osmesa",
        "EGL rendering here relied on the NVIDIA EGL driver; Ascend hosts have no GPU EGL device "
        "(Mesa EGL may work; unconfirmed)"),
      C("CUDA_VISIBLE_DEVICES=0 python3 imitate_episodes.py \\", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python3 imitate_episodes.py \\",
        "ignored on NPU, but device 0 is also the default, so behaviour is unchanged"),
      C("CUDA_VISIBLE_DEVICES=1 python3 imitate_episodes.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=1 python3 imitate_episodes.py \\",
        "ignored on NPU: the insertion job would silently land on NPU 0 together with the transfer job"),
      C("CUDA_VISIBLE_DEVICES=${EVAL_GPU:-0} python3 imitate_episodes.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${EVAL_GPU:-0} python3 imitate_episodes.py \\",
        "user-selected device silently ignored on NPU"),
  ])

# ---------------------------------------------------------------- LeRobot (huggingface/lerobot, hydra-era v1)

E("lerobot_utils", "lerobot/common/utils/utils.py", "device_branch_or_abstraction",
  "LeRobot common/utils/utils.py (get_safe_torch_device, seeding, RNG state)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; the new branches use torch.npu.*"),
      C('return torch.device("cuda")', "device_type", "add_branch", True,
        'elif torch.npu.is_available(): return torch.device("npu")',
        "auto_select_torch_device silently falls back to cpu on an NPU host"),
      C('case "cuda":', "device_type", "add_branch", False, 'case "npu":',
        "the catch-all case already returns torch.device('npu'); an explicit branch adds the availability assert"),
      C("if device == \"mps\" and dtype == torch.float64:", "unsupported_op_workaround", "replace", False,
        'if device in ("mps", "npu") and dtype == torch.float64:',
        "fp64 support on NPU is partial (transfer_to_npu maps DoubleTensor to fp32); unconfirmed for this use"),
      C('if try_device == "cuda":', "device_type", "add_branch", True,
        'elif try_device == "npu": return torch.npu.is_available()',
        "raises ValueError('Unknown device') for 'npu'; train.py calls it on cfg.device"),
      C('if device in ["cuda", "cpu"]:', "amp", "replace", True, 'if device in ["cuda", "npu", "cpu"]:',
        "raises ValueError for 'npu'"),
      C('random_state_dict["torch_cuda_random_state"] = torch.cuda.random.get_rng_state()', "torch_cuda_api",
        "add_branch", False,
        'elif torch.npu.is_available(): random_state_dict["torch_npu_random_state"] = torch.npu.get_rng_state()',
        "NPU generator state not captured; affects exact reproducibility of seeded_context/resume only"),
      C('torch.cuda.random.set_rng_state(random_state_dict["torch_cuda_random_state"])', "torch_cuda_api",
        "add_branch", False,
        'elif "torch_npu_random_state" in random_state_dict: torch.npu.set_rng_state(random_state_dict["torch_npu_random_state"])',
        "reproducibility only"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
        "elif torch.npu.is_available(): torch.npu.manual_seed_all(seed)",
        "torch.manual_seed above already seeds the NPU generator"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "debug helper; no-op without CUDA"),
      C('print("Current GPU Memory Allocated: {:.2f} MB".format(torch.cuda.memory_allocated(0) / 1024**2))',
        "torch_cuda_api", "replace", False,
        'print("Current NPU Memory Allocated: {:.2f} MB".format(torch.npu.memory_allocated(0) / 1024**2))',
        "debug helper; prints 0 without CUDA"),
      C('print("Maximum GPU Memory Allocated: {:.2f} MB".format(torch.cuda.max_memory_allocated(0) / 1024**2))',
        "torch_cuda_api", "replace", False,
        'print("Maximum NPU Memory Allocated: {:.2f} MB".format(torch.npu.max_memory_allocated(0) / 1024**2))',
        "debug helper"),
      C('print("Current GPU Memory Reserved: {:.2f} MB".format(torch.cuda.memory_reserved(0) / 1024**2))',
        "torch_cuda_api", "replace", False,
        'print("Current NPU Memory Reserved: {:.2f} MB".format(torch.npu.memory_reserved(0) / 1024**2))',
        "debug helper"),
      C('print("Maximum GPU Memory Reserved: {:.2f} MB".format(torch.cuda.max_memory_reserved(0) / 1024**2))',
        "torch_cuda_api", "replace", False,
        'print("Maximum NPU Memory Reserved: {:.2f} MB".format(torch.npu.max_memory_reserved(0) / 1024**2))',
        "debug helper"),
  ])

E("lerobot_train", "lerobot/scripts/train.py", "device_branch_or_abstraction",
  "LeRobot scripts/train.py (hydra-era, device from cfg.device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
        "autocast already follows device.type ('npu'), but the CUDA GradScaler disables itself without CUDA: "
        "use_amp=True would run fp16 autocast with no loss scaling"),
      C('pin_memory=device.type != "cpu",', "pin_memory", "replace", False,
        'pin_memory=device.type != "cpu", pin_memory_device=device.type if device.type == "npu" else "",',
        "pins for CUDA only without pin_memory_device (perf only, unconfirmed)"),
  ])

E("lerobot_default_cfg", "lerobot/configs/default.yaml", "device_branch_or_abstraction",
  "LeRobot configs/default.yaml (hydra defaults)",
  [
      C("device: cuda  # cpu", "device_type", "replace", True, "device: npu  # cuda | cpu",
        "cfg.device drives get_safe_torch_device for training and eval"),
  ])

E("lerobot_eval", "lerobot/scripts/eval.py", "device_branch_or_abstraction",
  "LeRobot scripts/eval.py (batched gym rollouts)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('observation = {key: observation[key].to(device, non_blocking=device.type == "cuda") for key in observation}',
        "device_type", "replace", False,
        'observation = {key: observation[key].to(device, non_blocking=device.type in ("cuda", "npu")) for key in observation}',
        "copies become blocking on NPU; perf only"),
  ])

E("lerobot_modeling_diffusion", "lerobot/common/policies/diffusion/modeling_diffusion.py",
  "device_branch_or_abstraction",
  "LeRobot DiffusionPolicy model (device-agnostic; no edits expected)",
  [])

E("lerobot_control_utils", "lerobot/common/robot_devices/control_utils.py", "device_branch_or_abstraction",
  "LeRobot robot_devices/control_utils.py (real-robot record / policy rollout loop)",
  [
      C('torch.autocast(device_type=device.type) if device.type == "cuda" and use_amp else nullcontext(),',
        "amp", "replace", True,
        'torch.autocast(device_type=device.type) if device.type in ("cuda", "npu") and use_amp else nullcontext(),',
        "the policy's use_amp setting is silently ignored on NPU"),
  ])

E("lerobot_dockerfile", "docker/lerobot-gpu/Dockerfile", "explicit_replacement",
  "LeRobot docker/lerobot-gpu/Dockerfile",
  [
      C("FROM nvidia/cuda:12.4.1-base-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "image must carry CANN (driver is mounted from the host by Ascend Docker Runtime)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-toolkit variable; Ascend devices are mounted via ASCEND_VISIBLE_DEVICES at run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", "removal", False, None,
        "nvidia-container-toolkit only"),
      C('ENV MUJOCO_GL="egl"', "env_var", "replace", False, 'ENV MUJOCO_GL="osmesa"',
        "EGL via the NVIDIA driver is gone; software rendering (needs libosmesa6) - Mesa EGL may also work, unconfirmed"),
      C("&& pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cu121",
        "import_torch_npu", "replace", True,
        "&& pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cpu "
        "&& pip install --no-cache-dir torch-npu==2.3.1.post6",
        "CUDA wheel index -> CPU torch plus the matching torch-npu"),
  ])

# ---------------------------------------------------------------- OpenVLA / prismatic (openvla/openvla)

E("openvla_finetune", "vla-scripts/finetune.py", "explicit_replacement",
  "OpenVLA vla-scripts/finetune.py (LoRA + DDP via torchrun)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('assert torch.cuda.is_available(), "Fine-tuning assumes at least one GPU is available!"', "torch_cuda_api",
        "replace", True, 'assert torch.npu.is_available(), "Fine-tuning assumes at least one NPU is available!"',
        "fails on an NPU host"),
      C("torch.cuda.set_device(device_id := distributed_state.local_process_index)", "torch_cuda_api", "replace",
        True, "torch.npu.set_device(device_id := distributed_state.local_process_index)", ""),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "hygiene only"),
      C('assert cfg.use_lora, "Quantized training only supported for LoRA fine-tuning!"',
        "unsupported_op_workaround", "npu_only_addition", False,
        'assert not torch.npu.is_available(), "bitsandbytes 4-bit has no stock Ascend backend; disable use_quantization"',
        "opt-in path (use_quantization=False by default); NF4 on NPU exists only in the bnb multi-backend work, unconfirmed"),
      C("vla = vla.to(device_id)", "tensor_to_device", "replace", True, 'vla = vla.to(f"npu:{device_id}")',
        "a bare int device means cuda:N (transfer_to_npu rewrites exactly these ints for .to())"),
      C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=torch.bfloat16):', "bf16 autocast silently disabled otherwise"),
      C('input_ids=batch["input_ids"].to(device_id),', "tensor_to_device", "replace", True,
        'input_ids=batch["input_ids"].to(f"npu:{device_id}"),', "int device -> cuda:N"),
      C('attention_mask=batch["attention_mask"].to(device_id),', "tensor_to_device", "replace", True,
        'attention_mask=batch["attention_mask"].to(f"npu:{device_id}"),', "int device -> cuda:N"),
      C('pixel_values=batch["pixel_values"].to(torch.bfloat16).to(device_id),', "tensor_to_device", "replace", True,
        'pixel_values=batch["pixel_values"].to(torch.bfloat16).to(f"npu:{device_id}"),', "int device -> cuda:N"),
      C('"gpu_mem_gb": torch.cuda.max_memory_reserved() / 2**30,', "torch_cuda_api", "replace", False,
        '"gpu_mem_gb": torch.npu.max_memory_reserved() / 2**30,', "logged metric only (0 without CUDA)"),
  ])

E("openvla_deploy", "vla-scripts/deploy.py", "explicit_replacement",
  "OpenVLA vla-scripts/deploy.py (FastAPI /act server)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('attn_implementation: Optional[str] = "flash_attention_2"', "attention_kernel", "replace", True,
        'def __init__(self, openvla_path: Union[str, Path], attn_implementation: Optional[str] = "sdpa") -> Path:',
        "flash-attn cannot be installed on NPU; transformers raises at load time. SDPA dispatches to NPU FA"),
      C('self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
        "replace", True,
        'self.device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
        "7B model would silently run on CPU"),
  ])

E("openvla_train", "vla-scripts/train.py", "explicit_replacement",
  "OpenVLA vla-scripts/train.py (FSDP pretraining entry)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("torch.cuda.set_device(device_id := overwatch.local_rank())", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device_id := overwatch.local_rank())", ""),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "hygiene only"),
  ])

E("openvla_fsdp", "prismatic/training/strategies/fsdp.py", "explicit_replacement",
  "prismatic FSDPStrategy (OpenVLA training strategy)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; torch.npu is available once the entry imported torch_npu"),
      C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
        "device_id=torch.npu.current_device(),", "raises without CUDA"),
      C("self.optimizer = AdamW(groups, lr=self.learning_rate, fused=True)", "fused_optimizer", "replace", False,
        "self.optimizer = AdamW(groups, lr=self.learning_rate)",
        "no _fused_adamw_ NPU kernel in the torch_npu op lists; CPU fallback or error - failure mode unconfirmed"),
  ])

E("openvla_base_strategy", "prismatic/training/strategies/base_strategy.py", "explicit_replacement",
  "prismatic TrainingStrategy base (run_training / run_vla_training loops)",
  [
      C('="cuda",', "amp", "replace", True, '"npu",', "run_training: bf16 autocast silently disabled otherwise"),
      C('with torch.autocast("cuda", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training):',
        "amp", "replace", True,
        'with torch.autocast("npu", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training):',
        "run_vla_training"),
  ])

E("openvla_torch_utils", "prismatic/util/torch_utils.py", "device_branch_or_abstraction",
  "prismatic util/torch_utils.py (seeding, check_bloat16_supported)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; the new branch uses torch.npu"),
      C("=try:", "device_capability_check", "add_branch", True,
        'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.npu.is_bf16_supported()',
        "CUDA/NCCL-only probe returns False on NPU and TrainingStrategy asserts on it"),
  ])

E("openvla_pyproject", "pyproject.toml", "explicit_replacement",
  "OpenVLA pyproject.toml",
  [
      C('"torch==2.2.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.2.0.post2",',
        "torch-npu wheel matching torch 2.2.0"),
      C('"flash-attn==2.5.5",', "attention_kernel", "removal", True, None,
        "flash-attn cannot be built on NPU; pip install .[train] fails"),
      C('"bitsandbytes==0.43.1",', "unsupported_op_workaround", "removal", False, None,
        "stock bitsandbytes has no Ascend backend (NF4 only in multi-backend work); optional extra, unconfirmed"),
  ])

E("openvla_finetune_sh", "scripts/finetune_libero.sh", "explicit_replacement",
  "OpenVLA LIBERO LoRA fine-tuning launcher (torchrun, single node)",
  [
      C("=set -euo pipefail", "env_var", "npu_only_addition", True, "set +u; " + SET_ENV + "; set -u",
        "CANN env needed; set_env.sh fails under set -u (unbound variable), so relax -u around it"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "a user-chosen device subset would be silently ignored"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "no effect on HCCL; logging only"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; no HCCL meaning"),
      C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
        "NUM_GPUS=$(npu-smi info -l | awk -F: '/Total Count/ {gsub(/ /, \"\", $2); print $2}')",
        "nvidia-smi missing: with pipefail the script aborts"),
  ])

E("openvla_multinode_sh", "scripts/slurm/pretrain_multinode.sbatch", "explicit_replacement",
  "OpenVLA-style multi-node FSDP pretraining sbatch (srun + torchrun c10d)",
  [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "gres name is site-defined on Ascend Slurm clusters; unconfirmed"),
      C("module load cuda/12.1", "env_var", "replace", True, "set +u; " + SET_ENV + "; set -u",
        "CANN environment instead of the CUDA module (set_env.sh fails under set -u)"),
      C("export NCCL_IB_HCA=", "env_var", "removal", False, None,
        "HCCL uses the NPU-side RoCE ports configured with hccn_tool, not host mlx5 HCAs"),
      C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=bond0",
        "multi-node: HCCL picks the host NIC by name order otherwise; an unreachable NIC breaks link setup"),
      C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no HCCL meaning"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1", "logging only"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL watchdog variable (documented default already 1)"),
      C("export NCCL_TIMEOUT=1800", "env_var", "replace", False, "export HCCL_EXEC_TIMEOUT=1800",
        "closest HCCL knob; NCCL_TIMEOUT itself is not read by NCCL"),
      C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
        "CUDA stream-scheduling knob; no effect on NPU"),
  ])

E("openvla_robot_openvla_utils", "experiments/robot/openvla_utils.py", "explicit_replacement",
  "OpenVLA experiments/robot/openvla_utils.py (LIBERO / Bridge eval helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; imported by run_*_eval.py entry scripts"),
      C('DEVICE = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
        "replace", True, 'DEVICE = torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu")',
        "VLA would silently run on CPU"),
      C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
        'attn_implementation="sdpa",', "flash-attn unavailable on NPU; transformers raises at load"),
  ])

E("openvla_robot_utils", "experiments/robot/robot_utils.py", "explicit_replacement",
  "OpenVLA experiments/robot/robot_utils.py (seeding, model dispatch)",
  [
      C('DEVICE = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
        "replace", False, 'DEVICE = torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu")',
        "defined but not used in this module; kept consistent with openvla_utils"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed on the line above already seeds the NPU generator"),
  ])

# ---------------------------------------------------------------- robomimic (ARISE-Initiative/robomimic)

E("robomimic_torch_utils", "robomimic/utils/torch_utils.py", "device_branch_or_abstraction",
  "robomimic utils/torch_utils.py (get_torch_device, optim helpers, rotation utils)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; new branch uses torch.npu"),
      C("if try_to_use_cuda and torch.cuda.is_available():", "device_type", "add_branch", True,
        'elif try_to_use_cuda and torch.npu.is_available(): device = torch.device("npu:0")',
        "config.train.cuda=True would silently train on CPU; the flag keeps its name and now means 'use accelerator'"),
  ])
