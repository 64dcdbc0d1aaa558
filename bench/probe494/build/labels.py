# Labels for probe494 (adversarial robustness: torchattacks, AutoAttack, TRADES, MART,
# randomized smoothing, fast adversarial training). One entry per file under files/.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_ENTRY = ("entry script: torch_npu must be imported before any torch.npu / .npu() use "
                "(autoload only from torch_npu 2.5.1; these projects pin much older torch)")
SEED_NOTE = ("torch.cuda seeding is a lazy no-op without CUDA, and torch.(random.)manual_seed on the line "
             "before already seeds every device (unconfirmed for the privateuse1 backend); "
             "only reproducibility of the NPU RNG is at stake")
LOAD_NOTE = ("checkpoints written by the GPU run hold CUDA storages; torch.load without map_location "
             "raises on a host without CUDA")

# ----------------------------------------------------------------------------- torchattacks
E("ta_attack", "torchattacks/attack.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch torchattacks/attack.py (Attack base class)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module; the user's entry script already imports torch_npu, added only so torch.npu below "
      "resolves when the library is imported first"),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "fallback for parameter-less (wrapped) models; unported it picks cpu while inputs/model live on the NPU"),
])
E("ta_pgd", "torchattacks/attacks/pgd.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch torchattacks/attacks/pgd.py", [])
E("ta_cw", "torchattacks/attacks/cw.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch torchattacks/attacks/cw.py", [])
E("ta_deepfool", "torchattacks/attacks/deepfool.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch torchattacks/attacks/deepfool.py", [])
E("ta_multiattack", "torchattacks/wrappers/multiattack.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch torchattacks/wrappers/multiattack.py", [])
E("ta_tests", "code_coverage/test_atks.py", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch code_coverage/test_atks.py (pytest over all attacks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "CPU-fallback guard: unported, the whole suite silently runs on the host CPU"),
])
E("ta_reqs", "requirements.txt", "explicit_replacement",
  "Harry24k/adversarial-attacks-pytorch requirements.txt", [])

# ----------------------------------------------------------------------------- AutoAttack
E("aa_autoattack", "autoattack/autoattack.py", "explicit_replacement",
  "fra31/auto-attack autoattack/autoattack.py (AutoAttack driver)", [
    C("device='cuda', log_path=None):", "device_type", "replace", True,
      "device='npu', log_path=None):",
      "default device is used by examples/eval.py (no device= passed); every sub-attack gets it"),
])
E("aa_autopgd", "autoattack/autopgd_base.py", "explicit_replacement",
  "fra31/auto-attack autoattack/autopgd_base.py (APGD-CE / APGD-T)", [
    C("torch.cuda.random.manual_seed(self.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.seed)", SEED_NOTE),
    C("torch.cuda.random.manual_seed_all(self.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.seed)", SEED_NOTE),
])
E("aa_fab", "autoattack/fab_pt.py", "explicit_replacement",
  "fra31/auto-attack autoattack/fab_pt.py (FAB attack, PyTorch)", [
    C("torch.cuda.random.manual_seed(self.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.seed)", SEED_NOTE),
])
E("aa_square", "autoattack/square.py", "explicit_replacement",
  "fra31/auto-attack autoattack/square.py (Square attack)", [])
E("aa_eval", "autoattack/examples/eval.py", "explicit_replacement",
  "fra31/auto-attack examples/eval.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("ckpt = torch.load(args.model)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.model, map_location='cpu')", LOAD_NOTE),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])
E("aa_utils", "autoattack/other_utils.py", "explicit_replacement",
  "fra31/auto-attack autoattack/other_utils.py", [])

# ----------------------------------------------------------------------------- TRADES
E("tr_train", "train_trades_cifar10.py", "explicit_replacement",
  "yaodongyu/TRADES train_trades_cifar10.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()",
      "unported, use_cuda is False on an NPU host and training silently runs on CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device selection"),
])
E("tr_trades", "trades.py", "explicit_replacement",
  "yaodongyu/TRADES trades.py (trades_loss)", [
    C("x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()",
      "tensor_to_device", "replace", True,
      "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).npu().detach()",
      "random start of the inner KL maximisation; .cuda() fails without CUDA"),
    C("delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device", "replace", True,
      "delta = 0.001 * torch.randn(x_natural.shape).npu().detach()", "L2 branch random start"),
])
E("tr_pgd_attack", "pgd_attack_cifar10.py", "explicit_replacement",
  "yaodongyu/TRADES pgd_attack_cifar10.py (white-/black-box PGD-20 evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()", "CPU-fallback guard"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device selection"),
    C("model.load_state_dict(torch.load(args.model_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model_path, map_location=device))", LOAD_NOTE),
    C("model_target.load_state_dict(torch.load(args.target_model_path))", "tensor_to_device", "replace", True,
      "model_target.load_state_dict(torch.load(args.target_model_path, map_location=device))", LOAD_NOTE),
    C("model_source.load_state_dict(torch.load(args.source_model_path))", "tensor_to_device", "replace", True,
      "model_source.load_state_dict(torch.load(args.source_model_path, map_location=device))", LOAD_NOTE),
])
E("tr_wrn", "models/wideresnet.py", "explicit_replacement",
  "yaodongyu/TRADES models/wideresnet.py", [])
