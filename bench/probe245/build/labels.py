# Labels for probe245 (wildlife camera-trap / biodiversity vision, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# See ../README.md "How the labels were chosen" for the policy behind required/ported.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any 'npu' device/torch.npu use "
               "(mandatory before torch_npu 2.5.1 autoload, still recommended after)")
CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------------
# MegaDetector (classic cameratraps / MegaDetector repo layout)
# ----------------------------------------------------------------------------------------------

E("md_pytorch_detector", "detection/pytorch_detector.py", "device_branch_or_abstraction",
  "MegaDetector detection/pytorch_detector.py (PTDetector for YOLOv5-based MDv5)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; the module has a __main__ driver and picks the device itself"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif torch.npu.is_available(): self.device = torch.device('npu:0')",
      "device autodetection only knows CUDA/MPS; on an NPU host MDv5 silently runs on the CPU"),
    C("self.use_half = isinstance(self.device, torch.device) and self.device.type == 'cuda'",
      "device_type", "replace", False,
      "self.use_half = isinstance(self.device, torch.device) and self.device.type in ('cuda', 'npu')",
      "fp16 inference only on CUDA; on NPU the model just stays fp32 (performance only)"),
])

E("md_run_detector", "detection/run_detector.py", "device_branch_or_abstraction",
  "MegaDetector detection/run_detector.py (is_gpu_available / load_detector / single-image CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "is_gpu_available() runs before the detector module is loaded, so torch.npu must exist here; "
      "this is the CLI entry point"),
    C("gpu_available = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "gpu_available = torch.cuda.is_available() or torch.npu.is_available()",
      "drives run_detector_batch's 'GPU available -> force one core' logic; False on an NPU host"),
    C("print('PyTorch reports {} available CUDA devices'.format(torch.cuda.device_count()))",
      "torch_cuda_api", "replace", False,
      "print('PyTorch reports {} available NPU devices'.format(torch.npu.device_count()))",
      "log line only; prints 0 on an NPU host"),
])

E("md_run_batch", "detection/run_detector_batch.py", "device_branch_or_abstraction",
  "MegaDetector detection/run_detector_batch.py (batch driver, checkpointing, CPU multiprocessing)", [
    # Deliberately no labels: device choice is delegated to run_detector.is_gpu_available and
    # PTDetector; the CUDA_VISIBLE_DEVICES mentions are in the docstring only.
])

E("md_batch_gpus_sh", "scripts/run_md_multi_gpu.sh", "explicit_replacement",
  "MegaDetector user shell launcher splitting a season over GPUs (nvidia-smi + CUDA_VISIBLE_DEVICES)", [
    C('conda activate "$CONDA_ENV"', "env_var", "npu_only_addition", True, CANN_ENV,
      "CANN runtime environment (LD_LIBRARY_PATH, ASCEND_* vars) must be set before python starts"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check",
      "replace", True, "NUM_GPUS=$(npu-smi info -l | awk '/Total Count/ {print $NF}')",
      "no nvidia-smi on an Ascend host; with set -euo pipefail the script aborts here"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "device_capability_check", "replace",
      True, "npu-smi info", "command not found aborts the script (set -e)"),
    C("CUDA_VISIBLE_DEVICES=$GPU nohup python", "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=$GPU nohup python "$MD_ROOT/megadetector/detection/run_detector_batch.py" \\',
      "per-chunk device pinning; CUDA_VISIBLE_DEVICES is ignored, so every chunk would land on NPU 0"),
    C("nvidia-smi --query-gpu=index,memory.used,utilization.gpu", "device_capability_check", "replace", True,
      'npu-smi info >> "$OUTPUT_DIR/logs/gpu_summary.csv"',
      "logging only, but command-not-found under set -e makes the whole run exit non-zero"),
])

