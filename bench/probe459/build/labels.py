"""Labels for probe459 (neural cellular automata / artificial life, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `required` uses the complete-port
counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TORCH_NPU = "import torch_npu"
NPU_IMPORT_NOTE = ("entry script: load the NPU backend next to `import torch` so torch.npu.* and the 'npu' "
                   "device exist (autoloaded only from torch_npu 2.5.1 on)")
SEED_NOTE = ("torch.cuda.manual_seed* is lazily queued and silently ignored on a host without CUDA; "
             "torch.manual_seed on the line above already seeds the accelerator generators "
             "(that it covers the NPU generator is unconfirmed in the knowledge base)")
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache is a no-op when CUDA was never initialised; cache hygiene only"

# --------------------------------------------------------------------------------------------
# Project 1: Growing Neural Cellular Automata, community PyTorch port of the Distill notebook
# --------------------------------------------------------------------------------------------
E("gnca_model", "lib/CAModel.py", "explicit_replacement",
  "PyTorch port of Growing NCA (Mordvintsev et al. 2020) lib/CAModel.py: CAModel with Sobel perception", [])

E("gnca_vis", "lib/utils_vis.py", "explicit_replacement",
  "PyTorch port of Growing NCA lib/utils_vis.py: SamplePool, emoji loading, image/video helpers (numpy only)", [])

E("gnca_train", "training.py", "explicit_replacement",
  "PyTorch port of Growing NCA training.py: pool training with damage, module-level device, DataParallel option", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('device = torch.device("cuda:%d" % gpu_ids[0])', "device_type", "replace", True,
      'device = torch.device("npu:%d" % gpu_ids[0])', "hard-coded CUDA device for model, target and batches"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("ca.load_state_dict(torch.load(args.model_path))", "device_type", "replace", True,
      "ca.load_state_dict(torch.load(args.model_path, map_location=device))",
      "--resume of a checkpoint written by the CUDA run holds cuda storages; torch.load without map_location "
      "fails to deserialise them on a host without CUDA"),
    C("ca = nn.DataParallel(ca, device_ids=gpu_ids)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list, also in msFmkTransplt's "
      "unsupported list); train on one NPU (or rewrite with DDP/HCCL)"),
])

E("gnca_regen", "regenerate.py", "device_branch_or_abstraction",
  "Growing NCA regeneration demo script: use_cuda flag, map_location lambda, imageio video", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu selects the device through the visibility mask; on Ascend the runtime reads ASCEND_RT_VISIBLE_DEVICES, "
      "otherwise the flag is silently ignored and device 0 is always used"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "False on an NPU host: the demo would silently run on the CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "accelerator branch of the device choice"),
    C('print("running on", torch.cuda.get_device_name(0)', "torch_cuda_api", "replace", True,
      'print("running on", torch.npu.get_device_name(0) if use_cuda else "cpu")',
      "torch.cuda.get_device_name raises without CUDA once use_cuda is true"),
    C("map_location=lambda storage, loc: storage.cuda() if use_cuda else storage", "tensor_to_device", "replace", True,
      "state = torch.load(args.model_path, map_location=device)",
      "storage.cuda() fails on an NPU host; map straight to the chosen device"),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
      'print("peak memory: %.1f MB" % (torch.npu.max_memory_allocated() / 2**20))',
      "CUDA allocator stats report 0 (or raise) on NPU; the printed peak would be silently wrong"),
])

E("gnca_req", "requirements.txt", "explicit_replacement",
  "Growing NCA PyTorch port requirements.txt", [
    C("torch>=1.10", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel must be added and its version must match the torch version (x.y.z[.postN]); "
      "the loose torch pin should be tightened to the same release (torch==2.1.0)"),
])

# --------------------------------------------------------------------------------------------
# Project 2: DyNCA (Dynamic Neural Cellular Automata, CVPR 2023), self-organising textures
# --------------------------------------------------------------------------------------------
E("dynca_model", "models/dynca.py", "explicit_replacement",
  "IVRL/DyNCA models/dynca.py: multi-scale perception, CPE positional encoding, seeding (all device-agnostic)", [])

E("dynca_app_loss", "utils/loss/appearance_loss.py", "explicit_replacement",
  "IVRL/DyNCA utils/loss/appearance_loss.py: VGG16 sliced-OT / Gram texture loss", [])

E("dynca_vf_loss", "utils/loss/vector_field_loss.py", "explicit_replacement",
  "IVRL/DyNCA utils/loss/vector_field_loss.py: target motion fields + MSOEnet flow loss", [
    C('def get_motion_vector_field_by_name(name, img_size=128, device="cuda:0"):', "device_type", "replace", False,
      'def get_motion_vector_field_by_name(name, img_size=128, device="npu:0"):',
      "default device of a public helper; the only caller passes args.DEVICE, so leaving it is harmless"),
])

E("dynca_msoe", "models/two_stream/MSOEnet.py", "explicit_replacement",
  "IVRL/DyNCA models/two_stream/MSOEnet.py: frozen pretrained optical-flow net with GPU map_location", [
    C("state = torch.load(model_path, map_location=lambda storage, loc: storage.cuda())", "tensor_to_device",
      "replace", True, 'state = torch.load(model_path, map_location="cpu")',
      "storage.cuda() fails without CUDA; load to host, model.to(device) below moves it to the NPU"),
])

E("dynca_fit", "fit_dynca_vector_field.py", "explicit_replacement",
  "IVRL/DyNCA fit_dynca_vector_field.py: argparse --DEVICE, pool training, memory logging, video synthesis", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('parser.add_argument("--DEVICE", type=str, default="cuda:0"', "device_type", "replace", True,
      'parser.add_argument("--DEVICE", type=str, default="npu:0", help="The NPU used for training")',
      "default training device"),
    C("DEVICE = torch.device(args.DEVICE if torch.cuda.is_available() else", "torch_cuda_api", "replace", True,
      'DEVICE = torch.device(args.DEVICE if torch.npu.is_available() else "cpu")',
      "availability probe is False on an NPU host: training would silently fall back to the CPU"),
    C("torch.cuda.manual_seed_all(i + 424)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(i + 424)", SEED_NOTE),
    C("mem = torch.cuda.memory_allocated(DEVICE)", "torch_cuda_api", "replace", True,
      "mem = torch.npu.memory_allocated(DEVICE) / 1024 ** 3",
      "CUDA allocator query with an npu device: raises or reports 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("dynca_fps", "tools/measure_fps.py", "explicit_replacement",
  "DyNCA real-time benchmark: cuda Events, synchronize, peak-memory stats", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "benchmark device"),
    C('map_location="cuda"', "device_type", "replace", True,
      'model.load_state_dict(torch.load(args.model_path, map_location="npu"))', "map_location to a CUDA device fails"),
    C('results = {"device": torch.cuda.get_device_name(device)', "torch_cuda_api", "replace", True,
      'results = {"device": torch.npu.get_device_name(device), "half": args.half, "fps": {}}',
      "raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA; the NPU queue must be drained before timing"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "timing events must live on the NPU stream"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "timing events must live on the NPU stream"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; without an NPU sync elapsed_time would be read too early"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", True,
      'print("%4dx%-4d  %7.1f fps  (%.2f GB peak)" % (size, size, fps, torch.npu.max_memory_allocated() / 1e9))',
      "CUDA allocator stats are 0 on NPU: the reported peak would be silently wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA; the per-size peak needs the NPU counter reset"),
])

E("dynca_req", "requirements.txt", "explicit_replacement",
  "IVRL/DyNCA requirements.txt pinned to +cu116 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu116", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("torch==1.13.1+cu116", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu116 local version does not exist for the CPU/aarch64 index and 1.13 has no current torch_npu pairing"),
    C("torchvision==0.14.1+cu116", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision must match the new torch release"),
    C("=numpy", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "add the Ascend backend wheel, same x.y.z as torch"),
])

# --------------------------------------------------------------------------------------------
# Project 3: Lenia in PyTorch (flowersteam-style differentiable Lenia + IMGEP exploration)
# --------------------------------------------------------------------------------------------
E("lenia_system", "lenia/systems/lenia_torch.py", "explicit_replacement",
  "flowersteam-style Lenia PyTorch system (autodisc / sensorimotor-lenia): FFT step in float64, cuFFT plan cache", [
    C("torch.backends.cuda.cufft_plan_cache.max_size = 32", "torch_cuda_api", "replace", True,
      "torch.npu.backends.fft_plan_cache.max_size = 32",
      "module-level cuFFT plan-cache access initialises CUDA and raises on import; Ascend's 2.7.1 list maps "
      "torch.backends.cuda.cufft_plan_cache to torch.npu.backends.fft_plan_cache (max_size range 1-99)"),
    C("self.dtype = torch.float64 if dtype is None else dtype", "unsupported_op_workaround", "replace", True,
      "self.dtype = torch.float32 if dtype is None else dtype",
      "the whole FFT path runs in float64; Ascend's API list restricts torch.fft.rfftn input to fp32, so the "
      "world/kernel dtype has to drop to float32 (check soliton stability for small T)"),
    C("kernel_norm = torch.fft.fftshift(kernel_norm, dim=(2, 3))", "unsupported_op_workaround", "replace", False,
      "kernel_norm = torch.fft.fftshift(kernel_norm.cpu(), dim=(2, 3)).to(self.device)",
      "torch.fft.fftshift is ✘ in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list, yet "
      "fft_fftshift has a native kernel in the 2.7.1 op list; sources conflict (unconfirmed). It runs once per "
      "kernel build, so doing it on the host is cheap"),
    C('def __init__(self, config=None, device="cuda"):', "device_type", "replace", True,
      'def __init__(self, config=None, device="npu"):',
      "experiments/run_imgep.py builds Lenia(cfg['system']) with the default device"),
])

E("lenia_kernels", "lenia/utils/kernels.py", "explicit_replacement",
  "Lenia kernel cores / growth functions (numpy + torch), Bert Chan's kn/gn conventions", [])

E("lenia_backend", "lenia/backend.py", "explicit_replacement",
  "Lenia batch-simulator array backend: CuPy on NVIDIA, numpy fallback", [
    C('BACKEND = os.environ.get("LENIA_BACKEND", "cupy").lower()', "unsupported_op_workaround", "replace", True,
      'BACKEND = os.environ.get("LENIA_BACKEND", "numpy").lower()',
      "CuPy has no Ascend support; the default backend would import cupy and touch cp.cuda at import time. "
      "Defaulting to numpy keeps the random-search baseline working (on the host); a torch-on-NPU backend "
      "would be the faster rewrite"),
])

E("lenia_batch", "lenia/systems/lenia_batch.py", "explicit_replacement",
  "Lenia non-differentiable batch simulator written against the xp array module", [])

E("lenia_stats", "lenia/analysis/statistics.py", "explicit_replacement",
  "Lenia behavioural statistics / IMGEP goal space (numpy + differentiable torch)", [])

E("lenia_imgep", "experiments/run_imgep.py", "explicit_replacement",
  "IMGEP exploration of Lenia parameters: default CUDA tensor type, memory logging", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "device_type", "replace", True,
      'torch.set_default_tensor_type("torch.npu.FloatTensor")',
      "the CUDA default tensor type cannot be set without CUDA (raises at import)"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.memory_allocated() / 2 ** 20)", "torch_cuda_api", "replace", True,
      "torch.npu.memory_allocated() / 2 ** 20)", "CUDA allocator stats would log 0 MB on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("lenia_viewer", "lenia/viewer.py", "device_branch_or_abstraction",
  "Interactive Lenia viewer: device picker, memory-based world-size cap, fp16 on Volta+", [
    C("import torch  # noqa: E402", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: E402", NPU_IMPORT_NOTE),
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'return torch.device("npu" if torch.npu.is_available() else "cpu")',
      "auto device choice: CUDA probe is False on an NPU host, the viewer would silently run on the CPU"),
    C('if device.type != "cuda":', "device_type", "replace", False, 'if device.type != "npu":',
      "left alone the memory-based cap is skipped and 1024 is used; only a sizing heuristic"),
    C("total = torch.cuda.get_device_properties(device).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(device).total_memory",
      "reached once the guard above is ported; NPU properties expose total_memory"),
    C('if args.half and self.device.type == "cuda":', "device_type", "replace", False,
      'if args.half and self.device.type == "npu":', "left alone --half is silently ignored (fp32); performance only"),
    C("major, _ = torch.cuda.get_device_capability(self.device)", "device_capability_check", "replace", True,
      "major, _ = (7, 0)  # no CUDA compute capability on NPU; fp16 conv2d is supported",
      "reached once the guard above is ported; torch.npu.get_device_capability returns None on Ascend, so the "
      "Volta check cannot be translated 1:1"),
    C('if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type == "npu":',
      "left alone the steps/s display measures launch time only; cosmetic"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached once the guard above is ported; raises without CUDA"),
])

E("lenia_cfg", "experiments/config/imgep_lenia.yaml", "explicit_replacement",
  "IMGEP Lenia experiment config (YAML)", [])

E("lenia_env", "environment.yml", "explicit_replacement",
  "conda environment.yml with pytorch-cuda and cupy", [
    C("- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch must be a release with a torch_npu build (here 2.1.0 to pair with torch-npu 2.1.0.postN)"),
    C("- pytorch-cuda=11.7", "import_torch_npu", "removal", True, None,
      "pulls the CUDA build of pytorch; the NPU host needs the CPU build"),
    C("- torchvision=0.14.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must match torch 2.1"),
    C("- cupy=11.6", "unsupported_op_workaround", "removal", False, None,
      "CuPy has no Ascend support; the package is dead weight once lenia/backend.py defaults to numpy"),
    C("=- addict", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
      "add the Ascend backend wheel in the pip section"),
])

E("lenia_sh", "scripts/run_exploration.sh", "explicit_replacement",
  "Shell launcher: one IMGEP seed per GPU via CUDA_VISIBLE_DEVICES, nvidia-smi under set -e", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not needed if the login profile already sources it"),
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and the script runs under set -e, so it aborts"),
    C("CUDA_VISIBLE_DEVICES=$GPU LENIA_GPU=0", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$GPU LENIA_GPU=0 \\",
      "per-seed device pinning; otherwise every seed silently lands on NPU 0"),
])

# --------------------------------------------------------------------------------------------
# Project 4: ViTCA (attention-based NCA, NeurIPS 2022): Hydra + DDP/NCCL + AMP
# --------------------------------------------------------------------------------------------
E("vitca_model", "vitca/models/vitca.py", "explicit_replacement",
  "tesfaldet/vitca-style model: localized attention with SDPA fast path, UNetCA baseline", [
    C("if x.is_cuda and self.use_sdpa:", "attention_kernel", "replace", False,
      "if x.is_npu and self.use_sdpa:",
      "left alone the NPU takes the einsum fallback, same result, slower (SDPA ✔ on NPU with bf16/fp16/fp32)"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's list / msFmkTransplt's unsupported list; whether it "
      "raises or is merely inert on NPU is unconfirmed (needs `import contextlib`)"),
])

E("vitca_dist", "vitca/utils/distributed.py", "explicit_replacement",
  "maskrcnn-benchmark/detectron2-style comm helpers used by ViTCA: all_gather with CUDA byte tensors", [
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", True,
      "dist.barrier(device_ids=[torch.npu.current_device()])", "raises without CUDA"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL collectives need NPU tensors"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "HCCL collectives need NPU tensors"),
    C('size_list = [torch.tensor([0], device="cuda")', "device_type", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "HCCL collectives need NPU tensors"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "HCCL collectives need NPU tensors"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "concatenated with an NPU tensor"),
])

E("vitca_data", "vitca/datasets/landscapes.py", "explicit_replacement",
  "ViTCA image-folder dataset + DataLoader builder with DistributedSampler", [
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "without a CUDA device the loader skips pinning (warning); performance only, NPU pinning target unconfirmed"),
])

E("vitca_train", "train.py", "explicit_replacement",
  "tesfaldet/vitca-style train.py: Hydra main, torchrun/DDP with NCCL, torch.cuda.amp, cell pool", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device binding before HCCL init"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C("with torch.cuda.amp.autocast(enabled=cfg.amp, dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg.amp, dtype=torch.float16):",
      "CUDA autocast is disabled with a warning on an NPU host: validation silently runs in fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("seed_everything(cfg.seed, rank)", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "msFmkTransplt performance advice: binary (non-JIT) kernels; the random step count and pool mixing make "
      "shapes/graphs vary. Performance only"),
    C("torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
      'log.info("world size %d, device %s (%s)", world_size, device, torch.npu.get_device_name(device))',
      "raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.amp)",
      "a CUDA GradScaler disables itself without CUDA: fp16 NPU gradients would go unscaled (underflow)"),
    C('map_location={"cuda:0": f"cuda:{local_rank}"}', "device_type", "replace", True,
      "ckpt = torch.load(ckpt_path, map_location=device)",
      "remaps onto a CUDA device, which fails on an NPU host"),
    C("with torch.cuda.amp.autocast(enabled=cfg.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=cfg.amp):",
      "CUDA autocast is disabled on an NPU host: training silently runs in fp32 while the config asks for AMP"),
    C("mem = torch.cuda.max_memory_reserved(device)", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_reserved(device) / 2 ** 30", "CUDA allocator query with an npu device"),
])

E("vitca_cfg", "conf/config.yaml", "explicit_replacement",
  "ViTCA Hydra config (distributed backend, AMP, data, model, CA schedule)", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "read by setup_distributed(); NCCL is not available on Ascend"),
])

E("vitca_sh", "scripts/train_ddp.sh", "explicit_replacement",
  "ViTCA torchrun launcher counting GPUs from CUDA_VISIBLE_DEVICES", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device visibility mask read by the Ascend runtime"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not needed if the login profile already sources it"),
    C('NGPUS=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      "NGPUS=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "process count derives from the mask; with the CUDA variable renamed away this would need to follow"),
    C('echo "training ${EXPERIMENT} on ${NGPUS} GPUs (${CUDA_VISIBLE_DEVICES})"', "env_var", "replace", False,
      'echo "training ${EXPERIMENT} on ${NGPUS} NPUs (${ASCEND_RT_VISIBLE_DEVICES})"', "log line only"),
])

E("vitca_docker", "Dockerfile", "explicit_replacement",
  "Dockerfile on the pytorch/pytorch CUDA runtime image", [
    C("FROM pytorch/pytorch:1.12.1-cuda11.3-cudnn8-devel", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; needs a CANN base image (tag illustrative, pick the one matching the host driver)"),
    C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10",
      "the CANN image has no torch; install the torch/torch_npu pair"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "container device exposure; with Ascend Docker Runtime usually given at `docker run -e` time; whether an "
      "image-level ENV is honoured is unconfirmed"),
])

# --------------------------------------------------------------------------------------------
# Project 5: difflogic (differentiable logic gate networks) + DiffLogic CA reproduction
# --------------------------------------------------------------------------------------------
E("dl_setup", "setup.py", "kernel_rewrite",
  "Felix-Petersen/difflogic setup.py with a CUDAExtension (difflogic_cuda)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension",
      "import is harmless on a CPU torch build; tidy-up once the extension is dropped"),
    C('ext_modules=[CUDAExtension("difflogic_cuda"', "custom_cuda_extension", "removal", True, None,
      "nvcc/.cu kernels cannot be built for Ascend; the package falls back to its pure-torch implementation "
      "(an Ascend C port via torch_npu NpuExtension would be the performance route)"),
])

E("dl_func", "difflogic/functional.py", "explicit_replacement",
  "difflogic functional.py: 16 relaxed binary ops, unique connections", [])

E("dl_core", "difflogic/difflogic.py", "kernel_rewrite",
  "difflogic difflogic.py: LogicLayer with cuda/python implementations, GroupSum, autograd Function", [
    C("=import difflogic_cuda", "custom_cuda_extension", "replace", True,
      "difflogic_cuda = None  # CUDA kernels are not built on Ascend; use implementation='python'",
      "top-level import of the compiled extension fails when it was not built"),
    C('device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "public default; the CA model always passes device explicitly"),
    C('elif self.implementation is None and device == "cpu":', "custom_cuda_extension", "replace", False,
      'elif self.implementation is None and device in ("cpu", "npu"):',
      "only reached when implementation is omitted; otherwise device='npu' trips the assert below"),
])

E("dl_gol", "dlca/gol.py", "explicit_replacement",
  "DiffLogic CA reproduction: life-like ground-truth rules via circular conv2d", [])

E("dl_ca_model", "dlca/model.py", "explicit_replacement",
  "DiffLogic CA reproduction: perception/update logic circuits over unfolded 3x3 neighbourhoods", [
    C('device="cuda",', "device_type", "replace", False, 'device="npu",',
      "constructor default; train_gol.py passes device explicitly"),
    C('implementation="cuda",', "custom_cuda_extension", "replace", False, 'implementation="python",',
      "constructor default; train_gol.py passes implementation explicitly"),
])

E("dl_ca_train", "dlca/train_gol.py", "explicit_replacement",
  "DiffLogic CA reproduction: learn Game of Life, exhaustive 512-pattern check, truth-table export", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TORCH_NPU, NPU_IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")', "default training device"),
    C('parser.add_argument("--implementation", type=str, default="cuda"', "custom_cuda_extension", "replace", True,
      'parser.add_argument("--implementation", type=str, default="python", choices=["cuda", "python"])',
      "the CUDA kernels are not available on Ascend"),
    C('if args.device.startswith("cuda"):', "device_type", "replace", False, 'if args.device.startswith("npu"):',
      "guard only; left alone the sanity check is skipped"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "NPU requested but not available; use --device cpu"',
      "reached once the guard above is ported"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])
