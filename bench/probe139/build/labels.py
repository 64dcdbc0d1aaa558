# Labels for probe139 (LiDAR 3-D detection toolboxes, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point; requirements pin torch 2.1.0, where torch_npu is not auto-loaded "
               "(autoload only since torch_npu 2.5.1) so torch.npu / .npu() need the explicit import")
MX_NOTE = "mx_driving (Ascend DrivingSDK) op name/signature taken from its docs, not from the knowledge base: unconfirmed"

# ---------------------------------------------------------------- OpenPCDet tools
E("pcdet_tools_train", "tools/train.py", "explicit_replacement", "OpenPCDet tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 8  # NPU reports no SM capability; always honour --no_tf32",
      "torch.cuda.get_device_capability initialises CUDA and raises on an NPU host; torch.npu.get_device_capability "
      "returns None unless TORCH_NPU_DEVICE_CAPABILITY is set (knowledge 2.8 / TSV), so the unpack would fail too"),
    C("args.tcp_port, args.local_rank, backend='nccl'", "dist_backend", "replace", True,
      "args.tcp_port, args.local_rank, backend='hccl'",
      "explicit NCCL backend; Ascend collectives use HCCL (init_process_group with nccl fails on an NPU host)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "Module.cuda() needs a CUDA device"),
    C("device_ids=[cfg.LOCAL_RANK % torch.cuda.device_count()]", "torch_cuda_api", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.LOCAL_RANK % torch.npu.device_count()])",
      "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
])

E("pcdet_tools_test", "tools/test.py", "explicit_replacement", "OpenPCDet tools/test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "single-checkpoint eval path"),
    C("model.cuda()  # params may have been loaded on cpu (dist_test)", "tensor_to_device", "replace", True,
      "model.npu()  # params may have been loaded on cpu (dist_test)", "--eval_all path"),
    C("os.environ['CUDA_LAUNCH_BLOCKING'] = '1'", "env_var", "replace", False,
      "os.environ['ASCEND_LAUNCH_BLOCKING'] = '1'",
      "only for --infer_time; the CUDA variable is ignored on NPU so launches stay async and the latency "
      "numbers are skewed, results unaffected"),
    C("args.tcp_port, args.local_rank, backend='nccl'", "dist_backend", "replace", True,
      "args.tcp_port, args.local_rank, backend='hccl'", "NCCL -> HCCL"),
])

E("pcdet_train_utils", "tools/train_utils/train_utils.py", "explicit_replacement",
  "OpenPCDet tools/train_utils/train_utils.py", [
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp, init_scale=optim_cfg.get('LOSS_SCALE_FP16', 2.0 ** 16))",
      "torch.cuda.amp.GradScaler warns and disables itself without CUDA; together with the no-op autocast below "
      "--use_amp silently trains in fp32 (slower, not wrong). NPU form torch_npu.npu.amp.GradScaler (TSV)"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "cuda autocast does not touch NPU ops: silent no-op, AMP speed-up lost"),
    C("gpu_info = os.popen('gpustat').read()", "torch_cuda_api", "replace", False,
      "gpu_info = os.popen('npu-smi info').read()",
      "gpustat reads NVML; on an NPU host it only logs an error string. npu-smi is the Ascend tool (knowledge 6). "
      "Not a torch API: nearest kind"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "tb_log.add_scalar('meta_data/max_mem_gb', torch.npu.max_memory_allocated() / 1024 ** 3, accumulated_iter)",
      "returns 0 when CUDA was never initialised: wrong tensorboard value, no failure"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised; NPU cache is not released"),
])

E("pcdet_eval_utils", "tools/eval_utils/eval_utils.py", "explicit_replacement",
  "OpenPCDet tools/eval_utils/eval_utils.py", [
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on an NPU host -> modulo by zero on the next line (dist_test)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--infer_time path; torch.cuda.synchronize initialises CUDA and raises"),
    C("torch.cuda.synchronize()  # wait for the NMS kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the NMS kernels before stopping the clock", "same, end of timed region"),
])

E("pcdet_demo", "tools/demo.py", "device_branch_or_abstraction", "OpenPCDet tools/demo.py (with a --device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda:0'", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0', help='device to run the model on')",
      "default device string feeds set_device below"),
    C("if args.device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.device.startswith('npu') and not torch.npu.is_available():",
      "guard turns inert once the default is npu:0; edited so it still guards the NPU case"),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)",
      "raises without CUDA; also rejects an 'npu:0' string"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.to(args.device)",
      "Module.cuda() needs a CUDA device"),
])

E("pcdet_dist_train_sh", "tools/scripts/dist_train.sh", "explicit_replacement", "OpenPCDet tools/scripts/dist_train.sh", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced before torch_npu can load "
      "(knowledge: 'Please run source set_env.sh'); unless the container already exports it"),
])

