"""Labels for probe431 (3-D occupancy prediction: SurroundOcc, TPVFormer, OccFormer, FlashOcc, BEVDet-Occ).

One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit port: torch.npu.*, 'npu',
hccl, no transfer_to_npu). `required` = with every other labelled line already ported, would leaving this
line unchanged fail, compute something wrong or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before anything touches torch.npu / 'npu' devices / hccl; "
               "autoload only exists from torch_npu 2.5.1 and mmcv-1.x-era occupancy code is ported onto torch 2.1")
MX_NOTE = ("Ascend DrivingSDK (mx_driving) provides NPU kernels for autonomous-driving ops (knowledge §6); the exact "
           "function name/signature is from memory, unconfirmed")

# ----------------------------------------------------------------------------------------------------------
# SurroundOcc (weiyithu/SurroundOcc) -- BEVFormer-derived, mmdet3d 0.17 / mmcv-full 1.4
# ----------------------------------------------------------------------------------------------------------
E("so_train", "tools/train.py", "explicit_replacement",
  "weiyithu/SurroundOcc tools/train.py (BEVFormer-style mmdet3d launcher with plugin import)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("so_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "weiyithu/SurroundOcc tools/dist_train.sh (torch.distributed.launch wrapper)", [])

E("so_sca", "projects/mmdet3d_plugin/surroundocc/modules/spatial_cross_attention.py", "device_branch_or_abstraction",
  "weiyithu/SurroundOcc surroundocc/modules/spatial_cross_attention.py (SCA + MSDeformableAttention3D)", [
    C("from .multi_scale_deformable_attn_function import MultiScaleDeformableAttnFunction_fp32, \\",
      "custom_cuda_extension", "npu_only_addition", False,
      "from mx_driving import multi_scale_deformable_attn",
      "import the NPU multi-scale deformable attention kernel. " + MX_NOTE),
    C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
      "if value.device.type == 'npu':",
      "on an NPU tensor the CUDA test is False and the pure-PyTorch grid_sample fallback runs (grid_sampler_2d has "
      "an NPU kernel), so results stay correct; routing to the fused kernel is a performance/memory change"),
    C("output = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", False,
      "output = multi_scale_deformable_attn(",
      "mmcv _ext ms_deform_attn CUDA function replaced by the DrivingSDK op inside the NPU branch. " + MX_NOTE),
    C("attention_weights, self.im2col_step)", "custom_cuda_extension", "replace", False,
      "attention_weights)",
      "the NPU op takes no im2col_step argument (from memory, unconfirmed)"),
])

E("so_msda_fn", "projects/mmdet3d_plugin/surroundocc/modules/multi_scale_deformable_attn_function.py",
  "explicit_replacement",
  "weiyithu/SurroundOcc surroundocc/modules/multi_scale_deformable_attn_function.py (mmcv ext autograd wrappers)", [])

E("so_test_api", "projects/mmdet3d_plugin/surroundocc/apis/test.py", "explicit_replacement",
  "weiyithu/SurroundOcc surroundocc/apis/test.py (custom_multi_gpu_test, collect_results_cpu/gpu)", [
    C("=device='cuda')", "device_type", "replace", True, "device='npu')",
      "dir_tensor is broadcast with dist.broadcast over HCCL; a 'cuda' tensor cannot be created on an NPU host"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "rank-0 tmpdir name tensor; same reason"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
      "gpu_collect path: pickled results gathered with dist.all_gather over HCCL"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "all_gather of per-rank sizes over HCCL"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "padded send buffer for all_gather"),
])

E("so_config", "projects/configs/surroundocc/surroundocc.py", "explicit_replacement",
  "weiyithu/SurroundOcc projects/configs/surroundocc/surroundocc.py (model/data/schedule config)", [])

E("so_detector", "projects/mmdet3d_plugin/surroundocc/detectors/surroundocc.py", "explicit_replacement",
  "weiyithu/SurroundOcc surroundocc/detectors/surroundocc.py (detector, eval + open3d visualisation)", [])

E("so_gen_occ", "tools/generate_occupancy_nuscenes/generate_occupancy_nuscenes.py", "kernel_rewrite",
  "weiyithu/SurroundOcc tools/generate_occupancy_nuscenes/generate_occupancy_nuscenes.py (dense GT via chamfer NN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=import chamfer", "custom_cuda_extension", "removal", True, None,
      "chamfer is a CUDA-only extension (ChamferDistancePytorch); it cannot be built without nvcc so the import "
      "raises ImportError on an NPU host"),
    C("x = torch.from_numpy(dense_voxels).cuda().unsqueeze(0).float()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(dense_voxels).npu().unsqueeze(0).float()", ".cuda() fails on an NPU host"),
    C("y = torch.from_numpy(pcd_np_cor).cuda().unsqueeze(0).float()", "tensor_to_device", "replace", True,
      "y = torch.from_numpy(pcd_np_cor).npu().unsqueeze(0).float()", ".cuda() fails on an NPU host"),
    C("d1, d2, idx1, idx2 = chamfer.forward(x, y)", "custom_cuda_extension", "replace", True,
      "idx1 = torch.cat([torch.cdist(xc, y).argmin(dim=-1) for xc in x.split(8192, dim=1)], dim=1)",
      "only idx1 (nearest lidar point of each dense voxel) is used; chunked cdist+argmin in plain torch replaces the "
      "CUDA kernel (chunking keeps the distance matrix within device memory)"),
])

E("so_install", "docs/install.md", "explicit_replacement",
  "weiyithu/SurroundOcc docs/install.md (conda + cu111 wheels + mmcv-full + chamfer ext)", [
    C("pip install torch==1.10.1+cu111", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "cu111 wheels cannot drive an NPU; torch-npu 2.1.0.post12 pairs with torch 2.1.0 / CANN 8.1.RC1 "
      "(knowledge §1.2); on x86 the CPU torch wheel comes from download.pytorch.org/whl/cpu"),
    C("=pip install mmcv-full==1.4.0", "custom_cuda_extension", "replace", False,
      "MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2",
      "mmcv ops (DCNv2 in the backbone, ms_deform_attn) need an NPU-enabled mmcv build; mmcv>=1.7 NPU support and "
      "FORCE_NPU are from memory, unconfirmed"),
    C("python setup.py install --user", "custom_cuda_extension", "removal", False, None,
      "the chamfer CUDA extension is no longer used after the cdist rewrite; the doc step would fail to build but "
      "nothing depends on it"),
])

# ----------------------------------------------------------------------------------------------------------
# TPVFormer (wzzheng/TPVFormer) -- hand-written training loop, mp.spawn + tcp:// init
# ----------------------------------------------------------------------------------------------------------
E("tpv_train", "train.py", "explicit_replacement",
  "wzzheng/TPVFormer train.py (mp.spawn, tcp:// NCCL init, DDP, .cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
      "gpus = torch.npu.device_count()  # gpus per node",
      "0 on an NPU host -> world_size 0 and rank arithmetic breaks"),
    C('backend="nccl", init_method=f"tcp://{ip}:{port}",', "dist_backend", "replace", True,
      'backend="hccl", init_method=f"tcp://{ip}:{port}",', "NCCL is unavailable on Ascend; HCCL is the backend"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "binds each spawned process to its NPU"),
    C("my_model.cuda(),", "tensor_to_device", "replace", True, "my_model.npu(),", "model to NPU before DDP"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id"),
    C("my_model = my_model.cuda()", "tensor_to_device", "replace", False, "my_model = my_model.npu()",
      "non-distributed branch is dead code (distributed is hard-coded True); edited for consistency only"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "training batch to NPU"),
    C("train_grid = train_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
      "train_grid = train_grid.to(torch.float32).npu()", "training batch to NPU"),
    C("voxel_label = train_vox_label.type(torch.LongTensor).cuda()", "tensor_to_device", "replace", True,
      "voxel_label = train_vox_label.type(torch.LongTensor).npu()", "voxel labels (occupancy config path)"),
    C("train_pt_labs = train_pt_labs.cuda()", "tensor_to_device", "replace", True,
      "train_pt_labs = train_pt_labs.npu()", "point labels; reached with the lidarseg configs"),
    C("val_imgs = val_imgs.cuda()", "tensor_to_device", "replace", True, "val_imgs = val_imgs.npu()",
      "validation batch to NPU"),
    C("val_grid_float = val_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
      "val_grid_float = val_grid.to(torch.float32).npu()", "validation batch to NPU"),
    C("vox_label = val_vox_label.type(torch.LongTensor).cuda()", "tensor_to_device", "replace", True,
      "vox_label = val_vox_label.type(torch.LongTensor).npu()", "validation labels to NPU"),
    C("val_pt_labs = val_pt_labs.cuda()", "tensor_to_device", "replace", True, "val_pt_labs = val_pt_labs.npu()",
      "validation point labels to NPU"),
    C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
      "decides how many processes mp.spawn starts; 0 on an NPU host"),
])

E("tpv_eval", "eval.py", "explicit_replacement",
  "wzzheng/TPVFormer eval.py (same DDP bootstrap as train.py, checkpoint evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
      "gpus = torch.npu.device_count()  # gpus per node", "world size computed from the device count"),
    C('backend="nccl", init_method=f"tcp://{ip}:{port}",', "dist_backend", "replace", True,
      'backend="hccl", init_method=f"tcp://{ip}:{port}",', "HCCL instead of NCCL"),
    C("=torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "per-process device binding"),
    C("my_model.cuda(),", "tensor_to_device", "replace", True, "my_model.npu(),", "model to NPU before DDP"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id"),
    C("my_model = my_model.cuda()", "tensor_to_device", "replace", False, "my_model = my_model.npu()",
      "dead branch (distributed hard-coded True); consistency only"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "eval batch to NPU"),
    C("val_grid_float = val_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
      "val_grid_float = val_grid.to(torch.float32).npu()", "eval batch to NPU"),
    C("val_pt_labs = val_pt_labs.cuda()", "tensor_to_device", "replace", True, "val_pt_labs = val_pt_labs.npu()",
      "eval labels to NPU"),
    C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
      "number of spawned processes"),
])

E("tpv_metric", "utils/metric_util.py", "explicit_replacement",
  "wzzheng/TPVFormer utils/metric_util.py (MeanIoU with dist.all_reduce of per-class counters)", [
    C("self.total_seen = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_seen = torch.zeros(self.num_classes).npu()",
      "counters are all_reduced over HCCL in _after_epoch, so they must live on the NPU"),
    C("self.total_correct = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_correct = torch.zeros(self.num_classes).npu()", "same"),
    C("self.total_positive = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_positive = torch.zeros(self.num_classes).npu()", "same"),
])

E("tpv_cvha", "tpvformer04/modules/cross_view_hybrid_attention.py", "device_branch_or_abstraction",
  "wzzheng/TPVFormer tpvformer04/modules/cross_view_hybrid_attention.py (deformable self-attn over TPV planes)", [
    C("from .multi_scale_deformable_attn_function import MultiScaleDeformableAttnFunction_fp32",
      "custom_cuda_extension", "npu_only_addition", False, "from mx_driving import multi_scale_deformable_attn",
      "NPU kernel import. " + MX_NOTE),
    C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
      "if value.device.type == 'npu':",
      "as in SurroundOcc: without the change the grid_sample fallback runs on NPU -- correct but slow"),
    C("output = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", False,
      "output = multi_scale_deformable_attn(", "fused NPU kernel. " + MX_NOTE),
    C("attention_weights, self.im2col_step)", "custom_cuda_extension", "replace", False, "attention_weights)",
      "no im2col_step in the NPU op (from memory, unconfirmed)"),
])

E("tpv_config", "config/tpv04_occupancy.py", "explicit_replacement",
  "wzzheng/TPVFormer config/tpv04_occupancy.py (TPV occupancy config)", [])

E("tpv_lovasz", "utils/lovasz_losses.py", "explicit_replacement",
  "wzzheng/TPVFormer utils/lovasz_losses.py (Lovasz-softmax, device-agnostic)", [])

E("tpv_databuilder", "builder/data_builder.py", "explicit_replacement",
  "wzzheng/TPVFormer builder/data_builder.py (nuScenes loaders with DistributedSampler)", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "performance only: without an NPU pin device the loader may skip pinning (depends on torch version); "
      "unconfirmed"),
])

E("tpv_vis", "visualization/vis_frame.py", "explicit_replacement",
  "wzzheng/TPVFormer visualization/vis_frame.py (mayavi offscreen rendering of predictions)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("my_model = model_builder.build(cfg.model).to(torch.device('cuda:0'))", "device_type", "replace", True,
      "my_model = model_builder.build(cfg.model).to(torch.device('npu:0'))", "model placed on cuda:0"),
    C("imgs = torch.from_numpy(np.stack([imgs]).astype(np.float32)).to('cuda:0')", "device_type", "replace", True,
      "imgs = torch.from_numpy(np.stack([imgs]).astype(np.float32)).to('npu:0')", "input to the model device"),
    C("grid = torch.from_numpy(np.stack([grid]).astype(np.float32)).to('cuda:0')", "device_type", "replace", True,
      "grid = torch.from_numpy(np.stack([grid]).astype(np.float32)).to('npu:0')", "input to the model device"),
])

E("tpv_run_eval", "scripts/run_eval.sh", "explicit_replacement",
  "wzzheng/TPVFormer README eval command wrapped in a launcher script", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "eval.py spawns one process per visible device (torch.npu.device_count() after the port); the CUDA variable is "
      "ignored by the Ascend runtime, so all NPUs would be used instead of the chosen four"),
])

# ----------------------------------------------------------------------------------------------------------
# OccFormer (zhangyp15/OccFormer) -- BEVDet/mmdet3d based, BEVFusion-style bev_pool CUDA ext
# ----------------------------------------------------------------------------------------------------------
E("occf_setup", "setup.py", "kernel_rewrite",
  "zhangyp15/OccFormer setup.py (make_cuda_ext for bev_pool / voxel_pooling)", [
    C("name='bev_pool_ext',", "custom_cuda_extension", "removal", True, None,
      "drop the whole make_cuda_ext(...) entry: its .cu source sits in `sources`, so even the CppExtension fallback "
      "hands a .cu file to the build and fails without nvcc; bev_pool is rewritten in torch"),
    C("name='voxel_pooling_ext',", "custom_cuda_extension", "removal", True, None,
      "same: CUDA source in `sources`, cannot build on an NPU host"),
])

E("occf_bevpool", "projects/mmdet3d_plugin/ops/bev_pool/bev_pool.py", "kernel_rewrite",
  "zhangyp15/OccFormer projects/mmdet3d_plugin/ops/bev_pool/bev_pool.py (BEVFusion QuickCumsumCuda)", [
    C("=from . import bev_pool_ext", "custom_cuda_extension", "removal", True, None,
      "the CUDA extension is no longer built (see setup.py)"),
    C("x = QuickCumsumCuda.apply(feats, coords, ranks, B, D, H, W)", "custom_cuda_extension", "replace", True,
      "x = feats.new_zeros((B, D, H, W, feats.shape[1])).index_put_((coords[:, 3].long(), coords[:, 2].long(), "
      "coords[:, 0].long(), coords[:, 1].long()), feats, accumulate=True)",
      "sum-pooling rewritten with index_put_(accumulate=True) (index_put has an NPU kernel per ops list); same "
      "(B, D, H, W, C) layout as the kernel's output"),
])

E("occf_vt", "projects/mmdet3d_plugin/occupancy/image2bev/ViewTransformerLSSVoxel.py", "explicit_replacement",
  "zhangyp15/OccFormer occupancy/image2bev/ViewTransformerLSSVoxel.py (LSS voxel lifting + depth loss)", [
    C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", False,
      "from torch_npu.npu.amp.autocast_mode import autocast",
      "the `autocast(enabled=False)` guard around BCE only disables CUDA autocast; it matters on NPU only when NPU "
      "autocast is active, which these fp32 configs do not enable; unconfirmed"),
])

E("occf_head", "projects/mmdet3d_plugin/occupancy/dense_heads/mask2former_nusc_occ.py", "explicit_replacement",
  "zhangyp15/OccFormer occupancy/dense_heads/mask2former_nusc_occ.py (Mask2Former 3D occupancy head)", [])

E("occf_dist_test", "tools/dist_test.sh", "explicit_replacement",
  "zhangyp15/OccFormer tools/dist_test.sh (multi-node torch.distributed.launch)", [])

# ----------------------------------------------------------------------------------------------------------
# FlashOcc (Yzichen/FlashOCC) -- BEVDet dev3.0 based, bev_pool_v2 CUDA ext, TensorRT deploy
# ----------------------------------------------------------------------------------------------------------
E("flo_bevpool", "projects/mmdet3d_plugin/ops/bev_pool_v2/bev_pool.py", "kernel_rewrite",
  "Yzichen/FlashOCC projects/mmdet3d_plugin/ops/bev_pool_v2/bev_pool.py (BEVPoolv2 autograd + TRT wrapper)", [
    C("=from . import bev_pool_v2_ext", "custom_cuda_extension", "replace", True,
      "from mx_driving import bev_pool_v2 as npu_bev_pool_v2",
      "bev_pool_v2_ext is a CUDA extension and cannot be built/imported on an NPU host. " + MX_NOTE),
    C("x = QuickCumsumCuda.apply(depth, feat, ranks_depth, ranks_feat, ranks_bev,", "custom_cuda_extension",
      "replace", True, "return npu_bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev,",
      "QuickCumsumCuda calls the removed extension; the DrivingSDK op is assumed to return the permuted "
      "(B, C, Z, Y, X) tensor itself, so the following permute becomes unreachable (unconfirmed)"),
    C("depth = torch.from_numpy(depth).float().cuda()", "tensor_to_device", "replace", True,
      "depth = torch.from_numpy(depth).float().npu()", "self-test (run via __main__) tensors"),
    C("device='cuda').requires_grad_()", "device_type", "replace", True, "device='npu').requires_grad_()",
      "self-test tensor"),
    C("ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().cuda()", "tensor_to_device", "replace", True,
      "ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().npu()", "self-test tensor"),
    C("ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().cuda()", "tensor_to_device", "replace", True,
      "ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().npu()", "self-test tensor"),
    C("ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().cuda()", "tensor_to_device", "replace", True,
      "ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().npu()", "self-test tensor"),
    C("grad_depth = grad_depth.cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", "replace", True,
      "grad_depth = grad_depth.npu().view(1, 1, 2, 2, 2)", "self-test reference gradient"),
    C("grad_feat = torch.from_numpy(grad_feat).float().cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", "replace",
      True, "grad_feat = torch.from_numpy(grad_feat).float().npu().view(1, 1, 2, 2, 2)",
      "self-test reference gradient"),
])

E("flo_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement",
  "Yzichen/FlashOCC tools/analysis_tools/benchmark.py (BEVDet FPS benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel",
      "needed by the ported wrapper line below; mmcv.device.npu (mmcv>=1.7) is from memory"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "MMDataParallel is a torch.nn.DataParallel (✘ in Ascend's API list) whose scatter targets CUDA; the model "
      "would not be placed on the NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing fence; torch.cuda.synchronize raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the last kernel", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the last kernel before stopping the clock", "timing fence"),
    C("f'{torch.cuda.max_memory_allocated() / 1024 ** 2:.0f} MB')", "torch_cuda_api", "replace", True,
      "f'{torch.npu.max_memory_allocated() / 1024 ** 2:.0f} MB')",
      "peak memory report; torch.npu.max_memory_allocated exists (§2.1)"),
])

E("flo_docker", "docker/Dockerfile", "explicit_replacement",
  "Yzichen/FlashOCC / BEVDet docker/Dockerfile (nvidia/cuda base, cu113 wheels, FORCE_CUDA build)", [
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu${UBUNTU}", "env_var", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "needs a CANN toolkit base (driver mounted from the host); image name/tag from memory, unconfirmed"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", "removal", False, None, "inert without nvcc"),
    C('ENV TORCH_NVCC_FLAGS=', "env_var", "removal", False, None, "inert without nvcc"),
    C("RUN pip install torch==1.10.0+cu113", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
      "CUDA wheels -> CPU torch + matching torch-npu (knowledge §1.1/§1.2)"),
    C("RUN pip install mmcv-full==1.5.3", "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2",
      "the cu113/torch1.10 mmcv-full wheel links the CUDA runtime and the old torch ABI, so mmcv.ops fails to "
      "import; NPU build flags from memory, unconfirmed"),
    C("RUN pip install pycuda", "custom_cuda_extension", "replace", True,
      "RUN pip install lyft_dataset_sdk networkx==2.2 numba==0.53.0 numpy==1.23.4 \\",
      "pycuda (TensorRT deployment helper) needs the CUDA toolkit to build; drop it"),
    C('=ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "forces CUDAExtension for mmdet3d/FlashOcc ops, which then needs nvcc and fails the image build"),
])

E("flo_head", "projects/mmdet3d_plugin/models/dense_heads/bev_occ_head.py", "explicit_replacement",
  "Yzichen/FlashOCC models/dense_heads/bev_occ_head.py (Channel-to-Height BEVOCCHead2D/3D)", [])

E("flo_config", "projects/configs/flashocc/flashocc-r50.py", "explicit_replacement",
  "Yzichen/FlashOCC projects/configs/flashocc/flashocc-r50.py", [])

# ----------------------------------------------------------------------------------------------------------
# BEVDet-Occ (HuangJunJie2017/BEVDet dev3.0) -- mmdet3d 1.0.0rc4 fork
# ----------------------------------------------------------------------------------------------------------
E("bevdet_train", "tools/train.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet tools/train.py (mmdet3d 1.0.0rc4 launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=setup_multi_processes(cfg)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "msFmkTransplt performance advice for dynamic shapes (ranks/intervals in BEVPool vary per sample); "
      "performance only"),
])

E("bevdet_apis_train", "mmdet3d/apis/train.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet mmdet3d/apis/train.py (init_random_seed, train_detector with MM(D)DP)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "the wrapper lines below use the NPU classes; mmcv.device.npu (mmcv>=1.7) from memory"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):",
      "with seed=None and world_size>1 the seed tensor is broadcast over HCCL and must be an NPU tensor"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is lazily queued and does not raise; torch.manual_seed on the line above also "
      "seeds the registered privateuse1 device in torch 2.x (from memory), so this is for clarity; unconfirmed"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "mmcv's CUDA-oriented scatter; NPU wrapper from mmcv>=1.7 (from memory)"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model to NPU before DDP"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id"),
    C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
      "single-card path; torch.nn.DataParallel is ✘ in Ascend's API list"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", ".cuda(i) fails on an NPU host"),
])

E("bevdet_vt", "mmdet3d/models/necks/view_transformer.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet mmdet3d/models/necks/view_transformer.py (LSSViewTransformer + BEVDepth loss)", [
    C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", False,
      "from torch_npu.npu.amp.autocast_mode import autocast",
      "same as OccFormer: the fp32 guard around binary_cross_entropy only matters when NPU autocast is on; the "
      "occupancy configs train in fp32; unconfirmed"),
])

E("bevdet_runtime", "configs/_base_/default_runtime.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet configs/_base_/default_runtime.py (mmdet3d runtime defaults)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "tools/train.py passes cfg.dist_params to init_dist -> init_process_group(backend='nccl') fails on Ascend"),
])

E("bevdet_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "HuangJunJie2017/BEVDet tools/dist_train.sh (multi-node launcher with NCCL env)", [
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "host NIC selection for HCCL root-info setup (knowledge: HCCL_SOCKET_IFNAME); HCCL has its own default NIC "
      "order, so only needed on hosts where that picks the wrong NIC"),
    C("=export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced by the shell profile or container, so environment-dependent"),
])

E("bevdet_occ_metrics", "mmdet3d/core/evaluation/occ_metrics.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet mmdet3d/core/evaluation/occ_metrics.py (numpy mIoU for Occ3D)", [])
