"""Labels for probe161: camera-only BEV perception (BEVDepth / BEVDet / BEVFormer / StreamPETR / UniAD).

Kind conventions used here (see README "How the labels were chosen"):
  * CUDA builds of torch / the CUDA runtime in packaging files (base image, +cuXXX wheels,
    cudatoolkit, CUDA wheel index for torch)  -> torch_cuda_api
  * prebuilt or source-built CUDA op packages (mmcv-full cu111 wheels, nvcc extensions,
    their call sites)                                           -> custom_cuda_extension
  * flash-attn                                                  -> attention_kernel
  * torch-npu pin / `import torch_npu` / sourcing CANN set_env.sh -> import_torch_npu
  * mmcv MMDataParallel / MMDistributedDataParallel wrappers    -> distributed_framework
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------- BEVDepth

E("bevdepth_setup", "setup.py", "kernel_rewrite",
  "BEVDepth setup.py building the voxel-pooling CUDA extensions (make_cuda_ext)", [
      C("=CUDAExtension)", "custom_cuda_extension", "replace", False,
        "CUDAExtension)  # plus: from torch_npu.utils.cpp_extension import NpuExtension",
        "import alone still works on an NPU host; only needed so the NPU branch can build an NpuExtension"),
      C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "add_branch", True,
        "if os.getenv('FORCE_NPU', '0') == '1':  # extension = NpuExtension, Ascend C sources",
        "on an NPU host this falls to the CppExtension branch and builds the .cpp wrapper without its .cu launcher "
        "(undefined symbol at import); nvcc path does not exist on Ascend"),
      C("sources_cuda=['src/voxel_pooling_train_forward_cuda.cu'],", "custom_cuda_extension", "replace", True,
        "sources_npu=['src/voxel_pooling_train_forward_ascendc.cpp'],",
        ".cu kernel cannot be compiled for Ascend; rewrite in Ascend C (or drop the ext and use DrivingSDK's voxel pooling op)"),
      C("sources_cuda=['src/voxel_pooling_inference_forward_cuda.cu'],", "custom_cuda_extension", "replace", True,
        "sources_npu=['src/voxel_pooling_inference_forward_ascendc.cpp'],",
        "same for the inference kernel"),
  ])

E("bevdepth_requirements", "requirements.txt", "explicit_replacement",
  "BEVDepth requirements.txt pinning the cu111 torch/mmcv-full wheels", [
      C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu pairs with the plain CPU torch wheel on x86 (aarch64 uses PyPI torch)"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", "removal", True,
        None,
        "prebuilt mmcv-full wheels here are linked against CUDA 11.1 (libcudart) and fail to import on an NPU host; "
        "mmcv-full has to be built from source there"),
      C("torch==1.9.0+cu111", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post17",
        "add the torch-npu pin after torch; the torch pin on this line must also become torch==2.1.0 "
        "(no torch_npu exists for 1.9, wheel version must equal the torch version)"),
      C("torchvision==0.10.0+cu111", "torch_cuda_api", "replace", True,
        "torchvision==0.16.0",
        "CUDA build tied to torch 1.9; must match the torch 2.1 that torch_npu needs"),
      C("mmcv-full==1.5.2", "custom_cuda_extension", "replace", False,
        "mmcv-full==1.7.2  # build from source with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "unconfirmed: mmcv's NPU device support (mmcv.device.npu, NPU op kernels) is not covered by the knowledge base"),
  ])

E("bevdepth_vp_train", "bevdepth/ops/voxel_pooling_train/voxel_pooling_train.py", "kernel_rewrite",
  "BEVDepth VoxelPoolingTrain autograd Function over the nvcc-built voxel_pooling_train_ext", [
      C("from . import voxel_pooling_train_ext", "custom_cuda_extension", "replace", True,
        "import mx_driving",
        "the CUDA extension is not built on Ascend; DrivingSDK (mx_driving) provides NPU ops for BEV pooling"),
      C("voxel_pooling_train_ext.voxel_pooling_train_forward_wrapper(", "custom_cuda_extension", "replace", True,
        "output_features, pos_memo = mx_driving._C.voxel_pooling_train(",
        "CUDA kernel call site; the pure-torch backward below needs no change"),
  ])

E("bevdepth_lss_fpn", "bevdepth/layers/backbones/base_lss_fpn.py", "explicit_replacement",
  "BEVDepth BaseLSSFPN / DepthNet (ASPP, SE, DCN) with torch.cuda.amp autocast and voxel pooling", [
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "@autocast(False) on DepthAggregation must switch off the NPU autocast region; the CUDA-typed autocast only "
        "toggles CUDA autocast state, so under NPU fp16 training it silently runs in fp16"),
      C("build_conv_layer(cfg=dict(", "unsupported_op_workaround", "replace", True,
        "ModulatedDeformConv(mid_channels, mid_channels, kernel_size=3, padding=1, deformable_groups=4),  # torch_npu.contrib.module",
        "mmcv 1.x DCN registers CUDA (and CPU) kernels only, so NPU tensors fail at dispatch; NPU options are the "
        "torch_npu.contrib DCNv2 module or a DrivingSDK deformable conv (DCNv2 adds the modulation mask, so weights differ)"),
      C("self.voxel_num.cuda())", "tensor_to_device", "replace", True,
        "self.voxel_num)",
        "voxel_num is a registered buffer and already on the NPU; .cuda() fails on an NPU host"),
      C("self.voxel_num.cuda(),", "tensor_to_device", "replace", True,
        "self.voxel_num,",
        "same, inference path"),
  ])

E("bevdepth_head", "bevdepth/layers/heads/bev_depth_head.py", "explicit_replacement",
  "BEVDepth BEVDepthHead (CenterPoint head) building targets with device='cuda'", [
      C("from torch.cuda.amp import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "@autocast(False) on the BEV head forward must disable NPU autocast; CUDA autocast is a no-op there"),
      C("feature_map_size[0]), device='cuda')", "device_type", "replace", True,
        "feature_map_size[0]), device=gt_bboxes_3d.device)",
        "hard-coded CUDA device for the heatmap target"),
      C("=dtype=torch.float32, device='cuda')", "device_type", "replace", True,
        "dtype=torch.float32, device=gt_bboxes_3d.device)",
        "anno_box target on CUDA"),
      C("ind = gt_labels_3d.new_zeros((max_objs), dtype=torch.int64, device='cuda')", "device_type", "replace", True,
        "ind = gt_labels_3d.new_zeros((max_objs), dtype=torch.int64, device=gt_labels_3d.device)",
        "index target on CUDA"),
      C("mask = gt_bboxes_3d.new_zeros((max_objs), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "mask = gt_bboxes_3d.new_zeros((max_objs), dtype=torch.uint8, device=gt_bboxes_3d.device)",
        "mask target on CUDA"),
      C("=device='cuda')", "device_type", "replace", True,
        "device=gt_bboxes_3d.device)",
        "gaussian centre tensor on CUDA"),
      C("center - torch.tensor([x, y], device='cuda'),", "device_type", "replace", True,
        "center - torch.tensor([x, y], device=center.device),",
        "velocity branch still hard-codes CUDA (the else branch already uses center.device)"),
  ])

E("bevdepth_base_exp", "bevdepth/exps/nuscenes/base_exp.py", "explicit_replacement",
  "BEVDepth LightningModule (training_step with depth loss under autocast(False), eval_step)", [
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "the depth BCE loss is wrapped in autocast(enabled=False) to keep it fp32; with the CUDA variant the NPU "
        "autocast region stays on under 16-bit training"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "on an NPU host the guard is simply False and the block is skipped; Lightning has already moved the batch to the "
        "module's device (unconfirmed for an NPU Lightning setup), so this is hygiene, not a failure"),
      C("mats[key] = value.cuda()", "tensor_to_device", "replace", False,
        "mats[key] = value.npu()",
        "inside the CUDA-availability guard: never reached on an NPU host unless the guard is ported"),
      C("=sweep_imgs = sweep_imgs.cuda()", "tensor_to_device", "replace", False,
        "sweep_imgs = sweep_imgs.npu()",
        "guarded, see above"),
      C("gt_boxes = [gt_box.cuda() for gt_box in gt_boxes]", "tensor_to_device", "replace", False,
        "gt_boxes = [gt_box.npu() for gt_box in gt_boxes]",
        "guarded, see above"),
      C("gt_labels = [gt_label.cuda() for gt_label in gt_labels]", "tensor_to_device", "replace", False,
        "gt_labels = [gt_label.npu() for gt_label in gt_labels]",
        "guarded, see above"),
      C("depth_loss = self.get_depth_loss(depth_labels.cuda(), depth_preds)", "tensor_to_device", "replace", True,
        "depth_loss = self.get_depth_loss(depth_labels.to(depth_preds.device), depth_preds)",
        "not guarded: .cuda() raises on an NPU host every training step"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "use_npu = torch.npu.is_available()",
        "same guard pattern in eval_step; False on NPU, block skipped"),
      C("mats = {key: value.cuda() for key, value in mats.items()}", "tensor_to_device", "replace", False,
        "mats = {key: value.npu() for key, value in mats.items()}",
        "guarded"),
      C("sweep_imgs = sweep_imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", False,
        "sweep_imgs = sweep_imgs.npu(non_blocking=True)",
        "guarded"),
  ])

E("bevdepth_base_cli", "bevdepth/exps/base_cli.py", "device_branch_or_abstraction",
  "BEVDepth run_cli(): pytorch-lightning Trainer defaults (gpus, ddp, precision=16)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry-side import; torch_npu 2.1 (what these pins can reach) has no backend autoload"),
      C("visible = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", "replace", False,
        "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
        "falls through to device_count() when unset, which already honours ASCEND_RT_VISIBLE_DEVICES once ported; "
        "only a stale CUDA_VISIBLE_DEVICES would mislead it"),
      C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "return torch.npu.device_count()",
        "returns 0 on an NPU host, so gpus=0 and the run silently goes to CPU / misconfigures the trainer"),
      C("accelerator='gpu',", "device_type", "replace", True,
        "accelerator='npu',",
        "Lightning's GPU accelerator requires CUDA and refuses to start; the NPU accelerator name depends on the Lightning "
        "NPU integration used (not in the knowledge base)"),
      C("strategy='ddp',", "dist_backend", "replace", False,
        "strategy=DDPStrategy(process_group_backend='hccl'),",
        "unconfirmed: Lightning only picks nccl for CUDA root devices; the process-group backend must be HCCL on NPU"),
      C("gpus=_default_num_gpus(),", "device_type", "replace", True,
        "devices=_default_num_npus(),",
        "`gpus=` means CUDA devices to Lightning and conflicts with a non-GPU accelerator"),
      C("precision=16,", "amp", "replace", False,
        "precision=16,  # needs an NPU-aware precision plugin (torch.autocast('npu') + NPU GradScaler)",
        "unconfirmed: Lightning's native 16-bit plugin drives torch.cuda.amp; behaviour with an NPU accelerator depends on "
        "the integration"),
      C("if torch.cuda.is_available() and trainer.global_rank == 0:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and trainer.global_rank == 0:",
        "report-only; False on NPU so the peak-memory print is silently skipped"),
      C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated() / 1024**3",
        "only reached once the guard above is ported"),
  ])

E("bevdepth_ema", "bevdepth/callbacks/ema.py", "explicit_replacement",
  "BEVDepth EMACallback (pytorch-lightning Callback keeping a ModelEMA copy)", [
      C("trainer.ema_model = ModelEMA(trainer.model.module.module.model.cuda(),", "tensor_to_device", "replace", True,
        "trainer.ema_model = ModelEMA(trainer.model.module.module.model.npu(),",
        "explicit .cuda() on the wrapped model at fit start fails on an NPU host"),
  ])

# --------------------------------------------------------------------------- BEVDet

E("bevdet_bev_pool", "mmdet3d/ops/bev_pool_v2/bev_pool.py", "kernel_rewrite",
  "BEVDet BEVPoolv2 QuickCumsumCuda autograd Function + TRT export + self-test", [
      C("from . import bev_pool_v2_ext", "custom_cuda_extension", "replace", True,
        "import mx_driving",
        "nvcc-built bev_pool_v2_ext does not exist on Ascend; DrivingSDK ships an NPU bev_pool_v2"),
      C("bev_pool_v2_ext.bev_pool_v2_forward(", "custom_cuda_extension", "replace", True,
        "out = mx_driving._C.npu_bev_pool_v2(",
        "CUDA kernel call (forward)"),
      C("bev_pool_v2_ext.bev_pool_v2_backward(", "custom_cuda_extension", "replace", True,
        "depth_grad, feat_grad = mx_driving._C.npu_bev_pool_v2_backward(",
        "CUDA kernel call (backward)"),
      C("depth = torch.from_numpy(depth).float().cuda()", "tensor_to_device", "replace", True,
        "depth = torch.from_numpy(depth).float().npu()",
        "self-test tensors on CUDA"),
      C("device='cuda').requires_grad_()", "device_type", "replace", True,
        "device='npu').requires_grad_()",
        "self-test"),
      C("ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_depth = torch.from_numpy(np.array([0, 4, 1, 6])).int().npu()",
        "self-test"),
      C("ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_feat = torch.from_numpy(np.array([0, 0, 1, 2])).int().npu()",
        "self-test"),
      C("ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().cuda()", "tensor_to_device", "replace", True,
        "ranks_bev = torch.from_numpy(np.array([0, 0, 1, 1])).int().npu()",
        "self-test"),
      C("grad_depth = grad_depth.cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", "replace", True,
        "grad_depth = grad_depth.npu().view(1, 1, 2, 2, 2)",
        "self-test"),
      C("grad_feat = torch.from_numpy(grad_feat).float().cuda().view(1, 1, 2, 2, 2)", "tensor_to_device", "replace", True,
        "grad_feat = torch.from_numpy(grad_feat).float().npu().view(1, 1, 2, 2, 2)",
        "self-test"),
  ])

E("bevdet_view_tf", "mmdet3d/models/necks/view_transformer.py", "explicit_replacement",
  "BEVDet LSSViewTransformer / LSSViewTransformerBEVDepth with DepthNet and bev_pool_v2", [
      C("from torch.cuda.amp.autocast_mode import autocast", "amp", "replace", False,
        "from torch_npu.npu.amp import autocast",
        "belt-and-braces here: @force_fp32 already casts the loss inputs; the CUDA autocast(False) is a no-op on NPU, "
        "unconfirmed whether BCE then runs under NPU autocast through mmcv's fp16 hooks"),
      C("=build_conv_layer(", "unsupported_op_workaround", "replace", False,
        "ModulatedDeformConv(mid_channels, mid_channels, kernel_size=3, padding=1, deformable_groups=4))",
        "mmcv DCN has no NPU kernel, but this branch only runs with use_dcn=True; the shipped configs pass use_dcn=False"),
  ])

E("bevdet_runtime_cfg", "configs/_base_/default_runtime.py", "explicit_replacement",
  "mmdet3d/BEVDet configs/_base_/default_runtime.py", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
        "dist_params = dict(backend='hccl')",
        "init_dist(launcher, **cfg.dist_params) passes NCCL to init_process_group; NCCL does not exist on Ascend"),
  ])

E("bevdet_cfg", "configs/bevdet/bevdet-r50-4d-depth-cbgs.py", "explicit_replacement",
  "BEVDet4D-depth R50 CBGS config (mmdet3d style, fp16 dynamic loss scale)", [])

E("bevdet_train", "tools/train.py", "explicit_replacement",
  "mmdet3d/BEVDet tools/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script; torch_npu must be imported before the NPU device / HCCL backend are usable with torch 2.1"),
  ])

E("bevdet_test", "tools/test.py", "explicit_replacement",
  "mmdet3d/BEVDet tools/test.py (MMDataParallel / MMDistributedDataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", False,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "import itself works; needed for the replacements below (mmcv NPU wrappers unconfirmed in the knowledge base)"),
      C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model, device_ids=cfg.gpu_ids)",
        "MMDataParallel scatters inputs with CUDA streams and builds on nn.DataParallel, which is unsupported on NPU"),
      C("model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(",
        "MMDistributedDataParallel scatters to CUDA device ids"),
      C("=model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),",
        ".cuda() on the model"),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],",
        "CUDA current device query"),
  ])

E("bevdet_dist_train", "tools/dist_train.sh", "explicit_replacement",
  "mmdet3d/BEVDet tools/dist_train.sh (torch.distributed.launch)", [
      C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "without the CANN environment torch_npu fails to load libascendcl/libhccl"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so a card subset chosen this way is silently not applied"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False,
        None,
        "RTX 3090 NVLink workaround; ignored by HCCL"),
  ])

E("bevdet_benchmark", "tools/analysis_tools/benchmark.py", "explicit_replacement",
  "mmdet3d/BEVDet tools/analysis_tools/benchmark.py (FPS with torch.cuda.synchronize)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "entry script"),
      C("from mmcv.parallel import MMDataParallel", "distributed_framework", "replace", False,
        "from mmcv.device.npu import NPUDataParallel",
        "import only"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model, device_ids=[0])",
        "MMDataParallel scatters to CUDA device 0"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "timing sync before the forward"),
      C("torch.cuda.synchronize()  # wait for the kernels before reading the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the kernels before reading the clock",
        "timing sync after the forward; NPU ops are asynchronous too, so the sync must stay"),
      C("peak_mb = torch.cuda.max_memory_allocated() / 1024 / 1024", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated() / 1024 / 1024",
        "--mem report"),
      C("f'({torch.cuda.get_device_name(0)})')", "torch_cuda_api", "replace", True,
        "f'({torch.npu.get_device_name(0)})')",
        "--mem report"),
  ])

# --------------------------------------------------------------------------- BEVFormer

E("bevformer_msda_fn", "projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  "kernel_rewrite",
  "BEVFormer MultiScaleDeformableAttnFunction_fp32/_fp16 over mmcv's ms_deform_attn CUDA kernels", [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "cast_inputs=torch.float32 only fires under CUDA autocast; matters once the Function is reached on NPU, which the "
        "attention modules' is_cuda guard prevents today"),
      C("=ext_module = ext_loader.load_ext(", "custom_cuda_extension", "replace", False,
        "import mx_driving",
        "loads from a source-built mmcv; swap together with the call sites"),
      C("output = ext_module.ms_deform_attn_forward(value, value_spatial_shapes", "custom_cuda_extension", "replace", False,
        "output = mx_driving.multi_scale_deformable_attn(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights)",
        "fp16 Function is dead code: both dtype branches in the attention modules pick the fp32 Function"),
      C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes", "custom_cuda_extension", "replace", False,
        "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving.multi_scale_deformable_attn_backward(value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights, grad_output.contiguous())",
        "dead fp16 path"),
      C("=output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "replace", False,
        "output = mx_driving.multi_scale_deformable_attn(",
        "CUDA-only kernel in mmcv 1.x; reached only once the callers' torch.cuda/is_cuda guard gets an NPU branch "
        "(performance port, the PyTorch fallback is used until then)"),
      C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "replace", False,
        "grad_value, grad_sampling_loc, grad_attn_weight = mx_driving.multi_scale_deformable_attn_backward(",
        "same, backward"),
  ])

E("bevformer_sca", "projects/mmdet3d_plugin/bevformer/modules/spatial_cross_attention.py",
  "device_branch_or_abstraction",
  "BEVFormer SpatialCrossAttention / MSDeformableAttention3D", [
      C("if torch.cuda.is_available() and value.is_cuda:", "npu_fused_op", "add_branch", False,
        "elif value.device.type == 'npu':  output = mx_driving.multi_scale_deformable_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)",
        "guard is False on NPU, so MSDA silently takes mmcv's grid_sample fallback (grid_sampler_2d has an NPU kernel): "
        "correct but slow and memory-hungry; an NPU fused-op branch is a performance port"),
  ])

E("bevformer_tsa", "projects/mmdet3d_plugin/bevformer/modules/temporal_self_attention.py",
  "device_branch_or_abstraction",
  "BEVFormer TemporalSelfAttention", [
      C("if torch.cuda.is_available() and value.is_cuda:", "npu_fused_op", "add_branch", False,
        "elif value.device.type == 'npu':  output = mx_driving.multi_scale_deformable_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)",
        "same pattern as SCA: falls back to the PyTorch implementation on NPU; fused op is performance only"),
  ])

E("bevformer_encoder", "projects/mmdet3d_plugin/bevformer/modules/encoder.py", "explicit_replacement",
  "BEVFormerEncoder (reference points, point_sampling with tf32 switched off)", [
      C("def get_reference_points(H, W, Z=8, num_points_in_pillar=4, dim='3d', bs=1, device='cuda', dtype=torch.float):",
        "device_type", "replace", False,
        "def get_reference_points(H, W, Z=8, num_points_in_pillar=4, dim='3d', bs=1, device='npu', dtype=torch.float):",
        "default never used: both callers pass device=bev_query.device"),
  ])

E("bevformer_mmdet_train", "projects/mmdet3d_plugin/bevformer/apis/mmdet_train.py", "explicit_replacement",
  "BEVFormer custom_train_detector (MMDistributedDataParallel, Fp16OptimizerHook)", [
      C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace", False,
        "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
        "import only"),
      C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDistributedDataParallel(",
        "MMDistributedDataParallel scatters batches to CUDA device ids"),
      C("=model.cuda(),", "tensor_to_device", "replace", True,
        "model.npu(),",
        ".cuda() on the model"),
      C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],",
        "CUDA current device"),
      C("eval_model = MMDistributedDataParallel(", "distributed_framework", "replace", True,
        "eval_model = NPUDistributedDataParallel(",
        "same for the EMA/eval copy"),
      C("eval_model.cuda(), device_ids=[torch.cuda.current_device()],", "tensor_to_device", "replace", True,
        "eval_model.npu(), device_ids=[torch.npu.current_device()],",
        ".cuda() and torch.cuda.current_device() on one line"),
      C("=model = MMDataParallel(", "distributed_framework", "replace", True,
        "model = NPUDataParallel(",
        "non-distributed path (no --launcher): DataParallel-based wrapper, CUDA scatter"),
      C("=model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        ".cuda(idx) on the model"),
      C("eval_model = MMDataParallel(", "distributed_framework", "replace", True,
        "eval_model = NPUDataParallel(",
        "non-distributed eval copy"),
      C("eval_model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "eval_model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)",
        ".cuda(idx) on the eval copy"),
  ])

E("bevformer_test_api", "projects/mmdet3d_plugin/bevformer/apis/test.py", "explicit_replacement",
  "BEVFormer custom_multi_gpu_test / collect_results_cpu/gpu with latency logging", [
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "latency logging (log_latency=True)"),
      C("torch.cuda.synchronize(torch.cuda.current_device())", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(torch.npu.current_device())",
        "latency logging"),
      C("=device='cuda')", "device_type", "replace", True,
        "device='npu')",
        "tmpdir name is broadcast through a CUDA tensor; the default (gpu_collect=False) path hits this on every multi-card test"),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')",
        "rank-0 side of the same broadcast"),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8).cuda()", "tensor_to_device", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8).npu()",
        "--gpu-collect path"),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')",
        "--gpu-collect path"),
  ])

E("bevformer_cfg", "projects/configs/bevformer_fp16/bevformer_tiny_fp16.py", "explicit_replacement",
  "BEVFormer-tiny fp16 config (mmdet3d style)", [
      C("fp16 = dict(loss_scale=512.)", "amp", "replace", False,
        "fp16 = dict(loss_scale='dynamic')",
        "unconfirmed: a static scale tuned on V100 may overflow/underflow differently on NPU; dynamic scaling is the safer default"),
      C("dist_params = dict(backend='nccl', port=29503)", "dist_backend", "replace", True,
        "dist_params = dict(backend='hccl', port=29503)",
        "NCCL backend for init_dist"),
  ])

# --------------------------------------------------------------------------- StreamPETR

E("streampetr_attention", "projects/mmdet3d_plugin/models/utils/attention.py", "explicit_replacement",
  "StreamPETR FlashAttention / FlashMHA / PETRMultiheadFlashAttention over flash-attn 0.2", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu",
        "the ported attention calls torch_npu.npu_fusion_attention"),
      C("from flash_attn.flash_attn_interface import flash_attn_unpadded_kvpacked_func", "attention_kernel", "removal", True,
        None,
        "flash-attn cannot be installed on an NPU host: ImportError at module import"),
      C("from flash_attn.bert_padding import unpad_input, pad_input, index_first_axis", "attention_kernel", "removal", True,
        None,
        "same package"),
      C("assert q.is_cuda and kv.is_cuda", "device_type", "replace", True,
        "assert q.device.type == 'npu' and kv.device.type == 'npu'",
        "is_cuda is False for NPU tensors, so the assert fires"),
      C("=output = flash_attn_unpadded_kvpacked_func(", "attention_kernel", "replace", True,
        "output = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], q.shape[-2], 'TND', scale=self.softmax_scale, keep_prob=1. - (self.dropout_p if self.training else 0.), actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
        "varlen flash-attn -> npu_fusion_attention TND layout with cumulative lengths"),
      C("x_unpad, indices, cu_seqlens_k, max_sk = unpad_input(x, key_padding_mask)", "attention_kernel", "replace", False,
        "x_unpad, indices, cu_seqlens_k, max_sk = _unpad_input(x, key_padding_mask)  # vendored torch helper",
        "dead branch: PETRMultiheadFlashAttention always passes key_padding_mask=None"),
      C("output_unpad = flash_attn_unpadded_kvpacked_func(", "attention_kernel", "replace", False,
        "output_unpad = torch_npu.npu_fusion_attention(q, x_unpad[:, 0], x_unpad[:, 1], nheads, 'TND', scale=self.softmax_scale, actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist())[0]",
        "same dead masked branch"),
      C("self.attn = FlashMHA(embed_dims, num_heads, attn_drop, dtype=torch.float16, device='cuda',", "device_type", "replace", False,
        "self.attn = FlashMHA(embed_dims, num_heads, attn_drop, dtype=torch.float16,",
        "device/dtype reach FlashAttention.__init__ and are ignored there: silent no-op"),
  ])

E("streampetr_grid_mask", "projects/mmdet3d_plugin/models/utils/grid_mask.py", "explicit_replacement",
  "PETR/StreamPETR GridMask augmentation module", [
      C("mask = torch.from_numpy(mask.copy()).to(x.dtype).cuda()", "tensor_to_device", "replace", True,
        "mask = torch.from_numpy(mask.copy()).to(x.dtype).to(x.device)",
        "runs every training step when use_grid_mask=True"),
      C("offset = torch.from_numpy(2 * (np.random.rand(h,w) - 0.5)).to(x.dtype).cuda()", "tensor_to_device", "replace", False,
        "offset = torch.from_numpy(2 * (np.random.rand(h,w) - 0.5)).to(x.dtype).to(x.device)",
        "only with offset=True; every caller builds GridMask(..., offset=False, ...)"),
  ])

E("streampetr_pos_enc", "projects/mmdet3d_plugin/models/utils/positional_encoding.py", "explicit_replacement",
  "PETR/StreamPETR positional encodings (pos2posemb3d, nerf encoding, SinePositionalEncoding3D)", [
      C("masks = torch.zeros(1, 6, 16, 44, dtype=torch.bool).cuda()", "tensor_to_device", "replace", True,
        "masks = torch.zeros(1, 6, 16, 44, dtype=torch.bool).npu()",
        "__main__ sanity check; the library functions are device-agnostic"),
  ])

E("streampetr_head", "projects/mmdet3d_plugin/models/dense_heads/streampetr_head.py", "explicit_replacement",
  "StreamPETRHead with memory queue, temporal alignment and query denoising", [
      C("rec_timestamp = torch.zeros_like(rec_score, dtype=torch.float64)", "unsupported_op_workaround", "replace", False,
        "rec_timestamp = torch.zeros_like(rec_score, dtype=torch.float32)",
        "unconfirmed: fp64 memory timestamps; Ascend's 2.7.1 list gives zeros_like without fp64 and fp64 is a known NPU "
        "weak spot (CPU fallback / cast); relative timestamps fit in fp32"),
      C("known = [(torch.ones_like(t)).cuda() for t in labels]", "tensor_to_device", "replace", True,
        "known = [(torch.ones_like(t)).to(reference_points.device) for t in labels]",
        "query-denoising path, hit every training step with with_dn=True"),
  ])

E("streampetr_detector", "projects/mmdet3d_plugin/models/detectors/petr3d.py", "explicit_replacement",
  "StreamPETR Petr3D detector (streaming video training, scene-token memory reset)", [])

E("streampetr_docker", "docker/Dockerfile", "explicit_replacement",
  "StreamPETR/PETR docker image on nvidia/cuda with cu111 wheels and flash-attn", [
      C("FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image has no CANN toolkit / driver libraries for torch_npu"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False,
        None,
        "nvcc arch list; ignored without nvcc"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False,
        None,
        "nvcc flags; ignored"),
      C("ENV FORCE_CUDA=\"1\"", "env_var", "removal", True,
        None,
        "forces mmdet3d's setup.py into CUDAExtension, which aborts without CUDA_HOME/nvcc during `pip install -e .`"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read by the NVIDIA container runtime only; the Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (usually set at docker run)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False,
        None,
        "NVIDIA runtime only"),
      C("RUN pip install torch==1.9.0+cu111 torchvision==0.10.0+cu111 \\", "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 \\",
        "CUDA torch build; torch_npu needs a matching torch (2.1.0) and its own wheel"),
      C("-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; CPU wheels are the documented pairing on x86"),
      C("RUN pip install mmcv-full==1.6.0 \\", "custom_cuda_extension", "replace", False,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2 \\",
        "unconfirmed: mmcv NPU build switches are not in the knowledge base"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", "removal", True,
        None,
        "prebuilt mmcv-full wheel linked against CUDA 11.1; import fails on an NPU host"),
      C("RUN pip install flash-attn==0.2.2", "attention_kernel", "removal", True,
        None,
        "flash-attn builds CUDA kernels at install time and cannot be installed on Ascend"),
  ])

# --------------------------------------------------------------------------- UniAD

E("uniad_track", "projects/mmdet3d_plugin/uniad/detectors/uniad_track.py", "explicit_replacement",
  "UniAD UniADTrack (track queries, memory bank, velocity update of reference points)", [
      C("g2l_r = torch.linalg.inv(l2g_r2).type(torch.float)", "unsupported_op_workaround", "replace", False,
        "g2l_r = torch.inverse(l2g_r2.type(torch.float))",
        "linalg_inv(_ex) has no NPU kernel in the native op lists (inverse does) -> CPU fallback; input is also still fp64"),
      C("l2g_r_mat[0][i].cuda(),", "tensor_to_device", "replace", True,
        "l2g_r_mat[0][i].to(img.device),",
        "ego pose matrices moved with .cuda() every training frame"),
      C("l2g_t[0][i].cuda(),", "tensor_to_device", "replace", True,
        "l2g_t[0][i].to(img.device),",
        "same"),
  ])

E("uniad_dist_train", "tools/uniad_dist_train.sh", "explicit_replacement",
  "UniAD tools/uniad_dist_train.sh (multi-node torch.distributed.launch with NCCL env)", [
      C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment for torch_npu / HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "HCCL ignores NCCL_SOCKET_IFNAME; the NIC pinning is silently lost and a wrongly chosen NIC breaks multi-node init"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False,
        None,
        "no HCCL equivalent (HCCL uses RoCE on the NPU NICs); ignored"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "debug logging only"),
  ])

E("uniad_env", "environment.yml", "explicit_replacement",
  "UniAD conda environment.yml (cudatoolkit 11.1, cu111 mmcv-full index, NVML tools)", [
      C("=- nvidia", "torch_cuda_api", "removal", False,
        None,
        "NVIDIA conda channel; harmless but pointless"),
      C("- cudatoolkit=11.1", "torch_cuda_api", "removal", False,
        None,
        "CUDA runtime libraries; unused on NPU"),
      C("- cudnn=8.0", "torch_cuda_api", "removal", False,
        None,
        "unused on NPU"),
      C("- pytorch=1.9.1", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0",
        "no torch_npu release for torch 1.9; the pytorch channel build here is the CUDA one"),
      C("- torchvision=0.10.1", "torch_cuda_api", "replace", True,
        "- torchvision=0.16.0",
        "must match torch 2.1"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - torch-npu==2.1.0.post17",
        "torch-npu pin in the pip section"),
      C("- --extra-index-url https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "custom_cuda_extension", "removal", True,
        None,
        "CUDA-linked mmcv-full wheels"),
      C("- mmcv-full==1.4.0", "custom_cuda_extension", "replace", False,
        "- mmcv-full==1.7.2",
        "unconfirmed: mmcv NPU support only in later 1.x releases"),
      C("- pynvml", "torch_cuda_api", "removal", False,
        None,
        "NVML bindings; nvmlInit fails without an NVIDIA driver, but nothing in the training path imports it"),
      C("- gpustat", "torch_cuda_api", "removal", False,
        None,
        "NVIDIA monitoring tool; use npu-smi"),
  ])
