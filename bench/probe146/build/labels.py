"""Labels for probe146: OpenMMLab model code (mmdet / mmseg / mmpretrain / mmdet3d and projects built on them)."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------
E("mmdet2_contextmanagers", "mmdet/utils/contextmanagers.py", "explicit_replacement",
  "mmdetection 2.x mmdet/utils/contextmanagers.py (async inference stream helpers)", [
    C("    if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "False on an NPU host, so `completed` becomes a silent no-op (no waiting on NPU streams); results stay correct because later host copies synchronise"),
    C("stream_before_context_switch = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "stream_before_context_switch = torch.npu.current_stream()",
      "CUDA stream query raises without a CUDA build; NPU stream API is torch.npu.current_stream"),
    C("torch.cuda.Event(enable_timing=DEBUG_COMPLETED_TIME) for _ in streams", "torch_cuda_api", "replace", True,
      "torch.npu.Event(enable_timing=DEBUG_COMPLETED_TIME) for _ in streams",
      "CUDA events cannot be recorded on NPU streams"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "debug timing event must be an NPU event"),
    C("current_stream = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "current_stream = torch.npu.current_stream()", "CUDA stream query on NPU host"),
    C("with torch.cuda.stream(stream_before_context_switch):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(stream_before_context_switch):", "stream context must be the NPU one"),
    C("assert torch.cuda.current_stream() == stream_before_context_switch", "torch_cuda_api", "replace", True,
      "assert torch.npu.current_stream() == stream_before_context_switch", "CUDA stream query on NPU host"),
    C("if not torch.cuda.is_available() or streamqueue is None:", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available() or streamqueue is None:",
      "always True on an NPU host: concurrent() silently runs inline without the stream pool (overlap lost, results correct)"),
    C("initial_stream = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "initial_stream = torch.npu.current_stream()", "CUDA stream query on NPU host"),
    C("with torch.cuda.stream(initial_stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(initial_stream):", "stream context must be the NPU one"),
    C("assert isinstance(stream, torch.cuda.Stream)", "torch_cuda_api", "replace", True,
      "assert isinstance(stream, torch.npu.Stream)", "pool holds NPU streams after the port; CUDA isinstance check would fail"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(stream):", "stream context must be the NPU one"),
    C("current = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
      "current = torch.npu.current_stream()", "CUDA stream query on NPU host"),
    C("def create_stream_pool(num_streams=3, device='cuda:0'):", "device_type", "replace", False,
      "def create_stream_pool(num_streams=3, device='npu:0'):",
      "default device string names CUDA; the in-tree caller passes the model's device"),
    C("streamqueue.put_nowait(torch.cuda.Stream(device=device))", "torch_cuda_api", "replace", True,
      "streamqueue.put_nowait(torch.npu.Stream(device=device))", "creating a CUDA stream raises on an NPU host"),
])

E("mmdet2_apis_inference", "mmdet/apis/inference.py", "device_branch_or_abstraction",
  "mmdetection 2.x mmdet/apis/inference.py (init_detector / inference_detector / async variant)", [
    C("def init_detector(config, checkpoint=None, device='cuda:0', cfg_options=None):", "device_type", "replace", True,
      "def init_detector(config, checkpoint=None, device='npu:0', cfg_options=None):",
      "callers that rely on the default put the model on a CUDA device that does not exist"),
    C("if next(model.parameters()).is_cuda:", "device_type", "replace", True,
      "if next(model.parameters()).device.type in ('cuda', 'npu'):",
      "is_cuda is False for an NPU model, so the batch stays on the host while the model is on the NPU (device mismatch)"),
    C("data = scatter(data, [device])[0]", "tensor_to_device", "replace", True,
      "data['img'] = [img.to(device) for img in data['img']]",
      "mmcv 1.x parallel.scatter copies through torch.cuda.device/stream; move the image tensors with .to(device) instead"),
    C("if streamqueue is None and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if streamqueue is None and torch.npu.is_available():",
      "False on an NPU host: the async path silently runs without a stream pool (no overlap, still correct)"),
])

E("mmdet2_util_distribution", "mmdet/utils/util_distribution.py", "device_branch_or_abstraction",
  "mmdetection 2.x mmdet/utils/util_distribution.py (build_dp / build_ddp / get_device)", [
    C("def build_dp(model, device='cuda', dim=0, *args, **kwargs):", "device_type", "replace", False,
      "def build_dp(model, device='npu', dim=0, *args, **kwargs):",
      "default only; mmdet's own callers pass cfg.device"),
    C("def build_ddp(model, device='cuda', *args, **kwargs):", "device_type", "replace", False,
      "def build_ddp(model, device='npu', *args, **kwargs):",
      "default only; mmdet's own callers pass cfg.device"),
    C("=if device == 'cuda':", "device_type", "add_branch", True,
      "elif device == 'npu': from mmcv.device.npu import NPUDataParallel; dp_factory['npu'] = NPUDataParallel; model = model.npu()",
      "build_dp has no NPU entry: dp_factory['npu'] raises KeyError once get_device() reports npu"),
    C("assert device in ['cuda', 'mlu'], 'Only available for cuda or mlu devices.'", "device_type", "replace", True,
      "assert device in ['cuda', 'mlu', 'npu'], 'Only available for cuda, mlu or npu devices.'",
      "distributed training on device 'npu' trips the assert"),
    C("=elif device == 'cuda':", "device_type", "add_branch", True,
      "elif device == 'npu': from mmcv.device.npu import NPUDistributedDataParallel; ddp_factory['npu'] = NPUDistributedDataParallel; model = model.npu()",
      "no NPU DDP wrapper registered; MMDistributedDataParallel scatters through CUDA"),
    C("'cuda': torch.cuda.is_available(),", "device_type", "add_branch", True,
      "'npu': hasattr(torch, 'npu') and torch.npu.is_available(),",
      "on an NPU host every entry is False so get_device() returns 'cpu' and training silently runs on the CPU"),
    C("if device.startswith('cuda'):", "device_type", "add_branch", True,
      "if device.startswith('npu'): return torch.npu.device_count()",
      "falls through to `return 1` for npu: the --gpu-id sanity check sees one card"),
])

E("swindet_apis_train", "mmdet/apis/train.py", "explicit_replacement",
  "Swin-Transformer-Object-Detection mmdet/apis/train.py (mmdet 2.x train_detector with apex O1 path)", [
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
      "def init_random_seed(seed=None, device='npu'):",
      "default only: tools/train.py passes device=cfg.device; a caller relying on it would build the broadcast tensor on CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above also seeds the privateuse1 (npu) generator on torch>=2.1 (older torch: unconfirmed)"),
    C("model.cuda(), optimizer, opt_level='O1')", "tensor_to_device", "replace", True,
      "model.npu(), optimizer, opt_level='O1')",
      "apex O1 path moves the model with .cuda(); Ascend apex keeps amp.initialize but the model must go to the NPU"),
    C("=model.cuda(),", "tensor_to_device", "replace", True,
      "model.npu(),", "model moved to CUDA before DDP wrap"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "mmcv 1.x MMDistributedDataParallel scatters inputs through torch.cuda; mmcv.device.npu provides the NPU wrapper"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "CUDA current_device raises on an NPU host"),
    C("model = MMDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDataParallel(", "single-card path scatters with CUDA streams; use the NPU data-parallel wrapper"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "model moved to a CUDA device"),
    C("mem = torch.cuda.max_memory_allocated() / (1024 * 1024)", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated() / (1024 * 1024)",
      "CUDA allocator stats do not see NPU memory (reports 0 or raises)"),
    C("mem_mb = torch.tensor([mem], dtype=torch.int, device=torch.device('cuda'))", "device_type", "replace", True,
      "mem_mb = torch.tensor([mem], dtype=torch.int, device=torch.device('npu'))",
      "tensor for the reduce is created on CUDA; HCCL needs an NPU tensor"),
])

E("swindet_mmcv_custom_optimizer", "mmcv_custom/runner/optimizer.py", "explicit_replacement",
  "Swin-Transformer-Object-Detection mmcv_custom/runner (apex DistOptimizerHook, amp checkpoint helpers)", [
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", "replace", False,
      "from apex.optimizers import NpuFusedAdam as FusedAdam, NpuFusedLamb as FusedLAMB",
      "Ascend apex ships no CUDA FusedAdam/FusedLAMB (NpuFused* instead); import is guarded and the shipped configs use AdamW, so only configs naming FusedAdam break"),
    C("def resume_amp(runner, checkpoint_path, map_location='cuda'):", "device_type", "replace", False,
      "def resume_amp(runner, checkpoint_path, map_location='npu'):",
      "apex amp state holds only python scalars, so the CUDA map_location is never exercised; edited for consistency"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", "raises on an NPU host when map_location='default'"),
    C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", False,
      "map_location=lambda storage, loc: storage.npu(device_id))",
      "never invoked for the tensor-free amp state; kept consistent with the NPU device"),
])

E("mmdet2_tools_train", "tools/train.py", "device_branch_or_abstraction",
  "mmdetection 2.x tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "entry script of a torch<=2.1 stack (no torch_npu autoload); mmcv>=1.7 imports torch_npu in its device probe (from memory, unconfirmed), so the explicit import is belt-and-braces"),
])

E("mmdet2_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement",
  "mmdetection 2.x tools/analysis_tools/benchmark.py (distributed FPS benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "the ported script calls torch.npu.*; mmcv>=1.7 already imports torch_npu when probing devices (from memory, unconfirmed)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
      "model = NPUDistributedDataParallel(",
      "mmcv 1.x MMDistributedDataParallel scatters through torch.cuda; use mmcv.device.npu's wrapper"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model moved to CUDA"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "CUDA current_device raises on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA; timing needs the NPU queue drained"),
    C("torch.cuda.synchronize()  # wait for the forward pass to finish", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the forward pass to finish",
      "without an NPU sync the timer measures only kernel launch (async NPU execution)"),
    C("mem_mb = torch.cuda.max_memory_allocated() / 1024 / 1024", "torch_cuda_api", "replace", True,
      "mem_mb = torch.npu.max_memory_allocated() / 1024 / 1024",
      "CUDA allocator stats do not cover NPU memory (reports 0 or raises)"),
])

E("mmdet2_focal_loss", "mmdet/models/losses/focal_loss.py", "device_branch_or_abstraction",
  "mmdetection 2.x mmdet/models/losses/focal_loss.py", [
    C("if torch.cuda.is_available() and pred.is_cuda:", "device_type", "replace", False,
      "if (torch.cuda.is_available() and pred.is_cuda) or pred.device.type == 'npu':",
      "NPU tensors fall to the pure-PyTorch focal loss, which is correct but slower than the mmcv op (NPU kernel in an NPU-built mmcv: unconfirmed here)"),
])

E("mmdet2_iou2d_calculator", "mmdet/core/bbox/iou_calculators/iou2d_calculator.py", "device_branch_or_abstraction",
  "mmdetection 2.x mmdet/core/bbox/iou_calculators/iou2d_calculator.py", [
    C("if not x.is_cuda and x.dtype == torch.float16:", "device_type", "replace", False,
      "if x.device.type == 'cpu' and x.dtype == torch.float16:",
      "the CPU-fp16 workaround also fires for NPU tensors: a needless fp32 round-trip, results unchanged"),
    C("if not overlaps.is_cuda and overlaps.dtype == torch.float16:", "device_type", "replace", False,
      "if overlaps.device.type == 'cpu' and overlaps.dtype == torch.float16:",
      "NPU overlaps get upcast to fp32, giving back the memory saving dtype='fp16' is meant for; values unchanged"),
])

E("mmdet3_max_iou_assigner", "mmdet/models/task_modules/assigners/max_iou_assigner.py", "device_branch_or_abstraction",
  "mmdetection 3.x mmdet/models/task_modules/assigners/max_iou_assigner.py (gpu_assign_thr CPU fallback)", [])

E("mmdet3_fcn_mask_head", "mmdet/models/roi_heads/mask_heads/fcn_mask_head.py", "device_branch_or_abstraction",
  "mmdetection 3.x mmdet/models/roi_heads/mask_heads/fcn_mask_head.py (chunked mask pasting, GPU_MEM_LIMIT)", [])

E("swindet_cascade_config",
  "work_dirs/cascade_mask_rcnn_swin_tiny_3x/cascade_mask_rcnn_swin_tiny_patch4_window7_mstrain_480-800_giou_4conv1f_adamw_3x_coco.py",
  "device_branch_or_abstraction",
  "Swin-Transformer-Object-Detection dumped mmdet 2.x config (Cascade Mask R-CNN, apex O1 via DistOptimizerHook)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", False,
      "dist_params = dict(backend='hccl')",
      "NCCL does not exist on Ascend; mmcv>=1.7 init_dist is believed to force 'hccl' when an NPU is present (from memory, unconfirmed), otherwise this fails at init_process_group"),
])

E("mmdet3_image_demo", "demo/image_demo.py", "explicit_replacement",
  "mmdetection 3.x demo/image_demo.py (DetInferencer) with a user-added --fp16/--timing", [
    C("'--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
      "'--device', default='npu:0', help='Device used for inference')",
      "default device does not exist on an Ascend host"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "CUDA autocast does not cover NPU ops: --fp16 silently runs in fp32"),
    C("if init_args['device'] and init_args['device'].startswith('cuda'):", "device_type", "replace", False,
      "if init_args['device'] and init_args['device'].startswith(('cuda', 'npu')):",
      "skips the sync for npu devices, but DetInferencer already copies predictions to host numpy, so the timing is still right"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()",
      "only reached for cuda devices; for the NPU branch above it would need the NPU sync (results are host-synced anyway)"),
])

E("mmdet3_dino_layers", "mmdet/models/layers/transformer/dino_layers.py", "device_branch_or_abstraction",
  "mmdetection 3.x mmdet/models/layers/transformer/dino_layers.py (DINO decoder + CDN query generator)", [])

E("mmdet2_sim_ota_assigner", "mmdet/core/bbox/assigners/sim_ota_assigner.py", "explicit_replacement",
  "mmdetection 2.x mmdet/core/bbox/assigners/sim_ota_assigner.py (YOLOX SimOTA with CPU fallback on OOM)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised), so cached NPU blocks are not released before the CPU retry; the retry itself still works"),
])

E("internimage_dcnv3_func", "ops_dcnv3/functions/dcnv3_func.py", "kernel_rewrite",
  "OpenGVLab InternImage ops_dcnv3/functions/dcnv3_func.py (DCNv3 nvcc extension + PyTorch reference core)", [
    C("=import DCNv3", "custom_cuda_extension", "replace", True,
      "DCNv3 = importlib.import_module('DCNv3') if importlib.util.find_spec('DCNv3') else None  # no nvcc build on Ascend",
      "the DCNv3 extension is CUDA-only (setup.py refuses to build without CUDA), so importing the ops package fails on an NPU host"),
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "CUDA-bound custom_fwd/custom_bwd ignore NPU autocast state; only matters once the Function runs on NPU"),
    C("dcn_version = float(pkg_resources.get_distribution('DCNv3').version)", "custom_cuda_extension", "replace", True,
      "dcn_version = float(pkg_resources.get_distribution('DCNv3').version) if DCNv3 is not None else 0.0",
      "DistributionNotFound at import time when the CUDA extension was never installed"),
    C("output = DCNv3.dcnv3_forward(*args)", "custom_cuda_extension", "replace", True,
      "output = dcnv3_core_pytorch(input, offset, mask, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, group, group_channels, offset_scale, remove_center)",
      "call into the nvcc-built kernel; on NPU use the grid_sample reference core (or an Ascend C kernel)"),
    C("DCNv3.dcnv3_backward(*args)", "custom_cuda_extension", "replace", True,
      "grad_input, grad_offset, grad_mask = torch.autograd.grad(ctx.ref_output, (input, offset, mask), grad_output)",
      "backward kernel of the CUDA extension; autograd through the PyTorch core replaces it"),
])

E("internimage_dcnv3_setup", "ops_dcnv3/setup.py", "kernel_rewrite",
  "OpenGVLab InternImage ops_dcnv3/setup.py (CUDAExtension build of DCNv3)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only needed if DCNv3 is re-implemented as an Ascend C / OpPlugin kernel; the CUDA helpers import fine on a CPU torch"),
    C("source_cuda = glob.glob(os.path.join(extensions_dir, 'cuda', '*.cu'))", "custom_cuda_extension", "replace", True,
      "source_npu = glob.glob(os.path.join(extensions_dir, 'npu', '*.cpp'))",
      ".cu kernels have no nvcc path on Ascend; the NPU build needs Ascend C/OpPlugin sources"),
    C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "replace", True,
      "if hasattr(torch, 'npu') and torch.npu.is_available():",
      "always False on an NPU host, so the build falls into the NotImplementedError branch"),
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", True,
      "extension = NpuExtension", "CUDAExtension requires nvcc/CUDA_HOME"),
    C("sources += source_cuda", "custom_cuda_extension", "replace", True,
      "sources += source_npu", "CUDA sources cannot be compiled for the NPU"),
    C("extra_compile_args['nvcc'] = [", "custom_cuda_extension", "removal", False, None,
      "nvcc flag list (all commented out) is meaningless for an NPU extension"),
])

E("internimage_backbone", "detection/mmdet_custom/models/backbones/intern_image.py", "device_branch_or_abstraction",
  "OpenGVLab InternImage detection/mmdet_custom/models/backbones/intern_image.py", [
    C("core_op='DCNv3',", "custom_cuda_extension", "replace", False,
      "core_op='DCNv3' if torch.cuda.is_available() else 'DCNv3_pytorch',",
      "default selects the CUDA-extension operator; the shipped configs pass core_op explicitly, so only configs that omit it are affected"),
])

E("internimage_config", "detection/configs/coco/mask_rcnn_internimage_t_fpn_1x_coco.py", "device_branch_or_abstraction",
  "OpenGVLab InternImage detection config (Mask R-CNN, InternImage-T, mmdet 2.x)", [
    C("core_op='DCNv3',", "custom_cuda_extension", "replace", True,
      "core_op='DCNv3_pytorch',",
      "DCNv3 is the nvcc-built extension; on Ascend the grid_sample-based DCNv3_pytorch operator (or an NPU kernel) must be selected"),
])

E("vitadapter_msda_func", "segmentation/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "ViT-Adapter segmentation/ops/functions/ms_deform_attn_func.py (Deformable-DETR MSDA nvcc op, Mask2Former-style import guard)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "CUDA-bound decorators: cast_inputs=float32 is not applied to NPU tensors under NPU autocast; matters only once an NPU kernel sits behind the Function"),
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", "replace", True,
      "MSDA = None  # CUDA-only op; fall back to ms_deform_attn_core_pytorch on Ascend",
      "the MSDA extension cannot be built without nvcc, so importing the ops package aborts on an NPU host"),
    C("output = MSDA.ms_deform_attn_forward(value, value_spatial_shapes,", "custom_cuda_extension", "replace", False,
      "output = ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)",
      "not reached on NPU once the dispatcher falls back; an NPU MSDA kernel (mmcv-npu / mx_driving, unconfirmed) would go here"),
    C("MSDA.ms_deform_attn_backward(", "custom_cuda_extension", "replace", False,
      "torch.autograd.grad(ms_deform_attn_core_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights), (value, sampling_locations, attention_weights), grad_output)",
      "CUDA backward kernel; same reasoning as the forward call"),
    C("if value.is_cuda:", "device_type", "add_branch", False,
      "if value.device.type == 'npu' and npu_msda is not None: return npu_msda(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
      "NPU tensors take the grid_sample reference path: correct but slow and memory-hungry; an NPU kernel would be a performance port"),
])

E("mmseg1_video_demo", "demo/video_demo.py", "explicit_replacement",
  "mmsegmentation 1.x demo/video_demo.py with a user-added FPS log", [
    C("'--device', default='cuda:0', help='Device used for inference')", "device_type", "replace", True,
      "'--device', default='npu:0', help='Device used for inference')",
      "default device does not exist on an Ascend host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "runs every frame: raises on a torch without CUDA (and with CUDA present would not wait for the NPU)"),
    C("f'(max allocated {torch.cuda.max_memory_allocated() >> 20} MiB)')", "torch_cuda_api", "replace", True,
      "f'(max allocated {torch.npu.max_memory_allocated() >> 20} MiB)')",
      "CUDA allocator stats do not cover NPU memory (reports 0 or raises)"),
])

E("mmseg1_pspnet_amp_config", "configs/pspnet/pspnet_r50-d8_4xb2-amp-80k_cityscapes-512x1024.py", "device_branch_or_abstraction",
  "mmsegmentation 1.x PSPNet AMP config (flattened: SyncBN, AmpOptimWrapper, env_cfg)", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False,
      "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist is believed to force 'hccl' when an NPU is detected (from memory, unconfirmed); edited so the config states the real backend"),
])

E("mmpretrain_attention", "mmpretrain/models/utils/attention.py", "device_branch_or_abstraction",
  "mmpretrain 1.x mmpretrain/models/utils/attention.py (SDPA selection, window attention)", [])

E("mmpretrain_rsb_config", "configs/resnet/resnet50_8xb256-rsb-a1-600e_in1k.py", "device_branch_or_abstraction",
  "mmpretrain 1.x ResNet-50 RSB-A1 config (dumped: SyncBN, AmpOptimWrapper + Lamb, pinned dataloader)", [
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "on torch versions whose DataLoader only pins for CUDA this silently disables pinning on an NPU host (performance only; version-dependent, unconfirmed)"),
    C("optimizer=dict(type='Lamb', lr=0.008, weight_decay=0.01),", "fused_optimizer", "replace", False,
      "optimizer=dict(type='NpuFusedLamb', lr=0.008, weight_decay=0.01),",
      "performance: msFmkTransplt advises torch_npu.optim.NpuFusedLamb for LAMB (must be registered in mmengine's OPTIMIZERS first)"),
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", "replace", False,
      "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist is believed to force 'hccl' when an NPU is detected (from memory, unconfirmed)"),
])

E("mmdet3d0_iou3d_utils", "mmdet3d/ops/iou3d/iou3d_utils.py", "kernel_rewrite",
  "mmdetection3d 0.x mmdet3d/ops/iou3d/iou3d_utils.py (BEV IoU / rotated NMS via the iou3d_cuda extension)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "the rewritten functions call torch_npu.npu_rotated_iou / npu_nms_rotated by module name"),
    C("from . import iou3d_cuda", "custom_cuda_extension", "removal", True, None,
      "iou3d_cuda is built from .cu sources only; it cannot be built or imported on an Ascend host"),
    C("iou3d_cuda.boxes_iou_bev_gpu(boxes_a.contiguous(), boxes_b.contiguous(),", "custom_cuda_extension", "replace", True,
      "ans_iou = torch_npu.npu_rotated_iou(xyxyr2xywhr(boxes_a), xyxyr2xywhr(boxes_b), trans=False, mode=0, is_cross=True)",
      "CUDA kernel call; torch_npu has a rotated-IoU op, but box layout/angle conventions must be converted (conversion details unconfirmed)"),
    C("num_out = iou3d_cuda.nms_gpu(boxes, keep, thresh, boxes.device.index)", "custom_cuda_extension", "replace", True,
      "keep, num_out = torch_npu.npu_nms_rotated(xyxyr2xywhr(boxes), scores[order], thresh)",
      "CUDA rotated-NMS kernel; NPU counterpart is torch_npu.npu_nms_rotated (box convention conversion unconfirmed)"),
    C("keep = order[keep[:num_out].cuda(boxes.device)].contiguous()", "tensor_to_device", "replace", True,
      "keep = order[keep[:num_out].to(boxes.device)].contiguous()",
      ".cuda() on the host-side keep buffer; must follow the boxes' (NPU) device"),
    C("num_out = iou3d_cuda.nms_normal_gpu(boxes, keep, thresh,", "custom_cuda_extension", "replace", True,
      "keep, num_out = torch_npu.npu_nms_rotated(xyxyr2xywhr(boxes) * boxes.new_tensor([1, 1, 1, 1, 0]), scores[order], thresh)",
      "axis-aligned BEV NMS kernel from the CUDA extension; yaw zeroed then NPU rotated NMS (or torchvision-style nms)"),
    C("return order[keep[:num_out].cuda(boxes.device)].contiguous()", "tensor_to_device", "replace", True,
      "return order[keep[:num_out].to(boxes.device)].contiguous()", ".cuda() moves the indices to a CUDA device"),
])

E("mmdet3d0_points_in_boxes", "mmdet3d/ops/roiaware_pool3d/points_in_boxes.py", "kernel_rewrite",
  "mmdetection3d 0.x mmdet3d/ops/roiaware_pool3d/points_in_boxes.py (roiaware_pool3d_ext wrappers)", [
    C("from . import roiaware_pool3d_ext", "custom_cuda_extension", "replace", True,
      "from . import roiaware_pool3d_ext  # rebuilt CPU-only; NPU path via mx_driving (unconfirmed)",
      "extension is built as a CUDAExtension; on Ascend it must be rebuilt without the .cu sources (CPU kernels) or replaced by an NPU op package"),
    C("=if torch.cuda.current_device() != points_device:", "torch_cuda_api", "replace", True,
      "if points.device.type == 'cuda' and torch.cuda.current_device() != points_device:",
      "queries the CUDA runtime on an NPU host (raises); the device pinning dance is CUDA-specific"),
    C("torch.cuda.set_device(points_device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(points_device)", "CUDA set_device on an NPU host"),
    C("torch.cuda.set_device(boxes.get_device())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(boxes.get_device())", "CUDA set_device on an NPU host (batch variant)"),
    C("roiaware_pool3d_ext.points_in_boxes_gpu(boxes.contiguous(),", "custom_cuda_extension", "replace", True,
      "box_idxs_of_pts = npu_points_in_boxes(boxes.contiguous(), points.contiguous())",
      "CUDA kernel of the extension; needs an NPU kernel (e.g. DrivingSDK/mx_driving, API unconfirmed) or the CPU fallback"),
    C("if torch.cuda.current_device() != points_device:  # batch", "torch_cuda_api", "replace", True,
      "if points.device.type == 'cuda' and torch.cuda.current_device() != points_device:  # batch",
      "same CUDA device query in the batch variant"),
    C("roiaware_pool3d_ext.points_in_boxes_batch(boxes.contiguous(),", "custom_cuda_extension", "replace", True,
      "box_idxs_of_pts = npu_points_in_boxes_all(boxes.contiguous(), points.contiguous())",
      "CUDA-only batch kernel; no CPU implementation in this extension"),
    C("if points.is_cuda:", "device_type", "add_branch", True,
      "if points.device.type == 'npu': return npu_points_in_boxes(boxes, points)",
      "NPU tensors fall into the CPU-kernel branch, which hands device pointers to a host kernel (crash or garbage); needs an NPU branch or an explicit .cpu() round trip"),
])

E("mmdet3d0_setup", "setup.py", "kernel_rewrite",
  "mmdetection3d 0.x setup.py (make_cuda_ext for the vendored ops)", [
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "add_branch", True,
      "elif os.getenv('FORCE_NPU', '0') == '1': from torch_npu.utils.cpp_extension import NpuExtension; extension = NpuExtension; sources += sources_npu",
      "on an NPU host every op falls into the CppExtension branch, which still lists .cu files for several ops and so fails to build; an NPU branch (or CPU-only source lists) is needed"),
    C("name='sparse_conv_ext',", "custom_cuda_extension", "removal", True, None,
      "the vendored spconv is CUDA-only (.cu sources listed as plain sources); drop the whole make_cuda_ext entry on Ascend and use an NPU sparse-conv implementation"),
    C("'src/iou3d_kernel.cu',", "custom_cuda_extension", "removal", True, None,
      "CUDA kernel listed in `sources`, so even the CPU build needs nvcc; IoU/NMS are re-implemented with torch_npu ops in iou3d_utils.py"),
    C("'src/scatter_points_cuda.cu',", "custom_cuda_extension", "removal", True, None,
      "CUDA source in the CPU source list of voxel_layer; move to sources_cuda"),
    C("'src/voxelization_cuda.cu',", "custom_cuda_extension", "removal", True, None,
      "CUDA source in the CPU source list of voxel_layer; move to sources_cuda"),
    C("'src/interpolate.cpp', 'src/three_nn_cuda.cu',", "custom_cuda_extension", "replace", True,
      "'src/interpolate.cpp',", "CUDA sources in the CPU source list of interpolate_ext"),
    C("'src/three_interpolate_cuda.cu'", "custom_cuda_extension", "removal", True, None,
      "CUDA source in the CPU source list of interpolate_ext"),
])

E("bevfusion_bev_pool", "projects/BEVFusion/bevfusion/ops/bev_pool/bev_pool.py", "kernel_rewrite",
  "mmdetection3d projects/BEVFusion bevfusion/ops/bev_pool/bev_pool.py (bev_pool_ext CUDA kernel)", [
    C("from . import bev_pool_ext", "custom_cuda_extension", "replace", True,
      "bev_pool_ext = None  # CUDA-only; NPU path below uses index_put_ (or an mx_driving bev_pool op, unconfirmed)",
      "bev_pool_ext is compiled from .cu sources by the project's setup.py; the import fails on Ascend"),
    C("out = bev_pool_ext.bev_pool_forward(", "custom_cuda_extension", "replace", True,
      "out = x.new_zeros((B, D, H, W, x.shape[1])).index_put_((geom_feats[:, 3].long(), geom_feats[:, 2].long(), geom_feats[:, 0].long(), geom_feats[:, 1].long()), x, accumulate=True)",
      "forward kernel of the CUDA extension; an accumulate index_put_ gives the same interval sums on the NPU"),
    C("x_grad = bev_pool_ext.bev_pool_backward(", "custom_cuda_extension", "replace", True,
      "x_grad = out_grad[geom_feats[:, 3].long(), geom_feats[:, 2].long(), geom_feats[:, 0].long(), geom_feats[:, 1].long()]",
      "backward kernel of the CUDA extension; the gradient of a scatter-add is a gather"),
])

E("bevdet_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a BEVFusion/mmdet3d 1.x user project (CUDA 11.8 wheels, spconv)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; Ascend x86 hosts install the CPU torch wheel (aarch64 uses plain PyPI)"),
    C("torch==2.0.1+cu118", "device_type", "replace", True,
      "torch==2.1.0",
      "CUDA build pin; torch must be a version with a maintained torch_npu release (2.0.1 pairs only with EOL torch_npu)"),
    C("torchvision==0.15.2+cu118", "device_type", "replace", True,
      "torchvision==0.16.0", "CUDA build pin; must match the torch chosen for torch_npu"),
    C("einops==0.6.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10", "torch_npu wheel pinned to the same torch version (x.y.z[.postN] rule)"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu118/torch2.0/index.html", "custom_cuda_extension", "removal", True, None,
      "prebuilt mmcv wheels carry CUDA ops; on Ascend mmcv is built from source with MMCV_WITH_OPS=1 FORCE_NPU=1"),
    C("spconv-cu118==2.3.6", "custom_cuda_extension", "removal", True, None,
      "CUDA-only sparse convolution package"),
    C("cumm-cu118==0.4.11", "custom_cuda_extension", "removal", True, None,
      "CUDA matrix-multiply library required only by spconv"),
    C("=pynvml", "device_type", "removal", False, None,
      "NVML bindings have no NPU counterpart (use npu-smi / torch.npu.utilization); harmless unless code calls nvmlInit"),
])

E("mmdet2_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "mmdetection 2.x docker/Dockerfile", [
    C("ARG CUDA=\"11.1\"", "device_type", "removal", False, None,
      "only feeds the CUDA base-image tag"),
    C("ARG CUDNN=\"8\"", "device_type", "removal", False, None,
      "only feeds the CUDA base-image tag"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; needs a CANN base image (tag illustrative) plus torch/torch_npu"),
    C("ENV TORCH_CUDA_ARCH_LIST=\"6.0 6.1 7.0 7.5 8.0 8.6+PTX\" \\", "env_var", "removal", False, None,
      "CUDA arch list is ignored without nvcc"),
    C("TORCH_NVCC_FLAGS=\"-Xfatbin -compress-all\" \\", "env_var", "removal", False, None,
      "nvcc flags are ignored without nvcc"),
    C("=FORCE_CUDA=\"1\"", "env_var", "replace", True,
      "FORCE_NPU=\"1\"",
      "mmcv's setup checks FORCE_CUDA before FORCE_NPU (from memory), so a source build of mmcv would still take the CUDA path and fail without nvcc"),
    C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64/3bf863cc.pub", "device_type", "removal", False, None,
      "NVIDIA apt key workaround only matters for the CUDA base image"),
    C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/machine-learning/repos/ubuntu1804/x86_64/7fa2af80.pub", "device_type", "removal", False, None,
      "NVIDIA apt key workaround only matters for the CUDA base image"),
    C("RUN pip install --no-cache-dir --upgrade pip wheel setuptools", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "a CANN image has no torch/torch_npu; they must be installed as a matched pair"),
    C("RUN pip install --no-cache-dir mmcv-full==1.7.1 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir --no-binary mmcv-full mmcv-full==1.7.1",
      "CUDA-built mmcv-full wheel; on Ascend the ops must be compiled from source for the NPU"),
    C("ENV FORCE_CUDA=\"1\"", "env_var", "replace", True,
      "ENV FORCE_NPU=\"1\"", "same FORCE_CUDA precedence problem for any later source build"),
])

E("internimage_env", "environment.yml", "explicit_replacement",
  "OpenGVLab InternImage-style conda environment.yml (pytorch 1.11 + cudatoolkit 11.3, mmcv-full cu113)", [
    C("- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel only provides CUDA packages"),
    C("- pytorch=1.11.0", "device_type", "removal", True, None,
      "conda pytorch from the pytorch/nvidia channels is the CUDA build, and 1.11 pairs only with an EOL torch_npu; torch 2.1.0 (CPU wheel) comes from pip with torch-npu"),
    C("- torchvision=0.12.0", "device_type", "removal", True, None,
      "must follow torch into the pip section (torchvision==0.16.0)"),
    C("- cudatoolkit=11.3", "device_type", "removal", False, None,
      "CUDA runtime is dead weight on an Ascend host (CANN provides the runtime)"),
    C("- -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html", "custom_cuda_extension", "removal", True, None,
      "CUDA-built mmcv-full wheels; build mmcv-full from source with FORCE_NPU=1"),
    C("- mmcv-full==1.5.0", "custom_cuda_extension", "replace", True,
      "- mmcv-full==1.7.2  # MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-binary mmcv-full",
      "mmcv-full 1.5 predates mmcv's NPU support (added in the 1.7 line, from memory)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch==2.1.0  # with torchvision==0.16.0 and torch-npu==2.1.0.post10", "torch and torch_npu installed as a matched pair (x.y.z[.postN] rule)"),
    C("# build the DCNv3 op afterwards: cd ops_dcnv3 && sh make.sh", "custom_cuda_extension", "replace", False,
      "# DCNv3 has no NPU build: set core_op='DCNv3_pytorch' in the configs",
      "comment-only instruction, but it sends users to a CUDA build that fails on Ascend"),
])

E("mmdet_dist_train_multinode", "tools/dist_train_multinode.sh", "explicit_replacement",
  "multi-node torchrun launcher in an mmdetection 3.x user fork (after tools/dist_train.sh)", [
    C("=set -x", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu imports; often already done by the login profile or container"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the intended device restriction silently disappears"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL logging knob has no effect on HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, no-op on HCCL"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-bond0}",
      "the NIC pin is silently dropped; HCCL then picks the root-info NIC by its own priority, which can break multi-node link setup"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P level has no meaning on Ascend"),
    C("nvidia-smi --query-gpu=index,name,memory.used,utilization.gpu --format=csv > ${WORK_DIR}/gpu_state_node${NODE_RANK}.csv", "device_type", "replace", False,
      "npu-smi info > ${WORK_DIR}/npu_state_node${NODE_RANK}.txt",
      "nvidia-smi is missing on Ascend hosts; without set -e the script carries on, only the diagnostic file is lost"),
])
