# Labels for probe315 (3-D multi-object tracking, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- CenterPoint (det3d)

E("cp_train", "tools/train.py", "explicit_replacement",
  "CenterPoint tools/train.py (det3d launcher: torch.distributed.launch / slurm, apex SyncBN)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; the torch 2.1-era torch_npu that the mmcv/DrivingSDK stack pins has no backend autoload"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device raises on a host without CUDA"),
      C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "returns 0 on an NPU host -> ZeroDivisionError in proc_id % num_gpus"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", "slurm path; same as the pytorch launcher"),
      C("dist.init_process_group(backend=\"nccl\")", "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl")', "slurm path still hard-codes NCCL"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", True,
        "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
        "apex is a CUDA build; the guarded import leaves `apex` undefined when it is missing (NameError). torch.nn.SyncBatchNorm is supported on NPU (Ascend 2.7.1 list)"),
  ])

E("cp_dist_test", "tools/dist_test.py", "explicit_replacement",
  "CenterPoint tools/dist_test.py (detection dump + latency measurement before tracking)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
      C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
        'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", True,
        "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)", "apex (CUDA build) not available; NameError via the guarded import"),
      C("model.cuda(cfg.local_rank),", "tensor_to_device", "replace", True,
        "model.npu(cfg.local_rank),", "Module.cuda() fails without CUDA"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "single-device path"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA; needed so the timing window measures the NPU work"),
      C("torch.cuda.synchronize()  # wait for the last timed batch", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last timed batch", "second end of the timing window"),
  ])

E("cp_apis_train", "det3d/torchie/apis/train.py", "explicit_replacement",
  "CenterPoint det3d/torchie/apis/train.py (example_to_device, batch_processor, train_detector)", [
      C('device = torch.device(kwargs["local_rank"])', "device_type", "replace", True,
        'device = torch.device("npu", kwargs["local_rank"])',
        "torch.device(<int>) is documented as cuda:<int> (legacy int-ordinal rule), so every batch is sent to a CUDA device; newer torch may map ints to the current accelerator (unverified)"),
      C('device = torch.device(kwargs.get("local_rank"))', "device_type", "replace", False,
        'device = torch.device("npu", kwargs.get("local_rank"))',
        "same bug, but in batch_processor_ensemble which starts with `assert 0, 'deprecated'` (dead code); fixed for consistency"),
      C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", True,
        "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)", "apex missing -> NameError in distributed training"),
      C("model.cuda(cfg.local_rank),", "tensor_to_device", "replace", True, "model.npu(cfg.local_rank),", "DDP wrap"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "non-distributed path"),
  ])