E("pcdet_slurm_train_sh", "tools/scripts/slurm_train.sh", "explicit_replacement", "OpenPCDet tools/scripts/slurm_train.sh", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the srun tasks"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
      "Slurm GRES name for Ascend cards is site-defined: unconfirmed"),
])

E("fork_multinode_sh", "tools/scripts/torchrun_multinode.sh", "explicit_replacement",
  "team fork of OpenPCDet: torchrun multi-node launcher with NCCL tuning", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN env must be sourced; set_env.sh is known to abort under set -u (CMAKE_PREFIX_PATH unbound, knowledge "
      "host-formats 4), hence the +u/-u wrap"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored by the Ascend runtime: a device subset would silently not apply"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-bond0}",
      "HCCL ignores NCCL_*; without it HCCL picks the NIC by its own order and link setup can fail on multi-NIC hosts"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no HCCL equivalent; inert on NPU"),
    C("export NCCL_IB_HCA=", "env_var", "removal", False, None,
      "HCCL uses the NPU RoCE ports configured with hccn_tool, not host HCAs; inert"),
    C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "debug verbosity only"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (knowledge distributed 1, default already 1)"),
    C('echo "[node ${NODE_RANK}/${NNODES}] GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "[node ${NODE_RANK}/${NNODES}] NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"',
      "once CUDA_VISIBLE_DEVICES is no longer exported, set -u aborts the script on this expansion"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi is absent on an NPU host; with set -e the script exits here. Not a torch API: nearest kind"),
])

# ---------------------------------------------------------------- pcdet utils
E("pcdet_common_utils", "pcdet/utils/common_utils.py", "explicit_replacement", "OpenPCDet pcdet/utils/common_utils.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silently queued/no-op without CUDA; only reproducibility of the NPU RNG is affected"),
    C("def init_dist_slurm(tcp_port, local_rank, backend='nccl'):", "dist_backend", "replace", False,
      "def init_dist_slurm(tcp_port, local_rank, backend='hccl'):",
      "default only; tools/train.py and test.py pass backend explicitly"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on an NPU host -> ZeroDivisionError in the next line"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "raises without CUDA"),
    C("def init_dist_pytorch(tcp_port, local_rank, backend='nccl'):", "dist_backend", "replace", False,
      "def init_dist_pytorch(tcp_port, local_rank, backend='hccl'):",
      "default only; callers pass backend explicitly"),
    C("num_gpus = torch.cuda.device_count()  # GPUs visible on this node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # NPUs visible on this node", "0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(local_rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank % num_gpus)", "raises without CUDA"),
    C("gpu_per_machine = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpu_per_machine = torch.npu.device_count()",
      "returns 0; the shared-memory gt-database loader takes rank % gpu_per_machine"),
])

E("pcdet_spconv_utils", "pcdet/utils/spconv_utils.py", "kernel_rewrite", "OpenPCDet pcdet/utils/spconv_utils.py", [
    C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
      "import mx_driving.spconv as spconv",
      "spconv-cu1xx is a CUDA build (cumm kernels) with no NPU backend (knowledge 6: CUDA extensions need an Ascend "
      "port). DrivingSDK ships SparseConv3d/SubMConv3d/SparseInverseConv3d; " + MX_NOTE),
])

E("pcdet_box_utils", "pcdet/utils/box_utils.py", "explicit_replacement", "OpenPCDet pcdet/utils/box_utils.py", [])

# ---------------------------------------------------------------- pcdet models
E("pcdet_models_init", "pcdet/models/__init__.py", "explicit_replacement",
  "OpenPCDet pcdet/models/__init__.py (load_data_to_gpu)", [
    C("batch_dict[key] = val.cuda()", "tensor_to_device", "replace", True, "batch_dict[key] = val.npu()",
      "camera images (BEVFusion path)"),
    C("kornia.image_to_tensor(val).float().cuda().contiguous()", "tensor_to_device", "replace", True,
      "batch_dict[key] = kornia.image_to_tensor(val).float().npu().contiguous()", "CaDDN images"),
    C("torch.from_numpy(val).int().cuda()", "tensor_to_device", "replace", True,
      "batch_dict[key] = torch.from_numpy(val).int().npu()", "image_shape"),
    C("torch.from_numpy(val).float().cuda()", "tensor_to_device", "replace", True,
      "batch_dict[key] = torch.from_numpy(val).float().npu()", "every numpy array of the batch (points, voxels, gt_boxes)"),
])

