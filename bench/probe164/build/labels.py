# Labels for probe164: point-cloud completion / generation research code (CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# shared wording
CUDA_CALL = "torch.cuda.* device call raises on an Ascend host (CPU-only torch + torch_npu)"
TO_CUDA = ".cuda() raises on an Ascend host (no CUDA build); move to the NPU"
NO_NVCC = "nvcc/.cu build: no CUDA toolchain or CUDA kernels on Ascend; op is re-implemented with torch ops"
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (✘) in Ascend's 2.7.1 API list; use one device "
           "(or DDP over HCCL) with a thin wrapper that keeps the .module attribute")
GPU_CKPT = ("checkpoints shipped/saved on GPUs hold CUDA storages; torch.load without map_location fails "
            "on a host without CUDA")

# ---------------------------------------------------------------- PoinTr / AdaPoinTr
E("pointr_main", "main.py", "explicit_replacement",
  "PoinTr/AdaPoinTr main.py (entry: args, dist init, cudnn flags, run_net/test_net)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script: load the NPU backend before any device use (needed for torch.npu on torch<2.5.1)"),
      C("args.use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.use_gpu = torch.npu.is_available()",
        "False on an NPU host -> model and data silently stay on CPU (runner keys device moves on use_gpu)"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 0  # no CUDA compute capability on Ascend; skip the Ampere-only TF32 toggle",
        "raises without CUDA; NPU get_device_capability returns None by default (only a compat shim)"),
  ])

