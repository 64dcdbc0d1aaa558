# Labels for probe225 (k2/icefall, NeMo ASR, sherpa: CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See ../README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


K2_NOTE = ("k2 is a compiled CPU/CUDA extension (its ops dispatch on CPU or CUDA contexts only); like other "
           "custom CUDA extensions (knowledge §6) it has no NPU kernels, so k2 objects/ops must stay on CPU. "
           "k2 itself is not covered by the knowledge notes.")
SET_ENV_NOTE = ("source CANN's set_env.sh so libascendcl/libhccl are found; it must come before `set -u` "
                "(set_env.sh trips on unbound variables, knowledge ascend-host-formats §3).")

# ---------------------------------------------------------------- icefall
E("icefall_dist", "icefall/dist.py", "explicit_replacement",
  "k2-fsa/icefall icefall/dist.py (setup_dist / get_local_rank helpers)", [
    C('"nccl", rank=rank, world_size=world_size, timeout=timeout', "dist_backend", "replace", True,
      '"hccl", rank=rank, world_size=world_size, timeout=timeout',
      "NCCL backend does not exist with torch_npu; HCCL is the NPU collective backend"),
    C('dist.init_process_group("nccl", timeout=timeout)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", timeout=timeout)', "torchrun path, same as above"),
    C("=torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)", "torch.cuda.set_device raises on a host without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "same as above (torchrun path)"),
    C("return dist.get_rank() % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return dist.get_rank() % torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return torch.npu.device_count()", "silently returns 0 local devices on an NPU host"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten even by transfer_to_npu (knowledge §2.4); on NPU the plain "
      "dist.barrier() branch is taken, which still works, so only the device-pinned barrier is lost"),
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "dist.barrier(device_ids=[torch.npu.current_device()])",
      "only reached once the comparison above also accepts hccl; device_ids support for HCCL barrier unconfirmed"),
])

E("icefall_zipformer_train", "egs/librispeech/ASR/zipformer/train.py", "device_branch_or_abstraction",
  "k2-fsa/icefall egs/librispeech/ASR/zipformer/train.py (mp.spawn DDP, --use-fp16, GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device for the torch 2.1 stack icefall's docker pins (autoload only from torch_npu 2.5.1)"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself when CUDA is absent, so fp16 training would run without loss "
      "scaling (TSV: torch.cuda.amp.GradScaler -> torch_npu.npu.amp.GradScaler)"),
    C("with torch.cuda.amp.autocast(enabled=params.use_fp16, dtype=amp_dtype):", "amp", "replace", True,
      'with torch.autocast("npu", enabled=params.use_fp16, dtype=amp_dtype):',
      "CUDA autocast does not cover npu tensors: --use-fp16 would be silently ignored"),
    C('max_memory_allocated()//1000000}MB"', "torch_cuda_api", "replace", False,
      'f"Maximum memory allocated so far is {torch.npu.max_memory_allocated()//1000000}MB"',
      "CUDA allocator never initialised on NPU, so it logs 0 MB; logging only"),
    C("if params.use_bf16 and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if params.use_bf16 and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported() initialises CUDA and raises on an NPU host when --use-bf16 is given"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: training silently falls back to CPU"),
    C('device = torch.device("cuda", rank)', "device_type", "replace", True, 'device = torch.device("npu", rank)',
      "cuda device string"),
    C("=with torch.cuda.amp.autocast(enabled=params.use_fp16):", "amp", "replace", True,
      'with torch.autocast("npu", enabled=params.use_fp16):',
      "OOM scan must run under the same (NPU) autocast as training, otherwise it measures fp32 memory"),
    C('if "CUDA out of memory" in str(e):', "torch_cuda_api", "replace", False, 'if "out of memory" in str(e):',
      "NPU OOM errors do not contain 'CUDA'; only the diagnostic message is lost"),
    C("MB (scan)", "torch_cuda_api", "replace", False,
      'f"Maximum memory allocated so far is {torch.npu.max_memory_allocated()//1000000}MB (scan)"',
      "logs 0 MB on NPU; logging only"),
])

