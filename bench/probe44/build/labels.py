"""Labels for probe44 (hand-written synthetic upstream files; see ../README.md).

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
ER, TN, DB = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

LIB_IMPORT = ("optional in a library module: the entry script's `import torch_npu` already registers torch.npu; "
              "an explicit import keeps the module usable on its own with torch_npu < 2.5.1 (no autoload)")

# --------------------------------------------------------------------------------------------------
# BasicSR packaging and custom CUDA ops
# --------------------------------------------------------------------------------------------------

E("basicsr_setup", "setup.py", ER,
  "XPixelGroup/BasicSR setup.py (BASICSR_EXT opt-in, make_cuda_ext with FORCE_CUDA / nvcc half flags)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension",
      "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only needed if the ops are rebuilt for Ascend (Ascend C kernels + NpuExtension); the import itself works"),
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", B, True,
      "if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':  # + elif is_npu: skip / NpuExtension",
      "on an NPU host this is False, so BASICSR_EXT=True silently builds C++-only extensions whose ops raise "
      "'not compiled with GPU support' at run time; needs an NPU branch (or no extension build)"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, False, "extension = NpuExtension",
      "reached only with FORCE_CUDA=1 (then nvcc is missing and the build fails); NpuExtension needs rewritten kernels"),
    C("extra_compile_args['nvcc'] = [", "custom_cuda_extension", X, False, None,
      "nvcc-only half-precision macros; meaningless for an Ascend build"),
])

E("basicsr_deform_conv", "basicsr/ops/dcn/deform_conv.py", ER,
  "XPixelGroup/BasicSR ops/dcn/deform_conv.py (DCN / DCNv2 autograd Functions over deform_conv_ext)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "the port calls torch_npu.npu_deformable_conv2d, so the name must be bound"),
    C("if BASICSR_JIT == 'True':", "custom_cuda_extension", X, True, None,
      "BASICSR_JIT=True (set by the training scripts) JIT-builds deform_conv_cuda_kernel.cu with cpp_extension.load "
      "(✘ on A2/A3, no nvcc): import of basicsr.ops.dcn fails"),
    C("from . import deform_conv_ext", "custom_cuda_extension", X, False, None,
      "guarded by try/except ImportError, so it never fails itself; dead once the calls below are replaced"),
    C("=if not input.is_cuda:", "device_type", R, True, "if input.device.type not in ('cuda', 'npu'):",
      "NPU tensors are not is_cuda: DeformConv raises NotImplementedError"),
    C("deform_conv_ext.deform_conv_forward(input, weight,", "custom_cuda_extension", R, True,
      "output = torchvision.ops.deform_conv2d(input, offset, weight, stride=ctx.stride, padding=ctx.padding, "
      "dilation=ctx.dilation)  # torchvision_npu",
      "nvcc-built kernel; torchvision_npu provides deform_conv2d on NPU"),
    C("=if not grad_output.is_cuda:", "device_type", R, True, "if grad_output.device.type not in ('cuda', 'npu'):",
      "backward of DeformConv raises NotImplementedError for NPU tensors"),
    C("deform_conv_ext.deform_conv_backward_input(", "custom_cuda_extension", R, True,
      "(removed: autograd of torchvision.ops.deform_conv2d / npu_deformable_conv2dbk computes input/offset grads)",
      "nvcc-built backward kernel"),
    C("deform_conv_ext.deform_conv_backward_parameters(", "custom_cuda_extension", R, True,
      "(removed: weight grad comes from the autograd of the replacement op)",
      "nvcc-built backward kernel"),
    C("if not input.is_cuda:  # cpu version is not implemented", "device_type", R, True,
      "if input.device.type not in ('cuda', 'npu'):",
      "ModulatedDeformConv (DCNv2, used by EDVR/BasicVSR alignment) raises for NPU tensors"),
    C("deform_conv_ext.modulated_deform_conv_forward(", "custom_cuda_extension", R, True,
      "output, _ = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], 1), bias, "
      "kernel_size=weight.shape[2:], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, "
      "dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, "
      "modulated=True)",
      "nvcc-built kernel; npu_deformable_conv2d exists in the custom-op lists (offset channel order vs mmcv "
      "layout not checked)"),
    C("if not grad_output.is_cuda:  # cpu version is not implemented", "device_type", R, True,
      "if grad_output.device.type not in ('cuda', 'npu'):",
      "backward of ModulatedDeformConv raises for NPU tensors"),
    C("deform_conv_ext.modulated_deform_conv_backward(", "custom_cuda_extension", R, True,
      "(removed: npu_deformable_conv2d is differentiable through npu_deformable_conv2dbk)",
      "nvcc-built backward kernel"),
])

E("basicsr_fused_act", "basicsr/ops/fused_act/fused_act.py", ER,
  "XPixelGroup/BasicSR ops/fused_act (rosinality StyleGAN2 fused bias + leaky ReLU extension)", [
    C("if BASICSR_JIT == 'True':", "custom_cuda_extension", B, True,
      "if BASICSR_JIT == 'True' and torch.cuda.is_available():",
      "BASICSR_JIT=True JIT-compiles fused_bias_act_kernel.cu via cpp_extension.load (✘ on NPU): import fails"),
    C("if input.device.type == 'cpu':", "device_type", R, True, "if input.device.type != 'cuda':",
      "the native fallback is chosen only for CPU, so NPU tensors go to FusedLeakyReLUFunction and the missing "
      "fused_act_ext (NameError); every StyleGAN2/GFPGAN decoder layer hits this"),
])

E("basicsr_arch_util", "basicsr/archs/arch_util.py", ER,
  "XPixelGroup/BasicSR archs/arch_util.py (DCNv2Pack via torchvision deform_conv2d, RCAN-style channel attention)", [
    C("=import torchvision", "import_torch_npu", A, False, "import torchvision\nimport torchvision_npu",
      "torchvision.ops.deform_conv2d has an NPU kernel only through torchvision_npu; without it torch_npu's "
      "CPU fallback (host round-trip) or an error — which one is unconfirmed"),
    C("self.max_pool = nn.AdaptiveMaxPool2d(1)", "unsupported_op_workaround", R, True,
      "self.max_pool = lambda t: torch.amax(t, dim=(2, 3), keepdim=True)",
      "nn.AdaptiveMaxPool2d / F.adaptive_max_pool2d are ✘ in Ascend's 2.7.1 API list and UNSUPPORTED in msFmkTransplt "
      "(op-plugin does register adaptive_max_pool2d, so the ✘ may mean restricted shapes)"),
])

# --------------------------------------------------------------------------------------------------
# BasicSR training plumbing
# --------------------------------------------------------------------------------------------------

E("basicsr_dist_util", "basicsr/utils/dist_util.py", ER,
  "XPixelGroup/BasicSR utils/dist_util.py (pytorch / slurm launchers, mmcv-derived)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", R, True,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "the pytorch launcher path always uses this default (dist_params only reach init_dist under slurm)"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: rank % 0 raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True, "torch.npu.set_device(rank % num_gpus)",
      "needs a CUDA build"),
    C("num_gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count()  # npus per node", "0 on an NPU host (slurm path)"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", R, True,
      "torch.npu.set_device(proc_id % num_gpus)", "needs a CUDA build"),
])

E("basicsr_options", "basicsr/utils/options.py", ER,
  "XPixelGroup/BasicSR utils/options.py (yaml options, num_gpu: auto, launcher selection)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "opt['num_gpu'] = torch.npu.device_count()",
      "num_gpu: auto resolves to 0 on an NPU host, so BaseModel puts every network on the CPU"),
])

E("codeformer_misc", "basicsr/utils/misc.py", DB,
  "sczhou/CodeFormer basicsr/utils/misc.py (gpu_is_available / get_device with MPS branch, seeding)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C("return True if torch.cuda.is_available() and torch.backends.cudnn.is_available() else False",
      "device_type", B, True,
      "return True if (torch.cuda.is_available() and torch.backends.cudnn.is_available()) "
      "or (hasattr(torch, 'npu') and torch.npu.is_available()) else False",
      "False on an NPU host: CodeFormer warns 'Running on CPU' and treats the host as CPU-only"),
    C("return torch.device('cuda' + gpu_str if torch.cuda.is_available()", "device_type", B, True,
      "if hasattr(torch, 'npu') and torch.npu.is_available(): return torch.device('npu' + gpu_str)",
      "returns cpu on an NPU host; note that even under transfer_to_npu torch.backends.cudnn.is_available() stays "
      "False, so this line still picks the CPU"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued without CUDA: harmless no-op, NPU generator left unseeded by this line"),
    C("=torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless; the NPU equivalent makes runs reproducible"),
])

E("basicsr_train", "basicsr/train.py", ER,
  "XPixelGroup/BasicSR basicsr/train.py (resume state mapped to the current GPU, CUDA prefetcher)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "entry point: torch.npu.* and the hccl backend used by the library need torch_npu loaded"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device_id = torch.npu.current_device()", "raises without a CUDA build when resuming"),
    C("map_location=lambda storage, loc: storage.cuda(device_id)", "tensor_to_device", R, True,
      "resume_state = torch.load(resume_state_path, map_location=f'npu:{device_id}')",
      "Storage.cuda needs CUDA; resuming any run fails"),
    C("elif prefetch_mode == 'cuda':", "device_type", R, False, "elif prefetch_mode in ('cuda', 'npu'):",
      "mode string only; the failure is inside CUDAPrefetcher (labelled there)"),
    C("log_vars['max_mem_mb'] = torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", R, False,
      "log_vars['max_mem_mb'] = torch.npu.max_memory_allocated() / 1024**2",
      "returns 0 without CUDA initialised (memory_stats is empty): wrong log value, no failure"),
])

E("basicsr_prefetch", "basicsr/data/prefetch_dataloader.py", ER,
  "XPixelGroup/BasicSR data/prefetch_dataloader.py (side-stream CUDAPrefetcher, apex-style)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
      "needs a CUDA build; prefetch_mode: cuda (Real-ESRGAN/NAFNet configs) fails at construction"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", R, True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "hard-coded cuda device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "needs a CUDA build"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", "needs a CUDA build"),
    C("cur_stream = torch.cuda.current_stream()", "torch_cuda_api", R, True,
      "cur_stream = torch.npu.current_stream()", "needs a CUDA build (record_stream variant)"),
])

E("basicsr_base_model", "basicsr/models/base_model.py", ER,
  "XPixelGroup/BasicSR models/base_model.py (num_gpu device choice, DDP on current_device, DataParallel)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", R, True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "every model (SRModel, RealESRGANModel, NAFNet, GFPGAN) takes its device from here"),
    C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)",
      "torch_cuda_api", R, True,
      "net, device_ids=[torch.npu.current_device()], find_unused_parameters=find_unused_parameters)",
      "needs a CUDA build"),
    C("net = DataParallel(net)", "unsupported_op_workaround", R, True,
      "raise ValueError('use --launcher pytorch (DDP) for more than one NPU')",
      "torch.nn.DataParallel is ✘ on Ascend (msFmkTransplt: use DDP)"),
    C("optimizer = torch.optim.Adam(params, lr, **kwargs)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(params, lr, **kwargs)", "performance only"),
    C("optimizer = torch.optim.AdamW(params, lr, **kwargs)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(params, lr, **kwargs)", "performance only (msFmkTransplt: +memory)"),
])

E("realesrgan_model", "realesrgan/models/realesrgan_model.py", ER,
  "xinntao/Real-ESRGAN models/realesrgan_model.py (on-GPU degradation pipeline and training-pair queue)", [
    C("self.jpeger = DiffJPEG(differentiable=False).cuda()", "tensor_to_device", R, True,
      "self.jpeger = DiffJPEG(differentiable=False).to(self.device)", "Module.cuda needs a CUDA build"),
    C("self.usm_sharpener = USMSharp().cuda()", "tensor_to_device", R, True,
      "self.usm_sharpener = USMSharp().to(self.device)", "Module.cuda needs a CUDA build"),
    C("self.queue_lr = torch.zeros(self.queue_size, c, h, w).cuda()", "tensor_to_device", R, True,
      "self.queue_lr = torch.zeros(self.queue_size, c, h, w, device=self.device)", "Tensor.cuda needs a CUDA build"),
    C("self.queue_gt = torch.zeros(self.queue_size, c, h, w).cuda()", "tensor_to_device", R, True,
      "self.queue_gt = torch.zeros(self.queue_size, c, h, w, device=self.device)", "Tensor.cuda needs a CUDA build"),
])

# --------------------------------------------------------------------------------------------------
# Inference entry points and face helpers
# --------------------------------------------------------------------------------------------------

E("realesrgan_video", "inference_realesrgan_video.py", ER,
  "xinntao/Real-ESRGAN inference_realesrgan_video.py (ffmpeg pipes, one process per GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry point"),
    C("ffmpeg.input(video_path, hwaccel='cuda')", "device_type", R, False,
      "ffmpeg.input(video_path).output('pipe:', format='rawvideo', pix_fmt='bgr24',",
      "NVDEC decode needs an NVIDIA GPU; ffmpeg behaviour on a host without one is not in the knowledge "
      "(unconfirmed)"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "raises without a CUDA build (also with device=None in the single-process path)"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: num_process = 0 and Pool(0) raises"),
    C("args=(args, sub_video_save_path, torch.device(f'cuda:{i % num_gpus}'), num_process, i),", "device_type", R,
      True, "args=(args, sub_video_save_path, torch.device(f'npu:{i % num_gpus}'), num_process, i),",
      "hard-coded cuda device per worker"),
    C("parser.add_argument('--vcodec', type=str, default='h264_nvenc'", "device_type", R, False,
      "parser.add_argument('--vcodec', type=str, default='libx264', help='ffmpeg video encoder, e.g. libx264')",
      "NVENC is NVIDIA hardware; not covered by the knowledge (unconfirmed)"),
])

E("gfpgan_utils", "gfpgan/utils.py", DB,
  "TencentARC/GFPGAN gfpgan/utils.py (GFPGANer: detect, restore, paste back)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device",
      "device_type", B, True,
      "self.device = (torch.device('npu') if torch.npu.is_available() else torch.device('cpu')) "
      "if device is None else device",
      "device=None is the default path (inference_gfpgan.py never passes one): silently runs on the CPU"),
])

E("gfpgan_inference", "inference_gfpgan.py", ER,
  "TencentARC/GFPGAN inference_gfpgan.py (RealESRGAN background upsampler only when CUDA is available)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry point"),
    C("if not torch.cuda.is_available():  # CPU", "device_type", R, True,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):  # CPU",
      "True on an NPU host: the background upsampler is silently dropped"),
])

E("codeformer_inference", "inference_codeformer.py", TN,
  "sczhou/CodeFormer inference_codeformer.py (GTX 16xx fp16 blacklist, RealESRGAN bg upsampler)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu covers torch.cuda.is_available/get_device_name/empty_cache here; get_device() in "
      "basicsr/utils/misc.py still needs its own NPU branch (cudnn check)"),
])

E("facexlib_restore_helper", "facexlib/utils/face_restoration_helper.py", DB,
  "xinntao/facexlib utils/face_restoration_helper.py (FaceRestoreHelper)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", B, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "detector and parser silently on the CPU when no device is passed"),
])

E("facexlib_detection_init", "facexlib/detection/__init__.py", ER,
  "xinntao/facexlib detection/__init__.py (init_detection_model with device='cuda' default)", [
    C("def init_detection_model(model_name, half=False, device='cuda', model_rootpath=None):", "device_type", R,
      False, "def init_detection_model(model_name, half=False, device='npu', model_rootpath=None):",
      "default only; the callers shown pass a device"),
    C("device = torch.device(f'cuda:{device_id}')", "device_type", R, True,
      "device = torch.device(f'npu:{device_id}')", "hard-coded cuda device"),
])

E("facexlib_retinaface", "facexlib/detection/retinaface.py", ER,
  "xinntao/facexlib detection/retinaface.py (module-level device next to self.device)", [
    C("=device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device is cpu on an NPU host while the model and mean_tensor follow self.device: "
      "detect_faces mixes CPU and NPU tensors and fails"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device",
      "device_type", B, True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu') if device is None else device",
      "direct construction without a device silently stays on the CPU"),
])

E("swinir_main_test", "main_test_swinir.py", ER,
  "JingyunLiang/SwinIR main_test_swinir.py (+ CUDA-event timing and an --amp flag)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry point"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently CPU on an NPU host"),
    C("=model.eval()", "compile_mode", A, False,
      "model.eval()\ntorch_npu.npu.set_compile_mode(jit_compile=False)",
      "every image is padded to its own multiple of window_size (dynamic shapes); performance only"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "needs a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "needs a CUDA build"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast is inactive for NPU tensors: --amp silently runs fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
])

E("nafnet_ir_model", "basicsr/models/image_restoration_model.py", ER,
  "megvii-research/NAFNet models/image_restoration_model.py (TLC grids, fp16 autocast + GradScaler)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
      "CUDA GradScaler is disabled without CUDA (warns): no loss scaling under use_amp"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.use_amp):", "inactive for NPU tensors"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=self.use_amp):", "amp", R, True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=self.use_amp):",
      "validation runs fp32 instead of the trained fp16 path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache not released between validation images"),
    C("self.optimizer_g = torch.optim.AdamW([{'params': optim_params}], **train_opt['optim_g'])", "fused_optimizer",
      R, False, "self.optimizer_g = torch_npu.optim.NpuFusedAdamW([{'params': optim_params}], **train_opt['optim_g'])",
      "performance only"),
])

E("diffbir_inference", "inference.py", TN,
  "XPixelGroup/DiffBIR inference.py (check_device, precision fallback, optional torch.compile)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "device strings 'cuda' and torch.cuda.* calls in the loops are redirected by transfer_to_npu"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_ids',
      "not rewritten by transfer_to_npu; the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "major = 8  # Atlas A2: bf16 supported (torch.npu.is_bf16_supported())",
      "get_device_capability returns None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set: unpacking raises"),
    C('loop.pipeline.cldm = torch.compile(loop.pipeline.cldm, mode="reduce-overhead")', "compile_mode", R, False,
      'loop.pipeline.cldm = torch.compile(loop.pipeline.cldm, backend="npugraphs")',
      "reduce-overhead means CUDA graphs; npugraphs is the documented NPU analogue (behaviour of the mode "
      "string on NPU unconfirmed)"),
])

E("diffbir_attention", "diffbir/model/attention.py", ER,
  "XPixelGroup/DiffBIR model/attention.py (ldm CrossAttention with vanilla / xformers / sdp backends)", [
    C('with torch.autocast(enabled=False, device_type="cuda"):', "amp", R, False,
      'with torch.autocast(enabled=False, device_type="npu"):',
      "only on the vanilla backend (sdp is picked on torch>=2): there NPU autocast stays on and the 'fp32' "
      "similarity is computed in fp16 anyway"),
])

E("diffbir_util", "diffbir/model/util.py", ER,
  "XPixelGroup/DiffBIR model/util.py (ldm CheckpointFunction re-entering CUDA autocast in backward)", [
    C('ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled(),', "amp", R, True,
      'ctx.gpu_autocast_kwargs = {"enabled": torch.npu.is_autocast_enabled(),',
      "reports the CUDA autocast state (False) under NPU autocast, so the checkpointed recompute runs without "
      "autocast and differs from the forward"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", R, True, '"dtype": torch.npu.get_autocast_dtype(),',
      "CUDA autocast dtype (fp16) instead of the NPU one (e.g. bf16)"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", R, True,
      "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "inactive for NPU tensors: recompute in fp32 under an fp16/bf16 forward"),
])

E("insightface_model_zoo", "python-package/insightface/model_zoo/model_zoo.py", ER,
  "deepinsight/insightface python-package model_zoo.py (onnxruntime sessions, CUDAExecutionProvider default)", [
    C("return ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", R, False,
      "return ['CANNExecutionProvider', 'CPUExecutionProvider']",
      "without onnxruntime-gpu ORT falls back to the CPU provider (works, slow); the CANN provider of an Ascend "
      "onnxruntime build is not in the knowledge (unconfirmed)"),
    C("'cudnn_conv_algo_search': 'HEURISTIC',", "device_type", R, False, "'precision_mode': 'force_fp16',",
      "CUDA-provider options; CANN-provider option names unconfirmed"),
    C("if ctx_id >= 0 and provider_options is None and providers[0] == 'CUDAExecutionProvider':", "device_type", R,
      False,
      "if ctx_id >= 0 and provider_options is None and providers[0] in ('CUDAExecutionProvider', "
      "'CANNExecutionProvider'):",
      "provider-name comparison (unconfirmed)"),
])

E("basicsr_fid", "basicsr/metrics/fid.py", ER,
  "XPixelGroup/BasicSR metrics/fid.py (DataParallel-wrapped patched InceptionV3)", [
    C("def load_patched_inception_v3(device='cuda', resize_input=True, normalize_input=False):", "device_type", R,
      False, "def load_patched_inception_v3(device='npu', resize_input=True, normalize_input=False):",
      "default only; the FID scripts pass a device"),
    C("inception = nn.DataParallel(inception).eval().to(device)", "unsupported_op_workaround", R, True,
      "inception = inception.eval().to(device)",
      "torch.nn.DataParallel is ✘ on Ascend"),
    C("def extract_inception_features(data_generator, inception, len_generator=None, device='cuda'):",
      "device_type", R, False,
      "def extract_inception_features(data_generator, inception, len_generator=None, device='npu'):",
      "default only"),
    C("features = features.to(device=device, dtype=torch.float64)", "unsupported_op_workaround", R, False,
      "features = features.to(dtype=torch.float64)  # keep fp64 statistics on the CPU",
      "fp64 matmul on the NPU (fp64 → fp32 caveat) unconfirmed; only with --stats_on_gpu"),
])

E("basicsr_fid_folder", "scripts/metrics/calculate_fid_folder.py", ER,
  "XPixelGroup/BasicSR scripts/metrics/calculate_fid_folder.py", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "entry point"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "50k-image Inception pass silently on the CPU"),
    C("if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():",
      "memory report skipped on an NPU host: cosmetic"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      "print(f'max memory: {torch.npu.max_memory_allocated(device) / 1024**3:.2f} GiB')",
      "only reached once the guard above is changed"),
])

E("auto_tile_upscale", "upscale/utils/auto_split.py", ER,
  "chaiNNer / Real-ESRGAN-style automatic tiled upscaling (VRAM-based tile size, OOM halving, fp16 by compute "
  "capability)", [
    C("=import torch", "import_torch_npu", A, False, "import torch\nimport torch_npu", LIB_IMPORT),
    C('if device.type != "cuda":', "device_type", R, False, 'if device.type not in ("cuda", "npu"):',
      "NPU gets fp32: slower, not wrong"),
    C("props = torch.cuda.get_device_properties(device)", "device_capability_check", R, False,
      'return True if device.type == "npu" else (lambda p: p.major >= 7)(torch.cuda.get_device_properties(device))',
      "only reached once the branch above admits NPU; NPU device properties have no major/minor"),
    C('if device.type == "cuda":', "device_type", B, False, 'if device.type in ("cuda", "npu"):',
      "NPU falls into the CPU estimate (4 GiB): small tiles, slower, not wrong"),
    C("free, _total = torch.cuda.mem_get_info(device)", "torch_cuda_api", R, False,
      "free, _total = (torch.npu if device.type == 'npu' else torch.cuda).mem_get_info(device)",
      "only reached once the branch above admits NPU"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silently CPU on an NPU host"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as err:  # NPU OOM",
      "whether an NPU out-of-memory surfaces as torch.OutOfMemoryError or a plain RuntimeError is not in the "
      "knowledge (unconfirmed); if the latter, the tile-halving retry never runs"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the retry would keep the NPU cache"),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")',
      "hard-coded default device of the benchmark"),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "needs a CUDA build"),
    C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api",
      R, True, "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
      "needs a CUDA build"),
    C("torch.cuda.synchronize(device)  # wait for the timed loop", "torch_cuda_api", R, True,
      "torch.npu.synchronize(device)  # wait for the timed loop", "needs a CUDA build"),
    C("torch.cuda.empty_cache()  # release the tile's activations", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release the tile's activations", "silent no-op without CUDA"),
])

# --------------------------------------------------------------------------------------------------
# Configs, launch scripts, images, dependency files
# --------------------------------------------------------------------------------------------------

E("realesrgan_finetune_yml", "options/finetune_realesrgan_x4plus.yml", ER,
  "xinntao/Real-ESRGAN options/finetune_realesrgan_x4plus.yml (BasicSR options file)", [
    C("prefetch_mode: cuda", "device_type", R, False, "prefetch_mode: ~  # or keep 'cuda' with the ported prefetcher",
      "selects CUDAPrefetcher; fine once the prefetcher is ported (its torch.cuda.Stream lines are labelled required)"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl",
      "reaches init_dist when launched with --launcher slurm"),
])

E("nafnet_dist_train_sh", "scripts/dist_train.sh", ER,
  "NAFNet / BasicSR scripts/dist_train.sh (torch.distributed.launch or srun, GPU sanity checks)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export BASICSR_JIT=True", "custom_cuda_extension", X, True, None,
      "forces cpp_extension.load of the .cu ops at import (✘ on NPU, no nvcc)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "ignored by HCCL; CANN logging has its own variables"),
    C("if ! command -v nvidia-smi >/dev/null 2>&1; then", "torch_cuda_api", R, True,
      "if ! command -v npu-smi >/dev/null 2>&1; then", "no nvidia-smi on an Ascend host: the script exits 1"),
    C("NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api", R, True,
      "NUM_VISIBLE=$(npu-smi info -l | grep -c 'NPU ID')",
      "0 visible devices: the GPU-count check exits 1"),
    C("nvcc --version | tail -n1", "custom_cuda_extension", X, False, None,
      "'command not found' is printed but the pipeline status is tail's, so set -e does not stop"),
    C("torch.version.cuda, torch.cuda.is_available())\"", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npu', torch.npu.is_available())\"",
      "prints None False: cosmetic"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", R, False, "--gres=npu:${GPUS_PER_NODE} \\",
      "Slurm GRES name on an Ascend cluster depends on the site (unconfirmed)"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", R, True, "npu-smi info",
      "command not found under set -e: the script exits 127 after training"),
])

E("realesrgan_dockerfile", "Dockerfile", ER,
  "Real-ESRGAN / GFPGAN community Dockerfile (CUDA devel base, BasicSR extensions built in the image)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "no CANN toolkit / Ascend driver libraries in a CUDA image (tag of the Ascend base image illustrative)"),
    C("torch==${TORCH_VERSION}+cu118 torchvision==${TORCHVISION_VERSION}+cu118 \\", "import_torch_npu", R, True,
      "torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 \\", "CUDA wheels; torch_npu must match torch"),
    C("--index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "cu118 index serves CUDA builds only"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", X, True, None,
      "forces CUDAExtension in BasicSR's setup.py: nvcc is absent and the build fails"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "custom_cuda_extension", X, False, None,
      "only read by nvcc builds"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, False, None, "points at a toolkit that is not there"),
    C("&& BASICSR_EXT=True pip install --no-cache-dir --no-build-isolation -v .", "custom_cuda_extension", R, True,
      "&& pip install --no-cache-dir --no-build-isolation -v .",
      "with FORCE_CUDA=1 this compiles the .cu ops"),
    C("&& pip install --no-cache-dir facexlib gfpgan onnxruntime-gpu==1.16.3", "device_type", R, False,
      "&& pip install --no-cache-dir facexlib gfpgan onnxruntime",
      "onnxruntime-gpu targets CUDA; Ascend ORT builds not in the knowledge (unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0",
      "the Ascend Docker Runtime mounts /dev/davinciN from ASCEND_VISIBLE_DEVICES; the NVIDIA variable is ignored"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None,
      "NVIDIA container runtime only"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", R, True, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("HEALTHCHECK --interval=5m --timeout=10s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=5m --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "container is always reported unhealthy"),
])

E("diffbir_requirements", "requirements.txt", ER,
  "DiffBIR / face-restoration requirements.txt pinned to cu118 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "==2.2.2 also matches 2.2.2+cu118 from this index"),
    C("torch==2.2.2+cu118", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA build; torch_npu pairs with a plain torch of the same version"),
    C("torchvision==0.17.2+cu118", "torch_cuda_api", R, True, "torchvision==0.16.0  # + torchvision_npu (Ascend/vision) for deform_conv2d / roi_align",
      "CUDA build; must match the torch paired with torch_npu"),
    C("torchaudio==2.2.2+cu118", "torch_cuda_api", R, True, "torchaudio==2.1.0", "CUDA build"),
    C('triton==2.2.0; platform_system == "Linux"', "triton_kernel_tuning", X, False, None,
      "unused by this stack on NPU (transfer_to_npu sets has_triton=False); triton-ascend only if kernels are ported"),
    C("xformers==0.0.25.post1", "attention_kernel", X, True, None,
      "no NPU backend and pins torch 2.2.2 (pulls a CUDA torch over the torch_npu one); "
      "DiffBIR falls back to SDP without it"),
    C("bitsandbytes==0.43.0", "torch_cuda_api", R, False, "# bitsandbytes (NPU NF4 only in the multi-backend builds)",
      "only for the 4/8-bit LLaVA captioner; 0.43.0 has no NPU backend"),
    C("onnxruntime-gpu==1.17.1", "device_type", R, False, "onnxruntime==1.17.1",
      "CUDA execution provider build (Ascend ORT build unconfirmed)"),
    C("cupy-cuda11x==12.3.0", "torch_cuda_api", X, True, None, "cupy has no Ascend support"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None,
      "installs, but NVML calls fail at use; torch.npu.mem_get_info / npu-smi instead"),
])

E("codeformer_environment", "environment.yml", ER,
  "CodeFormer / GFPGAN-style conda environment.yml (pytorch + nvidia channels, CUDA pip extras, build variables)", [
    C("=- nvidia", "torch_cuda_api", X, False, None, "channel only serves CUDA packages"),
    C("=- pytorch=1.13.1", "import_torch_npu", R, True,
      "- pip:\n    - torch==2.1.0\n    - torch-npu==2.1.0.post12",
      "conda CUDA build of an old torch; no torch_npu for it on conda"),
    C("- pytorch-cuda=11.7", "torch_cuda_api", X, True, None, "selects the CUDA variant of pytorch"),
    C("- cudatoolkit-dev=11.7", "torch_cuda_api", X, True, None, "CUDA toolkit (nvcc) download"),
    C("- cudnn=8.5", "torch_cuda_api", X, False, None,
      "useless on Ascend; whether it resolves on every NPU host architecture unconfirmed"),
    C("- onnxruntime-gpu==1.14.1", "device_type", R, False, "- onnxruntime==1.14.1",
      "CUDA execution provider build (unconfirmed for Ascend)"),
    C("=- pynvml", "torch_cuda_api", X, False, None, "installs; NVML calls fail at use"),
    C("=- gpustat", "torch_cuda_api", X, False, None, "NVML-based monitor; npu-smi instead"),
    C("- --extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", X, True, None,
      "serves CUDA wheels for the pip section"),
    C("- xformers==0.0.16", "attention_kernel", X, True, None, "no NPU backend; pins a CUDA torch 1.13.1"),
    C("- nvidia-dali-cuda110", "torch_cuda_api", X, False, None, "NVIDIA DALI; not covered by the knowledge (unconfirmed)"),
    C('BASICSR_EXT: "True"', "custom_cuda_extension", X, False, None,
      "on an NPU host setup.py falls back to C++-only builds; harmless once the ops are ported"),
    C("CUDA_HOME: /usr/local/cuda-11.7", "env_var", X, False, None, "no CUDA toolkit"),
    C('TORCH_CUDA_ARCH_LIST: "7.5;8.0;8.6"', "custom_cuda_extension", X, False, None, "only read by nvcc builds"),
    C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
])
