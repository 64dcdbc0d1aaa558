# Labels for probe491 (document image dewarping / enhancement).
# One entry per file under files/<id>/upstream/<path>; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu after torch so torch.npu / Tensor.npu / 'npu' devices exist "
               "(autoload only from torch_npu 2.5.1; the port pins torch 2.1)")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (✘) in Ascend's 2.7.1 API list; a single-device port "
           "drops the wrapper")
DP_KEYS_NOTE = ("consequence of dropping DataParallel: checkpoints trained on GPU carry 'module.' prefixes, so "
                "strict load_state_dict into the unwrapped model fails unless the prefix is stripped")
MAPLOC_NOTE = ("checkpoints were saved from CUDA tensors; without a map_location torch.load tries to restore "
               "them on a CUDA device and raises on an NPU host")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a no-op when CUDA is never initialised, so nothing fails; "
                    "moving to torch.npu.empty_cache() only restores the intended memory release (performance)")
PIN_NOTE = ("DataLoader pins through CUDA only when torch.cuda.is_available(); on NPU pinning is silently "
            "skipped unless pin_memory_device='npu' is given - performance only, unconfirmed in knowledge")

# ---------------------------------------------------------------------------------------------- DocUNet
E("docunet_train", "train.py", "explicit_replacement",
  "unofficial PyTorch DocUNet re-implementations (stacked U-Net) train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("out = subprocess.check_output(['nvidia-smi'", "device_capability_check", "replace", True,
      "free = [torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())]",
      "nvidia-smi does not exist on an Ascend host (FileNotFoundError when --gpu_ids and cfg gpus are empty); "
      "query free memory through torch.npu.mem_get_info instead"),
    C("free = [int(x) for x in out.decode()", "device_capability_check", "removal", True, None,
      "parsing of nvidia-smi output; once the line above returns the list directly, this line would raise NameError"),
    C("img = img.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "img = img.npu(non_blocking=True)", "Tensor.cuda() raises on a torch build without CUDA"),
    C("flow = flow.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "flow = flow.npu(non_blocking=True)", "Tensor.cuda() raises on a torch build without CUDA"),
    C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "validation batch to device"),
    C("=flow = flow.cuda()", "tensor_to_device", "replace", True, "flow = flow.npu()", "validation batch to device"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_ids",
      "the user's card selection is ignored by the Ascend runtime unless it is passed as ASCEND_RT_VISIBLE_DEVICES "
      "(set before the first NPU call)"),
    C("shuffle=True, num_workers=args.workers, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "shuffle=True, num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
    C("model = nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()", DP_NOTE + "; .cuda() would also raise"),
    C("ckpt = torch.load(args.resume)", "device_type", "replace", True,
      "ckpt = torch.load(args.resume, map_location='cpu')", MAPLOC_NOTE + " (resuming a GPU run)"),
    C("model.load_state_dict(ckpt['model'])", "unsupported_op_workaround", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in ckpt['model'].items()})", DP_KEYS_NOTE),
])

E("docunet_model", "models/docunet.py", "explicit_replacement",
  "DocUNet re-implementation models/docunet.py (stacked U-Net + grid_sample unwarp)", [])

E("docunet_loss", "models/loss.py", "explicit_replacement",
  "DocUNet re-implementation models/loss.py (shift-invariant L1 loss)", [
    C("self.zero = Variable(torch.zeros(1)).cuda()", "tensor_to_device", "replace", True,
      "self.zero = Variable(torch.zeros(1)).npu()",
      "created in __init__ and never moved with the model (the criterion is not .to()'d); .cuda() raises"),
])

E("docunet_dataset", "data/doc_dataset.py", "explicit_replacement",
  "DocUNet re-implementation data/doc_dataset.py (numpy/cv2 only)", [])

E("docunet_flow_inverse", "utils/flow_inverse.py", "explicit_replacement",
  "DocUNet-style forward->backward map inversion helper with optional CuPy path", [
    C("=HAS_CUPY = True", "unsupported_op_workaround", "replace", False,
      "HAS_CUPY = False  # CuPy has no Ascend backend",
      "CuPy has no Ascend support; once cupy-cuda101 is dropped from requirements the ImportError fallback to scipy "
      "already triggers, so forcing the flag off only guards hosts where cupy happens to be installed"),
])

E("docunet_test", "test.py", "explicit_replacement",
  "DocUNet re-implementation test.py (unwarp real photographs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("ckpt = torch.load(args.ckpt)", "device_type", "replace", True,
      "ckpt = torch.load(args.ckpt, map_location='cpu')", MAPLOC_NOTE),
    C("return model.cuda()", "tensor_to_device", "replace", True, "return model.npu()", "model to device"),
    C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "input to device"),
    C("=full = full.cuda()", "tensor_to_device", "replace", True, "full = full.npu()", "full-resolution image to device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises without it; NPU timing needs the NPU sync"),
    C("torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
      "torch.npu.get_device_name(0)))", "torch.cuda.get_device_name raises without CUDA (end-of-run summary)"),
])