E("tr_small_cnn", "models/small_cnn.py", "explicit_replacement",
  "yaodongyu/TRADES models/small_cnn.py", [])

# ----------------------------------------------------------------------------- MART
E("mt_train", "train_wideresnet.py", "explicit_replacement",
  "YisenWang/MART train_wideresnet.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "device mask; unported the process sees every NPU and silently trains on NPU 0 instead of --gpu"),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()", "CPU-fallback guard"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device selection"),
    C("model = nn.DataParallel(WideResNet(depth=34)).to(device)", "distributed_framework", "replace", True,
      "model = WideResNet(depth=34).to(device)",
      "torch.nn.DataParallel is unsupported on Atlas A2/A3 (Ascend 2.7.1 API list); single-card port drops "
      "the wrapper (multi-card would need DDP+hccl). Saved keys lose the 'module.' prefix"),
])
E("mt_mart", "mart.py", "explicit_replacement",
  "YisenWang/MART mart.py (mart_loss)", [
    C("x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()",
      "tensor_to_device", "replace", True,
      "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).npu().detach()",
      "random start of the inner maximisation"),
])

# ----------------------------------------------------------------------------- randomized smoothing
SETGPU = ("setGPU queries NVML (gpustat) at import time to pick the freest GPU and set CUDA_VISIBLE_DEVICES; "
          "without NVML the import raises, so the line goes (device choice moves to ASCEND_RT_VISIBLE_DEVICES)")
PREFIX = ("follows from dropping nn.DataParallel in architectures.py: the imagenet checkpoint keys carry "
          "'1.module.' and no longer match; strip it (no-op for the CIFAR models)")
E("sm_core", "code/core.py", "explicit_replacement",
  "locuslab/smoothing code/core.py (Smooth: certify/predict)", [
    C("noise = torch.randn_like(batch, device='cuda') * self.sigma", "device_type", "replace", True,
      "noise = torch.randn_like(batch, device='npu') * self.sigma",
      "Monte-Carlo Gaussian noise; 'cuda' device string fails without CUDA"),
])
E("sm_certify", "code/certify.py", "explicit_replacement",
  "locuslab/smoothing code/certify.py", [
    C("import setGPU", "env_var", "removal", True, None, SETGPU),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("checkpoint = torch.load(args.base_classifier)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.base_classifier, map_location='cpu')", LOAD_NOTE),
    C("base_classifier.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
      "base_classifier.load_state_dict({k.replace('.module.', '.', 1): v for k, v in checkpoint['state_dict'].items()})",
      PREFIX),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "input placement"),
])
E("sm_predict", "code/predict.py", "explicit_replacement",
  "locuslab/smoothing code/predict.py", [
    C("import setGPU", "env_var", "removal", True, None, SETGPU),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("checkpoint = torch.load(args.base_classifier)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.base_classifier, map_location='cpu')", LOAD_NOTE),
    C("base_classifier.load_state_dict(checkpoint['state_dict'])", "distributed_framework", "replace", True,
      "base_classifier.load_state_dict({k.replace('.module.', '.', 1): v for k, v in checkpoint['state_dict'].items()})",
      PREFIX),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "input placement"),
])
E("sm_arch", "code/architectures.py", "explicit_replacement",
  "locuslab/smoothing code/architectures.py", [
    C("model = torch.nn.DataParallel(resnet50(pretrained=False)).cuda()", "distributed_framework", "replace", True,
      "model = resnet50(pretrained=False).npu()",
      "nn.DataParallel is unsupported on Ascend (2.7.1 API list); drop it and place the model on the NPU"),
    C("model = resnet_cifar(depth=20, num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "model = resnet_cifar(depth=20, num_classes=10).npu()", "model placement"),
    C("model = resnet_cifar(depth=110, num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "model = resnet_cifar(depth=110, num_classes=10).npu()", "model placement"),
])
E("sm_datasets", "code/datasets.py", "explicit_replacement",
  "locuslab/smoothing code/datasets.py (NormalizeLayer)", [
    C("self.means = torch.tensor(means).cuda()", "tensor_to_device", "replace", True,
      "self.means = torch.tensor(means).npu()",
      "plain attribute, not a buffer: model.npu() would not move it, so it must be placed explicitly"),
    C("self.sds = torch.tensor(sds).cuda()", "tensor_to_device", "replace", True,
      "self.sds = torch.tensor(sds).npu()", "same as means"),
])
E("sm_train", "code/train.py", "explicit_replacement",
  "locuslab/smoothing code/train.py (Gaussian-noise training of the base classifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "set before the first device call; unported --gpu is ignored and every job lands on NPU 0"),
    C("criterion = CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = CrossEntropyLoss().npu()",
      "parameter-less loss: Module.cuda() visits no tensors and never touches CUDA, so it is a no-op; "
      "ported only for consistency"),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "batch placement"),
    C("=targets = targets.cuda()", "tensor_to_device", "replace", True, "targets = targets.npu()", "batch placement"),
    C("inputs = inputs + torch.randn_like(inputs, device='cuda') * noise_sd", "device_type", "replace", True,
      "inputs = inputs + torch.randn_like(inputs, device='npu') * noise_sd", "noise augmentation"),
    C("inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
      "inputs, targets = inputs.npu(), targets.npu()", "batch placement (test)"),
    C("noisy = inputs + torch.randn_like(inputs).cuda() * noise_sd", "tensor_to_device", "replace", True,
      "noisy = inputs + torch.randn_like(inputs).npu() * noise_sd",
      "randn_like(inputs) is already on the NPU; the trailing .cuda() is what fails"),
])
E("sm_train_utils", "code/train_utils.py", "explicit_replacement",
  "locuslab/smoothing code/train_utils.py", [])
