# Labels for probe207 (offline RL / sequence-model RL research code, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU = "import torch_npu"
ENTRY_NOTE = ("entry script: torch_npu must be imported before the first NPU use; the torch pins these "
              "projects use predate device-backend autoload (torch_npu >= 2.5.1)")

# ---------------------------------------------------------------- CORL single-file algorithms
E("corl_iql", "algorithms/offline/iql.py", "explicit_replacement",
  "CORL algorithms/offline/iql.py (pyrallis TrainConfig, wandb, D4RL ReplayBuffer on device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "TrainConfig default device; ReplayBuffer/nets/eval all take config.device, so 'cuda' fails on a host without CUDA"),
])

E("corl_cql", "algorithms/offline/cql.py", "explicit_replacement",
  "CORL algorithms/offline/cql.py (ContinuousCQL, TanhGaussianPolicy, pyrallis config)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "default training device feeds ReplayBuffer(device=...) and every .to(config.device)"),
])

E("corl_td3bc", "algorithms/offline/td3_bc.py", "explicit_replacement",
  "CORL algorithms/offline/td3_bc.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('device: str = "cuda:0"', "device_type", "replace", True, 'device: str = "npu:0"',
      "indexed CUDA device string used for buffer, nets and eval"),
])

E("corl_awac", "algorithms/offline/awac.py", "explicit_replacement",
  "CORL algorithms/offline/awac.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "default training device"),
])

E("corl_dt", "algorithms/offline/dt.py", "explicit_replacement",
  "CORL algorithms/offline/dt.py (Decision Transformer, IterableDataset + DataLoader)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "default training device"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "without a pin_memory_device the DataLoader pins for CUDA only and silently turns pinning off when CUDA is "
      "absent; performance only (msFmkTransplt lists pin_memory among performance parameters); exact NPU behaviour unconfirmed"),
])

E("corl_iql_yaml", "configs/offline/iql/halfcheetah/medium_v2.yaml", "explicit_replacement",
  "CORL configs/offline/iql/*/*.yaml (pyrallis config dump)", [
    C("=device: cuda", "device_type", "replace", True, "device: npu",
      "pyrallis overrides TrainConfig.device with this value"),
])

E("corl_dt_yaml", "configs/offline/dt/hopper/medium_expert_v2.yaml", "explicit_replacement",
  "CORL configs/offline/dt/*/*.yaml", [
    C("=device: cuda:0", "device_type", "replace", True, "device: npu:0",
      "pyrallis overrides TrainConfig.device with this value"),
])

E("corl_requirements", "requirements/requirements_dev.txt", "explicit_replacement",
  "CORL requirements/requirements_dev.txt (CUDA 11.3 torch wheel index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "on x86 this pulls the +cu113 build; Ascend installs CPU torch from whl/cpu on x86 (aarch64 resolves to PyPI "
      "anyway). Bloat rather than a failure, so not required"),
    C("=torch==1.11.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==1.11.0.post14",
      "torch-npu pin must match the torch x.y.z; 1.11.0.post14 is the last 1.11 build (CANN 8.0.RC2) - a maintained "
      "stack means bumping both to 2.1.0 / 2.1.0.postN"),
])

E("corl_dockerfile", "Dockerfile", "explicit_replacement",
  "CORL Dockerfile (nvidia/cuda runtime base, mujoco210, pip install -r requirements)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the CUDA runtime image has no CANN toolkit, so torch_npu cannot load; base on a CANN image (Ascend/cann-container-image)"),
    C("ENV LD_LIBRARY_PATH /usr/local/nvidia/lib64:${LD_LIBRARY_PATH}", "env_var", "replace", False,
      "ENV LD_LIBRARY_PATH /usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
      "NVIDIA driver path is dead weight; the CANN base image already exports the Ascend driver paths"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES 0-7",
      "read by the NVIDIA container runtime only; with Ascend Docker Runtime the NPUs are chosen by "
      "ASCEND_VISIBLE_DEVICES (or --device /dev/davinciN at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility,graphics", "env_var", "removal", False, None,
      "NVIDIA container-runtime setting, ignored elsewhere"),
])

E("corl_sweep", "scripts/sweep_gpus.sh", "explicit_replacement",
  "CORL-style sweep launcher (round-robin CUDA_VISIBLE_DEVICES, nohup per run)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu"),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup python", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python algorithms/offline/${ALGO}.py \\",
      "CUDA_VISIBLE_DEVICES is ignored on NPU, so every run would land on npu:0 instead of its assigned card"),
    C("--device=cuda \\", "device_type", "replace", True, "--device=npu \\",
      "CLI override of TrainConfig.device"),
])