E("pcdet_detector3d_template", "pcdet/models/detectors/detector3d_template.py", "explicit_replacement",
  "OpenPCDet pcdet/models/detectors/detector3d_template.py", [
    C("loc_type = torch.device('cpu') if to_cpu else None", "device_type", "replace", True,
      "loc_type = torch.device('cpu')",
      "map_location=None restores tensors to the device they were saved from; non-DDP model_state and every "
      "optimizer_state hold CUDA tensors -> torch.load raises on a host without CUDA (train.py passes to_cpu=False "
      "for single-process runs)"),
    C("map_location = torch.device('cpu') if to_cpu else None", "device_type", "replace", True,
      "map_location = torch.device('cpu')", "same for --ckpt resume with optimizer"),
])

E("pcdet_spconv_backbone", "pcdet/models/backbones_3d/spconv_backbone.py", "kernel_rewrite",
  "OpenPCDet VoxelBackBone8x / VoxelResBackBone8x", [])

E("pcdet_dynamic_pillar_vfe", "pcdet/models/backbones_3d/vfe/dynamic_pillar_vfe.py", "kernel_rewrite",
  "OpenPCDet DynamicPillarVFE (torch_scatter)", [
    C("=import torch_scatter", "custom_cuda_extension", "replace", True, "import mx_driving",
      "needed by the scatter replacements below (guarded import hides the failure until the first call)"),
    C("x_max = torch_scatter.scatter_max(x, unq_inv, dim=0)[0]", "custom_cuda_extension", "replace", True,
      "x_max = mx_driving.scatter_max(x, unq_inv.int())[0]",
      "torch_scatter kernels are CPU/CUDA only and check the device: NPU tensors raise. " + MX_NOTE),
    C("=points_mean = torch_scatter.scatter_mean(points_xyz, unq_inv, dim=0)", "custom_cuda_extension", "replace", True,
      "points_mean = mx_driving.scatter_mean(points_xyz, unq_inv.int(), dim=0)", MX_NOTE),
    C("dim=0)  # pillar centroid", "custom_cuda_extension", "replace", True,
      "points_mean = mx_driving.scatter_mean(points_xyz, unq_inv.int(), dim=0)  # pillar centroid", MX_NOTE),
    C("self.grid_size = torch.tensor(grid_size).cuda()", "tensor_to_device", "replace", True,
      "self.grid_size = torch.tensor(grid_size).npu()", "runs in __init__: model construction fails without CUDA"),
    C("self.voxel_size = torch.tensor(voxel_size).cuda()", "tensor_to_device", "replace", True,
      "self.voxel_size = torch.tensor(voxel_size).npu()", "same"),
    C("self.point_cloud_range = torch.tensor(point_cloud_range).cuda()", "tensor_to_device", "replace", True,
      "self.point_cloud_range = torch.tensor(point_cloud_range).npu()", "same"),
])

E("pcdet_center_head", "pcdet/models/dense_heads/center_head.py", "explicit_replacement",
  "OpenPCDet pcdet/models/dense_heads/center_head.py", [
    C(")).cuda()", "tensor_to_device", "replace", True, ")).npu()",
      "class-id mapping built in __init__: construction fails without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "meant to keep the focal loss in fp32 under AMP; a cuda autocast context does not switch NPU autocast off, "
      "so once AMP is ported to NPU the loss runs in fp16. No effect while AMP stays unported"),
    C("torch.tensor(post_process_cfg.POST_CENTER_LIMIT_RANGE).cuda().float()", "tensor_to_device", "replace", True,
      "post_center_limit_range = torch.tensor(post_process_cfg.POST_CENTER_LIMIT_RANGE).npu().float()",
      "inference / box decoding path"),
])

E("pcdet_model_nms_utils", "pcdet/models/model_utils/model_nms_utils.py", "kernel_rewrite",
  "OpenPCDet pcdet/models/model_utils/model_nms_utils.py", [])

