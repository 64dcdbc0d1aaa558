# Labels for probe273: keyword spotting / wake-word projects (CUDA -> Ascend NPU).
# Port targets assumed by the notes: torch 2.1.0 + torch_npu 2.1.0.post12 for the honk, howl, WeKWS,
# Keyword-MLP, BC-ResNet and openWakeWord imitations (they pin torch 1.x/2.0-2.1, and torch_npu < 2.5.1
# needs an explicit `import torch_npu`); torch 2.7.1 + torch_npu 2.7.1 for the KWT project (torch.compile,
# SDPA), where the device backend autoloads.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE_21 = ("entry script; with torch_npu 2.1.0 the 'npu' device and torch.npu exist only after "
                  "`import torch_npu` (autoload starts at 2.5.1)")

# ---------------------------------------------------------------- honk (castorini/honk)
E("honk-train", "utils/train.py", "explicit_replacement",
  "castorini/honk utils/train.py (ConfigBuilder, gpu_no / no_cuda config keys, Variable-era loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE_21 + " (run as `python -m utils.train`)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy CUDA seeding is a silent no-op on an NPU host; torch.manual_seed above already seeds the default "
      "generator, NPU seeding via it is unconfirmed for 2.1, so made explicit"),
    C('torch.cuda.set_device(config["gpu_no"])', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(config["gpu_no"])',
      "CPU-build torch has no _cuda_setDevice: AttributeError on the NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "'Torch not compiled with CUDA enabled' in evaluate()"),
    C("test_in = test_in.cuda()", "tensor_to_device", "replace", True, "test_in = test_in.npu()", "same"),
    C("test_labels = test_labels.cuda()", "tensor_to_device", "replace", True,
      "test_labels = test_labels.npu()", "same"),
    C('torch.cuda.set_device(config.get("gpu_no", 0))', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(config.get("gpu_no", 0))', "same as the set_device in evaluate(), train() path"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model move in train()"),
    C("model_in = model_in.cuda()", "tensor_to_device", "replace", True, "model_in = model_in.npu()",
      "training batch"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "training labels"),
    C("dev_in = dev_in.cuda()", "tensor_to_device", "replace", True, "dev_in = dev_in.npu()", "dev batch"),
    C("dev_labels = dev_labels.cuda()", "tensor_to_device", "replace", True, "dev_labels = dev_labels.npu()",
      "dev labels"),
])

E("honk-service", "service.py", "explicit_replacement",
  "castorini/honk service.py (LabelService / TrainingService behind the cherrypy server)", [
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()",
      "fails with 'Torch not compiled with CUDA enabled' unless no_cuda=True"),
    C("model_in = model_in.cuda()", "tensor_to_device", "replace", True, "model_in = model_in.npu()",
      "input must sit next to the model"),
    C('env["CUDA_VISIBLE_DEVICES"] = str(self.gpu_no)', "env_var", "replace", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = str(self.gpu_no)',
      "the child is told --gpu_no 0 and relies on visibility narrowing; CUDA_VISIBLE_DEVICES is ignored by "
      "CANN, so the fine-tuning job would silently land on NPU 0 instead of gpu_no"),
])

E("honk-model", "utils/model.py", "explicit_replacement",
  "castorini/honk utils/model.py (SpeechResModel, SpeechModel, SpeechDataset) - no device code", [])

# ---------------------------------------------------------------- howl (castorini/howl)
E("howl-settings", "howl/settings.py", "device_branch_or_abstraction",
  "castorini/howl howl/settings.py (pydantic BaseSettings read from env vars)", [
    C('device: str = "cuda:0"', "device_type", "replace", True, 'device: str = "npu:0"',
      "default training device; train.py builds torch.device(SETTINGS.training.device) and moves the model "
      "there, which raises on a CPU-build torch"),
])

E("howl-train", "training/run/train.py", "device_branch_or_abstraction",
  "castorini/howl training/run/train.py (device from SETTINGS, ZMUV, frame/CTC objectives)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE_21 + " (python -m training.run.train)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op on the NPU host; reproducibility only"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "peak-memory bookkeeping is skipped silently once the device is npu; change together with the next line"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(device)",
      "only reached after the guard above is ported; then it must be the npu variant"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard for the PeakMemoryMB scalar; silently False on the NPU host (logging only)"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      'writer.add_scalar("Training/PeakMemoryMB", torch.npu.max_memory_allocated(device) / 2**20, epoch_idx)',
      "logging only; pairs with the guard above"),
])