E("docunet_cfg", "configs/docunet.yaml", "explicit_replacement",
  "DocUNet re-implementation YAML config (gpus string reused as visible-device list)", [])

E("docunet_requirements", "requirements.txt", "explicit_replacement",
  "DocUNet re-implementation requirements.txt (torch 1.4 + cupy-cuda101)", [
    C("torch==1.4.0", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release exists for torch 1.4; pin a torch that has a matching torch_npu wheel"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0 (v2.1.0-6.0.0, CANN 8.0.0) added next to torch/torchvision"),
    C("cupy-cuda101", "unsupported_op_workaround", "removal", True, None,
      "CuPy has no Ascend backend; the CUDA 10.1 wheel has no aarch64 build and, where it installs, makes "
      "flow_inverse take the GPU path and fail at the first kernel launch"),
])

E("docunet_train_sh", "scripts/train.sh", "explicit_replacement",
  "DocUNet re-implementation scripts/train.sh launcher", [
    C("=mkdir -p logs", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded for torch_npu; many hosts already source it from the shell profile, so "
      "host-dependent"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "script runs under set -e: the missing nvidia-smi binary aborts the launcher before training starts"),
])

# -------------------------------------------------------------------------------------------- DewarpNet
E("dewarpnet_train_wc", "train_wc.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet train_wc.py (world-coordinate regression)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model, device_ids=range(torch.cuda.device_count()))",
      "unsupported_op_workaround", "removal", True, None,
      DP_NOTE + "; here device_ids=range(torch.cuda.device_count()) is also empty on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to device"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')", MAPLOC_NOTE + " (resume)"),
    C("model.load_state_dict(checkpoint['model_state'])", "unsupported_op_workaround", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['model_state'].items()})",
      DP_KEYS_NOTE),
    C("images = Variable(images.cuda())", "tensor_to_device", "replace", True,
      "images = Variable(images.npu())", "batch to device"),
    C("labels = Variable(labels.cuda())", "tensor_to_device", "replace", True,
      "labels = Variable(labels.npu())", "batch to device"),
    C("images_val = Variable(images_val.cuda())", "tensor_to_device", "replace", True,
      "images_val = Variable(images_val.npu())", "validation batch to device"),
    C("labels_val = Variable(labels_val.cuda())", "tensor_to_device", "replace", True,
      "labels_val = Variable(labels_val.npu())", "validation batch to device"),
])