E("pointr_runner", "tools/runner.py", "explicit_replacement",
  "PoinTr tools/runner.py (run_net / validate / test_net loops)", [
      C("=base_model.to(args.local_rank)", "tensor_to_device", "replace", True,
        "base_model.to(f'npu:{args.local_rank}')",
        "an int device in Module.to() means a CUDA ordinal"),
      C("device_ids=[args.local_rank % torch.cuda.device_count()],", "torch_cuda_api", "replace", True,
        "device_ids=[args.local_rank % torch.npu.device_count()],",
        "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
      C("base_model = nn.DataParallel(base_model).cuda()", "distributed_framework", "replace", True,
        "base_model = SingleDeviceWrapper(base_model).npu()  # keeps base_model.module for get_loss()",
        DP_NOTE + "; also .cuda()"),
      C("=partial = data[0].cuda()", "tensor_to_device", "replace", True, "partial = data[0].npu()", TO_CUDA),
      C("=gt = data[1].cuda()", "tensor_to_device", "replace", True, "gt = data[1].npu()", TO_CUDA),
      C("=gt = data.cuda()", "tensor_to_device", "replace", True, "gt = data.npu()", TO_CUDA),
      C("=partial = partial.cuda()", "tensor_to_device", "replace", True, "partial = partial.npu()", TO_CUDA),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", CUDA_CALL),
      C("partial = data[0].cuda()  # (B, N, 3) partial input", "tensor_to_device", "replace", True,
        "partial = data[0].npu()  # (B, N, 3) partial input", TO_CUDA),
      C("gt = data[1].cuda()  # complete gt", "tensor_to_device", "replace", True,
        "gt = data[1].npu()  # complete gt", TO_CUDA),
      C("gt = data.cuda()  # ShapeNet-55/34", "tensor_to_device", "replace", True,
        "gt = data.npu()  # ShapeNet-55/34 only ships the complete cloud", TO_CUDA),
      C("partial = partial.cuda()  # crop output", "tensor_to_device", "replace", True,
        "partial = partial.npu()  # crop output already lives on the gt device",
        "still a .cuda() call even though the tensor is already on the device; raises on NPU"),
      C("torch.cuda.synchronize()  # wait for every rank", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for every rank before the summary", CUDA_CALL),
      C("base_model.to(args.local_rank)  # single-process testing", "tensor_to_device", "replace", True,
        "base_model.to(f'npu:{args.local_rank}')  # single-process testing",
        "an int device in Module.to() means a CUDA ordinal"),
      C("partial = data[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "partial = data[0].npu(non_blocking=True)", TO_CUDA),
      C("gt = data[1].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "gt = data[1].npu(non_blocking=True)", TO_CUDA),
      C("gt = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "gt = data.npu(non_blocking=True)", TO_CUDA),
      C("=partial = data.cuda()", "tensor_to_device", "replace", True, "partial = data.npu()", TO_CUDA),
  ])

E("pointr_builder", "tools/builder.py", "explicit_replacement",
  "PoinTr tools/builder.py (dataloaders, optimizer/scheduler, resume/save/load checkpoints)", [
      C("map_location = {'cuda:%d' % 0: 'cuda:%d' % args.local_rank}", "device_type", "replace", True,
        "map_location = {'cuda:%d' % 0: 'npu:%d' % args.local_rank}",
        "target of the mapping is a CUDA device; keys stay 'cuda:0' because that is how the GPU-saved storages are tagged"),
  ])

E("pointr_dist_utils", "utils/dist_utils.py", "explicit_replacement",
  "PoinTr utils/dist_utils.py (mmcv-style init_dist for pytorch/slurm launchers)", [
      C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist(launcher, backend='hccl', **kwargs):", "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "0 on an NPU host -> rank % 0 raises ZeroDivisionError"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", CUDA_CALL),
      C("num_gpus = torch.cuda.device_count()  # GPUs visible on this node", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()  # NPUs visible on this node", "0 on an NPU host -> ZeroDivisionError below"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", CUDA_CALL),
  ])

E("pointr_misc", "utils/misc.py", "explicit_replacement",
  "PoinTr utils/misc.py (fps via pointnet2_ops, seeding, cropping partial clouds, plotting)", [
      C("from pointnet2_ops import pointnet2_utils", "custom_cuda_extension", "replace", True,
        "from utils import pointnet2_torch as pointnet2_utils  # pure-PyTorch furthest_point_sample / gather_operation",
        "pointnet2_ops is a CUDA-kernel package (Pointnet2_PyTorch) that cannot be built on Ascend; a drop-in torch module keeps the call sites"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silently a no-op without CUDA; torch.manual_seed above already seeds the NPU generator in recent torch (unconfirmed in the notes)"),
      C("center = F.normalize(torch.randn(1, 1, 3), p=2, dim=-1).cuda()", "tensor_to_device", "replace", True,
        "center = F.normalize(torch.randn(1, 1, 3), p=2, dim=-1).to(xyz.device)", TO_CUDA),
      C("center = fixed_point.reshape(1, 1, 3).cuda()", "tensor_to_device", "replace", True,
        "center = fixed_point.reshape(1, 1, 3).to(xyz.device)", TO_CUDA),
      C("scale = torch.rand(1).cuda()", "tensor_to_device", "replace", True,
        "scale = torch.rand(1, device=partial.device) * (scale_range[1] - scale_range[0]) + scale_range[0]", TO_CUDA),
  ])

E("pointr_chamfer", "extensions/chamfer_dist/__init__.py", "kernel_rewrite",
  "PoinTr/GRNet extensions/chamfer_dist/__init__.py (autograd wrapper over the nvcc-built chamfer module)", [
      C("=import chamfer", "custom_cuda_extension", "replace", True,
        "from .chamfer_torch import chamfer_forward, chamfer_backward  # torch.cdist + min/argmin",
        "compiled CUDA module 'chamfer' does not exist on Ascend; " + NO_NVCC),
      C("dist1, dist2, idx1, idx2 = chamfer.forward(xyz1, xyz2)", "custom_cuda_extension", "replace", True,
        "dist1, dist2, idx1, idx2 = chamfer_forward(xyz1, xyz2)", "direct call into the CUDA kernel; " + NO_NVCC),
      C("grad_xyz1, grad_xyz2 = chamfer.backward(", "custom_cuda_extension", "replace", True,
        "grad_xyz1, grad_xyz2 = chamfer_backward(xyz1, xyz2, idx1, idx2, grad_dist1, grad_dist2)",
        "direct call into the CUDA kernel; " + NO_NVCC),
  ])

E("pointr_chamfer_setup", "extensions/chamfer_dist/setup.py", "kernel_rewrite",
  "GRNet/PoinTr extensions/chamfer_dist/setup.py (CUDAExtension build)", [
      C("CUDAExtension('chamfer', [", "custom_cuda_extension", "removal", True, None,
        "CUDAExtension with a .cu source cannot be built on Ascend (no nvcc); the torch re-implementation needs no build"),
      C("'chamfer.cu',", "custom_cuda_extension", "removal", True, None, "CUDA kernel source; nothing compiles it on Ascend"),
  ])

E("pointr_dgcnn_group", "models/dgcnn_group.py", "explicit_replacement",
  "PoinTr models/dgcnn_group.py (DGCNN grouper using knn_cuda and pointnet2_ops)", [
      C("from pointnet2_ops import pointnet2_utils", "custom_cuda_extension", "replace", True,
        "from utils import pointnet2_torch as pointnet2_utils",
        "CUDA-kernel package; drop-in torch module keeps fps_downsample unchanged"),
      C("from knn_cuda import KNN", "custom_cuda_extension", "replace", True,
        "from utils.knn_torch import KNN  # topk-based drop-in with the same (k, transpose_mode) interface",
        "KNN_CUDA JIT-compiles a .cu kernel with nvcc on import; no NPU build"),
  ])

E("pointr_adapointr", "models/AdaPoinTr.py", "explicit_replacement",
  "AdaPoinTr models/AdaPoinTr.py (PCTransformer, query ranking, Fold decoder, denoise task)", [
      C("from pointnet2_ops import pointnet2_utils", "custom_cuda_extension", "replace", True,
        "from utils import pointnet2_torch as pointnet2_utils",
        "CUDA-kernel package; drop-in torch module keeps SimpleEncoder's calls unchanged"),
      C("self.folding_seed = torch.cat([a, b], dim=0).cuda()", "tensor_to_device", "replace", True,
        "self.folding_seed = torch.cat([a, b], dim=0)  # forward() already does .to(x.device)",
        ".cuda() in __init__ raises at model construction on an NPU host"),
  ])

E("pointr_inference", "tools/inference.py", "explicit_replacement",
  "PoinTr tools/inference.py (single-file / folder inference demo, with a latency flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "standalone entry script: load the NPU backend"),
      C("'--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
        "'--device', default='npu:0', help='Device used for inference')",
        "default device string is CUDA; .to('cuda:0') raises on an NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        CUDA_CALL + " (only with --benchmark)"),
      C("torch.cuda.synchronize()  # make sure the kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the kernels finished before reading the clock",
        CUDA_CALL + " (only with --benchmark)"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "print('peak NPU memory: %.1f MB' % (torch.npu.max_memory_allocated() / 1024 ** 2))",
        "returns 0 without an initialised CUDA context: wrong log value only"),
  ])

E("pointr_install", "install.sh", "kernel_rewrite",
  "PoinTr install.sh (builds chamfer/gridding/cubic/emd extensions, pointnet2_ops, KNN_CUDA)", [
      C('export TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "CUDA arch list only matters to nvcc; harmless but meaningless on Ascend"),
      C("cd $HOME/extensions/chamfer_dist && python setup.py install --user", "custom_cuda_extension", "removal", True, None,
        NO_NVCC),
      C("cd $HOME/extensions/cubic_feature_sampling && python setup.py install --user", "custom_cuda_extension", "removal",
        True, None, NO_NVCC),
      C("cd $HOME/extensions/gridding && python setup.py install --user", "custom_cuda_extension", "removal", True, None,
        NO_NVCC),
      C("cd $HOME/extensions/gridding_loss && python setup.py install --user", "custom_cuda_extension", "removal", True,
        None, NO_NVCC),
      C("cd $HOME/extensions/emd && python setup.py install --user", "custom_cuda_extension", "removal", True, None,
        NO_NVCC),
      C('pip install "git+https://github.com/erikwijmans/Pointnet2_PyTorch.git', "custom_cuda_extension", "removal", True,
        None, "pointnet2_ops builds CUDA kernels at install time; fails without nvcc"),
      C("pip install --upgrade https://github.com/unlimblue/KNN_CUDA", "custom_cuda_extension", "removal", False, None,
        "pure-Python wheel installs fine (it compiles on import, where the import line is labelled); dead weight on Ascend"),
  ])

E("pointr_requirements", "requirements.txt", "explicit_replacement",
  "PoinTr requirements.txt with a pinned CUDA 11.3 torch", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu pairs with the CPU torch wheel (x86) or plain PyPI torch (aarch64)"),
      C("torch==1.10.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA build of torch, and no torch_npu exists for torch 1.10"),
      C("torchvision==0.11.2+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build pinned to torch 1.10; must follow the torch version"),
      C("=transforms3d", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the NPU backend itself (version must equal the torch version)"),
  ])

E("pointr_dist_train", "scripts/dist_train.sh", "explicit_replacement",
  "PoinTr scripts/dist_train.sh (torch.distributed.launch wrapper)", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN env (libhccl/libascendcl paths) must be set or import torch_npu fails"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob; ignored by HCCL (no HCCL equivalent needed)"),
      C("CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7} python -m torch.distributed.launch --master_port=${PORT} --nproc_per_node=${NGPUS} main.py --launcher pytorch ${PY_ARGS}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime -> device selection silently lost"),
  ])

# ---------------------------------------------------------------- GRNet
E("grnet_runner", "runner.py", "explicit_replacement",
  "GRNet runner.py (argparse, cfg, CUDA_VISIBLE_DEVICES from cfg.CONST.DEVICE)", [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = cfg.CONST.DEVICE', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = cfg.CONST.DEVICE',
        "ignored on Ascend -> --gpu silently has no effect; set before the runtime initialises"),
  ])

E("grnet_train", "core/train.py", "explicit_replacement",
  "GRNet core/train.py (train_net: loaders, DataParallel, Adam, chamfer + gridding losses)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "first torch import on the runner.py path (runner itself never imports torch)"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "without CUDA the DataLoader silently drops pinning; performance only (unconfirmed for newer torch)"),
      C("collate_fn=utils.data_loaders.collate_fn, pin_memory=True, shuffle=False)", "pin_memory", "replace", False,
        "collate_fn=utils.data_loaders.collate_fn, pin_memory=True, pin_memory_device='npu', shuffle=False)",
        "performance only (unconfirmed)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host -> the network silently trains on CPU"),
      C("grnet = torch.nn.DataParallel(grnet).cuda()", "distributed_framework", "replace", True,
        "grnet = SingleDeviceWrapper(grnet).npu()  # keeps the 'module.' prefix of released checkpoints",
        DP_NOTE + "; also .cuda()"),
      C("checkpoint = torch.load(cfg.CONST.WEIGHTS)", "device_type", "replace", True,
        "checkpoint = torch.load(cfg.CONST.WEIGHTS, map_location='cpu')", GPU_CKPT),
  ])

E("grnet_helpers", "utils/helpers.py", "explicit_replacement",
  "GRNet utils/helpers.py (var_or_cuda, init_weights, plotting, a memory logger)", [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host -> every batch silently stays on CPU"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)", TO_CUDA),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "debug logger silently returns; diagnostics only"),
      C("(tag, torch.cuda.memory_allocated() / 1024 ** 2, torch.cuda.memory_reserved() / 1024 ** 2))", "torch_cuda_api",
        "replace", False,
        "(tag, torch.npu.memory_allocated() / 1024 ** 2, torch.npu.memory_reserved() / 1024 ** 2))",
        "returns 0 without a CUDA context; wrong log only"),
  ])

E("grnet_gridding", "extensions/gridding/__init__.py", "kernel_rewrite",
  "GRNet extensions/gridding/__init__.py (Gridding / GriddingReverse autograd wrappers)", [
      C("=import gridding", "custom_cuda_extension", "replace", True,
        "from .gridding_torch import gridding_forward, gridding_backward, gridding_rev_forward, gridding_rev_backward",
        "compiled CUDA module; " + NO_NVCC + " (trilinear weights + scatter_add)"),
      C("gridding.forward(-scale, scale - 1", "custom_cuda_extension", "replace", True,
        "grid, grid_pt_weights, grid_pt_indexes = gridding_forward(-scale, scale - 1, -scale, scale - 1, -scale,",
        "direct call into the CUDA kernel"),
      C("grad_ptcloud = gridding.backward(", "custom_cuda_extension", "replace", True,
        "grad_ptcloud = gridding_backward(grid_pt_weights, grid_pt_indexes, grad_grid)", "direct call into the CUDA kernel"),
      C("ptcloud = gridding.rev_forward(scale, grid)", "custom_cuda_extension", "replace", True,
        "ptcloud = gridding_rev_forward(scale, grid)", "direct call into the CUDA kernel"),
      C("grad_grid = gridding.rev_backward(", "custom_cuda_extension", "replace", True,
        "grad_grid = gridding_rev_backward(ptcloud, grid, grad_ptcloud)", "direct call into the CUDA kernel"),
  ])

E("grnet_cfs", "extensions/cubic_feature_sampling/__init__.py", "kernel_rewrite",
  "GRNet extensions/cubic_feature_sampling/__init__.py (autograd wrapper over the CUDA op)", [
      C("=import cubic_feature_sampling", "custom_cuda_extension", "replace", True,
        "from .cfs_torch import cfs_forward, cfs_backward  # gather of the 8 voxel corners in torch",
        "compiled CUDA module; " + NO_NVCC),
      C("cubic_feature_sampling.forward(scale", "custom_cuda_extension", "replace", True,
        "point_features, grid_pt_indexes = cfs_forward(scale, neighborhood_size, ptcloud,",
        "direct call into the CUDA kernel"),
      C("cubic_feature_sampling.backward(scale", "custom_cuda_extension", "replace", True,
        "grad_ptcloud, grad_cubic_features = cfs_backward(scale, neighborhood_size,", "direct call into the CUDA kernel"),
  ])

E("grnet_cfs_test", "extensions/cubic_feature_sampling/test.py", "explicit_replacement",
  "GRNet extensions/cubic_feature_sampling/test.py (gradcheck unit tests)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "runs standalone under unittest"),
      C("[ptcloud.double().cuda(), cubic_features.double().cuda()]))", "tensor_to_device", "replace", True,
        "[ptcloud.double().npu(), cubic_features.double().npu()]))",
        TO_CUDA + "; fp64 support on NPU is limited, gradcheck may need the CPU reference instead (unconfirmed)"),
      C("[ptcloud.double().cuda(), cubic_features.double().cuda(), 2]))", "tensor_to_device", "replace", True,
        "[ptcloud.double().npu(), cubic_features.double().npu(), 2]))", TO_CUDA),
      C("[ptcloud.double().cuda(), cubic_features.double().cuda(), 3]))", "tensor_to_device", "replace", True,
        "[ptcloud.double().npu(), cubic_features.double().npu(), 3]))", TO_CUDA),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "CUDA device object; factories with device=cuda raise on an NPU host"),
  ])

