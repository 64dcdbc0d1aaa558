# Labels for probe278 (scene flow / LiDAR motion segmentation, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_IMPORT = "import torch_npu"
IMPORT_NOTE = ("registers the npu device and torch.npu; autoload only exists from torch_npu 2.5.1 and these "
               "projects pin older torch, so the entry script imports it explicitly")
CVD_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; the device restriction is silently lost "
            "(all NPUs visible) unless renamed to ASCEND_RT_VISIBLE_DEVICES")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is "
                    "not released (memory only)")
SEED_NOTE = "torch.cuda seeding is queued lazily and never applied on an NPU host; NPU RNG unseeded (reproducibility only)"
SYNC_NOTE = "torch.cuda.synchronize() initialises CUDA and raises on a CPU-only torch build (NPU host)"
DP_NOTE = ("torch.nn.DataParallel is not supported on NPU (Ascend API list: X; msFmkTransplt: use DDP); "
           "one process per NPU with DDP instead")
OPT_NOTE = ("performance only: msFmkTransplt advises the torch_npu fused optimizer (NpuFused*) for "
            "torch.optim.* on NPU")
LOAD_NOTE = ("checkpoint was saved from CUDA tensors; torch.load without map_location fails with 'Attempting to "
             "deserialize object on a CUDA device' on an NPU host")
AMP_NOTE = ("torch.cuda.amp on a CUDA-less host only warns and disables itself, so training silently runs in fp32; "
            "use the NPU autocast/GradScaler to keep mixed precision")
MEMLOG_NOTE = "memory statistics read 0 on an NPU host (no error); logging only"
COUNT_NOTE = "torch.cuda.device_count() returns 0 on an NPU host, so the multi-device branch is silently never taken"
AVAIL_NOTE = "torch.cuda.is_available() is False on an NPU host; the code silently falls back to the CPU path"

# ---------------------------------------------------------------- FlowNet3D (PyTorch port)
E("fn3d-main", "main.py", "explicit_replacement",
  "FlowNet3D PyTorch port (hyangwinter/flownet3d_pytorch style main.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("pc1 = pc1.cuda().transpose(2,1).contiguous()", "tensor_to_device", "replace", True,
      "pc1 = pc1.npu().transpose(2,1).contiguous()", "tensor moved to CUDA; no CUDA on NPU host"),
    C("pc2 = pc2.cuda().transpose(2,1).contiguous()", "tensor_to_device", "replace", True,
      "pc2 = pc2.npu().transpose(2,1).contiguous()", "tensor moved to CUDA"),
    C("color1 = color1.cuda().transpose(2,1).contiguous()", "tensor_to_device", "replace", True,
      "color1 = color1.npu().transpose(2,1).contiguous()", "tensor moved to CUDA"),
    C("color2 = color2.cuda().transpose(2,1).contiguous()", "tensor_to_device", "replace", True,
      "color2 = color2.npu().transpose(2,1).contiguous()", "tensor moved to CUDA"),
    C("=flow = flow.cuda()", "tensor_to_device", "replace", True, "flow = flow.npu()", "tensor moved to CUDA"),
    C("mask1 = mask1.cuda().float()", "tensor_to_device", "replace", True, "mask1 = mask1.npu().float()",
      "tensor moved to CUDA"),
    C("pc1 = pc1.cuda().transpose(2, 1).contiguous()", "tensor_to_device", "replace", True,
      "pc1 = pc1.npu().transpose(2, 1).contiguous()", "tensor moved to CUDA (train loop)"),
    C("pc2 = pc2.cuda().transpose(2, 1).contiguous()", "tensor_to_device", "replace", True,
      "pc2 = pc2.npu().transpose(2, 1).contiguous()", "tensor moved to CUDA (train loop)"),
    C("color1 = color1.cuda().transpose(2, 1).contiguous()", "tensor_to_device", "replace", True,
      "color1 = color1.npu().transpose(2, 1).contiguous()", "tensor moved to CUDA (train loop)"),
    C("color2 = color2.cuda().transpose(2, 1).contiguous()", "tensor_to_device", "replace", True,
      "color2 = color2.npu().transpose(2, 1).contiguous()", "tensor moved to CUDA (train loop)"),
    C("flow = flow.cuda().transpose(2, 1).contiguous()", "tensor_to_device", "replace", True,
      "flow = flow.npu().transpose(2, 1).contiguous()", "tensor moved to CUDA (train loop)"),
    C("mask1 = mask1.float().cuda()", "tensor_to_device", "replace", True, "mask1 = mask1.float().npu()",
      "tensor moved to CUDA (train loop)"),
    C("opt = optim.SGD(net.parameters()", "fused_optimizer", "replace", False,
      "opt = torch_npu.optim.NpuFusedSGD(net.parameters(), lr=args.lr * 100, momentum=args.momentum, weight_decay=1e-4)",
      OPT_NOTE),
    C("opt = optim.Adam(net.parameters()", "fused_optimizer", "replace", False,
      "opt = torch_npu.optim.NpuFusedAdam(net.parameters(), lr=args.lr, weight_decay=1e-4)", OPT_NOTE),
    C("            if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "            if torch.npu.device_count() > 1:",
      "returns 0 on an NPU host, so a wrapped (DDP) model is saved with 'module.' keys, which the strict=False "
      "reload then silently ignores"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      CVD_NOTE + "; here it is what keeps the script single-device once device_count() is ported"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("net = FlowNet3D(args).cuda()", "tensor_to_device", "replace", True, "net = FlowNet3D(args).npu()",
      "model moved to CUDA"),
    C("net.load_state_dict(torch.load(model_path), strict=False)", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(model_path, map_location='cpu'), strict=False)", LOAD_NOTE),
    C("if torch.cuda.device_count() > 1:  # multi-GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1:  # multi-NPU", COUNT_NOTE),
    C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
      "net = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])", DP_NOTE),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
      "print(\"Let's use\", torch.npu.device_count(), \"NPUs!\")", "log line only; prints 0 on NPU host"),
])

E("fn3d-model", "model.py", "explicit_replacement",
  "FlowNet3D PyTorch port model.py (smoke-test __main__)", [
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '0'", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '0'", CVD_NOTE),
    C("input = torch.randn((8, 3, 2048)).cuda()", "tensor_to_device", "replace", True,
      "input = torch.randn((8, 3, 2048)).npu()", "smoke-test input moved to CUDA"),
    C("model = FlowNet3D(None).cuda()", "tensor_to_device", "replace", True, "model = FlowNet3D(None).npu()",
      "smoke-test model moved to CUDA"),
])

