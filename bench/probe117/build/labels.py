"""Labels for probe117: Triton ATen operator library (FlagGems / Liger-Kernel style), CUDA -> Ascend NPU.

Conventions (see README "How the labels were chosen"):
  * kind torch_cuda_api      : a torch.cuda.* call (or alias) that must become torch.npu.* / torch_npu.npu.*
  * kind device_type         : "cuda" device strings in torch.device / comparisons / dispatch keys / is_cuda
  * kind tensor_to_device    : .cuda(), .to("cuda"), device="cuda" on tensor factories
  * kind device_capability_check : compute-capability checks, multi_processor_count, nvidia-smi queries
  * kind triton_kernel_tuning: grid / block / autotune choices that only matter for Ascend (UB, coreDim,
                               core count) plus the triton -> triton-ascend package swap
  * kind unsupported_op_workaround: CUDA-only Triton intrinsics (libdevice fast-math, spin locks)
  * kind custom_cuda_extension: PTX inline asm and CUDA-only native wheels
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


CUDA_DEVICE_GUARD = ("torch.cuda.device(t) raises ValueError 'Expected a cuda device' for an npu tensor "
                     "(and CUDA is absent); torch.npu.device is the listed NPU form")

# ----------------------------------------------------------------------------------------- FlagGems
E("g01_init", "src/flag_gems/__init__.py", "explicit_replacement",
  "FlagGems src/flag_gems/__init__.py: aten Library registration, enable()/use_gems()", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "package entry point; project allows torch>=2.1 where torch.npu only exists after import torch_npu "
      "(autoload only from torch_npu 2.5.1)"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "flag_gems.device is used by tests/benchmarks to allocate inputs"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "returns False on an NPU host, so enable() registers nothing and every op silently stays on aten"),
    C('return "AutogradCUDA" if autograd else "CUDA"', "device_type", "replace", True,
      'return "AutogradPrivateUse1" if autograd else "PrivateUse1"',
      "NPU tensors dispatch on PrivateUse1; impls registered for CUDA keys are never hit (silent no-op)"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "idx = torch.npu.current_device()", "raises without CUDA"),
    C("name = torch.cuda.get_device_name(idx)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(idx)", "raises without CUDA"),
    C("major, minor = torch.cuda.get_device_capability(idx)", "device_capability_check", "replace", True,
      "major, minor = torch.npu.get_device_capability(idx) or (0, 0)",
      "no CUDA; NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
  ])

E("g02_libentry", "src/flag_gems/utils/libentry.py", "explicit_replacement",
  "FlagGems utils/libentry.py: LibEntry launch cache and LibTuner persistent autotuner", [
    C("DEVICE_COUNT = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "DEVICE_COUNT = torch.npu.device_count()",
      "0 on an NPU host -> kernel_cache is an empty tuple -> IndexError on first launch"),
    C("name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(torch.npu.current_device())", "raises without CUDA"),
    C("=use_cuda_graph=True,", "compile_mode", "replace", False, "use_cuda_graph=False,",
      "CUDA-graph timing in the autotuner uses torch.cuda.CUDAGraph; whether triton-ascend's Autotuner "
      "honours it is unconfirmed in the knowledge base"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "hot path of every cached launch; raises without CUDA"),
    C("dev = torch.cuda.current_device() if device is None else device", "torch_cuda_api", "replace", True,
      "dev = torch.npu.current_device() if device is None else device", "raises without CUDA"),
    C("return torch.cuda.current_stream(dev).cuda_stream", "torch_cuda_api", "replace", True,
      "return torch.npu.current_stream(dev).npu_stream", "CUDA stream handle; NPU stream object has npu_stream"),
  ])

E("g03_pointwise_dynamic", "src/flag_gems/utils/pointwise_dynamic.py", "explicit_replacement",
  "FlagGems utils/pointwise_dynamic.py: code generator for N-d pointwise kernels", [
    C("return (2**31 - 1, 65535, 65535)", "triton_kernel_tuning", "replace", False, "return (65535, 1, 1)",
      "Ascend coreDim must stay <= UINT16_MAX (triton-ascend migration guide, not in knowledge: unconfirmed); "
      "GSL path then loops tiles_per_cta"),
    C("props = torch.cuda.get_device_properties(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(torch.npu.current_device())", "raises without CUDA"),
    C("return props.multi_processor_count", "device_capability_check", "replace", True,
      "return props.vector_core_num",
      "NPU device properties only carry name/total_memory/L2_cache_size/cube_core_num/vector_core_num; "
      "an empty SM count breaks persistent grid sizing"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 0  # no TMA block pointers on Ascend",
      "raises without CUDA; NPU capability is None by default"),
    C('code.writeline("with torch.cuda._DeviceGuard(in0.device.index):")', "torch_cuda_api", "replace", True,
      'code.writeline("with torch.npu.device(in0.device):")',
      "generated wrapper source uses the CUDA device guard; fails when the generated module runs"),
    C('check_tensor_attributes(tensors, ("cuda", "cpu"))', "device_type", "replace", True,
      'check_tensor_attributes(tensors, ("npu", "cpu"))', "npu tensors rejected by the device whitelist"),
  ])

E("g04_gelu", "src/flag_gems/ops/gelu.py", "kernel_rewrite",
  "FlagGems ops/gelu.py + tanh/sigmoid/erf/rsqrt/pow pointwise ops using libdevice", [
    C("from triton.language.extra.cuda import libdevice", "unsupported_op_workaround", "replace", False,
      "from triton.language.extra.ascend import libdevice",
      "CUDA libdevice maps to __nv_* bitcode; triton-ascend ships its own libdevice. Unconfirmed in knowledge"),
    C("return tl.inline_asm_elementwise(", "custom_cuda_extension", "replace", True,
      "return libdevice.tanh(x)",
      "inline PTX (tanh.approx.f32) can only be assembled for NVIDIA GPUs; the Ascend compiler has no PTX path"),
    C("scale2 * x_fp32 * libdevice.fast_expf(-0.5 * x_fp32 * x_fp32)", "unsupported_op_workaround", "replace",
      False, "scale2 * x_fp32 * tl.exp(-0.5 * x_fp32 * x_fp32)",
      "CUDA fast-math intrinsic; presence in Ascend libdevice unconfirmed"),
    C("return libdevice.fast_dividef(1.0, 1.0 + tl.exp2(-x.to(tl.float32) * log2e))",
      "unsupported_op_workaround", "replace", False,
      "return 1.0 / (1.0 + tl.exp2(-x.to(tl.float32) * log2e))",
      "CUDA fast-math intrinsic (MUFU); presence in Ascend libdevice unconfirmed"),
  ])

E("g05_reduction", "src/flag_gems/ops/reduction.py", "explicit_replacement",
  "FlagGems ops/sum.py, amax.py, argmax.py, mean.py (two-pass and dim reductions)", [
    C("return triton.next_power_of_2(triton.cdiv(args[\"M\"], 12))", "triton_kernel_tuning", "replace", False,
      'return triton.next_power_of_2(triton.cdiv(args["M"], get_num_vectorcores()))',
      "hard-coded 12-CTA split; on NPU size to vector-core count and keep BLOCK_M*BLOCK_N in UB (perf, unconfirmed)"),
    C('triton.Config({"BLOCK_M": 64, "BLOCK_N": 2048}, num_warps=32, num_stages=4),', "triton_kernel_tuning",
      "replace", False, 'triton.Config({"BLOCK_M": 8, "BLOCK_N": 2048}),',
      "64x2048 fp32 accumulator = 512 KB, far above the ~192 KB Ascend UB (UB size not in knowledge: unconfirmed)"),
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(mid.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(mid.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(inp.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device.index):", "no CUDA runtime on an NPU host"),
    C("with torch.cuda.device(mid_value.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(mid_value.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(out_index.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out_index.device):", CUDA_DEVICE_GUARD),
  ])

E("g06_var_mean", "src/flag_gems/ops/var_mean.py", "explicit_replacement",
  "FlagGems ops/var_mean.py (Welford reduction with tl.reduce)", [
    C("with torch.cuda.device(x.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(x.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(var.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(var.device):", CUDA_DEVICE_GUARD),
  ])

E("g07_cumsum", "src/flag_gems/ops/cumsum.py", "explicit_replacement",
  "FlagGems ops/cumsum.py (block scan + decoupled look-back scan)", [
    C('_SM_COUNT = torch.cuda.get_device_properties("cuda").multi_processor_count', "device_capability_check",
      "replace", True, '_SM_COUNT = torch.npu.get_device_properties("npu").vector_core_num',
      "raises without CUDA; NPU properties expose vector_core_num, not multi_processor_count"),
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(partial_sum.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(partial_sum.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(inp.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device.index):", "no CUDA runtime on an NPU host"),
    C("with torch.cuda.device(aggregates.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(aggregates.device):", CUDA_DEVICE_GUARD),
    C("and triton.cdiv(N, 4096) <= get_sm_count() * 2", "triton_kernel_tuning", "replace", False,
      "and triton.cdiv(N, 4096) <= get_sm_count()",
      "look-back spin-wait needs every tile resident; programs beyond the physical core count are "
      "batch-scheduled on Ascend, so 2x oversubscription risks a hang (unconfirmed in knowledge)"),
  ])

E("g08_softmax", "src/flag_gems/ops/softmax.py", "explicit_replacement",
  "FlagGems ops/softmax.py + log_softmax.py (online softmax fwd/bwd)", [
    C("NUM_SMS = torch.cuda.get_device_properties(", "torch_cuda_api", "replace", True,
      "NUM_SMS = torch.npu.get_device_properties(", "raises without CUDA"),
    C("=torch.cuda.current_device()", "torch_cuda_api", "replace", True, "torch.npu.current_device()",
      "raises without CUDA"),
    C(").multi_processor_count", "device_capability_check", "replace", True, ").vector_core_num",
      "attribute absent/empty on NPU properties -> num_waves division fails"),
    C("=grid = (M, 1, 1)", "triton_kernel_tuning", "replace", False,
      "grid = (min(M, get_num_vectorcores()), 1, 1)",
      "one program per row exceeds the 65535 coreDim limit for large M on Ascend (unconfirmed) and "
      "oversubscribes the vector cores; needs a row loop in the kernel"),
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(in_grad.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(in_grad.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out.device):", CUDA_DEVICE_GUARD),
  ])

E("g09_layernorm", "src/flag_gems/ops/layernorm.py", "explicit_replacement",
  "FlagGems ops/layernorm.py (persistent / loop forward, two-kernel backward)", [
    C('triton.Config({"TILE_N": 16384}, num_warps=16),', "triton_kernel_tuning", "removal", False, None,
      "three fp32 16384-wide accumulators = 192 KB, the whole Ascend UB (UB size unconfirmed in knowledge)"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(x.device):", CUDA_DEVICE_GUARD),
    C("=grid = (M, 1, 1)", "triton_kernel_tuning", "replace", False,
      "grid = (min(M, get_num_vectorcores()), 1, 1)",
      "one program per row: coreDim limit 65535 on Ascend for large M (unconfirmed)"),
    C("=grid = (M,)", "triton_kernel_tuning", "replace", False, "grid = (min(M, get_num_vectorcores()),)",
      "same row-per-program launch in the loop kernel (unconfirmed)"),
    C("with torch.cuda.device(out_grad.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out_grad.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(mean.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(mean.device):", CUDA_DEVICE_GUARD),
  ])

E("g10_groupnorm", "src/flag_gems/ops/groupnorm.py", "explicit_replacement",
  "FlagGems ops/groupnorm.py (forward + dX and dW/dB kernels)", [
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 0  # Ascend: accumulate dW/dB in fp32, no sm_90 half atomics",
      "raises without CUDA; NPU capability is None by default"),
    C('assert x.is_cuda, "group_norm: expected a CUDA tensor"', "device_type", "replace", True,
      'assert x.is_npu, "group_norm: expected an NPU tensor"', "is_cuda is False for npu tensors"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(x.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(y_grad.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(y_grad.device):", CUDA_DEVICE_GUARD),
  ])

E("g11_index_ops", "src/flag_gems/ops/index_ops.py", "explicit_replacement",
  "FlagGems ops/gather.py, scatter.py, index_select.py", [
    C("MAX_GRID_X = 2**31 - 1", "triton_kernel_tuning", "replace", False, "MAX_GRID_X = 65535",
      "Ascend coreDim <= UINT16_MAX (triton-ascend docs; unconfirmed in knowledge); kernels then need a "
      "grid-stride loop"),
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(index.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(index.device):", CUDA_DEVICE_GUARD),
  ])

E("g12_masked_select", "src/flag_gems/ops/masked_select.py", "explicit_replacement",
  "FlagGems ops/nonzero.py + masked_select.py (prefix-sum compaction)", [
    C("with torch.cuda.device(inp.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(inp.device):", CUDA_DEVICE_GUARD),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().synchronize()",
      "raises without CUDA; the NPU stream must be synced before reading the pinned count"),
    C("with torch.cuda.device(out.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(out.device):", CUDA_DEVICE_GUARD),
  ])

E("g13_mm", "src/flag_gems/ops/mm.py", "kernel_rewrite",
  "FlagGems ops/mm.py (autotuned tiled GEMM, split-K, deterministic locked split-K)", [
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "raises without CUDA"),
    C("max_shared_memory = triton.runtime.driver.active.utils.get_device_properties(device)[",
      "triton_kernel_tuning", "replace", False,
      "max_shared_memory = NPU_L1_BYTES  # Ascend driver reports num_aicore/num_vectorcore, no max_shared_mem",
      "shared-memory pruning is a GPU concept; triton-ascend's property dict has no max_shared_mem key "
      "(triton-ascend code, not in knowledge: unconfirmed)"),
    C("while tl.atomic_cas(lock, pid_z, -1) != pid_z:", "unsupported_op_workaround", "replace", False,
      "tl.atomic_add(C, acc.to(C.dtype.element_ty), mask=mask)  # NPU: drop the ordered spin lock",
      "inter-program spin lock assumes co-resident programs; batch-scheduled programs on Ascend can "
      "deadlock (unconfirmed)"),
    C("with torch.cuda.device(a.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(a.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(c.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(c.device):", CUDA_DEVICE_GUARD),
  ])

E("g14_bmm_addmm", "src/flag_gems/ops/bmm_addmm.py", "explicit_replacement",
  "FlagGems ops/bmm.py + addmm.py", [
    C("return torch.cuda.get_device_capability()[0] == 9", "device_capability_check", "replace", True,
      "return False  # no Hopper/cuBLASLt special case on Ascend",
      "raises without CUDA; NPU capability is None -> subscript fails"),
    C("with torch.cuda.device(A.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(A.device):", CUDA_DEVICE_GUARD),
    C("with torch.cuda.device(mat1.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(mat1.device):", CUDA_DEVICE_GUARD),
  ])

E("g15_tune_configs", "src/flag_gems/runtime/tune_configs.yaml", "kernel_rewrite",
  "FlagGems runtime tune_configs.yaml (per-op autotune search spaces)", [
    C("block_n: [1024, 2048, 4096, 8192]", "triton_kernel_tuning", "replace", False,
      "block_n: [1024, 2048, 4096]",
      "BLOCK_M 4 x 8192 fp32 plus the exp intermediate overflows the Ascend UB (UB size unconfirmed)"),
    C("tile_n: [512, 1024, 2048, 4096, 8192, 16384]", "triton_kernel_tuning", "replace", False,
      "tile_n: [512, 1024, 2048, 4096, 8192]", "16384-wide fp32 loop tiles x3 accumulators exceed UB (unconfirmed)"),
    C("max_grid_size: [2147483647, 65535, 65535]", "triton_kernel_tuning", "replace", False,
      "max_grid_size: [65535, 1, 1]", "Ascend coreDim limit (unconfirmed in knowledge)"),
  ])

E("g16_runtime_device", "src/flag_gems/runtime/__init__.py", "device_branch_or_abstraction",
  "FlagGems runtime/__init__.py + backend_utils (vendor detection, tune-config loading)", [
    C('out = _query_with_tool("nvidia-smi --query-gpu=name --format=csv,noheader")',
      "device_capability_check", "add_branch", True,
      'if _query_with_tool("npu-smi info"): return _load_vendor_info("ascend")',
      "no nvidia-smi and no HIP on an NPU host -> RuntimeError at import of flag_gems"),
    C('"nvidia": DeviceInfo("nvidia", "cuda", "CUDA", "nvidia-smi"),', "device_type", "add_branch", True,
      '"ascend": DeviceInfo("ascend", "npu", "PrivateUse1", "npu-smi info"),',
      "needs an Ascend vendor entry: device name npu, dispatch key PrivateUse1"),
    C("info.num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "info.num_devices = getattr(torch, info.device_name).device_count()", "reports 0 devices on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on NPU -> falls back to the yaml SM count (108): grids mis-sized but results correct"),
    C("return torch.cuda.get_device_properties(0).multi_processor_count", "device_capability_check", "replace",
      False, "return torch.npu.get_device_properties(0).vector_core_num",
      "unreachable on NPU until the branch above is ported; then must read vector_core_num"),
  ])

E("g17_accuracy_utils", "tests/accuracy_utils.py", "explicit_replacement",
  "FlagGems tests/accuracy_utils.py (dtype lists, tolerances, reference helpers)", [
    C('DEVICE = "cuda"', "device_type", "replace", True, 'DEVICE = "npu"', "test inputs would target CUDA"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major, minor = 0, 0  # compute capability is not meaningful on Ascend",
      "raises at import of every test module on an NPU host"),
    C("bf16_is_supported = torch.cuda.is_bf16_supported()", "torch_cuda_api", "replace", True,
      "bf16_is_supported = torch.npu.is_bf16_supported()",
      "without CUDA bf16 is reported unsupported (or raises), silently dropping all bf16 cases"),
    C('t = torch.randint(-1000, 1000, shape, dtype=dtype, device="cuda")', "tensor_to_device", "replace", True,
      't = torch.randint(-1000, 1000, shape, dtype=dtype, device="npu")', "CUDA device string"),
    C('t = torch.randint(0, 2, shape, dtype=dtype, device="cuda")', "tensor_to_device", "replace", True,
      't = torch.randint(0, 2, shape, dtype=dtype, device="npu")', "CUDA device string"),
    C('t = torch.empty(shape, dtype=dtype, device="cuda").uniform_(low, high)', "tensor_to_device", "replace",
      True, 't = torch.empty(shape, dtype=dtype, device="npu").uniform_(low, high)', "CUDA device string"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed on the previous line already seeds the PrivateUse1 "
      "generator (unconfirmed in knowledge)"),
  ])

E("g18_conftest", "tests/conftest.py", "explicit_replacement",
  "FlagGems tests/conftest.py (--ref/--mode/--record options, xdist GPU pinning)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ids[idx]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ids[idx]',
      "ignored by the Ascend runtime -> all xdist workers land on NPU 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op when CUDA is not initialised; only cache hygiene"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only the pytest report header; wrongly prints 'no GPU visible'"),
    C("torch.cuda.device_count(),", "torch_cuda_api", "replace", False, "torch.npu.device_count(),",
      "header text only (unreachable until the check above is ported)"),
    C("torch.cuda.get_device_name(0),", "torch_cuda_api", "replace", False, "torch.npu.get_device_name(0),",
      "header text only (unreachable until the check above is ported)"),
  ])

E("g19_test_reduction", "tests/test_reduction_ops.py", "explicit_replacement",
  "FlagGems tests/test_reduction_ops.py (sum/amax/argmax/var_mean/cumsum/nonzero/index ops)", [
    C('inp = torch.randn(shape, dtype=dtype, device="cuda")', "tensor_to_device", "replace", True,
      'inp = torch.randn(shape, dtype=dtype, device=device)', "hard-coded CUDA device"),
    C("@pytest.mark.skipif(torch.cuda.get_device_properties(0).total_memory < 40 * 2**30,", "torch_cuda_api",
      "replace", True, "@pytest.mark.skipif(torch.npu.get_device_properties(0).total_memory < 40 * 2**30,",
      "evaluated at collection: raises and errors the whole module"),
    C("index = torch.empty(tuple(index_shape), dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "index = torch.empty(tuple(index_shape), dtype=torch.long).npu()", ".cuda() on an NPU host"),
    C('index = torch.randint(0, index_size, [floor(index_size * 0.8)]).to("cuda")', "tensor_to_device",
      "replace", True, 'index = torch.randint(0, index_size, [floor(index_size * 0.8)]).to(device)',
      ".to('cuda') on an NPU host"),
    C('@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="requires 2 GPUs")', "torch_cuda_api",
      "replace", True, '@pytest.mark.skipif(torch.npu.device_count() < 2, reason="requires 2 NPUs")',
      "0 on NPU -> multi-device test silently skipped"),
    C('inp = torch.randn(1024, 1024, device="cuda:1")', "tensor_to_device", "replace", True,
      'inp = torch.randn(1024, 1024, device="npu:1")', "CUDA device string"),
  ])

E("g20_test_norm", "tests/test_norm_ops.py", "explicit_replacement",
  "FlagGems tests/test_norm_ops.py (group/layer/rms norm, softmax, AMP checks)", [
    C('DEVICE = torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
      'DEVICE = torch.device("npu", torch.npu.current_device())', "raises at import without CUDA"),
    C('x = torch.randn(64, 1024, device="cuda", requires_grad=True)', "tensor_to_device", "replace", True,
      'x = torch.randn(64, 1024, device=DEVICE, requires_grad=True)', "CUDA device string"),
    C('w = torch.randn(1024, 1024, device="cuda")', "tensor_to_device", "replace", True,
      'w = torch.randn(1024, 1024, device=DEVICE)', "CUDA device string"),
    C('with flag_gems.use_gems(), torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace",
      True, 'with flag_gems.use_gems(), torch.autocast(device_type="npu", dtype=torch.float16):',
      "autocast('cuda') is disabled with a warning when CUDA is absent -> fp32 output, assert fails"),
    C('@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA for GradScaler")',
      "torch_cuda_api", "replace", True,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="needs an NPU for GradScaler")',
      "test silently skipped on NPU"),
    C("ln = torch.nn.LayerNorm(4096).cuda()", "tensor_to_device", "replace", True,
      "ln = torch.nn.LayerNorm(4096).npu()", "Module.cuda() on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: loss scaling silently off"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):", "CUDA autocast silently disabled on NPU"),
  ])

E("g21_perf_utils", "benchmark/performance_utils.py", "explicit_replacement",
  "FlagGems benchmark/performance_utils.py (Benchmark base class, timing modes)", [
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "benchmark inputs allocated on CUDA"),
    C('"nvidia-smi",', "device_capability_check", "replace", False, '"npu-smi", "info",',
      "FileNotFoundError is caught: clock info silently empty (informational only)"),
    C('os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0],', "env_var", "replace", False,
      'os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "0").split(",")[0],', "only feeds the clock query"),
    C("props = torch.cuda.get_device_properties(torch.cuda.current_device())", "torch_cuda_api", "replace",
      True, "props = torch.npu.get_device_properties(torch.npu.current_device())",
      "raises when --query is given"),
    C('"sm_count": props.multi_processor_count,', "device_capability_check", "replace", False,
      '"vector_cores": props.vector_core_num,', "empty on NPU properties; summary field only"),
    C("sync = torch.cuda.synchronize", "torch_cuda_api", "replace", True, "sync = torch.npu.synchronize",
      "e2e timing: raises without CUDA"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "s = torch.npu.Stream()",
      "graph mode warm-up stream"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "s.wait_stream(torch.npu.current_stream())", "no CUDA stream"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True, "with torch.npu.stream(s):",
      "no CUDA stream"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(s)", "no CUDA stream"),
    C("g = torch.cuda.CUDAGraph()", "compile_mode", "replace", True, "g = torch.npu.NPUGraph()",
      "CUDAGraph unavailable; NPUGraph is the listed NPU form (inference-only capture)"),
    C("with torch.cuda.graph(g):", "compile_mode", "replace", True, "with torch.npu.graph(g):",
      "CUDA graph capture context"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events unavailable"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events unavailable"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only between-shape hygiene"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "autouse fixture: raises (no current CUDA device)"),
    C("peak = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated() / 2**20", "silently reports 0 MiB without CUDA"),
  ])

E("g22_blas_perf", "benchmark/test_blas_perf.py", "explicit_replacement",
  "FlagGems benchmark/test_blas_perf.py (mm/bmm/addmm perf, cuBLAS references)", [
    C('torch.cuda.get_device_capability() < (9, 0), reason="FP8 GEMM needs sm_90"', "device_capability_check",
      "replace", True,
      'flag_gems.device == "npu", reason="cuBLASLt FP8 reference is CUDA-only (no NPU _scaled_mm before torch 2.9)"',
      "evaluated at collection: raises without CUDA; the fp8 cuBLASLt reference has no NPU kernel in the "
      "2.1/2.7 op lists, so the test is skipped rather than ported"),
  ])

E("g23_pyproject", "pyproject.toml", "explicit_replacement",
  "FlagGems pyproject.toml", [
    C('"torch>=2.1.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu>=2.1.0",',
      "torch_npu must be installed (wheel version must equal the torch version)"),
    C('"triton>=2.2.0",', "triton_kernel_tuning", "replace", True, '"triton-ascend>=3.2.0",',
      "upstream triton has no Ascend backend; triton-ascend is the NPU build"),
    C('"nvidia-ml-py>=12.535",', "custom_cuda_extension", "removal", False, None,
      "NVML binding; useless on Ascend (use npu-smi / torch.npu.utilization)"),
    C('"nvidia-cuda-runtime-cu12",', "custom_cuda_extension", "removal", False, None,
      "CUDA runtime wheel, optional extra"),
    C('"nvidia-cublas-cu12",', "custom_cuda_extension", "removal", False, None, "cuBLAS wheel, optional extra"),
  ])

E("g24_ci_workflow", ".github/workflows/gems-test.yaml", "explicit_replacement",
  "FlagGems .github/workflows (self-hosted GPU runners, accuracy + perf jobs)", [
    C("PIP_INDEX_URL: https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
      "PIP_INDEX_URL: https://pypi.org/simple",
      "CUDA wheel index as the primary index; torch itself is installed with an explicit --index-url"),
    C("runs-on: [self-hosted, linux, gpu-a100]", "device_type", "replace", True,
      "runs-on: [self-hosted, linux, ascend-910b]", "job must land on an NPU runner"),
    C('CUDA_VISIBLE_DEVICES: "0,1"', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1"',
      "ignored by the Ascend runtime"),
    C("run: nvidia-smi", "device_capability_check", "replace", True, "run: npu-smi info",
      "command not found -> step fails"),
    C("pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
      "replace", True,
      "pip install torch==2.4.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.4.0.post4",
      "CUDA wheel; and no torch_npu wheel exists for torch 2.4.1 (2.4.0 is the nearest paired version)"),
    C("pip install triton==3.0.0", "triton_kernel_tuning", "replace", True, "pip install triton-ascend==3.2.0",
      "upstream triton has no Ascend backend"),
    C("runs-on: [self-hosted, linux, gpu-h100]", "device_type", "replace", True,
      "runs-on: [self-hosted, linux, ascend-910b]", "perf job must land on an NPU runner"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", "replace", True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "ignored by the Ascend runtime"),
    C("run: sudo nvidia-smi -lgc 1980,1980", "device_capability_check", "removal", True, None,
      "GPU clock locking; nvidia-smi absent -> step fails"),
    C('pip install "torch==2.4.1" --index-url https://download.pytorch.org/whl/cu121', "import_torch_npu",
      "replace", True,
      'pip install "torch==2.4.0" --index-url https://download.pytorch.org/whl/cpu && pip install "torch-npu==2.4.0.post4"',
      "CUDA wheel; no torch_npu for torch 2.4.1"),
    C('pip install "triton==3.0.0"', "triton_kernel_tuning", "replace", True, 'pip install "triton-ascend==3.2.0"',
      "upstream triton has no Ascend backend"),
    C("run: sudo nvidia-smi -rgc", "device_capability_check", "removal", True, None,
      "nvidia-smi absent -> always() step fails the job"),
  ])

E("g25_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "FlagGems docker/Dockerfile (NGC PyTorch base)", [
    C("FROM nvcr.io/nvidia/pytorch:24.05-py3", "import_torch_npu", "replace", True,
      "FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "NGC CUDA image; the NPU image needs CANN (driver mounted from host)"),
    C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.5.1 torch-npu==2.5.1 --extra-index-url https://download.pytorch.org/whl/cpu",
      "the CANN base image has no torch / torch_npu (NGC image shipped torch)"),
    C("RUN pip install --no-cache-dir triton==3.0.0", "triton_kernel_tuning", "replace", True,
      "RUN pip install --no-cache-dir triton-ascend==3.2.0", "upstream triton has no Ascend backend"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia container runtime variable; no effect on Ascend (devices come from --device /dev/davinci*)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia container runtime only"),
    C("ENV CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only tuning knob; no effect"),
  ])

# ----------------------------------------------------------------------------------------- Liger-Kernel
E("l01_liger_utils", "src/liger_kernel/ops/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel src/liger_kernel/ops/utils.py (+ liger_kernel/utils.py infer_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "every op imports this module; torch.npu is only registered after import torch_npu on torch<2.5.1"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'elif torch.npu.is_available():\n        return "npu"',
      "infer_device returns 'cpu' on an NPU host -> tests/benchmarks allocate on CPU and Triton kernels fail"),
    C("MAX_FUSED_SIZE = 65536", "triton_kernel_tuning", "replace", False, "MAX_FUSED_SIZE = 16384",
      "a 65536-wide fp32 row plus weights exceeds the ~192 KB Ascend UB (UB size unconfirmed in knowledge)"),
    C("return torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd", "amp", "replace", False,
      "return torch_npu.npu.amp.custom_fwd, torch_npu.npu.amp.custom_bwd",
      "only on torch<2.4; CUDA custom_fwd tracks the CUDA autocast state, not NPU's (effect unconfirmed)"),
    C('if device.type == "cuda":', "device_type", "add_branch", False,
      'elif device.type == "npu":\n        return torch.npu.get_device_properties(device).vector_core_num',
      "npu falls through to 'return 1': single-program grids, correct but slow"),
  ])

E("l02_liger_rms_norm", "src/liger_kernel/ops/rms_norm.py", "device_branch_or_abstraction",
  "Liger-Kernel src/liger_kernel/ops/rms_norm.py", [
    C("_rms_norm_forward_kernel[(n_rows,)](", "triton_kernel_tuning", "replace", False,
      "_rms_norm_forward_kernel[(min(n_rows, num_vectorcores),)](",
      "one program per row: B*T > 65535 exceeds Ascend coreDim (unconfirmed); kernel needs a row loop"),
    C('if X.device.type == "cuda":', "device_type", "add_branch", False,
      'elif X.device.type == "npu":\n        sm_count = torch.npu.get_device_properties(X.device).vector_core_num',
      "npu keeps sm_count = 1: whole backward on one program, correct but very slow"),
  ])

E("l03_liger_cross_entropy", "src/liger_kernel/ops/cross_entropy.py", "kernel_rewrite",
  "Liger-Kernel src/liger_kernel/ops/cross_entropy.py (online-softmax CE with in-place grad)", [
    C("MAX_FUSED_SIZE = 65536 // 2  # the best size we found by manually tuning", "triton_kernel_tuning",
      "replace", False, "MAX_FUSED_SIZE = 8192  # Ascend UB budget",
      "32768 fp32 elements per block plus temporaries overflow the Ascend UB (unconfirmed)"),
    C("liger_cross_entropy_kernel[(n_rows,)](", "triton_kernel_tuning", "replace", False,
      "liger_cross_entropy_kernel[(min(n_rows, num_vectorcores),)](",
      "one program per token row; B*T routinely > 65535 (coreDim limit, unconfirmed)"),
    C("element_mul_kernel[(n_rows,)](", "triton_kernel_tuning", "replace", False,
      "element_mul_kernel[(min(n_rows, num_vectorcores),)](", "same per-row grid in the backward scale"),
  ])

E("l04_liger_bench_utils", "benchmark/scripts/utils.py", "explicit_replacement",
  "Liger-Kernel benchmark/scripts/utils.py (memory/speed harness, CSV writer)", [
    C("torch.cuda.memory.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated() / 2**20", "silently 0 MB without CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "raises 'Benchmarks can only be run on GPU.'"),
    C("gpu_name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(torch.npu.current_device())", "raises without CUDA"),
  ])

E("l05_liger_test_utils", "test/utils.py", "device_branch_or_abstraction",
  "Liger-Kernel test/utils.py (seeding, allclose, bf16 support, mini-model configs)", [
    C('if device == "cuda":', "device_type", "add_branch", False,
      'elif device == "npu":\n        torch.npu.manual_seed_all(seed)',
      "torch.manual_seed above already seeds the NPU generator (unconfirmed); cudnn flags are CUDA-only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if device == "npu":\n        return torch.npu.is_bf16_supported()',
      "no CUDA on an NPU host -> bf16 reported unsupported and every bf16 case is silently skipped"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
      "free, total = getattr(torch, device).mem_get_info()",
      "only reached when device == 'cuda'; on NPU the skip is never evaluated"),
    C('device == "cuda" and get_device_memory_gb()[1] < 40,', "device_type", "replace", False,
      'device in ("cuda", "npu") and get_device_memory_gb()[1] < 40,',
      "NPU never skips big tests; fine on 64 GB parts, OOM risk on smaller ones"),
  ])

E("l06_liger_example_training", "examples/huggingface/training.py", "explicit_replacement",
  "Liger-Kernel examples/huggingface/training.py (SFTTrainer with/without Liger)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu  # noqa: F401",
      "liger_kernel (ported) already imports torch_npu and torch_npu>=2.5.1 autoloads; explicit import is "
      "still the documented habit in entry scripts"),
    C('attn_implementation: str = "flash_attention_2"', "attention_kernel", "replace", True,
      'attn_implementation: str = "sdpa"',
      "flash-attn cannot be installed on NPU; SDPA dispatches to the NPU fused attention"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL is unavailable on Ascend"),
    C('model.loss_function = torch.compile(model.loss_function, mode="max-autotune")', "compile_mode", "replace",
      False, 'model.loss_function = torch.compile(model.loss_function, mode="max-autotune-no-cudagraphs")',
      "max-autotune implies CUDA graphs; NPU inductor/graph behaviour unconfirmed (opt-in flag only)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("peak_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
      "peak_gb = torch.npu.max_memory_allocated() / 2**30", "silently 0 GB without CUDA"),
    C('f"on {torch.cuda.get_device_name(local_rank)}"', "torch_cuda_api", "replace", True,
      'f"on {torch.npu.get_device_name(local_rank)}"', "raises without CUDA"),
  ])

E("l07_liger_run_script", "examples/huggingface/run_llama.sh", "explicit_replacement",
  "Liger-Kernel examples/huggingface/run_llama.sh (torchrun FSDP launcher)", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries/paths must be on the environment before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection ignored by the Ascend runtime"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL logging knob; no effect with HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL default value; no effect with HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P knob; no effect with HCCL"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1", "HCCL watchdog equivalent, already on by default"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check",
      "replace", True, 'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi missing: command substitution fails and set -e aborts the script"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check",
      "replace", True, "npu-smi info", "nvidia-smi missing -> set -e aborts"),
    C("--attn_implementation flash_attention_2 \\", "attention_kernel", "replace", True,
      "--attn_implementation sdpa \\", "flash-attn cannot be installed on NPU"),
  ])
