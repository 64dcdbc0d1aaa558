# Labels for probe131 (diffusers internals + official SDXL/Flux training examples, CUDA -> Ascend NPU).
# Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ACCEL = (
    "Accelerate (>=0.22) already imports torch_npu through is_npu_available(), so the script runs without it; "
    "the explicit guarded import is only needed for the torch_npu/torch.npu calls the port adds."
)
XFORMERS_FLAG = (
    "Only reached with --enable_xformers_memory_efficient_attention; xformers has no NPU backend, so the branch "
    "raises 'xformers is not available'. The default AttnProcessor2_0 (SDPA) already runs on NPU; the port adds an "
    "NPU flash-attention branch (diffusers later added --enable_npu_flash_attention). Launchers that pass the flag "
    "carry the required label."
)
BNB_FLAG = (
    "Only reached with --use_8bit_adam; bitsandbytes 8-bit optimizers are not listed for Ascend (only NF4 quant/dequant "
    "in the multi-backend branch). Swap in torch_npu.optim.NpuFusedAdamW or plain AdamW. Launchers that pass the flag "
    "carry the required label."
)
TF32 = (
    "Silent no-op on NPU (cuBLAS TF32 switch; Ascend's 2.7.1 list marks it supported but fp32-only). The NPU analogue "
    "is HF32 via torch.npu.matmul (torch_npu exports a `matmul` config object; the allow_hf32 attribute name is "
    "unconfirmed in the knowledge notes). Performance only."
)

# ---------------------------------------------------------------- library code

E("d01_training_utils", "src/diffusers/training_utils.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/training_utils.py (set_seed, compute_snr, cast_training_params, free_memory, EMAModel)",
  [
      C("    from peft import set_peft_model_state_dict", "import_torch_npu", "npu_only_addition", False,
        "if is_torch_npu_available():\n    import torch_npu",
        "Guarded import needed only by the torch_npu.npu.empty_cache() branch added to free_memory(); the module "
        "itself imports fine on NPU."),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
        "torch.npu.manual_seed_all(seed) if is_torch_npu_available() else torch.cuda.manual_seed_all(seed)",
        "torch.cuda.manual_seed_all is queued lazily and never runs on an NPU host (silent no-op). torch.manual_seed "
        "two lines above already seeds registered custom devices, so this is belt-and-braces (unconfirmed in notes)."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
        "elif is_torch_npu_available():\n        torch_npu.npu.empty_cache()",
        "torch.cuda.is_available() is False on NPU so free_memory() only runs gc.collect(); NPU caching allocator "
        "is never trimmed. Memory only, nothing fails."),
      C("self.shadow_params = [p.pin_memory() for p in self.shadow_params]", "pin_memory", "replace", False,
        "self.shadow_params = [p.pin_memory(device='npu') for p in self.shadow_params]",
        "EMA offload pins host buffers for the default (CUDA) pinned allocator; whether a bare pin_memory() picks "
        "the NPU host allocator depends on the torch/torch_npu version - unconfirmed. Only used with --offload_ema."),
  ])

E("d02_torch_utils", "src/diffusers/utils/torch_utils.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/utils/torch_utils.py (randn_tensor, is_compiled_module, FreeU fourier_filter)",
  [
      C("x_freq = fftshift(x_freq, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
        "x_freq = torch.roll(x_freq, shifts=(H // 2, W // 2), dims=(-2, -1))",
        "torch.fft.fftshift is in msFmkTransplt's unsupported list and marked unsupported on A2 in Ascend's 2.7.1 "
        "API table (op-plugin does list fft_fftshift, so it may just fall back). FreeU is opt-in; unconfirmed."),
      C("x_freq = ifftshift(x_freq, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
        "x_freq = torch.roll(x_freq, shifts=(-(H // 2), -(W // 2)), dims=(-2, -1))",
        "Same as fftshift: torch.fft.ifftshift is listed unsupported on A2; rewrite as roll. Unconfirmed."),
  ])

