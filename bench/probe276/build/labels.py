# Labels for probe276 (pedestrian / crowd detection, CUDA -> Ascend NPU).
# One label per upstream line a careful porter edits; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# CrowdDet (rcnn_emd_refine, lib/layers, tools/*)
# ---------------------------------------------------------------------------------------------
E("crowddet_train", "tools/train.py", "explicit_replacement",
  "CrowdDet tools/train.py: mp.spawn workers, NCCL init, .cuda(rank) batches, optional apex O1",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point: registers the npu device / torch.npu before any device call (autoload only from torch_npu 2.5.1)"),
      C("from apex import amp", "amp", "replace", False,
        "from torch.npu.amp import autocast, GradScaler  # replaces apex O1",
        "guarded import, only used with --fp16; NVIDIA apex --cuda_ext cannot be built on an NPU host. Ascend's apex patch keeps amp O1 working, "
        "native torch.npu.amp is preferred (knowledge §6); optional"),
      C("images = images.cuda(rank)", "tensor_to_device", "replace", True, "images = images.npu(rank)",
        "Tensor.cuda raises without CUDA"),
      C("gt_boxes = gt_boxes.cuda(rank)", "tensor_to_device", "replace", True, "gt_boxes = gt_boxes.npu(rank)",
        "Tensor.cuda raises without CUDA"),
      C("im_info = im_info.cuda(rank)", "tensor_to_device", "replace", True, "im_info = im_info.npu(rank)",
        "Tensor.cuda raises without CUDA"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
        "torch.cuda.set_device fails on a host without CUDA; each spawned worker must bind its NPU"),
      C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method=train_config.dist_url,",
        "NCCL backend does not exist on Ascend; HCCL is the collective backend"),
      C("net.cuda(rank)", "tensor_to_device", "replace", True, "net.npu(rank)",
        "Module.cuda moves parameters to CUDA and raises"),
      C("map_location=torch.device('cuda', rank)", "device_type", "replace", True,
        "check_point = torch.load(model_file, map_location=torch.device('npu', rank))",
        "resume path maps storages onto a CUDA device that does not exist"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a no-op when CUDA was never initialised: no failure, but NPU cache is never released (silent no-op)"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "returns False on an NPU host -> prints 'No GPU exists!' and training silently never starts"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
        "0 on an NPU host: world_size 0, iter_per_epoch division by zero"),
      C("os.environ['NCCL_IB_DISABLE'] = '1'", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL; no documented HCCL equivalent in the knowledge notes"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = ','", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(str(d) for d in parse_devices(args.devices))",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --devices would silently be ignored and ranks land on NPU 0..N-1"),
  ])

E("crowddet_test", "tools/test.py", "explicit_replacement",
  "CrowdDet tools/test.py: one Process per GPU, EMD set-NMS on CPU, CrowdHuman AP/MR/JI",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point; worker processes use the npu device"),
      C("torch.cuda.get_device_name(d)", "torch_cuda_api", "replace", True,
        "print('  worker on NPU {}: {}'.format(d, torch.npu.get_device_name(d)))",
        "called unconditionally before evaluation; raises without CUDA"),
      C("net.cuda(device)", "tensor_to_device", "replace", True, "net.npu(device)",
        "Module.cuda raises without CUDA"),
      C("check_point = torch.load(model_file)", "device_type", "replace", True,
        "check_point = torch.load(model_file, map_location='cpu')",
        "dump-*.pth was saved from CUDA tensors (net.module.state_dict() on GPU); without map_location torch.load tries to restore them on CUDA and fails"),
      C("pred_boxes = net(image.cuda(device), im_info.cuda(device))", "tensor_to_device", "replace", True,
        "pred_boxes = net(image.npu(device), im_info.npu(device))",
        "Tensor.cuda raises without CUDA"),
      C("os.environ['NCCL_IB_DISABLE'] = '1'", "env_var", "removal", False, None,
        "copied from train.py; evaluation does no collectives, NCCL knob is dead on NPU"),
  ])

