# Labels for probe230: diffusion-based image restoration / super-resolution (CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

T, F = True, False

# ---------------------------------------------------------------- StableSR
E("stablesr_main", "main.py", "explicit_replacement",
  "StableSR / latent-diffusion main.py (PyTorch Lightning launcher, `--gpus 0,1`, CUDACallback)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "registers the npu device; the project pins a torch older than 2.5 (no backend autoload)"),
    C("torch.cuda.reset_peak_memory_stats(trainer.root_gpu)", "torch_cuda_api", "replace", T,
      "torch.npu.reset_peak_memory_stats(trainer.root_gpu)",
      "CUDA allocator binding is absent from the CPU torch build used with torch_npu -> raises"),
    C("=torch.cuda.synchronize(trainer.root_gpu)", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize(trainer.root_gpu)", "torch.cuda lazy init raises without CUDA"),
    C("torch.cuda.synchronize(trainer.root_gpu)  # wait for the last step", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize(trainer.root_gpu)  # wait for the last step to finish", "same as epoch start"),
    C("max_memory = torch.cuda.max_memory_allocated(trainer.root_gpu)", "torch_cuda_api", "replace", F,
      "max_memory = torch.npu.max_memory_allocated(trainer.root_gpu) / 2 ** 20",
      "uninitialised CUDA returns empty stats -> logs 0 MiB; logging only"),
    C('trainer_config["accelerator"] = "gpu"', "device_type", "replace", T,
      'trainer_config["accelerator"] = NPUAccelerator()  # custom Lightning Accelerator over torch.npu',
      "Lightning's gpu accelerator needs CUDA and refuses to start; Lightning NPU accelerator itself unconfirmed in knowledge"),
    C('trainer_config["strategy"] = "ddp"', "dist_backend", "replace", F,
      'trainer_config["strategy"] = DDPStrategy(process_group_backend="hccl")',
      "Lightning picks nccl only for cuda root devices, otherwise gloo; explicit hccl wanted (unconfirmed)"),
    C('gpuinfo = trainer_config["gpus"]', "device_type", "replace", T,
      'gpuinfo = trainer_config["devices"] = trainer_config.pop("gpus")',
      "Trainer(gpus=...) selects CUDA GPUs; pass the id list as devices= for the NPU accelerator"),
  ])

E("stablesr_tile_sr", "scripts/sr_val_ddpm_text_T_vqganfin_oldcanvas_tile.py", "device_branch_or_abstraction",
  "StableSR tiled inference script (LDM sampling with canvas tiles + CFW VQGAN decoder)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "needed before 'npu' device strings work on the pinned torch (< 2.5, no autoload)"),
    C("=model.cuda()", "tensor_to_device", "replace", T, 'model.to("npu" if torch.npu.is_available() else "cpu")',
      "Module.cuda() raises without CUDA"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type", "add_branch", T,
      'device = torch.device("npu") if torch.npu.is_available() else torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")',
      "torch.cuda.is_available() is False on an NPU host -> silently runs the whole diffusion on CPU"),
    C('with precision_scope("cuda"):', "amp", "replace", T, 'with precision_scope("npu"):',
      "autocast('cuda') is disabled with a warning when CUDA is absent -> silent fp32, doubles memory of large tiles"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; NPU cache not released between images"),
  ])

E("stablesr_attention", "ldm/modules/attention.py", "kernel_rewrite",
  "StableSR / SD2 ldm attention (xformers MemoryEfficientCrossAttention, ATTN_PRECISION fp32 upcast)",
  [
    C("=import xformers", "attention_kernel", "replace", F, "import torch_npu",
      "xformers has no NPU backend; guarded import just falls back to vanilla attention, port swaps in torch_npu FA"),
    C("=import xformers.ops", "attention_kernel", "removal", F, None,
      "goes away with the xformers path"),
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", T,
      "with torch.autocast(enabled=False, device_type='npu'):",
      "disabling CUDA autocast leaves NPU autocast on -> the fp32 upcast of q/k is silently undone (fp16 overflow risk)"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)", "attention_kernel", "replace", F,
      'out = torch_npu.npu_fusion_attention(q.unsqueeze(2), k.unsqueeze(2), v.unsqueeze(2), 1, "BSND", scale=self.dim_head ** -0.5)[0].squeeze(2)',
      "only reached when xformers imports; on NPU the block falls back to einsum attention, so this is a memory/speed rewrite"),
  ])

