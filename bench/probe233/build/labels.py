# Labels for probe233: animal pose estimation / behavioural tracking (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter edits; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: load the NPU backend (torch_npu) before any 'npu' device is created; "
               "mandatory up to torch_npu 2.5.0, recommended after (autoload)")
SET_ENV_NOTE = "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be loaded before torch_npu can import"

# ----------------------------------------------------------------------------------------------
# DeepLabCut 3.x PyTorch engine
# ----------------------------------------------------------------------------------------------
E("dlc_apis_training", "deeplabcut/pose_estimation_pytorch/apis/training.py",
  "device_branch_or_abstraction",
  "DeepLabCut 3.x PyTorch engine: apis/training.py (train_network / train behind deeplabcut.train_network)",
  [
      C('device: str | None = "cuda",', "device_type", "replace", True,
        'device: str | None = "npu",',
        "default device of train(); external callers that rely on it get a 'cuda' device that cannot be used on an NPU host"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gputouse)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gputouse)',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: gputouse would silently select nothing and every NPU stays visible"),
      C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"',
        "device derived from gputouse; 'cuda:0' fails on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host (CUDA never initialised); the NPU cache of the detector run is simply not released"),
  ])

E("dlc_runner_train", "deeplabcut/pose_estimation_pytorch/runners/train.py",
  "device_branch_or_abstraction",
  "DeepLabCut 3.x PyTorch engine: runners/train.py (TrainingRunner, PoseTrainingRunner, DetectorTrainingRunner)",
  [
      C("self.model = nn.DataParallel(self.model, device_ids=gpus)", "distributed_framework", "replace", True,
        "self.model = nn.parallel.DistributedDataParallel(self.model.to(f\"npu:{gpus[0]}\"), device_ids=[gpus[0]])  # torchrun + hccl",
        "multi-GPU path (runner.gpus with >1 entry) uses nn.DataParallel, which is unsupported on NPU (✘ in Ascend's 2.7.1 list); needs DDP with one process per NPU"),
      C('self.device = f"cuda:{gpus[0]}"', "device_type", "replace", True, 'self.device = f"npu:{gpus[0]}"',
        "hard-coded CUDA device for the multi-device path"),
      C('if str(self.device).startswith("cuda"):', "device_type", "replace", False,
        'if torch.device(self.device).type in ("cuda", "npu"):',
        "peak-memory logging only; on NPU the branch is silently skipped"),
      C("peak_gb = torch.cuda.max_memory_allocated(self.device) / (1024**3)", "torch_cuda_api", "replace", False,
        "peak_gb = getattr(torch, torch.device(self.device).type).max_memory_allocated(self.device) / (1024**3)",
        "needed once the condition above admits npu devices (torch.cuda.* raises for an npu device); logging only"),
      C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
        "getattr(torch, torch.device(self.device).type).reset_peak_memory_stats(self.device)",
        "same as above; logging only"),
      C("item[key] = item[key].cuda()", "tensor_to_device", "replace", True, "item[key] = item[key].to(self.device)",
        "detector targets hard-coded to CUDA; .cuda() raises on a torch build without CUDA"),
  ])

E("dlc_runner_inference", "deeplabcut/pose_estimation_pytorch/runners/inference.py",
  "device_branch_or_abstraction",
  "DeepLabCut 3.x PyTorch engine: runners/inference.py (InferenceRunner, PoseInferenceRunner, DetectorInferenceRunner)",
  [
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "add_branch", False,
        'elif "npu" in str(self.device): torch.npu.synchronize(self.device)',
        "only used with measure_speed; without a sync the NPU timings measure asynchronous launches only"),
  ])

