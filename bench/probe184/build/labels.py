# Labels for probe184: machine-learned interatomic potentials / equivariant networks (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


FP64 = ("Ascend has no fp64 GEMM: torch.matmul/mm/bmm/nn.Linear/silu are listed fp16/bf16/fp32 only "
        "(torch_api_npu_support_2.7.1.tsv) and torch_npu warns 'Device do not support double dtype now, "
        "dtype cast repalce with float'; a float64 run on the NPU fails or silently computes in fp32")

# --------------------------------------------------------------------------- MACE
E("mace_torch_tools", "mace/tools/torch_tools.py", "device_branch_or_abstraction",
  "MACE mace/tools/torch_tools.py (init_device, dtype helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "central device helper imported by the CLIs and by MACECalculator users; torch.npu only exists once "
      "torch_npu is imported (autoload only from torch_npu 2.5.1)"),
    C('if "cuda" in device_str:', "device_type", "add_branch", True,
      'if "npu" in device_str: assert torch.npu.is_available(), "No NPU device available!"; torch.npu.set_device(device_str); return torch.device(device_str)',
      "init_device has no npu branch: --device npu would fall through to the CPU path silently"),
    C('if device.type != "cuda":', "device_type", "replace", False,
      'if device.type not in ("cuda", "npu"):',
      "memory summary only feeds the training log; on NPU it would just print n/a"),
    C("allocated = torch.cuda.memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", False,
      "allocated = (torch.npu if device.type == \"npu\" else torch.cuda).memory_allocated(device) / 1024**3",
      "follows the widened guard above; log-only"),
    C("reserved = torch.cuda.memory_reserved(device) / 1024**3", "torch_cuda_api", "replace", False,
      "reserved = (torch.npu if device.type == \"npu\" else torch.cuda).memory_reserved(device) / 1024**3",
      "log-only"),
    C("peak = torch.cuda.max_memory_allocated(device) / 1024**3", "torch_cuda_api", "replace", False,
      "peak = (torch.npu if device.type == \"npu\" else torch.cuda).max_memory_allocated(device) / 1024**3",
      "log-only"),
    C('if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
      'elif device.type == "npu": torch.npu.empty_cache()',
      "cache release between stages; on NPU it would silently do nothing (memory hygiene, not correctness)"),
])

E("mace_arg_parser", "mace/tools/arg_parser.py", "device_branch_or_abstraction",
  "MACE mace/tools/arg_parser.py (build_default_arg_parser)", [
    C('choices=["cpu", "cuda", "mps", "xpu"],', "device_type", "replace", True,
      'choices=["cpu", "cuda", "npu", "mps", "xpu"],',
      "argparse rejects --device npu otherwise"),
    C('default="float64",', "unsupported_op_workaround", "replace", False,
      'default="float32",',
      "parser default only; the device default is cpu where fp64 is fine. The float64 that reaches the NPU "
      "is labelled where the run is launched. " + FP64),
])

E("mace_run_train", "mace/cli/run_train.py", "explicit_replacement",
  "MACE mace/cli/run_train.py (mace_run_train entry point)", [
    C("=import torch.distributed", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry point of mace_run_train; registers the npu device and HCCL backend"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device raises on a host without CUDA; each rank must pin its NPU before DDP"),
    C("=if args.enable_cueq:", "custom_cuda_extension", "replace", False,
      'if args.enable_cueq and device.type == "cuda":',
      "cuEquivariance kernels are CUDA-only; off by default. Guarding keeps an NPU run from converting to "
      "the cueq layout (which would only use the slow pure-PyTorch fallback). Unconfirmed how cuet behaves on NPU"),
])

E("mace_slurm_distributed", "mace/tools/slurm_distributed.py", "explicit_replacement",
  "MACE mace/tools/slurm_distributed.py (DistributedEnvironment)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpu_list[self.local_rank % len(gpu_list)]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpu_list[self.local_rank % len(gpu_list)]',
      "with MACE_BIND_GPU=1 local_rank is reset to 0 after masking; CUDA_VISIBLE_DEVICES is ignored by the "
      "Ascend runtime, so every rank would land on NPU 0"),
    C('os.environ.setdefault("NCCL_SOCKET_IFNAME", "ib0")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_SOCKET_IFNAME", "ib0")',
      "NCCL_* is ignored by HCCL (silent no-op); HCCL_SOCKET_IFNAME is the host-NIC selector"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "torch_npu watchdog equivalent (ascend-distributed.md lists HCCL_ASYNC_ERROR_HANDLING)"),
    C('os.environ["NCCL_DEBUG"] = "INFO"', "env_var", "replace", False,
      'os.environ["ASCEND_GLOBAL_LOG_LEVEL"] = "1"',
      "debug logging only; HCCL has no NCCL_DEBUG, CANN log level is the nearest knob (mapping unconfirmed)"),
])

