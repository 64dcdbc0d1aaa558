# Labels for probe282 (online HD-map construction: MapTR / MapTRv2, HDMapNet, StreamMapNet, VectorMapNet).
# One entry per upstream file; one change per line a careful porter would edit for Ascend NPU (torch_npu).
# Target stack assumed by the ported snippets: torch 2.1.0 + torch-npu 2.1.0.post17 (CANN 8.3.RC1),
# mmcv 1.x rebuilt from source with its NPU ops, DrivingSDK (mx_driving) for the AD-specific CUDA ops.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------------------
# MapTR / MapTRv2 (mmdet3d 0.17 plugin layout)
# ---------------------------------------------------------------------------------------------------------

E("maptr_dist_train_sh", "tools/dist_train.sh", "device_branch_or_abstraction",
  "MapTR tools/dist_train.sh (torch.distributed.launch wrapper)", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before torch_npu is imported (otherwise libhccl.so / ASCEND_OPP_PATH "
        "errors); nothing else in the launcher is CUDA-specific ($GPUS is just a process count)."),
  ])

E("maptr_dist_test_sh", "tools/dist_test_map.sh", "device_branch_or_abstraction",
  "MapTR tools/dist_test_map.sh", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before torch_npu is imported."),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; a caller-supplied device subset would silently "
        "not apply. ASCEND_RT_VISIBLE_DEVICES is the process-level equivalent (logical ids)."),
  ])

E("maptr_train", "tools/train.py", "device_branch_or_abstraction",
  "MapTR tools/train.py (BEVFormer-derived, mmcv Config + plugin import + init_dist)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "torch 2.1 + torch_npu: the npu device/backend is registered only after import torch_npu "
        "(autoload exists only from 2.5.1)."),
      C("cfg = Config.fromfile(args.config)", "compile_mode", "npu_only_addition", False,
        "torch_npu.npu.set_compile_mode(jit_compile=False)",
        "MapTR has many dynamic shapes (nonzero-based query rebatching in SCA, variable GT counts); msFmkTransplt "
        "advice is jit_compile=False for dynamic shapes. Performance only."),
  ])

E("maptr_test", "tools/test.py", "device_branch_or_abstraction",
  "MapTR tools/test.py (single_gpu_test / custom_multi_gpu_test)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point: register the npu device before any model/device code runs."),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "torch DataParallel (and mmcv 1.4 MMDataParallel on top of it) becomes a pass-through when CUDA is not "
        "available, so the non-distributed test would silently run on CPU. NPU wrapper name is the mmcv>=1.7 "
        "mmcv.device.npu one (not in /work/shared/knowledge)."),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
        "Module.cuda() fails on a host without CUDA."),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],",
        "torch.cuda.current_device() initialises CUDA and raises on an NPU host."),
  ])

E("maptr_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement",
  "BEVFormer/MapTR tools/analysis_tools/benchmark.py (FPS measurement)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point."),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "DataParallel is a CPU pass-through without CUDA: the benchmark would silently time CPU inference."),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "print(f'benchmarking on {torch.npu.get_device_name(0)}')",
        "torch.cuda.get_device_name initialises CUDA and raises on an NPU host."),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "needed both to run at all and for correct timing of asynchronous NPU kernels."),
      C("torch.cuda.synchronize()  # wait for the forward pass", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the forward pass before stopping the clock",
        "same as above; without it the measured time is only the launch time."),
      C("max_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
        "max_mem = torch.npu.max_memory_allocated() / 1024 / 1024",
        "on a CUDA-less host torch.cuda memory stats return {} (not initialised), so the benchmark would "
        "silently report 0 MB."),
  ])

E("maptr_vis_pred", "tools/maptrv2/vis_pred.py", "device_branch_or_abstraction",
  "MapTRv2 tools/maptrv2/vis_pred.py (prediction / GT plotting)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point."),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "without CUDA the wrapper leaves the model on CPU (silently slow, not on NPU)."),
  ])

