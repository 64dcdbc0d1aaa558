# Labels for probe100 (differentiable physics / GPU simulation / graphics-in-the-loop learning).
# One entry per upstream file; one C(...) per line a careful porter would edit for torch_npu.
# Porting assumption used throughout: Warp, Taichi, JAX (Brax/MJX) and Isaac Gym PhysX have no
# Ascend backend, so they run on the host CPU while PyTorch models/tensors live on the NPU;
# nvcc-built extensions (nvdiffrast, kaolin._C CUDA kernels, torch_scatter/torch_cluster CUDA
# kernels, renderutils plugin) have no NPU path and are replaced by torch code or host staging.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# NVIDIA Warp
# ---------------------------------------------------------------------------------------------
E("warp_cloth_throw", "examples/optim/example_cloth_throw.py", "explicit_replacement",
  "NVIDIA Warp examples/optim/example_cloth_throw.py (wp.sim cloth, Tape, CUDA-graph capture)",
  [
      C('self.device = device if device is not None else "cuda:0"', "device_type", "replace", True,
        'self.device = device if device is not None else "cpu"',
        "Warp has no Ascend backend; on an NPU host there is no CUDA device, so wp.sim must run on Warp's CPU device"),
      C('parser.add_argument("--device", type=str, default="cuda:0"', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="cpu", help="Override the default Warp device.")',
        "default Warp device 'cuda:0' does not exist on an NPU host; wp.ScopedDevice('cuda:0') raises"),
      # near-misses: self.use_cuda_graph = wp.get_device(...).is_cuda (already False on cpu), the guarded
      # wp.capture_begin/capture_end, wp.ScopedDevice(args.device), the 'CUDA graph' comment.
  ])

E("warp_torch_bridge", "diffsim/warp_bridge.py", "explicit_replacement",
  "Warp <-> PyTorch autograd bridge (wp.from_torch / wp.to_torch / wp.device_from_torch), as in Warp's torch interop examples",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "file has a __main__ self-test that creates NPU tensors; 'npu' device/torch.npu need torch_npu loaded (explicit import needed before the 2.5.1 autoload)"),
      C("device = wp.device_from_torch(x.device)", "device_type", "replace", True,
        'device = wp.get_device("cpu")',
        "wp.device_from_torch does not know 'npu' tensors; Warp kernels run on the CPU device"),
      C("ctx.x = wp.from_torch(x.contiguous()", "tensor_to_device", "replace", True,
        "ctx.x = wp.from_torch(x.detach().cpu().contiguous(), dtype=wp.vec3, requires_grad=True)",
        "wp.from_torch only aliases CPU/CUDA tensors; NPU tensor must be staged to host"),
      C("ctx.v = wp.from_torch(v.contiguous()", "tensor_to_device", "replace", True,
        "ctx.v = wp.from_torch(v.detach().cpu().contiguous(), dtype=wp.vec3, requires_grad=True)",
        "stage NPU tensor to host for Warp"),
      C("ctx.f = wp.from_torch(f.contiguous().clone()", "tensor_to_device", "replace", True,
        "ctx.f = wp.from_torch(f.detach().cpu().contiguous().clone(), dtype=wp.vec3, requires_grad=True)",
        "stage NPU tensor to host for Warp"),
      C("ctx.inv_mass = wp.from_torch(inv_mass, dtype=float)", "tensor_to_device", "replace", True,
        "ctx.inv_mass = wp.from_torch(inv_mass.cpu(), dtype=float)",
        "inv_mass is a module buffer on the NPU; stage to host"),
      C("return wp.to_torch(ctx.x_new), wp.to_torch(ctx.v_new)", "tensor_to_device", "replace", True,
        "return wp.to_torch(ctx.x_new).to(x.device), wp.to_torch(ctx.v_new).to(x.device)",
        "Warp CPU arrays come back as CPU tensors; mixing them with NPU parameters raises a device mismatch"),
      C("ctx.x_new.grad = wp.from_torch(grad_x_new.contiguous()", "tensor_to_device", "replace", True,
        "ctx.x_new.grad = wp.from_torch(grad_x_new.cpu().contiguous(), dtype=wp.vec3)",
        "incoming gradient is on the NPU"),
      C("ctx.v_new.grad = wp.from_torch(grad_v_new.contiguous()", "tensor_to_device", "replace", True,
        "ctx.v_new.grad = wp.from_torch(grad_v_new.cpu().contiguous(), dtype=wp.vec3)",
        "incoming gradient is on the NPU"),
      C("gx = wp.to_torch(ctx.tape.gradients[ctx.x])", "tensor_to_device", "replace", True,
        "gx = wp.to_torch(ctx.tape.gradients[ctx.x]).to(grad_x_new.device)",
        "autograd rejects a gradient on a different device than its input"),
      C("gv = wp.to_torch(ctx.tape.gradients[ctx.v])", "tensor_to_device", "replace", True,
        "gv = wp.to_torch(ctx.tape.gradients[ctx.v]).to(grad_x_new.device)",
        "gradient must return to the NPU"),
      C("gf = wp.to_torch(ctx.tape.gradients[ctx.f])", "tensor_to_device", "replace", True,
        "gf = wp.to_torch(ctx.tape.gradients[ctx.f]).to(grad_x_new.device)",
        "gradient must return to the NPU"),
      C('mu: float = 0.5, device: str = "cuda"):', "device_type", "replace", True,
        'ke: float = 1.0e4, kd: float = 1.0e2, mu: float = 0.5, device: str = "npu"):',
        "default device of the public ParticleSimulator constructor"),
      C("pts = wp.from_torch(points.contiguous(), dtype=wp.vec3)", "tensor_to_device", "replace", True,
        "pts = wp.from_torch(points.detach().cpu().contiguous(), dtype=wp.vec3)",
        "Warp BVH mesh is built on the CPU device"),
      C("idx = wp.from_torch(indices.to(torch.int32)", "tensor_to_device", "replace", True,
        "idx = wp.from_torch(indices.to(device='cpu', dtype=torch.int32).flatten().contiguous(), dtype=wp.int32)",
        "stage indices to host"),
      C("out = torch.empty(queries.shape[0], dtype=torch.float32, device=queries.device)", "tensor_to_device", "replace", True,
        'out = torch.empty(queries.shape[0], dtype=torch.float32, device="cpu")',
        "output buffer must be host memory Warp can write"),
      C("inputs=[mesh.id, wp.from_torch(queries.contiguous()", "tensor_to_device", "replace", True,
        "inputs=[mesh.id, wp.from_torch(queries.cpu().contiguous(), dtype=wp.vec3), max_dist],",
        "stage query points to host"),
      C("device=wp.device_from_torch(queries.device),", "device_type", "replace", True,
        'device="cpu",', "wp.device_from_torch cannot map an npu device"),
      C("=return out", "tensor_to_device", "replace", True, "return out.to(queries.device)",
        "hand the SDF back on the caller's (NPU) device"),
      C('dev = torch.device("cuda:0")', "device_type", "replace", True, 'dev = torch.device("npu:0")',
        "self-test device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize raises on a torch build without CUDA"),
      # near-misses: init_warp's '"cuda:0" if torch.cuda.is_available() else "cpu"' already yields cpu on an NPU host
      # (the Warp device), torch_device_for(), wp.zeros(..., device=device), docstring 'on the GPU'.
  ])