E("grnet_model", "models/grnet.py", "device_branch_or_abstraction",
  "GRNet models/grnet.py (3D conv encoder/decoder around Gridding, CubicFeatureSampling)", [])

# ---------------------------------------------------------------- SnowflakeNet / PMP-Net
E("snowflake_chamfer3d", "loss_functions/Chamfer3D/dist_chamfer_3D.py", "kernel_rewrite",
  "ChamferDistancePytorch dist_chamfer_3D.py as vendored by SnowflakeNet/PMP-Net (JIT load fallback)", [
      C('chamfer_3D = load(name="chamfer_3D",', "custom_cuda_extension", "replace", True,
        "chamfer_3D = None  # no JIT CUDA build on Ascend; torch implementation used below",
        "cpp_extension.load of a .cu file: ✘ on A2/A3 in Ascend's API list and no nvcc"),
      C("=import chamfer_3D", "custom_cuda_extension", "removal", False, None,
        "dead on an NPU host (find_loader finds no compiled module); removed together with the block"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "removal", True, None,
        "torch.cuda.set_device() with an npu device raises; the torch implementation needs no device switch"),
      C("chamfer_3D.forward(xyz1, xyz2, dist1, dist2, idx1, idx2)", "custom_cuda_extension", "replace", True,
        "dist1, dist2, idx1, idx2 = chamfer_3d_torch(xyz1, xyz2)", "direct call into the CUDA kernel; " + NO_NVCC),
      C("chamfer_3D.backward(", "custom_cuda_extension", "replace", True,
        "gradxyz1, gradxyz2 = chamfer_3d_torch_backward(xyz1, xyz2, graddist1, graddist2, idx1, idx2)",
        "direct call into the CUDA kernel"),
  ])

