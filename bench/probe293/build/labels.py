# Labels for probe293: vision-centric 3-D semantic occupancy (SurroundOcc / TPVFormer / FlashOcc-BEVDet /
# OpenOccupancy / OccFormer style), CUDA -> Ascend NPU (torch_npu).
#
# Conventions used throughout (see README "How the labels were chosen"):
#  * a multi-line statement is labelled once, on its first line; the ported snippet shows the whole new statement;
#  * import_torch_npu is added only to entry scripts (the stack is torch 2.1-era because of mmcv 1.x, so there is
#    no device-backend autoload); library modules get it implicitly from the entry point;
#  * mx_driving (Ascend DrivingSDK) names in ported lines come from DrivingSDK's own docs, not from
#    /work/shared/knowledge; a label is required=True only when the *CUDA* line itself is known to fail.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
NPU_DDP_NOTE = ("unconfirmed in knowledge: mmcv 1.x MMDistributedDataParallel scatters DataContainers through "
                "CUDA streams; mmcv>=1.7 ships mmcv.device.npu.NPUDistributedDataParallel")

# ----------------------------------------------------------------------------------------------------------------
# SurroundOcc
# ----------------------------------------------------------------------------------------------------------------
E("so_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "SurroundOcc tools/dist_train.sh (torch.distributed.launch wrapper)", [
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "device masking: CUDA_VISIBLE_DEVICES is ignored by the NPU runtime, so the 'leave 0-1 for eval' "
        "selection silently stops working"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob, silently ignored by HCCL (HCCL's RDMA runs on the NPU's own RoCE NIC)"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "NCCL log level has no effect on HCCL; CANN log level is the closest knob"),
      C("=export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", False, SET_ENV,
        "CANN environment for torch_npu/HCCL; needed unless the shell or image already exports it"),
  ])

E("so_train", "tools/train.py", "explicit_replacement",
  "SurroundOcc / BEVFormer tools/train.py (mmdet3d 0.17 entry point)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; torch 2.1-era stack (mmcv 1.x) has no torch_npu autoload"),
      C("=args = parse_args()", "compile_mode", "npu_only_addition", False,
        "torch_npu.npu.set_compile_mode(jit_compile=False)",
        "performance: the SCA re-batching (max_len) and the visible-voxel counts change every sample, i.e. "
        "dynamic shapes; Ascend's advice is jit_compile=False for them"),
      C("torch.cuda.set_device(cfg.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(cfg.gpu_ids[0])", "CUDA runtime call fails on a host without CUDA"),
      C("f'{torch.cuda.memory_allocated() / 1024 ** 2:.1f} MB')", "torch_cuda_api", "replace", False,
        "f'{torch.npu.memory_allocated() / 1024 ** 2:.1f} MB')",
        "log only: with CUDA uninitialised it returns 0 instead of failing"),
  ])

E("so_test", "tools/test.py", "explicit_replacement",
  "SurroundOcc tools/test.py (MMDataParallel / MMDistributedDataParallel evaluation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; no torch_npu autoload on the torch 2.1-era stack"),
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
        True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "MMDataParallel is a torch.nn.DataParallel subclass (DataParallel is unsupported on NPU); NPU wrapper "
        "names are mmcv's (>=1.7), not from the knowledge base"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "DataParallel is unsupported on NPU (Ascend API list); MMDataParallel adds a CUDA-only scatter on top"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(", NPU_DDP_NOTE),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "CUDA runtime query fails on NPU host"),
  ])

