# Labels for probe111: hyperparameter search / AutoML / experiment orchestration (CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md for the policy.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any torch.npu.* use; optional only with torch_npu >= 2.5.1 "
               "device-backend autoload, and this stack pins torch 2.1")

# ---------------------------------------------------------------------------
# NNI
# ---------------------------------------------------------------------------
E("nni_mnist_trial", "examples/trials/mnist-pytorch/mnist.py", "explicit_replacement",
  "microsoft/nni examples/trials/mnist-pytorch/mnist.py (trial reporting to the tuner)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(0)",
      "reached once use_cuda is ported to the NPU check; torch.cuda.get_device_name raises without CUDA"),
    C("use_cuda = not args['no_cuda'] and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args['no_cuda'] and torch.npu.is_available()",
      "torch.cuda.is_available() is False on an Ascend host, so every trial silently trains on CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "'cuda' device string cannot be used on NPU"),
])

E("nni_mnist_config", "examples/trials/mnist-pytorch/config.yml", "explicit_replacement",
  "microsoft/nni examples/trials/mnist-pytorch/config.yml (v2 experiment config, local training service)", [
    C("trialCommand: python3 mnist.py", "env_var", "replace", False,
      "trialCommand: ASCEND_RT_VISIBLE_DEVICES=$((NNI_TRIAL_SEQ_ID % 4)) python3 mnist.py --data_dir /mnt/datasets/mnist",
      "with trialGpuNumber 0 NNI no longer pins trials to cards, so all concurrent trials land on NPU 0; spread them "
      "by hand. Unconfirmed that NNI_TRIAL_SEQ_ID is visible to the trial shell; only a placement/perf issue"),
    C("trialGpuNumber: 1", "distributed_framework", "replace", True, "trialGpuNumber: 0",
      "NNI's local GPU scheduler works from nvidia-smi metrics; with no NVIDIA GPU the trials wait forever "
      "(NNI discussion #4888: 'gpu_metrics file does not exist', trials always waiting)"),
])

E("nni_cifar10_trial", "examples/trials/cifar10-pytorch/main.py", "explicit_replacement",
  "microsoft/nni examples/trials/cifar10-pytorch/main.py (kuangliu pytorch-cifar tuned by NNI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "module-level device pick; falls back to CPU on an Ascend host"),
    C("net = torch.nn.DataParallel(net)", "unsupported_op_workaround", "removal", False, None,
      "unreachable once device is 'npu' (the guard still compares with 'cuda'), but nn.DataParallel is unsupported "
      "on NPU (torch_api_npu_support: ✘); drop it or use DDP for multi-card trials"),
    C("inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)",
      "test() hard-codes .cuda() while train() uses .to(device)"),
    C("checkpoint = torch.load(path, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(path, map_location=device)",
      "mapping storages to cuda:0 fails on a host without CUDA"),
])

E("nni_darts_trainer", "nni/nas/oneshot/pytorch/darts.py", "device_branch_or_abstraction",
  "microsoft/nni nni/retiarii/oneshot/pytorch/darts.py (DartsTrainer) plus a latency-aware variant", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    torch_npu = None", IMPORT_NOTE),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device",
      "device_type", "add_branch", True,
      "self.device = device or torch.device('npu' if hasattr(torch, 'npu') and torch.npu.is_available() "
      "else 'cuda' if torch.cuda.is_available() else 'cpu')",
      "default device of the trainer falls back to CPU on NPU; add an npu branch"),
    C("peak = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3",
      "only feeds a log line; torch.cuda.max_memory_allocated silently returns 0 when CUDA is not initialised"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device (lazy CUDA init) and raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "device is an npu device here; the CUDA call fails"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises on an NPU host"),
])

E("nni_spos_supernet", "examples/nas/oneshot/spos/supernet.py", "transfer_to_npu",
  "microsoft/nni examples/nas/oneshot/spos/supernet.py (SPOS supernet training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu chosen because NNI's SPOSSupernetTrainer itself asserts torch.cuda.is_available() and the "
      "script relies on model.cuda(); with it, .cuda()/torch.cuda.* below run on the NPU unchanged"),
    C("if torch.cuda.device_count() > 1:  # exclude last gpu", "torch_cuda_api", "removal", True, None,
      "under transfer_to_npu device_count() returns the NPU count, so the DataParallel branch becomes live"),
    C("model = nn.DataParallel(model, device_ids=list(range(0, torch.cuda.device_count() - 1)))",
      "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on NPU (support list ✘, msFmkTransplt limitation); the last-card reservation "
      "was only for DALI GPU decoding, which the port moves to CPU"),
])

