"""Labels for probe314 (time-series classification, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `sub` must match exactly one line
("=text" = the stripped line equals text). See ../README.md for the labelling policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# tsai (timeseriesAI/tsai) library modules
# --------------------------------------------------------------------------------------------
E("tsai_imports", "tsai/imports.py", "explicit_replacement",
  "tsai `tsai/imports.py` (computer_setup, get_gpu_memory via nvidia-smi, memory helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "central import module of the package; the torch.npu.* replacements below need torch_npu loaded "
      "(mandatory before torch_npu 2.5.1 autoload)"),
    C("['nvidia-smi', '--query-gpu=memory.total'", "torch_cuda_api", "replace", False,
      "result = subprocess.check_output(['npu-smi', 'info', '-t', 'memory', '-i', '0'])",
      "nvidia-smi does not exist on an Ascend host; FileNotFoundError is caught so the report is just empty "
      "(diagnostic only). Output format of npu-smi differs, parser must change too"),
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n_gpus = torch.npu.device_count()",
      "reports 0 devices on an NPU host; printout only"),
    C("torch.cuda.get_device_name(i)", "torch_cuda_api", "replace", False,
      "print(f'NPU {i}           : {torch.npu.get_device_name(i)}')",
      "printout only (inside try/except)"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "diagnostic helper: returns 'no GPU available' on an NPU host"),
    C("alloc = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 1024**3",
      "diagnostic; torch.cuda.memory_allocated returns 0 when CUDA was never initialised"),
    C("reserved = torch.cuda.memory_reserved(device)", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 1024**3",
      "diagnostic; returns 0 on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised; NPU cache is never freed"),
  ])

E("tsai_utils", "tsai/utils.py", "explicit_replacement",
  "tsai `tsai/utils.py` (tensor/array helpers, random_seed, device and GPU-memory helpers)", [
    C("torch.cuda.manual_seed(seed_value)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed_value)",
      "lazy no-op without CUDA; torch.manual_seed above probably already seeds the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed_value)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed_value)",
      "lazy no-op without CUDA (unconfirmed whether NPU RNG is otherwise seeded)"),
    C("use_cuda = ifnone(use_cuda, torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "use_cuda = ifnone(use_cuda, torch.npu.is_available())",
      "False on an NPU host -> every caller silently runs on CPU"),
    C("device_id = ifnone(device_id, torch.cuda.current_device())", "torch_cuda_api", "replace", True,
      "device_id = ifnone(device_id, torch.npu.current_device())",
      "torch.cuda.current_device() raises (Torch not compiled with CUDA)"),
    C("return torch.device(f'cuda:{device_id}')", "device_type", "replace", True,
      "return torch.device(f'npu:{device_id}')",
      "cuda device string"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):",
      "info helper; loop is simply empty on an NPU host"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(i)",
      "info helper"),
    C("sm_{props.major}{props.minor}", "device_capability_check", "replace", False,
      "out.append(f\"{i}: {props.name} | {props.total_memory / 1024**3:.1f} GB\")",
      "NPU device properties only carry name/total_memory/L2_cache_size/core counts; major/minor are empty"),
    C("alloc = torch.cuda.memory_allocated(device)", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 1024**3",
      "reports 0 without CUDA; diagnostic"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 1024**3",
      "reports 0 without CUDA; diagnostic"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)",
      "with device=None it resolves the current CUDA device and raises on a CPU-only torch build"),
    C("=[b.cuda(non_blocking=True) for b in bs]", "tensor_to_device", "replace", True,
      "[b.npu(non_blocking=True) for b in bs]",
      ".cuda() fails on an NPU host"),
    C("_ = [b.cuda(non_blocking=True) for b in bs]", "tensor_to_device", "replace", True,
      "_ = [b.npu(non_blocking=True) for b in bs]",
      ".cuda() fails on an NPU host"),
  ])

E("tsai_minirocket", "tsai/models/MINIROCKET_Pytorch.py", "explicit_replacement",
  "tsai `tsai/models/MINIROCKET_Pytorch.py` (MiniRocketFeatures, get_minirocket_features chunked GPU transform)", [
    C("use = torch.cuda.is_available() if use_cuda is None else use_cuda", "torch_cuda_api", "replace", True,
      "use = torch.npu.is_available() if use_cuda is None else use_cuda",
      "False on an NPU host -> features silently computed on CPU"),
    C("device = torch.device(torch.cuda.current_device()) if use else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu', torch.npu.current_device()) if use else torch.device('cpu')",
      "torch.cuda.current_device() raises without CUDA; an int ordinal would also be read as a CUDA device"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guard for the cache release below; False on NPU so nothing is freed (memory only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "memory housekeeping only"),
  ])

E("tsai_rocket", "tsai/models/ROCKET_Pytorch.py", "explicit_replacement",
  "tsai `tsai/models/ROCKET_Pytorch.py` (ROCKET as a bank of nn.Conv1d kernels)", [
    C("device = ifnone(device, default_device())", "device_type", "replace", True,
      "device = ifnone(device, torch.device('npu') if torch.npu.is_available() else torch.device('cpu'))",
      "fastai's default_device() only knows CUDA/MPS and returns CPU on an Ascend host -> 10k convs silently on CPU"),
    C("xb = xb.cuda()", "tensor_to_device", "replace", True,
      "xb = xb.npu()",
      ".cuda() fails on an NPU host"),
  ])

E("tsai_callback", "tsai/callback/core.py", "explicit_replacement",
  "tsai `tsai/callback/core.py` (TransformScheduler, ShowGraph) plus GPU-memory / NVML utilisation callbacks", [
    C("self.enabled = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.enabled = torch.npu.is_available()",
      "monitoring callback silently disables itself on NPU; no effect on training"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "only reached once the guard above is ported"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(self.device)",
      "only reached once the guard is ported"),
    C("self.mem_alloc.append(torch.cuda.memory_allocated(self.device)", "torch_cuda_api", "replace", False,
      "self.mem_alloc.append(torch.npu.memory_allocated(self.device) / 2**20)",
      "monitoring only"),
    C("self.mem_peak.append(torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", False,
      "self.mem_peak.append(torch.npu.max_memory_allocated(self.device) / 2**20)",
      "monitoring only"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(self.gpu_index) if _HAS_NVML else None", "torch_cuda_api", "replace", False,
      "self.handle = self.gpu_index if torch.npu.is_available() else None",
      "NVML does not see Ascend devices (import guarded -> callback silently inactive)"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)", "torch_cuda_api", "replace", False,
      "util = torch.npu.utilization(self.handle)",
      "torch.npu.utilization replaces NVML utilisation; value is an int, so `.gpu` below goes too"),
  ])

E("tsai_inference", "tsai/inference.py", "explicit_replacement",
  "tsai `tsai/inference.py` (load_all / get_X_preds) plus a plain-PyTorch predict and latency benchmark", [
    C("device = torch.device('cuda', device)", "device_type", "replace", True,
      "device = torch.device('npu', device)",
      "int device -> CUDA device"),
    C("=device = default_device()", "device_type", "replace", True,
      "device = torch.device('npu', torch.npu.current_device()) if torch.npu.is_available() else torch.device('cpu')",
      "fastai default_device() returns CPU on an Ascend host -> learner silently loaded on CPU"),
    C("device = ifnone(device, 'cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = ifnone(device, 'npu' if torch.npu.is_available() else 'cpu')",
      "silently CPU"),
    C("model = model.cuda().eval()", "tensor_to_device", "replace", True,
      "model = model.npu().eval()",
      ".cuda() fails"),
    C("xb = torch.as_tensor(toarray(X[:bs]), dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "xb = torch.as_tensor(toarray(X[:bs]), dtype=torch.float32).npu()",
      ".cuda() fails"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize raises on a CPU-only torch build"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)",
      "CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()  # wait for the queued kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the queued kernels before reading the events",
      "raises without CUDA"),
  ])

E("tsai_train_script", "tutorial_nbs/scripts/train_ucr_benchmark.py", "transfer_to_npu",
  "tsai tutorial-notebook export: TSClassifier/ts_learner benchmark loop over UCR/UEA datasets", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu",
      "all device logic lives inside fastai (default_device(), MixedPrecision via torch.cuda.amp); on an Ascend "
      "host fastai silently trains on CPU. transfer_to_npu redirects torch.cuda.* to NPU; it must come before "
      "`from tsai.all import *` because fastai binds torch.cuda.amp.autocast/GradScaler at import time"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "not rewritten by transfer_to_npu; ignored by the Ascend runtime -> --gpu N silently runs on device 0. "
      "Must still be set before the first NPU call"),
  ])

# --------------------------------------------------------------------------------------------
# Time-Series-Library (thuml) -- classification task
# --------------------------------------------------------------------------------------------
E("tsl_run", "run.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library `run.py` (argparse: --use_gpu/--gpu/--gpu_type/--use_multi_gpu/--devices, device pick)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (wrap in try/except ImportError to keep CUDA hosts working)",
      "entry point; torch.npu must be registered before the device is chosen"),
    C("parser.add_argument('--gpu_type', type=str, default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--gpu_type', type=str, default='npu' if hasattr(torch, 'npu') and torch.npu.is_available() else 'cuda', help='gpu type')  # cuda, npu or mps",
      "the shipped scripts never pass --gpu_type, so the default decides which branch Exp_Basic takes"),
    C("if torch.cuda.is_available() and args.use_gpu:", "torch_cuda_api", "add_branch", True,
      "elif args.use_gpu and args.gpu_type == 'npu' and torch.npu.is_available():",
      "without an NPU branch args.device falls through to cpu/mps"),
    C("args.device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "add_branch", True,
      "args.device = torch.device('npu:{}'.format(args.gpu))",
      "NPU counterpart inside the new branch"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "elif args.gpu_type == 'npu': torch.npu.empty_cache()",
      "cache release between runs; nothing breaks without it"),
    C("torch.cuda.empty_cache()  # test-only run", "torch_cuda_api", "add_branch", False,
      "elif args.gpu_type == 'npu': torch.npu.empty_cache()",
      "cache release; memory only"),
  ])

E("tsl_exp_basic", "exp/exp_basic.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library `exp/exp_basic.py` (model_dict, _acquire_device)", [
    C("from models import Mamba", "custom_cuda_extension", "replace", False,
      "from models import MambaSimple as Mamba  # mamba_ssm selective-scan kernels are CUDA-only",
      "only reached with --model Mamba; mamba_ssm/causal_conv1d have no NPU build (pure-PyTorch MambaSimple exists)"),
    C("if self.args.use_gpu and self.args.gpu_type == 'cuda':", "device_type", "add_branch", True,
      "elif self.args.use_gpu and self.args.gpu_type == 'npu':",
      "with gpu_type='npu' the method would silently fall through to CPU"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(', "env_var", "add_branch", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(',
      "mirrors the CUDA branch; not needed for correctness because npu:{gpu} already picks the card, and it only "
      "takes effect if set before the NPU runtime initialises"),
    C("device = torch.device('cuda:{}'.format(self.args.gpu))", "device_type", "add_branch", True,
      "device = torch.device('npu:{}'.format(self.args.gpu))",
      "NPU device for the new branch"),
  ])

E("tsl_exp_classification", "exp/exp_classification.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library `exp/exp_classification.py` (UEA classification train/vali/test, optional AMP)", [
    C("model = nn.DataParallel(model, device_ids=self.args.device_ids)", "distributed_framework", "replace", True,
      "model = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.args.gpu])",
      "torch.nn.DataParallel is unsupported on Ascend (use DDP with hccl, launched by torchrun); "
      "only hit with --use_multi_gpu"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type=self.device.type, dtype=torch.float16):",
      "CUDA autocast is disabled (with a warning) on an NPU host -> fp32, slower but correct"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA; must be ported together with the autocast lines "
      "(fp16 without loss scaling can underflow)"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", False,
      "with torch.autocast(device_type=self.device.type, dtype=torch.float16):",
      "silently fp32 on NPU"),
  ])

E("tsl_attention", "layers/SelfAttention_Family.py", "device_branch_or_abstraction",
  "thuml/Time-Series-Library `layers/SelfAttention_Family.py` (DSAttention, FullAttention, ProbAttention, AttentionLayer)",
  [])

E("tsl_scripts_timesnet", "scripts/classification/TimesNet.sh", "explicit_replacement",
  "thuml/Time-Series-Library `scripts/classification/TimesNet.sh` (10 UEA datasets)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend, but with value 0 and run.py's default --gpu 0 the same card is used either way"),
    C("=model_name=TimesNet", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell/container already sources it"),
  ])

# --------------------------------------------------------------------------------------------
# InceptionTime / dl-4-tsc style PyTorch baselines
# --------------------------------------------------------------------------------------------
E("inceptiontime_model", "inception.py", "explicit_replacement",
  "PyTorch InceptionTime ports (Inception / InceptionBlock / InceptionTime modules, ensemble helper)", [
    C("m.load_state_dict(torch.load(p, map_location='cuda:0'))", "device_type", "replace", True,
      "m.load_state_dict(torch.load(p, map_location='npu:0'))",
      "deserialising onto a CUDA device fails without CUDA"),
    C("return ens.cuda()", "tensor_to_device", "replace", True,
      "return ens.npu()",
      ".cuda() fails"),
    C("xb = torch.from_numpy(X[i:i + batch_size]).float().cuda()", "tensor_to_device", "replace", True,
      "xb = torch.from_numpy(X[i:i + batch_size]).float().npu()",
      ".cuda() fails"),
  ])

E("inceptiontime_train", "main.py", "explicit_replacement",
  "PyTorch InceptionTime training script for the UCR 2018 archive (module-level cuda:0 device, .cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point"),
    C("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "model silently built on CPU, then the .cuda() batch moves fail"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA (unconfirmed whether torch.manual_seed already seeds the NPU)"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(), pin_memory_device='npu')",
      "evaluates False on NPU -> no pinned host buffers; throughput only"),
    C("pin_memory=torch.cuda.is_available(), persistent_workers=False)", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available(), pin_memory_device='npu', persistent_workers=False)",
      "throughput only"),
    C("xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xb, yb = xb.npu(non_blocking=True), yb.npu(non_blocking=True)",
      ".cuda() fails"),
    C("=xb = xb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xb = xb.npu(non_blocking=True)",
      ".cuda() fails"),
    C("=yb = yb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "yb = yb.npu(non_blocking=True)",
      ".cuda() fails"),
    C("mem = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2**20 if torch.npu.is_available() else 0",
      "log line; prints 0 on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU; memory only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "only chooses which message is printed"),
    C("print(f'Using {torch.cuda.get_device_name(0)}')", "torch_cuda_api", "replace", False,
      "print(f'Using {torch.npu.get_device_name(0)}')",
      "reached once the guard above is ported; message only"),
  ])

E("dl4tsc_resnet", "classifiers/resnet.py", "explicit_replacement",
  "PyTorch port of hfawaz/dl-4-tsc `classifiers/resnet.py` (Classifier_RESNET with Keras-like fit/predict, "
  "legacy torch.cuda.FloatTensor / Variable idioms)", [
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "module-level switch; False on NPU"),
    C("FloatTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor", "device_type", "replace", True,
      "FloatTensor = torch.npu.FloatTensor if use_cuda else torch.FloatTensor",
      "legacy CUDA tensor type used by .type(); torch.npu exposes the same legacy types "
      "(alternatively .to(device, torch.float32))"),
    C("LongTensor = torch.cuda.LongTensor if use_cuda else torch.LongTensor", "device_type", "replace", True,
      "LongTensor = torch.npu.LongTensor if use_cuda else torch.LongTensor",
      "legacy CUDA tensor type"),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      ".cuda() fails"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "fit() prints 'error' and exits on any host without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C("map_location=lambda storage, loc: storage.cuda(0)", "device_type", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location='npu:0'))",
      "storage.cuda() fails without CUDA"),
  ])

E("dl4tsc_utils", "utils/utils.py", "explicit_replacement",
  "hfawaz/dl-4-tsc `utils/utils.py` (UCR/MTS readers, metrics, logs) with GPU selection helpers", [
    C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", "removal", False, None,
      "no Ascend counterpart; harmless if left"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu_id)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gpu_id)",
      "ignored by the Ascend runtime -> every run lands on device 0"),
    C("out = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.free'", "torch_cuda_api", "replace", True,
      "free = [torch.npu.mem_get_info(i)[0] for i in range(torch.npu.device_count())]",
      "nvidia-smi is absent on Ascend hosts -> FileNotFoundError at start-up (main.py calls this by default)"),
    C("free = [int(x) for x in out.decode().strip().split('\\n')]", "torch_cuda_api", "removal", True, None,
      "parses nvidia-smi output; replaced by the mem_get_info line above"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "only decides what is written to device.txt"),
    C("name = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", "replace", False,
      "name = torch.npu.get_device_name(torch.npu.current_device())",
      "log file content only"),
  ])

E("dl4tsc_main", "main.py", "explicit_replacement",
  "hfawaz/dl-4-tsc `main.py` (run_all / single experiment dispatcher) with automatic GPU pick", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point; classifiers use torch.npu after the port"),
    C("print('Using GPU', gpu_id, '| torch', torch.__version__, '| cuda available:', torch.cuda.is_available())",
      "torch_cuda_api", "replace", False,
      "print('Using NPU', gpu_id, '| torch', torch.__version__, '| npu available:', torch.npu.is_available())",
      "log line"),
  ])

# --------------------------------------------------------------------------------------------
# ROCKET / MiniRocket GPU ports
# --------------------------------------------------------------------------------------------
E("rocket_gpu", "rocket_gpu/rocket_torch.py", "explicit_replacement",
  "PyTorch GPU port of angus924/rocket (numpy kernel generation, grouped conv1d application, legacy cuda tensor types)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "module-level device switch; False on NPU -> whole transform silently on CPU"),
    C("dtype = torch.cuda.FloatTensor", "device_type", "replace", True,
      "dtype = torch.npu.FloatTensor",
      "legacy CUDA tensor type used with .type(); needed as soon as the guard is ported "
      "(whether Tensor.type() accepts torch.npu.FloatTensor is unconfirmed; .to(DEVICE, torch.float32) is the safe form)"),
    C("DEVICE = torch.device('cuda')", "device_type", "replace", True,
      "DEVICE = torch.device('npu')",
      "cuda device string"),
  ])

E("rocket_bench", "rocket_gpu/benchmark_ucr.py", "explicit_replacement",
  "angus924/rocket `reproduce_experiments_ucr.py` adapted to time the GPU transform with torch.cuda.synchronize", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point"),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")',
      "default device string used for every run"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "timer sync; raises without CUDA. Timings are only meaningful with the NPU sync (async launch)"),
    C('def run(training_data, test_data, num_runs=10, num_kernels=10_000, batch_size=256, device="cuda:0"):',
      "device_type", "replace", False,
      'def run(training_data, test_data, num_runs=10, num_kernels=10_000, batch_size=256, device="npu:0"):',
      "default only; __main__ always passes --device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C("torch.cuda.get_device_name(arguments.device)", "torch_cuda_api", "replace", True,
      'print(f"device: {arguments.device} ({torch.npu.get_device_name(arguments.device)})")',
      "raises without CUDA"),
    C("torch.cuda.synchronize(arguments.device)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(arguments.device)",
      "raises without CUDA / with an npu device string"),
    C("peak = torch.cuda.max_memory_allocated(arguments.device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(arguments.device) / 2**20",
      "log only (returns 0 when CUDA is not initialised)"),
    C("torch.cuda.reset_peak_memory_stats(arguments.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(arguments.device)",
      "calls into the CUDA allocator; raises on a CPU-only torch build, and rejects an npu device"),
  ])

E("minirocket_softmax", "code/softmax_gpu.py", "explicit_replacement",
  "angus924/minirocket `code/softmax.py` (chunked logistic regression for large datasets) in a GPU + AMP variant", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script"),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently CPU"),
    C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check",
      "replace", False,
      "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
      "unchanged it just picks fp16 on NPU (works); a naive is_available-only port would hit "
      "get_device_capability() -> None on NPU. bf16 is the better choice on Atlas A2"),
    C("cache_X = torch.zeros((args[\"cache_size\"], _num_features)).pin_memory()", "pin_memory", "replace", False,
      "cache_X = torch.zeros((args[\"cache_size\"], _num_features)).pin_memory(device='npu')",
      "which accelerator a bare .pin_memory() targets depends on the torch version (unconfirmed; may raise on the "
      "torch 2.1 line)"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=args["use_amp"] and AMP_DTYPE == torch.float16)', "amp", "replace", False,
      'scaler = torch.npu.amp.GradScaler(enabled=args["use_amp"] and AMP_DTYPE == torch.float16)',
      "disables itself without CUDA; port together with autocast"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)  # no max-autotune: its GEMM autotuning relies on Triton",
      "only with --compile; Inductor on NPU needs torch_npu >= 2.6 and has no CUDA Triton templates (unconfirmed "
      "whether max-autotune fails or just falls back)"),
    C('with torch.cuda.amp.autocast(enabled=args["use_amp"], dtype=AMP_DTYPE):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", enabled=args["use_amp"], dtype=AMP_DTYPE):',
      "CUDA autocast disabled on NPU -> fp32"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(", "amp", "replace", False,
      'with torch.no_grad(), torch.autocast(device_type="npu", enabled=args["use_amp"], dtype=AMP_DTYPE):',
      "fp32 on NPU otherwise"),
  ])

# --------------------------------------------------------------------------------------------
# TS2Vec (yuezhihan/ts2vec)
# --------------------------------------------------------------------------------------------
E("ts2vec_utils", "utils.py", "device_branch_or_abstraction",
  "yuezhihan/ts2vec `utils.py` (init_dl_program: threads, seeds, device list, cudnn/tf32 flags)", [
    C("if t_device.type == 'cuda':", "device_type", "add_branch", False,
      "elif t_device.type == 'npu':",
      "set_device + per-device seed for NPU devices; NPU index 0 works without it"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "assert torch.npu.is_available()",
      "inside the new NPU branch"),
    C("torch.cuda.set_device(t_device)", "torch_cuda_api", "add_branch", False,
      "torch.npu.set_device(t_device)",
      "inside the new NPU branch; matters for device index > 0"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "add_branch", False,
      "torch.npu.manual_seed(seed)",
      "reproducibility only"),
  ])

E("ts2vec_model", "ts2vec.py", "explicit_replacement",
  "yuezhihan/ts2vec `ts2vec.py` (TS2Vec class: encoder + AveragedModel, fit/encode with max-pool encodings)", [
    C("device='cuda',", "device_type", "replace", False,
      "device='npu',",
      "default only; train.py passes the device explicitly, library users calling TS2Vec(...) without device= "
      "would fail"),
  ])

E("ts2vec_train", "train.py", "explicit_replacement",
  "yuezhihan/ts2vec `train.py` (UCR/UEA/forecast/anomaly loaders, --gpu int, init_dl_program)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point"),
    C("device = init_dl_program(args.gpu, seed=args.seed, max_threads=args.max_threads)", "device_type", "replace", True,
      "device = init_dl_program(f'npu:{args.gpu}', seed=args.seed, max_threads=args.max_threads)",
      "an int ordinal becomes torch.device(0) = cuda:0 on the torch 2.1-era stack (msFmkTransplt/transfer_to_npu "
      "rewrite int device args for this reason) -> AssertionError in init_dl_program"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "log only"),
    C("print(f\"Peak GPU memory: {torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "print(f\"Peak NPU memory: {torch.npu.max_memory_allocated(device) / 2**30:.2f} GB\")",
      "log only"),
  ])

E("ts2vec_scripts", "scripts/ucr_multi_gpu.sh", "explicit_replacement",
  "ts2vec `scripts/ucr.sh` extended to shard the 128 UCR datasets over several GPUs", [
    C("# Results end up in training/", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; must come before `set -u` (set_env.sh expands possibly unset variables). "
      "Not needed when the shell/container already sources it"),
    C("NUM_GPUS=${1:-$(nvidia-smi --list-gpus | wc -l)}", "torch_cuda_api", "replace", True,
      "NUM_GPUS=${1:-$(npu-smi info -l | grep -c 'NPU ID')}",
      "nvidia-smi missing -> with `set -euo pipefail` the default invocation aborts"),
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None,
      "no Ascend counterpart"),
    C("CUDA_VISIBLE_DEVICES=${gpu} python -u train.py", "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=${gpu} python -u train.py "${ds}" UCR --loader UCR --batch-size 8 --repr-dims 320 \\',
      "ignored by the Ascend runtime -> every shard runs on device 0 (--gpu 0)"),
  ])

# --------------------------------------------------------------------------------------------
# TS-TCC (emadeldeen24/TS-TCC)
# --------------------------------------------------------------------------------------------
E("tstcc_main", "main.py", "explicit_replacement",
  "emadeldeen24/TS-TCC `main.py` (--device string, self_supervised / fine_tune / train_linear modes)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point"),
    C("parser.add_argument('--device', default='cuda', type=str,", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', type=str,",
      "default device string; everything downstream is device-agnostic (.to(device))"),
  ])

E("tstcc_trainer", "trainer/trainer.py", "explicit_replacement",
  "emadeldeen24/TS-TCC `trainer/trainer.py` (Trainer / model_train / model_evaluate, device passed in)", [])

# --------------------------------------------------------------------------------------------
# 1D ResNet baseline (hsd1503/resnet1d style) with a torchrun DDP trainer
# --------------------------------------------------------------------------------------------
E("resnet1d_ddp", "train_ddp.py", "explicit_replacement",
  "DDP/torchrun trainer for hsd1503/resnet1d-style 1D ResNets on large TSC datasets (AMP, SyncBN, fused AdamW)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry point; registers the hccl backend"),
    C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", "replace", False,
      "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
      "NCCL variable is ignored; the HCCL watchdog variable already defaults to 1"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank,",
      "NCCL is not available on Ascend"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False,
      "dist.barrier()",
      "unconfirmed: older torch rejects device_ids for non-NCCL backends; plain barrier() is safe on hccl"),
    C("if dist.get_backend() == 'nccl':", "dist_backend", "replace", True,
      "if dist.get_backend() in ('nccl', 'hccl'):",
      "backend-string comparisons are not rewritten by any tool; with hccl the stats tensor would be created on "
      "CPU and the hccl all_reduce would reject it"),
    C("return torch.device('cuda', torch.cuda.current_device())", "device_type", "replace", True,
      "return torch.device('npu', torch.npu.current_device())",
      "cuda device"),
    C("stats = torch.tensor([loss_sum, correct, total], dtype=torch.float64", "unsupported_op_workaround", "replace", True,
      "stats = torch.tensor([loss_sum, correct, total], dtype=torch.float32, device=reduce_device())",
      "torch.distributed.all_reduce on Ascend supports bf16/fp16/fp32/int32/int64/bool only (no fp64)"),
    C("x = x.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "x = x.npu(local_rank, non_blocking=True)",
      ".cuda() fails"),
    C("y = y.cuda(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "y = y.npu(local_rank, non_blocking=True)",
      ".cuda() fails"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=amp):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=amp):",
      "CUDA autocast is disabled on an NPU host -> --amp silently trains in fp32"),
    C("x, y = x.to(local_rank, non_blocking=True), y.to(local_rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "x, y = x.to(f'npu:{local_rank}', non_blocking=True), y.to(f'npu:{local_rank}', non_blocking=True)",
      "an int passed to Tensor.to() is a CUDA ordinal (the case transfer_to_npu/msFmkTransplt rewrite)"),
    C("with torch.autocast('cuda', dtype=torch.float16, enabled=amp):", "amp", "replace", False,
      "with torch.autocast('npu', dtype=torch.float16, enabled=amp):",
      "fp32 on NPU otherwise"),
    C("pin_memory=True, drop_last=True, persistent_workers=True)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=True, persistent_workers=True)",
      "on the torch 2.1-era stack DataLoader pins only when torch.cuda.is_available(); without pin_memory_device pinning is silently skipped on NPU (newer torch asks torch.accelerator)"),
    C("num_workers=args.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu')",
      "throughput only"),
    C("model = model.cuda(local_rank)", "tensor_to_device", "replace", True,
      "model = model.npu(local_rank)",
      ".cuda() fails"),
    C("fused=True)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "no _fused_adamw kernel in the NPU op lists; fused=True may error or fall back (unconfirmed). "
      "NpuFusedAdamW is the NPU tensor-fused optimizer"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "disables itself on NPU; port together with autocast"),
    C("map_location=f'cuda:{local_rank}'", "device_type", "replace", True,
      "ckpt = torch.load(args.resume, map_location=f'npu:{local_rank}')",
      "--resume fails when mapping onto a CUDA device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises without CUDA; also needed for honest epoch timing (async launch)"),
    C("torch.cuda.synchronize(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(local_rank)",
      "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2**30",
      "log only (0 on NPU)"),
  ])

E("resnet1d_launch", "launch_ddp.sh", "explicit_replacement",
  "torchrun launcher for the 1D-ResNet DDP trainer, with the NCCL tuning variables such clusters carry", [
    C("=set -e", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu/HCCL; not needed when the node already sources it"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "default equals the identity mapping for 4 local ranks; a user override would be silently ignored"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob has no effect on HCCL; CANN log level is the nearest equivalent"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "no HCCL counterpart (HCCL uses the NPU RoCE ports, host NIC only for rendezvous)"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node: HCCL ignores NCCL_SOCKET_IFNAME and picks the host NIC by its own order; set "
      "HCCL_SOCKET_IFNAME (or HCCL_IF_IP) if that order picks the wrong NIC"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
      "NVLink-specific; no HCCL counterpart"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi missing -> `set -e` aborts the launcher before torchrun"),
  ])

E("resnet1d_model", "resnet1d.py", "explicit_replacement",
  "hsd1503/resnet1d `resnet1d.py` (MyConv1dPadSame, BasicBlock, ResNet1D) with its synthetic smoke test", [
    C('device_str = "cuda"', "device_type", "replace", False,
      'device_str = "npu"',
      "__main__ smoke test only; unchanged it silently runs on CPU"),
    C('device = torch.device(device_str if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", False,
      'device = torch.device(device_str if torch.npu.is_available() else "cpu")',
      "smoke test only"),
    C("summary(model, (1, 3000), device=device_str)", "unsupported_op_workaround", "replace", False,
      'summary(model.cpu(), (1, 3000), device="cpu"); model.to(device)',
      "torchsummary only accepts 'cuda' or 'cpu' (asserts on 'npu'); smoke test only"),
  ])

# --------------------------------------------------------------------------------------------
# environment / packaging files
# --------------------------------------------------------------------------------------------
E("tsai_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of a tsai/fastai development setup on CUDA 11.8", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "NVIDIA channel only serves CUDA packages"),
    C("=- pytorch=2.1.2", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu wheels exist for torch 2.1.0 (2.1.0.postN), not 2.1.2; torch must match the torch_npu version"),
    C("=- torchvision=0.16.2", "import_torch_npu", "replace", True,
      "- torchvision=0.16.0",
      "0.16.2 pins torch 2.1.2; follows the torch downgrade"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "replace", True,
      "- cpuonly",
      "pulls the CUDA build of pytorch; Ascend hosts use the CPU build of torch plus torch_npu"),
    C("=- cudnn", "torch_cuda_api", "removal", False, None,
      "CUDA library, unused on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "- torch-npu==2.1.0.post12",
      "torch_npu pin matching torch 2.1.0 (pick the post release matching the installed CANN)"),
    C("=- pynvml", "torch_cuda_api", "removal", False, None,
      "NVML bindings; only used by an optional, import-guarded monitoring callback"),
  ])

E("tsl_requirements", "requirements.txt", "explicit_replacement",
  "thuml/Time-Series-Library `requirements.txt` with a CUDA wheel index and the Mamba CUDA packages", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; cu118 wheels do not exist for aarch64 Ascend servers and are the wrong build on x86"),
    C("=torch==2.1.2+cu118", "torch_cuda_api", "replace", True,
      "torch==2.1.0",
      "CUDA build pin; torch must equal the torch_npu base version (2.1.0)"),
    C("=einops==0.8.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "torch_npu pin (placed with the torch block; line order is irrelevant in requirements files)"),
    C("mamba-ssm==1.2.0.post1", "custom_cuda_extension", "removal", True, None,
      "builds CUDA kernels with nvcc -> `pip install -r requirements.txt` fails on an Ascend host"),
    C("causal-conv1d==1.2.0.post2", "custom_cuda_extension", "removal", True, None,
      "CUDA extension, same failure"),
  ])

E("tsl_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile for Time-Series-Library experiments on an nvidia/cuda devel image", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.10",
      "CUDA base image has neither CANN nor the Ascend driver user-space; CANN images set the toolkit ENV"),
    C("TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "device exposure is done by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or --device /dev/davinciN mounts"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime setting"),
    C("torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && \\",
      "CUDA wheel index / version that has no torch_npu counterpart"),
    C("pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post12",
      "torch_npu must be installed in the image"),
    C("RUN MAX_JOBS=4 pip install", "custom_cuda_extension", "removal", True, None,
      "compiles CUDA kernels with nvcc; the image build fails on an Ascend base"),
  ])
