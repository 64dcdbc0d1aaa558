# Labels for probe320 (hyperspectral / multispectral / remote-sensing, CUDA -> Ascend NPU).
# Format: see /work/main/bench/probe_build.py. One C(...) per upstream line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry script: torch_npu must be imported to register the 'npu' device and torch.npu "
               "(mandatory before torch_npu 2.5.1, recommended after; the stacks pinned here are older)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------
# DeepHyperX
# ---------------------------------------------------------------------------
E("dhx_main", "main.py", "device_branch_or_abstraction",
  "DeepHyperX main.py (--cuda ordinal -> get_device(), visdom, torchsummary)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C('pin_memory=(CUDA_DEVICE.type == "cuda"),', "pin_memory", "replace", False,
        'pin_memory=(CUDA_DEVICE.type in ("cuda", "npu")),',
        "evaluates False once the device is npu, so batches are not pinned; performance only"),
      C('summary(model.to(hyperparams["device"]), input.size()[1:])', "tensor_to_device", "replace", True,
        'summary(model.to("cpu"), input.size()[1:], device="cpu"); model.to(hyperparams["device"])',
        "torchsummary's default device='cuda' checks torch.cuda.is_available(); on an NPU host it builds CPU "
        "FloatTensor inputs while the model sits on the NPU -> device-mismatch error at the forward"),
      C("model.load_state_dict(torch.load(CHECKPOINT))", "tensor_to_device", "replace", False,
        'model.load_state_dict(torch.load(CHECKPOINT, map_location="cpu"))',
        "only fails for --restore checkpoints written on a CUDA machine (CUDA storages cannot be deserialised "
        "without CUDA); checkpoints written after the port load fine"),
  ])

E("dhx_utils", "utils.py", "device_branch_or_abstraction",
  "DeepHyperX utils.py get_device(ordinal) helper plus metrics/sampling utilities", [
      C("elif torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        "elif torch.npu.is_available():",
        "without an NPU branch every --cuda N run silently falls through to the CPU branch"),
      C('device = torch.device("cuda:{}".format(ordinal))', "device_type", "add_branch", True,
        'device = torch.device("npu:{}".format(ordinal))',
        "device string for the NPU branch added next to the CUDA one"),
  ])

E("dhx_models", "models.py", "device_branch_or_abstraction",
  "DeepHyperX models.py (get_model, 1D/3D CNNs, train/test loops with device argument)", [
      C('if device.type == "cuda":', "device_type", "replace", False,
        'if device.type in ("cuda", "npu"):',
        "guard is simply skipped on npu; only cache hygiene after validation is lost"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a no-op when CUDA was never initialised; NPU cache is not released (memory only)"),
  ])

E("dhx_docker", "Dockerfile", "explicit_replacement",
  "DeepHyperX Dockerfile (nvidia/cuda base, cu113 wheels, visdom)", [
      C("FROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "image has no CANN toolkit, so torch_npu cannot load (libhccl/ASCEND_OPP_PATH missing); "
        "base-image tag is a plausible one, not verified"),
      C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False,
        "ENV ASCEND_VISIBLE_DEVICES=0",
        "read only by the NVIDIA container runtime; ignored on Ascend (Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime setting, no effect on Ascend"),
      C("RUN pip install --no-cache-dir torch==1.10.1+cu113 torchvision==0.11.2+cu113 \\", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
        "+cu113 wheels do not exist for aarch64 and torch 1.10 has no torch_npu release; torch must equal the torch_npu base version"),
      C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", False,
        "--index-url https://download.pytorch.org/whl/cpu",
        "only a wheel source; harmless once the pins lose +cu113, but x86 NPU hosts should take torch from whl/cpu"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post10",
        "torch_npu must be installed in the image (pairs with torch 2.1.0 / CANN 8.0.0)"),
  ])

