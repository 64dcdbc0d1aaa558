# Labels for probe107 (Detectron-era detectors with their own CUDA operators -> Ascend NPU).
# Target stack assumed by the labels: torch 2.1.0 + torch_npu 2.1.0.postN (explicit `import torch_npu`
# needed; autoload only exists from torch_npu 2.5.1), Ascend apex ("Apex Patch") where apex.amp is kept.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU = "import torch_npu"

# ---------------------------------------------------------------- maskrcnn-benchmark

E("mb_setup", "setup.py", "kernel_rewrite",
  "maskrcnn-benchmark setup.py (CppExtension/CUDAExtension switch, FORCE_CUDA)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "replace", False,
      'if CUDA_HOME is not None and os.getenv("FORCE_CUDA", "0") == "1":',
      "On an NPU host torch.cuda.is_available() is False, so the build already falls back to the "
      "CPU-only CppExtension; the CUDA branch is dead. Tidying it is optional (the NPU kernels are "
      "torch_npu ops called from Python, not part of _C)."),
])

E("mb_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite",
  "maskrcnn-benchmark layers/roi_align.py (_C.roi_align_forward/backward in an autograd Function, apex amp.float_function)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module now calls torch_npu.npu_roi_align / npu_roi_alignbk directly, so the name must be imported"),
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "removal", False, None,
      "no longer used after the rewrite; harmless if the CPU-only _C was built, so removal is cosmetic"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
      "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio, 0)",
      "_C dispatches on is_cuda(); an NPU tensor falls into ROIAlign_forward_cpu, which reads device memory "
      "through a host pointer (crash/garbage). roi_end_mode for the legacy non-aligned box convention still "
      "to be checked against torch_npu docs."),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], output_size[0], spatial_scale, sampling_ratio)",
      "same dispatch problem in backward; npu_roi_alignbk takes (pooled_width, pooled_height) in that order"),
])

E("mb_focal", "maskrcnn_benchmark/layers/sigmoid_focal_loss.py", "explicit_replacement",
  "maskrcnn-benchmark layers/sigmoid_focal_loss.py (_C.sigmoid_focalloss_* vs pure-torch CPU fallback chosen by is_cuda)", [
    # Deliberately no labels: an NPU tensor has is_cuda == False, so SigmoidFocalLoss picks the
    # pure-torch sigmoid_focal_loss_cpu, which is device-agnostic (device=targets.device) and correct
    # on NPU. The _C.sigmoid_focalloss_* lines are never reached. (Under transfer_to_npu, where
    # Tensor.is_cuda is patched to is_npu, this file WOULD need the branch changed.)
])

E("mb_train_net", "tools/train_net.py", "explicit_replacement",
  "maskrcnn-benchmark tools/train_net.py (torch.distributed.launch, apex.amp O1, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "entry script: registers the npu device and torch.npu (mandatory before torch_npu 2.5.1)"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level, loss_scale=128.0, combine_grad=True)",
      "works unchanged with Ascend apex (same API); combine_grad is an Ascend-apex performance option"),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # TODO check if it helps",
      "CUDA never initialised on an NPU host, so this is a silent no-op; switch to free NPU cache"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device raises without CUDA"),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', "NCCL is unavailable on Ascend; HCCL is the collective backend"),
])

E("mb_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "maskrcnn-benchmark engine/trainer.py (do_train loop, amp.scale_loss, max mem logging)", [
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "with CUDA uninitialised this reports 0 MB (older torch raises); logged value is wrong"),
    C("memory=torch.cuda.max_memory_allocated() // (1024 * 1024),", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() // (1024 * 1024),", "same as the training-loop log line"),
])

E("mb_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "maskrcnn-benchmark utils/comm.py (pickle all_gather over NCCL with .to('cuda'))", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "'cuda' device string fails on an NPU host"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "HCCL collectives need NPU tensors"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "same"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "same"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "same"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize raises without CUDA"),
])

E("mb_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "maskrcnn-benchmark config/defaults.py (yacs defaults, MODEL.DEVICE, DTYPE, AMP_VERBOSE)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True,
      '_C.MODEL.DEVICE = "npu"',
      "every script does torch.device(cfg.MODEL.DEVICE) / model.to(cfg.MODEL.DEVICE); 'cuda' fails on NPU"),
])

