# Labels for probe127: kernel libraries with CUDA / Triton / pure-PyTorch backends (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# "sub" must match exactly one line ("=text" = the stripped line equals text).

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# mamba_ssm
# ---------------------------------------------------------------------------------------------

E("mamba-selective-scan-interface", "mamba_ssm/ops/selective_scan_interface.py", "kernel_rewrite",
  "state-spaces/mamba selective_scan_interface.py (SelectiveScanFn / selective_scan_ref / MambaInnerFn)",
  [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "only MambaInnerFn uses these and it is unreachable on NPU (Mamba takes the fast path only when "
        "causal_conv1d_fn is importable); still switch to the NPU autocast decorators"),
      C("=import selective_scan_cuda", "custom_cuda_extension", "replace", True,
        "selective_scan_cuda = None  # nvcc extension is not built on Ascend; selective_scan_fn uses selective_scan_ref",
        "unguarded import of the nvcc-built extension: ImportError at import time on an NPU host"),
      C("return SelectiveScanFn.apply(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)",
        "custom_cuda_extension", "add_branch", True,
        "if selective_scan_cuda is None or u.device.type == \"npu\": return selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)",
        "route NPU tensors to the pure-PyTorch reference scan; the selective_scan_cuda.fwd/bwd call sites "
        "inside SelectiveScanFn are then never reached and stay unedited"),
      C("assert causal_conv1d_fn is not None, \"causal_conv1d_fn is not available. Please install causal-conv1d.\"",
        "custom_cuda_extension", "removal", True, None,
        "causal_conv1d_fn is None on NPU (causal_conv1d_cuda import fails inside the same try), so the "
        "reference path asserts; drop the assert and use a plain depthwise conv below"),
      C("x = causal_conv1d_fn(x, rearrange(conv1d_weight, \"d 1 w -> d w\"), conv1d_bias, activation=\"silu\")",
        "custom_cuda_extension", "replace", True,
        "x = F.silu(F.conv1d(x, conv1d_weight, conv1d_bias, padding=conv1d_weight.shape[-1] - 1, groups=x.shape[1])[..., :L])",
        "mamba_inner_ref calls the CUDA causal conv; express it with F.conv1d (composite op, runs on NPU)"),
  ])

E("mamba-simple-module", "mamba_ssm/modules/mamba_simple.py", "device_branch_or_abstraction",
  "state-spaces/mamba modules/mamba_simple.py (Mamba mixer + Block with fused add-norm)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False,
        "import torch_npu",
        "only needed for the optional npu_add_rms_norm branch below"),
      C("fused_add_norm_fn = rms_norm_fn if isinstance(self.norm, RMSNorm) else layer_norm_fn",
        "npu_fused_op", "add_branch", False,
        "if hidden_states.device.type == \"npu\" and isinstance(self.norm, RMSNorm) and residual is not None: hidden_states, _, residual = torch_npu.npu_add_rms_norm(hidden_states, residual, self.norm.weight, self.norm.eps)",
        "performance: the Triton add+RMSNorm kernel is CUDA-tuned; torch_npu.npu_add_rms_norm is the fused "
        "Ascend op (returns y, rstd, x1+x2). Whether the Triton kernel itself runs under triton-ascend is unconfirmed"),
  ])

E("mamba-triton-selective-state-update", "mamba_ssm/ops/triton/selective_state_update.py", "kernel_rewrite",
  "state-spaces/mamba ops/triton/selective_state_update.py (decode-step Triton kernel + torch ref)",
  [
      C("BLOCK_SIZE_M, num_warps = ((32, 4) if dstate <= 16", "triton_kernel_tuning", "replace", False,
        "BLOCK_SIZE_M, num_warps = (16, 1) if x.device.type == \"npu\" else ((32, 4) if dstate <= 16",
        "hand-tuned warp/tile table for NVIDIA SMs; triton-ascend maps programs to AI cores and has no warps, "
        "so retune BLOCK_SIZE_M (unconfirmed which values are best)"),
      C("with torch.cuda.device(x.device.index):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(x.device.index):",
        "torch.cuda.device() on an NPU host tries to initialise CUDA and raises"),
  ])

E("mamba-generation-utils", "mamba_ssm/utils/generation.py", "explicit_replacement",
  "state-spaces/mamba utils/generation.py (decode loop with CUDA-graph capture)",
  [
      C("start = torch.cuda.Event(enable_timing=enable_timing)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=enable_timing)",
        "created unconditionally, even with enable_timing=False; CUDA Event cannot be constructed without CUDA"),
      C("end = torch.cuda.Event(enable_timing=enable_timing)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=enable_timing)", "same as start event"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "timing path; CUDA synchronize raises on an NPU host"),
      C("cache.mempool = torch.cuda.graphs.graph_pool_handle()", "torch_cuda_api", "replace", True,
        "cache.mempool = torch.npu.graph_pool_handle()",
        "graph memory pool; NPU graphs are supported for inference, which is this use"),
      C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
        "s = torch.npu.Stream()", "warm-up side stream before capture"),
      C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "s.wait_stream(torch.npu.current_stream())", "stream API"),
      C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(s):", "stream context"),
      C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(s)", "stream API"),
      C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True,
        "graph = torch.npu.NPUGraph()", "torch.cuda.CUDAGraph -> torch.npu.NPUGraph (inference only, as here)"),
      C("with torch.cuda.graph(graph, pool=mempool):", "torch_cuda_api", "replace", True,
        "with torch.npu.graph(graph, pool=mempool):", "graph capture context"),
  ])

