# Labels for probe381 (co-speech gesture and music-to-dance generation, CUDA -> Ascend NPU).
# One entry per file under files/<id>/upstream/<path>; see README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


STRIP = "{k.replace('module.', '', 1): v for k, v in %s.items()}"

# ---------------------------------------------------------------- EDGE (Stanford, music-to-dance diffusion)
E("edge_core", "EDGE.py", "device_branch_or_abstraction",
  "Stanford-TML/EDGE EDGE.py (accelerate-driven trainer / sampler wrapper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Explicit port adds the import; not required because accelerate (>=0.22) imports torch_npu itself when it "
      "probes is_npu_available() inside Accelerator(), and every device in this file comes from accelerator.device."),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
      "Performance only: without an explicit pin_memory_device the loader pins for CUDA (or silently skips pinning) "
      "on an NPU host; data still reaches the NPU through accelerate."),
])
E("edge_diffusion", "model/diffusion.py", "device_branch_or_abstraction",
  "Stanford-TML/EDGE model/diffusion.py (GaussianDiffusion, DDIM/long sampling, FK losses)", [])
E("edge_train", "train.py", "device_branch_or_abstraction", "Stanford-TML/EDGE train.py", [])
E("edge_test", "test.py", "device_branch_or_abstraction", "Stanford-TML/EDGE test.py (slice music, Jukebox features, render)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Called once after generation; on a host without CUDA torch.cuda.empty_cache() is a no-op, so leaving it "
      "only loses the cache release."),
])
E("edge_juke", "data/audio_extraction/jukebox_features.py", "device_branch_or_abstraction",
  "Stanford-TML/EDGE data/audio_extraction/jukebox_features.py (jukemirlib wrapper)", [])
E("edge_vis", "vis.py", "device_branch_or_abstraction", "Stanford-TML/EDGE vis.py (SMPLSkeleton FK + matplotlib render)", [])
E("edge_args", "args.py", "device_branch_or_abstraction", "Stanford-TML/EDGE args.py", [])