E("howl-client", "howl/client/howl_client.py", "device_branch_or_abstraction",
  "castorini/howl howl/client/howl_client.py (pyaudio stream + torch.hub engine)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module has a __main__ entry point; needed before 'npu:0' devices can be built on torch_npu 2.1"),
    C('torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = device or torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silently runs the wake-word engine on the CPU of an NPU host"),
])

E("howl-env", "environment.yml", "explicit_replacement",
  "castorini/howl environment.yml (conda, pytorch + nvidia channels, cudatoolkit)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "NVIDIA conda channel only serves CUDA runtime packages"),
    C("- pytorch=1.10.0=py3.8_cuda11.3_cudnn8.2.0_0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "CUDA build of torch 1.10; torch_npu needs the matching CPU build of torch 2.1.0"),
    C("- torchaudio=0.10.0", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "torchaudio must match the torch version exactly"),
    C("- cudatoolkit=11.3", "import_torch_npu", "replace", False, "- cpuonly",
      "cudatoolkit selects the CUDA pytorch variant; cpuonly selects the CPU one torch_npu expects "
      "(unconfirmed whether a CUDA build next to torch_npu actually breaks)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post12",
      "torch_npu is only distributed as a pip wheel"),
])

# ---------------------------------------------------------------- WeKWS (wenet-e2e/wekws)
E("wekws-train", "wekws/bin/train.py", "explicit_replacement",
  "wenet-e2e/wekws wekws/bin/train.py (torchrun, --gpus, --ddp.dist_backend)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C("default='nccl',", "dist_backend", "replace", True, "default='hccl',",
      "NCCL is not built into the NPU host's torch; init_process_group('nccl') fails"),
    C("choices=['nccl', 'gloo'],", "dist_backend", "replace", True, "choices=['hccl', 'gloo'],",
      "argparse would reject the hccl value passed by run.sh"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "AttributeError on CPU-build torch for gpu >= 0"),
    C("use_cuda = gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = gpu >= 0 and torch.npu.is_available()",
      "False on the NPU host: single-process training silently falls back to CPU"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert (torch.npu.is_available())",
      "assertion fails for every multi-process run"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP needs the module on the device"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "batches are moved to this device in the executor"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if use_cuda else 'cpu')", "single-process path"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "scaler = torch.npu.amp.GradScaler()",
      "with --use_amp the CUDA scaler disables itself with a warning on a host without CUDA; training "
      "continues in fp32, so only speed/memory are lost"),
])

E("wekws-executor", "wekws/utils/executor.py", "explicit_replacement",
  "wenet-e2e/wekws wekws/utils/executor.py (train/cv loops, grad accumulation, DDP no_sync)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast warns and disables itself when CUDA is unavailable: silent fp32"),
])

E("wekws-score", "wekws/bin/score.py", "explicit_replacement",
  "wenet-e2e/wekws wekws/bin/score.py (per-frame keyword posteriors for DET curves)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)",
      "the script addresses the device as plain 'npu' after narrowing visibility; without the Ascend variable "
      "every --gpu value lands on NPU 0"),
    C("use_cuda = args.gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = args.gpu >= 0 and torch.npu.is_available()", "scoring silently runs on CPU otherwise"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if use_cuda else 'cpu')", "same"),
])

E("wekws-run", "examples/hi_xiaowen/s0/run.sh", "explicit_replacement",
  "wenet-e2e/wekws examples/hi_xiaowen/s0/run.sh (Kaldi-style stages, torchrun)", [
    C("=. ./path.sh", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries (libascendcl, libhccl) must be on the library path before torch_npu is imported, "
      "unless the environment already exports them"),
    C('dist_backend="nccl"', "dist_backend", "replace", True, 'dist_backend="hccl"',
      "passed to train.py --ddp.dist_backend; NCCL does not exist on the NPU host"),
])

E("wekws-checkpoint", "wekws/utils/checkpoint.py", "explicit_replacement",
  "wenet-e2e/wekws wekws/utils/checkpoint.py - already correct on NPU (CPU map_location branch)", [])

