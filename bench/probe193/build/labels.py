# Labels for probe193 (talking-head / lip-sync / portrait-animation pipelines, CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any 'npu' device/torch.npu use on the torch versions these projects pin "
               "(device-backend autoload only from torch_npu 2.5.1, and even then the import is recommended)")

# ----------------------------------------------------------------------------------------------------------------------
# Wav2Lip
# ----------------------------------------------------------------------------------------------------------------------
E("w2l_infer", "Wav2Lip/inference.py", "explicit_replacement",
  "Wav2Lip inference.py (module-level device string, S3FD FaceAlignment, _load helper choosing map_location)",
  [
      C("=import torch, face_detection", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "torch.cuda.is_available() is False on an Ascend host, so S3FD and Wav2Lip silently run on CPU; the same "
        "device string feeds FaceAlignment(device=device) and every .to(device). The `if device == 'cuda'` test in "
        "_load is deliberately left alone: with 'npu' it takes the CPU map_location branch, which is right for "
        "GPU-saved checkpoints"),
  ])

E("w2l_sfd_detect", "Wav2Lip/face_detection/detection/sfd/detect.py", "device_branch_or_abstraction",
  "face_alignment / Wav2Lip S3FD detect + batch_detect (device passed in as a string)",
  [])

E("w2l_train", "Wav2Lip/hq_wav2lip_train.py", "explicit_replacement",
  "Wav2Lip hq_wav2lip_train.py (use_cuda flag, module-level and __main__ device, Adam for G and D)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "use_cuda = torch.npu.is_available()",
        "unchanged it is False on NPU, which only affects the log line and sends _load down the CPU map_location "
        "branch (correct for GPU-saved checkpoints); the device lines below are what must change. If it is switched "
        "to the NPU check, _load's bare torch.load must get a map_location too"),
      C("device = torch.device(\"cuda\" if use_cuda else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "module-level device used by the frozen SyncNet expert and get_sync_loss; CPU on an Ascend host otherwise"),
      C("checkpoint = torch.load(checkpoint_path)", "tensor_to_device", "replace", False,
        "checkpoint = torch.load(checkpoint_path, map_location=device)",
        "only reached if use_cuda is turned into the NPU check: the LRS2 checkpoints / lipsync_expert.pth come from "
        "GPU training, and a bare torch.load of CUDA storages fails without CUDA (why the CPU branch exists)"),
      C("device = torch.device(\"cuda\") if use_cuda else torch.device(\"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\") if torch.npu.is_available() else torch.device(\"cpu\")",
        "the __main__ device for the generator, discriminator and every batch; silently CPU on NPU"),
      C("optimizer = optim.Adam([p for p in model.parameters() if p.requires_grad],", "fused_optimizer", "replace",
        False, "optimizer = torch_npu.optim.NpuFusedAdam([p for p in model.parameters() if p.requires_grad],",
        "performance only: msFmkTransplt advises NpuFused* for torch.optim.Adam"),
      C("disc_optimizer = optim.Adam([p for p in disc.parameters() if p.requires_grad],", "fused_optimizer",
        "replace", False,
        "disc_optimizer = torch_npu.optim.NpuFusedAdam([p for p in disc.parameters() if p.requires_grad],",
        "performance only (fused Adam for the quality discriminator)"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# SadTalker (+ Deep3DFaceRecon face3d code it vendors)
# ----------------------------------------------------------------------------------------------------------------------
E("st_infer", "SadTalker/inference.py", "device_branch_or_abstraction",
  "SadTalker inference.py (--cpu flag, args.device chosen after argparse and passed to every stage)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available() and not args.cpu:",
        "False on an Ascend host: preprocessing, audio2coeff and the face renderer all run on CPU"),
      C("args.device = \"cuda\"", "device_type", "replace", True, "args.device = \"npu\"",
        "device string handed to CropAndExtract / Audio2Coeff / AnimateFromCoeff / get_data"),
  ])

E("st_animate", "SadTalker/src/facerender/animate.py", "device_branch_or_abstraction",
  "SadTalker AnimateFromCoeff (safetensors checkpoint, facevid2vid generator, GFPGAN enhancer hand-off)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without an initialised CUDA context, so NPU cached blocks are not returned before the GFPGAN "
        "stage; memory headroom only"),
  ])