E("crowddet_inference", "tools/inference.py", "device_branch_or_abstraction",
  "CrowdDet tools/inference.py demo with a select_device helper and timed forward",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point; needed for the npu device type"),
      C("if requested.startswith('cuda') and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if requested.startswith('npu') and torch.npu.is_available(): return torch.device(requested)",
        "without an npu branch the helper silently falls back to CPU"),
      C("if device.type == 'cuda':", "device_type", "add_branch", False,
        "elif device.type == 'npu': torch.npu.synchronize(device)",
        "only affects the printed forward time (NPU kernels are async too); results unaffected"),
      C("parser.add_argument('--device', default='cuda:0'", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu:0', type=str,",
        "default 'cuda:0' makes the demo silently run on CPU on an NPU host"),
  ])

E("crowddet_network", "model/rcnn_emd_refine/network.py", "device_branch_or_abstraction",
  "CrowdDet model/rcnn_emd_refine/network.py (FPN + RPN + EMD refine head), device-agnostic via type_as",
  [])

E("crowddet_roi_align", "lib/layers/roi_align.py", "kernel_rewrite",
  "CrowdDet lib/layers/roi_align.py (detectron2-style autograd Functions over the _C extension)",
  [
      C("from layers import _C", "custom_cuda_extension", "replace", True,
        "import torch_npu, torchvision, torchvision_npu  # _C (nvcc) replaced by NPU ops",
        "the _C extension's CUDA kernels cannot be built; a CPU-only _C would be handed NPU tensors"),
      C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
        "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio, 2 if aligned else 0)",
        "npu_roi_align exists in torch_npu custom ops; roi_end_mode mapping for aligned=True taken from mmcv's NPU adapter (unconfirmed)"),
      C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
        "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], output_size[0], spatial_scale, sampling_ratio, 2 if ctx.aligned else 0)",
        "backward kernel also nvcc-only; npu_roi_alignbk is the NPU counterpart"),
      C("output, argmax = _C.roi_pool_forward(", "custom_cuda_extension", "replace", True,
        "output = torchvision.ops.roi_pool(input, roi, output_size, spatial_scale); argmax = None",
        "ROIPool path (pooler_type='ROIPool'); torchvision_npu provides roi_pool on NPU (knowledge §6)"),
      C("grad_input = _C.roi_pool_backward(", "custom_cuda_extension", "replace", True,
        "raise RuntimeError('backward handled by torchvision.ops.roi_pool autograd on NPU')",
        "with torchvision's roi_pool the custom Function backward is no longer used; the _C call cannot stay"),
  ])

E("crowddet_nms", "lib/layers/nms.py", "kernel_rewrite",
  "CrowdDet lib/layers/nms.py wrapper over _C.nms plus a torch set-NMS",
  [
      C("from layers import _C", "custom_cuda_extension", "replace", True,
        "import torchvision, torchvision_npu",
        "_C.nms is an nvcc kernel; torchvision_npu registers nms for NPU tensors"),
      C("return _C.nms(boxes, scores, iou_threshold)", "custom_cuda_extension", "replace", True,
        "return torchvision.ops.nms(boxes, scores, iou_threshold)",
        "call site of the nvcc op; same (x1,y1,x2,y2) convention as detectron2's nms"),
  ])

E("crowddet_setup", "lib/setup.py", "kernel_rewrite",
  "CrowdDet/detectron2-style lib/setup.py building layers._C (CppExtension, CUDAExtension when nvcc is found)",
  [
      C("ext_modules=get_extensions(),", "custom_cuda_extension", "removal", False, None,
        "after roi_align.py / nms.py use NPU ops the _C module is unused; on an NPU host the CUDA branch is skipped and a CPU-only _C still builds, so leaving it is harmless"),
  ])

E("crowddet_anchor_target", "lib/det_oprs/fpn_anchor_target.py", "explicit_replacement",
  "CrowdDet lib/det_oprs/fpn_anchor_target.py (RPN label assignment and anchor generator)",
  [
      C("perm1 = torch.randperm(positive.numel()).cuda()[:num_pos]", "tensor_to_device", "replace", True,
        "perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]",
        "hard-coded .cuda() in the sampler; the neighbouring perm2 line is already device-agnostic"),
  ])