E("mb_docker", "docker/Dockerfile", "explicit_replacement",
  "maskrcnn-benchmark docker/Dockerfile (nvidia/cuda base, cudatoolkit, NVIDIA apex --cuda_ext, FORCE_CUDA)", [
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu16.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "base image must provide CANN (toolkit + set_env exports) instead of the CUDA toolkit"),
    C("&& /miniconda/bin/conda create -y --name py36 python=3.6.7 \\", "device_type", "replace", True,
      "&& /miniconda/bin/conda create -y --name py36 python=3.10 \\",
      "torch 2.1 / torch-npu 2.1.0.postN wheels need Python 3.8-3.11; 3.6 cannot install them"),
    C("&& conda install pytorch-nightly cudatoolkit=${CUDA} -c pytorch \\", "device_type", "replace", True,
      "&& pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
      "CUDA build of torch + cudatoolkit; NPU needs a CPU torch paired with the matching torch-npu wheel"),
    C("RUN git clone https://github.com/pytorch/vision.git \\", "device_type", "removal", True, None,
      "torchvision master built against the CUDA nightly; the NPU stack pins torchvision==0.16.0 with torch 2.1.0 "
      "(master would not build against it)"),
    C("RUN git clone https://github.com/NVIDIA/apex.git \\", "amp", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex.git \\",
      "NVIDIA apex amp.initialize rejects non-CUDA parameters; Ascend apex keeps the amp API"),
    C("&& python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", "replace", True,
      "&& bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc; Ascend apex is built by its own script (pure-Python patch)"),
    C('ARG FORCE_CUDA="1"', "custom_cuda_extension", "replace", True,
      'ARG FORCE_CUDA="0"',
      "FORCE_CUDA=1 forces CUDAExtension + .cu sources in setup.py, which fails without nvcc"),
])

# ---------------------------------------------------------------- FCOS

E("fcos_test_net", "tools/test_net.py", "transfer_to_npu",
  "FCOS tools/test_net.py (fcos_core, apex amp.init, torch.distributed.launch)", [
    # transfer_to_npu style: torch.cuda.set_device and backend="nccl" are rewritten at runtime
    # (torch.cuda -> torch_npu.npu, init_process_group nccl -> hccl), so only the imports are edited.
    C("=import os", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "torch_npu must be imported in the entry script"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu",
      "automatic migration: patches torch.cuda.*, 'cuda' device strings and nccl->hccl for this script"),
])

E("fcos_sh", "scripts/train_fcos_R_50_FPN_1x.sh", "explicit_replacement",
  "FCOS 8-GPU training launcher (torch.distributed.launch, CUDA_VISIBLE_DEVICES, NCCL env)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_*) must be sourced before python imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; device selection silently lost"),
    C("export NGPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)", "env_var", "replace", True,
      "export NGPUS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "process count is derived from the visible-device list; must read the Ascend variable"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_DEBUG has no effect on HCCL; closest knob is the CANN log level (2 = warning)"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only setting, no effect on HCCL (silent no-op)"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee ${OUTPUT_DIR}/gpus.csv",
      "torch_cuda_api", "replace", False,
      "npu-smi info | tee ${OUTPUT_DIR}/npus.txt",
      "nvidia-smi is absent; the pipeline status is tee's so the script continues, only the log is lost"),
])

# ---------------------------------------------------------------- SOLO (mmdet 1.x based)

E("solo_test", "tools/test_ins.py", "explicit_replacement",
  "SOLO/SOLOv2 tools/test_ins.py (MMDataParallel, collect_results with device='cuda')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "entry script"),
    C("=device='cuda')", "tensor_to_device", "replace", True,
      "device='npu')", "tmpdir broadcast tensor must live on the HCCL device"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "tensor_to_device", "replace", True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "same"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "mmcv MMDataParallel scatters through CUDA streams and DataParallel is unsupported on NPU; mmcv>=1.7 "
      "ships mmcv.device.npu.NPUDataParallel (not confirmed in the knowledge base; pins would change)"),
    C("model = MMDistributedDataParallel(model.cuda())", "tensor_to_device", "replace", True,
      "model = NPUDistributedDataParallel(model.npu(), device_ids=[torch.npu.current_device()])",
      ".cuda() fails; mmcv's wrapper also scatters via CUDA streams (NPU wrapper unconfirmed, as above)"),
])