E("mamba-setup", "setup.py", "device_branch_or_abstraction",
  "state-spaces/mamba setup.py (CUDAExtension build, -gencode flags, cached-wheel download, FORCE_BUILD)",
  [
      C("SKIP_CUDA_BUILD = os.getenv(\"MAMBA_SKIP_CUDA_BUILD\", \"FALSE\") == \"TRUE\"", "custom_cuda_extension",
        "replace", True,
        "SKIP_CUDA_BUILD = os.getenv(\"MAMBA_SKIP_CUDA_BUILD\", \"FALSE\") == \"TRUE\" or (torch.version.cuda is None and not torch.version.hip)",
        "without nvcc the CUDA branch leaves bare_metal_version undefined (NameError) and CUDAExtension cannot "
        "build; skip the extension on NPU hosts so the -gencode/CUDAExtension block is never entered"),
      C("if FORCE_BUILD:", "custom_cuda_extension", "replace", True,
        "if FORCE_BUILD or torch.version.cuda is None:",
        "get_wheel_url() does parse(torch.version.cuda) -> TypeError on NPU (None), not caught by the HTTPError handler"),
      C("\"triton\",", "triton_kernel_tuning", "replace", True,
        "\"triton-ascend\",",
        "the NVIDIA triton wheel has no NPU driver: selective_state_update / layernorm kernels import but fail at launch"),
  ])

E("mamba-test-selective-scan", "tests/ops/test_selective_scan.py", "explicit_replacement",
  "state-spaces/mamba tests/ops/test_selective_scan.py (kernel vs reference on device='cuda')",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "registers the npu device for the device strings below (mandatory before torch_npu 2.5.1 autoload)"),
      C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "hard-coded test device"),
      C("=@pytest.mark.parametrize(\"is_variable_B\", [False, True])", "custom_cuda_extension", "npu_only_addition",
        True,
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason=\"mamba_inner_fn needs the selective_scan/causal_conv1d CUDA kernels\")",
        "mamba_inner_fn asserts causal_conv1d_cuda and calls selective_scan_cuda directly; skip it on NPU"),
      C("device = \"cuda\"", "device_type", "replace", True, "device = \"npu\"", "hard-coded test device"),
  ])

E("mamba-benchmark-generation", "benchmarks/benchmark_generation_mamba_simple.py", "explicit_replacement",
  "state-spaces/mamba benchmarks/benchmark_generation_mamba_simple.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; registers the npu device / torch.npu"),
      C("device = \"cuda\"", "device_type", "replace", True, "device = \"npu\"", "benchmark device"),
      C("input_ids = torch.randint(1, 1000, (args.batch, args.promptlen), dtype=torch.long, device=\"cuda\")",
        "tensor_to_device", "replace", True,
        "input_ids = torch.randint(1, 1000, (args.batch, args.promptlen), dtype=torch.long, device=device)",
        "literal cuda device instead of the device variable"),
      C("attn_mask = torch.ones_like(input_ids, dtype=torch.long, device=\"cuda\")", "tensor_to_device", "replace",
        True, "attn_mask = torch.ones_like(input_ids, dtype=torch.long, device=device)", "literal cuda device"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for the last generate() before stopping the clock", "torch_cuda_api",
        "replace", True, "torch.npu.synchronize()  # wait for the last generate() before stopping the clock",
        "raises without CUDA; also needed for a correct latency"),
      C("peak_mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
        "peak_mem_gb = torch.npu.max_memory_allocated() / 2**30",
        "CUDA allocator is never initialised on NPU, so this silently reports 0 GB"),
      C("\"gpu\": torch.cuda.get_device_name(),", "torch_cuda_api", "replace", True,
        "\"gpu\": torch.npu.get_device_name(),", "get_device_name initialises CUDA and raises"),
  ])

# ---------------------------------------------------------------------------------------------
# causal-conv1d
# ---------------------------------------------------------------------------------------------

E("causal-conv1d-interface", "causal_conv1d/causal_conv1d_interface.py", "kernel_rewrite",
  "Dao-AILab/causal-conv1d causal_conv1d_interface.py (CausalConv1dFn + causal_conv1d_ref + update)",
  [
      C("=import causal_conv1d_cuda", "custom_cuda_extension", "replace", True,
        "causal_conv1d_cuda = None  # nvcc extension is not built on Ascend; use the F.conv1d reference",
        "unguarded import of the nvcc extension: the whole package fails to import on NPU"),
      C("return CausalConv1dFn.apply(", "custom_cuda_extension", "add_branch", True,
        "if causal_conv1d_cuda is None: return causal_conv1d_ref(x, weight, bias, initial_states, return_final_states, final_states_out, activation)",
        "dispatch to the depthwise-conv reference (seq_idx is not supported there; assert it is None)"),
      C("out = causal_conv1d_cuda.causal_conv1d_update(", "custom_cuda_extension", "replace", True,
        "out = causal_conv1d_update_ref(x, conv_state, weight, bias, \"silu\" if activation else None, cache_seqlens)",
        "decode-step kernel; the reference handles the circular conv_state (conv_state_indices unsupported). "
        "torch_npu.npu_fused_causal_conv1d exists only in the 26.1.0 op list and was not used"),
  ])

E("causal-conv1d-tests", "tests/test_causal_conv1d.py", "explicit_replacement",
  "Dao-AILab/causal-conv1d tests/test_causal_conv1d.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "registers the npu device for the tests"),
      C("device = \"cuda\"", "device_type", "replace", True, "device = \"npu\"", "test device"),
      C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
        "test device"),
      C("device = \"cuda:0\"", "device_type", "replace", True, "device = \"npu:0\"", "test device"),
      C("@pytest.mark.skipif(not torch.cuda.is_available(), reason=\"requires a GPU\")", "torch_cuda_api",
        "replace", True,
        "@pytest.mark.skipif(not torch.npu.is_available(), reason=\"requires an NPU\")",
        "unchanged, the test is silently skipped on every NPU host"),
      C("out_gpu = causal_conv1d_ref(x.cuda(), weight.cuda(), activation=\"silu\")", "tensor_to_device",
        "replace", True, "out_gpu = causal_conv1d_ref(x.npu(), weight.npu(), activation=\"silu\")",
        ".cuda() raises without CUDA"),
  ])

