# Labels for probe206: fastai / fastbook / DeOldify code on NVIDIA GPUs -> Ascend NPU (torch_npu).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_ENTRY = "registers the npu device/torch.npu before any 'npu' device is used (autoload only from torch_npu 2.5.1; Ascend still recommends the explicit import)"
IMPORT_LIB = "defensive import in a library module; the entry script normally imports torch_npu first, and autoload covers torch_npu >= 2.5.1"
EMPTY_CACHE = "no-op on an NPU host (CUDA never initialised), so the NPU caching allocator is not released; memory hygiene only"

# ---------------------------------------------------------------- fastai v2 library modules
E("fastai_torch_core", "fastai/torch_core.py", "device_branch_or_abstraction",
  "fastai v2 fastai/torch_core.py (setup_cuda, set_seed, random-state helpers, default_device, to_device)", [
    C("=from .torch_imports import *", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", IMPORT_LIB),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif torch.npu.is_available(): torch.npu.set_device(int(os.environ.get('DEFAULT_GPU') or 0))",
      "setup_cuda() silently does nothing on an NPU host (the DEFAULT_GPU that fastai.launch passes each rank is ignored, so ranks share the default device); add an NPU branch that honours it"),
    C("try: torch.cuda.manual_seed_all(s)", "torch_cuda_api", "replace", False,
      "try: torch.npu.manual_seed_all(s)",
      "queued lazily and never applied on NPU; torch.manual_seed above already seeds registered privateuse1 devices in recent torch (unconfirmed in knowledge)"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "npu_only_addition", False,
      "torch.use_deterministic_algorithms(True)",
      "cudnn flags are accepted but have no effect on NPU; reproducible=True needs torch's deterministic switch there (unconfirmed that it covers every NPU kernel)"),
    C("'torch_cuda_state':torch.cuda.get_rng_state_all(),", "torch_cuda_api", "replace", True,
      "'torch_cuda_state':torch.npu.get_rng_state_all(),",
      "returns [] on an NPU host, so no_random() silently fails to save/restore the NPU generator state (key name kept for compatibility)"),
    C("torch.cuda.set_rng_state_all(torch_cuda_state)", "torch_cuda_api", "replace", True,
      "torch.npu.set_rng_state_all(torch_cuda_state)",
      "pairs with get_rng_state_all: NPU RNG state is never restored"),
    C("if torch.cuda.is_available() or _has_mps(): use = True", "device_type", "replace", True,
      "if torch.cuda.is_available() or torch.npu.is_available() or _has_mps(): use = True",
      "default_device() only knows CUDA/MPS; on an NPU host every DataLoaders/Learner defaults to cpu silently"),
    C("if torch.cuda.is_available(): return torch.device(torch.cuda.current_device())", "device_type", "add_branch", True,
      "if torch.npu.is_available(): return torch.device('npu', torch.npu.current_device())",
      "NPU branch next to the CUDA one so default_device()/to_device() return the current npu"),
  ])