# ---------------------------------------------------------------------------------------------
# Pedestron (mmdetection 1.x)
# ---------------------------------------------------------------------------------------------
E("pedestron_dist_train_sh", "tools/dist_train.sh", "explicit_replacement",
  "Pedestron / mmdetection 1.x tools/dist_train.sh (torch.distributed.launch)",
  [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (libs, ASCEND_* paths) must be loaded before torch_npu can import, unless the image/login shell already does it"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only; HCCL ignores it (no HCCL equivalent documented)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL's NIC selection variable; only matters for root-info setup across nodes, this launcher is single-node"),
  ])

E("pedestron_env", "mmdet/apis/env.py", "explicit_replacement",
  "mmdetection 1.x mmdet/apis/env.py (init_dist, slurm init, set_random_seed) plus a collect_env helper",
  [
      C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", False,
        "def init_dist(launcher, backend='hccl', **kwargs):",
        "default only; every Pedestron config passes dist_params backend explicitly (labelled in the config)"),
      C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "0 on an NPU host -> rank % 0 ZeroDivisionError"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "raises without CUDA"),
      C("num_gpus = torch.cuda.device_count()  # gpus on this node", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()  # npus on this node", "slurm path, same failure"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", "slurm path, raises without CUDA"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed on the line above also seeds registered custom devices in torch 2.x (unconfirmed in knowledge)"),
  ])

E("pedestron_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "mmdetection 1.x mmdet/apis/train.py with Pedestron's mean-teacher hook (MMDataParallel / MMDistributedDataParallel)",
  [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "mmcv's CUDA wrappers scatter with torch.cuda streams; NPU wrappers live in mmcv>=1.7 (mmcv.device.npu, as used by mmdet 2.x build_dp) - not in the knowledge notes, unconfirmed"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(",
        "CUDA-bound wrapper (scatter to torch.cuda.current_device())"),
      C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "Module.cuda raises without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device raises without CUDA"),
      C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "torch.nn.DataParallel is unsupported on NPU (✘ in Ascend's 2.7.1 list); single-device NPU wrapper instead (mmcv>=1.7, unconfirmed)"),
  ])

E("pedestron_inference", "mmdet/apis/inference.py", "explicit_replacement",
  "mmdetection 1.x mmdet/apis/inference.py (init_detector / inference_detector) with Pedestron demo helpers",
  [
      C("def init_detector(config, checkpoint=None, device='cuda:0'):", "device_type", "replace", True,
        "def init_detector(config, checkpoint=None, device='npu:0'):",
        "default device used by demos and notebooks; 'cuda:0' fails in model.to()"),
      C("data = scatter(collate([data], samples_per_gpu=1), [device])[0]", "tensor_to_device", "replace", True,
        "data = scatter(collate([data], samples_per_gpu=1), [-1])[0]; data['img'] = [i.to(device) for i in data['img']]",
        "mmcv 0.x Scatter uses torch.cuda streams / .cuda() for any non -1 target"),
      C("model = init_detector(config, checkpoint, device=torch.device('cuda:0'))", "device_type", "replace", True,
        "model = init_detector(config, checkpoint, device=torch.device('npu:0'))",
        "explicit CUDA device in the folder demo"),
  ])

E("pedestron_nms_wrapper", "mmdet/ops/nms/nms_wrapper.py", "device_branch_or_abstraction",
  "mmdetection 1.x mmdet/ops/nms/nms_wrapper.py (nms_cuda / nms_cpu dispatch, soft_nms)",
  [
      C("=import torch", "unsupported_op_workaround", "npu_only_addition", True,
        "import torchvision, torchvision_npu",
        "NPU branch below uses torchvision.ops.nms, which needs torchvision_npu for NPU tensors"),
      C("from . import nms_cuda, nms_cpu", "custom_cuda_extension", "replace", True,
        "from . import nms_cpu; try: from . import nms_cuda\nexcept ImportError: nms_cuda = None",
        "nms_cuda is an nvcc extension that is not built on an NPU host -> ImportError at import time"),
      C("device = 'cpu' if device_id is None else 'cuda:{}'.format(device_id)", "device_type", "replace", True,
        "device = 'cpu' if device_id is None else 'npu:{}'.format(device_id)",
        "numpy input with device_id would be moved to CUDA"),
      C("if dets_th.is_cuda:", "custom_cuda_extension", "add_branch", True,
        "elif dets_th.device.type == 'npu': inds = torchvision.ops.nms(dets_th[:, :4], dets_th[:, 4], iou_thr)",
        "NPU tensors would otherwise reach nms_cpu (CPU kernel on device memory); note mmdet 1.x nms uses the +1 box-area convention, torchvision does not"),
  ])