E("md_env_yml", "envs/environment-detector.yml", "explicit_replacement",
  "MegaDetector envs/environment-detector.yml (conda env with pytorch + pytorch-cuda)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "NVIDIA conda channel is unused once pytorch-cuda is gone; harmless to keep"),
    C("=- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu wheels pair with an exact torch x.y.z; there is no torch_npu for 2.1.2 (use CPU build "
      "of torch 2.1.0, e.g. with cpuonly)"),
    C("=- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.16.2 pins torch 2.1.2; must follow the torch downgrade"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch (and no aarch64 build exists); NPU hosts need the CPU build + torch_npu"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post8",
      "torch_npu itself (pip only), matching torch 2.1.0 and the installed CANN"),
    C("=- pynvml", "custom_cuda_extension", "removal", False, None,
      "NVML bindings install fine but have nothing to talk to on an Ascend host; unused by MD code"),
])

E("md_train_classifier", "classification/train_classifier.py", "explicit_replacement",
  "MegaDetector classification/train_classifier.py (EfficientNet/ResNet crop classifier, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "prep_device falls through to CPU on an NPU host"),
    C("device = torch.device(f'cuda:{device_id}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{device_id}')", "explicit CUDA device"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "explicit CUDA device"),
    C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "device_ids = list(range(torch.npu.device_count()))", "CUDA device count"),
    C("model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "removal", True,
      None, "torch.nn.DataParallel is unsupported on Ascend (use one device or DDP)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds registered accelerators (unconfirmed)"),
])

E("md_run_classifier", "classification/run_classifier.py", "explicit_replacement",
  "MegaDetector classification/run_classifier.py (TorchScript classifier over crops)", [
    C("model = torch.jit.load(model_path)", "unsupported_op_workaround", "replace", False,
      "model = torch.jit.load(model_path, map_location='cpu')",
      "a TorchScript model traced on a GPU can carry cuda device constants; loading on CPU then "
      "prep_device().to(npu) is safer (unconfirmed)"),
])

# ----------------------------------------------------------------------------------------------
# YOLOv5 (the framework MDv5 was trained/run with)
# ----------------------------------------------------------------------------------------------

E("y5_torch_utils", "utils/torch_utils.py", "device_branch_or_abstraction",
  "ultralytics/yolov5 utils/torch_utils.py (select_device, time_sync, DDP helpers)", [
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "device_ids in barrier was NCCL-only in older torch releases; unconfirmed for HCCL"),
    C("dist.barrier(device_ids=[0])", "dist_backend", "replace", False, "dist.barrier()",
      "same as above"),
    C("cmd = 'nvidia-smi -L | wc -l' if platform.system() == 'Linux'", "device_capability_check", "replace",
      False, "cmd = \"npu-smi info -l | awk '/Total Count/ {print $NF}'\"",
      "exception is swallowed and 0 returned; only used for dataloader worker sizing"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '-1'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '-1'",
      "CPU/MPS request hides accelerators; on NPU nothing else would pick the NPU anyway"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = device  # set environment", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device",
      "--device 0,1 selection is silently ignored by the Ascend runtime"),
    C("assert torch.cuda.is_available() and torch.cuda.device_count() >= len(", "torch_cuda_api", "replace",
      True, "assert torch.npu.is_available() and torch.npu.device_count() >= len(device.replace(',', '')), \\",
      "fails for any --device on an NPU host"),
    C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not cpu and not mps and torch.npu.is_available():", "otherwise select_device returns cpu"),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "p = torch.npu.get_device_properties(i)",
      "CUDA call; NPU properties expose name and total_memory, which is all this line uses"),
    C("arg = 'cuda:0'", "device_type", "replace", True, "arg = 'npu:0'", "returned device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "time_sync must synchronize the NPU stream or every profiled time is wrong"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "as above"),
    C("mem = torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0", "torch_cuda_api",
      "replace", False, "mem = torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0  # (GB)",
      "profiler column shows 0 GB; cosmetic"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised"),
])

