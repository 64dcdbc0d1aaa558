# Labels for probe218 (adversarial-robustness libraries / benchmarks, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SEED_NOTE = ("torch.random.manual_seed / torch.manual_seed already seeds every registered device (privateuse1 'npu' "
             "included, torch>=2.1); the CUDA-only call is a silent no-op on an NPU host (lazy seed never applied) - "
             "unconfirmed in knowledge/, so not required")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; NPU cached blocks are "
                    "simply not released (memory/perf only)")

# ---------------------------------------------------------------- torchattacks
E("ta_attack_base", "torchattacks/attack.py", "device_branch_or_abstraction",
  "torchattacks Attack base class (device from model params, set_device, save/load)", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "fallback for parameter-free models: on an NPU host this silently selects CPU"),
    C("isinstance(inputs, torch.cuda.FloatTensor)", "torch_cuda_api", "replace", False,
      "if inputs.dtype == torch.float32:",
      "type check against torch.cuda.FloatTensor never matches an NPU tensor; save() only passes CPU tensors, so it "
      "only misbehaves for direct callers with NPU tensors"),
    C("isinstance(inputs, torch.cuda.ByteTensor)", "torch_cuda_api", "replace", False,
      "if inputs.dtype == torch.uint8:",
      "same as above for the uint8 branch"),
])

E("ta_deepfool", "torchattacks/attacks/deepfool.py", "device_branch_or_abstraction",
  "torchattacks DeepFool / SparseFool attacks (device-agnostic; no change expected)", [])

E("ta_test_atks", "code_coverage/test_atks.py", "device_branch_or_abstraction",
  "torchattacks code_coverage pytest suite (robustbench model + CIFAR-10 batch)", [
    C("=import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "test module is the entry point; torch.npu.* below needs torch_npu loaded"),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "otherwise the whole suite silently runs on CPU"),
    C('reason="requires a CUDA GPU")', "torch_cuda_api", "replace", False,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="requires an NPU")',
      "test is silently skipped on an NPU host; nothing fails"),
    C("if torch.cuda.device_count() < 2:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() < 2:",
      "inside a CUDA-gated (skipped) test; needed once the test is re-enabled for NPU"),
    C('model = get_model(device="cuda:1")', "device_type", "replace", False,
      'model = get_model(device="npu:1")', "inside skipped CUDA-only test"),
    C('images, labels = get_data(device="cuda:1")', "device_type", "replace", False,
      'images, labels = get_data(device="npu:1")', "inside skipped CUDA-only test"),
    C('assert atk.device == torch.device("cuda:1")', "device_type", "replace", False,
      'assert atk.device == torch.device("npu:1")', "inside skipped CUDA-only test"),
    C("assert adv_images.is_cuda", "torch_cuda_api", "replace", False,
      "assert adv_images.is_npu", "inside skipped CUDA-only test; is_cuda is False for NPU tensors"),
    C('reason="GPU-only: checks device propagation")', "torch_cuda_api", "replace", False,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="NPU-only: checks device propagation")',
      "test silently skipped on NPU"),
    C('model = get_model(device="cuda")', "device_type", "replace", False,
      'model = get_model(device="npu")', "inside skipped CUDA-only test"),
    C('images, labels = get_data(device="cuda")', "device_type", "replace", False,
      'images, labels = get_data(device="npu")', "inside skipped CUDA-only test"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available())", "evaluates False on NPU -> pinning silently off (perf only)"),
])

