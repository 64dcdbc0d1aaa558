# Labels for probe353 (weakly-supervised semantic segmentation / object localization, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# recurring notes
DP_NOTE = ("torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, msFmkTransplt: use DDP); "
           "port runs the model on one NPU with .npu()")
DP_INPUT = ("consequence of dropping nn.DataParallel: DP used to scatter this CPU batch to the GPUs, "
            "without it the batch must be moved to the NPU explicitly")
DP_MODULE = "consequence of dropping nn.DataParallel: the bare model has no .module attribute"
PIN = ("DataLoader pinning: torch 2.1 sets _pin_memory = pin_memory and torch.cuda.is_available() when "
       "pin_memory_device is empty, so pinning is silently off on an NPU host; performance only, unconfirmed in knowledge")
EMPTY = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cache is not released (perf only)"
SEED = ("torch.cuda.manual_seed* is a silent no-op without CUDA; torch.manual_seed already seeds the NPU generator, "
        "rename only for clarity")
IMPORT_STEP = ("torch_npu must be imported before .npu()/torch.npu are used (these repos pin torch<2.5, "
               "no backend autoload); each IRN-style step can be run on its own via the *_pass flags")
FUSED = ("msFmkTransplt performance advice: torch.optim.* -> torch_npu/apex NpuFused*; performance only, "
         "unconfirmed that the fused class tolerates the per-step param_groups lr rewrite")
SET_ENV = "CANN environment must be sourced before python imports torch_npu (libhccl.so / libascendcl.so otherwise not found)"


E("irn_run_sample", "run_sample.py", "explicit_replacement",
  "IRN (jiwoon-ahn/irn) run_sample.py pipeline driver, fork that selects GPUs via --gpus", [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: make_cam/make_sem_seg would spawn on every NPU "
        "instead of the requested ones"),
  ])