E("st_enhancer", "SadTalker/src/utils/face_enhancer.py", "explicit_replacement",
  "SadTalker face_enhancer.py (GFPGANer restorer, RealESRGAN background upsampler gated on CUDA)",
  [
      C("if not torch.cuda.is_available():  # CPU", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():  # CPU",
        "always true on an Ascend host: the requested realesrgan background enhancer is silently dropped "
        "(different output, not just slower)"),
      C("half=True)  # need to set False in CPU mode", "device_type", "replace", True,
        "half=True, device=torch.device('npu'))  # need to set False in CPU mode",
        "once the guard admits NPU, RealESRGANer picks its own device with torch.cuda.is_available() -> CPU, i.e. the "
        "fp16 upsampler runs on the host; pass the NPU device explicitly"),
      C("=bg_upsampler=bg_upsampler)", "device_type", "replace", False,
        "bg_upsampler=bg_upsampler, device=torch.device('npu'))",
        "GFPGANer also chooses cuda-or-cpu internally; without device= the face restorer runs on CPU (correct, slow)"),
  ])

E("st_gradio", "SadTalker/src/gradio_demo.py", "device_branch_or_abstraction",
  "SadTalker gradio_demo.SadTalker (cuda / mps / cpu device ladder, cleanup after each request)",
  [
      C("=import torch, uuid", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; this class is what the gradio entry point imports before choosing the device"),
      C("device = \"cuda\"", "device_type", "add_branch", True,
        "elif torch.npu.is_available(): device = \"npu\"",
        "the ladder has no NPU rung: on an Ascend Linux host it falls through to 'cpu'"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "inside `if torch.cuda.is_available():` (the duplicated guard line cannot be labelled on its own), so it never "
        "runs on NPU; frees NPU memory between requests once guard and call are switched"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "same guarded cleanup block; never reached unchanged"),
  ])

E("st_nvdiff", "SadTalker/src/face3d/util/nvdiffrast.py", "kernel_rewrite",
  "Deep3DFaceRecon_pytorch / SadTalker face3d MeshRenderer on nvdiffrast",
  [
      C("import nvdiffrast.torch as dr", "custom_cuda_extension", "replace", True,
        "from pytorch3d.renderer import MeshRasterizer, RasterizationSettings  # nvdiffrast has no Ascend backend",
        "nvdiffrast's rasterizer plugins are CUDA (and CUDA-GL interop) only; the face3d renderer has to be "
        "re-expressed (torch-only soft rasterizer or a CPU rasterizer)"),
      C("self.ctx = dr.RasterizeGLContext(device=device)", "custom_cuda_extension", "replace", True,
        "self.ctx = MeshRasterizer(raster_settings=RasterizationSettings(image_size=rsize))",
        "default context (use_opengl=True); needs a CUDA device"),
      C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", "replace", False,
        "self.ctx = MeshRasterizer(raster_settings=RasterizationSettings(image_size=rsize))",
        "only taken with use_opengl=False (not the default); same rewrite"),
      C("rast_out, _ = dr.rasterize(", "custom_cuda_extension", "replace", True,
        "fragments = self.ctx(Meshes(verts=vertex_ndc[..., :3], faces=tri.long()))",
        "call site of the CUDA rasterizer"),
      C("depth, _ = dr.interpolate(", "custom_cuda_extension", "replace", True,
        "depth = interpolate_face_attributes(fragments.pix_to_face, fragments.bary_coords, face_depth)",
        "call site of the CUDA attribute interpolation"),
      C("image, _ = dr.interpolate(feat, rast_out, tri)", "custom_cuda_extension", "replace", True,
        "image = interpolate_face_attributes(fragments.pix_to_face, fragments.bary_coords, feat[tri.long()])",
        "call site of the CUDA attribute interpolation (colour)"),
  ])

E("st_facerecon", "SadTalker/src/face3d/models/facerecon_model.py", "device_branch_or_abstraction",
  "Deep3DFaceRecon FaceReconModel (device comes from the training script, renderer, Adam)",
  [
      C("self.optimizer = torch.optim.Adam(self.net_recon.parameters(), lr=opt.lr)", "fused_optimizer", "replace",
        False, "self.optimizer = torch_npu.optim.NpuFusedAdam(self.net_recon.parameters(), lr=opt.lr)",
        "performance only"),
  ])

