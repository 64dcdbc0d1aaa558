ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("sb3_utils", "stable_baselines3/common/utils.py", "device_branch_or_abstraction",
  "Stable-Baselines3 common/utils.py (get_device, set_random_seed, get_system_info)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
      "get_device() must resolve 'npu'; the torch.npu namespace and the 'npu' device type only exist once torch_npu is imported"),
    C("th.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "th.use_deterministic_algorithms(True)",
      "cudnn flags are accepted but meaningless on NPU (silent no-op); determinism on NPU comes from use_deterministic_algorithms / HCCL_DETERMINISTIC"),
    C("=device = \"cuda\"", "device_type", "replace", True, "device = \"npu\"",
      "'auto' maps to CUDA; on an NPU host the fallback below then silently picks CPU"),
    C("if device.type == th.device(\"cuda\").type and not th.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if device.type == \"npu\" and not th.npu.is_available():",
      "availability check must test the NPU; th.cuda.is_available() is False on Ascend so every run falls back to CPU"),
    C("\"GPU Enabled\": str(th.cuda.is_available()),", "torch_cuda_api", "replace", False,
      "\"NPU Enabled\": str(th.npu.is_available()),",
      "informational only (system-info report); would report False on an NPU host"),
])

E("sb3_base_class", "stable_baselines3/common/base_class.py", "device_branch_or_abstraction",
  "Stable-Baselines3 common/base_class.py (BaseAlgorithm __init__/set_random_seed/load)", [
    C("set_random_seed(seed, using_cuda=self.device.type == th.device(\"cuda\").type)", "device_type", "replace", False,
      "set_random_seed(seed, using_cuda=self.device.type in (\"cuda\", \"npu\"))",
      "using_cuda only toggles cudnn flags (no-op on NPU); th.manual_seed already seeds the NPU generator, so this is cosmetic"),
])

E("cleanrl_ppo_atari", "cleanrl/ppo_atari.py", "explicit_replacement",
  "CleanRL single-file ppo_atari.py (tyro Args, --cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "single-file script: torch_npu must be imported before torch.npu / 'npu' device can be used"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)",
      "cudnn flag is a silent no-op on NPU; determinism needs use_deterministic_algorithms (perf cost)"),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() and args.cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() and args.cuda else \"cpu\")",
      "torch.cuda.is_available() is False on Ascend, so the whole run silently trains on CPU"),
])

E("cleanrl_ppo_multigpu", "cleanrl/ppo_atari_multigpu.py", "explicit_replacement",
  "CleanRL ppo_atari_multigpu.py (torchrun, manual gradient all_reduce, --device-ids)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu.* and 'npu:N' devices"),
    C("backend: str = \"gloo\"", "dist_backend", "replace", False, "backend: str = \"hccl\"",
      "gradients are all-reduced as device tensors; HCCL is the NPU collective backend. Whether gloo accepts NPU tensors is unconfirmed (likely fails or stages through host)"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)", "cudnn flag is a silent no-op on NPU"),
    C("device = torch.device(f\"cuda:{args.device_ids[local_rank]}\"", "device_type", "replace", True,
      "device = torch.device(f\"npu:{args.device_ids[local_rank]}\" if torch.npu.is_available() and args.cuda else \"cpu\")",
      "explicit cuda:N device + cuda availability check -> CPU fallback on Ascend"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()", "returns 0 on an NPU host, so ranks are never spread over devices"),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() and args.cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() and args.cuda else \"cpu\")", "silent CPU fallback"),
    C("device = torch.device(f\"cuda:{local_rank}\" if torch.cuda.is_available() and args.cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{local_rank}\" if torch.npu.is_available() and args.cuda else \"cpu\")", "silent CPU fallback"),
])

E("cleanrl_dqn", "cleanrl/dqn_atari.py", "explicit_replacement",
  "CleanRL dqn_atari.py (SB3 ReplayBuffer fed a device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the 'npu' device"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)", "cudnn flag is a silent no-op on NPU"),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() and args.cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() and args.cuda else \"cpu\")",
      "silent CPU fallback; the same device is handed to ReplayBuffer, so fixing it here also moves sampled batches"),
])

