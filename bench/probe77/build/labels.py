"""Labels for probe77 (hand-written synthetic upstream files; see ../README.md).

Domain: text-to-speech and voice cloning (Coqui TTS / XTTS, StyleTTS2, F5-TTS, CosyVoice, GPT-SoVITS,
Piper / VITS training, their inference servers).

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

IMPORT_NOTE = ("torch.npu.* / 'npu' devices need torch_npu loaded (explicit import recommended even with "
               "the 2.5.1+ autoload)")

# ---------------------------------------------------------------------------------------------------------
# Coqui TTS / XTTS
# ---------------------------------------------------------------------------------------------------------

E("coqui_synthesizer", "TTS/utils/synthesizer.py", "device_branch_or_abstraction",
  "coqui-ai/TTS utils/synthesizer.py (use_cuda flag, .cuda() on tts / vocoder / vc models)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('assert torch.cuda.is_available(), "CUDA is not availabe on this machine."', "torch_cuda_api", R, True,
      'assert torch.cuda.is_available() or torch.npu.is_available(), "no GPU/NPU on this machine."',
      "use_cuda=True on an NPU host trips this assert (no CUDA build); the flag has to mean 'accelerator'"),
    C("self.vc_model.cuda()", "tensor_to_device", R, True, "self.vc_model.to(self.device)",
      "Module.cuda() needs a CUDA build; move to the selected accelerator device instead"),
    C("self.tts_model.cuda()  # fairseq MMS", "tensor_to_device", R, True,
      "self.tts_model.to(self.device)  # fairseq MMS", "same .cuda() on the fairseq (MMS) VITS loader"),
    C("self.tts_model.cuda()  # multi-file", "tensor_to_device", R, True,
      "self.tts_model.to(self.device)  # multi-file models such as XTTS", "same .cuda() on the directory loader"),
    C("=self.tts_model.cuda()", "tensor_to_device", R, True, "self.tts_model.to(self.device)",
      "same .cuda() on the single-checkpoint loader"),
    C("self.vocoder_model.cuda()", "tensor_to_device", R, True, "self.vocoder_model.to(self.device)",
      "vocoder moved with .cuda()"),
    C('vocoder_device = "cuda"', "device_type", R, True, "vocoder_device = self.device",
      "hard-coded 'cuda' device for the vocoder input; fails without CUDA"),
])

E("xtts_gpt", "TTS/tts/layers/xtts/gpt.py", "explicit_replacement",
  "coqui-ai/TTS tts/layers/xtts/gpt.py (XTTS GPT-2 decoder, DeepSpeed kernel-injected inference)", [
    C("replace_with_kernel_inject=True,", "distributed_framework", R, False,
      "replace_with_kernel_inject=False,  # DeepSpeed's CUDA inference kernels are not built for NPU",
      "only reached with load_checkpoint(use_deepspeed=True); DeepSpeed's CUDA inference kernels (kernel "
      "injection) are not available on NPU, so a port disables injection / deepspeed there"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=False):',
      "fp32 island for the perceiver resampler: disabling CUDA autocast leaves an enclosing NPU autocast "
      "active, so the resampler would run in fp16 on NPU"),
])

E("xtts_ft_demo", "TTS/demos/xtts_ft_demo/xtts_demo.py", "device_branch_or_abstraction",
  "coqui-ai/TTS demos/xtts_ft_demo/xtts_demo.py (gradio fine-tune demo, faster-whisper dataset formatter)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()",
      "guarded by torch.cuda.is_available(), so on NPU the cache is simply never released between steps "
      "(memory only)"),
    C("XTTS_MODEL.cuda()", "tensor_to_device", R, True, "XTTS_MODEL.to(device)",
      "behind `if torch.cuda.is_available()`: on an NPU host the fine-tuned model silently stays on the CPU"),
    C('asr_model = WhisperModel("large-v2", device=device, compute_type="float16")',
      "unsupported_op_workaround", R, False,
      'asr_model = WhisperModel("large-v2", device="cpu", compute_type="int8")',
      "unconfirmed: faster-whisper / CTranslate2 has no NPU backend; on an NPU host device falls to cpu "
      "where a float16 compute type is not the right choice (int8 / float32, or switch to an NPU ASR)"),
])

E("xtts_streaming_server", "server/main.py", "device_branch_or_abstraction",
  "coqui-ai/xtts-streaming-server server/main.py (FastAPI streaming XTTS server)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("cuda" if torch.cuda.is_available() else "npu" if torch.npu.is_available() else "cpu")',
      "NPU host is served from the CPU"),
    C('if not torch.cuda.is_available() and device == "cuda":', "torch_cuda_api", R, False,
      'if device.type == "cpu" and os.environ.get("REQUIRE_ACCELERATOR") == "1":',
      "sanity guard that can never fire once the device line is ported; kept meaningful for npu"),
])

E("xtts_server_dockerfile", "server/Dockerfile", "explicit_replacement",
  "xtts-streaming-server Dockerfile (pytorch CUDA base image, DeepSpeed inference kernels prebuilt)", [
    C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel AS base", "device_type", R, True,
      "FROM ascendai/pytorch:2.1.0-ubuntu22.04 AS base  # CANN + torch + torch_npu",
      "CUDA build of torch with no CANN / torch_npu: nothing in the image can reach the NPU"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "NVIDIA container-runtime variable; the Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (ignored, "
      "not harmful, on an Ascend host)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None,
      "NVIDIA container-runtime only; no effect on Ascend"),
    C("ENV DS_BUILD_TRANSFORMER_INFERENCE=1", "custom_cuda_extension", X, True, None,
      "asks DeepSpeed to prebuild its CUDA transformer-inference op at install time: needs nvcc, fails "
      "in an Ascend image"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0"', "env_var", X, False, None,
      "CUDA arch list for the kernel build; meaningless without nvcc"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", R, True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "device selection variable the NPU runtime does not read (ASCEND_RT_VISIBLE_DEVICES)"),
])

# ---------------------------------------------------------------------------------------------------------
# coqui-ai/Trainer
# ---------------------------------------------------------------------------------------------------------

E("trainer_distribute", "trainer/distribute.py", "explicit_replacement",
  "coqui-ai/Trainer trainer/distribute.py (one subprocess per GPU, CUDA_VISIBLE_DEVICES handed down)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", R, True,
      'if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:',
      "reads the CUDA visibility variable; the NPU runtime uses ASCEND_RT_VISIBLE_DEVICES"),
    C('gpus = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", R, True,
      'gpus = os.environ["ASCEND_RT_VISIBLE_DEVICES"]', "same variable"),
    C("range(torch.cuda.device_count())", "torch_cuda_api", R, True,
      'gpus = ",".join(str(i) for i in range(torch.npu.device_count()))',
      "device_count() is 0 without CUDA, so the launcher exits with 'No GPU found'"),
    C('my_env["CUDA_VISIBLE_DEVICES"]', "env_var", R, True,
      'my_env["ASCEND_RT_VISIBLE_DEVICES"] = f"{\',\'.join(gpus)}"',
      "children would see every NPU, so a --gpus '2,3' selection lands on NPUs 0,1"),
])

E("trainer_generic_utils", "trainer/generic_utils.py", "device_branch_or_abstraction",
  "coqui-ai/Trainer trainer/generic_utils.py (to_cuda, get_cuda, setup_torch_training_env)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if is_accelerator_available():",
      "to_cuda(): on NPU the batch is silently left on the CPU"),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", R, True, "x = x.to(get_device(), non_blocking=True)",
      "Tensor.cuda() needs CUDA"),
    C("=use_cuda = torch.cuda.is_available()", "torch_cuda_api", R, True,
      "use_cuda = torch.cuda.is_available() or torch.npu.is_available()",
      "get_cuda() reports no accelerator on an NPU host"),
    C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", R, True,
      'device = torch.device(("cuda:0" if torch.cuda.is_available() else "npu:0") if use_cuda else "cpu")',
      "hard-coded cuda:0 device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context"),
    C("torch.cuda.manual_seed(training_seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(training_seed)",
      "lazily queued on a CPU-only build, harmless; NPU generator left unseeded (torch.manual_seed seeds it "
      "as well on recent torch_npu)"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: the trainer treats the run as CPU-only"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)",
      "raises without a CUDA build"),
    C("use_cuda = torch.cuda.is_available() and num_gpus > 0", "torch_cuda_api", R, True,
      "use_cuda = (torch.cuda.is_available() or torch.npu.is_available()) and num_gpus > 0",
      "use_cuda drives every .cuda() / autocast decision in the Trainer; False on NPU"),
])

E("trainer_core", "trainer/trainer.py", "device_branch_or_abstraction",
  "coqui-ai/Trainer trainer/trainer.py (TrainerConfig nccl default, GradScaler, autocast device args)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('distributed_backend: str = field(default="nccl"', "dist_backend", R, True,
      'distributed_backend: str = field(default="hccl" if is_npu_available() else "nccl", metadata={...})',
      "NCCL default for init_distributed"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      'self.scaler = torch.amp.GradScaler("npu" if is_npu_available() else "cuda")',
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 runs with no loss scaling"),
    C("=self.model.cuda()", "tensor_to_device", R, True, "self.model.to(self.device)", "Module.cuda()"),
    C("=criterion.cuda()", "tensor_to_device", R, True, "criterion.to(self.device)", "criterion list .cuda()"),
    C("=self.criterion.cuda()", "tensor_to_device", R, True, "self.criterion.to(self.device)", "criterion .cuda()"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "_get_autocast_args: on NPU falls through to CPU autocast (bf16), which does nothing for NPU tensors"),
    C('=device = "cuda"', "amp", R, True, 'device = "cuda" if torch.cuda.is_available() else "npu"',
      "autocast device_type must be 'npu' for NPU tensors"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "torch.npu.max_memory_allocated()", "memory statistic for the log line, guarded by use_cuda"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory only"),
])

# ---------------------------------------------------------------------------------------------------------
# VITS / monotonic alignment search
# ---------------------------------------------------------------------------------------------------------

E("vits_train", "train.py", "explicit_replacement",
  "jaywalnut310/vits train.py (mp.spawn + NCCL, torch.cuda.amp, .cuda(rank) batches)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", R, True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "CUDA autocast is inactive for NPU tensors and the CUDA GradScaler disables itself: fp16_run trains "
      "without autocast or loss scaling"),
    C('assert torch.cuda.is_available(), "CPU training is not allowed."', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "CPU training is not allowed."', "fails on an NPU host"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "0 without CUDA: mp.spawn(nprocs=0)"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", R, True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=n_gpus, rank=rank)", "NCCL"),
    C("torch.manual_seed(hps.train.seed)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "variable text / spectrogram lengths per bucket: binary (non-JIT) kernels avoid recompiling per shape"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", "raises without CUDA"),
    C("**hps.model).cuda(rank)", "tensor_to_device", R, True, "**hps.model).npu(rank)", "generator .cuda(rank)"),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank)", "tensor_to_device", R, True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank)", "discriminator .cuda(rank)"),
    C("optim_g = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_g = torch_npu.optim.NpuFusedAdamW(",
      "performance only (tensor-fused AdamW)"),
    C("optim_d = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_d = torch_npu.optim.NpuFusedAdamW(",
      "performance only"),
    C("x, x_lengths = x.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "x, x_lengths = x.npu(rank, non_blocking=True), x_lengths.npu(rank, non_blocking=True)", "batch .cuda(rank)"),
    C("spec, spec_lengths = spec.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec, spec_lengths = spec.npu(rank, non_blocking=True), spec_lengths.npu(rank, non_blocking=True)",
      "batch .cuda(rank)"),
    C("y, y_lengths = y.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "y, y_lengths = y.npu(rank, non_blocking=True), y_lengths.npu(rank, non_blocking=True)", "batch .cuda(rank)"),
    C("x, x_lengths = x.cuda(0), x_lengths.cuda(0)", "tensor_to_device", R, True,
      "x, x_lengths = x.npu(0), x_lengths.npu(0)", "eval batch .cuda(0)"),
    C("spec, spec_lengths = spec.cuda(0), spec_lengths.cuda(0)", "tensor_to_device", R, True,
      "spec, spec_lengths = spec.npu(0), spec_lengths.npu(0)", "eval batch .cuda(0)"),
    C("y, y_lengths = y.cuda(0), y_lengths.cuda(0)", "tensor_to_device", R, True,
      "y, y_lengths = y.npu(0), y_lengths.npu(0)", "eval batch .cuda(0)"),
])

E("mas_triton", "super_monotonic_align/core.py", "explicit_replacement",
  "supertone-inc/super-monotonic-align core.py (Triton monotonic alignment search for VITS-family models)", [
    C("num_warps = _pick_num_warps(BLOCK_SIZE_X)", "triton_kernel_tuning", R, False,
      "num_warps = 1  # triton-ascend: one program per batch row, warps are not the unit of parallelism",
      "unconfirmed: warp counts tuned for A100/4090; triton-ascend maps programs to AI cores differently"),
    C("with torch.cuda.device(value.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(value.device.index):",
      "torch.cuda.device(idx) initialises CUDA on entry: fails on an NPU host"),
    C("num_warps=4, num_stages=1)", "triton_kernel_tuning", R, False,
      "_mask_neg_cent[grid](neg_cent, mask, T, S, max_neg_val, BLOCK_SIZE=BLOCK_SIZE)",
      "unconfirmed: CUDA warp / pipeline-stage hints for triton-ascend"),
    C("assert value.is_cuda,", "device_type", R, True,
      'assert value.device.type in ("cuda", "npu"), "super_monotonic_align needs accelerator tensors"',
      "NPU tensors report is_cuda False, so every call asserts"),
])

E("mas_cuda_setup", "monotonic_align/setup.py", "device_branch_or_abstraction",
  "monotonic_align setup.py building the Cython MAS plus an optional CUDAExtension kernel", [
    C("build_cuda = (torch.cuda.is_available() or", "custom_cuda_extension", B, False,
      'build_npu = os.environ.get("BUILD_NPU", "0") == "1"  # Ascend C kernel via torch_npu NpuExtension',
      "clean fallback: without CUDA only the Cython DP is built and works on NPU hosts (CPU DP); an NPU "
      "kernel would be performance only"),
    C("CUDAExtension(", "custom_cuda_extension", B, False,
      'NpuExtension(name="_npu_mas", sources=["csrc/mas_npu.cpp"])',
      "the .cu kernel has no NPU path; optional Ascend C port (torch_npu.utils.cpp_extension.NpuExtension)"),
])

# ---------------------------------------------------------------------------------------------------------
# StyleTTS2
# ---------------------------------------------------------------------------------------------------------

E("styletts2_train_second", "train_second.py", "explicit_replacement",
  "yl4579/StyleTTS2 train_second.py (MyDataParallel over a dict of modules, device='cuda')", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("class MyDataParallel(torch.nn.DataParallel):", "unsupported_op_workaround", R, True,
      "class MyDataParallel(torch.nn.Module):  # thin wrapper keeping .module; DataParallel is unsupported on NPU",
      "torch.nn.DataParallel is marked unsupported (✘) on Ascend; every module of the dict is wrapped in it"),
    C("device = 'cuda'", "device_type", R, True, "device = 'npu'", "hard-coded CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory only"),
])

E("styletts2_models", "models.py", "explicit_replacement",
  "yl4579/StyleTTS2 models.py (TextEncoder / DurationEncoder / ProsodyPredictor on packed LSTMs)", [
    C("pack_padded_sequence(x, input_lengths, batch_first=True, enforce_sorted=False)", "unsupported_op_workaround",
      R, True, "x = x.masked_fill(m.transpose(1, 2), 0.0)  # run the LSTM on the padded batch",
      "pack_padded_sequence is marked unsupported on Ascend; replace packing by masking"),
    C("=x, _ = nn.utils.rnn.pad_packed_sequence(", "unsupported_op_workaround", R, True,
      "# (no unpacking needed: the LSTM ran on the padded tensor)", "pad_packed_sequence is marked unsupported"),
    C("=x = nn.utils.rnn.pack_padded_sequence(", "unsupported_op_workaround", R, True,
      "x = x.masked_fill(masks.unsqueeze(-1), 0.0)", "DurationEncoder packing"),
    C("pad_packed_sequence(x, batch_first=True)  # (B, T, C)", "unsupported_op_workaround", R, True,
      "# padded output already (B, T, C)", "DurationEncoder unpacking"),
    C("pack_padded_sequence(d, input_lengths", "unsupported_op_workaround", R, True,
      "x = d.masked_fill(m.squeeze(1).unsqueeze(-1), 0.0)", "ProsodyPredictor packing"),
    C("=x, _ = nn.utils.rnn.pad_packed_sequence(x, batch_first=True)", "unsupported_op_workaround", R, True,
      "# padded output already", "ProsodyPredictor unpacking"),
])

E("styletts2_config", "Configs/config.yml", "explicit_replacement",
  "yl4579/StyleTTS2 Configs/config.yml (device and accelerate launch settings)", [
    C('device: "cuda"', "device_type", R, True, 'device: "npu"',
      "device string read by the training / fine-tuning scripts"),
    C('ddp_backend: "nccl"', "dist_backend", R, True, 'ddp_backend: "hccl"',
      "process-group backend handed to accelerate (InitProcessGroupKwargs)"),
])

# ---------------------------------------------------------------------------------------------------------
# F5-TTS / BigVGAN
# ---------------------------------------------------------------------------------------------------------

E("f5_infer_utils", "src/f5_tts/infer/utils_infer.py", "device_branch_or_abstraction",
  "SWivid/F5-TTS infer/utils_infer.py (cuda/xpu/mps/cpu device chain, sm70 fp16 test)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available()", "device_type", B, True,
      'if torch.cuda.is_available()\n    else "npu"\n    if torch.npu.is_available()',
      "device chain has no npu branch: an NPU host runs model, vocoder and ASR on the CPU"),
    C("=and torch.cuda.get_device_properties(device).major >= 7", "device_capability_check", R, False,
      'if device.startswith(("cuda", "npu")) and (device.startswith("npu") or torch.cuda.get_device_properties(device).major >= 7)',
      "fp16 test for the Whisper ASR pipeline; short-circuited by '\"cuda\" in device' on NPU (runs fp32); "
      "NPU device properties carry no major/minor"),
    C("major >= 7  # fp16 checkpoints need sm70+", "device_capability_check", R, False,
      '(device.startswith("npu") or torch.cuda.get_device_properties(device).major >= 7)',
      "same compute-capability test for the checkpoint dtype; NPU would load fp32 weights (slower)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("f5_trainer", "src/f5_tts/model/trainer.py", "device_branch_or_abstraction",
  "SWivid/F5-TTS model/trainer.py (accelerate + EMA, optional bitsandbytes AdamW8bit)", [
    C("self.optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=learning_rate)", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=learning_rate)",
      "unconfirmed: only with bnb_optimizer=True; bitsandbytes 8-bit optimizers are not listed for NPU"),
    C("self.optimizer = AdamW(model.parameters(), lr=learning_rate)", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=learning_rate)",
      "performance only"),
])

E("f5_modules_attn", "src/f5_tts/model/modules.py", "device_branch_or_abstraction",
  "SWivid/F5-TTS model/modules.py (AttnProcessor with torch SDPA / flash_attn backends, x_transformers RoPE)", [
    C("query = apply_rotary_pos_emb(query, freqs, q_xpos_scale)", "npu_fused_op", R, False,
      'query = torch_npu.npu_rotary_mul(query, cos, sin, rotary_mode="interleave")',
      "performance only: fused RoPE (x_transformers rotates interleaved pairs)"),
    C("x = flash_attn_varlen_func(", "attention_kernel", R, False,
      'x = torch_npu.npu_fusion_attention(query, key, value, attn.heads, "TND", actual_seq_qlen=..., actual_seq_kvlen=...)[0]',
      "only with attn_backend='flash_attn' (default 'torch' uses SDPA); flash-attn cannot be installed on NPU"),
    C("x = flash_attn_func(query, key, value, dropout_p=0.0, causal=False)", "attention_kernel", R, False,
      'x = torch_npu.npu_fusion_attention(query, key, value, attn.heads, "BSND", scale=head_dim ** -0.5)[0]',
      "same, unmasked branch"),
])

E("bigvgan_cuda_load", "alias_free_activation/cuda/load.py", "explicit_replacement",
  "NVIDIA/BigVGAN alias_free_activation/cuda/load.py (JIT nvcc build of the anti-alias activation kernel)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None,
      "import-time CUDA arch setting; meaningless without nvcc"),
    C("_get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension", R, True,
      'raise RuntimeError("use_cuda_kernel is CUDA-only; use the torch Activation1d on NPU")',
      "CUDA_HOME is None on an NPU host: the nvcc version probe crashes"),
    C("return cpp_extension.load(", "custom_cuda_extension", R, True,
      "return None  # no NPU build of anti_alias_activation_cuda",
      "cpp_extension.load of .cu sources is marked unsupported on Ascend"),
])

E("bigvgan_model", "bigvgan.py", "device_branch_or_abstraction",
  "NVIDIA/BigVGAN bigvgan.py (use_cuda_kernel switch between torch and CUDA Activation1d)", [
    C('self.h["use_cuda_kernel"] = use_cuda_kernel', "custom_cuda_extension", R, False,
      'self.h["use_cuda_kernel"] = use_cuda_kernel and torch.cuda.is_available()',
      "only an issue when a caller passes use_cuda_kernel=True (F5 / GPT-SoVITS pass False); clamp it so "
      "the torch Activation1d is used on NPU"),
])

# ---------------------------------------------------------------------------------------------------------
# CosyVoice
# ---------------------------------------------------------------------------------------------------------

E("cosyvoice_model", "cosyvoice/cli/model.py", "device_branch_or_abstraction",
  "FunAudioLLM/CosyVoice cli/model.py (LLM thread on a side CUDA stream, fp16 autocast, TensorRT estimator)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "self.device = torch.device('cuda' if torch.cuda.is_available() else 'npu' if torch.npu.is_available() else 'cpu')",
      "LLM / flow / HiFT run on the CPU on an NPU host"),
    C("=self.llm_context = torch.cuda.stream(torch.cuda.Stream(self.device)) if torch.cuda.is_available() else nullcontext()",
      "torch_cuda_api", R, False,
      "self.llm_context = torch.npu.stream(torch.npu.Stream(self.device)) if self.device.type == 'npu' else nullcontext()",
      "falls back to nullcontext: the LLM thread shares the default stream with flow/HiFT (throughput only)"),
    C("import tensorrt as trt", "custom_cuda_extension", R, False,
      'raise NotImplementedError("TensorRT is NVIDIA-only; keep the torch estimator on NPU")',
      "only with load_trt=True; TensorRT engines cannot run on Ascend"),
    C("with self.llm_context, torch.cuda.amp.autocast(self.fp16 is True and", "amp", R, True,
      "with self.llm_context, torch.autocast(self.device.type, enabled=self.fp16 is True and hasattr(self.llm, 'vllm') is False):",
      "fp16=True halves the LLM; CUDA autocast is inactive for NPU tensors so fp32 embeddings meet fp16 weights"),
    C("with torch.cuda.amp.autocast(self.fp16):", "amp", R, True,
      "with torch.autocast(self.device.type, enabled=self.fp16):", "same for the flow decoder"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "guarded by torch.cuda.is_available(); never runs on NPU (memory only)"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, False,
      "torch.npu.current_stream().synchronize()", "same guard"),
    C("else 'cpu')  # CosyVoice2", "device_type", R, True,
      "self.device = torch.device('cuda' if torch.cuda.is_available() else 'npu' if torch.npu.is_available() else 'cpu')  # CosyVoice2",
      "CosyVoice2Model repeats the device choice"),
    C("else nullcontext()  # CosyVoice2", "torch_cuda_api", R, False,
      "self.llm_context = torch.npu.stream(torch.npu.Stream(self.device)) if self.device.type == 'npu' else nullcontext()  # CosyVoice2",
      "throughput only"),
])

E("cosyvoice_frontend", "cosyvoice/cli/frontend.py", "device_branch_or_abstraction",
  "FunAudioLLM/CosyVoice cli/frontend.py (onnxruntime campplus + speech tokenizer, text frontend)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, False,
      "self.device = torch.device('cuda' if torch.cuda.is_available() else 'npu' if torch.npu.is_available() else 'cpu')",
      "frontend tensors stay on the CPU on NPU; CosyVoiceModel moves every input with .to(self.device), so "
      "results are correct (consistency / one host copy less)"),
    C('providers=["CUDAExecutionProvider" if torch.cuda.is_available() else', "device_type", R, False,
      'providers=["CANNExecutionProvider" if use_npu else "CUDAExecutionProvider" if torch.cuda.is_available() else',
      "unconfirmed: onnxruntime CANN execution provider not in the knowledge base; the CPU provider works"),
])

E("cosyvoice_train_utils", "cosyvoice/utils/train_utils.py", "explicit_replacement",
  "FunAudioLLM/CosyVoice utils/train_utils.py (torch_ddp / deepspeed engines, int LOCAL_RANK device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("assert (torch.cuda.is_available())", "torch_cuda_api", R, True, "assert (torch.npu.is_available())",
      "torch_ddp engine refuses to start on NPU"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "Module.cuda()"),
    C("device = int(os.environ.get('LOCAL_RANK', 0))", "tensor_to_device", R, True,
      "device = torch.device('npu', int(os.environ.get('LOCAL_RANK', 0)))",
      "an int device handed to model(batch, device) -> tensor.to(int) means cuda:N"),
    C("autocast = torch.cuda.amp.autocast(enabled=scaler is not None, dtype=dtype)", "amp", R, True,
      "autocast = torch.autocast('npu', enabled=scaler is not None, dtype=dtype)", "CUDA autocast inactive on NPU"),
    C("autocast = torch.cuda.amp.autocast(enabled=True, dtype=dtype, cache_enabled=False)", "amp", R, True,
      "autocast = torch.autocast('npu', enabled=True, dtype=dtype, cache_enabled=False)",
      "deepspeed engine path, same issue"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA"),
])

E("cosyvoice_run_sh", "examples/libritts/cosyvoice/run.sh", "explicit_replacement",
  "FunAudioLLM/CosyVoice examples/libritts/cosyvoice/run.sh (torchrun recipe)", [
    C("CUDA_VISIBLE_DEVICES=0 tools/extract_speech_token.py", "env_var", R, False,
      "ASCEND_RT_VISIBLE_DEVICES=0 tools/extract_speech_token.py --dir data/$x \\",
      "onnxruntime speech tokenizer; on NPU it runs on the CPU provider, the variable has no effect"),
    C('export CUDA_VISIBLE_DEVICES="0,1,2,3"', "env_var", R, True, 'export ASCEND_RT_VISIBLE_DEVICES="0,1,2,3"',
      "NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C("num_gpus=$(echo $CUDA_VISIBLE_DEVICES", "env_var", R, True,
      "num_gpus=$(echo $ASCEND_RT_VISIBLE_DEVICES | awk -F \",\" '{print NF}')",
      "process count derived from the CUDA variable"),
    C('dist_backend="nccl"', "dist_backend", R, True, 'dist_backend="hccl"', "NCCL"),
])

E("cosyvoice_requirements", "requirements.txt", "explicit_replacement",
  "FunAudioLLM/CosyVoice requirements.txt (cu121 wheels, onnxruntime-gpu, TensorRT cu12)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA torch wheels; torch_npu pairs with the CPU (x86) / PyPI (aarch64) torch build"),
    C("=torch==2.3.1", "import_torch_npu", A, True, "torch-npu==2.3.1.post6",
      "torch_npu wheel matching torch 2.3.1 exactly (v2.3.1-7.0.0)"),
    C("--extra-index-url https://aiinfra.pkgs.visualstudio.com", "custom_cuda_extension", X, False, None,
      "onnxruntime CUDA 12 package index; useless on Ascend"),
    C("onnxruntime-gpu==1.18.0; sys_platform == 'linux'", "custom_cuda_extension", R, False,
      "onnxruntime==1.18.0; sys_platform == 'linux'",
      "unconfirmed: CUDA build of onnxruntime; wheel availability on aarch64 Ascend hosts not checked"),
    C("tensorrt-cu12==10.0.1", "custom_cuda_extension", X, False, None,
      "TensorRT (load_trt=True only) is NVIDIA-only"),
    C("tensorrt-cu12-bindings==10.0.1", "custom_cuda_extension", X, False, None, "TensorRT"),
    C("tensorrt-cu12-libs==10.0.1", "custom_cuda_extension", X, False, None, "TensorRT"),
])

# ---------------------------------------------------------------------------------------------------------
# GPT-SoVITS
# ---------------------------------------------------------------------------------------------------------

E("gptsovits_config", "config.py", "device_branch_or_abstraction",
  "RVC-Boss/GPT-SoVITS config.py (per-GPU device / dtype pick from compute capability and name)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('cuda = torch.device(f"cuda:{idx}")', "device_type", R, True,
      'cuda = torch.device(f"npu:{idx}") if torch.npu.is_available() else torch.device(f"cuda:{idx}")',
      "hard-coded cuda device per index"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "NPU host gets cpu + fp32 for training and inference"),
    C("capability = torch.cuda.get_device_capability(device_idx)", "device_capability_check", R, True,
      'capability = (8, 0) if torch.npu.is_available() else torch.cuda.get_device_capability(device_idx)',
      "compute capability drives fp16 / CPU choice; None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("name = torch.cuda.get_device_name(device_idx)", "torch_cuda_api", R, True,
      "name = torch.npu.get_device_name(device_idx)", "raises without CUDA"),
    C("mem_bytes = torch.cuda.get_device_properties(device_idx).total_memory", "torch_cuda_api", R, True,
      "mem_bytes = torch.npu.get_device_properties(device_idx).total_memory",
      "total_memory is one of the properties NPU does report"),
    C("major, minor = capability", "device_capability_check", R, True,
      "major, minor = capability if capability else (8, 0)",
      "unpacking the (None) capability crashes; the sm thresholds (GTX 16xx, P40) are meaningless on NPU"),
    C("GPU_COUNT = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "GPU_COUNT = torch.npu.device_count() if torch.npu.is_available() else torch.cuda.device_count()",
      "0 on an NPU host: the webui offers CPU only"),
    C("GPU_INFOS.append(f\"{device.index}\\t{torch.cuda.get_device_name(device.index)}\")", "torch_cuda_api", R, True,
      'GPU_INFOS.append(f"{device.index}\\t{torch.npu.get_device_name(device.index)}")',
      "device name for the GPU picker"),
])

E("gptsovits_s2_train", "GPT_SoVITS/s2_train.py", "device_branch_or_abstraction",
  "RVC-Boss/GPT-SoVITS s2_train.py (SoVITS VITS stage, gloo/nccl pick, CPU fallback branches)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = hps.train.gpu_numbers.replace("-", ",")', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = hps.train.gpu_numbers.replace("-", ",")',
      "GPU selection from the webui; NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler, autocast  # NPU hosts (keep torch.cuda.amp on CUDA)",
      "CUDA autocast / GradScaler are inactive for NPU: fp16_run trains without mixed precision or scaling"),
    C('device = "cpu"  # cuda', "device_type", R, True, 'device = "npu" if torch.npu.is_available() else "cpu"',
      "the non-CUDA branches all use this device"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "behind torch.cuda.is_available(): an NPU host trains one CPU process"),
    C('backend="gloo" if os.name == "nt" or not torch.cuda.is_available() else "nccl",', "dist_backend", R, True,
      'backend="gloo" if os.name == "nt" or not (torch.cuda.is_available() or torch.npu.is_available()) else ("hccl" if torch.npu.is_available() else "nccl"),',
      "NPU host ends up on gloo (CPU collectives)"),
    C("torch.manual_seed(hps.train.seed)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "bucketed but still dynamic spec / ssl lengths: binary kernels instead of per-shape JIT compilation"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", "guarded; device set"),
    C("=).cuda(rank)", "tensor_to_device", R, True, ").npu(rank)",
      "generator: the .cuda(rank) / .to(device) ternary picks the cpu branch on NPU"),
    C("MultiPeriodDiscriminator(hps.model.use_spectral_norm, version=hps.model.version).cuda(rank)",
      "tensor_to_device", R, True,
      "MultiPeriodDiscriminator(hps.model.use_spectral_norm, version=hps.model.version).npu(rank)", "discriminator"),
    C("if torch.cuda.is_available():  # DDP only when training on GPUs", "torch_cuda_api", R, True,
      "if torch.cuda.is_available() or torch.npu.is_available():  # DDP only when training on GPUs",
      "without it the models are never DDP-wrapped on NPU"),
    C("if torch.cuda.is_available()  # net_g is DDP-wrapped on GPU", "torch_cuda_api", R, True,
      "if isinstance(net_g, DDP)  # net_g is DDP-wrapped on GPU",
      "pretrained weights load into the wrong object once net_g is DDP-wrapped (strict=False hides it)"),
    C("spec, spec_lengths = spec.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec, spec_lengths = spec.npu(rank, non_blocking=True), spec_lengths.npu(rank, non_blocking=True)",
      "batch transfer in the CUDA-only branch"),
    C("y, y_lengths = y.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "y, y_lengths = y.npu(rank, non_blocking=True), y_lengths.npu(rank, non_blocking=True)", "batch"),
    C("ssl = ssl.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "ssl = ssl.npu(rank, non_blocking=True)", "batch"),
    C("text, text_lengths = text.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "text, text_lengths = text.npu(rank, non_blocking=True), text_lengths.npu(rank, non_blocking=True)", "batch"),
])

E("gptsovits_s1_train", "GPT_SoVITS/s1_train.py", "device_branch_or_abstraction",
  "RVC-Boss/GPT-SoVITS s1_train.py (PyTorch Lightning T2S stage, DDPStrategy nccl)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]',
      "device selection handed down by the webui"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('accelerator="gpu" if torch.cuda.is_available() else "cpu",', "device_type", R, True,
      'accelerator=NPUAccelerator() if torch.npu.is_available() else ("gpu" if torch.cuda.is_available() else "cpu"),',
      "Lightning trains on the CPU on an NPU host; the NPU accelerator class is a plausible snippet, "
      "unconfirmed (Lightning is not covered by the knowledge base)"),
    C("devices=-1 if torch.cuda.is_available() else 1,", "device_type", R, True,
      "devices=-1 if (torch.cuda.is_available() or torch.npu.is_available()) else 1,", "one CPU device"),
    C('strategy=DDPStrategy(process_group_backend="nccl"', "dist_backend", R, True,
      'strategy=DDPStrategy(process_group_backend="hccl" if torch.npu.is_available() else "nccl")',
      "NCCL process group"),
])

E("gptsovits_infer_yaml", "GPT_SoVITS/configs/tts_infer.yaml", "explicit_replacement",
  "RVC-Boss/GPT-SoVITS configs/tts_infer.yaml (TTS_Config device / is_half per version)", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "the block api_v2 uses; TTS_Config silently falls back to cpu when CUDA is missing"),
    C("device: cuda  # sv speaker-verification", "device_type", R, False, "device: npu  # sv speaker-verification embedding runs here too",
      "fallback default, only read when 'custom' lacks the key"),
    C("device: cuda:0", "device_type", R, False, "device: npu:0", "fallback default"),
    C("device: cuda  # BigVGAN vocoder", "device_type", R, False, "device: npu  # BigVGAN vocoder", "fallback default"),
    C('device: "cuda"  # HiFiGAN-48k vocoder', "device_type", R, False, 'device: "npu"  # HiFiGAN-48k vocoder',
      "fallback default"),
])

E("gptsovits_hubert_prep", "GPT_SoVITS/prepare_datasets/2-get-hubert-wav32k.py", "device_branch_or_abstraction",
  "RVC-Boss/GPT-SoVITS prepare_datasets/2-get-hubert-wav32k.py (cnhubert feature extraction worker)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["_CUDA_VISIBLE_DEVICES"]',
      "each worker is pinned to one card through this variable"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('is_half = eval(os.environ.get("is_half", "True")) and torch.cuda.is_available()', "torch_cuda_api", R, False,
      'is_half = eval(os.environ.get("is_half", "True")) and (torch.cuda.is_available() or torch.npu.is_available())',
      "fp16 disabled on NPU: same features, only slower"),
    C('device = "cuda:0"', "device_type", R, True, 'device = "npu:0"',
      "behind torch.cuda.is_available(): HuBERT extraction runs on the CPU on an NPU host"),
])

E("gptsovits_install_sh", "install.sh", "device_branch_or_abstraction",
  "RVC-Boss/GPT-SoVITS install.sh (--device CU126 / CU128 / ROCM / MPS / CPU wheel selection)", [
    C("MPS|CPU)", "device_type", B, True, "NPU)\n            USE_NPU=true\n            ;;",
      "no NPU choice: torch_npu is never installed, so the project can only run on the CPU"),
    C('pip install torch==2.6 torchaudio --index-url "https://download.pytorch.org/whl/cpu"', "import_torch_npu",
      A, True, "pip install torch-npu==2.6.0.post5",
      "torch_npu matching torch 2.6.0 on top of the CPU torch wheel (x86; plain PyPI torch on aarch64)"),
    C("torch.cuda.is_available())\"", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npu', torch.npu.is_available())\"",
      "post-install check prints 'available False' on an NPU host"),
])

E("gptsovits_t2s_cudagraph", "GPT_SoVITS/AR/models/t2s_model_flash_attn.py", "explicit_replacement",
  "GPT-SoVITS fast-inference T2S decoder (flash_attn_with_kvcache + CUDA-graph captured decode step)", [
    C("from flash_attn import flash_attn_with_kvcache", "attention_kernel", R, True, "import torch_npu",
      "flash-attn cannot be installed on NPU; the module fails at import"),
    C("attn = flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=cache_seqlens, causal=True)",
      "attention_kernel", R, True,
      'attn = torch_npu.npu_fused_infer_attention_score(q, k_cache_upd, v_cache_upd, num_heads=self.num_heads, input_layout="BSND", actual_seq_lengths_kv=(cache_seqlens + 1).tolist())[0]',
      "decode attention with in-place KV append; NPU needs the cache update done explicitly (scatter) and "
      "the incremental FA op"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, True, "s = torch.npu.Stream()", "warm-up side stream"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "s.wait_stream(torch.npu.current_stream())", "stream ordering"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, True, "with torch.npu.stream(s):", "stream context"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(s)", "stream ordering"),
    C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "self.graph = torch.npu.NPUGraph()",
      "CUDA graph capture; NPUGraph supports inference capture"),
    C("with torch.cuda.graph(self.graph):", "torch_cuda_api", R, True, "with torch.npu.graph(self.graph):",
      "graph capture context"),
    C("t_start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "t_start = torch.npu.Event(enable_timing=True)", "timing events"),
    C("t_end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "t_end = torch.npu.Event(enable_timing=True)", "timing events"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
])

# ---------------------------------------------------------------------------------------------------------
# Piper
# ---------------------------------------------------------------------------------------------------------

E("piper_train_sh", "src/python/scripts/finetune_lessac.sh", "explicit_replacement",
  "rhasspy/piper-style fine-tune script (preprocess, Lightning --accelerator gpu, ONNX export)", [
    C('export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"', "env_var", R, True,
      'export ASCEND_RT_VISIBLE_DEVICES="${ASCEND_RT_VISIBLE_DEVICES:-0}"', "device selection variable"),
    C('gpu_id="${CUDA_VISIBLE_DEVICES%%,*}"', "env_var", R, True, 'npu_id="${ASCEND_RT_VISIBLE_DEVICES%%,*}"',
      "derived from the CUDA variable"),
    C('free_mb="$(nvidia-smi --query-gpu=memory.free', "device_capability_check", R, True,
      'free_mb="$(npu-smi info -t usages -i "${npu_id}" | awk -F: \'/HBM Capacity/{c=$2} /HBM Usage Rate/{u=$2} END{print int(c*(100-u)/100)}\')"',
      "nvidia-smi is absent on an Ascend host; with set -eo pipefail the script stops here"),
    C("--accelerator 'gpu' \\", "device_type", R, True, "--accelerator 'npu' \\",
      "Lightning's 'gpu' accelerator is CUDA; the NPU accelerator name is a plausible snippet, unconfirmed"),
    C("--cuda", "device_type", X, False, None,
      "unconfirmed: onnxruntime CUDA provider for the smoke test; drop it (CPU provider) on Ascend"),
])
