# Labels for probe163: rotated / oriented detection and MOT on OpenMMLab 1.x (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any 'npu' device or torch.npu call "
               "(mandatory for the torch 2.1-era torch_npu an OpenMMLab 1.x stack pairs with; autoload only since 2.5.1)")

# ----------------------------------------------------------------------------------------------------------
# mmrotate 0.x (mmcv-full 1.x / mmdet 2.x)
# ----------------------------------------------------------------------------------------------------------
E("mmrotate-tools-train", "tools/train.py", "explicit_replacement",
  "mmrotate 0.3.x tools/train.py (argparse, Config, init_dist, train_detector)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

E("mmrotate-tools-test", "tools/test.py", "explicit_replacement",
  "mmrotate 0.3.x tools/test.py (single_gpu_test / multi_gpu_test, MMDataParallel / MMDistributedDataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)  # from mmcv.device.npu",
        "torch.nn.DataParallel (base of MMDataParallel) is marked unsupported on NPU in Ascend's API list; mmcv's "
        "DataContainer scatter goes through torch.cuda streams"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(  # from mmcv.device.npu",
        "unconfirmed: MMDDP's to_kwargs scatter uses mmcv's CUDA scatter path; an NPU-aware mmcv ships an NPU "
        "subclass. Plain DDP itself is supported on NPU"),
      C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() has no CUDA device on an NPU host"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() initialises CUDA and raises without it"),
  ])

E("mmrotate-apis-train", "mmrotate/apis/train.py", "explicit_replacement",
  "mmrotate 0.3.x mmrotate/apis/train.py (init_random_seed, set_random_seed, train_detector)",
  [
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
        "def init_random_seed(seed=None, device='npu'):",
        "tools/train.py calls init_random_seed(args.seed) without device; in distributed runs the seed tensor is "
        "created on 'cuda' and broadcast over HCCL -> fails"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA (lazy call queued); NPU generators stay unseeded, so only reproducibility suffers"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(  # from mmcv.device.npu",
        "unconfirmed: MMDDP scatters DataContainers through mmcv's CUDA scatter; NPU-aware mmcv has an NPU subclass"),
      C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() on an NPU host"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
      C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "DataParallel is unsupported on NPU (Ascend API list); use mmcv's NPU data-parallel wrapper"),
      C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", ".cuda(idx) on an NPU host"),
  ])

E("mmrotate-apis-inference", "mmrotate/apis/inference.py", "explicit_replacement",
  "mmrotate 0.3.x mmrotate/apis/inference.py (init_detector, inference_detector_by_patches for huge DOTA images)",
  [
      C("def init_detector(config, checkpoint=None, device='cuda:0', cfg_options=None):", "device_type", "replace", False,
        "def init_detector(config, checkpoint=None, device='npu:0', cfg_options=None):",
        "public API default; demo callers pass device explicitly, but a bare call would .to('cuda:0') and fail"),
      C("if next(model.parameters()).is_cuda:", "device_type", "replace", True,
        "if next(model.parameters()).device.type in ('cuda', 'npu'):",
        "is_cuda is False for an NPU model, so the CPU branch runs and the batch stays on the host while the model "
        "is on the NPU -> device mismatch"),
      C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", False,
        "data = scatter(data, [-1])[0]; data['img'] = [i.to(device) for i in data['img']]",
        "unconfirmed: mmcv.parallel.scatter moves tensors with .cuda(device) under torch.cuda.device()"),
  ])