E("cp_iou3d_utils", "det3d/ops/iou3d_nms/iou3d_nms_utils.py", "kernel_rewrite",
  "OpenPCDet/CenterPoint iou3d_nms_utils.py (rotated BEV IoU + NMS through the iou3d_nms_cuda extension)", [
      C("from . import iou3d_nms_cuda", "custom_cuda_extension", "replace", True, IMPORT_NPU,
        "nvcc-built extension cannot be built or loaded on Ascend; rotated IoU/NMS move to torch_npu custom ops (npu_rotated_overlaps / npu_rotated_iou / npu_nms_rotated) or DrivingSDK"),
      C("ans_iou = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
        "ans_iou = boxes_a.new_zeros((boxes_a.shape[0], boxes_b.shape[0]))", "torch.cuda.FloatTensor constructor fails without CUDA"),
      C("iou3d_nms_cuda.boxes_iou_bev_gpu(", "custom_cuda_extension", "replace", True,
        "ans_iou = torch_npu.npu_rotated_iou(bev_a.unsqueeze(0), bev_b.unsqueeze(0), trans=True, mode=0).squeeze(0)",
        "CUDA kernel call site; NPU op argument layout (x,y,w,h,angle) and angle unit need checking (plausible, not tested)"),
      C("overlaps_bev = torch.cuda.FloatTensor(", "torch_cuda_api", "replace", True,
        "overlaps_bev = boxes_a.new_zeros((boxes_a.shape[0], boxes_b.shape[0]))  # (N, M)", "as above"),
      C("iou3d_nms_cuda.boxes_overlap_bev_gpu(", "custom_cuda_extension", "replace", True,
        "overlaps_bev = torch_npu.npu_rotated_overlaps(bev_a.unsqueeze(0), bev_b.unsqueeze(0), trans=True).squeeze(0)",
        "CUDA kernel call site (BEV intersection area)"),
      C("num_out = iou3d_nms_cuda.nms_gpu(boxes, keep, thresh)", "custom_cuda_extension", "replace", True,
        "keep, num_out = torch_npu.npu_nms_rotated(bev_boxes, scores[order], thresh)",
        "rotated NMS kernel; npu_nms_rotated(self, scores, iou_threshold, ...) -> (Tensor, Tensor) in the custom-op list"),
      C("selected = order[keep[:num_out].cuda()].contiguous()", "tensor_to_device", "replace", True,
        "selected = order[keep[:num_out].to(order.device)].contiguous()", ".cuda() on the host index buffer"),
      C("num_out = iou3d_nms_cuda.nms_normal_gpu(boxes, keep, thresh)", "custom_cuda_extension", "replace", True,
        "keep, num_out = torch_npu.npu_nms_rotated(bev_boxes_axis_aligned, scores[order], thresh)",
        "axis-aligned NMS kernel call site"),
      C("return order[keep[:num_out].cuda()].contiguous(), None", "tensor_to_device", "replace", True,
        "return order[keep[:num_out].to(order.device)].contiguous(), None", ".cuda() on the host index buffer"),
  ])

E("cp_iou3d_setup", "det3d/ops/iou3d_nms/setup.py", "kernel_rewrite",
  "CenterPoint det3d/ops/iou3d_nms/setup.py (CUDAExtension)", [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
        "no nvcc on Ascend; torch_npu.utils.cpp_extension.NpuExtension links torch_npu/ACL"),
      C("CUDAExtension('iou3d_nms_cuda', [", "custom_cuda_extension", "replace", True,
        "NpuExtension('iou3d_nms_npu', [", "only if the kernels are rewritten in Ascend C; otherwise drop the extension for torch_npu ops"),
      C("'src/iou3d_nms_kernel.cu',", "custom_cuda_extension", "removal", True, None,
        ".cu source cannot be compiled without nvcc"),
      C("'nvcc': ['-O2']})", "custom_cuda_extension", "removal", False, None,
        "nvcc flags are ignored for a non-CUDA extension; tidy-up only"),
  ])

E("cp_setup_sh", "setup.sh", "kernel_rewrite",
  "CenterPoint setup.sh (exports CUDA 10.0 paths, builds det3d ops in place)", [
      C("export PATH=/usr/local/cuda-10.0/bin:$PATH", "env_var", "replace", True, SET_ENV,
        "the op build needs the CANN toolkit environment instead of the CUDA toolkit"),
      C("export CUDA_PATH=/usr/local/cuda-10.0", "env_var", "removal", False, None, "unused on Ascend"),
      C("export CUDA_HOME=/usr/local/cuda-10.0", "env_var", "removal", False, None,
        "only read by CUDAExtension; harmless once the extensions are ported"),
      C("export LD_LIBRARY_PATH=/usr/local/cuda-10.0/lib64:$LD_LIBRARY_PATH", "env_var", "removal", False, None,
        "points at a non-existent directory; harmless"),
      C("=nvcc --version", "custom_cuda_extension", "replace", True, "cat ${ASCEND_TOOLKIT_HOME}/version.cfg",
        "nvcc is absent and the script runs under `set -e`, so it aborts here"),
  ])

E("cp_pub_tracker", "tools/nusc_tracking/pub_tracker.py", "device_branch_or_abstraction",
  "CenterPoint tools/nusc_tracking/pub_tracker.py (greedy closest-point tracker, numpy only)", [])

# ---------------------------------------------------------------- AB3DMOT (batched PyTorch port)