E("stablesr_ddim", "ldm/models/diffusion/ddim.py", "explicit_replacement",
  "ldm DDIMSampler as vendored by StableSR (SD2-style device default on the sampler)",
  [
    C('def __init__(self, model, schedule="linear", device=torch.device("cuda"), **kwargs):', "device_type", "replace", T,
      'def __init__(self, model, schedule="linear", device=torch.device("npu"), **kwargs):',
      "callers construct DDIMSampler(model) without device; register_buffer then moves every schedule tensor to cuda -> fails"),
  ])

E("stablesr_dm_util", "ldm/modules/diffusionmodules/util.py", "explicit_replacement",
  "ldm diffusionmodules/util.py (gradient-checkpoint CheckpointFunction that re-enters GPU autocast in backward)",
  [
    C('ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled(),', "amp", "replace", T,
      'ctx.gpu_autocast_kwargs = {"enabled": torch.npu.is_autocast_enabled(),',
      "the argument-less query reports CUDA autocast only -> False under NPU autocast, recompute then runs in fp32"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", "replace", T,
      '"dtype": torch.npu.get_autocast_dtype(),',
      "GPU autocast dtype, not the NPU one (bf16 vs fp16 runs recompute in a different dtype)"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", T,
      "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "CUDA autocast is disabled without CUDA -> backward recompute differs from the forward pass"),
  ])

E("stablesr_env", "environment.yaml", "explicit_replacement",
  "StableSR / latent-diffusion conda environment.yaml (pytorch + pytorch-cuda from the pytorch/nvidia channels, xformers)",
  [
    C("- pytorch=1.13.1", "torch_cuda_api", "replace", T, "- pytorch=2.1.0  # CPU build; NPU support comes from torch-npu below",
      "torch_npu wheels exist only for matching torch versions (x.y.z == torch); 1.13 has no torch_npu, and the pytorch/nvidia build is CUDA"),
    C("- torchvision=0.14.1", "torch_cuda_api", "replace", T, "- torchvision=0.16.0",
      "conda torchvision 0.14.1 pins pytorch 1.13.1; must follow the torch bump"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", "removal", F, None,
      "CUDA runtime metapackage, useless on an Ascend host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", T, "- torch-npu==2.1.0.post8",
      "torch_npu pin matching torch 2.1.0 (CANN must match, see compatibility table)"),
    C("- xformers==0.0.16", "attention_kernel", "removal", T, None,
      "xformers has no NPU build; its wheel also pins torch 1.13.1, which breaks the env solve"),
  ])

# ---------------------------------------------------------------- DiffBIR
E("diffbir_inference", "inference.py", "device_branch_or_abstraction",
  "DiffBIR v2.x inference.py (argparse --device with check_device fallbacks for cuda/mps)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "registers the npu device type on the pinned torch 2.2 (autoload only from torch_npu 2.5.1)"),
    C('if device == "cuda":', "device_type", "add_branch", F,
      'if device == "npu" and not torch.npu.is_available(): device = "cpu"',
      "an 'npu' value already passes through the else branch unchanged; the availability check is a nicety"),
    C('parser.add_argument("--device", type=str, default="cuda", choices=["cpu", "cuda", "mps"])', "device_type", "replace", T,
      'parser.add_argument("--device", type=str, default="npu", choices=["cpu", "cuda", "mps", "npu"])',
      "default cuda is downgraded to cpu by check_device on an NPU host (silent CPU run); 'npu' is rejected by choices"),
  ])

E("diffbir_common", "diffbir/utils/common.py", "explicit_replacement",
  "DiffBIR utils/common.py (wavelet color fix, sliding windows, COUNT_VRAM memory-peak helpers)",
  [
    C("=peak_before = torch.cuda.max_memory_allocated() / (1024 ** 3)", "torch_cuda_api", "replace", F,
      "peak_before = torch.npu.max_memory_allocated() / (1024 ** 3)",
      "returns 0 when CUDA was never initialised; debug print only (COUNT_VRAM=1)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "raises without CUDA once COUNT_VRAM=1 enables the wrapper"),
    C("peak_after = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", F,
      "peak_after = torch.npu.max_memory_allocated() / (1024 ** 3)", "reports 0; debug print only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", T, "torch.npu.reset_peak_memory_stats()",
      "resolving the current CUDA device raises on an NPU host (COUNT_VRAM=1 only)"),
    C("torch.cuda.synchronize()  # make sure all kernels", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize()  # make sure all kernels of the block are done", "raises without CUDA (COUNT_VRAM=1 only)"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", F,
      "peak = torch.npu.max_memory_allocated() / (1024 ** 3)", "reports 0; debug print only"),
  ])

E("diffbir_train_stage2", "train_stage2.py", "device_branch_or_abstraction",
  "DiffBIR v2 train_stage2.py (HF accelerate loop for the IRControlNet; device comes from accelerator.device)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "accelerate (>=0.22) imports torch_npu itself when it detects an NPU; needed here only for the fused optimizer below"),
    C("opt = torch.optim.AdamW(cldm.controlnet.parameters(), lr=cfg.train.learning_rate)", "fused_optimizer", "replace", F,
      "opt = torch_npu.optim.NpuFusedAdamW(cldm.controlnet.parameters(), lr=cfg.train.learning_rate)",
      "performance only: tensor-fused AdamW recommended by msFmkTransplt advice"),
  ])