E("so_mmdet_train", "projects/mmdet3d_plugin/surroundocc/apis/mmdet_train.py", "explicit_replacement",
  "SurroundOcc / BEVFormer custom_train_detector (mmcv runner, fp16 hook, eval hook)", [
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
        "def init_random_seed(seed=None, device='npu'):",
        "default device of the seed-broadcast tensor; every caller relies on the default"),
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
        True, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "MMDataParallel (DataParallel subclass) is unsupported on NPU; NPU wrapper names are mmcv's"),
      C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(", NPU_DDP_NOTE),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails without CUDA"),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "CUDA runtime query fails on NPU host"),
      C("=eval_model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "eval_model = NPUDistributedDataParallel(", NPU_DDP_NOTE),
      C("=eval_model.cuda(),", "tensor_to_device", "replace", True, "eval_model.npu(),",
        ".cuda() fails without CUDA"),
      C("# same card as the train model", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],  # same card as the train model",
        "CUDA runtime query fails on NPU host"),
      C("=model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "single-process path: DataParallel unsupported on NPU"),
      C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", ".cuda() fails without CUDA"),
      C("=eval_model = MMDataParallel(", "distributed_framework", "replace", True,
        "eval_model = NPUDataParallel(", "DataParallel unsupported on NPU"),
      C("=eval_model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "eval_model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", ".cuda() fails without CUDA"),
  ])

E("so_apis_test", "projects/mmdet3d_plugin/surroundocc/apis/test.py", "explicit_replacement",
  "SurroundOcc custom_multi_gpu_test with collect_results_cpu/gpu", [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')",
        "tmpdir broadcast buffer must live on the HCCL device; 'cuda' fails"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "'cuda' tensor fails on NPU host"),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
        "--gpu-collect path; all_gather over HCCL needs NPU tensors"),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "'cuda' tensor fails on NPU host"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "'cuda' tensor fails on NPU host"),
  ])

E("so_msda_fn", "projects/mmdet3d_plugin/surroundocc/modules/multi_scale_deformable_attn_function.py",
  "kernel_rewrite",
  "BEVFormer/SurroundOcc MultiScaleDeformableAttnFunction_fp16/_fp32 over mmcv's CUDA _ext", [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", True,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "CUDA custom_fwd consults the CUDA autocast state, so cast_inputs=float32 would not be applied under "
        "NPU autocast (mapping torch.cuda.amp.custom_fwd -> torch_npu.npu.amp.custom_fwd is in Ascend's list)"),
      C("ext_module = ext_loader.load_ext('_ext', ['ms_deform_attn_backward', 'ms_deform_attn_forward'])",
        "custom_cuda_extension", "replace", True, "import mx_driving._C",
        "CUDA-built mmcv _ext cannot be loaded on an NPU host; DrivingSDK provides the MSDA kernel"),
      C("output = ext_module.ms_deform_attn_forward(value, value_spatial_shapes,", "custom_cuda_extension",
        "replace", True,
        "output = mx_driving._C.multi_scale_deformable_attn(value, value_spatial_shapes.int(), "
        "value_level_start_index.int(), sampling_locations, attention_weights)",
        "nvcc kernel call site (fp16 variant); im2col_step has no NPU counterpart"),
      C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes,", "custom_cuda_extension", "replace",
        True,
        "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving._C.multi_scale_deformable_attn_backward("
        "value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, grad_output)",
        "nvcc kernel call site (fp16 backward)"),
      C("=output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "replace", True,
        "output = mx_driving._C.multi_scale_deformable_attn(value, value_spatial_shapes.int(), "
        "value_level_start_index.int(), sampling_locations, attention_weights)",
        "nvcc kernel call site (fp32 variant, the one the encoder uses)"),
      C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "replace", True,
        "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving._C.multi_scale_deformable_attn_backward("
        "value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, grad_output)",
        "nvcc kernel call site (fp32 backward)"),
  ])

E("so_sca", "projects/mmdet3d_plugin/surroundocc/modules/spatial_cross_attention.py", "kernel_rewrite",
  "SurroundOcc SpatialCrossAttention + MSDeformableAttention3D", [
      C("ext_module = ext_loader.load_ext('_ext', ['ms_deform_attn_backward', 'ms_deform_attn_forward'])",
        "custom_cuda_extension", "removal", True, None,
        "unused module-level load of the CUDA mmcv _ext; fails at import on an NPU host"),
      C("if torch.cuda.is_available() and value.is_cuda:", "torch_cuda_api", "replace", False,
        "if value.is_npu:",
        "on NPU the guard is False and the grid_sample reference path runs: correct but much slower and "
        "memory-hungry (performance only)"),
  ])

E("so_encoder", "projects/mmdet3d_plugin/surroundocc/modules/encoder.py", "device_branch_or_abstraction",
  "SurroundOcc OccEncoder (reference points, point_sampling with TF32 toggles)", [
      C("def get_reference_points(H, W, Z=8, dim='3d', bs=1, device='cuda', dtype=torch.float):", "device_type",
        "replace", False,
        "def get_reference_points(H, W, Z=8, dim='3d', bs=1, device='npu', dtype=torch.float):",
        "default never used: the only caller passes device=volume_query.device"),
  ])