E("mace_calculator", "mace/calculators/mace.py", "device_branch_or_abstraction",
  "MACE mace/calculators/mace.py (MACECalculator ASE calculator)", [
    C("self.models = [model.double() for model in self.models]", "unsupported_op_workaround", "replace", False,
      'self.models = [model.float() if self.device.type == "npu" else model.double() for model in self.models]',
      "only reached when the caller asks for float64; the callers that do so on NPU are labelled. " + FP64),
])

E("mace_foundations", "mace/calculators/foundations_models.py", "device_branch_or_abstraction",
  "MACE mace/calculators/foundations_models.py (mace_mp / mace_off)", [
    C('device = device or ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'device = device or ("cuda" if torch.cuda.is_available() else "npu" if torch.npu.is_available() else "cpu")',
      "auto device choice silently picks CPU on an Ascend host"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
      "same auto choice in mace_off"),
    C('default_dtype: str = "float64",', "unsupported_op_workaround", "replace", True,
      'default_dtype: str = "float32",',
      "mace_off defaults to float64 and (after the device fix) runs on the NPU by default. " + FP64),
])

E("mace_slurm_launcher", "scripts/train_mace_mp_finetune.sbatch", "explicit_replacement",
  "MACE multi-node fine-tuning SLURM script (srun mace_run_train --distributed)", [
    C("#SBATCH --gpus-per-node=4", "device_type", "replace", False,
      "#SBATCH --gres=npu:4",
      "GRES name is site configuration; unconfirmed what Ascend SLURM sites call it"),
    C("module load cuda/12.1.1", "import_torch_npu", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "no CUDA module on an Ascend cluster (set -e aborts on a failed module load); torch_npu needs the CANN "
      "environment (libhccl/libascendcl) from set_env.sh"),
    C("module load cudnn/8.9.2", "env_var", "removal", False, None,
      "cuDNN is meaningless on Ascend; site-dependent whether the missing module aborts the job"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* ignored on Ascend; CANN log level is the nearest knob (unconfirmed mapping)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL transport knob; HCCL uses the NPU RoCE NICs, no equivalent"),
    C("export NCCL_NET_GDR_LEVEL=PHB", "env_var", "removal", False, None,
      "GPUDirect RDMA knob; no meaning on Ascend"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA stream-queue knob; silently ignored on NPU"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator config is read from PYTORCH_NPU_ALLOC_CONF on NPU (needs HDK >= 23.0.0); perf/fragmentation only"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "device_capability_check", "replace", True,
      "npu-smi info",
      "nvidia-smi is absent on Ascend nodes and the script runs under set -euo pipefail"),
    C('--default_dtype="float64" \\', "unsupported_op_workaround", "replace", True,
      '--default_dtype="float32" \\',
      "this run trains on the device. " + FP64),
    C("--device=cuda \\", "device_type", "replace", True,
      "--device=npu \\",
      "device selection for mace_run_train"),
    C("--enable_cueq=True \\", "custom_cuda_extension", "replace", False,
      "--enable_cueq=False \\",
      "cuEquivariance's fast kernels (cuequivariance-ops-torch-cu12) are CUDA-only; cuet would at best run its "
      "naive PyTorch fallback on NPU (unconfirmed), so the flag is a performance/compatibility item"),
])

E("mace_eval_configs", "mace/cli/eval_configs.py", "device_branch_or_abstraction",
  "MACE mace/cli/eval_configs.py (mace_eval_configs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry point; needed before torch.load(map_location='npu')"),
    C('choices=["cpu", "cuda"],', "device_type", "replace", True,
      'choices=["cpu", "cuda", "npu"],',
      "argparse rejects --device npu otherwise"),
    C('default="float64",', "unsupported_op_workaround", "replace", False,
      'default="float32",',
      "only bites when --device npu is chosen (device default is cpu). " + FP64),
    C('if device.type == "cuda":', "device_type", "replace", False,
      'if device.type in ("cuda", "npu"):',
      "--timing without a device sync measures launch time only on NPU (async queue); diagnostic output"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      'torch.npu.synchronize() if device.type == "npu" else torch.cuda.synchronize()',
      "follows the widened guard; diagnostic"),
])

