# Labels for probe341: semi-supervised classification / segmentation (USB, TorchSSL, FixMatch,
# Mean Teacher, UniMatch (V1/V2), U2PL, CPS/TorchSemiSeg) moving from CUDA to Ascend NPU.
#
# One entry per upstream file; one C(...) per line a careful porter edits.
# "required" = the unchanged line fails, computes something wrong or silently does the wrong thing on
# an Ascend host with torch_npu; perf-only / no-op / unconfirmed edits are required=False.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu / 'npu' device use; the pinned "
               "torch (<2.5) has no device-backend autoload")

# ---------------------------------------------------------------------------------------------------------------
# USB (semilearn) / TorchSSL
# ---------------------------------------------------------------------------------------------------------------

E("usb_train", "train.py", "explicit_replacement",
  "USB (microsoft/Semi-supervised-learning) train.py: argparse, mp.spawn(main_worker), nccl default",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
        "parser.add_argument('--dist-backend', default='hccl', type=str,",
        "default backend is passed to init_process_group; NCCL does not exist on Ascend (YAML configs override it too)"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "returns 0 on an NPU host: world_size becomes 0 and mp.spawn starts no workers / rank % 0 crashes"),
  ])

E("usb_algorithmbase", "semilearn/core/algorithmbase.py", "explicit_replacement",
  "USB semilearn/core/algorithmbase.py: AlgorithmBase with torch.cuda.amp, process_batch .cuda(self.gpu)",
  [
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
        "from torch.npu.amp import autocast, GradScaler",
        "torch.cuda.amp autocast/GradScaler disable themselves (warning only) when CUDA is absent, so --amp silently trains in fp32"),
      C("self.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "self.ngpus_per_node = torch.npu.device_count()",
        "stored but not used by the base training loop; would silently be 0 on NPU"),
      C("var = {k: v.cuda(self.gpu) for k, v in var.items()}", "tensor_to_device", "replace", True,
        "var = {k: v.npu(self.gpu) for k, v in var.items()}", "Tensor.cuda raises without CUDA"),
      C("var = var.cuda(self.gpu)", "tensor_to_device", "replace", True,
        "var = var.npu(self.gpu)", "Tensor.cuda raises without CUDA"),
      C("x = {k: v.cuda(self.gpu) for k, v in x.items()}", "tensor_to_device", "replace", True,
        "x = {k: v.npu(self.gpu) for k, v in x.items()}", "evaluation batch transfer"),
      C("x = x.cuda(self.gpu)", "tensor_to_device", "replace", True,
        "x = x.npu(self.gpu)", "evaluation batch transfer"),
      C("y = y.cuda(self.gpu)", "tensor_to_device", "replace", True,
        "y = y.npu(self.gpu)", "evaluation label transfer"),
  ])

E("usb_build", "semilearn/core/utils/build.py", "device_branch_or_abstraction",
  "USB semilearn/core/utils/build.py: get_data_loader/get_optimizer and send_model_cuda device helper",
  [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():",
        "is_available() is False on an NPU host, so the helper raises 'ONLY GPU TRAINING IS SUPPORTED'"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "binds each spawned worker to its device; CUDA call fails without CUDA"),
      C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "Module.cuda raises"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda raises"),
      C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
        "single-device branch"),
      C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
        "model = model.npu()",
        "torch.nn.DataParallel is not supported on Ascend (API list: ✘); fall back to one device or DDP"),
  ])

