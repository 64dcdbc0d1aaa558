# Labels for probe242: handwritten text recognition / historical-document OCR (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
ENTRY_IMPORT_NOTE = ("entry point: torch_npu must be imported before any 'npu' device string or torch.npu call; "
                     "the project pins torch < 2.5, so there is no device-backend autoload")
PIN_NOTE = ("unconfirmed: with torch 2.1 the DataLoader only pins when torch.cuda.is_available() unless "
            "pin_memory_device is given, so pinning silently turns off on an NPU host; performance only")
DETERMINISTIC_NOTE = ("silent no-op on NPU: cuDNN flags do not reach NPU kernels; reproducibility needs "
                      "torch.use_deterministic_algorithms (supported per Ascend's 2.7.1 list); unconfirmed whether "
                      "torch_npu honours the cudnn flag, so not required")

# ---------------------------------------------------------------- PyLaia
E("pylaia-loader", "laia/common/loader.py", "explicit_replacement",
  "PyLaia laia/common/loader.py (ModelLoader / checkpoint loaders)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "default device for resumed optimizer state; on an NPU host it silently becomes cpu and the moved optimizer "
      "state no longer matches the NPU parameters"),
    C('map_location=f"cuda:{gpu}"', "device_type", "replace", True,
      'ckpt = torch.load(checkpoint, map_location=f"npu:{gpu}")',
      "hard-coded CUDA map_location fails to deserialize on a host without CUDA"),
])

E("pylaia-train-ctc", "laia/scripts/htr/train_ctc.py", "explicit_replacement",
  "PyLaia pylaia-htr-train-ctc entry point (laia/scripts/htr/train_ctc.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", DETERMINISTIC_NOTE),
    C('trainer.max_epochs = torch.load(checkpoint)["epoch"] + train.resume', "device_type", "replace", True,
      'trainer.max_epochs = torch.load(checkpoint, map_location="cpu")["epoch"] + train.resume',
      "a Lightning checkpoint written on GPU holds CUDA tensors (state_dict, optimizer state); torch.load without "
      "map_location cannot deserialize them on an NPU host"),
    C("pin_memory=trainer.gpus is not None and trainer.gpus != 0,", "pin_memory", "replace", False,
      "pin_memory=bool(trainer.devices),  # plus pin_memory_device='npu' in the DataModule",
      "keyed on Lightning's gpus flag, which an NPU run no longer sets; " + PIN_NOTE),
    C('trainer.accelerator = "ddp"', "dist_backend", "npu_only_addition", True,
      'os.environ.setdefault("PL_TORCH_DISTRIBUTED_BACKEND", "hccl")',
      "Lightning 1.x's DDP uses nccl for GPU processes and gloo otherwise, neither of which carries NPU tensors; "
      "HCCL is the NPU collective backend (how Lightning drives an NPU is not covered by the knowledge base, the "
      "hccl requirement is)"),
])

E("pylaia-decode-ctc", "laia/scripts/htr/decode_ctc.py", "explicit_replacement",
  "PyLaia pylaia-htr-decode-ctc entry point (laia/scripts/htr/decode_ctc.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("if gpus and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if gpus and torch.npu.is_available():",
      "the selected device is only printed in a log line, so the wrong answer on NPU is cosmetic"),
    C('return "cuda"', "device_type", "replace", False, 'return "npu"',
      "only feeds the log message of the language-model decoder"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "raises without CUDA if reached, but it sits in a timing/log block keyed on Lightning's gpus flag, which an "
      "NPU run does not set (pl.Trainer(gpus=N) itself fails first on an NPU host)"),
    C("torch.cuda.max_memory_allocated() / 2**20,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2**20,",
      "returns 0 when CUDA was never initialised; log value only"),
])

E("pylaia-gpu-stats", "laia/callbacks/progress_bar_gpu_stats.py", "explicit_replacement",
  "PyLaia ProgressBarGPUStats callback (nvidia-smi memory in the progress bar)", [
    C('return shutil.which("nvidia-smi")', "torch_cuda_api", "replace", True,
      'return shutil.which("npu-smi")',
      "no nvidia-smi on an Ascend host, so on_train_start raises MisconfigurationException when --train.gpu_stats is on"),
    C('"--query-gpu=memory.used",', "torch_cuda_api", "replace", True,
      '"info", "-t", "usages", "-i",  # npu-smi syntax, one call per device; or use torch.npu.memory_reserved',
      "nvidia-smi query syntax; npu-smi has a different command line and output format"),
    C("if not trainer.on_gpu:", "device_type", "replace", True,
      'if trainer.root_device.type not in ("cuda", "npu"):',
      "Lightning's on_gpu is False on NPU, so the callback refuses to start"),
    C("allocated = torch.cuda.memory_allocated(i) // 2**20", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(i) // 2**20",
      "returns 0 without CUDA initialisation; display only"),
    C("reserved = torch.cuda.memory_reserved(i) // 2**20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(i) // 2**20", "display only"),
    C("peak = max(torch.cuda.max_memory_allocated(i) for i in self.gpu_ids)", "torch_cuda_api", "replace", False,
      "peak = max(torch.npu.max_memory_allocated(i) for i in self.gpu_ids)", "debug log only"),
])