E("wekws-stream", "wekws/bin/stream_kws_ctc.py", "explicit_replacement",
  "wenet-e2e/wekws wekws/bin/stream_kws_ctc.py (KeyWordSpotter, CTC prefix beam search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gpu)",
      "device is then addressed as plain 'npu'; the CUDA variable does not narrow NPU visibility"),
    C("use_cuda = gpu >= 0 and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = gpu >= 0 and torch.npu.is_available()", "silent CPU fallback"),
    C("self.device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if use_cuda else 'cpu')", "same"),
    C("if kws.device.type == 'cuda':", "device_type", "replace", False, "if kws.device.type == 'npu':",
      "RTF timing only; the .cpu() copy in forward already synchronises, so numbers stay roughly right"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "unreachable until the guard above is ported; then it must be the npu call"),
])

# ---------------------------------------------------------------- Keyword-MLP (AI-Research-BD/Keyword-MLP)
E("kwmlp-train", "train.py", "device_branch_or_abstraction",
  "AI-Research-BD/Keyword-MLP train.py (config-driven pipeline, wandb)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C('base_config["exp"]["device"] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace",
      True, 'base_config["exp"]["device"] = "npu" if torch.npu.is_available() else "cpu"',
      "device: auto silently resolves to cpu on an NPU host"),
    C("if torch.cuda.device_count() > 1:", "distributed_framework", "removal", False, None,
      "dead on the NPU host (count is 0); porting it to torch.npu.device_count() would enable "
      "nn.DataParallel, which Ascend lists as unsupported, so the block goes"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "torch.nn.DataParallel is unsupported on Ascend (use torchrun + DDP)"),
])

E("kwmlp-trainer", "utils/trainer.py", "explicit_replacement",
  "AI-Research-BD/Keyword-MLP utils/trainer.py (train_single_batch / evaluate / train)", [
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=scaler is not None):", "silent fp32 on the NPU host"),
    C('use_amp = config["hparams"].get("amp", False) and device.type == "cuda"', "device_type", "replace", False,
      'use_amp = config["hparams"].get("amp", False) and device.type == "npu"',
      "amp: True in the config is silently ignored for an npu device"),
    C("scaler = torch.cuda.amp.GradScaler() if use_amp else None", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler() if use_amp else None", "pairs with the guard above"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "max_mem_mb logging only"),
    C('log_dict["max_mem_mb"] = torch.cuda.max_memory_allocated() / 2**20', "torch_cuda_api", "replace", False,
      'log_dict["max_mem_mb"] = torch.npu.max_memory_allocated() / 2**20', "logging only"),
])

E("kwmlp-misc", "utils/misc.py", "explicit_replacement",
  "AI-Research-BD/Keyword-MLP utils/misc.py (seed_everything, get_model, save_model) + device summary", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op on NPU host; reproducibility only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "wandb device summary silently omitted otherwise"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(device)", "reached only after the guard is ported"),
    C('info["gpu_sm_count"] = props.multi_processor_count', "device_capability_check", "replace", False,
      'info["npu_cube_cores"] = props.cube_core_num',
      "NPU device properties expose only name, total_memory, L2_cache_size, cube_core_num, vector_core_num: "
      "AttributeError once the guard is ported"),
    C('info["cuda"] = torch.version.cuda', "torch_cuda_api", "replace", False,
      'info["torch_npu"] = __import__("torch_npu").__version__',
      "None on the NPU host; logging only (misc.py does not import torch_npu itself)"),
])

E("kwmlp-config", "sample_configs/base_config.yaml", "device_branch_or_abstraction",
  "AI-Research-BD/Keyword-MLP sample_configs/base_config.yaml", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "get_config builds torch.device(exp.device); a 'cuda' device fails at model.to()"),
])

E("kwmlp-inference", "inference.py", "device_branch_or_abstraction",
  "AI-Research-BD/Keyword-MLP inference.py + a CUDA-event latency benchmark", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "torch_cuda_api", "replace", True,
      "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "CPU-build torch only has a dummy CUDA Event type: --benchmark raises"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "'Torch not compiled with CUDA enabled'"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "--device auto picks CPU otherwise"),
    C('use_half = args.half and device.type == "cuda"', "device_type", "replace", False,
      'use_half = args.half and device.type == "npu"', "--half silently ignored on npu; fp16 is optional"),
])

