"""Labels for probe388 (fMRI brain decoding / brain-to-image reconstruction, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
required=True: with every other labelled line already ported, leaving this line unchanged would
fail, compute something wrong, or silently do the wrong thing on an NPU host.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu.* call / 'npu' device string "
               "(the pinned torch is < 2.5.1, so there is no device-backend autoload)")
CANN_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------- MindEye (v1)
E("me1_train", "src/Train_MindEye.py", "explicit_replacement",
  "MedARC-AI/fMRI-reconstruction-NSD src/Train_MindEye.py (accelerate training of voxel2clip + diffusion prior)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_devices = torch.npu.device_count()",
      "returns 0 on an NPU host -> forced to 1; num_workers and the OneCycle total_steps (num_train*num_devices//batch_size) silently wrong on multi-NPU runs"),
    C("torch.cuda.empty_cache() # free up memory", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() # free up memory held by the loaded ckpt",
      "no-op on an NPU host (CUDA never initialised); only frees cached memory"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast warns and disables itself without CUDA: training step (incl. CLIP target embedding) silently runs in fp32"),
    C("with torch.no_grad(), torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast():",
      "validation forward silently loses fp16 autocast (different numerics/memory than training)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "per-epoch cache release; memory-only, no-op if left"),
])

E("me1_utils", "src/utils.py", "explicit_replacement",
  "MedARC-AI/fMRI-reconstruction-NSD src/utils.py (seeding, losses, webdataset loaders, VD reconstruction)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device used by reconstruction() (Generator, latents, scheduler timesteps): would silently fall back to CPU and then mix devices with the NPU-resident unet"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant: torch.manual_seed() already seeds the privateuse1 (npu) generators in torch >= 2.1"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed (see above)"),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "num_devices = torch.npu.device_count()",
      "fallback only used when the caller passes num_devices=None; Train_MindEye always passes it"),
])

E("me1_models", "src/models.py", "explicit_replacement",
  "MedARC-AI/fMRI-reconstruction-NSD src/models.py (Clipper, BrainNetwork, BrainDiffusionPrior)", [])

E("me1_slurm", "src/accel.slurm", "explicit_replacement",
  "MedARC-AI/fMRI-reconstruction-NSD src/accel.slurm (8-GPU accelerate launch on the Stability cluster)", [
    C("module load cuda/11.7", "env_var", "replace", True, CANN_ENV,
      "CANN toolkit env (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced for torch_npu to load on the compute node"),
    C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info",
      "diagnostic print only; nvidia-smi is simply absent on an Ascend node"),
])

E("me1_final_eval", "src/Reconstruction_Metrics.py", "explicit_replacement",
  "MedARC-AI/fMRI-reconstruction-NSD src/Reconstruction_Metrics.py (PixCorr/SSIM/AlexNet/Inception/CLIP metrics)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "would silently run all feature extractors (AlexNet, Inception, CLIP ViT-L/14) on CPU"),
])

# ----------------------------------------------------------------------------- MindEye2
E("me2_train", "src/Train.py", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/Train.py (multi-subject ridge + MLP-mixer backbone, OpenCLIP bigG targets)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=num_devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_devices = torch.npu.device_count()",
      "0 -> 1 on an NPU host: per-process batch_size = GLOBAL_BATCH_SIZE // num_devices silently becomes the global batch"),
    C("re-count now that accelerate", "torch_cuda_api", "replace", True,
      "num_devices = torch.npu.device_count() # re-count now that accelerate has set up the process group",
      "drives num_samples_per_epoch and num_workers; silently wrong epoch length on multi-NPU"),
    C("ckpt = torch.load(f'{cache_dir}/sd_image_var_autoenc.pth')", "device_type", "replace", True,
      "ckpt = torch.load(f'{cache_dir}/sd_image_var_autoenc.pth', map_location='cpu')",
      "state dict holds CUDA storages (see comment above it); deserialising without map_location raises when CUDA is unavailable"),
    C("torch.cuda.empty_cache() # clear anything", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache() # clear anything left over from model construction", "memory-only"),
    C("mixco on the cpu-side batches", "amp", "replace", False,
      "with torch.npu.amp.autocast(dtype=data_type): # mixco on the cpu-side batches",
      "wraps only CPU tensor ops (mixco on pre-loaded batches); autocast of either device type has no effect there"),
    C("=with torch.cuda.amp.autocast(dtype=data_type):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=data_type):",
      "main train step: CUDA autocast disables itself -> fp32 OpenCLIP bigG + prior, silently different precision/memory"),
    C('"train/max_mem_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", "replace", False,
      '"train/max_mem_gb": torch.npu.max_memory_allocated() / 1e9,', "logged metric only (would log 0)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "memory-only"),
])

E("me2_models", "src/models.py", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/models.py (RidgeRegression, BrainNetwork, prior with lucidrains Attend)", [])

E("me2_utils", "src/utils.py", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/utils.py (losses, mixco, unclip_recon)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unclip_recon() builds its starting noise and conditioning on this device; CPU tensors fed to the NPU diffusion engine"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant with torch.manual_seed"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant with torch.manual_seed"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(dtype=torch.float16), diffusion_engine.ema_scope():", "amp",
      "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(dtype=torch.float16), diffusion_engine.ema_scope():",
      "SDXL unCLIP sampling silently in fp32 (2x memory, different outputs)"),
])

E("me2_recon", "src/recon_inference.py", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/recon_inference.py (test-set unCLIP reconstructions)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("with torch.no_grad(), torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.no_grad(), torch.npu.amp.autocast(dtype=torch.float16):",
      "prior sampling / backbone silently in fp32"),
    C("torch.cuda.max_memory_reserved()", "torch_cuda_api", "replace", False,
      'print("peak GPU memory (GB):", torch.npu.max_memory_reserved() / 1e9)', "log line only"),
])

E("me2_slurm", "src/multinode.slurm", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/multinode.slurm (2-node accelerate launch with NCCL/EFA settings)", [
    C("export NCCL_SOCKET_IFNAME=ens", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ens",
      "HCCL's host-NIC selector (same prefix syntax); needed only if the default NIC choice cannot reach the root; NIC name is site-specific (unconfirmed)"),
    C("=conda activate fmri", "env_var", "npu_only_addition", True, CANN_ENV,
      "CANN env must be sourced on every node before accelerate starts torch_npu"),
])

E("me2_setup", "src/setup.sh", "explicit_replacement",
  "MedARC-AI/MindEyeV2 src/setup.sh (venv + pip install list)", [
    C("torch==2.1.0 torchvision==0.16.0 \\", "import_torch_npu", "replace", True,
      "torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
      "torch_npu wheel must match torch 2.1.0 (2.1.0.post10 pairs with CANN 8.0.0); on x86 the CPU torch wheel should be used"),
    C("xformers==0.0.22.post7 \\", "attention_kernel", "removal", True, None,
      "no NPU build of xformers (pinned CUDA wheel / source build fails); SDPA is used instead"),
])

# ----------------------------------------------------------------------------- Brain-Diffuser
E("bd_vdvae_feat", "scripts/vdvae_extract_features.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser scripts/vdvae_extract_features.py (VDVAE latents of NSD stimuli)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; the .npu() calls live in vdvae/model_utils.py"),
])

E("bd_model_utils", "vdvae/model_utils.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser vdvae/model_utils.py (set_up_data / load_vaes without MPI)", [
    C("shift = torch.tensor([shift]).cuda()", "tensor_to_device", "replace", True,
      "shift = torch.tensor([shift]).npu().view(1, 1, 1, 1)", "normalisation constant must live on the input's device"),
    C("scale = torch.tensor([scale]).cuda()", "tensor_to_device", "replace", True,
      "scale = torch.tensor([scale]).npu().view(1, 1, 1, 1)", "see shift"),
    C("shift_loss = torch.tensor([shift_loss]).cuda()", "tensor_to_device", "replace", True,
      "shift_loss = torch.tensor([shift_loss]).npu().view(1, 1, 1, 1)", "see shift"),
    C("scale_loss = torch.tensor([scale_loss]).cuda()", "tensor_to_device", "replace", True,
      "scale_loss = torch.tensor([scale_loss]).npu().view(1, 1, 1, 1)", "see shift"),
    C("inp = x.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
      "inp = x.npu(non_blocking=True).float()", "every image batch is moved here"),
    C("ema_vae = ema_vae.cuda(H.local_rank)", "tensor_to_device", "replace", True,
      "ema_vae = ema_vae.npu(H.local_rank)", "model placement"),
])

E("bd_train_helpers", "vdvae/train_helpers.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser vdvae/train_helpers.py (vendored openai/vdvae)", [
    C("from apex.optimizers import FusedAdam as AdamW", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW as AdamW",
      "imported at module load (also by the feature-extraction script via restore_params); Ascend apex has no FusedAdam CUDA kernel; FusedAdam with weight_decay is AdamW-mode, matching NpuFusedAdamW"),
    C("torch.cuda.set_device(H.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(H.local_rank)",
      "MPI-launched training: pin each rank to its NPU"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method=f\"env://\")", "NCCL is unavailable on Ascend"),
    C("torch.cuda.manual_seed(H.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(H.seed)",
      "redundant with torch.manual_seed"),
    C("=vae = vae.cuda(H.local_rank)", "tensor_to_device", "replace", True, "vae = vae.npu(H.local_rank)",
      "model placement before DDP"),
    C("ema_vae = ema_vae.cuda(H.local_rank)", "tensor_to_device", "replace", True,
      "ema_vae = ema_vae.npu(H.local_rank)", "model placement"),
])

E("bd_vd_recon", "scripts/versatilediffusion_reconstruct_images.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser scripts/versatilediffusion_reconstruct_images.py (two-device VD img2img)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("net.clip.cuda(0)", "tensor_to_device", "replace", True, "net.clip.npu(0)", "CLIP encoders on device 0"),
    C("net.autokl.cuda(0)", "tensor_to_device", "replace", True, "net.autokl.npu(0)", "VAE on device 0"),
    C("pred_text = torch.tensor(pred_text).half().cuda(1)", "tensor_to_device", "replace", True,
      "pred_text = torch.tensor(pred_text).half().npu(1)", "conditioning for the UNet on device 1"),
    C("pred_vision = torch.tensor(pred_vision).half().cuda(1)", "tensor_to_device", "replace", True,
      "pred_vision = torch.tensor(pred_vision).half().npu(1)", "conditioning for the UNet on device 1"),
    C("zin = zin.unsqueeze(0).cuda(0).half()", "tensor_to_device", "replace", True,
      "zin = zin.unsqueeze(0).npu(0).half()", "VDVAE init image to the VAE device"),
    C("device = 'cuda:0'", "device_type", "replace", True, "device = 'npu:0'",
      "device string for the t_enc tensor passed to stochastic_encode"),
    C("utx = utx.cuda(1).half()", "tensor_to_device", "replace", True, "utx = utx.npu(1).half()", "unconditional text ctx"),
    C("torch.zeros((1,3,224,224)).cuda(0)", "tensor_to_device", "replace", True,
      "dummy = torch.zeros((1,3,224,224)).npu(0)", "dummy image for the unconditional vision ctx"),
    C("uim = uim.cuda(1).half()", "tensor_to_device", "replace", True, "uim = uim.npu(1).half()", "unconditional vision ctx"),
    C("=z_enc = z_enc.cuda(1)", "tensor_to_device", "replace", True, "z_enc = z_enc.npu(1)", "latent to the UNet device"),
    C("diffusion_model.device='cuda:1'", "device_type", "replace", True,
      "sampler.model.model.diffusion_model.device='npu:1'",
      "VD's UNet reads this attribute to allocate its own tensors"),
    C("diffusion_model.half().cuda(1)", "tensor_to_device", "replace", True,
      "sampler.model.model.diffusion_model.half().npu(1)", "UNet placement"),
    C("z = z.cuda(0).half()", "tensor_to_device", "replace", True, "z = z.npu(0).half()", "back to the VAE device for decode"),
])

E("bd_regression", "scripts/clipvision_regression.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser scripts/clipvision_regression.py (scikit-learn ridge, CPU only)", [])

E("bd_eval_feat", "scripts/eval_extract_features.py", "explicit_replacement",
  "ozcelikfu/brain-diffuser scripts/eval_extract_features.py (Inception/CLIP/AlexNet/EffNet/SwAV eval features)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device='cuda:{}'.format(device)", "device_type", "replace", True,
      "model, _ = clip.load(\"ViT-L/14\", device='npu:{}'.format(device))", "CLIP loaded onto device index 1"),
    C("net.cuda(device)", "tensor_to_device", "replace", True, "net.npu(device)", "feature network placement"),
    C("x = x.cuda(device)", "tensor_to_device", "replace", True, "x = x.npu(device)", "batch placement"),
])

E("bd_env", "environment.yml", "explicit_replacement",
  "ozcelikfu/brain-diffuser environment.yml (conda env)", [
    C("- cudatoolkit=11.3", "env_var", "removal", True, None,
      "no cudatoolkit for aarch64 Ascend hosts; pulls the CUDA build of pytorch otherwise"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==1.11.0.post14",
      "torch_npu matching the pinned pytorch 1.11.0 (1.11.0.post14 <-> CANN 8.0.RC2)"),
])

# ----------------------------------------------------------------------------- MinD-Vis
E("mv_stageA1", "code/stageA1_mbm_pretrain.py", "explicit_replacement",
  "zjc062/mind-vis code/stageA1_mbm_pretrain.py (SC-MBM masked fMRI pretraining, DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1:",
      "0 on an NPU host: torchrun ranks would never init the process group and train independent models"),
    C("torch.cuda.set_device(config.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.local_rank)", "per-rank device"),
    C("init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend"),
    C("device = torch.device(f'cuda:{config.local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{config.local_rank}') if torch.npu.is_available() else torch.device('cpu')",
      "silently CPU otherwise"),
    C("sampler = torch.utils.data.DistributedSampler", "torch_cuda_api", "replace", True,
      "sampler = torch.utils.data.DistributedSampler(dataset_pretrain, rank=config.local_rank) if torch.npu.device_count() > 1 else None",
      "without it every DDP rank iterates the full dataset (silently wrong effective epoch)"),
    C("sampler.set_epoch(ep)", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1: sampler.set_epoch(ep) # to shuffle the data at every epoch",
      "DistributedSampler would replay the epoch-0 permutation every epoch"),
])

E("mv_trainer", "code/sc_mbm/trainer.py", "explicit_replacement",
  "zjc062/mind-vis code/sc_mbm/trainer.py (MAE-style NativeScaler + train_one_epoch)", [
    C("from torch._six import inf", "unsupported_op_workaround", "replace", True, "from torch import inf",
      "the port moves the env from torch 1.12 (no torch_npu build) to 2.1, where torch._six no longer exists"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: fp16 autocast gradients would go unscaled (underflow)"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):", "mixed precision silently off otherwise"),
])

E("mv_stageB", "code/stageB_ldm_finetune.py", "explicit_replacement",
  "zjc062/mind-vis code/stageB_ldm_finetune.py (double-conditioned LDM finetuning with pytorch-lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("n_way=50, num_trials=50, top_k=1, device='cuda')", "device_type", "replace", True,
      "n_way=50, num_trials=50, top_k=1, device='npu')",
      "ViT-H/14 classifier for the 50-way top-1 metric is moved to this device"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "PLMS sampling device; silently CPU otherwise"),
    C("acc = 'gpu' if torch.cuda.is_available() else 'cpu'", "distributed_framework", "replace", True,
      "acc = 'npu' if torch.npu.is_available() else 'cpu'",
      "Lightning would silently finetune on CPU; needs a Lightning version/plugin that registers an 'npu' accelerator (not confirmed in the knowledge base)"),
])

E("mv_ldm", "code/dc_ldm/ldm_for_fmri.py", "explicit_replacement",
  "zjc062/mind-vis code/dc_ldm/ldm_for_fmri.py (fLDM wrapper: finetune/generate)", [
    C("'state': torch.cuda.get_rng_state()", "torch_cuda_api", "replace", True, "'state': torch.npu.get_rng_state()",
      "initialises CUDA -> raises on an NPU host"),
    C("torch.cuda.set_rng_state(state)", "torch_cuda_api", "replace", True, "torch.npu.set_rng_state(state)",
      "CUDA set_rng_state is queued lazily and never applied: generation silently not reproducible"),
])

E("mv_plms", "code/dc_ldm/models/diffusion/plms.py", "explicit_replacement",
  "zjc062/mind-vis code/dc_ldm/models/diffusion/plms.py (CompVis PLMS sampler)", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", True,
      'if attr.device != torch.device("npu"):', "schedule buffers device check"),
    C('attr = attr.to(torch.device("cuda"))', "device_type", "replace", True,
      'attr = attr.to(torch.device("npu"))', "would try to move every schedule buffer to CUDA"),
])

E("mv_eval_metrics", "code/eval_metrics.py", "explicit_replacement",
  "zjc062/mind-vis code/eval_metrics.py (pair-wise / n-way metrics; device passed by caller)", [])

E("mv_env", "env.yaml", "explicit_replacement", "zjc062/mind-vis env.yaml (conda env)", [
    C("- cudatoolkit=11.3", "env_var", "removal", True, None, "no CUDA toolkit on the Ascend host"),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "there is no torch_npu release for torch 1.12; 2.1.0 is the nearest supported line"),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must match torch 2.1.0"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10", "torch_npu for torch 2.1.0"),
])

# ----------------------------------------------------------------------------- Brain-JEPA
E("bj_main", "main.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA main.py (I-JEPA style local launcher, one process per device)", [
    C("default=['cuda:0']", "device_type", "replace", False, "'--devices', type=str, nargs='+', default=['npu:0'],",
      "only the index after ':' is used (to build the visible-devices mask); the 'cuda' prefix is inert"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(devices[rank]", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(devices[rank].split(':')[-1])",
      "train.py hard-codes device 0 and relies on this mask; unported, every rank lands on NPU 0"),
])

E("bj_train", "src/train.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA src/train.py (JEPA pretraining loop)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = os.environ['SLURM_LOCALID']", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = os.environ['SLURM_LOCALID']",
      "SLURM launches: same one-device-per-process mask as main.py"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first torch import of the training process (main.py imports this module); torch.npu.* is used below"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "otherwise training silently runs on CPU"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')", "device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)", "set current device"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16, enabled=use_bfloat16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16, enabled=use_bfloat16):", "bf16 autocast silently off otherwise"),
    C("torch.cuda.max_memory_allocated() / 1024.**2,", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024.**2,", "log value only"),
])

E("bj_helper", "src/helper.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA src/helper.py (checkpoint/model/optimizer init)", [
    C("scaler = torch.cuda.amp.GradScaler() if use_bfloat16 else None", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler() if use_bfloat16 else None",
      "scaler is only built for bf16, which needs no loss scaling; the CUDA scaler disables itself (warning) and passes loss/step through unchanged"),
])

E("bj_distributed", "src/utils/distributed.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA src/utils/distributed.py (I-JEPA init_distributed / AllGather / AllReduce)", [
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',",
      "the exception is swallowed: with 'nccl' the job silently falls back to world_size=1 per process"),
])

E("bj_logging", "src/utils/logging.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA src/utils/logging.py (gpu_timer, CSVLogger, grad_logger)", [
    C("log_timings = log_timings and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "log_timings = log_timings and torch.npu.is_available()",
      "unported: timing is skipped and -1 ms is logged; log-only"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "reached once the guard is ported; CUDA events fail"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("bj_misc", "downstream_tasks/util/misc.py", "explicit_replacement",
  "Eric-LRL/Brain-JEPA downstream_tasks/util/misc.py (MAE/DeiT misc: MetricLogger, init_distributed_mode, NativeScaler)", [
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "metric sync tensor for the HCCL all_reduce (fp64 all_reduce support on HCCL not confirmed; kept as upstream)"),
    C("report peak device memory", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # report peak device memory in the log line",
      "only adds the 'max mem' field to the format string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "coupled with the guard above: once that adds '{memory}' to log_msg, this branch must also be taken or format() raises KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "log value only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError under SLURM on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", "per-rank device"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", "NCCL unavailable"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "self._scaler = torch.npu.amp.GradScaler()",
      "fine-tuning uses fp16 autocast; CUDA scaler would silently stop scaling"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
      "tensor for the HCCL all_reduce"),
])

# ----------------------------------------------------------------------------- BrainLM
E("bl_train", "train.py", "explicit_replacement",
  "vandijklab/BrainLM train.py (HF Trainer ViT-MAE pretraining)", [])

E("bl_launch", "scripts/train_brainlm_ukb.sh", "explicit_replacement",
  "vandijklab/BrainLM scripts/train_brainlm_*.sh (torchrun launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, CANN_ENV, "CANN env before torchrun"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "masks the first 4 devices, which torchrun's local ranks 0-3 would use anyway"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround; inert under HCCL"),
])
