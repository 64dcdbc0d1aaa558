# Labels for probe292: real-time / single-stage instance segmentation (YOLACT/YOLACT++, SOLO/SOLOv2,
# CondInst/BlendMask on AdelaiDet + detectron2, SparseInst) moving from CUDA to Ascend NPU (torch_npu).
# One label per upstream line a careful porter would edit. See ../README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: registers the npu device / torch.npu namespace before anything touches a device "
               "(needed for torch < 2.5.1 where torch_npu is not autoloaded; harmless afterwards)")

# ----------------------------------------------------------------------------------------------
# YOLACT / YOLACT++ (dbolya/yolact style)
# ----------------------------------------------------------------------------------------------

E("yolact_train", "train.py", "explicit_replacement",
  "YOLACT train.py (default CUDA tensor type, CustomDataParallel, per-GPU batch split)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() == 0:",
      "torch.cuda.device_count() is 0 on an NPU host, so the script prints 'No GPUs detected' and exits"),
    C("if args.batch_size // torch.cuda.device_count() < 6:", "torch_cuda_api", "replace", True,
      "if args.batch_size // torch.npu.device_count() < 6:",
      "division by torch.cuda.device_count() == 0 raises ZeroDivisionError on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on an NPU host, so the NPU default-device setup below is silently skipped"),
    C("=torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device('npu')",
      "YOLACT relies on the default CUDA tensor type for implicit allocations; torch.set_default_tensor_type "
      "does not accept torch.npu.*Tensor types (Ascend 2.7.1 API table), set_default_device is the NPU form"),
    C("devices = ['cuda:' + str(x) for x in device_ids]", "device_type", "replace", False,
      "devices = ['npu:' + str(x) for x in device_ids]",
      "only reached through CustomDataParallel.scatter, which is no longer constructed once DataParallel is "
      "dropped (see below); edit for consistency if the class is kept"),
    C("net = CustomDataParallel(NetLoss(net, criterion))", "distributed_framework", "replace", True,
      "net = NetLoss(net, criterion)",
      "torch.nn.DataParallel is unsupported on Ascend (API table / msFmkTransplt list); run single-device "
      "(or DDP over hccl) instead"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()",
      "Module.cuda() fails on a host without CUDA"),
    C("yolact_net(torch.zeros(1, 3, cfg.max_size, cfg.max_size).cuda())", "tensor_to_device", "replace", True,
      "yolact_net(torch.zeros(1, 3, cfg.max_size, cfg.max_size).npu())",
      "warm-up forward on a CUDA tensor fails on an NPU host"),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu')",
      "performance only: pinned host buffers for async H2D copies to the NPU; unconfirmed that the default "
      "pinning targets the NPU without the explicit device"),
    C("losses = net(datum)", "distributed_framework", "replace", True,
      "losses = net(*[split[0] for split in prepare_data(datum)])",
      "without CustomDataParallel nobody scatters the raw datum any more, so the batch must be moved and "
      "split by prepare_data before calling NetLoss"),
    C("devices = ['cuda:0'] if args.cuda else ['cpu']", "device_type", "replace", True,
      "devices = ['npu:0'] if args.cuda else ['cpu']",
      "hard-coded 'cuda:0' target for every image/target/mask copy"),
  ])