E("pylaia-ctc-loss", "laia/losses/ctc_loss.py", "explicit_replacement",
  "PyLaia laia/losses/ctc_loss.py (CTCLoss with optional warp-ctc backend)", [
    C("x, xs = pad_packed_sequence(batch)", "unsupported_op_workaround", "replace", False,
      "x, xs = _unpack_to_padded(batch)  # index_select-based unpacking, no pad_packed_sequence",
      "unconfirmed: Ascend's 2.7.1 API list marks torch.nn.utils.rnn.pad_packed_sequence as unsupported and "
      "msFmkTransplt lists it, but it is a Python composite over ops that exist on NPU; verify before rewriting"),
    C("xs.float().cuda(),", "tensor_to_device", "replace", False,
      "xs.float(),  # warp backend removed on NPU; route implementation='warp' to the native ctc_loss",
      "opt-in warp-ctc path only (default is 'pytorch'); warp-ctc is a CUDA build with no NPU version, so the "
      "path is dead on NPU either way"),
])

E("pylaia-adaptive-pool", "laia/nn/adaptive_pool_2d.py", "kernel_rewrite",
  "PyLaia laia/nn adaptive pooling / MaskImageFromSize on top of nnutils-pytorch kernels", [
    C("from nnutils_pytorch import adaptive_avgpool_2d, adaptive_maxpool_2d, mask_image_from_size",
      "custom_cuda_extension", "replace", True,
      "from laia.nn.masked_pooling import masked_adaptive_avgpool_2d, masked_adaptive_maxpool_2d, masked_image_from_size",
      "nnutils-pytorch ships CUDA kernels and a host C++ fallback only; NPU tensors reach neither, so the masked "
      "pooling must be re-expressed with per-sample torch ops (F.adaptive_*_pool2d on each valid region)"),
    C("func=adaptive_avgpool_2d,", "custom_cuda_extension", "replace", True,
      "func=masked_adaptive_avgpool_2d,", "call site of the nnutils CUDA kernel"),
    C("func=adaptive_maxpool_2d,", "custom_cuda_extension", "replace", True,
      "func=masked_adaptive_maxpool_2d,", "call site of the nnutils CUDA kernel"),
    C("y = mask_image_from_size(", "custom_cuda_extension", "replace", True,
      "y = masked_image_from_size(", "call site of the nnutils CUDA kernel (runs before every conv block)"),
])

E("pylaia-crnn-model", "laia/models/htr/laia_crnn.py", "explicit_replacement",
  "PyLaia LaiaCRNN model (conv blocks + image sequencer + BLSTM)", [
    C('_RNN_TYPES = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}', "unsupported_op_workaround", "replace", False,
      '_RNN_TYPES = {"LSTM": nn.LSTM, "GRU": nn.GRU}  # nn.RNN is not supported on NPU',
      "Ascend's 2.7.1 list marks torch.nn.RNN unsupported on A2/A3; only matters when a config picks rnn_type RNN "
      "(default LSTM); not verified on hardware"),
    C("dropout=rnn_dropout,", "unsupported_op_workaround", "replace", False,
      "dropout=rnn_dropout if rnn_type is not nn.GRU else 0.0,",
      "Ascend's 2.7.1 list: nn.GRU does not support the dropout argument; LSTM (the default) is fine; unconfirmed "
      "beyond that note"),
    C("return pack_padded_sequence(x, lengths.cpu().tolist(), enforce_sorted=True)", "unsupported_op_workaround",
      "replace", False,
      "return _pack_sorted(x, lengths)  # fallback if pack_padded_sequence is unsupported on the NPU build",
      "unconfirmed: pack_padded_sequence is marked unsupported in Ascend's 2.7.1 list and by msFmkTransplt, yet "
      "_pack_padded_sequence has a native NPU kernel in the op lists"),
    C("if next(model.parameters()).is_cuda:", "device_type", "replace", False,
      'if next(model.parameters()).device.type != "cpu":',
      "only controls one descriptive line of the model summary"),
])