# --------------------------------------------------------------------------- NequIP / Allegro
E("nequip_train", "nequip/scripts/train.py", "device_branch_or_abstraction",
  "NequIP nequip/scripts/train.py (nequip-train, default_config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry point of nequip-train"),
    C('device="cuda" if torch.cuda.is_available() else "cpu",', "device_type", "add_branch", True,
      'device="cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu"),',
      "default device silently becomes CPU on an Ascend host"),
    C('default_dtype="float64",', "unsupported_op_workaround", "replace", False,
      'default_dtype="float32",',
      "NequIP >=0.6 runs the network in model_dtype=float32 and keeps only positions/energy sums in float64; "
      "whether those fp64 element-wise ops and norms are served on NPU (linalg.norm lists fp16/bf16/fp32) or "
      "fall back/downcast is unconfirmed"),
])

E("nequip_global_options", "nequip/utils/_global_options.py", "device_branch_or_abstraction",
  "NequIP nequip/utils/_global_options.py (_set_global_options: TF32, JIT fuser, default dtype)", [
    C('if torch.cuda.is_available() and "allow_tf32" in config:', "torch_cuda_api", "add_branch", False,
      'elif torch.npu.is_available() and "allow_tf32" in config: torch.npu.matmul.allow_hf32 = config["allow_tf32"]',
      "allow_tf32 is skipped on NPU; the Ascend analogue is HF32 via torch.npu.matmul (listed in torch_npu.npu "
      "__all__; exact attribute unconfirmed). Performance/precision knob only"),
])

E("nequip_deploy", "nequip/scripts/deploy.py", "device_branch_or_abstraction",
  "NequIP nequip/scripts/deploy.py (nequip-deploy: TorchScript + metadata)", [])

E("allegro_config", "configs/tutorial_allegro_aspirin.yaml", "explicit_replacement",
  "Allegro configs/tutorial.yaml-style training config", [
    C("default_dtype: float64", "unsupported_op_workaround", "replace", False,
      "default_dtype: float32",
      "same NequIP split as train.py: model_dtype is float32, only bookkeeping is fp64; unconfirmed on NPU"),
    C("device: cuda", "device_type", "replace", True,
      "device: npu",
      "trainer does torch.device(config.device); 'cuda' fails on an Ascend host"),
])

E("nequip_benchmark", "nequip/scripts/benchmark.py", "explicit_replacement",
  "NequIP nequip/scripts/benchmark.py (nequip-benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry point; torch_npu.profiler is used below"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'device = torch.device("cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu"))',
      "would benchmark on CPU silently"),
    C("with torch.profiler.profile(", "torch_cuda_api", "replace", True,
      "with torch_npu.profiler.profile(",
      "torch.profiler does not record NPU kernels; Ascend's form is torch_npu.profiler.profile"),
    C("torch.profiler.ProfilerActivity.CPU,", "torch_cuda_api", "replace", True,
      "torch_npu.profiler.ProfilerActivity.CPU,",
      "torch.profiler.ProfilerActivity is marked unsupported on NPU; torch_npu has its own enum"),
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", "replace", True,
      "torch_npu.profiler.ProfilerActivity.NPU,",
      "CUDA activity records nothing on NPU"),
    C("schedule=torch.profiler.schedule(wait=1, warmup=warmup, active=args.n),", "torch_cuda_api", "replace", False,
      "schedule=torch_npu.profiler.schedule(wait=1, warmup=warmup, active=args.n),",
      "msFmkTransplt maps it; the pure-Python schedule probably works either way (unconfirmed)"),
    C('print(p.key_averages(group_by_input_shape=True).table(sort_by="cuda_time_total", row_limit=20))',
      "torch_cuda_api", "replace", True,
      'print(f"NPU op statistics: see ASCEND_PROFILER_OUTPUT/op_statistic.csv next to {args.profile}")',
      "key_averages is marked unsupported for torch_npu.profiler (tsv); the table also sorts by a CUDA column"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)",
      "created unconditionally; torch.cuda.Event is a dummy class that raises in a non-CUDA torch build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)",
      "same"),
    C('if device.type == "cuda":  # events only make sense on the GPU stream', "device_type", "replace", False,
      'if device.type == "npu":  # events only make sense on the device stream',
      "event cross-check is skipped on NPU otherwise; diagnostic only"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(device)",
      "inside the event block"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()",
      "inside the event block"),
    C('if device.type == "cuda" and torch.cuda.is_initialized():', "torch_cuda_api", "add_branch", False,
      'elif device.type == "npu": print("Memory usage summary:\\n" + torch.npu.memory_summary(device=device))',
      "--memory-summary would only print the 'CUDA only' message on NPU"),
])

