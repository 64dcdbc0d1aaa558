# Labels for probe109 (Whisper / speech-recognition / audio-LLM stack, CUDA -> Ascend NPU).
# Format as expected by bench/probe_build.py.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# openai/whisper
# ---------------------------------------------------------------------------------------------
E("w01_whisper_init", "whisper/__init__.py", "device_branch_or_abstraction",
  "openai/whisper whisper/__init__.py (load_model, _download)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "package entry: the ported default-device line calls torch.npu.is_available(); torch.npu only exists once "
        "torch_npu is imported (the torch 2.1 era these projects pin has no backend autoload)"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
        "on an NPU host torch.cuda.is_available() is False, so load_model() silently puts the model on the CPU"),
  ])

E("w02_whisper_model", "whisper/model.py", "explicit_replacement",
  "openai/whisper whisper/model.py (Whisper, MultiHeadAttention with SDPA, alignment_heads buffer)",
  [
      C('self.register_buffer("alignment_heads", all_heads.to_sparse(), persistent=False)',
        "unsupported_op_workaround", "replace", True,
        'self.register_buffer("alignment_heads", all_heads, persistent=False)',
        "sparse COO buffer is moved to the NPU by model.to(device); Tensor.to_sparse is in msFmkTransplt's unsupported "
        "list and sparse ops without an NPU kernel raise instead of falling back; keep a dense bool mask"),
      C('self.register_buffer("alignment_heads", mask.to_sparse(), persistent=False)',
        "unsupported_op_workaround", "replace", True,
        'self.register_buffer("alignment_heads", mask, persistent=False)',
        "same sparse alignment_heads buffer, set for every official checkpoint via set_alignment_heads()"),
  ])

E("w03_whisper_timing", "whisper/timing.py", "explicit_replacement",
  "openai/whisper whisper/timing.py (word timestamps: cross-attention QKs, median filter, DTW)",
  [
      C("model.alignment_heads.indices().T", "unsupported_op_workaround", "replace", True,
        "weights = torch.stack([QKs[_l][_h] for _l, _h in model.alignment_heads.nonzero()])",
        "follows the dense alignment_heads buffer in model.py: .indices() exists only on sparse tensors"),
  ])

E("w05_whisper_transcribe", "whisper/transcribe.py", "device_branch_or_abstraction",
  "openai/whisper whisper/transcribe.py (transcribe() loop and the `whisper` CLI)",
  [
      C('parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu"',
        "device_type", "add_branch", True,
        'parser.add_argument("--device", default="npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"), help="device to use for PyTorch inference")',
        "CLI default falls back to CPU on an NPU host (fp16 then also gets forced off)"),
  ])

# ---------------------------------------------------------------------------------------------
# faster-whisper / CTranslate2 / WhisperX
# ---------------------------------------------------------------------------------------------
E("w06_fw_batch", "tools/fw_batch_transcribe.py", "explicit_replacement",
  "faster-whisper BatchedInferencePipeline user script (multi-GPU sharding via device_index / CUDA_VISIBLE_DEVICES)",
  [
      C('p.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])', "device_type", "replace", True,
        'p.add_argument("--device", default="cpu", choices=["cpu", "auto"])',
        "CTranslate2 has no Ascend backend (CPU/CUDA only; not covered by the knowledge notes), so device='cuda' fails "
        "on an NPU host; with cpu the script takes run_single_process(), which already forces compute_type int8"),
  ])

E("w07_whisperx_asr", "whisperx/asr.py", "device_branch_or_abstraction",
  "m-bain/whisperX whisperx/asr.py (FasterWhisperPipeline, load_model)",
  [
      C('self.device = torch.device(f"cuda:{device}")', "device_type", "add_branch", True,
        'self.device = torch.device(f"npu:{device}") if hasattr(torch, "npu") and torch.npu.is_available() else torch.device(f"cuda:{device}")',
        "integer device ids are turned into a CUDA torch.device; the HF Pipeline then places tensors on it"),
      C("=device=device,", "device_type", "add_branch", True,
        'device="cpu" if str(device).startswith("npu") else device,',
        "WhisperModel here is CTranslate2, which cannot run on the NPU: route the ASR backend to CPU while VAD/"
        "alignment/diarization keep the npu device"),
      C("compute_type=compute_type,", "amp", "add_branch", False,
        'compute_type="int8" if str(device).startswith("npu") else compute_type,',
        "CTranslate2 on CPU rejects float16 compute (unconfirmed in knowledge); follows the CPU routing above"),
      C("=device=device", "device_type", "add_branch", True,
        'device="cpu" if str(device).startswith("npu") else device',
        "the Pipeline's device decides where preprocess() features go; CTranslate2 converts them with .numpy(), "
        "which fails for NPU tensors, so the CT2 pipeline must stay on CPU"),
  ])