# ---------------------------------------------------------------------------------------------
# Isaac Gym / IsaacGymEnvs / rl_games
# ---------------------------------------------------------------------------------------------
E("igenvs_train", "isaacgymenvs/train.py", "explicit_replacement",
  "IsaacGymEnvs isaacgymenvs/train.py (Hydra launcher, rl_games Runner, multi_gpu via torchrun)",
  [
      C("=import isaacgym", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # after isaacgym, which must be imported before torch",
        "entry point; rl_device becomes an npu device, which needs torch_npu loaded (isaacgym must stay before torch)"),
      C("cfg.sim_device = f'cuda:{local_rank}'", "device_type", "replace", True, "cfg.sim_device = 'cpu'",
        "PhysX GPU simulation needs CUDA; on the NPU host physics runs on CPU PhysX"),
      C("cfg.rl_device = f'cuda:{local_rank}'", "device_type", "replace", True, "cfg.rl_device = f'npu:{local_rank}'",
        "policy/PPO tensors go to the rank's NPU"),
      # near-misses: cfg.graphics_device_id = local_rank (VecTask sets -1 when headless without cameras),
      # 'global rank of the GPU' comment, RLGPU names, print(f'Using rl_device: ...').
  ])

E("igenvs_config", "isaacgymenvs/cfg/config.yaml", "explicit_replacement",
  "IsaacGymEnvs isaacgymenvs/cfg/config.yaml (Hydra root config: pipeline, sim_device, rl_device)",
  [
      C("pipeline: 'gpu'", "device_type", "replace", False, "pipeline: 'cpu'",
        "VecTask forces the CPU pipeline (with a warning) when sim_device is not CUDA; edit for clarity"),
      C("sim_device: 'cuda:0'", "device_type", "replace", True, "sim_device: 'cpu'",
        "no CUDA device for PhysX on the NPU host"),
      C("rl_device: 'cuda:0'", "device_type", "replace", True, "rl_device: 'npu:0'",
        "RL tensors on the NPU"),
      # near-misses: graphics_device_id: 0 (reset to -1 by VecTask when headless), 'for CPU PhysX only' comment,
      # multi_gpu: False.
  ])

E("igenvs_task_ant_yaml", "isaacgymenvs/cfg/task/Ant.yaml", "device_branch_or_abstraction",
  "IsaacGymEnvs isaacgymenvs/cfg/task/Ant.yaml (task config with PhysX GPU settings derived from sim_device)",
  [
      # deliberately no labels: use_gpu: ${contains:"cuda",${....sim_device}} and
      # use_gpu_pipeline: ${eq:${...pipeline},"gpu"} follow the root config; max_gpu_contact_pairs is unused on CPU PhysX.
  ])

E("igenvs_vec_task", "isaacgymenvs/tasks/base/vec_task.py", "device_branch_or_abstraction",
  "IsaacGymEnvs isaacgymenvs/tasks/base/vec_task.py (Env/VecTask base: sim_device parsing, buffers, step)",
  [
      # deliberately no labels: the '"cuda" + ":" + str(self.device_id)' branch is unreachable once sim_device is cpu
      # (it already forces the CPU pipeline); every output is .to(self.rl_device); torch._C._jit_set_profiling_* are
      # harmless; graphics_device_id becomes -1 in headless mode.
  ])

E("igenvs_utils", "isaacgymenvs/utils/utils.py", "explicit_replacement",
  "IsaacGymEnvs isaacgymenvs/utils/utils.py (set_seed, retry, dir helpers) plus GPU-memory/metadata helpers",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "lazy no-op without CUDA; torch.manual_seed above already seeds the NPU generator"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed already seeds all devices"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "memory report silently returns {} on NPU (logging only)"),
      C('"gpu/mem_allocated_gb": torch.cuda.memory_allocated()', "torch_cuda_api", "replace", False,
        '"gpu/mem_allocated_gb": torch.npu.memory_allocated() / 2 ** 30,', "logging only; would report 0"),
      C('"gpu/mem_reserved_gb": torch.cuda.memory_reserved()', "torch_cuda_api", "replace", False,
        '"gpu/mem_reserved_gb": torch.npu.memory_reserved() / 2 ** 30,', "logging only; would report 0"),
      C('"gpu/max_mem_allocated_gb": torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
        '"gpu/max_mem_allocated_gb": torch.npu.max_memory_allocated() / 2 ** 30,', "logging only; would report 0"),
      C('"num_gpus": torch.cuda.device_count(),', "torch_cuda_api", "replace", False,
        '"num_gpus": torch.npu.device_count(),', "metadata only; would record 0"),
      # near-misses: CUBLAS_WORKSPACE_CONFIG and torch.backends.cudnn.* flags (no-ops, left alone), nvidia-smi query
      # wrapped in try/except FileNotFoundError, "cuda": torch.version.cuda (None, harmless).
  ])

E("rlgames_a2c_common", "rl_games/common/a2c_common.py", "explicit_replacement",
  "rl_games rl_games/common/a2c_common.py (A2CBase/ContinuousA2CBase: multi-GPU init, GradScaler, autocast)",
  [
      C('dist.init_process_group("nccl", rank=self.global_rank', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", rank=self.global_rank, world_size=self.world_size)',
        "NCCL is unavailable on Ascend; HCCL is the collective backend"),
      C("self.device_name = 'cuda:' + str(self.local_rank)", "device_type", "replace", True,
        "self.device_name = 'npu:' + str(self.local_rank)", "per-rank training device"),
      C("self.ppo_device = config.get('device', 'cuda:0')", "device_type", "replace", False,
        "self.ppo_device = config.get('device', 'npu:0')",
        "default only used when the config omits 'device' (IsaacGymEnvs always sets it from rl_device)"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.mixed_precision)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.mixed_precision)",
        "CUDA GradScaler disables itself without CUDA; must move together with autocast"),
      C("with torch.cuda.amp.autocast(enabled=self.mixed_precision):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.mixed_precision):",
        "cuda autocast is silently disabled on NPU tensors, so mixed_precision=True trains in fp32"),
      # near-misses: '# todo introduce device instead of cuda()', .to(self.ppo_device) everywhere, dist.all_reduce.
  ])