E("so_config", "projects/configs/surroundocc/surroundocc.py", "explicit_replacement",
  "SurroundOcc config (mmcv Config with inlined default_runtime, fp16 loss_scale)", [
      C("dcn=dict(type='DCNv2', deform_groups=1, fallback_on_stride=False)", "custom_cuda_extension", "replace",
        False,
        "dcn=dict(type='DCNv2', deform_groups=1, fallback_on_stride=False),  # needs an NPU build of mmcv's "
        "modulated_deform_conv (or torch_npu.contrib ModulatedDeformConv)",
        "unconfirmed: whether the NPU mmcv build registers DCNv2; torch_npu has npu_deformable_conv2d / contrib "
        "ModulatedDeformConv"),
      C("=type='AdamW',", "fused_optimizer", "replace", False,
        "type='NpuFusedAdamW',  # torch_npu.optim.NpuFusedAdamW registered into mmcv OPTIMIZERS",
        "performance only (msFmkTransplt advice: faster, more memory); needs registering with mmcv"),
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "NCCL backend does not exist on NPU hosts"),
  ])

E("so_loss", "projects/mmdet3d_plugin/surroundocc/loss/loss_utils.py", "explicit_replacement",
  "SurroundOcc / MonoScene scene-class-affinity losses", [
      C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch_npu.npu.amp import autocast",
        "autocast(False) must switch off the *NPU* autocast so sem_scal_loss stays fp32; the CUDA one is a "
        "no-op there"),
      C("class_weights = torch.from_numpy(class_weights).float().cuda()", "tensor_to_device", "replace", True,
        "class_weights = torch.from_numpy(class_weights).float().to(pred.device)", ".cuda() fails without CUDA"),
  ])

E("so_grid_mask", "projects/mmdet3d_plugin/models/utils/grid_mask.py", "device_branch_or_abstraction",
  "BEVFormer/SurroundOcc GridMask augmentation", [
      C("mask = torch.from_numpy(mask).to(x.dtype).cuda()", "tensor_to_device", "replace", True,
        "mask = torch.from_numpy(mask).to(device=x.device, dtype=x.dtype)", ".cuda() fails without CUDA"),
      C("offset = torch.from_numpy(2 * (np.random.rand(h, w) - 0.5)).to(x.dtype).cuda()", "tensor_to_device",
        "replace", True,
        "offset = torch.from_numpy(2 * (np.random.rand(h, w) - 0.5)).to(device=x.device, dtype=x.dtype)",
        ".cuda() fails without CUDA (offset branch)"),
  ])

