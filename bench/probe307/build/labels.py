# Labels for probe307: consistency models & diffusion distillation (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# "required" follows the brief: True only if the unchanged line fails / computes wrong / silently
# misbehaves on an NPU host (torch_npu on a CPU build of torch); perf-only, no-op and unconfirmed -> False.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
AUTOLOAD = "torch_npu>=2.5.1 autoloads as a device backend, so the explicit import is recommended but not mandatory"

# ---------------------------------------------------------------- OpenAI consistency_models

E("cm_dist_util", "cm/dist_util.py", "explicit_replacement",
  "openai/consistency_models cm/dist_util.py (MPI + NCCL process group, rank % GPUS_PER_NODE device pinning)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; without ASCEND_RT_VISIBLE_DEVICES every MPI rank sees all NPUs and dev() ('npu' without index) puts all ranks on npu:0"),
    C('backend = "gloo" if not th.cuda.is_available() else "nccl"', "dist_backend", "replace", True,
      'backend = "gloo" if not th.npu.is_available() else "hccl"',
      "th.cuda.is_available() is False on an NPU host -> silently falls back to gloo/CPU collectives; NCCL does not exist there, HCCL is the NPU backend"),
    C("=if th.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if th.npu.is_available():",
      "dev() would return cpu on an NPU host and the whole model would train on the CPU"),
    C('return th.device("cuda")', "device_type", "replace", True,
      'return th.device("npu")', "device string; relies on ASCEND_RT_VISIBLE_DEVICES to map the rank to one NPU"),
])

E("cm_fp16_util", "cm/fp16_util.py", "device_branch_or_abstraction",
  "openai/consistency_models cm/fp16_util.py (manual fp16 master-weight trainer, no torch.cuda.amp)", [
])

E("cm_nn", "cm/nn.py", "explicit_replacement",
  "openai/consistency_models cm/nn.py (GroupNorm32, timestep embedding, recompute CheckpointFunction)", [
    C('"enabled": th.is_autocast_enabled(),', "amp", "replace", False,
      '"enabled": th.is_autocast_enabled("npu"),',
      "argument-less is_autocast_enabled() reports CUDA autocast only; CM trains with manual fp16 (no autocast), so it only matters if someone wraps the model in NPU autocast"),
    C('"dtype": th.get_autocast_gpu_dtype(),', "amp", "replace", False,
      '"dtype": th.npu.get_autocast_dtype(),',
      "GPU autocast dtype; irrelevant while CM runs without autocast"),
    C("with th.enable_grad(), th.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", False,
      "with th.enable_grad(), th.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "recompute under the forward's autocast state; with enabled=False (CM's manual fp16) the CUDA context is a no-op on NPU, so not required here"),
])

E("cm_unet", "cm/unet.py", "kernel_rewrite",
  "openai/consistency_models cm/unet.py (ADM UNet with QKVFlashAttention from flash-attn 0.2)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the ported QKVFlashAttention calls torch_npu.npu_fusion_attention directly, so the name must be imported here"),
    C("from flash_attn.flash_attention import FlashAttention", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU; this import runs for the default attention_type='flash'"),
    C("self.inner_attn = FlashAttention(", "attention_kernel", "replace", True,
      "self.scale = self.head_dim ** -0.5  # NPU: fused attention via torch_npu.npu_fusion_attention",
      "FlashAttention module object no longer exists"),
    C("qkv, _ = self.inner_attn(", "attention_kernel", "replace", True,
      'q, k, v = qkv.unbind(dim=2); qkv = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale, keep_prob=1.0)[0]',
      "flash-attn packed-qkv call -> npu_fusion_attention (BSND, non-causal); output is already b s h d"),
])

E("cm_karras", "cm/karras_diffusion.py", "device_branch_or_abstraction",
  "openai/consistency_models cm/karras_diffusion.py (KarrasDenoiser, consistency losses, samplers)", [
])

E("cm_random_util", "cm/random_util.py", "explicit_replacement",
  "openai/consistency_models cm/random_util.py (deterministic per-sample generators for FID sampling)", [
    C("=if th.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if th.npu.is_available():",
      "otherwise rng_cuda is never created and get_generator(device='npu') raises AttributeError"),
    C("self.use_cuda = th.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.use_cuda = th.npu.is_available()",
      "same for the per-sample generators (name kept; it now means 'device generators')"),
])