E("mmrotate-bbox-nms-rotated", "mmrotate/core/post_processing/bbox_nms_rotated.py", "explicit_replacement",
  "mmrotate 0.x multiclass_nms_rotated / aug_multiclass_nms_rotated calling mmcv.ops.nms_rotated",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only if the nms_rotated call sites are switched to torch_npu.npu_nms_rotated"),
      C("_, keep = nms_rotated(bboxes_for_nms, scores, nms.iou_thr)", "npu_fused_op", "replace", False,
        "keep, _ = torch_npu.npu_nms_rotated(bboxes_for_nms, scores, nms.iou_thr)",
        "mmcv-full's cu113 nms_rotated kernel cannot run on NPU tensors; torch_npu has npu_nms_rotated. Unconfirmed "
        "whether an NPU build of mmcv already dispatches nms_rotated to it (then no edit); check angle units"),
      C("cls_dets, _ = nms_rotated(cur_bboxes[:, :5], cur_bboxes[:, -1],", "npu_fused_op", "replace", False,
        "keep, _ = torch_npu.npu_nms_rotated(cur_bboxes[:, :5], cur_bboxes[:, -1], nms.iou_thr); cls_dets = cur_bboxes[keep]",
        "same as above (aug-test path); unconfirmed whether NPU mmcv covers it"),
  ])

E("mmrotate-riou-calculator", "mmrotate/core/bbox/iou_calculators/rotate_iou2d_calculator.py", "explicit_replacement",
  "mmrotate 0.x RBboxOverlaps2D / rbbox_overlaps wrapping mmcv.ops.box_iou_rotated",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only if box_iou_rotated is replaced by torch_npu.npu_rotated_iou"),
      C("return box_iou_rotated(clamped_bboxes1, clamped_bboxes2, mode, is_aligned)", "npu_fused_op", "replace", False,
        "return torch_npu.npu_rotated_iou(clamped_bboxes1[None], clamped_bboxes2[None], trans=False, mode=int(mode == 'iof'), is_cross=not is_aligned)[0]",
        "torch_npu.npu_rotated_iou exists (custom op list); unconfirmed whether an NPU build of mmcv dispatches "
        "box_iou_rotated itself, and mode/layout arguments need checking"),
  ])

E("mmrotate-max-convex-iou-assigner", "mmrotate/core/bbox/assigners/max_convex_iou_assigner.py", "explicit_replacement",
  "mmrotate 0.x MaxConvexIoUAssigner (Oriented RepPoints) using mmcv.ops.convex_iou",
  [
      C("overlaps = convex_iou(points, gt_rbboxes)", "unsupported_op_workaround", "replace", True,
        "overlaps = convex_iou_torch(points, gt_rbboxes)  # torch/shapely re-implementation",
        "convex_iou is a CUDA-only mmcv kernel and no NPU counterpart appears in torch_npu's custom-op lists"),
  ])

E("mmrotate-oriented-reppoints-head", "mmrotate/models/dense_heads/oriented_reppoints_head.py", "explicit_replacement",
  "mmrotate 0.x OrientedRepPointsHead (DeformConv2d point features, min_area_polygons -> poly2obb)",
  [
      C("rotrect_pred = min_area_polygons(pts)", "unsupported_op_workaround", "replace", True,
        "rotrect_pred = min_area_polygons_torch(pts)  # rotating-calipers in torch, runs on NPU",
        "min_area_polygons is a CUDA-only mmcv kernel; no torch_npu equivalent in the op lists"),
  ])

E("mmrotate-bbox-transforms", "mmrotate/core/bbox/transforms.py", "explicit_replacement",
  "mmrotate 0.x core/bbox/transforms.py (obb2poly_*, poly2obb_*, cv2.minAreaRect helpers) - device-agnostic",
  [])

E("mmrotate-orcnn-config", "configs/oriented_rcnn/oriented_rcnn_r50_fpn_fp16_1x_dota_le90.py", "explicit_replacement",
  "mmrotate Oriented R-CNN R50-FPN DOTA config flattened from _base_ (dist_params, gpu_ids, fp16)",
  [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "init_dist passes this backend to init_process_group; NCCL does not exist on an NPU host"),
  ])

E("mmrotate-dist-train-sh", "tools/dist_train.sh", "explicit_replacement",
  "OpenMMLab tools/dist_train.sh (torch.distributed.launch wrapper) with site env exports",
  [
      C('MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}', "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or importing torch_npu fails (libhccl.so / ASCEND_OPP_PATH errors)"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS-1)))}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device masking silently stops working"),
      C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
        "NCCL_* variables are ignored on NPU; harmless but dead"),
  ])