EMD_BUF = "scratch buffer allocated on the CUDA device; raises on an NPU host"
E("snowflake_emd", "loss_functions/emd/emd_module.py", "kernel_rewrite",
  "MSN emd_module.py (auction-algorithm EMD) as vendored by SnowflakeNet/PMP-Net", [
      C("=import emd", "custom_cuda_extension", "replace", True,
        "from .emd_torch import emd_auction_forward, emd_auction_backward  # torch re-implementation",
        "compiled CUDA module; " + NO_NVCC),
      C("xyz1 = xyz1.contiguous().float().cuda()", "tensor_to_device", "replace", True,
        "xyz1 = xyz1.contiguous().float()", TO_CUDA),
      C("xyz2 = xyz2.contiguous().float().cuda()", "tensor_to_device", "replace", True,
        "xyz2 = xyz2.contiguous().float()", TO_CUDA),
      C("dist = torch.zeros(batchsize, n, device='cuda')", "device_type", "replace", True,
        "dist = torch.zeros(batchsize, n, device=xyz1.device).contiguous()", EMD_BUF),
      C("assignment = torch.zeros(", "device_type", "replace", True,
        "assignment = torch.zeros(batchsize, n, device=xyz1.device, dtype=torch.int32).contiguous() - 1", EMD_BUF),
      C("assignment_inv = torch.zeros(", "device_type", "replace", True,
        "assignment_inv = torch.zeros(batchsize, m, device=xyz1.device, dtype=torch.int32).contiguous() - 1", EMD_BUF),
      C("price = torch.zeros(", "device_type", "replace", True,
        "price = torch.zeros(batchsize, m, device=xyz1.device).contiguous()", EMD_BUF),
      C("bid = torch.zeros(", "device_type", "replace", True,
        "bid = torch.zeros(batchsize, n, device=xyz1.device, dtype=torch.int32).contiguous()", EMD_BUF),
      C("bid_increments = torch.zeros(", "device_type", "replace", True,
        "bid_increments = torch.zeros(batchsize, n, device=xyz1.device).contiguous()", EMD_BUF),
      C("max_increments = torch.zeros(", "device_type", "replace", True,
        "max_increments = torch.zeros(batchsize, m, device=xyz1.device).contiguous()", EMD_BUF),
      C("unass_idx = torch.zeros(", "device_type", "replace", True,
        "unass_idx = torch.zeros(batchsize * n, device=xyz1.device, dtype=torch.int32).contiguous()", EMD_BUF),
      C("max_idx = torch.zeros(", "device_type", "replace", True,
        "max_idx = torch.zeros(batchsize * m, device=xyz1.device, dtype=torch.int32).contiguous()", EMD_BUF),
      C("unass_cnt = torch.zeros(", "device_type", "replace", True,
        "unass_cnt = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()", EMD_BUF),
      C("unass_cnt_sum = torch.zeros(", "device_type", "replace", True,
        "unass_cnt_sum = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()", EMD_BUF),
      C("cnt_tmp = torch.zeros(", "device_type", "replace", True,
        "cnt_tmp = torch.zeros(512, dtype=torch.int32, device=xyz1.device).contiguous()", EMD_BUF),
      C("emd.forward(xyz1, xyz2, dist", "custom_cuda_extension", "replace", True,
        "emd_auction_forward(xyz1, xyz2, dist, assignment, price, assignment_inv, bid, bid_increments, max_increments,",
        "direct call into the CUDA kernel"),
      C("gradxyz1 = torch.zeros(xyz1.size(), device='cuda')", "device_type", "replace", True,
        "gradxyz1 = torch.zeros(xyz1.size(), device=xyz1.device).contiguous()", EMD_BUF),
      C("gradxyz2 = torch.zeros(xyz2.size(), device='cuda')", "device_type", "replace", True,
        "gradxyz2 = torch.zeros(xyz2.size(), device=xyz2.device).contiguous()", EMD_BUF),
      C("emd.backward(xyz1, xyz2, gradxyz1", "custom_cuda_extension", "replace", True,
        "emd_auction_backward(xyz1, xyz2, gradxyz1, graddist, assignment)", "direct call into the CUDA kernel"),
      C("x1 = torch.rand(20, 8192, 3).cuda()", "tensor_to_device", "replace", True,
        "x1 = torch.rand(20, 8192, 3).npu()", TO_CUDA + " (self-test)"),
      C("x2 = torch.rand(20, 8192, 3).cuda()", "tensor_to_device", "replace", True,
        "x2 = torch.rand(20, 8192, 3).npu()", TO_CUDA + " (self-test)"),
  ])

