"""Labels for probe14 (hand-written synthetic upstream files; see ../README.md).

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

K = "/work/shared/knowledge/torch-npu-migration.md"
KD = "/work/shared/knowledge/ascend-distributed.md"
TSV = "/work/shared/knowledge/ops/torch_api_npu_support_2.7.1.tsv"
MSTT = "/work/shared/knowledge/ops/mstt_unsupported_torch_apis_2.7.txt"
OPS = "/work/shared/knowledge/ops/npu_native_ops_torch2.7.1_v7.3.0.base.txt"

IMPORT_NPU = ("import torch_npu after `import torch` registers the npu device, torch.npu and the torch_npu ops "
              "(autoloaded since torch_npu 2.5.1 but still recommended; " + K + " §1.1)")
EXT = ("nvcc-built CUDA extension: there is no nvcc path on Ascend; the kernel has to be rewritten (Ascend C via "
       "OpPlugin / NpuExtension, triton-ascend, or plain torch ops) (" + K + " §6)")
EXT_CALL = "call into an nvcc-built CUDA kernel; fails on NPU tensors until the backend is ported (" + K + " §6)"
DOT_CUDA = "Tensor/Module .cuda() needs a CUDA build; on Ascend it is .npu() / .to('npu') (" + K + " §2.3, §3.4)"
DEV_STR = "'cuda' device string: no CUDA device on an NPU host; 'npu' (" + K + " §2.2, §3.4)"
CUDA_API = "torch.cuda.* call needs a CUDA build; NPU form is torch.npu.* / torch_npu.npu.* (" + K + " §2.1, §3.4)"
CUDA_TYPE = ("torch.cuda.IntTensor/FloatTensor legacy constructors need a CUDA build (no CUDA device on an NPU host); "
             "allocate with torch.zeros/empty(..., device=<input>.device) (" + K + " §2.1, §2.3)")
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; torch.npu.empty_cache() releases NPU cache (" + K + " §2.1)"
AMP = ("CUDA autocast/GradScaler do not act on NPU tensors (fp16 silently off / no loss scaling); "
       "use torch_npu.npu.amp or torch.autocast('npu') (" + TSV + ": torch.cuda.amp.* -> torch_npu.npu.amp.*)")
HCCL = "NCCL does not exist on Ascend; backend='hccl' (" + K + " §2.4; " + KD + " §6.1)"
VIS = "CUDA_VISIBLE_DEVICES is not honoured by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES (" + KD + " §1)"
MEM = ("returns 0 instead of failing when CUDA was never initialised (memory_stats returns {}), so only the logged value is wrong. " + CUDA_API)
AVAIL = ("torch.cuda.is_available() is False on an NPU host, so this silently falls back to CPU; "
         "check torch.npu.is_available() (" + K + " §2.1)")


# --------------------------------------------------------------------------------------------------------------
E("nvdiffrast_render", "render/render.py", "kernel_rewrite",
  "nvdiffrast-based mesh renderer (nvdiffrec-style render.py)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("import nvdiffrast.torch as dr", "custom_cuda_extension", R, True,
      "from . import torch_raster as dr  # pure-torch / Ascend C rasterizer with the dr.* interface",
      "nvdiffrast's rasterize/interpolate/texture/antialias are CUDA kernels (its GL context still uses CUDA "
      "interop); no Ascend build. " + EXT),
    C("_GLCTX = dr.RasterizeGLContext()", "custom_cuda_extension", R, False,
      "_GLCTX = dr.RasterContext()",
      "debug path only (use_opengl=True); the GL context also relies on CUDA-GL interop. " + EXT),
    C('_GLCTX = dr.RasterizeCudaContext(device="cuda:0")', "custom_cuda_extension", R, True,
      '_GLCTX = dr.RasterContext(device="npu:0")', EXT),
    C("return dr.interpolate(", "custom_cuda_extension", R, True, "return dr.interpolate(  # ported backend", EXT_CALL),
    C("rast, rast_db = dr.rasterize(ctx, v_pos_clip", "custom_cuda_extension", R, True,
      "rast, rast_db = dr.rasterize(ctx, v_pos_clip, mesh.t_pos_idx.int(), full_res)  # ported backend", EXT_CALL),
    C('kd = dr.texture(mesh.material["kd"]', "custom_cuda_extension", R, True,
      'kd = dr.texture(mesh.material["kd"].data, gb_texc, uv_da=gb_texc_deriv,  # ported / grid_sample', EXT_CALL),
    C('ks = dr.texture(mesh.material["ks"]', "custom_cuda_extension", R, True,
      'ks = dr.texture(mesh.material["ks"].data, gb_texc, uv_da=gb_texc_deriv,  # ported / grid_sample', EXT_CALL),
    C("out = dr.antialias(", "custom_cuda_extension", R, True,
      "out = dr.antialias(out.contiguous(), rast, v_pos_clip, mesh.t_pos_idx.int())  # ported backend", EXT_CALL),
    C("rast, _ = dr.rasterize(ctx, uv_clip4", "custom_cuda_extension", R, True,
      "rast, _ = dr.rasterize(ctx, uv_clip4, mesh.t_tex_idx.int(), resolution)  # ported backend", EXT_CALL),
    C('proj = perspective(device="cuda")', "device_type", R, True, 'proj = perspective(device="npu")', DEV_STR),
    C("direction=torch.tensor([0.0, 0.0, 1.0]).cuda()", "tensor_to_device", R, True,
      "lgt = light.DirectionalLight(direction=torch.tensor([0.0, 0.0, 1.0]).npu())", DOT_CUDA),
    C("mvp = (proj @ mv.cuda())[None, ...]", "tensor_to_device", R, True, "mvp = (proj @ mv.npu())[None, ...]", DOT_CUDA),
    C("campos = torch.linalg.inv(mv)[None, :3, 3].cuda()", "tensor_to_device", R, True,
      "campos = torch.linalg.inv(mv)[None, :3, 3].npu()", DOT_CUDA),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_API),
])

E("kaolin_dibr_fit", "examples/dibr_fit_mesh.py", "explicit_replacement",
  "Kaolin DIB-R mesh fitting tutorial turned into a script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('device = "cuda"', "device_type", R, True, 'device = "npu"', DEV_STR),
    C("vertices = mesh.vertices.cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "vertices = mesh.vertices.to(device).unsqueeze(0)", DOT_CUDA),
    C("faces = mesh.faces.cuda()", "tensor_to_device", R, True, "faces = mesh.faces.to(device)", DOT_CUDA),
    C("uvs = mesh.uvs.cuda().unsqueeze(0)", "tensor_to_device", R, True, "uvs = mesh.uvs.to(device).unsqueeze(0)", DOT_CUDA),
    C("face_uvs_idx = mesh.face_uvs_idx.cuda()", "tensor_to_device", R, True,
      "face_uvs_idx = mesh.face_uvs_idx.to(device)", DOT_CUDA),
    C('rast_backend="cuda",', "custom_cuda_extension", R, True,
      'rast_backend="torch",  # or a ported rasterizer; kaolin ships only "cuda"/"nvdiffrast" DIB-R backends',
      "Kaolin's DIB-R rasterization is an nvcc-built kernel (backend name from memory, unconfirmed). " + EXT),
    C('gt_image = data["rgb"].cuda()', "tensor_to_device", R, True, 'gt_image = data["rgb"].to(device)', DOT_CUDA),
    C('gt_mask = data["mask"].cuda()', "tensor_to_device", R, True, 'gt_mask = data["mask"].to(device)', DOT_CUDA),
    C('cam_transform = data["cam_transform"].cuda()', "tensor_to_device", R, True,
      'cam_transform = data["cam_transform"].to(device)', DOT_CUDA),
    C('cam_proj = data["cam_proj"].cuda()', "tensor_to_device", R, True, 'cam_proj = data["cam_proj"].to(device)', DOT_CUDA),
    C("cd = kal.metrics.pointcloud.chamfer_distance(pts, ref).mean()", "custom_cuda_extension", R, True,
      "d = torch.cdist(pts, ref); cd = (d.min(-1).values.pow(2).mean(-1) + d.min(-2).values.pow(2).mean(-1)).mean()",
      "kaolin's chamfer_distance goes through its sided_distance CUDA kernel (from memory, unconfirmed); "
      "torch.cdist has an NPU kernel (_cdist_forward in " + OPS + "). " + EXT),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", R, False,
      'f"mem {torch.npu.max_memory_allocated() / 2**20:.0f}MB")', MEM),
])

E("torchngp_raymarching", "raymarching/raymarching.py", "kernel_rewrite",
  "torch-ngp raymarching CUDA-extension wrapper (JIT cpp_extension.load fallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "torch.cuda.amp.custom_fwd(cast_inputs=...) only reacts to CUDA autocast, so under NPU autocast fp16 "
      "inputs reach the kernels uncast. " + AMP),
    C("import _raymarching as _backend", "custom_cuda_extension", R, True,
      "import _raymarching_npu as _backend  # Ascend C port built with NpuExtension", EXT),
    C("_backend = load(", "custom_cuda_extension", R, True,
      "raise ImportError('build the NPU raymarching extension first')",
      "torch.utils.cpp_extension.load is marked unsupported on A2/A3 and the sources are .cu (" + K + " §6)"),
    C("if not rays_o.is_cuda:", "device_type", R, True, "if not rays_o.is_npu:",
      "is_cuda is False for NPU tensors, so the branch always fires; is_npu (" + K + " §2.3, §3.4)"),
    C("rays_o = rays_o.cuda()", "tensor_to_device", R, True, "rays_o = rays_o.npu()", DOT_CUDA),
    C("if not rays_d.is_cuda:", "device_type", R, True, "if not rays_d.is_npu:",
      "is_cuda is False for NPU tensors (" + K + " §2.3)"),
    C("rays_d = rays_d.cuda()", "tensor_to_device", R, True, "rays_d = rays_d.npu()", DOT_CUDA),
    C("if not coords.is_cuda:", "device_type", R, True, "if not coords.is_npu:", "is_cuda is False for NPU tensors (" + K + " §2.3)"),
    C("coords = coords.cuda()", "tensor_to_device", R, True, "coords = coords.npu()", DOT_CUDA),
    C("if not grid.is_cuda:", "device_type", R, True, "if not grid.is_npu:", "is_cuda is False for NPU tensors (" + K + " §2.3)"),
    C("grid = grid.cuda()", "tensor_to_device", R, True, "grid = grid.npu()", DOT_CUDA),
    C("_backend.near_far_from_aabb(rays_o", "custom_cuda_extension", R, True,
      "_backend.near_far_from_aabb(rays_o, rays_d, aabb, N, min_near, nears, fars)  # NPU kernel", EXT_CALL),
    C("_backend.morton3D(", "custom_cuda_extension", R, True, "_backend.morton3D(coords.int(), N, indices)  # NPU kernel", EXT_CALL),
    C("_backend.packbits(", "custom_cuda_extension", R, True, "_backend.packbits(grid, N, thresh, bitfield)  # NPU kernel", EXT_CALL),
    C("_backend.march_rays_train(", "custom_cuda_extension", R, True,
      "_backend.march_rays_train(...)  # NPU kernel", EXT_CALL),
    C("_backend.composite_rays_train_forward(", "custom_cuda_extension", R, True,
      "_backend.composite_rays_train_forward(...)  # NPU kernel", EXT_CALL),
    C("_backend.composite_rays_train_backward(", "custom_cuda_extension", R, True,
      "_backend.composite_rays_train_backward(...)  # NPU kernel", EXT_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("tcnn_ngp_field", "nerf/network_tcnn.py", "kernel_rewrite",
  "torch-ngp / instant-ngp NeRF field on tiny-cuda-nn (HashGrid + FullyFusedMLP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("import tinycudann as tcnn", "custom_cuda_extension", R, True,
      "from .torch_grid import HashGridEncoding, SHEncoding, MLP  # pure-torch replacements",
      "tiny-cuda-nn is CUDA-only (fully fused MLPs, hash-grid kernels). " + EXT),
    C("self.encoder = tcnn.Encoding(", "custom_cuda_extension", R, True,
      "self.encoder = HashGridEncoding(", EXT_CALL),
    C("self.sigma_net = tcnn.Network(", "custom_cuda_extension", R, True, "self.sigma_net = MLP(", EXT_CALL),
    C("self.encoder_dir = tcnn.Encoding(", "custom_cuda_extension", R, True, "self.encoder_dir = SHEncoding(", EXT_CALL),
    C("self.color_net = tcnn.Network(", "custom_cuda_extension", R, True, "self.color_net = MLP(", EXT_CALL),
    C("scaler = torch.cuda.amp.GradScaler(enabled=opt.fp16)", "amp", R, True,
      "scaler = torch_npu.npu.amp.GradScaler(enabled=opt.fp16)", AMP),
    C("with torch.cuda.amp.autocast(enabled=opt.fp16):", "amp", R, True,
      "with torch_npu.npu.amp.autocast(enabled=opt.fp16):", AMP),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', AVAIL),
])

E("gsplat_trainer", "examples/simple_trainer.py", "explicit_replacement",
  "gsplat examples/simple_trainer.py (3-D Gaussian splatting, fused-ssim, multi-GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from fused_ssim import fused_ssim", "custom_cuda_extension", R, True,
      "from pytorch_msssim import ssim as fused_ssim_torch  # plain-torch SSIM", "fused-ssim is a CUDA kernel package. " + EXT),
    C("from gsplat.rendering import rasterization", "custom_cuda_extension", R, True,
      "from gsplat_npu.rendering import rasterization  # ported projection/tile/rasterize kernels",
      "gsplat's projection, tile intersection and rasterization are nvcc-built (gsplat/cuda/csrc). " + EXT),
    C('def create_splats_with_optimizers(parser, cfg, scene_scale, device="cuda"', "device_type", R, False,
      'def create_splats_with_optimizers(parser, cfg, scene_scale, device="npu", world_rank=0, world_size=1):',
      "default only; the Runner always passes self.device. " + DEV_STR),
    C("fused=True,", "fused_optimizer", R, False, "fused=False,  # or torch_npu.optim.NpuFusedAdam",
      "Adam(fused=True) needs an _fused_adam_ kernel; " + OPS + " lists only _fused_adamw_, so expect a CPU "
      "fallback or an error (§3.8); whether torch accepts fused=True for the npu device is unconfirmed"),
    C('self.device = f"cuda:{local_rank}"', "device_type", R, True, 'self.device = f"npu:{local_rank}"', DEV_STR),
    C("render_colors, render_alphas, info = rasterization(", "custom_cuda_extension", R, True,
      "render_colors, render_alphas, info = rasterization(  # NPU port", EXT_CALL),
    C("ssimloss = 1.0 - fused_ssim(", "custom_cuda_extension", R, True,
      "ssimloss = 1.0 - fused_ssim_torch(colors.permute(0, 3, 1, 2), pixels.permute(0, 3, 1, 2), data_range=1.0)",
      EXT_CALL),
    C("mem = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated() / 1024**3", MEM),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_API),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", rank=world_rank, world_size=world_size)', HCCL),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", CUDA_API),
])

E("gsplat_setup", "setup.py", "kernel_rewrite",
  "gsplat setup.py building the CUDA rasterizer with CUDAExtension", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc; torch_npu.utils.cpp_extension.NpuExtension links torch_npu/ACL (" + K + " §6)"),
    C('sources = glob.glob(osp.join(extensions_dir, "*.cu"))', "custom_cuda_extension", R, True,
      'sources = glob.glob(osp.join("gsplat", "npu", "csrc", "*.cpp"))  # Ascend C kernels + bindings',
      ".cu sources cannot be compiled for Ascend; the kernels are rewritten in Ascend C (" + K + " §6)"),
    C('extra_compile_args["nvcc"] = nvcc_flags', "custom_cuda_extension", X, False, None,
      "nvcc flags are meaningless for an NpuExtension build (" + K + " §6)"),
    C("extension = CUDAExtension(", "custom_cuda_extension", R, True, "extension = NpuExtension(",
      "no nvcc on an Ascend host; NpuExtension (" + K + " §6)"),
])

E("knn_cuda_module", "knn_cuda/__init__.py", "kernel_rewrite",
  "KNN_CUDA (unlimblue) JIT-compiled KNN module", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", X, False, None,
      "only needed for the JIT build that is dropped on Ascend"),
    C("ext = load(", "custom_cuda_extension", R, True, "ext = None  # no JIT CUDA build on Ascend; use knn_torch",
      "cpp_extension.load is marked unsupported on A2/A3 and the source is knn.cu (" + K + " §6)"),
    C("d, i = _get_ext().knn(ref, query, k)", "custom_cuda_extension", R, True,
      "d, i = knn_torch(ref.t()[None], query.t()[None], k); d, i = d[0].t(), i[0].t() + 1",
      "the kernel call is replaced by torch.cdist + topk, both with NPU kernels (" + OPS + "; " + TSV + "). " + EXT_CALL),
    C('assert ref.is_cuda and query.is_cuda', "device_type", R, True,
      'assert ref.device == query.device, "ref and query must be on the same device"',
      "is_cuda is False for NPU tensors, so the assert always fires (" + K + " §2.3)"),
    C("ref = torch.rand(4, 2048, 3).cuda()", "tensor_to_device", R, True, "ref = torch.rand(4, 2048, 3).npu()", DOT_CUDA),
    C("query = torch.rand(4, 512, 3).cuda()", "tensor_to_device", R, True, "query = torch.rand(4, 512, 3).npu()", DOT_CUDA),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_API),
])

E("chamfer_emd_loss", "extensions/losses.py", "kernel_rewrite",
  "ChamferDistancePytorch chamfer3D + MSN auction EMD extension wrappers", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("=import chamfer_3D", "custom_cuda_extension", R, True,
      "import chamfer_3D_npu as chamfer_3D  # Ascend C port, or a torch.cdist implementation", EXT),
    C("=import emd", "custom_cuda_extension", R, True,
      "import emd_npu as emd  # Ascend C port of the auction kernel", EXT),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", CUDA_API),
    C("chamfer_3D.forward(xyz1, xyz2, dist1", "custom_cuda_extension", R, True,
      "chamfer_3D.forward(xyz1, xyz2, dist1, dist2, idx1, idx2)  # NPU kernel", EXT_CALL),
    C("chamfer_3D.backward(", "custom_cuda_extension", R, True, "chamfer_3D.backward(  # NPU kernel", EXT_CALL),
    C("xyz1 = xyz1.contiguous().float().cuda()", "tensor_to_device", R, True,
      "xyz1 = xyz1.contiguous().float()", DOT_CUDA),
    C("xyz2 = xyz2.contiguous().float().cuda()", "tensor_to_device", R, True,
      "xyz2 = xyz2.contiguous().float().to(xyz1.device)", DOT_CUDA),
    C('dist = torch.zeros(batchsize, n, device', "device_type", R, True,
      'dist = torch.zeros(batchsize, n, device=xyz1.device).contiguous()', DEV_STR),
    C('assignment = torch.zeros(batchsize, n, device', "device_type", R, True,
      'assignment = torch.zeros(batchsize, n, device=xyz1.device, dtype=torch.int32).contiguous() - 1', DEV_STR),
    C('assignment_inv = torch.zeros(batchsize, m, device', "device_type", R, True,
      'assignment_inv = torch.zeros(batchsize, m, device=xyz1.device, dtype=torch.int32).contiguous() - 1', DEV_STR),
    C('price = torch.zeros(batchsize, m, device', "device_type", R, True,
      'price = torch.zeros(batchsize, m, device=xyz1.device).contiguous()', DEV_STR),
    C('bid = torch.zeros(batchsize, n, device', "device_type", R, True,
      'bid = torch.zeros(batchsize, n, device=xyz1.device, dtype=torch.int32).contiguous()', DEV_STR),
    C('bid_increments = torch.zeros(batchsize, n, device', "device_type", R, True,
      'bid_increments = torch.zeros(batchsize, n, device=xyz1.device).contiguous()', DEV_STR),
    C('max_increments = torch.zeros(batchsize, m, device', "device_type", R, True,
      'max_increments = torch.zeros(batchsize, m, device=xyz1.device).contiguous()', DEV_STR),
    C('unass_idx = torch.zeros(batchsize * n, device', "device_type", R, True,
      'unass_idx = torch.zeros(batchsize * n, device=xyz1.device, dtype=torch.int32).contiguous()', DEV_STR),
    C('max_idx = torch.zeros(batchsize * m, device', "device_type", R, True,
      'max_idx = torch.zeros(batchsize * m, device=xyz1.device, dtype=torch.int32).contiguous()', DEV_STR),
    C('unass_cnt = torch.zeros(512,', "device_type", R, True,
      'unass_cnt = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()', DEV_STR),
    C('unass_cnt_sum = torch.zeros(512,', "device_type", R, True,
      'unass_cnt_sum = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()', DEV_STR),
    C('cnt_tmp = torch.zeros(512,', "device_type", R, True,
      'cnt_tmp = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()', DEV_STR),
    C("emd.forward(xyz1, xyz2, dist", "custom_cuda_extension", R, True,
      "emd.forward(xyz1, xyz2, dist, assignment, price, ...)  # NPU kernel", EXT_CALL),
    C("emd.backward(xyz1, xyz2, gradxyz1", "custom_cuda_extension", R, True,
      "emd.backward(xyz1, xyz2, gradxyz1, graddist, assignment)  # NPU kernel", EXT_CALL),
    C('gradxyz1 = torch.zeros(xyz1.size(), device="cuda")', "device_type", R, True,
      "gradxyz1 = torch.zeros(xyz1.size(), device=xyz1.device).contiguous()", DEV_STR),
    C('gradxyz2 = torch.zeros(xyz2.size(), device="cuda")', "device_type", R, True,
      "gradxyz2 = torch.zeros(xyz2.size(), device=xyz2.device).contiguous()", DEV_STR),
    C("x1 = torch.rand(20, 8192, 3).cuda()", "tensor_to_device", R, True, "x1 = torch.rand(20, 8192, 3).npu()", DOT_CUDA),
    C("x2 = torch.rand(20, 8192, 3).cuda()", "tensor_to_device", R, True, "x2 = torch.rand(20, 8192, 3).npu()", DOT_CUDA),
])

E("pointops_functions", "lib/pointops/functions/pointops.py", "kernel_rewrite",
  "Point Transformer pointops (FPS, kNN query, grouping, subtraction) autograd wrappers", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("=import pointops_cuda", "custom_cuda_extension", R, True,
      "import pointops_npu as pointops_cuda  # Ascend C port (or mx_driving-style NPU ops)", EXT),
    C("idx = torch.cuda.IntTensor(new_offset[b - 1].item()).zero_()", "torch_cuda_api", R, True,
      "idx = torch.zeros(new_offset[b - 1].item(), dtype=torch.int32, device=xyz.device)", CUDA_TYPE),
    C("tmp = torch.cuda.FloatTensor(n).fill_(1e10)", "torch_cuda_api", R, True,
      "tmp = torch.full((n,), 1e10, dtype=torch.float32, device=xyz.device)", CUDA_TYPE),
    C("pointops_cuda.furthestsampling_cuda(", "custom_cuda_extension", R, True,
      "pointops_cuda.furthestsampling(b, n_max, xyz, offset, new_offset, tmp, idx)", EXT_CALL),
    C("idx = torch.cuda.IntTensor(m, nsample).zero_()", "torch_cuda_api", R, True,
      "idx = torch.zeros(m, nsample, dtype=torch.int32, device=xyz.device)", CUDA_TYPE),
    C("dist2 = torch.cuda.FloatTensor(m, nsample).zero_()", "torch_cuda_api", R, True,
      "dist2 = torch.zeros(m, nsample, dtype=torch.float32, device=xyz.device)", CUDA_TYPE),
    C("pointops_cuda.knnquery_cuda(", "custom_cuda_extension", R, True,
      "pointops_cuda.knnquery(m, nsample, xyz, new_xyz, offset, new_offset, idx, dist2)", EXT_CALL),
    C("output = torch.cuda.FloatTensor(m, nsample, c)", "torch_cuda_api", R, True,
      "output = torch.empty(m, nsample, c, dtype=input.dtype, device=input.device)", CUDA_TYPE),
    C("pointops_cuda.grouping_forward_cuda(", "custom_cuda_extension", R, True,
      "output = input[idx.view(-1).long()].view(m, nsample, c)  # plain gather, no kernel needed", EXT_CALL),
    C("grad_input = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input = torch.zeros(n, c, dtype=grad_output.dtype, device=grad_output.device)", CUDA_TYPE),
    C("pointops_cuda.grouping_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input.index_add_(0, idx.view(-1).long(), grad_output.reshape(-1, c))", EXT_CALL),
    C("output = torch.cuda.FloatTensor(n, nsample, c).zero_()", "torch_cuda_api", R, True,
      "output = torch.zeros(n, nsample, c, dtype=input1.dtype, device=input1.device)", CUDA_TYPE),
    C("pointops_cuda.subtraction_forward_cuda(", "custom_cuda_extension", R, True,
      "output = input1[:, None, :] - input2[idx.long()]", EXT_CALL),
    C("grad_input1 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input1 = torch.zeros(n, c, dtype=grad_output.dtype, device=grad_output.device)", CUDA_TYPE),
    C("grad_input2 = torch.cuda.FloatTensor(n, c).zero_()", "torch_cuda_api", R, True,
      "grad_input2 = torch.zeros(n, c, dtype=grad_output.dtype, device=grad_output.device)", CUDA_TYPE),
    C("pointops_cuda.subtraction_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input1 = grad_output.sum(1); grad_input2.index_add_(0, idx.view(-1).long(), -grad_output.reshape(-1, c))",
      EXT_CALL),
    C("new_feat = torch.cuda.FloatTensor(new_xyz.shape[0], feat.shape[1]).zero_()", "torch_cuda_api", R, True,
      "new_feat = torch.zeros(new_xyz.shape[0], feat.shape[1], dtype=feat.dtype, device=feat.device)", CUDA_TYPE),
])

E("pointtransformer_train", "tool/train.py", "explicit_replacement",
  "Point Transformer (POSTECH-CVLab style) tool/train.py for S3DIS segmentation", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('cfg.setdefault("dist_backend", "nccl")', "dist_backend", R, True, 'cfg.setdefault("dist_backend", "hccl")', HCCL),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(str(x) for x in args.train_gpu)', VIS),
    C("torch.cuda.manual_seed(args.manual_seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed(args.manual_seed)",
      "without CUDA this call is only queued and never applied (silent no-op); torch.manual_seed above already "
      "seeds the npu generator (unconfirmed for every torch_npu version). " + CUDA_API),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(args.manual_seed)", "silent no-op without CUDA, as above. " + CUDA_API),
    C("criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).cuda()", "tensor_to_device", R, True,
      "criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).npu()", DOT_CUDA),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)", CUDA_API),
    C("model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[gpu])", "tensor_to_device", R, True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[gpu])", DOT_CUDA),
    C("model = torch.nn.DataParallel(model.cuda())", "distributed_framework", R, True,
      "model = model.npu()  # single device; DataParallel is not supported on NPU",
      "torch.nn.DataParallel is unsupported on Ascend (" + MSTT + "; " + K + " §2.8) and .cuda() needs CUDA"),
    C("checkpoint = torch.load(args.weight)", "tensor_to_device", R, True,
      'checkpoint = torch.load(args.weight, map_location="cpu")',
      "checkpoints saved on GPU hold CUDA storages; torch.load without map_location tries to restore them on a "
      "CUDA device and fails on an NPU host"),
    C("map_location=lambda storage, loc: storage.cuda()", "tensor_to_device", R, True,
      'checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.npu())', DOT_CUDA),
    C("coord, feat, target, offset = (coord.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "coord, feat, target, offset = (coord.npu(non_blocking=True), feat.npu(non_blocking=True),", DOT_CUDA),
    C("target.cuda(non_blocking=True), offset.cuda(non_blocking=True))", "tensor_to_device", R, True,
      "target.npu(non_blocking=True), offset.npu(non_blocking=True))", DOT_CUDA),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, False,
      'f"mem {torch.npu.max_memory_allocated() / 1024 ** 3:.1f}G")', MEM),
])

E("scatter_point_encoder", "models/pillar_encoder.py", "explicit_replacement",
  "OpenPCDet-style dynamic pillar VFE using torch_scatter", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch_scatter import scatter_max, scatter_mean", "custom_cuda_extension", R, False,
      "from torch_scatter import scatter_mean  # pure-python scatter_add path; scatter_max replaced below",
      "the import itself works with the +cpu wheel; only scatter_max needs its compiled op (unconfirmed detail of "
      "torch_scatter internals)"),
    C("x_max = scatter_max(x, unq_inv, dim=0)[0]", "custom_cuda_extension", R, True,
      "x_max = x.new_full((int(unq_inv.max()) + 1, x.shape[1]), float('-inf')).index_reduce_(0, unq_inv, x, 'amax')",
      "torch_scatter's scatter_max dispatches to a compiled op with CPU/CUDA kernels only, so NPU tensors fail "
      "(unconfirmed); the torch replacement has no NPU kernel either (index_reduce / scatter_reduce absent from "
      + OPS + ") and runs through the CPU fallback (§3.8) unless a custom op is written"),
    C("return torch.scatter_reduce(out, 0, unq_inv, points_z", "unsupported_op_workaround", R, True,
      "return torch.scatter_reduce(out.cpu(), 0, unq_inv.cpu(), points_z.cpu(), reduce='amax', "
      "include_self=True).to(points_z.device)  # explicit host path until an NPU kernel exists",
      "torch.scatter_reduce is in the msFmkTransplt unsupported list (" + MSTT + ") and marked ✘ in " + TSV +
      "; no scatter_reduce kernel in " + OPS + " (the exact replacement is unconfirmed)"),
    C("[0, -39.68, -3, 69.12, 39.68, 1]).cuda()", "tensor_to_device", R, True,
      "vfe = DynamicPillarVFE(4, [0.16, 0.16, 4], [432, 496, 1], [0, -39.68, -3, 69.12, 39.68, 1]).npu()", DOT_CUDA),
    C('pts = torch.rand(20000, 5, device="cuda")', "device_type", R, True, 'pts = torch.rand(20000, 5, device="npu")', DEV_STR),
])

E("droid_depth_video", "droid_slam/depth_video.py", "explicit_replacement",
  "DROID-SLAM DepthVideo buffer with lietorch and droid_backends (dense BA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("=import lietorch", "custom_cuda_extension", R, True,
      "import lietorch_npu as lietorch  # SE3 group ops ported (or pypose / plain torch)",
      "lietorch's group operations are compiled CPU/CUDA kernels (lietorch_backends); no NPU dispatch. " + EXT),
    C("=import droid_backends", "custom_cuda_extension", R, True,
      "import droid_backends_npu as droid_backends  # dense BA / frame distance ported", EXT),
    C('def __init__(self, image_size=[480, 640], buffer=1024, stereo=False, device="cuda:0"):', "device_type", R, True,
      'def __init__(self, image_size=[480, 640], buffer=1024, stereo=False, device="npu:0"):',
      "the Droid frontend constructs DepthVideo without a device, so the default decides where buffers live once "
      "the hard-coded strings below use it. " + DEV_STR),
    C('self.tstamp = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.tstamp = torch.zeros(buffer, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.images = torch.zeros(buffer, 3, ht, wd, device="cuda"', "device_type", R, True,
      'self.images = torch.zeros(buffer, 3, ht, wd, device=device, dtype=torch.uint8)', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.dirty = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.dirty = torch.zeros(buffer, device=device, dtype=torch.bool).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.red = torch.zeros(buffer, device="cuda"', "device_type", R, True,
      'self.red = torch.zeros(buffer, device=device, dtype=torch.bool).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.poses = torch.zeros(buffer, 7, device="cuda"', "device_type", R, True,
      'self.poses = torch.zeros(buffer, 7, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.disps = torch.ones(buffer', "device_type", R, True,
      'self.disps = torch.ones(buffer, ht // 8, wd // 8, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.disps_sens = torch.zeros(buffer', "device_type", R, True,
      'self.disps_sens = torch.zeros(buffer, ht // 8, wd // 8, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.disps_up = torch.zeros(buffer', "device_type", R, True,
      'self.disps_up = torch.zeros(buffer, ht, wd, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.intrinsics = torch.zeros(buffer, 4', "device_type", R, True,
      'self.intrinsics = torch.zeros(buffer, 4, device=device, dtype=torch.float).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.fmaps = torch.zeros(buffer, c, 128', "device_type", R, True,
      'self.fmaps = torch.zeros(buffer, c, 128, ht // 8, wd // 8, dtype=torch.half, device=device).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.nets = torch.zeros(buffer, 128', "device_type", R, True,
      'self.nets = torch.zeros(buffer, 128, ht // 8, wd // 8, dtype=torch.half, device=device).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.inps = torch.zeros(buffer, 128', "device_type", R, True,
      'self.inps = torch.zeros(buffer, 128, ht // 8, wd // 8, dtype=torch.half, device=device).share_memory_()', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1]', "device_type", R, True,
      'self.poses[:] = torch.as_tensor([0, 0, 0, 0, 0, 0, 1], dtype=torch.float, device=device)', DEV_STR + "; the constructor's device argument is ignored upstream"),
    C('ii = ii.to(device="cuda", dtype=torch.long).reshape(-1)', "device_type", R, True,
      'ii = ii.to(device="npu", dtype=torch.long).reshape(-1)', DEV_STR),
    C('jj = jj.to(device="cuda", dtype=torch.long).reshape(-1)', "device_type", R, True,
      'jj = jj.to(device="npu", dtype=torch.long).reshape(-1)', DEV_STR),
    C("Gs = lietorch.SE3(self.poses[None])", "custom_cuda_extension", R, True,
      "Gs = lietorch.SE3(self.poses[None])  # ported group ops", EXT_CALL),
    C("d = droid_backends.frame_distance(", "custom_cuda_extension", R, True,
      "d = droid_backends.frame_distance(  # NPU port", EXT_CALL),
    C("droid_backends.ba(self.poses", "custom_cuda_extension", R, True,
      "droid_backends.ba(self.poses, self.disps, self.intrinsics[0], self.disps_sens,  # NPU port", EXT_CALL),
])

E("open3dml_pipeline", "ml3d/torch/pipelines/base_pipeline.py", "device_branch_or_abstraction",
  "Open3D-ML torch BasePipeline and device-name helper", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('gpu_names = ["gpu", "cuda"]', "device_type", R, False, 'gpu_names = ["gpu", "cuda", "npu"]',
      "lets configs say device: npu explicitly; 'gpu'/'cuda' already map through the return below"),
    C('return "cuda", device_ids_new', "device_type", R, True, 'return "npu", device_ids_new',
      "every config that says gpu/cuda is turned into a CUDA device here. " + DEV_STR),
    C('def __init__(self, model, dataset=None, device="cuda", distributed=False, **kwargs):', "device_type", R, False,
      'def __init__(self, model, dataset=None, device="npu", distributed=False, **kwargs):',
      "default only; with the is_available check below still on CUDA it would just push to CPU"),
    C('if device == "cpu" or not torch.cuda.is_available():', "device_type", R, True,
      'if device == "cpu" or not torch.npu.is_available():', AVAIL),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", R, False, "torch.npu.set_device(self.device)",
      "only reached once the is_available check above is ported (the unchanged code never gets here on NPU). " + CUDA_API),
    C('self.device = torch.device("cuda")', "device_type", R, False, 'self.device = torch.device("npu")',
      "only reached once the is_available check above is ported. " + DEV_STR),
    C('backend = cfg_dict.get("backend", "gloo" if device == "cpu" else "nccl")', "dist_backend", R, True,
      'backend = cfg_dict.get("backend", "gloo" if device == "cpu" else "hccl")', HCCL),
    C("torch.cuda.set_device(device_ids[rank])", "torch_cuda_api", R, True, "torch.npu.set_device(device_ids[rank])", CUDA_API),
])

E("pk_batch_ik", "examples/batch_ik_panda.py", "explicit_replacement",
  "pytorch-kinematics batched damped-least-squares IK example", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('d = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'd = "npu" if torch.npu.is_available() else "cpu"', AVAIL),
    C("dtype = torch.float64", "unsupported_op_workaround", R, False, "dtype = torch.float32",
      "fp64 is poorly supported on Ascend (transfer_to_npu maps DoubleTensor to FloatTensor, " + K + " §2.3; "
      "torch.linalg.matmul listed fp16/fp32 only in " + TSV + "); exact fp64 bmm behaviour unconfirmed"),
    C("dx = torch.linalg.solve(JJt, err.unsqueeze(-1))", "unsupported_op_workaround", R, False,
      "Q, Rm = torch.linalg.qr(JJt); dx = torch.linalg.solve_triangular(Rm, Q.transpose(-1, -2) @ err.unsqueeze(-1), upper=True)",
      "no linalg_solve kernel in " + OPS + " (linalg_qr and linalg_solve_triangular are there), so every IK "
      "iteration would round-trip through the CPU fallback (" + K + " §3.8)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_API),
    C("torch.cuda.synchronize()  # wait for the batched solver", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the batched solver before timing", CUDA_API),
])

E("dp_train_workspace", "diffusion_policy/workspace/train_diffusion_unet_hybrid_workspace.py",
  "device_branch_or_abstraction",
  "Diffusion Policy hydra training workspace (device taken from the config)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the device comes from cfg.training.device; 'npu:0' only resolves once torch_npu is imported (the project "
      "pins an old torch without backend autoload). " + IMPORT_NPU),
])

E("dp_train_config", "diffusion_policy/config/train_diffusion_unet_hybrid_workspace.yaml",
  "device_branch_or_abstraction",
  "Diffusion Policy hydra config for the UNet hybrid image policy", [
    C('device: "cuda:0"', "device_type", R, True, 'device: "npu:0"', DEV_STR),
    C("_target_: torch.optim.AdamW", "fused_optimizer", R, False, "_target_: torch_npu.optim.NpuFusedAdamW",
      "performance only: msFmkTransplt advises NpuFused* optimizers (" + K + " §3.5, §5)"),
])

E("act_imitate_episodes", "imitate_episodes.py", "explicit_replacement",
  "ACT / ALOHA imitate_episodes.py (train + sim rollout eval)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("curr_image = torch.from_numpy(curr_image / 255.0).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "curr_image = torch.from_numpy(curr_image / 255.0).float().npu().unsqueeze(0)", DOT_CUDA),
    C("loading_status = policy.load_state_dict(torch.load(ckpt_path))", "tensor_to_device", R, False,
      'loading_status = policy.load_state_dict(torch.load(ckpt_path, map_location="cpu"))',
      "needed only for checkpoints trained on GPU (CUDA storages); checkpoints written by the ported trainer load as is"),
    C("=policy.cuda()", "tensor_to_device", R, True, "policy.npu()", DOT_CUDA),
    C("all_time_actions = torch.zeros([max_timesteps, max_timesteps + num_queries, state_dim]).cuda()",
      "tensor_to_device", R, True,
      "all_time_actions = torch.zeros([max_timesteps, max_timesteps + num_queries, state_dim]).npu()", DOT_CUDA),
    C("qpos_history = torch.zeros((1, max_timesteps, state_dim)).cuda()", "tensor_to_device", R, True,
      "qpos_history = torch.zeros((1, max_timesteps, state_dim)).npu()", DOT_CUDA),
    C("qpos = torch.from_numpy(qpos).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "qpos = torch.from_numpy(qpos).float().npu().unsqueeze(0)", DOT_CUDA),
    C("exp_weights = torch.from_numpy(exp_weights).cuda().unsqueeze(dim=1)", "tensor_to_device", R, True,
      "exp_weights = torch.from_numpy(exp_weights).npu().unsqueeze(dim=1)",
      DOT_CUDA + "; note exp_weights is float64 from numpy (fp64 caveat, " + K + " §2.3; unconfirmed impact)"),
    C("image_data.cuda(), qpos_data.cuda(), action_data.cuda(), is_pad.cuda()", "tensor_to_device", R, True,
      "image_data, qpos_data, action_data, is_pad = image_data.npu(), qpos_data.npu(), action_data.npu(), is_pad.npu()",
      DOT_CUDA),
    C("policy.cuda()  # params must live", "tensor_to_device", R, True,
      "policy.npu()  # params must live on the device before configure_optimizers()", DOT_CUDA),
])

E("lerobot_utils", "lerobot/common/utils/utils.py", "device_branch_or_abstraction",
  "LeRobot common/utils/utils.py device selection and RNG-state helpers", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("elif torch.backends.mps.is_available():", "device_type", B, True,
      'elif torch.npu.is_available(): return torch.device("npu")  # new branch before the mps check',
      "auto_select_torch_device falls through to CPU on an NPU host. " + AVAIL),
    C('elif try_device == "mps":', "device_type", B, True,
      'elif try_device == "npu": return torch.npu.is_available()  # new branch',
      "is_torch_device_available('npu') raises ValueError (unknown device) without a branch"),
    C('if device in ["cuda", "cpu"]:', "amp", R, True, 'if device in ["cuda", "npu", "cpu"]:',
      "is_amp_available('npu') raises ValueError, so use_amp configs crash on NPU; torch.autocast supports 'npu' "
      "(" + TSV + ": torch.autocast ✔)"),
    C('random_state_dict["torch_cuda_random_state"] = torch.cuda.random.get_rng_state()', "torch_cuda_api", B, False,
      'if torch.npu.is_available(): random_state_dict["torch_npu_random_state"] = torch.npu.get_rng_state()',
      "guarded by is_available, so nothing fails; the NPU RNG state is simply not saved (reproducibility only). "
      "get_rng_state is in torch_npu.npu (" + K + " §2.1)"),
    C('torch.cuda.random.set_rng_state(random_state_dict["torch_cuda_random_state"])', "torch_cuda_api", B, False,
      'if torch.npu.is_available(): torch.npu.set_rng_state(random_state_dict["torch_npu_random_state"])',
      "guarded; NPU RNG state not restored by seeded_context (reproducibility only) (" + K + " §2.1)"),
])

E("isaaclab_cartpole_cfg", "source/isaaclab_tasks/direct/cartpole/cartpole_env.py", "device_branch_or_abstraction",
  "Isaac Lab direct-workflow Cartpole task config and env", [
    C('device="cuda:0",', "device_type", R, True,
      'device="cpu",  # PhysX GPU pipeline is CUDA-only; run the policy on npu in the RL runner',
      "the simulation device selects the PhysX GPU pipeline, which needs CUDA; on an Ascend host the sim has to run "
      "on CPU (whether Isaac Sim runs at all on a host without an NVIDIA GPU is unconfirmed)"),
])

E("neus_exp_runner", "exp_runner.py", "explicit_replacement",
  "NeuS exp_runner.py (default CUDA tensor type, single GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("self.device = torch.device('cuda')", "device_type", R, True, "self.device = torch.device('npu')", DEV_STR),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", R, True,
      "torch.set_default_device('npu'); torch.set_default_dtype(torch.float32)",
      "the default CUDA tensor type is what puts every implicitly created tensor (torch.ones([1, 3]), randperm, the "
      "bbox tensors) on the GPU; needs a CUDA build. torch.npu.FloatTensor exists in torch_npu.npu (" + K +
      " §2.1) but whether set_default_tensor_type accepts it is unconfirmed, hence set_default_device"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", CUDA_API),
])

E("monosdf_train_runner", "code/training/exp_runner.py", "explicit_replacement",
  "MonoSDF training/exp_runner.py (GPUtil auto GPU pick, torch.distributed.launch)", [
    C("=import GPUtil", "device_capability_check", X, False, None,
      "GPUtil wraps nvidia-smi; dropped together with its call below"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("deviceIDs = GPUtil.getAvailable(", "device_capability_check", R, True,
      "deviceIDs = [i for i in range(torch.npu.device_count())]",
      "GPUtil shells out to nvidia-smi, which does not exist on an Ascend host: the list is empty and deviceIDs[0] "
      "raises (" + K + " §6: no pynvml/nvidia-smi equivalent; npu-smi instead)"),
    C("torch.cuda.set_device(opt.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(opt.local_rank)", CUDA_API),
    C("backend='nccl'", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)", HCCL),
    C("print(f\"visible devices: {torch.cuda.device_count()} \"", "torch_cuda_api", R, False,
      "print(f\"visible devices: {torch.npu.device_count()} \"",
      "returns 0 without CUDA: wrong log line only. " + CUDA_API),
    C("f\"({torch.cuda.get_device_name(0)})\")", "torch_cuda_api", R, True,
      "f\"({torch.npu.get_device_name(0)})\")", CUDA_API),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "free, total = torch.npu.mem_get_info()",
      CUDA_API),
])

E("monosdf_launch_sh", "scripts/train_scannet_multigpu.sh", "explicit_replacement",
  "MonoSDF multi-GPU ScanNet launch script", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}", VIS),
    C("export NCCL_P2P_DISABLE=1", "env_var", X, False, None, "NCCL-only knob, ignored by HCCL (" + KD + " §1)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only knob, ignored by HCCL (" + KD + " §1)"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None,
      "NCCL-only; HCCL logging is configured through the CANN log settings (unconfirmed variable name)"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "the CUDA allocator setting is ignored; PYTORCH_NPU_ALLOC_CONF is the NPU caching-allocator knob (" + K +
      " §1.6); max_split_size_mb support there unconfirmed"),
    C("export TCNN_CUDA_ARCHITECTURES=86", "env_var", X, False, None, "tiny-cuda-nn build setting, meaningless on Ascend"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check", R, True,
      "npu-smi info",
      "nvidia-smi is missing on an Ascend host and the script runs under set -e, so it aborts here; npu-smi (" + K + " §6)"),
    C("CUDA_VISIBLE_DEVICES=0 python evaluation/eval.py \\", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python evaluation/eval.py \\", VIS),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader", "device_capability_check", R, True,
      "npu-smi info", "missing nvidia-smi makes the script exit non-zero under set -e (" + K + " §6)"),
])

E("dust3r_pair_inference", "dust3r/run_pairs.py", "explicit_replacement",
  "DUSt3R pairwise inference + global alignment script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('parser.add_argument("--device", type=str, default="cuda", help="pytorch device")', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu", help="pytorch device")', DEV_STR),
    C("with torch.cuda.amp.autocast(enabled=bool(use_amp)):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", enabled=bool(use_amp)):",
      AMP),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("croco_rope2d", "croco/models/pos_embed.py", "device_branch_or_abstraction",
  "CroCo / DUSt3R pos_embed.py with the optional curope CUDA RoPE2D and its torch fallback", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed for the optional fused RoPE below; the guarded curope import already falls back to torch. " + IMPORT_NPU),
    C("return (tokens * cos) + (self.rotate_half(tokens) * sin)", "npu_fused_op", R, False,
      "return torch_npu.npu_rotary_mul(tokens, cos, sin, rotary_mode='half')",
      "performance only: npu_rotary_mul implements x*cos + rotate_half(x)*sin (" + K + " §5); whether the per-batch "
      "gathered [B,1,S,D] cos/sin broadcast shape is accepted is unconfirmed"),
])

E("mast3r_fast_nn", "mast3r/fast_nn.py", "explicit_replacement",
  "MASt3R fast_nn.py reciprocal nearest-neighbour matching with a faiss GPU index", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('def bruteforce_reciprocal_nns(A, B, device="cuda"', "device_type", R, False,
      'def bruteforce_reciprocal_nns(A, B, device="npu", block_size=None, dist="l2"):',
      "default only; every caller in this file passes device. " + DEV_STR),
    C("self.res = faiss.StandardGpuResources()", "custom_cuda_extension", X, True, None,
      "faiss GPU resources exist only in the CUDA build of faiss (not covered by the knowledge; faiss-cpu on an "
      "Ascend host has no StandardGpuResources, so this raises AttributeError)"),
    C("self.res.setTempMemory(512 * 1024 * 1024)", "custom_cuda_extension", X, True, None,
      "goes with the GPU resources above"),
    C("self.index = faiss.index_cpu_to_gpu(self.res, gpu_id, cpu_index)", "custom_cuda_extension", R, True,
      "self.index = cpu_index  # faiss-cpu; no Ascend faiss backend",
      "index_cpu_to_gpu is CUDA-only (not in the knowledge; see the StandardGpuResources note)"),
    C("self.index.add(db_pts.contiguous().float())", "tensor_to_device", R, True,
      "self.index.add(db_pts.contiguous().float().cpu())",
      "faiss.contrib.torch_utils only understands CPU and CUDA tensors; NPU memory must be copied to the host"),
    C("D, I = self.index.search(queries.contiguous().float(), k)", "tensor_to_device", R, True,
      "D, I = self.index.search(queries.contiguous().float().cpu(), k)",
      "as above: the CPU index cannot read NPU tensors"),
    C('device="cuda", max_iter=10, use_faiss=True, **matcher_kw):', "device_type", R, True,
      'device="npu", max_iter=10, use_faiss=True, **matcher_kw):',
      "the sparse-GA caller relies on this default. " + DEV_STR),
])

E("depth_anything_run", "run.py", "device_branch_or_abstraction",
  "Depth-Anything-V2 run.py image inference", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_fp16):', "amp", R, True,
      'with torch.autocast(device_type=image.device.type, dtype=torch.float16, enabled=use_fp16):',
      "autocast for device_type='cuda' does not cover NPU tensors, so --fp16 silently runs fp32. " + AMP),
    C("DEVICE = 'cuda' if torch.cuda.is_available() else 'mps'", "device_type", R, True,
      "DEVICE = 'npu' if torch.npu.is_available() else 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'",
      AVAIL),
    C('depth_anything = torch.compile(depth_anything, mode="reduce-overhead")', "compile_mode", R, False,
      'depth_anything = torch.compile(depth_anything, backend="npugraphs")',
      "only with --compile; reduce-overhead means CUDA graphs, the NPU counterpart is backend='npugraphs' (" + K +
      " §3.7, §6); behaviour of mode='reduce-overhead' on NPU unconfirmed"),
])

E("zoedepth_trainer", "zoedepth/trainers/base_trainer.py", "explicit_replacement",
  "ZoeDepth BaseTrainer (torch.cuda.amp imported as `amp`)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NPU),
    C("from torch.cuda import amp", "amp", R, True, "from torch_npu.npu import amp",
      "every amp.GradScaler / amp.autocast below goes through this alias. " + AMP),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", R, True,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')", AVAIL),
    C("return optim.AdamW(params, lr=self.config.lr, weight_decay=self.config.wd)", "fused_optimizer", R, False,
      "return torch_npu.optim.NpuFusedAdamW(params, lr=self.config.lr, weight_decay=self.config.wd)",
      "performance only (" + K + " §3.5, §5)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
])

E("pymeshlab_cleanup_cpu", "tools/clean_and_simplify.py", "device_branch_or_abstraction",
  "CPU-only mesh clean-up with pymeshlab / trimesh (no labels: near-miss file)", [])

PKG = "CUDA-only package; no Ascend build"
E("splat_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a Gaussian-splatting / neural-surface research repo", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on x86 Ascend hosts torch comes from the cpu index, on aarch64 from plain PyPI (" + K + " §1.1)"),
    C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension", R, True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "the +cu118 torch-scatter wheels link CUDA; the +cpu build is the only one usable next to torch_npu"),
    C("torch==2.1.2+cu118", "custom_cuda_extension", R, True, "torch==2.1.0  # + torch-npu==2.1.0.post12 on the next line",
      "CUDA build of torch; torch_npu wheels exist for torch 2.1.0 but not 2.1.2 (wheel version = torch version, "
      + K + " §1.1, §1.2)"),
    C("torchvision==0.16.2+cu118", "custom_cuda_extension", R, True, "torchvision==0.16.0",
      "must match torch 2.1.0; torchvision_npu for nms/roi_align ops (" + K + " §6)"),
    C("gsplat==1.4.0", "custom_cuda_extension", R, True, "# gsplat: replaced by the NPU port in third_party/", PKG + "; " + EXT),
    C("nerfacc==0.5.3", "custom_cuda_extension", R, True, "# nerfacc: CUDA kernels; replaced by pure-torch sampling",
      PKG + " (nerfacc ships CUDA kernels; from memory). " + EXT),
    C("git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch", "custom_cuda_extension", X, True, None,
      "tiny-cuda-nn needs nvcc to build. " + EXT),
    C("git+https://github.com/NVlabs/nvdiffrast.git", "custom_cuda_extension", X, True, None,
      "nvdiffrast needs CUDA at build and run time. " + EXT),
    C("git+https://github.com/rahul-goel/fused-ssim.git", "custom_cuda_extension", R, True, "pytorch-msssim>=1.0",
      "fused-ssim is a CUDA kernel package. " + EXT),
    C("spconv-cu118==2.3.6", "custom_cuda_extension", X, True, None, PKG + " (spconv CUDA build; unconfirmed NPU status)"),
    C("cupy-cuda11x>=12.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend support (" + K + " §6)"),
    C("xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "xformers has no NPU backend; use SDPA / npu_fusion_attention (" + K + " §6)"),
    C("faiss-gpu>=1.7.2", "custom_cuda_extension", R, True, "faiss-cpu>=1.7.2",
      "faiss-gpu is a CUDA build (not in the knowledge; no Ascend faiss known)"),
    C("nvidia-ml-py>=12.535", "device_capability_check", X, False, None,
      "installs, but NVML calls fail without an NVIDIA driver; no pynvml equivalent, use npu-smi / torch.npu.mem_get_info (" + K + " §6)"),
    C("GPUtil>=1.4.0", "device_capability_check", X, False, None, "wraps nvidia-smi; installs but finds no devices"),
])

E("droid_environment", "environment.yaml", "explicit_replacement",
  "DROID-SLAM conda environment.yaml", [
    C("=- nvidia", "custom_cuda_extension", X, False, None, "only serves the CUDA packages removed below"),
    C("=- pytorch=2.0.1", "custom_cuda_extension", R, True,
      "- pytorch=2.1.0  # plus pip: torch-npu==2.1.0.post12",
      "torch_npu must be added and pinned to the same torch version; 2.0.1 only pairs with EOL torch_npu/CANN 7.0 "
      "(" + K + " §1.2, §1.3)"),
    C("=- pytorch-cuda=11.8", "custom_cuda_extension", X, True, None,
      "selects the CUDA build of pytorch; an Ascend host needs the CPU build plus torch-npu (" + K + " §1.1)"),
    C("=- cuda-toolkit=11.8", "custom_cuda_extension", X, False, None, "CUDA toolkit is useless on Ascend; CANN is installed on the host"),
    C("=- cuda-nvcc=11.8", "custom_cuda_extension", X, False, None, "nvcc only served the CUDA extension build (" + K + " §6)"),
    C("- git+https://github.com/princeton-vl/lietorch.git", "custom_cuda_extension", R, True,
      "- ./thirdparty/lietorch_npu  # ported group ops",
      "lietorch's pip build compiles CUDA kernels. " + EXT),
    C("=- nvidia-ml-py3", "device_capability_check", X, False, None, "NVML has no NPU counterpart (" + K + " §6)"),
    C("CUDA_HOME: $CONDA_PREFIX", "env_var", X, False, None, "CUDA build variable; CANN paths come from set_env.sh"),
    C('TORCH_CUDA_ARCH_LIST: "7.5;8.0;8.6"', "env_var", X, False, None, "CUDA arch list for nvcc builds"),
])

E("ngp_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for an instant-ngp / tiny-cuda-nn / nvdiffrast training image", [
    C("ARG CUDA_VERSION=11.8.0", "custom_cuda_extension", R, False, "ARG CANN_VERSION=8.0.0",
      "version argument of the CUDA base image"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${OS_VERSION}", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu${OS_VERSION}-py3.10",
      "CUDA base image has no CANN/driver user-space for Ascend (CANN image tag from memory, unconfirmed)"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "CUDA path; meaningless in a CANN image"),
    C("ENV PATH=${CUDA_HOME}/bin:${PATH}", "env_var", X, False, None, "CUDA path; meaningless in a CANN image"),
    C("ENV LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}", "env_var", R, False,
      "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
      "CANN libraries come from /usr/local/Ascend (set_env.sh); exact driver path unconfirmed"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 8.9 9.0+PTX"', "env_var", X, False, None, "nvcc arch list"),
    C("ENV TCNN_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}", "env_var", X, False, None, "tiny-cuda-nn build setting"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None, "NVIDIA container runtime setting"),
    C("torch==2.1.2+cu118 torchvision==0.16.2+cu118", "custom_cuda_extension", R, True,
      "torch==2.1.0 torch-npu==2.1.0.post12 torchvision==0.16.0 \\",
      "CUDA torch build; torch_npu needs torch 2.1.0 exactly (" + K + " §1.1, §1.2)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; cpu index on x86, plain PyPI on aarch64 (" + K + " §1.1)"),
    C('"git+https://github.com/NVlabs/tiny-cuda-nn.git@v1.7#subdirectory=bindings/torch"', "custom_cuda_extension", X, True,
      None, "tiny-cuda-nn needs nvcc. " + EXT),
    C('RUN python3.10 -m pip install --no-cache-dir "git+https://github.com/NVlabs/nvdiffrast.git"', "custom_cuda_extension",
      X, True, None, "nvdiffrast needs CUDA. " + EXT),
    C("RUN python3.10 -m pip install --no-cache-dir nerfacc==0.5.3 \\", "custom_cuda_extension", X, True, None,
      "prebuilt cu118 wheels of nerfacc (CUDA kernels). " + EXT),
    C("&& cd raymarching && python3.10 setup.py build_ext --inplace", "custom_cuda_extension", R, True,
      "&& cd raymarching_npu && python3.10 setup.py build_ext --inplace  # NpuExtension build",
      "the raymarching extension is built from .cu sources with nvcc. " + EXT),
    C("HEALTHCHECK --interval=5m --timeout=10s CMD nvidia-smi || exit 1", "device_capability_check", R, False,
      "HEALTHCHECK --interval=5m --timeout=10s CMD npu-smi info || exit 1",
      "nvidia-smi is absent, so the container is only marked unhealthy; npu-smi (" + K + " §6)"),
    C('CMD ["python3.10", "main_nerf.py", "data/fox", "--workspace", "trial_nerf", "-O", "--cuda_ray"]',
      "custom_cuda_extension", R, True,
      'CMD ["python3.10", "main_nerf.py", "data/fox", "--workspace", "trial_nerf", "--fp16", "--preload"]',
      "--cuda_ray (also implied by torch-ngp's -O) selects the CUDA raymarching kernels (unless they are ported)"),
])
