# Labels for probe284 (active learning / data valuation, CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NPU_PIN = "torch-npu==2.1.0.post17"
IMPORT_NOTE = ("entry script: import torch_npu registers the npu device/torch.npu namespace "
               "(autoloaded only from torch_npu 2.5.1 on; this code pins torch 2.1)")
SEED_NOTE = ("torch.cuda seeding is a silent no-op on a CUDA-less host; torch.manual_seed on the line(s) above already "
             "seeds the default generators, so only reproducibility of the NPU generator is at stake (unconfirmed)")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op without CUDA: the NPU caching allocator is not "
                    "trimmed, memory-only consequence")
MEMLOG_NOTE = "memory statistic only used in a log line; torch.cuda.* returns 0 on an NPU host instead of failing"

# ---------------------------------------------------------------- deep-active-learning
E("dal_demo", "demo.py", "device_branch_or_abstraction",
  "ej0cl6/deep-active-learning demo.py (argparse rewrite)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available() and not args.no_cuda", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available() and not args.no_cuda",
      "False on an NPU host -> whole experiment silently runs on the CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device handed to get_net(); cuda device fails"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C('print("Running on", torch.cuda.get_device_name(0))', "torch_cuda_api", "replace", True,
      'print("Running on", torch.npu.get_device_name(0))',
      "reached once use_cuda means NPU (with --print_gpu); torch.cuda.get_device_name initialises CUDA and raises"),
])

E("dal_nets", "nets.py", "device_branch_or_abstraction",
  "ej0cl6/deep-active-learning nets.py (Net wrapper + MNIST/SVHN/CIFAR10 nets)", [
    C('if self.device.type == "cuda":', "device_type", "replace", False,
      'if self.device.type in ("cuda", "npu"):',
      "branch is simply skipped on npu; only the between-round cache trim is lost"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("dal_kcenter", "query_strategies/kcenter_greedy.py", "device_branch_or_abstraction",
  "ej0cl6/deep-active-learning query_strategies/kcenter_greedy.py plus a chunked GPU variant", [
    C("X = embeddings.cuda()", "tensor_to_device", "replace", True, "X = embeddings.to(self.net.device)",
      ".cuda() raises 'Torch not compiled with CUDA enabled' on the NPU host"),
    C("lb = torch.from_numpy(labeled_idxs).cuda()", "tensor_to_device", "replace", True,
      "lb = torch.from_numpy(labeled_idxs).to(X.device)", "same; mask must live with X"),
])

E("dal_deepfool", "query_strategies/adversarial_deepfool.py", "device_branch_or_abstraction",
  "ej0cl6/deep-active-learning query_strategies/adversarial_deepfool.py", [
    C("self.net.clf.cuda()", "tensor_to_device", "replace", True, "self.net.clf.to(self.net.device)",
      "classifier is moved back after the CPU DeepFool loop with a hard .cuda(); fails on NPU"),
])

E("dal_requirements", "requirements.txt", "explicit_replacement",
  "deep-active-learning style requirements.txt with the CUDA 11.8 wheel index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu expects the CPU torch build (x86: whl/cpu, aarch64: PyPI); the cu118 index pulls the CUDA "
      "build + nvidia-* wheels; breakage beyond wasted space unconfirmed"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, NPU_PIN,
      "torch-npu wheel must be installed and match torch 2.1.0"),
    C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.4",
      "faiss-gpu has only x86_64 CUDA wheels (none for the aarch64 Ascend servers) and no NPU backend"),
])

# ---------------------------------------------------------------- BADGE
E("badge_run", "run.py", "explicit_replacement",
  "JordanAsh/badge run.py (openml + torchvision datasets, argparse)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opts.gpu",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: every run lands on npu:0 and parallel runs collide"),
    C("torch.cuda.manual_seed(opts.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opts.seed)", SEED_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only guards an informational print; unchanged it is just skipped"),
    C("print('GPU: {} ({} visible)'.format(torch.cuda.get_device_name(0), torch.cuda.device_count()), flush=True)",
      "torch_cuda_api", "replace", False,
      "print('NPU: {} ({} visible)'.format(torch.npu.get_device_name(0), torch.npu.device_count()), flush=True)",
      "log line; must change together with the guard above or it raises"),
])

