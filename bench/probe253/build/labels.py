# Labels for probe253: cooperative multi-agent RL (PyMARL / EPyMARL / pymarl2, on-policy MAPPO, HARL, MAT,
# MARLlib on Ray RLlib, DI-engine, maddpg-pytorch, off-policy) moved from CUDA GPUs to Ascend NPUs.
# Format: see ../../probe_build.py.  "=text" matches a line whose stripped text equals text.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TORCH_NPU_PIN = "torch-npu==2.1.0.post17"

# --------------------------------------------------------------------------------------------
# EPyMARL / PyMARL family (explicit replacement: the learner device comes from args.device)
# --------------------------------------------------------------------------------------------

E("epymarl_main", "src/main.py", "explicit_replacement",
  "EPyMARL src/main.py (sacred Experiment entry point)", [
      C("=import torch as th", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "Entry point of every run: run.py/learners call th.npu.* and use the 'npu' device string, which only exist "
        "once torch_npu is imported (auto-load only from torch_npu 2.5.1; recommended anyway)."),
      C("=th.set_num_threads(1)", "compile_mode", "npu_only_addition", False,
        "th.npu.set_compile_mode(jit_compile=False)",
        "Episode batches are truncated to max_t_filled() before every update, so tensor shapes change from step to "
        "step; msFmkTransplt's standing advice is jit_compile=False for dynamic shapes. Performance only."),
  ])

E("epymarl_run", "src/run.py", "explicit_replacement",
  "EPyMARL src/run.py (run / run_sequential / args_sanity_check), with a gpu_id fork tweak", [
      C('args.device = "cuda" if args.use_cuda else "cpu"', "device_type", "replace", True,
        'args.device = "npu" if args.use_cuda else "cpu"',
        "args.device is handed to ReplayBuffer/EpisodeBatch and used by episode_sample.to(); 'cuda' has no "
        "device on an NPU host."),
      C("th.cuda.set_device(args.gpu_id)", "torch_cuda_api", "replace", True,
        "th.npu.set_device(args.gpu_id)",
        "torch.cuda.set_device raises without a CUDA device; torch_npu.npu.set_device is the NPU form."),
      C('if config["use_cuda"] and not th.cuda.is_available():', "torch_cuda_api", "replace", True,
        'if config["use_cuda"] and not th.npu.is_available():',
        "On an NPU host th.cuda.is_available() is False, so use_cuda is silently switched off and the whole run "
        "trains on CPU."),
  ])

E("epymarl_default_yaml", "src/config/default.yaml", "explicit_replacement",
  "EPyMARL src/config/default.yaml (sacred defaults: use_cuda, buffer_cpu_only)", [])

E("epymarl_q_learner", "src/learners/q_learner.py", "explicit_replacement",
  "EPyMARL src/learners/q_learner.py (QLearner for IQL/VDN/QMIX)", [
      C('=device = "cuda" if args.use_cuda else "cpu"', "device_type", "replace", True,
        'device = "npu" if args.use_cuda else "cpu"',
        "RunningMeanStd allocates its mean/var buffers on this device when standardise_returns/rewards is on."),
      C("=self.mixer.cuda()", "tensor_to_device", "replace", True,
        "self.mixer.to(self.args.device)",
        "nn.Module.cuda() needs a CUDA device; the mixer is a plain nn.Module."),
      C("=self.target_mixer.cuda()", "tensor_to_device", "replace", True,
        "self.target_mixer.to(self.args.device)",
        "Same as the mixer; target network must sit next to the online one."),
  ])

E("epymarl_ppo_learner", "src/learners/ppo_learner.py", "explicit_replacement",
  "EPyMARL src/learners/ppo_learner.py (MAPPO/IPPO learner with separate critic)", [
      C('=device = "cuda" if args.use_cuda else "cpu"', "device_type", "replace", True,
        'device = "npu" if args.use_cuda else "cpu"',
        "Device for the return/reward RunningMeanStd buffers."),
      C("=self.critic.cuda()", "tensor_to_device", "replace", True,
        "self.critic.to(self.args.device)",
        "Critic is an nn.Module; .cuda() fails on an NPU host."),
      C("=self.target_critic.cuda()", "tensor_to_device", "replace", True,
        "self.target_critic.to(self.args.device)",
        "Target critic, same reason."),
  ])

