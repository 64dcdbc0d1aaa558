"""Labels for probe486 (vectorized HD-map construction: HDMapNet, VectorMapNet, MapTR/MapTRv2, StreamMapNet).

One C(...) per upstream line a careful porter would edit for Ascend/torch_npu (explicit port, no transfer_to_npu).
required: complete-port counterfactual (all other labelled lines already ported).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
NOTE_IMPORT = ("entry script: torch_npu must be imported before any torch.npu / .npu() use; only torch_npu >= 2.5.1 "
               "autoloads it, and these stacks pin older torch")
NOTE_MMCV_DP = ("mmcv's MMDataParallel/MMDistributedDataParallel scatter inputs with CUDA streams; mmcv >= 1.7 has "
                "mmcv.device.npu.NPUDataParallel / NPUDistributedDataParallel (class names unconfirmed in the knowledge base)")
NOTE_MSDA = ("mmcv/BEVFormer MSDA kernel is a CUDA-only _ext op; Ascend DrivingSDK (mx_driving) provides the NPU op "
             "(exact function name unconfirmed in the knowledge base)")
NOTE_MSDA_BRANCH = ("without this the NPU tensor fails `value.is_cuda` and silently takes "
                    "multi_scale_deformable_attn_pytorch (grid_sample based): correct but slow, so not required")
NOTE_IM2COL = "the NPU MSDA op takes no im2col_step argument (signature unconfirmed in the knowledge base)"

# ---------------------------------------------------------------- HDMapNet
HDM = "Tsinghua-MARS-Lab/HDMapNet"

E("hdm_train", "train.py", "explicit_replacement", HDM + " train.py (argparse, .cuda() chains, Adam, tensorboardX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("model.load_state_dict(torch.load(args.modelf), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.modelf, map_location='cpu'), strict=False)",
      "--finetune loads a released checkpoint saved from a CUDA model; without map_location torch.load tries to "
      "restore CUDA storages and fails on an NPU-only host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "move model to the NPU"),
    C("loss_fn = SimpleLoss(args.pos_weight).cuda()", "tensor_to_device", "replace", True,
      "loss_fn = SimpleLoss(args.pos_weight).npu()",
      "BCEWithLogitsLoss holds pos_weight as a buffer; it must live on the same device as the logits"),
    C("embedded_loss_fn = DiscriminativeLoss(", "tensor_to_device", "replace", False,
      "embedded_loss_fn = DiscriminativeLoss(args.embedding_dim, args.delta_v, args.delta_d).npu()",
      "DiscriminativeLoss has no parameters or buffers, so Module.cuda() never touches a tensor (no CUDA call); "
      "edited for consistency only"),
    C("semantic, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
      "semantic, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
      "batch tensors to the NPU"),
    C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
      "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch tensors to the NPU"),
    C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
      "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch tensors to the NPU"),
    C("semantic_gt = semantic_gt.cuda().float()", "tensor_to_device", "replace", True,
      "semantic_gt = semantic_gt.npu().float()", "target must be on the logits' device"),
    C("instance_gt = instance_gt.cuda()", "tensor_to_device", "replace", True,
      "instance_gt = instance_gt.npu()", "instance target for the discriminative loss"),
    C("direction_gt = direction_gt.cuda()", "tensor_to_device", "replace", True,
      "direction_gt = direction_gt.npu()", "direction target"),
])

E("hdm_evaluate", "evaluate.py", "explicit_replacement", HDM + " evaluate.py (eval_iou, also imported by train.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("semantic, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
      "semantic, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
      "eval_iou runs inside training too"),
    C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
      "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch tensors to the NPU"),
    C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
      "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch tensors to the NPU"),
    C("semantic_gt = semantic_gt.cuda().float()", "tensor_to_device", "replace", True,
      "semantic_gt = semantic_gt.npu().float()", "target on the prediction's device"),
    C("model.load_state_dict(torch.load(args.modelf), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.modelf, map_location='cpu'), strict=False)",
      "GPU-trained checkpoint; CUDA storages cannot be restored on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to NPU"),
])

E("hdm_vis_pred", "vis_pred.py", "explicit_replacement", HDM + " vis_pred.py (segmentation / vector visualisation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("semantic, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
      "semantic, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
      "batch tensors to the NPU"),
    C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
      "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch tensors to the NPU"),
    C("=lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
      "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch tensors to the NPU"),
    C("segmentation, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
      "segmentation, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
      "vector visualisation path"),
    C("=post_trans.cuda(), post_rots.cuda(),", "tensor_to_device", "replace", True,
      "post_trans.npu(), post_rots.npu(),", "batch tensors to the NPU"),
    C("lidar_data.cuda(), lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device",
      "replace", True, "lidar_data.npu(), lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())",
      "batch tensors to the NPU"),
    C("model.load_state_dict(torch.load(args.modelf), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.modelf, map_location='cpu'), strict=False)",
      "GPU-trained checkpoint"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to NPU"),
])

E("hdm_export_json", "export_pred_to_json.py", "explicit_replacement",
  HDM + " export_pred_to_json.py (submission export)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("segmentation, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
      "segmentation, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
      "batch tensors to the NPU"),
    C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
      "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch tensors to the NPU"),
    C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
      "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch tensors to the NPU"),
    C("torch.load(args.modelf, map_location='cuda:0')", "device_type", "replace", True,
      "model.load_state_dict(torch.load(args.modelf, map_location='npu:0'))",
      "explicit CUDA map_location fails on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to NPU"),
])

E("hdm_hdmapnet", "model/hdmapnet.py", "explicit_replacement",
  HDM + " model/hdmapnet.py (view transformation + IPM, device taken from inputs)", [])

E("hdm_homography", "model/homography.py", "explicit_replacement",
  HDM + " model/homography.py (IPM plane grid built with cuda=True flags at __init__)", [
    C("R = R.cuda()", "tensor_to_device", "replace", True, "R = R.npu()",
      "rotation matrix built while constructing IPM (cuda=True default) - runs at model build time"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "plane grid coordinates"),
    C("y = y.cuda()", "tensor_to_device", "replace", True, "y = y.npu()", "plane grid coordinates"),
    C("zs = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True, "zs = torch.tensor([0.]).npu()",
      "self.planes is a plain attribute, not a buffer, so model.npu() would not move it: it must be created on NPU"),
    C("yaws = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True, "yaws = torch.tensor([0.]).npu()",
      "see zs"),
    C("rolls = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True, "rolls = torch.tensor([0.]).npu()",
      "see zs"),
    C("pitchs = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True,
      "pitchs = torch.tensor([0.]).npu()", "see zs"),
    C("self.tri_mask = self.tri_mask.cuda()", "tensor_to_device", "replace", True,
      "self.tri_mask = self.tri_mask.npu()", "executed in __init__ whenever cuda=True, even with visual=False"),
    C("self.flipped_tri_mask = self.flipped_tri_mask.cuda()", "tensor_to_device", "replace", True,
      "self.flipped_tri_mask = self.flipped_tri_mask.npu()", "same as tri_mask"),
])

E("hdm_loss", "loss.py", "explicit_replacement",
  HDM + " loss.py (SimpleLoss, DiscriminativeLoss; device=embedding.device everywhere)", [])

E("hdm_dataset", "data/dataset.py", "explicit_replacement",
  HDM + " data/dataset.py (nuScenes loading, CPU-only DataLoader)", [])

# ---------------------------------------------------------------- VectorMapNet
VMN = "Mrmoore98/VectorMapNet_code"

E("vmn_train", "tools/train.py", "explicit_replacement", VMN + " tools/train.py (mmdet3d train_model, init_dist)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
])

E("vmn_test", "tools/test.py", "explicit_replacement", VMN + " tools/test.py (MMDataParallel / MMDDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel", NOTE_MMCV_DP),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=[0])", NOTE_MMCV_DP),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(", NOTE_MMCV_DP),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model to NPU before wrapping"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device fails without CUDA"),
])

E("vmn_config", "configs/vectormapnet.py", "explicit_replacement", VMN + " configs/vectormapnet.py (mmcv config)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "init_dist passes this backend to init_process_group; NCCL does not exist on Ascend"),
])

E("vmn_dist_train", "tools/dist_train.sh", "explicit_replacement", VMN + " tools/dist_train.sh", [
    C("=CONFIG=$1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the container/profile, so not required here"),
    C("export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}", "env_var", "removal", False, None,
      "NCCL-only knob; inert under HCCL"),
])

E("vmn_mapper", "plugin/models/mapers/vectormapnet.py", "explicit_replacement",
  VMN + " plugin/models/mapers/vectormapnet.py (batch formatting with .to(device))", [])

E("vmn_polyline_gen", "plugin/models/heads/polyline_generator.py", "explicit_replacement",
  VMN + " polyline generator head (autoregressive transformer, nucleus sampling)", [])

# ---------------------------------------------------------------- MapTR / MapTRv2
MAPTR = "hustvl/MapTR"

E("maptr_train", "tools/train.py", "explicit_replacement", MAPTR + " tools/train.py (BEVFormer-derived launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
])

E("maptr_mmdet_train", "projects/mmdet3d_plugin/bevformer/apis/mmdet_train.py", "explicit_replacement",
  MAPTR + " projects/mmdet3d_plugin/bevformer/apis/mmdet_train.py (custom_train_detector)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel", NOTE_MMCV_DP),
    C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(", NOTE_MMCV_DP),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model to NPU before DDP"),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "current NPU index"),
    C("=eval_model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "eval_model = NPUDistributedDataParallel(", NOTE_MMCV_DP),
    C("eval_model.cuda(),", "tensor_to_device", "replace", True, "eval_model.npu(),", "eval model to NPU"),
    C("device_ids=[torch.cuda.current_device()], broadcast_buffers=False,", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()], broadcast_buffers=False,", "current NPU index"),
    C("=model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
      NOTE_MMCV_DP),
    C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-card path"),
    C("=eval_model = MMDataParallel(", "distributed_framework", "replace", True, "eval_model = NPUDataParallel(",
      NOTE_MMCV_DP),
    C("eval_model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "eval_model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-card eval model"),
])

E("maptr_test_api", "projects/mmdet3d_plugin/bevformer/apis/test.py", "explicit_replacement",
  MAPTR + " projects/mmdet3d_plugin/bevformer/apis/test.py (custom_multi_gpu_test, collect_results_*)", [
    C("=device='cuda')", "device_type", "replace", True, "device='npu')",
      "tmpdir name is broadcast with dist.broadcast; HCCL needs NPU tensors (cpu-collect path, tmpdir=None)"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "rank-0 tmpdir tensor"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
      "gpu_collect path: pickled results all_gathered over HCCL"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "all_gather of shapes"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "padded send buffer"),
])

E("maptr_msda_fn", "projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  "explicit_replacement",
  MAPTR + " bevformer/modules/multi_scale_deformable_attn_function.py (mmcv _ext MSDA autograd wrappers)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "CUDA custom_fwd never casts under NPU autocast; but in this port the call sites route to the NPU MSDA op, "
      "so these Functions are dead on NPU and the import itself works without CUDA"),
])

E("maptr_sca", "projects/mmdet3d_plugin/bevformer/modules/spatial_cross_attention.py", "explicit_replacement",
  MAPTR + " bevformer/modules/spatial_cross_attention.py (SCA + MSDeformableAttention3D)", [
    C("from projects.mmdet3d_plugin.models.utils.bricks import run_time", "custom_cuda_extension",
      "npu_only_addition", True, "import mx_driving", NOTE_MSDA),
    C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
      "if value.device.type == 'npu':", NOTE_MSDA_BRANCH),
    C("output = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = mx_driving.multi_scale_deformable_attn(",
      "once the branch is taken for NPU tensors the CUDA _ext kernel cannot run; " + NOTE_MSDA),
    C("attention_weights, self.im2col_step)", "custom_cuda_extension", "replace", False, "attention_weights)",
      NOTE_IM2COL),
])

E("maptr_gkt_setup", "projects/mmdet3d_plugin/maptr/modules/ops/geometric_kernel_attn/setup.py", "kernel_rewrite",
  MAPTR + " GKT op setup.py (CUDAExtension, raises without CUDA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "needed for torch.npu.is_available() in the new build branch"),
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "npu_only_addition", True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu/ACL include and lib dirs"),
    C("=else:", "custom_cuda_extension", "add_branch", True,
      "elif torch.npu.is_available():  # extension = NpuExtension; Ascend C kernels from src/npu; WITH_NPU",
      "no nvcc on Ascend: without an NPU branch the build reaches raise NotImplementedError('Cuda is not availabel'); "
      "the .cu kernels must be rewritten in Ascend C"),
])

E("maptr_gkt_func", "projects/mmdet3d_plugin/maptr/modules/ops/geometric_kernel_attn/functions/geometric_kernel_attn_func.py",
  "kernel_rewrite", MAPTR + " GKT autograd Function calling the compiled GeometricKernelAttention module", [])

E("maptr_encoder", "projects/mmdet3d_plugin/maptr/modules/encoder.py", "explicit_replacement",
  MAPTR + " (MapTRv2) maptr/modules/encoder.py (LSSTransform with BEVFusion bev_pool)", [
    C("from mmdet3d.ops import bev_pool", "custom_cuda_extension", "replace", True, "from mx_driving import bev_pool",
      "BEVFusion-style bev_pool is a CUDA-only extension; DrivingSDK ships an NPU bev_pool with the same "
      "(feats, coords, B, D, H, W) call (name/signature unconfirmed in the knowledge base)"),
    C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", False,
      "from torch_npu.npu.amp import autocast",
      "autocast(enabled=False) around the depth BCE; get_depth_loss is already @force_fp32, so the CUDA context "
      "being inert on NPU does not change results - not required"),
])

E("maptr_runtime", "projects/configs/_base_/default_runtime.py", "explicit_replacement",
  MAPTR + " projects/configs/_base_/default_runtime.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "inherited by every MapTR config; passed to init_dist -> init_process_group"),
])

E("maptrv2_config", "projects/configs/maptrv2/maptrv2_nusc_r50_24ep.py", "explicit_replacement",
  MAPTR + " projects/configs/maptrv2/maptrv2_nusc_r50_24ep.py (LSS encoder, fp16 loss scale)", [])

E("maptr_dist_train", "tools/dist_train.sh", "explicit_replacement", MAPTR + " tools/dist_train.sh", [
    C("=CONFIG=$1", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually set up by the container, so not required here"),
])

E("maptr_vis", "tools/maptrv2/nusc_vis_pred.py", "explicit_replacement",
  MAPTR + " tools/maptrv2/vis_pred.py (single-card visualisation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      True, "from mmcv.device.npu import NPUDataParallel", NOTE_MMCV_DP),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=[0])", NOTE_MMCV_DP),
])

# ---------------------------------------------------------------- StreamMapNet
SMN = "yuantianyuan01/StreamMapNet"

E("smn_train", "tools/train.py", "explicit_replacement", SMN + " tools/train.py (mmdet3d 1.0 style, init_random_seed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("seed = init_random_seed(args.seed)", "device_type", "replace", True,
      "seed = init_random_seed(args.seed, device='npu')",
      "--seed defaults to None: with world_size > 1 mmdet's init_random_seed broadcasts a tensor created on its "
      "default device='cuda', which fails under HCCL"),
])

E("smn_benchmark", "tools/benchmark.py", "explicit_replacement", SMN + " tools/benchmark.py (FPS / peak memory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
    C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
      "from mmcv.device.npu import NPUDataParallel", NOTE_MMCV_DP),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model, device_ids=[0])", NOTE_MMCV_DP),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "initialises CUDA -> raises on an NPU host"),
    C("torch.cuda.synchronize()  # wait", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for pending kernels before timing",
      "NPU ops are asynchronous; the CUDA call raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "end-of-iteration sync for timing"),
    C("mem_mb = torch.cuda.max_memory_allocated() / 1024 / 1024", "torch_cuda_api", "replace", True,
      "mem_mb = torch.npu.max_memory_allocated() / 1024 / 1024",
      "torch.cuda memory stats return 0 when CUDA is not initialised: silently wrong report"),
])

E("smn_mapper", "plugin/models/mapers/StreamMapNet.py", "explicit_replacement",
  SMN + " plugin/models/mapers/StreamMapNet.py (streaming BEV memory warped with float64 ego poses)", [
    C("prev_e2g_trans = self.plane.new_tensor(", "unsupported_op_workaround", "replace", True,
      "prev_e2g_trans = torch.tensor(pose_memory[i]['ego2global_translation'], dtype=torch.float64)",
      "pose algebra is float64 (global coordinates); torch.matmul on NPU accepts only bf16/fp16/fp32 "
      "(torch_api_npu_support_2.7.1), so build the 4x4 matrices on CPU"),
    C("prev_e2g_rot = self.plane.new_tensor(", "unsupported_op_workaround", "replace", True,
      "prev_e2g_rot = torch.tensor(pose_memory[i]['ego2global_rotation'], dtype=torch.float64)",
      "see prev_e2g_trans; the eye(4) matrices follow prev_e2g_trans.device and need no edit"),
    C("curr_e2g_trans = self.plane.new_tensor(", "unsupported_op_workaround", "replace", True,
      "curr_e2g_trans = torch.tensor(img_metas[i]['ego2global_translation'], dtype=torch.float64)",
      "see prev_e2g_trans"),
    C("curr_e2g_rot = self.plane.new_tensor(", "unsupported_op_workaround", "replace", True,
      "curr_e2g_rot = torch.tensor(img_metas[i]['ego2global_rotation'], dtype=torch.float64)",
      "see prev_e2g_trans"),
    C("prev_coord = torch.einsum('lk,ijk->ijl', curr2prev_matrix, self.plane)", "unsupported_op_workaround",
      "replace", True,
      "prev_coord = torch.einsum('lk,ijk->ijl', curr2prev_matrix.float().to(self.plane.device), self.plane.float())[..., :2]",
      "the relative (curr->prev) transform is small and safe in fp32; move it to the NPU next to the grid"),
    C("self.register_buffer('plane', plane.double())", "unsupported_op_workaround", "replace", False,
      "self.register_buffer('plane', plane.float())",
      "keeps the BEV grid out of fp64 on the device; the einsum line already casts, so performance/memory only"),
])

E("smn_memory", "plugin/models/utils/memory_buffer.py", "explicit_replacement",
  SMN + " plugin/models/utils/memory_buffer.py (StreamTensorMemory)", [])

E("smn_config", "plugin/configs/nusc_newsplit_480_60x30_24e.py", "explicit_replacement",
  SMN + " plugin/configs/nusc_newsplit_480_60x30_24e.py", [
    C("dist_params = dict(backend='nccl', port=29501)", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl', port=29501)", "process-group backend for Ascend"),
])

E("smn_msda", "plugin/models/transformer_utils/CustomMSDeformableAttention.py", "explicit_replacement",
  SMN + " plugin/models/transformer_utils/CustomMSDeformableAttention.py (mmcv MSDA in the map decoder)", [
    C("from mmcv.utils import deprecated_api_warning", "custom_cuda_extension", "npu_only_addition", True,
      "import mx_driving", NOTE_MSDA),
    C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
      "if value.device.type == 'npu':", NOTE_MSDA_BRANCH),
    C("output_fp32 = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output_fp32 = mx_driving.multi_scale_deformable_attn(", NOTE_MSDA),
    C("sampling_locations.to(torch.float32), attention_weights, self.im2col_step)", "custom_cuda_extension",
      "replace", False, "sampling_locations.to(torch.float32), attention_weights)", NOTE_IM2COL),
    C("output = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = mx_driving.multi_scale_deformable_attn(", NOTE_MSDA),
    C("=attention_weights, self.im2col_step)", "custom_cuda_extension", "replace", False, "attention_weights)",
      NOTE_IM2COL),
])

E("smn_requirements", "requirements.txt", "explicit_replacement",
  SMN + " requirements.txt (torch and mmcv-full installed out of band)", [])
