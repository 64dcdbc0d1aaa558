"""Labels for probe33 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = ("the ported module calls torch.npu.*, which exists only once torch_npu is loaded "
               "(explicit import recommended even with the 2.5.1+ autoload)")
ENTRY_IMPORT_NOTE = ("entry script that itself touches no torch.npu API; torch_npu autoloads since 2.5.1, "
                     "the explicit import is recommended, not needed")
CVD_NOTE = ("the NPU runtime selects cards through ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is assumed "
            "ignored (the knowledge documents only the Ascend variable)")
EMPTY_CACHE_NOTE = "silent no-op without CUDA: the NPU caching allocator keeps its blocks (memory only)"

# ---------------------------------------------------------------- AudioCraft / MusicGen

E("audiocraft_musicgen", "audiocraft/models/musicgen.py", "device_branch_or_abstraction",
  "facebookresearch/audiocraft models/musicgen.py (get_pretrained device default, TorchAutocast on device.type)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.device_count():", "device_type", R, True, "if torch.npu.device_count():",
      "device_count() is 0 without CUDA: an NPU host silently loads LM and EnCodec on the CPU"),
    C("device = 'cuda'", "device_type", R, True, "device = 'npu'",
      "the autocast below then follows self.device.type == 'npu' unchanged"),
])

E("audiocraft_transformer", "audiocraft/modules/transformer.py", "explicit_replacement",
  "facebookresearch/audiocraft modules/transformer.py (xformers memory_efficient_attention backend, StreamingMHA)", [
    C("=from xformers import ops", "attention_kernel", R, True,
      "ops = None  # xformers has no NPU backend; torch SDPA is used instead",
      "unguarded module-level import of xformers, which has no NPU operators (knowledge §6)"),
    C("=_verify_xformers_memory_efficient_compat()", "attention_kernel", R, True,
      "if _efficient_attention_backend == 'xformers': _verify_xformers_memory_efficient_compat()",
      "raises ImportError for every memory_efficient layer even when the torch backend would serve it"),
    C("=from xformers.ops import LowerTriangularMask", "attention_kernel", X, True, None,
      "xformers import on the torch-backend path too; the mask is only used as a non-None sentinel"),
    C("=return LowerTriangularMask()", "attention_kernel", R, True,
      "return torch.ones(1, dtype=torch.bool, device=device)  # non-None -> is_causal=True in SDPA",
      "sentinel replacing the xformers mask object"),
    C("q, k, v = ops.unbind(packed, dim=2)", "attention_kernel", R, True, "q, k, v = packed.unbind(dim=2)",
      "xformers helper used on every custom/memory-efficient forward"),
    C("x = ops.memory_efficient_attention(q, k, v, attn_mask, p=p)", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), "
      "is_causal=attn_mask is not None, dropout_p=p).transpose(1, 2)",
      "reached because config.yaml selects efficient_attention_backend=xformers; layout is b t h d, "
      "npu_fusion_attention(..., 'BSND') would also fit"),
    C("q.device.type == 'cuda':", "device_type", R, False,
      "if self._is_streaming and self.safe_streaming and q.device.type in ('cuda', 'npu'):",
      "fp32 pre-softmax guard for streaming is skipped for NPU tensors; precision effect unconfirmed"),
])

E("audiocraft_solver_base", "audiocraft/solvers/base.py", "explicit_replacement",
  "facebookresearch/audiocraft solvers/base.py StandardSolver (GradScaler, profiler, peak-memory metrics)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "torch_cuda_api", R, False,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "only when cfg.profiler.enabled; torch_npu.profiler mirrors the API (knowledge §2.5)"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", R, False,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "a CUDA activity records no device kernels on an NPU host (§2.5: CUDA -> NPU)"),
    C("self.scaler: tp.Optional[torch.cuda.amp.GradScaler] = None", "amp", R, False,
      "self.scaler: tp.Optional[torch.npu.amp.GradScaler] = None",
      "annotation only; not evaluated inside a function"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self.scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 autocast training runs without loss scaling"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "needs a CUDA device index: raises 'Torch not compiled with CUDA enabled' at every train/valid stage"),
    C("metrics['max_mem'] = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", R, False,
      "metrics['max_mem'] = torch.npu.max_memory_allocated() / 1e9",
      "silently logs 0 without an initialised CUDA context (wrong metric only)"),
])

E("audiocraft_config_yaml", "config/config.yaml", "explicit_replacement",
  "facebookresearch/audiocraft config/config.yaml (hydra base config: device, attention backend)", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "solver.device drives model.to(), autocast device_type and batch placement"),
    C("efficient_attention_backend: xformers", "attention_kernel", R, True,
      "efficient_attention_backend: torch  # SDPA dispatches to the NPU flash-attention kernel",
      "the xformers backend has no NPU kernels (knowledge §6)"),
])

E("audiocraft_musicgen_app", "demos/musicgen_app.py", "transfer_to_npu",
  "facebookresearch/audiocraft demos/musicgen_app.py (Gradio demo, model swap, MultiBandDiffusion)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", ENTRY_IMPORT_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("audiocraft_slurm_sh", "scripts/train_musicgen_multinode.sh", "explicit_replacement",
  "AudioCraft/dora-style multi-node SLURM + torchrun launch script with NCCL tuning", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "GRES name for NPUs is site-specific; unconfirmed"),
    C("module load cuda/11.8 cudnn/v8.6 nccl/2.18.1-cuda.11.8", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA modules do not exist on an Ascend cluster (set -e aborts) and CANN's set_env.sh must be sourced "
      "for the torch_npu / HCCL libraries (knowledge host-formats §3.8, §4.1)"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* variables are ignored by HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "no HCCL counterpart needed; ignored"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=bond0",
      "HCCL chooses the host NIC by its own priority; set HCCL_SOCKET_IFNAME / HCCL_IF_IP on multi-NIC hosts "
      "(knowledge distributed §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (knowledge distributed §1)"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only, no effect on NPU"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", CVD_NOTE),
    C("GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check",
      R, True, "GPUS_PER_NODE=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is absent: under set -euo pipefail the script aborts (A3: count chips, 2 per NPU)"),
    C("nvidia-smi topo -m || true", "device_capability_check", R, False, "npu-smi info -t topo || true",
      "diagnostic only (|| true)"),
    C("device=cuda \\", "device_type", R, True, "device=npu \\", "overrides the config device in every worker"),
])

E("encodec_core_vq", "encodec/quantization/core_vq.py", "explicit_replacement",
  "facebookresearch/encodec quantization/core_vq.py (EMA codebooks, k-means init; device-agnostic)", [])

# ---------------------------------------------------------------- Bark

E("bark_generation", "bark/generation.py", "device_branch_or_abstraction",
  "suno-ai/bark generation.py (_grab_best_device, bf16 autocast gate, SUNO_OFFLOAD_CPU, cache clearing)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.is_available() and", "amp", R, False, "torch.npu.is_available() and",
      "bf16 autocast gate: without it NPU inference runs in fp32 (correct, slower)"),
    C('=hasattr(torch.cuda, "amp") and', "amp", R, False, 'hasattr(torch.npu, "amp") and', "same gate"),
    C('=hasattr(torch.cuda.amp, "autocast") and', "amp", R, False, 'hasattr(torch.npu.amp, "autocast") and',
      "same gate"),
    C('=hasattr(torch.cuda, "is_bf16_supported") and', "amp", R, False,
      'hasattr(torch.npu, "is_bf16_supported") and', "same gate"),
    C("=torch.cuda.is_bf16_supported()", "amp", R, False, "torch.npu.is_bf16_supported()",
      "is_bf16_supported is in torch_npu.npu.__all__ (knowledge §2.1)"),
    C("autocast = funcy.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)", "amp", R, False,
      "autocast = funcy.partial(torch.npu.amp.autocast, dtype=torch.bfloat16)",
      "reached once the gate is ported"),
    C("if torch.cuda.device_count() > 0 and use_gpu:", "device_type", R, True,
      "if torch.npu.device_count() > 0 and use_gpu:",
      "an NPU host falls through to the CPU for all four Bark models"),
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"', ""),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "_clear_cuda_cache gate: " + EMPTY_CACHE_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "inside the same gate; not reached unchanged"),
])

E("bark_model", "bark/model.py", "explicit_replacement",
  "suno-ai/bark model.py (nanoGPT causal attention with SDPA and kv-cache; device-agnostic)", [])

# ---------------------------------------------------------------- Demucs

E("demucs_separate", "demucs/separate.py", "device_branch_or_abstraction",
  "facebookresearch/demucs separate.py (CLI, -d/--device default from cuda availability)", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('default="cuda" if th.cuda.is_available() else "cpu",', "device_type", R, True,
      'default="npu" if th.npu.is_available() else "cpu",',
      "an NPU host separates on the CPU unless -d is given"),
])

E("demucs_distrib", "demucs/distrib.py", "explicit_replacement",
  "facebookresearch/demucs distrib.py (env:// NCCL init, DDP wrap, pickled object broadcast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(rank % torch.cuda.device_count())", "torch_cuda_api", R, True,
      "torch.npu.set_device(rank % torch.npu.device_count())",
      "device_count() is 0 without CUDA: ZeroDivisionError"),
    C("backend='nccl',", "dist_backend", R, True, "backend='hccl',", ""),
    C("tensor = torch.tensor(list(metrics) + [1], device='cuda', dtype=torch.float32)", "device_type", R, True,
      "tensor = torch.tensor(list(metrics) + [1], device='npu', dtype=torch.float32)", ""),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", ""),
    C("output_device=torch.cuda.current_device())", "torch_cuda_api", R, True,
      "output_device=torch.npu.current_device())", ""),
    C("size = torch.empty(1, device='cuda', dtype=torch.long)", "device_type", R, True,
      "size = torch.empty(1, device='npu', dtype=torch.long)", ""),
    C("buffer = torch.from_numpy(np.frombuffer(dump, dtype=np.uint8).copy()).cuda()", "tensor_to_device", R, True,
      "buffer = torch.from_numpy(np.frombuffer(dump, dtype=np.uint8).copy()).npu()", ""),
    C("buffer = torch.empty(size[0].item(), device='cuda', dtype=torch.uint8)", "device_type", R, True,
      "buffer = torch.empty(size[0].item(), device='npu', dtype=torch.uint8)", ""),
])

# ---------------------------------------------------------------- RVC

E("rvc_config", "configs/config.py", "device_branch_or_abstraction",
  "RVC-Project/Retrieval-based-Voice-Conversion-WebUI configs/config.py (GPU-name fp16 blacklist, VRAM tiers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.device = "cuda:0"', "device_type", R, True, 'self.device = "npu:0"',
      "default device string; device_config() parses the index from it"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "an NPU host takes the CPU branch: device=cpu, is_half=False, and use_fp32_config() rewrites the "
      "training JSONs to fp16_run=false"),
    C("self.gpu_name = torch.cuda.get_device_name(i_device)", "torch_cuda_api", R, True,
      "self.gpu_name = torch.npu.get_device_name(i_device)", ""),
    C('("16" in self.gpu_name and "V100" not in self.gpu_name.upper())', "device_capability_check", R, False,
      '"310P" in self.gpu_name  # NVIDIA fp16 blacklist replaced by an Ascend-specific rule',
      "NVIDIA name blacklist; never matches Ascend names (e.g. Ascend910B3), so fp16 stays on, which is fine"),
    C("torch.cuda.get_device_properties(i_device).total_memory", "torch_cuda_api", R, True,
      "torch.npu.get_device_properties(i_device).total_memory",
      "total_memory is one of the properties NPU reports (support table)"),
])

E("rvc_pipeline", "infer/modules/vc/pipeline.py", "device_branch_or_abstraction",
  "RVC infer/modules/vc/pipeline.py (HuBERT features, faiss index, crepe/rmvpe f0, segment-wise synthesis)", [
    C("if torch.cuda.is_available():  # release cached blocks of this segment", "torch_cuda_api", R, False,
      "if torch.npu.is_available():", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # segment done", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      EMPTY_CACHE_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("rvc_rmvpe", "infer/lib/rmvpe.py", "device_branch_or_abstraction",
  "RVC infer/lib/rmvpe.py (RMVPE pitch model, MelSpectrogram with DirectML STFT branch, jit cache)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu:0" if torch.npu.is_available() else "cpu"',
      "default used by callers that pass no device (so-vits-svc predictors, scripts)"),
    C('if str(self.device) == "cuda":', "device_type", R, False, 'if str(self.device) in ("cuda", "npu"):',
      "normalises a bare device string for the jit-cache key; harmless for npu:0"),
    C('self.device = torch.device("cuda:0")', "device_type", R, False,
      'self.device = torch.device(f"{self.device}:0")', "same normalisation"),
])

RVC_DEV = "NPU-side placement of a batch tensor; the model moved to the NPU above"
E("rvc_train", "infer/modules/train/train.py", "explicit_replacement",
  "RVC infer/modules/train/train.py (mp.Process per GPU, gloo DDP, GradScaler, GPU-cached dataset)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = hps.gpus.replace("-", ",")', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = hps.gpus.replace("-", ",")',
      "cards chosen in the web UI; " + CVD_NOTE),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=from torch.cuda.amp import GradScaler, autocast", "amp", R, False,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "branch only taken when intel_extension_for_pytorch is installed"),
    C("from torch.cuda.amp import GradScaler, autocast  # ipex not installed", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "branch taken on an NPU host: CUDA autocast/GradScaler are inactive for NPU tensors, so fp16_run "
      "trains without autocast or loss scaling"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "0 without CUDA: 'NO GPU DETECTED', one CPU process"),
    C('backend="gloo", init_method="env://", world_size=n_gpus, rank=rank', "dist_backend", R, True,
      'backend="hccl", init_method="env://", world_size=n_gpus, rank=rank',
      "DDP over NPU tensors needs hccl (knowledge distributed §6.1); gloo has no NPU device support"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "every per-rank NPU placement below is gated on CUDA"),
    C("=torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", ""),
    C("if torch.cuda.is_available():  # generator", "device_type", R, True,
      "if torch.npu.is_available():  # generator", ""),
    C("=net_g = net_g.cuda(rank)", "tensor_to_device", R, True, "net_g = net_g.npu(rank)", ""),
    C("if torch.cuda.is_available():  # discriminator", "device_type", R, True,
      "if torch.npu.is_available():  # discriminator", ""),
    C("=net_d = net_d.cuda(rank)", "tensor_to_device", R, True, "net_d = net_d.npu(rank)", ""),
    C("=optim_g = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_g = torch_npu.optim.NpuFusedAdamW(",
      "performance only"),
    C("=optim_d = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_d = torch_npu.optim.NpuFusedAdamW(",
      "performance only"),
    C("=elif torch.cuda.is_available():", "device_type", R, False, "elif torch.npu.is_available():",
      "the else branch (DDP without device_ids) also works for a single-device NPU module"),
    C("if torch.cuda.is_available():  # cache", "device_type", R, True, "if torch.npu.is_available():  # cache",
      "if_cache_data_in_gpu path"),
    C("info = [t.cuda(rank, non_blocking=True) for t in info]", "tensor_to_device", R, True,
      "info = [t.npu(rank, non_blocking=True) for t in info]", RVC_DEV),
    C("if (hps.if_cache_data_in_gpu == False) and torch.cuda.is_available():", "device_type", R, True,
      "if (hps.if_cache_data_in_gpu == False) and torch.npu.is_available():", ""),
    C("=phone = phone.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "phone = phone.npu(rank, non_blocking=True)", RVC_DEV),
    C("=phone_lengths = phone_lengths.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "phone_lengths = phone_lengths.npu(rank, non_blocking=True)", RVC_DEV),
    C("=pitch = pitch.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "pitch = pitch.npu(rank, non_blocking=True)", RVC_DEV),
    C("=pitchf = pitchf.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "pitchf = pitchf.npu(rank, non_blocking=True)", RVC_DEV),
    C("=sid = sid.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "sid = sid.npu(rank, non_blocking=True)", RVC_DEV),
    C("=spec = spec.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec = spec.npu(rank, non_blocking=True)", RVC_DEV),
    C("=spec_lengths = spec_lengths.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec_lengths = spec_lengths.npu(rank, non_blocking=True)", RVC_DEV),
    C("=wave = wave.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "wave = wave.npu(rank, non_blocking=True)", RVC_DEV),
])

E("rvc_webui", "infer-web.py", "explicit_replacement",
  "RVC infer-web.py (Gradio UI; N-card detection by name whitelist, VRAM-based batch size, subprocess launches)", [
    C("=import torch, platform", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=ngpu = torch.cuda.device_count()", "torch_cuda_api", R, True, "ngpu = torch.npu.device_count()",
      "0 on an NPU host: no cards offered, batch size 1, an empty gpus string passed to train.py and the "
      "feature extractors"),
    C("if torch.cuda.is_available() or ngpu != 0:", "device_type", R, True,
      "if torch.npu.is_available() or ngpu != 0:", ""),
    C("gpu_name = torch.cuda.get_device_name(i)", "torch_cuda_api", R, True,
      "gpu_name = torch.npu.get_device_name(i)", ""),
    C('"10", "16", "20", "30", "40", "A2", "A3", "A4", "P4", "A50", "500",', "device_capability_check", R, False,
      '"910", "310P",', "NVIDIA name whitelist; Ascend names such as 'Ascend910B3' pass only by accident ('10')"),
    C("torch.cuda.get_device_properties(i).total_memory", "torch_cuda_api", R, True,
      "torch.npu.get_device_properties(i).total_memory", ""),
])

E("rvc_extract_feature", "infer/modules/train/extract_feature_print.py", "device_branch_or_abstraction",
  "RVC infer/modules/train/extract_feature_print.py (per-card HuBERT feature extraction subprocess)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(i_gpu)', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(i_gpu)',
      "one process per card, set before torch is imported; " + CVD_NOTE),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "an NPU host extracts features on the CPU, in fp32"),
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"', ""),
])

E("rvc_uvr5_mdxnet", "infer/modules/uvr5/mdxnet.py", "explicit_replacement",
  "RVC infer/modules/uvr5/mdxnet.py (MDX-Net dereverb via onnxruntime, torch STFT on CPU)", [
    C('"CUDAExecutionProvider",', "device_type", R, False, '"CANNExecutionProvider",',
      "onnxruntime silently falls back to the CPU provider; a CANN provider needs an onnxruntime build with "
      "CANN (unconfirmed in the knowledge)"),
])

E("rvc_requirements", "requirements.txt", "explicit_replacement",
  "RVC requirements.txt pinned to cu118 torch wheels and onnxruntime-gpu", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 takes CPU torch from the cpu index, aarch64 plain PyPI (knowledge §1.1)"),
    C("=torch==2.1.0+cu118", "device_type", R, True, "torch==2.1.0",
      "no +cu118 wheel on aarch64 and a CUDA build on x86; torch must equal the torch_npu wheel's torch"),
    C("=torchaudio==2.1.0", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "torch_npu must be installed; wheel version = torch version + .postN (knowledge §1.1)"),
    C("onnxruntime-gpu; sys_platform != 'darwin'", "device_type", R, False, "onnxruntime; sys_platform != 'darwin'",
      "CUDA build of onnxruntime, no use on NPU; availability of aarch64 wheels unconfirmed"),
])

E("rvc_dockerfile", "Dockerfile", "explicit_replacement",
  "RVC Dockerfile (nvidia/cuda base image, cu118 torch, model downloads)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu20.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (Ascend/cann-container-image style); exact tag unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES "
      "(knowledge distributed §1)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C("RUN python3 -m pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 --index-url", "device_type", R, True,
      "RUN python3 -m pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post12",
      "CUDA wheel index; torch_npu missing"),
])

E("rvc_run_sh", "run.sh", "explicit_replacement",
  "RVC run.sh (venv bootstrap picking a requirements file per accelerator, then the web UI)", [
    C("if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then", "device_capability_check",
      B, True, 'elif command -v npu-smi >/dev/null 2>&1 && npu-smi info -l >/dev/null 2>&1; then '
      'requirements_file="requirements-npu.txt"',
      "an NPU host falls through to the CPU-only requirements (no torch_npu)"),
    C("=# Run the main script", "env_var", A, False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu loads unless the login shell already does it "
      "(knowledge host-formats §3.8, §4.1)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}", CVD_NOTE),
])

# ---------------------------------------------------------------- so-vits-svc

SV_DEV = "per-batch placement on the rank's device (model is on the NPU after the port)"
E("sovits_train", "train.py", "explicit_replacement",
  "svc-develop-team/so-vits-svc train.py (mp.spawn, NCCL DDP, fp16/bf16 autocast with GradScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler are inactive for NPU tensors: fp16_run trains without autocast or loss scaling"),
    C('assert torch.cuda.is_available(), "CPU training is not allowed."', "device_type", R, True,
      'assert torch.npu.is_available(), "CPU training is not allowed."', "fails at start on an NPU host"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()", ""),
    C("dist.init_process_group(backend='gloo' if os.name == 'nt' else 'nccl'", "dist_backend", R, True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=n_gpus, rank=rank)", ""),
    C("=torch.manual_seed(hps.train.seed)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "variable-length batches: binary kernels avoid per-shape recompiles (msFmkTransplt advice, knowledge §3.5)"),
    C("=torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", ""),
    C("**hps.model).cuda(rank)", "tensor_to_device", R, True, "**hps.model).npu(rank)", ""),
    C("net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).cuda(rank)", "tensor_to_device", R, True,
      "net_d = MultiPeriodDiscriminator(hps.model.use_spectral_norm).npu(rank)", ""),
    C("=optim_g = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_g = torch_npu.optim.NpuFusedAdamW(",
      "performance only"),
    C("=optim_d = torch.optim.AdamW(", "fused_optimizer", R, False, "optim_d = torch_npu.optim.NpuFusedAdamW(",
      "performance only"),
    C("=g = spk.cuda(rank, non_blocking=True)", "tensor_to_device", R, True, "g = spk.npu(rank, non_blocking=True)",
      SV_DEV),
    C("spec, y = spec.cuda(rank, non_blocking=True), y.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "spec, y = spec.npu(rank, non_blocking=True), y.npu(rank, non_blocking=True)", SV_DEV),
    C("=c = c.cuda(rank, non_blocking=True)", "tensor_to_device", R, True, "c = c.npu(rank, non_blocking=True)",
      SV_DEV),
    C("=f0 = f0.cuda(rank, non_blocking=True)", "tensor_to_device", R, True, "f0 = f0.npu(rank, non_blocking=True)",
      SV_DEV),
    C("=uv = uv.cuda(rank, non_blocking=True)", "tensor_to_device", R, True, "uv = uv.npu(rank, non_blocking=True)",
      SV_DEV),
    C("=lengths = lengths.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "lengths = lengths.npu(rank, non_blocking=True)", SV_DEV),
    C("=volume = volume.cuda(rank, non_blocking=True)", "tensor_to_device", R, True,
      "volume = volume.npu(rank, non_blocking=True)", SV_DEV),
    C("=g = spk[:1].cuda(0)", "tensor_to_device", R, True, "g = spk[:1].npu(0)", "evaluation on rank 0"),
    C("spec, y = spec[:1].cuda(0), y[:1].cuda(0)", "tensor_to_device", R, True,
      "spec, y = spec[:1].npu(0), y[:1].npu(0)", "evaluation on rank 0"),
    C("=c = c[:1].cuda(0)", "tensor_to_device", R, True, "c = c[:1].npu(0)", "evaluation on rank 0"),
    C("=f0 = f0[:1].cuda(0)", "tensor_to_device", R, True, "f0 = f0[:1].npu(0)", "evaluation on rank 0"),
    C("=uv = uv[:1].cuda(0)", "tensor_to_device", R, True, "uv = uv[:1].npu(0)", "evaluation on rank 0"),
    C("=volume = volume[:1].cuda(0)", "tensor_to_device", R, True, "volume = volume[:1].npu(0)",
      "evaluation on rank 0"),
])

E("sovits_infer_tool", "inference/infer_tool.py", "device_branch_or_abstraction",
  "svc-develop-team/so-vits-svc inference/infer_tool.py (Svc: device default, half checkpoints, VRAM cleanup)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'self.dev = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "an NPU host runs HuBERT, the VITS model, the diffusion and the enhancer on the CPU"),
    C('=if "half" in self.net_g_path and torch.cuda.is_available():', "device_type", R, False,
      'if "half" in self.net_g_path and self.dev.type != "cpu":',
      "fp16 checkpoints stay fp32 on NPU (consistent with the input cast below; correct, slower)"),
    C('torch.cuda.is_available():  # fp16 checkpoint', "device_type", R, False,
      'if "half" in self.net_g_path and self.dev.type != "cpu":  # fp16 checkpoint',
      "must match the model cast above"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------- Stable Audio

E("stable_audio_generation", "stable_audio_tools/inference/generation.py", "device_branch_or_abstraction",
  "Stability-AI/stable-audio-tools inference/generation.py (device='cuda' defaults, inpainting masks)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "ported code only uses the 'npu' device string; autoload since 2.5.1"),
    C("device: str = 'cuda',", "device_type", R, True, "device: str = 'npu',",
      "torch.randn(..., device='cuda') fails whenever a caller relies on the default"),
    C('device: str = "cuda",', "device_type", R, True, 'device: str = "npu",', "same, conditional generation"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("stable_audio_transformer", "stable_audio_tools/models/transformer.py", "explicit_replacement",
  "Stability-AI/stable-audio-tools models/transformer.py (x-transformers attention: flash-attn, SDPA, NATTEN)", [
    C("=from torch.cuda.amp import autocast", "amp", R, True, "from torch_npu.npu.amp import autocast",
      "@autocast(enabled=False) must switch off the autocast of the device in use: with the CUDA one the RoPE "
      "frequencies (einsum) are computed in fp16 under NPU autocast, losing positional precision"),
    C("self.use_pt_flash = torch.cuda.is_available() and", "attention_kernel", R, False,
      "self.use_pt_flash = (torch.cuda.is_available() or torch.npu.is_available()) and "
      "version.parse(torch.__version__) >= version.parse('2.0.0')",
      "NPU falls back to the einsum attention (correct, O(n^2) memory); SDPA dispatches to NPU FA (§3.7)"),
    C("self.use_fa_flash = torch.cuda.is_available() and flash_attn_func is not None", "attention_kernel", R, False,
      "self.use_fa_flash = torch.npu.is_available()  # npu_fusion_attention path",
      "flash_attn is import-guarded; an NPU fused-attention path is optional"),
    C("out = flash_attn_func(q, k, v, causal=causal)", "attention_kernel", R, False,
      "out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], 'BSND', scale=q.shape[-1] ** -0.5, "
      "atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), 1) if causal else None, "
      "sparse_mode=3 if causal else 0)[0]",
      "mapping as in transformers' npu_flash_attention (knowledge §5)"),
    C("with torch.backends.cuda.sdp_kernel(**self.sdp_kwargs):", "attention_kernel", X, False, None,
      "sdp_kernel is ✘ in Ascend's table; reached only once use_pt_flash is enabled for NPU"),
    C("return x * self.act(gate)", "npu_fused_op", R, False,
      "return torch_npu.npu_swiglu(torch.cat((gate, x), dim=-1)) if isinstance(self.act, nn.SiLU) "
      "else x * self.act(gate)",
      "SwiGLU is the FeedForward default; npu_swiglu computes SiLU(first half) * second half"),
    C("t = (t * freqs.cos() * scale) + (rotate_half(t) * freqs.sin() * scale)", "npu_fused_op", R, False,
      "t = torch_npu.npu_rotary_mul(t, freqs.cos() * scale, freqs.sin() * scale)",
      "rotate_half splits the last dim in halves, i.e. rotary_mode='half'"),
])

E("stable_audio_train", "train.py", "explicit_replacement",
  "Stability-AI/stable-audio-tools train.py (PyTorch Lightning Trainer, DDP / DeepSpeed strategies)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", ENTRY_IMPORT_NOTE),
    C('accelerator="gpu",', "device_type", R, True,
      'accelerator=NPUAccelerator(),  # custom or plugin Lightning accelerator for torch_npu',
      "Lightning raises when no CUDA GPU is found; it has no built-in NPU accelerator (the replacement is "
      "unconfirmed in the knowledge)"),
    C("strategy = 'ddp_find_unused_parameters_true' if args.num_gpus > 1 else \"auto\"", "dist_backend", R, True,
      "strategy = DDPStrategy(find_unused_parameters=True, process_group_backend='hccl') "
      "if args.num_gpus > 1 else 'auto'",
      "Lightning picks nccl only for CUDA devices and gloo otherwise; DDP on NPU needs hccl"),
    C("strategy = DeepSpeedStrategy(stage=2,", "distributed_framework", R, False,
      "strategy = DeepSpeedStrategy(stage=2, process_group_backend='hccl',",
      "DeepSpeed ships an NPU accelerator (knowledge §6); Lightning's DeepSpeedStrategy on NPU is unconfirmed"),
])

# ---------------------------------------------------------------- DAC / descript-audiotools

E("dac_quantize", "dac/nn/quantize.py", "explicit_replacement",
  "descriptinc/descript-audio-codec dac/nn/quantize.py (factorised l2-normalised RVQ; device-agnostic)", [])

E("audiotools_accelerator", "audiotools/ml/accelerator.py", "explicit_replacement",
  "descriptinc/audiotools ml/accelerator.py (DDP-or-DataParallel wrapper used by DAC training)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.world_size = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "self.world_size = torch.npu.device_count()", "0 without CUDA: no DDP, CPU device"),
    C('self.device = "cpu" if self.world_size == 0 else "cuda"', "device_type", R, True,
      'self.device = "cpu" if self.world_size == 0 else "npu"', ""),
    C('="nccl",', "dist_backend", R, True, '"hccl",', ""),
    C("self.scaler = torch.cuda.amp.GradScaler() if amp else DummyScaler()", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler() if amp else DummyScaler()",
      "CUDA GradScaler disables itself without CUDA: amp runs without loss scaling"),
    C("torch.cuda.device(self.local_rank) if torch.cuda.is_available() else None", "torch_cuda_api", R, True,
      "torch.npu.device(self.local_rank) if torch.npu.is_available() else None",
      "without the device context every rank's 'npu' tensors land on npu:0"),
    C("=model = model.to(self.local_rank)", "tensor_to_device", R, True,
      "model = model.to(f'npu:{self.local_rank}')", "a bare int device index means cuda:N"),
    C("model = DataParallel(model, **kwargs)", "unsupported_op_workaround", R, True,
      "raise RuntimeError('launch with torchrun: DataParallel is not supported on NPU')",
      "torch.nn.DataParallel is ✘ on NPU; taken when LOCAL_RANK is unset and >1 device"),
    C("return torch.cuda.amp.autocast(self.amp, *args, **kwargs)", "amp", R, True,
      "return torch.npu.amp.autocast(self.amp, *args, **kwargs)",
      "CUDA autocast is inactive for NPU tensors"),
])

# ---------------------------------------------------------------- BigVGAN fused CUDA activation

E("bigvgan_activation1d", "alias_free_activation/cuda/activation1d.py", "kernel_rewrite",
  "NVIDIA/BigVGAN alias_free_activation/cuda/activation1d.py (fused anti-aliased Snake autograd Function)", [
    C("anti_alias_activation_cuda = load.load()", "custom_cuda_extension", R, True,
      "anti_alias_activation_cuda = None  # no nvcc on NPU: torch path or an Ascend C op",
      "module-level JIT build through cpp_extension.load/nvcc fails at import (cpp_extension.load ✘)"),
    C("activation_results = anti_alias_activation_cuda.forward(", "custom_cuda_extension", R, True,
      "activation_results = torch.ops.bigvgan.anti_alias_activation(",
      "call site of the CUDA op; needs an Ascend C port bound through OpPlugin/NpuExtension (knowledge §6)"),
    C("fused: bool = True,", "custom_cuda_extension", R, True, "fused: bool = False,",
      "the default selects the CUDA kernel"),
    C("act = SnakeBetaReference(channels, alpha_logscale=True).cuda()", "tensor_to_device", R, False,
      "act = SnakeBetaReference(channels, alpha_logscale=True).npu()",
      "self-check of the CUDA kernel; only meaningful once a kernel is ported"),
    C("fused = Activation1d(act, fused=True).cuda()", "tensor_to_device", R, False,
      "fused = Activation1d(act, fused=True).npu()", "same self-check"),
    C("unfused = Activation1d(act, fused=False).cuda()", "tensor_to_device", R, False,
      "unfused = Activation1d(act, fused=False).npu()", "same self-check"),
    C('x = torch.randn(2, channels, length, device="cuda")', "device_type", R, False,
      'x = torch.randn(2, channels, length, device="npu")', "same self-check"),
])

E("bigvgan_cuda_load", "alias_free_activation/cuda/load.py", "kernel_rewrite",
  "NVIDIA/BigVGAN alias_free_activation/cuda/load.py (nvcc version probe + cpp_extension.load JIT build)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None, "nvcc-only setting"),
    C("_, bare_metal_major, _ = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension",
      X, True, None, "CUDA_HOME is None on an NPU host: None + '/bin/nvcc' raises TypeError"),
    C("return cpp_extension.load(", "custom_cuda_extension", R, True,
      "return torch_npu_cpp_extension_build(",
      "cpp_extension.load ✘ on A2/A3; build an Ascend C kernel with torch_npu.utils.cpp_extension.NpuExtension "
      "(knowledge §6)"),
    C("=extra_cuda_cflags=[", "custom_cuda_extension", X, False, None, "nvcc flags, gone with the CUDA build"),
    C('srcpath / "anti_alias_activation_cuda.cu",', "custom_cuda_extension", R, True,
      'srcpath / "anti_alias_activation_ascendc.cpp",', "the .cu kernel must be rewritten in Ascend C"),
    C('[cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True', "custom_cuda_extension", X, False, None,
      "nvcc probe, dead once load() stops calling it"),
])

# ---------------------------------------------------------------- lucidrains audiolm attend

E("audiolm_attend", "audiolm_pytorch/attend.py", "explicit_replacement",
  "lucidrains/audiolm-pytorch attend.py (A100 detection, sdp_kernel config for cuda/cpu)", [
    C("if not torch.cuda.is_available() or not flash:", "device_capability_check", R, False,
      "if not flash:  # no per-GPU SDPA backend selection on NPU",
      "on NPU the early return leaves cuda_config None, harmless once the sdp_kernel context is dropped"),
    C("device_properties = torch.cuda.get_device_properties(torch.device('cuda'))", "device_capability_check",
      X, False, None, "A100 detection; NPU properties have no major/minor (knowledge §2.8): delete, don't port"),
    C("if device_properties.major == 8 and device_properties.minor == 0:", "device_capability_check", X, False,
      None, "same"),
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", X, True, None,
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's table and msFmkTransplt's list; reached on NPU with "
      "flash=True through cpu_config"),
])

# ---------------------------------------------------------------- Triton fused Snake

E("snake_triton", "dac/nn/snake_triton.py", "kernel_rewrite",
  "DAC/BigVGAN-style fused Snake activation in Triton (autotuned fwd/bwd, custom autograd, benchmark)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=_SNAKE_CONFIGS = [", "triton_kernel_tuning", R, False,
      "_SNAKE_CONFIGS = [triton.Config({'BLOCK_T': b}) for b in (1024, 2048, 4096, 8192)]",
      "num_warps is a GPU notion; retune tiles for triton-ascend (unconfirmed)"),
    C('eviction_policy="evict_first").to(tl.float32)', "triton_kernel_tuning", R, False,
      ").to(tl.float32)", "cache-eviction hints on triton-ascend unconfirmed"),
    C("=@torch.cuda.amp.custom_fwd", "amp", R, False, "@torch_npu.npu.amp.custom_fwd",
      "Triton path only; custom_fwd has the NPU form torch_npu.npu.amp.custom_fwd"),
    C("=@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch_npu.npu.amp.custom_bwd", "Triton path only"),
    C("assert x.is_cuda and x.is_contiguous()", "device_type", R, False, "assert x.is_npu and x.is_contiguous()",
      "Triton path only"),
    C("=with torch.cuda.device(x.device):", "torch_cuda_api", R, False, "with torch.npu.device(x.device):",
      "Triton path only"),
    C("with torch.cuda.device(x.device):  # backward launch", "torch_cuda_api", R, False,
      "with torch.npu.device(x.device):  # backward launch", "Triton path only"),
    C("if x.is_cuda and x.dim() == 3:", "device_type", R, False,
      "if x.device.type in ('cuda', 'npu') and x.dim() == 3:",
      "NPU tensors take the TorchScript fallback (correct, slower) until the kernel runs on triton-ascend "
      "(unconfirmed)"),
    C('x = torch.randn(B, C, T, device="cuda", dtype=dtype, requires_grad=True)', "device_type", R, True,
      'x = torch.randn(B, C, T, device="npu", dtype=dtype, requires_grad=True)', "benchmark entry point"),
    C('alpha = torch.rand(1, C, 1, device="cuda", dtype=dtype, requires_grad=True) + 0.5', "device_type", R, True,
      'alpha = torch.rand(1, C, 1, device="npu", dtype=dtype, requires_grad=True) + 0.5', "benchmark"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "benchmark"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "benchmark"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "benchmark"),
])
