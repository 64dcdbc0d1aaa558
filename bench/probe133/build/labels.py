# Labels for probe133 (LLM fine-tuning framework internals: XTuner / LLaMA-Factory / InternLM).
# One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------------------------
# XTuner
# ----------------------------------------------------------------------------------------------------------------

E("xt_dispatch_init", "xtuner/model/modules/dispatch/__init__.py", "device_branch_or_abstraction",
  "XTuner model/modules/dispatch/__init__.py (flash-attn / triton capability flags, forward dispatch tables)", [
    C("from flash_attn import flash_attn_func  # pre-check # noqa: F401", "attention_kernel", "add_branch", True,
      "if is_torch_npu_available(): SUPPORT_FLASH2 = True  # varlen/flash forwards routed to torch_npu.npu_fusion_attention",
      "flash-attn cannot be installed on NPU, so SUPPORT_FLASH2 stays False and dispatch_varlen_attn_forward returns "
      "silently: packed (use_varlen_attn) samples then attend across sample boundaries. Needs an NPU capability branch."),
    C("if (not SUPPORT_TRITON) or (not USE_TRITON_KERNEL):", "npu_fused_op", "add_branch", False,
      "if is_torch_npu_available(): rms_forward = npu_rms_norm_forward  # torch_npu.npu_rms_norm",
      "Without triton the HF RMSNorm runs unfused, which is correct; routing RMSNorm to npu_rms_norm is performance only."),
])

E("xt_dispatch_attention", "xtuner/model/modules/dispatch/attention.py", "explicit_replacement",
  "XTuner model/modules/dispatch/attention.py (flash_attn_func / flash_attn_varlen_func wrappers)", [
    C("=import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The replacement calls torch_npu.npu_fusion_attention directly."),
    C("from flash_attn.bert_padding import pad_input", "unsupported_op_workaround", "replace", True,
      "from .bert_padding import pad_input  # pure-torch copy, flash_attn package is not installable on NPU",
      "Guarded import fails silently on NPU and flash_attn_w_mask then dies with NameError on pad_input."),
    C("attn_output = flash_attn_func(", "attention_kernel", "replace", True,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, query_states.shape[2], "
      "'BSND', atten_mask=causal_mask, scale=softmax_scale, keep_prob=1. - dropout_p, sparse_mode=3 if causal else 0)[0]",
      "flash_attn_func is undefined on NPU (guarded import). BSND layout, keep_prob = 1 - dropout_p, causal via a "
      "2048x2048 triu bool mask + sparse_mode=3; window_size would map to pre/next_tockens."),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "replace", True,
      "attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, "
      "query_states.shape[1], 'TND', atten_mask=causal_mask, scale=softmax_scale, keep_prob=1. - dropout_p, "
      "sparse_mode=3, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
      "Unpadded varlen path; NPU takes cumulative end offsets (cu_seqlens[1:]) as host int lists with layout TND."),
    C("attn_output = flash_attn_varlen_func(", "attention_kernel", "replace", True,
      "attn_output = torch_npu.npu_fusion_attention(q_unpad, k_unpad, v_unpad, q_unpad.shape[1], 'TND', "
      "atten_mask=causal_mask, scale=softmax_scale, keep_prob=1. - dropout_p, sparse_mode=3, "
      "actual_seq_qlen=cumulative_len[1:].tolist(), actual_seq_kvlen=cumulative_len[1:].tolist())[0]",
      "Packed-sequence attention used by every *_varlen_attn_forward; core of use_varlen_attn training."),
])

E("xt_dispatch_utils", "xtuner/model/modules/dispatch/utils.py", "explicit_replacement",
  "XTuner model/modules/dispatch/utils.py (upad_qkv, repeat_kv helpers)", [
    C("from flash_attn.bert_padding import index_first_axis, unpad_input", "unsupported_op_workaround", "replace", True,
      "from .bert_padding import index_first_axis, unpad_input  # pure-torch copy",
      "Guarded import: on NPU upad_qkv fails with NameError (index_first_axis) the first time a padded batch arrives."),
])

E("xt_dispatch_llama", "xtuner/model/modules/dispatch/llama.py", "explicit_replacement",
  "XTuner model/modules/dispatch/llama.py (llama_attn_forward / llama_varlen_attn_forward)", [
    C("if torch.is_autocast_enabled():", "amp", "replace", False,
      "if torch.is_autocast_enabled() or torch.npu.is_autocast_enabled():",
      "torch.is_autocast_enabled() reports CUDA autocast only (unconfirmed for the torch_npu build); under NPU AMP the "
      "branch is skipped and q/k/v stay fp32 - slower, not wrong (npu_fusion_attention accepts fp32)."),
    C("target_dtype = torch.get_autocast_gpu_dtype()", "amp", "replace", False,
      "target_dtype = torch.npu.get_autocast_dtype()",
      "Pairs with the line above; get_autocast_dtype is in torch_npu.npu.__all__."),
])