E("pylaia-train-config", "egs/himanis/train_config.yaml", "explicit_replacement",
  "PyLaia jsonargparse training config (pylaia-htr-train-ctc --config)", [
    C("gpus: 1", "device_type", "replace", True,
      "devices: 1  # with an NPU accelerator registered for Lightning (accelerator: npu)",
      "Lightning's gpus=1 asks for CUDA and raises MisconfigurationException on an NPU host; how Lightning drives "
      "an NPU is not covered by the knowledge base"),
    C("auto_select_gpus: true", "device_type", "removal", False, None,
      "probes CUDA devices; only acts together with gpus, so harmless once gpus is gone"),
    C("precision: 16", "amp", "replace", False,
      "precision: 16  # needs an NPU-aware MixedPrecision plugin (device='npu')",
      "unconfirmed: Lightning's native AMP plugin targets torch.cuda.amp; with an NPU accelerator the precision "
      "plugin must be built for 'npu'"),
    C("log_gpu_memory: min_max", "torch_cuda_api", "removal", True, None,
      "Lightning's log_gpu_memory shells out to nvidia-smi every logging step; absent on an Ascend host"),
])

E("pylaia-setup", "setup.py", "explicit_replacement",
  "PyLaia setup.py (install_requires / extras)", [
    C("if torch.version.cuda is None:", "device_capability_check", "replace", False,
      'if torch.version.cuda is None and not hasattr(torch, "npu"):',
      "prints a misleading 'no CUDA, training will be slow' warning on every NPU install; cosmetic"),
    C('"torch>=1.12,<2.2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post10",',
      "torch-npu pin, paired with torch 2.1.0 (torch_npu wheel version must equal the torch version)"),
    C('"nnutils-pytorch>=1.6.0",', "custom_cuda_extension", "removal", False, None,
      "dead dependency after the masked-pooling rewrite; it compiles against the CUDA toolkit when present"),
    C('"warpctc": ["warpctc-pytorch', "custom_cuda_extension", "removal", False, None,
      "optional extra; warp-ctc only builds against CUDA"),
    C('"gpustats": ["nvidia-ml-py3>=7.352.0"],', "torch_cuda_api", "removal", False, None,
      "optional extra; NVML has no Ascend equivalent (npu-smi / torch.npu.mem_get_info instead)"),
])

E("pylaia-engine-module", "laia/engine/engine_module.py", "explicit_replacement",
  "PyLaia EngineModule (LightningModule base with OOM batch skipping)", [
    C('if self.skip_oom_batches and "CUDA out of memory" in str(e):', "device_type", "replace", False,
      'if self.skip_oom_batches and "out of memory" in str(e):',
      "unconfirmed: torch_npu reports allocator OOM as 'NPU out of memory', so the skip-batch path would never "
      "trigger and an OOM would abort training instead"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA initialisation, so the NPU cache is not released after a skipped batch"),
    C("if self.trainer.on_gpu and self.trainer.is_global_zero:", "device_type", "replace", False,
      'if self.device.type == "npu" and self.trainer.is_global_zero:', "peak-memory log only"),
    C("peak = torch.cuda.max_memory_allocated(self.device) / 2**30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.device) / 2**30", "log only"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(self.device)", "log bookkeeping only"),
])

# ---------------------------------------------------------------- TrOCR
E("trocr-finetune-hf", "scripts/finetune_trocr_iam.py", "explicit_replacement",
  "TrOCR fine-tuning on IAM with HF Seq2SeqTrainer (community notebook turned script)", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", True,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so the card pinning is silently lost"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "transformers would import torch_npu itself, but only when TrainingArguments resolves its device; the "
      "script calls torch.npu before that (torch 2.1 pin, no autoload)"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "Trainer moves the model to npu:0 on its own, but the post-training sanity check feeds CPU pixel_values "
      "to the NPU model and fails"),
    C('logger.info("Training on %s (%d visible GPUs)", device, torch.cuda.device_count())', "torch_cuda_api",
      "replace", False, 'logger.info("Training on %s (%d visible NPUs)", device, torch.npu.device_count())',
      "log only (prints 0)"),
])