E("d03_testing_utils", "src/diffusers/utils/testing_utils.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/utils/testing_utils.py (torch_device, require_torch_gpu, backend dispatch tables)",
  [
      C('torch_device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
        'torch_device = "cuda" if torch.cuda.is_available() else ("npu" if is_torch_npu_available() else "cpu")',
        "On an NPU host the suite silently runs on CPU, but the project's own escape hatch "
        "(DIFFUSERS_TEST_DEVICE=npu, DIFFUSERS_TEST_BACKEND=torch_npu) fixes it without code, so not required."),
      C('torch_device == "cuda", "test requires PyTorch+CUDA"', "device_type", "replace", False,
        'return unittest.skipUnless(is_torch_available() and torch_device != "cpu", "test requires accelerator")(',
        "Every @require_torch_gpu test is silently skipped on NPU even with DIFFUSERS_TEST_DEVICE=npu. Lost "
        "coverage, nothing fails."),
      C("torch.cuda.device_count() > 1", "torch_cuda_api", "replace", False,
        'return unittest.skipUnless(backend_device_count(torch_device) > 1, "test requires multiple accelerators")(test_case)',
        "device_count() is 0 on NPU hosts; multi-device tests silently skipped."),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch_device == \"cpu\":",
        "Gate for the big-memory decorator; on NPU it silently skips Flux/SD3 slow tests."),
      C("device_properties = torch.cuda.get_device_properties(0)", "device_capability_check", "replace", True,
        "device_properties = torch.npu.get_device_properties(0)",
        "Raises (CUDA lazy init) as soon as the gate above lets an NPU through; NPU properties do expose "
        "total_memory (name, total_memory, L2_cache_size, cube/vector core counts only)."),
      C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", "replace", False,
        'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
        "Ignored on NPU; ASCEND_LAUNCH_BLOCKING is the torch_npu equivalent (it is what torch_npu's async-error hint "
        "tells you to set). Determinism helper only."),
      C('os.environ["CUDA_LAUNCH_BLOCKING"] = "0"', "env_var", "replace", False,
        'os.environ["ASCEND_LAUNCH_BLOCKING"] = "0"',
        "Counterpart of the line above."),
      C('"cuda": torch.cuda.empty_cache,', "torch_cuda_api", "npu_only_addition", False,
        '"npu": torch.npu.empty_cache,',
        "With torch_device='npu' the dispatch falls to 'default' (None): backend_empty_cache silently does nothing."),
      C('"cuda": torch.cuda.device_count,', "torch_cuda_api", "npu_only_addition", False,
        '"npu": torch.npu.device_count,',
        "Falls to default 0 on NPU, so multi-device tests are skipped."),
  ])

E("d04_attention_processor", "src/diffusers/models/attention_processor.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/models/attention_processor.py (Attention, AttnProcessor, XFormersAttnProcessor, AttnProcessor2_0, FusedAttnProcessor2_0, FluxAttnProcessor2_0)",
  [
      C("attention_scores = torch.baddbmm(", "unsupported_op_workaround", "replace", False,
        "attention_scores = self.scale * torch.bmm(query, key.transpose(-1, -2)) + (attention_mask if attention_mask is not None else 0)",
        "Classic (non-SDPA) path. msFmkTransplt's precision advice flags torch.baddbmm (overflow; use bmm+add), and "
        "beta=0 over an uninitialised torch.empty() input relies on CUDA ignoring NaNs there. Unconfirmed on NPU."),
  ])

E("d05_embeddings", "src/diffusers/models/embeddings.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/models/embeddings.py (timestep embeddings, get_1d_rotary_pos_embed, apply_rotary_emb, FluxPosEmbed)",
  [
      C('is_mps = ids.device.type == "mps"', "device_type", "npu_only_addition", False,
        'is_npu = ids.device.type == "npu"',
        "Needed by the dtype choice on the next line."),
      C("freqs_dtype = torch.float32 if is_mps else torch.float64", "unsupported_op_workaround", "replace", False,
        "freqs_dtype = torch.float32 if (is_mps or is_npu) else torch.float64",
        "Flux RoPE frequencies are built in float64. fp64 arange/outer/cos are listed for NPU but run on slow "
        "(AI_CPU) kernels; torch.polar only takes fp32. Later diffusers uses fp32 on npu. Whether fp64 fails "
        "outright is unconfirmed, so performance/robustness only."),
      C("out = (x.float() * cos + x_rotated.float() * sin).to(x.dtype)", "npu_fused_op", "add_branch", False,
        'out = torch_npu.npu_rotary_mul(x, cos, sin, rotary_mode="interleave")  # when x.device.type == "npu"',
        "Interleaved RoPE is exactly npu_rotary_mul(rotary_mode='interleave'); performance only."),
  ])

