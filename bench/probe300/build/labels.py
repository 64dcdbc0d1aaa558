"""Labels for probe300 (uncertainty estimation / calibration / Bayesian DL, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit.  See README.md "How the labels were chosen".
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401"
IMPORT_NPU_GUARDED = "import torch_npu  # noqa: F401  (wrapped in try/except ImportError -> torch_npu = None)"
LOAD_NOTE = ("no map_location: works for checkpoints written by the ported (NPU) pipeline, fails with "
             "'Attempting to deserialize object on a CUDA device' for checkpoints written on a GPU host")
PIN_NOTE = ("DataLoader pin_memory without pin_memory_device pins only when torch.cuda.is_available(); on an NPU host "
            "pinning is silently skipped (perf only; unconfirmed in knowledge whether torch_npu patches this)")

# ----------------------------------------------------------------------------------------- SWAG
E("swag_run_swag", "experiments/train/run_swag.py", "explicit_replacement",
  "wjmaddox/swa_gaussian experiments/train/run_swag.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: torch.npu / torch_npu must be registered before the device is used"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "False on an NPU host -> whole run silently falls back to CPU (use_cuda also drives train_epoch/eval)"),
      C('args.device = torch.device("cuda")', "device_type", "replace", True,
        'args.device = torch.device("npu")', "model / SWAG model are moved with args.device"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)",
        "silent no-op on NPU host; torch.manual_seed on the line above already seeds the NPU generator"),
      C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
        "checkpoint = torch.load(args.resume, map_location=args.device)", LOAD_NOTE),
      C("checkpoint = torch.load(args.swa_resume)", "device_type", "replace", False,
        "checkpoint = torch.load(args.swa_resume, map_location=args.device)", LOAD_NOTE),
      C("memory_usage = torch.cuda.memory_allocated() / (1024.0 ** 3)", "torch_cuda_api", "replace", True,
        "memory_usage = torch.npu.memory_allocated() / (1024.0 ** 3)",
        "CUDA allocator never initialised on an NPU host -> reports 0 GB in the results table"),
  ])

E("swag_utils", "swag/utils.py", "explicit_replacement",
  "wjmaddox/swa_gaussian swag/utils.py (train_epoch / eval / predict / bn_update)",
  [
      C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
        ".cuda() raises on a host without CUDA"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        ".cuda() raises on NPU host"),
      C("y = y.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "y = y.npu(non_blocking=True)",
        ".cuda() raises on NPU host"),
      C("inp = inp.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "inp = inp.npu(non_blocking=True)", "predict() is called unconditionally from run_swag.py"),
      C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input = input.npu(non_blocking=True)", "bn_update() moves every batch unconditionally"),
      C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()",
        "predictions() with cuda=True (the default)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize raises without CUDA"),
  ])

E("swag_posterior", "swag/posteriors/swag.py", "explicit_replacement",
  "wjmaddox/swa_gaussian swag/posteriors/swag.py (SWAG class)",
  [
      C("module.__setattr__(name, sample.cuda())", "tensor_to_device", "replace", True,
        "module.__setattr__(name, sample.npu())",
        "sample_fullrank builds the sample on CPU and hard-codes .cuda(); raises on NPU host"),
  ])

E("swag_uncertainty", "experiments/uncertainty/uncertainty.py", "explicit_replacement",
  "wjmaddox/swa_gaussian experiments/uncertainty/uncertainty.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", "silent no-op; torch.manual_seed already seeds the NPU"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "raises on NPU host"),
      C("checkpoint = torch.load(args.file)", "device_type", "replace", False,
        'checkpoint = torch.load(args.file, map_location="npu")', LOAD_NOTE),
      C("t_input.cuda(non_blocking=True),", "tensor_to_device", "replace", True, "t_input.npu(non_blocking=True),",
        "KFAC-Laplace warm-up batch"),
      C("t_target.cuda(non_blocking=True),", "tensor_to_device", "replace", True,
        "t_target.npu(non_blocking=True),", "KFAC-Laplace warm-up batch"),
      C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input = input.npu(non_blocking=True)", "test loop"),
  ])

E("swa_native_train", "train_swa.py", "transfer_to_npu",
  "torch.optim.swa_utils SWA/EMA recipe (PyTorch SWA blog / tutorial style) with torch.cuda.amp",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "from torch_npu.contrib import transfer_to_npu  # noqa: F401",
        "transfer_to_npu port: redirects torch.cuda.*, torch.cuda.amp.*, cuda device strings in .to(), "
        "Module.to, so the device/AMP lines stay untouched"),
      C("use_bf16 = args.amp and torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", "replace",
        True, "use_bf16 = args.amp and torch.npu.is_bf16_supported()",
        "under transfer_to_npu get_device_capability() maps to the NPU one, which returns None unless "
        "TORCH_NPU_DEVICE_CAPABILITY is set -> TypeError when --amp is given"),
  ])

# ----------------------------------------------------------------------------------------- Laplace
E("laplace_uq", "uq.py", "device_branch_or_abstraction",
  "AlexImmer/Laplace / runame/laplace-redux uq.py (fit_models / evaluate_models)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU_GUARDED, "entry script"),
      C('args.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'args.device = "npu" if (torch_npu is not None and torch.npu.is_available()) else ("cuda" if torch.cuda.is_available() else "cpu")',
        "without an NPU branch the whole Laplace fit silently runs on CPU"),
      C("subnetwork_mask.select().type(torch.cuda.LongTensor)", "torch_cuda_api", "replace", True,
        'optional_args["subnetwork_indices"] = subnetwork_mask.select().to(device=args.device, dtype=torch.long)',
        "torch.cuda.LongTensor type does not exist without CUDA -> raises"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize() if args.device == 'npu' else torch.cuda.synchronize()",
        "torch.cuda.synchronize raises on an NPU host"),
      C("torch.cuda.synchronize(args.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize() if args.device == 'npu' else torch.cuda.synchronize(args.device)",
        "raises on an NPU host"),
      C("(peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)", "torch_cuda_api", "replace", True,
        '      f"(peak mem {getattr(torch, args.device).max_memory_allocated() / 2**30:.2f} GiB)")',
        "CUDA allocator uninitialised on NPU host -> reports 0 GiB"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache() if args.device == 'npu' else torch.cuda.empty_cache()",
        "silent no-op on NPU host; NPU cache is not released between mixture components (memory only)"),
      C("if args.data_parallel and torch.cuda.device_count() < 2:", "torch_cuda_api", "replace", False,
        "if args.data_parallel and (args.device == 'npu' or torch.cuda.device_count() < 2):",
        "returns 0 on NPU host, which disables --data_parallel; that is the right outcome (nn.DataParallel is "
        "unsupported on NPU) so only the intent/message changes"),
  ])

E("laplace_utils", "utils/utils.py", "explicit_replacement",
  "runame/laplace-redux utils/utils.py",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op; torch.manual_seed(seed) already seeds the NPU generator"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "timing(): falls back to the wall-clock branch on an NPU host, which still works"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
        "start = torch.npu.Event(enable_timing=True)", "only reached once the guard is ported"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
        "end = torch.npu.Event(enable_timing=True)", "only reached once the guard is ported"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "only reached once the guard is ported"),
      C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
        "nn.DataParallel is unsupported on Ascend (support list / msFmkTransplt); with NPUs visible its scatter "
        "path fails, so load the WRN50-2 checkpoint into the bare module"),
      C('state_dict = OrderedDict(("module." + k if not k.startswith("module.") else k, v)', "unsupported_op_workaround",
        "replace", True,
        'state_dict = OrderedDict((k[len("module."):] if k.startswith("module.") else k, v)',
        "without the DataParallel wrapper the 'module.' prefix must be stripped instead of added"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "memory logging only; unchanged it just returns early"),
      C("alloc = torch.cuda.memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 2 ** 30", "logging only, behind the guard above"),
      C("reserved = torch.cuda.memory_reserved() / 2 ** 30", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved() / 2 ** 30", "logging only, behind the guard above"),
  ])

E("laplace_marglik", "examples/regression_marglik.py", "explicit_replacement",
  "AlexImmer/Laplace examples/regression_example.py + marglik_training on UCI",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "hard-coded CUDA device; every tensor and the model are moved there"),
      C("torch.set_default_dtype(torch.float64)", "unsupported_op_workaround", "replace", False,
        "torch.set_default_dtype(torch.float32)  # fp64 matmul is not supported on NPU; or run --double on CPU",
        "unconfirmed: support list gives fp16/fp32 only for matmul and fp32 only for linalg.cholesky; fp64 "
        "Laplace on NPU may error or fall back to CPU"),
      C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
        'results["peak_gpu_mem_mb"] = torch.npu.max_memory_allocated(device) / 2 ** 20',
        "CUDA allocator uninitialised on NPU host -> writes 0 into the results json"),
  ])

# ----------------------------------------------------------------------------------------- MC dropout / ensembles
E("mcdropout_uci", "mc_dropout/uci_experiment.py", "explicit_replacement",
  "yaringal/DropoutUncertaintyExps ported to PyTorch (JavierAntoran-style MC_Dropout_Wrapper)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "False on NPU host -> silently CPU"),
      C("dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor", "torch_cuda_api", "replace", True,
        "dtype = torch.npu.FloatTensor if use_cuda else torch.FloatTensor",
        "legacy CUDA tensor type used for the test tensors; raises once use_cuda is True on NPU"),
      C("if not v.is_cuda and cuda:", "torch_cuda_api", "replace", False, "if not v.is_npu and cuda:",
        "is_cuda is False for NPU tensors, which only causes a redundant .npu() no-op"),
      C("v = v.cuda()", "tensor_to_device", "replace", True, "v = v.npu()", "raises on NPU host"),
      C("self.network.cuda()", "tensor_to_device", "replace", True, "self.network.npu()", "raises on NPU host"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "redundant with torch.manual_seed"),
      C('print("Using GPU:", torch.cuda.get_device_name(torch.cuda.current_device()))', "torch_cuda_api", "replace",
        True, 'print("Using NPU:", torch.npu.get_device_name(torch.npu.current_device()))',
        "executed once use_cuda is ported; torch.cuda.get_device_name raises on NPU host"),
  ])

E("ensemble_train", "deep_ensembles/train_ensemble.py", "explicit_replacement",
  "Deep Ensembles (Lakshminarayanan et al.) PyTorch re-implementation on kuangliu/pytorch-cifar main.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
        "ignored on NPU: train_ensemble_parallel.sh gives every member its own --gpu, without this all members "
        "land on npu:0"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"', "silently CPU otherwise"),
      C("trainset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, pin_memory=True)",
        "pin_memory", "replace", False,
        "trainset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, pin_memory=True, pin_memory_device='npu')",
        PIN_NOTE),
  ])

E("ensemble_eval", "deep_ensembles/evaluate_ensemble.py", "explicit_replacement",
  "Deep Ensembles evaluation (entropy / BALD OOD, ECE, Brier) in the style of uncertainty-baselines ports",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises on NPU host"),
      C('ckpt = torch.load(path, map_location="cuda:%d" % args.gpu)', "device_type", "replace", True,
        'ckpt = torch.load(path, map_location="npu:%d" % args.gpu)', "cuda map_location raises on NPU host"),
      C("return net.cuda().eval()", "tensor_to_device", "replace", True, "return net.npu().eval()",
        "raises on NPU host"),
      C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
        "raises on NPU host"),
      C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
        'print("evaluating %d members on NPU %d (%s)" % (len(paths), args.gpu, torch.npu.get_device_name(args.gpu)))',
        "raises on NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op; members are freed one by one to bound memory"),
  ])

E("ensemble_ddp", "deep_ensembles/train_ddp.py", "device_branch_or_abstraction",
  "torchrun/SLURM DDP training script (DeiT/timm init_distributed_mode idiom) for a BatchEnsemble WRN",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU_GUARDED, "entry script"),
      C('p.add_argument("--dist-backend", default="nccl")', "dist_backend", "replace", True,
        'p.add_argument("--dist-backend", default="hccl" if torch_npu is not None else "nccl")',
        "NCCL backend is not available on an NPU host; HCCL is"),
      C("args.local_rank = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.local_rank = args.rank % (torch.npu.device_count() if torch_npu is not None else torch.cuda.device_count())",
        "device_count() is 0 on NPU host -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "add_branch", True,
        "torch.npu.set_device(args.local_rank) if torch_npu is not None else torch.cuda.set_device(args.local_rank)",
        "raises on NPU host"),
      C("num_workers=8, pin_memory=True, drop_last=True, persistent_workers=True,", "pin_memory", "replace", False,
        'num_workers=8, pin_memory=True, pin_memory_device="npu" if torch_npu is not None else "", drop_last=True, persistent_workers=True,',
        PIN_NOTE),
      C("test_set, batch_size=256, sampler=test_sampler, num_workers=4, pin_memory=True,", "pin_memory", "replace",
        False, "test_set, batch_size=256, sampler=test_sampler, num_workers=4, pin_memory=True, pin_memory_device=\"npu\" if torch_npu is not None else \"\",",
        PIN_NOTE),
      C('dtype=torch.float32, device="cuda")', "device_type", "replace", True,
        "t = torch.tensor([correct, total, loss_sum], dtype=torch.float32, device=device)",
        "hard-coded cuda string; the all_reduce buffer must live on the HCCL device"),
      C("x = x.cuda(args.local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
        "x = x.to(device, non_blocking=True)", "raises on NPU host"),
      C("y = y.cuda(args.local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
        "y = y.to(device, non_blocking=True)", "raises on NPU host"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.autocast(device_type=device.type, enabled=args.amp):",
        "CUDA autocast is disabled (warning) without CUDA -> --amp silently runs fp32"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "add_branch", True,
        'device = torch.device("npu" if torch_npu is not None else "cuda", args.local_rank)',
        "model.to(device) raises on NPU host"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.amp.GradScaler(device.type, enabled=args.amp)",
        "CUDA GradScaler disables itself without CUDA -> no loss scaling under NPU fp16 autocast"),
      C('if args.dist_backend == "nccl":', "dist_backend", "replace", False,
        'if args.dist_backend in ("nccl", "hccl"):',
        "backend-string comparison is not rewritten by any tool; unchanged it just skips the final sync"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
        "torch.npu.synchronize() if device.type == 'npu' else torch.cuda.synchronize()",
        "only reached once the comparison above includes hccl"),
  ])

# ----------------------------------------------------------------------------------------- DUQ
E("duq_train", "train_duq_cifar.py", "explicit_replacement",
  "y0ast/deterministic-uncertainty-quantification train_duq_cifar.py (ignite)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "raises on NPU host"),
      C("x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()",
        "training step"),
      C("x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "x, y = x.npu(non_blocking=True), y.npu(non_blocking=True)", "evaluation step"),
      C('kwargs = {"num_workers": 4, "pin_memory": True}', "pin_memory", "replace", False,
        'kwargs = {"num_workers": 4, "pin_memory": True, "pin_memory_device": "npu"}', PIN_NOTE),
  ])

E("duq_eval_ood", "utils/evaluate_ood.py", "explicit_replacement",
  "y0ast/deterministic-uncertainty-quantification utils/evaluate_ood.py",
  [
      C("data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", "raises on NPU host"),
      C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()",
        "raises on NPU host"),
      C("data, target = data.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "data, target = data.npu(), target.npu()", "ensemble baseline scores"),
  ])

# ----------------------------------------------------------------------------------------- SNGP
E("sngp_layers", "sngp/layers.py", "explicit_replacement",
  "google/uncertainty-baselines SNGP (edward2 RandomFeatureGaussianProcess) PyTorch port",
  [
      C("from torch.cuda.amp import custom_fwd", "amp", "replace", False, "from torch_npu.npu.amp import custom_fwd",
        "unconfirmed: the CUDA custom_fwd checks only CUDA autocast, so under NPU autocast cast_inputs=fp32 "
        "would silently not apply and the precision-matrix maths would run in fp16"),
      C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
        "@torch_npu.npu.amp.custom_fwd(cast_inputs=torch.float32)",
        "same as the import above (support list maps torch.cuda.amp.custom_fwd -> torch_npu.npu.amp.custom_fwd); "
        "needs import torch_npu in this module"),
  ])

E("sngp_train", "sngp/train_sngp.py", "device_branch_or_abstraction",
  "uncertainty-baselines cifar/sngp.py recipe re-written in nanoGPT-style PyTorch (device_type / ctx / fused AdamW)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU_GUARDED, "entry script"),
      C('parser.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")', "device_type", "replace",
        True, 'parser.add_argument("--device", default="npu" if torch_npu is not None else "cuda", help="npu | cuda | cuda:N | cpu")',
        "default device string; torch.device('cuda') then model.to() raises on NPU host"),
      C('device_type = "cuda" if "cuda" in args.device else "cpu"', "device_type", "add_branch", True,
        'device_type = "npu" if "npu" in args.device else ("cuda" if "cuda" in args.device else "cpu")',
        "with --device npu this yields 'cpu' -> autocast context silently disabled, no pinning, no fused AdamW"),
      C('if args.dtype == "bfloat16" and device_type == "cuda" and not torch.cuda.is_bf16_supported():',
        "device_capability_check", "add_branch", False,
        'if args.dtype == "bfloat16" and device_type in ("cuda", "npu") and not getattr(torch, device_type).is_bf16_supported():',
        "unchanged the check is simply skipped on NPU (A2 supports bf16)"),
      C('loader_kw = dict(num_workers=8, pin_memory=(device_type == "cuda"))', "pin_memory", "replace", False,
        'loader_kw = dict(num_workers=8, pin_memory=(device_type in ("cuda", "npu")), pin_memory_device=device_type if device_type != "cpu" else "")',
        "pinning silently off on NPU (perf only)"),
      C('model.backbone = torch.compile(model.backbone, mode="max-autotune")', "compile_mode", "replace", False,
        "model.backbone = torch.compile(model.backbone)",
        "unconfirmed: max-autotune relies on Triton autotuning; torch_npu Inductor support depends on version"),
      C('use_fused = fused_available and device_type == "cuda"', "fused_optimizer", "replace", False,
        'use_fused = fused_available and device_type in ("cuda", "npu")',
        "perf only: fused AdamW silently off on NPU; _fused_adamw_ has an NPU kernel in the op lists"),
      C('scaler = torch.cuda.amp.GradScaler(enabled=(args.dtype == "float16"))', "amp", "replace", True,
        'scaler = torch.amp.GradScaler(device_type, enabled=(args.dtype == "float16"))',
        "CUDA GradScaler disables itself on NPU host -> fp16 training without loss scaling"),
  ])

# ----------------------------------------------------------------------------------------- DDU
E("ddu_train", "train.py", "explicit_replacement",
  "omegafragger/DDU train.py (+ torch.cuda.amp for the WRN-28-10 runs)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=scaler is not None):", "CUDA autocast is a no-op on NPU tensors"),
      C("cuda = torch.cuda.is_available() and args.gpu", "torch_cuda_api", "replace", True,
        "cuda = torch.npu.is_available() and args.gpu", "drives device and AMP; False on NPU host"),
      C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if cuda else "cpu")', "batches are moved with this device"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "raises on NPU host (args.gpu is a flag)"),
      C("net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))", "unsupported_op_workaround",
        "removal", True, None,
        "nn.DataParallel unsupported on NPU; with torch_npu present and device_ids=range(0) it fails in __init__"),
      C("scaler = torch.cuda.amp.GradScaler() if (cuda and args.amp) else None", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler() if (cuda and args.amp) else None",
        "CUDA GradScaler disables itself on NPU host"),
  ])

E("ddu_gmm", "utils/gmm_utils.py", "explicit_replacement",
  "omegafragger/DDU utils/gmm_utils.py (device-agnostic; deliberately unlabelled)", [])

E("ddu_evaluate", "evaluate.py", "explicit_replacement",
  "omegafragger/DDU evaluate.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "cuda = torch.npu.is_available()",
        "False on NPU host -> everything silently on CPU"),
      C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if cuda else "cpu")', "passed to every metric helper"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "raises on NPU host"),
      C("net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))", "unsupported_op_workaround",
        "removal", True, None, "nn.DataParallel unsupported on NPU (fails in __init__ with empty device_ids)"),
      C("net.load_state_dict(torch.load(str(saved_model_name)))", "device_type", "replace", False,
        'net.load_state_dict(torch.load(str(saved_model_name), map_location=device))', LOAD_NOTE),
      C("dtype=torch.double,", "unsupported_op_workaround", "replace", False,
        "dtype=torch.float32,",
        "unconfirmed: GMM fit on fp64 embeddings on the NPU (x.t().mm(x), MultivariateNormal cholesky); support "
        "list gives matmul fp16/fp32 and cholesky fp32 only; alternative: storage_device='cpu'"),
  ])

# ----------------------------------------------------------------------------------------- EDL
E("edl_losses", "edl/losses.py", "explicit_replacement",
  "dougbrion/pytorch-classification-uncertainty losses.py + helpers.py, plus Amini deep evidential regression",
  [
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_npu = torch.npu.is_available()", "get_device() is the single device chooser of the EDL code"),
      C('device = torch.device("cuda:0" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if use_npu else "cpu")', "silently CPU otherwise"),
  ])

E("edl_main", "main.py", "explicit_replacement",
  "dougbrion/pytorch-classification-uncertainty main.py + train.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "log line only; unchanged it is skipped"),
      C('print("Training on " + torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", False,
        'print("Training on " + torch.npu.get_device_name(0))', "log line behind the guard above"),
      C('checkpoint = torch.load("./results/model_uncertainty_digamma.pt")', "device_type", "replace", False,
        'checkpoint = torch.load("./results/model_uncertainty_digamma.pt", map_location=device)', LOAD_NOTE),
      C('checkpoint = torch.load("./results/model_uncertainty_log.pt")', "device_type", "replace", False,
        'checkpoint = torch.load("./results/model_uncertainty_log.pt", map_location=device)', LOAD_NOTE),
      C('checkpoint = torch.load("./results/model_uncertainty_mse.pt")', "device_type", "replace", False,
        'checkpoint = torch.load("./results/model_uncertainty_mse.pt", map_location=device)', LOAD_NOTE),
      C('checkpoint = torch.load("./results/model.pt")', "device_type", "replace", False,
        'checkpoint = torch.load("./results/model.pt", map_location=device)', LOAD_NOTE),
  ])

# ----------------------------------------------------------------------------------------- conformal / calibration
E("torchcp_imagenet", "examples/imagenet_conformal.py", "explicit_replacement",
  "ml-stat-Sustech/TorchCP examples/imagenet_example.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silently CPU otherwise"),
      C("cal_loader = DataLoader(cal_dataset,", "pin_memory", "replace", False,
        "cal_loader = DataLoader(cal_dataset, batch_size=args.batch_size, shuffle=False, num_workers=8, pin_memory=True, pin_memory_device='npu')",
        PIN_NOTE),
      C("test_loader = DataLoader(test_dataset,", "pin_memory", "replace", False,
        "test_loader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=False, num_workers=8, pin_memory=True, pin_memory_device='npu')",
        PIN_NOTE),
      C('alpha=args.alpha, device="cuda"', "device_type", "replace", True,
        'score_function=score_function, model=model, temperature=args.temperature, alpha=args.alpha, device=device',
        "torchcp moves logits/labels to this device; 'cuda' raises on NPU host"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises on NPU host"),
      C("all_logits = torch.cat([cal_logits, test_logits])[perm].cuda()", "tensor_to_device", "replace", True,
        "all_logits = torch.cat([cal_logits, test_logits])[perm].to(device)", "raises on NPU host"),
      C("all_labels = torch.cat([cal_labels, test_labels])[perm].cuda()", "tensor_to_device", "replace", True,
        "all_labels = torch.cat([cal_labels, test_labels])[perm].to(device)", "raises on NPU host"),
  ])

E("raps_conformal", "conformal.py", "explicit_replacement",
  "aangelopoulos/conformal_classification conformal.py (RAPS)",
  [
      C("logits = cmodel.model(x.cuda()).detach().cpu().numpy()", "tensor_to_device", "replace", True,
        "logits = cmodel.model(x.npu()).detach().cpu().numpy()", "raises on NPU host"),
      C("logits_loader = torch.utils.data.DataLoader(logits_dataset", "pin_memory", "replace", False,
        "logits_loader = torch.utils.data.DataLoader(logits_dataset, batch_size = calib_loader.batch_size, shuffle=False, pin_memory=True, pin_memory_device='npu')",
        PIN_NOTE + "; the other pin_memory loaders in this file feed numpy on the CPU and are left alone"),
      C("nll_criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "nll_criterion = nn.CrossEntropyLoss().npu()",
        "parameter-less module: .cuda() touches no tensor and does not raise; edited for consistency only"),
      C("T = nn.Parameter(torch.Tensor([1.3]).cuda())", "tensor_to_device", "replace", True,
        "T = nn.Parameter(torch.Tensor([1.3]).npu())", "raises on NPU host"),
      C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "raises on NPU host"),
      C("loss = nll_criterion(out, targets.long().cuda())", "tensor_to_device", "replace", True,
        "loss = nll_criterion(out, targets.long().npu())", "raises on NPU host"),
  ])

E("temperature_scaling", "temperature_scaling.py", "explicit_replacement",
  "gpleiss/temperature_scaling temperature_scaling.py",
  [
      C("=self.cuda()", "tensor_to_device", "replace", True, "self.npu()", "raises on NPU host"),
      C("nll_criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "nll_criterion = nn.CrossEntropyLoss().npu()", "parameter-less module: .cuda() is a no-op"),
      C("ece_criterion = _ECELoss().cuda()", "tensor_to_device", "replace", False, "ece_criterion = _ECELoss().npu()",
        "_ECELoss keeps its bins as plain attributes, not buffers: .cuda() is a no-op"),
      C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "raises on NPU host"),
      C("logits = torch.cat(logits_list).cuda()", "tensor_to_device", "replace", True,
        "logits = torch.cat(logits_list).npu()", "raises on NPU host"),
      C("labels = torch.cat(labels_list).cuda()", "tensor_to_device", "replace", True,
        "labels = torch.cat(labels_list).npu()", "raises on NPU host"),
  ])

E("bench_latency", "benchmarks/latency_memory.py", "device_branch_or_abstraction",
  "latency / memory benchmark of MC dropout, ensembles, SWAG, DUQ, SNGP (CUDA events + NVTX + pynvml)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU_GUARDED, "entry script"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if torch_npu is not None and torch.npu.is_available(): return torch.device("npu")',
        "pick_device() returns CPU on an NPU host and main() then exits"),
      C('if device.type == "cuda":', "device_type", "add_branch", False,
        'if device.type == "npu":  # name / total_memory only (get_device_properties lacks major/minor on NPU)',
        "device description only; unchanged it prints just the device string"),
      C("return pynvml.nvmlDeviceGetUtilizationRates(_NVML_HANDLE).gpu", "torch_cuda_api", "replace", False,
        "return torch.npu.utilization()",
        "NVML init fails on NPU host and is caught; utilisation column silently empty"),
      C('self.models = [torch.compile(m, mode="reduce-overhead") for m in self.models]', "compile_mode", "replace",
        False, 'self.models = [torch.compile(m, backend="npugraphs") for m in self.models]',
        "support list: backend npugraphs is the NPU counterpart of CUDA graphs ('reduce-overhead'); unconfirmed "
        "that reduce-overhead itself fails"),
      C("self.models = [m.to(memory_format=torch.channels_last) for m in self.models]", "unsupported_op_workaround",
        "replace", False, "pass  # channels_last is not supported on NPU; keep contiguous",
        "msFmkTransplt notes channel_last unsupported; only behind --channels_last"),
      C("x = x.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
        "x = x.contiguous()", "same as above"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "getattr(torch, device.type).synchronize()", "raises on NPU host"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "getattr(torch, device.type).reset_peak_memory_stats()", "raises on NPU host"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = getattr(torch, device.type).Event(enable_timing=True)", "CUDA events cannot be created"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = getattr(torch, device.type).Event(enable_timing=True)", "CUDA events cannot be created"),
      C('torch.cuda.nvtx.range_push(f"{runner.method}_bs{batch_size}")', "torch_cuda_api", "replace", True,
        'rng = torch_npu.npu.mstx.range_start(f"{runner.method}_bs{batch_size}")',
        "torch.cuda.nvtx is not redirected on NPU (no NVTX); mstx is the Ascend counterpart"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "see range_push"),
      C("peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", True,
        "peak_mb = getattr(torch, device.type).max_memory_allocated() / 2 ** 20", "would report 0 MB"),
      C('if device.type != "cuda":', "device_type", "replace", True, 'if device.type not in ("cuda", "npu"):',
        "exits on an NPU device"),
      C("if args.fp16 and torch.cuda.get_device_capability(device)[0] < 7:", "device_capability_check", "replace",
        True, 'if args.fp16 and device.type == "cuda" and torch.cuda.get_device_capability(device)[0] < 7:',
        "raises for an npu device; the Volta check is meaningless on Ascend"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "getattr(torch, device.type).empty_cache()",
        "silent no-op on NPU host"),
  ])

# ----------------------------------------------------------------------------------------- packaging / launchers
E("reqs", "requirements.txt", "explicit_replacement",
  "requirements.txt of laplace-redux / SWAG / torchcp style research repos pinned to CUDA 11.8 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on the CPU torch build (x86: whl/cpu index; aarch64: plain PyPI)"),
      C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu118 build is not the supported base; torch_npu 2.1.0.postN pairs with torch 2.1.0 exactly"),
      C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0; +cu118 wheel not on the CPU index"),
      C("=pyyaml", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "add the torch-npu pin to the core stack (torch 2.1.0 / CANN 8.1.RC1 row of the matrix)"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU backend; installs but is useless (benchmark uses torch.npu.utilization instead)"),
      C("pykeops==2.1.2", "custom_cuda_extension", "removal", False, None,
        "KeOps JIT-compiles CUDA kernels with nvcc; no Ascend backend (only optional GP baselines use it)"),
  ])

E("env_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml of DDU / DUQ style repos (pytorch + nvidia channels)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "NVIDIA channel only serves the CUDA runtime packages removed below"),
      C("=- pytorch=2.0.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
        "CPU build matching a supported torch_npu (2.0.1 pairs only with an EOL torch_npu/CANN 7.0)"),
      C("=- torchvision=0.15.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0=*cpu*",
        "must follow the torch version"),
      C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "pulls the CUDA build of pytorch and CUDA runtime; not available / wrong on Ascend hosts"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
        "torch_npu is only distributed via pip"),
  ])

E("sh_swag", "scripts/run_swag_cifar.sh", "explicit_replacement",
  "swa_gaussian experiment launcher (CUDA_VISIBLE_DEVICES-per-run loops)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH...) must be sourced before torch_npu is imported"),
      C("CUDA_VISIBLE_DEVICES=0 python experiments/train/run_swag.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python experiments/train/run_swag.py --data_path=$DATA_PATH --epochs=1 \\",
        "smoke test on device 0: ignored on NPU, but npu:0 is used anyway"),
      C("CUDA_VISIBLE_DEVICES=$GPU python experiments/train/run_swag.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python experiments/train/run_swag.py \\",
        "device selection via $GPU is silently ignored on NPU -> every run on npu:0"),
      C("CUDA_VISIBLE_DEVICES=$GPU python experiments/uncertainty/uncertainty.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=$GPU python experiments/uncertainty/uncertainty.py \\",
        "same as above"),
  ])

E("sh_ens_parallel", "scripts/train_ensemble_parallel.sh", "explicit_replacement",
  "launcher that trains deep-ensemble members in parallel, one per GPU",
  [
      C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
      C("NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
        'NUM_GPUS=$(npu-smi info -l | grep -c "NPU ID")',
        "nvidia-smi missing -> pipefail aborts the script (or NUM_GPUS=0 and modulo by zero)"),
      C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "CUDA allocator setting is ignored on NPU (memory/fragmentation only)"),
      C("nvidia-smi --query-gpu=index,memory.used --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info", "command not found under set -e aborts before the evaluation step"),
      C("CUDA_VISIBLE_DEVICES=0 python deep_ensembles/evaluate_ensemble.py", "env_var", "replace", False,
        'ASCEND_RT_VISIBLE_DEVICES=0 python deep_ensembles/evaluate_ensemble.py --ckpt-dir "$OUT" --dataset "$DATASET" \\',
        "ignored on NPU, but evaluate_ensemble.py uses device 0 anyway"),
  ])

E("sh_ddp_slurm", "scripts/launch_ddp_multinode.sh", "explicit_replacement",
  "SLURM + torchrun multi-node DDP launcher with NCCL tuning",
  [
      C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
        "unconfirmed: gres name is cluster-specific; no Ascend Slurm integration is documented in knowledge"),
      C("module load cuda/11.8 cudnn/8.9 nccl/2.18", "import_torch_npu", "replace", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CUDA/cuDNN/NCCL modules replaced by the CANN environment torch_npu needs"),
      C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
        "NCCL_* ignored by HCCL; INFO plogs via ASCEND_GLOBAL_LOG_LEVEL (debug only)"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL picks the root-info NIC itself (HCCL_SOCKET_IFNAME / HCCL_IF_IP to pin it); needed only if its "
        "choice cannot reach the master"),
      C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
        "no HCCL counterpart: NPU-to-NPU traffic uses the NPUs' own RoCE ports, not host HCAs"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable; default already 1"),
      C("srun --kill-on-bad-exit=1 bash -c 'nvidia-smi -L; torchrun \\", "torch_cuda_api", "replace", False,
        "srun --kill-on-bad-exit=1 bash -c 'npu-smi info -l; torchrun \\",
        "logging only: the failing nvidia-smi is followed by ';' so torchrun still starts"),
      C("deep_ensembles/train_ddp.py --dist-backend nccl", "dist_backend", "replace", True,
        "    deep_ensembles/train_ddp.py --dist-backend hccl '\"$*\"",
        "explicit nccl backend overrides the script default; NCCL unavailable on NPU"),
  ])

E("ddu_yaml", "configs/wrn_cifar10_ddu.yaml", "explicit_replacement",
  "DDU experiment config (YAML turned into CLI flags)",
  [
      C("=device: cuda", "device_type", "replace", True, "device: npu",
        "becomes torch.device(cfg.device) in the runner"),
      C("=gmm_dtype: float64", "unsupported_op_workaround", "replace", False, "gmm_dtype: float32",
        "unconfirmed: fp64 GMM fit on NPU (see ddu_evaluate dtype=torch.double)"),
      C("=storage_device: cuda", "device_type", "replace", True, "storage_device: npu",
        "embeddings are allocated on this device"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "research-repo Dockerfile on nvidia/cuda base with CUDA torch wheels",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image has no CANN toolkit; torch_npu needs CANN inside the image"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "NVIDIA container runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES / --device mounts"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime variable, ignored"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only affects nvcc builds of extensions"),
      C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "torch_cuda_api", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels; NPU needs CPU torch + matching torch-npu"),
      C("RUN python -c \"import pykeops; pykeops.clean_pykeops(); print('keops ok')\" || true",
        "custom_cuda_extension", "removal", False, None,
        "KeOps warm-up needs nvcc; harmless (|| true) but useless on Ascend"),
  ])