E("fn3d-util", "util.py", "explicit_replacement",
  "FlowNet3D PyTorch port util.py (layers on top of pointnet2 ops)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      SYNC_NOTE + " (timeit helper)"),
])

# ---------------------------------------------------------------- pointnet2 CUDA ops (sshaoshuai/Pointnet2.PyTorch layout)
E("pn2-setup", "pointnet2/setup.py", "kernel_rewrite",
  "Pointnet2.PyTorch setup.py building pointnet2_cuda with CUDAExtension", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "removal", False,
      None, "import itself works on a CPU torch build; unused once the extension is dropped"),
    C("CUDAExtension('pointnet2_cuda', [", "custom_cuda_extension", "removal", True, None,
      "nvcc build of .cu kernels: no nvcc/CUDA toolkit on an Ascend host; the NPU port re-implements the ops in "
      "PyTorch (pointnet2_utils.py), so the whole ext_modules block goes"),
    C("cmdclass={'build_ext': BuildExtension}", "custom_cuda_extension", "removal", False, None,
      "no extension left to build"),
])

PN2_ALLOC = "torch.cuda.*Tensor constructor: 'type torch.cuda.*Tensor not available' on a CPU-only torch build"
PN2_CALL = "call into the nvcc-built pointnet2_cuda module, which cannot exist on NPU; re-implemented with torch ops"
E("pn2-utils", "pointnet2/pointnet2_utils.py", "kernel_rewrite",
  "Pointnet2.PyTorch pointnet2_utils.py (autograd Functions over pointnet2_cuda)", [
    C("import pointnet2_cuda as pointnet2", "custom_cuda_extension", "removal", True, None,
      "compiled CUDA extension module; replaced by pure-PyTorch implementations below"),
    C("output = torch.cuda.IntTensor(B, npoint)", "torch_cuda_api", "replace", True,
      "output = torch.zeros(B, npoint, dtype=torch.int32, device=xyz.device)", PN2_ALLOC),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "torch_cuda_api", "replace", True,
      "temp = torch.full((B, N), 1e10, device=xyz.device)", PN2_ALLOC),
    C("pointnet2.furthest_point_sampling_wrapper(", "custom_cuda_extension", "replace", True,
      "output.copy_(_furthest_point_sample_torch(xyz, npoint, temp))", PN2_CALL),
    C("output = torch.cuda.FloatTensor(B, C, npoint)", "torch_cuda_api", "replace", True,
      "output = features.new_empty(B, C, npoint)", PN2_ALLOC),
    C("pointnet2.gather_points_wrapper(", "custom_cuda_extension", "replace", True,
      "output.copy_(torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, C, -1)))", PN2_CALL),
    C("grad_features = torch.cuda.FloatTensor(B, C, N).zero_()", "torch_cuda_api", "replace", True,
      "grad_features = grad_out.new_zeros(B, C, N)", PN2_ALLOC),
    C("pointnet2.gather_points_grad_wrapper(", "custom_cuda_extension", "replace", True,
      "grad_features.scatter_add_(2, idx.long().unsqueeze(1).expand(-1, C, -1), grad_out_data)", PN2_CALL),
    C("dist2 = torch.cuda.FloatTensor(B, N, k)", "torch_cuda_api", "replace", True,
      "dist2 = unknown.new_empty(B, N, k)", PN2_ALLOC),
    C("idx = torch.cuda.IntTensor(B, N, k)", "torch_cuda_api", "replace", True,
      "idx = torch.empty(B, N, k, dtype=torch.int32, device=unknown.device)", PN2_ALLOC),
    C("pointnet2.knn_wrapper(", "custom_cuda_extension", "replace", True,
      "d, i = torch.topk(torch.cdist(unknown, known) ** 2, k, dim=-1, largest=False); dist2.copy_(d); idx.copy_(i)",
      PN2_CALL + " (cdist+topk have NPU kernels)"),
    C("dist2 = torch.cuda.FloatTensor(B, N, 3)", "torch_cuda_api", "replace", True,
      "dist2 = unknown.new_empty(B, N, 3)", PN2_ALLOC),
    C("idx = torch.cuda.IntTensor(B, N, 3)", "torch_cuda_api", "replace", True,
      "idx = torch.empty(B, N, 3, dtype=torch.int32, device=unknown.device)", PN2_ALLOC),
    C("pointnet2.three_nn_wrapper(", "custom_cuda_extension", "replace", True,
      "d, i = torch.topk(torch.cdist(unknown, known) ** 2, 3, dim=-1, largest=False); dist2.copy_(d); idx.copy_(i)",
      PN2_CALL),
    C("output = torch.cuda.FloatTensor(B, c, n)", "torch_cuda_api", "replace", True,
      "output = features.new_empty(B, c, n)", PN2_ALLOC),
    C("pointnet2.three_interpolate_wrapper(", "custom_cuda_extension", "replace", True,
      "output.copy_((_group_torch(features, idx) * weight.unsqueeze(1)).sum(-1))", PN2_CALL),
    C("grad_features = Variable(torch.cuda.FloatTensor(B, c, m).zero_())", "torch_cuda_api", "replace", True,
      "grad_features = grad_out.new_zeros(B, c, m)", PN2_ALLOC),
    C("pointnet2.three_interpolate_grad_wrapper(", "custom_cuda_extension", "replace", True,
      "grad_features.scatter_add_(2, idx.long().view(B, 1, -1).expand(-1, c, -1), "
      "(grad_out_data.unsqueeze(-1) * weight.unsqueeze(1)).view(B, c, -1))", PN2_CALL),
    C("output = torch.cuda.FloatTensor(B, C, nfeatures, nsample)", "torch_cuda_api", "replace", True,
      "output = features.new_empty(B, C, nfeatures, nsample)", PN2_ALLOC),
    C("pointnet2.group_points_wrapper(", "custom_cuda_extension", "replace", True,
      "output.copy_(_group_torch(features, idx))", PN2_CALL),
    C("grad_features = Variable(torch.cuda.FloatTensor(B, C, N).zero_())", "torch_cuda_api", "replace", True,
      "grad_features = grad_out.new_zeros(B, C, N)", PN2_ALLOC),
    C("pointnet2.group_points_grad_wrapper(", "custom_cuda_extension", "replace", True,
      "grad_features.scatter_add_(2, idx.long().view(B, 1, -1).expand(-1, C, -1), grad_out_data.view(B, C, -1))",
      PN2_CALL + " (scatter_add_ has an NPU kernel)"),
    C("idx = torch.cuda.IntTensor(B, npoint, nsample).zero_()", "torch_cuda_api", "replace", True,
      "idx = torch.zeros(B, npoint, nsample, dtype=torch.int32, device=xyz.device)", PN2_ALLOC),
    C("pointnet2.ball_query_wrapper(", "custom_cuda_extension", "replace", True,
      "idx.copy_(_ball_query_torch(radius, nsample, xyz, new_xyz))", PN2_CALL),
])