E("xt_dispatch_mixtral", "xtuner/model/modules/dispatch/mixtral.py", "explicit_replacement",
  "XTuner model/modules/dispatch/mixtral.py (sliding-window flash attention, varlen forward, MoE block)", [
    C("=import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The varlen path below calls torch_npu.npu_fusion_attention directly."),
    C("_flash_supports_window_size = 'window_size' in list(", "attention_kernel", "add_branch", False,
      "_flash_supports_window_size = True if is_torch_npu_available() else 'window_size' in list(",
      "On NPU the except branch sets False and sliding windows are ignored; Mixtral configs ship sliding_window=null, "
      "so this only matters for Mistral-style configs (npu_fusion_attention band mode via pre/next_tockens)."),
    C("attn_output = flash_attn_varlen_func(", "attention_kernel", "replace", True,
      "attn_output = torch_npu.npu_fusion_attention(q_unpad, k_unpad, v_unpad, q_unpad.shape[1], 'TND', "
      "atten_mask=causal_mask, keep_prob=1. - dropout_rate, sparse_mode=3, actual_seq_qlen=cumulative_len[1:].tolist(), "
      "actual_seq_kvlen=cumulative_len[1:].tolist())[0]",
      "Direct flash_attn_varlen_func call (not via attention.py): NameError on NPU in packed training."),
])

E("xt_triton_rms_norm", "xtuner/model/modules/dispatch/triton_kernels/rms_norm.py", "kernel_rewrite",
  "XTuner dispatch/triton_kernels/rms_norm.py (Triton fused RMSNorm fwd/bwd from the triton layer-norm tutorial)", [
    C("rstd = torch.empty((M, ), dtype=torch.float32, device='cuda')", "device_type", "replace", True,
      "rstd = torch.empty((M, ), dtype=torch.float32, device=x.device)",
      "Hard-coded 'cuda' buffer; fails whenever this kernel path runs on NPU (triton-ascend + USE_TRITON_KERNEL=1)."),
    C("MAX_FUSED_SIZE = 65536 // x.element_size()", "triton_kernel_tuning", "replace", False,
      "MAX_FUSED_SIZE = 65536 // x.element_size()  # re-derive from the Ascend unified-buffer size for triton-ascend",
      "64KB limit is a CUDA shared-memory heuristic; the right bound for triton-ascend is unconfirmed."),
    C("num_warps = min(max(BLOCK_SIZE // 256, 1), 8)", "triton_kernel_tuning", "replace", False,
      "num_warps = 1  # warps are not the NPU's unit of parallelism under triton-ascend (unconfirmed)",
      "Launch heuristic tuned for NVIDIA SMs; performance-only and unconfirmed for triton-ascend."),
    C("locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device='cuda')", "device_type", "replace", True,
      "locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)",
      "Same hard-coded 'cuda' allocation in the backward."),
    C("return rms_norm(hidden_states, self.weight, self.variance_epsilon)", "npu_fused_op", "add_branch", False,
      "if hidden_states.device.type == 'npu': return torch_npu.npu_rms_norm(hidden_states, self.weight, "
      "epsilon=self.variance_epsilon)[0]",
      "The sensible NPU port skips the Triton kernel and uses the fused aclnn RMSNorm; performance choice."),
])

E("xt_triton_rotary", "xtuner/model/modules/dispatch/triton_kernels/rotary.py", "kernel_rewrite",
  "XTuner dispatch/triton_kernels/rotary.py (flash-attn's Triton rotary kernel)", [
    C("BLOCK_M = 4 if interleaved else (8 if rotary_dim <= 64 else 4)", "triton_kernel_tuning", "replace", False,
      "BLOCK_M = 64  # fewer, larger programs for triton-ascend (grid ~ number of AI cores; unconfirmed)",
      "Grid = cdiv(seqlen, BLOCK_M) x batch x nheads programs is a GPU heuristic; performance only, unconfirmed."),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(x.device.index):",
      "torch.cuda.device(idx) on a CPU/NPU torch build raises when entered with a real index."),
    C("num_warps=2 if rotary_dim <= 64 else 4,", "triton_kernel_tuning", "replace", False,
      "num_warps=1,",
      "CUDA warp count; irrelevant/unconfirmed on triton-ascend."),
])