E("diffbir_requirements", "requirements.txt", "explicit_replacement",
  "DiffBIR requirements.txt (cu118 wheel index, +cu118 torch pin, xformers, bitsandbytes for the LLaVA captioner)",
  [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", F,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take CPU torch from the cpu index (aarch64: plain PyPI); keeping cu118 only drags in CUDA wheels (unconfirmed whether torch_npu tolerates them)"),
    C("torch==2.2.2+cu118", "torch_cuda_api", "replace", T, "torch==2.2.0",
      "+cu118 wheels do not exist for aarch64 Ascend hosts, and torch_npu is only published for torch 2.2.0 in the 2.2 line"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", T, "torch-npu==2.2.0.post2",
      "torch_npu wheel matching torch 2.2.0 (CANN 8.0.RC2)"),
    C("xformers==0.0.25.post1", "attention_kernel", "removal", T, None,
      "no NPU build of xformers; the pinned wheel also requires torch 2.2.2"),
    C("=bitsandbytes", "unsupported_op_workaround", "removal", F, None,
      "only for the optional 4/8-bit LLaVA captioner; bnb 8-bit paths are not listed as NPU-supported"),
  ])

# ---------------------------------------------------------------- SUPIR
E("supir_test", "test.py", "explicit_replacement",
  "SUPIR test.py (SDXL-based restoration + LLaVA captioner split over two GPUs, --loading_half_params / --use_tile_vae)",
  [
    C("=import torch.cuda", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "needed for torch.npu / 'npu:N' strings on the pinned torch 2.x < 2.5"),
    C("if torch.cuda.device_count() >= 2:", "torch_cuda_api", "replace", T, "if torch.npu.device_count() >= 2:",
      "device_count() is 0 without CUDA -> script falls through to raise ValueError"),
    C("SUPIR_device = 'cuda:0'  # SUPIR-v0", "device_type", "replace", T,
      "SUPIR_device = 'npu:0'  # SUPIR-v0 + SDXL need ~30 GB in fp16", "cuda device string"),
    C("LLaVA_device = 'cuda:1'", "device_type", "replace", T,
      "LLaVA_device = 'npu:1'  # LLaVA-13B alone needs ~26 GB, keep it on its own card", "cuda device string"),
    C("elif torch.cuda.device_count() == 1:", "torch_cuda_api", "replace", T, "elif torch.npu.device_count() == 1:",
      "same as above"),
    C("=SUPIR_device = 'cuda:0'", "device_type", "replace", T, "SUPIR_device = 'npu:0'", "cuda device string"),
    C("=LLaVA_device = 'cuda:0'", "device_type", "replace", T, "LLaVA_device = 'npu:0'", "cuda device string"),
  ])

E("supir_gradio", "gradio_demo.py", "transfer_to_npu",
  "SUPIR gradio_demo.py (two-device SUPIR + LLaVA web demo); ported by dropping in torch_npu.contrib.transfer_to_npu",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu remaps torch.cuda.device_count/set_device and rewrites the 'cuda:N' strings passed to .to(); "
      "every other CUDA-looking line in this file is left as is"),
  ])

E("supir_yaml", "options/SUPIR_v0.yaml", "explicit_replacement",
  "SUPIR options/SUPIR_v0.yaml (sgm/SDXL config selecting xformers attention for the UNet, ControlNet and VAE)",
  [
    C("=spatial_transformer_attn_type: softmax-xformers", "attention_kernel", "replace", F,
      "spatial_transformer_attn_type: softmax",
      "sgm falls back to 'softmax' (SDPA on torch 2) with a warning when xformers is missing; edit is for clarity"),
    C("spatial_transformer_attn_type: softmax-xformers  # same kernel", "attention_kernel", "replace", F,
      "spatial_transformer_attn_type: softmax  # SDPA; dispatches to the NPU fused attention",
      "same silent fallback as the control branch"),
    C("attn_type: vanilla-xformers", "attention_kernel", "replace", T, "attn_type: vanilla",
      "MemoryEfficientAttnBlock calls xformers.ops directly; once sgm's make_attn xformers assert is patched out this value must change too"),
  ])