E("torchssl_flexmatch", "models/flexmatch/flexmatch.py", "explicit_replacement",
  "TorchSSL models/flexmatch/flexmatch.py: classwise_acc/selected_label on GPU, CUDA events, torch.cuda.amp",
  [
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
        "from torch.npu.amp import autocast, GradScaler",
        "CUDA autocast/GradScaler silently disable themselves without CUDA (--amp would train fp32 unscaled)"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "0 on NPU: `args.rank % ngpus_per_node` raises ZeroDivisionError at the first checkpoint"),
      C("start_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_batch = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_batch = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("start_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_run = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("end_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_run = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("selected_label = selected_label.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "selected_label = selected_label.npu(args.gpu)", "pseudo-label bookkeeping tensor"),
      C("classwise_acc = torch.zeros((args.num_classes,)).cuda(args.gpu)", "tensor_to_device", "replace", True,
        "classwise_acc = torch.zeros((args.num_classes,)).npu(args.gpu)", "per-class learning status tensor"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "CUDA synchronize initialises CUDA and raises without it"),
      C("x_lb, x_ulb_w, x_ulb_s = x_lb.cuda(args.gpu), x_ulb_w.cuda(args.gpu), x_ulb_s.cuda(args.gpu)",
        "tensor_to_device", "replace", True,
        "x_lb, x_ulb_w, x_ulb_s = x_lb.npu(args.gpu), x_ulb_w.npu(args.gpu), x_ulb_s.npu(args.gpu)",
        "labeled / weak / strong batch transfer"),
      C("x_ulb_idx = x_ulb_idx.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "x_ulb_idx = x_ulb_idx.npu(args.gpu)", "index tensor used to scatter into selected_label"),
      C("y_lb = y_lb.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "y_lb = y_lb.npu(args.gpu)", "label transfer"),
      C("torch.cuda.synchronize(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(args.gpu)", "second synchronize, after end_run.record()"),
      C("x, y = x.cuda(args.gpu), y.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "x, y = x.npu(args.gpu), y.npu(args.gpu)", "evaluation transfer"),
      C("checkpoint = torch.load(load_path)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(load_path, map_location='cpu')",
        "checkpoints written on GPU hold CUDA storages; deserialising them without map_location raises when CUDA is unavailable"),
  ])

E("usb_timer_hook", "semilearn/core/hooks/timer.py", "explicit_replacement",
  "USB semilearn/core/hooks/timer.py: TimerHook timing steps with torch.cuda.Event",
  [
      C("algorithm.start_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "algorithm.start_batch = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("algorithm.end_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "algorithm.end_batch = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("algorithm.start_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "algorithm.start_run = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("algorithm.end_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "algorithm.end_run = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises without CUDA"),
      C("torch.cuda.synchronize(algorithm.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(algorithm.gpu)", "raises without CUDA"),
  ])

E("usb_misc", "semilearn/core/utils/misc.py", "explicit_replacement",
  "USB semilearn/core/utils/misc.py: seeding, EMA, TBLog, logging-only memory helper, reduce helper",
  [
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(seed)",
        "queued lazily and never run without CUDA (silent no-op); torch.manual_seed above is expected to seed the NPU generator too (unconfirmed)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", "silent no-op without CUDA (see above; unconfirmed)"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():", "logging helper only: would print 'N/A' instead of the NPU peak memory"),
      C("mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 1024 ** 3", "log-only memory statistic"),
      C("if dist.get_backend() == dist.Backend.NCCL:", "dist_backend", "replace", True,
        "if dist.get_backend() in (dist.Backend.NCCL, 'hccl'):",
        "backend-string comparison is not rewritten by anything: with HCCL the branch is skipped and a CPU tensor reaches all_reduce"),
      C("tensor = tensor.cuda()", "tensor_to_device", "replace", True,
        "tensor = tensor.npu()", "collective tensor must live on the device"),
  ])

E("usb_flexmatch_cfg", "config/classic_cv/flexmatch/flexmatch_cifar10_40_0.yaml", "explicit_replacement",
  "USB config/classic_cv/flexmatch/*.yaml: per-run YAML that overrides argparse defaults",
  [
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
        "over_write_args_from_file() overrides --dist-backend, so the YAML value is what init_process_group receives"),
  ])

E("usb_requirements", "requirements.txt", "explicit_replacement",
  "USB requirements.txt pinning CUDA 11.3 torch wheels",
  [
      C("# --------- pytorch (CUDA 11.3 wheels) --------- #", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post10", "torch_npu is not pulled in by anything else; pin it to the torch version below (CANN 8.0.0 pairing)"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts install the CPU torch build; on aarch64 plain PyPI works, so the CUDA index is only dead weight"),
      C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "no torch_npu release exists for torch 1.12 and +cu113 wheels are CUDA builds"),
      C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "must match the new torch version"),
      C("torchaudio==0.12.1+cu113", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
        "must match the new torch version (audio benchmarks run the CPU parts of torchaudio)"),
  ])

E("usb_run_sh", "scripts/run_classic_cv.sh", "explicit_replacement",
  "USB-style benchmark launcher shell script (CUDA_VISIBLE_DEVICES, nvidia-smi)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before python imports torch_npu (libhccl / ASCEND_OPP_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "user-chosen device list: ignored by the Ascend runtime, so jobs would land on devices 0..n-1 instead"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info", "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
  ])

E("usb_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "USB docker/Dockerfile on nvidia/cuda base image with cu113 wheels",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver mounted from the host); image tag is plausible, not verified"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime variable; ignored on Ascend (devices are passed with --device /dev/davinciN)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime variable; ignored on Ascend"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "only read by nvcc extension builds; no effect on Ascend"),
      C("RUN pip install --no-cache-dir torch==1.12.1+cu113 torchvision==0.13.1+cu113 torchaudio==0.12.1+cu113 \\",
        "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post10 \\",
        "CUDA wheels -> CPU torch + matching torch_npu"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "CPU wheel index on x86; harmless leftover otherwise"),
  ])

E("usb_eval", "eval.py", "explicit_replacement",
  "USB eval.py: load EMA checkpoint and report accuracy",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("checkpoint = torch.load(checkpoint_path)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
        "checkpoint saved from CUDA tensors cannot be deserialised without CUDA unless mapped"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU: model stays on CPU while the loop below moves images to the device"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "Module.cuda raises"),
      C("image = image.type(torch.FloatTensor).cuda()", "tensor_to_device", "replace", True,
        "image = image.type(torch.FloatTensor).npu()", "Tensor.cuda raises"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# FixMatch-pytorch (kekmodel)
# ---------------------------------------------------------------------------------------------------------------

E("fixmatch_train", "train.py", "device_branch_or_abstraction",
  "kekmodel/FixMatch-pytorch train.py: args.device chosen once, NVIDIA apex AMP, torch.distributed.launch",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "guarded by n_gpu > 0 and a silent no-op without CUDA; torch.manual_seed already ran (unconfirmed for NPU generator)"),
      C("device = torch.device('cuda', args.gpu_id)", "device_type", "replace", True,
        "device = torch.device('npu', args.gpu_id)",
        "single point where the device is chosen; every later .to(args.device) follows it"),
      C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "args.n_gpu = torch.npu.device_count()",
        "0 on NPU, but n_gpu only gates CUDA seeding and a log line in this script"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', args.local_rank)", "distributed branch of the device choice"),
      C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl')", "NCCL backend unavailable on Ascend"),
      C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.resume, map_location='cpu')", "resume from a GPU-written checkpoint"),
      C("=from apex import amp", "amp", "replace", True,
        "from torch.npu.amp import GradScaler, autocast",
        "NVIDIA apex (CUDA extensions) cannot be installed on Ascend; --amp dies with ImportError. Alternative: install Ascend's apex patch, which keeps the apex.amp API"),
      C("model, optimizer = amp.initialize(", "amp", "replace", False,
        "scaler = GradScaler()",
        "only needed on the native torch.npu.amp route (recommended); Ascend apex keeps amp.initialize"),
      C("from apex import amp  # noqa: F811", "amp", "replace", True,
        "from torch.npu.amp import GradScaler, autocast  # noqa: F811", "second import of apex.amp inside train()"),
      C("with amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", "replace", False,
        "scaler.scale(loss).backward()",
        "native route only (then also scaler.step/update and an autocast region around the forward); Ascend apex keeps scale_loss"),
  ])

E("fixmatch_ema", "models/ema.py", "device_branch_or_abstraction",
  "kekmodel/FixMatch-pytorch models/ema.py (+ timm ModelEmaV2): device-agnostic EMA teacher",
  [])

# ---------------------------------------------------------------------------------------------------------------
# Mean Teacher (CuriousAI/mean-teacher, pytorch/)
# ---------------------------------------------------------------------------------------------------------------

E("mt_main", "pytorch/main.py", "explicit_replacement",
  "CuriousAI mean-teacher pytorch/main.py: nn.DataParallel(...).cuda() student/EMA teacher",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('LOG.info("Using %d GPU(s): %s", torch.cuda.device_count(), torch.cuda.get_device_name(0))',
        "torch_cuda_api", "replace", True,
        'LOG.info("Using %d NPU(s): %s", torch.npu.device_count(), torch.npu.get_device_name(0))',
        "get_device_name initialises CUDA and raises without it"),
      C("model = nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
        "model = model.npu()",
        "nn.DataParallel is unsupported on Ascend; single device here (DDP would be the multi-device route)"),
      C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.resume, map_location='cpu')", "GPU-written checkpoint"),
      C("class_criterion = nn.CrossEntropyLoss(size_average=False, ignore_index=NO_LABEL).cuda()",
        "tensor_to_device", "replace", True,
        "class_criterion = nn.CrossEntropyLoss(size_average=False, ignore_index=NO_LABEL).npu()", "Module.cuda raises"),
      C("input_var = torch.autograd.Variable(input)", "tensor_to_device", "replace", True,
        "input_var = input.npu(non_blocking=True)",
        "DataParallel used to scatter the CPU batch onto the GPUs; once it is gone the batch must be moved explicitly"),
      C("ema_input_var = torch.autograd.Variable(ema_input)", "tensor_to_device", "replace", True,
        "ema_input_var = ema_input.npu(non_blocking=True)", "same implicit scatter for the EMA model input"),
      C("target_var = torch.autograd.Variable(target.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "target_var = target.npu(non_blocking=True)", "Tensor.cuda raises"),
      C("class_criterion = nn.CrossEntropyLoss(reduction='sum', ignore_index=NO_LABEL).cuda()",
        "tensor_to_device", "replace", True,
        "class_criterion = nn.CrossEntropyLoss(reduction='sum', ignore_index=NO_LABEL).npu()", "validation criterion"),
      C("input_var = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input_var = input.npu(non_blocking=True)", "validation batch"),
      C("=target_var = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target_var = target.npu(non_blocking=True)", "validation labels"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
        "--gpus selects devices by masking; the Ascend runtime ignores CUDA_VISIBLE_DEVICES so npu:0 would be the wrong card"),
  ])

E("mt_data", "pytorch/mean_teacher/data.py", "explicit_replacement",
  "mean-teacher mean_teacher/data.py (TwoStreamBatchSampler) plus an apex-style CUDA-stream DataPrefetcher from a fork",
  [
      C("def fast_collate(batch, memory_format=torch.channels_last):", "unsupported_op_workaround", "replace", False,
        "def fast_collate(batch, memory_format=torch.contiguous_format):",
        "msFmkTransplt docs list channels_last as unsupported on NPU; effect here (strided CPU uint8 batch) unconfirmed"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream()", "CUDA stream cannot be created without CUDA"),
      C("self.mean = torch.tensor([m * 255 for m in mean]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.mean = torch.tensor([m * 255 for m in mean]).npu().view(1, 3, 1, 1)", "normalisation constants"),
      C("self.std = torch.tensor([s * 255 for s in std]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.std = torch.tensor([s * 255 for s in std]).npu().view(1, 3, 1, 1)", "normalisation constants"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "side-stream copy"),
      C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True)", "async H2D copy"),
      C("self.next_ema_input = self.next_ema_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_ema_input = self.next_ema_input.npu(non_blocking=True)", "async H2D copy"),
      C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True)", "async H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("=input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "input.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
      C("ema_input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "ema_input.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
      C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target.record_stream(torch.npu.current_stream())", "caching-allocator stream bookkeeping"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# UniMatch (V1) / UniMatch V2
# ---------------------------------------------------------------------------------------------------------------

E("unimatch_main", "unimatch.py", "explicit_replacement",
  "LiheYoung/UniMatch unimatch.py: DDP + SyncBatchNorm DeepLabV3+, fused weak/strong perturbation training",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda raises"),
      C("criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).npu(local_rank)",
        "loss module moved with .cuda (holds class weights if configured)"),
      C("criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).npu(local_rank)", "OHEM loss module"),
      C("criterion_u = nn.CrossEntropyLoss(reduction='none').cuda(local_rank)", "tensor_to_device", "replace", True,
        "criterion_u = nn.CrossEntropyLoss(reduction='none').npu(local_rank)", "unsupervised loss module"),
      C("checkpoint = torch.load(os.path.join(args.save_path, 'latest.pth'))", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(os.path.join(args.save_path, 'latest.pth'), map_location='cpu')",
        "auto-resume of a checkpoint written from CUDA tensors"),
      C("img_x, mask_x = img_x.cuda(), mask_x.cuda()", "tensor_to_device", "replace", True,
        "img_x, mask_x = img_x.npu(), mask_x.npu()", "batch transfer"),
      C("img_u_w = img_u_w.cuda()", "tensor_to_device", "replace", True, "img_u_w = img_u_w.npu()", "batch transfer"),
      C("img_u_s1, img_u_s2, ignore_mask = img_u_s1.cuda(), img_u_s2.cuda(), ignore_mask.cuda()", "tensor_to_device",
        "replace", True, "img_u_s1, img_u_s2, ignore_mask = img_u_s1.npu(), img_u_s2.npu(), ignore_mask.npu()", "batch transfer"),
      C("cutmix_box1, cutmix_box2 = cutmix_box1.cuda(), cutmix_box2.cuda()", "tensor_to_device", "replace", True,
        "cutmix_box1, cutmix_box2 = cutmix_box1.npu(), cutmix_box2.npu()", "batch transfer"),
      C("img_u_w_mix = img_u_w_mix.cuda()", "tensor_to_device", "replace", True,
        "img_u_w_mix = img_u_w_mix.npu()", "batch transfer"),
      C("img_u_s1_mix, img_u_s2_mix = img_u_s1_mix.cuda(), img_u_s2_mix.cuda()", "tensor_to_device", "replace", True,
        "img_u_s1_mix, img_u_s2_mix = img_u_s1_mix.npu(), img_u_s2_mix.npu()", "batch transfer"),
      C("ignore_mask_mix = ignore_mask_mix.cuda()", "tensor_to_device", "replace", True,
        "ignore_mask_mix = ignore_mask_mix.npu()", "batch transfer"),
  ])

E("unimatch_dist_helper", "util/dist_helper.py", "explicit_replacement",
  "UniMatch/U2PL util/dist_helper.py setup_distributed (SLURM or torch.distributed.launch env)",
  [
      C('def setup_distributed(backend="nccl", port=None):', "dist_backend", "replace", True,
        'def setup_distributed(backend="hccl", port=None):', "every caller relies on the default backend"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "0 on NPU -> `rank % num_gpus` raises ZeroDivisionError"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "per-process device binding"),
  ])

E("unimatch_supervised", "supervised.py", "explicit_replacement",
  "UniMatch supervised.py: labeled-only baseline + the shared sliding-window evaluate()",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "evaluation image"),
      C("final = torch.zeros(b, 19, h, w).cuda()", "tensor_to_device", "replace", True,
        "final = torch.zeros(b, 19, h, w, device=img.device)", "sliding-window accumulator"),
      C("reduced_intersection = torch.from_numpy(intersection).cuda()", "tensor_to_device", "replace", True,
        "reduced_intersection = torch.from_numpy(intersection).npu()", "HCCL all_reduce needs device tensors"),
      C("reduced_union = torch.from_numpy(union).cuda()", "tensor_to_device", "replace", True,
        "reduced_union = torch.from_numpy(union).npu()", "HCCL all_reduce needs device tensors"),
      C("reduced_target = torch.from_numpy(target).cuda()", "tensor_to_device", "replace", True,
        "reduced_target = torch.from_numpy(target).npu()", "HCCL all_reduce needs device tensors"),
      C("=model.cuda(local_rank)", "tensor_to_device", "replace", True, "model.npu(local_rank)", "Module.cuda raises"),
      C("criterion = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).npu(local_rank)", "loss module"),
      C("criterion = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).npu(local_rank)", "OHEM loss module"),
      C("img, mask = img.cuda(), mask.cuda()", "tensor_to_device", "replace", True,
        "img, mask = img.npu(), mask.npu()", "training batch"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU cached blocks are simply not released after evaluation"),
  ])

E("unimatch_train_sh", "scripts/train.sh", "explicit_replacement",
  "UniMatch scripts/train.sh: torch.distributed.launch wrapper",
  [
      C('now=$(date +"%Y%m%d_%H%M%S")', "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on Ascend; the list starts at 0 and ranks use local_rank, so device selection is unchanged here"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only workaround for the original 3090 boxes; HCCL ignores it and has no P2P-disable counterpart"),
  ])

E("unimatch_v2_main", "unimatch_v2.py", "explicit_replacement",
  "UniMatch V2 unimatch_v2.py: DINOv2-DPT, EMA teacher, bf16/fp16 torch.cuda.amp",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
        "replace", True, "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "torch.cuda.is_bf16_supported() calls current_device() and raises without CUDA"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda raises"),
      C("=model_ema.cuda()", "tensor_to_device", "replace", True, "model_ema.npu()", "EMA teacher moved with .cuda()"),
      C("criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).npu(local_rank)", "loss module"),
      C("criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device",
        "replace", True, "criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).npu(local_rank)", "OHEM loss"),
      C("criterion_u = nn.CrossEntropyLoss(reduction='none').cuda(local_rank)", "tensor_to_device", "replace", True,
        "criterion_u = nn.CrossEntropyLoss(reduction='none').npu(local_rank)", "unsupervised loss"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(cfg['amp'] and amp_dtype == torch.float16))", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=(cfg['amp'] and amp_dtype == torch.float16))",
        "CUDA GradScaler disables itself without CUDA: fp16 runs unscaled"),
      C("img_x, mask_x = img_x.cuda(non_blocking=True), mask_x.cuda(non_blocking=True)", "tensor_to_device", "replace",
        True, "img_x, mask_x = img_x.npu(non_blocking=True), mask_x.npu(non_blocking=True)", "batch transfer"),
      C("img_u_w, ignore_mask = img_u_w.cuda(non_blocking=True), ignore_mask.cuda(non_blocking=True)",
        "tensor_to_device", "replace", True,
        "img_u_w, ignore_mask = img_u_w.npu(non_blocking=True), ignore_mask.npu(non_blocking=True)", "batch transfer"),
      C("img_u_s1, img_u_s2 = img_u_s1.cuda(non_blocking=True), img_u_s2.cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "img_u_s1, img_u_s2 = img_u_s1.npu(non_blocking=True), img_u_s2.npu(non_blocking=True)",
        "batch transfer"),
      C("cutmix_box1, cutmix_box2 = cutmix_box1.cuda(non_blocking=True), cutmix_box2.cuda(non_blocking=True)",
        "tensor_to_device", "replace", True,
        "cutmix_box1, cutmix_box2 = cutmix_box1.npu(non_blocking=True), cutmix_box2.npu(non_blocking=True)",
        "batch transfer"),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=cfg['amp'], dtype=amp_dtype):", "amp", "replace", True,
        "with torch.no_grad(), torch.npu.amp.autocast(enabled=cfg['amp'], dtype=amp_dtype):",
        "CUDA autocast is disabled (warning only) when CUDA is absent: teacher silently runs fp32"),
      C("=with torch.cuda.amp.autocast(enabled=cfg['amp'], dtype=amp_dtype):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=cfg['amp'], dtype=amp_dtype):", "student forward autocast region"),
  ])