E("yolact_eval", "eval.py", "explicit_replacement",
  "YOLACT eval.py (prep_display GPU mask drawing, --benchmark, video path, args.cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("img_gpu = torch.Tensor(img_numpy).cuda()", "tensor_to_device", "replace", True,
      "img_gpu = torch.Tensor(img_numpy).npu()", "explicit .cuda() on the display image"),
    C("color = torch.Tensor(color).to(on_gpu).float() / 255.", "tensor_to_device", "replace", True,
      "color = torch.Tensor(color).to(f'npu:{on_gpu}').float() / 255.",
      "on_gpu is a bare device ordinal (img_gpu.device.index); a bare int passed to Tensor.to means a CUDA "
      "device, which is why transfer_to_npu rewrites positional ints of Tensor.to to 'npu:{i}'"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
    C("frame = torch.from_numpy(cv2.imread(path)).cuda().float()", "tensor_to_device", "replace", True,
      "frame = torch.from_numpy(cv2.imread(path)).npu().float()", "explicit .cuda() on the input image"),
    C("net = CustomDataParallel(net).cuda()", "distributed_framework", "replace", True,
      "net = net.npu()",
      "DataParallel is unsupported on Ascend; a single NPU already returns the list of detections"),
    C("transform = torch.nn.DataParallel(FastBaseTransform()).cuda()", "distributed_framework", "replace", True,
      "transform = FastBaseTransform().npu()", "DataParallel is unsupported on Ascend"),
    C("frames = [torch.from_numpy(frame).cuda().float() for frame in frames]", "tensor_to_device", "replace", True,
      "frames = [torch.from_numpy(frame).npu().float() for frame in frames]", "explicit .cuda() per video frame"),
    C("gt_boxes = torch.Tensor(gt[:, :4])", "tensor_to_device", "replace", True,
      "gt_boxes = torch.Tensor(gt[:, :4]).npu()",
      "relied on the CUDA default tensor type; after switching to set_default_device('npu') the legacy "
      "torch.Tensor constructor still builds a CPU tensor and jaccard() against NPU boxes fails "
      "(set_default_device coverage of the legacy constructor is not in the knowledge base)"),
    C("gt_masks = torch.Tensor(gt_masks).view(-1, h*w)", "tensor_to_device", "replace", True,
      "gt_masks = torch.Tensor(gt_masks).view(-1, h*w).npu()",
      "same implicit-CUDA legacy constructor as gt_boxes; mask_iou() against NPU masks fails"),
    C("masks = masks.view(-1, h*w).cuda()", "tensor_to_device", "replace", True,
      "masks = masks.view(-1, h*w).npu()", "explicit .cuda()"),
    C("=boxes = boxes.cuda()", "tensor_to_device", "replace", True, "boxes = boxes.npu()", "explicit .cuda()"),
    C("batch = batch.cuda()", "tensor_to_device", "replace", True, "batch = batch.npu()",
      "explicit .cuda() on the evaluation batch"),
    C("=torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device('npu')",
      "set_default_tensor_type does not accept NPU tensor types; YOLACT needs an NPU default for implicit "
      "allocations (torch.zeros/ones inside the model)"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "explicit Module.cuda()"),
  ])

E("yolact_model", "yolact.py", "explicit_replacement",
  "YOLACT yolact.py (Windows CUDA-init workaround, JIT-vs-DataParallel switch, prior cache, weight loading)", [
    C("=torch.cuda.current_device()", "torch_cuda_api", "removal", True, None,
      "module-level CUDA initialisation (a PyTorch 1.0.1 Windows workaround) raises on import on an NPU host"),
    C("use_jit = torch.cuda.device_count() <= 1", "torch_cuda_api", "replace", False,
      "use_jit = torch.npu.device_count() <= 1",
      "counts 0 CUDA devices on an NPU host and so always enables JIT; harmless once DataParallel is gone, "
      "but no longer measures what it says"),
    C("self.priors = torch.Tensor(prior_data, device=device).view(-1, 4).detach()", "tensor_to_device", "replace",
      True, "self.priors = torch.tensor(prior_data, dtype=torch.float32, device=device).view(-1, 4).detach()",
      "the legacy torch.Tensor(..., device=...) constructor only accepts the default tensor type's device "
      "(CUDA under the old default); with the CPU default type an npu device is rejected"),
    C("self.grid = torch.Tensor(np.load(cfg.mask_proto_grid_file))", "tensor_to_device", "replace", False,
      "self.grid = torch.from_numpy(np.load(cfg.mask_proto_grid_file)).float().npu()",
      "implicit CUDA allocation via the default tensor type; only reached with cfg.mask_proto_use_grid, which "
      "is off in every shipped config"),
    C("state_dict = torch.load(path)", "device_type", "replace", True,
      "state_dict = torch.load(path, map_location='cpu')",
      "released YOLACT weights are saved from a CUDA model (torch.save(self.state_dict())), so unpickling "
      "without map_location fails on a host without CUDA"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()",
      "explicit Module.cuda() in the self-test block"),
    C("=torch.set_default_tensor_type('torch.cuda.FloatTensor')", "torch_cuda_api", "replace", True,
      "torch.set_default_device('npu')", "CUDA default tensor type in the self-test block"),
  ])