E("supir_tilevae", "SUPIR/utils/tilevae.py", "explicit_replacement",
  "SUPIR's copy of the multidiffusion-upscaler Tiled VAE hook (webui `devices` shim, VRAM-based tile sizes, torch_gc between tiles)",
  [
    C("_HAS_CUDA = torch.cuda.is_available()", "torch_cuda_api", "replace", F, "_HAS_CUDA = torch.npu.is_available()",
      "False on NPU: tile-size defaults drop to the CPU values and torch_gc/VRAM stats are skipped -- slower, not wrong "
      "(SUPIR passes explicit tile sizes anyway)"),
    C('device = torch.device("cuda")', "device_type", "replace", F, 'device = torch.device("npu")',
      "only read inside the _HAS_CUDA-gated helpers"),
    C('return torch.device("cuda")', "device_type", "replace", F, 'return torch.device("npu")',
      "only used when VAEHook is created with to_gpu=True (SUPIR uses False)"),
    C("with torch.cuda.device(devices.device):", "torch_cuda_api", "replace", F, "with torch.npu.device(devices.device):",
      "gated by _HAS_CUDA; must move together with the gate"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "cache release between tiles; memory hygiene only"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", F, "torch.npu.ipc_collect()",
      "memory hygiene only"),
    C("total_memory = torch.cuda.get_device_properties(devices.device).total_memory // 2 ** 20", "torch_cuda_api", "replace", F,
      "total_memory = torch.npu.get_device_properties(devices.device).total_memory // 2 ** 20",
      "gated; NPU properties do expose total_memory"),
    C("total_memory = torch.cuda.get_device_properties(devices.device).total_memory // (1024 ** 2)", "torch_cuda_api", "replace", F,
      "total_memory = torch.npu.get_device_properties(devices.device).total_memory // (1024 ** 2)", "gated, as above"),
    C("torch.cuda.reset_peak_memory_stats(devices.device)", "torch_cuda_api", "replace", F,
      "torch.npu.reset_peak_memory_stats(devices.device)", "gated perf counter"),
    C("vram = torch.cuda.max_memory_allocated(devices.device)", "torch_cuda_api", "replace", F,
      "vram = torch.npu.max_memory_allocated(devices.device) / 2 ** 20", "gated perf counter"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", F,
      "torch.npu.reset_peak_memory_stats()", "gated perf counter"),
  ])

E("supir_sgm_attention", "sgm/modules/attention.py", "explicit_replacement",
  "sgm (SDXL generative-models) attention.py as vendored by SUPIR (SDP backend map via torch.backends.cuda.sdp_kernel, xformers fallback)",
  [
    C("with sdp_kernel(**BACKEND_MAP[self.backend]):", "attention_kernel", "replace", F,
      "with nullcontext():  # torch.backends.cuda.sdp_kernel only steers CUDA SDPA backends",
      "sdp_kernel is marked unsupported in Ascend's 2.7.1 API list; with backend=None it only sets CUDA flags, so it is a no-op here; "
      "F.scaled_dot_product_attention itself is supported and dispatches to the NPU fused attention"),
  ])

