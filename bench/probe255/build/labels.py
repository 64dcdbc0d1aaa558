# Labels for probe255: computational pathology / WSI multiple-instance learning (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter edits; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ----------------------------------------------------------------------------------------- CLAM
E("clam_create_patches", "clam/create_patches_fp.py", "explicit_replacement",
  "CLAM create_patches_fp.py (OpenSlide tissue segmentation + patch coordinates)",
  [])  # pure CPU; the comment naming CUDA is a deliberate near-miss

E("clam_extract_features", "clam/extract_features_fp.py", "explicit_replacement",
  "CLAM extract_features_fp.py (patch features with ResNet50-trunc / UNI / CONCH)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; CLAM pins torch 2.3.x, older than the 2.5.1 device-backend autoload, so torch_npu must be imported before 'npu' devices exist"),
      C("device = torch.device('cuda') if torch.cuda.is_available()", "device_type", "replace", True,
        "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
        "torch.cuda.is_available() is False on an NPU host: feature extraction silently runs on the CPU"),
      C("loader_kwargs = {'num_workers': args.num_workers, 'pin_memory': True}", "device_type", "replace", False,
        "loader_kwargs = {'num_workers': args.num_workers, 'pin_memory': True, 'pin_memory_device': 'npu'} if device.type == \"npu\" else {}",
        "after the device fix device.type is 'npu', so the loader silently drops to num_workers=0 and no pinning; performance only"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "only gates a log line with the device name/memory; skipped silently on NPU"),
      C("print(f'GPU: {torch.cuda.get_device_name(0)}, '", "torch_cuda_api", "replace", False,
        "print(f'NPU: {torch.npu.get_device_name(0)}, '",
        "dead on NPU unless the guard above is ported; then it must call torch.npu"),
      C("f'{torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", False,
        "f'{torch.npu.get_device_properties(0).total_memory / 1024 ** 3:.1f} GB')",
        "same log block; NPU device properties do carry total_memory"),
      C("if device.type == \"cuda\":", "device_type", "replace", False, "if device.type == \"npu\":",
        "guards cache release between slides; skipped silently on NPU (memory behaviour only)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA was never initialised"),
  ])

E("clam_model_clam", "clam/models/model_clam.py", "explicit_replacement",
  "CLAM models/model_clam.py (CLAM_SB / CLAM_MB gated-attention MIL with relocate())",
  [
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "relocate() is how core_utils places the model; unchanged it keeps CLAM on the CPU while core_utils' data goes to NPU"),
  ])

E("clam_model_mil", "clam/models/model_mil.py", "explicit_replacement",
  "CLAM models/model_mil.py (MIL_fc / MIL_fc_mc max-pooling baselines)",
  [
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "MIL_fc.relocate would silently keep the model on the CPU"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
        "torch.cuda.device_count() is 0 on an NPU host so the else-branch (.to(device)) already runs; the porter drops the branch instead of porting the count, because nn.DataParallel is unsupported on NPU"),
      C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
        "part of the dead DataParallel branch"),
      C("self.fc = nn.DataParallel(self.fc, device_ids=device_ids).to('cuda:0')", "distributed_framework", "removal", False, None,
        "torch.nn.DataParallel is marked unsupported on Atlas A2/A3; dead on NPU, removed with its branch"),
      C("device=torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device=torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "MIL_fc_mc.relocate: same silent CPU placement"),
  ])

E("clam_utils", "clam/utils/utils.py", "explicit_replacement",
  "CLAM utils/utils.py (collate fns, split loaders, optimizers)",
  [
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", False,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "in this module the device only picks DataLoader kwargs (core_utils/eval_utils define their own device after the star import); performance only"),
      C("kwargs = {'num_workers': 4, 'pin_memory': False, 'num_workers': num_workers} if device.type == \"cuda\" else {}",
        "device_type", "replace", False,
        "kwargs = {'num_workers': 4, 'pin_memory': False, 'num_workers': num_workers} if device.type == \"npu\" else {}",
        "silently falls back to num_workers=0 on NPU; performance only"),
      C("kwargs = {'num_workers': 4} if device.type == \"cuda\" else {}", "device_type", "replace", False,
        "kwargs = {'num_workers': 4} if device.type == \"npu\" else {}",
        "same: single-process loading on NPU, slower but correct"),
  ])