_B = "=x, y = Variable(x.cuda()), Variable(y.cuda())"
E("badge_strategy", "query_strategies/strategy.py", "explicit_replacement",
  "JordanAsh/badge query_strategies/strategy.py (Variable + .cuda() everywhere)", [
    C(_B, "tensor_to_device", "replace", True, "x, y = Variable(x.npu()), Variable(y.npu())",
      "_train batch transfer; .cuda() raises on the NPU host"),
    C("self.clf = self.net.apply(weight_reset).cuda()", "tensor_to_device", "replace", True,
      "self.clf = self.net.apply(weight_reset).npu()", "model transfer in train()"),
    C(_B + "  # predict", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # predict", "predict()"),
    C(_B + "  # predict_prob", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # predict_prob", "predict_prob()"),
    C(_B + "  # predict_prob_dropout", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # predict_prob_dropout", "MC-dropout probs"),
    C(_B + "  # predict_prob_dropout_split", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # predict_prob_dropout_split", "BALD probs"),
    C(_B + "  # get_embedding", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # get_embedding", "embeddings for CoreSet/KMeans"),
    C(_B + "  # get_grad_embedding", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # get_grad_embedding", "BADGE gradient embedding"),
    C("=x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()",
      "BAIT expected-gradient embedding"),
])

E("badge_sampling", "query_strategies/badge_sampling.py", "explicit_replacement",
  "JordanAsh/badge query_strategies/badge_sampling.py with a GPU k-means++ seeding variant", [
    C("X_gpu = torch.cuda.FloatTensor(X)", "torch_cuda_api", "replace", True,
      'X_gpu = torch.tensor(X, dtype=torch.float32, device="npu")',
      "legacy torch.cuda.FloatTensor type is unavailable without CUDA (TypeError)"),
    C("D2 = D2.type(torch.cuda.DoubleTensor)", "torch_cuda_api", "replace", True, "D2 = D2.float()",
      "torch.cuda.DoubleTensor fails without CUDA; NPU has no fp64 anyway, so keep D^2 in fp32"),
    C("newD = torch.cdist(X_gpu, X_gpu[ind].unsqueeze(0)).squeeze(1).double()", "unsupported_op_workaround",
      "replace", False, "newD = torch.cdist(X_gpu, X_gpu[ind].unsqueeze(0)).squeeze(1)",
      "fp64 is not supported on NPU: the cast is silently downgraded to fp32 with a warning"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on the NPU host"),
    C("if self.use_gpu_kmeans and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if self.use_gpu_kmeans and torch.npu.is_available():",
      "unchanged it falls back to the sklearn CPU seeding: correct but ~40x slower on CIFAR-sized pools"),
])

E("badge_env", "environment.yml", "explicit_replacement",
  "BADGE-style conda environment.yml (pytorch + nvidia channels, pytorch-cuda)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA runtime channel, unused on an NPU host"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "- cpuonly",
      "pytorch-cuda has no linux-aarch64 build (Kunpeng Ascend hosts) and torch_npu wants the CPU torch build"),
    C("=- tqdm", "import_torch_npu", "npu_only_addition", True, "- " + NPU_PIN,
      "torch-npu is only on PyPI: add it to the pip section"),
    C("=- pynvml==11.5.0", "torch_cuda_api", "removal", False, None,
      "NVML bindings; nothing to query on an NPU host (harmless but dead)"),
])

# ---------------------------------------------------------------- Core-set
E("coreset_kcenter", "coreset/sampling/kcenter_greedy.py", "device_branch_or_abstraction",
  "google/active-learning sampling_methods/kcenter_greedy.py ported to torch/faiss GPU", [
    C("x = torch.cuda.FloatTensor(x)", "torch_cuda_api", "replace", True,
      "x = torch.from_numpy(x).float().to(device)", "torch.cuda.FloatTensor unavailable without CUDA"),
    C("if not x.is_cuda:", "device_type", "replace", True, "if x.device != device:",
      "is_cuda is False for npu tensors, so the branch below would always run"),
    C("x = x.cuda(device)", "tensor_to_device", "replace", True, "x = x.to(device)", ".cuda() raises on NPU host"),
    C("self.device = torch.device('cuda:%d' % gpu_id)", "device_type", "replace", True,
      "self.device = torch.device('npu:%d' % gpu_id)", "hard-coded cuda device"),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(self.device)",
      "torch.cuda.set_device fails without CUDA"),
    C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", "removal", True, None,
      "faiss GPU resources do not exist on an NPU host (faiss-cpu only); path is taken when use_faiss=True"),
    C("index = faiss.GpuIndexFlatL2(res, centers.shape[1])", "unsupported_op_workaround", "replace", True,
      "index = faiss.IndexFlatL2(centers.shape[1])", "CPU faiss index instead of the GPU one"),
    C("kcenter_cuda.update_min_dist(self._features_gpu, centers, self.min_distances)", "custom_cuda_extension",
      "replace", False,
      "self.min_distances = torch.minimum(self.min_distances, self._pairwise_min(centers))",
      "nvcc-built extension; its import is guarded (HAS_KCENTER_EXT False on NPU) so the call is dead code "
      "there; port to Ascend C only if the fused path is wanted"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 20)", "torch_cuda_api", "replace", False,
      "time.time() - t0, torch.npu.max_memory_allocated() / 2 ** 20)", MEMLOG_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("coreset_ext_setup", "coreset/csrc/setup.py", "kernel_rewrite",
  "setup.py of a research repo's CUDAExtension (fused k-center min-distance kernel)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension",
      "replace", False,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "import itself works (CUDA_HOME is just None); edited to bring in NpuExtension"),
    C("=if CUDA_HOME is None:", "custom_cuda_extension", "removal", True, None,
      "always true on an NPU host -> build aborts with the RuntimeError below"),
    C("arch_flags = os.environ.get(\"KCENTER_ARCH\"", "custom_cuda_extension", "replace", False,
      "arch_flags = []", "nvcc -gencode flags, meaningless for the Ascend build"),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "CUDAExtension needs nvcc; NpuExtension links torch_npu/ACL"),
    C('sources=["kcenter.cpp", "kcenter_kernel.cu"],', "custom_cuda_extension", "replace", True,
      'sources=["kcenter.cpp", "kcenter_kernel_ascendc.cpp"],',
      ".cu kernel has to be rewritten (Ascend C + OpPlugin registration or plain torch ops)"),
    C('"nvcc": ["-O3", "--use_fast_math", "-lineinfo"] + arch_flags,', "custom_cuda_extension", "removal", False,
      None, "nvcc-only flags; dropped with the CUDA build (unconfirmed whether NpuExtension errors on the key)"),
])

# ---------------------------------------------------------------- modAL / ALiPy
E("modal_skorch", "examples/pytorch_model_training.py", "device_branch_or_abstraction",
  "modAL-python examples/pytorch_model_training.py (skorch NeuralNetClassifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "falls back to CPU silently on the NPU host; skorch just calls .to(device)"),
    C("device='cuda:0')", "device_type", "replace", True, "device='npu:0')",
      "hard-coded cuda device for the MC-dropout learner; fails at fit()"),
])

E("alipy_torch", "examples/alipy_torch_mlp.py", "device_branch_or_abstraction",
  "ALiPy ToolBox experiment with a sklearn-compatible torch MLP estimator", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if self.use_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if self.use_gpu and torch.npu.is_available():", "silently trains every learner on the CPU otherwise"),
    C('return torch.device("cuda:%d" % self.gpu_id)', "device_type", "replace", True,
      'return torch.device("npu:%d" % self.gpu_id)', "device used by fit/predict_proba"),
    C("n_gpu = max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", False,
      "n_gpu = max(torch.npu.device_count(), 1)",
      "unchanged: 1 -> the whole QBC committee shares npu:0; correct, just not spread"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

# ---------------------------------------------------------------- baal
E("baal_cuda_utils", "baal/utils/cuda_utils.py", "explicit_replacement",
  "baal (Bayesian active learning) baal/utils/cuda_utils.py", [
    C("return data.cuda()", "tensor_to_device", "replace", True, "return data.npu()",
      "to_cuda() is the single place baal moves batches/models; .cuda() raises on NPU host"),
    C("return data.is_cuda", "device_type", "replace", False, "return data.is_npu",
      "always False for npu tensors; only causes a redundant (no-op) to_cuda() in predict_on_batch"),
])

E("baal_modelwrapper", "baal/modelwrapper.py", "device_branch_or_abstraction",
  "baal baal/modelwrapper.py (ModelWrapper + TrainingArgs)", [
    C("use_cuda: bool = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda: bool = torch.npu.is_available()",
      "dataclass default is False on an NPU host -> training silently on CPU"),
    C("if self.args.use_cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if self.args.use_cuda and not torch.npu.is_available():",
      "would reset an explicit use_cuda=True to False on the NPU host (silent CPU fallback)"),
])

E("baal_vgg_exp", "experiments/vgg_mcdropout_cifar10.py", "explicit_replacement",
  "baal experiments/vgg_mcdropout_cifar10.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "flag drives both model.cuda() and ModelWrapper(use_cuda=...)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model transfer"),
    C('"gpu_mem_MB": torch.cuda.max_memory_allocated() // 2**20 if use_cuda else 0,', "torch_cuda_api", "replace",
      False, '"gpu_mem_MB": torch.npu.max_memory_allocated() // 2**20 if use_cuda else 0,', MEMLOG_NOTE),
])

# ---------------------------------------------------------------- VAAL / LL4AL
_V = "(args.cuda is kept as the 'use accelerator' flag, set from torch.npu.is_available() in main.py)"
E("vaal_solver", "solver.py", "explicit_replacement",
  "sinhasam/vaal solver.py (Variational Adversarial Active Learning)", [
    C("vae = vae.cuda()", "tensor_to_device", "replace", True, "vae = vae.npu()", ".cuda() raises on NPU " + _V),
    C("discriminator = discriminator.cuda()", "tensor_to_device", "replace", True,
      "discriminator = discriminator.npu()", "model transfer"),
    C("task_model = task_model.cuda()", "tensor_to_device", "replace", True, "task_model = task_model.npu()",
      "model transfer"),
    C("=labeled_imgs = labeled_imgs.cuda()", "tensor_to_device", "replace", True,
      "labeled_imgs = labeled_imgs.npu()", "batch transfer"),
    C("=unlabeled_imgs = unlabeled_imgs.cuda()", "tensor_to_device", "replace", True,
      "unlabeled_imgs = unlabeled_imgs.npu()", "batch transfer"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "batch transfer"),
    C("=lab_real_preds = lab_real_preds.cuda()", "tensor_to_device", "replace", True,
      "lab_real_preds = lab_real_preds.npu()", "BCE target transfer (VAE step)"),
    C("unlab_real_preds = unlab_real_preds.cuda()", "tensor_to_device", "replace", True,
      "unlab_real_preds = unlab_real_preds.npu()", "BCE target transfer"),
    C("labeled_imgs, unlabeled_imgs = labeled_imgs.cuda(), unlabeled_imgs.cuda()", "tensor_to_device", "replace",
      True, "labeled_imgs, unlabeled_imgs = labeled_imgs.npu(), unlabeled_imgs.npu()", "resampled batch"),
    C("=labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)", "resampled batch (labels unused but still moved)"),
    C("lab_real_preds = lab_real_preds.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "lab_real_preds = lab_real_preds.npu(non_blocking=True)", "discriminator step target"),
    C("unlab_fake_preds = unlab_fake_preds.cuda()", "tensor_to_device", "replace", True,
      "unlab_fake_preds = unlab_fake_preds.npu()", "discriminator step target"),
    C("=labeled_imgs = labeled_imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "labeled_imgs = labeled_imgs.npu(non_blocking=True)", "resampled batch (adversary)"),
    C("=unlabeled_imgs = unlabeled_imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "unlabeled_imgs = unlabeled_imgs.npu(non_blocking=True)", "resampled batch (adversary)"),
    C("# unused but kept for parity", "tensor_to_device", "replace", True,
      "labels = labels.npu(non_blocking=True)  # unused but kept for parity", "resampled labels"),
    C("best_model = best_model.cuda()", "tensor_to_device", "replace", True, "best_model = best_model.npu()",
      "final model transfer"),
    C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "validate()"),
    C("=imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "imgs = imgs.npu(non_blocking=True)", "test()"),
])

E("ll4al_main", "main.py", "explicit_replacement",
  "Mephisto405/Learning-Loss-for-Active-Learning main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("inputs = data[0].cuda()", "tensor_to_device", "replace", True, "inputs = data[0].npu()", "train batch"),
    C("labels = data[1].cuda()", "tensor_to_device", "replace", True, "labels = data[1].npu()", "train batch"),
    C("inputs, labels = inputs.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu()", "test()"),
    C("uncertainty = torch.tensor([]).cuda()", "tensor_to_device", "replace", True,
      "uncertainty = torch.tensor([]).npu()", "accumulator must sit with pred_loss"),
    C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "get_uncertainty()"),
    C("resnet18    = resnet.ResNet18(num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "resnet18    = resnet.ResNet18(num_classes=10).npu()", "backbone"),
    C("loss_module = lossnet.LossNet().cuda()", "tensor_to_device", "replace", True,
      "loss_module = lossnet.LossNet().npu()", "loss prediction module"),
])

# ---------------------------------------------------------------- Data Shapley
E("tmc_shapley", "dshap/tmc_shapley.py", "device_branch_or_abstraction",
  "amiratag/DataShapley DShap class re-implemented for torch models with one TMC worker per GPU", [
    C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'return "npu" if torch.npu.is_available() else "cpu"', "default device silently CPU on NPU host"),
    C("n_workers = max(1, torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "n_workers = max(1, torch.npu.device_count())", "unchanged: one worker instead of one per NPU (slower only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpus = torch.npu.device_count()",
      "0 on the NPU host -> every worker silently trains on the CPU"),
    C("torch.cuda.set_device(rank % n_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % n_gpus)", "per-worker device pinning"),
    C("device = torch.device('cuda', rank % n_gpus)", "device_type", "replace", True,
      "device = torch.device('npu', rank % n_gpus)", "worker device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unconditional; initialises CUDA and raises in every worker"),
])

E("knn_shapley", "dshap/knn_shapley.py", "device_branch_or_abstraction",
  "exact KNN-Shapley (Jia et al. 2019) batched on GPU, as in the KNN-Shapley / OpenDataVal code bases", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('def _to_gpu(a, dtype=torch.float32, device="cuda"):', "device_type", "replace", False,
      'def _to_gpu(a, dtype=torch.float32, device="npu"):', "private helper; every caller passes device"),
    C('def knn_shapley(x_train, y_train, x_test, y_test, K=5, batch_size=256, device="cuda",', "device_type",
      "replace", True, 'def knn_shapley(x_train, y_train, x_test, y_test, K=5, batch_size=256, device="npu",',
      "public API default; callers relying on it fail on the NPU host"),
    C("total = torch.zeros(N, dtype=torch.float64, device=device)", "unsupported_op_workaround", "replace", False,
      "total = torch.zeros(N, dtype=torch.float32, device=device)",
      "NPU has no fp64: silently computed in fp32 with a 'dtype cast replace with float' warning"),
    C("total += s.sum(0, dtype=torch.float64)", "unsupported_op_workaround", "replace", False,
      "total += s.sum(0)", "same fp64 accumulation"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("N, M, time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 30)", "torch_cuda_api", "replace", False,
      "N, M, time.time() - t0, torch.npu.max_memory_allocated() / 2 ** 30)", MEMLOG_NOTE),
    C('p.add_argument("--device", default="cuda:0")', "device_type", "replace", True,
      'p.add_argument("--device", default="npu:0")', "CLI default used by main()"),
])

E("opendataval_exp", "examples/benchmark_noisy_labels.py", "device_branch_or_abstraction",
  "opendatavalue/OpenDataVal ExperimentMediator example (noisy-label detection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu', "--gpu would be silently ignored"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and args.gpu != "" else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and args.gpu != "" else "cpu")',
      "silent CPU fallback; device goes to ModelFactory, DVRL and LAVA"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "guards a log line; unchanged it is skipped"),
    C('print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")', "torch_cuda_api",
      "replace", False, 'print(f"peak NPU memory: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")',
      "log line; with the guard ported but this line not, torch.cuda.max_memory_allocated quietly reports 0"),
])

E("dist_valuation", "valuation/dist_grad_valuation.py", "explicit_replacement",
  "LESS / gradient-similarity style DDP featurisation for data valuation (torchrun, AMP, Rademacher projection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL_* is ignored by HCCL; HCCL_ASYNC_ERROR_HANDLING already defaults to 1"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL is not available on the NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device binding"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C('num_workers=args.num_workers, pin_memory=True, pin_memory_device="cuda",', "pin_memory", "replace", True,
      'num_workers=args.num_workers, pin_memory=True, pin_memory_device="npu",',
      "pinning for a cuda device fails in the pin-memory thread on the NPU host"),
    C("optimizer = torch.optim.AdamW(ddp_model.parameters(), lr=args.lr, weight_decay=0.0)", "fused_optimizer",
      "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(ddp_model.parameters(), lr=args.lr, weight_decay=0.0)",
      "performance only: fused AdamW (msFmkTransplt advice; ~+70% optimizer memory)"),
    C("use_bf16 = args.fp16 and torch.cuda.get_device_capability(local_rank)[0] >= 8", "device_capability_check",
      "replace", True, "use_bf16 = args.fp16 and torch.npu.is_bf16_supported()",
      "CUDA compute capability has no NPU meaning (torch.cuda raises; NPU get_device_capability returns None); "
      "launcher always passes --fp16"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16 and not use_bf16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16 and not use_bf16)",
      "CUDA GradScaler disables itself with a warning on a CUDA-less host: requested loss scaling silently off"),
    C("x = x.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "x = x.npu(local_rank, non_blocking=True)", "batch transfer"),
    C("y = y.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "y = y.npu(local_rank, non_blocking=True)", "batch transfer"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16, dtype=amp_dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16, dtype=amp_dtype):",
      "cuda autocast does not apply to npu tensors: --fp16 warmup silently runs in fp32"),
    C('gen = torch.Generator(device="cuda")', "device_type", "replace", True, 'gen = torch.Generator(device="npu")',
      "generator must be on the device where randint draws"),
    C('x, y = x.to(f"cuda:{local_rank}"), y.to(f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
      'x, y = x.to(f"npu:{local_rank}"), y.to(f"npu:{local_rank}")', "featurisation batch"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "backend string comparison is not rewritten by anything; with hccl the CPU tensor reaches all_gather"),
    C("local = local.cuda()", "tensor_to_device", "replace", True, "local = local.npu()",
      "device tensor for the collective"),
    C("model.cuda(local_rank)", "tensor_to_device", "replace", True, "model.npu(local_rank)", "model transfer"),
    C('P = rademacher_projection(grad_dim, args.proj_dim, args.seed, device=f"cuda:{local_rank}")', "device_type",
      "replace", True, 'P = rademacher_projection(grad_dim, args.proj_dim, args.seed, device=f"npu:{local_rank}")',
      "projection matrix device"),
    C('state = torch.load(ck, map_location={"cuda:0": f"cuda:{local_rank}"})', "device_type", "replace", False,
      'state = torch.load(ck, map_location=f"npu:{local_rank}")',
      "checkpoints written in this run carry npu:0 locations, the cuda:0 key never matches, so every rank "
      "stages the state on npu:0 before load_state_dict copies it: works, wastes npu:0 memory (unconfirmed)"),
    C('print(f"[score] {ck}: mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", flush=True)',
      "torch_cuda_api", "replace", False,
      'print(f"[score] {ck}: mem {torch.npu.max_memory_allocated() / 2**30:.1f} GiB", flush=True)', MEMLOG_NOTE),
])