# ---------------------------------------------------------------- ResShift / SinSR
E("resshift_trainer", "trainer.py", "explicit_replacement",
  "ResShift trainer.py (TrainerBase/TrainerDifIR: torchrun + nccl, GPU-side RealESRGAN degradation, torch.cuda.amp)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "registers the npu device and hccl backend (project pins torch 2.x < 2.5)"),
    C("import torch.cuda.amp as amp", "amp", "replace", T, "import torch_npu.npu.amp as amp",
      "amp.GradScaler() from torch.cuda.amp disables itself without CUDA -> fp16 training without loss scaling"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", T, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host -> no DDP and batch // num_gpus divides by zero"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", T, "torch.npu.set_device(rank % num_gpus)",
      "raises without CUDA"),
    C("backend='nccl',", "dist_backend", "replace", T, "backend='hccl',", "NCCL is not available on Ascend; HCCL is"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed(seed)",
      "queued no-op without CUDA; torch.manual_seed below already seeds the npu generator"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "same as above"),
    C('ckpt = torch.load(self.configs.resume, map_location=f"cuda:{self.rank}")', "tensor_to_device", "replace", T,
      'ckpt = torch.load(self.configs.resume, map_location=f"npu:{self.rank}")', "deserialising onto cuda raises"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised"),
    C('ema_ckpt = torch.load(ema_ckpt_path, map_location=f"cuda:{self.rank}")', "tensor_to_device", "replace", T,
      'ema_ckpt = torch.load(ema_ckpt_path, map_location=f"npu:{self.rank}")', "same as resume checkpoint"),
    C("torch.cuda.empty_cache()  # drop the second copy", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # drop the second copy of the weights", "no-op when CUDA was never initialised"),
    C("=model.cuda()", "tensor_to_device", "replace", T, "model.npu()", "Module.cuda() raises"),
    C('ckpt = torch.load(ckpt_path, map_location=f"cuda:{self.rank}")', "tensor_to_device", "replace", T,
      'ckpt = torch.load(ckpt_path, map_location=f"npu:{self.rank}")', "deserialising onto cuda raises"),
    C("model = torch.compile(model, mode=self.configs.train.compile.mode)", "compile_mode", "replace", F,
      'model = torch.compile(model, backend="npugraphs") if self.configs.train.compile.mode == "reduce-overhead" else model',
      "off by default (compile.flag); Inductor on NPU only from torch_npu 2.6 and 'reduce-overhead' means CUDA graphs -- unconfirmed for the pinned version"),
    C("self.ema_model = deepcopy(model).cuda()", "tensor_to_device", "replace", T, "self.ema_model = deepcopy(model).npu()",
      "raises without CUDA"),
    C("data = {key: value.cuda().to(dtype=dtype) for key, value in data.items()}", "tensor_to_device", "replace", T,
      "data = {key: value.npu().to(dtype=dtype) for key, value in data.items()}", "Tensor.cuda() raises"),
    C("autoencoder.eval().cuda()", "tensor_to_device", "replace", T, "autoencoder.eval().npu()", "raises without CUDA"),
    C("self.lpips_loss = lpips.LPIPS(net='vgg').cuda()", "tensor_to_device", "replace", T,
      "self.lpips_loss = lpips.LPIPS(net='vgg').npu()", "raises without CUDA"),
    C("self.queue_lr = torch.zeros(self.queue_size, c, h, w).cuda()", "tensor_to_device", "replace", T,
      "self.queue_lr = torch.zeros(self.queue_size, c, h, w).npu()", "raises without CUDA"),
    C("self.queue_gt = torch.zeros(self.queue_size, c, h, w).cuda()", "tensor_to_device", "replace", T,
      "self.queue_gt = torch.zeros(self.queue_size, c, h, w).npu()", "raises without CUDA"),
    C("self.jpeger = DiffJPEG(differentiable=False).cuda()", "tensor_to_device", "replace", T,
      "self.jpeger = DiffJPEG(differentiable=False).npu()  # simulate JPEG compression artifacts", "raises without CUDA"),
    C("im_gt = data['gt'].cuda()", "tensor_to_device", "replace", T, "im_gt = data['gt'].npu()", "raises without CUDA"),
    C("kernel1 = data['kernel1'].cuda()", "tensor_to_device", "replace", T, "kernel1 = data['kernel1'].npu()", "raises without CUDA"),
    C("kernel2 = data['kernel2'].cuda()", "tensor_to_device", "replace", T, "kernel2 = data['kernel2'].npu()", "raises without CUDA"),
    C("sinc_kernel = data['sinc_kernel'].cuda()", "tensor_to_device", "replace", T,
      "sinc_kernel = data['sinc_kernel'].npu()", "raises without CUDA"),
    C("return {key: value.cuda().to(dtype=dtype) for key, value in data.items()}", "tensor_to_device", "replace", T,
      "return {key: value.npu().to(dtype=dtype) for key, value in data.items()}", "raises without CUDA"),
    C('device=f"cuda:{self.rank}",', "device_type", "replace", T, 'device=f"npu:{self.rank}",', "cuda device string"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", T, "with torch.npu.amp.autocast():",
      "CUDA autocast disables itself without CUDA -> silent fp32 although use_amp is set"),
  ])

E("resshift_sampler", "sampler.py", "explicit_replacement",
  "ResShift sampler.py (BaseSampler/ResShiftSampler: chopped inference with torch.cuda.amp, optional torchrun multi-GPU)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "registers npu + hccl on the pinned torch"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "queued no-op without CUDA; torch.manual_seed on the previous line already seeds the npu generator"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", T, "num_gpus = torch.npu.device_count()",
      "0 on NPU -> math.ceil(bs / self.num_gpus) divides by zero"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", T, "torch.npu.set_device(rank % num_gpus)",
      "raises without CUDA"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", T,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL is not available on Ascend"),
    C("model = util_common.instantiate_from_config(self.configs.model).cuda()", "tensor_to_device", "replace", T,
      "model = util_common.instantiate_from_config(self.configs.model).npu()", "raises without CUDA"),
    C("autoencoder = util_common.instantiate_from_config(self.configs.autoencoder).cuda()", "tensor_to_device", "replace", T,
      "autoencoder = util_common.instantiate_from_config(self.configs.autoencoder).npu()", "raises without CUDA"),
    C('state = torch.load(ckpt_path, map_location=f"cuda:{self.rank}")', "tensor_to_device", "replace", T,
      'state = torch.load(ckpt_path, map_location=f"npu:{self.rank}")', "deserialising onto cuda raises"),
    C("context = torch.cuda.amp.autocast if self.use_amp else nullcontext", "amp", "replace", T,
      "context = torch.npu.amp.autocast if self.use_amp else nullcontext",
      "CUDA autocast silently disabled -> fp32 UNet although model.dtype was set to fp16 (dtype mismatch / 2x memory)"),
    C("micro_data['lq'].cuda(),", "tensor_to_device", "replace", T, "micro_data['lq'].npu(),", "raises without CUDA"),
    C("mask=micro_data['mask'].cuda() if 'mask' in micro_data else None,", "tensor_to_device", "replace", T,
      "mask=micro_data['mask'].npu() if 'mask' in micro_data else None,", "raises without CUDA (inpainting masks)"),
    C("im_lq_tensor = util_image.img2tensor(im_lq).cuda()", "tensor_to_device", "replace", T,
      "im_lq_tensor = util_image.img2tensor(im_lq).npu()  # 1 x c x h x w", "raises without CUDA"),
  ])