E("cleanrl_dqn_eval", "cleanrl_utils/evals/dqn_eval.py", "explicit_replacement",
  "CleanRL cleanrl_utils/evals/dqn_eval.py (evaluate helper + HF hub demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the __main__ demo runs standalone; 'npu' device strings need torch_npu imported"),
    C("device=\"cuda\",", "device_type", "replace", True, "device=\"npu\",",
      "hard-coded CUDA device: Module.to('cuda') raises on a host without CUDA"),
])

E("leanrl_ppo_compile", "leanrl/ppo_continuous_action_torchcompile.py", "explicit_replacement",
  "LeanRL/CleanRL ppo_continuous_action_torchcompile.py (torch.compile + tensordict CudaGraphModule)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the 'npu' device"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)", "cudnn flag is a silent no-op on NPU"),
    C("device = torch.device(\"cuda\" if torch.cuda.is_available() and args.cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if torch.npu.is_available() and args.cuda else \"cpu\")", "silent CPU fallback"),
    C("=if args.cudagraphs:", "compile_mode", "replace", False,
      "if args.cudagraphs and device.type == \"cuda\":",
      "CudaGraphModule captures with torch.cuda.CUDAGraph; on NPU the opt-in --cudagraphs path cannot work (NPUGraph is a different API). Flag defaults to off, so not required"),
])

E("torchrl_dqn_atari", "examples/dqn/dqn_atari.py", "device_branch_or_abstraction",
  "TorchRL examples/dqn/dqn_atari.py (hydra, SyncDataCollector, CudaGraphModule)", [
    C("=import torch.nn", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "script resolves its device from torch.npu; torch_npu must be imported"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "empty cfg.device falls back to CPU on Ascend"),
    C("device = \"cuda:0\"", "device_type", "replace", True, "device = \"npu:0\"", "hard-coded CUDA device string"),
    C("update = CudaGraphModule(update, warmup=50)", "compile_mode", "replace", False,
      "update = CudaGraphModule(update, warmup=50) if device.type == \"cuda\" else update",
      "CUDA-graph capture is CUDA-only; only reached with compile.cudagraphs=True (default False)"),
    C("cudagraph_policy=cfg.compile.cudagraphs,", "compile_mode", "replace", False,
      "cudagraph_policy=cfg.compile.cudagraphs and device.type == \"cuda\",",
      "collector-side CUDA graph of the policy; opt-in, default off"),
])

E("torchrl_dqn_config", "examples/dqn/config_atari.yaml", "device_branch_or_abstraction",
  "TorchRL examples/dqn/config_atari.yaml (hydra config)", [
    C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
      "torch.device('cuda:0') is built from this string; the collector/env/model all land on a nonexistent CUDA device"),
])

E("torchrl_dqn_utils", "examples/dqn/utils_atari.py", "device_branch_or_abstraction",
  "TorchRL examples/dqn/utils_atari.py (GymEnv/ConvNet/QValueActor factories)", [])

E("torchrl_mappo_tutorial", "tutorials/sphinx-tutorials/multiagent_ppo.py", "explicit_replacement",
  "TorchRL sphinx tutorial multiagent_ppo.py (VMAS, MultiAgentMLP, LazyTensorStorage on device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the 'npu' device"),
    C("=torch.device(0)", "device_type", "replace", True, "torch.device(\"npu\", 0)",
      "a bare ordinal resolves to cuda:0 on a stock build; must name the NPU explicitly"),
    C("if torch.cuda.is_available() and not is_fork", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not is_fork",
      "False on Ascend: VMAS, policy, collector and LazyTensorStorage all silently run on CPU"),
])

E("tianshou_atari_dqn", "examples/atari/atari_dqn.py", "explicit_replacement",
  "Tianshou examples/atari/atari_dqn.py (argparse --device, Collector, OffpolicyTrainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the 'npu' device string passed around as args.device"),
    C("parser.add_argument(\"--device\", type=str, default=\"cuda\" if torch.cuda.is_available() else \"cpu\")",
      "device_type", "replace", True,
      "parser.add_argument(\"--device\", type=str, default=\"npu\" if torch.npu.is_available() else \"cpu\")",
      "default device silently becomes cpu on Ascend; args.device feeds the net, ICM and torch.load map_location"),
])