E("rlgames_player", "rl_games/common/player.py", "explicit_replacement",
  "rl_games rl_games/common/player.py (BasePlayer: device_name, obs casting, evaluation loop)",
  [
      C("self.device_name = self.config.get('device_name', 'cuda')", "device_type", "replace", True,
        "self.device_name = self.config.get('device_name', 'npu')",
        "IsaacGymEnvs never sets device_name, so the 'cuda' default is what the player uses"),
      C("state = torch.load(fn, map_location=lambda storage, loc: storage.cuda(", "tensor_to_device", "replace", True,
        "state = torch.load(fn, map_location=self.device)", "storage.cuda() fails without CUDA"),
      # near-misses: self.use_cuda = True (unused flag), 'fps (env steps / s on GPU)' message, .to(self.device).
  ])

# ---------------------------------------------------------------------------------------------
# Kaolin
# ---------------------------------------------------------------------------------------------
E("kaolin_dibr_fit", "examples/tutorial/dibr_tutorial.py", "kernel_rewrite",
  "Kaolin examples/tutorial/dibr_tutorial (DIB-R mesh + texture fitting, converted from the notebook)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('device = torch.device("cuda", args.gpu)', "device_type", "replace", True,
        'device = torch.device("npu", args.gpu)', "training device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "torch.cuda.set_device fails without CUDA"),
      C("shuffle=True, pin_memory=True)", "pin_memory", "replace", False,
        'shuffle=True, pin_memory=True, pin_memory_device="npu")',
        "pinning targets CUDA by default; without it the loader just skips pinning (perf only, unconfirmed)"),
      C("vertice_shift = torch.zeros((3,), dtype=torch.float, device='cuda',", "device_type", "replace", True,
        "vertice_shift = torch.zeros((3,), dtype=torch.float, device=device,", "hard-coded cuda"),
      C("adj_sparse = kal.ops.mesh.adjacency_matrix(nb_vertices, faces).to(device)", "unsupported_op_workaround", "replace", False,
        "adj_sparse = kal.ops.mesh.adjacency_matrix(nb_vertices, faces.cpu()).to_dense().to(device)",
        "densify the sparse COO adjacency on the host; sparse ops without NPU kernels raise (unconfirmed for this exact path)"),
      C("gt_image = data['rgb'].cuda()", "tensor_to_device", "replace", True, "gt_image = data['rgb'].to(device)", ".cuda()"),
      C("gt_mask = data['semantic'].cuda()", "tensor_to_device", "replace", True, "gt_mask = data['semantic'].to(device)", ".cuda()"),
      C("cam_transform = data['metadata']['cam_transform'].cuda()", "tensor_to_device", "replace", True,
        "cam_transform = data['metadata']['cam_transform'].to(device)", ".cuda()"),
      C("cam_proj = data['metadata']['cam_proj'].cuda()", "tensor_to_device", "replace", True,
        "cam_proj = data['metadata']['cam_proj'].to(device)", ".cuda()"),
      C("torch.ones((batch_size, nb_faces, 3, 1), device='cuda')", "device_type", "replace", True,
        "torch.ones((batch_size, nb_faces, 3, 1), device=device)", "hard-coded cuda"),
      C("=image_features, soft_mask, face_idx = kal.render.mesh.dibr_rasterization(", "custom_cuda_extension", "replace", True,
        "image_features, soft_mask, face_idx = soft_rasterize_torch(",
        "DIB-R rasterization is a kaolin._C CUDA kernel (all rast_backends are CUDA); needs a torch re-implementation"),
      C("rast_backend='cuda', sigmainv=args.sigmainv)", "device_type", "replace", True, "sigmainv=args.sigmainv)",
        "no CUDA/nvdiffrast rasterization backend on NPU"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
      C("cam_transform = torch.stack([data['metadata']['cam_transform'] for data in data_batch], dim=0).cuda()",
        "tensor_to_device", "replace", True,
        "cam_transform = torch.stack([data['metadata']['cam_transform'] for data in data_batch], dim=0).to(vertices.device)", ".cuda()"),
      C("cam_proj = torch.stack([data['metadata']['cam_proj'] for data in data_batch], dim=0).cuda()",
        "tensor_to_device", "replace", True,
        "cam_proj = torch.stack([data['metadata']['cam_proj'] for data in data_batch], dim=0).to(vertices.device)", ".cuda()"),
      C("dibr_rasterization(256, 256,", "custom_cuda_extension", "replace", True,
        "image_features, soft_mask, face_idx = soft_rasterize_torch(256, 256,", "same CUDA-only DIB-R kernel in the visualisation pass"),
      # near-misses: '--gpu' help text, prepare_vertices / index_vertices_by_faces / texture_mapping / mask_iou (pure torch),
      # torch.ones(..., device=vertices.device), .cpu() for timelapse.
  ])

E("kaolin_spc_render", "examples/recipes/spc/spc_raytrace_render.py", "kernel_rewrite",
  "Kaolin examples/recipes/spc (Structured Point Cloud build + unbatched_raytrace rendering)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("ridx, pidx, depth = unbatched_raytrace(", "custom_cuda_extension", "replace", True,
        "ridx, pidx, depth = octree_raytrace_torch(",
        "kaolin SPC ray tracing is a CUDA kernel with no NPU (or CPU) path; needs a torch rewrite"),
      C("    torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "    torch.npu.synchronize()", "raises without CUDA"),
      C("first_hits = mark_pack_boundaries(ridx)", "custom_cuda_extension", "replace", True,
        "first_hits = torch.cat([torch.ones_like(ridx[:1], dtype=torch.bool), ridx[1:] != ridx[:-1]])",
        "kaolin._C kernel; trivial to express in torch"),
      C('pts = torch.from_numpy(data["points"]).float().cuda()', "tensor_to_device", "replace", True,
        'pts = torch.from_numpy(data["points"]).float().to(device)', ".cuda()"),
      C('colors = torch.from_numpy(data["colors"]).float().cuda()', "tensor_to_device", "replace", True,
        'colors = torch.from_numpy(data["colors"]).float().to(device)', ".cuda()"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "would abort the script on an NPU host"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded device"),
      C("octree, ph, pyramid, exsum, feats = build_spc(pts, colors, args.level)", "unsupported_op_workaround", "replace", True,
        "octree, ph, pyramid, exsum, feats = build_spc(pts.cpu(), colors.cpu(), args.level)",
        "kaolin._C SPC construction ops dispatch only on CPU/CUDA tensors; build the octree on the host (CPU kernels assumed, unconfirmed)"),
      C('logger.info("peak GPU memory: %.1f MB", torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
        'logger.info("peak NPU memory: %.1f MB", torch.npu.max_memory_allocated() / 2 ** 20)', "logging only; reports 0"),
      # near-misses: quantize_points (pure torch), 'requires a CUDA device' message, mesh.vertices.to(device),
      # header comment about CUDA kernels.
  ])

E("kaolin_dmtet_fit", "examples/tutorial/dmtet_tutorial.py", "explicit_replacement",
  "Kaolin examples/tutorial/dmtet_tutorial (DMTet fitting with marching tetrahedra + Chamfer distance)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "module-level device used everywhere"),
      C("chamfer = kaolin.metrics.pointcloud.chamfer_distance(", "custom_cuda_extension", "replace", True,
        "chamfer = chunked_chamfer_torch(pred_points, points)  # torch.cdist in chunks",
        "kaolin chamfer_distance calls the sided_distance kaolin._C kernel, which has no NPU path"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "must follow the autocast device (fp16 needs loss scaling)"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.amp):',
        "cuda autocast does not apply to NPU tensors (--amp silently ignored)"),
      # near-misses: marching_tetrahedra and sample_points (pure torch), scatter_add_ in the Laplacian (NPU kernel exists),
      # tensors created with device=device.
  ])

