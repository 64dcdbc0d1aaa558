"""Labels for probe85 (hand-written synthetic upstream files; see ../README.md).

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

# ---------------------------------------------------------------------------------------------------------
# LeRobot
# ---------------------------------------------------------------------------------------------------------

E("lerobot_utils", "lerobot/common/utils/utils.py", "device_branch_or_abstraction",
  "huggingface/lerobot common/utils/utils.py (device pickers, AMP/device availability tables, RNG state)", [
    C("=import torch", "import_torch_npu", A, True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "torch.npu.* in the added branches and torch.device('npu') need torch_npu loaded (explicit import "
      "recommended even with autoload since 2.5.1)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, True,
      "elif torch.npu.is_available():\n        return torch.device(\"npu\")",
      "auto_select_torch_device: an NPU host has no CUDA and no MPS, so the policy silently trains/infers on CPU"),
    C('if device == "mps" and dtype == torch.float64:', "unsupported_op_workaround", R, False,
      'if device in ("mps", "npu") and dtype == torch.float64:',
      "callers build float64 sin/cos position tables and timestamps on the policy device; fp64 coverage on NPU "
      "is partial (transfer_to_npu maps DoubleTensor to FloatTensor) -- unconfirmed for these exact ops"),
    C('if try_device == "cuda":', "torch_cuda_api", B, True,
      'elif try_device == "npu":\n        return torch.npu.is_available()',
      "is_torch_device_available('npu') falls through to the ValueError branch"),
    C('if device in ["cuda", "cpu"]:', "amp", R, True, 'if device in ["cuda", "npu", "cpu"]:',
      "is_amp_available('npu') raises ValueError, so a config with use_amp and device=npu cannot start"),
    C('random_state_dict["torch_cuda_random_state"] = torch.cuda.random.get_rng_state()', "torch_cuda_api", B,
      False,
      'if torch.npu.is_available():\n        random_state_dict["torch_npu_random_state"] = torch.npu.get_rng_state()',
      "the NPU generator state is never saved/restored with the checkpoint: only resume reproducibility"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "queued lazily and harmless without CUDA; torch.manual_seed already seeds the NPU generator"),
    C("torch.cuda.memory_allocated(0)", "torch_cuda_api", R, False,
      'print("Current NPU Memory Allocated: {:.2f} MB".format(torch.npu.memory_allocated(0) / 1024**2))',
      "debug helper: returns 0 without an initialised CUDA context instead of the NPU figure"),
    C("torch.cuda.max_memory_allocated(0)", "torch_cuda_api", R, False,
      'print("Maximum NPU Memory Allocated: {:.2f} MB".format(torch.npu.max_memory_allocated(0) / 1024**2))',
      "debug helper, silently reports 0"),
    C("torch.cuda.memory_reserved(0)", "torch_cuda_api", R, False,
      'print("Current NPU Memory Reserved: {:.2f} MB".format(torch.npu.memory_reserved(0) / 1024**2))',
      "debug helper, silently reports 0"),
    C("torch.cuda.max_memory_reserved(0)", "torch_cuda_api", R, False,
      'print("Maximum NPU Memory Reserved: {:.2f} MB".format(torch.npu.max_memory_reserved(0) / 1024**2))',
      "debug helper, silently reports 0"),
])

E("lerobot_train", "lerobot/scripts/train.py", "device_branch_or_abstraction",
  "huggingface/lerobot scripts/train.py (hydra-era offline trainer, torch.cuda.amp.GradScaler, device.type autocast)", [
    C("from torch.cuda.amp import GradScaler", "amp", R, False, "from torch.amp import GradScaler",
      "import only feeds a type annotation once the scaler is built device-agnostically"),
    C("grad_scaler = GradScaler(enabled=cfg.use_amp)", "amp", R, True,
      "grad_scaler = GradScaler(device.type, enabled=cfg.use_amp)",
      "torch.cuda.amp.GradScaler disables itself when CUDA is unavailable, so use_amp on NPU runs the "
      "device.type autocast (fp16 by default) without loss scaling"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, False,
      'elif torch.npu.is_available():\n        log_items.append(f"mem:{torch.npu.max_memory_allocated() / 2**30:.1f}GB")',
      "peak-memory column silently missing from the training log on NPU"),
])

E("lerobot_control_utils", "lerobot/common/robot_devices/control_utils.py", "device_branch_or_abstraction",
  "huggingface/lerobot robot_devices/control_utils.py (real-robot record/teleop loop, predict_action)", [
    C('torch.autocast(device_type=device.type) if device.type == "cuda" and use_amp else nullcontext(),', "amp", R,
      False,
      'torch.autocast(device_type=device.type) if device.type in ("cuda", "npu") and use_amp else nullcontext(),',
      "on npu the else path (fp32 inference) is numerically correct but ignores use_amp, so the control loop "
      "runs slower than configured"),
])

E("lerobot_pi0_paligemma", "lerobot/common/policies/pi0/paligemma_with_expert.py", "device_branch_or_abstraction",
  "huggingface/lerobot policies/pi0/paligemma_with_expert.py + flex_attention.py (pi0 prefix-LM attention)", [
    C("compiled_flex_attention = torch.compile(flex_attention", "compile_mode", R, False,
      "compiled_flex_attention = flex_attention  # no Inductor/Triton flex kernels on NPU: use eager or npu_fusion_attention",
      "compiled flex_attention is an Inductor/Triton template (max-autotune); whether torch_npu's inductor "
      "backend lowers it is unconfirmed"),
    C("BLOCK_SIZE=block, _compile=True", "device_type", R, True,
      "prefix_lm_mask, batch_size, None, q_len + q_pad, kv_len + kv_pad, device=query_states.device, BLOCK_SIZE=block, _compile=True",
      "create_block_mask's device argument defaults to 'cuda': on the flex path (attention_implementation='flex') "
      "the mask is built for a CUDA device that an NPU host does not have"),
    C("res[..., :d_half] = x1 * cos - x2 * sin", "npu_fused_op", R, False,
      "return torch_npu.npu_rotary_mul(x, torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)).to(dtype)",
      "hand-written rotate-half RoPE; npu_rotary_mul (BSND, rotary_mode='half') is a perf-only replacement"),
    C("att_weights = torch.matmul(query_states, key_states.transpose(2, 3))", "npu_fused_op", R, False,
      'att_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states.transpose(1, 2), '
      'num_att_heads, "BNSD", atten_mask=~attention_mask[:, None], scale=head_dim**-0.5)[0]',
      "eager fp32 prefix-LM attention; npu_fusion_attention takes the boolean mask inverted (True = masked). "
      "Perf only, numerics differ slightly from the fp32 upcast"),
])

E("lerobot_vqbet_utils", "lerobot/common/policies/vqbet/vqbet_utils.py", "device_branch_or_abstraction",
  "huggingface/lerobot policies/vqbet/vqbet_utils.py (lucidrains-style residual VQ with CUDA-autocast fp32 islands)", [
    C("from torch.cuda.amp import autocast", "amp", R, False, "from torch.amp import autocast",
      "the decorator below is the CUDA autocast; import changes with it"),
    C("@autocast(enabled=False)", "amp", R, False, '@autocast("npu", enabled=False)',
      "fp32 island for the codebook distances: under npu autocast (use_amp) the CUDA-only decorator does not "
      "disable autocast, so the einsum distances run in fp16 -- precision only, reached only with use_amp"),
    C('with torch.autocast("cuda", enabled=False):', "amp", R, False,
      'with torch.autocast(samples.device.type, enabled=False):',
      "k-means init meant to stay fp32; the 'cuda' autocast context does not switch off npu autocast"),
])

E("lerobot_dockerfile", "docker/lerobot-gpu/Dockerfile", "explicit_replacement",
  "huggingface/lerobot docker/lerobot-gpu/Dockerfile (CUDA base image, cu121 wheel index, EGL MuJoCo)", [
    C("FROM nvidia/cuda:12.4.1-base-ubuntu22.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image carries no CANN toolkit, so torch_npu cannot load its ACL/HCCL libraries"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", "env_var", X, False, None,
      "read only by the NVIDIA container runtime; the Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
    C('ENV MUJOCO_GL="egl"', "env_var", R, False, 'ENV MUJOCO_GL="osmesa"',
      "headless MuJoCo through EGL normally means NVIDIA's libEGL; whether a Mesa EGL works on the NPU host is "
      "unconfirmed"),
    C('ENV PATH="/opt/venv/bin:$PATH"', "env_var", A, False,
      'ENV LD_LIBRARY_PATH="/usr/local/Ascend/driver/lib64/driver:/usr/local/Ascend/driver/lib64/common:$LD_LIBRARY_PATH"',
      "CANN/driver library paths (set_env.sh); may already come with the CANN base image"),
    C('pip install --no-cache-dir ".[test, aloha, xarm, pusht, dynamixel, intelrealsense]"', "import_torch_npu", A, True,
      "&& /opt/venv/bin/pip install --no-cache-dir torch-npu==2.5.1 \\",
      "the image never installs torch_npu, so no NPU backend exists at run time"),
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", R, False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 torch_npu installs pair with the CPU torch wheel (knowledge 1.1); whether torch_npu loads on the "
      "cu121 build is unconfirmed"),
])

# ---------------------------------------------------------------------------------------------------------
# diffusion_policy (Columbia real-robot diffusion policy)
# ---------------------------------------------------------------------------------------------------------

E("dp_real_config", "diffusion_policy/config/train_diffusion_unet_real_image_workspace.yaml", "explicit_replacement",
  "real-stanford/diffusion_policy config/train_diffusion_unet_real_image_workspace.yaml (hydra workspace config)", [
    C('device: "cuda:0"', "device_type", R, True, 'device: "npu:0"',
      "the workspace does torch.device(cfg.training.device) and moves model, EMA and optimizer state there"),
    C("_target_: torch.optim.AdamW", "fused_optimizer", R, False, "_target_: torch_npu.optim.NpuFusedAdamW",
      "perf only: tensor-fused AdamW (extra memory)"),
])

E("dp_eval_real_robot", "eval_real_robot.py", "transfer_to_npu",
  "real-stanford/diffusion_policy eval_real_robot.py (UR5 + RealSense + SpaceMouse policy loop, NVTX ranges)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "one-off real-robot script: transfer_to_npu covers torch.device('cuda'), .to(device) and torch.cuda.synchronize"),
    C('torch.cuda.nvtx.range_push("predict_action")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start("predict_action")',
      "torch.cuda.nvtx is not among the names transfer_to_npu redirects and raises without a CUDA build; "
      "reached with --profile (mstx method names unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "same as range_push"),
    C('payload = torch.load(open(ckpt_path, "rb"), pickle_module=dill)', "tensor_to_device", R, False,
      'payload = torch.load(open(ckpt_path, "rb"), pickle_module=dill, map_location="cpu")',
      "checkpoints written on a CUDA box hold CUDA storages; transfer_to_npu probably restores them through the "
      "patched Tensor.cuda, map_location='cpu' is the safe edit (unconfirmed)"),
])

E("dp_transformer_for_diffusion", "diffusion_policy/model/diffusion/transformer_for_diffusion.py",
  "explicit_replacement",
  "real-stanford/diffusion_policy model/diffusion/transformer_for_diffusion.py (nn.Transformer encoder/decoder denoiser)", [
    C("encoder_layer = nn.TransformerEncoderLayer(", "unsupported_op_workaround", R, False,
      "encoder_layer = PreNormBlock(n_emb, n_head, 4 * n_emb, p_drop_attn)  # MultiheadAttention + MLP",
      "Ascend's 2.7.1 list marks nn.TransformerEncoderLayer unsupported and msFmkTransplt lists its forward; in "
      "training it decomposes into supported MultiheadAttention/Linear/LayerNorm and the eval fast path op "
      "(_transformer_encoder_layer_fwd) has no NPU kernel, so CPU fallback -- failure unconfirmed"),
    C("decoder_layer = nn.TransformerDecoderLayer(", "unsupported_op_workaround", R, False,
      "decoder_layer = PreNormCrossBlock(n_emb, n_head, 4 * n_emb, p_drop_attn)",
      "nn.TransformerDecoderLayer and nn.TransformerDecoder are marked unsupported in Ascend's 2.7.1 list; "
      "composite in practice, failure unconfirmed"),
    C("bert_layer = nn.TransformerEncoderLayer(", "unsupported_op_workaround", R, False,
      "bert_layer = PreNormBlock(n_emb, n_head, 4 * n_emb, p_drop_attn)",
      "encoder-only variant, same judgement as above"),
])

# ---------------------------------------------------------------------------------------------------------
# ALOHA / ACT (tonyzhaozh/act and its bundled DETR copy)
# ---------------------------------------------------------------------------------------------------------

E("act_imitate_episodes", "imitate_episodes.py", "explicit_replacement",
  "tonyzhaozh/act imitate_episodes.py (ACT train/eval on sim and real ALOHA, .cuda() everywhere)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the .npu() calls below need torch_npu loaded"),
    C("curr_image = torch.from_numpy(curr_image / 255.0).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "curr_image = torch.from_numpy(curr_image / 255.0).float().npu().unsqueeze(0)",
      ".cuda() on a host without CUDA raises"),
    C("loading_status = policy.load_state_dict(torch.load(ckpt_path))", "tensor_to_device", R, True,
      'loading_status = policy.load_state_dict(torch.load(ckpt_path, map_location="cpu"))',
      "checkpoints saved from a CUDA policy hold CUDA storages; torch.load without map_location tries to "
      "restore them on CUDA and fails on the NPU host"),
    C("=policy.cuda()", "tensor_to_device", R, True, "policy.npu()", "eval_bc: moves the policy to CUDA"),
    C("all_time_actions = torch.zeros([max_timesteps, max_timesteps + num_queries, state_dim]).cuda()",
      "tensor_to_device", R, True,
      "all_time_actions = torch.zeros([max_timesteps, max_timesteps + num_queries, state_dim]).npu()",
      "temporal-ensembling buffer"),
    C("qpos_history = torch.zeros((1, max_timesteps, state_dim)).cuda()", "tensor_to_device", R, True,
      "qpos_history = torch.zeros((1, max_timesteps, state_dim)).npu()", ""),
    C("qpos = torch.from_numpy(qpos).float().cuda().unsqueeze(0)", "tensor_to_device", R, True,
      "qpos = torch.from_numpy(qpos).float().npu().unsqueeze(0)", "proprio state every control step"),
    C("exp_weights = torch.from_numpy(exp_weights).cuda().unsqueeze(dim=1)", "tensor_to_device", R, True,
      "exp_weights = torch.from_numpy(exp_weights).npu().unsqueeze(dim=1)", ""),
    C("image_data, qpos_data, action_data, is_pad = image_data.cuda()", "tensor_to_device", R, True,
      "image_data, qpos_data, action_data, is_pad = image_data.npu(), qpos_data.npu(), action_data.npu(), is_pad.npu()",
      "every training/validation batch"),
    C("policy.cuda()  # single-GPU training", "tensor_to_device", R, True, "policy.npu()", "train_bc"),
])

E("act_detr_misc", "detr/util/misc.py", "explicit_replacement",
  "tonyzhaozh/act detr/util/misc.py (DETR's distributed helpers: pickled all_gather on CUDA, NCCL init)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", R, True,
      't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "meter sync across ranks; (HCCL fp64 all_reduce support unconfirmed, float32 is the safe choice)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "device_type", R, True,
      'tensor = torch.ByteTensor(storage).to("npu")', "pickled all_gather buffer must live on the HCCL device"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", R, True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', ""),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", R, True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", R, True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', ""),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type", R,
      True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', ""),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "fails without a CUDA build; each rank must bind its NPU before HCCL init"),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"', ""),
])

E("act_conda_env", "conda_env.yaml", "explicit_replacement",
  "tonyzhaozh/act conda_env.yaml (pytorch + pytorch-cuda from the pytorch/nvidia channels)", [
    C("=- nvidia", "device_type", X, False, None,
      "channel only serves the CUDA runtime packages; harmless once pytorch-cuda is gone"),
    C("=- pytorch=2.0.0", "device_type", R, True, "- pytorch=2.1.0=*cpu*   # or pip torch==2.1.0 next to torch-npu",
      "with pytorch-cuda this resolves to the CUDA build; torch_npu has no 2.0.0 pairing in the active matrix "
      "(2.0.1 only in EOL branches)"),
    C("=- torchvision=0.15.0", "device_type", R, True, "- torchvision=0.16.0",
      "must follow the torch pin (0.16 pairs with torch 2.1 / torchvision_npu)"),
    C("=- pytorch-cuda=11.8", "device_type", X, True, None,
      "pulls the CUDA 11.8 runtime and forces the CUDA pytorch build"),
    C("=- pip:", "import_torch_npu", A, True, "    - torch-npu==2.1.0.post12",
      "the environment never installs torch_npu"),
])

# ---------------------------------------------------------------------------------------------------------
# OpenVLA / Prismatic
# ---------------------------------------------------------------------------------------------------------

INT_DEV = ("a bare int device means cuda:N (msFmkTransplt and transfer_to_npu both rewrite .to(int) "
           "to 'npu:N' for that reason)")

E("openvla_finetune", "vla-scripts/finetune.py", "explicit_replacement",
  "openvla/openvla vla-scripts/finetune.py (LoRA fine-tuning with PartialState + DDP, int device ids)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below"),
    C('assert torch.cuda.is_available(), "Fine-tuning assumes at least one GPU is available!"', "torch_cuda_api", R,
      True, 'assert torch.npu.is_available(), "Fine-tuning assumes at least one NPU is available!"',
      "aborts on an NPU host"),
    C("torch.cuda.set_device(device_id := distributed_state.local_process_index)", "torch_cuda_api", R, True,
      "torch.npu.set_device(device_id := distributed_state.local_process_index)",
      "fails without a CUDA build; each rank must bind its NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context"),
    C('load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_quant_type="nf4"',
      "unsupported_op_workaround", R, False,
      "# 4-bit QLoRA: needs the bitsandbytes multi-backend build with Ascend NF4 support, else disable",
      "only with use_quantization; NF4 on NPU exists only in bitsandbytes' multi-backend branch (unconfirmed "
      "for this transformers version)"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU and the pinned transformers 4.40.1 refuses flash_attention_2 without "
      "it (its NPU flash-attention integration came later); sdpa dispatches to the NPU fused attention"),
    C("vla = vla.to(device_id)", "tensor_to_device", R, True, 'vla = vla.to(f"npu:{device_id}")', INT_DEV),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast is inactive for NPU tensors: the forward would run without the bf16 autocast policy"),
    C('input_ids=batch["input_ids"].to(device_id),', "tensor_to_device", R, True,
      'input_ids=batch["input_ids"].to(f"npu:{device_id}"),', INT_DEV),
    C('attention_mask=batch["attention_mask"].to(device_id),', "tensor_to_device", R, True,
      'attention_mask=batch["attention_mask"].to(f"npu:{device_id}"),', INT_DEV),
    C('pixel_values=batch["pixel_values"].to(torch.bfloat16).to(device_id),', "tensor_to_device", R, True,
      'pixel_values=batch["pixel_values"].to(torch.bfloat16).to(f"npu:{device_id}"),', INT_DEV),
    C("torch.cuda.empty_cache()  # merged copy", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # merged copy was materialised on the NPU too", "silent no-op"),
])

E("prismatic_torch_utils", "prismatic/util/torch_utils.py", "device_branch_or_abstraction",
  "openvla/openvla prismatic/util/torch_utils.py (seeding, bf16 capability probe via torch.version.cuda + NCCL)", [
    C("(torch.version.cuda is not None)", "device_capability_check", B, True,
      "(hasattr(torch, \"npu\") and torch.npu.is_available() and torch.npu.is_bf16_supported())\n"
      "            or (torch.version.cuda is not None",
      "torch.version.cuda is None on an NPU build and NCCL is absent, so the probe returns False and the "
      "trainer's bf16 assertion stops mixed-precision runs on a bf16-capable NPU"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", B, False,
      "if hasattr(torch, \"npu\") and torch.npu.is_available():\n        return torch.npu.max_memory_allocated(device) / (1024**3)",
      "memory logging reports 0.0 on NPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, False,
      "if hasattr(torch, \"npu\") and torch.npu.is_available():\n        return torch.npu.get_device_name(torch.npu.current_device())",
      "device name logged as 'cpu' on NPU"),
])

E("prismatic_fsdp", "prismatic/training/strategies/fsdp.py", "explicit_replacement",
  "openvla/openvla prismatic/training/strategies/fsdp.py (FSDP hybrid shard, per-component mixed precision)", [
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", R, True, "device_id=torch.npu.current_device(),",
      "current_device() needs a CUDA build; FSDP must be told the NPU to shard onto"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("prismatic_base_strategy", "prismatic/training/strategies/base_strategy.py", "explicit_replacement",
  "openvla/openvla prismatic/training/strategies/base_strategy.py (VLM and VLA training loops under CUDA autocast)", [
    C('="cuda",', "amp", R, True, '"npu",',
      "run_training: the autocast device argument sits on its own line; CUDA autocast is inactive for NPU "
      "tensors, so the bf16 policy (fp32 softmax/norm/loss) is not applied"),
    C('with torch.autocast("cuda", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training):',
      "amp", R, True,
      'with torch.autocast("npu", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training):',
      "run_vla_training: same"),
])

E("openvla_deploy", "vla-scripts/deploy.py", "transfer_to_npu",
  "openvla/openvla vla-scripts/deploy.py (FastAPI /act server for real-robot clients)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "small server: transfer_to_npu turns the is_available()/torch.device('cuda')/synchronize lines into NPU calls"),
    C('attn_implementation: Optional[str] = "flash_attention_2"', "attention_kernel", R, True,
      'attn_implementation: Optional[str] = "sdpa"',
      "not covered by transfer_to_npu: transformers checks is_flash_attn_2_available with the original CUDA probe "
      "and (at the pinned 4.40.1) refuses flash_attention_2 without the flash-attn package"),
])

E("openvla_pyproject", "pyproject.toml", "explicit_replacement",
  "openvla/openvla pyproject.toml (torch 2.2.0 pin, flash-attn in the train extra)", [
    C('"torch==2.2.0",', "import_torch_npu", A, True,
      '"torch-npu==2.2.0.post2",  # pairs with torch 2.2.0 (v2.2.0-6.0.rc2 branch, CANN 8.0.RC2)',
      "no torch_npu dependency at all"),
    C('"flash-attn==2.5.5",', "attention_kernel", X, True, None,
      "pip install -e '.[train]' fails: flash-attn builds only against CUDA"),
    C('"bitsandbytes>=0.43.1",', "unsupported_op_workaround", R, False,
      '"bitsandbytes @ git+https://github.com/bitsandbytes-foundation/bitsandbytes@multi-backend-refactor",',
      "quant extra only; Ascend NF4 lives in the multi-backend branch (unconfirmed for this pin)"),
])

E("openvla_libero_sh", "scripts/finetune_and_eval_libero.sh", "explicit_replacement",
  "OpenVLA LIBERO fine-tune + sim-eval launch script (torchrun, nvidia-smi GPU count, EGL MuJoCo)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (knowledge documents only that variable); the mask is "
      "silently ignored as soon as it lists fewer than all devices"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only; HCCL logging goes through ASCEND_GLOBAL_LOG_LEVEL"),
    C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi is absent on an Ascend host: under set -e the pipeline yields 0 and torchrun gets --nproc-per-node 0"),
    C('pip install "flash-attn==2.5.5" --no-build-isolation', "attention_kernel", X, True, None,
      "flash-attn cannot build without CUDA; with set -e the script stops here"),
    C("export MUJOCO_GL=egl", "env_var", R, False, "export MUJOCO_GL=osmesa",
      "EGL off-screen rendering normally rides on NVIDIA's EGL; Mesa EGL on the NPU host unconfirmed"),
    C("export MUJOCO_EGL_DEVICE_ID=${EVAL_GPU}", "env_var", X, False, None,
      "indexes NVIDIA EGL devices by CUDA ordinal; meaningless on the NPU host"),
    C("CUDA_VISIBLE_DEVICES=${EVAL_GPU} python experiments/robot/libero/run_libero_eval.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${EVAL_GPU} python experiments/robot/libero/run_libero_eval.py \\",
      "inline env prefix: evaluation would otherwise see every NPU and land on npu:0"),
])

# ---------------------------------------------------------------------------------------------------------
# Octo (PyTorch port)
# ---------------------------------------------------------------------------------------------------------

E("octo_block_transformer", "octo_pytorch/model/components/block_transformer.py", "device_branch_or_abstraction",
  "octo-models/octo model/components/block_transformer.py as a PyTorch port (token groups, rule masks, SDPA)", [
    C("torch.bfloat16 if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8",
      "device_capability_check", R, False,
      "torch.bfloat16 if (hasattr(torch, \"npu\") and torch.npu.is_available()) or (torch.cuda.is_available() "
      "and torch.cuda.get_device_capability()[0] >= 8)",
      "the is_available guard short-circuits on NPU, so the transformer silently runs in fp32: correct but slower "
      "on bf16-capable Atlas A2"),
    C("with sdpa_kernel(_SDPA_BACKENDS):", "attention_kernel", R, False,
      "with (sdpa_kernel(_SDPA_BACKENDS) if q.is_cuda else nullcontext()):",
      "backend selection via torch.nn.attention.sdpa_kernel is a CUDA-side mechanism (the legacy "
      "torch.backends.cuda.sdp_kernel is marked unsupported by Ascend); its effect on NPU SDPA unconfirmed"),
])

E("octo_train", "scripts/finetune.py", "explicit_replacement",
  "octo-models/octo scripts/finetune.py as a PyTorch port (tf.data RLDS loader, DDP, compile, bf16 autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below"),
    C('dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", timeout=datetime.timedelta(minutes=30))', ""),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "runs even single-process; fails without a CUDA build"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True,
      'device = torch.device("npu", local_rank)', "model, batches and EMA all follow this device"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs") if FLAGS.compile_npu else model',
      "max-autotune tunes Triton templates; on NPU use the npugraphs backend or skip (default flag is on) -- "
      "behaviour of mode='max-autotune' on torch_npu unconfirmed"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and calls the CUDA allocator binding: raises without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):',
      "CUDA autocast is inactive for NPU tensors: the step runs without the bf16 policy"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "CUDA lazy init raises on the first log interval"),
    C('"memory/peak_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", R, False,
      '"memory/peak_gb": torch.npu.max_memory_allocated() / 1e9,', "logs 0 without CUDA"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", R, False,
      "pin_memory=True,",
      "evaluates False on NPU, so host batches are not pinned before the non_blocking copies (perf only)"),
])

# ---------------------------------------------------------------------------------------------------------
# openpi (pi0 / pi0.5, PyTorch side)
# ---------------------------------------------------------------------------------------------------------

E("openpi_pi0_pytorch", "src/openpi/models_pytorch/pi0_pytorch.py", "device_branch_or_abstraction",
  "Physical-Intelligence/openpi models_pytorch/pi0_pytorch.py (flow-matching action expert, Beta time sampling, compiled sampler)", [
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", R, False,
      "torch._inductor.config.coordinate_descent_tuning = torch.cuda.is_available()",
      "Triton block-size search for Inductor kernels; whether torch_npu's Inductor/triton-ascend path honours "
      "it is unconfirmed"),
    C("dtype = get_safe_dtype(torch.float64, device.type)", "unsupported_op_workaround", R, False,
      'dtype = torch.float32 if device.type == "npu" else get_safe_dtype(torch.float64, device.type)',
      "float64 linspace/pow/sin time embedding on the policy device; fp64 coverage on NPU is partial "
      "(unconfirmed for these ops)"),
    C("dist = torch.distributions.Beta(alpha_t, beta_t)", "unsupported_op_workaround", R, False,
      "dist = torch.distributions.Beta(alpha_t.cpu(), beta_t.cpu())  # sample on host, .to(device) by caller",
      "Beta.sample goes through _sample_dirichlet/_standard_gamma, which have no NPU kernel in the op lists: "
      "CPU fallback with a warning on every training step (perf only)"),
    C("self.sample_actions = torch.compile(self.sample_actions, mode=config.pytorch_compile_mode)", "compile_mode",
      R, False,
      'self.sample_actions = torch.compile(self.sample_actions, backend="npugraphs")',
      "the config default is max-autotune (Triton template tuning); npugraphs is the NPU analogue of cudagraphs"),
])

E("openpi_gemma_pytorch", "src/openpi/models_pytorch/gemma_pytorch.py", "device_branch_or_abstraction",
  "Physical-Intelligence/openpi models_pytorch/gemma_pytorch.py (PaliGemma + action expert, adaRMS GemmaRMSNorm)", [
    C("torch.backends.cuda.enable_mem_efficient_sdp(False)", "attention_kernel", X, True, None,
      "CUDA SDPA backend switch, marked unsupported in Ascend's 2.7.1 list and msFmkTransplt's list; the NaN "
      "workaround concerns the CUDA kernel only (same judgement as probe4's sdp_kernel)"),
    C("=output = self._norm(x.float())", "npu_fused_op", R, False,
      "output = torch_npu.npu_gemma_rms_norm(x, self.weight, self.eps)[0]",
      "plain GemmaRMSNorm path (1 + weight); npu_gemma_rms_norm exists in the custom-op lists, its exact "
      "weight convention is unconfirmed -- perf only"),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", R, False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)",
      "rotate-half RoPE on BNSD tensors; npu_rotary_mul is the fused equivalent (perf only)"),
])

E("openpi_train_pytorch", "scripts/train_pytorch.py", "device_branch_or_abstraction",
  "Physical-Intelligence/openpi scripts/train_pytorch.py (torchrun DDP trainer with CUDA-or-CPU/gloo fallbacks)", [
    C("=import torch", "import_torch_npu", A, True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    torch_npu = None",
      "the NPU branches below need torch_npu loaded"),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", R, False,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; fragmentation tuning only"),
    C('backend = "nccl" if torch.cuda.is_available() else "gloo"', "dist_backend", R, True,
      'backend = "hccl" if torch.npu.is_available() else ("nccl" if torch.cuda.is_available() else "gloo")',
      "an NPU host silently takes the gloo branch, and gloo cannot all-reduce NPU gradients"),
    C('device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device(f"npu:{local_rank}" if torch.npu.is_available() else (f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"))',
      "without the NPU branch the whole run silently trains on CPU"),
    C('if device.type == "cuda":', "torch_cuda_api", B, True,
      'elif device.type == "npu":\n        torch.npu.set_device(device)',
      "each rank must bind its NPU before HCCL communicators are created; the cuda-only branch skips it"),
    C("torch.cuda.manual_seed_all(seed + local_rank)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(seed + local_rank)", "harmless lazy call; torch.manual_seed already covers the NPU"),
    C("optim = torch.optim.AdamW(", "fused_optimizer", R, False, "optim = torch_npu.optim.NpuFusedAdamW(",
      "perf only (more memory)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", B, False,
      'elif torch.npu.is_available():\n                    log_payload["memory/max_allocated_gb"] = torch.npu.max_memory_allocated(device) / 1e9\n                    torch.npu.reset_peak_memory_stats(device)',
      "memory metric missing from the logs on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op"),
])

E("openpi_pyproject", "pyproject.toml", "explicit_replacement",
  "Physical-Intelligence/openpi pyproject.toml (uv project: jax[cuda12], torch from the cu128 index)", [
    C('"jax[cuda12]==0.5.3",', "device_type", R, False, '"jax==0.5.3",',
      "pulls the CUDA 12 JAX plugin; on the NPU host JAX just runs on CPU (JAX training and checkpoint "
      "conversion only)"),
    C('"torch==2.7.1",', "import_torch_npu", A, True, '"torch-npu==2.7.1",',
      "no torch_npu dependency: the PyTorch training path cannot reach an NPU"),
    C('url = "https://download.pytorch.org/whl/cu128"', "device_type", R, False,
      'url = "https://download.pytorch.org/whl/cpu"',
      "torch/torchvision are pinned to the cu128 index on Linux; x86 torch_npu pairs with the CPU wheel "
      "(knowledge 1.1), whether it loads on the CUDA build is unconfirmed"),
])

# ---------------------------------------------------------------------------------------------------------
# RDT-1B (Robotics Diffusion Transformer)
# ---------------------------------------------------------------------------------------------------------

E("rdt_finetune_sh", "finetune.sh", "explicit_replacement",
  "thu-ml/RoboticsDiffusionTransformer finetune.sh (DeepSpeed launcher, NCCL InfiniBand tuning)", [
    C("export NCCL_IB_HCA=", "env_var", X, False, None,
      "NCCL InfiniBand adapter list; HCCL drives the NPUs' own RoCE ports (configured with hccn_tool)"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL-only"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=bond0",
      "multi-node root-info NIC: HCCL otherwise picks by its own order and link setup fails if that NIC cannot "
      "reach the root (knowledge: HCCL_SOCKET_IFNAME / HCCL_IF_IP); only matters with a hostfile"),
    C("export NCCL_DEBUG=INFO", "env_var", X, False, None, "NCCL-only logging"),
    C("export NCCL_NVLS_ENABLE=0", "env_var", X, False, None, "NVLink SHARP switch, no NPU meaning"),
    C('export CUTLASS_PATH="/opt/cutlass"', "custom_cuda_extension", X, False, None,
      "CUTLASS headers for CUDA kernel builds (xformers/flash-attn from source); nothing to build on NPU"),
])

E("rdt_train", "train/train.py", "device_branch_or_abstraction",
  "thu-ml/RoboticsDiffusionTransformer train/train.py (accelerate + DeepSpeed ZeRO-2, diffusers-style options)", [
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW  # bitsandbytes 8-bit optimizers have no NPU backend",
      "only with --use_8bit_adam; bitsandbytes' NPU support covers NF4 only, not 8-bit optimizers"),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", R, False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "perf only; interaction with DeepSpeed ZeRO-2's optimizer wrapping unconfirmed"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op on NPU (accelerate itself is device-agnostic here)"),
])

E("rdt_blocks", "models/rdt/blocks.py", "explicit_replacement",
  "thu-ml/RoboticsDiffusionTransformer models/rdt/blocks.py (timm blocks + cross-attention over long image/lang tokens)", [
    C("import xformers.ops as xops", "attention_kernel", X, True, None,
      "unguarded xformers import; xformers has no NPU backend (no operator for device='npu')"),
    C("x = xops.memory_efficient_attention(", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), "
      "attn_mask=None if mask is None else mask[:, None, None, :], dropout_p=self.attn_drop.p if self.training "
      "else 0.0, scale=self.scale).transpose(1, 2)",
      "SDPA dispatches to the NPU fused attention (BNSD layout, boolean mask)"),
    C("pad_L = (L + 7) // 8 * 8", "attention_kernel", X, False, None,
      "xformers-specific alignment of the additive bias; unnecessary with SDPA's boolean mask"),
])

# ---------------------------------------------------------------------------------------------------------
# 3-D point-cloud policies (DP3 / 3D Diffuser Actor style third_party/pointnet2_ops_lib)
# ---------------------------------------------------------------------------------------------------------

E("pointnet2_setup", "third_party/pointnet2_ops_lib/setup.py", "explicit_replacement",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops_lib/setup.py as vendored by 3-D diffusion-policy repos", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc and a CUDA toolkit; the NPU route is Ascend C kernels via NpuExtension/OpPlugin, "
      "or dropping the extension for torch-native ops"),
    C('osp.join(_ext_src_root, "src", "*.cu")', "custom_cuda_extension", R, True,
      'osp.join(_ext_src_root, "src_ascend", "*.cpp")',
      "the .cu kernels (FPS, ball query, grouping, three_nn/interpolate) have to be rewritten"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None,
      "SM architecture list for nvcc; meaningless once nothing is compiled for CUDA"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(",
      "the build fails on a host without CUDA (pip install . aborts)"),
    C('"nvcc": ["-O3", "-Xfatbin", "-compress-all", "--use_fast_math"],', "custom_cuda_extension", X, False, None,
      "nvcc flags; ignored once no .cu sources remain"),
])

EXT = ("call into the nvcc-built pointnet2_ops._ext; no NPU kernel behind it (rewrite in torch ops, Ascend C, "
       "or DrivingSDK/mx_driving point ops -- the latter unconfirmed)")

E("pointnet2_utils", "third_party/pointnet2_ops_lib/pointnet2_ops/pointnet2_utils.py", "explicit_replacement",
  "erikwijmans/Pointnet2_PyTorch pointnet2_ops/pointnet2_utils.py (autograd Functions over the _ext CUDA ops)", [
    C("import pointnet2_ops._ext as _ext", "custom_cuda_extension", R, True,
      "from pointnet2_ops import torch_ops as _ext  # torch-native FPS / ball query / grouping",
      "compiled CUDA extension; the except branch below only JIT-compiles the same .cu sources"),
    C("from torch.utils.cpp_extension import load", "custom_cuda_extension", R, True,
      "raise ImportError('pointnet2_ops: no NPU build of _ext')",
      "JIT fallback with nvcc (with_cuda=True); cpp_extension.load is marked unsupported on A2/A3"),
    C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "torch_cuda_api", R, True,
      "temp = torch.full((B, N), 1e10, dtype=torch.float32, device=xyz.device)",
      "legacy torch.cuda.FloatTensor constructor: fails without CUDA and ignores the input's device"),
    C("out = _ext.furthest_point_sampling(xyz, npoint, temp)", "custom_cuda_extension", R, True,
      "out = furthest_point_sampling_torch(xyz, npoint)", EXT),
    C("return _ext.gather_points(features, idx)", "custom_cuda_extension", R, True,
      "return torch.gather(features, 2, idx.long().unsqueeze(1).expand(-1, features.size(1), -1))", EXT),
    C("grad_features = _ext.gather_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", R, True,
      "grad_features = grad_out.new_zeros(grad_out.size(0), grad_out.size(1), N).scatter_add_(2, idx.long().unsqueeze(1).expand_as(grad_out), grad_out)",
      EXT),
    C("dist2, idx = _ext.three_nn(unknown, known)", "custom_cuda_extension", R, True,
      "dist2, idx = torch.cdist(unknown, known).pow(2).topk(3, dim=-1, largest=False)", EXT),
    C("return _ext.three_interpolate(features, idx, weight)", "custom_cuda_extension", R, True,
      "return three_interpolate_torch(features, idx, weight)", EXT),
    C("grad_features = _ext.three_interpolate_grad(grad_out.contiguous(), idx, weight, m)", "custom_cuda_extension",
      R, True, "grad_features = three_interpolate_grad_torch(grad_out, idx, weight, m)", EXT),
    C("return _ext.group_points(features, idx)", "custom_cuda_extension", R, True,
      "return group_points_torch(features, idx)", EXT),
    C("grad_features = _ext.group_points_grad(grad_out.contiguous(), idx, N)", "custom_cuda_extension", R, True,
      "grad_features = group_points_grad_torch(grad_out, idx, N)", EXT),
    C("output = _ext.ball_query(new_xyz, xyz, radius, nsample)", "custom_cuda_extension", R, True,
      "output = ball_query_torch(new_xyz, xyz, radius, nsample)", EXT),
])

# ---------------------------------------------------------------------------------------------------------
# legged_gym / rsl_rl (Isaac Gym robot-learning framework)
# ---------------------------------------------------------------------------------------------------------

E("legged_gym_helpers", "legged_gym/utils/helpers.py", "explicit_replacement",
  "leggedrobotics/legged_gym legged_gym/utils/helpers.py (Isaac Gym args, rl_device, seeding, policy export)", [
    C('{"name": "--rl_device", "type": str, "default": "cuda:0"', "device_type", R, True,
      '{"name": "--rl_device", "type": str, "default": "npu:0", "help": "Device used by the RL algorithm, (cpu, npu:0, npu:1 etc..)"},',
      "PPO's actor-critic, storage and advantage tensors are all created on rl_device"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued, harmless; torch.manual_seed already seeds the NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)", "same"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", X, False, None,
      "cuBLAS determinism knob; NPU determinism comes from torch.use_deterministic_algorithms / HCCL_DETERMINISTIC"),
    C("sim_params.use_gpu_pipeline = args.use_gpu_pipeline", "device_type", R, False,
      "sim_params.use_gpu_pipeline = False  # PhysX GPU pipeline is CUDA-only; obs are copied to the NPU policy",
      "Isaac Gym's GPU tensor pipeline needs CUDA; whether Isaac Gym falls back to the CPU pipeline by itself "
      "on a host without CUDA is unconfirmed"),
    C("loaded_dict = torch.load(path)", "tensor_to_device", R, True,
      'loaded_dict = torch.load(path, map_location="cpu")',
      "checkpoints written by the CUDA training run hold CUDA storages; loading on the robot's NPU/CPU host fails "
      "without map_location"),
])

# ---------------------------------------------------------------------------------------------------------
# Real-robot deployment (TensorRT / pycuda runner for an ACT policy)
# ---------------------------------------------------------------------------------------------------------

TRT = ("TensorRT/pycuda have no Ascend backend; the NPU deployment route is an ATC-compiled .om model run "
       "through AscendCL (e.g. ais_bench InferSession -- not in the knowledge base, unconfirmed) or torch_npu")

E("act_trt_runner", "deploy/trt_policy_runner.py", "explicit_replacement",
  "community ACT/ALOHA on-robot deployment runner (ONNX -> TensorRT engine driven by pycuda, TorchScript fallback)", [
    C("import pycuda.autoinit", "custom_cuda_extension", X, True, None,
      "creates a CUDA context at import time: ImportError/driver error on the NPU host"),
    C("import pycuda.driver as cuda", "custom_cuda_extension", X, True, None, TRT),
    C("import tensorrt as trt", "custom_cuda_extension", R, True,
      "from ais_bench.infer.interface import InferSession", TRT),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the torch backend must reach the NPU"),
    C("builder = trt.Builder(TRT_LOGGER)", "custom_cuda_extension", R, True,
      'subprocess.run(["atc", f"--model={onnx_path}", "--framework=5", f"--output={engine_path[:-3]}", "--soc_version=Ascend910B"], check=True)',
      "engine build step becomes an offline ATC conversion of the same ONNX graph"),
    C("self.engine = runtime.deserialize_cuda_engine(f.read())", "custom_cuda_extension", R, True,
      "self.session = InferSession(device_id=0, model_path=engine_path)", TRT),
    C("self.stream = cuda.Stream()", "custom_cuda_extension", R, True, "self.stream = None  # InferSession owns its stream",
      TRT),
    C("host_mem = cuda.pagelocked_empty(size, dtype)", "custom_cuda_extension", R, True,
      "host_mem = np.empty(size, dtype)", "pinned host buffer from the CUDA driver"),
    C("device_mem = cuda.mem_alloc(host_mem.nbytes)", "custom_cuda_extension", R, True,
      "device_mem = None  # device buffers are allocated by the inference session", TRT),
    C("cuda.memcpy_htod_async(inp.device, inp.host, self.stream)", "custom_cuda_extension", R, True,
      "feeds = [inp.host for inp in self.inputs]", TRT),
    C("self.context.execute_async_v2(bindings=self.bindings, stream_handle=self.stream.handle)",
      "custom_cuda_extension", R, True, "outputs = self.session.infer(feeds)", TRT),
    C("cuda.memcpy_dtoh_async(out.host, out.device, self.stream)", "custom_cuda_extension", R, True,
      "np.copyto(out.host, outputs[i].ravel())", TRT),
    C("self.stream.synchronize()", "custom_cuda_extension", X, True, None, "pycuda stream sync; session.infer is blocking"),
    C("self.policy = torch.jit.load(torchscript_path).cuda().eval()", "tensor_to_device", R, True,
      'self.policy = torch.jit.load(torchscript_path, map_location="cpu").npu().eval()',
      ".cuda() fails without CUDA (running TorchScript graphs on NPU is itself not confirmed in the knowledge)"),
    C("qpos_t = torch.from_numpy(qpos).float().cuda(non_blocking=True)", "tensor_to_device", R, True,
      "qpos_t = torch.from_numpy(qpos).float().npu(non_blocking=True)", ""),
    C("images_t = torch.from_numpy(images).float().cuda(non_blocking=True)", "tensor_to_device", R, True,
      "images_t = torch.from_numpy(images).float().npu(non_blocking=True)", ""),
])