E("d06_activations", "src/diffusers/models/activations.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/models/activations.py (GELU, GEGLU, SwiGLU)",
  [
      C("return hidden_states * self.gelu(gate)", "npu_fused_op", "add_branch", False,
        "return torch_npu.npu_geglu(hidden_states, dim=-1, approximate=1)[0]  # NPU branch before the chunk",
        "GEGLU maps onto torch_npu.npu_geglu (the op diffusers uses on NPU). Note approximate=1 is tanh GELU while "
        "F.gelu here is erf - small numeric drift. Performance only."),
  ])

E("d07_normalization", "src/diffusers/models/normalization.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/models/normalization.py (AdaLayerNormZero/Single/Continuous, RMSNorm)",
  [
      C("variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)", "npu_fused_op", "add_branch",
        False,
        "if is_torch_npu_available() and self.weight is not None: return torch_npu.npu_rms_norm(hidden_states, self.weight, epsilon=self.eps)[0]",
        "RMSNorm (Flux qk-norm) maps onto torch_npu.npu_rms_norm; the eager pow/mean/rsqrt path is correct, just slower."),
  ])

E("d08_transformer_flux", "src/diffusers/models/transformers/transformer_flux.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/models/transformers/transformer_flux.py (FluxSingleTransformerBlock, FluxTransformerBlock, FluxTransformer2DModel)",
  [
      C("=processor = FluxAttnProcessor2_0()", "attention_kernel", "add_branch", False,
        "processor = FluxAttnProcessor2_0_NPU() if is_torch_npu_available() else FluxAttnProcessor2_0()",
        "SDPA already runs on NPU (it dispatches to the NPU fused attention); a dedicated npu_fusion_attention "
        "processor, as diffusers later shipped for Flux, is a performance choice."),
      C("attn_processor = FluxAttnProcessor2_0()", "attention_kernel", "add_branch", False,
        "attn_processor = FluxAttnProcessor2_0_NPU() if is_torch_npu_available() else FluxAttnProcessor2_0()",
        "Same choice for the dual-stream blocks; performance only."),
  ])

E("d09_pipeline_utils", "src/diffusers/pipelines/pipeline_utils.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/pipelines/pipeline_utils.py (DiffusionPipeline.to, enable_model_cpu_offload, enable_sequential_cpu_offload)",
  [
      C('if pipeline_is_sequentially_offloaded and device and torch.device(device).type == "cuda":', "device_type",
        "replace", False,
        'if pipeline_is_sequentially_offloaded and device and torch.device(device).type in ("cuda", "npu"):',
        "Guard that turns an accelerate meta-device error into a clear message; on NPU the clearer message is lost."),
      C('if pipeline_is_offloaded and device and torch.device(device).type == "cuda":', "device_type", "replace",
        False,
        'if pipeline_is_offloaded and device and torch.device(device).type in ("cuda", "npu"):',
        "Warning only."),
      C('def enable_model_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = "cuda"):',
        "device_type", "replace", True,
        "def enable_model_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = None):  # default from the available accelerator",
        "pipe.enable_model_cpu_offload() with the default builds torch.device('cuda:0') and accelerate hooks then "
        "move modules to CUDA - fails on an NPU host."),
      C('def enable_sequential_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = "cuda"):',
        "device_type", "replace", True,
        "def enable_sequential_cpu_offload(self, gpu_id: Optional[int] = None, device: Union[torch.device, str] = None):",
        "Same default-device problem for sequential offload."),
  ])

E("d11_commands_env", "src/diffusers/commands/env.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/commands/env.py (diffusers-cli env)",
  [
      C("pt_cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
        "pt_npu_available = is_torch_npu_available() and torch.npu.is_available()",
        "Report-only: prints 'PyTorch version (GPU?): ... (False)' on an NPU host."),
      C('["nvidia-smi", "--query-gpu=gpu_name,memory.total", "--format=csv,noheader"],', "device_capability_check",
        "add_branch", False,
        '["npu-smi", "info"],  # fallback when nvidia-smi is missing',
        "FileNotFoundError is swallowed, so 'Accelerator: NA' is reported. Report-only."),
  ])