E("pedestron_roi_align", "mmdet/ops/roi_align/roi_align.py", "kernel_rewrite",
  "mmdetection 1.x mmdet/ops/roi_align/roi_align.py (roi_align_cuda forward/backward)",
  [
      C("from . import roi_align_cuda", "custom_cuda_extension", "replace", True, "import torch_npu",
        "roi_align_cuda is nvcc-only; not built on an NPU host"),
      C("if features.is_cuda:", "device_type", "replace", True, "if features.device.type == 'npu':",
        "is_cuda is False for NPU tensors -> NotImplementedError branch"),
      C("roi_align_cuda.forward(features, rois, out_h, out_w, spatial_scale,", "custom_cuda_extension", "replace", True,
        "output = torch_npu.npu_roi_align(features, rois, spatial_scale, out_h, out_w, sample_num, 0)",
        "legacy (non-aligned) mmdet-1.x RoIAlign -> roi_end_mode 0 (mapping unconfirmed)"),
      C("assert (feature_size is not None and grad_output.is_cuda)", "device_type", "replace", True,
        "assert (feature_size is not None and grad_output.device.type == 'npu')",
        "assert fails for NPU gradients"),
      C("roi_align_cuda.backward(grad_output.contiguous(), rois, out_h,", "custom_cuda_extension", "replace", True,
        "grad_input = torch_npu.npu_roi_alignbk(grad_output.contiguous(), rois, list(feature_size), out_w, out_h, spatial_scale, sample_num, 0)",
        "backward kernel is nvcc-only"),
  ])

E("pedestron_setup", "setup.py", "explicit_replacement",
  "mmdetection 1.x / Pedestron setup.py (make_cuda_ext for every op, cythonised soft_nms)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension, CppExtension",
        "CUDAExtension needs CUDA_HOME/nvcc; the remaining C++-only op (nms_cpu) builds as CppExtension"),
      C("return CUDAExtension(", "custom_cuda_extension", "replace", True, "return CppExtension(",
        "make_cuda_ext is still used for nms_cpu.cpp, which has no CUDA source"),
      C("'nvcc': [", "custom_cuda_extension", "removal", False, None,
        "nvcc flags are ignored once only C++ sources remain"),
      C("name='roi_align_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop the extension entry: .cu sources cannot be compiled; replaced by torch_npu.npu_roi_align"),
      C("name='roi_pool_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source (torchvision_npu roi_pool instead)"),
      C("name='nms_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source (torchvision_npu nms instead)"),
      C("name='deform_conv_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source (torch_npu.npu_deformable_conv2d exists; wrapper rewrite not in this probe)"),
      C("name='deform_pool_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source, no NPU build"),
      C("name='sigmoid_focal_loss_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source; loss can be expressed with torch ops"),
      C("name='masked_conv2d_cuda',", "custom_cuda_extension", "removal", True, None,
        "drop: .cu source, no NPU build"),
  ])

E("pedestron_config", "configs/elephant/cityperson/cascade_hrnet.py", "explicit_replacement",
  "Pedestron configs/elephant/cityperson/cascade_hrnet.py (mmdet 1.x Cascade R-CNN HRNet on CityPersons)",
  [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed to init_dist -> init_process_group(backend='nccl') fails on Ascend"),
  ])