E("icefall_zipformer_decode", "egs/librispeech/ASR/zipformer/decode.py", "device_branch_or_abstraction",
  "k2-fsa/icefall egs/librispeech/ASR/zipformer/decode.py (greedy / fast_beam_search with k2 graphs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device (torch 2.1 era)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU host: decoding silently runs on CPU"),
    C('device = torch.device("cuda", 0)', "device_type", "replace", True, 'device = torch.device("npu", 0)',
      "cuda device string"),
    C("torch.load(lg_filename, map_location=device)", "unsupported_op_workaround", "replace", True,
      'torch.load(lg_filename, map_location="cpu")',
      "LG must be built as a CPU k2.Fsa. " + K2_NOTE + " beam_search.py must also move joiner log-probs to CPU"),
    C("decoding_graph = k2.trivial_graph(params.vocab_size - 1, device=device)", "unsupported_op_workaround",
      "replace", True, 'decoding_graph = k2.trivial_graph(params.vocab_size - 1, device=torch.device("cpu"))',
      K2_NOTE),
])

E("icefall_utils", "icefall/utils.py", "device_branch_or_abstraction",
  "k2-fsa/icefall icefall/utils.py (create_grad_scaler / torch_autocast helpers, MetricsTracker)", [
    C('def create_grad_scaler(device="cuda", **kwargs):', "amp", "replace", True,
      'def create_grad_scaler(device="npu", **kwargs):',
      "callers rely on the default; a cuda GradScaler disables itself without CUDA (no loss scaling)"),
    C("return torch.cuda.amp.GradScaler(**kwargs)", "amp", "replace", True,
      "return torch.npu.amp.GradScaler(**kwargs)", "torch<2.3 path (icefall docker pins torch 2.1)"),
    C('def torch_autocast(device_type="cuda", **kwargs):', "amp", "replace", True,
      'def torch_autocast(device_type="npu", **kwargs):',
      "every `with torch_autocast(...)` in the recipes inherits this default; cuda autocast is a no-op for npu tensors"),
    C("with torch.cuda.amp.autocast(**kwargs):", "amp", "replace", True,
      "with torch.npu.amp.autocast(**kwargs):", "torch<2.3 path of the same helper"),
])

E("icefall_checkpoint", "icefall/checkpoint.py", "explicit_replacement",
  "k2-fsa/icefall icefall/checkpoint.py (save/load/average checkpoints)", [
    C('"cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,', "torch_cuda_api",
      "replace", False,
      '"npu": torch.npu.get_rng_state_all() if torch.npu.is_available() else None,',
      "on NPU the device RNG state is silently not saved; only bit-exact resume is affected"),
    C('if states.get("cuda") is not None and torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if states.get("npu") is not None and torch.npu.is_available():', "restore side of the above"),
    C('torch.cuda.set_rng_state_all(states["cuda"])', "torch_cuda_api", "replace", False,
      'torch.npu.set_rng_state_all(states["npu"])', "restore side of the above"),
])

E("icefall_scaling", "egs/librispeech/ASR/zipformer/scaling.py", "kernel_rewrite",
  "k2-fsa/icefall egs/librispeech/ASR/zipformer/scaling.py (SwooshL/SwooshR via k2 kernels, custom autograd)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "the cuda decorators only record/restore CUDA autocast state, so backward runs without NPU autocast "
      "(precision/speed only; unconfirmed)"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "runs in backward on the autograd thread, where autocast is off anyway, and the body casts to float32 "
      "explicitly; kept for intent"),
    C("return k2.swoosh_l_forward(x)", "unsupported_op_workaround", "replace", True,
      "return torch.logaddexp(torch.zeros_like(x), x - 4.0) - 0.08 * x - 0.035", K2_NOTE),
    C("return k2.swoosh_l(x)", "unsupported_op_workaround", "replace", True,
      "return SwooshLFunction.apply(x)", "use the pure-PyTorch autograd Function already in this file. " + K2_NOTE),
    C("return k2.swoosh_r_forward(x)", "unsupported_op_workaround", "replace", True,
      "return torch.logaddexp(torch.zeros_like(x), x - 1.0) - 0.08 * x - 0.313261687", K2_NOTE),
    C("return k2.swoosh_r(x)", "unsupported_op_workaround", "replace", True,
      "return torch.logaddexp(torch.zeros_like(x), x - 1.0) - 0.08 * x - 0.313261687",
      "autograd through the formula (more memory than the k2 kernel). " + K2_NOTE),
    C('"SwooshL": k2.swoosh_l_forward,', "unsupported_op_workaround", "replace", True,
      '"SwooshL": lambda t: torch.logaddexp(torch.zeros_like(t), t - 4.0) - 0.08 * t - 0.035,', K2_NOTE),
    C('"SwooshR": k2.swoosh_r_forward,', "unsupported_op_workaround", "replace", True,
      '"SwooshR": lambda t: torch.logaddexp(torch.zeros_like(t), t - 1.0) - 0.08 * t - 0.313261687,', K2_NOTE),
    C('"SwooshL": k2.swoosh_l_forward_and_deriv,', "unsupported_op_workaround", "replace", True,
      '"SwooshL": swoosh_l_forward_and_deriv_torch,  # (y, sigmoid(x - 4) - 0.08)', K2_NOTE),
    C('"SwooshR": k2.swoosh_r_forward_and_deriv,', "unsupported_op_workaround", "replace", True,
      '"SwooshR": swoosh_r_forward_and_deriv_torch,  # (y, sigmoid(x - 1) - 0.08)', K2_NOTE),
])