E("dhx_requirements", "requirements.txt", "explicit_replacement",
  "DeepHyperX requirements.txt with cu113 find-links", [
      C("--find-links https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "wheel source only; the cu113 page has no torch 2.1 wheels, so it is dead weight once the pin changes"),
      C("torch==1.10.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA build pin; no aarch64 wheel and no torch_npu for torch 1.10 (wheel version must equal torch version)"),
      C("torchvision==0.11.2+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build pin that also requires torch 1.10.1"),
      C("h5py>=2.10", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch-npu pin appended at the end of the file"),
  ])

# ---------------------------------------------------------------------------
# HybridSN / SSFTT / SpectralFormer / DBDA (HSI classification trainers)
# ---------------------------------------------------------------------------
E("hybridsn", "HybridSN_pytorch.py", "explicit_replacement",
  "HybridSN (3D-2D CNN) single-script PyTorch port, Colab style", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "silently trains on CPU on an NPU host"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard is False on NPU; only the peak-memory print is skipped"),
      C('print("Peak GPU memory: %.1f MB" % (torch.cuda.max_memory_allocated() / 1024 ** 2))', "torch_cuda_api", "replace", False,
        'print("Peak NPU memory: %.1f MB" % (torch.npu.max_memory_allocated() / 1024 ** 2))',
        "log only"),
  ])

E("ssftt_train", "cls_SSFTT_IP/train.py", "explicit_replacement",
  "SSFTT (spectral-spatial feature tokenization transformer) train.py, Chinese comments", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA; torch.manual_seed above seeds every device"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "silently trains on CPU on an NPU host"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "--resume path: .to(cuda) raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA; NPU kernels are asynchronous too, so the timing needs the NPU sync"),
  ])

E("spectralformer_demo", "demo.py", "explicit_replacement",
  "SpectralFormer demo.py (--gpu_id -> CUDA_VISIBLE_DEVICES, .cuda() everywhere, shipped .pt weights)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_id)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_id)',
        "ignored by the Ascend runtime, so --gpu_id silently stops selecting the card"),
      C("batch_data = batch_data.cuda()", "tensor_to_device", "replace", True, "batch_data = batch_data.npu()",
        ".cuda() raises without CUDA"),
      C("batch_target = batch_target.cuda()", "tensor_to_device", "replace", True, "batch_target = batch_target.npu()",
        ".cuda() raises without CUDA"),
      C("batch_data, batch_target = batch_data.cuda(), batch_target.cuda()", "tensor_to_device", "replace", True,
        "batch_data, batch_target = batch_data.npu(), batch_target.npu()", ".cuda() raises without CUDA"),
      C("batch_data = Variable(batch_data).type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
        "batch_data = batch_data.float().npu()",
        "torch.cuda.FloatTensor type is unavailable without CUDA"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "silent no-op without CUDA; torch.manual_seed above seeds the NPU"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() moves parameters with Tensor.cuda -> raises"),
      C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "criterion = nn.CrossEntropyLoss().npu()",
        "the loss has no parameters or buffers, so .cuda() touches no tensor and does not fail; edit for consistency"),
      C("model.load_state_dict(torch.load('./ViT.pt'))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load('./ViT.pt', map_location='cpu'))",
        "released weights were saved from CUDA tensors; deserialising them raises on a host without CUDA"),
      C("model.load_state_dict(torch.load('./SpectralFormer_pixel.pt'))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load('./SpectralFormer_pixel.pt', map_location='cpu'))",
        "released GPU-saved weights"),
      C("model.load_state_dict(torch.load('./SpectralFormer_patch.pt'))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load('./SpectralFormer_patch.pt', map_location='cpu'))",
        "released GPU-saved weights"),
  ])

E("spectralformer_vit", "vit_pytorch.py", "device_branch_or_abstraction",
  "SpectralFormer vit_pytorch.py (ViT with CAF skip connections); device-agnostic, no change needed", [])

E("dbda_network", "DBDA_network.py", "explicit_replacement",
  "DBDA (double-branch dual-attention) network with Mish, PAM/CAM modules", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
        "only needed for the optional fused Mish below (library module; the entry script imports torch_npu)"),
      C("return x * torch.tanh(F.softplus(x))", "npu_fused_op", "replace", False, "return torch_npu.npu_mish(x)",
        "performance only: torch_npu.npu_mish / contrib.module.Mish fuse the three element-wise kernels"),
  ])

E("dbda_main", "DBDA_main.py", "explicit_replacement",
  "DBDA main script (Monte Carlo runs, early stopping, record_output)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "silently runs on CPU on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; memory hygiene only"),
      C("f.write('\\nhardware: ' + (torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu') + '\\n')",
        "torch_cuda_api", "replace", False,
        "f.write('\\nhardware: ' + (torch.npu.get_device_name(0) if device.type == 'npu' else 'cpu') + '\\n')",
        "after the port the guard is False and the record says 'cpu'; log only"),
  ])