E("kaolin_setup", "setup.py", "kernel_rewrite",
  "Kaolin setup.py (CUDAExtension/CppExtension selection, FORCE_CUDA, TORCH_CUDA_ARCH_LIST)",
  [
      C("=if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "add_branch", False,
        "elif os.getenv('BUILD_NPU', '0') == '1':  # NpuExtension from torch_npu.utils.cpp_extension once Ascend C kernels exist",
        "on an NPU host this falls through to the CPU-only CppExtension build, which installs; an NPU build needs rewritten kernels"),
      # near-misses: CUDA_HOME import (None), cudart_static rewrite (no-op for CppExtension), nvcc flags in the
      # CUDA branch, FORCE_CUDA warning text.
  ])

# ---------------------------------------------------------------------------------------------
# nvdiffrast / nvdiffrec
# ---------------------------------------------------------------------------------------------
E("nvdiffrast_pose", "samples/torch/pose.py", "kernel_rewrite",
  "nvdiffrast samples/torch/pose.py (cube pose fitting with RasterizeCudaContext/RasterizeGLContext)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", True,
        "import torch_rasterizer as dr  # torch re-implementation exposing rasterize/interpolate/antialias",
        "nvdiffrast's ops are CUDA (or OpenGL+CUDA) plugins with no NPU/CPU backend"),
      C("torch.tensor([[0], [0], [0]], dtype=torch.float32).cuda()], dim=1)", "tensor_to_device", "replace", True,
        "rr = torch.cat([rr, torch.zeros((3, 1), dtype=torch.float32, device=q.device)], dim=1) # Pad right column.", ".cuda()"),
      C("torch.tensor([[0, 0, 0, 1]], dtype=torch.float32).cuda()], dim=0)", "tensor_to_device", "replace", True,
        "rr = torch.cat([rr, torch.tensor([[0, 0, 0, 1]], dtype=torch.float32, device=q.device)], dim=0)  # Pad bottom row.", ".cuda()"),
      C("t_mtx = torch.from_numpy(mtx).cuda()", "tensor_to_device", "replace", True,
        "t_mtx = torch.from_numpy(mtx).to(pos.device) if isinstance(mtx, np.ndarray) else mtx", ".cuda()"),
      C("posw = torch.cat([pos, torch.ones([pos.shape[0], 1]).cuda()], axis=1)", "tensor_to_device", "replace", True,
        "posw = torch.cat([pos, torch.ones([pos.shape[0], 1], device=pos.device)], axis=1)", ".cuda()"),
      C("pos_idx = torch.from_numpy(pos_idx.astype(np.int32)).cuda()", "tensor_to_device", "replace", True,
        "pos_idx = torch.from_numpy(pos_idx.astype(np.int32)).npu()", ".cuda()"),
      C("col_idx = torch.from_numpy(col_idx.astype(np.int32)).cuda()", "tensor_to_device", "replace", True,
        "col_idx = torch.from_numpy(col_idx.astype(np.int32)).npu()", ".cuda()"),
      C("vtx_pos = torch.from_numpy(pos.astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
        "vtx_pos = torch.from_numpy(pos.astype(np.float32)).npu()", ".cuda()"),
      C("vtx_col = torch.from_numpy(col.astype(np.float32)).cuda()", "tensor_to_device", "replace", True,
        "vtx_col = torch.from_numpy(col.astype(np.float32)).npu()", ".cuda()"),
      C("glctx = dr.RasterizeGLContext() if use_opengl else dr.RasterizeCudaContext()", "custom_cuda_extension", "replace", True,
        "glctx = dr.RasterizeTorchContext(device='npu')",
        "both nvdiffrast contexts need CUDA (the GL one uses CUDA-GL interop)"),
      C("pose_target = torch.tensor(q_rnd(), device='cuda')", "device_type", "replace", True,
        "pose_target = torch.tensor(q_rnd(), device='npu')", "hard-coded cuda"),
      C("dtype=torch.float32, device='cuda', requires_grad=True)", "device_type", "replace", True,
        "pose_opt = torch.tensor(pose_init / np.sum(pose_init**2)**0.5, dtype=torch.float32, device='npu', requires_grad=True)",
        "hard-coded cuda"),
      C("astype(np.float32), device='cuda')", "device_type", "replace", True,
        "mvp = torch.tensor(np.matmul(util.projection(x=0.4), util.translate(0, 0, -3.5)).astype(np.float32), device='npu')",
        "hard-coded cuda"),
      # near-misses: dr.rasterize/dr.interpolate/dr.antialias call sites (unchanged once 'dr' is an API-compatible
      # torch rasterizer), '--opengl' flag, q_angle_deg's .cpu().
  ])

E("nvdiffrec_renderutils_ops", "render/renderutils/ops.py", "kernel_rewrite",
  "nvdiffrec render/renderutils/ops.py (JIT-built CUDA plugin via cpp_extension.load with use_python reference paths)",
  [
      C("torch.utils.cpp_extension.load(name='renderutils_plugin'", "custom_cuda_extension", "replace", False,
        "raise RuntimeError('renderutils CUDA plugin is not available on Ascend NPU; call with use_python=True')",
        "dead once the use_python defaults flip; cpp_extension.load / nvcc are unavailable on the NPU host (fail loudly)"),
      C("def _fresnel_shlick(f0, f90, cosTheta, use_python=False):", "custom_cuda_extension", "replace", True,
        "def _fresnel_shlick(f0, f90, cosTheta, use_python=True):", "default path calls the CUDA plugin"),
      C("def _ndf_ggx(alphaSqr, cosTheta, use_python=False):", "custom_cuda_extension", "replace", True,
        "def _ndf_ggx(alphaSqr, cosTheta, use_python=True):", "default path calls the CUDA plugin"),
      C("two_sided_shading=True, opengl=True, use_python=False):", "custom_cuda_extension", "replace", True,
        "def prepare_shading_normal(pos, view_pos, perturbed_nrm, smooth_nrm, smooth_tng, geom_nrm, two_sided_shading=True, opengl=True, use_python=True):",
        "default path calls the CUDA plugin"),
      C('min_roughness=0.08, bsdf="lambert", use_python=False):', "custom_cuda_extension", "replace", True,
        'def pbr_bsdf(kd, arm, pos, nrm, view_pos, light_pos, min_roughness=0.08, bsdf="lambert", use_python=True):',
        "default path calls the CUDA plugin"),
      C("def xfm_points(points, matrix, use_python=False):", "custom_cuda_extension", "replace", True,
        "def xfm_points(points, matrix, use_python=True):", "default path calls the CUDA plugin"),
      C("def xfm_vectors(vectors, matrix, use_python=False):", "custom_cuda_extension", "replace", True,
        "def xfm_vectors(vectors, matrix, use_python=True):", "default path calls the CUDA plugin"),
      C("perturbed_nrm = torch.tensor([0, 0, 1], dtype=torch.float32, device='cuda'", "device_type", "replace", True,
        "perturbed_nrm = torch.tensor([0, 0, 1], dtype=torch.float32, device=pos.device, requires_grad=False)[None, None, None, ...]",
        "hard-coded cuda"),
      # near-misses (inside the now-dead _get_plugin): TORCH_CUDA_ARCH_LIST='' , -lcuda/-lnvrtc ldflags, .cu source list.
  ])