E("sm_sh", "scripts/certify_cifar10.sh", "explicit_replacement",
  "locuslab/smoothing experiment launcher (certify one sigma per GPU)", [
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", False, "npu-smi info",
      "informational only; no set -e, so a missing nvidia-smi just prints an error"),
    C("=cd code", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced by the login shell or container, so not counted as required"),
    C("CUDA_VISIBLE_DEVICES=0 python certify.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python certify.py cifar10 ../${MODELS}/noise_0.12/checkpoint.pth.tar 0.12 \\",
      "four jobs run in parallel; unported they all land on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=1 python certify.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python certify.py cifar10 ../${MODELS}/noise_0.25/checkpoint.pth.tar 0.25 \\",
      "four jobs run in parallel; unported they all land on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=2 python certify.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2 python certify.py cifar10 ../${MODELS}/noise_0.50/checkpoint.pth.tar 0.50 \\",
      "four jobs run in parallel; unported they all land on NPU 0"),
    C("CUDA_VISIBLE_DEVICES=3 python certify.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=3 python certify.py cifar10 ../${MODELS}/noise_1.00/checkpoint.pth.tar 1.00 \\",
      "four jobs run in parallel; unported they all land on NPU 0"),
])

# ----------------------------------------------------------------------------- fast adversarial training
ZEROS_NOTE = "zeros_like(X) is already on the NPU; the trailing .cuda() is what fails"
E("fa_cifar_train", "CIFAR10/train_fgsm.py", "explicit_replacement",
  "locuslab/fast_adversarial CIFAR10/train_fgsm.py (FGSM-RS training with apex amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("model = PreActResNet18().cuda()", "tensor_to_device", "replace", True,
      "model = PreActResNet18().npu()", "model placement"),
    C("amp_args = dict(opt_level=args.opt_level, loss_scale=args.loss_scale, verbosity=False)", "amp", "replace",
      False, "amp_args = dict(opt_level=args.opt_level, loss_scale=args.loss_scale, verbosity=False, combine_grad=True)",
      "Ascend apex patch keeps the amp API (so the import and amp.initialize/scale_loss lines stay); "
      "combine_grad is its NPU-only fused-unscale option: performance only, unconfirmed gain"),
    C("delta = torch.zeros(args.batch_size, 3, 32, 32).cuda()", "tensor_to_device", "replace", True,
      "delta = torch.zeros(args.batch_size, 3, 32, 32).npu()", "persistent perturbation ('previous' init)"),
    C("X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()",
      "batch placement"),
    C("delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True,
      "delta = torch.zeros_like(X).npu()", ZEROS_NOTE),
    C("model_test = PreActResNet18().cuda()", "tensor_to_device", "replace", True,
      "model_test = PreActResNet18().npu()", "evaluation model placement"),
])
E("fa_cifar_utils", "CIFAR10/utils.py", "explicit_replacement",
  "locuslab/fast_adversarial CIFAR10/utils.py (normalisation constants, PGD evaluation)", [
    C("mu = torch.tensor(cifar10_mean).view(3,1,1).cuda()", "tensor_to_device", "replace", True,
      "mu = torch.tensor(cifar10_mean).view(3,1,1).npu()",
      "module-level constant, executed at import time; also feeds upper/lower_limit"),
    C("std = torch.tensor(cifar10_std).view(3,1,1).cuda()", "tensor_to_device", "replace", True,
      "std = torch.tensor(cifar10_std).view(3,1,1).npu()", "module-level constant"),
    C("max_loss = torch.zeros(y.shape[0]).cuda()", "tensor_to_device", "replace", True,
      "max_loss = torch.zeros(y.shape[0]).npu()", "PGD restart bookkeeping"),
    C("max_delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True,
      "max_delta = torch.zeros_like(X).npu()", ZEROS_NOTE),
    C("=delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True,
      "delta = torch.zeros_like(X).npu()", ZEROS_NOTE),
    C("X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()",
      "batch placement (evaluate_pgd)"),
    C("X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "X, y = X.npu(non_blocking=True), y.npu(non_blocking=True)", "batch placement (evaluate_standard)"),
])
E("fa_preact", "CIFAR10/preact_resnet.py", "explicit_replacement",
  "locuslab/fast_adversarial CIFAR10/preact_resnet.py", [])
E("fa_mnist", "MNIST/train_mnist.py", "explicit_replacement",
  "locuslab/fast_adversarial MNIST/train_mnist.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("model = mnist_net().cuda()", "tensor_to_device", "replace", True, "model = mnist_net().npu()",
      "model placement"),
    C("X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()",
      "batch placement"),
    C("delta = torch.zeros_like(X).uniform_(-args.epsilon, args.epsilon).cuda()", "tensor_to_device", "replace",
      True, "delta = torch.zeros_like(X).uniform_(-args.epsilon, args.epsilon).npu()", ZEROS_NOTE),
])
E("fa_imagenet_main", "ImageNet/main_fast.py", "explicit_replacement",
  "locuslab/fast_adversarial ImageNet/main_fast.py (DDP, data prefetcher, mixed precision)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("=cudnn.benchmark = True", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "msFmkTransplt performance advice (binary kernels instead of online compilation); the cudnn flag "
      "itself is inert and stays"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()", "side stream of the prefetcher"),
    C("self.mean = torch.tensor([m * 255 for m in mean]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace",
      True, "self.mean = torch.tensor([m * 255 for m in mean]).npu().view(1, 3, 1, 1)", "normalisation constant"),
    C("self.std = torch.tensor([s * 255 for s in std]).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace",
      True, "self.std = torch.tensor([s * 255 for s in std]).npu().view(1, 3, 1, 1)", "normalisation constant"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "stream context"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_input = self.next_input.npu(non_blocking=True)", "async H2D copy"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_target = self.next_target.npu(non_blocking=True)", "async H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "input.record_stream(torch.npu.current_stream())", "allocator stream tracking"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "target.record_stream(torch.npu.current_stream())", "allocator stream tracking"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL -> HCCL"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu()",
      "parameter-less loss: Module.cuda() is a no-op here; ported only for consistency"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "torch.cuda.amp.GradScaler disables itself (warning) without CUDA: fp16 grads would go unscaled"),
    C("map_location=lambda storage, loc: storage.cuda(args.local_rank))", "tensor_to_device", "replace", True,
      "map_location=f'npu:{args.local_rank}')", "resume path maps storages onto a CUDA device"),
    C("global_noise_data = torch.zeros([configs.DATA.batch_size", "tensor_to_device", "replace", True,
      "global_noise_data = torch.zeros([configs.DATA.batch_size, 3, configs.DATA.crop_size, configs.DATA.crop_size]).npu()",
      "module-level buffer created at import time, before main() binds the rank's device"),
    C("mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()", "tensor_to_device", "replace",
      True, "mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).npu()", "normalisation constant"),
    C("std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()", "tensor_to_device", "replace",
      True, "std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).npu()", "normalisation constant"),
    C("=with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "torch.cuda.amp.autocast silently disables itself without CUDA: the FGSM step would run in fp32"),
    C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp, dtype=torch.float16):", "same, descent step"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing barrier; torch.cuda.synchronize() lazily initialises CUDA and raises on a CPU-only torch build"),
    C("mem=torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", False,
      "mem=torch.npu.max_memory_allocated() / 1024 ** 3))",
      "does not raise (CUDA memory stats return empty when CUDA is uninitialised) - only the logged number is 0"),
])
E("fa_imagenet_cfg", "ImageNet/configs/configs_fast_phase1.yml", "explicit_replacement",
  "locuslab/fast_adversarial ImageNet/configs/configs_fast_phase1.yml", [])
E("fa_imagenet_sh", "ImageNet/run_fast_4px.sh", "explicit_replacement",
  "locuslab/fast_adversarial ImageNet/run_fast_*.sh (three-phase launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "mask lists devices 0-3 in order and nproc_per_node=4 binds local_rank 0-3 anyway: same cards either way"),
    C("=export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; often already sourced by the login shell or container"),
    C("=nvidia-smi", "device_capability_check", "replace", True, "npu-smi info",
      "script runs under set -e: a missing nvidia-smi (exit 127) aborts the whole launcher"),
])
