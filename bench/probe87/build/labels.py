"""Labels for probe87 (hand-written synthetic upstream files; see ../README.md).

Domain: image / video matting, background removal and inpainting apps.

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

IMPORT_NOTE = ("torch.npu.* and the 'npu' device need torch_npu loaded (explicit import recommended even with "
               "the >=2.5.1 autoload)")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op without CUDA; the NPU caching allocator keeps "
                    "its blocks, which only matters for peak memory")
CANN_EP_NOTE = ("unconfirmed: onnxruntime's Ascend execution provider (CANN EP, onnxruntime built with CANN) is not "
                "covered by /work/shared/knowledge; unchanged, no CUDA EP is found and rembg silently runs on the "
                "CPU EP (correct results, slower)")

# ---------------------------------------------------------------------------------------------------------------
# rembg / transparent-background (background removal)
# ---------------------------------------------------------------------------------------------------------------

E("rembg_sessions_base", "rembg/sessions/base.py", "explicit_replacement",
  "danielgatis/rembg sessions/base.py + new_session (onnxruntime execution-provider selection)", [
    C('="CUDAExecutionProvider",', "device_type", R, False, '"CANNExecutionProvider",', CANN_EP_NOTE),
    C('elif ort.get_device() == "GPU" and "CUDAExecutionProvider" in available:', "device_type", R, False,
      'elif "CANNExecutionProvider" in available:',
      "ort.get_device() reports 'CPU' on an NPU host, so this branch is skipped; " + CANN_EP_NOTE),
    C('chosen = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", R, False,
      'chosen = ["CANNExecutionProvider", "CPUExecutionProvider"]', CANN_EP_NOTE),
    C('if provider == "CUDAExecutionProvider":', "device_type", R, False,
      'if provider == "CANNExecutionProvider":',
      "the option dict is CUDA-EP specific (cudnn_conv_algo_search, gpu_mem_limit); the CANN EP option names are "
      "unconfirmed here"),
]),

E("rembg_setup", "setup.py", "explicit_replacement",
  "danielgatis/rembg setup.py (cpu / gpu / rocm onnxruntime extras)", [
    C('"gpu": ["onnxruntime-gpu>=1.17"],', "custom_cuda_extension", A, False, '"npu": ["onnxruntime-cann"],',
      "an extra for the Ascend build of onnxruntime; unconfirmed (package name and CANN EP not in the knowledge); "
      "the cpu extra keeps working on an NPU host"),
]),

E("transparent_bg_remover", "transparent_background/Remover.py", "explicit_replacement",
  "plemeri/transparent-background Remover.py (InSPyReNet remover, device auto-pick, fp16, CLI)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on an NPU host: the auto-selected device stays 'cpu'"),
    C('self.device = "cuda:0"', "device_type", R, True, 'self.device = "npu:0"', "device string cuda -> npu"),
    C('if self.fp16 and "cuda" in str(self.device):', "device_type", R, True,
      'if self.fp16 and str(self.device).startswith(("cuda", "npu")):',
      "string test on the device name: --fp16 is silently ignored on npu:0 and the network runs in fp32"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "CUDA autocast is inactive for NPU tensors (fp32 run although fp16 was requested)"),
]),

# ---------------------------------------------------------------------------------------------------------------
# RobustVideoMatting
# ---------------------------------------------------------------------------------------------------------------

E("rvm_inference", "inference.py", "transfer_to_npu",
  "PeterL1n/RobustVideoMatting inference.py (convert_video + TorchScript-frozen Converter, --device cuda)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "the script is driven with --device cuda; transfer_to_npu rewrites the device strings passed to .to(), "
      "torch.load(map_location=...) and torch.tensor(device=...)"),
    C("self.model = torch.jit.freeze(self.model)", "compile_mode", X, True, None,
      "under transfer_to_npu torch.jit.script returns the module unchanged (knowledge §2.6); torch.jit.freeze "
      "then raises because its input is not a ScriptModule"),
]),

E("rvm_train", "train.py", "explicit_replacement",
  "PeterL1n/RobustVideoMatting train.py (mp.spawn + DDP, torch.cuda.amp, integer-rank .to())", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", R, True,
      "from torch.npu.amp import autocast, GradScaler",
      "CUDA autocast / GradScaler are inactive for NPU tensors: mixed precision and loss scaling silently off "
      "(every autocast(...) call site then works unchanged)"),
    C('dist.init_process_group("nccl"', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL -> HCCL"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)", ""),
    C("pretrained_backbone=True).to(self.rank)", "tensor_to_device", R, True,
      "self.model = MattingNetwork(self.args.model_variant, pretrained_backbone=True).to(f'npu:{self.rank}')",
      "a bare int in .to() is a CUDA device index"),
    C("map_location=f'cuda:{self.rank}'", "device_type", R, True,
      "torch.load(self.args.checkpoint, map_location=f'npu:{self.rank}')))", "device string cuda -> npu"),
    C("self.optimizer = Adam([", "fused_optimizer", R, False, "self.optimizer = torch_npu.optim.NpuFusedAdam([",
      "performance only (msFmkTransplt advice); param groups with per-group lr are supported"),
    C("true_fgr = true_fgr.to(self.rank", "tensor_to_device", R, True,
      "true_fgr = true_fgr.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("true_pha = true_pha.to(self.rank", "tensor_to_device", R, True,
      "true_pha = true_pha.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("true_bgr = true_bgr.to(self.rank", "tensor_to_device", R, True,
      "true_bgr = true_bgr.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("true_img = true_img.to(self.rank", "tensor_to_device", R, True,
      "true_img = true_img.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("true_seg = true_seg.to(self.rank", "tensor_to_device", R, True,
      "true_seg = true_seg.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("val_fgr = val_fgr.to(self.rank", "tensor_to_device", R, True,
      "val_fgr = val_fgr.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("val_pha = val_pha.to(self.rank", "tensor_to_device", R, True,
      "val_pha = val_pha.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("val_bgr = val_bgr.to(self.rank", "tensor_to_device", R, True,
      "val_bgr = val_bgr.to(f'npu:{self.rank}', non_blocking=True)", "int index = CUDA device"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "world_size = torch.npu.device_count()", "0 on an NPU host: mp.spawn starts no trainer at all"),
]),

E("rvm_speed_test", "inference_speed_test.py", "explicit_replacement",
  "PeterL1n/RobustVideoMatting inference_speed_test.py (CUDA-event latency, TorchScript, peak memory)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.device = 'cuda'", "device_type", R, True, "self.device = 'npu'", "device string cuda -> npu"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "needs a CUDA build: raises on an NPU host"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "raises without a CUDA build"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", R, False,
      "peak_mb = torch.npu.max_memory_allocated() / 2**20",
      "returns 0 while CUDA is uninitialised: a wrong number in the report, not a failure"),
    C("torch.cuda.get_device_name()", "torch_cuda_api", R, True,
      "print(f'device      : {torch.npu.get_device_name()}')", "initialises CUDA: raises on an NPU host"),
]),

# ---------------------------------------------------------------------------------------------------------------
# MODNet
# ---------------------------------------------------------------------------------------------------------------

DP_NOTE = ("torch.nn.DataParallel is ✘ in Ascend's support list (use the bare module, or DDP); the released "
           "checkpoint keys carry DataParallel's 'module.' prefix, so the load has to strip it")

E("modnet_image_infer", "demo/image_matting/colab/inference.py", "explicit_replacement",
  "ZHKKKe/MODNet demo/image_matting/colab/inference.py (DataParallel + is_available branches)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("modnet = nn.DataParallel(modnet)", "unsupported_op_workaround", X, True, None, DP_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on an NPU host: the matting runs on the CPU"),
    C("modnet = modnet.cuda()", "tensor_to_device", R, True, "modnet = modnet.npu()", ".cuda() -> .npu()"),
    C("weights = torch.load(args.ckpt_path)", "device_type", R, True,
      "weights = torch.load(args.ckpt_path, map_location='cpu')",
      "the checkpoint holds CUDA tensors; without map_location torch.load restores them onto CUDA and fails"),
    C("modnet.load_state_dict(weights)", "unsupported_op_workaround", R, True,
      "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in weights.items()})",
      "consequence of dropping DataParallel: strip the 'module.' prefix"),
    C("modnet(im.cuda() if torch.cuda.is_available() else im, True)", "tensor_to_device", R, True,
      "_, _, matte = modnet(im.npu() if torch.npu.is_available() else im, True)",
      "both the is_available() test and .cuda() on the input"),
]),

E("modnet_webcam", "demo/video_matting/webcam/run.py", "explicit_replacement",
  "ZHKKKe/MODNet demo/video_matting/webcam/run.py (real-time webcam matting, GPU flag from device_count)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("modnet = nn.DataParallel(modnet)", "unsupported_op_workaround", X, True, None, DP_NOTE),
    C("GPU = True if torch.cuda.device_count() > 0 else False", "torch_cuda_api", R, True,
      "GPU = True if torch.npu.device_count() > 0 else False",
      "0 on an NPU host: the webcam loop silently runs on the CPU"),
    C("modnet = modnet.cuda()", "tensor_to_device", R, True, "modnet = modnet.npu()", ".cuda() -> .npu()"),
    C("modnet.load_state_dict(torch.load(pretrained_ckpt))", "device_type", R, True,
      "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in "
      "torch.load(pretrained_ckpt, map_location='cpu').items()})",
      "CUDA-saved checkpoint loaded without map_location (and 'module.' keys once DataParallel is gone)"),
    C("modnet.load_state_dict(torch.load(pretrained_ckpt, map_location=torch.device('cpu')))",
      "unsupported_op_workaround", R, False,
      "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in "
      "torch.load(pretrained_ckpt, map_location='cpu').items()})",
      "CPU fallback branch, not taken on an NPU host; only needs the prefix strip once DataParallel is removed"),
    C("frame_tensor = frame_tensor.cuda()", "tensor_to_device", R, True, "frame_tensor = frame_tensor.npu()",
      ".cuda() -> .npu()"),
]),

# ---------------------------------------------------------------------------------------------------------------
# LaMa and its front-ends
# ---------------------------------------------------------------------------------------------------------------

E("inpaint_anything_lama", "lama_inpaint.py", "explicit_replacement",
  "geekyutao/Inpaint-Anything lama_inpaint.py (LaMa predict wrapper used by the remove-anything CLI / app)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('=device="cuda"', "device_type", R, False, 'device="npu"',
      "default only: every caller in the repo passes device explicitly"),
    C('device: str = "cuda"', "device_type", R, False, 'device: str = "npu"',
      "default only: the Gradio app passes device explicitly"),
    C('device="cuda:0"', "device_type", R, False, 'device="npu:0"',
      "default only: the Gradio app passes device explicitly"),
    C("model = load_checkpoint(train_config, checkpoint_path, strict=False)", "device_type", R, True,
      "model = load_checkpoint(train_config, checkpoint_path, strict=False, map_location='cpu')",
      "LaMa's load_checkpoint() defaults to map_location='cuda': the CUDA spelling is in another package's "
      "default argument, this call site is where it has to be overridden"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "False on an NPU host: LaMa runs on the CPU"),
]),

E("lama_train", "bin/train.py", "explicit_replacement",
  "advimman/lama bin/train.py (hydra + PyTorch Lightning, DDP strategy, native AMP plugin)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("trainer_kwargs['accelerator'] = 'gpu'", "distributed_framework", R, True,
      "trainer_kwargs['accelerator'] = NPUAccelerator()  # Lightning Accelerator wrapping torch.npu",
      "Lightning's 'gpu' accelerator needs CUDA and refuses to start on an NPU host; Lightning ships no NPU "
      "accelerator, which plugin/class to use is unconfirmed here"),
    C("trainer_kwargs['devices'] = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "trainer_kwargs['devices'] = torch.npu.device_count()", "0 on an NPU host"),
    C("process_group_backend='nccl',", "dist_backend", R, True, "process_group_backend='hccl',",
      "NCCL -> HCCL (passed as a Lightning strategy argument)"),
    C("scaler = torch.cuda.amp.GradScaler(init_scale=", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(init_scale=2.**14, growth_interval=1000)",
      "CUDA GradScaler is inactive for NPU tensors"),
    C("plugins.append(NativeMixedPrecisionPlugin(16, 'cuda', scaler=scaler))", "amp", R, True,
      "plugins.append(NativeMixedPrecisionPlugin(16, 'npu', scaler=scaler))",
      "the plugin's autocast device type: 'cuda' autocast is inactive for NPU tensors, precision=16 would "
      "silently train in fp32 (whether this Lightning version accepts 'npu' is unconfirmed)"),
]),

E("lama_refinement", "saicinpainting/evaluation/refinement.py", "explicit_replacement",
  "advimman/lama saicinpainting/evaluation/refinement.py (feature refinement split across gpu_ids)", [
    C("gpu_ids = [f'cuda:{gpuid}'", "device_type", R, True,
      "gpu_ids = [f'npu:{gpuid}' for gpuid in gpu_ids.replace(\" \", \"\").split(\",\") if gpuid.isdigit()]",
      "refiner.gpu_ids ('0,1') from the prediction config become CUDA devices here"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE + " (the refiner is memory-bound at high resolution)"),
]),

E("lama_ffc", "saicinpainting/training/modules/ffc.py", "explicit_replacement",
  "advimman/lama saicinpainting/training/modules/ffc.py (FFC, FourierUnit pinned to fp32 under AMP)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      'with torch.autocast("npu", enabled=False):',
      "a CUDA autocast context does not touch the NPU autocast state: under NPU fp16 training the spectral "
      "conv/BN run in half, torch.complex builds a complex-half tensor and irfftn gets it (Ascend lists "
      "torch.fft.rfftn as fp32-only)"),
]),

E("lama_train_yaml", "configs/training/big-lama-ft-fp16.yaml", "explicit_replacement",
  "advimman/lama configs/training/big-lama-fourier.yaml as an fp16 fine-tune config (hydra env_set, "
  "Lightning trainer kwargs)", [
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3"',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; exported by hydra to every DDP worker"),
    C('NCCL_P2P_DISABLE: "1"', "env_var", X, False, None, "NCCL-only knob, ignored by HCCL"),
    C("gpus: -1", "device_type", R, False, "devices: -1",
      "cosmetic once bin/train.py is ported: it maps gpus=-1 to the NPU count"),
]),

E("lama_conda_env", "conda_env.yml", "explicit_replacement",
  "advimman/lama conda_env.yml (pytorch 1.8 + cudatoolkit 10.2 build-string pins)", [
    C("- cudatoolkit=10.2.89=hfd86e86_1", "device_type", X, True, None,
      "CUDA runtime; only needed by the CUDA build of pytorch"),
    C("- pytorch=1.8.0=py3.6_cuda10.2_cudnn7.6.5_0", "device_type", R, True, "- pytorch=2.1.0=*cpu*",
      "CUDA build of torch 1.8.0, which has no torch_npu release; torch_npu needs the CPU build of a supported "
      "torch (2.1.0 <-> torch-npu 2.1.0.postN), which in turn needs python >= 3.8"),
    C("- torchvision=0.9.0=py36_cu102", "device_type", R, True, "- torchvision=0.16.0=*cpu*",
      "cu102 build; must match the new torch"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12",
      "torch_npu itself is pip-only; added at the top of the pip list"),
]),

# ---------------------------------------------------------------------------------------------------------------
# MAT (StyleGAN2-ADA code base)
# ---------------------------------------------------------------------------------------------------------------

E("mat_train", "train.py", "explicit_replacement",
  "fenglinglwb/MAT train.py (StyleGAN2-ADA click launcher, spawn + file:// NCCL init)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl', init_method=init_method, rank=rank, "
      "world_size=args.num_gpus)", "NCCL -> HCCL (the gloo branch is Windows-only)"),
    C("sync_device = torch.device('cuda', rank)", "device_type", R, True,
      "sync_device = torch.device('npu', rank) if args.num_gpus > 1 else None",
      "training_stats reduces its counters on this device"),
    C("args.G_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam'", "fused_optimizer", R, False,
      "args.G_opt_kwargs = dnnlib.EasyDict(class_name='torch_npu.optim.NpuFusedAdam', lr=spec.lrate, "
      "betas=[0, 0.99], eps=1e-8)",
      "performance only (msFmkTransplt advice: NpuFused* optimizers); the optimizer is named by a string that "
      "dnnlib resolves at run time"),
    C("args.D_opt_kwargs = dnnlib.EasyDict(class_name='torch.optim.Adam'", "fused_optimizer", R, False,
      "args.D_opt_kwargs = dnnlib.EasyDict(class_name='torch_npu.optim.NpuFusedAdam', lr=spec.lrate, "
      "betas=[0, 0.99], eps=1e-8)", "performance only, as above"),
]),

E("mat_training_loop", "training/training_loop.py", "explicit_replacement",
  "fenglinglwb/MAT training/training_loop.py (mask-aware StyleGAN2-ADA loop, CUDA-event phase timing)", [
    C("device = torch.device('cuda', rank)", "device_type", R, True, "device = torch.device('npu', rank)",
      "every network, tensor and the loss live on this device"),
    C("phase.start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "phase.start_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("phase.end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "phase.end_event = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C(".pin_memory().to(device)", "pin_memory", R, False,
      "all_gen_c = torch.from_numpy(np.stack(all_gen_c)).to(device)",
      "unconfirmed: whether a bare Tensor.pin_memory() pins for the NPU under torch_npu; dropping it is safe "
      "for this small label tensor"),
    C("phase.start_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", R, True,
      "phase.start_event.record(torch.npu.current_stream(device))", ""),
    C("phase.end_event.record(torch.cuda.current_stream(device))", "torch_cuda_api", R, True,
      "phase.end_event.record(torch.npu.current_stream(device))", ""),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      "fields += [f\"gpumem {training_stats.report0('Resources/peak_gpu_mem_gb', "
      "torch.npu.max_memory_allocated(device) / 2**30):<6.2f}\"]",
      "reads 0 while CUDA is uninitialised: wrong log value, no failure"),
    C("torch.cuda.max_memory_reserved(device)", "torch_cuda_api", R, False,
      "fields += [f\"reserved {training_stats.report0('Resources/peak_gpu_mem_reserved_gb', "
      "torch.npu.max_memory_reserved(device) / 2**30):<6.2f}\"]",
      "reads 0 while CUDA is uninitialised: wrong log value, no failure"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "raises without a CUDA build"),
]),

E("mat_custom_ops", "torch_utils/custom_ops.py", "explicit_replacement",
  "fenglinglwb/MAT torch_utils/custom_ops.py (StyleGAN JIT plugin builder for bias_act / upfirdn2d)", [
    C("name = torch.cuda.get_device_name().lower()", "torch_cuda_api", R, False,
      "name = torch.npu.get_device_name().lower()",
      "only used to name the plugin build cache, which is never built for NPU tensors"),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", R, False,
      "major, minor = 0, 0  # no nvcc arch on Ascend",
      "only reached while building a CUDA plugin, which the callers never do for NPU tensors"),
    C("os.environ['TORCH_CUDA_ARCH_LIST'] = _default_arch_list()", "env_var", X, False, None,
      "nvcc architecture list; meaningless for an Ascend build and never reached for NPU tensors"),
    C("torch.utils.cpp_extension.load(name=module_name, build_directory=cached_build_dir,",
      "custom_cuda_extension", R, False,
      "torch_npu.utils.cpp_extension.NpuExtension(...)  # Ascend C port of the plugin",
      "never reached on NPU: bias_act/upfirdn2d call get_plugin() only for x.device.type == 'cuda' and "
      "otherwise use the torch reference path; a kernel port would be a performance rewrite"),
    C("torch.utils.cpp_extension.load(name=module_name, verbose=verbose_build", "custom_cuda_extension", R, False,
      "torch_npu.utils.cpp_extension.NpuExtension(...)  # Ascend C port of the plugin",
      "same as above (cpp_extension.load is also ✘ on A2/A3 in Ascend's list)"),
]),

# ---------------------------------------------------------------------------------------------------------------
# ProPainter (+ RAFT, Gradio demo)
# ---------------------------------------------------------------------------------------------------------------

E("propainter_inference", "inference_propainter.py", "explicit_replacement",
  "sczhou/ProPainter inference_propainter.py (RAFT flows, flow completion, propagation, fp16 option)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      IMPORT_NOTE + "; get_device() in model/misc.py returns the NPU once ported"),
    C("device = get_device()", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "Ascend performance advice for dynamic shapes: every video brings its own resolution and clip lengths"),
    C("torch.cuda.empty_cache()  # RAFT correlation", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # RAFT correlation volumes are large", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # after single-clip RAFT", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # after single-clip RAFT", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # per flow-completion", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # per flow-completion sub-video", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # per propagation", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # per propagation sub-video", EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # per transformer", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # per transformer window", EMPTY_CACHE_NOTE),
]),

E("propainter_misc", "model/misc.py", "explicit_replacement",
  "sczhou/ProPainter model/misc.py (get_device / gpu_is_available, seeding) + BasicSR-style init_dist", [
    C("return True if torch.cuda.is_available() and torch.backends.cudnn.is_available() else False",
      "torch_cuda_api", R, True, "return True if torch.npu.is_available() else False",
      "False on an NPU host: callers take their CPU path"),
    C("return torch.device('cuda' + gpu_str", "device_type", R, True,
      "return torch.device('npu' + gpu_str if torch.npu.is_available() else 'cpu')",
      "get_device() returns cpu on an NPU host, so inference and the demo run on the CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued, harmless without CUDA; torch.manual_seed above already seeds the NPU generator "
      "(unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless without CUDA"),
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", R, True,
      "def init_dist(launcher, backend='hccl', **kwargs):", "callers rely on the default backend"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: rank % 0 raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True, "torch.npu.set_device(rank % num_gpus)",
      ""),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "gpus_per_node = torch.npu.device_count()", "0 on an NPU host (slurm launcher)"),
    C("torch.cuda.set_device(proc_id % gpus_per_node)", "torch_cuda_api", R, True,
      "torch.npu.set_device(proc_id % gpus_per_node)", ""),
]),

E("propainter_flow_raft", "model/modules/flow_comp_raft.py", "explicit_replacement",
  "sczhou/ProPainter model/modules/flow_comp_raft.py (RAFT loaded through a DataParallel wrapper)", [
    C("def initialize_RAFT(model_path='weights/raft-things.pth', device='cuda'):", "device_type", R, False,
      "def initialize_RAFT(model_path='weights/raft-things.pth', device='npu'):",
      "default only: every caller passes device"),
    C("model = torch.nn.DataParallel(RAFT(args))", "unsupported_op_workaround", R, True, "model = RAFT(args)",
      "DataParallel is ✘ in Ascend's list; here it only exists to match the 'module.' keys of the released "
      "RAFT weights"),
    C("model.load_state_dict(torch.load(args.raft_model, map_location='cpu'))", "unsupported_op_workaround", R,
      True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in "
      "torch.load(args.raft_model, map_location='cpu').items()})",
      "consequence of dropping the wrapper: strip the prefix instead"),
    C("=model = model.module", "unsupported_op_workaround", X, True, None, "no wrapper left to unwrap"),
    C("def __init__(self, model_path='weights/raft-things.pth', device='cuda'):", "device_type", R, False,
      "def __init__(self, model_path='weights/raft-things.pth', device='npu'):",
      "default only: inference and trainer pass device"),
]),

E("propainter_train", "train.py", "explicit_replacement",
  "sczhou/ProPainter train.py (E2FGVI-style launcher: mp.spawn or OpenMPI, GPU count from the environment)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(int(config['local_rank']))", "torch_cuda_api", R, True,
      "torch.npu.set_device(int(config['local_rank']))", ""),
    C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl',", "NCCL -> HCCL"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on an NPU host: config['device'] becomes 'cpu'"),
    C("config['device'] = torch.device(\"cuda:{}\".format(config['local_rank']))", "device_type", R, True,
      "config['device'] = torch.device(\"npu:{}\".format(config['local_rank']))", ""),
    C("visible = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", R, True,
      "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
      "the NPU runtime honours ASCEND_RT_VISIBLE_DEVICES; the CUDA variable is not set by Ascend schedulers"),
    C("out = subprocess.check_output(['nvidia-smi', '--list-gpus'], text=True)", "torch_cuda_api", R, True,
      "out = subprocess.check_output(['npu-smi', 'info', '-l'], text=True)",
      "nvidia-smi does not exist on an NPU host; the fallback below then counts 0 devices"),
    C("return len([l for l in out.splitlines() if l.startswith('GPU')])", "torch_cuda_api", R, True,
      "return len([l for l in out.splitlines() if l.strip().startswith('NPU ID')])",
      "`npu-smi info -l` prints one 'NPU ID : n' line per device"),
    C("return torch.cuda.device_count()", "torch_cuda_api", R, True, "return torch.npu.device_count()",
      "0 on an NPU host: world_size 0, mp.spawn starts nothing"),
]),

E("propainter_gradio", "web-demos/hugging_face/app.py", "explicit_replacement",
  "sczhou/ProPainter web-demos/hugging_face/app.py (Gradio: SAM click masks, Cutie tracking, ProPainter)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("len(masks), torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", R, False,
      "len(masks), torch.npu.max_memory_allocated() / 1024 ** 3))",
      "log line only: reads 0 without CUDA"),
    C("torch.cuda.empty_cache()  # release ProPainter", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release ProPainter activations between requests", EMPTY_CACHE_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "on an NPU host the per-process memory cap is silently skipped; the demo still works"),
    C("torch.cuda.set_per_process_memory_fraction(0.9, 0)", "torch_cuda_api", R, False,
      "torch.npu.set_per_process_memory_fraction(0.9, 0)", "only reached once the guard above is ported"),
]),

# ---------------------------------------------------------------------------------------------------------------
# MatAnyone / SAM2 (video matting with first-frame masks)
# ---------------------------------------------------------------------------------------------------------------

E("matanyone_infer", "inference_matanyone.py", "explicit_replacement",
  "pq-yang/MatAnyone inference_matanyone.py (decorator-form autocast, warm-up frames)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless without CUDA"),
    C('@torch.amp.autocast("cuda")', "amp", R, True, '@torch.amp.autocast("npu")',
      "decorator form: CUDA autocast is inactive for NPU tensors, the whole video silently runs in fp32"),
    C('save_image=False, max_size=-1, device="cuda"):', "device_type", R, False,
      'def main(input_path, mask_path, output_path, ckpt_path, n_warmup=10, r_erode=10, r_dilate=10, '
      'suffix="", save_image=False, max_size=-1, device="npu"):',
      "default only: __main__ always passes --device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("default=\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", R, True,
      "parser.add_argument('--device', type=str, default=\"npu\" if torch.npu.is_available() else \"cpu\")",
      "False on an NPU host: MatAnyone runs on the CPU by default"),
]),

E("sam2_transformer", "sam2/modeling/sam/transformer.py", "explicit_replacement",
  "facebookresearch/sam2 modeling/sam/transformer.py vendored into a matting demo (inlined get_sdpa_settings, "
  "sdp_kernel with try/except fallback)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "the settings only feed sdp_kernel below; on an NPU host the else branch (math + mem-efficient) is "
      "harmless"),
    C("old_gpu = torch.cuda.get_device_properties(0).major < 7", "device_capability_check", R, False,
      "old_gpu = False",
      "not reached without CUDA; NPU device properties carry no major/minor anyway"),
    C("use_flash_attn = torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, False,
      "use_flash_attn = True",
      "not reached without CUDA; NPU device properties carry no major/minor anyway"),
    C("return torch.backends.cuda.sdp_kernel(", "attention_kernel", R, False,
      "return contextlib.nullcontext()  # SDPA dispatches to the NPU fused kernel itself",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's list, but every caller wraps it in try/except and "
      "retries with all kernels, so at worst one warning"),
]),

# ---------------------------------------------------------------------------------------------------------------
# IOPaint (lama-cleaner) CLI / server
# ---------------------------------------------------------------------------------------------------------------

E("iopaint_cli", "iopaint/cli.py", "explicit_replacement",
  "Sanster/IOPaint iopaint/cli.py (typer CLI, Device enum, check_device fallback to CPU)", [
    C('=cuda = "cuda"', "device_type", A, True, 'npu = "npu"',
      "typer only accepts enum members: --device npu is rejected without a new member"),
    C("if device == Device.cuda:", "import_torch_npu", B, True,
      "if device == Device.npu:\n        import torch, torch_npu\n        if not torch.npu.is_available(): "
      "return Device.cpu\n    elif device == Device.cuda:",
      "the npu branch is where torch_npu gets imported before any model is built"),
    C("cpu_textencoder=cpu_textencoder if device == Device.cuda else False,", "device_type", R, False,
      "cpu_textencoder=cpu_textencoder if device in (Device.cuda, Device.npu) else False,",
      "--cpu-textencoder is silently dropped on NPU: more device memory, same images"),
]),

E("iopaint_model_utils", "iopaint/model/utils.py", "explicit_replacement",
  "Sanster/IOPaint iopaint/model/utils.py (torch_gc, get_torch_dtype, diffusers memory helpers)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless without CUDA"),
    C('use_gpu = device == "cuda"', "device_type", R, False, 'use_gpu = device in ("cuda", "npu")',
      "only gates --cpu-offload, which is then silently ignored on NPU"),
    C('if device in ["cuda", "mps"] and use_fp16:', "device_type", R, True,
      'if device in ["cuda", "npu", "mps"] and use_fp16:',
      "SD models silently load in fp32 on an NPU (twice the memory, slower) although --no-half was not given"),
    C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", R, False,
      "pipe.enable_attention_slicing()  # xformers has no NPU backend; SDPA is already the default",
      "only with an explicit user flag; xformers has no NPU backend"),
    C("pipe.enable_sequential_cpu_offload(gpu_id=0)", "device_type", R, False,
      'pipe.enable_sequential_cpu_offload(gpu_id=0, device="npu")',
      "reached only once use_gpu is ported; diffusers offloads to 'cuda' unless told otherwise (unconfirmed for "
      "the pinned diffusers version)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "torch_gc silently skips the cache release on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", R, False, "torch.npu.ipc_collect()",
      "not reached without CUDA (guarded)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, False, "if not torch.npu.is_available():",
      "cosmetic: the web UI shows no memory info on NPU"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, False,
      "free, total = torch.npu.mem_get_info()", "only reached once the guard above is ported"),
]),

# ---------------------------------------------------------------------------------------------------------------
# BiRefNet
# ---------------------------------------------------------------------------------------------------------------

E("birefnet_train", "train.py", "explicit_replacement",
  "ZhengPeng7/BiRefNet train.py (torchrun DDP or accelerate with an explicit NCCL kwargs handler, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda import amp", "amp", R, True, "from torch_npu.npu import amp",
      "module-alias spelling: amp.GradScaler / amp.autocast below stay CUDA-only and are inactive for NPU "
      "tensors (config.mixed_precision defaults to fp16)"),
    C('utils.InitProcessGroupKwargs(backend="nccl"', "dist_backend", R, True,
      'utils.InitProcessGroupKwargs(backend="hccl", timeout=datetime.timedelta(seconds=3600*10)),',
      "accelerate itself knows NPUs, but this handler forces NCCL"),
    C('init_process_group(backend="nccl", timeout=datetime', "dist_backend", R, True,
      'init_process_group(backend="hccl", timeout=datetime.timedelta(seconds=3600*10))', "NCCL -> HCCL"),
    C('device = int(os.environ["LOCAL_RANK"])', "device_type", R, True,
      'device = torch.device("npu", int(os.environ["LOCAL_RANK"]))',
      "a bare int in .to()/DDP(device_ids=...) is a CUDA index"),
    C("optimizer = optim.AdamW(params=model.parameters(), lr=config.lr, weight_decay=1e-2)", "fused_optimizer", R,
      False, "optimizer = torch_npu.optim.NpuFusedAdamW(params=model.parameters(), lr=config.lr, weight_decay=1e-2)",
      "performance only (msFmkTransplt advice: faster, more memory)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
]),

E("birefnet_deform", "models/modules/deform_conv.py", "explicit_replacement",
  "ZhengPeng7/BiRefNet models/modules/deform_conv.py (DCNv2 via torchvision.ops.deform_conv2d, ASPPDeformable)", [
    C("from torchvision.ops import deform_conv2d", "custom_cuda_extension", A, False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.deform_conv2d",
      "torchvision's deform_conv2d has CPU/CUDA kernels only; on NPU it falls back to the CPU (host round "
      "trip, slow) unless torchvision_npu registers its NPU kernel"),
]),

E("e2fgvi_model", "model/e2fgvi_hq.py", "explicit_replacement",
  "MCG-NKU/E2FGVI model/e2fgvi_hq.py (flow-guided deformable alignment on mmcv-full ops)", [
    C("from mmcv.ops import ModulatedDeformConv2d, modulated_deform_conv2d", "custom_cuda_extension", R, True,
      "from model.modules.dcn_npu import ModulatedDeformConv2d, modulated_deform_conv2d  # torchvision_npu shim",
      "mmcv-full's mmcv._ext is built with nvcc and cannot be built/loaded on an NPU host; alternatives are an "
      "Ascend build of mmcv (unconfirmed here), a same-signature shim over torchvision_npu's deform_conv2d, or "
      "torch_npu.contrib.module.ModulatedDeformConv"),
    C("return modulated_deform_conv2d(x, offset, mask, self.weight, self.bias,", "custom_cuda_extension", R, False,
      "return deform_conv2d(x, offset, self.weight, self.bias, self.stride, self.padding, self.dilation, mask)",
      "call site of the mmcv CUDA op: unchanged if the import is redirected to a same-signature shim, edited "
      "when calling torchvision's deform_conv2d directly"),
]),

# ---------------------------------------------------------------------------------------------------------------
# Files around the code
# ---------------------------------------------------------------------------------------------------------------

E("iopaint_dockerfile", "docker/GPUDockerfile", "explicit_replacement",
  "Sanster/IOPaint docker/GPUDockerfile (nvidia/cuda base, cu118 wheels, GPU-check entrypoint)", [
    C("FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the image needs the CANN toolkit for torch_npu (base-image tag unconfirmed)"),
    C("RUN pip3 install torch==2.1.2 torchvision==0.16.2 --extra-index-url", "device_type", R, True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip3 install torch-npu==2.1.0.post12",
      "CUDA wheels of a torch version (2.1.2) that has no torch_npu release"),
    C("RUN pip3 install xformers==0.0.23.post1", "attention_kernel", X, False, None,
      "xformers has no NPU backend (only used on request for pre-Ampere GPUs); that its cu118 wheel would also "
      "pull torch==2.1.2 over the torch that torch_npu pairs with is unconfirmed"),
    C("pip3 install onnxruntime-gpu==1.16.3", "custom_cuda_extension", R, False,
      "RUN pip3 install iopaint==${version} && pip3 install onnxruntime==1.16.3",
      "used by the remove-bg plugin; the CUDA EP is unusable on NPU and onnxruntime falls back to CPU "
      "(CANN EP build unconfirmed)"),
    C("if ! nvidia-smi -L >/dev/null 2>&1; then", "torch_cuda_api", R, True,
      "if ! npu-smi info >/dev/null 2>&1; then",
      "nvidia-smi does not exist in an Ascend container: the entrypoint refuses to start"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api", R, True,
      "npu-smi info", "runs under set -e: a missing nvidia-smi aborts the entrypoint"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0 \\",
      "ignored on Ascend; NPUs are mounted by the Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or "
      "--device /dev/davinciN at docker run time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", X, False, None,
      "NVIDIA container runtime knob, meaningless on Ascend"),
    C("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 \\", "env_var", R, False,
      "PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512 \\",
      "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (max_split_size_mb support unconfirmed)"),
    C('CMD ["iopaint", "start", "--model=lama", "--device=cuda"', "device_type", R, True,
      'CMD ["iopaint", "start", "--model=lama", "--device=npu", "--port=8080", "--host=0.0.0.0", \\',
      "with --device=cuda check_device() falls back to the CPU on an NPU host"),
    C('"--enable-interactive-seg", "--interactive-seg-device=cuda", \\', "device_type", R, True,
      '"--enable-interactive-seg", "--interactive-seg-device=npu", \\', "same, for the SAM plugin"),
    C('"--enable-remove-bg", "--remove-bg-device=cuda"]', "device_type", R, True,
      '"--enable-remove-bg", "--remove-bg-device=npu"]', "same, for the remove-bg plugin"),
]),

E("birefnet_train_sh", "train.sh", "explicit_replacement",
  "ZhengPeng7/BiRefNet train.sh (torchrun / accelerate launcher, device list from nvidia-smi)", [
    C("devices=$(nvidia-smi --query-gpu=index", "torch_cuda_api", R, True,
      "devices=$(npu-smi info -l | awk -F': ' '/NPU ID/{print $2}' | paste -sd, -)",
      "no nvidia-smi on an NPU host: devices is empty, nproc_per_node becomes 1 and the run silently "
      "trains on one device"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "the NPU allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments supported); memory only"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL-only, ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only, ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only, ignored by HCCL"),
    C('CUDA_VISIBLE_DEVICES="${devices}" \\', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES="${devices}" \\',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("=CUDA_VISIBLE_DEVICES=${devices} \\", "env_var", R, True, "ASCEND_RT_VISIBLE_DEVICES=${devices} \\",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("CUDA_VISIBLE_DEVICES=${devices%%,*} \\", "env_var", R, True, "ASCEND_RT_VISIBLE_DEVICES=${devices%%,*} \\",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("CUDA_VISIBLE_DEVICES=${test_device} python inference.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${test_device} python inference.py --pred_root preds-${method} "
      "--ckpt_folder ckpt/${method} \\", "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv >", "torch_cuda_api", R, False,
      "npu-smi info > ckpt/${method}/npu_mem_after_test.txt",
      "no `set -e`: only the memory report is lost"),
]),

E("propainter_demo_requirements", "web-demos/hugging_face/requirements.txt", "explicit_replacement",
  "sczhou/ProPainter Gradio-demo requirements (cu118 wheel index, cupy, xformers, onnxruntime-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu needs the CPU build of torch"),
    C("torch==2.0.1+cu118", "device_type", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA (+cu118) build; Ascend's install path is the CPU torch wheel of a version torch_npu is released "
      "for, plus torch-npu itself (added right here)"),
    C("torchvision==0.15.2+cu118", "device_type", R, True, "torchvision==0.16.0", "must match the new torch"),
    C("cupy-cuda11x==12.2.0", "custom_cuda_extension", X, True, None,
      "cupy has no Ascend support; the mask-propagation code that imports it needs torch ops instead"),
    C("xformers==0.0.20", "attention_kernel", X, False, None,
      "optional speed-up with no NPU backend; that its wheel would also reinstall a CUDA torch over the one "
      "torch_npu pairs with is unconfirmed"),
    C("onnxruntime-gpu==1.15.1", "custom_cuda_extension", R, False, "onnxruntime==1.15.1",
      "CUDA EP unusable on NPU, CPU EP used instead; CANN EP build unconfirmed"),
]),