E("y5_train", "train.py", "explicit_replacement",
  "ultralytics/yolov5 train.py as used for MegaDetector v5 training", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if cuda and RANK == -1 and torch.cuda.device_count() > 1:", "distributed_framework", "replace", False,
      "if False:  # DataParallel is not supported on Ascend; use torch.distributed.run",
      "unchanged, device_count() is 0 on an NPU host so DP is skipped (correct by accident); a blind "
      "cuda->npu rename would enable unsupported DataParallel"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp)",
      "CUDA GradScaler disables itself without CUDA -> fp16 grads unscaled under NPU autocast"),
    C("with torch.cuda.amp.autocast(amp):", "amp", "replace", True, "with torch.npu.amp.autocast(amp):",
      "CUDA autocast is silently disabled on an NPU host (training falls back to fp32 with the AMP batch size)"),
    C("mem = f'{torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0:.3g}G'",
      "torch_cuda_api", "replace", False,
      "mem = f'{torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0:.3g}G'  # (GB)",
      "progress-bar memory column only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init"),
    C("assert torch.cuda.device_count() > LOCAL_RANK", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() > LOCAL_RANK, 'insufficient NPU devices for DDP command'",
      "always fails under DDP on an NPU host"),
    C("torch.cuda.set_device(LOCAL_RANK)", "torch_cuda_api", "replace", True, "torch.npu.set_device(LOCAL_RANK)",
      "CUDA call"),
    C("device = torch.device('cuda', LOCAL_RANK)", "device_type", "replace", True,
      "device = torch.device('npu', LOCAL_RANK)", "DDP device"),
    C("dist.init_process_group(backend='nccl' if dist.is_nccl_available() else 'gloo')", "dist_backend",
      "replace", True, "dist.init_process_group(backend='hccl')",
      "is_nccl_available() is False on NPU -> gloo, which cannot reduce NPU tensors"),
])

E("y5_general", "utils/general.py", "explicit_replacement",
  "ultralytics/yolov5 utils/general.py (Profile, init_seeds, check_amp, non_max_suppression)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.nms / roi_align",
      "without torchvision_npu, torchvision::nms on NPU tensors goes through torch_npu's CPU fallback "
      "(unconfirmed for torchvision custom ops); performance"),
    C("self.cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.cuda = torch.npu.is_available()",
      "Profile() never synchronizes on NPU, so detect/val speed reports are wrong"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "as above"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed covers the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "as above"),
    C("os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'", "env_var", "removal", False, None,
      "cuBLAS-only determinism knob; no effect on Ascend"),
])

# ----------------------------------------------------------------------------------------------
# PytorchWildlife
# ----------------------------------------------------------------------------------------------

E("pw_demo", "demo/image_detection_demo.py", "transfer_to_npu",
  "PytorchWildlife demo/image_detection_demo.py (MegaDetectorV6 via ultralytics)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "ultralytics' own device selection only understands cuda/cpu/mps, so this thin demo is ported with "
      "transfer_to_npu (torch.cuda.* and 'cuda' strings redirected) instead of line edits"),
])

E("pw_yolo_base", "PytorchWildlife/models/detection/ultralytics_based/yolov8_base.py",
  "device_branch_or_abstraction",
  "PytorchWildlife models/detection/ultralytics_based/yolov8_base.py (YOLOV8Base for MDv6)", [
    C("# self.predictor.args.device = device # Will uncomment later", "device_type", "replace", True,
      "self.predictor.args.device = device",
      "without it ultralytics picks its own device (CUDA or CPU), so on an NPU host the detector silently "
      "runs on the CPU; ultralytics accepting 'npu' needs transfer_to_npu or a patched select_device "
      "(unconfirmed)"),
    C('self.predictor.args.half = "cuda" in str(device)', "device_type", "replace", False,
      'self.predictor.args.half = str(device).split(":")[0] in ("cuda", "npu")',
      "fp16 only requested for CUDA; fp32 on NPU is a performance difference"),
])

E("pw_classifier_base", "PytorchWildlife/models/classification/timm_base/base_classifier.py",
  "device_branch_or_abstraction",
  "PytorchWildlife timm-based species classifier base (AI4G Amazon / Serengeti / DeepFaune style)", [
    C('half = torch.cuda.is_available() and str(self.device) != "cpu"', "torch_cuda_api", "replace", False,
      'half = str(self.device) != "cpu"',
      "fp16 default keyed on CUDA; NPU silently runs fp32 (slower, slightly different scores)"),
])

