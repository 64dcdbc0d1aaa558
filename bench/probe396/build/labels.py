# Labels for probe396 (anime / manga / line-art colorization and illustration generation).
# One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit torch_npu port).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


EX = "explicit_replacement"
AB = "device_branch_or_abstraction"

# --------------------------------------------------------------------------------------------
# Project A: ptran1203/pytorch-animeGAN (AnimeGAN v1/v2/v3 in PyTorch, DDP + AMP training)
# --------------------------------------------------------------------------------------------
E("agan_train", "train.py", EX, "ptran1203/pytorch-animeGAN train.py (argparse --device/--ddp/--amp entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: load the NPU backend before any torch.npu call (mandatory before torch_npu 2.5.1 autoload)"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')",
      "default device string feeds torch.device(self.cfg.device) in the single-card path"),
    C("if args.device == 'cuda' and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.device == 'npu' and not torch.npu.is_available():",
      "with the new default 'npu' the CUDA check would be skipped/wrong; availability must be asked of torch.npu"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "bind each torchrun rank to its NPU"),
    C("args.device = f'cuda:{args.local_rank}'", "device_type", "replace", True,
      "args.device = f'npu:{args.local_rank}'", "per-rank device string used by the trainer"),
])

E("agan_trainer", "trainer/__init__.py", EX, "ptran1203/pytorch-animeGAN trainer/__init__.py (Trainer/DDPTrainer, GradScaler + autocast)", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself (with a warning) when CUDA is absent, so --amp would silently train without loss scaling"),
    C("self.pg = dist.new_group(backend='nccl')", "dist_backend", "replace", True,
      "self.pg = dist.new_group(backend='hccl')", "explicit NCCL sub-group for DDP; must be HCCL"),
    C("self.device_type = 'cuda' if self.cfg.device.startswith('cuda') else 'cpu'", "amp", "replace", True,
      "self.device_type = 'npu' if self.cfg.device.startswith('npu') else 'cpu'",
      "device_type is passed to torch.autocast; left as is the NPU run would autocast for 'cpu' (bf16 CPU autocast) or not at all"),
    C('self.device = torch.device(f"cuda:{self.cfg.local_rank}")', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{self.cfg.local_rank}")', "DDP branch builds its own cuda:N device"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3",
      "logging only: torch.cuda.max_memory_allocated returns 0 on a host without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "cache release between epochs; torch.cuda.empty_cache is a no-op when CUDA is not initialised"),
])

E("agan_losses", "losses.py", EX, "ptran1203/pytorch-animeGAN losses.py (VGG19 content/gram loss, color loss)", [])

E("agan_imgproc", "utils/image_processing.py", EX, "ptran1203/pytorch-animeGAN utils/image_processing.py (module-level RGB->YUV kernel)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "module-level placement of the YUV kernel; unported it stays on CPU and `image @ kernel` mixes devices"),
    C("_rgb_to_yuv_kernel = _rgb_to_yuv_kernel.cuda()", "tensor_to_device", "replace", True,
      "_rgb_to_yuv_kernel = _rgb_to_yuv_kernel.npu()", "kernel must live on the NPU with the images"),
])

E("agan_common", "utils/common.py", EX, "ptran1203/pytorch-animeGAN utils/common.py (checkpoint I/O, seeding)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "reproducibility only; torch.manual_seed may already seed the NPU generator (unconfirmed in knowledge)"),
    C("map_location = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", False,
      "map_location = 'npu' if torch.npu.is_available() else 'cpu'",
      "falls back to 'cpu' on an NPU host, and load_state_dict copies into NPU params anyway: works, only an extra host hop"),
])

E("agan_inference", "inference.py", EX, "ptran1203/pytorch-animeGAN inference.py (Predictor for image/video/dir)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script for inference"),
    C("device='cuda',", "device_type", "replace", True, "device='npu',",
      "Predictor default device (used from notebooks/hub without --device)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "unported: every NPU host silently falls back to CPU inference"),
    C('print(f"Use GPU {torch.cuda.get_device_name()}")', "torch_cuda_api", "replace", True,
      'print(f"Use NPU {torch.npu.get_device_name()}")', "torch.cuda.get_device_name raises without CUDA once the branch above is taken on NPU"),
    C("self.device_type = 'cuda' if device.startswith('cuda') else 'cpu'", "amp", "replace", True,
      "self.device_type = 'npu' if device.startswith('npu') else 'cpu'", "autocast device type for --amp inference"),
    C("parser.add_argument('--device', type=str, default='cuda', help='Device, cuda or cpu')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu', help='Device, npu or cpu')", "CLI default device"),
])