E("trocr-train-native", "trocr_htr/train.py", "explicit_replacement",
  "TrOCR plain-PyTorch training loop (torchrun, AMP, apex FusedAdam fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend; HCCL"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed above already seeds registered accelerators on torch 2.x "
      "(unconfirmed for torch_npu)"),
    C('use_fused = cfg.get("fused_adam", True) and torch.cuda.is_available()', "torch_cuda_api", "replace", False,
      'use_fused = cfg.get("fused_adam", True) and torch.npu.is_available()',
      "False on NPU so the fused branch is skipped and plain AdamW runs; performance only"),
    C("return FusedAdam(groups, lr=cfg[\"lr\"]", "fused_optimizer", "replace", False,
      'return torch_npu.optim.NpuFusedAdamW(groups, lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8)',
      "apex FusedAdam is a CUDA kernel; torch_npu.optim.NpuFusedAdamW is the NPU fused optimizer (msFmkTransplt "
      "performance advice); performance only"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype):',
      "autocast('cuda') on a host without CUDA warns and disables itself: evaluation silently runs in fp32"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "device selection; on NPU the whole run silently falls to the CPU branch"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "CUDA device object"),
    C("if args.bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if args.bf16 and not torch.npu.is_bf16_supported():",
      "the CUDA query answers False on an NPU host, so --bf16 always aborts"),
    C("model.cuda(local_rank)", "tensor_to_device", "replace", True, "model.npu(local_rank)",
      "Module.cuda raises without CUDA"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",", PIN_NOTE),
    C("val_loader = DataLoader(val_set", "pin_memory", "replace", False,
      'val_loader = DataLoader(val_set, batch_size=cfg["batch_size"], shuffle=False, num_workers=4, pin_memory=True, pin_memory_device="npu", collate_fn=collate_lines)',
      PIN_NOTE),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_scaler)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_scaler)",
      "the CUDA GradScaler disables itself without CUDA; fp16 training would then run without loss scaling"),
    C('pixel_values = batch["pixel_values"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'pixel_values = batch["pixel_values"].npu(non_blocking=True)', "Tensor.cuda raises without CUDA"),
    C('labels = batch["labels"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'labels = batch["labels"].npu(non_blocking=True)', "Tensor.cuda raises without CUDA"),
    C("with torch.cuda.amp.autocast(dtype=amp_dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=amp_dtype):",
      "torch.cuda.amp.autocast silently disables itself on an NPU host, so training runs fp32 with the fp16 "
      "recipe's batch size and learning rate"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2**30", "log value only (0 without CUDA init)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init"),
])

E("trocr-inference", "trocr_htr/predict.py", "explicit_replacement",
  "TrOCR batch line transcription CLI (width-sorted batching, fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C('DEFAULT_DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEFAULT_DEVICE = "npu:0" if torch.npu.is_available() else "cpu"',
      "default device silently becomes cpu on an NPU host"),
    C('if device.type != "cuda":', "device_type", "replace", True, 'if device.type not in ("cuda", "npu"):',
      "--half is silently dropped on NPU (model stays fp32)"),
    C('=if device.type == "cuda":', "device_type", "replace", False, 'if device.type in ("cuda", "npu"):',
      "only gates cudnn.benchmark and the device-name print"),
    C('print(f"Using {torch.cuda.get_device_name(device)}", file=sys.stderr)', "torch_cuda_api", "replace", False,
      'print(f"Using {torch.npu.get_device_name(device)}", file=sys.stderr)',
      "unreachable on NPU until the guard above is widened; log only"),
    C('model.encoder = torch.compile(model.encoder, mode="reduce-overhead")', "compile_mode", "replace", False,
      'model.encoder = torch.compile(model.encoder, backend="npugraphs")',
      "unconfirmed: mode='reduce-overhead' means CUDA graphs; Ascend's list pairs torch.compile with the "
      "'npugraphs' backend (torch_npu >= 2.6); opt-in flag"),
    C('if args.half and device.type == "cuda":', "device_type", "replace", True,
      'if args.half and device.type in ("cuda", "npu"):',
      "once load_model halves the model on NPU, fp32 inputs no longer match fp16 weights"),
    C("# make the timing honest", "device_type", "replace", False,
      'if device.type in ("cuda", "npu"):  # make the timing honest', "timing print only"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(device)",
      "unreachable on NPU until the guard is widened; timing only"),
])

E("trocr-requirements", "requirements.txt", "explicit_replacement",
  "TrOCR fine-tuning requirements.txt (CUDA 11.8 wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend's install docs use the CPU torch build on x86 (plain PyPI on aarch64); a cu118 wheel would still "
      "satisfy torch==2.1.0 on x86, so not strictly required"),
    C("torch==2.1.2+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA local build, and torch_npu 2.1.0.postN pairs with torch 2.1.0 exactly"),
    C("torchvision==0.16.2+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must follow the torch version; the cu118 local build is CUDA-only"),
    C("# keep torchvision in lockstep with torch", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10", "torch-npu pin for torch 2.1.0"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "NVML bindings; nothing on Ascend answers them (npu-smi / torch.npu.mem_get_info)"),
    C("=gpustat", "torch_cuda_api", "removal", False, None, "NVML-based monitor, useless on Ascend"),
])

E("trocr-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "TrOCR HTR training/inference Dockerfile on nvidia/cuda base with NVIDIA apex", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must carry CANN (its ENV replaces sourcing set_env.sh); the CUDA image has none"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; Ascend devices are mounted (--device /dev/davinciN) or chosen "
      "with ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; ignored on Ascend"),
    C("RUN pip install torch==2.1.2+cu118 torchvision==0.16.2+cu118", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
      "CUDA wheels; torch-npu must be installed and torch must match it exactly"),
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CPU index as in Ascend's install docs; harmless once the versions above have no +cu118 suffix"),
    C('ARG TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "custom_cuda_extension", "removal", False, None,
      "only consumed by the apex CUDA build"),
    C("RUN git clone https://github.com/NVIDIA/apex /tmp/apex", "custom_cuda_extension", "removal", True, None,
      "builds apex's CUDA extensions with nvcc, which a CANN image lacks, so docker build fails; use "
      "torch_npu.optim.NpuFusedAdamW (or Ascend's apex patch) instead"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext"',
      "custom_cuda_extension", "removal", True, None, "the --cuda_ext build is the part that needs nvcc"),
])