E("d12_print_env", "utils/print_env.py", "explicit_replacement",
  "huggingface/diffusers utils/print_env.py",
  [
      C('print("Torch version:", torch.__version__)', "import_torch_npu", "npu_only_addition", False,
        'import torch_npu; print("torch_npu version:", torch_npu.__version__)',
        "Environment dump for bug reports; without it the NPU stack is invisible. Nothing fails."),
      C('print("Number of GPUs available:", torch.cuda.device_count())', "torch_cuda_api", "npu_only_addition",
        False,
        'print("NPU available:", torch.npu.is_available(), "count:", torch.npu.device_count())',
        "Prints False/None/0 for CUDA on an NPU host; report-only."),
  ])

E("d27_group_offloading", "src/diffusers/hooks/group_offloading.py", "device_branch_or_abstraction",
  "huggingface/diffusers src/diffusers/hooks/group_offloading.py (ModuleGroup, GroupOffloadingHook, apply_group_offloading with streams)",
  [
      C("return tensor.data.cpu() if self.low_cpu_mem_usage else tensor.data.cpu().pin_memory()", "pin_memory",
        "replace", False,
        "return tensor.data.cpu() if self.low_cpu_mem_usage else tensor.data.cpu().pin_memory(device='npu')",
        "Pinned host copies for async H2D on the side stream; whether a bare pin_memory() uses the NPU host "
        "allocator is version-dependent - unconfirmed."),
      C("context = nullcontext() if self.stream is None else torch.cuda.stream(self.stream)", "torch_cuda_api",
        "replace", True,
        "context = nullcontext() if self.stream is None else torch.npu.stream(self.stream)",
        "Once streams are created on NPU, torch.cuda.stream() still enters through the CUDA implementation "
        "(torch.cuda names keep their CUDA code without transfer_to_npu) and raises."),
      C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().synchronize()",
        "torch.cuda.current_stream() lazily initialises CUDA and raises on an NPU host."),
      C("stream = torch.cuda.Stream()", "torch_cuda_api", "add_branch", True,
        "elif is_torch_npu_available():\n            stream = torch.npu.Stream()",
        "use_stream=True currently raises 'requires a CUDA device' on NPU; add the NPU stream branch."),
  ])

# ---------------------------------------------------------------- training examples

E("d13_train_dreambooth_lora_sdxl", "examples/dreambooth/train_dreambooth_lora_sdxl.py",
  "device_branch_or_abstraction",
  "huggingface/diffusers examples/dreambooth/train_dreambooth_lora_sdxl.py",
  [
      C("from diffusers.utils.torch_utils import is_compiled_module", "import_torch_npu", "npu_only_addition", False,
        "if is_torch_npu_available():\n    import torch_npu", IMPORT_NPU_ACCEL),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True,
        "with torch.autocast(accelerator.device.type):",
        "torch.cuda.amp.autocast on an NPU host warns 'CUDA is not available' and disables itself, so validation "
        "runs the fp16 SDXL base with fp32 (upcast) LoRA params and no autocast - dtype mismatch/wrong precision."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
        "elif is_torch_npu_available():\n        torch_npu.npu.empty_cache()",
        "Guarded by torch.cuda.is_available(), so skipped on NPU; validation pipeline memory is not returned. "
        "Memory only."),
      C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "add_branch", False,
        "unet.set_attn_processor(AttnProcessorNPU())  # elif is_torch_npu_available()", XFORMERS_FLAG),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "add_branch", False,
        "elif args.allow_tf32 and is_torch_npu_available():\n        torch.npu.matmul.allow_hf32 = True", TF32),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW if is_torch_npu_available() else bnb.optim.AdamW8bit",
        BNB_FLAG),
  ])

