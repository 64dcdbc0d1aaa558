"""Labels for probe28 (hand-written synthetic upstream files; see ../README.md).

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


KB = "/work/shared/knowledge/torch-npu-migration.md"

E("cleanrl_ppo_atari", "cleanrl/ppo_atari.py", "device_branch_or_abstraction",
  "CleanRL ppo_atari.py single-file PPO", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "device layer needs torch_npu registered before torch.npu / 'npu' device strings are used (knowledge §1.1 recommends the import)"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", R, False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)",
      "cudnn flag is accepted but has no effect on NPU; determinism there goes through torch.use_deterministic_algorithms (2.7.1 API table ✔); seeding semantics only"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "torch.cuda.is_available() is False on an NPU host: the whole run silently lands on CPU"),
])

E("cleanrl_dqn_atari", "cleanrl/dqn_atari.py", "device_branch_or_abstraction",
  "CleanRL dqn_atari.py (argparse era) with SB3 ReplayBuffer", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch_npu must be imported (mandatory before the 2.5.1 autoload, knowledge §1.1) for torch.npu calls below"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, True, "torch.npu.manual_seed_all(args.seed)",
      "torch.cuda.manual_seed_all is lazily a no-op without CUDA, so NPU RNG stays unseeded (2.7.1 table: NPU form torch_npu.npu.manual_seed_all)"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", R, False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)",
      "cudnn flag has no effect on NPU; determinism via torch.use_deterministic_algorithms (2.7.1 table ✔)"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() and args.cuda else "cpu")',
      "CUDA check is False on NPU host: silently trains on CPU"),
    C('map_location="cuda:0"', "device_type", R, True, 'q_network.load_state_dict(torch.load(model_path, map_location="npu:0"))',
      "map_location='cuda:0' fails to deserialize on a host without CUDA"),
])

E("cleanrl_sac_continuous", "cleanrl/sac_continuous_action.py", "device_branch_or_abstraction",
  "CleanRL sac_continuous_action.py with optional torch.compile", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch_npu import before the device check (knowledge §1.1)"),
    C("torch.backends.cudnn.deterministic = args.torch_deterministic", "torch_cuda_api", R, False,
      "torch.use_deterministic_algorithms(args.torch_deterministic)",
      "cudnn flag is inert on NPU (2.7.1 table lists it ✔ but it only affects cuDNN); determinism via use_deterministic_algorithms"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() and args.cuda else "cpu")',
      "CUDA availability check is False on NPU: CPU fallback"),
    C('actor.get_action = torch.compile(actor.get_action, mode="reduce-overhead")', "compile_mode", R, False,
      'actor.get_action = torch.compile(actor.get_action, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; on NPU the graph backend is 'npugraphs' (knowledge §3.7, §6 torch.compile); exact equivalence unconfirmed"),
    C('qf1 = torch.compile(qf1, mode="reduce-overhead")', "compile_mode", R, False,
      'qf1 = torch.compile(qf1, backend="npugraphs")',
      "same as actor: CUDA-graph mode; NPUGraph is inference-only per 2.7.1 table, so for a trained critic likely plain torch.compile; unconfirmed"),
])

E("sb3_utils", "stable_baselines3/common/utils.py", "device_branch_or_abstraction",
  "Stable-Baselines3 common/utils.py get_device('auto') / set_random_seed", [
    C("=import torch as th", "import_torch_npu", A, True, "import torch_npu",
      "get_device below probes torch.npu; torch_npu must be loaded (knowledge §1.1)"),
    C("th.backends.cudnn.deterministic = True", "torch_cuda_api", R, False, "th.use_deterministic_algorithms(True)",
      "cudnn switch does nothing on NPU; porter adds NPU determinism through use_deterministic_algorithms (2.7.1 table ✔)"),
    C('device = "cuda"', "device_type", B, True,
      'device = "npu" if hasattr(th, "npu") and th.npu.is_available() else "cuda"',
      "'auto' resolves to cuda, then to cpu on an NPU host: every SB3 model silently trains on CPU"),
    C('if device.type == th.device("cuda").type and not th.cuda.is_available():', "torch_cuda_api", B, True,
      'if device.type == "npu" and not th.npu.is_available():',
      "availability guard must also cover npu devices, otherwise device='npu' passed explicitly is never validated and auto stays on cpu"),
    C('"GPU Enabled": str(th.cuda.is_available()),', "torch_cuda_api", R, False,
      '"GPU Enabled": str(th.cuda.is_available() or (hasattr(th, "npu") and th.npu.is_available())),',
      "reporting only (saved into model zip system info); misleading 'False' on NPU"),
])

E("sb3_base_class", "stable_baselines3/common/base_class.py", "device_branch_or_abstraction",
  "Stable-Baselines3 common/base_class.py device handling", [
    C('if self.device.type == th.device("cuda").type and isinstance(policy, str) and policy == "MlpPolicy":', "device_type", R, False,
      'if self.device.type in ("cuda", "npu") and isinstance(policy, str) and policy == "MlpPolicy":',
      "warning only; MLP-on-accelerator advice applies to NPU too"),
    C('set_random_seed(seed, using_cuda=self.device.type == th.device("cuda").type)', "device_type", R, False,
      'set_random_seed(seed, using_cuda=self.device.type in ("cuda", "npu"))',
      "on npu the cudnn-determinism branch is skipped; th.manual_seed already seeds all devices, so only determinism flags are lost"),
])

E("sf_gpu_utils", "sample_factory/utils/gpu_utils.py", "device_branch_or_abstraction",
  "Sample Factory utils/gpu_utils.py (CUDA_VISIBLE_DEVICES per process)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* used below after the port (knowledge §1.1)"),
    C('CUDA_ENVVAR = "CUDA_VISIBLE_DEVICES"', "env_var", R, True, 'CUDA_ENVVAR = "ASCEND_RT_VISIBLE_DEVICES"',
      "the CANN runtime honours ASCEND_RT_VISIBLE_DEVICES, not CUDA_VISIBLE_DEVICES (ascend-distributed.md §1); without it every worker sees all NPUs and lands on npu:0"),
    C('log.debug("Num visible devices: %r", torch.cuda.device_count())', "torch_cuda_api", R, False,
      'log.debug("Num visible devices: %r", torch.npu.device_count())', "log only; reports 0 on NPU"),
    C('device = torch.device("cuda", index=0)', "device_type", R, True, 'device = torch.device("npu", index=0)',
      "cuda device on an NPU host fails at the first .to()"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", R, True, "torch.npu.set_device(0)",
      "torch.cuda.set_device raises without a CUDA build/driver"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
      'log.debug("%s %d using device %s (%s)", process_type, policy_id, device, torch.npu.get_device_name(0))',
      "get_device_name initialises CUDA and raises; NPU form torch_npu.npu.get_device_name (2.7.1 table)"),
    C('if device.type != "cuda":', "device_type", R, False, 'if device.type not in ("cuda", "npu"):',
      "memory summary silently empty on NPU; diagnostic only"),
    C("allocated = torch.cuda.memory_allocated(device) / 2**20", "torch_cuda_api", R, False,
      "allocated = torch.npu.memory_allocated(device) / 2**20", "only reached once the guard above admits npu"),
    C("reserved = torch.cuda.memory_reserved(device) / 2**20", "torch_cuda_api", R, False,
      "reserved = torch.npu.memory_reserved(device) / 2**20", "same"),
])

E("sf_get_available_gpus", "sample_factory/utils/get_available_gpus.py", "explicit_replacement",
  "Sample Factory utils/get_available_gpus.py (nvidia-smi / spawned torch probe)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "child process probes torch.npu"),
    C("queue.put(torch.cuda.device_count())", "torch_cuda_api", R, True, "queue.put(torch.npu.device_count())",
      "reports 0 devices on an NPU host, so workers get no accelerator"),
    C('out = subprocess.check_output(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], timeout=30)', "torch_cuda_api", R, True,
      'out = subprocess.check_output(["npu-smi", "info", "-l"], timeout=30)',
      "nvidia-smi absent on Ascend hosts; npu-smi is the tool (knowledge §6, ascend-host-formats.md); output parsing must change too"),
    C('if "CUDA_VISIBLE_DEVICES" in envvars:', "env_var", R, True, 'if "ASCEND_RT_VISIBLE_DEVICES" in envvars:',
      "NPU visibility variable is ASCEND_RT_VISIBLE_DEVICES (ascend-distributed.md §1)"),
    C('return envvars["CUDA_VISIBLE_DEVICES"]', "env_var", R, True, 'return envvars["ASCEND_RT_VISIBLE_DEVICES"]', "same"),
])

E("sf_inference_worker", "sample_factory/algo/inference/inference_worker.py", "device_branch_or_abstraction",
  "Sample Factory GPU inference worker (stream overlap, fp16 inference)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu streams/autocast below"),
    C("=if self.device.type == \"cuda\":", "device_type", R, True, 'if self.device.type in ("cuda", "npu"):',
      "on npu the dedicated inference stream is never created, and overlap with learner weight updates is lost; kept required because the later synchronize guard also keys on it"),
    C("self.inference_stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", R, True,
      "self.inference_stream = torch.npu.Stream(device=self.device)", "torch.cuda.Stream with an npu device fails"),
    C("stream_ctx = torch.cuda.stream(self.inference_stream)", "torch_cuda_api", R, True,
      "stream_ctx = torch.npu.stream(self.inference_stream) if self.inference_stream is not None else nullcontext()",
      "torch.cuda.stream context needs CUDA"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=self.cfg.inference_fp16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=self.cfg.inference_fp16):',
      "cuda autocast does not affect NPU tensors: fp16 inference silently runs in fp32"),
    C('if self.device.type == "cuda":  # D2H copies above are async', "device_type", R, True,
      'if self.device.type in ("cuda", "npu"):  # D2H copies above are async',
      "without the sync on npu, actors may read policy outputs before the copy finishes"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", R, True, "torch.npu.synchronize(self.device)",
      "torch.cuda.synchronize with an npu device raises"),
    C('if self.device is not None and self.device.type == "cuda":', "device_type", R, False,
      'if self.device is not None and self.device.type in ("cuda", "npu"):', "memory report only"),
    C("mem = torch.cuda.max_memory_allocated(self.device) / 2**30", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated(self.device) / 2**30", "diagnostic only"),
])

E("torchrl_ppo_mujoco", "examples/ppo/ppo_mujoco.py", "device_branch_or_abstraction",
  "TorchRL sota-implementations ppo_mujoco.py (collector device=, storing_device, CudaGraphModule)", [
    C("=import torch.optim", "import_torch_npu", A, True, "import torch_npu",
      "needed for torch.npu in the device fallback (knowledge §1.1)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "with device empty the script falls to cpu on an NPU host"),
    C('device = "cuda:0"', "device_type", R, True, 'device = "npu:0"', "default accelerator string"),
    C("actor_optim = torch.optim.Adam(actor.parameters(), lr=torch.tensor(cfg.optim.lr, device=device), eps=1e-5, fused=True)", "fused_optimizer", R, False,
      "actor_optim = torch_npu.optim.NpuFusedAdam(actor.parameters(), lr=cfg.optim.lr, eps=1e-5)",
      "fused=True Adam is a CUDA fused kernel; NPU support for fused=True unconfirmed; NpuFusedAdam is the torch_npu fused optimizer (knowledge §5)"),
    C("critic_optim = torch.optim.Adam(critic.parameters(), lr=torch.tensor(cfg.optim.lr, device=device), eps=1e-5, fused=True)", "fused_optimizer", R, False,
      "critic_optim = torch_npu.optim.NpuFusedAdam(critic.parameters(), lr=cfg.optim.lr, eps=1e-5)", "same as actor optimizer; unconfirmed"),
    C('compile_mode = "default" if cfg.compile.cudagraphs else "reduce-overhead"', "compile_mode", R, False,
      'compile_mode = "default"',
      "reduce-overhead = CUDA graphs; on NPU the graph path is backend='npugraphs', inference-only NPUGraph (2.7.1 table); unconfirmed for training"),
    C("update = CudaGraphModule(update, in_keys=[], out_keys=[], warmup=5)", "compile_mode", X, False, None,
      "tensordict CudaGraphModule captures torch.cuda graphs; NPUGraph is inference-only (knowledge §3.7), so porter drops it for the update step; unconfirmed how CudaGraphModule behaves on npu"),
    C("adv_module = CudaGraphModule(adv_module)", "compile_mode", R, False, "adv_module = adv_module",
      "same; GAE under no_grad could use NPUGraph but CudaGraphModule support for npu unconfirmed"),
    C("torch.compiler.cudagraph_mark_step_begin()", "compile_mode", X, False, None,
      "cudagraph trees marker; meaningless without CUDA graphs (unconfirmed whether it is harmless on NPU)"),
])

E("torchrl_ppo_config", "examples/ppo/config_mujoco.yaml", "explicit_replacement",
  "TorchRL hydra config with policy_device/storing_device", [
    C("=policy_device: cuda:0", "device_type", R, True, "policy_device: npu:0", "cuda:0 device string fails on NPU host"),
    C("=storing_device: cuda:0", "device_type", R, True, "storing_device: npu:0", "same"),
    C("=device: cuda:0", "device_type", R, True, "device: npu:0", "optim.device: script uses it directly"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "CANN ignores CUDA_VISIBLE_DEVICES (ascend-distributed.md §1)"),
    C("NCCL_DEBUG: WARN", "env_var", R, False, "ASCEND_GLOBAL_LOG_LEVEL: 2",
      "NCCL log variable has no effect; single-process script, logging only"),
])

E("rllib_torch_policy", "rllib/policy/torch_policy_v2.py", "device_branch_or_abstraction",
  "RLlib TorchPolicyV2 GPU tower placement (num_gpus, num_gpus_per_worker)", [
    C("torch, nn = try_import_torch()", "import_torch_npu", A, True, "import torch_npu",
      "torch_npu import after RLlib's lazy torch import (knowledge §1.1)"),
    C("if not config[\"_fake_gpus\"] and ray_get_gpu_ids_safe() == [] and worker_idx == 0:", "device_type", R, True,
      'if not config["_fake_gpus"] and ray_get_gpu_ids_safe() == [] and not torch.npu.is_available() and worker_idx == 0:',
      "ray.get_gpu_ids() is empty on NPU nodes (NPUs are not Ray GPU resources; registering them as a custom resource is unconfirmed), so the learner is forced onto CPU"),
    C("gpu_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", R, True,
      "gpu_ids = list(range(torch.npu.device_count()))", "0 on NPU: policy placed on CPU"),
    C("ids = ray_get_gpu_ids_safe()", "device_type", R, True, "ids = gpu_ids",
      "Ray assigns no GPU ids on NPU nodes, so the device list stays empty and self.devices[0] raises IndexError"),
    C('self.devices.append(torch.device("cuda:{}".format(i)))', "device_type", R, True,
      'self.devices.append(torch.device("npu:{}".format(i)))', "cuda device string"),
    C("with torch.cuda.device(device):", "torch_cuda_api", R, True, "with torch.npu.device(device):",
      "torch.cuda.device context with an npu device raises"),
])

E("efficientzero_train", "core/train.py", "explicit_replacement",
  "EfficientZero core/train.py (torch_amp, GradScaler, Ray GPU workers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch_npu.npu.amp used below"),
    C("from torch.cuda.amp import GradScaler as GradScaler", "amp", R, True,
      "from torch_npu.npu.amp import GradScaler as GradScaler",
      "CUDA GradScaler does not scale NPU losses (knowledge §3.4 maps torch.cuda.amp.GradScaler → torch_npu.npu.amp)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; memory hygiene only"),
    C('map_location=torch.device("cuda")', "device_type", R, True,
      'model.load_state_dict(torch.load(model_path, map_location=torch.device("npu")))',
      "deserialising onto cuda fails on an NPU host"),
    C("workers = [DataWorker.options(num_cpus=1, num_gpus=config.selfplay_gpu_per_actor).remote(", "device_type", R, False,
      "workers = [DataWorker.options(num_cpus=1, resources={\"NPU\": config.selfplay_gpu_per_actor}).remote(",
      "Ray schedules num_gpus only on CUDA GPUs; NPU nodes need a custom/accelerator resource; Ray's NPU resource name unconfirmed"),
    C("workers += [BatchWorker_GPU.options(num_cpus=1, num_gpus=config.gpu_actor / config.gpu_actor).remote(", "device_type", R, False,
      "workers += [BatchWorker_GPU.options(num_cpus=1, resources={\"NPU\": 1}).remote(",
      "same; unconfirmed"),
    C("from torch.cuda.amp import autocast as autocast  # noqa: E402", "amp", R, True,
      "from torch_npu.npu.amp import autocast as autocast  # noqa: E402",
      "CUDA autocast leaves NPU ops in fp32: 'torch_amp' silently trains without mixed precision"),
])

E("muzero_ctree_setup", "core/ctree/setup.py", "explicit_replacement",
  "EfficientZero/LightZero Cython ctree setup.py (CPU-only near-miss, no labels)", [])

E("alphazero_selfplay", "alphazero/selfplay.py", "explicit_replacement",
  "AlphaZero-style self-play with a multiprocessing GPU inference server", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the spawned inference process re-imports this module, so the import also registers npu there"),
    C("torch.cuda.set_device(self.gpu_id)", "torch_cuda_api", R, True, "torch.npu.set_device(self.gpu_id)",
      "raises without CUDA"),
    C('device = torch.device(f"cuda:{self.gpu_id}")', "device_type", R, True, 'device = torch.device(f"npu:{self.gpu_id}")',
      "cuda device string"),
    C("staging = torch.empty((BATCH_SIZE, *Game.OBS_SHAPE), dtype=torch.float32).pin_memory()", "pin_memory", R, False,
      'staging = torch.empty((BATCH_SIZE, *Game.OBS_SHAPE), dtype=torch.float32).pin_memory(device="npu")',
      "Tensor.pin_memory is among the APIs transfer_to_npu rewrites for device (knowledge §2.2), implying its default targets CUDA; behaviour without the rewrite unconfirmed"),
    C("x = staging[:n].cuda(non_blocking=True)", "tensor_to_device", R, True, "x = staging[:n].npu(non_blocking=True)",
      ".cuda() fails on NPU host"),
    C("gpu_id = int(os.environ.get(\"LOCAL_RANK\", 0)) % max(1, torch.cuda.device_count())", "torch_cuda_api", R, False,
      'gpu_id = int(os.environ.get("LOCAL_RANK", 0)) % max(1, torch.npu.device_count())',
      "device_count() is 0 without CUDA, max(1, ...) keeps this at a valid index 0; only multi-device spread is lost"),
])

E("d4rl_iql", "algorithms/iql.py", "device_branch_or_abstraction",
  "CORL-style IQL for D4RL (device='cuda' default)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "registers the npu device for the config default"),
    C('device: str = "cuda"', "device_type", R, True, 'device: str = "npu"',
      "default device string: every tensor and module is placed on cuda and fails on NPU host"),
    C('tau=0.7, beta=3.0, max_steps=1000000, discount=0.99, tau=0.005, device="cuda"):', "device_type", R, False,
      'iql_tau=0.7, beta=3.0, max_steps=1000000, discount=0.99, tau=0.005, device="npu"):',
      "default never used: train() always passes config.device"),
])

E("rl_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of an RL monorepo (cu121 wheels, nvidia-ml-py, cupy, flash-attn)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts install CPU torch from the whl/cpu index (knowledge §1.1)"),
    C("torch==2.3.1+cu121", "torch_cuda_api", R, True, "torch==2.3.1",
      "CUDA wheel; torch must match torch_npu version exactly (knowledge §1.1/§1.2)"),
    C("torchvision==0.18.1+cu121", "torch_cuda_api", R, True, "torchvision==0.18.1", "CUDA wheel tag"),
    C("=numpy>=1.24,<2.0", "import_torch_npu", A, True, "torch-npu==2.3.1.post6",
      "torch_npu wheel pinned to the torch version (knowledge §1.2: 2.3.1.post6 ↔ CANN 8.1.RC1)"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None,
      "pynvml has no NPU equivalent; use torch.npu.utilization / mem_get_info (knowledge §6); only used for monitoring"),
    C("cupy-cuda12x==13.1.0", "torch_cuda_api", X, True, None,
      "cupy has no Ascend support (knowledge §6); CUDA wheel import fails on an NPU host"),
    C('flash-attn==2.5.8 ; platform_system == "Linux"', "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU (knowledge §6); replace with SDPA / npu_fusion_attention"),
])

E("sf_launch_sh", "scripts/launch_sf.sh", "explicit_replacement",
  "Sample Factory launch script (nvidia-smi, CUDA_VISIBLE_DEVICES, NCCL env, torchrun)", [
    C('NUM_GPUS=${NUM_GPUS:-$(nvidia-smi --list-gpus | wc -l)}', "torch_cuda_api", R, True,
      "NUM_GPUS=${NUM_GPUS:-$(ls /dev/davinci[0-9]* | wc -l)}",
      "nvidia-smi missing on Ascend host; with set -e the script aborts (/dev/davinciN per logic id, ascend-host-formats.md)"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "torch_cuda_api", R, True,
      "npu-smi info", "nvidia-smi absent → command not found under set -e"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}",
      "CANN visibility variable (ascend-distributed.md §1)"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2", "logging only"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only knob, no effect under HCCL"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, True, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL picks the host NIC via HCCL_SOCKET_IFNAME (ascend-distributed.md §1); a wrong NIC fails link setup on multi-NIC hosts"),
    C("--dist_backend=nccl", "dist_backend", R, True, "--dist_backend=hccl", "NCCL backend unavailable on NPU"),
    C('nvidia-smi > train_dir/"${EXPERIMENT}"/nvidia-smi.txt', "torch_cuda_api", R, True,
      'npu-smi info > train_dir/"${EXPERIMENT}"/npu-smi.txt', "command not found under set -e"),
    C("torch.version.cuda, torch.backends.cudnn.version()", "torch_cuda_api", R, False,
      'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)" > train_dir/"${EXPERIMENT}"/cann_version.txt',
      "prints None None on NPU; record-keeping only"),
])

E("rl_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CUDA base-image Dockerfile for an RL repo", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "needs a CANN base image; exact tag unconfirmed"),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "NPUs are mounted via Ascend Docker Runtime's ASCEND_VISIBLE_DEVICES (ascend-distributed.md §1)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None, "NVIDIA container toolkit only"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "env_var", X, False, None,
      "only affects nvcc builds; nothing CUDA is compiled here"),
])

E("cpu_env_wrapper", "cleanrl_utils/atari_wrappers.py", "device_branch_or_abstraction",
  "CleanRL Atari wrappers (CPU-only near-miss, no labels)", [])

E("pufferlib_train", "pufferlib/clean_pufferl.py", "device_branch_or_abstraction",
  "PufferLib clean_pufferl.py (amp, GradScaler, pinned experience buffer, utilization)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu APIs below"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=config.precision == "float16")', "amp", R, True,
      'scaler = torch.npu.amp.GradScaler(enabled=config.precision == "float16")',
      "CUDA GradScaler does not scale NPU losses (knowledge §3.4 mapping to torch_npu.npu.amp)"),
    C('amp_ctx = torch.amp.autocast(device_type="cuda", dtype=getattr(torch, config.precision),', "amp", R, True,
      'amp_ctx = torch.amp.autocast(device_type="npu", dtype=getattr(torch, config.precision),',
      "cuda autocast leaves NPU ops in fp32"),
    C('if config.device == "cuda":', "device_type", R, False, 'if config.device == "npu":',
      "timing sync only"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()", "only reached with the guard above"),
    C('cpu_offload=False, device="cuda"):', "device_type", R, False, 'cpu_offload=False, device="npu"):',
      "default unused: create() always passes config.device"),
    C('pin = device == "cuda" and cpu_offload', "pin_memory", R, True, 'pin = device in ("cuda", "npu") and cpu_offload',
      "on npu the offloaded obs buffer is left unpinned: the non_blocking H2D copies in train() become synchronous (perf) — marked required because the offload path then silently runs slow every minibatch"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "utilization stats silently empty on NPU"),
    C("self.gpu_util.append(torch.cuda.utilization())", "torch_cuda_api", R, False,
      "self.gpu_util.append(torch.npu.utilization())", "torch.npu.utilization exists (knowledge §2.1 list)"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, False, "free, total = torch.npu.mem_get_info()",
      "same"),
    C("torch.backends.cudnn.deterministic = torch_deterministic", "torch_cuda_api", R, False,
      "torch.use_deterministic_algorithms(torch_deterministic)", "cudnn flag inert on NPU"),
])