E("dewarpnet_train_bm", "train_bm.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet train_bm.py (backward-map regression with unwarp reconstruction loss)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model, device_ids=range(torch.cuda.device_count()))",
      "unsupported_op_workaround", "removal", True, None,
      DP_NOTE + "; here device_ids=range(torch.cuda.device_count()) is also empty on an NPU host"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to device"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')", MAPLOC_NOTE + " (resume)"),
    C("model.load_state_dict(checkpoint['model_state'])", "unsupported_op_workaround", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['model_state'].items()})",
      DP_KEYS_NOTE),
    C("images = Variable(inputs[:,3:,:,:].cuda())", "tensor_to_device", "replace", True,
      "images = Variable(inputs[:,3:,:,:].npu())", "batch to device"),
    C("alb = Variable(inputs[:,:3,:,:].cuda())", "tensor_to_device", "replace", True,
      "alb = Variable(inputs[:,:3,:,:].npu())", "albedo to device"),
    C("labels = Variable(labels.cuda())", "tensor_to_device", "replace", True,
      "labels = Variable(labels.npu())", "batch to device"),
    C("images_val = Variable(inputs_val[:,3:,:,:].cuda())", "tensor_to_device", "replace", True,
      "images_val = Variable(inputs_val[:,3:,:,:].npu())", "validation batch to device"),
    C("alb_val = Variable(inputs_val[:,:3,:,:].cuda())", "tensor_to_device", "replace", True,
      "alb_val = Variable(inputs_val[:,:3,:,:].npu())", "validation albedo to device"),
    C("labels_val = Variable(labels_val.cuda())", "tensor_to_device", "replace", True,
      "labels_val = Variable(labels_val.npu())", "validation batch to device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("dewarpnet_infer", "infer.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet infer.py (wc + bm models end to end)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "left as is, DEVICE is cpu on an NPU host and the whole pipeline silently runs on the host CPU"),
    C("torch.load(args.wc_model_path)['model_state']", "device_type", "replace", True,
      "wc_state = convert_state_dict(torch.load(args.wc_model_path, map_location='npu')['model_state'])",
      "the non-CPU branch loads the released (CUDA-saved) weights without map_location; " + MAPLOC_NOTE),
    C("torch.load(args.bm_model_path)['model_state']", "device_type", "replace", True,
      "bm_state = convert_state_dict(torch.load(args.bm_model_path, map_location='npu')['model_state'])",
      "same as the wc checkpoint"),
    C("if torch.cuda.is_available():", "device_type", "replace", True, "if torch.npu.is_available():",
      "otherwise the models are never moved and inference silently stays on CPU"),
    C("wc_model.cuda()", "tensor_to_device", "replace", True, "wc_model.npu()", "model to device"),
    C("bm_model.cuda()", "tensor_to_device", "replace", True, "bm_model.npu()", "model to device"),
    C("images = Variable(img.cuda())", "tensor_to_device", "replace", True,
      "images = Variable(img.npu())", "input to device"),
])

E("dewarpnet_models_init", "models/__init__.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet models/__init__.py (model factory)", [])

E("dewarpnet_densenet", "models/densenetccnl.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet models/densenetccnl.py (DenseNet enc/dec with CoordConv channels)", [
    C("if t.is_cuda:", "device_type", "replace", True, "if t.is_npu:",
      "is_cuda is False for NPU tensors, so the CoordConv channels stay on the CPU and torch.cat with the NPU "
      "input fails with a device mismatch"),
    C("xx_coord=xx_coord.cuda()", "tensor_to_device", "replace", True, "xx_coord=xx_coord.npu()",
      "executed once the guard above is ported"),
    C("yy_coord=yy_coord.cuda()", "tensor_to_device", "replace", True, "yy_coord=yy_coord.npu()",
      "executed once the guard above is ported"),
])

E("dewarpnet_unetnc", "models/unetnc.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet models/unetnc.py (pix2pix-style U-Net generator)", [])

E("dewarpnet_recon_loss", "recon_lossc.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet recon_lossc.py (unwarp reconstruction loss with grid_sample)", [
    C("inp_img=torch.from_numpy(inp_img).float().cuda()", "tensor_to_device", "replace", True,
      "inp_img=torch.from_numpy(inp_img).float().npu()",
      "albedo is round-tripped through numpy and must go back to the device of the predicted grid"),
    C(".type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
      "mask = (outputs_label.sum(dim=1, keepdim=True) > 0).type(torch.npu.FloatTensor)",
      "type(torch.cuda.FloatTensor) casts and moves to CUDA; raises on an NPU host"),
])

E("dewarpnet_grad_loss", "grad_loss.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet grad_loss.py (device-agnostic gradient loss)", [])

E("dewarpnet_wc_loader", "loaders/doc3dwc_loader.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet loaders/doc3dwc_loader.py (Doc3D EXR world-coordinate loader)", [])