E("clam_core_utils", "clam/utils/core_utils.py", "explicit_replacement",
  "CLAM utils/core_utils.py (per-fold train / validate / summary loops, EarlyStopping)",
  [
      C("device=torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device=torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "training device; with the model relocated to NPU an unchanged 'cpu' here leaves bags on the host -> device-mismatch error"),
      C("if device.type == 'cuda':", "device_type", "replace", True, "if device.type == 'npu':",
        "--bag_loss svm: SmoothTop1SVM keeps its label buffer on the CPU when this guard is skipped -> device mismatch in the loss"),
      C("=loss_fn = loss_fn.cuda()", "tensor_to_device", "replace", True, "loss_fn = loss_fn.to(device)",
        "fails without CUDA once the guard above is ported"),
      C("if device.type == \"cuda\":", "device_type", "replace", True, "if device.type == \"npu\":",
        "--inst_loss svm (the documented CLAM recipe): same skipped move of the instance SVM loss"),
      C("instance_loss_fn = instance_loss_fn.cuda()", "tensor_to_device", "replace", True,
        "instance_loss_fn = instance_loss_fn.to(device)", "fails without CUDA"),
  ])

E("clam_main", "clam/main.py", "explicit_replacement",
  "CLAM main.py (argparse entry point, seed_torch, k-fold driver)",
  [
      C("=import math", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # before utils.core_utils, whose module-level device is torch.device('npu')",
        "must precede the internal imports: core_utils builds torch.device at import time and 'npu' only exists once torch_npu is loaded (torch 2.3 has no autoload)"),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", False,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "in main.py the device only gates the CUDA seeding below; torch.manual_seed already seeds registered PrivateUse1 (NPU) generators (unconfirmed in the knowledge notes)"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "seeding guard; silently skipped"),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA (lazy seeding); reproducibility only"),
      C("torch.cuda.manual_seed_all(seed)  # if you are using multi-GPU.", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", "silent no-op without CUDA"),
      C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
        "torch.use_deterministic_algorithms(True)",
        "cudnn flag is accepted but has no effect on NPU kernels; determinism needs the generic switch (unconfirmed which NPU ops honour it)"),
  ])

E("clam_eval_utils", "clam/utils/eval_utils.py", "explicit_replacement",
  "CLAM utils/eval_utils.py (initiate_model, summary)",
  [
      C("def initiate_model(args, ckpt_path, device='cuda'):", "device_type", "replace", True,
        "def initiate_model(args, ckpt_path, device='npu'):",
        "eval.py and create_heatmaps.py call initiate_model without a device -> .to('cuda') fails"),
      C("ckpt = torch.load(ckpt_path)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(ckpt_path, map_location='cpu')",
        "released CLAM checkpoints were saved from CUDA tensors; deserialising them without map_location raises when CUDA is unavailable"),
  ])

E("clam_create_heatmaps", "clam/create_heatmaps.py", "explicit_replacement",
  "CLAM create_heatmaps.py (attention heatmaps from a YAML config)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script; must come before utils.* imports that build NPU devices"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "features would stay on the CPU while initiate_model puts the MIL model on NPU -> device mismatch"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
        "returns 0 on NPU so the single-device else-branch already runs; branch dropped (DataParallel unsupported)"),
      C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
        "dead DataParallel branch"),
      C("feature_extractor = nn.DataParallel(feature_extractor, device_ids=device_ids).to('cuda:0')",
        "distributed_framework", "removal", False, None,
        "nn.DataParallel is unsupported on NPU; dead code there, removed"),
  ])

