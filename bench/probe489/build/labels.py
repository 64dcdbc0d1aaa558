"""Labels for probe489 (VLA / imitation-learning robot policies, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter edits for an explicit torch_npu port
(torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: the port pins torch 2.1.0 + torch_npu 2.1.0.postN, where the NPU backend is only "
               "registered after an explicit `import torch_npu` (autoload exists only from torch_npu 2.5.1)")
CUDA_TO = "tensor/module placed on CUDA; no CUDA device on an Ascend host, so the call raises"
EMPTY_CACHE = ("torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing breaks; "
               "the port frees the NPU caching allocator instead (memory only)")
PIN_NOTE = ("DataLoader(pin_memory=True) without pin_memory_device only pins when torch.cuda.is_available(); on NPU "
            "pinning is silently skipped. pin_memory_device='npu' restores it (performance only)")

# ---------------------------------------------------------------- ACT (tonyzhaozh/act)
E("act_imitate", "imitate_episodes.py", "explicit_replacement",
  "tonyzhaozh/act imitate_episodes.py (train/eval entry point for ACT and CNNMLP policies)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("curr_image = torch.from_numpy(curr_image / 255.0).float().cuda().unsqueeze(0)", "tensor_to_device",
      "replace", True, "curr_image = torch.from_numpy(curr_image / 255.0).float().npu().unsqueeze(0)", CUDA_TO),
    C("loading_status = policy.load_state_dict(torch.load(ckpt_path))", "tensor_to_device", "replace", False,
      "loading_status = policy.load_state_dict(torch.load(ckpt_path, map_location='npu'))",
      "checkpoint is written by train_bc in the same (ported) run, so its tensors are already npu tensors; only a "
      "GPU-trained policy_best.ckpt would fail to deserialise without map_location"),
    C("=policy.cuda()", "tensor_to_device", "replace", True, "policy.npu()", CUDA_TO),
    C("all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).cuda()",
      "tensor_to_device", "replace", True,
      "all_time_actions = torch.zeros([max_timesteps, max_timesteps+num_queries, state_dim]).npu()",
      "temporal-ensembling buffer; " + CUDA_TO),
    C("qpos_history = torch.zeros((1, max_timesteps, state_dim)).cuda()", "tensor_to_device", "replace", True,
      "qpos_history = torch.zeros((1, max_timesteps, state_dim)).npu()", CUDA_TO),
    C("qpos = torch.from_numpy(qpos).float().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "qpos = torch.from_numpy(qpos).float().npu().unsqueeze(0)", CUDA_TO),
    C("exp_weights = torch.from_numpy(exp_weights).cuda().unsqueeze(dim=1)", "tensor_to_device", "replace", True,
      "exp_weights = torch.from_numpy(exp_weights).npu().unsqueeze(dim=1)",
      "float64 numpy weights moved to device; NPU fp64 support is limited, a porter may add .float() (not required: "
      "the product with the fp32 actions is promoted on device)"),
    C("image_data, qpos_data, action_data, is_pad = image_data.cuda(), qpos_data.cuda()", "tensor_to_device",
      "replace", True,
      "image_data, qpos_data, action_data, is_pad = image_data.npu(), qpos_data.npu(), action_data.npu(), is_pad.npu()",
      "training/validation batch transfer; " + CUDA_TO),
    C("policy.cuda()  # train on the GPU", "tensor_to_device", "replace", True, "policy.npu()  # train on the NPU",
      CUDA_TO),
])

E("act_utils", "utils.py", "explicit_replacement",
  "tonyzhaozh/act utils.py (EpisodicDataset over hdf5 episodes, norm stats, DataLoaders, seeding)", [
    C("train_dataloader = DataLoader(train_dataset", "pin_memory", "replace", False,
      "train_dataloader = DataLoader(train_dataset, batch_size=batch_size_train, shuffle=True, pin_memory=True, "
      "pin_memory_device='npu', num_workers=1, prefetch_factor=1)", PIN_NOTE),
    C("val_dataloader = DataLoader(val_dataset", "pin_memory", "replace", False,
      "val_dataloader = DataLoader(val_dataset, batch_size=batch_size_val, shuffle=True, pin_memory=True, "
      "pin_memory_device='npu', num_workers=1, prefetch_factor=1)", PIN_NOTE),
])

E("act_policy", "policy.py", "explicit_replacement",
  "tonyzhaozh/act policy.py (ACTPolicy / CNNMLPPolicy wrappers, KL loss) - device-agnostic, no change", [])

E("act_detr_main", "detr/main.py", "explicit_replacement",
  "tonyzhaozh/act detr/main.py (argparse defaults, build_ACT/CNNMLP_model_and_optimizer)", [
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "ACT model moved to CUDA before the optimizer is built; " + CUDA_TO),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", CUDA_TO),
])

E("act_misc", "detr/util/misc.py", "explicit_replacement",
  "tonyzhaozh/act detr/util/misc.py (DETR misc: SmoothedValue, all_gather, MetricLogger, init_distributed_mode)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "DETR helper inherited by ACT (only reached when distributed); float64 all_reduce over HCCL is unconfirmed, a "
      "porter may switch to float32"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather of pickled objects; " + CUDA_TO),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', CUDA_TO),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
      True, 'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', CUDA_TO),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', CUDA_TO),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      CUDA_TO),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only chooses the log format with/without 'max mem'; on NPU it silently drops the memory column"),
    C("if torch.cuda.is_available():  # max mem is only reported on GPU", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # max mem is only reported on NPU", "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "logging only (torch.cuda memory stats return 0 when CUDA is uninitialised)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("act_env", "conda_env.yaml", "explicit_replacement",
  "tonyzhaozh/act conda_env.yaml (aloha conda environment)", [
    C("=- pytorch=2.0.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu wheels must match torch x.y.z exactly and there is none for 2.0.0; 2.1.0 has an active torch_npu line"),
    C("=- torchvision=0.15.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must match the torch 2.1.0 pin"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", "removal", True, None,
      "pulls the CUDA build of pytorch (and CUDA runtime); the NPU host needs the CPU build plus torch-npu"),
    C("=- ipython=8.12.0", "import_torch_npu", "npu_only_addition", True, "- pip: [torch-npu==2.1.0.post12]",
      "torch-npu is only distributed on PyPI; added as a pip entry after the last conda dependency"),
])

# ---------------------------------------------------------------- Diffusion Policy (real-stanford/diffusion_policy)
E("dp_train", "train.py", "explicit_replacement",
  "real-stanford/diffusion_policy train.py (hydra entry point)", [
    C("=import hydra", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("dp_workspace", "diffusion_policy/workspace/train_diffusion_unet_hybrid_workspace.py", "explicit_replacement",
  "real-stanford/diffusion_policy workspace/train_diffusion_unet_hybrid_workspace.py (training loop; device from "
  "cfg.training.device) - no change", [])

E("dp_config", "diffusion_policy/config/train_diffusion_unet_hybrid_workspace.yaml", "explicit_replacement",
  "real-stanford/diffusion_policy config/train_diffusion_unet_hybrid_workspace.yaml", [
    C('device: "cuda:0"', "device_type", "replace", True, 'device: "npu:0"',
      "the workspace builds torch.device(cfg.training.device); 'cuda:0' fails on an NPU host"),
])

E("dp_eval", "eval.py", "explicit_replacement",
  "real-stanford/diffusion_policy eval.py (click CLI, sim evaluation of a checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("@click.option('-d', '--device', default='cuda:0')", "device_type", "replace", True,
      "@click.option('-d', '--device', default='npu:0')", "default device string"),
])

E("dp_eval_real", "eval_real_robot.py", "explicit_replacement",
  "real-stanford/diffusion_policy eval_real_robot.py (UR5 + RealSense + SpaceMouse real-robot evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "policy and every observation dict are moved to this device"),
])

E("dp_unet", "diffusion_policy/model/diffusion/conditional_unet1d.py", "explicit_replacement",
  "real-stanford/diffusion_policy model/diffusion/conditional_unet1d.py (FiLM-conditioned 1D UNet) - no change", [])

E("dp_env", "conda_environment.yaml", "explicit_replacement",
  "real-stanford/diffusion_policy conda_environment.yaml (robodiff env)", [
    C("=- cudatoolkit=11.6", "import_torch_npu", "removal", True, None,
      "CUDA toolkit is meaningless on Ascend and forces the CUDA pytorch build"),
    C("=- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release for torch 1.12; 2.1.0 is the oldest active line"),
    C("=- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must follow the torch pin"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu is pip-only; first entry of the pip section"),
])

# ---------------------------------------------------------------- OpenVLA (openvla/openvla, prismatic)
E("ovla_finetune", "vla-scripts/finetune.py", "explicit_replacement",
  "openvla/openvla vla-scripts/finetune.py (LoRA fine-tuning with PEFT + DDP under torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('assert torch.cuda.is_available(), "Fine-tuning assumes at least one GPU is available!"', "torch_cuda_api",
      "replace", True, 'assert torch.npu.is_available(), "Fine-tuning assumes at least one NPU is available!"',
      "assert fails on an NPU host"),
    C("torch.cuda.set_device(device_id := distributed_state.local_process_index)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device_id := distributed_state.local_process_index)", "raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("vla = vla.to(device_id)", "tensor_to_device", "replace", True, 'vla = vla.to(f"npu:{device_id}")',
      "a bare int device means cuda:<int> to .to(); msFmkTransplt/transfer_to_npu rewrite int .to() args for this reason"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast does not cover NPU ops: the bf16 LoRA forward would silently run without autocast's bf16/fp32 "
      "op policy"),
    C('input_ids=batch["input_ids"].to(device_id),', "tensor_to_device", "replace", True,
      'input_ids=batch["input_ids"].to(f"npu:{device_id}"),', "int device index -> cuda"),
    C('attention_mask=batch["attention_mask"].to(device_id),', "tensor_to_device", "replace", True,
      'attention_mask=batch["attention_mask"].to(f"npu:{device_id}"),', "int device index -> cuda"),
    C('pixel_values=batch["pixel_values"].to(torch.bfloat16).to(device_id),', "tensor_to_device", "replace", True,
      'pixel_values=batch["pixel_values"].to(torch.bfloat16).to(f"npu:{device_id}"),', "int device index -> cuda"),
])

E("ovla_deploy", "vla-scripts/deploy.py", "explicit_replacement",
  "openvla/openvla vla-scripts/deploy.py (FastAPI/uvicorn REST server around AutoModelForVision2Seq)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('attn_implementation: Optional[str] = "flash_attention_2"', "attention_kernel", "replace", True,
      'attn_implementation: Optional[str] = "sdpa"',
      "flash-attn cannot be installed on NPU and transformers refuses flash_attention_2 without it; SDPA dispatches "
      "to the NPU fused attention (transformers PR #36383)"),
    C('self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'self.device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "silently falls back to CPU on an NPU host (7B bf16 model on CPU)"),
])

E("ovla_fsdp", "prismatic/training/strategies/fsdp.py", "explicit_replacement",
  "openvla/openvla prismatic/training/strategies/fsdp.py (FSDP hybrid-shard strategy with bf16 MixedPrecision)", [
    C("device_id=torch.cuda.current_device(),", "torch_cuda_api", "replace", True,
      "device_id=torch.npu.current_device(),", "torch.cuda.current_device() lazily initialises CUDA and raises"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
])

E("ovla_torch_utils", "prismatic/util/torch_utils.py", "explicit_replacement",
  "openvla/openvla prismatic/util/torch_utils.py (seeding, worker_init_fn, check_bloat16_supported)", [
    C("import torch.cuda.nccl as nccl", "device_capability_check", "removal", False, None,
      "the import itself succeeds on an NPU host; it is dead once the nccl.version() clause is dropped"),
    C("(torch.version.cuda is not None)", "device_capability_check", "replace", True, "torch.npu.is_available()",
      "torch.version.cuda is None on the CPU/NPU torch build -> check returns False and base_strategy asserts "
      "'BFloat16 is not supported on this hardware'"),
    C("and torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "and torch.npu.is_bf16_supported()", "query the NPU instead of CUDA"),
    C("and (packaging.version.parse(torch.version.cuda).release >= (11, 0))", "device_capability_check", "removal",
      True, None, "CUDA-version gate; parse(None) raises and the except turns it into False"),
    C("and dist.is_nccl_available()", "dist_backend", "removal", True, None,
      "NCCL is never available on the NPU build; HCCL is the backend"),
    C("and (nccl.version() >= (2, 10))", "dist_backend", "removal", True, None, "NCCL version gate; raises on NPU"),
])

E("ovla_base_strategy", "prismatic/training/strategies/base_strategy.py", "explicit_replacement",
  "openvla/openvla prismatic/training/strategies/base_strategy.py (shared VLA training loop)", [
    C('"cuda", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training', "amp", "replace",
      True, '"npu", dtype=self.mixed_precision_dtype, enabled=self.enable_mixed_precision_training',
      "autocast device type; 'cuda' autocast is disabled (with a warning) on an NPU host so the bf16 op policy is "
      "silently lost"),
])

E("ovla_robot_utils", "experiments/robot/openvla_utils.py", "explicit_replacement",
  "openvla/openvla experiments/robot/openvla_utils.py (LIBERO/Bridge eval helpers, module-level DEVICE)", [
    C('DEVICE = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'DEVICE = torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu")',
      "module-level device global silently falls back to CPU"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True, 'attn_implementation="sdpa",',
      "flash-attn is not installable on NPU; SDPA uses the NPU fused attention"),
])

E("ovla_base_llm", "prismatic/models/backbones/llm/base_llm.py", "explicit_replacement",
  "openvla/openvla prismatic/models/backbones/llm/base_llm.py (HF causal-LLM backbone loader)", [
    C("use_flash_attention_2=use_flash_attention_2 if not self.inference_mode else False,", "attention_kernel",
      "replace", True, 'attn_implementation="sdpa",',
      "the Llama-2 backbone passes use_flash_attention_2=True; transformers raises ImportError without flash_attn"),
])

E("ovla_pyproject", "pyproject.toml", "explicit_replacement",
  "openvla/openvla pyproject.toml (dependencies and optional extras)", [
    C('"torch==2.2.0",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.2.0.post2",',
      "torch-npu wheel matching the torch 2.2.0 pin (2.2.0 is an EOL torch_npu line; a porter may move both to 2.1.0)"),
    C('"flash-attn==2.5.5",', "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on an Ascend host; `pip install -e .[train]` fails"),
])

# ---------------------------------------------------------------- Octo PyTorch port
E("octo_finetune", "scripts/finetune.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: scripts/finetune.py (torchrun DDP finetuning, AMP, optional torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('p.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'p.add_argument("--device", type=str, default="npu")', "single-process default device"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL backend unavailable on Ascend"),
    C('args.device = f"cuda:{args.local_rank}"', "device_type", "replace", True,
      'args.device = f"npu:{args.local_rank}"', "per-rank device string"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is queued lazily and never runs; torch.manual_seed above already seeds the NPU "
      "generators"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and not args.bf16)",
      "the CUDA GradScaler disables itself when CUDA is unavailable: fp16 training would silently run without loss "
      "scaling"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.amp):',
      "CUDA autocast does not apply to NPU tensors (silently fp32)"),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1e9", "log line only; CUDA stats read 0"),
    C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",', PIN_NOTE),
])

E("octo_transformer", "octo_pytorch/model/components/transformer.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: model/components/transformer.py (MHA with SDPA / optional xformers)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
      "attention_kernel", "replace", True,
      "if True:  # torch.backends.cuda.sdp_kernel is CUDA-only; NPU SDPA selects its fused kernel itself",
      "torch.backends.cuda.sdp_kernel is marked unsupported on NPU (Ascend 2.7.1 API list, msFmkTransplt "
      "unsupported list); the block body stays as is"),
])

E("octo_model", "octo_pytorch/model/octo_model.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: model/octo_model.py (OctoModel wrapper, load/save_pretrained)", [
    C('def load_pretrained(cls, checkpoint_path: str, device: str = "cuda") -> "OctoModel":', "device_type",
      "replace", True, 'def load_pretrained(cls, checkpoint_path: str, device: str = "npu") -> "OctoModel":',
      "default used by examples/eval_gym.py; map_location='cuda' fails on an NPU host"),
])

E("octo_heads", "octo_pytorch/model/components/action_heads.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: model/components/action_heads.py (L1 and DDPM diffusion action heads)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch.npu.amp import autocast",
      "@autocast(enabled=False) is meant to keep the noise-schedule math in fp32; on NPU the CUDA variant only "
      "warns, and both decorated bodies already cast to .float() and use elementwise ops that autocast does not "
      "touch, so results are unchanged"),
])

E("octo_convert", "scripts/convert_jax_checkpoint.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: scripts/convert_jax_checkpoint.py (orbax/flax -> state_dict, CPU only)", [])

E("octo_eval", "examples/eval_gym.py", "explicit_replacement",
  "PyTorch ports of octo-models/octo: examples/eval_gym.py (gym rollout with history/RHC wrappers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("octo_reqs", "requirements.txt", "explicit_replacement",
  "PyTorch ports of octo-models/octo: requirements.txt", [
    C("=# core", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "NPU backend package; wheel version must match the torch pin"),
    C("=torch>=2.1.0", "import_torch_npu", "replace", True, "torch==2.1.0",
      "an open lower bound resolves to the newest torch, which the pinned torch-npu wheel does not match"),
    C("=xformers>=0.0.23", "attention_kernel", "removal", False, None,
      "xformers has no NPU backend; the code only uses it behind x.is_cuda so leaving it is harmless at runtime; "
      "whether the pip install itself fails on the NPU host is unconfirmed"),
])

# ---------------------------------------------------------------- RT-1 (lucidrains + training reimplementation)
E("rt1_model", "robotic_transformer_pytorch/robotic_transformer_pytorch.py", "explicit_replacement",
  "lucidrains/robotic-transformer-pytorch robotic_transformer_pytorch.py (MaxViT + TokenLearner + RT1) - no change",
  [])

E("rt1_train", "rt1_pytorch/train.py", "explicit_replacement",
  "community RT-1 PyTorch reimplementations: train.py (mp.spawn DDP, fp16 AMP, NVML monitor)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())', "torch_cuda_api", "replace",
      True, 'parser.add_argument("--gpus", type=int, default=torch.npu.device_count())',
      "default 0 on an NPU host -> the world_size assert fails"),
    C('dist.init_process_group("nccl", rank=rank', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size, timeout=timedelta(minutes=30))',
      "NCCL backend unavailable on Ascend"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C('device = torch.device(f"cuda:{rank}")', "device_type", "replace", True, 'device = torch.device(f"npu:{rank}")',
      "per-rank device"),
    C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",', PIN_NOTE),
    C('state = torch.load(args.resume, map_location=f"cuda:{rank}")', "tensor_to_device", "replace", True,
      'state = torch.load(args.resume, map_location=f"npu:{rank}")', "map_location to a CUDA device fails"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "CUDA GradScaler disables itself without CUDA: --fp16 (used by the launcher) would train without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):", "CUDA autocast does not cover NPU ops"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA (and an npu device argument is rejected by torch.cuda)"),
])

E("rt1_gpumon", "rt1_pytorch/utils/gpu_monitor.py", "explicit_replacement",
  "community RT-1 PyTorch reimplementations: utils/gpu_monitor.py (pynvml utilisation/memory logger)", [
    C("=import pynvml", "torch_cuda_api", "replace", False, "import torch",
      "import succeeds if nvidia-ml-py is installed; NVML calls below are what fail"),
    C("=pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "no NVML library on an Ascend host (NVMLError_LibraryNotFound)"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", False,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "the physical-index mapping is dead once torch.npu queries take the logical index; renamed for consistency"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(physical_index)", "torch_cuda_api", "replace", True,
      'self.device = torch.device("npu", local_rank)', "NVML handle -> logical NPU device"),
    C("self.name = pynvml.nvmlDeviceGetName(self.handle)", "torch_cuda_api", "replace", True,
      "self.name = torch.npu.get_device_name(self.device)", "NVML call"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)", "torch_cuda_api", "replace", True,
      "util = torch.npu.utilization(self.device)", "torch.npu.utilization replaces NVML utilisation"),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(self.device)", "torch.npu.mem_get_info replaces NVML memory info"),
    C('"util": util.gpu,', "torch_cuda_api", "replace", True, '"util": util,', "follows the utilisation API change"),
    C('"mem_used_gb": mem.used / 1024**3,', "torch_cuda_api", "replace", True,
      '"mem_used_gb": (total - free) / 1024**3,', "follows the memory API change"),
    C('"mem_total_gb": mem.total / 1024**3,', "torch_cuda_api", "replace", True, '"mem_total_gb": total / 1024**3,',
      "follows the memory API change"),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None,
      "NVML was never initialised -> NVMLError"),
    C('["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],', "torch_cuda_api",
      "replace", False, '["npu-smi", "info"],',
      "bookkeeping only: a missing nvidia-smi is caught and reported as 'unknown'"),
])

E("rt1_launch", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "community RT-1 PyTorch reimplementations: scripts/train_multi_gpu.sh (single/multi-node launcher)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be on the environment before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection is silently ignored on Ascend; ASCEND_RT_VISIBLE_DEVICES is the runtime equivalent"),
    C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      "NUM_GPUS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | tr ',' '\\n' | wc -l)",
      "process count derived from the visible-device list"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-bond0}",
      "multi-node NIC pinning; HCCL ignores NCCL_*; without it HCCL picks a NIC by its own priority, which may or "
      "may not be bond0"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info | tee "${OUT_DIR}/npus.txt"',
      "nvidia-smi is absent; under set -euo pipefail the launcher exits here"),
])

E("rt1_docker", "docker/Dockerfile", "explicit_replacement",
  "community RT-1 PyTorch reimplementations: docker/Dockerfile (CUDA 11.8 training image)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must carry CANN instead of CUDA; exact community image tag is unconfirmed"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "cu118 wheels -> torch 2.1.0 (PyPI on aarch64, CPU index on x86) plus the matching torch-npu"),
    C("RUN pip install nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "NVML bindings are unused after the gpu_monitor port; installing them is harmless"),
    C("ENV CUDA_VISIBLE_DEVICES=all", "env_var", "removal", False, None, "inert on Ascend"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime variable; device mounting on Ascend is done by the Ascend Docker Runtime "
      "(ASCEND_VISIBLE_DEVICES), usually passed at `docker run`; whether it reads an image ENV is unconfirmed"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "inert on Ascend"),
])

E("rt1_tokenizer", "rt1_pytorch/tokenizers/action_tokenizer.py", "explicit_replacement",
  "community RT-1 PyTorch reimplementations: tokenizers/action_tokenizer.py (256-bin action tokenizer) - no change",
  [])
