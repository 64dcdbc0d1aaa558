# Labels for probe105: music source separation / speech enhancement, CUDA -> Ascend NPU.
# One entry per upstream file; one C(...) per line a careful porter would edit.
# See ../README.md ("How the labels were chosen") for the policy behind required/ported.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
IMPORT_NOTE = ("entry script: register the npu device before any device string is used; "
               "mandatory for the torch<2.5.1 builds these projects pin (autoload only since torch_npu 2.5.1)")

# ---------------------------------------------------------------- Demucs
E("demucs_separate", "demucs/separate.py", "device_branch_or_abstraction",
  "Demucs v4 `demucs.separate` CLI (-d/--device, --shifts, --overlap, --segment)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE),
    C('="cuda"', "device_type", "replace", True, '"npu"',
      "default device of -d/--device; must name the NPU"),
    C("=if th.cuda.is_available()", "torch_cuda_api", "replace", True,
      "if th.npu.is_available()",
      "False on an NPU host, so the default silently becomes cpu"),
])

E("demucs_apply", "demucs/apply.py", "device_branch_or_abstraction",
  "Demucs `apply_model` (BagOfModels, TensorChunk, split/overlap, shift trick)", [
    # Deliberately no labels: everything follows `device` / `mix.device`; the
    # `device.type == 'cpu'` thread-pool check is already right for 'npu'.
])

E("demucs_distrib", "demucs/distrib.py", "device_branch_or_abstraction",
  "Demucs distrib helpers on top of dora (init/average/wrap/share/loader)", [
    C("dora_distrib.init()", "dist_backend", "replace", False,
      'dora_distrib.init(backend="hccl")',
      "dora's init() defaults to the nccl backend as far as I recall; unconfirmed in the knowledge base"),
    C('def _init_manual(backend: str = "nccl"):', "dist_backend", "replace", True,
      'def _init_manual(backend: str = "hccl"):',
      "nccl process group cannot be created on NPU; HCCL is the backend"),
    C("rank % max(1, torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      'local_rank = int(os.environ.get("LOCAL_RANK", rank % max(1, torch.npu.device_count())))',
      "device_count() is 0 without CUDA, so every rank would fall back to device 0"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "raises on a host without CUDA"),
    C("tensor = torch.tensor(list(metrics) + [1], device='cuda'", "device_type", "replace", True,
      "tensor = torch.tensor(list(metrics) + [1], device='npu', dtype=torch.float32)",
      "HCCL all_reduce needs the tensor on the NPU; 'cuda' raises"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id must be the NPU index"),
    C("output_device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "output_device=torch.npu.current_device())", "same as device_ids"),
    C("size = torch.empty(1, device='cuda', dtype=torch.long)", "device_type", "replace", True,
      "size = torch.empty(1, device='npu', dtype=torch.long)", "broadcast buffer must live on the NPU"),
    C(".copy()).cuda()", "tensor_to_device", "replace", True,
      "buffer = torch.from_numpy(np.frombuffer(dump, dtype=np.uint8).copy()).npu()",
      ".cuda() raises without CUDA"),
    C("buffer = torch.empty(size[0].item(), device='cuda', dtype=torch.uint8)", "device_type",
      "replace", True, "buffer = torch.empty(size[0].item(), device='npu', dtype=torch.uint8)",
      "broadcast buffer must live on the NPU"),
])

E("demucs_train", "demucs/train.py", "device_branch_or_abstraction",
  "Demucs hydra/dora training entry point (get_model/get_optimizer/get_solver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "otherwise the model silently stays on CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "move the model to the NPU"),
])

E("demucs_solver", "demucs/solver.py", "device_branch_or_abstraction",
  "Demucs training Solver (EMAs, augment, checkpoints, per-batch metrics)", [
    C("losses['mem'] = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "losses['mem'] = torch.npu.max_memory_allocated() / 2 ** 20",
      "returns 0 when CUDA was never initialised; only a logged metric is wrong"),
])

