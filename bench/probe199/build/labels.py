# Labels for probe199: multilingual speech / translation toolkits (Seamless, NLLB, MMS, whisperX, SpeechT5, BigVGAN).
# One C(...) per line a careful porter edits for Ascend NPU (torch_npu). See README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401"
PIN_21 = "fairseq2 0.2 / this project pins torch 2.1.x: torch_npu must be imported explicitly (device autoload only from torch_npu 2.5.1) before 'npu' devices exist"
UNPINNED = "no torch pin in this project; explicit import only needed for torch_npu < 2.5.1 (autoload), still recommended"

# ---------------------------------------------------------------- Seamless Communication / fairseq2

E("m4t_predict_cli", "src/seamless_communication/cli/m4t/predict/predict.py", "device_branch_or_abstraction",
  "seamless_communication m4t_predict CLI (Translator on cuda:0 fp16)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, PIN_21),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: M4T silently runs on CPU in fp32"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "Translator/fairseq2 device; dtype fp16 stays (fp16 is native on NPU)"),
  ])

E("m4t_translator", "src/seamless_communication/inference/translator.py", "device_branch_or_abstraction",
  "seamless_communication Translator (device passed in; fairseq2 AudioDecoder/WaveformToFbankConverter)",
  [])

E("m4t_finetune_trainer", "src/seamless_communication/cli/m4t/finetune/trainer.py", "explicit_replacement",
  "seamless_communication m4t finetune trainer (GradScaler, autocast, DDP, fused AdamW)",
  [
      C('device: Device = torch.device("cuda")', "device_type", "replace", False, 'device: Device = torch.device("npu")',
        "dataclass default; finetune.py always passes device=, so only other callers would hit it"),
      C("self.grad_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self.grad_scaler = torch.npu.amp.GradScaler()  # type: ignore",
        "torch.cuda.amp.GradScaler disables itself without CUDA -> fp16 training with no loss scaling (grad underflow)"),
      C('fused=(self.params.device.type == "cuda"),', "fused_optimizer", "replace", False,
        'fused=(self.params.device.type in ("cuda", "npu")),',
        "False for npu -> unfused AdamW, correct but slower; _fused_adamw_ has an NPU kernel (ops list), torch 2.1 accepting fused=True on privateuse1 is unconfirmed (alt: torch_npu.optim.NpuFusedAdamW)"),
      C("peak_mem={torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        'f"peak_mem={torch.npu.max_memory_allocated() / 2**30:.1f}GiB"',
        "log only; without CUDA initialised it returns 0 instead of failing"),
  ])

E("m4t_finetune_main", "src/seamless_communication/cli/m4t/finetune/finetune.py", "explicit_replacement",
  "seamless_communication m4t_finetune entry point (--device cuda)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, PIN_21),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above should already seed the NPU generator (unconfirmed in the knowledge base)"),
      C('default="cuda",', "device_type", "replace", True, 'default="npu",',
        "--device default: torch.device('cuda') fails at model.to() on an NPU host"),
  ])

E("m4t_dist_utils", "src/seamless_communication/cli/m4t/finetune/dist_utils.py", "explicit_replacement",
  "seamless_communication finetune dist_utils (init_process_group nccl, cuda.set_device)",
  [
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "NCCL_* ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster doc)"),
      C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL backend does not exist on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA; every rank must bind its own NPU"),
  ])

E("expressivity_predict", "src/seamless_communication/cli/expressivity/predict/predict.py", "device_branch_or_abstraction",
  "seamless_communication expressivity_predict (PRETSSEL, fairseq2 Device helper)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, PIN_21),
      C('device_str = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device_str = "npu:0" if torch.npu.is_available() else "cpu"',
        "silently picks CPU on an NPU host"),
      C('dtype = torch.float16 if device.type == "cuda" else torch.float32', "device_type", "replace", False,
        'dtype = torch.float16 if device.type in ("cuda", "npu") else torch.float32',
        "npu would get fp32: works, but slower and twice the memory"),
  ])