# ---------------------------------------------------------------- pcdet ops
E("pcdet_iou3d_nms_utils", "pcdet/ops/iou3d_nms/iou3d_nms_utils.py", "kernel_rewrite",
  "OpenPCDet pcdet/ops/iou3d_nms/iou3d_nms_utils.py", [
    C("from . import iou3d_nms_cuda", "custom_cuda_extension", "replace", True,
      "import mx_driving; from . import iou3d_nms_cpu",
      "nvcc-built extension cannot be built on an NPU host (knowledge 6): ImportError. GPU ops -> mx_driving, "
      "the CPU kernel is rebuilt alone as a CppExtension (see setup.py)"),
    C("assert not (boxes_a.is_cuda or boxes_b.is_cuda)", "device_type", "replace", False,
      "assert not (boxes_a.is_npu or boxes_b.is_npu), 'Only support CPU tensors'",
      "is_cuda never fires for NPU tensors, so the CPU-only guard no longer guards; callers pass numpy today"),
    C("iou3d_nms_cuda.boxes_iou_bev_cpu(", "custom_cuda_extension", "replace", True,
      "iou3d_nms_cpu.boxes_iou_bev_cpu(boxes_a.contiguous(), boxes_b.contiguous(), ans_iou)",
      "CPU kernel lived in the nvcc-built module (Waymo/ONCE eval, gt sampling)"),
    C("ans_iou = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
      "ans_iou = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))",
      "legacy torch.cuda tensor type: raises without CUDA"),
    C("iou3d_nms_cuda.boxes_iou_bev_gpu(", "custom_cuda_extension", "replace", True,
      "ans_iou = mx_driving.boxes_iou_bev(boxes_a.contiguous(), boxes_b.contiguous())", MX_NOTE),
    C("overlaps_bev = torch.cuda.FloatTensor(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))", "torch_cuda_api",
      "replace", True, "overlaps_bev = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))  # (N, M)",
      "legacy torch.cuda tensor type"),
    C("iou3d_nms_cuda.boxes_overlap_bev_gpu(", "custom_cuda_extension", "replace", True,
      "overlaps_bev = mx_driving.boxes_overlap_bev(boxes_a.contiguous(), boxes_b.contiguous())", MX_NOTE),
    C("overlaps_bev = torch.cuda.FloatTensor(torch.Size((boxes_a.shape[0], 1)))", "torch_cuda_api", "replace", True,
      "overlaps_bev = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], 1)))  # (N, 1)", "legacy torch.cuda tensor type"),
    C("iou3d_nms_cuda.boxes_aligned_overlap_bev_gpu(", "custom_cuda_extension", "replace", True,
      "overlaps_bev = mx_driving.boxes_overlap_bev(boxes_a.contiguous(), boxes_b.contiguous()).diagonal().view(-1, 1)",
      "no aligned variant found in DrivingSDK's list; O(N^2) workaround. " + MX_NOTE),
    C("num_out = iou3d_nms_cuda.nms_gpu(boxes, keep, thresh)", "custom_cuda_extension", "replace", True,
      "keep = mx_driving.nms3d(boxes, scores[order].contiguous(), thresh); num_out = keep.numel()",
      "rotated 3-D NMS kernel. " + MX_NOTE),
    C("return order[keep[:num_out].cuda()].contiguous(), None", "tensor_to_device", "replace", True,
      "return order[keep[:num_out].to(order.device).long()].contiguous(), None", ".cuda() on the keep indices"),
    C("num_out = iou3d_nms_cuda.nms_normal_gpu(boxes, keep, thresh)", "custom_cuda_extension", "replace", True,
      "keep = mx_driving.nms3d_normal(boxes, scores[order].contiguous(), thresh); num_out = keep.numel()", MX_NOTE),
    C("selected = order[keep[:num_out].cuda()].contiguous()", "tensor_to_device", "replace", True,
      "selected = order[keep[:num_out].to(order.device).long()].contiguous()", ".cuda() on the keep indices"),
])

E("pcdet_roiaware_pool3d_utils", "pcdet/ops/roiaware_pool3d/roiaware_pool3d_utils.py", "kernel_rewrite",
  "OpenPCDet pcdet/ops/roiaware_pool3d/roiaware_pool3d_utils.py", [
    C("from . import roiaware_pool3d_cuda", "custom_cuda_extension", "replace", True,
      "import mx_driving; from . import roiaware_pool3d_cpu",
      "nvcc-built extension: ImportError on an NPU host"),
    C("roiaware_pool3d_cuda.points_in_boxes_cpu(", "custom_cuda_extension", "replace", True,
      "roiaware_pool3d_cpu.points_in_boxes_cpu(boxes.float().contiguous(), points.float().contiguous(), point_indices)",
      "CPU kernel used by data augmentation in DataLoader workers; rebuilt as a CppExtension"),
    C("roiaware_pool3d_cuda.points_in_boxes_gpu(", "custom_cuda_extension", "replace", True,
      "box_idxs_of_pts = mx_driving.points_in_box(boxes.contiguous(), points.contiguous())", MX_NOTE),
    C("return RoIAwarePool3dFunction.apply(", "custom_cuda_extension", "replace", True,
      "return mx_driving.roiaware_pool3d(rois, pts, pts_feature, self.out_size, self.max_pts_each_voxel, "
      "{'max': 0, 'avg': 1}[pool_method])",
      "route through DrivingSDK's roiaware_pool3d (has its own backward). Its documented size limits may not fit "
      "Part-A2's roi/point counts. " + MX_NOTE),
    C("roiaware_pool3d_cuda.forward(", "custom_cuda_extension", "removal", False, None,
      "RoIAwarePool3dFunction becomes dead once forward() routes to mx_driving; deleted with it"),
    C("roiaware_pool3d_cuda.backward(", "custom_cuda_extension", "removal", False, None, "dead with the Function"),
])

