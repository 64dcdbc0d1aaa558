"""Labels for probe55 (hand-written synthetic upstream files; see ../README.md).

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
EXP, T2N, DEV = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

DALI_NOTE = ("DALI's GPU/'mixed' operators run CUDA kernels (nvJPEG, NPP) and need an NVIDIA driver; "
             "no Ascend backend is listed in the knowledge, so the stage moves to the CPU or to the torch path")

E("dle_dataloaders", "image_classification/dataloaders.py", EXP,
  "NVIDIA DeepLearningExamples ConvNets image_classification/dataloaders.py (DALI pipes + CUDA-stream PrefetchedWrapper)", [
    C('dali_device = "gpu"', "device_type", R, True, 'dali_device = "cpu"',
      "dali-gpu branch puts the resize on a DALI GPU device; " + DALI_NOTE),
    C('=device="mixed",', "device_type", R, True, 'device="cpu",',
      "nvJPEG 'mixed' decoder (with nvJPEG buffer padding); " + DALI_NOTE),
    C('self.cmnp = ops.CropMirrorNormalize(device="gpu",', "device_type", R, True,
      'self.cmnp = ops.CropMirrorNormalize(device="cpu",',
      "crop/mirror/normalise runs on the DALI GPU even in the dali-cpu backend; " + DALI_NOTE),
    C("output = self.cmnp(images.gpu(), mirror=rng)", "device_type", R, True,
      "output = self.cmnp(images, mirror=rng)", "DataNode.gpu() copies into CUDA memory"),
    C('self.decode = ops.ImageDecoder(device="mixed"', "device_type", R, True,
      'self.decode = ops.ImageDecoder(device="cpu", output_type=types.RGB)', "val pipe nvJPEG decoder; " + DALI_NOTE),
    C('self.res = ops.Resize(device="gpu"', "device_type", R, True,
      'self.res = ops.Resize(device="cpu", resize_shorter=size, interp_type=interpolation)', "val pipe GPU resize"),
    C('=device="gpu",', "device_type", R, True, 'device="cpu",', "val pipe GPU CropMirrorNormalize"),
    C('target = torch.reshape(data[0]["label"], [-1]).cuda().long()', "tensor_to_device", R, True,
      'target = torch.reshape(data[0]["label"], [-1]).npu().long()', "DALI labels moved to the GPU"),
    C("device_id=rank % torch.cuda.device_count(),", "torch_cuda_api", R, True,
      "device_id=rank % torch.npu.device_count(),",
      "torch.cuda.device_count() is 0 without CUDA -> ZeroDivisionError (and DALI wants a CUDA id)"),
    C("local_gpu = rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "local_gpu = rank % torch.npu.device_count()", "same for the val pipe"),
    C('tensor.size(0), num_classes, dtype=dtype, device=torch.device("cuda")', "device_type", R, True,
      'tensor.size(0), num_classes, dtype=dtype, device=tensor.device', "one-hot buffer hard-wired to cuda"),
    C("=.cuda()", "tensor_to_device", R, True, ".npu()", "prefetcher mean on the GPU"),
    C(".cuda()  # std", "tensor_to_device", R, True, ".npu()  # std", "prefetcher std on the GPU"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()",
      "side stream for H2D copies (torch.npu.Stream)"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True, "with torch.npu.stream(stream):", ""),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "next_input = next_input.npu(non_blocking=True)", ""),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "next_target = next_target.npu(non_blocking=True)", ""),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(stream)", ""),
    C('.to("cuda")', "device_type", R, True, '.to("npu")', "synthetic loader batch"),
    C("input_target = torch.empty(batch_size, num_classes).cuda()", "tensor_to_device", R, True,
      "input_target = torch.empty(batch_size, num_classes).npu()", ""),
    C("input_target = input_target.cuda()", "tensor_to_device", R, True, "input_target = input_target.npu()", ""),
  ])

E("dle_main", "main.py", EXP,
  "NVIDIA DeepLearningExamples ConvNets main.py (data-backend switch, torch.cuda.amp, NCCL)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "entry script: torch_npu must be loaded for torch.npu.*, hccl and NPU amp"),
    C('default="dali-cpu",', "unsupported_op_workaround", R, True, 'default="pytorch",',
      "both DALI backends need CUDA (dali-cpu still normalises on the DALI GPU); default must become the torch loader"),
    C("optimizer = torch.optim.SGD(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(", "performance only (msFmkTransplt advice)"),
    C("from apex.optimizers import FusedLAMB", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedLamb",
      "apex FusedLAMB is built on amp_C, which Ascend's apex does not ship"),
    C("optimizer = FusedLAMB(parameters", "fused_optimizer", R, True,
      "optimizer = NpuFusedLamb(parameters, lr=args.lr, weight_decay=args.weight_decay)", "call site of the above"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "CUDA autocast is inactive for NPU tensors"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without a CUDA build"),
    C("args.gpu = args.local_rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.local_rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", ""),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', ""),
    C("torch.cuda.manual_seed(args.seed + args.local_rank)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed(args.seed + args.local_rank)",
      "lazily queued without CUDA, so harmless; NPU RNG left unseeded until changed"),
    C("torch.channels_last if args.memory_format", "unsupported_op_workaround", R, False,
      'torch.contiguous_format if args.memory_format == "nhwc" else torch.contiguous_format',
      "msFmkTransplt README lists channel_last as unsupported on NPU (use contiguous); only with --memory-format nhwc; failure mode unconfirmed"),
    C("model = model.cuda().to(memory_format=memory_format)", "tensor_to_device", R, True,
      "model = model.npu().to(memory_format=memory_format)", ""),
    C("criterion = criterion.cuda()", "tensor_to_device", R, True, "criterion = criterion.npu()", ""),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", R, True, "scaler = torch.npu.amp.GradScaler(",
      "CUDA GradScaler does not scale NPU losses"),
    C("storage.cuda(args.gpu)", "tensor_to_device", R, True,
      "checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.npu(args.gpu))",
      "map_location lambda moves every storage to CUDA"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      "epoch, loss, torch.npu.max_memory_allocated() / 2**30))",
      "reports 0 (uninitialised CUDA) or raises: the logged figure is wrong"),
  ])

E("dle_dockerfile", "Dockerfile", EXP,
  "NVIDIA DeepLearningExamples ConvNets Dockerfile (NGC PyTorch base, DALI, apex --cuda_ext)", [
    C("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:22.11-py3", "import_torch_npu", R, True,
      "ARG FROM_IMAGE_NAME=<CANN base image with torch + torch_npu for the host's NPU>",
      "NGC image ships CUDA torch and no CANN/torch_npu; exact Ascend image tag unconfirmed"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None,
      "read only by the NVIDIA container runtime; ignored on Ascend (devices come via ASCEND_VISIBLE_DEVICES)"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "CUDA allocator setting is ignored by the NPU caching allocator (fragmentation/performance only)"),
    C("libnvjpeg-dev-11-8", "custom_cuda_extension", X, True, None,
      "CUDA apt package: not in a CANN image's repositories, so the apt-get layer fails"),
    C("nvidia-dali-cuda110==${DALI_VERSION}", "custom_cuda_extension", X, False, None,
      "DALI is dropped once the torch data backend is used; whether the wheel installs on an (aarch64) Ascend host is unconfirmed"),
    C("RUN pip install --no-cache-dir cupy-cuda11x==11.6.0", "custom_cuda_extension", X, False, None,
      "CuPy has no Ascend support (knowledge §6): dead weight once the code using it is ported; the install itself may succeed"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", R, True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && \\",
      "NVIDIA apex CUDA build; Ascend apex is a patch applied by its scripts/build.sh"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc/CUDA_HOME: the layer fails on a CANN image"),
    C("=ADD requirements.txt .", "import_torch_npu", A, True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10",
      "torch_npu must be installed (wheel version = torch version + .postN)"),
    C("ENV NCCL_DEBUG=WARN", "env_var", R, False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging knob is meaningless under HCCL; replacement log variable unconfirmed"),
    C("HEALTHCHECK --interval=5m --timeout=10s CMD nvidia-smi -L || exit 1", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=5m --timeout=10s CMD npu-smi info || exit 1",
      "nvidia-smi does not exist on an Ascend host: the container is reported unhealthy forever"),
  ])

NVTX = "torch.cuda.nvtx is not redirected by torch_npu and raises without a CUDA build; NPU ranges are torch_npu.npu.mstx (method names unconfirmed)"

E("apex_main_amp", "examples/imagenet/main_amp.py", EXP,
  "NVIDIA/apex examples/imagenet/main_amp.py (data_prefetcher on a side stream, apex amp/DDP, nvtx profiling)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex.parallel.DDP on NPU unconfirmed (Ascend apex advertises only combine_ddp); torch DDP is the safe path"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", ""),
    C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl',", ""),
    C("memory_format = torch.channels_last", "unsupported_op_workaround", R, False,
      "memory_format = torch.contiguous_format",
      "channel_last listed as unsupported by msFmkTransplt; only with --channels-last; failure mode unconfirmed"),
    C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", R, False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
      "apex SyncBN (optional syncbn CUDA ext) on NPU unconfirmed"),
    C("model = model.cuda().to(memory_format=memory_format)", "tensor_to_device", R, True,
      "model = model.npu().to(memory_format=memory_format)", ""),
    C("optimizer = torch.optim.SGD(model.parameters(), args.lr,", "fused_optimizer", R, False,
      "optimizer = apex.optimizers.NpuFusedSGD(model.parameters(), args.lr,",
      "Ascend apex fused SGD; performance only"),
    C("model, optimizer = amp.initialize(model, optimizer,", "amp", R, False,
      "model, optimizer = amp.initialize(model, optimizer, combine_grad=True,",
      "Ascend apex keeps the amp API; combine_grad is its fused unscale (performance only)"),
    C("model = DDP(model, delay_allreduce=True)", "distributed_framework", R, False,
      "model = DDP(model, device_ids=[args.gpu])", "goes with the import above"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", R, True,
      "criterion = nn.CrossEntropyLoss().npu()", ""),
    C("storage.cuda(args.gpu)", "tensor_to_device", R, True,
      "checkpoint = torch.load(args.resume, map_location = lambda storage, loc: storage.npu(args.gpu))", ""),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()", ""),
    C("self.mean = torch.tensor([0.485 * 255", "tensor_to_device", R, True,
      "self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1,3,1,1)", ""),
    C("self.std = torch.tensor([0.229 * 255", "tensor_to_device", R, True,
      "self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1,3,1,1)", ""),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):", ""),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_input = self.next_input.npu(non_blocking=True)", ""),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_target = self.next_target.npu(non_blocking=True)", ""),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", ""),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "input.record_stream(torch.npu.current_stream())", "record_stream has an NPU kernel; the stream must be the NPU one"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "target.record_stream(torch.npu.current_stream())", ""),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", R, True,
      "prof = torch_npu.profiler.profile(); prof.start()",
      "cudart() is not aliased by torch_npu and needs CUDA (only with --prof)"),
    C('torch.cuda.nvtx.range_push("Body of iteration', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("Body of iteration {}".format(i))', NVTX),
    C('torch.cuda.nvtx.range_push("forward")', "torch_cuda_api", R, True,
      'if args.prof >= 0: torch_npu.npu.mstx.range_start("forward")', NVTX),
    C("range_pop()  # forward", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng)  # forward", NVTX),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("range_pop()  # body", "torch_cuda_api", R, True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(body)  # body", NVTX),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", R, True, "prof.stop()", "same as cudaProfilerStart"),
  ])

E("timm_loader", "timm/data/loader.py", EXP,
  "huggingface/pytorch-image-models timm/data/loader.py, 0.4.x era (CUDA PrefetchLoader, fast_collate)", [
    C("self.mean = torch.tensor([x * 255 for x in mean]).cuda()", "tensor_to_device", R, True,
      "self.mean = torch.tensor([x * 255 for x in mean]).npu().view(1, 3, 1, 1)", ""),
    C("self.std = torch.tensor([x * 255 for x in std]).cuda()", "tensor_to_device", R, True,
      "self.std = torch.tensor([x * 255 for x in std]).npu().view(1, 3, 1, 1)", ""),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()", ""),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True, "with torch.npu.stream(stream):", ""),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "next_input = next_input.npu(non_blocking=True)", ""),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "next_target = next_target.npu(non_blocking=True)", ""),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(stream)", ""),
  ])

E("timm_random_erasing", "timm/data/random_erasing.py", EXP,
  "huggingface/pytorch-image-models timm/data/random_erasing.py (device='cuda' defaults)", [
    C("def _get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device='cuda'):", "device_type", R, False,
      "def _get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device='npu'):",
      "default never used: every caller passes device"),
    C("=device='cuda',", "device_type", R, True, "device='npu',",
      "PrefetchLoader builds RandomErasing without device=, so this default decides where erase patches are made; "
      "'cuda' fails on the NPU host"),
  ])

FFCV_NORM = ("unconfirmed: FFCV's NormalizeImage switches to its GPU code path for any non-CPU input and that path uses "
             "ch.cuda streams and channels_last (recalled from FFCV's source, not in the knowledge); "
             "move it before ToDevice or normalise inside the model")

E("ffcv_train_imagenet", "train_imagenet.py", EXP,
  "libffcv/ffcv-imagenet train_imagenet.py (FFCV Loader + ToDevice pipelines, fastargs, progressive resizing)", [
    C("=import torch as ch", "import_torch_npu", A, True, "import torch as ch\nimport torch_npu", "entry script"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler does not scale NPU losses"),
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch_npu.npu.amp import autocast",
      "CUDA autocast leaves NPU ops in fp32 (and the fp16 NormalizeImage output then mismatches)"),
    C("=ch.backends.cudnn.benchmark = True", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "progressive resizing changes the input shape between epochs; msFmkTransplt advises jit_compile=False for dynamic shapes"),
    C("ch.autograd.profiler.emit_nvtx(False)", "torch_cuda_api", X, False, None,
      "emit_nvtx is marked unsupported in Ascend's API list, but here it is only constructed, never entered: harmless"),
    C('dist.init_process_group("nccl", rank=self.gpu, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=self.gpu, world_size=world_size)', ""),
    C("ch.cuda.set_device(self.gpu)", "torch_cuda_api", R, True, "ch.npu.set_device(self.gpu)", ""),
    C("this_device = f'cuda:{self.gpu}'", "device_type", R, True, "this_device = f'npu:{self.gpu}'",
      "target of the train pipelines' ToDevice (FFCV ToDevice to an NPU device itself unconfirmed)"),
    C("NormalizeImage(IMAGENET_MEAN, IMAGENET_STD, np.float16)", "unsupported_op_workaround", R, False,
      "NormalizeImage(IMAGENET_MEAN, IMAGENET_STD, np.float16),  # placed before ToDevice", FFCV_NORM),
    C("device_str = 'cuda:%d' % self.gpu", "device_type", R, True, "device_str = 'npu:%d' % self.gpu",
      "target of the val pipelines' ToDevice"),
    C("NormalizeImage(mean=IMAGENET_MEAN, std=IMAGENET_STD, type=np.float16)", "unsupported_op_workaround", R, False,
      "NormalizeImage(mean=IMAGENET_MEAN, std=IMAGENET_STD, type=np.float16),  # placed before ToDevice", FFCV_NORM),
    C("model = model.to(memory_format=ch.channels_last)", "unsupported_op_workaround", R, False,
      "model = model.to(memory_format=ch.contiguous_format)",
      "channel_last listed as unsupported by msFmkTransplt (use contiguous); failure mode unconfirmed"),
    C("model = model.to(self.gpu)", "tensor_to_device", R, True, "model = model.to(f'npu:{self.gpu}')",
      "an int passed to .to() means cuda:<int>"),
    C("'top_1': torchmetrics.Accuracy(task='multiclass', num_classes=1000).to(self.gpu)", "tensor_to_device", R, True,
      "'top_1': torchmetrics.Accuracy(task='multiclass', num_classes=1000).to(f'npu:{self.gpu}'),",
      "metric states moved with an int device = CUDA"),
    C("'top_5': torchmetrics.Accuracy(task='multiclass', num_classes=1000, top_k=5).to(self.gpu)", "tensor_to_device", R, True,
      "'top_5': torchmetrics.Accuracy(task='multiclass', num_classes=1000, top_k=5).to(f'npu:{self.gpu}'),", ""),
    C("'loss': torchmetrics.MeanMetric().to(self.gpu)", "tensor_to_device", R, True,
      "'loss': torchmetrics.MeanMetric().to(f'npu:{self.gpu}')", ""),
    C("assert world_size <= ch.cuda.device_count(), 'not enough GPUs on this node'", "torch_cuda_api", R, True,
      "assert world_size <= ch.npu.device_count(), 'not enough NPUs on this node'", "device_count() is 0 -> assertion fails"),
  ])

E("ffcv_launch_sh", "scripts/train_rn50_8gpu.sh", EXP,
  "ffcv-imagenet-style single-node launch script (CUDA_VISIBLE_DEVICES, nvidia-smi device count and dmon log)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the NPU runtime selects devices with ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES being ignored is unconfirmed)"),
    C("NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", R, True,
      "NGPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "no nvidia-smi on an Ascend host: with set -euo pipefail the script exits here (npu-smi output format unconfirmed)"),
    C('IFS=\',\' read -ra VISIBLE <<< "${CUDA_VISIBLE_DEVICES}"', "env_var", R, True,
      'IFS=\',\' read -ra VISIBLE <<< "${ASCEND_RT_VISIBLE_DEVICES}"', "world size derived from the CUDA variable"),
    C("nvidia-smi dmon -s um -d 10 -o T", "torch_cuda_api", R, False,
      'npu-smi info watch -i 0 > "${LOG_DIR}/npu_watch.log" 2>&1 &',
      "background monitor: failing only loses the utilisation log; npu-smi watch syntax unconfirmed"),
  ])

E("openclip_data", "src/training/data.py", DEV,
  "mlfoundations/open_clip src/training/data.py (WebDataset pipeline) with a --gpu-decode nvJPEG batch collate", [
    C("images = decode_jpeg(raw_images, mode=ImageReadMode.RGB, device=self.device)", "unsupported_op_workaround", R, False,
      "images = [img.to(self.device, non_blocking=True) for img in decode_jpeg(raw_images, mode=ImageReadMode.RGB, device='cpu')]",
      "torchvision decodes JPEG on CPU or CUDA (nvJPEG) only; with an NPU device it either decodes on the CPU in the "
      "training process or raises, depending on the torchvision version (unconfirmed); DVPP decode via torchvision_npu unconfirmed"),
    C('device=f"cuda:{args.local_rank}",', "device_type", R, True, "device=args.device,",
      "nvJPEG batch decode is sent to cuda:<local_rank>: decode_jpegs_cuda fails without a CUDA build"),
  ])

E("openclip_distributed", "src/training/distributed.py", DEV,
  "mlfoundations/open_clip src/training/distributed.py (init_distributed_device, SLURM/torchrun/horovod)", [
    C("if device_type == 'cuda':", "device_type", B, False,
      "elif device_type == 'npu':\n        is_avail = torch.npu.is_available()\n        is_known = True",
      "unknown device types are let through (is_known False), so only the availability check is skipped"),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      "torchrun/SLURM runs pass this backend straight to init_process_group"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      "elif torch.npu.is_available():\n        device = 'npu:%d' % args.local_rank if args.distributed and not args.no_set_device_rank else 'npu:0'\n        torch.npu.set_device(device)",
      "without CUDA the NPU host falls through to device = 'cpu' and trains on the CPU"),
    C("dist.all_gather(gathered, labels)", "unsupported_op_workaround", R, False,
      "dist.all_gather(gathered, labels.int())  # gathered buffers made with dtype=torch.int32",
      "Ascend's 2.7.1 API list gives all_gather dtypes bf16/fp16/fp32/int8/int32/bool (no int64); runtime failure unconfirmed"),
    C('if args.dist_backend == "nccl" and', "dist_backend", B, False,
      'if args.dist_backend in ("nccl", "hccl") and (device is None or device.type not in ("cuda", "npu")):',
      "backend-string comparison (not rewritten by transfer_to_npu); only gates a warning"),
  ])

E("openclip_train", "src/training/train.py", DEV,
  "mlfoundations/open_clip src/training/train.py, 2.2x era (get_autocast on torch.cuda.amp, max-mem logging)", [
    C("return torch.cuda.amp.autocast", "amp", R, True,
      "return partial(torch.autocast, device_type=device_type)",
      "CUDA autocast does not cast NPU ops: 'amp' runs fp32 while the GradScaler still scales"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", R, True,
      "return partial(torch.autocast, device_type=device_type, dtype=torch.bfloat16)", "bf16 path, same problem"),
    C("return torch.cuda.amp.GradScaler()", "amp", R, True, "return torch.npu.amp.GradScaler()",
      "CUDA GradScaler does not handle NPU grads"),
    C("max_mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, True,
      "max_mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "logged and sent to wandb: reports 0 or raises without CUDA"),
  ])

E("kornia_gpu_aug", "solo/data/gpu_transforms.py", DEV,
  "solo-learn-style batch GPU augmentations with Kornia AugmentationSequential / torchvision.transforms.v2", [
    C('device: str = "cuda",', "device_type", R, True, 'device: str = "cpu",',
      "build_gpu_augment never passes device, so the mean/std buffers are created on CUDA at construction"),
    C("K.ColorJitter(brightness, contrast, saturation, hue, p=color_jitter_prob),", "npu_fused_op", R, False,
      "FusedColorJitter(brightness, contrast, saturation, hue),  # torch_npu.contrib.module",
      "torch_npu.contrib.module.FusedColorJitter exists; its batch semantics and p= handling unconfirmed (performance only)"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type=x.device.type, enabled=False):",
      "disabling CUDA autocast leaves the NPU autocast of the training step active: the blur/colour ops the comment "
      "wants in fp32 silently run in half precision"),
    C("aug = MultiViewGPUAugment([{}, {\"gaussian_prob\": 0.1, \"solarization_prob\": 0.2}]).cuda()", "tensor_to_device", R, True,
      "aug = MultiViewGPUAugment([{}, {\"gaussian_prob\": 0.1, \"solarization_prob\": 0.2}]).npu()", "benchmark entry"),
    C('dtype=torch.uint8, device="cuda")', "device_type", R, True,
      'x = torch.randint(0, 256, (batch_size, 3, 224, 224), dtype=torch.uint8, device="npu")', ""),
    C("torch.cuda.synchronize()  # warm-up done", "torch_cuda_api", R, True, "torch.npu.synchronize()  # warm-up done", ""),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
  ])

DALI_CPU = ("a DALI pipeline given a device_id initialises CUDA even when every operator is on the CPU; "
            "device_id=None makes it CPU-only (DALI on an Ascend/aarch64 host itself unconfirmed)")

E("solo_dali_dataloader", "solo/data/dali_dataloader.py", EXP,
  "vturrisi/solo-learn solo/data/dali_dataloader.py (DALI pipeline_def builders in a LightningDataModule)", [
    C('dali_device: str = "gpu",', "device_type", R, True, 'dali_device: str = "cpu",',
      "decoder becomes 'mixed' (nvJPEG) and every op a DALI GPU op; " + DALI_NOTE),
    C('cfg.dali.device = omegaconf_select(cfg, "dali.device", "gpu")', "device_type", R, True,
      'cfg.dali.device = omegaconf_select(cfg, "dali.device", "cpu")', "config default feeds dali_device"),
    C("device_id=train_pipeline_builder.device_id,", "device_type", R, True, "device_id=None,", DALI_CPU),
    C("device_id=val_pipeline_builder.device_id,", "device_type", R, True, "device_id=None,", DALI_CPU),
  ])

E("solo_byol_yaml", "scripts/pretrain/imagenet-100/byol.yaml", EXP,
  "vturrisi/solo-learn pretrain config (Hydra yaml: DALI format, Lightning gpu accelerator, DDP)", [
    C('device: "gpu"', "device_type", R, True, 'device: "cpu"', "selects DALI GPU operators and the nvJPEG decoder; " + DALI_NOTE),
    C('accelerator: "gpu"', "device_type", R, True, 'accelerator: "npu"',
      "Lightning's gpu accelerator requires CUDA and refuses to start; Lightning ships no NPU accelerator, "
      "so the registered name depends on the plugin used (unconfirmed)"),
    C('strategy: "ddp"', "dist_backend", R, False, 'strategy: {_target_: DDPStrategy, process_group_backend: "hccl"}',
      "Lightning derives the process-group backend from the accelerator (nccl for CUDA); with a plugin accelerator "
      "the default backend may not be hccl (unconfirmed)"),
  ])

NVJPEG = ("torchvision decodes JPEG on CPU or CUDA (nvJPEG) only; on the NPU host decode on the CPU and copy the uint8 "
          "tensor to the NPU (DVPP decode through torchvision_npu unconfirmed)")
NVML = "NVML needs the NVIDIA driver (nvmlInit raises); knowledge: no pynvml equivalent, use torch.npu.utilization / mem_get_info"

E("nvjpeg_decode_bench", "tools/bench_decode.py", EXP,
  "torchvision nvJPEG decode benchmark script (decode_jpeg(device='cuda'), batched decode, CUDA events, pynvml sampler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C("pynvml.nvmlInit()", "torch_cuda_api", X, True, None, NVML),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", R, True,
      "self.index = index", NVML),
    C("self.samples.append(pynvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)", "torch_cuda_api", R, True,
      "self.samples.append(torch.npu.utilization(self.index))", NVML),
    C('_ = decode_jpeg(d, device="cuda", mode=ImageReadMode.RGB)', "unsupported_op_workaround", R, True,
      '_ = decode_jpeg(d, mode=ImageReadMode.RGB).to("npu", non_blocking=True)', NVJPEG),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", ""),
    C("stop_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "stop_evt = torch.npu.Event(enable_timing=True)", ""),
    C('decode_jpeg(d, mode=ImageReadMode.RGB, device="cuda")', "unsupported_op_workaround", R, True,
      'decode_jpeg(d, mode=ImageReadMode.RGB).to("npu", non_blocking=True)', NVJPEG),
    C("=decode_jpeg(b, mode=ImageReadMode.RGB, device=device)", "unsupported_op_workaround", R, False,
      "[decode_jpeg(x, mode=ImageReadMode.RGB).to(device, non_blocking=True) for x in b]",
      "warm-up of the batched decode: same as the timed call below"),
    C("out = decode_jpeg(b, mode=ImageReadMode.RGB, device=device)", "unsupported_op_workaround", R, False,
      "out = [decode_jpeg(x, mode=ImageReadMode.RGB).to(device, non_blocking=True) for x in b]",
      "batched decode with a device variable: once device is an NPU, decode_jpeg either decodes on the CPU or raises, "
      "depending on the torchvision version (unconfirmed)"),
    C("torch.cuda.synchronize(device)  # wait for the last batch", "torch_cuda_api", R, True,
      "torch.npu.synchronize(device)  # wait for the last batch", ""),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "the benchmark exits on an NPU host"),
    C('device = torch.device("cuda", args.device_index)', "device_type", R, True,
      'device = torch.device("npu", args.device_index)', ""),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", ""),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      'f"device {torch.npu.get_device_name(device)}")', ""),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      'print(f"peak device memory: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")', ""),
  ])

NVJPEG_EXT = ("nvJPEG/CUDA extension: no nvcc path on Ascend; the decoder must be rewritten (e.g. on DVPP JPEGD via ACL, "
              "bound with torch_npu.utils.cpp_extension.NpuExtension) or replaced by CPU decode")

E("torchnvjpeg_setup", "setup.py", EXP,
  "itsliupeng/torchnvjpeg-style setup.py (CUDAExtension linking libnvjpeg/cudart)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
      NVJPEG_EXT),
    C("if CUDA_HOME is None:", "custom_cuda_extension", R, True,
      'if not os.environ.get("ASCEND_TOOLKIT_HOME"):',
      "CUDA_HOME is None on an NPU host: the build aborts here"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None, "only read by nvcc builds"),
    C('out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()', "custom_cuda_extension", X, True,
      None, "runs nvcc (TypeError on CUDA_HOME=None before that)"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(", NVJPEG_EXT),
    C('include_dirs=[os.path.join(ROOT, "csrc"), os.path.join(CUDA_HOME, "include")],', "custom_cuda_extension", R, True,
      'include_dirs=[os.path.join(ROOT, "csrc")],', "CUDA include dir"),
    C('library_dirs=[os.path.join(CUDA_HOME, "lib64")],', "custom_cuda_extension", R, True,
      'library_dirs=[os.path.join(os.environ["ASCEND_TOOLKIT_HOME"], "lib64")],', "CUDA lib dir"),
    C('libraries=["nvjpeg", "cudart", "cuda"],', "custom_cuda_extension", R, True,
      'libraries=["ascendcl", "acl_dvpp"],', "links nvJPEG and the CUDA runtime; Ascend library names unconfirmed"),
    C('"nvcc": ["-O3", "--use_fast_math", "-std=c++17", "--expt-relaxed-constexpr"],', "custom_cuda_extension", X, True,
      None, "nvcc flags; no .cu sources after the rewrite"),
  ])

E("torchnvjpeg_decoder", "torchnvjpeg/decoder.py", EXP,
  "itsliupeng/torchnvjpeg-style Python front-end (nvJPEG _C Decoder bound to a CUDA stream, torchvision fallback)", [
    C("from . import _C as _nvjpeg", "custom_cuda_extension", R, True,
      "from . import _C as _jpegd  # rebuilt on DVPP/Ascend C", NVJPEG_EXT),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", R, True, "device_id = torch.npu.current_device()", ""),
    C('self.device = torch.device("cuda", device_id)', "device_type", R, True,
      'self.device = torch.device("npu", device_id)', ""),
    C("stream = torch.cuda.current_stream(device_id)", "torch_cuda_api", R, True,
      "stream = torch.npu.current_stream(device_id)", ""),
    C("with torch.cuda.device(device_id):", "torch_cuda_api", R, True, "with torch.npu.device(device_id):", ""),
    C("self._decoder = _nvjpeg.Decoder(", "custom_cuda_extension", R, True, "self._decoder = _jpegd.Decoder(",
      "construction of the nvJPEG handle: call site of the CUDA extension"),
    C("stream.cuda_stream,", "torch_cuda_api", R, True, "stream.npu_stream,",
      "raw cudaStream_t handed to the extension; the NPU stream handle attribute name is unconfirmed"),
    C("return self._decoder.decode(bytes(data))", "custom_cuda_extension", R, True,
      "return self._decoder.decode(bytes(data))  # rewritten extension", "call site of the CUDA extension"),
    C("out.extend(self._decoder.batch_decode(chunk))", "custom_cuda_extension", R, True,
      "out.extend(self._decoder.batch_decode(chunk))  # rewritten extension", "call site of the CUDA extension"),
    C("_as_uint8_tensor(data), mode=torchvision.io.ImageReadMode.RGB, device=self.device", "unsupported_op_workaround", R, False,
      "_as_uint8_tensor(data), mode=torchvision.io.ImageReadMode.RGB).to(self.device",
      "fallback decode with an NPU device: CPU decode or error depending on torchvision version (unconfirmed)"),
  ])

E("yolox_train_tool", "tools/train.py", T2N,
  "Megvii-BaseDetection/YOLOX tools/train.py (entry; ported with transfer_to_npu)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "entry script of a transfer_to_npu port: redirects torch.cuda.*, 'cuda' strings and nccl->hccl in init_process_group"),
    C("=configure_nccl()", "env_var", X, False, None,
      "sets NCCL_LAUNCH_MODE / NCCL_IB_HCA / NCCL_IB_GID_INDEX (and shells into /sys/class/infiniband): ignored by HCCL, harmless"),
  ])

E("yolox_launch", "yolox/core/launch.py", T2N,
  "Megvii-BaseDetection/YOLOX yolox/core/launch.py + utils get_num_devices (detectron2-style mp launcher)", [
    C("gpu_list = os.getenv('CUDA_VISIBLE_DEVICES', None)", "env_var", R, True,
      "gpu_list = os.getenv('ASCEND_RT_VISIBLE_DEVICES', None)",
      "device count taken from the CUDA visibility variable; transfer_to_npu does not touch environment variables"),
    C('devices_list_info = os.popen("nvidia-smi -L")', "torch_cuda_api", R, True,
      "return torch.npu.device_count()",
      "no nvidia-smi: popen yields an empty string, split gives [''] and the count is silently 1, so -d defaults to one device"),
  ])

E("yolox_metric", "yolox/utils/metric.py", T2N,
  "Megvii-BaseDetection/YOLOX yolox/utils/metric.py (nvidia-smi memory query for --occupy, gpu_mem_usage)", [
    C('"nvidia-smi --query-gpu=memory.total,memory.used --format=csv,nounits,noheader"', "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(cuda_device)",
      "with --occupy: no nvidia-smi, the empty output fails to unpack (ValueError); torch.npu.mem_get_info gives the same figures"),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", X, False, None,
      "logical->physical id mapping for nvidia-smi; obsolete once mem_get_info (logical ids) is used"),
    C('visible_devices = os.environ["CUDA_VISIBLE_DEVICES"].split(\',\')', "env_var", X, False, None, "same"),
  ])

E("streaming_train", "examples/train_resnet_streaming.py", DEV,
  "mosaicml/streaming-style ImageNet example (StreamingDataset/StreamingDataLoader MDS shards, torchrun DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry script"),
    C('=with torch.autocast(device_type="cuda", dtype=amp_dtype):', "amp", R, True,
      "with torch.autocast(device_type=device.type, dtype=amp_dtype):",
      "autocast for 'cuda' does not cover NPU ops: eval runs fp32"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", ""),
    C('scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))', "amp", R, True,
      'scaler = torch.amp.GradScaler(device.type, enabled=(amp_dtype == torch.float16))',
      "a 'cuda' GradScaler does not scale NPU grads"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "raises without a CUDA build"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype):  # train step', "amp", R, True,
      "with torch.autocast(device_type=device.type, dtype=amp_dtype):  # train step",
      "fp16 training silently runs fp32 on NPU while the scaler is sized for fp16"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", ""),
    C("peak = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(device) / 2**30", ""),
  ])

E("streaming_yaml", "yamls/resnet50_streaming.yaml", DEV,
  "mosaicml/streaming-style run config (device/backend/pin_memory_device/compile mode, NCCL env hints)", [
    C("=device: cuda", "device_type", R, True, "device: npu", "becomes torch.device(cfg['device'], local_rank)"),
    C("=dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", "passed to init_process_group"),
    C("=compile_mode: max-autotune", "compile_mode", R, False, "compile_mode: default",
      "max-autotune benchmarks Triton templates; NPU Inductor runs without CUDA Triton (transfer_to_npu forces has_triton=False); "
      "behaviour of this mode on NPU unconfirmed"),
    C("=pin_memory_device: cuda", "pin_memory", R, True, "pin_memory_device: npu",
      "DataLoader pins host buffers for the CUDA device: fails without CUDA ('npu' accepted here unconfirmed; '' = default)"),
    C("=NCCL_SOCKET_IFNAME: ens", "env_var", R, True, "HCCL_SOCKET_IFNAME: ens",
      "HCCL picks its host NIC from HCCL_SOCKET_IFNAME / HCCL_IF_IP; the NCCL name is ignored, so multi-node rendezvous may use the wrong NIC"),
    C("=NCCL_IB_HCA: mlx5", "env_var", X, False, None, "NCCL InfiniBand selection; meaningless under HCCL"),
  ])

NVDEC = ("hardware video decode through NVDEC: no NPU path in decord or torchvision; decode on the CPU and copy the uint8 clip "
         "(Ascend DVPP VDEC not reachable from these libraries; unconfirmed alternatives)")

E("video_gpu_decode", "datasets/video_gpu_decode.py", EXP,
  "VideoMAE/InternVideo-style clip dataset with NVDEC decoding (decord gpu ctx, torchvision 'cuda' video backend) and a side-stream clip prefetcher", [
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", R, True, "device_id = torch.npu.current_device()", ""),
    C('torchvision.set_video_backend("cuda")', "unsupported_op_workaround", R, True,
      'torchvision.set_video_backend("pyav")', NVDEC),
    C("vr = VideoReader(path, ctx=gpu(self.device_id), num_threads=1)", "device_type", R, True,
      "vr = VideoReader(path, ctx=cpu(0), num_threads=2)",
      "default decoder: decord's gpu() context needs a CUDA-built decord; " + NVDEC),
    C('reader = torchvision.io.VideoReader(path, "video", device=f"cuda:{self.device_id}")', "device_type", R, True,
      'reader = torchvision.io.VideoReader(path, "video")', NVDEC),
    C("clip = self._decode_decord_cpu(path).cuda(non_blocking=True)", "tensor_to_device", R, True,
      "clip = self._decode_decord_cpu(path).npu(non_blocking=True)", "CPU fallback still copies to CUDA"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()", ""),
    C("=with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):", ""),
    C("=nxt = (self.transform(clips), labels.cuda(non_blocking=True))", "tensor_to_device", R, True,
      "nxt = (self.transform(clips), labels.npu(non_blocking=True))", ""),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", ""),
    C("with torch.cuda.stream(self.stream):  # transform the next batch", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.stream):  # transform the next batch", ""),
    C("labels.cuda(non_blocking=True))  # next", "tensor_to_device", R, True,
      "nxt = (self.transform(clips), labels.npu(non_blocking=True))  # next", ""),
  ])

TRITON_TUNE = ("GPU warp/stage tuning; triton-ascend maps programs to AI cores and sizes blocks to on-chip buffers, "
               "so the configs need re-tuning (details unconfirmed; performance only)")

E("triton_normalize", "kernels/fused_normalize.py", EXP,
  "GPU input-pipeline Triton kernel (fused uint8 NHWC -> normalised NCHW, autotuned, SM-count heuristics)", [
    C('triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK": 1024}),', TRITON_TUNE),
    C('triton.Config({"BLOCK": 8192}, num_warps=16, num_stages=3),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK": 8192}),', TRITON_TUNE),
    C('eviction_policy="evict_first")', "triton_kernel_tuning", R, False,
      "v = tl.load(src_base + offs * C + c, mask=mask, other=0)",
      "cache-eviction hint: triton-ascend support unconfirmed"),
    C("_SM_COUNT[device.index] = torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R, True,
      "_SM_COUNT[device.index] = torch.npu.get_device_properties(device).vector_core_num",
      "NPU device properties carry only name/total_memory/L2_cache_size/cube_core_num/vector_core_num: AttributeError"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", R, True,
      "return torch.bfloat16  # Atlas A2/A3 support bf16",
      "get_device_capability returns None on NPU (unless TORCH_NPU_DEVICE_CAPABILITY is set): unpacking fails"),
    C('assert x.is_cuda and x.dtype == torch.uint8 and x.dim() == 4', "device_type", R, True,
      'assert x.device.type == "npu" and x.dtype == torch.uint8 and x.dim() == 4, "expects a uint8 NHWC NPU tensor"',
      "is_cuda is False for NPU tensors"),
    C("_flip_w_kernel[(B * C * H,)](x, flags, H, W, C=C, BLOCK_W=block_w, num_warps=warps)", "triton_kernel_tuning", R, False,
      "_flip_w_kernel[(B * C * H,)](x, flags, H, W, C=C, BLOCK_W=block_w)", TRITON_TUNE),
    C('xb = torch.randint(0, 256, (64, 224, 224, 3), dtype=torch.uint8, device="cuda")', "device_type", R, True,
      'xb = torch.randint(0, 256, (64, 224, 224, 3), dtype=torch.uint8, device="npu")', "self-test entry"),
  ])

E("requirements_txt", "requirements.txt", EXP,
  "data-loading benchmark repo requirements.txt pinned to cu121 wheels (DALI, CuPy, Triton, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on NPU hosts torch comes from the CPU index (x86) or plain PyPI (aarch64)"),
    C("--extra-index-url https://pypi.nvidia.com", "custom_cuda_extension", X, False, None, "only needed for NVIDIA wheels"),
    C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0",
      "+cu121 build; torch_npu wheels pair with an exact torch version (2.1.0.postN needs torch 2.1.0, there is no 2.1.2)"),
    C("torchvision==0.16.2+cu121", "import_torch_npu", R, True, "torchvision==0.16.0", "matching CPU torchvision"),
    C("numpy>=1.24,<2.0", "import_torch_npu", A, True, "torch-npu==2.1.0.post10",
      "torch_npu itself is missing from the requirements"),
    C("nvidia-dali-cuda120==1.32.0", "custom_cuda_extension", X, False, None,
      "DALI GPU pipelines cannot run on the NPU host; remove or keep only for CPU-only pipelines (unconfirmed on aarch64)"),
    C("cupy-cuda12x==12.3.0", "custom_cuda_extension", X, False, None, "CuPy has no Ascend support (knowledge §6)"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "the repo's Triton kernels need the Ascend backend (triton-ascend package); CUDA Triton cannot launch on NPU"),
    C("pynvml==11.5.0", "torch_cuda_api", X, False, None, "NVML bindings; no NPU equivalent (torch.npu.utilization instead)"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "same"),
  ])

E("environment_yml", "environment.yml", EXP,
  "libffcv/ffcv-style conda environment.yml (pytorch + nvidia channels, pytorch-cuda, cupy, DALI via pip)", [
    C("=- nvidia", "import_torch_npu", X, False, None, "channel only serves the CUDA builds removed below"),
    C("=- pytorch=2.1.0", "import_torch_npu", R, False, "- pytorch=2.1.0=*cpu*",
      "torch_npu documents pip torch wheels; whether it loads on the conda CPU build is unconfirmed"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", X, True, None,
      "pins the CUDA build of pytorch; torch_npu needs the CPU build of the same version"),
    C("=- cudatoolkit-dev=11.7", "custom_cuda_extension", X, False, None,
      "nvcc toolkit for CUDA builds; useless on NPU (may not even resolve on aarch64, unconfirmed)"),
    C("=- cupy", "custom_cuda_extension", X, False, None, "CuPy has no Ascend support; ffcv's use of it is optional (unconfirmed)"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post10",
      "torch_npu (matching torch 2.1.0) has to come from pip"),
    C("- --extra-index-url https://developer.download.nvidia.com/compute/redist", "custom_cuda_extension", X, False, None,
      "NVIDIA redist index for DALI"),
    C("- nvidia-dali-cuda110==1.30.0", "custom_cuda_extension", X, False, None,
      "DALI GPU pipelines cannot run on NPU (wheel on aarch64 unconfirmed)"),
    C("CUDA_DEVICE_ORDER: PCI_BUS_ID", "env_var", X, False, None, "CUDA-only device ordering; ignored on NPU"),
  ])

CUPY = "CuPy has no Ascend support (knowledge §6): rewrite with torch ops on the NPU"

E("cupy_gpu_aug", "augment/elastic.py", EXP,
  "nnU-Net/MONAI-style GPU elastic deformation for 3-D patches with CuPy + cupyx.scipy.ndimage over DLPack", [
    C("=import cupy as cp", "custom_cuda_extension", X, True, None, CUPY),
    C("from cupyx.scipy import ndimage as cndi", "custom_cuda_extension", X, True, None, CUPY),
    C("return cp.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))", "unsupported_op_workaround", R, True,
      "return t.contiguous()", "torch.utils.dlpack.to_dlpack is marked unsupported on NPU in Ascend's API list"),
    C("return torch.utils.dlpack.from_dlpack(a.toDlpack())", "unsupported_op_workaround", R, True,
      "return a", "torch.utils.dlpack.from_dlpack is marked unsupported on NPU in Ascend's API list"),
    C("ptr = torch.cuda.current_stream(self.device).cuda_stream", "torch_cuda_api", X, True, None,
      "hands torch's raw CUDA stream to CuPy; the whole _TorchStream shim goes with CuPy"),
    C('assert image.device.type == "cuda", "elastic_deform runs on CUDA tensors"', "device_type", R, True,
      'assert image.device.type == "npu", "elastic_deform runs on NPU tensors"', "NPU batches fail the assertion"),
    C("grid = cp.mgrid[0:d, 0:h, 0:w].astype(cp.float32)", "custom_cuda_extension", R, True,
      "grid = torch.stack(torch.meshgrid(torch.arange(d), torch.arange(h), torch.arange(w), indexing='ij')).float().to(image.device)",
      CUPY),
    C('res = cndi.map_coordinates(src, coords, order=1, mode="nearest")', "custom_cuda_extension", R, True,
      "res = F.grid_sample(src[None, None], norm_grid, mode='bilinear', padding_mode='border', align_corners=True)[0, 0]",
      CUPY + " (grid_sample has NPU kernels incl. grid_sampler_3d)"),
    C('res = cndi.map_coordinates(src, coords, order=0, mode="nearest")', "custom_cuda_extension", R, True,
      "res = F.grid_sample(src[None, None], norm_grid, mode='nearest', padding_mode='border', align_corners=True)[0, 0]",
      CUPY),
  ])

E("deit_dist_utils", "utils/dist_utils.py", EXP,
  "facebookresearch/deit samplers.py RASampler + utils.py (SmoothedValue/MetricLogger, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64,", "unsupported_op_workaround", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32,",
      "Ascend's API list gives all_reduce dtypes bf16/fp16/fp32/int32/int64/bool: the fp64 meter sync is not supported"),
    C("device='cuda')", "device_type", R, True, "device='npu')", "meter sync tensor hard-wired to CUDA"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: device_count() is 0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", ""),
    C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'", ""),
  ])

E("fastloader_transfer", "fastloader/transfer.py", DEV,
  "pinned-memory / non_blocking transfer helpers of a data-loading library (cudaHostRegister, pinned staging ring with CUDA events)", [
    C("=return torch.cuda.is_available()", "pin_memory", R, False,
      "return torch.cuda.is_available() or torch.npu.is_available()",
      "pinning silently switched off on the NPU host (DataLoader pin_memory=use_pinned()): slower H2D copies, results unchanged"),
    C('device = torch.device("cuda", torch.cuda.current_device())', "device_type", R, True,
      'device = torch.device("npu", torch.npu.current_device())', "default target of to_device()"),
    C("err = torch.cuda.cudart().cudaHostRegister(ptr, nbytes, 0)", "pin_memory", R, True,
      "t = t.pin_memory()  # no host-register API for NPU in the knowledge: pin by copy",
      "torch.cuda.cudart() is not redirected by torch_npu and needs CUDA; public helper, also used by memmap_as_pinned_tensor"),
    C("torch.cuda.cudart().cudaHostUnregister(ptr)", "pin_memory", X, True, None, "counterpart of cudaHostRegister"),
    C('self.device = device or torch.device("cuda")', "device_type", R, True,
      'self.device = device or torch.device("npu")', ""),
    C("self.copy_stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", R, True,
      "self.copy_stream = torch.npu.Stream(device=self.device)", ""),
    C("with torch.cuda.stream(self.copy_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.copy_stream):", ""),
    C("ev = torch.cuda.Event()", "torch_cuda_api", R, True, "ev = torch.npu.Event()", ""),
    C("torch.cuda.current_stream(self.device).wait_event(ev)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_event(ev)", ""),
    C("dev.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "dev.record_stream(torch.npu.current_stream(self.device))", ""),
  ])

E("slurm_openclip_sh", "scripts/slurm_train_laion.sh", EXP,
  "mlfoundations/open_clip-style SLURM launch script (one task per GPU, NCCL over InfiniBand, --gpu-decode webdataset run)", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "the GRES name is whatever the cluster admin configured for Ascend cards (unconfirmed); srun's --accel-bind=gn binds GPUs only"),
    C("module load cuda/12.1 nccl/2.18.3 openmpi/4.1.5", "env_var", R, True,
      "module load openmpi/4.1.5 && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CANN environment (set_env.sh) must be sourced or torch_npu cannot load its runtime libraries"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, True, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL chooses its host NIC from HCCL_SOCKET_IFNAME/HCCL_IF_IP; the NCCL variable is ignored"),
    C("--dist-backend nccl", "dist_backend", R, True, "--dist-backend hccl \\", "passed to init_process_group"),
    C("nvidia-smi --query-gpu=index,name,memory.total", "torch_cuda_api", R, False,
      "srun --ntasks-per-node=1 bash -c 'echo \"== $(hostname)\"; npu-smi info' \\",
      "post-run inventory only: fails without nvidia-smi but the job has finished"),
  ])