E("pn2-modules", "pointnet2/pointnet2_modules.py", "explicit_replacement",
  "Pointnet2.PyTorch pointnet2_modules.py (smoke-test __main__)", [
    C("torch.cuda.manual_seed_all(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1)",
      SEED_NOTE),
    C("xyz = torch.randn(2, 9, 3, requires_grad=True).cuda()", "tensor_to_device", "replace", True,
      "xyz = torch.randn(2, 9, 3, requires_grad=True).npu()", "smoke-test tensor moved to CUDA"),
    C("xyz_feats = torch.randn(2, 9, 6, requires_grad=True).cuda()", "tensor_to_device", "replace", True,
      "xyz_feats = torch.randn(2, 9, 6, requires_grad=True).npu()", "smoke-test tensor moved to CUDA"),
    C("test_module.cuda()", "tensor_to_device", "replace", True, "test_module.npu()",
      "smoke-test module moved to CUDA"),
    C("torch.cuda.FloatTensor(*new_features.size()).fill_(1)", "torch_cuda_api", "replace", True,
      "torch.ones_like(new_features)", "torch.cuda.FloatTensor constructor fails on a CPU-only torch build"),
])

# ---------------------------------------------------------------- PointPWC-Net
E("pwc-train", "train.py", "explicit_replacement", "PointPWC-Net train.py (DylanWusee/PointPWC)", [
    C("import torch, numpy as np, glob", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu if", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu if args.multi_gpu is None else '0,1,2,3'", CVD_NOTE),
    C("model.cuda(device_ids[0])", "tensor_to_device", "replace", True, "model.npu(device_ids[0])",
      "model moved to CUDA device"),
    C("model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])", DP_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model moved to CUDA"),
    C("model.load_state_dict(torch.load(args.pretrain))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.pretrain, map_location='cpu'))", LOAD_NOTE),
    C("optimizer = torch.optim.SGD(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=args.learning_rate, momentum=0.9)", OPT_NOTE),
    C("optimizer = torch.optim.Adam(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),",
      OPT_NOTE),
    C("=pos1 = pos1.cuda()", "tensor_to_device", "replace", True, "pos1 = pos1.npu()", "batch moved to CUDA"),
    C("=pos2 = pos2.cuda()", "tensor_to_device", "replace", True, "pos2 = pos2.npu()", "batch moved to CUDA"),
    C("=norm1 = norm1.cuda()", "tensor_to_device", "replace", True, "norm1 = norm1.npu()", "batch moved to CUDA"),
    C("=norm2 = norm2.cuda()", "tensor_to_device", "replace", True, "norm2 = norm2.npu()", "batch moved to CUDA"),
    C("=flow = flow.cuda()", "tensor_to_device", "replace", True, "flow = flow.npu()", "batch moved to CUDA"),
    C("[t.cuda() for t in (pos1, pos2, norm1, norm2, flow)]", "tensor_to_device", "replace", True,
      "pos1, pos2, norm1, norm2, flow = [t.npu() for t in (pos1, pos2, norm1, norm2, flow)]",
      "eval batch moved to CUDA"),
])

E("pwc-eval", "evaluate.py", "explicit_replacement", "PointPWC-Net evaluate.py", [
    C("import torch, numpy as np, glob", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu if", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu if args.multi_gpu is None else '0,1'", CVD_NOTE),
    C("model.load_state_dict(torch.load(pretrain))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(pretrain, map_location='cpu'))", LOAD_NOTE + " (released pretrained weights)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model moved to CUDA"),
    C("=pos1 = pos1.cuda()", "tensor_to_device", "replace", True, "pos1 = pos1.npu()", "batch moved to CUDA"),
    C("=pos2 = pos2.cuda()", "tensor_to_device", "replace", True, "pos2 = pos2.npu()", "batch moved to CUDA"),
    C("=norm1 = norm1.cuda()", "tensor_to_device", "replace", True, "norm1 = norm1.npu()", "batch moved to CUDA"),
    C("=norm2 = norm2.cuda()", "tensor_to_device", "replace", True, "norm2 = norm2.npu()", "batch moved to CUDA"),
    C("=flow = flow.cuda()", "tensor_to_device", "replace", True, "flow = flow.npu()", "batch moved to CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # kernels are async", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # kernels are async, wait before reading the clock", SYNC_NOTE),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "print('mean forward time: %.4f s (on %s)' % (np.mean(forward_time[5:]), torch.npu.get_device_name(0)))",
      "get_device_name initialises CUDA and raises on an NPU host"),
])

E("pwc-models", "models.py", "explicit_replacement", "PointPWC-Net models.py (model, multi-scale loss, __main__ timing)", [
    C("total_loss = torch.zeros(1).cuda()", "tensor_to_device", "replace", True,
      "total_loss = torch.zeros(1, device=gt_flow.device)", "loss accumulator created on CUDA inside the training loss"),
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '0'", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '0'", CVD_NOTE),
    C("=input = torch.randn((1, 8192, 3)).float().cuda()", "tensor_to_device", "replace", True,
      "input = torch.randn((1, 8192, 3)).float().npu()", "smoke-test tensor moved to CUDA"),
    C("model = PointConvSceneFlowPWC8192selfglobalPointConv().cuda()", "tensor_to_device", "replace", True,
      "model = PointConvSceneFlowPWC8192selfglobalPointConv().npu()", "smoke-test model moved to CUDA"),
    C("dump_input = torch.randn((1, 8192, 3)).float().cuda()", "tensor_to_device", "replace", True,
      "dump_input = torch.randn((1, 8192, 3)).float().npu()", "timing input moved to CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # forward done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # forward done", SYNC_NOTE),
])

PWC_PN2 = ("PointPWC bundles its own copy of the nvcc-built pointnet2 ops (not rewritten in this port); "
           "the helper is re-expressed with torch ops at the call site")