# ---------------------------------------------------------------------------------------------
# Taichi
# ---------------------------------------------------------------------------------------------
E("difftaichi_mass_spring", "examples/mass_spring.py", "explicit_replacement",
  "DiffTaichi examples/mass_spring.py (differentiable mass-spring robot controller with ti.ad.Tape)",
  [
      C("ti.init(arch=ti.gpu, default_fp=real", "device_type", "replace", False,
        "ti.init(arch=ti.cpu, default_fp=real, flatten_if=True)",
        "Taichi has no Ascend backend; ti.gpu falls back to CPU with a warning when no GPU backend is found (unconfirmed in knowledge)"),
      # near-misses: everything else is pure Taichi/numpy (no torch), GUI, 'ti.static' loops.
  ])

E("taichi_mpm_torch", "plb/engine/taichi_torch_layer.py", "explicit_replacement",
  "PlasticineLab-style differentiable MLS-MPM (Taichi fields + ti.ad) wrapped as a torch.autograd.Function",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('ARCH = os.environ.get("PLB_TI_ARCH", "cuda")', "device_type", "replace", False,
        'ARCH = os.environ.get("PLB_TI_ARCH", "cpu")',
        "ti.cuda without a CUDA driver falls back to CPU with a warning (unconfirmed); make the CPU arch explicit"),
      C("sim.action.from_torch(actions.detach().contiguous())", "tensor_to_device", "replace", False,
        "sim.action.from_torch(actions.detach().cpu().contiguous())",
        "actions live on the NPU; recent Taichi copies non-CPU torch tensors through the host itself (unconfirmed), so staging is explicit but may not be needed"),
      C("sim.x.from_torch(x0.detach()", "tensor_to_device", "replace", False,
        "sim.x.from_torch(x0.detach().cpu().unsqueeze(0).expand(sim.steps + 1, -1, -1).contiguous())",
        "same as above for the initial particle positions"),
      C('grad_actions = sim.action.grad.to_torch(device="cuda:0") * grad_out', "device_type", "replace", True,
        "grad_actions = sim.action.grad.to_torch(device=grad_out.device) * grad_out",
        "to_torch(device='cuda:0') fails without CUDA; gradient must land on the NPU"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")', "policy device"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "raises without CUDA"),
      # near-misses: torch.tensor(sim.loss[None], device=ctx.device), x0.to(device, non_blocking=True), ti.sync(),
      # the arch_map dict, device_memory_GB (ignored on CPU).
  ])

# ---------------------------------------------------------------------------------------------
# Brax / MuJoCo MJX (JAX physics, PyTorch policy, DLPack bridge)
# ---------------------------------------------------------------------------------------------
E("brax_torch_io", "brax/io/torch.py", "explicit_replacement",
  "Brax brax/io/torch.py (torch_to_jax / jax_to_torch via DLPack, singledispatch)",
  [
      C("tensor = torch_dlpack.to_dlpack(value.contiguous())", "tensor_to_device", "replace", True,
        "tensor = torch_dlpack.to_dlpack(value.detach().cpu().contiguous())",
        "torch.utils.dlpack.to_dlpack is unsupported for NPU tensors; JAX runs on CPU, so stage to host first"),
      C("  if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "  if torch.npu.is_available():",
        "default wrapper device silently becomes CPU on an NPU host"),
      C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
        'return torch.device("npu", torch.npu.current_device())', "default wrapper device"),
      # near-misses: from_dlpack of a CPU jax array (works) followed by tensor.to(device=device);
      # jax_device_for(): an npu torch device already maps to jax.devices("cpu") (the 'cuda' branch is unreachable).
  ])

E("brax_ppo_torch", "notebooks/training_torch.py", "transfer_to_npu",
  "Brax notebooks/training_torch.ipynb (PPO in PyTorch over a JAX Brax env, converted to a script)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "transfer_to_npu port: torch_npu first"),
      C("=from torch import nn", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu",
        "rewrites device='cuda' strings, .to('cuda') and torch.cuda.get_device_name for this script"),
      # with transfer_to_npu the 'cuda' strings below are rewritten at run time and deliberately left unlabelled:
      # v = torch.ones(1, device='cuda'), device: str = 'cuda', torch.cuda.get_device_name(0).
      # torch.jit.script(agent) becomes identity under transfer_to_npu (documented, fine here).
      # XLA_PYTHON_CLIENT_PREALLOCATE is a JAX-GPU setting, harmless with CPU JAX.
  ])

E("mjx_torch_vecenv", "mjx_torch/vec_env.py", "explicit_replacement",
  "MuJoCo MJX batched env (jax.jit/vmap mjx.step) bridged to a PyTorch policy through DLPack",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "has a __main__ benchmark"),
      C('torch_device: str = "cuda:0"', "device_type", "replace", True, 'torch_device: str = "npu:0"', "policy device default"),
      C("return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))", "tensor_to_device", "replace", True,
        "return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x)).to(_TORCH_DEVICE, non_blocking=True)",
        "CPU JAX yields CPU tensors; the NPU policy and self._t would see a device mismatch"),
      C("return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))", "tensor_to_device", "replace", True,
        "return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t.detach().cpu().contiguous()))",
        "to_dlpack is unsupported for NPU tensors"),
      C('self.jax_device = jax.devices("gpu")[0]', "device_type", "replace", True, 'self.jax_device = jax.devices("cpu")[0]',
        "JAX has no GPU (or NPU) backend on the host; jax.devices('gpu') raises"),
      C("torch.nn.Linear(256, env.act_dim)).cuda()", "tensor_to_device", "replace", True,
        "torch.nn.Linear(256, env.act_dim)).to(env.device)", ".cuda()"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
      # near-misses: MUJOCO_GL=egl (render() only), XLA_FLAGS xla_gpu_* (ignored by CPU XLA), mask.cpu().numpy(),
      # torch.zeros(..., device=self.device).
  ])