E("dlc_apis_utils", "deeplabcut/pose_estimation_pytorch/apis/utils.py",
  "device_branch_or_abstraction",
  "DeepLabCut 3.x PyTorch engine: apis/utils.py (resolve_device, get_inference_runners, snapshots)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "DeepLabCut is driven through its API (deeplabcut.train_network / analyze_videos), not a script; resolve_device is where "
        "the NPU first appears, so the backend import goes into this module"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'elif torch.npu.is_available(): return "npu"',
        "device: auto silently resolves to the CPU on an NPU host"),
      C('elif device.startswith("cuda") and not torch.cuda.is_available():', "device_type", "add_branch", False,
        'elif device.startswith("npu") and not torch.npu.is_available():',
        "mirror the CPU fallback for npu devices; nice-to-have"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "no-op on an NPU host; torch.manual_seed should already seed the registered NPU backend (unconfirmed in knowledge)"),
      C('return f"{device} ({torch.cuda.get_device_name(index)})"', "torch_cuda_api", "add_branch", False,
        'elif device.startswith("npu"): return f"{device} ({torch.npu.get_device_name(torch.device(device).index or 0)})"',
        "log description only"),
  ])

E("dlc_pytorch_config", "dlc-models-pytorch/iteration-0/openfieldOct30-trainset95shuffle1/train/pytorch_config.yaml",
  "explicit_replacement",
  "DeepLabCut 3.x generated pytorch_config.yaml for a shuffle (openfield example project)",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "explicit CUDA device in the shuffle config; resolve_device passes it through (or falls back to CPU)"),
  ])

E("dlc_apis_videos", "deeplabcut/pose_estimation_pytorch/apis/videos.py",
  "device_branch_or_abstraction",
  "DeepLabCut 3.x PyTorch engine: apis/videos.py (analyze_videos, video_inference, VideoIterator)",
  [
      C('device = f"cuda:{gputouse}"', "device_type", "replace", True, 'device = f"npu:{gputouse}"',
        "gputouse mapped to a CUDA device string"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of the cache release between videos; False on NPU, so nothing is released"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "releases cached blocks between long videos; performance/memory only"),
  ])

E("dlc_fasterrcnn", "deeplabcut/pose_estimation_pytorch/models/detectors/torchvision.py",
  "explicit_replacement",
  "DeepLabCut 3.x PyTorch engine: models/detectors/torchvision.py (FasterRCNN / SSDLite adaptors)",
  [
      C("from torchvision.ops import batched_nms", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # NPU kernels for torchvision nms / roi_align",
        "FasterRCNN uses torchvision nms and RoIAlign; torchvision_npu provides NPU kernels. Without it the ops presumably take "
        "torch_npu's generic CPU fallback (slow) — unconfirmed that the fallback covers the torchvision namespace"),
  ])

E("dlc_conda_env", "conda-environments/DEEPLABCUT.yaml",
  "explicit_replacement",
  "DeepLabCut conda-environments/DEEPLABCUT.yaml (PyTorch engine, pytorch + nvidia channels)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "NVIDIA channel only supplies the CUDA runtime packages"),
      C("=- pytorch=2.0.1", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0  # CPU build; must equal the torch-npu version",
        "torch_npu wheels pair with one exact torch version; 2.0.1 only exists in the EOL matrix"),
      C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "pins the CUDA build of pytorch and the CUDA runtime; cannot be satisfied/used on an Ascend host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "nothing else installs the NPU backend"),
  ])

E("dlc_dockerfile", "docker/Dockerfile",
  "explicit_replacement",
  "DeepLabCut docker image (nvidia/cuda runtime base, pip torch from the cu118 index)",
  [
      C("ARG CUDA_VERSION=11.8.0", "torch_cuda_api", "replace", False, "ARG CANN_VERSION=8.0.0",
        "only feeds the base image tag"),
      C("ARG CUDNN_VERSION=8", "torch_cuda_api", "removal", False, None, "only feeds the base image tag"),
      C("FROM nvidia/cuda:", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu${UBUNTU_VERSION}-py3.10",
        "the CUDA runtime image has no CANN toolkit; torch_npu cannot load without it (image name plausible, not checked)"),
      C("ARG TORCH_VERSION=2.0.1", "import_torch_npu", "replace", True, "ARG TORCH_VERSION=2.1.0",
        "torch must equal the torch-npu wheel version"),
      C("ARG TORCHVISION_VERSION=0.15.2", "import_torch_npu", "replace", True, "ARG TORCHVISION_VERSION=0.16.0",
        "torchvision pins torch; has to follow the torch bump"),
      C("ARG TORCH_CUDA=cu118", "torch_cuda_api", "replace", True, "ARG TORCH_CUDA=cpu",
        "Ascend x86 hosts install CPU torch from download.pytorch.org/whl/cpu; the cu118 index is the CUDA build"),
      C("--index-url https://download.pytorch.org/whl/${TORCH_CUDA}", "import_torch_npu", "npu_only_addition", True,
        "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post17",
        "install the NPU backend after torch"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
        "Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES; usually passed at docker run instead"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container toolkit only"),
  ])

# ----------------------------------------------------------------------------------------------
# DeepLabCut-Live
# ----------------------------------------------------------------------------------------------
E("dlclive_main", "dlclive/dlclive.py",
  "device_branch_or_abstraction",
  "DeepLabCut-Live 3.x: dlclive/dlclive.py (DLCLive class, PyTorch engine)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
        "default device silently becomes the CPU on an NPU host (real-time inference then misses its frame budget)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
        'elif "npu" in str(self.device): torch.npu.empty_cache()',
        "cache release on close(); memory only"),
  ])

