"""Labels for probe467 (VAD / endpointing / turn-taking, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
required=True  : with every other label ported, leaving this line as is fails, computes something
                 wrong, or silently does the wrong thing (incl. silently running the main workload on CPU).
required=False : performance / logging / opt-in paths, or a claim not confirmable in /work/shared/knowledge.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: register the NPU backend before anything touches a device; "
               "autoload only exists from torch_npu 2.5.1, so an explicit port adds the import")

# ----------------------------------------------------------------------------------------------
# snakers4/silero-vad
# ----------------------------------------------------------------------------------------------
E("silero_utils_vad", "src/silero_vad/utils_vad.py", "explicit_replacement",
  "snakers4/silero-vad src/silero_vad/utils_vad.py (OnnxWrapper, read_audio, init_jit_model, get_speech_timestamps, VADIterator)",
  [])

E("silero_config", "tuning/config.yml", "explicit_replacement",
  "snakers4/silero-vad tuning/config.yml (decoder fine-tuning config)",
  [
      C("device: 'cuda'", "device_type", "replace", True,
        "device: 'npu'  # 'cpu' or 'npu'; tuning on CPU is possible but very slow",
        "the only device choice of the tuning scripts: flows into torch.jit.load(map_location=...) and every .to(device)"),
  ])

E("silero_tune", "tuning/tune.py", "explicit_replacement",
  "snakers4/silero-vad tuning/tune.py (fine-tune the jit model's LSTMCell decoder)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available())",
        "evaluates False on an NPU host, so batches are not pinned: slower H2D copies only"),
  ])

E("silero_tune_utils", "tuning/utils.py", "explicit_replacement",
  "snakers4/silero-vad tuning/utils.py (dataset, padder, VADDecoderRNNJIT, train/validate loops)",
  [
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache() is a no-op when CUDA was never initialised; NPU cache just is not released"),
      C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release cached blocks before the next train epoch",
        "same as the train() call: no-op on an NPU host, memory hygiene only"),
  ])

E("silero_search", "tuning/search_thresholds.py", "explicit_replacement",
  "snakers4/silero-vad tuning/search_thresholds.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

# ----------------------------------------------------------------------------------------------
# pyannote/pyannote-audio
# ----------------------------------------------------------------------------------------------
E("pyannote_pyannet", "pyannote/audio/models/segmentation/PyanNet.py", "explicit_replacement",
  "pyannote/pyannote-audio pyannote/audio/models/segmentation/PyanNet.py (SincNet > LSTM > Linear)",
  [])

E("pyannote_getter", "pyannote/audio/pipelines/utils/getter.py", "explicit_replacement",
  "pyannote/pyannote-audio pyannote/audio/pipelines/utils/getter.py (get_model/get_inference/get_devices)",
  [
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host, so every pipeline that asks get_devices() silently runs on CPU"),
      C('torch.device(f"cuda:{index:d}")', "device_type", "replace", True,
        'devices = [torch.device(f"npu:{index:d}") for index in range(num_gpus)]',
        "device list handed to the pipelines; must name NPU devices"),
  ])

E("pyannote_vad", "pyannote/audio/pipelines/voice_activity_detection.py", "explicit_replacement",
  "pyannote/pyannote-audio pyannote/audio/pipelines/voice_activity_detection.py (VoiceActivityDetection, AdaptiveVoiceActivityDetection)",
  [
      C('accelerator="gpu" if self.inference.device.type == "cuda" else "cpu"', "device_type", "replace", True,
        'accelerator="npu" if self.inference.device.type == "npu" else "cpu",',
        "adaptive VAD fine-tuning silently falls back to CPU on an NPU-resident model; 'npu' accelerator name assumes an "
        "NPU Lightning accelerator is registered (not confirmable in the knowledge base)"),
  ])

E("pyannote_train_cli", "pyannote/audio/cli/train.py", "explicit_replacement",
  "pyannote/pyannote-audio pyannote/audio/cli/train.py (hydra pyannote-audio-train entry point)",
  [
      C("=import hydra", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401", IMPORT_NOTE + "; the Trainer is instantiated from YAML so nothing else imports it"),
  ])

E("pyannote_trainer_cfg", "pyannote/audio/cli/train_config/trainer/default.yaml", "explicit_replacement",
  "pyannote/pyannote-audio pyannote/audio/cli/train_config/trainer/default.yaml",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning raises when the GPU accelerator is requested on a host without CUDA; the 'npu' accelerator name "
        "depends on the NPU Lightning integration in use (unconfirmed in knowledge)"),
  ])

# ----------------------------------------------------------------------------------------------
# NVIDIA/NeMo (MarbleNet / frame-VAD)
# ----------------------------------------------------------------------------------------------
E("nemo_speech_to_label", "examples/asr/speech_classification/speech_to_label.py", "explicit_replacement",
  "NVIDIA/NeMo examples/asr/speech_classification/speech_to_label.py (MatchboxNet/MarbleNet training)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
  ])

E("nemo_marblenet_cfg", "examples/asr/conf/marblenet/marblenet_3x2x64.yaml", "explicit_replacement",
  "NVIDIA/NeMo examples/asr/conf/marblenet/marblenet_3x2x64.yaml",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "trainer.accelerator is passed straight to pl.Trainer; 'gpu' fails on an NPU host"),
  ])

E("nemo_frame_vad_infer", "examples/asr/speech_classification/frame_vad_infer.py", "device_branch_or_abstraction",
  "NVIDIA/NeMo examples/asr/speech_classification/frame_vad_infer.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "module-level device global: on an NPU host the whole frame-VAD inference silently runs on CPU"),
  ])

E("nemo_vad_utils", "nemo/collections/asr/parts/utils/vad_utils.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/collections/asr/parts/utils/vad_utils.py (prepare_manifest, binarization, generate_vad_frame_pred)",
  [
      C("from torch.cuda.amp import autocast", "amp", "replace", False,
        "from torch_npu.npu.amp import autocast",
        "CUDA autocast on a CUDA-less host only warns and disables itself: frame-VAD inference runs in fp32 (correct, slower)"),
  ])

E("nemo_features", "nemo/collections/asr/parts/preprocessing/features.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/collections/asr/parts/preprocessing/features.py (FilterbankFeatures)",
  [
      C("torch.cuda.is_available()", "torch_cuda_api", "replace", False, "torch.npu.is_available()",
        "guard of a sanity check (length-1 sequences); on NPU it is just skipped"),
      C("and not torch.cuda.is_current_stream_capturing()", "torch_cuda_api", "replace", False,
        "and not torch.npu.is_current_stream_capturing()",
        "only evaluated once the guard above is ported; torch.npu.is_current_stream_capturing exists"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "disabling CUDA autocast leaves NPU autocast active: STFT/filterbank matmul/log run in fp16 under AMP "
        "(precision loss; torch.stft on NPU is listed fp32-only)"),
  ])

E("nemo_cast_utils", "nemo/utils/cast_utils.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/utils/cast_utils.py (avoid_float16_autocast_context, CastToFloat)",
  [
      C("torch.get_autocast_gpu_dtype() == torch.bfloat16", "amp", "replace", True,
        "if torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() == torch.bfloat16:",
        "argument-less torch.is_autocast_enabled()/get_autocast_gpu_dtype() report the CUDA autocast state: always False on NPU"),
      C("return torch.amp.autocast('cuda', dtype=torch.float32)", "amp", "replace", True,
        "return torch.amp.autocast('npu', dtype=torch.float32)",
        "a CUDA autocast context does not override the active NPU autocast"),
      C("torch.get_autocast_gpu_dtype() == torch.float16", "amp", "replace", True,
        "if torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() == torch.float16:",
        "same CUDA-only autocast query; fp16-sensitive blocks silently stay in fp16"),
      C("return torch.cuda.amp.autocast(dtype=torch.float32)", "amp", "replace", True,
        "return torch.npu.amp.autocast(dtype=torch.float32)", "jit/tracing branch, same reasoning"),
      C("if torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if torch.npu.is_bf16_supported():",
        "on a CPU+torch_npu build the CUDA query initialises CUDA (raises) or reports False"),
      C("return torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
        "return torch.npu.amp.autocast(dtype=torch.bfloat16)", "CUDA context would not change NPU autocast dtype"),
      C("return torch.cuda.amp.autocast(dtype=torch.float32, enabled=True)", "amp", "replace", True,
        "return torch.npu.amp.autocast(dtype=torch.float32, enabled=True)", "same as above"),
      C("if torch.is_autocast_enabled() and x.dtype != torch.float32:", "amp", "replace", True,
        "if torch.npu.is_autocast_enabled() and x.dtype != torch.float32:",
        "CastToFloat never engages on NPU: wrapped module (e.g. normalisation) runs in fp16"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=False):",
        "must disable the NPU autocast, otherwise ops inside re-cast to fp16"),
      C("=if torch.is_autocast_enabled():", "amp", "replace", True,
        "if torch.npu.is_autocast_enabled():",
        "CastToFloatAll: body is device-agnostic (torch.autocast(device_type=...)) but the guard queries CUDA only"),
  ])

E("nemo_dockerfile", "Dockerfile", "explicit_replacement",
  "NVIDIA/NeMo Dockerfile (nvcr.io PyTorch base, apex, TransformerEngine, flash-attn)",
  [
      C("ARG BASE_IMAGE=nvcr.io", "import_torch_npu", "replace", True,
        "ARG BASE_IMAGE=swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.0-A2-2.1.0-ubuntu20.04",
        "CUDA base image has no CANN/torch_npu; the Ascend image tag is illustrative (not confirmable in knowledge)"),
      C("--cuda_ext", "custom_cuda_extension", "removal", True, None,
        "apex CUDA extensions need nvcc and fail to build; MarbleNet/VAD training does not need apex (Ascend apex is a separate patch set)"),
      C("RUN git clone https://github.com/NVIDIA/TransformerEngine.git", "custom_cuda_extension", "removal", True, None,
        "TransformerEngine has no NPU build; drop the whole RUN block"),
      C("=RUN pip install flash-attn", "attention_kernel", "removal", True, None,
        "flash-attn cannot be installed on NPU hosts (knowledge §6)"),
      C("RUN pip install triton==2.0.0.dev20221202", "triton_kernel_tuning", "removal", False, None,
        "only pinned for flash-attn; unused on NPU (triton-ascend is a different package); whether the wheel even resolves is unconfirmed"),
  ])

# ----------------------------------------------------------------------------------------------
# pipecat-ai/smart-turn (audio turn-end / endpointing)
# ----------------------------------------------------------------------------------------------
E("smartturn_train", "train.py", "device_branch_or_abstraction",
  "pipecat-ai/smart-turn train.py (Wav2Vec2ForEndpointing with HF Trainer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", "replace", False,
        'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
        "allocator tuning only; NPU equivalent needs HDK >= 23.0.0"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed on the line above also seeds the registered PrivateUse1 backend in recent torch (unconfirmed in knowledge); "
        "the CUDA call is lazily queued and never fails"),
      C('subprocess.run(["nvidia-smi"], check=False)', "torch_cuda_api", "replace", True,
        'subprocess.run(["npu-smi", "info"], check=False)',
        "check=False does not cover a missing executable: FileNotFoundError aborts the run"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of a log line; unported it just skips the device log"),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        'log.info(f"Training on {torch.npu.get_device_name(0)} "',
        "once the guard is ported this CUDA call initialises CUDA and raises"),
      C("torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", True,
        'f"({torch.npu.get_device_properties(0).total_memory / 1e9:.1f} GB)")',
        "same; total_memory is one of the properties torch_npu does provide"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "test-set evaluation (and the trained model it moves) silently falls back to CPU"),
      C("use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
        "use_bf16 = torch.npu.is_available() and torch.npu.is_bf16_supported()",
        "False on NPU, so the run silently switches to fp16 training instead of bf16"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'log.info(f"Peak NPU memory: {torch.npu.max_memory_allocated() / 1e9:.2f} GB")',
        "CUDA memory stats return 0 when CUDA is uninitialised: wrong log value only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op on NPU host; memory hygiene only"),
  ])

E("smartturn_inference", "inference.py", "device_branch_or_abstraction",
  "pipecat-ai/smart-turn inference.py (predict_endpoint)",
  [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True, "if torch.npu.is_available():",
        "device ladder cuda/mps/cpu: without an NPU rung the model silently serves from CPU"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "device string used for model and inputs"),
  ])

E("smartturn_benchmark", "benchmark.py", "explicit_replacement",
  "pipecat-ai/smart-turn benchmark.py style latency benchmark (CUDA events)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('"--device", type=str, default="cuda"', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu", choices=["npu", "cpu", "mps"])',
        "argparse choices would reject 'npu'"),
      C('=if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
        "unported, NPU inputs take the generic .to(device) branch, which works"),
      C("v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "return {k: v.npu(non_blocking=True) for k, v in inputs.items()}", "CUDA copy fails on NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; NPU launches are asynchronous so the sync is needed for timing"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU streams"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "same"),
      C('if device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
        'if device == "npu" and not torch.npu.is_available():', "fallback guard only"),
      C('on_gpu = device == "cuda"', "device_type", "replace", True, 'on_gpu = device == "npu"',
        "unported, NPU runs are timed with perf_counter without a sync: silently wrong latencies"),
      C('torch.compile(model, mode="reduce-overhead")', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "reduce-overhead relies on CUDA graphs; npugraphs backend is the documented NPU analogue (behaviour unconfirmed)"),
      C("torch.cuda.get_device_name()", "torch_cuda_api", "replace", True,
        'print(f"NPU: {torch.npu.get_device_name()}")', "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device, raises without CUDA"),
      C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'print(f"Peak memory: {torch.npu.max_memory_allocated() / 2**20:.0f} MiB")', "returns 0: wrong printout only"),
  ])

E("smartturn_requirements", "requirements.txt", "explicit_replacement",
  "pipecat-ai/smart-turn requirements.txt",
  [
      C("torch>=2.4.0", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.6.0.post5  # and pin torch==2.6.0 / torchaudio==2.6.0: wheel version must equal torch (CANN 8.5.0)",
        "torch_npu has to be installed and matched to the torch version (knowledge §1)"),
  ])

E("smartturn_modal", "train_modal.py", "explicit_replacement",
  "pipecat-ai/smart-turn train_modal.py (Modal cloud launcher)",
  [])

# ----------------------------------------------------------------------------------------------
# ErikEkstedt/VoiceActivityProjection (VAP turn-taking)
# ----------------------------------------------------------------------------------------------
E("vap_train", "vap/train.py", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection vap/train.py (hydra + Lightning)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('AudioAugmentationCallback(device="cuda")', "device_type", "replace", True,
        'AudioAugmentationCallback(device="npu"),',
        "callback moves batches to the named device before augmenting"),
      C('process_group_backend="nccl"', "dist_backend", "replace", True,
        'strategy = DDPStrategy(find_unused_parameters=False, process_group_backend="hccl")',
        "NCCL is unavailable on Ascend; HCCL is the collective backend"),
  ])

E("vap_config", "vap/conf/default_config.yaml", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection vap/conf/default_config.yaml",
  [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning accelerator; 'npu' name depends on the NPU Lightning integration (unconfirmed)"),
  ])

E("vap_lightning", "vap/modules/lightning_module.py", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection vap/modules/lightning_module.py (VAPModule)",
  [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard of a memory log; unported it only skips logging"),
      C("mem = torch.cuda.max_memory_reserved() / 2**30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_reserved() / 2**30", "CUDA stats read 0 without CUDA: wrong logged value only"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "with the guard ported this raises at every epoch end"),
      C('def load_vap_model(checkpoint: str, device: str = "cuda")', "device_type", "replace", True,
        'def load_vap_model(checkpoint: str, device: str = "npu") -> VAP:',
        "public helper: callers relying on the default (map_location and .to) fail on NPU"),
  ])

E("vap_modules", "vap/modules/modules.py", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection vap/modules/modules.py (ALiBi multi-head attention, stereo transformer)",
  [
      C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # sdp_kernel selects CUDA kernels only",
        "torch.backends.cuda.sdp_kernel is ✘ in Ascend's list; it only toggles CUDA SDPA backends, so likely inert (unconfirmed)"),
  ])

E("vap_run", "run.py", "device_branch_or_abstraction",
  "ErikEkstedt/VoiceActivityProjection run.py (stereo inference, chunked step extraction)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('torch.autocast(device_type="cuda", dtype=torch.float16, enabled=fp16)', "amp", "replace", False,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=fp16):',
        "--fp16 would silently run fp32 (CUDA autocast disables itself): slower, numerically safe"),
      C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "add_branch", True,
        "if torch.npu.is_available() and not args.cpu:", "otherwise inference silently runs on CPU"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "device string for model and input"),
      C('=if device == "cuda":', "device_type", "replace", True, 'if device == "npu":',
        "unported, the waveform stays on CPU while the model is on NPU: device-mismatch error"),
      C("waveform = waveform.cuda()", "tensor_to_device", "replace", True, "waveform = waveform.npu()", ".cuda() fails on NPU host"),
  ])

E("vap_env", "environment.yml", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection environment.yml (conda env)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "channel is harmless once pytorch-cuda is gone"),
      C("- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
        "torch_npu runs on top of the CPU build of torch; pytorch-cuda pulls the CUDA build"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "install torch_npu matching torch 2.1.0 (v2.1.0-7.2.0 / CANN 8.3.RC1 per knowledge §1.2)"),
  ])

E("vap_train_sh", "scripts/train.sh", "explicit_replacement",
  "ErikEkstedt/VoiceActivityProjection-style multi-GPU launcher script",
  [
      C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be loaded for torch_npu (unless the container already does it)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}",
        "ids are 0..N-1 and Lightning takes the first N devices anyway, so behaviour is unchanged; keeps the isolation intent"),
      C('echo "Training on GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
        'echo "Training on NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"', "log line would print an empty list after the export is ported"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "set -e: 'command not found' aborts the launcher"),
  ])

# ----------------------------------------------------------------------------------------------
# speechbrain/speechbrain (LibriParty CRDNN VAD recipe + core)
# ----------------------------------------------------------------------------------------------
E("sb_core", "speechbrain/core.py", "device_branch_or_abstraction",
  "speechbrain/speechbrain speechbrain/core.py (run_opt_defaults, parse_arguments, Brain.__init__, fit_batch)",
  [
      C('"distributed_backend": "nccl",', "dist_backend", "replace", True, '"distributed_backend": "hccl",',
        "default backend for DDP runs launched without --distributed_backend"),
      C('"--device", type=str, default="cuda:0",', "device_type", "replace", True,
        '"--device", type=str, default="npu:0",', "default device of every recipe"),
      C("if torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() == 0:",
        "only on the --data_parallel_backend path, which cannot work on NPU anyway (DataParallel ✘)"),
      C('if local_rank is not None and "cuda" in run_opts["device"]:', "device_type", "replace", True,
        'if local_rank is not None and "npu" in run_opts["device"]:',
        "unported, every torchrun rank keeps npu:0 and all ranks pile onto one device"),
      C('if self.device == "cuda":', "device_type", "replace", True, 'if self.device == "npu":',
        "with a bare 'npu' device the elif below would run int('u') and crash"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)", "raises without CUDA"),
      C('elif "cuda" in self.device:', "device_type", "replace", True, 'elif "npu" in self.device:',
        "per-rank set_device is needed before HCCL communicators are created"),
      C("torch.cuda.set_device(int(self.device[-1]))", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(int(self.device[-1]))", "raises without CUDA"),
      C('gradscaler_enabled = self.precision == "fp16" and "cuda" in self.device', "device_type", "replace", True,
        'gradscaler_enabled = self.precision == "fp16" and "npu" in self.device',
        "fp16 training without loss scaling: gradients silently underflow"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=gradscaler_enabled)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=gradscaler_enabled)",
        "CUDA GradScaler disables itself without CUDA: no scaling under NPU fp16"),
      C('elif "cuda" in self.device and self.precision in ["fp16", "bf16"]:', "device_type", "replace", False,
        'elif "npu" in self.device and self.precision in ["fp16", "bf16"]:',
        "unported, --precision fp16/bf16 is silently ignored and training runs fp32 (slower, numerically safe)"),
      C("self.profiler = torch.profiler.profile(", "torch_cuda_api", "replace", False,
        "self.profiler = torch_npu.profiler.profile(", "opt-in profiling; NPU kernels are only captured by torch_npu.profiler"),
      C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", "replace", False,
        "torch_npu.profiler.ProfilerActivity.NPU,", "opt-in profiling"),
      C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", "replace", False,
        "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(", "opt-in profiling; NPU trace layout"),
      C("module = DP(module)", "distributed_framework", "replace", False,
        'raise ValueError("DataParallel is not supported on NPU, use torchrun + DDP")',
        "torch.nn.DataParallel is ✘ on Ascend; only reached with --data_parallel_backend"),
  ])

E("sb_distributed", "speechbrain/utils/distributed.py", "explicit_replacement",
  "speechbrain/speechbrain speechbrain/utils/distributed.py (run_on_main, ddp_barrier, ddp_init_group)",
  [
      C('backend = run_opts.get("distributed_backend", "nccl")', "dist_backend", "replace", True,
        'backend = run_opts.get("distributed_backend", "hccl")', "default collective backend"),
      C("if local_rank + 1 > torch.cuda.device_count():", "torch_cuda_api", "replace", True,
        "if local_rank + 1 > torch.npu.device_count():", "0 CUDA devices: every rank raises 'Not enough GPUs'"),
      C('if backend == "nccl":', "dist_backend", "replace", True, 'if backend == "hccl":',
        "'hccl' otherwise hits the final else: 'communication protocol doesn't exist'"),
      C("if not torch.distributed.is_nccl_available():", "dist_backend", "replace", True,
        "if not torch_npu.distributed.is_hccl_available():", "availability check for the new backend"),
  ])

E("sb_vad_train", "recipes/LibriParty/VAD/train.py", "explicit_replacement",
  "speechbrain/speechbrain recipes/LibriParty/VAD/train.py (CRDNN VAD with on-the-fly augmentation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=# CLI:", "compile_mode", "npu_only_addition", False, "torch.npu.set_compile_mode(jit_compile=False)",
        "variable-length augmented batches: msFmkTransplt advises jit_compile=False for dynamic shapes (performance)"),
  ])

E("sb_vad_hparams", "recipes/LibriParty/VAD/hparams/train.yaml", "explicit_replacement",
  "speechbrain/speechbrain recipes/LibriParty/VAD/hparams/train.yaml",
  [])