E("unimatch_v2_attention", "model/backbone/dinov2_layers/attention.py", "explicit_replacement",
  "DINOv2 dinov2/layers/attention.py as vendored by UniMatch V2: optional xFormers MemEffAttention",
  [
      C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
        "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)",
        "xFormers has no NPU build; the guarded import falls back to the naive softmax attention, so nothing breaks. "
        "Re-pointing the fast path (and its XFORMERS_AVAILABLE gate) at SDPA gets NPU FlashAttention: perf only"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# U2PL
# ---------------------------------------------------------------------------------------------------------------

E("u2pl_train_semi", "train_semi.py", "explicit_replacement",
  "Haochen-Wang409/U2PL train_semi.py: student/EMA-teacher DDP, entropy-based memory-bank contrastive loss",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=cudnn.benchmark = True", "compile_mode", "npu_only_addition", False,
        "torch.npu.set_compile_mode(jit_compile=False)",
        "masked selections / percentile thresholds give dynamic shapes every step; msFmkTransplt advice is jit_compile=False (perf)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda raises"),
      C("model_teacher = model_teacher.cuda()", "tensor_to_device", "replace", True,
        "model_teacher = model_teacher.npu()", "EMA teacher"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "class prototype buffer (closing line of torch.zeros(...))"),
      C("image_l, label_l = image_l.cuda(), label_l.cuda()", "tensor_to_device", "replace", True,
        "image_l, label_l = image_l.npu(), label_l.npu()", "labeled batch"),
      C("image_u = image_u.cuda()", "tensor_to_device", "replace", True, "image_u = image_u.npu()", "unlabeled batch"),
      C("=.cuda(),", "tensor_to_device", "replace", True, ".npu(),",
        "ones mask built on CPU inside a chained expression (negative_high_entropy=False path)"),
      C("mem=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
        "mem=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,", "log-only: prints 0MB without CUDA"),
      C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", "validation batch"),
      C("labels = labels.long().cuda()", "tensor_to_device", "replace", True, "labels = labels.long().npu()",
        "validation labels"),
      C("reduced_intersection = torch.from_numpy(intersection).cuda()", "tensor_to_device", "replace", True,
        "reduced_intersection = torch.from_numpy(intersection).npu()", "HCCL all_reduce needs device tensors"),
      C("reduced_union = torch.from_numpy(union).cuda()", "tensor_to_device", "replace", True,
        "reduced_union = torch.from_numpy(union).npu()", "HCCL all_reduce needs device tensors"),
      C("reduced_target = torch.from_numpy(target).cuda()", "tensor_to_device", "replace", True,
        "reduced_target = torch.from_numpy(target).npu()", "HCCL all_reduce needs device tensors"),
  ])