E("mmrotate-slurm-train-sh", "tools/slurm_train.sh", "explicit_replacement",
  "OpenMMLab tools/slurm_train.sh (srun --gres=gpu) with NCCL fabric exports",
  [
      C("=set -x", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced on every node before torch_npu is imported"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "NCCL-only knob; HCCL uses the NPU's own RoCE ports, the variable has no effect"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL_SOCKET_IFNAME is the HCCL counterpart for the rendezvous NIC; NCCL_* is ignored"),
      C("--gres=gpu:${GPUS_PER_NODE} \\", "device_type", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
        "unconfirmed: no Ascend Slurm gres integration found in the knowledge base; the gres name is site-specific"),
  ])

E("mmrotate-requirements", "requirements/runtime_cu113.txt", "explicit_replacement",
  "pinned runtime requirements of an mmrotate-based project (cu113 torch, mmcv-full wheel index)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; on x86 Ascend hosts torch comes from the CPU index, on aarch64 from PyPI"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10/index.html", "custom_cuda_extension", "removal", True,
        None, "prebuilt mmcv-full wheels carry CUDA kernels only; mmcv must be built from source for NPU"),
      C("torch==1.10.1+cu113", "custom_cuda_extension", "replace", True, "torch==2.1.0",
        "+cu113 build; torch_npu wheels pair with a plain torch of the same version"),
      C("torchvision==0.11.2+cu113", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
        "+cu113 build; must match the new torch"),
      C("mmcv-full==1.6.2", "custom_cuda_extension", "replace", False,
        "mmcv-full==1.7.2  # built with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "unconfirmed: NPU op support in mmcv arrived in later 1.x releases; version and build flag from memory"),
      C("mmrotate==0.3.4", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch-npu pin matching torch 2.1.0"),
  ])

E("mmrotate-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "mmrotate / mmdet docker/Dockerfile (pytorch/pytorch cuda-devel base, FORCE_CUDA, mmcv-full cu113 wheel)",
  [
      C("FROM pytorch/pytorch:", "custom_cuda_extension", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; needs a CANN base image (driver mounted at run time)"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list, unused without CUDA"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "nvcc flags, unused without CUDA"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
        "forces CUDA op compilation in mmcv's setup.py, which fails without nvcc when mmcv is built from source"),
      C("RUN rm /etc/apt/sources.list.d/cuda.list \\", "custom_cuda_extension", "removal", True, None,
        "the CUDA apt lists do not exist in a CANN image; plain rm exits non-zero and breaks the build"),
      C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com", "custom_cuda_extension", "removal", False,
        None, "NVIDIA repo key, harmless but pointless on Ascend"),
      C("RUN pip install --no-cache-dir --upgrade pip wheel setuptools", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
        "torch + torch_npu must be installed explicitly on a CANN base image"),
      C("RUN pip install --no-cache-dir mmcv-full==1.6.2 -f https://download.openmmlab.com/mmcv/dist/cu113", "custom_cuda_extension",
        "replace", True, "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2",
        "cu113 wheel's _ext links CUDA runtime and fails to load; build flags for NPU are from memory (unconfirmed)"),
  ])

E("dota-devkit-result-merge", "DOTA_devkit/ResultMerge_multi_process.py", "explicit_replacement",
  "DOTA_devkit ResultMerge_multi_process.py (patch result merging with polyiou CPU NMS and poly_nms_gpu CUDA ext)",
  [
      C("from poly_nms_gpu.poly_nms import poly_gpu_nms", "custom_cuda_extension", "removal", True, None,
        "nvcc-built poly_nms_gpu extension cannot be built or imported on an NPU host (module-level ImportError)"),
      C("keep = poly_gpu_nms(dets, thresh, device_id=GPU_ID)", "custom_cuda_extension", "replace", True,
        "keep = py_cpu_nms_poly_fast(dets.astype(np.float64), thresh)",
        "call site of the CUDA extension; fall back to the polyiou CPU implementation"),
  ])