E("ta_demo_whitebox", "demos/white_box_cifar10.py", "explicit_replacement",
  "torchattacks 'White-box Attack on CIFAR10' demo notebook exported to a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; 'cuda' -> 'npu' strings below need the npu backend registered"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime -> --gpu silently has no effect"),
    C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded CUDA device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only guards a cosmetic device-name print; evaluates False on NPU"),
    C('print("Device:", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", False,
      'print("Device:", torch.npu.get_device_name(0))', "cosmetic print, unreachable unless the guard is ported"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on a host without CUDA (lazy init fails)"),
    C("torch.cuda.synchronize()  # wait for the attack kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the attack kernels before stopping the clock",
      "raises without CUDA; also needed for correct timing of async NPU kernels"),
    C("labels_dev = labels.cuda()", "tensor_to_device", "replace", True, "labels_dev = labels.to(device)",
      ".cuda() fails on NPU host"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False, "if torch.npu.device_count() > 1:",
      "returns 0 on NPU so the optional second-device demo is silently skipped"),
    C('model = model.to("cuda:1")', "device_type", "replace", False, 'model = model.to("npu:1")',
      "inside the skipped multi-device demo section"),
    C('atk.set_device(torch.device("cuda:1"))', "device_type", "replace", False,
      'atk.set_device(torch.device("npu:1"))', "inside the skipped multi-device demo section"),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      'print("max memory allocated: %.1f MiB" % (torch.npu.max_memory_allocated() / 2**20))',
      "returns 0 silently without CUDA; log line only"),
])