# ---------------------------------------------------------------------------
# Pansharpening (DLPan-toolbox FusionNet, PanNet, metrics, run script)
# ---------------------------------------------------------------------------
E("fusionnet_train", "FusionNet/train.py", "explicit_replacement",
  "DLPan-Toolbox FusionNet train.py (.cuda() batches, torchsummary, h5 PanCollection)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
        "no-op without CUDA; torch.manual_seed above already seeds"),
      C("torch.cuda.manual_seed_all(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(SEED)",
        "no-op without CUDA"),
      C("model = FusionNet(spectral_num=args.spectral_num).cuda()", "tensor_to_device", "replace", True,
        "model = FusionNet(spectral_num=args.spectral_num).npu()", ".cuda() raises without CUDA"),
      C("model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
        "pretrained toolbox weights were saved from CUDA tensors; loading them raises without CUDA"),
      C("criterion = nn.MSELoss(size_average=True).cuda()", "tensor_to_device", "replace", False,
        "criterion = nn.MSELoss(size_average=True).npu()",
        "parameter-free loss: .cuda() moves nothing and does not fail"),
      C("gt, lms, ms, pan = batch[0].cuda(), batch[1].cuda(), batch[2].cuda(), batch[3].cuda()", "tensor_to_device", "replace", True,
        "gt, lms, ms, pan = batch[0].npu(), batch[1].npu(), batch[2].npu(), batch[3].npu()", ".cuda() raises"),
      C("gt, lms, pan = batch[0].cuda(), batch[1].cuda(), batch[3].cuda()", "tensor_to_device", "replace", True,
        "gt, lms, pan = batch[0].npu(), batch[1].npu(), batch[3].npu()", ".cuda() raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; memory hygiene only"),
  ])

E("fusionnet_model", "FusionNet/model.py", "explicit_replacement",
  "DLPan-Toolbox FusionNet model.py (variance-scaling init, summaries() via torchsummary)", [
      C("summary(model, input_size=[(8, 64, 64), (1, 64, 64)], batch_size=1)", "tensor_to_device", "replace", True,
        "summary(model, input_size=[(1, 8, 64, 64), (1, 1, 64, 64)], device=next(model.parameters()).device)  # torchinfo",
        "torchsummary defaults to device='cuda' and falls back to CPU FloatTensor inputs when CUDA is absent, "
        "while the model is already on the NPU -> device mismatch; switch to torchinfo with the model's device"),
  ])

E("fusionnet_test", "FusionNet/test.py", "explicit_replacement",
  "DLPan-Toolbox FusionNet test.py (h5 test set, per-image timing, .mat output)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        "ignored on Ascend: --gpu silently stops selecting a card"),
      C("weight = torch.load(ckpt)", "tensor_to_device", "replace", True, "weight = torch.load(ckpt, map_location='cpu')",
        "the toolbox ships GPU-trained checkpoints; CUDA storages cannot be deserialised without CUDA"),
      C("model = FusionNet(spectral_num=args.spectral_num).cuda().eval()", "tensor_to_device", "replace", True,
        "model = FusionNet(spectral_num=args.spectral_num).npu().eval()", ".cuda() raises"),
      C("lms = lms_all[k, :, :, :].cuda().unsqueeze(dim=0).float()", "tensor_to_device", "replace", True,
        "lms = lms_all[k, :, :, :].npu().unsqueeze(dim=0).float()", ".cuda() raises"),
      C("pan = pan_all[k, :, :, :].cuda().unsqueeze(dim=0).float()", "tensor_to_device", "replace", True,
        "pan = pan_all[k, :, :, :].npu().unsqueeze(dim=0).float()", ".cuda() raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA -> raises"),
      C("torch.cuda.synchronize()  # wait for the kernels before stopping the clock", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the kernels before stopping the clock",
        "raises without CUDA; NPU execution is asynchronous so the timing needs the NPU sync"),
  ])

