"""Labels for probe495 (model-based RL / world models, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port
(torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy and judgements.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# DreamerV3 PyTorch port (NM512/dreamerv3-torch style)
# --------------------------------------------------------------------------------------------

E("dv3_dreamer", "dreamer.py", "explicit_replacement",
  "NM512/dreamerv3-torch dreamer.py (Dreamer agent + main loop, configs.yaml-driven argparse)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script. The project pins torch 2.1.x (see Dockerfile); torch_npu < 2.5.1 has no device-backend "
      "autoload, so 'npu:0' from configs.yaml and torch.npu.* in tools/models need the explicit import."),
    C('checkpoint = torch.load(logdir / "latest.pt")', "tensor_to_device", "replace", False,
      'checkpoint = torch.load(logdir / "latest.pt", map_location=config.device)',
      "Resuming an NPU-written checkpoint on the same host works without map_location; a latest.pt copied from a "
      "CUDA run would fail to deserialize on a host without CUDA. Robustness only."),
])

E("dv3_models", "models.py", "explicit_replacement",
  "NM512/dreamerv3-torch models.py (WorldModel, ImagBehavior, RewardEMA)", [
    C("=with torch.cuda.amp.autocast(self._use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(self._use_amp):",
      "WorldModel._train. torch.cuda.amp.autocast on a host without CUDA only warns and disables itself, so "
      "precision=16 would silently train in fp32 while the (ported) GradScaler still scales."),
    C("with torch.cuda.amp.autocast(enabled=self._use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self._use_amp):",
      "Metrics/context block after the world-model step; same silent disable as above."),
    C("with torch.cuda.amp.autocast(enabled=self._use_amp, dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self._use_amp, dtype=torch.float16):",
      "ImagBehavior actor loss; same silent disable. fp16 autocast is supported on NPU."),
    C("with torch.cuda.amp.autocast(self._use_amp):  # critic", "amp", "replace", True,
      "with torch.npu.amp.autocast(self._use_amp):  # critic runs in the same precision",
      "ImagBehavior value-head update; same silent disable."),
])

E("dv3_networks", "networks.py", "explicit_replacement",
  "NM512/dreamerv3-torch networks.py (RSSM, MLP heads, GRUCell)", [
    C('device="cuda",', "device_type", "replace", True,
      'device="npu",',
      "MLP's default device. Encoder/decoder MLPs and the Plan2Explore ensemble are built without device=, and "
      "with the default std=1.0 the constructor does torch.tensor((std,), device=device) -> 'cuda' fails on an NPU "
      "host (plain attribute, not a buffer, so .to(config.device) never moves it)."),
])

E("dv3_tools", "tools.py", "explicit_replacement",
  "NM512/dreamerv3-torch tools.py (Logger, distributions, Optimizer wrapper with GradScaler, seeding)", [
    C("self._st = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self._st = torch.npu.Event(enable_timing=True)",
      "TimeRecording debug helper; torch.cuda.Event cannot be created without CUDA."),
    C("self._nd = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self._nd = torch.npu.Event(enable_timing=True)",
      "Second event of the same helper."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Fails on a CPU-only torch build; elapsed_time needs the NPU stream synchronised."),
    C('device="cuda",', "device_type", "replace", False,
      'device="npu",',
      "DiscDist default. Every call site in the repo passes device=self._device, so the default is dead; "
      "changed for hygiene only."),
    C("self._scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is unavailable: fp16 training "
      "(precision=16) would silently lose loss scaling. torch_npu.npu.amp.GradScaler is the listed NPU form."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "Guard of the device RNG seeding; False on an NPU host so the branch is skipped. torch.manual_seed also "
      "seeds registered custom devices in recent torch (unconfirmed in the knowledge base), hence not required."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Seeding only; see the guard above."),
])

E("dv3_exploration", "exploration.py", "explicit_replacement",
  "NM512/dreamerv3-torch exploration.py (Random, Plan2Explore)", [
    C("with torch.cuda.amp.autocast(self._use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(self._use_amp):",
      "Plan2Explore ensemble training; silent fp32 fallback under precision=16 otherwise."),
])

E("dv3_configs", "configs.yaml", "explicit_replacement",
  "NM512/dreamerv3-torch configs.yaml (defaults + per-suite overrides)", [
    C("device: 'cuda:0'", "device_type", "replace", True,
      "device: 'npu:0'",
      "Single source of the device for every tensor/module in the agent (argparse --device default)."),
    C("compile: True", "compile_mode", "replace", False,
      "compile: False",
      "dreamer.py wraps WorldModel/ImagBehavior in torch.compile (Inductor). The knowledge base places Inductor "
      "on NPU at torch_npu >= 2.6; with the pinned 2.1.x it is unlikely to work (unconfirmed), so a porter turns it off."),
])

E("dv3_dockerfile", "Dockerfile", "explicit_replacement",
  "NM512/dreamerv3-torch Dockerfile (nvidia/cuda base, xvfb/MuJoCo, pip torch cu118)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "The container needs the CANN runtime (driver mounted from the host) instead of the CUDA runtime; the tag is "
      "illustrative (Ascend/cann-container-image naming). Kind: no packaging kind exists, env_var used for the base "
      "environment."),
    C("RUN pip3 install torch==2.1.2", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip3 install torch-npu==2.1.0.post12",
      "CUDA wheel index replaced by CPU torch + torch-npu. torch_npu wheels pair with an exact torch x.y.z and there "
      "is no torch_npu for 2.1.2, so the pin drops to 2.1.0 (2.1.0.post12 <-> CANN 8.1.RC1 in the matrix)."),
])

# --------------------------------------------------------------------------------------------
# TD-MPC2 (nicklashansen/tdmpc2 style; tab-indented)
# --------------------------------------------------------------------------------------------

E("tdmpc2_train", "tdmpc2/train.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/train.py (hydra entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Recommended, but the environment pins torch/torch_npu 2.5.1 where the device backend autoloads; "
      "torch.npu.* resolves without it."),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available()",
      "Hard assert: fails immediately on an NPU host."),
])

E("tdmpc2_evaluate", "tdmpc2/evaluate.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/evaluate.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Same as train.py: optional with torch_npu 2.5.1 autoload."),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available()",
      "Hard assert: fails immediately on an NPU host."),
])

E("tdmpc2_seed", "tdmpc2/common/seed.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/common/seed.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "Lazy no-op without CUDA; NPU generators are also reached through torch.manual_seed in torch 2.5 "
      "(unconfirmed in the knowledge base). Reproducibility only."),
])

E("tdmpc2_agent", "tdmpc2/tdmpc2.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/tdmpc2.py (TDMPC2 agent: MPPI planning, compiled update)", [
    C("self.device = torch.device('cuda:0')", "device_type", "replace", True,
      "self.device = torch.device('npu:0')",
      "Hard-coded agent device; model, buffers and planning tensors all follow it."),
    C("device='cuda:0'", "device_type", "replace", True,
      "[self._get_discount(ep_len) for ep_len in cfg.episode_lengths], device='npu:0'",
      "Multi-task discount vector is created directly on 'cuda:0'."),
    C('self._update = torch.compile(self._update, mode="reduce-overhead")', "compile_mode", "replace", False,
      "self._update = torch.compile(self._update)",
      "reduce-overhead = CUDA graphs. Inductor skips cudagraphs for non-CUDA devices and NPUGraph is inference-only "
      "per Ascend's list, so the mode is at best inert for the training step. Compiling at all needs torch_npu >= 2.6 "
      "Inductor support (unconfirmed for 2.5.1); cfg.compile=false is the fallback."),
    C('plan = torch.compile(self._plan, mode="reduce-overhead")', "compile_mode", "replace", False,
      'plan = torch.compile(self._plan, backend="npugraphs")',
      "Planning is no_grad inference, where Ascend lists torch.compile backend 'npugraphs' as the cudagraphs "
      "equivalent. Performance only."),
])

E("tdmpc2_world_model", "tdmpc2/common/world_model.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/common/world_model.py (WorldModel with tensordict Q-ensemble)", [])

E("tdmpc2_layers", "tdmpc2/common/layers.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/common/layers.py (vmap Ensemble, SimNorm, NormedLinear, conv encoder)", [])

E("tdmpc2_buffer", "tdmpc2/common/buffer.py", "explicit_replacement",
  "nicklashansen/tdmpc2 tdmpc2/common/buffer.py (torchrl ReplayBuffer with device-memory heuristic)", [
    C("self._device = torch.device('cuda:0')", "device_type", "replace", True,
      "self._device = torch.device('npu:0')",
      "Sampled batches are moved here before the update."),
    C("mem_free, _ = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
      "mem_free, _ = torch.npu.mem_get_info()",
      "Raises on a host without CUDA; torch_npu.npu.mem_get_info is the listed NPU form."),
    C("storage_device = 'cuda:0' if", "device_type", "replace", True,
      "storage_device = 'npu:0' if 2.5*total_bytes < mem_free else 'cpu'",
      "Storage placement heuristic; 'cuda:0' storage cannot be allocated on an NPU host."),
])

E("tdmpc2_env", "docker/environment.yaml", "explicit_replacement",
  "nicklashansen/tdmpc2 docker/environment.yaml (conda env)", [
    C("- cudatoolkit=11.7", "import_torch_npu", "removal", False, None,
      "CUDA toolkit is useless on an Ascend host (CANN comes from the host/driver install)."),
    C("- pytorch>=2.5.1", "import_torch_npu", "replace", False,
      "- pytorch==2.5.1",
      "torch_npu pairs with an exact torch version; the pytorch channel tops out at 2.5.1 so '>=' probably "
      "resolves correctly already, but the pin documents the pairing."),
    C("- pytorch-cuda=12.4", "import_torch_npu", "removal", False, None,
      "Pulls the CUDA build and runtime; Ascend's install guide uses CPU torch. Whether torch_npu refuses a CUDA "
      "build of the same version is unconfirmed."),
    C("- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.5.1.post1",
      "torch_npu must be installed (2.5.1.post1 <-> CANN 8.2.RC1 per the matrix); inserted as the first pip entry."),
])

# --------------------------------------------------------------------------------------------
# MBPO: Xingyu-Lin/mbpo_pytorch style + facebookresearch/mbrl-lib
# --------------------------------------------------------------------------------------------

E("mbpo_main", "main_mbpo.py", "explicit_replacement",
  "Xingyu-Lin/mbpo_pytorch main_mbpo.py (argparse entry, --cuda flag, TF/PyTorch model switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; model.py sets an NPU default tensor type at import time, which needs torch_npu loaded "
      "(required for torch_npu < 2.5.1; the project does not pin torch)."),
    C("parser.add_argument('--model_type', default='tensorflow'", "device_type", "replace", False,
      "parser.add_argument('--model_type', default='pytorch', metavar='A',",
      "The default dynamics ensemble is the TensorFlow one, which torch_npu cannot place on the NPU (it silently runs "
      "on CPU); switching the default keeps the model on the NPU. Performance/placement, not correctness."),
])

E("mbpo_model", "model.py", "explicit_replacement",
  "Xingyu-Lin/mbpo_pytorch model.py (EnsembleFC / EnsembleModel / EnsembleDynamicsModel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "The next line needs torch.npu at import time; main_mbpo.py already imports torch_npu first, so only "
      "needed when model.py is run on its own."),
    C("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "torch.set_default_tensor_type(torch.npu.FloatTensor)",
      "Raises on a build without CUDA. The ensemble is never .to(device)'d: EnsembleFC weights come from legacy "
      "torch.Tensor(...) constructors that follow the default tensor type, so the NPU type must replace it "
      "(torch.npu.FloatTensor is in torch_npu.npu.__all__)."),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "Module-level device global; unchanged it silently picks 'cpu' on an NPU host and mixes with NPU weights."),
])

E("mbpo_sac", "sac/sac.py", "explicit_replacement",
  "Xingyu-Lin/mbpo_pytorch sac/sac.py (pranz24 pytorch-soft-actor-critic SAC)", [
    C('self.device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if args.cuda else "cpu")',
      "--cuda defaults to True, so 'cuda' is used and fails; the flag name itself is left alone."),
    C("torch.load(actor_path)", "tensor_to_device", "replace", False,
      "self.policy.load_state_dict(torch.load(actor_path, map_location=self.device))",
      "Only CUDA-written checkpoints fail without map_location. Robustness."),
    C("torch.load(critic_path)", "tensor_to_device", "replace", False,
      "self.critic.load_state_dict(torch.load(critic_path, map_location=self.device))",
      "Same as the actor checkpoint."),
])

E("mbrl_mbpo", "mbrl/algorithms/mbpo.py", "explicit_replacement",
  "facebookresearch/mbrl-lib mbrl/algorithms/mbpo.py (device only via cfg.device)", [])

E("mbrl_conf", "mbrl/examples/conf/main.yaml", "explicit_replacement",
  "facebookresearch/mbrl-lib mbrl/examples/conf/main.yaml (hydra root config)", [
    C('device: "cuda:0"', "device_type", "replace", True,
      'device: "npu:0"',
      "Feeds torch.Generator(device=cfg.device), the dynamics model and the SAC agent (agent.device: ${device})."),
])

# --------------------------------------------------------------------------------------------
# IRIS (eloialonso/iris style)
# --------------------------------------------------------------------------------------------

E("iris_trainer", "src/trainer.py", "explicit_replacement",
  "eloialonso/iris src/trainer.py (tokenizer / world model / actor-critic training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Trainer is built by the 5-line src/main.py; torch.device(cfg.common.device) with 'npu:0' needs the backend "
      "registered (torch_npu < 2.5.1; IRIS predates 2.5)."),
])

E("iris_transformer", "src/models/transformer.py", "explicit_replacement",
  "eloialonso/iris src/models/transformer.py (minGPT block-causal attention with KV cache)", [])

E("iris_config", "config/trainer.yaml", "explicit_replacement",
  "eloialonso/iris config/trainer.yaml", [
    C("device: cuda:0", "device_type", "replace", True,
      "device: npu:0",
      "Only device setting in IRIS; everything else is device-agnostic."),
])

# --------------------------------------------------------------------------------------------
# DIAMOND (eloialonso/diamond style; diffusion world model, mp.spawn DDP)
# --------------------------------------------------------------------------------------------

E("diamond_main", "src/main.py", "explicit_replacement",
  "eloialonso/diamond src/main.py (hydra entry, mp.spawn DDP, CUDA_VISIBLE_DEVICES selection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point; needed for torch.npu.* and the hccl backend with torch_npu < 2.5.1 (not pinned in this probe)."),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()",
      "Returns 0 on an NPU host, so a multi-NPU machine silently trains single-process."),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)",
      "Each spawned rank must bind its NPU before HCCL init; torch.cuda.set_device fails without CUDA."),
    C('init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'init_process_group(backend="hccl", rank=rank, world_size=world_size)',
      "NCCL is unavailable on Ascend."),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(map(str, devices))',
      "common.devices selection would be silently ignored; ASCEND_RT_VISIBLE_DEVICES is the runtime equivalent."),
])

E("diamond_trainer", "src/trainer.py", "device_branch_or_abstraction",
  "eloialonso/diamond src/trainer.py (Trainer: device, DDP wrapper, pinned data loaders)", [
    C('self._device = torch.device(f"cuda:{self._rank}"', "device_type", "add_branch", True,
      'self._device = torch.device(f"npu:{self._rank}" if torch.npu.is_available() else f"cuda:{self._rank}" if torch.cuda.is_available() else "cpu")',
      "Silently falls back to CPU on an NPU host; an NPU branch keeps the CUDA path intact."),
    C('self._use_cuda = self._device.type == "cuda"', "pin_memory", "replace", False,
      'self._use_cuda = self._device.type in ("cuda", "npu")',
      "Gates pin_memory/pin_memory_device of the DataLoaders; after the device port it silently turns pinning "
      "off. Performance only (pin_memory_device=str(self._device) then yields 'npu:N')."),
])

E("diamond_play", "src/play.py", "device_branch_or_abstraction",
  "eloialonso/diamond src/play.py (interactive play in the world model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Separate entry point (python src/play.py)."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cuda:0" if torch.cuda.is_available() else "cpu")',
      "Silently runs the diffusion world model on CPU on an NPU host."),
])

E("diamond_utils", "src/utils.py", "explicit_replacement",
  "eloialonso/diamond src/utils.py (StateDictMixin, DDP wrapper, optimizer config, seeding)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "Lazy no-op without CUDA; seeding only (see README on torch.manual_seed and custom devices)."),
])

# --------------------------------------------------------------------------------------------
# 1X Genie-style video world model (1x-technologies/1xgpt style; accelerate + xformers)
# --------------------------------------------------------------------------------------------

E("genie_attention", "genie/attention.py", "kernel_rewrite",
  "1x-technologies/1xgpt genie/attention.py (xformers memory-efficient self-attention)", [
    C("from xformers.ops import LowerTriangularMask, memory_efficient_attention, unbind", "attention_kernel", "replace", True,
      "import torch.nn.functional as F",
      "xformers has no NPU backend; importing it fails (or pulls a CUDA wheel)."),
    C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", True,
      "q, k, v = qkv.unbind(2)",
      "xformers.ops.unbind is gone with the import; torch's Tensor.unbind is equivalent."),
    C("attn_bias = LowerTriangularMask() if causal else None", "attention_kernel", "removal", True, None,
      "The xformers mask object is replaced by is_causal=causal in the SDPA call."),
    C("x = memory_efficient_attention(q, k, v", "attention_kernel", "replace", True,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=self.attn_drop if self.training else 0.0, is_causal=causal, scale=self.scale).transpose(1, 2)",
      "xformers uses (B, S, H, D); SDPA wants (B, H, S, D), hence the transposes. Ascend lists SDPA as supported "
      "(fused NPU FA inside); torch_npu.npu_fusion_attention(q, k, v, H, 'BSND', scale=..., keep_prob=...) is the "
      "layout-preserving alternative."),
])

E("genie_train", "train.py", "explicit_replacement",
  "1x-technologies/1xgpt train.py (accelerate loop for the spatio-temporal MaskGIT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "accelerate's NPU detection imports torch_npu when Accelerator() is built, before any torch.npu use below; "
      "explicit import is still good practice."),
    C("model = torch.compile(model)", "compile_mode", "replace", False,
      "model = model  # torch.compile: Inductor NPU backend needs torch_npu >= 2.6",
      "Compile is on by default (--no_compile opt-out); the project pins torch 2.3.1 and the knowledge base places "
      "Inductor-on-NPU at torch_npu >= 2.6. Likely needed, unconfirmed."),
    C('"max_mem_gb": torch.cuda.max_memory_allocated() / 1024 ** 3,', "torch_cuda_api", "replace", True,
      '"max_mem_gb": torch.npu.max_memory_allocated() / 1024 ** 3,',
      "CUDA memory stats return {} when CUDA is not initialised, so the logged peak memory is silently 0."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "No-op without CUDA; only frees cached NPU memory between eval and train. Performance/memory only."),
])

E("genie_requirements", "requirements.txt", "explicit_replacement",
  "1x-technologies/1xgpt requirements.txt", [
    C("torch==2.3.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.3.1.post6",
      "torch_npu wheel matching torch 2.3.1 exactly (2.3.1.post6 <-> CANN 8.1.RC1)."),
    C("xformers==0.0.27", "attention_kernel", "removal", True, None,
      "No NPU build; installing it drags in a CUDA torch. Attention is ported to SDPA."),
])

E("genie_launch", "train.sh", "explicit_replacement",
  "1x-technologies/1xgpt style multi-GPU accelerate launcher", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries/paths for torch_npu; a launcher started from a clean shell fails to import torch_npu otherwise "
      "(unless the host profile already sources it)."),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "User device selection would be silently ignored by the Ascend runtime."),
    C("NUM_GPUS=$(nvidia-smi", "device_capability_check", "replace", True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi does not exist on the host; with pipefail the script aborts (without it, 0 processes). "
      "npu-smi output parsing is avoided in favour of torch.npu.device_count()."),
])