E("maptr_apis_train", "projects/mmdet3d_plugin/bevformer/apis/mmdet_train.py", "device_branch_or_abstraction",
  "BEVFormer/MapTR projects/mmdet3d_plugin/bevformer/apis/mmdet_train.py (custom_train_detector)", [
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),",
        "Module.cuda() fails without CUDA. (The MMDistributedDataParallel wrapper itself is left to the "
        "NPU-capable mmcv build; see README.)"),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises on an NPU host."),
      C("=eval_model.cuda(),", "tensor_to_device", "replace", True, "eval_model.npu(),",
        "same for the optional EMA/eval model."),
      C("current_device()], broadcast_buffers=False,", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()], broadcast_buffers=False,",
        "torch.cuda.current_device() raises on an NPU host."),
      C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        "non-distributed path; also needs an NPU DataParallel wrapper (mmcv>=1.7 NPUDataParallel)."),
      C("eval_model.cuda(cfg.gpu_ids[0])", "tensor_to_device", "replace", True,
        "eval_model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "same for the eval model."),
  ])

E("maptr_apis_test", "projects/mmdet3d_plugin/bevformer/apis/test.py", "explicit_replacement",
  "BEVFormer/MapTR custom_multi_gpu_test + collect_results_cpu/gpu", [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "tmpdir broadcast buffer is created on the CUDA device; must live on the HCCL device."),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "same buffer, rank 0 side."),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
        "--gpu-collect path: results are all_gathered as device tensors."),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "all_gather of the part shapes."),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "padded send buffer."),
  ])

E("maptr_msda_func", "projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  "kernel_rewrite",
  "BEVFormer/MapTR MultiScaleDeformableAttnFunction_fp16/_fp32 (mmcv _ext ms_deform_attn CUDA kernels)", [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "torch.cuda.amp.custom_fwd(cast_inputs=...) only reacts to CUDA autocast; under NPU autocast fp16 "
        "inputs would not be cast to fp32. MapTR configs train fp32, so unconfirmed/only matters with fp16."),
      C("from mmcv.utils import ext_loader", "custom_cuda_extension", "npu_only_addition", True,
        "import mx_driving",
        "the NPU branch below calls DrivingSDK's multi-scale deformable attention kernels."),
      C("=output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "add_branch", False,
        "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, "
        "sampling_locations, attention_weights) if value.device.type == 'npu' else ext_module.ms_deform_attn_forward(",
        "fp16 variant: not used by MapTR (SCA/TSA route fp16 to the fp32 function), so the unchanged line never "
        "runs; ported for completeness. mx_driving API name not confirmed in /work/shared/knowledge."),
      C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "add_branch", False,
        "if value.device.type == 'npu': grad_value, grad_sampling_loc, grad_attn_weight = "
        "mx_driving._C.multi_scale_deformable_attn_backward(value, value_spatial_shapes, value_level_start_index, "
        "sampling_locations, attention_weights, grad_output.contiguous())",
        "fp16 variant backward; unused by MapTR. Op name unconfirmed."),
      C("output = ext_module.ms_deform_attn_forward(value, value_spatial_shapes,", "custom_cuda_extension",
        "add_branch", True,
        "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, "
        "sampling_locations, attention_weights) if value.device.type == 'npu' else "
        "ext_module.ms_deform_attn_forward(value, value_spatial_shapes,",
        "mmcv 1.x _ext has only CUDA/CPU-stub kernels for ms_deform_attn: on an npu tensor the call errors. "
        "DrivingSDK provides the NPU kernel (API name unconfirmed in knowledge; mmcv>=2 NPU build is the "
        "alternative)."),
      C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes,", "custom_cuda_extension",
        "add_branch", True,
        "if value.device.type == 'npu': grad_value, grad_sampling_loc, grad_attn_weight = "
        "mx_driving._C.multi_scale_deformable_attn_backward(value, value_spatial_shapes, value_level_start_index, "
        "sampling_locations, attention_weights, grad_output.contiguous())",
        "backward of the fp32 function, used in training; same reasoning, op name unconfirmed."),
  ])

E("maptr_sca", "projects/mmdet3d_plugin/bevformer/modules/spatial_cross_attention.py",
  "device_branch_or_abstraction",
  "BEVFormer/MapTR SpatialCrossAttention + MSDeformableAttention3D", [
      C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
        "if value.device.type in ('cuda', 'npu'):",
        "unchanged, NPU tensors take the pure-PyTorch multi_scale_deformable_attn_pytorch path (grid_sample has "
        "an NPU kernel) - correct but much slower and memory hungry; route to the fused kernel instead."),
  ])