E("ta_benchmark_speed", "code_coverage/benchmark_speed.py", "explicit_replacement",
  "torchattacks attack speed/memory benchmark (CUDA events, peak memory, nvidia-smi)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('["nvidia-smi", "--query-gpu=name,memory.total,driver_version",', "torch_cuda_api", "replace", False,
      '["npu-smi", "info"],',
      "nvidia-smi missing -> OSError is caught and the fallback below is used; output format differs from npu-smi"),
    C("props = torch.cuda.get_device_properties(0)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(0)",
      "raises without CUDA; NPU props have name/total_memory (no major/minor), which is all that is used"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event cannot be created on an NPU host"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA event cannot be created on an NPU host"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves current CUDA device -> raises without CUDA"),
    C("torch.cuda.synchronize()  # end_evt", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # end_evt must have completed before elapsed_time()", "raises without CUDA"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      "peak_mb = torch.npu.max_memory_allocated() / 2**20",
      "silently reports 0 without CUDA - the benchmark's main metric would be wrong"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "script exits immediately on an NPU host"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "hard-coded CUDA device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------- AutoAttack
E("aa_autoattack", "autoattack/autoattack.py", "device_branch_or_abstraction",
  "fra31/auto-attack AutoAttack driver (run_standard_evaluation, versions)", [
    C("device='cuda', log_path=None):", "device_type", "replace", True, "device='npu', log_path=None):",
      "default device; examples/eval.py relies on it, and every sub-attack receives it"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("aa_apgd", "autoattack/autopgd_base.py", "device_branch_or_abstraction",
  "fra31/auto-attack APGD / APGD-T implementation", [
    C("self.device = device if device is not None else torch.device('cuda')", "device_type", "replace", False,
      "self.device = device  # resolved from x in init_hyperparam",
      "AutoAttack always passes device explicitly; only direct APGDAttack users relying on the default hit it"),
    C("torch.cuda.random.manual_seed(self.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(self.seed)", SEED_NOTE),
    C("torch.cuda.random.manual_seed_all(self.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.seed)", SEED_NOTE),
])

E("aa_eval", "examples/eval.py", "explicit_replacement",
  "fra31/auto-attack examples/eval.py (ResNet18 checkpoint on CIFAR-10)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("ckpt = torch.load(args.model)", "device_type", "replace", True,
      "ckpt = torch.load(args.model, map_location='cpu')",
      "checkpoint was saved from a CUDA model; deserialising CUDA storages fails without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails on NPU host"),
])

# ---------------------------------------------------------------- RobustBench
E("rb_eval", "robustbench/eval.py", "device_branch_or_abstraction",
  "RobustBench robustbench/eval.py (benchmark(), corruptions evaluation, CLI main)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "python -m robustbench.eval entry point; torch.device('npu:0') from --device needs the backend"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
])

E("rb_utils", "robustbench/utils.py", "device_branch_or_abstraction",
  "RobustBench robustbench/utils.py (load_model, clean_accuracy, parse_args)", [
    C("default='cuda:0',", "device_type", "replace", True, "default='npu:0',",
      "CLI default device for robustbench.eval"),
])

E("rb_dm_wrn", "robustbench/model_zoo/architectures/dm_wide_resnet.py", "device_branch_or_abstraction",
  "RobustBench DeepMind WideResNet / PreActResNet (lazy mean_cuda/std_cuda caching)", [
    C("if x.is_cuda:", "torch_cuda_api", "replace", True, "if x.device.type != 'cpu':",
      "False for NPU inputs -> else branch mixes CPU mean/std with NPU x and raises a device mismatch"),
    C("self.mean_cuda = self.mean.cuda()", "tensor_to_device", "replace", True,
      "self.mean_cuda = self.mean.to(x.device)", ".cuda() fails once the branch is taken on NPU"),
    C("self.std_cuda = self.std.cuda()", "tensor_to_device", "replace", True,
      "self.std_cuda = self.std.to(x.device)", ".cuda() fails once the branch is taken on NPU"),
])

E("rb_example", "examples/leaderboard_eval.py", "explicit_replacement",
  "RobustBench README-style leaderboard evaluation (load_model().to('cuda'), AutoAttack, benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("xb = x[i:i + bs].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xb = x[i:i + bs].to(device, non_blocking=True)", ".cuda() fails on NPU host"),
    C("yb = y[i:i + bs].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "yb = y[i:i + bs].to(device, non_blocking=True)", ".cuda() fails on NPU host"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "hard-coded CUDA device"),
    C('threat_model=args.threat_model).to("cuda")', "device_type", "replace", True,
      'threat_model=args.threat_model).to("npu")', "hard-coded CUDA device"),
    C("version='standard', device='cuda')", "device_type", "replace", True,
      "version='standard', device='npu')", "AutoAttack would move batches to cuda"),
    C('device=torch.device("cuda:0"), batch_size=args.bs)', "device_type", "replace", True,
      'device=torch.device("npu:0"), batch_size=args.bs)', "benchmark() device"),
    C('"gpu": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True,
      '"gpu": torch.npu.get_device_name(device),', "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------- ART
E("art_estimator_base", "art/estimators/pytorch.py", "device_branch_or_abstraction",
  "Adversarial Robustness Toolbox PyTorchEstimator (device_type='gpu' -> cuda:current_device)", [
    C('if device_type == "cpu" or not torch.cuda.is_available():', "torch_cuda_api", "replace", True,
      'if device_type == "cpu" or not (torch.cuda.is_available() or torch.npu.is_available()):',
      "device_type='gpu' silently falls back to CPU on an NPU host"),
    C("cuda_idx = torch.cuda.current_device()", "device_type", "add_branch", True,
      'elif torch.npu.is_available(): self._device = torch.device(f"npu:{torch.npu.current_device()}")',
      "keep the CUDA branch, add an NPU branch next to it (ART only knows 'gpu'/'cpu' device_type values)"),
])

E("art_classifier", "art/estimators/classification/pytorch.py", "device_branch_or_abstraction",
  "Adversarial Robustness Toolbox PyTorchClassifier (apex amp, fit/loss_gradient, pickling)", [
    C("=from apex import amp  # pylint: disable=E0611", "amp", "replace", False,
      "from torch.npu.amp import GradScaler  # or keep apex.amp with Ascend's apex build",
      "use_amp path only (default False); Ascend apex is a drop-in for apex.amp, NVIDIA apex with CUDA exts is not"),
    C("from apex import amp  # pylint: disable=E0611,C0415", "amp", "replace", False,
      "from torch.npu.amp import GradScaler  # or keep apex.amp with Ascend's apex build", "same, fit() path"),
    C("from apex import amp  # pylint: disable=import-outside-toplevel", "amp", "replace", False,
      "from torch.npu.amp import GradScaler  # or keep apex.amp with Ascend's apex build",
      "same, loss_gradient() path"),
    C('pin_memory=self._device.type == "cuda")', "pin_memory", "replace", False,
      'pin_memory=self._device.type in ("cuda", "npu"))', "pinning silently disabled for npu (perf only)"),
    C('self._device = torch.device("cuda:{}".format(torch.cuda.current_device()))', "device_type", "replace", True,
      'self._device = torch.device("npu:{}".format(torch.npu.current_device()))',
      "unpickling a classifier raises without CUDA"),
])

E("art_example", "examples/adversarial_training_cifar10.py", "explicit_replacement",
  "ART example: FBF / Madry PGD adversarial training of PreActResNet18 on CIFAR-10", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the ported PyTorchEstimator calls torch.npu.*"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a cosmetic peak-memory print"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'print("peak NPU memory: %.1f GiB" % (torch.npu.max_memory_allocated() / 2**30))', "log line only"),
])

# ---------------------------------------------------------------- TRADES / MART
E("trades_train", "train_trades_cifar10.py", "explicit_replacement",
  "yaodongyu/TRADES train_trades_cifar10.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()",
      "False on NPU -> training silently runs on CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "hard-coded CUDA device type"),
    C("if args.data_parallel and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if args.data_parallel and torch.npu.device_count() > 1:",
      "returns 0 on NPU so the (unsupported) DataParallel path is skipped anyway; porting it needs the DP line fixed too"),
    C('print("Let\'s use", torch.cuda.device_count(), "GPUs!")', "torch_cuda_api", "replace", False,
      'print("Let\'s use", torch.npu.device_count(), "NPUs!")', "log line inside the unreachable DataParallel branch"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", False,
      "model = model  # nn.DataParallel is unsupported on NPU; use DDP + torchrun instead",
      "opt-in flag and unreachable on NPU unless device_count is ported"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location=device)",
      "only fails when resuming a checkpoint written on a CUDA machine"),
    C("optimizer.load_state_dict(torch.load(opt_path))", "device_type", "replace", False,
      "optimizer.load_state_dict(torch.load(opt_path, map_location=device))",
      "only fails when resuming a CUDA-written optimizer state"),
])

E("trades_loss", "trades.py", "explicit_replacement",
  "yaodongyu/TRADES trades.py (trades_loss)", [
    C("x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device",
      "replace", True,
      "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape, device=x_natural.device).detach()",
      ".cuda() fails on NPU host"),
    C("delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device", "replace", True,
      "delta = 0.001 * torch.randn(x_natural.shape, device=x_natural.device).detach()", ".cuda() fails (l_2 branch)"),
])

E("trades_pgd", "pgd_attack_cifar10.py", "explicit_replacement",
  "yaodongyu/TRADES pgd_attack_cifar10.py (white-/black-box PGD evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()", "False on NPU -> silently CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "hard-coded CUDA device type"),
    C("random_noise = torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon).cuda()", "tensor_to_device",
      "replace", True, "random_noise = torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon).to(device)",
      ".cuda() fails (black-box path)"),
    C("model.load_state_dict(torch.load(args.model_path))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(args.model_path, map_location=device))",
      "released TRADES checkpoints were saved from CUDA models"),
    C("model_target.load_state_dict(torch.load(args.target_model_path))", "device_type", "replace", True,
      "model_target.load_state_dict(torch.load(args.target_model_path, map_location=device))", "same"),
    C("model_source.load_state_dict(torch.load(args.source_model_path))", "device_type", "replace", True,
      "model_source.load_state_dict(torch.load(args.source_model_path, map_location=device))", "same"),
])

