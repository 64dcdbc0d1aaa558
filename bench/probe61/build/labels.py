"""Labels for probe61 (hand-written synthetic upstream files; see ../README.md).

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
EXPL, XFER, DEV = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

# --------------------------------------------------------------------------------------------
# mmcv 1.x runner / parallel / ops
# --------------------------------------------------------------------------------------------
E("mmcv_dist_utils", "mmcv/runner/dist_utils.py", EXPL,
  "open-mmlab/mmcv 1.x mmcv/runner/dist_utils.py (init_dist for pytorch / mpi / slurm launchers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401",
      "torch.npu.set_device below needs torch_npu loaded; mmcv imports it inside its NPU branch"),
    C("def init_dist(launcher: str, backend: str = 'nccl'", "dist_backend", R, True,
      "def init_dist(launcher: str, backend: str = 'hccl', **kwargs) -> None:",
      "default backend reaches init_process_group unchanged for every caller that does not pass "
      "dist_params; NCCL does not exist on Ascend"),
    C("=num_gpus = torch.cuda.device_count()",
      "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so `rank % num_gpus` raises ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True,
      "torch.npu.set_device(rank % num_gpus)", "needs a CUDA build; every rank would also stay on device 0"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "MPI launcher path"),
    C("num_gpus = torch.cuda.device_count()  # per node", "torch_cuda_api", R, True,
      "num_gpus = torch.npu.device_count()  # per node",
      "slurm launcher: 0 devices -> ZeroDivisionError in proc_id % num_gpus"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", R, True,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm launcher"),
]),

E("mmcv_fp16_utils", "mmcv/runner/fp16_utils.py", EXPL,
  "open-mmlab/mmcv 1.x mmcv/runner/fp16_utils.py (auto_fp16 / force_fp32 on torch.cuda.amp.autocast)", [
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch_npu.npu.amp import autocast",
      "CUDA autocast does not cover NPU tensors: every @auto_fp16 forward silently runs in fp32 on NPU "
      "(wrap_fp16_model no longer halves the model for torch>=1.6)"),
]),

E("mmcv_optimizer_hook", "mmcv/runner/hooks/optimizer.py", EXPL,
  "open-mmlab/mmcv 1.x mmcv/runner/hooks/optimizer.py (Fp16OptimizerHook on torch.cuda.amp.GradScaler)", [
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch_npu.npu.amp import GradScaler",
      "torch.cuda.amp.GradScaler disables itself without CUDA, so fp16 configs train with no loss scaling"),
]),

E("mmcv_scatter_gather", "mmcv/parallel/scatter_gather.py", EXPL,
  "open-mmlab/mmcv 1.x mmcv/parallel/_functions.py + scatter_gather.py (DataContainer scatter onto CUDA streams)", [
    C("return OrigScatter.apply(target_gpus, None, dim, obj)", "distributed_framework", R, True,
      "return Scatter.forward(target_gpus, obj)  # NPU: copy with .to('npu:i') instead of torch.cuda.comm",
      "torch.nn.parallel._functions.Scatter goes through torch.cuda.comm.scatter (unsupported on Ascend)"),
    C("streams = [_get_stream(device) for device in target_gpus]", "torch_cuda_api", R, True,
      "streams = [_get_stream(torch.device('npu', device)) for device in target_gpus]",
      "an int device makes torch build a CUDA side stream"),
    C("with torch.cuda.device(devices[0]), torch.cuda.stream(stream):", "torch_cuda_api", R, True,
      "with torch.npu.device(devices[0]), torch.npu.stream(stream):", "CUDA device/stream context"),
    C("output = output.cuda(devices[0], non_blocking=True)", "tensor_to_device", R, True,
      "output = output.npu(devices[0], non_blocking=True)", "host-to-device copy of every batch"),
    C("=with torch.cuda.device(devices[0]):", "torch_cuda_api", R, True,
      "with torch.npu.device(devices[0]):", "synchronize_stream"),
    C("main_stream = torch.cuda.current_stream()", "torch_cuda_api", R, True,
      "main_stream = torch.npu.current_stream()", "synchronize_stream"),
    C("return input.get_device() if input.is_cuda else -1", "device_type", R, False,
      "return input.get_device() if input.device.type == 'npu' else -1",
      "NPU tensors look like CPU tensors here; they are then copied again through a side stream, "
      "which costs a sync but stays correct"),
]),

E("mmcv_ops_nms", "mmcv/ops/nms.py", DEV,
  "open-mmlab/mmcv 1.x mmcv/ops/nms.py (NMSop / soft_nms / batched_nms / nms_rotated on the _ext library)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401",
      "the NPU branches below call torch_npu ops"),
    C("ext_module = ext_loader.load_ext(", "custom_cuda_extension", R, True,
      "ext_module = ext_loader.load_ext(  # mmcv._ext rebuilt with MMCV_WITH_OPS=1 FORCE_NPU=1",
      "a CUDA-built mmcv._ext does not load on an NPU host; the library has to be rebuilt with NPU kernels"),
    C("inds = ext_module.nms(", "custom_cuda_extension", B, True,
      "if bboxes.device.type == 'npu': inds = torch_npu.npu_nms_v4(bboxes, scores, max_num, "
      "torch.tensor(iou_threshold), torch.tensor(score_threshold))[0]",
      "the CUDA kernel behind ext_module.nms has no NPU dispatch"),
    C("keep_inds = ext_module.nms_rotated(dets_cw", "custom_cuda_extension", B, True,
      "if dets.device.type == 'npu': keep_inds = torch_npu.npu_nms_rotated(dets_cw, scores, iou_threshold)[0]",
      "rotated NMS (MMRotate) runs on the same CUDA-only kernel"),
]),

E("mmcv_ops_deform_conv", "mmcv/ops/deform_conv.py", DEV,
  "open-mmlab/mmcv 1.x mmcv/ops/deform_conv.py (DeformConv2dFunction on the _ext library)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401",
      "needed by the npu_deformable_conv2d branch"),
    C("ext_module = ext_loader.load_ext('_ext', [", "custom_cuda_extension", R, True,
      "ext_module = ext_loader.load_ext('_ext', [  # built with FORCE_NPU=1",
      "CUDA-built _ext cannot load on NPU"),
    C("ext_module.deform_conv_forward(", "custom_cuda_extension", B, True,
      "if input.device.type == 'npu': return DeformConv2dFunction._npu_forward(ctx, input, offset, weight)  "
      "# torch_npu.npu_deformable_conv2d",
      "forward kernel is CUDA-only"),
    C("ext_module.deform_conv_backward_input(", "custom_cuda_extension", B, True,
      "if grad_output.device.type == 'npu': return DeformConv2dFunction._npu_backward(ctx, grad_output)",
      "backward kernels are CUDA-only (one NPU branch at the top of backward covers both calls)"),
]),

E("bevformer_spatial_cross_attn", "projects/mmdet3d_plugin/bevformer/modules/spatial_cross_attention.py", DEV,
  "fundamentalvision/BEVFormer spatial_cross_attention.py + multi_scale_deformable_attn_function.py "
  "(mmcv _ext ms_deform_attn, custom_fwd fp32 Function)", [
    C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", R, False,
      "from torch_npu.npu.amp import custom_bwd, custom_fwd",
      "CUDA custom_fwd ignores NPU autocast, so cast_inputs=float32 would not apply; the Function is only "
      "reached on the is_cuda path, hence optional until that dispatch is ported"),
    C("ext_module = ext_loader.load_ext(", "custom_cuda_extension", R, True,
      "ext_module = ext_loader.load_ext(  # mmcv._ext built for NPU (or mx_driving ops)",
      "import of a CUDA-built mmcv._ext fails on an NPU host, taking the whole plugin down"),
    C("output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", R, False,
      "output = ext_module.ms_deform_attn_forward(  # NPU kernel in an NPU-built _ext",
      "only reached behind `value.is_cuda`"),
    C("if torch.cuda.is_available() and value.is_cuda:", "custom_cuda_extension", B, False,
      "if value.device.type in ('cuda', 'npu'):",
      "NPU takes the pure-PyTorch grid_sample fallback: correct but much slower"),
]),

E("mmcv_setup", "setup.py", EXPL,
  "open-mmlab/mmcv 1.x setup.py (MMCV_WITH_OPS, FORCE_CUDA, CUDAExtension over csrc/pytorch/cuda)", [
    C("if is_rocm_pytorch or torch.cuda.is_available() or os.getenv(", "custom_cuda_extension", B, True,
      "elif os.getenv('FORCE_NPU', '0') == '1': from torch_npu.utils.cpp_extension import NpuExtension; "
      "define_macros += [('MMCV_WITH_NPU', None)]; op_files += glob.glob('./mmcv/ops/csrc/pytorch/npu/*.cpp'); "
      "extension = NpuExtension",
      "without an NPU branch an NPU host builds the CPU-only _ext and every op fails on NPU tensors"),
]),

E("mmcv_text_logger", "mmcv/runner/hooks/logger/text.py", DEV,
  "open-mmlab/mmcv 1.x mmcv/runner/hooks/logger/text.py (TextLoggerHook peak-memory column)", [
    C("mem = torch.cuda.max_memory_allocated(device=device)", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated(device=device)",
      "only reached when torch.cuda.is_available()"),
    C("=if torch.cuda.is_available():", "device_type", B, False,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "memory column silently missing from the text log on NPU"),
    C("if torch.cuda.is_available():  # collect peak memory", "device_type", B, False,
      "if torch.cuda.is_available() or torch.npu.is_available():  # collect peak memory",
      "cosmetic: no peak-memory logging on NPU"),
]),

# --------------------------------------------------------------------------------------------
# MMDetection 2.x / 3.x
# --------------------------------------------------------------------------------------------
E("mmdet_tools_train", "tools/train.py", XFER,
  "open-mmlab/mmdetection 2.x tools/train.py (Config, init_dist(**cfg.dist_params), gpu_ids)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu  # noqa",
      "entry point: without torch_npu the mmcv 1.x stack only sees CUDA/CPU"),
    C("=args = parse_args()", "compile_mode", A, False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "detection batches have dynamic shapes; binary (non-JIT) operators avoid recompiling per shape "
      "(performance advice from msFmkTransplt)"),
]),

E("mmdet_apis_train", "mmdet/apis/train.py", EXPL,
  "open-mmlab/mmdetection 2.x mmdet/apis/train.py (init_random_seed, MMDataParallel / MMDistributedDataParallel)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", R, True,
      "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "the mmcv wrappers scatter through CUDA streams / torch.cuda.comm"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", R, True,
      "def init_random_seed(seed=None, device='npu'):",
      "tools/train.py calls it without a device; with world_size > 1 it builds a CUDA tensor"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA; NPU RNG stays unseeded (reproducibility only)"),
    C("model = MMDistributedDataParallel(", "distributed_framework", R, True,
      "model = NPUDistributedDataParallel(", "train_step scatters inputs through the CUDA-only path"),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "needs a CUDA build"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "needs a CUDA build"),
    C("model = MMDataParallel(", "distributed_framework", R, True, "model = NPUDataParallel(",
      "MMDataParallel is a torch.nn.DataParallel (unsupported on Ascend)"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", R, True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-device training path"),
]),

E("mmdet_apis_test", "mmdet/apis/test.py", EXPL,
  "open-mmlab/mmdetection 2.x mmdet/apis/test.py (multi_gpu_test, collect_results_cpu/gpu)", [
    C("=device='cuda')", "device_type", R, True, "device='npu')",
      "collect_results_cpu is the default path (gpu_collect=False, tmpdir=None) and still builds a CUDA "
      "tensor to broadcast the temp dir"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "rank 0 temp dir name"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", "gpu_collect path"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", R, True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "gpu_collect path"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "gpu_collect path"),
]),

E("mmdet_apis_inference", "mmdet/apis/inference.py", EXPL,
  "open-mmlab/mmdetection 2.x mmdet/apis/inference.py (init_detector, is_cuda scatter, async streams)", [
    C("def init_detector(config, checkpoint=None, device='cuda:0', cfg_options=None):", "device_type", R, True,
      "def init_detector(config, checkpoint=None, device='npu:0', cfg_options=None):",
      "default device of the public API"),
    C("if next(model.parameters()).is_cuda:", "device_type", R, True,
      "if next(model.parameters()).device.type != 'cpu':",
      "NPU model takes the CPU branch: inputs stay on the host and the forward fails on a device mismatch"),
    C("data = scatter(data, [device])[0]", "distributed_framework", R, True,
      "data = scatter(data, [device.index])[0]  # NPU-aware scatter (mmcv.device.npu) or .to(device)",
      "mmcv 1.x scatter to a device goes through torch.cuda.comm"),
    C("streamqueue.put_nowait(torch.cuda.Stream(device=device))", "torch_cuda_api", R, True,
      "streamqueue.put_nowait(torch.npu.Stream(device=device))", "needs a CUDA build"),
    C("data = scatter(data, [device.index])[0]", "distributed_framework", R, True,
      "data = {k: [t.to(device) if hasattr(t, 'to') else t for t in v] for k, v in data.items()}",
      "async path scatters unconditionally through the CUDA-only scatter"),
]),

E("mmdet_focal_loss", "mmdet/models/losses/focal_loss.py", DEV,
  "open-mmlab/mmdetection 2.x mmdet/models/losses/focal_loss.py (mmcv sigmoid_focal_loss only for CUDA tensors)", [
    C("if torch.cuda.is_available() and pred.is_cuda:", "custom_cuda_extension", B, False,
      "if (torch.cuda.is_available() and pred.is_cuda) or pred.device.type == 'npu':  # NPU kernel wants one-hot target",
      "NPU takes the pure-PyTorch py_sigmoid_focal_loss: correct, slower; the mmcv NPU kernel's one-hot "
      "target convention is from memory (unconfirmed)"),
]),

E("mmdet_benchmark_v3", "mmdet/utils/benchmark.py", EXPL,
  "open-mmlab/mmdetection 3.x mmdet/utils/benchmark.py (InferenceBenchmark FPS / CUDA memory)", [
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", "needs a CUDA build"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "distributed benchmark"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA; timing must also sync the NPU queue"),
    C("torch.cuda.synchronize()  # wait for the forward pass", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the forward pass", "end of the timed region"),
    C("cuda_memory = get_max_cuda_memory()", "torch_cuda_api", R, True,
      "cuda_memory = torch.npu.max_memory_allocated() // (1024 * 1024)",
      "mmengine's get_max_cuda_memory calls torch.cuda.reset_peak_memory_stats, which needs CUDA"),
    C("print_log(f'cuda memory: {get_max_cuda_memory()} MB', self.logger)", "torch_cuda_api", R, True,
      "print_log(f'npu memory: {torch.npu.max_memory_allocated() // 2**20} MB', self.logger)",
      "final summary"),
]),

E("mmdet_memory", "mmdet/utils/memory.py", DEV,
  "open-mmlab/mmdetection 2.x/3.x mmdet/utils/memory.py (AvoidOOM / AvoidCUDAOOM retry on CUDA OOM)", [
    C("if 'CUDA out of memory. ' in str(e):", "device_type", R, False,
      "if 'CUDA out of memory. ' in str(e) or 'NPU out of memory' in str(e):",
      "OOM recovery (fp16 / CPU retry used by the assigners) never triggers on NPU; only matters on OOM, "
      "and the NPU error text is unconfirmed"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; the retry would not free NPU cache"),
]),

E("mmdet_maskrcnn_fp16_cfg", "configs/mask_rcnn/mask_rcnn_r50_fpn_fp16_1x_coco.py", EXPL,
  "open-mmlab/mmdetection 2.x Mask R-CNN fp16 config with the _base_ files inlined (dist_params, fp16)", [
    C("optimizer = dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001)", "fused_optimizer", R, False,
      "optimizer = dict(type='NpuFusedSGD', lr=0.02, momentum=0.9, weight_decay=0.0001)",
      "performance only; the NpuFusedSGD name must be registered in mmcv's OPTIMIZERS (unconfirmed)"),
    C("dist_params = dict(backend='nccl')", "dist_backend", R, True, "dist_params = dict(backend='hccl')",
      "mmcv 1.x init_dist passes it straight to init_process_group"),
]),

E("mmdet_dino_cfg", "configs/dino/dino-4scale_r50_8xb2-12e_coco.py", EXPL,
  "open-mmlab/mmdetection 3.x DINO 4-scale config (mmengine env_cfg / optim_wrapper)", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", R, False, "dist_cfg=dict(backend='hccl'),",
      "mmengine's init_dist picks hccl itself when an NPU is available (from memory, unconfirmed); "
      "edited for clarity"),
    C("type='AdamW',", "fused_optimizer", R, False, "type='NpuFusedAdamW',",
      "performance only; registry name of the torch_npu optimizer in mmengine unconfirmed"),
]),

# --------------------------------------------------------------------------------------------
# MMSegmentation / MMEngine / MMPose
# --------------------------------------------------------------------------------------------
E("mmseg_util_distribution", "mmseg/utils/util_distribution.py", DEV,
  "open-mmlab/mmsegmentation 0.x mmseg/utils/util_distribution.py (build_dp / build_ddp / get_device factories)", [
    C("=elif device == 'mlu':", "distributed_framework", B, True,
      "elif device == 'npu': from mmcv.device.npu import NPUDataParallel; dp_factory['npu'] = NPUDataParallel; "
      "model = model.npu()",
      "dp_factory has no 'npu' key once get_device reports npu"),
    C("assert device in ['cuda', 'mlu'], 'Only available for cuda or mlu devices.'", "device_type", R, True,
      "assert device in ['cuda', 'mlu', 'npu'], 'Only available for cuda, npu or mlu devices.'",
      "assertion rejects npu"),
    C("elif device == 'mlu':  # Cambricon MLU", "distributed_framework", B, True,
      "elif device == 'npu': from mmcv.device.npu import NPUDistributedDataParallel; "
      "ddp_factory['npu'] = NPUDistributedDataParallel; model = model.npu()",
      "DDP wrapper for NPU"),
    C("'cuda': torch.cuda.is_available(),", "device_type", B, True,
      "'cuda': torch.cuda.is_available(), 'npu': is_npu_available(),",
      "get_device() returns 'cpu' on an NPU host, so training silently runs on the CPU"),
    C("num = torch.cuda.device_count() if device == 'cuda' else 1", "torch_cuda_api", R, False,
      "num = torch.npu.device_count() if device == 'npu' else torch.cuda.device_count() if device == 'cuda' else 1",
      "log line only"),
]),

E("mmengine_amp", "mmengine/runner/amp.py", DEV,
  "open-mmlab/mmengine runner/amp.py autocast wrapper before NPU support (cuda / cpu / mlu branches)", [
    C("from mmengine.device import get_device, is_cuda_available, is_mlu_available", "device_type", R, False,
      "from mmengine.device import get_device, is_cuda_available, is_mlu_available, is_npu_available",
      "import for the branches below"),
    C("elif device_type == 'mlu':", "amp", B, True,
      "elif device_type == 'npu': pass  # torch.autocast(device_type='npu') handles fp16/bf16",
      "an 'npu' device_type falls into the else branch and raises ValueError when AMP is enabled"),
    C("if device == 'mlu':", "amp", B, True, "if device == 'npu': return is_npu_available()",
      "returns False on NPU, so AmpOptimWrapper configs silently degrade to fp32"),
]),

E("mmseg_pytorchjob", "k8s/pytorchjob-segformer-ade20k.yaml", EXPL,
  "Kubeflow PyTorchJob manifest launching MMSegmentation SegFormer training (GPU node pool, NCCL env)", [
    C("runtimeClassName: nvidia", "device_type", R, False, "runtimeClassName: ascend",
      "unconfirmed: pod is rejected if the Ascend cluster has no RuntimeClass named nvidia"),
    C("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "device_type", R, False,
      "accelerator: huawei-Ascend910",
      "unconfirmed: no Ascend node carries NVIDIA feature-discovery labels, so the pod would stay Pending"),
    C("- key: nvidia.com/gpu", "device_type", R, False, "- key: huawei.com/Ascend910",
      "toleration only; harmless if left"),
    C("image: harbor.example.com/openmmlab/mmseg:1.2.2-pt2.0.1-cu118-cudnn8", "device_type", R, True,
      "image: harbor.example.com/openmmlab/mmseg:1.2.2-pt2.1.0-torch_npu-cann8.0",
      "CUDA PyTorch image has neither CANN nor torch_npu"),
    C("=nvidia-smi", "torch_cuda_api", R, True, "npu-smi info",
      "`set -ex`: the missing nvidia-smi binary aborts the job"),
    C("python -c \"import torch; assert torch.cuda.is_available()\"", "device_type", R, True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available()\"",
      "assertion fails on an NPU host"),
    C("- name: NCCL_DEBUG", "env_var", R, False, "- name: HCCL_ENTRY_LOG_ENABLE",
      "NCCL variable ignored by HCCL"),
    C("- name: NCCL_IB_DISABLE", "env_var", X, False, None, "no HCCL equivalent; ignored"),
    C("- name: NCCL_IB_HCA", "env_var", X, False, None, "HCCL uses the NPU RoCE ports; ignored"),
    C("- name: NCCL_SOCKET_IFNAME", "env_var", R, False, "- name: HCCL_SOCKET_IFNAME",
      "HCCL then picks the host NIC by its own priority order; wrong NIC only on some fabrics (unconfirmed)"),
    C("nvidia.com/gpu: 8", "device_type", R, True, "huawei.com/Ascend910: 8",
      "without the Ascend device-plugin resource the pod gets no /dev/davinci* nodes"),
    C("nvidia.com/gpu: \"8\"", "device_type", R, True, "huawei.com/Ascend910: \"8\"", "requests must match limits"),
    C("rdma/hca_shared_devices_a: 1", "device_type", X, False, None,
      "Mellanox RDMA shared-device resource; HCCL uses the NPU's own RoCE ports, and a resource no Ascend "
      "node advertises would keep the pod Pending (unconfirmed)"),
]),

E("mmseg_dist_train", "tools/dist_train.sh", EXPL,
  "open-mmlab/mmsegmentation tools/dist_train.sh extended with device selection and a visibility check", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS:-$(seq -s, 0 $((GPUS - 1)))}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS:-$(seq -s, 0 $((GPUS - 1)))}",
      "a GPU_IDS subset is not honoured by the NPU runtime, so two jobs land on the same devices"),
    C("NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api", R, True,
      "NUM_VISIBLE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "no nvidia-smi on an NPU host: NUM_VISIBLE=0 and the script exits"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog setting; HCCL_ASYNC_ERROR_HANDLING defaults to 1 per the MindCluster doc"),
    C("export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}", "env_var", X, False, None, "ignored by HCCL"),
    C("export NVIDIA_TF32_OVERRIDE=${NVIDIA_TF32_OVERRIDE:-1}", "env_var", X, False, None, "ignored on NPU"),
]),

E("mmpose_topdown_demo", "demo/topdown_demo_with_mmdet.py", EXPL,
  "open-mmlab/mmpose 1.x demo/topdown_demo_with_mmdet.py (mmdet person detector + top-down pose)", [
    C("'--device', default='cuda:0', help='Device used for inference')", "device_type", R, True,
      "'--device', default='npu:0', help='Device used for inference')",
      "default device string: init_detector / init_pose_estimator move the models to CUDA"),
    C("if device.startswith('cuda'):", "device_type", B, False,
      "if device.startswith(('cuda', 'npu')):  # torch.npu.get_device_properties(index)",
      "video overlay only shows the device string on NPU"),
]),

# --------------------------------------------------------------------------------------------
# MMDetection3D and BEV projects
# --------------------------------------------------------------------------------------------
E("mmdet3d_setup", "setup.py", EXPL,
  "open-mmlab/mmdetection3d 0.x/1.0rc setup.py (make_cuda_ext for spconv, iou3d, voxel, bev_pool_v2)", [
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", B, True,
      "elif os.getenv('FORCE_NPU', '0') == '1': from torch_npu.utils.cpp_extension import NpuExtension; "
      "extension = NpuExtension",
      "NPU hosts fall to CppExtension and get CPU-only ops"),
    C("name='sparse_conv_ext',", "custom_cuda_extension", X, True, None,
      ".cu files listed in `sources` break the CppExtension build; use mmcv / DrivingSDK sparse conv instead"),
    C("name='iou3d_cuda',", "custom_cuda_extension", X, True, None,
      "src/iou3d_kernel.cu in `sources`: build fails without nvcc"),
    C("name='voxel_layer',", "custom_cuda_extension", X, True, None,
      ".cu files in `sources`; replaced by mmcv.ops.Voxelization / DynamicScatter"),
    C("sources=['src/bev_pool.cpp', 'src/bev_pool_cuda.cu']),", "custom_cuda_extension", R, True,
      "sources=['src/bev_pool.cpp']),  # NPU kernel supplied separately",
      ".cu in `sources` breaks the build"),
]),

E("mmdet3d_iou3d", "mmdet3d/ops/iou3d/iou3d_utils.py", EXPL,
  "open-mmlab/mmdetection3d 0.x ops/iou3d/iou3d_utils.py + core/post_processing/box3d_nms.py (iou3d_cuda)", [
    C("from . import iou3d_cuda", "custom_cuda_extension", R, True,
      "from mmcv.ops import box_iou_rotated, nms_rotated  # NPU-capable mmcv ops",
      "nvcc-built extension; does not exist on NPU"),
    C("iou3d_cuda.boxes_iou_bev_gpu(boxes_a.contiguous(), boxes_b.contiguous(),", "custom_cuda_extension", R, True,
      "ans_iou = box_iou_rotated(xyxyr2xywhr(boxes_a), xyxyr2xywhr(boxes_b))", "CUDA kernel call"),
    C("ans_overlap = torch.cuda.FloatTensor(", "torch_cuda_api", R, True,
      "ans_overlap = boxes_a.new_zeros(", "legacy CUDA tensor type"),
    C("iou3d_cuda.boxes_overlap_bev_gpu(boxes_a.contiguous(),", "custom_cuda_extension", R, True,
      "ans_overlap = bev_overlap_torch(boxes_a, boxes_b)", "CUDA kernel call"),
    C("num_out = iou3d_cuda.nms_gpu(boxes, keep, thresh, boxes.device.index)", "custom_cuda_extension", R, True,
      "keep = nms_rotated(xyxyr2xywhr(boxes), scores[order], thresh)[1]", "CUDA kernel call"),
    C("keep = order[keep[:num_out].cuda(boxes.device)].contiguous()", "tensor_to_device", R, True,
      "keep = order[keep[:num_out].to(boxes.device)].contiguous()", ".cuda(device) with an NPU device"),
    C("num_out = iou3d_cuda.nms_normal_gpu(boxes, keep, thresh,", "custom_cuda_extension", R, True,
      "keep = nms(boxes[:, :4], scores[order], thresh)[1]", "CUDA kernel call"),
    C("return order[keep[:num_out].cuda(boxes.device)].contiguous()", "tensor_to_device", R, True,
      "return order[keep[:num_out].to(boxes.device)].contiguous()", ".cuda(device) with an NPU device"),
]),

E("mmdet3d_voxelize", "mmdet3d/ops/voxel/voxelize.py", EXPL,
  "open-mmlab/mmdetection3d 0.x ops/voxel/voxelize.py + scatter_points.py (voxel_layer extension)", [
    C("from .voxel_layer import (dynamic_point_to_voxel_backward,", "custom_cuda_extension", R, True,
      "from mmcv.ops import DynamicScatter as _MMCVDynamicScatter", "nvcc-built extension"),
    C("from .voxel_layer import dynamic_voxelize, hard_voxelize", "custom_cuda_extension", R, True,
      "from mmcv.ops import voxelization as _mmcv_voxelization", "nvcc-built extension"),
    C("dynamic_voxelize(points, coors, voxel_size, coors_range, 3)", "custom_cuda_extension", R, True,
      "coors = _mmcv_voxelization(points, voxel_size, coors_range, -1, -1)", "extension call"),
    C("voxel_num = hard_voxelize(points, voxels, coors,", "custom_cuda_extension", R, True,
      "return _mmcv_voxelization(points, voxel_size, coors_range, max_points, max_voxels, deterministic)",
      "a CPU-only build would run the CPU kernel on NPU memory"),
    C("results = dynamic_point_to_voxel_forward(feats, coors, reduce_type)", "custom_cuda_extension", R, True,
      "results = _MMCVDynamicScatter.forward_raw(feats, coors, reduce_type)", "extension call"),
    C("dynamic_point_to_voxel_backward(grad_feats,", "custom_cuda_extension", R, True,
      "grad_feats = _mmcv_dynamic_scatter_backward(grad_voxel_feats, ...)", "extension call"),
]),

E("mmdet3d_dockerfile", "docker/Dockerfile", EXPL,
  "open-mmlab/mmdetection3d docker/Dockerfile extended for a BEV project (cu113 wheels, FORCE_CUDA)", [
    C("ARG PYTORCH=\"1.10.0\"", "device_type", R, True, "ARG PYTORCH=\"2.1.0\"",
      "torch 1.10 has no torch_npu release (1.11.0, 2.1.0 ... per the compatibility matrix)"),
    C("ARG CUDA=\"11.3\"", "device_type", R, False, "ARG CANN=\"8.0.0\"", "only feeds the FROM line"),
    C("ARG CUDNN=\"8\"", "device_type", X, False, None, "only feeds the FROM line"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", R, True,
      "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.9",
      "CUDA base image: no CANN toolkit, CUDA-built torch"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", X, False, None, "only read by CUDA extension builds"),
    C("ENV TORCH_NVCC_FLAGS=", "env_var", X, False, None, "only read by nvcc"),
    C("RUN rm /etc/apt/sources.list.d/cuda.list \\", "device_type", X, True, None,
      "the CUDA apt lists do not exist in a non-CUDA base image, so `rm` fails the build"),
    C("RUN pip install --no-cache-dir openmim", "import_torch_npu", A, True,
      "RUN pip install --no-cache-dir torch==${PYTORCH} torch-npu==2.1.0.post10 openmim",
      "torch_npu has to be installed next to a CPU torch"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html", "custom_cuda_extension", R, True,
      "&& MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-binary mmcv-full mmcv-full==${MMCV}",
      "prebuilt cu113 mmcv._ext links libcudart and cannot load"),
    C("RUN pip install --no-cache-dir spconv-cu113==2.1.25 cumm-cu113==0.2.9", "custom_cuda_extension", X, True,
      None, "CUDA-only wheels"),
    C("-f https://data.pyg.org/whl/torch-1.10.0+cu113.html", "custom_cuda_extension", R, True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "cu113 build of torch-scatter links CUDA libraries"),
    C("ENV FORCE_CUDA=\"1\"", "env_var", R, True, "ENV FORCE_NPU=\"1\"",
      "forces CUDAExtension in make_cuda_ext -> nvcc missing -> `pip install -e .` fails"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "device exposure is done by the container runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None, "NVIDIA runtime only"),
    C("HEALTHCHECK --interval=5m --timeout=30s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", R, False,
      "HEALTHCHECK --interval=5m --timeout=30s CMD npu-smi info > /dev/null || exit 1",
      "container reported unhealthy; training itself unaffected"),
]),

E("bevdet_bev_pool", "mmdet3d/ops/bev_pool_v2/bev_pool.py", EXPL,
  "HuangJunJie2017/BEVDet ops/bev_pool_v2/bev_pool.py (QuickCumsumCuda, TRT symbolic, in-module test)", [
    C("from . import bev_pool_v2_ext", "custom_cuda_extension", R, True,
      "from mx_driving import bev_pool_v2 as _npu_bev_pool_v2  # or a torch scatter_add fallback",
      "nvcc-built extension"),
    C("bev_pool_v2_ext.bev_pool_v2_forward(", "custom_cuda_extension", R, True,
      "out = _npu_bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_feat_shape, "
      "interval_starts, interval_lengths)", "CUDA kernel call"),
    C("bev_pool_v2_ext.bev_pool_v2_backward(", "custom_cuda_extension", R, True,
      "depth_grad, feat_grad = _npu_bev_pool_v2_backward(out_grad, ...)", "CUDA kernel call"),
    C("depth = torch.from_numpy(depth).float().cuda()", "tensor_to_device", R, True,
      "depth = torch.from_numpy(depth).float().npu()", "self-test"),
    C("device='cuda').requires_grad_()", "device_type", R, True, "device='npu').requires_grad_()", "self-test"),
    C("ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().cuda()", "tensor_to_device", R, True,
      "ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().npu()", "self-test"),
    C("ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().cuda()", "tensor_to_device", R, True,
      "ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().npu()", "self-test"),
    C("ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().cuda()", "tensor_to_device", R, True,
      "ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().npu()", "self-test"),
    C("grad_depth = grad_depth.cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", R, True,
      "grad_depth = grad_depth.npu().view(1, 1, 2, 2, 2)", "self-test"),
    C("grad_feat = torch.from_numpy(grad_feat).float().cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", R, True,
      "grad_feat = torch.from_numpy(grad_feat).float().npu().view(1, 1, 2, 2, 2)", "self-test"),
]),

E("bev_requirements", "requirements.txt", EXPL,
  "StreamPETR / BEVDet-style requirements.txt on MMDetection3D 1.0rc (cu113 wheels, spconv, flash-attn, TensorRT)", [
    C("# PyTorch (CUDA 11.3 wheels)", "import_torch_npu", A, True, "torch-npu==2.1.0.post10",
      "torch_npu is the package that provides the NPU device"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts use the CPU torch wheel (aarch64 uses plain PyPI)"),
    C("torch==1.12.1+cu113", "device_type", R, True, "torch==2.1.0",
      "CUDA build, and 1.12 has no torch_npu release"),
    C("torchvision==0.13.1+cu113", "device_type", R, True, "torchvision==0.16.0", "pairs with torch"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.12/index.html", "custom_cuda_extension", R, True,
      "# mmcv-full: build from source with MMCV_WITH_OPS=1 FORCE_NPU=1",
      "prebuilt cu113 mmcv._ext cannot load"),
    C("mmcv-full==1.6.2", "custom_cuda_extension", R, False, "mmcv-full==1.7.2",
      "mmcv NPU ops arrived in later 1.x releases (from memory, unconfirmed)"),
    C("spconv-cu113==2.3.6", "custom_cuda_extension", X, True, None, "CUDA-only wheel"),
    C("cumm-cu113==0.4.11", "custom_cuda_extension", X, True, None, "CUDA-only wheel (spconv dependency)"),
    C("-f https://data.pyg.org/whl/torch-1.12.0+cu113.html", "custom_cuda_extension", R, True,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html", "cu113 torch-scatter links CUDA libraries"),
    C("flash-attn==0.2.2", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on NPU; FlashMHA -> torch_npu.npu_fusion_attention"),
    C("onnxruntime-gpu==1.14.1", "device_type", R, False, "onnxruntime==1.14.1",
      "deployment only; CUDA provider unusable (unconfirmed whether the wheel installs on aarch64)"),
    C("pycuda==2022.1", "torch_cuda_api", X, True, None,
      "CUDA driver bindings (like cupy, no Ascend port); its source build needs the CUDA toolkit, so "
      "`pip install -r requirements.txt` stops here on an NPU host"),
    C("nvidia-pyindex", "device_type", X, False, None, "only serves NVIDIA wheels"),
    C("nvidia-tensorrt==8.4.1.5", "device_type", X, False, None, "TensorRT export path; no Ascend build (unconfirmed)"),
    C("nvidia-ml-py==11.515.75", "torch_cuda_api", X, False, None,
      "pynvml has no NPU equivalent; only fails when called (use npu-smi / torch.npu.mem_get_info)"),
]),

E("mmrotate_inference", "mmrotate/apis/inference.py", EXPL,
  "open-mmlab/mmrotate 0.x mmrotate/apis/inference.py (huge-image patch inference + rotated NMS merge)", [
    C("tran_dets = torch.from_numpy(tran_dets).cuda()", "tensor_to_device", R, False,
      "tran_dets = torch.from_numpy(tran_dets).npu()", "only in the bare-except fallback"),
    C("if next(model.parameters()).is_cuda:", "device_type", R, True,
      "if next(model.parameters()).device.type != 'cpu':",
      "NPU model takes the CPU branch and receives host tensors"),
    C("data = scatter(data, [device])[0]", "distributed_framework", R, True,
      "data = scatter(data, [device.index])[0]  # NPU-aware scatter or .to(device)",
      "mmcv 1.x scatter goes through torch.cuda.comm"),
]),

E("mmdet3d_slurm_train", "tools/slurm_train.sh", EXPL,
  "open-mmlab/mmdetection3d tools/slurm_train.sh extended with cluster modules, NCCL tuning and a node probe", [
    C("module load cuda/11.3 cudnn/8.2.1 nccl/2.10.3", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN's set_env.sh must be sourced or torch_npu cannot find libascendcl / libhccl; "
      "under `set -e` a missing cuda module also aborts"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", X, False, None, "ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL picks its own NIC otherwise (unconfirmed whether that is wrong here)"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", X, False, None, "ignored by HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "default is already 1 for HCCL"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only knob"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version \\", "torch_cuda_api", R, False,
      "npu-smi info \\", "guarded by `|| true`: only the inventory file is empty"),
    C("--gres=gpu:${GPUS_PER_NODE} \\", "device_type", R, False, "--gres=npu:${GPUS_PER_NODE} \\",
      "unconfirmed: no Ascend Slurm gres convention found in the knowledge base"),
    C("--gres=\"gpu:${GPUS_PER_NODE}\" \\", "device_type", R, False, "--gres=\"npu:${GPUS_PER_NODE}\" \\",
      "evaluation job; same caveat"),
]),

E("openmmlab_env_yml", "environment.yml", EXPL,
  "conda environment.yml for an OpenMMLab 1.x lab setup (pytorch + cudatoolkit, mmcv-full cu113, apex, spconv)", [
    C("=- nvidia", "device_type", X, False, None, "channel only serves CUDA packages"),
    C("- pytorch=1.12.1", "device_type", R, True, "- pytorch=2.1.0=*cpu*",
      "CUDA build via cudatoolkit, and 1.12 has no torch_npu release"),
    C("- torchvision=0.13.1", "device_type", R, True, "- torchvision=0.16.0", "pairs with torch"),
    C("- torchaudio=0.12.1", "device_type", R, False, "- torchaudio=2.1.0", "version pairing only"),
    C("- cudatoolkit=11.3", "device_type", X, True, None, "selects the CUDA build of pytorch"),
    C("- cudnn=8.3.2", "device_type", X, False, None, "unused on NPU (missing for linux-aarch64, unconfirmed)"),
    C("- nccl=2.14.3", "dist_backend", X, False, None, "unused on NPU; HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post10",
      "torch_npu is installed from pip next to the CPU torch"),
    C("- mmcv-full==1.6.2 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.12/index.html",
      "custom_cuda_extension", R, True, "- mmcv-full==1.7.2  # built with MMCV_WITH_OPS=1 FORCE_NPU=1",
      "prebuilt cu113 mmcv._ext cannot load"),
    C("- spconv-cu113==2.3.6", "custom_cuda_extension", X, True, None, "CUDA-only wheel"),
    C("- apex @ git+https://github.com/NVIDIA/apex.git@22.04-dev", "fused_optimizer", R, False,
      "- apex @ git+https://gitee.com/ascend/apex.git  # Ascend apex patch (NpuFused* optimizers)",
      "a python-only NVIDIA apex installs, but its fused kernels / amp_C are CUDA-only"),
    C("- pynvml==11.5.0", "torch_cuda_api", X, False, None, "only fails when called"),
    C("CUDA_HOME: $CONDA_PREFIX", "env_var", X, False, None, "only read by CUDA builds"),
    C("TORCH_CUDA_ARCH_LIST: \"7.0;7.5;8.0;8.6\"", "env_var", X, False, None, "only read by CUDA builds"),
    C("FORCE_CUDA: \"1\"", "env_var", R, True, "FORCE_NPU: \"1\"",
      "forces CUDAExtension for mmcv / mmdet3d source builds -> nvcc missing"),
]),