E("kwmlp-req", "requirements.txt", "explicit_replacement",
  "AI-Research-BD/Keyword-MLP requirements.txt with a CUDA wheel index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel; x86 hosts take it from whl/cpu"),
    C("=# --- framework ---", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the NPU adapter itself (CANN 8.1.RC1 generation)"),
    C("torch==2.0.1+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 wheels do not exist for aarch64 and torch_npu needs an exact torch match"),
    C("torchaudio==2.0.2+cu118", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
      "must match torch"),
    C("onnxruntime-gpu==1.15.1", "custom_cuda_extension", "replace", False, "onnxruntime==1.15.1",
      "CUDA build of onnxruntime; only used for export checks. Unconfirmed: whether a wheel exists for the "
      "host arch and whether the CANN build (onnxruntime-cann) is wanted instead"),
])

# ---------------------------------------------------------------- BC-ResNet (Qualcomm-AI-research/bcresnet)
E("bcresnet-main", "main.py", "device_branch_or_abstraction",
  "Qualcomm-AI-research/bcresnet main.py (Trainer with --gpu, GPU log-mel preprocessing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C('self.device = torch.device("cuda:%d" % self.gpu if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'self.device = torch.device("npu:%d" % self.gpu if torch.npu.is_available() else "cpu")',
      "silently trains on CPU otherwise; the Preprocess objects inherit this device"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      'pin_memory=torch.npu.is_available(), pin_memory_device="npu",',
      "evaluates to False on the NPU host: no pinned host buffers, slower H2D copies only "
      "(pin_memory_device behaviour under torch_npu unconfirmed)"),
])

E("bcresnet-utils", "utils.py", "device_branch_or_abstraction",
  "Qualcomm-AI-research/bcresnet utils.py (LogMel, Preprocess, SpeechCommand) - device passed in", [])

# ---------------------------------------------------------------- KWT (Keyword Transformer, PyTorch port)
E("kwt-model", "models/kwt.py", "explicit_replacement",
  "Keyword Transformer PyTorch port (models/kwt.py) using F.scaled_dot_product_attention", [
    C("_FLASH_OK = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
      "device_capability_check", "replace", False, "_FLASH_OK = True",
      "short-circuits to False on the NPU host without raising; the flag only feeds the CUDA sdp_kernel "
      "selector below, NPU SDPA picks its own fused kernel"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is listed unsupported on Ascend; it only toggles CUDA SDPA backends, so "
      "it is expected to be a no-op rather than an error (unconfirmed); the port also adds `import contextlib`"),
])

E("kwt-train", "train_ddp.py", "explicit_replacement",
  "KWT distributed trainer in the style of modern torchrun/DDP speech-command recipes", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch_npu 2.7.1 autoloads the backend, but the ported NVTX lines call torch_npu.npu.mstx by name"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "ignored by HCCL; the HCCL watchdog variable already defaults to 1"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "AttributeError on CPU-build torch"),
    C("dist.barrier(device_ids=[local_rank])", "distributed_framework", "replace", False, "dist.barrier()",
      "device_ids is documented for NCCL; unconfirmed whether ProcessGroupHCCL accepts it"),
    C('if amp_cfg == "bf16" and torch.cuda.is_bf16_supported():', "device_capability_check", "replace", False,
      'if amp_cfg == "bf16" and torch.npu.is_bf16_supported():',
      "torch 2.7 returns False when CUDA is absent, so bf16 silently degrades to fp16 on A2 hardware that "
      "supports bf16 (older torch raises here instead)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", False,
      'scaler = torch.amp.GradScaler("npu", enabled=amp_dtype == torch.float16)',
      "CUDA scaler disables itself without CUDA; fine while autocast is also disabled"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune relies on Triton GEMM autotuning and CUDA graphs; on torch_npu the Inductor/npugraphs "
      "path is used instead (behaviour of this mode on NPU unconfirmed)"),
    C("fused=torch.cuda.is_available(),", "fused_optimizer", "replace", False, "fused=True,",
      "False on the NPU host, so AdamW runs the unfused foreach path; _fused_adamw_ has an NPU kernel "
      "(torch_npu.optim.NpuFusedAdamW is the alternative)"),
    C('torch.cuda.nvtx.range_push(f"step{step}")', "torch_cuda_api", "replace", True,
      'rng = torch_npu.npu.mstx.range_start(f"step{step}")',
      "CPU-build torch raises 'NVTX functions not installed' when --nvtx is set; mstx is the NPU counterpart"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp_dtype is not None):', "amp",
      "replace", False,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=amp_dtype is not None):',
      "autocast for an absent CUDA device disables itself with a warning: silent fp32"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
      "same as range_push"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2**30",
      "returns 0 without raising while CUDA is uninitialised; wrong number in the log only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "'Torch not compiled with CUDA enabled' at the end of every epoch"),
])

