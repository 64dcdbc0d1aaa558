"""Labels for probe195: microscopy / cell-biology image analysis tools (Cellpose, Omnipose,
micro-SAM + torch-em, CellViT, a StarDist PyTorch port, napari plugins) moving from CUDA to Ascend NPU.

One C(...) per upstream line a careful porter would edit. required=True only when the unchanged line
fails on an NPU host, computes something wrong, or silently does the wrong thing (e.g. the whole
workload silently stays on the CPU, AMP silently switched off). Performance-only rewrites, silent
no-ops and claims not confirmed in /work/shared/knowledge are required=False.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ----------------------------------------------------------------------------------------------
# Cellpose
# ----------------------------------------------------------------------------------------------

E("cellpose_core", "cellpose/core.py", "device_branch_or_abstraction",
  "Cellpose core.py (use_gpu / _use_gpu_torch / assign_device, run_net tiling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "device helper module of the package; the ported branches call torch.npu.*, which needs torch_npu loaded (mandatory before torch_npu 2.5.1)"),
    C('device = torch.device("cuda:" + str(gpu_number))', "device_type", "replace", True,
      'device = torch.device(("npu:" if torch.npu.is_available() else "cuda:") + str(gpu_number))',
      "the GPU probe allocates on cuda; on an NPU host it raises, is swallowed by the bare except and use_gpu() returns False, so --use_gpu silently runs everything on the CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif torch.npu.is_available():  device = torch.device(f'npu:{device}'); gpu = True; cpu = False",
      "assign_device has only CUDA and MPS branches; with gpu=True on an NPU host neither sets `cpu`, so the final `if cpu:` raises NameError (and no npu device is ever returned)"),
])

E("cellpose_dynamics", "cellpose/dynamics.py", "device_branch_or_abstraction",
  "Cellpose dynamics.py (GPU flow generation, follow_flows/steps_interp, get_masks_torch)", [
    C('torch_GPU = torch.device("cuda")', "device_type", "replace", False,
      'torch_GPU = torch.device("npu")',
      "module-level default kept for backwards compatibility; not used inside this module and creating a cuda device object does not fail"),
    C('=device=torch.device("cuda")):', "device_type", "replace", True,
      'device=torch.device("npu")):',
      "default device of _extend_centers_gpu; a caller relying on the default allocates on cuda and fails on an NPU host"),
    C('=device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "device=None fallback inside _extend_centers_gpu picks cuda and fails on an NPU host"),
    C("T = torch.zeros(shape, dtype=torch.double, device=device)", "unsupported_op_workaround", "replace", False,
      "T = torch.zeros(shape, dtype=torch.float32, device=device)",
      "fp64 diffusion buffer; float64 support on NPU is partial (transfer_to_npu even maps DoubleTensor to float32) and may run on AI CPU or fall back; unconfirmed for index_put/mean here, float32 is enough for flows"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "torch_cuda_api", "replace", False,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "auxiliary default: on an NPU host it silently computes the training flows on the CPU (correct, only slower)"),
    C('if device is not None and device.type in ("cuda", "mps"):', "device_type", "replace", False,
      'if device is not None and device.type in ("cuda", "npu", "mps"):',
      "npu devices are routed to the numba CPU flow code; results are identical, only slower"),
    C('def steps_interp(dP, inds, niter, device=torch.device("cuda")):', "device_type", "replace", True,
      'def steps_interp(dP, inds, niter, device=torch.device("npu")):',
      "default device allocates on cuda when the caller does not pass one"),
    C('def follow_flows(dP, inds, niter=200, device=torch.device("cuda")):', "device_type", "replace", True,
      'def follow_flows(dP, inds, niter=200, device=torch.device("npu")):',
      "default device allocates on cuda when the caller does not pass one"),
    C("coo = torch.sparse_coo_tensor(pt, torch.ones(pt.shape[1], device=pt.device, dtype=torch.float32),", "unsupported_op_workaround", "replace", True,
      "h1 = torch.zeros(shape, dtype=torch.float32, device=pt.device).index_put_(tuple(pt.long()), torch.ones(pt.shape[1], device=pt.device, dtype=torch.float32), accumulate=True)",
      "sparse COO histogram + to_dense on an npu tensor: Tensor.to_dense is in msFmkTransplt's unsupported list and sparse ops without NPU kernels raise instead of falling back; build the histogram densely with index_put_(accumulate=True)"),
    C("h1 = coo.to_dense()", "unsupported_op_workaround", "removal", True,
      None,
      "removed together with the sparse COO construction above (to_dense has no NPU kernel)"),
    C('max_size_fraction=0.4, device=torch.device("cuda")):', "device_type", "replace", True,
      'max_size_fraction=0.4, device=torch.device("npu")):',
      "compute_masks default device; direct callers (GUI, notebooks) that omit device allocate on cuda"),
    C('def remove_bad_flow_masks(masks, flows, threshold=0.4, device=torch.device("cuda")):', "device_type", "replace", True,
      'def remove_bad_flow_masks(masks, flows, threshold=0.4, device=torch.device("npu")):',
      "default device allocates on cuda when the caller does not pass one"),
    C('if masks.size > 10000 * 10000 and (device is not None and device.type == "cuda"):', "device_type", "replace", False,
      'if masks.size > 10000 * 10000 and (device is not None and device.type in ("cuda", "npu")):',
      "free-memory guard for huge images is skipped on npu; only matters for >1e8-pixel images that might then OOM instead of moving to CPU"),
    C("total_mem = torch.cuda.get_device_properties(device0.index).total_memory", "torch_cuda_api", "replace", False,
      "total_mem = torch.npu.get_device_properties(device0.index).total_memory",
      "pre-1.10 branch, only reachable once the guard above admits npu (torch_npu needs torch >= 1.11 anyway)"),
    C("used_mem = torch.cuda.memory_allocated(device0.index)", "torch_cuda_api", "replace", False,
      "used_mem = torch.npu.memory_allocated(device0.index)",
      "pre-1.10 branch, only reachable once the guard above admits npu"),
    C("free_mem, total_mem = torch.cuda.mem_get_info(device0.index)", "torch_cuda_api", "replace", False,
      "free_mem, total_mem = torch.npu.mem_get_info(device0.index)",
      "only reachable once the guard above admits npu; then torch.cuda.mem_get_info would raise, so it changes together with the guard"),
])

E("cellpose_models", "cellpose/models.py", "device_branch_or_abstraction",
  "Cellpose models.py (Cellpose / CellposeModel / SizeModel)", [
    C('device_gpu = self.device.type == "cuda"', "device_type", "replace", True,
      'device_gpu = self.device.type in ("cuda", "npu")',
      "with device=torch.device('npu') the model is treated as CPU: mkldnn is enabled and _forward calls to_mkldnn on an npu network (fails), and dynamics get device=None"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); NPU cache is just not released between stacks"),
])

E("cellpose_train", "cellpose/train.py", "device_branch_or_abstraction",
  "Cellpose train.py (train_seg, _process_train_test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "only needed for the optional torch_npu fused optimizers below; device handling comes from cellpose.core"),
    C("device = torch.device('cuda') if torch.cuda.is_available() else torch.device('mps') if torch.backends.mps.is_available() else None", "torch_cuda_api", "replace", False,
      "device = torch.device('npu') if torch.npu.is_available() else torch.device('mps') if torch.backends.mps.is_available() else None",
      "fallback when no device is passed (train_seg always passes net.device); on NPU flows are then computed on the CPU, correct but slow"),
    C("optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(net.parameters(), lr=learning_rate,",
      "performance only: tensor-fused AdamW from torch_npu.optim"),
    C("optimizer = torch.optim.SGD(net.parameters(), lr=learning_rate,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(net.parameters(), lr=learning_rate,",
      "performance only: tensor-fused SGD from torch_npu.optim"),
])

E("cellpose_main", "cellpose/__main__.py", "device_branch_or_abstraction",
  "Cellpose __main__.py CLI (--use_gpu / --gpu_device handled through models.assign_device)", [
])

E("cellpose_denoise", "cellpose/denoise.py", "device_branch_or_abstraction",
  "Cellpose 3 denoise.py (image restoration nets, add_noise, perceptual-loss training)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed above also seeds registered PrivateUse1 generators in recent torch (unconfirmed for every torch_npu version)"),
    C("torch.cuda.manual_seed_all(seed)  # if you are using multi-GPU.", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)  # if you are using multi-NPU.",
      "silent no-op without CUDA; see manual_seed"),
    C("torch.backends.cudnn.benchmark = False", "torch_cuda_api", "removal", False,
      None,
      "cuDNN flag, silent no-op on NPU"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cuDNN determinism flag has no effect on NPU kernels; whether NPU results differ run to run here is unconfirmed"),
    C("imgi[ipoisson] = torch.poisson(pscale * imgi[ipoisson])", "unsupported_op_workaround", "replace", False,
      "imgi[ipoisson] = torch.poisson((pscale * imgi[ipoisson]).cpu()).to(device)",
      "torch.poisson has no NPU kernel (absent from the op-plugin list, ✘ in Ascend's API table); it falls back to the CPU with a warning, so this only makes the host round trip explicit"),
    C("weights = torch.load(filename, weights_only=True)", "tensor_to_device", "replace", False,
      "weights = torch.load(filename, weights_only=True, map_location=device)",
      "no map_location: fails only if the checkpoint was saved from CUDA tensors; unconfirmed for the shipped cellpose weights"),
    C('device_gpu = self.device.type == "cuda"', "device_type", "replace", False,
      'device_gpu = self.device.type in ("cuda", "npu")',
      "DenoiseModel only records self.gpu here (no mkldnn switch), so a wrong flag has no effect inside this file"),
    C("optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate[0],", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(net.parameters(), lr=learning_rate[0],",
      "performance only (needs `import torch_npu`, which cellpose.core already performs; add it here if the name is used)"),
])

E("cellpose_napari", "cellpose_napari/_dock_widget.py", "device_branch_or_abstraction",
  "cellpose-napari dock widget (magicgui, use_gpu checkbox, thread_worker)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU: cached NPU memory is not handed back to other napari plugins"),
])

E("cellpose_benchmark", "benchmarks/benchmark_gpu.py", "explicit_replacement",
  "GPU benchmark script for Cellpose (CUDA events, peak memory, NVML)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "standalone script that calls torch.npu.* after porting"),
    C("=import pynvml", "torch_cuda_api", "removal", False,
      None,
      "NVML has no NPU equivalent; guarded by try/except so the script degrades to NVML=False anyway (npu-smi or torch.npu.mem_get_info instead)"),
    C('"gpu_name": torch.cuda.get_device_name(index),', "torch_cuda_api", "replace", True,
      '"gpu_name": torch.npu.get_device_name(index),',
      "torch.cuda.get_device_name initialises CUDA and raises on an NPU host"),
    C('"gpu_mem_total_gb": round(torch.cuda.get_device_properties(index).total_memory / 2**30, 1),', "torch_cuda_api", "replace", True,
      '"gpu_mem_total_gb": round(torch.npu.get_device_properties(index).total_memory / 2**30, 1),',
      "raises without CUDA; NPU properties do carry total_memory"),
    C('"capability": "%d.%d" % torch.cuda.get_device_capability(index),', "device_capability_check", "removal", True,
      None,
      "raises without CUDA; the NPU form returns None (no major/minor), so the '%d.%d' formatting cannot be kept"),
    C("torch.cuda.synchronize(device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device_index)",
      "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device_index)",
      "integer index resolves to a CUDA device; raises on an NPU host"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)",
      "CUDA events need a CUDA context"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)",
      "CUDA events need a CUDA context"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated(device_index) / 2**20", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device_index) / 2**20",
      "integer index resolves to a CUDA device; raises on an NPU host"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False,
      None,
      "cuDNN autotuner flag, silent no-op on NPU"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")',
      "model placed on cuda fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU; the per-file cache flush just does not happen"),
])

E("cellpose_docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for a Cellpose GPU container (nvidia/cuda base, cu118 wheels)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime base image has no CANN toolkit; torch_npu cannot load without CANN (an Ascend cann-container-image base also exports the set_env.sh variables)"),
    C("pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post12",
      "cu118 wheels are the wrong build; torch_npu pairs with the CPU torch wheel of exactly the same version (2.1.0 <-> torch-npu 2.1.0.postN) and must be installed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0 \\",
      "NVIDIA container-runtime variables are ignored on an Ascend host; devices are mounted by the Ascend Docker Runtime / --device /dev/davinciN"),
])

# ----------------------------------------------------------------------------------------------
# Omnipose
# ----------------------------------------------------------------------------------------------

E("omnipose_gpu", "omnipose/gpu.py", "device_branch_or_abstraction",
  "Omnipose gpu.py device helpers (get_device, use_gpu, empty_cache, ARM/mps special cases)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "central device helper; the added branches use torch.npu.*"),
    C("torch_GPU = torch.device('mps') if ARM else torch.device('cuda')", "device_type", "replace", True,
      "torch_GPU = torch.device('mps') if ARM else torch.device('npu')",
      "exported default device (also the default of to_device below); tensors sent there fail on an NPU host"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "    if hasattr(torch, 'npu') and torch.npu.is_available():  return torch.device(f'npu:{gpu_number}'), True",
      "get_device only knows CUDA/MPS; on an NPU host it returns the CPU and omnipose silently never uses the accelerator"),
    C("device = torch.device('cuda:' + str(gpu_number))", "device_type", "replace", True,
      "device = torch.device(('npu:' if torch.npu.is_available() else 'cuda:') + str(gpu_number))",
      "GPU probe allocates on cuda; on NPU it raises, use_gpu() returns False and --use_gpu silently runs on the CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C("allocated = torch.cuda.memory_allocated(idx) / 1024 ** 3", "torch_cuda_api", "replace", True,
      "allocated = torch.npu.memory_allocated(idx) / 1024 ** 3",
      "CUDA allocator never initialised on NPU: silently reports 0 GB for the npu device"),
    C("reserved = torch.cuda.memory_reserved(idx) / 1024 ** 3", "torch_cuda_api", "replace", True,
      "reserved = torch.npu.memory_reserved(idx) / 1024 ** 3",
      "silently reports 0 GB for the npu device"),
    C("name = torch.cuda.get_device_name(idx)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(idx)",
      "initialises CUDA and raises on an NPU host"),
    C("torch.cuda.manual_seed_all(seed)  # safe to call without a GPU, it is lazy", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds the default generators (NPU coverage unconfirmed)"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cuDNN flag has no effect on NPU kernels (determinism impact unconfirmed)"),
    C("torch.backends.cudnn.benchmark = False", "torch_cuda_api", "removal", False,
      None,
      "cuDNN flag, silent no-op on NPU"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False,
      None,
      "cuDNN flag, silent no-op on NPU"),
    C("if device is None or device.type != 'cuda':", "device_type", "replace", False,
      "if device is None or device.type not in ('cuda', 'npu'):",
      "NPU falls back to the default batch size; tuning only"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", False,
      "free, total = torch.npu.mem_get_info(device)",
      "only reachable once the guard admits npu, and wrapped in try/except anyway"),
])

E("omnipose_core", "cellpose_omni/core.py", "explicit_replacement",
  "Omnipose cellpose_omni/core.py (UnetModel, _train_step with AMP, _train_net)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "with OMNI_AMP=1 the CUDA autocast does not touch npu tensors and the CUDA GradScaler disables itself, so mixed precision is silently off"),
    C("device_gpu = self.device.type == 'cuda'", "device_type", "replace", True,
      "device_gpu = self.device.type in ('cuda', 'npu')",
      "an npu device is treated as CPU: mkldnn is switched on and network() converts the npu net with to_mkldnn (fails)"),
])

E("omnipose_requirements", "requirements-gpu.txt", "explicit_replacement",
  "Omnipose GPU requirements file (cu118 wheel index, NVML/GPUtil)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu is installed on top of the CPU torch wheel on x86 (plain PyPI on aarch64)"),
    C("torch==2.1.2+cu118", "import_torch_npu", "replace", True,
      "torch==2.1.0",
      "+cu118 local build does not exist on the CPU index, and torch_npu wheels pair with one exact torch version (2.1.0 for torch-npu 2.1.0.postN)"),
    C("torchvision==0.16.2+cu118", "import_torch_npu", "replace", True,
      "torchvision==0.16.0",
      "must match torch 2.1.0 and come from the CPU index"),
    C("=GPUtil", "torch_cuda_api", "removal", False,
      None,
      "GPUtil shells out to nvidia-smi; only used in a guarded memory report"),
    C("nvidia-ml-py>=12.535", "torch_cuda_api", "removal", False,
      None,
      "NVML bindings have nothing to talk to on an Ascend host; installs fine, calls are guarded"),
    C("=tqdm", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "the torch-npu pin itself (any 2.1.0.postN matching the installed CANN)"),
])

# ----------------------------------------------------------------------------------------------
# micro-SAM / torch-em
# ----------------------------------------------------------------------------------------------

E("microsam_util", "micro_sam/util.py", "device_branch_or_abstraction",
  "micro-sam util.py (_get_default_device, get_device, _available_devices, get_sam_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "device helper of the package; the NPU branches call torch.npu.is_available()"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      '    elif torch.npu.is_available(): device = "npu"',
      "auto device selection knows cuda/mps/cpu only; on an NPU host SAM embeddings silently run on the CPU"),
    C('if device_type.lower() == "cuda":', "device_type", "add_branch", True,
      'elif device_type.lower() == "npu" and not torch.npu.is_available(): raise RuntimeError("PyTorch NPU backend is not available.")',
      "an explicit device='npu' hits the final else and raises 'Unsupported device'"),
    C('for i in ["cuda", "mps", "cpu"]:', "device_type", "replace", False,
      'for i in ["cuda", "npu", "mps", "cpu"]:',
      "npu is not offered in the napari device dropdown; 'auto' still picks it once _get_default_device is fixed"),
])

E("microsam_amg", "micro_sam/instance_segmentation.py", "device_branch_or_abstraction",
  "micro-sam instance_segmentation.py (AMG post-processing with torchvision batched_nms)", [
    C("from torchvision.ops.boxes import batched_nms, box_area", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # registers NPU kernels for torchvision.ops.nms",
      "batched_nms runs on npu tensors; torchvision has no NPU kernel and torchvision_npu provides nms. Without it the op most likely takes torch_npu's CPU fallback (slow) rather than failing - unconfirmed"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guard is False on NPU, so the cache flush is silently skipped"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("microsam_widgets", "micro_sam/sam_annotator/_widgets.py", "device_branch_or_abstraction",
  "micro-sam napari annotator widgets (EmbeddingWidget device dropdown, thread_worker)", [
    C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "n_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so the per-device entries are simply not listed ('auto' still works)"),
    C('options += [f"cuda:{i}" for i in range(n_gpus)]', "device_type", "replace", False,
      'options += [f"npu:{i}" for i in range(n_gpus)]',
      "only reachable once the count above is ported; then cuda:i entries would fail"),
    C('if str(device).startswith("cuda"):', "device_type", "replace", False,
      'if str(device).startswith(("cuda", "npu")):',
      "cache flush skipped on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("microsam_finetune", "examples/finetuning/finetune_hela.py", "explicit_replacement",
  "micro-sam examples/finetuning/finetune_hela.py (train_sam on the HeLa tracking data)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry script; uses torch.npu.is_available() after porting"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"  # the device/GPU used for training', "torch_cuda_api", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"  # the device/NPU used for training',
      "default training device silently becomes the CPU on an NPU host"),
])

E("microsam_config", "configs/finetune_vit_b_lm.yaml", "explicit_replacement",
  "micro-sam finetuning YAML config (device, mixed precision, loader settings)", [
    C("device: cuda", "device_type", "replace", True,
      'device: npu                    # "npu", "npu:1" or "cpu"',
      "the value is handed to micro_sam.util.get_device / torch; cuda fails on an NPU host"),
])

E("microsam_env", "environment_gpu.yaml", "explicit_replacement",
  "micro-sam environment_gpu.yaml (conda, pytorch + nvidia channels)", [
    C("=- nvidia", "import_torch_npu", "removal", False,
      None,
      "nvidia channel only serves the CUDA packages removed below"),
    C("- cudatoolkit=11.8", "import_torch_npu", "removal", False,
      None,
      "CUDA runtime libraries are unused on an Ascend host (dead weight)"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "removal", True,
      None,
      "selects the CUDA build of pytorch; torch_npu expects the CPU build of the same version"),
    C("- pytorch>=2.0", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0",
      "torch_npu wheels are tied to one exact torch version, an open lower bound resolves to whatever is newest"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.1.0.post12",
      "the torch-npu pin (pip only, not on conda)"),
])

E("torchem_trainer", "torch_em/trainer/default_trainer.py", "explicit_replacement",
  "torch-em DefaultTrainer (used by micro-sam training; mixed precision via torch.cuda.amp)", [
    C("from torch.cuda import amp", "amp", "replace", True,
      "from torch_npu.npu import amp",
      "mixed_precision=True is the default: CUDA autocast ignores npu tensors and the CUDA GradScaler disables itself, so training silently runs in fp32 without loss scaling"),
    C("save_dict = torch.load(save_path, weights_only=False)", "tensor_to_device", "replace", False,
      "save_dict = torch.load(save_path, weights_only=False, map_location=self.device)",
      "only fails when resuming a checkpoint written on a CUDA machine (storages tagged cuda)"),
])

E("torchem_multigpu", "torch_em/multi_gpu_training.py", "explicit_replacement",
  "torch-em multi_gpu_training.py (mp.spawn + DDP, used by micro-sam multi-GPU finetuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "registers the npu device and the HCCL backend"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL variable is ignored by HCCL; torch_npu's watchdog variable is HCCL_ASYNC_ERROR_HANDLING (documented default 1), so no behaviour change"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)',
      "NCCL backend does not exist on Ascend"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C("model = model_callable(**model_kwargs).to(rank)", "tensor_to_device", "replace", True,
      'model = model_callable(**model_kwargs).to(f"npu:{rank}")',
      "a bare integer device means cuda:<rank>"),
    C("optimizer = torch.optim.Adam(ddp_model.parameters(), lr=kwargs.pop(\"learning_rate\", 1e-4))", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(ddp_model.parameters(), lr=kwargs.pop(\"learning_rate\", 1e-4))",
      "performance only"),
    C("device=rank,", "tensor_to_device", "replace", True,
      'device=f"npu:{rank}",',
      "the trainer does torch.device(rank), i.e. cuda:<rank>"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises without CUDA"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()",
      "returns 0 on an NPU host, so the function raises 'needs at least two visible GPUs'"),
])

# ----------------------------------------------------------------------------------------------
# CellViT
# ----------------------------------------------------------------------------------------------

E("cellvit_trainer", "cell_segmentation/trainer/trainer_cellvit.py", "explicit_replacement",
  "CellViT trainer_cellvit.py (train_step with autocast + GradScaler)", [
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "device_type='cuda' autocast is disabled on a host without CUDA (warning only), so mixed_precision training silently runs in fp32"),
    C("with torch.cuda.device(self.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(self.device):",
      "torch.cuda.device('npu:0') raises 'Expected a cuda device' on every training step"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU (per-step cache flush, itself a performance choice)"),
])

E("cellvit_base_trainer", "base_ml/base_trainer.py", "explicit_replacement",
  "CellViT base_ml/base_trainer.py (GradScaler, per-epoch peak memory logging)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=True)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=True)",
      "the CUDA GradScaler disables itself without CUDA; fp16 training on NPU then runs without loss scaling (gradient underflow)"),
    C("peak_mem = torch.cuda.max_memory_allocated(self.device) / 1024**3", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated(self.device) / 1024**3",
      "an 'npu:0' device string is rejected by torch.cuda memory APIs (raises)"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.device)",
      "same: raises for an npu device"),
])

E("cellvit_experiment", "cell_segmentation/experiments/experiment_cellvit_pannuke.py", "explicit_replacement",
  "CellViT experiment_cellvit_pannuke.py (seed_run, run_experiment, optimizer factory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "entry of the training stack (run_cellvit.py imports this experiment); trainer modules use torch.npu.*"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds the default generators (NPU coverage unconfirmed)"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cuDNN flag has no effect on NPU kernels (reproducibility impact unconfirmed)"),
    C("torch.backends.cudnn.benchmark = False", "torch_cuda_api", "removal", False,
      None,
      "cuDNN flag, silent no-op on NPU"),
    C('f"Cuda devices: {[torch.cuda.device(i) for i in range(torch.cuda.device_count())]}"', "torch_cuda_api", "replace", False,
      'f"NPU devices: {[torch.npu.device(i) for i in range(torch.npu.device_count())]}"',
      "log line only: device_count() is 0 on NPU, so it logs an empty list"),
    C("device = f\"cuda:{self.run_conf['gpu']}\"", "device_type", "replace", True,
      "device = f\"npu:{self.run_conf['gpu']}\"",
      "model, batches and trainer memory calls all use this device string"),
    C("optimizer = torch.optim.Adam(model.parameters(), **hp)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), **hp)",
      "performance only"),
    C("optimizer = torch.optim.AdamW(model.parameters(), **hp)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), **hp)",
      "performance only (AdamW is the optimizer of the released CellViT configs)"),
    C("optimizer = torch.optim.SGD(model.parameters(), **hp)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), **hp)",
      "performance only"),
])

E("cellvit_detection", "cell_segmentation/inference/cell_detection.py", "device_branch_or_abstraction",
  "CellViT cell_detection.py (WSI patch inference, --gpu, --enforce_amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "standalone inference entry point; the added branch calls torch.npu.is_available()"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'elif torch.npu.is_available(): self.device = f"npu:{gpu}"',
      "without an NPU branch whole-slide inference silently runs on the CPU"),
    C('if torch.cuda.device_count() > 1 and "SAM" in model_checkpoint["arch"]:', "torch_cuda_api", "removal", False,
      None,
      "DataParallel block: dead on NPU (count is 0) and must not be re-enabled via torch.npu.device_count(), since nn.DataParallel is unsupported on Ascend"),
    C('self.logger.info(f"Using {torch.cuda.device_count()} GPUs with DataParallel")', "torch_cuda_api", "removal", False,
      None,
      "part of the removed DataParallel block"),
    C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "removal", False,
      None,
      "nn.DataParallel is ✘ on Ascend (Ascend API list, msFmkTransplt); unreachable on NPU as written, removed so nobody re-enables it"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "--enforce_amp / amp-trained models: cuda autocast is disabled without CUDA, so inference silently runs in fp32"),
])

E("cellvit_vit", "models/encoders/VIT/SAM/image_encoder.py", "device_branch_or_abstraction",
  "CellViT-SAM image encoder attention (xformers / PyTorch SDPA with sdp_kernel)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():",
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list; it only toggles CUDA SDPA flags, so on NPU it is most likely a no-op (error vs no-op unconfirmed); F.scaled_dot_product_attention itself is supported"),
])

E("cellvit_env", "environment.yml", "explicit_replacement",
  "CellViT conda environment.yml (pytorch-cuda, cudatoolkit, cupy, xformers)", [
    C("=- nvidia", "import_torch_npu", "removal", False,
      None,
      "channel only needed for pytorch-cuda"),
    C("- pytorch-cuda=11.8", "import_torch_npu", "removal", True,
      None,
      "pulls the CUDA build of pytorch; torch_npu expects the CPU build"),
    C("- cudatoolkit=11.8", "import_torch_npu", "removal", False,
      None,
      "unused CUDA runtime on an Ascend host"),
    C("- cupy=12.1.0", "torch_cuda_api", "removal", False,
      None,
      "CuPy has no Ascend backend; only a problem where it is actually imported (not in the files of this probe)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.0.1.post1",
      "torch-npu pin matching pytorch 2.0.1 (an EOL line for CANN 7.0.0; moving to torch 2.1.0 + torch-npu 2.1.0.postN is advisable)"),
    C("- xformers==0.0.22", "attention_kernel", "removal", False,
      None,
      "CUDA-only wheel without an NPU backend; the encoder already falls back to SDPA when tensors are not CUDA"),
])

E("cellvit_launcher", "scripts/run_cellvit_pannuke.sh", "explicit_replacement",
  "CellViT shell launcher (train + inference on a PanNuke fold)", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "ignored on Ascend: the config's gpu: 0 then always lands on the first NPU instead of the requested one"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "allocator tuning only; support of max_split_size_mb in PYTORCH_NPU_ALLOC_CONF unconfirmed"),
    C("conda activate cellvit_env", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or import torch_npu fails ('Please run source set_env.sh')"),
    C("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
    C("nvidia-smi --query-gpu=memory.used --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "same: command not found ends the script with a failure status"),
])

# ----------------------------------------------------------------------------------------------
# StarDist PyTorch port
# ----------------------------------------------------------------------------------------------

E("stardist_model", "stardist_torch/models/stardist2d.py", "device_branch_or_abstraction",
  "StarDist2D PyTorch port model wrapper (predict, predict_instances, threshold optimisation)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() and self.config.use_gpu else "cpu")', "torch_cuda_api", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and self.config.use_gpu else "cuda" if torch.cuda.is_available() and self.config.use_gpu else "cpu")',
      "default device silently becomes the CPU on an NPU host"),
    C('if show_timing and self.device.type == "cuda":  # flush queued kernels before timing', "device_type", "replace", False,
      'if show_timing and self.device.type in ("cuda", "npu"):  # flush queued kernels before timing',
      "timing print only; without the sync the NPU time is under-reported"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(self.device)",
      "only reachable once the guard admits npu (would then raise)"),
    C('=if show_timing and self.device.type == "cuda":', "device_type", "replace", False,
      'if show_timing and self.device.type in ("cuda", "npu"):',
      "timing print only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()",
      "only reachable once the guard admits npu"),
])

E("stardist_ops", "stardist_torch/ops/nms.py", "kernel_rewrite",
  "StarDist PyTorch port ops/nms.py (call sites of the nvcc-built _C extension)", [
    C("if dist.is_cuda:", "custom_cuda_extension", "replace", True,
      'if dist.device.type == "npu":',
      "npu tensors fall into the C++ CPU kernel, which reads device memory through data_ptr (crash/garbage); route them to the Ascend C kernel"),
    C("suppressed = _C.poly_nms_cuda(dist, points, float(nms_thresh))", "custom_cuda_extension", "replace", True,
      "suppressed = _C.poly_nms_npu(dist, points, float(nms_thresh))",
      "CUDA kernel call site; the extension is rebuilt with an Ascend C polygon-NMS kernel (or the CPU op on .cpu() copies)"),
    C('if dist.device.type == "cuda":', "custom_cuda_extension", "replace", True,
      'if dist.device.type == "npu":',
      "same problem for the polygon rasteriser"),
    C("lbl = _C.render_polygons_cuda(dist, points, int(shape[0]), int(shape[1]))", "custom_cuda_extension", "replace", True,
      "lbl = _C.render_polygons_npu(dist, points, int(shape[0]), int(shape[1]))",
      "CUDA kernel call site, rewritten for the NPU build of the extension"),
])

E("stardist_setup", "setup.py", "kernel_rewrite",
  "StarDist PyTorch port setup.py (CUDAExtension with nvcc gencode flags)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself works on a CPU torch; changed as part of the extension rewrite"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", "removal", True,
      None,
      "an Ascend host has no CUDA toolkit, so the build stops here"),
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", True,
      "extension = NpuExtension",
      "CUDAExtension needs nvcc; NpuExtension adds the torch_npu/CANN include and library paths"),
    C("sources += source_cuda", "custom_cuda_extension", "replace", True,
      "sources += glob.glob(os.path.join(extensions_dir, \"npu\", \"*.cpp\"))",
      ".cu kernels cannot be compiled; the NMS/rasteriser kernels are rewritten in Ascend C"),
    C('define_macros += [("WITH_CUDA", None)]', "custom_cuda_extension", "replace", True,
      'define_macros += [("WITH_NPU", None)]',
      "WITH_CUDA pulls CUDA headers and the poly_nms_cuda bindings into the C++ sources"),
    C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", "removal", False,
      None,
      "nvcc flags (gencode sm_70/80/86) are ignored once no .cu sources are compiled"),
])

E("stardist_train", "scripts/train_stardist2d.py", "transfer_to_npu",
  "StarDist PyTorch port training script (CUDA_VISIBLE_DEVICES, DataParallel, .cuda(), torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "automatic migration: .cuda(), torch.cuda.is_available/device_count/max_memory_allocated and torch.cuda.amp are redirected to NPU at runtime, so those lines stay"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_ids',
      "not covered by transfer_to_npu; CUDA_VISIBLE_DEVICES is ignored, so --gpu_ids silently has no effect (must be set before the NPU runtime initialises)"),
    C("cudnn.benchmark = True", "torch_cuda_api", "removal", False,
      None,
      "cuDNN autotuner flag, silent no-op on NPU"),
    C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
      'print("nn.DataParallel is not supported on Ascend NPU; training on one NPU (use DDP/torchrun for several)")',
      "nn.DataParallel is unsupported on Ascend and not fixed by transfer_to_npu; with --gpu_ids 0,1 the multi-device path breaks"),
    C("optimizer = torch.optim.Adam(net.parameters(), lr=conf.train_learning_rate)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(net.parameters(), lr=conf.train_learning_rate)",
      "performance only"),
])