E("pw_gradio", "demo/gradio_demo.py", "explicit_replacement",
  "PytorchWildlife demo/gradio_demo.py (model swapping, batch zip detection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"', "demo silently runs on CPU otherwise"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init (NPU memory of the swapped-out model is just not returned early)"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()",
      "runs on every model load once DEVICE is 'npu' and raises (ipc_collect does a lazy CUDA init)"),
    C("used = torch.cuda.memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "used = torch.npu.memory_allocated() / 2 ** 30", "returns 0 without CUDA init; status text only"),
    C("total = torch.cuda.get_device_properties(0).total_memory / 2 ** 30", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(0).total_memory / 2 ** 30", "raises on an NPU host"),
    C("det, version, clf, torch.cuda.get_device_name(0), used, total)", "torch_cuda_api", "replace", True,
      "det, version, clf, torch.npu.get_device_name(0), used, total)", "raises on an NPU host"),
    C('=if DEVICE == "cuda":', "device_type", "replace", False, 'if DEVICE != "cpu":',
      "guards a timing synchronize; unchanged the batch timing print is just optimistic"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "only reachable once the guard above is ported; log-only timing"),
    C('gr.Markdown("Running on **{}**".format("GPU (CUDA)" if DEVICE == "cuda" else "CPU"))', "device_type",
      "replace", False, 'gr.Markdown("Running on **{}**".format("NPU (Ascend)" if DEVICE == "npu" else "CPU"))',
      "UI text says CPU while running on the NPU"),
])

E("pw_dockerfile", "Dockerfile", "explicit_replacement",
  "PytorchWildlife-style Dockerfile for the GPU demo/batch server", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.rc3-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (driver mounted from the host); tag is illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime knob; Ascend containers get /dev/davinci* via --device instead"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "as above"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2 \\", "import_torch_npu", "replace",
      True, "RUN pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 \\",
      "torch_npu pairs with an exact torch version (2.1.0.postN for torch 2.1.0)"),
    C("--index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 NPU hosts use the CPU torch build (aarch64 uses plain PyPI)"),
    C("=COPY requirements.txt /app/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post8 pyyaml decorator attrs psutil",
      "install torch_npu before the unpinned requirements"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; the app only uses device 0 of what is mounted, so harmless"),
    C('CMD ["python", "demo/gradio_demo.py"]', "env_var", "replace", False,
      'CMD ["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && python demo/gradio_demo.py"]',
      "CANN env must be set in the container; many CANN base images already export it (unconfirmed)"),
])

# ----------------------------------------------------------------------------------------------
# BioCLIP / OpenCLIP training code
# ----------------------------------------------------------------------------------------------

E("bioclip_zeroshot", "scripts/zero_shot_classify.py", "explicit_replacement",
  "BioCLIP zero-shot taxon classification script (open_clip hf-hub:imageomics/bioclip)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("tokens = tokenizer(prompts).cuda()", "tensor_to_device", "replace", True,
      "tokens = tokenizer(prompts).to(device)", "CUDA transfer"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "inference-only autocast: silently disabled, text tower runs fp32 (performance)"),
    C('model = model.to("cuda")', "tensor_to_device", "replace", True, 'model = model.to("npu")',
      "CUDA transfer"),
    C("torch.cuda.get_device_name())", "torch_cuda_api", "replace", True,
      'logger.info("Loaded %s on %s", MODEL_STR, torch.npu.get_device_name())', "raises on an NPU host"),
    C('model.visual = torch.compile(model.visual, mode="max-autotune")', "compile_mode", "replace", False,
      'model.visual = torch.compile(model.visual, backend="npugraphs")',
      "opt-in --compile; max-autotune relies on Triton GPU autotuning; NPU graph backends need newer "
      "torch_npu (unconfirmed)"),
    C('txt_clf = build_text_classifier(model, tokenizer, texts, device="cuda")', "device_type", "replace",
      False, 'txt_clf = build_text_classifier(model, tokenizer, texts, device="npu")',
      "argument is not used inside the function (it calls .cuda()), so only cosmetic"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      'images = images.to("npu", non_blocking=True)', "CUDA transfer"),
    C('with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=not args.fp32):', "amp",
      "replace", False, 'with torch.no_grad(), torch.autocast("npu", dtype=torch.float16, enabled=not args.fp32):',
      "inference-only autocast; disabled with a warning on NPU, image tower runs fp32 (performance)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises (lazy CUDA init) on an NPU host"),
    C("torch.cuda.max_memory_allocated() / 1e9)", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1e9)", "logs 0 GB; cosmetic"),
])