E("nni_spos_dataloader", "examples/nas/oneshot/spos/dataloader.py", "transfer_to_npu",
  "microsoft/nni examples/nas/oneshot/spos/dataloader.py (NVIDIA DALI ImageNet pipelines)", [
    C("super(HybridTrainPipe, self).__init__(", "custom_cuda_extension", "replace", True,
      "super(HybridTrainPipe, self).__init__(batch_size, num_threads, device_id, seed=seed)",
      "device_id becomes None for a CPU-only DALI pipeline, so seed + device_id would raise"),
    C('=self.decode = ops.ImageDecoder(device="mixed", output_type=color_space_type)', "device_type", "replace", True,
      'self.decode = ops.ImageDecoder(device="cpu", output_type=color_space_type)',
      "'mixed' decodes with nvJPEG on an NVIDIA GPU"),
    C('self.res = ops.RandomResizedCrop(device="gpu", size=crop,', "device_type", "replace", True,
      'self.res = ops.RandomResizedCrop(device="cpu", size=crop,', "DALI GPU operators need an NVIDIA GPU"),
    C('self.twist = ops.ColorTwist(device="gpu")', "device_type", "replace", True,
      'self.twist = ops.ColorTwist(device="cpu")', "DALI GPU operators need an NVIDIA GPU"),
    C('=self.cmnp = ops.CropMirrorNormalize(device="gpu",', "device_type", "replace", True,
      'self.cmnp = ops.CropMirrorNormalize(device="cpu",', "DALI GPU operators need an NVIDIA GPU"),
    C("super(HybridValPipe, self).__init__(", "custom_cuda_extension", "replace", True,
      "super(HybridValPipe, self).__init__(batch_size, num_threads, device_id, seed=seed)",
      "device_id is None for a CPU-only pipeline"),
    C("output_type=color_space_type)  # nvJPEG", "device_type", "replace", True,
      'self.decode = ops.ImageDecoder(device="cpu", output_type=color_space_type)', "nvJPEG/mixed decoder needs CUDA"),
    C('self.res = ops.Resize(device="gpu", resize_shorter=size,', "device_type", "replace", True,
      'self.res = ops.Resize(device="cpu", resize_shorter=size,', "DALI GPU operators need an NVIDIA GPU"),
    C('ops.CropMirrorNormalize(device="gpu", output_dtype=types.FLOAT', "device_type", "replace", True,
      'self.cmnp = ops.CropMirrorNormalize(device="cpu", output_dtype=types.FLOAT, output_layout=types.NCHW,',
      "DALI GPU operators need an NVIDIA GPU"),
    C('return data[0]["data"], data[0]["label"].view(-1).long().cuda(non_blocking=True)', "tensor_to_device",
      "replace", True,
      'return data[0]["data"].cuda(non_blocking=True), data[0]["label"].view(-1).long().cuda(non_blocking=True)',
      "images now come out of a CPU pipeline and must be moved too (.cuda() is redirected to the NPU by "
      "transfer_to_npu)"),
    C("device_id = torch.cuda.device_count() - 1  # use last gpu", "device_type", "replace", True,
      "device_id = types.CPU_ONLY_DEVICE_ID",
      "DALI cannot use an Ascend device id; run the pipeline CPU-only (or replace it with torchvision ImageFolder)"),
])

E("darts_train_search", "cnn/train_search.py", "explicit_replacement",
  "quark0/darts cnn/train_search.py (DARTS search, also vendored in NNI examples)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "the script exits with 'no gpu device available' on an Ascend host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "CUDA set_device fails without CUDA"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "queued lazily and never executed without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", True, "criterion = criterion.npu()", ".cuda()"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda()"),
    C("input = Variable(input, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "input = Variable(input, requires_grad=False).npu()", ".cuda()"),
    C("target = Variable(target, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = Variable(target, requires_grad=False).npu(non_blocking=True)", ".cuda()"),
    C("input_search = Variable(input_search, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "input_search = Variable(input_search, requires_grad=False).npu()", ".cuda()"),
    C("target_search = Variable(target_search, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "target_search = Variable(target_search, requires_grad=False).npu(non_blocking=True)",
      ".cuda()"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", ".cuda() in infer()"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() in infer()"),
])

E("darts_architect", "cnn/architect.py", "explicit_replacement",
  "quark0/darts cnn/architect.py (second-order architecture step)", [
    C("return model_new.cuda()", "tensor_to_device", "replace", True, "return model_new.npu()",
      "the unrolled copy must live on the same device as the search network (torch_npu is imported by "
      "train_search.py, so no import is needed here)"),
])

# ---------------------------------------------------------------------------
# Optuna
# ---------------------------------------------------------------------------
E("optuna_pytorch_simple", "examples/pytorch/pytorch_simple.py", "explicit_replacement",
  "optuna/optuna-examples pytorch/pytorch_simple.py (pruned MLP study, RDB storage shared by GPU workers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda")', "device_type", "replace", True, 'DEVICE = torch.device("npu")',
      "hard-coded CUDA device"),
    C('trial.set_user_attr("max_mem_mb", torch.cuda.max_memory_allocated(DEVICE) / 2 ** 20)', "torch_cuda_api",
      "replace", False, 'trial.set_user_attr("max_mem_mb", torch.npu.max_memory_allocated(DEVICE) / 2 ** 20)',
      "metadata only; returns 0 silently while CUDA is uninitialised"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is then only released when the worker exits"),
    C("torch.cuda.reset_peak_memory_stats(DEVICE)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(DEVICE)", "CUDA memory API given an npu device raises"),
])

E("optuna_multi_gpu", "examples/multi_gpu/run_study_per_gpu.py", "explicit_replacement",
  "Optuna FAQ pattern: one worker per GPU (CUDA_VISIBLE_DEVICES) or a device queue with n_jobs", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
      "otherwise every worker sees all NPUs and all of them train on npu:0. Unconfirmed whether setting it after "
      "`import torch_npu` (spawned child re-imports the module) is early enough; passing it via the Process env is safer"),
    C('device = torch.device("cuda:0")  # the only visible card', "device_type", "replace", True,
      'device = torch.device("npu:0")  # the only visible card', "CUDA device string"),
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{gpu_id}")', "CUDA device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "CUDA set_device with an npu device fails"),
    C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "return list(range(torch.npu.device_count()))",
      "returns 0 on an Ascend host and main() refuses to run"),
])

E("optuna_ddp", "examples/pytorch/pytorch_distributed_simple.py", "explicit_replacement",
  "optuna/optuna-examples pytorch/pytorch_distributed_simple.py (TorchDistributedTrial over mpirun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('buf_device = DEVICE if dist.get_backend() == "nccl" else torch.device("cpu")', "dist_backend", "replace", True,
      'buf_device = DEVICE if dist.get_backend() in ("nccl", "hccl") else torch.device("cpu")',
      "backend-string comparisons are not rewritten even by transfer_to_npu (mstt README); with hccl the CPU "
      "tensor branch is taken and HCCL cannot broadcast a host tensor"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL_* is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1 (MindCluster doc)"),
    C('DEVICE = torch.device("cuda:{}".format(local_rank))', "device_type", "replace", True,
      'DEVICE = torch.device("npu:{}".format(local_rank))', "CUDA device string"),
    C("torch.cuda.set_device(DEVICE)", "torch_cuda_api", "replace", True, "torch.npu.set_device(DEVICE)",
      "CUDA set_device"),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True, 'dist.init_process_group("hccl")',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
])