E("w08_whisperx_align", "whisperx/alignment.py", "device_branch_or_abstraction",
  "m-bain/whisperX whisperx/alignment.py (wav2vec2 forced alignment)",
  [])

E("w09_whisperx_cli", "whisperx/transcribe.py", "device_branch_or_abstraction",
  "m-bain/whisperX whisperx/transcribe.py (CLI: ASR -> align -> diarize)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "CLI entry point; the ported --device default calls torch.npu.is_available()"),
      C('parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu"',
        "device_type", "add_branch", True,
        'parser.add_argument("--device", default="npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"), help="device to use for PyTorch inference")',
        "alignment (wav2vec2) and pyannote diarization would silently run on CPU; asr.py routes CT2 to CPU itself"),
      C("torch.cuda.empty_cache()  # free VRAM", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # free device memory held by the VAD model before alignment",
        "silent no-op on an NPU host (CUDA never initialised); NPU cache is not released"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; wav2vec2 memory stays cached before diarization"),
  ])

E("w10_meeting_diarize", "tools/meeting_transcribe.py", "device_branch_or_abstraction",
  "pyannote.audio 3.1 + openai-whisper speaker-attributed transcription script (blog/README style)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("    if torch.cuda.is_available():", "device_type", "add_branch", True,
        '    if torch.npu.is_available(): return torch.device("npu")',
        "get_device() would fall back to CPU on an NPU host"),
      C('pipeline.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
        'pipeline.to(torch.device("npu"))',
        "hard-coded CUDA device for the pyannote pipeline fails without CUDA"),
      C('fp16=device.type == "cuda",', "device_type", "replace", False,
        'fp16=device.type in ("cuda", "npu"),',
        "whisper would decode in fp32 on the NPU: correct but slower"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
      C('gpu_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "-"', "torch_cuda_api", "replace",
        False, 'gpu_name = torch.npu.get_device_name(device) if device.type == "npu" else "-"',
        "log line only; guarded by device.type so it just prints '-' on NPU"),
      C('    if device.type == "cuda":', "device_type", "replace", False, '    if device.type == "npu":',
        "peak-memory report is skipped on NPU (log only)"),
      C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
        'print(f"peak mem {torch.npu.max_memory_allocated(device) / 2**30:.2f} GiB")',
        "goes with the guard above; log only"),
  ])

# ---------------------------------------------------------------------------------------------
# HF Whisper fine-tuning (Seq2SeqTrainer, DeepSpeed, PEFT/bitsandbytes)
# ---------------------------------------------------------------------------------------------
E("w11_hf_seq2seq", "training/run_speech_recognition_seq2seq.py", "explicit_replacement",
  "huggingface/transformers examples/pytorch/speech-recognition/run_speech_recognition_seq2seq.py (+ memory callback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "recommended; transformers' is_torch_npu_available() already imports torch_npu while TrainingArguments "
        "sets up the device, before the callback below touches torch.npu"),
      C("if logs is None or not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if logs is None or not torch.npu.is_available():",
        "memory logging silently disabled on NPU; training itself unaffected"),
      C('logs["gpu_peak_mem_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)', "torch_cuda_api", "replace",
        False, 'logs["gpu_peak_mem_gb"] = round(torch.npu.max_memory_allocated() / 2**30, 2)', "log only"),
      C('logs["gpu_reserved_gb"] = round(torch.cuda.memory_reserved() / 2**30, 2)', "torch_cuda_api", "replace",
        False, 'logs["gpu_reserved_gb"] = round(torch.npu.memory_reserved() / 2**30, 2)', "log only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats()", "log only (unreachable on NPU until the guard is changed)"),
  ])

E("w12_conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a whisper/whisperX/NeMo speech stack (pytorch + nvidia channels)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel is not needed on Ascend"),
      C("=- pytorch=2.1.2", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "torch_npu wheels pair with an exact torch release (2.1.0.postN <-> torch 2.1.0); there is no torch_npu for 2.1.2"),
      C("=- torchaudio=2.1.2", "torch_cuda_api", "replace", True, "- torchaudio=2.1.0",
        "torchaudio must match the torch pin above"),
      C("=- pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of torch; torch_npu expects the CPU build"),
      C("=- cudnn=8.9", "torch_cuda_api", "removal", False, None, "unused on Ascend"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "the torch_npu wheel itself (plus CANN on the host); pin matches torch 2.1.0"),
      C("=- bitsandbytes==0.43.0", "unsupported_op_workaround", "removal", False, None,
        "installs, but LLM.int8 / 8-bit optimizers have no NPU path; the LoRA recipe drops it"),
      C("=- cuda-python>=12.3", "torch_cuda_api", "removal", False, None, "CUDA driver bindings, unused on Ascend"),
      C("=- nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU equivalent (use npu-smi / torch.npu memory APIs)"),
  ])