# ---------------------------------------------------------------------------------------------
# flash-linear-attention (fla)
# ---------------------------------------------------------------------------------------------

E("fla-utils", "fla/utils.py", "device_branch_or_abstraction",
  "fla-org/flash-linear-attention fla/utils.py (device/platform detection, input_guard, autocast helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "getattr(torch, 'npu') below needs torch_npu loaded (autoload only from torch_npu 2.5.1)"),
      C("return triton.runtime.driver.active.utils.get_device_properties(tensor_idx)['multiprocessor_count']",
        "triton_kernel_tuning", "replace", False,
        "return torch.npu.get_device_properties(tensor_idx).vector_core_num",
        "SM count used to size persistent grids; the closest Ascend quantity is the AI-core count "
        "(get_device_properties exposes cube_core_num/vector_core_num); triton-ascend driver props unconfirmed"),
      C("device = \"cuda\"", "device_type", "replace", True, "device = \"npu\"",
        "module-level device used by input_guard/device_torch_lib and imported by the tests"),
      C("is_nvidia_hopper = is_nvidia and ('NVIDIA H' in torch.cuda.get_device_name(0) or torch.cuda.get_device_capability()[0] >= 9)",
        "device_capability_check", "replace", True,
        "is_nvidia_hopper = False  # no sm90/TMA code paths on Ascend",
        "is_nvidia is True on NPU (torch.version.hip is None), so this evaluates torch.cuda.get_device_name at import and raises"),
      C("is_tf32_supported = is_nvidia and torch.cuda.get_device_capability(0)[0] >= 8", "device_capability_check",
        "replace", True, "is_tf32_supported = False",
        "same import-time crash; get_device_capability has no real meaning on NPU (returns None without TORCH_NPU_DEVICE_CAPABILITY)"),
      C("autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=\"cuda\")", "amp", "replace", True,
        "autocast_custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=device)",
        "tracks CUDA autocast state: under NPU autocast the kernels' forward/backward autocast handling is silently wrong"),
      C("autocast_custom_bwd = functools.partial(torch.amp.custom_bwd, device_type=\"cuda\")", "amp", "replace", True,
        "autocast_custom_bwd = functools.partial(torch.amp.custom_bwd, device_type=device)",
        "backward re-enters CUDA autocast instead of NPU autocast"),
      C("autocast_custom_fwd = torch.cuda.amp.custom_fwd", "amp", "replace", True,
        "autocast_custom_fwd = torch_npu.npu.amp.custom_fwd",
        "torch<2.4 branch (e.g. torch 2.1 + torch_npu 2.1): CUDA-only decorator"),
      C("autocast_custom_bwd = torch.cuda.amp.custom_bwd", "amp", "replace", True,
        "autocast_custom_bwd = torch_npu.npu.amp.custom_bwd", "torch<2.4 branch"),
      C("return torch.cuda.device(index)", "torch_cuda_api", "replace", True,
        "return torch.npu.device(index)",
        "torch<2.4 branch of custom_device_ctx, entered by every input_guard-decorated op"),
  ])

E("fla-gla-chunk", "fla/ops/gla/chunk.py", "kernel_rewrite",
  "fla-org/flash-linear-attention fla/ops/gla/chunk.py (chunked GLA Triton kernels + autograd Function)",
  [
      C("=triton.Config({'BK': BK, 'BV': BV}, num_warps=num_warps, num_stages=num_stages)", "triton_kernel_tuning",
        "replace", False, "triton.Config({'BK': BK, 'BV': BV})",
        "autotune space over num_warps/num_stages is NVIDIA-specific; on triton-ascend tune block sizes "
        "against on-chip buffer size instead (unconfirmed best values)"),
      C("=triton.Config({'BK': BK}, num_warps=num_warps, num_stages=num_stages)", "triton_kernel_tuning", "replace",
        False, "triton.Config({'BK': BK})", "same, intra-chunk A kernel"),
      C("=triton.Config({'BK': BK, 'BV': BV}, num_warps=num_warps)", "triton_kernel_tuning", "replace", False,
        "triton.Config({'BK': BK, 'BV': BV})",
        "same, output kernel; BK=128 x BV=128 fp32 tiles are sized for GPU shared memory"),
  ])

E("fla-gla-naive", "fla/ops/gla/naive.py", "explicit_replacement",
  "fla-org/flash-linear-attention fla/ops/gla/naive.py (recurrent/chunk references with a __main__ check)",
  [
      C("q = torch.randn(B, T, H, K, dtype=dtype).cuda().requires_grad_()", "tensor_to_device", "replace", True,
        "q = torch.randn(B, T, H, K, dtype=dtype).npu().requires_grad_()", "__main__ self-check; .cuda() raises"),
      C("k = torch.randn(B, T, H, K, dtype=dtype).cuda().requires_grad_()", "tensor_to_device", "replace", True,
        "k = torch.randn(B, T, H, K, dtype=dtype).npu().requires_grad_()", "same"),
      C("v = torch.randn(B, T, H, V, dtype=dtype).cuda().requires_grad_()", "tensor_to_device", "replace", True,
        "v = torch.randn(B, T, H, V, dtype=dtype).npu().requires_grad_()", "same"),
      C("g = F.logsigmoid(torch.rand(B, T, H, K, dtype=dtype)).cuda().requires_grad_()", "tensor_to_device",
        "replace", True, "g = F.logsigmoid(torch.rand(B, T, H, K, dtype=dtype)).npu().requires_grad_()", "same"),
  ])