E("pedestron_test", "tools/test_city_person.py", "explicit_replacement",
  "Pedestron tools/test_city_person.py (checkpoint sweep, single/multi GPU test, collect_results via tmpdir broadcast)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point"),
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", True,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "mmcv CUDA wrappers (mmcv>=1.7 NPU wrappers, unconfirmed)"),
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "dir_tensor broadcast buffer for multi-GPU collection"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')",
        "rank-0 tmpdir tensor"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "DataParallel is unsupported on NPU; without CUDA torch's DataParallel does not move the model and passes DataContainers straight through"),
      C("model = MMDistributedDataParallel(model.cuda())", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(model.npu(), device_ids=[torch.npu.current_device()], broadcast_buffers=False)",
        "CUDA wrapper + Module.cuda"),
  ])

E("pedestron_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "mmdetection 1.x / Pedestron docker/Dockerfile (pytorch/pytorch CUDA devel base)",
  [
      C("ARG CUDA=\"10.0\"", "custom_cuda_extension", "removal", False, None,
        "only feeds the CUDA base-image tag"),
      C("ARG CUDNN=\"7.5\"", "custom_cuda_extension", "removal", False, None,
        "only feeds the CUDA base-image tag"),
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "import_torch_npu", "replace", True,
        "FROM ${ASCEND_BASE_IMAGE}  # CANN toolkit + python base (e.g. an Ascend/CANN 8.x image)",
        "CUDA devel image has neither CANN nor a torch_npu-compatible torch"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list, unused on NPU"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "nvcc flags, unused on NPU"),
      C("RUN conda install cython -y && conda clean --all", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10 torchvision==0.16.0",
        "torch / torch-npu pair from the compatibility matrix (2.1.0.post10 <-> CANN 8.0.0); torchvision matches torch 2.1"),
      C("RUN pip install mmcv==0.2.10 imagecorruptions", "distributed_framework", "replace", True,
        "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -e . && pip install imagecorruptions",
        "NPUDataParallel / NPUDistributedDataParallel used by the ported apis need mmcv-full>=1.7 built for NPU (unconfirmed in knowledge)"),
  ])

# ---------------------------------------------------------------------------------------------
# CSP (Center and Scale Prediction) pytorch port
# ---------------------------------------------------------------------------------------------
E("csp_trainval", "trainval_torchstyle.py", "explicit_replacement",
  "CSP pytorch port trainval_torchstyle.py (DataParallel, mean teacher, CityPersons val)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"]", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(i) for i in config.gpu_ids)",
        "ignored by the Ascend runtime; device selection silently wrong"),
      C("net = CSPNet().cuda()", "tensor_to_device", "replace", True, "net = CSPNet().npu()", "Module.cuda raises"),
      C("center = cls_pos().cuda()", "tensor_to_device", "replace", False, "center = cls_pos().npu()",
        "loss module has no parameters/buffers: Module.cuda() applies to nothing and never touches CUDA (silent no-op)"),
      C("height = reg_pos().cuda()", "tensor_to_device", "replace", False, "height = reg_pos().npu()",
        "parameter-free module, .cuda() is a no-op"),
      C("offset = offset_pos().cuda()", "tensor_to_device", "replace", False, "offset = offset_pos().npu()",
        "parameter-free module, .cuda() is a no-op"),
      C("net = nn.DataParallel(net, device_ids=config.gpu_ids)", "distributed_framework", "replace", True,
        "net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])  # launch with torchrun + hccl",
        "nn.DataParallel is ✘ on NPU; unchanged it wraps nothing and the whole batch silently runs on one device"),
      C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "Tensor.cuda raises"),
      C("labels = [l.cuda().float() for l in labels]", "tensor_to_device", "replace", True,
        "labels = [l.npu().float() for l in labels]", "Tensor.cuda raises"),
      C("inputs = data.cuda()", "tensor_to_device", "replace", True, "inputs = data.npu()", "validation batch"),
  ])

E("csp_test", "test_city.py", "explicit_replacement",
  "CSP pytorch port test_city.py (teacher weights, flip / multi-scale TTA, timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "--gpu would be silently ignored"),
      C("net = CSPNet().cuda()", "tensor_to_device", "replace", True, "net = CSPNet().npu()", "Module.cuda raises"),
      C("net.load_state_dict(torch.load(args.ckpt))", "device_type", "replace", True,
        "net.load_state_dict(torch.load(args.ckpt, map_location='cpu'))",
        ".pth/.pth.tea were saved from CUDA tensors; loading without map_location restores onto CUDA"),
      C("inputs = data.cuda()", "tensor_to_device", "replace", True, "inputs = data.npu()", "Tensor.cuda raises"),
      C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the H2D copy is done", "--timing path raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "--timing path raises without CUDA"),
  ])