E("maptr_tsa", "projects/mmdet3d_plugin/bevformer/modules/temporal_self_attention.py",
  "device_branch_or_abstraction",
  "BEVFormer/MapTR TemporalSelfAttention", [
      C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", False,
        "if value.device.type in ('cuda', 'npu'):",
        "same as SCA: falls back to the correct but slow PyTorch deformable attention on NPU."),
  ])

E("maptr_gka", "projects/mmdet3d_plugin/maptr/modules/geometry_kernel_attention.py",
  "device_branch_or_abstraction",
  "MapTR GeometrySptialCrossAttention / GeometryKernelAttention (GKT)", [
      C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "replace", True,
        "if value.device.type in ('cuda', 'npu'):",
        "unlike SCA/TSA there is no PyTorch fallback here: the else branch raises NotImplementedError, so the "
        "default MapTR encoder fails on NPU until the NPU build of the GKT op is reachable."),
  ])

E("maptr_gka_setup", "projects/mmdet3d_plugin/maptr/modules/ops/geometric_kernel_attn/setup.py", "kernel_rewrite",
  "MapTR geometric_kernel_attn/setup.py (Deformable-DETR style CUDAExtension build)", [
      C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "npu_only_addition", True,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "NPU build of the op (Ascend C kernels) goes through torch_npu's NpuExtension."),
      C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "add_branch", True,
        "elif hasattr(torch, 'npu') and torch.npu.is_available():  # extension = NpuExtension; sources += "
        "glob('src/npu/*.cpp'); define_macros += [('WITH_NPU', None)]",
        "on an NPU host this test is False and the build hits raise NotImplementedError('Cuda is not availabel'); "
        "an NPU branch building the Ascend C port is needed (the CUDA branch is kept)."),
  ])

E("maptr_gka_func", "projects/mmdet3d_plugin/maptr/modules/ops/geometric_kernel_attn/functions/geometric_kernel_attn_func.py",
  "kernel_rewrite",
  "MapTR GeometricKernelAttentionFunc (autograd wrapper of the nvcc-built GKA op)", [
      C("output = GKA.geometric_kernel_attn_cuda_forward(", "custom_cuda_extension", "add_branch", True,
        "output = (GKA.geometric_kernel_attn_npu_forward if value.device.type == 'npu' else "
        "GKA.geometric_kernel_attn_cuda_forward)(",
        "the CUDA binding cannot run on npu tensors; dispatch to the NPU binding built by the ported setup.py "
        "(binding name is the porter's choice)."),
      C("GKA.geometric_kernel_attn_cuda_backward(", "custom_cuda_extension", "add_branch", True,
        "(GKA.geometric_kernel_attn_npu_backward if value.device.type == 'npu' else "
        "GKA.geometric_kernel_attn_cuda_backward)(",
        "same for the backward kernel."),
  ])

E("maptr_encoder", "projects/mmdet3d_plugin/maptr/modules/encoder.py", "explicit_replacement",
  "MapTR/MapTRv2 encoder.py (BEVFormer-style encoder + LSSTransform with bev_pool)", [
      C("from mmdet3d.ops import bev_pool", "custom_cuda_extension", "replace", True,
        "from mx_driving import bev_pool",
        "bev_pool in MapTR's bundled mmdet3d is a CUDA-only (BEVFusion) kernel; DrivingSDK ships an NPU "
        "bev_pool with the same call shape (name/signature not confirmed in /work/shared/knowledge)."),
      C("def get_reference_points(H, W, Z=8, num_points_in_pillar=4, dim='3d', bs=1, device='cuda'",
        "device_type", "replace", False,
        "def get_reference_points(H, W, Z=8, num_points_in_pillar=4, dim='3d', bs=1, device='npu', dtype=torch.float):",
        "CUDA default argument; every caller passes device=bev_query.device, so it is never used. Tidy-up only."),
  ])

E("maptr_grid_mask", "projects/mmdet3d_plugin/models/utils/grid_mask.py", "explicit_replacement",
  "BEVFormer/MapTR GridMask augmentation", [
      C("mask = torch.from_numpy(mask).to(x.dtype).cuda()", "tensor_to_device", "replace", True,
        "mask = torch.from_numpy(mask).to(x.dtype).to(x.device)",
        "hard-coded .cuda() inside the training-time augmentation (use_grid_mask=True in MapTR configs)."),
      C("offset = torch.from_numpy(2 * (np.random.rand(h, w) - 0.5)).to(x.dtype).cuda()", "tensor_to_device",
        "replace", True,
        "offset = torch.from_numpy(2 * (np.random.rand(h, w) - 0.5)).to(x.dtype).to(x.device)",
        "only with offset=True (MapTR uses offset=False), but the line fails whenever it runs."),
  ])