E("cm_train_util", "cm/train_util.py", "explicit_replacement",
  "openai/consistency_models cm/train_util.py (TrainLoop / CMTrainLoop with DDP and EMA)", [
    C("self.sync_cuda = th.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.sync_cuda = th.npu.is_available()",
      "only gates the memory log line"),
    C("=if th.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if th.npu.is_available():",
      "False on NPU -> use_ddp=False: the model is never wrapped in DDP and gradients are silently not synchronised across ranks"),
    C('logger.logkv("max_mem_gb", th.cuda.max_memory_allocated() / 2**30)', "torch_cuda_api", "replace", False,
      'logger.logkv("max_mem_gb", th.npu.max_memory_allocated() / 2**30)',
      "logging only; the CUDA call reports 0 when CUDA was never initialised"),
])

E("cm_train_script", "scripts/cm_train.py", "explicit_replacement",
  "openai/consistency_models scripts/cm_train.py (CD / CT entry point)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("th.cuda.manual_seed_all(args.seed + dist.get_rank())", "torch_cuda_api", "replace", False,
      "th.npu.manual_seed_all(args.seed + dist.get_rank())",
      "th.manual_seed on the previous line already seeds the PrivateUse1 (npu) generators; the CUDA call is a lazy no-op"),
])

E("cm_image_sample", "scripts/image_sample.py", "explicit_replacement",
  "openai/consistency_models scripts/image_sample.py (multi-rank sampling to .npz, with timing)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("th.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "th.npu.synchronize()",
      "raises on a torch build without CUDA; needed for correct timing of async NPU kernels"),
])

E("cm_launch", "scripts/launch.sh", "explicit_replacement",
  "openai/consistency_models scripts/launch.sh (mpiexec launch lines for EDM / CD / CT / sampling)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (libascendcl/libhccl, op kernels) must be sourced before torch_npu is imported"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "NCCL_* is ignored by HCCL; nearest knob is the CANN log level"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}", "single-node MPI run; HCCL picks a host NIC itself, but the intent maps to HCCL_SOCKET_IFNAME"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent (NPU-to-NPU traffic uses the NPU RoCE NICs); silent no-op"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on an Ascend host and `set -e` aborts the script (exit 127)"),
])

E("cm_setup", "setup.py", "explicit_replacement",
  "openai/consistency_models setup.py (install_requires incl. flash-attn and mpi4py)", [
    C('"torch>=1.13",', "import_torch_npu", "npu_only_addition", True,
      '"torch-npu==2.1.0.post10",',
      "torch_npu wheel matching the installed torch (2.1.0 / CANN 8.0.0 line); torch itself must then be the matching CPU/aarch64 build"),
    C('"flash-attn==0.2.8",', "attention_kernel", "removal", True, None,
      "flash-attn builds against CUDA/nvcc; pip install -e . fails on an NPU host"),
])

E("cm_docker", "docker/Dockerfile", "explicit_replacement",
  "consistency_models training container (nvcr.io PyTorch base, flash-attn build, MPI)", [
    C("FROM nvcr.io/nvidia/pytorch:23.04-py3", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0-ubuntu22.04  # CANN + torch 2.1.0 + torch-npu preinstalled",
      "NGC image ships CUDA torch and no CANN/torch_npu"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "env_var", "removal", False, None,
      "only used by nvcc extension builds; dead on NPU"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "container device selection for the Ascend Docker runtime; can equally be given at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime hint; no-op"),
    C("MAX_JOBS=8 pip install --no-cache-dir flash-attn==0.2.8 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn compile needs CUDA/nvcc; the RUN step fails and the image does not build"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False,
      "ENV ASCEND_GLOBAL_LOG_LEVEL=3", "ignored by HCCL"),
])

# ---------------------------------------------------------------- diffusers LCM / LCM-LoRA