E("dist_valuation_sh", "scripts/launch_valuation.sh", "explicit_replacement",
  "torchrun launcher for the gradient valuation job with NCCL tuning", [
    C("=set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN environment (libascendcl, HCCL) must be sourced; set_env.sh appends to possibly unset vars, hence set +u"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}", "device subset selection"),
    C('NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      "NGPUS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | tr ',' '\\n' | wc -l)",
      "after the rename CUDA_VISIBLE_DEVICES is unset and set -u aborts"),
    C("if ! nvidia-smi -L > /dev/null 2>&1; then", "torch_cuda_api", "replace", True,
      "if ! npu-smi info > /dev/null 2>&1; then", "nvidia-smi is absent: the script exits 1 before launching"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "ignored by HCCL; CANN logging level instead"),
    C("=export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink setting, no meaning on HCCS"),
    C("=export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "ignored by HCCL"),
    C("=export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single node (--standalone) so NIC choice does not matter here"),
    C("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      'npu-smi info >> "${OUT}/log.txt"', "command not found -> script ends with an error under set -e"),
])

# ---------------------------------------------------------------- TracIn / influence / TRAK
E("tracin_cp", "tracin/tracin_cp.py", "device_branch_or_abstraction",
  "TracInCP (Pruthi et al. 2020) checkpoint-based influence, in the style of the reference and captum code", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('def load_checkpoint(model, path, device="cuda"):', "device_type", "replace", False,
      'def load_checkpoint(model, path, device="npu"):', "both callers pass the config device"),
    C('device = torch.device(cfg.get("device", "cuda"))', "device_type", "replace", False,
      'device = torch.device(cfg.get("device", "npu"))', "fallback only; the YAML always sets device"),
    C('device = torch.device(cfg.get("device") or "cuda")', "device_type", "replace", False,
      'device = torch.device(cfg.get("device") or "npu")', "fallback only; the YAML always sets device"),
    C("x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)",
      "hard .cuda() in the train-gradient loop (rest of the file uses the config device)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C('f"gpu-mem={torch.cuda.memory_allocated() / 2**30:.2f}GiB", flush=True)', "torch_cuda_api", "replace", False,
      'f"npu-mem={torch.npu.memory_allocated() / 2**30:.2f}GiB", flush=True)', MEMLOG_NOTE),
])

E("tracin_train", "tracin/train_checkpoints.py", "device_branch_or_abstraction",
  "checkpoint-saving CIFAR-10 trainer feeding TracIn (AMP, channels_last, TF32)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=amp_enabled):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=amp_enabled):',
      "evaluation only: cuda autocast is disabled with a warning, eval runs in fp32 (slower, still correct)"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "msFmkTransplt lists channels_last as unsupported on NPU (use contiguous); failure vs slowdown unconfirmed"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      'model = torch.compile(model, backend="aot_eager")',
      "off in the shipped config; inductor/triton codegen has no NPU path with torch_npu 2.1 (graph mode "
      "arrives in torch_npu >= 2.6), max-autotune is triton-specific"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_enabled)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_enabled)",
      "CUDA scaler disables itself on a CUDA-less host; config asks for amp"),
    C("x = x.to(device, non_blocking=True).to(memory_format=torch.channels_last)", "unsupported_op_workaround",
      "replace", False, "x = x.to(device, non_blocking=True)", "input side of the channels_last change above"),
    C("with torch.cuda.amp.autocast(enabled=amp_enabled):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp_enabled):",
      "cuda autocast does not touch npu tensors: requested fp16 training silently runs in fp32"),
])