E("optuna_lightning", "examples/pytorch/pytorch_lightning_ddp.py", "device_branch_or_abstraction",
  "optuna/optuna-examples pytorch/pytorch_lightning_ddp.py (PyTorchLightningPruningCallback, journal storage)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "metrics-only guard: silently skipped on NPU (peak memory is just not logged)"),
    C("torch.cuda.reset_peak_memory_stats(pl_module.device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(pl_module.device)",
      "dead on NPU while its guard is unported; must change together with the guard"),
    C("if torch.cuda.is_available() and trainer.is_global_zero:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and trainer.is_global_zero:", "metrics-only guard"),
    C("peak = torch.cuda.max_memory_allocated(pl_module.device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(pl_module.device) / 2 ** 20", "metrics only; moves with its guard"),
    C('accelerator="gpu",', "device_type", "replace", True, "accelerator=NPUAccelerator(),",
      "Lightning has no built-in Ascend accelerator (Lightning-AI PR #19308 closed unmerged, issue #19498), so "
      "'gpu' raises on a host without CUDA; the project has to register its own Accelerator subclass "
      "(unconfirmed API details) or drop Lightning for a plain loop"),
    C('precision="16-mixed" if args.amp else "32-true",', "amp", "replace", False,
      'precision="bf16-mixed" if args.amp else "32-true",',
      "unconfirmed: Lightning builds its MixedPrecision plugin for 'cuda' only when the accelerator is the CUDA "
      "one, so fp16 AMP with a custom NPU accelerator needs an explicit MixedPrecision(device='npu') plugin"),
    C('strategy="ddp_spawn" if args.gpus > 1 else "auto",', "dist_backend", "replace", True,
      'strategy=DDPStrategy(start_method="spawn", process_group_backend="hccl") if args.gpus > 1 else "auto",',
      "Lightning picks nccl only for CUDA devices and gloo otherwise; gloo cannot reduce NPU tensors"),
    C("args.gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpus = torch.npu.device_count()", "returns 0 on an Ascend host -> SystemExit"),
])

# ---------------------------------------------------------------------------
# Ray Tune / Ray Train
# ---------------------------------------------------------------------------
E("ray_tune_cifar", "python/ray/tune/examples/cifar10_pytorch.py", "device_branch_or_abstraction",
  "ray-project/ray tune/examples/cifar10_pytorch.py (PyTorch 'Hyperparameter tuning with Ray Tune' tutorial)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "device_type", "add_branch", True,
      'elif hasattr(torch, "npu") and torch.npu.is_available():\n        device = "npu:0"',
      "trial silently trains on CPU on an Ascend node; Ray's NPU resource sets ASCEND_RT_VISIBLE_DEVICES so the "
      "assigned card is npu:0. The DataParallel lines stay inside the CUDA branch (DataParallel is ✘ on NPU)"),
    C("if torch.cuda.is_available() and gpus_per_trial > 0:", "device_type", "add_branch", True,
      'elif hasattr(torch, "npu") and torch.npu.is_available() and gpus_per_trial > 0:\n        device = torch.device("npu:0")',
      "final test of the best checkpoint would run on CPU"),
    C('resources={"cpu": 2, "gpu": gpus_per_trial}', "distributed_framework", "replace", True,
      'resources={"cpu": 2, "NPU": gpus_per_trial}',
      "Ray finds no GPUs on an Ascend node, so trials requesting 'gpu' stay PENDING; Ray has a native 'NPU' "
      "accelerator resource (ray PR #41256)"),
])

E("ray_train_asha", "examples/hpo/tune_torch_trainer_asha.py", "explicit_replacement",
  "ray-project/ray train/examples/pytorch/torch_fashion_mnist_example.py wrapped in tune.Tuner + ASHA", [
    C("def train_func_per_worker(config: Dict):", "import_torch_npu", "npu_only_addition", True,
      "    import torch_npu  # noqa: F401  (Ray workers do not inherit the driver's imports)",
      "the training loop runs in Ray worker processes; cloudpickle only re-imports modules the function references"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=config["amp"])', "amp", "replace", True,
      'scaler = torch.npu.amp.GradScaler(enabled=config["amp"])',
      "CUDA GradScaler disables itself without CUDA; once autocast below runs fp16 on the NPU the loss is no "
      "longer scaled and fp16 gradients can underflow"),
    C('with torch.cuda.amp.autocast(enabled=config["amp"]):', "amp", "replace", False,
      'with torch.npu.amp.autocast(enabled=config["amp"]):',
      "silently disabled without CUDA (warning, fp32): performance only, the 'amp' search dimension becomes a no-op"),
    C("use_gpu=use_gpu,", "distributed_framework", "replace", True, "use_gpu=False,",
      "use_gpu reserves Ray 'GPU' resources, which an Ascend node does not have -> trial never starts"),
    C('resources_per_worker={"CPU": 4, "GPU": 1} if use_gpu else {"CPU": 4},', "distributed_framework", "replace",
      True, 'resources_per_worker={"CPU": 4, "NPU": 1} if use_gpu else {"CPU": 4},',
      "Ray Train NPU workers are requested through resources_per_worker={'NPU': n} (ray PR #44086)"),
    C('torch_config=TorchConfig(backend="nccl" if use_gpu else "gloo", timeout_s=1800),', "dist_backend", "replace",
      True, 'torch_config=TorchConfig(backend="hccl" if use_gpu else "gloo", timeout_s=1800),',
      "NCCL is unavailable; gloo cannot run collectives on NPU tensors (ray issue #49024: 'No backend type "
      "associated with device type npu')"),
    C('max_concurrent_trials=int(ray.cluster_resources().get("GPU", 1)) // num_workers or 1,',
      "distributed_framework", "replace", False,
      'max_concurrent_trials=int(ray.cluster_resources().get("NPU", 1)) // num_workers or 1,',
      "no 'GPU' key on an Ascend cluster -> silently one trial at a time (throughput only)"),
])