# --------------------------------------------------------------------------- TorchANI
E("torchani_aev", "torchani/aev.py", "device_branch_or_abstraction",
  "TorchANI torchani/aev.py (AEVComputer with optional cuaev)", [
    C('assert has_cuaev, "AEV cuda extension is not installed"', "custom_cuda_extension", "replace", False,
      'warnings.warn("cuaev is a CUDA-only extension; falling back to the PyTorch AEV") if not has_cuaev else None',
      "use_cuda_extension is opt-in; on NPU the pure-PyTorch AEV is the working path. Soft-failing keeps "
      "configs written for GPUs usable"),
    C("if self.use_cuda_extension:", "custom_cuda_extension", "replace", False,
      "if self.use_cuda_extension and coordinates.is_cuda:",
      "route NPU tensors to the PyTorch AEV instead of torch.ops.cuaev (no NPU kernel)"),
])

E("torchani_setup", "setup.py", "kernel_rewrite",
  "TorchANI setup.py (--cuaev / --cuaev-all-sms CUDAExtension build)", [
    C("FAST_BUILD_CUAEV = '--cuaev' in sys.argv", "custom_cuda_extension", "add_branch", False,
      "BUILD_CUAEV_NPU = '--cuaev-npu' in sys.argv  # Ascend C port built with NpuExtension",
      "kernel_rewrite: an Ascend C port of aev.cu is an optimisation; the default build (no flag) already works on NPU"),
    C("def cuda_extension(build_all=False):", "custom_cuda_extension", "add_branch", False,
      "def npu_extension(): from torch_npu.utils.cpp_extension import NpuExtension; return NpuExtension(name='torchani.cuaev', sources=['torchani/cuaev/cuaev_npu.cpp'], extra_compile_args={'cxx': ['-std=c++17']})",
      "no nvcc on Ascend; torch_npu.utils.cpp_extension.NpuExtension links torch_npu/ACL"),
    C("if not BUILD_CUAEV_ALL_SM and not FAST_BUILD_CUAEV:", "custom_cuda_extension", "replace", False,
      "if not BUILD_CUAEV_ALL_SM and not FAST_BUILD_CUAEV and not BUILD_CUAEV_NPU:",
      "select the NPU build"),
    C("cuda_extension(BUILD_CUAEV_ALL_SM)", "custom_cuda_extension", "replace", False,
      "npu_extension() if BUILD_CUAEV_NPU else cuda_extension(BUILD_CUAEV_ALL_SM)",
      "select the NPU build"),
])

E("torchani_ase_md", "examples/md_water_box_ani2x.py", "explicit_replacement",
  "TorchANI examples (ASE Langevin MD with ANI2x(periodic_table_index=True))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "would run the MD on CPU silently"),
    C("model = model.double()", "unsupported_op_workaround", "replace", True,
      "model = model.float()  # Ascend: no fp64 GEMM",
      "ANI's atomic networks are Linear+CELU stacks. " + FP64),
    C('if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
      'elif device.type == "npu": mem = f"  mem {torch.npu.max_memory_allocated() / 2**20:.0f} MiB"',
      "log line only"),
])