# ----------------------------------------------------------------------------------------------------------
# ReDet (mmdet v1 fork, e2cnn backbone, own CUDA ops)
# ----------------------------------------------------------------------------------------------------------
E("redet-setup", "setup.py", "kernel_rewrite",
  "ReDet / mmdet v1 setup.py building nvcc extensions (riroi_align, roi_align_rotated, poly_nms, dcn ...)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension, CppExtension",
        "CUDAExtension needs CUDA_HOME/nvcc; there is no nvcc path on Ascend"),
      C("return CUDAExtension(", "custom_cuda_extension", "replace", True,
        "return None  # CUDA kernels are not built on Ascend; filter None out of ext_modules",
        "every make_cuda_ext entry is an nvcc build; kernels must be re-expressed (torch ops / torch_npu / Ascend C)"),
  ])

E("redet-riroi-align", "mmdet/ops/riroi_align/riroi_align.py", "kernel_rewrite",
  "ReDet mmdet/ops/riroi_align (RiRoIAlign autograd Function over riroi_align_cuda)",
  [
      C("from . import riroi_align_cuda", "custom_cuda_extension", "replace", True,
        "riroi_align_cuda = None  # was: from . import riroi_align_cuda (guarded by try/except ImportError)",
        "the nvcc-built extension does not exist on NPU; unguarded import fails at module import"),
      C("return RiRoIAlignFunction.apply(features, rois, self.out_size,", "custom_cuda_extension", "add_branch", True,
        "if not features.is_cuda: return riroi_align_reference(features, rois, self.out_size, self.spatial_scale, self.nOrientation)",
        "the Function raises NotImplementedError for non-CUDA tensors; route NPU tensors to the torch reference"),
  ])

E("redet-re-resnet", "mmdet/models/backbones/re_resnet.py", "explicit_replacement",
  "ReDet ReResNet rotation-equivariant backbone (e2cnn R2Conv / InnerBatchNorm) with a __main__ smoke test",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the __main__ smoke test moves the model to the NPU"),
      C("model = ReResNet(depth=50).cuda()", "tensor_to_device", "replace", True, "model = ReResNet(depth=50).npu()",
        ".cuda() on an NPU host"),
      C("x = torch.randn(2, 3, 224, 224).cuda()", "tensor_to_device", "replace", True,
        "x = torch.randn(2, 3, 224, 224).npu()", ".cuda() on an NPU host"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "print('max mem: %.1f MB' % (torch.npu.max_memory_allocated() / 2**20))",
        "returns 0 without CUDA initialised; log value only"),
  ])

E("redet-apis-env", "mmdet/apis/env.py", "explicit_replacement",
  "mmdet v1 mmdet/apis/env.py as vendored by ReDet (init_dist, _init_dist_pytorch/_slurm, set_random_seed)",
  [
      C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", False,
        "def init_dist(launcher, backend='hccl', **kwargs):",
        "default only; tools/train.py passes cfg.dist_params (labelled there), but a bare call would ask for NCCL"),
      C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "returns 0 without CUDA -> modulo by zero on the next line"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "torch.cuda.set_device raises without CUDA"),
      C("num_gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()  # npus per node", "returns 0 -> modulo by zero"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", "raises without CUDA"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; NPU RNG left unseeded"),
  ])

E("redet-apis-train", "mmdet/apis/train.py", "explicit_replacement",
  "mmdet v1 mmdet/apis/train.py as vendored by ReDet (_dist_train / _non_dist_train, Runner, batch_processor)",
  [
      C("model = MMDistributedDataParallel(model.cuda())", "tensor_to_device", "replace", True,
        "model = MMDistributedDataParallel(model.npu(), device_ids=[torch.npu.current_device()])",
        ".cuda() on an NPU host (the mmcv wrapper may also need its NPU subclass, unconfirmed)"),
      C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "tensor_to_device", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=range(cfg.gpus))",
        ".cuda() on the wrapper fails on NPU; DataParallel itself is unsupported on NPU"),
  ])