E("csp_loss", "net/loss.py", "explicit_replacement",
  "CSP pytorch port net/loss.py (focal center loss, smooth-L1 height/offset losses)",
  [
      C("one = torch.cuda.FloatTensor([1.0])", "torch_cuda_api", "replace", True,
        "one = torch.ones(1, device=assigned_box.device)",
        "legacy CUDA tensor type constructor raises without CUDA"),
      C("torch.max(torch.cuda.FloatTensor([1.0]), num_pos)", "torch_cuda_api", "replace", True,
        "return torch.sum(l1_loss) / torch.max(torch.ones(1, device=num_pos.device), num_pos)",
        "legacy CUDA tensor type constructor (wh variant)"),
  ])

E("csp_nms_wrapper", "util/nms_wrapper.py", "explicit_replacement",
  "CSP pytorch port util/nms_wrapper.py (py-faster-rcnn gpu_nms / cpu_nms)",
  [
      C("from util.nms.gpu_nms import gpu_nms", "custom_cuda_extension", "removal", True, None,
        "gpu_nms.so is built with nvcc; ImportError on an NPU host"),
      C("keep = gpu_nms(dets, thresh, device_id=gpu_id)", "custom_cuda_extension", "replace", True,
        "keep = cpu_nms(dets, thresh)",
        "detections are numpy arrays already; the Cython CPU NMS is the natural replacement (callers pass usegpu=True)"),
  ])

E("csp_setup", "util/setup.py", "explicit_replacement",
  "py-faster-rcnn style util/setup.py (locate_cuda, nvcc-customised build_ext) shipped by CSP ports",
  [
      C("CUDA = locate_cuda()", "custom_cuda_extension", "removal", True, None,
        "raises EnvironmentError at import when nvcc is absent, so even cpu_nms cannot be built"),
      C("Extension('nms.gpu_nms',", "custom_cuda_extension", "removal", True, None,
        "drop the gpu_nms extension (nms_kernel.cu, cudart)"),
  ])

# ---------------------------------------------------------------------------------------------
# Iter-E2EDet / Deformable-DETR on CrowdHuman
# ---------------------------------------------------------------------------------------------
E("e2e_main", "main.py", "explicit_replacement",
  "Iter-E2EDet / Deformable DETR main.py with --amp (torch.cuda.amp) and a tensor-core check",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "torch.device('cuda') then model.to(device) fails"),
      C("if args.amp and torch.cuda.get_device_capability()[0] < 7:", "device_capability_check", "replace", True,
        "if args.amp and device.type == 'cuda' and torch.cuda.get_device_capability()[0] < 7:",
        "with --amp this raises without CUDA; NPU get_device_capability is not a real capability (knowledge §2.8)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "CUDA GradScaler disables itself with a warning when CUDA is absent: --amp silently trains in fp32 (performance only)"),
  ])

E("e2e_engine", "engine.py", "explicit_replacement",
  "Iter-E2EDet / Deformable DETR engine.py (prefetcher, autocast, GradScaler) plus FPS benchmark",
  [
      C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=amp):",
        "CUDA autocast is disabled with a warning on an NPU host; no failure, fp32 only"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "--benchmark path raises without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "--benchmark path"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "--benchmark path"),
  ])

E("e2e_prefetcher", "datasets/data_prefetcher.py", "explicit_replacement",
  "Deformable DETR datasets/data_prefetcher.py (side CUDA stream + record_stream)",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "prefetch=True is the training default; raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "stream context"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("samples.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "samples.record_stream(torch.npu.current_stream())", "record_stream on NPU needs an NPU stream"),
      C("v.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "v.record_stream(torch.npu.current_stream())", "same for targets"),
  ])