E("st_face3d_train", "SadTalker/src/face3d/train.py", "explicit_replacement",
  "Deep3DFaceRecon_pytorch train.py (mp.spawn DDP, gloo process group, synchronize-based timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("dist.init_process_group(\"gloo\", rank=rank, world_size=world_size)", "dist_backend", "replace", True,
        "dist.init_process_group(\"hccl\", rank=rank, world_size=world_size)",
        "Deep3DFaceRecon uses gloo even for GPU DDP (gloo can reduce CUDA tensors); for NPU tensors the knowledge "
        "base's torch_npu launch recipe requires backend='hccl'"),
      C("device = torch.device(rank)", "device_type", "replace", True, "device = torch.device(f\"npu:{rank}\")",
        "a bare integer ordinal is a CUDA device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
        "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (per-iteration timing)"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU before validation; memory only"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = train_opt.gpu_ids", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = train_opt.gpu_ids",
        "--gpu_ids selects cards (e.g. '2,3'); ignored on NPU, so spawned ranks land on NPU 0..n-1 instead"),
  ])

E("st_docker", "SadTalker/Dockerfile", "explicit_replacement",
  "SadTalker community Dockerfile (CUDA runtime base, cu113 torch wheels, nvdiffrast from git)",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "the image must carry CANN (toolkit + ENV from set_env.sh) for torch_npu to load; CUDA/cuDNN runtime is "
        "useless on Ascend"),
      C("torch==1.12.1+cu113 torchvision==0.13.1+cu113", "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post17 \\",
        "no torch_npu exists for torch 1.12; the CUDA local-version wheels must become plain torch plus the matching "
        "torch-npu (2.1.0.post17 pairs with CANN 8.3.RC1)"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "harmless once the pins change (no 2.1.0 on the cu113 index); torch_npu docs pair x86 with the CPU index"),
      C("git+https://github.com/NVlabs/nvdiffrast.git", "custom_cuda_extension", "removal", False, None,
        "CUDA-only renderer; the pip step itself only copies sources (plugins are JIT-built at first use, "
        "unconfirmed), the runtime failure is handled in nvdiffrast.py"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container-runtime hint, inert on Ascend; NPUs are mapped at docker run (--device /dev/davinciN or "
        "Ascend-Docker-Runtime's ASCEND_VISIBLE_DEVICES)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime hint, inert on Ascend"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# LivePortrait (+ X-Pose ops it vendors)
# ----------------------------------------------------------------------------------------------------------------------
E("lp_wrapper", "LivePortrait/src/live_portrait_wrapper.py", "device_branch_or_abstraction",
  "LivePortrait LivePortraitWrapper / LivePortraitWrapperAnimal (device ladder, autocast ctx, torch.compile option)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; inference.py / app.py never import torch themselves, this module picks the device"),
      C("self.device = 'cuda:' + str(self.device_id)", "device_type", "replace", True,
        "self.device = 'npu:' + str(self.device_id)",
        "the non-mps branch is taken on an Ascend host; 'cuda:0' makes load_model(...).to(device) fail"),
      C("self.device = f\"cuda:{self.device_id}\"", "device_type", "replace", False,
        "self.device = f\"npu:{self.device_id}\"",
        "except-branch only taken when probing torch.backends.mps raises (very old torch)"),
      C("self.warping_module = torch.compile(self.warping_module, mode='max-autotune')", "compile_mode", "replace",
        False, "self.warping_module = torch.compile(self.warping_module, backend='npugraphs')",
        "only with --flag_do_torch_compile; max-autotune means Triton autotuning + CUDA graphs, NPU graph mode is "
        "backend='npugraphs' / torchair; suppress_errors falls back to eager anyway (unconfirmed behaviour)"),
      C("self.spade_generator = torch.compile(self.spade_generator, mode='max-autotune')", "compile_mode", "replace",
        False, "self.spade_generator = torch.compile(self.spade_generator, backend='npugraphs')",
        "as above"),
      C("ctx = torch.autocast(device_type=self.device[:4], dtype=torch.float16,", "amp", "replace", True,
        "ctx = torch.autocast(device_type=self.device.split(':')[0], dtype=torch.float16,",
        "'npu:0'[:4] is 'npu:' - not a device type, torch.autocast raises; the slice only works for 'cuda:N'"),
      C("self.device = 'cuda:%d' % self.device_id", "device_type", "replace", True,
        "self.device = 'npu:%d' % self.device_id", "animal wrapper, same ladder"),
      C("self.device = 'cuda:{}'.format(self.device_id)", "device_type", "replace", False,
        "self.device = 'npu:{}'.format(self.device_id)", "animal wrapper except-branch (old torch only)"),
      C("self.warping_module = torch.compile(self.warping_module, mode=\"max-autotune\")", "compile_mode", "replace",
        False, "self.warping_module = torch.compile(self.warping_module, backend=\"npugraphs\")",
        "animal wrapper, only with --flag_do_torch_compile (unconfirmed)"),
      C("self.spade_generator = torch.compile(self.spade_generator, mode=\"max-autotune\")", "compile_mode",
        "replace", False, "self.spade_generator = torch.compile(self.spade_generator, backend=\"npugraphs\")",
        "animal wrapper, only with --flag_do_torch_compile (unconfirmed)"),
  ])