E("pannet_main", "PanNet/main.py", "explicit_replacement",
  "PanNet PyTorch port, 0.4-era style (Variable, torch.cuda.FloatTensor, --cuda/--gpus, DataParallel)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("kernel = torch.ones(c, 1, kernel_size, kernel_size).cuda() / float(kernel_size * kernel_size)", "tensor_to_device", "replace", True,
        "kernel = torch.ones(c, 1, kernel_size, kernel_size, device=data.device) / float(kernel_size * kernel_size)",
        ".cuda() raises; follow the input's device"),
      C("gt = gt.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True, "gt = gt.float().npu()",
        "torch.cuda.FloatTensor unavailable without CUDA"),
      C("lms = lms.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True, "lms = lms.float().npu()",
        "torch.cuda.FloatTensor unavailable without CUDA"),
      C("ms = ms.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True, "ms = ms.float().npu()",
        "torch.cuda.FloatTensor unavailable without CUDA"),
      C("pan = pan.type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True, "pan = pan.float().npu()",
        "torch.cuda.FloatTensor unavailable without CUDA"),
      C("if cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if cuda and not torch.npu.is_available():",
        "with --cuda (the flag kept as 'use accelerator') this raises 'No GPU found' on an NPU host"),
      C("torch.cuda.set_device(opt.gpus[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(opt.gpus[0])",
        "raises without CUDA"),
      C("torch.cuda.manual_seed(opt.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(opt.seed)",
        "no-op without CUDA; torch.manual_seed above seeds the NPU"),
      C('print("=> using {} GPU(s): {}".format(torch.cuda.device_count(), opt.gpus))', "torch_cuda_api", "replace", False,
        'print("=> using {} NPU(s): {}".format(torch.npu.device_count(), opt.gpus))',
        "prints 0 without CUDA; log only"),
      C("model = nn.DataParallel(model, device_ids=opt.gpus)", "unsupported_op_workaround", "removal", True, None,
        "torch.nn.DataParallel is unsupported on NPU (Ascend API list ✘); multi-card runs need torchrun + DDP"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() raises"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        "parameter-free MSELoss: .cuda() moves nothing"),
  ])

E("pansharp_metrics", "utils/metrics.py", "explicit_replacement",
  "PyTorch pansharpening quality indices (SAM, ERGAS, SCC, Q2n, QNR) used during validation", [
      C("_EPS = torch.tensor(1e-8).cuda()", "tensor_to_device", "replace", True, "_EPS = 1e-8",
        "module-level .cuda() raises at import time on an NPU host"),
      C("sr64 = sr.double()", "unsupported_op_workaround", "replace", False, "sr64 = sr.float()",
        "unconfirmed: fp64 support on NPU is limited (knowledge: fp64 -> fp32 caveat); unfold/reductions in "
        "float64 may fall back to CPU or be rejected"),
      C("gt64 = gt.double()", "unsupported_op_workaround", "replace", False, "gt64 = gt.float()",
        "same fp64 caveat as above (unconfirmed)"),
      C('def numpy_to_tensor(x, device="cuda"):', "device_type", "replace", True,
        'def numpy_to_tensor(x, device="npu"):',
        "callers that rely on the default get .to('cuda') -> raises"),
      C("gt = torch.rand(2, 8, 64, 64).cuda()", "tensor_to_device", "replace", True,
        "gt = torch.rand(2, 8, 64, 64).npu()", "self-test block: .cuda() raises"),
  ])

E("pansharp_run", "scripts/run_fusionnet_wv3.sh", "explicit_replacement",
  "pansharpening run script: pick least-loaded GPU via nvidia-smi, train + test FusionNet", [
      C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced or torch_npu fails to import ('source set_env.sh'); it has to go "
        "before 'set -u' because set_env.sh is not nounset-clean on recent CANN"),
      C("GPU=$(nvidia-smi --query-gpu=index,memory.used", "device_capability_check", "replace", True,
        "GPU=0  # no nvidia-smi on Ascend; parse 'npu-smi info' to pick a free NPU",
        "nvidia-smi is not installed; with set -e/pipefail the failing substitution aborts the script"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "ignored by the Ascend runtime, so the chosen card is not selected"),
      C('nvidia-smi -i "${GPU}" --query-gpu=name,driver_version,memory.total', "device_capability_check", "replace", True,
        'npu-smi info -i "${GPU}" | tee -a "${LOG_DIR}/run.log"',
        "command not found -> pipeline fails under set -e -o pipefail"),
      C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
        "cuBLAS-only determinism knob; no effect on NPU"),
  ])

# ---------------------------------------------------------------------------
# SatMAE (MAE-style pretraining on fMoW / fMoW-Sentinel)
# ---------------------------------------------------------------------------
E("satmae_pretrain", "main_pretrain.py", "explicit_replacement",
  "SatMAE main_pretrain.py (MAE/DeiT lineage: --device cuda, DDP, NativeScaler, wandb)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',",
        "torch.device('cuda') then model.to(device) raises on an NPU host"),
  ])