E("irn_train_cam", "step/train_cam.py", "explicit_replacement",
  "IRN step/train_cam.py (ResNet-50 CAM training with nn.DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
      C("=img = pack['img']", "tensor_to_device", "replace", True,
        "img = pack['img'].npu(non_blocking=True)", DP_INPUT),
      C("labels = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "labels = pack['label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("shuffle=False, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("img = pack['img']  # stays on CPU", "tensor_to_device", "replace", True,
        "img = pack['img'].npu(non_blocking=True)", DP_INPUT),
      C("=label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "label = pack['label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("torch.save(model.module.state_dict()", "unsupported_op_workaround", "replace", True,
        "torch.save(model.state_dict(), args.cam_weights_name + '.pth')", DP_MODULE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
  ])

E("irn_make_cam", "step/make_cam.py", "explicit_replacement",
  "IRN step/make_cam.py (multi-scale CAM inference, torch.multiprocessing.spawn over torch.cuda.device_count())", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "spawned workers unpickle _work from this module in a fresh interpreter, so torch_npu has to be imported "
        "here (run_sample's main guard is not re-executed in the children)"),
      C("device_count()  # one worker process per visible GPU", "torch_cuda_api", "replace", True,
        "n_gpus = torch.npu.device_count()  # one worker process per visible NPU",
        "returns 0 on an NPU host -> ZeroDivisionError in num_workers // n_gpus"),
      C("with torch.no_grad(), cuda.device(process_id):", "torch_cuda_api", "replace", True,
        "with torch.no_grad(), torch.npu.device(process_id):",
        "torch.cuda.device context initialises CUDA and fails without an NVIDIA driver"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "module move to the current device"),
      C("outputs = [model(img[0].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "outputs = [model(img[0].npu(non_blocking=True))", "CUDA tensor move"),
      C("=n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_gpus = torch.npu.device_count()",
        "0 on an NPU host: split_dataset(dataset, 0) and spawn(nprocs=0) silently produce no CAMs"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
  ])

E("irn_train_irn", "step/train_irn.py", "explicit_replacement",
  "IRN step/train_irn.py (inter-pixel relation network: boundary + displacement field training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
      C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("shuffle=False, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("img = pack['img'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "img = pack['img'].npu(non_blocking=True)", "CUDA tensor move"),
      C("bg_pos_label = pack['aff_bg_pos_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "bg_pos_label = pack['aff_bg_pos_label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("fg_pos_label = pack['aff_fg_pos_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "fg_pos_label = pack['aff_fg_pos_label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("neg_label = pack['aff_neg_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "neg_label = pack['aff_neg_label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("aff, dp = model(pack['img'].cuda(non_blocking=True), False)", "tensor_to_device", "replace", True,
        "aff, dp = model(pack['img'].npu(non_blocking=True), False)", "CUDA tensor move"),
      C("model.module.mean_shift.running_mean", "unsupported_op_workaround", "replace", True,
        "model.mean_shift.running_mean = torch.mean(torch.stack(dp_mean_list), dim=0)", DP_MODULE),
      C("torch.save(model.module.state_dict(), args.irn_weights_name)", "unsupported_op_workaround", "replace", True,
        "torch.save(model.state_dict(), args.irn_weights_name)", DP_MODULE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
  ])

E("irn_sem_seg_labels", "step/make_sem_seg_labels.py", "explicit_replacement",
  "IRN step/make_sem_seg_labels.py (random-walk propagation of CAMs, one spawned process per GPU)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "spawned workers import this module afresh; torch_npu must be imported here"),
      C("device_count()  # one worker process per visible GPU", "torch_cuda_api", "replace", True,
        "n_gpus = torch.npu.device_count()  # one worker process per visible NPU",
        "0 on an NPU host -> ZeroDivisionError"),
      C("with torch.no_grad(), cuda.device(process_id):", "torch_cuda_api", "replace", True,
        "with torch.no_grad(), torch.npu.device(process_id):", "CUDA device context fails without CUDA"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "module move"),
      C("edge, dp = model(pack['img'][0].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "edge, dp = model(pack['img'][0].npu(non_blocking=True))", "CUDA tensor move"),
      C("cam_downsized_values = cams.cuda()", "tensor_to_device", "replace", True,
        "cam_downsized_values = cams.npu()", "CUDA tensor move"),
      C("=n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_gpus = torch.npu.device_count()", "0 on an NPU host: nothing is spawned, no labels written"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
  ])

E("irn_indexing", "misc/indexing.py", "explicit_replacement",
  "IRN misc/indexing.py (PathIndex, edge_to_affinity, sparse->dense affinity, random walk)", [
      C("paths_indices[i] = paths_indices[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "paths_indices[i] = paths_indices[i].npu(non_blocking=True)", "index tensors moved with .cuda()"),
      C("torch.ones([n_vertices]), affinity_sparse])).to_dense().cuda()", "tensor_to_device", "replace", True,
        "torch.ones([n_vertices]), affinity_sparse])).to_dense().npu()",
        "only the final .cuda() changes: the sparse tensor is built and densified on the CPU, which stays valid "
        "(sparse kernels are the part that would raise on NPU)"),
  ])

E("irn_resnet50_irn", "net/resnet50_irn.py", "explicit_replacement",
  "IRN net/resnet50_irn.py (edge + displacement branches, AffinityDisplacementLoss with registered index buffers)",
  [])

E("irn_torchutils", "misc/torchutils.py", "explicit_replacement",
  "IRN misc/torchutils.py (PolyOptimizer/SGDR subclasses of torch.optim.SGD, split_dataset, small helpers)", [
      C("class PolyOptimizer(torch.optim.SGD):", "fused_optimizer", "replace", False,
        "class PolyOptimizer(torch_npu.optim.NpuFusedSGD):", FUSED),
      C("class SGDROptimizer(torch.optim.SGD):", "fused_optimizer", "replace", False,
        "class SGDROptimizer(torch_npu.optim.NpuFusedSGD):", FUSED),
      C("return max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", True,
        "return max(torch.npu.device_count(), 1)",
        "silently reports 1 worker on an 8-NPU host (device_count() is 0 without CUDA)"),
      C("out[k] = out[k].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "out[k] = out[k].npu(non_blocking=True)", "CUDA tensor move"),
  ])

E("psa_train_aff", "train_aff.py", "explicit_replacement",
  "AffinityNet / PSA (jiwoon-ahn/psa) train_aff.py (ResNet-38 affinity training, nn.DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; torch_npu must be imported before .npu() (torch<2.5 in this stack)"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", SEED),
      C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True,", PIN),
      C("weights_dict = torch.load(args.weights)", "device_type", "replace", False,
        "weights_dict = torch.load(args.weights, map_location='cpu')",
        "a .pth produced by train_cls.py on a GPU holds CUDA tensors and cannot be deserialised on a host without "
        "CUDA; depends on how the checkpoint was saved (unconfirmed)"),
      C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("aff = model.forward(pack[0])", "tensor_to_device", "replace", True,
        "aff = model.forward(pack[0].npu(non_blocking=True))", DP_INPUT),
      C("bg_label = pack[1][0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "bg_label = pack[1][0].npu(non_blocking=True)", "CUDA tensor move"),
      C("fg_label = pack[1][1].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "fg_label = pack[1][1].npu(non_blocking=True)", "CUDA tensor move"),
      C("neg_label = pack[1][2].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "neg_label = pack[1][2].npu(non_blocking=True)", "CUDA tensor move"),
      C("torch.save(model.module.state_dict()", "unsupported_op_workaround", "replace", True,
        "torch.save(model.state_dict(), args.session_name + '.pth')", DP_MODULE),
  ])

E("psa_infer_aff", "infer_aff.py", "explicit_replacement",
  "AffinityNet / PSA infer_aff.py (random walk with the learned affinity matrix)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("model.load_state_dict(torch.load(args.weights))", "device_type", "replace", False,
        "model.load_state_dict(torch.load(args.weights, map_location='cpu'))",
        "fails only if the affinity checkpoint was trained on a GPU (CUDA tensors inside); unconfirmed"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "module move"),
      C("shuffle=False, num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "infer_data_loader = DataLoader(infer_dataset, shuffle=False, num_workers=args.num_workers, "
        "pin_memory=True, pin_memory_device='npu')", PIN),
      C("aff = model.forward(img.cuda(), True)", "tensor_to_device", "replace", True,
        "aff = model.forward(img.npu(), True)", "CUDA tensor move"),
      C("cam_rw = torch.matmul(cam_vec.cuda(), trans_mat)", "tensor_to_device", "replace", True,
        "cam_rw = torch.matmul(cam_vec.npu(), trans_mat)", "CUDA tensor move"),
  ])

E("psa_resnet38_aff", "network/resnet38_aff.py", "explicit_replacement",
  "AffinityNet / PSA network/resnet38_aff.py (pairwise feature affinities, sparse->dense affinity matrix)", [
      C("ff = torch.index_select(x, dim=2, index=ind_from.cuda(non_blocking=True))", "tensor_to_device", "replace",
        True, "ff = torch.index_select(x, dim=2, index=ind_from.npu(non_blocking=True))", "CUDA tensor move"),
      C("ft = torch.index_select(x, dim=2, index=ind_to.cuda(non_blocking=True))", "tensor_to_device", "replace",
        True, "ft = torch.index_select(x, dim=2, index=ind_to.npu(non_blocking=True))", "CUDA tensor move"),
      C("torch.cat([aff, torch.ones([area]), aff])).to_dense().cuda()", "tensor_to_device", "replace", True,
        "torch.cat([aff, torch.ones([area]), aff])).to_dense().npu()",
        "sparse assembly stays on the CPU (fine); only the dense result is moved"),
  ])

E("seam_train", "train_SEAM.py", "explicit_replacement",
  "SEAM (YudeWang/SEAM) train_SEAM.py (equivariant attention, nn.DataParallel, tensorboard visualisation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED),
      C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True,", PIN),
      C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("label = label.cuda(non_blocking=True).unsqueeze(2).unsqueeze(3)", "tensor_to_device", "replace", True,
        "label = label.npu(non_blocking=True).unsqueeze(2).unsqueeze(3)", "CUDA tensor move"),
      C("cam1, cam_rv1 = model(img1)", "tensor_to_device", "replace", True,
        "cam1, cam_rv1 = model(img1.npu(non_blocking=True))",
        DP_INPUT + "; moved at the call so the CPU-side visualisation of img1 keeps working"),
      C("cam2, cam_rv2 = model(img2)", "tensor_to_device", "replace", True,
        "cam2, cam_rv2 = model(img2.npu(non_blocking=True))", DP_INPUT),
      C("torch.save(model.module.state_dict()", "unsupported_op_workaround", "replace", True,
        "torch.save(model.state_dict(), args.session_name + '.pth')", DP_MODULE),
  ])

E("seam_infer", "infer_SEAM.py", "explicit_replacement",
  "SEAM infer_SEAM.py (multi-scale CAM inference with torch.nn.parallel.replicate + per-GPU threads, CRF)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("model.load_state_dict(torch.load(args.weights))", "device_type", "replace", True,
        "model.load_state_dict(torch.load(args.weights, map_location='cpu'))",
        "the released checkpoint was saved from a GPU model (see comment above): CUDA tensors cannot be "
        "deserialised on a host without CUDA unless map_location is given"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "module move"),
      C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "n_gpus = torch.npu.device_count()", "0 on an NPU host -> modulo by zero in _work"),
      C("model_replicas = torch.nn.parallel.replicate(model, list(range(n_gpus)))", "unsupported_op_workaround",
        "replace", True, "model_replicas = [model]  # replicate() is DataParallel machinery; one NPU replica",
        "replicate() broadcasts parameters with CUDA comm.broadcast_coalesced, the same machinery as "
        "DataParallel/data_parallel (✘ on Ascend)"),
      C("with torch.cuda.device(i % n_gpus):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(i % len(model_replicas)):", "CUDA device context fails without CUDA"),
      C("_, cam = model_replicas[i % n_gpus](img.cuda())", "tensor_to_device", "replace", True,
        "_, cam = model_replicas[i % len(model_replicas)](img.npu())", "CUDA tensor move"),
  ])

E("seam_imutils", "tool/imutils.py", "explicit_replacement",
  "SEAM/PSA tool/imutils.py (numpy/PIL augmentations and pydensecrf CRF inference, CPU only)", [])

E("toco_train", "scripts/dist_train_voc_seg_neg.py", "explicit_replacement",
  "ToCo (rulixiang/ToCo) scripts/dist_train_voc_seg_neg.py (ViT CAM + seg head, torch.distributed.launch, nccl)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("parser.add_argument('--backend', default='nccl')", "dist_backend", "replace", True,
        "parser.add_argument('--backend', default='hccl')", "NCCL is not available in the NPU build; HCCL is"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED),
      C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "CUDA tensor move"),
      C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "CUDA tensor move"),
      C("cls_label = cls_label.cuda()", "tensor_to_device", "replace", True,
        "cls_label = cls_label.npu()", "CUDA tensor move"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "initialises CUDA -> fails on an NPU host"),
      C("device = torch.device(args.local_rank)", "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)',
        "a bare integer ordinal means a CUDA device in torch 2.1 (msFmkTransplt/transfer_to_npu rewrite int "
        "devices to 'npu:{i}' for the same reason)"),
      C("dummy_input = torch.rand(1, 3, 384, 384).cuda(0)", "tensor_to_device", "replace", True,
        "dummy_input = torch.rand(1, 3, 384, 384).npu(0)", "CUDA tensor move (rank 0 only)"),
      C("CTC_loss = CTCLoss_neg(ncrops=ncrops, temp=args.temp).cuda()", "tensor_to_device", "replace", False,
        "CTC_loss = CTCLoss_neg(ncrops=ncrops, temp=args.temp).npu()",
        "CTCLoss_neg has no parameters or buffers, so Module.cuda() never touches a tensor: silent no-op on an "
        "NPU host; renamed for consistency"),
      C("par = PAR(num_iter=10, dilations=[1, 2, 4, 8, 12, 24]).cuda()", "tensor_to_device", "replace", True,
        "par = PAR(num_iter=10, dilations=[1, 2, 4, 8, 12, 24]).npu()",
        "PAR registers the 'kernel' buffer, so .cuda() really moves a tensor and fails without CUDA"),
      C('logging.info("GPU type: %s" % (torch.cuda.get_device_name(0)))', "torch_cuda_api", "replace", True,
        'logging.info("NPU type: %s" % (torch.npu.get_device_name(0)))',
        "get_device_name lazily initialises CUDA and raises on an NPU host"),
  ])

E("toco_camutils", "utils/camutils.py", "explicit_replacement",
  "ToCo/AFA utils/camutils.py (CAM -> pseudo label, ROI crops, PAR refinement, affinity propagation)", [
      C("flags = torch.ones(size=(b, crop_num + 2)).cuda()", "tensor_to_device", "replace", True,
        "flags = torch.ones(size=(b, crop_num + 2)).to(images.device)",
        "hard-coded .cuda() next to device-agnostic .to(images.device) code"),
      C("bkg_cls = torch.ones(size=(b, 1)).cuda()", "tensor_to_device", "replace", True,
        "bkg_cls = torch.ones(size=(b, 1)).to(cams.device)", "hard-coded .cuda()"),
  ])

E("toco_par", "model/PAR.py", "device_branch_or_abstraction",
  "ToCo/AFA model/PAR.py (pixel-adaptive refinement module) with a __main__ smoke test", [
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "device-selection idiom silently falls back to the CPU on an NPU host"),
  ])

E("toco_losses", "model/losses.py", "explicit_replacement",
  "ToCo model/losses.py (PTC/CTC losses and the rloss-style DenseEnergyLoss with a CPU bilateral filter)", [
      C("return loss.cuda()", "tensor_to_device", "replace", True, "return loss.npu()",
        "the energy loss is created on the CPU and moved with .cuda()"),
      C("segmentations = torch.mul(segmentations.cuda(), ROIs.cuda())", "tensor_to_device", "replace", True,
        "segmentations = torch.mul(segmentations.npu(), ROIs.npu())", "CUDA tensor moves"),
      C("grad_segmentation = grad_segmentation.cuda()", "tensor_to_device", "replace", True,
        "grad_segmentation = grad_segmentation.npu()", "CUDA tensor move in backward"),
      C("grad_segmentation = torch.mul(grad_segmentation, ctx.ROIs.cuda())", "tensor_to_device", "replace", True,
        "grad_segmentation = torch.mul(grad_segmentation, ctx.ROIs.npu())", "CUDA tensor move in backward"),
  ])

E("toco_optimizer", "utils/optimizer.py", "explicit_replacement",
  "ToCo utils/optimizer.py (PolyWarmupAdamW subclassing torch.optim.AdamW)", [
      C("class PolyWarmupAdamW(torch.optim.AdamW):", "fused_optimizer", "replace", False,
        "class PolyWarmupAdamW(torch_npu.optim.NpuFusedAdamW):", FUSED),
      C("class PolyWarmupSGD(torch.optim.SGD):", "fused_optimizer", "replace", False,
        "class PolyWarmupSGD(torch_npu.optim.NpuFusedSGD):", FUSED),
  ])

E("toco_run_sh", "run_voc.sh", "explicit_replacement",
  "ToCo-style launcher shell script (torch.distributed.launch, CUDA_VISIBLE_DEVICES, NCCL env, nvidia-smi)", [
      C("=set -e", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; job would land on NPU 0..N-1 regardless"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL tuning variable, silently ignored by HCCL; no direct HCCL counterpart"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL logging knob is a no-op on NPU; CANN log level is the closest equivalent (mapping unconfirmed)"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
      C("--backend nccl \\", "dist_backend", "replace", True, "    --backend hccl \\", "NCCL backend unavailable"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python tools/infer_seg_voc.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python tools/infer_seg_voc.py \\",
        "device pinning for the single-device inference run"),
  ])

E("toco_config", "configs/voc_attn_reg.yaml", "explicit_replacement",
  "ToCo-style OmegaConf YAML config with runtime/dist sections", [
      C("device: cuda", "device_type", "replace", True, "device: npu", "device string read by the training scripts"),
      C("backend: nccl", "dist_backend", "replace", True, "backend: hccl", "NCCL backend unavailable on NPU"),
  ])

E("toco_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a ToCo/SEAM-style repo (pytorch + nvidia channels, cudatoolkit)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel is useless on an Ascend host"),
      C("- pytorch=1.12.1", "torch_cuda_api", "replace", True, "  - pytorch=2.1.0=*cpu*",
        "no torch_npu release exists for torch 1.12; torch_npu 2.1.0.postN requires exactly torch 2.1.0 "
        "(CPU build on x86, plain build on aarch64)"),
      C("- torchvision=0.13.1", "torch_cuda_api", "replace", True, "  - torchvision=0.16.0",
        "must match the torch 2.1.0 pin (0.13.1 pins torch 1.12.1 and the CUDA variant)"),
      C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
        "CUDA runtime package, dead weight on an Ascend host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post17",
        "torch-npu pin matching torch 2.1.0 (branch v2.1.0-7.2.0, CANN 8.3.RC1)"),
  ])