E("solo_focal", "mmdet/models/losses/focal_loss.py", "kernel_rewrite",
  "mmdetection 1.x / SOLO models/losses/focal_loss.py (sigmoid_focal_loss CUDA op vs py_sigmoid_focal_loss)", [
    C("from mmdet.ops import sigmoid_focal_loss as _sigmoid_focal_loss", "custom_cuda_extension", "removal", True, None,
      "sigmoid_focal_loss_cuda cannot be built without nvcc, so the import fails"),
    C("loss = _sigmoid_focal_loss(pred, target, gamma, alpha)", "custom_cuda_extension", "replace", True,
      "loss = py_sigmoid_focal_loss(pred, F.one_hot(target, num_classes=pred.size(1) + 1)[:, 1:], gamma=gamma, alpha=alpha, reduction='none')",
      "use the pure-torch focal loss; the CUDA op takes class indices (0 = background), the python one one-hot targets"),
])

E("solo_config", "configs/solov2/solov2_r101_dcn_fpn_8gpu_3x.py", "explicit_replacement",
  "SOLOv2 mmdet-1.x style python config (DCN backbone, dist_params)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl')",
      "passed verbatim to init_dist -> dist.init_process_group(backend='nccl'), unavailable on Ascend"),
])

# ---------------------------------------------------------------- mmdetection 1.x

E("mmdet_setup", "setup.py", "kernel_rewrite",
  "mmdetection 1.x setup.py (make_cuda_ext / CUDAExtension for every op, FORCE_CUDA)", [
    C("raise EnvironmentError('CUDA is required to compile MMDetection!')", "custom_cuda_extension", "removal", True, None,
      "install aborts on an NPU host (torch.cuda.is_available() is False)"),
    C("return CUDAExtension(", "custom_cuda_extension", "replace", True,
      "return CppExtension(",
      "CUDAExtension needs CUDA_HOME for include/library paths; the remaining CPU ops build as CppExtension"),
    C("name='nms_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources cannot be compiled; NMS goes to torch_npu.npu_nms_v4"),
    C("name='roi_align_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; RoIAlign goes to torch_npu.npu_roi_align"),
    C("name='roi_pool_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; RoIPool must be rewritten (not used by the SOLO/Mask R-CNN configs here)"),
    C("name='deform_conv_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; DCN goes to torch_npu.npu_deformable_conv2d"),
    C("name='deform_pool_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; deformable PS-RoI pooling has no NPU op"),
    C("name='sigmoid_focal_loss_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; focal loss uses the pure-torch version"),
    C("name='masked_conv2d_cuda',", "custom_cuda_extension", "removal", True, None,
      ".cu sources; masked conv must be rewritten with torch ops"),
])

E("mmdet_nms", "mmdet/ops/nms/nms_wrapper.py", "kernel_rewrite",
  "mmdetection 1.x ops/nms/nms_wrapper.py (nms_cpu / nms_cuda dispatch on is_cuda, soft_nms)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module calls torch_npu.npu_nms_v4"),
    C("from . import nms_cpu, nms_cuda", "custom_cuda_extension", "replace", True,
      "from . import nms_cpu", "nms_cuda extension cannot be built"),
    C("device = 'cpu' if device_id is None else 'cuda:{}'.format(device_id)", "device_type", "replace", True,
      "device = 'cpu' if device_id is None else 'npu:{}'.format(device_id)", "'cuda:N' fails on NPU"),
    C("if dets_th.is_cuda:", "device_type", "replace", True,
      "if dets_th.device.type == 'npu':",
      "NPU tensors would fall into nms_cpu, a C++ kernel reading device memory through host pointers"),
    C("inds = nms_cuda.nms(dets_th, iou_thr)", "custom_cuda_extension", "replace", True,
      "inds, num_valid = torch_npu.npu_nms_v4(dets_th[:, :4], dets_th[:, 4], dets_th.size(0), dets_th.new_tensor(iou_thr), dets_th.new_tensor(0.)); inds = inds[:num_valid]",
      "NPU NMS op; returns padded indices plus a valid count"),
])