E("satmae_engine", "engine_pretrain.py", "explicit_replacement",
  "SatMAE engine_pretrain.py (per-iteration lr, autocast, loss scaler, torch.cuda.synchronize)", [
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "CUDA autocast is disabled with a warning on a host without CUDA, so training silently runs in fp32"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA -> raises every iteration"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16):',
        "device_type='cuda' autocast is disabled without CUDA -> silent fp32"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
  ])

E("satmae_misc", "util/misc.py", "explicit_replacement",
  "SatMAE util/misc.py (SmoothedValue, MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount)", [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "raises without CUDA; whether HCCL all_reduce accepts float64 is unconfirmed (float32 is the safe choice)"),
      C("if torch.cuda.is_available():  # report peak GPU memory", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():  # report peak NPU memory in the progress line",
        "False on NPU: the 'max mem' column silently disappears; must be changed together with the guard below "
        "or the format string misses its 'memory' field"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "False on NPU -> falls to the branch without memory; log only"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "log only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "SLURM path: device_count() is 0 without CUDA -> ZeroDivisionError"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler()",
        "CUDA GradScaler disables itself without CUDA -> fp16 gradients are not scaled (underflow) once autocast runs on NPU"),
      C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
        ".cuda() raises (multi-process runs)"),
  ])

E("satmae_launch", "scripts/pretrain_sentinel_groupc.sh", "explicit_replacement",
  "SatMAE pretraining launcher (torch.distributed.launch, NCCL env, --device cuda)", [
      C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before python starts"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "lists every card of an 8-device node, so the Ascend runtime ignoring it changes nothing"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; no effect under HCCL"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only; HCCL uses RoCE on the NPU NICs"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "single-node here; the HCCL equivalent matters only for multi-node root-info setup"),
      C("--device cuda \\", "device_type", "replace", True, "--device npu \\",
        "passed straight to torch.device() in main_pretrain.py"),
  ])

# ---------------------------------------------------------------------------
# TorchGeo (Lightning)
# ---------------------------------------------------------------------------
E("torchgeo_train", "train.py", "explicit_replacement",
  "TorchGeo 0.x train.py (OmegaConf task/datamodule registry -> lightning Trainer)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; Lightning will not import torch_npu itself"),
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", False,
        'if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:  # NPU: matmul precision left at default',
        "guard is False on NPU, so only a speed knob is skipped; naively porting to torch.npu.get_device_capability() "
        "would crash (returns None unless TORCH_NPU_DEVICE_CAPABILITY is set)"),
  ])

E("torchgeo_conf", "conf/eurosat.yaml", "explicit_replacement",
  "TorchGeo experiment YAML (trainer: accelerator gpu, precision 16)", [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning's 'gpu' accelerator is CUDA (or MPS) and refuses to start without it; 'npu' assumes an NPU "
        "accelerator plugin is registered (not part of stock Lightning; unconfirmed in the knowledge base)"),
      C("precision: 16", "amp", "replace", False, "precision: 16-mixed",
        "unconfirmed: the mixed-precision plugin must autocast on 'npu' (depends on the NPU accelerator plugin)"),
  ])

E("torchgeo_experiments", "experiments/run_so2sat_seed_experiments.py", "explicit_replacement",
  "TorchGeo experiments/run_*_experiments.py (one worker per GPU via CUDA_VISIBLE_DEVICES)", [
      C('env["CUDA_VISIBLE_DEVICES"] = str(gpu_idx)', "env_var", "replace", True,
        'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_idx)',
        "ignored on Ascend: every worker's trainer.devices=[0] lands on NPU 0 and the jobs pile up on one card"),
      C('+ " trainer.accelerator=gpu"', "device_type", "replace", True, '+ " trainer.accelerator=npu"',
        "CUDA accelerator refuses to start on an NPU host"),
  ])

