"""Labels for probe361 (neural implicit surface reconstruction: NeuS, VolSDF, MonoSDF, instant-nsr-pl, Neuralangelo).

Port target assumed throughout: torch 2.1.0 + torch_npu 2.1.0.post12 (CANN 8.1.RC1), explicit port
(torch.npu.* / 'npu' / hccl), no transfer_to_npu.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------------------------
# NeuS (Totoro97/NeuS)
# --------------------------------------------------------------------------------------------------------------
E("neus_exp_runner", "exp_runner.py", "explicit_replacement", "Totoro97/NeuS exp_runner.py (Runner, __main__)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torch 2.1 needs an explicit import torch_npu to register the npu device."),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Module-level device of the runner; every network is moved with .to(self.device)."),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device('npu')",
      "NeuS relies on CUDA default tensors for every torch.ones/linspace/rand. Ascend's 2.7.1 support list says "
      "set_default_tensor_type does not accept torch.npu.*Tensor types, so use set_default_device (default dtype "
      "is already float32). Note: set_default_device does not cover the legacy torch.Tensor(...) constructor "
      "(pytorch/pytorch#132483), see renderer.py labels."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)",
      "Selects the card from --gpu; torch.cuda.set_device raises on a host without CUDA."),
])

E("neus_dataset", "models/dataset.py", "explicit_replacement", "Totoro97/NeuS models/dataset.py (Dataset)", [
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Camera intrinsics/poses are moved to self.device."),
    C("color = self.images[img_idx][(pixels_y, pixels_x)]", "tensor_to_device", "replace", True,
      "color = self.images[img_idx.cpu()][(pixels_y.cpu(), pixels_x.cpu())]    # batch_size, 3",
      "Not a CUDA API: the indices come from the default (now npu) device while self.images stays on the CPU. "
      "torch 1.8 tolerated this, the torch 2.1 that torch_npu needs raises 'indices should be either on cpu or on "
      "the same device as the indexed tensor' (Totoro97/NeuS#92)."),
    C("mask = self.masks[img_idx][(pixels_y, pixels_x)]", "tensor_to_device", "replace", True,
      "mask = self.masks[img_idx.cpu()][(pixels_y.cpu(), pixels_x.cpu())]      # batch_size, 3",
      "Same CPU-tensor / device-index mismatch as the colour line."),
    C("mask[:, :1]], dim=-1).cuda()", "tensor_to_device", "replace", True,
      "return torch.cat([rays_o.cpu(), rays_v.cpu(), color, mask[:, :1]], dim=-1).to(self.device)    # batch_size, 10",
      "Ray batch is moved back to the accelerator with .cuda()."),
    C("rot = torch.from_numpy(pose[:3, :3]).cuda()", "tensor_to_device", "replace", True,
      "rot = torch.from_numpy(pose[:3, :3]).to(self.device)",
      "Novel-view interpolation path (gen_rays_between); fails when reached."),
    C("trans = torch.from_numpy(pose[:3, 3]).cuda()", "tensor_to_device", "replace", True,
      "trans = torch.from_numpy(pose[:3, 3]).to(self.device)",
      "Same function as above."),
])

E("neus_renderer", "models/renderer.py", "explicit_replacement", "Totoro97/NeuS models/renderer.py (NeuSRenderer)", [
    C("torch.Tensor([sample_dist]).expand(dists[..., :1].shape)], -1)", "tensor_to_device", "replace", True,
      "dists = torch.cat([dists, torch.tensor([sample_dist], device=dists.device).expand(dists[..., :1].shape)], -1)",
      "Legacy torch.Tensor(...) followed the CUDA default tensor type; torch.set_default_device('npu') does not "
      "cover it (pytorch/pytorch#132483), so the CPU tensor would be concatenated with npu tensors and fail."),
    C("torch.Tensor([sample_dist]).expand(dists[..., :1].shape)], dim=-1)", "tensor_to_device", "replace", True,
      "dists = torch.cat([dists, torch.tensor([sample_dist], device=dists.device).expand(dists[..., :1].shape)], dim=-1)",
      "Same legacy-constructor issue in render_core."),
])

E("neus_fields", "models/fields.py", "explicit_replacement", "Totoro97/NeuS models/fields.py (SDFNetwork, RenderingNetwork, NeRF)", [])

E("neus_conf", "confs/wmask.conf", "explicit_replacement", "Totoro97/NeuS confs/wmask.conf", [])

E("neus_requirements", "requirements.txt", "explicit_replacement", "Totoro97/NeuS requirements.txt", [
    C("=torch==1.8.0", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "No torch_npu wheel pairs with torch 1.8.0; move the pin to 2.1.0 and add torch-npu==2.1.0.post12 on the next "
      "line (one edit, one label)."),
])

# --------------------------------------------------------------------------------------------------------------
# VolSDF (lioryariv/volsdf)
# --------------------------------------------------------------------------------------------------------------
E("volsdf_exp_runner", "code/training/exp_runner.py", "explicit_replacement",
  "lioryariv/volsdf code/training/exp_runner.py", [
    C("=import GPUtil", "torch_cuda_api", "removal", False, None,
      "GPUtil shells out to nvidia-smi; importing it is harmless, but it is dead after the getAvailable call goes."),
    C("deviceIDs = GPUtil.getAvailable(", "torch_cuda_api", "replace", True,
      "deviceIDs = [0]  # GPUtil/nvidia-smi cannot see Ascend cards; pass --gpu N to choose one",
      "--gpu defaults to 'auto'; GPUtil finds no nvidia-smi on an NPU host, so gpu=deviceIDs[0] fails."),
])

E("volsdf_train", "code/training/volsdf_train.py", "explicit_replacement",
  "lioryariv/volsdf code/training/volsdf_train.py (VolSDFTrainRunner)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "exp_runner.py never imports torch itself; the trainer module is the first torch importer."),
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '{0}'.format(self.GPU_INDEX)", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '{0}'.format(self.GPU_INDEX)",
      "Card selection from --gpu; left alone it is ignored on NPU and every run lands on card 0."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host: the model would silently stay on the CPU while inputs go to the NPU."),
    C("self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model.npu()", "Model placement."),
    C("os.path.join(old_checkpnts_dir, 'ModelParameters', str(kwargs['checkpoint']) + \".pth\"))", "tensor_to_device",
      "replace", False,
      "os.path.join(old_checkpnts_dir, 'ModelParameters', str(kwargs['checkpoint']) + \".pth\"), map_location='npu')",
      "Resume only: checkpoints written by the ported run reload fine; only CUDA-written ones need map_location."),
    C("os.path.join(old_checkpnts_dir, 'OptimizerParameters', str(kwargs['checkpoint']) + \".pth\"))", "tensor_to_device",
      "replace", False,
      "os.path.join(old_checkpnts_dir, 'OptimizerParameters', str(kwargs['checkpoint']) + \".pth\"), map_location='npu')",
      "Adam state holds device tensors; same resume-only reasoning as the model state."),
    C("model_input[key] = model_input[key].cuda()", "tensor_to_device", "replace", True,
      "model_input[key] = model_input[key].npu()", "Plotting batch."),
    C("model_input[\"intrinsics\"] = model_input[\"intrinsics\"].cuda()", "tensor_to_device", "replace", True,
      "model_input[\"intrinsics\"] = model_input[\"intrinsics\"].npu()", "Training batch."),
    C("model_input[\"uv\"] = model_input[\"uv\"].cuda()", "tensor_to_device", "replace", True,
      "model_input[\"uv\"] = model_input[\"uv\"].npu()", "Training batch."),
    C("model_input['pose'] = model_input['pose'].cuda()", "tensor_to_device", "replace", True,
      "model_input['pose'] = model_input['pose'].npu()", "Training batch."),
    C("ground_truth['rgb'].cuda().reshape(-1,3))", "tensor_to_device", "replace", True,
      "ground_truth['rgb'].npu().reshape(-1,3))", "PSNR logging each iteration."),
])

E("volsdf_ray_sampler", "code/model/ray_sampler.py", "explicit_replacement",
  "lioryariv/volsdf code/model/ray_sampler.py (UniformSampler, ErrorBoundSampler)", [
    C("1).cuda(), self.far * torch.ones(ray_dirs.shape[0], 1).cuda()", "tensor_to_device", "replace", True,
      "near, far = self.near * torch.ones(ray_dirs.shape[0], 1, device=ray_dirs.device), self.far * torch.ones(ray_dirs.shape[0], 1, device=ray_dirs.device)",
      "Uniform sampler bounds."),
    C("=near = self.near * torch.ones(ray_dirs.shape[0], 1).cuda()", "tensor_to_device", "replace", True,
      "near = self.near * torch.ones(ray_dirs.shape[0], 1, device=ray_dirs.device)",
      "Sphere-intersection branch."),
    C("t_vals = torch.linspace(0., 1., steps=self.N_samples).cuda()", "tensor_to_device", "replace", True,
      "t_vals = torch.linspace(0., 1., steps=self.N_samples, device=ray_dirs.device)", ""),
    C("t_rand = torch.rand(z_vals.shape).cuda()", "tensor_to_device", "replace", True,
      "t_rand = torch.rand(z_vals.shape, device=z_vals.device)", "Stratified jitter."),
    C("d_star = torch.zeros(z_vals.shape[0], z_vals.shape[1] - 1).cuda()", "tensor_to_device", "replace", True,
      "d_star = torch.zeros(z_vals.shape[0], z_vals.shape[1] - 1, device=z_vals.device)", "Error-bound d*."),
    C("torch.tensor([1e10]).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "dists = torch.cat([dists, torch.tensor([1e10], device=dists.device).unsqueeze(0).repeat(dists.shape[0], 1)], -1)", ""),
    C("torch.zeros(dists.shape[0], 1).cuda(), free_energy[:, :-1]", "tensor_to_device", "replace", True,
      "shifted_free_energy = torch.cat([torch.zeros(dists.shape[0], 1, device=dists.device), free_energy[:, :-1]], dim=-1)", ""),
    C("u = torch.linspace(0., 1., steps=N).cuda()", "tensor_to_device", "replace", True,
      "u = torch.linspace(0., 1., steps=N, device=cdf.device).unsqueeze(0).repeat(cdf.shape[0], 1)", "Deterministic CDF samples."),
    C("u = torch.rand(list(cdf.shape[:-1]) + [N]).cuda()", "tensor_to_device", "replace", True,
      "u = torch.rand(list(cdf.shape[:-1]) + [N], device=cdf.device)", "Random CDF samples."),
    C("torch.ones(ray_dirs.shape[0],1).cuda()", "tensor_to_device", "replace", True,
      "near, far = self.near * torch.ones(ray_dirs.shape[0], 1, device=ray_dirs.device), self.far * torch.ones(ray_dirs.shape[0], 1, device=ray_dirs.device)",
      "Final near/far of the error-bound sampler."),
    C("idx = torch.randint(z_vals.shape[-1], (z_vals.shape[0],)).cuda()", "tensor_to_device", "replace", True,
      "idx = torch.randint(z_vals.shape[-1], (z_vals.shape[0],), device=z_vals.device)", "Eikonal sample picks."),
    C("torch.zeros(dists.shape[0], 1).cuda(), dists * density[:, :-1]", "tensor_to_device", "replace", True,
      "shifted_free_energy = torch.cat([torch.zeros(dists.shape[0], 1, device=dists.device), dists * density[:, :-1]], dim=-1)",
      "get_error_bound."),
])

E("volsdf_rend_util", "code/utils/rend_util.py", "explicit_replacement",
  "lioryariv/volsdf code/utils/rend_util.py (IDR camera helpers)", [
    C("torch.log(torch.Tensor([10.]).cuda())", "tensor_to_device", "replace", True,
      "psnr = -10. * torch.log(mse) / torch.log(torch.tensor([10.], device=mse.device))", "PSNR helper."),
    C("p = torch.eye(4).repeat(pose.shape[0],1,1).cuda().float()", "tensor_to_device", "replace", True,
      "p = torch.eye(4, device=pose.device).repeat(pose.shape[0],1,1).float()", "Quaternion-pose branch."),
    C("depth = torch.ones((batch_size, num_samples)).cuda()", "tensor_to_device", "replace", True,
      "depth = torch.ones((batch_size, num_samples), device=uv.device)", ""),
    C("intrinsics = intrinsics.cuda()", "tensor_to_device", "replace", True,
      "intrinsics = intrinsics.npu()", ""),
    C("torch.ones_like(z).cuda()", "tensor_to_device", "replace", True,
      "return torch.stack((x_lift, y_lift, z, torch.ones_like(z)), dim=-1)",
      "ones_like already inherits z's device; the .cuda() only has to go."),
    C("R = torch.ones((batch_size, 3,3)).cuda()", "tensor_to_device", "replace", True,
      "R = torch.ones((batch_size, 3,3), device=q.device)", ""),
    C("q = torch.ones((batch_size, 4)).cuda()", "tensor_to_device", "replace", True,
      "q = torch.ones((batch_size, 4), device=R.device)", ""),
    C("torch.Tensor([-1, 1]).cuda().float()", "tensor_to_device", "replace", True,
      "sphere_intersections = torch.sqrt(under_sqrt) * torch.tensor([-1., 1.], device=under_sqrt.device) - ray_cam_dot", ""),
])

E("volsdf_general", "code/utils/general.py", "explicit_replacement", "lioryariv/volsdf code/utils/general.py", [
    C("torch.split(torch.arange(total_pixels).cuda(), n_pixels, dim=0)", "tensor_to_device", "replace", True,
      "for i, indx in enumerate(torch.split(torch.arange(total_pixels, device=model_input['uv'].device), n_pixels, dim=0)):",
      "index_select needs the index on the same device as model_input['uv']. The docstring's 'Cuda memory' wording "
      "is left alone."),
])

# --------------------------------------------------------------------------------------------------------------
# MonoSDF (autonomousvision/monosdf)
# --------------------------------------------------------------------------------------------------------------
E("monosdf_exp_runner", "code/training/exp_runner.py", "explicit_replacement",
  "autonomousvision/monosdf code/training/exp_runner.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script."),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.local_rank)", ""),
    C("init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank, timeout=datetime.timedelta(1, 1800))",
      "The script always inits a process group, even for one card."),
])

E("monosdf_train", "code/training/monosdf_train.py", "explicit_replacement",
  "autonomousvision/monosdf code/training/monosdf_train.py (MonoSDFTrainRunner)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on NPU: the model would stay on the CPU and DDP(device_ids=[...]) would then reject it."),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", ""),
    C("os.path.join(old_checkpnts_dir, 'ModelParameters', str(kwargs['checkpoint']) + \".pth\"))", "tensor_to_device",
      "replace", True,
      "os.path.join(old_checkpnts_dir, 'ModelParameters', str(kwargs['checkpoint']) + \".pth\"), map_location='npu')",
      "This path also serves --ft_folder, i.e. finetuning from the released pretrained models, which were written "
      "on CUDA. Without map_location torch.load raises on a host with no CUDA."),
    C("os.path.join(old_checkpnts_dir, 'OptimizerParameters', str(kwargs['checkpoint']) + \".pth\"))", "tensor_to_device",
      "replace", True,
      "os.path.join(old_checkpnts_dir, 'OptimizerParameters', str(kwargs['checkpoint']) + \".pth\"), map_location='npu')",
      "The optimizer state of the CUDA-written checkpoint holds CUDA tensors too."),
    C("BackprojectDepth(1, self.img_res[0], self.img_res[1]).cuda()", "tensor_to_device", "replace", True,
      "self.backproject = BackprojectDepth(1, self.img_res[0], self.img_res[1]).npu()", ""),
    C("model_input = {k: v.cuda() if torch.is_tensor(v) else v", "tensor_to_device", "replace", True,
      "model_input = {k: v.npu() if torch.is_tensor(v) else v for k, v in model_input.items()}", "Plotting batch."),
    C("model_input[\"intrinsics\"] = model_input[\"intrinsics\"].cuda()", "tensor_to_device", "replace", True,
      "model_input[\"intrinsics\"] = model_input[\"intrinsics\"].npu()", ""),
    C("model_input[\"uv\"] = model_input[\"uv\"].cuda()", "tensor_to_device", "replace", True,
      "model_input[\"uv\"] = model_input[\"uv\"].npu()", ""),
    C("model_input['pose'] = model_input['pose'].cuda()", "tensor_to_device", "replace", True,
      "model_input['pose'] = model_input['pose'].npu()", ""),
    C("ground_truth['rgb'].cuda().reshape(-1,3))", "tensor_to_device", "replace", True,
      "ground_truth['rgb'].npu().reshape(-1,3))", ""),
])

E("monosdf_network", "code/model/network.py", "kernel_rewrite",
  "autonomousvision/monosdf code/model/network.py (ImplicitNetworkGrid, MonoSDFNetwork)", [
    C("from hashencoder.hashgrid import _hash_encode, HashEncoder", "custom_cuda_extension", "replace", True,
      "from model.hash_encoding_torch import HashEncoder  # pure-PyTorch multi-resolution hash grid, same ctor args",
      "hashencoder (from torch-ngp) JIT-builds a .cu kernel with torch.utils.cpp_extension.load on import. Ascend "
      "has no nvcc path, so the grid is re-implemented with torch ops (or in Ascend C). Call sites keep the "
      "HashEncoder(...) signature and are left unlabelled."),
    C("=import tinycudann as tcnn", "custom_cuda_extension", "removal", True, None,
      "tcnn is only used inside a commented-out string, but the import itself fails because tiny-cuda-nn cannot "
      "be installed without CUDA."),
    C("self.bg_color = torch.tensor(conf.get_list(\"bg_color\"", "tensor_to_device", "replace", True,
      "self.bg_color = torch.tensor(conf.get_list(\"bg_color\", default=[1.0, 1.0, 1.0])).float().npu()", ""),
    C("eikonal_points = torch.empty(n_eik_points, 3).uniform_(", "tensor_to_device", "replace", True,
      "eikonal_points = torch.empty(n_eik_points, 3, device=cam_loc.device).uniform_(-self.scene_bounding_sphere, self.scene_bounding_sphere)", ""),
    C("torch.tensor([1e10]).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "dists = torch.cat([dists, torch.tensor([1e10], device=dists.device).unsqueeze(0).repeat(dists.shape[0], 1)], -1)", ""),
    C("torch.zeros(dists.shape[0], 1).cuda(), free_energy[:, :-1]", "tensor_to_device", "replace", True,
      "shifted_free_energy = torch.cat([torch.zeros(dists.shape[0], 1, device=dists.device), free_energy[:, :-1]], dim=-1)  # shift one step", ""),
])

E("monosdf_loss", "code/model/loss.py", "explicit_replacement", "autonomousvision/monosdf code/model/loss.py (MonoSDFLoss)", [
    C("rgb_gt = ground_truth['rgb'].cuda()", "tensor_to_device", "replace", True,
      "rgb_gt = ground_truth['rgb'].npu()", "Ground truth arrives on the CPU from the DataLoader."),
    C("depth_gt = ground_truth['depth'].cuda()", "tensor_to_device", "replace", True,
      "depth_gt = ground_truth['depth'].npu()", ""),
    C("normal_gt = ground_truth['normal'].cuda()", "tensor_to_device", "replace", True,
      "normal_gt = ground_truth['normal'].npu()", ""),
    C("eikonal_loss = torch.tensor(0.0).cuda().float()", "tensor_to_device", "replace", True,
      "eikonal_loss = torch.tensor(0.0, device=rgb_gt.device)", "Fallback branch; fails when reached."),
    C("mask = (ground_truth['mask'] > 0.5).cuda() & mask", "tensor_to_device", "replace", True,
      "mask = (ground_truth['mask'] > 0.5).npu() & mask", ""),
    C("if self.depth_weight > 0 else torch.tensor(0.0).cuda().float()", "tensor_to_device", "replace", True,
      "depth_loss = self.get_depth_loss(depth_pred, depth_gt, mask) if self.depth_weight > 0 else torch.tensor(0.0, device=rgb_gt.device)", ""),
    C("=depth_loss = torch.tensor(0.0).cuda().float()", "tensor_to_device", "replace", True,
      "depth_loss = torch.tensor(0.0, device=rgb_gt.device)", ""),
])

E("monosdf_cues", "preprocess/extract_monocular_cues.py", "device_branch_or_abstraction",
  "autonomousvision/monosdf preprocess/extract_monocular_cues.py (omnidata DPT depth/normal cues)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Standalone preprocessing entry script."),
    C("map_location = (lambda storage, loc: storage.cuda())", "tensor_to_device", "replace", False,
      "map_location = (lambda storage, loc: storage.npu()) if torch.npu.is_available() else torch.device('cpu')",
      "Unported it falls back to CPU loading, and model.to(device) moves the weights afterwards anyway."),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "Silent wrong behaviour: on an NPU host the CUDA check is False and the whole DPT inference over every frame "
      "runs on the CPU."),
])

E("monosdf_script", "scripts/train_scannet.sh", "explicit_replacement",
  "autonomousvision/monosdf README launch commands (torch.distributed.launch per ScanNet scene)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}",
      "Card restriction for the launcher; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime."),
    C("=export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "Needed unless the shell or container already sourced CANN's environment; depends on the host."),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "The script runs under set -e, so a missing nvidia-smi aborts it before any training starts."),
])

# --------------------------------------------------------------------------------------------------------------
# instant-nsr-pl (bennyguo/instant-nsr-pl)
# --------------------------------------------------------------------------------------------------------------
E("insr_launch", "launch.py", "explicit_replacement", "bennyguo/instant-nsr-pl launch.py", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu selects the cards and is set before torch is imported; on NPU the CUDA variable is ignored."),
    C("import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "First torch importer of the entry script (the import is deferred until after the env var is set)."),
    C("strategy = 'ddp_find_unused_parameters_false'", "dist_backend", "replace", True,
      "strategy = DDPStrategy(process_group_backend='hccl', find_unused_parameters=False)",
      "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot reduce npu tensors, so "
      "name hccl explicitly."),
    C("accelerator='gpu',", "device_type", "replace", True,
      "accelerator='npu',",
      "'gpu' means CUDA/MPS to Lightning and fails on an NPU host. 'npu' needs a Lightning build/plugin that "
      "registers an NPU accelerator; which one to use for pytorch-lightning<2 is unconfirmed in the knowledge base."),
])

E("insr_models_utils", "models/utils.py", "explicit_replacement", "bennyguo/instant-nsr-pl models/utils.py", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "_TruncExp relies on custom_fwd(cast_inputs=torch.float32). The CUDA decorator only reacts to CUDA autocast, "
      "so under NPU autocast (precision: 16) exp() would silently run in fp16 and overflow."),
    C("=import tinycudann as tcnn", "custom_cuda_extension", "removal", True, None,
      "tiny-cuda-nn cannot be built without CUDA."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "A no-op without CUDA rather than an error; NPU cache release is only a memory/performance matter."),
    C("tcnn.free_temporary_memory()", "custom_cuda_extension", "removal", True, None,
      "NameError once the tcnn import is gone; called from validation_epoch_end via cleanup()."),
])

E("insr_network_utils", "models/network_utils.py", "kernel_rewrite",
  "bennyguo/instant-nsr-pl models/network_utils.py (encodings, VanillaMLP, tcnn wrappers)", [
    C("=import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
      "from models.torch_encodings import TorchEncoding  # pure-PyTorch HashGrid / SphericalHarmonics (tcnn is CUDA-only)",
      "The hash-grid and SH encodings have to be re-implemented with torch ops."),
    C("with torch.cuda.device(self.rank):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.rank):",
      "torch.cuda.device(int).__enter__ initialises CUDA and raises on an NPU host."),
    C("self.encoding = tcnn.Encoding(in_channels, encoding_config)", "custom_cuda_extension", "replace", True,
      "self.encoding = TorchEncoding(in_channels, encoding_config)",
      "Geometry hash grid (ProgressiveBandHashGrid)."),
    C("dtype=torch.float32, device=self.rank)", "tensor_to_device", "replace", True,
      "self.mask = torch.zeros(self.n_level * self.n_features_per_level, dtype=torch.float32, device=f'npu:{self.rank}')",
      "A bare int device means cuda:N in torch 2.1 (transfer_to_npu rewrites int device kwargs for this reason)."),
    C("with torch.cuda.device(get_rank()):  # tcnn allocates on the current device", "torch_cuda_api", "replace", True,
      "with torch.npu.device(get_rank()):",
      "get_encoding is also reached for the SphericalHarmonics view encoding of the texture network."),
    C("encoding = tcnn.Encoding(n_input_dims, config_to_primitive(config))", "custom_cuda_extension", "replace", True,
      "encoding = TorchEncoding(n_input_dims, config_to_primitive(config))",
      "SphericalHarmonics (texture) and HashGrid (background) encodings."),
    C("@torch.cuda.amp.autocast(False)", "amp", "replace", True,
      "@torch.npu.amp.autocast(enabled=False)",
      "VanillaMLP has to run in fp32 (sphere init, second-order eikonal gradients). The CUDA decorator leaves NPU "
      "autocast on, so the geometry MLP would silently run in fp16 under precision: 16."),
    C("with torch.cuda.device(get_rank()):  # FullyFusedMLP / CutlassMLP live on the current GPU", "torch_cuda_api",
      "replace", False,
      "with torch.npu.device(get_rank()):",
      "Dead once the config moves FullyFusedMLP to VanillaMLP (configs/neus-dtu.yaml label)."),
    C("network = tcnn.Network(n_input_dims, n_output_dims, config_to_primitive(config))", "custom_cuda_extension",
      "replace", False,
      "raise NotImplementedError(f'{config.otype} is a tiny-cuda-nn network; use VanillaMLP on Ascend')",
      "Dead after the config change; a clear error beats a NameError if someone re-enables it."),
    C("encoding_with_network = tcnn.NetworkWithInputEncoding(", "custom_cuda_extension", "replace", False,
      "encoding_with_network = EncodingWithNetwork(get_encoding(n_input_dims, encoding_config), get_mlp(n_input_dims, n_output_dims, network_config))",
      "Only reached when both encoding and MLP are tcnn types (not in the NeuS configs)."),
])

E("insr_neus_model", "models/neus.py", "kernel_rewrite", "bennyguo/instant-nsr-pl models/neus.py (NeuSModel)", [
    C("from nerfacc import ContractionType, OccupancyGrid, ray_marching", "custom_cuda_extension", "replace", True,
      "from models.nerfacc_torch import ContractionType, OccupancyGrid, ray_marching, render_weight_from_density, render_weight_from_alpha, accumulate_along_rays",
      "nerfacc 0.3.x ships CUDA kernels (JIT-built on import). Port the used functions to torch ops behind the same "
      "names; the call sites stay unlabelled."),
    C("from nerfacc.intersection import ray_aabb_intersect", "custom_cuda_extension", "replace", True,
      "from models.nerfacc_torch import ray_aabb_intersect", "Same module."),
    C("mesh['v_pos'].to(self.rank)", "tensor_to_device", "replace", True,
      "_, sdf_grad, feature = chunk_batch(self.geometry, export_config.chunk_size, False, mesh['v_pos'].to(self.device), with_grad=True, with_feature=True)",
      "Int device = cuda:N. This is the mesh export path (vertex colours)."),
])

E("insr_neus_system", "systems/neus.py", "explicit_replacement",
  "bennyguo/instant-nsr-pl systems/neus.py (NeuSSystem.preprocess_data)", [
    C("rgb = self.dataset.all_images[index, y, x].view(-1, self.dataset.all_images.shape[-1]).to(self.rank)",
      "tensor_to_device", "replace", True,
      "rgb = self.dataset.all_images[index, y, x].view(-1, self.dataset.all_images.shape[-1]).to(self.device)",
      "self.rank is the integer process rank; Tensor.to(int) targets cuda:N. LightningModule.device is the "
      "accelerator-neutral handle."),
    C("fg_mask = self.dataset.all_fg_masks[index, y, x].view(-1).to(self.rank)", "tensor_to_device", "replace", True,
      "fg_mask = self.dataset.all_fg_masks[index, y, x].view(-1).to(self.device)", ""),
    C("rgb = self.dataset.all_images[index].view(-1, self.dataset.all_images.shape[-1]).to(self.rank)",
      "tensor_to_device", "replace", True,
      "rgb = self.dataset.all_images[index].view(-1, self.dataset.all_images.shape[-1]).to(self.device)", ""),
    C("fg_mask = self.dataset.all_fg_masks[index].view(-1).to(self.rank)", "tensor_to_device", "replace", True,
      "fg_mask = self.dataset.all_fg_masks[index].view(-1).to(self.device)", ""),
    C("=self.model.background_color = torch.ones((3,), dtype=torch.float32, device=self.rank)", "tensor_to_device",
      "replace", True,
      "self.model.background_color = torch.ones((3,), dtype=torch.float32, device=self.device)", ""),
    C("torch.rand((3,), dtype=torch.float32, device=self.rank)", "tensor_to_device", "replace", True,
      "self.model.background_color = torch.rand((3,), dtype=torch.float32, device=self.device)",
      "background_color: random is the DTU default."),
    C("device=self.rank)  # always white for val/test", "tensor_to_device", "replace", True,
      "self.model.background_color = torch.ones((3,), dtype=torch.float32, device=self.device)  # always white for val/test", ""),
])

E("insr_dtu_dataset", "datasets/dtu.py", "explicit_replacement", "bennyguo/instant-nsr-pl datasets/dtu.py (DTUDatasetBase)", [
    C("self.directions = self.directions.float().to(self.rank)", "tensor_to_device", "replace", True,
      "self.directions = self.directions.float().to(f'npu:{self.rank}')",
      "The whole dataset is preloaded on the device with .to(int rank), which means cuda:N."),
    C("self.all_c2w.float().to(self.rank), \\", "tensor_to_device", "replace", True,
      "self.all_c2w.float().to(f'npu:{self.rank}'), \\", ""),
    C("self.all_images.float().to(self.rank), \\", "tensor_to_device", "replace", True,
      "self.all_images.float().to(f'npu:{self.rank}'), \\", ""),
    C("self.all_fg_masks.float().to(self.rank)", "tensor_to_device", "replace", True,
      "self.all_fg_masks.float().to(f'npu:{self.rank}')", ""),
])

E("insr_config", "configs/neus-dtu.yaml", "kernel_rewrite", "bennyguo/instant-nsr-pl configs/neus-dtu.yaml", [
    C("otype: FullyFusedMLP", "custom_cuda_extension", "replace", True,
      "otype: VanillaMLP",
      "The texture MLP is a tiny-cuda-nn fully-fused network with no NPU counterpart; the pure-torch VanillaMLP "
      "takes the same n_neurons / n_hidden_layers keys. The HashGrid / SphericalHarmonics otypes stay (served by "
      "the torch encoding port)."),
])

E("insr_requirements", "requirements.txt", "kernel_rewrite", "bennyguo/instant-nsr-pl requirements.txt + README install line", [
    C("=nerfacc==0.3.3", "custom_cuda_extension", "removal", False, None,
      "pip-installs without CUDA (kernels are JIT-built on first import) and nothing imports it after the port."),
    C("tiny-cuda-nn/#subdirectory=bindings/torch", "custom_cuda_extension", "removal", True, None,
      "The build needs nvcc/CUDA and fails, which aborts pip install -r."),
])

# --------------------------------------------------------------------------------------------------------------
# Neuralangelo (NVlabs/neuralangelo, imaginaire framework)
# --------------------------------------------------------------------------------------------------------------
E("nangelo_train", "train.py", "explicit_replacement", "NVlabs/neuralangelo train.py", [
    C("=import os", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torch arrives indirectly through the imaginaire imports, so torch_npu goes at the top."),
    C("from imaginaire.utils.gpu_affinity import set_affinity", "torch_cuda_api", "removal", False, None,
      "The module imports pynvml, which is pip-installable anywhere; dead once the call is removed."),
    C("=set_affinity(args.local_rank)", "torch_cuda_api", "removal", True, None,
      "NVML-based CPU affinity: pynvml.nvmlInit() raises NVMLError_LibraryNotFound on an NPU host. No torch_npu "
      "equivalent; drop it, or pin with numactl per npu-smi topology."),
    C("os.environ[\"NCCL_ASYNC_ERROR_HANDLING\"] = \"0\"", "env_var", "replace", False,
      "os.environ[\"HCCL_ASYNC_ERROR_HANDLING\"] = \"0\"",
      "Meant to turn off the collective watchdog during long stalls. HCCL_ASYNC_ERROR_HANDLING is torch_npu's "
      "watchdog switch; on NPU the NCCL variable is simply ignored, so this is behaviour/robustness only."),
])

E("nangelo_distributed", "imaginaire/utils/distributed.py", "explicit_replacement",
  "NVlabs/neuralangelo imaginaire/utils/distributed.py", [
    C("def init_dist(local_rank, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(local_rank, backend='hccl', **kwargs):", "Default backend used by train.py and extract_mesh.py."),
    C("=return torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "return torch.npu.current_device()", ""),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", ""),
    C("_libcudart = ctypes.CDLL('libcudart.so')", "torch_cuda_api", "removal", True, None,
      "Raw CUDA-runtime L2 fetch-granularity tweak; the dlopen of libcudart.so raises OSError on an NPU host."),
    C("pValue = ctypes.cast((ctypes.c_int * 1)(), ctypes.POINTER(ctypes.c_int))", "torch_cuda_api", "removal", False,
      None, "Harmless on its own; goes with the block."),
    C("_libcudart.cudaDeviceSetLimit(ctypes.c_int(0x05), ctypes.c_int(128))", "torch_cuda_api", "removal", True, None,
      "NameError once the CDLL line is removed."),
    C("_libcudart.cudaDeviceGetLimit(pValue, ctypes.c_int(0x05))", "torch_cuda_api", "removal", True, None,
      "Same."),
    C("return torch.cuda.current_device() == 0", "torch_cuda_api", "replace", True,
      "return torch.npu.current_device() == 0", "is_local_master()."),
])

E("nangelo_misc", "imaginaire/utils/misc.py", "explicit_replacement", "NVlabs/neuralangelo imaginaire/utils/misc.py", [
    C("return to_device(data, 'cuda')", "device_type", "replace", True,
      "return to_device(data, 'npu')",
      "to_cuda() moves every training batch (trainers/base.py start_of_iteration). The name is kept so call sites "
      "need no edit."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Timer with cfg.speed_benchmark: torch.cuda.synchronize initialises CUDA and raises on an NPU host."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "After checkpoint load; a no-op without CUDA, so memory-only."),
])

E("nangelo_trainer_base", "imaginaire/trainers/base.py", "explicit_replacement",
  "NVlabs/neuralangelo imaginaire/trainers/base.py (BaseTrainer)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", False,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "Neuralangelo ships with amp_config.enabled False. When enabled, the CUDA autocast/GradScaler just disable "
      "themselves with a warning on NPU, so training silently stays in fp32: a performance loss, not a wrong result."),
    C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api",
      "replace", False,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "--profile only; an NPU trace needs torch_npu.profiler."),
    C("model = model.to('cuda')", "device_type", "replace", True,
      "model = model.to('npu')", "Model placement before DDP."),
    C("self.criteria[loss_name].to('cuda')", "device_type", "replace", True,
      "self.criteria[loss_name].to('npu')", "Loss modules with buffers."),
    C("\"memory/max_allocated_gb\": torch.cuda.max_memory_allocated() / 1024 ** 3,", "torch_cuda_api", "replace", False,
      "\"memory/max_allocated_gb\": torch.npu.max_memory_allocated() / 1024 ** 3,",
      "Logged metric only; without CUDA initialised the CUDA call returns 0 instead of failing."),
    C("prof = torch.profiler.profile(", "torch_cuda_api", "replace", False,
      "prof = torch_npu.profiler.profile(", "--profile only."),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "--profile only."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "After validation; memory-only."),
])

E("nangelo_modules", "projects/neuralangelo/utils/modules.py", "kernel_rewrite",
  "NVlabs/neuralangelo projects/neuralangelo/utils/modules.py (NeuralSDF, NeuralRGB)", [
    C("import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
      "from projects.neuralangelo.utils.hashgrid_torch import HashGridEncoding  # pure-PyTorch replacement for tcnn.Encoding",
      "Function-local import in build_encoding; hashgrid is the default encoding for every Neuralangelo config."),
    C("self.tcnn_encoding = tcnn.Encoding(3, config)", "custom_cuda_extension", "replace", True,
      "self.tcnn_encoding = HashGridEncoding(3, config)",
      "The torch port has to match tcnn's HashGrid layout (per_level_scale, log2_hashmap_size). Numerical "
      "gradients (taps 4/6) mean no double backward through the grid is needed."),
])

E("nangelo_mesh", "projects/neuralangelo/utils/mesh.py", "explicit_replacement",
  "NVlabs/neuralangelo projects/neuralangelo/utils/mesh.py (block-wise marching cubes)", [
    C("xyz_cuda = xyz.cuda()", "tensor_to_device", "replace", True,
      "xyz_cuda = xyz.npu()", "The variable name stays; only the move changes."),
    C("xyz_cuda = torch.from_numpy(xyz).float().cuda()[None, None]", "tensor_to_device", "replace", True,
      "xyz_cuda = torch.from_numpy(xyz).float().npu()[None, None]  # [N,3] -> [1,1,N,3]", "--textured export."),
])

E("nangelo_extract_mesh", "projects/neuralangelo/scripts/extract_mesh.py", "explicit_replacement",
  "NVlabs/neuralangelo projects/neuralangelo/scripts/extract_mesh.py", [
    C("=import os", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script."),
    C("from imaginaire.utils.gpu_affinity import set_affinity  # noqa: E402", "torch_cuda_api", "removal", False, None,
      "Dead after the call is removed."),
    C("=set_affinity(args.local_rank)", "torch_cuda_api", "removal", True, None,
      "NVML init fails on an NPU host."),
    C("os.environ[\"NCCL_ASYNC_ERROR_HANDLING\"] = \"0\"", "env_var", "replace", False,
      "os.environ[\"HCCL_ASYNC_ERROR_HANDLING\"] = \"0\"", "Watchdog tolerance only."),
])

E("nangelo_dockerfile", "docker/Dockerfile-neuralangelo", "explicit_replacement",
  "NVlabs/neuralangelo docker/Dockerfile-neuralangelo", [
    C("FROM nvcr.io/nvidia/pytorch:23.04-py3", "import_torch_npu", "replace", True,
      "FROM <ascend-pytorch base image with CANN 8.1.RC1 + torch 2.1.0 + torch_npu 2.1.0.post12>",
      "The NGC image carries CUDA torch and no CANN/torch_npu. Which Ascend base image to use is site-specific."),
    C("ENV TCNN_CUDA_ARCHITECTURES=70;75;80;86;89", "custom_cuda_extension", "removal", False, None,
      "Inert without the tcnn build."),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "Inert on an Ascend image."),
    C("RUN pip install git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch", "custom_cuda_extension",
      "removal", True, None,
      "nvcc build fails and breaks the image build; replaced by the pure-torch hash grid."),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "Container-runtime device exposure; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES, and "
      "ASCEND_VISIBLE_DEVICES is normally set at docker run."),
])