E("ray_cluster_yaml", "cluster/hpo-gpu-cluster.yaml", "explicit_replacement",
  "ray-project/ray autoscaler/local/example-full.yaml (on-prem cluster launcher config)", [
    C('image: "rayproject/ray-ml:2.9.3-py310-gpu"', "import_torch_npu", "replace", True,
      'image: "registry.internal/hpo/ray-ascend:2.9.3-cann8.0.0-torch2.1.0"',
      "the -gpu image ships CUDA torch and no CANN/torch_npu; build one FROM an Ascend CANN image"),
    C("- --gpus all", "device_type", "replace", True,
      "- --device=/dev/davinci0 --device=/dev/davinci1 --device=/dev/davinci2 --device=/dev/davinci3 "
      "--device=/dev/davinci4 --device=/dev/davinci5 --device=/dev/davinci6 --device=/dev/davinci7 "
      "--device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc "
      "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
      "'--gpus' needs the NVIDIA container toolkit; Ascend containers get /dev/davinci* and the driver mounted "
      "(or use Ascend Docker Runtime)"),
    C("- -e NCCL_SOCKET_IFNAME=ens1f0", "env_var", "replace", False, "- -e HCCL_SOCKET_IFNAME=ens1f0",
      "NCCL_* is ignored; HCCL chooses the root-info NIC from HCCL_SOCKET_IFNAME/HCCL_IF_IP, needed only if the "
      "default choice is wrong"),
    C("- -e NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent; HCCL uses the NPU RoCE ports"),
    C("- nvidia-smi --query-gpu=index,name,driver_version --format=csv", "torch_cuda_api", "replace", True,
      "- npu-smi info", "nvidia-smi does not exist on an Ascend host, so node initialisation fails"),
    C("- pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", "replace", True,
      "- pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && "
      "pip install torch-npu==2.1.0.post10",
      "CUDA wheels; torch_npu exists for torch 2.1.0 (not 2.1.2) and pairs with CPU torch"),
    C("ray start --head --port=6379 --num-gpus=8", "distributed_framework", "replace", False,
      "- ulimit -c unlimited && ray start --head --port=6379 --autoscaling-config=~/ray_bootstrap_config.yaml "
      "--dashboard-host=0.0.0.0",
      "advertises 8 GPUs that do not exist; Ray detects NPUs itself (resource 'NPU'). Unconfirmed how Ray 2.9.3 "
      "autodetects NPUs; once trials ask for 'NPU' the fake GPUs are merely unused"),
    C("- ray start --address=$RAY_HEAD_IP:6379 --num-gpus=8", "distributed_framework", "replace", False,
      "- ray start --address=$RAY_HEAD_IP:6379", "same as the head node"),
])

E("ray_tune_transformers", "python/ray/tune/examples/pbt_transformers.py", "explicit_replacement",
  "ray-project/ray tune/examples/pbt_transformers/pbt_transformers.py (HF Trainer.hyperparameter_search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("fp16=torch.cuda.is_available(),", "amp", "replace", False, "fp16=torch.npu.is_available(),",
      "False on an Ascend host -> fp32 training; HF Trainer supports fp16 on NPU (performance only)"),
    C('resources_per_trial={"cpu": 1, "gpu": gpus_per_trial},', "distributed_framework", "replace", True,
      'resources_per_trial={"cpu": 1, "NPU": gpus_per_trial},',
      "no Ray GPU resources on Ascend nodes -> PBT members stay PENDING; HF Trainer itself detects the NPU"),
    C("default=1 if torch.cuda.is_available() else 0,", "torch_cuda_api", "replace", True,
      "default=1 if torch.npu.is_available() else 0,",
      "0 -> no_cuda=True and 0 accelerators per trial: every trial trains on CPU"),
])

