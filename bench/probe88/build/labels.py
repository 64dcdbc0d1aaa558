"""Labels for probe88 (hand-written synthetic upstream files; see ../README.md).

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

# recurring notes
IMP = "torch.npu.* and the hccl backend need torch_npu loaded (explicit import recommended even with autoload)"
AVAIL = ("torch.cuda.is_available() is False on an NPU host, so the unchanged check silently sends the run "
         "down the CPU path")
DP = "torch.nn.DataParallel is marked unsupported (✘) in Ascend's PyTorch API list: one NPU per process + DDP"
NCCL = "NCCL is not available on Ascend; HCCL is the collective backend"
CUDA_CALL = "torch.cuda.* needs a CUDA build of torch; torch_npu provides the torch.npu equivalent"
TO = "moving to a CUDA device fails on an NPU host (no CUDA build); move to the NPU instead"
VISIBLE = ("the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES does not restrict NPUs "
           "(unconfirmed that it is ignored, labelled required as in probe4)")
TYPE_STR = ("Tensor.type() of an NPU tensor reports 'torch.npu.*Tensor', so a comparison with a "
            "'torch.cuda.*Tensor' string is silently False on NPU")
LEGACY_T = ("legacy torch.cuda.<T>Tensor type constructor needs a CUDA build; torch_npu provides "
            "torch.npu.<T>Tensor (transfer_to_npu aliases it)")
IS_CUDA = ("x.is_cuda is False for an NPU tensor, so the CPU tensor type is chosen and the new tensors land on "
           "the CPU next to NPU activations (device mismatch)")
APEX_EXT = ("NVIDIA apex built with --cuda_ext/--cpp_ext needs nvcc; Ascend ships its own apex patch "
            "(pure Python, amp O1/O2 + NpuFused* optimizers)")
NVCC = "nvcc/CUDA kernels cannot be built or run on Ascend; the kernel needs an NPU implementation"


E("imagenet_main", "imagenet/main.py", "explicit_replacement",
  "pytorch/examples imagenet/main.py (mp.spawn DDP / DataParallel, 1.x era)", [
    C("=import torch.utils.data.distributed", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", R, True,
      "parser.add_argument('--dist-backend', default='hccl', type=str, help='distributed backend')", NCCL),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host: world_size becomes 0 and mp.spawn starts no worker"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", CUDA_CALL),
    C("=model.cuda(args.gpu)", "tensor_to_device", R, True, "model.npu(args.gpu)", TO),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", TO),
    C("torch.cuda.set_device(args.gpu)  # single-device run", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.gpu)  # single-device run", CUDA_CALL),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, True, "model = model.npu(args.gpu)", TO),
    C("model.features = torch.nn.DataParallel(model.features)", "unsupported_op_workaround", R, True,
      "model = model.npu()  # no DataParallel on NPU; run one process per NPU with DDP", DP),
    C("model.cuda()  # classifier stays", "tensor_to_device", R, True, "model.npu()", TO),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", R, True,
      "model = model.npu()  # use --multiprocessing-distributed for several NPUs", DP),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", R, True,
      "criterion = nn.CrossEntropyLoss().npu(args.gpu)", TO),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", R, True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location string names a CUDA device"),
    C("best_acc1 = best_acc1.to(args.gpu)", "tensor_to_device", R, True,
      "best_acc1 = best_acc1.to('npu:{}'.format(args.gpu))",
      "an int passed to Tensor.to() is a CUDA ordinal (transfer_to_npu rewrites exactly this case)"),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True,
      "images = images.npu(args.gpu, non_blocking=True)", TO),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True,
      "target = target.npu(args.gpu, non_blocking=True)", TO),
    C("inputs = inputs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True,
      "inputs = inputs.npu(args.gpu, non_blocking=True)", TO),
    C("targets = targets.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True,
      "targets = targets.npu(args.gpu, non_blocking=True)", TO),
])

E("apex_main_amp", "examples/imagenet/main_amp.py", "explicit_replacement",
  "NVIDIA/apex examples/imagenet/main_amp.py (amp O1/O2, apex DDP, side-stream data_prefetcher, NVTX ranges)", [
    C("=import torch.utils.data.distributed", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "unconfirmed: the knowledge does not say whether Ascend's apex patch keeps apex.parallel DDP working; "
      "porters switch to torch DDP (Ascend apex offers combine_ddp inside amp.initialize instead)"),
    C("from apex.multi_tensor_apply import multi_tensor_applier", "custom_cuda_extension", X, False, None,
      "unused here; multi_tensor_applier is backed by amp_C, which Ascend's apex does not build"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", CUDA_CALL),
    C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl',", NCCL),
    C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", R, False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
      "only with --sync_bn; apex SyncBN prefers its CUDA 'syncbn' extension (python fallback status on NPU "
      "unconfirmed); nn.SyncBatchNorm is supported on NPU"),
    C("model = model.cuda().to(memory_format=memory_format)", "tensor_to_device", R, True,
      "model = model.npu().to(memory_format=memory_format)", TO),
    C("optimizer = torch.optim.SGD(model.parameters(), args.lr,", "fused_optimizer", R, False,
      "optimizer = apex.optimizers.NpuFusedSGD(model.parameters(), args.lr,",
      "performance: Ascend apex NpuFusedSGD (msFmkTransplt advice for torch.optim.SGD)"),
    C("model, optimizer = amp.initialize(model, optimizer,", "amp", R, False,
      "model, optimizer = amp.initialize(model, optimizer, combine_grad=True,",
      "Ascend apex supports O1/O2 unchanged; combine_grad is its performance option"),
    C("model = DDP(model, delay_allreduce=True)", "distributed_framework", R, False,
      "model = DDP(model, device_ids=[args.gpu])",
      "follows the apex DDP import swap (unconfirmed that apex DDP fails under the Ascend patch)"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", R, True,
      "criterion = nn.CrossEntropyLoss().npu()", TO),
    C("storage.cuda(args.gpu)", "tensor_to_device", R, True,
      "checkpoint = torch.load(args.resume, map_location='npu:{}'.format(args.gpu))",
      "Storage.cuda() in the map_location lambda needs CUDA"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
      CUDA_CALL),
    C("0.406 * 255]).cuda()", "tensor_to_device", R, True,
      "self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1,3,1,1)", TO),
    C("0.225 * 255]).cuda()", "tensor_to_device", R, True,
      "self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1,3,1,1)", TO),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.stream):", CUDA_CALL),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_input = self.next_input.npu(non_blocking=True)", TO),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_target = self.next_target.npu(non_blocking=True)", TO),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", CUDA_CALL),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "input.record_stream(torch.npu.current_stream())", CUDA_CALL),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "target.record_stream(torch.npu.current_stream())", CUDA_CALL),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", R, True,
      "prof = torch_npu.profiler.profile(); prof.start()",
      "only with --prof; cudart has no NPU counterpart, torch_npu.profiler instead"),
    C('torch.cuda.nvtx.range_push("Body of iteration', "torch_cuda_api", R, True,
      'if args.prof >= 0: rng = torch_npu.npu.mstx.range_start("Body of iteration {}".format(i))',
      "only with --prof; torch.cuda.nvtx is not redirected by torch_npu, use torch_npu.npu.mstx "
      "(method names unconfirmed)"),
    C('torch.cuda.nvtx.range_push("forward")', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("forward")', "only with --prof; nvtx -> mstx"),
    C("range_pop()  # forward", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_fwd)", "only with --prof; nvtx -> mstx"),
    C('torch.cuda.nvtx.range_push("backward")', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("backward")', "only with --prof; nvtx -> mstx"),
    C("range_pop()  # backward", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_bwd)", "only with --prof; nvtx -> mstx"),
    C('torch.cuda.nvtx.range_push("optimizer.step()")', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("optimizer.step()")', "only with --prof; nvtx -> mstx"),
    C("range_pop()  # optimizer.step()", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_step)", "only with --prof; nvtx -> mstx"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C('torch.cuda.nvtx.range_push("prefetcher.next()")', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("prefetcher.next()")', "only with --prof; nvtx -> mstx"),
    C("range_pop()  # prefetcher.next()", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_pf)", "only with --prof; nvtx -> mstx"),
    C("range_pop()  # body", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng)", "only with --prof; nvtx -> mstx"),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", R, True, "prof.stop()",
      "only with --prof; cudart has no NPU counterpart"),
])

E("frcnn_trainval", "trainval_net.py", "explicit_replacement",
  "jwyang/faster-rcnn.pytorch trainval_net.py (Variable holders, --cuda / --mGPUs flags)", [
    C("=import torch.optim as optim", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("cfg.USE_GPU_NMS = args.cuda", "custom_cuda_extension", R, True,
      "cfg.USE_GPU_NMS = False  # the GPU NMS is the nvcc-built cffi kernel; NPU NMS via torchvision_npu",
      "with --cuda the proposal layer calls the CUDA nms extension (lib/model/nms), which has no NPU build"),
    C("im_data = im_data.cuda()", "tensor_to_device", R, True, "im_data = im_data.npu()", TO),
    C("im_info = im_info.cuda()", "tensor_to_device", R, True, "im_info = im_info.npu()", TO),
    C("num_boxes = num_boxes.cuda()", "tensor_to_device", R, True, "num_boxes = num_boxes.npu()", TO),
    C("gt_boxes = gt_boxes.cuda()", "tensor_to_device", R, True, "gt_boxes = gt_boxes.npu()", TO),
    C("fasterRCNN.cuda()", "tensor_to_device", R, True, "fasterRCNN.npu()", TO),
    C("fasterRCNN = nn.DataParallel(fasterRCNN)", "unsupported_op_workaround", R, True,
      "fasterRCNN = torch.nn.parallel.DistributedDataParallel(fasterRCNN, device_ids=[local_rank])", DP),
])

E("frcnn_ffi_build", "lib/build_ffi.py", "explicit_replacement",
  "faster-rcnn.pytorch-era torch.utils.ffi (cffi) builder linking nvcc-compiled .cu.o kernels (nms, roi_pooling, roi_align, roi_crop)", [
    C("from torch.utils.ffi import create_extension", "custom_cuda_extension", R, True,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the ffi extensions wrap THC/CUDA kernels; on Ascend the ops are rebuilt as NPU extensions or replaced by "
      "torch_npu / torchvision_npu ops (torch.utils.ffi itself is gone from every torch that torch_npu supports)"),
    C("if torch.cuda.is_available():", "custom_cuda_extension", R, True,
      "if torch.npu.is_available():",
      AVAIL + ": the NPU host builds the CPU-only C code and the GPU-only nms is skipped"),
    C("extra_objects = [os.path.join(root, fname) for fname in objects]", "custom_cuda_extension", R, True,
      "extra_objects = []  # no nvcc objects on Ascend", NVCC),
    C("with_cuda=with_cuda,", "custom_cuda_extension", R, True, "# (NpuExtension links torch_npu/ACL itself)",
      "with_cuda links the THC/cudart libraries"),
])

E("frcnn_roi_align_fn", "lib/model/roi_align/functions/roi_align.py", "device_branch_or_abstraction",
  "faster-rcnn.pytorch roi_align autograd Function over the cffi _ext (is_cuda dispatch)", [
    C("from .._ext import roi_align", "custom_cuda_extension", R, True,
      "import torch_npu  # npu_roi_align replaces the cffi kernel on NPU",
      "the cffi _ext is built from nvcc objects and THC C code"),
    C("if features.is_cuda:", "custom_cuda_extension", B, True,
      "if features.device.type == 'npu':\n    output = torch_npu.npu_roi_align(features, rois, ctx.spatial_scale, "
      "ctx.aligned_height, ctx.aligned_width, 2, 0)\nelif features.is_cuda:",
      "an NPU tensor is not is_cuda, so it would be handed to the CPU C kernel (THFloatTensor) and fail"),
    C("roi_align.roi_align_forward_cuda(ctx.aligned_height", "custom_cuda_extension", R, True,
      "output = torch_npu.npu_roi_align(features, rois, ctx.spatial_scale, ctx.aligned_height, "
      "ctx.aligned_width, 2, 0)", NVCC),
    C("assert(ctx.feature_size is not None and grad_output.is_cuda)", "device_type", R, True,
      "assert ctx.feature_size is not None and grad_output.device.type in ('cuda', 'npu')",
      "is_cuda is False for NPU gradients: the assert fires in every backward"),
    C("roi_align.roi_align_backward_cuda(", "custom_cuda_extension", R, True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, ctx.feature_size, ctx.aligned_width, "
      "ctx.aligned_height, ctx.spatial_scale, 2)",
      NVCC + " (npu_roi_alignbk argument order unconfirmed)"),
])

E("frcnn_make_sh", "lib/make.sh", "explicit_replacement",
  "faster-rcnn.pytorch lib/make.sh (nvcc -gencode builds of .cu.o kernels + cffi build.py)", [
    C("CUDA_PATH=/usr/local/cuda/", "env_var", R, False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "harmless on its own; the NPU build needs the CANN environment instead"),
    C('CUDA_ARCH="-gencode arch=compute_30', "custom_cuda_extension", X, False, None,
      "SM target list has no meaning on Ascend (used only by the nvcc lines)"),
    C("if ! command -v nvcc", "custom_cuda_extension", X, True, None,
      "no nvcc on an NPU host: the script exits here"),
    C("nvcc --version", "custom_cuda_extension", X, False, None, "never reached unchanged (guard above exits)"),
    C("nvcc -c -o nms_cuda_kernel.cu.o", "custom_cuda_extension", R, True,
      "# NMS: use torchvision.ops.nms with torchvision_npu", NVCC),
    C("nvcc -c -o roi_pooling.cu.o", "custom_cuda_extension", R, True,
      "# RoI pooling: torchvision.ops.roi_pool with torchvision_npu", NVCC),
    C("nvcc -c -o roi_align_kernel.cu.o", "custom_cuda_extension", R, True,
      "# RoI align: torch_npu.npu_roi_align", NVCC),
    C("nvcc -c -o roi_crop_cuda_kernel.cu.o", "custom_cuda_extension", R, True,
      "# roi_crop: F.affine_grid + F.grid_sample on NPU", NVCC),
    C("=python build_ffi.py", "custom_cuda_extension", R, True, "python setup_npu.py build_ext --inplace",
      "builds the ffi extensions that link the nvcc objects"),
    C("assert torch.cuda.is_available(), 'no GPU visible'", "torch_cuda_api", R, True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'no NPU visible'\"", AVAIL),
])
ENTRIES[-1]["changes"] += [
    C("python build.py  # %s ffi" % m, "custom_cuda_extension", X, True, None,
      "per-module torch.utils.ffi build linking the nvcc object above")
    for m in ("nms", "roi_pooling", "roi_align", "roi_crop")
]

E("yolov3_models", "models.py", "explicit_replacement",
  "eriklindernoren/PyTorch-YOLOv3 models.py (YOLOLayer picks torch.cuda.*Tensor types from x.is_cuda)", [
    C("FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor", "device_type", R, True,
      "FloatTensor = torch.npu.FloatTensor if cuda else torch.FloatTensor",
      "grid offsets and scaled anchors must be created on the NPU; " + LEGACY_T),
    C("FloatTensor = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor", "device_type", R, True,
      "FloatTensor = torch.npu.FloatTensor if x.is_npu else torch.FloatTensor", IS_CUDA),
    C("LongTensor = torch.cuda.LongTensor if x.is_cuda else torch.LongTensor", "device_type", R, False,
      "LongTensor = torch.npu.LongTensor if x.is_npu else torch.LongTensor",
      "unused in forward; changed for consistency"),
    C("ByteTensor = torch.cuda.ByteTensor if x.is_cuda else torch.ByteTensor", "device_type", R, False,
      "ByteTensor = torch.npu.ByteTensor if x.is_npu else torch.ByteTensor",
      "unused in forward; changed for consistency"),
    C("self.compute_grid_offsets(grid_size, cuda=x.is_cuda)", "device_type", R, True,
      "self.compute_grid_offsets(grid_size, cuda=x.is_npu)", IS_CUDA),
])

E("yolov3_detect", "detect.py", "explicit_replacement",
  "eriklindernoren/PyTorch-YOLOv3 detect.py (Tensor = torch.cuda.FloatTensor if available, Variable inputs)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', AVAIL),
    C("model.load_state_dict(torch.load(opt.weights_path))", "tensor_to_device", R, True,
      "model.load_state_dict(torch.load(opt.weights_path, map_location=device))",
      "checkpoints written by train.py on a GPU hold CUDA storages; torch.load without map_location raises on "
      "a host without CUDA"),
    C("Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor", "device_type", R, True,
      "Tensor = torch.npu.FloatTensor if torch.npu.is_available() else torch.FloatTensor",
      AVAIL + " (inputs stay on the CPU while the model is on the NPU)"),
])

E("cyclegan_networks", "models/networks.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py (init_net: int gpu_ids + DataParallel)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", R, True, "assert(torch.npu.is_available())",
      "the assert fails on an NPU host whenever --gpu_ids is given"),
    C("net.to(gpu_ids[0])", "tensor_to_device", R, True, "net.to('npu:{}'.format(gpu_ids[0]))",
      "an int passed to Module.to() is a CUDA ordinal"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "unsupported_op_workaround", R, True,
      "pass  # single NPU: no DataParallel (this code base has no DDP path)", DP),
])

E("cyclegan_base_model", "models/base_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/base_model.py (device from gpu_ids, save/restore to GPU)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", R, True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "input tensors are moved to self.device in set_input()"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      AVAIL + ": the else branch moves the net to the CPU for saving and never moves it back, so training "
      "continues on the CPU after the first checkpoint"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "unsupported_op_workaround", R, True,
      "torch.save(net.cpu().state_dict(), save_path)",
      "follows the removal of DataParallel in init_net: the bare module has no .module"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", R, True, "net.npu(self.gpu_ids[0])", TO),
])

E("bert_run_classifier", "examples/run_classifier.py", "transfer_to_npu",
  "huggingface pytorch-pretrained-BERT examples/run_classifier.py (apex FusedAdam + FP16_Optimizer, apex DDP, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects torch.cuda.*, 'cuda' devices and backend='nccl' in this script"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "unconfirmed whether apex DDP works under Ascend's apex patch; torch DDP is the supported path"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", R, True,
      "model = model  # launch one process per NPU (torch.distributed.launch) instead of DataParallel",
      DP + "; transfer_to_npu does not replace it, and with it n_gpu counts NPUs so this branch is taken"),
    C("from apex.optimizers import FP16_Optimizer", "amp", R, False,
      "from apex import amp",
      "unconfirmed: FP16_Optimizer in apex.optimizers drives FusedAdam's fused step; Ascend apex offers amp O2"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedAdam",
      "apex FusedAdam is a CUDA kernel and is not available in Ascend's apex (must be edited by hand)"),
    C("optimizer = FusedAdam(optimizer_grouped_parameters,", "fused_optimizer", R, True,
      "optimizer = NpuFusedAdam(optimizer_grouped_parameters,", "follows the FusedAdam import"),
    C("optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)", "amp", R, False,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic")',
      "unconfirmed (see the FP16_Optimizer import)"),
    C("optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.loss_scale)", "amp", R, False,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=args.loss_scale)',
      "unconfirmed (see the FP16_Optimizer import)"),
    C("optimizer.backward(loss)", "amp", R, False,
      "with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()",
      "FP16_Optimizer API; follows the switch to apex amp (unconfirmed)"),
])

E("bert_modeling", "pytorch_pretrained_bert/modeling.py", "explicit_replacement",
  "huggingface pytorch-pretrained-BERT modeling.py (apex FusedLayerNorm with pure-PyTorch fallback)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      R, False, "from torch.nn import LayerNorm as BertLayerNorm",
      "unconfirmed: fused_layer_norm_cuda is not built by Ascend's apex; if apex.normalization still imports "
      "there (apex loads the kernel only in the constructor) the ImportError fallback is bypassed"),
    C("return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))", "npu_fused_op", R, False,
      "return torch_npu.npu_gelu(x)", "performance only: fused GELU"),
])

E("fairseq_utils", "fairseq/utils.py", "device_branch_or_abstraction",
  "facebookresearch/fairseq 0.4-0.5 fairseq/utils.py (make_variable / volatile_variable / move_to_cuda, async-or-non_blocking kwargs)", [
    C("if cuda and torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if cuda and torch.npu.is_available():",
      AVAIL + ": every sample silently stays on the CPU"),
    C("maybe_tensor = maybe_tensor.cuda(**_NON_BLOCKING)", "tensor_to_device", R, True,
      "maybe_tensor = maybe_tensor.npu(**_NON_BLOCKING)",
      TO + " (the 0.3 `async` spelling is dead anyway; non_blocking is accepted by .npu())"),
    C("return maybe_tensor.cuda()", "tensor_to_device", R, True, "return maybe_tensor.npu()",
      TO + "; callers keep the move_to_cuda name"),
])

E("fairseq_distributed_utils", "fairseq/distributed_utils.py", "explicit_replacement",
  "facebookresearch/fairseq distributed_utils.py (Slurm init, all_gather_list on torch.cuda.ByteTensor, backend-string check)", [
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(args.device_id)",
      CUDA_CALL),
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "device_type", R, True,
      "all_gather_list._buffer = torch.npu.ByteTensor(buffer_size)",
      LEGACY_T + "; the buffer must live on the NPU for the HCCL all_reduce"),
    C("all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()", "pin_memory", R, False,
      "all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device='npu')",
      "unconfirmed whether a bare Tensor.pin_memory() pins for the NPU under torch_npu"),
    C("if torch.distributed.get_backend(group) == 'nccl':", "dist_backend", R, True,
      "if torch.distributed.get_backend(group) == 'hccl':",
      "the process group reports 'hccl' on Ascend, so the check is silently False and CPU tensors reach the "
      "HCCL broadcast (backend-string comparisons must be edited by hand, per msFmkTransplt)"),
    C("device = torch.device('cuda', torch.cuda.current_device())", "device_type", R, True,
      "device = torch.device('npu', torch.npu.current_device())", CUDA_CALL),
])

E("fairseq_trainer", "fairseq/trainer.py", "explicit_replacement",
  "facebookresearch/fairseq 0.6 trainer.py (CPU-refusing Trainer, SM-version fp16 advice, OOM recovery)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "raises NotImplementedError('Training on CPU is not supported') on every NPU host"),
    C("self.criterion = criterion.cuda()", "tensor_to_device", R, True, "self.criterion = criterion.npu()", TO),
    C("self._model = model.half().cuda()", "tensor_to_device", R, True, "self._model = model.half().npu()", TO),
    C("self._model = model.cuda()", "tensor_to_device", R, True, "self._model = model.npu()", TO),
    C("if torch.cuda.get_device_capability(0)[0] < 7:", "device_capability_check", R, True,
      "if False:  # SM-version advice does not apply to Ascend",
      "needs a CUDA build; torch_npu's get_device_capability returns None, so [0] raises TypeError"),
    C("if torch.cuda.get_device_capability(0)[0] >= 7:", "device_capability_check", R, True,
      "if False:", "same capability probe on the FP32 path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the NPU cache is only released by torch.npu.empty_cache()"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA, but the NPU generator stays unseeded (reproducibility only)"),
])

E("deeplab_train", "train.py", "explicit_replacement",
  "jfzhang95/pytorch-deeplab-xception train.py (DataParallel + vacancy Synchronized-BatchNorm replication callback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("from modeling.sync_batchnorm.replicate import patch_replication_callback", "unsupported_op_workaround", X,
      False, None, "unused once the DataParallel replication callback goes"),
    C("self.model = torch.nn.DataParallel(self.model, device_ids=self.args.gpu_ids)", "unsupported_op_workaround",
      R, True, "self.model = torch.nn.parallel.DistributedDataParallel(self.model.npu(), device_ids=[local_rank])",
      DP),
    C("patch_replication_callback(self.model)", "unsupported_op_workaround", X, True, None,
      "the callback patches DataParallel.replicate (SyncBN over DataParallel replicas); nothing to patch under DDP"),
    C("self.model = self.model.cuda()", "tensor_to_device", R, True, "self.model = self.model.npu()", TO),
    C("image, target = image.cuda(), target.cuda()  # val batch", "tensor_to_device", R, True,
      "image, target = image.npu(), target.npu()  # val batch", TO),
    C("=image, target = image.cuda(), target.cuda()", "tensor_to_device", R, True,
      "image, target = image.npu(), target.npu()", TO),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", R, True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      AVAIL + ": the whole Trainer then runs on the CPU"),
])

EXT_CALL = NVCC + "; written here as plain torch ops (or an NPU op from an Ascend extension package)"
E("pointnet2_utils", "pointnet2/pointnet2_utils.py", "explicit_replacement",
  "sshaoshuai/Pointnet2.PyTorch pointnet2_utils.py (THC-era wrappers, outputs preallocated as torch.cuda.*Tensor)", [
    C("import pointnet2_cuda as pointnet2", "custom_cuda_extension", R, True,
      "import torch_npu  # pointnet2_cuda (nvcc CUDAExtension) has no NPU build",
      "the compiled module only exists for CUDA"),
    C("output = torch.cuda.IntTensor(B, npoint)", "device_type", R, True,
      "output = torch.zeros(B, npoint, dtype=torch.int32, device=xyz.device)", LEGACY_T),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "device_type", R, True,
      "temp = torch.full((B, N), 1e10, device=xyz.device)", LEGACY_T),
    C("pointnet2.furthest_point_sampling_wrapper(", "custom_cuda_extension", R, True,
      "output = _fps_torch(xyz, npoint, temp, output)  # iterative argmax of min distance", EXT_CALL),
    C("output = torch.cuda.FloatTensor(B, C, npoint)", "device_type", R, True,
      "output = features.new_empty(B, C, npoint)", LEGACY_T),
    C("pointnet2.gather_points_wrapper(", "custom_cuda_extension", R, True,
      "output = torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, C, -1))", EXT_CALL),
    C("grad_features = Variable(torch.cuda.FloatTensor(B, C, N).zero_())", "device_type", R, True,
      "grad_features = grad_out.new_zeros(B, C, N)", LEGACY_T),
    C("pointnet2.gather_points_grad_wrapper(", "custom_cuda_extension", R, True,
      "grad_features.scatter_add_(2, idx.long().unsqueeze(1).expand(-1, C, -1), grad_out_data)", EXT_CALL),
    C("output = torch.cuda.FloatTensor(B, C, nfeatures, nsample)", "device_type", R, True,
      "output = features.new_empty(B, C, nfeatures, nsample)", LEGACY_T),
    C("pointnet2.group_points_wrapper(", "custom_cuda_extension", R, True,
      "output = torch.gather(features, 2, idx.long().view(B, 1, -1).expand(-1, C, -1)).view(B, C, nfeatures, nsample)",
      EXT_CALL),
    C("grad_group = Variable(torch.cuda.FloatTensor(B, C, N).zero_())", "device_type", R, True,
      "grad_group = grad_out.new_zeros(B, C, N)", LEGACY_T),
    C("pointnet2.group_points_grad_wrapper(", "custom_cuda_extension", R, True,
      "grad_group.scatter_add_(2, idx.long().view(B, 1, -1).expand(-1, C, -1), grad_out_data.view(B, C, -1))",
      EXT_CALL),
    C("idx = torch.cuda.IntTensor(B, npoint, nsample).zero_()", "device_type", R, True,
      "idx = torch.zeros(B, npoint, nsample, dtype=torch.int32, device=xyz.device)", LEGACY_T),
    C("pointnet2.ball_query_wrapper(", "custom_cuda_extension", R, True,
      "idx = _ball_query_torch(radius, nsample, xyz, new_xyz)  # cdist + first-k within radius", EXT_CALL),
])

E("dcnv2_setup", "setup.py", "explicit_replacement",
  "CharlesShang/DCNv2 setup.py (CUDAExtension when CUDA or FORCE_CUDA, nvcc half-precision macros)", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself succeeds on a CPU torch build; it is replaced together with its use"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None,
      "nvcc target list; meaningless (and harmless) on Ascend"),
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA"', "custom_cuda_extension",
      R, True, 'if torch.npu.is_available() or os.getenv("FORCE_NPU", "0") == "1":',
      AVAIL + ": only the CPU kernels get built, and NPU tensors then reach the CPU implementation"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, True, "extension = NpuExtension", NVCC),
    C("sources += source_cuda", "custom_cuda_extension", R, True,
      "sources += source_npu  # Ascend C kernels (or drop the extension for torch_npu.npu_deformable_conv2d)",
      NVCC),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", X, True, None,
      "nvcc-only flags (CUDA_HAS_FP16, __CUDA_NO_HALF_*); there is no nvcc on Ascend"),
])

E("dcnv2_fn", "dcn_v2.py", "explicit_replacement",
  "CharlesShang/DCNv2 dcn_v2.py (modulated deformable conv + deformable PS-RoI pooling over the compiled _ext)", [
    C("import _ext as _backend", "custom_cuda_extension", R, True, "import torch_npu",
      "_ext is the CUDAExtension built by setup.py"),
    C("output = _backend.dcn_v2_forward(input, weight, bias,", "custom_cuda_extension", R, True,
      "output, _ = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], 1), bias, "
      "ctx.kernel_size, [1, 1, *ctx.stride], [ctx.padding[0]] * 2 + [ctx.padding[1]] * 2, "
      "[1, 1, *ctx.dilation], deformable_groups=ctx.deformable_groups, modulated=True)",
      NVCC + " (torch_npu.contrib.module.DCNv2 wraps the same op; the offset channel order expected by "
      "npu_deformable_conv2d is unconfirmed)"),
    C("_backend.dcn_v2_backward(input, weight,", "custom_cuda_extension", R, True,
      "# backward comes from the autograd of torch_npu.npu_deformable_conv2d", NVCC),
    C("_backend.dcn_v2_psroi_pooling_forward(input, rois, offset,", "custom_cuda_extension", R, True,
      "output = torch_npu.npu_ps_roi_pooling(input, rois, ctx.spatial_scale, ctx.group_size, ctx.output_dim)",
      NVCC + "; npu_ps_roi_pooling only covers the no_trans case (no deformable offsets)"),
    C("_backend.dcn_v2_psroi_pooling_backward(grad_output,", "custom_cuda_extension", R, True,
      "# backward from npu_ps_roi_pooling's autograd", NVCC),
    C("input = torch.randn(2, 64, 128, 128).cuda()", "tensor_to_device", R, True,
      "input = torch.randn(2, 64, 128, 128).npu()", TO),
    C("padding=1, deformable_groups=2).cuda()", "tensor_to_device", R, True,
      "padding=1, deformable_groups=2).npu()", TO),
])

E("maskrcnn_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark engine/trainer.py (apex amp.scale_loss, max-mem logging)", [
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", R, True,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "without CUDA initialised torch.cuda reports empty memory stats, so the log silently shows 0 MB (as "
      "labelled in probe4)"),
])

E("maskrcnn_train_net", "tools/train_net.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark tools/train_net.py (apex amp O1 from cfg.DTYPE, NCCL init)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", CUDA_CALL),
    C('backend="nccl", init_method="env://"', "dist_backend", R, True,
      'backend="hccl", init_method="env://"', NCCL),
])

E("maskrcnn_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark layers/roi_align.py (maskrcnn_benchmark._C op, @amp.float_function)", [
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", R, True, "import torch_npu",
      "_C is the CUDAExtension built by setup.py (roi_align_forward/backward, nms, ...); a CPU-only build "
      "would receive NPU tensors"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", R, True,
      "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], "
      "sampling_ratio, 0)", NVCC + " (roi_end_mode value for the legacy non-aligned variant unconfirmed)"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", R, True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, ctx.input_shape, output_size[1], "
      "output_size[0], spatial_scale, sampling_ratio)", NVCC + " (argument order unconfirmed)"),
])

E("maskrcnn_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark utils/comm.py (pickled all_gather staged on .to(\"cuda\"))", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", R, True,
      'tensor = torch.ByteTensor(storage).to("npu")', "the HCCL all_gather needs NPU tensors; 'cuda' fails"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "device_type", R, True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "device string names CUDA"),
    C('size_list = [torch.LongTensor([0]).to("cuda")', "device_type", R, True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "device string names CUDA"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "device_type", R, True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "device string names CUDA"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "device_type", R, True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "device string names CUDA"),
])

E("tacotron2_train", "train.py", "explicit_replacement",
  "NVIDIA/tacotron2 train.py (multiproc launcher ranks, apex amp O2, CUDA-asserting init_distributed)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('assert torch.cuda.is_available(), "Distributed mode requires CUDA."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "Distributed mode requires an NPU."',
      "the assert fails on every NPU host as soon as distributed_run=True"),
    C("torch.cuda.set_device(rank % torch.cuda.device_count())", "torch_cuda_api", R, True,
      "torch.npu.set_device(rank % torch.npu.device_count())", CUDA_CALL),
    C("model = Tacotron2(hparams).cuda()", "tensor_to_device", R, True, "model = Tacotron2(hparams).npu()", TO),
    C("torch.cuda.manual_seed(hparams.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(hparams.seed)",
      "lazily queued and harmless without CUDA; the NPU generator stays unseeded"),
])

E("tacotron2_utils", "utils.py", "device_branch_or_abstraction",
  "NVIDIA/tacotron2 utils.py + audio_processing helpers (to_gpu, get_mask_from_lengths with out=torch.cuda.LongTensor)", [
    C("ids = torch.arange(0, max_len, out=torch.cuda.LongTensor(max_len))", "device_type", R, True,
      "ids = torch.arange(0, max_len, device=lengths.device, dtype=torch.long)",
      LEGACY_T + " (the out= buffer is a CUDA tensor)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      AVAIL + ": parse_batch leaves every batch on the CPU while the model sits on the NPU"),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", R, True, "x = x.npu(non_blocking=True)", TO),
])

E("tacotron2_hparams", "hparams.py", "explicit_replacement",
  "NVIDIA/tacotron2 hparams.py (tf.contrib HParams with dist_backend / cudnn switches)", [
    C('dist_backend="nccl",', "dist_backend", R, True, 'dist_backend="hccl",', NCCL),
])

HALF_STR = ("spect.type() of an NPU half tensor is 'torch.npu.HalfTensor', so fp16 inference silently takes "
            "the float branch")
E("waveglow_glow", "glow.py", "explicit_replacement",
  "NVIDIA/waveglow glow.py (type()-string fp16 checks, torch.cuda.Half/FloatTensor noise in infer)", [
    C("if z.type() == 'torch.cuda.HalfTensor':", "device_type", R, True,
      "if z.dtype == torch.float16:",
      TYPE_STR + ": W_inverse stays fp32 and conv1d of an fp16 input raises a dtype mismatch"),
    C("if spect.type() == 'torch.cuda.HalfTensor':  # early outputs", "device_type", R, True,
      "if spect.dtype == torch.float16:  # early outputs", HALF_STR),
    C("=if spect.type() == 'torch.cuda.HalfTensor':", "device_type", R, True,
      "if spect.dtype == torch.float16:", HALF_STR),
    C("audio = torch.cuda.HalfTensor(spect.size(0),", "device_type", R, True,
      "audio = torch.randn(spect.size(0), self.n_remaining_channels, spect.size(2), device=spect.device, "
      "dtype=torch.float16)", LEGACY_T),
    C("audio = torch.cuda.FloatTensor(spect.size(0),", "device_type", R, True,
      "audio = torch.randn(spect.size(0), self.n_remaining_channels, spect.size(2), device=spect.device)",
      LEGACY_T),
    C("z = torch.cuda.HalfTensor(spect.size(0), self.n_early_size", "device_type", R, True,
      "z = torch.randn(spect.size(0), self.n_early_size, spect.size(2), device=spect.device, "
      "dtype=torch.float16)", LEGACY_T),
    C("z = torch.cuda.FloatTensor(spect.size(0), self.n_early_size", "device_type", R, True,
      "z = torch.randn(spect.size(0), self.n_early_size, spect.size(2), device=spect.device)", LEGACY_T),
])

E("maskrcnn_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark docker/Dockerfile (nvidia/cuda devel base, pytorch-nightly cudatoolkit, apex --cuda_ext, FORCE_CUDA)", [
    C('ARG CUDA="9.0"', "env_var", X, False, None, "only feeds the CUDA image tag and cudatoolkit pin"),
    C("FROM nvidia/cuda:${CUDA}-cudnn${CUDNN}-devel-ubuntu16.04", "device_type", R, True,
      "FROM <CANN toolkit base image matching the host driver>",
      "the CUDA image has no CANN runtime/toolkit; torch_npu needs CANN (image name unconfirmed)"),
    C("&& conda install pytorch-nightly cudatoolkit=${CUDA} -c pytorch", "device_type", R, True,
      "&& pip install torch==2.1.0 torch-npu==2.1.0.post12 \\",
      "CUDA build of torch; torch_npu wheels pair with an exact torch version"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, True,
      "RUN git clone https://gitee.com/ascend/apex.git \\", APEX_EXT),
    C("&& python setup.py install --cuda_ext --cpp_ext", "custom_cuda_extension", R, True,
      "&& bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      APEX_EXT + " (build.sh arguments unconfirmed)"),
    C('ARG FORCE_CUDA="1"', "env_var", X, False, None, "only feeds the ENV below"),
    C("ENV FORCE_CUDA=${FORCE_CUDA}", "env_var", X, True, None,
      "forces setup.py onto the CUDAExtension/nvcc path, which fails without nvcc"),
])

E("imagenet_amp_sh", "scripts/train_imagenet_amp.sh", "explicit_replacement",
  "apex ImageNet-style DGX launch script (torch.distributed.launch, NCCL env, nvidia-smi / amp_C sanity checks)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", VISIBLE),
    C("export NCCL_DEBUG=INFO", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_DEBUG has no effect on HCCL; ASCEND_GLOBAL_LOG_LEVEL=1 enables INFO plogs"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL; HCCL_SOCKET_IFNAME is the equivalent (matters only multi-node with a wrong default NIC)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "no HCCL counterpart; harmless"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "no nvidia-smi on an NPU host; with set -e the script stops here"),
    C('python -c "import apex, amp_C"', "custom_cuda_extension", R, True,
      'python -c "import torch_npu, apex" || { echo "Ascend apex is not installed"; exit 1; }',
      "amp_C is never built by Ascend's apex, so this check always exits"),
    C('if [ "$NGPUS" -gt "$(nvidia-smi -L | wc -l)" ]; then', "torch_cuda_api", R, True,
      'if [ "$NGPUS" -gt "$(python -c \'import torch, torch_npu; print(torch.npu.device_count())\')" ]; then',
      "nvidia-smi -L prints nothing on an NPU host, so the device count is 0 and the script exits"),
    C('echo "asked for $NGPUS GPUs but only $(nvidia-smi -L | wc -l) are visible" >&2', "torch_cuda_api", R, False,
      'echo "asked for $NGPUS NPUs but fewer are visible" >&2', "message only"),
    C('nvidia-smi dmon -c 1 > "${LOG_DIR}/gpu_state.txt"', "torch_cuda_api", R, False,
      'npu-smi info > "${LOG_DIR}/npu_state.txt"',
      "runs after training; only the snapshot (and, under set -e, the final echo) is lost"),
])

E("pointrcnn_requirements", "requirements.txt", "explicit_replacement",
  "PointRCNN / OpenPCDet-era requirements.txt (cu100 torch wheels, cupy/pycuda/spconv/DALI)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "device_type", X, False, None,
      "index of CUDA wheels; harmless once the +cu100 pins go"),
    C("torch==1.4.0+cu100", "device_type", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA 10.0 build of torch 1.4, for which no torch_npu exists; torch_npu pins an exact torch version"),
    C("torchvision==0.5.0+cu100", "device_type", R, True, "torchvision==0.16.0",
      "must match the torch pin (torchvision_npu adds NPU nms/roi_align)"),
    C("cupy-cuda100==7.0.0", "custom_cuda_extension", X, True, None,
      "cupy has no Ascend support; the CUDA 10.0 wheel cannot be used on an NPU host"),
    C("pycuda==2019.1.2", "custom_cuda_extension", X, True, None, "builds against the CUDA toolkit"),
    C("spconv @ git+https://github.com/traveller59/spconv.git@v1.2.1", "custom_cuda_extension", X, True, None,
      "spconv 1.x is a CUDA-only C++/CUDA build"),
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "device_type", X, False, None,
      "NVIDIA wheel index, only for DALI"),
    C("nvidia-dali-cuda100==0.18.0", "custom_cuda_extension", X, True, None, "NVIDIA DALI is CUDA-only"),
    C("pynvml==8.0.4", "torch_cuda_api", X, False, None,
      "installs, but NVML has no NPU equivalent (npu-smi / torch.npu.utilization instead)"),
])

E("cyclegan_environment", "environment.yml", "explicit_replacement",
  "pytorch-CycleGAN-and-pix2pix environment.yml (pytorch channel, pytorch 0.4.1 + cuda90/cudatoolkit/cudnn/nccl)", [
    C("=- pytorch", "device_type", X, False, None, "channel of the CUDA builds; unused after the port"),
    C("- pytorch=0.4.1", "device_type", R, True, "- pip:  # torch==2.1.0 and torch-npu==2.1.0.post12 from PyPI",
      "conda CUDA build of torch 0.4.1; torch_npu needs a matching recent torch"),
    C("- torchvision=0.2.1", "device_type", R, True, "# torchvision==0.16.0 (pip, matching torch)",
      "must match the torch version"),
    C("- cuda90", "device_type", X, True, None, "CUDA 9.0 meta-package (x86-only, meaningless on Ascend)"),
    C("- cudatoolkit=9.0", "device_type", X, True, None, "CUDA runtime from conda; no aarch64 build"),
    C("- cudnn=7.1.2", "device_type", X, True, None, "cuDNN from conda; no Ascend use"),
    C("- nccl=2.4.2", "dist_backend", X, True, None, NCCL),
    C("- gputil==1.4.0", "torch_cuda_api", X, False, None, "wraps nvidia-smi; nothing to report on an NPU host"),
])

E("maskrcnn_amp_yaml", "configs/e2e_mask_rcnn_R_50_FPN_1x_amp.yaml", "explicit_replacement",
  "maskrcnn-benchmark yacs config (MODEL.DEVICE string, DTYPE float16 for apex amp)", [
    C('DEVICE: "cuda"', "device_type", R, True, 'DEVICE: "npu"',
      "tools/train_net.py builds torch.device(cfg.MODEL.DEVICE) and moves the model and every batch there"),
])