E("epymarl_basic_controller", "src/controllers/basic_controller.py", "explicit_replacement",
  "EPyMARL src/controllers/basic_controller.py (BasicMAC, parameter-shared agents)", [
      C("=self.agent.cuda()", "tensor_to_device", "replace", True,
        "self.agent.to(self.args.device)",
        "The RNN agent is an nn.Module; this is what learner.cuda() -> mac.cuda() finally executes."),
  ])

E("epymarl_maddpg_controller", "src/controllers/maddpg_controller.py", "explicit_replacement",
  "EPyMARL src/controllers/maddpg_controller.py (MADDPG MAC with Gumbel-softmax exploration)", [
      C("chosen_actions = F.gumbel_softmax(agent_outputs[bs], hard=True).argmax(dim=-1)",
        "unsupported_op_workaround", "replace", False,
        "chosen_actions = (agent_outputs[bs] - th.log(-th.log(th.rand_like(agent_outputs[bs]) + 1e-20) + 1e-20)).argmax(dim=-1)",
        "torch.nn.functional.gumbel_softmax is ✘ in Ascend's 2.7.1 API table and in msFmkTransplt's unsupported list; "
        "it is a Python composite of exponential_/log/softmax, which do have NPU kernels, so it may well run - "
        "unconfirmed. Argmax of logits+Gumbel noise gives the same hard sample."),
      C("=self.agent.cuda()", "tensor_to_device", "replace", True,
        "self.agent.to(self.args.device)",
        "Agent nn.Module moved with .cuda()."),
  ])

E("epymarl_episode_buffer", "src/components/episode_buffer.py", "explicit_replacement",
  "PyMARL/EPyMARL src/components/episode_buffer.py (EpisodeBatch / ReplayBuffer)", [
      C("isinstance(items, (list, np.ndarray, th.LongTensor, th.cuda.LongTensor))", "torch_cuda_api", "replace", False,
        "isinstance(items, (list, np.ndarray, th.LongTensor, th.npu.LongTensor))",
        "Legacy type check: an NPU LongTensor index would not be recognised as a batch-only index. In this code base "
        "sample() always indexes with numpy ids, so nothing breaks today; kept in the port for intent."),
  ])

E("pymarl_qatten_mixer", "src/modules/mixers/qatten.py", "explicit_replacement",
  "pymarl2 src/modules/mixers/qatten.py (Qatten mixer) with research-fork hard-coded .cuda()", [
      C("attend_mag_regs = th.zeros(1).cuda()", "tensor_to_device", "replace", True,
        "attend_mag_regs = th.zeros(1, device=agent_qs.device)",
        "Hard-coded .cuda() inside forward(); runs on every mixer call."),
      C("mask = th.zeros(dead.shape).cuda()", "tensor_to_device", "replace", True,
        "mask = th.zeros(dead.shape, device=us.device)",
        "Hard-coded .cuda() on the dead-agent mask (only with mask_dead=True, but fails whenever that path runs)."),
  ])

E("pymarl2_run_sh", "run.sh", "explicit_replacement",
  "pymarl2 run.sh (round-robin launcher: many seeds over a GPU list)", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "The background python processes need the CANN environment (libs, ASCEND_* paths) for import torch_npu; "
        "not guaranteed unless the login shell already sources it."),
      C('CUDA_VISIBLE_DEVICES="$gpu" python3 src/main.py', "env_var", "replace", True,
        'ASCEND_RT_VISIBLE_DEVICES="$gpu" python3 src/main.py --config="$config" --env-config=sc2 with env_args.map_name="$map" group="$group" use_cuda=True "${args[@]}" seed="$i" &',
        "The launcher spreads runs over devices through the visibility mask; the NPU runtime ignores "
        "CUDA_VISIBLE_DEVICES, so every run would land on device 0."),
  ])