# ---------------------------------------------------------------- Bailando (music-to-dance, VQ-VAE + actor-critic GPT)
E("bailando_main", "main_ac.py", "explicit_replacement", "lisiyao21/Bailando main_ac.py", [])
E("bailando_ac", "actor_critic.py", "explicit_replacement",
  "lisiyao21/Bailando actor_critic.py (AC fine-tuning of the choreographic GPT)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "First torch import on the main_ac.py path (main_ac.py itself never imports torch); needed for .npu() and "
      "torch.npu.* below."),
    C("checkpoint = torch.load(config.vqvae_weight)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(config.vqvae_weight, map_location='cpu')",
      "The released VQ-VAE weights were saved from CUDA tensors; without map_location torch.load fails on a host "
      "where torch.cuda.is_available() is False."),
    C("vqvae.load_state_dict(checkpoint['model'], strict=False)", "distributed_framework", "replace", True,
      "vqvae.load_state_dict(" + STRIP % "checkpoint['model']" + ", strict=False)",
      "Consequence of dropping nn.DataParallel: saved keys carry a 'module.' prefix, and strict=False would silently "
      "load nothing, leaving a random VQ-VAE."),
    C("gpt_ckpt = torch.load(config.init_weight)", "tensor_to_device", "replace", True,
      "gpt_ckpt = torch.load(config.init_weight, map_location='cpu')",
      "Pretrained GPT checkpoint was saved from CUDA tensors."),
    C("gpt.load_state_dict(gpt_ckpt['model'], strict=False)", "distributed_framework", "replace", True,
      "gpt.load_state_dict(" + STRIP % "gpt_ckpt['model']" + ", strict=False)",
      "Same 'module.' prefix problem; strict=False would silently skip every key."),
    C("torch.cuda.manual_seed(config.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(config.seed)",
      "torch.manual_seed on the previous line already seeds all devices; the CUDA call is a lazy no-op here."),
    C("self.device = torch.device('cuda' if config.cuda else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if config.cuda else 'cpu')",
      "config.cuda is True in every shipped YAML; a 'cuda' device fails on first .to()."),
    C("quants_pred = gpt.module.sample(", "distributed_framework", "replace", True,
      "quants_pred = gpt.sample(music_seq, shift=config.sample_shift if hasattr(config, 'sample_shift') else None)",
      "After removing nn.DataParallel there is no .module attribute."),
    C("pose_sample = vqvae.module.decode(quants_pred)", "distributed_framework", "replace", True,
      "pose_sample = vqvae.decode(quants_pred)", "No .module once DataParallel is removed."),
    C("self.device = torch.device(\"cuda\" if config.cuda else \"cpu\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\" if config.cuda else \"cpu\")", "eval() device."),
    C("test_ckpt = torch.load(ckpt_path)", "tensor_to_device", "replace", True,
      "test_ckpt = torch.load(ckpt_path, map_location='cpu')",
      "Evaluating the released (CUDA-saved) checkpoints fails without map_location."),
    C("gpt.load_state_dict(test_ckpt['model'])", "distributed_framework", "replace", True,
      "gpt.load_state_dict(" + STRIP % "test_ckpt['model']" + ")",
      "Strict load of a DataParallel-era checkpoint into the unwrapped model raises on the 'module.' keys."),
    C("quants = vqvae.module.encode(pose_seq)", "distributed_framework", "replace", True,
      "quants = vqvae.encode(pose_seq)", "No .module once DataParallel is removed."),
    C("zs = gpt.module.sample(x, cond=music_seq", "distributed_framework", "replace", True,
      "zs = gpt.sample(x, cond=music_seq, shift=config.sample_shift if hasattr(config, 'sample_shift') else None)",
      "No .module once DataParallel is removed."),
    C("pose_sample = vqvae.module.decode(zs)", "distributed_framework", "replace", True,
      "pose_sample = vqvae.decode(zs)", "No .module once DataParallel is removed."),
    C("checkpoint = torch.load(ckpt_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(ckpt_path, map_location='cpu')", "analyze_code() loads a CUDA-saved checkpoint."),
    C("self.model.load_state_dict(checkpoint['model'])", "distributed_framework", "replace", True,
      "self.model.load_state_dict(" + STRIP % "checkpoint['model']" + ")", "Strict load with 'module.' keys."),
    C("self.device = torch.device('cuda') if config.cuda else torch.device('cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu') if config.cuda else torch.device('cpu')", "analyze_code() device."),
    C("quants = model.module.encode(pose_seq_eval)", "distributed_framework", "replace", True,
      "quants = model.encode(pose_seq_eval)[0].cpu().data.numpy()", "No .module once DataParallel is removed."),
    C("=model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (torch_api_npu_support ✘; its scatter uses torch.cuda.comm, "
      "also ✘). Removed; the module is used on one NPU."),
    C("=model2 = nn.DataParallel(model2)", "distributed_framework", "removal", True, None,
      "Same as above for the GPT."),
    C("self.model2 = model2.cuda()", "tensor_to_device", "replace", True, "self.model2 = model2.npu()",
      ".cuda() fails without CUDA."),
    C("self.model = model.cuda()", "tensor_to_device", "replace", True, "self.model = model.npu()",
      ".cuda() fails without CUDA."),
    C("itertools.chain(self.model2.module.parameters()", "distributed_framework", "replace", True,
      "self.optimizer = optim(itertools.chain(self.model2.parameters(),",
      "No .module once DataParallel is removed; this runs in _build() so even eval would fail."),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "Performance only."),
])
E("bailando_bottleneck", "models/bottleneck.py", "explicit_replacement",
  "lisiyao21/Bailando models/bottleneck.py (Jukebox-derived EMA codebook)", [
    C("self.register_buffer('k', t.zeros(self.k_bins, self.emb_width).cuda())", "tensor_to_device", "replace", True,
      "self.register_buffer('k', t.zeros(self.k_bins, self.emb_width).npu())",
      "Runs in BottleneckBlock.__init__ (reset_k), i.e. while the VQ-VAE is built; .cuda() fails there."),
    C("zero = t.zeros(()).cuda()", "tensor_to_device", "replace", False, "zero = t.zeros(()).npu()",
      "Only NoBottleneck uses it, and every shipped config sets use_bottleneck: True; a porter still fixes it."),
])
E("bailando_cfg", "configs/actor_critic.yaml", "explicit_replacement", "lisiyao21/Bailando configs/actor_critic.yaml", [])
E("bailando_srun", "srun_ac.sh", "explicit_replacement", "lisiyao21/Bailando srun_ac.sh (Slurm launcher)", [
    C("--gres=gpu:$gpunum", "device_type", "replace", False,
      "TOOLS=\"srun --partition=$partition_name --cpus-per-task=16 --mpi=pmi2 --gres=npu:$gpunum -n1 --ntasks-per-node=1\"",
      "Unconfirmed: the generic resource name for NPUs is site-defined in Slurm's gres.conf (often 'npu'); not in "
      "/work/shared/knowledge."),
    C("PYTHONCMD=\"python -u main_ac.py --config $1\"", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths) must be loaded before torch_npu can import; the job inherits it from the "
      "submitting shell."),
])

