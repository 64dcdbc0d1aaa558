"""Labels for probe404 (CT reconstruction / low-dose CT denoising, CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit for an explicit torch_npu port
(torch.npu.*, 'npu', hccl). `required` uses the complete-port counterfactual described in
README.md. Target stack assumed by the notes: torch 2.1.0 + torch_npu 2.1.0.postN (no
device-backend autoload, which only exists from torch_npu 2.5.1 on).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# --------------------------------------------------------------------------------------------
# RED-CNN (SSinyu/RED-CNN): single-GPU/DataParallel denoiser, device chosen by a --device flag
# --------------------------------------------------------------------------------------------
E("redcnn_main", "main.py", "explicit_replacement", "SSinyu/RED-CNN main.py (argparse entry point)", [
    C("from torch.backends import cudnn", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry point of the program; solver.py uses torch.npu.* and 'npu' devices, which need torch_npu "
      "registered first on torch 2.1 (no autoload before torch_npu 2.5.1)."),
])

E("redcnn_solver", "solver.py", "explicit_replacement", "SSinyu/RED-CNN solver.py (Solver: train/test loop)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "Default device when --device is not given: unchanged it silently trains on the CPU of an NPU host."),
    C("if (self.multi_gpu) and (torch.cuda.device_count() > 1):", "torch_cuda_api", "replace", False,
      "if (self.multi_gpu) and (torch.npu.device_count() > 1):",
      "Once DataParallel is gone the branch only prints a notice; torch.cuda.device_count() returns 0 on an NPU "
      "host and the branch is skipped, so nothing breaks."),
    C("print('Use {} GPUs'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('Use {} NPUs'.format(torch.npu.device_count()))",
      "Log line only (device_count() returns 0 without raising)."),
    C("self.REDCNN = nn.DataParallel(self.REDCNN)", "distributed_framework", "replace", True,
      "print('nn.DataParallel is not supported on Ascend; training on one NPU (use DDP for multi-NPU)')",
      "torch.nn.DataParallel is marked unsupported in Ascend's 2.7.1 API list (and msFmkTransplt says to use DDP); "
      "with the device-count check ported this line would run."),
])

E("redcnn_networks", "networks.py", "explicit_replacement", "SSinyu/RED-CNN networks.py (RED_CNN model)", [])
E("redcnn_loader", "loader.py", "explicit_replacement", "SSinyu/RED-CNN loader.py (ct_dataset, get_loader)", [])
E("redcnn_measure", "measure.py", "explicit_replacement",
  "SSinyu/RED-CNN measure.py (PSNR/SSIM/RMSE on CPU tensors)", [])
E("redcnn_prep", "prep.py", "explicit_replacement", "SSinyu/RED-CNN prep.py (DICOM -> npy preprocessing)", [])

# --------------------------------------------------------------------------------------------
# LEARN with CTLIB (xiawj-hub style): custom CUDA projector + mp.spawn DDP
# --------------------------------------------------------------------------------------------
E("learn_model", "model.py", "kernel_rewrite",
  "LEARN / LEARN++ PyTorch implementation on CTLIB (xiawj-hub style model.py)", [
    C("=import ctlib", "custom_cuda_extension", "replace", True,
      "import ctlib_npu as ctlib  # Ascend C port of the CTLIB projector pair (same Python API)",
      "ctlib is a CUDAExtension (projection/backprojection/fbp kernels in .cu); it cannot be built or imported on "
      "an NPU host. The autograd Functions keep calling ctlib.* through the alias."),
])

E("learn_main", "main.py", "explicit_replacement",
  "LEARN training script with mp.spawn + DistributedDataParallel (xiawj-hub style main.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry point; every later torch.npu.* call and 'npu' device string needs torch_npu loaded (torch 2.1)."),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "Evaluation device; a cuda device cannot be used on an NPU host."),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)",
      "CUDA events would try to initialise CUDA; torch.npu.Event is the NPU counterpart (in Ascend's API list)."),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "Same as the start event."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises on a CPU-only torch build (the build torch_npu sits on)."),
    C("device = torch.device('cuda:%d' % args.pretrain_gpu if torch.cuda.is_available() else 'cpu')", "device_type",
      "replace", True, "device = torch.device('npu:%d' % args.pretrain_gpu if torch.npu.is_available() else 'cpu')",
      "Unchanged, the regulariser pre-training silently falls back to the CPU."),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "Returns 0 on an NPU host, so mp.spawn starts no worker and training silently does nothing."),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method=args.dist_url,",
      "NCCL does not exist on Ascend; HCCL is the collective backend."),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "Per-process device binding; torch.cuda.set_device raises on an NPU host."),
    C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)",
      "Moves the network (and the CTLIB geometry vector, an nn.Parameter) to the device."),
    C("criterion = nn.MSELoss().cuda(gpu)", "tensor_to_device", "replace", False,
      "criterion = nn.MSELoss().npu(gpu)",
      "MSELoss has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; edited for "
      "consistency only."),
    C("loc = 'cuda:{}'.format(gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(gpu)",
      "map_location for resuming; a cuda target cannot be deserialised on an NPU host."),
    C("proj = proj.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "proj = proj.npu(gpu, non_blocking=True)", "Training batch to the device."),
    C("label = label.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "label = label.npu(gpu, non_blocking=True)", "Training batch to the device."),
    C("proj, label = proj.cuda(gpu), label.cuda(gpu)", "tensor_to_device", "replace", True,
      "proj, label = proj.npu(gpu), label.npu(gpu)", "Validation batch to the device."),
])

E("learn_dataset", "dataset.py", "explicit_replacement", "LEARN dataset.py (.mat projection/label pairs)", [])

E("learn_run", "run.sh", "explicit_replacement", "LEARN run.sh launcher (4 GPUs)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (library paths for libascendcl/HCCL) must be sourced before python imports torch_npu, "
      "unless the host profile already does it."),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "main.py spawns one process per visible device; unchanged, all NPUs of the host are used (world size and "
      "effective batch silently change)."),
])

E("learn_simulate", "tools/simulate_lowdose.py", "explicit_replacement",
  "LDCT simulation tool (CTLIB projection + CuPy Poisson/Gaussian noise)", [
    C("import cupy as cp", "unsupported_op_workaround", "replace", True, "import numpy as cp",
      "CuPy has no Ascend backend (cupy#9379). The noise model only uses asarray/exp/random.poisson/random.normal/"
      "maximum/log, which NumPy provides under the same names."),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Standalone script that puts the CTLIB projection on an 'npu' device."),
    C("=import ctlib", "custom_cuda_extension", "replace", True,
      "import ctlib_npu as ctlib  # Ascend C port of the CTLIB projector pair (same Python API)",
      "CUDA extension, see model.py."),
    C("return cp.asnumpy(noisy)", "unsupported_op_workaround", "replace", True, "return np.asarray(noisy)",
      "cupy.asnumpy has no NumPy counterpart under that name."),
    C("cp.cuda.Device(args.gpu).use()", "unsupported_op_workaround", "removal", True, None,
      "CuPy device selection; numpy has no .cuda attribute."),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)", "Device of the forward projection."),
])

E("ctlib_setup", "setup.py", "kernel_rewrite", "xiawj-hub/CTLIB setup.py (CUDAExtension build)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "No nvcc on an NPU host; torch_npu.utils.cpp_extension.NpuExtension adds the torch_npu/ACL include and "
      "library paths for an Ascend C re-implementation."),
    C("sources = sorted(glob.glob", "custom_cuda_extension", "replace", True,
      "sources = sorted(glob.glob(os.path.join('src', '*.cpp')) + glob.glob(os.path.join('src', 'ascendc', '*.cpp')))",
      "The .cu kernels are replaced by Ascend C kernel sources."),
    C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "Extension class for the NPU build."),
    C("extra_compile_args={'cxx': ['-O3'], 'nvcc':", "custom_cuda_extension", "replace", False,
      "extra_compile_args={'cxx': ['-O3']},",
      "BuildExtension only reads the 'cxx' entry for non-CUDA sources, so the nvcc flags are inert once no .cu "
      "file is compiled; removed for clarity."),
])

E("ctlib_binding", "src/ctlib.cpp", "kernel_rewrite", "xiawj-hub/CTLIB src/ctlib.cpp (pybind11 binding, CHECK_CUDA)", [
    C("#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda()", "custom_cuda_extension", "replace", True,
      "#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_privateuseone(), #x \" must be an NPU tensor\")",
      "Every entry point checks its inputs with this macro; NPU tensors are not CUDA tensors, so the unchanged "
      "check rejects every call."),
])

# --------------------------------------------------------------------------------------------
# DuDoNet (ODL operators + ASTRA CUDA backend, .cuda() chains)
# --------------------------------------------------------------------------------------------
E("dudonet_geometry", "utils/build_geometry.py", "explicit_replacement",
  "DuDoNet / InDuDoNet utils/build_geometry.py (ODL fan-beam RayTransform + OperatorModule)", [
    C("impl='astra_cuda'", "unsupported_op_workaround", "replace", True,
      "ray_trafo_hh = odl.tomo.RayTransform(reco_space, geometry, impl='astra_cpu')",
      "ASTRA's CUDA backend needs an NVIDIA GPU; the 2-D fan-beam geometry is also supported by astra_cpu "
      "(OperatorModule runs the operator on host NumPy arrays anyway)."),
])

E("dudonet_network", "network/dudonet.py", "explicit_replacement",
  "DuDoNet network (SE-Net mask pyramid U-Net, Radon inversion layer, IE-Net)", [
    C("u = torch.linspace(-1.0, 1.0, w).cuda()", "tensor_to_device", "replace", True,
      "u = torch.linspace(-1.0, 1.0, w).npu()",
      "Detector weighting created inside forward; must be on the same device as the sinogram."),
])

E("dudonet_dataset", "utils/dataset.py", "explicit_replacement",
  "DuDoNet / InDuDoNet utils/dataset.py (h5 DeepLesion MAR pairs)", [])

E("dudonet_train", "train.py", "explicit_replacement", "DuDoNet / InDuDoNet train.py (single GPU, .cuda() chains)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry point; needed for .npu() on torch 2.1."),
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = opt.gpu_id", "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = opt.gpu_id",
      "--gpu_id selects the card; unchanged the job silently runs on NPU 0 whatever the flag says. Set before "
      "the first NPU call, like the original."),
    C("[t.unsqueeze(0).cuda() for t in sample]", "tensor_to_device", "replace", True,
      "Xma, XLI, Xgt, mask, Sma, SLI, Sgt, Tr = [t.unsqueeze(0).npu() for t in sample]", "Validation sample to the device."),
    C("[x.cuda() for x in data]", "tensor_to_device", "replace", True,
      "Xma, XLI, Xgt, mask, Sma, SLI, Sgt, Tr = [x.npu() for x in data]", "Training batch to the device."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache() is a no-op when CUDA was never initialised; releasing the NPU cache is only a "
      "memory-headroom measure."),
    C("net = DuDoNet(opt).cuda()", "tensor_to_device", "replace", True, "net = DuDoNet(opt).npu()",
      "Model to the device."),
])

E("dudonet_test", "test.py", "explicit_replacement", "DuDoNet / InDuDoNet test.py (released model, timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Entry point."),
    C("device = torch.device(\"cuda:0\" if opt.use_GPU else \"cpu\")", "device_type", "replace", True,
      "device = torch.device(\"npu:0\" if opt.use_GPU else \"cpu\")", "Inference device."),
    C("net.load_state_dict(torch.load(opt.model_dir))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(opt.model_dir, map_location=device))",
      "The released checkpoint was saved from a GPU, so its tensors are tagged cuda; torch.load without "
      "map_location fails on a host without CUDA."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Raises on the CPU-only torch build; the NPU timing needs the NPU sync."),
    C("torch.cuda.synchronize()  # kernels are asynchronous", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # kernels are asynchronous: wait before stopping the clock", "Same."),
])

E("dudonet_env", "environment.yml", "explicit_replacement", "DuDoNet conda environment.yml (pytorch 1.4 + cudatoolkit + astra)", [
    C("- python=3.7", "import_torch_npu", "replace", True, "  - python=3.9",
      "torch 2.1 (the oldest line with current torch_npu releases) supports Python 3.8-3.11."),
    C("- pytorch=1.4.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "There is no torch_npu for torch 1.4; torch_npu wheels pair with an exact torch version."),
    C("- torchvision=0.5.0", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
      "torchvision must match the torch bump or the environment does not solve."),
    C("- cudatoolkit=10.1", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime is useless on an NPU host; whether it breaks solving (aarch64) or is only dead weight (x86) is "
      "unconfirmed."),
    C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "Adds the torch_npu adapter matching torch 2.1.0."),
])

# --------------------------------------------------------------------------------------------
# FreeSeed (torch-radon fan beam, FFC/FFT network, DDP via torch.distributed.launch, AMP)
# --------------------------------------------------------------------------------------------
E("freeseed_main", "main.py", "explicit_replacement", "Masaaki-75/freeseed main.py (argparse, trainer dispatch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Entry point launched by torch.distributed.launch; trainers use torch.npu.* and 'npu' devices."),
])

E("freeseed_basic_trainer", "trainers/basic_trainer.py", "explicit_replacement",
  "Masaaki-75/freeseed trainers/basic_trainer.py (DDP/NCCL, AMP GradScaler, checkpoints, logging)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch.npu.amp import autocast, GradScaler",
      "The CUDA GradScaler disables itself when CUDA is unavailable, so NPU fp16 autocast would run without loss "
      "scaling (gradient underflow)."),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.local_rank)", "Per-rank device binding."),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://',", "HCCL instead of NCCL."),
    C("self.device = torch.device('cuda', self.local_rank)", "device_type", "replace", True,
      "self.device = torch.device('npu', self.local_rank)", "Per-rank device."),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "Non-distributed path: unchanged it silently runs on the CPU."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "Silently does nothing without CUDA; recent torch.manual_seed also seeds a registered custom backend, so the "
      "NPU generator is probably seeded anyway (unconfirmed for torch 2.1)."),
    C("torch.cuda.get_device_name(self.device)", "torch_cuda_api", "replace", True,
      "print('device: {} ({})'.format(self.device, torch.npu.get_device_name(self.device)))",
      "Log line, but torch.cuda.get_device_name initialises CUDA and raises on the CPU-only torch build."),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "Resolves the current CUDA device first (lazy init) and raises on a host without CUDA."),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "Returns 0 when CUDA is not initialised; only the logged memory figure is wrong."),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "No-op without CUDA; cache release is a memory-headroom measure only."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Benchmark sync; raises on the CPU-only torch build."),
    C("torch.cuda.synchronize()  # end of timed region", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # end of timed region", "Same."),
])

E("freeseed_trainer", "trainers/freeseed_trainer.py", "explicit_replacement",
  "Masaaki-75/freeseed trainers (FreeSeed and dual-domain FreeSeed trainers)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch.npu.amp import autocast",
      "Unchanged, CUDA autocast disables itself with a warning and the model trains in fp32 on the NPU: results "
      "stay correct, only the --amp speed-up is lost."),
])

E("freeseed_freenet", "models/freeseed/freenet.py", "explicit_replacement",
  "Masaaki-75/freeseed models (FreeNet: FFC blocks with learnable frequency masks)", [
    C("fy = torch.fft.fftfreq(h, device=device)", "unsupported_op_workaround", "replace", False,
      "fy = torch.fft.fftfreq(h).abs().view(1, h, 1).to(device)",
      "torch.fft.fftfreq is marked unsupported for A2/A3 in Ascend's 2.7.1 API list and by msFmkTransplt; "
      "building the grid on the CPU avoids it. Whether the on-device call actually fails is unconfirmed."),
    C("fx = torch.fft.rfftfreq((w_half - 1) * 2, device=device)", "unsupported_op_workaround", "replace", False,
      "fx = torch.fft.rfftfreq((w_half - 1) * 2).view(1, 1, w_half).to(device)",
      "Same for rfftfreq (unconfirmed)."),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "Disabling CUDA autocast does not disable NPU autocast: the 1x1 convolution on the spectrum would silently "
      "run in fp16 inside the outer NPU autocast region, which this guard exists to prevent."),
])

E("freeseed_ct_tools", "utils/ct_tools.py", "kernel_rewrite",
  "Masaaki-75/freeseed CT helpers on torch-radon RadonFanbeam", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "The module's self-test (__main__) runs standalone and uses an 'npu' device; in training torch_npu is "
      "already imported by main.py."),
    C("from torch_radon import RadonFanbeam", "custom_cuda_extension", "replace", True,
      "from utils.radon_torch import RadonFanbeam  # pure-PyTorch fan-beam projector with the torch-radon API",
      "torch-radon only has CUDA kernels (texture-based projectors) and ships CUDA wheels only."),
    C("counts = torch.poisson(I0 * torch.exp(-sino))", "unsupported_op_workaround", "replace", False,
      "counts = torch.poisson((I0 * torch.exp(-sino)).cpu()).to(sino.device)",
      "torch.poisson is marked unsupported on A2/A3 in Ascend's 2.7.1 API list; an op without NPU kernel falls "
      "back to the CPU with a warning, so sampling explicitly on the host is a clarity/performance choice."),
    C("check_adjoint(tools, torch.device('cuda'))", "device_type", "replace", True,
      "print('relative adjoint mismatch: {:.2e}'.format(check_adjoint(tools, torch.device('npu'))))",
      "Self-test device."),
])

E("freeseed_train_sh", "scripts/train_freeseed.sh", "explicit_replacement",
  "Masaaki-75/freeseed training launcher (torch.distributed.launch)", [
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "With the list 0,1 and --nproc_per_node=2 the ranks bind to NPU 0/1 through local_rank anyway; the variable "
      "only hides the other cards. Not required for this value (it would be for a list such as 2,3)."),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment before python starts."),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "Diagnostic print only; the script has no set -e, so a missing nvidia-smi does not stop it."),
])

E("freeseed_requirements", "requirements.txt", "explicit_replacement", "Masaaki-75/freeseed requirements.txt", [
    C("torch>=1.11.0", "import_torch_npu", "replace", False, "torch==2.1.0",
      "torch_npu wheels pair with one exact torch version; pinning avoids pip picking a newer torch. Whether the "
      "torch-npu wheel's own metadata already forces it is unconfirmed."),
    C("torchvision>=0.12.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "Adds the adapter itself."),
    C("torch_radon-2.0.0-cp38-cp38-linux_x86_64.whl", "custom_cuda_extension", "removal", True, None,
      "CUDA 11.3 x86_64 wheel of torch-radon; replaced by the pure-PyTorch projector module."),
])

E("freeseed_dataset", "datasets/aapm_dataset.py", "explicit_replacement",
  "Masaaki-75/freeseed AAPM-Mayo dataset and DICOM preprocessing", [])

E("freeseed_metrics", "utils/metrics.py", "explicit_replacement", "Masaaki-75/freeseed metric helpers (PSNR/SSIM/RMSE)", [
    C("pred = pred.double()", "unsupported_op_workaround", "replace", True, "pred = pred.detach().cpu().double()",
      "SSIM uses F.conv2d, whose NPU input dtypes are bf16/fp16/fp32 only (Ascend 2.7.1 API list); keep the fp64 "
      "statistics by evaluating on the CPU."),
    C("target = target.double()", "unsupported_op_workaround", "replace", True,
      "target = target.detach().cpu().double()", "Same."),
])

# --------------------------------------------------------------------------------------------
# torch-radon itself (matteo-ronchetti/torch-radon): CUDA kernels behind a pybind extension
# --------------------------------------------------------------------------------------------
E("torchradon_setup", "setup.py", "kernel_rewrite", "matteo-ronchetti/torch-radon setup.py (nvcc static lib + CUDAExtension)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "NPU extension class instead of CUDAExtension."),
    C("from make import build", "custom_cuda_extension", "replace", True,
      "from make_ascend import build  # compiles the Ascend C kernels into objs/libradon_ascend.a",
      "make.py drives nvcc with -gencode flags; the kernels have to be rewritten and built with the CANN toolchain."),
    C("cuda_home = os.getenv(\"CUDA_HOME\", \"/usr/local/cuda\")", "env_var", "replace", True,
      "ascend_home = os.getenv(\"ASCEND_TOOLKIT_HOME\", \"/usr/local/Ascend/ascend-toolkit/latest\")",
      "Toolkit location for the kernel build."),
    C("print(f\"Using CUDA_HOME={cuda_home}\")", "env_var", "replace", True,
      "print(f\"Using ASCEND_TOOLKIT_HOME={ascend_home}\")",
      "Log line, but it reads the renamed variable (NameError otherwise)."),
    C("build(cuda_home=cuda_home", "custom_cuda_extension", "replace", True,
      "build(ascend_home=ascend_home, verbose=\"--verbose\" in sys.argv)", "Kernel build call."),
    C("CUDAExtension('torch_radon_cuda'", "custom_cuda_extension", "replace", True,
      "NpuExtension('torch_radon_npu', [os.path.abspath('src/pytorch.cpp')],", "Extension name and class."),
    C("libraries=[\"radon\", \"cufft\"],", "custom_cuda_extension", "replace", True,
      "libraries=[\"radon_ascend\"],", "cuFFT does not exist on an NPU host; the link would fail."),
])

E("torchradon_init", "torch_radon/__init__.py", "kernel_rewrite",
  "matteo-ronchetti/torch-radon torch_radon/__init__.py (Radon, RadonFanbeam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "Library entry: the rewritten extension links against torch_npu and the module calls torch.npu.device."),
    C("=import torch_radon_cuda", "custom_cuda_extension", "replace", True,
      "import torch_radon_npu as torch_radon_cuda",
      "Binary module of the NPU rewrite, kept under the old name so the call sites stay unchanged."),
    C("if not x.is_cuda:", "device_type", "replace", True, "if not x.is_npu:",
      "Input validation; NPU tensors would be rejected."),
    C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major, minor = 6, 0  # no compute capability on Ascend; fp16 is native on the NPU kernels",
      "torch.cuda.get_device_capability raises without CUDA; torch.npu.get_device_capability only returns a "
      "compatibility value configured through TORCH_NPU_DEVICE_CAPABILITY, not a hardware property, so the gate is "
      "dropped rather than ported."),
    C("with torch.cuda.device(sinogram.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(sinogram.device):", "Device guard around the kernel launch."),
])

E("torchradon_diff", "torch_radon/differentiable_functions.py", "kernel_rewrite",
  "matteo-ronchetti/torch-radon torch_radon/differentiable_functions.py (autograd wrappers)", [
    C("=import torch_radon_cuda", "custom_cuda_extension", "replace", True,
      "import torch_radon_npu as torch_radon_cuda", "Same alias as in __init__.py."),
])

E("torchradon_filtering", "torch_radon/filtering.py", "kernel_rewrite",
  "matteo-ronchetti/torch-radon torch_radon/filtering.py (Fourier filters)", [])

E("torchradon_docker", "docker/Dockerfile", "kernel_rewrite", "matteo-ronchetti/torch-radon docker build image", [
    C("FROM nvidia/cuda:11.1-devel-ubuntu18.04", "custom_cuda_extension", "replace", True,
      "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "Build image must carry CANN instead of the CUDA toolkit (exact image tag unconfirmed)."),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "replace", False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest",
      "Inert once setup.py reads ASCEND_TOOLKIT_HOME with the same default."),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "Only read by CUDA builds; inert."),
    C("pip install torch==1.8.1+cu111", "import_torch_npu", "replace", True,
      "RUN python3 -m pip install torch==2.1.0 torch-npu==2.1.0.post12",
      "CUDA wheel of torch 1.8.1 replaced by CPU torch + matching torch_npu."),
])

E("torchradon_example", "examples/fanbeam_fbp.py", "explicit_replacement",
  "matteo-ronchetti/torch-radon examples (fan-beam FBP, half precision)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "Standalone example."),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", "Example device."),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "Raises on the CPU-only torch build."),
    C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all kernels finished before reading the clock", "Same."),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print(\"Peak NPU memory: {:.1f} MB\".format(torch.npu.max_memory_allocated() / 2 ** 20))",
      "Returns 0 without CUDA initialised; log only."),
])

# --------------------------------------------------------------------------------------------
# ODL torch bridge: device-agnostic (host NumPy round trip), nothing to change
# --------------------------------------------------------------------------------------------
E("odl_operator", "odl/contrib/torch/operator.py", "explicit_replacement",
  "odlgroup/odl odl/contrib/torch/operator.py (OperatorFunction / OperatorModule)", [])