# ---------------------------------------------------------------------------
# Prithvi / hls-foundation-os / TerraTorch
# ---------------------------------------------------------------------------
E("prithvi_mmseg_cfg", "configs/sen1floods11_config.py", "explicit_replacement",
  "hls-foundation-os mmseg config for Prithvi-100M on Sen1Floods11", [
      C('dist_params = dict(backend="nccl")', "dist_backend", "replace", True, 'dist_params = dict(backend="hccl")',
        "mmcv passes it to init_process_group whenever train.py runs with --launcher pytorch/slurm; NCCL is unavailable on Ascend"),
      C("fp16 = dict(loss_scale=512.0)", "amp", "replace", False, "fp16 = None  # re-enable with an NPU-aware optimizer hook",
        "unconfirmed: mmcv's Fp16OptimizerHook builds a CUDA GradScaler, which disables itself without CUDA"),
  ])

E("prithvi_inference", "Prithvi_run_inference.py", "device_branch_or_abstraction",
  "Prithvi-100M Prithvi_run_inference.py (HLS GeoTIFF -> MAE reconstruction)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("device = torch.device('cuda')", "device_type", "add_branch", True,
        "elif torch.npu.is_available(): device = torch.device('npu')",
        "without an NPU branch the script silently runs on CPU"),
      C('use_fp16 = device.type == "cuda"', "device_type", "replace", False,
        'use_fp16 = device.type in ("cuda", "npu")', "fp16 autocast silently off on NPU; speed only"),
  ])

E("terratorch_cfg", "configs/prithvi_eo_v2_300_burnscars.yaml", "explicit_replacement",
  "TerraTorch / Lightning CLI config for Prithvi-EO-2.0 burn-scar segmentation", [
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "CUDA accelerator refuses to start without CUDA; 'npu' needs an NPU accelerator plugin (unconfirmed)"),
      C("strategy: ddp_find_unused_parameters_true", "dist_backend", "replace", False,
        "strategy: {class_path: DDPStrategy, init_args: {process_group_backend: hccl, find_unused_parameters: true}}",
        "unconfirmed: Lightning derives the backend from the device type (nccl for cuda, otherwise gloo); on NPU it must be hccl"),
      C("precision: 16-mixed", "amp", "replace", False, "precision: 16-mixed  # with an NPU mixed-precision plugin",
        "unconfirmed: autocast device of the precision plugin follows the accelerator"),
  ])

# ---------------------------------------------------------------------------
# Mamba-based RS change detection (VMamba kernels vendored)
# ---------------------------------------------------------------------------
E("rsmamba_setup", "kernels/selective_scan/setup.py", "kernel_rewrite",
  "VMamba/Mamba selective_scan setup.py vendored in RS Mamba repos (CUDAExtension x3 modes)", [
      C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", "replace", False,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "import itself works on an NPU host (CUDA_HOME is None); the builder has to change"),
      C('f"csrc/selective_scan/cus{mode}/selective_scan_{mode}_fwd.cu",', "custom_cuda_extension", "replace", True,
        'f"csrc/selective_scan_ascendc/{mode}/selective_scan_{mode}_fwd.cpp",',
        ".cu kernels need nvcc; must be rewritten as Ascend C kernels"),
      C('f"csrc/selective_scan/cus{mode}/selective_scan_{mode}_bwd.cu",', "custom_cuda_extension", "replace", True,
        'f"csrc/selective_scan_ascendc/{mode}/selective_scan_{mode}_bwd.cpp",',
        ".cu kernels need nvcc; must be rewritten as Ascend C kernels"),
      C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
        "no CUDA toolkit on the NPU host, the nvcc build fails"),
      C('"nvcc": append_nvcc_threads(', "custom_cuda_extension", "removal", False, None,
        "nvcc flag block is meaningless for NpuExtension (the gencode/cc_flag lines feeding it go with it)"),
  ])