E("tianshou_atari_network", "examples/atari/atari_network.py", "device_branch_or_abstraction",
  "Tianshou examples/atari/atari_network.py (DQN/C51/Rainbow nets taking a device argument)", [])

E("tianshou_mujoco_sac", "examples/mujoco/mujoco_sac.py", "explicit_replacement",
  "Tianshou examples/mujoco/mujoco_sac.py (argparse --device, ActorProb/Critic)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "needed for torch.npu and the 'npu' device string"),
    C("default=\"cuda\" if torch.cuda.is_available() else \"cpu\",", "device_type", "replace", True,
      "default=\"npu\" if torch.npu.is_available() else \"cpu\",",
      "default device silently becomes cpu on Ascend"),
])

E("cleanrl_benchmark_sh", "benchmark/ppo.sh", "explicit_replacement",
  "CleanRL benchmark/ppo.sh (cleanrl_utils.benchmark fan-out, torchrun multi-GPU run)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* vars) must be sourced before torch_npu can load"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "env_var", "replace", True,
      "npu-smi info", "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
    C("CUDA_VISIBLE_DEVICES=0 xvfb-run", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 xvfb-run -a poetry run python -m cleanrl_utils.benchmark \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; job still lands on npu:0 but pinning is lost"),
    C("CUDA_VISIBLE_DEVICES=0,1 xvfb-run", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1 xvfb-run -a poetry run python -m cleanrl_utils.benchmark \\",
      "visibility mask ignored on Ascend; device ids 0/1 still resolve"),
    C("--nproc_per_node=2 cleanrl/ppo_atari_multigpu.py --device-ids 0 1 --backend nccl --track\"", "dist_backend", "replace", True,
      "    --command \"poetry run torchrun --standalone --nnodes=1 --nproc_per_node=2 cleanrl/ppo_atari_multigpu.py --device-ids 0 1 --backend hccl --track\" \\",
      "backend string flows into dist.init_process_group; NCCL is not available with torch_npu"),
    C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "NCCL tuning var, ignored by HCCL; no direct HCCL equivalent needed for single-node runs"),
    C("=export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob has no effect on HCCL; CANN log level is the rough equivalent"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 poetry run torchrun", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 poetry run torchrun --standalone --nnodes=1 --nproc_per_node=4 \\",
      "visibility mask ignored on Ascend; explicit --device-ids still resolve"),
    C("--device-ids 0 1 2 3 --backend nccl --track", "dist_backend", "replace", True,
      "    cleanrl/ppo_atari_multigpu.py --env-id BreakoutNoFrameskip-v4 --device-ids 0 1 2 3 --backend hccl --track",
      "init_process_group('nccl') fails with torch_npu"),
])

E("cleanrl_pyproject", "pyproject.toml", "explicit_replacement",
  "CleanRL pyproject.toml (poetry, torch pinned to the cu118 wheel index)", [
    C("torch = {version = \"2.0.1+cu118\", source = \"torch-cu118\"}", "device_type", "replace", True,
      "torch = \"2.1.0\"",
      "CUDA wheel from the cu118 index; torch_npu needs the matching plain torch build (same x.y.z as the torch_npu wheel)"),
    C("stable-baselines3 = \"2.0.0\"", "import_torch_npu", "npu_only_addition", True,
      "torch-npu = \"2.1.0.post12\"",
      "torch_npu is not pulled by anything else; pin it next to torch (version must match torch 2.1.0)"),
    C("url = \"https://download.pytorch.org/whl/cu118\"", "device_type", "replace", False,
      "url = \"https://download.pytorch.org/whl/cpu\"",
      "once torch no longer references this explicit source it is unused; switching to the cpu index is tidy-up"),
])

