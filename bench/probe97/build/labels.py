# Labels for probe97: Triton kernel libraries for LLM training (Liger-Kernel / unsloth /
# flash-linear-attention / triton quantisation kernels), CUDA -> Ascend NPU (torch_npu).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


UB_NOTE = ("per-row block sized for GPU registers/SMEM; on Ascend a Triton block lives in the ~192 KB UB of one "
           "vector core, so large blocks risk 'ub overflow' at compile time - unconfirmed in knowledge (not in "
           "/work/shared/knowledge; triton-ascend docs only), performance/compile-risk only")
WARPS_NOTE = ("num_warps/num_stages are GPU (SM warp / cp.async pipelining) tuning knobs; Ascend vector cores have "
              "no warps - perf-only / autotune-space cleanup, effect on triton-ascend unconfirmed in knowledge")

# ----------------------------------------------------------------------------------------------
# Liger-Kernel style
# ----------------------------------------------------------------------------------------------
E("lk_utils", "src/liger_kernel/ops/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel ops/utils.py (calculate_settings, ensure_contiguous, amp_custom_fwd/bwd)", [
    C("=MAX_FUSED_SIZE = 65536", "triton_kernel_tuning", "replace", False,
      'MAX_FUSED_SIZE = 65536 if infer_device() != "npu" else 16384',
      UB_NOTE),
    C("num_warps = 32 if not is_hip() else 16", "triton_kernel_tuning", "replace", False,
      'num_warps = 32 if not (is_hip() or infer_device() == "npu") else 16',
      WARPS_NOTE),
    C('functools.partial(torch.amp.custom_fwd, device_type="cuda"),', "amp", "replace", True,
      "functools.partial(torch.amp.custom_fwd, device_type=infer_device()),",
      "custom_fwd bound to device_type='cuda' records/replays CUDA autocast state; on NPU the npu autocast "
      "state is ignored, so backward silently runs with the wrong autocast setting"),
    C('functools.partial(torch.amp.custom_bwd, device_type="cuda"),', "amp", "replace", True,
      "functools.partial(torch.amp.custom_bwd, device_type=infer_device()),",
      "pairs with custom_fwd: must use the npu device_type"),
    C("return torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd", "amp", "replace", False,
      "return torch.npu.amp.custom_fwd, torch.npu.amp.custom_bwd",
      "torch<2.4 branch; dead with the torch>=2.4 that current torch_npu wheels pair with (knowledge §1.2), "
      "edited only for completeness"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()",
      "torch.cuda.current_device() raises on an NPU-only host (no CUDA)"),
    C("return torch.cuda.get_device_properties(device).multi_processor_count", "torch_cuda_api", "replace", True,
      "return torch.npu.get_device_properties(device).vector_core_num",
      "NPU device properties only expose name/total_memory/L2_cache_size/cube_core_num/vector_core_num "
      "(TSV 2.7.1); there is no SM count"),
])

E("lk_device_utils", "src/liger_kernel/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel liger_kernel/utils.py (infer_device, transformers_version_dispatch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      'if importlib.util.find_spec("torch_npu") is not None: import torch_npu  # noqa: F401',
      "package-level device helper; torch_npu >= 2.5.1 autoloads, so the explicit import is recommended, not required"),
    C("if torch.cuda.is_available():  # Works for both Nvidia and AMD", "device_type", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "without an npu branch infer_device() returns 'cpu' on Ascend hosts: every test/benchmark/kernel call "
      "then runs Triton on CPU tensors"),
    C("return torch.cuda.get_device_properties(0).total_memory // (1024**3)", "torch_cuda_api", "add_branch", True,
      'elif device == "npu": return torch.npu.get_device_properties(0).total_memory // (1024**3)',
      "get_total_gpu_memory raises 'Unsupported device: npu' without the branch"),
])

E("lk_rms_norm", "src/liger_kernel/ops/rms_norm.py", "kernel_rewrite",
  "Liger-Kernel ops/rms_norm.py (Triton RMSNorm fwd/bwd with casting modes)", [
    C("sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count", "torch_cuda_api",
      "add_branch", False,
      'elif X.device.type == "npu": sm_count = torch.npu.get_device_properties(X.device).vector_core_num',
      "the cuda branch is skipped on NPU (device.type=='npu') and sm_count stays 1: correct but the whole "
      "backward reduction runs in one program - performance only"),
    C("Y, X, RSTD, BLOCK_SIZE, num_warps, casting_mode = rms_norm_forward(X, W, eps, offset, casting_mode)",
      "npu_fused_op", "add_branch", False,
      'if X.device.type == "npu" and casting_mode == "llama" and offset == 0.0: return torch_npu.npu_rms_norm(X, W, epsilon=eps)[0]',
      "optional: torch_npu.npu_rms_norm (knowledge §5) replaces the Triton kernel for the plain Llama case; "
      "needs its own backward wiring - performance only"),
])

