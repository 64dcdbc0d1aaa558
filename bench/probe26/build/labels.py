"""Labels for probe26 (hand-written synthetic upstream files; see ../README.md).

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

# ---- shared note fragments -------------------------------------------------------------------------
K_IMPORT = ("import torch_npu after import torch; optional since torch_npu 2.5.1 (device-backend autoload) "
            "but recommended (torch-npu-migration.md §1.1)")
K_IMPORT_REQ = ("the ported file names torch_npu.* directly, so the module must be imported "
                "(torch-npu-migration.md §1.1)")
K_CUDA = ("torch.cuda.* needs a CUDA build; on an NPU host use the torch.npu / torch_npu.npu equivalent "
          "(torch-npu-migration.md §2.1, §3.4)")
K_DEVSTR = "\"cuda\" device string fails on an NPU host; use \"npu\" (torch-npu-migration.md §3.4, §7)"
K_PROPS = ("torch.npu.get_device_properties only has name, total_memory, L2_cache_size, cube_core_num, "
           "vector_core_num; the other CUDA fields come back empty (torch_api_npu_support_2.7.1.tsv; "
           "torch-npu-migration.md §2.8), so multi_processor_count cannot size a grid")
K_CAP = ("get_device_capability returns None on NPU (only configurable via TORCH_NPU_DEVICE_CAPABILITY, "
         "torch-npu-migration.md §2.8); indexing/comparing it fails")
K_GUARD = ("torch.cuda.device(...) launch guard: NPU form is torch.npu.device "
           "(torch_api_npu_support_2.7.1.tsv)")
K_PU1 = ("torch_npu registers NPU kernels under the PrivateUse1 dispatch key (torch-npu-migration.md §3.8); "
         "an impl registered for CUDA is never dispatched for NPU tensors, so the library silently does nothing")
U_WARPS = ("unconfirmed: num_warps/num_stages are GPU warp/pipeline knobs; /work/shared/knowledge does not say "
           "how triton-ascend (Triton 3.2.0) treats them - perf-only retune")
U_UB = ("unconfirmed: block size chosen for GPU registers/shared memory; the NPU on-chip buffer budget is not "
        "in /work/shared/knowledge - perf/compile-risk retune")
U_DRV = ("unconfirmed: CUDA-specific key of triton.runtime.driver.active.utils.get_device_properties; the "
         "triton-ascend driver's keys are not in /work/shared/knowledge")
U_LIBDEV = ("unconfirmed: CUDA libdevice path; /work/shared/knowledge only says triton-ascend needs kernel "
            "porting (torch-npu-migration.md §6), not which libdevice module it ships")
U_TF32 = ("unconfirmed: TF32 is an NVIDIA tensor-core mode; how triton-ascend treats allow_tf32 in tl.dot is "
          "not in /work/shared/knowledge")
U_HINT = "unconfirmed: NVIDIA cache/eviction hint; triton-ascend support not in /work/shared/knowledge"
U_TMA = ("unconfirmed: Hopper TMA descriptor API; whether triton-ascend 3.2.0 ships it is not in "
         "/work/shared/knowledge (path only reached when the capability gate says sm90)")
U_ATOMIC = ("unconfirmed: tl.atomic_cas spin lock; triton-ascend atomic support and cross-program progress "
            "guarantees are not in /work/shared/knowledge - porter replaces the lock with a two-pass reduction")
K_TRITON_PKG = ("CUDA triton wheel has no NPU backend; pip package is triton-ascend (Triton 3.2.0 on CANN 8.5.0) "
                "(torch-npu-migration.md §6)")

# ---------------------------------------------------------------------------------------------------
E("fg_backend_nvidia", "src/flag_gems/runtime/backend/_nvidia/__init__.py", "device_branch_or_abstraction",
  "FlagGems runtime/backend vendor package (_nvidia → _ascend)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('vendor_name="nvidia",', "device_type", R, True, 'vendor_name="ascend",',
      "vendor key must match what the device detector returns on an NPU host"),
    C('device_name="cuda",', "device_type", R, True, 'device_name="npu",', K_DEVSTR),
    C('device_query_cmd="nvidia-smi",', "device_type", R, True, 'device_query_cmd="npu-smi",',
      "nvidia-smi is absent on an NPU host; npu-smi is the Ascend tool (torch-npu-migration.md §6 NCCL/pynvml row)"),
    C('dispatch_key="CUDA",', "device_type", R, True, 'dispatch_key="PrivateUse1",', K_PU1),
    C("torch_device_fn = torch.cuda", "torch_cuda_api", R, True, "torch_device_fn = torch.npu", K_CUDA),
    C("DEVICE_COUNT = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "DEVICE_COUNT = torch.npu.device_count()", K_CUDA + "; torch.cuda.device_count() reports 0 there"),
    C('"--query-gpu=driver_version"', "device_type", R, False,
      '[vendor_info.device_query_cmd, "info"],',
      "nvidia-smi query flags; npu-smi has a different CLI (ascend-host-formats.md §1); failure is caught, so optional"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return 0  # no CUDA compute capability on Ascend", K_CAP),
    C("return get_arch() >= 90", "device_capability_check", R, False, "return False",
      "TMA is a Hopper feature; porter pins it off (" + U_TMA + ")"),
    C("=return True", "unsupported_op_workaround", R, False, "return False",
      "fp64 is not supported on the NPU and is cast to fp32 with a warning (ascend-host-formats.md, vllm-ascend#397; "
      "torch-npu-migration.md §2.3)"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", R, True, "device = torch.npu.current_device()", K_CUDA),
    C("return torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R, True,
      "return torch.npu.get_device_properties(device).vector_core_num", K_PROPS),
    C('name = torch.cuda.get_device_name().replace(" ", "_")', "torch_cuda_api", R, True,
      'name = torch.npu.get_device_name().replace(" ", "_")',
      K_CUDA + "; NPU names look like Ascend910B3 (ascend-host-formats.md §5.3)"),
    C("return torch.cuda.device(tensor.device)", "torch_cuda_api", R, True,
      "return torch.npu.device(tensor.device)", K_GUARD),
    C('return torch.cuda.is_available() and triton.__version__ >= "2.2"', "torch_cuda_api", R, True,
      'return torch.npu.is_available() and triton.__version__ >= "2.2"',
      "torch.cuda.is_available() is False on an NPU host, so the Triton path would be switched off"),
])

E("fg_runtime_device", "src/flag_gems/runtime/device.py", "device_branch_or_abstraction",
  "FlagGems runtime/device.py vendor detector", [
    C('"amd": "rocm-smi",', "device_type", B, False, '"amd": "rocm-smi",\n    "ascend": "npu-smi",',
      "detector fallback by tool name; the fast path below is the one that matters"),
    C("if torch.cuda.is_available() and torch.version.cuda is not None:", "torch_cuda_api", B, True,
      'if hasattr(torch, "npu") and torch.npu.is_available():\n            return "ascend"',
      "without an NPU branch detection falls through to error.device_not_found() on an NPU host"),
    C('self.support_fp64 = self.vendor_name not in ("cambricon",)', "unsupported_op_workaround", R, False,
      'self.support_fp64 = self.vendor_name not in ("cambricon", "ascend")',
      "fp64 is cast to fp32 on NPU (torch-npu-migration.md §2.3; ascend-host-formats.md double-dtype warning)"),
])

E("fg_gelu", "src/flag_gems/ops/gelu.py", "kernel_rewrite", "FlagGems ops/gelu.py (pointwise_dynamic)", [
    C("from triton.language.extra.cuda import libdevice", "triton_kernel_tuning", R, False,
      "from triton.language.extra import libdevice", U_LIBDEV),
    C("return tl.inline_asm_elementwise(", "triton_kernel_tuning", R, True, "return tl.math.tanh(x)",
      "inline PTX (tanh.approx.f32) is NVIDIA ISA and cannot compile for an Ascend target"),
    C('asm="tanh.approx.f32 $0, $1;",', "triton_kernel_tuning", X, True, None,
      "PTX string removed together with the inline_asm call"),
    C("if A.is_cuda and A.dtype == torch.float32:", "device_type", R, False,
      "if A.dtype == torch.float32:",
      "is_cuda is False for NPU tensors, so the unchanged line keeps NPU on the generic gelu_tanh path; "
      "porter drops the guard once fast_tanh_approx is portable"),
])

E("fg_softmax", "src/flag_gems/ops/softmax.py", "kernel_rewrite", "FlagGems ops/softmax.py", [
    C(").multi_processor_count", "device_capability_check", R, True, ").vector_core_num", K_PROPS),
    C('"num_warps": heur_num_warps_non_inner,', "triton_kernel_tuning", X, False, None, U_WARPS),
])

E("fg_layernorm", "src/flag_gems/ops/layernorm.py", "kernel_rewrite", "FlagGems ops/layernorm.py", [
    C("block_n = [1024, 2048, 4096]", "triton_kernel_tuning", R, False, "block_n = [256, 512, 1024]", U_UB),
    C("warps = [4, 8, 16]", "triton_kernel_tuning", X, False, None, U_WARPS),
    C('triton.Config({"BLOCK_ROW_SIZE": m, "BLOCK_COL_SIZE": n}, num_warps=w)', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_ROW_SIZE": m, "BLOCK_COL_SIZE": n})', U_WARPS),
    C("with torch.cuda.device(input.device):", "torch_cuda_api", R, True,
      "with torch.npu.device(input.device):", K_GUARD),
    C("if N <= 65536:", "triton_kernel_tuning", R, False, "if N <= 8192:",
      "persistent kernel holds a whole row of up to 65536 fp32 in one program; " + U_UB),
    C("num_warps = 8 if TILE_N <= 4096 else 16", "triton_kernel_tuning", X, False, None, U_WARPS),
])

E("fg_cumsum", "src/flag_gems/ops/cumsum.py", "kernel_rewrite", "FlagGems ops/cumsum.py (scan-then-fan)", [
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", R, True,
      "with torch.npu.device(inp.device):", K_GUARD),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", R, True,
      "with torch.npu.device(out.device):", K_GUARD),
    C("with torch.cuda.device(partial_sum.device):", "torch_cuda_api", R, True,
      "with torch.npu.device(partial_sum.device):", K_GUARD),
])

E("fg_index_add", "src/flag_gems/ops/index_add.py", "kernel_rewrite", "FlagGems ops/index_add.py", [
    C('triton.Config({"BLOCK_M": m, "BLOCK_N": 1024}, num_warps=4, num_stages=2)', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": m, "BLOCK_N": 1024})', U_WARPS),
    C("while tl.atomic_cas(lock_ptr, 0, 1) == 1:", "triton_kernel_tuning", R, False,
      "# deterministic path: torch.Tensor.index_add_ fallback on NPU", U_ATOMIC),
    C('cache_modifier=".cg"', "triton_kernel_tuning", R, False,
      "cur = tl.load(out + dst_row * N + cols, mask=mask, other=0.0)", U_HINT),
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", R, True,
      "with torch.npu.device(inp.device):", K_GUARD),
    C("BLOCK_N=BLOCK_N, num_warps=8,", "triton_kernel_tuning", R, False, "BLOCK_N=BLOCK_N,", U_WARPS),
    C("with torch.cuda.device(inp.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(inp.device.index):", K_GUARD),
])

E("fg_mm", "src/flag_gems/ops/mm.py", "kernel_rewrite", "FlagGems ops/mm.py (autotuned split-K GEMM)", [
    C("_IS_AMPERE_OR_NEWER = torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "_IS_AMPERE_OR_NEWER = True  # no compute capability on Ascend", K_CAP + "; torch.cuda.* also needs CUDA"),
    C('{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "SPLIT_K": 1}', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "SPLIT_K": 1}),', U_WARPS),
    C('{"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 1}', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 1}),', U_WARPS),
    C('{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 1}', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 1}),', U_WARPS),
    C('{"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 1}', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "SPLIT_K": 1}),', U_WARPS),
    C('{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "SPLIT_K": 4}', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "SPLIT_K": 4}),', U_WARPS),
    C("torch.cuda.current_device()", "torch_cuda_api", R, True, "torch.npu.current_device()", K_CUDA),
    C(')["max_shared_mem"]', "triton_kernel_tuning", R, False, ').get("max_shared_mem", float("inf"))',
      U_DRV + "; the GPU shared-memory pruning has no NPU meaning"),
    C("acc += tl.dot(a, b, out_dtype=dot_out_dtype, allow_tf32=allow_tf32)", "triton_kernel_tuning", R, False,
      "acc += tl.dot(a, b, out_dtype=dot_out_dtype)", U_TF32),
    C("with torch.cuda.device(a.device):", "torch_cuda_api", R, True, "with torch.npu.device(a.device):", K_GUARD),
])

E("fg_init", "src/flag_gems/__init__.py", "device_branch_or_abstraction",
  "FlagGems __init__.py (aten op registration)", [
    C('=device = "cuda"', "device_type", R, True, 'device = "npu"', K_DEVSTR + "; check_device() would reject NPU tensors"),
] + [
    C(f'lib.impl("{op}", {fn}, "CUDA")', "device_type", R, True, f'lib.impl("{op}", {fn}, "PrivateUse1")', K_PU1)
    for op, fn in [("abs", "abs"), ("add.Tensor", "add"), ("addmm", "addmm"),
                   ("bitwise_and.Tensor", "bitwise_and_tensor"), ("bmm", "bmm"), ("cos", "cos"),
                   ("cumsum", "cumsum"), ("div.Tensor", "true_divide"), ("exp", "exp"), ("mm", "mm"),
                   ("argmax", "argmax"), ("index_add", "index_add")]
] + [
    C(f'lib.impl("{op}", {fn}, "AutogradCUDA")', "device_type", R, True,
      f'lib.impl("{op}", {fn}, "AutogradPrivateUse1")', K_PU1)
    for op, fn in [("gelu", "gelu"), ("layer_norm", "layer_norm"), ("softmax.int", "softmax"),
                   ("native_dropout", "native_dropout")]
])

E("fg_bench_utils", "benchmark/performance_utils.py", "explicit_replacement",
  "FlagGems benchmark/performance_utils.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", K_IMPORT_REQ + " (mstx ranges)"),
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", R, False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "CUDA_VISIBLE_DEVICES is ignored on NPU; ASCEND_RT_VISIBLE_DEVICES selects logical devices "
      "(ascend-distributed.md §1); device 0 is the default anyway, so optional"),
    C("return torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", R, True,
      "return torch.npu.get_device_name(torch.npu.current_device())", K_CUDA),
    C("return torch.cuda.max_memory_allocated() / (1024 * 1024)", "torch_cuda_api", R, True,
      "return torch.npu.max_memory_allocated() / (1024 * 1024)", K_CUDA),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info()", K_CUDA),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", K_CUDA),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)", K_CUDA),
    C("latency = triton.testing.do_bench_cudagraph(", "torch_cuda_api", R, False,
      "latency = triton.testing.do_bench(fn, rep=DEFAULT_ITER_COUNT, return_mode=\"median\")",
      "do_bench_cudagraph captures a torch.cuda.CUDAGraph; NPU graphs are torch.npu.NPUGraph (torch-npu-migration.md "
      "§3.7); opt-in path (USE_CUDAGRAPH=1), so optional; triton-ascend behaviour unconfirmed"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_event = torch.npu.Event(enable_timing=True)", K_CUDA + " (torch.cuda.Event → torch_npu.npu.Event, TSV)"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_event = torch.npu.Event(enable_timing=True)", K_CUDA),
    C("torch.cuda.nvtx.range_push(self.op_name)", "torch_cuda_api", R, True,
      "range_id = torch_npu.npu.mstx.range_start(self.op_name)",
      "torch.cuda.nvtx is not redirected by torch_npu; use torch_npu.npu.mstx (torch-npu-migration.md §2.1)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "torch.cuda.nvtx → torch_npu.npu.mstx (torch-npu-migration.md §2.1)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is never released between dtypes"),
])

E("fg_requirements", "requirements.txt", "explicit_replacement", "FlagGems requirements.txt", [
    C("#   pip install torch==2.5.1 --index-url", "import_torch_npu", R, False,
      "#   pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cpu  (x86; aarch64: plain PyPI)",
      "install hint only; torch_npu hosts use CPU torch wheels (torch-npu-migration.md §1.1)"),
    C("=torch>=2.2.0", "import_torch_npu", A, True, "torch-npu==2.7.1.post2",
      "torch_npu wheel must match torch x.y.z; 2.7.1.post2 pairs with CANN 8.5.0, the CANN triton-ascend 3.2.0 targets "
      "(torch-npu-migration.md §1.2, §6)"),
    C("=triton>=3.1.0", "custom_cuda_extension", R, True, "triton-ascend==3.2.0", K_TRITON_PKG),
    C("nvidia-ml-py>=12.535.0", "custom_cuda_extension", X, False, None,
      "pynvml has no NPU equivalent (torch-npu-migration.md §6); installs but is useless there"),
    C('flash-attn==2.6.3; platform_machine == "x86_64"', "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (torch-npu-migration.md §6)"),
    C("xformers==0.0.28.post3", "attention_kernel", X, True, None,
      "xformers has no NPU backend (torch-npu-migration.md §6) and its wheel pins a CUDA torch"),
    C("=cupy-cuda12x", "custom_cuda_extension", X, True, None, "cupy has no Ascend support (torch-npu-migration.md §6)"),
])

E("liger_utils", "src/liger_kernel/ops/utils.py", "device_branch_or_abstraction", "Liger-Kernel ops/utils.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C("elif torch.xpu.is_available():", "device_type", B, True,
      'elif hasattr(torch, "npu") and torch.npu.is_available():\n        return "npu"',
      "infer_device() returns \"cpu\" on an NPU host, so amp_custom_fwd/bwd and tests pick the CPU device"),
    C("MAX_FUSED_SIZE = 65536", "triton_kernel_tuning", R, False, "MAX_FUSED_SIZE = 8192", U_UB),
    C("num_warps = 32 if not is_hip() else 16", "triton_kernel_tuning", R, False, "num_warps = 8", U_WARPS),
])

E("liger_rms_norm", "src/liger_kernel/ops/rms_norm.py", "kernel_rewrite", "Liger-Kernel ops/rms_norm.py", [
    C("from triton.language.extra.cuda.libdevice import rsqrt", "triton_kernel_tuning", R, False,
      "from triton.language.math import rsqrt", U_LIBDEV),
    C("sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count", "device_capability_check", R, True,
      "sm_count = torch.npu.get_device_properties(X.device).vector_core_num", K_PROPS + "; also torch.cuda.* needs CUDA"),
])

E("liger_flce", "src/liger_kernel/ops/fused_linear_cross_entropy.py", "kernel_rewrite",
  "Liger-Kernel ops/fused_linear_cross_entropy.py", [
    C("MAX_FUSED_SIZE = 65536 // 2", "triton_kernel_tuning", R, False, "MAX_FUSED_SIZE = 8192", U_UB),
    C("num_warps=32 if not is_hip() else 16,", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("num_warps = 32 if not is_hip() else 16", "triton_kernel_tuning", R, False, "num_warps = 8", U_WARPS),
])

E("liger_rope", "src/liger_kernel/ops/rope.py", "kernel_rewrite",
  "Liger-Kernel ops/rope.py (portable as is: no labels)", [])

E("unsloth_utils", "unsloth/kernels/utils.py", "device_branch_or_abstraction", "unsloth kernels/utils.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C("MAX_FUSED_SIZE: int = 65536", "triton_kernel_tuning", R, False, "MAX_FUSED_SIZE: int = 8192", U_UB),
    C('torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="cuda")', "amp", R, False,
      'torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="npu")',
      "keyed on the CUDA autocast state; no cast_inputs here, so only the autocast state seen by backward differs"),
    C('torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="cuda")', "amp", R, False,
      'torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="npu")', "pairs with custom_fwd above"),
    C("=num_warps = 32", "triton_kernel_tuning", R, False, "num_warps = 8", U_WARPS),
    C("torch_cuda_device = torch.cuda.device", "torch_cuda_api", R, True, "torch_cuda_device = torch.npu.device",
      K_GUARD + "; every kernel wrapper uses this guard"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 1:",
      "torch.cuda.device_count() is 0 on an NPU host, so multi-NPU launches lose their device guard"),
    C("torch_gpu_device = torch.cuda.device", "torch_cuda_api", R, True, "torch_gpu_device = torch.npu.device", K_GUARD),
    C("cdequantize_blockwise_fp32 = bnb.functional.lib.cdequantize_blockwise_fp32", "custom_cuda_extension", X, False,
      None, "bitsandbytes CUDA C entry point; NPU NF4 support is a partial PyTorch path (torch-npu-migration.md §6); "
      "whether the symbol exists on an NPU build is unconfirmed"),
    C('CUDA_STREAM = torch.cuda.current_stream("cuda:0")', "torch_cuda_api", R, True,
      'CUDA_STREAM = torch.npu.current_stream("npu:0")', K_CUDA),
    C('out = torch.empty(shape, dtype=dtype, device="cuda:0")', "tensor_to_device", R, True,
      "out = torch.empty(shape, dtype=dtype, device=W.device)", K_DEVSTR),
    C('out_absmax = torch.empty(n_elements_absmax, dtype=torch.float32, device="cuda:0")', "tensor_to_device", R, True,
      "out_absmax = torch.empty(n_elements_absmax, dtype=torch.float32, device=W.device)", K_DEVSTR),
    C("=cdequantize_blockwise_fp32(", "custom_cuda_extension", R, True,
      "return bnb.functional.dequantize_4bit(W, quant_state, out=out)",
      "bitsandbytes CUDA C API cannot run on NPU; NF4 dequant has an NPU PyTorch path in the multi-backend "
      "branch (torch-npu-migration.md §6)"),
    C("fx = cdequantize_blockwise_fp16_nf4 if dtype == torch.float16 else cdequantize_blockwise_bf16_nf4",
      "custom_cuda_extension", X, True, None, "CUDA C entry point removed with the dequantize_4bit rewrite"),
])

E("unsloth_layernorm", "unsloth/kernels/layernorm.py", "kernel_rewrite", "unsloth kernels/layernorm.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('layernorm = LayerNorm((dim,), eps=eps, dtype=dtype).to("cuda")', "tensor_to_device", R, True,
      'layernorm = LayerNorm((dim,), eps=eps, dtype=dtype).to("npu")', K_DEVSTR),
    C("torch.cuda.manual_seed(random_state)", "torch_cuda_api", R, True, "torch.npu.manual_seed(random_state)", K_CUDA),
    C('X = torch.randn((bsz, seqlen, dim), dtype=dtype, device="cuda")', "tensor_to_device", R, True,
      'X = torch.randn((bsz, seqlen, dim), dtype=dtype, device="npu")', K_DEVSTR),
    C('YY = torch.randn((bsz, seqlen, dim), dtype=dtype, device="cuda", requires_grad=True)', "tensor_to_device", R, True,
      'YY = torch.randn((bsz, seqlen, dim), dtype=dtype, device="npu", requires_grad=True)', K_DEVSTR),
    C('with torch.autocast(device_type="cuda", dtype=dtype):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=dtype):',
      "CUDA autocast is inactive for NPU tensors, so the test would run without autocast (torch-npu-migration.md §2.2)"),
])

E("lightllm_context_attn", "lightllm/models/llama/triton_kernel/context_flashattention_nopad.py", "kernel_rewrite",
  "lightllm context_flashattention_nopad.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('TESLA = "Tesla" in torch.cuda.get_device_name(0)', "torch_cuda_api", R, True,
      'TESLA = "Tesla" in torch.npu.get_device_name(0)', K_CUDA),
    C("CUDA_CAPABILITY = torch.cuda.get_device_capability()", "device_capability_check", X, True, None,
      K_CAP + "; torch.cuda.* also needs CUDA"),
    C("BLOCK_M = 128 if not TESLA else 64", "triton_kernel_tuning", R, False, "BLOCK_M = 64", U_UB),
    C("num_warps = 4 if Lk <= 64 else 8", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("num_stages = 1 if CUDA_CAPABILITY[0] < 8 else 3", "device_capability_check", R, True, "num_stages = 1",
      "indexes the capability tuple, which is None on NPU (torch-npu-migration.md §2.8)"),
])

E("lightllm_decode_attn", "lightllm/models/llama/triton_kernel/gqa_flash_decoding_stage1.py", "kernel_rewrite",
  "lightllm gqa_flash_decoding_stage1.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('eviction_policy="evict_first",', "triton_kernel_tuning", X, False, None, U_HINT),
    C('other=0.0, eviction_policy="evict_last")', "triton_kernel_tuning", R, False,
      "k = tl.load(K + off_k, mask=offs_n_new[None, :] < cur_batch_end_index, other=0.0)", U_HINT),
    C("q = torch.randn(batch, q_heads, dim, dtype=torch.float16).cuda()", "tensor_to_device", R, True,
      "q = torch.randn(batch, q_heads, dim, dtype=torch.float16).npu()", K_DEVSTR),
    C("k = torch.randn(batch * seq, kv_heads, dim, dtype=torch.float16).cuda()", "tensor_to_device", R, True,
      "k = torch.randn(batch * seq, kv_heads, dim, dtype=torch.float16).npu()", K_DEVSTR),
    C("v = torch.randn(batch * seq, kv_heads, dim, dtype=torch.float16).cuda()", "tensor_to_device", R, True,
      "v = torch.randn(batch * seq, kv_heads, dim, dtype=torch.float16).npu()", K_DEVSTR),
    C("req_to_tokens = torch.arange(batch * seq, dtype=torch.int32).view(batch, seq).cuda()", "tensor_to_device", R,
      True, "req_to_tokens = torch.arange(batch * seq, dtype=torch.int32).view(batch, seq).npu()", K_DEVSTR),
    C("b_req_idx = torch.arange(batch, dtype=torch.int32).cuda()", "tensor_to_device", R, True,
      "b_req_idx = torch.arange(batch, dtype=torch.int32).npu()", K_DEVSTR),
    C("b_seqlen = torch.full((batch,), seq, dtype=torch.int32).cuda()", "tensor_to_device", R, True,
      "b_seqlen = torch.full((batch,), seq, dtype=torch.int32).npu()", K_DEVSTR),
    C('mid_out = torch.empty(batch, q_heads, seq // block_seq, dim, dtype=torch.float32, device="cuda")',
      "tensor_to_device", R, True,
      'mid_out = torch.empty(batch, q_heads, seq // block_seq, dim, dtype=torch.float32, device="npu")', K_DEVSTR),
    C('mid_lse = torch.empty(batch, q_heads, seq // block_seq, dtype=torch.float32, device="cuda")',
      "tensor_to_device", R, True,
      'mid_lse = torch.empty(batch, q_heads, seq // block_seq, dtype=torch.float32, device="npu")', K_DEVSTR),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", K_CUDA),
])

E("lightllm_kv_copy", "lightllm/common/basemodel/triton_kernel/destindex_copy_kv.py", "kernel_rewrite",
  "lightllm destindex_copy_kv.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C("dest = torch.randn((B * N_CTX, H, D), dtype=torch.float16).cuda()", "tensor_to_device", R, True,
      "dest = torch.randn((B * N_CTX, H, D), dtype=torch.float16).npu()", K_DEVSTR),
    C("src = torch.randn((B * N_CTX, H, D), dtype=torch.float16).cuda()", "tensor_to_device", R, True,
      "src = torch.randn((B * N_CTX, H, D), dtype=torch.float16).npu()", K_DEVSTR),
    C('dest_loc = torch.arange(0, B * N_CTX, dtype=torch.int32, device="cuda")', "tensor_to_device", R, True,
      'dest_loc = torch.arange(0, B * N_CTX, dtype=torch.int32, device="npu")', K_DEVSTR),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", K_CUDA),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", K_CUDA),
])

E("lightllm_setup", "setup.py", "explicit_replacement", "lightllm setup.py", [
    C('"torch==2.5.1",', "import_torch_npu", R, True, '"torch==2.7.1", "torch-npu==2.7.1.post2",',
      "no torch_npu wheel in the matrix pairs torch 2.5.1 with the CANN (8.5.0) that triton-ascend 3.2.0 targets; "
      "torch-npu must be added (torch-npu-migration.md §1.2, §6)"),
    C('"triton==3.1.0",', "custom_cuda_extension", R, True, '"triton-ascend==3.2.0",', K_TRITON_PKG),
    C('"nvidia-ml-py",', "custom_cuda_extension", X, False, None,
      "pynvml has no NPU equivalent (torch-npu-migration.md §6); installs but is useless there"),
    C('"flashinfer-python==0.2.2",', "attention_kernel", X, False, None,
      "unconfirmed: flashinfer is a CUDA attention library; not covered in /work/shared/knowledge"),
    C('"fp8": ["vllm==0.6.4.post1"],', "distributed_framework", R, False, '"fp8": ["vllm-ascend"],',
      "CUDA vLLM build; the NPU path is the vllm-ascend plugin (torch-npu-migration.md §6); optional extra"),
])

E("vllm_fused_moe", "vllm/model_executor/layers/fused_moe/fused_moe.py", "kernel_rewrite",
  "vLLM fused_moe/fused_moe.py (Triton MoE GEMM + tuned JSON lookup)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", K_IMPORT_REQ + " (npu_swiglu, npu_moe_gating_top_k_softmax)"),
    C("ops.moe_align_block_size(topk_ids, num_experts, block_size, sorted_ids, expert_ids, num_tokens_post_pad)",
      "custom_cuda_extension", R, True,
      "moe_align_block_size_torch(topk_ids, num_experts, block_size, sorted_ids, expert_ids, num_tokens_post_pad)",
      "vllm._C CUDA op is not built on NPU (custom CUDA extension, torch-npu-migration.md §6); porter writes a torch version"),
    C("A, A_scale = ops.scaled_fp8_quant(A, A_scale)", "custom_cuda_extension", R, False,
      "raise NotImplementedError(\"fp8 w8a8 MoE on NPU\")",
      "CUDA op, only on the fp8 path; fp8 support on A2 is not in /work/shared/knowledge (unconfirmed)"),
    C('device_name = torch.cuda.get_device_name().replace(" ", "_")', "torch_cuda_api", R, True,
      'device_name = torch.npu.get_device_name().replace(" ", "_")',
      K_CUDA + "; NPU names (Ascend910B3…) never match the NVIDIA_* JSON files (ascend-host-formats.md §5.3)"),
    C("ops.topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output.float())",
      "npu_fused_op", R, True,
      "topk_weights, topk_ids, token_expert_indicies = torch_npu.npu_moe_gating_top_k_softmax(gating_output, k=topk)",
      "vllm._C topk_softmax is CUDA-only; torch_npu.npu_moe_gating_top_k_softmax exists "
      "(ops/npu_custom_ops_torch2.7.1_v7.3.0.txt)"),
    C('config = dict(config, num_warps=config.get("num_warps", 4), num_stages=config.get("num_stages", 4))',
      "triton_kernel_tuning", X, False, None, U_WARPS),
    C("torch.ops._C.silu_and_mul(", "npu_fused_op", R, True,
      "cache2[: tokens_in_chunk * topk_ids.shape[1]] = torch_npu.npu_swiglu(cache1[:tokens_in_chunk].view(-1, N), dim=-1)",
      "vllm._C silu_and_mul is CUDA-only; torch_npu.npu_swiglu exists (ops/npu_custom_ops_torch2.7.1_v7.3.0.txt)"),
    C("ops.moe_sum(", "custom_cuda_extension", R, True,
      "torch.sum(cache3[:tokens_in_chunk], dim=1, out=out_hidden_states[begin:end])",
      "vllm._C moe_sum is CUDA-only; a plain torch.sum does the same reduction"),
])

E("vllm_moe_config", "vllm/model_executor/layers/fused_moe/configs/E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3.json",
  "kernel_rewrite", "vLLM tuned fused-MoE config (NVIDIA H100; unused on NPU, porter adds a new file: no labels)", [])

E("fla_utils", "fla/utils.py", "device_branch_or_abstraction", "flash-linear-attention fla/utils.py", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('return triton.runtime.driver.active.utils.get_device_properties(tensor_idx)["multiprocessor_count"]',
      "triton_kernel_tuning", R, False,
      "return torch.npu.get_device_properties(tensor_idx).vector_core_num", U_DRV),
    C('triton.runtime.driver.active.utils.get_device_properties(i)["max_shared_mem"]', "triton_kernel_tuning", R, False,
      "torch.npu.get_device_properties(i).L2_cache_size",
      U_DRV + "; failure is caught (returns [-1]) so only the tile choice is affected"),
])

E("fla_chunk_h", "fla/ops/common/chunk_h.py", "kernel_rewrite", "flash-linear-attention ops/common/chunk_h.py", [
    C("BKV_LIST = [32, 64] if check_shared_mem() else [16, 32]", "triton_kernel_tuning", R, False,
      "BKV_LIST = [64, 128]", "shared-memory probe fails on NPU so tiles drop to 16/32; " + U_UB),
    C("NUM_WARPS = [2, 4] if is_nvidia_hopper else [2, 4, 8]", "triton_kernel_tuning", R, False, "NUM_WARPS = [4]", U_WARPS),
    C("triton.Config({'BK': BK, 'BV': BV}, num_warps=num_warps, num_stages=num_stages)", "triton_kernel_tuning", R,
      False, "triton.Config({'BK': BK, 'BV': BV})", U_WARPS),
    C("for num_stages in [2, 3, 4]", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("b_h += tl.dot(b_k, b_v, allow_tf32=False)", "triton_kernel_tuning", R, False, "b_h += tl.dot(b_k, b_v)", U_TF32),
])

E("xformers_softmax", "xformers/triton/softmax.py", "kernel_rewrite", "xformers triton/softmax.py", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "torch.cuda.amp.custom_fwd → torch_npu.npu.amp.custom_fwd (torch_api_npu_support_2.7.1.tsv); cast_inputs is None "
      "by default here, so only autocast bookkeeping differs"),
    C("triton.Config({}, num_warps=1),", "triton_kernel_tuning", R, False, "triton.Config({}),", U_WARPS),
    C("triton.Config({}, num_warps=2),", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("triton.Config({}, num_warps=4),", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("triton.Config({}, num_warps=8),", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("triton.Config({}, num_warps=16),", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("triton.Config({}, num_warps=32),", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("if torch.cuda.is_available() and x.is_cuda and not _triton_registered_overflow:", "device_type", R, False,
      'if x.device.type == "npu" and not _triton_registered_overflow:',
      "unchanged, NPU tensors take the PyTorch softmax fallback, which is correct and native on NPU; "
      "change only to use the Triton kernel"),
])

E("triton_tut_fused_attn", "python/tutorials/06-fused-attention.py", "kernel_rewrite",
  "Triton tutorial 06-fused-attention.py (3.2 era)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C("from triton.tools.experimental_descriptor import create_2d_tma_descriptor", "triton_kernel_tuning", X, False,
      None, U_TMA),
    C("qk = tl.dot(q, k, allow_tf32=True)", "triton_kernel_tuning", R, False, "qk = tl.dot(q, k)", U_TF32),
    C("triton.Config({'BLOCK_M': BM, 'BLOCK_N': BN}, num_stages=s, num_warps=w)", "triton_kernel_tuning", R, False,
      "triton.Config({'BLOCK_M': BM, 'BLOCK_N': BN}) \\", U_WARPS),
    C("for s in ([1] if is_hip() else [3, 4, 7])", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("for w in [4, 8]", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("desc_q = create_2d_tma_descriptor(", "triton_kernel_tuning", X, False, None, U_TMA),
])

E("triton_tut_softmax", "python/tutorials/02-fused-softmax.py", "kernel_rewrite",
  "Triton tutorial 02-fused-softmax.py (occupancy-sized persistent grid)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('DEVICE = torch.device("cuda:0")', "device_type", R, True, 'DEVICE = torch.device("npu:0")', K_DEVSTR),
    C('NUM_SM = properties["multiprocessor_count"]', "triton_kernel_tuning", R, False,
      "NUM_SM = torch.npu.get_device_properties(DEVICE).vector_core_num", U_DRV + " (likely KeyError at import)"),
    C('NUM_REGS = properties["max_num_regs"]', "triton_kernel_tuning", X, False, None, U_DRV),
    C('SIZE_SMEM = properties["max_shared_mem"]', "triton_kernel_tuning", X, False, None, U_DRV),
    C('WARP_SIZE = properties["warpSize"]', "triton_kernel_tuning", X, False, None, U_DRV),
    C("num_stages = 4 if SIZE_SMEM > 200000 else 2", "triton_kernel_tuning", R, False, "num_stages = 2", U_WARPS),
    C("n_regs = kernel.n_regs", "triton_kernel_tuning", X, False, None,
      "unconfirmed: register count of the compiled kernel is a CUDA/HIP binary property; occupancy math is dropped"),
    C("size_smem = kernel.metadata.shared", "triton_kernel_tuning", X, False, None,
      "unconfirmed: shared-memory size of the compiled kernel; occupancy math is dropped"),
    C("occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)", "triton_kernel_tuning", X, False, None,
      "GPU occupancy formula; on NPU one program per core (unconfirmed)"),
    C("occupancy = min(occupancy, SIZE_SMEM // size_smem)", "triton_kernel_tuning", X, False, None,
      "GPU occupancy formula (unconfirmed on NPU)"),
    C("num_programs = NUM_SM * occupancy", "triton_kernel_tuning", R, False, "num_programs = NUM_SM",
      "persistent grid = core count; unconfirmed that triton-ascend prefers exactly one program per vector core"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()", K_CUDA),
    C("torch.cuda.set_stream(stream)", "torch_cuda_api", R, True, "torch.npu.set_stream(stream)", K_CUDA),
])

E("triton_tut_persistent_mm", "python/tutorials/09-persistent-matmul.py", "kernel_rewrite",
  "Triton tutorial 09-persistent-matmul.py (SM-count persistent grid, TMA, proton)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C("=import triton.tools.experimental_descriptor", "triton_kernel_tuning", X, False, None, U_TMA),
    C("import triton.profiler as proton", "unsupported_op_workaround", R, False, "import torch_npu.profiler",
      "unconfirmed: proton uses CUPTI/roctracer; triton-ascend support not in /work/shared/knowledge; NPU profiler is "
      "torch_npu.profiler (torch-npu-migration.md §2.5)"),
    C('torch.float16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256', "triton_kernel_tuning", R, False,
      'torch.float16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},', U_WARPS),
    C('NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count', "device_capability_check", R, True,
      'NUM_SMS = torch.npu.get_device_properties("npu").cube_core_num',
      K_PROPS + "; tl.dot work runs on the cube cores"),
    C('a = torch.randn((M, K), device="cuda", dtype=torch.float16).to(dtype)', "tensor_to_device", R, True,
      'a = torch.randn((M, K), device="npu", dtype=torch.float16).to(dtype)', K_DEVSTR),
    C('b = torch.randn((K, N), device="cuda", dtype=torch.float16).to(dtype)', "tensor_to_device", R, True,
      'b = torch.randn((K, N), device="npu", dtype=torch.float16).to(dtype)', K_DEVSTR),
    C("proton.activate(0)", "unsupported_op_workaround", X, False, None, "proton session control (unconfirmed on NPU)"),
    C("proton.deactivate(0)", "unsupported_op_workaround", X, False, None, "proton session control (unconfirmed on NPU)"),
    C('proton.start("matmul", hook="triton")', "unsupported_op_workaround", R, False,
      "prof = torch_npu.profiler.profile(); prof.start()", "proton → torch_npu.profiler (unconfirmed that proton works)"),
    C("proton.finalize()", "unsupported_op_workaround", R, False, "prof.stop()",
      "proton → torch_npu.profiler (unconfirmed that proton works)"),
])

E("triton_tut_layernorm_lock", "python/tutorials/05-layer-norm.py", "kernel_rewrite",
  "Triton tutorial 05-layer-norm.py (atomic_cas spin lock in backward)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu", K_IMPORT),
    C('=DEVICE = "cuda"', "device_type", R, True, 'DEVICE = "npu"', K_DEVSTR),
    C("while tl.atomic_cas(Lock, 0, 1) == 1:", "triton_kernel_tuning", R, False,
      "# two-pass reduction of DW/DB partials instead of a spin lock", U_ATOMIC),
    C("MAX_FUSED_SIZE = 65536 // x.element_size()", "triton_kernel_tuning", R, False,
      "MAX_FUSED_SIZE = 16384 // x.element_size()", U_UB),
    C("num_warps = min(max(BLOCK_SIZE // 256, 1), 8)", "triton_kernel_tuning", X, False, None, U_WARPS),
    C("BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)", "triton_kernel_tuning", R, False,
      "BLOCK_SIZE=BLOCK_SIZE)", "num_ctas is an sm90 thread-block-cluster knob; " + U_WARPS),
])
