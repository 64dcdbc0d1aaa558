"""Labels for probe83 (hand-written synthetic upstream files; see ../README.md).

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

# ---------------------------------------------------------------------------------------------
# USB (microsoft/Semi-supervised-learning) / TorchSSL: FixMatch, FlexMatch
# ---------------------------------------------------------------------------------------------
E("usb_train", "train.py", "explicit_replacement",
  "microsoft/Semi-supervised-learning train.py (mp.spawn per GPU, dist args overwritten from yaml)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry point of every USB run; torch.npu.* and the hccl backend need torch_npu loaded "
      "(explicit import recommended even with autoload)"),
    C('parser.add_argument("--dist-backend", default="nccl"', "dist_backend", R, False,
      'parser.add_argument("--dist-backend", default="hccl", type=str, help="distributed backend")',
      "argparse default; the shipped yaml configs overwrite it (see usb_fixmatch_yaml), so only configs "
      "without dist_backend reach it"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "ngpus_per_node = torch.npu.device_count()  # number of NPUs of each node",
      "returns 0 on an NPU host: world_size becomes 0, mp.spawn starts no worker, and "
      "args.rank % ngpus_per_node in main_worker divides by zero"),
])

E("usb_algorithmbase", "semilearn/core/algorithmbase.py", "explicit_replacement",
  "microsoft/Semi-supervised-learning semilearn/core/algorithmbase.py (AlgorithmBase: AMP scaler, batch to GPU)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch.npu.amp import GradScaler, autocast",
      "torch.cuda.amp autocast is inactive for NPU tensors and the CUDA GradScaler disables itself without "
      "CUDA, so --amp silently trains in fp32 without loss scaling"),
    C("self.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "self.ngpus_per_node = torch.npu.device_count()",
      "0 on an NPU host; the checkpoint/logging hooks compute rank % ngpus_per_node"),
    C("var = {k: v.cuda(self.gpu)", "tensor_to_device", R, True,
      "var = {k: v.npu(self.gpu) for k, v in var.items()}",
      "Tensor.cuda() needs a CUDA build; every training batch goes through process_batch"),
    C("var = var.cuda(self.gpu)", "tensor_to_device", R, True, "var = var.npu(self.gpu)",
      "Tensor.cuda() needs a CUDA build"),
    C("x = {k: v.cuda(self.gpu)", "tensor_to_device", R, True,
      "x = {k: v.npu(self.gpu) for k, v in x.items()}", "evaluation batches (NLP/audio dict inputs)"),
    C("x = x.cuda(self.gpu)", "tensor_to_device", R, True, "x = x.npu(self.gpu)", "evaluation batches"),
    C("y = y.cuda(self.gpu)", "tensor_to_device", R, True, "y = y.npu(self.gpu)", "evaluation labels"),
])

E("usb_misc", "semilearn/core/utils/misc.py", "explicit_replacement",
  "microsoft/Semi-supervised-learning semilearn/core/utils/misc.py (send_model_cuda, get_optimizer, TBLog)", [
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not torch.npu.is_available():",
      "False on an NPU host, so every run stops with 'ONLY GPU TRAINING IS SUPPORTED'"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "per-process device binding in the spawned DDP workers; needs a CUDA build"),
    C("=model.cuda(args.gpu)", "tensor_to_device", R, True, "model.npu(args.gpu)",
      "Module.cuda() needs a CUDA build"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()",
      "DDP without an explicit gpu id"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU run", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.gpu)  # single-NPU run", "single-device path"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, True, "model = model.npu(args.gpu)",
      "single-device path"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", R, True,
      "model = model.npu()  # nn.DataParallel is not supported on Ascend; use one process per NPU (DDP)",
      "torch.nn.DataParallel is marked unsupported in Ascend's API list"),
    C("optimizer = torch.optim.SGD(per_param_args", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(per_param_args, lr=lr, momentum=momentum, weight_decay=weight_decay,",
      "performance only (msFmkTransplt suggests the NpuFused* optimizers)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "queued lazily without CUDA and harmless; torch.manual_seed above already seeds the NPU generator"),
])

E("usb_fixmatch_yaml", "config/classic_cv/fixmatch/fixmatch_cifar100_400_0.yaml", "explicit_replacement",
  "USB config/classic_cv/fixmatch/*.yaml (dist_backend / gpu / multiprocessing_distributed keys)", [
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl",
      "over_write_args_from_file copies it into args.dist_backend, which goes straight to "
      "dist.init_process_group; NCCL does not exist on an NPU host"),
])

E("torchssl_flexmatch", "models/flexmatch/flexmatch.py", "explicit_replacement",
  "TorchSSL models/flexmatch/flexmatch.py (CUDA-event timing, selected_label on GPU, apex-free AMP)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", R, True,
      "from torch.npu.amp import autocast, GradScaler",
      "CUDA autocast/GradScaler are inactive for NPU tensors: --amp silently runs fp32 without loss scaling"),
    C("torch.distributed.all_gather(tensors_gather, tensor, async_op=False)", "unsupported_op_workaround", R, True,
      "torch.distributed.all_gather(tensors_gather, tensor.int() if tensor.dtype == torch.int64 else tensor)  "
      "# HCCL all_gather has no int64; cast back after torch.cat",
      "gathers the int64 sample indices / pseudo-labels / masks; Ascend's 2.7.1 list restricts all_gather "
      "tensors to bf16/fp16/fp32/int8/int32/bool"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "ngpus_per_node = torch.npu.device_count()",
      "0 on an NPU host; rank % ngpus_per_node in the checkpoint branch divides by zero"),
    C("start_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_batch = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end_batch = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_batch = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("start_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_run = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end_run = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_run = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("selected_label = selected_label.cuda(args.gpu)", "tensor_to_device", R, True,
      "selected_label = selected_label.npu(args.gpu)", "FlexMatch learning-status buffer"),
    C("classwise_acc = torch.zeros((args.num_classes,)).cuda(args.gpu)", "tensor_to_device", R, True,
      "classwise_acc = torch.zeros((args.num_classes,)).npu(args.gpu)", "class-wise learning effect"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises without a CUDA build"),
    C("x_lb, x_ulb_w, x_ulb_s = x_lb.cuda(args.gpu)", "tensor_to_device", R, True,
      "x_lb, x_ulb_w, x_ulb_s = x_lb.npu(args.gpu), x_ulb_w.npu(args.gpu), x_ulb_s.npu(args.gpu)",
      "labeled + weak/strong unlabeled batches"),
    C("x_ulb_idx = x_ulb_idx.cuda(args.gpu)", "tensor_to_device", R, True,
      "x_ulb_idx = x_ulb_idx.npu(args.gpu)", "unlabeled sample indices"),
    C("y_lb = y_lb.cuda(args.gpu)", "tensor_to_device", R, True, "y_lb = y_lb.npu(args.gpu)", "labels"),
    C("torch.cuda.synchronize()  # wait for the step", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the step to finish before reading the events",
      "second synchronize before Event.elapsed_time"),
    C("x, y = x.cuda(args.gpu), y.cuda(args.gpu)", "tensor_to_device", R, True,
      "x, y = x.npu(args.gpu), y.npu(args.gpu)", "evaluation batches"),
])

E("kekmodel_fixmatch_train", "train.py", "explicit_replacement",
  "kekmodel/FixMatch-pytorch train.py (torch.distributed.launch, NVIDIA apex AMP O1)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry point; torch.npu.* and hccl need torch_npu loaded"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(args.seed)",
      "harmless without CUDA (lazy); torch.manual_seed already seeds the NPU generator"),
    C("device = torch.device('cuda', args.gpu_id)", "device_type", R, True,
      "device = torch.device('npu', args.gpu_id)", "single-process path; every .to(args.device) follows it"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", R, False,
      "args.n_gpu = torch.npu.device_count()",
      "0 on an NPU host; it only feeds the log line and the seed branch, so nothing breaks"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding"),
    C("device = torch.device('cuda', args.local_rank)", "device_type", R, True,
      "device = torch.device('npu', args.local_rank)", "distributed path"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", R, True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL does not exist on an NPU host"),
    C("=from apex import amp", "amp", R, True, "from torch.npu import amp as npu_amp",
      "NVIDIA apex (amp with CUDA kernels) cannot be installed on an NPU host; replace with native "
      "torch.npu.amp autocast + GradScaler (or the Ascend apex patch)"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler()  # O1 -> native autocast around the forward pass",
      "apex amp.initialize"),
    C("from apex import amp  # noqa: F811", "amp", R, True, "from torch.npu import amp as npu_amp",
      "second apex import inside train()"),
    C("with amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", R, True,
      "scaler.scale(loss).backward()",
      "apex loss scaling; the following scaled_loss.backward() goes with it (optimizer.step -> scaler.step)"),
])

E("meanteacher_main", "pytorch/main.py", "transfer_to_npu",
  "CuriousAI/mean-teacher pytorch/main.py (DataParallel student/EMA teacher, .cuda() everywhere)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu maps the .cuda() calls and torch.cuda.* in this script onto the NPU"),
    C("model = nn.DataParallel(model).cuda()", "distributed_framework", R, True,
      "model = model.cuda()  # nn.DataParallel unsupported on Ascend: single NPU (or DDP, one process per NPU)",
      "torch.nn.DataParallel is unsupported on Ascend and transfer_to_npu does not rewrite it; checkpoints "
      "then lose the 'module.' prefix"),
])

# ---------------------------------------------------------------------------------------------
# DACS / ClassMix (vikolss/DACS) and the vendored Synchronized-BatchNorm-PyTorch
# ---------------------------------------------------------------------------------------------
E("dacs_train_uda", "trainUDA.py", "explicit_replacement",
  "vikolss/DACS trainUDA.py (ClassMix cross-domain mixing, mean-teacher, sync_batchnorm DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("label = label.long().cuda()", "tensor_to_device", R, True, "label = label.long().npu()",
      "source labels in loss_calc"),
    C("criterion = torch.nn.DataParallel(CrossEntropy2d", "distributed_framework", R, True,
      "criterion = CrossEntropy2d(ignore_label=ignore_label).npu()",
      "multi-GPU (--gpus > 1) path: nn.DataParallel is unsupported on Ascend"),
    C("criterion = CrossEntropy2d(ignore_label=ignore_label).cuda()", "tensor_to_device", R, False,
      "criterion = CrossEntropy2d(ignore_label=ignore_label).npu()",
      "the loss module has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; "
      "edited for consistency"),
    C("ema_model = DataParallelWithCallback(ema_model", "distributed_framework", R, True,
      "ema_model = DDP(ema_model, device_ids=[local_rank])  # or keep the teacher unwrapped",
      "DataParallel subclass from the vendored sync_batchnorm (replicate + torch.cuda.comm)"),
    C("=ema_model = torch.nn.DataParallel(ema_model, device_ids=gpus)", "distributed_framework", R, True,
      "ema_model = ema_model.npu()  # teacher is updated by EMA, no gradient sync needed",
      "nn.DataParallel unsupported"),
    C("img_mean = torch.from_numpy(IMG_MEAN.copy()).cuda()", "tensor_to_device", R, True,
      "img_mean = torch.from_numpy(IMG_MEAN.copy()).npu(), data = data, target = target)",
      "built on every strongTransform call"),
    C("unlabeled_loss = torch.nn.DataParallel(CrossEntropyLoss2dPixelWiseWeighted", "distributed_framework", R, True,
      "unlabeled_loss = CrossEntropyLoss2dPixelWiseWeighted(ignore_index=ignore_label).npu()",
      "nn.DataParallel unsupported"),
    C("unlabeled_loss = CrossEntropyLoss2dPixelWiseWeighted(ignore_index=ignore_label).cuda()", "tensor_to_device", R, False,
      "unlabeled_loss = CrossEntropyLoss2dPixelWiseWeighted(ignore_index=ignore_label).npu()",
      "parameter-free loss module: .cuda() is a no-op, kept for consistency"),
    C("ema_model = ema_model.cuda()", "tensor_to_device", R, True, "ema_model = ema_model.npu()",
      "mean-teacher model"),
    C("model = DataParallelWithCallback(model, device_ids=gpus)", "distributed_framework", R, True,
      "model = DDP(model, device_ids=[local_rank])  # with nn.SyncBatchNorm from convert_model",
      "sync_batchnorm's DataParallelWithCallback needs torch.cuda.comm"),
    C("=model = torch.nn.DataParallel(model, device_ids=gpus)", "distributed_framework", R, True,
      "model = DDP(model, device_ids=[local_rank])", "nn.DataParallel unsupported"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "student model"),
    C("images = images.cuda()", "tensor_to_device", R, True, "images = images.npu()", "source images"),
    C("labels = labels.cuda().long()", "tensor_to_device", R, True, "labels = labels.npu().long()",
      "source labels"),
    C("images_remain = images_remain.cuda()", "tensor_to_device", R, True,
      "images_remain = images_remain.npu()", "target images"),
    C("replace=False)).long()]).cuda()", "tensor_to_device", R, True,
      "classes = (classes[torch.Tensor(np.random.choice(nclasses, int((nclasses+nclasses%2)/2),replace=False)).long()]).npu()",
      "ClassMix: half of the source classes"),
    C("MixMask0 = transformmasks.generate_class_mask", "tensor_to_device", R, True,
      "MixMask0 = transformmasks.generate_class_mask(labels[image_i], classes).unsqueeze(0).npu()",
      "ClassMix mask, first image"),
    C("MixMask1 = transformmasks.generate_class_mask", "tensor_to_device", R, True,
      "MixMask1 = transformmasks.generate_class_mask(labels[image_i], classes).unsqueeze(0).npu()",
      "ClassMix mask, second image"),
    C("unlabeled_weight * torch.ones(max_probs.shape).cuda()", "tensor_to_device", R, True,
      "pixelWiseWeight = unlabeled_weight * torch.ones(max_probs.shape).npu()",
      "pixel weight (threshold_uniform, the default)"),
    C("pixelWiseWeight = max_probs.ge(0.968).float().cuda()", "tensor_to_device", R, True,
      "pixelWiseWeight = max_probs.ge(0.968).float().npu()", "pixel weight (threshold)"),
    C("pixelWiseWeight = torch.ones(max_probs.shape).cuda()", "tensor_to_device", R, True,
      "pixelWiseWeight = torch.ones(max_probs.shape).npu()", "pixel weight (none)"),
    C("onesWeights = torch.ones((pixelWiseWeight.shape)).cuda()", "tensor_to_device", R, True,
      "onesWeights = torch.ones((pixelWiseWeight.shape)).npu()", "weights of the pasted source pixels"),
    C("pixelWiseWeight = torch.cat((pixelWiseWeight0,pixelWiseWeight1)).cuda()", "tensor_to_device", R, True,
      "pixelWiseWeight = torch.cat((pixelWiseWeight0,pixelWiseWeight1)).npu()", "mixed pixel weights"),
    C("torch.cuda.manual_seed(random_seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(random_seed)",
      "lazy and harmless without CUDA; torch.manual_seed already seeds the NPU"),
])

E("dacs_transformsgpu", "utils/transformsgpu.py", "explicit_replacement",
  "DACS / ClassMix utils/transformsgpu.py (kornia GPU augmentations, CowMix/ClassMix mixing)", [
    C("mean = torch.Tensor(mean).unsqueeze(0).unsqueeze(2).unsqueeze(3).cuda()", "tensor_to_device", R, True,
      "mean = torch.Tensor(mean).unsqueeze(0).unsqueeze(2).unsqueeze(3).to(data.device)",
      "normalize_rgb"),
    C("mean_bgr = torch.Tensor(mean).view(1, 3, 1, 1).cuda(data.device)", "tensor_to_device", R, True,
      "mean_bgr = torch.Tensor(mean).view(1, 3, 1, 1).to(data.device)",
      "Tensor.cuda(device=<npu device>) is rejected ('Invalid device, must be cuda device') even though "
      "the argument is the input's own device"),
    C("noise = torch.cuda.FloatTensor(batch_size, 1, *img_size).normal_()", "torch_cuda_api", R, True,
      "noise = torch.empty(batch_size, 1, *img_size, device='npu').normal_()",
      "legacy torch.cuda.FloatTensor constructor needs a CUDA build"),
])

E("sync_batchnorm", "utils/sync_batchnorm/batchnorm.py", "explicit_replacement",
  "vacancy/Synchronized-BatchNorm-PyTorch batchnorm.py as vendored in DACS/ADVENT-era UDA repos", [
    C("from torch.nn.parallel._functions import ReduceAddCoalesced, Broadcast", "distributed_framework", R, False,
      "# ReduceAddCoalesced / Broadcast (torch.cuda.comm) dropped: convert_model now returns nn.SyncBatchNorm",
      "the import itself succeeds on a CPU torch build; the CUDA comm calls are below"),
    C("sum_, ssum = ReduceAddCoalesced.apply(target_gpus[0], 2, *to_reduce)", "distributed_framework", R, False,
      "# unreachable after the port (no DataParallelWithCallback replicas)",
      "torch.cuda.comm.reduce_add_coalesced with CUDA ordinals; only reached under DataParallelWithCallback, "
      "which fails first on an NPU host"),
    C("broadcasted = Broadcast.apply(target_gpus, mean, inv_std)", "distributed_framework", R, False,
      "# unreachable after the port", "torch.cuda.comm broadcast; same path as above"),
    C("mod = DataParallelWithCallback(mod, device_ids=module.device_ids)", "distributed_framework", R, False,
      "mod = mod  # no DataParallel on Ascend: the caller wraps with DDP",
      "wraps in a DataParallel subclass (unsupported on Ascend), but only when convert_model is handed an "
      "nn.DataParallel model; DACS converts the bare model"),
    C("[SynchronizedBatchNorm1d,", "distributed_framework", R, True,
      "[torch.nn.SyncBatchNorm, torch.nn.SyncBatchNorm, torch.nn.SyncBatchNorm]):",
      "without DataParallel replicas _SynchronizedBatchNorm silently falls back to per-device F.batch_norm, "
      "so under DDP the statistics are no longer synchronised; map BN to nn.SyncBatchNorm (HCCL) instead"),
])

# ---------------------------------------------------------------------------------------------
# DAFormer / HRDA (lhoyer) on mmsegmentation 0.x + mmcv-full
# ---------------------------------------------------------------------------------------------
E("daformer_dacs", "mmseg/models/uda/dacs.py", "device_branch_or_abstraction",
  "lhoyer/DAFormer / HRDA mmseg/models/uda/dacs.py (device-agnostic self-training; no edits needed)", [])

E("daformer_apis_train", "mmseg/apis/train.py", "device_branch_or_abstraction",
  "DAFormer mmseg/apis/train.py (mmsegmentation 0.16 train_segmentor with MMDataParallel / MMDDP)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", R, False,
      "from mmcv.device import get_device; from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "the import works; the wrappers' use below is what breaks. mmcv.device.npu needs mmcv >= 1.7 "
      "(unconfirmed in the knowledge base)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazy and harmless; torch.manual_seed seeds the NPU"),
    C("model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = NPUDistributedDataParallel(",
      "MMDDP scatters inputs with CUDA streams; mmcv's NPU subclass is the documented replacement "
      "(unconfirmed in the knowledge base)"),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "Module.cuda() needs a CUDA build"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() initialises CUDA"),
    C("model = MMDataParallel(", "distributed_framework", R, True, "model = NPUDataParallel(",
      "MMDataParallel subclasses nn.DataParallel, which Ascend marks unsupported"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", R, True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "single-device path (the default in DAFormer)"),
])

E("hrda_config", "configs/hrda/gtaHR2csHR_hrda_mitb5_full.py", "explicit_replacement",
  "lhoyer/HRDA fully dumped mmseg config (work_dirs/*/*.py): dist_params, cudnn_benchmark, gpu_model", [
    C("dist_params = dict(backend='nccl')", "dist_backend", R, True, "dist_params = dict(backend='hccl')",
      "mmcv init_dist(launcher, **cfg.dist_params) passes it to init_process_group for every distributed run"),
])

# ---------------------------------------------------------------------------------------------
# ADVENT (valeoai) adversarial entropy minimisation
# ---------------------------------------------------------------------------------------------
E("advent_train_uda", "advent/domain_adaptation/train_UDA.py", "explicit_replacement",
  "valeoai/ADVENT advent/domain_adaptation/train_UDA.py (device = cfg.GPU_ID int ordinal)", [
    C("=device = cfg.GPU_ID", "device_type", R, True, "device = torch.device(f'npu:{cfg.GPU_ID}')",
      "an int device means CUDA ordinal to .to(device) and loss_calc's label.to(device), so the models "
      "and labels would be sent to cuda:0"),
    C("pred_src_aux, pred_src_main = model(images_source.cuda(device))", "tensor_to_device", R, True,
      "pred_src_aux, pred_src_main = model(images_source.to(device))", "source batch (AdvEnt)"),
    C("pred_trg_aux, pred_trg_main = model(images.cuda(device))", "tensor_to_device", R, True,
      "pred_trg_aux, pred_trg_main = model(images.to(device))", "target batch (AdvEnt)"),
    C("device = cfg.GPU_ID  # minent", "device_type", R, True,
      "device = torch.device(f'npu:{cfg.GPU_ID}')  # minent: segmentation network only",
      "same int-ordinal problem in the MinEnt loop"),
    C("model(images_src.cuda(device))", "tensor_to_device", R, True,
      "pred_src_aux, pred_src_main = model(images_src.to(device))", "source batch (MinEnt)"),
    C("model(images_trg.cuda(device))", "tensor_to_device", R, True,
      "pred_trg_aux, pred_trg_main = model(images_trg.to(device))", "target batch (MinEnt)"),
])

E("advent_func", "advent/utils/func.py", "explicit_replacement",
  "valeoai/ADVENT advent/utils/func.py (bce_loss via get_device(), checkpoint loading for evaluation)", [
    C("y_truth_tensor = y_truth_tensor.to(y_pred.get_device())", "tensor_to_device", R, True,
      "y_truth_tensor = y_truth_tensor.to(y_pred.device)",
      "get_device() returns the bare NPU index, and .to(<int>) means cuda:<int>"),
    C("saved_state_dict = torch.load(checkpoint)", "device_type", R, True,
      "saved_state_dict = torch.load(checkpoint, map_location='cpu')",
      "the released ADVENT/MinEnt checkpoints were saved from CUDA tensors; without map_location "
      "torch.load tries to restore them onto a CUDA device"),
    C("model.cuda(device)", "tensor_to_device", R, True, "model.to(device)",
      "device is cfg.GPU_ID; Module.cuda() needs a CUDA build"),
])

# ---------------------------------------------------------------------------------------------
# CyCADA (jhoffman/cycada_release) and the CycleGAN code it builds on
# ---------------------------------------------------------------------------------------------
E("cycada_fcn_adda", "scripts/train_fcn_adda.py", "explicit_replacement",
  "jhoffman/cycada_release scripts/train_fcn_adda.py (pixel-level ADDA for FCN8s, click CLI, --gpu)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("target_val_vec = (target_val * torch.ones(1, h, w)).long().cuda()", "tensor_to_device", R, False,
      "target_val_vec = (target_val * torch.ones(1, h, w, device=score.device)).long()",
      "discriminator_loss is not called by main(); edited for consistency"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu",
      "device selection via --gpu; the Ascend runtime reads ASCEND_RT_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES "
      "has no documented effect there)"),
    C("weights_init=weights_discrim).cuda()", "tensor_to_device", R, True,
      "weights_init=weights_discrim).npu()", "discriminator"),
    C("class_weights = torch.from_numpy(weights).float().cuda()", "tensor_to_device", R, True,
      "class_weights = torch.from_numpy(weights).float().npu()", "--cls_weights path"),
])

E("cycada_util", "cycada/tools/util.py", "explicit_replacement",
  "jhoffman/cycada_release cycada/tools/util.py (make_variable moves tensors to GPU when available)", [
    C("state_dict = torch.load(filename)", "device_type", R, True,
      "state_dict = torch.load(filename, map_location='cpu')",
      "loads the released source-only / CycleGAN-adapted weights, saved from CUDA tensors"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      "if torch.npu.is_available():",
      "False on an NPU host: every batch silently stays on the CPU while the model is on the NPU"),
    C("tensor = tensor.cuda()", "tensor_to_device", R, False, "tensor = tensor.npu()",
      "only reached once the branch above is taken; must then change too"),
])

E("cyclegan_networks", "cyclegan/models/networks.py", "device_branch_or_abstraction",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py as used by CyCADA (init_net with gpu_ids)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", R, True,
      "assert torch.npu.is_available()", "fails on an NPU host whenever --gpu_ids is non-empty (the default)"),
    C("net.to(gpu_ids[0])", "tensor_to_device", R, True, "net.to(f'npu:{gpu_ids[0]}')",
      "an int passed to .to() is a CUDA ordinal"),
    C("net = torch.nn.DataParallel(net, gpu_ids)  # multi-GPUs", "distributed_framework", R, True,
      "# nn.DataParallel unsupported on Ascend: keep the bare module (DDP for multi-NPU)",
      "DataParallel is marked unsupported; the wrapper is applied even for a single id"),
])

E("cyclegan_base_model", "cyclegan/models/base_model.py", "device_branch_or_abstraction",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/base_model.py (self.device from gpu_ids, save/load)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", R, True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')",
      "set_input moves every batch to self.device; load_networks also uses it as map_location"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "device_type", B, True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "on an NPU host the else branch runs net.cpu() and never moves the network back, so training "
      "silently continues on the CPU (or fails on device mismatch) after the first checkpoint"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", R, False, "net.to(self.device)",
      "inside the branch above; only reached once that is fixed"),
])

# ---------------------------------------------------------------------------------------------
# UniMatch / U2PL / CPS (TorchSemiSeg): semi-supervised semantic segmentation
# ---------------------------------------------------------------------------------------------
E("unimatch_dist_helper", "util/dist_helper.py", "explicit_replacement",
  "LiheYoung/UniMatch util/dist_helper.py (SLURM or torch.distributed.launch, setup_distributed)", [
    C('def setup_distributed(backend="nccl", port=None):', "dist_backend", R, True,
      'def setup_distributed(backend="hccl", port=None):',
      "every caller relies on the default backend"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, True, "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: rank % num_gpus divides by zero"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", R, True,
      "torch.npu.set_device(rank % num_gpus)", "per-rank device binding"),
])

E("unimatch_train", "unimatch.py", "explicit_replacement",
  "LiheYoung/UniMatch unimatch.py (weak-to-strong consistency, CutMix boxes, feature perturbation)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("=img = img.cuda()", "tensor_to_device", R, True, "img = img.npu()", "evaluation images"),
    C("final = torch.zeros(b, 19, h, w).cuda()", "tensor_to_device", R, True,
      "final = torch.zeros(b, 19, h, w, device=img.device)", "sliding-window accumulator (Cityscapes)"),
    C("reduced_intersection = torch.from_numpy(intersection).cuda()", "tensor_to_device", R, True,
      "reduced_intersection = torch.from_numpy(intersection).npu()",
      "HCCL all_reduce needs device tensors (int64 is in the supported all_reduce dtypes)"),
    C("reduced_union = torch.from_numpy(union).cuda()", "tensor_to_device", R, True,
      "reduced_union = torch.from_numpy(union).npu()", "metric counters"),
    C("reduced_target = torch.from_numpy(target).cuda()", "tensor_to_device", R, True,
      "reduced_target = torch.from_numpy(target).npu()", "metric counters"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "before DDP"),
    C("criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device", R, False,
      "criterion_l = nn.CrossEntropyLoss(**cfg['criterion']['kwargs']).npu(local_rank)",
      "the shipped configs pass no class weights, so the module holds no tensor and .cuda() is a no-op"),
    C("criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).cuda(local_rank)", "tensor_to_device", R, False,
      "criterion_l = ProbOhemCrossEntropy2d(**cfg['criterion']['kwargs']).npu(local_rank)",
      "OHEM wrapper around an unweighted CrossEntropyLoss: no tensors, no-op"),
    C("criterion_u = nn.CrossEntropyLoss(reduction='none').cuda(local_rank)", "tensor_to_device", R, False,
      "criterion_u = nn.CrossEntropyLoss(reduction='none').npu(local_rank)", "parameter-free module: no-op"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.get('amp', False))", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.get('amp', False))",
      "with amp enabled the CUDA scaler disables itself on an NPU host (no loss scaling)"),
    C("img_x, mask_x = img_x.cuda(), mask_x.cuda()", "tensor_to_device", R, True,
      "img_x, mask_x = img_x.npu(), mask_x.npu()", "labeled batch"),
    C("img_u_w = img_u_w.cuda()", "tensor_to_device", R, True, "img_u_w = img_u_w.npu()", "weak view"),
    C("img_u_s1, img_u_s2, ignore_mask = img_u_s1.cuda()", "tensor_to_device", R, True,
      "img_u_s1, img_u_s2, ignore_mask = img_u_s1.npu(), img_u_s2.npu(), ignore_mask.npu()", "strong views"),
    C("cutmix_box1, cutmix_box2 = cutmix_box1.cuda()", "tensor_to_device", R, True,
      "cutmix_box1, cutmix_box2 = cutmix_box1.npu(), cutmix_box2.npu()", "CutMix boxes"),
    C("img_u_w_mix = img_u_w_mix.cuda()", "tensor_to_device", R, True, "img_u_w_mix = img_u_w_mix.npu()",
      "mixing source batch"),
    C("img_u_s1_mix, img_u_s2_mix = img_u_s1_mix.cuda()", "tensor_to_device", R, True,
      "img_u_s1_mix, img_u_s2_mix = img_u_s1_mix.npu(), img_u_s2_mix.npu()", "mixing source batch"),
    C("ignore_mask_mix = ignore_mask_mix.cuda()", "tensor_to_device", R, True,
      "ignore_mask_mix = ignore_mask_mix.npu()", "mixing ignore mask"),
    C("with torch.cuda.amp.autocast(enabled=cfg.get('amp', False)):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=cfg.get('amp', False)):",
      "CUDA autocast is inactive for NPU tensors: amp configs silently run in fp32"),
])

E("unimatch_train_sh", "scripts/train.sh", "explicit_replacement",
  "UniMatch / ST++ scripts/train.sh (torch.distributed.launch or srun --gres=gpu, NCCL env, nvidia-smi check)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device selection; the Ascend runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL tuning; no effect under HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL tuning; no effect under HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL logging; the CANN/HCCL log level is ASCEND_GLOBAL_LOG_LEVEL"),
    C("NGPUS_VISIBLE=$(nvidia-smi --query-gpu=name", "torch_cuda_api", R, True,
      "NGPUS_VISIBLE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent: without pipefail the count is 0 and the check below exits 1"),
    C("--gres=gpu:$1", "env_var", R, False, "srun --mpi=pmi2 -p $3 -n $1 --ntasks-per-node=$1 \\",
      "SLURM GPU gres; how an Ascend cluster exposes NPUs to SLURM is site-specific (unconfirmed)"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total", "torch_cuda_api", R, False,
      "npu-smi info >> $save_path/$now.log || true", "guarded by || true; only the report is lost"),
])

E("u2pl_loss_helper", "u2pl/utils/loss_helper.py", "explicit_replacement",
  "Haochen-Wang409/U2PL u2pl/utils/loss_helper.py (contrastive memory bank loss, OHEM criterion)", [
    C("label = F.one_hot(temp_tar.clone().detach(), num_cls).float().cuda()", "tensor_to_device", R, True,
      "label = F.one_hot(temp_tar.clone().detach(), num_cls).float()  # already on target's device",
      "RCE loss"),
    C("reco_loss = torch.tensor(0.0).cuda()", "tensor_to_device", R, True,
      "reco_loss = torch.tensor(0.0, device=rep.device)", "contrastive loss accumulator"),
    C("num_queries, 1, num_feat)).cuda()", "tensor_to_device", R, True,
      "prototype = torch.zeros((prob_indices_l.shape[-1], num_queries, 1, num_feat), device=rep.device)",
      "momentum prototypes"),
    C("anchor_feat = seg_feat_low_entropy_list[i][seg_low_entropy_idx].clone().cuda()", "tensor_to_device", R, True,
      "anchor_feat = seg_feat_low_entropy_list[i][seg_low_entropy_idx].clone()",
      "already on the device; .cuda() fails on an NPU host"),
    C("negative_feat = memobank[valid_classes[i]][0].clone().cuda()", "tensor_to_device", R, True,
      "negative_feat = memobank[valid_classes[i]][0].clone().to(rep.device)", "memory-bank negatives"),
    C(".repeat(num_queries, 1, 1).cuda()", "tensor_to_device", R, True,
      "positive_feat = seg_proto[i].unsqueeze(0).unsqueeze(0).repeat(num_queries, 1, 1)", "class prototype"),
    C("torch.zeros(num_queries).long().cuda()", "tensor_to_device", R, True,
      "reco_loss = reco_loss + F.cross_entropy(seg_logits / temp, torch.zeros(num_queries, dtype=torch.long, device=seg_logits.device))",
      "InfoNCE targets"),
    C("[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0", "tensor_to_device", R, True,
      "[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]).npu()",
      "class weights of Criterion(use_weight=True)"),
    C("0.9539, 0.9843, 1.1116", "tensor_to_device", R, True,
      "0.9539, 0.9843, 1.1116, 0.9037, 1.0865, 1.0955, 1.0865, 1.1529, 1.0507]).npu()",
      "OHEM class weights (use_weight=True)"),
])

E("cps_train", "exp.city/city8.res50v3+.CPS+CutMix/train.py", "explicit_replacement",
  "charlesCXK/TorchSemiSeg CPS+CutMix train.py (apex DDP + apex SyncBatchNorm, furnace Engine)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("from apex.parallel import DistributedDataParallel, SyncBatchNorm", "distributed_framework", R, True,
      "from torch.nn.parallel import DistributedDataParallel; from torch.nn import SyncBatchNorm",
      "NVIDIA apex.parallel (CUDA syncbn kernels, CUDA-stream DDP) is not available on NPU; the except "
      "branch turns its absence into a hard ImportError"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "inside an is_available() check that is False on NPU; torch.manual_seed seeds the NPU anyway"),
    C("if torch.cuda.is_available():  # put the model", "device_type", B, True,
      "if torch.npu.is_available():  # put the model on this rank's NPU before wrapping",
      "False on an NPU host: the model is neither moved nor wrapped in DDP, yet the loop all_reduces "
      "losses over HCCL"),
    C("=model.cuda()", "tensor_to_device", R, False, "model.npu()",
      "inside the branch above; only reached once that is fixed"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently selects the CPU on an NPU host"),
    C("model = DataParallelModel(model, device_ids=engine.devices)", "distributed_framework", R, True,
      "# DataParallelModel (furnace sync_bn, torch.cuda.comm) has no NPU path; single NPU or DDP",
      "furnace's DataParallel variant"),
    C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "imgs = imgs.npu(non_blocking=True)", "labeled images"),
    C("gts = gts.cuda(non_blocking=True)", "tensor_to_device", R, True, "gts = gts.npu(non_blocking=True)",
      "labels"),
    C("unsup_imgs_0 = unsup_imgs_0.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "unsup_imgs_0 = unsup_imgs_0.npu(non_blocking=True)", "unlabeled batch 0"),
    C("unsup_imgs_1 = unsup_imgs_1.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "unsup_imgs_1 = unsup_imgs_1.npu(non_blocking=True)", "unlabeled batch 1"),
    C("mask_params = mask_params.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "mask_params = mask_params.npu(non_blocking=True)", "CutMix masks"),
])

E("cps_engine", "furnace/engine/engine.py", "explicit_replacement",
  "TorchSemiSeg / TorchSeg furnace/engine/engine.py (Engine: env:// init, checkpoints)", [
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True,
      "torch.npu.set_device(self.local_rank)", "per-rank device binding"),
    C("dist.init_process_group(backend=\"nccl\", init_method='env://')", "dist_backend", R, True,
      "dist.init_process_group(backend=\"hccl\", init_method='env://')", "NCCL does not exist on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context; edited so the NPU cache is released"),
])

# ---------------------------------------------------------------------------------------------
# Offline pseudo-label generation (CBST / CRST / ProDA-style)
# ---------------------------------------------------------------------------------------------
E("pseudo_label_gen", "tools/generate_pseudo_labels.py", "explicit_replacement",
  "CBST/CRST/ProDA-style tools/generate_pseudo_labels.py (multi-scale TTA, class-balanced thresholds)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return torch.bfloat16  # Atlas A2/A3 support bf16; no SM version to test",
      "explicit port: torch.npu.get_device_capability() returns None unless TORCH_NPU_DEVICE_CAPABILITY "
      "is set, so the unpacking fails"),
    C("with torch.cuda.amp.autocast(enabled=use_amp", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp, dtype=amp_dtype() if use_amp else torch.float16):",
      "--fp16: CUDA autocast is inactive for NPU tensors, inference silently stays fp32"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "device selection via --gpu"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "every tensor and the model follow it"),
    C("torch.backends.cudnn.benchmark = True", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "multi-scale TTA feeds many input shapes; binary (non-JIT) kernels avoid recompiling per shape "
      "(performance only; the cudnn flag itself is harmless)"),
    C('map_location="cuda:0"', "device_type", R, True,
      'checkpoint = torch.load(args.checkpoint, map_location="cpu")',
      "map_location='cuda:0' deserialises onto CUDA and fails on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "initialises CUDA and raises without a CUDA build"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      'f"peak memory {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB")',
      "returns 0 without an initialised CUDA context (no error); only the report is wrong"),
])

# ---------------------------------------------------------------------------------------------
# Domain-adaptive / semi-supervised detection
# ---------------------------------------------------------------------------------------------
E("darcnn_roi_ops", "maskrcnn_benchmark/layers/roi_ops.py", "explicit_replacement",
  "krumo/Domain-Adaptive-Faster-RCNN-PyTorch on maskrcnn-benchmark: layers/roi_align.py + roi_pool.py + nms.py (_C + apex amp)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nimport torchvision_npu  # NPU kernels behind torchvision.ops.nms / roi_align / roi_pool",
      "the replacement ops come from torchvision_npu"),
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", R, False,
      "from torchvision.ops import nms as _tv_nms, roi_align as _tv_roi_align, roi_pool as _tv_roi_pool",
      "with no CUDA the setup.py builds a CPU-only _C, so the import works; the calls below are what break"),
    C("=from apex import amp", "amp", R, False, "# apex amp.float_function hints dropped (native autocast)",
      "decorators only act after amp.initialize; the Ascend apex patch provides amp but float_function is "
      "unconfirmed"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", R, True,
      "output = _tv_roi_align(input, roi, output_size, spatial_scale, sampling_ratio, aligned=False)",
      "the CPU kernel of a CPU-only _C cannot read NPU memory"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", R, True,
      "# backward handled by autograd through torchvision.ops.roi_align", "custom backward kernel"),
    C("output, argmax = _C.roi_pool_forward(", "custom_cuda_extension", R, True,
      "output = _tv_roi_pool(input, roi, output_size, spatial_scale)", "ROIPool forward"),
    C("grad_input = _C.roi_pool_backward(", "custom_cuda_extension", R, True,
      "# backward handled by autograd through torchvision.ops.roi_pool", "ROIPool backward"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", R, True,
      "nms = _tv_nms  # torchvision_npu registers the NPU kernel", "NMS on NPU proposals"),
])

E("darcnn_setup", "setup.py", "explicit_replacement",
  "maskrcnn-benchmark setup.py as shipped by Domain-Adaptive Faster R-CNN forks (CppExtension/CUDAExtension)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", R, False,
      'if torch.cuda.is_available() and CUDA_HOME is not None:  '
      '# never true on an NPU host: _C stays CPU-only, the NPU ops come from torchvision_npu',
      "without CUDA this builds a CPU-only _C, which is harmless once layers/roi_ops.py calls torchvision "
      "ops; only FORCE_CUDA=1 (set by many Dockerfiles) makes the build fail for lack of nvcc"),
    C("extension = CUDAExtension", "custom_cuda_extension", R, False,
      "extension = NpuExtension  # torch_npu.utils.cpp_extension, only if Ascend C kernels are written",
      "not reached without CUDA"),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", X, False, None,
      "nvcc flags; not reached without CUDA"),
])

E("ateacher_trainer", "adapteacher/engine/trainer.py", "device_branch_or_abstraction",
  "facebookresearch/adaptive_teacher adapteacher/engine/trainer.py (detectron2 mean-teacher, discriminator branch)", [
    C("from torch.cuda.amp import autocast", "amp", R, True,
      "from torch.npu.amp import autocast",
      "SOLVER.AMP.ENABLED: CUDA autocast is inactive for NPU tensors, the student silently trains in fp32"),
    C("self.grad_scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self.grad_scaler = torch.npu.amp.GradScaler()",
      "the CUDA scaler disables itself without CUDA, so fp16 runs without loss scaling"),
])

# ---------------------------------------------------------------------------------------------
# Environment files
# ---------------------------------------------------------------------------------------------
E("daformer_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DAFormer/HRDA-style docker/Dockerfile (pytorch/pytorch CUDA devel base, mmcv-full cu110 wheel)", [
    C('ARG CUDA="11.0"', "torch_cuda_api", R, False, 'ARG CANN="8.3.rc1"',
      "only feeds the FROM tag below"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "torch_cuda_api", R, True,
      "FROM ascendai/cann:${CANN}-910b-ubuntu22.04-py3.10  # then pip install torch==2.1.0 torch-npu==2.1.0.post17",
      "CUDA build of PyTorch without torch_npu/CANN; nothing in the image can reach an NPU "
      "(the CANN base-image tag in the ported line is illustrative, from Ascend/cann-container-image)"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "custom_cuda_extension", X, False, None,
      "nvcc architecture list; no effect without nvcc"),
    C('ENV TORCH_NVCC_FLAGS=', "custom_cuda_extension", X, False, None, "nvcc flags; no effect without nvcc"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", X, True, None,
      "forces CUDAExtension builds (mmcv-full from source on aarch64, maskrcnn-benchmark) that then fail "
      "without nvcc"),
    C("RUN apt-key adv --fetch-keys https://developer.download.nvidia.com", "torch_cuda_api", X, False, None,
      "GPG fix for the NVIDIA apt repos of the CUDA base image; irrelevant on a CANN base"),
    C("mmcv-full==1.3.7 -f https://download.openmmlab.com/mmcv/dist/cu110", "custom_cuda_extension", R, True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv-full==1.7.2  # built against torch_npu",
      "cu110 wheel of mmcv's CUDA ops for torch 1.7; no build exists for torch_npu (mmcv NPU ops need >= 1.7, "
      "details unconfirmed)"),
    C("nvidia-ml-py3==7.352.0 gpustat==1.0.0", "torch_cuda_api", X, False, None,
      "NVML-based monitoring; no NVML on an NPU host (use npu-smi / torch.npu.utilization)"),
    C("get_compiling_cuda_version", "custom_cuda_extension", R, False,
      "RUN python -c \"import mmcv, torch, torch_npu; print(mmcv.__version__, torch.__version__, torch.npu.is_available())\"",
      "prints 'not available' for a CUDA-less build but does not fail"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
      "read only by the NVIDIA container runtime; the Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None,
      "NVIDIA container runtime only"),
])

E("daformer_requirements", "requirements.txt", "explicit_replacement",
  "DAFormer requirements.txt (torch==1.7.1+cu110 from torch_stable.html, mmcv-full, timm, kornia)", [
    C("=-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", R, False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take the CPU torch wheels from the cpu index (aarch64 uses plain PyPI); the old index is harmless"),
    C("# ---- deep learning framework ----", "import_torch_npu", A, True,
      "torch-npu==2.1.0.post17  # must match the torch version below (2.1.0) and the installed CANN",
      "torch_npu has to be installed next to a matching CPU torch"),
    C("torch==1.7.1+cu110", "torch_cuda_api", R, True, "torch==2.1.0",
      "CUDA 11.0 build; torch_npu exists only for torch >= 1.8 and needs the CPU wheel of the same version"),
    C("torchvision==0.8.2+cu110", "torch_cuda_api", R, True, "torchvision==0.16.0",
      "CUDA build; must match the torch 2.1.0 used with torch_npu"),
    C("=mmcv-full==1.3.7", "custom_cuda_extension", R, False, "mmcv-full==1.7.2",
      "mmcv-full 1.3.7 predates mmcv's NPU device support used by the ported apis/train.py (unconfirmed)"),
])

E("dacs_environment_yml", "environment.yml", "explicit_replacement",
  "DACS-style exported conda environment.yml (pytorch 1.4 cuda10.1 build, cudatoolkit, cudnn, pynvml)", [
    C("cudatoolkit=10.1.243", "torch_cuda_api", X, False, None,
      "CUDA runtime libraries; useless without a GPU but they resolve on linux-64"),
    C("cudnn=7.6.5=cuda10.1_0", "torch_cuda_api", X, False, None, "cuDNN; useless without a GPU"),
    C("python=3.7.6=h0371630_2", "import_torch_npu", R, True, "- python=3.9",
      "torch 2.x + torch_npu wheels need Python >= 3.8 (2.1.0: 3.8-3.11)"),
    C("pytorch=1.4.0=py3.7_cuda10.1.243_cudnn7.6.3_0", "torch_cuda_api", R, True,
      "- pytorch=2.1.0=*cpu*  # (or pip torch==2.1.0)",
      "CUDA 10.1 build of torch 1.4; torch_npu needs a matching CPU torch 2.x"),
    C("torchvision=0.5.0=py37_cu101", "torch_cuda_api", R, True, "- torchvision=0.16.0=*cpu*",
      "CUDA build; must match torch"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n    - torch-npu==2.1.0.post17",
      "add torch_npu (pip only) for the matching torch"),
    C("pynvml==8.0.4", "torch_cuda_api", X, False, None,
      "NVML bindings; nvmlInit fails without an NVIDIA driver (only used for monitoring; unconfirmed use)"),
])