E("demucs_env", "environment-cuda.yml", "device_branch_or_abstraction",
  "Demucs environment-cuda.yml (conda env with pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "channel only serves CUDA runtime packages; harmless but useless on NPU"),
    C("=- pytorch>=1.8.1,<2.2", "torch_cuda_api", "replace", True, "- torch==2.1.0  # moved under pip:",
      "torch_npu wheels pair with one exact torch version (2.1.0.postN <-> 2.1.0); the range resolves to 2.1.2"),
    C("=- torchaudio>=0.8,<2.2", "torch_cuda_api", "replace", False, "- torchaudio==2.1.0  # moved under pip:",
      "keep torchaudio in step with the pinned torch"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
      "selects the CUDA build of pytorch; torch_npu expects the CPU build of torch"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu pin matching torch 2.1.0 (CANN 8.x)"),
])

E("demucs_docker", "Dockerfile", "device_branch_or_abstraction",
  "Demucs GPU inference Dockerfile (nvidia/cuda base, cu118 wheels)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image; without CANN libs `import torch_npu` fails (libhccl/libascendcl not found)"),
    C("=ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "NVIDIA container runtime variable; no effect with Ascend Docker Runtime"),
    C("=ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA-only runtime variable"),
    C("torch==2.1.2 torchaudio==2.1.2 \\", "torch_cuda_api", "replace", True,
      "torch==2.1.0 torchaudio==2.1.0 \\",
      "no torch_npu release pairs with torch 2.1.2; 2.1.0 pairs with torch-npu 2.1.0.postN"),
    C("--index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs: CPU torch from whl/cpu on x86, plain PyPI on aarch64; the cu118 index only has CUDA builds"),
    C('pip install --no-cache-dir "demucs==${DEMUCS_VERSION}" soundfile', "import_torch_npu",
      "npu_only_addition", True, "RUN python3 -m pip install --no-cache-dir torch-npu==2.1.0.post12",
      "install the torch-npu wheel matching torch 2.1.0"),
])

E("demucs_batch_sh", "tools/separate_all.sh", "device_branch_or_abstraction",
  "shell launcher sharding `python -m demucs.separate -d cuda` over GPUs", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; " + SET_ENV + "; set -u",
      "CANN env must be sourced; set_env.sh trips over `set -u` (unbound CMAKE_PREFIX_PATH) so wrap it"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api",
      "replace", True, "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi does not exist on an Ascend host; with pipefail/-e the script exits here"),
    C("CUDA_VISIBLE_DEVICES=$gpu python3 -m demucs.separate", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python3 -m demucs.separate \\",
      "ignored on NPU, so every worker would land on npu:0"),
    C("=-d cuda \\", "device_type", "replace", True, "-d npu \\", "device passed to demucs.separate"),
])

# ---------------------------------------------------------------- Open-Unmix
E("umx_cli", "openunmix/cli.py", "device_branch_or_abstraction",
  "Open-Unmix `umx` inference CLI (--no-cuda, load_separator, predict.separate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()",
      "False on an NPU host: inference silently runs on CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device string"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached once use_cuda is true on NPU; torch.cuda.synchronize raises without CUDA"),
])

E("umx_filtering", "openunmix/filtering.py", "device_branch_or_abstraction",
  "Open-Unmix multichannel Wiener filter / EM on real-imag tensors", [
    C("=if double_precision:", "unsupported_op_workaround", "replace", False,
      'if double_precision and x.device.type != "npu":',
      "NPU has no float64: torch_npu warns 'Device do not support double dtype now, dtype cast "
      "replace with float' and computes in fp32; skip the cast (or run EM on CPU) to make that explicit"),
])

E("umx_train", "scripts/train.py", "device_branch_or_abstraction",
  "Open-Unmix training script (musdb, ReduceLROnPlateau, optional AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", False,
      'with torch.autocast("npu", enabled=scaler is not None):',
      "CUDA autocast is disabled with a warning on a host without CUDA; training silently runs in fp32"),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()", "silent CPU training otherwise"),
    C('dataloader_kwargs = {"num_workers": args.nb_workers, "pin_memory": True} if use_cuda else {}',
      "pin_memory", "replace", False,
      'dataloader_kwargs = {"num_workers": args.nb_workers, "pin_memory": True, "pin_memory_device": "npu"} if use_cuda else {}',
      "without a pin_memory_device the loader pins only for CUDA; performance only (npu pin device unconfirmed)"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device string"),
    C("grad_scaler = torch.cuda.amp.GradScaler() if (args.amp and use_cuda) else None", "amp",
      "replace", False,
      "grad_scaler = torch.npu.amp.GradScaler() if (args.amp and use_cuda) else None",
      "CUDA GradScaler disables itself without CUDA; AMP silently off"),
])