# ---------------------------------------------------------------------------------------------
# Learned simulators (GNS, MeshGraphNets)
# ---------------------------------------------------------------------------------------------
E("gns_train", "gns/train.py", "explicit_replacement",
  "geoelements/gns gns/train.py (absl flags, DDP via mp.spawn, rollout / train modes)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C('serial_simulator = _get_simulator(metadata, flags["noise_std"], flags["noise_std"], rank)', "tensor_to_device", "replace", True,
        'serial_simulator = _get_simulator(metadata, flags["noise_std"], flags["noise_std"], f"npu:{rank}")',
        "an int device means CUDA index for .to(); normalization stats would go to cuda:rank"),
      C("simulator = DDP(serial_simulator.to(rank)", "tensor_to_device", "replace", True,
        'simulator = DDP(serial_simulator.to(f"npu:{rank}"), device_ids=[rank], output_device=rank)',
        "Module.to(int) targets cuda:int"),
      C('scaler = torch.cuda.amp.GradScaler(enabled=flags["amp"])', "amp", "replace", True,
        'scaler = torch.npu.amp.GradScaler(enabled=flags["amp"])', "must follow autocast onto the NPU"),
      C('map_location=f"cuda:{rank}")', "device_type", "replace", True,
        'train_state = torch.load(flags["model_path"] + flags["train_state_file"], map_location=f"npu:{rank}")',
        "map_location cuda fails without CUDA"),
      C("optimizer_to(optimizer, rank)", "tensor_to_device", "replace", True, 'optimizer_to(optimizer, f"npu:{rank}")',
        "int device -> cuda"),
      C("=simulator.to(rank)", "tensor_to_device", "replace", True, 'simulator.to(f"npu:{rank}")', "int device -> cuda"),
      C("=position.to(rank)", "tensor_to_device", "replace", True, 'position = position.to(f"npu:{rank}")',
        "Tensor.to(int) is a CUDA transfer and raises (result was discarded upstream anyway)"),
      C("=particle_type.to(rank)", "tensor_to_device", "replace", True, 'particle_type = particle_type.to(f"npu:{rank}")', "int device -> cuda"),
      C("=n_particles_per_example.to(rank)", "tensor_to_device", "replace", True,
        'n_particles_per_example = n_particles_per_example.to(f"npu:{rank}")', "int device -> cuda"),
      C("=labels.to(rank)", "tensor_to_device", "replace", True, 'labels = labels.to(f"npu:{rank}")', "int device -> cuda"),
      C('noise_std_last_step=flags["noise_std"]).to(rank)', "tensor_to_device", "replace", True,
        'sampled_noise = noise_utils.get_random_walk_noise_for_position_sequence(position, noise_std_last_step=flags["noise_std"]).to(f"npu:{rank}")',
        "int device -> cuda"),
      C("non_kinematic_mask = (particle_type != KINEMATIC_PARTICLE_ID).clone().detach().to(rank)", "tensor_to_device", "replace", True,
        'non_kinematic_mask = (particle_type != KINEMATIC_PARTICLE_ID).clone().detach().to(f"npu:{rank}")', "int device -> cuda"),
      C('with torch.cuda.amp.autocast(enabled=flags["amp"]):', "amp", "replace", True,
        'with torch.npu.amp.autocast(enabled=flags["amp"]):', "cuda autocast silently disabled for NPU tensors"),
      C("next_positions=labels.to(rank),", "tensor_to_device", "replace", True, 'next_positions=labels.to(f"npu:{rank}"),', "int device -> cuda"),
      C("position_sequence_noise=sampled_noise.to(rank),", "tensor_to_device", "replace", True,
        'position_sequence_noise=sampled_noise.to(f"npu:{rank}"),', "int device -> cuda"),
      C("position_sequence=position.to(rank),", "tensor_to_device", "replace", True, 'position_sequence=position.to(f"npu:{rank}"),', "int device -> cuda"),
      C("nparticles_per_example=n_particles_per_example.to(rank),", "tensor_to_device", "replace", True,
        'nparticles_per_example=n_particles_per_example.to(f"npu:{rank}"),', "int device -> cuda"),
      C("particle_types=particle_type.to(rank))", "tensor_to_device", "replace", True,
        'particle_types=particle_type.to(f"npu:{rank}"))', "int device -> cuda"),
      C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "world_size = torch.npu.device_count()",
        "returns 0 on an NPU host, so mp.spawn starts no training process"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "rollouts would silently run on CPU"),
      C("if FLAGS.cuda_device_number is not None and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if FLAGS.cuda_device_number is not None and torch.npu.is_available():",
        "the requested device index would be silently ignored"),
      C("device = torch.device(f'cuda:{int(FLAGS.cuda_device_number)}')", "device_type", "replace", True,
        "device = torch.device(f'npu:{int(FLAGS.cuda_device_number)}')", "explicit device index"),
      # near-misses: the two print(f"rank = {rank}, cuda = {torch.cuda.is_available()}") log lines, --cuda_device_number /
      # --n_gpus flag names and help texts, predict()'s .to(device), DDP device_ids=[rank] (ints are fine for DDP).
  ])

E("gns_distribute", "gns/distribute.py", "explicit_replacement",
  "geoelements/gns gns/distribute.py (process-group setup, mp.spawn, DistributedSampler loader)",
  [
      C('def setup(local_rank: int, world_size: int, backend: str = "nccl"):', "dist_backend", "replace", True,
        'def setup(local_rank: int, world_size: int, backend: str = "hccl"):', "train() relies on the default backend"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "NCCL variable is ignored by HCCL; torch_npu watchdog default is already 1"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA; HCCL needs the per-rank device set"),
      C('device=torch.device("cuda", torch.cuda.current_device()))', "device_type", "replace", True,
        'dist.broadcast_object_list(container, src=src, device=torch.device("npu", torch.npu.current_device()))',
        "object broadcast staging device"),
      C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "perf only (unconfirmed how the default pin device behaves under torch_npu)"),
      # near-misses: dist.init_process_group(backend, ...), mp.spawn, docstrings mentioning GPUs/NCCL.
  ])

E("gns_learned_simulator", "gns/learned_simulator.py", "explicit_replacement",
  "geoelements/gns gns/learned_simulator.py (encoder pre-processing with torch_cluster radius_graph)",
  [
      C("edge_index = radius_graph(", "unsupported_op_workaround", "replace", True,
        "edge_index = radius_graph(node_features.cpu(), r=radius, batch=batch_ids.cpu(), loop=add_self_edges, max_num_neighbors=128).to(self._device)",
        "torch_cluster ships only CPU/CUDA kernels; run the neighbour search on the host and move edges back"),
      # near-misses: device="cpu" default, .to(self._device), torch.load(map_location=cpu), 'cuda or cpu' docstring.
  ])