E("rsmamba_csms6s", "models/csms6s.py", "kernel_rewrite",
  "VMamba csms6s.py: selective-scan autograd Function over three CUDA builds with a pure-PyTorch fallback", [
      C("    import selective_scan_cuda_oflex", "custom_cuda_extension", "replace", False,
        "    import selective_scan_npu_oflex",
        "guarded: ImportError -> pure-torch selective_scan_torch path, which is correct but slow (performance only)"),
      C("    import selective_scan_cuda_core", "custom_cuda_extension", "replace", False,
        "    import selective_scan_npu_core", "guarded import; torch fallback"),
      C("=import selective_scan_cuda", "custom_cuda_extension", "replace", False,
        "import selective_scan_npu", "guarded import (mamba-ssm build); torch fallback"),
      C("@torch.cuda.amp.custom_fwd", "amp", "replace", False, "@torch_npu.npu.amp.custom_fwd",
        "class is unused without the kernels; needed once an NPU kernel is bound"),
      C("out, x, *rest = selective_scan_cuda_oflex.fwd(", "custom_cuda_extension", "replace", False,
        "out, x, *rest = selective_scan_npu_oflex.fwd(u, delta, A, B, C, D, delta_bias, delta_softplus, 1, oflex)",
        "unreachable on NPU (fallback taken); kernel_rewrite call site"),
      C("out, x, *rest = selective_scan_cuda_core.fwd(", "custom_cuda_extension", "replace", False,
        "out, x, *rest = selective_scan_npu_core.fwd(u, delta, A, B, C, D, delta_bias, delta_softplus, 1)",
        "kernel_rewrite call site, unreachable on NPU"),
      C("out, x, *rest = selective_scan_cuda.fwd(", "custom_cuda_extension", "replace", False,
        "out, x, *rest = selective_scan_npu.fwd(u, delta, A, B, C, D, None, delta_bias, delta_softplus)",
        "kernel_rewrite call site, unreachable on NPU"),
      C("@torch.cuda.amp.custom_bwd", "amp", "replace", False, "@torch_npu.npu.amp.custom_bwd",
        "see custom_fwd"),
      C("*rest = selective_scan_cuda_oflex.bwd(", "custom_cuda_extension", "replace", False,
        "du, ddelta, dA, dB, dC, dD, ddelta_bias, *rest = selective_scan_npu_oflex.bwd(",
        "kernel_rewrite call site, unreachable on NPU"),
      C("*rest = selective_scan_cuda_core.bwd(", "custom_cuda_extension", "replace", False,
        "du, ddelta, dA, dB, dC, dD, ddelta_bias, *rest = selective_scan_npu_core.bwd(",
        "kernel_rewrite call site, unreachable on NPU"),
      C("*rest = selective_scan_cuda.bwd(", "custom_cuda_extension", "replace", False,
        "du, ddelta, dA, dB, dC, dD, ddelta_bias, *rest = selective_scan_npu.bwd(",
        "kernel_rewrite call site, unreachable on NPU"),
      C('dev = torch.device("cuda")', "device_type", "replace", True, 'dev = torch.device("npu")',
        "self-test block: tensors created on 'cuda' raise"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "self-test timing; raises without CUDA"),
  ])

E("rsmamba_triton", "models/csm_triton.py", "kernel_rewrite",
  "VMamba csm_triton.py: Triton CrossScan/CrossMerge kernels with torch fallback", [
      C("BC, BH, BW = 1, min(triton.next_power_of_2(H), 64), min(triton.next_power_of_2(W), 64)", "triton_kernel_tuning", "replace", False,
        "BC, BH, BW = 1, min(triton.next_power_of_2(H), 32), min(triton.next_power_of_2(W), 32)",
        "tile sizes tuned on A100; triton-ascend needs its own tuning (unconfirmed values)"),
      C("triton_cross_scan[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW, num_warps=4)", "triton_kernel_tuning", "replace", False,
        "triton_cross_scan[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW)",
        "num_warps is a CUDA occupancy knob; only matters once the kernel runs under triton-ascend (unconfirmed)"),
      C("triton_cross_merge[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW, num_warps=4)", "triton_kernel_tuning", "replace", False,
        "triton_cross_merge[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW)", "see above"),
      C("triton_cross_merge[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW, num_warps=8)", "triton_kernel_tuning", "replace", False,
        "triton_cross_merge[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW)", "see above"),
      C("triton_cross_scan[(NH * NW, NC, B)](x.contiguous(), y, BC, BH, BW, C, H, W, NH, NW, num_warps=8)", "triton_kernel_tuning", "replace", False,
        "triton_cross_scan[(NH * NW, NC, B)](x.contiguous(), y, BC, BH, BW, C, H, W, NH, NW)", "see above"),
      C("if WITH_TRITON and x.is_cuda and not force_torch:", "device_type", "replace", False,
        'if WITH_TRITON and x.device.type in ("cuda", "npu") and not force_torch:',
        "False on NPU, so the torch CrossScan fallback runs (correct, slower); enabling the kernel needs triton-ascend"),
      C("if WITH_TRITON and y.is_cuda and not force_torch:", "device_type", "replace", False,
        'if WITH_TRITON and y.device.type in ("cuda", "npu") and not force_torch:', "see above"),
  ])