# ---------------------------------------------------------------------------
# W&B sweeps
# ---------------------------------------------------------------------------
E("wandb_sweep_train", "sweeps/train.py", "explicit_replacement",
  "W&B sweep training script in the style of wandb/examples + timm fine-tuning recipes", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW, NpuFusedLamb",
      "NVIDIA apex is not installable on NPU; the ImportError fallback to AdamW keeps it running (performance only)"),
    C("return FusedAdam(groups, lr=cfg.lr, adam_w_mode=True)", "fused_optimizer", "replace", False,
      "return NpuFusedAdamW(groups, lr=cfg.lr)", "torch_npu fused optimizer instead of apex"),
    C("return FusedLAMB(groups, lr=cfg.lr)", "fused_optimizer", "replace", False,
      "return NpuFusedLamb(groups, lr=cfg.lr)", "torch_npu fused optimizer instead of apex"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed already seeds the NPU"),
    C("channels_last=True,", "unsupported_op_workaround", "replace", False, "channels_last=False,",
      "unconfirmed: msFmkTransplt lists channels_last as unsupported on NPU and advises contiguous tensors"),
    C('state = torch.load(path, map_location="cuda")', "device_type", "replace", True,
      'state = torch.load(path, map_location="npu")', "mapping to 'cuda' fails without CUDA"),
    C('assert torch.cuda.is_available(), "sweep runs are expected', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "sweep runs are expected to get an NPU from launch_agents.sh"',
      "assertion fails on an Ascend host"),
    C('device = torch.device("cuda", 0)', "device_type", "replace", True, 'device = torch.device("npu", 0)',
      "CUDA device"),
    C('wandb.config.update({"gpu_name": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True,
      'wandb.config.update({"gpu_name": torch.npu.get_device_name(device),', "CUDA API with an npu device raises"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda()"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "off by default; max-autotune tunes Triton/CUDA-graph kernels. Unconfirmed what it does under torch_npu's "
      "Inductor path (torch_npu >= 2.6); plain mode or backend='npugraphs' is the documented route"),
    C('autocast_ctx = lambda: torch.autocast(device_type="cuda", dtype=amp_dtype)', "amp", "replace", False,
      'autocast_ctx = lambda: torch.autocast(device_type="npu", dtype=amp_dtype)',
      "CUDA autocast disables itself (warning) -> fp32 on NPU, performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "the sweep explores amp_dtype=fp16; with NPU autocast and a self-disabled CUDA scaler the fp16 loss is "
      "not scaled"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "lazy CUDA init raises"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", ".cuda()"),
    C("targets = targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = targets.npu(non_blocking=True)", ".cuda()"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises"),
    C('"perf/max_mem_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", "replace", False,
      '"perf/max_mem_gb": torch.npu.max_memory_allocated() / 1e9,', "logged metric silently 0"),
])

E("wandb_sweep_yaml", "sweeps/sweep_bayes.yaml", "explicit_replacement",
  "W&B sweep configuration (bayes + hyperband early termination)", [
    C("values: [adamw, fusedadam, lamb]", "fused_optimizer", "replace", False,
      "values: [adamw, npufusedadamw, npufusedlamb]",
      "apex is absent on NPU so fusedadam/lamb silently fall back to AdamW: the sweep spends runs on duplicate arms"),
    C("value: true", "unsupported_op_workaround", "replace", False, "value: false",
      "channels_last override; unconfirmed (msFmkTransplt lists channels_last as unsupported)"),
])

E("wandb_launch_agents", "sweeps/launch_agents.sh", "explicit_replacement",
  "shell launcher: one `wandb agent` per GPU pinned with CUDA_VISIBLE_DEVICES", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "agents run on the bare host; without the CANN environment torch_npu fails to load libhccl/libascendcl"),
    C('if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then', "env_var", "replace", False,
      'if [[ -n "${ASCEND_RT_VISIBLE_DEVICES:-}" ]]; then',
      "only matters when the user restricts devices; the CUDA variable is normally unset on an Ascend host"),
    C("IFS=',' read -r -a GPUS <<< \"$CUDA_VISIBLE_DEVICES\"", "env_var", "replace", False,
      "IFS=',' read -r -a GPUS <<< \"$ASCEND_RT_VISIBLE_DEVICES\"", "same restriction, NPU variable"),
    C("mapfile -t GPUS < <(nvidia-smi --query-gpu=index --format=csv,noheader)", "torch_cuda_api", "replace", True,
      "mapfile -t GPUS < <(npu-smi info -l | awk -F: '/NPU ID/{gsub(/ /,\"\",$2); print $2}')",
      "nvidia-smi is missing (set -e aborts). Note npu-smi NPU IDs vs logical ids on multi-chip cards"),
    C('used=$(nvidia-smi --id="$1" --query-gpu=memory.used --format=csv,noheader,nounits)', "torch_cuda_api",
      "replace", True,
      "used=$(npu-smi info -t usages -i \"$1\" | awk -F: '/HBM Usage Rate/{gsub(/ /,\"\",$2); print $2}')",
      "nvidia-smi is missing"),
    C('[[ "$used" -lt 1024 ]]', "torch_cuda_api", "replace", True, '[[ "$used" -lt 5 ]]   # HBM usage in percent',
      "npu-smi reports HBM usage as a percentage, not MiB; keeping 1024 would treat every card as free"),
    C("CUDA_VISIBLE_DEVICES=$gpu nohup wandb agent", "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=$gpu nohup wandb agent ${COUNT:+--count "$COUNT"} "$SWEEP_ID" \\',
      "without it every agent sees all NPUs and trains on npu:0"),
])

# ---------------------------------------------------------------------------
# Hydra multirun (joblib / submitit)
# ---------------------------------------------------------------------------
E("hydra_train", "hydra_ddp/train.py", "explicit_replacement",
  "Hydra @hydra.main DDP entry point launched by hydra-submitit-launcher / joblib multirun", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on an Ascend host: every joblib sweep job is put on device 0"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "the CUDA mask does not isolate NPUs, so parallel joblib jobs pile onto npu:0. Unconfirmed that the NPU "
      "runtime reads the variable this late (before first device use)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA set_device"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.bfloat16):', "CUDA autocast disables itself -> fp32 eval (performance)"),
    C('device = torch.device(f"cuda:{local_rank}" if world_size > 1 else "cuda")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}" if world_size > 1 else "npu")', "CUDA device strings"),
    C('state = torch.load(ckpt_path, map_location={"cuda:0": f"cuda:{local_rank}"})', "device_type", "replace",
      True, 'state = torch.load(ckpt_path, map_location=device)',
      "GPU-era checkpoints would be mapped onto cuda:N; NPU-saved ones (tagged npu:0) would all land on npu:0"),
    C("torch.profiler.ProfilerActivity.CUDA]", "torch_cuda_api", "replace", False,
      "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "only with cfg.profile: the CUDA activity yields a CPU-only trace; torch_npu.profiler is the NPU profiler "
      "(transfer_to_npu maps ProfilerActivity.CUDA -> NPU)"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.optim.bf16):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=torch.bfloat16, enabled=cfg.optim.bf16):',
      "CUDA autocast disables itself -> fp32 training (performance only; bf16 needs no scaler)"),
    C("mem = torch.cuda.max_memory_reserved(device) / 2 ** 30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_reserved(device) / 2 ** 30", "log only; silently 0 without CUDA"),
])

E("hydra_config", "hydra_ddp/conf/config.yaml", "explicit_replacement",
  "Hydra primary config with joblib launcher + Optuna sweeper and job env_set", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "fed to init_process_group in train.py; NCCL does not exist on Ascend"),
    C("NCCL_DEBUG: WARN", "env_var", "replace", False, 'ASCEND_GLOBAL_LOG_LEVEL: "3"',
      "NCCL_* is inert under HCCL"),
    C("NCCL_IB_HCA: mlx5", "env_var", "removal", False, None, "no HCCL equivalent; inert"),
    C('TORCH_NCCL_ASYNC_ERROR_HANDLING: "1"', "env_var", "replace", False, 'HCCL_ASYNC_ERROR_HANDLING: "1"',
      "watchdog knob of the NCCL process group; the HCCL one defaults to 1"),
])

