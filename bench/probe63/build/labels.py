"""Labels for probe63 (hand-written synthetic upstream files; see ../README.md).

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
EXP, T2N, DEV, KRN = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction", "kernel_rewrite"
ORT = ("unconfirmed: onnxruntime's Ascend provider (CANNExecutionProvider / onnxruntime-cann) is not covered in "
       "/work/shared/knowledge; without it ORT runs these models on the CPU")

# --------------------------------------------------------------------------------------------- SadTalker
E("sadtalker_inference", "inference.py", EXP,
  "OpenTalker/SadTalker inference.py (--gpu_id -> CUDA_VISIBLE_DEVICES, args.device string)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the 'npu' device string need torch_npu loaded"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
      "CUDA_VISIBLE_DEVICES does not select Ascend devices; ASCEND_RT_VISIBLE_DEVICES does"),
    C("if torch.cuda.is_available() and not args.cpu:", "device_type", R, True,
      "if torch.npu.is_available() and not args.cpu:",
      "False on an NPU host: the whole pipeline silently runs on the CPU"),
    C('args.device = "cuda"', "device_type", R, True, 'args.device = "npu"',
      "device string handed to CropAndExtract / Audio2Coeff / AnimateFromCoeff"),
])

E("sadtalker_animate", "src/facerender/animate.py", EXP,
  "OpenTalker/SadTalker src/facerender/animate.py (AnimateFromCoeff, facevid2vid checkpoints)", [
    C("=checkpoint = torch.load(checkpoint_path)", "tensor_to_device", R, True,
      "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
      "mapping checkpoint saved from GPU training: deserialising CUDA tensors fails on a host without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "cache release only; without CUDA it is a no-op, the NPU cache is never released"),
])

E("sadtalker_nvdiffrast", "src/face3d/util/nvdiffrast.py", EXP,
  "SadTalker / Deep3DFaceRecon src/face3d/util/nvdiffrast.py (pytorch3d rasteriser + optional nvdiffrast)", [
    C("self.ctx = dr.RasterizeGLContext(device=device)", "custom_cuda_extension", R, False,
      "raise RuntimeError('nvdiffrast needs CUDA; use the pytorch3d renderer on NPU')",
      "nvdiffrast is CUDA/OpenGL-only; only reached when renderer='nvdiffrast' is configured"),
    C("self.ctx = dr.RasterizeCudaContext(device=device)", "custom_cuda_extension", R, False,
      "raise RuntimeError('nvdiffrast needs CUDA; use the pytorch3d renderer on NPU')",
      "CUDA rasteriser context; opt-in path"),
    C("fragments = self.rasterizer(mesh, cameras=cameras, raster_settings=raster_settings)",
      "custom_cuda_extension", R, True,
      "fragments = self.rasterizer(mesh.to('cpu'), cameras=cameras.to('cpu'), raster_settings=raster_settings)",
      "pytorch3d._C rasterize_meshes has CPU and CUDA kernels only; NPU tensors must be rasterised on the CPU "
      "(results moved back with .to(device))"),
])

E("sadtalker_gradio", "app_sadtalker.py", EXP,
  "OpenTalker/SadTalker app_sadtalker.py Gradio demo (device pick + VRAM report)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "needed once the checks below use torch.npu"),
    C("if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():",
      "only feeds the start-up print; SadTalker picks its own device"),
    C('return "cuda"', "device_type", R, False, 'return "npu"', "printed device name"),
    C("value=torch.cuda.is_available())", "device_type", R, False, "value=torch.npu.is_available())",
      "UI default of a checkbox only"),
    C("if not torch.cuda.is_available():", "device_type", R, False, "if not torch.npu.is_available():",
      "report string says 'cpu' on an NPU host (cosmetic)"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, False, "free, total = torch.npu.mem_get_info()",
      "only reached once the check above is ported"),
    C("name = torch.cuda.get_device_name(0)", "torch_cuda_api", R, False, "name = torch.npu.get_device_name(0)",
      "only reached once the check above is ported"),
])

# --------------------------------------------------------------------------------------------- Wav2Lip
E("wav2lip_inference", "inference.py", EXP,
  "Rudrabha/Wav2Lip inference.py (module-level device string, s3fd batch face detection)", [
    C("=import torch, face_detection", "import_torch_npu", A, True, "import torch_npu",
      "the 'npu' device string needs torch_npu loaded"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "False on an NPU host: detector and Wav2Lip silently run on the CPU"),
])

E("wav2lip_hq_train", "hq_wav2lip_train.py", EXP,
  "Rudrabha/Wav2Lip hq_wav2lip_train.py (use_cuda flag, DataParallel, GPU-saved checkpoints)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu / 'npu' need torch_npu"),
    C("use_cuda = torch.cuda.is_available()", "device_type", R, True, "use_cuda = torch.npu.is_available()",
      "False on an NPU host: training silently runs on the CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if use_cuda else "cpu")', "training device"),
    C("=checkpoint = torch.load(checkpoint_path)", "tensor_to_device", R, False,
      "checkpoint = torch.load(checkpoint_path, map_location=device)",
      "reached only once use_cuda is ported; then the GPU-saved syncnet/generator checkpoints need map_location"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", R, False, "if torch.npu.device_count() > 1:",
      "returns 0 without CUDA, so the multi-device branch is silently skipped"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", R, True, "model = model  # DataParallel unsupported on NPU; use DDP",
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 list); reached as soon as the count is ported"),
    C("disc = nn.DataParallel(disc)", "unsupported_op_workaround", R, True, "disc = disc  # DataParallel unsupported on NPU; use DDP",
      "torch.nn.DataParallel is unsupported on Ascend"),
])

E("wav2lip_sfd_detector", "face_detection/detection/sfd/sfd_detector.py", EXP,
  "Wav2Lip's vendored face_alignment S3FD detector (face_detection/detection/sfd)", [
    C("model_weights = torch.load(path_to_detector)", "tensor_to_device", R, False,
      "model_weights = torch.load(path_to_detector, map_location='cpu')",
      "unconfirmed: the released s3fd.pth holds CPU tensors; map_location added defensively"),
])

E("face_alignment_api", "face_alignment/api.py", EXP,
  "1adrianb/face-alignment face_alignment/api.py (FaceAlignment, device='cuda' default, TorchScript FAN)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the 'npu' default device needs torch_npu loaded"),
    C("device='cuda', dtype=torch.float32, flip_input=False, face_detector='sfd',", "device_type", R, True,
      "device='npu', dtype=torch.float32, flip_input=False, face_detector='sfd',",
      "default device: callers that do not pass device= fail on an NPU host"),
    C("self.face_alignment_net = torch.jit.load(", "tensor_to_device", R, False,
      "self.face_alignment_net = torch.jit.load(..., map_location='cpu')",
      "unconfirmed whether the 2DFAN/3DFAN archives hold CUDA tensors; map_location is the safe port"),
    C("self.depth_prediciton_net = torch.jit.load(", "tensor_to_device", R, False,
      "self.depth_prediciton_net = torch.jit.load(..., map_location='cpu')", "same as above, depth net"),
])

# --------------------------------------------------------------------------------------------- LivePortrait
E("liveportrait_wrapper", "src/live_portrait_wrapper.py", EXP,
  "KwaiVGI/LivePortrait src/live_portrait_wrapper.py (cuda:<id> device, autocast on device[:4], torch.compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "'npu:N' devices need torch_npu"),
    C("=self.device = 'cuda:' + str(self.device_id)", "device_type", R, True,
      "self.device = 'npu:' + str(self.device_id)",
      "mps is False on an NPU host, so every model is loaded to cuda:N and fails"),
    C("# old torch without mps", "device_type", R, False, "self.device = 'npu:' + str(self.device_id)",
      "fallback when the mps probe raises (old torch)"),
    C("ctx = torch.autocast(device_type=self.device[:4], dtype=torch.float16,", "amp", R, True,
      "ctx = torch.autocast(device_type=self.device.split(':')[0], dtype=torch.float16,",
      "device[:4] slices 'cuda' out of 'cuda:0'; on 'npu:0' it gives 'npu:' and autocast raises"),
    C("self.warping_module = torch.compile(self.warping_module, mode='max-autotune')", "compile_mode", R, False,
      "self.warping_module = torch.compile(self.warping_module, backend='npugraphs')",
      "flag_do_torch_compile is off by default; max-autotune relies on Triton/CUDA graphs (npugraphs on NPU)"),
    C("self.spade_generator = torch.compile(self.spade_generator, mode='max-autotune')", "compile_mode", R, False,
      "self.spade_generator = torch.compile(self.spade_generator, backend='npugraphs')", "same as above"),
    C("torch.compiler.cudagraph_mark_step_begin()", "compile_mode", X, False, None,
      "unconfirmed: CUDA-graph-tree step marker; drop with npugraphs"),
])

E("liveportrait_speed", "speed.py", EXP,
  "KwaiVGI/LivePortrait speed.py (per-module fp16 benchmark with int device ids and CUDA events)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* need torch_npu"),
    C("feature_3d = torch.randn(batch_size, 32", "tensor_to_device", R, True,
      "feature_3d = torch.randn(batch_size, 32, 16, 64, 64).to(f'npu:{device_id}').half()",
      "an int device index means cuda:N"),
    C("kp_source = torch.randn(batch_size, 21, 3)", "tensor_to_device", R, True,
      "kp_source = torch.randn(batch_size, 21, 3).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("kp_driving = torch.randn(batch_size, 21, 3)", "tensor_to_device", R, True,
      "kp_driving = torch.randn(batch_size, 21, 3).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("source_image = torch.randn(batch_size, 3, 256, 256)", "tensor_to_device", R, True,
      "source_image = torch.randn(batch_size, 3, 256, 256).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("generator_input = torch.randn(", "tensor_to_device", R, True,
      "generator_input = torch.randn(batch_size, 256, 64, 64).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("eye_close_ratio = torch.randn(", "tensor_to_device", R, True,
      "eye_close_ratio = torch.randn(batch_size, 3).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("lip_close_ratio = torch.randn(", "tensor_to_device", R, True,
      "lip_close_ratio = torch.randn(batch_size, 2).to(f'npu:{device_id}').half()", "int index = cuda:N"),
    C("model = torch.compile(model, mode='max-autotune')", "compile_mode", R, False,
      "model = torch.compile(model, backend='npugraphs')", "performance only"),
    C("module = torch.compile(module, mode='max-autotune')", "compile_mode", R, False,
      "module = torch.compile(module, backend='npugraphs')", "performance only"),
    C("torch.cuda.synchronize()  # drain queue before timing", "torch_cuda_api", R, True,
      "torch.npu.synchronize()", "torch.cuda.synchronize needs a CUDA build/driver"),
    C("torch.cuda.synchronize()  # F", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("torch.cuda.synchronize()  # M", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("torch.cuda.synchronize()  # W", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("torch.cuda.synchronize()  # G", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("torch.cuda.synchronize()  # S/R", "torch_cuda_api", R, True, "torch.npu.synchronize()", "as above"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "CUDA memory stats"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated() / 2 ** 20", "CUDA memory stats"),
    C("torch.cuda.get_device_name(cfg.device_id)", "torch_cuda_api", R, True,
      "... on {torch.npu.get_device_name(cfg.device_id)}", "device name query inside the f-string"),
])

E("liveportrait_face_analysis", "src/utils/face_analysis_diy.py", EXP,
  "KwaiVGI/LivePortrait src/utils/face_analysis_diy.py (insightface FaceAnalysis on onnxruntime-gpu)", [
    C('providers = [("CUDAExecutionProvider", {"device_id": cfg.device_id}), "CPUExecutionProvider"]',
      "device_type", R, False,
      'providers = [("CANNExecutionProvider", {"device_id": cfg.device_id}), "CPUExecutionProvider"]', ORT),
    C("face_analysis.prepare(ctx_id=cfg.device_id,", "device_type", R, False,
      "face_analysis.prepare(ctx_id=cfg.device_id,  # providers already chosen above",
      "insightface maps ctx_id>=0 to its CUDA provider list; " + ORT),
])

E("liveportrait_landmark_runner", "src/utils/human_landmark_runner.py", EXP,
  "KwaiVGI/LivePortrait src/utils/human_landmark_runner.py (203-point landmark ONNX model)", [
    C("onnx_provider = kwargs.get('onnx_provider', 'cuda')", "device_type", R, False,
      "onnx_provider = kwargs.get('onnx_provider', 'cann')", ORT),
    C("if onnx_provider.lower() == 'cuda':", "device_type", B, False,
      "elif onnx_provider.lower() == 'cann': providers=[('CANNExecutionProvider', {'device_id': device_id})]", ORT),
    C("('CUDAExecutionProvider', {'device_id': device_id})", "device_type", R, False,
      "('CANNExecutionProvider', {'device_id': device_id})",
      "only the CUDA provider is listed: ORT warns and falls back to the CPU; " + ORT),
    C("=provider = 'cuda'", "device_type", R, False, "provider = 'cann'", ORT),
])

E("xpose_ms_deform_attn", "src/utils/dependencies/XPose/models/UniPose/ops/functions/ms_deform_attn_func.py", EXP,
  "LivePortrait's vendored X-Pose / Deformable-DETR MultiScaleDeformableAttention op (animals mode)", [
    C("=import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", R, True,
      "try: import MultiScaleDeformableAttention as MSDA\nexcept ImportError: MSDA = None",
      "nvcc-built extension: the unguarded import fails on an NPU host; the PyTorch core below is the fallback"),
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, False,
      "@torch.amp.custom_fwd(device_type='npu', cast_inputs=torch.float32)",
      "only used with the CUDA op; the fallback path does not go through this Function"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch.amp.custom_bwd(device_type='npu')", "as above"),
])

E("xpose_ops_setup", "src/utils/dependencies/XPose/models/UniPose/ops/setup.py", EXP,
  "X-Pose / Deformable-DETR ops/setup.py (CUDAExtension or NotImplementedError)", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only matters if the op is re-implemented for NPU (Ascend C + NpuExtension)"),
    C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", R, True,
      "if torch.cuda.is_available() and CUDA_HOME is not None:  # else: CPU-only build / skip",
      "False on an NPU host, so the build reaches the raise below"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, False, "extension = CppExtension",
      "branch not taken on NPU"),
    C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", R, True,
      "extension = CppExtension  # CPU kernels only; or skip the op and use ms_deform_attn_core_pytorch",
      "install of the animals-mode op aborts on an NPU host"),
])

# --------------------------------------------------------------------------------------------- GFPGAN / facexlib
E("gfpgan_utils", "gfpgan/utils.py", EXP,
  "TencentARC/GFPGAN gfpgan/utils.py (GFPGANer restorer + facexlib FaceRestoreHelper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the 'npu' device needs torch_npu"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device",
      "device_type", R, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu') if device is None else device",
      "default device: GFPGAN and the face helper silently run on the CPU on an NPU host"),
])

E("gfpgan_inference", "inference_gfpgan.py", EXP,
  "TencentARC/GFPGAN inference_gfpgan.py (RealESRGAN background upsampler only when CUDA is available)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu / 'npu' need torch_npu"),
    C("device = torch.device(f'cuda:{args.gpu_id}')", "device_type", R, True,
      "device = torch.device(f'npu:{args.gpu_id}')", "explicit --gpu-id"),
    C("if not torch.cuda.is_available():  # CPU", "device_type", R, True,
      "if not torch.npu.is_available():  # CPU",
      "True on an NPU host: the background upsampler is silently dropped (different output)"),
    C("gpu_id=args.gpu_id)", "tensor_to_device", R, True, "device=device)",
      "RealESRGANer derives its device from gpu_id + torch.cuda.is_available(): CPU with half=True on NPU"),
])

E("gfpganv1_arch", "gfpgan/archs/gfpganv1_arch.py", EXP,
  "TencentARC/GFPGAN gfpgan/archs/gfpganv1_arch.py (original arch on basicsr's CUDA StyleGAN2 ops)", [
    C("from basicsr.archs.stylegan2_arch import (ConvLayer,", "custom_cuda_extension", R, True,
      "from basicsr.archs.stylegan2_clean_arch import ...  # or use GFPGANv1Clean",
      "basicsr stylegan2_arch builds on fused_act / upfirdn2d CUDA extensions (no NPU kernels)"),
    C("from basicsr.ops.fused_act import FusedLeakyReLU", "custom_cuda_extension", R, True,
      "FusedLeakyReLU = lambda c: nn.Sequential(AddBias(c), nn.LeakyReLU(0.2), Scale(2 ** 0.5))",
      "fused_act_ext is only built with BASICSR_EXT/BASICSR_JIT and nvcc; without it the call raises"),
    C("self.activation = FusedLeakyReLU(out_channels)", "custom_cuda_extension", R, True,
      "self.activation = BiasLeakyReLU(out_channels)  # pure PyTorch", "call site of the CUDA op"),
])

E("facexlib_retinaface", "facexlib/detection/retinaface.py", EXP,
  "xinntao/facexlib detection/retinaface.py (module-level device used inside the detector)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the 'npu' device needs torch_npu"),
    C("=device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device used by __detect_faces/detect_faces: inputs stay on the CPU while the model is on NPU"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device",
      "device_type", R, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu') if device is None else device",
      "detector default device"),
])

# --------------------------------------------------------------------------------------------- first-order-model
E("fomm_demo", "demo.py", EXP,
  "AliaksandrSiarohin/first-order-model demo.py (.cuda(), DataParallelWithCallback, face_alignment best frame)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", ".npu() needs torch_npu"),
    C("=generator.cuda()", "tensor_to_device", R, True, "generator.npu()", ".cuda() without CUDA fails"),
    C("=kp_detector.cuda()", "tensor_to_device", R, True, "kp_detector.npu()", ".cuda() without CUDA fails"),
    C("=checkpoint = torch.load(checkpoint_path)", "tensor_to_device", R, True,
      "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
      "vox-cpk.pth.tar was saved from GPU; deserialising CUDA tensors fails without CUDA"),
    C("generator = DataParallelWithCallback(generator)", "unsupported_op_workaround", X, True, None,
      "sync_batchnorm's DataParallelWithCallback is an nn.DataParallel (✘ on Ascend); single device needs no wrapper"),
    C("kp_detector = DataParallelWithCallback(kp_detector)", "unsupported_op_workaround", X, True, None,
      "as above"),
    C("source = source.cuda()", "tensor_to_device", R, True, "source = source.npu()", ".cuda() without CUDA"),
    C("driving_frame = driving_frame.cuda()", "tensor_to_device", R, True, "driving_frame = driving_frame.npu()",
      ".cuda() without CUDA"),
    C("device='cpu' if cpu else 'cuda')", "device_type", R, True, "device='cpu' if cpu else 'npu')",
      "face_alignment on the 'cuda' device fails"),
])

E("fomm_train", "run.py", EXP,
  "AliaksandrSiarohin/first-order-model run.py (device_ids list, DataParallelWithCallback training)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu / npu devices need torch_npu"),
    C("is_available():  # wrap for multi-GPU", "device_type", R, True,
      "if torch.npu.is_available():  # move batches explicitly instead of DataParallel scatter",
      "False on an NPU host: the full models run on the CPU"),
    C("generator_full = DataParallelWithCallback(generator_full, device_ids=device_ids)",
      "unsupported_op_workaround", R, True, "generator_full = generator_full  # DDP for multi-NPU",
      "nn.DataParallel subclass, unsupported on Ascend; batches must then be moved with .to(device)"),
    C("discriminator_full = DataParallelWithCallback(discriminator_full, device_ids=device_ids)",
      "unsupported_op_workaround", R, True, "discriminator_full = discriminator_full  # DDP for multi-NPU",
      "as above"),
    C("is_available():  # generator", "device_type", R, True, "if torch.npu.is_available():  # generator",
      "False on NPU: generator silently stays on the CPU"),
    C("generator.to(opt.device_ids[0])", "tensor_to_device", R, True, "generator.to(f'npu:{opt.device_ids[0]}')",
      "int device index means cuda:N"),
    C("is_available():  # discriminator", "device_type", R, True, "if torch.npu.is_available():  # discriminator",
      "as above"),
    C("discriminator.to(opt.device_ids[0])", "tensor_to_device", R, True,
      "discriminator.to(f'npu:{opt.device_ids[0]}')", "int device index means cuda:N"),
    C("is_available():  # keypoint detector", "device_type", R, True,
      "if torch.npu.is_available():  # keypoint detector", "as above"),
    C("kp_detector.to(opt.device_ids[0])", "tensor_to_device", R, True, "kp_detector.to(f'npu:{opt.device_ids[0]}')",
      "int device index means cuda:N"),
])

E("fomm_model", "modules/model.py", EXP,
  "AliaksandrSiarohin/first-order-model modules/model.py (GeneratorFullModel moves pyramid/VGG with .cuda())", [
    C("is_available():  # G pyramid", "device_type", R, True, "if torch.npu.is_available():  # G pyramid",
      "False on NPU: the image pyramid stays on the CPU while the inputs are on NPU (device mismatch)"),
    C("self.pyramid.cuda()  # G pyramid", "tensor_to_device", R, True, "self.pyramid = self.pyramid.npu()",
      ".cuda() without CUDA"),
    C("is_available():  # G vgg", "device_type", R, True, "if torch.npu.is_available():  # G vgg",
      "perceptual VGG stays on the CPU"),
    C("self.vgg = self.vgg.cuda()", "tensor_to_device", R, True, "self.vgg = self.vgg.npu()", ".cuda() without CUDA"),
    C("is_available():  # D pyramid", "device_type", R, True, "if torch.npu.is_available():  # D pyramid",
      "as for the generator"),
    C("self.pyramid.cuda()  # D pyramid", "tensor_to_device", R, True, "self.pyramid = self.pyramid.npu()",
      ".cuda() without CUDA"),
])

# --------------------------------------------------------------------------------------------- roop / inswapper / facefusion
E("roop_core", "roop/core.py", DEV,
  "s0md3v/roop roop/core.py (execution providers decoded from onnxruntime, CUDA cache release)", [
    C("if 'CUDAExecutionProvider' in onnxruntime.get_available_providers():", "device_type", R, False,
      "if any(p in onnxruntime.get_available_providers() for p in ('CUDAExecutionProvider', 'CANNExecutionProvider')):",
      "thread-count suggestion only (performance); " + ORT),
    C("if 'CUDAExecutionProvider' in roop.globals.execution_providers:", "device_type", B, False,
      "if 'CANNExecutionProvider' in roop.globals.execution_providers: torch.npu.empty_cache()",
      "cache release only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "reached only with the CUDA provider"),
])

E("roop_face_enhancer", "roop/processors/frame/face_enhancer.py", DEV,
  "s0md3v/roop processors/frame/face_enhancer.py (GFPGAN device derived from the ORT provider list)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the 'npu' device needs torch_npu"),
    C("if 'CUDAExecutionProvider' in roop.globals.execution_providers:", "device_type", B, True,
      "if 'CANNExecutionProvider' in roop.globals.execution_providers or torch.npu.is_available(): return 'npu'",
      "without an NPU branch GFPGAN silently runs on the CPU (provider name itself unconfirmed)"),
    C("if get_device() == 'cuda':", "device_type", R, False, "if get_device() == 'npu':", "cache release only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "cache release only"),
])

E("insightface_inswapper", "examples/in_swapper/inswapper_main.py", EXP,
  "deepinsight/insightface examples/in_swapper inswapper_128 demo (FaceAnalysis + model_zoo on onnxruntime-gpu)", [
    C("PROVIDERS = ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", R, False,
      "PROVIDERS = ['CANNExecutionProvider', 'CPUExecutionProvider']", ORT),
    C("if 'CUDAExecutionProvider' not in available:", "device_type", R, False,
      "if 'CANNExecutionProvider' not in available:", "warning text only; " + ORT),
])

E("facefusion_execution", "facefusion/execution.py", DEV,
  "facefusion/facefusion execution.py (ORT provider table, nvidia-smi device probe)", [
    C("'cuda': 'CUDAExecutionProvider',", "device_type", A, False, "'cann': 'CANNExecutionProvider',",
      "add the Ascend provider key; " + ORT),
    C("if execution_provider == 'cuda':", "device_type", B, False,
      "if execution_provider == 'cann': providers.append(('CANNExecutionProvider', {'device_id': execution_device_id}))",
      ORT),
    C("commands = [ shutil.which('nvidia-smi'), '--query', '--xml-format' ]", "device_capability_check", R, False,
      "commands = [ shutil.which('npu-smi'), 'info' ]",
      "failure is caught (empty device list); npu-smi output needs its own parser"),
    C("for execution_provider_key in [ 'tensorrt', 'cuda', 'rocm', 'directml', 'coreml', 'openvino' ]:",
      "device_type", R, False,
      "for execution_provider_key in [ 'tensorrt', 'cuda', 'cann', 'rocm', 'directml', 'coreml', 'openvino' ]:", ORT),
    C("if 'cuda' in execution_providers or 'tensorrt' in execution_providers:", "device_type", R, False,
      "if any(p in execution_providers for p in ('cuda', 'tensorrt', 'cann')):", "queue depth only (performance)"),
])

# --------------------------------------------------------------------------------------------- files around code
E("sadtalker_requirements", "requirements.txt", EXP,
  "OpenTalker/SadTalker requirements.txt (cu113 torch, pytorch3d / nvdiffrast from git, onnxruntime-gpu)", [
    C("=--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; NPU hosts use the CPU torch wheel (x86) or plain PyPI (aarch64)"),
    C("=torch==1.12.1+cu113", "torch_cuda_api", R, True, "torch==2.1.0",
      "CUDA build; torch_npu has no 1.12 release, 2.1.0 is the oldest maintained pairing"),
    C("=torchvision==0.13.1+cu113", "torch_cuda_api", R, True, "torchvision==0.16.0", "CUDA build, matches torch"),
    C("=torchaudio==0.12.1", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "add the torch_npu wheel matching torch (torchaudio itself bumped to 2.1.0)"),
    C("=git+https://github.com/facebookresearch/pytorch3d.git@v0.7.2", "custom_cuda_extension", R, False,
      "# pytorch3d: CPU build only (rasterise on CPU)", "optional --face3dvis dependency; CUDA kernels not built on NPU"),
    C("=git+https://github.com/NVlabs/nvdiffrast.git", "custom_cuda_extension", X, False, None,
      "CUDA/OpenGL-only renderer, optional path"),
    C("=onnxruntime-gpu==1.14.1", "custom_cuda_extension", R, False, "onnxruntime==1.14.1", ORT),
])

E("liveportrait_requirements", "requirements.txt", EXP,
  "KwaiVGI/LivePortrait requirements.txt (cu118 torch, onnxruntime-gpu, triton)", [
    C("=onnxruntime-gpu==1.18.0", "custom_cuda_extension", R, False, "onnxruntime==1.18.0", ORT),
    C("=--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("# pytorch (CUDA 11.8)", "import_torch_npu", A, True, "torch-npu==2.3.1.post6",
      "add the torch_npu wheel (torch bumped to 2.3.1: no torch_npu for 2.3.0)"),
    C("=torch==2.3.0+cu118", "torch_cuda_api", R, True, "torch==2.3.1", "CUDA build"),
    C("=torchvision==0.18.0+cu118", "torch_cuda_api", R, True, "torchvision==0.18.1", "CUDA build"),
    C("=torchaudio==2.3.0+cu118", "torch_cuda_api", R, True, "torchaudio==2.3.1", "CUDA build"),
    C('triton==2.3.0; sys_platform == "linux"', "triton_kernel_tuning", R, False, "triton-ascend",
      "unconfirmed: only feeds torch.compile max-autotune; triton-ascend version pairing not checked"),
])

E("facefusion_dockerfile", "Dockerfile.cuda", EXP,
  "facefusion-docker Dockerfile.cuda (nvidia/cuda base, onnxruntime-gpu, cu121 torch)", [
    C("FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; needs a CANN base image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "unconfirmed: Ascend container runtime variable not in the knowledge; devices are usually passed with --device"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None, "NVIDIA runtime only"),
    C("ENV CUDA_MODULE_LOADING=LAZY", "env_var", X, False, None, "no effect without CUDA"),
    C("RUN python install.py --onnxruntime cuda-12.2 --skip-conda", "custom_cuda_extension", R, False,
      "RUN python install.py --onnxruntime default --skip-conda", ORT),
    C("&& pip install --no-cache-dir onnxruntime-gpu==${ONNXRUNTIME_GPU_VERSION}", "custom_cuda_extension", R, False,
      "&& pip install --no-cache-dir onnxruntime-cann", ORT),
    C("# torch is only needed for the optional GFPGAN / CodeFormer enhancers", "import_torch_npu", A, True,
      "RUN pip install --no-cache-dir torch-npu==2.2.0", "add the torch_npu wheel"),
    C("RUN pip install --no-cache-dir torch==2.2.1 torchvision==0.17.1 --index-url https://download.pytorch.org/whl/cu121",
      "torch_cuda_api", R, True, "RUN pip install --no-cache-dir torch==2.2.0 torchvision==0.17.0",
      "cu121 wheels; torch_npu pairs with torch 2.2.0"),
    C("assert 'CUDAExecutionProvider' in onnxruntime.get_available_providers()", "device_type", R, True,
      "RUN python -c \"import onnxruntime; print(onnxruntime.get_available_providers())\"",
      "the build-time assert fails on an NPU image"),
    C('CMD ["python", "facefusion.py", "run", "--execution-providers", "cuda", "cpu"', "device_type", R, True,
      'CMD ["python", "facefusion.py", "run", "--execution-providers", "cpu", ...]',
      "'cuda' is not among the available choices on an NPU host, so argument parsing fails"),
])

E("sadtalker_webui_sh", "webui.sh", EXP,
  "OpenTalker/SadTalker webui.sh launcher (TORCH_COMMAND with cu113 wheels, GPU sanity check)", [
    C('export CUDA_VISIBLE_DEVICES="${GPU_ID}"', "env_var", R, True,
      'export ASCEND_RT_VISIBLE_DEVICES="${GPU_ID}"', "device selection variable"),
    C('export TORCH_COMMAND="pip install torch==1.12.1+cu113', "torch_cuda_api", R, True,
      'export TORCH_COMMAND="pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12"',
      "CUDA wheels; add torch_npu"),
    C("if command -v nvidia-smi >/dev/null 2>&1", "device_capability_check", R, False,
      "if command -v npu-smi >/dev/null 2>&1", "warning only"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "device_capability_check", R, False,
      "npu-smi info", "informational"),
    C("assert torch.cuda.is_available(), 'Torch is not able to use GPU'", "device_type", R, True,
      "\"${python_cmd}\" -c \"import torch, torch_npu; assert torch.npu.is_available()\" || {",
      "fails on an NPU host and the launcher exits"),
])

E("wav2lip_cog", "cog.yaml", EXP,
  "Wav2Lip cog.yaml (Replicate Cog build: gpu/cuda keys, cu116 torch, NVIDIA apt repo)", [
    C("=gpu: true", "device_type", R, False, "gpu: false",
      "Cog's GPU images are NVIDIA-only; an NPU deployment needs its own Dockerfile"),
    C('cuda: "11.6.2"', "torch_cuda_api", X, True, None, "CUDA toolkit pin for the NVIDIA base image"),
    C("=python_packages:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12", "add the torch_npu wheel"),
    C("- torch==1.12.1+cu116", "torch_cuda_api", R, True, "- torch==2.1.0", "CUDA build"),
    C("- torchvision==0.13.1+cu116", "torch_cuda_api", R, True, "- torchvision==0.16.0", "CUDA build"),
    C("developer.download.nvidia.com/compute/cuda/repos", "torch_cuda_api", X, True, None,
      "NVIDIA apt repository (amd64 only)"),
    C("libcudnn8=8.4.1.50-1+cuda11.6", "torch_cuda_api", X, True, None, "cuDNN package cannot be installed/used"),
])

E("gfpgan_train_yml", "options/train_gfpgan_v1.yml", EXP,
  "TencentARC/GFPGAN options/train_gfpgan_v1.yml (BasicSR config: num_gpu, cuda prefetcher, nccl)", [
    C("num_gpu: auto", "device_type", R, True, "num_gpu: 4  # basicsr patched to count NPUs",
      "basicsr resolves 'auto' with torch.cuda.device_count() -> 0 on NPU -> silent CPU training"),
    C("prefetch_mode: cuda", "torch_cuda_api", R, True, "prefetch_mode: ~",
      "basicsr's CUDAPrefetcher uses torch.cuda.Stream"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl", "NCCL does not exist on Ascend"),
])

E("gfpgan_train_sh", "scripts/train_gfpgan.sh", EXP,
  "GFPGAN / BasicSR distributed training launcher (torch.distributed.launch, BASICSR_JIT, NCCL env)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}", "device selection variable"),
    C("export BASICSR_JIT=True", "custom_cuda_extension", X, True, None,
      "JIT-compiles basicsr's .cu ops at import; no nvcc on an NPU host (use the clean arch instead)"),
    C('export TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "env_var", X, False, None, "no effect without nvcc"),
    C("export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}", "env_var", X, False, None,
      "NCCL tuning variable, ignored by HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL tuning variable, ignored by HCCL"),
    C("torch.cuda.device_count() >= ${NUM_GPUS}", "torch_cuda_api", R, True,
      "if ! python -c \"import torch,torch_npu,sys; sys.exit(0 if torch.npu.device_count() >= ${NUM_GPUS} else 1)\"; then",
      "0 devices on an NPU host: the script exits"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", R, True,
      "npu-smi info", "set -e: a missing nvidia-smi aborts the script"),
])