E("pymarl_docker_run", "run.sh", "explicit_replacement",
  "PyMARL run.sh (nvidia-docker container launcher, NV_GPU)", [
      C('NV_GPU="$GPU" ${cmd} run \\', "env_var", "replace", True,
        '${cmd} run --device /dev/davinci${GPU} --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc '
        '-v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /usr/local/dcmi:/usr/local/dcmi \\',
        "NV_GPU is only read by nvidia-docker; on an NPU host plain docker runs and the container sees no NPU "
        "unless the davinci/manager/devmm/hdc nodes and the driver are mounted."),
  ])

E("pymarl_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "PyMARL docker/Dockerfile (nvidia/cuda base image, pip torch)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "The CUDA image has no CANN toolkit, so torch_npu cannot load in it."),
      C("ENV CUDA_PATH /usr/local/cuda", "env_var", "removal", False, None,
        "Points at a CUDA install that no longer exists; harmless but dead."),
      C("ENV CUDA_INCLUDE_PATH /usr/local/cuda/include", "env_var", "removal", False, None,
        "Dead CUDA path."),
      C("ENV CUDA_LIBRARY_PATH /usr/local/cuda/lib64", "env_var", "removal", False, None,
        "Dead CUDA path."),
      C("RUN pip3 install torch==1.12.1+cu113", "device_type", "replace", True,
        "RUN pip3 install torch==2.1.0 " + TORCH_NPU_PIN + " --extra-index-url https://download.pytorch.org/whl/cpu",
        "+cu113 build of a torch version with no current torch_npu pairing; torch_npu needs the matching torch "
        "(2.1.0 <-> 2.1.0.postN for CANN 8.3.RC1) and is installed here too."),
  ])

E("pymarl2_requirements", "requirements.txt", "explicit_replacement",
  "pymarl2 requirements.txt (torch +cu117 wheel index)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu's x86 install uses the CPU wheel index; a CUDA index only drags in unused nvidia-* wheels "
        "(not confirmed to break anything)."),
      C("=torch==1.13.1+cu117", "device_type", "replace", True,
        "torch==2.1.0",
        "CUDA local-version build; torch 1.13 has no current torch_npu release (matrix starts at 2.1.0)."),
      C("=einops==0.6.1", "import_torch_npu", "npu_only_addition", True,
        TORCH_NPU_PIN,
        "torch_npu pin matching torch 2.1.0 (appended at the end of the list)."),
      C("=nvidia-ml-py3==7.352.0", "device_type", "removal", False, None,
        "NVML bindings: installable, but nvmlInit() fails on an NPU host; nothing in the training path needs it."),
  ])

E("epymarl_slurm", "scripts/slurm_sweep.sh", "explicit_replacement",
  "EPyMARL-style Slurm array sweep (algos x gymma envs x seeds)", [
      C("#SBATCH --gres=gpu:1", "distributed_framework", "replace", False,
        "#SBATCH --gres=npu:1",
        "Generic-resource name is whatever the site configured for NPU nodes; unconfirmed (no Slurm/Ascend "
        "integration in the knowledge base)."),
      C("=module load cuda/11.8", "device_type", "removal", False, None,
        "CUDA module is meaningless on NPU nodes; whether it exists there (and aborts under set -e) is site-specific."),
      C("=source activate epymarl", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "Batch jobs do not read the interactive shell setup; CANN env needed before python imports torch_npu."),
      C("=nvidia-smi", "device_capability_check", "replace", True,
        "npu-smi info",
        "nvidia-smi does not exist on NPU nodes; with set -euo pipefail the job dies on this line."),
  ])

# --------------------------------------------------------------------------------------------
# on-policy (MAPPO): ported with transfer_to_npu in the entry script
# --------------------------------------------------------------------------------------------

E("mappo_train_mpe", "onpolicy/scripts/train/train_mpe.py", "transfer_to_npu",
  "marlbenchmark/on-policy onpolicy/scripts/train/train_mpe.py (MAPPO/RMAPPO entry)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "One import in the entry script: torch.cuda.is_available/manual_seed_all, torch.device('cuda:0') "
        "passed to .to()/factories and the runner/policy code downstream are redirected to the NPU."),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "cudnn flags are accepted but do nothing on NPU (transfer_to_npu does not map them), so --cuda_deterministic "
        "silently stops meaning anything; the torch-level switch is supported on NPU."),
  ])