E("fla-fused-recurrent", "fla/ops/common/fused_recurrent.py", "kernel_rewrite",
  "fla-org/flash-linear-attention fla/ops/common/fused_recurrent.py (fused recurrent Triton forward)",
  [
      C("triton.Config({}, num_warps=num_warps)", "triton_kernel_tuning", "replace", False,
        "triton.Config({})",
        "warp-count autotuning has no meaning on triton-ascend (unconfirmed how it treats num_warps)"),
  ])

E("fla-test-gla", "tests/ops/test_gla.py", "explicit_replacement",
  "fla-org/flash-linear-attention tests/ops/test_gla.py (chunk / fused_recurrent vs naive)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "test entry; torch.npu needed for the skip guard"),
      C("pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason=\"GLA Triton kernels need a CUDA device\")",
        "torch_cuda_api", "replace", True,
        "pytestmark = pytest.mark.skipif(not torch.npu.is_available(), reason=\"GLA Triton kernels need an NPU (triton-ascend)\")",
        "unchanged, the whole module is silently skipped on NPU"),
      C("], 0).cuda().sort()[0]", "tensor_to_device", "replace", True, "], 0).to(device).sort()[0]",
        "cu_seqlens offsets moved with a literal .cuda()"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA initialised; memory hygiene only"),
  ])

E("fla-pyproject", "pyproject.toml", "device_branch_or_abstraction",
  "fla-org/flash-linear-attention pyproject.toml",
  [
      C("\"triton>=3.0\",", "triton_kernel_tuning", "replace", True, "\"triton-ascend>=3.2.0\",",
        "every op in the package is a Triton kernel; the NVIDIA triton wheel cannot launch on NPU"),
      C("conv1d = [\"causal-conv1d>=1.4.0\"]", "custom_cuda_extension", "replace", False,
        "conv1d = []  # causal-conv1d builds with nvcc; fla falls back to its Triton/torch short conv on NPU",
        "optional extra; installing it on NPU fails at build time but nothing requires it"),
  ])

# ---------------------------------------------------------------------------------------------
# Liger-Kernel
# ---------------------------------------------------------------------------------------------

E("liger-cross-entropy", "src/liger_kernel/ops/cross_entropy.py", "kernel_rewrite",
  "linkedin/Liger-Kernel src/liger_kernel/ops/cross_entropy.py (online-softmax fused CE Triton kernel)",
  [
      C("MAX_FUSED_SIZE = 65536 // 2  # the best size we found by manually tuning", "triton_kernel_tuning",
        "replace", False,
        "MAX_FUSED_SIZE = 8192 if infer_device() == \"npu\" else 65536 // 2",
        "block size tuned for GPU registers/shared memory; a 32K fp32 block likely overflows the Ascend "
        "unified buffer (unconfirmed; value is a guess to retune)"),
      C("=num_warps=32 if not is_hip() else 16,", "triton_kernel_tuning", "replace", False,
        "num_warps=32 if not is_hip() and infer_device() != \"npu\" else 16,",
        "warp count is a CUDA/ROCm launch knob; unconfirmed how triton-ascend uses it"),
      C("_input, _input.stride(-2), grad_output, V, BLOCK_SIZE=BLOCK_SIZE, num_warps=32 if not is_hip() else 16,",
        "triton_kernel_tuning", "replace", False,
        "_input, _input.stride(-2), grad_output, V, BLOCK_SIZE=BLOCK_SIZE,",
        "same launch tuning in the backward element_mul kernel"),
  ])

E("liger-ops-utils", "src/liger_kernel/ops/utils.py", "device_branch_or_abstraction",
  "linkedin/Liger-Kernel ops/utils.py + utils.infer_device (device inference, calculate_settings, amp helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "torch.npu only exists once torch_npu is imported (autoload only from 2.5.1)"),
      C("if torch.cuda.is_available():  # Works for both Nvidia and AMD", "device_type", "add_branch", True,
        "if hasattr(torch, \"npu\") and torch.npu.is_available(): return \"npu\"",
        "otherwise infer_device() returns 'cpu' on an NPU host and benchmarks/amp helpers silently target the CPU"),
      C("num_warps = 32 if not is_hip() else 16", "triton_kernel_tuning", "replace", False,
        "num_warps = 32 if not is_hip() and infer_device() != \"npu\" else 16",
        "warp heuristics per block size are GPU launch tuning (unconfirmed on triton-ascend)"),
      C("return torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd", "amp", "replace", True,
        "return torch_npu.npu.amp.custom_fwd, torch_npu.npu.amp.custom_bwd",
        "torch<2.4 fallback uses CUDA autocast decorators"),
      C("return torch.cuda.get_device_properties(0).multi_processor_count", "device_capability_check", "replace",
        True, "return torch.npu.get_device_properties(0).vector_core_num",
        "raises without CUDA; NPU device properties have no multi_processor_count, only cube/vector core counts"),
  ])