E("torchani_training_bench", "tools/training-benchmark.py", "explicit_replacement",
  "TorchANI tools/training-benchmark.py (cuaev vs PyTorch AEV timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "with -y every timer calls it; torch.cuda.synchronize raises without CUDA"),
    C('torch.cuda.nvtx.range_push("network forward")', "torch_cuda_api", "replace", True,
      '_rid = torch_npu.npu.mstx.range_start("network forward")',
      "torch.cuda.nvtx is not redirected by torch_npu; mstx is the NVTX-style range API (--nvtx path)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(_rid)",
      "pairs with the range start"),
    C("benchmark(parser, dataset, use_cuda_extension=use_cuaev, force_train=force_train)", "custom_cuda_extension", "replace", True,
      "benchmark(parser, dataset, use_cuda_extension=use_cuaev and torchani.aev.has_cuaev, force_train=force_train)",
      "runs 1 and 3 force use_cuda_extension=True and hit 'assert has_cuaev' on a host without the CUDA build"),
    C("i = torch.cuda.device(torch.cuda.current_device()).idx", "torch_cuda_api", "replace", True,
      "i = torch.npu.current_device()",
      "checkgpu() runs every epoch; torch.cuda.current_device raises without CUDA"),
    C("GPU_MEM = torch.cuda.max_memory_allocated(i) / 1024 ** 2", "torch_cuda_api", "replace", True,
      "GPU_MEM = torch.npu.max_memory_allocated(i) / 1024 ** 2",
      "same function"),
    C("info = f'GPU {i}: {torch.cuda.get_device_name(i)} - {GPU_MEM:.0f} MB'", "torch_cuda_api", "replace", True,
      "info = f'NPU {i}: {torch.npu.get_device_name(i)} - {GPU_MEM:.0f} MB'",
      "same function"),
    C("default=('cuda' if torch.cuda.is_available() else 'cpu'))", "device_type", "replace", True,
      "default=('npu' if torch.npu.is_available() else 'cpu'))",
      "default device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "between runs; silent no-op on NPU otherwise"),
])

# --------------------------------------------------------------------------- SchNetPack
E("spk_trainer_cfg", "src/schnetpack/configs/trainer/default_trainer.yaml", "explicit_replacement",
  "SchNetPack Hydra trainer config (pytorch_lightning.Trainer)", [
    C("accelerator: auto", "device_type", "replace", True,
      "accelerator: npu",
      "looks device-agnostic but Lightning's auto choice knows TPU/HPU/MPS/CUDA only and falls back to CPU on "
      "an Ascend host; an NPU accelerator has to be registered/selected (which plugin is unconfirmed)"),
])

E("spk_gpu_cfg", "src/schnetpack/configs/trainer/ddp_gpu.yaml", "explicit_replacement",
  "SchNetPack Hydra multi-GPU DDP trainer config", [
    C("accelerator: gpu", "device_type", "replace", True,
      "accelerator: npu",
      "Lightning 'gpu' means CUDA/MPS"),
    C("process_group_backend: nccl", "dist_backend", "replace", True,
      "process_group_backend: hccl",
      "NCCL unavailable on Ascend"),
])

E("spk_cli", "src/schnetpack/cli.py", "device_branch_or_abstraction",
  "SchNetPack src/schnetpack/cli.py (spktrain / spkpredict Hydra entry points)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry point; the npu device must exist before Lightning builds the trainer"),
    C("loader = AtomsLoader(dataset, batch_size=config.batch_size, num_workers=8, pin_memory=torch.cuda.is_available())",
      "pin_memory", "replace", False,
      "loader = AtomsLoader(dataset, batch_size=config.batch_size, num_workers=8, pin_memory=torch.cuda.is_available() or torch.npu.is_available())",
      "pinning silently switched off on NPU; msFmkTransplt recommends pin_memory=True there (perf only)"),
    C('model = load_model("best_model", device=config.get("device", "cuda"))', "device_type", "replace", True,
      'model = load_model("best_model", device=config.get("device", "npu"))',
      "default 'cuda' map_location fails on an Ascend host"),
])

E("spk_md_run", "examples/md/run_ethanol_ring_polymer_md.py", "explicit_replacement",
  "SchNetPack MD tutorial (schnetpack.md Simulator, ring-polymer integrator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C('md_device = f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'md_device = f"npu:{args.gpu}" if torch.npu.is_available() else "cpu"',
      "would simulate on CPU silently"),
    C('p.add_argument("--precision", type=int, choices=[32, 64], default=64)', "unsupported_op_workaround", "replace", True,
      'p.add_argument("--precision", type=int, choices=[32, 64], default=32)',
      "Simulator.to(torch.float64) puts the PaiNN model in fp64 on the device. " + FP64),
    C('if md_device.startswith("cuda"):', "torch_cuda_api", "add_branch", False,
      'elif md_device.startswith("npu"): log.info(f"Peak NPU memory: {torch.npu.max_memory_allocated() / 1024**2:.0f} MiB")',
      "log only"),
])