E("pwc-pcutil", "pointconv_util.py", "explicit_replacement", "PointPWC-Net pointconv_util.py", [
    C("from pointnet2 import pointnet2_utils", "custom_cuda_extension", "removal", True, None,
      "pointnet2_utils imports the compiled pointnet2_cuda module, which cannot be built on an NPU host"),
    C("new_points = pointnet2_utils.gather_operation(points_flipped, fps_idx)", "custom_cuda_extension", "replace", True,
      "new_points = torch.gather(points_flipped, 2, fps_idx.long().unsqueeze(1).expand(-1, points_flipped.shape[1], -1))",
      PWC_PN2),
    C("new_points = pointnet2_utils.grouping_operation(points_flipped, knn_idx.int())", "custom_cuda_extension", "replace",
      True, "new_points = index_points(points, knn_idx)  # batch-index gather, [B, N, K, C]", PWC_PN2),
    C("fps_idx = pointnet2_utils.furthest_point_sample(xyz, self.npoint)", "custom_cuda_extension", "replace", True,
      "fps_idx = farthest_point_sample_torch(xyz, self.npoint).int()", PWC_PN2 + " (iterative FPS in torch)"),
])

E("pwc-cfg", "config_train.yaml", "explicit_replacement", "PointPWC-Net config_train.yaml", [
    C("DEVICE: cuda", "device_type", "replace", False, "DEVICE: npu",
      "not read by train.py/evaluate.py (they call .cuda() directly); changed for consistency only"),
])

E("pwc-req", "requirements.txt", "explicit_replacement", "requirements.txt of a PointPWC / FlowNet3D fork", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "custom_cuda_extension", "removal", False, None,
      "CUDA wheel link page; harmless once the +cu111 pins are gone (plain PyPI torch on aarch64, CPU index on x86)"),
    C("torch==1.9.1+cu111", "custom_cuda_extension", "replace", True, "torch==2.1.0",
      "CUDA build of torch; torch_npu pairs only with specific torch versions (no 1.9 build), wheel must equal torch"),
    C("torchvision==0.10.1+cu111", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "CUDA build, and must match the new torch"),
    C("=numpy>=1.19,<1.24", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel (2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1); added with the torch pins"),
    C("pointnet2_ops @ git+", "custom_cuda_extension", "removal", True, None,
      "setup builds CUDA kernels with nvcc; fails on an Ascend host, ops are re-implemented in torch"),
    C("KNN_CUDA @ https://github.com/unlimblue", "custom_cuda_extension", "removal", False, None,
      "pure-python wheel that JIT-compiles CUDA at import (cpp_extension.load is X on NPU); nothing in this tree "
      "imports it, so the install itself does not fail"),
])

# ---------------------------------------------------------------- FLOT
E("flot-train", "flot/tools/train.py", "device_branch_or_abstraction", "FLOT flot/tools/train.py (valeoai/FLOT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", AVAIL_NOTE),
    C("optimizer = torch.optim.Adam(scene_flow.parameters(), lr=1e-3)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(scene_flow.parameters(), lr=1e-3)", OPT_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device calls into the CUDA runtime and fails on an NPU host"),
    C("torch.cuda.manual_seed(1234)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1234)", SEED_NOTE),
])

E("flot-model", "flot/models/scene_flow.py", "device_branch_or_abstraction",
  "FLOT model (graph, SetConv, Sinkhorn-based flow) - already device-agnostic", [])

# ---------------------------------------------------------------- Neural Scene Flow Prior
E("nsfp-opt", "optimization.py", "explicit_replacement",
  "Neural Scene Flow Prior optimization.py (Lilac-Lee/Neural_Scene_Flow_Prior)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("device = torch.device(\"cuda:0\")", "device_type", "replace", True, "device = torch.device(\"npu:0\")",
      "hard-coded CUDA device (used for the get_device_name log line)"),
    C("optimizer = torch.optim.SGD(params", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(params, lr=options.lr, momentum=options.momentum, weight_decay=options.weight_decay)",
      OPT_NOTE),
    C("optimizer = torch.optim.Adam(params", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr=options.lr, weight_decay=0)", OPT_NOTE),
    C("pc1 = pc1.cuda().contiguous()", "tensor_to_device", "replace", True, "pc1 = pc1.npu().contiguous()",
      "sample moved to CUDA"),
    C("pc2 = pc2.cuda().contiguous()", "tensor_to_device", "replace", True, "pc2 = pc2.npu().contiguous()",
      "sample moved to CUDA"),
    C("flow = flow.cuda().contiguous()", "tensor_to_device", "replace", True, "flow = flow.npu().contiguous()",
      "sample moved to CUDA"),
    C("'peak_mem_mb': torch.cuda.max_memory_allocated() / 1024 ** 2,", "torch_cuda_api", "replace", False,
      "'peak_mem_mb': torch.npu.max_memory_allocated() / 1024 ** 2,", MEMLOG_NOTE + " (written to results.csv)"),
    C("layer_size=options.layer_size).cuda()", "tensor_to_device", "replace", True,
      "net = Neural_Prior(filter_size=options.hidden_units, act_fn=options.act_fn, layer_size=options.layer_size).npu()",
      "model moved to CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
      "logging.info(f\"running on {torch.npu.get_device_name(device)}\")",
      "get_device_name initialises CUDA and raises on an NPU host"),
    C("torch.cuda.manual_seed_all(options.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(options.seed)", SEED_NOTE),
])

P3D_NOTE = ("PyTorch3D's knn_points is an nvcc-built extension op (CUDA or CPU kernels only, no NPU); "
            "replaced with a torch.cdist + topk helper that returns (dists, idx)")