E("streaming_transcoder", "seamless_server/src/simuleval_transcoder.py", "device_branch_or_abstraction",
  "Seamless streaming demo SimulevalTranscoder (agent device overrides)",
  [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "on an NPU host the override silently forces every streaming agent onto CPU fp32"),
  ])

E("streaming_app", "seamless_server/app_pubsub.py", "explicit_replacement",
  "Seamless streaming demo socket.io server (health, memory admission)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "ASGI entry module of a torch 2.1 / fairseq2 0.2 server"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "/health reports no accelerator on an NPU server"),
      C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
        "free, total = torch.npu.mem_get_info()", "raises without CUDA once the guard above is ported"),
      C('"accelerator": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
        '"accelerator": torch.npu.get_device_name(0),', "raises without CUDA"),
      C('"count": torch.cuda.device_count(),', "torch_cuda_api", "replace", True,
        '"count": torch.npu.device_count(),', "returns 0 on an NPU host"),
      C('"mem_allocated_gb": round(torch.cuda.memory_allocated()', "torch_cuda_api", "replace", False,
        '"mem_allocated_gb": round(torch.npu.memory_allocated() / 2**30, 2),',
        "diagnostic; returns 0 without error"),
      C("if torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", True, "if torch.npu.device_count() == 0:",
        "0 on an NPU host -> memory admission check always passes, new streams can OOM the NPU"),
      C("free_bytes, _ = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
        "free_bytes, _ = torch.npu.mem_get_info()", "raises without CUDA once the guard is ported"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU caching allocator keeps the blocks"),
  ])

E("streaming_agent_yaml", "seamless_server/models/SeamlessStreaming/vad_s2st_sc_main.yaml", "explicit_replacement",
  "SeamlessStreaming SimulEval agent config (device: cuda:0, dtype: fp16)",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "agents load their models on torch.device(args.device)"),
  ])

E("streaming_dockerfile", "seamless_server/Dockerfile", "explicit_replacement",
  "Seamless streaming demo Dockerfile (nvidia/cuda base, fairseq2 cu118 wheels)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04 AS backend", "custom_cuda_extension", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS backend",
        "CUDA base image -> CANN base image; torch_npu needs libascendcl/libhccl from the toolkit (its ENV lines replace sourcing set_env.sh)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime switch; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime only"),
      C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", "replace", False,
        "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
        "dead CUDA paths; harmless, the CANN image already exports its paths"),
      C("pip install fairseq2 --pre --extra-index-url", "custom_cuda_extension", "replace", True,
        "pip install fairseq2 --pre --extra-index-url https://fair.pkg.atmeta.com/fairseq2/whl/nightly/pt2.1.0/cpu && \\",
        "fairseq2n cu118 variant is built against CUDA torch 2.1.1; needs the CPU variant for torch 2.1.0 (the only 2.1 torch with a torch_npu); availability of that nightly variant unconfirmed"),
  ])

E("streaming_requirements", "seamless_server/requirements.txt", "explicit_replacement",
  "Seamless streaming demo requirements (torch 2.1.1+cu118, fairseq2n cu118 index)",
  [
      C("whl/nightly/pt2.1.1/cu118", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://fair.pkg.atmeta.com/fairseq2/whl/nightly/pt2.1.0/cpu",
        "fairseq2n must match a CPU torch 2.1.0 build (variant availability unconfirmed)"),
      C("download.pytorch.org/whl/cu118", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on CPU torch (x86: cpu index; aarch64: plain PyPI)"),
      C("torch==2.1.1+cu118", "custom_cuda_extension", "replace", True, "torch==2.1.0",
        "CUDA build, and 2.1.1 has no torch_npu (wheel version must equal torch version: 2.1.0.postN)"),
      C("torchaudio==2.1.1+cu118", "custom_cuda_extension", "replace", True, "torchaudio==2.1.0",
        "+cu118 build is not on the CPU index; must follow the torch pin"),
      C("numpy<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel for torch 2.1.0"),
  ])

E("m4t_finetune_launch_sh", "scripts/finetune_m4t_s2t.sh", "explicit_replacement",
  "SeamlessM4T finetune torchrun launcher (CUDA_VISIBLE_DEVICES, NCCL_*, nvidia-smi)",
  [
      C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "CANN environment must be sourced before torchrun; set_env.sh reads unset variables, so relax -u around it"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "ignored by the Ascend runtime: a device subset would silently not be honoured"),
      C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
        'NUM_GPUS=$(echo "${ASCEND_RT_VISIBLE_DEVICES}" | tr \',\' \'\\n\' | grep -c .)',
        "follows the renamed visibility variable"),
      C("export NCCL_DEBUG=", "env_var", "removal", False, None, "NCCL only; HCCL logs via ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL only"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "single node: harmless; HCCL's NIC choice only matters multi-node"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL watchdog equivalent (default on)"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version", "torch_cuda_api", "replace", True,
        'npu-smi info | tee "${OUT_DIR}/npus.txt"',
        "no nvidia-smi on an NPU host; with set -e and pipefail the failing pipeline aborts the launch"),
      C("--device cuda", "device_type", "replace", True, "--device npu \\", "passed to m4t_finetune --device"),
  ])