# ---------------------------------------------------------------- Kraken
E("kraken-ketos-util", "kraken/ketos/util.py", "device_branch_or_abstraction",
  "Kraken kraken/ketos/util.py (to_ptl_device: torch device string -> lightning accelerator)", [
    C("elif any([device.startswith(x) for x in ['tpu', 'cuda', 'hpu', 'ipu']]):", "device_type", "replace", True,
      "elif any([device.startswith(x) for x in ['tpu', 'cuda', 'hpu', 'ipu', 'npu']]):",
      "'-d npu:0' is rejected as an invalid device, and 'cuda:0' maps to Lightning's gpu accelerator which "
      "fails on an NPU host"),
    C("if dev == 'cuda':", "device_type", "add_branch", True,
      "if dev == 'npu': return NPUAccelerator(), [int(idx)]  # custom Lightning accelerator",
      "Lightning has no built-in NPU accelerator name; the NPU branch has to return a registered accelerator "
      "(mechanism not covered by the knowledge base)"),
    C("return f'cuda:{idx or 0}'", "device_type", "replace", False, "return f'npu:{idx or 0}'",
      "only reached for the lightning 'gpu:N' spelling; 'npu:N' strings already pass through unchanged"),
    C("if precision in ('16', '16-mixed') and not device.startswith(('cuda', 'gpu', 'auto')):", "device_type",
      "replace", False,
      "if precision in ('16', '16-mixed') and not device.startswith(('cuda', 'gpu', 'npu', 'auto')):",
      "spurious warning on NPU; log only"),
])

E("kraken-lib-train", "kraken/lib/train.py", "device_branch_or_abstraction",
  "Kraken kraken/lib/train.py (KrakenTrainer and RecognitionModel LightningModule)", [
    C("if kwargs.get('precision') in ('16', 16) and kwargs.get('accelerator') == 'gpu':", "amp", "add_branch",
      False,
      "if kwargs.get('precision') in ('16', 16) and not isinstance(kwargs.get('accelerator'), str):  # NPU: plugins=[MixedPrecision('16-mixed', 'npu', torch.npu.amp.GradScaler())]",
      "unconfirmed: Lightning builds its MixedPrecision plugin for device 'cuda' for any non-CPU accelerator; an "
      "NPU accelerator needs an explicit 'npu' precision plugin"),
    C("if self.trainer.accelerator.__class__.__name__ == 'CUDAAccelerator':", "device_type", "replace", False,
      "if self.trainer.strategy.root_device.type == 'npu':", "device info log only"),
    C("logger.info(f'Training on {torch.cuda.get_device_name(dev)} '", "torch_cuda_api", "replace", False,
      "logger.info(f'Training on {torch.npu.get_device_name(dev)} '", "log only, unreachable on NPU"),
    C("f'({torch.cuda.get_device_properties(dev).total_memory / 2**30:.1f} GiB)')", "torch_cuda_api", "replace",
      False, "f'({torch.npu.get_device_properties(dev).total_memory / 2**30:.1f} GiB)')",
      "log only; total_memory is one of the properties torch_npu does provide"),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("pin_memory=True, collate_fn=collate_sequences,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', collate_fn=collate_sequences,", PIN_NOTE),
])

E("kraken-env-cuda", "environment_cuda.yml", "explicit_replacement",
  "Kraken environment_cuda.yml (conda env with pytorch-cuda)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only needed for the CUDA runtime packages"),
    C("- pytorch::pytorch~=2.1.0", "import_torch_npu", "replace", True, "- pytorch::pytorch=2.1.0=*cpu*",
      "torch_npu 2.1.0.postN needs exactly torch 2.1.0 and a non-CUDA build; ~=2.1.0 with pytorch-cuda resolves "
      "to a CUDA 2.1.x"),
    C("- pytorch::pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
      "CUDA runtime metapackage; forces CUDA builds and is not available for the aarch64 hosts Ascend servers use"),
    C("- coremltools~=7.1", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch-npu pin in the pip section"),
])

