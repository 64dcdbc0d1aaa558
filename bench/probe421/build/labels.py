"""Labels for probe421 (weakly-supervised semantic segmentation from image labels).

Target stack assumed by the notes: torch 2.1.0 + torch_npu 2.1.0.post10 + CANN 8.0.0 (Atlas A2), explicit port
(torch.npu.*, 'npu', hccl), no transfer_to_npu.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"

# ---- shared notes -------------------------------------------------------------------------------------------
IMPORT_STEP = ("torch.npu only exists once torch_npu is imported (torch 2.1 pairing; autoload only from 2.5.1). "
               "Each IRN/CLIMS step module can be run alone from run_sample.py and the spawn-based steps re-import "
               "their module in fresh worker processes, so every step module that uses torch.npu imports it itself.")
IMPORT_ENTRY = "entry script; torch.npu.* / .npu() need torch_npu loaded (torch 2.1 pairing, no autoload before 2.5.1)."
DP = ("torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, listed by msFmkTransplt as "
      "unsupported); its scatter/replicate path uses CUDA-only comm kernels. Port to a single NPU (or DDP+hccl).")
DP_MODULE = "follows from dropping DataParallel: the bare model has no .module attribute (AttributeError)."
DP_SCATTER = ("follows from dropping DataParallel: the batch used to be moved to the GPU by DataParallel's scatter, "
              "with the wrapper gone it must be moved explicitly or the conv runs on a CPU tensor vs NPU weights.")
PIN = ("performance only: with torch 2.1 the DataLoader pins only when torch.cuda.is_available(), so on an NPU host "
       "pin_memory=True is silently ignored; pin_memory_device='npu' restores pinned H2D copies (unconfirmed gain).")
EMPTY = "inert on an NPU host (torch.cuda.empty_cache is a no-op when CUDA is not initialised); frees NPU cache for the next step - memory only."
RELOAD_OWN = ("checkpoint written by the (ported) previous step of the same pipeline holds npu tensors and loads "
              "without map_location; only reusing a GPU-trained checkpoint would fail - map_location='cpu' is hardening.")
RELOAD_PUB = ("the released checkpoint was saved from a CUDA DataParallel model (cuda storages); torch.load without "
              "map_location fails on a host without CUDA ('Attempting to deserialize object on a CUDA device').")
CUDA_T = "Tensor.cuda() raises on an NPU host (CPU torch build, no CUDA)."

# ============================================================== IRN (jiwoon-ahn/irn)
E("irn_run_sample", "run_sample.py", X, "jiwoon-ahn/irn run_sample.py (pipeline driver, argparse only)", [])

E("irn_train_cam", "step/train_cam.py", X, "jiwoon-ahn/irn step/train_cam.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("shuffle=False, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("=label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = pack['label'].npu(non_blocking=True)", CUDA_T),
    C("=x = model(img)", "tensor_to_device", "replace", True, "x = model(img.npu(non_blocking=True))", DP_SCATTER),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("label = pack['label'].cuda(non_blocking=True)  # (N, 20)", "tensor_to_device", "replace", True,
      "label = pack['label'].npu(non_blocking=True)  # (N, 20) multi-hot", CUDA_T),
    C("x = model(img)  # DataParallel", "tensor_to_device", "replace", True,
      "x = model(img.npu(non_blocking=True))", DP_SCATTER),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.cam_weights_name)", DP_MODULE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("irn_make_cam", "step/make_cam.py", X, "jiwoon-ahn/irn step/make_cam.py (one spawned process per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
    C("n_gpus = torch.cuda.device_count()  # one worker", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()  # one worker process per NPU",
      "returns 0 on an NPU host -> num_workers // 0 ZeroDivisionError in the worker."),
    C("cuda.device(process_id)", "torch_cuda_api", "replace", True,
      "with torch.no_grad(), torch.npu.device(process_id):",
      "torch.cuda.device(i) on a host without CUDA fails; the NPU device context is what makes model.npu() and "
      "the per-worker tensors land on NPU <process_id>."),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() on a model with parameters raises without CUDA."),
    C("outputs = [model(img[0].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "outputs = [model(img[0].npu(non_blocking=True))", CUDA_T),
    C("model.load_state_dict(torch.load(args.cam_weights_name), strict=True)", "tensor_to_device", "replace", False,
      "model.load_state_dict(torch.load(args.cam_weights_name, map_location='cpu'), strict=True)", RELOAD_OWN),
    C("=n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on an NPU host: split_dataset(dataset, 0) is empty and spawn(nprocs=0) does nothing - no CAMs are written."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("irn_train_irn", "step/train_irn.py", X, "jiwoon-ahn/irn step/train_irn.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("shuffle=False, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("=img = pack['img'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "img = pack['img'].npu(non_blocking=True)", CUDA_T),
    C("bg_pos_label = pack['aff_bg_pos_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "bg_pos_label = pack['aff_bg_pos_label'].npu(non_blocking=True)", CUDA_T),
    C("fg_pos_label = pack['aff_fg_pos_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "fg_pos_label = pack['aff_fg_pos_label'].npu(non_blocking=True)", CUDA_T),
    C("neg_label = pack['aff_neg_label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "neg_label = pack['aff_neg_label'].npu(non_blocking=True)", CUDA_T),
    C("img = pack['img'].cuda(non_blocking=True)  # full batch", "tensor_to_device", "replace", True,
      "img = pack['img'].npu(non_blocking=True)  # full batch, no augmentation", CUDA_T),
    C("model.module.mean_shift.running_mean", "distributed_framework", "replace", True,
      "model.mean_shift.running_mean = torch.mean(torch.stack(dp_mean_list), dim=0)", DP_MODULE),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.irn_weights_name)", DP_MODULE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("irn_make_sem_seg", "step/make_sem_seg_labels.py", X, "jiwoon-ahn/irn step/make_sem_seg_labels.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
    C("n_gpus = torch.cuda.device_count()  # same split", "torch_cuda_api", "replace", True,
      "n_gpus = torch.npu.device_count()  # same split as step.make_cam",
      "returns 0 on an NPU host -> num_workers // 0 ZeroDivisionError."),
    C("cuda.device(process_id)", "torch_cuda_api", "replace", True,
      "with torch.no_grad(), torch.npu.device(process_id):", "per-worker device context; torch.cuda.device fails without CUDA."),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA."),
    C("edge, dp = model(pack['img'][0].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "edge, dp = model(pack['img'][0].npu(non_blocking=True))", CUDA_T),
    C("cam_downsized_values = cams.cuda()", "tensor_to_device", "replace", True,
      "cam_downsized_values = cams.npu()", CUDA_T + " (the saved CAM is a CPU tensor)"),
    C("model.load_state_dict(torch.load(args.irn_weights_name), strict=False)", "tensor_to_device", "replace", False,
      "model.load_state_dict(torch.load(args.irn_weights_name, map_location='cpu'), strict=False)", RELOAD_OWN),
    C("=n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on an NPU host: nothing is spawned and no pseudo labels are written."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("irn_indexing", "misc/indexing.py", X, "jiwoon-ahn/irn misc/indexing.py (PathIndex, random-walk propagation)", [
    C("paths_indices[i] = paths_indices[i].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "paths_indices[i] = paths_indices[i].to(edge.device, non_blocking=True)", CUDA_T),
    C(".to_dense().cuda()", "tensor_to_device", "replace", True,
      "torch.cat([affinity_sparse, torch.ones([n_vertices]), affinity_sparse])).to_dense().npu()",
      CUDA_T + " Only the dense result moves: the sparse COO assembly deliberately stays on the CPU (sparse ops "
      "without NPU kernels raise instead of falling back)."),
])

E("irn_torchutils", "misc/torchutils.py", X, "jiwoon-ahn/irn misc/torchutils.py (PolyOptimizer, split_dataset)", [])
E("irn_dataloader", "voc12/dataloader.py", X, "jiwoon-ahn/irn voc12/dataloader.py", [])
E("irn_resnet50_irn", "net/resnet50_irn.py", X, "jiwoon-ahn/irn net/resnet50_irn.py (buffers, no device code)", [])
E("irn_cam_to_ir_label", "step/cam_to_ir_label.py", X,
  "jiwoon-ahn/irn step/cam_to_ir_label.py (CPU dense-CRF workers)", [])

# ============================================================== AffinityNet (jiwoon-ahn/psa)
E("psa_train_cls", "train_cls.py", X, "jiwoon-ahn/psa train_cls.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("weights_dict = torch.load(args.weights)", "tensor_to_device", "replace", False,
      "weights_dict = torch.load(args.weights, map_location='cpu')",
      "ImageNet initialisation (.params goes through the mxnet converter); a .pth of unknown provenance - only "
      "fails if it was saved with cuda storages (unconfirmed)."),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("label = pack[2].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = pack[2].npu(non_blocking=True)", CUDA_T),
    C("=x = model(img)", "tensor_to_device", "replace", True, "x = model(img.npu(non_blocking=True))", DP_SCATTER),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.session_name + '.pth')", DP_MODULE),
])

E("psa_train_aff", "train_aff.py", X, "jiwoon-ahn/psa train_aff.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("weights_dict = torch.load(args.weights)", "tensor_to_device", "replace", False,
      "weights_dict = torch.load(args.weights, map_location='cpu')",
      "ImageNet initialisation; only fails if the .pth holds cuda storages (unconfirmed)."),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("aff = model.forward(pack[0])", "tensor_to_device", "replace", True,
      "aff = model.forward(pack[0].npu(non_blocking=True))", DP_SCATTER),
    C("bg_label = pack[1][0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "bg_label = pack[1][0].npu(non_blocking=True)", CUDA_T),
    C("fg_label = pack[1][1].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "fg_label = pack[1][1].npu(non_blocking=True)", CUDA_T),
    C("neg_label = pack[1][2].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "neg_label = pack[1][2].npu(non_blocking=True)", CUDA_T),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.session_name + '.pth')", DP_MODULE),
])

E("psa_infer_cls", "infer_cls.py", X, "jiwoon-ahn/psa infer_cls.py (replicate + thread pool over GPUs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("model.load_state_dict(torch.load(args.weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weights, map_location='cpu'))", RELOAD_PUB + " (res38_cls.pth / vgg_cls.pth)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA."),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "infer_data_loader = DataLoader(infer_dataset, shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      PIN),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on an NPU host -> i % 0 ZeroDivisionError in every worker."),
    C("model_replicas = torch.nn.parallel.replicate", "distributed_framework", "replace", True,
      "model_replicas = [copy.deepcopy(model).to(f'npu:{i}') for i in range(n_gpus)]",
      "nn.parallel.replicate broadcasts parameters with CUDA-only comm kernels (data_parallel family, ✘ on Ascend); "
      "plain per-device copies are enough for inference (needs `import copy`)."),
    C("with torch.cuda.device(i%n_gpus):", "torch_cuda_api", "replace", True, "with torch.npu.device(i%n_gpus):",
      "torch.cuda.device fails without CUDA; selects the NPU for img.npu() in this worker thread."),
    C("cam = model_replicas[i%n_gpus].forward_cam(img.cuda())", "tensor_to_device", "replace", True,
      "cam = model_replicas[i%n_gpus].forward_cam(img.npu())", CUDA_T),
])

E("psa_infer_aff", "infer_aff.py", X, "jiwoon-ahn/psa infer_aff.py (random walk with the affinity matrix)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("model.load_state_dict(torch.load(args.weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weights, map_location='cpu'))", RELOAD_PUB + " (res38_aff.pth)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA."),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "infer_data_loader = DataLoader(infer_dataset, shuffle=False, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      PIN),
    C("aff_mat = torch.pow(model.forward(img.cuda(), True), args.beta)", "tensor_to_device", "replace", True,
      "aff_mat = torch.pow(model.forward(img.npu(), True), args.beta)", CUDA_T),
    C("cam_rw = torch.matmul(cam_vec.cuda(), trans_mat)", "tensor_to_device", "replace", True,
      "cam_rw = torch.matmul(cam_vec.npu(), trans_mat)", CUDA_T),
])

E("psa_resnet38_aff", "network/resnet38_aff.py", X, "jiwoon-ahn/psa network/resnet38_aff.py", [
    C("index=ind_from.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ff = torch.index_select(x, dim=2, index=ind_from.to(x.device, non_blocking=True))",
      CUDA_T + " The index tensors are plain attributes (not buffers), so model.npu() does not move them."),
    C("index=ind_to.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ft = torch.index_select(x, dim=2, index=ind_to.to(x.device, non_blocking=True))", CUDA_T),
    C(".to_dense().cuda()", "tensor_to_device", "replace", True,
      "torch.cat([aff, torch.ones([area]), aff])).to_dense().to(x.device)",
      CUDA_T + " The sparse matrix itself is built on the CPU and must stay there."),
])

E("psa_pyutils", "tool/pyutils.py", X, "jiwoon-ahn/psa tool/pyutils.py (Logger, Timer, BatchThreader)", [])

# ============================================================== SEAM (YudeWang/SEAM)
E("seam_train", "train_SEAM.py", X, "YudeWang/SEAM train_SEAM.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True,", PIN),
    C("weights_dict = torch.load(args.weights)", "tensor_to_device", "replace", False,
      "weights_dict = torch.load(args.weights, map_location='cpu')",
      "ImageNet initialisation (normally the mxnet .params path); only fails for a .pth with cuda storages (unconfirmed)."),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("label = label.cuda(non_blocking=True).unsqueeze(2).unsqueeze(3)", "tensor_to_device", "replace", True,
      "label = label.npu(non_blocking=True).unsqueeze(2).unsqueeze(3)", CUDA_T),
    C("cam1, cam_rv1 = model(img1)", "tensor_to_device", "replace", True,
      "cam1, cam_rv1 = model(img1.npu(non_blocking=True))",
      DP_SCATTER + " img1 itself must stay on the CPU: it is turned into numpy for the tensorboard images."),
    C("cam2, cam_rv2 = model(img2)", "tensor_to_device", "replace", True,
      "cam2, cam_rv2 = model(img2.npu(non_blocking=True))", DP_SCATTER + " (img2 is the CPU-side rescaled copy)."),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.session_name + '.pth')", DP_MODULE),
])

E("seam_infer", "infer_SEAM.py", X, "YudeWang/SEAM infer_SEAM.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("model.load_state_dict(torch.load(args.weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weights, map_location='cpu'))", RELOAD_PUB + " (resnet38_SEAM.pth)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA."),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on an NPU host -> i % 0 ZeroDivisionError."),
    C("model_replicas = torch.nn.parallel.replicate", "distributed_framework", "replace", True,
      "model_replicas = [copy.deepcopy(model).to(f'npu:{i}') for i in range(n_gpus)]",
      "nn.parallel.replicate uses CUDA-only broadcast kernels (✘ on Ascend); per-device copies (needs `import copy`)."),
    C("with torch.cuda.device(i%n_gpus):", "torch_cuda_api", "replace", True, "with torch.npu.device(i%n_gpus):",
      "torch.cuda.device fails without CUDA."),
    C("_, cam = model_replicas[i%n_gpus](img.cuda())", "tensor_to_device", "replace", True,
      "_, cam = model_replicas[i%n_gpus](img.npu())", CUDA_T),
])

E("seam_net", "network/resnet38_SEAM.py", X, "YudeWang/SEAM network/resnet38_SEAM.py (PCM, device-agnostic)", [])
E("seam_visualization", "tool/visualization.py", X, "YudeWang/SEAM tool/visualization.py (numpy + pydensecrf)", [])

# ============================================================== CLIMS (CVI-SZU/CLIMS)
E("clims_train", "step/train_clims.py", X, "CVI-SZU/CLIMS step/train_clims.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_STEP),
    C("model.load_state_dict(torch.load('cam-baseline-voc12/res50_cam.pth'), strict=True)", "tensor_to_device",
      "replace", True,
      "model.load_state_dict(torch.load('cam-baseline-voc12/res50_cam.pth', map_location='cpu'), strict=True)",
      RELOAD_PUB + " The README has users download the GPU-trained baseline CAM weights."),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()", DP),
    C("shuffle=True, num_workers=args.num_workers, pin_memory=True", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN),
    C("param_groups = model.module.trainable_parameters()", "distributed_framework", "replace", True,
      "param_groups = model.trainable_parameters()", DP_MODULE),
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
      "silently picks 'cpu' on an NPU host: CLIP is then loaded on the CPU in fp32 while the masked images are NPU "
      "tensors -> device mismatch in encode_image."),
    C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", CUDA_T),
    C("label = pack['label'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label = pack['label'].npu(non_blocking=True)", CUDA_T),
    C("torch.save(model.module.state_dict()", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(), args.clims_weights_name + '.pth')", DP_MODULE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY),
])

E("clims_clip_utils", "clip_utils.py", X, "CVI-SZU/CLIMS clip_utils.py (prompt helpers around OpenAI CLIP)", [
    C("texts = clip.tokenize(texts).cuda()  # tokenize", "tensor_to_device", "replace", True,
      "texts = clip.tokenize(texts).to(next(model.parameters()).device)  # tokenize",
      CUDA_T + " (zero-shot helper; clip_forward below is already device-agnostic)."),
])

E("clims_clip_loss", "clip_loss.py", X, "CVI-SZU/CLIMS clip_loss.py (OTM/BTM/CBS losses)", [
    C("clip.tokenize(self.background).cuda()", "tensor_to_device", "replace", True,
      "text_features = clip_model.encode_text(clip.tokenize(self.background).to(images.device))  # [N2, C]", CUDA_T),
])

E("clims_clip", "clip/clip.py", X, "openai/CLIP clip/clip.py as vendored by CLIMS", [
    C("device: Union[str, torch.device] = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace",
      False,
      "def load(name: str, device: Union[str, torch.device] = \"npu\" if torch.npu.is_available() else \"cpu\", jit: bool = False, download_root: str = None):",
      "default argument only; CLIMS always passes device= explicitly, so the default never decides anything here. "
      "A default of 'cpu' would also make load() upcast CLIP to fp32 (slower, not wrong)."),
])

E("clims_run_sh", "run_voc.sh", X, "CVI-SZU/CLIMS run_voc.sh-style launcher", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; normally already sourced in the shell profile of an Ascend host."),
    C("CUDA_VISIBLE_DEVICES=$GPU python run_sample.py --voc12_root", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU python run_sample.py --voc12_root $VOC12_ROOT \\",
      "ignored by the NPU runtime: make_cam / make_sem_seg spawn one worker per *visible* device, so without "
      "ASCEND_RT_VISIBLE_DEVICES the run silently fans out over every NPU of the host instead of device $GPU."),
    C("CUDA_VISIBLE_DEVICES=$GPU python run_sample.py --work_space", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU python run_sample.py --work_space clims_voc12 --voc12_root $VOC12_ROOT \\",
      "same as above for the IRN half (make_sem_seg_labels spawns per visible device)."),
])

# ============================================================== ToCo (rulixiang/ToCo)
E("toco_train", "dist_train_voc_seg_neg.py", X, "rulixiang/ToCo dist_train_voc_seg_neg.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("parser.add_argument(\"--backend\", default='nccl')", "dist_backend", "replace", True,
      "parser.add_argument(\"--backend\", default='hccl')", "NCCL is not available with torch_npu; HCCL is the collective backend."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant on NPU: torch.manual_seed above also seeds registered privateuse1 devices, and torch.cuda.manual_seed_all "
      "is queued lazily without error (unconfirmed in the knowledge base)."),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", CUDA_T),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", CUDA_T),
    C("=cls_label = cls_label.cuda()", "tensor_to_device", "replace", True, "cls_label = cls_label.npu()", CUDA_T),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "binds each rank to its NPU; torch.cuda.set_device fails without CUDA."),
    C("device = torch.device(args.local_rank)", "device_type", "replace", True,
      "device = torch.device('npu', args.local_rank)",
      "a bare integer device means CUDA in torch 2.1 (transfer_to_npu has to rewrite ints to 'npu:{i}' for the same reason)."),
    C("CTC_loss = CTCLoss_neg(ncrops=ncrops, temp=cfg.train.temp).cuda()", "tensor_to_device", "replace", False,
      "CTC_loss = CTCLoss_neg(ncrops=ncrops, temp=cfg.train.temp).npu()",
      "CTCLoss_neg has no parameters or buffers, so Module.cuda() never touches a tensor and does not fail; edited for consistency only."),
    C("par = PAR(num_iter=10, dilations=[1,2,4,8,12,24]).cuda()", "tensor_to_device", "replace", True,
      "par = PAR(num_iter=10, dilations=[1,2,4,8,12,24]).npu()",
      "PAR registers the 'kernel' buffer, so Module.cuda() has to move a tensor and raises without CUDA."),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "with --amp the CUDA GradScaler disables itself when CUDA is unavailable (warning only): fp16 NPU autocast then "
      "runs without loss scaling and small gradients underflow silently."),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "unported, CUDA autocast is disabled on an NPU host and the forward runs in fp32 - slower / more memory, not wrong."),
])

E("toco_losses", "model/losses.py", X, "rulixiang/ToCo model/losses.py (PTC/CTC losses, DenseEnergyLoss from rloss)", [
    C("return loss.cuda()", "tensor_to_device", "replace", True, "return loss.to(logit.device)",
      CUDA_T + " (the energy loss comes back from the CPU bilateral filter as a CPU tensor)."),
    C("segmentations = torch.mul(segmentations.cuda(), ROIs.cuda())", "tensor_to_device", "replace", True,
      "segmentations = torch.mul(segmentations.npu(), ROIs.npu())", CUDA_T),
    C("grad_segmentation = grad_segmentation.cuda()", "tensor_to_device", "replace", True,
      "grad_segmentation = grad_segmentation.npu()", CUDA_T),
    C("grad_segmentation = grad_segmentation * ctx.ROIs.cuda()", "tensor_to_device", "replace", True,
      "grad_segmentation = grad_segmentation * ctx.ROIs.npu()", CUDA_T),
])

E("toco_camutils", "utils/camutils.py", X, "rulixiang/ToCo utils/camutils.py (device-agnostic .to(cams.device))", [])
E("toco_par", "model/PAR.py", X, "rulixiang/ToCo model/PAR.py (pixel-adaptive refinement)", [])
E("toco_cfg", "configs/voc_seg_neg.yaml", X, "rulixiang/ToCo configs/voc_seg_neg.yaml", [])

E("toco_sh", "scripts/dist_train_voc_seg_neg.sh", X, "rulixiang/ToCo scripts/dist_train_voc_seg_neg.sh", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; normally already sourced in the shell profile of an Ascend host."),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "ignored on NPU, but with --nproc_per_node=2 the ranks bind npu:0 and npu:1 via set_device anyway - same devices."),
])

E("toco_requirements", "requirements.txt", X, "rulixiang/ToCo-style requirements.txt (torch installed separately)", [
    C("# torch / torchvision are not pinned here", "import_torch_npu", "npu_only_addition", False,
      "torch-npu==2.1.0.post10",
      "torch itself is not in this file (installed by hand per README), so torch_npu is too; adding the pin next to "
      "the note is convenience (pairs with torch==2.1.0, CANN 8.0.0)."),
])

# ============================================================== MCTformer (xulianuwa/MCTformer, DeiT-based)
E("mct_main", "main.py", X, "xulianuwa/MCTformer main.py (DeiT training script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "torch.device('cuda') -> model.to(device) fails on an NPU host."),
    C("pin_memory=args.pin_mem,", "pin_memory", "replace", False, "pin_memory=args.pin_mem, pin_memory_device='npu',", PIN),
    C("loss_scaler = NativeScaler()", "amp", "replace", True, "loss_scaler = utils.NativeScalerNPU()",
      "timm's NativeScaler wraps torch.cuda.amp.GradScaler(), which disables itself without CUDA: with the engine's "
      "autocast ported to NPU fp16 the gradients are never scaled. Port = same 10-line class on torch.npu.amp.GradScaler."),
])

E("mct_engine", "engine.py", X, "xulianuwa/MCTformer engine.py (train_one_epoch / evaluate / attention maps)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "unported, autocast is disabled on an NPU host and training runs in fp32 - slower / more memory, not wrong."),
    C("with torch.cuda.amp.autocast():  # fp16 eval", "amp", "replace", False,
      "with torch.npu.amp.autocast():  # fp16 eval, same as training", "evaluation in fp32 instead of fp16 - performance only."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host."),
])

E("mct_utils", "utils.py", X, "xulianuwa/MCTformer utils.py (DeiT MetricLogger / init_distributed_mode)", [
    C("device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "metric all_reduce across ranks; a cuda tensor cannot be created on an NPU host. float64 over HCCL is kept as is "
      "(support unconfirmed in the knowledge base)."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "logging only: unported, the 'max mem' column is simply omitted."),
    C("if torch.cuda.is_available():  # also print", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # also print peak memory",
      "must match the check above: once the first check is ported the format string has a {memory} field, and this "
      "branch falling to the else-print (no memory=) raises KeyError on the first log line."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "unported it returns 0 (CUDA never initialised) - a wrong log value, not a failure."),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: device_count() is 0 on an NPU host -> ZeroDivisionError."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "per-rank device binding; fails without CUDA."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available with torch_npu; HCCL."),
])