E("mmdet_roi_align", "mmdet/ops/roi_align/roi_align.py", "kernel_rewrite",
  "mmdetection 1.x ops/roi_align/roi_align.py (roi_align_cuda forward/backward, use_torchvision switch)", [
    C("=import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module calls torch_npu.npu_roi_align / npu_roi_alignbk"),
    C("from . import roi_align_cuda", "custom_cuda_extension", "removal", True, None,
      "extension cannot be built without nvcc"),
    C("if features.is_cuda:", "device_type", "replace", True,
      "if features.device.type == 'npu':", "NPU tensors would hit `raise NotImplementedError`"),
    C("roi_align_cuda.forward(features, rois, out_h, out_w, spatial_scale,", "custom_cuda_extension", "replace", True,
      "output = torch_npu.npu_roi_align(features, rois, spatial_scale, out_h, out_w, sample_num, 0)",
      "mmdet 1.x kernel uses the legacy +1 box end; the matching roi_end_mode value is unconfirmed"),
    C("assert (feature_size is not None and grad_output.is_cuda)", "device_type", "replace", True,
      "assert (feature_size is not None and grad_output.device.type == 'npu')", "assert fails for NPU grads"),
    C("roi_align_cuda.backward(grad_output.contiguous(), rois, out_h,", "custom_cuda_extension", "replace", True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output.contiguous(), rois, list(feature_size), out_w, out_h, spatial_scale, sample_num)",
      "backward kernel"),
])

E("mmdet_dcn", "mmdet/ops/dcn/deform_conv.py", "kernel_rewrite",
  "mmdetection 1.x ops/dcn/deform_conv.py (DeformConv / ModulatedDeformConv autograd Functions on deform_conv_cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module calls torch_npu.npu_deformable_conv2d(bk)"),
    C("from . import deform_conv_cuda", "custom_cuda_extension", "removal", True, None,
      "extension cannot be built without nvcc"),
    C("=if not input.is_cuda:", "device_type", "replace", True,
      "if input.device.type != 'npu':", "NPU input would raise NotImplementedError"),
    C("deform_conv_cuda.deform_conv_forward_cuda(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, offset_all, None, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "DCNv1 via the NPU op with modulated=False; offset_all = offsets (reordered to the NPU x/y layout) + a ones mask"),
    C("=if not grad_output.is_cuda:", "device_type", "replace", True,
      "if grad_output.device.type != 'npu':", "same check in backward"),
    C("deform_conv_cuda.deform_conv_backward_input_cuda(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight_, grad_offset, _ = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, offset_all, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "one NPU backward op yields input, weight, offset (and mask/bias) grads"),
    C("deform_conv_cuda.deform_conv_backward_parameters_cuda(", "custom_cuda_extension", "replace", True,
      "grad_weight = grad_weight_", "weight grad already produced by npu_deformable_conv2dbk"),
    C("if not input.is_cuda:  # no CPU kernel for DCNv2", "device_type", "replace", True,
      "if input.device.type != 'npu':  # no CPU kernel for DCNv2", "NPU input would raise NotImplementedError"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], dim=1), bias if ctx.with_bias else None, kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 forward; offset channel order must be converted to the NPU layout (torch_npu.contrib ModulatedDeformConv does this)"),
    C("if not grad_output.is_cuda:  # see forward", "device_type", "replace", True,
      "if grad_output.device.type != 'npu':  # see forward", "same check in backward"),
    C("deform_conv_cuda.modulated_deform_conv_cuda_backward(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset_mask, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, torch.cat([offset, mask], dim=1), kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 backward; split grad_offset_mask back into offset and mask grads"),
])

E("mmdet_train_api", "mmdet/apis/train.py", "explicit_replacement",
  "mmdetection 1.x apis/train.py (_dist_train / _non_dist_train with MMDataParallel, Fp16OptimizerHook)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "silent no-op on an NPU host: NPU RNG stays unseeded (reproducibility only)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "mmcv's wrapper scatters inputs through CUDA streams; mmcv>=1.7 has mmcv.device.npu wrappers (unconfirmed here)"),
    C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails without CUDA"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device raises without CUDA"),
    C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "DataParallel is unsupported on NPU (single device only; use the distributed launcher for more); .cuda() fails"),
])

E("mmdet_env", "mmdet/apis/env.py", "explicit_replacement",
  "mmdetection 1.x apis/env.py (init_dist for pytorch/slurm launchers, set_random_seed)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher, backend='hccl', **kwargs):", "default backend used when a config has no dist_params"),
    C("num_gpus = torch.cuda.device_count()  # GPUs visible on this node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # NPUs visible on this node",
      "returns 0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "raises without CUDA"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "slurm path, same as above"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm path, raises without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", "silent no-op on NPU (reproducibility only)"),
])

