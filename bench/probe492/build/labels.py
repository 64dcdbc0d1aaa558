"""Labels for probe492 (bioacoustics: PANNs, BatDetect2, ANIMAL-SPOT, HawkEars, BEATs/AVES/BEANS).

One label per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port,
no transfer_to_npu). `required` = with every other labelled line already ported, leaving this line
unchanged would fail, compute something wrong, or silently do the wrong thing on an NPU host.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch_npu must be imported before any torch.npu call or 'npu' device string "
               "is used (torch_npu < 2.5.1 has no backend autoload)")

# ---------------------------------------------------------------- PANNs (qiuqiangkong/audioset_tagging_cnn)
E("panns_main", "pytorch/main.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/main.py (AudioSet training loop, --cuda flag, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
      "torch.cuda.is_available() is False on an NPU host, so --cuda silently trains on CPU"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "the device string later used for model.to() and move_data_to_device"),
    C("checkpoint = torch.load(resume_checkpoint_path)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(resume_checkpoint_path, map_location='cpu')",
      "resume reads checkpoints this (ported) script wrote itself, so they hold npu tensors and load; "
      "map_location only matters when resuming a GPU-written checkpoint"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))",
      "log only: torch.cuda.device_count() quietly returns 0 on an NPU host"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is not supported on Ascend (support list marks it unsupported; use single device or DDP)"),
    C("if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
      "otherwise the model stays on CPU while batches are moved to npu"),
    C("'model': model.module.state_dict(),", "unsupported_op_workaround", "replace", True,
      "'model': model.state_dict(),",
      "follows from removing DataParallel: there is no .module wrapper any more"),
])

E("panns_models", "pytorch/models.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/models.py (Cnn14 / DecisionLevelAtt with torchlibrosa front end)", [])

E("panns_pytorch_utils", "pytorch/pytorch_utils.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/pytorch_utils.py (move_data_to_device, forward, count_flops)", [])

E("panns_inference", "pytorch/inference.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/inference.py (audio tagging and sound event detection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
      "audio_tagging: --cuda would silently fall back to CPU"),
    C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
      "model.to(device) is inside this branch; without it weights stay on CPU, input on npu"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
    C("=model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
      "DataParallel unsupported on Ascend; single-clip inference needs no wrapper"),
    C("device = torch.device('cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu')",
      "device_type", "replace", True,
      "device = torch.device('npu' if (args.cuda and torch.npu.is_available()) else 'cpu')",
      "sound_event_detection variant of the device selection"),
    C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
      "guards the only .to(device) of the SED model"),
    C("model = torch.nn.DataParallel(model).to(device)", "unsupported_op_workaround", "replace", True,
      "model = model.to(device)", "drop DataParallel, keep the device move"),
])

E("panns_finetune", "pytorch/finetune_template.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn pytorch/finetune_template.py (Transfer_Cnn14, extended to a species CSV)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(pretrained_checkpoint_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(pretrained_checkpoint_path, map_location='cpu')",
      "the released Cnn14 checkpoint was saved from a CUDA DataParallel model (model.module.state_dict() on GPU); "
      "deserialising CUDA tensors without map_location fails on a host without CUDA"),
    C("device = 'cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if (args.cuda and torch.npu.is_available()) else 'cpu'", "silent CPU fallback otherwise"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "torch.manual_seed on the line above already seeds registered accelerator backends; kept for explicitness"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log only"),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
      "DataParallel unsupported on Ascend"),
    C("if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
      "guards model.to(device)"),
    C("torch.save({'model': model.module.state_dict(), 'species': species,", "unsupported_op_workaround", "replace",
      True, "torch.save({'model': model.state_dict(), 'species': species,",
      "follows from removing DataParallel (.module no longer exists)"),
])

E("panns_runme", "runme.sh", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn runme.sh (data packing, training and inference launch lines)", [
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/main.py train \\",
      "selects device 0, which single-device NPU code uses anyway; CUDA_VISIBLE_DEVICES is ignored on Ascend"),
    C("CUDA_VISIBLE_DEVICES=1 python3 pytorch/finetune_template.py train", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 pytorch/finetune_template.py train \\",
      "the job is meant to run on the second card; unported it silently lands on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/inference.py sound_event_detection", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/inference.py sound_event_detection \\",
      "device 0 is the default anyway"),
])

E("panns_config", "utils/config.py", "explicit_replacement",
  "qiuqiangkong/audioset_tagging_cnn utils/config.py (labels, clip length)", [])

# ---------------------------------------------------------------- BatDetect2 (macaodha/batdetect2)
E("bd2_api", "batdetect2/api.py", "explicit_replacement",
  "macaodha/batdetect2 batdetect2/api.py (module-level DEVICE and default MODEL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "library entry module evaluates torch.npu.is_available() at import time, so torch_npu must be loaded here"),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level default device for every API call; would silently be CPU"),
])

E("bd2_detector_utils", "batdetect2/utils/detector_utils.py", "explicit_replacement",
  "macaodha/batdetect2 batdetect2/utils/detector_utils.py (load_model, spectrogram, chunked processing)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "default when load_model() is called without device (documented api.load_model() usage)"),
])

E("bd2_train_model", "batdetect2/train/train_model.py", "explicit_replacement",
  "macaodha/batdetect2 batdetect2/train/train_model.py (params['device'], DataLoader, Net2DFast training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise training silently runs on CPU"),
    C('params["device"] = "cuda"', "device_type", "replace", True, 'params["device"] = "npu"',
      "device string consumed by every .to(params['device'])"),
])

E("bd2_models", "batdetect2/detector/models.py", "explicit_replacement",
  "macaodha/batdetect2 batdetect2/detector/models.py (Net2DFast variants)", [])

# ---------------------------------------------------------------- ANIMAL-SPOT / ORCA-SPOT (ChristianBergler)
E("aspot_main", "ANIMAL-SPOT/main.py", "explicit_replacement",
  "ChristianBergler/ANIMAL-SPOT main.py (orca/whale call-vs-noise training, --no_cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("ARGS.cuda = torch.cuda.is_available() and ARGS.cuda", "torch_cuda_api", "replace", True,
      "ARGS.cuda = torch.npu.is_available() and ARGS.cuda",
      "flag name kept; availability must be asked of the npu backend"),
    C('ARGS.device = torch.device("cuda") if ARGS.cuda else torch.device("cpu")', "device_type", "replace", True,
      'ARGS.device = torch.device("npu") if ARGS.cuda else torch.device("cpu")', "training device"),
])

E("aspot_trainer", "ANIMAL-SPOT/trainer.py", "explicit_replacement",
  "ChristianBergler/ANIMAL-SPOT trainer.py (fit/train_epoch/test_epoch, tensorboard summaries)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on an NPU host when unported; only cached memory is not released after validation"),
])

E("aspot_predict", "ANIMAL-SPOT/predict.py", "explicit_replacement",
  "ChristianBergler/ANIMAL-SPOT predict.py (sliding-window detection over long hydrophone recordings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model_dict = torch.load(ARGS.model_path)", "tensor_to_device", "replace", True,
      'model_dict = torch.load(ARGS.model_path, map_location="cpu")',
      "ANIMAL-SPOT.pk holds the state dicts of a model that was on the training GPU (main.py saves without .cpu()); "
      "models trained elsewhere fail to deserialise on a host without CUDA"),
    C("if torch.cuda.is_available() and ARGS.cuda:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and ARGS.cuda:", "otherwise inference silently stays on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("input = input.cuda() if next(model.parameters()).is_cuda else input", "tensor_to_device", "replace", True,
      "input = input.npu() if next(model.parameters()).is_npu else input",
      "is_cuda is False for npu parameters, so the batch would stay on CPU while the model is on npu"),
])

E("aspot_transforms", "ANIMAL-SPOT/data/transforms.py", "explicit_replacement",
  "ChristianBergler/ANIMAL-SPOT data/transforms.py (STFT, augmentation, plus a band-energy pre-detector)", [
    C("freqs = torch.fft.rfftfreq(self.n_fft, d=1.0 / self.sr, device=device)", "unsupported_op_workaround",
      "replace", False, "freqs = torch.fft.rfftfreq(self.n_fft, d=1.0 / self.sr).to(device)",
      "torch.fft.rfftfreq is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 list; build it on CPU and move. "
      "Unconfirmed whether the npu call errors or falls back to CPU, hence not required"),
])

E("aspot_config", "ANIMAL-SPOT/TRAINING/config", "explicit_replacement",
  "ChristianBergler/ANIMAL-SPOT TRAINING/config (key=value training config)", [])

# ---------------------------------------------------------------- HawkEars (jhuus/HawkEars)
E("hawk_analyze", "analyze.py", "device_branch_or_abstraction",
  "jhuus/HawkEars analyze.py (ensemble inference, cuda/mps/cpu auto device, Audacity labels)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu in the new branch (guard it with try/except on mixed CUDA/NPU fleets)"),
    C("elif torch.backends.mps.is_available():", "device_type", "add_branch", True,
      'elif torch.npu.is_available(): self.device = "npu"',
      "multi-backend selection: add an npu branch before the mps/cpu fallbacks instead of replacing cuda; "
      "without it 'auto' silently picks CPU on an NPU host"),
    C('if self.device == "cuda" and cfg.infer.use_fp16:', "device_type", "replace", False,
      'if self.device in ("cuda", "npu") and cfg.infer.use_fp16:',
      "performance only: --fp16 is silently ignored on npu, inference stays fp32"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      'torch.npu.empty_cache() if self.device == "npu" else torch.cuda.empty_cache()',
      "no-op when unported on an NPU host; memory hygiene only"),
    C("choices=['auto', 'cuda', 'mps', 'cpu']", "device_type", "replace", False,
      "parser.add_argument('--device', type=str, default='auto', choices=['auto', 'cuda', 'npu', 'mps', 'cpu'], "
      "help=\"Device for inference. Default = auto (GPU/NPU if available).\")",
      "lets users force --device npu; 'auto' already works after the add_branch"),
])

E("hawk_audio", "core/audio.py", "explicit_replacement",
  "jhuus/HawkEars core/audio.py (torchaudio mel spectrograms computed on the inference device)", [
    C('def __init__(self, device="cuda", cfg=cfg):', "device_type", "replace", False,
      'def __init__(self, device="npu", cfg=cfg):',
      "default only reached by callers that omit device (extract/plot scripts not in this probe); "
      "analyze.py passes its device explicitly"),
])

E("hawk_cfg", "core/cfg.py", "explicit_replacement",
  "jhuus/HawkEars core/cfg.py (dataclass configuration)", [])

E("hawk_main_model", "model/main_model.py", "explicit_replacement",
  "jhuus/HawkEars model/main_model.py (LightningModule wrapper, blockwise get_predictions)", [])

E("hawk_train", "train.py", "explicit_replacement",
  "jhuus/HawkEars train.py (rewritten here as a plain AMP training loop with NVML memory logging)", [
    C("import pynvml", "device_capability_check", "removal", True, None,
      "NVML has no Ascend counterpart; nvidia-ml-py is dropped from requirements, so the import would fail"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("return pynvml.nvmlDeviceGetMemoryInfo(handle).used / (1024 * 1024)", "device_capability_check", "replace",
      True, "return torch.npu.memory_reserved(handle) / (1024 * 1024)",
      "NVML query replaced by the torch_npu caching-allocator figure (per process rather than whole device)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above already seeds the npu generator"),
    C('with torch.autocast("cuda", dtype=torch.float16', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.float16, enabled=cfg.train.mixed_precision):',
      "performance only: autocast('cuda') is disabled with a warning on an NPU host and validation runs in fp32"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU training otherwise"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "only guards the device-name log and memory monitor; unported the monitor is just skipped"),
    C('logging.info(f"Training on {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", True,
      'logging.info(f"Training on {torch.npu.get_device_name(0)}")',
      "torch.cuda.get_device_name initialises CUDA and raises on a host without it"),
    C("pynvml.nvmlInit()", "device_capability_check", "removal", True, None,
      "no NVML library on an Ascend host"),
    C("nvml_handle = pynvml.nvmlDeviceGetHandleByIndex(0)", "device_capability_check", "replace", True,
      "nvml_handle = torch.npu.current_device()", "handle becomes the npu device index used by memory_reserved"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.mixed_precision)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.train.mixed_precision)",
      "a CUDA GradScaler disables itself without CUDA, so fp16 npu training would run unscaled (gradient underflow)"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=cfg.train.mixed_precision):',
      "performance only: unported, the forward runs in fp32 (the ported scaler then scales fp32 grads, harmless)"),
    C("pynvml.nvmlShutdown()", "device_capability_check", "removal", True, None, "NVML gone"),
])

E("hawk_requirements", "requirements.txt", "explicit_replacement",
  "jhuus/HawkEars requirements.txt (pinned CUDA-era torch stack)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs: x86 installs CPU torch from the cpu index, aarch64 from plain PyPI; the cu121 index "
      "would pull a CUDA build (unconfirmed whether torch_npu then misbehaves)"),
    C("=torch==2.2.2", "import_torch_npu", "replace", True, "torch==2.3.1",
      "no torch_npu release pairs with torch 2.2.2 in the active matrix; 2.3.1 pairs with torch-npu 2.3.1.post6"),
    C("=torchaudio==2.2.2", "import_torch_npu", "replace", True, "torchaudio==2.3.1",
      "torchaudio pins the exact torch version"),
    C("=torchvision==0.17.2", "import_torch_npu", "replace", True, "torchvision==0.18.1",
      "torchvision pins the exact torch version"),
    C("nvidia-ml-py==12.535.133", "import_torch_npu", "replace", True, "torch-npu==2.3.1.post6",
      "NVML binding no longer used after the train.py port; torch-npu (wheel = torch version + .postN) must be installed"),
])

# ---------------------------------------------------------------- BEATs / AVES / BEANS
E("beats_model", "BEATs/BEATs.py", "explicit_replacement",
  "microsoft/unilm beats/BEATs.py (kaldi fbank front end, patch embedding, predictor head)", [])

E("aves_extract", "aves/extract_features.py", "explicit_replacement",
  "earthspecies/aves AvesTorchaudioWrapper usage (torchaudio wav2vec2_model, mean-pooled embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("self.model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", False,
      "self.model.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "unconfirmed whether the released AVES torchaudio checkpoints hold CUDA tensors; map_location is the safe port"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "the default run does torch.device('cuda') + .to(), which fails without CUDA"),
    C("with torch.inference_mode(), torch.autocast('cuda', dtype=torch.float16, enabled=args.fp16):", "amp",
      "replace", False,
      "with torch.inference_mode(), torch.autocast('npu', dtype=torch.float16, enabled=args.fp16):",
      "performance only: --fp16 is silently ignored (fp32) when unported"),
])

E("beans_train", "beans/train.py", "explicit_replacement",
  "earthspecies/beans beans/train.py (benchmark classifier/detector training, lr sweep)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silent CPU fallback otherwise"),
])

E("beans_env", "environment.yml", "explicit_replacement",
  "earthspecies/beans environment.yml (conda env, pytorch 1.11 + cudatoolkit)", [
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
      "dead weight on Ascend; unconfirmed whether it even resolves on aarch64 hosts"),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==1.11.0.post14",
      "torch 1.11.0 kept: EOL wheel torch-npu 1.11.0.post14 pairs with it (CANN 8.0.RC2); an upgrade to 2.1.0 is the "
      "longer-lived alternative"),
])

E("beats_ddp", "scripts/finetune_beats_ddp.py", "explicit_replacement",
  "BEATs species fine-tuning with DDP/torchrun in the style of community BEANS/BirdSet recipes", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):',
      "performance only: evaluation falls back to fp32"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C(".cuda()", "tensor_to_device", "replace", True,
      "model = BEATsSpeciesClassifier(args.beats_ckpt, len(labels), args.freeze_encoder).npu()",
      ".cuda() fails without CUDA"),
    C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
      'print(f"world_size={world_size}, steps/epoch={len(train_loader)}, device={torch.npu.get_device_name(local_rank)}")',
      "initialises CUDA and raises on rank 0"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device (lazy CUDA init) and raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA; also needed for a correct epoch timer"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "performance only: training silently in fp32 (bf16 needs no GradScaler)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("peak_gb = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak_gb = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "log only: returns 0 quietly when CUDA is not initialised"),
])

E("beats_launch", "scripts/run_finetune.sh", "explicit_replacement",
  "torchrun launcher for the BEATs fine-tuning (nvidia-smi GPU count, NCCL env)", [
    C('cd "$(dirname "$0")/.."', "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the login shell or container already sources it"),
    C("NGPUS=${NGPUS:-$(nvidia-smi -L | wc -l)}", "device_capability_check", "replace", True,
      'NGPUS=${NGPUS:-$(npu-smi info -l | grep -c "NPU ID")}',
      "nvidia-smi is absent; with pipefail the script aborts (without it NGPUS=0 and torchrun fails)"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader", "device_capability_check", "replace",
      True, "npu-smi info", "informational, but under set -e a missing nvidia-smi aborts the launcher"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "--standalone single-node run; interface pinning only matters multi-node"),
])