E("dewarpnet_utils", "utils.py", "explicit_replacement",
  "cvlab-stonybrook/DewarpNet utils.py (convert_state_dict, tensorboard helpers)", [])

# ------------------------------------------------------------------------------------------------- DocTr
E("doctr_inference", "inference.py", "explicit_replacement",
  "fh2019ustc/DocTr inference.py (GeoTr + U2NETP segmentation + IllTr patches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("pretrained_dict = torch.load(path, map_location='cuda:0')", "device_type", "replace", True,
      "pretrained_dict = torch.load(path, map_location='npu:0')",
      "map_location='cuda:0' raises on a host without CUDA"),
    C("seg_dict = torch.load(path, map_location='cuda:0')", "device_type", "replace", True,
      "seg_dict = torch.load(path, map_location='npu:0')",
      "map_location='cuda:0' raises on a host without CUDA"),
    C("patch = torch.from_numpy(patch.transpose(2, 0, 1)).unsqueeze(0).float().cuda()", "tensor_to_device",
      "replace", True, "patch = torch.from_numpy(patch.transpose(2, 0, 1)).unsqueeze(0).float().npu()",
      "IllTr patch to device"),
    C("GeoTr_Seg_model = GeoTr_Seg().cuda()", "tensor_to_device", "replace", True,
      "GeoTr_Seg_model = GeoTr_Seg().npu()", "model to device"),
    C("IllTr_model = IllTr().cuda()", "tensor_to_device", "replace", True,
      "IllTr_model = IllTr().npu()", "model to device"),
    C("bm = GeoTr_Seg_model(im.cuda())", "tensor_to_device", "replace", True,
      "bm = GeoTr_Seg_model(im.npu())", "input to device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("doctr_geotr", "GeoTr.py", "explicit_replacement",
  "fh2019ustc/DocTr GeoTr.py (geometric unwarping transformer, device-agnostic)", [])

E("doctr_illtr", "IllTr.py", "explicit_replacement",
  "fh2019ustc/DocTr IllTr.py (illumination correction ViT)", [])

E("doctr_seg", "seg.py", "explicit_replacement",
  "fh2019ustc/DocTr seg.py (U2NETP document segmentation)", [])

E("doctr_requirements", "requirements.txt", "explicit_replacement",
  "DocTr-style requirements.txt (torch 1.5.1)", [
    C("torch==1.5.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "torch_npu for 1.5.0 is long EOL and there is none for 1.5.1; move to a torch with a current torch_npu"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0"),
])

# --------------------------------------------------------------------------------------------- DocGeoNet
E("docgeonet_inference", "inference.py", "explicit_replacement",
  "fh2019ustc/DocGeoNet inference.py (with CUDA-event timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(opt.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpu)",
      "torch.cuda.set_device raises on a torch build without CUDA"),
    C("device = torch.device('cuda:{}'.format(opt.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(opt.gpu))",
      "the device object also drives map_location and every .to(device) in the file"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without CUDA"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "float(np.mean(t)), len(t), torch.npu.max_memory_allocated(device) / 2 ** 20))",
      "torch.cuda memory stats return an empty dict when CUDA was never initialised, so the summary just prints "
      "0 MB - a wrong log value, not a failure"),
])

E("docgeonet_model", "model/DocGeoNet.py", "explicit_replacement",
  "fh2019ustc/DocGeoNet model/DocGeoNet.py (3D-shape + text-line branches, device-agnostic)", [])

E("docgeonet_eval_ocr", "eval/eval_ocr.py", "explicit_replacement",
  "DocGeoNet/DocTr-style OCR (ED/CER) evaluation with pytesseract", [])

# ------------------------------------------------------------------------------------------------ DocRes
E("docres_inference", "inference.py", "explicit_replacement",
  "ZZZHANG-jx/DocRes inference.py (task prompts + Restormer, dewarping/deshadowing/appearance/deblur/binarize)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.load(args.model_path, map_location='cuda:0')", "device_type", "replace", True,
      "state = convert_state_dict(torch.load(args.model_path, map_location='npu:0')['model_state'])",
      "map_location='cuda:0' raises on a host without CUDA (non-CPU branch)"),
    C("DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "left as is the whole pipeline (and its .half() paths) silently runs on the host CPU"),
])