E("mgn_model", "meshgraphnets/model.py", "explicit_replacement",
  "MeshGraphNets PyTorch port (Normalizer, GraphNetBlock with torch_scatter aggregations, cloth model)",
  [
      C('max_accumulations=10 ** 6, std_epsilon=1e-8, device="cuda"):', "device_type", "replace", True,
        'def __init__(self, size, name, max_accumulations=10 ** 6, std_epsilon=1e-8, device="npu"):',
        "ClothModel relies on this default and the statistics are plain tensors (not buffers), so .to(device) never moves them"),
      C("agg, _ = scatter_max(edge_set.features, edge_set.receivers, dim=0, dim_size=num_nodes)", "unsupported_op_workaround", "replace", True,
        "agg = edge_set.features.new_zeros(num_nodes, edge_set.features.shape[-1]).scatter_reduce(0, edge_set.receivers[:, None].expand_as(edge_set.features), edge_set.features, reduce='amax', include_self=False)",
        "torch_scatter.scatter_max is a compiled CPU/CUDA op; torch scatter_reduce has no NPU kernel (marked unsupported in Ascend's API list) and runs through the CPU fallback, slow but correct"),
      # near-misses: scatter_add / scatter_mean (pure-Python torch_scatter on top of scatter_add_), index_select, one_hot.
  ])

E("mgn_train_cloth", "meshgraphnets/train_cloth.py", "explicit_replacement",
  "MeshGraphNets PyTorch cloth trainer (apex FusedAdam, torch.compile, bf16 autocast, CUDA-event timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "guarded by ImportError; if Ascend apex is installed its FusedAdam still needs CUDA kernels (unconfirmed whether import or construction fails)"),
      C("return FusedAdam(model.parameters(), lr=lr, adam_w_mode=False)", "fused_optimizer", "replace", False,
        "return FusedAdam(model.parameters(), lr=lr)", "NpuFusedAdam has no adam_w_mode argument"),
      C("return torch.optim.Adam(model.parameters(), lr=lr, fused=True)", "fused_optimizer", "replace", False,
        "return torch_npu.optim.NpuFusedAdam(model.parameters(), lr=lr)",
        "_fused_adam_ has no NPU kernel (only _fused_adamw_), so fused=True falls back to CPU; perf"),
      C("return {k: (v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}", ".cuda()"),
      C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True, 'device = torch.device(f"npu:{args.gpu}")', "training device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "raises without CUDA"),
      C("torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
        'log.info("training on %s (%s)", device, torch.npu.get_device_name(device))', "raises without CUDA"),
      C("pin_memory=True, persistent_workers=args.workers > 0", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", persistent_workers=args.workers > 0, collate_fn=collate_graphs)', "perf only"),
      C('torch.compile(model.learned_model, mode="max-autotune", dynamic=True)', "compile_mode", "replace", False,
        "model.learned_model = torch.compile(model.learned_model, dynamic=True)",
        "max-autotune relies on Triton autotuning, which is off under torch_npu; default mode (unconfirmed whether max-autotune errors)"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "CUDA Event is a dummy class without CUDA"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "CUDA Event is a dummy class without CUDA"),
      C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.bf16):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=args.bf16):', "--bf16 silently ignored otherwise"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
      C("mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "rejects an npu device argument"),
      # near-misses: torch.backends.cuda.matmul.allow_tf32 / cudnn.allow_tf32 (accepted, no effect), 'using apex FusedAdam' log.
  ])

E("sim_benchmark_tool", "tools/benchmark_rollout.py", "explicit_replacement",
  "Rollout throughput benchmark for a learned simulator (CUDA events, CUDA graphs, NVTX, pynvml, torch.profiler)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler", "torch_cuda_api", "replace", False,
        "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
        "--trace only; torch.profiler records no NPU kernels"),
      C('ap.add_argument("--device", default="cuda:0")', "device_type", "replace", True, 'ap.add_argument("--device", default="npu:0")', "default device"),
      C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True, "_range_id = torch_npu.npu.mstx.range_start(name)",
        "torch.cuda.nvtx is not redirected and raises without a CUDA build (--nvtx)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(_range_id)", "see range_push"),
      C('"name": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True, '"name": torch.npu.get_device_name(device),', "raises without CUDA"),
      C('"capability": ".".join(map(str, torch.cuda.get_device_capability(device))),', "device_capability_check", "removal", True, None,
        "NPU has no compute capability (torch.npu.get_device_capability returns None), so the join raises"),
      C('"total_mem_gb": torch.cuda.get_device_properties(device).total_memory', "torch_cuda_api", "replace", True,
        '"total_mem_gb": torch.npu.get_device_properties(device).total_memory / 2 ** 30,', "total_memory is provided on NPU"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "start = torch.npu.Event(enable_timing=True)", "dummy class without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True, "end = torch.npu.Event(enable_timing=True)", "dummy class without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", "raises without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
      C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", False, "s = torch.npu.Stream()",
        "dummy-class RuntimeError is swallowed by the except, so --cuda-graph silently measures eager mode"),
      C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", False, "s.wait_stream(torch.npu.current_stream())", "graph warm-up stream"),
      C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", False, "with torch.npu.stream(s):", "graph warm-up stream"),
      C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", False, "torch.npu.current_stream().wait_stream(s)", "graph warm-up stream"),
      C("g = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", False, "g = torch.npu.NPUGraph()", "NPUGraph is inference-only, which fits this no_grad step"),
      C("with torch.cuda.graph(g):", "torch_cuda_api", "replace", False, "with torch.npu.graph(g):", "see CUDAGraph"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats(device)",
        "torch.cuda memory APIs reject an npu device"),
      C('"peak_mem_mb": torch.cuda.max_memory_allocated(device)', "torch_cuda_api", "replace", True,
        '"peak_mem_mb": torch.npu.max_memory_allocated(device) / 2 ** 20,', "rejects an npu device"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op without CUDA"),
      C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "--trace only; no device activity recorded otherwise"),
      # near-misses: pynvml block (init fails and _NVML stays False), "cuda": torch.version.cuda, cudnn.version(),
      # torch.backends.cudnn.benchmark, '--cuda-graph' flag name, nsys usage comment.
  ])

# ---------------------------------------------------------------------------------------------
# Packaging / environment / launchers
# ---------------------------------------------------------------------------------------------
E("gns_requirements", "requirements.txt", "explicit_replacement",
  "geoelements/gns requirements.txt with PyTorch CUDA index and PyG extension wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU build of torch (x86) / plain PyPI torch (aarch64); +cu118 wheels do not fit"),
      C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension", "replace", True,
        "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA-built PyG extension wheels"),
      C("torch==2.1.0+cu118", "device_type", "replace", True, "torch==2.1.0", "CUDA build of torch"),
      C("torchvision==0.16.0+cu118", "device_type", "replace", True, "torchvision==0.16.0", "CUDA build of torchvision"),
      C("torch_geometric==2.4.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu wheel matching torch 2.1.0 (CANN 8.3.RC1)"),
      C("torch-scatter==2.1.2+pt21cu118", "custom_cuda_extension", "replace", True, "torch-scatter==2.1.2",
        "cu118 build links CUDA; use the CPU build"),
      C("torch-sparse==0.6.18+pt21cu118", "custom_cuda_extension", "replace", True, "torch-sparse==0.6.18", "cu118 build"),
      C("torch-cluster==1.6.3+pt21cu118", "custom_cuda_extension", "replace", True, "torch-cluster==1.6.3", "cu118 build"),
      C("=pynvml", "torch_cuda_api", "removal", False, None, "NVML has no NPU equivalent; installs but is useless"),
      C("nvidia-ml-py>=12.535.77", "torch_cuda_api", "removal", False, None, "NVML bindings; installs but is useless"),
  ])