E("so_gen_occ", "tools/generate_occupancy_nuscenes/generate_occupancy_nuscenes.py", "explicit_replacement",
  "SurroundOcc occupancy GT generation (open3d Poisson meshing + chamfer CUDA kernel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "stand-alone script that now runs the nearest-neighbour search on the NPU"),
      C("=import chamfer", "custom_cuda_extension", "removal", True, None,
        "nvcc-built chamfer extension cannot be built/imported on an NPU host"),
      C("x = torch.from_numpy(dense_voxels).cuda().unsqueeze(0).float()", "tensor_to_device", "replace", True,
        "x = torch.from_numpy(dense_voxels).npu().unsqueeze(0).float()", ".cuda() fails without CUDA"),
      C("y = torch.from_numpy(point_cloud_with_semantic[:, :3]).cuda().unsqueeze(0).float()", "tensor_to_device",
        "replace", True, "y = torch.from_numpy(point_cloud_with_semantic[:, :3]).npu().unsqueeze(0).float()",
        ".cuda() fails without CUDA"),
      C("d1, d2, idx1, idx2 = chamfer.forward(x, y)", "custom_cuda_extension", "replace", True,
        "idx1 = torch.cat([torch.cdist(xc, y).argmin(-1) for xc in x.split(65536, dim=1)], dim=1)",
        "replace the CUDA chamfer kernel by chunked cdist+argmin (cdist has an NPU kernel)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; the NPU cache is simply not released between scenes"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# TPVFormer
# ----------------------------------------------------------------------------------------------------------------
E("tpv_train", "train.py", "explicit_replacement",
  "TPVFormer train.py (mp.spawn + tcp:// init, custom loop, lovasz + CE)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; spawned workers also need it (imported at module level)"),
      C("gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
        "gpus = torch.npu.device_count()  # npus per node",
        "returns 0 on an NPU host -> world_size 0, init fails"),
      C('backend="nccl", init_method=f"tcp://{ip}:{port}",', "dist_backend", "replace", True,
        'backend="hccl", init_method=f"tcp://{ip}:{port}",', "NCCL backend unavailable on NPU"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "CUDA runtime call fails on NPU host"),
      C("my_model.cuda(),", "tensor_to_device", "replace", True, "my_model.npu(),", ".cuda() fails without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "CUDA runtime query fails on NPU host"),
      C("my_model = my_model.cuda()", "tensor_to_device", "replace", False, "my_model = my_model.npu()",
        "unreachable: distributed is hard-coded True a few lines above"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
        "scaler = torch_npu.npu.amp.GradScaler(enabled=use_amp)",
        "with amp=True the CUDA scaler disables itself on a CUDA-less host (silently no AMP)"),
      C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()",
        ".cuda() fails without CUDA"),
      C("train_grid = train_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
        "train_grid = train_grid.to(torch.float32).npu()", ".cuda() fails without CUDA"),
      C("voxel_label = train_vox_label.type(torch.LongTensor).cuda()", "tensor_to_device", "replace", True,
        "voxel_label = train_vox_label.type(torch.LongTensor).npu()", ".cuda() fails without CUDA"),
      C("train_pt_labs = train_pt_labs.cuda()", "tensor_to_device", "replace", True,
        "train_pt_labs = train_pt_labs.npu()", ".cuda() fails without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch_npu.npu.amp.autocast(enabled=use_amp):",
        "CUDA autocast is disabled (with a warning) on a CUDA-less host: amp=True silently trains in fp32"),
      C("torch.cuda.max_memory_allocated() // (1024 * 1024)", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() // (1024 * 1024)", "log only: returns 0 with CUDA uninitialised"),
      C("imgs = imgs.cuda()  # B, N, 3, H, W", "tensor_to_device", "replace", True,
        "imgs = imgs.npu()  # B, N, 3, H, W", ".cuda() fails without CUDA (validation)"),
      C("val_grid_float = val_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
        "val_grid_float = val_grid.to(torch.float32).npu()", ".cuda() fails without CUDA"),
      C("val_pt_labs = val_pt_labs.cuda()", "tensor_to_device", "replace", True, "val_pt_labs = val_pt_labs.npu()",
        ".cuda() fails without CUDA"),
      C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
        "returns 0 on an NPU host: mp.spawn starts no worker and the script silently does nothing"),
  ])

E("tpv_eval", "eval.py", "explicit_replacement", "TPVFormer eval.py (with latency measurement)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
      "gpus = torch.npu.device_count()  # npus per node", "returns 0 on an NPU host"),
    C('backend="nccl", init_method=f"tcp://{ip}:{port}",', "dist_backend", "replace", True,
      'backend="hccl", init_method=f"tcp://{ip}:{port}",', "NCCL backend unavailable on NPU"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA runtime call fails on NPU host"),
    C("my_model.cuda(),", "tensor_to_device", "replace", True, "my_model.npu(),", ".cuda() fails without CUDA"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "CUDA runtime query fails on NPU host"),
    C("imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", ".cuda() fails without CUDA"),
    C("val_grid_float = val_grid.to(torch.float32).cuda()", "tensor_to_device", "replace", True,
      "val_grid_float = val_grid.to(torch.float32).npu()", ".cuda() fails without CUDA"),
    C("vox_label = val_vox_label.cuda()", "tensor_to_device", "replace", True, "vox_label = val_vox_label.npu()",
      ".cuda() fails without CUDA"),
    C("val_pt_labs = val_pt_labs.cuda()", "tensor_to_device", "replace", True, "val_pt_labs = val_pt_labs.npu()",
      ".cuda() fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "CUDA lazy init fails on NPU host; NPU kernels are async too, so the sync must stay"),
    C("torch.cuda.synchronize()  # wait for the kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the kernels before stopping the clock",
      "CUDA lazy init fails on NPU host"),
    C("ngpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "ngpus = torch.npu.device_count()",
      "returns 0 on an NPU host: no eval worker is spawned"),
])