E("mmdet_inference", "mmdet/apis/inference.py", "explicit_replacement",
  "mmdetection 1.x apis/inference.py (init_detector device='cuda:0', mmcv scatter to the model device)", [
    C("def init_detector(config, checkpoint=None, device='cuda:0'):", "device_type", "replace", True,
      "def init_detector(config, checkpoint=None, device='npu:0'):", "default device string fails on NPU"),
    C("data = scatter(collate([data], samples_per_gpu=1), [device])[0]", "tensor_to_device", "replace", True,
      "data = scatter(collate([data], samples_per_gpu=1), [-1])[0]; data['img'] = [im.to(device) for im in data['img']]",
      "mmcv 0.x scatter to a non-CPU target uses CUDA streams; unwrap on CPU (-1) then move images to the NPU"),
    C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", True,
      "data = scatter(data, [-1])[0]; data['img'] = [im.to(device) for im in data['img']]", "same for the async path"),
])

# ---------------------------------------------------------------- detectron2

E("d2_launch", "detectron2/engine/launch.py", "device_branch_or_abstraction",
  "detectron2 engine/launch.py (mp spawn workers, dist_url, NCCL/GLOO by has_gpu)", [
    C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'has_gpu = hasattr(torch, "npu") and torch.npu.is_available()',
      "False on NPU -> GLOO backend and no set_device: every rank silently lands on npu:0"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "would assert against 0 devices"),
    C('backend="NCCL" if has_gpu else "GLOO",', "dist_backend", "replace", True,
      'backend="hccl" if has_gpu else "GLOO",', "NCCL unavailable; HCCL for NPU tensors"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "raises without CUDA"),
])

E("d2_comm", "detectron2/utils/comm.py", "explicit_replacement",
  "detectron2 utils/comm.py (local process group, gloo side group for pickled all_gather)", [
    C("if dist.get_backend() == dist.Backend.NCCL:", "dist_backend", "replace", False,
      'if dist.get_backend() in (dist.Backend.NCCL, "hccl"):',
      "on HCCL the else-branch plain barrier() already works; widening only restores the device_ids hint"),
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "dist.barrier(device_ids=[torch.npu.current_device()])",
      "unreachable on NPU unless the branch above is widened; then it must use torch.npu"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison (mstt: must be edited by hand); otherwise pickled all_gather goes over the HCCL "
      "world group and _serialize_to_tensor's assert fails"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", True,
      'assert backend in ["gloo", "nccl", "hccl"]', "any all_gather on an HCCL group (e.g. local group) asserts"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", True,
      'device = torch.device("cpu" if backend == "gloo" else "npu")', "'cuda' device fails on NPU"),
])

E("d2_nms", "detectron2/layers/nms.py", "kernel_rewrite",
  "detectron2 layers/nms.py (torchvision batched_nms, torch.ops.detectron2.nms_rotated / box_iou_rotated)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module calls torch_npu.npu_nms_rotated / npu_rotated_iou"),
    C("from torchvision.ops import boxes as box_ops", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # noqa: F401  NPU kernels for torchvision.ops.nms",
      "without torchvision_npu, torchvision::nms has no NPU kernel and runs through torch_npu's CPU fallback "
      "(correct but slow)"),
    C("return torch.ops.detectron2.nms_rotated(boxes, scores, iou_threshold)", "custom_cuda_extension", "replace", True,
      "return torch_npu.npu_nms_rotated(boxes, scores, iou_threshold)[0]",
      "detectron2 registers this as a catch-all op that branches on is_cuda(): NPU tensors go to the CPU kernel "
      "with device pointers. NPU op's angle unit / valid-count handling still to be checked"),
    C("return torch.ops.detectron2.box_iou_rotated(boxes1, boxes2)", "custom_cuda_extension", "replace", True,
      "return torch_npu.npu_rotated_iou(boxes1.unsqueeze(0), boxes2.unsqueeze(0), trans=False, mode=0, is_cross=True)[0]",
      "same dispatch problem; NPU op is batched and its box layout/angle unit must be adapted (unconfirmed)"),
])