E("mart_train", "train_wideresnet.py", "explicit_replacement",
  "YisenWang/MART train_wideresnet.py with mart_loss inlined (DataParallel, hard-coded .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "--gpu silently ignored on Ascend"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device",
      "replace", True,
      "x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape, device=x_natural.device).detach()",
      ".cuda() fails on NPU host"),
    C("data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace",
      True, "data, target = data.npu(non_blocking=True), target.npu(non_blocking=True)", ".cuda() fails"),
    C("random_noise = torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon).cuda()", "tensor_to_device",
      "replace", True, "random_noise = torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon).to(X.device)",
      ".cuda() fails"),
    C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "data, target = data.npu(), target.npu()", ".cuda() fails"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "nn.DataParallel is unsupported on NPU (Ascend API list); .cuda() fails as well - single device or DDP"),
    C("logger.info('Using %d GPU(s): %s', torch.cuda.device_count(), args.gpu)", "torch_cuda_api", "replace", False,
      "logger.info('Using %d NPU(s): %s', torch.npu.device_count(), args.gpu)", "log line only (prints 0)"),
    C("=torch.save(model.module.state_dict(),", "distributed_framework", "replace", True,
      "torch.save(model.state_dict(),", "follows from dropping DataParallel: there is no .module any more"),
    C("torch.save(model.module.state_dict(), os.path.join(model_dir, 'best_model.pth'))", "distributed_framework",
      "replace", True, "torch.save(model.state_dict(), os.path.join(model_dir, 'best_model.pth'))",
      "follows from dropping DataParallel"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------- fast_adversarial (Wong et al.)
E("fastat_utils", "CIFAR10/utils.py", "explicit_replacement",
  "locuslab/fast_adversarial CIFAR10/utils.py (module-level .cuda() mean/std, attack_pgd)", [
    C("import apex.amp as amp", "amp", "replace", False,
      "import apex.amp as amp  # Ascend apex build; or port to torch.npu.amp",
      "NVIDIA apex is not available on NPU; Ascend's apex patch keeps the apex.amp API, so the line itself can stay"),
    C("mu = torch.tensor(cifar10_mean).view(3,1,1).cuda()", "tensor_to_device", "replace", True,
      "mu = torch.tensor(cifar10_mean).view(3,1,1).npu()", "module-level .cuda() fails at import time"),
    C("std = torch.tensor(cifar10_std).view(3,1,1).cuda()", "tensor_to_device", "replace", True,
      "std = torch.tensor(cifar10_std).view(3,1,1).npu()", "module-level .cuda() fails at import time"),
    C("max_loss = torch.zeros(y.shape[0]).cuda()", "tensor_to_device", "replace", True,
      "max_loss = torch.zeros(y.shape[0], device=y.device)", ".cuda() fails"),
    C("max_delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True,
      "max_delta = torch.zeros_like(X)", "zeros_like already follows X; the .cuda() raises"),
    C("=delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True, "delta = torch.zeros_like(X)",
      "same"),
    C("=X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()",
      ".cuda() fails (evaluate_pgd)"),
    C("X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "X, y = X.npu(non_blocking=True), y.npu(non_blocking=True)", ".cuda() fails (evaluate_standard)"),
])

E("fastat_train", "CIFAR10/train_fgsm.py", "explicit_replacement",
  "locuslab/fast_adversarial CIFAR10/train_fgsm.py (FGSM-RS training with apex amp O2)", [
    C("=from apex import amp", "amp", "replace", False,
      "from apex import amp  # Ascend apex build; or port to torch.npu.amp",
      "apex.amp API is kept by Ascend's apex patch (O1/O2, static/dynamic scale); NVIDIA apex is not usable"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
    C("model = PreActResNet18().cuda()", "tensor_to_device", "replace", True, "model = PreActResNet18().npu()",
      ".cuda() fails"),
    C("delta = torch.zeros(args.batch_size, 3, 32, 32).cuda()", "tensor_to_device", "replace", True,
      "delta = torch.zeros(args.batch_size, 3, 32, 32).npu()", ".cuda() fails ('previous' init)"),
    C("X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()", ".cuda() fails"),
    C("delta = torch.zeros_like(X).cuda()", "tensor_to_device", "replace", True, "delta = torch.zeros_like(X)",
      ".cuda() fails"),
    C("model_test = PreActResNet18().cuda()", "tensor_to_device", "replace", True,
      "model_test = PreActResNet18().npu()", ".cuda() fails"),
])

# ---------------------------------------------------------------- Free/Fast AT on ImageNet (DDP)
E("freeat_imagenet", "ImageNet/main_free_ddp.py", "explicit_replacement",
  "mahyarnajibi/FreeAdversarialTraining + fast_adversarial ImageNet, torchrun/DDP + torch.cuda.amp variant", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(cfg.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.local_rank)", "raises without CUDA"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)",
      "raises without CUDA"),
    C("return torch.device('cuda', cfg.local_rank if cfg.distributed else 0)", "device_type", "replace", True,
      "return torch.device('npu', cfg.local_rank if cfg.distributed else 0)", "hard-coded CUDA device"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("scaler = torch.cuda.amp.GradScaler(enabled=configs.TRAIN.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=configs.TRAIN.amp)",
      "CUDA GradScaler disables itself with a warning when CUDA is absent -> fp32, perf only"),
    C("map_location=lambda storage, loc: storage.cuda(configs.local_rank))", "device_type", "replace", True,
      "checkpoint = torch.load(configs.resume, map_location=lambda storage, loc: storage.npu(configs.local_rank))",
      "storage.cuda() fails on resume / --evaluate"),
    C('persistent_workers=True, pin_memory_device="cuda")', "pin_memory", "replace", True,
      'persistent_workers=True, pin_memory_device="npu")',
      "with pin_memory: true the pin thread pins to a non-existent CUDA device and fails"),
    C("mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()", "tensor_to_device",
      "replace", True, "mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)",
      ".cuda() fails"),
    C("std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()", "tensor_to_device",
      "replace", True, "std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)",
      ".cuda() fails"),
    C("configs.DATA.crop_size, configs.DATA.crop_size]).cuda()", "tensor_to_device", "replace", True,
      "global_noise_data = torch.zeros([configs.DATA.batch_size, 3, configs.DATA.crop_size, "
      "configs.DATA.crop_size], device=device)", ".cuda() fails"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.to(device, non_blocking=True)", ".cuda() fails"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.to(device, non_blocking=True)", ".cuda() fails"),
    C("with torch.cuda.amp.autocast(enabled=configs.TRAIN.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=configs.TRAIN.amp):",
      "CUDA autocast disables itself with a warning when CUDA is absent -> silently fp32 (perf only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("mem=torch.cuda.max_memory_reserved() / 2**30))", "torch_cuda_api", "replace", False,
      "mem=torch.npu.max_memory_reserved() / 2**30))", "log field only (reports 0)"),
    C("with torch.cuda.amp.autocast(enabled=configs.TRAIN.amp, dtype=torch.float16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=configs.TRAIN.amp, dtype=torch.float16):",
      "silently disabled on NPU (perf only)"),
])