E("lcm_lora_sdxl", "examples/consistency_distillation/train_lcm_distill_lora_sdxl.py", "device_branch_or_abstraction",
  "huggingface/diffusers examples/consistency_distillation/train_lcm_distill_lora_sdxl.py (LCM-LoRA, accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("pipeline.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "pipeline.set_attn_processor(AttnProcessor2_0())",
      "xformers has no NPU backend; run script passes --enable_xformers_memory_efficient_attention (SDPA dispatches to NPU FA)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "CUDA empty_cache is a silent no-op when CUDA is uninitialised; NPU cache not released (memory only)"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "unet.set_attn_processor(AttnProcessor2_0())",
      "with the flag set and no xformers on the NPU host the script raises 'xformers is not available'"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", True,
      "optimizer_class = torch.optim.AdamW  # bitsandbytes 8-bit optimizers have no NPU kernels",
      "run script passes --use_8bit_adam; bitsandbytes' NPU support covers NF4 quantisation only, not 8-bit optimizers"),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", "replace", False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "performance only (LoRA parameters are small)"),
    C('with torch.no_grad() and torch.autocast("cuda"):', "amp", "replace", False,
      'with torch.no_grad(), torch.autocast("npu"):',
      "the unet is accelerate-prepared, so its forward already runs under autocast(npu); the 'cuda' context is disabled with a warning -> redundant (upstream `and` quirk also means no_grad is not entered)"),
    C('with torch.no_grad() and torch.autocast("cuda", dtype=weight_dtype):', "amp", "replace", False,
      'with torch.no_grad(), torch.autocast("npu", dtype=weight_dtype):',
      "same as the teacher block: accelerate's autocast wrapper already covers the prepared unet"),
    C("torch.cuda.empty_cache()  # free the student", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the student before the final pipeline is built", "memory only"),
])

E("lcm_sd_wds", "examples/consistency_distillation/train_lcm_distill_sd_wds.py", "explicit_replacement",
  "huggingface/diffusers examples/consistency_distillation/train_lcm_distill_sd_wds.py (full LCD with EMA target unet, webdataset)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("=unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "unet.set_attn_processor(AttnProcessor2_0())", "xformers has no NPU backend"),
    C("=teacher_unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "teacher_unet.set_attn_processor(AttnProcessor2_0())", "xformers has no NPU backend"),
    C("=target_unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "target_unet.set_attn_processor(AttnProcessor2_0())", "xformers has no NPU backend"),
    C('with torch.autocast("cuda"):', "amp", "replace", True,
      'with torch.autocast("npu"):',
      "teacher_unet is not accelerate-prepared and stays fp32 unless --cast_teacher_unet; its inputs are cast to weight_dtype (fp16) -> without NPU autocast the conv raises a Half/Float dtype mismatch"),
    C('with torch.autocast("cuda", dtype=weight_dtype):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=weight_dtype):',
      "target unet and its inputs are explicitly fp32, so losing autocast only costs speed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "memory only"),
])

E("lcm_run_sh", "examples/consistency_distillation/run_lcm_lora_sdxl.sh", "explicit_replacement",
  "LCM-LoRA SDXL launch script (accelerate launch with xformers / 8-bit Adam flags)", [
    C('export OUTPUT_DIR="lcm-lora-sdxl-$(date +%m%d)"', "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before accelerate starts the workers"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on Ascend: the 4 workers would land on NPUs 0-3 instead of 4-7"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "no-op for HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1", "HCCL watchdog equivalent; default already on per MindCluster docs"),
    C("--enable_xformers_memory_efficient_attention \\", "attention_kernel", "removal", True, None,
      "training script raises ValueError when xformers is missing (no NPU backend)"),
    C("--use_8bit_adam \\", "fused_optimizer", "removal", True, None,
      "selects bitsandbytes AdamW8bit, not available on NPU"),
])

E("lcm_accel_cfg", "configs/accelerate_multi_gpu.yaml", "explicit_replacement",
  "accelerate config (accelerate config default, multi-GPU, fp16)", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
      "distributed_type: MULTI_NPU",
      "unconfirmed: accelerate's PartialState picks hccl from is_npu_available() at runtime, so MULTI_GPU may still launch; MULTI_NPU is the matching type"),
])