E("hydra_launcher_conf", "hydra_ddp/conf/hydra/launcher/submitit_gpu.yaml", "explicit_replacement",
  "hydra-submitit-launcher SLURM launcher config (gpus_per_node, setup commands)", [
    C("gpus_per_node: 8", "distributed_framework", "replace", False, "gpus_per_node: null",
      "becomes sbatch --gpus-per-node, which needs a 'gpu' GRES; Ascend sites name the GRES themselves "
      "(unconfirmed, site-specific)"),
    C("partition: gpu-a100", "distributed_framework", "replace", False, "partition: ascend-910b",
      "site-specific partition name"),
    C("constraint: a100_80g", "distributed_framework", "replace", False, "constraint: null",
      "site-specific node feature"),
    C("gres: null", "distributed_framework", "replace", False, "gres: npu:8",
      "request NPUs through the site's GRES name instead (unconfirmed name)"),
    C("- module load cuda/12.1 nccl/2.18", "env_var", "replace", True,
      "- source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "SLURM tasks run on bare hosts: torch_npu needs the CANN environment (libascendcl/libhccl)"),
    C("- export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "- export HCCL_SOCKET_IFNAME=ib0",
      "HCCL reads HCCL_SOCKET_IFNAME for the root-info NIC; only needed if the default NIC is wrong"),
])

E("slurm_array_sbatch", "slurm/hpo_array.sbatch", "explicit_replacement",
  "SLURM array job running one Optuna trial per task on one GPU", [
    C("#SBATCH --partition=gpu", "distributed_framework", "replace", False, "#SBATCH --partition=npu",
      "site-specific partition"),
    C("#SBATCH --gres=gpu:1", "distributed_framework", "replace", False, "#SBATCH --gres=npu:1",
      "site-specific GRES name (unconfirmed). SLURM sets CUDA_VISIBLE_DEVICES for gpu GRES only; whether the "
      "site's NPU GRES exports ASCEND_RT_VISIBLE_DEVICES is also site configuration"),
    C("module load anaconda3/2023.09 cuda/11.8 cudnn/8.9", "env_var", "replace", True,
      "module load anaconda3/2023.09 && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA modules are meaningless on Ascend nodes and the CANN environment must be sourced for torch_npu"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* is inert under HCCL"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader", "torch_cuda_api", "replace",
      True, "npu-smi info", "nvidia-smi missing -> `set -e` aborts the array task"),
    C("--device cuda \\", "device_type", "replace", True, "--device npu \\", "hpo_worker.py device flag"),
    C('if grep -q "CUDA out of memory"', "device_type", "replace", False,
      'if grep -q -E "(CUDA|NPU) out of memory"',
      "unconfirmed exact torch_npu OOM wording; unchanged, OOM trials are reported as task failures"),
])

E("slurm_hpo_worker", "hpo_worker.py", "explicit_replacement",
  "Optuna ask/tell worker with a CUDA-stream prefetcher and OOM retry (DALI-less timm/torchvision style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('common = dict(num_workers=workers, pin_memory=True, pin_memory_device="cuda"', "pin_memory", "replace", True,
      'common = dict(num_workers=workers, pin_memory=True, pin_memory_device="npu", persistent_workers=workers > 0)',
      "pinning for the 'cuda' device needs CUDA"),
    C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(device=device)", "CUDA stream"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream"),
    C("images.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "images.record_stream(torch.npu.current_stream(self.device))", "CUDA stream"),
    C("targets.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "targets.record_stream(torch.npu.current_stream(self.device))", "CUDA stream"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("images = images.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "images = images.contiguous()", "unconfirmed: channels_last listed as unsupported by msFmkTransplt"),
    C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "compute capability is a CUDA notion; torch_npu's get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, so unpacking fails"),
    C("model = model.to(device, memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "model = model.to(device)", "unconfirmed: channels_last listed as unsupported by msFmkTransplt"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)', "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "fp16 is chosen when bf16 is unavailable; a self-disabled CUDA scaler leaves NPU fp16 training unscaled"),
    C('with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):', "amp",
      "replace", False, 'with torch.autocast("npu", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):',
      "CUDA autocast disables itself -> fp32 (performance)"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype or torch.float32', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):',
      "evaluation autocast, performance only"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA event"),
    C('with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=bool(amp_dtype)):', "amp", "replace",
      False, 'with torch.autocast("npu", dtype=amp_dtype or torch.float32, enabled=bool(amp_dtype)):',
      "benchmark autocast, performance only"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "CUDA synchronize with an npu device"),
    C("total_gb = torch.cuda.get_device_properties(device).total_memory / 2 ** 30", "torch_cuda_api", "replace", True,
      "total_gb = torch.npu.get_device_properties(device).total_memory / 2 ** 30",
      "torch.npu.get_device_properties provides total_memory (support list)"),
    C('p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])', "device_type", "replace", True,
      'p.add_argument("--device", default="npu", choices=["npu", "cuda", "cpu"])',
      "'npu' is rejected by choices and the default is CUDA"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "skipped on NPU; npu:0 is the default current device anyway"),
    C("torch.cuda.set_device(0)", "torch_cuda_api", "replace", False, "torch.npu.set_device(0)",
      "moves with its guard"),
    C('trial.set_user_attr("gpu", torch.cuda.get_device_name(device))', "torch_cuda_api", "replace", True,
      'trial.set_user_attr("gpu", torch.npu.get_device_name(device))', "CUDA API with an npu device raises"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as oom:  # NPU OOM surfaces as RuntimeError",
      "unconfirmed which exception type torch_npu raises on OOM; if it is not torch.OutOfMemoryError the "
      "halve-batch retry never triggers and the trial crashes"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C('trial.set_user_attr("peak_mem_gb", torch.cuda.max_memory_allocated(device) / 2 ** 30)', "torch_cuda_api",
      "replace", False, 'trial.set_user_attr("peak_mem_gb", torch.npu.max_memory_allocated(device) / 2 ** 30)',
      "metadata silently 0"),
])

# ---------------------------------------------------------------------------
# Determined AI / Polyaxon
# ---------------------------------------------------------------------------
DET_NOTE = ("Determined places the model itself (context.device) and has no NPU slot type, so an Ascend agent "
            "offers CPU slots and this guarded GPU-only code is simply skipped (unconfirmed; the real port "
            "needs framework support)")