E("w13_ds_launch", "training/run_whisper_large_ds.sh", "explicit_replacement",
  "DeepSpeed launcher for HF Whisper fine-tuning (HF community event / blog style)",
  [
      C("=set -euo pipefail", "env_var", "npu_only_addition", True, CANN_ENV,
        "torch_npu needs the CANN environment in every launched process"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "the NPU runtime ignores CUDA_VISIBLE_DEVICES, so a user's device restriction is silently lost"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "ignored by HCCL (HCCL logging goes through ASCEND_GLOBAL_LOG_LEVEL)"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; no effect on HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "InfiniBand switch; no effect on HCCL"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1", "torch_npu watchdog counterpart (default already 1)"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "caching-allocator setting for the NPU allocator; memory/fragmentation only"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace",
        True, "npu-smi info", "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
      C("--tf32 True", "device_capability_check", "removal", False, None,
        "TF32 is an Ampere feature; transformers refuses --tf32 when is_torch_tf32_available() is False "
        "(unconfirmed in knowledge)"),
      C("--ddp_backend nccl", "dist_backend", "replace", True, "    --ddp_backend hccl \\",
        "ProcessGroupNCCL does not exist in the NPU build; HCCL is the collective backend"),
  ])

E("w14_lora_int8", "training/finetune_lora_int8.py", "explicit_replacement",
  "huggingface/peft examples int8_training Whisper LoRA notebook (as a script)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "recommended; transformers/accelerate already import torch_npu when they probe for the NPU"),
      C("args.model_name_or_path, load_in_8bit=True, device_map=\"auto\"", "unsupported_op_workaround", "replace", True,
        'args.model_name_or_path, torch_dtype=torch.float16, device_map="auto"',
        "bitsandbytes LLM.int8 has no NPU implementation (only NF4 in the multi-backend branch)"),
      C("optim=\"adamw_bnb_8bit\",", "unsupported_op_workaround", "replace", True, 'optim="adamw_torch",',
        "bitsandbytes 8-bit optimizers are not available on NPU"),
      C("peft_config.base_model_name_or_path, load_in_8bit=True", "unsupported_op_workaround", "replace", True,
        'peft_config.base_model_name_or_path, torch_dtype=torch.float16, device_map="auto"',
        "same LLM.int8 load for evaluation"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True,
        "with torch.autocast(device_type=\"npu\", dtype=torch.float16):",
        "torch.cuda.amp.autocast on a host without CUDA warns and disables itself, so evaluation silently runs "
        "without the intended mixed precision"),
      C('input_features=batch["input_features"].to("cuda"),', "tensor_to_device", "replace", True,
        'input_features=batch["input_features"].to("npu"),', "hard-coded CUDA device"),
  ])

# ---------------------------------------------------------------------------------------------
# distil-whisper (accelerate)
# ---------------------------------------------------------------------------------------------
E("w15_distil_train", "distil_whisper/run_distillation.py", "device_branch_or_abstraction",
  "huggingface/distil-whisper training/run_distillation.py (accelerate, teacher-student KD)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "recommended; accelerate imports torch_npu when it detects the NPU"),
      C("if not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if not torch.npu.is_bf16_supported():",
        "returns False without CUDA, so --dtype bfloat16 raises ValueError on an NPU host"),
      C('use_fused_adamw = "fused" in inspect.signature(torch.optim.AdamW).parameters and torch.cuda.is_available()',
        "fused_optimizer", "replace", False,
        'use_fused_adamw = "fused" in inspect.signature(torch.optim.AdamW).parameters and (torch.cuda.is_available() or torch.npu.is_available())',
        "fused AdamW silently disabled on NPU; _fused_adamw_ has an NPU kernel in the op-plugin lists (perf only)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host"),
  ])