E("lcm_requirements", "requirements.txt", "explicit_replacement",
  "LCM training/inference requirements pinned to CUDA 12.1 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu needs the CPU torch wheel (x86) or plain PyPI torch (aarch64); cu121 has no aarch64 wheels"),
    C("torch==2.2.2+cu121", "device_type", "replace", True,
      "torch==2.3.1", "+cu121 local version does not exist on the NPU index, and there is no torch_npu for 2.2.2"),
    C("torchvision==0.17.2+cu121", "device_type", "replace", True,
      "torchvision==0.18.1", "must match the CPU torch"),
    C("xformers==0.0.25.post1", "attention_kernel", "removal", True, None,
      "no NPU build; pip would pull a CUDA torch as its dependency"),
    C("bitsandbytes>=0.43.0", "fused_optimizer", "removal", False, None,
      "installs, but its 8-bit optimizers are unusable on NPU (the flag is removed from the launcher)"),
    C("triton==2.2.0", "triton_kernel_tuning", "replace", False,
      "triton-ascend", "only needed if the lcm_fast Triton kernels are kept; unconfirmed which triton-ascend version pairs with torch 2.3.1"),
    C("safetensors", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.3.1.post4", "torch_npu wheel matching torch 2.3.1"),
])

E("lcm_infer", "scripts/lcm_lora_inference.py", "device_branch_or_abstraction",
  "LCM-LoRA inference / latency script (diffusers docs style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "without an npu branch get_device() silently returns cpu on an Ascend host"),
    C('dtype = torch.float16 if device == "cuda" else torch.float32', "device_type", "replace", False,
      'dtype = torch.float16 if device in ("cuda", "npu") else torch.float32',
      "NPU would run fp32: correct but slower"),
    C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "pipe.set_attn_processor(AttnProcessor2_0())", "with --xformers: no NPU backend"),
    C("pipe.unet.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "msFmkTransplt README lists channels_last as unsupported on NPU; unconfirmed whether it errors or is ignored"),
    C('pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.unet = torch.compile(pipe.unet, backend="npugraphs", fullgraph=True)',
      "reduce-overhead = CUDA graphs; Ascend documents backend='npugraphs' as the equivalent (unconfirmed that the CUDA mode string fails)"),
])

E("lcm_triton_gn", "lcm_fast/ops/triton_group_norm.py", "kernel_rewrite",
  "stable-fast-style Triton fused GroupNorm+SiLU for real-time LCM / SD-Turbo UNets", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", "needed only for the optional npu_group_norm_silu branch below"),
    C('NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count', "device_capability_check", "replace", True,
      "NUM_SMS = torch.npu.get_device_properties(0).vector_core_num",
      "runs at import and fails; NPU device properties expose only name/total_memory/L2_cache_size/cube_core_num/vector_core_num"),
    C("_SUPPORTS_BF16 = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", "replace", True,
      "_SUPPORTS_BF16 = torch.npu.is_bf16_supported()",
      "runs at import; get_device_capability returns None on NPU (not an sm_ version)"),
    C("x, mean, rstd, n_rows, row_size, eps, NUM_PROGRAMS=num_programs, BLOCK_SIZE=2048, num_warps=8", "triton_kernel_tuning", "replace", False,
      "x, mean, rstd, n_rows, row_size, eps, NUM_PROGRAMS=num_programs, BLOCK_SIZE=2048",
      "group_stats is not device-gated; under triton-ascend num_warps is a GPU notion and the persistent grid should follow the AI-core count (unconfirmed)"),
    C("if x.is_cuda and x.dim() == 4 and x.is_contiguous() and not torch.is_grad_enabled():", "npu_fused_op", "add_branch", False,
      'if x.device.type == "npu": return torch_npu.npu_group_norm_silu(x, self.weight, self.bias, self.num_groups, self.eps)[0]',
      "NPU tensors already fall back to F.group_norm+F.silu (correct); the fused NPU op is a speed-up"),
])

# ---------------------------------------------------------------- SDXL-Turbo / ADD