E("lk_cross_entropy", "src/liger_kernel/ops/cross_entropy.py", "kernel_rewrite",
  "Liger-Kernel ops/cross_entropy.py (online-softmax CE with z-loss / label smoothing)", [
    C("MAX_FUSED_SIZE = 65536 // 2  # the best size we found by manually tuning", "triton_kernel_tuning",
      "replace", False,
      "MAX_FUSED_SIZE = 8192  # Ascend: keep one fp32 block inside a vector core's UB",
      UB_NOTE),
    C("=num_warps=32 if not is_hip() else 16,", "triton_kernel_tuning", "removal", False, None,
      WARPS_NOTE),
    C("num_warps=32 if not is_hip() else 16,  # same as the forward launch", "triton_kernel_tuning", "removal",
      False, None, WARPS_NOTE),
    C("loss, z_loss, _input = cross_entropy_forward(", "npu_fused_op", "add_branch", False,
      'if _input.device.type == "npu" and weight is None and softcap is None: loss, log_prob, _, _ = torch_npu.npu_cross_entropy_loss(_input, target, reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing)',
      "optional fused replacement (npu_cross_entropy_loss in the 2.7.1 custom-op list); the Triton kernel still "
      "works - performance only"),
])

E("lk_fused_linear_ce", "src/liger_kernel/ops/fused_linear_cross_entropy.py", "kernel_rewrite",
  "Liger-Kernel ops/fused_linear_cross_entropy.py (chunked lm_head + CE)", [
    C("=MAX_FUSED_SIZE = 65536 // 2", "triton_kernel_tuning", "replace", False,
      "MAX_FUSED_SIZE = 8192  # Ascend UB budget",
      UB_NOTE),
    C("=num_warps=32 if not is_hip() else 16,", "triton_kernel_tuning", "removal", False, None, WARPS_NOTE),
    C("num_warps=32 if not is_hip() else 16,  # grad_input", "triton_kernel_tuning", "removal", False, None,
      WARPS_NOTE),
    C("num_warps=32 if not is_hip() else 16,  # grad_weight", "triton_kernel_tuning", "removal", False, None,
      WARPS_NOTE),
    C("num_warps=32 if not is_hip() else 16,  # grad_bias", "triton_kernel_tuning", "removal", False, None,
      WARPS_NOTE),
])

E("lk_rope", "src/liger_kernel/ops/rope.py", "kernel_rewrite",
  "Liger-Kernel ops/rope.py (Triton RoPE over q/k heads)", [
    C("q, k, cos, sin = rope_forward(q, k, cos, sin)", "npu_fused_op", "add_branch", False,
      'if q.device.type == "npu": return torch_npu.npu_apply_rotary_pos_emb(q.transpose(1, 2), k.transpose(1, 2), cos.unsqueeze(2), sin.unsqueeze(2), layout="BSND")',
      "optional: torch_npu RoPE ops (npu_rotary_mul / npu_apply_rotary_pos_emb, knowledge §5) instead of the "
      "Triton kernel - performance only"),
])

E("lk_swiglu", "src/liger_kernel/ops/swiglu.py", "kernel_rewrite",
  "Liger-Kernel ops/swiglu.py (SiLU-mul Triton kernels)", [
])

E("lk_monkey_patch", "src/liger_kernel/transformers/monkey_patch.py", "device_branch_or_abstraction",
  "Liger-Kernel transformers/monkey_patch.py (apply_liger_kernel_to_llama & co.)", [
])

E("lk_bench_utils", "benchmark/scripts/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel benchmark/scripts/utils.py (_test_memory, get_gpu_name, CSV writer)", [
    C("torch.cuda.memory.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "getattr(torch, device).reset_peak_memory_stats()",
      "raises on an NPU host (CUDA never initialised)"),
    C("mem = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "mem = getattr(torch, device).max_memory_allocated() / 2**20",
      "returns 0 on an NPU host: the memory benchmark silently records 0 MB"),
])

E("lk_test_utils", "test/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel test/utils.py (set_seed, supports_bfloat16, assert_verbose_allclose)", [
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS determinism knob; no effect on Ascend"),
    C("torch.cuda.manual_seed_all(seed)  # if you are using multi-GPU.", "torch_cuda_api", "add_branch", False,
      'elif device == "npu": torch.npu.manual_seed_all(seed)',
      "cuda branch is skipped on NPU; torch.manual_seed already seeds the registered privateuse1 device "
      "(unconfirmed in knowledge), so the explicit npu seeding is belt-and-braces"),
    C("return torch.cuda.get_device_capability() >= (8, 0)  # Ampere and newer", "device_capability_check",
      "add_branch", True,
      'elif device == "npu": return torch.npu.is_bf16_supported()',
      "without the branch supports_bfloat16() is False on NPU and every bf16 test case is silently skipped"),
    C("total = torch.cuda.get_device_properties(0).total_memory / (1024**3) if device == \"cuda\" else 0",
      "torch_cuda_api", "replace", True,
      'total = getattr(torch, device).get_device_properties(0).total_memory / (1024**3) if device in ("cuda", "npu") else 0',
      "evaluates to 0 on NPU so every memory-gated test is silently skipped"),
])