E("cleanrl_req_envpool", "requirements/requirements-envpool.txt", "explicit_replacement",
  "CleanRL requirements/requirements-envpool.txt (poetry export with CUDA torch)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "index alone is harmless; the +cu118 pin below is what breaks"),
    C("nvidia-cublas-cu11==11.10.3.66", "device_type", "removal", False, None,
      "CUDA runtime wheel dragged in by the CUDA torch build; dead weight on Ascend (whether it even resolves on aarch64 is unconfirmed)"),
    C("nvidia-cudnn-cu11==8.5.0.96", "device_type", "removal", False, None,
      "cuDNN wheel, unused on Ascend"),
    C("torch==2.0.1+cu118", "device_type", "replace", True,
      "torch==2.1.0 ; python_version >= \"3.8\" and python_version < \"3.11\"",
      "CUDA build of torch; torch_npu requires the matching plain torch release"),
    C("tyro==0.5.10", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12 ; python_version >= \"3.8\" and python_version < \"3.11\"",
      "torch_npu pin (kept with the torch pin block)"),
])

E("cleanrl_dockerfile", "Dockerfile", "explicit_replacement",
  "CleanRL Dockerfile (nvidia/cuda base image, poetry install)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit; torch_npu cannot load without CANN"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "nvidia-container-runtime knob; Ascend docker runtime reads ASCEND_VISIBLE_DEVICES (devices can also be passed with --device)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime knob, ignored on Ascend"),
])

E("tianshou_envyml", "environment.yml", "explicit_replacement",
  "Tianshou-style conda environment.yml for GPU benchmark boxes", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only serves CUDA packages"),
    C("=- pytorch=2.1.2", "device_type", "replace", True, "- pytorch=2.1.0",
      "torch_npu wheels are built per exact torch release (2.1.0 line); 2.1.2 does not match any torch_npu 2.1.0.postN"),
    C("=- pytorch-cuda=12.1", "device_type", "removal", True, None,
      "selects the CUDA build of pytorch from the nvidia channel; must go for a CPU torch + torch_npu install"),
    C("=- tianshou==1.1.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "torch_npu is pip-only; add to the pip: block"),
    C("=- nvidia-ml-py==12.535.133", "device_type", "removal", False, None,
      "pynvml has no NPU backend (npu-smi / torch.npu.utilization instead); only matters if GPU monitoring code calls nvmlInit"),
])

E("rlzoo_train", "rl_zoo3/train.py", "device_branch_or_abstraction",
  "RL Baselines3 Zoo rl_zoo3/train.py (argparse --device auto, ExperimentManager)", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", False, "import torch_npu  # noqa: F401",
      "th.npu is already registered once the (ported) stable_baselines3.common.utils import runs; explicit import is belt-and-braces"),
    C("if args.device == \"cuda\" and not th.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if args.device.startswith(\"npu\") and not th.npu.is_available():",
      "guard only fires for --device cuda (correctly fails on Ascend); an NPU guard is a nicety"),
    C("if args.device.startswith(\"cuda\") and th.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.device.startswith(\"npu\") and th.npu.is_available():", "log-only branch, silently skipped on NPU"),
    C("print(f\"Using GPU: {th.cuda.get_device_name(th.device(args.device))}\")", "torch_cuda_api", "replace", False,
      "print(f\"Using NPU: {th.npu.get_device_name(th.device(args.device))}\")", "log-only"),
])