E("add_config", "configs/add_sdxl_turbo.json", "explicit_replacement",
  "ADD (SDXL-Turbo recipe) training config consumed by add/train_add.py", [
    C('"device": "cuda",', "device_type", "replace", True,
      '"device": "npu",', "train_add.py builds torch.device(cfg.runtime.device, local_rank) from it"),
    C('"dist_backend": "nccl",', "dist_backend", "replace", True,
      '"dist_backend": "hccl",', "passed to dist.init_process_group; NCCL is not available on NPU"),
    C('"attention_backend": "xformers",', "attention_kernel", "replace", True,
      '"attention_backend": "sdpa",', "selects enable_xformers_memory_efficient_attention(); xformers has no NPU backend"),
    C('"compile_mode": "max-autotune",', "compile_mode", "replace", False,
      '"compile_mode": "default",', "max-autotune tunes Triton GPU kernels; unconfirmed on NPU Inductor"),
])

E("add_train", "add/train_add.py", "explicit_replacement",
  "community Adversarial Diffusion Distillation trainer (SDXL student/teacher, DINOv2 discriminator, torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "fails on a torch build without CUDA"),
    C('teacher = teacher.to("cuda", torch.float16)', "tensor_to_device", "replace", True,
      "teacher = teacher.to(device, torch.float16)", "hard-coded cuda device string (ignores the config)"),
    C("scaler_g = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", False,
      "scaler_g = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "config uses bf16 so the scaler is disabled anyway; required only for fp16 runs"),
    C("scaler_d = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", False,
      "scaler_d = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)", "as above"),
    C("=with torch.cuda.amp.autocast(dtype=amp_dtype):", "amp", "replace", True,
      "with torch.autocast(\"npu\", dtype=amp_dtype):",
      "fp32 student gets fp16 latents from the fp16 VAE; without NPU autocast the first conv raises a dtype mismatch"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(dtype=amp_dtype):", "amp", "replace", True,
      "with torch.no_grad(), torch.autocast(\"npu\", dtype=amp_dtype):",
      "fp16 teacher receives fp32 renoised latents -> dtype mismatch without autocast"),
    C("with torch.cuda.amp.autocast(enabled=True, dtype=amp_dtype):", "amp", "replace", True,
      "with torch.autocast(\"npu\", enabled=True, dtype=amp_dtype):",
      "fp32 discriminator heads receive fp16 decoded images -> dtype mismatch without autocast"),
    C("with torch.cuda.amp.autocast(enabled=True, dtype=amp_dtype, cache_enabled=False):", "amp", "replace", True,
      "with torch.autocast(\"npu\", enabled=True, dtype=amp_dtype, cache_enabled=False):", "same for the D step"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2**30", "logging only (would print 0)"),
])

E("add_disc", "add/discriminator.py", "explicit_replacement",
  "ADD / StyleGAN-T projected discriminator on frozen DINOv2 features", [
    C("torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False)", "attention_kernel", "replace", True,
      "torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH)",
      "torch.backends.cuda.sdp_kernel is unsupported on NPU (msFmkTransplt list, Ascend API table); the math-path guard for R1's double backward would silently not apply. Replacement is a guess (unconfirmed on NPU)"),
])

E("add_bench", "scripts/benchmark_sdxl_turbo.py", "explicit_replacement",
  "SDXL-Turbo / SD-Turbo latency benchmark (torch.compile max-autotune, CUDA events, profiler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", "removal", False, None,
      "tunes Triton GPU kernel configs; no confirmed effect on NPU"),
    C("torch._inductor.config.coordinate_descent_check_all_directions = True", "triton_kernel_tuning", "removal", False, None,
      "same"),
    C('pipe = pipe.to("cuda")', "tensor_to_device", "replace", True,
      'pipe = pipe.to("npu")', "device string"),
    C("pipe.unet.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "channels_last listed as unsupported by msFmkTransplt; only with --channels_last; failure mode unconfirmed"),
    C("pipe.vae.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None, "same"),
    C('pipe.unet = torch.compile(pipe.unet, mode="max-autotune", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.unet = torch.compile(pipe.unet, fullgraph=True)', "max-autotune = Triton/cudagraph autotuning; unconfirmed on NPU"),
    C('pipe.vae.decode = torch.compile(pipe.vae.decode, mode="max-autotune", fullgraph=True)', "compile_mode", "replace", False,
      'pipe.vae.decode = torch.compile(pipe.vae.decode, fullgraph=True)', "same"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):", "attention_kernel", "replace", True,
      "with contextlib.nullcontext():  # NPU SDPA selects its fused kernel itself",
      "torch.backends.cuda.sdp_kernel is unsupported on NPU (msFmkTransplt 2.7 list)"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events fail without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "as above"),
    C('"gpu": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
      '"gpu": torch.npu.get_device_name(0),', "raises without CUDA"),
    C('"peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", "replace", False,
      '"peak_mem_gb": torch.npu.max_memory_allocated() / 1e9,', "reporting only (would be 0)"),
    C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:", "torch_cuda_api", "replace", True,
      "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU], record_shapes=True) as prof:",
      "with --profile the CUDA activity records no NPU kernels: the profile silently misses all device time"),
    C('print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))', "torch_cuda_api", "replace", False,
      'print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))',
      "sort key for the table; NPU key name unconfirmed"),
])