E("xt_seq_comm", "xtuner/parallel/sequence/comm.py", "explicit_replacement",
  "XTuner parallel/sequence/comm.py (Ulysses all_to_all, split/gather autograd functions, loss reduce)", [
    C("device=torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device=mean_loss.device)",
      "torch.cuda.current_device() raises on an NPU host; only reached when the token count arrives as a python int."),
])

E("xt_varlen_hook", "xtuner/engine/hooks/varlen_attn_args_to_messagehub_hook.py", "explicit_replacement",
  "XTuner engine/hooks/varlen_attn_args_to_messagehub_hook.py", [
    C("cumulative_len = cumulative_len[0].cuda()", "tensor_to_device", "replace", True,
      "cumulative_len = cumulative_len[0].npu()",
      ".cuda() raises on NPU. (npu_fusion_attention takes host lists, so keeping it on CPU would also do.)"),
    C("cumulative_len = cumulative_len[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "cumulative_len = cumulative_len[0].npu(non_blocking=True)",
      "Validation-iteration twin of the line above."),
])

E("xt_throughput_hook", "xtuner/engine/hooks/throughput_hook.py", "explicit_replacement",
  "XTuner engine/hooks/throughput_hook.py (TFLOPs / tokens-per-second / memory logging)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "Returns None on NPU, so MFU is simply not logged; metrics only."),
    C("name = torch.cuda.get_device_name()", "torch_cuda_api", "replace", False,
      "name = torch.npu.get_device_name()",
      "Unreachable on NPU until the line above is ported; the peak table also lacks Ascend entries."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Resolves the current CUDA device first, which raises on an NPU host (before_run aborts training)."),
    C("max_memory = torch.cuda.max_memory_allocated() / (1024**3)", "torch_cuda_api", "replace", False,
      "max_memory = torch.npu.max_memory_allocated() / (1024**3)",
      "Returns 0 silently when CUDA is not initialised; only a logged metric is wrong."),
])

E("xt_sft_model", "xtuner/model/sft.py", "explicit_replacement",
  "XTuner model/sft.py (SupervisedFinetune: flash-attn / QLoRA+ZeRO3 config preparation)", [
    C("torch.cuda.is_available() and torch.cuda.is_bf16_supported()) \\", "torch_cuda_api", "replace", True,
      "torch.npu.is_available() and torch.npu.is_bf16_supported()) \\",
      "Silently picks fp16 on Atlas A2 (which supports bf16) for every attn_implementation-driven load."),
    C("cfg.attn_implementation = 'flash_attention_2'", "attention_kernel", "add_branch", True,
      "cfg.attn_implementation = 'eager' if is_torch_npu_available() else 'flash_attention_2'  # XTuner dispatch patches eager attn classes",
      "Once SUPPORT_FLASH2 is true on NPU, transformers of this era refuses flash_attention_2 without the flash_attn "
      "package (ImportError); load another implementation and let dispatch_modules patch it."),
    C("torch_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() \\", "torch_cuda_api", "replace", True,
      "torch_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() \\",
      "torch 2.1 is_bf16_supported() calls torch.cuda.current_device() -> raises on NPU (QLoRA + ZeRO-3 path)."),
])

E("xt_train", "xtuner/tools/train.py", "explicit_replacement",
  "XTuner tools/train.py (mmengine Runner / DeepSpeed strategy / HF Trainer entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torch_npu 2.1 has no device-backend autoload, and the ported code uses torch.npu."),
    C("if cfg.launcher == 'none' and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if cfg.launcher == 'none' and torch.npu.device_count() > 1:",
      "Only decides whether to print a warning; returns 0 on NPU."),
])

E("xt_tools_utils", "xtuner/tools/utils.py", "explicit_replacement",
  "XTuner tools/utils.py (get_stop_criteria, streamers, auto_dtype_of_deepspeed_config)", [
    C("gpu_available = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "gpu_available = torch.npu.is_available()",
      "DeepSpeed 'auto' fp16/bf16 resolve to False on NPU -> silently trains in fp32."),
    C("bf16_supported = gpu_available and torch.cuda.is_bf16_supported()", "torch_cuda_api", "replace", True,
      "bf16_supported = gpu_available and torch.npu.is_bf16_supported()",
      "After the line above is ported this would call torch.cuda.is_bf16_supported(), which raises on torch 2.1 CPU builds."),
])