E("icefall_model", "egs/librispeech/ASR/zipformer/model.py", "explicit_replacement",
  "k2-fsa/icefall egs/librispeech/ASR/zipformer/model.py (pruned RNN-T loss via k2)", [
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      'with torch.autocast("npu", enabled=False):',
      "inputs are already .float() and the k2 loss is not an autocast op, so numerics do not change; intent only"),
    C("# pruned loss in fp32", "amp", "replace", False,
      'with torch.autocast("npu", enabled=False):  # pruned loss in fp32', "same as above"),
    C("simple_loss, (px_grad, py_grad) = k2.rnnt_loss_smoothed(", "unsupported_op_workaround", "replace", True,
      "simple_loss, (px_grad, py_grad) = k2.rnnt_loss_smoothed(  # lm/am/y_padded/boundary passed as .cpu(); grads moved back to device",
      "mutual_information_recursion is a k2 CPU/CUDA kernel. " + K2_NOTE +
      " get_rnnt_prune_ranges/do_rnnt_pruning are pure-PyTorch helpers and stay unlabelled"),
    C("pruned_loss = k2.rnnt_loss_pruned(", "unsupported_op_workaround", "replace", True,
      "pruned_loss = k2.rnnt_loss_pruned(  # logits/ranges/symbols/boundary passed as .cpu()", K2_NOTE),
])

E("icefall_datamodule", "egs/librispeech/ASR/tdnn_lstm_ctc/asr_datamodule.py", "explicit_replacement",
  "k2-fsa/icefall egs/librispeech/ASR/tdnn_lstm_ctc/asr_datamodule.py (lhotse DynamicBucketingSampler)", [
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(),",
      "evaluates to False on NPU, so batches are not pinned; H2D copy speed only (NPU pinning path unconfirmed)"),
])

E("icefall_compute_fbank", "egs/librispeech/ASR/local/compute_fbank_librispeech.py", "device_branch_or_abstraction",
  "k2-fsa/icefall egs/librispeech/ASR/local/compute_fbank_*.py (lhotse + kaldifeat batch extraction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed if the optional NPU extraction path below is taken"),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_gpu = torch.npu.is_available()",
      "unchanged code falls back to the CPU Fbank extractor, which gives the same features; kaldifeat on npu "
      "is unconfirmed, so this is a speed-only change"),
    C('device = torch.device("cuda", 0)', "device_type", "replace", False, 'device = torch.device("npu", 0)',
      "only reached on the optional NPU path"),
])

E("icefall_graph_compiler", "icefall/graph_compiler.py", "explicit_replacement",
  "k2-fsa/icefall icefall/graph_compiler.py (CtcTrainingGraphCompiler)", [])

E("icefall_export_onnx", "egs/librispeech/ASR/zipformer/export-onnx.py", "explicit_replacement",
  "k2-fsa/icefall egs/librispeech/ASR/zipformer/export-onnx.py (CPU-only ONNX export)", [])