_P2 = "pointnet2_stack kernels use the stacked (batch_cnt) layout; DrivingSDK ops are batch-layout, so the porter writes torch helpers"
E("pcdet_pointnet2_stack_utils", "pcdet/ops/pointnet2/pointnet2_stack/pointnet2_utils.py", "kernel_rewrite",
  "OpenPCDet pcdet/ops/pointnet2/pointnet2_stack/pointnet2_utils.py", [
    C("from . import pointnet2_stack_cuda as pointnet2", "custom_cuda_extension", "replace", True,
      "import mx_driving; from . import stack_ops_torch as pointnet2_torch",
      "nvcc-built extension: ImportError on an NPU host"),
    C("idx = torch.cuda.IntTensor(M, nsample).zero_()", "torch_cuda_api", "replace", True,
      "idx = new_xyz.new_zeros((M, nsample), dtype=torch.int)", "legacy torch.cuda tensor type"),
    C("pointnet2.ball_query_wrapper(", "custom_cuda_extension", "replace", True,
      "idx = pointnet2_torch.ball_query(radius, nsample, new_xyz, new_xyz_batch_cnt, xyz, xyz_batch_cnt)", _P2),
    C("output = torch.cuda.FloatTensor(M, C, nsample)", "torch_cuda_api", "replace", True,
      "output = features.new_zeros((M, C, nsample))", "legacy torch.cuda tensor type"),
    C("pointnet2.group_points_wrapper(", "custom_cuda_extension", "replace", True,
      "output = pointnet2_torch.group_points(features, features_batch_cnt, idx, idx_batch_cnt)", _P2),
    C("grad_features = Variable(torch.cuda.FloatTensor(N, C).zero_())", "torch_cuda_api", "replace", True,
      "grad_features = grad_out.new_zeros((N, C))", "legacy torch.cuda tensor type"),
    C("pointnet2.group_points_grad_wrapper(", "custom_cuda_extension", "replace", True,
      "grad_features = pointnet2_torch.group_points_grad(grad_out_data, idx, idx_batch_cnt, features_batch_cnt, N)",
      "index_add_-based backward. " + _P2),
    C("output = torch.cuda.IntTensor(B, npoint)", "torch_cuda_api", "replace", True,
      "output = xyz.new_zeros((B, npoint), dtype=torch.int)", "legacy torch.cuda tensor type"),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "torch_cuda_api", "replace", True,
      "temp = xyz.new_full((B, N), 1e10)", "legacy torch.cuda tensor type"),
    C("pointnet2.farthest_point_sampling_wrapper(", "custom_cuda_extension", "replace", True,
      "output = mx_driving.furthest_point_sampling(xyz, npoint)", "FPS is batch-layout here. " + MX_NOTE),
    C("pointnet2.three_nn_wrapper(", "custom_cuda_extension", "replace", True,
      "dist2, idx = pointnet2_torch.three_nn(unknown, unknown_batch_cnt, known, known_batch_cnt)", _P2),
    C("pointnet2.three_interpolate_wrapper(", "custom_cuda_extension", "replace", True,
      "output = (features[idx.long()] * weight.unsqueeze(-1)).sum(dim=1)", "plain torch gather + weighted sum"),
    C("pointnet2.three_interpolate_grad_wrapper(", "custom_cuda_extension", "replace", True,
      "grad_features.index_add_(0, idx.long().view(-1), (grad_out.unsqueeze(1) * weight.unsqueeze(-1)).view(-1, grad_out.shape[1]))",
      "plain torch scatter-add backward"),
    C("pointnet2.query_stacked_local_neighbor_idxs_wrapper_stack(", "custom_cuda_extension", "replace", True,
      "stack_neighbor_idxs, start_len, cumsum = pointnet2_torch.query_stacked_local_neighbor_idxs(",
      "PV-RCNN++ vector-pool path. " + _P2),
    C("pointnet2.query_three_nn_by_stacked_local_idxs_wrapper_stack(", "custom_cuda_extension", "replace", True,
      "new_xyz_grid_idxs, new_xyz_grid_dist2 = pointnet2_torch.query_three_nn_by_stacked_local_idxs(", _P2),
])

# ---------------------------------------------------------------- pcdet datasets
E("pcdet_datasets_init", "pcdet/datasets/__init__.py", "explicit_replacement", "OpenPCDet pcdet/datasets/__init__.py", [
    C("pin_memory=True, num_workers=workers", "pin_memory", "replace", False,
      "dataset, batch_size=batch_size, pin_memory=True, pin_memory_device='npu', num_workers=workers,",
      "without CUDA the DataLoader skips pinning unless a pin_memory_device is given (from memory of torch 2.1, "
      "unconfirmed); performance only"),
])