E("liger-benchmark-utils", "benchmark/scripts/utils.py", "device_branch_or_abstraction",
  "linkedin/Liger-Kernel benchmark/scripts/utils.py (memory/speed harness writing all_benchmark_data.csv)",
  [
      C("torch.cuda.memory.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "getattr(torch, device).reset_peak_memory_stats()", "raises without CUDA"),
      C("mem = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
        "mem = getattr(torch, device).max_memory_allocated() / 2**20",
        "silently reports 0 MB on NPU, corrupting the memory benchmark CSV"),
  ])

# ---------------------------------------------------------------------------------------------
# torchao
# ---------------------------------------------------------------------------------------------

E("torchao-intmm", "torchao/kernel/intmm.py", "device_branch_or_abstraction",
  "pytorch/ao torchao/kernel/intmm.py (safe_int_mm / int_scaled_matmul, cuBLAS vs Triton vs fallback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only for the optional npu_quant_matmul branch"),
      C("if backend == \"triton\":", "npu_fused_op", "add_branch", False,
        "if input.device.type == \"npu\": return torch_npu.npu_quant_matmul(input, mat2.contiguous(), torch.ones(1, device=input.device), output_dtype=torch.int32)",
        "performance: on NPU the int8 mm goes through the except-branch fp32 matmul (correct but slow); "
        "npu_quant_matmul int32 output support unconfirmed"),
  ])

E("torchao-int4-linear", "torchao/quantization/linear_int4.py", "explicit_replacement",
  "pytorch/ao / gpt-fast int4 weight-only (tinygemm _weight_int4pack_mm) quantization",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "ported lines call torch_npu ops"),
      C("return torch.cuda.get_device_capability(device)[0] >= 8", "device_capability_check", "replace", True,
        "return device.type == \"npu\" or torch.cuda.get_device_capability(device)[0] >= 8",
        "called with an npu device: torch.cuda.get_device_capability rejects it / CUDA is absent"),
      C("weight_int4pack = torch.ops.aten._convert_weight_to_int4pack(weight_uint8, inner_k_tiles)",
        "npu_fused_op", "replace", True,
        "weight_int4pack = torch_npu.npu_convert_weight_to_int4pack(weight_int32.to(torch.int32) - 8)",
        "tinygemm packing has no NPU kernel (not in the npu_native_ops lists); the CPU fallback packs a "
        "different layout than the NPU matmul needs"),
      C("c = torch.ops.aten._weight_int4pack_mm(", "npu_fused_op", "replace", True,
        "c = torch_npu.npu_weight_quant_batchmatmul(x.to(precision), weight_int4pack, scales_and_zeros[:, :, 0].t(), antiquant_group_size=groupsize)",
        "no NPU kernel for _weight_int4pack_mm; Ascend's weight-only int4 matmul is npu_weight_quant_batchmatmul "
        "(scale/offset passed separately, not the tinygemm packed pair)"),
      C("if device is not None and torch.device(device).type == \"cpu\":", "npu_fused_op", "add_branch", True,
        "if device is not None and torch.device(device).type == \"npu\": self.register_buffer(\"weight\", torch.zeros((in_features, out_features // 8), dtype=torch.int32, device=device))",
        "the 4-D tinygemm buffer shape does not match the npu_convert_weight_to_int4pack layout, so "
        "load_state_dict of an NPU-quantised checkpoint fails"),
      C("def replace_linear_int4(module, groupsize, inner_k_tiles, padding_allowed, skip_layer_func=None, device=\"cuda\"):",
        "device_type", "replace", False,
        "def replace_linear_int4(module, groupsize, inner_k_tiles, padding_allowed, skip_layer_func=None, device=\"npu\"):",
        "default only; every caller in the file passes device"),
      C("def __init__(self, mod, groupsize=128, inner_k_tiles=8, padding_allowed=True, device=\"cuda\"):",
        "device_type", "replace", False,
        "def __init__(self, mod, groupsize=128, inner_k_tiles=8, padding_allowed=True, device=\"npu\"):",
        "default only; quantize_checkpoint passes device"),
      C("def quantize_checkpoint(checkpoint_path: Path, groupsize: int = 128, device: str = \"cuda\") -> None:",
        "device_type", "replace", False,
        "def quantize_checkpoint(checkpoint_path: Path, groupsize: int = 128, device: str = \"npu\") -> None:",
        "default only; __main__ passes args.device"),
      C("parser.add_argument(\"--device\", type=str, default=\"cuda\", help=\"device to use for quantization\")",
        "device_type", "replace", True,
        "parser.add_argument(\"--device\", type=str, default=\"npu\", help=\"device to use for quantization\")",
        "CLI default is what actually reaches the model"),
  ])

# ---------------------------------------------------------------------------------------------
# bitsandbytes
# ---------------------------------------------------------------------------------------------

E("bnb-cextension", "bitsandbytes/cextension.py", "device_branch_or_abstraction",
  "bitsandbytes-foundation/bitsandbytes cextension.py + cuda_specs.py (native library selection)",
  [
      C("if cuda_specs:", "custom_cuda_extension", "add_branch", False,
        "if hasattr(torch, \"npu\") and torch.npu.is_available(): binary_path = PACKAGE_DIR / f\"libbitsandbytes_npu{DYNAMIC_LIBRARY_SUFFIX}\"",
        "on NPU the CPU library is loaded (graceful); an Ascend C build of the native lib is unconfirmed "
        "(knowledge: AscendC kernels pending, NF4 on NPU uses a PyTorch implementation)"),
  ])

E("bnb-functional", "bitsandbytes/functional.py", "device_branch_or_abstraction",
  "bitsandbytes-foundation/bitsandbytes functional.py (4-bit quantize/dequantize via ctypes CUDA kernels)",
  [
      C("device = \"cuda\"", "device_type", "replace", False,
        "device = \"npu\" if hasattr(torch, \"npu\") and torch.npu.is_available() else \"cuda\"",
        "default for callers that omit device; quantize_4bit passes A.device"),
      C("if A.device.type != \"cuda\":", "custom_cuda_extension", "add_branch", True,
        "if A.device.type == \"npu\": return _quantize_4bit_torch(A, blocksize, quant_type, quant_storage)",
        "NPU tensors raise NotImplementedError here; route them to a PyTorch NF4/FP4 quantizer "
        "(the approach of bnb's Ascend NF4 support); the ctypes/CUDA-stream code below is then never reached"),
      C("=device = pre_call(A.device)", "custom_cuda_extension", "add_branch", True,
        "if A.device.type == \"npu\": return dequantize_4bit_torch(A, quant_state)",
        "pre_call uses torch.cuda.current_device/set_device and is_on_gpu checks t.is_cuda: both fail for NPU tensors"),
  ])

