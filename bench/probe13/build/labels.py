"""Labels for probe13 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"


# ---------------------------------------------------------------- k2 / icefall
K2 = "k2 ships CPU and CUDA builds only; its ops and RaggedTensor/Fsa cannot hold npu tensors (k2 is not covered by /work/shared/knowledge; from k2's own install docs)"
AUTOLOAD = "since torch_npu 2.5.1 the backend autoloads, so the import is recommended rather than mandatory (torch-npu-migration.md §1.1)"
AUTOLOAD_REQ = "ported lines in this file call torch_npu.* directly, so the explicit import is needed (torch-npu-migration.md §1.1, §5)"
AMP = "torch.cuda.amp autocast/GradScaler do not act on npu tensors: fp16 runs without autocast or loss scaling; torch_npu.npu.amp / torch.autocast('npu') are the NPU forms (torch_api_npu_support_2.7.1.tsv, torch-npu-migration.md §2.1)"
AVAIL = "torch.cuda.is_available() is False on an NPU host and pushes the run onto CPU (torch_api_npu_support_2.7.1.tsv: torch_npu.npu.is_available)"
DEV = "a 'cuda' device string/torch.device fails on an NPU host; use 'npu' (torch-npu-migration.md §3.4 ReplaceStringRule)"
NCCL = "NCCL does not exist on Ascend; HCCL is the collective backend (torch-npu-migration.md §2.4, ascend-distributed.md §6.1)"
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; torch.npu.empty_cache is the NPU form (torch_api_npu_support_2.7.1.tsv)"
MEMSTAT = "torch.cuda memory statistics return 0 when CUDA is not initialised; log-only, torch.npu.* is the NPU form (torch_api_npu_support_2.7.1.tsv)"

E("icefall_pruned_rnnt_train", "egs/librispeech/ASR/pruned_transducer_stateless7/train.py", "explicit_replacement",
  "k2-fsa/icefall pruned_transducer_stateless7 train.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.npu.amp import GradScaler", AMP),
    C("y = k2.RaggedTensor(y).to(device)", "unsupported_op_workaround", R, True,
      "y = k2.RaggedTensor(y)  # k2 stays on CPU; model moves what it needs", K2),
    C("with torch.cuda.amp.autocast(enabled=params.use_fp16):", "amp", R, True,
      "with torch.autocast(device_type=\"npu\", dtype=torch.float16, enabled=params.use_fp16):", AMP),
    C('if "CUDA out of memory" in str(e):', "device_type", R, False, 'if "out of memory" in str(e):',
      "the NPU allocator reports 'NPU out of memory'; only the OOM diagnostic path is affected"),
    C("max mem: {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      'f"max mem: {torch.npu.max_memory_allocated() // 1000000}MB"', MEMSTAT),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", AVAIL),
    C('device = torch.device("cuda", rank)', "device_type", R, True, 'device = torch.device("npu", rank)', DEV),
    C("torch.set_num_interop_threads(1)", "compile_mode", A, False,
      "torch.set_num_interop_threads(1)\ntorch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only: variable-length speech batches are dynamic shapes, for which msFmkTransplt recommends jit_compile=False (torch-npu-migration.md §3.5)"),
  ])

E("icefall_transducer_model", "egs/librispeech/ASR/pruned_transducer_stateless7/model.py", "explicit_replacement",
  "k2-fsa/icefall pruned transducer model.py (k2 pruned RNN-T loss)", [
    C("boundary = torch.zeros((x.size(0), 4), dtype=torch.int64, device=x.device)", "unsupported_op_workaround", R, True,
      'boundary = torch.zeros((x.size(0), 4), dtype=torch.int64, device="cpu")', K2 + "; the k2 loss is computed on CPU"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", R, False,
      'with torch.autocast(device_type="npu", enabled=False):',
      "disabling CUDA autocast does not disable an outer NPU autocast; inputs are cast with .float() anyway, so only tidiness (torch-npu-migration.md §2.1)"),
    C("lm=lm.float(),", "unsupported_op_workaround", R, True, "lm=lm.float().cpu(),", K2),
    C("am=am.float(),", "unsupported_op_workaround", R, True, "am=am.float().cpu(),", K2),
    C("am_pruned, lm_pruned = k2.do_rnnt_pruning(", "unsupported_op_workaround", R, True,
      "am_pruned, lm_pruned = do_rnnt_pruning_torch(  # torch.gather version, ranges moved to encoder_out.device",
      K2 + "; the pruning is a gather and is cheap to express with torch ops on NPU"),
    C("with torch.cuda.amp.autocast(enabled=False):  # pruned loss in fp32", "amp", R, False,
      'with torch.autocast(device_type="npu", enabled=False):  # pruned loss in fp32',
      "same as the first autocast(enabled=False): inputs already .float()"),
    C("logits=logits.float(),", "unsupported_op_workaround", R, True, "logits=logits.float().cpu(),", K2),
  ])

E("icefall_hlg_decode", "egs/librispeech/ASR/conformer_ctc/decode.py", "explicit_replacement",
  "k2-fsa/icefall conformer_ctc decode.py (HLG lattice decoding)", [
    C("device = HLG.device", "tensor_to_device", R, True, "device = next(model.parameters()).device",
      "after the port the HLG graph stays on CPU while the model runs on NPU, so the batch must follow the model, not the graph; " + K2),
    C("nnet_output=nnet_output,", "unsupported_op_workaround", R, True, "nnet_output=nnet_output.cpu(),",
      "k2 intersect_dense_pruned runs on CPU; " + K2),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", AVAIL),
    C('device = torch.device("cuda", 0)', "device_type", R, True, 'device = torch.device("npu", 0)', DEV),
    C('HLG = k2.Fsa.from_dict(torch.load(f"{params.lang_dir}/HLG.pt", map_location=device))', "unsupported_op_workaround", R, True,
      'HLG = k2.Fsa.from_dict(torch.load(f"{params.lang_dir}/HLG.pt", map_location="cpu"))', K2),
    C("=HLG = HLG.to(device)", "unsupported_op_workaround", X, True, None, K2 + "; the graph must stay on CPU"),
    C("G = k2.Fsa.from_fsas([G]).to(device)", "unsupported_op_workaround", R, True, "G = k2.Fsa.from_fsas([G])", K2),
  ])

E("nemo_conformer_ctc_yaml", "examples/asr/conf/conformer/conformer_ctc_bpe.yaml", "explicit_replacement",
  "NVIDIA/NeMo examples/asr/conf/conformer/conformer_ctc_bpe.yaml (Hydra config)", [
    C('use_pytorch_sdpa_backends: ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"]', "attention_kernel", R, False,
      "use_pytorch_sdpa_backends: []  # let SDPA pick the NPU fused path",
      "restricting SDPA to the CUDA flash/efficient backends via sdpa_kernel is not documented for NPU (torch.backends.cuda.sdp_kernel is ✘ in torch_api_npu_support_2.7.1.tsv; torch.nn.attention.sdpa_kernel is not listed) - unconfirmed"),
    C("use_cuda_graph_decoder: true", "torch_cuda_api", R, False, "use_cuda_graph_decoder: false",
      "CUDA-graph greedy decoder; NeMo falls back to the loop decoder off CUDA (unconfirmed); torch.npu.NPUGraph exists for inference only (torch_api_npu_support_2.7.1.tsv)"),
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning's 'gpu' accelerator needs CUDA/MPS and stops at start-up on an NPU host; an NPU accelerator has to be registered with Lightning (plugin name unconfirmed)"),
    C("process_group_backend: nccl", "dist_backend", R, True, "process_group_backend: hccl", NCCL),
  ])

E("nemo_transcribe_speech", "examples/asr/transcribe_speech.py", "explicit_replacement",
  "NVIDIA/NeMo examples/asr/transcribe_speech.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():", AVAIL),
    C('=accelerator = "gpu"', "device_type", R, True, 'accelerator = "npu"',
      "Lightning 'gpu' accelerator needs CUDA; an NPU accelerator must be registered with Lightning (plugin unconfirmed)"),
    C('map_location = torch.device("cuda:0")', "device_type", R, True, 'map_location = torch.device("npu:0")', DEV),
    C('accelerator = "gpu"  # cfg.cuda given explicitly', "device_type", R, True,
      'accelerator = "npu"  # cfg.cuda given explicitly', "same as above; reached when the user passes cuda=<id> as in the usage text"),
    C('map_location = torch.device(f"cuda:{cfg.cuda}")', "device_type", R, True,
      'map_location = torch.device(f"npu:{cfg.cuda}")', DEV),
    C("if cfg.amp and torch.cuda.is_available()", "amp", R, True, "if cfg.amp and torch.npu.is_available():",
      "the CUDA check silently switches amp=True off on an NPU host; " + AVAIL),
    C("autocast = lambda: torch.cuda.amp.autocast(dtype=amp_dtype)", "amp", R, True,
      'autocast = lambda: torch.autocast(device_type="npu", dtype=amp_dtype)', AMP),
  ])

E("speechbrain_ctc_w2v_recipe", "recipes/LibriSpeech/ASR/CTC/train_with_wav2vec.py", "explicit_replacement",
  "speechbrain recipes/LibriSpeech/ASR/CTC/train_with_wav2vec.py (older Brain with auto_mix_prec)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("with torch.cuda.amp.autocast():", "amp", R, True, 'with torch.autocast(device_type="npu", dtype=torch.float16):', AMP),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self.scaler = torch.npu.amp.GradScaler()", AMP),
    C("sb.utils.distributed.ddp_init_group(run_opts)", "dist_backend", A, True,
      'run_opts.setdefault("distributed_backend", "hccl")  # SpeechBrain defaults to nccl\nsb.utils.distributed.ddp_init_group(run_opts)',
      "SpeechBrain's --distributed_backend defaults to 'nccl' (SpeechBrain argument parser); " + NCCL),
    C('run_opts["device"] = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'run_opts["device"] = "npu:0" if torch.npu.is_available() else "cpu"', AVAIL),
    C('run_opts={"device": "cuda"},', "device_type", R, True, 'run_opts={"device": "npu"},', DEV),
  ])

E("whisper_seq2seq_finetune", "run_speech_recognition_seq2seq.py", "explicit_replacement",
  "HF Whisper fine-tuning with Seq2SeqTrainer (community fine-tuning script)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C('os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")', "env_var", X, False, None,
      "CUDA-only environment variable; no effect on an NPU host"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", R, False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0, torch-npu-migration.md §1.6); memory behaviour only"),
    C("bf16_ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()", "torch_cuda_api", R, False,
      "bf16_ok = torch.npu.is_available() and torch.npu.is_bf16_supported()",
      "unchanged, an NPU host falls back to fp16 training instead of bf16; it still runs (torch.npu.is_bf16_supported is in torch_npu.npu.__all__, torch-npu-migration.md §2.1)"),
    C('attn_implementation="flash_attention_2" if args.use_flash_attention else "sdpa",', "attention_kernel", R, False,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; transformers recommends sdpa on NPU (torch-npu-migration.md §6); only reached with --use_flash_attention"),
    C("tf32=True,", "device_capability_check", R, True, "tf32=False,",
      "TrainingArguments raises when tf32 is requested and is_torch_tf32_available() is False, which it is on an NPU host (it checks CUDA; see apis_config in torch-npu-migration.md §2.7)"),
    C('optim="adamw_bnb_8bit",', "fused_optimizer", R, True, 'optim="adamw_torch",',
      "bitsandbytes 8-bit optimizers are not listed for NPU (torch-npu-migration.md §6)"),
    C('ddp_backend="nccl",', "dist_backend", R, True, 'ddp_backend="hccl",', NCCL),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "only gates a memory printout; " + AVAIL),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", R, False,
      'print(f"peak memory: {torch.npu.max_memory_reserved() / 2**30:.1f} GiB")', MEMSTAT),
  ])

VIS = "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime; ASCEND_RT_VISIBLE_DEVICES selects logical NPUs per process (ascend-distributed.md §1)"

E("whisper_launch_sh", "scripts/finetune_whisper.sh", "explicit_replacement",
  "launcher shell script for HF Whisper fine-tuning (torchrun + eval)", [
    C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))", VIS),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL tuning variable; no effect with HCCL (ascend-distributed.md §1 lists the HCCL_* set)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL tuning variable; no effect with HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL logging variable; no effect with HCCL"),
    C("nvidia-smi --query-gpu", "device_type", R, True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script; npu-smi is the tool (torch-npu-migration.md §6, ascend-host-formats.md)"),
    C("export CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "only in the optional flash-attn build branch"),
    C("pip install flash-attn --no-build-isolation", "attention_kernel", X, False, None,
      "flash-attn cannot be installed on NPU (torch-npu-migration.md §6); only with BUILD_FLASH_ATTN=1"),
    C("--use_flash_attention \\", "attention_kernel", X, True, None,
      "selects attn_implementation='flash_attention_2', which needs the flash-attn package that does not exist for NPU (torch-npu-migration.md §6)"),
    C("CUDA_VISIBLE_DEVICES=0 python eval_whisper.py", "env_var", R, False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python eval_whisper.py \\", VIS + "; the device is also passed explicitly below"),
    C("--device cuda:0 \\", "device_type", R, True, "--device npu:0 \\", DEV),
  ])

CT2 = "CTranslate2 (faster-whisper's engine) has CPU and CUDA devices only; no Ascend backend is listed in /work/shared/knowledge (unconfirmed beyond CTranslate2's own docs)"

E("faster_whisper_batch", "transcribe_batch.py", "device_branch_or_abstraction",
  "SYSTRAN/faster-whisper batched transcription script (CTranslate2)", [
    C("from faster_whisper import BatchedInferencePipeline, WhisperModel", "unsupported_op_workaround", R, False,
      "from transformers import pipeline as hf_pipeline  # Whisper via transformers runs on NPU",
      CT2 + "; to use the NPU at all the engine must change: transformers has native NPU support (torch-npu-migration.md §6)"),
    C('parser.add_argument("--device", default="cuda", choices=["cuda", "cpu", "auto"])', "device_type", R, True,
      'parser.add_argument("--device", default="cpu", choices=["cpu", "auto"])',
      CT2 + "; the default 'cuda' makes WhisperModel fail on an NPU host"),
  ])

E("vits_monotonic_align", "monotonic_align/__init__.py", "device_branch_or_abstraction",
  "jaywalnut310/vits monotonic_align/__init__.py (Cython MAS on CPU; no labels)", [])

CUDAM = "Tensor.cuda()/Module.cuda() need a CUDA build and device; .npu() (or .to('npu:N')) is the NPU form (torch-npu-migration.md §2.3, §3.4)"
FUSED_ADAMW = "performance only: torch_npu.optim.NpuFusedAdamW is the tensor-fused AdamW (faster, ~70% more optimizer memory per msFmkTransplt advice; torch-npu-migration.md §3.5, §5)"

E("vits_train_ddp", "train.py", "explicit_replacement",
  "jaywalnut310/vits train.py (mp.spawn + DDP + fp16_run)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("torch.backends.cudnn.benchmark = True", "compile_mode", A, False,
      "torch.backends.cudnn.benchmark = True\ntorch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only: text/audio lengths vary per batch (dynamic shapes), msFmkTransplt recommends jit_compile=False there (torch-npu-migration.md §3.5); the cudnn flag itself is accepted on NPU (torch_api_npu_support_2.7.1.tsv)"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", R, True, "from torch.npu.amp import autocast, GradScaler",
      AMP + "; changing the import covers every autocast(...) below"),
    C('assert torch.cuda.is_available(), "CPU training is not allowed."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "CPU training is not allowed."', AVAIL + "; here the assert stops the run"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so mp.spawn starts no worker (torch_api_npu_support_2.7.1.tsv: torch_npu.npu.device_count)"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", R, True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=n_gpus, rank=rank)", NCCL),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "torch.cuda.set_device fails without CUDA; torch_npu.npu.set_device (torch_api_npu_support_2.7.1.tsv)"),
    C("**hps.model).cuda(rank)", "tensor_to_device", R, True, "**hps.model).npu(rank)", CUDAM),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank)", "tensor_to_device", R, True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank)", CUDAM),
    C("optim_g = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_g = torch_npu.optim.NpuFusedAdamW(", FUSED_ADAMW),
    C("optim_d = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_d = torch_npu.optim.NpuFusedAdamW(", FUSED_ADAMW),
    C("x, x_lengths = x.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "x, x_lengths = x.npu(rank, non_blocking=True), x_lengths.npu(rank, non_blocking=True)", CUDAM),
    C("spec, spec_lengths = spec.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec, spec_lengths = spec.npu(rank, non_blocking=True), spec_lengths.npu(rank, non_blocking=True)", CUDAM),
    C("y, y_lengths = y.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "y, y_lengths = y.npu(rank, non_blocking=True), y_lengths.npu(rank, non_blocking=True)", CUDAM),
  ])

STFT = "torch.stft on NPU accepts fp32/fp64 (and complex) input only (torch_api_npu_support_2.7.1.tsv); under fp16_run this stft receives a half-precision waveform"

E("vits_mel_processing", "mel_processing.py", "explicit_replacement",
  "jaywalnut310/vits mel_processing.py (stft/mel called inside fp16 autocast)", [
    C("=spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size,", "unsupported_op_workaround", R, True,
      "spec = torch.stft(y.float(), n_fft, hop_length=hop_size, win_length=win_size,", STFT),
    C("=window=hann_window[wnsize_dtype_device], center=center, pad_mode='reflect',", "unsupported_op_workaround", R, True,
      "window=hann_window[wnsize_dtype_device].float(), center=center, pad_mode='reflect',", STFT + "; the cached window has y's dtype"),
  ])

E("sovits_infer_tool", "inference/infer_tool.py", "explicit_replacement",
  "svc-develop-team/so-vits-svc inference/infer_tool.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C('self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'self.dev = torch.device("npu" if torch.npu.is_available() else "cpu")', AVAIL),
    C('if "half" in self.net_g_path and torch.cuda.is_available():', "torch_cuda_api", R, False,
      'if "half" in self.net_g_path and torch.npu.is_available():',
      "unchanged, a half checkpoint is run in fp32 on NPU: correct but slower"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

E("bark_generation", "bark/generation.py", "explicit_replacement",
  "suno-ai/bark bark/generation.py (device pick, bf16 autocast, cache clearing)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("=torch.cuda.is_available() and", "amp", R, True, "torch.npu.is_available() and",
      "the CUDA check makes `autocast` a null context on an NPU host, so the bf16 path is silently off; " + AVAIL),
    C('hasattr(torch.cuda, "amp") and', "amp", R, False, 'hasattr(torch.npu, "amp") and', "tidy-up of the same condition; harmless as written"),
    C('hasattr(torch.cuda.amp, "autocast") and', "amp", R, False, 'hasattr(torch.npu.amp, "autocast") and', "tidy-up of the same condition; harmless as written"),
    C('hasattr(torch.cuda, "is_bf16_supported") and', "amp", R, False, 'hasattr(torch.npu, "is_bf16_supported") and', "tidy-up of the same condition; harmless as written"),
    C("=torch.cuda.is_bf16_supported()", "device_capability_check", R, True, "torch.npu.is_bf16_supported()",
      "asks the CUDA runtime, which reports no bf16 on an NPU host; torch.npu.is_bf16_supported is the NPU form (torch-npu-migration.md §2.1)"),
    C("autocast = funcy.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)", "amp", R, True,
      'autocast = funcy.partial(torch.autocast, "npu", dtype=torch.bfloat16)', AMP),
    C("if torch.cuda.device_count() > 0 and use_gpu:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 0 and use_gpu:",
      "device_count() is 0 without CUDA, so Bark runs on CPU (torch_api_npu_support_2.7.1.tsv)"),
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"', DEV),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "guards cache clearing only; " + EMPTY),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "inside the cache-clearing branch that the unchanged code skips on NPU; torch_npu.npu.synchronize (torch_api_npu_support_2.7.1.tsv)"),
  ])

XF = "xformers has no NPU backend and cannot serve npu tensors (torch-npu-migration.md §6, xformers issues #1237/#1380)"

E("audiocraft_streaming_mha", "audiocraft/modules/transformer.py", "explicit_replacement",
  "facebookresearch/audiocraft modules/transformer.py (StreamingMultiheadAttention, xformers / sdp_kernel)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu",
      "needed only for the optional npu_fusion_attention rewrite of the xformers branch; " + AUTOLOAD),
    C("=from xformers import ops", "attention_kernel", X, True, None, XF + "; the module-level import fails where xformers is absent"),
    C("from xformers.ops import LowerTriangularMask", "attention_kernel", X, True, None,
      XF + "; reached for every causal layer because MusicGen sets memory_efficient=True"),
    C("return LowerTriangularMask()", "attention_kernel", R, True, "return True  # causal marker; consumed as is_causal below",
      XF + "; the torch backend only tests the mask for None"),
    C("q, k, v = ops.unbind(packed, dim=2)", "attention_kernel", R, True, "q, k, v = torch.unbind(packed, dim=2)",
      XF + "; torch.unbind is the plain equivalent"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", R, True,
      "with contextlib.nullcontext():  # SDPA picks the NPU fused kernel itself",
      "torch.backends.cuda.sdp_kernel is ✘ on NPU (torch_api_npu_support_2.7.1.tsv; mstt_unsupported_torch_apis_2.7.txt)"),
    C("x = ops.memory_efficient_attention(q, k, v, attn_mask, p=p)", "attention_kernel", R, False,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", keep_prob=1 - p, scale=q.shape[-1] ** -0.5, atten_mask=causal_mask, sparse_mode=3)[0]',
      XF + "; only with set_efficient_attention_backend('xformers') (default is 'torch'); npu_fusion_attention signature from torch-npu-migration.md §5"),
  ])

E("musicgen_batch_generate", "scripts/generate_batch.py", "explicit_replacement",
  "audiocraft MusicGen batch generation script (timing with CUDA events)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(args.seed)",
      "queued no-op without CUDA; torch.manual_seed above already seeds every registered device (torch_api_npu_support_2.7.1.tsv: torch_npu.npu.manual_seed_all)"),
    C('set_efficient_attention_backend("xformers")', "attention_kernel", X, False, None, XF + "; only with --xformers"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', AVAIL),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "start_evt = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event cannot be created without CUDA; torch_npu.npu.Event (torch_api_npu_support_2.7.1.tsv)"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True, "end_evt = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event cannot be created without CUDA; torch_npu.npu.Event (torch_api_npu_support_2.7.1.tsv)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA; torch_npu.npu.synchronize (torch_api_npu_support_2.7.1.tsv)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():", "gates a memory report only"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", R, False,
      'print(f"max memory allocated: {torch.npu.max_memory_allocated() / 1e9:.2f} GB")', MEMSTAT),
    C("print(torch.cuda.memory_summary(abbreviated=True))", "torch_cuda_api", R, False,
      "print(torch.npu.memory_summary(abbreviated=True))", "inside the memory report branch; torch_npu.npu.memory_summary (torch_api_npu_support_2.7.1.tsv)"),
  ])

E("torchaudio_gpu_fbank", "tools/extract_features_gpu.py", "explicit_replacement",
  "torchaudio GPU feature extraction tool (MelSpectrogram/Resample on device, side copy stream)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C('p.add_argument("--device", default="cuda:0")', "device_type", R, True, 'p.add_argument("--device", default="npu:0")', DEV),
    C("wav = wav.mean(dim=0, keepdim=True).pin_memory()", "pin_memory", R, False,
      'wav = wav.mean(dim=0, keepdim=True).pin_memory(device="npu")',
      "pinning defaults to the CUDA host allocator in older torch; whether torch_npu redirects a bare pin_memory() is unconfirmed"),
    C("torch.backends.cuda.cufft_plan_cache.max_size = 64", "torch_cuda_api", R, True,
      "torch.npu.backends.fft_plan_cache.max_size = 64",
      "the cuFFT plan cache resolves the current CUDA device; the NPU form is torch.npu.backends.fft_plan_cache (max_size 1-99) (torch_api_npu_support_2.7.1.tsv)"),
    C("copy_stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "copy_stream = torch.npu.Stream()",
      "torch.cuda.Stream needs CUDA; torch_npu.npu.Stream (torch_api_npu_support_2.7.1.tsv)"),
    C("with torch.cuda.stream(copy_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(copy_stream):",
      "torch.cuda.stream needs CUDA; torch.npu.stream is in torch_npu.npu.__all__ (torch-npu-migration.md §2.1)"),
    C("torch.cuda.current_stream().wait_stream(copy_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(copy_stream)", "torch_npu.npu.current_stream (torch_api_npu_support_2.7.1.tsv)"),
    C("torch.cuda.memory_allocated(device) / 2**20", "torch_cuda_api", R, False,
      'logging.info("wrote shard %d (mem %.1f MB)", shard_idx, torch.npu.memory_allocated(device) / 2**20)', MEMSTAT),
  ])

CUCTC = "torchaudio's cuda_ctc_decoder is a CUDA-only beam search (it takes CUDA log-probs); the CPU flashlight ctc_decoder is the portable replacement (torchaudio docs; not covered by /work/shared/knowledge)"

E("torchaudio_cuda_ctc_decode", "examples/asr/ctc_decode_eval.py", "explicit_replacement",
  "torchaudio CUDA CTC beam-search decoder tutorial-style evaluation", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("from torchaudio.models.decoder import cuda_ctc_decoder", "unsupported_op_workaround", R, True,
      "from torchaudio.models.decoder import ctc_decoder, download_pretrained_files", CUCTC),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', DEV),
    C("decoder = cuda_ctc_decoder(tokens", "unsupported_op_workaround", R, True,
      'decoder = ctc_decoder(lexicon=None, tokens=tokens, nbest=1, beam_size=args.beam_size, blank_token="<blk>", sil_token=" ")', CUCTC),
    C("torch.cuda.synchronize()  # emissions ready", "torch_cuda_api", R, True, "torch.npu.synchronize()  # emissions ready",
      "torch.cuda.synchronize raises without CUDA; torch_npu.npu.synchronize (torch_api_npu_support_2.7.1.tsv)"),
    C("results = decoder(log_probs, out_lens.to(torch.int32))", "unsupported_op_workaround", R, True,
      "results = decoder(log_probs.float().cpu(), out_lens.cpu())", CUCTC + "; the CPU decoder wants float32 CPU tensors"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA (timing of the CPU decoder needs no device sync after the port, so it could also go)"),
  ])

E("pyannote_diarize_batch", "diarize.py", "explicit_replacement",
  "pyannote.audio 3.x speaker-diarization batch script", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", R, False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")', VIS + "; the pipeline uses device 0 anyway"),
    C("if not args.cpu and torch.cuda.is_available():", "torch_cuda_api", R, True, "if not args.cpu and torch.npu.is_available():", AVAIL),
    C('pipeline.to(torch.device("cuda"))', "device_type", R, True, 'pipeline.to(torch.device("npu"))', DEV),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
      'logger.info("running on %s", torch.npu.get_device_name(0))', "torch.cuda.get_device_name raises without CUDA; torch_npu.npu.get_device_name (torch_api_npu_support_2.7.1.tsv)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():", "gates cache clearing only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

NUMBA = "numba's CUDA target needs an NVIDIA GPU and its CPU target works on host memory only; on an NPU host acts.is_cuda is False, so npu tensors would be handed to the CPU implementation (numba is not covered by /work/shared/knowledge; from numba's docs)"

E("warprnnt_numba_loss", "nemo/collections/asr/parts/numba/rnnt_loss/rnnt.py", "device_branch_or_abstraction",
  "NVIDIA/NeMo warprnnt_numba rnnt.py (numba CUDA / CPU RNN-T loss dispatch)", [
    C("grads = torch.zeros_like(acts) if acts.requires_grad else None", "unsupported_op_workaround", R, True,
      'grads = torch.zeros_like(acts, device="cpu") if acts.requires_grad and not is_cuda else (torch.zeros_like(acts) if acts.requires_grad else None)',
      NUMBA + "; the CPU kernel writes its gradients into host memory"),
    C("loss_func = rnnt_loss_gpu if is_cuda else rnnt_loss_cpu", "unsupported_op_workaround", B, True,
      'loss_func = rnnt_loss_gpu if is_cuda else rnnt_loss_cpu\nhost = not is_cuda and acts.device.type != "cpu"  # NPU: stage through host memory',
      NUMBA),
    C("costs = torch.zeros(minibatch_size, device=acts.device, dtype=torch.float32)", "unsupported_op_workaround", R, True,
      'costs = torch.zeros(minibatch_size, device="cpu" if host else acts.device, dtype=torch.float32)', NUMBA),
    C("acts, labels=labels, input_lengths=act_lens, label_lengths=label_lens, costs=costs, grads=grads,", "unsupported_op_workaround", R, True,
      "acts.detach().cpu() if host else acts, labels=labels.cpu() if host else labels, input_lengths=act_lens.cpu() if host else act_lens, label_lengths=label_lens.cpu() if host else label_lens, costs=costs, grads=grads,",
      NUMBA),
    C("ctx.grads = grads", "unsupported_op_workaround", R, True,
      "ctx.grads = grads.to(acts.device) if (host and grads is not None) else grads", NUMBA + "; gradients must return to the NPU"),
    C("=return costs", "unsupported_op_workaround", R, True, "return costs.to(acts.device)", NUMBA + "; the loss must return to the NPU"),
  ])

E("emformer_rnnt_lightning", "examples/asr/emformer_rnnt/train.py", "explicit_replacement",
  "pytorch/audio examples/asr/emformer_rnnt train.py (Lightning + torchaudio RNNTLoss)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("self.optimizer = torch.optim.Adam(self.model.parameters()", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedAdam(self.model.parameters(), lr=5e-4, betas=(0.9, 0.999), eps=1e-8)",
      "performance only: tensor-fused Adam (torch-npu-migration.md §3.5, §5)"),
    C("loss = self.loss(output, batch.targets, src_lengths, batch.target_lengths)", "unsupported_op_workaround", R, False,
      "loss = self.loss(output.float().cpu(), batch.targets.cpu(), src_lengths.cpu(), batch.target_lengths.cpu()).to(output.device)",
      "torchaudio's rnnt_loss is a custom op with CPU and CUDA kernels only; torch_npu's boxed PrivateUse1 fallback may already route it to CPU (torch-npu-migration.md §3.8) - unconfirmed for non-aten ops, so the explicit host round trip is a safety change"),
    C('accelerator="gpu",', "device_type", R, True, 'accelerator="npu",',
      "Lightning's 'gpu' accelerator needs CUDA; an NPU accelerator must be registered with Lightning (plugin unconfirmed)"),
    C('strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="nccl"),', "dist_backend", R, True,
      'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl"),', NCCL),
  ])

SEED = "seeding only: torch.cuda.manual_seed is a queued no-op without CUDA, so the NPU generator is not seeded per rank (torch_api_npu_support_2.7.1.tsv: torch_npu.npu.manual_seed)"

E("hifigan_train", "train.py", "explicit_replacement",
  "jik876/hifi-gan train.py (mp.spawn + DDP, config-driven backend)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C("torch.cuda.manual_seed(h.seed + rank)", "torch_cuda_api", R, False, "torch.npu.manual_seed(h.seed + rank)", SEED),
    C("device = torch.device('cuda:{:d}'.format(rank))", "device_type", R, True,
      "device = torch.device('npu:{:d}'.format(rank)); torch.npu.set_device(device)",
      DEV + "; with HCCL each process should also bind its device (ascend-distributed.md §6.1)"),
    C("optim_g = torch.optim.AdamW(", "fused_optimizer", R, False,
      "optim_g = torch_npu.optim.NpuFusedAdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])", FUSED_ADAMW),
    C("optim_d = torch.optim.AdamW(", "fused_optimizer", R, False,
      "optim_d = torch_npu.optim.NpuFusedAdamW(itertools.chain(msd.parameters(), mpd.parameters()),", FUSED_ADAMW),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "on an NPU host the branch is skipped, h.num_gpus keeps the config value 0 and training never goes multi-device; " + AVAIL),
    C("=torch.cuda.manual_seed(h.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(h.seed)", SEED),
    C("h.num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "h.num_gpus = torch.npu.device_count()",
      "device_count() of CUDA is 0 on an NPU host (torch_api_npu_support_2.7.1.tsv)"),
  ])

E("hifigan_config_json", "config_v1.json", "explicit_replacement",
  "jik876/hifi-gan config_v1.json (dist_config)", [
    C('"dist_backend": "nccl",', "dist_backend", R, True, '"dist_backend": "hccl",', NCCL + "; train.py passes this value to init_process_group"),
  ])

E("bigvgan_cuda_load", "alias_free_activation/cuda/load.py", "kernel_rewrite",
  "NVIDIA/BigVGAN alias_free_activation/cuda/load.py (JIT-built fused anti-alias activation)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None, "CUDA build variable; meaningless without nvcc"),
    C("_, bare_metal_major, _ = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "there is no CUDA toolkit on an Ascend host: CUDA_HOME is None and nvcc -V cannot run (torch-npu-migration.md §6: no nvcc path)"),
    C("return cpp_extension.load(", "custom_cuda_extension", R, True,
      'raise RuntimeError("fused anti-alias activation has no NPU build; use the torch Activation1d (use_cuda_kernel=False)")',
      "torch.utils.cpp_extension.load is ✘ on Atlas A2/A3 and .cu sources need nvcc; an Ascend C rewrite via NpuExtension is the only kernel route (torch-npu-migration.md §6, mstt_unsupported_torch_apis_2.7.txt)"),
  ])

E("bigvgan_model_cuda_kernel", "bigvgan.py", "explicit_replacement",
  "NVIDIA/BigVGAN bigvgan.py (use_cuda_kernel switch and demo)", [
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"', DEV),
    C('model = BigVGAN.from_pretrained("nvidia/bigvgan_v2_24khz_100band_256x", use_cuda_kernel=True)', "custom_cuda_extension", R, True,
      'model = BigVGAN.from_pretrained("nvidia/bigvgan_v2_24khz_100band_256x", use_cuda_kernel=False)',
      "use_cuda_kernel=True JIT-builds an nvcc extension via cpp_extension.load, which cannot work on Ascend (torch-npu-migration.md §6); the torch Activation1d runs on NPU"),
  ])

E("demucs_separate", "demucs/separate.py", "explicit_replacement",
  "facebookresearch/demucs demucs/separate.py (CLI device default)", [
    C("=import torch as th", "import_torch_npu", A, False, "import torch as th\nimport torch_npu", AUTOLOAD),
    C('default="cuda" if th.cuda.is_available() else "mps"', "device_type", R, True,
      'default="npu" if th.npu.is_available() else "mps" if th.backends.mps.is_available() else "cpu",', AVAIL),
    C('if args.device.startswith("cuda"):', "device_type", R, False, 'if args.device.startswith("npu"):',
      "gates cache clearing only"),
    C("th.cuda.empty_cache()", "torch_cuda_api", R, False, "th.npu.empty_cache()", EMPTY),
  ])

E("wenet_export_onnx_gpu", "wenet/bin/export_onnx_gpu.py", "explicit_replacement",
  "wenet-e2e/wenet wenet/bin/export_onnx_gpu.py (ONNX export + ORT check)", [
    C('providers = ["CUDAExecutionProvider"]', "device_type", R, False,
      'providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
      "ONNX Runtime falls back to CPU with a warning when the CUDA provider is missing, so the check still runs; the CANN execution provider for Ascend is not covered by /work/shared/knowledge (unconfirmed)"),
  ])

E("wenet_run_sh", "examples/aishell/s0/run.sh", "explicit_replacement",
  "wenet-e2e/wenet examples/aishell/s0/run.sh (GPU detection, torchrun, recognize)", [
    C("if command -v nvidia-smi &> /dev/null; then", "device_type", R, True, "if command -v npu-smi &> /dev/null; then",
      "nvidia-smi is absent on an Ascend host, so the script decides there is no accelerator (num_gpus=-1) and trains one process; npu-smi is the Ascend tool (ascend-host-formats.md)"),
    C("num_gpus=$(nvidia-smi -L | wc -l)", "device_type", R, True,
      "num_gpus=$(npu-smi info -l | awk -F: '/Total Count/{print $2+0}')", "npu-smi info -l prints 'Total Count' (ascend-host-formats.md)"),
    C('export CUDA_VISIBLE_DEVICES="${gpu_list}"', "env_var", R, True, 'export ASCEND_RT_VISIBLE_DEVICES="${gpu_list}"',
      VIS + "; the process count below is derived from this variable"),
    C('echo "CUDA_VISIBLE_DEVICES is ${CUDA_VISIBLE_DEVICES}"', "env_var", R, False,
      'echo "ASCEND_RT_VISIBLE_DEVICES is ${ASCEND_RT_VISIBLE_DEVICES}"', "log line only"),
    C("num_gpus=$(echo $CUDA_VISIBLE_DEVICES | awk", "env_var", R, True,
      "num_gpus=$(echo $ASCEND_RT_VISIBLE_DEVICES | awk -F \",\" '{print NF}')", VIS),
    C('dist_backend="nccl"', "dist_backend", R, True, 'dist_backend="hccl"', NCCL),
    C("python wenet/bin/recognize.py --gpu 0 \\", "device_type", R, True, "python wenet/bin/recognize.py --device npu --gpu 0 \\",
      "recognize.py decides CUDA use from --gpu plus torch.cuda.is_available(), which is False on NPU, so decoding silently runs on CPU; newer wenet takes --device (npu option from wenet's own code, unconfirmed)"),
  ])

E("qwen_audio_encoder", "audio.py", "explicit_replacement",
  "Qwen-Audio-style Whisper audio encoder with packed varlen flash attention", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", AUTOLOAD_REQ),
    C("self.use_flash_attn = use_flash_attn and HAS_FLASH_ATTN", "attention_kernel", R, True,
      "self.use_flash_attn = use_flash_attn  # NPU: torch_npu.npu_fusion_attention, no flash-attn package",
      "flash-attn cannot be installed on NPU (torch-npu-migration.md §6), so HAS_FLASH_ATTN is False and the dense fallback receives the packed 2-D tensor from AudioEncoder.forward, which it cannot handle"),
    C("out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,", "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(q, k, v, self.n_head, "TND", scale=hd ** -0.5, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
      "flash_attn_varlen_func -> npu_fusion_attention with input_layout TND and cumulative actual_seq_qlen/kvlen (torch-npu-migration.md §5, transformers npu_flash_attention mapping)"),
    C("@torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", R, True, '@torch.autocast(device_type="npu", dtype=torch.bfloat16)', AMP),
    C("packed = block(packed, cu_seqlens=cu_seqlens.cuda(), max_seqlen=max_seqlen)", "tensor_to_device", R, True,
      "packed = block(packed, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)", CUDAM),
    C("return self.forward(batch.cuda(non_blocking=True), lengths.cuda())", "tensor_to_device", R, True,
      "return self.forward(batch.npu(non_blocking=True), lengths.npu())", CUDAM),
  ])

E("salmonn_cli_inference", "cli_inference.py", "explicit_replacement",
  "bytedance/SALMONN cli_inference.py (speech LLM: Whisper+BEATs encoders, Vicuna LLM)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", AUTOLOAD),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu:0")', DEV),
    C("return {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in samples.items()}", "tensor_to_device", R, True,
      "return {k: v.npu() if isinstance(v, torch.Tensor) else v for k, v in samples.items()}", CUDAM),
    C("load_in_8bit=True,", "unsupported_op_workaround", R, False, "torch_dtype=torch.float16,  # no LLM.int8 on NPU",
      "bitsandbytes LLM.int8 is not listed for NPU (only NF4 in the multi-backend work, torch-npu-migration.md §6); only with --low-resource"),
    C('device_map={"": device_8bit},', "device_type", R, False, 'device_map={"": f"npu:{device_8bit}"},',
      "an int device_map entry is resolved as a CUDA ordinal by accelerate on a CUDA build; explicit npu:N is safer (unconfirmed); only with --low-resource"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', AMP),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

PAIR = "torch-npu wheels pair with an exact torch version (e.g. torch 2.7.1 + torch-npu 2.7.1.post2 on CANN 8.5.0); there is no torch-npu for 2.2.1 (torch-npu-migration.md §1.1-1.2)"

E("asr_requirements_txt", "requirements.txt", "explicit_replacement",
  "requirements.txt of an icefall/k2-based ASR project (CUDA wheels and GPU-only extras)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts take CPU torch from download.pytorch.org/whl/cpu, aarch64 plain PyPI; cu121 wheels are wrong there (torch-npu-migration.md §1.1)"),
    C("-f https://k2-fsa.github.io/k2/cuda.html", "unsupported_op_workaround", R, True, "-f https://k2-fsa.github.io/k2/cpu.html", K2),
    C("torch==2.2.1+cu121", "import_torch_npu", R, True, "torch==2.7.1\ntorch-npu==2.7.1.post2", PAIR),
    C("torchaudio==2.2.1+cu121", "device_type", R, True, "torchaudio==2.7.1", "must match the torch version chosen for torch-npu; " + PAIR),
    C("k2==1.24.4.dev20240223+cuda12.1.torch2.2.1", "unsupported_op_workaround", R, True,
      "k2==1.24.4.dev20240223+cpu.torch2.7.1  # exact CPU wheel tag unconfirmed", K2),
    C("kaldifeat==1.25.4.dev20240223+cuda12.1.torch2.2.1", "unsupported_op_workaround", R, True,
      "kaldifeat==1.25.4.dev20240223+cpu.torch2.7.1  # exact CPU wheel tag unconfirmed",
      "kaldifeat has CPU and CUDA builds only, like k2 (not covered by /work/shared/knowledge)"),
    C("onnxruntime-gpu==1.17.1", "device_type", R, False, "onnxruntime==1.17.1",
      "the CUDA build of ONNX Runtime is useless on Ascend; a CANN execution-provider build exists upstream but is not covered by /work/shared/knowledge (unconfirmed)"),
    C("nvidia-ml-py>=12.535.133", "torch_cuda_api", X, False, None,
      "pynvml has no NPU equivalent; torch.npu.utilization / mem_get_info or npu-smi instead (torch-npu-migration.md §6)"),
    C("cupy-cuda12x==13.0.0", "unsupported_op_workaround", X, True, None, "cupy has no Ascend support (torch-npu-migration.md §6); replace its use with torch ops on NPU"),
    C("triton==2.2.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "triton-ascend is the Ascend Triton (needs kernel porting; torch-npu-migration.md §6); only matters where Triton kernels are used"),
    C("flash-attn==2.5.6", "attention_kernel", X, True, None, "flash-attn cannot be installed on NPU (torch-npu-migration.md §6)"),
    C("xformers==0.0.25", "attention_kernel", X, True, None, XF + "; the wheel also pins a CUDA torch"),
    C("bitsandbytes>=0.43.0", "unsupported_op_workaround", R, False, "bitsandbytes>=0.43.0; platform_machine == 'x86_64'  # NF4 only on NPU, see multi-backend branch",
      "bitsandbytes NPU support is partial (NF4 via the multi-backend work; 8-bit optimizers/LLM.int8 not listed) (torch-npu-migration.md §6)"),
  ])

CANNIMG = "an Ascend image starts from a CANN base (Ascend/cann-container-image builds e.g. cann/8.5.0-910b-ubuntu22.04-py3.11; ascend-host-formats.md §3.8) - the exact registry path is unconfirmed"

E("nemo_dockerfile", "Dockerfile", "explicit_replacement",
  "NGC-based Dockerfile for NeMo ASR/TTS recipes (apex with CUDA extensions, DALI)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.01-py3", "device_type", R, True,
      "ARG BASE_IMAGE=ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11", CANNIMG),
    C("CUDA_HOME=/usr/local/cuda \\", "env_var", X, False, None, "CUDA toolkit path; absent on Ascend"),
    C('TORCH_CUDA_ARCH_LIST="7.0 8.0 8.6 9.0" \\', "env_var", X, False, None, "nvcc architecture list; no nvcc on Ascend"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "the Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES to mount /dev/davinciN (ascend-distributed.md §1); usually given at docker run time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", X, False, None, "NVIDIA container runtime variable"),
    C("NCCL_ASYNC_ERROR_HANDLING=1 \\", "env_var", R, False, "HCCL_ASYNC_ERROR_HANDLING=1 \\",
      "HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog switch (default 1 per MindCluster docs; ascend-distributed.md §1)"),
    C("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", R, False, "PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (torch-npu-migration.md §1.6); memory behaviour only"),
    C("=WORKDIR /workspace", "import_torch_npu", A, True,
      "WORKDIR /workspace\nRUN pip install --no-cache-dir torch==2.7.1 torch-npu==2.7.1.post2",
      "the CANN base has no PyTorch; torch and a matching torch-npu must be installed (torch-npu-migration.md §1.2)"),
    C("RUN git clone https://github.com/NVIDIA/apex.git && cd apex && \\", "fused_optimizer", R, True,
      "RUN git clone https://gitee.com/ascend/apex.git && cd apex && \\",
      "NVIDIA apex's CUDA extensions cannot build on Ascend; Ascend/apex patches apex for NPU (scripts/build.sh), live repo on gitee/gitcode (torch-npu-migration.md §6)"),
    C('--config-settings "--build-option=--cpp_ext --cuda_ext', "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.10 && pip install apex/dist/apex-*.whl && \\",
      "--cuda_ext/--fast_layer_norm/--distributed_adam compile CUDA kernels with nvcc, which does not exist on Ascend; FusedAdam/FusedLayerNorm are not available (torch-npu-migration.md §6)"),
    C("RUN pip install --no-cache-dir numba==0.59.1 cuda-python==12.3.0", "device_type", R, False,
      "RUN pip install --no-cache-dir numba==0.59.1",
      "cuda-python only serves NeMo's optional CUDA-graph decoders; NeMo guards the import (unconfirmed)"),
    C("nvidia-dali-cuda120", "unsupported_op_workaround", X, True, None,
      "DALI's GPU audio decoding is CUDA-only; the recipes' DALI loader path must be swapped for the ordinary torch data loader (DALI not covered by /work/shared/knowledge)"),
    C("""RUN python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"""", "torch_cuda_api", R, False,
      """RUN python -c "import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"""",
      "build-time sanity print; torch.version.cuda is just None on the CANN image"),
  ])
