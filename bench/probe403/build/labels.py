"""Labels for probe403 (retinal / ophthalmic image analysis, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; `required` uses the complete-port
counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# RETFound (rmaphoh/RETFound_MAE): MAE-style ViT fine-tuning on fundus / OCT classification
# ---------------------------------------------------------------------------------------------
E("rf_main_finetune", "main_finetune.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE main_finetune.py (MAE/DeiT fine-tuning entry point, HF-hub weights)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: load torch_npu before any torch.npu.* / 'npu' device use (autoload only from torch_npu 2.5.1)"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default device string feeds torch.device(args.device); 'cuda' fails on an NPU host"),
])

E("rf_engine_finetune", "engine_finetune.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE engine_finetune.py (train_one_epoch / evaluate with sklearn metrics)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast is disabled (warning) without CUDA, so the NPU step silently runs in fp32 next to an NPU GradScaler"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-step sync; torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("with torch.cuda.amp.autocast():  # fp16 inference", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # fp16 inference, same as training",
      "evaluation autocast would be silently disabled; the model then evaluates in fp32, unlike the documented fp16 path"),
])

E("rf_misc", "util/misc.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE util/misc.py (MAE MetricLogger, init_distributed_mode, NativeScaler)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "tensor for the HCCL all_reduce must live on the NPU; fp64 over HCCL not checked (kept as upstream)"),
    C("if torch.cuda.is_available():  # report peak", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # report peak NPU memory in the log line",
      "only decides whether the log format gets a memory column; left as is the column is just missing"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "must match the first guard: with that one ported the format string has {memory} and the else branch raises KeyError"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", True,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "torch.cuda.max_memory_allocated raises without CUDA once the guard above is true on NPU"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: cuda device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "bind each rank to its NPU before init_process_group"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA -> fp16 gradients would go unscaled"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", ".cuda() raises on an NPU host; all_reduce over HCCL needs an NPU tensor"),
])

E("rf_models_vit", "models_vit.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE models_vit.py (timm ViT with global pool, DINOv2 variants)", [])

E("rf_lr_decay", "util/lr_decay.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE util/lr_decay.py (BEiT layer-wise lr decay)", [])

E("rf_datasets", "util/datasets.py", "explicit_replacement",
  "rmaphoh/RETFound_MAE util/datasets.py (ImageFolder + timm create_transform)", [])

E("rf_requirement", "requirement.txt", "explicit_replacement",
  "rmaphoh/RETFound_MAE requirement.txt / README install step", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Ascend docs install CPU torch on x86 (plain PyPI on aarch64); unconfirmed that a +cu121 torch breaks torch_npu"),
    C("=torch==2.5.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.5.1",
      "torch_npu wheel matching torch 2.5.1 (branch v2.5.1-7.0.0, CANN 8.1.RC1) must be installed"),
])

E("rf_train_sh", "train.sh", "explicit_replacement",
  "rmaphoh/RETFound_MAE README torchrun fine-tuning command, wrapped in a launcher", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID:-0}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: the chosen GPU_ID would silently not restrict the job"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; environment-dependent (often sourced in the shell profile or image)"),
])

# ---------------------------------------------------------------------------------------------
# FR-UNet (lseventeen/FR-UNet): full-resolution retinal vessel segmentation
# ---------------------------------------------------------------------------------------------
E("fr_config", "config.yaml", "explicit_replacement",
  "lseventeen/FR-UNet config.yaml (amp / tta / DTI switches)", [])

E("fr_train", "train.py", "explicit_replacement",
  "lseventeen/FR-UNet train.py (patch datasets, Trainer)", [
    C("from torch.utils.data import DataLoader", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script never imports torch directly; torch_npu must be loaded before Trainer calls .npu()"),
])

E("fr_trainer", "trainer.py", "explicit_replacement",
  "lseventeen/FR-UNet trainer.py (DataParallel + torch.cuda.amp training loop)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=True)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=True)",
      "CUDA GradScaler disables itself without CUDA -> amp=true trains fp16 without loss scaling"),
    C("self.model = nn.DataParallel(model.cuda())", "tensor_to_device", "replace", True,
      "self.model = model.npu()",
      ".cuda() raises; nn.DataParallel is unsupported on NPU (Ascend API list), so the wrapper is dropped (single NPU)"),
    C("=img = img.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "img = img.npu(non_blocking=True)", "batch to NPU"),
    C("=gt = gt.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "gt = gt.npu(non_blocking=True)", "labels to NPU"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):", "CUDA autocast is silently disabled for NPU tensors"),
    C("img, gt = img.cuda(non_blocking=True), gt.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "img, gt = img.npu(non_blocking=True), gt.npu(non_blocking=True)", "validation batch to NPU"),
    C("with torch.cuda.amp.autocast(enabled=self.CFG.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.CFG.amp):", "validation autocast would silently be off"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; releasing the NPU cache is a memory/performance nicety"),
])

E("fr_tester", "tester.py", "explicit_replacement",
  "lseventeen/FR-UNet tester.py (TTA, DTI, CCC evaluation)", [
    C("self.model = nn.DataParallel(model.cuda())", "tensor_to_device", "replace", True,
      "self.model = model.npu()", "same as trainer: .cuda() raises, DataParallel unsupported on NPU"),
    C("self.model.load_state_dict(checkpoint['state_dict'])", "unsupported_op_workaround", "replace", True,
      "self.model.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in checkpoint['state_dict'].items()})",
      "released GPU checkpoints were saved from the DataParallel wrapper ('module.' keys); without DP the keys must be stripped"),
    C("=img = img.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "img = img.npu(non_blocking=True)", "test image to NPU"),
    C("=gt = gt.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "gt = gt.npu(non_blocking=True)", "ground truth to NPU"),
])

E("fr_test", "test.py", "explicit_replacement",
  "lseventeen/FR-UNet test.py (loads released checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "test entry script"),
    C("checkpoint = torch.load(weight_path)", "device_type", "replace", True,
      "checkpoint = torch.load(weight_path, map_location='cpu')",
      "checkpoint holds CUDA tensors; deserialising them without CUDA raises"),
])

E("fr_helpers", "utils/helpers.py", "explicit_replacement",
  "lseventeen/FR-UNet utils/helpers.py (seed_torch, DTI, patch recomposition)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazily queued no-op without CUDA; torch.manual_seed above should already seed the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "as above: reproducibility only, unconfirmed that it is needed"),
])

E("fr_model", "models/frunet.py", "explicit_replacement",
  "lseventeen/FR-UNet models/frunet.py (FR_UNet network)", [])

E("fr_data_process", "data_process.py", "explicit_replacement",
  "lseventeen/FR-UNet data_process.py (DRIVE/CHASEDB1/STARE/DCA1/CHUAC patch extraction, CPU only)", [])

# ---------------------------------------------------------------------------------------------
# pytorch-classification (YijinHuang): diabetic-retinopathy grading on EyePACS / APTOS
# ---------------------------------------------------------------------------------------------
E("dr_config", "configs/eyepacs.yaml", "explicit_replacement",
  "YijinHuang/pytorch-classification configs/eyepacs.yaml (hydra config)", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "cfg.base.device is used for every .to(device) in the single-process path"),
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "passed to dist.init_process_group when dist.distributed is enabled"),
])

E("dr_main", "main.py", "explicit_replacement",
  "YijinHuang/pytorch-classification main.py (hydra entry, mp.spawn workers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("cfg.dist.n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "cfg.dist.n_gpus = torch.npu.device_count()", "0 on an NPU host -> no worker processes, world_size 0"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "bind worker to its NPU"),
    C("cfg.base.device = 'cuda:{}'.format(gpu)", "device_type", "replace", True,
      "cfg.base.device = 'npu:{}'.format(gpu)", "per-worker device string overrides the config"),
    C("torch.cuda.get_device_name(cfg.dist.get('gpu', 0) or 0), torch.cuda.device_count()))", "torch_cuda_api",
      "replace", True,
      "torch.npu.get_device_name(cfg.dist.get('gpu', 0) or 0), torch.npu.device_count()))",
      "get_device_name initialises CUDA and raises on an NPU host"),
])

E("dr_train", "train.py", "explicit_replacement",
  "YijinHuang/pytorch-classification train.py (training / eval loops, samplers, losses)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "every autocast(...) / GradScaler() in the file binds to this import; CUDA versions silently disable themselves"),
])

E("dr_func", "utils/func.py", "explicit_replacement",
  "YijinHuang/pytorch-classification utils/func.py (seeding, save_weights, printing)", [])

E("dr_builder", "modules/builder.py", "explicit_replacement",
  "YijinHuang/pytorch-classification modules/builder.py (timm/torchvision models, SyncBN + DDP)", [])

E("dr_loss", "modules/loss.py", "explicit_replacement",
  "YijinHuang/pytorch-classification modules/loss.py (KappaLoss, FocalLoss)", [])

E("dr_metrics", "utils/metrics.py", "explicit_replacement",
  "YijinHuang/pytorch-classification utils/metrics.py (Estimator, quadratic weighted kappa)", [])

E("dr_env", "environment.yml", "explicit_replacement",
  "conda environment for a DR-grading project (pytorch + pytorch-cuda from the nvidia channel)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None,
      "NVIDIA channel is only needed for pytorch-cuda; inert once that is gone"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "replace", False, "- cpuonly",
      "CPU build of torch for torch_npu; unconfirmed that a CUDA build actually conflicts"),
    C("- timm==0.9.2", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.0.1.post1",
      "torch_npu wheel for torch 2.0.1 (branch v2.0.1-5.0.0, CANN 7.0.0)"),
])

# ---------------------------------------------------------------------------------------------
# ReLayNet (ai-med/relaynet_pytorch): OCT retinal layer + fluid segmentation (old Variable API)
# ---------------------------------------------------------------------------------------------
E("rl_solver", "relaynet_pytorch/solver.py", "explicit_replacement",
  "ai-med/relaynet_pytorch relaynet_pytorch/solver.py (Solver.train)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "false on an NPU host: training silently stays on the CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "move model to NPU"),
    C("X, y, w = X.cuda(), y.cuda(), w.cuda()", "tensor_to_device", "replace", True,
      "X, y, w = X.npu(), y.npu(), w.npu()", "batch to NPU (guarded by the model's own is_cuda property)"),
    C("X_val = X_val.cuda()", "tensor_to_device", "replace", True, "X_val = X_val.npu()", "validation batch"),
    C("y_val = y_val.cuda()", "tensor_to_device", "replace", True, "y_val = y_val.npu()",
      ".cuda() raises on an NPU host even though per_class_dice copies back to CPU"),
])

E("rl_relay_net", "relaynet_pytorch/relay_net.py", "explicit_replacement",
  "ai-med/relaynet_pytorch relaynet_pytorch/relay_net.py (ReLayNet, is_cuda property, predict)", [
    C("return next(self.parameters()).is_cuda", "device_type", "replace", True,
      "return next(self.parameters()).is_npu",
      "property keeps its name (callers use model.is_cuda) but must report NPU placement, else batches stay on CPU"),
    C("X = torch.tensor(X, requires_grad=False).type(torch.FloatTensor).cuda(device, non_blocking=True)",
      "tensor_to_device", "replace", True,
      "X = torch.tensor(X, requires_grad=False).type(torch.FloatTensor).npu(device, non_blocking=True)",
      "numpy volume to NPU"),
    C("elif type(X) is torch.Tensor and not X.is_cuda:", "device_type", "replace", False,
      "elif type(X) is torch.Tensor and not X.is_npu:",
      "left as is, an NPU tensor takes a CPU round trip through .type(FloatTensor) and back: same result, slower"),
    C("X = X.type(torch.FloatTensor).cuda(device, non_blocking=True)", "tensor_to_device", "replace", True,
      "X = X.type(torch.FloatTensor).npu(device, non_blocking=True)", "CPU tensor to NPU"),
])

E("rl_sub_module", "relaynet_pytorch/net_api/sub_module.py", "explicit_replacement",
  "ai-med/relaynet_pytorch relaynet_pytorch/net_api/sub_module.py (encoder/decoder blocks, MaxUnpool2d)", [])

E("rl_losses", "relaynet_pytorch/net_api/losses.py", "explicit_replacement",
  "ai-med/relaynet_pytorch relaynet_pytorch/net_api/losses.py (Dice + weighted CE)", [
    C("if input.is_cuda:", "device_type", "replace", True, "if input.is_npu:",
      "else branch builds a 1-element CPU accumulator that is then added to NPU results (device mismatch)"),
    C("s = Variable(torch.FloatTensor(1).cuda().zero_())", "tensor_to_device", "replace", True,
      "s = Variable(torch.FloatTensor(1).npu().zero_())", "accumulator on NPU"),
    C("target = target.type(torch.LongTensor).cuda()", "tensor_to_device", "replace", True,
      "target = target.type(torch.LongTensor).npu()", "called on every training step by CombinedLoss"),
])

E("rl_infer", "infer_oct_volume.py", "explicit_replacement",
  "ai-med/relaynet_pytorch demo notebook (load pickled model, predict a B-scan volume) as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("relaynet_model = torch.load(args.model)", "device_type", "replace", True,
      "relaynet_model = torch.load(args.model, map_location='cpu').npu()",
      "whole-model pickle saved on GPU: CUDA storages cannot be restored without CUDA"),
    C("out = relaynet_model(Variable(torch.cuda.FloatTensor(test_data)))", "tensor_to_device", "replace", True,
      "out = relaynet_model(Variable(torch.from_numpy(test_data).npu()))",
      "legacy torch.cuda.FloatTensor constructor needs CUDA"),
])

# ---------------------------------------------------------------------------------------------
# AutoMorph (rmaphoh/AutoMorph): quality grading + vessel / AV / disc segmentation pipeline
# ---------------------------------------------------------------------------------------------
E("am_run", "run_AutoMorph.sh", "device_branch_or_abstraction",
  "rmaphoh/AutoMorph run_AutoMorph.sh (pipeline launcher)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_NUMBER}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${CUDA_NUMBER}",
      "device selection is silently ignored otherwise; 'empty = CPU' semantics on Ascend unconfirmed"),
    C("export PYTHONPATH=.:$PYTHONPATH", "env_var", "npu_only_addition", False, SET_ENV,
      "CANN environment; environment-dependent"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace",
      False, "npu-smi info", "status print only; the script has no set -e, so a missing nvidia-smi does not stop it"),
])

E("am_m1_test", "M1_Retinal_Image_quality_EyePACS/test_outside.py", "device_branch_or_abstraction",
  "rmaphoh/AutoMorph M1_Retinal_Image_quality_EyePACS/test_outside.py (8-model quality ensemble)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "CUDA-or-CPU fallback silently picks the CPU on an NPU host"),
])

E("am_m1_model", "M1_Retinal_Image_quality_EyePACS/model.py", "device_branch_or_abstraction",
  "rmaphoh/AutoMorph M1_Retinal_Image_quality_EyePACS/model.py (torchvision / EfficientNet heads)", [])

E("am_m2_test", "M2_Vessel_seg/test_outside_integrated.py", "device_branch_or_abstraction",
  "rmaphoh/AutoMorph M2_Vessel_seg/test_outside_integrated.py (BF-Net ensemble vessel segmentation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "module-level device selection falls to the CPU branch on an NPU host"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "device of the true branch"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events need CUDA; record() raises on NPU host"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "as above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "needed before elapsed_time; raises without CUDA"),
    C("pin_memory=torch.cuda.is_available(), drop_last=False)", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(), drop_last=False)",
      "left as is pinning is just off: host-to-device copies are slower, results identical"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end of script; no-op without CUDA initialisation"),
])

E("am_docker", "Dockerfile", "device_branch_or_abstraction",
  "rmaphoh/AutoMorph Dockerfile (pytorch/pytorch CUDA runtime base image)", [
    C("FROM pytorch/pytorch:1.11.0-cuda11.3-cudnn8-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/pytorch:2.1.0",
      "CUDA runtime image has neither CANN nor torch_npu; any Ascend base image with CANN + torch_npu (tag illustrative, unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime hint; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (or use --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "inert on Ascend"),
])