E("ab_main", "main.py", "device_branch_or_abstraction",
  "AB3DMOT main.py, ported to a batched PyTorch Kalman filter with a --device flag", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("default='cuda', help='device to run the batched KF on", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu', help='device to run the batched KF on (npu / cpu)')",
        "default device string"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "on NPU the branch is skipped, so the timer reads the clock before the async kernels finish: FPS is over-reported, results unaffected"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "fails once the branch above is taken on NPU"),
      C("if args.device == 'cuda':", "device_type", "replace", True, "if args.device == 'npu':",
        "otherwise the device-visibility line below is silently skipped"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu)", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(args.gpu)", "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu would have no effect"),
      C("device = torch.device(args.device if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace", True,
        "device = torch.device(args.device if torch.npu.is_available() else 'cpu')",
        "torch.cuda.is_available() is False on NPU: the tracker silently runs on the CPU"),
      C("torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'", "torch_cuda_api", "replace", False,
        "print_log('Running on %s (%s)' % (device, torch.npu.get_device_name(0) if device.type == 'npu' else 'cpu'), log=log)",
        "log only: with device.type == 'npu' the condition is False and it prints 'cpu'"),
  ])

E("ab_model", "AB3DMOT_libs/model.py", "device_branch_or_abstraction",
  "AB3DMOT AB3DMOT_libs/model.py (tracker class), batched PyTorch port", [
      C("=device='cuda'):", "device_type", "replace", False, "device='npu'):",
        "default only; main.py always passes the device explicitly"),
      C("R = torch.from_numpy(ego_rot_imu[0]).float().cuda()", "tensor_to_device", "replace", True,
        "R = torch.from_numpy(ego_rot_imu[0]).float().to(trks.device)", "hard-coded .cuda() despite the device variable (KITTI ego-motion path)"),
      C("return torch.zeros((0, 7), device='cuda')", "device_type", "replace", True,
        "return torch.zeros((0, 7), device=self.device)", "hard-coded device string on the empty-track path (first frame of every sequence)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised; the NPU cache is just not released between sequences"),
  ])

E("ab_kf", "AB3DMOT_libs/kalman_filter.py", "device_branch_or_abstraction",
  "AB3DMOT Kalman filter (filterpy) rewritten as a batched torch filter", [
      C('def __init__(self, dim_x=10, dim_z=7, device="cuda",', "device_type", "replace", False,
        'def __init__(self, dim_x=10, dim_z=7, device="npu",', "default only; model.py passes its device"),
      C("dtype=torch.float64):", "unsupported_op_workaround", "replace", False, "dtype=torch.float32):",
        "unconfirmed: float64 support on NPU varies per op (some ops warn 'Device do not support double dtype now' and compute in fp32); porter keeps the filter in fp32 (Joseph form) or moves the inverse to the CPU in fp64"),
      C("K = P @ self.H.T @ torch.linalg.inv(S)", "unsupported_op_workaround", "replace", False,
        "K = P @ self.H.T @ torch.inverse(S)",
        "performance: aten::inverse has an NPU kernel, linalg_inv_ex is not in the native op list (CPU fallback)"),
      C("S_inv = torch.linalg.inv(S)", "unsupported_op_workaround", "replace", False, "S_inv = torch.inverse(S)",
        "performance, as above"),
  ])

E("ab_matching", "AB3DMOT_libs/matching.py", "device_branch_or_abstraction",
  "AB3DMOT data association (GIoU/distance affinity + Hungarian/greedy), PyTorch port", [
      C("if HAS_MMCV_OPS and boxes_a.is_cuda:", "npu_fused_op", "add_branch", False,
        "if boxes_a.device.type == 'npu': return torch_npu.npu_rotated_overlaps(ra.unsqueeze(0), rb.unsqueeze(0), trans=True).squeeze(0)",
        "is_cuda is False for NPU tensors, so the shapely CPU fallback runs: correct but slow. Fast path via torch_npu rotated overlaps (argument convention not verified)"),
  ])

