# Labels for probe425 (scene text detection / spotting, CUDA -> Ascend NPU).
# Target stack for the port: torch 2.1.0 + torch_npu 2.1.0.post17 (branch v2.1.0-7.2.0) on CANN 8.3.RC1,
# i.e. before device-backend autoload (torch_npu >= 2.5.1), so entry scripts need `import torch_npu`.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------
# MhLiao/DB (DBNet / DBNet++ reference implementation)
# ---------------------------------------------------------------------------------------------
E("db_train", "train.py", "explicit_replacement", "MhLiao/DB train.py (argparse entry, NCCL init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torch 2.1 + torch_npu 2.1 has no backend autoload, torch.npu only exists after import torch_npu."),
    C("torch.cuda.set_device(args['local_rank'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args['local_rank'])",
      "Per-process device binding for distributed runs; torch.cuda.set_device raises without CUDA."),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
      "NCCL is not available on Ascend; HCCL is the collective backend."),
])

E("db_trainer", "trainer.py", "explicit_replacement", "MhLiao/DB trainer.py (Trainer.init_device, train loop)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Unchanged, the check is False on an NPU host and the whole training silently runs on CPU."),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Device handed to the model builder and used for every batch .to(self.device)."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Runs whenever logger.verbose is set (true in the shipped experiment YAMLs); raises without CUDA."),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(self.device)",
      "Second verbose-mode timing barrier."),
    C("loss = torch.tensor(0.).cuda()", "tensor_to_device", "replace", True,
      "loss = torch.tensor(0.).npu()",
      "Accumulator for dict-valued losses; .cuda() raises on an NPU host."),
])

E("db_model", "structure/model.py", "explicit_replacement", "MhLiao/DB structure/model.py (parallelize, SegDetectorModel)", [
    C("return nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "return _SingleDeviceWrapper(model)  # keeps the 'module.' prefix that DataParallel checkpoints carry",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (scatter/replicate use CUDA comm). "
      "Dropping the wrapper entirely would change state_dict keys, and DB restores with strict=False, "
      "so released checkpoints would silently load nothing; a thin wrapper with a .module attribute keeps the keys."),
])

E("db_eval", "eval.py", "explicit_replacement", "MhLiao/DB eval.py (Eval.init_torch_tensor, speed test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script for evaluation."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Otherwise evaluation silently runs on CPU."),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Device used by the model builder and torch.load(map_location=self.device)."),
    C("torch.set_default_tensor_type('torch.cuda.FloatTensor')", "device_type", "replace", True,
      "torch.set_default_device('npu')",
      "torch.cuda.FloatTensor cannot be set without CUDA, and Ascend's 2.7.1 API list says set_default_tensor_type "
      "does not accept torch.npu.*Tensor types; set_default_device (torch >= 2.0) is the equivalent."),
    C("if self.device.type == 'cuda':", "device_type", "replace", True,
      "if self.device.type == 'npu':",
      "Unchanged, the barrier before the --speed loop is skipped and the reported FPS is measured against an unsynchronised clock."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Timing barrier for --speed."),
])

E("db_dcn_setup", "assets/ops/dcn/setup.py", "kernel_rewrite", "MhLiao/DB assets/ops/dcn/setup.py (mmdet-v1 DCN CUDA extension)", [
    C("CUDAExtension('deform_conv_cuda', [", "custom_cuda_extension", "removal", True, None,
      "The deform-conv .cu kernels cannot be built without nvcc; on NPU the functions call "
      "torch_npu.npu_deformable_conv2d / npu_deformable_conv2dbk instead, so the extension entry goes (with its source list)."),
    C("CUDAExtension('deform_pool_cuda', [", "custom_cuda_extension", "removal", True, None,
      "Same for the deformable RoI pooling extension (not used by the text detectors; dropped rather than ported)."),
])