E("fastai_fp16", "fastai/callback/fp16.py", "explicit_replacement",
  "fastai v2 fastai/callback/fp16.py (MixedPrecision on torch.cuda.amp, NonNativeMixedPrecision)", [
    C("=from ..basics import *", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", IMPORT_LIB),
    C("from torch.cuda.amp import GradScaler,autocast", "amp", "replace", True,
      "from torch.npu.amp import GradScaler,autocast",
      "CUDA autocast/GradScaler disable themselves when CUDA is unavailable, so to_fp16() silently trains in fp32 on NPU"),
    C("if torch.cuda.is_available() and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", False,
      "if torch.npu.is_available() and not torch.npu.is_bf16_supported():",
      "the bf16 guard is skipped on NPU (not a failure); port so unsupported parts (e.g. older Atlas training cards) raise clearly"),
    C("assert self.dls.device.type == 'cuda', \"Mixed-precision training requires a GPU, remove the call `to_fp16`\"", "device_type", "replace", True,
      "assert self.dls.device.type in ('cuda', 'npu'), \"Mixed-precision training requires a GPU/NPU, remove the call `to_fp16`\"",
      "to_non_native_fp16() asserts on an npu DataLoaders device"),
  ])

E("fastai_distributed", "fastai/distributed.py", "explicit_replacement",
  "fastai v2 fastai/distributed.py (ParallelTrainer, setup_distrib, DistributedDL, distrib_ctx on accelerate)", [
    C("=from .basics import *", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu", IMPORT_LIB),
    C("def before_fit(self): self.learn.model = DataParallel(self.learn.model, device_ids=self.device_ids)", "unsupported_op_workaround", "replace", True,
      "def before_fit(self): raise NotImplementedError('nn.DataParallel is not supported on Ascend NPU; use distrib_ctx()/to_distributed()')",
      "torch.nn.DataParallel is marked unsupported in Ascend's API list and msFmkTransplt docs; parallel_ctx()/to_parallel() must go through DDP"),
    C("torch.cuda.set_device(int(gpu))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(gpu))", "raises on a host without CUDA"),
    C("if num_distrib() > 0: torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "if num_distrib() > 0: torch.distributed.init_process_group(backend='hccl', init_method='env://')",
      "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("t = LongTensor(t).cuda() # nccl only works with cuda tensors", "tensor_to_device", "replace", True,
      "t = LongTensor(t).npu() # hccl only works with npu tensors",
      "DistributedDL broadcasts the shuffled indices from a device tensor; .cuda() raises on NPU"),
  ])

E("fastai_launch", "fastai/launch.py", "explicit_replacement",
  "fastai v2 fastai/launch.py (`python -m fastai.launch` process spawner)", [
    C("import subprocess, torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "launch is an entry point (python -m fastai.launch) and calls torch.npu.device_count() at once; " + IMPORT_ENTRY),
    C("gpus = list(range(torch.cuda.device_count())) if gpus=='all' else gpus.split(',')", "torch_cuda_api", "replace", True,
      "gpus = list(range(torch.npu.device_count())) if gpus=='all' else gpus.split(',')",
      "device_count() is 0 on an NPU host, so --gpus=all spawns no training process at all"),
  ])

E("fastai_qrnn", "fastai/text/models/qrnn.py", "kernel_rewrite",
  "fastai v2 fastai/text/models/qrnn.py (QRNN with a JIT-built CUDA forget-mult kernel and a Python fallback)", [
    C("return load(name=name, sources=[path/f for f in files], build_directory=Config().model/'qrnn')", "custom_cuda_extension", "replace", False,
      "return importlib.import_module(name)  # prebuilt Ascend C op, built with torch_npu.utils.cpp_extension.NpuExtension",
      "JIT nvcc build cannot work on Ascend (cpp_extension.load is ✘ on A2/A3); only reached from the CUDA dispatch path, so not a failure"),
    C("forget_mult_cuda = _LazyBuiltModule('forget_mult_cuda', ['forget_mult_cuda.cpp', 'forget_mult_cuda_kernel.cu'])", "custom_cuda_extension", "replace", False,
      "forget_mult_npu = _LazyBuiltModule('forget_mult_npu', ['forget_mult_npu.cpp', 'forget_mult_kernel.asc'])",
      "the .cu kernel needs an Ascend C rewrite (or torch ops) to get a fast path on NPU"),
    C("bwd_forget_mult_cuda = _LazyBuiltModule('bwd_forget_mult_cuda', ['bwd_forget_mult_cuda.cpp', 'bwd_forget_mult_cuda_kernel.cu'])", "custom_cuda_extension", "replace", False,
      "bwd_forget_mult_npu = _LazyBuiltModule('bwd_forget_mult_npu', ['bwd_forget_mult_npu.cpp', 'bwd_forget_mult_kernel.asc'])",
      "backwards-direction kernel, same rewrite"),
    C("return cuda_class.apply if x.device.type == 'cuda' else cpu_func", "custom_cuda_extension", "replace", False,
      "return cuda_class.apply if x.device.type in ('cuda', 'npu') else cpu_func",
      "npu tensors take the Python forget-mult loop, which is correct but slow (one small op per time step); route them to the rewritten kernel"),
  ])

# ---------------------------------------------------------------- fastai v2 examples / user code
E("ex_train_imagenette", "nbs/examples/train_imagenette.py", "explicit_replacement",
  "fastai v2 nbs/examples/train_imagenette.py (call_parse script, rank0_first, parallel_ctx/distrib_ctx)", [
    C("=from fastai.basics import *", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_ENTRY),
    C("return partial(OptimWrapper, opt=partial(torch.optim.AdamW, betas=(mom, sqrmom), eps=eps, fused=fused))", "fused_optimizer", "replace", False,
      "return partial(OptimWrapper, opt=partial(torch_npu.optim.NpuFusedAdamW if fused else torch.optim.AdamW, betas=(mom, sqrmom), eps=eps))",
      "unconfirmed whether torch's fused=True path dispatches for npu in the installed torch (_fused_adamw_ does have an NPU kernel); NpuFusedAdamW is Ascend's fused optimizer"),
    C("=n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count()", "0 on an NPU host, so gpu=None and the run silently falls back to CPU"),
    C("if gpu is not None: torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True,
      "if gpu is not None: torch.npu.set_device(gpu)", "raises without CUDA once n_gpu is ported"),
    C("device = torch.device('cuda', gpu) if gpu is not None else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu', gpu) if gpu is not None else torch.device('cpu')", "DataLoaders device"),
    C("n_gpu = torch.cuda.device_count() if gpu is None else 1", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count() if gpu is None else 1", "selects the parallel/distributed context"),
    C("print(f\"peak memory: {torch.cuda.max_memory_allocated(device)/2**30:.2f} GiB\")", "torch_cuda_api", "replace", True,
      "print(f\"peak memory: {torch.npu.max_memory_allocated(device)/2**30:.2f} GiB\")",
      "passing an npu device to a torch.cuda memory API raises ('Expected a cuda device')"),
  ])

E("ex_migrating_pytorch", "nbs/examples/migrating_pytorch.py", "explicit_replacement",
  "fastai v2 nbs/examples/migrating_pytorch.py (PyTorch MNIST example wrapped in a fastai Learner)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("cbs=CudaCallback)", "tensor_to_device", "replace", True,
      "cbs=[])  # DataLoaders already on npu; TrainEvalCallback moves the model to dls.device",
      "CudaCallback moves model and batches to fastai's default_device(), i.e. back to cpu on an NPU host"),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()", "False on an NPU host: silent CPU training"),
    C("device = torch.device(\"cuda\" if use_cuda else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu\" if use_cuda else \"cpu\")", "device string"),
    C("data = DataLoaders(train_loader, test_loader).cuda()", "tensor_to_device", "replace", True,
      "data = DataLoaders(train_loader, test_loader).to(device)",
      "fastai's DataLoaders.cuda() targets default_device(), which is cpu on an NPU host"),
    C("state = torch.load(fname, map_location='cuda:0' if use_cuda else 'cpu')", "device_type", "replace", True,
      "state = torch.load(fname, map_location='npu:0' if use_cuda else 'cpu')", "map_location cuda:0 fails without CUDA"),
  ])

E("kaggle_rossmann_tabular", "examples/tabular/rossmann.py", "explicit_replacement",
  "fastai course lesson 6 Rossmann tabular_learner as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", "lazy no-op on NPU; torch.manual_seed already seeds the npu generator (unconfirmed in knowledge)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", "raises without CUDA"),
    C("device = torch.device(f'cuda:{args.gpu}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.gpu}')", "device string"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=True)", "evaluates False on NPU so batches are not pinned; msFmkTransplt recommends pin_memory=True with workers on NPU (perf)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("print(f\"trained in {time.time()-start:.1f}s on {torch.cuda.get_device_name(args.gpu)}\")", "torch_cuda_api", "replace", True,
      "print(f\"trained in {time.time()-start:.1f}s on {torch.npu.get_device_name(args.gpu)}\")", "raises without CUDA"),
  ])