E("lp_cropper", "LivePortrait/src/utils/cropper.py", "device_branch_or_abstraction",
  "LivePortrait Cropper (InsightFace FaceAnalysisDIY + 203-point landmark ONNX runner + X-Pose for animals)",
  [
      C("device = \"cuda\"", "device_type", "replace", False, "device = \"npu\"",
        "here the string only selects the onnxruntime provider of the landmark runner; with no CUDA EP onnxruntime "
        "falls back to CPU (runs, slowly). Needs the matching 'npu' branch in human_landmark_runner.py"),
      C("face_analysis_wrapper_provider = [\"CUDAExecutionProvider\"]", "device_type", "replace", False,
        "face_analysis_wrapper_provider = [\"CANNExecutionProvider\", \"CPUExecutionProvider\"]",
        "InsightFace detector on onnxruntime: CUDA EP unavailable -> CPU fallback; CANN EP is onnxruntime's Ascend "
        "provider (unconfirmed in the knowledge base)"),
      C("device, face_analysis_wrapper_provider = \"cuda\", [\"CUDAExecutionProvider\"]", "device_type", "replace",
        False, "device, face_analysis_wrapper_provider = \"npu\", [\"CANNExecutionProvider\", \"CPUExecutionProvider\"]",
        "except-branch (old torch without torch.backends.mps)"),
  ])

E("lp_landmark", "LivePortrait/src/utils/human_landmark_runner.py", "device_branch_or_abstraction",
  "LivePortrait LandmarkRunner (onnxruntime session, provider chosen from a device string)",
  [
      C("if onnx_provider.lower() == 'cuda':", "device_type", "add_branch", False,
        "elif onnx_provider.lower() == 'npu': self.session = onnxruntime.InferenceSession(ckpt_path, "
        "providers=[('CANNExecutionProvider', {'device_id': device_id}), 'CPUExecutionProvider'])",
        "performance only: without an NPU branch the landmark model runs on CPU (CANN EP unconfirmed in knowledge)"),
  ])

E("lp_speed", "LivePortrait/speed.py", "explicit_replacement",
  "LivePortrait speed.py benchmark (half-precision random inputs, torch.compile max-autotune, device timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device(f\"cuda:{device_id}\")", "device_type", "replace", True,
        "device = torch.device(f\"npu:{device_id}\")", "random benchmark inputs allocated on CUDA"),
      C("=device_id = cfg.device_id", "tensor_to_device", "replace", True, "device_id = f\"npu:{cfg.device_id}\"",
        "passed as `device` to load_model, which does .to(device): a bare int is a CUDA ordinal"),
      C("model = torch.compile(model, mode='max-autotune')  # Optimize for inference", "compile_mode", "replace",
        False, "model = torch.compile(model, backend='npugraphs')  # Optimize for inference",
        "max-autotune relies on Triton + CUDA graphs; suppress_errors makes it fall back to eager (unconfirmed)"),
      C("module = torch.compile(module, mode='max-autotune')  # Optimize for inference", "compile_mode", "replace",
        False, "module = torch.compile(module, backend='npugraphs')  # Optimize for inference", "as above"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.get_device_name(cfg.device_id)", "torch_cuda_api", "replace", True,
        "print(f\"Benchmarking on {torch.npu.get_device_name(cfg.device_id)} (torch {torch.__version__})\")",
        "raises without CUDA"),
  ])