E("mappo_train_smac_sh", "onpolicy/scripts/train_smac_scripts/train_smac_3m.sh", "transfer_to_npu",
  "marlbenchmark/on-policy train_smac_scripts/train_smac_3m.sh", [
      C("=#!/bin/sh", "import_torch_npu", "npu_only_addition", True,
        ". /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment for the python process (POSIX sh: '.' instead of 'source')."),
      C("CUDA_VISIBLE_DEVICES=0 python ../train/train_smac.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python ../train/train_smac.py --env_name ${env} --algorithm_name ${algo} --experiment_name ${exp} \\",
        "Ignored on NPU, but the script asks for device 0 and train_smac.py uses cuda:0 -> npu:0 anyway, so "
        "behaviour does not change; renamed to keep the intent."),
  ])

E("mappo_config", "onpolicy/config.py", "transfer_to_npu",
  "marlbenchmark/on-policy onpolicy/config.py (argparse with --cuda / --cuda_deterministic)", [])

E("mappo_environment_yaml", "environment.yaml", "transfer_to_npu",
  "marlbenchmark/on-policy environment.yaml (conda export with cudatoolkit + CUDA pytorch build)", [
      C("=- nvidia", "device_type", "removal", False, None,
        "Channel only needed for CUDA packages."),
      C("- cudatoolkit=11.1.74=h6bb024c_0", "device_type", "removal", False, None,
        "CUDA runtime libraries are dead weight next to CANN."),
      C("- pytorch=1.8.1=py3.8_cuda11.1_cudnn8.0.5_0", "device_type", "replace", True,
        "- pytorch=2.1.0=py3.8_cpu_0",
        "CUDA build of a torch version with no current torch_npu release; needs the CPU build of the torch "
        "version torch_npu is built against."),
      C("- torchvision=0.9.1=py38_cu111", "device_type", "replace", True,
        "- torchvision=0.16.0=py38_cpu",
        "Pinned to the cu111 pytorch build; the solve fails once pytorch changes."),
      C("=- yaspin==2.1.0", "import_torch_npu", "npu_only_addition", True,
        "    - " + TORCH_NPU_PIN,
        "torch_npu pin in the pip section (appended at the end)."),
  ])

# --------------------------------------------------------------------------------------------
# HARL: keeps the CUDA path and adds an NPU branch next to it
# --------------------------------------------------------------------------------------------

E("harl_envs_tools", "harl/utils/envs_tools.py", "device_branch_or_abstraction",
  "PKU-MARL/HARL harl/utils/envs_tools.py (set_seed / init_device / env factories)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "try: import torch_npu  # noqa: F401   (except ImportError: pass - keeps GPU hosts working)",
        "Guarded import so that torch.npu exists on NPU hosts for the new branch below."),
      C('torch.cuda.manual_seed_all(args["seed"])', "torch_cuda_api", "npu_only_addition", False,
        'if hasattr(torch, "npu"): torch.npu.manual_seed_all(args["seed"])',
        "The cuda seeding calls are silent no-ops on an NPU host; torch.manual_seed above already seeds "
        "registered device backends, so this is belt-and-braces."),
      C('if args["cuda"] and torch.cuda.is_available():', "torch_cuda_api", "add_branch", True,
        'elif args["cuda"] and hasattr(torch, "npu") and torch.npu.is_available(): device = torch.device("npu:0")',
        "Without an NPU branch init_device falls through to CPU on NPU hosts; the new branch also sets "
        "torch.use_deterministic_algorithms when cuda_deterministic is on."),
  ])

# --------------------------------------------------------------------------------------------
# MAT (Multi-Agent Transformer) fork with a nanoGPT-style flash path
# --------------------------------------------------------------------------------------------