E("pcdet_nuscenes_dataset", "pcdet/datasets/nuscenes/nuscenes_dataset.py", "explicit_replacement",
  "OpenPCDet pcdet/datasets/nuscenes/nuscenes_dataset.py (create_groundtruth_database)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "this module is run as a script (python -m ...nuscenes_dataset create_nuscenes_infos); .npu() below needs torch_npu"),
    C("torch.from_numpy(points[:, 0:3]).unsqueeze(dim=0).float().cuda(),", "tensor_to_device", "replace", True,
      "torch.from_numpy(points[:, 0:3]).unsqueeze(dim=0).float().npu(),", "gt-database generation on the device"),
    C("torch.from_numpy(gt_boxes[:, 0:7]).unsqueeze(dim=0).float().cuda()", "tensor_to_device", "replace", True,
      "torch.from_numpy(gt_boxes[:, 0:7]).unsqueeze(dim=0).float().npu()", "same"),
])

# ---------------------------------------------------------------- packaging / deployment
E("pcdet_setup_py", "setup.py", "kernel_rewrite", "OpenPCDet setup.py (make_cuda_ext)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension",
      "needed by the CppExtension switch below"),
    C("cuda_ext = CUDAExtension(", "custom_cuda_extension", "replace", True, "cuda_ext = CppExtension(",
      "CUDAExtension resolves CUDA_HOME and nvcc at setup time: fails on an NPU host. Only CPU sources remain"),
    C("name='iou3d_nms_cuda',", "custom_cuda_extension", "replace", True, "name='iou3d_nms_cpu',",
      "module now holds only the CPU kernel; name matches the ported import"),
    C("'src/iou3d_nms.cpp',", "custom_cuda_extension", "removal", True, None,
      "CUDA host launchers (cuda_runtime_api.h); iou3d_nms_api.cpp must also drop the GPU bindings (C++ side, not labelled)"),
    C("'src/iou3d_nms_kernel.cu',", "custom_cuda_extension", "removal", True, None, ".cu source cannot be built without nvcc"),
    C("name='roiaware_pool3d_cuda',", "custom_cuda_extension", "replace", True, "name='roiaware_pool3d_cpu',",
      "CPU points_in_boxes only"),
    C("'src/roiaware_pool3d_kernel.cu',", "custom_cuda_extension", "removal", True, None, ".cu source"),
    C("name='roipoint_pool3d_cuda',", "custom_cuda_extension", "removal", True, None,
      "whole make_cuda_ext(...) entry dropped (DrivingSDK roipoint_pool3d); label on its name line"),
    C("name='pointnet2_stack_cuda',", "custom_cuda_extension", "removal", True, None,
      "whole entry dropped (torch helpers / mx_driving)"),
    C("name='pointnet2_batch_cuda',", "custom_cuda_extension", "removal", True, None, "whole entry dropped"),
    C('name="ingroup_inds_cuda",', "custom_cuda_extension", "removal", True, None, "whole entry dropped (DSVT helper; torch rewrite)"),
])

E("pcdet_requirements", "requirements.txt", "explicit_replacement", "OpenPCDet requirements.txt (pinned CUDA fork)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index: x86 pulls the +cu118 torch; torch_npu expects the CPU build on x86 and plain PyPI torch on "
      "aarch64 (knowledge 1.1). Not confirmed that the cu118 build breaks torch_npu"),
    C("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "custom_cuda_extension", "removal", False, None,
      "PyG CUDA wheel index; inert once torch-scatter is dropped"),
    C("=torchvision==0.16.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel pinned to the torch version (x.y.z must match, knowledge 1.1/1.2)"),
    C("spconv-cu118==2.3.6", "custom_cuda_extension", "replace", True,
      "mx_driving @ file:///opt/wheels/mx_driving-1.0.0-cp310-cp310-linux_aarch64.whl",
      "CUDA build of spconv; DrivingSDK is built from source (no PyPI wheel). " + MX_NOTE),
    C("cumm-cu118==0.4.11", "custom_cuda_extension", "removal", False, None, "spconv's CUDA kernel library; unused after the swap"),
    C("torch-scatter==2.1.2+pt21cu118", "custom_cuda_extension", "removal", True, None,
      "+pt21cu118 wheel exists only on the PyG CUDA index for x86 and links CUDA; scatter ops move to mx_driving"),
    C("=gpustat", "torch_cuda_api", "removal", False, None, "NVML-only monitor; replaced by npu-smi in train_utils"),
])