E("agan_models", "models/anime_gan.py", EX, "ptran1203/pytorch-animeGAN models/anime_gan.py (GeneratorV1, Discriminator with spectral norm)", [])

E("agan_train_sh", "scripts/train_ddp.sh", EX, "ptran1203/pytorch-animeGAN-style torchrun launcher for --ddp training", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be in the environment before python imports torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "ignored on Ascend; harmless here because ranks 0,1 map to NPU 0,1 anyway"),
    C("--device cuda \\", "device_type", "replace", False, "--device npu \\",
      "inert with --ddp: train.py overwrites args.device with npu:{local_rank}"),
])

# --------------------------------------------------------------------------------------------
# Project B: qweasdd/manga-colorization-v2 (SE-ResNeXt colorizer + FFDNet denoiser)
# --------------------------------------------------------------------------------------------
E("mcol_inference", "inference.py", EX, "qweasdd/manga-colorization-v2 inference.py (CLI, --gpu flag)", [
    C("from colorizator import MangaColorizator", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the entry script never imports torch itself; add the backend import next to the model import"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "--gpu selects the accelerator string"),
])

E("mcol_colorizator", "colorizator.py", EX, "qweasdd/manga-colorization-v2 colorizator.py (MangaColorizator)", [])

E("mcol_denoiser", "denoising/denoiser.py", EX, "qweasdd/manga-colorization-v2 denoising/denoiser.py (FFDNetDenoiser)", [
    C("if self.device == 'cuda':", "device_type", "replace", True, "if self.device == 'npu':",
      "unported, the NPU run takes the CPU branch and the denoiser silently runs on CPU"),
    C("state_dict = torch.load(weights_path, map_location=torch.device('cpu'))", "unsupported_op_workaround", "replace", True,
      "state_dict = remove_dataparallel_wrapper(torch.load(weights_path, map_location=torch.device('cpu')))",
      "without the DataParallel wrapper the 'module.' prefixes must be stripped or load_state_dict fails"),
    C("self.model = nn.DataParallel(self.model, device_ids=device_ids).cuda()", "unsupported_op_workaround", "replace", True,
      "self.model = self.model.npu()", "torch.nn.DataParallel is unsupported on Ascend (TSV: ✘); single-device model"),
    C("if self.device.startswith('cuda'):", "device_type", "replace", True, "if self.device.startswith('npu'):",
      "selects the tensor type for the FFDNet input"),
    C("dtype = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True, "dtype = torch.npu.FloatTensor",
      "legacy tensor-type API used to move inputs to the device"),
])

E("mcol_functions", "denoising/functions.py", EX, "qweasdd/manga-colorization-v2 denoising/functions.py (FFDNet pixel-unshuffle layers)", [
    C("if 'cuda' in dtype:", "device_type", "replace", True, "if 'npu' in dtype:",
      "input.type() is 'torch.npu.FloatTensor' on NPU; unported, the buffer is allocated on CPU and the next conv gets a CPU tensor"),
    C("downsampledfeatures = torch.cuda.FloatTensor(N, Cout, Hout, Wout).fill_(0)", "torch_cuda_api", "replace", True,
      "downsampledfeatures = torch.npu.FloatTensor(N, Cout, Hout, Wout).fill_(0)", "device buffer via legacy constructor"),
])

E("mcol_ffdnet", "denoising/models.py", EX, "qweasdd/manga-colorization-v2 denoising/models.py (FFDNet)", [])

E("mcol_networks", "networks/models.py", EX, "qweasdd/manga-colorization-v2 networks/models.py (Generator/Colorizer)", [])

# --------------------------------------------------------------------------------------------
# Project C: Mukosame/Anime2Sketch (line-art extraction)
# --------------------------------------------------------------------------------------------
E("a2s_test", "test.py", EX, "Mukosame/Anime2Sketch test.py (--gpu_ids, CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list",
      "device selection is done through the visibility mask; unported, `-g 2` silently runs on NPU 0"),
    C("device = torch.device('cuda' if len(opt.gpu_ids) > 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if len(opt.gpu_ids) > 0 else 'cpu')", "accelerator device string"),
])