E("icefall_run_sh", "egs/librispeech/ASR/run.sh", "explicit_replacement",
  "icefall-style recipe launcher (CUDA_VISIBLE_DEVICES + NCCL env + ./zipformer/train.py --world-size)", [
    C("=export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C('export CUDA_VISIBLE_DEVICES="$gpus"', "env_var", "replace", True, 'export ASCEND_RT_VISIBLE_DEVICES="$gpus"',
      "without it every NPU is visible and ranks 0..N-1 land on the wrong cards"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* is ignored by HCCL; log-level mapping is approximate (unconfirmed)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no HCCL meaning; harmless leftover"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single-node job (mp.spawn on localhost), so the NIC choice does not matter here"),
    C('log "Using GPUs: $CUDA_VISIBLE_DEVICES (world size $world_size)"', "env_var", "replace", False,
      'log "Using NPUs: $ASCEND_RT_VISIBLE_DEVICES (world size $world_size)"', "log line only"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
    C('export CUDA_VISIBLE_DEVICES=$(echo "$gpus" | cut -d, -f1)', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES=$(echo "$gpus" | cut -d, -f1)', "decode stage device selection"),
])

E("icefall_prepare_sh", "egs/librispeech/ASR/prepare.sh", "explicit_replacement",
  "k2-fsa/icefall egs/librispeech/ASR/prepare.sh (lhotse data prep stages)", [
    C("CUDA_VISIBLE_DEVICES=$fbank_gpu ./local/compute_fbank_librispeech.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=$fbank_gpu ./local/compute_fbank_librispeech.py",
      "feature extraction falls back to CPU on an NPU host; only matters if the NPU extraction path is enabled"),
])

E("icefall_dockerfile", "docker/torch2.1.0-cuda12.1.dockerfile", "explicit_replacement",
  "k2-fsa/icefall docker/torch*-cuda*.dockerfile", [
    C("FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base matching torch-npu 2.1.0.post10 (CANN 8.0.0, knowledge §1.2); image name illustrative"),
    C("=RUN pip install --no-cache-dir \\", "import_torch_npu", "npu_only_addition", True,
      "      torch==2.1.0 torch-npu==2.1.0.post10 \\",
      "CPU torch + matching torch-npu wheel (wheel x.y.z must equal torch x.y.z)"),
    C('ARG TORCHAUDIO_VERSION="2.1.0+cu121"', "custom_cuda_extension", "replace", True,
      'ARG TORCHAUDIO_VERSION="2.1.0"', "+cu121 build needs the CUDA torch wheel; conflicts with CPU torch"),
    C("k2==${K2_VERSION}+cuda12.1.torch2.1.0 -f https://k2-fsa.github.io/k2/cuda.html", "custom_cuda_extension",
      "replace", True, "k2==${K2_VERSION}+cpu.torch2.1.0 -f https://k2-fsa.github.io/k2/cpu.html \\",
      "CUDA build of k2 cannot load against CPU torch; k2 has no NPU build (runs on CPU)"),
    C("kaldifeat==${KALDIFEAT_VERSION}+cuda12.1.torch2.1.0", "custom_cuda_extension", "replace", True,
      "kaldifeat==${KALDIFEAT_VERSION}+cpu.torch2.1.0 -f https://csukuangfj.github.io/kaldifeat/cpu.html \\",
      "CUDA build wheel, same reason as k2"),
    C("onnxruntime-gpu \\", "custom_cuda_extension", "replace", False, "onnxruntime \\",
      "CUDA EP is unusable on an NPU host (falls back to CPU EP); unconfirmed whether the -gpu wheel exists for aarch64"),
    C('RUN python3 -c "import k2; print(k2.version.with_cuda)"', "import_torch_npu", "replace", False,
      'RUN python3 -c "import torch, torch_npu; print(torch.npu.is_available())"',
      "prints False instead of failing; sanity check only"),
])

E("k2_environment_yml", "environment.yml", "explicit_replacement",
  "conda environment for a k2/icefall GPU setup (pytorch-cuda + k2-fsa channel)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel no longer needed"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "torch-npu only ships as a pip wheel; must match pytorch=2.1.0"),
    C("- pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
      "forces the CUDA variant of pytorch; torch_npu needs the CPU build"),
    C("- k2=1.24.4.dev20231220=cuda12.1_py3.10_torch2.1.0", "custom_cuda_extension", "replace", True,
      "  - k2=1.24.4.dev20231220=cpu_py3.10_torch2.1.0", "CUDA k2 build; k2 runs on CPU next to NPU"),
    C("=- cudnn", "torch_cuda_api", "removal", False, None, "CUDA-only library, unused"),
    C("=- nccl", "dist_backend", "removal", False, None, "NCCL unused; HCCL comes with CANN"),
    C("--find-links https://csukuangfj.github.io/kaldifeat/cuda.html", "custom_cuda_extension", "replace", True,
      "      - --find-links https://csukuangfj.github.io/kaldifeat/cpu.html", "CUDA wheel index"),
    C("kaldifeat==1.25.3.dev20231221+cuda12.1.torch2.1.0", "custom_cuda_extension", "replace", True,
      "      - kaldifeat==1.25.3.dev20231221+cpu.torch2.1.0", "CUDA build of a compiled extension"),
    C("onnxruntime-gpu==1.17.1", "custom_cuda_extension", "replace", False, "      - onnxruntime==1.17.1",
      "CUDA EP unusable on NPU host; CPU EP still works (unconfirmed aarch64 wheel availability)"),
    C("=- nvidia-ml-py", "device_capability_check", "removal", False, None,
      "pynvml has no NPU equivalent (knowledge §6); unused by the recipes"),
    C("=- gpustat", "device_capability_check", "removal", False, None, "NVIDIA-only monitoring tool"),
])