E("diffsim_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a Warp/Taichi + PyTorch differentiable-simulation package (extras for nvdiffrast and JAX/Brax/MJX)",
  [
      C('"torch>=2.1,<2.3",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post17",',
        "torch_npu must match the installed torch version exactly"),
      C('"cupy-cuda12x>=12.2",', "custom_cuda_extension", "removal", False, None,
        "CuPy has no Ascend support; the wheel installs but any use fails (callers must move to torch ops)"),
      C('"nvdiffrast @ git+https://github.com/NVlabs/nvdiffrast.git@v0.3.1",', "custom_cuda_extension", "removal", False, None,
        "installs as Python but its CUDA plugin cannot be built or run on the NPU host"),
      C('"jax[cuda12_pip]>=0.4.20",', "device_type", "replace", False, '"jax>=0.4.20",',
        "pulls CUDA wheels; JAX falls back to CPU (unconfirmed)"),
      # near-misses: warp-lang and taichi (run on CPU), 'gpu' pytest marker text.
  ])

E("nvdiffrec_env", "environment.yml", "explicit_replacement",
  "nvdiffrec-style conda environment.yml (pytorch-cuda, cuda-toolkit, kaolin cu118 wheels, nvdiffrast, tiny-cuda-nn)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "NVIDIA channel only serves CUDA packages"),
      C("=- pytorch-cuda=11.8", "device_type", "replace", True, "- cpuonly",
        "selects the CUDA build of pytorch (no such build for the NPU host)"),
      C("=- cuda-nvcc=11.8", "custom_cuda_extension", "removal", False, None, "only needed to build CUDA extensions"),
      C("=- cuda-toolkit=11.8", "custom_cuda_extension", "removal", False, None, "CUDA toolkit is useless on the NPU host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "torch_npu matching pytorch 2.1.0, first pip entry"),
      C("--find-links https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.1.0_cu118.html", "custom_cuda_extension", "removal", True, None,
        "CUDA-built kaolin wheels; build kaolin from source CPU-only instead"),
      C("=- git+https://github.com/NVlabs/nvdiffrast/", "custom_cuda_extension", "removal", False, None,
        "installs, but its CUDA plugin cannot run on the NPU host"),
      C("=- git+https://github.com/NVlabs/tiny-cuda-nn#subdirectory=bindings/torch", "custom_cuda_extension", "removal", True, None,
        "tiny-cuda-nn bindings need nvcc/CUDA to build; the pip install fails"),
      # near-misses: header comment with the tiny-cuda-nn install command, pytorch channel, PyOpenGL/glfw.
  ])

E("igenvs_docker", "docker/Dockerfile", "explicit_replacement",
  "Isaac Gym Preview 4 docker/Dockerfile extended with IsaacGymEnvs (NGC PyTorch base, NVIDIA Vulkan ICD)",
  [
      C("FROM nvcr.io/nvidia/pytorch:22.12-py3", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.8  # tag unverified; Isaac Gym Preview 4 needs Python <= 3.8",
        "NGC CUDA PyTorch image; needs a CANN base image with the Ascend driver mounted at run time"),
      C('ENV PATH="/home/gymuser/.local/bin:$PATH"', "import_torch_npu", "npu_only_addition", True,
        "RUN pip install -q torch==2.1.0 torch-npu==2.1.0.post10 pyyaml decorator attrs",
        "CANN images ship no torch; isaacgym's setup needs torch installed first (torch_npu 2.1.0.post10 pairs with CANN 8.0.0)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0", "nvidia-container-runtime variables; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (or pass --device /dev/davinciN)"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored on NPU; training uses npu:0 anyway"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None, "no-op without nvcc"),
      # near-misses: COPY nvidia_icd.json / 10_nvidia.json (viewer only, headless training), vulkan packages,
      # libEGL_mesa removal (assumes an x86_64 host, which Isaac Gym requires anyway).
  ])

E("igenvs_multigpu_sh", "scripts/train_multigpu.sh", "explicit_replacement",
  "IsaacGymEnvs multi-GPU launcher (torchrun --standalone train.py multi_gpu=True) with NCCL tuning",
  [
      C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "CANN environment must be sourced before torch_npu loads; set_env.sh trips over 'set -u' on newer CANN"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}",
        "ignored on NPU; the default equals the first NGPUS devices anyway"),
      C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
        "NCCL logging knob has no HCCL counterpart by that name"),
      C("export NCCL_P2P_DISABLE=", "env_var", "removal", False, None, "NCCL-only tuning"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only tuning"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}", "single node: HCCL picks a NIC itself"),
      C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi is absent; under 'set -e' the launcher aborts"),
      C("sim_device=cuda:0 \\", "device_type", "replace", False, "sim_device=cpu \\",
        "overridden per rank by train.py when multi_gpu=True; edit for consistency"),
      C("rl_device=cuda:0 \\", "device_type", "replace", False, "rl_device=npu:0 \\",
        "overridden per rank by train.py when multi_gpu=True"),
      # near-misses: MESA_VK_DEVICE_SELECT=10de:* (viewer only, headless), OMP_NUM_THREADS, torchrun itself.
  ])

E("gns_slurm_sh", "slurm/run_gns_slurm.sh", "explicit_replacement",
  "geoelements/gns SLURM job script (4-GPU training then rollout)",
  [
      C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "GRES name is site-specific on Ascend clusters (unconfirmed)"),
      C("module load cuda/11.8", "import_torch_npu", "replace", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment instead of the CUDA module (torch_npu fails to import without it)"),
      C("module load cudnn/8.6", "env_var", "removal", False, None, "cuDNN module not needed"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on NPU; same as default here"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1", "NCCL logging knob"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1", "NCCL -> HCCL"),
      C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0", "CUDA -> Ascend runtime knob"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512", "allocator config is read from PYTORCH_NPU_ALLOC_CONF on NPU"),
      C("=nvidia-smi", "torch_cuda_api", "replace", True, "npu-smi info", "command missing; 'set -e' aborts the job"),
      # near-misses: '#SBATCH -p gpu-a100' partition (site config), --cuda_device_number flag (still valid after the port).
  ])