# ---------------------------------------------------------------- UVR / MDX-Net
E("uvr_separate", "separate.py", "device_branch_or_abstraction",
  "Ultimate Vocal Remover separate.py (SeperateMDX/SeperateDemucs, onnxruntime providers, clear_gpu_cache)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      'npu_available = hasattr(torch, "npu") and torch.npu.is_available()',
      "UVR keeps CUDA/MPS; an NPU probe has to be added or GPU conversion silently runs on CPU"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "        torch.npu.empty_cache() if npu_available else torch.cuda.empty_cache()",
      "no-op without CUDA; NPU cache is never released between models"),
    C("=if cuda_available:", "device_type", "add_branch", True,
      "elif npu_available: self.device, self.is_other_gpu = f'npu:{self.device_set}' if device_prefix else 'npu', True",
      "NPU branch; is_other_gpu=True routes MDX ONNX models through onnx2pytorch on the NPU, "
      "as UVR already does for MPS (no onnxruntime EP needed)"),
    C("klass, args, kwargs, state = torch.load(self.model_path)", "device_type", "replace", False,
      "klass, args, kwargs, state = torch.load(self.model_path, map_location='cpu')",
      "fails only if the Demucs v1 checkpoint holds CUDA tensors; unconfirmed for the shipped files"),
    C("self.demucs.load_state_dict(torch.load(self.model_path))", "device_type", "replace", False,
      "self.demucs.load_state_dict(torch.load(self.model_path, map_location='cpu'))",
      "same as above for Demucs v2 checkpoints; unconfirmed"),
])

E("uvr_tfc_tdf", "lib_v5/tfc_tdf_v3.py", "device_branch_or_abstraction",
  "UVR / MDX23C TFC_TDF_net with its STFT helper (MPS round-trip to CPU)", [
    C('x_is_mps = not x.device.type in ["cuda", "cpu"]', "device_type", "replace", False,
      'x_is_mps = not x.device.type in ["cuda", "cpu", "npu"]',
      "written for MPS: any other device is sent to CPU for torch.stft; Ascend lists torch.stft as "
      "supported (fp32), so on NPU this is a needless host round-trip (performance only)"),
])

E("uvr_attend", "lib_v5/bs_roformer/attend.py", "explicit_replacement",
  "BS-/Mel-RoFormer Attend (lucidrains) as vendored by UVR: sdp_kernel configs, A100 detection", [
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext() if q.device.type == 'npu' else torch.backends.cuda.sdp_kernel(**config._asdict()):",
      "Ascend's 2.7.1 list marks torch.backends.cuda.sdp_kernel unsupported; the flags do not steer the NPU "
      "SDPA kernel. Whether it raises is unconfirmed; SDPA itself is supported"),
])

E("mdx_inference", "inference.py", "device_branch_or_abstraction",
  "KUIELab MDX-Net ONNX inference script (onnxruntime-gpu + torch STFT, optional Demucs blend)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace",
      True, "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "silent CPU fallback otherwise"),
    C("providers = ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
      "providers = ['CANNExecutionProvider', 'CPUExecutionProvider']",
      "onnxruntime drops the unavailable CUDA EP and runs on CPU; CANN EP needs the onnxruntime-cann build "
      "(unconfirmed in the knowledge base)"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "f'({torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB peak)')",
      "returns 0 when CUDA is uninitialised; log only"),
    C("        torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "        torch.npu.empty_cache()", "no-op without CUDA"),
])