E("tpv_metric", "utils/metric_util.py", "explicit_replacement", "TPVFormer utils/metric_util.py (MeanIoU)", [
    C("self.total_seen = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_seen = torch.zeros(self.num_classes).npu()",
      "counters are all_reduced over HCCL, so they must live on the NPU; .cuda() fails"),
    C("self.total_correct = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_correct = torch.zeros(self.num_classes).npu()", "as above"),
    C("self.total_positive = torch.zeros(self.num_classes).cuda()", "tensor_to_device", "replace", True,
      "self.total_positive = torch.zeros(self.num_classes).npu()", "as above"),
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "dtype=torch.float64, device='npu')",
      "'cuda' tensor fails; fp64 all_reduce on HCCL not confirmed (int64 would be the fallback)"),
])

E("tpv_data_builder", "builder/data_builder.py", "explicit_replacement",
  "TPVFormer builder/data_builder.py (nuScenes image+point DataLoaders)", [
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "torch 2.1 DataLoader pins via CUDA and silently drops pinning without it: slower H2D, results unchanged"),
      C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "as above (validation loader)"),
  ])

E("tpv_cvha", "tpvformer10/modules/cross_view_hybrid_attention.py", "kernel_rewrite",
  "TPVFormer TPVCrossViewHybridAttention (three TPV planes as MSDA levels)", [
      C("if value.is_cuda:", "device_type", "replace", False, "if value.is_npu:",
        "False on NPU -> grid_sample reference path: correct but slow (performance only)"),
      C("output = MultiScaleDeformableAttnFunction.apply(", "custom_cuda_extension", "replace", False,
        "output = mx_driving.multi_scale_deformable_attn(",
        "mmcv CUDA MSDA kernel; only reached once the guard above is ported (DrivingSDK op, drops im2col_step)"),
  ])

E("tpv_vis", "visualization/vis_frame.py", "device_branch_or_abstraction",
  "TPVFormer visualization/vis_frame.py (mayavi rendering of predicted occupancy)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "if torch.npu.is_available(): return torch.device(f'npu:{gpu_id}')",
        "without an NPU branch the helper silently picks the CPU on an Ascend host"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# FlashOcc / BEVDet-Occ
# ----------------------------------------------------------------------------------------------------------------
E("fo_setup", "setup.py", "kernel_rewrite", "BEVDet/FlashOcc mmdet3d-fork setup.py building bev_pool_v2", [
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '7.0;7.5;8.0;8.6')", "env_var", "removal", False, None,
      "nvcc arch list; meaningless (and harmless) without nvcc"),
    C("=make_cuda_ext(", "custom_cuda_extension", "removal", True, None,
      "drop the bev_pool_v2 CUDAExtension entry (.cu source); without CUDA it degrades to a CppExtension whose "
      "launchers are undefined. The NPU kernel comes from DrivingSDK at runtime"),
])

E("fo_bev_pool", "mmdet3d/ops/bev_pool_v2/bev_pool.py", "kernel_rewrite",
  "BEVDet mmdet3d/ops/bev_pool_v2/bev_pool.py (QuickCumsumCuda + TRT symbolic)", [
      C("from . import bev_pool_v2_ext", "custom_cuda_extension", "replace", True,
        "from mx_driving import bev_pool_v3", "nvcc-built extension cannot be built on an NPU host"),
      C("bev_pool_v2_ext.bev_pool_v2_forward(", "custom_cuda_extension", "removal", False, None,
        "dead once bev_pool_v2() calls the DrivingSDK op"),
      C("bev_pool_v2_ext.bev_pool_v2_backward(", "custom_cuda_extension", "removal", False, None,
        "dead once bev_pool_v2() calls the DrivingSDK op"),
      C("x = QuickCumsumCuda.apply(depth, feat, ranks_depth, ranks_feat, ranks_bev,", "custom_cuda_extension",
        "replace", True, "x = bev_pool_v3(depth, feat, ranks_depth, ranks_feat, ranks_bev, bev_feat_shape)",
        "the only live call of the CUDA kernel"),
      C("x = x.permute(0, 4, 1, 2, 3).contiguous()", "custom_cuda_extension", "removal", False, None,
        "unconfirmed: DrivingSDK docs say bev_pool_v3 already returns (B, C, D, H, W); keeping the permute "
        "would scramble the axes"),
      C("depth = torch.from_numpy(depth).float().cuda()", "tensor_to_device", "replace", True,
        "depth = torch.from_numpy(depth).float().npu()", "self-test: .cuda() fails without CUDA"),
      C("device='cuda').requires_grad_()", "device_type", "replace", True, "device='npu').requires_grad_()",
        "self-test"),
      C("ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().npu()", "self-test"),
      C("ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().npu()", "self-test"),
      C("ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().npu()", "self-test"),
      C("grad_depth = grad_depth.cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", "replace", True,
        "grad_depth = grad_depth.npu().view(1, 1, 2, 2, 2)", "self-test"),
      C("grad_feat = torch.from_numpy(grad_feat).float().cuda().view(1, 1, 2, 2, 2)", "tensor_to_device",
        "replace", True, "grad_feat = torch.from_numpy(grad_feat).float().npu().view(1, 1, 2, 2, 2)", "self-test"),
  ])