E("dlclive_runner", "dlclive/pose_estimation_pytorch/runner.py",
  "device_branch_or_abstraction",
  "DeepLabCut-Live 3.x: pose_estimation_pytorch/runner.py (PyTorchRunner, ONNX runner)",
  [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'elif torch.npu.is_available(): return "npu"',
        "device='auto' (the default) silently resolves to the CPU on an NPU host"),
      C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "add_branch", False,
        'elif self.device.startswith("npu"): providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
        "ONNX path; onnxruntime's CANN execution provider (onnxruntime-cann build) — unconfirmed in knowledge; otherwise ORT runs on the CPU"),
  ])

E("dlclive_benchmark", "dlclive/benchmark_pytorch.py",
  "explicit_replacement",
  "DeepLabCut-Live benchmark script (benchmark_videos / get_system_info) for the PyTorch engine",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        'elif torch.npu.is_available(): dev_type, dev, driver = "NPU", [torch.npu.get_device_name(torch.npu.current_device())], None',
        "system info would report the run as a CPU run; metadata only"),
      C("=if not _HAS_NVML:", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "NVML has no NPU equivalent; utilisation comes from torch.npu.utilization"),
      C("handle = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", "replace", False,
        "return float(torch.npu.utilization(index))",
        "pynvml (NVIDIA only) silently yields None on an NPU host; torch.npu.utilization per knowledge §6"),
      C("return float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)", "torch_cuda_api", "removal", False, None,
        "dead after the replacement above"),
      C('device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
        "default benchmark device"),
      C('use_gpu = str(device).startswith("cuda")', "device_type", "replace", True,
        'use_gpu = str(device).startswith(("cuda", "npu"))',
        "without it no device sync happens, so the measured latency (the benchmark's output) only covers async launches"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "reached once use_gpu is true on NPU; the CUDA call raises on a torch build without CUDA"),
      C("profiler = torch.profiler.profile(", "torch_cuda_api", "replace", True, "profiler = torch_npu.profiler.profile(",
        "--profile: the stock profiler records no NPU activity (torch_npu.profiler is what transfer_to_npu maps it to)"),
      C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
        "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
        "ProfilerActivity.CUDA -> ProfilerActivity.NPU; otherwise the trace silently lacks device activity"),
      C("schedule=torch.profiler.schedule(", "torch_cuda_api", "replace", False,
        "schedule=torch_npu.profiler.schedule(wait=5, warmup=5, active=20, repeat=1),",
        "transfer_to_npu maps schedule to torch_npu.profiler too; unconfirmed that the torch object is rejected"),
      C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", False,
        "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(",
        "torch_npu's handler writes the ascend_pytorch_profiler layout; unconfirmed that the torch handler fails"),
      C('torch.cuda.nvtx.range_push(f"frame {frame_index}")', "torch_cuda_api", "replace", True,
        'range_id = torch_npu.npu.mstx.range_start(f"frame {frame_index}")',
        "torch.cuda.nvtx is not redirected by torch_npu and raises on a non-CUDA build; mstx is the NPU counterpart (method names from memory)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on a torch build without CUDA"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(range_id)",
        "see range_push"),
      C('stats["peak_memory_mb"] = torch.cuda.max_memory_allocated() / 2**20', "torch_cuda_api", "replace", True,
        'stats["peak_memory_mb"] = torch.npu.max_memory_allocated() / 2**20',
        "silently reports 0 MB on an NPU host; this number is one of the benchmark's results"),
      C('"--device", type=str, default="cuda"', "device_type", "replace", True,
        '"--device", type=str, default="npu", help="torch device, e.g. npu:0 or cpu"',
        "CLI default device"),
  ])