E("uvr_requirements", "requirements.txt", "device_branch_or_abstraction",
  "UVR requirements.txt with cu118 torch wheels and onnxruntime-gpu", [
    C("=--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "offers +cu118 builds that satisfy a plain torch pin on x86; CPU torch is what torch_npu expects"),
    C("=torch==2.0.1+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; torch_npu needs the matching plain torch version"),
    C("=torchaudio==2.0.2+cu118", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
      "CUDA local-version wheel; keep in step with torch"),
    C("=onnxruntime-gpu==1.15.1", "torch_cuda_api", "replace", False, "onnxruntime==1.15.1",
      "CUDA build of onnxruntime; no aarch64 wheels as far as I know (unconfirmed); CANN EP needs onnxruntime-cann"),
    C("PySoundFile==0.9.0.post1; sys_platform == 'darwin'", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12; sys_platform == 'linux'", "torch-npu pin appended at the end"),
])

# ---------------------------------------------------------------- DeepFilterNet
E("df_utils", "DeepFilterNet/df/utils.py", "device_branch_or_abstraction",
  "DeepFilterNet df/utils.py (get_device, complex helpers, seeding, memory report)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'elif torch.npu.is_available(): DEVICE = torch.device("npu:0")',
      "get_device() is the single device switch of the project; without an NPU branch everything runs on CPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazily queued and never run without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      'if not (torch.cuda.is_available() or torch.npu.is_available()):',
      "memory report silently empty on NPU"),
    C("alloc = torch.cuda.memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 2**20", "log only"),
    C("peak = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2**20", "log only"),
    C("reserved = torch.cuda.memory_reserved() / 2**20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 2**20", "log only"),
])

E("df_enhance", "DeepFilterNet/df/enhance.py", "device_branch_or_abstraction",
  "DeepFilterNet `deepFilter` enhance CLI (init_df, df_features, enhance, RTF logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if get_device().type == "cuda":', "device_type", "add_branch", False,
      'elif get_device().type == "npu": torch.npu.synchronize()',
      "timing sync for the RTF log; the .cpu() in enhance() already synchronises, so log accuracy only"),
])

E("df_train", "DeepFilterNet/df/train.py", "device_branch_or_abstraction",
  "DeepFilterNet training loop (libdfdata PytorchDataLoader, run_epoch, checkpoints)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('pin_memory=get_device().type == "cuda",', "pin_memory", "replace", False,
      'pin_memory=get_device().type in ("cuda", "npu"),',
      "pinning switched off on NPU; slower host-to-device copies only. Unconfirmed whether libdfdata's pin call targets npu without a device argument"),
    C("    torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "    torch.npu.empty_cache()",
      "no-op without CUDA; cached NPU memory after a NaN batch is not released"),
])

E("df_pyproject", "DeepFilterNet/pyproject.toml", "device_branch_or_abstraction",
  "DeepFilterNet poetry pyproject with an explicit cu118 torch source", [
    C("""{ version = "2.1.2+cu118", source = "pytorch", markers = "sys_platform == 'linux'" },""",
      "torch_cuda_api", "replace", True,
      """{ version = "2.1.0", source = "pytorch", markers = "sys_platform == 'linux'" },""",
      "CUDA wheel of a torch version with no torch_npu pair"),
    C('{ version = "2.1.2+cu118", source = "pytorch", platform = "linux" },', "torch_cuda_api", "replace",
      True, '{ version = "2.1.0", source = "pytorch", platform = "linux" },',
      "torchaudio must match the torch pin"),
    C('=numpy = ">=1.22"', "import_torch_npu", "npu_only_addition", True,
      'torch-npu = { version = "2.1.0.post12", platform = "linux" }', "torch-npu dependency"),
    C('nvidia-ml-py = { version = ">=11.525", optional = true }', "torch_cuda_api", "removal", False, None,
      "NVML binding; installs but has nothing to talk to on an Ascend host"),
    C('train = ["deepfilterdataloader", "icecream", "nvidia-ml-py"]', "torch_cuda_api", "replace", False,
      'train = ["deepfilterdataloader", "icecream"]', "follows the removal above"),
    C('url = "https://download.pytorch.org/whl/cu118"', "torch_cuda_api", "replace", True,
      'url = "https://download.pytorch.org/whl/cpu"',
      "explicit source only serves CUDA builds; torch_npu expects CPU torch (x86) / PyPI torch (aarch64)"),
])