E("nsfp-loss", "loss.py", "explicit_replacement", "Neural Scene Flow Prior / FNSF loss.py (PyTorch3D chamfer, DT)", [
    C("from pytorch3d.ops.knn import knn_points, knn_gather", "custom_cuda_extension", "replace", True,
      "from knn_torch import knn_points_torch, knn_gather  # cdist+topk, no pytorch3d",
      "pytorch3d ships CUDA builds only (conda pytorch3d / pytorch-cuda); the NPU env drops it"),
    C("from pytorch3d.loss import chamfer_distance", "custom_cuda_extension", "removal", True, None,
      "pytorch3d chamfer_distance runs knn_points internally; the ablation loss is rewritten on the torch helper"),
    C("x_nn = knn_points(y_pred, y_true", "custom_cuda_extension", "replace", True,
      "x_nn = knn_points_torch(y_pred, y_true, K=1)", P3D_NOTE),
    C("y_nn = knn_points(y_true, y_pred", "custom_cuda_extension", "replace", True,
      "y_nn = knn_points_torch(y_true, y_pred, K=1)", P3D_NOTE),
    C("loss, _ = chamfer_distance(pc1_deformed, pc2", "custom_cuda_extension", "replace", True,
      "loss = sum(d.dists[..., 0].mean() for d in (knn_points_torch(pc1_deformed, pc2, K=1), knn_points_torch(pc2, pc1_deformed, K=1)))",
      P3D_NOTE),
    C("nn = knn_points(pc1, pc1, K=k, return_nn=False)", "custom_cuda_extension", "replace", True,
      "nn = knn_points_torch(pc1, pc1, K=k)", P3D_NOTE),
    C("def __init__(self, pts, pmin, pmax, grid_factor, device=\"cuda:0\"):", "device_type", "replace", True,
      "def __init__(self, pts, pmin, pmax, grid_factor, device=\"npu:0\"):",
      "default device string is CUDA; callers that rely on the default fail on an NPU host"),
    C("dt = knn_points(self.grid.view(1, -1, 3)", "custom_cuda_extension", "replace", True,
      "dt = knn_points_torch(self.grid.view(1, -1, 3), pts.unsqueeze(0), K=1).dists[0, :, 0].sqrt()",
      P3D_NOTE + " (chunk the grid: cdist on millions of cells is memory heavy)"),
])

E("nsfp-utils", "utils.py", "explicit_replacement", "Neural Scene Flow Prior utils.py (metrics, timers, early stopping)", [
    C("if torch.cuda.is_available(): torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.synchronize()",
      "guarded: on an NPU host the guard is False, so tic() silently stops syncing; timings only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      SYNC_NOTE + " (Timer.toc, sync=True by default)"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "calls torch._C._cuda_resetPeakMemoryStats directly, which does not exist in a CPU-only torch build"),
    C("peak = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.device) / 1024 ** 2", MEMLOG_NOTE),
    C("reserved = torch.cuda.memory_reserved(self.device)", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(self.device) / 1024 ** 2", MEMLOG_NOTE),
    C("def to_device(batch, device=\"cuda\"):", "device_type", "replace", True,
      "def to_device(batch, device=\"npu\"):", "default device string is CUDA"),
])

SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment (LD_LIBRARY_PATH, ASCEND_*); without it import torch_npu fails on "
                "libhccl.so / libascendcl.so")
E("nsfp-run", "scripts/run_argoverse.sh", "explicit_replacement", "NSFP run script (Argoverse / nuScenes / KITTI)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}", CVD_NOTE + "; running one copy per card relies on it"),
    C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True, "npu-smi info -t usages -i ${GPU_ID}",
      "nvidia-smi is absent on an Ascend host and `set -e` aborts the script"),
    C("CUDA_LAUNCH_BLOCKING=0 python optimization.py", "env_var", "replace", False,
      "ASCEND_LAUNCH_BLOCKING=0 python optimization.py \\", "0 is the default on both sides; no effect either way"),
])

E("nsfp-env", "environment.yml", "explicit_replacement", "NSFP conda environment.yml (pytorch3d, pytorch-cuda)", [
    C("=- pytorch3d", "custom_cuda_extension", "removal", False, None,
      "conda channel only needed for the CUDA pytorch3d build; unused once pytorch3d is dropped"),
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "NVIDIA channel for pytorch-cuda; an unused channel does not break the solve"),
    C("=- pytorch=1.13.1", "custom_cuda_extension", "replace", True, "  - pytorch=2.1.0  # CPU build; pairs with torch-npu",
      "no torch_npu release for torch 1.13 (compatibility matrix); torch must equal the torch-npu base version"),
    C("=- torchvision=0.14.1", "custom_cuda_extension", "replace", True, "  - torchvision=0.16.0",
      "must match the new torch"),
    C("=- pytorch-cuda=11.7", "custom_cuda_extension", "removal", True, None,
      "CUDA runtime metapackage; pulls the CUDA variant of pytorch"),
    C("=- pytorch3d=0.7.4", "custom_cuda_extension", "removal", True, None,
      "conda pytorch3d builds are CUDA builds tied to pytorch-cuda; the NPU port uses a torch knn helper"),
    C("=- open3d==0.16.0", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "torch_npu wheel from pip, paired with torch 2.1.0"),
    C("=- pynvml", "custom_cuda_extension", "removal", False, None,
      "NVML bindings have no NPU counterpart (use npu-smi / torch.npu.utilization); nothing here imports it"),
])

# ---------------------------------------------------------------- 4DMOS
ME_NOTE = ("unconfirmed: MinkowskiEngine has CUDA and CPU kernels only (not covered by the knowledge base); an NPU "
           "port needs another sparse-conv backend, e.g. Ascend DrivingSDK")
E("mos-model", "src/mos4d/models/models.py", "explicit_replacement",
  "4DMOS src/mos4d/models/models.py (PRBonn/4DMOS, MinkowskiEngine + Lightning)", [
    C("import MinkowskiEngine as ME", "custom_cuda_extension", "replace", False,
      "import MinkowskiEngine as ME  # TODO(npu): swap for an NPU sparse-conv backend", ME_NOTE),
    C("torch.cuda.empty_cache()  # 10 stacked scans", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # 10 stacked scans through MinkUNet are memory hungry", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # ME keeps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # ME keeps coordinate maps around between batches", EMPTY_CACHE_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is False on an NPU host, so the cache release is skipped (memory only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("optimizer = torch.optim.Adam(self.parameters()", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)",
      OPT_NOTE),
    C("def voxelize_scan_sequence(points_4d, voxel_size, dt, device=\"cuda\"):", "device_type", "replace", True,
      "def voxelize_scan_sequence(points_4d, voxel_size, dt, device=\"npu\"):",
      "default device string is CUDA (the ROS node relies on the default)"),
    C("voxelize_scan_sequence(points_4d, voxel_size, dt, device='cuda')", "device_type", "replace", True,
      "sparse_tensor, unique_map = voxelize_scan_sequence(points_4d, voxel_size, dt, device='npu')",
      "explicit CUDA device string for ME.SparseTensor"),
])

