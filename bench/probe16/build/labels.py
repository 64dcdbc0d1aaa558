"""Labels for probe16 (hand-written synthetic upstream files; see ../README.md).

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


IMP = "import torch\nimport torch_npu"
K = "/work/shared/knowledge/torch-npu-migration.md"
TSV = "/work/shared/knowledge/ops/torch_api_npu_support_2.7.1.tsv"
UNS = "/work/shared/knowledge/ops/mstt_unsupported_torch_apis_2.7.txt"
NOTE_IMP = ("registers the NPU device and torch.npu (autoload only since torch_npu 2.5.1, still recommended; "
            + K + " §1.1)")


def imp(sub="=import torch", req=True):
    return C(sub, "import_torch_npu", A, req, "import torch_npu", NOTE_IMP)


# ---------------------------------------------------------------- torchtitan
E("titan_train", "torchtitan/train.py", "explicit_replacement",
  "torchtitan train.py (FSDP2 + device mesh, memory monitor, NCCL flight recorder)", [
    imp(),
    C('device_type = "cuda"', "device_type", R, True, 'device_type = "npu"',
      "drives the device mesh, input placement and torch.device; 'cuda' fails on an NPU host"),
    C("device_module = torch.cuda", "torch_cuda_api", R, True, "device_module = torch.npu",
      "set_device is called through this module; torch.cuda needs a CUDA build"),
    C("TORCH_NCCL_DUMP_ON_TIMEOUT", "env_var", X, False, None,
      "NCCL flight-recorder knob, no effect under HCCL (unconfirmed HCCL equivalent)"),
    C("TORCH_NCCL_TRACE_BUFFER_SIZE", "env_var", X, False, None,
      "NCCL flight-recorder knob, no effect under HCCL (unconfirmed HCCL equivalent)"),
    C("TORCH_NCCL_AVOID_RECORD_STREAMS", "env_var", X, False, None,
      "ProcessGroupNCCL-only setting; ignored by ProcessGroupHCCL (unconfirmed)"),
    C('backend="cuda:nccl,cpu:gloo"', "dist_backend", R, True, 'backend="npu:hccl,cpu:gloo",',
      "NCCL is unavailable on Ascend; HCCL is the collective backend (" + K + " §2.4)"),
    C("device_name = torch.cuda.get_device_name(device)", "torch_cuda_api", R, True,
      "device_name = torch.npu.get_device_name(device)", "torch.npu.get_device_name ✔ in " + TSV),
    C("device_capacity = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", R, True,
      "device_capacity = torch.npu.get_device_properties(device).total_memory",
      "NPU properties expose total_memory (" + K + " §2.8)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "torch.cuda.* raises without a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "cache release only; no functional effect"),
    C("stats = torch.cuda.memory_stats()", "torch_cuda_api", R, True, "stats = torch.npu.memory_stats()",
      "torch.npu.memory_stats ✔ in " + TSV),
    C('model.to_empty(device="cuda")', "tensor_to_device", R, True, 'model.to_empty(device="npu")',
      "meta-initialised model must be materialised on the NPU"),
    C("labels = labels.cuda()", "tensor_to_device", R, True, "labels = labels.npu()",
      "Tensor.cuda() needs CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises on an NPU host"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize raises on an NPU host"),
  ])

E("titan_toml", "torchtitan/models/llama3/train_configs/llama3_8b.toml", "explicit_replacement",
  "torchtitan Llama-3 8B TOML preset (float8 converter, async TP)", [
    C('=converters = ["float8"]', "unsupported_op_workaround", R, True, "converters = []",
      "torchtitan's Float8Converter raises unless CUDA SM89+ is visible (see titan_float8); fp8 training on "
      "Atlas A2 unconfirmed (_scaled_mm has an NPU kernel only in the torch2.9.0_v26.1.0 op list)"),
    C("enable_async_tensor_parallel = true", "distributed_framework", R, False,
      "enable_async_tensor_parallel = false",
      "async TP relies on CUDA symmetric memory + inductor micro-pipelining; NPU support unconfirmed"),
    C("enable_fsdp_float8_all_gather = true", "unsupported_op_workaround", R, False,
      "enable_fsdp_float8_all_gather = false", "float8 all-gather is moot once float8 is dropped"),
    C("=precompute_float8_dynamic_scale_for_fsdp = true", "unsupported_op_workaround", R, False,
      "precompute_float8_dynamic_scale_for_fsdp = false", "float8-only option"),
  ])

E("titan_float8", "torchtitan/components/float8.py", "device_branch_or_abstraction",
  "torchtitan float8 converter gated on CUDA SM89 capability (torchao.float8)", [
    imp(),
    C("return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (", "device_capability_check",
      R, True, "return torch.npu.is_available() and os.environ.get(\"TITAN_NPU_FP8\") == \"1\"",
      "CUDA SM capability has no NPU meaning: get_device_capability returns None / an env-configured value "
      "(" + K + " §2.8, " + TSV + "); is_available() is False on NPU so the gate is always closed"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", R, False, "    if torch.npu.is_available():",
      "log-only helper; on NPU it just prints the 'no CUDA' branch"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, False,
      "name = torch.npu.get_device_name()", "only reached on CUDA; NPU has no major/minor (" + K + " §2.8)"),
  ])

E("titan_parallelize", "torchtitan/models/llama3/infra/parallelize.py", "explicit_replacement",
  "torchtitan parallelize_llama (TP plan, async TP, selective AC, compile, FSDP2)", [
    C("parallelize_module(model, tp_mesh, {", "unsupported_op_workaround", R, True,
      "apply_manual_tp(model, tp_mesh, loss_parallel)  # or run with tensor_parallel_degree=1",
      "parallelize_module is ✘ on Atlas A2/A3 in " + TSV + " and listed in " + UNS),
    C("        parallelize_module(", "unsupported_op_workaround", R, True,
      "        apply_manual_tp_block(", "parallelize_module ✘ on Atlas A2/A3 (" + TSV + ")"),
    C("torch._inductor.config._micro_pipeline_tp = True", "distributed_framework", X, False, None,
      "async-TP micro-pipelining targets CUDA symmetric memory; NPU support unconfirmed"),
    C("enable_symm_mem_for_group(tp_mesh.get_group().group_name)", "distributed_framework", X, False, None,
      "torch symmetric memory is CUDA-backed; NPU support unconfirmed"),
    C("torch.ops.aten._scaled_dot_product_flash_attention.default,", "attention_kernel", R, False,
      "torch.ops.npu.npu_fusion_attention.default,",
      "on NPU SDPA dispatches to the NPU fused attention, so the CUDA flash op never matches the save list "
      "and attention is recomputed (perf only; NPU op name in torch.ops unconfirmed)"),
    C("with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):", "attention_kernel", R,
      False, "with contextlib.nullcontext():",
      "CUDA SDPA backend selection; NPU SDPA has its own fused path (torch.backends.cuda.sdp_kernel ✘ in "
      + UNS + "; behaviour of torch.nn.attention.sdpa_kernel on NPU unconfirmed)"),
  ])

# ---------------------------------------------------------------- torchtune
E("tune_recipe", "recipes/full_finetune_distributed.py", "explicit_replacement",
  "torchtune full_finetune_distributed recipe (FSDP2, activation offloading, memory snapshots)", [
    imp(),
    C('if self._log_peak_memory_stats and self._device.type != "cuda":', "device_type", R, False,
      'if self._log_peak_memory_stats and self._device.type not in ("cuda", "npu"):',
      "peak-memory logging silently switched off on NPU (logging only)"),
    C('if self._enable_activation_offloading and self._device.type != "cuda":', "device_type", R, True,
      'if self._enable_activation_offloading and self._device.type not in ("cuda", "npu"):',
      "raises RuntimeError on NPU whenever activation offloading is enabled (the shipped config enables it)"),
    C("torch.cuda.memory._record_memory_history()", "torch_cuda_api", R, False,
      "torch.npu.memory._record_memory_history()",
      "NPU versions exist (" + K + " §2.3); only reached when peak-memory logging stays on, which the "
      "unchanged device check turns off on NPU"),
    C('torch.cuda.memory._dump_snapshot("memory_snapshot.pickle")', "torch_cuda_api", R, False,
      'torch.npu.memory._dump_snapshot("memory_snapshot.pickle")', "same path as above"),
    C("torch.cuda.memory._record_memory_history(enabled=None)", "torch_cuda_api", R, False,
      "torch.npu.memory._record_memory_history(enabled=None)", "same path as above"),
    C('init_process_group("cuda:nccl,cpu:gloo")', "dist_backend", R, True, 'init_process_group("npu:hccl,cpu:gloo")',
      "NCCL unavailable on Ascend; HCCL backend (" + K + " §2.4)"),
  ])

E("tune_yaml", "recipes/configs/llama3_1/8B_full.yaml", "explicit_replacement",
  "torchtune llama3_1/8B_full.yaml recipe config", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "recipe builds its torch.device from this key"),
    C("=enable_activation_offloading: True  # True reduces memory", "device_type", R, False,
      "enable_activation_offloading: False  # True reduces memory",
      "torchtune's offloading uses CUDA streams; NPU behaviour unconfirmed"),
    C("=cuda: True", "torch_cuda_api", R, False, "cuda: False",
      "ProfilerActivity.CUDA; NPU traces come from torch_npu.profiler (" + K + " §2.5); profiler is disabled"),
  ])

# ---------------------------------------------------------------- Composer
E("composer_lpln", "composer/algorithms/low_precision_layernorm/low_precision_layernorm.py",
  "device_branch_or_abstraction", "Composer LowPrecisionLayerNorm algorithm (autocast dtype lookup, apex fallback)", [
    C('if tensor.device.type == "cuda":', "amp", R, True, 'if tensor.device.type in ("cuda", "npu"):',
      "under NPU autocast the helper falls through to NotImplementedError"),
    C("dtype = torch.get_autocast_gpu_dtype()", "amp", R, True,
      "dtype = torch.get_autocast_dtype(tensor.device.type)",
      "get_autocast_gpu_dtype reports the CUDA autocast dtype, not the NPU one"),
  ])

E("composer_memmon", "composer/callbacks/memory_monitor.py", "device_branch_or_abstraction",
  "Composer MemoryMonitor callback", [
    C("=import torch.cuda", "import_torch_npu", R, True, "import torch_npu",
      "needs the torch.npu memory API; " + NOTE_IMP),
    C("if model_device.type not in ('cuda', 'meta'):", "device_type", R, False,
      "if model_device.type not in ('cuda', 'npu', 'meta'):", "warning only"),
    C("if model_device.type != 'cuda':", "device_type", R, True, "if model_device.type not in ('cuda', 'npu'):",
      "callback silently logs nothing on NPU"),
    C("memory_stats = torch.cuda.memory_stats()", "torch_cuda_api", R, True, "memory_stats = torch.npu.memory_stats()",
      "reached once the device guard admits NPU; torch.cuda raises there"),
    C("torch.cuda.max_memory_allocated() / 1.0e9", "torch_cuda_api", R, True,
      "memory_report['peak_allocated_mem'] = torch.npu.max_memory_allocated() / 1.0e9", "as above"),
    C("torch.cuda.max_memory_reserved() / 1.0e9", "torch_cuda_api", R, True,
      "memory_report['peak_reserved_mem'] = torch.npu.max_memory_reserved() / 1.0e9", "as above"),
    C("_, total_mem = torch.cuda.mem_get_info()", "torch_cuda_api", R, True, "_, total_mem = torch.npu.mem_get_info()",
      "torch.npu.mem_get_info ✔ in " + TSV),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "as above"),
  ])

E("composer_speedmon", "composer/callbacks/speed_monitor.py", "device_branch_or_abstraction",
  "Composer SpeedMonitor MFU (device-name → peak FLOPS table)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "returns 0 on NPU, so MFU is silently never reported"),
    C("device_name = torch.cuda.get_device_name().lower()", "torch_cuda_api", R, True,
      "device_name = torch.npu.get_device_name().lower()",
      "torch.npu.get_device_name returns e.g. 'Ascend910B3' (/work/shared/knowledge/ascend-host-formats.md §5.3)"),
    C("=device_name = None", "device_capability_check", B, False,
      "elif device_name.startswith('ascend910b'): device_name = 'ascend910b'",
      "needs an Ascend entry in the peak-FLOPS table for MFU (peak figures not in the knowledge: unconfirmed)"),
  ])

# ---------------------------------------------------------------- nanotron
E("nanotron_context", "src/nanotron/parallel/context.py", "explicit_replacement",
  "nanotron ParallelContext (process groups, set_device, NVTX ranges)", [
    imp(),
    C('DistributedBackend = Literal["gloo", "mpi", "nccl"]', "dist_backend", R, False,
      'DistributedBackend = Literal["gloo", "mpi", "nccl", "hccl"]', "type alias only"),
    C('backend: DistributedBackend = "nccl",', "dist_backend", R, False, 'backend: DistributedBackend = "hccl",',
      "default is only checked by the assert below"),
    C('assert backend == "nccl"', "dist_backend", R, False, 'assert backend in ("nccl", "hccl"), "Only nccl/hccl backends are supported."',
      "must accept hccl once the default changes"),
    C('new_group = dist.new_group(ranks=group_ranks, backend="nccl")', "dist_backend", R, True,
      'new_group = dist.new_group(ranks=group_ranks, backend="hccl")', "NCCL unavailable on Ascend"),
    C("torch.cuda.set_device(torch.cuda.device(device_id))", "torch_cuda_api", R, True,
      "torch.npu.set_device(device_id)", "torch.cuda.set_device raises without CUDA"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", R, True, "    if torch.npu.is_available():",
      "else-branch raises NotImplementedError on an NPU host"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)",
      "reached once the guard admits NPU"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', "NCCL unavailable on Ascend"),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", R, True, "range_id = torch_npu.npu.mstx.range_start(name)",
      "torch.cuda.nvtx is not redirected and needs a CUDA build; use torch_npu.npu.mstx (" + K
      + " §2.1; exact mstx signature unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "as above"),
  ])

E("nanotron_pyproject", "pyproject.toml", "explicit_replacement",
  "nanotron pyproject.toml (flash-attn / mamba extras, triton, NVML monitoring)", [
    C('"torch>=2.1.0",', "import_torch_npu", R, True, '"torch==2.7.1", "torch-npu==2.7.1.post2",',
      "torch_npu must be installed and its version must equal torch's (" + K + " §1.1-1.2)"),
    C('"triton>=2.1.0",', "triton_kernel_tuning", R, False, '"triton-ascend",',
      "Triton kernels need triton-ascend on NPU (" + K + " §6); whether the plain wheel breaks install: unconfirmed"),
    C('"flash-attn>=2.5.0",', "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (" + K + " §6)"),
    C('"causal-conv1d>=1.2.0",', "custom_cuda_extension", X, True, None,
      "nvcc-built CUDA extension; transfer_to_npu forces is_causal_conv1d_available False (" + K + " §2.7)"),
    C('"mamba-ssm>=1.2.0",', "custom_cuda_extension", X, True, None,
      "nvcc-built CUDA extension; transfer_to_npu forces is_mamba_ssm_available False (" + K + " §2.7)"),
    C('"nvidia-ml-py>=12.535.108",', "torch_cuda_api", X, False, None,
      "installs but NVML has no NPU devices; use torch.npu.utilization / npu-smi (" + K + " §6)"),
    C('"nvitop",', "torch_cuda_api", X, False, None, "NVML-based monitor; nothing to show on NPU"),
  ])

# ---------------------------------------------------------------- LitGPT
E("litgpt_pretrain", "litgpt/pretrain.py", "explicit_replacement",
  "LitGPT pretrain.py on Lightning Fabric (FSDP, precision pick, nvidia-smi topo check)", [
    imp(),
    C('accelerator="cuda", devices=devices', "distributed_framework", R, True,
      'accelerator=NPUAccelerator(), devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision, loggers=[logger]',
      "Fabric refuses accelerator='cuda' without CUDA; Lightning has no built-in NPU accelerator, a custom "
      "Accelerator is needed (unconfirmed which plugin)"),
    C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "amp", R, True,
      "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
      "on NPU this falls back to 16-mixed (fp16 + loss scaling) although Atlas A2 runs bf16; "
      "is_bf16_supported is in torch_npu.npu (" + K + " §2.1)"),
    C('if fabric.device.type == "cuda":', "device_type", R, False, 'if fabric.device.type in ("cuda", "npu"):',
      "final memory print only"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", R, False,
      'fabric.print(f"Memory used: {torch.npu.max_memory_allocated() / 1e9:.02f} GB")', "only after the guard above"),
  ])

# ---------------------------------------------------------------- OpenNMT-py
E("opennmt_dist", "onmt/utils/distributed.py", "explicit_replacement",
  "OpenNMT-py distributed utils (all_gather_list with torch.cuda.ByteTensor)", [
    imp(),
    C("all_gather_list._in_buffer = torch.cuda.ByteTensor(max_size)", "tensor_to_device", R, True,
      'all_gather_list._in_buffer = torch.empty(max_size, dtype=torch.uint8, device="npu")',
      "legacy CUDA tensor type; needs a CUDA build"),
    C("torch.cuda.ByteTensor(max_size) for i in range(world_size)", "tensor_to_device", R, True,
      'torch.empty(max_size, dtype=torch.uint8, device="npu") for i in range(world_size)', "as above"),
    C("torch.distributed.all_gather(out_buffers, in_buffer.cuda())", "tensor_to_device", R, True,
      "torch.distributed.all_gather(out_buffers, in_buffer.npu())", "Tensor.cuda() needs CUDA"),
    C("torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "torch.npu.set_device(device_id)",
      "torch.cuda.set_device raises without CUDA"),
  ])

E("opennmt_train", "onmt/bin/train.py", "explicit_replacement",
  "OpenNMT-py train entry point (spawned multi-GPU workers, --gpu_backend)", [
    imp(),
    C('default="nccl",', "dist_backend", R, True, 'default="hccl",',
      "feeds init_process_group(backend=opt.gpu_backend); NCCL unavailable on Ascend"),
    C("if nb_gpu > torch.cuda.device_count():", "torch_cuda_api", R, True, "if nb_gpu > torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an NPU host, so every multi-device run aborts"),
    C("are visible\" % (nb_gpu, torch.cuda.device_count()))", "torch_cuda_api", R, False,
      'raise ValueError("Requested %d NPUs but only %d are visible" % (nb_gpu, torch.npu.device_count()))',
      "error message only"),
    C("        torch.cuda.set_device(device_id)", "torch_cuda_api", R, True, "        torch.npu.set_device(device_id)",
      "single-device path"),
    C('return torch.device("cuda", device_id)', "device_type", R, True, 'return torch.device("npu", device_id)',
      "device string"),
  ])

# ---------------------------------------------------------------- fairscale
E("fairscale_fsdp", "examples/train_fsdp_lm.py", "explicit_replacement",
  "fairscale FullyShardedDataParallel LM benchmark (mp.spawn, ShardedGradScaler)", [
    imp(),
    C("from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP", "distributed_framework", R, False,
      "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP",
      "fairscale FSDP drives torch.cuda streams internally; NPU support unconfirmed (note torch FSDP1 itself is "
      "✘ in " + TSV + ", fully_shard ✔)"),
    C("layer = nn.TransformerEncoderLayer(", "unsupported_op_workaround", R, True,
      "layer = PreNormBlock(d_model, nhead, 4 * d_model, dropout)",
      "torch.nn.TransformerEncoderLayer ✘ on Atlas A2/A3 in " + TSV + " (forward also in " + UNS + ")"),
    C('parser.add_argument("--world-size", type=int, default=torch.cuda.device_count())', "torch_cuda_api", R, True,
      'parser.add_argument("--world-size", type=int, default=torch.npu.device_count())',
      "0 on an NPU host: spawns no workers"),
    C("dist_init(rank, args.world_size, tmp_file)", "dist_backend", R, True,
      'dist.init_process_group("hccl", init_method=f"file://{tmp_file}", rank=rank, world_size=args.world_size)',
      "fairscale's test helper chooses NCCL only when CUDA is available (unconfirmed detail); on NPU it would "
      "fall to gloo, which cannot reduce NPU tensors"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", "needs CUDA"),
    C("torch.cuda.manual_seed(0)", "torch_cuda_api", R, False, "torch.npu.manual_seed(0)",
      "lazily queued, silently no effect without CUDA"),
    C("optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr)",
      "performance only (" + K + " §3.5, §5); interplay with fairscale flat params unconfirmed"),
    C('compute_device=torch.device("cuda", rank),', "device_type", R, True, 'compute_device=torch.device("npu", rank),',
      "device string"),
    C("model = auto_wrap(model.cuda())", "tensor_to_device", R, True, "model = auto_wrap(model.npu())", "Module.cuda()"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
    C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", R, True, "batch = batch.npu(non_blocking=True)",
      "Tensor.cuda()"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast does not cover NPU tensors; torch_npu.npu.amp.autocast ✔ (" + TSV + ")"),
    C("scaler = ShardedGradScaler() if args.amp else None", "amp", R, True,
      'scaler = torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler(device="npu") if args.amp else None',
      "fairscale's scaler derives from torch.cuda.amp.GradScaler, which disables itself without CUDA: fp16 "
      "without loss scaling"),
    C("torch.cuda.synchronize(rank)", "torch_cuda_api", R, True, "torch.npu.synchronize(rank)", "needs CUDA"),
    C("peak = torch.cuda.max_memory_allocated(rank) / 2**30", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(rank) / 2**30", "needs CUDA"),
    C('assert torch.cuda.is_available(), "This benchmark requires CUDA"', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "This benchmark requires an NPU"', "fails on an NPU host"),
  ])

E("fairscale_pipe", "benchmarks/pipe.py", "explicit_replacement",
  "fairscale.nn.Pipe single-process pipeline benchmark across local GPUs", [
    imp(),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_devices = torch.npu.device_count()",
      "0 on an NPU host, assert fails"),
    C('balance = balance_by_time(num_devices, model, sample, device=torch.device("cuda"))', "device_type", R, True,
      'balance = balance_by_time(num_devices, model, sample, device=torch.device("npu"))', "device string"),
    C('devices = [torch.device(f"cuda:{i}") for i in range(num_devices)]', "device_type", R, True,
      'devices = [torch.device(f"npu:{i}") for i in range(num_devices)]', "device string"),
    C("pipe = Pipe(model, balance=balance", "distributed_framework", R, False,
      "pipe = build_pipeline_stages(model, balance, devices)  # torch.distributed.pipelining",
      "fairscale Pipe schedules on torch.cuda streams internally; NPU support unconfirmed "
      "(torch.distributed.pipelining is ✔ in " + TSV + ")"),
    C("optimizer = Adam(pipe.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(pipe.parameters(), lr=args.lr)", "performance only (" + K + " §5)"),
    C("torch.cuda.synchronize(out_device)", "torch_cuda_api", R, True, "torch.npu.synchronize(out_device)", "needs CUDA"),
    C("torch.cuda.max_memory_allocated(d) / 2**30", "torch_cuda_api", R, True,
      'print(f"npu:{d} peak memory: {torch.npu.max_memory_allocated(d) / 2**30:.2f} GiB")', "needs CUDA"),
  ])

# ---------------------------------------------------------------- monitoring
E("lightning_gpustats", "src/callbacks/gpu_stats_monitor.py", "explicit_replacement",
  "Lightning GPUStatsMonitor callback (nvidia-smi --query-gpu)", [
    C('if shutil.which("nvidia-smi") is None:', "torch_cuda_api", R, True, 'if shutil.which("npu-smi") is None:',
      "constructor raises on an NPU host (no nvidia-smi)"),
    C('if trainer.strategy.root_device.type != "cuda":', "device_type", R, True,
      'if trainer.strategy.root_device.type not in ("cuda", "npu"):', "setup raises on NPU"),
    C('[shutil.which("nvidia-smi"), f"--query-gpu={gpu_query}"', "torch_cuda_api", R, True,
      '["npu-smi", "info", "-t", "usages", "-i", gpu_ids],',
      "npu-smi has no --query-gpu; per-device key : value output "
      "(/work/shared/knowledge/ascend-host-formats.md §2.2; -i takes one id)"),
    C('stats = [[_to_float(x) for x in s.split(", ")]', "torch_cuda_api", R, True,
      "stats = _parse_npu_smi_usages(result.stdout, queries)",
      "CSV parsing of nvidia-smi output would turn npu-smi text into zeros"),
    C('stat_keys.append(("utilization.gpu", "%"))', "torch_cuda_api", R, False,
      'stat_keys.append(("Aicore Usage Rate", "%"))', "npu-smi field name (ascend-host-formats.md §2.2)"),
    C('stat_keys.extend([("memory.used", "MB"), ("memory.free", "MB"), ("utilization.memory", "%")])',
      "torch_cuda_api", R, False, 'stat_keys.extend([("HBM Capacity", "MB"), ("HBM Usage Rate", "%")])',
      "npu-smi field names (ascend-host-formats.md §2.2)"),
  ])

E("wandb_sysmon", "trainer/utils/system_monitor.py", "explicit_replacement",
  "W&B/TensorBoard system-metrics thread sampling NVML (pynvml)", [
    C("=import pynvml", "torch_cuda_api", X, False, None,
      "the import itself succeeds when nvidia-ml-py is installed; the NVML calls are what fail"),
    imp(),
    C("=pynvml.nvmlInit()", "torch_cuda_api", X, True, None,
      "NVML init fails without an NVIDIA driver; pynvml has no NPU equivalent (" + K + " §6)"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", R, True,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "device visibility on Ascend is ASCEND_RT_VISIBLE_DEVICES (/work/shared/knowledge/ascend-distributed.md §1)"),
    C("device_ids = list(range(pynvml.nvmlDeviceGetCount()))", "torch_cuda_api", R, True,
      "device_ids = list(range(torch.npu.device_count()))", "NVML"),
    C("self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in device_ids]", "torch_cuda_api", R, True,
      "self.handles = list(device_ids)", "NVML"),
    C("self.driver = pynvml.nvmlSystemGetDriverVersion()", "torch_cuda_api", R, True,
      'self.driver = read_ascend_driver_version("/usr/local/Ascend/driver/version.info")',
      "NVML; Ascend driver version lives in driver/version.info (ascend-host-formats.md §3.4)"),
    C("self.names = [pynvml.nvmlDeviceGetName(h) for h in self.handles]", "torch_cuda_api", R, True,
      "self.names = [torch.npu.get_device_name(i) for i in self.handles]", "NVML"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(h)", "torch_cuda_api", R, True, "util = torch.npu.utilization(h)",
      "torch.npu.utilization ✔ in " + TSV),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(h)", "torch_cuda_api", R, True, "free, total = torch.npu.mem_get_info(h)",
      "torch.npu.mem_get_info ✔ in " + TSV),
    C("temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)", "torch_cuda_api", R, True,
      'temp = npu_smi_field(h, "common", "Temperature")',
      "NVML; temperature only via npu-smi info -t common (field name unconfirmed)"),
    C("power = pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0", "torch_cuda_api", R, True,
      'power = npu_smi_field(h, "common", "Power")', "NVML; npu-smi field name unconfirmed"),
    C('out[f"system/gpu.{idx}.gpu"] = float(util.gpu)', "torch_cuda_api", R, True,
      'out[f"system/npu.{idx}.util"] = float(util)', "torch.npu.utilization returns a number, not an NVML struct"),
    C('out[f"system/gpu.{idx}.memoryAllocated"] = 100.0 * mem.used / mem.total', "torch_cuda_api", R, True,
      'out[f"system/npu.{idx}.memoryAllocated"] = 100.0 * (total - free) / total', "follows the mem_get_info change"),
    C("except pynvml.NVMLError as err:", "torch_cuda_api", R, False, "except RuntimeError as err:",
      "NVML exception type"),
    C("        if not torch.cuda.is_available():", "torch_cuda_api", R, True, "        if not torch.npu.is_available():",
      "torch memory metrics silently empty on NPU"),
    C("dev = torch.cuda.current_device()", "torch_cuda_api", R, True, "dev = torch.npu.current_device()",
      "reached once the guard admits NPU"),
    C('"torch/allocated_gb": torch.cuda.memory_allocated(dev) / 2**30,', "torch_cuda_api", R, True,
      '"torch/allocated_gb": torch.npu.memory_allocated(dev) / 2**30,', "as above"),
    C('"torch/reserved_gb": torch.cuda.memory_reserved(dev) / 2**30,', "torch_cuda_api", R, True,
      '"torch/reserved_gb": torch.npu.memory_reserved(dev) / 2**30,', "as above"),
    C('"torch/max_allocated_gb": torch.cuda.max_memory_allocated(dev) / 2**30,', "torch_cuda_api", R, True,
      '"torch/max_allocated_gb": torch.npu.max_memory_allocated(dev) / 2**30,', "as above"),
    C("=pynvml.nvmlShutdown()", "torch_cuda_api", X, True, None, "NVML; raises without an initialised NVML"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs CUDA"),
  ])

E("tb_profile", "tools/profile_train_step.py", "explicit_replacement",
  "torch.profiler + TensorBoard trace script (ProfilerActivity.CUDA, GradScaler)", [
    imp(),
    C("from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler",
      "torch_cuda_api", R, True,
      "from torch_npu.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler",
      "NPU kernels are traced by torch_npu.profiler; torch.profiler.ProfilerActivity is ✘ in " + TSV
      + " (" + K + " §2.5); record_function stays from torch.profiler"),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")', "device string"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.fp16)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.train.fp16)",
      "CUDA GradScaler disables itself without CUDA: fp16 without loss scaling"),
    C("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", R, True,
      "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],", "CUDA activity collects nothing on NPU"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg.train.fp16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=cfg.train.fp16):',
      "CUDA autocast does not cover NPU tensors"),
    C('sort_by="cuda_time_total"', "torch_cuda_api", R, False,
      'print(prof.key_averages().table(sort_by="device_time_total", row_limit=25))',
      "CUDA column name; key used by torch_npu's key_averages unconfirmed"),
    C('sort_by="self_cuda_memory_usage"', "torch_cuda_api", R, False,
      'print(prof.key_averages().table(sort_by="self_device_memory_usage", row_limit=15))', "as above, unconfirmed"),
    C("torch.cuda.memory._dump_snapshot(", "torch_cuda_api", R, True,
      'torch.npu.memory._dump_snapshot(os.path.join(args.logdir, "mem_snapshot.pickle"))',
      "NPU version exists (" + K + " §2.3); CUDA one needs CUDA"),
    C("torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", R, True,
      'print(f"max allocated: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")', "needs CUDA"),
  ])

E("optuna_multigpu", "examples/pytorch_multigpu_search.py", "explicit_replacement",
  "Optuna one-trial-per-GPU parallel search with a device queue", [
    imp(),
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", R, True, 'device = torch.device(f"npu:{gpu_id}")',
      "device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "needs CUDA"),
    C(".cuda(gpu_id), target.cuda(gpu_id)", "tensor_to_device", R, True,
      "data, target = data.view(data.size(0), -1).npu(gpu_id), target.npu(gpu_id)", "Tensor.cuda()"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "ignored on Ascend, so the re-indexed ids 0..n-1 hit the wrong physical NPUs (ascend-distributed.md §1)"),
    C("gpu_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", R, True,
      "gpu_ids = list(range(torch.npu.device_count()))", "0 on an NPU host: exits with 'no CUDA devices'"),
  ])

# ---------------------------------------------------------------- RAPIDS / GBDT
CUDF = "RAPIDS cuDF/cuML need an NVIDIA GPU (general knowledge; no Ascend build mentioned in " + K + ")"
E("rapids_features", "pipelines/gpu_feature_pipeline.py", "explicit_replacement",
  "RAPIDS cuDF/cuML feature pipeline handing tensors to PyTorch via DLPack", [
    C("=import cudf", "custom_cuda_extension", R, True, "import pandas as pd", CUDF),
    C("=import cupy as cp", "custom_cuda_extension", R, True, "import numpy as cp",
      "cupy has no Ascend support (" + K + " §6)"),
    imp(),
    C("from cuml.decomposition import PCA", "custom_cuda_extension", R, True, "from sklearn.decomposition import PCA", CUDF),
    C("from cuml.preprocessing import StandardScaler, TargetEncoder", "custom_cuda_extension", R, True,
      "from sklearn.preprocessing import StandardScaler, TargetEncoder", CUDF),
    C("from torch.utils.dlpack import from_dlpack", "unsupported_op_workaround", X, True, None,
      "torch.utils.dlpack.from_dlpack ✘ on Atlas A2/A3 (" + TSV + ")"),
    C("df = cudf.read_parquet(", "custom_cuda_extension", R, True,
      'df = pd.read_parquet(path, columns=CAT_COLS + NUM_COLS + ["click", "user_id"])', CUDF),
    C('df["log_user_n"] = cp.log1p(df["user_n"].values)', "custom_cuda_extension", R, True,
      'df["log_user_n"] = np.log1p(df["user_n"].values)', "cupy"),
    C("enc = TargetEncoder(n_folds=5, smooth=20, seed=42)", "custom_cuda_extension", R, True,
      "enc = TargetEncoder(cv=5, smooth=20, random_state=42)", "sklearn's TargetEncoder has different argument names"),
    C("return from_dlpack(mat.to_dlpack())", "unsupported_op_workaround", R, True,
      'return torch.from_numpy(mat.to_numpy()).to("npu")', "DLPack hand-off ✘ on Ascend (" + TSV + ")"),
    C("scaled = scaler.fit_transform(df[feat_cols])", "custom_cuda_extension", R, True,
      "scaled = pd.DataFrame(scaler.fit_transform(df[feat_cols]), columns=feat_cols)",
      "sklearn returns an ndarray where cuML returned a cuDF frame; to_torch indexes by column"),
    C("cp.asnumpy(pca.explained_variance_ratio_.values)", "custom_cuda_extension", R, True,
      'log.info("PCA explained variance: %.3f", float(pca.explained_variance_ratio_.sum()))', "cupy / cuDF attribute"),
    C("reduced = cudf.DataFrame(reduced)", "custom_cuda_extension", R, True, "reduced = pd.DataFrame(reduced)", CUDF),
    C('y = torch.as_tensor(cp.asarray(df["click"].values), device="cuda").float()', "device_type", R, True,
      'y = torch.as_tensor(df["click"].values, device="npu").float()', "cupy + CUDA device string"),
    C("assert x.is_cuda and y.is_cuda", "device_type", R, True, "assert x.is_npu and y.is_npu",
      "is_cuda is False for NPU tensors"),
    C('g = torch.Generator(device="cuda").manual_seed(seed)', "device_type", R, True,
      'g = torch.Generator(device="npu").manual_seed(seed)', "device string"),
    C("cp.cuda.Device(int(os.environ.get(\"LOCAL_RANK\", 0))).use()", "torch_cuda_api", R, True,
      'torch.npu.set_device(int(os.environ.get("LOCAL_RANK", 0)))', "cupy device selection"),
  ])

XGB = "XGBoost/LightGBM GPU learners need CUDA/OpenCL GPU builds (general library behaviour, not in the Ascend knowledge)"
E("gbdt_stack", "src/train_stack.py", "explicit_replacement",
  "XGBoost + LightGBM GPU learners stacked with a PyTorch MLP (Kaggle-style)", [
    imp(),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"', "an NPU host silently trains the MLP on CPU"),
    C('tree_method="gpu_hist",', "unsupported_op_workaround", R, True, 'tree_method="hist",', XGB),
    C('predictor="gpu_predictor",', "unsupported_op_workaround", X, True, None, XGB),
    C("=gpu_id=0,", "unsupported_op_workaround", X, False, None, "GPU ordinal; meaningless on CPU (unconfirmed effect)"),
    C('device="gpu",', "unsupported_op_workaround", R, True, 'device="cpu",', XGB),
    C("gpu_platform_id=0,", "unsupported_op_workaround", X, False, None, "ignored once device='cpu'"),
    C("gpu_device_id=0,", "unsupported_op_workaround", X, False, None, "ignored once device='cpu'"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA"),
    C("xtr_t = torch.tensor(xtr, dtype=torch.float32).pin_memory()", "pin_memory", R, False,
      'xtr_t = torch.tensor(xtr, dtype=torch.float32).pin_memory(device="npu")',
      "pins for the default (CUDA) accelerator; behaviour with torch_npu unconfirmed"),
    C("ytr_t = torch.tensor(ytr, dtype=torch.float32).pin_memory()", "pin_memory", R, False,
      'ytr_t = torch.tensor(ytr, dtype=torch.float32).pin_memory(device="npu")', "as above, unconfirmed"),
    C("=with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():",
      "CUDA autocast does not cover NPU tensors"),
    C("with torch.no_grad(), torch.cuda.amp.autocast():", "amp", R, True,
      "with torch.no_grad(), torch.npu.amp.autocast():", "as above"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(args.seed)",
      "lazily queued, no effect without CUDA"),
  ])

# ---------------------------------------------------------------- cluster / launch files
HD = "/work/shared/knowledge/ascend-distributed.md"
HF = "/work/shared/knowledge/ascend-host-formats.md"
E("k8s_pytorchjob", "deploy/k8s/pytorchjob-llama-sft.yaml", "explicit_replacement",
  "Kubeflow PyTorchJob requesting nvidia.com/gpu on an NGC image", [
    C("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "device_type", R, True, "accelerator: huawei-Ascend910",
      "selector matches no NPU node, so the pod never schedules (Ascend node-label name unconfirmed)"),
    C("- key: nvidia.com/gpu", "device_type", R, False, "- key: huawei.com/Ascend910",
      "tolerating a missing taint is harmless; NPU node taints unconfirmed"),
    C("image: nvcr.io/nvidia/pytorch:24.05-py3", "device_type", R, True,
      "image: <registry>/cann-torch-npu:8.5.0-py3.10",
      "NGC image has no CANN / torch_npu (image name is a placeholder)"),
    C("- name: NCCL_DEBUG", "env_var", R, False, "- name: ASCEND_GLOBAL_LOG_LEVEL",
      "NCCL logging knob; no effect under HCCL (" + HF + " §3.8 lists ASCEND_GLOBAL_LOG_LEVEL)"),
    C("- name: NCCL_SOCKET_IFNAME", "env_var", R, False, "- name: HCCL_SOCKET_IFNAME",
      "HCCL reads HCCL_SOCKET_IFNAME (" + HD + " §1); without it HCCL auto-picks a NIC"),
    C("- name: NCCL_IB_HCA", "env_var", X, False, None, "Mellanox/NCCL-only"),
    C("- name: TORCH_NCCL_ASYNC_ERROR_HANDLING", "env_var", R, False, "- name: HCCL_ASYNC_ERROR_HANDLING",
      "torch_npu watchdog variable (" + HD + " §1)"),
    C("- name: PYTORCH_CUDA_ALLOC_CONF", "env_var", R, False, "- name: PYTORCH_NPU_ALLOC_CONF",
      "torch_npu reads PYTORCH_NPU_ALLOC_CONF (" + K + " §1.5 feature gates)"),
    C("=nvidia.com/gpu: 8", "device_type", R, True, "huawei.com/Ascend910: 8",
      "without huawei.com/Ascend910 the pod gets no /dev/davinci* or driver mounts (" + HF + " §4.2)"),
    C('=nvidia.com/gpu: "8"', "device_type", R, True, 'huawei.com/Ascend910: "8"', "as above (requests)"),
    C('nvidia.com/gpu.present: "true"', "device_type", R, True, "accelerator: huawei-Ascend910",
      "worker selector matches no NPU node (label name unconfirmed)"),
    C('- key: "nvidia.com/gpu"', "device_type", R, False, '- key: "huawei.com/Ascend910"', "as for the master"),
    C('image: "nvcr.io/nvidia/pytorch:24.05-py3"', "device_type", R, True,
      'image: "<registry>/cann-torch-npu:8.5.0-py3.10"', "as for the master"),
    C('- name: "NCCL_DEBUG"', "env_var", R, False, '- name: "ASCEND_GLOBAL_LOG_LEVEL"', "as for the master"),
    C('- name: "NCCL_SOCKET_IFNAME"', "env_var", R, False, '- name: "HCCL_SOCKET_IFNAME"', "as for the master"),
    C('- name: "PYTORCH_CUDA_ALLOC_CONF"', "env_var", R, False, '- name: "PYTORCH_NPU_ALLOC_CONF"', "as for the master"),
    C("nvidia.com/gpu: '8'", "device_type", R, True, "huawei.com/Ascend910: '8'", "as for the master"),
    C("nvidia.com/gpu: 8  # requests must equal limits", "device_type", R, True,
      "huawei.com/Ascend910: 8  # requests must equal limits for extended resources", "as for the master"),
  ])

E("slurm_sbatch", "scripts/train_multinode.sbatch", "explicit_replacement",
  "Slurm sbatch multi-node torchrun launch (--gres=gpu, NCCL env, nvidia-smi)", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "no Ascend Slurm GRES integration found (" + HD + " §7.2, §8): GRES name is site-specific, unconfirmed"),
    C("=set -euo pipefail", "env_var", R, True, "set -eo pipefail",
      "CANN's set_env.sh fails under set -u (" + HF + " §4.2)"),
    C("module load cuda/12.1 cudnn/8.9 nccl/2.18", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or torch_npu cannot load libhccl/libascendcl (" + HF + " §3.8, §4.1)"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only knob (no NPU effect, unconfirmed)"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_IB_HCA=", "env_var", X, False, None, "NCCL/InfiniBand-only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL host-NIC selection (" + HD + " §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (" + HD + " §1)"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, False, None, "NVLink-only"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "torch_npu allocator variable (perf)"),
    C("nvidia-smi --query-gpu=index,name,memory.total", "torch_cuda_api", R, True,
      "srun --ntasks=$NNODES --ntasks-per-node=1 npu-smi info -l",
      "nvidia-smi is absent on NPU nodes; under set -e the job aborts here"),
    C("=srun --ntasks=$NNODES --ntasks-per-node=1 nvidia-smi", "torch_cuda_api", R, False,
      "srun --ntasks=$NNODES --ntasks-per-node=1 npu-smi info", "failure-path diagnostics only"),
  ])

E("titan_run_sh", "run_train.sh", "explicit_replacement",
  "torchtitan run_train.sh torchrun launcher", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend, so the subset request silently uses devices 0..n-1 "
      "(" + HD + " §1)"),
    C('export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"', "env_var", R, False,
      'export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"', "torch_npu allocator variable (perf)"),
    C("export CUDA_LAUNCH_BLOCKING=1", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=1",
      "debug-only; NPU equivalent per " + HF + " §4.6"),
    C("export NCCL_DEBUG=INFO", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "debug-only; log-level mapping unconfirmed"),
    C('nvidia-smi -L | head -n "${NGPU}"', "torch_cuda_api", R, False, 'npu-smi info -l | head -n "${NGPU}"',
      "without pipefail the missing nvidia-smi does not stop set -e; check is silently skipped"),
    C('PYTORCH_ALLOC_CONF="expandable_segments:True" \\', "env_var", R, False,
      'PYTORCH_NPU_ALLOC_CONF="expandable_segments:True" \\',
      "whether torch_npu honours the generic PYTORCH_ALLOC_CONF name is unconfirmed"),
  ])

# ---------------------------------------------------------------- Kaggle / CPU-only / packaging
E("kaggle_train", "train.py", "explicit_replacement",
  "Kaggle notebook export: timm EfficientNet, AMP, DataParallel, channels_last", [
    imp(),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "an NPU host silently trains on CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued, no effect without CUDA"),
    C('"| GPUs:", torch.cuda.device_count())', "torch_cuda_api", R, False,
      'print("Using device:", CFG.device, "| NPUs:", torch.npu.device_count())', "print only"),
    C("=with torch.cuda.amp.autocast(enabled=CFG.apex):", "amp", R, True, "with torch.npu.amp.autocast(enabled=CFG.apex):",
      "CUDA autocast does not cover NPU tensors"),
    C("with torch.cuda.amp.autocast(enabled=CFG.apex, dtype=torch.float16):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=CFG.apex, dtype=torch.float16):", "as above"),
    C("out = model(images.cuda()).squeeze(1).sigmoid()", "tensor_to_device", R, True,
      "out = model(images.npu()).squeeze(1).sigmoid()", "Tensor.cuda()"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", X, False, None,
      "DataParallel is ✘ on Ascend (" + TSV + "); the unchanged guard is 0 on NPU so the branch is never taken"),
    C("model = nn.DataParallel(model)", "distributed_framework", X, False, None,
      "torch.nn.DataParallel ✘ (" + TSV + "); use DDP; not reached on NPU with the unchanged guard"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", X, True, None,
      "channels_last is listed as not supported on NPU (use contiguous) (" + K + " §2.8)"),
    C("optimizer = torch.optim.AdamW(model.parameters(), lr=CFG.lr", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=CFG.lr, weight_decay=CFG.weight_decay)",
      "performance only; msFmkTransplt's advice (" + K + " §3.5)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=CFG.apex)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=CFG.apex)", "CUDA GradScaler disables itself without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
  ])

E("cpu_prep", "scripts/prepare_pretrain_data.py", "device_branch_or_abstraction",
  "CPU-only tokenisation / sharding script (near-miss: mentions GPU/CUDA only in text)", [])

E("docker_train", "docker/Dockerfile", "explicit_replacement",
  "NGC-based training Dockerfile (flash-attn, xformers, apex cuda_ext, nccl-tests)", [
    C("ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:24.05-py3", "device_type", R, True,
      "ARG BASE_IMAGE=<registry>/cann:8.5.0-910b-ubuntu22.04-py3.10",
      "NGC base has no CANN/driver userspace; CANN image tag is a placeholder"),
    C("CUDA_HOME=/usr/local/cuda \\", "env_var", X, False, None, "CUDA toolkit path; unused on NPU"),
    C('TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0" \\', "env_var", X, False, None, "nvcc arch list; unused on NPU"),
    C("NCCL_VERSION=2.21.5 \\", "env_var", X, False, None, "NCCL-only"),
    C("RUN git clone --depth 1 https://github.com/NVIDIA/nccl-tests.git", "dist_backend", R, True,
      "# interconnect checks: CANN ships hccl_test (ascend-distributed.md §4)",
      "nccl-tests needs CUDA + NCCL to build; the image build fails"),
    C("make MPI=0 CUDA_HOME=${CUDA_HOME}", "dist_backend", X, True, None, "as above"),
    C("RUN pip install --index-url https://download.pytorch.org/whl/cu124 torch==2.4.0", "import_torch_npu", R, True,
      "RUN pip install torch==2.4.0 torch-npu==2.4.0.post4 torchvision==0.19.0",
      "CUDA wheel index; torch_npu pairs with plain/CPU torch of the same version (" + K + " §1.1-1.2)"),
    C("RUN pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (" + K + " §6)"),
    C('RUN pip install "xformers==0.0.27.post2"', "attention_kernel", X, True, None,
      "xformers has no NPU backend (" + K + " §6)"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", R, True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && bash scripts/build.sh",
      "Ascend/apex is a patch over NVIDIA apex built by scripts/build.sh (" + K + " §6; clone URL unconfirmed)"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" .',
      "custom_cuda_extension", X, True, None, "--cuda_ext needs nvcc"),
    C("RUN pip install torchao==0.5.0", "unsupported_op_workaround", R, False,
      "RUN pip install torchao==0.5.0", "drop the cu124 index; torchao's float8 paths on NPU unconfirmed"),
    C('RUN python -c "import torch, flash_attn;', "import_torch_npu", R, True,
      'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
      "flash_attn import fails the build once flash-attn is dropped"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \\", "torch_npu allocator variable (perf)"),
    C("NCCL_ASYNC_ERROR_HANDLING=1 \\", "env_var", R, False, "HCCL_ASYNC_ERROR_HANDLING=1 \\",
      "torch_npu watchdog variable (" + HD + " §1)"),
    C("=CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only knob"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi || exit 1", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info || exit 1",
      "nvidia-smi absent: container always reported unhealthy"),
  ])

E("reqs_train", "requirements.txt", "explicit_replacement",
  "requirements.txt of a CUDA training stack (cu121 wheels, fast kernels, RAPIDS, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts use CPU torch from whl/cpu, aarch64 plain PyPI (" + K + " §1.1)"),
    C("torch==2.3.1+cu121", "import_torch_npu", R, True, "torch==2.3.1",
      "+cu121 build; add torch-npu==2.3.1.post6 beside it (" + K + " §1.2)"),
    C("torchvision==0.18.1+cu121", "import_torch_npu", R, True, "torchvision==0.18.1", "+cu121 local version"),
    C("torchaudio==2.3.1+cu121", "import_torch_npu", R, True, "torchaudio==2.3.1", "+cu121 local version"),
    C("flash-attn==2.5.9.post1", "attention_kernel", X, True, None, "cannot be installed on NPU (" + K + " §6)"),
    C("xformers==0.0.26.post1", "attention_kernel", X, True, None, "no NPU backend (" + K + " §6)"),
    C("triton==2.3.1", "triton_kernel_tuning", R, False, "triton-ascend",
      "Triton on NPU is triton-ascend (" + K + " §6)"),
    C("bitsandbytes==0.43.1", "unsupported_op_workaround", X, False, None,
      "CUDA build; NPU support only partial in the multi-backend line (" + K + " §6), unconfirmed for this use"),
    C("liger-kernel==0.1.1", "triton_kernel_tuning", X, False, None, "CUDA Triton kernels; NPU support unconfirmed"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@24.04.01", "custom_cuda_extension", R, False,
      "apex @ git+https://gitee.com/ascend/apex.git",
      "python-only NVIDIA apex installs, but its fused parts need CUDA; Ascend/apex (" + K + " §6; URL unconfirmed)"),
    C("--extra-index-url https://pypi.nvidia.com", "custom_cuda_extension", X, False, None, "RAPIDS index"),
    C("cudf-cu12==24.6.*", "custom_cuda_extension", X, True, None, CUDF),
    C("cuml-cu12==24.6.*", "custom_cuda_extension", X, True, None, CUDF),
    C("cupy-cuda12x==13.2.0", "custom_cuda_extension", X, True, None, "cupy has no Ascend support (" + K + " §6)"),
    C("nvidia-ml-py==12.555.43", "torch_cuda_api", X, False, None, "NVML; no NPU devices (" + K + " §6)"),
    C("gpustat==1.1.1", "torch_cuda_api", X, False, None, "NVML-based"),
  ])

E("setup_fused", "setup.py", "kernel_rewrite",
  "setup.py building fused cross-entropy / RMSNorm CUDA kernels with CUDAExtension", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension",
      "custom_cuda_extension", R, True, "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "no nvcc path on Ascend; NpuExtension adds torch_npu/ACL include+lib dirs (" + K + " §6)"),
    C("    if CUDA_HOME is None:", "custom_cuda_extension", R, True,
      '    if not os.environ.get("ASCEND_TOOLKIT_HOME"):', "raises on every NPU host"),
    C("check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "runs nvcc -V and reads torch.version.cuda (None on CPU/NPU torch)"),
    C('for arch in os.environ.get("TORCH_CUDA_ARCH_LIST", "8.0;9.0").split(";"):', "custom_cuda_extension", X, False,
      None, "SM gencode flags; meaningless for NPU"),
    C('cc_flag += ["-gencode"', "custom_cuda_extension", X, False, None, "as above"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(",
      "CUDAExtension needs nvcc (" + K + " §6)"),
    C('"csrc/cross_entropy_kernel.cu",', "custom_cuda_extension", R, True, '"csrc/ascendc/cross_entropy_kernel.cpp",',
      ".cu kernel must be rewritten in Ascend C (" + K + " §6)"),
    C('"csrc/rms_norm_kernel.cu",', "npu_fused_op", X, True, None,
      "drop the CUDA kernel: torch_npu.npu_rms_norm covers RMSNorm (" + K + " §5)"),
    C('"nvcc": append_nvcc_threads(', "custom_cuda_extension", X, False, None, "nvcc flags unused once rewritten"),
  ])