# ---------------------------------------------------------------- NeMo
E("nemo_rnnt_bpe_script", "examples/asr/asr_transducer/speech_to_text_rnnt_bpe.py", "device_branch_or_abstraction",
  "NVIDIA/NeMo examples/asr/asr_transducer/speech_to_text_rnnt_bpe.py (hydra + pl.Trainer + exp_manager)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "registers the npu device before Lightning builds the Trainer"),
])

E("nemo_fastconformer_yaml", "examples/asr/conf/fastconformer/fast-conformer_transducer_bpe.yaml",
  "explicit_replacement", "NVIDIA/NeMo examples/asr/conf/fastconformer/fast-conformer_transducer_bpe.yaml", [
    C("accelerator: gpu", "device_type", "replace", True,
      "accelerator: npu  # needs an NPU Accelerator registered with Lightning",
      "Lightning's gpu accelerator requires CUDA and raises on an NPU host"),
    C("=strategy: ddp", "dist_backend", "replace", False,
      "strategy: ddp  # with DDPStrategy(process_group_backend='hccl')",
      "Lightning only picks nccl for cuda root devices; hccl must be requested explicitly (unconfirmed: "
      "Lightning is not covered by the knowledge notes)"),
    C("precision: 16 # 16, 32, or bf16", "amp", "replace", False,
      "precision: 16-mixed  # with an NPU MixedPrecision plugin (device='npu')",
      "Lightning's 16-mixed plugin uses cuda autocast/GradScaler for non-CPU accelerators (unconfirmed)"),
    C("use_cuda_graph_decoder: true", "compile_mode", "replace", False, "use_cuda_graph_decoder: false",
      "the decoder only uses CUDA graphs when x.device.type == 'cuda'; on NPU it silently uses the torch loop"),
    C("use_pytorch_sdpa_backends: [FLASH_ATTENTION, EFFICIENT_ATTENTION]", "attention_kernel", "replace", False,
      "use_pytorch_sdpa_backends: []  # let torch_npu's SDPA choose its fused kernel",
      "CUDA SDPA backend selection (torch.backends.cuda.*sdp*) is marked unsupported on NPU (TSV); effect of "
      "sdpa_kernel on npu unconfirmed"),
    C('loss_name: "default"', "unsupported_op_workaround", "replace", False,
      'loss_name: "pytorch"  # numba CUDA RNN-T kernels cannot run on NPU',
      "either this or the resolver default in nemo/collections/asr/losses/rnnt.py (labelled required there)"),
])

E("nemo_rnnt_losses", "nemo/collections/asr/losses/rnnt.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/collections/asr/losses/rnnt.py (RNNT_LOSS_RESOLVER, numba warprnnt default)", [
    C("RNNT_LOSS_RESOLVER['default'] = RNNT_LOSS_RESOLVER['warprnnt_numba']", "unsupported_op_workaround",
      "add_branch", True,
      "RNNT_LOSS_RESOLVER['default'] = RNNT_LOSS_RESOLVER['pytorch' if hasattr(torch, 'npu') and torch.npu.is_available() else 'warprnnt_numba']",
      "numba's RNN-T loss only has CUDA kernels and a numpy CPU path; npu tensors reach the CPU path and fail. "
      "The pure-PyTorch loss runs on NPU (slow, memory-hungry)"),
])