E("m4t_latency_bench", "scripts/benchmark_m4t_latency.py", "explicit_replacement",
  "SeamlessM4T latency benchmark (CUDA events, peak memory stats)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, PIN_21),
      C('p.add_argument("--device", default="cuda:0"', "device_type", "replace", True,
        'p.add_argument("--device", default="npu:0", help="torch device")', "default device"),
      C('if device.type == "cuda":', "device_type", "add_branch", False,
        'elif device.type == "npu": info["npu"] = torch.npu.get_device_name(device)',
        "environment info only; NPU device properties have no major/minor, so the sm line must stay CUDA-only"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events fail without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events fail without CUDA"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "torch.cuda memory APIs reject an npu device"),
      C("res.peak_mem_gb = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        "res.peak_mem_gb = torch.npu.max_memory_allocated(device) / 2**30",
        "with an explicit npu device this raises instead of returning 0"),
  ])

# ---------------------------------------------------------------- NLLB

E("nllb_hf_translate", "nllb/translate_hf.py", "device_branch_or_abstraction",
  "NLLB-200 batch translation with transformers (generate / pipeline)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, UNPINNED),
      C("if not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
        "if not torch.npu.is_bf16_supported():",
        "queries the CUDA device: raises or reports False without CUDA, so --bf16 silently becomes fp16"),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
        'with torch.autocast("npu", enabled=args.fp16):',
        "weights are already fp16 under --fp16; CUDA autocast just disables itself with a warning"),
      C("device=0 if torch.cuda.is_available() else -1,", "device_type", "replace", True,
        'device="npu:0" if torch.npu.is_available() else -1,', "pipeline silently runs on CPU"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently CPU; the follow-up check would also drop --fp16"),
  ])

E("nllb_ct2_service", "nllb_serve/translator_ct2.py", "explicit_replacement",
  "NLLB-200 FastAPI service on CTranslate2 (device=cuda, compute_type=float16)",
  [
      C('DEVICE = os.environ.get("CT2_DEVICE", "cuda")', "device_type", "replace", True,
        'DEVICE = os.environ.get("CT2_DEVICE", "cpu")',
        "CTranslate2 has cpu/cuda backends only: the CUDA default fails at Translator(); on an NPU host NLLB-ct2 runs on the host CPU"),
      C('COMPUTE_TYPE = os.environ.get("CT2_COMPUTE_TYPE", "float16")', "amp", "replace", False,
        'COMPUTE_TYPE = os.environ.get("CT2_COMPUTE_TYPE", "int8")',
        "unconfirmed: CTranslate2 reportedly rejects float16 on CPU; int8 is the usual CPU choice"),
  ])

E("nllb_flores_eval_sh", "nllb/scripts/eval_flores200.sh", "explicit_replacement",
  "NLLB FLORES-200 evaluation driver (one direction per GPU via CUDA_VISIBLE_DEVICES)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for the python jobs"),
      C('echo "driver: $(nvidia-smi', "torch_cuda_api", "replace", False,
        'echo "driver: $(grep -i "^version" /usr/local/Ascend/driver/version.info | head -n1)"',
        "informational; a failing command substitution inside echo does not trip set -e"),
      C("CUDA_VISIBLE_DEVICES=$gpu python", "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES=$gpu python "$SCRIPT_DIR/../translate_hf.py" \\',
        "ignored on NPU: every job would land on npu:0 while the other NPUs idle"),
  ])

