"""Labels for probe364 (panoptic segmentation: Panoptic-DeepLab, UPSNet, Panoptic FCN, kMaX-DeepLab, OneFormer).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port).
required=True: with every other labelled line already ported, leaving this one would fail, compute
something wrong or silently do the wrong thing on an NPU host.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("entry point: registers the 'npu' device/backend; mandatory before torch_npu 2.5.1 "
                   "(autoload afterwards, still recommended); the projects pin older torch")

# ----------------------------------------------------------------------------------------------
# Panoptic-DeepLab (bowenc0221/panoptic-deeplab): standalone yacs code base, torch.distributed.launch
# ----------------------------------------------------------------------------------------------
E("pdl_train", "tools/train_net.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab tools/train_net.py (launch-per-rank DDP training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda:{}'.format(args.local_rank))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.local_rank))",
      "module-wide device; model.to(device) and to_cuda(data, device) follow it"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "bind this rank to its NPU before init_process_group"),
    C('backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://",', "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("model_weights = torch.load(config.MODEL.WEIGHTS)", "device_type", "replace", True,
      "model_weights = torch.load(config.MODEL.WEIGHTS, map_location='cpu')",
      "MODEL.WEIGHTS points at model-zoo checkpoints saved from GPU runs; without map_location they "
      "deserialize to cuda and fail on a host without CUDA"),
    C("checkpoint = torch.load(model_state_file)", "device_type", "replace", False,
      "checkpoint = torch.load(model_state_file, map_location='cpu')",
      "resume checkpoint is written by this script on the NPU host itself, so it restores to npu; "
      "map_location only matters when resuming a GPU run"),
    C("torch.cuda.max_memory_allocated(device) / 1024.0 / 1024.0))", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated(device) / 1024.0 / 1024.0))",
      "torch.cuda memory stats initialise CUDA and raise; the exception aborts training at the first checkpoint"),
])

E("pdl_test", "tools/test_net_single_core.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab tools/test_net_single_core.py (single-device evaluation with timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("device = torch.device('cuda:{}'.format(gpus[0]))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(gpus[0]))", "evaluation device from TEST.GPUS"),
    C("model_weights = torch.load(model_state_file)", "device_type", "replace", True,
      "model_weights = torch.load(model_state_file, map_location='cpu')",
      "TEST.MODEL_FILE is typically a released checkpoint trained on GPUs"),
    C("torch.cuda.synchronize(device)  # make sure H2D copies are done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)  # make sure H2D copies are done", "timing barrier; torch.cuda raises on an NPU host"),
    C("torch.cuda.synchronize(device)  # wait for the network", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)  # wait for the network",
      "also needed for correct Network Time: NPU kernels are launched asynchronously"),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)", "post-processing timing barrier"),
])

E("pdl_comm", "segmentation/utils/comm.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab segmentation/utils/comm.py (detectron2 comm helpers)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl":',
      "backend-string comparison is not rewritten by any shim; with hccl the else-branch returns the "
      "HCCL world group and all_gather/gather then push CPU byte tensors through HCCL"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", False,
      'assert backend in ["gloo", "hccl"]',
      "only reached with a non-gloo group if a caller passes one explicitly; nothing in the repo does "
      "once _get_global_gloo_group is fixed"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", False,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "same reasoning: the 'cuda' branch is dead while every caller uses the cached gloo group"),
])

E("pdl_postproc", "segmentation/model/post_processing/instance_post_processing.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab instance_post_processing.py (center grouping / panoptic merge)", [])

E("pdl_config", "segmentation/config/default.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab segmentation/config/default.py (yacs defaults incl. GPUS and CUDNN)", [])

E("pdl_yaml", "configs/panoptic_deeplab_R52_os16_cityscapes.yaml", "explicit_replacement",
  "bowenc0221/panoptic-deeplab configs/*.yaml (Cityscapes R52 config)", [])

E("pdl_utils", "segmentation/utils/utils.py", "explicit_replacement",
  "bowenc0221/panoptic-deeplab segmentation/utils/utils.py (to_cuda, AverageMeter)", [])

E("pdl_launch", "tools/train.sh", "explicit_replacement",
  "panoptic-deeplab README launch command wrapped in a script (torch.distributed.launch)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the card selection silently stops working"),
    C("export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; usually already sourced in the shell profile / image"),
])

# ----------------------------------------------------------------------------------------------
# UPSNet (uber-research/UPSNet): PyTorch 0.4/1.0 era, horovod, custom CUDA ops
# ----------------------------------------------------------------------------------------------
E("ups_train", "upsnet/upsnet_end2end_train.py", "explicit_replacement",
  "uber-research/UPSNet upsnet/upsnet_end2end_train.py (horovod multi-GPU training)", [
    C("import horovod.torch as hvd", "distributed_framework", "removal", False, None,
      "horovod is replaced by torch.distributed/HCCL (its torch ops only know CPU and CUDA tensors - "
      "unconfirmed in the knowledge base); the import is harmless if horovod happens to be installed"),
    C("hvd.init()", "distributed_framework", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')",
      "complete port: every later rank/size/collective call is torch.distributed, so the group must exist"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(os.environ['LOCAL_RANK']))", "local rank comes from torchrun instead of horovod"),
    C("is_master = hvd.rank() == 0", "distributed_framework", "replace", True,
      "is_master = torch.distributed.get_rank() == 0", "horovod is no longer initialised"),
    C("torch.cuda.set_device(int(config.gpus.split(',')[0]))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(config.gpus.split(',')[0]))", "single-device path"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is lazily queued (no error) and torch.manual_seed already seeds the "
      "privateuse1 device on torch>=2.x; explicit NPU seeding kept for clarity"),
    C("gpus = [torch.device('cuda', int(_)) for _ in config.gpus.split(',')]", "device_type", "replace", False,
      "gpus = [torch.device('npu', int(_)) for _ in config.gpus.split(',')]",
      "only len(gpus) is used; constructing a cuda torch.device object does not touch CUDA"),
    C("num_replica = hvd.size() if config.train.use_horovod else len(gpus)", "distributed_framework", "replace", True,
      "num_replica = torch.distributed.get_world_size() if config.train.use_horovod else len(gpus)",
      "horovod is no longer initialised"),
    C("train_model = eval(config.symbol)().cuda()", "tensor_to_device", "replace", True,
      "train_model = eval(config.symbol)().npu()", "model to the current NPU"),
    C("optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=train_model.named_parameters())",
      "distributed_framework", "removal", True, None,
      "gradient averaging moves into DDP (see broadcast_parameters line); the horovod wrapper would fail uninitialised"),
    C("train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=hvd.size(), rank=hvd.rank())",
      "distributed_framework", "replace", True,
      "train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)",
      "DistributedSampler reads rank/world size from the default (HCCL) process group"),
    C("val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, num_replicas=hvd.size(), rank=hvd.rank())",
      "distributed_framework", "replace", True,
      "val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, shuffle=False)",
      "same as the train sampler"),
    C("collate_fn=train_dataset.collate, pin_memory=True)", "pin_memory", "replace", False,
      "collate_fn=train_dataset.collate, pin_memory=True, pin_memory_device='npu')",
      "performance only: without an accelerator-aware pin device the DataLoader may skip pinning on an "
      "NPU host (unconfirmed for the torch/torch_npu pair in use)"),
    C("train_model.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth')), resume=True)",
      "device_type", "replace", False,
      "train_model.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth'), map_location='cpu'), resume=True)",
      "resuming a snapshot written on the same NPU host works without map_location"),
    C("optimizer.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.state.pth')))",
      "device_type", "replace", False,
      "optimizer.load_state_dict(torch.load(os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.state.pth'), map_location='cpu'))",
      "same as the model snapshot"),
    C("hvd.broadcast_parameters(train_model.state_dict(), root_rank=0)", "distributed_framework", "replace", True,
      "train_model = torch.nn.parallel.DistributedDataParallel(train_model, device_ids=[torch.npu.current_device()], find_unused_parameters=True)",
      "DDP construction broadcasts rank-0 weights (what broadcast_parameters did) and all-reduces grads over HCCL"),
    C("data[k] = v if not torch.is_tensor(v) else v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data[k] = v if not torch.is_tensor(v) else v.npu(non_blocking=True)", "batch to NPU"),
    C("label[k] = v if not torch.is_tensor(v) else v.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label[k] = v if not torch.is_tensor(v) else v.npu(non_blocking=True)", "targets to NPU"),
    C("losses = [hvd.allreduce(l) for l in losses]", "distributed_framework", "replace", True,
      "for l in losses: torch.distributed.all_reduce(l.div_(torch.distributed.get_world_size()))",
      "hvd.allreduce averages by default; all_reduce sums, so divide by world size first"),
    C("torch.cuda.max_memory_allocated() / 1024 / 1024))", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 1024 / 1024))", "raises on an NPU host at the first display iteration"),
    C("torch.save(train_model.state_dict(), os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth'))",
      "distributed_framework", "replace", True,
      "torch.save(getattr(train_model, 'module', train_model).state_dict(), os.path.join(final_output_path, config.model_prefix + str(curr_iter) + '.pth'))",
      "consequence of the DDP wrap: keys would gain a 'module.' prefix and the test script / resume could not load them"),
    C("torch.save(train_model.state_dict(), os.path.join(final_output_path, config.model_prefix + 'final.pth'))",
      "distributed_framework", "replace", True,
      "torch.save(getattr(train_model, 'module', train_model).state_dict(), os.path.join(final_output_path, config.model_prefix + 'final.pth'))",
      "same as the periodic snapshot"),
])

E("ups_setup", "upsnet/operators/setup.py", "explicit_replacement",
  "uber-research/UPSNet upsnet/operators build script (CUDAExtension RoIAlign / DCN / NMS)", [])

E("ups_roialign", "upsnet/operators/functions/roialign.py", "explicit_replacement",
  "uber-research/UPSNet upsnet/operators/functions/roialign.py (autograd wrapper over the CUDA kernel)", [
    C("=import torch", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops",
      "without torchvision_npu the torchvision op still runs through torch_npu's CPU fallback (slow); unconfirmed "
      "for the torchvision custom-op namespace"),
    C("from upsnet.operators import roi_align_cuda", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import roi_align as tv_roi_align",
      "the CUDA extension is not built on the NPU host (init.sh no longer runs setup.py), so this import fails"),
    C("return RoIAlignFunction.apply(features, rois, self.pooled_height, self.pooled_width,", "custom_cuda_extension", "replace", True,
      "return tv_roi_align(features, rois, (self.pooled_height, self.pooled_width), self.spatial_scale, self.sampling_ratio, aligned=False)",
      "same [K,5] roi layout and legacy (aligned=False) semantics; the old Function stays as dead code"),
])

E("ups_deform", "upsnet/operators/functions/deform_conv.py", "explicit_replacement",
  "uber-research/UPSNet deformable conv v1 wrapper (deform_conv_cuda)", [
    C("=import torch", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernel for torchvision.ops.deform_conv2d",
      "performance: otherwise deform_conv2d runs via CPU fallback (unconfirmed)"),
    C("from upsnet.operators import deform_conv_cuda", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import deform_conv2d", "extension not built on the NPU host"),
    C("return deform_conv(input, offset, self.weight, self.stride, self.padding, self.dilation,", "custom_cuda_extension", "replace", True,
      "return deform_conv2d(input, offset, self.weight, stride=self.stride, padding=self.padding, dilation=self.dilation)",
      "DCNv1 offset layout matches torchvision; deformable groups are inferred from the offset channels"),
])

E("ups_nms", "upsnet/nms/nms.py", "explicit_replacement",
  "uber-research/UPSNet upsnet/nms/nms.py (py-faster-rcnn style NMS wrappers)", [
    C("from upsnet.operators import nms_cuda", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import nms as tv_nms", "extension not built on the NPU host"),
    C("dets_t = torch.from_numpy(dets).float().cuda(device_id)", "tensor_to_device", "replace", True,
      "dets_t = torch.from_numpy(dets).float().npu(device_id)", "device_id is an NPU index after the port"),
    C("keep = nms_cuda.nms(dets_t, thresh)", "custom_cuda_extension", "replace", True,
      "keep = tv_nms(dets_t[:, :4], dets_t[:, 4], thresh)",
      "torchvision drops the legacy +1 box width; borderline boxes may differ slightly"),
    C("keep = nms_cuda.nms(dets, thresh)", "custom_cuda_extension", "replace", True,
      "keep = tv_nms(dets[:, :4], dets[:, 4], thresh)", "RPN proposal NMS used by pyramid_proposal.py"),
])

E("ups_init", "init.sh", "explicit_replacement",
  "uber-research/UPSNet init.sh (builds Cython/CUDA ops, downloads backbones)", [
    C("export PATH=/usr/local/cuda/bin:$PATH", "env_var", "replace", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA path is inert on the NPU host; CANN env is typically already sourced"),
    C("export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}", "env_var", "removal", False, None, "inert on the NPU host"),
    C('echo "Using nvcc: $(which nvcc)"', "env_var", "removal", False, None,
      "prints an empty path; does not trip set -e"),
    C("nvcc --version | tail -n 1", "env_var", "removal", False, None,
      "'command not found' is swallowed by the pipeline (tail succeeds), so set -e does not abort"),
    C("python setup.py build_ext --inplace", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension needs CUDA_HOME/nvcc and aborts the script under set -e (before the weight download); "
      "the ops are replaced by torchvision(_npu) ops instead"),
])

E("ups_yaml", "upsnet/experiments/upsnet_resnet50_cityscapes_16gpu.yaml", "explicit_replacement",
  "uber-research/UPSNet upsnet/experiments/*.yaml", [])

E("ups_pyramid", "upsnet/operators/modules/pyramid_proposal.py", "explicit_replacement",
  "uber-research/UPSNet upsnet/operators/modules/pyramid_proposal.py (FPN RPN proposals)", [
    C("anchors = torch.from_numpy(anchors).cuda(device_id)", "tensor_to_device", "replace", True,
      "anchors = torch.from_numpy(anchors).npu(device_id)", "get_device() returns the NPU index for NPU tensors"),
    C("batch_inds = torch.cuda.FloatTensor(proposals.shape[0], 1).fill_(b)", "torch_cuda_api", "replace", True,
      "batch_inds = proposals.new_full((proposals.shape[0], 1), b)",
      "legacy typed CUDA constructor raises without CUDA; new_full keeps device and dtype of proposals"),
])

# ----------------------------------------------------------------------------------------------
# Panoptic FCN (dvlab-research/PanopticFCN): detectron2 project, device from cfg.MODEL.DEVICE
# ----------------------------------------------------------------------------------------------
E("pfcn_model", "panopticfcn/panoptic_seg.py", "device_branch_or_abstraction",
  "dvlab-research/PanopticFCN panopticfcn/panoptic_seg.py (meta-architecture, device from cfg)", [])

E("pfcn_head", "panopticfcn/head.py", "device_branch_or_abstraction",
  "dvlab-research/PanopticFCN panopticfcn/head.py (position/kernel heads, coord conv)", [])

E("pfcn_train", "train.py", "device_branch_or_abstraction",
  "dvlab-research/PanopticFCN train.py (detectron2 DefaultTrainer + launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NPU_NOTE + "; needed before cfg.MODEL.DEVICE='npu' can be turned into a torch.device"),
])

E("pfcn_yaml", "configs/Base-Panoptic-FCN.yaml", "device_branch_or_abstraction",
  "dvlab-research/PanopticFCN configs/Base-Panoptic-FCN.yaml", [
    C('META_ARCHITECTURE: "PanopticFCN"', "device_type", "npu_only_addition", True, 'DEVICE: "npu"',
      "detectron2's default MODEL.DEVICE is 'cuda'; the model does torch.device(cfg.MODEL.DEVICE) and .to() with it"),
])

# ----------------------------------------------------------------------------------------------
# kMaX-DeepLab (bytedance/kmax-deeplab): detectron2 project, AMP, TF32 off
# ----------------------------------------------------------------------------------------------
E("kmax_train", "train_net.py", "explicit_replacement",
  "bytedance/kmax-deeplab train_net.py (Mask2Former-style trainer, AMPTrainer, full-model clipping)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("torch.cuda.device_count() > comm.get_rank()", "torch_cuda_api", "replace", True,
      "torch.npu.device_count() > comm.get_rank()",
      "torch.cuda.device_count() is 0 on an NPU host, so every Cityscapes evaluation asserts"),
    C("optimizer = maybe_add_full_model_gradient_clipping(torch.optim.AdamW)(", "fused_optimizer", "replace", False,
      "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedAdamW)(",
      "performance only (msFmkTransplt advice); interaction with the per-parameter groups and full-model "
      "clipping subclass unconfirmed"),
    C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = False",
      "kMaX turns TF32 off for accuracy; the NPU analogue is HF32 (torch.npu.matmul is in torch_npu.npu.__all__); "
      "NPU defaults unconfirmed"),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "replace", False,
      "torch.npu.conv.allow_hf32 = False",
      "same intent for convolutions; cudnn flag is inert on NPU, HF32 default for conv unconfirmed"),
])

E("kmax_criterion", "kmax_deeplab/modeling/criterion.py", "explicit_replacement",
  "bytedance/kmax-deeplab kmax_deeplab/modeling/criterion.py (PQ-style, instance-discrimination losses)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast",
      "the losses force fp32 with autocast(enabled=False); the CUDA context does not switch off NPU autocast, "
      "so under AMPTrainer the softmax/log/cross-entropy losses would silently run in fp16"),
])

E("kmax_decoder", "kmax_deeplab/modeling/transformer_decoder/kmax_transformer_decoder.py", "explicit_replacement",
  "bytedance/kmax-deeplab kMaX transformer decoder (k-means cross-attention)", [])

E("kmax_yaml", "configs/coco/panoptic_segmentation/kmax_r50.yaml", "explicit_replacement",
  "bytedance/kmax-deeplab configs/coco/panoptic_segmentation/kmax_r50.yaml", [
    C('META_ARCHITECTURE: "kMaXDeepLab"', "device_type", "npu_only_addition", True, 'DEVICE: "npu"',
      "detectron2 default MODEL.DEVICE is 'cuda' (build_model moves the model there)"),
])

E("kmax_script", "scripts/train_kmax_r50_coco.sh", "explicit_replacement",
  "kmax-deeplab README training command wrapped in a launcher script", [
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "removal", False, None, "NCCL variable, inert with HCCL"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check", "replace", True,
      'NUM_GPUS=$(python3 -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi is absent; the pipeline still succeeds (wc prints 0), --num-gpus 0 then silently trains on one process"),
])

E("kmax_bench", "tools/benchmark_fps.py", "explicit_replacement",
  "kMaX-DeepLab style FPS benchmark (CUDA events, synchronize, autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("image = torch.randint(0, 255, (3, h, w), dtype=torch.uint8).float().cuda()", "tensor_to_device", "replace", True,
      "image = torch.randint(0, 255, (3, h, w), dtype=torch.uint8).float().npu()", "dummy input on the NPU"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "with --fp16 the CUDA autocast is a no-op on NPU and the benchmark silently measures fp32"),
    C('logger.info("Device: {}".format(torch.cuda.get_device_name(0)))', "torch_cuda_api", "replace", True,
      'logger.info("Device: {}".format(torch.npu.get_device_name(0)))', "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "after warm-up"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "device event timing"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "device event timing"),
    C("torch.cuda.synchronize()  # wait for the end event", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the end event", "elapsed_time needs the event completed"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 2 ** 20))", "raises without CUDA"),
])

# ----------------------------------------------------------------------------------------------
# OneFormer (SHI-Labs/OneFormer): Mask2Former lineage, MSDeformAttn CUDA op, NATTEN, Docker
# ----------------------------------------------------------------------------------------------
E("of_msda_setup", "oneformer/modeling/pixel_decoder/ops/setup.py", "explicit_replacement",
  "SHI-Labs/OneFormer (Mask2Former/Deformable-DETR) MSDeformAttn setup.py", [])

E("of_msda_func", "oneformer/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py", "explicit_replacement",
  "SHI-Labs/OneFormer ms_deform_attn_func.py (MSDA import + PyTorch reference core)", [
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", "replace", True,
      "MSDA = None  # no NPU build: MSDeformAttn falls back to ms_deform_attn_core_pytorch (grid_sample)",
      "the CUDA op is not built on the NPU host; raising here makes the whole oneformer package unimportable"),
])

E("of_msda_module", "oneformer/modeling/pixel_decoder/ops/modules/ms_deform_attn.py", "explicit_replacement",
  "SHI-Labs/OneFormer ms_deform_attn.py (MSDeformAttn module with try/except fallback)", [])

E("of_train", "train_net.py", "explicit_replacement",
  "SHI-Labs/OneFormer train_net.py (detectron2 trainer, wandb writer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() returns early when CUDA is not initialised (no error), so it is inert; "
      "porting restores the intended release of cached NPU memory before evaluation"),
])

E("of_predictor", "demo/predictor.py", "explicit_replacement",
  "SHI-Labs/OneFormer demo/predictor.py (detectron2 demo predictor, AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host and the parallel demo silently runs on the CPU"),
    C('cfg.MODEL.DEVICE = "cuda:{}".format(gpuid) if num_gpus > 0 else "cpu"', "device_type", "replace", True,
      'cfg.MODEL.DEVICE = "npu:{}".format(gpuid) if num_gpus > 0 else "cpu"', "one worker per NPU"),
])

E("of_misc", "oneformer/utils/misc.py", "explicit_replacement",
  "SHI-Labs/OneFormer oneformer/utils/misc.py (NestedTensor, dist helpers)", [])

E("of_docker", "docker/Dockerfile", "explicit_replacement",
  "OneFormer/Mask2Former/detectron2-style Dockerfile (CUDA 11.3, detectron2, NATTEN, make.sh)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must carry CANN (driver mounted at run time); exact tag illustrative"),
    C("RUN pip install --user torch==1.10.1+cu113 torchvision==0.11.2+cu113", "import_torch_npu", "replace", True,
      "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 torchvision-npu",
      "cu113 wheels cannot drive an NPU; torch_npu wheel must match the torch version (2.1.0 <-> 2.1.0.postN)"),
    C("RUN pip install --user natten==0.14.4", "custom_cuda_extension", "removal", True, None,
      "NATTEN is CUDA-only (cu113 wheel index); DiNAT backbones are unavailable on NPU, use the Swin/ConvNeXt configs"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", True, None,
      "not inert: detectron2's setup.py builds CUDAExtension when FORCE_CUDA=1 and fails without CUDA_HOME"),
    C('ARG TORCH_CUDA_ARCH_LIST="Kepler', "env_var", "removal", False, None, "inert without nvcc"),
    C('ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"', "env_var", "removal", False, None, "inert without nvcc"),
    C("RUN cd oneformer/modeling/pixel_decoder/ops && sh make.sh", "custom_cuda_extension", "removal", True, None,
      "setup.py raises NotImplementedError without CUDA_HOME and fails the image build; MSDeformAttn uses the "
      "PyTorch fallback on NPU"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container-runtime hint, inert; Ascend Docker Runtime takes ASCEND_VISIBLE_DEVICES at docker run"),
])