E("yolact_backbone", "backbone.py", "explicit_replacement",
  "YOLACT backbone.py (ResNet backbone with optional DCNv2 blocks)", [
    C("state_dict = torch.load(path)", "device_type", "replace", False,
      "state_dict = torch.load(path, map_location='cpu')",
      "unconfirmed whether the distributed ImageNet backbone .pth files hold CUDA tensors; map_location='cpu' "
      "is the safe edit"),
  ])

E("yolact_detect", "layers/functions/detection.py", "explicit_replacement",
  "YOLACT layers/functions/detection.py (Fast NMS / cross-class NMS / cython NMS)", [
    C("boxes, masks, classes, scores = self.fast_nms(boxes, masks, scores, self.nms_thresh, self.top_k)",
      "npu_fused_op", "replace", False,
      "boxes, masks, classes, scores = self.npu_fast_nms(boxes, masks, scores, self.nms_thresh, self.top_k)  # torch_npu.contrib.function.npu_batched_multiclass_nms",
      "performance only: msFmkTransplt's affinity list maps fast_nms to npu_batched_multiclass_nms; "
      "unconfirmed that it returns the keep indices needed to gather the mask coefficients"),
    C("keep = torch.Tensor(keep, device=boxes.device).long()", "tensor_to_device", "replace", True,
      "keep = torch.as_tensor(keep, dtype=torch.long, device=boxes.device)",
      "legacy constructor with an npu device is rejected once the default tensor type is no longer CUDA "
      "(reached with --fast_nms=False)"),
  ])

E("yolact_multibox", "layers/modules/multibox_loss.py", "explicit_replacement",
  "YOLACT layers/modules/multibox_loss.py (OHEM, lincomb mask loss, optional focal/class-existence losses)", [
    C("class_existence_t[idx, :] = torch.eye(num_classes-1, device=conf_t.get_device())", "device_type", "replace",
      False,
      "class_existence_t[idx, :] = torch.eye(num_classes-1, device=conf_t.device)[labels[idx]].max(dim=0)[0]",
      "get_device() returns a bare ordinal, which as a device= kwarg means CUDA (transfer_to_npu rewrites int "
      "device kwargs to 'npu:{i}'); only reached with use_class_existence_loss, off in shipped configs"),
    C("conf_one_t = torch.eye(num_classes, device=conf_t.get_device())[conf_t]", "device_type", "replace", False,
      "conf_one_t = torch.eye(num_classes, device=conf_t.device)[conf_t]",
      "same bare-ordinal device; only reached with use_sigmoid_focal_loss, off in shipped YOLACT configs"),
  ])

E("yolact_augment", "utils/augmentations.py", "explicit_replacement",
  "YOLACT utils/augmentations.py (FastBaseTransform normalising on the GPU)", [
    C("self.mean = torch.Tensor(MEANS).float().cuda()[None, :, None, None]", "tensor_to_device", "replace", True,
      "self.mean = torch.Tensor(MEANS).float().npu()[None, :, None, None]",
      "explicit .cuda() in the constructor runs before forward() moves it to img.device"),
    C("self.std  = torch.Tensor( STD ).float().cuda()[None, :, None, None]", "tensor_to_device", "replace", True,
      "self.std  = torch.Tensor( STD ).float().npu()[None, :, None, None]", "explicit .cuda() in the constructor"),
  ])