E("freeat_config", "ImageNet/configs/free_at_eps4.yml", "explicit_replacement",
  "FreeAdversarialTraining-style EasyDict YAML config (TRAIN/ADV/DATA/DIST)", [
    C("backend: 'nccl'", "dist_backend", "replace", True, "backend: 'hccl'",
      "fed straight into dist.init_process_group(backend=...); NCCL does not exist on Ascend"),
    C("channels_last: true", "unsupported_op_workaround", "replace", False, "channels_last: false",
      "channels_last is listed as not supported by the Ascend migration notes (use contiguous); unconfirmed whether "
      "it errors or only slows down"),
])

E("freeat_launch", "ImageNet/scripts/run_imagenet_ddp.sh", "explicit_replacement",
  "torchrun launcher for the ImageNet free-AT job (CUDA_VISIBLE_DEVICES, NCCL_* tuning, nvidia-smi)", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (libs, ASCEND_* paths) must be loaded before torch_npu is imported"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "ignored by the Ascend runtime"),
    C("NGPUS=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", "replace", True,
      "NGPUS=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent -> with pipefail the script aborts (and NGPUS would be 0)"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "debug verbosity only; no-op on HCCL"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent needed (HCCL uses the NPU's own RoCE ports); silent no-op"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "only matters multi-node when HCCL's default host-NIC choice cannot reach the root"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog behaviour; HCCL default is already 1 per MindCluster docs"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "command not found -> set -e aborts the launcher"),
    C("CUDA_VISIBLE_DEVICES=0 python main_free_ddp.py ${CONFIG} \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python main_free_ddp.py ${CONFIG} \\",
      "evaluation would otherwise not be pinned to one device"),
])