E("xt_chat", "xtuner/tools/chat.py", "explicit_replacement",
  "XTuner tools/chat.py (interactive chat, bitsandbytes 4/8-bit, device_map='auto', LLaVA inputs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; needed for .npu() and for accelerate to see the NPU on torch_npu 2.1."),
    C("=load_in_8bit = True", "unsupported_op_workaround", "add_branch", False,
      "if is_torch_npu_available(): raise NotImplementedError('LLM.int8 (--bits 8) has no Ascend backend; use --bits 4 or none')",
      "bitsandbytes LLM.int8 is not listed for NPU; only turns a deep failure into a clear message."),
    C("=projector.cuda()", "tensor_to_device", "replace", True,
      "projector.npu()",
      "Module .cuda() raises on an NPU host."),
    C("=visual_encoder.cuda()", "tensor_to_device", "replace", True,
      "visual_encoder.npu()",
      "Module .cuda() raises on an NPU host."),
    C("image = image.cuda().unsqueeze(0).to(visual_encoder.dtype)", "tensor_to_device", "replace", True,
      "image = image.npu().unsqueeze(0).to(visual_encoder.dtype)",
      "Tensor .cuda() raises."),
    C("inputs=ids.cuda(),", "tensor_to_device", "replace", True,
      "inputs=ids.npu(),",
      "Plugin (moss_sft) generation path."),
    C("inputs=new_ids.cuda(),", "tensor_to_device", "replace", True,
      "inputs=new_ids.npu(),",
      "Second plugin generation call."),
    C("ids = torch.tensor(ids).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "ids = torch.tensor(ids).npu().unsqueeze(0)",
      "LLaVA path."),
])

E("xt_mmbench", "xtuner/tools/mmbench.py", "explicit_replacement",
  "XTuner tools/mmbench.py (distributed LLaVA MMBench evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script (torch_npu 2.1, no autoload)."),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)",
      "Raises on NPU. (Uses the global rank like upstream; LOCAL_RANK would be the multi-node-safe choice.)"),
    C("=load_in_8bit = True", "unsupported_op_workaround", "add_branch", False,
      "if is_torch_npu_available(): raise NotImplementedError('LLM.int8 (--bits 8) has no Ascend backend')",
      "Same clear-error guard as chat.py."),
    C("=projector.cuda()", "tensor_to_device", "replace", True,
      "projector.npu()",
      "Module .cuda() raises."),
    C("=visual_encoder.cuda()", "tensor_to_device", "replace", True,
      "visual_encoder.npu()",
      "Module .cuda() raises."),
    C("image = image.cuda().unsqueeze(0).to(visual_encoder.dtype)", "tensor_to_device", "replace", True,
      "image = image.npu().unsqueeze(0).to(visual_encoder.dtype)",
      "Tensor .cuda() raises."),
    C("ids = torch.tensor(ids).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "ids = torch.tensor(ids).npu().unsqueeze(0)",
      "Tensor .cuda() raises."),
])

E("xt_qlora_config", "xtuner/configs/internlm/internlm2_chat_7b/internlm2_chat_7b_qlora_oasst1_e3.py",
  "explicit_replacement",
  "XTuner configs/internlm/internlm2_chat_7b/internlm2_chat_7b_qlora_oasst1_e3.py (mmengine-style QLoRA config)", [
    C("=optim_type = AdamW", "fused_optimizer", "replace", False,
      "optim_type = NpuFusedAdamW  # from torch_npu.optim import NpuFusedAdamW",
      "msFmkTransplt performance advice (AdamW -> NpuFused*, faster but more memory); performance only."),
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False,
      "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist switches to hccl itself when an NPU is present (from memory, unconfirmed in the knowledge "
      "base); editing is harmless and explicit."),
])