E("lk_test_ce", "test/transformers/test_cross_entropy.py", "explicit_replacement",
  "Liger-Kernel test/transformers/test_cross_entropy.py", [
    C('=device = "cuda"', "device_type", "replace", True,
      "device = infer_device()",
      "all test tensors are created on 'cuda', which does not exist on an NPU host"),
    C("torch.cuda.get_device_properties(0).total_memory < 16 * 1000 * 1000 * 1000,", "torch_cuda_api", "replace",
      True, "torch.npu.get_device_properties(0).total_memory < 16 * 1000 * 1000 * 1000,",
      "evaluated at collection time: raises on an NPU host and errors the whole module"),
    C("=BLOCK_SIZE = 32768", "triton_kernel_tuning", "replace", False,
      "BLOCK_SIZE = 8192  # Ascend UB budget",
      UB_NOTE),
    C("=num_warps=32 if not is_hip() else 16,", "triton_kernel_tuning", "removal", False, None, WARPS_NOTE),
    C("num_warps=32 if not is_hip() else 16,  # float32 run", "triton_kernel_tuning", "removal", False, None,
      WARPS_NOTE),
])

E("lk_setup", "setup.py", "device_branch_or_abstraction",
  "Liger-Kernel setup.py (hardware-dependent install_requires via nvidia-smi / rocm-smi)", [
    C('if platform in ["cuda", "cpu"]:', "import_torch_npu", "add_branch", True,
      'if platform == "npu": return ["torch==2.7.1", "torch-npu==2.7.1", "triton-ascend==3.2.0"]',
      "Ascend needs torch_npu and triton-ascend instead of upstream triton (knowledge §1.2, §6)"),
    C('subprocess.run(["nvidia-smi"], check=True)', "device_type", "add_branch", True,
      'subprocess.run(["npu-smi", "info"], check=True); return "npu"',
      "an Ascend host is detected as 'cpu' and gets upstream triton, which has no Ascend backend"),
])

E("lk_lightning_train", "examples/lightning/training.py", "explicit_replacement",
  "Liger-Kernel examples/lightning/training.py (MMLU finetune with FSDP/DeepSpeed strategies)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "entry script; explicit import recommended (autoload since torch_npu 2.5.1)"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "pinning targets the CUDA host allocator by default; on NPU it is skipped/warned - performance only "
      "(unconfirmed in knowledge)"),
    C('accelerator="cuda",', "device_type", "replace", True,
      'accelerator="npu",  # needs an Ascend accelerator plugin for Lightning',
      "Lightning refuses accelerator='cuda' when CUDA is unavailable; replacement needs a third-party "
      "NPU accelerator registration (unconfirmed)"),
    C("devices=torch.cuda.device_count() if args.num_gpu is None else args.num_gpu,", "torch_cuda_api",
      "replace", True,
      "devices=torch.npu.device_count() if args.num_gpu is None else args.num_gpu,",
      "device_count() is 0 on an NPU host"),
    C("torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      'print(f"Peak memory on {device}: {torch.npu.max_memory_allocated() / 1024**3:.2f} GB")',
      "informational print only; reports 0 GB on NPU"),
])

# ----------------------------------------------------------------------------------------------
# unsloth style
# ----------------------------------------------------------------------------------------------
E("us_init", "unsloth/__init__.py", "explicit_replacement",
  "unsloth/__init__.py (env setup, GPU / bf16 checks, libcuda linking for bitsandbytes)", [
    C('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = \\', "env_var", "replace", False,
      'os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"',
      "CUDA caching-allocator config is ignored by torch_npu, which reads PYTORCH_NPU_ALLOC_CONF "
      "(expandable_segments supported, knowledge §1.6); memory-fragmentation only"),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", "replace", True,
      'if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:',
      "device-visibility logic must read the Ascend runtime variable"),
    C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None,
      "CUDA enumeration order; meaningless on Ascend"),
    C('devices = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'devices = os.environ["ASCEND_RT_VISIBLE_DEVICES"]',
      "same Ascend variable as the check above"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(first_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(first_id)',
      "the single-device restriction is silently a no-op on NPU unless ASCEND_RT_VISIBLE_DEVICES is set"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "same: CUDA_VISIBLE_DEVICES does not restrict NPU visibility"),
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "    import torch_npu",
      "package entry; autoload covers torch_npu >= 2.5.1, explicit import recommended"),
    C('del os.environ["PYTORCH_CUDA_ALLOC_CONF"]', "env_var", "replace", False,
      'os.environ.pop("PYTORCH_NPU_ALLOC_CONF", None)',
      "follows the allocator-variable rename above (torch 2.1 path)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      'if not (torch.cuda.is_available() or (hasattr(torch, "npu") and torch.npu.is_available())):',
      "raises NotImplementedError('No NVIDIA GPU found?') on every Ascend host"),
    C("major_version, minor_version = torch.cuda.get_device_capability()", "device_capability_check", "replace",
      True, "major_version, minor_version = (8, 0) if torch.npu.is_bf16_supported() else (7, 0)",
      "torch.cuda.get_device_capability raises without CUDA (and the NPU form returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set)"),
    C("old_is_bf16_supported = torch.cuda.is_bf16_supported", "device_capability_check", "replace", True,
      "old_is_bf16_supported = torch.npu.is_bf16_supported",
      "the CUDA query returns False on an NPU host, so the patched helper would force fp16"),
    C('os.system("ldconfig /usr/lib64-nvidia")', "custom_cuda_extension", "removal", False, None,
      "libcuda/bitsandbytes link probe is CUDA-only; on NPU it just runs ldconfig and warns - skip the block"),
])