E("w16_distil_sh", "distil_whisper/train_distil_large_v3.sh", "explicit_replacement",
  "huggingface/distil-whisper training README launch command for distil-large-v3",
  [
      C("# Single node, 8x H100 80GB.", "env_var", "npu_only_addition", True, CANN_ENV,
        "CANN environment for torch_npu"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored by the NPU runtime; the device restriction is silently lost (e.g. on a 16-die A3 node)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "single node: NIC choice only matters across nodes"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "watchdog counterpart; default already on"),
      C('--attn_implementation "flash_attention_2"', "attention_kernel", "replace", True,
        '  --attn_implementation "sdpa" \\',
        "flash-attn cannot be installed on NPU, so transformers refuses flash_attention_2; SDPA dispatches to the "
        "NPU fused attention"),
  ])

E("w17_bench_latency", "distil_whisper/benchmark_latency.py", "explicit_replacement",
  "distil-whisper / HF speed-benchmark scripts (CUDA-event timing, peak memory, long-form RTF)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; uses torch.npu.Event/synchronize"),
      C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded without CUDA"),
      C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.end = torch.npu.Event(enable_timing=True)", "as above"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises"),
      C("return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)",
        "attention_kernel", "replace", False, "return nullcontext()",
        "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend; probably a silent no-op there (unconfirmed); "
        "NPU SDPA chooses its fused kernel itself"),
      C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises"),
      C("peak_mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
        "peak_mem = torch.npu.max_memory_allocated() / 2**30",
        "returns 0 without CUDA: the benchmark's peak-memory column would be silently wrong"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "hard-coded CUDA device"),
      C('"gpu": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
        '"gpu": torch.npu.get_device_name(0),', "raises without CUDA"),
  ])

# ---------------------------------------------------------------------------------------------
# insanely-fast-whisper / HF pipeline
# ---------------------------------------------------------------------------------------------
E("w18_ifw_cli", "insanely_fast_whisper/cli.py", "device_branch_or_abstraction",
  "Vaibhavs10/insanely-fast-whisper src/insanely_fast_whisper/cli.py (+ utils/diarization_pipeline.py folded in)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point; 'npu:N' device strings need the backend registered"),
      C('torch.device("mps" if args.device_id == "mps" else f"cuda:{args.device_id}")', "device_type", "add_branch",
        True, 'torch.device("mps" if args.device_id == "mps" else f"npu:{args.device_id}")',
        "pyannote diarization pipeline is sent to a CUDA device"),
      C('device="mps" if args.device_id == "mps" else f"cuda:{args.device_id}",', "device_type", "add_branch", True,
        'device="mps" if args.device_id == "mps" else f"npu:{args.device_id}",',
        "ASR pipeline device"),
      C('model_kwargs={"attn_implementation": "flash_attention_2"} if args.flash else', "attention_kernel", "replace",
        False, 'model_kwargs={"attn_implementation": "sdpa"},',
        "default --flash False already picks SDPA; only --flash True breaks (flash-attn not installable on NPU)"),
  ])

E("w19_hf_pipeline", "examples/longform_pipeline.py", "device_branch_or_abstraction",
  "openai/whisper-large-v3 model-card recipe (transformers pipeline, chunked long-form, torch.compile static cache)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "npu:0" if torch.npu.is_available() else ("cuda:0" if torch.cuda.is_available() else "cpu")',
        "silently runs on CPU on an NPU host"),
      C("torch_dtype = torch.float16 if torch.cuda.is_available() else torch.float32", "device_type", "add_branch",
        False,
        "torch_dtype = torch.float16 if (torch.cuda.is_available() or torch.npu.is_available()) else torch.float32",
        "fp32 on the NPU: correct but slower"),
      C('model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)', "compile_mode",
        "replace", False, 'model.forward = torch.compile(model.forward, backend="npugraphs", fullgraph=True)',
        "reduce-overhead means CUDA graphs; Ascend documents backend='npugraphs' as the counterpart; whether the "
        "default inductor path works here is unconfirmed"),
  ])