E("d14_train_controlnet_sdxl", "examples/controlnet/train_controlnet_sdxl.py", "device_branch_or_abstraction",
  "huggingface/diffusers examples/controlnet/train_controlnet_sdxl.py",
  [
      C("from diffusers.utils.torch_utils import is_compiled_module", "import_torch_npu", "npu_only_addition", False,
        "if is_torch_npu_available():\n    import torch_npu", IMPORT_NPU_ACCEL),
      C("pipeline.enable_xformers_memory_efficient_attention()", "attention_kernel", "add_branch", False,
        "pipeline.set_attn_processor(AttnProcessorNPU())  # elif is_torch_npu_available()", XFORMERS_FLAG),
      C('inference_ctx = contextlib.nullcontext() if is_final_validation else torch.autocast("cuda")', "amp",
        "replace", True,
        "inference_ctx = contextlib.nullcontext() if is_final_validation else torch.autocast(accelerator.device.type)",
        "autocast('cuda') is disabled with a warning on an NPU host; mid-training validation then feeds the fp32 "
        "ControlNet residuals into the fp16/bf16 UNet without autocast (dtype mismatch)."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "free_memory()",
        "Silent no-op on NPU (CUDA never initialised); the validation pipeline stays cached. Memory only."),
      C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "add_branch", False,
        "unet.set_attn_processor(AttnProcessorNPU())  # elif is_torch_npu_available()", XFORMERS_FLAG),
      C("controlnet.enable_xformers_memory_efficient_attention()", "attention_kernel", "add_branch", False,
        "controlnet.set_attn_processor(AttnProcessorNPU())", XFORMERS_FLAG),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "add_branch", False,
        "if is_torch_npu_available():\n            torch.npu.matmul.allow_hf32 = True", TF32),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW if is_torch_npu_available() else bnb.optim.AdamW8bit",
        BNB_FLAG),
  ])

E("d15_train_text_to_image_sdxl", "examples/text_to_image/train_text_to_image_sdxl.py",
  "device_branch_or_abstraction",
  "huggingface/diffusers examples/text_to_image/train_text_to_image_sdxl.py",
  [
      C("from diffusers.utils.torch_utils import is_compiled_module", "import_torch_npu", "npu_only_addition", False,
        "if is_torch_npu_available():\n    import torch_npu\n    torch.npu.config.allow_internal_format = False",
        IMPORT_NPU_ACCEL + " The NPU-port of this script also turns off private internal formats (unconfirmed need)."),
      C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "add_branch", False,
        "unet.set_attn_processor(AttnProcessorNPU())  # elif is_torch_npu_available()", XFORMERS_FLAG),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "add_branch", False,
        "if is_torch_npu_available():\n            torch.npu.matmul.allow_hf32 = True", TF32),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW if is_torch_npu_available() else bnb.optim.AdamW8bit",
        BNB_FLAG),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "free_memory()",
        "After pre-computing embeddings/latents the text encoders and VAE are freed; on NPU this call is a no-op "
        "so the cached blocks stay reserved. Memory only."),
      C("free the validation pipeline before resuming training", "torch_cuda_api", "replace", False,
        "free_memory()  # free the validation pipeline before resuming training",
        "Same silent no-op after validation."),
  ])

E("d16_train_dreambooth_flux", "examples/dreambooth/train_dreambooth_flux.py", "device_branch_or_abstraction",
  "huggingface/diffusers examples/dreambooth/train_dreambooth_flux.py (full fine-tune, prior preservation)",
  [
      C("from diffusers.utils.torch_utils import is_compiled_module", "import_torch_npu", "npu_only_addition", False,
        "if is_torch_npu_available():\n    import torch_npu", IMPORT_NPU_ACCEL),
      C("has_supported_fp16_accelerator = torch.cuda.is_available() or torch.backends.mps.is_available()",
        "torch_cuda_api", "replace", False,
        "has_supported_fp16_accelerator = torch.cuda.is_available() or is_torch_npu_available() or torch.backends.mps.is_available()",
        "On NPU class images are generated in fp32 - correct but roughly twice as slow and memory hungry."),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "add_branch", False,
        "elif args.allow_tf32 and is_torch_npu_available():\n        torch.npu.matmul.allow_hf32 = True", TF32),
      C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
        "optimizer_class = torch_npu.optim.NpuFusedAdamW if is_torch_npu_available() else bnb.optim.AdamW8bit",
        BNB_FLAG),
  ])

# ---------------------------------------------------------------- launchers / configs / packaging

