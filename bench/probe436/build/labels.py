"""Labels for probe436 (computational pathology / MIL on whole-slide images, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit, written as an explicit torch_npu port.
`required` uses the complete-port counterfactual described in README.md.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: load the NPU backend before any torch.npu / 'npu' use; torch_npu >= 2.5.1 autoloads, "
               "but the 2.1.x line still in the version matrix does not")

# --------------------------------------------------------------------------------------------------
# CLAM (mahmoodlab/CLAM)
# --------------------------------------------------------------------------------------------------
E("clam_main", "main.py", "explicit_replacement", "mahmoodlab/CLAM main.py (k-fold training driver, seed_torch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "this module-level device only gates the CUDA seeding branch below; training uses utils.core_utils.device, "
      "so leaving it only skips the extra seeding (torch.manual_seed already seeds the NPU generator; unconfirmed)"),
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "reproducibility only: torch.manual_seed(seed) just above also seeds the accelerator generator (unconfirmed "
      "in the knowledge base for the privateuse1 backend)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.cuda.manual_seed is lazily queued and silently does nothing on a host without CUDA; seeding only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as the line above; seeding only"),
])

E("clam_core_utils", "utils/core_utils.py", "explicit_replacement",
  "mahmoodlab/CLAM utils/core_utils.py (train loops, validate, summary)", [
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device used for every data.to(device) in the train/val loops; model.relocate() moves the "
      "model to the NPU, so a CPU device here gives a device mismatch"),
    C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
      "--bag_loss svm: the smooth-topk loss must be moved with the model; otherwise its label tensor stays on CPU "
      "while logits are on the NPU"),
    C("loss_fn = loss_fn.cuda()", "tensor_to_device", "replace", True, "loss_fn = loss_fn.npu()",
      "SmoothTop1SVM overrides .cuda() to move its internal labels tensor; see README (unsure whether Module.npu() "
      "reaches that override)"),
    C('if device.type == "cuda":', "device_type", "replace", True, 'if device.type == "npu":',
      "--inst_loss svm: same as the bag loss branch"),
    C("instance_loss_fn = instance_loss_fn.cuda()", "tensor_to_device", "replace", True,
      "instance_loss_fn = instance_loss_fn.npu()", "instance-level SVM loss must live on the NPU"),
])

E("clam_utils", "utils/utils.py", "explicit_replacement",
  "mahmoodlab/CLAM utils/utils.py (loaders, collate, optimizer helpers)", [
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "re-exported by `from utils.utils import *`: utils/eval_utils.summary() moves its batches with this global, "
      "so a CPU device there meets a model on the NPU"),
    C("kwargs = {'num_workers': 4, 'pin_memory': False, 'num_workers': num_workers} if device.type == \"cuda\" else {}",
      "device_type", "replace", False,
      "kwargs = {'num_workers': 4, 'pin_memory': False, 'num_workers': num_workers} if device.type == \"npu\" else {}",
      "performance only: without it the eval loader runs with num_workers=0"),
    C("kwargs = {'num_workers': 4} if device.type == \"cuda\" else {}", "device_type", "replace", False,
      "kwargs = {'num_workers': 4} if device.type == \"npu\" else {}",
      "performance only: split loaders fall back to num_workers=0"),
])

E("clam_model_clam", "models/model_clam.py", "explicit_replacement",
  "mahmoodlab/CLAM models/model_clam.py (CLAM_SB / CLAM_MB gated attention)", [
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "relocate() is how core_utils.train places the model; left alone the model stays on CPU while batches go to "
      "the NPU"),
])

E("clam_model_mil", "models/model_mil.py", "explicit_replacement",
  "mahmoodlab/CLAM models/model_mil.py (MIL_fc / MIL_fc_mc max-pooling baselines)", [
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "MIL_fc.relocate(): same reason as CLAM_SB.relocate()"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "MIL_fc_mc.relocate(): same reason"),
])

E("clam_extract_feats", "extract_features_fp.py", "explicit_replacement",
  "mahmoodlab/CLAM extract_features_fp.py (patch feature extraction with openslide + encoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "otherwise the encoder silently runs on CPU for every slide (hours instead of minutes per WSI)"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", True, None,
      "goes together with removing the DataParallel line below; leaving the bare `if` would not even parse"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Atlas A2/A3 (torch_api_npu_support_2.7.1.tsv); run one process "
      "per NPU over disjoint slide lists instead"),
    C("loader_kwargs = {'num_workers': 8, 'pin_memory': True} if device.type == \"cuda\" else {}", "device_type",
      "replace", False, "loader_kwargs = {'num_workers': 8, 'pin_memory': True} if device.type == \"npu\" else {}",
      "performance only: openslide reads fall back to the main process"),
])

E("clam_eval", "eval.py", "explicit_replacement", "mahmoodlab/CLAM eval.py (fold evaluation driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device=torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'device=torch.device("npu" if torch.npu.is_available() else "cpu")',
      "dead global in this script: eval_utils uses its own device argument and utils.utils.device"),
])

E("clam_eval_utils", "utils/eval_utils.py", "explicit_replacement",
  "mahmoodlab/CLAM utils/eval_utils.py (initiate_model, summary)", [
    C("def initiate_model(args, ckpt_path, device='cuda'):", "device_type", "replace", True,
      "def initiate_model(args, ckpt_path, device='npu'):",
      "eval() calls initiate_model without a device, so model.to('cuda') raises on an NPU host"),
])

E("clam_create_patches", "create_patches_fp.py", "explicit_replacement",
  "mahmoodlab/CLAM create_patches_fp.py (tissue segmentation and patch coordinates, CPU only)", [])

E("clam_env", "env.yml", "explicit_replacement", "mahmoodlab/CLAM env.yml (conda + pip environment)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take the CPU torch wheel for torch_npu (aarch64 uses plain PyPI); a CUDA wheel with torch_npu "
      "may still work (unconfirmed), so not required"),
    C("- torch==2.3.0", "import_torch_npu", "replace", True, "- torch==2.3.1",
      "no torch_npu wheel exists for torch 2.3.0; the matrix pairs torch 2.3.1 with torch_npu 2.3.1.postN"),
    C("- torchvision==0.18.0", "import_torch_npu", "replace", True, "- torchvision==0.18.1",
      "torchvision 0.18.0 pins torch 2.3.0 and would not resolve against torch 2.3.1"),
    C("- timm==0.9.8", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.3.1.post6",
      "add the Ascend adapter (2.3.1.post6 <-> CANN 8.1.RC1 in the version matrix)"),
])

E("clam_builder", "models/builder.py", "explicit_replacement",
  "mahmoodlab/CLAM models/builder.py (ResNet50-trunc / UNI / CONCH encoder factory)", [])

E("clam_dataset_h5", "dataset_modules/dataset_h5.py", "explicit_replacement",
  "mahmoodlab/CLAM dataset_modules/dataset_h5.py (h5 patch bags read through openslide)", [])

# --------------------------------------------------------------------------------------------------
# TransMIL (szc19990412/TransMIL, PyTorch Lightning 1.x)
# --------------------------------------------------------------------------------------------------
E("transmil_train", "train.py", "explicit_replacement",
  "szc19990412/TransMIL train.py (Lightning Trainer driver)", [
    C("import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; this script never imports torch itself, so it goes next to the Lightning import"),
    C("gpus=cfg.General.gpus,", "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(), devices=cfg.General.gpus,",
      "`gpus=` makes Lightning 1.x demand CUDA and abort; Lightning 1.x has no built-in NPU accelerator, so a small "
      "custom Accelerator subclass backed by torch.npu is needed (API shape unconfirmed in the knowledge base)"),
])

E("transmil_model", "models/TransMIL.py", "explicit_replacement",
  "szc19990412/TransMIL models/TransMIL.py (PPEG + Nystrom attention)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "only for the __main__ smoke test, which calls .npu() with nothing else having loaded torch_npu"),
    C("cls_tokens = self.cls_token.expand(B, -1, -1).cuda()", "tensor_to_device", "replace", True,
      "cls_tokens = self.cls_token.expand(B, -1, -1)",
      "hard-coded .cuda() inside forward(); the parameter already lives on the module's device, so drop the call"),
    C("data = torch.randn((1, 6000, 1024)).cuda()", "tensor_to_device", "replace", True,
      "data = torch.randn((1, 6000, 1024)).npu()", "module smoke test"),
    C("model = TransMIL(n_classes=2).cuda()", "tensor_to_device", "replace", True,
      "model = TransMIL(n_classes=2).npu()", "module smoke test"),
])

E("transmil_interface", "models/model_interface.py", "explicit_replacement",
  "szc19990412/TransMIL models/model_interface.py (LightningModule, torchmetrics)", [])

E("transmil_yaml", "Camelyon/TransMIL.yaml", "explicit_replacement",
  "szc19990412/TransMIL Camelyon/TransMIL.yaml (experiment config)", [])

E("transmil_utils", "utils/utils.py", "explicit_replacement",
  "szc19990412/TransMIL utils/utils.py (yaml, loggers, callbacks)", [])

# --------------------------------------------------------------------------------------------------
# DSMIL (binli123/dsmil-wsi)
# --------------------------------------------------------------------------------------------------
E("dsmil_train", "train_tcga.py", "explicit_replacement",
  "binli123/dsmil-wsi train_tcga.py (bag training from CSV features)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("Tensor = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True, "Tensor = torch.npu.FloatTensor",
      "legacy CUDA tensor type used to build every training bag"),
    C("bag_label = torch.from_numpy(np.array([label])).float().cuda()", "tensor_to_device", "replace", True,
      "bag_label = torch.from_numpy(np.array([label])).float().npu()", "evaluation bag label"),
    C("bag_feats = torch.from_numpy(np.array(feats)).float().cuda()", "tensor_to_device", "replace", True,
      "bag_feats = torch.from_numpy(np.array(feats)).float().npu()", "evaluation bag features"),
    C("os.environ['CUDA_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)",
      "--gpu_index would otherwise be ignored and the job would land on NPU 0 (set before the first NPU call)"),
    C("i_classifier = mil.FCLayer(in_size=args.feats_size, out_size=args.num_classes).cuda()", "tensor_to_device",
      "replace", True, "i_classifier = mil.FCLayer(in_size=args.feats_size, out_size=args.num_classes).npu()", ""),
    C("nonlinear=args.non_linearity).cuda()", "tensor_to_device", "replace", True,
      "b_classifier = mil.BClassifier(input_size=args.feats_size, output_class=args.num_classes, "
      "dropout_v=args.dropout_node, nonlinear=args.non_linearity).npu()", ""),
    C("milnet = mil.MILNet(i_classifier, b_classifier).cuda()", "tensor_to_device", "replace", True,
      "milnet = mil.MILNet(i_classifier, b_classifier).npu()", ""),
    C("state_dict_weights = torch.load('init.pth')", "tensor_to_device", "replace", True,
      "state_dict_weights = torch.load('init.pth', map_location='cpu')",
      "the init.pth shipped with the repository was saved from a .cuda() model; without map_location its CUDA "
      "storages cannot be restored on a host without CUDA"),
])

E("dsmil_model", "dsmil.py", "explicit_replacement",
  "binli123/dsmil-wsi dsmil.py (IClassifier / BClassifier / MILNet)", [])

E("dsmil_compute_feats", "compute_feats.py", "explicit_replacement",
  "binli123/dsmil-wsi compute_feats.py (SimCLR embedder feature extraction, single/tree magnification)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=patches = batch['input'].float().cuda()", "tensor_to_device", "replace", True,
      "patches = batch['input'].float().npu()", ""),
    C("batch_patches = batch['input'].float().cuda()", "tensor_to_device", "replace", True,
      "batch_patches = batch['input'].float().npu()", ""),
    C("img = VF.to_tensor(img).float().cuda()", "tensor_to_device", "replace", True,
      "img = VF.to_tensor(img).float().npu()", ""),
    C("os.environ['CUDA_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)", "device selection"),
    C("i_classifier_h = mil.IClassifier(resnet, num_feats, output_class=args.num_classes).cuda()",
      "tensor_to_device", "replace", True,
      "i_classifier_h = mil.IClassifier(resnet, num_feats, output_class=args.num_classes).npu()", ""),
    C("i_classifier_l = mil.IClassifier(copy.deepcopy(resnet), num_feats, output_class=args.num_classes).cuda()",
      "tensor_to_device", "replace", True,
      "i_classifier_l = mil.IClassifier(copy.deepcopy(resnet), num_feats, output_class=args.num_classes).npu()", ""),
    C("i_classifier = mil.IClassifier(resnet, num_feats, output_class=args.num_classes).cuda()",
      "tensor_to_device", "replace", True,
      "i_classifier = mil.IClassifier(resnet, num_feats, output_class=args.num_classes).npu()", ""),
    C("torch.load(weight_path, map_location=torch.device('cuda:0'))", "tensor_to_device", "replace", True,
      "state_dict_weights = torch.load(weight_path, map_location='cpu')",
      "map_location forces CUDA storages; load to CPU, load_state_dict copies onto the NPU model"),
])

E("dsmil_simclr", "simclr/simclr.py", "explicit_replacement",
  "binli123/dsmil-wsi simclr/simclr.py (SimCLR embedder training, optional apex O2)", [
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "otherwise SimCLR pre-training silently runs on CPU (and the NT-Xent mask follows self.device)"),
    C("model = torch.nn.DataParallel(model, device_ids=eval(self.config['gpu_ids']))", "unsupported_op_workaround",
      "replace", True, "print('nn.DataParallel is not supported on Ascend NPU; training on a single NPU')",
      "config.yaml ships n_gpu: 2, so this branch is taken; DataParallel is unsupported on Atlas A2/A3"),
])

E("dsmil_ntxent", "simclr/loss/nt_xent.py", "explicit_replacement",
  "binli123/dsmil-wsi simclr/loss/nt_xent.py (NT-Xent loss, device passed in)", [])

E("dsmil_simclr_cfg", "simclr/config.yaml", "explicit_replacement",
  "binli123/dsmil-wsi simclr/config.yaml (SimCLR hyper-parameters)", [])

E("dsmil_simclr_run", "simclr/run.py", "explicit_replacement",
  "binli123/dsmil-wsi simclr/run.py (SimCLR entry point)", [
    C("from simclr import SimCLR", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; run.py has no direct torch import, so it goes with the first project import"),
    C("os.environ['CUDA_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES']=','.join(str(x) for x in gpu_ids)",
      "gpu_ids from config.yaml would otherwise be ignored"),
])

E("dsmil_env", "env.yml", "explicit_replacement", "binli123/dsmil-wsi env.yml (conda environment)", [
    C("- python=3.7.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1 (oldest line with a maintained torch_npu) needs Python >= 3.8"),
    C("- cudatoolkit=10.2.89", "import_torch_npu", "removal", False, None,
      "unused on an NPU host; harmless where it resolves (unconfirmed on aarch64)"),
    C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu for torch 1.6; take the CPU build of torch 2.1.0 to pair with torch_npu 2.1.0.postN"),
    C("- torchvision=0.7.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.7.0 pins torch 1.6"),
    C("- openslide-python==1.1.2", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "add the Ascend adapter under pip: (2.1.0.post12 <-> CANN 8.1.RC1)"),
])

# --------------------------------------------------------------------------------------------------
# HIPT (mahmoodlab/HIPT) incl. its DINO pre-training copy
# --------------------------------------------------------------------------------------------------
E("hipt_4k", "HIPT_4K/hipt_4k.py", "explicit_replacement",
  "mahmoodlab/HIPT HIPT_4K/hipt_4k.py (ViT-256 -> ViT-4K region encoder)", [
    C("device256=torch.device('cuda:0'),", "device_type", "replace", True, "device256=torch.device('npu:0'),",
      "default device of the 256-level ViT; .to(device256) fails on a host without CUDA"),
    C("device4k=torch.device('cuda:0')):", "device_type", "replace", True, "device4k=torch.device('npu:0')):",
      "default device of the 4K-level ViT"),
])

E("hipt_model_utils", "HIPT_4K/hipt_model_utils.py", "explicit_replacement",
  "mahmoodlab/HIPT HIPT_4K/hipt_model_utils.py (get_vit256 / get_vit4k loaders)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "imported by hipt_4k.py before HIPT_4K is defined: the ported torch.device('npu:..') defaults are evaluated "
      "at import time and need the backend registered (no autoload before torch_npu 2.5.1)"),
    C("def get_vit256(pretrained_weights, arch='vit_small', device=torch.device('cuda:0')):", "device_type",
      "replace", False, "def get_vit256(pretrained_weights, arch='vit_small', device=torch.device('npu:0')):",
      "inert: the argument is overwritten on the first line of the body; constructing torch.device('cuda:0') does "
      "not need CUDA"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "stand-alone get_vit256() users would get a CPU model silently (HIPT_4K re-moves it, other callers do not)"),
    C("def get_vit4k(pretrained_weights, arch='vit4k_xs', device=torch.device('cuda:1')):", "device_type",
      "replace", False, "def get_vit4k(pretrained_weights, arch='vit4k_xs', device=torch.device('npu:1')):",
      "inert for the same reason as get_vit256's default"),
    C('device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'device = torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu")',
      "same as get_vit256"),
])

E("hipt_vit4k", "HIPT_4K/vision_transformer4k.py", "explicit_replacement",
  "mahmoodlab/HIPT HIPT_4K/vision_transformer4k.py (ViT-4K backbone, device-agnostic)", [])

E("hipt_main_dino", "1-Hierarchical-Pretraining/main_dino.py", "explicit_replacement",
  "mahmoodlab/HIPT 1-Hierarchical-Pretraining/main_dino.py (DINO ViT-256 / ViT-4K pre-training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", "replace", True,
      "student, teacher = student.npu(), teacher.npu()", ""),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
      "DINOLoss holds the `center` buffer that is all-reduced over HCCL"),
    C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "fp16_scaler = torch.npu.amp.GradScaler()",
      "a CUDA GradScaler disables itself on an NPU host, so fp16 training would run without loss scaling"),
    C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", "replace", True,
      "images = [im.npu(non_blocking=True) for im in images]", ""),
    C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(fp16_scaler is not None):",
      "CUDA autocast is a no-op on NPU tensors: --use_fp16 (default True) would silently train in fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
])

E("hipt_dino_utils", "1-Hierarchical-Pretraining/utils.py", "explicit_replacement",
  "mahmoodlab/HIPT 1-Hierarchical-Pretraining/utils.py (DINO misc: distributed init, MetricLogger)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above already seeds the NPU (unconfirmed)"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "the tensor fed to dist.all_reduce must be on the HCCL device (fp64 all_reduce on HCCL unconfirmed)"),
    C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_cuda = torch.npu.is_available()", "logging only: drops the 'max mem' column"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "logging only: the CUDA allocator reports 0 when CUDA was never initialised"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM launch: device_count() is 0 -> ZeroDivisionError"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "single-device launch would otherwise print 'Does not support training without GPU.' and exit"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', ""),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
])

E("hipt_hier_mil", "2-Weakly-Supervised-Subtyping/models/model_hierarchical_mil.py", "explicit_replacement",
  "mahmoodlab/HIPT 2-Weakly-Supervised-Subtyping/models/model_hierarchical_mil.py (HIPT_LGP_FC)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "relocate() target device"),
    C("if torch.cuda.device_count() >= 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() >= 1:",
      "otherwise the branch is skipped and the local ViT-4K is never moved off the CPU"),
    C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
      "dead once DataParallel is dropped; left alone it just evaluates to []"),
    C("self.local_vit = nn.DataParallel(self.local_vit, device_ids=device_ids).to('cuda:0')",
      "unsupported_op_workaround", "replace", True, "self.local_vit = self.local_vit.to('npu:0')",
      "DataParallel is unsupported on Ascend and 'cuda:0' does not exist"),
    C("self.global_vit = nn.DataParallel(self.global_vit, device_ids=device_ids).to('cuda:0')",
      "unsupported_op_workaround", "replace", False, "self.global_vit = self.global_vit.to('npu:0')",
      "unreachable in practice: with pretrain_WSI != 'None' no global_vit is ever built (fails on GPU too)"),
])

# --------------------------------------------------------------------------------------------------
# MONAI tutorials: pathology/multiple_instance_learning (PANDA MIL)
# --------------------------------------------------------------------------------------------------
E("monai_panda_mil", "pathology/multiple_instance_learning/panda_mil_train_evaluate_pytorch_gpu.py",
  "explicit_replacement",
  "Project-MONAI/tutorials pathology/multiple_instance_learning/panda_mil_train_evaluate_pytorch_gpu.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "with --amp, CUDA autocast/GradScaler disable themselves on NPU tensors: silently fp32 without scaling"),
    C('data = batch_data["image"].as_subclass(torch.Tensor).cuda(args.rank)', "tensor_to_device", "replace", True,
      'data = batch_data["image"].as_subclass(torch.Tensor).npu(args.rank)', ""),
    C('target = batch_data["label"].as_subclass(torch.Tensor).cuda(args.rank)', "tensor_to_device", "replace",
      True, 'target = batch_data["label"].as_subclass(torch.Tensor).npu(args.rank)', ""),
    C('data = batch_data["image"].as_subclass(torch.Tensor).cuda(args.gpu)', "tensor_to_device", "replace", True,
      'data = batch_data["image"].as_subclass(torch.Tensor).npu(args.gpu)', ""),
    C('target = batch_data["label"].as_subclass(torch.Tensor).cuda(args.gpu)', "tensor_to_device", "replace",
      True, 'target = batch_data["label"].as_subclass(torch.Tensor).npu(args.gpu)', ""),
    C('backend="cucim"', "unsupported_op_workaround", "replace", False,
      'return LoadImaged(keys=["image"], reader=WSIReader, backend="openslide", dtype=np.uint8, level=1, '
      'image_only=True)',
      "cuCIM decodes WSIs on the host, but its wheels target CUDA x86/arm hosts; availability on an Ascend host "
      "is unconfirmed, openslide/tifffile are the safe readers"),
    C("args.rank = args.rank * torch.cuda.device_count() + gpu", "torch_cuda_api", "replace", True,
      "args.rank = args.rank * torch.npu.device_count() + gpu", "global rank computation"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", ""),
    C("model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", ""),
    C('parser.add_argument("--dist-backend", default="nccl"', "dist_backend", "replace", True,
      'parser.add_argument("--dist-backend", default="hccl", type=str, help="distributed backend")', ""),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 on an NPU host -> mp.spawn(nprocs=0) trains nothing"),
])

E("monai_launch", "pathology/multiple_instance_learning/run_panda_mil.sh", "explicit_replacement",
  "launcher script in the style of MONAI tutorial READMEs (multi-GPU PANDA MIL run)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu (unless the login shell already sources it)"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "otherwise all NPUs are used and the script's lr scaling (ngpus * lr / 2) changes"),
    C("NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "device_capability_check", "replace",
      True, 'NGPU=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "no nvidia-smi: NGPU becomes 0 and --distributed is silently dropped; counting via torch.npu honours "
      "ASCEND_RT_VISIBLE_DEVICES (npu-smi would count all cards)"),
])