E("snowflake_utils", "models/utils.py", "explicit_replacement",
  "SnowflakeNet models/utils.py (PointNet++ SA/FP modules, query_knn, point transformer)", [
      C("from pointnet2_ops.pointnet2_utils import furthest_point_sample", "custom_cuda_extension", "replace", True,
        "from models.pointnet2_torch import furthest_point_sample, \\",
        "CUDA-kernel package; a drop-in torch module with the same six function names keeps every call site"),
  ])

E("snowflake_train", "completion/core/train_c3d.py", "explicit_replacement",
  "SnowflakeNet completion/core/train_c3d.py (train_net with an AMP option added by a fork)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "first torch import on the training path"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "without CUDA the DataLoader silently drops pinning; performance only (unconfirmed for newer torch)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host -> silently trains on CPU"),
      C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
        "model = SingleDeviceWrapper(model).npu()", DP_NOTE + "; also .cuda()"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "CUDA GradScaler disables itself with a warning when CUDA is absent; training stays correct (fp32)"),
      C("checkpoint = torch.load(cfg.CONST.WEIGHTS)", "device_type", "replace", True,
        "checkpoint = torch.load(cfg.CONST.WEIGHTS, map_location='cpu')", GPU_CKPT),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "CUDA autocast disables itself without CUDA -> fp32 only; speed/memory, not correctness"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
        "logging.info('NPU memory peak this epoch: %.1f MB' % (torch.npu.max_memory_allocated() / 2 ** 20))",
        "returns 0 without a CUDA context; wrong log only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "unlike the max_memory_* readers this is not guarded by is_initialized() and calls into the missing CUDA bindings"),
  ])