# ---------------------------------------------------------------- EMAGE / BEAT (PantoMatrix, co-speech gesture)
E("emage_train", "train.py", "explicit_replacement", "PantoMatrix/PantoMatrix train.py (BaseTrainer + mp.spawn DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry point; torch.npu.set_device and the hccl backend need torch_npu loaded."),
    C("args.g_name)(args).to(self.rank)", "tensor_to_device", "replace", True,
      "self.model = getattr(model_module, args.g_name)(args).to(f'npu:{self.rank}')",
      "Module.to(<int>) means cuda:<int>; shipped config has ddp: True so this branch runs."),
    C("self.model = torch.nn.DataParallel(getattr(model_module, args.g_name)(args), args.gpus).cuda()",
      "distributed_framework", "replace", False, "self.model = getattr(model_module, args.g_name)(args).npu()",
      "DataParallel is unsupported on Ascend, but this is the ddp: False branch and the shipped config uses DDP."),
    C("args.d_name)(args).to(self.rank)", "tensor_to_device", "replace", False,
      "self.d_model = getattr(model_module, args.d_name)(args).to(f'npu:{self.rank}')",
      "Discriminator branch; d_name is not set by configs/emage.yaml, so it does not run."),
    C("self.d_model = torch.nn.DataParallel(", "distributed_framework", "replace", False,
      "self.d_model = getattr(model_module, args.d_name)(args).npu()", "Dead under the shipped config (no d_name, ddp)."),
    C("=self.eval_model = getattr(eval_model_module, args.e_name)(args).to(self.rank)", "tensor_to_device", "replace",
      True, "self.eval_model = getattr(eval_model_module, args.e_name)(args).to(f'npu:{self.rank}')",
      "e_name is set and ddp is True: runs."),
    C("=self.eval_copy = getattr(eval_model_module, args.e_name)(args).to(self.rank)", "tensor_to_device", "replace",
      True, "self.eval_copy = getattr(eval_model_module, args.e_name)(args).to(f'npu:{self.rank}')",
      "FGD evaluator copy, runs under ddp."),
    C("# single card", "tensor_to_device", "replace", False,
      "self.eval_copy = getattr(eval_model_module, args.e_name)(args).to(f'npu:{self.rank}')  # single card",
      "ddp: False branch only."),
    C(").to(self.rank).eval()", "tensor_to_device", "replace", True, ").to(f'npu:{self.rank}').eval()",
      "SMPL-X body model used for the test metrics."),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "Raises without CUDA."),
    C("dist.init_process_group(backend=\"nccl\"", "dist_backend", "replace", True,
      "dist.init_process_group(backend=\"hccl\", rank=rank, world_size=world_size)",
      "NCCL is not available on Ascend; HCCL is. Called even for the single-process path."),
])
E("emage_trainer", "emage_trainer.py", "explicit_replacement",
  "PantoMatrix/PantoMatrix emage_trainer.py (CustomTrainer: VQ latents, masked gesture transformer)", [
    C("self.vq_model_face = getattr", "tensor_to_device", "replace", True,
      "self.vq_model_face = getattr(vq_model_module, \"VQVAEConvZero\")(self.args).to(f'npu:{self.rank}')",
      "Module.to(int) targets CUDA."),
    C("self.vq_model_upper = getattr", "tensor_to_device", "replace", True,
      "self.vq_model_upper = getattr(vq_model_module, \"VQVAEConvZero\")(self.args).to(f'npu:{self.rank}')",
      "Module.to(int) targets CUDA."),
    C("self.vq_model_hands = getattr", "tensor_to_device", "replace", True,
      "self.vq_model_hands = getattr(vq_model_module, \"VQVAEConvZero\")(self.args).to(f'npu:{self.rank}')",
      "Module.to(int) targets CUDA."),
    C("self.vq_model_lower = getattr", "tensor_to_device", "replace", True,
      "self.vq_model_lower = getattr(vq_model_module, \"VQVAEConvZero\")(self.args).to(f'npu:{self.rank}')",
      "Module.to(int) targets CUDA."),
    C("self.global_motion = getattr", "tensor_to_device", "replace", True,
      "self.global_motion = getattr(vq_model_module, \"VAEConvZero\")(self.args).to(f'npu:{self.rank}')",
      "Module.to(int) targets CUDA."),
    C("self.cls_loss = nn.NLLLoss().to(self.rank)", "tensor_to_device", "replace", False,
      "self.cls_loss = nn.NLLLoss().to(f'npu:{self.rank}')",
      "Parameter-less module: .to(0) parses the device but moves nothing, so it does not fail. Porter edits for consistency."),
    C("self.reclatent_loss = nn.MSELoss().to(self.rank)", "tensor_to_device", "replace", False,
      "self.reclatent_loss = nn.MSELoss().to(f'npu:{self.rank}')", "Parameter-less module; inert."),
    C("self.vel_loss = torch.nn.L1Loss(reduction='mean').to(self.rank)", "tensor_to_device", "replace", False,
      "self.vel_loss = torch.nn.L1Loss(reduction='mean').to(f'npu:{self.rank}')", "Parameter-less module; inert."),
    C("self.rec_loss = get_loss_func(\"GeodesicLoss\").to(self.rank)", "tensor_to_device", "replace", False,
      "self.rec_loss = get_loss_func(\"GeodesicLoss\").to(f'npu:{self.rank}')",
      "GeodesicLoss holds no tensors (assumed from the project's loss factory); inert."),
    C("self.log_softmax = nn.LogSoftmax(dim=2).to(self.rank)", "tensor_to_device", "replace", False,
      "self.log_softmax = nn.LogSoftmax(dim=2).to(f'npu:{self.rank}')", "Parameter-less module; inert."),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.args.use_amp)",
      "With autocast ported to NPU, a CUDA GradScaler disables itself on a CUDA-less host: fp16 gradients are then "
      "neither scaled nor checked for inf (use_amp: True in the shipped config)."),
    C("tar_pose = tar_pose_raw[:, :, :165].to(self.rank)", "tensor_to_device", "replace", True,
      "tar_pose = tar_pose_raw[:, :, :165].to(f'npu:{self.rank}')",
      "Tensor.to(int) targets CUDA; every other input follows tar_pose.device."),
    C("batch['y'] = torch.zeros(bs).int().to(self.rank)", "tensor_to_device", "replace", False,
      "batch['y'] = torch.zeros(bs).int().to(f'npu:{self.rank}')", "use_motionclip is False in the shipped config."),
    C("batch['mask'] = torch.ones([bs, n]).bool().to(self.rank)", "tensor_to_device", "replace", False,
      "batch['mask'] = torch.ones([bs, n]).bool().to(f'npu:{self.rank}')", "use_motionclip is False in the shipped config."),
    C("mask_val = torch.ones(", "tensor_to_device", "replace", True,
      "mask_val = torch.ones(bs, n, self.args.pose_dims + 3 + 4).float().to(f'npu:{self.rank}')",
      "Tensor.to(int) targets CUDA."),
    C("with torch.cuda.amp.autocast(enabled=self.args.use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.args.use_amp):",
      "CUDA autocast does not apply to NPU tensors: training would silently run in fp32 (use_amp: True)."),
    C("mem_cost = torch.cuda.memory_cached() / 1E9", "torch_cuda_api", "replace", False,
      "mem_cost = torch.npu.memory_reserved() / 1E9", "Logging only; returns 0 on a CUDA-less host."),
])
E("emage_tools", "utils/other_tools.py", "explicit_replacement", "PantoMatrix/PantoMatrix utils/other_tools.py", [
    C("logger.info(\"{} GPUs\".format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "logger.info(\"{} NPUs\".format(torch.npu.device_count()))", "Log line only (prints 0)."),
    C("states = torch.load(save_path)", "tensor_to_device", "replace", True,
      "states = torch.load(save_path, map_location='cpu')",
      "Loads the released VQ-VAE / evaluator weights saved from CUDA; fails without map_location. load_state_dict "
      "then copies into the NPU modules."),
    C("torch.cuda.manual_seed_all(args.random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.random_seed)", "torch.manual_seed above already seeds every device."),
    C("torch.cuda.manual_seed(args.random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.random_seed)", "Redundant with torch.manual_seed."),
])
E("emage_cfg", "configs/emage.yaml", "explicit_replacement", "PantoMatrix/PantoMatrix configs/emage.yaml", [])
E("emage_req", "requirements.txt", "explicit_replacement", "PantoMatrix/PantoMatrix requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend installs CPU torch from the cpu index on x86 (plain PyPI on aarch64). Whether a CUDA build next to "
      "torch_npu actually breaks is unconfirmed."),
    C("torch==2.1.0+cu118", "device_type", "replace", True, "torch==2.1.0",
      "There is no +cu118 build of torch 2.1.0 for aarch64 (the usual Atlas host), so installation fails; torch_npu "
      "pairs with plain torch 2.1.0."),
    C("=torchaudio==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (2.1.0.post12 <-> CANN 8.1.RC1 per the compatibility table); needed for "
      "every 'import torch_npu'."),
])