# ---------------------------------------------------------------- randomized smoothing (Cohen et al.)
E("smooth_core", "code/core.py", "explicit_replacement",
  "locuslab/smoothing code/core.py (Smooth.certify / predict)", [
    C("noise = torch.randn_like(batch, device='cuda') * self.sigma", "device_type", "replace", True,
      "noise = torch.randn_like(batch) * self.sigma",
      "hard-coded CUDA noise; batch already lives on x's device"),
])

E("smooth_certify", "code/certify.py", "explicit_replacement",
  "locuslab/smoothing code/certify.py", [
    C("=import setGPU", "env_var", "removal", True, None,
      "setGPU picks the freest GPU through nvidia-smi/NVML and sets CUDA_VISIBLE_DEVICES; fails on an NPU host"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("checkpoint = torch.load(args.base_classifier)", "device_type", "replace", True,
      "checkpoint = torch.load(args.base_classifier, map_location='cpu')",
      "released smoothing checkpoints were saved from CUDA DataParallel models"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", ".cuda() fails"),
])

E("smooth_arch", "code/architectures.py", "explicit_replacement",
  "locuslab/smoothing code/architectures.py (get_architecture)", [
    C("model = torch.nn.DataParallel(resnet50(pretrained=False)).cuda()", "distributed_framework", "replace", True,
      "model = resnet50(pretrained=False).npu()  # strip 'module.' from checkpoint keys when loading",
      "nn.DataParallel is unsupported on NPU and .cuda() fails"),
    C("model = resnet_cifar(depth=20, num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "model = resnet_cifar(depth=20, num_classes=10).npu()", ".cuda() fails"),
    C("model = resnet_cifar(depth=110, num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "model = resnet_cifar(depth=110, num_classes=10).npu()", ".cuda() fails"),
])

E("smooth_datasets", "code/datasets.py", "explicit_replacement",
  "locuslab/smoothing code/datasets.py (NormalizeLayer with plain-attribute .cuda() tensors)", [
    C("self.means = torch.tensor(means).cuda()", "tensor_to_device", "replace", True,
      "self.means = torch.tensor(means).npu()",
      "plain attribute (not a buffer), so .to(device) on the model would not move it either"),
    C("self.sds = torch.tensor(sds).cuda()", "tensor_to_device", "replace", True,
      "self.sds = torch.tensor(sds).npu()", "same"),
])

# ---------------------------------------------------------------- auto_LiRPA
E("lirpa_cuda_utils", "auto_LiRPA/cuda_utils.py", "device_branch_or_abstraction",
  "Verified-Intelligence auto_LiRPA cuda_utils.py (JIT-built double2float kernel with PyTorch fallback)", [
    C("x_f = torch.where(wrong, torch.nextafter(x_f, target), x_f)", "unsupported_op_workaround", "replace", False,
      "x_f = torch.where(wrong, torch.nextafter(x_f.cpu(), target.cpu()).to(x_f.device), x_f)",
      "nextafter has no NPU kernel in the op lists -> automatic CPU fallback per call (perf only); this is the path "
      "taken on NPU since the CUDA kernel is never built"),
    C('a = torch.randn(size=shape, dtype=torch.float64, device="cuda")', "device_type", "replace", True,
      'a = torch.randn(size=shape, dtype=torch.float64, device="npu")', "self-test (__main__) fails"),
    C('a = a * torch.exp(torch.randn(size=shape, dtype=torch.float64, device="cuda") * 10)', "device_type",
      "replace", True, 'a = a * torch.exp(torch.randn(size=shape, dtype=torch.float64, device="npu") * 10)',
      "self-test fails"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "self-test: raises without CUDA"),
    C('ext_modules=[CUDAExtension("cuda_utils", [', "custom_cuda_extension", "replace", False,
      'ext_modules=[NpuExtension("cuda_utils", [  # after rewriting cuda_kernels.cu in Ascend C',
      "manual 'install' path only; no nvcc on Ascend hosts, and the module already falls back to PyTorch"),
])

# ---------------------------------------------------------------- packaging
E("rb_requirements", "requirements.txt", "explicit_replacement",
  "RobustBench/benchmark requirements.txt pinned to CUDA 11.8 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; harmless once the +cu118 pins go (aarch64 has no wheels there), CPU index on x86"),
    C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "CUDA build pin; torch_npu pairs with torch x.y.z exactly and has no 2.1.2 release"),
    C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0; +cu118 local version"),
    C("numpy>=1.19.4,<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin (CANN 8.0.0 line)"),
    C("setGPU==0.0.7", "env_var", "removal", False, None,
      "installs fine, but only works with nvidia-smi; drop together with `import setGPU`"),
    C("nvidia-ml-py>=12.535.77", "torch_cuda_api", "removal", False, None,
      "NVML bindings: installable but useless on Ascend (no NPU equivalent in pynvml)"),
])

E("advtrain_envyml", "environment.yml", "explicit_replacement",
  "conda environment.yml for the TRADES/MART/fast-AT training repos (pytorch-cuda + apex with CUDA exts)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "unused channel once CUDA packages are gone"),
    C("=- pytorch=2.1.2", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no 2.1.2 pairing; alternatively move torch to the pip section"),
    C("=- torchvision=0.16.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
      "must follow torch 2.1.0"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
      "selects the CUDA build of pytorch; not resolvable on linux-aarch64 Ascend hosts"),
    C("=- cudatoolkit-dev=11.8", "torch_cuda_api", "removal", False, None,
      "nvcc toolchain only needed for apex CUDA extensions; unconfirmed whether it even installs on aarch64"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "torch-npu pin"),
    C("git+https://github.com/NVIDIA/apex.git@22.04-dev#egg=apex", "amp", "replace", True,
      "# apex: build Ascend/apex (bash scripts/build.sh --python=3.10) and pip install the produced wheel",
      "--cuda_ext/--cpp_ext build needs nvcc and fails; Ascend apex provides the apex.amp API"),
])

E("rb_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for benchmark runs on top of pytorch/pytorch CUDA runtime image", [
    C("FROM pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; needs a CANN base image (torch/torch_npu then installed explicitly)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "nvidia-container-runtime hint; Ascend docker runtime uses ASCEND_VISIBLE_DEVICES; silent no-op"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "silent no-op"),
    C("&& pip install -r /tmp/req.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "the CANN base image carries no torch; the grep above strips torch pins expecting the base image to provide them"),
    C("=RUN pip install -e .", "import_torch_npu", "npu_only_addition", False,
      'ENTRYPOINT ["/bin/bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec \\"$@\\"", "--"]',
      "source CANN set_env.sh for the CMD; unconfirmed whether the chosen base image already exports it"),
    C("ENV CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None, "silent no-op on Ascend"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "env_var", "removal", False, None,
      "only used when building CUDA extensions; silent no-op"),
])