# ----------------------------------------------------------------------------------------------
# SLEAP-style trainer ported to PyTorch
# ----------------------------------------------------------------------------------------------
E("sleap_trainer", "sleap_torch/training/trainer.py",
  "explicit_replacement",
  "SLEAP training loop (sleap.nn.training) ported to plain PyTorch: plateau LR, early stopping, AMP, DDP via torchrun",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "no-op on an NPU host; torch.manual_seed should already seed the NPU generator (unconfirmed in knowledge)"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL variable is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster docs)"),
      C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.local_rank)",
        "raises on a torch build without CUDA"),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")',
        "NCCL backend does not exist on an NPU host"),
      C('self.device = torch.device("cuda", self.local_rank)', "device_type", "replace", True,
        'self.device = torch.device("npu", self.local_rank)', "per-rank device"),
      C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "device: auto silently trains on the CPU on an NPU host"),
      C("pin_memory = torch.cuda.is_available()", "pin_memory", "replace", False, "pin_memory = torch.npu.is_available()",
        "False on NPU: unpinned host buffers, slower H2D copies only"),
      C("self.optimizer = torch.optim.Adam(", "fused_optimizer", "replace", False,
        "self.optimizer = torch_npu.optim.NpuFusedAdam(",
        "performance only (msFmkTransplt advice: NpuFused* optimizers)"),
      C("self.optimizer = torch.optim.AdamW(", "fused_optimizer", "replace", False,
        "self.optimizer = torch_npu.optim.NpuFusedAdamW(",
        "performance only; NpuFusedAdamW uses more memory"),
      C("fused=torch.cuda.is_available(),", "fused_optimizer", "removal", False, None,
        "evaluates to False on NPU (plain AdamW, slower); NpuFusedAdamW takes no fused= argument"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent: mixed_precision silently loses loss scaling"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):",
        "autocast('cuda') is disabled on a host without CUDA: the requested fp16 training silently runs in fp32"),
      C('msg += f" - gpu_mem: {torch.cuda.max_memory_allocated(self.device) / 1e9:.2f}GB"', "torch_cuda_api", "add_branch", False,
        'elif self.device.type == "npu": msg += f" - npu_mem: {torch.npu.max_memory_allocated(self.device) / 1e9:.2f}GB"',
        "epoch log only"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
        "--first-gpu would silently leave every NPU visible"),
  ])

E("sleap_peaks", "sleap_torch/inference/peak_finding.py",
  "device_branch_or_abstraction",
  "SLEAP peak finding (sleap.nn.peak_finding) ported to PyTorch: global/local peaks, integral refinement",
  [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not (torch.cuda.is_available() or torch.npu.is_available()):",
        "opt-in compile gate; on NPU the functions silently stay eager (performance only)"),
      C('return torch.compile(fn, mode="reduce-overhead", dynamic=False)', "compile_mode", "replace", False,
        'return torch.compile(fn, backend="npugraphs", dynamic=False)',
        "'reduce-overhead' means Inductor + CUDA graphs; Ascend documents backend='npugraphs' as the cudagraphs analogue. "
        "Whether the default Inductor path works with torch_npu is unconfirmed"),
  ])