# ---------------------------------------------------------------- DiffuseStyleGesture (co-speech gesture diffusion, MDM-derived)
E("dsg_dist", "main/utils/dist_util.py", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture main/utils/dist_util.py (guided-diffusion/MDM dist helpers)", [
    C("if th.cuda.is_available() and used_device>=0:", "torch_cuda_api", "replace", True,
      "if th.npu.is_available() and used_device>=0:",
      "Otherwise dev() silently returns CPU: the timestep sampler and resume map_location would then land on CPU "
      "while the model is on NPU."),
    C("return th.device(f\"cuda:{used_device}\")", "device_type", "replace", True,
      "return th.device(f\"npu:{used_device}\")", "Device used for sampled timesteps t."),
])
E("dsg_loop", "main/train/training_loop.py", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture main/train/training_loop.py (MDM TrainLoop)", [
    C("self.sync_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.sync_cuda = torch.npu.is_available()", "Dead store kept from guided-diffusion; never read."),
])
E("dsg_sample", "main/mydiffusion_zeggs/sample.py", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture main/mydiffusion_zeggs/sample.py (WavLM features + DDPM sampling to BVH)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry point."),
    C("def wavlm_init(device=torch.device('cuda:2')):", "device_type", "replace", False,
      "def wavlm_init(device=torch.device('npu:2')):",
      "Default never used: main() always passes mydevice. Building a torch.device does not touch CUDA."),
    C("def wav2wavlm(model, wav_input_16khz, device=torch.device('cuda:2')):", "device_type", "replace", True,
      "def wav2wavlm(model, wav_input_16khz, device=torch.device('npu:2')):",
      "inference() calls wav2wavlm without a device, so the 'cuda:2' default is what runs (upstream quirk kept)."),
    C("mydevice = torch.device('cuda:' + config.gpu)", "device_type", "replace", True,
      "mydevice = torch.device('npu:' + config.gpu)", "Module-global device used throughout."),
    C("torch.cuda.set_device(int(config.gpu))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(config.gpu))", "Raises without CUDA."),
])
E("dsg_e2e", "main/mydiffusion_zeggs/end2end.py", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture main/mydiffusion_zeggs/end2end.py (training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "Entry point."),
    C("num_workers=args.loader_workers, pin_memory=True)", "pin_memory", "replace", False,
      "shuffle=True, drop_last=True, num_workers=args.loader_workers, pin_memory=True, pin_memory_device='npu')",
      "Performance only."),
    C("device = torch.device('cuda:' + config.gpu if torch.cuda.is_available() else 'cpu')", "device_type", "replace",
      True, "device = torch.device('npu:' + config.gpu if torch.npu.is_available() else 'cpu')",
      "Unported it silently trains on CPU."),
])
E("dsg_cfg", "main/mydiffusion_zeggs/configs/DiffuseStyleGesture.yml", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture configs/DiffuseStyleGesture.yml", [])
E("dsg_run", "main/mydiffusion_zeggs/run_train.sh", "explicit_replacement",
  "YoungSeng/DiffuseStyleGesture-style single-GPU launch script (README command wrapped in a script)", [
    C("export PYTHONPATH=", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu imports."),
    C("CUDA_VISIBLE_DEVICES=$GPU python end2end.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU python end2end.py --config=$CONFIG --no_cuda 0 --gpu 0 2>&1 | tee train_gpu${GPU}.log",
      "The script relies on masking (--gpu 0 inside); CUDA_VISIBLE_DEVICES does not mask NPUs, so the job would "
      "silently run on physical NPU 0 instead of the requested card."),
])

# ---------------------------------------------------------------- Trimodal context (Yoon et al. 2020, co-speech gesture GAN)
E("trimodal_train", "scripts/train.py", "explicit_replacement",
  "ai4r/Gesture-Generation-from-Trimodal-Context scripts/train.py", [
    C("from torch import optim", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch arrives via a star import; torch_npu must be imported before the module-level device is built."),
    C("device = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu:0\" if torch.npu.is_available() else \"cpu\")",
      "Module-level global used by every .to(device); unported it silently trains on CPU."),
    C("logging.info(\"{} GPUs, default {}\".format(torch.cuda.device_count(), device))", "torch_cuda_api", "replace",
      False, "logging.info(\"{} NPUs, default {}\".format(torch.npu.device_count(), device))", "Log line only."),
    C("shuffle=True, drop_last=True, num_workers=args.loader_workers, pin_memory=True,", "pin_memory", "replace", False,
      "shuffle=True, drop_last=True, num_workers=args.loader_workers, pin_memory=True, pin_memory_device='npu',",
      "Performance only."),
    C("shuffle=False, drop_last=True, num_workers=args.loader_workers, pin_memory=True,", "pin_memory", "replace", False,
      "shuffle=False, drop_last=True, num_workers=args.loader_workers, pin_memory=True, pin_memory_device='npu',",
      "Performance only."),
])
E("trimodal_tutils", "scripts/utils/train_utils.py", "explicit_replacement",
  "ai4r/Gesture-Generation-from-Trimodal-Context scripts/utils/train_utils.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds every device."),
])
E("trimodal_eval", "scripts/model/embedding_space_evaluator.py", "explicit_replacement",
  "ai4r/Gesture-Generation-from-Trimodal-Context scripts/model/embedding_space_evaluator.py (FGD)", [])
E("trimodal_synth", "scripts/synthesize.py", "explicit_replacement",
  "ai4r/Gesture-Generation-from-Trimodal-Context scripts/synthesize.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Not required: utils.train_utils imports train, whose (ported) top already imports torch_npu before this "
      "module's device line runs."),
    C("device = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu:0\" if torch.npu.is_available() else \"cpu\")",
      "This module's own global, passed to load_checkpoint_and_model; unported it silently runs on CPU."),
])
E("trimodal_cfg", "config/multimodal_context.yml", "explicit_replacement",
  "ai4r/Gesture-Generation-from-Trimodal-Context config/multimodal_context.yml", [])