E("a2s_model", "model.py", EX, "Mukosame/Anime2Sketch model.py (UnetGenerator, create_model)", [
    C("ckpt = torch.load(os.path.join(weights_dir, 'netG.pth'))", "device_type", "replace", True,
      "ckpt = torch.load(os.path.join(weights_dir, 'netG.pth'), map_location='cpu')",
      "checkpoint holds CUDA tensors (see comment above it): deserialising without map_location raises on a host without CUDA"),
])

E("a2s_app", "app.py", EX, "Anime2Sketch Gradio demo (Hugging Face Space app.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "module-level device; unported the demo silently runs on CPU"),
])

# --------------------------------------------------------------------------------------------
# Project D: kohya-ss/sd-scripts (LoRA fine-tuning of anime illustration models, WD14 tagging)
# --------------------------------------------------------------------------------------------
E("kohya_device_utils", "library/device_utils.py", AB, "kohya-ss/sd-scripts library/device_utils.py (CUDA/XPU/MPS device helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "guarded backend import so the helper keeps working on CUDA/MPS hosts"),
    C("=HAS_CUDA = False", "torch_cuda_api", "npu_only_addition", True,
      "HAS_NPU = hasattr(torch, 'npu') and torch.npu.is_available()",
      "new capability flag next to the existing HAS_* probes"),
    C("=if HAS_MPS:", "torch_cuda_api", "add_branch", False,
      "if HAS_NPU:\n        torch.npu.empty_cache()", "clean_memory(): cache release only"),
    C('if device.type == "xpu":', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu":\n        torch.npu.empty_cache()', "clean_memory_on_device(): cache release only"),
    C("=elif HAS_XPU:", "device_type", "add_branch", True,
      'elif HAS_NPU:\n        device = torch.device("npu")',
      "get_preferred_device() would otherwise return cpu on an NPU host (tagger/gen scripts run on CPU)"),
])

E("kohya_train_util", "library/train_util.py", AB, "kohya-ss/sd-scripts library/train_util.py (prepare_accelerator, get_optimizer, sample_images)", [
    C('backend="gloo" if os.name == "nt" or not torch.cuda.is_available() else "nccl",', "dist_backend", "replace", True,
      'backend="gloo" if os.name == "nt" or not torch.npu.is_available() else "hccl",',
      "unported, multi-NPU runs get gloo, which cannot all-reduce NPU tensors"),
    C("if torch.cuda.device_count() > 1", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1",
      "0 on an NPU host: the process-group kwargs (backend, --ddp_timeout) are silently dropped"),
    C("optimizer_class = torch.optim.AdamW", "fused_optimizer", "replace", False,
      "optimizer_class = torch_npu.optim.NpuFusedAdamW",
      "performance only (msFmkTransplt advice; +memory); torch.optim.AdamW is correct on NPU"),
    C("cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None", "torch_cuda_api", "replace", False,
      "cuda_rng_state = torch.npu.get_rng_state() if torch.npu.is_available() else None",
      "saves device RNG around sample generation; only training-RNG reproducibility is affected"),
    C("torch.cuda.set_rng_state(cuda_rng_state)", "torch_cuda_api", "replace", False,
      "torch.npu.set_rng_state(cuda_rng_state)", "pair of the line above"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", "sample-image seeding; torch.manual_seed on the line above may already cover the NPU (unconfirmed)"),
    C("torch.cuda.seed()", "torch_cuda_api", "replace", False,
      "torch.npu.seed()", "random-seed branch of sample generation; reproducibility only"),
])

E("kohya_train_network", "train_network.py", AB, "kohya-ss/sd-scripts train_network.py (NetworkTrainer, accelerate loop)", [
    C('logs["mem/max_allocated_gb"] = torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
      'logs["mem/max_allocated_gb"] = torch.npu.max_memory_allocated() / (1024**3)', "tracker logging only (reports 0 unported)"),
    C('logs["mem/reserved_gb"] = torch.cuda.memory_reserved()', "torch_cuda_api", "replace", False,
      'logs["mem/reserved_gb"] = torch.npu.memory_reserved() / (1024**3)', "tracker logging only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats()", "logging only"),
])

E("kohya_wd14", "finetune/tag_images_by_wd14_tagger.py", AB, "kohya-ss/sd-scripts finetune/tag_images_by_wd14_tagger.py (WD14 booru tagger, onnxruntime)", [
    C('=["CUDAExecutionProvider"]', "device_type", "add_branch", False,
      '["CANNExecutionProvider"] if "CANNExecutionProvider" in ort.get_available_providers() else ["CUDAExecutionProvider"]',
      "onnxruntime falls back to CPUExecutionProvider and still tags correctly; a CANN EP build of onnxruntime is unconfirmed in knowledge"),
])

E("kohya_requirements", "requirements.txt", EX, "kohya-ss/sd-scripts requirements.txt", [
    C("bitsandbytes==0.43.3", "unsupported_op_workaround", "removal", False, None,
      "only needed by the 8-bit optimizers, which are not available on NPU; unused once the launcher uses AdamW"),
])

E("kohya_launch_sh", "examples/train_lora_anime.sh", EX, "user launcher for kohya-ss/sd-scripts train_network.py (anime LoRA)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced (before `set -u`, the script references unset variables)"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "single device 0 is the default anyway"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "allocator tuning only; support of max_split_size_mb in PYTORCH_NPU_ALLOC_CONF is unconfirmed in knowledge"),
    C('--optimizer_type="AdamW8bit" \\', "unsupported_op_workaround", "replace", True,
      '--optimizer_type="AdamW" \\', "bitsandbytes 8-bit optimizers are not available for NPU (knowledge §6)"),
    C("=--xformers \\", "attention_kernel", "replace", True, "--sdpa \\",
      "xformers has no NPU backend; replace_unet_modules raises ImportError; SDPA dispatches to NPU flash attention"),
])