E("pcdet_dockerfile", "docker/Dockerfile", "explicit_replacement", "OpenPCDet-style docker/Dockerfile (CUDA 11.8 devel)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must carry CANN (toolkit env baked in as ENV, knowledge host-formats 3.8); exact tag unconfirmed"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", "removal", False, None, "nvcc arch list; inert without CUDA"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "not read by this setup.py; inert"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "points at a non-existent toolkit; CppExtension ignores it"),
    C("torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "CUDA wheel index and no torch-npu in the image"),
    C("spconv-cu118==2.3.6 cumm-cu118==0.4.11", "custom_cuda_extension", "replace", True,
      "RUN pip install --no-cache-dir /tmp/wheels/mx_driving-*.whl \\", "CUDA spconv build -> DrivingSDK wheel. " + MX_NOTE),
    C("&& pip install --no-cache-dir torch-scatter -f", "custom_cuda_extension", "removal", True, None,
      "CUDA wheel of torch-scatter; scatter ops move to mx_driving"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (knowledge distributed 1)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "inert on Ascend"),
])

E("fork_k8s_job_yaml", "docker/k8s/train_job.yaml", "explicit_replacement",
  "team fork: Kubeflow PyTorchJob for nightly OpenPCDet training on a GPU pool", [
    C("accelerator: nvidia-a100-80gb", "device_type", "replace", True, "accelerator: huawei-Ascend910",
      "pods would only schedule on the A100 pool; Ascend node label value is site-specific (unconfirmed)"),
    C("- key: nvidia.com/gpu", "device_type", "replace", False, "- key: huawei.com/Ascend910",
      "toleration for the GPU taint; NPU nodes' taint is site-specific (unconfirmed)"),
    C("image: &image registry.internal/perception/openpcdet:cu118-2024.06", "device_type", "replace", True,
      "image: &image registry.internal/perception/openpcdet:cann8.0-torch2.1-npu",
      "CUDA image has neither CANN nor torch_npu"),
    C("- name: NCCL_DEBUG", "env_var", "replace", False, "- name: ASCEND_GLOBAL_LOG_LEVEL", "verbosity only (value changes too)"),
    C("- name: NCCL_SOCKET_IFNAME", "env_var", "replace", True, "- name: HCCL_SOCKET_IFNAME",
      "HCCL ignores NCCL_*; NIC selection for rendezvous"),
    C("- name: NCCL_IB_DISABLE", "env_var", "removal", False, None, "no HCCL equivalent (value line goes too)"),
    C("nvidia.com/gpu: 8", "device_type", "replace", True, "huawei.com/Ascend910: 8",
      "device-plugin resource; without huawei.com/Ascend910 a pod gets no NPU device nodes (knowledge host-formats)"),
])

# ---------------------------------------------------------------- mmdetection3d / BEVFusion
E("mmdet3d_inference", "mmdet3d/apis/inference.py", "device_branch_or_abstraction", "mmdetection3d 1.x mmdet3d/apis/inference.py", [
    C("device: str = 'cuda:0',", "device_type", "replace", True, "device: str = 'npu:0',",
      "default device of init_model, used by the demo scripts"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "raises without CUDA / rejects an npu device string"),
])

E("mmdet3d_default_runtime", "configs/_base_/default_runtime.py", "explicit_replacement",
  "mmdetection3d 1.x configs/_base_/default_runtime.py", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False, "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist switches to hccl by itself when an NPU is present (from memory of mmengine, not in the "
      "knowledge base: unconfirmed); edited for clarity"),
])

E("bevfusion_bev_pool", "mmdet3d/ops/bev_pool/bev_pool.py", "kernel_rewrite", "BEVFusion (MIT) mmdet3d/ops/bev_pool/bev_pool.py", [
    C("from . import bev_pool_ext", "custom_cuda_extension", "replace", True, "import mx_driving",
      "nvcc-built extension: ImportError on an NPU host"),
    C("out = bev_pool_ext.bev_pool_forward(", "custom_cuda_extension", "removal", False, None,
      "QuickCumsumCuda becomes dead once bev_pool() calls DrivingSDK's bev_pool; deleted with it"),
    C("x_grad = bev_pool_ext.bev_pool_backward(", "custom_cuda_extension", "removal", False, None, "dead with the Function"),
    C("x = QuickCumsumCuda.apply(feats, coords, ranks, B, D, H, W)", "custom_cuda_extension", "replace", True,
      "x = mx_driving.bev_pool_v1(feats, coords, B, D, H, W)", MX_NOTE),
])