E("db_dcn_func", "assets/ops/dcn/functions/deform_conv.py", "kernel_rewrite", "MhLiao/DB assets/ops/dcn/functions/deform_conv.py (DeformConv / ModulatedDeformConv autograd functions)", [
    C("from .. import deform_conv_cuda", "custom_cuda_extension", "replace", True,
      "import torch_npu",
      "The compiled CUDA module does not exist on NPU; the NPU deformable-conv kernels come from torch_npu."),
    C("if not input.is_cuda:", "device_type", "replace", True,
      "if not input.is_npu:",
      "NPU tensors are not is_cuda, so the guard would raise NotImplementedError for every call."),
    C("deform_conv_cuda.deform_conv_forward_cuda(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, _npu_offset(offset, None), None, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "npu_deformable_conv2d (custom op in torch_npu 2.1/2.7/2.9 lists) replaces the im2col CUDA kernel; offsets must be "
      "re-laid-out (x/y planes) for the NPU op, hence the _npu_offset helper."),
    C("if not (grad_output.is_cuda and input.is_cuda):", "device_type", "replace", True,
      "if not (grad_output.is_npu and input.is_npu):",
      "Same device guard in backward."),
    C("deform_conv_cuda.deform_conv_backward_input_cuda(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset, _ = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, _npu_offset(offset, None), kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "npu_deformable_conv2dbk returns input, weight, offset and bias gradients in one call."),
    C("deform_conv_cuda.deform_conv_backward_parameters_cuda(", "custom_cuda_extension", "removal", True, None,
      "Weight gradient already produced by npu_deformable_conv2dbk above; the CUDA call would be a NameError."),
    C("if not input.is_cuda or not weight.is_cuda:", "device_type", "replace", True,
      "if not input.is_npu or not weight.is_npu:",
      "Device guard of the modulated (DCNv2) forward used by deformable_resnet18/50."),
    C("deform_conv_cuda.modulated_deform_conv_cuda_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, _npu_offset(offset, mask), bias if ctx.with_bias else None, kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 forward on the NPU kernel; mask is concatenated into the offset tensor for modulated=True."),
    C("if not grad_output.is_cuda:", "device_type", "replace", True,
      "if not grad_output.is_npu:",
      "Device guard of the modulated backward."),
    C("deform_conv_cuda.modulated_deform_conv_cuda_backward(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset_mask, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, _npu_offset(offset, mask), kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 backward; grad_offset/grad_mask are split back out of grad_offset_mask afterwards."),
])

E("db_data_loader", "data/data_loader.py", "explicit_replacement", "MhLiao/DB data/data_loader.py (DataLoader, DistributedSampler)", [])

# ---------------------------------------------------------------------------------------------
# WenmuZhou/DBNet.pytorch
# ---------------------------------------------------------------------------------------------
E("dbpt_train", "tools/train.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch is imported lazily inside main(); torch_npu goes next to it."),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 1:",
      "Unchanged, device_count() is 0 on an NPU host: every launched process trains non-distributed on its own."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "Per-rank device binding."),
    C("torch.distributed.init_process_group(backend=\"nccl\"", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend=\"hccl\", init_method=\"env://\", world_size=torch.npu.device_count(), rank=args.local_rank)",
      "HCCL instead of NCCL, and world_size is derived from the visible NPU count."),
    C("criterion = build_loss(config['loss']).cuda()", "tensor_to_device", "replace", False,
      "criterion = build_loss(config['loss']).npu()",
      "DBLoss holds no parameters or buffers, so Module.cuda() touches no tensor and does not raise; changed for consistency only."),
])

