"""Labels for probe156: Chinese open LLMs (DeepSeek-V2/V3, GLM, Baichuan2, MiniCPM(-V), Yi, Qwen2-MoE)
modeling / inference / fine-tuning code, CUDA -> Ascend NPU (torch_npu).

Requiredness is judged for the file as a whole port: a line is `required` if, with every *other*
labelled line already ported, leaving this one unchanged fails on an NPU host, computes something
wrong, or silently does the wrong thing. Performance-only rewrites, silent no-ops (e.g.
torch.cuda.empty_cache() on a host without CUDA) and claims not confirmed in /work/shared/knowledge
are `required: False`.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# DeepSeek-V3 inference (deepseek-ai/DeepSeek-V3 inference/)
# ---------------------------------------------------------------------------------------------

E("dsv3_kernel", "inference/kernel.py", "kernel_rewrite",
  "DeepSeek-V3 inference/kernel.py (Triton act_quant / weight_dequant / fp8_gemm)", [
    C("y = torch.empty_like(x, dtype=torch.float8_e4m3fn)", "unsupported_op_workaround", "replace", False,
      "y = torch.empty_like(x, dtype=torch.int8)",
      "FP8 (e4m3) activations: FP8 storage/compute on Atlas A2/A3 is not confirmed in the knowledge base; NPU ports "
      "usually quantise to int8 instead (scale 127, torch_npu.npu_dynamic_quant) - unconfirmed"),
    C("grid = lambda meta: (triton.cdiv(M, meta['BLOCK_SIZE']), triton.cdiv(N, meta['BLOCK_SIZE']))",
      "triton_kernel_tuning", "replace", False,
      "grid = lambda meta: (min(triton.cdiv(M, meta['BLOCK_SIZE']) * triton.cdiv(N, meta['BLOCK_SIZE']), num_vector_cores),)",
      "triton-ascend: one program per 128x128 tile is a GPU launch shape; on Ascend launch about one program per "
      "vector core and loop over tiles inside the kernel (performance)"),
    C("Config({'BLOCK_SIZE_M': block_m, 'BLOCK_SIZE_N': block_n, 'BLOCK_SIZE_K': 128}, num_stages=num_stages, num_warps=8)",
      "triton_kernel_tuning", "replace", False,
      "Config({'BLOCK_SIZE_M': block_m, 'BLOCK_SIZE_N': block_n, 'BLOCK_SIZE_K': 128})",
      "num_warps / num_stages are Hopper scheduling knobs tuned on H800; retune the autotune space for triton-ascend "
      "(performance)"),
    C("fp8_gemm_kernel[grid](a, b, c, a_s, b_s, M, N, K)", "npu_fused_op", "replace", False,
      "c = torch_npu.npu_quant_matmul(a, b.t(), b_s, pertoken_scale=a_s, output_dtype=torch.bfloat16)",
      "tl.dot on FP8 operands needs FP8 cube support (unconfirmed on A2/A3); the NPU route is an int8 "
      "npu_quant_matmul with re-quantised weights or the bf16 path (gemm_impl='bf16') - unconfirmed"),
])

E("dsv3_model", "inference/model.py", "explicit_replacement",
  "DeepSeek-V3 inference/model.py (MLA, grouped top-k Gate, MoE, Transformer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the __main__ smoke test sets the default device to npu (and the ported RMSNorm calls torch_npu); "
      "torch 2.4 has no torch_npu autoload"),
    C("return F.rms_norm(x, (self.dim,), self.weight, self.eps)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "fused RMSNorm kernel on NPU (performance only)"),
    C("indices = torch.topk(scores, self.topk, dim=-1)[1]", "npu_fused_op", "replace", False,
      "weights, indices, _ = torch_npu.npu_moe_gating_top_k(logits, k=self.topk, bias=self.bias, k_group=self.topk_groups, group_count=self.n_groups, routed_scaling_factor=self.route_scale)",
      "group-limited top-k routing maps to the fused npu_moe_gating_top_k op (performance only)"),
    C("for i in range(self.experts_start_idx, self.experts_end_idx):", "npu_fused_op", "replace", False,
      "y = self.grouped_experts_npu(x, weights, indices)  # npu_moe_init_routing + npu_grouped_matmul",
      "per-expert Python loop with a host sync (bincount().tolist()); grouped matmul on NPU (performance only)"),
    C("Linear.dtype = torch.float8_e4m3fn if args.dtype == \"fp8\" else torch.bfloat16",
      "unsupported_op_workaround", "replace", False,
      "Linear.dtype = torch.bfloat16  # NPU: serve the bf16 checkpoint produced by fp8_cast_bf16.py",
      "FP8 weights on Atlas A2/A3 not confirmed in the knowledge base; run the bf16-converted checkpoint - unconfirmed"),
    C("torch.set_default_device(\"cuda\")", "device_type", "replace", True,
      "torch.set_default_device(\"npu\")",
      "every factory call in the smoke test would try to allocate on CUDA"),
])

E("dsv3_generate", "inference/generate.py", "explicit_replacement",
  "DeepSeek-V3 inference/generate.py (torchrun launcher, interactive chat)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; registers the npu device and the hccl backend (torch 2.4, no autoload)"),
    C("tokens = torch.full((len(prompt_tokens), total_len), -1, dtype=torch.long, device=\"cuda\")",
      "device_type", "replace", True,
      "tokens = torch.full((len(prompt_tokens), total_len), -1, dtype=torch.long, device=\"npu\")",
      "hard-coded CUDA device string"),
    C("tokens[i, :len(t)] = torch.tensor(t, dtype=torch.long, device=\"cuda\")", "device_type", "replace", True,
      "tokens[i, :len(t)] = torch.tensor(t, dtype=torch.long, device=\"npu\")",
      "hard-coded CUDA device string"),
    C("finished = torch.tensor([False] * len(prompt_tokens), device=\"cuda\")", "device_type", "replace", True,
      "finished = torch.tensor([False] * len(prompt_tokens), device=\"npu\")",
      "hard-coded CUDA device string"),
    C("dist.init_process_group(\"nccl\")", "dist_backend", "replace", True,
      "dist.init_process_group(\"hccl\")",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device fails without CUDA; bind the rank to its NPU"),
    C("with torch.device(\"cuda\"):", "device_type", "replace", True,
      "with torch.device(\"npu\"):",
      "model (weights, kv caches, freqs_cis buffers) must be built on the NPU"),
])

E("dsv3_fp8_cast", "inference/fp8_cast_bf16.py", "explicit_replacement",
  "DeepSeek-V3 inference/fp8_cast_bf16.py (FP8 -> BF16 checkpoint conversion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; safetensors device='npu' needs the npu backend registered"),
    C("loaded_files[file_name] = load_file(file_path, device=\"cuda\")", "device_type", "replace", True,
      "loaded_files[file_name] = load_file(file_path, device=\"npu\")",
      "safetensors loads straight onto the CUDA device"),
    C("current_state_dict = load_file(safetensor_file, device=\"cuda\")", "device_type", "replace", True,
      "current_state_dict = load_file(safetensor_file, device=\"npu\")",
      "safetensors loads straight onto the CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is not released between shards (memory pressure only)"),
])

E("dsv3_requirements", "inference/requirements.txt", "explicit_replacement",
  "DeepSeek-V3 inference/requirements.txt", [
    C("torch==2.4.1", "import_torch_npu", "replace", True, "torch==2.4.0",
      "torch_npu wheels exist for 2.4.0 (2.4.0.postN), not 2.4.1; the torch-npu version must equal torch's"),
    C("triton==3.0.0", "triton_kernel_tuning", "replace", True, "triton-ascend==3.2.0",
      "upstream Triton has no Ascend backend; kernel.py needs triton-ascend"),
    C("safetensors==0.4.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.4.0.post4",
      "torch-npu pin (paired with torch 2.4.0)"),
])

# ---------------------------------------------------------------------------------------------
# DeepSeek-V2 (HF trust_remote_code)
# ---------------------------------------------------------------------------------------------

E("dsv2_modeling", "modeling_deepseek.py", "device_branch_or_abstraction",
  "DeepSeek-V2 modeling_deepseek.py (trust_remote_code; MLA, MoEGate group_limited_greedy, FA2)", [
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states.to(input_dtype), self.weight, self.variance_epsilon)[0]",
      "hand-written RMSNorm -> fused npu_rms_norm (performance only)"),
    C("for i, num_tokens in enumerate(tokens_per_expert):", "npu_fused_op", "replace", False,
      "outs = torch_npu.npu_grouped_matmul(...)  # one grouped GEMM per projection instead of the expert loop",
      "per-expert loop after a .cpu().numpy() sync; npu_grouped_matmul / npu_moe_init_routing on NPU (performance)"),
    C("target_dtype = torch.get_autocast_gpu_dtype()", "amp", "replace", False,
      "target_dtype = torch.npu.get_autocast_dtype()",
      "returns the CUDA autocast dtype; only reached in the FA2 class, which is dead on NPU unless that path is ported"),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "add_branch", False,
      "attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"TND\", scale=softmax_scale, keep_prob=1.0 - dropout, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), atten_mask=causal_mask, sparse_mode=3)[0]",
      "flash-attn cannot be installed on NPU; import is guarded by is_flash_attn_2_available() so the path is dead "
      "there - an NPU branch only buys speed over eager attention"),
    C("attn_output = flash_attn_func(", "attention_kernel", "add_branch", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"BSND\", scale=softmax_scale, keep_prob=1.0 - dropout, atten_mask=causal_mask, sparse_mode=3)[0]",
      "same as above for the unpadded path"),
])

E("dsv2_chat_hf", "scripts/chat_hf.py", "explicit_replacement",
  "DeepSeek-V2 README transformers chat example (device_map='sequential', max_memory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu.* below needs torch_npu"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host -> empty max_memory, model silently placed on CPU"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA (--bench path)"),
])

# ---------------------------------------------------------------------------------------------
# ChatGLM / GLM-4
# ---------------------------------------------------------------------------------------------

E("chatglm_modeling", "modeling_chatglm.py", "device_branch_or_abstraction",
  "GLM-4-9B modeling_chatglm.py (trust_remote_code; CoreAttention/SDPA/FA2)", [
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.eps)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(hidden_states, self.weight, self.eps)[0]",
      "hand-written RMSNorm -> fused npu_rms_norm (performance only)"),
    C("matmul_result = torch.baddbmm(", "unsupported_op_workaround", "replace", False,
      "matmul_result = torch.bmm(query_layer, key_layer.transpose(1, 2)) * (1.0 / self.norm_factor)",
      "msFmkTransplt precision advice: baddbmm may overflow on NPU in fp16; with beta=0 this is a scaled bmm "
      "(eager path only; SDPA is the default)"),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "add_branch", False,
      "attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_attention_heads_per_partition, \"TND\", actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout)[0]",
      "guarded flash-attn import; dead on NPU (sdpa is chosen) - NPU FA branch is optional"),
    C("attn_output = flash_attn_func(", "attention_kernel", "add_branch", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_attention_heads_per_partition, \"BSND\", atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout)[0]",
      "same as above"),
])

E("chatglm_quant", "quantization.py", "kernel_rewrite",
  "ChatGLM2/3-6B quantization.py (cpm_kernels, base64 fatbin, W8A16Linear)", [
    C("from cpm_kernels.kernels.base import LazyKernelCModule, KernelFunction, round_up",
      "custom_cuda_extension", "replace", False,
      "raise ImportError(\"cpm_kernels needs libcuda; NPU uses the torch int4 pack/unpack path\")",
      "guarded by try/except: on NPU the import fails, kernels=None with a warning; int8 still works"),
    C("with torch.cuda.device(weight.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(weight.device):",
      "torch.cuda.device rejects an npu device / has no CUDA runtime"),
    C("out = torch.empty(n, m, dtype=torch.int8, device=\"cuda\")", "device_type", "replace", True,
      "out = torch.empty(n, m, dtype=torch.int8, device=weight.device)",
      "hard-coded CUDA device string"),
    C("=stream = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "stream = torch.npu.current_stream()",
      "CUDA stream query fails without CUDA"),
    C("kernels.int4WeightCompression(", "custom_cuda_extension", "replace", True,
      "out = ((weight[:, 1::2] & 0x0F) << 4 | (weight[:, 0::2] & 0x0F)).to(torch.int8)",
      "CUDA kernel launched through cpm_kernels (kernels is None on NPU); pack the nibbles with torch ops"),
    C("kernels.int4WeightExtractionHalf if scale_list.dtype == torch.half else kernels.int4WeightExtractionBFloat16",
      "custom_cuda_extension", "replace", True,
      "None  # NPU: int4 weights are unpacked with torch ops below",
      "attribute access on kernels=None raises for every int4 model"),
    C("with torch.cuda.device(qweight.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(qweight.device):",
      "torch.cuda.device rejects an npu device / has no CUDA runtime"),
    C("out = torch.empty(n, m * (8 // source_bit_width), dtype=scale_list.dtype, device=\"cuda\")",
      "device_type", "replace", True,
      "out = torch.empty(n, m * (8 // source_bit_width), dtype=scale_list.dtype, device=qweight.device)",
      "hard-coded CUDA device string"),
    C("cur_stream = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "cur_stream = torch.npu.current_stream()",
      "CUDA stream query fails without CUDA"),
    C("=func(", "custom_cuda_extension", "replace", True,
      "out = unpack_int4_to(scale_list.dtype, qweight) * scale_list[:, None]  # or torch_npu.npu_weight_quant_batchmatmul in W8A16Linear",
      "int4 extraction kernel from the CUDA fatbin; rewrite with torch ops or the NPU W4A16/W8A16 matmul"),
    C("weight=layer.self_attention.query_key_value.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True, "weight=layer.self_attention.query_key_value.weight.to(torch.npu.current_device()),",
      "torch.cuda.current_device() raises without CUDA"),
    C("weight=layer.self_attention.dense.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True, "weight=layer.self_attention.dense.weight.to(torch.npu.current_device()),",
      "torch.cuda.current_device() raises without CUDA"),
    C("weight=layer.mlp.dense_h_to_4h.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True, "weight=layer.mlp.dense_h_to_4h.weight.to(torch.npu.current_device()),",
      "torch.cuda.current_device() raises without CUDA"),
    C("weight=layer.mlp.dense_4h_to_h.weight.to(torch.cuda.current_device()),", "torch_cuda_api",
      "replace", True, "weight=layer.mlp.dense_4h_to_h.weight.to(torch.npu.current_device()),",
      "torch.cuda.current_device() raises without CUDA"),
])

E("chatglm_utils", "utils.py", "explicit_replacement",
  "ChatGLM2/3 utils.py (auto_configure_device_map, load_model_on_gpus)", [
    C("model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().cuda()",
      "tensor_to_device", "replace", True,
      "model = AutoModel.from_pretrained(checkpoint_path, trust_remote_code=True, **kwargs).half().npu()",
      ".cuda() on the single-card path"),
])

E("chatglm_web_demo", "web_demo.py", "explicit_replacement",
  "ChatGLM2/3-6B web_demo.py (gradio, model.cuda(), quantize())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; .npu() needs torch_npu"),
    C("model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).quantize(args.quantize).cuda()",
      "tensor_to_device", "replace", True,
      "model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).quantize(args.quantize).npu()",
      ".cuda() after quantize()"),
    C("model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).cuda()", "tensor_to_device",
      "replace", True, "model = AutoModel.from_pretrained(args.model_path, trust_remote_code=True).npu()",
      ".cuda() on the default path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (memory only)"),
])

E("chatglm_api_server", "openai_api_demo/api_server.py", "explicit_replacement",
  "ChatGLM3 openai_api_demo/api_server.py (FastAPI, torch_gc, SentenceTransformer embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; SentenceTransformer(device='npu:0') and torch.npu.* need torch_npu"),
    C("DEVICE = \"cuda\"", "device_type", "replace", True, "DEVICE = \"npu\"",
      "feeds CUDA_DEVICE, used to place the embedding model"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on NPU host -> GC silently skipped (memory only)"),
    C("with torch.cuda.device(CUDA_DEVICE):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(CUDA_DEVICE):",
      "once the guard is ported this raises (cuda context with an npu device string)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (memory only)"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()",
      "torch.cuda.ipc_collect initialises CUDA and raises once the guard is ported"),
])

E("glm4_stress_test", "basic_demo/trans_stress_test.py", "explicit_replacement",
  "GLM-4 basic_demo/trans_stress_test.py (latency / throughput benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu.* below"),
    C("device = torch.device(f\"cuda:{args.num_gpu - 1}\" if torch.cuda.is_available() and args.num_gpu > 0 else \"cpu\")",
      "device_type", "replace", True,
      "device = torch.device(f\"npu:{args.num_gpu - 1}\" if torch.npu.is_available() and args.num_gpu > 0 else \"cpu\")",
      "falls back to cpu on an NPU host -> inputs on CPU while the model sits on NPU"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("print(f\"peak memory: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GiB\")", "torch_cuda_api",
      "replace", False, "print(f\"peak memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GiB\")",
      "reports 0 without CUDA (log only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("glm4_requirements", "basic_demo/requirements.txt", "explicit_replacement",
  "GLM-4 basic_demo/requirements.txt", [
    C("torch>=2.3.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post4",
      "torch-npu pin; torch itself must then resolve to the same version (2.3.1)"),
    C("bitsandbytes>=0.43.3 # INT4 Loading", "unsupported_op_workaround", "replace", False,
      "bitsandbytes  # multi-backend build with Ascend NPU NF4 support",
      "stock wheel is CUDA-only; NPU NF4 only in the multi-backend work (partial) - unconfirmed for this demo"),
    C("vllm>=0.5.4 # openai_api_server.py", "custom_cuda_extension", "replace", True,
      "vllm-ascend  # plus vllm built with VLLM_TARGET_DEVICE=empty",
      "the vllm wheel is a CUDA build; Ascend needs the vllm-ascend plugin"),
])

# ---------------------------------------------------------------------------------------------
# Baichuan2
# ---------------------------------------------------------------------------------------------

E("baichuan2_modeling", "modeling_baichuan.py", "device_branch_or_abstraction",
  "Baichuan2-7B modeling_baichuan.py (xformers fallback, sdp_kernel, NormHead)", [
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "hidden_states = torch_npu.npu_rms_norm(hidden_states, self.weight, self.variance_epsilon)[0]",
      "hand-written RMSNorm -> fused npu_rms_norm (performance only)"),
    C("attn_output = xops.memory_efficient_attention(", "attention_kernel", "add_branch", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"BSND\", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=query_states.device), 1), scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3)[0]",
      "xformers has no NPU backend; the import is guarded (xops=None) so training silently uses SDPA - add an NPU FA "
      "branch for training speed"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
      "unsupported_op_workaround", "replace", False, "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is marked unsupported in Ascend's 2.7.1 API list; all backends are enabled so "
      "it only selects defaults - effect on NPU SDPA unconfirmed"),
])

E("baichuan2_quantizer", "quantizer.py", "explicit_replacement",
  "Baichuan2 quantizer.py (bitsandbytes online int8 / nf4, offline int4 loader)", [
    C("self.data = self.data.cuda(device)", "tensor_to_device", "replace", False,
      "self.data = self.data.npu(device)",
      "only runs via the patched Params4bit.cuda(); NPU port loads with .to('npu') and needs a multi-backend "
      "bitsandbytes - unconfirmed"),
    C("self.quant_state[0] = self.quant_state[0].cuda(device)", "tensor_to_device", "replace", False,
      "self.quant_state[0] = self.quant_state[0].npu(device)", "as above"),
    C("self.quant_state[4][0] = self.quant_state[4][0].cuda(device)", "tensor_to_device", "replace", False,
      "self.quant_state[4][0] = self.quant_state[4][0].npu(device)", "as above"),
    C("self.quant_state[4][1][0] = self.quant_state[4][1][0].cuda(device)", "tensor_to_device", "replace", False,
      "self.quant_state[4][1][0] = self.quant_state[4][1][0].npu(device)", "as above"),
    C("self.quant_state[4][1][1] = self.quant_state[4][1][1].cuda(device)", "tensor_to_device", "replace", False,
      "self.quant_state[4][1][1] = self.quant_state[4][1][1].npu(device)", "as above"),
    C("self.quant_state[6] = self.quant_state[6].cuda(device)", "tensor_to_device", "replace", False,
      "self.quant_state[6] = self.quant_state[6].npu(device)", "as above"),
    C("out = bnb.matmul(x, self.weight, bias=self.bias, state=self.state)", "unsupported_op_workaround", "replace",
      False, "out = torch_npu.npu_weight_quant_batchmatmul(x, self.weight_int8.t(), self.weight_scale, bias=self.bias)",
      "LLM.int8 (MatmulLtState) is not listed for NPU in bitsandbytes; W8A16 via npu_weight_quant_batchmatmul - "
      "unconfirmed"),
])

E("baichuan2_finetune", "fine-tune/fine-tune.py", "transfer_to_npu",
  "Baichuan2 fine-tune/fine-tune.py (HF Trainer SFT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "HF Trainer picks the NPU itself (is_torch_npu_available); explicit import is the recommended belt-and-braces"),
])

E("baichuan2_ft_sh", "fine-tune/run_sft.sh", "explicit_replacement",
  "Baichuan2 fine-tune README deepspeed launch command", [
    C("=hostfile=\"\"", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment (libhccl/libascendcl, ASCEND_OPP_PATH) must be sourced before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on NPU; lists every card of an 8-NPU node so the effect is the same"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only knob; HCCL runs RDMA over the NPU's own RoCE NICs"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "host NIC selection for HCCL root-info exchange; matters only for multi-node runs"),
    C("--tf32 True", "device_capability_check", "replace", True, "--tf32 False",
      "TrainingArguments raises ('--tf32 requires Ampere or a newer GPU arch') when is_torch_tf32_available() is False"),
])

E("baichuan2_web_demo", "web_demo.py", "explicit_replacement",
  "Baichuan2 web_demo.py (streamlit, device_map='auto', quantize().cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; .npu() on the quantised path"),
    C("model = model.quantize(QUANT_BITS).cuda()", "tensor_to_device", "replace", True,
      "model = model.quantize(QUANT_BITS).npu()",
      ".cuda() on the quantised path"),
    C("if torch.backends.mps.is_available():", "torch_cuda_api", "add_branch", False,
      "elif torch.npu.is_available(): torch.npu.empty_cache()",
      "per-chunk cache release exists only for MPS; an NPU branch is optional (memory only)"),
])

# ---------------------------------------------------------------------------------------------
# MiniCPM / MiniCPM-V
# ---------------------------------------------------------------------------------------------

E("minicpmv_web_demo", "web_demo_2.5.py", "device_branch_or_abstraction",
  "MiniCPM-Llama3-V 2.5 web_demo_2.5.py (gradio, --device cuda/mps, accelerate multi-GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; 'npu' device string needs torch_npu"),
    C("parser.add_argument('--device', type=str, default='cuda', help='cuda or mps')", "device_type", "replace",
      True, "parser.add_argument('--device', type=str, default='npu', help='cuda, npu or mps')",
      "default device is CUDA"),
    C("assert device in ['cuda', 'mps']", "device_type", "replace", True,
      "assert device in ['cuda', 'npu', 'mps']",
      "rejects --device npu"),
])

E("minicpmv_finetune", "finetune/finetune.py", "transfer_to_npu",
  "MiniCPM-V finetune/finetune.py (HF Trainer + DeepSpeed, LoRA/QLoRA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "Trainer/accelerate detect the NPU themselves; explicit import recommended"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA (DeepSpeed runs always hit it)"),
    C("rank0_print(f\"peak GPU memory: {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB\")", "torch_cuda_api",
      "replace", False, "rank0_print(f\"peak NPU memory: {torch.npu.max_memory_reserved() / 2**30:.1f} GiB\")",
      "reports 0 without CUDA (log only)"),
])

E("minicpmv_finetune_sh", "finetune/finetune_ds.sh", "explicit_replacement",
  "MiniCPM-V finetune/finetune_ds.sh (torchrun + DeepSpeed ZeRO-2)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on NPU: the 4 ranks silently land on NPUs 0-3 instead of 4-7"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA hardware-queue knob; no effect on NPU"),
])

E("minicpm_hf_demo", "demo/hf_based_demo.py", "explicit_replacement",
  "MiniCPM demo/hf_based_demo.py (gradio streaming chat)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; 'npu:0' device strings need torch_npu"),
    C("device_map=\"cuda:0\"", "device_type", "replace", True,
      "model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch_dtype, device_map=\"npu:0\", trust_remote_code=True)",
      "hard-coded CUDA device map"),
    C("enc = tokenizer(inputs, return_tensors=\"pt\").to(\"cuda\")", "tensor_to_device", "replace", True,
      "enc = tokenizer(inputs, return_tensors=\"pt\").to(model.device)",
      ".to('cuda') on the inputs"),
])

E("minicpm_modeling", "modeling_minicpm.py", "device_branch_or_abstraction",
  "MiniCPM-2B modeling_minicpm.py (trust_remote_code; jit rms_layernorm, FA2/SDPA)", [
    C("hidden = (hidden * torch.rsqrt(variance + eps)).to(old_dtype)", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(hidden, weight, eps)[0]",
      "hand-written (scripted) RMSNorm -> fused npu_rms_norm (performance only)"),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "add_branch", False,
      "attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"TND\", actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout_rate)[0]",
      "bare try/except flash-attn import; FA2 class unused on NPU (sdpa/eager) - optional NPU FA branch"),
    C("attn_output = flash_attn_func(", "attention_kernel", "add_branch", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"BSND\", atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout_rate)[0]",
      "same as above"),
])

E("minicpm_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a MiniCPM inference / fine-tune setup", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "NVIDIA conda channel only serves CUDA packages"),
    C("- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
      "torch_npu is built for torch 2.1.0 (2.1.0.postN); 2.1.2 has no torch_npu"),
    C("- pytorch-cuda=12.1", "import_torch_npu", "removal", True, None,
      "pulls the CUDA build of pytorch (unavailable/unusable on an Ascend aarch64 host)"),
    C("- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.16.2 pins torch 2.1.2; must follow the torch downgrade"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "torch-npu pin paired with torch 2.1.0"),
    C("- flash-attn==2.5.2", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed without CUDA"),
    C("- vllm==0.3.2", "custom_cuda_extension", "removal", True, None,
      "CUDA build of vLLM; Ascend serving goes through vllm-ascend with its own torch/torch-npu pins"),
])

# ---------------------------------------------------------------------------------------------
# Yi
# ---------------------------------------------------------------------------------------------

E("yi_sft_main", "finetune/sft/main.py", "explicit_replacement",
  "Yi finetune/sft/main.py (DeepSpeed-Chat step-1 SFT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.device('npu', r) is built before deepspeed.init_distributed() gets to import torch_npu"),
    C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
      "hard-coded CUDA device (single-process path)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("device = torch.device(\"cuda\", args.local_rank)", "device_type", "replace", True,
      "device = torch.device(\"npu\", args.local_rank)", "hard-coded CUDA device (distributed path)"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
      "without an NPU pin_memory_device the loader may skip pinning (CUDA unavailable) - performance, unconfirmed"),
    C("AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam", "fused_optimizer", "replace", False,
      "AdamOptimizer = DeepSpeedCPUAdam if args.offload else torch_npu.optim.NpuFusedAdamW",
      "DeepSpeed's FusedAdam is a CUDA op builder; NPU op-builder coverage unconfirmed (default run uses --offload)"),
])

E("yi_utils", "finetune/utils/utils.py", "explicit_replacement",
  "Yi finetune/utils/utils.py (DeepSpeed-Chat helpers)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed on the previous line already seeds the NPU generator"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory report silently skipped on NPU (log only)"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info()",
      "raises once the guard above is ported"),
    C("f\"[{tag}] allocated={torch.cuda.memory_allocated() / 2**30:.2f}GB \"", "torch_cuda_api", "replace", False,
      "f\"[{tag}] allocated={torch.npu.memory_allocated() / 2**30:.2f}GB \"", "reports 0 without CUDA (log only)"),
    C("f\"reserved={torch.cuda.memory_reserved() / 2**30:.2f}GB \"", "torch_cuda_api", "replace", False,
      "f\"reserved={torch.npu.memory_reserved() / 2**30:.2f}GB \"", "reports 0 without CUDA (log only)"),
])

E("yi_sft_sh", "finetune/scripts/run_sft_Yi_6b.sh", "explicit_replacement",
  "Yi finetune/scripts/run_sft_Yi_6b.sh (deepspeed launcher)", [
    C("# Single node, 4 x A800-80G", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu loads"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging knob is ignored; HCCL/CANN logging is controlled by ASCEND_GLOBAL_LOG_LEVEL"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
      "CUDA-only debug switch (value is the default anyway)"),
])

E("yi_dockerfile", "Dockerfile", "explicit_replacement",
  "Yi Dockerfile (NGC PyTorch base image)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "NGC CUDA image; an Ascend build needs a CANN base image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; on Ascend the devices are usually passed at docker run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob"),
    C("ENV TORCH_CUDA_ARCH_LIST=\"8.0 8.6 8.9 9.0+PTX\"", "env_var", "removal", False, None,
      "only steers nvcc builds of CUDA extensions"),
    C("=WORKDIR /yi", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
      "the CANN base image carries no torch; install torch + torch-npu (the NGC image had CUDA torch)"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.3.3 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn build needs nvcc/CUDA"),
])

# ---------------------------------------------------------------------------------------------
# Qwen2-MoE
# ---------------------------------------------------------------------------------------------

E("qwen2moe_modeling", "modeling_qwen2_moe.py", "device_branch_or_abstraction",
  "transformers modeling_qwen2_moe.py (Qwen1.5-MoE; FA2 sliding window, sparse MoE block)", [
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", "replace",
      False, "return torch_npu.npu_rms_norm(hidden_states.to(input_dtype), self.weight, self.variance_epsilon)[0]",
      "hand-written RMSNorm -> fused npu_rms_norm (performance only)"),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "add_branch", False,
      "attn_output_unpad = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"TND\", actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout, scale=softmax_scale)[0]",
      "guarded flash-attn import; dead on NPU - optional NPU FA branch (sliding window would map to sparse_mode=4)"),
    C("attn_output = flash_attn_func(", "attention_kernel", "add_branch", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, \"BSND\", atten_mask=causal_mask, sparse_mode=3, keep_prob=1.0 - dropout, scale=softmax_scale)[0]",
      "same as above"),
    C("for expert_idx in range(self.num_experts):", "npu_fused_op", "replace", False,
      "final_hidden_states = self._npu_grouped_experts(hidden_states, routing_weights, selected_experts)  # npu_moe_init_routing + npu_grouped_matmul + npu_moe_finalize_routing",
      "60-expert Python loop; fused routing + grouped matmul on NPU (performance only)"),
    C("and attention_mask.device.type == \"cuda\"", "device_type", "replace", False,
      "and attention_mask.device.type in [\"cuda\", \"npu\"]",
      "fully-masked rows (left padding) are only unmasked for CUDA; whether NPU SDPA returns NaN for such rows is "
      "unconfirmed"),
])