E("maptr_detector", "projects/mmdet3d_plugin/maptr/detectors/maptr.py", "device_branch_or_abstraction",
  "MapTR detectors/maptr.py (MVXTwoStageDetector subclass, temporal prev_bev, LiDAR fusion voxelize)", [
      C('ret = self.lidar_modal_extractor["voxelize"](res)', "unsupported_op_workaround", "replace", False,
        'ret = [r.to(res.device) for r in self.lidar_modal_extractor["voxelize"](res.cpu())]',
        "mmdet3d 0.17 Voxelization/DynamicScatter dispatch to CUDA or CPU kernels only. Used only by the "
        "camera+LiDAR fusion configs; failure mode on npu tensors not confirmed in knowledge (CPU round trip or "
        "a DrivingSDK voxelization op)."),
  ])

E("maptr_head", "projects/mmdet3d_plugin/maptr/dense_heads/maptr_head.py", "device_branch_or_abstraction",
  "MapTR dense_heads/maptr_head.py (MapTRHead forward / transform_box / get_bboxes)", [])

E("maptr_config", "projects/configs/maptr/maptr_tiny_r50_24e.py", "explicit_replacement",
  "MapTR projects/configs/maptr/maptr_tiny_r50_24e.py", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
        "dist_params = dict(backend='hccl')",
        "passed straight to init_dist -> init_process_group; NCCL does not exist on Ascend."),
  ])

E("maptr_requirements", "requirement.txt", "explicit_replacement",
  "MapTR requirement.txt (CUDA 11.1 wheels, mmcv-full, spconv)", [
      C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", True,
        "torch-npu==2.1.0.post17",
        "the CUDA wheel index line is dropped and the torch-npu pin (matching torch 2.1.0, CANN 8.3.RC1) takes "
        "its place."),
      C("torch==1.9.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
        "CUDA 11.1 build; torch_npu needs the matching plain/CPU torch (no torch_npu for 1.9.1)."),
      C("torchvision==0.10.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA build and must match torch 2.1.0."),
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension",
        "removal", False, None,
        "prebuilt cu111 mmcv-full index; harmless once mmcv is built from source, removed for clarity."),
      C("mmcv-full==1.4.0", "custom_cuda_extension", "replace", True,
        "mmcv-full==1.7.2  # build from source: MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -e .",
        "the cu111 wheel's compiled ops link against CUDA; mmcv gained NPU device support only in 1.7 "
        "(version/flag not in knowledge)."),
      C("spconv-cu111==2.1.25", "custom_cuda_extension", "removal", True, None,
        "CUDA-only sparse-conv wheel (no Ascend build); used only by the LiDAR fusion configs - drop it or "
        "replace the sparse encoder with an NPU implementation."),
  ])

E("maptr_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "MapTR/BEVFormer-style docker/Dockerfile (pytorch/pytorch CUDA devel base, mmcv-full cu111)", [
      C("FROM pytorch/pytorch:", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; needs a CANN base (Ascend/cann-container-image) - exact tag not verified."),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "nvcc architecture list, meaningless without nvcc."),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "nvcc flags, meaningless without nvcc."),
      C('ENV FORCE_CUDA="1"', "env_var", "replace", True, 'ENV FORCE_NPU="1"',
        "FORCE_CUDA makes the mmcv/mmdet3d source builds take the CUDAExtension path, which fails without a "
        "CUDA toolkit; mmcv's NPU build switch is FORCE_NPU (unconfirmed in knowledge)."),
      C("RUN rm /etc/apt/sources.list.d/cuda.list", "import_torch_npu", "removal", True, None,
        "NVIDIA apt-key workaround (whole RUN, incl. the apt-key continuation lines): the files do not exist in "
        "a CANN image, so rm fails and the build stops."),
      C("RUN pip install --no-cache-dir --upgrade pip wheel", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
        "the CANN base image has no torch; the pytorch/pytorch base did."),
      C("RUN pip install --no-cache-dir mmcv-full==1.4.0", "custom_cuda_extension", "replace", True,
        "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && "
        "MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir -e .",
        "prebuilt cu111 mmcv-full cannot be used; build mmcv from source with its NPU ops."),
  ])