E("clam_pipeline_sh", "clam/scripts/run_clam_pipeline.sh", "explicit_replacement",
  "CLAM README command sequence as a lab shell launcher",
  [
      C("=conda activate clam_latest", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "torch_npu cannot load its CANN libraries without the toolkit environment"),
      C("CUDA_VISIBLE_DEVICES=$GPU python extract_features_fp.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python extract_features_fp.py \\",
        "ignored on NPU: the job silently lands on device 0 instead of the requested card"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True,
        "npu-smi info >> logs/npu_mem.txt",
        "nvidia-smi does not exist on an Ascend host; with set -e the pipeline aborts here"),
      C("CUDA_VISIBLE_DEVICES=$GPU python main.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python main.py \\", "device selection silently lost"),
      C("CUDA_VISIBLE_DEVICES=$GPU python eval.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python eval.py \\", "device selection silently lost"),
      C("CUDA_VISIBLE_DEVICES=0,1 python create_heatmaps.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python create_heatmaps.py --config_file config_nsclc.yaml",
        "ignored on NPU; the ported create_heatmaps is single-device (no DataParallel), so one card is requested"),
  ])

E("clam_env_yml", "clam/env.yml", "explicit_replacement",
  "CLAM env.yml (conda + pip environment)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", False,
        "- --extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts use the CPU torch wheel; on aarch64 the cu121 index has no wheel for 2.3.x and PyPI's CPU build is picked anyway (unconfirmed that a CUDA build breaks torch_npu)"),
      C("- torch==2.3.0", "import_torch_npu", "replace", True, "- torch==2.3.1",
        "there is no torch_npu for torch 2.3.0; the 2.3.1.postN wheels pair with torch 2.3.1"),
      C("- torchvision==0.18.0", "import_torch_npu", "replace", True, "- torchvision==0.18.1",
        "torchvision 0.18.0 pins torch 2.3.0 and would conflict with the bumped torch"),
      C("- timm==0.9.16", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.3.1.post6",
        "torch_npu matching torch 2.3.1 (CANN 8.1.RC1)"),
      C("- nvidia-ml-py==12.535.77", "torch_cuda_api", "removal", False, None,
        "NVML bindings are unused by the ported code and have no NPU backend; harmless to install"),
  ])

# ----------------------------------------------------------------------------------------- TransMIL
E("transmil_train", "TransMIL/train.py", "transfer_to_npu",
  "TransMIL train.py (pytorch-lightning 1.x Trainer(gpus=..., precision=16))",
  [
      C("=import glob", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "Lightning 1.3 has no NPU accelerator; transfer_to_npu lets Trainer(gpus=...) and native AMP resolve to the NPU (gpus/precision lines are deliberately unlabelled). Placed before the datasets/models/pytorch_lightning imports so nothing binds torch.cuda names first"),
  ])

E("transmil_yaml", "TransMIL/Camelyon/TransMIL.yaml", "transfer_to_npu",
  "TransMIL Camelyon/TransMIL.yaml config",
  [
      C("multi_gpu_mode: dp", "distributed_framework", "replace", True, "multi_gpu_mode: null",
        "accelerator='dp' wraps the model in torch.nn.DataParallel, which is unsupported on NPU and not redirected by transfer_to_npu"),
  ])

E("transmil_model", "TransMIL/models/TransMIL.py", "explicit_replacement",
  "TransMIL models/TransMIL.py (Nystromformer MIL with PPEG)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the standalone smoke test below needs Tensor.npu"),
      C("cls_tokens = self.cls_token.expand(B, -1, -1).cuda()", "tensor_to_device", "replace", False,
        "cls_tokens = self.cls_token.expand(B, -1, -1).to(h.device)",
        "works under train.py's transfer_to_npu (Tensor.cuda -> npu); made device-agnostic so the model runs outside that launcher"),
      C("data = torch.randn((1, 6000, 1024)).cuda()", "tensor_to_device", "replace", True,
        "data = torch.randn((1, 6000, 1024)).npu()", "__main__ smoke test has no transfer_to_npu; .cuda() fails"),
      C("model = TransMIL(n_classes=2).cuda()", "tensor_to_device", "replace", True,
        "model = TransMIL(n_classes=2).npu()", "same"),
  ])