# ---------------------------------------------------------------------------------------------
# Qwen-Audio
# ---------------------------------------------------------------------------------------------
E("w20_qwen_infer", "qwen_audio/chat_demo.py", "explicit_replacement",
  "QwenLM/Qwen-Audio README quickstart (Qwen-Audio-Chat remote code) + Qwen2-Audio-7B-Instruct HF example",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C('device_map="cuda", trust_remote_code=True', "device_type", "replace", True,
        'model = AutoModelForCausalLM.from_pretrained(args.model, device_map="npu", trust_remote_code=True, bf16=args.bf16).eval()',
        "device_map='cuda' cannot be placed without CUDA"),
      C('model_kwargs["attn_implementation"] = "flash_attention_2"', "attention_kernel", "replace", False,
        'model_kwargs["attn_implementation"] = "sdpa"',
        "only with --flash-attn; flash-attn is not installable on NPU, SDPA uses the NPU fused kernel"),
      C('inputs.input_ids = inputs.input_ids.to("cuda")', "tensor_to_device", "replace", True,
        'inputs.input_ids = inputs.input_ids.to("npu")', "hard-coded CUDA device"),
      C('inputs = inputs.to("cuda")', "tensor_to_device", "replace", True, 'inputs = inputs.to("npu")',
        "hard-coded CUDA device"),
      C('print(f"max allocated: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")', "torch_cuda_api", "replace",
        False, 'print(f"max allocated: {torch.npu.max_memory_allocated() / 1e9:.2f} GB")', "prints 0; log only"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "the demo exits with 'needs a CUDA GPU' on an NPU host"),
  ])

E("w21_qwen_audio_enc", "qwen_audio/audio.py", "kernel_rewrite",
  "QwenLM/Qwen-Audio audio.py (Whisper encoder + avg-pool) with a FlashAttention-2 varlen path as in Qwen2.5-Omni's audio tower",
  [
      C("    from flash_attn import flash_attn_varlen_func", "attention_kernel", "replace", False,
        "    from torch_npu import npu_fusion_attention as flash_attn_varlen_func",
        "guarded import: without flash-attn the encoder silently uses the padded eager attention (correct, slower)"),
      C("if cu_seqlens is not None and self.use_flash_attn and x.is_cuda:", "device_type", "add_branch", False,
        'if cu_seqlens is not None and self.use_flash_attn and x.device.type in ("cuda", "npu"):',
        "is_cuda gate keeps NPU tensors on the eager path"),
      C("out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen",
        "attention_kernel", "replace", False,
        'out = flash_attn_varlen_func(q, k, v, self.n_head, "TND", scale=head_dim ** -0.5, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
        "varlen FA2 maps to npu_fusion_attention with TND layout and cumulative actual_seq lengths"),
      C("use_varlen = audio_lengths is not None and self.blocks[0].attn.use_flash_attn and x.is_cuda",
        "device_type", "add_branch", False,
        'use_varlen = audio_lengths is not None and self.blocks[0].attn.use_flash_attn and x.device.type in ("cuda", "npu")',
        "same is_cuda gate for packing"),
  ])

E("w22_qwen_llm", "qwen_audio/modeling_qwen.py", "kernel_rewrite",
  "QwenLM Qwen-7B / Qwen-Audio-Chat remote code modeling_qwen.py (flash-attn rotary/rms_norm/varlen, precision autoselect)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "needed only by the optional fused-op branches below (the user script already imported torch_npu)"),
      C("SUPPORT_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "SUPPORT_CUDA = torch.cuda.is_available() or torch.npu.is_available()",
        "with no precision flag the model autoselects fp32 on NPU (memory/speed, not correctness)"),
      C("SUPPORT_BF16 = SUPPORT_CUDA and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", False,
        "SUPPORT_BF16 = SUPPORT_CUDA and (torch.npu.is_bf16_supported() if torch.npu.is_available() else torch.cuda.is_bf16_supported())",
        "bf16 autoselect"),
      C("SUPPORT_FP16 = SUPPORT_CUDA and torch.cuda.get_device_capability(0)[0] >= 7", "device_capability_check",
        "replace", False,
        "SUPPORT_FP16 = SUPPORT_CUDA and (torch.npu.is_available() or torch.cuda.get_device_capability(0)[0] >= 7)",
        "must change together with SUPPORT_CUDA: get_device_capability() returns None on NPU, so [0] would raise"),
      C("from .cpp_kernels import cache_autogptq_cuda_256", "custom_cuda_extension", "replace", False,
        "cache_autogptq_cuda_256 = None  # nvcc-built KV-cache kernels have no Ascend build",
        "only with use_cache_quantization+use_cache_kernel (off by default); on NPU the import raises TypeError "
        "(CUDA_HOME is None), which `except ImportError` does not catch"),
      C("and query.is_cuda", "attention_kernel", "add_branch", False,
        "elif query.device.type == \"npu\" and not self.is_fp32: attn_output = torch_npu.npu_fusion_attention(query, key, value, self.num_heads, \"BSND\", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query.device), 1), scale=self.head_dim ** -0.5, sparse_mode=3)[0]",
        "flash_attn import fails on NPU, so attention silently runs the eager O(S^2) path"),
      C("if apply_rotary_emb_func is not None and t.is_cuda:", "npu_fused_op", "add_branch", False,
        'if t.device.type == "npu": return torch_npu.npu_rotary_mul(t_float, cos, sin).type_as(t)',
        "flash_attn rotary unavailable; eager rotate_half path is correct but slower"),
      C("if rms_norm is not None and x.is_cuda:", "npu_fused_op", "add_branch", False,
        'if x.device.type == "npu": return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]',
        "flash_attn rms_norm unavailable; eager fp32 RMSNorm is correct but slower"),
  ])