E("kwt-launch", "scripts/launch_kwt_8gpu.sh", "explicit_replacement",
  "multi-node torchrun launcher for the KWT recipe", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment for torch_npu/HCCL (set_env.sh reads unset variables, hence the set +u)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "a subset like 4,5,6,7 would silently run on NPUs 0-3"),
    C('NPROC_PER_NODE=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      "NPROC_PER_NODE=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | awk -F',' '{print NF}')",
      "must read the same variable as the export above (set -u aborts otherwise)"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-2}", "logging verbosity only"),
    C("export NCCL_SOCKET_IFNAME=eth1", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth1",
      "multi-node: HCCL otherwise picks the first non-docker NIC by name, which may not reach the master"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL meaning; ignored"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; ignored"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True,
      'npu-smi info > "${OUTPUT_DIR}/npus_node${NODE_RANK}.txt"',
      "nvidia-smi is absent on the NPU host and set -e aborts the launch"),
])

E("kwt-config", "configs/kwt1_gsc12.yaml", "device_branch_or_abstraction",
  "KWT recipe config (trainer.device / dist_backend consumed by train_ddp.py)", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "train_ddp.py builds torch.device(trainer.device, local_rank)"),
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl        # gloo for CPU debugging",
      "passed to init_process_group"),
])

E("kwt-bench", "tools/benchmark_latency.py", "explicit_replacement",
  "batch-1 wake-word latency benchmark (eager / TorchScript / CUDA graphs / profiler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "autoload covers the device, but the ported profiler import names torch_npu explicitly"),
    C("from torch.profiler import ProfilerActivity", "torch_cuda_api", "replace", False,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler; "
      "from torch.profiler import record_function",
      "the Ascend profiler lives in torch_npu.profiler (needed to see NPU kernels); --profile only"),
    C('p.add_argument("--device", default="cuda:0")', "device_type", "replace", True,
      'p.add_argument("--device", default="npu:0")', "default run fails at model.to(device)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on CPU-build torch"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises on CPU-build torch; also needed for correct timing"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "s = torch.npu.Stream()",
      "--cuda-graph path: dummy CUDA stream type raises"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "s.wait_stream(torch.npu.current_stream())", "same"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True, "with torch.npu.stream(s):", "same"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(s)", "same"),
    C("g = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "g = torch.npu.NPUGraph()",
      "NPUGraph is the counterpart (inference only, which this is)"),
    C("with torch.cuda.graph(g):", "torch_cuda_api", "replace", True, "with torch.npu.graph(g):", "same"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "CUDA activity records nothing on NPU; unconfirmed whether kineto warns or errors"),
    C('sort_by="cuda_time_total"', "torch_cuda_api", "replace", False,
      'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))',
      "CUDA time column is empty on NPU; the torch_npu profiler writes its own kernel_details instead"),
    C('use_half = args.half and device.type == "cuda"', "device_type", "replace", False,
      'use_half = args.half and device.type == "npu"', "--half silently ignored on npu"),
])

# ---------------------------------------------------------------- openWakeWord (dscripka/openWakeWord)
E("oww-utils", "openwakeword/utils.py", "device_branch_or_abstraction",
  "dscripka/openWakeWord openwakeword/utils.py (AudioFeatures on onnxruntime, feature generator)", [
    C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "gpu"', "device_type", "replace",
      False,
      'providers = ["CANNExecutionProvider", "CPUExecutionProvider"] if device == "gpu" else ["CPUExecutionProvider"]',
      "onnxruntime falls back to CPU with a warning when the CUDA provider is missing; the CANN provider "
      "(onnxruntime-cann build) is not covered by the knowledge base - unconfirmed"),
    C('if "CUDA" in self.onnx_execution_provider:', "device_type", "replace", False,
      'if "CPU" not in self.onnx_execution_provider:',
      "with a CANN provider neither branch runs and `result` is unbound; change together with providers"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
      "per-worker device pinning for the ORT sessions; only matters once the CANN provider is used"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported device_count below needs torch.npu (torch_npu 2.1)"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()",
      "0 on the NPU host: ctx.Pool(0) raises ValueError for device='gpu'"),
])