E("ab_run_sh", "scripts/run_all.sh", "explicit_replacement",
  "AB3DMOT run scripts (KITTI / nuScenes tracking + evaluation)", [
      C("=set -e", "env_var", "npu_only_addition", True, SET_ENV, "torch_npu needs the CANN environment"),
      C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}", "ignored by the Ascend runtime: GPU_ID would have no effect"),
      C("nvidia-smi --query-gpu", "device_type", "replace", True, "npu-smi info",
        "nvidia-smi is absent and the script runs under `set -e`"),
      C("--det_name ${DET} --device cuda", "device_type", "replace", True,
        "    python3 main.py --dataset KITTI --split val --det_name ${DET} --device npu", "device flag of the ported main.py"),
      C("--det_name centerpoint --device cuda --benchmark", "device_type", "replace", True,
        "python3 main.py --dataset nuScenes --split val --det_name centerpoint --device npu --benchmark", "same"),
  ])

# ---------------------------------------------------------------- SimpleTrack (GPU association)

E("st_assoc", "mot_3d/association_gpu.py", "device_branch_or_abstraction",
  "SimpleTrack mot_3d/association.py, vectorised on the GPU with CUDA-event timing", [
      C("_DEVICE = torch.device('cuda:0')", "device_type", "replace", True, "_DEVICE = torch.device('npu:0')",
        "module default device used by pack_boxes"),
      C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.start = torch.npu.Event(enable_timing=True)", "profiling path (--profile)"),
      C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "self.end = torch.npu.Event(enable_timing=True)", "profiling path"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "profiling path"),
      C("trk_innovation_matrix = torch.from_numpy(inv).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "trk_innovation_matrix = torch.from_numpy(inv).to(det_t.device, non_blocking=True)", "Mahalanobis path"),
  ])

E("st_main", "tools/main_nuscenes_gpu.py", "explicit_replacement",
  "SimpleTrack tools/main_nuscenes.py with one GPU per worker process", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
        "0 on NPU -> ZeroDivisionError"),
      C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)", "raises without CUDA"),
      C("return 'cuda:%d' % gpu_id", "device_type", "replace", True, "return 'npu:%d' % gpu_id", "device string handed to the config"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
        "token, device, timer.summary(), torch.npu.max_memory_allocated() / 2 ** 20))", "raises without CUDA (--profile)"),
      C("if args.gpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if args.gpu and not torch.npu.is_available():", "otherwise --gpu is silently turned off on NPU"),
  ])

# ---------------------------------------------------------------- PF-Track (mmdet3d plugin)

E("pf_dist_train_sh", "tools/dist_train.sh", "explicit_replacement",
  "PF-Track / PETR tools/dist_train.sh (torch.distributed.launch)", [
      C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "silently ignored; HCCL falls back to its own host-NIC choice, which only matters when that choice is wrong"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL equivalent needed; no-op on Ascend"),
  ])

E("pf_train", "tools/train.py", "explicit_replacement",
  "PF-Track / PETR tools/train.py (mmdet3d 0.17 with plugin import)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
        "def init_random_seed(seed=None, device='npu'):",
        "only reached when seed is None, but --seed defaults to 0, so the CUDA tensor is never built in practice"),
  ])

E("pf_train_api", "projects/tracking_plugin/apis/train_tracker.py", "explicit_replacement",
  "PF-Track projects/tracking_plugin/apis/train_tracker.py (custom_train_detector)", [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", False,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "unconfirmed: NPU wrappers exist in later mmcv 1.x (not in the knowledge base)"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(",
        "unconfirmed: mmcv's scatter path is CUDA-stream based in old releases"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "DDP wrap"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
      C("model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "MMDataParallel subclasses nn.DataParallel, which is unsupported on NPU (Ascend 2.7.1 list); without CUDA it degrades to a CPU pass-through"),
      C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-device path"),
  ])

E("pf_test", "tools/test.py", "explicit_replacement",
  "PF-Track / PETR tools/test.py (mmdet3d test launcher)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", False,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel", "unconfirmed (see pf_train_api)"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "nn.DataParallel without CUDA keeps the model on the CPU: single-device testing would silently run on the host"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(", "unconfirmed (see pf_train_api)"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "DDP wrap"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
  ])