# ---------------------------------------------------------------- Decision Transformer (kzl) gym + atari
E("dt_gym_experiment", "gym/experiment.py", "explicit_replacement",
  "decision-transformer gym/experiment.py (variant dict, get_batch with torch.from_numpy(...).to(device=device))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C("device = variant.get('device', 'cuda')", "device_type", "replace", False,
      "device = variant.get('device', 'npu')",
      "fallback only; argparse always puts 'device' into the variant"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "the value every tensor in get_batch and the model are moved to"),
])

E("dt_gym_evaluate", "gym/decision_transformer/evaluation/evaluate_episodes.py", "explicit_replacement",
  "decision-transformer gym/decision_transformer/evaluation/evaluate_episodes.py", [
    C("=device='cuda',", "device_type", "replace", False, "device='npu',",
      "default argument; experiment.py always passes device=, so only other callers would hit it"),
    C("device='cuda',  # experiment.py passes its own device", "device_type", "replace", False,
      "device='npu',  # experiment.py passes its own device",
      "same: default never used by experiment.py"),
])

E("dt_gym_conda_env", "gym/conda_env.yml", "explicit_replacement",
  "decision-transformer gym/conda_env.yml (pytorch + cudatoolkit from conda channels)", [
    C("- cudatoolkit=11.1", "import_torch_npu", "removal", False, None,
      "CUDA runtime is useless on an NPU host; whether the solve fails on aarch64 is unconfirmed"),
    C("- pytorch=1.8.1", "import_torch_npu", "removal", True, None,
      "conda's pytorch-channel build is the CUDA one and no maintained torch_npu exists for 1.8.1; torch must come "
      "from pip at the version torch-npu is built for"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu pin (with torch==2.1.0 from PyPI beside it) replaces the conda pytorch"),
])

E("dt_atari_trainer", "atari/mingpt/trainer_atari.py", "explicit_replacement",
  "decision-transformer atari/mingpt/trainer_atari.py (DataParallel over all GPUs, ALE Env on args.device)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "false on an NPU host: the whole run silently stays on CPU"),
    C("self.device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      'self.device = torch.device("npu", torch.npu.current_device())',
      "an int device index means CUDA to .to(); must become an explicit npu device"),
    C("self.model = torch.nn.DataParallel(self.model).to(self.device)", "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)",
      "torch.nn.DataParallel is unsupported on NPU (Ascend API list / msFmkTransplt); single card or DDP instead"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'loader = DataLoader(data, shuffle=True, pin_memory=True, pin_memory_device="npu",',
      "pinning silently falls back to off without a CUDA device; performance only, unconfirmed"),
    C("sampled_action = sample(self.model.module, state, 1", "distributed_framework", "replace", True,
      "sampled_action = sample(self.model, state, 1, temperature=1.0, sample=True, actions=None,",
      ".module only exists on the DataParallel wrapper removed above"),
    C("sampled_action = sample(self.model.module, all_states", "distributed_framework", "replace", True,
      "sampled_action = sample(self.model, all_states.unsqueeze(0), 1, temperature=1.0, sample=True,",
      "same .module follow-up"),
    C("self.device = torch.device('cuda')", "device_type", "replace", True, "self.device = torch.device('npu')",
      "evaluation Env builds its frame tensors on args.device"),
])

E("online_dt_trainer", "trainer.py", "explicit_replacement",
  "online-dt trainer.py (SequenceTrainer) with a fork's bf16/fp16 autocast + GradScaler", [
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "default argument; main.py constructs the trainer with device=self.device"),
    C("if torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported()",
      "raises without CUDA; torch.npu.get_device_capability() returns None (TORCH_NPU_DEVICE_CAPABILITY) so [0] fails too"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False, 'self.scaler = torch.amp.GradScaler("npu",',
      "the CUDA scaler disables itself when CUDA is absent; with autocast also off training is plain fp32 - "
      "correct but slower"),
    C('logs["training/max_mem_gb"] = torch.cuda.max_memory_allocated(self.device) / 1e9', "torch_cuda_api", "replace",
      False, 'logs["training/max_mem_gb"] = torch.npu.max_memory_allocated(self.device) / 1e9',
      "uninitialised CUDA allocator returns empty stats: logs 0, training unaffected"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "no is_initialized guard: resolves the device through torch.cuda and raises"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):", "amp", "replace", False,
      'with torch.autocast("npu", enabled=self.use_amp, dtype=self.amp_dtype):',
      "cuda autocast warns and disables itself without CUDA: silently fp32, performance only"),
])