E("sleap_predictors", "sleap_torch/inference/predictors.py",
  "device_branch_or_abstraction",
  "SLEAP predictors / sleap-track (sleap.nn.inference) ported to PyTorch: single-instance and top-down",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if torch.npu.is_available(): return torch.device("npu:0")',
        "--gpu auto silently runs inference on the CPU on an NPU host"),
      C('return torch.device(f"cuda:{device}")', "device_type", "replace", True, 'return torch.device(f"npu:{device}")',
        "integer --gpu index mapped to a CUDA device"),
      C('torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16)', "amp", "replace", True,
        "with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.float16, enabled=self.fp16):",
        "--fp16 silently ignored: autocast('cuda') is disabled without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "memory only; silent no-op on an NPU host"),
  ])

E("sleap_config", "sleap_torch/configs/centered_instance_fly32.yaml",
  "explicit_replacement",
  "SLEAP training profile (baseline_medium_rf.topdown) converted to YAML for the PyTorch port",
  [
      C("=device: cuda:0", "device_type", "replace", True, "device: npu:0", "explicit CUDA device in the training profile"),
  ])

E("sleap_launcher", "scripts/train_multi_gpu.sh",
  "explicit_replacement",
  "Lab launcher: torchrun multi-GPU training of the SLEAP PyTorch port with NCCL tweaks",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        SET_ENV_NOTE + "; wrapped in set +u in case the script expands unset variables (unconfirmed)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
        "device selection silently ignored otherwise"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; HCCL ignores it"),
      C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", False, None,
        "NCCL-only; no direct HCCL equivalent in knowledge"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob"),
      C('echo "Training ${CONFIG} on GPUs ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", True,
        'echo "Training ${CONFIG} on NPUs ${ASCEND_RT_VISIBLE_DEVICES} (${NUM_GPUS} processes)"',
        "under set -u, expanding the no-longer-exported CUDA_VISIBLE_DEVICES aborts the script"),
      C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi does not exist on Ascend hosts; under set -e the launcher stops here"),
  ])

# ----------------------------------------------------------------------------------------------
# MMPose 0.x (AP-10K animal configs)
# ----------------------------------------------------------------------------------------------
E("mmpose_ap10k_config", "configs/animal/2d_kpt_sview_rgb_img/topdown_heatmap/ap10k/hrnet_w32_ap10k_256x256.py",
  "explicit_replacement",
  "MMPose 0.x AP-10K HRNet-w32 top-down heatmap config",
  [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed to init_dist for --launcher pytorch; NCCL does not exist on an NPU host"),
  ])

E("mmpose_apis_train", "mmpose/apis/train.py",
  "explicit_replacement",
  "MMPose 0.x mmpose/apis/train.py (train_model, init_random_seed) on mmcv 1.x runners",
  [
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
        "def init_random_seed(seed=None, device='npu'):",
        "tools/train.py calls it without device; with world_size > 1 the broadcast tensor is created on 'cuda'"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(",
        "mmcv's MMDistributedDataParallel scatters DataContainers with CUDA-specific code (from memory); Ascend builds of mmcv "
        "ship NPUDistributedDataParallel — unconfirmed in knowledge"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
        ".cuda() raises on a torch build without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],",
        "torch.cuda.current_device() initialises CUDA and raises on an NPU host"),
      C("model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        "MMDataParallel subclasses nn.DataParallel (✘ on NPU) and the .cuda() call fails; NPUDataParallel is mmcv's NPU wrapper (name from memory)"),
      C("visible = os.environ.get('CUDA_VISIBLE_DEVICES', 'all')", "env_var", "replace", False,
        "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES', 'all')",
        "log line only"),
  ])

E("mmpose_tools_train", "tools/train.py",
  "explicit_replacement",
  "MMPose 0.x tools/train.py (argparse --gpus/--gpu-ids/--gpu-id, --launcher, init_dist)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("init_dist(args.launcher, **cfg.dist_params)", "dist_backend", "replace", False,
        'torch.npu.set_device(int(os.environ["LOCAL_RANK"])); dist.init_process_group(**cfg.dist_params)',
        "stock mmcv init_dist('pytorch') calls torch.cuda.set_device(rank % torch.cuda.device_count()) (from memory) and would "
        "fail with zero CUDA devices; NPU-enabled mmcv builds handle this — unconfirmed in knowledge"),
  ])