E("course22_is_it_a_bird", "course22/01_is_it_a_bird.py", "device_branch_or_abstraction",
  "Practical Deep Learning 2022 lesson 1 'Is it a bird?' notebook exported to a script", [
    C("=from fastai.vision.all import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("=if not torch.cuda.is_available():", "device_type", "add_branch", True,
      "if torch.npu.is_available(): return torch.device('npu:0')",
      "check_gpu() returns cpu on an NPU host; add the NPU branch before the CUDA one"),
    C("if not torch.cuda.is_available(): return 16", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): return 64 if torch.npu.get_device_properties(0).total_memory / 1024**3 > 14 else default",
      "falls back to bs=16 on NPU: works, just a smaller batch"),
    C("if torch.cuda.get_device_capability()[0] >= 7:", "device_capability_check", "replace", True,
      "if device.type == 'npu' or torch.cuda.get_device_capability()[0] >= 7:",
      "get_device_capability raises without CUDA, and torch.npu's returns None unless TORCH_NPU_DEVICE_CAPABILITY is set; fp16 is fine on Ascend"),
    C("print(torch.cuda.memory_summary(device=device, abbreviated=True))", "torch_cuda_api", "replace", True,
      "print(torch.npu.memory_summary(device=device, abbreviated=True))", "an npu device passed to a torch.cuda API raises"),
  ])