# ---------------------------------------------------------------- Trajectory Transformer / Diffuser (janner)
E("tt_arrays", "trajectory/utils/arrays.py", "explicit_replacement",
  "trajectory-transformer trajectory/utils/arrays.py (module DEVICE, set_default_tensor_type)", [
    C("DEVICE = 'cuda:0'", "device_type", "replace", True, "DEVICE = 'npu:0'",
      "default of to_torch/to_device; set_device() never rebinds it (local assignment), so this value is what is used"),
    C("if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
      "with device 'npu:0' the default tensor type is never switched and tensors created without device= stay on CPU"),
    C("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "torch.set_default_tensor_type(torch.npu.FloatTensor)",
      "torch.cuda.FloatTensor is unavailable without CUDA"),
    C("def batch_to_device(batch, device='cuda:0'):", "device_type", "replace", True,
      "def batch_to_device(batch, device='npu:0'):",
      "training loops call batch_to_device(batch) without a device"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory report helper silently returns on NPU; diagnostics only"),
    C("allocated = torch.cuda.memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated() / 1024 ** 3", "diagnostics only"),
    C("reserved = torch.cuda.memory_reserved() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 1024 ** 3", "diagnostics only"),
])

E("diffuser_training", "diffuser/utils/training.py", "explicit_replacement",
  "diffuser diffuser/utils/training.py (Trainer, EMA, render_samples)", [
    C("batch_size=train_batch_size, num_workers=1, shuffle=True, pin_memory=True", "pin_memory", "replace", False,
      "self.dataset, batch_size=train_batch_size, num_workers=1, shuffle=True, pin_memory=True, pin_memory_device='npu'",
      "pinning silently off without CUDA; performance only, unconfirmed"),
    C("batch_size=1, num_workers=0, shuffle=True, pin_memory=True", "pin_memory", "replace", False,
      "self.dataset, batch_size=1, num_workers=0, shuffle=True, pin_memory=True, pin_memory_device='npu'",
      "same; visualisation loader"),
    C("batch_size=batch_size, num_workers=0, shuffle=True, pin_memory=True", "pin_memory", "replace", False,
      "self.dataset, batch_size=batch_size, num_workers=0, shuffle=True, pin_memory=True, pin_memory_device='npu'",
      "same; reference-render loader"),
    C("batch = batch_to_device(batch)", "tensor_to_device", "replace", True,
      "batch = batch_to_device(batch, device=self.device)",
      "diffuser.utils.arrays.batch_to_device defaults to device='cuda:0'"),
    C("conditions = to_device(batch.conditions, 'cuda:0')", "tensor_to_device", "replace", True,
      "conditions = to_device(batch.conditions, 'npu:0')",
      "hard-coded CUDA device in render_samples"),
])

# ---------------------------------------------------------------- IQL-PyTorch, TD3+BC (sfujim), rlkit, Diffusion-QL, OfflineRL-Kit
E("iql_pytorch_util", "src/util.py", "explicit_replacement",
  "gwthomas/IQL-PyTorch src/util.py (DEFAULT_DEVICE, torchify, set_seed)", [
    C("DEFAULT_DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEFAULT_DEVICE = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "silently trains on CPU on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "false on NPU, but torch.manual_seed above already seeds the NPU generator; seeding branch is redundant"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant after torch.manual_seed (which also seeds the privateuse1 device) - unconfirmed in the notes"),
])

E("td3bc_algo", "TD3_BC.py", "explicit_replacement",
  "sfujim/TD3_BC TD3_BC.py (module-level device)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently runs on CPU on an NPU host"),
])

E("td3bc_main", "main.py", "explicit_replacement",
  "sfujim/TD3_BC main.py (argparse, seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "ignored on NPU: --gpu would have no effect and every run uses npu:0"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "queued lazily and never run without CUDA; torch.manual_seed above already seeds the NPU generator"),
])

E("rlkit_ptu", "rlkit/torch/pytorch_util.py", "explicit_replacement",
  "rail-berkeley/rlkit rlkit/torch/pytorch_util.py (global device, set_gpu_mode)", [
    C('device = torch.device("cuda:" + str(gpu_id) if _use_gpu else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:" + str(gpu_id) if _use_gpu else "cpu")',
      "the global device every ptu.* factory uses"),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "raises without CUDA"),
])