# ---------------------------------------------------------------------------------------------
# xformers
# ---------------------------------------------------------------------------------------------

E("xformers-fmha-dispatch", "xformers/ops/fmha/dispatch.py", "device_branch_or_abstraction",
  "facebookresearch/xformers ops/fmha/dispatch.py (priority lists of flash/cutlass/ck/triton_splitk ops)",
  [
      C("from . import attn_bias, ck, ck_decoder, ck_splitk, cutlass, flash, flash3, triton_splitk", "attention_kernel",
        "npu_only_addition", True,
        "from . import npu_fa  # FwOp/BwOp wrapping torch_npu.npu_fusion_attention",
        "a new op module is needed; xformers ships no NPU operator"),
      C(") -> Sequence[Type[AttentionFwOpBase]]:", "attention_kernel", "npu_only_addition", True,
        "    if inp.query.device.type == \"npu\": return deque([npu_fa.FwOp])",
        "without it NPU inputs fall to the ck list and end in 'No operator found for memory_efficient_attention_forward'"),
      C(") -> Type[AttentionBwOpBase]:", "attention_kernel", "npu_only_addition", True,
        "    if inp.query.device.type == \"npu\": return _run_priority_list(\"memory_efficient_attention_backward\", [npu_fa.BwOp], inp)",
        "same for backward"),
  ])

E("xformers-benchmark-mem-eff", "xformers/benchmarks/benchmark_mem_eff_attention.py", "explicit_replacement",
  "facebookresearch/xformers benchmarks/benchmark_mem_eff_attention.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "benchmark entry; npu device registration"),
      C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
        "benchmark device"),
      C("NUM_THREADS = [1] if device.type == \"cuda\" else [1, 40]", "device_type", "replace", False,
        "NUM_THREADS = [1] if device.type in (\"cuda\", \"npu\") else [1, 40]",
        "with device=npu every case would also run with 40 host threads: wasted time, not an error"),
      C("(xformers.ops.fmha.ck.FwOp, xformers.ops.fmha.ck.BwOp),", "attention_kernel", "npu_only_addition", True,
        "(xformers.ops.fmha.npu_fa.FwOp, xformers.ops.fmha.npu_fa.BwOp),",
        "no listed op supports NPU inputs, so every case returns early and the benchmark silently measures nothing"),
      C("print(f\"Running on {torch.cuda.get_device_name(device)}", "torch_cuda_api", "replace", True,
        "print(f\"Running on {torch.npu.get_device_name(device)}\")",
        "get_device_name/get_device_capability raise without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("openlm-attention", "open_lm/attention.py", "device_branch_or_abstraction",
  "mlfoundations/open_lm open_lm/attention.py (xformers / torch SDPA / custom attention selection) + a flash-attn path",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "the NPU flash path below calls torch_npu.npu_fusion_attention"),
      C("out = flash_attn_varlen_func(", "attention_kernel", "add_branch", True,
        "if q.device.type == \"npu\": out = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], \"TND\", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), 1), scale=q.shape[-1] ** -0.5, sparse_mode=3, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
        "flash-attn cannot be installed on NPU; varlen maps to npu_fusion_attention TND with cumulative seqlens"),
      C("return flash_attn_func(queries, keys, values, dropout_p=0.0, causal=is_causal)", "attention_kernel",
        "add_branch", True,
        "if queries.device.type == \"npu\": return torch_npu.npu_fusion_attention(queries, keys, values, queries.shape[2], \"BSND\", atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=queries.device), 1) if is_causal else None, scale=queries.shape[-1] ** -0.5, sparse_mode=3 if is_causal else 0)[0]",
        "dense BSND path"),
      C("if flash_attn_func is None:", "attention_kernel", "replace", True,
        "if flash_attn_func is None and not (hasattr(torch, \"npu\") and torch.npu.is_available()):",
        "configs/train_hybrid.yaml asks for attn_name: flash, which raises ImportError on NPU"),
  ])

# ---------------------------------------------------------------------------------------------
# RWKV
# ---------------------------------------------------------------------------------------------

E("rwkv-wkv-ops", "RWKV-v4neo/src/wkv.py", "device_branch_or_abstraction",
  "BlinkDL/RWKV-LM WKV CUDA kernel JIT-loaded with cpp_extension.load, plus a pure-torch recurrence",
  [
      C("RWKV_CUDA_ON = os.environ.get(\"RWKV_CUDA_ON\", \"1\") == \"1\"", "custom_cuda_extension", "replace", True,
        "RWKV_CUDA_ON = os.environ.get(\"RWKV_CUDA_ON\", \"1\") == \"1\" and torch.cuda.is_available()",
        "on by default: cpp_extension.load JIT-compiles .cu files with nvcc at import (load is also unsupported on "
        "A2/A3 per Ascend's API list); gate it so the torch backend is selected"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
        "with torch.autocast(device_type=k.device.type, enabled=False):",
        "this is the NPU code path; disabling CUDA autocast does nothing under NPU autocast, so the exp-heavy "
        "recurrence would silently run in bf16/fp16"),
  ])