E("mmpose_dist_train", "tools/dist_train.sh",
  "explicit_replacement",
  "MMPose tools/dist_train.sh (torch.distributed.launch) with a lab multi-node NIC override",
  [
      C("# Copyright (c) OpenMMLab. All rights reserved.", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-enp94s0f0}", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-enp94s0f0}",
        "multi-node only: the comment says the default NIC choice is wrong on this cluster; HCCL ignores NCCL_SOCKET_IFNAME "
        "and its own default order (non-docker NICs by name) can pick an unreachable interface"),
  ])

E("mmpose_video_demo", "demo/top_down_video_demo_with_mmdet.py",
  "explicit_replacement",
  "MMPose 0.x demo/top_down_video_demo_with_mmdet.py used for AP-10K animal videos (with a lab timing option)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("'--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
        "'--device', default='npu:0', help='Device used for inference')",
        "default inference device for both mmdet and mmpose models"),
      C("on_gpu = args.device.lower().startswith('cuda')", "device_type", "replace", False,
        "on_gpu = args.device.lower().startswith(('cuda', 'npu'))",
        "--timing only: without a sync the NPU timings are too short"),
      C("sync = torch.cuda.synchronize if on_gpu else (lambda: None)", "torch_cuda_api", "replace", False,
        "sync = torch.npu.synchronize if on_gpu else (lambda: None)",
        "needed once on_gpu is true for npu; --timing only"),
  ])

E("mmpose_install", "scripts/install_env.sh",
  "explicit_replacement",
  "OpenMMLab-style environment setup script (conda pytorch + cudatoolkit, mmcv-full from the CUDA wheel index)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        SET_ENV_NOTE + " (needed by the sanity checks and by an mmcv build with NPU ops)"),
      C("CUDA=${CUDA:-cu113}", "torch_cuda_api", "removal", False, None, "only selects the CUDA wheel index"),
      C("TORCH=${TORCH:-1.12.1}", "import_torch_npu", "replace", True, "TORCH=${TORCH:-2.1.0}",
        "there is no torch_npu for torch 1.12; the wheel must equal the torch version"),
      C("TORCHVISION=${TORCHVISION:-0.13.1}", "import_torch_npu", "replace", True, "TORCHVISION=${TORCHVISION:-0.16.0}",
        "follows the torch bump"),
      C('conda install pytorch=="${TORCH}"', "torch_cuda_api", "replace", True,
        'pip install "torch==${TORCH}" "torchvision==${TORCHVISION}" --index-url https://download.pytorch.org/whl/cpu',
        "cudatoolkit build of pytorch; Ascend hosts use the CPU (x86) or PyPI (aarch64) torch plus torch-npu"),
      C("nvcc --version | grep release", "custom_cuda_extension", "removal", False, None,
        "nvcc probe; harmless thanks to the || fallback"),
      C("=pip install -U openmim", "import_torch_npu", "npu_only_addition", True, 'pip install "torch-npu==${TORCH}.post17"',
        "nothing else installs the NPU backend"),
      C('pip install "mmcv-full==${MMCV}" -f', "custom_cuda_extension", "replace", True,
        'MMCV_WITH_OPS=1 FORCE_NPU=1 pip install "mmcv-full==${MMCV}" --no-binary mmcv-full',
        "the cu113 wheel's compiled ops link the CUDA runtime, so import mmcv.ops fails; the NPU build flags are from memory (unconfirmed)"),
      C("print(torch.__version__, torch.cuda.is_available(), mmcv.__version__)", "torch_cuda_api", "replace", False,
        'python -c "import torch, torch_npu, mmcv; print(torch.__version__, torch.npu.is_available(), mmcv.__version__)"',
        "sanity print only (would print False)"),
      C("from mmcv.ops import get_compiling_cuda_version", "custom_cuda_extension", "removal", False, None,
        "CUDA build introspection; meaningless for an NPU build of mmcv"),
  ])