E("transmil_optim", "TransMIL/MyOptimizer/optim_factory.py", "device_branch_or_abstraction",
  "TransMIL MyOptimizer/optim_factory.py (timm 0.3 optimizer factory with apex fused optimizers)",
  [
      C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "add_branch", False,
        "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
        "apex CUDA kernels are unavailable; ImportError is already caught. NPU fused optimizers are a speed-up only, TransMIL uses lookahead_radam"),
      C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'", "torch_cuda_api", "replace", False,
        "assert has_apex or has_npu_fused, 'APEX (CUDA) or torch_npu fused optimizers required'",
        "only reached for opt='fused*'"),
      C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer", "add_branch", False,
        "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused SGD on NPU"),
      C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer", "add_branch", False,
        "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused momentum SGD on NPU"),
      C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "add_branch", False,
        "optimizer = NpuFusedAdam(parameters, **opt_args)", "NpuFusedAdam has no adam_w_mode flag"),
      C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "add_branch", False,
        "optimizer = NpuFusedAdamW(parameters, **opt_args)", "AdamW is a separate NPU class"),
      C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "add_branch", False,
        "optimizer = NpuFusedLamb(parameters, **opt_args)", "fused LAMB on NPU"),
  ])

E("transmil_requirements", "TransMIL/requirements.txt", "explicit_replacement",
  "TransMIL requirements (torch 1.10 + cu111 wheels, pytorch-lightning 1.3)",
  [
      C("-f https://download.pytorch.org/whl/cu111/torch_stable.html", "torch_cuda_api", "removal", False, None,
        "only serves the +cu111 pins below; harmless once they are gone"),
      C("torch==1.10.1+cu111", "torch_cuda_api", "replace", True, "torch==1.11.0",
        "CUDA build with no aarch64 wheel, and torch_npu has no 1.10 release (1.11.0 is the closest supported 1.x)"),
      C("torchvision==0.11.2+cu111", "torch_cuda_api", "replace", True, "torchvision==0.12.0",
        "CUDA build; 0.12.0 pairs with torch 1.11.0"),
      C("pytorch-lightning==1.3.8", "import_torch_npu", "npu_only_addition", True, "torch-npu==1.11.0.post14",
        "torch_npu for torch 1.11.0 (whether its transfer_to_npu covers Lightning 1.3 is unconfirmed)"),
  ])

# ----------------------------------------------------------------------------------------- HIPT
E("hipt_4k", "HIPT/HIPT_4K/hipt_4k.py", "explicit_replacement",
  "HIPT HIPT_4K/hipt_4k.py (ViT-256 + ViT-4K hierarchical inference split over two GPUs)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the default device arguments are evaluated at import time; torch.device('npu:0') needs torch_npu loaded"),
      C("device256=torch.device('cuda:0'),", "device_type", "replace", True, "device256=torch.device('npu:0'),",
        "default device for ViT-256; .to('cuda:0') fails"),
      C("device4k=torch.device('cuda:1')):", "device_type", "replace", True, "device4k=torch.device('npu:1')):",
        "default device for ViT-4K (second card)"),
  ])

E("hipt_model_utils", "HIPT/HIPT_4K/hipt_model_utils.py", "explicit_replacement",
  "HIPT HIPT_4K/hipt_model_utils.py (get_vit256 / get_vit4k loaders, attention helpers)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "default device arguments below are built at import time"),
      C("def get_vit256(pretrained_weights, arch='vit_small', device=torch.device('cuda:0')):", "device_type", "replace", True,
        "def get_vit256(pretrained_weights, arch='vit_small', device=torch.device('npu:0')):", "model256.to('cuda:0') fails"),
      C("def get_vit4k(pretrained_weights, arch='vit4k_xs', device=torch.device('cuda:1')):", "device_type", "replace", True,
        "def get_vit4k(pretrained_weights, arch='vit4k_xs', device=torch.device('npu:1')):", "model4k.to('cuda:1') fails"),
  ])