E("oww-train", "openwakeword/train.py", "device_branch_or_abstraction",
  "dscripka/openWakeWord openwakeword/train.py (Model, train_model, generate/augment/train stages)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE_21),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "training silently runs on CPU otherwise"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; frees the TTS model's cached NPU blocks only once ported"),
    C("torch.cuda.empty_cache()  # release blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release blocks cached by the piper generator", "same"),
    C("use_gpu_features = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_gpu_features = torch.npu.is_available()",
      "selects the ORT accelerator path in utils.py; only useful together with the (unconfirmed) CANN "
      "provider there, CPU features are correct"),
    C("prefetch_factor=16, pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      'prefetch_factor=16, pin_memory=torch.npu.is_available(), pin_memory_device="npu")',
      "False on the NPU host; performance only"),
])

E("oww-data", "openwakeword/data.py", "device_branch_or_abstraction",
  "dscripka/openWakeWord openwakeword/data.py (augment_clips with torch-audiomentations, mmap batches)", [
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "batched augmentation silently runs on CPU; op coverage of torch-audiomentations on NPU not checked"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as err:  # NPU OOM surfaces as RuntimeError",
      "unconfirmed which exception type torch_npu raises on device OOM; the CPU retry would be skipped"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
])

E("oww-notebook", "notebooks/automatic_model_training.py", "explicit_replacement",
  "dscripka/openWakeWord notebooks/automatic_model_training.ipynb exported as a percent-format script", [
    C('sh("nvidia-smi")', "torch_cuda_api", "replace", True, 'sh("npu-smi info")',
      "check=True: the missing binary raises CalledProcessError"),
    C("pip install torch==2.1.2+cu118", "import_torch_npu", "replace", True,
      'sh("pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu")',
      "CUDA wheels; torch_npu 2.1.0 needs the CPU torch 2.1.0 build"),
    C('sh("pip install onnxruntime-gpu==1.16.3")', "custom_cuda_extension", "replace", False,
      'sh("pip install onnxruntime==1.16.3")', "CUDA onnxruntime; unconfirmed on the NPU host"),
    C('sh("pip install tensorflow-cpu==2.8.1', "import_torch_npu", "npu_only_addition", True,
      'sh("pip install torch-npu==2.1.0.post12")', "after torch is in place"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "this process queries the device below"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "No NPU found: check CANN and the driver."',
      "assertion stops the notebook on an NPU host"),
    C('print("GPU:", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", True,
      'print("NPU:", torch.npu.get_device_name(0))', "raises without CUDA"),
    C("CUDA_VISIBLE_DEVICES=0 {sys.executable}", "env_var", "replace", False,
      'sh(f"ASCEND_RT_VISIBLE_DEVICES=0 {sys.executable} openwakeword/openwakeword/train.py --training_config my_model.yaml --augment_clips")',
      "limits feature extraction to one device; without it all NPUs are used, which is not wrong"),
])

E("oww-setup", "setup.py", "explicit_replacement",
  "dscripka/openWakeWord setup.py with a gpu extra", [
    C('"onnxruntime-gpu>=1.16,<1.17",', "custom_cuda_extension", "replace", False,
      '"onnxruntime-cann>=1.16,<1.17",',
      "CUDA-only build; CANN build named from memory, unconfirmed in the knowledge base"),
    C('"torch>=1.13.1,<3",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post12",',
      "training extras otherwise install no NPU adapter (and torch must then resolve to 2.1.0)"),
])

E("oww-docker", "docker/Dockerfile", "explicit_replacement",
  "training container for openWakeWord + piper-sample-generator", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "the image must carry CANN (toolkit env exported as in set_env.sh); the CUDA base has none"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "same"),
    C("pip install torch==2.1.2 torchaudio==2.1.2", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; CPU torch 2.1.0 for torch_npu"),
    C("import torch, torchaudio; print(torch.__version__", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12", "install the adapter after torch"),
    C("RUN pip install onnxruntime-gpu==1.16.3", "custom_cuda_extension", "replace", False,
      "RUN pip install onnxruntime==1.16.3", "CUDA onnxruntime; unconfirmed"),
    C("print('cuda available:', torch.cuda.is_available())", "torch_cuda_api", "replace", False,
      "CMD [\"python\", \"-c\", \"import torch, torch_npu; print('npu available:', torch.npu.is_available())\"]",
      "default command only prints a health check"),
])
