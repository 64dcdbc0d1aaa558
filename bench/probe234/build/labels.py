"""Labels for probe234 (seismology / geophysical deep learning, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter edits. See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before torch.npu / 'npu' devices are used (autoloaded only from "
               "torch_npu 2.5.1 on, still recommended)")
SILENT_ZERO = "on an NPU host CUDA is never initialised, so the CUDA allocator stats silently return 0"
AMP_OFF = ("CUDA autocast on an NPU host only warns and disables itself: the step runs in fp32 (slower, more "
           "memory) but stays correct; unconfirmed in knowledge")

# --------------------------------------------------------------------------------------------------
# SeisBench-style library and scripts
# --------------------------------------------------------------------------------------------------
E("sb_base_model", "seisbench/models/base.py", "device_branch_or_abstraction",
  "SeisBench seisbench/models/base.py (SeisBenchModel / WaveformModel, to_preferred_device, annotate)", [
      C("if torch.cuda.is_available():", "device_type", "add_branch", True,
        'elif hasattr(torch, "npu") and torch.npu.is_available(): self.to("npu")',
        "to_preferred_device only knows CUDA and MPS; on an Ascend host the model silently stays on the CPU"),
      C('"cuda_available": torch.cuda.is_available(),', "torch_cuda_api", "add_branch", False,
        '"npu_available": hasattr(torch, "npu") and torch.npu.is_available(),',
        "tutorial info dict only; reports False for CUDA on an NPU host, which is true, but hides the NPU"),
  ])

E("sb_torch_helpers", "seisbench/util/torch_helpers.py", "device_branch_or_abstraction",
  "SeisBench seisbench/util/torch_helpers.py (worker_seeding, device helper)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above also seeds the registered NPU backend (unconfirmed in knowledge)"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "automatic device selection silently picks the CPU on an NPU host"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "no-op on an NPU host (CUDA never initialised); NPU cache simply not released"),
  ])

E("sb_annotate_day", "scripts/annotate_day.py", "transfer_to_npu",
  "SeisBench user script: PhaseNet.from_pretrained('original'); model.cuda(); model.classify(stream) on FDSN data", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("import seisbench.models as sbm", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu",
        "this port relies on transfer_to_npu to redirect the torch.cuda calls and .cuda() below"),
      C("model.cuda()", "tensor_to_device", "replace", False, "model.npu()",
        "redirected to Module.npu by transfer_to_npu; explicit edit optional in this port"),
      C('log.info("Model moved to %s", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", False,
        'log.info("Model moved to %s", torch.npu.get_device_name(0))',
        "get_device_name is in transfer_to_npu's torch.cuda white list"),
      C("use_gpu = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", False,
        "use_gpu = torch.npu.is_available() and not args.cpu",
        "torch.cuda.is_available is replaced by torch_npu.npu.is_available under transfer_to_npu"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "redirected by transfer_to_npu"),
      C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
        'log.info("Peak NPU memory: %.2f GB", torch.npu.max_memory_allocated() / 1e9)',
        "redirected by transfer_to_npu; without it the value would silently be 0"),
  ])

# --------------------------------------------------------------------------------------------------
# pick-benchmark (SeisBench benchmark scripts, pytorch lightning)
# --------------------------------------------------------------------------------------------------
E("pb_train", "benchmark/train.py", "explicit_replacement",
  "seisbench/pick-benchmark benchmark/train.py (lightning Trainer on one GPU)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('accelerator="gpu",', "device_type", "replace", True, "accelerator=NPUAccelerator(),",
        "Lightning's GPU accelerator raises when no CUDA device exists; needs an NPU accelerator class registered "
        "for Lightning (availability of an official one unconfirmed in knowledge)"),
      C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "default pinning targets CUDA and is silently skipped without it; performance only (unconfirmed)"),
  ])

E("pb_eval", "benchmark/eval.py", "explicit_replacement",
  "seisbench/pick-benchmark benchmark/eval.py (predictions on task1/task23 targets, --device cuda)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('pin_memory=device.startswith("cuda"),', "pin_memory", "replace", False,
        'worker_init_fn=worker_seeding, pin_memory=device.startswith("npu"), pin_memory_device="npu",',
        "pinning is simply off for npu devices; performance only"),
      C('=if device.startswith("cuda"):', "device_type", "replace", False, 'if device.startswith("npu"):',
        "only guards a timing sync; unchanged the logged inference time excludes queued NPU work"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on a torch build without CUDA once the guard above admits npu devices"),
      C('default="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
        'default="npu" if torch.npu.is_available() else "cpu",',
        "default device silently becomes CPU on an NPU host"),
  ])

E("pb_models", "benchmark/models.py", "device_branch_or_abstraction",
  "seisbench/pick-benchmark benchmark/models.py (LightningModules wrapping PhaseNet/EQTransformer/CRED)", [])

E("pb_run_sh", "scripts/run_benchmark.sh", "explicit_replacement",
  "pick-benchmark style shell driver looping train.py/eval.py over models on one GPU", [
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every job would land on NPU 0 of a shared node"),
      C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or torch_npu cannot load libascendcl/libhccl"),
      C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api",
        "replace", False, "npu-smi info",
        "log line only; script has no 'set -e' so a missing nvidia-smi just prints an error"),
      C("--sets dev,test --batchsize 1024 --device cuda", "device_type", "replace", True,
        "--sets dev,test --batchsize 1024 --device npu",
        "eval.py would try to move the model to cuda and fail"),
  ])

# --------------------------------------------------------------------------------------------------
# EQNet / PhaseNet (torchvision-reference style training)
# --------------------------------------------------------------------------------------------------
E("eqnet_train", "eqnet/train.py", "explicit_replacement",
  "AI4EPS EQNet train.py (torchvision reference-script style PhaseNet / PhaseNet-DAS training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):", AMP_OFF),
      C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=scaler is not None):", AMP_OFF),
      C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "pinning for CUDA is silently skipped; performance only (unconfirmed)"),
      C("scaler = torch.cuda.amp.GradScaler() if args.amp else None", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler() if args.amp else None",
        "a CUDA GradScaler disables itself without CUDA: once autocast runs fp16 on the NPU the loss is no "
        "longer scaled and fp16 gradients underflow"),
      C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", type=str, help="device (Use npu or cpu Default: npu)")',
        "default device string fails on model.to(device)"),
  ])

E("eqnet_utils", "eqnet/utils.py", "explicit_replacement",
  "AI4EPS EQNet utils.py (torchvision reference utils: MetricLogger, init_distributed_mode)", [
      C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "tensor_to_device",
        "replace", True, 't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
        "hard-coded cuda tensor for the metric all_reduce; fp64 over HCCL not checked (may need float32)"),
      C("log_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "log_mem = torch.npu.is_available()",
        "unchanged only drops the 'max mem' column from the log"),
      C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", True,
        "memory=torch.npu.max_memory_allocated() / MB,", SILENT_ZERO),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "device_count() is 0 on an NPU host -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
        "NCCL is not available; HCCL is the collective backend on Ascend"),
      C('t = torch.tensor(val, device="cuda")', "tensor_to_device", "replace", True,
        't = torch.tensor(val, device="npu")', "hard-coded cuda tensor before all_reduce"),
  ])

E("eqnet_phasenet", "eqnet/models/phasenet.py", "explicit_replacement",
  "AI4EPS EQNet / PhaseNet PyTorch port (U-Net over time x station, moving_normalize)", [
      C("=import time", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for the .npu() calls of the self-test; the library part stays device agnostic"),
      C("model = phasenet(in_channels=3).cuda().eval()", "tensor_to_device", "replace", True,
        "model = phasenet(in_channels=3).npu().eval()", ".cuda() raises without CUDA"),
      C('x = {"data": torch.randn(16, 3, 3000, 1).cuda()}', "tensor_to_device", "replace", True,
        'x = {"data": torch.randn(16, 3, 3000, 1).npu()}', ".cuda() raises without CUDA"),
      C("torch.cuda.synchronize()  # warm-up done", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # warm-up done", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

# --------------------------------------------------------------------------------------------------
# EQTransformer PyTorch port
# --------------------------------------------------------------------------------------------------
E("eqt_model", "eqtransformer/model.py", "explicit_replacement",
  "EQTransformer PyTorch port (SeisBench-style: ResCNN, BiLSTM, SeqSelfAttention, three decoders)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + " (here only the __main__ self-test refers to torch.npu)"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "self-test silently runs on the CPU on an NPU host"),
  ])

E("eqt_predictor", "eqtransformer/predictor.py", "explicit_replacement",
  "EQTransformer predictor step (HDF5 batches, gpuid / gpu_limit options, MC-dropout uncertainty)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpuid)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpuid)',
        "gpuid would be ignored and the predictor would run on NPU 0"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "silently falls back to CPU prediction on an NPU host"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "cuda device string"),
      C("torch.cuda.set_per_process_memory_fraction(float(gpu_limit), device=0)", "torch_cuda_api", "replace", True,
        "torch.npu.set_per_process_memory_fraction(float(gpu_limit), device=0)", "raises without CUDA"),
      C('logger.info("Using %s", torch.cuda.get_device_name(device))', "torch_cuda_api", "replace", True,
        'logger.info("Using %s", torch.npu.get_device_name(device))', "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; cached NPU blocks are just kept"),
  ])

E("eqt_predict_json", "configs/predict.json", "explicit_replacement",
  "EQTransformer predictor/associator JSON config", [
      C('"device": "cuda:1",', "device_type", "replace", True, '"device": "npu:1",',
        "device string handed to torch by the associator"),
  ])

# --------------------------------------------------------------------------------------------------
# DAS denoising (jDAS-like U-Net in PyTorch)
# --------------------------------------------------------------------------------------------------
E("das_unet", "dasdenoise/models/unet.py", "device_branch_or_abstraction",
  "jDAS-style blind-spot U-Net for DAS denoising (PyTorch)", [])

E("das_train", "dasdenoise/train.py", "explicit_replacement",
  "DAS denoiser training script (torchrun DDP, AMP, apex FusedAdam, torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from apex.optimizers import FusedAdam  # noqa: F401", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdamW as FusedAdam  # noqa: F401",
        "NVIDIA apex is not installable on Ascend; the ImportError path falls back to AdamW, so performance only"),
      C('dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")', "dist_backend",
        "replace", True, 'dist.init_process_group(backend="hccl" if torch.npu.is_available() else "gloo")',
        "silently picks gloo on an NPU host, which cannot reduce NPU tensors"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "raises without CUDA; NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "cuda device"),
      C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
        "performance only (unconfirmed)"),
      C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
        'val_loader = DataLoader(val_set, batch_size=cfg["train"]["batch_size"], num_workers=4, pin_memory=True, '
        'pin_memory_device="npu")',
        "performance only (unconfirmed)"),
      C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
        "model = model.to(memory_format=torch.contiguous_format)",
        "channels_last is listed as unsupported by the mstt transfer docs; off by default in the config"),
      C('model = torch.compile(model, mode="reduce-overhead")', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "reduce-overhead means CUDA graphs; Ascend documents backend='npugraphs' as the equivalent; behaviour of "
        "the unchanged mode on NPU unconfirmed, off by default"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
        "autocast here follows device.type and really runs fp16 on the NPU, but a CUDA GradScaler disables "
        "itself without CUDA -> unscaled fp16 gradients underflow"),
      C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
        'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")', "map_location to a cuda device fails"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("mem = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", True,
        "mem = torch.npu.max_memory_allocated() / 2 ** 30", SILENT_ZERO),
  ])

E("das_fk", "dasdenoise/utils/fk.py", "explicit_replacement",
  "DAS f-k / band-pass filtering utilities (torch.fft plus optional CuPy fast path)", [
      C("import cupy as cp", "unsupported_op_workaround", "removal", False, None,
        "CuPy has no Ascend backend; the import is guarded and the numpy/scipy path is used when it is absent"),
      C('vmin=200.0, vmax=None, device="cuda"):', "device_type", "replace", True,
        'def preprocess_block(data, fs, dx, fmin=1.0, fmax=10.0, vmin=200.0, vmax=None, device="npu"):',
        "default device is used in torch.as_tensor(..., device=device)"),
  ])

E("das_infer", "dasdenoise/infer_h5.py", "explicit_replacement",
  "Tiled DAS denoising inference over HDF5 with side-stream H2D copies, CUDA events and NVTX ranges", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("total = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", "replace", True,
        "total = torch.npu.get_device_properties(device).total_memory",
        "raises without CUDA; NPU properties do provide total_memory"),
      C("return torch.from_numpy(batch).pin_memory()", "pin_memory", "replace", False,
        'return torch.from_numpy(batch).pin_memory("npu")',
        "pinning without a device targets CUDA; failure vs. silent skip on an NPU host unconfirmed"),
      C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{args.gpu}")', "cuda device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises without CUDA"),
      C("copy_stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "copy_stream = torch.npu.Stream()",
        "raises without CUDA"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "raises without CUDA"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "raises without CUDA"),
      C("=with torch.cuda.stream(copy_stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(copy_stream):", "raises without CUDA"),
      C("torch.cuda.current_stream().wait_stream(copy_stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(copy_stream)", "raises without CUDA"),
      C("x.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "x.record_stream(torch.npu.current_stream())", "raises without CUDA"),
      C("with torch.cuda.stream(copy_stream):  # overlap next H2D copy with compute", "torch_cuda_api", "replace",
        True, "with torch.npu.stream(copy_stream):  # overlap next H2D copy with compute", "raises without CUDA"),
      C('torch.cuda.nvtx.range_push(f"batch{bi}")', "torch_cuda_api", "replace", True,
        'rid = torch_npu.npu.mstx.range_start(f"batch{bi}")',
        "torch.cuda.nvtx is not redirected to NPU (knowledge §2.1) and raises on a non-CUDA build; mstx is the "
        "NPU range API"),
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.fp16):",
        "model and input are already cast with .half(), so a disabled CUDA autocast changes nothing"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
        "see range_push"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("das_config", "configs/train_unet.yaml", "explicit_replacement",
  "DAS denoiser training YAML config", [
      C("device: cuda", "device_type", "replace", False, "device: npu",
        "not read by dasdenoise/train.py (device comes from LOCAL_RANK there); kept consistent"),
      C("backend: nccl", "dist_backend", "replace", False, "backend: hccl",
        "not read by dasdenoise/train.py (backend is chosen in setup_distributed); kept consistent"),
  ])

E("das_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of the DAS denoiser (pytorch + nvidia channels)", [
      C("=- nvidia", "device_type", "removal", False, None,
        "channel only needed for pytorch-cuda; harmless once that is gone"),
      C("- pytorch=2.1.2", "device_type", "replace", True, "- pytorch=2.1.0",
        "torch_npu wheels pin the exact torch version (2.1.0.postN needs torch 2.1.0)"),
      C("- torchvision=0.16.2", "device_type", "replace", True, "- torchvision=0.16.0",
        "torchvision 0.16.2 requires torch 2.1.2; must follow the torch pin"),
      C("- pytorch-cuda=12.1", "device_type", "removal", True, None,
        "selects the CUDA build of pytorch; no such package for an Ascend (often aarch64) host"),
      C("- cupy>=12.2", "unsupported_op_workaround", "removal", True, None,
        "CuPy is CUDA-only; once installed fk.bandpass(use_gpu=True) takes the CuPy path and fails without a "
        "CUDA driver"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post17",
        "torch_npu pin matching torch 2.1.0 (post17 pairs with CANN 8.3.RC1)"),
      C("- nvidia-ml-py>=12.535", "unsupported_op_workaround", "removal", False, None,
        "NVML bindings install fine but have nothing to talk to; usage is handled in tools/gpu_monitor.py"),
  ])

E("das_docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of the DAS denoiser (nvidia/cuda base, cu121 torch wheels)", [
      C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (driver mounted by Ascend docker runtime); tag illustrative"),
      C("pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121 && \\",
        "device_type", "replace", True,
        "pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && "
        "pip install torch-npu==2.1.0.post10 && \\",
        "CPU torch with the exact version torch_npu pairs with, plus the torch_npu wheel (post10 <-> CANN 8.0.0)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; NPUs are selected with ASCEND_VISIBLE_DEVICES at run time"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
  ])

E("das_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of the DAS denoiser package with GPU extras", [
      C('"cupy-cuda12x>=12.2",', "unsupported_op_workaround", "removal", False, None,
        "CUDA-only optional extra"),
      C('"nvidia-ml-py>=12.535",', "unsupported_op_workaround", "removal", False, None,
        "NVML has no Ascend counterpart; optional extra"),
      C("gpu = [", "import_torch_npu", "add_branch", False, 'npu = ["torch-npu==2.1.0.post17"]',
        "optional extra for Ascend installs; torch-npu can also be installed by hand"),
  ])

E("das_requirements", "requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt with the CUDA wheel index and CUDA-only packages", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "knowledge §1.1: x86 Ascend hosts install CPU torch from whl/cpu; CUDA build only wastes space "
        "(compatibility of a CUDA torch with torch_npu unconfirmed)"),
      C("=torch==2.1.2+cu121", "device_type", "replace", True, "torch==2.1.0",
        "+cu121 wheels do not exist for aarch64 and torch_npu needs exactly torch 2.1.0"),
      C("torchvision==0.16.2+cu121", "device_type", "replace", True, "torchvision==0.16.0",
        "must follow the torch pin"),
      C("pyyaml>=6.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu itself (pyyaml is one of its runtime deps, so it sits next to it)"),
      C("cupy-cuda12x==12.3.0", "unsupported_op_workaround", "removal", True, None,
        "CUDA-only; once installed fk.bandpass(use_gpu=True) takes the CuPy path and fails without a CUDA driver"),
      C("nvidia-ml-py==12.535.133", "unsupported_op_workaround", "removal", False, None,
        "installs but is useless without NVIDIA driver; monitor code handles the missing library"),
      C("triton==2.1.0", "unsupported_op_workaround", "removal", False, None,
        "CUDA Triton; Ascend uses triton-ascend and transfer_to_npu disables triton for inductor "
        "(install failure on aarch64 unconfirmed)"),
  ])

# --------------------------------------------------------------------------------------------------
# Deepwave full-waveform inversion
# --------------------------------------------------------------------------------------------------
DW_NOTE = ("Deepwave only ships CPU and CUDA kernels (from Deepwave's source, not in knowledge); NPU tensors would "
           "reach the CPU kernel with device pointers, so the propagator must be replaced by an NPU port")

E("dw_marmousi_fwi", "examples/fwi_marmousi.py", "explicit_replacement",
  "Deepwave docs example: Marmousi FWI with frequency continuation (LBFGS, torchaudio biquad filters)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from deepwave import scalar", "custom_cuda_extension", "replace", True,
        "from fwi_npu.propagators import scalar  # pure-torch / Ascend C port of deepwave.scalar", DW_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently runs the whole inversion on the CPU on an NPU host"),
      C("torch.cuda.synchronize()  # kernels are asynchronous", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # kernels are asynchronous, wait before reading the clock",
        "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("peak mem {torch.cuda.max_memory_allocated() / 1e9:.2f} GB", "torch_cuda_api", "replace", True,
        'f"({time.time() - t_epoch:.1f} s, peak mem {torch.npu.max_memory_allocated() / 1e9:.2f} GB)")',
        SILENT_ZERO),
  ])

E("dw_dataparallel", "examples/fwi_dataparallel.py", "explicit_replacement",
  "Deepwave docs 'Parallelism' example: propagator wrapped in torch.nn.DataParallel over shots", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("return deepwave.scalar(", "custom_cuda_extension", "replace", True,
        "return fwi_npu.propagators.scalar(", DW_NOTE),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "cuda device"),
      C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
        "n_gpus = torch.npu.device_count()", "only feeds the banner print; unchanged it prints 'Using 0 GPUs'"),
      C("torch.cuda.get_device_name(i) for i in range(n_gpus)", "torch_cuda_api", "replace", True,
        'print(f"Using {n_gpus} NPUs: " + ", ".join(torch.npu.get_device_name(i) for i in range(n_gpus)))',
        "raises without CUDA once n_gpus counts NPUs"),
      C("true_prop = nn.DataParallel(Prop(Model(v_true, 1000, 2500), dx, dt, freq)).to(device)",
        "distributed_framework", "replace", True,
        "true_prop = Prop(Model(v_true, 1000, 2500), dx, dt, freq).to(device)",
        "torch.nn.DataParallel is unsupported on Ascend (use DDP or a single device)"),
      C("prop = nn.DataParallel(prop).to(device)", "distributed_framework", "replace", True,
        "prop = prop.to(device)", "torch.nn.DataParallel is unsupported on Ascend"),
      C("prop.module.model.model.grad.detach().abs(), 0.98))", "distributed_framework", "replace", True,
        "prop.model.model.grad.detach().abs(), 0.98))",
        "without the DataParallel wrapper there is no .module attribute"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("dw_distributed", "examples/fwi_distributed.py", "explicit_replacement",
  "Deepwave FWI with torch.distributed / DDP over shots (mp.spawn or torchrun, nccl)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from deepwave import scalar", "custom_cuda_extension", "replace", True,
        "from fwi_npu.propagators import scalar  # pure-torch / Ascend C port of deepwave.scalar", DW_NOTE),
      C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
        "NCCL is not available on Ascend"),
      C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL is not available on Ascend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
        'device = torch.device(f"npu:{local_rank}")', "cuda device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C('parser.add_argument("--world-size", type=int, default=torch.cuda.device_count())', "torch_cuda_api",
        "replace", True, 'parser.add_argument("--world-size", type=int, default=torch.npu.device_count())',
        "0 on an NPU host: mp.spawn starts no worker and the script silently does nothing"),
  ])

E("dw_bench", "benchmarks/bench_scalar.py", "device_branch_or_abstraction",
  "Deepwave-style propagator benchmark (CUDA events, peak memory, torch.profiler)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=import deepwave", "device_type", "npu_only_addition", True,
        'def _acc(device): return torch.npu if device.type == "npu" else torch.cuda',
        "small helper the ported branches below use to pick the accelerator module"),
      C('self.use_events = device.type == "cuda"', "device_type", "replace", True,
        'self.use_events = device.type in ("cuda", "npu")',
        "NPU would be timed with perf_counter around asynchronous launches: wrong timings"),
      C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.start = _acc(device).Event(enable_timing=True)", "CUDA event on an NPU host raises"),
      C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.end = _acc(device).Event(enable_timing=True)", "CUDA event on an NPU host raises"),
      C('on_gpu = device.type == "cuda"', "device_type", "replace", False,
        'on_gpu = device.type in ("cuda", "npu")',
        "unchanged only loses the peak-memory column (NaN); timing is done by the events"),
      C("out = deepwave.scalar(v, dx, dt, source_amplitudes=src_amp, source_locations=src_loc,",
        "custom_cuda_extension", "replace", True,
        "out = fwi_npu.propagators.scalar(v, dx, dt, source_amplitudes=src_amp, source_locations=src_loc,",
        DW_NOTE),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "_acc(device).synchronize()",
        "raises without CUDA once on_gpu admits npu"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "_acc(device).reset_peak_memory_stats(device)", "raises without CUDA"),
      C("peak_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20 if on_gpu", "torch_cuda_api", "replace", True,
        'peak_mb = _acc(device).max_memory_allocated(device) / 2 ** 20 if on_gpu else float("nan")', SILENT_ZERO),
      C('=if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
        'if device.type == "npu": return torch.npu.get_device_name(device)',
        "device column of results.csv would show the host CPU name"),
      C('gpu_trace = device.type == "cuda"', "device_type", "replace", False,
        'gpu_trace = device.type in ("cuda", "npu")', "--profile only: trace would lack device activity"),
      C("activities.append(ProfilerActivity.CUDA)", "torch_cuda_api", "replace", False,
        "activities.append(torch_npu.profiler.ProfilerActivity.NPU)",
        "--profile only; NPU activity needs torch_npu.profiler (knowledge §2.5)"),
      C("with profile(activities=activities, record_shapes=True, profile_memory=True) as prof:", "torch_cuda_api",
        "replace", False,
        "with torch_npu.profiler.profile(activities=activities, record_shapes=True, profile_memory=True) as prof:",
        "--profile only; torch.profiler records no NPU kernels"),
      C("out = deepwave.scalar(v, dx, dt, accuracy=accuracy, pml_freq=freq, source_amplitudes=src_amp,",
        "custom_cuda_extension", "replace", True,
        "out = fwi_npu.propagators.scalar(v, dx, dt, accuracy=accuracy, pml_freq=freq, source_amplitudes=src_amp,",
        DW_NOTE),
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu")', "default device cuda fails in make_problem"),
  ])

E("dw_backend", "src/deepwave/_backend.py", "kernel_rewrite",
  "Deepwave internals: ctypes loading of libdeepwave_cpu/cuda and per-device kernel dispatch", [
      C('_cuda_lib = _load("libdeepwave_cuda.so", optional=True)', "custom_cuda_extension", "add_branch", True,
        '_npu_lib = _load("libdeepwave_npu.so", optional=True)  # Ascend C kernels, same symbol names',
        "CUDA kernels cannot run on Ascend; an Ascend C build of the propagators has to be loaded"),
      C("if t.is_cuda:", "device_type", "add_branch", True, 'if t.device.type == "npu": return "npu"',
        "NPU tensors fall through to 'cpu' and the CPU kernel is called with device pointers (crash)"),
      C('if key == "cuda":', "custom_cuda_extension", "add_branch", True,
        'if key == "npu": return _npu_lib',
        "select the Ascend library for npu tensors"),
      C('if t.device.type == "cuda":', "torch_cuda_api", "add_branch", True,
        'if t.device.type == "npu": return c_void_p(torch.npu.current_stream(t.device).npu_stream)',
        "Ascend kernels must be launched on the current NPU stream to stay ordered with torch ops"),
      C("return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()", "torch_cuda_api",
        "add_branch", False,
        'return torch.npu.device(t.device) if t.device.type == "npu" else (torch.cuda.device(t.device) if t.is_cuda '
        'else contextlib.nullcontext())',
        "only matters when the tensors are not on the current NPU (each DDP rank sets its device)"),
      C('"cuda": _cuda_lib is not None,', "custom_cuda_extension", "add_branch", False,
        '"npu": _npu_lib is not None,', "diagnostics only"),
  ])

E("dw_setup", "setup.py", "kernel_rewrite",
  "Deepwave 0.0.x setup.py building CppExtension + CUDAExtension propagators", [
      C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME",
        "custom_cuda_extension", "npu_only_addition", True,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "NpuExtension adds the torch_npu / CANN include and library paths for the Ascend C propagators"),
      C("def make_cuda_extension(prop, dim, accuracy, dtype):", "custom_cuda_extension", "add_branch", True,
        "def make_npu_extension(prop, dim, accuracy, dtype):  # NpuExtension over Ascend C sources",
        "no nvcc on an Ascend host: the .cu kernels have to be rewritten and built as an NPU extension"),
      C('if CUDA_HOME is not None or os.environ.get("DEEPWAVE_FORCE_CUDA", "0") == "1":', "custom_cuda_extension",
        "add_branch", True,
        'elif os.environ.get("ASCEND_TOOLKIT_HOME"):  # CANN present: build the NPU propagators',
        "unchanged the build silently produces CPU-only modules on an Ascend host"),
  ])

E("dw_conftest", "tests/conftest.py", "device_branch_or_abstraction",
  "Deepwave tests/conftest.py (device / dtype fixtures, gpu marker)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('no_gpu = config.getoption("--cpu-only") or not torch.cuda.is_available()', "torch_cuda_api", "replace",
        True,
        'no_gpu = config.getoption("--cpu-only") or not (torch.cuda.is_available() or torch.npu.is_available())',
        "all gpu-marked tests would be skipped silently on an NPU host"),
      C('if torch.cuda.is_available() and os.environ.get("DEEPWAVE_TEST_CPU_ONLY") != "1":', "device_type",
        "add_branch", True,
        'if torch.npu.is_available() and os.environ.get("DEEPWAVE_TEST_CPU_ONLY") != "1": '
        'devs.append(torch.device("npu"))',
        "the device fixture would never include the NPU, so the NPU propagator is never tested"),
      C('=if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
        'elif device.type == "npu": torch.npu.synchronize(device)',
        "sync fixture only affects timings; value comparisons synchronise through .cpu() anyway"),
  ])

E("fwi_slurm", "jobs/fwi_2node.sbatch", "explicit_replacement",
  "SLURM batch script: 2 nodes x 4 GPUs torchrun for the distributed FWI", [
      C("#SBATCH --gres=gpu:4", "device_type", "replace", False, "#SBATCH --gres=npu:4",
        "GRES name is site configuration; many Ascend SLURM sites call it npu (unconfirmed)"),
      C("module load cuda/12.1", "env_var", "replace", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced or torch_npu cannot load libascendcl/libhccl"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug logging only; HCCL ignores NCCL_*"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
        "2-node job: HCCL ignores NCCL_SOCKET_IFNAME and may pick an unreachable host NIC for root-info setup"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
        "no HCCL counterpart; NPU-to-NPU traffic uses the NPU's own RoCE ports"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable (default 1 per MindCluster docs)"),
      C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only tuning knob"),
      C("srun --ntasks-per-node=1 nvidia-smi -L", "torch_cuda_api", "replace", False,
        "srun --ntasks-per-node=1 npu-smi info", "log only; script is not 'set -e'"),
  ])

E("seis_gpu_monitor", "tools/gpu_monitor.py", "explicit_replacement",
  "background NVML / nvidia-smi GPU usage logger used during long DAS and FWI runs", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("import pynvml", "unsupported_op_workaround", "removal", False, None,
        "pynvml has no NPU equivalent (knowledge §6); the import is guarded"),
      C('env = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", True,
        'env = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")', "visible device list comes from the Ascend variable"),
      C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
        "return list(range(torch.npu.device_count()))", "0 on an NPU host: nothing is monitored"),
      C("rows = sample_nvml(self.indices) if _NVML else sample_smi(self.indices)", "unsupported_op_workaround",
        "replace", True, "rows = sample_npu(self.indices)  # torch.npu.utilization / mem_get_info",
        "both NVML and nvidia-smi are absent on an NPU host: the monitor silently writes no rows"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True,
        "for i in range(torch.npu.device_count()):", "0 devices on an NPU host"),
      C('"torch_alloc_mb": torch.cuda.memory_allocated(i) / 2 ** 20,', "torch_cuda_api", "replace", True,
        '"torch_alloc_mb": torch.npu.memory_allocated(i) / 2 ** 20,', SILENT_ZERO),
      C('"torch_reserved_mb": torch.cuda.memory_reserved(i) / 2 ** 20,', "torch_cuda_api", "replace", True,
        '"torch_reserved_mb": torch.npu.memory_reserved(i) / 2 ** 20,', SILENT_ZERO),
  ])

E("seislm_encoder", "seislm/models/encoder.py", "explicit_replacement",
  "SeisLM-style wav2vec2 encoder for seismograms (flash-attn / SDPA / eager attention, bf16 pretraining)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=False)",
        "attention_kernel", "replace", False,
        'out = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", keep_prob=1 - dropout_p, '
        "scale=self.scale)[0]",
        "flash-attn cannot be installed on NPU so this branch is dead (default falls back to sdpa); optional fused path"),
      C("out_u = flash_attn_varlen_func(q_u, k_u, v_u, cu_seqlens, cu_seqlens, max_len, max_len,",
        "attention_kernel", "replace", False,
        'out_u = torch_npu.npu_fusion_attention(q_u, k_u, v_u, self.num_heads, "TND", keep_prob=1 - dropout_p, '
        "scale=self.scale, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
        "dead branch on NPU, as above; varlen maps to the TND layout with cumulative lengths"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=mask is None", "attention_kernel", "replace", True,
        "with contextlib.nullcontext():  # NPU SDPA picks its fused kernel itself",
        "torch.backends.cuda.sdp_kernel is on the unsupported list for NPU (mstt, Ascend API table)"),
      C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check",
        "replace", True, "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "False on a torch build without CUDA -> fp16 is chosen and pretrain_step has no loss scaler"),
      C('with torch.autocast(device_type="cuda", dtype=default_amp_dtype()):', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=default_amp_dtype()):', AMP_OFF),
      C("model = SeismicEncoder(cfg).cuda().to(default_amp_dtype())", "tensor_to_device", "replace", True,
        "model = SeismicEncoder(cfg).npu().to(default_amp_dtype())", ".cuda() raises without CUDA"),
      C('x = torch.randn(32, 3, 6000, device="cuda", dtype=default_amp_dtype())', "tensor_to_device", "replace",
        True, 'x = torch.randn(32, 3, 6000, device="npu", dtype=default_amp_dtype())', "cuda device string"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.synchronize()  # timing", "torch_cuda_api", "replace", True, "torch.npu.synchronize()  # timing",
        "raises without CUDA"),
  ])