E("xt_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "XTuner-style docker/Dockerfile (CUDA devel base, torch cu121 wheels, flash-attn/DeepSpeed op builds)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "No CANN toolkit/driver libs in a CUDA image, torch_npu cannot load (image tag plausible, not verified)."),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
      "Nothing reads it once no nvcc builds happen; harmless leftover."),
    C("ENV TORCH_CUDA_ARCH_LIST=\"8.0 8.6 8.9 9.0+PTX\"", "env_var", "removal", False, None,
      "Only consumed by CUDA extension builds."),
    C("--index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post3",
      "CUDA wheel index (no aarch64 cu121 wheels for Kunpeng hosts) and no torch-npu pin; x86 uses the CPU index."),
    C("RUN MAX_JOBS=8 pip install flash-attn==${FLASH_ATTN_VERSION} --no-build-isolation", "attention_kernel",
      "removal", True, None,
      "flash-attn builds with nvcc; no CUDA toolkit in the CANN image -> docker build fails."),
    C("RUN DS_BUILD_CPU_ADAM=1 DS_BUILD_FUSED_ADAM=1 DS_BUILD_UTILS=1 \\", "custom_cuda_extension", "replace", True,
      "RUN pip install deepspeed==${DEEPSPEED_VERSION}  # NPU accelerator; no CUDA op pre-build",
      "DS_BUILD_FUSED_ADAM pre-compiles CUDA ops with nvcc -> build fails; DeepSpeed's npu_accelerator needs no pre-build."),
    C("RUN pip install \"bitsandbytes>=0.43.0\" \"triton==2.1.0\" \\", "unsupported_op_workaround", "replace", False,
      "RUN pip install \"bitsandbytes>=0.43.0\" \\  # Ascend NF4 needs the multi-backend build; triton -> triton-ascend if wanted",
      "CUDA triton is dead weight on NPU (and, from memory, has no aarch64 wheel for 2.1.0 - unconfirmed); the stock "
      "bitsandbytes wheel lacks the Ascend backend (multi-backend branch only)."),
    C("=WORKDIR /workspace", "import_torch_npu", "npu_only_addition", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /root/.bashrc",
      "ascendai/cann images already export the set_env.sh variables as ENV; needed only with a bare base image."),
    C("ENV NCCL_IB_DISABLE=0 \\", "env_var", "removal", False, None,
      "NCCL_* variables are ignored by HCCL (silent no-op)."),
    C("NCCL_SOCKET_IFNAME=eth0 \\", "env_var", "replace", False,
      "HCCL_SOCKET_IFNAME=eth0 \\",
      "HCCL's own NIC selection; matters only on multi-NIC hosts."),
    C("NCCL_DEBUG=WARN", "env_var", "replace", False,
      "ASCEND_GLOBAL_LOG_LEVEL=3",
      "Logging only."),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "Ignored on NPU; fragmentation/memory only."),
])

# ----------------------------------------------------------------------------------------------------------------
# LLaMA-Factory
# ----------------------------------------------------------------------------------------------------------------

E("lf_misc", "src/llamafactory/extras/misc.py", "device_branch_or_abstraction",
  "LLaMA-Factory src/llamafactory/extras/misc.py (get_current_device, get_device_count, torch_gc, dtype inference)", [
    C("_is_fp16_available = is_torch_cuda_available()", "device_type", "add_branch", True,
      "_is_fp16_available = is_torch_npu_available() or is_torch_cuda_available()",
      "False on NPU -> infer_optim_dtype returns fp32 and models are loaded in fp32 (2x memory, silently)."),
    C("_is_bf16_available = is_torch_bf16_gpu_available()", "device_capability_check", "add_branch", False,
      "_is_bf16_available = is_torch_bf16_gpu_available() or (is_torch_npu_available() and torch.npu.is_bf16_supported())",
      "Whether transformers' is_torch_bf16_gpu_available covers NPU depends on the transformers version (unconfirmed)."),
    C("device = \"cuda:{}\".format(os.environ.get(\"LOCAL_RANK\", \"0\"))", "device_type", "add_branch", True,
      "elif is_torch_npu_available(): device = \"npu:{}\".format(os.environ.get(\"LOCAL_RANK\", \"0\"))",
      "Falls through to 'cpu' on NPU; device_map={'': cpu} then loads training/quantised models on the host."),
    C("return torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "elif is_torch_npu_available(): return torch.npu.device_count()",
      "Returns 0 on NPU, so llamafactory-cli never spawns torchrun for multi-device training."),
    C("return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()", "torch_cuda_api", "add_branch",
      False,
      "elif is_torch_npu_available(): return torch.npu.max_memory_allocated(), torch.npu.max_memory_reserved()",
      "Metrics only (returns 0, 0 on NPU)."),
    C("return is_torch_cuda_available()", "device_type", "add_branch", True,
      "return is_torch_npu_available() or is_torch_cuda_available()",
      "Callers use it to decide GPU/NPU vs CPU; False on NPU silently pushes work to the CPU."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "elif is_torch_npu_available(): torch.npu.empty_cache()",
      "The CUDA branch is skipped on NPU; cached NPU blocks are just not released (memory only)."),
])

E("lf_attention", "src/llamafactory/model/model_utils/attention.py", "device_branch_or_abstraction",
  "LLaMA-Factory src/llamafactory/model/model_utils/attention.py (flash_attn fa2/sdpa/eager selection)", [
    C("if not is_flash_attn_2_available():", "attention_kernel", "add_branch", False,
      "if is_torch_npu_available(): requested_attn_implementation = 'sdpa'  # SDPA dispatches to the NPU FA kernel",
      "Requesting fa2 on NPU only logs 'not installed' and keeps the default attention, which works; sdpa is the faster "
      "NPU route (transformers PR #36383)."),
])