E("d17_launch_sdxl_lora", "examples/dreambooth/launch_sdxl_lora.sh", "explicit_replacement",
  "README-style accelerate launcher for diffusers' train_dreambooth_lora_sdxl.py",
  [
      C("=set -ex", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "Without the CANN environment `import torch_npu` fails (libhccl.so / ASCEND_OPP_PATH not found)."),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID:-0}",
        "The documented GPU_ID selector is silently ignored on NPU: every job lands on NPU 0."),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "Allocator tuning silently ignored; PYTORCH_NPU_ALLOC_CONF supports expandable_segments (HDK >= 23.0.0)."),
      C("--enable_xformers_memory_efficient_attention \\", "attention_kernel", "removal", True, None,
        "xformers cannot be installed/used on NPU; with this flag the script raises 'xformers is not available'."),
      C("--use_8bit_adam \\", "fused_optimizer", "removal", True, None,
        "bitsandbytes 8-bit optimizers have no Ascend backend; drop the flag (or switch the script to NpuFusedAdamW)."),
      C("nvidia-smi --query-gpu=memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info",
        "nvidia-smi is absent on an NPU host; under `set -e` the job ends with exit 127 after training."),
  ])

E("d18_controlnet_multinode", "examples/controlnet/run_controlnet_sdxl_multinode.sh", "explicit_replacement",
  "multi-node accelerate launcher for diffusers' train_controlnet_sdxl.py",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
        "CANN environment is required for torch_npu/HCCL; note set_env.sh trips `set -u` (unbound "
        "CMAKE_PREFIX_PATH), hence the +u/-u wrap."),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "No HCCL equivalent; ASCEND_GLOBAL_LOG_LEVEL is the closest knob. Silently ignored."),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=eth0",
        "Multi-node root-info bootstrap picks the host NIC from HCCL_SOCKET_IFNAME/HCCL_IF_IP; NCCL_* is ignored and a "
        "wrong default NIC makes communicator link setup fail."),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
        "NCCL transport knob, meaningless for HCCL."),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
        "NVLink P2P knob, meaningless for HCCL."),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "Selects all eight devices, which is also what happens when it is ignored on an 8-NPU node."),
  ])

E("d19_requirements_sdxl", "examples/dreambooth/requirements_sdxl.txt", "explicit_replacement",
  "huggingface/diffusers examples/dreambooth/requirements_sdxl.txt (plus optional extras)",
  [
      C("=torchvision", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.4.0.post2  # must equal the installed torch version (x.y.z[.postN])",
        "torch_npu is the NPU backend; it must be pinned to the exact torch release on the host."),
      C("bitsandbytes>=0.41.1", "fused_optimizer", "removal", False, None,
        "Optional extra for --use_8bit_adam; installs but its 8-bit optimizers do not run on NPU."),
      C("=xformers>=0.0.22", "attention_kernel", "removal", True, None,
        "xformers wheels pin a CUDA torch build; installing it replaces the torch that torch_npu is paired with "
        "(or fails building without nvcc)."),
  ])

E("d20_accelerate_config", "examples/accelerate_configs/multi_gpu.yaml", "explicit_replacement",
  "accelerate config (`accelerate config` output) used with the diffusers examples",
  [
      C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
        "distributed_type: MULTI_NPU",
        "Accelerate maps both to its multi-process launcher and picks HCCL from the detected device at runtime, "
        "so MULTI_GPU probably works on NPU; unconfirmed in the notes."),
  ])

E("d21_dockerfile", "docker/diffusers-pytorch-xformers-cuda/Dockerfile", "explicit_replacement",
  "huggingface/diffusers docker/diffusers-pytorch-xformers-cuda/Dockerfile",
  [
      C("FROM nvidia/cuda:12.1.0-runtime-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA runtime image has no CANN toolkit; torch_npu cannot load without it (or the host's driver mounts)."),
      C("=torchaudio==2.4.0 \\", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.4.0.post2 \\",
        "Add the torch_npu wheel paired with torch 2.4.0."),
      C("--extra-index-url https://download.pytorch.org/whl/cu121 && \\", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu && \\",
        "Ascend docs install CPU torch on x86 (plain PyPI on aarch64); the cu121 build drags in nvidia-* wheels. "
        "Whether torch_npu refuses a CUDA torch build is unconfirmed."),
      C("xformers==0.0.27.post2", "attention_kernel", "removal", True, None,
        "CUDA-only wheel from the cu121 index; it also pins its own torch and would break the torch/torch_npu pair."),
      C("=bitsandbytes", "fused_optimizer", "removal", False, None,
        "CUDA-only 8-bit optimizers; harmless to install, useless on NPU."),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "Read by the NVIDIA container runtime only; Ascend-docker-runtime uses ASCEND_VISIBLE_DEVICES at run time."),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime knob; ignored on Ascend."),
  ])