# ---------------------------------------------------------------- Pointcept (PTv3)
E("pointcept_ptv3", "pointcept/models/point_transformer_v3/point_transformer_v3m1_base.py", "kernel_rewrite",
  "Pointcept point_transformer_v3m1_base.py (PTv3: flash-attn, spconv, torch_scatter)", [
    C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True, "import mx_driving.spconv as spconv",
      "CPE / stem sparse convs. " + MX_NOTE),
    C("=import torch_scatter", "custom_cuda_extension", "replace", True,
      "from pointcept.models.utils.npu_ops import segment_csr  # torch_scatter has no NPU kernels",
      "segment_csr on NPU tensors raises; torch.segment_reduce has no NPU kernel (CPU fallback) so a small "
      "index_add_/mx_driving helper is written instead"),
    C("=import flash_attn", "attention_kernel", "replace", True, "import torch_npu",
      "flash-attn cannot be installed on NPU (knowledge 6); torch_npu provides npu_fusion_attention"),
    C('assert flash_attn is not None, "Make sure flash_attn is installed."', "attention_kernel", "removal", True, None,
      "enable_flash=True is the default, so construction fails on this assert"),
    C("feat = flash_attn.flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      "q, k, v = qkv.reshape(-1, 3, H, C // H).unbind(dim=1); feat = torch_npu.npu_fusion_attention(q, k, v, H, \"TND\", "
      "scale=self.scale, keep_prob=1.0 - (self.attn_drop if self.training else 0.0), "
      "actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
      "varlen flash attention -> npu_fusion_attention TND layout with cumulative lengths (knowledge 5, transformers mapping)"),
    C("feat=torch_scatter.segment_csr(", "custom_cuda_extension", "replace", True, "feat=segment_csr(",
      "serialized pooling reduce"),
    C("coord=torch_scatter.segment_csr(", "custom_cuda_extension", "replace", True, "coord=segment_csr(",
      "serialized pooling mean of coords"),
])

E("pointcept_environment_yml", "environment.yml", "explicit_replacement", "Pointcept environment.yml (torch 2.1 / cu118)", [
    C("=- cuda", "custom_cuda_extension", "removal", False, None, "CUDA toolkit package; useless on an NPU host"),
    C("- conda-forge::cudnn", "custom_cuda_extension", "removal", False, None, "cuDNN; useless on an NPU host"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "removal", False, None,
      "selects the CUDA torch build; torch_npu expects CPU torch (knowledge 1.1). Breakage not confirmed"),
    C("=- pytorch-scatter", "custom_cuda_extension", "removal", False, None,
      "follows the torch variant; scatter ops move to the NPU helper"),
    C("=- sharedarray", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch_npu pin matching pytorch=2.1.0"),
    C("=- spconv-cu118", "custom_cuda_extension", "replace", True,
      "- /opt/wheels/mx_driving-1.0.0-cp310-cp310-linux_aarch64.whl", "CUDA spconv build. " + MX_NOTE),
    C("- flash-attn --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU (knowledge 6): env creation fails"),
    C("=- ./libs/pointops", "custom_cuda_extension", "removal", True, None,
      "Pointcept's nvcc-built pointops; needs an Ascend port (knn/ball-query via mx_driving or torch)"),
    C("=- ./libs/pointgroup_ops", "custom_cuda_extension", "removal", True, None, "nvcc-built; fails to build"),
])

# ---------------------------------------------------------------- CenterPoint (det3d)
E("det3d_trainer", "det3d/torchie/trainer/trainer.py", "explicit_replacement", "CenterPoint det3d/torchie/trainer/trainer.py", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", False, "self.stream = torch.npu.Stream()",
      "Prefetcher is not used by Trainer.train (commented out); only matters if re-enabled"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", False, "with torch.npu.stream(self.stream):",
      "dead Prefetcher"),
    C("self.next_input, torch.cuda.current_device(), non_blocking=False", "torch_cuda_api", "replace", False,
      "self.next_input, f\"npu:{torch.npu.current_device()}\", non_blocking=False", "dead Prefetcher"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", False,
      "torch.npu.current_stream().wait_stream(self.stream)", "dead Prefetcher"),
    C('device = torch.device(kwargs["local_rank"])', "device_type", "replace", False,
      'device = torch.device("npu", kwargs["local_rank"])',
      "an int makes a cuda device; the variable is unused below (only in a commented line)"),
    C("=data, torch.cuda.current_device(), non_blocking=False", "torch_cuda_api", "replace", True,
      "data, f\"npu:{torch.npu.current_device()}\", non_blocking=False",
      "current_device() raises without CUDA; an int passed to Tensor.to() also means a CUDA ordinal "
      "(transfer_to_npu rewrites such ints, knowledge 2.2)"),
    C("map_location=lambda storage, loc: storage.cuda(torch.cuda.current_device())", "tensor_to_device", "replace", True,
      "checkpoint, map_location=\"cpu\"", "default resume path deserialises onto CUDA"),
])