E("fo_view_transformer", "mmdet3d/models/necks/view_transformer.py", "explicit_replacement",
  "BEVDet/FlashOcc LSSViewTransformer(+BEVDepth) with bev_pool_v2 and DepthNet", [
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "autocast(enabled=False) around the BCE depth loss must disable the NPU autocast; the CUDA one is a "
        "no-op there and BCE would run in fp16"),
      C("type='DCN',", "custom_cuda_extension", "replace", False,
        "type='DCN',  # requires an NPU build of mmcv's deform_conv (or mx_driving.deform_conv2d)",
        "unconfirmed: depends on the NPU mmcv build registering DCN"),
  ])

E("fo_trt", "tools/convert_bevdet_to_TRT.py", "explicit_replacement",
  "BEVDet/FlashOcc TensorRT deployment script (mmdeploy + bev_pool_v2 TRT plugin)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("import tensorrt as trt", "custom_cuda_extension", "removal", True, None,
        "TensorRT does not exist for Ascend; the engine is built with CANN atc from the ONNX instead"),
      C("from mmdeploy.apis.tensorrt import load_tensorrt_plugin", "custom_cuda_extension", "removal", True, None,
        "TensorRT plugin loader (CUDA plugin library)"),
      C("from mmdeploy.backend.tensorrt.utils import from_onnx", "custom_cuda_extension", "replace", True,
        "import subprocess  # ONNX -> OM with CANN atc", "TensorRT builder import"),
      C("=load_tensorrt_plugin()", "custom_cuda_extension", "removal", True, None, "TensorRT plugin library"),
      C("assert 'bev_pool_v2' in get_plugin_names(), \\", "custom_cuda_extension", "removal", True, None,
        "queries the TensorRT plugin registry"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails without CUDA"),
      C("inputs = [t.cuda() for t in data['img_inputs'][0]]", "tensor_to_device", "replace", True,
        "inputs = [t.npu() for t in data['img_inputs'][0]]", ".cuda() fails without CUDA"),
      C("device='cuda:0',", "device_type", "removal", True, None,
        "--int8 TensorRT calibration branch (CUDA device); atc/AMCT calibrate on their own"),
      C("=from_onnx(", "custom_cuda_extension", "replace", True,
        "subprocess.run(['atc', f'--model={args.work_dir + model_prefix}.onnx', '--framework=5', "
        "f'--output={args.work_dir + model_prefix}', '--soc_version=Ascend310P3'], check=True)",
        "TensorRT engine build -> ATC (ONNX to OM); the bev_pool_v2 custom ONNX op still needs an Ascend "
        "custom op"),
  ])

E("fo_benchmark", "tools/analysis_tools/benchmark.py", "transfer_to_npu",
  "BEVDet/FlashOcc tools/analysis_tools/benchmark.py (FPS / peak memory)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu  # noqa: F401",
        "quick port of a tool script: transfer_to_npu redirects torch.cuda.synchronize/Event/"
        "reset_peak_memory_stats/max_memory_allocated, so those lines stay as they are"),
      C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", True,
        "from mmcv.device.npu import NPUDataParallel",
        "transfer_to_npu does not make DataParallel work (unsupported on NPU)"),
      C("if torch.cuda.get_device_capability()[0] < 7:", "device_capability_check", "replace", True,
        "if (torch.cuda.get_device_capability() or (9, 0))[0] < 7:",
        "under transfer_to_npu get_device_capability returns None (unless TORCH_NPU_DEVICE_CAPABILITY is set): "
        "TypeError on [0] for every fp16 config"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model.npu(), device_ids=[0])",
        "DataParallel unsupported on NPU even under transfer_to_npu"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# OpenOccupancy