# ---------------------------------------------------------------------------------------------------------
# HDMapNet (plain PyTorch, single process)
# ---------------------------------------------------------------------------------------------------------

E("hdmapnet_train", "train.py", "explicit_replacement",
  "HDMapNet train.py (with a fork's --gpus/DataParallel and --amp additions)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point."),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above already seeds the other devices. Tidy-up."),
      C("model.load_state_dict(torch.load(args.modelf), strict=False)", "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.modelf, map_location='cpu'), strict=False)",
        "released HDMapNet checkpoints hold CUDA tensors; torch.load without map_location raises on a host "
        "without CUDA."),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() fails without CUDA."),
      C("model = torch.nn.DataParallel(model", "distributed_framework", "replace", True,
        "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[int(os.environ.get('LOCAL_RANK', 0))])",
        "torch.nn.DataParallel is not supported on Ascend (✘ on A2/A3 in the 2.7.1 API list); multi-card has "
        "to become DDP (launcher change not shown)."),
      C("opt = torch.optim.Adam(", "fused_optimizer", "replace", False,
        "opt = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
        "performance only (msFmkTransplt advice)."),
      C("loss_fn = SimpleLoss(args.pos_weight).cuda()", "tensor_to_device", "replace", True,
        "loss_fn = SimpleLoss(args.pos_weight).npu()", "holds pos_weight buffer; .cuda() fails."),
      C("embedded_loss_fn = DiscriminativeLoss(", "tensor_to_device", "replace", True,
        "embedded_loss_fn = DiscriminativeLoss(args.embedding_dim, args.delta_v, args.delta_d).npu()",
        ".cuda() fails."),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch_npu.npu.amp.GradScaler(enabled=args.amp)",
        "without CUDA the CUDA GradScaler warns and disables itself (and autocast below is disabled too), so "
        "--amp silently trains in fp32: numerically safe, slower. Must be ported together with autocast."),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch_npu.npu.amp.autocast(enabled=args.amp):",
        "CUDA autocast is disabled with a warning on a CUDA-less host; --amp becomes a silent no-op."),
      C("semantic, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
        "semantic, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
        "batch transfer, line 1 of 3."),
      C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
        "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch transfer, line 2 of 3."),
      C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
        "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch transfer, line 3 of 3."),
      C("semantic_gt = semantic_gt.cuda().float()", "tensor_to_device", "replace", True,
        "semantic_gt = semantic_gt.npu().float()", ".cuda() fails."),
      C("instance_gt = instance_gt.cuda()", "tensor_to_device", "replace", True,
        "instance_gt = instance_gt.npu()", ".cuda() fails."),
      C("direction_gt = direction_gt.cuda()", "tensor_to_device", "replace", True,
        "direction_gt = direction_gt.npu()", ".cuda() fails (direction_pred runs)."),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
        "--gpus selects cards through CUDA_VISIBLE_DEVICES, which the Ascend runtime ignores: the run would "
        "silently use NPU 0.. instead of the requested cards."),
  ])

E("hdmapnet_evaluate", "evaluate.py", "explicit_replacement", "HDMapNet evaluate.py (eval_iou)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point."),
      C("semantic, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
        "semantic, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
        "batch transfer, line 1 of 3 (also used by train.py's per-epoch eval)."),
      C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
        "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch transfer, line 2 of 3."),
      C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
        "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch transfer, line 3 of 3."),
      C("semantic_gt = semantic_gt.cuda().float()", "tensor_to_device", "replace", True,
        "semantic_gt = semantic_gt.npu().float()", ".cuda() fails."),
      C("model.load_state_dict(torch.load(args.modelf), strict=False)", "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.modelf, map_location='cpu'), strict=False)",
        "GPU-saved checkpoint: torch.load without map_location raises without CUDA."),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails."),
  ])

E("hdmapnet_export", "export_pred_to_json.py", "explicit_replacement",
  "HDMapNet export_pred_to_json.py (vectorized submission export)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point."),
      C("segmentation, embedding, direction = model(imgs.cuda()", "tensor_to_device", "replace", True,
        "segmentation, embedding, direction = model(imgs.npu(), trans.npu(), rots.npu(), intrins.npu(),",
        "batch transfer, line 1 of 3."),
      C("post_trans.cuda(), post_rots.cuda(), lidar_data.cuda(),", "tensor_to_device", "replace", True,
        "post_trans.npu(), post_rots.npu(), lidar_data.npu(),", "batch transfer, line 2 of 3."),
      C("lidar_mask.cuda(), car_trans.cuda(), yaw_pitch_roll.cuda())", "tensor_to_device", "replace", True,
        "lidar_mask.npu(), car_trans.npu(), yaw_pitch_roll.npu())", "batch transfer, line 3 of 3."),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails."),
  ])