E("lf_quantization", "src/llamafactory/model/model_utils/quantization.py", "device_branch_or_abstraction",
  "LLaMA-Factory src/llamafactory/model/model_utils/quantization.py (bitsandbytes / GPTQ / HQQ / EETQ setup)", [
    C("if model_args.quantization_bit == 8:", "unsupported_op_workaround", "add_branch", False,
      "if model_args.quantization_bit == 8 and is_torch_npu_available(): raise ValueError('8-bit bitsandbytes is not supported on Ascend NPU.')",
      "LLM.int8 has no Ascend backend; clearer error only."),
    C("check_version(\"bitsandbytes>=0.39.0\", mandatory=True)", "unsupported_op_workaround", "replace", False,
      "check_version(\"bitsandbytes>=0.43.3\" if not is_torch_npu_available() else \"bitsandbytes>=0.45.0\", mandatory=True)",
      "NF4 on NPU needs the multi-backend bitsandbytes build; the exact minimum version is unconfirmed."),
])

E("lf_parser", "src/llamafactory/hparams/parser.py", "device_branch_or_abstraction",
  "LLaMA-Factory src/llamafactory/hparams/parser.py (get_train_args / get_infer_args checks)", [
    C("if not is_torch_bf16_gpu_available():", "device_capability_check", "replace", False,
      "if not (is_torch_bf16_gpu_available() or (is_torch_npu_available() and torch.npu.is_bf16_supported())):",
      "pure_bf16 check; whether the transformers helper sees NPU is version-dependent (unconfirmed)."),
    C("if training_args.fp16 and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if training_args.fp16 and not (torch.cuda.is_available() or is_torch_npu_available()):",
      "Raises ValueError for every --fp16 run on NPU."),
])

E("lf_setup", "setup.py", "device_branch_or_abstraction",
  "LLaMA-Factory setup.py (extras_require)", [
    C("\"torch\": [\"torch>=1.13.1\"],", "import_torch_npu", "npu_only_addition", False,
      "\"torch-npu\": [\"torch==2.1.0\", \"torch-npu==2.1.0.post3\", \"decorator\"],",
      "Optional extra; users can install torch-npu by hand, but the pin documents the matching torch version."),
])

E("lf_multi_gpu_sh", "examples/lora_multi_gpu/single_node.sh", "explicit_replacement",
  "LLaMA-Factory examples/lora_multi_gpu/single_node.sh (torchrun LoRA SFT launcher)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "Inherited when the calling shell already sourced it; needed for non-interactive launches."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "Ignored on NPU, but with this identity mapping ranks 0-3 land on NPUs 0-3 anyway; required as soon as the ids change."),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "Consumer-GPU workaround; HCCL ignores it."),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "HCCL ignores it."),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "Silently ignored on NPU; memory only."),
    C("--flash_attn fa2 \\", "attention_kernel", "replace", False,
      "--flash_attn sdpa \\",
      "fa2 falls back with a warning on NPU; sdpa reaches the NPU FA kernel."),
])

# ----------------------------------------------------------------------------------------------------------------
# InternLM
# ----------------------------------------------------------------------------------------------------------------

E("il_parallel_context", "internlm/core/context/parallel_context.py", "explicit_replacement",
  "InternLM internlm/core/context/parallel_context.py (global ParallelContext, zero1/tensor/pipeline groups)", [
    C("devices_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "devices_per_node = torch.npu.device_count()",
      "0 on NPU -> ZeroDivisionError in the modulo below (launch_from_slurm path)."),
    C("torch.cuda.set_device(device_ordinal)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_ordinal)",
      "Raises on NPU."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on NPU: no per-parallel-mode seeds are registered, later seed(ParallelMode.TENSOR) contexts fail / TP "
      "ranks share dropout masks."),
])

E("il_random", "internlm/core/context/random.py", "explicit_replacement",
  "InternLM internlm/core/context/random.py (SeedManager with per-ParallelMode CUDA RNG states)", [
    C("self._seed_states[self._current_mode] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self._seed_states[self._current_mode] = torch.npu.get_rng_state()",
      "get_rng_state initialises CUDA -> raises on NPU."),
    C("torch.cuda.set_rng_state(self._seed_states[parallel_mode])", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(self._seed_states[parallel_mode])",
      "Lazy-queued no-op without CUDA: the mode switch silently never changes the NPU generator."),
    C("current_state = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "current_state = torch.npu.get_rng_state()",
      "Raises on NPU."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(seed)",
      "Lazy no-op without CUDA: once the neighbours are ported, every mode would silently get the same NPU state."),
    C("self._seed_states[parallel_mode] = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "self._seed_states[parallel_mode] = torch.npu.get_rng_state()",
      "Raises on NPU."),
    C("torch.cuda.set_rng_state(current_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state(current_state)",
      "Silent no-op without CUDA; the NPU generator is not restored."),
    C("current_states = torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True,
      "current_states = torch.npu.get_rng_state()",
      "Raises on NPU (sync_states)."),
])

