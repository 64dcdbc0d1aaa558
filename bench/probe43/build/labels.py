"""Labels for probe43 (hand-written synthetic upstream files; see ../README.md).

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
# The brief's "device_agnostic" style is spelled "device_branch_or_abstraction" in the shared builder.
EXPL, XFER, AGN = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

E("mamba_selective_scan_iface", "mamba_ssm/ops/selective_scan_interface.py", AGN,
  "state-spaces/mamba ops/selective_scan_interface.py (selective_scan_cuda + causal_conv1d_cuda autograd Functions)", [
    C("=import selective_scan_cuda", "custom_cuda_extension", R, True,
      "try:\n    import selective_scan_cuda\nexcept ImportError:\n    selective_scan_cuda = None",
      "nvcc-built extension: unguarded import raises ImportError on an NPU host and takes the whole module down"),
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, False,
      "custom_fwd = functools.partial(torch.amp.custom_fwd, device_type=\"npu\")",
      "plain @custom_fwd (no cast_inputs) only records the CUDA autocast state; harmless on NPU, "
      "torch_npu.npu.amp.custom_fwd is the documented NPU form"),
    C("return SelectiveScanFn.apply(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)",
      "custom_cuda_extension", B, True,
      "if u.device.type == \"npu\" or selective_scan_cuda is None:\n        return selective_scan_ref(u, delta, A, B, C, D, z, delta_bias, delta_softplus, return_last_state)",
      "every selective_scan_fn call ends in selective_scan_cuda.fwd/bwd; on NPU route to the pure-torch "
      "reference scan (or an Ascend C port of the kernel)"),
    C("return MambaInnerFn.apply(xz, conv1d_weight", "custom_cuda_extension", B, False,
      "if xz.device.type == \"npu\": return mamba_inner_ref(...)",
      "fused fast path; Mamba.forward only takes it when causal_conv1d is importable, which it is not on a "
      "plain NPU host"),
    C("=if torch.is_autocast_enabled():", "amp", R, False,
      "if torch.is_autocast_enabled(\"npu\"):",
      "CUDA-autocast query (and get_autocast_gpu_dtype below) is False under NPU autocast; only on the fused "
      "path that the NPU host does not take"),
  ])

E("mamba_simple_module", "mamba_ssm/modules/mamba_simple.py", AGN,
  "state-spaces/mamba modules/mamba_simple.py (Mamba mixer + Block, guarded causal_conv1d / Triton imports)", [
    C("x = self.act(self.conv1d(x)[..., :seqlen])", "unsupported_op_workaround", R, False,
      "x = self.act(self.conv1d(x.float()).to(x.dtype)[..., :seqlen])  # or an Ascend causal-conv op",
      "this is the path an NPU host takes (causal_conv1d absent); Ascend's 2.7.1 list gives nn.Conv1d input as "
      "fp16/fp32 only, so a bf16 depthwise conv may not run natively: unconfirmed"),
    C("fused_add_norm_fn = rms_norm_fn if isinstance(self.norm, RMSNorm) else layer_norm_fn", "npu_fused_op", B, False,
      "if hidden_states.device.type == \"npu\" and isinstance(self.norm, RMSNorm):\n"
      "    hidden_states, _, residual = torch_npu.npu_add_rms_norm(hidden_states, residual, self.norm.weight, self.norm.eps)",
      "fused add+RMSNorm: the Triton kernel needs triton-ascend; torch_npu.npu_add_rms_norm is the native fused op "
      "(performance; prenorm/residual_in_fp32 semantics must be matched by hand)"),
  ])

E("mamba2_ssd_combined", "mamba_ssm/ops/triton/ssd_combined.py", AGN,
  "state-spaces/mamba ops/triton/ssd_combined.py (Mamba-2 SSD chunked scan in Triton, split-conv1d fused path)", [
    C('custom_fwd = partial(torch.amp.custom_fwd, device_type="cuda")', "amp", R, False,
      'custom_fwd = partial(torch.amp.custom_fwd, device_type="npu")',
      "device-typed custom_fwd without cast_inputs: records CUDA autocast state only; harmless but wrong device"),
    C('custom_bwd = partial(torch.amp.custom_bwd, device_type="cuda")', "amp", R, False,
      'custom_bwd = partial(torch.amp.custom_bwd, device_type="npu")',
      "pairs with custom_fwd; backward replays the (always-off) CUDA autocast state"),
    C("triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 64}, num_stages=3, num_warps=8),",
      "triton_kernel_tuning", R, False,
      "triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32}),",
      "autotune space sized for SM80/SM90 shared memory and warps; triton-ascend block/stage limits unconfirmed"),
    C("with torch.cuda.device(dt.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(dt.device.index):",
      "torch.cuda.device(idx) initialises CUDA to switch devices: raises on an NPU host before the Triton launch"),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(x.device.index):",
      "same device guard around the chunk-state kernel launch"),
    C('causal_conv1d_cuda.causal_conv1d_fwd(rearrange(xBC, "b s d -> b d s"),', "custom_cuda_extension", R, True,
      'F.conv1d(F.pad(rearrange(xBC, "b s d -> b d s"), (conv1d_weight.shape[-1] - 1, 0)), conv1d_weight.unsqueeze(1), conv1d_bias, groups=conv1d_weight.shape[0])',
      "Mamba2 uses this split-conv1d path by default (use_mem_eff_path=True) and the import of causal_conv1d_cuda "
      "is guarded to None, so the call itself fails on NPU"),
    C("=if torch.is_autocast_enabled():", "amp", R, False,
      'if torch.is_autocast_enabled("npu"):',
      "under NPU autocast the CUDA query is False and get_autocast_gpu_dtype() is the CUDA dtype; F.linear below "
      "still autocasts, so the skipped cast only costs a conversion"),
  ])

E("mamba_triton_layernorm", "mamba_ssm/ops/triton/layer_norm.py", AGN,
  "state-spaces/mamba ops/triton/layer_norm.py (Triton add+LayerNorm/RMSNorm, SM-count backward, LayerNormLinearFn)", [
    C("from torch.cuda.amp import custom_fwd, custom_bwd", "amp", R, False,
      "from torch_npu.npu.amp import custom_fwd, custom_bwd",
      "decorators without cast_inputs; only the recorded autocast state is CUDA's"),
    C("triton.Config({}, num_warps=32),", "triton_kernel_tuning", R, False,
      "triton.Config({}, num_warps=1),",
      "warp-count autotune list is a GPU notion; triton-ascend mapping of num_warps unconfirmed"),
    C("MAX_FUSED_SIZE = 65536 // x.element_size()", "triton_kernel_tuning", R, False,
      "MAX_FUSED_SIZE = 16384 // x.element_size()",
      "one row per program with a 64 KB block assumes GPU registers/shared memory; Ascend on-chip buffer budget "
      "for triton-ascend unconfirmed"),
    C("with torch.cuda.device(x.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(x.device.index):",
      "CUDA device guard around the forward launch raises on an NPU host"),
    C("sm_count = torch.cuda.get_device_properties(x.device).multi_processor_count", "device_capability_check", R, True,
      "sm_count = torch.npu.get_device_properties(x.device).vector_core_num",
      "NPU device properties have no multi_processor_count (only name, total_memory, L2_cache_size, "
      "cube_core_num, vector_core_num); sizes the partial dW/dB buffers and the grid"),
    C("with torch.cuda.device(dy.device.index):", "torch_cuda_api", R, True,
      "with torch.npu.device(dy.device.index):",
      "same guard around the backward launch"),
    C("out_dtype=None if not torch.is_autocast_enabled() else torch.get_autocast_gpu_dtype(),", "amp", R, False,
      'out_dtype=None if not torch.is_autocast_enabled("npu") else torch.get_autocast_dtype("npu"),',
      "CUDA autocast query is False under NPU autocast: LN output stays fp32 (extra memory, not wrong)"),
    C("dtype = torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else y.dtype", "amp", R, False,
      'dtype = torch.get_autocast_dtype("npu") if torch.is_autocast_enabled("npu") else y.dtype',
      "same query before the fused linear; F.linear still autocasts on NPU"),
  ])

E("mamba_generation_cg", "mamba_ssm/utils/generation.py", EXPL,
  "state-spaces/mamba utils/generation.py (decode loop with CUDA-graph capture of the decoding step)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "library module: torch.npu.* below is registered by torch_npu's autoload (>= 2.5.1) or by the entry "
      "script's import; explicit import recommended"),
    C("start = torch.cuda.Event(enable_timing=enable_timing)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=enable_timing)",
      "created on every decode call, timing or not; torch.cuda.Event needs a CUDA build/device"),
    C("end = torch.cuda.Event(enable_timing=enable_timing)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=enable_timing)", "same"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "timing path; raises without CUDA"),
    C("cache.mempool = torch.cuda.graphs.graph_pool_handle()", "torch_cuda_api", R, True,
      "cache.mempool = torch.npu.graph_pool_handle()",
      "cg=True decoding: CUDA graph memory pool handle"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, True, "s = torch.npu.Stream()",
      "warm-up side stream before capture"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "s.wait_stream(torch.npu.current_stream())", "same"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, True, "with torch.npu.stream(s):", "same"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(s)", "same"),
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "graph = torch.npu.NPUGraph()",
      "NPUGraph is the NPU form (inference-only, which decoding is)"),
    C("with torch.cuda.graph(graph, pool=mempool):", "torch_cuda_api", R, True,
      "with torch.npu.graph(graph, pool=mempool):", "capture context"),
  ])

E("mamba_setup", "setup.py", EXPL,
  "state-spaces/mamba setup.py (selective_scan_cuda CUDAExtension, nvcc gencode flags, cached +cuXY wheel download)", [
    C("=if not SKIP_CUDA_BUILD:", "custom_cuda_extension", B, True,
      "if not SKIP_CUDA_BUILD and CUDA_HOME is not None:",
      "with no nvcc, CUDA_HOME is None: bare_metal_version is never bound, so the later "
      "`bare_metal_version >= Version(\"11.8\")` raises NameError and the CUDAExtension cannot build; the NPU "
      "install is the pure-Python package (scan via the reference path or an Ascend kernel)"),
    C("torch_cuda_version = parse(torch.version.cuda)", "custom_cuda_extension", R, True,
      "if torch.version.cuda is None: raise urllib.error.URLError(\"no CUDA wheel for this torch\")",
      "pip runs bdist_wheel -> CachedWheelsCommand; torch.version.cuda is None on the CPU/NPU torch build, so "
      "parse(None) raises before the from-source fallback is reached"),
    C('"triton",', "triton_kernel_tuning", R, False, '"triton-ascend",',
      "the Triton kernels (layer norm, SSD, selective_state_update) need the Ascend Triton backend; whether a plain "
      "`triton` requirement clobbers an installed triton-ascend is unconfirmed"),
    C('"causal_conv1d>=1.2.0",', "custom_cuda_extension", X, True, None,
      "causal-conv1d is another nvcc-built package: its install fails on an NPU host and takes this install with it"),
  ])

E("causal_conv1d_iface", "causal_conv1d/causal_conv1d_interface.py", AGN,
  "Dao-AILab/causal-conv1d causal_conv1d_interface.py (causal_conv1d_cuda fwd/bwd/update + torch references)", [
    C("=import causal_conv1d_cuda", "custom_cuda_extension", R, True,
      "try:\n    import causal_conv1d_cuda\nexcept ImportError:\n    causal_conv1d_cuda = None",
      "nvcc-built extension; unguarded import fails on an NPU host"),
    C("return CausalConv1dFn.apply(", "custom_cuda_extension", B, True,
      "if causal_conv1d_cuda is None or x.device.type == \"npu\":\n"
      "        return causal_conv1d_ref(x, weight, bias, initial_states, return_final_states, final_states_out, activation)",
      "route the NPU to the F.conv1d reference (seq_idx is not supported there and must be rejected or emulated)"),
    C("out = causal_conv1d_cuda.causal_conv1d_update(", "custom_cuda_extension", B, True,
      "if causal_conv1d_cuda is None: return causal_conv1d_update_ref(x.squeeze(-1) if unsqueeze else x, conv_state, weight, bias, activation, cache_seqlens)",
      "decode-step update calls the CUDA op directly"),
  ])

E("mamba_benchmark_gen", "benchmarks/benchmark_generation_mamba_simple.py", EXPL,
  "state-spaces/mamba benchmarks/benchmark_generation_mamba_simple.py (+ peak-memory/JSON reporting)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: registers the npu device and torch.npu before any \"npu\" device string is used"),
    C('device = "cuda"', "device_type", R, True, 'device = "npu"',
      "model placement for both the Mamba and the HF branch"),
    C('input_ids = torch.randint(1, 1000, (args.batch, args.promptlen), dtype=torch.long, device="cuda")',
      "device_type", R, True,
      'input_ids = torch.randint(1, 1000, (args.batch, args.promptlen), dtype=torch.long, device=device)',
      "hard-coded device string next to the device variable"),
    C("torch.random.manual_seed(0)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "prompt length and decode step change shapes every call; binary (non-JIT) operator mode avoids per-shape "
      "compilation (performance)"),
    C('attn_mask = torch.ones_like(input_ids, dtype=torch.long, device="cuda")', "device_type", R, True,
      'attn_mask = torch.ones_like(input_ids, dtype=torch.long, device=device)', "same"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "calls into the CUDA allocator binding; fails on a non-CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "timing barrier; raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)", "same"),
    C("peak_mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, True,
      "peak_mem_gb = torch.npu.max_memory_allocated() / 2**30",
      "CUDA never initialised: reports 0 GB instead of the NPU peak (silently wrong)"),
    C('"gpu": torch.cuda.get_device_name(),', "torch_cuda_api", R, True, '"gpu": torch.npu.get_device_name(),',
      "--json-out path; raises without CUDA"),
  ])

E("mamba2_minimal", "mamba2.py", EXPL,
  "tommyip/mamba2-minimal mamba2.py (pure-PyTorch SSD, no kernels; demo __main__)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the file doubles as the demo entry point; torch.npu / \"npu\" need torch_npu loaded (autoload only from 2.5.1)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "the only device-specific line: on an NPU host the demo silently runs on the CPU"),
    C("return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(x, self.weight, self.eps)[0]",
      "hand-written RMSNorm (gated variant multiplies by silu(z) first); torch_npu.npu_rms_norm is the fused "
      "kernel (performance)"),
  ])

E("vim_main", "vim/main.py", EXPL,
  "hustvl/Vim vim/main.py (DeiT-style ImageNet trainer for Vision Mamba, timm NativeScaler AMP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", R, True,
      "parser.add_argument('--device', default='npu',",
      "torch.device(args.device) then places model and batches on a CUDA device"),
    C("amp_autocast = torch.cuda.amp.autocast", "amp", R, True,
      "amp_autocast = torch.npu.amp.autocast",
      "CUDA autocast is inactive for NPU tensors: --if_amp (the default) silently trains in fp32"),
    C("loss_scaler = NativeScaler()", "amp", R, True,
      "loss_scaler = NativeScaler(device=\"npu\")  # timm >= 1.0; older timm: wrap torch.npu.amp.GradScaler",
      "timm's NativeScaler builds a CUDA GradScaler, which disables itself without CUDA: no loss scaling"),
    C("optimizer = create_optimizer(args, model_without_ddp)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model_without_ddp.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "performance only: msFmkTransplt's advice maps torch AdamW to the NPU fused AdamW (more memory); the timm "
      "param-group / no-weight-decay handling must be kept by hand"),
    C('print(f"Max memory allocated: {torch.cuda.max_memory_allocated() / 1024 ** 2:.0f} MB")', "torch_cuda_api", R, True,
      'print(f"Max memory allocated: {torch.npu.max_memory_allocated() / 1024 ** 2:.0f} MB")',
      "reports 0 MB every epoch on NPU"),
  ])

E("rwkv4neo_model", "RWKV-v4neo/src/model.py", EXPL,
  "BlinkDL/RWKV-LM RWKV-v4neo/src/model.py (wkv CUDA kernel JIT-built with cpp_extension.load, DeepSpeed FusedAdam, Lightning module)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "needed here only if the optimizer below becomes torch_npu.optim.NpuFusedAdam"),
    C('wkv_cuda = load(name=f"wkv_{T_MAX}_bf16"', "custom_cuda_extension", R, True,
      "wkv_cuda = None  # NPU: no nvcc; WKV is computed in torch (see RUN_CUDA)",
      "cpp_extension.load of .cu sources at import time (bf16 mode, the default for training): no nvcc on the "
      "host and `load` is marked unsupported on Atlas A2/A3"),
    C('wkv_cuda = load(name=f"wkv_{T_MAX}", sources=["cuda/wkv_op.cpp", "cuda/wkv_cuda.cu"]', "custom_cuda_extension", R, True,
      "wkv_cuda = None",
      "same JIT build for the fp16/fp32 modes"),
    C("return WKV.apply(B, T, C, w, u, k, v)", "custom_cuda_extension", B, True,
      "if wkv_cuda is None:\n        return wkv_torch(w, u, k, v)  # log-space parallel/recurrent WKV in torch ops\n    return WKV.apply(B, T, C, w, u, k, v)",
      "every time-mix forward goes through the CUDA WKV; the NPU port needs a torch (or Ascend C) WKV"),
    C("return FusedAdam(optim_groups, lr=self.args.lr_init", "fused_optimizer", R, False,
      "return torch_npu.optim.NpuFusedAdam(optim_groups, lr=self.args.lr_init, betas=self.args.betas, eps=self.args.adam_eps, weight_decay=0)",
      "DeepSpeed's FusedAdam is a CUDA op builder (cannot JIT without nvcc); whether the installed DeepSpeed's NPU "
      "accelerator supplies an NPU FusedAdam builder is unconfirmed"),
    C('if self.args.accelerator.upper() == "GPU":', "device_type", R, False,
      'if self.args.accelerator.upper() in ("GPU", "NPU"):',
      "with --accelerator npu the init falls to the CPU branch: correct but slow for large matrices"),
    C('m[n] = torch.empty((shape[0], shape[1]), device="cuda")', "device_type", R, False,
      'm[n] = torch.empty((shape[0], shape[1]), device="npu")',
      "only reached when the accelerator string is GPU, which the NPU run does not pass"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; the NPU cache is not released"),
  ])

E("rwkv4neo_train", "RWKV-v4neo/train.py", EXPL,
  "BlinkDL/RWKV-LM RWKV-v4neo/train.py (Lightning 1.9 Trainer.from_argparse_args, DeepSpeed strategy, RWKV_* env switches)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script; must precede the src.model import that builds the (ported) WKV path"),
    C("trainer = Trainer.from_argparse_args(", "distributed_framework", B, True,
      "trainer = Trainer.from_argparse_args(args, accelerator=NPUAccelerator() if args.accelerator == \"npu\" else args.accelerator,",
      "the launcher passes --accelerator gpu, which has no device on an NPU host; Lightning ships no NPU accelerator, "
      "so one has to be supplied here (which plugin is unconfirmed)"),
  ])

E("rwkv_pip_model", "rwkv/model.py", EXPL,
  "BlinkDL/ChatRWKV rwkv pip package rwkv/model.py (strategy strings like 'cuda fp16i8 *20 -> cpu fp32', optional RWKV_CUDA_ON kernels)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "library module; an 'npu fp16' strategy needs the npu device registered (autoload from 2.5.1, or the caller's import)"),
    C("STRATEGY_REGEX = r\"^(?:(?:^|->) *(?:cuda(?::[\\d]+)?|cpu|mps|dml)", "device_type", R, True,
      "STRATEGY_REGEX = r\"^(?:(?:^|->) *(?:cuda(?::[\\d]+)?|npu(?::[\\d]+)?|cpu|mps|dml) (?:fp(?:16|32)|bf16)(?:i8|i4|i3)?(?: \\*[\\d]+\\+?)? *)+$\"",
      "the strategy grammar only admits cuda/cpu/mps/dml devices: any 'npu ...' strategy raises ValueError, so the "
      "model can only be placed on the CPU"),
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", R, False,
      "raise RuntimeError('RWKV_CUDA_ON=1 is CUDA-only; leave it at 0 on Ascend')",
      "JIT build of wkv/mm8/cuBLAS kernels only when the user opts in with RWKV_CUDA_ON=1 (default 0, torch fallbacks otherwise)"),
    C("w[x] = w[x].pin_memory()", "pin_memory", R, False,
      "w[x] = w[x].pin_memory(device=\"npu\")",
      "streamed layers ('*N+' strategies) pin host memory for the device; the bare call's target without CUDA is "
      "unconfirmed and a failure is swallowed by the except (slower streaming, misleading RAM message)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "guarded by 'cuda' in the strategy string, so never reached with an npu strategy; the NPU cache is not released"),
  ])

E("rwkv6_peft_op", "rwkvt/operator/rwkvop.py", AGN,
  "JL-er/RWKV-PEFT rwkvt/operator/rwkvop.py (RWKV-6 wkv6/wkv6state CUDA kernels via cpp_extension.load, fla and torch backends)", [
    C('WKV_MODE = os.environ.get("WKV", "cuda")', "custom_cuda_extension", B, True,
      'WKV_MODE = os.environ.get("WKV", "cuda" if torch.cuda.is_available() else "fla")',
      "the default backend JIT-builds .cu kernels with cpp_extension.load at import (no nvcc, `load` unsupported on "
      "A2/A3); on NPU the default has to become the fla Triton path (triton-ascend) or the torch recurrence"),
  ])

E("rwkv_train_sh", "RWKV-v5/demo-training-run.sh", EXPL,
  "BlinkDL/RWKV-LM RWKV-v5/demo-training-run.sh (+ CUDA toolchain exports, nvidia-smi card count, NCCL env)", [
    C("export CUDA_HOME=/usr/local/cuda-12.1", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the NPU job needs the CANN environment (set_env.sh) where the CUDA toolchain was exported; without it torch_npu "
      "cannot find the CANN libraries"),
    C("export PATH=$CUDA_HOME/bin:$PATH", "env_var", X, False, None, "CUDA toolchain on PATH; set_env.sh sets up the CANN paths"),
    C("export LD_LIBRARY_PATH=$CUDA_HOME/lib64", "env_var", X, False, None, "same"),
    C("export TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None,
      "nvcc arch list for the JIT wkv build; meaningless once the kernels are not built"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "device selection for the NPU runtime is ASCEND_RT_VISIBLE_DEVICES"),
    C("GPU_PER_NODE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "device_type", R, True,
      "GPU_PER_NODE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent: with pipefail the script dies here (without it, --devices 0)"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL ignores NCCL_*; it picks a NIC by its own priority, which may or may not be the intended one"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "no effect under HCCL"),
    C('nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv', "device_type", R, True,
      'npu-smi info | tee "$PROJ_DIR/npus.txt"',
      "command not found aborts the script under set -e"),
    C("--accelerator gpu --devices $GPU_PER_NODE --precision bf16", "device_type", R, True,
      "--accelerator npu --devices $NPU_PER_NODE --precision bf16",
      "Lightning's gpu accelerator finds no CUDA device on an NPU host"),
    C("--strategy deepspeed_stage_2 --grad_cp $GRAD_CP", "distributed_framework", R, False,
      "--strategy ddp --grad_cp $GRAD_CP",
      "Lightning's DeepSpeedStrategy is believed to accept only CUDA accelerators; unconfirmed (DeepSpeed itself has an NPU accelerator)"),
  ])

E("fla_gla_chunk", "fla/ops/gla/chunk.py", AGN,
  "fla-org/flash-linear-attention fla/ops/gla/chunk.py, 2024 layout (Triton chunked GLA, smem-based block sizes)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "no cast_inputs: harmless on NPU, only the recorded autocast state is CUDA's"),
    C("major, minor = torch.cuda.get_device_capability(device_index)", "device_capability_check", R, True,
      "major, minor = torch.cuda.get_device_capability(device_index) if torch.cuda.is_available() else (0, 0)",
      "every forward picks its tile sizes from the CUDA compute capability: raises on an NPU host "
      "(and torch.npu.get_device_capability only returns a configured compatibility value)"),
    C("return 64, 32  # consumer Ampere / Ada: ~100KB", "triton_kernel_tuning", R, False,
      "return 64, 32  # Ascend: sized for the on-chip buffer",
      "the fallback tile sizes are what an NPU would get once the capability probe is bypassed; the right "
      "BT/BK for triton-ascend's buffer budget is unconfirmed"),
    C("num_warps=8 if BT == 128 else 4,", "triton_kernel_tuning", R, False,
      "num_warps=4,",
      "warp counts tuned per GPU tile; triton-ascend tuning unconfirmed"),
  ])

E("fla_short_conv", "fla/modules/convolution.py", AGN,
  "fla-org/flash-linear-attention fla/modules/convolution.py (ShortConvolution over causal-conv1d, FFT long convolution)", [
    C("use_fast_conv1d: Optional[bool] = True", "custom_cuda_extension", R, True,
      "use_fast_conv1d: Optional[bool] = causal_conv1d_fn is not None",
      "the guarded import falls back to None, but the default then raises RuntimeError in __init__: every "
      "GLA/DeltaNet/Mamba-style layer built with defaults fails on NPU; the nn.Conv1d path below is the fallback"),
  ])

E("fla_hybrid_attn", "fla/layers/attn.py", EXPL,
  "fla-org/flash-linear-attention fla/layers/attn.py (softmax-attention layer of the hybrid models, flash-attn varlen/SWA)", [
    C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", R, True,
      "import torch_npu",
      "flash-attn cannot be installed on NPU; the guard only defers the failure to __init__"),
    C("from flash_attn.bert_padding import index_first_axis, pad_input, unpad_input", "attention_kernel", R, True,
      "from fla.layers.utils import index_first_axis, pad_input, unpad_input  # vendored pure-torch copies",
      "the padding helpers are plain torch but live in the uninstallable package; _upad_input needs them"),
    C("=if flash_attn_func is None:", "attention_kernel", X, True, None,
      "raises ImportError in __init__ on any host without flash-attn: the model cannot even be built"),
    C("=o = flash_attn_varlen_func(", "attention_kernel", R, True,
      "o = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"TND\", atten_mask=causal_mask, sparse_mode=3, "
      "scale=self.head_dim ** -0.5, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
      "padded batch -> varlen FlashAttention; TND layout with cumulative lengths (sliding window via pre/next tokens)"),
    C("o = flash_attn_varlen_func(q.squeeze(0), k.squeeze(0), v.squeeze(0)", "attention_kernel", R, True,
      "o = torch_npu.npu_fusion_attention(q.squeeze(0), k.squeeze(0), v.squeeze(0), self.num_heads, \"TND\", atten_mask=causal_mask, "
      "sparse_mode=3, scale=self.head_dim ** -0.5, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0].unsqueeze(0)",
      "packed-sequence (cu_seqlens) training path"),
    C("o = flash_attn_func(q, k, v, causal=True, window_size=window)", "attention_kernel", R, True,
      "o = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", atten_mask=causal_mask, sparse_mode=3, scale=self.head_dim ** -0.5)[0]",
      "dense causal path"),
  ])

E("fla_flame_train", "flame/train.py", EXPL,
  "fla-org/flame-style torchrun pre-training loop for fla models (FSDP2 fully_shard, DCP checkpoints, MFU and allocator logging)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C('PEAK_FLOPS = {"H100": 989e12', "device_capability_check", R, False,
      'PEAK_FLOPS = {"Ascend910B": 313e12, "H100": 989e12, ...}',
      "NPU device names are not in the table, so MFU is computed against the A100 figure (log only; the "
      "Ascend peak value itself is unconfirmed)"),
    C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", X, False, None,
      "NCCL-only switch, ignored by HCCL"),
    C('dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", timeout=timedelta(minutes=30))', "NCCL is not available on NPU"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True,
      'device = torch.device("npu", local_rank)', "to_empty / batches go to this device"),
    C('mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))', "device_type", R, True,
      'mesh = init_device_mesh("npu", (world_size,), mesh_dim_names=("dp",))',
      "FSDP2 mesh device type"),
    C("torch.manual_seed(args.seed)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "--varlen packing gives a different cu_seqlens layout every step: dynamic shapes (performance)"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(args.seed)",
      "lazily queued without CUDA; the NPU generator is not seeded"),
    C("device_name = torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      "device_name = torch.npu.get_device_name(device)", "raises without CUDA"),
    C("device_mem_gib = torch.cuda.get_device_properties(device).total_memory / 1024 ** 3", "torch_cuda_api", R, True,
      "device_mem_gib = torch.npu.get_device_properties(device).total_memory / 1024 ** 3",
      "total_memory is one of the properties the NPU does report"),
    C("torch.cuda.memory._record_memory_history(max_entries=100000)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(max_entries=100000)",
      "--mem-snapshot path; CUDA allocator history"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "fails on a non-CUDA build"),
    C("torch.cuda.memory._dump_snapshot(snapshot_path)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._dump_snapshot(snapshot_path)", "--mem-snapshot path"),
    C("torch.cuda.memory._record_memory_history(enabled=None)", "torch_cuda_api", R, True,
      "torch_npu.npu.memory._record_memory_history(enabled=None)", "--mem-snapshot path"),
    C("max_reserved_gib = torch.cuda.max_memory_reserved(device) / 1024 ** 3", "torch_cuda_api", R, True,
      "max_reserved_gib = torch.npu.max_memory_reserved(device) / 1024 ** 3",
      "CUDA never initialised: logs 0 GiB"),
  ])

E("retnet_retention", "torchscale/component/multiscale_retention.py", AGN,
  "microsoft/torchscale component/multiscale_retention.py + RetNetRelPos (parallel / recurrent / chunkwise retention)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type=qr.device.type, enabled=False):",
      "meant to force the retention scores to fp32; it only disables CUDA autocast, so under NPU autocast the "
      "explicit .float() matmuls are cast back to fp16 and long sequences can overflow (silently wrong)"),
  ])

E("retnet_hf_train", "train.py", XFER,
  "syncdoth/RetNet train.py (HF Trainer script for RetNetForCausalLM, apex fused AdamW, NVTX step ranges)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "the natural port of an HF Trainer script: transfer_to_npu then covers torch.cuda.max_memory_allocated / "
      "reset_peak_memory_stats in the memory callback"),
    C("torch.cuda.nvtx.range_push(", "torch_cuda_api", R, True,
      "torch_npu.npu.mstx.range_start(f\"step{state.global_step}\")",
      "NVTX_PROFILE=1 path: torch.cuda.nvtx is not redirected by transfer_to_npu and has no NVTX library without CUDA; "
      "mstx is the NPU marker API (exact method names unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True,
      "torch_npu.npu.mstx.range_end(self._range_id)", "same"),
    C("tf32=True,", "device_capability_check", R, True, "tf32=False,",
      "TrainingArguments validates tf32 with is_torch_tf32_available, which transfer_to_npu deliberately evaluates "
      "against the real CUDA availability: raises ValueError on NPU with the transformers 4.3x of this repo's era "
      "(newer releases may map tf32 to an NPU setting: unconfirmed)"),
    C('optim="adamw_apex_fused",', "fused_optimizer", R, True, 'optim="adamw_torch",',
      "the Trainer imports apex.optimizers.FusedAdam, a CUDA extension (Ascend's apex patch ships NpuFused* instead); "
      "whether a transformers 'adamw_torch_npu_fused' choice exists in the installed version is unconfirmed"),
    C('ddp_backend="nccl",', "dist_backend", R, False, 'ddp_backend="hccl",',
      "transfer_to_npu rewrites nccl to hccl inside init_process_group; explicit hccl is clearer"),
  ])

E("s4_kernel", "models/s4/s4.py", AGN,
  "state-spaces/s4 models/s4/s4.py (S4D kernel: Cauchy/Vandermonde via CUDA extension > pykeops > naive, FFT convolution)", [
    C("backend = 'keops' if has_pykeops else 'naive'", "custom_cuda_extension", R, False,
      "backend = 'keops' if has_pykeops and torch.cuda.is_available() else 'naive'",
      "the CUDA-extension import falls back cleanly, but with pykeops installed the kernel switches to KeOps "
      "Genred(..., backend='GPU'), which compiles CUDA code and cannot take NPU tensors; unconfirmed in the knowledge"),
    C("vandermonde_matrix = torch.exp(x.unsqueeze(-1) * torch.arange(L).to(x))", "unsupported_op_workaround", R, False,
      "l = torch.arange(L, device=x.device, dtype=x.real.dtype); vandermonde_matrix = torch.polar(torch.exp(x.real.unsqueeze(-1) * l), x.imag.unsqueeze(-1) * l)",
      "the naive path the NPU ends up on runs complex64 exp/einsum; NPU coverage of complex elementwise ops is "
      "unconfirmed (possible CPU fallback)"),
    C("x_f = torch.fft.rfft(x, n=l_kernel + L)  # (B H L)", "unsupported_op_workaround", R, False,
      "x_f = torch.fft.rfft(x.float(), n=l_kernel + L)  # (B H L)",
      "Ascend lists FFT inputs as fp32-only; a half-precision activation reaching rfft is unconfirmed to work"),
  ])

E("s4_environment", "environment.yml", EXPL,
  "state-spaces/s4 & HazyResearch/safari-style conda environment.yml (pytorch-cuda, nvcc toolkit, pykeops, flash-attn)", [
    C("=- nvidia", "device_type", X, False, None,
      "CUDA channel; nothing from it is usable on the NPU host"),
    C("=- pytorch=2.0.1", "device_type", R, False, "# torch==2.1.0 and torch-npu==2.1.0.postN from pip (see below)",
      "with pytorch-cuda gone this resolves to a CPU build; torch_npu 2.0.1 only exists on the EOL 5.0.x line, so the "
      "port re-pins to a supported torch/torch_npu pair installed from pip"),
    C("=- pytorch-cuda=11.8", "device_type", X, True, None,
      "selects the CUDA variant of pytorch; not resolvable for an Ascend (typically aarch64) host"),
    C("- cudatoolkit-dev=11.8", "custom_cuda_extension", X, False, None,
      "only provides nvcc for the optional Cauchy extension, which is not built for NPU"),
    C("=- pip:", "import_torch_npu", A, True, "    - torch-npu==2.1.0.post12",
      "the adapter package has to be added next to the pinned torch"),
    C("- pykeops==2.1.2", "custom_cuda_extension", X, False, None,
      "makes S4 pick the KeOps GPU backend over the naive kernel; KeOps on an NPU host is unconfirmed"),
    C("- flash-attn==2.3.3", "attention_kernel", X, True, None,
      "source build needs nvcc/CUDA: pip fails and the environment is not created"),
    C("- causal-conv1d==1.1.1", "custom_cuda_extension", X, True, None, "same: nvcc-built package"),
    C("- mamba-ssm==1.1.1", "custom_cuda_extension", X, True, None,
      "builds selective_scan_cuda (or fetches a +cu wheel): fails without CUDA"),
  ])

E("hyena_operator", "src/models/sequence/hyena.py", AGN,
  "HazyResearch/safari src/models/sequence/hyena.py (HyenaOperator, implicit filter, optional fused fftconv / FusedDense)", [
    C("=if self.fused_fft_conv:", "custom_cuda_extension", B, False,
      "if self.fused_fft_conv and fftconv_func is not None:",
      "fftconv_func is None without the CUDA fftconv extension; the experiment config turns fused_fft_conv on, "
      "which is where the NPU port switches it off (a code-side fallback is the defensive variant)"),
    C("if fused_bias_fc and FusedDense is None:", "custom_cuda_extension", B, False,
      "if fused_bias_fc and FusedDense is None: fused_bias_fc = False  # nn.Linear on NPU",
      "flash-attn's FusedDense (fused_dense_lib, CUDA) is missing on NPU, so fused_bias_fc=True raises here; "
      "fixed in the config, or by falling back to nn.Linear"),
  ])

E("safari_config", "configs/experiment/pile/hyena_150m.yaml", EXPL,
  "HazyResearch/safari configs/experiment/pile/hyena_*.yaml (Hydra experiment: fused flash-attn kernels, Lightning trainer)", [
    C("=fused_mlp: True", "custom_cuda_extension", R, True, "fused_mlp: False",
      "flash-attn FusedMLP (fused_dense_lib CUDA extension): the model raises/ fails to build without it"),
    C("=fused_dropout_add_ln: True", "custom_cuda_extension", R, True, "fused_dropout_add_ln: False",
      "flash-attn dropout_layer_norm CUDA extension"),
    C("=fused_fft_conv: True", "custom_cuda_extension", R, True, "fused_fft_conv: False",
      "fused fftconv CUDA extension; the Hyena filter calls fftconv_func, which is None without it"),
    C("=fused_bias_fc: True", "custom_cuda_extension", R, True, "fused_bias_fc: False",
      "HyenaOperator raises ImportError('fused_dense is not installed')"),
    C("use_flash_attn: True", "attention_kernel", R, True, "use_flash_attn: False",
      "the hybrid attention layer imports flash-attn kernels; False keeps the torch attention path"),
    C("fused_bias_fc: True  # FusedDense", "custom_cuda_extension", R, True, "fused_bias_fc: False",
      "same FusedDense dependency in the MHA block"),
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning finds no CUDA device; an NPU accelerator must be registered by the training script"),
    C("=strategy: ddp", "dist_backend", R, False,
      "strategy: {_target_: pytorch_lightning.strategies.DDPStrategy, process_group_backend: hccl}",
      "Lightning derives the DDP backend from the device type (nccl only for cuda); whether it picks hccl for an "
      "NPU root device is unconfirmed"),
    C("gpu_mem: ${eval:", "device_type", R, True,
      "gpu_mem: ${eval:\"round(__import__('torch').npu.get_device_properties(0).total_memory / 1e9)\"}",
      "the resolver shells out to nvidia-smi: CalledProcessError when the config is resolved"),
  ])

E("safari_train", "train.py", EXPL,
  "HazyResearch/safari train.py (Hydra + Lightning SequenceLightningModule, device-count auto-config, NVML CPU affinity)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("pynvml.nvmlInit()", "device_capability_check", R, True,
      "return  # NPU: no NVML; bind cores with CPU_AFFINITY_CONF / numactl instead",
      "gpu_affinity defaults to on; NVML is absent on an NPU host, nvmlInit raises NVMLError"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "0 on an NPU host: trainer.devices is clamped to 0 and the trainer cannot start"),
    C("trainer = pl.Trainer(", "distributed_framework", B, True,
      "trainer = pl.Trainer(accelerator=NPUAccelerator() if config.trainer.accelerator == \"npu\" else config.trainer.accelerator,",
      "the config's accelerator needs an NPU accelerator object registered/passed here; Lightning ships none "
      "(plugin choice unconfirmed)"),
    C('model = torch.compile(model, mode="reduce-overhead")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "compile_model path; reduce-overhead means CUDA graphs, npugraphs is the NPU counterpart (behaviour of "
      "reduce-overhead on NPU unconfirmed)"),
  ])

E("xlstm_slstm_cell", "xlstm/blocks/slstm/cell.py", AGN,
  "NX-AI/xlstm xlstm/blocks/slstm/cell.py (sLSTM cell: JIT-compiled CUDA backend via cpp_extension vs vanilla torch)", [
    C('backend: Literal["vanilla", "cuda"] = "cuda"', "custom_cuda_extension", R, True,
      'backend: Literal["vanilla", "cuda"] = "vanilla" if not torch.cuda.is_available() else "cuda"',
      "the default builds the sLSTM CUDA kernels (nvcc, cuBLAS, __nv_bfloat16 defines) through cpp_extension.load "
      "when the cell is created; the vanilla torch recurrence is the NPU path"),
    C("@conditional_decorator(config.enable_automatic_mixed_precision, torch.cuda.amp.custom_fwd)", "amp", R, False,
      "@conditional_decorator(config.enable_automatic_mixed_precision, torch_npu.npu.amp.custom_fwd)",
      "inside the CUDA-backend Function only, which the NPU host no longer builds"),
  ])

E("xlstm_config_yaml", "experiments/parity_xlstm11.yaml", EXPL,
  "NX-AI/xlstm experiments/parity_xlstm*.yaml (training device, sLSTM backend, mlstm_kernels Triton kernel names)", [
    C("device: cuda", "device_type", R, True, "device: npu",
      "experiments/main.py moves model and batches to this device and autocasts with it"),
    C("chunkwise_kernel: chunkwise--triton_xl_chunk", "triton_kernel_tuning", R, False,
      "chunkwise_kernel: chunkwise--native_autograd",
      "mlstm_kernels Triton kernels need triton-ascend; whether they compile and run there is unconfirmed, the "
      "native PyTorch variants are the safe choice"),
    C("sequence_kernel: native_sequence__triton", "triton_kernel_tuning", R, False,
      "sequence_kernel: native_sequence__native", "same"),
    C("step_kernel: triton", "triton_kernel_tuning", R, False, "step_kernel: native", "same"),
    C("backend: cuda", "custom_cuda_extension", R, True, "backend: vanilla",
      "the sLSTM CUDA backend is compiled with nvcc at model construction"),
  ])

E("vim_requirements", "vim/vim_requirements.txt", EXPL,
  "hustvl/Vim vim/vim_requirements.txt (cu118 torch pins, nvidia-* runtime wheels, causal-conv1d / mamba-ssm, mmcv-full)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch for torch_npu comes from the cpu index (x86) or plain PyPI (aarch64)"),
    C("=# --- core framework ---", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "the adapter wheel matching the torch pin has to be added"),
    C("torch==2.1.1+cu118", "device_type", R, True, "torch==2.1.0",
      "a +cu118 build; torch_npu wheels exist for 2.1.0 (not 2.1.1), and the torch version must equal torch_npu's"),
    C("torchvision==0.16.1+cu118", "device_type", R, True, "torchvision==0.16.0",
      "CUDA build; torchvision 0.16.0 is the version paired with torch 2.1 for torchvision_npu"),
    C("torchaudio==2.1.1+cu118", "device_type", R, True, "torchaudio==2.1.0", "CUDA build pinned to torch 2.1.1"),
    C("triton==2.1.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "Mamba's Triton layer-norm / SSD kernels need the Ascend backend; triton-ascend versions pair with CANN 8.3+/8.5 "
      "(the exact pin for this stack is unconfirmed)"),
    C("nvidia-cublas-cu11==11.11.3.6", "device_type", X, False, None, "CUDA runtime wheel, unused on NPU"),
    C("nvidia-cuda-runtime-cu11==11.8.89", "device_type", X, False, None, "same"),
    C("nvidia-cudnn-cu11==8.7.0.84", "device_type", X, False, None, "same"),
    C("nvidia-nccl-cu11==2.19.3", "dist_backend", X, False, None, "NCCL wheel; HCCL ships with CANN"),
    C("nvidia-ml-py==12.535.133", "device_type", X, False, None, "NVML bindings; no NPU counterpart in this package"),
    C("mmcv-full==1.3.8", "custom_cuda_extension", R, False, "mmcv==1.7.2  # built with MMCV_WITH_OPS=1 MAX_JOBS=8 for NPU",
      "mmcv-full's ops are CUDA; NPU ops exist only in later mmcv releases (exact minimum version unconfirmed)"),
    C("causal-conv1d==1.1.1", "custom_cuda_extension", X, True, None,
      "nvcc build fails on the NPU host; the Mamba code falls back to nn.Conv1d once it is absent"),
    C("mamba-ssm==1.1.1", "custom_cuda_extension", R, True,
      "# mamba-ssm installed with MAMBA_SKIP_CUDA_BUILD=TRUE (pure-Python, ported scan)",
      "setup.py builds selective_scan_cuda / fetches a +cu wheel: fails without CUDA"),
  ])

E("fla_dockerfile", "docker/Dockerfile", EXPL,
  "flame / flash-linear-attention-style training Dockerfile on an NGC PyTorch base (flash-attn, causal-conv1d, mamba-ssm builds)", [
    C("FROM nvcr.io/nvidia/pytorch:24.05-py3", "device_type", R, True,
      "FROM <CANN 8.x base image for Atlas A2 with torch + torch_npu installed>",
      "NGC CUDA image: no CANN, no torch_npu; the Ascend base image name/tag is site-specific (unconfirmed)"),
    C('TORCH_CUDA_ARCH_LIST="8.0 8.6 8.9 9.0+PTX" \\', "env_var", X, False, None, "nvcc arch list"),
    C("CUDA_DEVICE_MAX_CONNECTIONS=1 \\", "env_var", X, False, None, "CUDA-runtime knob, no effect on NPU"),
    C("NCCL_ASYNC_ERROR_HANDLING=1 \\", "env_var", X, False, None, "NCCL-only"),
    C("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\", "env_var", R, False,
      "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \\",
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0); memory "
      "behaviour only"),
    C("RUN pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be built without CUDA: the image build stops here"),
    C("RUN pip install causal-conv1d==1.4.0 --no-build-isolation", "custom_cuda_extension", X, True, None,
      "nvcc build"),
    C("RUN MAMBA_FORCE_BUILD=TRUE pip install mamba-ssm==2.2.2 --no-build-isolation", "custom_cuda_extension", R, True,
      "RUN MAMBA_SKIP_CUDA_BUILD=TRUE pip install mamba-ssm==2.2.2 --no-build-isolation",
      "forces the selective_scan_cuda build; skip it and use the ported scan"),
    C("RUN pip install -U git+https://github.com/fla-org/flash-linear-attention", "triton_kernel_tuning", R, False,
      "RUN pip install triton-ascend && pip install --no-deps -U git+https://github.com/fla-org/flash-linear-attention",
      "fla's Triton kernels need triton-ascend; whether its `triton` dependency would pull the CUDA wheel over it "
      "is unconfirmed"),
    C('RUN python -c "import torch, fla, causal_conv1d, mamba_ssm;', "import_torch_npu", R, True,
      'RUN python -c "import torch, torch_npu, fla, mamba_ssm; print(torch.__version__, torch_npu.__version__, fla.__version__)"',
      "imports causal_conv1d (not installed on NPU) and prints torch.version.cuda: the build check fails"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "device_type", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi is absent: the container is reported unhealthy forever"),
    C('ENTRYPOINT ["torchrun", "--nproc_per_node=gpu"', "device_type", R, True,
      'ENTRYPOINT ["torchrun", "--nproc_per_node=8", "-m", "flame.train"]',
      "torchrun's 'gpu' value counts CUDA devices and raises when CUDA is unavailable"),
  ])