E("u2pl_loss_helper", "u2pl/utils/loss_helper.py", "explicit_replacement",
  "U2PL u2pl/utils/loss_helper.py: compute_contra_memobank_loss, OHEM criteria",
  [
      C("F.one_hot(temp_tar.clone().detach(), num_cls).float().cuda()", "tensor_to_device", "replace", True,
        "F.one_hot(temp_tar.clone().detach(), num_cls).float().npu()", "Tensor.cuda raises even on a device tensor"),
      C("reco_loss = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
        "reco_loss = torch.tensor(0.0, device=rep.device)", "loss accumulator"),
      C("prototype = torch.zeros((prob_indices_l.shape[-1], num_queries, 1, num_feat)).cuda()", "tensor_to_device",
        "replace", True, "prototype = torch.zeros((prob_indices_l.shape[-1], num_queries, 1, num_feat), device=rep.device)",
        "prototype buffer"),
      C("seg_feat_low_entropy_list[i][seg_low_entropy_idx].clone().cuda()", "tensor_to_device", "replace", True,
        "seg_feat_low_entropy_list[i][seg_low_entropy_idx].clone().npu()", "anchor features"),
      C("negative_feat = memobank[valid_classes[i]][0].clone().cuda()", "tensor_to_device", "replace", True,
        "negative_feat = memobank[valid_classes[i]][0].clone().npu()", "memory bank lives on the host; copy to device"),
      C("=.cuda()", "tensor_to_device", "replace", True, ".npu()", "positive_feat chained expression"),
      C("seg_logits / temp, torch.zeros(num_queries).long().cuda()", "tensor_to_device", "replace", True,
        "seg_logits / temp, torch.zeros(num_queries, dtype=torch.long, device=seg_logits.device)", "contrastive targets"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "class weights of Criterion(use_weight=True)"),
      C(").cuda(torch.cuda.current_device())", "tensor_to_device", "replace", True,
        ").npu(torch.npu.current_device())", "OHEM class weights; current_device() raises without CUDA too"),
  ])