E("hipt_main_dino4k", "HIPT/1-Hierarchical-Pretraining/main_dino4k.py", "explicit_replacement",
  "HIPT 1-Hierarchical-Pretraining/main_dino4k.py (DINO ViT-4K pretraining, DDP + fp16)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry script of a torchrun/launch job"),
      C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "without a pin_memory_device older torch DataLoaders only pin when CUDA is available: silently unpinned on NPU (unconfirmed in the knowledge notes)"),
      C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", "replace", True,
        "student, teacher = student.npu(), teacher.npu()", "Module.cuda() fails without CUDA"),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "DINOLoss(...).cuda(): the center buffer must be on the NPU"),
      C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "fp16_scaler = torch.npu.amp.GradScaler()",
        "the CUDA GradScaler warns and disables itself without CUDA; training stays correct in fp32 (speed/memory only)"),
      C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", "replace", True,
        "images = [im.npu(non_blocking=True) for im in images]", "Tensor.cuda fails"),
      C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", "replace", False,
        "with torch.npu.amp.autocast(fp16_scaler is not None):",
        "CUDA autocast is disabled with a warning when CUDA is absent; fp32 fallback is correct but slower"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises on a CPU-only torch build"),
  ])

E("hipt_dino_utils", "HIPT/1-Hierarchical-Pretraining/utils.py", "explicit_replacement",
  "DINO/HIPT utils.py (init_distributed_mode, MetricLogger, SmoothedValue, LARS)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above already reaches the NPU generator (unconfirmed)"),
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "HCCL all_reduce needs an NPU tensor; 'cuda' fails (float64 over HCCL kept as upstream, unconfirmed)"),
      C("show_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "show_mem = torch.npu.is_available()",
        "logging only: the 'max mem' column silently disappears"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "only reached when show_mem is ported"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "SLURM launch path: device_count() is 0 -> ZeroDivisionError"),
      C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
        "plain 'python main_dino4k.py' launch: falls through to 'Does not support training without GPU' and exits"),
      C("backend=\"nccl\",", "dist_backend", "replace", True, "backend=\"hccl\",", "NCCL is not available on Ascend"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
  ])

E("hipt_launch_sh", "HIPT/1-Hierarchical-Pretraining/scripts/launch_dino4k.sh", "explicit_replacement",
  "HIPT DINO-4K single-node launcher (torch.distributed.launch, 8 GPUs)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL-only; HCCL logging is controlled through ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no effect on HCCL; single node"),
      C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
        "allocator tuning silently ignored on NPU (max_split_size_mb support in PYTORCH_NPU_ALLOC_CONF unconfirmed)"),
      C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=$NGPU \\",
        "ignored on NPU, but it lists every card of an 8-NPU node, so nothing changes in practice"),
  ])

E("hipt_hier_mil", "HIPT/2-Weakly-Supervised-Subtyping/models/model_hierarchical_mil.py", "explicit_replacement",
  "HIPT 2-Weakly-Supervised-Subtyping/models/model_hierarchical_mil.py (HIPT_LGP_FC)",
  [
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")", "silent CPU placement"),
      C("if torch.cuda.device_count() >= 1:", "torch_cuda_api", "removal", True, None,
        "0 on NPU, and unlike CLAM there is no else-branch: local_vit would stay on the CPU while the rest moves to NPU"),
      C("device_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "removal", False, None,
        "unused once DataParallel is gone"),
      C("self.local_vit = nn.DataParallel(self.local_vit, device_ids=device_ids).to('cuda:0')", "distributed_framework", "replace", True,
        "self.local_vit = self.local_vit.to(device)", "DataParallel unsupported on NPU; the ViT-4K must still be moved"),
      C("self.global_vit = nn.DataParallel(self.global_vit, device_ids=device_ids).to('cuda:0')", "distributed_framework", "replace", False,
        "self.global_vit = self.global_vit.to(device)",
        "pretrain_WSI path is a stub upstream (global_vit is never built), so unreachable"),
  ])