E("mat_transformer", "mat/algorithms/mat/algorithm/ma_transformer.py", "explicit_replacement",
  "PKU-MARL Multi-Agent-Transformer ma_transformer.py, fork with an SDPA/flash branch", [
      C("_USE_FLASH = _HAS_SDPA and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
        "device_capability_check", "replace", False,
        "_USE_FLASH = _HAS_SDPA and torch.npu.is_available()",
        "On NPU the gate is simply False and the manual attention path runs correctly; SDPA is supported on NPU "
        "(fp16/bf16/fp32, bool mask) so re-enabling it is a speed-up only. get_device_capability has no sm "
        "meaning on NPU."),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
        "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # NPU SDPA picks its fused kernel itself",
        "torch.backends.cuda.sdp_kernel is ✘ on NPU (Ascend 2.7.1 table, msFmkTransplt list). Only reached once "
        "_USE_FLASH is enabled for NPU; whether the math-disabled flag would break NPU SDPA is unconfirmed."),
  ])

# --------------------------------------------------------------------------------------------
# MARLlib on Ray RLlib
# --------------------------------------------------------------------------------------------

E("marllib_ray_yaml", "marllib/marl/ray/ray.yaml", "explicit_replacement",
  "Replicable-MARL/MARLlib marllib/marl/ray/ray.yaml (shared Ray/RLlib resources)", [
      C("num_gpus: 1 # gpu to use", "distributed_framework", "replace", False,
        "num_gpus: 0 # RLlib has no NPU placement; the torch policy picks torch.npu itself",
        "Asking Ray for a GPU on a GPU-less host leaves trials pending / makes RLlib refuse - RLlib behaviour "
        "not covered by the knowledge base (unconfirmed); run_vd.py also clips it to torch.cuda.device_count()."),
  ])

E("marllib_joint_q", "marllib/marl/algos/core/VD/iql_vdn_qmix.py", "explicit_replacement",
  "MARLlib JointQPolicy/JointQLoss (derived from RLlib QMixTorchPolicy)", [
      C("=torch, nn = try_import_torch()", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "The policy is constructed inside Ray worker processes, which do not run the user's entry script; the "
        "import has to live in this module for torch.npu to exist there."),
      C('self.device = (torch.device("cuda")', "device_type", "replace", True,
        'self.device = (torch.device("npu")',
        "Model, mixers and every as_tensor(..., device=self.device) follow this device."),
      C('if torch.cuda.is_available() else torch.device("cpu"))', "torch_cuda_api", "replace", True,
        'if torch.npu.is_available() else torch.device("cpu"))',
        "False on an NPU host, so the learner would silently train on CPU."),
  ])

E("marllib_run_vd", "marllib/marl/algos/run_vd.py", "explicit_replacement",
  "MARLlib marllib/marl/algos/run_vd.py (ray.init + Tune launch for IQL/VDN/QMIX)", [])

# --------------------------------------------------------------------------------------------
# DI-engine (OpenDILab): DDP helper, base policy, launcher
# --------------------------------------------------------------------------------------------

E("ding_ddp_helper", "ding/utils/pytorch_ddp_dist_helper.py", "explicit_replacement",
  "opendilab/DI-engine ding/utils/pytorch_ddp_dist_helper.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "ding.utils imports this module before any policy code, and the module-level torch.npu.synchronize "
        "alias below needs torch.npu at import time."),
      C("x_tensor = torch.tensor([x]).cuda()", "tensor_to_device", "replace", True,
        "x_tensor = torch.tensor([x]).npu()",
        "Scalar staged on the accelerator for dist.reduce; .cuda() fails and HCCL needs an NPU tensor."),
      C("x_tensor = torch.as_tensor([x]).cuda()", "tensor_to_device", "replace", True,
        "x_tensor = torch.as_tensor([x]).npu()",
        "Same for allreduce_data."),
      C("=synchronize = torch.cuda.synchronize", "torch_cuda_api", "replace", True,
        "synchronize = torch.npu.synchronize",
        "Exported helper used by Policy.sync_gradients in async mode; calling the CUDA one raises on NPU hosts."),
      C("def dist_init(backend: str = 'nccl',", "dist_backend", "replace", True,
        "def dist_init(backend: str = 'hccl',",
        "DDPContext() calls dist_init() with the default; NCCL is not available on NPU."),
      C("assert backend in ['nccl', 'gloo'], backend", "dist_backend", "replace", True,
        "assert backend in ['hccl', 'nccl', 'gloo'], backend",
        "Whitelist would reject 'hccl'."),
      C("if backend == 'nccl':", "dist_backend", "replace", True,
        "if backend == 'hccl':",
        "Backend-string comparison (not rewritten by any automatic tool): with 'hccl' the per-rank device pinning "
        "below would be skipped and every rank would use device 0."),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "Returns 0 on an NPU host -> modulo by zero on the next line."),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)",
        "Per-rank device binding."),
  ])