E("w23_qwen_cpp", "qwen_audio/cpp_kernels.py", "kernel_rewrite",
  "QwenLM Qwen-7B remote code cpp_kernels.py (JIT nvcc build of cache_autogptq_cuda_256)",
  [
      C("_, bare_metal_major, bare_metal_minor = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)",
        "custom_cuda_extension", "removal", True, None,
        "CUDA_HOME is None and there is no nvcc on an Ascend host, so importing the module raises; drop the nvcc "
        "probing together with the cc_flag block below it"),
      C('cache_autogptq_cuda_256 = _cpp_extention_load_helper("cache_autogptq_cuda_256"', "custom_cuda_extension",
        "replace", True, "cache_autogptq_cuda_256 = None  # .cu kernel not built on Ascend; _attn uses the torch dequant path",
        "cpp_extension.load of a .cu source needs nvcc; an Ascend C rewrite would be bound via NpuExtension/OpPlugin"),
  ])

# ---------------------------------------------------------------------------------------------
# SALMONN
# ---------------------------------------------------------------------------------------------
E("w24_salmonn_model", "salmonn/models/salmonn.py", "explicit_replacement",
  "bytedance/SALMONN models/salmonn.py (Whisper + BEATs + window-level Q-Former + Vicuna LoRA)",
  [
      C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True,
        "return torch.autocast(device_type=self.device.type, dtype=dtype)",
        "CUDA autocast disables itself on an NPU host: the fp32 Q-Former output then meets the fp16 LLaMA weights "
        "(dtype mismatch)"),
      C("=load_in_8bit=True,", "unsupported_op_workaround", "removal", False, None,
        "only with low_resource: true (default false); LLM.int8 has no NPU path"),
      C("stop_words_ids = [torch.tensor([2]).cuda()]", "tensor_to_device", "replace", True,
        "stop_words_ids = [torch.tensor([2]).to(speech_embeds.device)]", "hard-coded .cuda()"),
  ])

E("w25_salmonn_utils", "salmonn/utils.py", "explicit_replacement",
  "bytedance/SALMONN utils.py + dist_utils.py (LAVIS-style init_distributed_mode, move_to_cuda)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed() above already seeds the NPU generator"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "device_count() is 0 on an NPU host -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
        "NCCL backend unavailable in the NPU build"),
      C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.npu()",
        "every batch goes through move_to_cuda"),
  ])

E("w26_salmonn_train", "salmonn/train.py", "explicit_replacement",
  "bytedance/SALMONN train.py + runner.py (folded into one file)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry point"),
      C('self.cuda_enabled = (self.device.type == "cuda")', "device_type", "replace", True,
        'self.cuda_enabled = (self.device.type in ("cuda", "npu"))',
        "with run.device npu the flag is False, batches stay on the CPU while the model is on the NPU"),
      C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler()",
        "CUDA GradScaler disables itself without CUDA: fp16 training loses loss scaling"),
      C("=with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
        "with torch.autocast(device_type=\"npu\", enabled=self.use_amp):",
        "CUDA autocast silently disabled on an NPU host"),
      C('logging.info(f"peak GPU mem: {torch.cuda.max_memory_allocated() / 1e9:.1f} GB")', "torch_cuda_api",
        "replace", False, 'logging.info(f"peak NPU mem: {torch.npu.max_memory_allocated() / 1e9:.1f} GB")',
        "logs 0; log only"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=torch.float16):", "amp", "replace", True,
        "with torch.autocast(device_type=\"npu\", enabled=self.use_amp, dtype=torch.float16):",
        "validation autocast, same issue"),
      C('"loss": torch.tensor(0).float().cuda(),', "tensor_to_device", "replace", True,
        '"loss": torch.tensor(0).float().npu(),', "hard-coded .cuda()"),
      C('"n_sample": torch.tensor(0).float().cuda(),', "tensor_to_device", "replace", True,
        '"n_sample": torch.tensor(0).float().npu(),', "hard-coded .cuda()"),
      C('"correct": torch.tensor(0).float().cuda(),', "tensor_to_device", "replace", True,
        '"correct": torch.tensor(0).float().npu(),', "hard-coded .cuda()"),
      C('"n_token": torch.tensor(0).float().cuda(),', "tensor_to_device", "replace", True,
        '"n_token": torch.tensor(0).float().npu(),', "hard-coded .cuda()"),
  ])