E("paddy_road_to_top", "kaggle/paddy/road_to_the_top.py", "explicit_replacement",
  "Jeremy Howard's Kaggle 'Road to the Top' paddy-disease notebook (fastkaggle, timm, report_gpu)", [
    C("=from fastai.vision.all import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')", "env_var", "replace", False,
      "os.environ.setdefault('ASCEND_RT_VISIBLE_DEVICES', '0')",
      "only meant to keep the second card free for another kernel; this process uses device 0 by default either way"),
    C("print(torch.cuda.list_gpu_processes())", "torch_cuda_api", "replace", False,
      "print(torch.npu.memory_summary(abbreviated=True))",
      "not provided by torch_npu; on an NPU host it just prints a pynvml/driver message (diagnostics only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("try: print(subprocess.run(['nvidia-smi'], capture_output=True, text=True).stdout)", "torch_cuda_api", "replace", False,
      "try: print(subprocess.run(['npu-smi', 'info'], capture_output=True, text=True).stdout)",
      "nvidia-smi is missing on Ascend hosts; FileNotFoundError is caught (diagnostics only)"),
    C("batch_tfms=aug_transforms(size=size, min_scale=0.75), bs=64//accum, device='cuda')", "device_type", "replace", True,
      "batch_tfms=aug_transforms(size=size, min_scale=0.75), bs=64//accum, device='npu')", "device string"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated() / 1e9",
      "returns 0 on an NPU host, so the memory survey that decides which models fit is silently wrong"),
    C("gc.collect(); torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "gc.collect(); torch.npu.empty_cache()", EMPTY_CACHE),
  ])

E("fastbook_05_pet_breeds", "scripts/05_pet_breeds.py", "transfer_to_npu",
  "fastbook chapter 5 (pet breeds) notebook exported with nbconvert", [
    C("=import gc", "import_torch_npu", "npu_only_addition", True,
      "import torch, torch_npu; from torch_npu.contrib import transfer_to_npu",
      "must come before `from fastbook import *`: fastai binds torch.cuda.amp.GradScaler/autocast at import time, so transfer_to_npu has to patch torch.cuda first; the .cuda(), torch.cuda.amp and empty_cache lines are then redirected"),
  ])

E("fastbook_10_nlp", "scripts/10_nlp.py", "explicit_replacement",
  "fastbook chapter 10 (ULMFiT on IMDb) notebook exported as a script", [
    C("=from fastai.text.all import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("parser.add_argument('--device', default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu:0')", "default device string"),
    C("print(f\"running on {device}: {torch.cuda.get_device_name(device)}\")", "torch_cuda_api", "replace", True,
      "print(f\"running on {device}: {torch.npu.get_device_name(device)}\")", "raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("logits = learn.model.eval()(ids.to('cuda'))[0]", "tensor_to_device", "replace", True,
      "logits = learn.model.eval()(ids.to(device))[0]", "'cuda' device string"),
    C("print(f\"max memory allocated: {torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GiB\")", "torch_cuda_api", "replace", True,
      "print(f\"max memory allocated: {torch.npu.max_memory_allocated(device) / 1024**3:.2f} GiB\")",
      "an npu device passed to a torch.cuda memory API raises"),
  ])

E("fastbook_13_convolutions", "scripts/13_convolutions.py", "explicit_replacement",
  "fastbook chapter 13 (convolutions) notebook exported as a script", [
    C("=from fastai.vision.all import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("xb_gpu, ek_gpu = xb.cuda(), edge_kernels.cuda()", "tensor_to_device", "replace", True,
      "xb_gpu, ek_gpu = xb.npu(), edge_kernels.npu()", ".cuda() raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("torch.cuda.synchronize(); elapsed = time.perf_counter()-start", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(); elapsed = time.perf_counter()-start", "raises without CUDA"),
    C("feats = learn.model[0](xb.cuda())", "tensor_to_device", "replace", True,
      "feats = learn.model[0](xb.npu())", ".cuda() raises without CUDA"),
  ])

E("fastbook_17_foundations", "scripts/17_foundations.py", "explicit_replacement",
  "fastbook chapter 17 (foundations: matmul from scratch, timing) exported as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("g1, g2 = big1.cuda(), big2.cuda()", "tensor_to_device", "replace", True, "g1, g2 = big1.npu(), big2.npu()", ".cuda() raises without CUDA"),
    C("dev = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "dev = 'npu' if torch.npu.is_available() else 'cpu'", "silently CPU on an NPU host"),
  ])

E("fastbook_19_learner", "scripts/19_learner.py", "explicit_replacement",
  "fastbook chapter 19 (a fastai Learner from scratch) exported as a script", [
    C("=from fastbook import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("for p in self.parameters(): p.data = p.data.cuda()", "tensor_to_device", "replace", True,
      "for p in self.parameters(): p.data = p.data.npu()",
      "the book's own Module.cuda(); its body must move parameters to the npu (the method name and its caller SetupLearnerCB can stay)"),
  ])

E("unet_camvid", "examples/segmentation/camvid_unet.py", "explicit_replacement",
  "fastai lesson 3 CamVid dynamic U-Net as a training script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)", "raises without CUDA"),
    C("device = torch.device(\"cuda:0\")", "device_type", "replace", True,
      "device = torch.device(f\"npu:{args.gpu}\")", "device string"),
    C("if args.channels_last: learn = learn.to_channelslast()", "unsupported_op_workaround", "replace", False,
      "if args.channels_last and device.type == 'cuda': learn = learn.to_channelslast()",
      "msFmkTransplt docs say channels_last is not supported on NPU (use contiguous); opt-in flag, unconfirmed whether it errors or only slows down"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("print(f\"peak GPU memory: {torch.cuda.max_memory_reserved()/2**30:.1f} GiB\")", "torch_cuda_api", "replace", False,
      "print(f\"peak NPU memory: {torch.npu.max_memory_reserved()/2**30:.1f} GiB\")",
      "prints 0.0 on an NPU host (allocator never initialised); final log line only"),
  ])

E("bear_classifier_app", "app/server.py", "device_branch_or_abstraction",
  "fast.ai course deployment template: Starlette app serving an exported learner (bear classifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("if use_gpu and torch.cuda.is_available():", "device_type", "add_branch", True,
      "if use_gpu and torch.npu.is_available(): return torch.device('npu', int(os.environ.get('GPU_ID', 0)))",
      "get_device() returns cpu on an NPU host; add an NPU branch"),
    C("if device.type == 'cuda': torch.cuda.synchronize()", "torch_cuda_api", "add_branch", False,
      "if device.type == 'npu': torch.npu.synchronize()", "warm-up just isn't waited for on NPU; harmless"),
    C("=if device.type == 'cuda':", "torch_cuda_api", "add_branch", False,
      "elif device.type == 'npu': info.update(npu=torch.npu.get_device_name(device), mem_allocated_mb=torch.npu.memory_allocated(device) // 2**20)",
      "/health just omits device details on NPU"),
    C("with torch.no_grad(), torch.autocast(device_type='cuda', dtype=torch.float16, enabled=device.type == 'cuda'):", "amp", "replace", False,
      "with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type in ('cuda', 'npu')):",
      "explicitly disabled off CUDA, so batch inference runs fp32 on NPU: correct but slower"),
  ])