E("nemo_transcribe_speech", "examples/asr/transcribe_speech.py", "device_branch_or_abstraction",
  "NVIDIA/NeMo examples/asr/transcribe_speech.py (cuda=/amp= config, map_location)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "registers the npu device"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU host: inference silently runs on CPU"),
    C("=accelerator = 'gpu'", "device_type", "replace", True,
      "accelerator = 'npu'  # requires an NPU accelerator registered with Lightning",
      "pl.Trainer(accelerator='gpu') raises without CUDA"),
    C("map_location = torch.device('cuda:0')", "device_type", "replace", True,
      "map_location = torch.device('npu:0')", "cuda device string"),
    C("accelerator = 'gpu'  # explicit device index", "device_type", "replace", True,
      "accelerator = 'npu'  # explicit device index", "same as above (cuda=N path)"),
    C("map_location = torch.device(f'cuda:{cfg.cuda}')", "device_type", "replace", True,
      "map_location = torch.device(f'npu:{cfg.cuda}')", "cuda device string"),
    C('can_use_bfloat16 = (not cfg.amp) and map_location.type == "cuda" and torch.cuda.is_bf16_supported()',
      "device_capability_check", "replace", False,
      'can_use_bfloat16 = (not cfg.amp) and map_location.type == "npu" and torch.npu.is_bf16_supported()',
      "short-circuits to False on NPU, so inference stays fp32; speed only"),
    C("with torch.amp.autocast('cuda' if torch.cuda.is_available() else 'cpu', dtype=amp_dtype, enabled=cfg.amp):",
      "amp", "replace", True,
      "with torch.amp.autocast('npu' if torch.npu.is_available() else 'cpu', dtype=amp_dtype, enabled=cfg.amp):",
      "would select CPU autocast on an NPU host, so amp=True is silently ignored for npu tensors"),
])

E("nemo_cast_utils", "nemo/utils/cast_utils.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/utils/cast_utils.py (avoid_float16_autocast_context, CastToFloat)", [
    C("if torch.is_autocast_enabled() and torch.get_autocast_gpu_dtype() == torch.bfloat16:", "amp", "replace",
      True, "if torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() == torch.bfloat16:",
      "no-arg is_autocast_enabled()/get_autocast_gpu_dtype() report CUDA autocast, so the fp32 guard silently "
      "never triggers under NPU autocast"),
    C("=return torch.cuda.amp.autocast(dtype=torch.float32)", "amp", "replace", True,
      "return torch.npu.amp.autocast(dtype=torch.float32)", "a CUDA autocast region does not change npu ops"),
    C("if torch.is_autocast_enabled() and torch.get_autocast_gpu_dtype() == torch.float16:", "amp", "replace",
      True, "if torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() == torch.float16:",
      "fp16-overflow guard used around attention; silently skipped under NPU autocast"),
    C("# bf16 autocast is not traceable", "amp", "replace", False,
      "return torch.npu.amp.autocast(dtype=torch.float32)  # bf16 autocast is not traceable",
      "jit tracing/scripting (export) path only"),
    C("if torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported():", "raises on an NPU host once the guard above is reachable"),
    C("return torch.cuda.amp.autocast(dtype=torch.bfloat16)", "amp", "replace", True,
      "return torch.npu.amp.autocast(dtype=torch.bfloat16)", "CUDA autocast region has no effect on npu ops"),
    C("# pre-Ampere GPUs", "amp", "replace", True, "return torch.npu.amp.autocast(dtype=torch.float32)",
      "same as above"),
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "forward-side: NPU autocast stays on inside, so the wrapped module is recast to fp16 despite .to(float32)"),
    C("# run wrapped module fully in fp32", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):  # run wrapped module fully in fp32", "same as above"),
])

E("nemo_mha", "nemo/collections/asr/parts/submodules/multi_head_attention.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/collections/asr/parts/submodules/multi_head_attention.py (torch SDPA with backend list)", [
    C("=if torch.is_autocast_enabled():", "amp", "replace", False,
      "if torch.is_autocast_enabled() or torch.npu.is_autocast_enabled():",
      "upcast is skipped under NPU autocast; the numerics guard proper is avoid_float16_autocast_context (cast_utils)"),
    C("=if self.use_pytorch_sdpa_backends:", "attention_kernel", "add_branch", False,
      "if self.use_pytorch_sdpa_backends and q.device.type == 'cuda':",
      "CUDA SDPA backend selection is marked unsupported on NPU (TSV: torch.backends.cuda.*sdp*); plain SDPA "
      "is supported on NPU. Behaviour of sdpa_kernel on npu unconfirmed"),
])