# ---------------------------------------------------------------- DMD2

E("dmd_train", "main/train_sd.py", "explicit_replacement",
  "tianweiy/DMD2 main/train_sd.py (accelerate trainer for distribution-matching distillation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C('process_group_kwargs = InitProcessGroupKwargs(backend="nccl", timeout=timedelta(seconds=5400))', "dist_backend", "replace", True,
      'process_group_kwargs = InitProcessGroupKwargs(backend="hccl", timeout=timedelta(seconds=5400))',
      "an explicit backend overrides accelerate's device-based choice; nccl is unavailable on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "memory only"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self.args.use_fp16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16, enabled=self.args.use_fp16):',
      "logging VAE is bf16 with --use_fp16 while generator latents are fp32 and the VAE is not accelerate-prepared -> dtype mismatch at the first wandb step"),
    C("log_dict['dmtrain_gradient_norm'] = accelerator.gather(torch.tensor(log_dict['dmtrain_gradient_norm']).cuda()).mean().item()", "tensor_to_device", "replace", True,
      "log_dict['dmtrain_gradient_norm'] = accelerator.gather(torch.tensor(log_dict['dmtrain_gradient_norm']).to(accelerator.device)).mean().item()",
      ".cuda() fails without CUDA"),
    C('"max_memory_allocated_gb": torch.cuda.max_memory_allocated() / 1024**3,', "torch_cuda_api", "replace", False,
      '"max_memory_allocated_gb": torch.npu.max_memory_allocated() / 1024**3,', "logging only"),
])

E("dmd_guidance", "main/sd_guidance.py", "explicit_replacement",
  "tianweiy/DMD2 main/sd_guidance.py (real/fake score UNets, DM loss, GAN classifier branch)", [
    C("noisy_latents.double(), pred_fake_noise.double(), self.alphas_cumprod.double(), timesteps", "unsupported_op_workaround", "replace", False,
      "noisy_latents.float(), pred_fake_noise.float(), self.alphas_cumprod.float(), timesteps",
      "NPU has no fp64: torch_npu warns and computes in fp32 anyway; explicit fp32 avoids the cast (precision difference only)"),
    C("noisy_latents.double(), pred_real_noise.double(), self.alphas_cumprod.double(), timesteps", "unsupported_op_workaround", "replace", False,
      "noisy_latents.float(), pred_real_noise.float(), self.alphas_cumprod.float(), timesteps", "as above"),
    C("noisy_latents.double(), fake_noise_pred.double(), self.alphas_cumprod.double(), timesteps", "unsupported_op_workaround", "replace", False,
      "noisy_latents.float(), fake_noise_pred.float(), self.alphas_cumprod.float(), timesteps", "as above"),
    C('self.network_context_manager = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if self.use_fp16 else NoOpContext()', "amp", "replace", False,
      'self.network_context_manager = torch.autocast(device_type="npu", dtype=torch.bfloat16) if self.use_fp16 else NoOpContext()',
      "guidance model is accelerate-prepared with mixed_precision=bf16 (autocast(npu) wrapper) and real-unet inputs are cast to bf16 explicitly, so the disabled cuda context is redundant"),
])