# ----------------------------------------------------------------------------------------- UNI / CONCH / Prov-GigaPath
E("uni_get_encoder", "UNI/uni/get_encoder/get_encoder.py", "explicit_replacement",
  "UNI uni/get_encoder/get_encoder.py (timm ViT-L/16 loader, HF hub download)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the default device is computed at import time and needs torch.npu (UNI targets torch 2.0-2.3, no autoload)"),
      C("device=torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\"),", "device_type", "replace", True,
        "device=torch.device(\"npu\" if torch.npu.is_available() else \"cpu\"),",
        "default placement silently becomes the CPU on an NPU host"),
  ])

E("uni_extract_patch_features", "UNI/uni/downstream/extract_patch_features.py", "device_branch_or_abstraction",
  "UNI uni/downstream/extract_patch_features.py (patch-benchmark embedding extraction)",
  [
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available(), pin_memory_device='npu',",
        "False on NPU: batches are not pinned; performance only"),
      C("with torch.inference_mode(), torch.autocast(device_type=\"cuda\", dtype=amp_dtype, enabled=use_amp):", "amp", "replace", False,
        "with torch.inference_mode(), torch.autocast(device_type=device.type, dtype=amp_dtype, enabled=use_amp):",
        "autocast('cuda') disables itself without CUDA; embeddings come out in fp32 (slower, not wrong)"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "cache release skipped on NPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "dead on NPU as written"),
  ])

E("uni_linear_probe", "UNI/uni/downstream/eval_patch_features/linear_probe.py", "explicit_replacement",
  "UNI eval_patch_features/linear_probe.py (torch L-BFGS logistic regression)",
  [
      C("return self.logreg(feats.cuda()).softmax(dim=-1).cpu()", "tensor_to_device", "replace", True,
        "return self.logreg(feats.to(self.logreg.weight.device)).softmax(dim=-1).cpu()", "Tensor.cuda fails"),
      C("self.logreg = nn.Linear(feat_dim, num_classes).cuda()", "tensor_to_device", "replace", True,
        "self.logreg = nn.Linear(feat_dim, num_classes).npu()", "Module.cuda fails"),
      C("feats, labels = feats.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
        "feats, labels = feats.npu(), labels.npu()", "Tensor.cuda fails"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU cache never released between probes"),
  ])

E("conch_zeroshot", "CONCH/scripts/zeroshot_tcga_benchmark.py", "transfer_to_npu",
  "CONCH-style zero-shot TCGA benchmark script (MI-Zero pooling, NVML/NVTX instrumentation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "transfer_to_npu covers device strings, torch.cuda.amp, memory stats, synchronize and get_device_name in this script (deliberately unlabelled)"),
      C("=import pynvml", "torch_cuda_api", "removal", False, None,
        "the import itself succeeds if the wheel is installed; NVML has no NPU backend"),
      C("handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)", "torch_cuda_api", "removal", True, None,
        "NVML is not redirected by transfer_to_npu; fails on an Ascend host"),
      C("return pynvml.nvmlDeviceGetMemoryInfo(handle).used / 1024 ** 2", "torch_cuda_api", "replace", True,
        "free, total = torch.npu.mem_get_info(device_index); return (total - free) / 1024 ** 2",
        "device memory in use via torch_npu instead of NVML"),
      C("torch.cuda.nvtx.range_push(\"encode_image\")", "torch_cuda_api", "replace", True,
        "rid = torch.npu.mstx.range_start(\"encode_image\")",
        "torch.cuda.nvtx is not in the transfer_to_npu alias list; on a non-CUDA torch build it raises (mstx call signature unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch.npu.mstx.range_end(rid)",
        "same"),
      C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
        "raises NVMLError (no libnvidia-ml) on an Ascend host"),
  ])