# ----------------------------------------------------------------------------------------------------------
# mmtracking 0.x
# ----------------------------------------------------------------------------------------------------------
E("mmtrack-apis-inference", "mmtrack/apis/inference.py", "explicit_replacement",
  "mmtracking 0.x mmtrack/apis/inference.py (init_model, inference_mot / inference_sot / inference_vid)",
  [
      C("device='cuda:0',", "device_type", "replace", False, "device='npu:0',",
        "public API default; demos pass --device, but a bare init_model() would .to('cuda:0') and fail"),
      C("if next(model.parameters()).is_cuda:", "device_type", "replace", True,
        "if next(model.parameters()).device.type in ('cuda', 'npu'):",
        "is_cuda is False for an NPU model -> CPU branch keeps data on the host while the model is on the NPU"),
      C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", False,
        "data = scatter(data, [-1])[0]; data['img'] = [i.to(device) for i in data['img']]",
        "unconfirmed: mmcv.parallel.scatter moves tensors with .cuda() under torch.cuda.device()"),
  ])

E("mmtrack-byte-tracker", "mmtrack/models/trackers/byte_tracker.py", "explicit_replacement",
  "mmtracking 0.x ByteTracker (numpy Kalman filter, lap.lapjv, mmdet bbox_overlaps) - device-agnostic",
  [])

E("mmtrack-util-distribution", "mmtrack/utils/util_distribution.py", "device_branch_or_abstraction",
  "mmdet/mmtrack utils/util_distribution.py (build_dp / build_ddp / get_device with cuda and mlu branches)",
  [
      C("if device == 'cuda':", "device_type", "add_branch", True,
        "elif device == 'npu': from mmcv.device.npu import NPUDataParallel; dp_factory['npu'] = NPUDataParallel; model = model.npu()",
        "no NPU branch: build_dp(model, 'npu') raises KeyError in dp_factory"),
      C("assert device in ['cuda', 'mlu'], 'Only available for cuda or mlu devices.'", "device_type", "replace", True,
        "assert device in ['cuda', 'mlu', 'npu'], 'Only available for cuda, mlu or npu devices.'",
        "assert rejects 'npu'"),
      C("return ddp_factory['cuda'](model.cuda(), *args, **kwargs)", "device_type", "add_branch", True,
        "if device == 'npu': from mmcv.device.npu import NPUDistributedDataParallel; return NPUDistributedDataParallel(model.npu(), *args, **kwargs)",
        "catch-all path calls .cuda(); NPU needs its own branch"),
      C("'cuda': torch.cuda.is_available(),", "device_type", "add_branch", True,
        "'npu': hasattr(torch, 'npu') and torch.npu.is_available(),",
        "without an 'npu' entry get_device() returns 'cpu' on an NPU host and training silently runs on the CPU"),
  ])

E("mmtrack-bytetrack-config", "configs/mot/bytetrack/bytetrack_yolox_x_crowdhuman_mot17-private-half.py",
  "explicit_replacement",
  "mmtracking ByteTrack YOLOX-X CrowdHuman+MOT17 config with runtime inlined",
  [
      C("dist_params = dict(backend='nccl', port=29500)", "dist_backend", "replace", True,
        "dist_params = dict(backend='hccl', port=29500)", "backend passed to init_process_group; NCCL absent on NPU"),
  ])