XPOSE_OPS = "LivePortrait/src/utils/dependencies/XPose/models/UniPose/ops"

E("lp_msda_func", XPOSE_OPS + "/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "X-Pose / Deformable-DETR MSDeformAttnFunction (nvcc-built MultiScaleDeformableAttention extension)",
  [
      C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "replace", True,
        "MSDA = None  # CUDA-only extension is not built on Ascend; MSDeformAttn uses the PyTorch path",
        "unguarded import of an nvcc-built module: ImportError on an NPU host breaks the animal pipeline at import"),
      C("output = MSDA.ms_deform_attn_forward(", "custom_cuda_extension", "replace", False,
        "output = ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)",
        "call site is unreached on NPU (MSDeformAttn dispatches on value.is_cuda); no MSDA op in the torch_npu lists, "
        "a real kernel_rewrite would need an Ascend C kernel"),
      C("MSDA.ms_deform_attn_backward(", "custom_cuda_extension", "replace", False,
        "raise NotImplementedError('MSDA backward has no Ascend kernel; use the PyTorch path')",
        "backward call site, inference-only in LivePortrait"),
  ])

E("lp_msda_mod", XPOSE_OPS + "/modules/ms_deform_attn.py", "kernel_rewrite",
  "X-Pose MSDeformAttn module (CUDA kernel vs PyTorch grid_sample fallback dispatch)",
  [])

E("lp_msda_setup", XPOSE_OPS + "/setup.py", "kernel_rewrite",
  "Deformable-DETR style setup.py building MultiScaleDeformableAttention with CUDAExtension",
  [
      C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "replace", False,
        "if hasattr(torch, 'npu') and torch.npu.is_available():  # Ascend C port via torch_npu.utils.cpp_extension.NpuExtension",
        "nvcc-only build that raises on an NPU host; building it is optional because the module falls back to "
        "PyTorch grid_sample (supported on NPU)"),
  ])

E("lp_xpose_runner", "LivePortrait/src/utils/animal_landmark_runner.py", "explicit_replacement",
  "LivePortrait XPoseRunner (animal face keypoints with cached CLIP embeddings, autocast fp16)",
  [
      C("self.device = f\"cuda:{self.device_id}\" if not cpu_only else \"cpu\"", "device_type", "replace", True,
        "self.device = f\"npu:{self.device_id}\" if not cpu_only else \"cpu\"",
        "hard-coded CUDA device for X-Pose and its prompt tensors"),
      C("with torch.autocast(device_type=self.device[:4], dtype=torch.float16, enabled=self.flag_use_half_precision):",
        "amp", "replace", True,
        "with torch.autocast(device_type=self.device.split(':')[0], dtype=torch.float16, enabled=self.flag_use_half_precision):",
        "'npu:0'[:4] == 'npu:' is not a valid autocast device_type"),
  ])

E("lp_req", "LivePortrait/requirements.txt", "explicit_replacement",
  "LivePortrait requirements (torch pinned from the cu121 index, onnxruntime-gpu for InsightFace)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; pulls CUDA builds + nvidia-* wheels on x86, torch_npu docs pair x86 with the CPU index "
        "(not shown to break)"),
      C("=torch==2.3.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post6",
        "torch-npu pin matching torch 2.3.1 (branch v2.3.1-7.0.0)"),
      C("onnxruntime-gpu==1.18.0", "device_type", "replace", False,
        "onnxruntime==1.18.0  # or a CANN-EP build of onnxruntime",
        "CUDA build of onnxruntime; on Ascend it can only fall back to CPU (CANN EP unconfirmed in knowledge)"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# MuseTalk
# ----------------------------------------------------------------------------------------------------------------------
E("mt_infer", "MuseTalk/scripts/inference.py", "explicit_replacement",
  "MuseTalk scripts/inference.py v1.5 (gpu_id device, VAE/UNet/PE halves, transformers WhisperModel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device(f\"cuda:{args.gpu_id}\" if torch.cuda.is_available() else \"cpu\")", "device_type",
        "replace", True, "device = torch.device(f\"npu:{args.gpu_id}\" if torch.npu.is_available() else \"cpu\")",
        "single device variable for VAE, UNet, PE, Whisper and datagen; silently CPU on NPU"),
  ])