E("gigapath_pipeline", "prov-gigapath/gigapath/pipeline.py", "explicit_replacement",
  "Prov-GigaPath gigapath/pipeline.py (tile encoder + LongNet slide encoder inference)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "user-facing pipeline module; the env pins torch 2.0/2.1, no autoload"),
      C("tile_encoder = tile_encoder.cuda()", "tensor_to_device", "replace", True, "tile_encoder = tile_encoder.npu()",
        "Module.cuda fails"),
      C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", False,
        "with torch.npu.amp.autocast(dtype=torch.float16):", "CUDA autocast silently disabled -> fp32 tile encoding"),
      C("collated_outputs['tile_embeds'].append(tile_encoder(batch['img'].cuda()).detach().cpu())", "tensor_to_device", "replace", True,
        "collated_outputs['tile_embeds'].append(tile_encoder(batch['img'].npu()).detach().cpu())", "Tensor.cuda fails"),
      C("slide_encoder_model = slide_encoder_model.cuda()", "tensor_to_device", "replace", True,
        "slide_encoder_model = slide_encoder_model.npu()", "Module.cuda fails"),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "on torch 2.0/2.1 is_bf16_supported() calls torch.cuda.current_device() and raises on a CPU-only build; Atlas A2 supports bf16"),
      C("with torch.cuda.amp.autocast(dtype=amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(dtype=amp_dtype):", "silently disabled -> fp32"),
      C("slide_embeds = slide_encoder_model(tile_embeds.cuda(), coords.cuda(), all_layer_embed=True)", "tensor_to_device", "replace", True,
        "slide_embeds = slide_encoder_model(tile_embeds.npu(), coords.npu(), all_layer_embed=True)", "Tensor.cuda fails"),
  ])

E("gigapath_flash_attention", "prov-gigapath/gigapath/torchscale/component/flash_attention.py", "device_branch_or_abstraction",
  "Prov-GigaPath torchscale component/flash_attention.py (flash-attn 2 / xformers CUTLASS, returns lse)",
  [
      C("if torch.cuda.get_device_capability()[0] > 7:", "device_capability_check", "add_branch", True,
        "if hasattr(torch, 'npu') and torch.npu.is_available():  # NPU branch first, then elif for sm80+",
        "evaluated at import: get_device_capability initialises CUDA and raises on an NPU host, so LongNet cannot even be imported"),
      C("attn, lse, _ = _flash_attn_func(q, k, v, dropout_p=dropout, softmax_scale=softmax_scale,", "attention_kernel", "add_branch", True,
        "attn, s_max, s_sum, *_ = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], 'BSND', keep_prob=1.0 - dropout, scale=softmax_scale, sparse_mode=3 if is_causal else 0)",
        "flash-attn cannot be installed on NPU and xformers has no NPU backend; lse for the dilated-branch merge is rebuilt as s_max + log(s_sum) (layout of those outputs to be checked)"),
  ])