E("nemo_optimizers", "nemo/core/optim/optimizers.py", "explicit_replacement",
  "NVIDIA/NeMo nemo/core/optim/optimizers.py (AVAILABLE_OPTIMIZERS, apex FusedAdam/FusedLAMB)", [
    C("'adamw': optim.AdamW,", "fused_optimizer", "replace", False,
      "'adamw': torch_npu.optim.NpuFusedAdamW,",
      "msFmkTransplt performance advice (knowledge §3.5); faster but ~70% more optimizer memory"),
    C("=HAVE_APEX = False", "fused_optimizer", "add_branch", False,
      "AVAILABLE_OPTIMIZERS['lamb'] = torch_npu.optim.NpuFusedLamb  # NPU branch when NVIDIA apex is absent",
      "without it configs naming lamb/fused_adam fail with 'Cannot resolve optimizer'; the recipe here uses adamw"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "only matters once fused_adam is mapped to an NPU optimizer"),
])

E("nemo_label_looping", "nemo/collections/asr/parts/submodules/transducer_decoding/rnnt_label_looping.py",
  "explicit_replacement",
  "NVIDIA/NeMo rnnt_loop_labels_computer.py (label-looping greedy decoding with CUDA graphs / cuda-python)", [])

E("nemo_dockerfile", "Dockerfile", "explicit_replacement",
  "NVIDIA/NeMo Dockerfile (NGC pytorch base, apex, TransformerEngine, flash-attn, k2)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.01-py3", "import_torch_npu", "replace", True,
      "ARG BASE_IMAGE=ascendai/pytorch:2.1.0-cann8.0.0-ubuntu22.04  # any CANN + torch + matching torch-npu image",
      "NGC CUDA image cannot drive NPUs; image name illustrative"),
    C("--cuda_ext --fast_layer_norm", "custom_cuda_extension", "removal", True, None,
      "NVIDIA apex CUDA extensions need nvcc and the build fails; Ascend's apex is a separate patch (knowledge §6)"),
    C("NVTE_FRAMEWORK=pytorch NVTE_WITH_USERBUFFERS=1", "custom_cuda_extension", "removal", True, None,
      "TransformerEngine has no NPU build (knowledge §6); the build fails"),
    C("RUN pip install flash-attn", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU (knowledge §6)"),
    C("ENV NUMBA_CUDA_DRIVER=", "env_var", "removal", False, None, "points at libcuda; unused on NPU"),
    C("RUN rm -f /usr/local/lib/python3.10/dist-packages/torch/lib/libnvrtc*", "torch_cuda_api", "removal", False,
      None, "CUDA-image workaround; no-op elsewhere (rm -f)"),
])

E("nemo_requirements", "requirements/requirements.txt", "explicit_replacement",
  "NVIDIA/NeMo requirements/requirements.txt", [
    C('=numba-cuda>=0.15.1 ; platform_system != "Darwin"', "custom_cuda_extension", "replace", False,
      'numba>=0.57 ; platform_system != "Darwin"',
      "CUDA target of numba is unusable on NPU; installs fine (pulls numba) so not required"),
    C("=torch", "import_torch_npu", "npu_only_addition", True,
      "torch-npu  # same x.y.z as torch, e.g. torch==2.1.0 with torch-npu==2.1.0.post10",
      "torch-npu pin; torch must be pinned to the matching version too (knowledge §1.1)"),
    C("cuda-python>=12.3", "compile_mode", "removal", False, None,
      "only used for CUDA-graph conditional nodes, which are guarded by an import check"),
])