E("dbpt_base_trainer", "base/base_trainer.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch base/base_trainer.py", [
    C("if torch.cuda.device_count() > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 0 and torch.npu.is_available():",
      "Otherwise with_cuda=False and the model stays on CPU."),
    C("self.device = torch.device(\"cuda\")", "device_type", "replace", True,
      "self.device = torch.device(\"npu\")",
      "Training device; each rank has already called torch.npu.set_device(local_rank)."),
    C("torch.cuda.manual_seed(self.config['trainer']['seed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.config['trainer']['seed'])",
      "torch.manual_seed above already seeds the privateuse1 device; torch.cuda.manual_seed is queued lazily and never runs without CUDA."),
    C("torch.cuda.manual_seed_all(self.config['trainer']['seed'])", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.config['trainer']['seed'])",
      "Same as manual_seed: redundant with torch.manual_seed."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised (and sits in a bare try); cache release only."),
])

E("dbpt_trainer", "trainer/trainer.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch trainer/trainer.py (device-agnostic loop)", [])

E("dbpt_predict", "tools/predict.py", "explicit_replacement", "WenmuZhou/DBNet.pytorch tools/predict.py (Pytorch_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Standalone inference entry point."),
    C("isinstance(self.gpu_id, int) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if self.gpu_id is not None and isinstance(self.gpu_id, int) and torch.npu.is_available():",
      "Otherwise inference silently falls back to CPU."),
    C("self.device = torch.device(\"cuda:%s\" % self.gpu_id)", "device_type", "replace", True,
      "self.device = torch.device(\"npu:%s\" % self.gpu_id)",
      "Indexed device string."),
    C("if str(self.device).__contains__('cuda'):", "device_type", "replace", True,
      "if str(self.device).__contains__('npu'):",
      "String test on the device; unchanged, the barrier is skipped and the returned inference time t measures only the asynchronous launch."),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(self.device)",
      "Barrier before reading the clock."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str('0')", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str('0')",
      "Pins device 0 while the script also passes gpu_id=0, so ignoring it lands on the same NPU; kept for parity."),
])

E("dbpt_multi_gpu_sh", "multi_gpu_train.sh", "explicit_replacement", "WenmuZhou/DBNet.pytorch multi_gpu_train.sh", [
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 python3", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 python3 -m torch.distributed.launch --nproc_per_node=4 tools/train.py --config_file \"config/icdar2015_resnet18_FPN_DBhead_polyLR.yaml\"",
      "tools/train.py sets world_size=torch.npu.device_count(); if the 4-device mask is not applied, an 8-NPU host "
      "reports 8 while only 4 ranks are launched and init_process_group waits forever."),
])

# ---------------------------------------------------------------------------------------------
# whai362/pan_pp.pytorch (PSENet / PAN / PAN++)
# ---------------------------------------------------------------------------------------------
E("panpp_train", "train.py", "explicit_replacement", "whai362/pan_pp.pytorch train.py (DataParallel training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script."),
    C("torch.cuda.manual_seed(123456)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(123456)",
      "torch.manual_seed(123456) on the line above already seeds the NPU generator; the CUDA call is a lazy no-op."),
    C("data.update(dict(cfg=cfg))", "tensor_to_device", "replace", True,
      "data.update(dict(cfg=cfg)); data = {k: (v.npu(non_blocking=True) if torch.is_tensor(v) else v) for k, v in data.items()}",
      "DataParallel used to scatter the CPU batch onto the GPUs; with the wrapper gone the batch has to be moved explicitly "
      "or the NPU model receives CPU tensors."),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (single-process multi-device scatter is CUDA comm)."),
    C("if hasattr(model.module, 'optimizer'):", "unsupported_op_workaround", "replace", True,
      "if hasattr(model, 'optimizer'):",
      "Follows from dropping DataParallel: there is no .module attribute any more."),
    C("optimizer = model.module.optimizer", "unsupported_op_workaround", "replace", True,
      "optimizer = model.optimizer",
      "Same."),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "Only needed for checkpoints written on a CUDA host; checkpoints written by the ported run load as-is."),
])