E("bioclip_main", "src/training/main.py", "explicit_replacement",
  "BioCLIP / OpenCLIP src/training/main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "CUDA GradScaler disables itself on an NPU host while the ported autocast runs fp16 -> unscaled grads"),
])

E("bioclip_distributed", "src/training/distributed.py", "device_branch_or_abstraction",
  "OpenCLIP src/training/distributed.py (init_distributed_device)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif torch.npu.is_available(): device = 'npu:%d' % args.local_rank if args.distributed and not "
      "args.no_set_device_rank else 'npu:0'; torch.npu.set_device(device)",
      "otherwise every rank trains on the CPU"),
])

E("bioclip_train", "src/training/train.py", "explicit_replacement",
  "OpenCLIP src/training/train.py (train_one_epoch / evaluate, get_autocast)", [
    C("return torch.cuda.amp.autocast", "amp", "replace", True, "return torch.npu.amp.autocast",
      "--precision amp (the BioCLIP default) would silently train in fp32"),
    C("return lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
      "return lambda: torch.npu.amp.autocast(dtype=torch.bfloat16)", "same for amp_bf16"),
    C("gpu_mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "gpu_mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", "log shows 0 GB"),
])

E("bioclip_slurm", "slurm/train_bioclip_tol10m.sh", "explicit_replacement",
  "BioCLIP Slurm launcher (srun + OpenCLIP main.py on TreeOfLife-10M)", [
    C("#SBATCH --gpus-per-node=8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "GRES name depends on the cluster's Slurm config (unconfirmed)"),
    C("module load cuda/11.8 cudnn/8.9 nccl/2.18", "env_var", "replace", True, CANN_ENV,
      "CUDA modules do not exist on the NPU cluster (set -e aborts); CANN env is needed instead"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "diagnostics only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
      "2-node job: HCCL would otherwise pick its own host NIC for root-info negotiation"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
      "HCCL talks over the NPUs' own RoCE ports, not host HCAs"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "error-handling knob; HCCL counterpart unconfirmed in the notes"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only, no effect"),
    C("srun --cpu_bind=v --accel-bind=gn python -u src/training/main.py", "device_type", "replace", False,
      "srun --cpu_bind=v python -u src/training/main.py \\",
      "GPU binding flag; depends on how NPUs are exposed to Slurm (unconfirmed)"),
    C("--dist-backend nccl", "dist_backend", "replace", True, "--dist-backend hccl \\",
      "NCCL backend does not exist on NPU"),
])

E("bioclip_reqs", "requirements-training.txt", "explicit_replacement",
  "BioCLIP requirements-training.txt (CUDA wheel index, xformers, faiss-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.0.1+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build; and torch_npu for 2.0.1 is end-of-life, so move to a supported pair"),
    C("torchvision==0.15.2+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build; follows torch"),
    C("=pyyaml", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post8",
      "torch_npu pin appended at the end (must match torch 2.1.0)"),
    C("xformers==0.0.22", "attention_kernel", "removal", True, None,
      "no NPU build of xformers; open_clip falls back to F.scaled_dot_product_attention"),
    C("faiss-gpu==1.7.2", "custom_cuda_extension", "replace", True, "faiss-cpu==1.7.4",
      "CUDA-only package (no aarch64/NPU wheels)"),
])

E("bioclip_embed_search", "scripts/embed_and_search.py", "explicit_replacement",
  "BioCLIP embedding + faiss nearest-neighbour retrieval script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('EMBED_DEVICE = os.environ.get("BIOCLIP_DEVICE", "cuda:0")', "device_type", "replace", True,
      'EMBED_DEVICE = os.environ.get("BIOCLIP_DEVICE", "npu:0")', "default device string"),
    C('if device.startswith("cuda"):', "device_type", "replace", False,
      'if device.startswith(("cuda", "npu")):', "fp16 only on CUDA; performance"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init"),
])

