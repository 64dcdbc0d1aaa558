"""Labels for probe347 (end-to-end driving planners / CARLA agents, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any NPU device use; these projects pin torch<2.5, "
               "so there is no device-backend autoload")

# --------------------------------------------------------------------------------------------- TransFuser
E("transfuser_train", "team_code_transfuser/train.py", "explicit_replacement",
  "TransFuser (autonomousvision/transfuser, 2022) torchrun/DDP training script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.empty_cache()  # start from a clean allocator", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # start from a clean allocator in case a previous run left memory behind",
      "without CUDA torch.cuda.empty_cache() is a silent no-op (nothing initialised); NPU cache is just not freed"),
    C("=device = torch.device('cuda:{}'.format(local_rank))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(local_rank))", "'cuda' device string fails on an NPU host"),
    C("backend='nccl', init_method='env://'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank,",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; perf/memory only"),
    C("# single GPU training", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(local_rank))  # single NPU training", "'cuda' device string fails on an NPU host"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "torch.cuda.set_device raises without a CUDA driver"),
    C("torch.cuda.manual_seed_all(0)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(0)",
      "queued silently without CUDA; torch.manual_seed(0) on the next line should also seed the NPU generator (unconfirmed in knowledge)"),
    C("model.cuda(device=device)", "tensor_to_device", "replace", True, "model.npu(device=device)",
      "Module.cuda fails without CUDA"),
    C("bev_points = data['bev_points'].long().to('cuda'", "tensor_to_device", "replace", True,
      "bev_points = data['bev_points'].long().to(self.device, dtype=torch.int64)", "hard-coded 'cuda' in the geometric_fusion path"),
    C("cam_points = data['cam_points'].long().to('cuda'", "tensor_to_device", "replace", True,
      "cam_points = data['cam_points'].long().to(self.device, dtype=torch.int64)", "hard-coded 'cuda' in the geometric_fusion path"),
])

E("transfuser_agent", "team_code_transfuser/submission_agent.py", "explicit_replacement",
  "TransFuser CARLA leaderboard agent (HybridAgent ensemble, UKF GPS filter)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the agent module is what the leaderboard evaluator imports; torch_npu must be loaded before .npu()/'npu' use"),
    C("net = LidarCenterNet(self.config, 'cuda'", "device_type", "replace", True,
      "net = LidarCenterNet(self.config, 'npu', self.backbone, self.args['image_architecture'],",
      "device string handed to the model, which builds torch.device from it"),
    C("map_location='cuda:0')", "device_type", "replace", True,
      "state_dict = torch.load(os.path.join(path_to_conf_file, file), map_location='npu:0')",
      "map_location='cuda:0' fails without CUDA"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Module.cuda fails without CUDA"),
    C("rgb = torch.from_numpy(tick_data['rgb'])", "tensor_to_device", "replace", True,
      "rgb = torch.from_numpy(tick_data['rgb']).permute(2, 0, 1).unsqueeze(0).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda'", "tensor_to_device", "replace", True,
      "gt_velocity = torch.FloatTensor([tick_data['speed']]).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("target_point = target_point.to('cuda'", "tensor_to_device", "replace", True,
      "target_point = target_point.to('npu', dtype=torch.float32)", "'cuda' target"),
    C("target_point_image = torch.from_numpy(target_point_image)[None].to('cuda'", "tensor_to_device", "replace", True,
      "target_point_image = torch.from_numpy(target_point_image)[None].to('npu', dtype=torch.float32)", "'cuda' target"),
    C("bev_points = torch.from_numpy(bev_points).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "bev_points = torch.from_numpy(bev_points).unsqueeze(0).npu()", "Tensor.cuda fails without CUDA"),
    C("cam_points = torch.from_numpy(cam_points).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "cam_points = torch.from_numpy(cam_points).unsqueeze(0).npu()", "Tensor.cuda fails without CUDA"),
    C("lidar_transformed = lidar_transformed.cuda().float()", "tensor_to_device", "replace", True,
      "lidar_transformed = lidar_transformed.npu().float()", "Tensor.cuda fails without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "in destroy(): silent no-op without CUDA, so NPU memory is only released when the process exits"),
])

E("transfuser_model", "team_code_transfuser/model.py", "device_branch_or_abstraction",
  "TransFuser LidarCenterNet (GRU waypoint decoder, PID controller, CenterNet head glue)", [
    C("return torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "add_branch", True,
      "return torch.device('npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu'))",
      "device helper silently picks CPU on an NPU host when no device is passed"),
])

E("transfuser_shell_train", "team_code_transfuser/shell_train.sh", "explicit_replacement",
  "TransFuser SLURM + torchrun training launcher", [
    C("=conda activate tfuse", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1  # INFO-level CANN/HCCL plog",
      "NCCL_DEBUG is ignored by HCCL; debug logging only"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun --nnodes=1 --nproc_per_node=8 --max_restarts=0 --rdzv_id=1234576890 --rdzv_backend=c10d \\",
      "ignored on NPU, but it lists all 8 devices so ignoring it changes nothing on an 8-NPU node"),
])

E("transfuser_local_eval", "leaderboard/scripts/local_evaluation.sh", "explicit_replacement",
  "TransFuser / CARLA leaderboard local evaluation script", [
    C("=export DATAGEN=0", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before the evaluator imports the agent (import torch_npu)"),
    C("export CUDA_VISIBLE_DEVICES=${3:-0}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${3:-0}",
      "device pin chosen by argument is silently ignored on NPU; the agent would always land on device 0"),
])

E("transfuser_env", "environment.yml", "explicit_replacement",
  "TransFuser conda environment.yml (pytorch + cudatoolkit channels, mmcv-full cu113 wheels)", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA channel only serves CUDA packages"),
    C("cudatoolkit=11.3", "device_type", "removal", False, None,
      "CUDA runtime is dead weight on an NPU host and steers conda to CUDA pytorch builds"),
    C("pytorch=1.12.0", "device_type", "replace", True, "  - pytorch=2.1.0  # CPU build; torch_npu 2.1.0.postN pairs with torch 2.1.0",
      "no torch_npu release pairs with torch 1.12; the torch version must match the torch_npu wheel"),
    C("torchvision=0.13.0", "device_type", "replace", True, "  - torchvision=0.16.0",
      "torchvision 0.13 pins pytorch 1.12; must follow the torch bump"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch_npu wheel pin (pairs with torch 2.1.0)"),
    C("download.openmmlab.com/mmcv/dist/cu113", "custom_cuda_extension", "removal", False, None,
      "CUDA 11.3 mmcv wheel index has nothing for an NPU host; pip falls back to a source build"),
    C("mmcv-full==1.6.0", "custom_cuda_extension", "replace", False, "    - mmcv==1.7.2  # built from source with MMCV_WITH_OPS=1 on the NPU host",
      "TransFuser only uses mmdet's pure-PyTorch CenterNet utilities; CUDA ops are not needed (unconfirmed that no mmcv CUDA op is hit)"),
    C("nvidia-ml-py3", "device_type", "removal", False, None, "pynvml has no NPU backend; only optional GPU monitoring uses it"),
])

# --------------------------------------------------------------------------------------------- InterFuser
E("interfuser_train", "interfuser/train.py", "explicit_replacement",
  "InterFuser (opendilab/InterFuser) timm-derived distributed training script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("return x.cuda()", "tensor_to_device", "replace", True, "return x.npu()",
      "batch helper used when the prefetcher is disabled (the shipped launch uses --no-prefetcher)"),
    C('args.device = "cuda:0"', "device_type", "replace", False, 'args.device = "npu:0"',
      "args.device is only written into args.yaml / the checkpoint here, never used to place tensors"),
    C('args.device = "cuda:%d" % args.local_rank', "device_type", "replace", False, 'args.device = "npu:%d" % args.local_rank',
      "same: recorded but unused in this script"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C('backend="nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL unavailable on Ascend"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda fails without CUDA"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "--channels-last is off by default; channels_last is listed as unsupported in the msFmkTransplt limitations"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True, "amp_autocast = torch.npu.amp.autocast",
      "torch.cuda.amp.autocast disables itself with a warning when CUDA is absent: --amp would silently train in fp32"),
    C("cls_loss = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False, "cls_loss = nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without weight has no tensors, so Module.cuda() touches nothing and does not fail; consistency edit"),
    C("torch.cuda.synchronize()  # make batch_time", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make batch_time measure the real step time", "raises without CUDA"),
    C('writer.add_scalar("train/max_mem_gb", torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
      'writer.add_scalar("train/max_mem_gb", torch.npu.max_memory_allocated() / 1024 ** 3, num_updates)',
      "returns 0 without CUDA; wrong metric only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "validate(): raises without CUDA"),
])

E("interfuser_timm_cuda", "interfuser/timm/utils/cuda.py", "explicit_replacement",
  "timm 0.4-era utils/cuda.py vendored in InterFuser (ApexScaler / NativeScaler)", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "self._scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA; NPU autocast would then run fp16 without loss scaling"),
])

E("interfuser_timm_loader", "interfuser/timm/data/loader.py", "explicit_replacement",
  "timm loader factory with the CUDA-stream PrefetchLoader, as vendored in InterFuser", [
    C("self.mean = torch.tensor([x * 255 for x in mean]).cuda()", "tensor_to_device", "replace", False,
      "self.mean = torch.tensor([x * 255 for x in mean]).npu().view(1, 3, 1, 1)",
      "dead code in InterFuser: create_carla_loader never wraps a PrefetchLoader and the launch passes --no-prefetcher; would fail if used"),
    C("self.std = torch.tensor([x * 255 for x in std]).cuda()", "tensor_to_device", "replace", False,
      "self.std = torch.tensor([x * 255 for x in std]).npu().view(1, 3, 1, 1)", "as above"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", False, "stream = torch.npu.Stream()",
      "raises without CUDA, but only inside the unused PrefetchLoader"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", False, "with torch.npu.stream(stream):", "as above"),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", False,
      "next_input = next_input.npu(non_blocking=True)", "Tensor.cuda, inside the unused PrefetchLoader"),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", False,
      "next_target = next_target.npu(non_blocking=True)", "Tensor.cuda, inside the unused PrefetchLoader"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "replace", False,
      "torch.npu.current_stream().wait_stream(stream)", "raises without CUDA, but only inside the unused PrefetchLoader"),
])

E("interfuser_agent", "leaderboard/team_code/interfuser_agent.py", "explicit_replacement",
  "InterFuser CARLA leaderboard agent (pygame display, tracker, controller)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "agent module imported by the leaderboard evaluator; needed before .npu()"),
    C('=net.load_state_dict(torch.load(path_to_model_file)["state_dict"])', "tensor_to_device", "replace", True,
      'net.load_state_dict(torch.load(path_to_model_file, map_location="cpu")["state_dict"])',
      "checkpoint saved from a CUDA model: torch.load without map_location tries to restore CUDA storages and raises without CUDA"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Module.cuda fails without CUDA"),
    C('self.net.load_state_dict(torch.load(path_to_model_file)["state_dict"])', "tensor_to_device", "replace", True,
      'self.net.load_state_dict(torch.load(path_to_model_file, map_location="cpu")["state_dict"])',
      "same implicit CUDA deserialisation as above"),
    C("=self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()", "Module.cuda fails without CUDA"),
    C('rgb = self.rgb_front_transform(Image.fromarray(tick_data["rgb"])).unsqueeze(0).cuda()', "tensor_to_device", "replace", True,
      'rgb = self.rgb_front_transform(Image.fromarray(tick_data["rgb"])).unsqueeze(0).npu().float()', "Tensor.cuda"),
    C('rgb_left = self.rgb_left_transform(', "tensor_to_device", "replace", True,
      'rgb_left = self.rgb_left_transform(Image.fromarray(tick_data["rgb_left"])).unsqueeze(0).npu().float()', "Tensor.cuda"),
    C('rgb_right = self.rgb_right_transform(', "tensor_to_device", "replace", True,
      'rgb_right = self.rgb_right_transform(Image.fromarray(tick_data["rgb_right"])).unsqueeze(0).npu().float()', "Tensor.cuda"),
    C('rgb_center = self.rgb_center_transform(', "tensor_to_device", "replace", True,
      'rgb_center = self.rgb_center_transform(Image.fromarray(tick_data["rgb"])).unsqueeze(0).npu().float()', "Tensor.cuda"),
    C("mes = torch.from_numpy(mes).float().unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "mes = torch.from_numpy(mes).float().unsqueeze(0).npu()", "Tensor.cuda"),
    C('input_data["target_point"] = torch.from_numpy(tick_data["target_point"]).float().cuda()', "tensor_to_device", "replace", True,
      'input_data["target_point"] = torch.from_numpy(tick_data["target_point"]).float().npu().view(1, -1)', "Tensor.cuda"),
    C('input_data["lidar"] = torch.from_numpy(tick_data["lidar"]).float().cuda()', "tensor_to_device", "replace", True,
      'input_data["lidar"] = torch.from_numpy(tick_data["lidar"]).float().npu().unsqueeze(0)', "Tensor.cuda"),
])

E("interfuser_train_sh", "interfuser/scripts/train.sh", "explicit_replacement",
  "InterFuser multi-GPU launch script (torch.distributed.launch)", [
    C("=export OMP_NUM_THREADS=8", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment needed before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "a user-chosen subset (e.g. GPUS=4,5,6,7) is silently ignored on NPU; ranks would land on devices 0-3"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround for a GPU P2P hang; HCCL ignores it"),
])

# --------------------------------------------------------------------------------------------- TCP
E("tcp_train", "TCP/train.py", "explicit_replacement",
  "TCP (OpenDriveLab/TCP) PyTorch-Lightning 1.x training script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus = args.gpus,", "distributed_framework", "replace", True, "accelerator='npu', devices=args.gpus,",
      "Lightning's GPU accelerator raises when no CUDA device exists; Lightning has no built-in Ascend accelerator, "
      "so this needs a Lightning version/plugin that provides one (unconfirmed)"),
    C("accelerator='ddp',", "dist_backend", "replace", False,
      "strategy=DDPStrategy(process_group_backend='hccl', find_unused_parameters=False),",
      "Lightning only chooses nccl for CUDA roots and falls back to gloo otherwise; hccl has to be named (unconfirmed)"),
])

E("tcp_model", "TCP/model.py", "device_branch_or_abstraction",
  "TCP network (ResNet-34 perception, trajectory GRU, temporal control branch, PID) - device-agnostic", [
])

E("tcp_agent", "team_code/tcp_agent.py", "explicit_replacement",
  "TCP CARLA leaderboard agent", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "agent module imported by the leaderboard evaluator"),
    C("ckpt = torch.load(path_to_conf_file)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(path_to_conf_file, map_location='cpu')",
      "Lightning checkpoint written from GPU training: loading without map_location restores CUDA storages and raises"),
    C("self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()", "Module.cuda fails without CUDA"),
    C("gt_velocity = torch.FloatTensor([tick_data['speed']]).to('cuda'", "tensor_to_device", "replace", True,
      "gt_velocity = torch.FloatTensor([tick_data['speed']]).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("cmd_one_hot = torch.tensor(cmd_one_hot).view(1, 6).to('cuda'", "tensor_to_device", "replace", True,
      "cmd_one_hot = torch.tensor(cmd_one_hot).view(1, 6).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("speed = torch.FloatTensor([float(tick_data['speed'])]).view(1,1).to('cuda'", "tensor_to_device", "replace", True,
      "speed = torch.FloatTensor([float(tick_data['speed'])]).view(1,1).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("rgb = self._im_transform(tick_data['rgb']).unsqueeze(0).to('cuda'", "tensor_to_device", "replace", True,
      "rgb = self._im_transform(tick_data['rgb']).unsqueeze(0).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("target_point = torch.stack(tick_data['target_point'], dim=1).to('cuda'", "tensor_to_device", "replace", True,
      "target_point = torch.stack(tick_data['target_point'], dim=1).to('npu', dtype=torch.float32)", "'cuda' target"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "destroy(): silent no-op without CUDA"),
])

# --------------------------------------------------------------------------------------------- Roach
E("roach_ppo_policy", "agents/rl_birdview/models/ppo_policy.py", "device_branch_or_abstraction",
  "Roach (zhejz/carla-roach) PPO birdview policy (torch imported as th)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (wrapped in try/except ImportError so CUDA hosts still work)",
      "th.npu only exists once torch_npu is imported; the policy is imported by several entry scripts (train_rl, benchmark, data_collect)"),
    C("if th.cuda.is_available():", "device_type", "add_branch", True,
      "if th.npu.is_available(): self.device = 'npu'  # new branch; the CUDA check below becomes elif",
      "is_available() is False on an NPU host, so the policy silently trains/infers on CPU"),
    C("device = th.device('cuda') if th.cuda.is_available() else th.device('cpu')", "device_type", "add_branch", True,
      "device = th.device('npu') if th.npu.is_available() else (th.device('cuda') if th.cuda.is_available() else th.device('cpu'))",
      "checkpoint load silently lands on CPU on an NPU host"),
])

E("roach_cilrs_trainer", "agents/cilrs/models/trainer.py", "explicit_replacement",
  "Roach CILRS behaviour-cloning trainer (with an AMP switch)", [
    C("device='cuda'):", "device_type", "replace", True, "device='npu'):",
      "default device of the trainer; the agent builds the trainer without passing device"),
    C("self._scaler = torch.cuda.amp.GradScaler(enabled=self._use_amp)", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler(enabled=self._use_amp)",
      "with use_amp the CUDA scaler disables itself without CUDA; fp16 under NPU autocast would run unscaled"),
    C("with torch.cuda.amp.autocast(enabled=self._use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self._use_amp):",
      "CUDA autocast disables itself without CUDA: use_amp would silently train in fp32"),
    C("'train/gpu_mem_mb': torch.cuda.memory_allocated(self._device)", "torch_cuda_api", "replace", False,
      "'train/gpu_mem_mb': torch.npu.memory_allocated(self._device) / 2 ** 20,", "returns 0 without CUDA; logging only"),
    C("with torch.cuda.amp.autocast(self._use_amp):", "amp", "replace", False, "with torch.npu.amp.autocast(self._use_amp):",
      "validation only: silently runs in fp32, which is slower but not wrong"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("roach_server_utils", "utils/server_utils.py", "device_branch_or_abstraction",
  "Roach CARLA server manager (CUDA_VISIBLE_DEVICES selects the GPU that renders each CARLA server)", [
])

# --------------------------------------------------------------------------------------------- PlanT
E("plant_lit_train", "training/PlanT/lit_train.py", "device_branch_or_abstraction",
  "PlanT (autonomousvision/plant) hydra + PyTorch-Lightning training entry point", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("available = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "available = torch.npu.device_count()",
      "returns 0 on an NPU host, so the helper silently falls back to a single device"),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", False,
      "if torch.npu.is_available():  # no SM version on NPU; torch.npu.get_device_capability() returns None unless TORCH_NPU_DEVICE_CAPABILITY is set",
      "guarded by torch.cuda.is_available(), so it is simply skipped on NPU; TF32 precision hints are a CUDA tensor-core optimisation (perf only)"),
    C("strategy = DDPStrategy(find_unused_parameters=False)", "dist_backend", "replace", False,
      'strategy = DDPStrategy(process_group_backend="hccl", find_unused_parameters=False)',
      "Lightning only defaults to nccl for CUDA roots (gloo otherwise); hccl must be named (unconfirmed for Lightning+NPU)"),
])

E("plant_lit_module", "training/PlanT/lit_module.py", "explicit_replacement",
  "PlanT HFLM transformer + LightningModule", [
    C("peak_gb = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", False,
      "peak_gb = torch.npu.max_memory_allocated(self.device) / 1024 ** 3",
      "torch.cuda memory stats return 0 when CUDA was never initialised; wrong metric only"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "torch.cuda.reset_peak_memory_stats rejects a non-CUDA device (ValueError) and needs the CUDA runtime"),
])

E("plant_config", "training/config/config.yaml", "device_branch_or_abstraction",
  "PlanT hydra training config", [
    C("accelerator: gpu", "distributed_framework", "replace", True,
      "  accelerator: npu        # needs a Lightning accelerator plugin for Ascend",
      "Lightning's 'gpu' accelerator raises when no CUDA device is found (the NPU accelerator itself is unconfirmed)"),
])

E("plant_agent", "carla_agent_files/PlanT_agent.py", "explicit_replacement",
  "PlanT CARLA agent (privileged object-level input, Lightning checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "agent module imported by the leaderboard evaluator"),
    C("self.device = torch.device(cfg.get('device', 'cuda:0'))", "device_type", "replace", True,
      "self.device = torch.device(cfg.get('device', 'npu:0'))", "default device string is CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):",
      "fp16_inference is off by default; when on, CUDA autocast silently disables itself and inference runs in fp32"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

# --------------------------------------------------------------------------------------------- UniAD / VAD (mmdet3d plugin style)
E("uniad_dist_train", "tools/uniad_dist_train.sh", "explicit_replacement",
  "UniAD (OpenDriveLab/UniAD) tools/uniad_dist_train.sh multi-node launcher", [
    C("=RANK=${RANK:-0}", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment needed before torch_npu is imported"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=ib0  # host NIC for HCCL root-info bootstrap",
      "ignored by HCCL; HCCL only uses the host NIC for bootstrap (data goes over the NPU NICs) and picks one by its own priority"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "InfiniBand switch for NCCL; HCCL traffic uses the NPUs' RoCE ports, no equivalent"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, "Mellanox HCA selection for NCCL; no HCCL equivalent"),
])

E("uniad_train", "tools/train.py", "explicit_replacement",
  "UniAD tools/train.py (mmcv 1.x Config / init_dist, mmdet3d 0.17 plugin loading)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", True,
      "init_dist_npu(args.launcher, **cfg.dist_params)  # torch.npu.set_device(local_rank) + init_process_group('hccl')",
      "mmcv 1.4's init_dist calls torch.cuda.device_count()/set_device (ZeroDivisionError on an NPU host); from mmcv source, not the knowledge base"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): logger.info(f'NPU: {torch.npu.get_device_name(torch.npu.current_device())}')  # new branch; CUDA check becomes elif",
      "only decides whether the device name is logged"),
])

E("vad_config", "projects/configs/VAD/VAD_base_e2e.py", "explicit_replacement",
  "VAD (hustvl/VAD) mmdet3d-plugin config (BEVFormer encoder, fp16 loss_scale, dist_params)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "passed to init_dist -> init_process_group; NCCL is unavailable on Ascend"),
])

MMCV_NOTE = " (mmcv 1.x scatter/DataParallel internals, from mmcv source rather than the knowledge base)"
E("uniad_mmdet_train", "projects/mmdet3d_plugin/uniad/apis/mmdet_train.py", "explicit_replacement",
  "UniAD custom_train_detector (mmcv MMDataParallel / MMDistributedDataParallel, Fp16OptimizerHook)", [
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
      "def init_random_seed(seed=None, device='npu'):",
      "default only reached when --seed is unset in a distributed run; tools/train.py defaults --seed 0"),
    C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(  # mmcv>=1.7 mmcv.device.npu, or plain torch DDP",
      "MMDistributedDataParallel scatters inputs through CUDA streams / Tensor.cuda" + MMCV_NOTE),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda fails without CUDA"),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device raises without CUDA"),
    C("eval_model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "eval_model = NPUDistributedDataParallel(", "same as for the training model" + MMCV_NOTE),
    C("=eval_model.cuda(),", "tensor_to_device", "replace", True, "eval_model.npu(),", "Module.cuda fails without CUDA"),
    C("device_ids=[torch.cuda.current_device()], broadcast_buffers=False,", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()], broadcast_buffers=False,", "raises without CUDA"),
    C("=model = MMDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDataParallel(  # mmcv>=1.7, or drop the wrapper for single-device training",
      "MMDataParallel is an nn.DataParallel subclass (DataParallel is unsupported on NPU)" + MMCV_NOTE),
    C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Module.cuda fails without CUDA"),
    C("eval_model = MMDataParallel(", "distributed_framework", "replace", True, "eval_model = NPUDataParallel(",
      "same as for the training model"),
    C("eval_model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "eval_model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Module.cuda fails without CUDA"),
])

MSDA_NOTE = ("the callers only take the CUDA-kernel path when torch.cuda.is_available() and value.is_cuda; on NPU they fall back "
             "to multi_scale_deformable_attn_pytorch (grid_sample has an NPU kernel), so this is a performance port")
E("uniad_msda_function", "projects/mmdet3d_plugin/uniad/modules/multi_scale_deformable_attn_function.py", "kernel_rewrite",
  "BEVFormer/UniAD MultiScaleDeformableAttnFunction_fp16/_fp32 over mmcv's CUDA _ext", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "torch.cuda.amp.custom_fwd(cast_inputs=...) keys on CUDA autocast state, so under NPU autocast the fp32 cast would be skipped; "
      "only matters once these Functions run on NPU (unconfirmed)"),
    C("ext_module = ext_loader.load_ext(", "custom_cuda_extension", "replace", False,
      "import mx_driving  # Ascend DrivingSDK kernels (module/API names unconfirmed)",
      "a source-built mmcv still exports the symbols; the CUDA kernels behind them are never reached on NPU. " + MSDA_NOTE),
    C("=output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "replace", False,
      "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
      "fp16 Function: CUDA kernel call site. " + MSDA_NOTE),
    C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "removal", False, None,
      "backward comes from the NPU op's own autograd. " + MSDA_NOTE),
    C("output = ext_module.ms_deform_attn_forward(value, value_spatial_shapes", "custom_cuda_extension", "replace", False,
      "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
      "fp32 Function: CUDA kernel call site. " + MSDA_NOTE),
    C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes", "custom_cuda_extension", "removal", False, None,
      "backward comes from the NPU op's own autograd. " + MSDA_NOTE),
])

E("uniad_temporal_attn", "projects/mmdet3d_plugin/uniad/modules/temporal_self_attention.py", "device_branch_or_abstraction",
  "BEVFormer TemporalSelfAttention as used in UniAD (CUDA kernel vs. PyTorch fallback branch)", [
    C("ext_module = ext_loader.load_ext(", "custom_cuda_extension", "removal", False, None,
      "unused in this module; only pins an import-time dependency on mmcv's CUDA op list"),
    C("if torch.cuda.is_available() and value.is_cuda:", "npu_fused_op", "add_branch", False,
      "if value.device.type == 'npu': output = mx_driving.multi_scale_deformable_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)  # new branch; CUDA check becomes elif",
      "on NPU the condition is False and the grid_sample-based PyTorch fallback runs: correct but slow; "
      "an NPU deformable-attention kernel (DrivingSDK, API unconfirmed) restores speed"),
])

E("vad_test", "tools/test.py", "transfer_to_npu",
  "VAD tools/test.py (mmcv MMDataParallel / MMDistributedDataParallel evaluation entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "entry point of a large mmcv/mmdet3d code base: transfer_to_npu redirects torch.cuda.* (also inside mmcv's init_dist and "
      "result collection), Tensor/Module.cuda and rewrites backend 'nccl' -> 'hccl' in init_process_group"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=[0])  # mmcv>=1.7 mmcv.device.npu (unconfirmed)",
      "MMDataParallel subclasses nn.DataParallel, which is unsupported on NPU and not rescued by transfer_to_npu; "
      "a bare module would not unpack mmcv DataContainers"),
    C("=model.cuda(),", "tensor_to_device", "replace", False, "model.npu(),",
      "Module.cuda is remapped to .npu by transfer_to_npu; explicit edit optional"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", False,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device is redirected by transfer_to_npu"),
])

E("uniad_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "UniAD/VAD-style Dockerfile (pytorch/pytorch CUDA devel image, mmcv-full cu111, mmdet3d v0.17.1 source build)", [
    C('ARG CUDA="11.1"', "device_type", "removal", False, None, "only feeds the CUDA base-image tag"),
    C('ARG CUDNN="8"', "device_type", "removal", False, None, "only feeds the CUDA base-image tag"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; an NPU container needs a CANN base (tag pattern of Ascend/cann-container-image) plus the NPU driver mounted"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None, "nvcc arch list; meaningless without nvcc"),
    C("ENV TORCH_NVCC_FLAGS=", "custom_cuda_extension", "removal", False, None, "nvcc flags; meaningless without nvcc"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "replace", True,
      'ENV MMCV_WITH_OPS="1" FORCE_NPU="1"',
      "forces CUDAExtension builds in mmcv/mmdet3d setup.py, which fail without nvcc/CUDA_HOME (FORCE_NPU switch of mmcv unconfirmed)"),
    C("=ENV DEBIAN_FRONTEND=noninteractive", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
      "the CUDA base image provided torch; the CANN image does not (torch_npu 2.1.0.post17 pairs with CANN 8.3.RC1)"),
    C("RUN rm /etc/apt/sources.list.d/cuda.list", "device_type", "removal", True, None,
      "the NVIDIA apt sources do not exist in a CANN image, so rm fails and breaks the build"),
    C("&& rm /etc/apt/sources.list.d/nvidia-ml.list", "device_type", "removal", True, None, "same as above"),
    C("&& apt-key del 7fa2af80", "device_type", "removal", False, None, "NVIDIA key rotation workaround; irrelevant (exit status unconfirmed)"),
    C("compute/cuda/repos/ubuntu1804", "device_type", "removal", False, None, "NVIDIA CUDA apt key; not needed"),
    C("compute/machine-learning/repos/ubuntu1804", "device_type", "removal", False, None, "NVIDIA ML apt key; not needed"),
    C("mmcv-full==1.4.0 -f https://download.openmmlab.com/mmcv/dist/cu111", "custom_cuda_extension", "replace", False,
      "RUN pip install --no-cache-dir mmcv==1.7.2  # source build, MMCV_WITH_OPS=1",
      "the cu111/torch1.9 wheel index has nothing for this image; pip would fall back to a source build anyway"),
    C("RUN FORCE_CUDA=1 pip install --no-cache-dir -e .", "custom_cuda_extension", "replace", True,
      "RUN pip install --no-cache-dir -e .  # mmdet3d ops built CPU-only",
      "forces nvcc builds of mmdet3d's CUDA ops, which fail in an image without CUDA"),
    C("=ENV PYTHONPATH=/workspace/UniAD:$PYTHONPATH", "import_torch_npu", "npu_only_addition", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /root/.bashrc",
      "Ascend's CANN images already bake the set_env.sh exports into ENV; only needed with a hand-made base"),
])

E("uniad_requirements", "requirements.txt", "explicit_replacement",
  "UniAD/VAD requirements.txt (cu111 torch wheels, mmcv-full find-links, spconv-cu111)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu111", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu is meant to sit on a CPU torch build (x86) - size/perf, not correctness"),
    C("torch==1.9.1+cu111", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build of a torch version no torch_npu release pairs with"),
    C("torchvision==0.10.1+cu111", "device_type", "replace", True, "torchvision==0.16.0", "CUDA build; must follow torch"),
    C("=mmcv-full==1.4.0", "custom_cuda_extension", "replace", False, "mmcv==1.7.2  # build with MMCV_WITH_OPS=1 on the NPU host",
      "the CUDA ops are not reached on NPU (BEVFormer attention falls back to PyTorch); NPU-enabled ops need a newer mmcv (unconfirmed)"),
    C("download.openmmlab.com/mmcv/dist/cu111", "custom_cuda_extension", "removal", False, None,
      "CUDA-only wheel index"),
    C("=mmsegmentation==0.14.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch_npu wheel pin (pairs with torch 2.1.0); position in the file is arbitrary"),
    C("spconv-cu111==2.1.21", "custom_cuda_extension", "removal", False, None,
      "CUDA-only sparse-conv wheel; unused by the camera-only UniAD/VAD configs"),
])

# --------------------------------------------------------------------------------------------- ThinkTwice / BEVDepth-style op
E("thinktwice_setup", "setup.py", "kernel_rewrite",
  "ThinkTwice (OpenDriveLab) setup.py building a BEVDepth-style voxel-pooling CUDA extension", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension",
      "npu_only_addition", True, "from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/ACL include and lib dirs for an Ascend C re-implementation of the kernel"),
    C("sources_cuda=['src/voxel_pooling_forward_cuda.cu']),", "custom_cuda_extension", "npu_only_addition", True,
      "NpuExtension(name='team_code.ops.voxel_pooling.voxel_pooling_npu_ext', sources=['team_code/ops/voxel_pooling/src/voxel_pooling_npu.cpp']),",
      "the .cu kernel has no NPU build path; without CUDA the CppExtension fallback links a module whose launcher symbol is undefined"),
])

E("thinktwice_voxel_pooling", "team_code/ops/voxel_pooling/voxel_pooling.py", "kernel_rewrite",
  "BEVDepth voxel_pooling autograd Function + LSS view transformer as used in ThinkTwice", [
    C("from . import voxel_pooling_ext", "custom_cuda_extension", "replace", True,
      "from . import voxel_pooling_npu_ext  # plus the CUDA voxel_pooling_ext import wrapped in try/except ImportError",
      "the CUDA extension cannot be built on the NPU host; its CPU-only fallback build fails to import (undefined launcher symbol)"),
    C("voxel_pooling_ext.voxel_pooling_forward_wrapper(", "custom_cuda_extension", "add_branch", True,
      "(voxel_pooling_npu_ext if input_features.device.type == 'npu' else voxel_pooling_ext).voxel_pooling_forward_wrapper(",
      "call site of the nvcc-built kernel; NPU tensors must go to the Ascend C implementation (the CUDA wrapper's CHECK_CUDA rejects them)"),
])
