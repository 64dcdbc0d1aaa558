"""Labels for probe208 (world models / model-based RL, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
IMPORT_NPU_NOTE = ("entry script: import torch_npu to register the NPU backend (mandatory before torch_npu 2.5.1 "
                   "device autoload; recommended after)")

# ---------------------------------------------------------------- DreamerV3-torch
E("dv3_configs", "configs.yaml", "explicit_replacement",
  "DreamerV3-torch configs.yaml (defaults + per-suite overrides)",
  [
      C("device: 'cuda:0'", "device_type", "replace", True, "device: 'npu:0'",
        "config.device feeds torch.device/.to()/tensor(device=...) everywhere; 'cuda:0' fails on an NPU host"),
  ])

E("dv3_dreamer", "dreamer.py", "explicit_replacement",
  "DreamerV3-torch dreamer.py (agent wrapper + main loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C('if config.compile and os.name != "nt":', "compile_mode", "replace", False,
        'if config.compile and os.name != "nt" and config.device.startswith("cuda"):',
        "compile: True is the default; Inductor for NPU needs torch_npu>=2.6 (+triton-ascend) and NPUGraph is "
        "inference-only, so skip torch.compile for training on the pinned torch 2.1 stack -- unconfirmed whether it "
        "errors or only falls back"),
  ])

E("dv3_models", "models.py", "explicit_replacement",
  "DreamerV3-torch models.py (WorldModel, ImagBehavior, RewardEMA)",
  [
      C("with torch.cuda.amp.autocast(self._use_amp):", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self._use_amp):',
        "CUDA autocast on an NPU host warns and disables itself: precision=16 silently trains in fp32"),
      C("with torch.cuda.amp.autocast(self._use_amp), torch.no_grad():", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self._use_amp), torch.no_grad():',
        "same CUDA-only autocast (entropy statistics block)"),
      C("=with torch.cuda.amp.autocast(enabled=self._use_amp):", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self._use_amp):',
        "same CUDA-only autocast (actor loss)"),
      C("# critic", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self._use_amp):  # critic',
        "same CUDA-only autocast (critic loss)"),
  ])

E("dv3_networks", "networks.py", "explicit_replacement",
  "DreamerV3-torch networks.py (RSSM, LayerNorm GRU cell, MLP heads, conv encoder)",
  [
      C('device="cuda",', "device_type", "replace", True, 'device="npu",',
        "MLP default device: MultiEncoder builds its MLP without device=, and the default std=1.0 becomes "
        "torch.tensor(..., device='cuda') -> fails for any config with mlp_keys (e.g. dmc_proprio)"),
  ])

E("dv3_tools", "tools.py", "explicit_replacement",
  "DreamerV3-torch tools.py (Logger, simulate, distributions, Optimizer with GradScaler, seeding)",
  [
      C("self._st = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self._st = torch.npu.Event(enable_timing=True)",
        "TimeRecording helper: CUDA events raise on record() without a CUDA device"),
      C("self._nd = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self._nd = torch.npu.Event(enable_timing=True)", "second timing event of the same helper"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazy CUDA init raises on an NPU host"),
      C('device="cuda",', "device_type", "replace", False, 'device="npu",',
        "DiscDist default device; every caller (MLP.dist) passes its own device, so the default is never used"),
      C("self._scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "CUDA GradScaler disables itself without CUDA: once autocast runs fp16 on NPU the loss is no longer scaled "
        "(gradient underflow)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy call that never runs without CUDA; torch.manual_seed above already seeds the NPU generator through "
        "the custom-device hook -- unconfirmed, so kept as a tidy-up"),
      C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
        "cuBLAS-only determinism knob, no effect on NPU"),
  ])

E("dv3_requirements", "requirements.txt", "explicit_replacement",
  "DreamerV3-torch requirements.txt with a CUDA wheel index",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu README: x86 hosts use the CPU torch wheel; the cu118 index pulls the CUDA build and nvidia-* "
        "wheels (aarch64 falls back to PyPI). Not confirmed to break torch_npu"),
      C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "torch_npu wheel pinned to the same torch x.y.z (2.1.0)"),
      C("nvidia-ml-py==12.535.77", "torch_cuda_api", "removal", False, None,
        "NVML bindings: installs, but there is no NVIDIA driver to talk to; nothing in the repo imports it"),
  ])

E("dv3_dockerfile", "Dockerfile", "explicit_replacement",
  "DreamerV3-torch Dockerfile on a pytorch/pytorch CUDA runtime image",
  [
      C("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "the CUDA image has no CANN toolkit/driver libs, so torch_npu cannot import; base on a CANN image and "
        "install torch + torch-npu from requirements.txt"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; NPUs are passed with --device /dev/davinciN"),
  ])

# ---------------------------------------------------------------- IRIS
E("iris_config", "config/trainer.yaml", "explicit_replacement",
  "IRIS hydra config/trainer.yaml",
  [
      C("device: cuda:0", "device_type", "replace", True, "device: npu:0",
        "common.device -> torch.device(cfg.common.device) in the trainer"),
  ])

E("iris_trainer", "src/trainer.py", "explicit_replacement",
  "IRIS src/trainer.py (tokenizer / world model / actor-critic training loop)",
  [
      C('print(f"Running on {torch.cuda.get_device_name(self.device)}")', "torch_cuda_api", "replace", True,
        'print(f"Running on {torch.npu.get_device_name(self.device)}")',
        "get_device_name -> get_device_properties -> CUDA lazy init raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; the NPU caching allocator is simply not trimmed"),
      C("torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", False,
        "to_log.append({'gpu_mem_peak_gb': torch.npu.max_memory_allocated(self.device) / 2 ** 30})",
        "returns 0 when CUDA was never initialised: wrong metric, training unaffected"),
  ])

E("iris_wm_env", "src/envs/world_model_env.py", "device_branch_or_abstraction",
  "IRIS src/envs/world_model_env.py (imagination env; device passed in)",
  [])

E("iris_launch", "scripts/launch_atari100k.sh", "explicit_replacement",
  "IRIS-style Atari 100k launcher, one run per GPU via CUDA_VISIBLE_DEVICES",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True, "set +u; " + SET_ENV + "; set -u",
        "CANN environment for torch_npu in a non-interactive script; set_env.sh fails under set -u"),
      C("NUM_GPUS=${2:-$(nvidia-smi", "torch_cuda_api", "replace", True,
        'NUM_GPUS=${2:-$(npu-smi info -l | grep -c "NPU ID")}',
        "nvidia-smi is absent: with set -e/pipefail the script aborts (otherwise NUM_GPUS=0 and a division by zero)"),
      C("CUDA_VISIBLE_DEVICES=${gpu} nohup python src/main.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python src/main.py \\",
        "the Ascend runtime ignores CUDA_VISIBLE_DEVICES: every run would land on NPU 0"),
      C("common.device=cuda:0", "device_type", "replace", True, "common.device=npu:0 \\",
        "hydra override of the device string"),
  ])

# ---------------------------------------------------------------- DIAMOND
E("diamond_main", "src/main.py", "explicit_replacement",
  "DIAMOND src/main.py (hydra entry, mp.spawn DDP)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "world_size = torch.npu.device_count()",
        "returns 0 on an NPU host: multi-device DDP is never spawned"),
      C('init_process_group(backend="nccl"', "dist_backend", "replace", True,
        'init_process_group(backend="hccl", rank=rank, world_size=world_size)', "NCCL does not exist on Ascend"),
      C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(map(str, devices))',
        "common.devices selection is silently ignored by the Ascend runtime"),
  ])

E("diamond_trainer", "src/trainer.py", "device_branch_or_abstraction",
  "DIAMOND src/trainer.py (diffusion world model + actor-critic trainer)",
  [
      C('self._device = torch.device(f"cuda:{self._rank}" if torch.cuda.is_available() else "cpu")',
        "device_type", "add_branch", True,
        'self._device = torch.device(f"npu:{self._rank}" if torch.npu.is_available() else (f"cuda:{self._rank}" if torch.cuda.is_available() else "cpu"))',
        "silently trains on CPU on an NPU host"),
      C("torch.cuda.set_device(self._rank)", "torch_cuda_api", "add_branch", True,
        'torch.npu.set_device(self._rank) if self._device.type == "npu" else torch.cuda.set_device(self._rank)',
        "unconditional CUDA set_device raises without CUDA"),
      C('self._use_cuda = self._device.type == "cuda"', "pin_memory", "add_branch", False,
        'self._use_cuda = self._device.type in ("cuda", "npu")',
        "gates pin_memory/pin_memory_device of the data loaders (and bf16): off on NPU -- perf only"),
      C("torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", "add_branch", False,
        'self._amp_dtype = torch.bfloat16 if self._use_cuda and (self._device.type == "npu" or torch.cuda.get_device_capability()[0] >= 8) else None',
        "sm_80 test for bf16; Atlas A2 supports bf16 and NPU get_device_capability is only a configurable "
        "placeholder (TORCH_NPU_DEVICE_CAPABILITY). Short-circuited on NPU today, so fp32 -- perf only"),
  ])

E("diamond_play", "src/play.py", "device_branch_or_abstraction",
  "DIAMOND src/play.py (interactive play in the world model)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else ("cuda:0" if torch.cuda.is_available() else "cpu"))',
        "silently plays on CPU on an NPU host"),
      C('if device.type == "cuda" and args.compile:', "compile_mode", "add_branch", False,
        'if device.type in ("cuda", "npu") and args.compile:',
        "--compile is ignored on NPU (eager play) -- perf only"),
      C('wm_env.predict_next_obs = torch.compile(wm_env.predict_next_obs, mode="reduce-overhead")', "compile_mode",
        "replace", False,
        'wm_env.predict_next_obs = torch.compile(wm_env.predict_next_obs, backend="npugraphs" if device.type == "npu" else "inductor")',
        "reduce-overhead = CUDA graphs; npugraphs is the NPU graph backend (inference-only, fine for play) -- unconfirmed"),
      C('wm_env.upsample_next_obs = torch.compile(wm_env.upsample_next_obs, mode="reduce-overhead")', "compile_mode",
        "replace", False,
        'wm_env.upsample_next_obs = torch.compile(wm_env.upsample_next_obs, backend="npugraphs" if device.type == "npu" else "inductor")',
        "same as above for the upsampler"),
  ])

E("diamond_denoiser", "src/models/diffusion/denoiser.py", "device_branch_or_abstraction",
  "DIAMOND denoiser + EDM diffusion sampler (device taken from module parameters)",
  [])

E("diamond_utils", "src/utils.py", "device_branch_or_abstraction",
  "DIAMOND src/utils.py (DDP wrapper, minGPT-style optimizer config, checkpoint helpers)",
  [
      C('use_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and device_type == "cuda"',
        "fused_optimizer", "add_branch", False,
        'use_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and device_type in ("cuda", "npu")',
        "fused AdamW only requested for CUDA; NPU has a native _fused_adamw_ kernel (op list 2.7.1) -- perf only; "
        "older torch accepted fused=True for CUDA only (unconfirmed for the pinned version)"),
  ])

E("diamond_ddp_sh", "scripts/train_ddp.sh", "explicit_replacement",
  "DIAMOND-style single-node multi-GPU launcher with NCCL tuning",
  [
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; HCCL ignores it"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; HCCL ignores it"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL log level has no effect; CANN/HCCL logging is ASCEND_GLOBAL_LOG_LEVEL (plog)"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1", "torch_npu watchdog variable (default already 1)"),
      C("export HYDRA_FULL_ERROR=1", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment for torch_npu/HCCL in the launcher"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace",
        False, "npu-smi info", "informational only; without set -e a missing nvidia-smi just prints an error"),
  ])

# ---------------------------------------------------------------- TD-MPC2
E("tdmpc2_train", "tdmpc2/train.py", "explicit_replacement",
  "TD-MPC2 tdmpc2/train.py (hydra entry)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
        "AssertionError on every NPU host"),
  ])

E("tdmpc2_agent", "tdmpc2/tdmpc2.py", "explicit_replacement",
  "TD-MPC2 tdmpc2/tdmpc2.py (agent: MPPI planning, compiled update)",
  [
      C("self.device = torch.device('cuda:0')", "device_type", "replace", True, "self.device = torch.device('npu:0')",
        "hard-coded CUDA device for the model and all planning tensors"),
      C("device='cuda:0'", "device_type", "replace", True,
        "[self._get_discount(ep_len) for ep_len in cfg.episode_lengths], device='npu:0'",
        "multi-task discount tensor on a hard-coded CUDA device"),
      C('self._update = torch.compile(self._update, mode="reduce-overhead")', "compile_mode", "replace", False,
        "self._update = torch.compile(self._update)",
        "reduce-overhead captures CUDA graphs; NPUGraph is listed inference-only, so drop the mode for the training "
        "step (or run with compile=false) -- unconfirmed"),
      C('plan = torch.compile(self._plan, mode="reduce-overhead")', "compile_mode", "replace", False,
        'plan = torch.compile(self._plan, backend="npugraphs")',
        "planning is no-grad inference; npugraphs is the NPU counterpart of cudagraphs -- unconfirmed"),
  ])

E("tdmpc2_buffer", "tdmpc2/common/buffer.py", "explicit_replacement",
  "TD-MPC2 common/buffer.py (torchrl LazyTensorStorage replay buffer)",
  [
      C("self._device = torch.device('cuda:0')", "device_type", "replace", True,
        "self._device = torch.device('npu:0')", "sampled batches are moved to a hard-coded CUDA device"),
      C("mem_free, _ = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
        "mem_free, _ = torch.npu.mem_get_info()", "CUDA lazy init raises on an NPU host"),
      C("storage_device = 'cuda:0' if", "device_type", "replace", True,
        "storage_device = 'npu:0' if 2.5*total_bytes < mem_free else 'cpu'",
        "storage placed on a CUDA device when it fits in device memory"),
  ])

E("tdmpc2_world_model", "tdmpc2/common/world_model.py", "device_branch_or_abstraction",
  "TD-MPC2 common/world_model.py (TensorDict-params Q ensemble; device-agnostic)",
  [])

E("tdmpc2_conda", "docker/environment.yaml", "explicit_replacement",
  "TD-MPC2 docker/environment.yaml (conda, pytorch + pytorch-cuda)",
  [
      C("=- nvidia", "device_type", "removal", False, None, "channel only needed for the CUDA runtime packages"),
      C("pytorch-cuda=12.4", "device_type", "removal", False, None,
        "CUDA runtime metapackage; no aarch64 build, so the solve fails on Kunpeng-based Ascend hosts, and on x86 it "
        "only drags in CUDA libraries -- unconfirmed for x86"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.5.1",
        "torch_npu pinned to the conda pytorch version (2.5.1)"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
        "NVML bindings unused by the code; no NVIDIA driver on the host"),
  ])

E("tdmpc2_slurm", "scripts/slurm_train.sh", "explicit_replacement",
  "TD-MPC2-style Slurm batch script",
  [
      C("#SBATCH --gres=gpu:1", "device_type", "replace", False, "#SBATCH --gres=npu:1",
        "GRES name is site-specific; Ascend Slurm sites usually define npu -- unconfirmed"),
      C("module load cuda/12.4", "import_torch_npu", "replace", True, SET_ENV,
        "CANN environment instead of the CUDA module; torch_npu cannot import without it"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$(echo ${ASCEND_RT_VISIBLE_DEVICES:-0} | cut -d, -f1)",
        "device pinning via CUDA_VISIBLE_DEVICES is ignored; without cgroup isolation the job uses NPU 0 "
        "whatever Slurm allocated"),
      C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info", "informational only"),
  ])

# ---------------------------------------------------------------- MBPO / mbrl-lib
E("mbpo_model", "model/model.py", "explicit_replacement",
  "MBPO-pytorch model.py (probabilistic ensemble dynamics model)",
  [
      C("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
        "torch.set_default_tensor_type(torch.npu.FloatTensor)",
        "runs at import time: the CUDA tensor type cannot be made default without CUDA"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "module-level device used by every .to(device) in the file"),
  ])

E("mbpo_sac", "sac/sac.py", "explicit_replacement",
  "pytorch-soft-actor-critic sac.py as vendored by MBPO-pytorch",
  [
      C('self.device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
        'self.device = torch.device("npu" if args.cuda else "cpu")',
        "--cuda defaults to True (store_true with default=True), so 'cuda' is always chosen"),
  ])

E("mbpo_main", "main_mbpo.py", "explicit_replacement",
  "MBPO-pytorch main_mbpo.py (argparse + training loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("parser.add_argument('--model_type', default='tensorflow'", "unsupported_op_workaround", "replace", False,
        "parser.add_argument('--model_type', default='pytorch', metavar='A',",
        "default TF ensemble has no NPU path here and silently runs on the host CPU; the PyTorch ensemble runs on "
        "the NPU -- perf only"),
  ])

E("pets_cem", "mbrl/planning/trajectory_opt.py", "explicit_replacement",
  "mbrl-lib mbrl/planning/trajectory_opt.py (CEM optimizer + MPC agent) with NVTX ranges",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for the torch_npu.npu.mstx replacement of the NVTX ranges"),
      C('torch.cuda.nvtx.range_push(f"cem_iter_{i}")', "torch_cuda_api", "replace", True,
        'rng = torch_npu.npu.mstx.range_start(f"cem_iter_{i}")',
        "torch.cuda.nvtx is not redirected by torch_npu and fails without CUDA NVTX; mstx is the NPU range API"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "closing half of the NVTX range"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "verbose planning timer: CUDA lazy init raises on an NPU host"),
  ])

E("mbrl_conf", "mbrl/examples/conf/main.yaml", "explicit_replacement",
  "mbrl-lib examples conf/main.yaml",
  [
      C('device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"',
        "${device} is interpolated into the model, optimizer and model-env configs"),
  ])

# ---------------------------------------------------------------- EnvPool vector env
E("envpool_vec", "common/envpool_vec.py", "device_branch_or_abstraction",
  "EnvPool / gymnasium vector-env wrapper returning device tensors (pinned staging + copy stream)",
  [
      C("dtype=torch.uint8).pin_memory()", "pin_memory", "replace", False,
        'self._obs_host = torch.empty((num_envs, *obs_shape), dtype=torch.uint8).pin_memory(device="npu")',
        "device-less pin_memory() targets the CUDA pinned allocator on older torch; whether torch_npu serves it is "
        "unconfirmed"),
      C("self._copy_stream = torch.cuda.Stream(device=self.device) if torch.cuda.is_available() else None",
        "torch_cuda_api", "add_branch", False,
        'self._copy_stream = torch.npu.Stream(device=self.device) if self.device.type == "npu" else (torch.cuda.Stream(device=self.device) if torch.cuda.is_available() else None)',
        "on NPU the copy stream is skipped and H2D copies are synchronous -- perf only"),
      C("with torch.cuda.stream(self._copy_stream):", "torch_cuda_api", "replace", False,
        "with torch.get_device_module(self.device).stream(self._copy_stream):",
        "must follow the stream branch above once an NPU stream exists"),
      C("torch.cuda.current_stream(self.device).wait_stream(self._copy_stream)", "torch_cuda_api", "replace", False,
        "torch.get_device_module(self.device).current_stream(self.device).wait_stream(self._copy_stream)",
        "same, for the stream join"),
  ])

# ---------------------------------------------------------------- PlaNet
E("planet_main", "main.py", "device_branch_or_abstraction",
  "Kaixhin PlaNet main.py (RSSM + CEM planner, --disable-cuda flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C("if torch.cuda.is_available() and not args.disable_cuda:", "device_type", "add_branch", True,
        "elif torch.npu.is_available() and not args.disable_cuda: args.device = torch.device('npu'); torch.npu.manual_seed(args.seed)",
        "without an NPU branch the script silently trains on CPU; the CUDA branch itself can stay"),
  ])

# ---------------------------------------------------------------- World Models (Ha & Schmidhuber, PyTorch port)
E("wm_trainvae", "trainvae.py", "device_branch_or_abstraction",
  "ctallec/world-models trainvae.py (VAE on CarRacing rollouts)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("cuda" if cuda else ("npu" if torch.npu.is_available() else "cpu"))',
        "silently trains on CPU on an NPU host"),
      C("loader_kwargs = {'num_workers': 2, 'pin_memory': True} if cuda else", "pin_memory", "add_branch", False,
        "loader_kwargs = {'num_workers': 2, 'pin_memory': True, 'pin_memory_device': str(device)} if device.type != 'cpu' else {'num_workers': 2}",
        "pinned host memory only requested for CUDA -- perf only"),
      C("model = torch.nn.DataParallel(model, device_ids=args.gpu_ids)", "unsupported_op_workaround", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU: one NPU, or torchrun + DistributedDataParallel",
        "torch.nn.DataParallel is unsupported on Ascend (2.7.1 API list, msFmkTransplt); reached with --gpu-ids a b"),
  ])

E("wm_trainmdrnn", "trainmdrnn.py", "device_branch_or_abstraction",
  "ctallec/world-models trainmdrnn.py (MDN-RNN on VAE latents)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu"))',
        "silently trains on CPU on an NPU host"),
      C("batch_size=BSIZE, num_workers=8, shuffle=True, pin_memory=True)", "pin_memory", "replace", False,
        'batch_size=BSIZE, num_workers=8, shuffle=True, pin_memory=True, pin_memory_device="npu")',
        "DataLoader drops pin_memory when torch.cuda.is_available() is False unless pin_memory_device is set -- perf only"),
  ])