E("panpp_test", "test.py", "explicit_replacement", "whai362/pan_pp.pytorch test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script."),
    C("data['imgs'] = data['imgs'].cuda()", "tensor_to_device", "replace", True,
      "data['imgs'] = data['imgs'].npu()",
      "Input images."),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Model placement."),
    C("checkpoint = torch.load(args.checkpoint)", "device_type", "replace", True,
      "checkpoint = torch.load(args.checkpoint, map_location='cpu')",
      "test.py is how the released (CUDA-saved) PSENet/PAN/PAN++ checkpoints are evaluated; deserialising CUDA storages "
      "raises when torch.cuda.is_available() is False."),
])

E("panpp_model", "models/pan_pp.py", "explicit_replacement", "whai362/pan_pp.pytorch models/pan_pp.py (PAN_PP forward with --report_speed timing)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Called on every --report_speed stage; raises without CUDA."),
])

E("panpp_det_head", "models/head/pan_pp_det_head.py", "explicit_replacement", "whai362/pan_pp.pytorch models/head/pan_pp_det_head.py", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "Start of det_post_time measurement under --report_speed."),
])

E("panpp_rec_head", "models/head/pan_pp_rec_head.py", "explicit_replacement", "whai362/pan_pp.pytorch models/head/pan_pp_rec_head.py (attention recogniser)", [
    C("seq = torch.zeros(batch_size, max_seq_len + 1).long().cuda()", "tensor_to_device", "replace", True,
      "seq = torch.zeros(batch_size, max_seq_len + 1).long().to(x.device)",
      "Greedy decoding buffers are hard-wired to CUDA; following the feature device keeps the head device-agnostic."),
    C("seq_score = torch.zeros(batch_size, max_seq_len + 1).float().cuda()", "tensor_to_device", "replace", True,
      "seq_score = torch.zeros(batch_size, max_seq_len + 1).float().to(x.device)",
      "Same."),
    C("end = torch.ones(batch_size).bool().cuda()", "tensor_to_device", "replace", True,
      "end = torch.ones(batch_size).bool().to(x.device)",
      "Same."),
])

E("panpp_config", "config/pan_pp/pan_pp_r18_ic15_joint_train.py", "explicit_replacement", "whai362/pan_pp.pytorch config/pan_pp/*.py (mmcv-style python config)", [])

# ---------------------------------------------------------------------------------------------
# aim-uofa/AdelaiDet (ABCNet / BAText on detectron2)
# ---------------------------------------------------------------------------------------------
E("adet_setup", "setup.py", "explicit_replacement", "aim-uofa/AdelaiDet setup.py (adet._C CppExtension/CUDAExtension)", [])

E("adet_bezier_align", "adet/layers/bezier_align.py", "kernel_rewrite", "aim-uofa/AdelaiDet adet/layers/bezier_align.py (BezierAlign autograd function over adet._C)", [
    C("bezier_align = _BezierAlign.apply", "custom_cuda_extension", "replace", True,
      "bezier_align = bezier_align_grid_sample  # torch-op BezierAlign (sample points on the curve pair + F.grid_sample)",
      "adet._C only has CUDA and CPU BezierAlign kernels; an NPU tensor falls into the CPU path and reads device memory "
      "from the host. A differentiable grid_sample implementation (grid_sampler_2d has an NPU kernel) replaces it."),
])

E("adet_train_net", "tools/train_net.py", "explicit_replacement", "aim-uofa/AdelaiDet tools/train_net.py (detectron2 DefaultTrainer + launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script (launch spawns workers that re-import this module)."),
])

E("adet_predictor", "demo/predictor.py", "explicit_replacement", "aim-uofa/AdelaiDet demo/predictor.py (VisualizationDemo, AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpu = torch.npu.device_count()",
      "Unchanged, --parallel on an NPU host gets 0 and every worker runs on CPU."),
    C("cfg.MODEL.DEVICE = \"cuda:{}\".format(gpuid)", "device_type", "replace", True,
      "cfg.MODEL.DEVICE = \"npu:{}\".format(gpuid) if num_gpus > 0 else \"cpu\"",
      "Per-worker device string handed to detectron2's DefaultPredictor."),
])