E("gpu_monitor_callbacks", "utils/gpu_callbacks.py", "explicit_replacement",
  "user utility module of fastai v2 callbacks for GPU memory/timing/NVML logging", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("pynvml.nvmlInit()", "torch_cuda_api", "replace", False,
      "raise ImportError('no NVML on Ascend')  # NvmlLogger: port to torch.npu.utilization()/npu-smi",
      "guarded: NvmlLogger disables itself without an NVIDIA driver"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()",
      "unlike empty_cache, ipc_collect initialises CUDA first and raises on a host without it"),
    C("if not torch.cuda.is_available(): return \"no GPU\"", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available(): return \"no NPU\"", "gpu_summary just reports 'no GPU' on NPU"),
    C("device = device if device is not None else torch.cuda.current_device()", "torch_cuda_api", "replace", False,
      "device = device if device is not None else torch.npu.current_device()", "reached only once the guard above is ported"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info(device)", "reached only once the guard is ported"),
    C("alloc, reserved = torch.cuda.memory_allocated(device), torch.cuda.memory_reserved(device)", "torch_cuda_api", "replace", False,
      "alloc, reserved = torch.npu.memory_allocated(device), torch.npu.memory_reserved(device)", "reached only once the guard is ported"),
    C("self.enabled = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.enabled = torch.npu.is_available()", "GPUMemTrace silently disables itself on NPU (monitoring only)"),
    C("if self.enabled: torch.cuda.reset_peak_memory_stats(self.dev)", "torch_cuda_api", "replace", False,
      "if self.enabled: torch.npu.reset_peak_memory_stats(self.dev)", "reached only once enabled is ported"),
    C("self.batch_peaks[self.epoch].append(b2mb(torch.cuda.max_memory_allocated(self.dev)))", "torch_cuda_api", "replace", False,
      "self.batch_peaks[self.epoch].append(b2mb(torch.npu.max_memory_allocated(self.dev)))", "reached only once enabled is ported"),
    C("peak = b2mb(torch.cuda.max_memory_allocated(self.dev))", "torch_cuda_api", "replace", False,
      "peak = b2mb(torch.npu.max_memory_allocated(self.dev))", "reached only once enabled is ported"),
    C("self.use_events = self.dls.device.type == 'cuda'", "device_type", "replace", True,
      "self.use_events = self.dls.device.type in ('cuda', 'npu')",
      "on NPU it falls back to perf_counter with no synchronisation, so it times the asynchronous launch, not the batch: wrong ms and img/s"),
    C("self.start_ev = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.start_ev = torch.npu.Event(enable_timing=True)", "needed once use_events admits npu"),
    C("self.end_ev = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "self.end_ev = torch.npu.Event(enable_timing=True)", "needed once use_events admits npu"),
    C("visible = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", "replace", False,
      "visible = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')", "only in the NVML path, which is disabled on NPU"),
    C("cmd = ['nvidia-smi', f\"--query-gpu={','.join(fields)}\", '--format=csv,noheader,nounits']", "torch_cuda_api", "replace", False,
      "cmd = ['npu-smi', 'info']  # different output format, needs its own parser",
      "returns [] on an Ascend host (FileNotFoundError caught)"),
  ])

E("kaggle_planet_multilabel", "kaggle/planet/train_planet.py", "explicit_replacement",
  "Kaggle Planet multi-label fastai v2 pipeline with a custom concat-pool head and manual AMP TTA loop", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("self.max = nn.AdaptiveMaxPool2d(1)", "unsupported_op_workaround", "replace", False,
      "self.max = GlobalMaxPool()  # forward: x.amax(dim=(-2, -1), keepdim=True)",
      "nn.AdaptiveMaxPool2d is ✘ in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list, yet aten adaptive_max_pool2d has an NPU kernel in op-plugin: unconfirmed, the global-max rewrite is safe"),
    C("xb = xb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "xb = xb.npu(non_blocking=True)", ".cuda() raises without CUDA"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():", "CUDA autocast is disabled without CUDA, so TTA silently runs fp32 on NPU"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently CPU on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
  ])

# ---------------------------------------------------------------- fastai v1 legacy
E("v1_train_cifar", "examples/train_cifar.py", "explicit_replacement",
  "fastai v1 examples/train_cifar.py (WRN-22 CIFAR-10 with fastai.launch and to_distributed)", [
    C("=from fastai.vision import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("device=torch.device('cuda', gpu)).normalize(cifar_stats)", "device_type", "replace", True,
      "device=torch.device('npu', gpu)).normalize(cifar_stats)", "DataBunch device"),
    C("learn.model = learn.model.cuda()", "tensor_to_device", "replace", True,
      "learn.model = learn.model.npu()", ".cuda() raises without CUDA"),
    C("print(f\"done; peak memory {torch.cuda.max_memory_allocated()/2**30:.2f}GB\")", "torch_cuda_api", "replace", False,
      "print(f\"done; peak memory {torch.npu.max_memory_allocated()/2**30:.2f}GB\")", "prints 0.00 on NPU; log line only"),
  ])

