"""Labels for probe73 (hand-written synthetic upstream files; see ../README.md).

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
DEV = "device_branch_or_abstraction"
EXP = "explicit_replacement"

UNCONF_BNB = ("bitsandbytes 8-bit optimizers are not listed for Ascend NPU (only NF4 quant/dequant in the "
              "multi-backend branch); whether the step fails or runs slowly is unconfirmed")

# --------------------------------------------------------------------------------------------- kohya-ss sd-scripts

E("kohya_device_utils", "library/device_utils.py", DEV,
  "kohya-ss/sd-scripts library/device_utils.py (HAS_CUDA/XPU/MPS flags, clean_memory_on_device, get_preferred_device)", [
    C("=import torch", "import_torch_npu", A, True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "the HAS_NPU flag and torch.npu.* below need torch_npu loaded (explicit import recommended even with autoload)"),
    C("HAS_CUDA = torch.cuda.is_available()", "device_type", A, True,
      "HAS_NPU = hasattr(torch, 'npu') and torch.npu.is_available()",
      "every helper in this module branches on these flags; without an NPU flag the NPU is invisible to them"),
    C("if HAS_CUDA:  # also covers ROCm builds", "torch_cuda_api", B, False,
      "elif HAS_NPU:\n        torch.npu.empty_cache()",
      "clean_memory() silently skips the NPU cache release: memory/perf only"),
    C('=if device.type == "xpu":', "torch_cuda_api", B, False,
      'if device.type == "npu":\n        torch.npu.empty_cache()',
      "clean_memory_on_device(accelerator.device) gets device.type == 'npu' and matches no branch: cache never released (no-op)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", B, False,
      'elif device.type == "npu":\n        torch.npu.synchronize()',
      "synchronize_device() is a silent no-op for npu devices; only timing/ordering around offload is affected"),
    C('device = torch.device("cuda")', "device_type", B, True,
      'elif HAS_NPU:\n        device = torch.device("npu")',
      "get_preferred_device() (used by the stand-alone tools: merge/convert/cache scripts) falls through to CPU on an NPU host"),
    C("free, _total = torch.cuda.mem_get_info(device)", "torch_cuda_api", B, False,
      'if device.type == "npu":\n        free, _total = torch.npu.mem_get_info(device)',
      "npu devices return 0 MiB free: the --highvram heuristic just stays conservative"),
])

E("kohya_train_util", "library/train_util.py", DEV,
  "kohya-ss/sd-scripts library/train_util.py (xformers/sdpa switch, bitsandbytes optimizers, --lowram, sample RNG save/restore)", [
    C("=import xformers.ops", "attention_kernel", R, True,
      'logger.warning("xformers has no Ascend backend, using SDPA"); unet.set_use_sdpa(True); return',
      "--xformers (passed by the usual launch scripts) raises ImportError: xformers cannot be installed on NPU; route to SDPA"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", UNCONF_BNB),
    C("optimizer_class = bnb.optim.Lion8bit", "fused_optimizer", R, False,
      "optimizer_class = lion_pytorch.Lion", UNCONF_BNB),
    C("optimizer_class = bnb.optim.PagedAdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "paged optimizers rely on CUDA unified memory; " + UNCONF_BNB),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "performance only (msFmkTransplt suggests the NpuFused* optimizers for torch.optim.AdamW)"),
    C('"cuda" if args.lowram else "cpu",', "tensor_to_device", R, True,
      'accelerator.device if args.lowram else "cpu",',
      "--lowram loads the checkpoint straight to 'cuda': fails on an NPU host"),
    C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api", R, True,
      "cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
      "is_available() is False on NPU, so the device RNG is never saved around sample generation and the training "
      "noise stream silently changes after every sampling step"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds all devices"),
    C("with torch.cuda.device(torch.cuda.current_device()):", "torch_cuda_api", R, True,
      "with torch.npu.device(torch.npu.current_device()):",
      "torch.cuda.current_device() initialises CUDA and raises on an NPU host, every time samples are generated"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "edited together with the line above; empty_cache itself is a no-op without CUDA"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", R, False,
      "torch.npu.set_rng_state(cuda_rng_state)",
      "only reached when the state was saved, which the unchanged code never does on NPU"),
])

E("kohya_train_network", "train_network.py", DEV,
  "kohya-ss/sd-scripts train_network.py (NetworkTrainer.train: latents cache, --fp8_base, VAE xformers)", [
    C("vae.set_use_memory_efficient_attention_xformers(args.xformers)", "attention_kernel", R, True,
      "vae.set_use_memory_efficient_attention_xformers(args.xformers and not is_torch_npu_available())",
      "with --xformers diffusers raises (xformers not installable / 'torch.cuda.is_available() should be True')"),
    C("unet_weight_dtype = torch.float8_e4m3fn", "unsupported_op_workaround", R, False,
      "unet_weight_dtype = weight_dtype  # fp8 storage not supported on Ascend",
      "unconfirmed: msFmkTransplt lists the float8 storage types as unsupported; fp8 tensor casts on NPU not checked"),
    C("te_weight_dtype = torch.float8_e4m3fn  # text encoder too", "unsupported_op_workaround", R, False,
      "te_weight_dtype = weight_dtype", "unconfirmed, see above"),
])

E("kohya_original_unet", "library/original_unet.py", EXP,
  "kohya-ss/sd-scripts library/original_unet.py (CrossAttention with xformers / mem_eff / sdpa paths, GEGLU)", [
    C("=import xformers.ops", "attention_kernel", R, True,
      "import torch_npu", "xformers has no NPU backend; the xformers forward is selected by --xformers"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None)", "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(q, k, v, h, "BSND", scale=q.shape[-1] ** -0.5)[0]',
      "q/k/v are (b, n, h, d) = BSND; npu_fusion_attention is the training FlashAttention on A2"),
    C("attention_scores = torch.baddbmm(", "unsupported_op_workaround", R, False,
      "attention_scores = torch.bmm(query, key.transpose(-1, -2)) * self.scale",
      "msFmkTransplt precision advice: baddbmm may overflow in fp16 on NPU, use bmm + mul"),
    C("hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)", "npu_fused_op", R, False,
      "return torch_npu.npu_geglu(self.proj(hidden_states), dim=-1, approximate=1)[0]",
      "performance only: fused GEGLU (the same swap diffusers makes on NPU)"),
])

E("kohya_prepare_buckets", "finetune/prepare_buckets_latents.py", EXP,
  "kohya-ss/sd-scripts finetune/prepare_buckets_latents.py (module-level DEVICE for VAE latent caching)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu is used by the ported DEVICE line"),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently encodes the whole dataset on the CPU on an NPU host (and fp16 VAE convs may not run on CPU at all)"),
])

E("kohya_wd14_tagger", "finetune/tag_images_by_wd14_tagger.py", EXP,
  "kohya-ss/sd-scripts finetune/tag_images_by_wd14_tagger.py (ONNX Runtime execution provider selection)", [
    C('["CUDAExecutionProvider"]', "device_type", R, False, '["CANNExecutionProvider"]',
      "unconfirmed (ONNX Runtime's CANN provider is not in the knowledge base); the CPU provider fallback works, so perf only"),
    C('if "CUDAExecutionProvider" in ort.get_available_providers()', "device_type", R, False,
      'if "CANNExecutionProvider" in ort.get_available_providers()', "same change as the line above"),
])

E("kohya_requirements", "requirements.txt", EXP,
  "kohya-ss/sd-scripts / kohya_ss requirements.txt pinned to cu121 wheels (xformers, bitsandbytes, onnxruntime-gpu)", [
    C("# --- core framework", "import_torch_npu", A, True, "torch-npu==2.1.0.post10",
      "torch_npu must be added, with the exact torch version it pairs with"),
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 Ascend hosts use the CPU torch wheels; aarch64 uses plain PyPI torch"),
    C("torch==2.1.2+cu121", "device_type", R, True, "torch==2.1.0",
      "+cu121 local version does not pair with any torch_npu wheel (torch_npu 2.1.0.postN needs torch==2.1.0)"),
    C("torchvision==0.16.2+cu121", "device_type", R, True, "torchvision==0.16.0",
      "must match the CPU torch build"),
    C("xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "xformers cannot be installed for NPU (and pins a CUDA torch)"),
    C('triton==2.1.0; platform_system == "Linux"', "triton_kernel_tuning", X, False, None,
      "NVIDIA Triton is useless on NPU; triton-ascend is the counterpart (unconfirmed whether anything here needs it)"),
    C("bitsandbytes==0.43.0", "fused_optimizer", X, False, None, UNCONF_BNB),
    C("onnxruntime-gpu==1.17.1", "device_type", R, False, "onnxruntime==1.17.1",
      "unconfirmed: CUDA build of ONNX Runtime; only used by the --onnx tagger, which falls back to CPU"),
])

E("kohya_accelerate_config", "config_files/accelerate/multi_gpu_bf16.yaml", EXP,
  "kohya_ss accelerate config (accelerate config output: MULTI_GPU, gpu_ids, bf16, inductor)", [
    C("distributed_type: MULTI_GPU", "distributed_framework", R, False, "distributed_type: MULTI_NPU",
      "unconfirmed: accelerate >= 0.22 re-detects NPU at runtime (PartialState picks hccl), so MULTI_GPU probably still works"),
    C("dynamo_backend: INDUCTOR", "compile_mode", R, False, "dynamo_backend: 'NO'",
      "unconfirmed: Inductor on NPU needs torch_npu >= 2.6 graph mode and max-autotune relies on Triton autotuning"),
])

E("kohya_train_lora_sh", "examples/train_sdxl_lora.sh", EXP,
  "sd-scripts / kohya_ss SDXL LoRA launch script (accelerate launch, --xformers, AdamW8bit, NCCL env)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1}",
      "the NPU runtime selects devices with ASCEND_RT_VISIBLE_DEVICES; a user's CUDA_VISIBLE_DEVICES=2,3 would be ignored"),
    C('NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", R, False,
      "NUM_GPUS=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "follows the rename above"),
    C("export PYTORCH_CUDA_ALLOC_CONF=", "env_var", R, False,
      'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"',
      "allocator tuning only; which PYTORCH_CUDA_ALLOC_CONF keys the NPU allocator accepts is unconfirmed beyond expandable_segments"),
    C("export NCCL_P2P_DISABLE=1", "env_var", X, False, None, "NCCL-only; HCCL ignores it"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only; HCCL ignores it"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version", "torch_cuda_api", R, True,
      "npu-smi info", "no nvidia-smi on an Ascend host: with set -e the script exits here"),
    C("import torch, xformers;", "attention_kernel", R, True,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"",
      "xformers is not installed on NPU: ImportError, script exits"),
    C('--optimizer_type="AdamW8bit"', "fused_optimizer", R, False, '--optimizer_type="AdamW" \\', UNCONF_BNB),
    C("=--xformers \\", "attention_kernel", R, True, "--sdpa \\",
      "selects the xformers path in train_util.replace_unet_modules, which raises without xformers"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", R, True,
      "npu-smi info -t usages -i 0",
      "last command: the script ends with exit 127 after a finished run"),
])

# --------------------------------------------------------------------------------------------- diffusers examples

E("diffusers_train_dreambooth", "examples/dreambooth/train_dreambooth.py", DEV,
  "huggingface/diffusers examples/dreambooth/train_dreambooth.py (prior preservation, xformers, 8-bit Adam)", [
    C('with torch.autocast("cuda"):', "amp", R, True,
      "with torch.autocast(accelerator.device.type):",
      "CUDA autocast is inactive for NPU tensors: the fp32 validation pipeline with fp16 weights runs un-autocast"),
    C("torch.cuda.empty_cache()  # free memory taken by the validation pipeline", "torch_cuda_api", R, False,
      "free_memory()", "no-op without CUDA; memory only"),
    C('torch_dtype = torch.float16 if accelerator.device.type == "cuda" else torch.float32', "device_type", R, False,
      'torch_dtype = torch.float16 if accelerator.device.type in ("cuda", "npu") else torch.float32',
      "class images are generated in fp32 on NPU: correct but slower"),
    C("if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                torch_npu.npu.empty_cache()",
      "cache release skipped on NPU after class-image generation: memory only"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", B, True,
      "if is_torch_npu_available():\n                unet.set_attn_processor(AttnProcessorNPU())",
      "--enable_xformers_memory_efficient_attention raises on NPU (no xformers / CUDA check in diffusers)"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", UNCONF_BNB),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", "performance only"),
])

E("diffusers_t2i_lora", "examples/text_to_image/train_text_to_image_lora.py", DEV,
  "huggingface/diffusers examples/text_to_image/train_text_to_image_lora.py (peft LoRA, device-agnostic validation)", [
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", B, True,
      "if is_torch_npu_available():\n                unet.set_attn_processor(AttnProcessorNPU())",
      "--enable_xformers_memory_efficient_attention raises on NPU"),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW", UNCONF_BNB),
    C("optimizer_cls = torch.optim.AdamW", "fused_optimizer", R, False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW", "performance only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "free_memory()",
      "no-op without CUDA; memory only"),
])

E("diffusers_dreambooth_lora_sdxl", "examples/dreambooth/train_dreambooth_lora_sdxl.py", DEV,
  "huggingface/diffusers examples/dreambooth/train_dreambooth_lora_sdxl.py (fp16 class images, Prodigy, torch.cuda.amp validation)", [
    C("with torch.cuda.amp.autocast():", "amp", R, True,
      "with torch.autocast(accelerator.device.type):",
      "torch.cuda.amp.autocast is inactive for NPU tensors: fp32 LoRA params vs fp16 UNet during validation"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "free_memory()", "no-op without CUDA; memory only"),
    C("has_supported_fp16_accelerator = torch.cuda.is_available() or torch.backends.mps.is_available()",
      "device_type", R, False,
      "has_supported_fp16_accelerator = torch.cuda.is_available() or torch.backends.mps.is_available() or is_torch_npu_available()",
      "class images generated in fp32 on NPU: correct but slower"),
    C("if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n                torch_npu.npu.empty_cache()", "memory only"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", B, True,
      "if is_torch_npu_available():\n                unet.set_attn_processor(AttnProcessorNPU())",
      "--enable_xformers_memory_efficient_attention raises on NPU"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", UNCONF_BNB),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW", "performance only"),
    C("torch.cuda.empty_cache()  # text encoders are no longer needed", "torch_cuda_api", R, False,
      "free_memory()", "no-op without CUDA; memory only"),
])

E("diffusers_attention_processor", "src/diffusers/models/attention_processor.py", DEV,
  "huggingface/diffusers models/attention_processor.py (xformers availability check, XFormersAttnProcessor, AttnProcessor2_0)", [
    C("elif not torch.cuda.is_available():", "device_type", B, True,
      "elif is_torch_npu_available():\n                processor = AttnProcessorNPU()",
      "enable_xformers_memory_efficient_attention() ends here with ValueError on an NPU host; route to an NPU processor"),
    C("attention_scores = torch.baddbmm(", "unsupported_op_workaround", R, False,
      "attention_scores = torch.bmm(query, key.transpose(-1, -2)) * self.scale + (baddbmm_input if beta else 0)",
      "msFmkTransplt precision advice for baddbmm (fp16 overflow); only the non-SDPA AttnProcessor uses it"),
    C("=class AttnProcessor2_0:", "attention_kernel", A, False,
      "class AttnProcessorNPU:  # torch_npu.npu_fusion_attention(q, k, v, heads, 'BNSD', ...)",
      "performance only: SDPA already dispatches to the NPU FlashAttention; diffusers added AttnProcessorNPU for this"),
])

E("diffusers_activations", "src/diffusers/models/activations.py", DEV,
  "huggingface/diffusers models/activations.py (GELU/GEGLU/SwiGLU feed-forward activations)", [
    C("=import torch", "import_torch_npu", A, False,
      "if is_torch_npu_available():\n    import torch_npu", "only needed for the optional fused activations below"),
    C("=hidden_states, gate = hidden_states.chunk(2, dim=-1)", "npu_fused_op", B, False,
      "if is_torch_npu_available():\n            return torch_npu.npu_geglu(hidden_states, dim=-1, approximate=1)[0]",
      "performance only: fused GEGLU (diffusers uses npu_geglu on NPU)"),
    C("hidden_states, gate = hidden_states.chunk(2, dim=-1)  # SwiGLU split", "npu_fused_op", B, False,
      "if is_torch_npu_available():\n            return torch_npu.npu_swiglu(torch.cat([gate, hidden_states], -1), dim=-1)",
      "performance only; npu_swiglu computes silu(first half) * second half, so the halves must be swapped"),
])

E("diffusers_training_utils", "src/diffusers/training_utils.py", DEV,
  "huggingface/diffusers training_utils.py (set_seed, enable_full_determinism, free_memory, EMAModel)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(seed) if is_torch_npu_available() else torch.cuda.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed already seeds registered devices"),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", R, False,
      'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"', "debug/determinism aid only; ignored by the NPU runtime"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"', "env_var", R, False,
      'os.environ["HCCL_DETERMINISTIC"] = "true"',
      "cuBLAS-only; on NPU determinism of reductions across ranks is HCCL_DETERMINISTIC"),
    C("if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "elif is_torch_npu_available():\n        torch_npu.npu.empty_cache()",
      "free_memory() never releases the NPU cache (the branch later diffusers added)"),
    C("self.shadow_params = [p.pin_memory() for p in self.shadow_params]", "pin_memory", R, False,
      'self.shadow_params = [p.pin_memory(device="npu") for p in self.shadow_params]',
      "unconfirmed whether a bare Tensor.pin_memory() pins for the NPU (used by --offload_ema)"),
])

# --------------------------------------------------------------------------------------------- SimpleTuner

E("simpletuner_trainer", "helpers/training/trainer.py", DEV,
  "bghira/SimpleTuner helpers/training/trainer.py (Accelerator setup, attention backends, memory stats, bf16 autocast)", [
    C('return torch.device("cuda")', "device_type", B, True,
      'if hasattr(torch, "npu") and torch.npu.is_available():\n            return torch.device("npu")',
      "_get_device() falls through to CPU on an NPU host"),
    C('InitProcessGroupKwargs(backend="nccl", timeout=timedelta(seconds=self.config.nccl_timeout))', "dist_backend",
      R, True,
      'InitProcessGroupKwargs(backend="hccl", timeout=timedelta(seconds=self.config.nccl_timeout))',
      "NCCL is not available on an NPU host: multi-process init fails"),
    C('accelerator_custom_config.append(FP8RecipeKwargs(backend="te"))', "amp", R, True,
      'raise ValueError("fp8 mixed precision (TransformerEngine) is not available on Ascend NPU")',
      "--mixed_precision=fp8 uses TransformerEngine, which has no NPU build"),
    C("self.model.model.enable_xformers_memory_efficient_attention()", "attention_kernel", R, True,
      "self.model.model.set_attn_processor(AttnProcessorNPU())",
      "attention_mechanism=xformers raises on NPU"),
    C("self.vae.enable_xformers_memory_efficient_attention()", "attention_kernel", R, True,
      "self.vae.set_attn_processor(AttnProcessorNPU())", "same as the line above, for the VAE"),
    C("enable_sageattention(attention_mechanism)", "attention_kernel", R, True,
      'logger.warning("SageAttention is CUDA/Triton-only; using SDPA on NPU")',
      "attention_mechanism=sageattention* cannot run on NPU (see helpers/training/attention.py)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats()",
      "initialises CUDA and raises on an NPU host; reached at the first validation benchmark unless disabled"),
    C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_allocated() / 1024**3", "returns 0 without CUDA: log value only"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", B, False,
      "elif torch.npu.is_available():\n            torch.npu.empty_cache()",
      "_clear_cache() skips the NPU cache: memory only"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16,', "amp", R, True,
      'with torch.autocast(self.accelerator.device.type, dtype=torch.bfloat16, enabled=self.config.mixed_precision == "bf16"):',
      "CUDA autocast is inactive for NPU tensors: fp32 trainable params (LoRA) no longer autocast to bf16"),
])

E("simpletuner_attention", "helpers/training/attention.py", EXP,
  "bghira/SimpleTuner attention-backend switch (SageAttention kernels, FlashAttention-3 monkey-patching SDPA)", [
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return (0, 0) if torch.npu.is_available() else torch.cuda.get_device_capability()",
      "no CUDA: raises; under transfer_to_npu get_device_capability() returns None and the tuple unpack fails"),
    C("from sageattention import (", "attention_kernel", R, True,
      "import torch_npu  # SageAttention has no NPU build",
      "SageAttention's CUDA kernels cannot run on NPU; map the backend to npu_fusion_attention or plain SDPA"),
    C("if not torch.cuda.is_available() or torch.version.cuda is None:", "device_type", R, True,
      "if torch.npu.is_available():\n        logger.warning(\"SageAttention unavailable on NPU; keeping SDPA\"); return",
      "raises RuntimeError on an NPU host whenever a sageattention mechanism is configured"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major = 0 if torch.npu.is_available() else torch.cuda.get_device_capability()[0]",
      "raises on an NPU host when flash-attn-3 is selected"),
    C("from flash_attn_interface import flash_attn_func", "attention_kernel", R, True,
      "import torch_npu", "FlashAttention-3 (Hopper) wheel cannot be installed on NPU"),
    C("out = flash_attn_func(q, k, v, softmax_scale=scale, causal=is_causal)", "attention_kernel", R, True,
      'out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", scale=scale or q.shape[-1] ** -0.5, '
      'atten_mask=causal_mask, sparse_mode=3 if is_causal else 0)[0]',
      "flash_attn_func -> npu_fusion_attention mapping (BSND, keep_prob=1, causal via triu mask + sparse_mode)"),
])

E("simpletuner_quantisation", "helpers/training/quantisation/__init__.py", DEV,
  "bghira/SimpleTuner helpers/training/quantisation (optimum-quanto, torchao float8, bitsandbytes NF4/int8)", [
    C('if args.quantize_via == "accelerator" and not torch.cuda.is_available():', "device_type", R, True,
      'if args.quantize_via == "accelerator" and not (torch.cuda.is_available() or torch.npu.is_available()):',
      "silently pushes quantisation onto the CPU on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory only"),
    C("if torch.backends.mps.is_available():", "unsupported_op_workaround", B, False,
      "if torch.backends.mps.is_available() or torch.npu.is_available():",
      "unconfirmed: fp8 weight storage on NPU (float8 storages are on msFmkTransplt's unsupported list)"),
    C("load_in_4bit=True,", "unsupported_op_workaround", R, False, "load_in_4bit=True,  # needs a bitsandbytes build with the NPU backend",
      "unconfirmed: NF4 quant/dequant for NPU exists only in bitsandbytes' multi-backend branch"),
    C("return BitsAndBytesConfig(load_in_8bit=True", "unsupported_op_workaround", R, False,
      'raise ValueError("int8-bnb (LLM.int8) is not available on Ascend NPU; use int8-quanto")',
      "unconfirmed: LLM.int8 is not listed for NPU"),
])

E("simpletuner_optimizer_param", "helpers/training/optimizer_param.py", DEV,
  "bghira/SimpleTuner helpers/training/optimizer_param.py (optimizer registry: AdamWBF16, optimi, bitsandbytes, torchao low-bit)", [
    C("if not torch.cuda.is_bf16_supported():", "device_capability_check", R, True,
      "if not (torch.npu.is_bf16_supported() if torch.npu.is_available() else torch.cuda.is_bf16_supported()):",
      "returns False without CUDA, so every bf16 optimiser (including the default adamw_bf16) is refused on NPU"),
    C('"class": torch.optim.AdamW,', "fused_optimizer", R, False, '"class": torch_npu.optim.NpuFusedAdamW,',
      "performance only; note torch AdamW(fused=True) already has an NPU kernel (_fused_adamw_)"),
    C('"class": bitsandbytes.optim.AdamW8bit,', "fused_optimizer", R, False,
      '"class": torch_npu.optim.NpuFusedAdamW,', UNCONF_BNB),
    C('"class": bitsandbytes.optim.PagedAdamW8bit,', "fused_optimizer", R, False,
      '"class": torch_npu.optim.NpuFusedAdamW,', "paged optimizers need CUDA unified memory; " + UNCONF_BNB),
    C('"class": AOAdamWFp8,', "fused_optimizer", X, False, None,
      "unconfirmed: torchao's FP8 Adam targets sm89+ CUDA"),
])

E("simpletuner_vae_cache", "helpers/caching/vae.py", DEV,
  "bghira/SimpleTuner helpers/caching/vae.py (VAECache encode/write path, VRAM-based batch sizing)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", B, False,
      "if torch.npu.is_available():\n            free_bytes, _total = torch.npu.mem_get_info()",
      "VAE batch is never shrunk to free memory on NPU: risk of OOM on small cards, otherwise harmless"),
    C('with torch.autocast(device_type="cuda", dtype=self.vae.dtype', "amp", R, False,
      "with torch.autocast(device_type=self.accelerator.device.type, dtype=self.vae.dtype, enabled=self.vae.dtype != torch.float32):",
      "inputs are already cast to the VAE dtype, so the inactive CUDA autocast changes nothing here; ported for consistency"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host on every encode"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("simpletuner_adamw_bf16", "helpers/training/optimizers/adamw_bfloat16/__init__.py", EXP,
  "SimpleTuner-style AdamWBF16 with a Triton stochastic-rounding kernel and a PyTorch fallback", [
    C("if _HAS_TRITON and target.is_cuda and target.is_contiguous():", "triton_kernel_tuning", B, False,
      'if _HAS_TRITON and target.device.type in ("cuda", "npu") and target.is_contiguous():',
      "NPU takes the correct PyTorch fallback; running the kernel under triton-ascend is unconfirmed (perf only)"),
    C('triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_SIZE": 8192}),',
      "unconfirmed: warp/stage hints are GPU notions; triton-ascend wants larger blocks sized to the vector cores"),
    C('cache_modifier=".cg"', "triton_kernel_tuning", R, False,
      "update = tl.load(update_ptr + offsets, mask=mask, other=0.0)",
      "unconfirmed: PTX cache modifiers under triton-ascend"),
])

E("simpletuner_train_sh", "train.sh", EXP,
  "bghira/SimpleTuner train.sh (nvjitlink LD override, GPU count via nvidia-smi, accelerate launch)", [
    C('export NVJITLINK_PATH="$(find', "env_var", X, False, None,
      "CUDA library path hack; harmless on NPU (find returns nothing)"),
    C("TRAINING_NUM_PROCESSES=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      "TRAINING_NUM_PROCESSES=$(npu-smi info -l | grep -c 'NPU ID')",
      "no nvidia-smi: yields 0 processes and accelerate launch fails"),
    C('if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then', "env_var", R, True,
      'if [ -z "${ASCEND_RT_VISIBLE_DEVICES}" ]; then',
      "a user's card selection in config.env is CUDA_VISIBLE_DEVICES, which the NPU runtime ignores"),
    C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", R, False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((TRAINING_NUM_PROCESSES - 1)))",
      "defaults to every card, so being ignored changes nothing by itself"),
    C('export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"', "env_var", R, False,
      'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"',
      "allocator fragmentation only; PYTORCH_NPU_ALLOC_CONF supports expandable_segments"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_TIMEOUT=${NCCL_TIMEOUT:-3600}", "env_var", R, False,
      "export HCCL_EXEC_TIMEOUT=${HCCL_EXEC_TIMEOUT:-3600}",
      "ranks waiting while rank 0 builds the VAE cache hit HCCL_EXEC_TIMEOUT (default 1836 s) instead"),
    C("sys.exit(0 if torch.cuda.is_available() else", "device_type", R, True,
      "python -c \"import torch, torch_npu, sys; sys.exit(0 if torch.npu.is_available() else 'No NPU is visible to torch.')\" || exit 1",
      "always fails on an NPU host: the script exits before training"),
    C("export CUDA_LAUNCH_BLOCKING=1", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=1",
      "profiling/debug only"),
    C('PROFILE_PREFIX="nsys profile', "torch_cuda_api", R, True,
      'PROFILE_PREFIX="msprof --output=${OUTPUT_DIR}/profile --application"',
      "nsys is not on Ascend hosts: fails whenever SIMPLETUNER_PROFILE is set (msprof is the counterpart)"),
])

E("simpletuner_config_env", "config/config.env.example", EXP,
  "bghira/SimpleTuner config/config.env.example (optimizer, quantisation, attention backend, card selection)", [
    C('export OPTIMIZER="bnb-lion8bit"', "fused_optimizer", R, False, 'export OPTIMIZER="optimi-lion"', UNCONF_BNB),
    C('export BASE_MODEL_PRECISION="fp8-torchao"', "unsupported_op_workaround", R, True,
      'export BASE_MODEL_PRECISION="int8-quanto"',
      "fp8-torchao is refused by the trainer unless an sm89+ CUDA GPU is present"),
    C('export ATTENTION_MECHANISM="sageattention"', "attention_kernel", R, True,
      'export ATTENTION_MECHANISM="diffusers"', "SageAttention cannot run on NPU; diffusers = SDPA (NPU FA inside)"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "ignored by the NPU runtime"),
    C("export DISABLE_LD_OVERRIDE=", "env_var", R, False, "export DISABLE_LD_OVERRIDE=1",
      "skip the nvjitlink LD_LIBRARY_PATH hack in train.sh; harmless either way"),
])

E("simpletuner_pyproject", "pyproject.toml", EXP,
  "bghira/SimpleTuner pyproject.toml (poetry deps: xformers, triton, bitsandbytes, sageattention, nvidia-* wheels, cu124 source)", [
    C('torch = "^2.5.1"', "import_torch_npu", A, True, 'torch = "2.5.1"\ntorch-npu = "2.5.1"',
      "torch_npu must be added and torch pinned to the version it pairs with"),
    C('triton = "^3.1.0"', "triton_kernel_tuning", X, False, None,
      "NVIDIA Triton; triton-ascend is separate (unconfirmed whether needed here)"),
    C('xformers = "^0.0.28.post3"', "attention_kernel", X, True, None,
      "no NPU/aarch64 build; resolving it pulls a CUDA torch"),
    C('bitsandbytes = "^0.45.0"', "fused_optimizer", X, False, None, UNCONF_BNB),
    C('sageattention = "^1.0.6"', "attention_kernel", X, False, None,
      "installs (Triton-only wheel) but cannot run on NPU; removal tidies the env"),
    C('nvidia-ml-py = "^12.560.30"', "torch_cuda_api", X, False, None, "NVML bindings; nothing to query on Ascend"),
    C('nvidia-cudnn-cu12 = "^9.1.0.70"', "device_type", X, False, None, "CUDA runtime libraries, unused on NPU"),
    C('nvidia-nvjitlink-cu12 = "^12.4.127"', "device_type", X, False, None, "CUDA runtime libraries, unused on NPU"),
    C('url = "https://download.pytorch.org/whl/cu124"', "device_type", R, False,
      'url = "https://download.pytorch.org/whl/cpu"',
      "Ascend documents CPU torch wheels on x86 (aarch64 uses PyPI); supplemental source, so unconfirmed whether it is ever hit"),
])

# --------------------------------------------------------------------------------------------- EveryDream2

E("everydream_train", "train.py", EXP,
  "victorchall/EveryDream2trainer train.py (torch.cuda.amp autocast/GradScaler, cuda:{gpuid}, xformers with SDP fallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below needs torch_npu"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler are inactive on NPU: fp16 VAE/UNet runs without autocast or loss scaling"),
    C("if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "an NPU host takes the 'Running on CPU, testing only' branch"),
    C('device = torch.device(f"cuda:{args.gpuid}")', "device_type", R, True,
      'device = torch.device(f"npu:{args.gpuid}")', "cuda device string"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("torch.cuda.empty_cache()  # after sampling", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # after sampling", "no-op without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA"),
])

E("everydream_gpu", "utils/gpu.py", EXP,
  "victorchall/EveryDream2trainer utils/gpu.py (pynvml nvidia_smi VRAM queries, nvidia-smi fallback)", [
    C("from pynvml.smi import nvidia_smi", "torch_cuda_api", X, False, None,
      "the import itself works without a driver; the NVML calls below are what fail"),
    C("self.nvsmi = nvidia_smi.getInstance()", "torch_cuda_api", R, True, "self.nvsmi = None",
      "NVML initialisation fails without an NVIDIA driver (NVMLError_LibraryNotFound)"),
    C('gpu_query = self.nvsmi.DeviceQuery("memory.used, memory.total")', "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(self.device)", "VRAM logging every log_step"),
    C('gpu_used_mem = int(gpu_query["gpu"][self.device.index]', "torch_cuda_api", R, True,
      "gpu_used_mem = (total - free) // 2**20", "rewritten with the query"),
    C('gpu_total_mem = int(gpu_query["gpu"][self.device.index]', "torch_cuda_api", R, True,
      "gpu_total_mem = total // 2**20", "rewritten with the query"),
    C('query = self.nvsmi.DeviceQuery("driver_version")', "torch_cuda_api", R, True,
      'query = {"driver_version": "see npu-smi info"}', "NVML query"),
    C("major, _minor = torch.cuda.get_device_capability(self.device)", "device_capability_check", R, True,
      "return torch.npu.is_bf16_supported()",
      "raises without CUDA; NPU reports no compute capability (None / not major/minor)"),
    C("return torch.cuda.get_device_name(self.device)", "torch_cuda_api", R, True,
      "return torch.npu.get_device_name(self.device)", "raises without CUDA"),
    C('"nvidia-smi",', "torch_cuda_api", R, False, '"npu-smi", "info", "-t", "usages", "-i", str(gpu_index),',
      "FileNotFoundError is caught and (0, 0) returned: graceful but useless"),
])

E("everydream_optimizers", "optimizer/optimizers.py", EXP,
  "victorchall/EveryDream2trainer optimizer/optimizers.py (EveryDreamOptimizer: GradScaler, adamw8bit default)", [
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C('optimizer.load_state_dict(torch.load(path, map_location="cuda"))', "tensor_to_device", R, True,
      'optimizer.load_state_dict(torch.load(path, map_location="npu"))',
      "fails on NPU; the except only logs, so resuming silently drops the optimizer state"),
    C('base_config["optimizer"] = base_config.get("optimizer", None) or "adamw8bit"', "fused_optimizer", R, False,
      'base_config["optimizer"] = base_config.get("optimizer", None) or "adamw"', UNCONF_BNB),
    C("opt_class = torch.optim.AdamW", "fused_optimizer", R, False, "opt_class = torch_npu.optim.NpuFusedAdamW",
      "performance only"),
    C("opt_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False, "opt_class = torch_npu.optim.NpuFusedAdamW",
      UNCONF_BNB),
])

E("everydream_sample_generator", "utils/sample_generator.py", EXP,
  "victorchall/EveryDream2trainer utils/sample_generator.py (per-seed cuda Generators, fp16 autocast sampling)", [
    C('generators = [torch.Generator(device="cuda").manual_seed(seed) for seed in seeds]', "device_type", R, True,
      'generators = [torch.Generator(device="npu").manual_seed(seed) for seed in seeds]',
      "a CUDA generator cannot be created on an NPU host: sampling raises"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "inactive for NPU tensors: fp32 UNet/text encoder sample without autocast"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("everydream_dockerfile", "docker/Dockerfile", EXP,
  "victorchall/EveryDream2trainer docker/Dockerfile (nvidia/cuda base images, cu118 torch + xformers, NVIDIA runtime env)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04 AS builder", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS builder", "CANN toolkit image instead of CUDA"),
    C("torch==2.1.2+cu118 torchvision==0.16.2+cu118", "device_type", R, True,
      "torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\", "CUDA wheels; torch_npu pairs with torch 2.1.0"),
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CPU torch wheels on x86 Ascend hosts"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None, "only used to build xformers from source"),
    C("RUN pip install --no-cache-dir xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "no xformers build for NPU"),
    C("RUN pip install --no-cache-dir bitsandbytes==0.41.3 pynvml==11.5.0", "fused_optimizer", X, False, None,
      UNCONF_BNB + "; pynvml is unused after utils/gpu.py is ported"),
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04 AS runtime", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS runtime", "torch_npu needs the CANN runtime in the image"),
    C("LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}", "env_var", R, True,
      "LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/lib64:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH} \\",
      "import torch_npu needs the CANN/driver libraries on the path (or set_env.sh sourced)"),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "the Ascend Docker runtime mounts /dev/davinciN from ASCEND_VISIBLE_DEVICES"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
    C("HEALTHCHECK --interval=5m --timeout=30s CMD nvidia-smi || exit 1", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=5m --timeout=30s CMD npu-smi info || exit 1",
      "always unhealthy on an Ascend host"),
])