E("determined_const", "determined/mnist_pytorch/adaptive.yaml", "explicit_replacement",
  "determined-ai/determined examples/tutorials/mnist_pytorch adaptive.yaml (adaptive_asha searcher)", [
    C("resource_pool: a100-pool", "distributed_framework", "replace", False, "resource_pool: ascend-pool",
      "site-specific resource pool"),
    C("cuda: determinedai/environments:cuda-11.8-pytorch-2.0-gpu-0.26.4", "import_torch_npu", "removal", False, None,
      "the CUDA image is only chosen for GPU slots, which an Ascend agent does not report (unconfirmed)"),
    C("cpu: determinedai/environments:py-3.9-pytorch-2.0-cpu-0.26.4", "import_torch_npu", "replace", True,
      "cpu: registry.internal/determined/ascend-pytorch:2.1.0-cann8.0.0",
      "whichever image Determined picks must carry CANN + torch_npu; the stock images do not"),
    C("- NCCL_DEBUG=INFO", "env_var", "replace", False, "- ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_* is inert under HCCL"),
    C("- CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "- ASCEND_LAUNCH_BLOCKING=0",
      "0 is the default either way; NPU counterpart named in the host-env notes"),
    C("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "distributed_framework", "replace", True,
      "accelerator: huawei-Ascend910",
      "pins the trial pods to A100 nodes, so they never schedule on an Ascend cluster (replacement label value "
      "is the MindCluster convention, unconfirmed)"),
])

E("determined_model_def", "determined/mnist_pytorch/model_def.py", "device_branch_or_abstraction",
  "determined-ai/determined examples/tutorials/mnist_pytorch/model_def.py (PyTorchTrial)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", DET_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():", DET_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "moves with its guard"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False, "torch.npu.reset_peak_memory_stats()",
      "moves with its guard"),
    C("if torch.cuda.is_available() and torch.cuda.is_initialized():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and torch.npu.is_initialized():", DET_NOTE),
    C("torch.cuda.synchronize(self.context.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(self.context.device)", "moves with its guard"),
    C("peak = torch.cuda.max_memory_allocated(self.context.device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.context.device) / 2 ** 20", "moves with its guard"),
    C("self.scaler = self.context.wrap_scaler(torch.cuda.amp.GradScaler())", "amp", "replace", False,
      "self.scaler = self.context.wrap_scaler(torch.npu.amp.GradScaler())",
      "self-disables without CUDA; only matters once Determined can place the model on an NPU"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=self.use_amp):", "self-disables without CUDA (fp32)"),
    C("if batch_idx % 100 == 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if batch_idx % 100 == 0 and torch.npu.is_available():", "metric only"),
    C('metrics["gpu_mem_mb"] = torch.cuda.memory_allocated() / 2 ** 20', "torch_cuda_api", "replace", False,
      'metrics["gpu_mem_mb"] = torch.npu.memory_allocated() / 2 ** 20', "metric only, moves with its guard"),
])

E("polyaxon_hpo", "polyaxon/hpo-hyperband.yaml", "explicit_replacement",
  "polyaxon v1.1 polyaxonfile with a hyperband matrix over a Kubernetes job", [
    C("node.kubernetes.io/instance-type: p3.2xlarge", "distributed_framework", "replace", True,
      "accelerator: huawei-Ascend910",
      "node selector pins runs to V100 instances; label value for Ascend nodes is site/MindCluster convention"),
    C("image: pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime", "import_torch_npu", "replace", True,
      "image: registry.internal/hpo/ascend-pytorch:2.1.0-cann8.0.0",
      "CUDA runtime image without CANN/torch_npu"),
    C("--device=cuda", "device_type", "replace", True, "--device=npu", "train.py device flag"),
    C("- name: NVIDIA_VISIBLE_DEVICES", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; the Ascend device plugin injects ASCEND_VISIBLE_DEVICES itself"),
    C("value: all", "env_var", "removal", False, None, "value of the removed NVIDIA_VISIBLE_DEVICES entry"),
    C("nvidia.com/gpu: 1", "distributed_framework", "replace", True, "huawei.com/Ascend910: 1",
      "a pod without huawei.com/Ascend910 resources gets neither device nodes nor driver dirs (host-formats notes)"),
])

# ---------------------------------------------------------------------------
# shared utilities of an in-house AutoML package
# ---------------------------------------------------------------------------
E("automl_gpu_pool", "automl/scheduler/gpu_pool.py", "device_branch_or_abstraction",
  "in-house 'N trials on N GPUs' allocator (NVML / nvidia-smi), as found next to Optuna/NNI setups", [
    C("if _HAS_NVML:", "torch_cuda_api", "add_branch", True,
      "if shutil.which(\"npu-smi\"):\n        return _query_npu_smi()  # parses `npu-smi info` / `-t usages -i N`",
      "on an Ascend host NVML fails and nvidia-smi is absent, so the pool finds no devices and raises; add an "
      "npu-smi backend (npu-smi ids are NPU IDs, not necessarily the logical ids ASCEND_RT_VISIBLE_DEVICES uses)"),
    C('env = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", False,
      'env = os.environ.get("ASCEND_RT_VISIBLE_DEVICES") or os.environ.get("CUDA_VISIBLE_DEVICES")',
      "only matters when the user restricts devices"),
    C('env["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "add_branch", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "the trial subprocess would otherwise see every NPU and use npu:0"),
    C('env.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", "replace", False,
      'env.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "allocator tuning only; NPU expandable_segments needs HDK >= 23.0.0"),
])

E("automl_device_utils", "automl/utils/device.py", "device_branch_or_abstraction",
  "in-house device helper module (get_device / autocast / dist backend) used by all trial entry points", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "try:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    torch_npu = None", IMPORT_NOTE),
    C("=elif torch.cuda.is_available():", "device_type", "add_branch", True,
      'elif hasattr(torch, "npu") and torch.npu.is_available():\n        local_rank = int(os.environ.get("LOCAL_RANK", 0))'
      '\n        _DEVICE = torch.device("npu", local_rank % torch.npu.device_count())\n        torch.npu.set_device(_DEVICE)',
      "without an npu branch every trial falls through to CPU"),
    C('if device.type == "cuda" and torch.cuda.is_available():', "device_capability_check", "add_branch", False,
      'if device.type == "npu":\n        return torch.npu.is_bf16_supported()',
      "compute capability is CUDA-only; NPU falls to 'False' -> fp16 is chosen where bf16 would do"),
    C('if not enabled or device.type not in ("cuda", "cpu"):', "amp", "add_branch", False,
      'if not enabled or device.type not in ("cuda", "npu", "cpu"):', "AMP silently off on NPU (performance)"),
    C("use = enabled and device.type == \"cuda\" and amp_dtype(device) == torch.float16", "amp", "add_branch", True,
      'use = enabled and device.type in ("cuda", "npu") and amp_dtype(device) == torch.float16',
      "once autocast runs fp16 on the NPU the scaler must be enabled there too"),
    C("return torch.cuda.amp.GradScaler(enabled=use)", "amp", "add_branch", True,
      "return (torch.npu.amp.GradScaler if device.type == \"npu\" else torch.cuda.amp.GradScaler)(enabled=use)",
      "a CUDA GradScaler disables itself on an NPU host -> unscaled fp16"),
    C('return "nccl" if device.type == "cuda" else "gloo"', "dist_backend", "add_branch", True,
      'return {"cuda": "nccl", "npu": "hccl"}.get(device.type, "gloo")',
      "NPU ranks would get gloo, which has no NPU collectives ('No backend type associated with device type npu')"),
    C('if device.type != "cuda" or not torch.cuda.is_initialized():', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu":\n        return {"mem/allocated_gb": torch.npu.memory_allocated(device) / 2 ** 30, '
      '"mem/reserved_gb": torch.npu.memory_reserved(device) / 2 ** 30, '
      '"mem/peak_gb": torch.npu.max_memory_allocated(device) / 2 ** 30}',
      "metrics silently empty on NPU"),
    C('=if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu":\n        torch.npu.synchronize(device)\n        torch.npu.empty_cache()\n'
      '        torch.npu.reset_peak_memory_stats(device)',
      "cache not released between in-process trials (performance/fragmentation only)"),
    C('=if device.type != "cuda":', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu":\n        free, _total = torch.npu.mem_get_info(device)\n'
      '        return max(1, int(free * safety) // bytes_per_sample)',
      "hint is None on NPU; callers fall back to their configured batch size"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError):",
      "unconfirmed which exception torch_npu raises on OOM"),
])