E("dmd_launch", "experiments/sdxl/sdxl_cond999_8node_lr5e-7_denoising4step_diffusion1000_gan5e-3_guidance8_noinit_noode.sh", "explicit_replacement",
  "tianweiy/DMD2 experiments/sdxl/*.sh (8-node torchrun launcher)", [
    C("export NODE_RANK=${NODE_RANK:-0}", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced on every node before torchrun"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "HCCL does not use host IB HCAs; no-op"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=bond0", "multi-node root-info NIC selection; needed only if HCCL's default NIC choice is wrong on these hosts"),
    C("export NCCL_TIMEOUT=5400", "env_var", "replace", False,
      "export HCCL_EXEC_TIMEOUT=5400", "intent maps to HCCL's collective timeout (default 1836 s)"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA stream-connection knob; no-op"),
    C("nvidia-smi topo -m || true", "torch_cuda_api", "replace", False,
      "npu-smi info || true", "diagnostic only; `|| true` keeps the script going"),
])

# ---------------------------------------------------------------- InstaFlow / rectified flow

E("rf_pipeline", "code/pipeline_rf.py", "device_branch_or_abstraction",
  "gnobitab/InstaFlow code/pipeline_rf.py (RectifiedFlowPipeline on diffusers)", [
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{gpu_id}")', "sequential offload target; torch.device('cuda:0') cannot execute on an NPU host"),
    C('device = torch.device("cuda", gpu_id)', "device_type", "replace", True,
      'device = torch.device("npu", gpu_id)', "model offload target"),
    C("torch.cuda.empty_cache()  # otherwise", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # otherwise we don't see the memory savings (but they probably exist)", "memory only"),
])

E("rf_reflow_train", "code/train_reflow.py", "explicit_replacement",
  "InstaFlow-style 2-rectified-flow reflow training loop (plain torchrun DDP, apex, AMP, NVTX)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
      "guarded import; without apex the AdamW fallback works, the NPU fused optimizer is a speed-up"),
    C("optimizer = FusedAdam(unet.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=args.weight_decay, adam_w_mode=True)", "fused_optimizer", "replace", False,
      "optimizer = FusedAdam(unet.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=args.weight_decay)",
      "NpuFusedAdamW has no adam_w_mode argument"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "side copy stream; fails without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "as above"),
    C("self.batch = {k: v.pin_memory().to(self.device, non_blocking=True) for k, v in batch.items()}", "pin_memory", "replace", False,
      'self.batch = {k: v.pin_memory(device="npu").to(self.device, non_blocking=True) for k, v in batch.items()}',
      "unconfirmed: default pin_memory() targets CUDA's host allocator; pinning for NPU keeps the copy asynchronous"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "as above"),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True,
      "_RANGES.append(torch.npu.mstx.range_start(name))",
      "with --nvtx: torch.cuda.nvtx is not redirected to NPU; mstx is the Ascend equivalent"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch.npu.mstx.range_end(_RANGES.pop())", "as above"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL unavailable on NPU"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "fails without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "device string"),
    C('unet = torch.compile(unet, mode="max-autotune-no-cudagraphs")', "compile_mode", "replace", False,
      "unet = torch.compile(unet)", "Triton autotuning mode; unconfirmed on NPU Inductor (only with --compile)"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=args.mixed_precision == "fp16")', "amp", "replace", True,
      'scaler = torch.npu.amp.GradScaler(enabled=args.mixed_precision == "fp16")',
      "default is fp16: the CUDA scaler disables itself without CUDA, so fp16 gradients would go unscaled"),
    C('with torch.cuda.amp.autocast(enabled=args.mixed_precision != "no", dtype=amp_dtype):', "amp", "replace", True,
      'with torch.autocast("npu", enabled=args.mixed_precision != "no", dtype=amp_dtype):',
      "fp16 text-encoder states feed the fp32 UNet cross-attention; without NPU autocast Linear raises a Half/Float mismatch"),
    C('f"mem {torch.cuda.max_memory_allocated(device) / 2**30:.1f}G"', "torch_cuda_api", "replace", False,
      'f"mem {torch.npu.max_memory_allocated(device) / 2**30:.1f}G"', "logging only"),
])