E("rlkit_awac_launcher", "examples/awac/mujoco/awac1.py", "explicit_replacement",
  "rlkit examples/awac/mujoco/awac1.py launcher (variant dict, sweeper, run_experiment)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu)',
      "device masking is what maps --gpu onto gpu_id=0 below; ignored on NPU"),
])

E("diffusion_ql_main", "main.py", "explicit_replacement",
  "Zhendong-Wang/Diffusion-Policies-for-Offline-RL main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('args.device = f"cuda:{args.device}" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = f"npu:{args.device}" if torch.npu.is_available() else "cpu"',
      "silently falls back to CPU on an NPU host"),
])

E("offlinerlkit_run_cql", "run_example/run_cql.py", "explicit_replacement",
  "yihaosun1124/OfflineRL-Kit run_example/run_cql.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda" if torch.cuda.is_available() else "cpu")',
      "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu" if torch.npu.is_available() else "cpu")',
      "default silently resolves to cpu on an NPU host"),
])

# ---------------------------------------------------------------- d3rlpy v2 / v1
E("d3rlpy_torch_utility", "d3rlpy/torch_utility.py", "device_branch_or_abstraction",
  "d3rlpy d3rlpy/torch_utility.py (map_location, TorchMiniBatch, CUDA-graph wrapper for compile_graph)", [
    C('if "cuda" in device:', "tensor_to_device", "add_branch", True,
      'if "npu" in device: return lambda storage, loc: storage.npu(int(device.split(":")[1]))',
      "map_location raises ValueError for 'npu:N', so every checkpoint load fails"),
    C("_graph: Optional[torch.cuda.CUDAGraph]", "torch_cuda_api", "replace", False, "_graph: Optional[Any]",
      "annotation only (the dummy CUDAGraph class exists in CPU builds); tidied when the NPU path bypasses the wrapper"),
    C("return CudaGraphWrapper(torch.compile(func, fullgraph=True))", "compile_mode", "add_branch", True,
      'return torch.compile(func, fullgraph=True) if hasattr(torch, "npu") and torch.npu.is_available() else CudaGraphWrapper(torch.compile(func, fullgraph=True))',
      "with compile_graph=True the wrapper instantiates torch.cuda.CUDAGraph, which fails without CUDA; "
      "torch.npu.NPUGraph is listed for inference only, so the training step is compiled without graph capture on NPU"),
])

E("d3rlpy_base", "d3rlpy/base.py", "device_branch_or_abstraction",
  "d3rlpy d3rlpy/base.py (DeviceArg, _process_device, LearnableBase)", [
    C('return "cuda:0" if value else "cpu:0"', "device_type", "add_branch", True,
      'return _accelerator_device(0) if value else "cpu:0"',
      "create(device=True) - the documented 'use the GPU' form - maps to cuda:0"),
    C('return f"cuda:{value}"', "device_type", "add_branch", True, "return _accelerator_device(value)",
      "create(device=<int>) (e.g. reproductions' --gpu) maps to cuda:N"),
])

E("d3rlpy_distributed", "d3rlpy/distributed.py", "device_branch_or_abstraction",
  "d3rlpy d3rlpy/distributed.py (init_process_group / DDP helpers)", [
    C('if backend == "nccl":', "dist_backend", "replace", True, 'if backend in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten by transfer_to_npu; with 'hccl' the per-rank set_device is skipped"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "add_branch", True,
      'torch.npu.set_device(local_rank) if backend == "hccl" else torch.cuda.set_device(local_rank)',
      "each rank must bind its NPU before HCCL builds communicators"),
    C('device_ids = [device.index] if device.type == "cuda" else None', "device_type", "replace", False,
      'device_ids = [device.index] if device.type in ("cuda", "npu") else None',
      "device_ids=None is also valid for a single-device module, so DDP still works; explicit ids are cleaner"),
])

E("d3rlpy_ddp_example", "examples/distributed_offline_training.py", "explicit_replacement",
  "d3rlpy examples/distributed_offline_training.py (torchrun, enable_ddp=True)", [
    C("=import d3rlpy", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('rank = d3rlpy.distributed.init_process_group("nccl")', "dist_backend", "replace", True,
      'rank = d3rlpy.distributed.init_process_group("hccl")', "NCCL backend does not exist on NPU"),
    C('device = f"cuda:{rank}"', "device_type", "replace", True, 'device = f"npu:{rank}"',
      "per-rank device string handed to create()"),
])

E("d3rlpy_ddp_launch", "examples/run_distributed.sh", "explicit_replacement",
  "d3rlpy-style torchrun launcher for the DDP example", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN env for torch_npu; placed before `set -u` because set_env.sh expands possibly-unset variables (unconfirmed)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device mask silently ignored on NPU; a user override (e.g. 4,5,6,7) would have no effect"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL logging knob, ignored by HCCL; CANN log level is the nearest equivalent"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround for PCIe P2P hangs; no HCCL counterpart"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING"),
    C('echo "launching ${NUM_GPUS} workers on GPUs ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "launching ${NUM_GPUS} workers on NPUs ${ASCEND_RT_VISIBLE_DEVICES}"',
      "once the export is renamed, this unset variable aborts the script under set -u"),
])