# ---------------------------------------------------------------------------------------------
# NeMo ASR
# ---------------------------------------------------------------------------------------------
E("w27_nemo_transcribe", "nemo_asr/transcribe_speech.py", "device_branch_or_abstraction",
  "NVIDIA/NeMo examples/asr/transcribe_speech.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("        if torch.cuda.is_available():", "device_type", "add_branch", True,
        "        if torch.npu.is_available(): device, accelerator, map_location = 1, 'cpu', torch.device('npu:0')  # then `elif torch.cuda.is_available():`",
        "otherwise inference silently falls to the CPU branch on an NPU host"),
      C("=device = [cfg.cuda]", "device_type", "replace", True, "device = 1",
        "explicit cuda=<id> path: goes with the accelerator change below"),
      C("accelerator = 'gpu'  # explicit", "device_type", "replace", True,
        "accelerator = 'cpu'  # no NPU accelerator in stock Lightning; the model is moved via map_location",
        "Lightning's 'gpu' accelerator raises when no CUDA device is present"),
      C("map_location = torch.device(f'cuda:{cfg.cuda}')", "device_type", "replace", True,
        "map_location = torch.device(f'npu:{cfg.cuda}')", "model would be restored onto a CUDA device"),
      C('can_use_bfloat16 = (not cfg.amp) and map_location.type == "cuda" and torch.cuda.is_bf16_supported()',
        "device_capability_check", "replace", False,
        'can_use_bfloat16 = (not cfg.amp) and map_location.type == "npu" and torch.npu.is_bf16_supported()',
        "falls back to fp32 compute on the NPU: correct but slower"),
      C("if cfg.amp and torch.cuda.is_available() and hasattr(torch.cuda, 'amp')", "amp", "replace", True,
        "if cfg.amp and torch.npu.is_available():",
        "amp=true is silently ignored on an NPU host (no-op autocast is chosen)"),
      C("autocast = torch.cuda.amp.autocast", "amp", "replace", True, "autocast = torch.npu.amp.autocast",
        "goes with the guard above"),
      C('device_sync = torch.cuda.synchronize if map_location.type == "cuda" else (lambda: None)', "torch_cuda_api",
        "replace", False, 'device_sync = torch.npu.synchronize if map_location.type == "npu" else (lambda: None)',
        "RTFx timing only; transcribe() returns host-side text so the timing is nearly right anyway"),
  ])

E("w28_nemo_yaml", "nemo_asr/conf/canary_finetune.yaml", "explicit_replacement",
  "NVIDIA/NeMo examples/asr/conf/speech_multitask/fast-conformer_aed.yaml (Canary fine-tuning config)",
  [
      C("=accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning's gpu accelerator needs CUDA; an NPU accelerator must be registered with Lightning (unconfirmed "
        "which plugin)"),
      C("=process_group_backend: nccl", "dist_backend", "replace", True, "process_group_backend: hccl",
        "NCCL process group unavailable on Ascend"),
  ])

E("w29_nemo_parakeet", "nemo_asr/parakeet_batch_infer.py", "explicit_replacement",
  "Parakeet-TDT model-card / NeMo batch inference user script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("decoding_cfg.greedy.use_cuda_graph_decoder = use_cuda_graphs", "compile_mode", "replace", False,
        "decoding_cfg.greedy.use_cuda_graph_decoder = False",
        "CUDA-graph TDT decoding; NeMo presumably falls back to the loop decoder off-CUDA (unconfirmed)"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "hard-coded .cuda()"),
      C("torch.cuda.get_device_name()", "torch_cuda_api", "replace", True,
        'log.info("loaded %s on %s (%s)", args.model, next(model.parameters()).device, torch.npu.get_device_name())',
        "raises without CUDA"),
      C('torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16)', "amp", "replace", True,
        'with torch.inference_mode(), torch.autocast("npu", dtype=torch.bfloat16, enabled=args.bf16):',
        "autocast('cuda') disables itself without CUDA: bf16 inference silently becomes fp32"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.max_memory_allocated() / 2**30)", "torch_cuda_api", "replace", False,
        'log.info("done in %.1fs, RTFx=%.1f, peak mem %.2f GiB", elapsed, rtfx, torch.npu.max_memory_allocated() / 2**30)',
        "logs 0; log only"),
  ])