E("tracin_config", "configs/tracin_cifar10.yaml", "explicit_replacement",
  "YAML experiment config shared by the TracIn trainer and scorer", [
    C("device: cuda:0", "device_type", "replace", True,
      "device: npu:0            # single NPU; TracIn scoring is not distributed",
      "read by torch.device(cfg['device']) in both scripts"),
])

E("influence_lissa", "pytorch_influence_functions/influence_function.py", "explicit_replacement",
  "nimarb/pytorch_influence_functions (LiSSA s_test, grad_z, hvp) with a torch.func batched path", [
    C("x, t = x.cuda(), t.cuda()", "tensor_to_device", "replace", True, "x, t = x.npu(), t.npu()",
      "gpu>=0 is kept as the 'use accelerator' flag; .cuda() raises on the NPU host"),
    C("z, t = z.cuda(), t.cuda()", "tensor_to_device", "replace", True, "z, t = z.npu(), t.npu()", "grad_z"),
    C('x = x.to(torch.device("cuda:%d" % gpu))', "device_type", "replace", True,
      'x = x.to(torch.device("npu:%d" % gpu))', "batched path"),
    C('t = t.to(torch.device("cuda:%d" % gpu))', "device_type", "replace", True,
      't = t.to(torch.device("npu:%d" % gpu))', "batched path"),
    C("per_sample = vmap(func_grad(loss_fn), in_dims=(None, None, 0, 0))(params, buffers, x, t)",
      "unsupported_op_workaround", "replace", True,
      "per_sample = {k: torch.stack(v) for k, v in _loop_per_sample_grads(loss_fn, params, buffers, x, t).items()}",
      "torch.func.vmap is ✘ for Atlas A2/A3 in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list "
      "(torch.vmap itself is listed ✔, so this is the least certain label here); batched=True is the default"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('map_location = "cuda:%d" % gpu if gpu >= 0 else "cpu"', "device_type", "replace", True,
      'map_location = "npu:%d" % gpu if gpu >= 0 else "cpu"', "s_test reload target"),
    C("model = model.cuda(config['gpu'])", "tensor_to_device", "replace", True,
      "model = model.npu(config['gpu'])", "default config has gpu=0"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a log line"),
    C('logging.info("CUDA device: %s", torch.cuda.get_device_name(torch.cuda.current_device()))', "torch_cuda_api",
      "replace", False, 'logging.info("NPU device: %s", torch.npu.get_device_name(torch.npu.current_device()))',
      "log line; must change with its guard"),
])

E("trak_core", "trak/projectors.py", "device_branch_or_abstraction",
  "MadryLab/trak trak/projectors.py (BasicProjector, CudaProjector over fast_jl, ChunkedCudaProjector)", [
    C('def vectorize(g, arr=None, device="cuda") -> Tensor:', "device_type", "replace", False,
      'def vectorize(g, arr=None, device="npu") -> Tensor:', "in-repo callers pass device"),
    C('def make_projector(grad_dim, proj_dim, seed=0, device="cuda", proj_max_batch_size=32,', "device_type",
      "replace", True, 'def make_projector(grad_dim, proj_dim, seed=0, device="npu", proj_max_batch_size=32,',
      "the fast_jl import fails on NPU, so the BasicProjector fallback allocates on this default device"),
])

E("al_gpu_utils", "src/utils/gpu_utils.py", "device_branch_or_abstraction",
  "shared utils of an active-learning benchmark repo (free-GPU picker, seeding, CUDA-event timer)", [
    C('["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"],', "torch_cuda_api", "replace",
      False, '["npu-smi", "info", "-t", "usages", "-i", "0"],',
      "FileNotFoundError is caught and device 0 returned: concurrent jobs all pile onto npu:0 "
      "(alternative: torch.npu.mem_get_info per device)"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", False,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")', "goes with the free-memory query above"),
    C("if gpu == -1 or not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu == -1 or not torch.npu.is_available():", "silent CPU fallback for every caller"),
    C('dev = torch.device(f"cuda:{gpu}")', "device_type", "replace", True, 'dev = torch.device(f"npu:{gpu}")',
      "selected device"),
    C("torch.cuda.set_device(dev)", "torch_cuda_api", "replace", True, "torch.npu.set_device(dev)",
      "fails without CUDA"),
    C('print(f"[utils] using {dev}" + (f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else ""))',
      "torch_cuda_api", "replace", False,
      'print(f"[utils] using {dev}" + (f" ({torch.npu.get_device_name(dev)})" if dev.type == "npu" else ""))',
      "log only; unchanged it just omits the device name"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "removal", False, None,
      "cuBLAS-only determinism knob; torch.use_deterministic_algorithms below is what applies on NPU"),
    C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory report says 'n/a' on NPU unchanged"),
    C("alloc = torch.cuda.memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 2 ** 20", "goes with the guard above"),
    C("reserved = torch.cuda.memory_reserved(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 2 ** 20", "goes with the guard above"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 20", "goes with the guard above"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unchanged the timer takes the wall-clock branch with no device sync, so asynchronous NPU work is "
      "silently under-timed"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot even be constructed on a CUDA-less build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("n_gpu = max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", False,
      "n_gpu = max(torch.npu.device_count(), 1)", "dataloader worker heuristic only"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):", "env report silently lists no devices"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(i)", "env report"),
    C('lines.append(f"  gpu{i}: {props.name} sm_{props.major}{props.minor} "', "device_capability_check", "replace",
      False, 'lines.append(f"  npu{i}: {props.name} "',
      "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, cube/vector core num)"),
    C('f"{props.total_memory / 2 ** 30:.0f}GiB {props.multi_processor_count} SMs")', "device_capability_check",
      "replace", False, 'f"{props.total_memory / 2 ** 30:.0f}GiB {props.cube_core_num} cube cores")',
      "no multi_processor_count on NPU properties"),
    C("if not torch.cuda.is_available():  # CPU runs stay in fp32", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():  # CPU runs stay in fp32",
      "unchanged: bf16 is never chosen on NPU (fp16 autocast instead) although A2 supports bf16"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", False,
      "return torch.npu.is_bf16_supported()",
      "reached only once the guard is ported; CUDA capability has no NPU meaning (NPU returns None)"),
])

# ---------------------------------------------------------------- ALPS (BERT cold-start AL)
_APEX = ("apex amp: works unchanged only if Ascend's patched apex is installed (it supports O1/O2 on NPU); "
         "NVIDIA apex does not. Port shown is the native torch.npu.amp route")
E("alps_active", "src/train.py", "explicit_replacement",
  "forest-snow/alps src/train.py (HF run_glue legacy style: apex fp16, DataParallel, nccl)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("from apex import amp", "amp", "replace", False, "scaler = torch.npu.amp.GradScaler()", _APEX),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "removal", False,
      None, _APEX),
    C("=model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "removal", False, None,
      "torch.nn.DataParallel is unsupported on NPU, but the branch is only reached when n_gpu > 1, which the "
      "unchanged torch.cuda.device_count() never yields there; multi-NPU should use the --local_rank DDP path"),
    C("with amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", "replace", False,
      "scaler.scale(loss).backward()", _APEX),
    C("torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)", "amp", "replace", False,
      "scaler.unscale_(optimizer); torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)", _APEX),
    C("model = torch.nn.DataParallel(model)  # eval on all visible GPUs", "unsupported_op_workaround", "removal",
      False, None, "same as in train(): unreachable while n_gpu stays 0"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "single-process path silently falls back to CPU"),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.n_gpu = 0 if args.no_cuda else min(1, torch.npu.device_count())",
      "unchanged it is 0, which keeps the single-device path (and keeps DataParallel off): correct; a literal "
      "torch.npu.device_count() port would route >1 NPU into DataParallel"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "distributed path"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "distributed path"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL not available"),
])