E("d3rlpy_v1_torch_base", "d3rlpy/algos/torch/base.py", "explicit_replacement",
  "d3rlpy v1.x d3rlpy/algos/torch/base.py (TorchImplBase.to_gpu with use_gpu=True)", [
    C('self._device = f"cuda:{device.get_id()}"', "device_type", "replace", True,
      'self._device = f"npu:{device.get_id()}"',
      "CQL(use_gpu=True) ends up here; the string drives torch_api tensors and map_location"),
])

# ---------------------------------------------------------------- torch.compile / custom kernels
E("leanrl_iql_compile", "leanrl/iql_offline_torchcompile.py", "explicit_replacement",
  "LeanRL-style single-file offline IQL (tyro Args, TensorDict, torch.compile, tensordict CudaGraphModule)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, ENTRY_NOTE),
    C('buffer_device: str = "cuda"', "device_type", "replace", True, 'buffer_device: str = "npu"',
      "LazyTensorStorage and the dataset TensorDict are placed on this device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", "replace",
      True, 'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "networks silently built on CPU while the buffer is on the accelerator"),
    C("actor.parameters(), lr=args.learning_rate, fused=torch.cuda.is_available()", "fused_optimizer", "replace",
      False, "actor.parameters(), lr=args.learning_rate, foreach=True",
      "evaluates to fused=False on NPU (plain Adam, still correct); the 2.7.1 NPU op list has _fused_adamw_ but no "
      "_fused_adam_, so torch_npu.optim.NpuFusedAdam or foreach is the faster path"),
    C('policy = torch.compile(policy, mode="reduce-overhead")', "compile_mode", "replace", False,
      'policy = torch.compile(policy, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; on NPU graph replay comes from backend='npugraphs' (inference-only, fits "
      "the policy); behaviour of mode='reduce-overhead' on NPU unconfirmed"),
    C("=if args.cudagraphs:", "compile_mode", "replace", True, 'if args.cudagraphs and device.type == "cuda":',
      "CudaGraphModule captures the training update with torch.cuda graphs; NPUGraph is inference-only, so skip it on NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.synchronize()  # flush queued kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # flush queued kernels before reading the clock", "raises without CUDA"),
    C('"gpu_mem_gb": torch.cuda.max_memory_allocated() / 2**30,', "torch_cuda_api", "replace", False,
      '"gpu_mem_gb": torch.npu.max_memory_allocated() / 2**30,',
      "uninitialised CUDA allocator reports 0; logging only"),
])

E("decision_mamba_model", "gym/decision_mamba/models/decision_mamba.py", "kernel_rewrite",
  "Decision Mamba (DT gym layout, mamba_ssm Block/Mamba trunk, optional hybrid attention)", [
    C("from mamba_ssm.modules.mamba_simple import Mamba, Block", "custom_cuda_extension", "replace", True,
      "from .mamba_torch import Mamba, Block  # pure-PyTorch selective scan",
      "mamba_ssm needs nvcc-built selective_scan_cuda and causal_conv1d kernels; there is no NPU build"),
    C("from mamba_ssm.models.mixer_seq_simple import _init_weights", "custom_cuda_extension", "replace", True,
      "from .mamba_torch import _init_weights", "package is not installable on the NPU host"),
    C("from mamba_ssm.ops.triton.layer_norm import RMSNorm, layer_norm_fn, rms_norm_fn", "npu_fused_op", "replace",
      True, "from .npu_norm import RMSNorm  # wraps torch_npu.npu_rms_norm",
      "guarded import yields RMSNorm=None and the default rms_norm=True then calls None; torch_npu.npu_rms_norm is "
      "the fused replacement"),
    C("fused_add_norm: bool = True", "unsupported_op_workaround", "replace", True, "fused_add_norm: bool = False",
      "Triton fused add+norm kernels are absent, and MixerTrunk raises ImportError when this is on"),
])
