"""Labels for probe475 (SAR deep learning: despeckling, SAR ship detection, SAR-optical fusion/translation).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port).
`required` = complete-port counterfactual (every other labelled line already ported).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# A. hi-paris/deepdespeckling (MERLIN / SAR2SAR despeckling, PyTorch package)
# ---------------------------------------------------------------------------------------------
E("dd_denoiser", "deepdespeckling/denoiser.py", "device_branch_or_abstraction",
  "hi-paris/deepdespeckling deepdespeckling/denoiser.py (Denoiser base class, get_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the package module that picks the device is the first to touch the accelerator; torch_npu must be imported "
      "before torch.npu is used (autoload only from torch_npu 2.5.1)"),
    C('device = "cuda"', "device_type", "add_branch", True,
      'elif torch.npu.is_available(): device = "npu"',
      "device-branch port: keep the CUDA branch, add an NPU branch before the CPU fallback; without it the "
      "despeckler silently runs on the CPU of an NPU host"),
])

E("dd_merlin_denoiser", "deepdespeckling/merlin/merlin_denoiser.py", "explicit_replacement",
  "hi-paris/deepdespeckling deepdespeckling/merlin/merlin_denoiser.py (MerlinDenoiser)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; porting it only "
      "returns cached NPU blocks between patch batches (memory behaviour, not correctness)"),
])

E("dd_model", "deepdespeckling/model.py", "explicit_replacement",
  "hi-paris/deepdespeckling deepdespeckling/model.py (MERLIN U-Net); device passed in, no change", [])

E("dd_utils", "deepdespeckling/utils/utils.py", "explicit_replacement",
  "hi-paris/deepdespeckling deepdespeckling/utils/utils.py (normalisation, spectrum symmetrisation in numpy)", [])

E("dd_train", "deepdespeckling/merlin/training/train.py", "explicit_replacement",
  "hi-paris/deepdespeckling MERLIN training script (merlin/training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script of the training run"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) on the line above already seeds every device type incl. the PrivateUse1/NPU "
      "generator on recent torch; the CUDA call is a lazy no-op on an NPU host (unconfirmed for old torch)"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "otherwise training silently falls back to CPU"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=torch.npu.is_available())",
      "unported it evaluates to False on an NPU host: batches are not pinned, H2D copies are synchronous - "
      "performance only"),
])

E("dd_training_utils", "deepdespeckling/merlin/training/training_utils.py", "explicit_replacement",
  "hi-paris/deepdespeckling MERLIN training helpers (dataset, Rayleigh NLL loss, timing)", [
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "one-off normalisation statistics; unported they are computed on the CPU, which is correct, only slower"),
    C("bounds = torch.nanquantile(", "unsupported_op_workaround", "replace", False,
      "bounds = torch.nanquantile(log_amp.cpu(), torch.tensor([low, high]))",
      "torch.nanquantile is marked unsupported in Ascend's 2.7.1 API table and in the msFmkTransplt list; "
      "whether it errors or falls back to CPU is unconfirmed, so compute the two quantiles on host"),
    C("spec = torch.fft.fftshift(", "unsupported_op_workaround", "replace", False,
      "spec = torch.roll(torch.fft.fft2(z), shifts=(z.shape[-2] // 2, z.shape[-1] // 2), dims=(-2, -1)).abs()",
      "torch.fft.fftshift is unsupported in Ascend's 2.7.1 table / msFmkTransplt list; it is a composite of "
      "roll, so it may well work - unconfirmed; diagnostic only"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "the training loop calls loss.item() every iteration, which already synchronises the device, so the "
      "epoch time is right even when the sync is skipped"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "once the guard above is ported this line runs on an NPU host and torch.cuda.synchronize() raises"),
])

E("dd_setup", "setup.py", "explicit_replacement",
  "hi-paris/deepdespeckling setup.py (install_requires)", [
    C('"torch>=1.13",', "import_torch_npu", "npu_only_addition", False, '"torch-npu>=2.1.0",',
      "packaging only: torch_npu must match the installed torch version exactly, so an NPU fork adds it; "
      "the environment can also provide it"),
])

# ---------------------------------------------------------------------------------------------
# B. malshaV/SAR-DDPM (diffusion despeckling on top of openai/guided-diffusion)
# ---------------------------------------------------------------------------------------------
E("sarddpm_dist_util", "guided_diffusion/dist_util.py", "explicit_replacement",
  "malshaV/SAR-DDPM guided_diffusion/dist_util.py (openai guided-diffusion MPI + torch.distributed setup)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"', "env_var",
      "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"',
      "pins each MPI rank to one device; unported every rank sees all NPUs and dev() ('npu' = npu:0) puts "
      "all ranks on the same card"),
    C('backend = "gloo" if not th.cuda.is_available() else "nccl"', "dist_backend", "replace", True,
      'backend = "gloo" if not th.npu.is_available() else "hccl"',
      "unported it picks gloo on an NPU host; gloo cannot reduce NPU tensors"),
    C("if th.cuda.is_available():", "torch_cuda_api", "replace", True, "if th.npu.is_available():",
      "dev() would return cpu on an NPU host"),
    C('return th.device(f"cuda")', "device_type", "replace", True, 'return th.device("npu")',
      "device string"),
])

E("sarddpm_train_util", "guided_diffusion/train_util.py", "explicit_replacement",
  "malshaV/SAR-DDPM guided_diffusion/train_util.py (TrainLoop, DDP wrap)", [
    C("self.sync_cuda = th.cuda.is_available()", "torch_cuda_api", "replace", False,
      "self.sync_cuda = th.npu.is_available()",
      "attribute is never read anywhere in guided-diffusion; changed only for consistency"),
    C("if th.cuda.is_available():", "torch_cuda_api", "replace", True, "if th.npu.is_available():",
      "gates the DDP wrap; unported, multi-rank NPU training runs without gradient all-reduce (the code only "
      "logs a warning) - ranks silently diverge"),
])

E("sarddpm_nn", "guided_diffusion/nn.py", "explicit_replacement",
  "openai/guided-diffusion guided_diffusion/nn.py as vendored by SAR-DDPM; device-agnostic", [])

E("sarddpm_train_script", "scripts/sarddpm_train.py", "explicit_replacement",
  "malshaV/SAR-DDPM scripts/sarddpm_train.py", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; dist_util uses th.npu"),
])

E("sarddpm_test_script", "scripts/sarddpm_test.py", "explicit_replacement",
  "malshaV/SAR-DDPM scripts/sarddpm_test.py (crop-wise reverse diffusion, timing)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "setup_dist() (ported) sets ASCEND_RT_VISIBLE_DEVICES to rank % 8 = 0 for this single-process run "
      "anyway, so this line is redundant on NPU"),
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script"),
    C("start_evt = th.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = th.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end_evt = th.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = th.npu.Event(enable_timing=True)", "same"),
    C("th.cuda.synchronize()", "torch_cuda_api", "replace", True, "th.npu.synchronize()",
      "raises on a host without CUDA; needed before elapsed_time on NPU events"),
])

E("sarddpm_launch", "run_train.sh", "explicit_replacement",
  "malshaV/SAR-DDPM training launcher (mpiexec, guided-diffusion flags)", [
    C("export OPENAI_LOGDIR=./logs/sarddpm", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "setup_dist() overwrites the visible-device variable per rank (rank % 8), so this export has no effect "
      "either way"),
])

# ---------------------------------------------------------------------------------------------
# C. YOLOv5-based SAR ship detection (SSDD / HRSID forks of ultralytics/yolov5 v6)
# ---------------------------------------------------------------------------------------------
E("sship_train", "train.py", "explicit_replacement",
  "ultralytics/yolov5 v6 train.py as forked by SAR ship-detection repos (SSDD/HRSID, 1-channel input)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda import amp", "amp", "replace", False, "from torch_npu.npu import amp",
      "both GradScaler and autocast come from this import. Unported, CUDA autocast/GradScaler disable "
      "themselves on a host without CUDA (the warning is even filtered in torch_utils), so training runs in "
      "fp32 - correct but slower. Performance-only"),
    C("if cuda and RANK == -1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if cuda and RANK == -1 and torch.npu.device_count() > 1:",
      "only decides whether to enter the DataParallel branch; unported it is 0 and the branch is skipped"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "LOGGER.warning('DataParallel is not supported on Ascend NPU; use torch.distributed.run (DDP)')",
      "torch.nn.DataParallel is unsupported on NPU (scatter/broadcast_coalesced are CUDA-only); with the "
      "device_count check ported this branch is reachable"),
    C("mem = f'{torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0:.3g}G'", "torch_cuda_api",
      "replace", False,
      "mem = f'{torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0:.3g}G'",
      "progress-bar memory column only; unported it shows 0G"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-training cache release; no-op unported"),
    C("assert torch.cuda.device_count() > LOCAL_RANK", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() > LOCAL_RANK, 'insufficient NPU devices for DDP command'",
      "0 > LOCAL_RANK is False -> AssertionError in every DDP run"),
    C("torch.cuda.set_device(LOCAL_RANK)", "torch_cuda_api", "replace", True, "torch.npu.set_device(LOCAL_RANK)",
      "raises without CUDA"),
    C("device = torch.device('cuda', LOCAL_RANK)", "device_type", "replace", True,
      "device = torch.device('npu', LOCAL_RANK)", "DDP device"),
    C('dist.init_process_group(backend="nccl" if dist.is_nccl_available() else "gloo")', "dist_backend",
      "replace", True, 'dist.init_process_group(backend="hccl")',
      "NCCL is unavailable; gloo cannot reduce NPU tensors"),
])

E("sship_torch_utils", "utils/torch_utils.py", "explicit_replacement",
  "ultralytics/yolov5 v6 utils/torch_utils.py (select_device, time_sync, profile) in a SAR ship fork", [
    C("dist.barrier(device_ids=[local_rank])", "distributed_framework", "replace", False, "dist.barrier()",
      "barrier(device_ids=...) was written for NCCL; whether ProcessGroupHCCL honours/accepts device_ids is "
      "unconfirmed - dropping it is the safe port"),
    C("dist.barrier(device_ids=[0])", "distributed_framework", "replace", False, "dist.barrier()",
      "same as above (unconfirmed)"),
    C("cmd = 'nvidia-smi -L | wc -l'", "device_capability_check", "replace", False,
      "cmd = \"npu-smi info -l | grep 'Total Count' | awk '{print $NF}'\"",
      "device_count() helper is not called anywhere in this fork; returns 0 silently on failure"),
    C("device = str(device).strip().lower().replace('cuda:', '')", "device_type", "replace", False,
      "device = str(device).strip().lower().replace('cuda:', '').replace('npu:', '')",
      "only matters if a user passes --device npu:0; plain indices work unported"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = device  # set environment variable", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device  # set environment variable - must be before assert is_available()",
      "--device 2 would otherwise run on NPU 0 (select_device returns npu:0 assuming the mask was applied)"),
    C("assert torch.cuda.is_available() and torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available() and torch.npu.device_count() >= len(device.replace(',', '')), \\",
      "fails for every non-cpu --device on an NPU host"),
    C("cuda = not cpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "cuda = not cpu and torch.npu.is_available()",
      "with --device '' (default) the run would silently fall back to CPU"),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "p = torch.npu.get_device_properties(i)",
      "raises without CUDA; NPU properties provide name and total_memory used on the next line"),
    C("return torch.device('cuda:0' if cuda else 'cpu')", "device_type", "replace", True,
      "return torch.device('npu:0' if cuda else 'cpu')", "the device every script uses"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "time_sync guard: unported the sync is skipped and the printed per-image speeds are off (NPU is "
      "asynchronous) - reporting only"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "once the guard is ported this raises without CUDA"),
    C("mem = torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0  # (GB)", "torch_cuda_api",
      "replace", False, "mem = torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0  # (GB)",
      "profiler column only; 0 unported"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op unported"),
])

E("sship_general", "utils/general.py", "explicit_replacement",
  "ultralytics/yolov5 v6 utils/general.py (trimmed: seeds, NMS, strip_optimizer)", [
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.nms",
      "torchvision.ops.nms has no NPU kernel in stock torchvision; torchvision_npu (Ascend/vision) provides "
      "one. Without it the op may hit torch_npu's CPU fallback or raise - unconfirmed"),
])

E("sship_detect", "detect.py", "explicit_replacement",
  "ultralytics/yolov5 v6 detect.py adapted to SAR scenes (dB stretch, tiling)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
])

E("sship_cfar", "utils/cfar.py", "kernel_rewrite",
  "CA-CFAR pre-screening with CuPy, as bundled by SAR ship-detection repos", [
    C("=import cupy as cp", "unsupported_op_workaround", "replace", True, "import torch",
      "CuPy has no Ascend backend; the box filters are rewritten with torch ops on the NPU"),
    C("from cupyx.scipy import ndimage as cndi", "unsupported_op_workaround", "replace", True,
      "import torch.nn.functional as F", "uniform_filter -> avg_pool2d"),
    C("img = cp.asarray(intensity, dtype=cp.float32)", "unsupported_op_workaround", "replace", True,
      "img = torch.from_numpy(np.ascontiguousarray(intensity, dtype=np.float32)).to('npu')[None, None]",
      "host->NPU copy instead of CuPy array"),
    C("sum_outer = cndi.uniform_filter(", "unsupported_op_workaround", "replace", True,
      "sum_outer = F.avg_pool2d(F.pad(img, [outer // 2] * 4, mode='replicate'), outer, stride=1) * outer ** 2",
      "box sum; scipy 'reflect' (edge repeated) has no exact torch pad mode, 'replicate' differs only in the "
      "border ring"),
    C("sum_inner = cndi.uniform_filter(", "unsupported_op_workaround", "replace", True,
      "sum_inner = F.avg_pool2d(F.pad(img, [inner // 2] * 4, mode='replicate'), inner, stride=1) * inner ** 2",
      "same"),
    C("return cp.asnumpy(mask)", "unsupported_op_workaround", "replace", True, "return mask[0, 0].cpu().numpy()",
      "back to numpy for OpenCV connected components"),
    C("cp.get_default_memory_pool().free_all_blocks()", "unsupported_op_workaround", "removal", True, None,
      "cp no longer exists after the import is ported -> NameError"),
])

E("sship_requirements", "requirements.txt", "explicit_replacement",
  "ultralytics/yolov5 requirements.txt with SAR additions", [
    C("torch>=1.7.0", "import_torch_npu", "npu_only_addition", False,
      "torch-npu==2.1.0.post12  # pin torch to the matching 2.1.0",
      "environment/packaging; torch_npu wheel version must equal the torch version"),
    C("cupy-cuda11x>=11.0", "unsupported_op_workaround", "removal", False, None,
      "nothing imports cupy after the CFAR rewrite; installing the wheel on a host without CUDA does not "
      "itself fail on x86 (unconfirmed for aarch64)"),
])

E("sship_launch", "scripts/train_ddp.sh", "explicit_replacement",
  "DDP launcher of a YOLOv5 SAR ship fork (HRSID train, SSDD transfer test)", [
    C("nvidia-smi --query-gpu=", "device_capability_check", "replace", True, "npu-smi info",
      "script runs with set -e; nvidia-smi is absent on an Ascend host and aborts the script"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before torch_npu loads"),
])

# ---------------------------------------------------------------------------------------------
# D. SAR -> optical translation with pix2pix (SEN1-2), fork of junyanz/pytorch-CycleGAN-and-pix2pix
# ---------------------------------------------------------------------------------------------
E("s2o_base_options", "options/base_options.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix options/base_options.py in a SAR-to-optical fork", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module importing torch in train.py/test.py; torch.npu is used below"),
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])", "raises without CUDA"),
])

E("s2o_networks", "models/networks.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py (init_net, U-Net, PatchGAN)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
      "AssertionError on an NPU host"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "net.to(f'npu:{gpu_ids[0]}')",
      "an int device means cuda:N"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", "removal", True, None,
      "DataParallel is unsupported on NPU (even for one device its forward scatters via CUDA comm); "
      "single-device port drops the wrapper"),
])

E("s2o_base_model", "models/base_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/base_model.py (device, save/load)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')  # get device name: CPU or NPU",
      "device for all inputs"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "unported the else branch runs: net.cpu() moves the network to the CPU and never moves it back, so "
      "the next iteration mixes CPU weights with NPU inputs"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(net.cpu().state_dict(), save_path)",
      "no DataParallel wrapper after the port, so .module does not exist"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True, "net.npu(self.gpu_ids[0])",
      "move back after saving"),
])

E("s2o_pix2pix_model", "models/pix2pix_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/pix2pix_model.py (2-channel SAR input); device-agnostic", [])

E("s2o_dataset", "data/sen12_dataset.py", "explicit_replacement",
  "SEN1-2 / SEN12MS paired dataset of a SAR-to-optical fork; CPU-only", [])

E("s2o_train", "train.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix train.py; no torch calls", [])

E("s2o_env", "environment.yml", "explicit_replacement",
  "conda environment of a pix2pix SAR-to-optical fork", [
    C("pytorch-cuda=11.8", "import_torch_npu", "removal", False, None,
      "pulls the CUDA build of PyTorch; Ascend docs install CPU torch on x86 and there is no pytorch-cuda "
      "for aarch64 hosts - whether the solve fails depends on the host (unconfirmed)"),
    C("- wandb", "import_torch_npu", "npu_only_addition", False, "    - torch-npu==2.1.0.post12",
      "environment/packaging; must match pytorch=2.1.0"),
])

# ---------------------------------------------------------------------------------------------
# E. xufangchn/GLF-CR (SAR-optical fusion for cloud removal, SEN12MS-CR)
# ---------------------------------------------------------------------------------------------
E("glfcr_train", "codes/train_CR_kernel.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/train_CR_kernel.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opts.gpu_ids",
      "--gpu_ids 3 would otherwise run on NPU 0 (the code always uses the default device)"),
    C("torch.cuda.manual_seed_all(opts.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(opts.seed)", "torch.manual_seed on the line above already seeds the NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op unported"),
])

E("glfcr_model", "codes/model_CR_net.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/model_CR_net.py (ModelCRNet)", [
    C("self.net_G = RDN_residual_CR(self.opts.crop_size).cuda()", "tensor_to_device", "replace", True,
      "self.net_G = RDN_residual_CR(self.opts.crop_size).npu()", ""),
    C("self.net_G = nn.DataParallel(self.net_G)", "distributed_framework", "removal", True, None,
      "DataParallel unsupported on NPU"),
    C("self.cloudy_data = inputs['cloudy_data'].cuda()", "tensor_to_device", "replace", True,
      "self.cloudy_data = inputs['cloudy_data'].npu()", ""),
    C("self.cloudfree_data = inputs['cloudfree_data'].cuda()", "tensor_to_device", "replace", True,
      "self.cloudfree_data = inputs['cloudfree_data'].npu()", ""),
    C("self.SAR_data = inputs['SAR_data'].cuda()", "tensor_to_device", "replace", True,
      "self.SAR_data = inputs['SAR_data'].npu()", ""),
    C("self.cloud_mask = inputs['cloud_mask'].cuda()", "tensor_to_device", "replace", True,
      "self.cloud_mask = inputs['cloud_mask'].npu()", ""),
    C("checkpoint = torch.load(checkpoint_path)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(checkpoint_path, map_location='cpu')",
      "resume checkpoints written by the ported code hold NPU tensors and load fine; only a checkpoint "
      "written on a CUDA host fails to deserialise"),
    C("self.net_G.module.load_state_dict(checkpoint['network'])", "distributed_framework", "replace", True,
      "self.net_G.load_state_dict(checkpoint['network'])", "no DataParallel wrapper after the port"),
])

E("glfcr_model_base", "codes/model_base.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/model_base.py (save_network)", [
    C("'network': network.module.state_dict(),", "distributed_framework", "replace", True,
      "'network': network.state_dict(),", "no DataParallel wrapper after the port"),
])

E("glfcr_kernelconv", "codes/FAC/kernelconv2d/KernelConv2D.py", "kernel_rewrite",
  "xufangchn/GLF-CR codes/FAC/kernelconv2d/KernelConv2D.py (filter-adaptive conv from STFAN, CUDA extension)", [
    C("=import kernelconv2d_cuda", "custom_cuda_extension", "replace", True,
      "from .kernelconv2d_torch import kernelconv2d_forward, kernelconv2d_backward  # F.unfold rewrite",
      "the nvcc-built extension cannot be built for Ascend; per-pixel kernel conv = unfold + weighted sum"),
    C("with torch.cuda.device_of(input):", "torch_cuda_api", "replace", False, "with torch.npu.device_of(input):",
      "torch.cuda.device_of on a non-CUDA tensor degrades to device(-1), a no-op context; the torch rewrite "
      "needs no device guard"),
    C("if input.is_cuda == True:", "device_type", "replace", True, "if input.is_npu == True:",
      "otherwise the elif raises NotImplementedError for NPU tensors"),
    C("kernelconv2d_cuda.forward(", "custom_cuda_extension", "replace", True,
      "kernelconv2d_forward(input, kernel, intKernelSize, ctx.dilation, output)", ""),
    C("with torch.cuda.device_of(grad_output):", "torch_cuda_api", "replace", False,
      "with torch.npu.device_of(grad_output):", "no-op context, as in forward"),
    C("if grad_output.is_cuda == True:", "device_type", "replace", True, "if grad_output.is_npu == True:", ""),
    C("kernelconv2d_cuda.backward(", "custom_cuda_extension", "replace", True,
      "kernelconv2d_backward(input, kernel, intKernelSize, ctx.dilation, grad_output,", ""),
    C("input = torch.randn(B, C, H + K - 1, W + K - 1, requires_grad=True).cuda()", "tensor_to_device", "replace",
      True, "input = torch.randn(B, C, H + K - 1, W + K - 1, requires_grad=True).npu()",
      "gradient self-test"),
    C("kernel = torch.randn(B, C * K * K, H, W, requires_grad=True).cuda()", "tensor_to_device", "replace", True,
      "kernel = torch.randn(B, C * K * K, H, W, requires_grad=True).npu()", "gradient self-test"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'", "device 0 is the default anyway"),
])

E("glfcr_setup", "codes/FAC/kernelconv2d/setup.py", "kernel_rewrite",
  "xufangchn/GLF-CR codes/FAC/kernelconv2d/setup.py (CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
      False, "from torch_npu.utils.cpp_extension import NpuExtension",
      "with the unfold rewrite the extension is no longer needed; NpuExtension is the route only if the kernel "
      "is re-implemented in Ascend C"),
    C("CUDAExtension('kernelconv2d_cuda', [", "custom_cuda_extension", "replace", False,
      "NpuExtension('kernelconv2d_npu', [", "same; the .cu source and nvcc flags go with it"),
])

E("glfcr_net", "codes/net_CR_RDN.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/net_CR_RDN.py (RDN + FAC local fusion + window-attention global fusion)", [
    C("net = RDN_residual_CR(128).cuda()", "tensor_to_device", "replace", True, "net = RDN_residual_CR(128).npu()",
      "__main__ smoke test"),
    C("cloudy = torch.rand(1, 13, 128, 128).cuda()", "tensor_to_device", "replace", True,
      "cloudy = torch.rand(1, 13, 128, 128).npu()", "__main__ smoke test"),
    C("sar = torch.rand(1, 2, 128, 128).cuda()", "tensor_to_device", "replace", True,
      "sar = torch.rand(1, 2, 128, 128).npu()", "__main__ smoke test"),
])

E("glfcr_metrics", "codes/metrics.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/metrics.py (pytorch-ssim style SSIM, PSNR, SAM)", [
    C("if img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:",
      "the following window.type_as(img1) may already move the window to the NPU via the "
      "'torch.npu.FloatTensor' type string - unconfirmed, so not marked required"),
    C("window = window.cuda(img1.get_device())", "tensor_to_device", "replace", True,
      "window = window.npu(img1.get_device())", "once the guard is ported, .cuda() raises"),
])

E("glfcr_test", "codes/test_CR.py", "explicit_replacement",
  "xufangchn/GLF-CR codes/test_CR.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("cloudy_data = inputs['cloudy_data'].cuda()", "tensor_to_device", "replace", True,
      "cloudy_data = inputs['cloudy_data'].npu()", ""),
    C("cloudfree_data = inputs['cloudfree_data'].cuda()", "tensor_to_device", "replace", True,
      "cloudfree_data = inputs['cloudfree_data'].npu()", ""),
    C("SAR_data = inputs['SAR_data'].cuda()", "tensor_to_device", "replace", True,
      "SAR_data = inputs['SAR_data'].npu()", ""),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_ids", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opts.gpu_ids", "device selection"),
    C("CR_net = RDN_residual_CR(opts.crop_size).cuda()", "tensor_to_device", "replace", True,
      "CR_net = RDN_residual_CR(opts.crop_size).npu()", ""),
    C("checkpoint = torch.load(opts.model_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(opts.model_path, map_location='cpu')",
      "the released CR_net.pth was saved from a DataParallel model on GPU (CUDA tensors); without "
      "map_location torch.load raises on a host without CUDA"),
])