E("clims_train", "step/train_clims.py", "explicit_replacement",
  "CLIMS (CVPR'22) step/train_clims.py (IRN-based CAM training with frozen CLIP text/image supervision)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
      C("img = pack['img'].cuda()", "tensor_to_device", "replace", True, "img = pack['img'].npu()",
        "CUDA tensor move"),
      C("val_label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "val_label = pack['label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("model = torch.nn.DataParallel(model).cuda()", "tensor_to_device", "replace", True,
        "model = model.npu()", DP_NOTE),
      C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("shuffle=False, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
        "shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
      C("param_groups = model.module.trainable_parameters()", "unsupported_op_workaround", "replace", True,
        "param_groups = model.trainable_parameters()", DP_MODULE),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "CLIP would silently load on the CPU while the CAM net runs on the NPU -> device mismatch in clip_forward"),
      C("img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "CUDA tensor move"),
      C("=label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "label = pack['label'].npu(non_blocking=True)", "CUDA tensor move"),
      C("torch.save(model.module.state_dict(), args.clims_weights_name", "unsupported_op_workaround", "replace", True,
        "torch.save(model.state_dict(), args.clims_weights_name + '.pth')", DP_MODULE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
  ])

E("clims_clip_utils", "clip_utils.py", "explicit_replacement",
  "CLIMS clip_utils.py (CLIP prompts, zero-shot text features, OTM/BTM/CBS losses)", [
      C("texts = clip.tokenize(texts).cuda()  # tokenize", "tensor_to_device", "replace", True,
        "texts = clip.tokenize(texts).npu()  # tokenize", "CUDA tensor move"),
      C("zeroshot_weights = torch.stack(zeroshot_weights, dim=1).cuda()", "tensor_to_device", "replace", True,
        "zeroshot_weights = torch.stack(zeroshot_weights, dim=1).npu()", "Tensor.cuda() raises without CUDA"),
      C("text_features = clip_model.encode_text(clip.tokenize(self.background).cuda())", "tensor_to_device",
        "replace", True, "text_features = clip_model.encode_text(clip.tokenize(self.background).npu())",
        "CUDA tensor move"),
      C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'return "npu" if torch.npu.is_available() else "cpu"', "device-selection helper silently picks the CPU"),
  ])

E("clims_requirements", "requirements.txt", "explicit_replacement",
  "CLIMS-style requirements.txt (cu113 wheel index, CLIP from git, pydensecrf, pynvml)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu expects the CPU torch build on x86 (aarch64 uses plain PyPI)"),
      C("torch==1.12.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu113 build and no torch_npu release for torch 1.12"),
      C("torchvision==0.13.1+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build; must match torch 2.1.0"),
      C("torchmetrics==0.10.3", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch-npu pin matching torch 2.1.0"),
      C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
        "pynvml is NVML-only (npu-smi / torch.npu.mem_get_info instead); pure Python so it still installs"),
  ])