E("us_kernels_utils", "unsloth/kernels/utils.py", "explicit_replacement",
  "unsloth/kernels/utils.py (calculate_settings, CUDA streams, bitsandbytes ctypes dequant, fast_gemv)", [
    C("=MAX_FUSED_SIZE : int = 65536", "triton_kernel_tuning", "replace", False,
      "MAX_FUSED_SIZE : int = 16384", UB_NOTE),
    C("torch_amp_custom_fwd = torch.cuda.amp.custom_fwd", "amp", "replace", False,
      "torch_amp_custom_fwd = torch.npu.amp.custom_fwd",
      "torch<2.4 branch, dead with torch_npu's torch>=2.4 pairing"),
    C("torch_amp_custom_bwd = torch.cuda.amp.custom_bwd", "amp", "replace", False,
      "torch_amp_custom_bwd = torch.npu.amp.custom_bwd",
      "torch<2.4 branch, dead with torch_npu's torch>=2.4 pairing"),
    C('torch_amp_custom_fwd = torch.amp.custom_fwd(device_type = "cuda")', "amp", "replace", True,
      'torch_amp_custom_fwd = torch.amp.custom_fwd(device_type = "npu")',
      "LoRA/MLP autograd functions would track CUDA autocast instead of NPU autocast"),
    C('torch_amp_custom_bwd = torch.amp.custom_bwd(device_type = "cuda")', "amp", "replace", True,
      'torch_amp_custom_bwd = torch.amp.custom_bwd(device_type = "npu")',
      "pairs with custom_fwd"),
    C("if   BLOCK_SIZE >= 32768: num_warps = 32", "triton_kernel_tuning", "replace", False,
      "if   BLOCK_SIZE >= 32768: num_warps = 8", WARPS_NOTE),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1:",
      "on multi-NPU hosts kernels must be launched under the tensor's device context; count is 0 via torch.cuda"),
    C("torch_cuda_device = torch.cuda.device", "torch_cuda_api", "replace", True,
      "torch_cuda_device = torch.npu.device",
      "torch.cuda.device context fails without CUDA"),
    C("_cuda_getCurrentRawStream = torch._C._cuda_getCurrentRawStream", "torch_cuda_api", "replace", True,
      "_cuda_getCurrentRawStream = lambda index: torch.npu.current_stream(index).npu_stream",
      "torch._C._cuda_* bindings do not exist in the CPU torch build used with torch_npu: import-time "
      "AttributeError"),
    C("(index := torch.cuda.device(i).idx) : ctypes.c_void_p(torch._C._cuda_getCurrentRawStream(index))",
      "torch_cuda_api", "replace", True,
      "(index := torch.npu.device(i).idx) : ctypes.c_void_p(_cuda_getCurrentRawStream(index))",
      "CUDA stream table built at import time"),
    C("for i in range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count())",
      "empty on NPU -> max() of an empty key set raises ValueError at import"),
    C("cdequantize_blockwise_fp32      = bnb.functional.lib.cdequantize_blockwise_fp32", "custom_cuda_extension",
      "replace", True, "cdequantize_blockwise_fp32 = getattr(bnb.functional.lib, \"cdequantize_blockwise_fp32\", None)",
      "CUDA C symbol from libbitsandbytes_cuda; absent in an Ascend bitsandbytes build (only NF4 via the "
      "multi-backend path, knowledge §6)"),
    C("cdequantize_blockwise_fp16_nf4  = bnb.functional.lib.cdequantize_blockwise_fp16_nf4",
      "custom_cuda_extension", "replace", True,
      "cdequantize_blockwise_fp16_nf4 = getattr(bnb.functional.lib, \"cdequantize_blockwise_fp16_nf4\", None)",
      "CUDA-only bitsandbytes kernel symbol"),
    C("cdequantize_blockwise_bf16_nf4  = bnb.functional.lib.cdequantize_blockwise_bf16_nf4",
      "custom_cuda_extension", "replace", True,
      "cdequantize_blockwise_bf16_nf4 = getattr(bnb.functional.lib, \"cdequantize_blockwise_bf16_nf4\", None)",
      "CUDA-only bitsandbytes kernel symbol"),
    C("cgemm_4bit_inference_naive_fp16 = bnb.functional.lib.cgemm_4bit_inference_naive_fp16",
      "custom_cuda_extension", "replace", True,
      "cgemm_4bit_inference_naive_fp16 = getattr(bnb.functional.lib, \"cgemm_4bit_inference_naive_fp16\", None)",
      "CUDA-only bitsandbytes gemv symbol"),
    C("cgemm_4bit_inference_naive_bf16 = bnb.functional.lib.cgemm_4bit_inference_naive_bf16",
      "custom_cuda_extension", "replace", True,
      "cgemm_4bit_inference_naive_bf16 = getattr(bnb.functional.lib, \"cgemm_4bit_inference_naive_bf16\", None)",
      "CUDA-only bitsandbytes gemv symbol"),
    C("if quant_state is None: return W", "custom_cuda_extension", "add_branch", True,
      'if W.device.type == "npu": return bnb.functional.dequantize_4bit(W, quant_state, out = out)',
      "call site of the CUDA ctypes dequant kernels (raw CUDA stream argument): needs the bitsandbytes Python "
      "path on NPU"),
    C("if quant_state is None: return torch_matmul(X, W, out = out)", "custom_cuda_extension", "add_branch", True,
      'if W.device.type == "npu": return torch_matmul(X, fast_dequantize(W.t(), quant_state), out = out)',
      "call site of the CUDA 4-bit gemv kernel"),
])

