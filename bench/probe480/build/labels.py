"""Labels for probe480 (dermatology / skin-lesion analysis, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `required` follows the complete-port
counterfactual described in README.md.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


ISIC = "haqishen/SIIM-ISIC-Melanoma-Classification-1st-Place-Solution"
VMU = "JCruan519/VM-UNet"
FITZ = "mattgroh/fitzpatrick17k"
DDI = "DDI (Diverse Dermatology Images) evaluation code, Daneshjou et al."
FDC = "siyi-wind/FairDisCo"
PAN = "SiyuanYan1/PanDerm"

SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# 1. SIIM-ISIC 2020 melanoma classification, 1st place (EfficientNet/ResNeSt ensembles, apex AMP,
#    nn.DataParallel selected from a --CUDA_VISIBLE_DEVICES flag)
# --------------------------------------------------------------------------------------------
E("isic1st_train", "train.py", "explicit_replacement", ISIC + " train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; the project needs torch upgraded to a torch_npu-paired release (e.g. 2.1.0) where the "
      "import is still mandatory (autoload only from torch_npu 2.5.1)."),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) two lines above already seeds every device generator; on a host without CUDA "
      "torch.cuda.manual_seed is a silent no-op. Edited for clarity only (unconfirmed that torch.manual_seed "
      "reaches the NPU generator on every torch_npu version)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Same as above: redundant with torch.manual_seed; silent no-op without CUDA."),
    C('amp.initialize(model, optimizer, opt_level="O1")', "amp", "replace", False,
      'model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale="dynamic", combine_grad=True)',
      "Port keeps apex AMP by installing Ascend apex (O1/O2, dynamic loss scale supported). combine_grad is an "
      "Ascend-apex performance option (fused unscale), so not required; unconfirmed for every apex-patch version."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES",
      "The Ascend runtime ignores CUDA_VISIBLE_DEVICES; the flag is a user-chosen device list (run.sh passes "
      "0,1 / 0,1,2,3), so the mask must be applied with ASCEND_RT_VISIBLE_DEVICES."),
    C("DP = len(os.environ['CUDA_VISIBLE_DEVICES']) > 1", "distributed_framework", "replace", True,
      "DP = False  # nn.DataParallel is not supported on Ascend NPUs; use DDP for multi-NPU training",
      "nn.DataParallel is marked unsupported on Atlas A2/A3; with the env line ported the key lookup would also "
      "raise KeyError. Forcing DP off also disables the apex SyncBN conversion and the DataParallel wrap below."),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "Module-level device global used by train_epoch/val_epoch."),
])

E("isic1st_predict", "predict.py", "explicit_replacement", ISIC + " predict.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "Entry script, but it imports train.py (`from train import get_trans`) whose ported version already imports "
      "torch_npu before any NPU call here, so the explicit import is hygiene only."),
    C("model.load_state_dict(torch.load(model_file), strict=True)", "device_type", "replace", True,
      "model.load_state_dict(torch.load(model_file, map_location='cpu'), strict=True)",
      "The published 1st-place weights were saved from CUDA models (the except-branch even handles the "
      "DataParallel 'module.' prefix); torch.load without map_location restores CUDA storages and raises on a host "
      "without CUDA."),
    C("state_dict = torch.load(model_file)", "device_type", "replace", True,
      "state_dict = torch.load(model_file, map_location='cpu')",
      "Fallback branch for multi-GPU checkpoints; same CUDA-storage deserialisation failure."),
    C("if len(os.environ['CUDA_VISIBLE_DEVICES']) > 1:", "distributed_framework", "replace", True,
      "if False:  # nn.DataParallel is not supported on Ascend NPUs; keep each fold model on one NPU",
      "After the env port the key no longer exists (KeyError) and nn.DataParallel is unsupported on NPU."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES",
      "User-selected device list; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime."),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "Module-level device global."),
])

E("isic1st_evaluate", "evaluate.py", "explicit_replacement", ISIC + " evaluate.py (out-of-fold AUC)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "`import train as T` pulls in the ported train.py, which imports torch_npu; hygiene only."),
    C("model.load_state_dict(torch.load(model_file), strict=True)", "device_type", "replace", True,
      "model.load_state_dict(torch.load(model_file, map_location='cpu'), strict=True)",
      "GPU-saved fold weights; deserialising CUDA storages fails without CUDA."),
    C("state_dict = torch.load(model_file)", "device_type", "replace", True,
      "state_dict = torch.load(model_file, map_location='cpu')",
      "Same, DataParallel-checkpoint branch."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.CUDA_VISIBLE_DEVICES",
      "User-selected device; ignored by the Ascend runtime otherwise."),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "Also injected into train.py as T.device for val_epoch."),
])

E("isic1st_dataset", "dataset.py", "explicit_replacement", ISIC + " dataset.py (albumentations pipeline)", [])

E("isic1st_models", "models.py", "explicit_replacement",
  ISIC + " models.py (geffnet / ResNeSt / SE-ResNeXt heads with meta MLP)", [])

E("isic1st_util", "util.py", "explicit_replacement", ISIC + " util.py (GradualWarmupSchedulerV2)", [])

E("isic1st_run", "run.sh", "explicit_replacement", ISIC + " README training commands as a shell launcher", [
    C("DATA_DIR=/raid/", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment for torch_npu; often already exported by the container image, so not required."),
])

# --------------------------------------------------------------------------------------------
# 2. VM-UNet (Vision-Mamba UNet) for ISIC17/18 lesion segmentation
# --------------------------------------------------------------------------------------------
E("vmunet_train", "train.py", "explicit_replacement", VMU + " train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "`from engine import *` imports the ported engine.py, which imports torch.npu.amp before main() runs; "
      "an explicit import is hygiene only."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config.gpu_id',
      "Device chosen in configs/config_setting.py (gpu_id); ignored by the Ascend runtime otherwise."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Silent no-op without CUDA; only frees cached memory, so not required."),
    C("torch.cuda.empty_cache()  # release cached blocks", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks from the previous epoch",
      "Per-epoch cache release; memory hygiene only."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module placement; tensors are moved with .cuda() in engine.py."),
])

E("vmunet_engine", "engine.py", "explicit_replacement", VMU + " engine.py (train/val/test loops)", [
    C("from torch.cuda.amp import autocast as autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast as autocast, GradScaler",
      "Reached when config.amp=True; cuda autocast is disabled with a warning on an NPU host and the CUDA "
      "GradScaler disables itself, so the AMP option would silently train in fp32 (or, with autocast ported "
      "alone, in fp16 without loss scaling)."),
    C("images, targets = images.cuda(non_blocking=True).float(), targets.cuda(non_blocking=True).float()",
      "tensor_to_device", "replace", True,
      "images, targets = images.npu(non_blocking=True).float(), targets.npu(non_blocking=True).float()",
      "Training batch placement."),
    C("=img, msk = img.cuda(non_blocking=True).float(), msk.cuda(non_blocking=True).float()",
      "tensor_to_device", "replace", True,
      "img, msk = img.npu(non_blocking=True).float(), msk.npu(non_blocking=True).float()",
      "Validation batch placement."),
    C("# bs=1 at test time", "tensor_to_device", "replace", True,
      "img, msk = img.npu(non_blocking=True).float(), msk.npu(non_blocking=True).float()  # bs=1 at test time",
      "Test batch placement."),
])

E("vmunet_utils", "utils.py", "explicit_replacement", VMU + " utils.py (seed, optim/sched factories, losses, thop)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) is called just before; silent no-op without CUDA (unconfirmed that every "
      "torch_npu version seeds the NPU generator from torch.manual_seed)."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Redundant with torch.manual_seed."),
    C("input = torch.randn(1, 3, size, size).cuda()", "tensor_to_device", "replace", True,
      "input = torch.randn(1, 3, size, size).npu()",
      "Dummy input for thop FLOP counting runs through the NPU model; .cuda() raises without CUDA."),
])

E("vmunet_config", "configs/config_setting.py", "explicit_replacement",
  VMU + " configs/config_setting.py (class-attribute config)", [])

E("vmunet_vmamba", "models/vmunet/vmamba.py", "kernel_rewrite",
  VMU + " models/vmunet/vmamba.py (VMamba SS2D blocks calling mamba_ssm selective_scan_fn)", [
    C("from mamba_ssm.ops.selective_scan_interface import selective_scan_fn, selective_scan_ref",
      "custom_cuda_extension", "replace", True,
      "from .selective_scan_torch import selective_scan_fn, selective_scan_ref  # vendored pure-PyTorch scan; "
      "mamba_ssm's CUDA kernel cannot be built for Ascend",
      "mamba_ssm imports its nvcc-built selective_scan_cuda extension at import time; the bare except swallows the "
      "failure and forward_corev0 then hits NameError on selective_scan_fn. The port vendors the reference scan "
      "(slow sequential loop; an Ascend C / triton-ascend kernel would be the performance follow-up)."),
])

E("vmunet_model", "models/vmunet/vmunet.py", "explicit_replacement", VMU + " models/vmunet/vmunet.py (load_from)", [
    C("=modelCheckpoint = torch.load(self.load_ckpt_path)", "device_type", "replace", True,
      "modelCheckpoint = torch.load(self.load_ckpt_path, map_location='cpu')",
      "The released VMamba ImageNet checkpoint (vmamba_small_e238_ema.pth) was saved from a CUDA model by a "
      "Swin-style trainer; without map_location its CUDA storages cannot be restored on an NPU host."),
    C("torch.load(self.load_ckpt_path)  # reload", "device_type", "replace", True,
      "modelCheckpoint = torch.load(self.load_ckpt_path, map_location='cpu')  # reload: decoder stages mirror the encoder",
      "Second load of the same checkpoint for the decoder."),
])

E("vmunet_dataset", "datasets/dataset.py", "explicit_replacement", VMU + " datasets/dataset.py (NPY_datasets)", [])

E("vmunet_install", "install.sh", "explicit_replacement", VMU + " README environment steps as an install script", [
    C("pip install torch==1.13.0 torchvision==0.14.0", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 torch-npu==2.1.0.post12",
      "There is no torch_npu release for torch 1.13 (only 1.11 / 2.0.1 / 2.1+); the cu117 wheels are useless on an "
      "Ascend host. Python 3.8 is still supported by torch 2.1."),
    C("pip install triton==2.0.0", "triton_kernel_tuning", "removal", False, None,
      "VM-UNet never imports triton at runtime (mamba_ssm did); removal avoids an unusable CUDA triton. "
      "Unconfirmed whether the install itself would fail on the target host."),
    C("pip install causal_conv1d==1.0.0", "custom_cuda_extension", "removal", True, None,
      "CUDA-only extension (nvcc build or cu118 wheel); with `set -e` the failed build aborts the script."),
    C("pip install mamba_ssm==1.0.1", "custom_cuda_extension", "removal", True, None,
      "CUDA-only selective-scan kernels; replaced by the vendored pure-PyTorch scan in vmamba.py."),
])

E("vmunet_test", "test.py", "explicit_replacement", VMU + " test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "torch_npu arrives transitively through `from engine import *`; hygiene only."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config.gpu_id',
      "Configurable device id; ignored by the Ascend runtime."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; cache hygiene only."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module placement for testing."),
])

# --------------------------------------------------------------------------------------------
# 3. Fitzpatrick17k skin-tone holdout experiments
# --------------------------------------------------------------------------------------------
E("fitz_train", "train.py", "explicit_replacement", FITZ + " train.py (VGG-16 transfer learning, skin-type holdouts)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Single-file entry script; nothing else imports torch_npu."),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "Left alone, the CPU fallback silently trains all seven holdout experiments on the host CPU."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "Guards the .cpu() copies of ppp/preds/probability; on NPU the branch is skipped and the later .numpy() calls "
      "raise on NPU tensors."),
])

# --------------------------------------------------------------------------------------------
# 4. DDI (Diverse Dermatology Images) benchmark evaluation
# --------------------------------------------------------------------------------------------
E("ddi_eval", "eval_ddi.py", "explicit_replacement", DDI + " eval_ddi.py (DeepDerm / HAM10000 Inception-v3)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script."),
    C('device = torch.device("cuda" if use_gpu else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_gpu else "cpu")',
      "--use_gpu path; images are moved with .to(device)."),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Model placement under --use_gpu."),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu selects the card; ignored by the Ascend runtime."),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      'print(f"Evaluating on NPU {args.gpu}: {torch.npu.get_device_name(0)}")',
      "Raises without CUDA (lazy CUDA init), so the --use_gpu path dies before evaluation."),
])

E("ddi_dataset", "ddi_dataset.py", "explicit_replacement", DDI + " ddi_dataset.py (ImageFolder + metadata CSV)", [])

# --------------------------------------------------------------------------------------------
# 5. FairDisCo (disentanglement + contrastive learning for skin-tone fairness)
# --------------------------------------------------------------------------------------------
E("fairdisco_train", "train_FairDisCo.py", "explicit_replacement", FDC + " train_FairDisCo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script."),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "Module-level device global used for the model, batches and class weights."),
    C("label, level, torch.cuda.get_device_name(device)))", "torch_cuda_api", "replace", True,
      "label, level, torch.npu.get_device_name(device)))",
      "torch.cuda.get_device_name raises without CUDA, aborting before training starts."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Between label granularities; cache hygiene only."),
])

E("fairdisco_losses", "losses.py", "explicit_replacement", FDC + " losses.py (Confusion_Loss, SupContrast loss)", [
    C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
      "HobbitLong SupCon idiom split over three lines; both the device string and the is_cuda test must change "
      "(or the whole expression become features.device)."),
    C("if features.is_cuda", "device_type", "replace", True, "if features.is_npu",
      "is_cuda is False for NPU tensors, so the masks are built on the CPU and torch.scatter/mask*log_prob fail "
      "with a device mismatch."),
])

E("fairdisco_models", "models.py", "explicit_replacement", FDC + " models.py (three-branch Network, baselines)", [])

E("fairdisco_utils", "utils.py", "explicit_replacement", FDC + " utils.py (seed, PQD/DPM/EOM fairness metrics)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed(seed) precedes it; silent no-op without CUDA."),
])

E("fairdisco_run", "run.sh", "explicit_replacement", FDC + " README commands as a parallel launcher", [
    C("mkdir -p logs results", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; frequently preset in the container."),
    C("CUDA_VISIBLE_DEVICES=0 nohup", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 nohup python -u train_FairDisCo.py --backbone resnet18 --holdout_set random_holdout \\",
      "Ignored on NPU, but the job would land on npu:0 anyway, so the mask changes nothing."),
    C("CUDA_VISIBLE_DEVICES=1 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 nohup python -u train_FairDisCo.py --backbone resnet50 --holdout_set random_holdout \\",
      "Ignored mask: this run would silently share npu:0 with the other three instead of using card 1."),
    C("CUDA_VISIBLE_DEVICES=2 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2 nohup python -u train_FairDisCo.py --backbone vgg16 --holdout_set random_holdout \\",
      "Same: all four runs pile onto npu:0."),
    C("CUDA_VISIBLE_DEVICES=3 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=3 nohup python -u train_FairDisCo.py --backbone resnet18 --dataset ddi --holdout_set random_holdout \\",
      "Same."),
    C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", "replace", False, "npu-smi info",
      "Diagnostic printout after all runs finished; failure does not affect results."),
])

# --------------------------------------------------------------------------------------------
# 6. PanDerm dermatology foundation model (BEiT/MAE-style fine-tuning + linear probe)
# --------------------------------------------------------------------------------------------
E("panderm_finetune", "classification/run_class_finetuning.py", "explicit_replacement",
  PAN + " classification/run_class_finetuning.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script; neither utils.py nor engine_for_finetuning.py imports torch_npu."),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
      "Default device string feeds torch.device(args.device) and every .to(device)."),
    C("print(f'Peak GPU memory: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GB')", "torch_cuda_api",
      "replace", False, "print(f'Peak NPU memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GB')",
      "Without CUDA initialised this silently reports 0; log output only."),
])

E("panderm_engine", "classification/engine_for_finetuning.py", "explicit_replacement",
  PAN + " classification/engine_for_finetuning.py", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "cuda autocast is disabled with a warning on an NPU host: the fine-tuning recipe would silently run in fp32 "
      "while the (ported) GradScaler still scales."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Triggers lazy CUDA init and raises on a host without CUDA, every iteration."),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "Evaluation autocast; silently falls back to fp32 (requested precision dropped)."),
])

E("panderm_utils", "classification/utils.py", "explicit_replacement", PAN + " classification/utils.py", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "Metric all-reduce under distributed training; a 'cuda' tensor cannot be created on an NPU host and HCCL "
      "needs the tensor on the NPU."),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = torch.npu.is_available()",
      "Only decides whether peak memory is appended to the log line."),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "Log value only (would print 0)."),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError."),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "Per-rank device binding; raises without CUDA."),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is unavailable; HCCL is the Ascend collective backend."),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "The CUDA GradScaler disables itself without CUDA; with NPU autocast active the fp16 backward would run "
      "without loss scaling."),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()",
      "all_reduce_mean for multi-process logging; .cuda() raises."),
])

E("panderm_linear", "classification/linear_eval.py", "explicit_replacement",
  PAN + " linear-probe evaluation (frozen features + sklearn logistic regression)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "Entry script."),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "Silent CPU fallback for ViT-L feature extraction otherwise."),
    C('with torch.autocast(device_type="cuda"', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=fp16):',
      "--fp16 would be silently ignored (cuda autocast disabled with a warning)."),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "print(f'Running linear probe on {device} ({torch.npu.device_count()} visible NPUs)')",
      "Log line only (prints 0)."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "Frees the encoder's cached memory before the sklearn fit; hygiene only."),
])

E("panderm_model", "classification/models/modeling_finetune.py", "explicit_replacement",
  PAN + " classification/models/modeling_finetune.py (ViT-L encoder, optional xformers)", [])

E("panderm_ham_sh", "classification/scripts/finetune_ham10000.sh", "explicit_replacement",
  PAN + " fine-tuning launcher for HAM10000", [
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; often already set in the image."),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 --master_port=${MASTER_PORT} run_class_finetuning.py \\",
      "Ignored on NPU, but local ranks 0-3 bind npu:0-3 anyway, so placement is unchanged."),
    C("CUDA_VISIBLE_DEVICES=0 python3", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 run_class_finetuning.py \\",
      "Single-device eval lands on npu:0 regardless."),
])

E("panderm_requirements", "requirements.txt", "explicit_replacement", PAN + " requirements.txt", [
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch 2.1.0 pairs with torch_npu 2.1.0.postN (post12 = v2.1.0-7.0.0, CANN 8.1.RC1)."),
    C("xformers==0.0.22.post7", "attention_kernel", "removal", False, None,
      "xformers has no NPU backend; the model guards it (use_xformers=False, ImportError fallback to SDPA). "
      "Unconfirmed whether pip would fail on the target host, so not required."),
])