# --------------------------------------------------------------------------- e3nn
E("e3nn_tp_bench", "benchmarks/benchmark_tp.py", "device_branch_or_abstraction",
  "e3nn benchmarks (FullyConnectedTensorProduct, set_optimization_defaults, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C('device = "cuda" if (torch.cuda.is_available() and args.cuda) else "cpu"', "device_type", "add_branch", True,
      'device = "cuda" if (torch.cuda.is_available() and args.cuda) else ("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "would benchmark on CPU silently"),
    C('args.cuda = device == "cuda"', "device_type", "replace", False,
      'args.cuda = device in ("cuda", "npu")',
      "enables the memory report / batch sweep on NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()",
      "report block, reached only after the flag above is widened"),
    C('print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")', "torch_cuda_api", "replace", False,
      'print(f"max memory allocated: {torch.npu.max_memory_allocated() / 2**20:.1f} MiB")',
      "report block"),
    C("sync = torch.cuda.synchronize", "torch_cuda_api", "replace", False,
      "sync = torch.npu.synchronize",
      "sweep timing needs a device sync"),
    C('x1 = irreps_in1.randn(batch, -1, device="cuda")', "tensor_to_device", "replace", False,
      "x1 = irreps_in1.randn(batch, -1, device=device)",
      "sweep block"),
    C('x2 = irreps_in2.randn(batch, -1, device="cuda")', "tensor_to_device", "replace", False,
      "x2 = irreps_in2.randn(batch, -1, device=device)",
      "sweep block"),
])

E("e3nn_gate_conv", "equivariant_mlip/models/gate_points.py", "device_branch_or_abstraction",
  "e3nn gate_points_2101-style network used as an interatomic potential (torch_cluster/torch_scatter)", [
    C('with torch.autocast(device_type="cuda", enabled=False):', "amp", "replace", False,
      "with torch.autocast(device_type=edge_attr.device.type, enabled=False):",
      "a cuda-typed autocast guard does not switch off NPU autocast, so under AMP the TP would run in half "
      "precision; only matters when the training loop enables autocast"),
    C('edge_index = radius_graph(data["pos"], self.max_radius, batch, max_num_neighbors=self.max_num_neighbors)',
      "unsupported_op_workaround", "replace", False,
      'edge_index = radius_graph(data["pos"].detach().cpu(), self.max_radius, batch.cpu(), max_num_neighbors=self.max_num_neighbors).to(data["pos"].device)',
      "torch_cluster ships CPU/CUDA kernels only; unconfirmed whether an NPU tensor errors or goes through "
      "torch_npu's CPU fallback. Skipped when edge_index is precomputed"),
])

# --------------------------------------------------------------------------- DeepChem
E("deepchem_torch_model", "deepchem/models/torch_models/torch_model.py", "device_branch_or_abstraction",
  "DeepChem deepchem/models/torch_models/torch_model.py (TorchModel device selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (guarded by try/except in practice)",
      "TorchModel picks the device itself and is imported straight from user scripts"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      "if hasattr(torch, 'npu') and torch.npu.is_available(): device = torch.device('npu')",
      "auto-selection silently falls to CPU on an Ascend host"),
])

E("deepchem_qm9_example", "examples/qm9/qm9_dtnn_torch.py", "explicit_replacement",
  "DeepChem QM9 example with DTNNModel(..., device=torch.device('cuda'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds the PrivateUse1 device (unconfirmed in knowledge)"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")',
      "hard-coded CUDA device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)",
      "raises without CUDA"),
    C('logger.info("Training on %s (%s)", device, torch.cuda.get_device_name(device))', "torch_cuda_api", "replace", True,
      'logger.info("Training on %s (%s)", device, torch.npu.get_device_name(device))',
      "raises without CUDA"),
    C('device=torch.device("cuda"),', "device_type", "replace", True,
      "device=device,",
      "TorchModel device argument"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated(device) / 2**20",
      "called every epoch with an npu device; torch.cuda memory stats reject it"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU otherwise"),
])