E("mt_unet", "MuseTalk/musetalk/models/unet.py", "device_branch_or_abstraction",
  "MuseTalk UNet wrapper + PositionalEncoding (device fallback and torch.load map_location ternary)",
  [
      C("self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace",
        False, "self.device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "fallback only when no device is passed - load_all_model always passes one; only the __main__ smoke test "
        "lands on CPU"),
  ])

E("mt_faceparse", "MuseTalk/musetalk/utils/face_parsing/__init__.py", "explicit_replacement",
  "MuseTalk FaceParsing (BiSeNet face-parsing with .cuda() moves and an is_cuda check)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "BiSeNet silently stays on CPU on an Ascend host (it runs for every output frame)"),
      C("net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "CUDA move"),
      C("net.load_state_dict(torch.load(model_pth))", "tensor_to_device", "replace", False,
        "net.load_state_dict(torch.load(model_pth, map_location='npu'))",
        "79999_iter.pth is a GPU-trained checkpoint; if it holds CUDA storages a bare torch.load fails once this branch "
        "is taken on NPU (storage device unconfirmed)"),
      C("if next(self.net.parameters()).is_cuda:", "torch_cuda_api", "replace", True,
        "if next(self.net.parameters()).is_npu:",
        "after net.npu() this is False, the input stays on CPU and the NPU model gets a CPU tensor"),
      C("img = torch.unsqueeze(img, 0).cuda()", "tensor_to_device", "replace", True,
        "img = torch.unsqueeze(img, 0).npu()", "CUDA move"),
  ])

E("mt_preproc", "MuseTalk/musetalk/utils/preprocessing.py", "explicit_replacement",
  "MuseTalk preprocessing.py (module-level DWPose mmpose model and S3FD FaceAlignment)",
  [
      C("=device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
        "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
        "DWPose (mmpose init_model) silently on CPU on an Ascend host"),
      C("else \"cpu\"  # s3fd face detector", "device_type", "replace", True,
        "device = \"npu\" if torch.npu.is_available() else \"cpu\"  # s3fd face detector",
        "S3FD FaceAlignment silently on CPU"),
  ])

E("mt_train", "MuseTalk/train.py", "explicit_replacement",
  "MuseTalk-style accelerate training script (diffusers UNet2DConditionModel, Whisper features, xformers / 8-bit Adam options)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device=\"cuda\", dtype=weight_dtype).eval()", "tensor_to_device", "replace", True,
        "device=accelerator.device, dtype=weight_dtype).eval()",
        "Whisper encoder hard-wired to CUDA while everything else uses accelerator.device"),
      C("model_dict['unet'].enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
        "model_dict['unet'].set_attn_processor(AttnProcessor2_0())",
        "unreached once the config flag is off (stage1.yaml); diffusers' default SDPA processor already maps to the "
        "NPU flash-attention kernel"),
      C("optimizer_cls = torch.optim.AdamW", "fused_optimizer", "replace", False,
        "optimizer_cls = torch_npu.optim.NpuFusedAdamW", "performance only"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device=\"npu\",",
        "without CUDA the loader skips pinning with a warning; performance only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU after checkpointing"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "\"mem\": f\"{torch.npu.max_memory_allocated() / 1024 ** 3:.1f}G\",",
        "returns 0 without an initialised CUDA context - wrong progress-bar figure only"),
  ])

E("mt_stage1_yaml", "MuseTalk/configs/training/stage1.yaml", "explicit_replacement",
  "MuseTalk configs/training/stage1.yaml (solver options incl. xformers and TF32)",
  [
      C("enable_xformers_memory_efficient_attention: True", "attention_kernel", "replace", True,
        "enable_xformers_memory_efficient_attention: False  # no xformers on NPU; SDPA is used",
        "train.py raises ValueError when the flag is on and xformers is not importable; xformers has no NPU backend"),
  ])

E("mt_req", "MuseTalk/requirements.txt", "explicit_replacement",
  "MuseTalk requirements.txt (cu118 extra index, torch 2.0.1, diffusers/accelerate, mmlab via mim)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; not shown to break an NPU install"),
      C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
        "torch-npu pin matching torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0)"),
  ])