E("sinsr_inference", "inference.py", "explicit_replacement",
  "SinSR one-step inference script (derived from ResShift inference_resshift.py, --gpu_id via CUDA_VISIBLE_DEVICES)",
  [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime -> --gpu_id silently has no effect (always device 0)"),
  ])

E("resshift_train_sh", "scripts/train_realsr.sh", "explicit_replacement",
  "ResShift / SinSR single-node torchrun launcher (CUDA_VISIBLE_DEVICES, NCCL_* and PYTORCH_CUDA_ALLOC_CONF exports)",
  [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", T,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be loaded before torch_npu imports, unless the image already does it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", T, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on Ascend: each rank then sees all 8 NPUs, trainer.num_gpus=8 while world size is 4 -> DistributedSampler skips half the data"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", F, None, "NCCL-only knob, no effect on HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", F, None, "NCCL-only knob, no effect on HCCL"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", F,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "allocator tuning only; max_split_size_mb support in PYTORCH_NPU_ALLOC_CONF unconfirmed"),
    C("NGPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)", "env_var", "replace", T,
      "NGPUS=$(echo $ASCEND_RT_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)",
      "must follow the rename, otherwise NGPUS silently becomes 1"),
  ])

E("sinsr_util_net", "utils/util_net.py", "explicit_replacement",
  "ResShift/SinSR utils/util_net.py (forward_chop, CUDA-event timing used for the efficiency table, checkpoint reload)",
  [
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "start = torch.npu.Event(enable_timing=True)", "CUDA event base class is a dummy in CPU torch builds -> raises"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", T,
      "end = torch.npu.Event(enable_timing=True)", "same as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("peak = torch.cuda.max_memory_reserved() / 1024 ** 3", "torch_cuda_api", "replace", F,
      "peak = torch.npu.max_memory_reserved() / 1024 ** 3", "reports 0 when CUDA was never initialised; print only"),
  ])

# ---------------------------------------------------------------- DiffIR (BasicSR-based)
E("diffir_dist_util", "basicsr/utils/dist_util.py", "explicit_replacement",
  "BasicSR basicsr/utils/dist_util.py as shipped in DiffIR (pytorch/slurm launchers, default nccl backend)",
  [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", T,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "BasicSR train.py calls init_dist(args.launcher) without backend for the pytorch launcher -> nccl default is used"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", T, "num_gpus = torch.npu.device_count()",
      "0 on NPU -> rank % 0 raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", T, "torch.npu.set_device(rank % num_gpus)",
      "raises without CUDA"),
    C("num_gpus = torch.cuda.device_count()  # GPUs on this node", "torch_cuda_api", "replace", T,
      "num_gpus = torch.npu.device_count()  # NPUs on this node", "slurm path, same failure"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", T,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm path, raises without CUDA"),
  ])

E("diffir_prefetch", "basicsr/data/prefetch_dataloader.py", "device_branch_or_abstraction",
  "BasicSR prefetch_dataloader.py (CUDAPrefetcher selected by `prefetch_mode: cuda` in DiffIR's options)",
  [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", T, "self.stream = torch.npu.Stream()",
      "CUDA stream base class is a dummy without CUDA -> raises"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", T,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "cuda device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", T, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", T,
      "torch.npu.current_stream().wait_stream(self.stream)", "raises without CUDA; also the sync that makes the prefetch safe"),
  ])