E("yolact_timer", "utils/timer.py", "device_branch_or_abstraction",
  "YOLACT utils/timer.py with a device-sync helper for per-stage timings", [
    C("if _sync_device and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if _sync_device and torch.npu.is_available():",
      "on an NPU host the guard is False so stage timings silently measure only op enqueueing; profiling "
      "accuracy only (eval's explicit 'Sync' stage keeps the total right)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "unreachable while the guard above is unchanged, but must change together with it"),
  ])

E("yolact_dcnv2", "external/DCNv2/dcn_v2.py", "kernel_rewrite",
  "DCNv2 (CharlesShang/DCNv2) Python wrapper vendored by YOLACT++ under external/DCNv2", [
    C("import _ext as _backend", "custom_cuda_extension", "replace", True, "import torch_npu",
      "_ext is the nvcc-built extension; it cannot be built on an Ascend host (setup.py raises without CUDA), "
      "so the module fails to import; the NPU kernels come from torch_npu"),
    C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", "replace", True,
      "output, offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat((offset, mask), 1), bias, kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "CUDA kernel call replaced by the torch_npu modulated deformable conv; the offset/mask channel layout "
      "expected by the NPU op is not documented in the knowledge base (unconfirmed reordering)"),
    C("ctx.save_for_backward(input, offset, mask, weight, bias)", "custom_cuda_extension", "replace", True,
      "ctx.save_for_backward(input, offset, mask, weight, bias, offset_out)",
      "npu_deformable_conv2dbk needs the offset_out produced by the forward op"),
    C("input, offset, mask, weight, bias = ctx.saved_tensors", "custom_cuda_extension", "replace", True,
      "input, offset, mask, weight, bias, offset_out = ctx.saved_tensors",
      "matches the extra saved tensor"),
    C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", "replace", True,
      "torch_npu.npu_deformable_conv2dbk(input, grad_output, offset_out, weight, torch.cat((offset, mask), 1), kernel_size=list(ctx.kernel_size), stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], deformable_groups=ctx.deformable_groups, modulated=True)",
      "CUDA backward kernel replaced by the NPU backward op (returns grad_input, grad_weight, grad_offset_all, "
      "grad_bias, so the unpacking/split into offset and mask grads changes with it)"),
    C("_backend.dcn_v2_psroi_pooling_forward(input, rois, offset,", "custom_cuda_extension", "replace", False,
      "torch_npu.npu_ps_roi_pooling(input, rois, ctx.spatial_scale, ctx.group_size, ctx.output_dim)",
      "deformable PS-RoI pooling is not used by YOLACT++; npu_ps_roi_pooling is the non-deformable op, so "
      "only the no_trans case maps (unconfirmed)"),
    C("_backend.dcn_v2_psroi_pooling_backward(grad_output,", "custom_cuda_extension", "replace", False,
      "torch_npu.npu_ps_roi_pooling_backward(grad_output, rois, ctx.spatial_scale, ctx.group_size, ctx.output_dim, input.shape[-2:])",
      "unused by YOLACT++; same caveat as the pooling forward"),
  ])

E("yolact_dcn_make", "external/DCNv2/make.sh", "kernel_rewrite",
  "DCNv2 make.sh build script (YOLACT++ install step)", [
    C("python setup.py build develop", "custom_cuda_extension", "removal", True, None,
      "the DCNv2 setup.py builds a CUDAExtension and raises without CUDA; after the rewrite of dcn_v2.py "
      "there is nothing to compile"),
  ])