E("mos-train", "scripts/train.py", "explicit_replacement", "4DMOS scripts/train.py (pytorch-lightning gpus=)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("import MinkowskiEngine as ME", "custom_cuda_extension", "replace", False,
      "import MinkowskiEngine as ME  # TODO(npu): sparse-conv backend", ME_NOTE),
    C("cfg = torch.load(checkpoint)[\"hyper_parameters\"]", "tensor_to_device", "replace", True,
      "cfg = torch.load(checkpoint, map_location=\"cpu\")[\"hyper_parameters\"]",
      LOAD_NOTE + " (a Lightning .ckpt holds the CUDA state_dict)"),
    C("n_gpus = min(cfg[\"TRAIN\"][\"N_GPUS\"], torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "n_gpus = min(cfg[\"TRAIN\"][\"N_GPUS\"], torch.npu.device_count())",
      "returns 0 on an NPU host, so training would be configured with zero devices"),
    C("gpus=n_gpus,", "device_type", "replace", True, "accelerator=\"npu\", devices=n_gpus,",
      "Lightning gpus= requests CUDA devices, which do not exist on an NPU host; an NPU accelerator plugin has to "
      "be registered with Lightning (plugin itself unconfirmed)"),
    C("strategy=\"ddp\" if n_gpus > 1 else None,", "dist_backend", "replace", False,
      "strategy=DDPStrategy(process_group_backend=\"hccl\") if n_gpus > 1 else None,",
      "unconfirmed: Lightning picks nccl only for CUDA root devices and gloo otherwise; HCCL has to be requested"),
])

E("mos-predict", "scripts/predict.py", "explicit_replacement", "4DMOS scripts/predict.py (+ a latency benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("cfg = torch.load(weights)[\"hyper_parameters\"]", "tensor_to_device", "replace", True,
      "cfg = torch.load(weights, map_location=\"cpu\")[\"hyper_parameters\"]", LOAD_NOTE),
    C("=ckpt = torch.load(weights)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(weights, map_location=\"cpu\")", LOAD_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model moved to CUDA"),
    C("past_point_clouds = [pc.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "past_point_clouds = [pc.npu(non_blocking=True) for pc in past_point_clouds]", "batch moved to CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)",
      "CUDA event base class is a dummy type in a CPU-only torch build; instantiating it raises"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA event cannot be created on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("trainer = Trainer(accelerator=\"gpu\", devices=1, logger=False)", "device_type", "replace", True,
      "trainer = Trainer(accelerator=\"npu\", devices=1, logger=False)",
      "accelerator='gpu' means CUDA/MPS; none on an NPU host (NPU accelerator plugin needed, unconfirmed)"),
])

E("mos-docker", "Dockerfile", "explicit_replacement", "4DMOS Dockerfile (CUDA devel image, MinkowskiEngine build)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image; an Ascend image with CANN (which also exports the set_env.sh variables) is needed"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list; ignored without nvcc"),
    C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "nvcc flags; ignored without nvcc"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "points at a toolkit that is not in the image; only read by extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (or pass --device)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; no effect on Ascend"),
    C("RUN pip3 install torch==1.10.2+cu113", "custom_cuda_extension", "replace", True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0",
      "CUDA wheels from the cu113 index; no torch_npu for torch 1.10, and torch must equal the torch-npu base"),
    C("--install-option=\"--force_cuda\"", "custom_cuda_extension", "replace", True,
      "    --install-option=\"--cpu_only\"",
      "--force_cuda makes the MinkowskiEngine build require nvcc, which the CANN image lacks"),
    C("RUN pip3 install pytorch_lightning==1.6.4", "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install torch-npu==2.1.0.post17", "torch_npu wheel for torch 2.1.0 (2.1.0.post17 pairs with CANN 8.3.RC1)"),
])

