"""Labels for probe60 (hand-written synthetic upstream files; see ../README.md).

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
DEV = "device_branch_or_abstraction"  # the builder's name for the device-agnostic / branch style

IMPORT_NOTE = ("torch.npu.* / the 'npu' device need torch_npu loaded (autoloaded since 2.5.1, explicit import "
               "still recommended)")
FP64_NOTE = ("float64 default: Ascend's 2.7.1 table lists no fp64 for torch.norm / linalg.norm / cross / sort and "
             "'params only bf16/fp16/fp32' for torch.optim.Adam; one torch_npu warning casts double to float. "
             "Whether an fp64 MLIP run fails or silently degrades is unconfirmed")

# ---------------------------------------------------------------------------------------------- MACE
E("mace_torch_tools", "mace/tools/torch_tools.py", DEV,
  "ACEsuit/mace mace/tools/torch_tools.py (init_device with cuda/mps/xpu branches)", [
    C('if "cuda" in device_str:', "device_type", B, True,
      'if "npu" in device_str:\n        import torch_npu  # noqa: F401\n        torch.npu.set_device(device_str)\n'
      '        return torch.device(device_str)\n    if "cuda" in device_str:',
      "an 'npu' device string falls through every branch to 'Using CPU' and the whole run silently goes to CPU"),
])

E("mace_arg_parser", "mace/tools/arg_parser.py", DEV,
  "ACEsuit/mace mace/tools/arg_parser.py (--device choices, --default_dtype, --enable_cueq)", [
    C('choices=["cpu", "cuda", "mps", "xpu"]', "device_type", R, True,
      'choices=["cpu", "cuda", "npu", "mps", "xpu"],',
      "argparse rejects --device=npu, so there is no way to request the NPU"),
    C('default="float64",', "unsupported_op_workaround", R, False, 'default="float32",',
      FP64_NOTE + "; unconfirmed"),
])

E("mace_run_train", "mace/cli/run_train.py", "explicit_replacement",
  "ACEsuit/mace mace/cli/run_train.py (SLURM/torchrun DDP, foundation-model fine-tuning, cuEquivariance switch)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + " and the hccl backend"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL does not exist on an NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device needs a CUDA build; each rank must pin its own NPU before HCCL init"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA (the NPU cache is simply not released after dropping the foundation model)"),
    C("model = run_e3nn_to_cueq(deepcopy(model), device=device)", "custom_cuda_extension", R, False,
      "model = run_e3nn_to_cueq(deepcopy(model), device=device) if device.type == \"cuda\" else model",
      "guard the cuEquivariance conversion: its kernels (cuequivariance-ops-torch-cu12) are CUDA-only; the "
      "failure itself happens at the use_fallback=False call sites in wrapper_ops"),
])

E("mace_cueq_wrapper_ops", "mace/modules/wrapper_ops.py", DEV,
  "ACEsuit/mace mace/modules/wrapper_ops.py (e3nn vs cuequivariance_torch module factories)", [
    C("use_fallback=False,  # the fused", "custom_cuda_extension", R, False,
      "use_fallback=not torch.cuda.is_available(),",
      "use_fallback=False demands the CUDA kernel from cuequivariance-ops; only reached when cuequivariance is "
      "installed and enable_cueq is set (otherwise CUET_AVAILABLE/enabled fall back to e3nn cleanly)"),
    C('fused = cuet.SegmentedPolynomial(poly, method="uniform_1d")', "custom_cuda_extension", R, False,
      'fused = cuet.SegmentedPolynomial(poly, method="naive")',
      "uniform_1d is a CUDA kernel method; reached only with enable_cueq + conv_fusion ('naive' method name "
      "unconfirmed)"),
    C("=use_fallback=False,", "custom_cuda_extension", R, False,
      "use_fallback=not torch.cuda.is_available(),",
      "symmetric contraction through the CUDA kernel; same gating as the channel-wise TP"),
])

E("mace_calculator", "mace/calculators/mace.py", "explicit_replacement",
  "ACEsuit/mace calculators/mace.py + foundations_models.py (MACECalculator, mace_mp/mace_off/mace_anicc)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = device or ("cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", R, True,
      'device = device or ("npu" if torch.npu.is_available() else "cpu")',
      "on an NPU host mace_mp() silently builds a CPU calculator"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "same silent CPU fallback in mace_off()"),
    C('device: str = "cuda",', "device_type", R, True, 'device: str = "npu",',
      "mace_anicc() defaults to cuda; init_device then asserts torch.cuda.is_available()"),
])

# ---------------------------------------------------------------------------------------------- NequIP / Allegro
E("nequip_train_legacy", "nequip/scripts/train.py", "explicit_replacement",
  "mir-group/nequip 0.6 nequip/scripts/train.py (default_config, global options, TorchScript fuser settings)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device="cuda" if torch.cuda.is_available() else "cpu",', "torch_cuda_api", R, True,
      'device="npu" if torch.npu.is_available() else "cpu",',
      "the default device is chosen from CUDA availability; an NPU host trains on CPU without a word"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not torch.npu.is_available():",
      "with gpu_oom_offload set the run aborts on an NPU host ('CUDA is not available')"),
])

E("nequip_compile", "nequip/scripts/compile.py", "explicit_replacement",
  "mir-group/nequip 0.7 nequip-compile (TorchScript / AOTInductor export for ASE and pair_nequip/pair_allegro)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('choices=["cpu", "cuda"],', "device_type", R, True, 'choices=["cpu", "cuda", "npu"],',
      "--device npu is rejected; the compiled artifact must be built for the inference device"),
    C('default="cuda",', "device_type", R, True, 'default="npu",',
      "default compile device is cuda: model.to('cuda') fails on an NPU host"),
    C('"max_autotune_gemm_backends": "TRITON,ATEN",', "compile_mode", R, False,
      '"max_autotune_gemm_backends": "ATEN",',
      "Triton GEMM templates for Inductor; on NPU Inductor uses its own backend (unconfirmed)"),
    C("package_path = torch._inductor.aoti_compile_and_package(", "compile_mode", R, False,
      "package_path = torch._inductor.aoti_compile_and_package(  # NPU: export the TorchScript target instead",
      "AOTInductor packaging for NPU is not covered by the knowledge base (unconfirmed); --mode torchscript is "
      "the safe path"),
])

E("allegro_triton_contracter", "allegro/nn/_strided/_triton_contract.py", "kernel_rewrite",
  "mir-group/allegro TritonContracter-style sparse strided tensor-product kernels (torch.library.custom_op + autotune)",
  [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed once the Triton path is enabled for NPU tensors"),
    C("return torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, False,
      "return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8 and torch.backends.cuda.matmul.allow_tf32",
      "get_device_capability() returns None on NPU (subscript fails); not reached while the is_cuda gate "
      "keeps NPU tensors on the reference path"),
    C("return 4 * props.multi_processor_count", "device_capability_check", R, False,
      "return 4 * props.vector_core_num",
      "NPU device properties have no multi_processor_count (cube_core_num / vector_core_num instead)"),
    C('triton.Config({"BLOCK_Z": 64, "BLOCK_U": 16}, num_warps=8, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_Z": 64, "BLOCK_U": 16}),',
      "warp/stage counts are GPU tuning; triton-ascend tiling differs (unconfirmed)"),
    C('triton.Config({"BLOCK_Z": 32, "BLOCK_U": 64}, num_warps=8, num_stages=1),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_Z": 32, "BLOCK_U": 64}),', "same for the backward configs (unconfirmed)"),
    C('eviction_policy="evict_last"', "triton_kernel_tuning", R, False,
      "a = tl.load(x1_ptr + zu * n_i + i, mask=mask, other=0.0)",
      "cache eviction hints on triton-ascend: unconfirmed"),
    C('@torch.library.custom_op("allegro::_strided_contract_fwd", mutates_args=(), device_types="cuda")',
      "custom_cuda_extension", R, False,
      '@torch.library.custom_op("allegro::_strided_contract_fwd", mutates_args=(), device_types=("cuda", "npu"))',
      "the op has a kernel for the CUDA key only; NPU tensors would find none once the gate is opened"),
    C('@torch.library.custom_op("allegro::_strided_contract_bwd", mutates_args=(), device_types=("cuda",))',
      "custom_cuda_extension", R, False,
      '@torch.library.custom_op("allegro::_strided_contract_bwd", mutates_args=(), device_types=("cuda", "npu"))',
      "same for the backward op"),
    C("with torch.cuda.device(x1.device):", "torch_cuda_api", R, False, "with torch.npu.device(x1.device):",
      "CUDA device context around the launch"),
    C("stream = torch.cuda.current_stream(x1.device)", "torch_cuda_api", R, False,
      "stream = torch.npu.current_stream(x1.device)", "CUDA stream lookup"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, False, "with torch.npu.stream(stream):",
      "CUDA stream context"),
    C("if not x1.is_cuda or torch.jit.is_scripting():", "device_type", R, False,
      'if x1.device.type not in ("cuda", "npu") or torch.jit.is_scripting():',
      "the gate sends NPU tensors to the e3nn-style reference contraction, which is correct but slow; "
      "opening it requires triton-ascend versions of both kernels"),
])

E("nequip_ase_calculator", "nequip/ase/nequip_calculator.py", "explicit_replacement",
  "mir-group/nequip nequip/ase/nequip_calculator.py (from_deployed_model / from_compiled_model)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu",', "torch_cuda_api", R,
      True, 'device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu",',
      "compiled models load onto CPU on an NPU host"),
])

# ---------------------------------------------------------------------------------------------- TorchMD-Net
E("torchmdnet_extensions", "torchmdnet/extensions/__init__.py", DEV,
  "torchmd/torchmd-net torchmdnet/extensions/__init__.py (torch.ops.torchmdnet_extensions neighbor kernels)", [
    C('if strategy == "brute":', "custom_cuda_extension", B, True,
      'if positions.device.type == "npu":\n        return _neighbor_pairs_torch(positions, batch, box_vectors, '
      'use_periodic, cutoff_lower, cutoff_upper, max_num_pairs, loop, include_transpose)\n    if strategy == "brute":',
      "the compiled extension registers CPU and CUDA kernels only; NPU positions find no kernel for any strategy"),
])

E("torchmdnet_model_utils", "torchmdnet/models/utils.py", "explicit_replacement",
  "torchmd/torchmd-net torchmdnet/models/utils.py (radius_graph Distance, OptimizedDistance, smearing)", [
    C("from torch_cluster import radius_graph", "custom_cuda_extension", R, True,
      "from torchmdnet.models._torch_neighbors import radius_graph  # pure-torch replacement",
      "torch_cluster ships CPU/CUDA kernels only; radius_graph on NPU tensors has no kernel"),
    C("from torch_scatter import scatter", "custom_cuda_extension", R, True,
      "from torchmdnet.utils import scatter  # index_add_-based",
      "torch_scatter is a compiled CPU/CUDA extension"),
    C('return out.scatter_reduce(0, batch.unsqueeze(-1).expand_as(x), x, reduce="amax", include_self=True)',
      "unsupported_op_workaround", R, True,
      'return out.index_reduce_(0, batch, x, "amax", include_self=True)',
      "scatter_reduce is marked unsupported in Ascend's table and by msFmkTransplt (index_reduce is listed, "
      "'may fall back to CPU')"),
])

E("torchmdnet_train", "torchmdnet/scripts/train.py", "explicit_replacement",
  "torchmd/torchmd-net torchmdnet/scripts/train.py (Lightning Trainer, DDPStrategy)", [
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", R, True,
      'strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="hccl"),',
      "Lightning derives the backend from the root device (nccl for cuda, gloo otherwise); NPU needs hccl"),
    C('=accelerator="auto",', "device_type", R, True, 'accelerator="npu",',
      "Lightning's 'auto' finds no CUDA and trains on CPU; an NPU accelerator must be named (needs an NPU "
      "accelerator plugin for Lightning; plugin not covered by the knowledge base)"),
    C('accelerator="auto", devices=1', "device_type", R, True,
      'trainer = pl.Trainer(logger=_logger, inference_mode=False, accelerator="npu", devices=1, num_nodes=1)',
      "the test trainer silently runs on CPU"),
])

E("torchmdnet_calculators", "torchmdnet/calculators.py", "explicit_replacement",
  "torchmd/torchmd-net torchmdnet/calculators.py (External with CUDA-graph capture for TorchMD)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available() and use_cuda_graph:", "torch_cuda_api", R, True,
      "if not torch.npu.is_available() and use_cuda_graph:",
      "use_cuda_graph=True raises on an NPU host"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()",
      "CUDA side stream for warm-up/capture"),
    C("self.cuda_graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True,
      "self.cuda_graph = torch.npu.NPUGraph()",
      "NPUGraph is listed as inference-only; whether capturing the autograd force pass works is unconfirmed"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True, "with torch.npu.stream(stream):",
      "CUDA stream context"),
    C("with torch.cuda.graph(self.cuda_graph):", "torch_cuda_api", R, True,
      "with torch.npu.graph(self.cuda_graph):", "graph capture context"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(stream)", "stream join after capture"),
])

E("torchmdnet_setup", "setup.py", DEV,
  "torchmd/torchmd-net setup.py (CppExtension/CUDAExtension for the neighbor-list kernels)", [
    C('neighbor_sources.append("neighbors_cuda.cu")', "custom_cuda_extension", B, False,
      'neighbor_sources.append("neighbors_cuda.cu")\nelif use_npu:\n    neighbor_sources.append("neighbors_npu.cpp")',
      "the build itself succeeds CPU-only on an NPU host; NPU kernels need an Ascend C source (or the pure-torch "
      "path in extensions/__init__.py)"),
    C("ExtensionType = CppExtension if not use_cuda else CUDAExtension", "custom_cuda_extension", B, False,
      "ExtensionType = NpuExtension if use_npu else (CUDAExtension if use_cuda else CppExtension)",
      "torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu/ACL include and link flags"),
])

# ---------------------------------------------------------------------------------------------- SchNetPack
E("schnetpack_ase_interface", "schnetpack/interfaces/ase_interface.py", "explicit_replacement",
  "atomistic-machine-learning/schnetpack interfaces/ase_interface.py (SpkCalculator, AseInterface)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device: Union[str, torch.device] = "cuda",', "device_type", R, True,
      'device: Union[str, torch.device] = "npu",',
      "AseInterface defaults to cuda: model.to('cuda') fails on an NPU host"),
    C("dtype: torch.dtype = torch.float64,", "unsupported_op_workaround", R, False,
      "dtype: torch.dtype = torch.float32,", FP64_NOTE),
])

E("schnetpack_v1_spk_run", "src/scripts/spk_run.py", "transfer_to_npu",
  "atomistic-machine-learning/schnetpack 1.0 src/scripts/spk_run.py (--cuda / --parallel flags)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "entry script: transfer_to_npu rewrites the torch.device('cuda') uses passed to .to()/factories"),
    C("model = nn.DataParallel(model)", "distributed_framework", R, True,
      "model = model  # nn.DataParallel is unsupported on NPU; launch with torchrun + DDP instead",
      "torch.nn.DataParallel is marked unsupported and is not redirected by transfer_to_npu"),
])

E("schnetpack_md_config", "src/schnetpack/configs/md/md_ethanol_rpmd.yaml", "explicit_replacement",
  "schnetpack spkmd hydra config (ring-polymer MD with a trained model)", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "spkmd moves the simulator to this device; 'cuda' fails on an NPU host"),
    C("=precision: 64", "unsupported_op_workaround", R, False, "precision: 32", FP64_NOTE),
])

# ---------------------------------------------------------------------------------------------- DeePMD-kit (pt)
E("deepmd_pt_env", "deepmd/pt/utils/env.py", "explicit_replacement",
  "deepmodeling/deepmd-kit deepmd/pt/utils/env.py (DEVICE selection, precision dicts)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('if os.environ.get("DEVICE") == "cpu" or torch.cuda.is_available() is False:', "torch_cuda_api", R, True,
      'if os.environ.get("DEVICE") == "cpu" or torch.npu.is_available() is False:',
      "every DeePMD module imports DEVICE from here; on an NPU host it silently becomes cpu"),
    C('DEVICE = torch.device(f"cuda:{LOCAL_RANK}")', "device_type", R, True,
      'DEVICE = torch.device(f"npu:{LOCAL_RANK}")', "per-rank device"),
    C('DEFAULT_PRECISION = "float64"', "unsupported_op_workaround", R, False, 'DEFAULT_PRECISION = "float32"',
      FP64_NOTE),
])

E("deepmd_pt_main", "deepmd/pt/entrypoints/main.py", "explicit_replacement",
  "deepmodeling/deepmd-kit deepmd/pt/entrypoints/main.py (dp --pt train/freeze, DDP init)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + " and hccl"),
    C("assert dist.is_nccl_available()", "dist_backend", R, True, "assert dist.is_hccl_available()",
      "is_nccl_available() is False on an NPU host: multi-rank training aborts"),
    C('dist.init_process_group(backend="cuda:nccl,cpu:gloo")', "dist_backend", R, True,
      'dist.init_process_group(backend="npu:hccl,cpu:gloo")', "device-qualified backend string"),
    C("return torch.cuda.device_count()", "torch_cuda_api", R, False, "return torch.npu.device_count()",
      "summary only: reports 0 devices"),
])

E("deepmd_pt_training", "deepmd/pt/train/training.py", "explicit_replacement",
  "deepmodeling/deepmd-kit deepmd/pt/train/training.py (Trainer: DDP, fused Adam, torch.profiler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(LOCAL_RANK)", "torch_cuda_api", R, True, "torch.npu.set_device(LOCAL_RANK)",
      "needs a CUDA build; ranks must pin their NPU"),
    C('fused=False if DEVICE.type == "cpu" else True,', "fused_optimizer", R, False,
      'fused=DEVICE.type == "cuda",',
      "on NPU this asks for fused Adam; the op lists carry _fused_adamw_ but no _fused_adam_ NPU kernel, so at "
      "best a CPU fallback (unconfirmed); torch_npu.optim.NpuFusedAdam is the NPU fused variant"),
    C("prof = torch.profiler.profile(", "torch_cuda_api", R, True, "prof = torch_npu.profiler.profile(",
      "torch.profiler records no NPU activity; torch_npu.profiler is the NPU form"),
    C("torch.profiler.ProfilerActivity.CUDA,", "torch_cuda_api", R, True,
      "torch_npu.profiler.ProfilerActivity.NPU,", "ProfilerActivity is marked unsupported in Ascend's table"),
    C("schedule=torch.profiler.schedule(", "torch_cuda_api", R, False,
      "schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),",
      "keep the profiler API consistent (torch_npu.profiler.schedule)"),
    C("on_trace_ready=torch.profiler.tensorboard_trace_handler(", "torch_cuda_api", R, False,
      "on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(self.tensorboard_log_dir)",
      "NPU trace format handler (unconfirmed whether torch's handler works with torch_npu's profiler)"),
    C("torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", R, True,
      'log.info(f"peak device memory: {torch.npu.max_memory_allocated() / 1024**2:.1f} MiB")',
      "without CUDA initialised the CUDA statistics are empty: logs 0 MiB"),
])

E("deepmd_water_run_sh", "examples/water/dpa2/run_pt.sh", "explicit_replacement",
  "deepmd-kit examples/water run script (torchrun dp --pt train / freeze / compress + LAMMPS check)", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-$(nvidia-smi", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-$(npu-smi info -l | awk '/NPU ID/{print $NF}' | paste -sd, -)}",
      "nvidia-smi is absent (the export masks the failure), the list is empty, NGPUS becomes 1 and the NPU "
      "runtime ignores CUDA_VISIBLE_DEVICES: training silently runs on one device"),
    C("export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}", "env_var", R, False,
      "export ASCEND_LAUNCH_BLOCKING=${DEBUG:-0}", "debug switch; the NPU equivalent is ASCEND_LAUNCH_BLOCKING"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator tuning; torch_npu reads PYTORCH_NPU_ALLOC_CONF"),
    C("dp --pt compress -i frozen_model.pth", "custom_cuda_extension", R, False,
      "# dp --pt compress ...  (tabulate custom op has CPU/CUDA kernels only)",
      "compressed models call DeePMD's custom tabulate op; its NPU availability is unconfirmed"),
    C("CUDA_VISIBLE_DEVICES=0 lmp -in in.npt.lammps", "env_var", R, False,
      "ASCEND_RT_VISIBLE_DEVICES=0 lmp -in in.npt.lammps -log log.npt.lammps",
      "inert on NPU (the LAMMPS plugin's libtorch selects CUDA or CPU itself)"),
])

E("deepmd_lammps_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "deepmd-kit / pair_nequip_allegro-style Dockerfile (CUDA base, DP_VARIANT=cuda, LAMMPS Kokkos-CUDA build)", [
    C("ARG CUDA_VERSION=12.4.1", "device_type", R, False, "ARG CANN_VERSION=8.1.rc1",
      "base-image version argument"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu22.04 AS builder", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.11 AS builder",
      "CUDA toolkit image; an NPU image needs CANN (image name unconfirmed)"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "points at a toolkit the NPU image lacks"),
    C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", X, False, None, "CUDA arch list for nvcc builds"),
    C("pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124", "device_type", R, True,
      "RUN python${PYTHON_VERSION} -m pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu "
      "&& python${PYTHON_VERSION} -m pip install torch-npu==2.5.1",
      "cu124 wheel; torch_npu 2.5.1 pairs with torch 2.5.1"),
    C("ENV DP_VARIANT=cuda", "env_var", R, True, "ENV DP_VARIANT=cpu",
      "makes the DeePMD build compile CUDA kernels with nvcc: the build fails without the toolkit"),
    C("ENV CUDAToolkit_ROOT=/usr/local/cuda", "env_var", X, False, None, "CUDA toolkit location for CMake"),
    C("-D USE_CUDA_TOOLKIT=TRUE \\", "custom_cuda_extension", R, True, "-D USE_CUDA_TOOLKIT=FALSE \\",
      "DeePMD C++ interface CUDA build: CMake fails to find the toolkit"),
    C("-D Kokkos_ENABLE_CUDA=ON \\", "custom_cuda_extension", R, True, "-D Kokkos_ENABLE_CUDA=OFF \\",
      "Kokkos has no Ascend backend; OpenMP only"),
    C("-D Kokkos_ARCH_AMPERE80=ON \\", "custom_cuda_extension", X, False, None,
      "GPU architecture flag; meaningless once the CUDA backend is off"),
    C("-D CMAKE_CXX_COMPILER=/opt/lammps/lib/kokkos/bin/nvcc_wrapper \\", "custom_cuda_extension", R, True,
      "-D CMAKE_CXX_COMPILER=g++ \\", "nvcc_wrapper needs nvcc"),
    C("-D PKG_GPU=ON \\", "custom_cuda_extension", R, True, "-D PKG_GPU=OFF \\",
      "LAMMPS GPU package with the CUDA API cannot build"),
    C("-D GPU_API=cuda \\", "custom_cuda_extension", X, False, None, "inert once PKG_GPU is off"),
    C("-D GPU_ARCH=sm_80 \\", "custom_cuda_extension", X, False, None, "inert once PKG_GPU is off"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn-runtime-ubuntu22.04", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.11",
      "runtime stage also needs the CANN runtime (image name unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C('CMD ["lmp", "-k", "on", "g", "1"', "device_type", R, True,
      'CMD ["lmp", "-k", "on", "t", "4", "-sf", "kk", "-pk", "kokkos", "newton", "on", "neigh", "half", "-in", "in.lammps"]',
      "-k on g 1 asks Kokkos for a GPU, which the OpenMP build does not have"),
])

# ---------------------------------------------------------------------------------------------- benchmarks / drivers
E("cueq_tp_benchmark", "benchmarks/bench_tensor_products.py", "explicit_replacement",
  "e3nn vs cuequivariance vs OpenEquivariance tensor-product benchmark (MACE interaction shapes)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", R, True,
      "props = torch.npu.get_device_properties(device)", "needs a CUDA build"),
    C('"capability": f"sm_{props.major}{props.minor}",', "device_capability_check", R, True,
      '"capability": props.name,', "NPU device properties have no major/minor"),
    C('"sms": str(props.multi_processor_count),', "device_capability_check", R, True,
      '"cores": f"{props.cube_core_num} cube / {props.vector_core_num} vector",',
      "no multi_processor_count on NPU properties"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "timing barrier"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA timing events"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA timing events"),
    C("use_fallback=False,", "custom_cuda_extension", R, True, "use_fallback=device.type != \"cuda\",",
      "the cuequivariance benchmark asks for the CUDA kernel explicitly; raises without cuequivariance-ops"),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")',
      "hard-coded device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "needs a CUDA build"),
    C('torch.cuda.nvtx.range_push(f"tp/{name}")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start(f"tp/{name}")',
      "torch.cuda.nvtx is not redirected; NPU ranges go through mstx (method name unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "pairs with the push above"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(device) / 2**20", "reports 0 without CUDA"),
])

E("openmm_torch_md", "examples/run_openmm_ml.py", "explicit_replacement",
  "openmm-torch / openmm-ml ML/MM example (TorchForce around a TorchMD-Net model, NNPOps TorchANI)", [
    C("from NNPOps import OptimizedTorchANI", "custom_cuda_extension", R, True,
      "OptimizedTorchANI = None  # NNPOps kernels are CPU/CUDA only; use the plain torchani model",
      "reached with --model ani2x; NNPOps has no NPU kernels"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "hard-coded device for the ANI path"),
    C('ml_force.setProperty("useCUDAGraphs", "true")', "torch_cuda_api", X, False, None,
      "openmm-torch CUDA-graph property; meaningless off the CUDA platform (behaviour unconfirmed)"),
    C('ml_force.setProperty("CUDAGraphWarmupSteps", "12")', "torch_cuda_api", X, False, None,
      "same (unconfirmed)"),
    C('platform = openmm.Platform.getPlatformByName("CUDA")', "device_type", R, True,
      'platform = openmm.Platform.getPlatformByName("CPU")',
      "OpenMM has no NPU platform; the CUDA platform is missing on an NPU host (TorchForce then evaluates "
      "the model on CPU)"),
    C('properties = {"DeviceIndex": args.device_index, "Precision": "mixed"}', "device_type", R, True,
      'properties = {"Threads": "16"}', "CUDA-platform property names; the CPU platform rejects them"),
])

E("fairchem_base_trainer", "ocpmodels/trainers/base_trainer.py", "explicit_replacement",
  "FAIR-Chem/OCP ocpmodels/trainers/base_trainer.py (device pick, AMP GradScaler/autocast, DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available() and not self.cpu:", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and not self.cpu:",
      "an NPU host takes the else branch and forces cpu=True"),
    C('self.device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C("self.scaler = torch.cuda.amp.GradScaler() if amp and not self.cpu else None", "amp", R, True,
      'self.scaler = torch.amp.GradScaler("npu") if amp and not self.cpu else None',
      "the CUDA GradScaler disables itself without CUDA: fp16 runs without loss scaling"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA; torch.manual_seed already seeds registered backends"),
    C('pin_memory_device=f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "",',
      "pin_memory", R, False,
      'pin_memory_device=f"npu:{torch.npu.current_device()}" if torch.npu.is_available() else "",',
      "pins for the default (CUDA) path on an NPU host; whether that pinned memory serves NPU copies is "
      "unconfirmed"),
    C("with torch.cuda.amp.autocast(enabled=self.scaler is not None):", "amp", R, True,
      "with torch.autocast(\"npu\", enabled=self.scaler is not None):",
      "CUDA autocast is inactive for NPU tensors: the model runs in fp32 while the loss is scaled for fp16"),
    C('with torch.autocast("cuda", enabled=self.scaler is not None):', "amp", R, True,
      'with torch.autocast("npu", enabled=self.scaler is not None):', "same in validation"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
])

E("fairchem_distutils", "ocpmodels/common/distutils.py", "explicit_replacement",
  "FAIR-Chem/OCP ocpmodels/common/distutils.py (SLURM / Summit / torchrun process-group setup)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + " and hccl"),
    C('torch.cuda.set_device(config["local_rank"])', "torch_cuda_api", R, True,
      'torch.npu.set_device(config["local_rank"])', "SLURM path"),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', "Summit/MPI path"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"', "torchrun path"),
    C('torch.cuda.set_device(int(config["local_rank"]))', "torch_cuda_api", R, True,
      'torch.npu.set_device(int(config["local_rank"]))', "torchrun path"),
    C('default="nccl", help="Backend for DDP"', "dist_backend", R, True,
      'parser.add_argument("--distributed-backend", type=str, default="hccl", help="Backend for DDP")',
      "the SLURM path passes config['distributed_backend'] straight to init_process_group"),
])

E("escaip_graph_attention", "fairchem/models/escaip/modules/graph_attention_block.py", "explicit_replacement",
  "fairchem EScAIP-style neighbor-list graph attention block (edge-bias attention, RMSNorm, SwiGLU)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed for the optional fused-op rewrites below"),
    C("variance = x.float().pow(2).mean(-1, keepdim=True)", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "performance: fused RMSNorm"),
    C("return self.w3(self.dropout(F.silu(x1) * x2))", "npu_fused_op", R, False,
      "return self.w3(self.dropout(torch_npu.npu_swiglu(self.w12(x), dim=-1)))",
      "performance: fused SwiGLU (npu_swiglu splits the last dim in half: SiLU(first) * second)"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", R, True,
      "if True:  # NPU: plain SDPA; torch.backends.cuda.sdp_kernel is unsupported",
      "torch.backends.cuda.sdp_kernel is marked unsupported on Ascend; taken by default (use_efficient_kernel)"),
    C("@torch.compiler.disable", "unsupported_op_workaround", X, False, None,
      "torch.compiler.disable is marked unsupported in Ascend's 2.7.1 table and by msFmkTransplt; it is a "
      "Dynamo-only decorator, so a runtime failure is unconfirmed"),
])

E("allegro_requirements", "requirements.txt", "explicit_replacement",
  "NequIP/Allegro + baselines requirements.txt pinned to cu121 wheels (PyG extensions, cuEquivariance, DeePMD)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index (x86 installs the CPU torch build; aarch64 uses PyPI)"),
    C("torch==2.4.1+cu121", "import_torch_npu", R, True, "torch==2.4.0\ntorch-npu==2.4.0.post4",
      "CUDA build of torch; torch_npu needs the matching torch version (no torch_npu for 2.4.1)"),
    C("torchvision==0.19.1+cu121", "device_type", R, True, "torchvision==0.19.0",
      "CUDA wheel; must follow the torch pin"),
    C("-f https://data.pyg.org/whl/torch-2.4.0+cu121.html", "device_type", X, False, None,
      "cu121 PyG wheel index; inert once torch-scatter / torch-cluster are dropped"),
    C("=torch-scatter==2.1.2", "custom_cuda_extension", X, True, None,
      "compiled CPU/CUDA extension; replaced by torch index_add_/scatter_add_ in the code"),
    C("=torch-cluster==1.6.3", "custom_cuda_extension", X, True, None,
      "compiled CPU/CUDA extension (radius_graph)"),
    C("=triton==3.0.0", "triton_kernel_tuning", R, False, "triton-ascend==3.2.0",
      "the TritonContracter falls back to the reference path off CUDA; triton-ascend only matters once the "
      "kernels are ported"),
    C("cuequivariance-ops-torch-cu12==0.2.0", "custom_cuda_extension", X, True, None,
      "CUDA 12 kernel wheel"),
    C("nvidia-ml-py==12.550.52", "torch_cuda_api", X, False, None,
      "NVML monitoring; replace the callback with torch.npu.utilization / npu-smi"),
    C("deepmd-kit[gpu,cu12,torch]==3.0.1", "device_type", R, False, "deepmd-kit[torch]==3.0.1",
      "gpu/cu12 extras pull NVIDIA CUDA runtime wheels that are useless on NPU (unconfirmed whether they "
      "break the install)"),
])

E("torchmdnet_environment", "environment.yml", "explicit_replacement",
  "TorchMD-Net / OpenMM-ML conda environment.yml (nvidia channel, CUDA pytorch build, nvcc)", [
    C("=- nvidia", "device_type", X, False, None, "channel only serves CUDA packages"),
    C("=- cuda-version=12.4", "device_type", X, False, None, "CUDA version pin"),
    C("- pytorch=2.4.*=cuda*", "device_type", R, True, "- pytorch=2.4.0=cpu*",
      "CUDA build string; unsolvable/unusable without a CUDA driver, torch_npu pairs with the CPU build"),
    C("=- cuda-nvcc", "custom_cuda_extension", X, False, None,
      "only used for the CUDA build of the extensions (setup.py builds CPU-only on an NPU host)"),
    C("=- cuda-cudart-dev", "custom_cuda_extension", X, False, None, "CUDA headers/libraries"),
    C("=- cuda-libraries-dev", "custom_cuda_extension", X, False, None, "CUDA headers/libraries"),
    C("=- pytorch_cluster", "custom_cuda_extension", X, True, None, "compiled CPU/CUDA extension"),
    C("=- pytorch_scatter", "custom_cuda_extension", X, True, None, "compiled CPU/CUDA extension"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.4.0.post4",
      "torch_npu is pip-only"),
    C("- cuequivariance-ops-torch-cu12==0.2.0", "custom_cuda_extension", X, True, None, "CUDA 12 kernel wheel"),
    C("=- nvidia-ml-py", "torch_cuda_api", X, False, None, "NVML monitoring"),
])

E("mace_slurm_finetune", "scripts/finetune_mace_mp_slurm.sh", "explicit_replacement",
  "MACE-MP-0 multi-node fine-tuning SLURM script (srun + mace_run_train --distributed, LAMMPS ML-IAP check)", [
    C("#SBATCH --gpus-per-node=4", "device_type", R, False, "#SBATCH --gres=npu:4",
      "GRES naming is site-specific on Ascend clusters (unconfirmed)"),
    C("module load gcc/12.2 cuda/12.4 cudnn/9.1 nccl/2.21", "env_var", R, False,
      "module load gcc/12.2 cann/8.1.rc1", "site modules; with set -e a missing module aborts the job"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL logging; no effect on HCCL"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, True, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL ignores NCCL_*; its own NIC choice may not reach the root node on a multi-NIC host"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", X, False, None,
      "HCCL uses the NPU RoCE ports configured in hccn.conf"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (default 1 per MindCluster docs)"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", X, False, None, "NCCL-only"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "device_capability_check",
      R, True, "npu-smi info", "command not found under set -e aborts the job before training"),
    C('--default_dtype="float64" \\', "unsupported_op_workaround", R, False, '--default_dtype="float32" \\',
      FP64_NOTE),
    C("--device=cuda \\", "device_type", R, True, "--device=npu \\", "selects CUDA in init_device"),
    C("--enable_cueq=True \\", "custom_cuda_extension", R, True, "--enable_cueq=False \\",
      "routes the tensor products to cuEquivariance: with cuequivariance installed the use_fallback=False "
      "modules demand the CUDA kernels, without it the e3nn->cueq conversion cannot run"),
    C("srun --ntasks=1 --gpus=1 lmp -k on g 1", "device_type", R, True,
      "srun --ntasks=1 lmp -k on t 8 -sf kk -pk kokkos newton on neigh half \\",
      "Kokkos GPU run; no Kokkos backend for Ascend"),
])

E("allegro_hydra_config", "configs/allegro_spice_ddp.yaml", "explicit_replacement",
  "NequIP 0.7 / Allegro hydra training config (Lightning Trainer, SimpleDDPStrategy, fused Adam)", [
    C("=accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning's 'gpu' accelerator means CUDA/MPS and raises without them (NPU accelerator plugin unconfirmed)"),
    C("=process_group_backend: nccl", "dist_backend", R, True, "process_group_backend: hccl",
      "NCCL does not exist on an NPU host"),
    C("- _target_: nequip.train.callbacks.GPUMemoryMonitor", "torch_cuda_api", X, False, None,
      "reads CUDA memory statistics; logs zeros on NPU (callback internals unconfirmed)"),
    C("=fused: true", "fused_optimizer", R, False, "fused: false",
      "fused Adam has no _fused_adam_ NPU kernel in the op lists (unconfirmed behaviour); "
      "torch_npu.optim.NpuFusedAdam is the NPU fused optimizer"),
])

E("lammps_pair_nequip", "pair_nequip/pair_nequip.cpp", "explicit_replacement",
  "mir-group/pair_nequip pair_nequip.cpp (LAMMPS pair style running a TorchScript NequIP model via libtorch)", [
    C("#include <torch/torch.h>", "import_torch_npu", A, True, '#include "torch_npu/torch_npu.h"',
      "libtorch needs the torch_npu C++ library linked and initialised for the NPU device (header name "
      "unconfirmed)"),
    C("#include <c10/cuda/CUDACachingAllocator.h>", "torch_cuda_api", R, True,
      '#include "torch_npu/csrc/core/npu/NPUCachingAllocator.h"',
      "CUDA allocator header/library absent from a CPU libtorch"),
    C("if(torch::cuda::is_available()){", "torch_cuda_api", R, True, "if(c10_npu::device_count() > 0){",
      "an NPU host falls to the CPU branch and runs the model on CPU"),
    C("int devicecount = torch::cuda::device_count();", "torch_cuda_api", R, True,
      "int devicecount = c10_npu::device_count();", "device count for rank → device mapping"),
    C("device = c10::Device(torch::kCUDA,deviceidx);", "device_type", R, True,
      "device = c10::Device(c10::DeviceType::PrivateUse1, deviceidx);", "NPU is the PrivateUse1 device type"),
    C("if (device.is_cuda()) {", "device_type", R, False, "if (device.is_privateuseone()) {",
      "cache release on teardown only"),
    C("c10::cuda::CUDACachingAllocator::emptyCache();", "torch_cuda_api", R, True,
      "c10_npu::NPUCachingAllocator::emptyCache();", "does not compile/link without the CUDA allocator"),
])