E("diffir_base_model", "basicsr/models/base_model.py", "device_branch_or_abstraction",
  "BasicSR basicsr/models/base_model.py as shipped in DiffIR (device from num_gpu, DDP/DataParallel wrapping)",
  [
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", T,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "every model moves to self.device"),
    C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)", "torch_cuda_api", "replace", T,
      "net, device_ids=[torch.npu.current_device()], find_unused_parameters=find_unused_parameters)",
      "torch.cuda.current_device() raises without CUDA"),
    C("net = DataParallel(net)", "unsupported_op_workaround", "replace", T,
      "raise NotImplementedError('DataParallel is unsupported on Ascend NPU; launch with --launcher pytorch (DDP)')",
      "torch.nn.DataParallel is unsupported on NPU (Ascend API list / msFmkTransplt); reached with num_gpu > 1 and no launcher"),
  ])

E("diffir_setup", "setup.py", "kernel_rewrite",
  "BasicSR setup.py as shipped in DiffIR (make_cuda_ext: deform_conv / fused_act / upfirdn2d CUDAExtension behind --cuda_ext)",
  [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension", "npu_only_addition", F,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu/ACL include and lib paths for Ascend C rewrites of the kernels"),
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "add_branch", F,
      "elif torch.npu.is_available() or os.getenv('FORCE_NPU', '0') == '1':",
      "only with the opt-in --cuda_ext; without a branch the NPU host silently builds CPU-only stubs"),
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", F, "extension = NpuExtension",
      "no nvcc on Ascend; kernels have to be rewritten in Ascend C (or dropped for the pure-PyTorch fallbacks)"),
    C("extra_compile_args['nvcc'] = [", "custom_cuda_extension", "removal", F, None, "nvcc-only flags"),
    C("sources_cuda=['src/deform_conv_cuda.cpp', 'src/deform_conv_cuda_kernel.cu']),", "custom_cuda_extension", "replace", F,
      "sources_cuda=['src/deform_conv_npu.cpp']),",
      "DCN is not used by DiffIR's archs; torchvision_npu deform_conv2d is the other option"),
    C("sources_cuda=['src/fused_bias_act_kernel.cu']),", "custom_cuda_extension", "removal", F, None,
      "fused bias-act is replaced by the pure-PyTorch path on NPU (see fused_act.py)"),
    C("sources_cuda=['src/upfirdn2d_kernel.cu']),", "custom_cuda_extension", "removal", F, None,
      "upfirdn2d has a native PyTorch implementation in BasicSR"),
  ])

E("diffir_fused_act", "basicsr/ops/fused_act/fused_act.py", "kernel_rewrite",
  "BasicSR basicsr/ops/fused_act/fused_act.py (StyleGAN2 fused bias-leaky-ReLU CUDA op, JIT or prebuilt ext)",
  [
    C("if BASICSR_JIT == 'True':", "custom_cuda_extension", "replace", F,
      "if BASICSR_JIT == 'True' and torch.cuda.is_available():",
      "JIT-compiling the .cu needs nvcc; only when the user opts in with BASICSR_JIT=True"),
    C("if input.device.type == 'cpu':", "custom_cuda_extension", "replace", T,
      "if input.device.type in ('cpu', 'npu'):",
      "the ext is never built on an NPU host (ImportError swallowed) -> NameError on fused_act_ext for npu tensors; route npu to the PyTorch path"),
  ])

E("diffir_options", "options/train_DiffIRS2_x4.yml", "explicit_replacement",
  "DiffIR BasicSR-style option file for stage-2 x4 SR (num_gpu, prefetch_mode: cuda, dist_params)",
  [
    C("backend: nccl", "dist_backend", "replace", T, "backend: hccl",
      "passed to init_dist by the slurm launcher path; NCCL is not available on Ascend"),
  ])

E("diffir_train_sh", "trainS2.sh", "explicit_replacement",
  "DiffIR trainS2.sh (torch.distributed.launch on 8 GPUs)",
  [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", T,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu is imported (unless the container sets it)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", F,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on Ascend, but it lists every device of an 8-card node, so nothing changes in practice"),
  ])