# ---------------------------------------------------------------- benchmarks, inference scripts, tests

E("d22_bench_utils", "benchmarks/utils.py", "explicit_replacement",
  "huggingface/diffusers benchmarks/utils.py (flush, benchmark_fn, CSV helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "Plain-torch benchmark (no accelerate): torch.npu does not exist until torch_npu is imported "
        "(autoload only from torch_npu 2.5.1)."),
      C("TOTAL_GPU_MEMORY = float(", "device_capability_check", "replace", True,
        'TOTAL_GPU_MEMORY = float(os.getenv("TOTAL_GPU_MEMORY", torch.npu.get_device_properties(0).total_memory / (1024**3)))',
        "The default is evaluated at import time; torch.cuda.get_device_properties raises on an NPU host, so "
        "every benchmark crashes on import."),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "No-op without CUDA initialised; memory only."),
      C("torch.cuda.reset_max_memory_allocated()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_max_memory_allocated()",
        "Goes through reset_peak_memory_stats -> torch._C._cuda_* which does not exist in the CPU torch build: raises."),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "Raises on an NPU host (see above)."),
  ])

E("d23_bench_base_classes", "benchmarks/base_classes.py", "explicit_replacement",
  "huggingface/diffusers benchmarks/base_classes.py (TextToImage/ControlNet/T2IAdapter benchmarks)",
  [
      C("module.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
        "msFmkTransplt documents channels_last as unsupported on NPU (use contiguous); whether it errors or just "
        "slows down is unconfirmed. Only with --run_compile."),
      C('setattr(pipe, name, torch.compile(module, mode="reduce-overhead", fullgraph=True))', "compile_mode",
        "replace", False,
        'setattr(pipe, name, torch.compile(module, backend="npugraphs", fullgraph=True))',
        "reduce-overhead = Inductor + CUDA graphs; torch.compile is supported on NPU with backend 'npugraphs' "
        "(cudagraphs analogue) but this exact mode is unconfirmed. Only with --run_compile."),
      C('=pipe = pipe.to("cuda")', "tensor_to_device", "replace", True,
        'pipe = pipe.to("npu")',
        "Hard-coded CUDA device: fails on an NPU host."),
      C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
        "with contextlib.nullcontext():",
        "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend (msFmkTransplt list, 2.7.1 table); SDPA on "
        "NPU picks its own fused kernel. Runtime effect of the flags is unconfirmed."),
      C("memory = bytes_to_giga_bytes(torch.cuda.max_memory_allocated())", "torch_cuda_api", "replace", True,
        "memory = bytes_to_giga_bytes(torch.npu.max_memory_allocated())",
        "Returns 0 without a CUDA context: the benchmark silently reports 0 GB."),
      C('=pipe.to("cuda")', "tensor_to_device", "replace", True,
        'pipe.to("npu")',
        "ControlNet benchmarks: hard-coded CUDA device."),
      C('pipe = pipe.to(device="cuda")', "tensor_to_device", "replace", True,
        'pipe = pipe.to(device="npu")',
        "T2I-Adapter benchmarks: hard-coded CUDA device."),
  ])

E("d24_bench_t2i", "benchmarks/benchmark_text_to_image.py", "explicit_replacement",
  "huggingface/diffusers benchmarks/benchmark_text_to_image.py",
  [])