E("mt_train_sh", "MuseTalk/train.sh", "explicit_replacement",
  "MuseTalk train.sh (accelerate launch, CUDA_VISIBLE_DEVICES / NCCL_* exports, nvidia-smi GPU count)",
  [
      C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be sourced before torch_npu can load"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "selects all eight cards, which is also what an NPU host does by default; matters once it is edited to a "
        "subset"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob, HCCL ignores it (closest HCCL knobs: HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE)"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "logging only"),
      C("NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
        "NUM_GPUS=$(ls /dev/davinci[0-9]* | wc -l)",
        "nvidia-smi is absent on an Ascend host -> NUM_GPUS=0 -> accelerate launch --num_processes 0 fails"),
  ])

E("mt_app", "MuseTalk/app.py", "explicit_replacement",
  "MuseTalk gradio app.py (module-level models, per-request inference)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "whole demo silently on CPU on an Ascend host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU between requests; memory only"),
  ])

# ----------------------------------------------------------------------------------------------------------------------
# EchoMimic
# ----------------------------------------------------------------------------------------------------------------------
E("em_infer", "EchoMimic/infer_audio2vid.py", "explicit_replacement",
  "EchoMimic infer_audio2vid.py (--device flag plus hard-coded .to('cuda') on VAE, face locator, pipeline, mask)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument(\"--device\", type=str, default=\"cuda\")", "device_type", "replace", True,
        "parser.add_argument(\"--device\", type=str, default=\"npu\")",
        "default device for the reference/denoising UNets, Whisper and MTCNN"),
      C("if device.__contains__(\"cuda\") and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if device.__contains__(\"npu\") and not torch.npu.is_available():",
        "harmless with an 'npu' device string; keeps the intended CPU fallback when no NPU is present"),
      C(").to(\"cuda\", dtype=weight_dtype)", "tensor_to_device", "replace", True, ").to(device, dtype=weight_dtype)",
        "VAE hard-wired to CUDA"),
      C("=dtype=weight_dtype, device=\"cuda\"", "tensor_to_device", "replace", True,
        "dtype=weight_dtype, device=device", "FaceLocator hard-wired to CUDA"),
      C("face_locator.load_state_dict(torch.load(config.face_locator_path))", "tensor_to_device", "replace", False,
        "face_locator.load_state_dict(torch.load(config.face_locator_path, map_location=\"cpu\"))",
        "the other two loads use map_location='cpu'; only needed if face_locator.pth holds CUDA storages "
        "(unconfirmed)"),
      C("pipe = pipe.to(\"cuda\", dtype=weight_dtype)", "tensor_to_device", "replace", True,
        "pipe = pipe.to(device, dtype=weight_dtype)", "pipeline moved to CUDA"),
      C("face_mask_tensor = torch.Tensor(face_mask).to(dtype=weight_dtype, device=\"cuda\")", "tensor_to_device",
        "replace", True,
        "face_mask_tensor = torch.Tensor(face_mask).to(dtype=weight_dtype, device=device).unsqueeze(0).unsqueeze(0).unsqueeze(0) / 255.0",
        "face mask created on CUDA"),
  ])

E("em_pipeline", "EchoMimic/src/pipelines/pipeline_echo_mimic.py", "device_branch_or_abstraction",
  "EchoMimic Audio2VideoPipeline (diffusers DiffusionPipeline with context windows and reference attention)",
  [
      C("device = torch.device(f\"cuda:{gpu_id}\")", "device_type", "replace", False,
        "device = torch.device(f\"npu:{gpu_id}\")",
        "enable_sequential_cpu_offload is not called by the inference scripts"),
  ])

E("em_motion", "EchoMimic/src/models/motion_module.py", "device_branch_or_abstraction",
  "EchoMimic / Moore-AnimateAnyone AnimateDiff-style motion module (VersatileAttention, xformers probe)",
  [
      C("elif not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "elif not torch.npu.is_available():",
        "dead on NPU: xformers has no NPU build, so the ModuleNotFoundError above fires first"),
      C("q = torch.randn((1, 2, 40), device=\"cuda\")", "tensor_to_device", "replace", False,
        "q = torch.randn((1, 2, 40), device=\"npu\")", "xformers self-test, unreachable on NPU"),
  ])
