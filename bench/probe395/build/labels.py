"""Labels for probe395 (dynamic-scene Gaussian splatting and 4-D neural fields, CUDA -> Ascend NPU)."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu call; the project's pinned torch "
               "(1.x/2.0 era) predates torch_npu 2.5.1 autoload, so the port pins torch 2.1 + torch_npu and imports it")

# ---------------------------------------------------------------- Deformable-3DGS
E("d3dgs_train", "train.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians train.py (3DGS training loop + deform MLP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      'background = torch.tensor(bg_color, dtype=torch.float32, device="npu")',
      "background colour tensor is passed to the rasterizer with NPU tensors; a CUDA device string fails on an NPU host"),
    C("iter_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "iter_start = torch.npu.Event(enable_timing=True)",
      "CUDA event .record() initialises CUDA and raises without a GPU; elapsed_time feeds the iter_time log"),
    C("iter_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "iter_end = torch.npu.Event(enable_timing=True)", "same as iter_start"),
    C("torch.randn(1, 1, device='cuda')", "device_type", "replace", True,
      "ast_noise = 0 if dataset.is_blender else torch.randn(1, 1, device='npu').expand(N, -1) * time_interval * smooth_term(iteration)",
      "annealed smooth-training noise is added to an NPU time tensor"),
    C("gt_image = viewpoint_cam.original_image.cuda()", "tensor_to_device", "replace", True,
      "gt_image = viewpoint_cam.original_image.npu()", "ground-truth image must live next to the rendered image"),
    C("torch.cuda.empty_cache()  # evaluation renders", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # evaluation renders full-res images, free cached blocks first",
      "torch.cuda.empty_cache is a no-op when CUDA is not initialised; NPU cache release is memory hygiene only"),
    C('images = torch.tensor([], device="cuda")', "device_type", "replace", True,
      'images = torch.tensor([], device="npu")', "concatenated with NPU renders via torch.cat"),
    C('gts = torch.tensor([], device="cuda")', "device_type", "replace", True,
      'gts = torch.tensor([], device="npu")', "concatenated with NPU ground truth via torch.cat"),
    C('viewpoint.original_image.to("cuda")', "tensor_to_device", "replace", True,
      'gt_image = torch.clamp(viewpoint.original_image.to("npu"), 0.0, 1.0)', "test-view ground truth"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-evaluation cache release; no-op on a CUDA-less host, performance/memory only"),
])

E("d3dgs_render", "render.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians render.py (test-view rendering, FPS timing, time/view interpolation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.synchronize()  # wait for pending", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for pending kernels before timing",
      "torch.cuda.synchronize initialises CUDA and raises on a CUDA-less host; also the FPS number would be host-side only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "end-of-frame sync for the FPS measurement"),
    C("fid = torch.Tensor([t / (frame - 1)]).cuda()", "tensor_to_device", "replace", True,
      "fid = torch.Tensor([t / (frame - 1)]).npu()", "time input for the deform MLP in time interpolation"),
    C('background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      'background = torch.tensor(bg_color, dtype=torch.float32, device="npu")', "rasterizer background"),
])

E("d3dgs_deform_model", "scene/deform_model.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians scene/deform_model.py (deform MLP wrapper, optimizer, checkpoint I/O)", [
    C("self.deform = DeformNetwork(is_blender=is_blender, is_6dof=is_6dof).cuda()", "tensor_to_device", "replace", True,
      "self.deform = DeformNetwork(is_blender=is_blender, is_6dof=is_6dof).npu()",
      "deform MLP must sit on the NPU with the Gaussians it displaces"),
])

E("d3dgs_time_utils", "utils/time_utils.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians utils/time_utils.py (positional embedder + DeformNetwork)", [])

E("d3dgs_renderer", "gaussian_renderer/__init__.py", "kernel_rewrite",
  "ingra14m/Deformable-3D-Gaussians gaussian_renderer/__init__.py (render() over the depth-diff-gaussian-rasterization CUDA extension)", [
    C("from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer", "custom_cuda_extension",
      "replace", True,
      "from diff_gaussian_rasterization_npu import GaussianRasterizationSettings, GaussianRasterizer",
      "the tile rasterizer is a CUDA-only extension (forward/backward .cu kernels); it needs an Ascend C (or pure torch) "
      "rasterizer with the same Python interface"),
    C('requires_grad=True, device="cuda") + 0', "device_type", "replace", True,
      'screenspace_points = torch.zeros_like(pc.get_xyz, dtype=pc.get_xyz.dtype, requires_grad=True, device="npu") + 0',
      "screen-space means placeholder whose .grad drives densification; must be on the NPU"),
])

E("d3dgs_loss_utils", "utils/loss_utils.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians utils/loss_utils.py (L1, SSIM, KL sparsity)", [
    C("rho = torch.tensor([rho] * len(rho_hat)).cuda()", "tensor_to_device", "replace", True,
      "rho = torch.tensor([rho] * len(rho_hat)).npu()", "combined with rho_hat computed from NPU activations"),
    C("if img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:",
      "on NPU is_cuda is False so the move is skipped; window.type_as(img1) right below may still move it "
      "(type string torch.npu.FloatTensor) - unconfirmed, so not marked required"),
    C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", True,
      "window = window.npu(img1.get_device())",
      "once the guard is ported this line runs and .cuda() would raise on an NPU host"),
])

E("d3dgs_arguments", "arguments/__init__.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians arguments/__init__.py (ParamGroup CLI groups)", [
    C('self.data_device = "cuda"', "device_type", "replace", True, 'self.data_device = "npu"',
      "default --data_device; Camera moves every image to torch.device(data_device)"),
])

E("d3dgs_environment", "environment.yml", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians environment.yml (conda env with the two CUDA submodules)", [
    C("- cudatoolkit=11.6", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime/toolkit for the CUDA torch build and nvcc; useless on an Ascend host, whether it even resolves on "
      "aarch64 is unconfirmed"),
    C("- python=3.7.13", "import_torch_npu", "replace", True, "- python=3.8",
      "torch 2.1 / torch_npu 2.1.0 need Python >= 3.8"),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu exists for torch 1.12; the torch pin must equal the torch_npu wheel's torch version"),
    C("- torchaudio=0.12.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "pinned to torch 1.12.1; conflicts with the new torch pin"),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "pinned to torch 1.12.1; 0.16.0 pairs with torch 2.1"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the Ascend adapter itself (wheel version = torch version + postN)"),
    C("- submodules/depth-diff-gaussian-rasterization", "custom_cuda_extension", "replace", True,
      "- submodules/depth-diff-gaussian-rasterization-npu",
      "CUDAExtension cannot build without nvcc; install the Ascend C port instead"),
    C("- submodules/simple-knn", "custom_cuda_extension", "removal", True, None,
      "simple-knn is a CUDA-only extension; the port computes the 3-NN distance with torch ops instead"),
])

E("d3dgs_raster_setup", "submodules/depth-diff-gaussian-rasterization/setup.py", "kernel_rewrite",
  "ingra14m/depth-diff-gaussian-rasterization setup.py (CUDAExtension build of the tile rasterizer)", [
    C("from torch.utils.cpp_extension import CUDAExtension, BuildExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu / ACL include and library paths"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(", "CUDAExtension needs nvcc"),
    C('"cuda_rasterizer/rasterizer_impl.cu",', "custom_cuda_extension", "replace", True,
      '"npu_rasterizer/rasterizer_impl.cpp",', "host-side tiling/sorting code has to be rewritten for Ascend C"),
    C('"cuda_rasterizer/forward.cu",', "custom_cuda_extension", "replace", True,
      '"npu_rasterizer/forward_kernel.cpp",', "forward preprocess + per-tile alpha blending kernels"),
    C('"cuda_rasterizer/backward.cu",', "custom_cuda_extension", "replace", True,
      '"npu_rasterizer/backward_kernel.cpp",', "backward kernels"),
    C('"rasterize_points.cu",', "custom_cuda_extension", "replace", True, '"rasterize_points.cpp",',
      "torch binding layer written against CUDA streams/allocators"),
    C('extra_compile_args={"nvcc":', "custom_cuda_extension", "replace", True,
      'extra_compile_args={"cxx": ["-I" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "third_party/glm/")]})',
      "nvcc flag group has no meaning for the NPU build"),
])

E("d3dgs_metrics", "metrics.py", "explicit_replacement",
  "ingra14m/Deformable-3D-Gaussians metrics.py (SSIM/PSNR/LPIPS over rendered test views)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("renders.append(tf.to_tensor(render).unsqueeze(0)[:, :3, :, :].cuda())", "tensor_to_device", "replace", True,
      "renders.append(tf.to_tensor(render).unsqueeze(0)[:, :3, :, :].npu())", "rendered views"),
    C("gts.append(tf.to_tensor(gt).unsqueeze(0)[:, :3, :, :].cuda())", "tensor_to_device", "replace", True,
      "gts.append(tf.to_tensor(gt).unsqueeze(0)[:, :3, :, :].npu())", "ground-truth views"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "LPIPS network device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises without CUDA"),
])

# ---------------------------------------------------------------- 4DGaussians (hustvl)
E("fdgs_train", "train.py", "explicit_replacement",
  "hustvl/4DGaussians train.py (coarse/fine two-stage training with HexPlane deformation field)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      'background = torch.tensor(bg_color, dtype=torch.float32, device="npu")', "rasterizer background"),
    C("iter_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "iter_start = torch.npu.Event(enable_timing=True)", "CUDA event record() raises without a GPU"),
    C("iter_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "iter_end = torch.npu.Event(enable_timing=True)", "same as iter_start"),
    C("gt_image = viewpoint_cam.original_image.cuda()", "tensor_to_device", "replace", True,
      "gt_image = viewpoint_cam.original_image.npu()", "ground truth for D-NeRF/HyperNeRF/DyNeRF cameras"),
    C("gt_image = viewpoint_cam['image'].cuda()", "tensor_to_device", "replace", True,
      "gt_image = viewpoint_cam['image'].npu()", "ground truth for the PanopticSports loader"),
    C("torch.cuda.empty_cache()  # rendering the test views", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # rendering the test views allocates a lot",
      "no-op on a CUDA-less host; memory hygiene only"),
    C('gt_image = torch.clamp(viewpoint["image"].to("cuda"), 0.0, 1.0)', "tensor_to_device", "replace", True,
      'gt_image = torch.clamp(viewpoint["image"].to("npu"), 0.0, 1.0)', "evaluation ground truth (Panoptic)"),
    C('gt_image = torch.clamp(viewpoint.original_image.to("cuda"), 0.0, 1.0)', "tensor_to_device", "replace", True,
      'gt_image = torch.clamp(viewpoint.original_image.to("npu"), 0.0, 1.0)', "evaluation ground truth"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-evaluation cache release; memory hygiene only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above should also seed the PrivateUse1 (NPU) generator in recent torch; "
      "unconfirmed for torch 2.1, so not marked required"),
    C("torch.cuda.empty_cache()  # start from a clean", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # start from a clean caching allocator", "no-op at start-up either way"),
])

E("fdgs_gaussian_model", "scene/gaussian_model.py", "explicit_replacement",
  "hustvl/4DGaussians scene/gaussian_model.py (Gaussian parameters, densify/prune, HexPlane regularisers)", [
    C("from simple_knn._C import distCUDA2", "custom_cuda_extension", "replace", True,
      "from utils.knn_utils import dist_knn3 as distCUDA2",
      "simple-knn is a CUDA-only extension (mean squared distance to the 3 nearest neighbours); the port uses a chunked torch.cdist/topk helper"),
    C("dist2 = torch.clamp_min(distCUDA2(", "custom_cuda_extension", "replace", True,
      "dist2 = torch.clamp_min(distCUDA2(torch.from_numpy(np.asarray(pcd.points)).float().npu()), 0.0000001)",
      "initial scales from the 3-NN distance: input moved to the NPU and served by the torch replacement"),
    C('fused_point_cloud = torch.tensor(np.asarray(pcd.points)).float().cuda()', "tensor_to_device", "replace", True,
      'fused_point_cloud = torch.tensor(np.asarray(pcd.points)).float().npu()', 'initial point cloud -> Gaussian means'),
    C('fused_color = RGB2SH(torch.tensor(np.asarray(pcd.colors)).float().cuda())', "tensor_to_device", "replace", True,
      'fused_color = RGB2SH(torch.tensor(np.asarray(pcd.colors)).float().npu())', 'SH DC colour from point colours'),
    C('features = torch.zeros((fused_color.shape[0], 3, (self.max_sh_degree + 1) ** 2)).float().cuda()', "tensor_to_device", "replace", True,
      'features = torch.zeros((fused_color.shape[0], 3, (self.max_sh_degree + 1) ** 2)).float().npu()', 'SH feature buffer'),
    C('rots = torch.zeros((fused_point_cloud.shape[0], 4), device="cuda")', "device_type", "replace", True,
      'rots = torch.zeros((fused_point_cloud.shape[0], 4), device="npu")', 'identity quaternions'),
    C('opacities = inverse_sigmoid(0.1 * torch.ones((fused_point_cloud.shape[0], 1), dtype=torch.float, device="cuda"))', "device_type", "replace", True,
      'opacities = inverse_sigmoid(0.1 * torch.ones((fused_point_cloud.shape[0], 1), dtype=torch.float, device="npu"))', 'initial opacities'),
    C('self._deformation = self._deformation.to("cuda")', "tensor_to_device", "replace", True,
      'self._deformation = self._deformation.to("npu")', 'HexPlane deformation field moved next to the Gaussians'),
    C('self.max_radii2D = torch.zeros((self.get_xyz.shape[0]), device="cuda")', "device_type", "replace", True,
      'self.max_radii2D = torch.zeros((self.get_xyz.shape[0]), device="npu")', 'screen-space radius accumulator'),
    C('self._deformation_table = torch.gt(torch.ones((self.get_xyz.shape[0]), device="cuda"), 0)', "device_type", "replace", True,
      'self._deformation_table = torch.gt(torch.ones((self.get_xyz.shape[0]), device="npu"), 0)', 'per-point deformation mask'),
    C('self.xyz_gradient_accum = torch.zeros((self.get_xyz.shape[0], 1), device="cuda")', "device_type", "replace", True,
      'self.xyz_gradient_accum = torch.zeros((self.get_xyz.shape[0], 1), device="npu")', 'densification gradient accumulator'),
    C('self.denom = torch.zeros((self.get_xyz.shape[0], 1), device="cuda")', "device_type", "replace", True,
      'self.denom = torch.zeros((self.get_xyz.shape[0], 1), device="npu")', 'densification counter'),
    C('self._deformation_accum = torch.zeros((self.get_xyz.shape[0], 3), device="cuda")', "device_type", "replace", True,
      'self._deformation_accum = torch.zeros((self.get_xyz.shape[0], 3), device="npu")', 'deformation magnitude accumulator'),
    C('weight_dict = torch.load(os.path.join(path, "deformation.pth"), map_location="cuda")', "device_type", "replace", True,
      'weight_dict = torch.load(os.path.join(path, "deformation.pth"), map_location="npu")', "map_location='cuda' raises on a host without CUDA"),
    C('self._deformation_table = torch.gt(torch.ones((num_pts), device="cuda"), 0)', "device_type", "replace", True,
      'self._deformation_table = torch.gt(torch.ones((num_pts), device="npu"), 0)', 'deformation mask rebuilt on load'),
    C('self._deformation_accum = torch.zeros((num_pts, 3), device="cuda")', "device_type", "replace", True,
      'self._deformation_accum = torch.zeros((num_pts, 3), device="npu")', 'deformation accumulator rebuilt on load'),
    C('self._deformation_table = torch.load(os.path.join(path, "deformation_table.pth"), map_location="cuda")', "device_type", "replace", True,
      'self._deformation_table = torch.load(os.path.join(path, "deformation_table.pth"), map_location="npu")', "map_location='cuda' raises on a host without CUDA"),
    C('self._deformation_accum = torch.load(os.path.join(path, "deformation_accum.pth"), map_location="cuda")', "device_type", "replace", True,
      'self._deformation_accum = torch.load(os.path.join(path, "deformation_accum.pth"), map_location="npu")', "map_location='cuda' raises on a host without CUDA"),
    C('self.max_radii2D = torch.zeros((num_pts), device="cuda")', "device_type", "replace", True,
      'self.max_radii2D = torch.zeros((num_pts), device="npu")', 'radius accumulator rebuilt on load'),
    C('self._xyz = nn.Parameter(torch.tensor(xyz, dtype=torch.float, device="cuda").requires_grad_(True))', "device_type", "replace", True,
      'self._xyz = nn.Parameter(torch.tensor(xyz, dtype=torch.float, device="npu").requires_grad_(True))', 'means from PLY'),
    C('self._features_dc = nn.Parameter(torch.tensor(features_dc, dtype=torch.float, device="cuda").transpose(1, 2).contiguous().requires_grad_(True))', "device_type", "replace", True,
      'self._features_dc = nn.Parameter(torch.tensor(features_dc, dtype=torch.float, device="npu").transpose(1, 2).contiguous().requires_grad_(True))', 'SH DC from PLY'),
    C('self._features_rest = nn.Parameter(torch.tensor(features_extra, dtype=torch.float, device="cuda").transpose(1, 2).contiguous().requires_grad_(True))', "device_type", "replace", True,
      'self._features_rest = nn.Parameter(torch.tensor(features_extra, dtype=torch.float, device="npu").transpose(1, 2).contiguous().requires_grad_(True))', 'SH rest from PLY'),
    C('self._opacity = nn.Parameter(torch.tensor(opacities, dtype=torch.float, device="cuda").requires_grad_(True))', "device_type", "replace", True,
      'self._opacity = nn.Parameter(torch.tensor(opacities, dtype=torch.float, device="npu").requires_grad_(True))', 'opacity from PLY'),
    C('self._scaling = nn.Parameter(torch.tensor(scales, dtype=torch.float, device="cuda").requires_grad_(True))', "device_type", "replace", True,
      'self._scaling = nn.Parameter(torch.tensor(scales, dtype=torch.float, device="npu").requires_grad_(True))', 'scales from PLY'),
    C('self._rotation = nn.Parameter(torch.tensor(rots, dtype=torch.float, device="cuda").requires_grad_(True))', "device_type", "replace", True,
      'self._rotation = nn.Parameter(torch.tensor(rots, dtype=torch.float, device="npu").requires_grad_(True))', 'rotations from PLY'),
    C('self.xyz_gradient_accum = torch.zeros((n_points, 1), device="cuda")', "device_type", "replace", True,
      'self.xyz_gradient_accum = torch.zeros((n_points, 1), device="npu")', 'accumulators reset after densification'),
    C('self._deformation_accum = torch.zeros((n_points, 3), device="cuda")', "device_type", "replace", True,
      'self._deformation_accum = torch.zeros((n_points, 3), device="npu")', 'accumulators reset after densification'),
    C('self.denom = torch.zeros((n_points, 1), device="cuda")', "device_type", "replace", True,
      'self.denom = torch.zeros((n_points, 1), device="npu")', 'accumulators reset after densification'),
    C('self.max_radii2D = torch.zeros((n_points), device="cuda")', "device_type", "replace", True,
      'self.max_radii2D = torch.zeros((n_points), device="npu")', 'accumulators reset after densification'),
    C('padded_grad = torch.zeros((n_init_points), device="cuda")', "device_type", "replace", True,
      'padded_grad = torch.zeros((n_init_points), device="npu")', 'padded gradient for split selection'),
    C('means = torch.zeros((stds.size(0), 3), device="cuda")', "device_type", "replace", True,
      'means = torch.zeros((stds.size(0), 3), device="npu")', 'sampling means for split Gaussians'),
    C('prune_filter = torch.cat((selected_pts_mask, torch.zeros(N * selected_pts_mask.sum(), device="cuda", dtype=bool)))', "device_type", "replace", True,
      'prune_filter = torch.cat((selected_pts_mask, torch.zeros(N * selected_pts_mask.sum(), device="npu", dtype=bool)))', 'prune filter concatenated with an NPU mask'),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after pruning; no-op without CUDA, NPU cache release is memory hygiene only"),
])

E("fdgs_general_utils", "utils/general_utils.py", "explicit_replacement",
  "hustvl/4DGaussians utils/general_utils.py (lr schedule, covariance helpers, safe_state)", [
    C('uncertainty = torch.zeros((L.shape[0], 6), dtype=torch.float, device="cuda")', "device_type", "replace", True,
      'uncertainty = torch.zeros((L.shape[0], 6), dtype=torch.float, device="npu")',
      "packed covariance filled from NPU tensors (compute_cov3D_python path)"),
    C("R = torch.zeros((q.size(0), 3, 3), device='cuda')", "device_type", "replace", True,
      "R = torch.zeros((q.size(0), 3, 3), device='npu')", "rotation matrices filled from NPU quaternions"),
    C('L = torch.zeros((s.shape[0], 3, 3), dtype=torch.float, device="cuda")', "device_type", "replace", True,
      'L = torch.zeros((s.shape[0], 3, 3), dtype=torch.float, device="npu")', "scale matrices"),
    C('torch.cuda.set_device(torch.device("cuda:0"))', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(torch.device("npu:0"))', "raises without CUDA; pins the process to the first NPU"),
])

E("fdgs_script", "scripts/train_dnerf.sh", "explicit_replacement",
  "hustvl/4DGaussians scripts/train_dnerf.sh (two-GPU parallel launcher for the D-NeRF scenes)", [
    C("=exp_name1=$1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the container/profile, so not marked required"),
    C("--expname \"$exp_name1/lego\"", "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/lego --port 6068 --expname "$exp_name1/lego" --configs arguments/dnerf/lego.py &',
      "device 0 is the default anyway (the export lives in the background subshell), so this one only matters for consistency"),
    C("--expname \"$exp_name1/bouncingballs\"", "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/bouncingballs --port 6266 --expname "$exp_name1/bouncingballs" --configs arguments/dnerf/bouncingballs.py &',
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: the second job silently lands on NPU 0 next to the first"),
    C("--expname \"$exp_name1/jumpingjacks\"", "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/jumpingjacks --port 6069 --expname "$exp_name1/jumpingjacks" --configs arguments/dnerf/jumpingjacks.py &',
      "device 0 is the default; consistency only"),
    C("--expname \"$exp_name1/trex\"", "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/trex --port 6070 --expname "$exp_name1/trex" --configs arguments/dnerf/trex.py &',
      "second device selection ignored on NPU"),
    C("--expname \"$exp_name1/mutant\"", "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/mutant --port 6068 --expname "$exp_name1/mutant" --configs arguments/dnerf/mutant.py &',
      "device 0 is the default; consistency only"),
    C("--expname \"$exp_name1/standup\"", "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/standup --port 6066 --expname "$exp_name1/standup" --configs arguments/dnerf/standup.py &',
      "second device selection ignored on NPU"),
    C("--expname \"$exp_name1/hook\"", "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=0&&python train.py -s data/dnerf/hook --port 6069 --expname "$exp_name1/hook" --configs arguments/dnerf/hook.py &',
      "device 0 is the default; consistency only"),
    C("--expname \"$exp_name1/hellwarrior\"", "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=1&&python train.py -s data/dnerf/hellwarrior --port 6070 --expname "$exp_name1/hellwarrior" --configs arguments/dnerf/hellwarrior.py &',
      "second device selection ignored on NPU"),
    C("=export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "single-device render/metrics; the default device is 0 anyway"),
])

E("fdgs_requirements", "requirements.txt", "explicit_replacement",
  "hustvl/4DGaussians requirements.txt", [
    C("=torch==1.13.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu for torch 1.13; torch must equal the torch_npu wheel's base version"),
    C("=torchvision==0.14.1", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "0.14.1 pins torch 1.13.1"),
    C("=torchaudio==0.13.1", "import_torch_npu", "replace", True, "torchaudio==2.1.0", "0.13.1 pins torch 1.13.1"),
    C("=mmcv==1.6.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the Ascend adapter, inserted after the torch pins (mmcv 1.x lite is only used for Config and stays)"),
])

E("fdgs_config", "arguments/dnerf/dnerf_default.py", "explicit_replacement",
  "hustvl/4DGaussians arguments/dnerf/dnerf_default.py (mmcv-style hyper-parameter config)", [])

E("fdgs_cameras", "scene/cameras.py", "explicit_replacement",
  "hustvl/4DGaussians scene/cameras.py (Camera / MiniCam; images kept on the host)", [
    C('trans=np.array([0.0, 0.0, 0.0]), scale=1.0, data_device="cuda", time=0,', "device_type", "replace", False,
      'trans=np.array([0.0, 0.0, 0.0]), scale=1.0, data_device="npu", time=0,',
      "4DGS keeps images on the host and never moves them with data_device; torch.device('cuda') itself does not "
      "fail, so this is consistency only"),
    C('self.data_device = torch.device("cuda")', "device_type", "replace", False,
      'self.data_device = torch.device("npu")', "fallback of an unused attribute; consistency only"),
])

E("fdgs_hexplane", "scene/hexplane.py", "explicit_replacement",
  "hustvl/4DGaussians scene/hexplane.py (K-Planes style multi-resolution HexPlane field via F.grid_sample)", [])

E("fdgs_deformation", "scene/deformation.py", "explicit_replacement",
  "hustvl/4DGaussians scene/deformation.py (deformation MLP heads over HexPlane features)", [])

# ---------------------------------------------------------------- HexPlane (Caoang327)
E("hexplane_main", "main.py", "explicit_replacement",
  "Caoang327/HexPlane main.py (OmegaConf entry point, module-level device global)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "on an NPU host the CUDA check is False, so everything silently trains on the CPU"),
    C("torch.cuda.manual_seed(cfg.systems.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(cfg.systems.seed)",
      "torch.manual_seed above should already seed the NPU generator in recent torch; unconfirmed, so not required"),
])

E("hexplane_config_py", "config/config.py", "explicit_replacement",
  "Caoang327/HexPlane config/config.py (structured OmegaConf dataclasses)", [])

E("hexplane_config", "config/dnerf_slim.yaml", "explicit_replacement",
  "Caoang327/HexPlane config/dnerf_slim.yaml", [])

E("hexplane_trainer", "hexplane/render/trainer.py", "explicit_replacement",
  "Caoang327/HexPlane hexplane/render/trainer.py (ray sampler, TV regularisers, grid upsampling)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "start-of-training cache release; no-op without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "runs after every periodic evaluation; torch.cuda.synchronize raises on a CUDA-less host"),
])

E("hexplane_base", "hexplane/model/HexPlane_Base.py", "explicit_replacement",
  "Caoang327/HexPlane hexplane/model/HexPlane_Base.py (ray sampling, empty-space mask, volume rendering)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "after ray filtering; no-op without CUDA, memory hygiene only"),
])

E("hexplane_render", "hexplane/render/render.py", "explicit_replacement",
  "Caoang327/HexPlane hexplane/render/render.py (chunked renderer, evaluation, path rendering)", [])

# ---------------------------------------------------------------- K-Planes (sarafridov)
E("kplanes_main", "plenoxels/main.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/main.py (nvidia-smi free-GPU picker, config import, trainer dispatch)", [
    C("os.system(f'nvidia-smi -q -d Memory", "device_capability_check", "replace", False,
      "os.system(f'npu-smi info -t usages -i 0 | grep \"HBM Usage Rate\" >\"{tmp_fname}\"')",
      "without nvidia-smi the file stays empty and the picker returns None (graceful); an npu-smi query also needs a "
      "different parser, so this is a convenience port, not required"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "once the picker returns an NPU index, CUDA_VISIBLE_DEVICES would be ignored and the choice silently lost; "
      "set before torch/torch_npu import, as upstream does"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("kplanes_base_trainer", "plenoxels/runners/base_trainer.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/runners/base_trainer.py (fp16 train step with GradScaler, checkpointing)", [
    C("self.gscaler = torch.cuda.amp.GradScaler(enabled=self.train_fp16)", "amp", "replace", True,
      "self.gscaler = torch.npu.amp.GradScaler(enabled=self.train_fp16)",
      "the CUDA GradScaler disables itself without CUDA; with NPU autocast active the fp16 grads would go unscaled "
      "(silent underflow) - train_fp16 is True in the shipped configs"),
    C("with torch.cuda.amp.autocast(enabled=self.train_fp16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.train_fp16):",
      "CUDA autocast just disables itself on an NPU host: training runs in fp32 (correct, slower); performance only"),
])

E("kplanes_video_trainer", "plenoxels/runners/video_trainer.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/runners/video_trainer.py (video trainer, ISG/IST sampling, data loaders)", [
    C("with torch.cuda.amp.autocast(enabled=self.train_fp16), torch.no_grad():", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.train_fp16), torch.no_grad():",
      "evaluation falls back to fp32 without it; performance only"),
    C("tr_dset, batch_size=None, num_workers=4, prefetch_factor=4, pin_memory=True,", "pin_memory", "replace", False,
      'tr_dset, batch_size=None, num_workers=4, prefetch_factor=4, pin_memory=True, pin_memory_device="npu",',
      "pin_memory is tied to CUDA in this torch; without the NPU device it is dropped silently - host-copy speed only"),
])

E("kplanes_field", "plenoxels/models/kplane_field.py", "kernel_rewrite",
  "sarafridov/K-Planes plenoxels/models/kplane_field.py (K-Planes field with tiny-cuda-nn decoders)", [
    C("=import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
      "from plenoxels.models.torch_mlp import TorchMLP, SHEncoding",
      "tiny-cuda-nn (fully fused MLP / SH encoding) is CUDA-only; replaced by plain torch modules"),
    C("self.direction_encoder = tcnn.Encoding(", "custom_cuda_extension", "replace", True,
      "self.direction_encoder = SHEncoding(",
      "degree-4 spherical-harmonics view encoding written with torch ops (same n_output_dims=16)"),
    C("self.color_basis = tcnn.Network(", "custom_cuda_extension", "replace", True, "self.color_basis = TorchMLP(",
      "linear-decoder colour basis MLP"),
    C("=self.sigma_net = tcnn.Network(", "custom_cuda_extension", "replace", True, "self.sigma_net = TorchMLP(",
      "linear-decoder density head (CutlassMLP, no hidden layer)"),
    C("self.sigma_net = tcnn.Network(n_input_dims=self.feature_dim, n_output_dims=self.geo_feat_dim + 1,",
      "custom_cuda_extension", "replace", True,
      "self.sigma_net = TorchMLP(n_input_dims=self.feature_dim, n_output_dims=self.geo_feat_dim + 1,",
      "default density MLP (FullyFusedMLP)"),
    C("self.color_net = tcnn.Network(", "custom_cuda_extension", "replace", True, "self.color_net = TorchMLP(",
      "default colour MLP (FullyFusedMLP, sigmoid output)"),
])

E("kplanes_activations", "plenoxels/ops/activations.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/ops/activations.py (trunc_exp density activation, torch-ngp style)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", True,
      "from torch.npu.amp import custom_bwd, custom_fwd",
      "the CUDA custom_fwd only checks CUDA autocast: under NPU autocast cast_inputs=float32 is skipped, exp() runs "
      "in fp16 and overflows above ~11 - silent inf densities"),
])

E("kplanes_timer", "plenoxels/utils/timer.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/utils/timer.py (CUDA-event step timer, disabled by default)", [
    C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.start = torch.npu.Event(enable_timing=True)",
      "only on the enabled-timer path, but there it raises on a CUDA-less host"),
    C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.end = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "same; also the recorded timings would otherwise be meaningless"),
])

E("kplanes_config", "plenoxels/configs/final/D-NeRF/dnerf_hybrid.py", "explicit_replacement",
  "sarafridov/K-Planes plenoxels/configs/final/D-NeRF/dnerf_hybrid.py (python-dict experiment config)", [
    C("'device': 'cuda:0',", "device_type", "replace", True, "'device': 'npu:0',",
      "becomes BaseTrainer.device: model.to() and every batch move use it"),
])

E("kplanes_requirements", "requirements.txt", "explicit_replacement",
  "sarafridov/K-Planes requirements.txt", [
    C("=torch", "import_torch_npu", "replace", True, "torch==2.1.0",
      "unpinned torch would pull a version with no matching torch_npu wheel"),
    C("=tqdm", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the Ascend adapter, inserted after the torch pin"),
    C("git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch", "custom_cuda_extension", "removal",
      True, None, "tiny-cuda-nn needs nvcc to build; its modules are replaced by torch MLPs in kplane_field.py"),
])

# ---------------------------------------------------------------- SC-GS (yihua7)
E("scgs_train_gui", "train_gui.py", "explicit_replacement",
  "yihua7/SC-GS train_gui.py (control-node deformation training with a dearpygui viewer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("xyz = torch.rand((num_pts, 3)).float().cuda() * 2 - 1", "tensor_to_device", "replace", True,
      "xyz = torch.rand((num_pts, 3)).float().npu() * 2 - 1", "random node initialisation for real scenes"),
    C('self.background = torch.tensor(bg_color, dtype=torch.float32, device="cuda")', "device_type", "replace", True,
      'self.background = torch.tensor(bg_color, dtype=torch.float32, device="npu")', "rasterizer background"),
    C("self.iter_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.iter_start = torch.npu.Event(enable_timing=True)", "recorded every train step; raises without CUDA"),
    C("self.iter_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.iter_end = torch.npu.Event(enable_timing=True)", "same"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "viewer frame timing; test_step also runs once at GUI start"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; the FPS readout needs the NPU queue drained"),
    C("torch.randn(1, 1, device='cuda')", "device_type", "replace", True,
      "ast_noise = 0 if self.dataset.is_blender else torch.randn(1, 1, device='npu').expand(N, -1) * time_interval * self.smooth_term(self.iteration)",
      "annealed time noise added to an NPU tensor"),
    C("gt_image = viewpoint_cam.original_image.cuda()", "tensor_to_device", "replace", True,
      "gt_image = viewpoint_cam.original_image.npu()", "ground truth"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "--gpu selects the device; raises without CUDA"),
])

E("scgs_time_utils", "utils/time_utils.py", "explicit_replacement",
  "yihua7/SC-GS utils/time_utils.py (ControlNodeWarp: sparse control nodes, KNN skinning, ARAP loss)", [
    C("=import pytorch3d.ops", "unsupported_op_workaround", "replace", False,
      "from utils.knn_utils import knn_points_torch",
      "pytorch3d can still be built CPU-only on the NPU host; the import only has to go if the dependency is dropped"),
    C("=from pytorch3d.ops import knn_points", "unsupported_op_workaround", "removal", False, None,
      "unused import; same reasoning"),
    C("init_nodes_idx = farthest_point_sample(init_pcl.detach()[None].cuda(), self.node_num)[0]", "tensor_to_device",
      "replace", True, "init_nodes_idx = farthest_point_sample(init_pcl.detach()[None].npu(), self.node_num)[0]",
      "FPS over the canonical Gaussians (pure torch, runs on the NPU once the input is there)"),
    C("nn_dist, nn_idxs, _ = pytorch3d.ops.knn_points(x[None], nodes[None], None, None, K=K)", "unsupported_op_workaround",
      "replace", True, "nn_dist, nn_idxs = knn_points_torch(x[None], nodes[None], K=K)",
      "pytorch3d's KNN only has CPU and CUDA kernels; NPU tensors are rejected. Replace with cdist + topk "
      "(squared distances, ascending, to match pytorch3d)"),
    C("t = torch.rand([]).cuda() if t is None else", "tensor_to_device", "replace", True,
      "t = torch.rand([]).npu() if t is None else t.squeeze() + delta_t * (torch.rand([]).npu() - .5)",
      "random ARAP time sample"),
    C("t_samp = torch.rand(t_samp_num).cuda() * delta_t + t - .5 * delta_t", "tensor_to_device", "replace", True,
      "t_samp = torch.rand(t_samp_num).npu() * delta_t + t - .5 * delta_t", "ARAP time window"),
    C("t = t.squeeze() if t is not None else torch.rand([]).cuda()", "tensor_to_device", "replace", True,
      "t = t.squeeze() if t is not None else torch.rand([]).npu()", "elastic-loss time sample"),
    C("t_samp = torch.rand(t_samp_num).cuda() * delta_t + t - delta_t / 2", "tensor_to_device", "replace", True,
      "t_samp = torch.rand(t_samp_num).npu() * delta_t + t - delta_t / 2", "elastic-loss time window"),
])