# ---------------------------------------------------------------- MMS

E("mms_asr_infer", "examples/mms/asr/infer/mms_infer_hf.py", "explicit_replacement",
  "fairseq MMS-1B-all ASR with transformers Wav2Vec2ForCTC + adapters",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "MMS environment pins pytorch 2.1.0"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "raises RuntimeError on every NPU host"),
      C('self.model.to("cuda")', "tensor_to_device", "replace", True, 'self.model.to("npu")', "hard-coded CUDA device"),
      C('input_values = inputs.input_values.to("cuda", dtype=self.dtype)', "tensor_to_device", "replace", True,
        'input_values = inputs.input_values.to("npu", dtype=self.dtype)', "hard-coded CUDA device"),
      C("attention_mask = attention_mask.cuda()", "tensor_to_device", "replace", True,
        "attention_mask = attention_mask.npu()", "hard-coded CUDA device"),
  ])

E("mms_lid_infer", "examples/mms/lid/infer_lid.py", "device_branch_or_abstraction",
  "fairseq MMS spoken-language ID with Wav2Vec2ForSequenceClassification",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "MMS environment pins pytorch 2.1.0"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently CPU on an NPU host"),
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
        'pin_memory=device.type != "cpu", pin_memory_device="npu" if device.type == "npu" else "",',
        "False on NPU -> pageable host-to-device copies; correctness unaffected"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", False,
        "with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.fp16):",
        "CUDA autocast disables itself when CUDA is absent -> --fp16 silently runs fp32 (correct, slower)"),
  ])

E("mms_tts_vits", "examples/mms/tts/infer_vits.py", "explicit_replacement",
  "MMS-TTS (VITS) synthesis with transformers VitsModel + uroman",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "MMS environment pins pytorch 2.1.0"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)",
        "silent no-op without CUDA; transformers.set_seed is expected to seed the NPU too (unconfirmed)"),
      C('p.add_argument("--device", default="cuda:0")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu:0")', "default device fails on an NPU host"),
  ])

E("mms_environment_yml", "examples/mms/environment.yml", "explicit_replacement",
  "conda environment for the MMS examples (pytorch-cuda 11.8, nvidia channel)",
  [
      C("=- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA runtime channel, unused without pytorch-cuda"),
      C("- pytorch-cuda=11.8", "custom_cuda_extension", "replace", True, "- cpuonly",
        "selects the CUDA build of pytorch 2.1.0; torch_npu runs on the CPU build"),
      C("- accelerate>=0.24", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
        "torch_npu pip pin matching pytorch 2.1.0"),
  ])

# ---------------------------------------------------------------- whisperX / whisper

E("whisperx_transcribe_cli", "whisperx/transcribe.py", "device_branch_or_abstraction",
  "whisperX CLI (faster-whisper ASR, wav2vec2 alignment, pyannote diarization)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "whisperX pins torch 2.1.x"),
      C('parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu" if torch.npu.is_available() else "cpu", help="device to use for PyTorch inference")',
        "alignment and diarization run on this device; silently CPU on an NPU host"),
      C('parser.add_argument("--compute_type", default="float16"', "amp", "replace", False,
        'parser.add_argument("--compute_type", default="int8", type=str, choices=["float16", "float32", "int8"], help="compute type for computation")',
        "ASR moves to CTranslate2 on CPU; float16 there is reportedly rejected (unconfirmed)"),
      C("compute_type=compute_type, language=args['language']", "device_type", "replace", True,
        "model = load_model(model_name, device=\"cpu\", device_index=0, download_root=model_dir, compute_type=compute_type, language=args['language'], asr_options=asr_options, vad_options={\"vad_onset\": vad_onset, \"vad_offset\": vad_offset}, task=task, threads=faster_whisper_threads)",
        "faster-whisper/CTranslate2 has no NPU backend ('npu' raises); split devices: ASR on CPU, align/diarize on NPU"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("torch.cuda.empty_cache()  # release the wav2vec2", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release the wav2vec2 weights before diarization",
        "silent no-op without CUDA; NPU cache kept before pyannote loads"),
  ])