# ----------------------------------------------------------------------------------------------
# SpeciesNet-style classifier (PyTorch)
# ----------------------------------------------------------------------------------------------

E("speciesnet_classifier", "speciesnet_pt/classifier.py", "device_branch_or_abstraction",
  "SpeciesNet-style EfficientNetV2 species classifier wrapper (PyTorch port)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu:0")',
      "autodetection falls to CPU on an NPU host"),
    C('if device.type != "cuda":', "device_type", "replace", False,
      'if device.type not in ("cuda", "npu"):', "auto batch size stays at 8 on NPU; performance"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info(device)", "only reachable once the guard above admits npu"),
    C('use_half = self.device.type == "cuda"', "device_type", "replace", False,
      'use_half = self.device.type in ("cuda", "npu")', "fp16 only on CUDA; performance"),
    C('=if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type == "npu":',
      "debug-log guard; unchanged it just skips the log on NPU"),
    C('logger.debug("peak memory %.2f GiB", torch.cuda.max_memory_allocated() / 2 ** 30)', "torch_cuda_api",
      "replace", False, 'logger.debug("peak memory %.2f GiB", torch.npu.max_memory_allocated() / 2 ** 30)',
      "only reachable once the guard is ported; debug log"),
])

E("speciesnet_multi", "speciesnet_pt/run_multi_gpu.py", "explicit_replacement",
  "SpeciesNet-style one-process-per-GPU ensemble runner", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; spawned workers re-import this module, so each child gets it too"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)", "CUDA call"),
    C('device = f"cuda:{gpu}"', "device_type", "replace", True, 'device = f"npu:{gpu}"', "worker device"),
    C("torch.cuda.get_device_name(gpu))", "torch_cuda_api", "replace", True,
      'logger.info("worker %d ready on %s (%s)", rank, device, torch.npu.get_device_name(gpu))',
      "raises on an NPU host"),
    C("torch.cuda.max_memory_allocated(gpu) / 2 ** 30)", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated(gpu) / 2 ** 30)", "log shows 0 GiB"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", False,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "the device_count fallback below already honours ASCEND_RT_VISIBLE_DEVICES"),
    C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "return list(range(torch.npu.device_count()))", "empty list -> 'no CUDA devices' exit"),
])

# ----------------------------------------------------------------------------------------------
# BirdNET-style audio classifier (PyTorch)
# ----------------------------------------------------------------------------------------------

E("birdnet_analyze", "birdnet_pt/analyze.py", "explicit_replacement",
  "BirdNET-Analyzer-style analyze.py re-implemented in PyTorch", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if device.type != "cuda" or not _NVML:', "device_type", "replace", False,
      'if device.type != "npu":',
      "NVML-based batch shrinking never applies on NPU (would use torch.npu.mem_get_info); robustness only"),
    C('if args.fp16 and device.type == "cuda":', "device_type", "replace", False,
      'if args.fp16 and device.type in ("cuda", "npu"):', "--fp16 silently ignored on NPU; performance"),
    C("x = torch.from_numpy(chunks[i:i + batch_size]).pin_memory().to(device, non_blocking=True)", "pin_memory",
      "replace", False, "x = torch.from_numpy(chunks[i:i + batch_size]).pin_memory(device).to(device, non_blocking=True)",
      "argument-less pin_memory() targets the CUDA pinned allocator on older torch (unconfirmed for the "
      "torch_npu pairing)"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16):', "amp", "replace", False,
      'with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=fp16):',
      "inference-only autocast, disabled with a warning on NPU; performance"),
    C('p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],', "device_type", "replace", True,
      'p.add_argument("--device", default="npu", choices=["npu", "cuda", "cpu"],',
      "NPU cannot even be requested; default 'cuda' falls back to CPU"),
    C('if args.device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if args.device == "npu" and not torch.npu.is_available():',
      "fallback check; inert once the device flag is ported"),
    C('device = torch.device(f"cuda:{args.gpu_id}" if args.device == "cuda" else "cpu")', "device_type",
      "replace", True, 'device = torch.device(f"npu:{args.gpu_id}" if args.device == "npu" else "cpu")',
      "device construction"),
    C('=if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "guards set_device; every tensor move uses the explicit device index, so skipping it is harmless"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", False, "torch.npu.set_device(device)",
      "only reachable once the guard is ported"),
])