E("us_rope", "unsloth/kernels/rope_embedding.py", "kernel_rewrite",
  "unsloth/kernels/rope_embedding.py (Fast_RoPE_Embedding Triton kernel, grouped heads)", [
    C("Q = Fast_RoPE_Embedding.apply(Q.transpose(1, 2), cos, sin).transpose(1, 2)", "npu_fused_op", "add_branch",
      False,
      'if Q.device.type == "npu": return torch_npu.npu_rotary_mul(Q, cos, sin), torch_npu.npu_rotary_mul(K, cos, sin)',
      "optional fused RoPE (npu_rotary_mul, knowledge §5) - performance only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); the NPU cache is simply not trimmed"),
])

E("us_llama", "unsloth/models/llama.py", "explicit_replacement",
  "unsloth/models/llama.py (fast attention forward, KV-cache inference path, FastLlamaModel.from_pretrained)", [
    C("A = xformers_attention(Q, K, V, attn_bias = causal_mask)", "attention_kernel", "replace", True,
      'A = torch_npu.npu_fusion_attention(Q, K, V, n_heads, "BSND", atten_mask = torch.triu(torch.ones(2048, 2048, dtype = torch.bool, device = Q.device), 1), scale = 1.0 / math.sqrt(head_dim), sparse_mode = 3)[0]',
      "with flash-attn absent on NPU this is the default path, and xformers has no NPU operator "
      "(knowledge §6); the GQA reshape above must be skipped too"),
    C("gpu_stats = torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", True,
      "gpu_stats = torch.npu.get_device_properties(0)",
      "raises on an NPU host"),
    C("post_check = check_nvidia()", "device_capability_check", "replace", True,
      "post_check = check_nvidia() if torch.cuda.is_available() else None",
      "check_nvidia shells out to nvidia-smi and raises 'We do not support AMD / Intel machines' when CUDA "
      "is unavailable"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("us_pyproject", "pyproject.toml", "device_branch_or_abstraction",
  "unsloth pyproject.toml (cuXXX-torchYYY extras with pinned xformers wheels)", [
    C("=[project.optional-dependencies]", "import_torch_npu", "npu_only_addition", True,
      'npu-torch271 = ["unsloth[huggingface]", "torch==2.7.1", "torch-npu==2.7.1", "triton-ascend==3.2.0"]',
      "a new extra for Ascend with the torch-npu pin (knowledge §1.2) and triton-ascend; the CUDA extras stay"),
])

# ----------------------------------------------------------------------------------------------
# flash-linear-attention style
# ----------------------------------------------------------------------------------------------
E("fla_utils", "fla/utils.py", "device_branch_or_abstraction",
  "flash-linear-attention fla/utils.py (input_guard/contiguous, device detection, autocast_custom_fwd)", [
    C("ctx = torch.cuda.device(tensor.device.index)", "torch_cuda_api", "replace", True,
      "ctx = custom_device_ctx(tensor.device.index)",
      "every decorated op enters a CUDA device context: fails on NPU tensors"),
    C("return triton.runtime.driver.active.utils.get_device_properties(tensor_idx)['multiprocessor_count']",
      "triton_kernel_tuning", "replace", False,
      "return triton.runtime.driver.active.utils.get_device_properties(tensor_idx)['num_vectorcore']",
      "SM count from the Triton driver; triton-ascend reports num_aicore/num_vectorcore instead, so a KeyError "
      "is likely - unconfirmed in knowledge"),
    C("return torch.cuda.device(index)", "torch_cuda_api", "replace", False,
      "return device_torch_lib.device(index)",
      "torch<2.4 branch, dead with torch_npu's torch>=2.4 pairing"),
])

E("fla_chunk_gla", "fla/ops/gla/chunk.py", "kernel_rewrite",
  "flash-linear-attention fla/ops/gla/chunk.py (chunked GLA kernels with @triton.autotune)", [
    C("NUM_WARPS = [2, 4] if is_nvidia_hopper else [2, 4, 8]", "triton_kernel_tuning", "replace", False,
      "NUM_WARPS = [1] if device == 'npu' else ([2, 4] if is_nvidia_hopper else [2, 4, 8])", WARPS_NOTE),
    C("triton.Config({}, num_warps=num_warps, num_stages=num_stages)  # intra_sub_inter", "triton_kernel_tuning",
      "replace", False, "triton.Config({})  # intra_sub_inter", WARPS_NOTE),
    C("=triton.Config({}, num_warps=num_warps)", "triton_kernel_tuning", "replace", False,
      "triton.Config({})", WARPS_NOTE),
    C("triton.Config({'BK': BK, 'BV': BV}, num_warps=num_warps, num_stages=num_stages)", "triton_kernel_tuning",
      "replace", False, "triton.Config({'BK': BK, 'BV': BV})", WARPS_NOTE),
])

E("fla_fused_norm_gate", "fla/modules/fused_norm_gate.py", "kernel_rewrite",
  "flash-linear-attention fla/modules/fused_norm_gate.py (gated RMSNorm/LayerNorm Triton kernels)", [
    C("triton.Config({}, num_warps=num_warps, num_stages=num_stages)", "triton_kernel_tuning", "replace", False,
      "triton.Config({})", WARPS_NOTE),
    C("=triton.Config({}, num_warps=num_warps)", "triton_kernel_tuning", "replace", False,
      "triton.Config({})", WARPS_NOTE),
    C("=MAX_FUSED_SIZE = 65536 // x.element_size()", "triton_kernel_tuning", "replace", False,
      "MAX_FUSED_SIZE = 16384 // x.element_size()", UB_NOTE),
    C("MAX_FUSED_SIZE = 65536 // x.element_size()  # same budget as the forward", "triton_kernel_tuning",
      "replace", False, "MAX_FUSED_SIZE = 16384 // x.element_size()  # same budget as the forward", UB_NOTE),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(x.device.index):",
      "hard-coded CUDA device context around the backward launch fails on NPU"),
])

E("fla_bench", "benchmarks/ops/benchmark_gla.py", "explicit_replacement",
  "flash-linear-attention benchmarks/ops/benchmark_gla.py (triton.testing.perf_report)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "entry script; autoload since torch_npu 2.5.1"),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "all inputs are allocated on 'cuda'"),
    C("with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA picks its fused kernel itself",
      "forces the CUDA flash SDPA backend flags; torch.backends.cuda.sdp_kernel/enable_flash_sdp are "
      "unsupported on NPU (mstt list) - effect of the torch.nn.attention wrapper unconfirmed"),
    C('print(f"Running on {torch.cuda.get_device_name()} with torch {torch.__version__}")', "torch_cuda_api",
      "replace", True,
      'print(f"Running on {torch.npu.get_device_name()} with torch {torch.__version__}")',
      "raises on an NPU host before the benchmark runs"),
])

E("fla_test", "tests/ops/test_gla.py", "explicit_replacement",
  "flash-linear-attention tests/ops/test_gla.py (recurrent vs chunk GLA, varlen)", [
    C("], 0).cuda().sort()[0]", "tensor_to_device", "replace", True, "], 0).to(device).sort()[0]",
      ".cuda() fails on an NPU host"),
    C("q, k, v, g = map(lambda x: x.cuda().requires_grad_(True), (q, k, v, g))", "tensor_to_device", "replace",
      True, "q, k, v, g = map(lambda x: x.to(device).requires_grad_(True), (q, k, v, g))",
      ".cuda() fails on an NPU host"),
])

E("fla_env_yml", "environment.yml", "explicit_replacement",
  "flash-linear-attention style conda environment.yml", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None,
      "NVIDIA conda channel only serves CUDA packages"),
    C("- pytorch-cuda=12.4", "import_torch_npu", "removal", True, None,
      "selects the CUDA build of pytorch; torch_npu pairs with the CPU/aarch64 torch build (knowledge §1.1)"),
    C("- cuda-nvcc=12.4", "custom_cuda_extension", "removal", False, None,
      "nvcc is useless on Ascend (no CUDA extension path)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.5.1",
      "torch-npu pin matching pytorch=2.5.1 (knowledge §1.2)"),
    C("- triton>=3.1.0", "triton_kernel_tuning", "replace", True, "- triton-ascend==3.2.0",
      "upstream triton has no Ascend backend; fla's kernels need triton-ascend (knowledge §6)"),
    C("- causal-conv1d>=1.4.0", "custom_cuda_extension", "removal", True, None,
      "CUDA extension package; cannot be built without nvcc"),
    C("- flash-attn>=2.6.3", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU (knowledge §6)"),
])