# ---------------------------------------------------------------- shell / docker
E("dal_run_sh", "scripts/run_all_strategies.sh", "explicit_replacement",
  "sweep launcher for deep-active-learning demo.py, one job per GPU", [
    C('mkdir -p "$LOGDIR"', "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths for the python jobs"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None, "cuBLAS-only; no effect on NPU"),
    C("CUDA_VISIBLE_DEVICES=$gpu nohup python demo.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu nohup python demo.py \\",
      "ignored by the NPU runtime: every job of a batch lands on npu:0"),
])

E("valuation_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile of the data-valuation toolkit on nvidia/cuda devel base", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "needs a CANN base image (driver mounted at run time); CUDA base has no Ascend runtime"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6"', "custom_cuda_extension", "removal", False, None,
      "only consumed by nvcc extension builds"),
    C("RUN pip install torch==2.1.0+cu118 torchvision==0.16.0+cu118 --index-url https://download.pytorch.org/whl/cu118",
      "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
      "+cu118 wheels do not exist for aarch64 and are the wrong torch build for torch_npu"),
    C("COPY requirements.txt /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install " + NPU_PIN + " pyyaml",
      "torch-npu matching torch 2.1.0 / CANN 8.3.RC1"),
    C('RUN pip install "traker[fast]==0.3.2" opendataval==1.2.1', "custom_cuda_extension", "replace", True,
      "RUN pip install traker==0.3.2 opendataval==1.2.1",
      "the [fast] extra builds fast_jl with nvcc: pip (and the image build) fails"),
    C("RUN cd coreset/csrc && python setup.py install", "custom_cuda_extension", "removal", True, None,
      "CUDAExtension build aborts without CUDA_HOME; kcenter_greedy.py falls back to torch without it"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
      "NVIDIA container runtime variable; Ascend devices are passed with ASCEND_VISIBLE_DEVICES / --device"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "same ENV statement"),
])