# ----------------------------------------------------------------------------------------------------------------
E("oo_run", "run.sh", "explicit_replacement", "OpenOccupancy run.sh (train / eval launcher)", [
    C("=set -x", "import_torch_npu", "npu_only_addition", False, SET_ENV,
      "CANN environment; needed unless the shell or image already exports it"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node NIC choice is silently ignored by HCCL, which then picks its own NIC"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "removal", False, None, "NCCL-only, silently ignored"),
])

E("oo_apis_test", "projects/occ_plugin/occupancy/apis/test.py", "explicit_replacement",
  "OpenOccupancy custom_single_gpu_test / custom_multi_gpu_test (confusion-matrix all_reduce)", [
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on an NPU host; the fragmentation the comment describes may come back (unconfirmed)"),
      C("torch.cuda.empty_cache()  # same reason", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # same reason as in custom_single_gpu_test", "silent no-op on an NPU host"),
      C("SC_metric = torch.from_numpy(np.stack(SC_metric, axis=0)).cuda()", "tensor_to_device", "replace", True,
        "SC_metric = torch.from_numpy(np.stack(SC_metric, axis=0)).npu()",
        "all_reduce over HCCL needs NPU tensors; .cuda() fails"),
      C("SSC_metric = torch.from_numpy(np.stack(SSC_metric, axis=0)).cuda()", "tensor_to_device", "replace", True,
        "SSC_metric = torch.from_numpy(np.stack(SSC_metric, axis=0)).npu()", "as above"),
      C("SSC_metric_fine = torch.from_numpy(np.stack(SSC_metric_fine, axis=0)).cuda()", "tensor_to_device",
        "replace", True, "SSC_metric_fine = torch.from_numpy(np.stack(SSC_metric_fine, axis=0)).npu()",
        "as above"),
  ])

E("oo_occnet", "projects/occ_plugin/occupancy/detectors/occnet.py", "device_branch_or_abstraction",
  "OpenOccupancy OccNet detector (latency recording, voxel-label handling, SC/SSC evaluation)", [
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "only runs when the hard-coded self.record_time debug switch is flipped"),
      C("if not gt_occ.is_cuda:", "device_type", "replace", True, "if gt_occ.device != voxel_feats[0].device:",
        "is_cuda is False for NPU tensors, so the .cuda() below would always run"),
      C("gt_occ = gt_occ.cuda()", "tensor_to_device", "replace", True, "gt_occ = gt_occ.to(voxel_feats[0].device)",
        ".cuda() fails without CUDA"),
  ])

E("oo_sparse_enc", "projects/occ_plugin/occupancy/voxel_encoder/sparse_lidar_enc.py", "kernel_rewrite",
  "OpenOccupancy SparseLiDAREnc (spconv) + a dynamic mean VFE", [
      C("import spconv.pytorch as spconv", "custom_cuda_extension", "replace", True,
        "import mx_driving as spconv  # DrivingSDK: SubMConv3d / SparseConv3d / SparseConvTensor / SparseSequential",
        "spconv-cu1xx is CUDA-only; DrivingSDK exports sparse conv modules with the same names"),
      C("voxel_feats.scatter_reduce_(0, unq_inv[:, None].expand(-1, points.shape[1]), points,",
        "unsupported_op_workaround", "replace", False,
        "voxel_feats = voxel_feats.index_add_(0, unq_inv, points) / torch.bincount(unq_inv)[:, None].to(points.dtype)",
        "scatter_reduce has no NPU kernel (not in the op lists, x in Ascend's API list): CPU fallback, slow"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# OccFormer
# ----------------------------------------------------------------------------------------------------------------
E("of_lss_voxel", "projects/mmdet3d_plugin/occformer/image2bev/ViewTransformerLSSVoxel.py", "kernel_rewrite",
  "OccFormer ViewTransformerLiftSplatShootVoxel (BEVFusion-style bev_pool CUDA op)", [
      C("from mmdet3d.ops.bev_pool import bev_pool", "custom_cuda_extension", "replace", True,
        "from mx_driving import bev_pool", "nvcc-built bev_pool op cannot be built on an NPU host"),
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "autocast(enabled=False) around the BCE depth loss must disable the NPU autocast"),
      C("final = bev_pool(x, geom_feats, B, self.nx[2], self.nx[0], self.nx[1])  # ZXY", "custom_cuda_extension",
        "replace", False, "final = bev_pool(x, geom_feats.int(), B, self.nx[2], self.nx[0], self.nx[1])  # ZXY",
        "unconfirmed: DrivingSDK documents int32 geom_feat (check its column order too)"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# packaging
# ----------------------------------------------------------------------------------------------------------------
E("docker", "docker/Dockerfile", "explicit_replacement",
  "SurroundOcc / OpenOccupancy docker/Dockerfile (pytorch CUDA devel image, mmcv-full cu113 wheels)", [
      C('ARG CUDA="11.3"', "custom_cuda_extension", "replace", False, 'ARG CANN="8.0.0"',
        "only feeds the base-image tag"),
      C('ARG CUDNN="8"', "custom_cuda_extension", "removal", False, None, "only feeds the base-image tag"),
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "custom_cuda_extension", "replace",
        True, "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.10",
        "CUDA devel image; needs a CANN base image (tag illustrative)"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
        "nvcc arch list, harmless without nvcc"),
      C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "env_var", "removal", False, None, "nvcc flags, harmless"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
        "forces the CUDAExtension path in the setup.py files -> nvcc not found, the image build fails"),
      C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
        "torch/torch-npu pair from the compatibility matrix (torch-npu 2.1.0.post10 <-> CANN 8.0.0)"),
      C("RUN pip install --no-cache-dir mmcv-full==1.4.0 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html",
        "custom_cuda_extension", "replace", True,
        "RUN git clone -b v1.7.2 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 "
        "FORCE_NPU=1 pip install --no-cache-dir -e .",
        "cu113 wheel index: the prebuilt _ext links libcudart; NPU build flags are mmcv's (unconfirmed here)"),
      C("RUN pip install --no-cache-dir spconv-cu113==2.1.21", "custom_cuda_extension", "replace", True,
        "RUN git clone https://gitee.com/ascend/DrivingSDK.git /DrivingSDK && cd /DrivingSDK && "
        "bash ci/build.sh --python=3.8 && pip install dist/mx_driving-*.whl",
        "spconv-cu113 is a CUDA-only wheel; sparse conv / MSDA / bev_pool come from DrivingSDK"),
      C("RUN cd tools/generate_occupancy_nuscenes/chamfer_dist && python setup.py install",
        "custom_cuda_extension", "removal", True, None, "nvcc-only chamfer kernel; GT script ported to cdist"),
  ])

E("reqs", "requirements.txt", "explicit_replacement", "OpenOccupancy/SurroundOcc requirements.txt (cu113 pins)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "custom_cuda_extension", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build (x86) / plain PyPI torch (aarch64)"),
    C("torch==1.10.0+cu113", "custom_cuda_extension", "replace", True, "torch==2.1.0",
      "CUDA build of torch; torch-npu needs the exact matching CPU torch version"),
    C("torchvision==0.11.0+cu113", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("ninja==1.11.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch_npu pin (same torch version, CANN 8.0.0 line of the matrix)"),
    C("=mmcv-full==1.4.0", "custom_cuda_extension", "replace", False,
      "mmcv-full==1.7.2  # built from source on the NPU host (MMCV_WITH_OPS=1)",
      "unconfirmed in knowledge: NPU ops in mmcv appear only in later 1.x releases"),
    C("spconv-cu113==2.1.21", "custom_cuda_extension", "removal", True, None,
      "CUDA-only wheel, not installable on an Ascend host; DrivingSDK replaces it"),
])

E("env_yml", "environment.yml", "explicit_replacement", "OccFormer-style conda environment.yml (cudatoolkit 11.3)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA channel, harmless"),
    C("=- pytorch=1.10.1", "custom_cuda_extension", "replace", True, "- pytorch=2.1.0",
      "torch-npu must pair with exactly torch 2.1.0"),
    C("=- torchvision=0.11.2", "custom_cuda_extension", "replace", True, "- torchvision=0.16.0",
      "must match torch 2.1.0"),
    C("=- cudatoolkit=11.3", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime from conda: useless on Ascend; unavailable for aarch64 (unconfirmed)"),
    C("=- cudnn", "custom_cuda_extension", "removal", False, None, "CUDA-only library"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10", "the torch_npu pin"),
    C("- --find-links https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html",
      "custom_cuda_extension", "removal", True, None, "cu113 mmcv-full wheels link libcudart"),
    C("=- mmcv-full==1.4.0", "custom_cuda_extension", "replace", False,
      "- mmcv-full==1.7.2  # build from source with MMCV_WITH_OPS=1 on the NPU host",
      "unconfirmed in knowledge: NPU ops in mmcv appear only in later 1.x releases"),
])