E("yolact_env", "environment.yml", "explicit_replacement",
  "YOLACT environment.yml (conda env with cudatoolkit / pytorch::cuda100)", [
    C("- pytorch::pytorch >=1.0.1", "import_torch_npu", "replace", True,
      "  - pytorch::pytorch==2.1.0  # CPU build; the device backend comes from torch-npu",
      "torch_npu requires the exact matching torch version (wheel x.y.z[.postN] pairs with torch x.y.z)"),
    C("=- cudatoolkit", "import_torch_npu", "removal", False, None,
      "CUDA runtime is unused on Ascend (CANN provides the runtime); may not even resolve on aarch64 hosts "
      "(unconfirmed)"),
    C("=- cudnn", "import_torch_npu", "removal", False, None, "cuDNN is unused on Ascend"),
    C("- pytorch::cuda100", "import_torch_npu", "removal", True, None,
      "pins a CUDA 10.0 PyTorch build, which conflicts with the torch version torch_npu requires"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "the Ascend device backend itself, pinned to the torch version above"),
  ])

# ----------------------------------------------------------------------------------------------
# SOLO / SOLOv2 (WXinlong/SOLO on mmdetection 1.x / mmcv 0.2.x)
# ----------------------------------------------------------------------------------------------

E("solo_train_tool", "tools/train.py", "explicit_replacement",
  "SOLO tools/train.py (mmdet 1.x entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=args = parse_args()", "compile_mode", "npu_only_addition", False,
      "    torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only: SOLO's target assignment and mask kernels have per-image dynamic shapes; "
      "msFmkTransplt advises jit_compile=False for dynamic shapes"),
  ])

E("solo_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "SOLO mmdet/apis/train.py (MMDataParallel / MMDistributedDataParallel runners)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      False, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "the import itself works; it changes with the wrappers below (NPU wrappers ship with newer mmcv, not in "
      "the knowledge base)"),
    C("model = MMDistributedDataParallel(model.cuda())", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(model.npu(), device_ids=[torch.npu.current_device()], broadcast_buffers=False)",
      "model.cuda() fails on an NPU host and mmcv 0.2.x scatters DataContainers with CUDA streams"),
    C("model = MMDataParallel(model, device_ids=range(cfg.gpus)).cuda()", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "DataParallel-style multi-device wrapper and .cuda(); DataParallel is unsupported on Ascend, so "
      "non-distributed training is single-NPU"),
  ])

E("solo_apis_env", "mmdet/apis/env.py", "explicit_replacement",
  "mmdet 1.x mmdet/apis/env.py (init_dist for pytorch/slurm launchers, set_random_seed)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", False,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "default only; every shipped config passes dist_params=dict(backend=...) explicitly"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "CUDA device selection fails on an NPU host"),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()", "same as the pytorch launcher, slurm path"),
    C("torch.cuda.set_device(proc_id % gpus_per_node)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % gpus_per_node)", "same as the pytorch launcher, slurm path"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "a lazily queued no-op without CUDA; torch.manual_seed above already seeds the NPU generator in current "
      "torch (unconfirmed for old versions)"),
  ])

E("solo_inference", "mmdet/apis/inference.py", "explicit_replacement",
  "SOLO mmdet/apis/inference.py (init_detector / inference_detector / show_result_ins)", [
    C("def init_detector(config, checkpoint=None, device='cuda:0'):", "device_type", "replace", False,
      "def init_detector(config, checkpoint=None, device='npu:0'):",
      "default only; the shipped demos pass device= explicitly"),
    C("checkpoint = load_checkpoint(model, checkpoint)", "device_type", "replace", False,
      "checkpoint = load_checkpoint(model, checkpoint, map_location='cpu')",
      "published SOLO weights are saved through mmcv's weights_to_cpu, so they load; work_dir checkpoints "
      "that still carry CUDA optimizer state would not"),
    C("data = scatter(collate([data], samples_per_gpu=1), [device])[0]", "tensor_to_device", "replace", True,
      "data = collate([data], samples_per_gpu=1); data = {k: (v.data[0] if hasattr(v, 'data') else v) for k, v in data.items()}; data['img'] = [img.to(device) for img in data['img']]",
      "mmcv.parallel.scatter moves tensors with .cuda() on CUDA streams and fails for an npu device"),
  ])