E("kraken-train-sh", "scripts/train_recognition.sh", "explicit_replacement",
  "Kraken ketos compile/train/test launcher", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment (libascendcl, op kernels) must be sourced before ketos imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "ignored by the Ascend runtime; the GPU=1 selection would silently land on device 0"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host and set -e aborts the script at this line"),
    C("=-d cuda:0 \\", "device_type", "replace", True, "-d npu:0 \\",
      "Lightning gpu accelerator on a host without CUDA fails (needs the to_ptl_device NPU branch)"),
    C("ketos test -f binary -d cuda:0", "device_type", "replace", True,
      'ketos test -f binary -d npu:0 -m "${best}" "data/${NAME}.arrow" | tee "logs/${NAME}.test.log"',
      "torch device string; kraken also has to import torch_npu for 'npu:0' to parse on torch 2.1"),
])

# ---------------------------------------------------------------- CRNN (meijieru)
E("crnn-train", "train.py", "explicit_replacement",
  "crnn.pytorch (meijieru) train.py with warp-ctc and DataParallel", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True, "from torch.nn import CTCLoss",
      "warp-ctc is a CUDA extension with no NPU build; the native CTC loss runs on NPU (fp32)"),
    C("criterion = CTCLoss()", "custom_cuda_extension", "replace", True,
      "criterion = CTCLoss(reduction='sum', zero_infinity=True)",
      "warp-ctc sums over the batch (the code divides by batch_size); nn.CTCLoss defaults to 'mean', which "
      "would silently rescale the loss"),
    C("crnn.load_state_dict(torch.load(opt.pretrained))", "device_type", "replace", True,
      "crnn.load_state_dict(torch.load(opt.pretrained, map_location='cpu'))",
      "the released crnn.pth was saved from GPU tensors; no map_location means it cannot be read without CUDA"),
    C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and not opt.cuda:", "advisory warning only"),
    C("crnn.cuda()", "tensor_to_device", "replace", True, "crnn.npu()", "Module.cuda raises without CUDA"),
    C("crnn = torch.nn.DataParallel(crnn, device_ids=range(opt.ngpu))", "distributed_framework", "replace", True,
      "crnn = crnn  # nn.DataParallel is unsupported on NPU; use DDP for more than one device",
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 list, msFmkTransplt); its scatter is CUDA-only"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
      "Tensor.cuda raises without CUDA"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
      "nn.CTCLoss has no parameters or buffers, so Module.cuda() touches nothing and does not initialise CUDA; "
      "edit for consistency only"),
    C("cost = criterion(preds, text, preds_size, length) / batch_size  # warp-ctc", "custom_cuda_extension",
      "replace", True, "cost = criterion(preds.log_softmax(2), text, preds_size, length) / batch_size",
      "warp-ctc applies the softmax itself; nn.CTCLoss needs log-probabilities, raw scores give a wrong loss"),
    C("=cost = criterion(preds, text, preds_size, length) / batch_size", "custom_cuda_extension", "replace", True,
      "cost = criterion(preds.log_softmax(2), text, preds_size, length) / batch_size",
      "validation loss, same warp-ctc vs native input convention"),
])

E("crnn-demo", "demo.py", "explicit_replacement",
  "crnn.pytorch (meijieru) demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "demo silently runs on the CPU of an NPU host"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "Module.cuda"),
    C("state_dict = torch.load(model_path)", "device_type", "replace", True,
      "state_dict = torch.load(model_path, map_location='cpu')",
      "the released checkpoint holds CUDA tensors; without map_location it cannot be read on an NPU host"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "Tensor.cuda"),
])

# ---------------------------------------------------------------- deep-text-recognition-benchmark (clovaai)
E("dtrb-train", "train.py", "explicit_replacement",
  "clovaai deep-text-recognition-benchmark train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device shared by the model, loss and batches; silently cpu on an NPU host"),
    C("collate_fn=AlignCollate_valid, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=AlignCollate_valid, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
      "model = model.to(device)  # DataParallel unsupported on NPU",
      "torch.nn.DataParallel is unsupported on Ascend (its scatter/replicate use CUDA comm); strip the 'module.' "
      "prefix when loading old checkpoints"),
    C("model.load_state_dict(torch.load(opt.saved_model), strict=False)", "device_type", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()}, strict=False)",
      "GPU-saved checkpoints need map_location; with strict=False and DataParallel gone the 'module.' keys would "
      "silently load nothing"),
    C("=model.load_state_dict(torch.load(opt.saved_model))", "device_type", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()})",
      "GPU-saved checkpoint without map_location"),
    C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", False,
      "from torch.nn import CTCLoss  # warp-ctc has no NPU build",
      "opt-in --baiduCTC path only; the default path uses torch.nn.CTCLoss"),
    C("torch.cuda.manual_seed(opt.manualSeed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.manualSeed)", "silent no-op without CUDA"),
    C("=cudnn.deterministic = True", "torch_cuda_api", "replace", False, "torch.use_deterministic_algorithms(True)",
      DETERMINISTIC_NOTE),
    C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "opt.num_gpu = torch.npu.device_count()",
      "returns 0 on NPU, which skips the DataParallel batch/worker scaling -- the right outcome for a "
      "single-NPU port; replace only together with a DDP port"),
])