E("snowflake_dockerfile", "Dockerfile", "explicit_replacement",
  "SnowflakeNet/PMP-Net style Dockerfile on nvidia/cuda devel image", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; needs a CANN base (driver mounted from the host)"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "nvcc-only setting; no effect on Ascend"),
      C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "only steers CUDA extension builds, which are dropped"),
      C("RUN pip install torch==1.10.1+cu113", "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
        "CUDA 11.3 torch build; no torch_npu for 1.10"),
      C("=RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post10", "the NPU backend, pinned to the torch version"),
      C('RUN pip install "git+https://github.com/erikwijmans/Pointnet2_PyTorch.git', "custom_cuda_extension", "removal",
        True, None, "pointnet2_ops builds CUDA kernels; fails without nvcc"),
      C("RUN cd loss_functions/Chamfer3D && python setup.py install", "custom_cuda_extension", "removal", True, None,
        NO_NVCC),
      C("RUN cd loss_functions/emd && python setup.py install", "custom_cuda_extension", "removal", True, None, NO_NVCC),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored by the Ascend runtime"),
  ])

# ---------------------------------------------------------------- PointFlow / PVD
E("pointflow_train", "train.py", "explicit_replacement",
  "PointFlow train.py (main_worker with mp.spawn / DDP / DataParallel branches)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", CUDA_CALL),
      C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", TO_CUDA),
      C("torch.cuda.set_device(args.gpu)  # pin this process", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)  # pin this process to the chosen card", CUDA_CALL),
      C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)", TO_CUDA),
      C("return nn.DataParallel(m)", "distributed_framework", "replace", True,
        "return m  # DataParallel is unsupported on NPU; single card (use --distributed for more)",
        DP_NOTE + "; this is the default path (no --gpu, no --distributed)"),
      C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", TO_CUDA),
      C("num_workers=0, pin_memory=True, sampler=train_sampler", "pin_memory", "replace", False,
        "num_workers=0, pin_memory=True, pin_memory_device='npu', sampler=train_sampler, drop_last=True,",
        "pinning silently dropped without CUDA; performance only (unconfirmed)"),
      C("num_workers=0, pin_memory=True, drop_last=False,", "pin_memory", "replace", False,
        "num_workers=0, pin_memory=True, pin_memory_device='npu', drop_last=False,", "performance only (unconfirmed)"),
      C("inputs = tr_batch.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "inputs = tr_batch.npu(args.gpu, non_blocking=True)", TO_CUDA),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()", "0 on an NPU host -> mp.spawn(nprocs=0), world_size 0"),
  ])