E("ding_base_policy", "ding/policy/base_policy.py", "explicit_replacement",
  "opendilab/DI-engine ding/policy/base_policy.py (Policy.__init__ device/multi-gpu setup)", [
      C("self._cuda = cfg.cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "self._cuda = cfg.cuda and torch.npu.is_available()",
        "False on an NPU host: cfg.cuda=True policies silently run on CPU."),
      C("=model.cuda()", "tensor_to_device", "replace", True,
        "model.npu()",
        "Learner model moved in place with .cuda()."),
      C("model.to('cuda')", "tensor_to_device", "replace", True,
        "model.to('npu')",
        "Collect/eval-only policies."),
      C("self._device = 'cuda:{}'.format(self._rank % torch.cuda.device_count()) if self._cuda else 'cpu'",
        "device_type", "replace", True,
        "self._device = 'npu:{}'.format(self._rank % torch.npu.device_count()) if self._cuda else 'cpu'",
        "Device string used by every to_device(data, self._device) in the derived policies (QMIX, PPO, ...)."),
  ])

E("ding_launch_sh", "dizoo/smac/entry/launch_ddp.sh", "explicit_replacement",
  "DI-engine style single-node DDP launcher for SMAC QMIX (torch.distributed.launch)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        SET_ENV,
        "CANN environment for the launched ranks."),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* variables are ignored by HCCL; log verbosity goes through the Ascend log level instead."),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "No effect on HCCL; single-node HCCL traffic does not go over the host IB NICs."),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
        "NVLink-specific NCCL tuning; meaningless on NPU."),
      C("CUDA_VISIBLE_DEVICES=2,3 python -m torch.distributed.launch \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=2,3 python -m torch.distributed.launch \\",
        "Ranks pick rank % device_count; without the NPU mask they land on devices 0,1 instead of 2,3 "
        "(possibly on top of another job)."),
  ])

# --------------------------------------------------------------------------------------------
# off-policy (marlbenchmark/off-policy) and maddpg-pytorch
# --------------------------------------------------------------------------------------------

E("offpolicy_util", "offpolicy/utils/util.py", "explicit_replacement",
  "marlbenchmark/off-policy offpolicy/utils/util.py (gumbel_softmax, schedules, space helpers)", [
      C("y = (logits.cpu() + sample_gumbel(logits.shape, dtype=logits.dtype)).cuda()", "tensor_to_device", "replace", True,
        "y = (logits.cpu() + sample_gumbel(logits.shape, dtype=logits.dtype)).to(device)",
        "Every non-'cpu' device takes this branch; on NPU the hard-coded .cuda() fails."),
  ])

E("maddpg_main", "main.py", "explicit_replacement",
  "shariqiqbal2810/maddpg-pytorch main.py (MPE training loop)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "Entry point; algorithms/maddpg.py and utils/buffer.py call .npu() after the port."),
      C("USE_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "USE_CUDA = torch.npu.is_available()",
        "Gates prep_training(device='gpu') and sample(to_gpu=...); False on an NPU host, so training silently "
        "stays on CPU."),
  ])