E("docres_train", "train.py", "explicit_replacement",
  "DocRes-style multi-task DDP training script (torchrun/launch, AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch.npu.amp import autocast, GradScaler",
      "CUDA autocast/GradScaler disable themselves with only a warning when CUDA is absent, so --amp would "
      "silently train in fp32 (different memory footprint and numerics than configured)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises on a torch build without CUDA"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend; HCCL"),
    C("args.device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
      "args.device = torch.device('npu', args.local_rank)",
      "drives model.to, validation .to and the resume map_location"),
    C("pin_memory=True, drop_last=True, persistent_workers=True)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True, persistent_workers=True)",
      PIN_NOTE),
    C("in_im = batch['in_im'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "in_im = batch['in_im'].npu(non_blocking=True)", "batch to device"),
    C("gt = batch['gt'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "gt = batch['gt'].npu(non_blocking=True)", "batch to device"),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 when CUDA was never initialised; only the logged memory figure is wrong"),
])

E("docres_utils", "utils.py", "explicit_replacement",
  "ZZZHANG-jx/DocRes utils.py (seeding, convert_state_dict, Sauvola binarisation prompt)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.cuda.manual_seed is queued lazily and never runs without CUDA, so nothing fails; torch.manual_seed "
      "on the line above is expected to seed the NPU generator too in torch 2.x (unconfirmed in knowledge)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as manual_seed: silent no-op, reproducibility only"),
])

E("docres_mbd_infer", "data/MBD/infer.py", "explicit_replacement",
  "ZZZHANG-jx/DocRes data/MBD/infer.py (DeepLab document mask used as the dewarping prompt)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module also runs standalone (__main__) and calls .npu(); " + IMPORT_NOTE),
    C("seg_model = torch.nn.DataParallel(seg_model, device_ids=[0])", "unsupported_op_workaround", "removal", True,
      None, DP_NOTE),
    C("seg_model.load_state_dict(checkpoint['model_state'])", "unsupported_op_workaround", "replace", True,
      "seg_model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['model_state'].items()})",
      "the released mbd.pkl was saved from the DataParallel wrapper; " + DP_KEYS_NOTE),
    C("seg_model.cuda()", "tensor_to_device", "replace", True, "seg_model.npu()", "model to device"),
    C("inp = _to_tensor(img).cuda()", "tensor_to_device", "replace", True, "inp = _to_tensor(img).npu()",
      "input to device"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "print('saved', a.out, m.shape, 'gpu:', torch.npu.get_device_name(0))",
      "standalone CLI crashes at the final print (torch.cuda.get_device_name raises without CUDA)"),
])

E("docres_restormer", "models/restormer_arch.py", "explicit_replacement",
  "ZZZHANG-jx/DocRes models/restormer_arch.py (Restormer backbone, device-agnostic)", [])

E("docres_start_train", "start_train.sh", "explicit_replacement",
  "DocRes-style start_train.sh (torch.distributed.launch on cards 4-7)", [
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on Ascend: the four ranks would land on NPUs 0-3, which the comment says are reserved"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; host-dependent (often already in the profile)"),
])

E("docres_requirements", "requirements.txt", "explicit_replacement",
  "DocRes-style requirements.txt pinned to CUDA 11.8 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on the CPU build of torch on x86 (aarch64 uses plain PyPI torch); the cu118 index would "
      "pull CUDA wheels"),
    C("torch==2.0.1+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "drop the +cu118 local version and move to a torch with a maintained torch_npu"),
    C("torchvision==0.15.2+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0 (and torchvision_npu's 0.16.0 pairing)"),
    C("numpy==1.24.4", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0"),
])

E("docres_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "community-style Dockerfile for DocRes on an nvidia/cuda base image", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "needs a CANN base (tag scheme from Ascend/cann-container-image; registry name unconfirmed); that image "
      "bakes the set_env.sh exports into ENV, so no extra source line is needed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "inert on Ascend; devices are injected by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or --device "
      "/dev/davinciN mounts - unconfirmed that setting it in the image has any effect"),
])