E("pointflow_args", "args.py", "explicit_replacement",
  "PointFlow args.py (argparse incl. distributed flags)", [
      C("parser.add_argument('--dist_backend', default='nccl', type=str,", "dist_backend", "replace", True,
        "parser.add_argument('--dist_backend', default='hccl', type=str,",
        "default backend reaches init_process_group via args.dist_backend; NCCL unavailable on Ascend"),
  ])

E("pointflow_metrics", "metrics/evaluation_metrics.py", "explicit_replacement",
  "PointFlow metrics/evaluation_metrics.py (MMD/COV/1-NNA with CUDA CD/EMD, JSD)", [
      C("min_l, min_r = distChamferCUDA(x.cuda(), y.cuda())", "tensor_to_device", "replace", True,
        "min_l, min_r = distChamferCUDA(x.npu(), y.npu())", TO_CUDA + " (module self-test)"),
  ])

E("pointflow_nn_distance", "metrics/StructuralLosses/nn_distance.py", "kernel_rewrite",
  "PointFlow metrics/StructuralLosses/nn_distance.py (autograd wrapper over the CUDA NN-distance backend)", [
      C("=from metrics.StructuralLosses.StructuralLossesBackend import NNDistance, NNDistanceGrad",
        "custom_cuda_extension", "replace", True,
        "from metrics.StructuralLosses.nn_distance_torch import NNDistance, NNDistanceGrad  # cdist + min",
        "StructuralLossesBackend is built by nvcc (Makefile); " + NO_NVCC),
      C("dist1, idx1, dist2, idx2 = NNDistance(seta, setb)", "custom_cuda_extension", "replace", True,
        "dist1, idx1, dist2, idx2 = nn_distance_torch(seta, setb)", "direct call into the CUDA kernel"),
      C("grada, gradb = NNDistanceGrad(", "custom_cuda_extension", "replace", True,
        "grada, gradb = nn_distance_grad_torch(seta, setb, idx1, idx2, grad_dist1, grad_dist2)",
        "direct call into the CUDA kernel"),
  ])