# ---------------------------------------------------------------- MotionSeg3D (range-image MOS)
E("mseg-trainer", "modules/trainer.py", "device_branch_or_abstraction",
  "MotionSeg3D / LiDAR-MOS modules/trainer.py (SalsaNext, DataParallel, AMP)", [
    C("self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", AVAIL_NOTE),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:",
      AVAIL_NOTE + "; self.gpu stays False and every .cuda() guard is skipped"),
    C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model moved to CUDA"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 1:", COUNT_NOTE),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "replace", False,
      "print(\"Let's use\", torch.npu.device_count(), \"NPUs!\")", "log line only"),
    C("self.model = nn.DataParallel(self.model)  # spread in gpus", "distributed_framework", "replace", True,
      "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[self.local_rank])", DP_NOTE),
    C("self.model = convert_model(self.model).cuda()  # sync batchnorm", "distributed_framework", "replace", True,
      "self.model = nn.SyncBatchNorm.convert_sync_batchnorm(self.model).npu()",
      "vacancy's SynchronizedBatchNorm relies on DataParallel replication callbacks; torch SyncBatchNorm works on NPU "
      "(Ascend API list) with DDP"),
    C("self.n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.n_gpus = torch.npu.device_count()", COUNT_NOTE),
    C("self.criterion = nn.DataParallel(self.criterion).cuda()", "distributed_framework", "replace", True,
      "self.criterion = self.criterion.npu()", DP_NOTE + " (loss no longer wrapped)"),
    C("self.ls = nn.DataParallel(self.ls).cuda()", "distributed_framework", "replace", True,
      "self.ls = self.ls.npu()", DP_NOTE + " (loss no longer wrapped)"),
    C("self.optimizer = optim.SGD(", "fused_optimizer", "replace", False,
      "self.optimizer = torch_npu.optim.NpuFusedSGD([{'params': self.model.parameters()}],", OPT_NOTE),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.ARCH[\"train\"].get(\"amp\", True))", AMP_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("in_vol = in_vol.cuda()", "tensor_to_device", "replace", True, "in_vol = in_vol.npu()", "batch moved to CUDA"),
    C("proj_labels = proj_labels.cuda().long()", "tensor_to_device", "replace", True,
      "proj_labels = proj_labels.npu().long()", "labels moved to CUDA"),
    C("with torch.cuda.amp.autocast(enabled=self.scaler.is_enabled()):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.scaler.is_enabled()):", AMP_NOTE),
    C("idx = torch.ones(self.n_gpus).cuda()", "tensor_to_device", "replace", True,
      "idx = torch.ones(self.n_gpus).npu()", "tensor created on CUDA (multi-device backward weights)"),
    C("mem=torch.cuda.max_memory_allocated() / 1024 ** 2)", "torch_cuda_api", "replace", False,
      "mem=torch.npu.max_memory_allocated() / 1024 ** 2)", MEMLOG_NOTE),
    C("torch.cuda.empty_cache()  # before validation", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # before validation", EMPTY_CACHE_NOTE),
    C("in_vol = in_vol.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "in_vol = in_vol.npu(non_blocking=True)", "validation batch moved to CUDA"),
    C("proj_mask = proj_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "proj_mask = proj_mask.npu(non_blocking=True)", "validation mask moved to CUDA"),
    C("proj_labels = proj_labels.cuda(non_blocking=True).long()", "tensor_to_device", "replace", True,
      "proj_labels = proj_labels.npu(non_blocking=True).long()", "validation labels moved to CUDA"),
])

E("mseg-user", "modules/user.py", "device_branch_or_abstraction", "MotionSeg3D / LiDAR-MOS modules/user.py (inference)", [
    C("self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", AVAIL_NOTE),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:", AVAIL_NOTE + " (inference on CPU)"),
    C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model moved to CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=proj_in = proj_in.cuda()", "tensor_to_device", "replace", True, "proj_in = proj_in.npu()",
      "range image moved to CUDA"),
    C("=p_x = p_x.cuda()", "tensor_to_device", "replace", True, "p_x = p_x.npu()", "index tensor moved to CUDA"),
    C("=p_y = p_y.cuda()", "tensor_to_device", "replace", True, "p_y = p_y.npu()", "index tensor moved to CUDA"),
    C("=proj_range = proj_range.cuda()", "tensor_to_device", "replace", True, "proj_range = proj_range.npu()",
      "KNN post-processing input moved to CUDA"),
    C("=unproj_range = unproj_range.cuda()", "tensor_to_device", "replace", True,
      "unproj_range = unproj_range.npu()", "KNN post-processing input moved to CUDA"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "timing guard: False on an NPU host, so CNN time is measured without a sync (timings only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("torch.cuda.synchronize()  # wait for the knn", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the knn post-processing", SYNC_NOTE + " (guarded by self.gpu)"),
])

E("mseg-sh", "script/infer_eval.sh", "explicit_replacement", "MotionSeg3D infer + evaluate shell script", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0", CVD_NOTE),
    C("CUDA_VISIBLE_DEVICES=1 python3 utils/knn_refine.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 utils/knn_refine.py -d $DatasetPath -p $SavePath --split $SPLIT",
      CVD_NOTE + "; the refine pass would share device 0 with nothing else pinned"),
])

# ---------------------------------------------------------------- DeFlow / SeFlow (KTH-RPL)
E("deflow-train", "train.py", "explicit_replacement", "DeFlow train.py (hydra + lightning 2.x, Argoverse 2)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("if torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
      "if torch.npu.is_available():  # no SM capability on NPU; fp32 matmul settings apply as-is",
      "get_device_capability initialises CUDA and raises on an NPU host (and returns None on NPU anyway)"),
    C("cfg.gpus = torch.cuda.device_count() if torch.cuda.device_count() < cfg.gpus else cfg.gpus", "torch_cuda_api",
      "replace", True,
      "cfg.gpus = torch.npu.device_count() if torch.npu.device_count() < cfg.gpus else cfg.gpus",
      "returns 0 on an NPU host, so devices=0 is passed to the Trainer"),
    C("accelerator=\"gpu\",", "device_type", "replace", True, "accelerator=\"npu\",",
      "accelerator='gpu' means CUDA/MPS; none on an NPU host (NPU accelerator plugin needed, unconfirmed)"),
    C("strategy=DDPStrategy(find_unused_parameters=False) if", "dist_backend", "replace", False,
      "strategy=DDPStrategy(find_unused_parameters=False, process_group_backend=\"hccl\") if cfg.gpus > 1 else \"auto\",",
      "unconfirmed: Lightning picks nccl only for CUDA root devices and gloo otherwise; HCCL has to be requested"),
    C("precision=\"16-mixed\" if", "amp", "replace", False,
      "plugins=[MixedPrecision(\"16-mixed\", device=\"npu\")] if cfg.get(\"amp\", False) else None,",
      "unconfirmed: Lightning's 16-mixed plugin builds autocast for the CUDA device type; default cfg has amp off"),
])