E("solo_demo", "demo/inference_demo.py", "explicit_replacement",
  "SOLO demo/inference_demo.py", [
    C("=import mmcv", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point without an explicit torch import: torch_npu must be loaded before init_detector moves the "
      "model (torch < 2.5.1)"),
    C("model = init_detector(args.config, args.checkpoint, device='cuda:0')", "device_type", "replace", True,
      "model = init_detector(args.config, args.checkpoint, device='npu:0')", "hard-coded CUDA device"),
  ])

E("solo_setup", "setup.py", "kernel_rewrite",
  "mmdetection 1.x setup.py as shipped with SOLO (make_cuda_ext for every op)", [
    C("raise EnvironmentError('CUDA is required to compile MMDetection!')", "custom_cuda_extension", "replace",
      True,
      "return torch.utils.cpp_extension.CppExtension(name='{}.{}'.format(module, name), sources=[os.path.join(*module.split('.'), p) for p in sources])",
      "the install aborts on a host without CUDA; the CPU-only ops (compiling_info, nms_cpu) still build as "
      "plain C++ extensions"),
    C("name='nms_cuda',", "custom_cuda_extension", "removal", True, None,
      "nvcc-only op (.cu source) cannot be built on an Ascend host; SOLOv2 uses matrix NMS in Python"),
    C("name='roi_align_cuda',", "custom_cuda_extension", "removal", True, None,
      "nvcc-only op; not used by SOLO (torch_npu.npu_roi_align exists if a model needs it)"),
    C("name='roi_pool_cuda',", "custom_cuda_extension", "removal", True, None, "nvcc-only op, unused by SOLO"),
    C("name='deform_conv_cuda',", "custom_cuda_extension", "removal", True, None,
      "nvcc-only op; DCN towers need torch_npu's deformable conv instead"),
    C("name='deform_pool_cuda',", "custom_cuda_extension", "removal", True, None, "nvcc-only op, unused by SOLO"),
    C("name='sigmoid_focal_loss_cuda',", "custom_cuda_extension", "removal", True, None,
      "nvcc-only op; the focal loss falls back to the PyTorch implementation (see focal_loss.py)"),
    C("name='masked_conv2d_cuda',", "custom_cuda_extension", "removal", True, None, "nvcc-only op, unused by SOLO"),
  ])

E("solo_focal", "mmdet/models/losses/focal_loss.py", "kernel_rewrite",
  "mmdet 1.x focal_loss.py with a pred.is_cuda switch between the CUDA op and the PyTorch version", [
    C("from mmdet.ops import sigmoid_focal_loss as _sigmoid_focal_loss", "custom_cuda_extension", "replace", True,
      "_sigmoid_focal_loss = None  # CUDA-only op; the PyTorch path below runs on the NPU",
      "the import pulls in sigmoid_focal_loss_cuda, which is not built on an Ascend host"),
  ])

E("solo_head", "mmdet/models/anchor_heads/solov2_head.py", "explicit_replacement",
  "SOLOv2 SOLOv2Head (dynamic kernels, matrix NMS, target assignment)", [
    C("from mmdet.ops import DeformConv, roi_align", "custom_cuda_extension", "removal", True, None,
      "imports the nvcc-built deform_conv/roi_align extensions (not built on Ascend) and neither name is used "
      "in this head"),
  ])

E("solo_config", "configs/solov2/solov2_r50_fpn_8gpu_3x.py", "explicit_replacement",
  "SOLOv2 R50 3x mmdet config", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("solo_dist_sh", "tools/dist_train.sh", "explicit_replacement",
  "mmdet tools/dist_train.sh launcher", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu needs the CANN environment (libascendcl/libhccl paths) in every launched process unless the "
      "login shell already sources it"),
  ])

E("solo_requirements", "requirements/runtime.txt", "explicit_replacement",
  "mmdet 1.x requirements/runtime.txt as pinned by SOLO", [
    C("=torch>=1.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "an open lower bound lets pip pick a torch that no torch-npu wheel pairs with"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the Ascend device backend"),
  ])