E("gigapath_env", "prov-gigapath/environment.yaml", "explicit_replacement",
  "Prov-GigaPath environment.yaml",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; unused once pytorch-cuda is dropped"),
      C("- pytorch=2.0.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
        "torch_npu has no build for torch 2.0.0 (2.0.1 is the only 2.0.x); 2.1.0 CPU build to pair with torch-npu 2.1.0.postN"),
      C("- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "forces the CUDA variant of pytorch and has no linux-aarch64 package"),
      C("- torchvision=0.15.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "0.15 pins torch 2.0; 0.16 pairs with 2.1"),
      C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
        "nvcc toolchain only needed to build flash-attn; not needed on NPU (fails to resolve on aarch64, unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch_npu for torch 2.1.0 (CANN 8.0.0)"),
      C("- flash-attn==2.5.8", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built or installed without CUDA; replaced by torch_npu.npu_fusion_attention"),
      C("- xformers==0.0.20", "attention_kernel", "removal", False, None,
        "no NPU backend; only the pre-Ampere CUDA branch imports it (install behaviour on NPU hosts unconfirmed)"),
  ])

# ----------------------------------------------------------------------------------------- cuCIM tiling tool
E("wsi_cucim_tiler", "wsi_tiling/wsi_tiling/cucim_tiler.py", "explicit_replacement",
  "cuCIM-based WSI tiler with CuPy tissue masks and torch Macenko normalisation",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "entry point (-m / console script); torch.device('npu:0') needs torch_npu"),
      C("p.add_argument(\"--decode_device\", default=\"cuda\"", "device_type", "replace", True,
        "p.add_argument(\"--decode_device\", default=\"cpu\", choices=[\"cpu\", \"cuda\"],",
        "cuCIM's 'cuda' decode path (nvJPEG) needs a CUDA GPU; default must be the CPU reader"),
      C("p.add_argument(\"--device\", default=\"cuda:0\"", "device_type", "replace", True,
        "p.add_argument(\"--device\", default=\"npu:0\", help=\"torch device for stain normalisation\")",
        "default torch device string"),
      C("_, eigvecs = torch.linalg.eigh(cov)", "unsupported_op_workaround", "replace", False,
        "_, eigvecs = torch.linalg.eigh(cov.cpu()); eigvecs = eigvecs.to(cov.device)",
        "no NPU kernel for linalg_eigh: it falls back to the CPU per tile with a warning; doing the 3x3 solve on the host explicitly is cleaner"),
      C("conc = torch.linalg.lstsq(he, od_b.T).solution  # [2, H*W]", "unsupported_op_workaround", "replace", False,
        "conc = torch.inverse(he.T @ he) @ he.T @ od_b.T  # [2, H*W]",
        "torch.linalg.lstsq 'may fall back to CPU' on NPU, copying 65k x 3 pixels per tile to the host; normal equations use NPU kernels"),
      C("if device.type == \"cuda\":", "device_type", "add_branch", False,
        "elif device.type == \"npu\": torch.npu.synchronize(device)",
        "timing only; the per-batch .cpu() copy already synchronises"),
  ])

E("wsi_dockerfile", "wsi_tiling/Dockerfile", "explicit_replacement",
  "NGC-based Dockerfile for the cuCIM tiler",
  [
      C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "NGC image ships CUDA torch and no CANN/torch_npu (Ascend base-image tag is a plausible example, unconfirmed)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "nvidia-container-runtime variable; NPUs are mounted by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES at docker run)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "nvidia-container-runtime only"),
      C("RUN pip install cupy-cuda12x==13.1.0", "custom_cuda_extension", "removal", False, None,
        "CUDA-only; the tiler already falls back to scikit-image when CuPy or CUDA is missing"),
      C("RUN pip install openslide-python==1.3.1", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
        "the CANN base image carries no torch/torch_npu"),
      C("ENV CUDA_MODULE_LOADING=LAZY", "env_var", "removal", False, None, "CUDA runtime setting; no effect on NPU"),
  ])

E("wsi_pyproject", "wsi_tiling/pyproject.toml", "explicit_replacement",
  "pyproject.toml of the cuCIM tiling package",
  [
      C("\"torch>=2.1\",", "import_torch_npu", "replace", True, "\"torch==2.1.0\",",
        "torch_npu x.y.z must pair with torch x.y.z; an open lower bound resolves to the newest torch"),
      C("=\"torchvision\",", "import_torch_npu", "npu_only_addition", True, "\"torch-npu==2.1.0.post10\",",
        "torch_npu pin matching torch 2.1.0"),
      C("\"cupy-cuda12x>=13.0\",", "custom_cuda_extension", "removal", False, None,
        "CUDA-only extra; code path already guarded"),
  ])