E("torchrl_dreamer", "examples/dreamer/dreamer.py", "explicit_replacement",
  "TorchRL examples/dreamer/dreamer.py (bf16 autocast, GradScaler, compiled RSSM rollouts)", [
    C("=import torch.cuda", "import_torch_npu", "replace", True, "import torch_npu",
      "the explicit torch.cuda import becomes the torch_npu import; torch.npu and the 'npu' device need it"),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", False, "from torch.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself (with a warning) when CUDA is unavailable; harmless here because autocast is bf16 and needs no loss scaling"),
    C("assert device.type == \"cuda\", \"Dreamer only supports CUDA devices\"", "device_type", "replace", True,
      "assert device.type in (\"cuda\", \"npu\"), \"Dreamer only supports accelerator devices\"",
      "hard assert aborts on an NPU device"),
    C("device_type=\"cuda\", dtype=torch.bfloat16", "amp", "replace", True,
      "device_type=device.type, dtype=torch.bfloat16",
      "autocast('cuda') on an NPU host is disabled with a warning: the actor loss silently runs in fp32 although bf16 was requested"),
    C("=device_type=\"cuda\",", "amp", "replace", True, "device_type=device.type,",
      "same silent fp32 fallback for the value loss"),
    C("metrics_to_log[\"max_memory_allocated_gb\"] = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "metrics_to_log[\"max_memory_allocated_gb\"] = torch.npu.max_memory_allocated() / 2**30",
      "logging only; the CUDA allocator was never initialised so it reports 0 (unconfirmed whether it raises instead)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; replacing restores the intended cache release"),
])

E("torchrl_dist_collector", "examples/distributed/collectors/multi_nodes/generic.py", "explicit_replacement",
  "TorchRL examples/distributed/collectors/multi_nodes/generic.py (DistributedDataCollector over slurm/submitit)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "collector workers build npu devices and query torch.npu"),
    C("=if backend == \"nccl\":", "dist_backend", "replace", False, "if backend in (\"nccl\", \"hccl\"):",
      "backend-string comparison is never rewritten automatically; default gloo keeps CPU collectors and still runs, so only needed to put collectors on NPUs"),
    C("collector_kwargs = {device_str: \"cuda:0\"}", "device_type", "replace", True,
      "collector_kwargs = {device_str: \"npu:0\"}", "hard-coded CUDA device for the device-collector branch"),
    C("device_str: [f\"cuda:{i}\" for i in range(num_workers)],", "device_type", "replace", True,
      "device_str: [f\"npu:{i}\" for i in range(num_workers)],", "hard-coded CUDA devices"),
    C("\"storing_device\": \"cuda:0\",", "device_type", "replace", True, "\"storing_device\": \"npu:0\",",
      "hard-coded CUDA storing device"),
    C("device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "device_count = torch.npu.device_count()", "returns 0 on Ascend, so the device branch always raises"),
    C("if device_count < num_workers and backend == \"nccl\":", "dist_backend", "replace", False,
      "if device_count < num_workers and backend in (\"nccl\", \"hccl\"):", "backend-string comparison; sanity check only"),
])

E("cleanrl_utils_benchmark", "cleanrl_utils/benchmark.py", "explicit_replacement",
  "CleanRL cleanrl_utils/benchmark.py (seed fan-out with thread workers and slurm templates)", [
    C("out = subprocess.run([\"nvidia-smi\", \"-L\"], capture_output=True, text=True, check=True).stdout", "env_var", "replace", False,
      "out = subprocess.run([\"npu-smi\", \"info\", \"-l\"], capture_output=True, text=True, check=True).stdout",
      "device count via the NVIDIA driver; FileNotFoundError is caught, so on Ascend round-robin just silently turns off (opt-in flag)"),
    C("return len([line for line in out.splitlines() if line.startswith(\"GPU \")])", "env_var", "replace", False,
      "return len([line for line in out.splitlines() if \"NPU ID\" in line])",
      "parsing of the nvidia-smi -L format; npu-smi prints a different table (exact format unconfirmed)"),
    C("env[\"CUDA_VISIBLE_DEVICES\"] = str(gpu_id)", "env_var", "replace", False,
      "env[\"ASCEND_RT_VISIBLE_DEVICES\"] = str(gpu_id)",
      "per-worker pinning; ignored by the Ascend runtime so every worker would share npu:0 once counting works. Unreached unchanged"),
])

E("rlzoo_bench_sh", "scripts/run_benchmark_gpu.sh", "explicit_replacement",
  "RL Baselines3 Zoo-style per-GPU benchmark launcher (train.py over MuJoCo envs and seeds)", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "the script is launched once per card; with the CUDA mask ignored every launch lands on npu:0 and they contend for one device"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
      "cuBLAS determinism knob, ignored on Ascend"),
    C("=export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu"),
    C("nvidia-smi --query-gpu=index,name,memory.used", "env_var", "replace", False,
      "npu-smi info -i ${GPU_ID} > \"${LOG_DIR}/gpu_info.txt\" || true",
      "informational only and guarded by || true"),
    C("=--device cuda \\", "device_type", "replace", True, "--device npu \\",
      "SB3 get_device('cuda') falls back to CPU when CUDA is absent: the whole benchmark silently runs on CPU"),
])

E("sb3_save_util", "stable_baselines3/common/save_util.py", "device_branch_or_abstraction",
  "Stable-Baselines3 common/save_util.py (load_from_zip_file with th.load(map_location=device))", [])
