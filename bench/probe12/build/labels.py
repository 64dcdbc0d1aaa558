"""Labels for probe12 (hand-written synthetic upstream files; see ../README.md).

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

E("chatglm_ptuning_main", "ptuning/main.py", "transfer_to_npu",
  "THUDM/ChatGLM-6B ptuning/main.py (P-Tuning v2 with Seq2SeqTrainer, optional int4/int8 quantize)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the HF Trainer only places the model on the NPU (and builds hccl DDP) when torch_npu is loaded"),
    C("model = model.quantize(model_args.quantization_bit)", "custom_cuda_extension", R, True,
      "model = model.half()  # ChatGLM quantize() needs cpm_kernels (CUDA); train fp16/bf16 or use an NPU quant path",
      "ChatGLM's quantization.py runs cpm_kernels CUDA kernels; no NPU build"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      'metrics["peak_mem_gb"] = torch.npu.max_memory_allocated() / 2**30',
      "torch.cuda memory stats need a CUDA build"),
])

E("yi_sft_zero3", "finetune/sft_zero3.py", "explicit_replacement",
  "01-ai/Yi / Baichuan2 fine-tune scripts: DeepSpeed ZeRO-3 SFT loop with HfDeepSpeedConfig and FusedAdam", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the npu device need torch_npu loaded"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device fails without a CUDA build"),
    C('device = torch.device(f"cuda:{args.local_rank}")', "device_type", R, True,
      'device = torch.device(f"npu:{args.local_rank}")', "batches would be sent to a CUDA device"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on Ascend; transformers raises ImportError for flash_attention_2 unless its "
      "npu_flash_attention integration is present (newer releases). sdpa dispatches to NPU fused attention"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "needs a CUDA build"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", R, True,
      'f"mem {torch.npu.max_memory_reserved() / 2**30:.1f}G")', "needs a CUDA build"),
])

E("qwen_vl_finetune", "finetune.py", "transfer_to_npu",
  "QwenLM/Qwen-VL finetune.py (Trainer + LoRA / Q-LoRA on the GPTQ Int4 checkpoint, ZeRO-3 gather)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "Trainer/accelerate pick the NPU and hccl only when torch_npu is loaded"),
    C("quantization_config=GPTQConfig(bits=4, disable_exllama=True)", "custom_cuda_extension", R, True,
      "quantization_config=None,  # GPTQ Int4 Q-LoRA needs auto-gptq CUDA kernels; LoRA on the bf16 checkpoint",
      "Q-LoRA path loads the Int4 checkpoint through auto-gptq/optimum CUDA kernels, which have no NPU build"),
])

E("internvl_vit_flash", "internvl/model/internvl_chat/modeling_intern_vit.py", "explicit_replacement",
  "OpenGVLab/InternVL modeling_intern_vit.py (guarded flash-attn varlen qkvpacked) + chat helpers", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "needed for .npu() / the npu device"),
    C("assert qkv.is_cuda", "device_type", R, False, "assert qkv.is_npu",
      "only on the flash path, which the unchanged code never takes on NPU; changes with the NPU attention branch"),
    C("self.use_flash_attn = config.use_flash_attn and has_flash_attn", "attention_kernel", B, False,
      "self.use_flash_attn = config.use_flash_attn and (has_flash_attn or is_torch_npu_available())  # npu_fusion_attention(TND, actual_seq_qlen=cu_seqlens[1:])",
      "flash-attn import fails on NPU and the encoder silently falls back to naive attention; "
      "correct but slower and memory-hungry for 448px tiles -> route to torch_npu.npu_fusion_attention"),
    C("pixel_values = pixel_values.to(torch.bfloat16).cuda()", "tensor_to_device", R, True,
      "pixel_values = pixel_values.to(torch.bfloat16).npu()", ".cuda() fails without CUDA"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda() fails without CUDA"),
])

E("deepseek_v2_moe", "deepseek_v2/modeling_deepseek_moe.py", "explicit_replacement",
  "deepseek-ai DeepSeek-V2 modeling_deepseek.py MoE block (group-limited greedy gate) in a training fork "
  "that runs routed experts with tgale96/grouped_gemm", [
    C("=import grouped_gemm as gg", "custom_cuda_extension", R, True,
      "import torch_npu  # grouped_gemm is a CUTLASS extension; use torch_npu.npu_grouped_matmul",
      "grouped_gemm has no Ascend build; the import fails at model load"),
    C("batch_sizes = tokens_per_expert.cpu()", "npu_fused_op", R, False,
      "group_list = torch.cumsum(tokens_per_expert, dim=0)",
      "npu_grouped_matmul takes an on-device group_list (cumulative counts with group_list_type 0); "
      "dropping the host copy avoids a sync per layer"),
    C("fc1 = gg.ops.gmm(permuted_tokens, self.w1, batch_sizes, trans_b=False)", "custom_cuda_extension", R, True,
      "fc1 = torch_npu.npu_grouped_matmul([permuted_tokens], [self.w1], group_list=group_list, split_item=2, group_type=0)[0]",
      "call site of the CUDA grouped GEMM"),
    C("return gg.ops.gmm(inter, self.w2, batch_sizes, trans_b=False)", "custom_cuda_extension", R, True,
      "return torch_npu.npu_grouped_matmul([inter], [self.w2], group_list=group_list, split_item=2, group_type=0)[0]",
      "call site of the CUDA grouped GEMM"),
    C("inter = F.silu(gate) * up", "npu_fused_op", R, False,
      "inter = torch_npu.npu_swiglu(fc1, dim=-1)", "fused SwiGLU on NPU (performance only)"),
    C("variance = hidden_states.pow(2).mean(-1, keepdim=True)", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(hidden_states.to(input_dtype), self.weight, epsilon=self.variance_epsilon)[0]",
      "fused RMSNorm on NPU (performance only)"),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", R, False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)", "fused RoPE (performance only)"),
])

E("fastchat_train_mem", "fastchat/train/train_mem.py", "transfer_to_npu",
  "lm-sys/FastChat fastchat/train/train_mem.py (flash-attn monkey patch applied before transformers import; "
  "train.py body folded in)", [
    C("from fastchat.train.llama_flash_attn_monkey_patch import (", "attention_kernel", R, True,
      "from fastchat.train.llama_npu_attn_monkey_patch import (  # or drop the patch and use attn_implementation='sdpa'",
      "the patch module imports flash_attn at top level; ImportError on Ascend before training starts"),
    C("=replace_llama_attn_with_flash_attn()", "attention_kernel", R, True,
      "replace_llama_attn_with_npu_fusion_attention()",
      "installs flash_attn_varlen-based forward; needs the NPU attention replacement instead"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "Trainer uses the NPU and hccl only with torch_npu loaded"),
])

E("fastchat_flash_patch", "fastchat/train/llama_flash_attn_monkey_patch.py", "explicit_replacement",
  "lm-sys/FastChat llama_flash_attn_monkey_patch.py, later flash-attn-2 form (GQA, kv-cache, varlen kvpacked)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "npu_fusion_attention lives in torch_npu"),
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on Ascend; top-level ImportError"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", R, True,
      "from fastchat.train.bert_padding import pad_input, unpad_input  # pure-torch copy",
      "pad/unpad helpers are plain torch but ship inside the flash-attn package"),
    C("from flash_attn.flash_attn_interface import (", "attention_kernel", R, True,
      "import torch_npu  # npu_fusion_attention replaces flash_attn_func / flash_attn_varlen_kvpacked_func",
      "flash-attn kernels have no NPU build"),
    C('assert flash_attn_version >= "2.1.0"', "attention_kernel", X, True, None,
      "version check of the removed package"),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True)", "attention_kernel", R, True,
      'output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", atten_mask=causal_mask, sparse_mode=3, scale=self.head_dim ** -0.5)[0].view(bsz, q_len, -1)',
      "dense causal path (BSND, GQA via Nq/Nkv ratio); sparse_mode=3 matches flash-attn's bottom-right causal alignment with a kv cache"),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", R, True,
      'output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, "TND", atten_mask=causal_mask, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist(), scale=self.head_dim ** -0.5)[0]',
      "varlen path -> TND layout with cumulative sequence lengths"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", X, True, None,
      "get_device_capability needs CUDA (returns None under torch_npu's patch); the A100/H100 warning is moot on NPU"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "self-test runs on a CUDA device"),
])

E("firefly_qlora", "train_qlora.py", "transfer_to_npu",
  "yangjianxin1/Firefly train_qlora.py / BELLE QLoRA (NF4 4-bit base, LoRA on all Linear4bit, paged AdamW)", [
    C('os.environ["PYTORCH_CUDA_ALLOC_CONF"]', "env_var", R, False,
      'os.environ["PYTORCH_NPU_ALLOC_CONF"] = "max_split_size_mb:128"',
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; the CUDA variable is ignored (fragmentation tuning lost)"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "Trainer/accelerate pick the NPU only with torch_npu loaded"),
    C("quantization_config=BitsAndBytesConfig(", "unsupported_op_workaround", R, False,
      "quantization_config=BitsAndBytesConfig(  # needs bitsandbytes with the Ascend NF4 backend",
      "unconfirmed: NF4 quant/dequant for Ascend exists in bitsandbytes' multi-backend work (PR #1422) and "
      "transformers PR #31512; whether the installed build has it decides if 4-bit loading works"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", R, False,
      "if not ddp and torch.npu.device_count() > 1:",
      "returns 0 without CUDA, so the naive model-parallel flags are silently skipped"),
    C('training_args.optim = "paged_adamw_32bit"', "fused_optimizer", R, False,
      'training_args.optim = "adamw_torch"',
      "unconfirmed: bitsandbytes paged optimizers are not listed for NPU"),
])

E("megatron_ds_pretrain_gpt", "pretrain_gpt.py", "explicit_replacement",
  "microsoft/Megatron-DeepSpeed pretrain_gpt.py (GPTModelPipe precomputed mask, DS sequence parallel, NVTX ranges)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "explicit import before deepspeed/megatron (MindSpeed-style ports also add their adaptor here)"),
    C("device=torch.cuda.current_device())).view(", "torch_cuda_api", R, True,
      "(1, args.seq_length, args.seq_length), device=get_accelerator().current_device_name())).view(",
      "torch.cuda.current_device needs a CUDA build; the accelerator is already imported"),
    C('torch.cuda.nvtx.range_push("batch-generator")', "torch_cuda_api", R, True,
      'range_id = torch_npu.npu.mstx.range_start("batch-generator")',
      "torch.cuda.nvtx is not aliased by torch_npu and raises without a CUDA build (mstx method names unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()  # batch-generator", "torch_cuda_api", R, True,
      "torch_npu.npu.mstx.range_end(range_id)", "same as range_push"),
])

E("megatron_ds_fused_kernels", "megatron/fused_kernels/__init__.py", "explicit_replacement",
  "microsoft/Megatron-DeepSpeed megatron/fused_kernels/__init__.py (JIT cpp_extension.load of fused softmax / "
  "mixed-precision layernorm, ROCm branch)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", X, False, None,
      "CUDA arch list is meaningless on Ascend (harmless)"),
    C("_, bare_metal_major, bare_metal_minor = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)",
      "custom_cuda_extension", B, True,
      "if get_accelerator().device_name() == 'npu': return  # fused softmax/layernorm from torch_npu (npu_scaled_masked_softmax)",
      "CUDA_HOME is None on an NPU host: probing nvcc raises before anything is built"),
    C("return cpp_extension.load(", "custom_cuda_extension", R, True,
      "return None  # no nvcc on Ascend; use torch_npu.npu_scaled_masked_softmax / npu_layer_norm paths",
      "cpp_extension.load is marked unsupported on A2/A3 and the sources are .cu files"),
])

E("colossal_llama_benchmark", "examples/language/llama/benchmark.py", "device_branch_or_abstraction",
  "hpcaitech/ColossalAI examples/language/llama/benchmark.py (Gemini / HybridParallel / FSDP plugins, HybridAdam)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "get_accelerator().synchronize()",
      "torch.cuda.synchronize needs a CUDA build; ColossalAI's accelerator is already imported"),
    C("torch.cuda.synchronize()  # wait for backward + step", "torch_cuda_api", R, True,
      "get_accelerator().synchronize()", "same"),
    C("torch.cuda.manual_seed(42)", "torch_cuda_api", R, False, "get_accelerator().manual_seed(42)",
      "lazily queued and harmless without CUDA, but the NPU generator stays unseeded"),
    C("optimizer = HybridAdam(model.parameters())", "fused_optimizer", R, False,
      "optimizer = HybridAdam(model.parameters())  # or torch_npu.optim.NpuFusedAdamW when params stay on device",
      "unconfirmed: HybridAdam's on-device step uses ColossalAI's fused_optim CUDA kernel; NPU availability not confirmed"),
    C("torch.cuda.max_memory_allocated()/1024**2", "torch_cuda_api", R, True,
      'coordinator.print_on_master(f"Booster init max NPU memory: {get_accelerator().max_memory_allocated()/1024**2:.2f} MB")',
      "needs a CUDA build"),
])

E("rwkv6_wkv_op", "src/wkv6_op.py", "kernel_rewrite",
  "BlinkDL/RWKV-LM RWKV-v5/src/model.py x060 time-mix with the JIT-loaded wkv6 CUDA kernel", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "NPU device support"),
    C("wkv6_cuda = load(", "custom_cuda_extension", R, True,
      "wkv6_op = None  # no nvcc on Ascend: chunked torch WKV6 (or triton-ascend / AscendC kernel) instead",
      "cpp_extension.load of .cu sources is unsupported on A2/A3; fails at import"),
    C("wkv6_cuda.forward(B, T, C, H, r, k, v, ew, u, y)", "custom_cuda_extension", R, True,
      "y = wkv6_chunked_torch(r, k, v, ew, u, H)", "call site of the CUDA kernel"),
    C('gr = torch.empty((B, T, C), device="cuda"', "device_type", R, True,
      'gr = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16,',
      "hard-coded CUDA device"),
    C('gk = torch.empty((B, T, C), device="cuda"', "device_type", R, True,
      'gk = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16,',
      "hard-coded CUDA device"),
    C('gv = torch.empty((B, T, C), device="cuda"', "device_type", R, True,
      'gv = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16,',
      "hard-coded CUDA device"),
    C('gw = torch.empty((B, T, C), device="cuda"', "device_type", R, True,
      'gw = torch.empty((B, T, C), device=gy.device, requires_grad=False, dtype=torch.bfloat16,',
      "hard-coded CUDA device"),
    C("wkv6_cuda.backward(B, T, C, H, r, k, v, ew, u, gy, gr, gk, gv, gw, gu)", "custom_cuda_extension", R, True,
      "gr, gk, gv, gw, gu = wkv6_chunked_torch_backward(r, k, v, ew, u, gy, H)", "call site of the CUDA kernel"),
])

E("vllm_offline_batch", "scripts/vllm_batch_infer.py", "explicit_replacement",
  "vLLM offline batch generation script as shipped in Qwen/Yi/DeepSeek repos (LLM + SamplingParams over jsonl)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* is called before vLLM (vllm-ascend) loads torch_npu itself"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "device selection on Ascend is ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not honoured"),
    C('os.environ.setdefault("NCCL_P2P_DISABLE", "1")', "env_var", X, False, None,
      "NCCL-only knob, ignored by HCCL (harmless)"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info()", "needs a CUDA build"),
    C("tp = torch.cuda.device_count()", "torch_cuda_api", R, True, "tp = torch.npu.device_count()",
      "returns 0 without CUDA -> tensor_parallel_size=0 is rejected"),
    C('choices=[None, "awq", "gptq", "fp8"]', "unsupported_op_workaround", R, False,
      'p.add_argument("--quantization", default=None, choices=[None, "ascend"])',
      "unconfirmed: vllm-ascend serves msModelSlim (w8a8/w4a8) weights via quantization='ascend'; AWQ/GPTQ/FP8 "
      "kernels are CUDA ones"),
])

E("openai_api_server", "openai_api.py", "explicit_replacement",
  "THUDM/ChatGLM3 / QwenLM openai_api.py (FastAPI + sse_starlette streaming, torch_gc on cuda:0)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device strings need torch_npu"),
    C('DEVICE = "cuda"', "device_type", R, True, 'DEVICE = "npu"',
      "feeds device_map and every input .to(CUDA_DEVICE)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "False on NPU: the cache release is silently skipped (no failure, memory just not returned)"),
    C("with torch.cuda.device(CUDA_DEVICE):", "torch_cuda_api", R, False, "with torch.npu.device(CUDA_DEVICE):",
      "inside the guard above"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "inside the guard"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", R, False, "torch.npu.ipc_collect()", "inside the guard"),
])

E("glm_rotary_jit", "model/rotary_embedding.py", "explicit_replacement",
  "THUDM GLM / ChatGLM-6B / CPM-Bee rotary embedding (2D GLM positions, TorchScript helpers, ChatGLM2 rope cache)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "needed for .npu() in the self-test"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major = 8 if torch.npu.is_bf16_supported() else 7",
      "reached for bf16 models (the usual Ascend dtype); get_device_capability needs CUDA / returns None under torch_npu"),
    C("q, k = (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)", "npu_fused_op", R, False,
      "q, k = torch_npu.npu_rotary_mul(q, cos, sin), torch_npu.npu_rotary_mul(k, cos, sin)",
      "fused RoPE (performance only; the TorchScript helper itself is supported)"),
    C("q = torch.randn(128, 2, 32, 128, dtype=torch.half).cuda()", "tensor_to_device", R, True,
      "q = torch.randn(128, 2, 32, 128, dtype=torch.half).npu()", ".cuda() without CUDA"),
    C("k = torch.randn(128, 2, 32, 128, dtype=torch.half).cuda()", "tensor_to_device", R, True,
      "k = torch.randn(128, 2, 32, 128, dtype=torch.half).npu()", ".cuda() without CUDA"),
    C(".unsqueeze(0).repeat(2, 1, 1).cuda()", "tensor_to_device", R, True,
      "pos = torch.stack([torch.arange(128), torch.zeros(128, dtype=torch.long)]).unsqueeze(0).repeat(2, 1, 1).npu()",
      ".cuda() without CUDA"),
    C("rot = GLM2DRotary(128).cuda()", "tensor_to_device", R, True, "rot = GLM2DRotary(128).npu()",
      ".cuda() without CUDA"),
])

E("rmsnorm_apex_triton", "llm_train/ops/rmsnorm.py", "device_branch_or_abstraction",
  "InternLM-train / flash-attention ops RMSNorm: apex FusedRMSNorm, Triton fwd/bwd kernels, torch fallback", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "npu_rms_norm and the npu device"),
    C("num_warps = min(max(BLOCK_SIZE // 256, 1), 8)", "triton_kernel_tuning", R, False,
      "num_warps = 1  # triton-ascend: warps are not an Ascend concept; tune BLOCK_SIZE / grid instead",
      "only on the Triton path, which the is_cuda guard keeps off NPU; unconfirmed triton-ascend tuning"),
    C('if HAS_APEX and RMSNORM_BACKEND in ("auto", "apex"):', "npu_fused_op", B, True,
      'if x.device.type == "npu": return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]',
      "Ascend's apex patch imports fine (HAS_APEX=True) but has no fused_layer_norm_cuda, so the apex branch "
      "raises on first forward; npu_rms_norm is the fused replacement"),
    C('norm = RMSNorm(hidden, device="cuda", dtype=dtype)', "device_type", R, True,
      'norm = RMSNorm(hidden, device="npu", dtype=dtype)', "hard-coded CUDA device"),
    C('x = torch.randn(tokens, hidden, device="cuda"', "device_type", R, True,
      'x = torch.randn(tokens, hidden, device="npu", dtype=dtype, requires_grad=True)', "hard-coded CUDA device"),
    C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R,
      True, "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "CUDA events need a CUDA build"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
])

E("dschat_ppo_main", "training/step3_rlhf_finetuning/main.py", "explicit_replacement",
  "deepspeedai/DeepSpeedExamples DeepSpeed-Chat step3_rlhf_finetuning/main.py (pre-accelerator-abstraction version)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* and the npu device"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA; NPU generators otherwise unseeded"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "single-process path sends batches to CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "needs a CUDA build"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", R, True,
      'device = torch.device("npu", args.local_rank)', "batches sent to CUDA"),
    C('deepspeed.init_distributed(dist_backend="nccl")', "dist_backend", R, True,
      'deepspeed.init_distributed(dist_backend="hccl")', "NCCL is not available on Ascend; HCCL is"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", R, True,
      'f"mem {torch.npu.max_memory_allocated() / 1e9:.1f}GB", args.global_rank)', "needs a CUDA build"),
])

E("sft_data_preprocess", "tools/preprocess_sft_data.py", "explicit_replacement",
  "CPU-only SFT data packer of the kind shipped with Qwen / Yi / InternLM training repos (near-miss file: "
  "mentions GPUs and cuda, changes nothing)", [])

E("ceval_cmmlu_eval", "eval/evaluate_chinese_mc.py", "explicit_replacement",
  "QwenLM/Qwen eval/evaluate_ceval.py + evaluate_cmmlu.py (next-token A/B/C/D probabilities, device_map='auto')", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device for the input tensors"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "harmless without CUDA (greedy scoring, no sampling)"),
    C('input_ids = torch.tensor(input_ids, device="cuda")', "device_type", R, True,
      "input_ids = torch.tensor(input_ids, device=model.device)",
      "device_map='auto' puts the model on the NPU; inputs created on CUDA fail"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; cached NPU blocks are just not released between subjects"),
])

E("merge_lora_weights", "tools/merge_lora.py", "explicit_replacement",
  "LoRA merge tool as found in Baichuan2 / Firefly / LLaMA-Factory-era repos (shard-by-shard merge on the GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device and torch.npu.*"),
    C('state = load_file(st, device="cuda")', "device_type", R, True, 'state = load_file(st, device="npu")',
      "safetensors would place the adapter on a CUDA device"),
    C('map_location="cuda")', "device_type", R, True,
      'state = torch.load(os.path.join(lora_dir, "adapter_model.bin"), map_location="npu")',
      "map_location='cuda' fails on an NPU host"),
    C("w = shard[name].to(dtype).cuda(non_blocking=True)", "tensor_to_device", R, True,
      "w = shard[name].to(dtype).npu(non_blocking=True)", ".cuda() without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache then grows across shards"),
])

E("chat_web_demo", "web_demo.py", "device_branch_or_abstraction",
  "THUDM/ChatGLM2-6B web_demo.py (gradio streaming chat, cuda-or-cpu model placement, optional int4/int8)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device"),
    C("if torch.cuda.is_available():  # GPU: fp16 weights", "torch_cuda_api", B, True,
      "if torch.npu.is_available():  # NPU: fp16 weights",
      "False on an NPU host: the 6B model silently runs fp32 on CPU (unusably slow)"),
    C(".quantize(args.quantize).cuda()", "custom_cuda_extension", R, True,
      "model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).half().npu()  # quantize() needs cpm_kernels",
      "ChatGLM quantize() runs cpm_kernels CUDA kernels; plus .cuda()"),
    C("trust_remote_code=True).half().cuda()", "tensor_to_device", R, True,
      "model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).half().npu()",
      ".cuda() without CUDA (reached once the branch above is ported)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "guards only the cache release; silently skipped on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "inside the guard"),
])

E("minicpmv_vision_xformers", "minicpmv/vision_chat.py", "explicit_replacement",
  "OpenBMB/MiniCPM-V vision tower + resampler + chat() (xformers ViT attention, sdp_kernel, CUDA autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device / autocast"),
    C("import xformers.ops as xops", "attention_kernel", X, True, None,
      "xformers has no NPU backend; unguarded import fails"),
    C("out = xops.memory_efficient_attention(q, k, v, attn_bias=attn_bias,", "attention_kernel", R, True,
      "out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=attn_bias, dropout_p=self.attn_drop if self.training else 0.0, scale=self.scale).transpose(1, 2)",
      "SDPA dispatches to NPU fused attention (BNSD layout)"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", R, True,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported (✘) in Ascend's API list"),
    C('inputs = self.processor(msgs, [image], return_tensors="pt").to("cuda")', "device_type", R, True,
      'inputs = self.processor(msgs, [image], return_tensors="pt").to("npu")', "inputs sent to CUDA"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast does not cover NPU tensors: the vision tower runs in the weights' dtype instead of bf16"),
])

E("generate_benchmark_profiler", "tools/benchmark_generate.py", "explicit_replacement",
  "prefill/decode benchmark script of the kind shipped with InternLM / Qwen / lmdeploy (CUDA events, NVTX, "
  "torch.profiler, mem_get_info)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* / torch_npu.profiler"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF"', "env_var", R, False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "the NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments supported)"),
    C('p.add_argument("--attn", default="flash_attention_2"', "attention_kernel", R, True,
      'p.add_argument("--attn", default="sdpa", choices=["eager", "sdpa", "flash_attention_2"])',
      "default needs the flash-attn package, which cannot be installed on Ascend"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("torch.cuda.nvtx.range_push(tag)", "torch_cuda_api", R, True,
      "range_id = torch_npu.npu.mstx.range_start(tag)",
      "torch.cuda.nvtx is not aliased and raises without CUDA (with --nvtx); mstx method names unconfirmed"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "same"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "needs a CUDA build"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      '"peak_alloc_gib": round(gib(torch.npu.max_memory_allocated()), 2),', "needs a CUDA build"),
    C('attn_implementation=args.attn).to("cuda:0").eval()', "device_type", R, True,
      'attn_implementation=args.attn).to("npu:0").eval()', "model sent to CUDA"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "free, total = torch.npu.mem_get_info()",
      "needs a CUDA build"),
    C('print(f"{torch.cuda.get_device_name()}', "torch_cuda_api", R, True,
      'print(f"{torch.npu.get_device_name()} | free {gib(free):.1f} / {gib(total):.1f} GiB after load")',
      "needs a CUDA build"),
    C("prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", R, False,
      "prof = torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "runs but records no device kernels on NPU; torch_npu.profiler gives NPU traces"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False, "except (torch.OutOfMemoryError, RuntimeError):",
      "unconfirmed whether torch_npu raises NPU OOM as torch.OutOfMemoryError; otherwise the sweep crashes instead of stopping"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C('"device": torch.cuda.get_device_name()', "torch_cuda_api", R, True,
      'json.dump({"model": args.model, "device": torch.npu.get_device_name(), "dtype": args.dtype,',
      "needs a CUDA build"),
])

E("ds_zero3_config", "configs/ds_z3_config.json", "explicit_replacement",
  "DeepSpeed ZeRO-3 ds_config as shipped with Chinese LLM SFT/RLHF repos (HF 'auto' values, fp16, hybrid engine)", [
    C('="enabled": true,', "amp", R, False, '"enabled": false,',
      "fp16 block: Ascend training recipes normally run bf16 (no loss scaling, fewer overflow issues); fp16 still runs"),
    C('="enabled": false', "amp", R, False, '"enabled": true',
      "bf16 block, switched on together with fp16 off"),
    C('="enabled": true', "distributed_framework", R, False, '"enabled": false',
      "hybrid_engine: unconfirmed on NPU; it relies on DeepSpeed inference kernels built for CUDA"),
])

E("sft_multinode_launch", "scripts/run_sft_ds_multinode.sh", "explicit_replacement",
  "multi-node DeepSpeed SFT launcher from Yi / Baichuan2 / Firefly-style repos (hostfile heredoc, NCCL IB tuning, "
  ".deepspeed_env, nvidia-smi pre-flight)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "device visibility on Ascend is ASCEND_RT_VISIBLE_DEVICES"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "the NPU allocator reads its own variable"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only; ignored by HCCL"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", X, False, None,
      "NCCL-only; HCCL uses the NPU RoCE ports configured with hccn_tool"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=bond0",
      "HCCL's host-NIC choice for the root-info exchange; needed when the default NIC cannot reach the master"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging knob; CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_CONNECT_TIMEOUT=1200",
      "NCCL-only; on Ascend multi-node runs usually raise HCCL_CONNECT_TIMEOUT instead"),
    C("=NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", X, False, None, "forwarded NCCL-only variable"),
    C("=NCCL_SOCKET_IFNAME=bond0", "env_var", R, False, "HCCL_SOCKET_IFNAME=bond0", "forwarded to every node"),
    C("=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "forwarded to every node"),
    C('nvidia-smi --query-gpu=index,name,memory.used', "torch_cuda_api", R, True,
      'ssh "${host}" "npu-smi info" | tee -a logs/npu_check.log',
      "nvidia-smi does not exist on Ascend nodes; with set -e -o pipefail the launcher aborts"),
])

E("llm_sft_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a Chinese LLM fine-tuning/serving repo pinned to cu121 wheels and CUDA kernel packages", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on the CPU torch wheel (x86) / plain PyPI torch (aarch64); cu121 wheels are CUDA builds"),
    C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0  # plus torch-npu==2.1.0.post12",
      "torch_npu wheels pair with an exact torch version (2.1.0 for the 2.1 line); torch-npu must be added"),
    C("torchvision==0.16.2+cu121", "import_torch_npu", R, True, "torchvision==0.16.0",
      "CUDA build; torchvision 0.16.0 pairs with torch 2.1.0 (torchvision_npu for its ops)"),
    C("flash-attn==2.5.3", "attention_kernel", X, True, None, "cannot be built or installed on Ascend"),
    C("xformers==0.0.23.post1", "attention_kernel", X, True, None, "no NPU backend; wheel pins a CUDA torch"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "upstream Triton has no Ascend backend; triton-ascend is the NPU build"),
    C("bitsandbytes==0.42.0", "unsupported_op_workaround", R, False,
      "bitsandbytes  # multi-backend build with Ascend NF4 support",
      "unconfirmed: 0.42 is CUDA-only; Ascend NF4 arrived in the multi-backend work"),
    C("auto-gptq==0.7.0", "custom_cuda_extension", X, False, None,
      "unconfirmed install behaviour without CUDA; its kernels are CUDA-only (Qwen-VL Q-LoRA path)"),
    C("cpm_kernels==1.0.11", "custom_cuda_extension", X, False, None,
      "installs, but its kernels are CUDA cubins used only by ChatGLM quantize()"),
    C("grouped_gemm @ git+https://github.com/tgale96/grouped_gemm@main", "custom_cuda_extension", X, True, None,
      "CUTLASS extension: the build needs nvcc; replaced by torch_npu.npu_grouped_matmul"),
    C("apex @ git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, False,
      "apex  # Ascend/apex patch build (scripts/build.sh)",
      "NVIDIA apex installs python-only but its fused kernels are absent on NPU; Ascend's apex patch provides NPU amp/optimizers"),
    C("vllm==0.3.2", "distributed_framework", R, True, "vllm  # + vllm-ascend of the same release (e.g. v0.13.0)",
      "the CUDA vllm wheel pins a CUDA torch and xformers; Ascend serving uses vllm + the vllm-ascend plugin"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None,
      "NVML has no Ascend counterpart in torch_npu (npu-smi / torch.npu.mem_get_info instead)"),
])