# ----------------------------------------------------------------------------------------------------------
# ByteTrack (YOLOX-based)
# ----------------------------------------------------------------------------------------------------------
E("bytetrack-tools-track", "tools/track.py", "explicit_replacement",
  "ByteTrack tools/track.py (MOT17 eval: launch, DDP, MOTEvaluator, motmetrics)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('"--dist-backend", default="nccl", type=str, help="distributed backend"', "dist_backend", "replace", True,
        '"--dist-backend", default="hccl", type=str, help="distributed backend"',
        "passed straight to init_process_group via launch()"),
      C("=configure_nccl()", "env_var", "removal", False, None,
        "only exports NCCL_* variables, which HCCL ignores"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
        "raises without CUDA"),
      C("model.cuda(rank)", "tensor_to_device", "replace", True, "model.npu(rank)", ".cuda() on an NPU host"),
      C('loc = "cuda:{}".format(rank)', "device_type", "replace", True, 'loc = "npu:{}".format(rank)',
        "torch.load(map_location='cuda:N') fails when CUDA is unavailable"),
      C("num_gpu = torch.cuda.device_count() if args.devices is None else args.devices", "torch_cuda_api", "replace",
        True, "num_gpu = torch.npu.device_count() if args.devices is None else args.devices",
        "returns 0 on an NPU host -> no worker / wrong world size"),
      C("assert num_gpu <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpu <= torch.npu.device_count()", "0 devices -> assertion fails"),
  ])

E("bytetrack-launch", "yolox/core/launch.py", "explicit_replacement",
  "YOLOX/ByteTrack yolox/core/launch.py (detectron2-style launcher, subprocess workers, init_process_group)",
  [
      C('backend="nccl",', "dist_backend", "replace", False, 'backend="hccl",',
        "default only; tools/*.py pass args.dist_backend (labelled there)"),
      C('assert num_gpus_per_machine <= torch.cuda.device_count(), "not enough GPUs on this node"', "torch_cuda_api",
        "replace", True, 'assert num_gpus_per_machine <= torch.npu.device_count(), "not enough NPUs on this node"',
        "device_count() is 0 without CUDA -> assertion fails"),
      C("torch.cuda.is_available()", "torch_cuda_api", "replace", True, "torch.npu.is_available()",
        "False on an NPU host -> worker asserts out"),
      C("=configure_nccl()", "env_var", "removal", False, None, "sets NCCL_* only; no effect on HCCL"),
      C("=assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "assert num_gpus_per_machine <= torch.npu.device_count()", "0 devices -> assertion fails"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
  ])

E("bytetrack-trainer", "yolox/core/trainer.py", "explicit_replacement",
  "YOLOX/ByteTrack yolox/core/trainer.py (AMP GradScaler/autocast, DataPrefetcher, DDP, EMA)",
  [
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
        "torch.cuda.amp.GradScaler disables itself without CUDA; with --fp16 the fp16 inputs then hit fp32 weights"),
      C('self.device = "cuda:{}".format(self.local_rank)', "device_type", "replace", True,
        'self.device = "npu:{}".format(self.local_rank)', "model.to / torch.load map_location use this string"),
      C("with torch.cuda.amp.autocast(enabled=self.amp_training):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.amp_training):",
        "cuda autocast is silently disabled on an NPU host (warning only); mixed precision is lost"),
      C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.local_rank)", "raises without CUDA"),
  ])

E("bytetrack-data-prefetcher", "yolox/data/data_prefetcher.py", "explicit_replacement",
  "YOLOX/ByteTrack yolox/data/data_prefetcher.py (apex-style CUDA stream prefetcher, random_resize)",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "CUDA stream creation raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
        "CUDA stream context"),
      C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True)", ".cuda() on an NPU host"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
      C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target.record_stream(torch.npu.current_stream())", "CUDA stream API"),
      C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True)", ".cuda() on an NPU host"),
      C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "input.record_stream(torch.npu.current_stream())", "CUDA stream API"),
      C("tensor = torch.LongTensor(1).cuda()", "tensor_to_device", "replace", True,
        "tensor = torch.LongTensor(1).npu()", ".cuda() on an NPU host; the tensor is broadcast over HCCL"),
  ])