E("e2e_misc", "util/misc.py", "explicit_replacement",
  "DETR / Deformable DETR util/misc.py (SmoothedValue, all_gather, MetricLogger, init_distributed_mode)",
  [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "metric sync buffer; float64 all_reduce over HCCL unconfirmed (float32 is the safe fallback)"),
      C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
        "tensor = torch.ByteTensor(storage).to(\"npu\")", "all_gather of pickled results"),
      C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "device_type", "replace", True,
        "local_size = torch.tensor([tensor.numel()], device=\"npu\")", "HCCL needs device tensors on npu"),
      C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "device_type", "replace", True,
        "size_list = [torch.tensor([0], device=\"npu\") for _ in range(world_size)]", "all_gather buffers"),
      C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "device_type", "replace", True,
        "tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"npu\"))", "all_gather buffers"),
      C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "device_type", "replace", True,
        "padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"npu\")", "padding buffer"),
      C("log_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "log_mem = torch.npu.is_available()", "False on NPU: only the 'max mem' column disappears from the log"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))",
        "reached only if log_mem is switched to NPU; logging only"),
      C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
        "LOCAL_SIZE=0 breaks NodeDistributedSampler (--cache_mode) and get_local_size()"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "slurm path: proc_id % 0"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL unavailable on Ascend"),
  ])

E("e2e_msda_func", "models/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "Deformable DETR models/ops/functions/ms_deform_attn_func.py (MultiScaleDeformableAttention extension + PyTorch reference)",
  [
      C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
        "try: import MultiScaleDeformableAttention as MSDA\nexcept ImportError: MSDA = None  # no nvcc build on NPU",
        "the extension is CUDA-only (setup.py raises without CUDA); an unguarded import breaks models/ops on import"),
  ])

E("e2e_msda_module", "models/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "Deformable DETR models/ops/modules/ms_deform_attn.py (MSDeformAttn module)",
  [
      C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
        "from ..functions.ms_deform_attn_func import MSDeformAttnFunction, ms_deform_attn_core_pytorch",
        "the NPU path needs the PyTorch reference implementation"),
      C("output = MSDeformAttnFunction.apply(", "attention_kernel", "replace", True,
        "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
        "CUDA-only deformable-attention kernel; grid_sample-based reference runs on NPU (grid_sample ✔ on A2). "
        "DrivingSDK (mx_driving) multi_scale_deformable_attn would be faster (not confirmed in knowledge)"),
  ])

E("e2e_ops_setup", "models/ops/setup.py", "kernel_rewrite",
  "Deformable DETR models/ops/setup.py (CUDAExtension for MultiScaleDeformableAttention)",
  [
      C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", False,
        "return []  # no CUDA: NPU runs ms_deform_attn_core_pytorch, nothing to compile",
        "install step (make.sh) aborts on an NPU host; training no longer needs the extension once the import is guarded"),
  ])

E("e2e_launch_sh", "configs/iter_deformable_detr_crowdhuman.sh", "explicit_replacement",
  "Iter-E2EDet configs/*.sh launcher (torch.distributed.launch / srun)",
  [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment for torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=", "env_var", "removal", False, None,
        "NCCL logging knob, no effect with HCCL"),
      C("--device cuda\"", "device_type", "replace", True, "    --device npu\"",
        "explicit --device overrides main.py's default"),
      C("--gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False, "        --gres=npu:${GPUS_PER_NODE} \\",
        "gres name is site-specific; no Ascend Slurm integration documented in the knowledge notes (unconfirmed)"),
  ])

E("e2e_env_yml", "environment.yml", "explicit_replacement",
  "Iter-E2EDet / Deformable DETR conda environment.yml (pytorch + cudatoolkit from pytorch/nvidia channels)",
  [
      C("- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA package channel, unused"),
      C("- pytorch=1.10.0", "import_torch_npu", "replace", True, "    - torch==2.1.0",
        "no torch_npu for torch 1.10; torch must match the torch-npu wheel (pip, CPU/aarch64 wheel)"),
      C("- torchvision=0.11.1", "import_torch_npu", "replace", True, "    - torchvision==0.16.0",
        "must match torch 2.1 (torchvision_npu pairs 0.16.0 with torch 2.1)"),
      C("- cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
        "CUDA runtime package, dead weight on NPU"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "the Ascend adapter itself"),
  ])