E("dtrb-test", "test.py", "explicit_replacement",
  "clovaai deep-text-recognition-benchmark test.py (validation / benchmark_all_eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "module-level device"),
    C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA (CTC branch, always taken for CTC models)"),
    C("torch.cuda.synchronize()  # attention decoding", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # attention decoding is sequential, wait for the last step",
      "raises without CUDA (Attn branch)"),
    C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
      "model = model.to(device)  # DataParallel unsupported on NPU", "torch.nn.DataParallel unsupported on Ascend"),
    C("model.load_state_dict(torch.load(opt.saved_model, map_location=device))", "distributed_framework",
      "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()})",
      "map_location is already device-agnostic, but the saved keys carry DataParallel's 'module.' prefix and "
      "the unwrapped model rejects them"),
    C("collate_fn=AlignCollate_evaluation, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=AlignCollate_evaluation, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("=cudnn.deterministic = True", "torch_cuda_api", "replace", False, "torch.use_deterministic_algorithms(True)",
      DETERMINISTIC_NOTE),
    C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "opt.num_gpu = torch.npu.device_count()", "value is never used in test.py"),
])

E("dtrb-prediction", "modules/prediction.py", "explicit_replacement",
  "clovaai deep-text-recognition-benchmark modules/prediction.py (attention decoder)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device: hidden states and one-hot vectors are created on the CPU while the model is on the "
      "NPU -> device mismatch in the first LSTMCell call"),
])

E("dtrb-transformation", "modules/transformation.py", "explicit_replacement",
  "clovaai deep-text-recognition-benchmark modules/transformation.py (TPS-STN)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "the zero padding in build_P_prime is created on this device and bmm'd with NPU buffers"),
])

# ---------------------------------------------------------------- ABINet
E("abinet-demo", "demo.py", "explicit_replacement",
  "ABINet (FangShancheng) demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("device = torch.device('cuda', device)", "device_type", "replace", False, "device = torch.device('npu', device)",
      "int branch of the helper; demo passes a string, so not reached here"),
    C("device = 'cpu' if args.cuda < 0 else f'cuda:{args.cuda}'", "device_type", "replace", True,
      "device = 'cpu' if args.cuda < 0 else f'npu:{args.cuda}'", "CUDA device string from the --cuda id"),
])

E("abinet-main", "main.py", "explicit_replacement",
  "ABINet (FangShancheng) main.py on fastai v1 Learner", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("cudnn.deterministic = True", "torch_cuda_api", "replace", False, "torch.use_deterministic_algorithms(True)",
      DETERMINISTIC_NOTE),
    C("learner = learner.to_distributed(local_rank)", "distributed_framework", "replace", False,
      "learner = learner.to_distributed(local_rank)  # fastai DistributedTrainer patched for npu device ids",
      "unconfirmed: fastai v1's DistributedTrainer wraps the model with CUDA device ids"),
    C("elif torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "elif False:  # nn.DataParallel is unsupported on NPU",
      "0 on NPU, so the DataParallel branch is skipped, which is what an NPU port wants anyway"),
    C("logging.info(f'Use {torch.cuda.device_count()} GPUs.')", "torch_cuda_api", "removal", False, None,
      "log inside the DataParallel branch"),
    C("learner = learner.to_parallel()", "distributed_framework", "removal", False, None,
      "fastai to_parallel wraps nn.DataParallel (unsupported on NPU); unreachable on NPU"),
    C("_set_random_seed(config.global_seed)", "device_type", "npu_only_addition", True,
      "defaults.device = torch.device('npu', args.local_rank or 0)",
      "fastai v1 sets defaults.device from torch.cuda.is_available(); on an NPU host the DataBunch and Learner "
      "silently keep everything on the CPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL -> HCCL"),
])

# ---------------------------------------------------------------- MASTER
E("master-train", "train.py", "explicit_replacement",
  "MASTER-pytorch (wenwenyu) train.py entry point", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)  # for all gpu", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)  # for all npu", "silent no-op without CUDA"),
    C("torch.backends.cudnn.deterministic = True  # which", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", DETERMINISTIC_NOTE),
    C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "distributed mode raises 'CUDA is not available' on an NPU host"),
    C("if torch.cuda.device_count() < local_world_size:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() < local_world_size:", "0 < world size -> raises"),
    C("raise RuntimeError(f'the number of GPU ({torch.cuda.device_count()}) is less than '", "torch_cuda_api",
      "replace", False, "raise RuntimeError(f'the number of NPU ({torch.npu.device_count()}) is less than '",
      "error message only"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL -> HCCL"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = known.device", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = known.device",
      "-d device selection is silently ignored by the Ascend runtime"),
])