E("rsmamba_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a Mamba-based RS change-detection repo (pytorch-cuda, nvcc, mamba-ssm, triton)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA channel only serves CUDA packages"),
      C("- pytorch=2.1.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
        "no torch_npu release for 2.1.1; torch must equal the torch_npu base version (2.1.0.postN) and be the CPU "
        "build (on aarch64 hosts torch comes from pip instead)"),
      C("- torchvision=0.16.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
        "torchvision 0.16.1 pins torch 2.1.1"),
      C("- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch and pulls CUDA runtime libraries"),
      C("- nvidia/label/cuda-11.8.0::cuda-nvcc", "custom_cuda_extension", "removal", False, None,
        "nvcc only serves the CUDA kernel build; dead weight on Ascend (availability on aarch64 unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
        "torch-npu pin (CANN 8.0.0 pairing)"),
      C("- triton==2.1.0", "triton_kernel_tuning", "replace", False, "- triton-ascend",
        "stock Triton has no Ascend backend; csm_triton falls back to torch when the tensor is not CUDA (performance only)"),
      C("- causal-conv1d>=1.1.0", "custom_cuda_extension", "removal", True, None,
        "nvcc-built CUDA extension; pip install fails without the CUDA toolkit"),
      C("- mamba-ssm==1.1.1", "custom_cuda_extension", "removal", True, None,
        "nvcc-built CUDA extension (selective_scan_cuda); install fails on an NPU host; csms6s falls back to torch"),
  ])

# ---------------------------------------------------------------------------
# SpectralGPT / HyperSIGMA-style foundation-model fine-tuning
# ---------------------------------------------------------------------------
E("spectralgpt_finetune", "main_finetune_hsi.py", "explicit_replacement",
  "SpectralGPT/HyperSIGMA-style HSI fine-tuning (torchrun, xformers, apex FusedAdam, CUDA prefetcher, bf16, torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
      C("import xformers.ops as xops", "attention_kernel", "removal", False, None,
        "guarded import; xformers has no NPU backend, ImportError -> SDPA path"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdamW",
        "guarded; FusedAdam is not in Ascend apex, ImportError -> torch AdamW fallback (performance only)"),
      C("x = xops.memory_efficient_attention(q, k, v,", "attention_kernel", "removal", False, None,
        "branch never taken on NPU (x.is_cuda False); SDPA dispatches to the NPU fused attention"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "creating a CUDA stream without CUDA raises"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
        "CUDA stream context without CUDA"),
      C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True)", ".cuda() raises"),
      C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True)", ".cuda() raises"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "raises without CUDA"),
      C("inp.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "inp.record_stream(torch.npu.current_stream())", "raises without CUDA"),
      C("tgt.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "tgt.record_stream(torch.npu.current_stream())", "raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=args.amp, dtype=amp_dtype):",
        "CUDA autocast disables itself without CUDA -> --amp silently trains in fp32"),
      C('dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl")',
        "on NPU the expression picks gloo, which cannot reduce NPU tensors; must be hccl"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "model.to('cuda') raises"),
      C("if args.bf16 and not torch.cuda.is_bf16_supported():", "torch_cuda_api", "replace", True,
        "if args.bf16 and not torch.npu.is_bf16_supported():",
        "without CUDA this raises or returns False (version-dependent); either way --bf16 aborts on an NPU that supports bf16"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "unconfirmed: max-autotune relies on Triton autotuning; Ascend's list documents backend='npugraphs' (cudagraphs analogue)"),
      C("optimizer = FusedAdam(param_groups, lr=args.lr, betas=(0.9, 0.999), adam_w_mode=True)", "fused_optimizer", "replace", False,
        "optimizer = NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.999))",
        "only reached when apex FusedAdam imports, which it does not on NPU; performance only"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and not args.bf16)",
        "CUDA GradScaler disables itself without CUDA -> fp16 loss scaling silently off"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):", "attention_kernel", "replace", False,
        "with contextlib.nullcontext():  # torch.backends.cuda.sdp_kernel is unsupported on NPU",
        "✘ in Ascend's API list; effect on the NPU SDPA dispatch unconfirmed"),
      C('f"{torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GB)")', "torch_cuda_api", "replace", False,
        'f"{torch.npu.max_memory_allocated() / 2 ** 30:.1f} GB)")', "returns 0 without CUDA; log only"),
  ])