# ---------------------------------------------------------------- Asteroid
E("asteroid_train", "egs/wham/ConvTasNet/train.py", "explicit_replacement",
  "Asteroid WHAM ConvTasNet recipe train.py (pytorch-lightning 1.x Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus = -1 if torch.cuda.is_available() else None", "device_type", "replace", True,
      'accelerator = "npu" if torch.npu.is_available() else "cpu"',
      "False on NPU: Lightning silently trains on CPU. An 'npu' accelerator needs a Lightning build/plugin "
      "that provides it (unconfirmed)"),
    C('distributed_backend = "ddp" if torch.cuda.is_available() else None', "distributed_framework",
      "replace", True,
      'strategy = DDPStrategy(process_group_backend="hccl") if torch.npu.is_available() else None',
      "DDP must be created with the hccl process-group backend"),
    C("=gpus=gpus,", "device_type", "replace", True, 'accelerator=accelerator, devices=-1,',
      "follows the accelerator change"),
    C("=distributed_backend=distributed_backend,", "distributed_framework", "replace", True,
      "strategy=strategy,", "follows the strategy change"),
])

E("asteroid_eval", "egs/wham/ConvTasNet/eval.py", "explicit_replacement",
  "Asteroid WHAM ConvTasNet recipe eval.py (--use_gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "run.sh passes --use_gpu 1; .cuda() raises without CUDA"),
])

E("asteroid_run_sh", "egs/wham/ConvTasNet/run.sh", "explicit_replacement",
  "Asteroid recipe run.sh (stages, id=$CUDA_VISIBLE_DEVICES)", [
    C("=set -o pipefail", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (libascendcl, libhccl) for every python stage"),
    C("=id=$CUDA_VISIBLE_DEVICES", "env_var", "replace", False, "id=$ASCEND_RT_VISIBLE_DEVICES",
      "only the default of --id"),
    C("CUDA_VISIBLE_DEVICES=$id $python_path train.py", "env_var", "replace", True,
      "  ASCEND_RT_VISIBLE_DEVICES=$id $python_path train.py \\",
      "CUDA_VISIBLE_DEVICES is ignored on NPU; --id would no longer select devices"),
    C("CUDA_VISIBLE_DEVICES=$id $python_path eval.py", "env_var", "replace", True,
      "\tASCEND_RT_VISIBLE_DEVICES=$id $python_path eval.py \\", "same for evaluation"),
])

# ---------------------------------------------------------------- SpeechBrain
E("sb_sepformer_train", "recipes/WSJ0Mix/separation/train.py", "explicit_replacement",
  "SpeechBrain WSJ0Mix/WHAMR separation recipe (SepFormer Brain, auto_mix_prec)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast", "amp", "replace", False,
      "from torch_npu.npu.amp import autocast",
      "CUDA autocast disables itself without CUDA: fit_batch silently runs in fp32"),
])

E("sb_sepformer_yaml", "recipes/WSJ0Mix/separation/hparams/sepformer-whamr-dm.yaml", "explicit_replacement",
  "SpeechBrain SepFormer WHAMR! hparams (run options device/distributed_backend in YAML)", [
    C("=device: cuda:0", "device_type", "replace", True, "device: npu:0",
      "sb.Brain reads it when the CLI gives no --device"),
    C("=distributed_backend: nccl", "dist_backend", "replace", True, "distributed_backend: hccl",
      "nccl is unavailable on NPU (SpeechBrain's own backend check may need patching to accept hccl; unconfirmed)"),
])