# ----------------------------------------------------------------------------------------------
# AdelaiDet (CondInst / BlendMask) and the detectron2 launcher it relies on
# ----------------------------------------------------------------------------------------------

E("adet_train_net", "tools/train_net.py", "explicit_replacement",
  "AdelaiDet tools/train_net.py (detectron2 DefaultTrainer, --num-gpus, custom hooks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on an NPU host"),
    C("max_mem_mb = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "max_mem_mb = torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
      "returns 0 without CUDA (no error), so only the logged metric is wrong"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, "    cfg.MODEL.DEVICE = \"npu\"",
      "detectron2's MODEL.DEVICE defaults to 'cuda', so build_model moves the model to CUDA"),
    C("=cfg = setup(args)", "compile_mode", "npu_only_addition", False,
      "    torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only: CondInst's dynamic mask head (grouped conv over a varying instance count) has "
      "dynamic shapes"),
  ])

E("d2_launch", "detectron2/engine/launch.py", "explicit_replacement",
  "detectron2 engine/launch.py (mp.spawn workers, NCCL process group) as used by AdelaiDet/SparseInst", [
    C("assert torch.cuda.is_available(), \"cuda is not available. Please check your installation.\"",
      "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), \"npu is not available. Please check your installation.\"",
      "assertion fails on every multi-device run on an NPU host"),
    C("backend=\"NCCL\",", "dist_backend", "replace", True, "backend=\"hccl\",",
      "NCCL is not available on Ascend"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "device_count() is 0 without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA device selection fails on an NPU host"),
  ])

E("adet_setup", "setup.py", "kernel_rewrite",
  "AdelaiDet setup.py (adet._C with CUDA sources under adet/layers/csrc)", [
    C("if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv(\"FORCE_CUDA\", \"0\") == \"1\":",
      "custom_cuda_extension", "add_branch", False,
      "elif os.getenv(\"ADET_WITH_NPU\", \"0\") == \"1\":  # NpuExtension with Ascend C kernels for BezierAlign/DefROIAlign",
      "on an NPU host this already falls back to a CPU-only build; the CUDA kernels (BezierAlign, DefROIAlign) "
      "are only used by the text-spotting models, not CondInst/BlendMask"),
  ])

E("adet_deform_conv", "adet/layers/deform_conv.py", "kernel_rewrite",
  "AdelaiDet adet/layers/deform_conv.py (DFConv2d over detectron2's deformable convs)", [
    C("from detectron2.layers.deform_conv import ModulatedDeformConv", "custom_cuda_extension", "replace", True,
      "from torch_npu.contrib.module import ModulatedDeformConv",
      "detectron2's modulated deformable conv only has a CUDA kernel (_C built with nvcc); torch_npu ships a "
      "ModulatedDeformConv contrib module (argument compatibility unconfirmed)"),
    C("from detectron2.layers.deform_conv import DeformConv", "custom_cuda_extension", "replace", False,
      "from torchvision.ops import DeformConv2d as DeformConv",
      "unconfirmed: detectron2 routes non-CUDA inputs with deformable_groups == 1 to torchvision's "
      "deform_conv2d, which torchvision_npu provides; needed only for the non-modulated variant"),
  ])

E("condinst_mask_head", "adet/modeling/condinst/dynamic_mask_head.py", "device_branch_or_abstraction",
  "CondInst dynamic mask head (device-agnostic; deliberately unlabelled)", [])

E("adet_scripts", "scripts/train_condinst_2node.sh", "explicit_replacement",
  "two-node CondInst/BlendMask launcher script with NCCL tuning", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu/HCCL need the CANN environment in the launched processes"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but it selects all eight devices, which is already the default on an 8-NPU node"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "ignored by HCCL; only affects log verbosity"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks the host NIC by its own priority; needed only if that choice cannot reach the root node"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL counterpart (RoCE is configured on the NPU NICs with hccn_tool)"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None, "no HCCL counterpart"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check",
      "replace", True, "npu-smi info > ${OUTPUT_DIR}/npus.txt",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script before training starts"),
  ])