# ---------------------------------------------------------------- OSEDiff / SeeSR (diffusers)
E("osediff_model", "osediff.py", "explicit_replacement",
  "OSEDiff osediff.py (one-step SD-2.1 LoRA generator on diffusers; training and test wrappers with latent/VAE tiling)",
  [
    C('noise_scheduler_1step.set_timesteps(1, device="cuda")', "device_type", "replace", T,
      'noise_scheduler_1step.set_timesteps(1, device="npu")', "timesteps tensor created on cuda -> raises"),
    C("noise_scheduler_1step.alphas_cumprod = noise_scheduler_1step.alphas_cumprod.cuda()", "tensor_to_device", "replace", T,
      "noise_scheduler_1step.alphas_cumprod = noise_scheduler_1step.alphas_cumprod.npu()", "Tensor.cuda() raises"),
    C('subfolder="text_encoder").cuda()', "tensor_to_device", "replace", T,
      'self.text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder").npu()',
      "Module.cuda() raises"),
    C('self.unet.to("cuda")', "tensor_to_device", "replace", T, 'self.unet.to("npu")', "cuda device string"),
    C('self.vae.to("cuda")', "tensor_to_device", "replace", T, 'self.vae.to("npu")', "cuda device string"),
    C('self.timesteps = torch.tensor([999], device="cuda").long()', "device_type", "replace", T,
      'self.timesteps = torch.tensor([999], device="npu").long()', "cuda device string"),
    C('self.device = torch.device("cuda")', "device_type", "replace", T, 'self.device = torch.device("npu")',
      "used for the timesteps and tile weights"),
    C("osediff = torch.load(args.osediff_path)", "tensor_to_device", "replace", T,
      'osediff = torch.load(args.osediff_path, map_location="cpu")',
      "osediff.pkl was saved from GPU tensors; without map_location torch.load tries to restore them on cuda and raises"),
    C('self.unet.to("cuda", dtype=self.weight_dtype)', "tensor_to_device", "replace", T,
      'self.unet.to("npu", dtype=self.weight_dtype)', "cuda device string"),
    C('self.vae.to("cuda", dtype=self.weight_dtype)', "tensor_to_device", "replace", T,
      'self.vae.to("npu", dtype=self.weight_dtype)', "cuda device string"),
    C('self.text_encoder.to("cuda", dtype=self.weight_dtype)', "tensor_to_device", "replace", T,
      'self.text_encoder.to("npu", dtype=self.weight_dtype)', "cuda device string"),
  ])

E("osediff_test", "test_osediff.py", "explicit_replacement",
  "OSEDiff test_osediff.py (RAM/DAPE tagging + one-step SR inference)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, "import torch_npu",
      "registers the npu device before the model modules use it (pinned torch 2.x < 2.5)"),
    C("def get_validation_prompt(args, image, model, device='cuda'):", "device_type", "replace", T,
      "def get_validation_prompt(args, image, model, device='npu'):", "default device used by the only caller"),
    C('DAPE.to("cuda")', "tensor_to_device", "replace", T, 'DAPE.to("npu")', "cuda device string"),
  ])

E("osediff_train", "train_osediff.py", "explicit_replacement",
  "OSEDiff train_osediff.py (accelerate + VSD regulariser, xformers/8-bit-Adam/TF32 flags, RAM tagger)",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", F, "import torch_npu",
      "accelerate already imports torch_npu when it detects an NPU; explicit import for the 'npu' strings below"),
    C('DAPE.to("cuda")', "tensor_to_device", "replace", T, 'DAPE.to(accelerator.device)', "cuda device string"),
    C("raise ValueError(\"xformers is not available, please install it by running `pip install xformers`\")", "attention_kernel", "replace", T,
      'logger.warning("xformers unavailable on NPU, keeping the default SDPA attention processor")',
      "the documented launch command passes --enable_xformers_memory_efficient_attention; xformers cannot be installed on NPU"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", F,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "only with --use_8bit_adam; bitsandbytes 8-bit optimizers are not listed as NPU-supported"),
    C("net_lpips = lpips.LPIPS(net='vgg').cuda()", "tensor_to_device", "replace", T,
      "net_lpips = lpips.LPIPS(net='vgg').to(accelerator.device)", "Module.cuda() raises"),
    C("=if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", T, "if torch.npu.device_count() > 1:",
      "0 on NPU -> multi-card runs call the loss on the DDP wrapper instead of .module -> AttributeError"),
    C("if torch.cuda.device_count() > 1:  # model_reg is DDP-wrapped", "torch_cuda_api", "replace", T,
      "if torch.npu.device_count() > 1:  # model_reg is DDP-wrapped by accelerate", "same as above"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; memory hygiene only"),
  ])

E("seesr_test", "test_seesr.py", "transfer_to_npu",
  "SeeSR test_seesr.py (diffusers ControlNet pipeline + RAM tag model); ported with transfer_to_npu",
  [
    C("=import torch", "import_torch_npu", "npu_only_addition", T,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu rewrites the device='cuda' defaults passed to .to() and torch.autocast('cuda'); "
      "those lines stay unchanged in this port"),
    C("def main(args, enable_xformers_memory_efficient_attention=True, ):", "attention_kernel", "replace", T,
      "def main(args, enable_xformers_memory_efficient_attention=False, ):",
      "transfer_to_npu does not cover xformers: is_xformers_available() is False on NPU and the default True raises ValueError"),
  ])