E("adet_base_yaml", "configs/BAText/Base-BAText.yaml", "explicit_replacement", "aim-uofa/AdelaiDet configs/BAText/Base-BAText.yaml", [
    C("META_ARCHITECTURE: \"OneStageRCNN\"", "device_type", "npu_only_addition", True,
      "  DEVICE: \"npu\"",
      "detectron2's MODEL.DEVICE defaults to \"cuda\" and is used by build_model/DefaultPredictor; the base config is the "
      "one place every BAText/ABCNet config inherits from."),
])

E("adet_attn_predictor", "adet/modeling/roi_heads/attn_predictor.py", "explicit_replacement", "aim-uofa/AdelaiDet adet/modeling/roi_heads/attn_predictor.py (ABCNet attention recogniser)", [
    C("_init = torch.zeros((rois.size()[1], 1)).long().cuda()", "tensor_to_device", "replace", True,
      "_init = torch.zeros((rois.size()[1], 1)).long().to(rois.device)",
      "Training-time decoder start tokens."),
    C("target_variable = target_variable.cuda()", "tensor_to_device", "replace", True,
      "target_variable = target_variable.to(rois.device)",
      "Recognition targets."),
    C("decoder_hidden = self.attention.initHidden(rois.size()[1]).cuda()", "tensor_to_device", "replace", True,
      "decoder_hidden = self.attention.initHidden(rois.size()[1]).to(rois.device)  # batch rois.size[1]",
      "Initial GRU hidden state; the inference branch below already uses .to(rois.device)."),
])

# ---------------------------------------------------------------------------------------------
# jiangxiluning/FOTS.PyTorch
# ---------------------------------------------------------------------------------------------
E("fots_train", "train.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch train.py (config.json driven)", [
    C("=import pathlib", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "torch arrives through the star imports of model.*; torch_npu has to be imported explicitly in the entry script."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join([str(i) for i in config['gpus']])",
      "config['gpus'] chooses physical devices; ignored on Ascend, a config with gpus [2] would silently run on NPU 0. "
      "(Assumes the runtime reads the variable at first device use, like CUDA's lazy init - unconfirmed.)"),
    C("config = torch.load(args.resume)['config']", "device_type", "replace", False,
      "config = torch.load(args.resume, map_location='cpu')['config']",
      "Only needed when resuming a checkpoint written on a CUDA host."),
])

E("fots_base_trainer", "base/base_trainer.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch base/base_trainer.py", [
    C("self.with_cuda = config['cuda'] and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.with_cuda = config['cuda'] and torch.npu.is_available()",
      "with_cuda drives Trainer.device; left False, batches go to CPU while the model sits on the NPU."),
    C("if config['cuda'] and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if config['cuda'] and not torch.npu.is_available():",
      "Unchanged, this branch is taken on an NPU host and the model is never moved off the CPU."),
    C("device = 'cuda'", "device_type", "replace", True,
      "device = 'npu'",
      "Model placement."),
    C("except torch.cuda.CudaError:", "torch_cuda_api", "replace", False,
      "except RuntimeError:",
      "torch.cuda.CudaError still resolves on a CPU/NPU build and is only evaluated when an exception is raised; NPU OOMs are RuntimeError."),
    C("allocated = torch.cuda.memory_allocated(deviceID)", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated(deviceID) / (1024 * 1024)",
      "Debug log only; the CUDA call returns 0 when CUDA was never initialised (unconfirmed that it never raises)."),
    C("cached = torch.cuda.memory_cached(deviceID)", "torch_cuda_api", "replace", False,
      "cached = torch.npu.memory_reserved(deviceID) / (1024 * 1024)",
      "Same; memory_cached is the deprecated name of memory_reserved."),
    C("checkpoint = torch.load(resume_path)", "device_type", "replace", False,
      "checkpoint = torch.load(resume_path, map_location='cpu')",
      "Only for checkpoints written on a CUDA host."),
    C("state[k] = v.cuda(torch.device('cuda'))", "tensor_to_device", "replace", True,
      "state[k] = v.npu()",
      "Optimizer state move on resume; .cuda raises on an NPU host."),
])

