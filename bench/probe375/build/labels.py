"""Labels for probe375 (dense neural SLAM: NICE-SLAM, Point-SLAM, Co-SLAM, SplaTAM, MonoGS).

One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit torch_npu port).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: load the torch_npu backend before anything touches the device; needed on the "
               "torch_npu 2.1.0 line the port targets (autoload only from 2.5.1)")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised, so NPU cache "
                    "is simply not released; memory hygiene only, the run stays correct")
PIN_TORCH = "torch_npu has no wheel for this torch pin (1.8.1/1.11.0/2.1.0+ only); 2.1.0 pairs with torch_npu 2.1.0.postN"

# --------------------------------------------------------------------------- NICE-SLAM
E("niceslam_run", "run.py", "explicit_replacement", "cvg/nice-slam run.py (entry point, argparse, seed helper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "setup_seed() is never called (commented out in main) and torch.manual_seed already seeds the device "
      "generators; torch.cuda.manual_seed_all is a lazy no-op without CUDA, so nothing fails"),
])

E("niceslam_main", "src/NICE_SLAM.py", "explicit_replacement",
  "cvg/nice-slam src/NICE_SLAM.py (shared grids, spawn processes for tracker/mapper)", [
    C("            val.share_memory_()", "unsupported_op_workaround", "removal", False, None,
      "share_memory_ on a device tensor is a no-op on CUDA (sharing happens through CUDA IPC when mp.Process "
      "pickles it); msFmkTransplt's 2.7 list reports torch.Tensor.share_memory_ as UNSUPPORTED, so the porter "
      "drops the call. Whether torch_npu can rebuild NPU tensors in spawned processes is unconfirmed (README)"),
])

E("niceslam_tracker", "src/Tracker.py", "explicit_replacement", "cvg/nice-slam src/Tracker.py (camera tracking loop)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("niceslam_mapper", "src/Mapper.py", "explicit_replacement", "cvg/nice-slam src/Mapper.py (keyframe mapping loop)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("niceslam_datasets", "src/utils/datasets.py", "explicit_replacement",
  "cvg/nice-slam src/utils/datasets.py (Replica/TUM readers returning device tensors)", [
    C("def get_dataset(cfg, args, scale, device='cuda:0'):", "device_type", "replace", False,
      "def get_dataset(cfg, args, scale, device='npu:0'):",
      "default used only by NICE_SLAM.__init__, which takes len() of that reader and never indexes it; "
      "Tracker/Mapper pass the config device. A porter still changes the default"),
    C("def __init__(self, cfg, args, scale, device='cuda:0'", "device_type", "replace", False,
      "def __init__(self, cfg, args, scale, device='npu:0'",
      "dead default: every subclass forwards its device positionally"),
])

E("niceslam_decoder", "src/conv_onet/models/decoder.py", "explicit_replacement",
  "cvg/nice-slam src/conv_onet/models/decoder.py (MLP decoders over 3-D feature grids)", [
    C("device = f'cuda:{p.get_device()}'", "device_type", "replace", True, "device = f'npu:{p.get_device()}'",
      "hard-coded device string built from the input's index: every forward() would move raw to a CUDA device"),
])

E("niceslam_config", "configs/nice_slam.yaml", "explicit_replacement", "cvg/nice-slam configs/nice_slam.yaml", [
    C('=device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"',
      "tracking device: read by Tracker, dataset and Visualizer"),
    C('device: "cuda:0" # tracker and mapper', "device_type", "replace", True,
      'device: "npu:0" # tracker and mapper may use different NPUs',
      "mapping device: grids, decoders and map_location of the pretrained decoders follow it"),
])

E("niceslam_env", "environment.yaml", "explicit_replacement", "cvg/nice-slam environment.yaml (conda)", [
    C("=- python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 (the torch_npu line chosen) supports Python 3.8-3.11 only"),
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
      "CUDA runtime is inert on an Ascend host; dropping it is hygiene"),
    C("- pytorch=1.10.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0", PIN_TORCH),
    C("- torchvision=0.11.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must follow the torch pin or the environment does not solve"),
    C("- torchaudio=0.10.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "must follow the torch pin or the environment does not solve"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the Ascend backend itself (pip wheel, pairs with torch 2.1.0 / CANN 8.1.RC1)"),
])

# --------------------------------------------------------------------------- Point-SLAM
E("pointslam_neural_point", "src/neural_point.py", "explicit_replacement",
  "eriksandstroem/Point-SLAM src/neural_point.py (neural point cloud indexed with faiss-gpu)", [
    C("self.resource = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
      "faiss has no Ascend backend; GPU resources do not exist in faiss-cpu"),
    C("self.index = faiss.index_cpu_to_gpu(self.resource,", "unsupported_op_workaround", "replace", True,
      "self.index = (  # faiss has no Ascend backend: keep the IVF index on the host",
      "the IVF index stays on the host; the constructor on the following line is kept"),
    C("self.cuda_id,", "unsupported_op_workaround", "removal", True, None,
      "argument of the removed index_cpu_to_gpu call"),
    C("self.index.train(xb)", "tensor_to_device", "replace", True, "self.index.train(xb.cpu())",
      "faiss.contrib.torch_utils only handles CPU or CUDA tensors; an NPU tensor would be read through its "
      "device pointer as if it were host memory"),
    C("self.index.train(pts)", "tensor_to_device", "replace", True, "self.index.train(pts.cpu())",
      "same: host index needs host tensors"),
    C("self.index.add(pts)", "tensor_to_device", "replace", True, "self.index.add(pts.cpu())",
      "same: host index needs host tensors"),
    C("D, I = self.index.search(split_p.float(), self.nn_num)", "tensor_to_device", "replace", True,
      "D, I = [t.to(self.device) for t in self.index.search(split_p.float().cpu(), self.nn_num)]",
      "query on the host, bring distances/indices back to the NPU (they index NPU tensors afterwards)"),
    C("D, I = self.index.search(pts.float(), 1)", "tensor_to_device", "replace", True,
      "D, I = [t.to(self.device) for t in self.index.search(pts.float().cpu(), 1)]",
      "same; D is then combined with NPU z_vals in torch.where"),
])

E("pointslam_config", "configs/point_slam.yaml", "explicit_replacement", "eriksandstroem/Point-SLAM configs/point_slam.yaml", [
    C('=device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"', "tracking device"),
    C('device: "cuda:0" # tracker and mapper', "device_type", "replace", True,
      'device: "npu:0" # tracker and mapper may use different NPUs',
      "mapping device; also NeuralPointCloud.device"),
])

E("pointslam_env", "env.yaml", "explicit_replacement", "eriksandstroem/Point-SLAM env.yaml (conda)", [
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0", PIN_TORCH),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must follow the torch pin"),
    C("- pytorch-cuda=11.6", "import_torch_npu", "removal", True, None,
      "with torch re-pinned to 2.1.0 this CUDA 11.6 selector makes the environment unsolvable"),
    C("- faiss-gpu=1.7.3", "unsupported_op_workaround", "replace", True, "- faiss-cpu=1.7.3",
      "ported code uses a host index; faiss-gpu drags in the CUDA runtime and has no Ascend build"),
    C("- cudatoolkit=11.6", "import_torch_npu", "removal", False, None, "inert on an Ascend host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the Ascend backend itself"),
])

# --------------------------------------------------------------------------- Co-SLAM
E("coslam_main", "coslam.py", "explicit_replacement", "HengyiWang/Co-SLAM coslam.py (main class, tracking/BA loop)", [
    C("os.environ['TCNN_CUDA_ARCHITECTURES'] = '86'", "env_var", "removal", False, None,
      "only read by the tiny-cuda-nn JIT; inert once tcnn is replaced"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "torch.cuda.is_available() is False on an NPU host, so the whole SLAM would silently run on the CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant after torch.manual_seed (which seeds the accelerator generators too; unconfirmed for "
      "PrivateUse1 in the knowledge base); lazy no-op without CUDA"),
    C("dict = torch.load(load_path)", "tensor_to_device", "replace", False,
      "dict = torch.load(load_path, map_location=self.device)",
      "only checkpoints written on a CUDA host carry cuda storages; NPU-written ones reload fine"),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "data_loader = DataLoader(self.dataset, num_workers=self.config['data']['num_workers'], pin_memory=True, pin_memory_device='npu')",
      "without an explicit pin_memory_device the DataLoader may pin for CUDA or skip pinning; performance "
      "only, behaviour on torch_npu unconfirmed"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.device)",
      "torch.cuda.synchronize initialises CUDA and raises on a host without it"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also needed for the reported FPS to be right"),
])

E("coslam_encodings", "model/encodings.py", "kernel_rewrite",
  "HengyiWang/Co-SLAM model/encodings.py (tiny-cuda-nn HashGrid/OneBlob encodings)", [
    C("import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
      "from .torch_encodings import TorchEncoding  # pure-PyTorch HashGrid/OneBlob/Frequency",
      "tiny-cuda-nn is CUDA-only (fully fused kernels); the port re-implements the used encodings with torch ops"),
    C("embed = tcnn.Encoding(", "custom_cuda_extension", "replace", True,
      "embed = TorchEncoding(n_input_dims=input_dim, encoding_config=encoding_config, dtype=torch.float)",
      "same config dict, torch implementation; n_output_dims kept as attribute"),
])

E("coslam_decoder", "model/decoder.py", "kernel_rewrite", "HengyiWang/Co-SLAM model/decoder.py (SDF/colour MLPs)", [
    C("import tinycudann as tcnn", "custom_cuda_extension", "removal", True, None,
      "module import fails without tiny-cuda-nn even though the default config never builds a tcnn.Network"),
    C("return tcnn.Network(", "custom_cuda_extension", "replace", False,
      "raise NotImplementedError('tiny-cuda-nn FullyFusedMLP is CUDA-only; set decoder.tcnn_network: False')",
      "dead branch: the shipped configs set tcnn_network: False"),
    C("sdf_net = tcnn.Network(", "custom_cuda_extension", "replace", False,
      "raise NotImplementedError('tiny-cuda-nn FullyFusedMLP is CUDA-only; set decoder.tcnn_network: False')",
      "dead branch: the shipped configs set tcnn_network: False"),
])

E("coslam_config", "configs/Replica/replica.yaml", "explicit_replacement", "HengyiWang/Co-SLAM configs/Replica/replica.yaml", [])

E("coslam_requirements", "requirements.txt", "explicit_replacement", "HengyiWang/Co-SLAM requirements.txt", [
    C("torch==1.10.1", "import_torch_npu", "replace", True, "torch==2.1.0", PIN_TORCH),
    C("torchvision==0.11.2", "import_torch_npu", "replace", True, "torchvision==0.16.0", "must follow the torch pin"),
    C("=numpy", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12", "the Ascend backend itself"),
    C("git+https://github.com/NVlabs/tiny-cuda-nn/", "custom_cuda_extension", "removal", True, None,
      "building the tcnn bindings needs nvcc and a CUDA GPU; pip install fails on the NPU host"),
])

E("coslam_marching_cubes", "external/NumpyMarchingCubes/setup.py", "explicit_replacement",
  "HengyiWang/Co-SLAM external/NumpyMarchingCubes/setup.py (Cython/C++ CPU extension)", [])

# --------------------------------------------------------------------------- SplaTAM
E("splatam_main", "scripts/splatam.py", "explicit_replacement",
  "spla-tam/SplaTAM scripts/splatam.py (Gaussian-splatting RGB-D SLAM loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.meshgrid(torch.arange(width).cuda().float(),", "tensor_to_device", "replace", True,
      "x_grid, y_grid = torch.meshgrid(torch.arange(width).npu().float(),", "pixel grid for back-projection"),
    C("torch.arange(height).cuda().float(),", "tensor_to_device", "replace", True,
      "torch.arange(height).npu().float(),", "second operand of the same meshgrid"),
    C("pix_ones = torch.ones(height * width, 1).cuda().float()", "tensor_to_device", "replace", True,
      "pix_ones = torch.ones(height * width, 1).npu().float()", ""),
    C('=logit_opacities = torch.zeros((num_pts, 1), dtype=torch.float, device="cuda")', "device_type", "replace", True,
      'logit_opacities = torch.zeros((num_pts, 1), dtype=torch.float, device="npu")', ""),
    C("params[k] = torch.nn.Parameter(torch.tensor(v).cuda().float().contiguous().requires_grad_(True))",
      "tensor_to_device", "replace", True,
      "params[k] = torch.nn.Parameter(torch.tensor(v).npu().float().contiguous().requires_grad_(True))",
      "all Gaussian parameters and camera trajectory live on the device"),
    C("params[k] = torch.nn.Parameter(v.cuda().float().contiguous().requires_grad_(True))", "tensor_to_device",
      "replace", True, "params[k] = torch.nn.Parameter(v.npu().float().contiguous().requires_grad_(True))", ""),
    C("{'max_2D_radius': torch.zeros(params['means3D'].shape[0]).cuda().float(),", "tensor_to_device", "replace", True,
      "variables = {'max_2D_radius': torch.zeros(params['means3D'].shape[0]).npu().float(),", ""),
    C("'means2D_gradient_accum': torch.zeros(params['means3D'].shape[0]).cuda().float(),", "tensor_to_device",
      "replace", True, "'means2D_gradient_accum': torch.zeros(params['means3D'].shape[0]).npu().float(),", ""),
    C("'denom': torch.zeros(params['means3D'].shape[0]).cuda().float(),", "tensor_to_device", "replace", True,
      "'denom': torch.zeros(params['means3D'].shape[0]).npu().float(),", ""),
    C("'timestep': torch.zeros(params['means3D'].shape[0]).cuda().float()}", "tensor_to_device", "replace", True,
      "'timestep': torch.zeros(params['means3D'].shape[0]).npu().float()}", ""),
    C('curr_w2c = torch.eye(4, device="cuda").float()', "device_type", "replace", True,
      'curr_w2c = torch.eye(4, device="npu").float()', "add_new_gaussians"),
    C("variables['means2D_gradient_accum'] = torch.zeros(num_pts, device=\"cuda\").float()", "device_type", "replace",
      True, "variables['means2D_gradient_accum'] = torch.zeros(num_pts, device=\"npu\").float()", ""),
    C("variables['denom'] = torch.zeros(num_pts, device=\"cuda\").float()", "device_type", "replace", True,
      "variables['denom'] = torch.zeros(num_pts, device=\"npu\").float()", ""),
    C("variables['max_2D_radius'] = torch.zeros(num_pts, device=\"cuda\").float()", "device_type", "replace", True,
      "variables['max_2D_radius'] = torch.zeros(num_pts, device=\"npu\").float()", ""),
    C("new_timestep = time_idx * torch.ones(new_pt_cld.shape[0], device=\"cuda\").float()", "device_type", "replace",
      True, "new_timestep = time_idx * torch.ones(new_pt_cld.shape[0], device=\"npu\").float()", ""),
    C("new Gaussians start at 0.5 opacity", "device_type", "replace", True,
      'logit_opacities = torch.zeros((num_pts, 1), dtype=torch.float, device="npu")  # new Gaussians start at 0.5 opacity',
      "initialize_new_params"),
    C("params[k] = torch.nn.Parameter(torch.tensor(v, dtype=torch.float).cuda().contiguous().requires_grad_(True))",
      "tensor_to_device", "replace", True,
      "params[k] = torch.nn.Parameter(torch.tensor(v, dtype=torch.float).npu().contiguous().requires_grad_(True))", ""),
    C("params[k] = torch.nn.Parameter(v.float().cuda().contiguous().requires_grad_(True))", "tensor_to_device",
      "replace", True, "params[k] = torch.nn.Parameter(v.float().npu().contiguous().requires_grad_(True))", ""),
    C("params = {k: torch.tensor(params[k]).cuda().float().requires_grad_(True) for k in params.keys()}",
      "tensor_to_device", "replace", True,
      "params = {k: torch.tensor(params[k]).npu().float().requires_grad_(True) for k in params.keys()}",
      "checkpoint-resume path (load_checkpoint=True)"),
    C("variables['max_2D_radius'] = torch.zeros(params['means3D'].shape[0]).cuda().float()", "tensor_to_device",
      "replace", True, "variables['max_2D_radius'] = torch.zeros(params['means3D'].shape[0]).npu().float()",
      "checkpoint-resume path"),
    C("variables['means2D_gradient_accum'] = torch.zeros(params['means3D'].shape[0]).cuda().float()",
      "tensor_to_device", "replace", True,
      "variables['means2D_gradient_accum'] = torch.zeros(params['means3D'].shape[0]).npu().float()",
      "checkpoint-resume path"),
    C("variables['denom'] = torch.zeros(params['means3D'].shape[0]).cuda().float()", "tensor_to_device", "replace",
      True, "variables['denom'] = torch.zeros(params['means3D'].shape[0]).npu().float()", "checkpoint-resume path"),
    C("variables['timestep'] = torch.zeros(params['means3D'].shape[0]).cuda().float()", "tensor_to_device",
      "replace", True, "variables['timestep'] = torch.zeros(params['means3D'].shape[0]).npu().float()",
      "checkpoint-resume path"),
    C("curr_w2c = torch.eye(4).cuda().float()", "tensor_to_device", "replace", True,
      "curr_w2c = torch.eye(4).npu().float()", "keyframe selection before mapping"),
    C("curr_keyframe_w2c = torch.eye(4).cuda().float()", "tensor_to_device", "replace", True,
      "curr_keyframe_w2c = torch.eye(4).npu().float()", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("seed_everything(seed=experiment.config['seed'])", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "the Gaussian count changes every frame (dynamic shapes); msFmkTransplt advises jit_compile=False for "
      "dynamic shapes. Performance only"),
])

E("splatam_slam_helpers", "utils/slam_helpers.py", "explicit_replacement",
  "spla-tam/SplaTAM utils/slam_helpers.py (render variables, frame transforms)", [
    C("torch.zeros_like(params['means3D'], requires_grad=True, device=\"cuda\") + 0", "device_type", "replace", True,
      "'means2D': torch.zeros_like(params['means3D'], requires_grad=True, device=\"npu\") + 0",
      "screen-space gradient holder passed to the rasterizer"),
    C("='means2D': torch.zeros_like(transformed_pts, requires_grad=True, device=\"cuda\") + 0", "device_type",
      "replace", True, "'means2D': torch.zeros_like(transformed_pts, requires_grad=True, device=\"npu\") + 0", ""),
    C("depth_silhouette = torch.zeros((pts_3D.shape[0], 3)).cuda().float()", "tensor_to_device", "replace", True,
      "depth_silhouette = torch.zeros((pts_3D.shape[0], 3)).npu().float()", ""),
    C('device="cuda") + 0,', "device_type", "replace", True,
      "'means2D': torch.zeros_like(transformed_pts, requires_grad=True, device=\"npu\") + 0,",
      "depth+silhouette render variables"),
    C("rel_w2c = torch.eye(4).cuda().float()", "tensor_to_device", "replace", True,
      "rel_w2c = torch.eye(4).npu().float()", "runs every tracking/mapping iteration"),
    C("pts_ones = torch.ones(pts.shape[0], 1).cuda().float()", "tensor_to_device", "replace", True,
      "pts_ones = torch.ones(pts.shape[0], 1).npu().float()", ""),
])

E("splatam_recon_helpers", "utils/recon_helpers.py", "explicit_replacement",
  "spla-tam/SplaTAM utils/recon_helpers.py (rasterizer camera setup)", [
    C("w2c = torch.tensor(w2c).cuda().float()", "tensor_to_device", "replace", True,
      "w2c = torch.tensor(w2c).npu().float()", "view matrix handed to the (ported) rasterizer"),
    C("[0.0, 0.0, 1.0, 0.0]]).cuda().float()", "tensor_to_device", "replace", True,
      "[0.0, 0.0, 1.0, 0.0]]).npu().float().unsqueeze(0).transpose(1, 2)", "projection matrix"),
    C('bg=torch.tensor([0, 0, 0], dtype=torch.float32, device="cuda"),', "device_type", "replace", True,
      'bg=torch.tensor([0, 0, 0], dtype=torch.float32, device="npu"),', "background colour tensor"),
])

E("splatam_slam_external", "utils/slam_external.py", "explicit_replacement",
  "spla-tam/SplaTAM utils/slam_external.py (Dynamic3DGaussians densify/prune, SSIM)", [
    C("rot = torch.zeros((q.size(0), 3, 3), device='cuda')", "device_type", "replace", True,
      "rot = torch.zeros((q.size(0), 3, 3), device='npu')", "build_rotation runs every iteration"),
    C("if img1.is_cuda:", "device_type", "replace", True, "if img1.is_npu:",
      "False for NPU images, so the SSIM window would stay on the CPU and conv2d would mix devices"),
    C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", True,
      "window = window.npu(img1.get_device())", ""),
    C("padded_grad = torch.zeros(num_pts, device=\"cuda\")", "device_type", "replace", True,
      "padded_grad = torch.zeros(num_pts, device=\"npu\")", "densify (used when use_gaussian_splatting_densification)"),
    C("means = torch.zeros((stds.size(0), 3), device=\"cuda\")", "device_type", "replace", True,
      "means = torch.zeros((stds.size(0), 3), device=\"npu\")", ""),
    C("variables['means2D_gradient_accum'] = torch.zeros(num_pts, device=\"cuda\")", "device_type", "replace", True,
      "variables['means2D_gradient_accum'] = torch.zeros(num_pts, device=\"npu\")", ""),
    C("variables['denom'] = torch.zeros(num_pts, device=\"cuda\")", "device_type", "replace", True,
      "variables['denom'] = torch.zeros(num_pts, device=\"npu\")", ""),
    C("variables['max_2D_radius'] = torch.zeros(num_pts, device=\"cuda\")", "device_type", "replace", True,
      "variables['max_2D_radius'] = torch.zeros(num_pts, device=\"npu\")", ""),
    C("dtype=torch.bool, device=\"cuda\")))", "device_type", "replace", True,
      "to_remove = torch.cat((to_split, torch.zeros(n * to_split.sum(), dtype=torch.bool, device=\"npu\")))", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("splatam_config", "configs/replica/splatam.py", "explicit_replacement", "spla-tam/SplaTAM configs/replica/splatam.py", [
    C('primary_device = "cuda:0"', "device_type", "replace", True, 'primary_device = "npu:0"',
      "becomes torch.device(config['primary_device']) for the dataset and the SLAM state"),
])

E("splatam_launcher", "bash_scripts/replica_eval_all.bash", "explicit_replacement",
  "spla-tam/SplaTAM bash_scripts (multi-scene launcher; synthetic)", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "needed unless the shell or container already exports the CANN environment"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", False, "npu-smi info",
      "informational listing only; the script has no set -e"),
    C("CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} SCENE_NUM=${SCENE_NUM} SEED=${SEED} \\",
      "ignored by the Ascend runtime: every scene would silently land on npu:0 (4 concurrent runs on one card)"),
])

E("splatam_requirements", "requirements.txt", "explicit_replacement", "spla-tam/SplaTAM requirements.txt", [
    C("git+https://github.com/JonathonLuiten/diff-gaussian-rasterization-w-depth.git", "custom_cuda_extension",
      "replace", True, "./third_party/diff-gaussian-rasterization-w-depth-npu",
      "the CUDA rasterizer cannot be built without nvcc; the port installs an Ascend build that keeps the "
      "diff_gaussian_rasterization module name"),
])

# --------------------------------------------------------------------------- MonoGS
E("monogs_slam", "slam.py", "explicit_replacement", "muskie82/MonoGS slam.py (entry point, frontend/backend processes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created/recorded without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", ""),
    C('self.background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      'self.background = torch.tensor(bg_color, dtype=torch.float32, device="npu")', "shared by frontend and backend"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; needed before elapsed_time"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "Log(\"Peak GPU memory: {:.2f} GB\".format(torch.npu.max_memory_allocated() / 1024 ** 3), tag=\"Eval\")",
      "log line only: torch.cuda.max_memory_allocated silently reports 0 without CUDA"),
])

E("monogs_backend", "utils/slam_backend.py", "explicit_replacement", "muskie82/MonoGS utils/slam_backend.py (mapping process)", [
    C('self.device = "cuda"', "device_type", "replace", False, 'self.device = "npu"',
      "attribute is never read in this module"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("gt_image = viewpoint_cam.original_image.cuda()", "tensor_to_device", "replace", True,
      "gt_image = viewpoint_cam.original_image.npu()", "color refinement (eval mode)"),
])

E("monogs_camera_utils", "utils/camera_utils.py", "explicit_replacement", "muskie82/MonoGS utils/camera_utils.py (Camera module)", [
    C('device="cuda:0",', "device_type", "replace", True, 'device="npu:0",',
      "init_from_gui builds cameras without passing a device, so the default is live"),
])

E("monogs_mp_utils", "utils/multiprocessing_utils.py", "explicit_replacement",
  "muskie82/MonoGS utils/multiprocessing_utils.py (FakeQueue, clone_obj)", [])

E("monogs_gaussian_model", "gaussian_splatting/scene/gaussian_model.py", "explicit_replacement",
  "muskie82/MonoGS gaussian_splatting/scene/gaussian_model.py (3DGS model, simple-knn init)", [
    C("from simple_knn._C import distCUDA2", "custom_cuda_extension", "replace", True,
      "from gaussian_splatting.utils.knn_utils import dist_knn2 as distCUDA2  # torch cdist/topk, no simple-knn",
      "simple-knn is a CUDA extension; mean 3-NN distance is cheap to express with torch ops"),
    C('self._xyz = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._xyz = torch.empty(0, device="npu")', ""),
    C('self._features_dc = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._features_dc = torch.empty(0, device="npu")', ""),
    C('self._features_rest = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._features_rest = torch.empty(0, device="npu")', ""),
    C('self._scaling = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._scaling = torch.empty(0, device="npu")', ""),
    C('self._rotation = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._rotation = torch.empty(0, device="npu")', ""),
    C('self._opacity = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self._opacity = torch.empty(0, device="npu")', ""),
    C('self.max_radii2D = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self.max_radii2D = torch.empty(0, device="npu")', ""),
    C('self.xyz_gradient_accum = torch.empty(0, device="cuda")', "device_type", "replace", True,
      'self.xyz_gradient_accum = torch.empty(0, device="npu")', ""),
    C("fused_point_cloud = torch.from_numpy(np.asarray(pcd.points)).float().cuda()", "tensor_to_device", "replace",
      True, "fused_point_cloud = torch.from_numpy(np.asarray(pcd.points)).float().npu()", ""),
    C("fused_color = RGB2SH(torch.from_numpy(np.asarray(pcd.colors)).float().cuda())", "tensor_to_device",
      "replace", True, "fused_color = RGB2SH(torch.from_numpy(np.asarray(pcd.colors)).float().npu())", ""),
    C("=.cuda()", "tensor_to_device", "replace", True, ".npu()", "tail of a multi-line features chain"),
    C("distCUDA2(torch.from_numpy(np.asarray(pcd.points)).float().cuda()),", "tensor_to_device", "replace", True,
      "distCUDA2(torch.from_numpy(np.asarray(pcd.points)).float().npu()),",
      "call site keeps the distCUDA2 name through the import alias"),
    C('rots = torch.zeros((fused_point_cloud.shape[0], 4), device="cuda")', "device_type", "replace", True,
      'rots = torch.zeros((fused_point_cloud.shape[0], 4), device="npu")', ""),
    C('(fused_point_cloud.shape[0], 1), dtype=torch.float, device="cuda"', "device_type", "replace", True,
      '(fused_point_cloud.shape[0], 1), dtype=torch.float, device="npu"', ""),
    C('self.xyz_gradient_accum = torch.zeros((self._xyz.shape[0], 1), device="cuda")', "device_type", "replace", True,
      'self.xyz_gradient_accum = torch.zeros((self._xyz.shape[0], 1), device="npu")', ""),
    C('self.denom = torch.zeros((self._xyz.shape[0], 1), device="cuda")', "device_type", "replace", True,
      'self.denom = torch.zeros((self._xyz.shape[0], 1), device="npu")', ""),
    C('self.xyz_gradient_accum = torch.zeros((self.get_xyz.shape[0], 1), device="cuda")', "device_type", "replace",
      True, 'self.xyz_gradient_accum = torch.zeros((self.get_xyz.shape[0], 1), device="npu")', ""),
    C('self.denom = torch.zeros((self.get_xyz.shape[0], 1), device="cuda")', "device_type", "replace", True,
      'self.denom = torch.zeros((self.get_xyz.shape[0], 1), device="npu")', ""),
    C('self.max_radii2D = torch.zeros((self.get_xyz.shape[0]), device="cuda")', "device_type", "replace", True,
      'self.max_radii2D = torch.zeros((self.get_xyz.shape[0]), device="npu")', ""),
    C('padded_grad = torch.zeros((n_init_points), device="cuda")', "device_type", "replace", True,
      'padded_grad = torch.zeros((n_init_points), device="npu")', ""),
    C('means = torch.zeros((stds.size(0), 3), device="cuda")', "device_type", "replace", True,
      'means = torch.zeros((stds.size(0), 3), device="npu")', ""),
    C('torch.zeros(N * selected_pts_mask.sum(), device="cuda", dtype=bool),', "device_type", "replace", True,
      'torch.zeros(N * selected_pts_mask.sum(), device="npu", dtype=bool),', ""),
])

E("monogs_renderer", "gaussian_splatting/gaussian_renderer/__init__.py", "explicit_replacement",
  "muskie82/MonoGS gaussian_splatting/gaussian_renderer/__init__.py (rasterizer call)", [
    C('pc.get_xyz, dtype=pc.get_xyz.dtype, requires_grad=True, device="cuda"', "device_type", "replace", True,
      'pc.get_xyz, dtype=pc.get_xyz.dtype, requires_grad=True, device="npu"',
      "screen-space means holder; the rasterizer import keeps its module name (Ascend build, see setup.py)"),
])

E("monogs_rasterizer_setup", "submodules/diff-gaussian-rasterization/setup.py", "kernel_rewrite",
  "muskie82/MonoGS submodules/diff-gaussian-rasterization/setup.py (CUDA rasterizer build)", [
    C("from torch.utils.cpp_extension import CUDAExtension, BuildExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/ACL include and library paths"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "no nvcc on the NPU host"),
    C('"cuda_rasterizer/rasterizer_impl.cu",', "custom_cuda_extension", "replace", True,
      '"npu_rasterizer/rasterizer_impl.cpp",', "kernels rewritten in Ascend C (or torch ops)"),
    C('"cuda_rasterizer/forward.cu",', "custom_cuda_extension", "replace", True, '"npu_rasterizer/forward.cpp",', ""),
    C('"cuda_rasterizer/backward.cu",', "custom_cuda_extension", "replace", True, '"npu_rasterizer/backward.cpp",', ""),
    C('"rasterize_points.cu",', "custom_cuda_extension", "replace", True, '"rasterize_points.cpp",',
      "pybind entry keeps its Python-facing names"),
    C('extra_compile_args={"nvcc":', "custom_cuda_extension", "replace", False,
      'extra_compile_args={"cxx": ["-I" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "third_party/glm/")]})',
      "nvcc flags are ignored once no .cu source is left; move the glm include only if the port still uses glm"),
])

E("monogs_simple_knn_setup", "submodules/simple-knn/setup.py", "explicit_replacement",
  "muskie82/MonoGS submodules/simple-knn/setup.py (CUDA KNN build, dropped by the port)", [])

E("monogs_env", "environment.yml", "explicit_replacement", "muskie82/MonoGS environment.yml (conda)", [
    C("- python=3.7.13", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1.0 needs Python 3.8-3.11"),
    C("- cudatoolkit=11.6", "import_torch_npu", "removal", False, None, "inert on an Ascend host"),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0", PIN_TORCH),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0", "must follow the torch pin"),
    C("- torchaudio=0.12.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0", "must follow the torch pin"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12", "the Ascend backend itself"),
    C("- submodules/simple-knn", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build fails without nvcc; the port replaces distCUDA2 with torch ops"),
])