# ---------------------------------------------------------------------------------------------
# training example, scripts, packaging
# ---------------------------------------------------------------------------------------------

E("hybrid-lm-train", "examples/train_hybrid_lm.py", "explicit_replacement",
  "nanoGPT/open_lm-style DDP training loop for a Mamba/GLA hybrid using the kernels above",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("os.environ.setdefault(\"TORCH_NCCL_ASYNC_ERROR_HANDLING\", \"1\")", "env_var", "replace", False,
        "os.environ.setdefault(\"HCCL_ASYNC_ERROR_HANDLING\", \"1\")",
        "NCCL watchdog variable is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu counterpart (default on)"),
      C("dist.init_process_group(backend=\"nccl\")", "dist_backend", "replace", True,
        "dist.init_process_group(backend=\"hccl\")", "NCCL is not available on Ascend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdamW as FusedAdam",
        "--optimizer fused_adam: apex's CUDA FusedAdam is unavailable; apex FusedAdam defaults to AdamW mode"),
      C("device = f\"cuda:{local_rank}\"", "device_type", "replace", True, "device = f\"npu:{local_rank}\"",
        "used by evaluate()"),
      C("torch.cuda.manual_seed(args.seed + rank)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed + rank)",
        "silently queued and never applied without CUDA; torch.manual_seed above already seeds the NPU"),
      C("if args.precision == \"bf16\" and not torch.cuda.is_bf16_supported():", "device_capability_check",
        "replace", True, "if args.precision == \"bf16\" and not torch.npu.is_bf16_supported():",
        "returns False / raises without CUDA, aborting the default bf16 run"),
      C("ctx = nullcontext() if args.precision == \"fp32\" else torch.autocast(device_type=\"cuda\", dtype=ptdtype)",
        "amp", "replace", True,
        "ctx = nullcontext() if args.precision == \"fp32\" else torch.autocast(device_type=\"npu\", dtype=ptdtype)",
        "CUDA autocast is disabled with a warning on NPU: training silently runs in fp32"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(args.precision == \"fp16\"))", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=(args.precision == \"fp16\"))",
        "fp16 path: the CUDA scaler disables itself without CUDA, so fp16 runs without loss scaling"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
        "host-to-device copy performance only"),
      C("model = HybridLM(model_cfg).cuda()", "tensor_to_device", "replace", True,
        "model = HybridLM(model_cfg).npu()", ".cuda() raises"),
      C("ckpt = torch.load(args.resume, map_location=\"cuda\")", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location=device)", "resume fails on map_location='cuda'"),
      C("model = torch.compile(model, mode=\"max-autotune\")", "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "max-autotune relies on Triton GEMM autotuning and CUDA graphs; NPU Inductor support of this mode is "
        "unconfirmed (default mode or backend='npugraphs' are the documented options)"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        ".cuda() raises"),
      C("y = y.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "y = y.npu(non_blocking=True)",
        ".cuda() raises"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
        "mem = torch.npu.max_memory_allocated() / 2**30", "silently logs 0 GB on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA initialised"),
  ])

E("hybrid-train-config", "configs/train_hybrid.yaml", "device_branch_or_abstraction",
  "training YAML of the hybrid example (model / data / optim / dist sections)",
  [
      C("mixer_backend: cuda", "custom_cuda_extension", "replace", True,
        "mixer_backend: torch        # selective scan / causal conv1d reference path on NPU",
        "selects the nvcc selective-scan / causal-conv1d kernels, which are not built on NPU"),
      C("backend: nccl", "dist_backend", "replace", False, "backend: hccl",
        "not read by examples/train_hybrid_lm.py (it hard-codes the backend); change for consistency"),
  ])

E("ci-run-tests-sh", "scripts/run_tests.sh", "explicit_replacement",
  "CI shell runner pinning each kernel test-suite to its own GPU, plus a torchrun smoke test",
  [
      C("set -euo pipefail", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before torch_npu can load"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api",
        "replace", True, "npu-smi info",
        "nvidia-smi does not exist on an NPU host; with set -e the script exits here"),
      C("export CUDA_LAUNCH_BLOCKING=\"${CUDA_LAUNCH_BLOCKING:-0}\"", "env_var", "replace", False,
        "export ASCEND_LAUNCH_BLOCKING=\"${ASCEND_LAUNCH_BLOCKING:-0}\"", "debugging aid only"),
      C("export TORCH_CUDA_ARCH_LIST=\"8.0;9.0\"", "env_var", "removal", False, None,
        "only affects nvcc builds; ignored on NPU"),
      C("CUDA_VISIBLE_DEVICES=\"${gpu}\" python -m pytest", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=\"${gpu}\" python -m pytest \"${PYTEST_ARGS[@]}\" \"$@\" \\",
        "ignored on NPU: all four suites silently share NPU 0 concurrently"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "no HCCL equivalent of NCCL_DEBUG (Ascend logging is ASCEND_GLOBAL_LOG_LEVEL); harmless if left"),
      C("export NCCL_P2P_DISABLE=\"${NCCL_P2P_DISABLE:-0}\"", "env_var", "removal", False, None,
        "NCCL-only knob, ignored by HCCL"),
      C("CUDA_VISIBLE_DEVICES=4,5 torchrun", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=4,5 torchrun --standalone --nproc_per_node=2 examples/train_hybrid_lm.py \\",
        "ignored on NPU: the smoke test silently lands on devices 0,1 instead of 4,5"),
  ])

E("docker-cuda-image", "docker/Dockerfile", "explicit_replacement",
  "NGC-based dev/CI Dockerfile building mamba/causal-conv1d extensions and installing flash-attn/xformers",
  [
      C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.05-py3", "env_var", "replace", True,
        "ARG BASE_IMAGE=ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "NGC CUDA image has no CANN/driver user space; start from a CANN image and pip install torch + torch-npu"),
      C("ENV TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" \\", "env_var", "removal", False, None,
        "nvcc arch list; nothing is built with nvcc on NPU"),
      C("RUN CAUSAL_CONV1D_FORCE_BUILD=TRUE pip install --no-build-isolation \"causal-conv1d>=1.4.0\"",
        "custom_cuda_extension", "replace", True,
        "RUN CAUSAL_CONV1D_SKIP_CUDA_BUILD=TRUE pip install --no-build-isolation ./third_party/causal-conv1d",
        "forces an nvcc build, which fails without CUDA; install the ported interface without the extension"),
      C("RUN pip install --no-build-isolation \"flash-attn==2.6.3\"", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built on NPU; open_lm's flash path uses npu_fusion_attention instead"),
      C("RUN pip install \"xformers==0.0.27\" --index-url https://download.pytorch.org/whl/cu121", "attention_kernel",
        "replace", True,
        "RUN pip install --no-build-isolation ./third_party/xformers  # fork with the npu_fa op",
        "CUDA wheel index; the wheel pulls a CUDA torch and has no NPU operator"),
      C("NCCL_IB_DISABLE=0 \\", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
      C("NCCL_SOCKET_IFNAME=eth0 \\", "env_var", "replace", False, "HCCL_SOCKET_IFNAME=eth0 \\",
        "HCCL picks the host NIC by its own priority when unset; set the HCCL variable for multi-node"),
      C("NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "HCCL_ASYNC_ERROR_HANDLING=1",
        "HCCL counterpart (already defaults to 1)"),
      C("RUN python -c \"import selective_scan_cuda, causal_conv1d_cuda; print('cuda extensions OK')\"",
        "custom_cuda_extension", "replace", True,
        "RUN python -c \"import torch, torch_npu, mamba_ssm, causal_conv1d; print('npu stack OK')\"",
        "the CUDA extensions are not built on NPU, so this build step fails"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; on Ascend the devices come from Ascend Docker Runtime "
        "(ASCEND_VISIBLE_DEVICES at docker run)"),
  ])

E("requirements-dev", "requirements-dev.txt", "explicit_replacement",
  "pip requirements of the kernel stack (CUDA 12.1 torch index, triton, nvcc-built kernel packages)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; NPU hosts use the CPU torch build (x86) or plain PyPI (aarch64)"),
      C("torch==2.3.1+cu121", "torch_cuda_api", "replace", True, "torch==2.6.0",
        "CUDA build of torch; torch_npu needs the matching CPU torch (bumped to a version with a triton-ascend-capable CANN)"),
      C("triton==2.3.1", "triton_kernel_tuning", "replace", True, "triton-ascend==3.2.0rc4",
        "NVIDIA triton cannot launch kernels on NPU"),
      C("numpy<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.6.0.post3",
        "torch-npu pin matching torch 2.6.0 (CANN 8.3.RC1)"),
      C("causal-conv1d>=1.4.0", "custom_cuda_extension", "replace", True,
        "./third_party/causal-conv1d  # NPU fork, install with CAUSAL_CONV1D_SKIP_CUDA_BUILD=TRUE",
        "PyPI sdist builds with nvcc"),
      C("mamba-ssm>=2.2.2", "custom_cuda_extension", "replace", True,
        "-e .  # ported mamba_ssm, extension skipped when torch.version.cuda is None",
        "PyPI mamba-ssm downloads a CUDA wheel or builds with nvcc"),
      C("bitsandbytes>=0.43.1", "custom_cuda_extension", "replace", False,
        "bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes@multi-backend-refactor",
        "PyPI wheel installs and falls back to its CPU library; NPU NF4 support lives in the multi-backend work (unconfirmed pin)"),
      C("xformers==0.0.27", "attention_kernel", "replace", True,
        "./third_party/xformers  # fork with the npu_fa op",
        "PyPI xformers is a CUDA build pinned to torch 2.3.1 and has no NPU operator"),
      C("nvidia-ml-py>=12.535.133", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU counterpart (npu-smi / torch.npu memory APIs); only used for monitoring"),
  ])

E("conda-environment", "environment.yml", "explicit_replacement",
  "conda environment.yml with pytorch-cuda / nvidia channel and CUDA toolkit",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only needed for the CUDA packages removed below"),
      C("- pytorch-cuda=12.1", "torch_cuda_api", "replace", True, "  - cpuonly",
        "selects the CUDA build of pytorch; torch_npu needs the CPU build (cpuonly pins the CPU variant)"),
      C("- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None, "nvcc is useless on an NPU host"),
      C("- cuda-toolkit=12.1", "custom_cuda_extension", "removal", False, None, "CUDA toolkit is useless on an NPU host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.3.1.post6",
        "torch-npu matching pytorch=2.3.1"),
      C("- triton==2.3.1", "triton_kernel_tuning", "replace", True, "      - triton-ascend",
        "NVIDIA triton cannot launch on NPU (triton-ascend version must match the CANN release)"),
      C("- bitsandbytes>=0.43.1", "custom_cuda_extension", "replace", False,
        "      - bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes@multi-backend-refactor",
        "falls back to the CPU library; NPU NF4 path unconfirmed for this pin"),
      C("- nvidia-ml-py>=12.535.133", "torch_cuda_api", "removal", False, None, "NVML monitoring only"),
      C("CUDA_HOME: $CONDA_PREFIX", "env_var", "removal", False, None, "only used by nvcc builds"),
      C("TORCH_CUDA_ARCH_LIST: \"8.0;9.0\"", "env_var", "removal", False, None, "only used by nvcc builds"),
  ])