E("birdnet_train", "birdnet_pt/train.py", "explicit_replacement",
  "BirdNET-style custom classifier training in PyTorch (torchrun DDP, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA call"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world)', "NCCL unavailable"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "training device"),
    C('persistent_workers=args.workers > 0, pin_memory_device="cuda")', "pin_memory", "replace", True,
      'persistent_workers=args.workers > 0, pin_memory_device="npu")',
      "pin thread pins for CUDA and fails on a host without CUDA"),
    C("model = torch.compile(model)", "compile_mode", "replace", False,
      'model = torch.compile(model, backend="npugraphs")',
      "opt-in --compile; default inductor has no NPU codegen with torch 2.1 (unconfirmed for newer pairs)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "must match the ported autocast"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):", "--amp silently becomes fp32 training"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on an NPU host"),
    C("running / len(train_dl), torch.cuda.max_memory_allocated() / 1e9)", "torch_cuda_api", "replace", False,
      "running / len(train_dl), torch.npu.max_memory_allocated() / 1e9)", "log shows 0 GB"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.no_grad(), torch.npu.amp.autocast(enabled=args.amp):",
      "validation-only autocast; fp32 validation is fine"),
])

E("birdnet_reqs", "requirements.txt", "explicit_replacement",
  "BirdNET-style PyTorch requirements.txt (+cu121 pins)", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "find-links page resolves CUDA builds; x86 NPU hosts need the CPU build"),
    C("torch==2.1.2+cu121", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build; torch_npu pairs with torch 2.1.0, not 2.1.2"),
    C("torchaudio==2.1.2+cu121", "import_torch_npu", "replace", True, "torchaudio==2.1.0", "follows torch"),
    C("nvidia-ml-py>=12.535", "custom_cuda_extension", "removal", False, None,
      "optional NVML probing; import is guarded"),
    C("=tensorboard", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post8",
      "torch_npu pin appended at the end"),
])

# ----------------------------------------------------------------------------------------------
# iNaturalist fine-tuning with timm
# ----------------------------------------------------------------------------------------------

E("inat_train", "train.py", "explicit_replacement",
  "timm-style train.py adapted for iNat21 fine-tuning (apex/native AMP, DDP, sync-bn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.device = 'cuda:0'", "device_type", "replace", False, "args.device = 'npu:0'",
      "only recorded in args.yaml; tensors are moved with .cuda() below"),
    C("args.device = 'cuda:%d' % args.local_rank", "device_type", "replace", False,
      "args.device = 'npu:%d' % args.local_rank", "as above"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "CUDA call"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace",
      True, "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "CUDA transfer"),
    C("=aux_head.cuda()", "tensor_to_device", "replace", True, "aux_head.npu()", "CUDA transfer"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "--channels-last: Ascend's migration notes say channels_last is not supported, use contiguous "
      "(performance; unconfirmed for explicit ports)"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", "replace", True, "amp_autocast = torch.npu.amp.autocast",
      "--amp would silently train in fp32"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True, "loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler wraps torch.cuda.amp.GradScaler (device arg only in newer timm)"),
    C("train_loss_fn = train_loss_fn.cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = train_loss_fn.npu()",
      "these loss modules have no parameters/buffers, so .cuda() touches no tensor and does not fail"),
    C("validate_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "validate_loss_fn = nn.CrossEntropyLoss().npu()", "as above"),
    C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "input, target = input.npu(), target.npu()", "CUDA transfer (--no-prefetcher path)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on an NPU host"),
    C("mem=torch.cuda.max_memory_allocated() / 1e9))", "torch_cuda_api", "replace", False,
      "mem=torch.npu.max_memory_allocated() / 1e9))", "log shows 0 GB"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "CUDA transfer"),
    C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "CUDA transfer"),
    C("torch.cuda.synchronize()  # for accurate batch timing", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # for accurate batch timing", "raises on an NPU host"),
])

