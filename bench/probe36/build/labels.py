"""Labels for probe36 (hand-written synthetic upstream files; see ../README.md).

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
LIBMOD = "library module: the entry script already loads torch_npu (and autoload exists since 2.5.1); added so the module is self-contained"

E("pcdet_common_utils", "pcdet/utils/common_utils.py", "explicit_replacement",
  "open-mmlab/OpenPCDet pcdet/utils/common_utils.py (slurm / torch.distributed init helpers)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; module calls torch.npu.* after the port"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "without CUDA the seed call is queued lazily and never applied; NPU RNG stays unseeded for reproducibility only"),
    C("num_gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "num_gpus_per_node = torch.npu.device_count()", "returns 0 on an NPU host -> ZeroDivisionError in proc_id % 0"),
    C("torch.cuda.set_device(proc_id % num_gpus_per_node)", "torch_cuda_api", R, True,
      "torch.npu.set_device(proc_id % num_gpus_per_node)", "torch.cuda.set_device needs a CUDA build"),
    C("def init_dist_slurm(tcp_port, local_rank, backend='nccl'):", "dist_backend", R, True,
      "def init_dist_slurm(tcp_port, local_rank, backend='hccl'):", "NCCL is not available on Ascend; HCCL"),
    C("def init_dist_pytorch(tcp_port, local_rank, backend='nccl'):", "dist_backend", R, True,
      "def init_dist_pytorch(tcp_port, local_rank, backend='hccl'):", "NCCL is not available on Ascend; HCCL"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> local_rank % 0 raises"),
    C("torch.cuda.set_device(local_rank % num_gpus)", "torch_cuda_api", R, True,
      "torch.npu.set_device(local_rank % num_gpus)", "one process per NPU must bind its device before init_process_group"),
    C("gpu_per_machine = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpu_per_machine = torch.npu.device_count()", "silently reports 0 devices per machine on an NPU host"),
  ])

E("pcdet_train", "tools/train.py", "explicit_replacement",
  "open-mmlab/OpenPCDet tools/train.py (launcher-dispatched init_dist_*, DDP by local rank)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: the ported init uses the hccl backend and torch.npu.*; explicit import recommended even with autoload"),
    C("=args, cfg = parse_config()", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance: voxel/point counts change every batch (dynamic shapes); msFmkTransplt's advice is jit_compile=False for dynamic shapes"),
    C("args.tcp_port, args.local_rank, backend='nccl'", "dist_backend", R, True,
      "args.tcp_port, args.local_rank, backend='hccl'", "explicit backend overrides the helper's default; NCCL missing on Ascend"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "model must live on the NPU"),
    C("device_ids=[cfg.LOCAL_RANK % torch.cuda.device_count()]", "torch_cuda_api", R, True,
      "model = nn.parallel.DistributedDataParallel(model, device_ids=[cfg.LOCAL_RANK % torch.npu.device_count()])",
      "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
  ])

E("pcdet_train_utils", "tools/train_utils/train_utils.py", "explicit_replacement",
  "open-mmlab/OpenPCDet tools/train_utils/train_utils.py (AMP GradScaler loop, gpustat logging)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; torch.npu.amp / torch.npu memory stats after the port"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp, init_scale=optim_cfg.get('LOSS_SCALE_FP16', 2.0**16))",
      "CUDA GradScaler does not scale NPU losses: --use_amp would run fp16 without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "CUDA autocast is inactive for NPU tensors: --use_amp silently trains in fp32"),
    C("peak_mem_gb = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "peak_mem_gb = torch.npu.max_memory_allocated() / (1024 ** 3)", "CUDA never initialised: always logs 0.0G"),
    C("gpu_info = os.popen('gpustat').read()", "torch_cuda_api", R, False,
      "gpu_info = os.popen('npu-smi info').read()", "gpustat reads NVML; on an NPU host it only prints an error into the log"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the NPU caching allocator is not trimmed between epochs"),
  ])

E("pcdet_models_init", "pcdet/models/__init__.py", "explicit_replacement",
  "open-mmlab/OpenPCDet pcdet/models/__init__.py (load_data_to_gpu + model_fn_decorator)", [
    C("batch_dict[key] = val.cuda()", "tensor_to_device", R, True, "batch_dict[key] = val.npu()", "camera images must follow the model to the NPU"),
    C("kornia.image_to_tensor(val).float().cuda().contiguous()", "tensor_to_device", R, True,
      "batch_dict[key] = kornia.image_to_tensor(val).float().npu().contiguous()", ".cuda() needs a CUDA build"),
    C("torch.from_numpy(val).int().cuda()", "tensor_to_device", R, True,
      "batch_dict[key] = torch.from_numpy(val).int().npu()", ".cuda() needs a CUDA build"),
    C("torch.from_numpy(val).float().cuda()", "tensor_to_device", R, True,
      "batch_dict[key] = torch.from_numpy(val).float().npu()", "points/voxels/gt_boxes are moved here for every batch"),
  ])

MXD = "Ascend/DrivingSDK (mx_driving) provides NPU ops for these models; exact function name/signature not in the knowledge files (unconfirmed)"

E("pcdet_roiaware_pool3d", "pcdet/ops/roiaware_pool3d/roiaware_pool3d_utils.py", "kernel_rewrite",
  "open-mmlab/OpenPCDet ops/roiaware_pool3d/roiaware_pool3d_utils.py (nvcc-built extension + autograd Function)", [
    C("from . import roiaware_pool3d_cuda", "custom_cuda_extension", R, True,
      "from . import roiaware_pool3d_npu as roiaware_pool3d_cuda  # Ascend C kernels built with NpuExtension",
      "the CUDAExtension cannot be built without nvcc, so the import fails; rebuild the kernels for NPU (CPU kernel kept)"),
    C("roiaware_pool3d_cuda.points_in_boxes_gpu(", "custom_cuda_extension", R, True,
      "box_idxs_of_pts = mx_driving.points_in_box(boxes.contiguous(), points.contiguous())",
      "CUDA kernel call; " + MXD),
    C("roiaware_pool3d_cuda.forward(rois, pts", "custom_cuda_extension", R, True,
      "pooled_features, argmax, pts_idx_of_voxels = mx_driving.roiaware_pool3d(rois, pts, pts_feature, out_size, max_pts_each_voxel, pool_method)",
      "CUDA kernel call; " + MXD),
    C("roiaware_pool3d_cuda.backward(pts_idx_of_voxels", "custom_cuda_extension", R, True,
      "grad_in = roiaware_pool3d_npu.backward(pts_idx_of_voxels, argmax, grad_out.contiguous(), num_pts, pool_method)",
      "CUDA kernel call in backward; needs an NPU kernel (unconfirmed API)"),
  ])

E("pcdet_iou3d_nms", "pcdet/ops/iou3d_nms/iou3d_nms_utils.py", "kernel_rewrite",
  "open-mmlab/OpenPCDet ops/iou3d_nms/iou3d_nms_utils.py (rotated BEV IoU + NMS CUDA kernels)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; the port calls torch_npu.npu_rotated_iou / npu_nms_rotated"),
    C("from . import iou3d_nms_cuda", "custom_cuda_extension", R, True,
      "from . import iou3d_nms_npu as iou3d_nms_cuda  # Ascend C / CPU build via NpuExtension",
      "nvcc-built extension; cannot be built or imported on an NPU host"),
    C("assert not (boxes_a.is_cuda or boxes_b.is_cuda)", "device_type", R, False,
      "assert boxes_a.device.type == 'cpu' and boxes_b.device.type == 'cpu', 'Only support CPU tensors'",
      "is_cuda is False for NPU tensors, so the guard no longer stops NPU tensors reaching the CPU kernel; callers pass CPU tensors"),
    C("ans_iou = torch.cuda.FloatTensor(", "torch_cuda_api", R, True,
      "ans_iou = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))",
      "torch.cuda.FloatTensor needs a CUDA build"),
    C("iou3d_nms_cuda.boxes_iou_bev_gpu(", "custom_cuda_extension", R, True,
      "ans_iou = torch_npu.npu_rotated_iou(boxes_a_xywhr, boxes_b_xywhr, trans=False, mode=0, is_cross=True)",
      "CUDA kernel; torch_npu has npu_rotated_iou (box layout conversion to its format unconfirmed)"),
    C("overlaps_bev = torch.cuda.FloatTensor(", "torch_cuda_api", R, True,
      "overlaps_bev = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))  # (N, M)",
      "torch.cuda.FloatTensor needs a CUDA build"),
    C("iou3d_nms_cuda.boxes_overlap_bev_gpu(", "custom_cuda_extension", R, True,
      "overlaps_bev = iou3d_nms_npu.boxes_overlap_bev(boxes_a.contiguous(), boxes_b.contiguous())",
      "CUDA kernel; " + MXD),
    C("iou3d_nms_cuda.boxes_aligned_overlap_bev_gpu(", "custom_cuda_extension", R, True,
      "overlaps_bev = iou3d_nms_npu.boxes_aligned_overlap_bev(boxes_a.contiguous(), boxes_b.contiguous())",
      "CUDA kernel; needs an NPU implementation (unconfirmed API)"),
    C("num_out = iou3d_nms_cuda.nms_gpu(", "custom_cuda_extension", R, True,
      "keep, num_out = torch_npu.npu_nms_rotated(boxes_xywhr, scores[order], thresh)",
      "CUDA kernel; torch_npu.npu_nms_rotated exists (its box layout vs OpenPCDet's 7-dof boxes unconfirmed)"),
    C("=return order[keep[:num_out].cuda()].contiguous(), None", "tensor_to_device", R, True,
      "return order[keep[:num_out].npu()].contiguous(), None", ".cuda() needs a CUDA build"),
    C("num_out = iou3d_nms_cuda.nms_normal_gpu(", "custom_cuda_extension", R, True,
      "keep, num_out = iou3d_nms_npu.nms_normal(boxes, thresh)", "CUDA kernel; needs an NPU implementation (unconfirmed API)"),
    C("return order[keep[:num_out].cuda()].contiguous(), None  # axis-aligned", "tensor_to_device", R, True,
      "return order[keep[:num_out].npu()].contiguous(), None  # axis-aligned", ".cuda() needs a CUDA build"),
  ])

CU = "nvcc-only source; replaced by an Ascend C kernel source (or dropped in favour of a DrivingSDK op)"
E("pcdet_setup", "setup.py", "kernel_rewrite",
  "open-mmlab/OpenPCDet setup.py (unconditional CUDAExtension per op folder)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension builds need nvcc/CUDA_HOME; torch_npu ships NpuExtension (links torch_npu/ACL)"),
    C("cuda_ext = CUDAExtension(", "custom_cuda_extension", R, True, "cuda_ext = NpuExtension(",
      "every op folder is built as a CUDA extension; the build fails on an NPU host"),
    C("'src/iou3d_nms_kernel.cu',", "custom_cuda_extension", R, True, "'src/iou3d_nms_kernel_npu.cpp',", CU),
    C("'src/roiaware_pool3d_kernel.cu',", "custom_cuda_extension", R, True, "'src/roiaware_pool3d_kernel_npu.cpp',", CU),
    C("'src/roipoint_pool3d_kernel.cu',", "custom_cuda_extension", R, True, "'src/roipoint_pool3d_kernel_npu.cpp',", CU),
    C("'src/ball_query_gpu.cu',", "custom_cuda_extension", R, True, "'src/ball_query_npu.cpp',", CU),
    C("'src/group_points_gpu.cu',", "custom_cuda_extension", R, True, "'src/group_points_npu.cpp',", CU),
    C("'src/sampling_gpu.cu',", "custom_cuda_extension", R, True, "'src/sampling_npu.cpp',", CU),
    C("'src/bev_pool_cuda.cu',", "custom_cuda_extension", R, True, "'src/bev_pool_npu.cpp',", CU),
  ])

E("pcdet_spconv_backbone", "pcdet/models/backbones_3d/spconv_backbone.py", "explicit_replacement",
  "open-mmlab/OpenPCDet backbones_3d/spconv_backbone.py (VoxelBackBone8x on spconv 1.x/2.x)", [
    C("import spconv.pytorch as spconv", "custom_cuda_extension", R, True,
      "import mx_driving.spconv as spconv  # DrivingSDK sparse conv (module path unconfirmed)",
      "spconv (spconv-cuXXX wheels / cumm) is a CUDA-only library; no NPU build. " + MXD),
    C("import spconv as spconv  # spconv 1.x", "custom_cuda_extension", R, True,
      "from mx_driving import spconv  # module path unconfirmed",
      "the fallback is spconv 1.x, also CUDA-only, so the guard does not give a working path"),
  ])

E("bevfusion_bev_pool", "mmdet3d/ops/bev_pool/bev_pool.py", "kernel_rewrite",
  "mit-han-lab/bevfusion mmdet3d/ops/bev_pool/bev_pool.py (interval-based BEV pooling CUDA op)", [
    C("from . import bev_pool_ext", "custom_cuda_extension", R, True,
      "import mx_driving  # DrivingSDK provides bev_pool for NPU (name unconfirmed)",
      "bev_pool_ext is built from bev_pool_cuda.cu only; nothing to import on an NPU host"),
    C("out = bev_pool_ext.bev_pool_forward(", "custom_cuda_extension", R, True,
      "out = mx_driving.bev_pool(x, geom_feats, B, D, H, W)", "CUDA kernel call; " + MXD),
    C("x_grad = bev_pool_ext.bev_pool_backward(", "custom_cuda_extension", R, True,
      "x_grad = mx_driving.bev_pool_backward(out_grad, geom_feats, interval_lengths, interval_starts, B, D, H, W)",
      "CUDA kernel call in backward; " + MXD),
  ])

E("bevfusion_vtransform_base", "mmdet3d/models/vtransforms/base.py", "device_branch_or_abstraction",
  "mit-han-lab/bevfusion mmdet3d/models/vtransforms/base.py (frustum geometry + bev_pool call; device-agnostic)", [
  ])

E("bevfusion_train", "tools/train.py", "explicit_replacement",
  "mit-han-lab/bevfusion tools/train.py (torchpack distributed launcher)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: torch.npu.set_device and the hccl backend need torch_npu loaded"),
    C("=dist.init()", "distributed_framework", R, False,
      "torch.distributed.init_process_group(backend='hccl')  # torchpack's init assumes NCCL",
      "unconfirmed: torchpack.distributed.init() is recalled to create an NCCL process group; not covered by the knowledge files"),
    C("cfg = Config(recursive_eval(configs), filename=args.config)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance: lidar voxel counts and camera depth bins give dynamic shapes; jit_compile=False is the documented advice for them"),
    C("torch.cuda.set_device(dist.local_rank())", "torch_cuda_api", R, True,
      "torch.npu.set_device(dist.local_rank())", "torch.cuda.set_device needs a CUDA build"),
    C("if args.amp_bf16 and not torch.cuda.is_bf16_supported():", "torch_cuda_api", R, True,
      "if args.amp_bf16 and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() is False/raises without CUDA, so --amp-bf16 aborts on an NPU host"),
  ])

CUSRC = ("listed in `sources`, not `sources_cuda`: on a host without CUDA the else-branch builds a CppExtension "
         "that cannot compile .cu files, so `pip install -e .` fails; move to sources_cuda and add an NPU source")
E("bevfusion_setup", "setup.py", "device_branch_or_abstraction",
  "mit-han-lab/bevfusion / mmdet3d 0.x setup.py (make_cuda_ext with a FORCE_CUDA / CppExtension fallback)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension", A, True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the NPU branch below needs torch_npu's NpuExtension"),
    C('if torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1":', "custom_cuda_extension", B, True,
      'elif os.getenv("FORCE_NPU", "0") == "1" or is_torch_npu_available():  extension = NpuExtension; sources += sources_npu',
      "on an NPU host the CPU-only branch is taken silently: the ops get no device kernels"),
    C('"src/reordering_cuda.cu",', "custom_cuda_extension", R, True, '"src/reordering_npu.cpp",', CUSRC),
    C('"src/indice_cuda.cu",', "custom_cuda_extension", R, True, '"src/indice_npu.cpp",', CUSRC),
    C('"src/maxpool_cuda.cu",', "custom_cuda_extension", R, True, '"src/maxpool_npu.cpp",', CUSRC),
    C('"src/bev_pool_cuda.cu",', "custom_cuda_extension", R, True, '"src/bev_pool_npu.cpp",', CUSRC),
    C('"src/iou3d_kernel.cu",', "custom_cuda_extension", R, True, '"src/iou3d_kernel_npu.cpp",', CUSRC),
  ])

E("bevfusion_docker_compose", "docker/docker-compose.yml", "explicit_replacement",
  "BEVFusion-style docker compose dev/train services on the NVIDIA container runtime", [
    C("NVIDIA_VISIBLE_DEVICES: all", "env_var", R, True, 'ASCEND_VISIBLE_DEVICES: "0-7"',
      "the Ascend Docker Runtime mounts /dev/davinciN according to ASCEND_VISIBLE_DEVICES; the NVIDIA variable mounts nothing"),
    C("NVIDIA_DRIVER_CAPABILITIES: compute,utility", "env_var", X, False, None,
      "NVIDIA container-toolkit setting; ignored on an Ascend host"),
    C("NCCL_DEBUG: WARN", "env_var", R, False, "ASCEND_GLOBAL_LOG_LEVEL: \"2\"",
      "NCCL logging knob; no effect on HCCL (closest Ascend knob is the global log level; mapping unconfirmed)"),
    C('CUDA_VERSION: "11.3.1"', "env_var", R, True, 'CANN_VERSION: "8.0.0"',
      "build arg that selects the CUDA base image of docker/Dockerfile"),
    C('TORCH_CUDA_ARCH_LIST: "7.0 7.5 8.0 8.6"', "env_var", X, False, None,
      "only read by nvcc extension builds; inert for an NPU build"),
    C("=runtime: nvidia", "device_type", R, True, "runtime: ascend",
      "no nvidia runtime on an Ascend host: `docker compose up` fails (Ascend-Docker-Runtime registers as 'ascend')"),
    C("runtime: nvidia  # same runtime as dev", "device_type", R, True, "runtime: ascend  # same runtime as dev",
      "no nvidia runtime on an Ascend host"),
    C("- driver: nvidia", "device_type", R, True,
      "devices: [/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc]  # plus driver/npu-smi volume mounts",
      "GPU reservation through the NVIDIA device driver fails on an Ascend host; NPUs are passed as device nodes"),
    C("capabilities: [gpu]", "device_type", X, False, None,
      "part of the NVIDIA device reservation removed above"),
  ])

E("bevformer_msda_function", "projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  "kernel_rewrite",
  "fundamentalvision/BEVFormer multi_scale_deformable_attn_function.py (mmcv _ext MSDA with fp16/fp32 custom_fwd)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, True,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "torch.cuda.amp.custom_fwd(cast_inputs=...) only looks at CUDA autocast: under NPU autocast the fp32 cast is silently skipped"),
    C("ext_module = ext_loader.load_ext(", "custom_cuda_extension", R, True,
      "import mx_driving  # DrivingSDK multi-scale deformable attention (name unconfirmed)",
      "mmcv's _ext ms_deform_attn kernels are CUDA kernels; " + MXD),
    C("output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", R, True,
      "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
      "CUDA kernel call; " + MXD),
    C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", R, True,
      "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving.multi_scale_deformable_attn_backward(...)",
      "CUDA kernel call in backward; " + MXD),
    C("out = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", R, True,
      "out = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
      "CUDA kernel call (fp32 variant used by BEVFormer); " + MXD),
    C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes,", "custom_cuda_extension", R, True,
      "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving.multi_scale_deformable_attn_backward(...)",
      "CUDA kernel call in backward; " + MXD),
  ])

E("bevformer_spatial_cross_attn", "projects/mmdet3d_plugin/bevformer/modules/spatial_cross_attention.py",
  "device_branch_or_abstraction",
  "fundamentalvision/BEVFormer spatial_cross_attention.py (MSDeformableAttention3D with is_cuda kernel dispatch)", [
    C("if torch.cuda.is_available() and value.is_cuda:", "device_type", R, False,
      "if value.device.type in ('cuda', 'npu'):",
      "performance: on NPU the correct but slow grid_sample fallback is taken; route NPU tensors to the fused MSDA kernel"),
  ])

E("bevformer_test", "tools/test.py", "explicit_replacement",
  "fundamentalvision/BEVFormer tools/test.py (mmcv 1.x MMDataParallel / MMDistributedDataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: .npu(), torch.npu.current_device() and hccl need torch_npu"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", R, False,
      "init_dist(args.launcher, **cfg.dist_params)  # with an NPU-aware mmcv, or torch.npu.set_device + init_process_group('hccl')",
      "unconfirmed: mmcv 1.x _init_dist_pytorch is recalled to call torch.cuda.set_device(rank % torch.cuda.device_count()) internally"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", R, True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])  # mmcv.device.npu (availability unconfirmed)",
      "MMDataParallel is a torch.nn.DataParallel, which Ascend lists as unsupported; without CUDA it also leaves the model on the CPU"),
    C("model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = NPUDistributedDataParallel(",
      "unconfirmed: mmcv's MMDistributedDataParallel scatters inputs with CUDA streams; an NPU variant in mmcv is recalled, not in the knowledge files"),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", ".cuda() needs a CUDA build"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() needs a CUDA build"),
  ])

E("bevformer_apis_test", "projects/mmdet3d_plugin/bevformer/apis/test.py", "explicit_replacement",
  "fundamentalvision/BEVFormer bevformer/apis/test.py (mmdet-style collect_results_cpu/gpu over NCCL)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; the port allocates on device='npu'"),
    C("=device='cuda')", "tensor_to_device", R, True, "device='npu')",
      "dir_tensor is broadcast over the (HCCL) process group; a 'cuda' tensor cannot be created on an NPU host"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "tensor_to_device", R, True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "device='cuda' needs a CUDA build"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "tensor_to_device", R, True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", "all_gather payload must be an NPU tensor for HCCL"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "tensor_to_device", R, True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "device='cuda' needs a CUDA build"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "tensor_to_device", R, True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "device='cuda' needs a CUDA build"),
  ])

E("bevformer_config", "projects/configs/bevformer/bevformer_base.py", "explicit_replacement",
  "fundamentalvision/BEVFormer projects/configs/bevformer/bevformer_base.py (mmcv config: R101-DCN, dist_params)", [
    C("dcn=dict(type='DCNv2', deform_groups=1, fallback_on_stride=False)", "custom_cuda_extension", R, False,
      "dcn=dict(type='DCNv2', deform_groups=1, fallback_on_stride=False),  # needs an NPU DCNv2 (torch_npu.contrib.module.DCNv2 / ModulatedDeformConv)",
      "mmcv's DCNv2 is a CUDA op; whether the installed mmcv build has an NPU kernel is unconfirmed (torch_npu.contrib offers ModulatedDeformConv)"),
    C("dist_params = dict(backend='nccl')", "dist_backend", R, True, "dist_params = dict(backend='hccl')",
      "passed to init_dist by tools/train.py and tools/test.py; NCCL missing on Ascend"),
  ])

E("uniad_dist_train_sh", "tools/uniad_dist_train.sh", "explicit_replacement",
  "OpenDriveLab/UniAD tools/uniad_dist_train.sh (torch.distributed.launch wrapper) with an nvidia-smi pre-check", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the Ascend runtime selects devices with ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not honoured"),
    C("NUM_VISIBLE=$(nvidia-smi", "device_type", R, True,
      "NUM_VISIBLE=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is absent on an NPU host: the count is 0 and the script exits before launching"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL-only knob; HCCL ignores it"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node NIC selection for HCCL's root-info exchange uses HCCL_SOCKET_IFNAME (or HCCL_IF_IP); default NIC choice may still work"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink P2P policy; meaningless on Ascend (HCCS)"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (documented default 1), so behaviour is unchanged if dropped"),
  ])

E("uniad_requirements", "requirements.txt", "explicit_replacement",
  "OpenDriveLab/UniAD-style requirements.txt (cu111 torch wheels, mmcv-full, spconv-cu111)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the CUDA wheel index; on x86 NPU hosts torch must come from the CPU index (aarch64: plain PyPI) to pair with torch_npu"),
    C("torch==1.9.1+cu111", "torch_cuda_api", R, True, "torch==2.1.0\ntorch_npu==2.1.0.post12",
      "CUDA build of torch, and a version no torch_npu release pairs with (torch_npu wheel = torch version)"),
    C("torchvision==0.10.1+cu111", "torch_cuda_api", R, True, "torchvision==0.16.0",
      "CUDA build; torchvision must match the NPU-paired torch (torchvision_npu pairs 0.16.0 with torch 2.1)"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", X, True, None,
      "prebuilt mmcv-full wheels for CUDA 11.1 / torch 1.9; their _ext ops are CUDA kernels"),
    C("mmcv-full==1.4.0", "custom_cuda_extension", R, False, "mmcv==1.7.2  # built with MMCV_WITH_OPS=1 for NPU, ops from mx_driving",
      "unconfirmed: which mmcv build carries NPU ops is not in the knowledge files; DrivingSDK covers the MSDA/voxel ops"),
    C("spconv-cu111==2.1.21", "custom_cuda_extension", R, True, "mx_driving  # DrivingSDK sparse conv (unconfirmed)",
      "spconv wheels are CUDA-only; " + MXD),
    C("cumm-cu111==0.2.8", "custom_cuda_extension", X, True, None, "spconv's CUDA matmul library; no NPU build"),
  ])

E("uniad_track", "projects/mmdet3d_plugin/uniad/detectors/uniad_track.py", "explicit_replacement",
  "OpenDriveLab/UniAD uniad/detectors/uniad_track.py (MOTR-style track queries, velocity update, debug timing)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; torch.npu.synchronize after the port"),
    C("boxes_i = gt_bboxes_3d[0][i].tensor.cuda()", "tensor_to_device", R, True,
      "boxes_i = gt_bboxes_3d[0][i].tensor.to(self.query_embedding.weight.device)",
      "gt boxes are kept on the CPU by the pipeline; .cuda() needs a CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "reached with debug_time=True; torch.cuda.synchronize raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the kernels", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the kernels before reading the clock",
      "same; NPU kernels are asynchronous too, so the timing needs the NPU sync"),
  ])

E("bevdet_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "HuangJunJie2017/BEVDet docker/Dockerfile (pytorch CUDA devel base, mmcv-full cu113, FORCE_CUDA, TensorRT tooling)", [
    C('ARG CUDA="11.3"', "env_var", X, False, None, "only feeds the CUDA base-image tag"),
    C('ARG CUDNN="8"', "env_var", X, False, None, "only feeds the CUDA base-image tag"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10  # then pip install torch==2.1.0 torch_npu==2.1.0.post12",
      "CUDA base image: no CANN toolkit, no torch_npu, and a torch build that no torch_npu release pairs with"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", X, False, None, "nvcc arch list; inert once the extensions are built for NPU"),
    C('ENV TORCH_NVCC_FLAGS=', "env_var", X, False, None, "nvcc flags; inert without nvcc"),
    C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com", "env_var", X, False, None,
      "works around the NVIDIA apt-repo key rotation of the CUDA image; pointless on a CANN image"),
    C("mmcv-full==1.5.3 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html", "custom_cuda_extension", R, True,
      "RUN pip install --no-cache-dir mmcv==1.7.2  # MMCV_WITH_OPS=1 NPU build; plus mx_driving",
      "prebuilt cu113 / torch1.10 wheel: its _ext ops are CUDA kernels and the ABI does not match the NPU-paired torch"),
    C("spconv-cu113==2.1.25", "custom_cuda_extension", R, True,
      "RUN pip install --no-cache-dir mx_driving  # DrivingSDK wheel (install route unconfirmed)",
      "spconv-cu113 is CUDA-only; " + MXD),
    C("pycuda==2022.1 onnx==1.12.0 onnxruntime-gpu==1.12.1", "custom_cuda_extension", R, True,
      "RUN pip install --no-cache-dir onnx==1.12.0  # TensorRT path replaced by ATC/OM conversion",
      "pycuda compiles against the CUDA toolkit and fails to build; onnxruntime-gpu/TensorRT have no Ascend backend"),
    C('ENV FORCE_CUDA="1"', "env_var", R, True, 'ENV FORCE_NPU="1"',
      "forces the nvcc (CUDAExtension) branch of setup.py: `pip install -e .` fails on a CANN image without nvcc"),
  ])

E("bevdet_bev_pool_v2", "mmdet3d/ops/bev_pool_v2/bev_pool.py", "kernel_rewrite",
  "HuangJunJie2017/BEVDet mmdet3d/ops/bev_pool_v2/bev_pool.py (BEVPoolv2 CUDA op, TRT symbolic, self-test)", [
    C("from . import bev_pool_v2_ext", "custom_cuda_extension", R, True,
      "import mx_driving  # DrivingSDK bev_pool_v3/v2 (name unconfirmed)",
      "bev_pool_v2_ext is an nvcc-built extension"),
    C("bev_pool_v2_ext.bev_pool_v2_forward(", "custom_cuda_extension", R, True,
      "out = mx_driving.bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_feat_shape, interval_starts, interval_lengths)",
      "CUDA kernel call; " + MXD),
    C("bev_pool_v2_ext.bev_pool_v2_backward(", "custom_cuda_extension", R, True,
      "depth_grad, feat_grad = mx_driving.bev_pool_v2_backward(out_grad, depth, feat, ranks_depth, ranks_feat, ranks_bev, interval_lengths_bp, interval_starts_bp)",
      "CUDA kernel call in backward; " + MXD),
    C("depth = torch.from_numpy(depth).float().cuda()", "tensor_to_device", R, True,
      "depth = torch.from_numpy(depth).float().npu()", "self-test: .cuda() needs a CUDA build"),
    C("=device='cuda').requires_grad_()", "tensor_to_device", R, True, "device='npu').requires_grad_()",
      "self-test: device='cuda' needs a CUDA build"),
    C("ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().cuda()", "tensor_to_device", R, True,
      "ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().npu()", "self-test"),
    C("ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().cuda()", "tensor_to_device", R, True,
      "ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().npu()", "self-test"),
    C("ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().cuda()", "tensor_to_device", R, True,
      "ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().npu()", "self-test"),
    C("grad_depth = grad_depth.cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", R, True,
      "grad_depth = grad_depth.npu().view(1, 1, 2, 2, 2)", "self-test"),
    C("grad_feat = torch.from_numpy(grad_feat).float().cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", R, True,
      "grad_feat = torch.from_numpy(grad_feat).float().npu().view(1, 1, 2, 2, 2)", "self-test"),
  ])

E("bevdet_view_transformer", "mmdet3d/models/necks/view_transformer.py", "explicit_replacement",
  "HuangJunJie2017/BEVDet necks/view_transformer.py (LSS + BEVPoolv2, BEVDepth DepthNet and depth loss)", [
    C("from torch.cuda.amp.autocast_mode import autocast", "amp", R, True,
      "from torch_npu.npu.amp import autocast",
      "`with autocast(enabled=False)` around the BCE depth loss only leaves CUDA autocast; under NPU autocast the loss silently stays in fp16"),
    C("type='DCN',", "custom_cuda_extension", R, False,
      "type='DCNv2',  # registered to an NPU deformable conv (torch_npu.contrib.module.DCNv2 / mx_driving)",
      "mmcv's DCN is a CUDA op; whether the installed mmcv build has an NPU kernel is unconfirmed"),
    C("self.max_pool = nn.AdaptiveMaxPool2d(1)", "unsupported_op_workaround", R, True,
      "self.max_pool = lambda t: t.amax(dim=(2, 3), keepdim=True)",
      "nn.AdaptiveMaxPool2d and F.adaptive_max_pool2d are marked unsupported (✘) in Ascend's PyTorch 2.7.1 API list; a global max is a plain amax"),
  ])

E("bevdepth_base_exp", "bevdepth/exps/base_exp.py", "explicit_replacement",
  "Megvii-BaseDetection/BEVDepth bevdepth/exps/base_exp.py (PyTorch Lightning module + run_cli)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "run_cli is the entry point of every exp file; NPU autocast/devices need torch_npu"),
    C("from torch.cuda.amp.autocast_mode import autocast", "amp", R, True,
      "from torch_npu.npu.amp import autocast",
      "`with autocast(enabled=False)` around the BCE depth loss only disables CUDA autocast; under NPU mixed precision it stays fp16"),
    C("depth_loss = self.get_depth_loss(depth_labels.cuda(), depth_preds)", "tensor_to_device", R, True,
      "depth_loss = self.get_depth_loss(depth_labels.to(depth_preds.device), depth_preds)",
      "outside the is_available() guard: .cuda() raises on an NPU host"),
    C("optimizer = torch.optim.AdamW(self.model.parameters(),", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(self.model.parameters(),",
      "performance: tensor-fused AdamW (msFmkTransplt advice; more memory)"),
    C("accelerator='ddp',", "distributed_framework", R, True,
      "accelerator='npu', strategy='ddp',  # Lightning NPU accelerator + hccl (plugin unconfirmed)",
      "Lightning's CUDA DDP path: with --gpus it finds no GPU, without it it silently trains on CPU; Lightning NPU support is not in the knowledge files"),
    C("precision=16,", "amp", R, False, "precision=16,  # native AMP through the NPU accelerator's autocast",
      "unconfirmed: depends on how the Lightning NPU accelerator maps native AMP"),
  ])

E("streampetr_attention", "projects/mmdet3d_plugin/models/utils/attention.py", "explicit_replacement",
  "exiawsh/StreamPETR models/utils/attention.py (flash-attn 1.x FlashMHA wrapper for the PETR decoder)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; the port calls torch_npu.npu_fusion_attention"),
    C("from timm.models.layers import DropPath", "npu_fused_op", R, False,
      "from torch_npu.contrib.module import NpuDropPath as DropPath",
      "performance: msFmkTransplt's affinity list maps DropPath to torch_npu.contrib.module.NpuDropPath"),
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_kvpacked_func", "attention_kernel", R, True,
      "import torch_npu  # npu_fusion_attention replaces flash_attn_unpadded_kvpacked_func",
      "flash-attn cannot be installed on NPU and the import is unguarded"),
    C("from flash_attn.bert_padding import unpad_input, pad_input, index_first_axis", "attention_kernel", R, True,
      "from .bert_padding import unpad_input  # vendored pure-PyTorch helpers",
      "same package; the padding helpers are plain torch code and can be vendored"),
    C("_USE_BF16 = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "_USE_BF16 = torch.npu.is_bf16_supported()",
      "evaluated at import: get_device_capability raises without CUDA (and returns nothing meaningful on NPU)"),
    C("assert q.is_cuda and kv.is_cuda", "device_type", R, True,
      "assert q.device.type == 'npu' and kv.device.type == 'npu'", "is_cuda is False for NPU tensors: AssertionError"),
    C("output = flash_attn_unpadded_kvpacked_func(", "attention_kernel", R, True,
      "output = torch_npu.npu_fusion_attention(q, k, v, nheads, 'TND', scale=self.softmax_scale, keep_prob=1 - dropout_p, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
      "varlen flash-attn call; TND layout with cumulative lengths is the documented mapping"),
    C("output_unpad = flash_attn_unpadded_kvpacked_func(", "attention_kernel", R, True,
      "output_unpad = torch_npu.npu_fusion_attention(q, k_unpad, v_unpad, nheads, 'TND', scale=self.softmax_scale, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
      "padded-key variant, same mapping"),
    C("with torch.autocast(device_type='cuda',", "amp", R, True,
      "with torch.autocast(device_type='npu', dtype=torch.bfloat16 if _USE_BF16 else torch.float16):",
      "CUDA autocast does not cover NPU tensors: q/kv stay fp32 and the fp16/bf16 assertion fails"),
    C("dtype=torch.float16, device='cuda',", "tensor_to_device", R, False,
      "self.attn = FlashMHA(embed_dims, num_heads, attention_dropout=attn_drop, dtype=torch.float16, device='npu',",
      "only forwarded via factory_kwargs to FlashAttention, which ignores it; cosmetic"),
  ])

E("nuscenes_converter", "tools/data_converter/nuscenes_converter.py", "device_branch_or_abstraction",
  "BEVFormer / mmdet3d tools/data_converter/nuscenes_converter.py (temporal info pkl with CAN bus; CPU-only)", [
  ])

E("waymo_converter", "tools/data_converter/waymo_converter.py", "device_branch_or_abstraction",
  "mmdet3d tools/data_converter/waymo_converter.py (TensorFlow range-image decoding; no torch device code)", [
  ])

TRI = ("triton-ascend tuning: num_warps/num_stages are CUDA occupancy knobs; how triton-ascend treats them is not in the "
       "knowledge files (unconfirmed) - re-tune block sizes for the Ascend vector cores")
E("triton_dynamic_scatter", "mmdet3d/ops/triton/dynamic_scatter.py", "kernel_rewrite",
  "mmdet3d-style Triton scatter-mean for dynamic voxelization (atomic_add accumulation, autotuned warps)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", LIBMOD + "; torch.npu.device after the port"),
    C("triton.Config({'BLOCK_C': 32}, num_warps=1),", "triton_kernel_tuning", R, False, "triton.Config({'BLOCK_C': 32}),", TRI),
    C("triton.Config({'BLOCK_C': 64}, num_warps=2),", "triton_kernel_tuning", R, False, "triton.Config({'BLOCK_C': 64}),", TRI),
    C("triton.Config({'BLOCK_C': 128}, num_warps=4, num_stages=2),", "triton_kernel_tuning", R, False, "triton.Config({'BLOCK_C': 128}),", TRI),
    C("triton.Config({'BLOCK_C': 256}, num_warps=8, num_stages=3),", "triton_kernel_tuning", R, False, "triton.Config({'BLOCK_C': 256}),", TRI),
    C("assert feats.is_cuda and coors.is_cuda", "device_type", R, True,
      "assert feats.device.type == 'npu' and coors.device.type == 'npu', 'triton scatter only supports NPU tensors'",
      "is_cuda is False for NPU tensors: the default backend asserts on every call"),
    C("torch.cuda.get_device_capability(feats.device)[0] < 9", "device_capability_check", R, True,
      "if feats.dtype == torch.bfloat16:",
      "reached for bf16 inputs (mixed precision): get_device_capability on an NPU device raises; SM-generation logic has no NPU meaning"),
    C("with torch.cuda.device(feats.device):", "torch_cuda_api", R, True, "with torch.npu.device(feats.device):",
      "torch.cuda.device() rejects a non-CUDA device"),
    C("BLOCK_C=min(_next_pow2(C), 256), num_warps=4)", "triton_kernel_tuning", R, False,
      "BLOCK_C=min(_next_pow2(C), 256))", TRI),
    C("pts = torch.randn(100000, 64, device='cuda')", "tensor_to_device", R, True,
      "pts = torch.randn(100000, 64, device='npu')", "self-test: device='cuda' needs a CUDA build"),
    C("crs = torch.randint(0, 50, (100000, 4), device='cuda', dtype=torch.int32)", "tensor_to_device", R, True,
      "crs = torch.randint(0, 50, (100000, 4), device='npu', dtype=torch.int32)", "self-test"),
  ])

E("mmdet3d_voxelize", "mmdet3d/ops/voxel/voxelize.py", "kernel_rewrite",
  "open-mmlab/mmdetection3d 0.x ops/voxel/voxelize.py (hard / dynamic voxelization through voxel_layer)", [
    C("from .voxel_layer import dynamic_voxelize, hard_voxelize", "custom_cuda_extension", R, True,
      "import mx_driving  # DrivingSDK voxelization (name unconfirmed)",
      "voxel_layer dispatches to CUDA kernels for device tensors (CPU kernels only for CPU tensors); no NPU path"),
    C("dynamic_voxelize(points, coors, voxel_size, coors_range, 3)", "custom_cuda_extension", R, True,
      "coors = mx_driving.dynamic_voxelization(points, voxel_size, coors_range)",
      "called with NPU points every iteration; " + MXD),
    C("voxel_num = hard_voxelize(points, voxels, coors,", "custom_cuda_extension", R, True,
      "voxel_num, voxels, coors, num_points_per_voxel = mx_driving.hard_voxelize(points, voxel_size, coors_range, max_points, max_voxels)",
      "called with NPU points every iteration; " + MXD),
  ])

E("mmdet3d_pillar_encoder", "mmdet3d/models/voxel_encoders/pillar_encoder.py", "explicit_replacement",
  "open-mmlab/mmdetection3d voxel_encoders/pillar_encoder.py (PFNLayer, PillarFeatureNet, a dynamic-pillar variant)", [
    C("return torch.scatter_reduce(out, 0, index, feats, reduce='amax', include_self=False)", "unsupported_op_workaround", R, True,
      "return mx_driving.scatter_max(feats, inverse.int())[0]  # or a sort + segment-max in plain torch",
      "NPU tensors take this fallback (is_cuda is False); torch.scatter_reduce is marked unsupported (✘) in Ascend's 2.7.1 list and in msFmkTransplt's unsupported APIs"),
  ])

E("mmdet3d_mm_demo", "demo/multi_modality_demo.py", "explicit_replacement",
  "open-mmlab/mmdetection3d demo/multi_modality_demo.py (init_model on --device)", [
    C("=import mmcv", "import_torch_npu", A, True, "import torch_npu",
      "entry script: the model is moved to 'npu:0', which needs the NPU backend registered"),
    C("'--device', default='cuda:0', help='Device used for inference'", "device_type", R, True,
      "'--device', default='npu:0', help='Device used for inference')",
      "default device string; init_model does model.to('cuda:0') and fails on an NPU host"),
  ])