# ----------------------------------------------------------------------------------------------
# HRNet keypoint code base (AP-10K / Animal Kingdom baselines)
# ----------------------------------------------------------------------------------------------
E("hrnet_nms_setup", "lib/nms/setup_linux.py",
  "kernel_rewrite",
  "HRNet (deep-high-resolution-net) lib/nms/setup_linux.py building cpu_nms and the nvcc gpu_nms extension",
  [
      C("=CUDA = locate_cuda()", "custom_cuda_extension", "removal", True, None,
        "raises EnvironmentError at import without nvcc, so even cpu_nms cannot be built"),
      C("['nms_kernel.cu', 'gpu_nms.pyx'],", "custom_cuda_extension", "removal", True, None,
        "the nvcc-built CUDA NMS extension (whole Extension block) is dropped; NMS moves to torchvision(_npu) or an Ascend C op"),
      C("cmdclass={'build_ext': custom_build_ext},", "custom_cuda_extension", "replace", False,
        "cmdclass={'build_ext': build_ext},",
        "nvcc dispatch no longer needed (it would be harmless without .cu sources)"),
  ])

E("hrnet_nms", "lib/nms/nms.py",
  "kernel_rewrite",
  "HRNet lib/nms/nms.py (py/cpu/gpu NMS wrappers, OKS NMS, soft OKS NMS)",
  [
      C("from .gpu_nms import gpu_nms", "custom_cuda_extension", "replace", True,
        "from torchvision.ops import nms as tv_nms",
        "the CUDA extension is no longer built: ImportError when lib/nms is imported"),
      C("return gpu_nms(dets, thresh, device_id)", "custom_cuda_extension", "replace", True,
        'return tv_nms(torch.from_numpy(dets[:, :4]).to(f"npu:{device_id}"), torch.from_numpy(dets[:, 4]).to(f"npu:{device_id}"), thresh).cpu().numpy()',
        "call site of the CUDA kernel; torchvision nms uses x2-x1 widths (no +1), a small numeric difference"),
  ])

E("hrnet_train", "tools/train.py",
  "explicit_replacement",
  "HRNet keypoint tools/train.py (DataParallel over cfg.GPUS) as used by the Animal Kingdom / AP-10K baselines",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()", "distributed_framework", "replace", True,
        "model = model.npu()",
        "nn.DataParallel is unsupported on NPU and .cuda() fails; single device (or DDP via torchrun)"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "loss module moved to CUDA"),
      C("checkpoint = torch.load(checkpoint_file)", "device_type", "replace", False,
        "checkpoint = torch.load(checkpoint_file, map_location='cpu')",
        "only matters when auto-resuming a checkpoint written on a CUDA machine"),
      C("'best_state_dict': model.module.state_dict(),", "distributed_framework", "replace", True,
        "'best_state_dict': model.state_dict(),",
        "no .module once DataParallel is gone: AttributeError at the first checkpoint"),
      C("torch.save(model.module.state_dict(), final_model_state_file)", "distributed_framework", "replace", True,
        "torch.save(model.state_dict(), final_model_state_file)", "same as above"),
  ])

E("hrnet_function", "lib/core/function.py",
  "explicit_replacement",
  "HRNet keypoint lib/core/function.py (train / validate loops with flip test)",
  [
      C("data_time.update(time.time() - end)", "tensor_to_device", "npu_only_addition", True,
        "input = input.npu(non_blocking=True)",
        "DataParallel used to scatter the CPU batch; once it is removed the input has to be moved explicitly"),
      C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
      C("=target_weight = target_weight.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target_weight = target_weight.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
      C("for i, (input, target, target_weight, meta) in enumerate(val_loader):", "tensor_to_device", "npu_only_addition", True,
        "input = input.npu(non_blocking=True)", "same as the training loop"),
      C("output_flipped = torch.from_numpy(output_flipped.copy()).cuda()", "tensor_to_device", "replace", True,
        "output_flipped = torch.from_numpy(output_flipped.copy()).npu()", "flip-test heatmaps moved to CUDA"),
      C("target, target_weight = target.cuda(non_blocking=True), target_weight.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target, target_weight = target.npu(non_blocking=True), target_weight.npu(non_blocking=True)",
        ".cuda() fails on an NPU host"),
  ])

# ----------------------------------------------------------------------------------------------
# Lightning Pose
# ----------------------------------------------------------------------------------------------
E("lp_train_hydra", "scripts/train_hydra.py",
  "explicit_replacement",
  "Lightning Pose scripts/train_hydra.py (hydra entry point, pl.Trainer(accelerator='gpu'))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", False,
        "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
        "False on NPU, so precision falls back to 32-true (correct, slower); a blind cuda->npu rename would crash because "
        "get_device_capability() returns None on NPU"),
      C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", False, "elif torch.npu.is_available():",
        "precision heuristic only"),
      C('accelerator="gpu",  # TODO: control from outside', "device_type", "replace", True,
        'accelerator="npu",  # needs an NPU accelerator registered with Lightning',
        "Lightning's 'gpu' resolves to CUDA/MPS only, so the Trainer cannot be built on an NPU host; which NPU accelerator "
        "plugin to register is not covered by knowledge (unconfirmed)"),
  ])