# ----------------------------------------------------------------------------------------------
# SparseInst (hustvl/SparseInst on detectron2)
# ----------------------------------------------------------------------------------------------

E("sparseinst_train", "tools/train_net.py", "explicit_replacement",
  "SparseInst train_net.py with a clipping-aware AMP trainer", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("grad_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "grad_scaler = torch_npu.npu.amp.GradScaler()",
      "a CUDA GradScaler disables itself without CUDA, so fp16 training silently runs without loss scaling"),
    C("assert torch.cuda.is_available(), \"[ClipAMPTrainer] CUDA is required for AMP training!\"",
      "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), \"[ClipAMPTrainer] NPU is required for AMP training!\"",
      "assertion fails on every AMP step on an NPU host"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch_npu.npu.amp.autocast():",
      "CUDA autocast is disabled (with a warning) without CUDA, so SOLVER.AMP silently trains in fp32"),
    C("optimizer = maybe_add_full_model_gradient_clipping(torch.optim.AdamW)(", "fused_optimizer", "replace", False,
      "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedAdamW)(",
      "performance only (msFmkTransplt advice); compatibility with the clipping subclass is unconfirmed"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, "    cfg.MODEL.DEVICE = \"npu\"",
      "detectron2's MODEL.DEVICE defaults to 'cuda'"),
  ])

E("sparseinst_test", "tools/test_net.py", "explicit_replacement",
  "SparseInst tools/test_net.py single-device speed benchmark", [
    C("os.environ.setdefault(\"CUDA_VISIBLE_DEVICES\", os.environ.get(\"GPU\", \"0\"))", "env_var", "replace", True,
      "os.environ.setdefault(\"ASCEND_RT_VISIBLE_DEVICES\", os.environ.get(\"GPU\", \"0\"))",
      "ignored on Ascend, so GPU=3 silently benchmarks on device 0 (possibly busy)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "module-level CUDA device; the .to(device) calls right below fail at import"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; the latency numbers need the NPU stream synchronised"),
    C("mem_mb = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
      "returns 0 without CUDA, so only the printed peak memory is wrong"),
    C("latency, fps, mem_mb, torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
      "latency, fps, mem_mb, torch.npu.get_device_name(0)))", "initialises CUDA and raises on an NPU host"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, "    cfg.MODEL.DEVICE = \"npu\"",
      "build_model moves the model to cfg.MODEL.DEVICE ('cuda' by default) before the explicit .to(device)"),
  ])

E("sparseinst_loss", "sparseinst/loss.py", "explicit_replacement",
  "SparseInst sparseinst/loss.py (criterion + Hungarian matcher with autocast disabled)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
      "the matcher's autocast(enabled=False) must switch off the NPU autocast region; a CUDA autocast context "
      "leaves it active, so the dice/matching costs are silently computed in fp16"),
  ])

E("sparseinst_docker", "docker/Dockerfile", "explicit_replacement",
  "detectron2-style Dockerfile used for SparseInst", [
    C("FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an Ascend image must carry CANN (image tag unconfirmed)"),
    C("RUN pip install --user torch==1.10.0+cu111 torchvision==0.11.1+cu111 -f https://download.pytorch.org/whl/cu111/torch_stable.html",
      "import_torch_npu", "replace", True,
      "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index/build; torch_npu needs the matching CPU torch wheel plus torch-npu"),
    C("ENV FORCE_CUDA=\"1\"", "env_var", "removal", True, None,
      "forces detectron2 to build its CUDAExtension, which fails without nvcc/CUDA_HOME"),
    C("ARG TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "ignored once nothing is built with nvcc"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "ignored once nothing is built with nvcc"),
  ])