E("whisperx_asr", "whisperx/asr.py", "device_branch_or_abstraction",
  "whisperX FasterWhisperPipeline / load_model (CTranslate2 WhisperModel, pyannote VAD)",
  [
      C('self.device = torch.device(f"cuda:{device}")', "device_type", "replace", False,
        'self.device = torch.device(f"npu:{device}")',
        "only reached for an int device >= 0; load_model never passes one"),
      C('compute_type="float16",', "amp", "replace", False, 'compute_type="int8",',
        "library default for API callers once ASR runs on the CPU (unconfirmed)"),
  ])

E("whisperx_alignment", "whisperx/alignment.py", "device_branch_or_abstraction",
  "whisperX wav2vec2 forced alignment (torchaudio / HF models, device passed in)",
  [])

E("whisperx_diarize", "whisperx/diarize.py", "explicit_replacement",
  "whisperX pyannote DiarizationPipeline plus a manual __main__ check",
  [
      C("=import time", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the __main__ harness bypasses the CLI that imports torch_npu (torch 2.1)"),
      C('device="cuda")', "device_type", "replace", True,
        'pipe = DiarizationPipeline(use_auth_token=os.environ.get("HF_TOKEN"), device="npu")',
        "pyannote pipeline moved to a CUDA device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("whisperx_requirements", "requirements.txt", "explicit_replacement",
  "whisperX requirements (torch cu121, nvidia cuBLAS/cuDNN wheels for CTranslate2, onnxruntime-gpu)",
  [
      C("download.pytorch.org/whl/cu121", "custom_cuda_extension", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "torch_npu runs on CPU torch"),
      C("torch==2.1.2+cu121", "custom_cuda_extension", "replace", True, "torch==2.1.0",
        "CUDA build; 2.1.2 has no torch_npu (must be 2.1.0 for torch-npu 2.1.0.postN)"),
      C("torchaudio==2.1.2+cu121", "custom_cuda_extension", "replace", True, "torchaudio==2.1.0",
        "+cu121 build not on the CPU index; follows the torch pin"),
      C("faster-whisper==1.0.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel for torch 2.1.0"),
      C("nvidia-cublas-cu12", "custom_cuda_extension", "removal", False, None,
        "only for CTranslate2's CUDA path, which is not used on an NPU host"),
      C("nvidia-cudnn-cu12", "custom_cuda_extension", "removal", False, None,
        "only for CTranslate2's CUDA path"),
      C("onnxruntime-gpu>=1.16", "custom_cuda_extension", "replace", False, "onnxruntime>=1.16",
        "GPU build is useless on NPU (pyannote 3.1 embeddings are pure PyTorch); aarch64 wheel availability unconfirmed"),
  ])

E("whisper_timing", "whisper/timing.py", "device_branch_or_abstraction",
  "openai-whisper word timing (Triton DTW / median filter behind x.is_cuda)",
  [])

# ---------------------------------------------------------------- SpeechT5 / TTS heads / vocoder

E("speecht5_tts_infer", "speecht5/tts_infer.py", "device_branch_or_abstraction",
  "SpeechT5 TTS inference with SpeechBrain x-vector speaker embeddings",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, UNPINNED),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if torch.npu.is_available(): return "npu"',
        "get_device() never returns npu: TTS and the speaker model silently run on CPU"),
      C('if device == "cuda":', "device_type", "add_branch", False,
        'elif device == "npu": torch.npu.synchronize()',
        "RTF timing only; the .cpu() copy per utterance already synchronises"),
  ])

E("speecht5_finetune", "speecht5/finetune_tts.py", "device_branch_or_abstraction",
  "SpeechT5 TTS fine-tuning with Seq2SeqTrainer (HF audio course recipe)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        UNPINNED + "; the speaker model is built before transformers imports torch_npu itself"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "x-vector extraction over the whole dataset silently runs on CPU"),
  ])