E("pf_test_api", "projects/tracking_plugin/test_track_api.py", "explicit_replacement",
  "PF-Track test_track_api.py (mmdet single/multi-GPU test, collect_results_cpu/gpu)", [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "tmpdir broadcast tensor; HCCL collectives need device tensors"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "same broadcast"),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", "--gpu-collect path"),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "--gpu-collect path"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "--gpu-collect path"),
  ])

E("pf_config", "projects/configs/tracking/petr/f3_q500_800x320.py", "explicit_replacement",
  "PF-Track mmdet3d config (PETR tracking head, 3-frame clips)", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed to mmcv init_dist -> init_process_group"),
  ])

E("pf_attention", "projects/mmdet3d_plugin/models/utils/attention.py", "kernel_rewrite",
  "StreamPETR / PF-Track FlashMHA + PETRMultiheadFlashAttention (flash-attn v0.2 unpadded kvpacked)", [
      C("from flash_attn.flash_attn_interface import flash_attn_unpadded_kvpacked_func", "attention_kernel", "replace", True,
        IMPORT_NPU, "flash-attn cannot be installed on NPU; torch_npu.npu_fusion_attention is the training FA"),
      C("from flash_attn.bert_padding import unpad_input, pad_input, index_first_axis", "attention_kernel", "replace", True,
        "from .bert_padding import unpad_input, pad_input, index_first_axis  # vendored pure-torch helpers",
        "the helpers are plain torch, but the package that ships them cannot be installed"),
      C("assert q.is_cuda and kv.is_cuda", "device_type", "replace", True,
        "assert q.device.type == 'npu' and kv.device.type == 'npu'", "is_cuda is False for NPU tensors -> AssertionError"),
      C("output = flash_attn_unpadded_kvpacked_func(", "attention_kernel", "replace", True,
        "output = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], q.shape[-2], 'TND', scale=self.softmax_scale or q.shape[-1] ** -0.5, keep_prob=1 - (self.dropout_p if self.training else 0.0), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
        "varlen FA -> npu_fusion_attention TND layout with cumulative lengths"),
      C("output_unpad = flash_attn_unpadded_kvpacked_func(", "attention_kernel", "replace", True,
        "output_unpad = torch_npu.npu_fusion_attention(q, x_unpad[:, 0], x_unpad[:, 1], nheads, 'TND', scale=self.softmax_scale or q.shape[-1] ** -0.5, keep_prob=1 - (self.dropout_p if self.training else 0.0), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
        "padded-key branch"),
      C("if torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", "replace", True,
        "if False:  # no SM capability on Ascend",
        "raises without CUDA; torch.npu.get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
      C("self.attn = FlashMHA(embed_dims, num_heads, attn_drop, dtype=torch.float16, device='cuda',", "device_type", "replace", True,
        "self.attn = FlashMHA(embed_dims, num_heads, attn_drop, dtype=torch.float16, device='npu',",
        "parameters are created directly on the CUDA device"),
  ])

E("pf_tracker", "projects/tracking_plugin/models/trackers/cross_frame_tracker.py", "device_branch_or_abstraction",
  "PF-Track Cam3DTracker (cross_frame_tracker.py, Instances-based memory)", [
      C("(len(track_instances), self.hist_len, self.embed_dims), dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
        "(len(track_instances), self.hist_len, self.embed_dims), dtype=torch.float32, device=device)",
        "the only slot not built with device=device"),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=False):",
        "no autocast region encloses this call (auto_fp16 only wraps extract_feat), so it is a no-op on both devices; changed for consistency"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory hygiene only"),
  ])