E("rf_env", "environment.yml", "explicit_replacement",
  "InstaFlow-style conda environment (pytorch-cuda, cudatoolkit-dev for apex, xformers)", [
    C("=- nvidia", "device_type", "removal", False, None, "conda channel only needed for CUDA runtime packages"),
    C("pytorch-cuda=11.8", "device_type", "removal", True, None,
      "CUDA runtime metapackage; no aarch64 build, and torch_npu needs the CPU torch"),
    C("cudatoolkit-dev=11.8", "custom_cuda_extension", "removal", True, None,
      "nvcc toolkit for building apex/CUDA extensions; not installable/usable on an Ascend host"),
    C("xformers==0.0.22.post7", "attention_kernel", "removal", True, None, "no NPU build; pulls CUDA torch"),
    C("apex @ git+https://github.com/NVIDIA/apex.git", "fused_optimizer", "removal", False, None,
      "python-only install succeeds but FusedAdam needs its CUDA extension; the reflow script only uses it with --fused_adam"),
    C("nvidia-ml-py3", "torch_cuda_api", "removal", False, None, "NVML bindings; unused on NPU"),
    C("=- ftfy", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post10", "torch_npu wheel matching pytorch 2.1.0"),
])

# ---------------------------------------------------------------- ECT (EDM code base) and CTM ops

E("ect_distributed", "torch_utils/distributed.py", "explicit_replacement",
  "locuslab/ect (EDM code base) torch_utils/distributed.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", AUTOLOAD),
    C("backend = 'gloo' if os.name == 'nt' else 'nccl'", "dist_backend", "replace", True,
      "backend = 'gloo' if os.name == 'nt' else 'hccl'", "NCCL unavailable on NPU"),
    C("torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(os.environ.get('LOCAL_RANK', '0')))", "fails without CUDA"),
    C("sync_device = torch.device('cuda') if get_world_size() > 1 else None", "device_type", "replace", True,
      "sync_device = torch.device('npu') if get_world_size() > 1 else None",
      "training_stats all-reduces its counters on this device; HCCL needs NPU tensors"),
])

E("ect_training_loop", "training/ct_training_loop.py", "explicit_replacement",
  "locuslab/ect training/ct_training_loop.py (EDM training loop + few-step generator_fn)", [
    C("t_steps = torch.tensor([t_max] + list(mid_t), dtype=torch.float64, device=latents.device)", "unsupported_op_workaround", "replace", False,
      "t_steps = torch.tensor([t_max] + list(mid_t), dtype=torch.float32, device=latents.device)",
      "fp64 is not supported on NPU; torch_npu downcasts to fp32 with a warning (FID sampler precision only)"),
    C("x = latents.to(torch.float64) * t_steps[0]", "unsupported_op_workaround", "replace", False,
      "x = latents.to(torch.float32) * t_steps[0]", "as above"),
    C("x = net(x, t_cur, class_labels).to(torch.float64)", "unsupported_op_workaround", "replace", False,
      "x = net(x, t_cur, class_labels).to(torch.float32)", "as above"),
    C("device              = torch.device('cuda'),", "device_type", "replace", True,
      "device              = torch.device('npu'),", "default device used by ct_train.py (not overridden)"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "logging only (reports 0)"),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", False,
      "fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', torch.npu.max_memory_reserved(device) / 2**30):<6.2f}\"]",
      "logging only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "calls into the CUDA allocator and fails on a torch build without CUDA"),
])

E("ctm_bias_act", "torch_utils/ops/bias_act.py", "kernel_rewrite",
  "StyleGAN3 torch_utils/ops/bias_act.py as vendored by CTM / StyleGAN-XL discriminators", [
    C("_plugin = custom_ops.get_plugin(", "custom_cuda_extension", "replace", False,
      "_plugin = None  # no nvcc on Ascend; bias_act() uses _bias_act_ref for npu tensors",
      "nvcc JIT build of bias_act.cu; dead on NPU because bias_act() only calls _init() for x.device.type == 'cuda'"),
])