# --------------------------------------------------------------------------- OCP / fairchem
E("ocp_base_trainer", "ocpmodels/trainers/base_trainer.py", "device_branch_or_abstraction",
  "Open Catalyst Project ocpmodels/trainers/base_trainer.py (EquiformerV2/eSCN trainers, amp)", [
    C("if torch.cuda.is_available() and not self.cpu:", "device_type", "add_branch", True,
      'elif torch.npu.is_available() and not self.cpu: self.device = torch.device(f"npu:{local_rank}")',
      "otherwise the trainer sets cpu=True and trains on CPU"),
    C("self.scaler = torch.cuda.amp.GradScaler() if amp else None", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler() if amp else None",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent: fp16 training without loss scaling"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed for the PrivateUse1 device (unconfirmed); lazy no-op otherwise"),
    C("with torch.cuda.amp.autocast(enabled=self.scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.scaler is not None):",
      "cuda autocast does not touch NPU ops: `amp: true` would silently train in fp32"),
])

# --------------------------------------------------------------------------- ASE / LAMMPS drivers
E("mace_md_driver", "scripts/run_npt_md_mace.py", "explicit_replacement",
  "ASE NPT MD driver using mace.calculators.MACECalculator(model_paths, device='cuda')", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "ignored on NPU; the run still lands on logical device 0, so only masking differs"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")', "env_var", "replace", False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "max_split_size_mb:512")',
      "allocator tuning only"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "entry script"),
    C('p.add_argument("--dtype", choices=["float32", "float64"], default="float64")', "unsupported_op_workaround", "replace", True,
      'p.add_argument("--dtype", choices=["float32", "float64"], default="float32")',
      "this driver always runs the model on the device. " + FP64),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "gpu_status() is a log helper; unchanged it prints 'no GPU'"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info()",
      "log helper"),
    C('f"{torch.cuda.get_device_name()} | used {(total - free) / 2**30:.2f}/{total / 2**30:.1f} GB"', "torch_cuda_api", "replace", False,
      'f"{torch.npu.get_device_name()} | used {(total - free) / 2**30:.2f}/{total / 2**30:.1f} GB"',
      "log helper"),
    C('f" | peak alloc {torch.cuda.max_memory_allocated() / 2**30:.2f} GB"', "torch_cuda_api", "replace", False,
      'f" | peak alloc {torch.npu.max_memory_allocated() / 2**30:.2f} GB"',
      "log helper"),
    C("if not torch.cuda.is_available() or torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available() or torch.npu.device_count() == 0:",
      "the driver exits on a host without CUDA"),
    C('device = "cuda"', "device_type", "replace", True,
      'device = "npu"',
      "passed to MACECalculator"),
    C('log.info("Visible GPUs: %s", os.environ.get("CUDA_VISIBLE_DEVICES"))', "env_var", "replace", False,
      'log.info("Visible NPUs: %s", os.environ.get("ASCEND_RT_VISIBLE_DEVICES"))',
      "log only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "periodic cache release; silent no-op otherwise"),
])

E("mace_lammps_export", "mace/cli/create_lammps_model.py", "device_branch_or_abstraction",
  "MACE mace/cli/create_lammps_model.py (TorchScript export for pair_style mace)", [])

E("mace_lammps_run", "examples/lammps/run_lammps_mace_kokkos.sh", "explicit_replacement",
  "LAMMPS + ML-MACE (KOKKOS/CUDA) launch script", [
    C("module load cuda/12.1", "env_var", "removal", True, None,
      "no CUDA module on an Ascend cluster and the script runs under set -e"),
    C("module load openmpi/4.1.5-cuda", "env_var", "replace", False,
      "module load openmpi/4.1.5",
      "CUDA-aware MPI build; module naming is site-specific"),
    C("export LAMMPS_ROOT=${LAMMPS_ROOT:-$HOME/software/lammps-mace/build-kokkos-cuda}", "custom_cuda_extension", "replace", True,
      "export LAMMPS_ROOT=${LAMMPS_ROOT:-$HOME/software/lammps-mace/build-cpu}",
      "a KOKKOS/CUDA lmp binary cannot start without libcudart; Kokkos has no Ascend backend"),
    C("export LIBTORCH_ROOT=${LIBTORCH_ROOT:-$HOME/software/libtorch-2.2.0-cu121}", "custom_cuda_extension", "replace", True,
      "export LIBTORCH_ROOT=${LIBTORCH_ROOT:-$HOME/software/libtorch-2.2.0-cpu}",
      "cu121 libtorch needs CUDA runtime libraries; an NPU path for the C++ pair style is unconfirmed"),
    C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))", "env_var", "removal", False, None,
      "no effect on an Ascend host"),
    C("export CUDA_MPS_PIPE_DIRECTORY=/dev/null", "env_var", "removal", False, None,
      "CUDA MPS knob"),
    C("nvidia-smi -L", "device_capability_check", "removal", True, None,
      "nvidia-smi missing on Ascend nodes; set -e aborts"),
    C("-k on g ${NGPU} -sf kk -pk kokkos newton on neigh half \\", "device_type", "removal", True, None,
      "KOKKOS GPU flags require a CUDA device"),
])