E("pf_requirements", "requirements.txt", "explicit_replacement",
  "PF-Track requirements (torch 1.9 cu111, mmcv-full cu111 wheels, flash-attn)", [
      C("-f https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; harmless once the +cu111 pins are gone (x86 uses the CPU index, aarch64 plain PyPI)"),
      C("torch==1.9.0+cu111", "device_type", "replace", True, "torch==2.1.0",
        "CUDA build; torch_npu wheels pair with a specific torch (2.1.0 <-> torch-npu 2.1.0.postN)"),
      C("torchvision==0.10.0+cu111", "device_type", "replace", True, "torchvision==0.16.0", "CUDA build; must match torch 2.1"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", "removal", True, None,
        "prebuilt mmcv-full wheels link CUDA runtime libraries"),
      C("mmcv-full==1.4.0", "custom_cuda_extension", "replace", False,
        "mmcv-full==1.7.2  # built from source with NPU ops",
        "unconfirmed: NPU support in mmcv 1.x and its build flags are not in the knowledge base"),
      C("flash-attn==0.2.2", "attention_kernel", "removal", True, None, "cannot be installed on NPU"),
      C("setuptools==59.5.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch-npu pin appended at the end"),
  ])

E("pf_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "mmdetection3d-style Dockerfile used by PETR / PF-Track", [
      C('ARG CUDA="11.1"', "device_type", "removal", False, None, "unused once the base image changes"),
      C('ARG CUDNN="8"', "device_type", "removal", False, None, "unused once the base image changes"),
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; needs a CANN image (tag naming from Ascend/cann-container-image, registry path unconfirmed)"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "no effect without nvcc"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "no effect without nvcc"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
        "forces mmdet3d/mmcv setup to build CUDAExtensions, which fails without nvcc"),
      C("RUN rm /etc/apt/sources.list.d/cuda.list", "device_type", "removal", True, None,
        "file does not exist in a CANN image -> rm fails the build"),
      C("&& rm /etc/apt/sources.list.d/nvidia-ml.list", "device_type", "removal", True, None, "same"),
      C("&& apt-key del 7fa2af80", "device_type", "removal", False, None, "NVIDIA key juggling; pointless on Ascend"),
      C("3bf04d72.pub", "device_type", "removal", False, None, "NVIDIA CUDA repo key; pointless on Ascend"),
      C("7fa2af80.pub", "device_type", "removal", False, None, "NVIDIA ML repo key; pointless on Ascend"),
      C("=&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
        "the CANN image ships no torch/torch_npu"),
      C("RUN pip install mmcv-full==1.4.0 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html",
        "custom_cuda_extension", "replace", True, "RUN MMCV_WITH_OPS=1 pip install mmcv-full==1.7.2",
        "cu111 wheel links CUDA libraries; NPU op build flags unconfirmed"),
      C("RUN pip install flash-attn==0.2.2", "attention_kernel", "removal", True, None, "cannot be built on NPU"),
  ])

# ---------------------------------------------------------------- QD-3DT

E("qd_setup", "setup.py", "kernel_rewrite",
  "QD-3DT setup.py (mmdetection v1.x make_cuda_ext)", [
      C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension",
        "npu_only_addition", True, "from torch_npu.utils.cpp_extension import NpuExtension", "for the NPU branch below"),
      C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "add_branch", True,
        "elif os.getenv('FORCE_NPU', '0') == '1':  extension = NpuExtension; sources += sources_npu",
        "without an NPU branch every op is built CPU-only; roi_align/nms/dcn then reject NPU tensors at run time (NPU kernels must come from Ascend C or torch_npu contrib ops)"),
  ])

E("qd_lstm", "qd3dt/models/detectrackers/tracker/motion_lstm.py", "device_branch_or_abstraction",
  "QD-3DT motion_lstm.py (VeloLSTM motion model)", [
      C("checkpoint = torch.load(ckpt_path)", "device_type", "replace", True,
        "checkpoint = torch.load(ckpt_path, map_location='cpu')",
        "train_lstm.py saves CUDA tensors; without map_location unpickling tries to restore them on a CUDA device and fails"),
  ])