E("inat_loader", "inat/loader.py", "explicit_replacement",
  "timm data/loader.py-style PrefetchLoader with CUDA side stream and GPU random erasing", [
    C("mode='pixel', min_count=1, max_count=None, device='cuda'):", "device_type", "replace", True,
      "mode='pixel', min_count=1, max_count=None, device='npu'):",
      "PrefetchLoader builds RandomErasingGPU without a device, so torch.empty(device='cuda') is hit"),
    C("self.mean = torch.tensor([x * 255 for x in mean]).cuda()", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([x * 255 for x in mean]).npu().view(normalization_shape)", "CUDA transfer"),
    C("self.std = torch.tensor([x * 255 for x in std]).cuda()", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([x * 255 for x in std]).npu().view(normalization_shape)", "CUDA transfer"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "stream = torch.npu.Stream()",
      "CUDA stream"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(stream):",
      "CUDA stream context"),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_input = next_input.npu(non_blocking=True)", "CUDA transfer"),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_target = next_target.npu(non_blocking=True)", "CUDA transfer"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(stream)", "CUDA stream sync"),
])

E("inat_sh", "distributed_train.sh", "explicit_replacement",
  "timm distributed_train.sh extended for multi-node iNat runs", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, CANN_ENV, "CANN runtime environment"),
    C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=$GPUS",
      "GPUS=4,5,6,7 selection silently ignored"),
    C("export NCCL_SOCKET_IFNAME=eth1", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth1",
      "multi-node NIC choice silently ignored"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL knob"),
    C('echo "Running on GPUs $CUDA_VISIBLE_DEVICES', "env_var", "replace", False,
      'echo "Running on NPUs $ASCEND_RT_VISIBLE_DEVICES (node $NODE_RANK/$NNODES, master $MASTER_ADDR:$MASTER_PORT)"',
      "log line would print an empty device list"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total", "device_capability_check", "replace", False,
      "npu-smi info", "no set -e here, so command-not-found is just noise"),
])

E("inat_cfg", "configs/inat21_effnetv2_m.yaml", "explicit_replacement",
  "timm YAML config for iNat21 EfficientNetV2-M fine-tuning", [
    C("=opt: fusedlamb", "fused_optimizer", "replace", True, "opt: lamb",
      "timm's fused* optimizers need apex CUDA kernels (FusedLAMB); pure-PyTorch lamb or "
      "torch_npu.optim.NpuFusedLamb instead"),
    C("=channels_last: true", "unsupported_op_workaround", "replace", False, "channels_last: false",
      "channels_last not recommended on Ascend (performance; unconfirmed)"),
])

# ----------------------------------------------------------------------------------------------
# Zamba-style video classifier (PyTorch Lightning)
# ----------------------------------------------------------------------------------------------

E("zamba_manager", "zamba/models/model_manager.py", "device_branch_or_abstraction",
  "Zamba zamba/models/model_manager.py (Lightning Trainer for camera-trap video species models)", [
    C("GPUS_AVAILABLE = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "GPUS_AVAILABLE = torch.npu.device_count()",
      "default gpus=0 -> Lightning trains on CPU without complaint"),
    C('accelerator = "gpu"', "device_type", "replace", True, 'accelerator = "npu"',
      "Lightning's 'gpu' accelerator means CUDA/MPS; needs an NPU accelerator plugin registered "
      "(availability unconfirmed)"),
    C("precision=16 if train_config.gpus > 0 else 32,", "amp", "replace", False,
      'precision="16-mixed" if train_config.gpus > 0 else 32,',
      "Lightning's 16-mixed plugin builds a CUDA GradScaler by default; needs an NPU-aware plugin (unconfirmed)"),
    C('strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="nccl")', "dist_backend",
      "replace", True, 'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl")',
      "NCCL unavailable"),
])