E("hdmapnet_homography", "model/homography.py", "explicit_replacement",
  "HDMapNet model/homography.py (IPM baseline: plane grid, rotation_from_euler, IPM module)", [
      C("R = R.cuda()", "tensor_to_device", "replace", True, "R = R.npu()",
        "cuda=True is the default and every caller relies on it."),
      C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "plane grid on device."),
      C("y = y.cuda()", "tensor_to_device", "replace", True, "y = y.npu()", "plane grid on device."),
      C("zs = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True, "zs = torch.tensor([0.]).npu()",
        "runs in IPM.__init__ (fixed ground plane), i.e. at model construction."),
      C("yaws = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True,
        "yaws = torch.tensor([0.]).npu()", "same."),
      C("rolls = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True,
        "rolls = torch.tensor([0.]).npu()", "same."),
      C("pitchs = torch.tensor([0.]).cuda()", "tensor_to_device", "replace", True,
        "pitchs = torch.tensor([0.]).npu()", "same."),
      C("self.tri_mask = self.tri_mask.cuda()", "tensor_to_device", "replace", True,
        "self.tri_mask = self.tri_mask.npu()", "visualisation mask, created in __init__ with cuda=True."),
      C("self.flipped_tri_mask = self.flipped_tri_mask.cuda()", "tensor_to_device", "replace", True,
        "self.flipped_tri_mask = self.flipped_tri_mask.npu()", "same."),
  ])

E("hdmapnet_dataset", "data/dataset.py", "device_branch_or_abstraction",
  "HDMapNet data/dataset.py (nuScenes semantic dataset + DataLoader builder)", [
      C("drop_last=True, pin_memory=True)", "pin_memory", "replace", False,
        "drop_last=True, pin_memory=True, pin_memory_device='npu')",
        "on torch 2.1 DataLoader pins only when torch.cuda.is_available(), so pinning silently turns off on an "
        "NPU host (performance only; behaviour not confirmed in knowledge)."),
      C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available(), pin_memory_device='npu')",
        "evaluates False on NPU -> no pinned host memory; performance only."),
  ])

# ---------------------------------------------------------------------------------------------------------
# StreamMapNet (mmdet3d 1.0rc plugin layout)
# ---------------------------------------------------------------------------------------------------------

E("streammapnet_train", "tools/train.py", "device_branch_or_abstraction",
  "StreamMapNet tools/train.py (with a hand-rolled init_dist_pytorch and a --tf32 switch)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point."),
      C("def init_dist_pytorch(backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist_pytorch(backend='hccl', **kwargs):",
        "default backend used whenever the config has no dist_params; NCCL is unavailable on Ascend."),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host, and rank % num_gpus is evaluated eagerly as the .get() default -> "
        "ZeroDivisionError."),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA; each rank must bind its NPU before HCCL init."),
      C("if args.tf32 and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
        "if args.tf32 and torch.npu.is_available():  # no SM capability on NPU; use torch.npu.matmul.allow_hf32",
        "with --tf32 the CUDA capability query raises on an NPU host (and torch_npu's get_device_capability "
        "returns None unless TORCH_NPU_DEVICE_CAPABILITY is set). The allow_tf32 flags below are accepted on NPU."),
  ])