# ---------------------------------------------------------------------------
# environment files
# ---------------------------------------------------------------------------
E("env_requirements", "requirements-gpu.txt", "explicit_replacement",
  "pip requirements of the HPO stack pinned to CUDA 11.8 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on CPU torch (x86 from whl/cpu, aarch64 from PyPI)"),
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "custom_cuda_extension", "removal",
      False, None, "index of the NVIDIA DALI CUDA wheels"),
    C("torch==2.1.2+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build; torch_npu exists for torch 2.1.0, not 2.1.2 (wheel version must equal torch version)"),
    C("torchvision==0.16.2+cu118", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("numpy>=1.24,<2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel for torch 2.1.0 (v2.1.0-6.0.0 branch, CANN 8.0.0)"),
    C("ray[tune,train]==2.9.3", "distributed_framework", "replace", False, "ray[tune,train]>=2.35",
      "unconfirmed: the Ray Core NPU resource (PR #41256) and Ray Train NPU device support (PR #44086, mid-2024) "
      "may be newer than 2.9.3"),
    C("nvidia-dali-cuda110==1.33.0", "custom_cuda_extension", "replace", False, "nvidia-dali-cuda110==1.33.0  # CPU-only pipelines",
      "unconfirmed whether the CUDA DALI wheel installs/imports on an Ascend (often aarch64) host; only its CPU "
      "operators can be used there"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "NVML bindings have nothing to talk to on an Ascend host (harmless if left)"),
])

E("env_dockerfile", "Dockerfile", "explicit_replacement",
  "CUDA devel base image with NVIDIA apex built from source", [
    C("ARG CUDA_VERSION=11.8.0", "import_torch_npu", "removal", False, None, "unused once the base image changes"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu22.04 AS base", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10 AS base",
      "the image must provide CANN (and its set_env ENV lines); the CUDA image cannot drive an NPU"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None, "NVIDIA container runtime knob, inert"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None, "inert on Ascend"),
    C('TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "custom_cuda_extension", "removal", False, None,
      "only steers nvcc builds (the apex build below goes away)"),
    C("RUN git clone --depth 1 https://github.com/NVIDIA/apex /opt/apex \\", "fused_optimizer", "removal", True, None,
      "apex's --cuda_ext build needs nvcc and fails on the CANN image; use torch_npu.optim.NpuFused* instead"),
    C("&& cd /opt/apex \\", "fused_optimizer", "removal", True, None, "part of the apex build"),
    C('&& pip install -v --disable-pip-version-check --no-build-isolation', "custom_cuda_extension", "removal", True,
      None, "nvcc build of apex CUDA extensions"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1 \\", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1 \\",
      "NCCL knob is inert under HCCL"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi > /dev/null || exit 1", "torch_cuda_api", "replace",
      True, "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi is absent, so the container is always unhealthy (npu-smi must be mounted in)"),
])

E("env_conda", "environment.yml", "explicit_replacement",
  "conda environment with pytorch-cuda from the pytorch/nvidia channels", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "only needed for pytorch-cuda"),
    C("- pytorch=2.1.2", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu is published for torch 2.1.0, not 2.1.2"),
    C("- torchvision=0.16.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0", "matches torch 2.1.0"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch; torch_npu sits on the CPU build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "the torch_npu wheel itself"),
    C("- nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None, "NVML bindings, unused on Ascend"),
])