# ----------------------------------------------------------------------------------------------
# Triton quantisation kernels
# ----------------------------------------------------------------------------------------------
E("q_fp8_utils", "vllm/model_executor/layers/quantization/utils/fp8_utils.py", "device_branch_or_abstraction",
  "vLLM / SGLang fp8_utils.py (per-token-group fp8 quant, w8a8 block-fp8 Triton matmul, JSON tuned configs)", [
    C("FP8_DTYPE = torch.float8_e4m3fnuz if _is_hip else torch.float8_e4m3fn", "unsupported_op_workaround",
      "replace", False,
      "FP8_DTYPE = torch.float8_e4m3fn  # Ascend A2/A3: no fp8 compute; route through int8 W8A8 instead",
      "no float8 kernels in the NPU native-op lists and A2/A3 have no fp8 units - real port swaps the scheme; "
      "unconfirmed in knowledge how fp8 tensors behave"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "if not current_platform.is_cuda(): return False",
      "raises without CUDA (NPU form returns None)"),
    C("num_warps = min(max(BLOCK // 256, 1), 8)", "triton_kernel_tuning", "replace", False,
      "num_warps = 1", WARPS_NOTE),
    C("=num_stages = 1", "triton_kernel_tuning", "removal", False, None, WARPS_NOTE),
    C('device_name = torch.cuda.get_device_name().replace(" ", "_")', "torch_cuda_api", "replace", True,
      'device_name = current_platform.get_device_name().replace(" ", "_")',
      "raises on NPU; tuned-config lookup must key on the Ascend device name"),
    C('"num_warps": 4,', "triton_kernel_tuning", "removal", False, None, WARPS_NOTE),
    C('"num_stages": 3,', "triton_kernel_tuning", "removal", False, None, WARPS_NOTE),
])