E("master-trainer", "trainer/trainer.py", "explicit_replacement",
  "MASTER-pytorch (wenwenyu) trainer/trainer.py", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init"),
    C("torch.cuda.max_memory_allocated(self.device) / 2**30))", "torch_cuda_api", "replace", False,
      "epoch, self.epochs, result_dict['loss'], torch.npu.max_memory_allocated(self.device) / 2**30))",
      "log value only"),
    C("dtype=torch.float64).cuda(self.device)", "tensor_to_device", "replace", True,
      "dtype=torch.float32).to(self.device)",
      "Tensor.cuda raises without CUDA; float32 because fp64 is poorly supported on NPU (transfer_to_npu maps "
      "DoubleTensor to FloatTensor) -- the counts stay well below 2**24"),
    C("ngpu_per_process = torch.cuda.device_count() // local_world_size", "torch_cuda_api", "replace", True,
      "ngpu_per_process = torch.npu.device_count() // local_world_size",
      "0 on NPU -> empty device_ids -> IndexError / DDP without devices"),
    C("if torch.cuda.is_available() and local_rank != -1:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and local_rank != -1:", "distributed run silently falls back to CPU"),
    C("torch.cuda.set_device(device_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_ids[0])  # device_ids[0] =local_rank if local_world_size = n_npu per node",
      "raises without CUDA"),
    C("device = 'cuda'  # current device", "device_type", "replace", True,
      "device = 'npu'  # current device was set just above", "CUDA device string"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "0 on NPU, so single-device training silently runs on the CPU"),
    C("torch.cuda.set_device(list_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(list_ids[0])  # only use first available npu as devices", "raises without CUDA"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "CUDA device string"),
])

E("master-dist-sh", "scripts/distributed_train.sh", "explicit_replacement",
  "MASTER-pytorch distributed launcher (torch.distributed.launch + NCCL env)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment for the launched workers"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}", "ignored by the Ascend runtime"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL variable, no effect on HCCL; Ascend logging is set through ASCEND_GLOBAL_LOG_LEVEL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
])

# ---------------------------------------------------------------- OrigamiNet
E("origaminet-train", "train.py", "explicit_replacement",
  "OrigamiNet (IntuitionMachines) train.py: gin config, apex amp, DP/DDP/Horovod", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, ENTRY_IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "module-level device"),
    C("pin_memory=True, num_workers=int(workers),", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', num_workers=int(workers),", PIN_NOTE),
    C("num_workers=int(workers), pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=int(workers), pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("model.cuda(opt.rank)", "tensor_to_device", "replace", True, "model.npu(opt.rank)", "DDP path, Module.cuda"),
    C('model, optimizer = amp.initialize(model, optimizer, opt_level="O1")', "amp", "replace", True,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0, combine_grad=True)',
      "NVIDIA apex amp.initialize rejects parameters that are not torch.cuda tensors; with Ascend's apex patch "
      "(same amp API, combine_grad is its NPU option) the call works, or move to torch.npu.amp"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = model  # nn.DataParallel unsupported on NPU; select dist = 'DDP' in the gin file",
      "the shipped gin config selects DP; torch.nn.DataParallel is unsupported on Ascend"),
    C("checkpoint = torch.load(continue_model, map_location=f'cuda:{opt.rank}')", "device_type", "replace", True,
      "checkpoint = torch.load(continue_model, map_location=f'npu:{opt.rank}')", "CUDA map_location"),
    C("model_ema._load_checkpoint(continue_model, f'cuda:{opt.rank}')", "device_type", "replace", True,
      "model_ema._load_checkpoint(continue_model, f'npu:{opt.rank}')", "CUDA map_location passed down"),
    C("out += f' mem: {torch.cuda.max_memory_allocated() / 2 ** 30:0.2f}G'", "torch_cuda_api", "replace", False,
      "out += f' mem: {torch.npu.max_memory_allocated() / 2 ** 30:0.2f}G'", "log value only"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(hvd.local_rank())",
      "Horovod path only (gin dist='HVD'); Horovod itself has no NPU support in the knowledge base"),
    C("torch.cuda.manual_seed(sd)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(sd)",
      "silent no-op without CUDA"),
    C('dist.init_process_group("nccl", rank=rank, world_size=opt.num_gpu)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=opt.num_gpu)', "NCCL -> HCCL"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "opt.num_gpu = torch.npu.device_count()",
      "0 on NPU: mp.spawn starts no DDP workers and the world size is wrong"),
])

E("origaminet-gin", "iam/iam.gin", "explicit_replacement",
  "OrigamiNet gin-config for IAM paragraphs", [
    C("dist = 'DP'", "distributed_framework", "replace", True, "dist = 'DDP'",
      "DP selects torch.nn.DataParallel, unsupported on Ascend; DDP with HCCL instead"),
])