E("pointflow_networks", "models/networks.py", "explicit_replacement",
  "PointFlow models/networks.py (Encoder, PointFlow CNF model, sampling helpers)", [
      C("y = y if gpu is None else y.cuda(gpu)", "tensor_to_device", "replace", True,
        "y = y if gpu is None else y.npu(gpu)", TO_CUDA),
  ])

E("pvd_train", "train_generation.py", "explicit_replacement",
  "PVD train_generation.py (Gaussian diffusion over PVCNN2, single/multi GPU launch)", [
      C("=import torch.multiprocessing as mp", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; first torch import"),
      C("=torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", CUDA_CALL),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", TO_CUDA),
      C("return nn.parallel.DataParallel(m)", "distributed_framework", "replace", True,
        "return m  # DataParallel is unsupported on NPU; use --distribution_type multi for more cards",
        DP_NOTE + "; 'single' is the default distribution_type"),
      C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", TO_CUDA),
      C("torch.cuda.set_device(gpu)  # single process", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(gpu)  # single process on one explicit NPU", CUDA_CALL),
      C("model = model.cuda(gpu)", "tensor_to_device", "replace", True, "model = model.npu(gpu)", TO_CUDA),
      C("ckpt = torch.load(opt.model)", "device_type", "replace", True, "ckpt = torch.load(opt.model, map_location='cpu')",
        GPU_CKPT),
      C("start_epoch = torch.load(opt.model)['epoch'] + 1", "device_type", "replace", True,
        "start_epoch = torch.load(opt.model, map_location='cpu')['epoch'] + 1",
        "loads the whole GPU checkpoint again just for the epoch; same failure"),
      C("=x = x.cuda(gpu)", "tensor_to_device", "replace", True, "x = x.npu(gpu)", TO_CUDA),
      C("noises_batch = noises_batch.cuda(gpu)", "tensor_to_device", "replace", True,
        "noises_batch = noises_batch.npu(gpu)", TO_CUDA),
      C("=x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", TO_CUDA),
      C("=noises_batch = noises_batch.cuda()", "tensor_to_device", "replace", True, "noises_batch = noises_batch.npu()",
        TO_CUDA),
      C("map_location = {'cuda:%d' % 0: 'cuda:%d' % gpu}", "device_type", "replace", True,
        "map_location = {'cuda:%d' % 0: 'npu:%d' % gpu}",
        "remaps to a CUDA device; on NPU the file was saved from npu:0, so a {'npu:0': 'npu:%d'} map or plain 'cpu' works"),
      C("opt.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "opt.ngpus_per_node = torch.npu.device_count()", "0 on an NPU host -> mp.spawn(nprocs=0)"),
      C("parser.add_argument('--dist_backend', default='nccl', type=str,", "dist_backend", "replace", True,
        "parser.add_argument('--dist_backend', default='hccl', type=str,", "NCCL unavailable on Ascend"),
  ])

E("pvd_environment", "environment.yml", "explicit_replacement",
  "PVD environment.yml (conda: pytorch 1.4 + cudatoolkit 10.1)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA package channel; harmless but unused"),
      C("=- python=3.6", "import_torch_npu", "replace", True, "- python=3.9",
        "torch 2.1 / torch-npu need Python >= 3.8"),
      C("=- cudatoolkit=10.1", "torch_cuda_api", "removal", False, None,
        "CUDA runtime for the CUDA pytorch build; useless on Ascend (may not even resolve on aarch64 hosts, unconfirmed)"),
      C("=- pytorch=1.4.0", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0  # CPU build (add 'cpuonly'); the NPU backend comes from torch-npu",
        "CUDA build of torch 1.4; no torch_npu release pairs with it (oldest is 1.5.0, current ones need 2.x)"),
      C("=- torchvision=0.5.0", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
        "must follow the torch version"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
        "the NPU backend itself"),
      C("=- nvidia-ml-py3", "custom_cuda_extension", "removal", False, None,
        "NVML bindings; no NPU equivalent (npu-smi / torch.npu.utilization instead); unused by the training code"),
  ])