E("sb_enhance_folder", "tools/enhance_folder.py", "device_branch_or_abstraction",
  "batch enhancement/separation script around speechbrain.pretrained.SepformerSeparation", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu:0")',
      "default falls back to CPU on an NPU host (next check)"),
    C('if args.device.startswith("cuda") and not torch.cuda.is_available():', "torch_cuda_api",
      "add_branch", False,
      'elif args.device.startswith("npu") and not torch.npu.is_available():',
      "mirror the availability fallback for npu devices"),
    C('torch.autocast(device_type="cuda", dtype=torch.float16,', "amp", "replace", False,
      'with torch.no_grad(), torch.autocast(device_type=model.device.split(":")[0], dtype=torch.float16,',
      "CUDA autocast on NPU tensors is a no-op; --fp16 silently ignored"),
    C('use_amp = args.fp16 and args.device.startswith("cuda")', "amp", "replace", False,
      'use_amp = args.fp16 and args.device.startswith(("cuda", "npu"))', "--fp16 gated on cuda"),
    C('=if args.device.startswith("cuda"):', "device_type", "replace", False,
      'if args.device.startswith(("cuda", "npu")):', "memory report skipped on NPU"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'print(f"peak device memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', "log only"),
])

E("sb_ddp_launch", "recipes/WSJ0Mix/separation/run_ddp.sh", "explicit_replacement",
  "single-node DDP launcher for the SepFormer recipe (torch.distributed.launch, NCCL env)", [
    C("=set -eo pipefail", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "ignored on NPU: a user-chosen device set would silently map to npu:0..N-1"),
    C('NGPUS=${NGPUS:-$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      'NGPUS=${NGPUS:-$(echo "$ASCEND_RT_VISIBLE_DEVICES" | tr \',\' \'\\n\' | wc -l)}',
      "process count is derived from the visible-device list"),
    C("=export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "no HCCL equivalent of NCCL_DEBUG; CANN log level is the closest knob"),
    C("=export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no effect on HCCL"),
    C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no effect on HCCL"),
    C("=export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "CUDA allocator setting is ignored; NPU allocator option name unconfirmed for max_split_size_mb"),
    C("torch.version.cuda, torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.device_count())"',
      "diagnostic print only (prints None 0 on NPU)"),
    C("=--distributed_backend=nccl \\", "dist_backend", "replace", True, "--distributed_backend=hccl \\",
      "nccl process group cannot be created on NPU"),
])

# ---------------------------------------------------------------- Conv-TasNet (kaituoxu-style)
E("tasnet_solver", "src/solver.py", "explicit_replacement",
  "Conv-TasNet Solver with SI-SNR PIT loss, AMP and gradient accumulation", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "CUDA GradScaler disables itself without CUDA; AMP silently off"),
    C("package = torch.load(self.continue_from)", "device_type", "replace", False,
      "package = torch.load(self.continue_from, map_location='cpu')",
      "fails only when resuming a checkpoint written on a CUDA machine"),
    C("padded_mixture = padded_mixture.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "padded_mixture = padded_mixture.npu(non_blocking=True)", ".cuda() raises; use_cuda defaults to 1"),
    C("mixture_lengths = mixture_lengths.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "mixture_lengths = mixture_lengths.npu(non_blocking=True)", "same"),
    C("padded_source = padded_source.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "padded_source = padded_source.npu(non_blocking=True)", "same"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):", "CUDA autocast is a no-op on NPU"),
    C("mem = torch.cuda.memory_reserved() / 2 ** 30 if self.use_cuda else 0.0", "torch_cuda_api",
      "replace", False, "mem = torch.npu.memory_reserved() / 2 ** 30 if self.use_cuda else 0.0",
      "returns 0 without CUDA; log only"),
])

E("tasnet_train", "src/train.py", "explicit_replacement",
  "Conv-TasNet train.py (argparse --use_cuda/--gpu_ids, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", "redundant with torch.manual_seed; no-op without CUDA"),
    C("model = torch.nn.DataParallel(model, device_ids=gpu_ids)", "distributed_framework", "replace", True,
      "model = SingleModuleWrapper(model.npu(gpu_ids[0]))  # keeps .module; DataParallel unsupported on NPU",
      "torch.nn.DataParallel is unsupported on Ascend (use one device or DDP+hccl)"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
])

E("tasnet_separate", "src/separate.py", "explicit_replacement",
  "Conv-TasNet separate.py (--use_cuda inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() raises without CUDA"),
    C("mixture, mix_lengths = mixture.cuda(), mix_lengths.cuda()", "tensor_to_device", "replace", True,
      "mixture, mix_lengths = mixture.npu(), mix_lengths.npu()", "same"),
])
