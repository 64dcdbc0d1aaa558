"""Labels for probe339: face swapping / reenactment / deepfake detection (CUDA -> Ascend NPU).

Format: see bench/probe_build.py. One C(...) per upstream line a careful porter would edit.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


ADD_IMPORT = "import torch_npu"
SEED_NOOP = ("torch.cuda seeding is lazily queued and never applied without CUDA: a silent no-op, "
             "the NPU generator stays unseeded (reproducibility only, nothing fails)")
AMP_NOOP = ("torch.cuda.amp on a host without CUDA warns and disables itself: training silently runs in fp32 "
            "(slower, more memory) but correct; torch.npu.amp / torch.amp('npu') restores mixed precision")
ORT_NOTE = ("onnxruntime only warns and falls back to CPUExecutionProvider when the CUDA EP is missing: slower but "
            "correct. CANNExecutionProvider (onnxruntime built with CANN) is the NPU EP -- unconfirmed in the knowledge notes")

# ---------------------------------------------------------------- SimSwap
E("simswap_base_options", "simswap/options/base_options.py", "explicit_replacement",
  "SimSwap options/base_options.py (pix2pixHD-style --gpu_ids parsing)", [
      C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.opt.gpu_ids[0])",
        "torch.cuda.set_device initialises CUDA and raises on an NPU host; select the NPU with torch.npu.set_device"),
  ])

E("simswap_fs_model", "simswap/models/fs_model.py", "explicit_replacement",
  "SimSwap models/fs_model.py (fsModel, SpecificNorm, ArcFace loaded with map_location)", [
      C("self.mean = torch.from_numpy(self.mean).float().cuda()", "tensor_to_device", "replace", True,
        "self.mean = torch.from_numpy(self.mean).float().npu()", ".cuda() fails without CUDA; normalisation constants must live on the NPU"),
      C("self.std = torch.from_numpy(self.std).float().cuda()", "tensor_to_device", "replace", True,
        "self.std = torch.from_numpy(self.std).float().npu()", ".cuda() fails without CUDA"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True,
        'device = torch.device("npu:0")', "hard-coded CUDA device used for netG/netArc/netD placement"),
      C("alpha = torch.rand(bs, 1, 1, 1).expand_as(img_fake).cuda()", "tensor_to_device", "replace", True,
        "alpha = torch.rand(bs, 1, 1, 1, device=img_fake.device).expand_as(img_fake)", "gradient-penalty interpolation weights created on CUDA"),
      C("grad_outputs=torch.ones(pred_interpolated.size()).cuda(),", "tensor_to_device", "replace", True,
        "grad_outputs=torch.ones_like(pred_interpolated),", "grad_outputs built on CUDA"),
  ])

E("simswap_test_video", "simswap/test_video_swapsingle.py", "explicit_replacement",
  "SimSwap test_video_swapsingle.py + util/videoswap.py (insightface antelope detector, BiSeNet parsing mask)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "entry script: register the NPU backend (mandatory before torch 2.5.1, still recommended after)"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "BiSeNet face-parsing net moved to CUDA"),
      C("net.load_state_dict(torch.load(save_pth))", "device_type", "replace", True,
        "net.load_state_dict(torch.load(save_pth, map_location='cpu'))",
        "79999_iter.pth was saved from CUDA tensors; torch.load without map_location tries to restore them on CUDA and raises"),
      C("frame_align_crop_tenor = _totensor(cv2.cvtColor(frame_align_crop, cv2.COLOR_BGR2RGB))[None, ...].cuda()", "tensor_to_device", "replace", True,
        "frame_align_crop_tenor = _totensor(cv2.cvtColor(frame_align_crop, cv2.COLOR_BGR2RGB))[None, ...].npu()",
        "aligned crop sent to CUDA"),
      C("img_id = img_id.cuda()", "tensor_to_device", "replace", True, "img_id = img_id.npu()", "identity image sent to CUDA"),
  ])

E("simswap_reverse2original", "simswap/util/reverse2original.py", "explicit_replacement",
  "SimSwap util/reverse2original.py (SoftErosion mask, paste-back)", [
      C("mask_tensor = torch.from_numpy(target_mask.copy().transpose((2, 0, 1))).float().mul_(1 / 255.0).cuda()", "tensor_to_device", "replace", True,
        "mask_tensor = torch.from_numpy(target_mask.copy().transpose((2, 0, 1))).float().mul_(1 / 255.0).npu()",
        "mask tensor created on CUDA; SoftErosion's weight buffer lives on the NPU after the port"),
      C("smooth_mask = SoftErosion(kernel_size=17, threshold=0.9, iterations=7).cuda()", "tensor_to_device", "replace", True,
        "smooth_mask = SoftErosion(kernel_size=17, threshold=0.9, iterations=7).npu()", "module moved to CUDA"),
  ])

E("simswap_data_loader", "simswap/data/data_loader_Swapping.py", "explicit_replacement",
  "SimSwap data/data_loader_Swapping.py (apex-style side-stream data_prefetcher)", [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "creating a CUDA stream fails without CUDA; torch.npu.Stream is the NPU side stream"),
      C("self.mean = torch.tensor([0.485, 0.456, 0.406]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.mean = torch.tensor([0.485, 0.456, 0.406]).npu().view(1, 3, 1, 1)", ".cuda() fails"),
      C("self.std = torch.tensor([0.229, 0.224, 0.225]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.std = torch.tensor([0.229, 0.224, 0.225]).npu().view(1, 3, 1, 1)", ".cuda() fails"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
        "CUDA stream context"),
      C("self.src_image1 = self.src_image1.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.src_image1 = self.src_image1.npu(non_blocking=True)", "async H2D copy to CUDA"),
      C("self.src_image2 = self.src_image2.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.src_image2 = self.src_image2.npu(non_blocking=True)", "async H2D copy to CUDA"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync through the CUDA API"),
  ])

E("simswap_train", "simswap/train.py", "explicit_replacement",
  "SimSwap train.py (2022 projected-discriminator training loop)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(opt.gpu_ids)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(opt.gpu_ids)",
        "CUDA_VISIBLE_DEVICES is ignored by CANN: the --gpu_ids choice would silently land on NPU 0 "
        "(whether setting it after import torch_npu is early enough is unconfirmed)"),
  ])

# ---------------------------------------------------------------- FaceShifter
E("faceshifter_train_aei", "train_AEI.py", "explicit_replacement",
  "FaceShifter re-implementation (taotaonice) train_AEI.py with apex amp O1 and visdom", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "every model/tensor placement in the script goes through this device"),
      C("G, opt_G = amp.initialize(G, opt_G, opt_level=optim_level)", "amp", "replace", False,
        "G, opt_G = amp.initialize(G, opt_G, opt_level=optim_level, combine_grad=True)",
        "kept on the Ascend apex patch (environment change, not this line); combine_grad is an NPU-only performance option"),
      C("D, opt_D = amp.initialize(D, opt_D, opt_level=optim_level)", "amp", "replace", False,
        "D, opt_D = amp.initialize(D, opt_D, opt_level=optim_level, combine_grad=True)",
        "as above: performance-only on Ascend apex"),
  ])

E("faceshifter_aei_net", "network/AEI_Net.py", "explicit_replacement",
  "FaceShifter network/AEI_Net.py (AAD generator, multi-level attribute encoder, HEAR-Net) -- device-agnostic, no change", [])

E("faceshifter_inference", "inference_demo.py", "explicit_replacement",
  "FaceShifter inference_demo.py (MTCNN align, ArcFace IR-SE50 embedding, AEI-Net swap)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", "hard-coded CUDA device"),
      C("G = G.cuda()", "tensor_to_device", "replace", True, "G = G.to(device)", ".cuda() fails without CUDA"),
      C("Xs = Xs.unsqueeze(0).cuda()", "tensor_to_device", "replace", True, "Xs = Xs.unsqueeze(0).to(device)", ".cuda() fails without CUDA"),
  ])

# ---------------------------------------------------------------- HifiFace
E("hififace_train", "train.py", "explicit_replacement",
  "HifiFace unofficial re-implementation train.py (mp.spawn DDP, OmegaConf, apex FusedAdam, torch.cuda.amp)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "guarded import: without apex it silently falls back to torch.optim.Adam; NVIDIA FusedAdam needs CUDA kernels "
        "(hand edit per knowledge notes). NpuFusedAdam restores the fused optimizer the config asks for -- performance"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOOP),
      C("if cfg.dist.backend == 'nccl':", "dist_backend", "replace", False, "if cfg.dist.backend == 'hccl':",
        "backend-string comparison is not rewritten by anything; after the yaml switch to hccl the branch is simply skipped"),
      C("os.environ['NCCL_ASYNC_ERROR_HANDLING'] = '1'", "env_var", "replace", False,
        "os.environ['HCCL_ASYNC_ERROR_HANDLING'] = '1'", "NCCL variable is ignored on HCCL; HCCL's watchdog defaults to 1 anyway"),
      C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)", "raises without CUDA"),
      C("device = torch.device('cuda', rank)", "device_type", "replace", True, "device = torch.device('npu', rank)", "per-rank CUDA device"),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "torch.cuda.is_bf16_supported() queries the current CUDA device and raises without CUDA"),
      C("=sid.cuda(rank)", "tensor_to_device", "replace", True, "sid.to(device)", ".cuda(rank) fails without CUDA"),
      C("generator = HifiFaceGenerator(**cfg.model.generator).cuda(rank)", "tensor_to_device", "replace", True,
        "generator = HifiFaceGenerator(**cfg.model.generator).to(device)", ".cuda(rank)"),
      C("discriminator = MultiScaleDiscriminator(**cfg.model.discriminator).cuda(rank)", "tensor_to_device", "replace", True,
        "discriminator = MultiScaleDiscriminator(**cfg.model.discriminator).to(device)", ".cuda(rank)"),
      C("g_ema = HifiFaceGenerator(**cfg.model.generator).cuda(rank).eval()", "tensor_to_device", "replace", True,
        "g_ema = HifiFaceGenerator(**cfg.model.generator).to(device).eval()", ".cuda(rank)"),
      C("scaler_g = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)", "amp", "replace", False,
        "scaler_g = torch.npu.amp.GradScaler(enabled=cfg.train.amp)", AMP_NOOP),
      C("scaler_d = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)", "amp", "replace", False,
        "scaler_d = torch.npu.amp.GradScaler(enabled=cfg.train.amp)", AMP_NOOP),
      C("with torch.cuda.amp.autocast(enabled=cfg.train.amp, dtype=amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=cfg.train.amp, dtype=amp_dtype):", AMP_NOOP),
      C("with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=cfg.train.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(dtype=amp_dtype, enabled=cfg.train.amp):", AMP_NOOP),
      C("batch = {k: v.cuda(rank, non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
        "batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}", "batch copied to CUDA"),
      C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 1024 ** 3", "logging only: reports 0 without CUDA"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; NPU cache is not released (memory only)"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(g) for g in cfg.gpus)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(str(g) for g in cfg.gpus)",
        "device selection from the yaml is silently ignored on NPU"),
      C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "world_size = torch.npu.device_count()",
        "returns 0 without CUDA: the script silently falls into the single-process branch instead of spawning one rank per NPU"),
  ])

E("hififace_shape_identity", "model/shape_aware_identity.py", "kernel_rewrite",
  "HifiFace 3D shape-aware identity extractor (Deep3DFaceRecon BFM + nvdiffrast MeshRenderer)", [
      C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", True,
        "self.ctx = 'torch'  # nvdiffrast has no Ascend backend: use the PyTorch rasteriser below",
        "nvdiffrast's rasteriser is CUDA-only; fails whenever the renderer is used (visualisation path)"),
      C("rast_out, _ = dr.rasterize(self.ctx, vertex_ndc.contiguous(), tri, resolution=[rsize, rsize], ranges=ranges)",
        "custom_cuda_extension", "replace", True,
        "rast_out = rasterize_torch(vertex_ndc.contiguous(), tri, resolution=[rsize, rsize])",
        "call site of the CUDA rasterisation kernel; needs a PyTorch (or Ascend C) re-implementation"),
      C("depth, _ = dr.interpolate(vertex.reshape([-1, 4])[..., 2].unsqueeze(1).contiguous(), rast_out, tri)",
        "custom_cuda_extension", "replace", True,
        "depth = interpolate_torch(vertex.reshape([-1, 4])[..., 2].unsqueeze(1).contiguous(), rast_out, tri)",
        "nvdiffrast CUDA interpolate kernel"),
      C("image, _ = dr.interpolate(feat, rast_out, tri)", "custom_cuda_extension", "replace", True,
        "image = interpolate_torch(feat, rast_out, tri)", "nvdiffrast CUDA interpolate kernel"),
  ])

E("hififace_config", "config/model.yaml", "explicit_replacement",
  "HifiFace re-implementation config/model.yaml (OmegaConf)", [
      C("=device: cuda", "device_type", "replace", True, "device: npu", "read by train.py as torch.device(cfg.device) in single-device mode"),
      C("backend: nccl", "dist_backend", "replace", True, "backend: hccl", "passed to dist.init_process_group; NCCL is not available on Ascend"),
  ])

# ---------------------------------------------------------------- roop
E("roop_core", "roop/core.py", "device_branch_or_abstraction",
  "roop roop/core.py (onnxruntime execution providers, tensorflow memory limit)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "core.py is where roop imports torch; the GFPGAN enhancer can only pick 'npu' once the backend is registered"),
      C("if 'CUDAExecutionProvider' in roop.globals.execution_providers:", "device_type", "add_branch", False,
        "if 'CANNExecutionProvider' in roop.globals.execution_providers: torch.npu.empty_cache()",
        "cache release keyed on the CUDA EP never fires on NPU; memory only"),
  ])

E("roop_face_enhancer", "roop/processors/frame/face_enhancer.py", "device_branch_or_abstraction",
  "roop processors/frame/face_enhancer.py (GFPGAN device chosen from the ORT provider list)", [
      C("if 'CUDAExecutionProvider' in roop.globals.execution_providers:", "device_type", "add_branch", False,
        "if 'CANNExecutionProvider' in roop.globals.execution_providers: return 'npu'",
        "without a branch GFPGAN silently runs on CPU (correct but slow); GFPGANer accepting 'npu' is unconfirmed"),
  ])

E("roop_requirements", "requirements.txt", "explicit_replacement",
  "roop requirements.txt (cu118 wheel index, onnxruntime-gpu, torch+cu118)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "Ascend pairs torch_npu with the CPU torch build (whl/cpu on x86, PyPI on aarch64); the cu118 index only adds CUDA builds"),
      C("onnxruntime-gpu==1.15.1; sys_platform != 'darwin'", "custom_cuda_extension", "replace", False,
        "onnxruntime-cann==1.15.1; sys_platform != 'darwin'",
        "CUDA build of onnxruntime; " + ORT_NOTE + "; package name onnxruntime-cann unconfirmed"),
      C("torch==2.0.1+cu118; sys_platform != 'darwin'", "torch_cuda_api", "replace", True,
        "torch==2.1.0; sys_platform != 'darwin'",
        "+cu118 local build (no aarch64 wheel); torch must equal the torch_npu base version exactly"),
      C("torch==2.0.1; sys_platform == 'darwin'", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post12; sys_platform == 'linux'", "add the torch_npu wheel matching torch 2.1.0"),
      C("torchvision==0.15.2+cu118; sys_platform != 'darwin'", "torch_cuda_api", "replace", True,
        "torchvision==0.16.0; sys_platform != 'darwin'", "CUDA local build, and must follow the torch 2.1.0 pin"),
  ])

# ---------------------------------------------------------------- FaceFusion
E("facefusion_execution", "facefusion/execution.py", "device_branch_or_abstraction",
  "FaceFusion facefusion/execution.py (provider options, nvidia-smi XML device probe)", [
      C("if execution_provider == 'CUDAExecutionProvider':", "device_type", "add_branch", False,
        "elif execution_provider == 'CANNExecutionProvider': execution_providers_with_options.append((execution_provider, {'device_id': execution_device_id}))",
        "provider set is data-driven; an NPU needs a CANN entry in choices.execution_provider_set plus its options. " + ORT_NOTE),
      C("commands = [ shutil.which('nvidia-smi'), '--query', '--xml-format' ]", "device_capability_check", "replace", False,
        "commands = [ shutil.which('npu-smi'), 'info' ]",
        "probe fails quietly (exception swallowed -> empty device list, UI info only); npu-smi prints a table, so the XML parser also needs rewriting"),
  ])

E("facefusion_dockerfile", "Dockerfile.cuda", "explicit_replacement",
  "facefusion-docker Dockerfile.cuda", [
      C("FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA runtime image has no CANN toolkit/driver libraries; base on a CANN image (tag illustrative)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", "removal", False, None,
        "NVIDIA container-toolkit variable, meaningless under Ascend Docker Runtime"),
      C("RUN python install.py --onnxruntime cuda --skip-conda", "custom_cuda_extension", "replace", False,
        "RUN python install.py --onnxruntime cann --skip-conda",
        "installs onnxruntime-gpu; a 'cann' choice must be added to install.py first. " + ORT_NOTE),
      C("RUN pip install nvidia-cudnn-cu12==9.1.0.70 nvidia-cublas-cu12==12.4.5.8", "custom_cuda_extension", "removal", False, None,
        "cuDNN/cuBLAS wheels only serve the CUDA EP; dead weight on NPU"),
      C("ENV LD_LIBRARY_PATH=/usr/local/lib/python3.10/dist-packages/nvidia/cudnn/lib", "env_var", "removal", False, None,
        "points at the removed CUDA wheels; CANN paths come from the base image's set_env exports"),
      C('CMD [ "python", "facefusion.py", "run", "--execution-providers", "cuda", "--execution-device-id", "0" ]', "device_type", "replace", True,
        'CMD [ "python", "facefusion.py", "run", "--execution-providers", "cann", "cpu", "--execution-device-id", "0" ]',
        "--execution-providers choices are the *available* providers (execution.get_execution_provider_choices), so 'cuda' is rejected and the container exits"),
  ])

# ---------------------------------------------------------------- LivePortrait
E("liveportrait_wrapper", "src/live_portrait_wrapper.py", "device_branch_or_abstraction",
  "LivePortrait src/live_portrait_wrapper.py (device string from device_id, autocast, optional torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT,
        "module that builds the 'npu:N' device string; the backend must be registered before models are placed"),
      C("self.device = 'cuda:' + str(self.device_id)", "device_type", "replace", True,
        "self.device = 'npu:' + str(self.device_id)", "CUDA device string used for every load_model/.to()"),
      C("self.device = f'cuda:{self.device_id}'", "device_type", "replace", True,
        "self.device = f'npu:{self.device_id}'", "fallback branch for torch without torch.backends.mps"),
      C("self.warping_module = torch.compile(self.warping_module, mode='max-autotune')", "compile_mode", "replace", False,
        "self.warping_module = torch.compile(self.warping_module, backend='npugraphs')",
        "opt-in flag; max-autotune relies on Triton/CUDA graphs. NPU Inductor needs torch_npu>=2.6 -- unconfirmed for this model"),
      C("self.spade_generator = torch.compile(self.spade_generator, mode='max-autotune')", "compile_mode", "replace", False,
        "self.spade_generator = torch.compile(self.spade_generator, backend='npugraphs')", "as above"),
      C("ctx = torch.autocast(device_type=self.device[:4], dtype=torch.float16,", "amp", "replace", True,
        "ctx = torch.autocast(device_type=self.device.split(':')[0], dtype=torch.float16,",
        "self.device[:4] slices 'cuda' out of 'cuda:0' but gives the invalid 'npu:' for 'npu:0' -> autocast raises"),
  ])

E("liveportrait_speed", "speed.py", "explicit_replacement",
  "LivePortrait speed.py (per-module benchmark with torch.compile and cuda.synchronize)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("feature_3d = torch.randn(batch_size, 32, 16, 64, 64).to(device_id).half()", "tensor_to_device", "replace", True,
        "feature_3d = torch.randn(batch_size, 32, 16, 64, 64).to(f'npu:{device_id}').half()",
        "an int device in .to() means cuda:N on stock torch (transfer_to_npu rewrites ints for exactly this reason)"),
      C("kp_source = torch.randn(batch_size, 21, 3).to(device_id).half()", "tensor_to_device", "replace", True,
        "kp_source = torch.randn(batch_size, 21, 3).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("kp_driving = torch.randn(batch_size, 21, 3).to(device_id).half()", "tensor_to_device", "replace", True,
        "kp_driving = torch.randn(batch_size, 21, 3).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("source_image = torch.randn(batch_size, 3, 256, 256).to(device_id).half()", "tensor_to_device", "replace", True,
        "source_image = torch.randn(batch_size, 3, 256, 256).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("generator_input = torch.randn(batch_size, 256, 64, 64).to(device_id).half()", "tensor_to_device", "replace", True,
        "generator_input = torch.randn(batch_size, 256, 64, 64).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("eye_close_ratio = torch.randn(batch_size, 3).to(device_id).half()", "tensor_to_device", "replace", True,
        "eye_close_ratio = torch.randn(batch_size, 3).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("lip_close_ratio = torch.randn(batch_size, 2).to(device_id).half()", "tensor_to_device", "replace", True,
        "lip_close_ratio = torch.randn(batch_size, 2).to(f'npu:{device_id}').half()", "int device index -> CUDA"),
      C("loaded[name] = load_model(ckpt_path, model_config, cfg.device_id, model_type)", "device_type", "replace", True,
        "loaded[name] = load_model(ckpt_path, model_config, f'npu:{cfg.device_id}', model_type)",
        "load_model does model.to(device) with this int, i.e. cuda:N"),
      C("model = torch.compile(model, mode='max-autotune')  # Optimize for inference", "compile_mode", "replace", False,
        "model = torch.compile(model, backend='npugraphs')  # Optimize for inference",
        "max-autotune is a Triton/CUDA-graph mode; NPU compile support depends on torch_npu version -- unconfirmed"),
      C("module = torch.compile(module, mode='max-autotune')  # Optimize for inference", "compile_mode", "replace", False,
        "module = torch.compile(module, backend='npugraphs')  # Optimize for inference", "as above"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises; timings also need the NPU queue drained"),
      C("torch.cuda.synchronize()  # wait for the kernels before reading the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the kernels before reading the clock", "as above"),
      C("torch.cuda.max_memory_allocated(cfg.device_id)", "torch_cuda_api", "replace", False,
        "print(f\"Peak NPU memory: {torch.npu.max_memory_allocated(cfg.device_id) / 1024 ** 2:.1f} MB\")",
        "report only: returns 0 without CUDA"),
  ])

E("liveportrait_cropper", "src/utils/cropper.py", "device_branch_or_abstraction",
  "LivePortrait src/utils/cropper.py (insightface FaceAnalysisDIY + ONNX landmark runner providers)", [
      C('=device = "cuda"', "device_type", "replace", False, 'device = "npu"',
        "only consumed as onnx_provider by the landmark runner, whose 'cuda' branch requests the CUDA EP. " + ORT_NOTE),
      C('face_analysis_wrapper_provider = ["CUDAExecutionProvider"]', "device_type", "replace", False,
        'face_analysis_wrapper_provider = ["CANNExecutionProvider", "CPUExecutionProvider"]', ORT_NOTE),
  ])

# ---------------------------------------------------------------- First Order Motion Model
E("fomm_demo", "demo.py", "explicit_replacement",
  "first-order-model demo.py (face reenactment inference with sync_batchnorm DataParallelWithCallback)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("=generator.cuda()", "tensor_to_device", "replace", True, "generator.npu()", ".cuda() fails"),
      C("=kp_detector.cuda()", "tensor_to_device", "replace", True, "kp_detector.npu()", ".cuda() fails"),
      C("=checkpoint = torch.load(checkpoint_path)", "device_type", "replace", True,
        "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
        "vox-cpk.pth.tar holds CUDA tensors; without map_location torch.load tries to restore them on CUDA"),
      C("generator = DataParallelWithCallback(generator)", "distributed_framework", "replace", True,
        "generator = generator.npu()  # nn.DataParallel subclass: unsupported on Ascend",
        "torch.nn.DataParallel is not supported on NPU (Ascend API list, msFmkTransplt)"),
      C("kp_detector = DataParallelWithCallback(kp_detector)", "distributed_framework", "replace", True,
        "kp_detector = kp_detector.npu()  # nn.DataParallel subclass: unsupported on Ascend", "as above"),
      C("source = source.cuda()", "tensor_to_device", "replace", True, "source = source.npu()", ".cuda() fails"),
      C("kp_driving_initial = kp_detector(driving[:, :, 0])", "tensor_to_device", "replace", True,
        "kp_driving_initial = kp_detector(driving[:, :, 0] if cpu else driving[:, :, 0].npu())",
        "this CPU tensor only worked because DataParallel scattered it to the GPU; once DP is dropped it must be moved explicitly"),
      C("driving_frame = driving_frame.cuda()", "tensor_to_device", "replace", True, "driving_frame = driving_frame.npu()", ".cuda() fails"),
      C("device='cpu' if cpu else 'cuda')", "device_type", "replace", True, "device='cpu' if cpu else 'npu')",
        "face_alignment places its nets on this device string; 'npu' acceptance by face_alignment is unconfirmed"),
  ])

E("fomm_train", "train.py", "explicit_replacement",
  "first-order-model train.py + run.py main (DataParallelWithCallback over --device_ids)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: training would silently run on CPU"),
      C("generator_full = DataParallelWithCallback(generator_full, device_ids=device_ids)", "distributed_framework", "replace", True,
        "generator_full = generator_full.to(f'npu:{device_ids[0]}')",
        "nn.DataParallel is unsupported on NPU; single NPU here (multi-NPU needs a DDP rewrite)"),
      C("discriminator_full = DataParallelWithCallback(discriminator_full, device_ids=device_ids)", "distributed_framework", "replace", True,
        "discriminator_full = discriminator_full.to(f'npu:{device_ids[0]}')", "as above"),
      C("=for x in dataloader:", "tensor_to_device", "npu_only_addition", True,
        "x = {k: v.to(f'npu:{device_ids[0]}') if torch.is_tensor(v) else v for k, v in x.items()}",
        "DataParallel used to scatter the CPU batch onto the devices; without it the batch must be moved explicitly"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_cuda = torch.npu.is_available()",
        "False on an NPU host: models silently stay on CPU"),
      C("=generator.to(opt.device_ids[0])", "tensor_to_device", "replace", True, "generator.to(f'npu:{opt.device_ids[0]}')",
        "int device index means cuda:N"),
      C("=discriminator.to(opt.device_ids[0])", "tensor_to_device", "replace", True, "discriminator.to(f'npu:{opt.device_ids[0]}')",
        "int device index means cuda:N"),
      C("=kp_detector.to(opt.device_ids[0])", "tensor_to_device", "replace", True, "kp_detector.to(f'npu:{opt.device_ids[0]}')",
        "int device index means cuda:N"),
  ])

# ---------------------------------------------------------------- DeepfakeBench
E("dfb_train", "training/train.py", "explicit_replacement",
  "DeepfakeBench training/train.py (torch.distributed.launch, nccl, yaml configs)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
        "module-level call, raises at import time without CUDA"),
      C("torch.cuda.manual_seed_all(config['manualSeed'])", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(config['manualSeed'])", SEED_NOOP),
      C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL backend unavailable on Ascend"),
  ])

E("dfb_trainer", "training/trainer/trainer.py", "explicit_replacement",
  "DeepfakeBench training/trainer/trainer.py (module-level device, DDP, data_dict .cuda())", [
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently selects CPU on an NPU host"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "num_gpus = torch.npu.device_count()",
        "only printed; reports 0"),
      C("data_dict[key]=data_dict[key].cuda()", "tensor_to_device", "replace", True, "data_dict[key]=data_dict[key].to(device)",
        "training batch sent to CUDA"),
      C("data_dict[key] = data_dict[key].cuda()", "tensor_to_device", "replace", True, "data_dict[key] = data_dict[key].to(device)",
        "test batch sent to CUDA"),
  ])

E("dfb_train_config", "training/config/train_config.yaml", "explicit_replacement",
  "DeepfakeBench training/config/train_config.yaml (cuda/cudnn/ngpu flags) -- flags are device-neutral, no change", [])

E("dfb_train_ddp_sh", "scripts/train_ddp.sh", "explicit_replacement",
  "DeepfakeBench multi-GPU launcher script (torch.distributed.launch, NCCL env, nvidia-smi)", [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before torch_npu can load"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "device list silently ignored by CANN (GPUS=4,5,6,7 would still run on NPU 0-3)"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL tuning, ignored by HCCL"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
        "npu-smi info", "nvidia-smi is absent on an NPU host and `set -e` aborts the script"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python training/test.py \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python training/test.py \\", "device selection for the evaluation run"),
  ])

E("dfb_install_sh", "install.sh", "explicit_replacement",
  "DeepfakeBench install.sh (pip pins incl. torch 1.12.0+cu113)", [
      C("pip install torch==1.12.0+cu113", "torch_cuda_api", "replace", True,
        "pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
        "cu113 builds; torch 1.12 has no torch_npu release (1.11 / 2.1 lines do); install the matching torch_npu in the same step"),
      C("torch.cuda.is_available(), torch.backends.cudnn.version()", "torch_cuda_api", "replace", False,
        "python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.is_available())\"",
        "sanity print only (prints False/None, does not fail)"),
  ])

# ---------------------------------------------------------------- Self-Blended Images
E("sbi_train", "src/train_sbi.py", "explicit_replacement",
  "SelfBlendedImages src/train_sbi.py (EfficientNet-B4 + SAM)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOOP),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", "hard-coded CUDA device"),
      C("model = model.to('cuda')", "tensor_to_device", "replace", True, "model = model.to(device)", "CUDA device string"),
  ])

E("sbi_inference_video", "src/inference/inference_video.py", "explicit_replacement",
  "SelfBlendedImages src/inference/inference_video.py (RetinaFace crops, video-level AUC)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C('cnn_sd = torch.load(weight_name)["model"]', "device_type", "replace", True,
        'cnn_sd = torch.load(weight_name, map_location="cpu")["model"]',
        "SBI weights are saved from a CUDA model (see train_sbi.py); torch.load restores them on CUDA and raises"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", "hard-coded CUDA device"),
  ])

# ---------------------------------------------------------------- StyleGAN2 op used by face-swap decoders
E("stylegan_fused_act", "models/stylegan2/op/fused_act.py", "kernel_rewrite",
  "rosinality-style StyleGAN2 op/fused_act.py as vendored by StyleGAN-based face swapping repos (JIT cpp_extension.load of a .cu kernel)", [
      C("=fused = load(", "custom_cuda_extension", "replace", True,
        "fused = None  # no nvcc on Ascend: fused_leaky_relu uses the PyTorch expression",
        "JIT nvcc build at import time fails on an NPU host (cpp_extension.load is also marked unsupported on A2/A3)"),
      C('if input.device.type == "cpu":', "custom_cuda_extension", "replace", True,
        'if fused is None or input.device.type == "cpu":',
        "dispatch: route NPU tensors to the unfused path (bias add + leaky_relu run natively on NPU); the fused.* call sites become dead code"),
  ])

# ---------------------------------------------------------------- DFDC winner-style EfficientNet classifier
E("dfdc_train_classifier", "training/pipelines/train_classifier.py", "explicit_replacement",
  "DFDC-winner-style training/pipelines/train_classifier.py (EfficientNet, torch.cuda.amp, nccl/DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable"),
      C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None, "CUDA-only enumeration setting, ignored"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "--gpu device selection silently ignored"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails"),
      C("loss_fn.append(losses.__dict__[loss_name](reduction=reduction).cuda())", "tensor_to_device", "replace", True,
        "loss_fn.append(losses.__dict__[loss_name](reduction=reduction).npu())", ".cuda() initialises CUDA even for a parameter-free loss"),
      C("state_dict = {k[7:]: w for k, w in state_dict.items()}", "distributed_framework", "replace", True,
        "state_dict = {(k[7:] if k.startswith('module.') else k): w for k, w in state_dict.items()}",
        "strips the DataParallel 'module.' prefix blindly; NPU checkpoints saved without DP would lose 7 chars per key and load nothing (strict=False)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_NOOP),
      C("model = DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
        "torch.nn.DataParallel is unsupported on NPU; single device (or DDP with --distributed)"),
      C("encoder = model.module.encoder", "distributed_framework", "replace", True,
        "encoder = model.module.encoder if hasattr(model, 'module') else model.encoder",
        "relies on the DataParallel wrapper's .module, which is gone in the non-distributed NPU path"),
      C('=imgs = sample["image"].cuda()', "tensor_to_device", "replace", True, 'imgs = sample["image"].npu()', ".cuda() fails"),
      C('=labels = sample["labels"].cuda().float()', "tensor_to_device", "replace", True, 'labels = sample["labels"].npu().float()', ".cuda() fails"),
      C('valid_idx = sample["valid"].cuda().float() > 0', "tensor_to_device", "replace", True,
        'valid_idx = sample["valid"].npu().float() > 0', ".cuda() fails"),
      C("with torch.cuda.amp.autocast(enabled=scaler.is_enabled()):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=scaler.is_enabled()):", AMP_NOOP),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "initialises CUDA and raises"),
      C('imgs = sample["image"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
        'imgs = sample["image"].npu(non_blocking=True)', "validation batch"),
      C('labels = sample["labels"].cuda(non_blocking=True).float()', "tensor_to_device", "replace", True,
        'labels = sample["labels"].npu(non_blocking=True).float()', "validation labels"),
  ])

# ---------------------------------------------------------------- InstantID
E("instantid_infer", "infer.py", "explicit_replacement",
  "InstantID infer.py (SDXL + IdentityNet ControlNet, insightface antelopev2, xformers)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, ADD_IMPORT, "entry script: register the NPU backend"),
      C("app = FaceAnalysis(name='antelopev2', root='./', providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])", "device_type", "replace", False,
        "app = FaceAnalysis(name='antelopev2', root='./', providers=['CANNExecutionProvider', 'CPUExecutionProvider'])", ORT_NOTE),
      C("total_mem = torch.cuda.get_device_properties(0).total_memory", "device_capability_check", "replace", True,
        "total_mem = torch.npu.get_device_properties(0).total_memory",
        "raises without CUDA; NPU device properties do expose total_memory"),
      C("pipe.enable_model_cpu_offload()", "device_type", "replace", True, "pipe.enable_model_cpu_offload(device='npu')",
        "diffusers' offload hooks default to device='cuda' (runs with --lowvram or on <20GB cards)"),
      C("=pipe.cuda()", "tensor_to_device", "replace", True, "pipe.to('npu')", "moves the whole pipeline to CUDA"),
      C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None,
        "xformers has no NPU backend and this call raises; diffusers' default SDPA processor already dispatches to the NPU FA kernel"),
      C('generator = torch.Generator(device="cuda").manual_seed(args.seed)', "device_type", "replace", True,
        'generator = torch.Generator(device="npu").manual_seed(args.seed)', "CUDA generator cannot be created"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "end-of-script cleanup; no-op without CUDA"),
  ])