E("lp_dali", "lightning_pose/data/dali.py",
  "explicit_replacement",
  "Lightning Pose lightning_pose/data/dali.py (NVIDIA DALI video pipelines for unlabeled frames)",
  [
      C("import nvidia.dali.fn as fn", "custom_cuda_extension", "removal", False, None,
        "DALI is NVIDIA-only; the loader is rewritten around a host-side decoder. The import itself may still work if the wheel is installed"),
      C("from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy", "custom_cuda_extension", "removal", False, None,
        "part of the same rewrite"),
      C('_DALI_DEVICE = "gpu"', "device_type", "replace", True,
        '_DECODE_DEVICE = "cpu"  # no NVDEC on Ascend hosts: decode on the host, Lightning moves batches to the NPU',
        "GPU pipelines (NVDEC decode, GPU resize/augment) cannot be built without a CUDA device"),
      C("class LitDaliWrapper(DALIGenericIterator):", "custom_cuda_extension", "replace", False,
        "class LitDaliWrapper(torch.utils.data.IterableDataset):",
        "part of the rewrite; only fails if the DALI wheel is absent"),
  ])

E("lp_predictions", "lightning_pose/utils/predictions.py",
  "explicit_replacement",
  "Lightning Pose lightning_pose/utils/predictions.py (PredictionHandler, predict_dataset, predict_single_video)",
  [
      C('trainer = pl.Trainer(accelerator="gpu", devices=1)', "device_type", "replace", True,
        'trainer = pl.Trainer(accelerator="npu", devices=1)',
        "fallback Trainer for prediction; 'gpu' cannot be satisfied on an NPU host"),
      C('trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False)', "device_type", "replace", True,
        'trainer = pl.Trainer(accelerator="npu", devices=1, logger=False)', "same, video prediction"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "memory only; silent no-op on an NPU host"),
      C("torch.cuda.empty_cache()  # release the DALI decoder buffers", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release the decoder buffers", "memory only"),
  ])

E("lp_setup", "setup.py",
  "explicit_replacement",
  "Lightning Pose setup.py (nvcc probe choosing the nvidia-dali-cudaXXX wheel)",
  [
      C("=cuda_version = get_cuda_version()", "custom_cuda_extension", "removal", False, None,
        "nvcc probe only chooses the DALI wheel; prints a CUDA-not-found warning on Ascend hosts"),
      C("=dali,", "custom_cuda_extension", "removal", False, None,
        "CUDA-only DALI wheel; unused after the loader rewrite (installability on aarch64 Ascend hosts unconfirmed)"),
      C('="torchvision",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post17",',
        "nothing else installs the NPU backend"),
      C('dependency_links=["https://developer.download.nvidia.com/compute/redist"],', "custom_cuda_extension", "removal", False, None,
        "NVIDIA index for DALI (and ignored by modern pip anyway)"),
  ])

E("lp_vits", "lightning_pose/models/backbones/vits.py",
  "device_branch_or_abstraction",
  "DINOv2-style ViT backbone for Lightning Pose heatmap models (SDPA, optional xFormers / flash-attn)",
  [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.autocast(device_type=x.device.type, enabled=False):",
        "the CUDA-only context leaves NPU autocast on, but interpolate is not on autocast's lower-precision list and the "
        "input is cast with .float(), so nothing changes numerically; hygiene"),
  ])