E("q_intmm_triton", "torchao/kernel/intmm_triton.py", "kernel_rewrite",
  "torchao kernel/intmm_triton.py (autotuned int8 scaled matmul registered as a torch.library op)", [
    C("[(i, j, k, 1, 1), (i, j, k, 1, 2), (i, j, k, 2, 2), (i, j, k, 1, 8), (i, j, k, 2, 8)]",
      "triton_kernel_tuning", "replace", False, "[(i, j, k, 1, 1)]", WARPS_NOTE),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()",
      "autotune prune hook raises on NPU"),
    C("capability = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "capability = (8, 0)  # no SM capability on Ascend; int8 cube tiles have no sm75 restriction",
      "raises without CUDA; NPU form returns None so capability[0] fails"),
    C('max_shared_memory = driver.active.utils.get_device_properties(device)["max_shared_mem"]',
      "triton_kernel_tuning", "replace", False,
      "max_shared_memory = 192 * 1024  # Ascend UB per core",
      "shared-memory pruning is a GPU concept; triton-ascend driver properties differ - unconfirmed in knowledge"),
    C('NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count', "torch_cuda_api", "replace",
      True, 'NUM_SMS = torch.npu.get_device_properties("npu").cube_core_num',
      "tl.dot kernel -> size the persistent grid by AI (cube) cores; multi_processor_count is absent on NPU"),
    C('@torch.library.impl(lib, "int_scaled_matmul", "CUDA")', "custom_cuda_extension", "add_branch", True,
      '@torch.library.impl(lib, "int_scaled_matmul", "PrivateUse1")',
      "the op is registered only for the CUDA dispatch key; NPU tensors hit 'could not run ... PrivateUse1'"),
])