E("streammapnet_mapper", "plugin/models/mapers/StreamMapNet.py", "device_branch_or_abstraction",
  "StreamMapNet plugin/models/mapers/StreamMapNet.py (streaming BEV memory warp)", [
      C("prev_g2e_matrix[:3, 3] = -(prev_e2g_rot.T @ prev_e2g_trans)", "unsupported_op_workaround", "replace", True,
        "prev_g2e_matrix[:3, 3] = -(prev_e2g_rot.T.cpu() @ prev_e2g_trans.cpu()).to(prev_g2e_matrix.device)",
        "float64 pose math on the device; torch.matmul on Atlas A2 supports only bf16/fp16/fp32 (2.7.1 API "
        "list), so the fp64 product has to run on CPU (or in fp32, at a precision cost for global poses)."),
      C("curr2prev_matrix = prev_g2e_matrix @ curr_e2g_matrix", "unsupported_op_workaround", "replace", True,
        "curr2prev_matrix = (prev_g2e_matrix.cpu() @ curr_e2g_matrix.cpu()).to(self.plane.device)",
        "fp64 4x4 matmul, same restriction."),
      C("curr_g2e = torch.linalg.inv(curr_e2g)", "unsupported_op_workaround", "replace", False,
        "curr_g2e = torch.linalg.inv(curr_e2g.cpu())",
        "linalg_inv_ex has no NPU kernel in the native-op lists (torch.inverse does) -> CPU fallback; "
        "performance only, unconfirmed."),
      C("return (curr_g2e @ prev_e2g).float()", "unsupported_op_workaround", "replace", True,
        "return (curr_g2e.cpu() @ prev_e2g.cpu()).float().to(self.plane.device)",
        "fp64 matmul on the device, same restriction as above."),
  ])

E("streammapnet_mn_sh", "tools/mn_dist_train.sh", "device_branch_or_abstraction",
  "StreamMapNet-style multi-node launcher (NCCL env, torch.distributed.launch)", [
      C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced on every node before torch_npu is imported."),
      C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "NCCL_* is ignored by HCCL; without HCCL_SOCKET_IFNAME/HCCL_IF_IP HCCL picks the root-info NIC by its "
        "own priority, which can be unreachable across nodes."),
      C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None,
        "no HCCL equivalent (HCCL uses the NPUs' own RoCE ports); dead setting."),
      C("export NCCL_DEBUG=", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "debug verbosity only."),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
        "informational only; the script has no set -e, so the missing nvidia-smi only prints an error."),
  ])

E("streammapnet_env", "environment.yml", "explicit_replacement",
  "StreamMapNet-style conda environment.yml (pytorch + nvidia channels, cudatoolkit)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA channel, not needed."),
      C("=- pytorch=1.9.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch_npu is only built against specific torch versions (2.1.0 here); 1.9.1 has none."),
      C("=- torchvision=0.10.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must match torch 2.1.0."),
      C("=- cudatoolkit=11.1", "import_torch_npu", "replace", True, "- cpuonly",
        "selects the CUDA build of pytorch (and is unavailable on aarch64 Ascend hosts); the CPU build is what "
        "torch_npu runs on."),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
        "the torch-npu pin (matches torch 2.1.0 / CANN 8.3.RC1)."),
      C("- -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension",
        "removal", False, None, "cu111 prebuilt mmcv index; irrelevant once mmcv is built from source."),
      C("- mmcv-full==1.6.0", "custom_cuda_extension", "replace", True,
        "    - mmcv-full==1.7.2  # built from source with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "1.6.0 has no NPU device support and its cu111 wheel links CUDA (version/flag unconfirmed in knowledge)."),
  ])

# ---------------------------------------------------------------------------------------------------------
# VectorMapNet
# ---------------------------------------------------------------------------------------------------------

E("vectormapnet_polygen", "plugin/models/heads/polyline_generator.py", "device_branch_or_abstraction",
  "VectorMapNet polyline generator head (autoregressive vertex transformer)", [
      C("mask = torch.triu(torch.ones(sz, sz, device='cuda'), diagonal=1)", "device_type", "replace", True,
        "mask = torch.triu(torch.ones(sz, sz, device='npu'), diagonal=1)",
        "hard-coded device inside the sampling loop used at inference."),
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
        "with torch.autocast(device_type='npu', enabled=False):",
        "meant to force fp32 for the vertex softmax; on NPU it does not disable NPU autocast. Matters only for "
        "fp16 training (unconfirmed)."),
  ])

E("vectormapnet_detgen_utils", "plugin/models/heads/detgen_utils/utils.py", "device_branch_or_abstraction",
  "VectorMapNet detgen_utils/utils.py (quantize / top-k / top-p / causal mask helpers)", [
      C("def generate_square_subsequent_mask(sz, device='cuda'):", "device_type", "replace", True,
        "def generate_square_subsequent_mask(sz, device='npu'):",
        "unlike BEVFormer's get_reference_points, the training caller (PolylineGenerator.forward_train) relies "
        "on this default, so the mask is created on CUDA."),
  ])