E("qd_train_lstm", "tools/train_lstm.py", "explicit_replacement",
  "QD-3DT LSTM motion-model training script", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "apex FusedAdam (CUDA kernel) is not available on NPU; with the guarded import --optim fused_adam dies on `assert HAS_APEX`"),
      C('args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
        'args.device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently trains on the CPU"),
      C("obj_obsv = obj_obsv.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "obj_obsv = obj_obsv.float().to(args.device, non_blocking=True)", "hard-coded .cuda()"),
      C("obj_gt = obj_gt.float().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "obj_gt = obj_gt.float().to(args.device, non_blocking=True)", "hard-coded .cuda()"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp):", "CUDA autocast is disabled (with a warning) without CUDA: --amp silently trains in fp32"),
      C("mem=torch.cuda.max_memory_allocated() / 1024. / 1024.))", "torch_cuda_api", "replace", True,
        "mem=torch.npu.max_memory_allocated() / 1024. / 1024.))", "raises without CUDA"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_ids', "ignored by the Ascend runtime"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
        "lazy no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator"),
      C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = model  # nn.DataParallel is unsupported on NPU; use DDP for multi-device",
        "torch.nn.DataParallel is unsupported on NPU (Ascend 2.7.1 list)"),
      C("num_workers=args.workers, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True)",
        "performance: without CUDA the loader silently disables pinning unless pin_memory_device is given (unconfirmed for every torch version)"),
      C("num_workers=args.workers, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
        "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=False)", "as above"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "CUDA GradScaler disables itself without CUDA: no loss scaling under --amp"),
  ])

E("qd_tracker3d", "qd3dt/models/detectrackers/tracker/tracker_3d.py", "device_branch_or_abstraction",
  "QD-3DT Tracker3D / LSTM3DTracker (quasi-dense + LSTM motion association)", [
      C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
        "hard-coded device for the motion LSTM"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
  ])

# ---------------------------------------------------------------- CC-3DT (vis4d / lightning)

E("cc_engine", "cc3dt/engine/run.py", "explicit_replacement",
  "CC-3DT / vis4d pytorch-lightning launcher", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "HCCL watchdog variable; its default is already 1"),
      C("if args.tf32 and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
        "if args.tf32:", "raises without CUDA (and torch.npu.get_device_capability returns None)"),
      C('process_group_backend="nccl",', "dist_backend", "replace", True, 'process_group_backend="hccl",', "NCCL -> HCCL"),
      C('accelerator="gpu",', "device_type", "replace", True, "accelerator=NPUAccelerator(),",
        "Lightning's CUDA accelerator refuses to start without CUDA; needs a custom NPU Accelerator (no built-in one confirmed)"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
        "elif torch.npu.is_available(): rank_zero_info(f'{torch.npu.device_count()} x {torch.npu.get_device_name(0)}')",
        "log only: the CUDA block is skipped on NPU"),
  ])

E("cc_train_sh", "scripts/train_nusc.sh", "explicit_replacement",
  "CC-3DT training / evaluation shell script", [
      C("=#!/bin/bash", "env_var", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored on Ascend, but it lists all 8 devices anyway, so behaviour on an 8-NPU node is unchanged"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no-op on Ascend (HCCL logs via ASCEND_GLOBAL_LOG_LEVEL)"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "silently ignored; host NIC name is site-specific"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "HCCL uses the NPU's own RoCE ports; no-op"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific; no-op"),
      C("GPUS=$(nvidia-smi --list-gpus | wc -l)", "device_type", "replace", True,
        "GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
        "nvidia-smi is absent; the pipeline still exits 0 and GPUS becomes 0"),
  ])

E("cc_env", "environment.yml", "explicit_replacement",
  "CC-3DT / vis4d conda environment", [
      C("=- nvidia", "device_type", "removal", False, None, "CUDA channel; harmless once pytorch-cuda is gone"),
      C("- pytorch-cuda=11.8", "device_type", "removal", True, None, "pulls the CUDA build of pytorch"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.0.1.post1",
        "torch-npu pin matching pytorch 2.0.1 (an EOL pairing; upgrading both is advisable)"),
      C("- nvidia-ml-py==12.535.108", "device_type", "removal", False, None, "NVML has no NPU equivalent; unused by training"),
      C("- git+https://github.com/SysCV/vis4d_cuda_ops.git", "custom_cuda_extension", "removal", True, None,
        "nvcc-built op package; needs NPU replacements"),
  ])