# --------------------------------------------------------------------------------------------
# Project E: lllyasviel/ControlNet-v1-1-nightly (lineart / lineart_anime annotators + SD1.5)
# --------------------------------------------------------------------------------------------
E("cnet_lineart_anime", "annotator/lineart_anime/__init__.py", EX, "lllyasviel/ControlNet-v1-1-nightly annotator/lineart_anime/__init__.py", [
    C("ckpt = torch.load(modelpath)", "device_type", "replace", True,
      "ckpt = torch.load(modelpath, map_location='cpu')",
      "same Anime2Sketch netG.pth (CUDA tensors); loading without map_location raises on a host without CUDA"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "annotator model placement"),
    C("image_feed = torch.from_numpy(img).float().cuda()", "tensor_to_device", "replace", True,
      "image_feed = torch.from_numpy(img).float().npu()", "annotator input placement"),
])

E("cnet_lineart", "annotator/lineart/__init__.py", EX, "lllyasviel/ControlNet-v1-1-nightly annotator/lineart/__init__.py", [
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "annotator model placement"),
    C("image = torch.from_numpy(image).float().cuda()", "tensor_to_device", "replace", True,
      "image = torch.from_numpy(image).float().npu()", "annotator input placement"),
])

E("cnet_gradio", "gradio_lineart_anime.py", EX, "lllyasviel/ControlNet-v1-1-nightly gradio_lineart_anime.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("anything-v3-full.safetensors', location='cuda')", "device_type", "replace", True,
      "model.load_state_dict(load_state_dict('./models/anything-v3-full.safetensors', location='cpu'), strict=False)",
      "safetensors/torch.load onto 'cuda' fails without CUDA; load on CPU, the model is moved to the NPU two lines later"),
    C("{model_name}.pth', location='cuda')", "device_type", "replace", True,
      "model.load_state_dict(load_state_dict(f'./models/{model_name}.pth', location='cpu'), strict=False)",
      "torch.load(map_location=torch.device('cuda')) raises without CUDA"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "ControlLDM placement"),
    C("control = 1.0 - torch.from_numpy(detected_map.copy()).float().cuda() / 255.0", "tensor_to_device", "replace", True,
      "control = 1.0 - torch.from_numpy(detected_map.copy()).float().npu() / 255.0", "control hint placement"),
])