E("weaktr_main", "main.py", "device_branch_or_abstraction",
  "WeakTr (DeiT-based) main.py: timm model/optimizer/scheduler, --device flag, DDP, NativeScaler", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',",
        "default device string; everything downstream uses torch.device(args.device)"),
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:",
        "device_capability_check", "replace", False,
        "if False:  # TF32 / compute-capability switch is CUDA-only",
        "on an NPU host the guard is simply False (harmless); a naive cuda->npu rename would crash because "
        "get_device_capability returns None on NPU"),
      C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
        "pin_memory=args.pin_mem, pin_memory_device='npu' if args.pin_mem else '',", PIN),
      C("pin_memory=args.pin_mem and not args.gen_attention_maps,", "pin_memory", "replace", False,
        "pin_memory=args.pin_mem and not args.gen_attention_maps, pin_memory_device='npu',", PIN),
  ])

E("weaktr_utils", "utils.py", "explicit_replacement",
  "WeakTr/DeiT utils.py (SmoothedValue, MetricLogger, init_distributed_mode, MAE NativeScalerWithGradNormCount)", [
      C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "hard-coded CUDA device string (fp64 all_reduce over HCCL not confirmed; float32 is the safe choice)"),
      C("show_gpu_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "show_gpu_mem = torch.npu.is_available()", "only gates the 'max mem' log field"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError under SLURM on an NPU host"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "initialises CUDA -> fails"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL backend unavailable"),
      C("self._scaler = torch.cuda.amp.GradScaler(enabled=enabled)", "amp", "replace", False,
        "self._scaler = torch.npu.amp.GradScaler(enabled=enabled)",
        "without CUDA the scaler only warns and disables itself (silent no-op while autocast is also off); "
        "must move together with the engine's autocast, otherwise fp16 grads go unscaled"),
      C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
        "x_reduce = torch.tensor(x).npu()", "CUDA tensor move"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():", "memory summary helper; wrong value (0) but logging only"),
      C("return torch.cuda.max_memory_reserved() / 1024.0 / 1024.0", "torch_cuda_api", "replace", False,
        "return torch.npu.max_memory_reserved() / 1024.0 / 1024.0", "logging only"),
  ])