E("q_tp_bench", "benchmarks/benchmark_int8_tp.py", "explicit_replacement",
  "torchao-style tensor-parallel int8 linear benchmark (torchrun, DeviceMesh, CUDA events)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "entry script; autoload since torch_npu 2.5.1"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL watchdog knob is ignored; HCCL_ASYNC_ERROR_HANDLING is the torch_npu counterpart (default 1)"),
    C('os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")', "env_var", "removal", False, None,
      "NCCL-only allocator tweak; no effect with HCCL"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises on an NPU host"),
    C('dist.init_process_group(backend="nccl", rank=int(os.environ["RANK"]), world_size=world_size)',
      "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", rank=int(os.environ["RANK"]), world_size=world_size)',
      "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C('mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("tp",))', "device_type", "replace", True,
      'mesh = init_device_mesh("npu", (world_size,), mesh_dim_names=("tp",))',
      "device mesh on 'cuda' fails on NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on an NPU host"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events unavailable"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events unavailable"),
    C("torch.cuda.synchronize()  # wait for the timed region", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timed region", "raises on an NPU host"),
    C("x = torch.randn(args.M, args.K, dtype=dtype).cuda()", "tensor_to_device", "replace", True,
      "x = torch.randn(args.M, args.K, dtype=dtype).npu()", ".cuda() fails on NPU"),
    C('w_full = torch.randn(args.N, args.K, dtype=dtype, device="cuda")', "device_type", "replace", True,
      'w_full = torch.randn(args.N, args.K, dtype=dtype, device="npu")', "'cuda' device string"),
    C('ref_linear = torch.compile(ref_linear, mode="max-autotune-no-cudagraphs")', "compile_mode", "replace",
      False, "ref_linear = torch.compile(ref_linear)",
      "max-autotune GEMM templates target CUDA Triton; Inductor on NPU (torch_npu >= 2.6) is safer in default "
      "mode - unconfirmed"),
    C("peak_gb = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", True,
      "peak_gb = torch.npu.max_memory_allocated() / 1e9",
      "benchmark output silently reads 0 GB on NPU"),
    C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
      'print(f"  peak mem  : {peak_gb:.2f} GB on {torch.npu.get_device_name(local_rank)}")',
      "raises on an NPU host"),
])

# ----------------------------------------------------------------------------------------------
# non-Python project files
# ----------------------------------------------------------------------------------------------
E("lk_run_bench_sh", "benchmark/run_benchmarks.sh", "explicit_replacement",
  "Liger-Kernel style benchmark launcher shell script", [
    C("=set -eo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load (libhccl/ASCEND_OPP_PATH errors otherwise); "
      "keep it outside 'set -u'"),
    C('export CUDA_VISIBLE_DEVICES="${GPU_ID}"', "env_var", "replace", True,
      'export ASCEND_RT_VISIBLE_DEVICES="${GPU_ID}"',
      "device selection is ignored on Ascend"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA hardware-queue knob, no effect on NPU"),
    C('export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"', "env_var", "replace", False,
      'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"',
      "allocator config name differs; memory behaviour only"),
    C("GPU_NAME=$(nvidia-smi --query-gpu=name", "device_capability_check", "replace", True,
      'GPU_NAME=$(python -c "import torch, torch_npu; print(torch.npu.get_device_name(0))" | tr \' \' \'_\')',
      "nvidia-smi is missing; with set -e/pipefail the script aborts here"),
    C("DRIVER=$(nvidia-smi --query-gpu=driver_version", "device_capability_check", "replace", True,
      'DRIVER=$(npu-smi info -t board -i "${GPU_ID}" | awk -F\' : \' \'/Software Version/{print $2}\' | head -n1)',
      "nvidia-smi is missing; npu-smi board info carries the driver version (knowledge host formats §2.4)"),
    C('nvidia-smi -i "${GPU_ID}" > "${LOG_DIR}/nvidia-smi.txt"', "device_capability_check", "replace", True,
      'npu-smi info > "${LOG_DIR}/npu-smi.txt"',
      "final snapshot fails under set -e"),
])

E("us_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "unsloth-style training Dockerfile on the NGC PyTorch image", [
    C("FROM nvcr.io/nvidia/pytorch:24.07-py3", "import_torch_npu", "replace", True,
      "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11",
      "NGC CUDA image has no CANN; an Ascend CANN base image provides the toolkit env (knowledge host formats §3.8)"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "no CUDA toolkit on Ascend"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0 8.6 8.9 9.0"', "env_var", "removal", False, None,
      "only affects nvcc builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "nvidia-container-runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or explicit "
      "--device mounts)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime only"),
    C("RUN pip install --upgrade pip setuptools wheel packaging", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.7.1 torch-npu==2.7.1 triton-ascend==3.2.0",
      "torch + torch-npu pin (knowledge §1.2) and triton-ascend for the Triton kernels"),
    C('RUN pip install "xformers==0.0.27.post2" --index-url https://download.pytorch.org/whl/cu124',
      "attention_kernel", "removal", True, None,
      "CUDA wheel index / xformers has no NPU backend (knowledge §6); pulls a CUDA torch"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", "removal", True,
      None, "flash-attn cannot be built or installed on NPU"),
    C('RUN python -c "import torch, triton, xformers, bitsandbytes;', "import_torch_npu", "replace", True,
      'RUN python -c "import torch, torch_npu, triton; print(torch.__version__, torch_npu.__version__, triton.__version__)"',
      "build-time sanity import fails without xformers and prints torch.version.cuda"),
])