E("d25_flux_txt2img", "examples/inference/flux_txt2img.py", "device_branch_or_abstraction",
  "user-side FLUX.1 inference script built on diffusers' FluxPipeline (offload / torch.compile options)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "Non-accelerate entry point: needed for torch.npu / device 'npu' on torch_npu < 2.5.1 (no autoload)."),
      C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'return "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
        "--device auto (the default) silently runs FLUX on the CPU of an NPU host."),
      C("pipe.enable_model_cpu_offload(gpu_id=args.gpu_id)", "device_type", "replace", True,
        "pipe.enable_model_cpu_offload(gpu_id=args.gpu_id, device=torch.device(device).type)",
        "diffusers' default offload device is 'cuda'; without passing the NPU device the hooks target CUDA and fail."),
      C("pipe.enable_sequential_cpu_offload(gpu_id=args.gpu_id)", "device_type", "replace", True,
        "pipe.enable_sequential_cpu_offload(gpu_id=args.gpu_id, device=torch.device(device).type)",
        "Same default-'cuda' problem."),
      C("pipe.transformer.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False,
        None,
        "channels_last is a documented NPU limitation (use contiguous); effect unconfirmed. Only with --compile."),
      C('pipe.transformer = torch.compile(pipe.transformer, mode="max-autotune", fullgraph=True)', "compile_mode",
        "replace", False,
        'pipe.transformer = torch.compile(pipe.transformer, backend="npugraphs", fullgraph=True)',
        "max-autotune relies on Triton autotuning, which is not available to Inductor on NPU (transfer_to_npu "
        "even forces has_triton=False). Unconfirmed whether it errors or falls back. Only with --compile."),
      C('if "cuda" in device:', "device_type", "replace", False,
        'if device.startswith(("cuda", "npu")):',
        "Skips the peak-memory reset on NPU; only the reported number is affected."),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "Raises on an NPU host once the guard admits npu."),
      C('if device.startswith("cuda"):', "device_type", "replace", True,
        'if device.startswith(("cuda", "npu")):',
        "Without a synchronize the timer stops while NPU kernels are still queued: the printed latency is wrong."),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "torch.cuda.synchronize raises on an NPU host."),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        'if device.startswith(("cuda", "npu")):',
        "Skips the memory report on NPU; report-only."),
      C('msg += f", peak GPU memory {torch.cuda.max_memory_allocated() / 1024**3:.2f} GB"', "torch_cuda_api",
        "replace", True,
        'msg += f", peak NPU memory {torch.npu.max_memory_allocated() / 1024**3:.2f} GB"',
        "torch.cuda.max_memory_allocated() returns 0 without a CUDA context - a silently wrong figure."),
  ])

E("d26_distributed_inference", "examples/inference/distributed_sdxl_inference.py", "explicit_replacement",
  "diffusers 'distributed inference' docs recipe (torch.multiprocessing + init_process_group, plus accelerate PartialState)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "Plain torch.distributed path needs torch_npu loaded for the hccl backend and npu devices."),
      C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", rank=rank, world_size=world_size)',
        "NCCL is not available on NPU; HCCL is the collective backend."),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank)",
        "Raises on an NPU host."),
      C("pipe.to(rank)", "tensor_to_device", "replace", True,
        'pipe.to(f"npu:{rank}")',
        "An integer device means cuda:<rank>; fails on an NPU host."),
      C('generator = torch.Generator(device=f"cuda:{rank}").manual_seed(args.seed + rank)', "device_type",
        "replace", True,
        'generator = torch.Generator(device=f"npu:{rank}").manual_seed(args.seed + rank)',
        "A CUDA generator cannot be created without CUDA."),
      C("world_size = args.num_gpus or torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = args.num_gpus or torch.npu.device_count()",
        "device_count() is 0 on an NPU host: mp.spawn starts no workers and the script silently does nothing."),
  ])

E("d28_test_pipeline_flux", "tests/pipelines/flux/test_pipeline_flux.py", "device_branch_or_abstraction",
  "huggingface/diffusers tests/pipelines/flux/test_pipeline_flux.py (slow / nightly GPU tests)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "backend_empty_cache(torch_device)",
        "No-op on NPU (setUp already uses the device-agnostic helper)."),
      C("pipe.enable_model_cpu_offload()", "device_type", "replace", True,
        "pipe.enable_model_cpu_offload(device=torch_device)",
        "Default offload device is 'cuda'; once the big-GPU gate admits NPU this test fails."),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "Raises on an NPU host."),
      C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", True,
        "peak = torch.npu.max_memory_allocated() / 1024**3",
        "Reads 0 on NPU, so the memory assertion passes vacuously."),
  ])