E("bigvgan_cuda_load", "vocoder/alias_free_activation/cuda/load.py", "kernel_rewrite",
  "BigVGAN-v2 JIT build of the fused anti-aliased activation CUDA kernel",
  [
      C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", "removal", False, None,
        "nvcc arch list; meaningless for an Ascend C build"),
      C("_get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension", "removal", False, None,
        "runs nvcc -V on CUDA_HOME (None on an NPU host); only reached with use_cuda_kernel=True, which the port turns off"),
      C("return cpp_extension.load(", "custom_cuda_extension", "replace", False,
        'return torch.ops.load_library(str(buildpath / f"{name}.so"))  # prebuilt via torch_npu.utils.cpp_extension.NpuExtension',
        "JIT cpp_extension.load is not supported on A2/A3; an Ascend C port must be built ahead of time (optional perf work)"),
      C('srcpath / "anti_alias_activation_cuda.cu",', "custom_cuda_extension", "replace", False,
        'srcpath / "anti_alias_activation_npu.cpp",  # Ascend C kernel',
        "CUDA kernel needs an Ascend C rewrite if the fused path is kept; the PyTorch Activation1d works meanwhile"),
  ])

E("bigvgan_model", "vocoder/bigvgan.py", "device_branch_or_abstraction",
  "BigVGAN-v2 generator (use_cuda_kernel switch, PyTorchModelHubMixin)",
  [
      C('if h.get("use_cuda_kernel", False):', "custom_cuda_extension", "replace", False,
        'if h.get("use_cuda_kernel", False) and torch.cuda.is_available():',
        "call site of the nvcc-built kernel; default False, guard so an inherited config flag falls back to the PyTorch path"),
  ])

E("tts_stream_server", "tts_server/server.py", "explicit_replacement",
  "streaming multilingual TTS server (MMS-VITS + BigVGAN, side CUDA stream, /health stats)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, UNPINNED),
      C('device=raw.get("device", "cuda:0"),', "device_type", "replace", False, 'device=raw.get("device", "npu:0"),',
        "fallback only; the shipped server.yaml sets device"),
      C("self.voc_stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", "replace", True,
        "self.voc_stream = torch.npu.Stream(device=self.device)", "CUDA stream on an npu device fails"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.device)",
        "raises without CUDA (warmup at startup)"),
      C("with torch.cuda.stream(self.voc_stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.voc_stream):", "stream context must be the NPU one"),
      C("torch.cuda.current_stream(self.device).wait_stream(self.voc_stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream(self.device).wait_stream(self.voc_stream)",
        "without the NPU wait the main stream can read unfinished vocoder output"),
      C('"allocated_gb": torch.cuda.memory_allocated(self.device)', "torch_cuda_api", "replace", True,
        '"allocated_gb": torch.npu.memory_allocated(self.device) / 2**30,',
        "/health: torch.cuda memory APIs reject an npu device"),
      C('"reserved_gb": torch.cuda.memory_reserved(self.device)', "torch_cuda_api", "replace", True,
        '"reserved_gb": torch.npu.memory_reserved(self.device) / 2**30,', "same as above"),
      C('"utilization": torch.cuda.utilization(self.device),', "torch_cuda_api", "replace", True,
        '"utilization": torch.npu.utilization(self.device),', "needs pynvml and a CUDA device; torch.npu.utilization exists"),
  ])

E("tts_server_yaml", "tts_server/configs/server.yaml", "explicit_replacement",
  "TTS server deployment config (cuda:0, BigVGAN CUDA kernel, torch.compile max-autotune)",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0", "engine device"),
      C("use_cuda_kernel: true", "custom_cuda_extension", "replace", True, "use_cuda_kernel: false",
        "JIT nvcc build of the anti-alias kernel fails on an NPU host, so the server never starts"),
      C("compile_mode: max-autotune", "compile_mode", "replace", False, "compile_mode: default",
        "max-autotune tunes CUDA Triton templates; NPU inductor behaviour for this mode unconfirmed, default is the safe choice"),
  ])