E("u2pl_utils", "u2pl/utils/utils.py", "explicit_replacement",
  "U2PL u2pl/utils/utils.py: memory-bank enqueue, load_state, seeding",
  [
      C("keys = torch.cat(gathered_list, dim=0).cuda()", "tensor_to_device", "replace", True,
        "keys = torch.cat(gathered_list, dim=0).npu()", "gathered keys"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed precedes it (unconfirmed for the NPU generator)"),
      C("return storage.cuda()", "tensor_to_device", "replace", True, "return storage",
        "map_location callback moving every storage to CUDA raises on NPU hosts; keep on CPU, load_state_dict copies to device"),
  ])

E("u2pl_train_sh", "experiments/cityscapes/744/ours/train.sh", "explicit_replacement",
  "U2PL experiments/*/train.sh, two-node torch.distributed.launch variant",
  [
      C('now=$(date +"%Y%m%d_%H%M%S")', "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "covers every device of an 8-card node, so ignoring it changes nothing; rename for correctness"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug verbosity only; HCCL logs through the CANN log level (mapping unconfirmed)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL ignores NCCL_*; HCCL_SOCKET_IFNAME is the documented counterpart. Whether HCCL's default NIC choice "
        "breaks this two-node job depends on the host (unconfirmed)"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no HCCL counterpart"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# CPS / TorchSemiSeg (furnace)
# ---------------------------------------------------------------------------------------------------------------

E("cps_engine", "furnace/engine/engine.py", "explicit_replacement",
  "charlesCXK/TorchSemiSeg furnace/engine/engine.py: Engine context manager, env:// process group",
  [
      C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.local_rank)", "raises without CUDA"),
      C("dist.init_process_group(backend=\"nccl\", init_method='env://')", "dist_backend", "replace", True,
        "dist.init_process_group(backend=\"hccl\", init_method='env://')", "NCCL unavailable"),
      C('gpus = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
        'gpus = os.environ["ASCEND_RT_VISIBLE_DEVICES"]',
        "KeyError on an Ascend host where nobody exports CUDA_VISIBLE_DEVICES"),
      C("tmp = torch.load(self.continue_state_object)", "tensor_to_device", "replace", True,
        "tmp = torch.load(self.continue_state_object, map_location=torch.device('cpu'))",
        "non-distributed resume of a GPU checkpoint (the distributed branch already maps to CPU)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("cps_train", "exp.city/city8.res50v3+.CPS/train.py", "device_branch_or_abstraction",
  "TorchSemiSeg exp.city/*.CPS/train.py: cross pseudo supervision with apex DDP/SyncBN",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from apex.parallel import DistributedDataParallel, SyncBatchNorm", "distributed_framework", "replace", True,
        "from torch.nn.parallel import DistributedDataParallel; from torch.nn import SyncBatchNorm",
        "NVIDIA apex is not installable on Ascend (the except branch raises); native DDP/SyncBatchNorm work with HCCL"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "only gates the CUDA seeding below"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "never reached on NPU (gate is False); torch.manual_seed already ran (unconfirmed for NPU generator)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda raises"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently selects the CPU on an NPU host"),
      C("model = nn.DataParallel(model, device_ids=engine.devices)", "unsupported_op_workaround", "removal", True, None,
        "nn.DataParallel is unsupported on Ascend; single-process run keeps the bare model (model.to(device) follows)"),
      C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.npu(non_blocking=True)", "batch transfer"),
      C("unsup_imgs_0 = unsup_imgs_0.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "unsup_imgs_0 = unsup_imgs_0.npu(non_blocking=True)", "batch transfer"),
      C("unsup_imgs_1 = unsup_imgs_1.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "unsup_imgs_1 = unsup_imgs_1.npu(non_blocking=True)", "batch transfer"),
      C("gts = gts.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "gts = gts.npu(non_blocking=True)", "label transfer"),
      C("mask_params = mask_params.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "mask_params = mask_params.npu(non_blocking=True)", "CutMix mask transfer"),
  ])

E("cps_syncbn", "furnace/seg_opr/sync_bn/functions.py", "kernel_rewrite",
  "PyTorch-Encoding style DistSyncBatchNorm as vendored in TorchSemiSeg furnace/seg_opr/sync_bn (JIT nvcc extension)",
  [
      C('_backend = load(name="syncbn_gpu_ext",', "custom_cuda_extension", "removal", True, None,
        "JIT-compiles a .cu kernel at import time; there is no nvcc/CUDA toolkit on an Ascend host (whole load(...) statement goes)"),
      C("if not x.is_cuda:", "device_type", "removal", True, None,
        "NPU tensors report is_cuda=False, so the eval path would raise; guard is pointless after the torch-op rewrite"),
      C("out = _backend.batchnorm_forward(x, _ex, _exs, gamma, beta, ctx.eps)", "custom_cuda_extension", "replace", True,
        "out = (x - _ex[None, :, None]) * torch.rsqrt(_exs - _ex ** 2 + ctx.eps)[None, :, None] * gamma[None, :, None] + beta[None, :, None]",
        "CUDA kernel call -> torch ops (eval path)"),
      C("=if x.is_cuda:", "device_type", "removal", True, None, "training-path guard; else-branch raises on NPU"),
      C("_ex, _exs = _backend.expectation_forward(x)", "custom_cuda_extension", "replace", True,
        "_ex, _exs = x.mean(dim=(0, 2)), x.pow(2).mean(dim=(0, 2))", "per-channel E[x], E[x^2] with torch ops"),
      C("y = _backend.batchnorm_forward(x, _ex, _exs, gamma, beta, ctx.eps)", "custom_cuda_extension", "replace", True,
        "y = (x - _ex[None, :, None]) * torch.rsqrt(_exs - _ex ** 2 + ctx.eps)[None, :, None] * gamma[None, :, None] + beta[None, :, None]",
        "CUDA kernel call -> torch ops (train path)"),
      C("if dz.is_cuda:", "device_type", "removal", True, None, "backward guard; else-branch raises on NPU"),
      C("dx, _dex, _dexs, dgamma, dbeta = _backend.batchnorm_backward(dz, x, _ex, _exs, gamma, beta, ctx.eps)",
        "custom_cuda_extension", "replace", True,
        "dx, _dex, _dexs, dgamma, dbeta = _batchnorm_backward_torch(dz, x, _ex, _exs, gamma, beta, ctx.eps)",
        "needs a small torch-op helper implementing the BN backward (plausible, untested)"),
      C("dx_ = _backend.expectation_backward(x, _dex, _dexs)", "custom_cuda_extension", "replace", True,
        "dx_ = (_dex[None, :, None] + 2 * _dexs[None, :, None] * x) / _count_samples(x)",
        "gradient of E[x], E[x^2] w.r.t. x"),
  ])

E("cps_loss_opr", "furnace/seg_opr/loss_opr.py", "explicit_replacement",
  "TorchSemiSeg furnace/seg_opr/loss_opr.py: ProbOhemCrossEntropy2d and CCNet numpy OHEM",
  [
      C("15.2588, 5.6818, 2.2067]).cuda()", "tensor_to_device", "replace", True, "15.2588, 5.6818, 2.2067]).npu()",
        "Cityscapes class weights (use_weight=True)"),
      C("new_target = torch.from_numpy(input_label.reshape(target.size())).long().cuda(target.get_device())",
        "tensor_to_device", "replace", True,
        "new_target = torch.from_numpy(input_label.reshape(target.size())).long().to(target.device)",
        "Tensor.cuda(idx) raises; get_device() index alone would also be read as a CUDA ordinal"),
  ])

E("cps_evaluator", "furnace/engine/evaluator.py", "explicit_replacement",
  "TorchSemiSeg furnace/engine/evaluator.py: multi-process sliding-window evaluation, one process per GPU",
  [
      C("data_scale = torch.zeros(self.class_num, pad_rows, pad_cols).cuda(", "tensor_to_device", "replace", True,
        "data_scale = torch.zeros(self.class_num, pad_rows, pad_cols).npu(", "score accumulator on the worker device"),
      C("count_scale = torch.zeros(self.class_num, pad_rows, pad_cols).cuda(", "tensor_to_device", "replace", True,
        "count_scale = torch.zeros(self.class_num, pad_rows, pad_cols).npu(", "count accumulator"),
      C("input_data = torch.FloatTensor(input_data).cuda(device)", "tensor_to_device", "replace", True,
        "input_data = torch.FloatTensor(input_data).npu(device)", "crop transfer"),
      C("with torch.cuda.device(input_data.get_device()):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(input_data.get_device()):", "CUDA device context raises without CUDA"),
      C("self.val_func.to(input_data.get_device())", "tensor_to_device", "replace", True,
        "self.val_func.to(input_data.device)",
        "Module.to(<int>) means a CUDA ordinal; pass the tensor's device instead"),
  ])

E("cps_env", "semiseg.yaml", "explicit_replacement",
  "TorchSemiSeg conda environment file (cudatoolkit + pytorch 1.0 CUDA build)",
  [
      C("- python=3.6.12", "import_torch_npu", "replace", True, "- python=3.9",
        "torch 2.1 / torch_npu 2.1 wheels need Python 3.8-3.11"),
      C("- cudatoolkit=10.1.243", "import_torch_npu", "removal", False, None,
        "CUDA runtime libraries; useless on Ascend (CANN comes from the host/base image)"),
      C("- pytorch=1.0.0=py3.6_cuda10.0.130_cudnn7.4.1_1", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0", "CUDA build of torch 1.0; torch_npu needs a matching CPU torch 2.1"),
      C("- torchvision=0.2.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must match the new torch"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "  - torch-npu==2.1.0.post10",
        "torch_npu is only on PyPI"),
  ])