E("cnet_model", "cldm/model.py", EX, "lllyasviel/ControlNet-v1-1-nightly cldm/model.py (load_state_dict/create_model)", [])

E("cnet_cldm", "cldm/cldm.py", EX, "lllyasviel/ControlNet-v1-1-nightly cldm/cldm.py (ControlLDM excerpt, low_vram_shift)", [
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "save_memory path moves the UNet onto the accelerator for diffusion"),
    C("self.control_model = self.control_model.cuda()", "tensor_to_device", "replace", True,
      "self.control_model = self.control_model.npu()", "save_memory path"),
    C("self.first_stage_model = self.first_stage_model.cuda()", "tensor_to_device", "replace", True,
      "self.first_stage_model = self.first_stage_model.npu()", "save_memory path (VAE)"),
    C("self.cond_stage_model = self.cond_stage_model.cuda()", "tensor_to_device", "replace", True,
      "self.cond_stage_model = self.cond_stage_model.npu()", "save_memory path (text encoder)"),
])

E("cnet_ddim", "ldm/models/diffusion/ddim.py", EX, "lllyasviel/ControlNet-v1-1-nightly ldm/models/diffusion/ddim.py (DDIMSampler)", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", True,
      'if attr.device != torch.device("npu"):', "hard-coded CUDA placement of every schedule buffer"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      'attr = attr.to(torch.device("npu"))', "same"),
])

E("cnet_attention", "ldm/modules/attention.py", EX, "lllyasviel/ControlNet-v1-1-nightly ldm/modules/attention.py (CrossAttention, xformers fallback)", [
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", True,
      "with torch.autocast(enabled=False, device_type='npu'):",
      "disabling CUDA autocast does not disable NPU autocast: under fp16 training the q·k einsum would be re-cast to fp16 (the overflow this block prevents)"),
])

E("cnet_dm_util", "ldm/modules/diffusionmodules/util.py", EX, "lllyasviel/ControlNet-v1-1-nightly ldm/modules/diffusionmodules/util.py (CheckpointFunction)", [
    C('"enabled": torch.is_autocast_enabled(),', "amp", "replace", True,
      '"enabled": torch.npu.is_autocast_enabled(),',
      "torch.is_autocast_enabled() reports CUDA autocast only; checkpoint recomputation would run without NPU autocast"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", "replace", True,
      '"dtype": torch.npu.get_autocast_dtype(),',
      "GPU autocast dtype (fp16 default) differs from the NPU one under bf16 training: recompute in the wrong dtype"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", True,
      "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "backward recomputation must re-enter NPU autocast; torch.cuda.amp.autocast is disabled without CUDA"),
])

E("cnet_encoders", "ldm/modules/encoders/modules.py", EX, "lllyasviel/ControlNet-v1-1-nightly ldm/modules/encoders/modules.py (FrozenCLIPEmbedder)", [
    C('def get_unconditional_conditioning(self, bs, device="cuda"):', "device_type", "replace", False,
      'def get_unconditional_conditioning(self, bs, device="npu"):',
      "ClassEmbedder is not used by any ControlNet config; ported for completeness"),
    C('version="openai/clip-vit-large-patch14", device="cuda"', "device_type", "replace", True,
      'def __init__(self, version="openai/clip-vit-large-patch14", device="npu", max_length=77,',
      "SD1.5 cond_stage_config does not pass device: tokens are sent to 'cuda' in forward()"),
    C('arch="ViT-H-14", version="laion2b_s32b_b79k", device="cuda"', "device_type", "replace", True,
      'def __init__(self, arch="ViT-H-14", version="laion2b_s32b_b79k", device="npu", max_length=77,',
      "SD2.x text encoder, same failure mode"),
])

E("cnet_env", "environment.yaml", EX, "lllyasviel/ControlNet-v1-1-nightly environment.yaml (conda env)", [
    C("- cudatoolkit=11.3", "import_torch_npu", "removal", False, None,
      "CUDA toolkit is dead weight on an Ascend host (CANN is installed outside conda)"),
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release pairs with PyTorch 1.12.1 (knowledge §1 matrix); 2.1.0 is the closest long-lived pairing"),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must match torch 2.1.0"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the Ascend backend wheel, version paired with torch 2.1.0"),
])