E("il_launch", "internlm/initialize/launch.py", "explicit_replacement",
  "InternLM internlm/initialize/launch.py (args_sanity_check, launch_from_slurm / launch_from_torch)", [
    C("parser.add_argument(\"--backend\", type=str, default=\"nccl\"", "dist_backend", "replace", False,
      "parser.add_argument(\"--backend\", type=str, default=\"hccl\", help=\"backend for distributed communication\")",
      "CLI default is not forwarded by initialize_distributed_env; edited for consistency."),
    C("if gpc.config.model.dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():", "device_capability_check",
      "replace", True,
      "if gpc.config.model.dtype == torch.bfloat16 and not torch.npu.is_bf16_supported():",
      "Raises on NPU (torch 2.x is_bf16_supported needs a CUDA device) for the default bf16 config."),
    C("=backend: str = \"nccl\",", "dist_backend", "replace", False,
      "backend: str = \"hccl\",",
      "launch()'s default is always overridden by its two callers."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "False on NPU: gpc.set_device is skipped and every rank stays on device 0 (HCCL init fails / OOM)."),
    C("def launch_from_slurm(config: Union[str, Path, Config, Dict], host: str, port: int, backend: str = \"nccl\"",
      "dist_backend", "replace", True,
      "def launch_from_slurm(config: Union[str, Path, Config, Dict], host: str, port: int, backend: str = \"hccl\", seed: int = 1024):",
      "Effective default for the slurm launcher: init_process_group('nccl') fails on NPU."),
    C("def launch_from_torch(config: Union[str, Path, Config, Dict], backend: str = \"nccl\"", "dist_backend", "replace",
      True,
      "def launch_from_torch(config: Union[str, Path, Config, Dict], backend: str = \"hccl\", seed: int = 1024):",
      "Effective default for torchrun launches."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "No-op before any device allocation on either backend."),
])

E("il_norm", "internlm/model/norm.py", "explicit_replacement",
  "InternLM internlm/model/norm.py (apex mixed_dtype_fused_rms_norm_affine with torch fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Needed by the npu_rms_norm branch below."),
    C("if apex_rmsnorm_impl:", "npu_fused_op", "add_branch", False,
      "if _input.device.type == \"npu\": return torch_npu.npu_rms_norm(_input, self.weight.to(_input.dtype), epsilon=self.eps)[0]",
      "apex's CUDA RMSNorm cannot be built on NPU, the torch fallback is correct but slow; fused op is performance only."),
])

E("il_mha", "internlm/model/multi_head_attention.py", "explicit_replacement",
  "InternLM internlm/model/multi_head_attention.py (MHA on flash_attn.modules.mha, packed forward)", [
    C("from flash_attn.modules.mha import (", "attention_kernel", "replace", True,
      "from internlm.model.npu_attention import (  # npu_fusion_attention-based Flash*Attention + torch fallbacks",
      "Unguarded import: the module (and the model) cannot even be imported on NPU; SelfAttention/CrossAttention and "
      "_update_kv_cache come from the same package."),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "Only for model.dtype=fp32 configs; qkv is cast to bf16 explicitly, so the disabled CUDA autocast is a no-op."),
    C("with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):", "amp", "replace", False,
      "with torch.autocast(device_type=\"npu\", dtype=torch.bfloat16):",
      "Same as above in the packed path."),
])