E("d2_roi_align_rot", "detectron2/layers/roi_align_rotated.py", "kernel_rewrite",
  "detectron2 layers/roi_align_rotated.py (torch.ops.detectron2.roi_align_rotated_forward/backward)", [
    C("output = torch.ops.detectron2.roi_align_rotated_forward(", "unsupported_op_workaround", "replace", True,
      "output = torch.ops.detectron2.roi_align_rotated_forward(input.cpu(), roi.cpu(), spatial_scale, output_size[0], output_size[1], sampling_ratio).to(input.device)",
      "no rotated RoIAlign in torch_npu's op list; the catch-all op would run its CPU kernel on NPU pointers, "
      "so round-trip through the CPU kernel explicitly (slow) until an Ascend C kernel exists"),
    C("grad_input = torch.ops.detectron2.roi_align_rotated_backward(", "unsupported_op_workaround", "replace", True,
      "grad_input = torch.ops.detectron2.roi_align_rotated_backward(grad_output.cpu(), rois.cpu(), spatial_scale, output_size[0], output_size[1], bs, ch, h, w, sampling_ratio).to(grad_output.device)",
      "same for backward"),
])

E("d2_train_loop", "detectron2/engine/train_loop.py", "explicit_replacement",
  "detectron2 engine/train_loop.py (SimpleTrainer, AMPTrainer with torch.cuda.amp)", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself when CUDA is unavailable: fp16 training without loss scaling"),
    C('assert torch.cuda.is_available(), "[AMPTrainer] CUDA is required for AMP training!"', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "[AMPTrainer] NPU is required for AMP training!"', "assert fails on NPU"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast",
      "CUDA autocast does not cover NPU ops: the model silently runs in fp32"),
])

E("d2_collect_env", "detectron2/utils/collect_env.py", "device_branch_or_abstraction",
  "detectron2 utils/collect_env.py (GPU/arch/nvcc report, NCCL connectivity self-test)", [
    C("has_gpu = torch.cuda.is_available()  # true for both CUDA & ROCM", "torch_cuda_api", "add_branch", False,
      'has_npu = hasattr(torch, "npu") and torch.npu.is_available()',
      "report runs fine on NPU (says 'GPU available: No'); adding NPU device info is diagnostic only"),
    C('dist.init_process_group(backend="NCCL", init_method=dist_url, rank=rank, world_size=num_gpu)',
      "dist_backend", "replace", False,
      'dist.init_process_group(backend="hccl", init_method=dist_url, rank=rank, world_size=num_gpu)',
      "self-test only reached from the CUDA-only __main__ branch; port it together with that branch"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'if hasattr(torch, "npu") and torch.npu.is_available():',
      "__main__ self-check never exercises NPUs; diagnostic only"),
])

E("d2_env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml of a detectron2-based project (cudatoolkit, cu113 detectron2 wheel index)", [
    C("=- nvidia", "device_type", "removal", False, None, "CUDA channel, unused once cudatoolkit is gone"),
    C("=- cudatoolkit=11.3", "device_type", "removal", True, None,
      "CUDA runtime package; useless on Ascend and not solvable for aarch64 Ascend hosts"),
    C("=- pytorch=1.10.1", "device_type", "removal", True, None,
      "no torch_npu exists for torch 1.10; torch comes from pip paired with torch-npu"),
    C("=- torchvision=0.11.2", "device_type", "removal", True, None,
      "must match the new torch (torchvision 0.16.0 via pip)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post17",
      "torch-npu pin (with torch==2.1.0, torchvision==0.16.0 next to it)"),
    C("- -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.10/index.html", "device_type", "removal", True, None,
      "CUDA 11.3 / torch 1.10 prebuilt wheel index"),
    C("=- detectron2==0.6", "custom_cuda_extension", "replace", True,
      "- git+https://github.com/facebookresearch/detectron2.git@v0.6",
      "not on PyPI without the cu113 index; building from source produces a CPU-only _C on the NPU host"),
    C("=- pynvml", "torch_cuda_api", "removal", False, None,
      "NVML bindings; import works but nvmlInit fails if called, no NPU equivalent"),
])

# ---------------------------------------------------------------- CenterNet

