"""Labels for probe190: image-to-3D / text-to-3D pipelines (TRELLIS, InstantMesh/Zero123++, TripoSR, threestudio).

One porter's judgement of which upstream lines must change for Ascend NPU (torch_npu).
See README.md "How the labels were chosen" for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# TRELLIS
# ---------------------------------------------------------------------------------------------

E("t01_trellis_app", "app.py", "explicit_replacement",
  "TRELLIS gradio app (image-to-3D Space: state packing, GLB extraction)",
  [
      C("os.environ['ATTN_BACKEND'] = 'xformers'", "attention_kernel", "replace", True,
        "os.environ['ATTN_BACKEND'] = 'sdpa'     # xformers/flash-attn have no NPU backend; SDPA dispatches to NPU FA",
        "xformers has no NPU operator (memory_efficient_attention raises 'No operator found ... device=npu'); SDPA is supported on NPU"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "register the NPU backend before any 'npu' device is used (autoload only from torch_npu 2.5.1; TRELLIS pins torch 2.4.0)"),
      C("gs._xyz = torch.tensor(state['gaussian']['_xyz'], device='cuda')", "tensor_to_device", "replace", True,
        "gs._xyz = torch.tensor(state['gaussian']['_xyz'], device='npu')",
        "hard-coded CUDA device string"),
      C("gs._features_dc = torch.tensor(state['gaussian']['_features_dc'], device='cuda')", "tensor_to_device", "replace", True,
        "gs._features_dc = torch.tensor(state['gaussian']['_features_dc'], device='npu')",
        "hard-coded CUDA device string"),
      C("gs._scaling = torch.tensor(state['gaussian']['_scaling'], device='cuda')", "tensor_to_device", "replace", True,
        "gs._scaling = torch.tensor(state['gaussian']['_scaling'], device='npu')",
        "hard-coded CUDA device string"),
      C("gs._rotation = torch.tensor(state['gaussian']['_rotation'], device='cuda')", "tensor_to_device", "replace", True,
        "gs._rotation = torch.tensor(state['gaussian']['_rotation'], device='npu')",
        "hard-coded CUDA device string"),
      C("gs._opacity = torch.tensor(state['gaussian']['_opacity'], device='cuda')", "tensor_to_device", "replace", True,
        "gs._opacity = torch.tensor(state['gaussian']['_opacity'], device='npu')",
        "hard-coded CUDA device string"),
      C("vertices=torch.tensor(state['mesh']['vertices'], device='cuda'),", "tensor_to_device", "replace", True,
        "vertices=torch.tensor(state['mesh']['vertices'], device='npu'),",
        "hard-coded CUDA device string"),
      C("faces=torch.tensor(state['mesh']['faces'], device='cuda'),", "tensor_to_device", "replace", True,
        "faces=torch.tensor(state['mesh']['faces'], device='npu'),",
        "hard-coded CUDA device string"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; NPU cache is simply not released"),
      C("torch.cuda.empty_cache()  # texture baking leaves large buffers behind", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # texture baking leaves large buffers behind",
        "silent no-op on an NPU host; memory hygiene only"),
      C("pipeline.cuda()", "tensor_to_device", "replace", True,
        "pipeline.to(torch.device('npu'))",
        "Pipeline.cuda() moves every model to torch.device('cuda'), which fails without CUDA"),
  ])

E("t02_trellis_setup", "setup.sh", "explicit_replacement",
  "TRELLIS setup.sh (conda env + per-platform wheels for xformers/flash-attn/kaolin/nvdiffrast/spconv)",
  [
      C("conda install pytorch==2.4.0 torchvision==0.19.0 pytorch-cuda=11.8 -c pytorch -c nvidia", "import_torch_npu", "replace", True,
        "pip install torch==2.4.0 torchvision==0.19.0 torch-npu==2.4.0.post2",
        "pytorch-cuda conda build is CUDA-only; NPU needs the plain torch wheel plus the matching torch-npu (2.4.0.post2 pairs with torch 2.4.0)"),
      C("WORKDIR=$(pwd)", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "setup.sh is sourced ('. ./setup.sh'), so this prepares the user's shell for torch_npu; the torch 2.4.0 probes below do not autoload torch_npu (autoload starts at 2.5.1), so nothing here fails without it"),
      C("PLATFORM=$(python -c \"import torch; print(('cuda' if torch.version.cuda", "torch_cuda_api", "add_branch", False,
        "PLATFORM=$(python -c \"import torch, torch_npu; print('npu' if torch.npu.is_available() else (('cuda' if torch.version.cuda else ('hip' if torch.version.hip else 'unknown')) if torch.cuda.is_available() else 'cpu'))\")",
        "on an NPU host this prints 'cpu' and every CUDA-gated install is skipped, which is harmless; an 'npu' platform is only needed to hang NPU-specific installs on"),
  ])

E("t03_trellis_sparse_init", "trellis/modules/sparse/__init__.py", "kernel_rewrite",
  "TRELLIS trellis/modules/sparse/__init__.py (SPARSE_BACKEND / SPARSE_ATTN_BACKEND selection)",
  [
      C("BACKEND = 'spconv'", "custom_cuda_extension", "replace", True,
        "BACKEND = 'native'   # pure-PyTorch gather/scatter sparse conv (conv_native.py); spconv has no NPU build",
        "default sparse conv backend is spconv (CUDA kernels via cumm); torchsparse is CUDA-only too, so a new backend is needed"),
      C("ATTN = 'flash_attn'", "attention_kernel", "replace", True,
        "ATTN = 'npu'",
        "flash-attn cannot be installed on NPU; sparse attention must default to the new torch_npu varlen branch"),
      C("if env_sparse_backend is not None and env_sparse_backend in ['spconv', 'torchsparse']:", "custom_cuda_extension", "replace", False,
        "if env_sparse_backend is not None and env_sparse_backend in ['spconv', 'torchsparse', 'native']:",
        "register the new backend name so SPARSE_BACKEND=native can be selected explicitly; default already covers it"),
      C("if env_sparse_attn is not None and env_sparse_attn in ['xformers', 'flash_attn']:", "attention_kernel", "replace", False,
        "if env_sparse_attn is not None and env_sparse_attn in ['xformers', 'flash_attn', 'npu']:",
        "register 'npu' for SPARSE_ATTN_BACKEND; without it the env var is silently ignored and the default is used"),
  ])

E("t04_trellis_full_attn", "trellis/modules/attention/full_attn.py", "device_branch_or_abstraction",
  "TRELLIS trellis/modules/attention (ATTN_BACKEND dispatch: xformers / flash_attn / sdpa / naive)",
  [
      C("BACKEND = os.environ.get('ATTN_BACKEND', 'flash_attn')", "attention_kernel", "replace", True,
        "BACKEND = os.environ.get('ATTN_BACKEND', 'sdpa')",
        "default backend imports flash_attn at module import; flash-attn cannot be installed on NPU"),
      C("assert BACKEND in ['xformers', 'flash_attn', 'sdpa', 'naive']", "attention_kernel", "replace", False,
        "assert BACKEND in ['xformers', 'flash_attn', 'sdpa', 'naive', 'npu'], f\"Unknown attention backend: {BACKEND}\"",
        "only needed if the optional torch_npu fused-attention backend below is added"),
      C("raise ValueError(f\"Unknown attention module: {BACKEND}\")", "npu_fused_op", "add_branch", False,
        "elif BACKEND == 'npu': out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], 'BSND', scale=1.0 / math.sqrt(q.shape[-1]))[0]",
        "performance only: SDPA already reaches the NPU flash-attention kernel; a direct BSND call skips the permutes"),
  ])

E("t05_trellis_sparse_attn", "trellis/modules/sparse/attention/full_attn.py", "kernel_rewrite",
  "TRELLIS trellis/modules/sparse/attention/full_attn.py (varlen attention over SparseTensor batches)",
  [
      C("=raise ValueError(f\"Unknown attention module: {ATTN}\")", "attention_kernel", "add_branch", True,
        "elif ATTN == 'npu': import torch_npu",
        "sparse attention supports only xformers/flash_attn; with ATTN='npu' the module raises at import unless a branch is added"),
      C("(sparse attention supports xformers and flash_attn only)", "npu_fused_op", "add_branch", True,
        "elif ATTN == 'npu': out = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], 'TND', scale=1.0 / math.sqrt(q.shape[-1]), actual_seq_qlen=np.cumsum(q_seqlen).tolist(), actual_seq_kvlen=np.cumsum(kv_seqlen).tolist())[0]",
        "no SDPA fallback exists for the varlen path; TND layout needs cumulative lengths (host lists), not the cu_seqlens tensor with leading 0"),
  ])

E("t06_trellis_spconv", "trellis/modules/sparse/conv/conv_spconv.py", "kernel_rewrite",
  "TRELLIS trellis/modules/sparse/conv/conv_spconv.py (spconv SubMConv3d / SparseConv3d wrappers)",
  [
      C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", False,
        "spconv = None  # no Ascend build of spconv; NPU runs use SPARSE_BACKEND='native' (conv_native.py)",
        "this module is only imported when BACKEND == 'spconv'; the port switches the backend in sparse/__init__.py and adds a new module, so this file is left dead"),
  ])

E("t07_trellis_pipeline", "trellis/pipelines/trellis_image_to_3d.py", "device_branch_or_abstraction",
  "TRELLIS TrellisImageTo3DPipeline (DINOv2 conditioning, sparse-structure + SLAT flow sampling)",
  [
      C("self.rembg_session = rembg.new_session('u2net', providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])", "device_type", "replace", False,
        "self.rembg_session = rembg.new_session('u2net', providers=['CANNExecutionProvider', 'CPUExecutionProvider'])",
        "onnxruntime skips an unavailable CUDA provider and runs u2net on CPU; the CANN provider needs onnxruntime-cann (unconfirmed)"),
  ])

E("t08_trellis_pipe_base", "trellis/pipelines/base.py", "device_branch_or_abstraction",
  "TRELLIS trellis/pipelines/base.py (Pipeline.from_pretrained / device / to / cuda)",
  [
      C("self.to(torch.device(\"cuda\"))", "device_type", "add_branch", False,
        "def npu(self) -> None: self.to(torch.device(\"npu\"))",
        "cuda() only fails if called; the ported app calls .to(npu) directly, so an npu() helper is a convenience"),
  ])

E("t09_trellis_gs_render", "trellis/renderers/gaussian_render.py", "kernel_rewrite",
  "TRELLIS / mip-splatting gaussian_render.py (diff_gaussian_rasterization)",
  [
      C("from diff_gaussian_rasterization import GaussianRasterizer, GaussianRasterizationSettings", "custom_cuda_extension", "replace", True,
        "from trellis.renderers.npu_gs_rasterizer import GaussianRasterizer, GaussianRasterizationSettings  # torch/Ascend C reimplementation",
        "diff-gaussian-rasterization is an nvcc-built CUDAExtension; it cannot be built on an NPU host"),
      C("screenspace_points = torch.zeros_like(pc.get_xyz, dtype=pc.get_xyz.dtype, requires_grad=True, device=\"cuda\") + 0", "tensor_to_device", "replace", True,
        "screenspace_points = torch.zeros_like(pc.get_xyz, dtype=pc.get_xyz.dtype, requires_grad=True, device=pc.get_xyz.device) + 0",
        "hard-coded CUDA device string"),
      C("subpixel_offset = torch.zeros((int(viewpoint_camera.image_height), int(viewpoint_camera.image_width), 2), dtype=torch.float32, device=\"cuda\")", "tensor_to_device", "replace", True,
        "subpixel_offset = torch.zeros((int(viewpoint_camera.image_height), int(viewpoint_camera.image_width), 2), dtype=torch.float32, device=pc.get_xyz.device)",
        "hard-coded CUDA device string"),
      C("self.bg_color = torch.zeros(3, dtype=torch.float32, device=\"cuda\")", "tensor_to_device", "replace", True,
        "self.bg_color = torch.zeros(3, dtype=torch.float32, device=\"npu\")",
        "hard-coded CUDA device string"),
      C("self.bg_color = torch.tensor(self.rendering_options[\"bg_color\"], dtype=torch.float32, device=\"cuda\")", "tensor_to_device", "replace", True,
        "self.bg_color = torch.tensor(self.rendering_options[\"bg_color\"], dtype=torch.float32, device=\"npu\")",
        "hard-coded CUDA device string"),
  ])

E("t10_trellis_postproc", "trellis/utils/postprocessing_utils.py", "kernel_rewrite",
  "TRELLIS postprocessing_utils.py (hole filling by visibility + mincut, xatlas, texture baking)",
  [
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "removal", False, None,
        "the import itself succeeds (nvdiffrast JIT-builds its CUDA plugin on first call); its only use, dr.texture, is replaced below"),
      C("yaws = torch.tensor(yaws).cuda()", "tensor_to_device", "replace", True,
        "yaws = torch.tensor(yaws).npu()", ".cuda() on tensor"),
      C("pitchs = torch.tensor(pitchs).cuda()", "tensor_to_device", "replace", True,
        "pitchs = torch.tensor(pitchs).npu()", ".cuda() on tensor"),
      C("fov = torch.deg2rad(torch.tensor(40)).cuda()", "tensor_to_device", "replace", True,
        "fov = torch.deg2rad(torch.tensor(40)).npu()", ".cuda() on tensor"),
      C("]).cuda().float() * radius", "tensor_to_device", "replace", True,
        "]).npu().float() * radius", ".cuda() on tensor"),
      C("view = utils3d.torch.view_look_at(orig, torch.tensor([0, 0, 0]).float().cuda(), torch.tensor([0, 0, 1]).float().cuda())", "tensor_to_device", "replace", True,
        "view = utils3d.torch.view_look_at(orig, torch.tensor([0, 0, 0]).float().npu(), torch.tensor([0, 0, 1]).float().npu())",
        ".cuda() on tensors"),
      C("=rastctx = utils3d.torch.RastContext(backend='cuda')", "custom_cuda_extension", "replace", True,
        "rastctx = NpuRastContext()  # project rasterizer; utils3d only wraps nvdiffrast ('cuda' or 'gl'), both need CUDA",
        "utils3d RastContext creates an nvdiffrast RasterizeCudaContext"),
      C("verts, faces = torch.tensor(verts, device='cuda', dtype=torch.float32), torch.tensor(faces, device='cuda', dtype=torch.int32)", "tensor_to_device", "replace", True,
        "verts, faces = torch.tensor(verts, device='npu', dtype=torch.float32), torch.tensor(faces, device='npu', dtype=torch.int32)",
        "hard-coded CUDA device strings"),
      C("vertices, faces = torch.tensor(vertices).cuda(), torch.tensor(faces.astype(np.int32)).cuda()", "tensor_to_device", "replace", True,
        "vertices, faces = torch.tensor(vertices).npu(), torch.tensor(faces.astype(np.int32)).npu()",
        ".cuda() on tensors"),
      C("=vertices = torch.tensor(vertices).cuda()", "tensor_to_device", "replace", True,
        "vertices = torch.tensor(vertices).npu()", ".cuda() on tensor"),
      C("=faces = torch.tensor(faces.astype(np.int32)).cuda()", "tensor_to_device", "replace", True,
        "faces = torch.tensor(faces.astype(np.int32)).npu()", ".cuda() on tensor"),
      C("uvs = torch.tensor(uvs).cuda()", "tensor_to_device", "replace", True,
        "uvs = torch.tensor(uvs).npu()", ".cuda() on tensor"),
      C("observations = [torch.tensor(obs / 255.0).float().cuda() for obs in observations]", "tensor_to_device", "replace", True,
        "observations = [torch.tensor(obs / 255.0).float().npu() for obs in observations]", ".cuda() on tensors"),
      C("masks = [torch.tensor(m>0).bool().cuda() for m in masks]", "tensor_to_device", "replace", True,
        "masks = [torch.tensor(m>0).bool().npu() for m in masks]", ".cuda() on tensors"),
      C("views = [utils3d.torch.extrinsics_to_view(torch.tensor(extr).cuda()) for extr in extrinsics]", "tensor_to_device", "replace", True,
        "views = [utils3d.torch.extrinsics_to_view(torch.tensor(extr).npu()) for extr in extrinsics]", ".cuda() on tensors"),
      C("projections = [utils3d.torch.intrinsics_to_perspective(torch.tensor(intr).cuda(), near, far) for intr in intrinsics]", "tensor_to_device", "replace", True,
        "projections = [utils3d.torch.intrinsics_to_perspective(torch.tensor(intr).npu(), near, far) for intr in intrinsics]", ".cuda() on tensors"),
      C("rastctx = utils3d.torch.RastContext(backend='cuda')  # shared by both baking modes", "custom_cuda_extension", "replace", True,
        "rastctx = NpuRastContext()  # shared by both baking modes",
        "nvdiffrast CUDA rasterizer context"),
      C("texture = torch.zeros((texture_size * texture_size, 3), dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "texture = torch.zeros((texture_size * texture_size, 3), dtype=torch.float32).npu()", ".cuda() on tensor"),
      C("texture_weights = torch.zeros((texture_size * texture_size), dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "texture_weights = torch.zeros((texture_size * texture_size), dtype=torch.float32).npu()", ".cuda() on tensor"),
      C("texture = torch.nn.Parameter(torch.zeros((1, texture_size, texture_size, 3), dtype=torch.float32).cuda())", "tensor_to_device", "replace", True,
        "texture = torch.nn.Parameter(torch.zeros((1, texture_size, texture_size, 3), dtype=torch.float32).npu())", ".cuda() on tensor"),
      C("render = dr.texture(texture, uv, uv_dr)[0]", "custom_cuda_extension", "replace", True,
        "render = torch.nn.functional.grid_sample(texture.permute(0, 3, 1, 2), uv * 2 - 1, mode='bilinear', align_corners=False).permute(0, 2, 3, 1)[0]",
        "nvdiffrast texture() is a CUDA kernel; bilinear lookup can be expressed with grid_sample (no mip filtering, uv_dr unused)"),
  ])

E("t11_trellis_trainer", "trellis/trainers/base.py", "device_branch_or_abstraction",
  "TRELLIS trellis/trainers/base.py (DDP trainer: fp16 'amp' / 'inflat_all', prefetching data loader)",
  [
      C("self.local_rank = dist.get_rank() % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "self.local_rank = dist.get_rank() % torch.npu.device_count()",
        "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
      C("self.device = torch.device(f'cuda:{self.local_rank}')", "device_type", "replace", True,
        "self.device = torch.device(f'npu:{self.local_rank}')", "CUDA device string"),
      C("num_workers=int(np.ceil(os.cpu_count() / torch.cuda.device_count())),", "torch_cuda_api", "replace", True,
        "num_workers=int(np.ceil(os.cpu_count() / torch.npu.device_count())),",
        "division by torch.cuda.device_count() == 0"),
      C("pin_memory=True,", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',",
        "without an NPU pin device the loader pins for CUDA or skips pinning; performance only (unconfirmed which on the pinned torch)"),
      C("self._data_prefetched = recursive_to_device(next(self.data_iterator), 'cuda', non_blocking=True)", "tensor_to_device", "replace", True,
        "self._data_prefetched = recursive_to_device(next(self.data_iterator), self.device, non_blocking=True)",
        "hard-coded CUDA device string"),
      C("self.scaler = torch.GradScaler() if self.fp16_mode == 'amp' else None", "amp", "replace", True,
        "self.scaler = torch.GradScaler('npu') if self.fp16_mode == 'amp' else None",
        "GradScaler defaults to device 'cuda' and disables itself when CUDA is absent: fp16 'amp' mode would train without loss scaling"),
      C("amp_context = partial(torch.autocast, device_type='cuda') if self.fp16_mode == 'amp' else nullcontext", "amp", "replace", True,
        "amp_context = partial(torch.autocast, device_type='npu') if self.fp16_mode == 'amp' else nullcontext",
        "autocast('cuda') is disabled with a warning on an NPU host, so 'amp' silently runs in fp32"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for the step's kernels before stopping the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the step's kernels before stopping the clock", "raises without CUDA"),
      C("f'Mem: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GB',", "torch_cuda_api", "replace", False,
        "f'Mem: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GB',",
        "returns 0 when CUDA is uninitialised; log value only"),
  ])

E("t12_trellis_train", "train.py", "explicit_replacement",
  "TRELLIS train.py (mp.spawn launcher, setup_dist, auto-retry)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script: register the NPU backend before set_device / init_process_group"),
      C("os.environ.setdefault('NCCL_P2P_DISABLE', '0')", "env_var", "removal", False, None,
        "NCCL-only knob; no effect under HCCL"),
      C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
        "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
        "HCCL watchdog counterpart; default is already 1, so this is cosmetic"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "raises without CUDA"),
      C("dist.init_process_group('nccl', rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group('hccl', rank=rank, world_size=world_size)", "NCCL is unavailable on NPU; HCCL is the collective backend"),
      C("torch.cuda.manual_seed_all(rank)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(rank)",
        "silent no-op without CUDA; torch.manual_seed above also seeds registered privateuse1 devices in recent torch (unconfirmed in knowledge)"),
      C("name: getattr(models, model.name)(**model.args).cuda()", "tensor_to_device", "replace", True,
        "name: getattr(models, model.name)(**model.args).npu()", ".cuda() on module"),
      C("opt.num_gpus = torch.cuda.device_count() if opt.num_gpus == -1 else opt.num_gpus", "torch_cuda_api", "replace", True,
        "opt.num_gpus = torch.npu.device_count() if opt.num_gpus == -1 else opt.num_gpus",
        "returns 0 on an NPU host: world_size becomes 0 and training silently runs a single non-distributed process"),
  ])

# ---------------------------------------------------------------------------------------------
# InstantMesh / Zero123++
# ---------------------------------------------------------------------------------------------

E("i13_instantmesh_run", "run.py", "explicit_replacement",
  "InstantMesh run.py (Zero123++ multiview generation + FlexiCubes reconstruction)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("device = torch.device('cuda')", "device_type", "replace", True,
        "device = torch.device('npu')", "CUDA device for both the diffusers pipeline and the reconstruction model"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op without CUDA; frees the Zero123++ weights on NPU before stage 2"),
  ])

E("i14_instantmesh_app", "app.py", "explicit_replacement",
  "InstantMesh gradio app (two-device split: diffusion on device0, reconstruction on device1)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("if torch.cuda.is_available() and torch.cuda.device_count() >= 2:", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and torch.npu.device_count() >= 2:",
        "False on an NPU host, so the two-device split is never taken"),
      C("device0 = torch.device('cuda:0')", "device_type", "replace", True,
        "device0 = torch.device('npu:0')", "CUDA device string"),
      C("device1 = torch.device('cuda:1')", "device_type", "replace", True,
        "device1 = torch.device('npu:1')", "CUDA device string"),
      C("=device0 = torch.device('cuda')", "device_type", "replace", True,
        "device0 = torch.device('npu')", "CUDA device string (single-device fallback)"),
      C("=device1 = torch.device('cuda')", "device_type", "replace", True,
        "device1 = torch.device('npu')", "CUDA device string (single-device fallback)"),
      C("=device = torch.device('cuda')", "device_type", "replace", False,
        "device = torch.device('npu')",
        "variable is never used in this file; constructing a torch.device does not touch the runtime"),
  ])

E("i15_instantmesh_mesh_util", "src/utils/mesh_util.py", "kernel_rewrite",
  "InstantMesh src/utils/mesh_util.py (obj/glb export, xatlas UV unwrapping via nvdiffrast)",
  [
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", False,
        "from src.utils import npu_raster  # project rasterizer replacing nvdiffrast",
        "import succeeds (plugin is JIT-built on first call); the kernel calls below are what fail"),
      C("return dr.interpolate(attr.contiguous(), rast, attr_idx, rast_db=rast_db, diff_attrs=None if rast_db is None else 'all')", "custom_cuda_extension", "replace", True,
        "return npu_raster.interpolate(attr.contiguous(), rast, attr_idx, rast_db=rast_db, diff_attrs=None if rast_db is None else 'all')",
        "nvdiffrast interpolate is a CUDA kernel"),
      C("rast, _ = dr.rasterize(ctx, uv_clip4, mesh_tex_idx.int(), (resolution, resolution))", "custom_cuda_extension", "replace", True,
        "rast, _ = npu_raster.rasterize(ctx, uv_clip4, mesh_tex_idx.int(), (resolution, resolution))",
        "nvdiffrast rasterize is a CUDA kernel"),
  ])

E("i16_instantmesh_lrm", "src/models/lrm_mesh.py", "kernel_rewrite",
  "InstantMesh src/models/lrm_mesh.py (triplane LRM + FlexiCubes geometry head)",
  [
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "removal", False, None,
        "only used by the unused RasterizeCudaContext below; the import itself succeeds"),
      C("ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "removal", True, None,
        "ctx is never used (xatlas_uvmap gets self.geometry.renderer.ctx), but constructing a CUDA rasterizer context fails on NPU"),
  ])

E("i17_instantmesh_train", "train.py", "device_branch_or_abstraction",
  "InstantMesh train.py (Lightning Trainer, DDPStrategy, CUDACallback from minGPT)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("torch.cuda.reset_peak_memory_stats(trainer.strategy.root_device.index)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(trainer.strategy.root_device.index)",
        "calls into the CUDA allocator directly; raises without CUDA"),
      C("=torch.cuda.synchronize(trainer.strategy.root_device.index)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(trainer.strategy.root_device.index)", "raises without CUDA"),
      C("torch.cuda.synchronize(trainer.strategy.root_device.index)  # make sure", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(trainer.strategy.root_device.index)  # make sure the epoch's kernels have finished", "raises without CUDA"),
      C("max_memory = torch.cuda.max_memory_allocated(trainer.strategy.root_device.index) / 2 ** 20", "torch_cuda_api", "replace", False,
        "max_memory = torch.npu.max_memory_allocated(trainer.strategy.root_device.index) / 2 ** 20",
        "reports 0 without CUDA; logging only"),
      C("trainer_config[\"accelerator\"] = \"gpu\"", "device_type", "replace", True,
        "trainer_config[\"accelerator\"] = NPUAccelerator()  # custom Lightning accelerator registered for 'npu'",
        "Lightning rejects accelerator='gpu' when no CUDA/MPS device exists; Lightning ships no NPU accelerator, the replacement is unconfirmed"),
      C("trainer_kwargs[\"strategy\"] = DDPStrategy(find_unused_parameters=True)", "dist_backend", "replace", True,
        "trainer_kwargs[\"strategy\"] = DDPStrategy(find_unused_parameters=True, process_group_backend=\"hccl\")",
        "DDPStrategy picks nccl for cuda devices and gloo otherwise; NPU tensors need hccl"),
  ])

E("i18_instantmesh_reqs", "requirements.txt", "explicit_replacement",
  "InstantMesh requirements.txt (cu121 torch index, xformers, nvdiffrast from git)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "on x86 the cu121 index supplies a CUDA build of torch; torch_npu expects the CPU wheel"),
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post12",
        "torch-npu pin matching torch 2.1.0"),
      C("xformers==0.0.22.post7", "attention_kernel", "removal", False, None,
        "no NPU backend and nothing here enables it; only the install step is at risk (no aarch64 wheel, source build unconfirmed)"),
      C("git+https://github.com/NVlabs/nvdiffrast/", "custom_cuda_extension", "removal", False, None,
        "installs fine (pure-Python package, JIT-compiled at first use) but is useless without CUDA once the rasterizer is replaced"),
  ])

E("z19_zero123pp_batch", "examples/batch_mv.py", "explicit_replacement",
  "Zero123++ batch inference example (DiffusionPipeline custom_pipeline + depth ControlNet)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("parser.add_argument(\"--device\", type=str, default=\"cuda:0\", help=\"GPU to run on\")", "device_type", "replace", True,
        "parser.add_argument(\"--device\", type=str, default=\"npu:0\", help=\"NPU to run on\")", "CUDA default device"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "exits on an NPU host"),
      C("print(f\"Running on {torch.cuda.get_device_name(args.device)}\")", "torch_cuda_api", "replace", True,
        "print(f\"Running on {torch.npu.get_device_name(args.device)}\")", "raises without CUDA"),
      C("generator = torch.Generator(device=\"cuda\").manual_seed(args.seed)", "device_type", "replace", True,
        "generator = torch.Generator(device=args.device).manual_seed(args.seed)", "CUDA generator cannot be created without CUDA"),
      C("pipeline.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", False, None,
        "opt-in via --xformers; xformers has no NPU backend and diffusers already uses SDPA on torch 2"),
      C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 2 ** 30", "reports 0 without CUDA; logging only"),
  ])

# ---------------------------------------------------------------------------------------------
# TripoSR
# ---------------------------------------------------------------------------------------------

E("s20_triposr_run", "run.py", "explicit_replacement",
  "TripoSR run.py (Timer with cuda synchronize, --device cuda:0 with CPU fallback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "guarded: timings are just taken without a sync (async NPU launches make them misleading)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
        "torch.npu.synchronize()", "guarded by the is_available check above; timing accuracy only"),
      C("if torch.cuda.is_available():  # flush pending kernels", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():  # flush pending kernels so the timing is real", "timing accuracy only"),
      C("torch.cuda.synchronize()  # (async launches", "torch_cuda_api", "replace", False,
        "torch.npu.synchronize()  # (async launches would otherwise be billed to the next step)", "timing accuracy only"),
      C("default=\"cuda:0\",", "device_type", "replace", True,
        "default=\"npu:0\",", "CUDA default device"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "silently falls back to CPU on an NPU host"),
  ])

E("s21_triposr_iso", "tsr/models/isosurface.py", "device_branch_or_abstraction",
  "TripoSR tsr/models/isosurface.py (torchmcubes marching cubes)",
  [
      C("v_pos, t_pos_idx = self.mc_func(level.detach(), 0.0)", "unsupported_op_workaround", "replace", True,
        "v_pos, t_pos_idx = self.mc_func(level.detach().cpu() if level.device.type == 'npu' else level.detach(), 0.0)",
        "torchmcubes dispatches CUDA vs CPU on is_cuda; an NPU tensor goes to the CPU kernel, and the fallback only catches AttributeError (exact failure unconfirmed)"),
  ])

E("s22_triposr_gradio", "gradio_app.py", "explicit_replacement",
  "TripoSR gradio_app.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():", "silently falls back to CPU on an NPU host"),
      C("device = \"cuda:0\"", "device_type", "replace", True,
        "device = \"npu:0\"", "CUDA device string"),
      C("HW_NAME = torch.cuda.get_device_name(0) if torch.cuda.is_available() else \"CPU\"", "torch_cuda_api", "replace", False,
        "HW_NAME = torch.npu.get_device_name(0) if torch.npu.is_available() else \"CPU\"",
        "guarded; the banner would just say CPU"),
  ])

E("s23_triposr_system", "tsr/system.py", "device_branch_or_abstraction",
  "TripoSR tsr/system.py (TSR.from_pretrained, forward, render, extract_mesh)",
  [])

# ---------------------------------------------------------------------------------------------
# threestudio
# ---------------------------------------------------------------------------------------------

E("h24_threestudio_launch", "launch.py", "explicit_replacement",
  "threestudio launch.py (--gpu -> CUDA_VISIBLE_DEVICES, Lightning Trainer(accelerator='gpu'))",
  [
      C("os.environ[\"CUDA_DEVICE_ORDER\"] = \"PCI_BUS_ID\"", "env_var", "removal", False, None,
        "CUDA-only ordering knob; no effect on NPU"),
      C("env_gpus_str = os.environ.get(\"CUDA_VISIBLE_DEVICES\", None)", "env_var", "replace", True,
        "env_gpus_str = os.environ.get(\"ASCEND_RT_VISIBLE_DEVICES\", None)",
        "a device mask set by the scheduler lives in ASCEND_RT_VISIBLE_DEVICES on NPU; reading CUDA's var ignores it"),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.gpu", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = args.gpu",
        "--gpu 1 would silently run on NPU 0, and devices=-1 would grab every NPU"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu", "entry script (imported after the visibility env var is set)"),
      C("accelerator=\"gpu\",", "device_type", "replace", True,
        "accelerator=NPUAccelerator(),",
        "Lightning's 'gpu' accelerator needs CUDA/MPS; an NPU accelerator must be supplied (replacement unconfirmed)"),
  ])

E("h25_threestudio_misc", "threestudio/utils/misc.py", "explicit_replacement",
  "threestudio/utils/misc.py (get_rank/get_device, cleanup with tcnn.free_temporary_memory)",
  [
      C("import tinycudann as tcnn", "custom_cuda_extension", "removal", True, None,
        "tiny-cuda-nn is an nvcc-built extension; ImportError on NPU"),
      C("return torch.device(f\"cuda:{get_rank()}\")", "device_type", "replace", True,
        "return torch.device(f\"npu:{get_rank()}\")", "CUDA device string used by every BaseObject"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op without CUDA"),
      C("tcnn.free_temporary_memory()", "custom_cuda_extension", "removal", True, None,
        "tcnn is gone; cleanup() is called after every guidance load and would NameError"),
  ])

E("h26_threestudio_networks", "threestudio/models/networks.py", "kernel_rewrite",
  "threestudio/models/networks.py (tcnn encodings/MLPs, ProgressiveBandHashGrid, VanillaMLP)",
  [
      C("import tinycudann as tcnn", "custom_cuda_extension", "replace", True,
        "tcnn = None  # tiny-cuda-nn has no NPU build; hash grid comes from HashGridTorch",
        "ImportError on NPU"),
      C("self.encoding = TCNNEncoding(in_channels, encoding_config, dtype=dtype)", "custom_cuda_extension", "replace", True,
        "self.encoding = HashGridTorch(in_channels, encoding_config)  # pure-PyTorch multiresolution hash encoding",
        "ProgressiveBandHashGrid (used by the dreamfusion configs) is a mask over a tcnn hash grid"),
      C("device=get_rank(),", "device_type", "replace", True,
        "device=f\"npu:{get_rank()}\",", "an int device means cuda:<n>"),
      C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.autocast(\"npu\", enabled=False):",
        "cuda-only opt-out does not leave an NPU autocast region; matters only if the NPU precision plugin autocasts on 'npu' (unconfirmed)"),
      C("with torch.cuda.amp.autocast(enabled=False):  # keep the SDF MLP in fp32", "amp", "replace", False,
        "with torch.autocast(\"npu\", enabled=False):  # keep the SDF MLP in fp32",
        "same as VanillaMLP (unconfirmed)"),
  ])

E("h27_threestudio_sd_guidance", "threestudio/models/guidance/stable_diffusion_guidance.py", "device_branch_or_abstraction",
  "threestudio stable_diffusion_guidance.py (SDS with diffusers StableDiffusionPipeline)",
  [
      C("self.pipe.enable_sequential_cpu_offload()", "device_type", "replace", False,
        "self.pipe.enable_sequential_cpu_offload(device=self.device)",
        "opt-in (default False); diffusers offload targets a CUDA device by default (unconfirmed for the pinned diffusers)"),
      C("=@torch.cuda.amp.autocast(enabled=False)", "amp", "replace", False,
        "@torch.autocast(\"npu\", enabled=False)",
        "no tensor math inside set_min_max_steps; harmless no-op either way"),
      C("@torch.cuda.amp.autocast(enabled=False)  # the UNet runs", "amp", "replace", False,
        "@torch.autocast(\"npu\", enabled=False)  # the UNet runs in weights_dtype, not under AMP",
        "cuda-only opt-out; matters only if the NPU precision plugin autocasts on 'npu' (unconfirmed)"),
      C("@torch.cuda.amp.autocast(enabled=False)  # VAE encode", "amp", "replace", False,
        "@torch.autocast(\"npu\", enabled=False)  # VAE encode in weights_dtype", "as above (unconfirmed)"),
      C("@torch.cuda.amp.autocast(enabled=False)  # VAE decode", "amp", "replace", False,
        "@torch.autocast(\"npu\", enabled=False)  # VAE decode in weights_dtype", "as above (unconfirmed)"),
  ])

E("h28_threestudio_rasterize", "threestudio/utils/rasterize.py", "kernel_rewrite",
  "threestudio/utils/rasterize.py (NVDiffRasterizerContext: gl / cuda contexts)",
  [
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", False,
        "from threestudio.utils import npu_raster  # project rasterizer replacing nvdiffrast",
        "the import succeeds; the contexts and kernel calls below are what fail"),
      C("def initialize_context(self, context_type: str, device: torch.device) -> Union[dr.RasterizeGLContext, dr.RasterizeCudaContext]:", "custom_cuda_extension", "replace", False,
        "def initialize_context(self, context_type: str, device: torch.device):",
        "annotation is evaluated at class creation and names nvdiffrast classes; breaks only once the import is replaced"),
      C("return dr.RasterizeGLContext(device=device)", "custom_cuda_extension", "replace", True,
        "return npu_raster.RasterContext(device=device)",
        "nvdiffrast's GL context still needs CUDA-GL interop and the CUDA plugin"),
      C("return dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", True,
        "return npu_raster.RasterContext(device=device)", "CUDA rasterizer context"),
      C("return dr.rasterize(self.ctx, pos.float(), tri.int(), resolution, grad_db=True)", "custom_cuda_extension", "replace", True,
        "return npu_raster.rasterize(self.ctx, pos.float(), tri.int(), resolution, grad_db=True)", "CUDA kernel"),
      C("return dr.antialias(color.float(), rast, pos.float(), tri.int())", "custom_cuda_extension", "replace", True,
        "return npu_raster.antialias(color.float(), rast, pos.float(), tri.int())", "CUDA kernel"),
      C("return dr.interpolate(", "custom_cuda_extension", "replace", True,
        "return npu_raster.interpolate(", "CUDA kernel"),
  ])

E("h29_threestudio_nerf_renderer", "threestudio/models/renderers/nerf_volume_renderer.py", "kernel_rewrite",
  "threestudio nerf_volume_renderer.py (nerfacc OccGridEstimator / PropNet / importance sampling)",
  [
      C("estimator: str = \"occgrid\"", "unsupported_op_workaround", "replace", True,
        "estimator: str = \"importance\"",
        "occgrid sampling runs nerfacc's CUDA traverse_grids kernel; threestudio's importance estimator samples with torch ops"),
      C("weights_, trans_, _ = nerfacc.render_weight_from_density(", "unsupported_op_workaround", "replace", False,
        "weights_, trans_, _ = nerfacc.render_weight_from_density(  # dense [n_rays, n_samples] inputs, no ray_indices",
        "packed (ray_indices) scans may go through nerfacc's CUDA scan kernels; importance samples are regular, so the dense torch path can be used (unconfirmed)"),
  ])

E("h30_threestudio_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "threestudio docker/Dockerfile (nvidia/cuda devel base, TCNN_CUDA_ARCHITECTURES, tiny-cuda-nn build)",
  [
      C("FROM nvidia/cuda:11.8.0-devel-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (its ENV lines replace sourcing set_env.sh)"),
      C("=ENV TORCH_CUDA_ARCH_LIST=\"6.0 6.1 7.0 7.5 8.0 8.6 8.9 9.0+PTX\"", "env_var", "removal", False, None, "nvcc arch list; nothing is built with nvcc any more"),
      C("ENV TCNN_CUDA_ARCHITECTURES=90;89;86;80;75;70;61;60", "env_var", "removal", False, None, "tiny-cuda-nn build knob"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a CUDA toolkit that the CANN image does not have"),
      C("ENV PATH=${CUDA_HOME}/bin:/home/${USER_NAME}/.local/bin:${PATH}", "env_var", "replace", False,
        "ENV PATH=/home/${USER_NAME}/.local/bin:${PATH}", "drop the CUDA bin dir; harmless if left"),
      C("ENV LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}", "env_var", "removal", False, None,
        "CANN image already sets LD_LIBRARY_PATH; a dangling CUDA entry is harmless"),
      C("ENV LIBRARY_PATH=${CUDA_HOME}/lib64/stubs:${LIBRARY_PATH}", "env_var", "removal", False, None,
        "CUDA link stubs; harmless if left"),
      C("RUN pip install torch==2.0.1+cu118 torchvision==0.15.2+cu118 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
        "cu118 torch build instead of CPU torch + matching torch-npu"),
      C("RUN pip install git+https://github.com/NVlabs/tiny-cuda-nn/@v1.6#subdirectory=bindings/torch", "custom_cuda_extension", "removal", True, None,
        "build needs nvcc; the docker build fails here"),
  ])

E("h31_threestudio_config", "configs/dreamfusion-sd.yaml", "explicit_replacement",
  "threestudio configs/dreamfusion-sd.yaml",
  [
      C("otype: SphericalHarmonics  # tcnn encoding", "custom_cuda_extension", "replace", True,
        "otype: VanillaFrequency  # pure-PyTorch encoding; tcnn is unavailable on NPU",
        "any otype other than VanillaFrequency/ProgressiveBandHashGrid falls through to TCNNEncoding"),
      C("degree: 3", "custom_cuda_extension", "replace", True,
        "n_frequencies: 4",
        "VanillaFrequency reads n_frequencies (KeyError otherwise)"),
  ])

E("h32_threestudio_reqs", "requirements.txt", "explicit_replacement",
  "threestudio requirements.txt",
  [
      C("git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch", "custom_cuda_extension", "removal", True, None,
        "build needs nvcc; pip install -r fails"),
      C("git+https://github.com/NVlabs/nvdiffrast.git", "custom_cuda_extension", "removal", False, None,
        "installs fine but is useless without CUDA once the rasterizer is replaced"),
      C("=xformers", "attention_kernel", "removal", True, None,
        "unpinned: the resolver pulls the newest xformers, which pins a newer CUDA torch and replaces the torch that torch_npu was built for"),
  ])