E("il_utils_common", "internlm/utils/common.py", "explicit_replacement",
  "InternLM internlm/utils/common.py (get_current_device, move_to_device, seeds, expandable segments)", [
    C("if torch.is_tensor(norm) and norm.device.type != \"cuda\":", "device_type", "replace", True,
      "if torch.is_tensor(norm) and norm.device.type != \"npu\":",
      "With 'cuda' every NPU norm takes the move branch below, which raises."),
    C("norm = norm.to(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "norm = norm.to(torch.npu.current_device())",
      "Raises on NPU."),
    C("assert not value.is_cuda, \"elements are already on devices.\"", "device_type", "replace", False,
      "assert not value.is_npu, \"elements are already on devices.\"",
      "is_cuda is always False on NPU: the sanity check silently never fires."),
    C("assert not value.is_cuda, \"element is already on device.\"", "device_type", "replace", False,
      "assert not value.is_npu, \"element is already on device.\"",
      "Same."),
    C("if not item.is_cuda:", "device_type", "replace", False,
      "if not item.is_npu:",
      "Moving an NPU tensor to the NPU is a no-op; only skips a redundant .to()."),
    C("if not element.is_cuda:", "device_type", "replace", False,
      "if not element.is_npu:",
      "Same."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "get_current_device() returns cpu on NPU: batches stay on the host while the model is on the NPU."),
    C("return torch.device(f\"cuda:{torch.cuda.current_device()}\")", "device_type", "replace", True,
      "return torch.device(f\"npu:{torch.npu.current_device()}\")",
      "Device string and current_device call."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "Inference-only helper; torch.manual_seed above also seeds the PrivateUse1 device on torch>=2.1 (unconfirmed)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Same; lazy no-op without CUDA."),
    C("if os.getenv(\"PYTORCH_CUDA_ALLOC_CONF\", None) is not None:", "env_var", "replace", False,
      "if os.getenv(\"PYTORCH_NPU_ALLOC_CONF\", None) is not None:",
      "Reads the wrong variable on NPU; memory behaviour only."),
    C("_alloc_setting = os.getenv(\"PYTORCH_CUDA_ALLOC_CONF\") + \",\" + _alloc_setting", "env_var", "replace", False,
      "_alloc_setting = os.getenv(\"PYTORCH_NPU_ALLOC_CONF\") + \",\" + _alloc_setting",
      "Same."),
    C("torch.cuda.memory._set_allocator_settings(_alloc_setting)", "torch_cuda_api", "replace", True,
      "os.environ[\"PYTORCH_NPU_ALLOC_CONF\"] = _alloc_setting  # must be set before the first NPU allocation",
      "The CUDA caching-allocator binding is missing from a CPU/NPU torch build -> raises when called."),
])

E("il_config_7b", "configs/7B_sft.py", "explicit_replacement",
  "InternLM configs/7B_sft.py (model/parallel/zero1/hybrid_zero_optimizer config)", [
    C("use_flash_attn=True,", "attention_kernel", "replace", True,
      "use_flash_attn=False,  # flash_attn fused MLP/LN/CE/rotary are CUDA-only; attention goes through the NPU MHA wrapper",
      "True pulls flash_attn's CUDA-only fused dense/MLP, dropout_add_layer_norm, rotary and cross-entropy modules."),
])

E("il_train_sh", "tools/run_7b_sft.sh", "explicit_replacement",
  "InternLM-style slurm/torchrun launcher for train.py", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", False,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "srun/torchrun inherit the caller's environment; if sourced here, set_env.sh must run with nounset off "
      "(it fails under set -u)."),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA stream-ordering knob for comm/compute overlap; no NPU meaning."),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
      "HCCL uses the NPUs' own RoCE ports; ignored."),
    C("export NCCL_IB_TIMEOUT=22", "env_var", "replace", False,
      "export HCCL_CONNECT_TIMEOUT=1200",
      "Ignored by HCCL; the closest HCCL knob is the link-setup timeout."),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=bond0",
      "HCCL picks a host NIC itself; needed only when that choice cannot reach the root node."),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "Logging only."),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "Watchdog behaviour; torch_npu reads HCCL_ASYNC_ERROR_HANDLING."),
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_type", "replace", True,
      "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is missing on an Ascend host; with set -e + pipefail the failing assignment aborts the script."),
    C("--gpus-per-task=1 \\", "device_type", "removal", False, None,
      "Slurm GPU gres does not exist on an Ascend partition (no Ascend gres integration found - unconfirmed)."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "Identity mapping over 8 devices; ignored on NPU but same outcome unless a user overrides it."),
])

E("il_requirements_torch", "requirements/torch.txt", "explicit_replacement",
  "InternLM requirements/torch.txt (CUDA 11.7 wheel pins)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; harmless once the +cu117 pins are gone, x86 hosts want the CPU wheels."),
    C("torch==2.0.1+cu117", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "+cu117 local versions do not exist for aarch64/CPU indexes; torch must match the torch-npu wheel."),
    C("torchvision==0.15.2+cu117", "import_torch_npu", "replace", True,
      "torchvision==0.16.0",
      "Same local-version problem; pairs with torch 2.1.0."),
    C("torchaudio==2.0.2+cu117", "import_torch_npu", "replace", True,
      "torchaudio==2.1.0",
      "Same."),
    C("# flash-attention and apex are built from source, see doc/install.md", "import_torch_npu", "npu_only_addition",
      True,
      "torch-npu==2.1.0.post3",
      "The torch-npu pin (wheel version = torch version + .postN)."),
])