E("maddpg_algo", "algorithms/maddpg.py", "explicit_replacement",
  "shariqiqbal2810/maddpg-pytorch algorithms/maddpg.py (MADDPG wrapper, prep_training/prep_rollouts)", [
      C("torch.nn.utils.clip_grad_norm(curr_agent.critic.parameters(), 0.5)", "unsupported_op_workaround", "replace", False,
        "torch.nn.utils.clip_grad_norm_(curr_agent.critic.parameters(), 0.5)",
        "clip_grad_norm (no underscore) is ✘ in Ascend's 2.7.1 table and msFmkTransplt's list; it is only a "
        "deprecated alias of clip_grad_norm_ (✔), so it most likely still works."),
      C("torch.nn.utils.clip_grad_norm(curr_agent.policy.parameters(), 0.5)", "unsupported_op_workaround", "replace", False,
        "torch.nn.utils.clip_grad_norm_(curr_agent.policy.parameters(), 0.5)",
        "Same for the policy gradients."),
      C("fn = lambda x: x.cuda()", "tensor_to_device", "replace", True,
        "fn = lambda x: x.npu()",
        "prep_training(device='gpu') moves policies/critics/targets with this lambda."),
      C("fn = lambda m: m.cuda()", "tensor_to_device", "replace", True,
        "fn = lambda m: m.npu()",
        "prep_rollouts(device='gpu') path."),
  ])

E("maddpg_buffer", "utils/buffer.py", "explicit_replacement",
  "shariqiqbal2810/maddpg-pytorch utils/buffer.py (ReplayBuffer.sample(to_gpu=...))", [
      C("cast = lambda x: Variable(Tensor(x), requires_grad=False).cuda()", "tensor_to_device", "replace", True,
        "cast = lambda x: Variable(Tensor(x), requires_grad=False).npu()",
        "Sampled batches are pushed to the accelerator with .cuda()."),
  ])

# --------------------------------------------------------------------------------------------
# Tooling: mixer micro-benchmark
# --------------------------------------------------------------------------------------------

E("pymarl_benchmark", "tools/benchmark_mixers.py", "explicit_replacement",
  "pymarl-fork tools/benchmark_mixers.py (CUDA-event timing of VDN/QMIX/Qatten mixers, AMP, torch.compile)", [
      C("=import torch as th", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "Standalone script; needed for th.npu.* below."),
      C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
        'parser.add_argument("--device", type=str, default="npu")',
        "Default device string for every tensor in the benchmark."),
      C("scaler = th.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = th.npu.amp.GradScaler(enabled=args.amp)",
        "With --amp the CUDA GradScaler disables itself (no CUDA) and the run silently measures fp32."),
      C("with th.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with th.npu.amp.autocast(enabled=args.amp):",
        "CUDA autocast does not apply to NPU tensors; --amp would silently benchmark fp32."),
      C("th.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
        "th.npu.synchronize(device)",
        "Raises without CUDA."),
      C("th.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "th.npu.reset_peak_memory_stats()",
        "Raises without CUDA (needs the current CUDA device)."),
      C("start = th.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = th.npu.Event(enable_timing=True)",
        "CUDA events cannot be created without CUDA; NPU events support elapsed_time."),
      C("end = th.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = th.npu.Event(enable_timing=True)",
        "Same."),
      C("=th.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "th.npu.synchronize()",
        "Raises without CUDA; also needed for a correct device timing."),
      C("peak_mb = th.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak_mb = th.npu.max_memory_allocated() / 2 ** 20",
        "Uninitialised CUDA memory stats read as 0: the table would silently report 0 MiB."),
      C('print(f"device: {th.cuda.get_device_name(device)}', "torch_cuda_api", "replace", True,
        'print(f"device: {th.npu.get_device_name(device)} | torch {th.__version__} | torch_npu {torch_npu.__version__}")',
        "get_device_name raises without CUDA; th.version.cuda would print None."),
      C('mixer = th.compile(mixer, mode="max-autotune")', "compile_mode", "replace", False,
        "mixer = th.compile(mixer)",
        "max-autotune means Triton autotuning + CUDA graphs; Inductor on NPU needs torch_npu>=2.6 / triton-ascend, "
        "behaviour of this mode on NPU unconfirmed. Optional flag."),
      C("th.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "th.npu.empty_cache()",
        "Silent no-op when CUDA is not initialised; only affects the next mixer's peak-memory reading."),
  ])