E("weaktr_engine", "engine.py", "explicit_replacement",
  "WeakTr/DeiT engine.py (train_one_epoch with torch.cuda.amp, evaluate mAP, multi-scale CAM generation)", [
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "torch.cuda.amp.autocast warns and disables itself without CUDA: run silently becomes fp32 (correct, slower)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "lazily initialises CUDA -> raises on an NPU host"),
      C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=True):", "silently disabled without CUDA (perf only)"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):", "silently disabled without CUDA (perf only)"),
  ])

E("weaktr_sh", "scripts/run_weaktr_voc.sh", "explicit_replacement",
  "WeakTr launcher script (torch.distributed.launch --use_env, CAM generation with --device cuda:0)", [
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3", "CUDA_VISIBLE_DEVICES is ignored on NPU"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
      C("export OMP_NUM_THREADS=1", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
      C("--device cuda:0", "device_type", "replace", True, "    --device npu:0",
        "explicit CUDA device passed to main.py"),
  ])

E("wsol_main", "main.py", "explicit_replacement",
  "wsolevaluation (clovaai) main.py Trainer (CAM/HaS/ACoL/SPG/ADL/CutMix training and evaluation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "the guard raises RuntimeError on every NPU host"),
      C("self.cross_entropy_loss = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "self.cross_entropy_loss = nn.CrossEntropyLoss().npu()",
        "loss module without parameters/buffers: Module.cuda() is a silent no-op; renamed for consistency"),
      C("self.mse_loss = nn.MSELoss(reduction='none').cuda()", "tensor_to_device", "replace", False,
        "self.mse_loss = nn.MSELoss(reduction='none').npu()", "parameter-free module, .cuda() is a no-op"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "module move"),
      C("optimizer = torch.optim.SGD([", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedSGD([", FUSED),
      C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", "CUDA tensor move"),
      C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "CUDA tensor move"),
      C("targets = targets.cuda()", "tensor_to_device", "replace", True, "targets = targets.npu()",
        "CUDA tensor move"),
      C("output_dict = self.model(images.cuda())", "tensor_to_device", "replace", True,
        "output_dict = self.model(images.npu())", "CUDA tensor move"),
  ])

E("wsol_inference", "inference.py", "device_branch_or_abstraction",
  "wsolevaluation inference.py (CAMComputer, scoremap normalisation, box/mask evaluators)", [
      C("if _EVAL_ON_CPU or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if _EVAL_ON_CPU or not torch.npu.is_available():",
        ("device helper silently returns the CPU on an NPU host; the model lives on the NPU, so the TTA path "
         "then fails with a device mismatch")),
      C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
        'return torch.device("npu", torch.npu.current_device())', "CUDA device object"),
      C("=images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", "CUDA tensor move"),
      C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(non_blocking=True)", "CUDA tensor move (use_cuda flag name left as is)"),
  ])

E("docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for a WSSS pipeline (nvidia/cuda base, cu113 torch wheels, pydensecrf, CLIP)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; a CANN image supplies the toolkit and set_env exports (Python pins below may need "
        "adjusting to the image)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES at docker run"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "nvcc arch list; nothing in this image builds CUDA code (bilateralfilter is a CPU SWIG module)"),
      C("RUN pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 \\", "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 \\",
        "CUDA wheels; torch_npu needs exactly torch 2.1.0"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
        "        --extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
      C("RUN python -c \"import torch, torchvision;", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch-npu==2.1.0.post17", "torch-npu pin matching torch 2.1.0"),
  ])