# ---------------------------------------------------------------------------------------------
# packaging / launchers
# ---------------------------------------------------------------------------------------------
E("w30_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a whisper/whisperX/distil-whisper/Qwen-Audio training+inference repo",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu needs the CPU build of torch (x86: whl/cpu index; aarch64: plain PyPI)"),
      C("=torch==2.1.2+cu121", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA build; and torch_npu exists for 2.1.0, not 2.1.2"),
      C("=torchaudio==2.1.2+cu121", "torch_cuda_api", "replace", True, "torchaudio==2.1.0",
        "must match torch"),
      C("=numpy<2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu pin, right after the torch block"),
      C("=nvidia-cublas-cu12", "torch_cuda_api", "removal", False, None,
        "CUDA runtime wheel for CTranslate2 GPU; CT2 runs on CPU on an Ascend host"),
      C("=nvidia-cudnn-cu12==9.*", "torch_cuda_api", "removal", False, None, "as above"),
      C("=bitsandbytes==0.43.1", "unsupported_op_workaround", "removal", False, None,
        "installs, but LLM.int8 / 8-bit optimizers have no NPU path"),
      C("=triton==2.1.0", "triton_kernel_tuning", "removal", False, None,
        "only used by whisper's is_cuda-gated timing kernels; NPU Triton is the separate triton-ascend package"),
      C("flash-attn==2.5.8", "attention_kernel", "removal", True, None,
        "flash-attn cannot be installed on NPU, so `pip install -r` fails"),
      C("=xformers==0.0.23.post1", "attention_kernel", "removal", False, None,
        "no NPU backend; nothing in this repo imports it"),
      C("=nvidia-ml-py", "torch_cuda_api", "removal", False, None, "NVML bindings; no NPU counterpart"),
      C("=gpustat", "torch_cuda_api", "removal", False, None, "NVML-based monitor"),
  ])

E("w31_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "WhisperX inference-server Dockerfile (nvidia/cuda base, CTranslate2 cuDNN 9 workaround)",
  [
      C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "needs a CANN base image (tag is illustrative); the CUDA image has no Ascend toolkit"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all \\",
        "Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES; devices can also be given at docker run"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
      C("pip install torch==2.1.2 torchaudio==2.1.2 --index-url https://download.pytorch.org/whl/cu121",
        "torch_cuda_api", "replace", True,
        "    pip install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post10",
        "CUDA wheel index; CPU torch 2.1.0 + torch_npu instead"),
      C('RUN pip install nvidia-cublas-cu12 "nvidia-cudnn-cu12==9.*"', "torch_cuda_api", "removal", False, None,
        "CT2 runs on CPU in the Ascend image"),
      C("ENV LD_LIBRARY_PATH=/usr/local/lib/python3.10/dist-packages/nvidia", "env_var", "replace", False,
        "ENV LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/lib64:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
        "CANN library path; whether the CANN base image already sets it is unconfirmed"),
      C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "torch_cuda_api", "replace", True,
        "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null && curl -fs http://localhost:8000/health || exit 1",
        "nvidia-smi is absent, so the container is always reported unhealthy"),
      C("ENV ASR_DEVICE=cuda", "device_type", "replace", True, "ENV ASR_DEVICE=npu \\",
        "passed to whisperx.load_model()/align/diarize by the server"),
  ])

E("w32_batch_sh", "scripts/run_whisperx_batch.sh", "explicit_replacement",
  "shell launcher running one whisperx CLI process per GPU",
  [
      C("=set -uo pipefail", "env_var", "npu_only_addition", True, CANN_ENV, "CANN environment for torch_npu"),
      C("NUM_GPUS=${3:-$(nvidia-smi -L | wc -l)}", "torch_cuda_api", "replace", True,
        'NUM_GPUS=${3:-$(npu-smi info -l | grep -c "NPU ID")}',
        "nvidia-smi is missing, NUM_GPUS becomes 0 and the script silently does nothing"),
      C("CUDA_VISIBLE_DEVICES=$gpu whisperx", "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES=$gpu whisperx "$f" \\',
        "ignored by the NPU runtime: every shard would land on device 0"),
      C("=--device cuda \\", "device_type", "replace", True, "--device npu \\", "CUDA device requested"),
      C("nvidia-smi --query-gpu=index,utilization.gpu,memory.used", "torch_cuda_api", "replace", False,
        "    npu-smi info", "monitoring loop only (no `set -e`)"),
  ])