E("nemo_slurm_launcher", "examples/asr/scripts/train_fastconformer_slurm.sh", "explicit_replacement",
  "multi-node Slurm launcher for NeMo FastConformer training (srun + NCCL env)", [
    C("#SBATCH --gpus-per-node=8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "GRES name depends on how the site's Slurm declares NPUs (unconfirmed)"),
    C("=#SBATCH --output=logs/%x-%j.out", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "ignored by HCCL; log-level mapping approximate (unconfirmed)"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "no HCCL meaning"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
      "multi-node: HCCL otherwise picks the host NIC by name order and link setup to the root can fail "
      "(knowledge ascend-distributed §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable; default is already 1 (knowledge ascend-distributed §1)"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL-only"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only, no effect"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator tuning only; NPU variable documented (knowledge §1.6)"),
    C("trainer.accelerator=gpu \\", "device_type", "replace", True, "trainer.accelerator=npu \\",
      "overrides the YAML; gpu accelerator raises without CUDA"),
    C("trainer.strategy=ddp \\", "dist_backend", "replace", False,
      "trainer.strategy=ddp \\  # + process_group_backend=hccl", "see the YAML label (unconfirmed)"),
    C("trainer.precision=bf16 \\", "amp", "replace", False, "trainer.precision=bf16-mixed \\  # NPU precision plugin",
      "see the YAML label (unconfirmed)"),
])

# ---------------------------------------------------------------- sherpa / onnx
E("sherpa_streaming_server", "sherpa/bin/streaming_server.py", "transfer_to_npu",
  "k2-fsa/sherpa sherpa/bin/streaming_server.py (websocket server, TorchScript model, --use-gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "port style: transfer_to_npu rewrites torch.cuda.*, device kwargs and map_location, so the cuda device "
      "strings/calls in this file need no edit; only what it does not cover is labelled"),
    C('torch.cuda.nvtx.range_push(f"nn-batch-{len(stream_list)}")', "torch_cuda_api", "replace", True,
      'nvtx_id = torch_npu.npu.mstx.range_start(f"nn-batch-{len(stream_list)}")',
      "torch.cuda.nvtx is not redirected by transfer_to_npu (knowledge §2.1) and raises without CUDA (--nvtx)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(nvtx_id)",
      "same as above"),
    C('stats["gpu_mem_util"] = torch.cuda.memory_usage(self.device)', "torch_cuda_api", "replace", True,
      'stats["gpu_mem_util"] = 100 * (1 - torch.cuda.mem_get_info(self.device)[0] / torch.cuda.mem_get_info(self.device)[1])',
      "torch.cuda.memory_usage is not in torch_npu.npu.__all__ and is unsupported on NPU (TSV); self.device keeps "
      "type 'cuda' (torch.device itself is not patched), so this branch is reached on every /stats request"),
])

E("icefall_benchmark_rtf", "egs/librispeech/ASR/zipformer/benchmark_rtf.py", "explicit_replacement",
  "icefall-style GPU RTF / memory benchmark with cuda Events and torch.profiler", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "registers the npu device"),
    C("from torch.profiler import ProfilerActivity, profile, record_function", "torch_cuda_api", "replace", True,
      "from torch_npu.profiler import ProfilerActivity, profile; from torch.profiler import record_function",
      "torch.profiler.ProfilerActivity is unsupported on NPU; torch_npu.profiler is the NPU form (TSV)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "raises on NPU host"),
    C("torch.cuda.set_device(params.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(params.gpu)",
      "CUDA call"),
    C('device = torch.device(f"cuda:{params.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{params.gpu}")', "cuda device string"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "CUDA call"),
    C('f"SM {props.major}.{props.minor}, {props.multi_processor_count} SMs"', "device_capability_check",
      "replace", True, 'f"{props.cube_core_num} cube cores, {props.vector_core_num} vector cores"',
      "NPU device properties have no major/minor/multi_processor_count (knowledge §2.8)"),
    C("with torch.cuda.amp.autocast(enabled=params.use_fp16):", "amp", "replace", True,
      'with torch.autocast("npu", enabled=params.use_fp16):', "fp16 benchmark would silently run fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "CUDA call"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "rejects a non-cuda device / no CUDA"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "same"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "CUDA call"),
    C("peak_mem = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated(device) / 2**20", "rejects an npu device"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "no device timeline would be collected"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().synchronize()", "CUDA call"),
    C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))', "torch_cuda_api", "removal",
      True, None, "key_averages() is unsupported on NPU (TSV); read ASCEND_PROFILER_OUTPUT/op_statistic.csv instead"),
])

E("icefall_onnx_gpu", "egs/librispeech/ASR/zipformer/onnx_pretrained_gpu.py", "explicit_replacement",
  "icefall onnx_pretrained.py variant using onnxruntime-gpu CUDAExecutionProvider + io_binding", [
    C('choices=["cpu", "cuda"],', "device_type", "replace", False, 'choices=["cpu", "cuda", "cann"],',
      "pairs with the branch below"),
    C('if provider == "cuda" and "CUDAExecutionProvider" in available:', "device_type", "add_branch", False,
      'elif provider == "cann" and "CANNExecutionProvider" in available:  # onnxruntime built with the CANN EP',
      "unchanged code falls back to CPUExecutionProvider on an NPU host and still decodes; CANN EP unconfirmed "
      "in the knowledge notes"),
])