E("deflow-chamfer", "assets/cuda/chamfer3D/__init__.py", "kernel_rewrite",
  "DeFlow assets/cuda/chamfer3D Python wrapper over an nvcc-built extension", [
    C("=import chamfer3D", "custom_cuda_extension", "removal", True, None,
      "nvcc-built CUDA extension module (setup.py with CUDAExtension); replaced by torch code below"),
    C("chamfer3D.forward(pc0, pc1, dist0, dist1, idx0, idx1)", "custom_cuda_extension", "replace", True,
      "d, i = torch.cdist(pc0, pc1).pow(2).min(dim=1); dist0.copy_(d); idx0.copy_(i); "
      "d, i = torch.cdist(pc1, pc0).pow(2).min(dim=1); dist1.copy_(d); idx1.copy_(i)",
      "CUDA kernel call; re-implemented with cdist+min (chunked for >100k points)"),
    C("chamfer3D.backward(", "custom_cuda_extension", "replace", True,
      "grad_pc0, grad_pc1 = _chamfer_backward_torch(pc0, pc1, idx0, idx1, grad_dist0, grad_dist1)",
      "CUDA kernel call; gradient 2*(p - nn(p)) written with index_add_"),
    C("print('0: {:.3f}MB'.format(torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "print('0: {:.3f}MB'.format(torch.npu.memory_allocated() / 1024 ** 2))", MEMLOG_NOTE),
    C("pc0 = torch.from_numpy(pc0[..., :3]).float().cuda().contiguous()", "tensor_to_device", "replace", True,
      "pc0 = torch.from_numpy(pc0[..., :3]).float().npu().contiguous()", "demo tensor moved to CUDA"),
    C("pc1 = torch.from_numpy(pc1[..., :3]).float().cuda().contiguous()", "tensor_to_device", "replace", True,
      "pc1 = torch.from_numpy(pc1[..., :3]).float().npu().contiguous()", "demo tensor moved to CUDA"),
    C("print('1: {:.3f}MB'.format(torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "print('1: {:.3f}MB'.format(torch.npu.memory_allocated() / 1024 ** 2))", MEMLOG_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", SYNC_NOTE),
    C("print('2: {:.3f}MB'.format(torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print('2: {:.3f}MB'.format(torch.npu.max_memory_allocated() / 1024 ** 2))", MEMLOG_NOTE),
])

E("deflow-voxel", "src/models/basic/make_voxels.py", "kernel_rewrite",
  "DeFlow / ZeroFlow src/models/basic/make_voxels.py (vendored mmcv voxel ops)", [
    C("from assets.cuda.mmcv import Voxelization", "custom_cuda_extension", "replace", True,
      "from src.models.basic.torch_voxel import Voxelization  # PyTorch drop-in (or DrivingSDK)",
      "vendored mmcv CUDA op built with nvcc; Ascend counterparts live in DrivingSDK (API not verified here)"),
    C("from assets.cuda.mmcv import DynamicScatter", "custom_cuda_extension", "replace", True,
      "from src.models.basic.torch_voxel import DynamicScatter  # segment max/mean in torch",
      "vendored mmcv CUDA op built with nvcc"),
    C("out.scatter_reduce_(0, index.unsqueeze(-1).expand_as(src), src, reduce=\"amax\", include_self=True)",
      "unsupported_op_workaround", "replace", False,
      "out = _segment_max_sorted(src, index, num_segments)  # sort + segment reduce, no scatter_reduce",
      "scatter_reduce has no NPU kernel (absent from the native op lists, X in Ascend's API list, flagged by "
      "msFmkTransplt); torch_npu falls back to the CPU, so it is slow rather than broken"),
])

E("deflow-env", "environment.yaml", "explicit_replacement", "DeFlow conda environment.yaml (pytorch-cuda, nvidia channel)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None, "NVIDIA channel; unused without CUDA packages"),
    C("=- pytorch::pytorch=2.0.0", "custom_cuda_extension", "replace", True,
      "  - pytorch::pytorch=2.1.0  # CPU build; must equal the torch-npu base version",
      "no torch_npu release pairs with torch 2.0.0 (matrix: 2.0.1 EOL, then 2.1.0+)"),
    C("=- pytorch::pytorch-cuda=11.7", "custom_cuda_extension", "removal", True, None,
      "CUDA runtime metapackage; selects the CUDA variant of pytorch"),
    C("=- nvidia/label/cuda-11.7.0::cuda", "custom_cuda_extension", "removal", False, None,
      "CUDA toolkit only needed for nvcc extension builds; installing it does not break anything"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu wheel from pip, paired with torch 2.1.0"),
    C("=- spconv-cu117", "custom_cuda_extension", "removal", False, None,
      "unconfirmed: CUDA build of spconv, no NPU kernels; nothing in the probe files imports it"),
    C("=- ./assets/cuda/chamfer3D", "custom_cuda_extension", "replace", True,
      "    - ./assets/npu/chamfer3D  # pure-PyTorch package",
      "pip builds a CUDAExtension here; no nvcc on an Ascend host"),
    C("=- ./assets/cuda/mmcv", "custom_cuda_extension", "removal", True, None,
      "pip builds the vendored mmcv CUDA ops; no nvcc on an Ascend host"),
])

# ---------------------------------------------------------------- DDP fork of PointPWC
E("pwc-ddp", "train_ddp.py", "explicit_replacement", "DDP + AMP training script from a PointPWC fork (torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, NPU_IMPORT, IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "NVIDIA apex is not installable on NPU; the ImportError guard silently falls back to torch.optim.Adam (speed only)"),
    C("def setup_distributed(backend=\"nccl\"):", "dist_backend", "replace", False,
      "def setup_distributed(backend=\"hccl\"):", "default never used (main always passes backend); consistency"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "calls into the CUDA runtime; fails on an NPU host"),
    C("os.environ.setdefault(\"NCCL_ASYNC_ERROR_HANDLING\", \"1\")", "env_var", "replace", False,
      "os.environ.setdefault(\"HCCL_ASYNC_ERROR_HANDLING\", \"1\")",
      "ignored by HCCL (its watchdog reads HCCL_ASYNC_ERROR_HANDLING, default 1)"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "unconfirmed: older torch releases accept barrier(device_ids=...) only for the NCCL backend"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(),", "False on an NPU host: validation batches silently not pinned (speed only)"),
    C("return torch.optim.SGD(", "fused_optimizer", "replace", False,
      "return torch_npu.optim.NpuFusedSGD(model.parameters(), lr=args.learning_rate, momentum=0.9)", OPT_NOTE),
    C("return torch.optim.Adam(", "fused_optimizer", "replace", False,
      "return torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),",
      OPT_NOTE),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
    C("mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 1024 ** 3", MEMLOG_NOTE),
    C("backend = os.environ.get(\"DIST_BACKEND\", \"nccl\")", "dist_backend", "replace", True,
      "backend = os.environ.get(\"DIST_BACKEND\", \"hccl\")", "NCCL backend is not available with torch_npu; HCCL"),
    C("device = torch.device(\"cuda\", local_rank)", "device_type", "replace", True,
      "device = torch.device(\"npu\", local_rank)", "hard-coded CUDA device"),
    C("props = torch.cuda.get_device_properties(local_rank)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(local_rank)",
      "raises on an NPU host; the NPU version still has name and total_memory"),
    C("state = torch.load(args.pretrain, map_location=\"cuda:%d\" % local_rank)", "device_type", "replace", True,
      "state = torch.load(args.pretrain, map_location=\"npu:%d\" % local_rank)", "CUDA map_location string"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_NOTE),
    C("if backend == \"nccl\":", "dist_backend", "replace", True, "if backend == \"hccl\":",
      "backend-string comparison is not rewritten by any tool (msFmkTransplt README); with hccl the "
      "sync + barrier is silently skipped"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", SYNC_NOTE),
])

NCCL_IB_NOTE = "NCCL InfiniBand/RoCE tuning; ignored by HCCL (NPU RoCE NICs are configured with hccn_tool)"
E("pwc-dist-sh", "scripts/dist_train.sh", "explicit_replacement", "torchrun multi-node launcher with NCCL tuning", [
    C("NNODES=2 NODE_RANK=1 MASTER_ADDR", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      SET_ENV_NOTE + "; sourced before `set -u`, the script reads unset variables"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", CVD_NOTE),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_DEBUG has no effect with HCCL; CANN log level is the closest knob"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL, which then picks the host NIC by its own priority rules; rename to keep eth0"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, NCCL_IB_NOTE),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, NCCL_IB_NOTE),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, NCCL_IB_NOTE),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "ignored by HCCL (default 1 there anyway)"),
    C("export DIST_BACKEND=nccl", "dist_backend", "replace", True, "export DIST_BACKEND=hccl",
      "read by train_ddp.py as the process-group backend; nccl is unavailable on NPU"),
    C("nvidia-smi -L", "torch_cuda_api", "replace", True, "npu-smi info -l",
      "nvidia-smi is absent on an Ascend host and `set -e` aborts the launcher"),
])