E("v1_distributed", "fastai/distributed.py", "explicit_replacement",
  "fastai v1 fastai/distributed.py (ParallelTrainer, DistributedTrainer, setup_distrib)", [
    C("=from .torch_core import *", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("def on_train_begin(self, **kwargs): self.learn.model = DataParallel(self.learn.model)", "unsupported_op_workaround", "replace", True,
      "def on_train_begin(self, **kwargs): raise NotImplementedError('nn.DataParallel is unsupported on Ascend NPU; use to_distributed()')",
      "torch.nn.DataParallel is ✘ in Ascend's API list"),
    C("if not torch.cuda.is_available(): warnings.warn('CUDA is not available, check your drivers - training will continue on CPU', ResourceWarning)", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available(): warnings.warn('NPU is not available, check CANN/driver - training will continue on CPU', ResourceWarning)",
      "misleading warning only"),
    C("=torch.cuda.set_device(int(gpu))", "torch_cuda_api", "replace", True, "torch.npu.set_device(int(gpu))", "raises without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable; HCCL on Ascend"),
  ])

E("v1_lesson7_superres", "course-v3/nbs/dl1/lesson7_superres.py", "explicit_replacement",
  "fast.ai course-v3 lesson 7 super-resolution notebook (fastai v1, VGG16-BN feature loss)", [
    C("=from fastai.vision import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("defaults.device = torch.device('cuda', 0)", "device_type", "replace", True,
      "defaults.device = torch.device('npu', 0)", "fastai v1 puts every DataBunch/Learner on defaults.device"),
    C("=torch.cuda.set_device(0)", "torch_cuda_api", "replace", True, "torch.npu.set_device(0)", "raises without CUDA"),
    C("vgg_m = vgg16_bn(True).features.cuda().eval()", "tensor_to_device", "replace", True,
      "vgg_m = vgg16_bn(True).features.npu().eval()", "loss network must sit next to the U-Net"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("state = torch.load(path/'models'/'superres_2b_fp16.pth', map_location='cuda')", "device_type", "replace", True,
      "state = torch.load(path/'models'/'superres_2b_fp16.pth', map_location='npu')", "map_location 'cuda' fails without CUDA"),
  ])

E("v1_mem_utils", "fastai/utils/mem.py", "device_branch_or_abstraction",
  "fastai v1 fastai/utils/mem.py (pynvml-based gpu_mem_get*, GPUMemTrace)", [
    C("=from ..imports.torch import *", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      "use_npu = hasattr(torch, 'npu') and torch.npu.is_available()",
      "everything below keys off use_gpu, which is False on an NPU host; add a parallel use_npu flag"),
    C("torch.ones((1, 1)).cuda()", "tensor_to_device", "add_branch", True,
      "torch.ones((1, 1)).npu() if use_npu else torch.ones((1, 1)).cuda()", "preload_pytorch() raises without CUDA"),
    C("if not use_gpu: return GPUMemory(0, 0, 0)", "torch_cuda_api", "add_branch", True,
      "if use_npu: free, total = torch.npu.mem_get_info(id if id is not None else torch.npu.current_device()); return GPUMemory(*map(b2mb, [total, free, total - free]))",
      "NVML has no Ascend equivalent; without an NPU branch gpu_mem_get reports 0MB and callers (e.g. the superres test-size choice) pick wrong sizes"),
    C("if not use_gpu: return []", "torch_cuda_api", "add_branch", True,
      "if use_npu: return [gpu_mem_get(i) for i in range(torch.npu.device_count())]", "gpu_with_max_free_mem() returns (None, 0) on NPU otherwise"),
    C("torch.cuda.empty_cache() # release cached blocks so nvml reports them as free", "torch_cuda_api", "add_branch", False,
      "(torch.npu if use_npu else torch.cuda).empty_cache()",
      "without emptying the NPU cache, mem_get_info under-reports free memory; heuristic only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "(torch.npu if use_npu else torch.cuda).empty_cache()", "same for the used-memory variant"),
    C("assert torch.cuda.is_available(), \"pytorch CUDA is required\"", "torch_cuda_api", "replace", True,
      "assert use_gpu or use_npu, \"pytorch CUDA or torch_npu is required\"", "GPUMemTrace asserts on an NPU host"),
    C("gpu_handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())", "torch_cuda_api", "add_branch", True,
      "gpu_handle = None if use_npu else pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())  # npu: poll torch.npu.mem_get_info",
      "pynvml is never loaded on NPU: the peak-monitor thread dies with NameError once the assert is ported"),
  ])

E("v1_ulmfit_imdb", "examples/train_imdb_ulmfit.py", "explicit_replacement",
  "fastai v1 ULMFiT IMDb script with nn.DataParallel, QRNN option and fp16", [
    C("=from fastai.text import *", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("n = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n = 1  # nn.DataParallel is unsupported on NPU: multi-NPU goes through fastai.launch + to_distributed",
      "0 on NPU, so the script trains on one device: works but uses one card"),
    C("learn.model = nn.DataParallel(learn.model)", "unsupported_op_workaround", "removal", False, None,
      "nn.DataParallel is ✘ on Ascend; unreachable on NPU as written (n == 0), so it only costs multi-card speed"),
    C("defaults.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "defaults.device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "fastai v1 default device; silently CPU on an NPU host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
  ])

# ---------------------------------------------------------------- DeOldify
E("deoldify_device", "deoldify/_device.py", "explicit_replacement",
  "DeOldify deoldify/_device.py (device.set(DeviceId.GPU0) via CUDA_VISIBLE_DEVICES)", [
    C("os.environ['CUDA_VISIBLE_DEVICES']=''", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES']=''",
      "CPU mode already works on NPU hosts because fastai v1 never picks the npu by itself; unconfirmed how an empty ASCEND_RT_VISIBLE_DEVICES is parsed"),
    C("os.environ['CUDA_VISIBLE_DEVICES']=str(device.value)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES']=str(device.value)",
      "device.set(DeviceId.GPU3) is otherwise ignored and work lands on npu:0"),
    C("torch.backends.cudnn.benchmark=False", "device_type", "npu_only_addition", True,
      "import torch_npu; from fastai.torch_core import defaults; defaults.device = torch.device('npu', 0)",
      "fastai v1 sets defaults.device from torch.cuda.is_available(), so every DeOldify learner (training and inference) silently runs on CPU unless the device abstraction sets it"),
    C("return torch.device('cuda:0') if self.is_gpu() else torch.device('cpu')", "device_type", "replace", True,
      "return torch.device('npu:0') if self.is_gpu() else torch.device('cpu')", "device string (index 0 after visibility remap)"),
  ])

E("deoldify_filters", "deoldify/filters.py", "explicit_replacement",
  "DeOldify deoldify/filters.py (BaseFilter/ColorizerFilter, OOM fallback)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM fallback still works (NPU OOM messages contain 'memory'), but the NPU cache is not released"),
  ])

E("deoldify_visualize", "deoldify/visualize.py", "explicit_replacement",
  "DeOldify deoldify/visualize.py (ModelImageVisualizer, VideoColorizer, get_*_colorizer)", [
    C("=from fastai.vision import *", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_LIB),
    C("total_gb = torch.cuda.get_device_properties(0).total_memory / 1024**3", "torch_cuda_api", "replace", True,
      "total_gb = torch.npu.get_device_properties(0).total_memory / 1024**3",
      "is_gpu() is True after device.set(GPU0), and get_device_properties raises without CUDA (torch_npu keeps total_memory)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
  ])

E("deoldify_train_stable", "ColorizeTrainingStable.py", "explicit_replacement",
  "DeOldify ColorizeTrainingStable.ipynb (NoGAN training) exported as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_ENTRY),
    C("print(f\"training on {torch.cuda.get_device_name(0)} ({torch.cuda.device_count()} visible)\")", "torch_cuda_api", "replace", True,
      "print(f\"training on {torch.npu.get_device_name(0)} ({torch.npu.device_count()} visible)\")", "get_device_name raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("gc.collect(); torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "gc.collect(); torch.npu.empty_cache()", EMPTY_CACHE),
    C("print(f\"max GPU memory: {torch.cuda.max_memory_allocated()/2**30:.1f} GB\")", "torch_cuda_api", "replace", False,
      "print(f\"max NPU memory: {torch.npu.max_memory_allocated()/2**30:.1f} GB\")", "prints 0.0 on NPU; log line only"),
  ])

E("deoldify_environment", "environment.yml", "explicit_replacement",
  "DeOldify environment.yml (conda: fastai v1, pytorch channel, cudatoolkit)", [
    C("=- pytorch=1.7.1", "torch_cuda_api", "replace", True,
      "    - torch==1.11.0  # moved to the pip section, CPU/aarch64 build paired with torch-npu",
      "torch_npu has no 1.7 build (1.8.1/1.11.0 are the 1.x lines) and pairs with PyPI/CPU torch, not the conda CUDA build; fastai 1.0.61 on torch 1.11 is unconfirmed"),
    C("=- torchvision=0.8.2", "torch_cuda_api", "replace", True,
      "    - torchvision==0.12.0  # pip, matches torch 1.11.0",
      "conda torchvision pulls the conda CUDA pytorch back in and must match the new torch"),
    C("=- cudatoolkit=11.0", "torch_cuda_api", "removal", False, None,
      "CUDA runtime is dead weight on Ascend (CANN comes from the host/base image); unconfirmed whether it even solves on aarch64"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==1.11.0.post14",
      "torch_npu wheel for torch 1.11.0 (branch v1.11.0-6.0.rc2, CANN 8.0.RC2)"),
  ])

E("deoldify_dockerfile", "Dockerfile", "explicit_replacement",
  "DeOldify Dockerfile (nvidia/cuda base, conda env, API server)", [
    C("FROM nvidia/cuda:11.0.3-cudnn8-runtime-ubuntu20.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.rc2-910b-ubuntu22.04-py3.8",
      "needs a CANN toolkit image (which also sets the set_env.sh variables as ENV lines) instead of the CUDA runtime; image tag illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0",
      "read by the NVIDIA container runtime only; on Ascend, devices come from Ascend Docker Runtime or --device /dev/davinciN flags (unconfirmed which this deployment uses)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility,video", "env_var", "removal", False, None, "NVIDIA container runtime only"),
    C("RUN python -c \"import torch; assert torch.version.cuda is not None, 'CPU-only torch in image'; print(torch.__version__, torch.version.cuda)\"", "torch_cuda_api", "replace", True,
      "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
      "torch.version.cuda is None for the torch build torch_npu uses, so the image build fails"),
  ])

E("course_requirements", "requirements.txt", "explicit_replacement",
  "fast.ai course machine requirements.txt (CUDA 12.1 wheel index, fastai 2.7, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel on x86 (plain PyPI torch on aarch64), not the cu121 build"),
    C("torch==2.1.0+cu121", "torch_cuda_api", "replace", True,
      "torch==2.1.0", "CUDA local-version build; torch-npu 2.1.0.postN requires torch 2.1.0"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12", "the torch_npu wheel itself (branch v2.1.0-7.0.0, CANN 8.1.RC1)"),
    C("accelerate>=0.21.0", "distributed_framework", "replace", False,
      "accelerate>=0.22.0",
      "fastai's distrib_ctx runs on accelerate, which knows NPU only from 0.22.0; pip normally resolves a newer release anyway"),
    C("nvidia-ml-py>=12.535.77", "torch_cuda_api", "removal", False, None,
      "pure-Python NVML bindings install fine but have no driver to talk to on Ascend"),
    C("pynvml>=11.5.0", "torch_cuda_api", "removal", False, None, "same as nvidia-ml-py"),
  ])

E("run_imagenette_sh", "scripts/run_imagenette_dist.sh", "explicit_replacement",
  "shell launcher for fastai imagenette leaderboard runs with python -m fastai.launch", [
    C("#   WOOF=1 SIZE=192 EPOCHS=20 ./scripts/run_imagenette_dist.sh --mixup 0.2", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; placed before `set -u` because set_env.sh appends to possibly-unset variables (unconfirmed that it trips nounset)"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1,2,3}",
      "fastai.launch spawns one process per visible device: unchanged, all NPUs of the node are used"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-2}", "logging verbosity only"),
    C("export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}", "env_var", "removal", False, None, "no effect under HCCL"),
    C("NGPU=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      "NGPU=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi is missing; with `set -euo pipefail` the script exits here"),
    C("NPROC=$(echo \"$CUDA_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)", "env_var", "replace", True,
      "NPROC=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)", "unbound under `set -u` once the export is renamed"),
    C("echo \"== $NPROC of $NGPU GPUs: $CUDA_VISIBLE_DEVICES | size=$SIZE epochs=$EPOCHS woof=$WOOF bs=$BS lr=$LR\"", "env_var", "replace", True,
      "echo \"== $NPROC of $NGPU NPUs: $ASCEND_RT_VISIBLE_DEVICES | size=$SIZE epochs=$EPOCHS woof=$WOOF bs=$BS lr=$LR\"", "same unbound variable"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "command not found aborts the script under `set -e`"),
  ])