# --------------------------------------------------------------------------- environments
E("mace_requirements", "requirements-gpu.txt", "explicit_replacement",
  "MACE-style pip requirements pinned to CUDA 12.1 wheels (+cuEquivariance extras)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu sits on a CPU torch build (x86: whl/cpu; aarch64: plain PyPI)"),
    C("torch==2.3.1+cu121", "torch_cuda_api", "replace", True,
      "torch==2.3.1",
      "+cu121 builds do not exist for aarch64 Ascend hosts; torch_npu 2.3.1 pairs with plain torch 2.3.1"),
    C("numpy<2.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.3.1.post6",
      "torch_npu wheel must equal the torch version (+ .postN); 2.3.1.post6 is the v2.3.1-7.0.0 release"),
    C("cuequivariance-ops-torch-cu12==0.1.0", "custom_cuda_extension", "removal", False, None,
      "CUDA kernels for cuequivariance; useless on Ascend (cuet's pure-PyTorch path does not need it); "
      "whether the wheel even installs there is unconfirmed"),
    C("cupy-cuda12x>=12.0", "custom_cuda_extension", "removal", False, None,
      "CuPy has no Ascend backend (cupy#9379); nothing in this stack imports it"),
])

E("nequip_env_yml", "environment.yml", "explicit_replacement",
  "NequIP/Allegro conda environment.yml (pytorch-cuda, cudatoolkit, PyG cu121 wheels)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "channel only needed for pytorch-cuda"),
    C("=- pytorch=2.1.2", "torch_cuda_api", "replace", True,
      "- pytorch=2.1.0=*cpu*",
      "torch_npu exists for 2.1.0, not 2.1.2 (wheel version must equal torch version); CPU build underneath"),
    C("=- pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
      "selects the CUDA build of pytorch; no Ascend/aarch64 variant"),
    C("- cudatoolkit-dev=11.7   # nvcc for building pair_allegro / custom ops", "custom_cuda_extension", "removal", False, None,
      "nvcc toolchain; nothing CUDA is built on Ascend (availability on aarch64 unconfirmed)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post12",
      "the NPU adapter itself (2.1.0.post12 = v2.1.0-7.0.0)"),
    C("- --find-links https://data.pyg.org/whl/torch-2.1.0+cu121.html", "custom_cuda_extension", "replace", True,
      "    - --find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "cu121 torch-scatter/torch-cluster wheels link libcudart and fail to import on an Ascend host"),
    C("- nvidia-ml-py>=12.535", "custom_cuda_extension", "removal", False, None,
      "NVML bindings; no NPU equivalent (npu-smi / torch.npu.utilization instead); unused by training"),
])

E("torchani_docker", "docker/Dockerfile", "explicit_replacement",
  "TorchANI Dockerfile on nvidia/cuda with cuaev compiled for all SMs", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (driver/toolkit env that set_env.sh would provide)"),
    C("ARG TORCH_VERSION=2.2.2", "import_torch_npu", "replace", True,
      "ARG TORCH_VERSION=2.4.0",
      "there is no torch_npu for torch 2.2.2 (only 2.2.0, EOL); 2.4.0.post4 is an active pairing"),
    C('TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 8.9 9.0+PTX" \\', "env_var", "removal", False, None,
      "nvcc arch list; nothing reads it on Ascend"),
    C("=FORCE_CUDA=1", "env_var", "removal", False, None,
      "forces CUDA builds of extensions; meaningless without nvcc"),
    C("RUN pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      'RUN pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu && pip install "torch-npu==${TORCH_VERSION}.*"',
      "CPU torch + matching torch_npu instead of the CUDA wheel"),
    C("RUN python setup.py install --cuaev-all-sms \\", "custom_cuda_extension", "replace", True,
      "RUN python setup.py install \\",
      "--cuaev-all-sms builds a CUDAExtension with nvcc; the image build fails on Ascend"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all \\",
      "NVIDIA container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (normally given at docker run)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "NVIDIA container-runtime variable"),
    C("=CUDA_MODULE_LOADING=LAZY", "env_var", "removal", False, None,
      "CUDA driver knob"),
    C('CMD ["python", "-c", "import torch, torchani; print(torch.cuda.get_device_name(0)); print(torchani.__version__)"]',
      "torch_cuda_api", "replace", True,
      'CMD ["python", "-c", "import torch, torch_npu, torchani; print(torch.npu.get_device_name(0)); print(torchani.__version__)"]',
      "default command crashes without CUDA"),
])