E("bytetrack-utils-dist", "yolox/utils/dist.py", "explicit_replacement",
  "YOLOX/ByteTrack yolox/utils/dist.py (detectron2 comm: gloo group, pickled all_gather, time_synchronized)",
  [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
        "backend-string comparisons are not rewritten by any tool; on HCCL the pickled gather would use the HCCL group"),
      C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", True, 'assert backend in ["gloo", "nccl", "hccl"]',
        "an HCCL group passed in trips the assert"),
      C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", True,
        'device = torch.device("cpu" if backend == "gloo" else "npu")',
        "non-gloo groups stage the byte tensor on 'cuda'"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU -> synchronize skipped, timings measure only async launch"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "once the guard is true this call raises without CUDA"),
  ])

E("bytetrack-utils-metric", "yolox/utils/metric.py", "explicit_replacement",
  "YOLOX/ByteTrack yolox/utils/metric.py (nvidia-smi memory query, occupy_mem, gpu_mem_usage, meters)",
  [
      C('"nvidia-smi --query-gpu=memory.total,memory.used --format=csv,nounits,noheader"', "torch_cuda_api", "replace",
        True, "free, total = torch.npu.mem_get_info(cuda_device)  # replaces the nvidia-smi query",
        "nvidia-smi does not exist on an Ascend host; the parse then fails (only reached with --occupy)"),
      C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", "removal", False, None,
        "index remapping for nvidia-smi; unnecessary once torch.npu.mem_get_info takes logical ids"),
      C("x = torch.cuda.FloatTensor(256, 1024, block_mem)", "torch_cuda_api", "replace", True,
        "x = torch.empty((256, 1024, block_mem), dtype=torch.float32, device='npu')",
        "legacy CUDA tensor type constructor fails without CUDA"),
      C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "mem_usage_bytes = torch.npu.max_memory_allocated()", "returns 0 without CUDA; log value only"),
  ])

E("bytetrack-mot-evaluator", "yolox/evaluators/mot_evaluator.py", "explicit_replacement",
  "ByteTrack yolox/evaluators/mot_evaluator.py (half/float CUDA tensor types, torch2trt path, BYTETracker loop)",
  [
      C("tensor_type = torch.cuda.HalfTensor if half else torch.cuda.FloatTensor", "torch_cuda_api", "replace", True,
        "tensor_type = torch.npu.HalfTensor if half else torch.npu.FloatTensor",
        "imgs.type(torch.cuda.*Tensor) needs CUDA"),
      C("from torch2trt import TRTModule", "custom_cuda_extension", "removal", False, None,
        "TensorRT is CUDA-only; reachable only with --trt"),
      C("x = torch.ones(1, 3, test_size[0], test_size[1]).cuda()", "tensor_to_device", "replace", False,
        "x = torch.ones(1, 3, test_size[0], test_size[1]).npu()", "inside the TensorRT branch only"),
      C("statistics = torch.cuda.FloatTensor([inference_time, track_time, n_samples])", "torch_cuda_api", "replace",
        True, "statistics = torch.tensor([inference_time, track_time, n_samples], dtype=torch.float32, device='npu')",
        "CUDA tensor constructor; also reduced over HCCL in distributed eval"),
  ])

E("bytetrack-demo-track", "tools/demo_track.py", "device_branch_or_abstraction",
  "ByteTrack tools/demo_track.py (--device gpu/cpu flag, Predictor, torch2trt option)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('args.device = torch.device("cuda" if args.device == "gpu" else "cpu")', "device_type", "add_branch", True,
        'args.device = torch.device("npu" if args.device in ("gpu", "npu") and torch.npu.is_available() else "cuda" if args.device == "gpu" else "cpu")',
        "the default --device gpu maps to 'cuda' and model.to() fails; add the NPU mapping"),
      C("from torch2trt import TRTModule", "custom_cuda_extension", "removal", False, None,
        "TensorRT is CUDA-only; reachable only with --trt"),
  ])