E("cn_make", "src/lib/models/networks/DCNv2/make.sh", "kernel_rewrite",
  "CenterNet DCNv2 make.sh (nvcc-compiled im2col / psroi pooling, setup.py build develop)", [
    C("nvcc -c -o dcn_v2_im2col.cu.o dcn_v2_im2col.cu -x cu -Xcompiler -fPIC", "custom_cuda_extension", "removal", True, None,
      "no nvcc on Ascend (set -e aborts the script); DCN is replaced by torch_npu ops"),
    C("nvcc -c -o dcn_v2_psroi_pooling_cuda.cu.o dcn_v2_psroi_pooling_cuda.cu -x cu -Xcompiler -fPIC",
      "custom_cuda_extension", "removal", True, None, "same"),
    C("=python setup.py build develop", "custom_cuda_extension", "removal", True, None,
      "DCNv2's setup.py only builds a CUDAExtension (raises without CUDA); the _ext module is no longer needed"),
    C('export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-"6.0;6.1;7.0;7.5"}', "env_var", "removal", False, None,
      "CUDA arch list, meaningless on Ascend"),
])

E("cn_dcn", "src/lib/models/networks/DCNv2/dcn_v2.py", "kernel_rewrite",
  "CenterNet DCNv2 dcn_v2.py (_ext backend: dcn_v2_forward/backward, DCNv2Pooling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU,
      "module calls torch_npu.npu_deformable_conv2d(bk)"),
    C("import _ext as _backend", "custom_cuda_extension", "removal", True, None,
      "compiled CUDA extension cannot be built; import error takes down every DLA/ResNet-DCN model"),
    C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], dim=1), bias, kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "NPU modulated deformable conv; offset x/y order differs (torch_npu.contrib.module DCNv2 wraps the reordering)"),
    C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", "replace", True,
      "torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, torch.cat([offset, mask], dim=1), kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "backward; split the fused offset/mask grad afterwards"),
    C("_backend.dcn_v2_psroi_pooling_forward(input, rois, offset,", "unsupported_op_workaround", "replace", False,
      'raise NotImplementedError("DCNv2Pooling has no NPU kernel")',
      "deformable PS-RoI pooling has no torch_npu op, but CenterNet never instantiates DCNPooling; "
      "only a clearer error"),
])

E("cn_main", "src/main.py", "explicit_replacement",
  "CenterNet src/main.py (CUDA_VISIBLE_DEVICES from --gpus, torch.device, DataLoader pin_memory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, "entry script"),
    C("optimizer = torch.optim.Adam(model.parameters(), opt.lr)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), opt.lr)",
      "performance only; the model is moved to the NPU later in set_device, check the fused optimizer "
      "tolerates that before relying on it"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus_str", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpus_str",
      "opt.gpus is renumbered to 0..n-1 after this; on NPU the mask is ignored and the wrong devices are used"),
    C("opt.device = torch.device('cuda' if opt.gpus[0] >= 0 else 'cpu')", "device_type", "replace", True,
      "opt.device = torch.device('npu' if opt.gpus[0] >= 0 else 'cpu')", "'cuda' device fails on NPU"),
    C("=pin_memory=True", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu'",
      "torch 2.1 DataLoader only pins when torch.cuda.is_available(); otherwise pinning is silently dropped "
      "(performance only, unconfirmed for torch_npu)"),
    C("=pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',", "same for the train loader"),
])

E("cn_trainer", "src/lib/trains/base_trainer.py", "explicit_replacement",
  "CenterNet trains/base_trainer.py (custom chunked DataParallel, optimizer state to device)", [
    C("self.model_with_loss = DataParallel(", "distributed_framework", "replace", True,
      "self.model_with_loss = self.model_with_loss.to(device)  # DataParallel unsupported on NPU; use DDP for >1 NPU",
      "CenterNet's DataParallel (scatter with chunk_sizes) builds on torch DataParallel, unsupported on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "silent no-op on NPU host"),
])

E("cn_detector", "src/lib/detectors/base_detector.py", "explicit_replacement",
  "CenterNet detectors/base_detector.py (torch.device('cuda'), torch.cuda.synchronize timing)", [
    C("opt.device = torch.device('cuda')", "device_type", "replace", True,
      "opt.device = torch.device('npu')", "'cuda' device fails on NPU"),
    C("torch.cuda.synchronize()  # wait for H2D copy", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for H2D copy", "raises without CUDA; also needed for correct NPU timing"),
    C("torch.cuda.synchronize()  # wait for forward", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for forward", "same"),
    C("torch.cuda.synchronize()  # wait for post-process", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for post-process", "same"),
    C("torch.cuda.synchronize()  # wait for merge", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for merge", "same"),
])