E("fots_trainer", "trainer/trainer.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch trainer/trainer.py", [
    C("return torch.device('cuda') if self.with_cuda else torch.device('cpu')", "device_type", "replace", True,
      "return torch.device('npu') if self.with_cuda else torch.device('cpu')",
      "Device for every input/label tensor."),
])

E("fots_model", "model/model.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch model/model.py (FOTSModel container)", [
    C("if image.is_cuda:", "device_type", "replace", False,
      "if image.is_npu:",
      "Unchanged, lengths end up on CPU, which is where pack_padded_sequence wants them anyway; changed for consistency (unconfirmed for CTC lengths on NPU)."),
    C("device = image.get_device()", "device_type", "replace", True,
      "device = image.device",
      "get_device() returns a bare index and torch.tensor(...).to(int) means cuda:<int>; with the is_npu branch taken this raises."),
])

E("fots_roi_rotate", "model/modules/roi_rotate.py", "explicit_replacement", "jiangxiluning/FOTS.PyTorch model/modules/roi_rotate.py (affine_grid + grid_sample RoIRotate)", [])

E("fots_config", "config.json", "explicit_replacement", "jiangxiluning/FOTS.PyTorch config.json", [])

# ---------------------------------------------------------------------------------------------
# open-mmlab/mmocr 1.x (DBNet++, PSENet, PANet on mmengine)
# ---------------------------------------------------------------------------------------------
E("mmocr_train", "tools/train.py", "explicit_replacement", "open-mmlab/mmocr tools/train.py (mmengine Runner, --amp)", [])

E("mmocr_runtime", "configs/textdet/_base_/default_runtime.py", "explicit_replacement", "open-mmlab/mmocr configs/textdet/_base_/default_runtime.py", [])

E("mmocr_dbnetpp_cfg", "configs/textdet/dbnetpp/_base_dbnetpp_resnet50-dcnv2_fpnc.py", "explicit_replacement", "open-mmlab/mmocr configs/textdet/dbnetpp/_base_dbnetpp_resnet50-dcnv2_fpnc.py", [])

E("mmocr_dist_train", "tools/dist_train.sh", "explicit_replacement", "open-mmlab/mmocr tools/dist_train.sh", [
    C("MASTER_ADDR=${MASTER_ADDR:-\"127.0.0.1\"}", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the launched ranks; usually already exported by the container (ENV lines) or the login shell."),
])

E("mmocr_dockerfile", "docker/Dockerfile", "explicit_replacement", "open-mmlab/mmocr docker/Dockerfile", [
    C("FROM pytorch/pytorch:", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "A CUDA PyTorch image has neither CANN nor an NPU-capable torch; base on a CANN image (tag naming from Ascend/cann-container-image)."),
    C("3bf863cc.pub", "env_var", "removal", False, None,
      "NVIDIA apt key fetch; useless on the CANN image."),
    C("7fa2af80.pub", "env_var", "removal", False, None,
      "Same."),
    C("RUN conda clean --all", "env_var", "removal", False, None,
      "The CANN image is not conda based (unconfirmed), in which case this step fails."),
    C("RUN pip install openmim", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torch-npu==2.1.0.post17",
      "The CANN base image ships no torch; torch_npu 2.1.0.post17 pairs with torch 2.1.0 and CANN 8.3.RC1."),
    C("RUN mim install mmcv==2.0.0rc4", "custom_cuda_extension", "replace", False,
      "RUN git clone -b v2.1.0 https://github.com/open-mmlab/mmcv.git /mmcv && cd /mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -v -e .",
      "mmcv ops (DCNv2 for DBNet++) need an NPU build of mmcv; the build flags and NPU op coverage are unconfirmed in the knowledge base."),
])
