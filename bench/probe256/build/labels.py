# Labels for probe256: deformable medical image registration (VoxelMorph / TransMorph / LapIRN /
# SynthMorph-style / uniGradICON / MONAI bundle), CUDA -> Ascend NPU (torch_npu).
#
# "required" means: left unchanged, the line fails on an Ascend host, computes something wrong,
# or silently does the wrong thing (e.g. runs on the CPU, drops AMP, ignores the device selection),
# judged on the program as a whole with the other required edits applied. Performance-only
# rewrites, silent no-ops and anything not confirmable in /work/shared/knowledge are False.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: import torch_npu right after torch so the 'npu' device and torch.npu exist "
               "(autoload only from torch_npu 2.5.1 on)")
DP_NOTE = "torch.nn.DataParallel is unsupported (✘) on Ascend; use DDP with one process per NPU or a single device"
SETENV_NOTE = ("CANN environment (libhccl, ASCEND_OPP_PATH, ...) must be sourced before torch_npu imports; "
               "not required if the user's shell/profile already does it. Must precede `set -u`.")

# ---------------------------------------------------------------- VoxelMorph (PyTorch backend)
E("vxm_train", "scripts/torch/train.py", "explicit_replacement",
  "VoxelMorph scripts/torch/train.py (--gpu, CUDA_VISIBLE_DEVICES, device='cuda', DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "all tensors and the model go to this device; 'cuda' fails on a host without CUDA"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "Ascend runtime ignores CUDA_VISIBLE_DEVICES: --gpu would silently be ignored and every run lands on NPU 0"),
    C("torch.backends.cudnn.deterministic = not args.cudnn_nondet", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(not args.cudnn_nondet)",
      "cudnn flag is accepted (listed as supported) but does not steer NPU kernels; NPU determinism via "
      "torch.use_deterministic_algorithms — effect of the cudnn flag on NPU unconfirmed"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])", DP_NOTE),
])

E("vxm_register", "scripts/torch/register.py", "device_branch_or_abstraction",
  "VoxelMorph scripts/torch/register.py (GPU/CPU branch on --gpu)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "GPU branch of the device switch; model load (map_location=device) and inputs use it"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "device selection via CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "no effect on NPU kernels (unconfirmed); inference only, so not required"),
])

E("vxm_losses", "voxelmorph/torch/losses.py", "device_branch_or_abstraction",
  "VoxelMorph voxelmorph/torch/losses.py (NCC window hard-coded to cuda)", [
    C('sum_filt = torch.ones([1, 1, *win]).to("cuda")', "tensor_to_device", "replace", True,
      "sum_filt = torch.ones([1, 1, *win], device=Ii.device)",
      "hard-coded 'cuda' fails on NPU; create the box filter on the images' device"),
])

E("vxm_layers", "voxelmorph/torch/layers.py", "device_branch_or_abstraction",
  "VoxelMorph voxelmorph/torch/layers.py (SpatialTransformer/VecInt/ResizeTransform, buffer-based grid)", [
])

E("vxm_synth", "voxelmorph/torch/synth.py", "device_branch_or_abstraction",
  "SynthMorph-style label/image synthesis ported to PyTorch (perlin noise, GMM intensities on the GPU)", [
    C("dtype=torch.float32, device='cuda'):", "device_type", "replace", False,
      "def draw_perlin(out_shape, scales, min_std=0, max_std=1, dtype=torch.float32, device='npu'):",
      "only a default: every in-repo caller passes device explicitly"),
    C("torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", False,
      "torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "fallback when device=None silently picks the CPU on an NPU host; the training script passes device, "
      "so only external callers hit it"),
])

E("vxm_train_synth", "scripts/torch/train_synthmorph.py", "explicit_replacement",
  "SynthMorph PyTorch training script (torch.cuda.amp, TF32 capability check, fused AdamW, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "False on an NPU host -> the script raises before training"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device initialises CUDA and raises without it"),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)", "model, synthesis and resume all use this device"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major = 0  # Ascend has no sm_XY capability; the TF32 switch below is CUDA-only",
      "needs CUDA; torch.npu.get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, "
      "so the tuple unpack breaks either way"),
    C("print(f'training on {torch.cuda.get_device_name(device)} (sm_{major}x)')", "torch_cuda_api", "replace", True,
      "print(f'training on {torch.npu.get_device_name(device)}')", "torch.cuda.get_device_name raises without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above should already seed the NPU generator (unconfirmed)"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=args.lr)",
      "evaluates False on NPU, so plain AdamW runs: correct but unfused; NpuFusedAdamW is the fused counterpart"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "CUDA GradScaler disables itself without CUDA: --amp fp16 training would run without loss scaling"),
    C("map_location=f'cuda:{args.gpu}'", "device_type", "replace", True,
      "state = torch.load(args.resume, map_location=f'npu:{args.gpu}')",
      "mapping a checkpoint to cuda:N fails on an NPU host"),
    C("torch.compile(model, mode='max-autotune')", "compile_mode", "replace", False,
      "train_model = torch.compile(model) if args.compile else model",
      "max-autotune relies on Triton GPU autotuning; torch.compile on NPU (inductor in torch_npu>=2.6, npugraphs "
      "backend) — which modes work is unconfirmed; opt-in flag"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast does not cover NPU tensors: --amp would silently train in fp32"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "CUDA allocator stats are empty on an NPU host: logs 0 GiB"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only returns cached memory"),
])

E("vxm_train_sh", "scripts/torch/train_oasis.sh", "explicit_replacement",
  "VoxelMorph-style OASIS training launcher (nvidia-smi log, CUDA_VISIBLE_DEVICES, set -euo pipefail)", [
    C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True,
      'npu-smi info > "${OUT_DIR}/npu.txt"',
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the launcher"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}", "ignored by the Ascend runtime; GPU=1 runs would land on NPU 0"),
])

E("vxm_docker", "Dockerfile", "explicit_replacement",
  "VoxelMorph-torch style runtime Dockerfile (nvidia/cuda base, cu118 torch wheel, NVIDIA_* env)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA runtime image carries no CANN toolkit; a CANN base image also provides the set_env.sh exports as ENV"),
    C("=ARG PYTHON_VERSION=3.10", "import_torch_npu", "npu_only_addition", True,
      "ARG TORCH_NPU_VERSION=2.1.0.post17", "torch-npu version pinned next to torch (pairs with CANN 8.3.RC1)"),
    C("=ARG TORCH_VERSION=2.0.1", "import_torch_npu", "replace", True, "ARG TORCH_VERSION=2.1.0",
      "torch must equal torch-npu's base version; torch_npu 2.0.1 only pairs with CANN 7.0"),
    C("&& python -m pip install torch==${TORCH_VERSION}+cu118", "device_type", "replace", True,
      "&& python -m pip install torch==${TORCH_VERSION} torch-npu==${TORCH_NPU_VERSION} --extra-index-url https://download.pytorch.org/whl/cpu",
      "+cu118 wheels are CUDA builds (x86 only); Ascend needs CPU/PyPI torch plus torch-npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read only by the NVIDIA container runtime; NPUs are mapped with --device /dev/davinciN or "
      "ASCEND_VISIBLE_DEVICES under Ascend Docker Runtime"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime setting; harmless but meaningless on Ascend"),
])

# ---------------------------------------------------------------- TransMorph
E("tm_train", "TransMorph/train_TransMorph.py", "explicit_replacement",
  "TransMorph train_TransMorph.py (GPU_iden, torch.cuda.set_device, model.cuda(), t.cuda() batches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
    C("=reg_model.cuda()", "tensor_to_device", "replace", True, "reg_model.npu()",
      "register_model holds the sampling grid buffer; must live on the NPU"),
    C("=reg_model_bilin.cuda()", "tensor_to_device", "replace", True, "reg_model_bilin.npu()",
      "same as reg_model (bilinear grid warper)"),
    C("best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[-1])['state_dict']", "device_type",
      "replace", False,
      "best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[-1], map_location='npu')['state_dict']",
      "only fails when resuming from a checkpoint written on a CUDA GPU; resume is off by default"),
    C("data = [t.cuda() for t in data]", "tensor_to_device", "replace", True, "data = [t.npu() for t in data]",
      "training batch to device"),
    C("data = [t.cuda() for t in data[:4]]", "tensor_to_device", "replace", True,
      "data = [t.npu() for t in data[:4]]", "validation batch to device"),
    C("def_out = reg_model([x_seg.cuda().float(), output[1].cuda()])", "tensor_to_device", "replace", True,
      "def_out = reg_model([x_seg.float(), output[1]])",
      "redundant .cuda() on tensors already on the device still raises on an NPU host"),
    C("grid_img = torch.from_numpy(grid_img).cuda()", "tensor_to_device", "replace", True,
      "grid_img = torch.from_numpy(grid_img).npu()", "grid visualisation volume"),
    C("GPU_num = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "GPU_num = torch.npu.device_count()", "print-only; returns 0 on an NPU host"),
    C("GPU_name = torch.cuda.get_device_name(GPU_idx)", "torch_cuda_api", "replace", False,
      "GPU_name = torch.npu.get_device_name(GPU_idx)",
      "inside a loop over device_count(), which is 0 without CUDA, so never reached unless the count is ported"),
    C("torch.cuda.set_device(GPU_iden)", "torch_cuda_api", "replace", True, "torch.npu.set_device(GPU_iden)",
      "raises without CUDA; also selects which NPU is used"),
    C("GPU_avai = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "GPU_avai = torch.npu.is_available()", "print-only (prints False)"),
    C("print('Currently using: ' + torch.cuda.get_device_name(GPU_iden))", "torch_cuda_api", "replace", True,
      "print('Currently using: ' + torch.npu.get_device_name(GPU_iden))", "get_device_name raises without CUDA"),
])

E("tm_infer", "TransMorph/infer_TransMorph.py", "explicit_replacement",
  "TransMorph infer_TransMorph.py (Dice/Jacobian evaluation, runtime with torch.cuda.synchronize)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[model_idx])['state_dict']",
      "device_type", "replace", True,
      "best_model = torch.load(model_dir + natsorted(os.listdir(model_dir))[model_idx], map_location='cpu')['state_dict']",
      "evaluated checkpoints (incl. the released TransMorph weights) were saved from CUDA tensors; "
      "torch.load without map_location fails on a host without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
    C("=reg_model.cuda()", "tensor_to_device", "replace", True, "reg_model.npu()", "nearest-neighbour label warper"),
    C("data = [t.cuda() for t in data]", "tensor_to_device", "replace", True, "data = [t.npu() for t in data]",
      "test batch to device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; on NPU the sync is what makes the runtime numbers valid"),
    C("torch.cuda.synchronize()  # kernels are async", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # kernels are async: wait before stopping the clock",
      "second timing sync"),
    C("def_out = reg_model([x_seg.cuda().float(), flow.cuda()])", "tensor_to_device", "replace", True,
      "def_out = reg_model([x_seg.float(), flow])", ".cuda() on NPU tensors raises"),
    C("GPU_num = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "GPU_num = torch.npu.device_count()", "print-only; returns 0 on an NPU host"),
    C("GPU_name = torch.cuda.get_device_name(GPU_idx)", "torch_cuda_api", "replace", False,
      "GPU_name = torch.npu.get_device_name(GPU_idx)", "unreachable while device_count() is left unported"),
    C("torch.cuda.set_device(GPU_iden)", "torch_cuda_api", "replace", True, "torch.npu.set_device(GPU_iden)",
      "raises without CUDA"),
    C("GPU_avai = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "GPU_avai = torch.npu.is_available()", "print-only"),
    C("print('Currently using: ' + torch.cuda.get_device_name(GPU_iden))", "torch_cuda_api", "replace", True,
      "print('Currently using: ' + torch.npu.get_device_name(GPU_iden))", "get_device_name raises without CUDA"),
])

E("tm_utils", "TransMorph/utils.py", "device_branch_or_abstraction",
  "TransMorph utils.py (register_model with .cuda() on its inputs, Dice/Jacobian/uncertainty helpers)", [
    C("img = x[0].cuda()", "tensor_to_device", "replace", True, "img = x[0].to(self.spatial_trans.grid.device)",
      "register_model moves its inputs with .cuda(): raises on NPU; follow the grid buffer's device instead"),
    C("flow = x[1].cuda()", "tensor_to_device", "replace", True, "flow = x[1].to(self.spatial_trans.grid.device)",
      "same for the flow"),
])

E("tm_losses", "TransMorph/losses.py", "device_branch_or_abstraction",
  "TransMorph losses.py (pytorch-ssim is_cuda idiom, NCC_vxm .to('cuda'), MI bin centres .cuda())", [
    C("=if img1.is_cuda:", "device_type", "replace", False, "if img1.device.type != 'cpu':",
      "is_cuda is False for NPU tensors, so the branch is skipped; the following window.type_as(img1) most likely "
      "moves the window to the NPU (unconfirmed), hence not required"),
    C("=window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
      "window = window.to(img1.device)", "unreachable on NPU (guarded by is_cuda); must change together with the guard"),
    C("if img1.is_cuda: window = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
      "window = window.to(img1.device)", "functional ssim3D: same is_cuda/type_as idiom"),
    C('sum_filt = torch.ones([1, 1, *win]).to("cuda")', "tensor_to_device", "replace", True,
      "sum_filt = torch.ones([1, 1, *win], device=Ii.device)", "hard-coded 'cuda' in the NCC loss used for training"),
    C("Variable(torch.linspace(minval, maxval, num_bin), requires_grad=False).cuda()", "tensor_to_device", "replace",
      True, "vol_bin_centers = torch.linspace(minval, maxval, num_bin)",
      "MI constructor calls .cuda(): raises on an NPU host; move lazily in mi()"),
    C("vbc = torch.reshape(self.vol_bin_centers, o).cuda()", "tensor_to_device", "replace", True,
      "vbc = torch.reshape(self.vol_bin_centers, o).to(y_true.device)", "bin centres to the images' device"),
    C("torch.linspace(minval, maxval, num_bin, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "vol_bin_centers = torch.linspace(minval, maxval, num_bin, requires_grad=False)",
      "local MI constructor; local_mi() already does .to(y_true.device)"),
])

E("tm_model", "TransMorph/models/TransMorph.py", "device_branch_or_abstraction",
  "TransMorph models/TransMorph.py (3D Swin encoder, buffers only, SDPA path)", [
])

E("tm_bench", "TransMorph/benchmark_runtime.py", "explicit_replacement",
  "Runtime/memory benchmark of registration papers (torch.cuda.Event timing, peak memory, channels_last_3d)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=use_amp), torch.no_grad():", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp), torch.no_grad():",
      "CUDA autocast does not cover NPU tensors: the 'amp' rows would silently measure fp32"),
    C("=with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "same, timed loop"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the GPU", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the NPU before reading the events", "raises without CUDA"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("gpu_name = torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(args.gpu)", "raises without CUDA"),
    C("model = TransMorph.TransMorph(config).cuda().eval()", "tensor_to_device", "replace", True,
      "model = TransMorph.TransMorph(config).npu().eval()", "Module.cuda() raises without CUDA"),
    C("reg_model = utils.register_model(config.img_size, 'bilinear').cuda()", "tensor_to_device", "replace", True,
      "reg_model = utils.register_model(config.img_size, 'bilinear').npu()", "grid buffer to the NPU"),
    C("model = model.to(memory_format=torch.channels_last_3d)", "unsupported_op_workaround", "replace", False,
      "pass  # channels_last(_3d) is not supported on Ascend; keep contiguous NCDHW",
      "Ascend lists channels_last as unsupported; opt-in flag and the failure mode (error vs. slow) is unconfirmed"),
    C("x = torch.rand((1, 1, *config.img_size), device='cuda')", "device_type", "replace", True,
      "x = torch.rand((1, 1, *config.img_size), device='npu')", "factory with device='cuda'"),
    C("y = torch.rand((1, 1, *config.img_size), device='cuda')", "device_type", "replace", True,
      "y = torch.rand((1, 1, *config.img_size), device='npu')", "factory with device='cuda'"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only affects cached memory"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
    C("peak_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
      "peak_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "CUDA allocator stats are empty on an NPU host: the table would report 0 GB"),
])

# ---------------------------------------------------------------- LapIRN
E("lap_train", "Code/Train_LapIRN_disp.py", "explicit_replacement",
  "LapIRN Code/Train_LapIRN_disp.py (three pyramid stages, .cuda() models and grids)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu', "--gpu would be ignored by the Ascend runtime"),
    C("X = X.cuda().float()", "tensor_to_device", "replace", True, "X = X.npu().float()", "moving batch"),
    C("Y = Y.cuda().float()", "tensor_to_device", "replace", True, "Y = Y.npu().float()", "fixed batch"),
    C("=range_flow=range_flow).cuda()", "tensor_to_device", "replace", True, "range_flow=range_flow).npu()",
      "lvl1 model to device"),
    C("transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "transform = SpatialTransform_unit()",
      "module has no parameters or buffers, so Module.cuda() touches no tensor and does not fail "
      "(reasoned from nn.Module._apply, unconfirmed in knowledge); dead .cuda()"),
    C("grid_4 = torch.from_numpy(np.reshape(grid_4, (1,) + grid_4.shape)).cuda().float()", "tensor_to_device",
      "replace", True, "grid_4 = torch.from_numpy(np.reshape(grid_4, (1,) + grid_4.shape)).npu().float()",
      "sampling grid for the Jacobian loss"),
    C("imgshape=imgshape_4, range_flow=range_flow).cuda()", "tensor_to_device", "replace", True,
      "model_lvl1 = Miccai2020_LDR_laplacian_unit_disp_add_lvl1(2, 3, start_channel, is_train=True, imgshape=imgshape_4, range_flow=range_flow).npu()",
      "frozen lvl1 model in stage 2"),
    C("range_flow=range_flow, model_lvl1=model_lvl1).cuda()", "tensor_to_device", "replace", True,
      "range_flow=range_flow, model_lvl1=model_lvl1).npu()", "lvl2 model"),
    C("grid_2 = torch.from_numpy(np.reshape(grid_2, (1,) + grid_2.shape)).cuda().float()", "tensor_to_device",
      "replace", True, "grid_2 = torch.from_numpy(np.reshape(grid_2, (1,) + grid_2.shape)).npu().float()",
      "lvl2 grid"),
    C('range_flow=range_flow).to("cuda")', "device_type", "replace", True, 'range_flow=range_flow).to("npu")',
      "lvl1 model in stage 3"),
    C('model_lvl1=model_lvl1).to("cuda")', "device_type", "replace", True, 'model_lvl1=model_lvl1).to("npu")',
      "lvl2 model in stage 3"),
    C('model_lvl2=model_lvl2).to("cuda")', "device_type", "replace", True, 'model_lvl2=model_lvl2).to("npu")',
      "lvl3 model"),
    C('grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).to("cuda").float()', "device_type", "replace",
      True, 'grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).to("npu").float()', "full-res grid"),
])

E("lap_model", "Code/miccai2020_model_stage.py", "explicit_replacement",
  "LapIRN Code/miccai2020_model_stage.py (grids created with .cuda() inside __init__)", [
    C("self.grid_1 = torch.from_numpy(np.reshape(self.grid_1, (1,) + self.grid_1.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_1 = torch.from_numpy(np.reshape(self.grid_1, (1,) + self.grid_1.shape)).npu().float()",
      "plain attribute (not a buffer): created on CUDA in __init__, model.npu() would not move it"),
    C("self.grid_2 = torch.from_numpy(np.reshape(self.grid_2, (1,) + self.grid_2.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_2 = torch.from_numpy(np.reshape(self.grid_2, (1,) + self.grid_2.shape)).npu().float()",
      "lvl2 grid, same issue"),
    C("self.grid_3 = torch.from_numpy(np.reshape(self.grid_3, (1,) + self.grid_3.shape)).cuda().float()",
      "tensor_to_device", "replace", True,
      "self.grid_3 = torch.from_numpy(np.reshape(self.grid_3, (1,) + self.grid_3.shape)).npu().float()",
      "lvl3 grid, same issue"),
    C("=self.transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "self.transform = SpatialTransform_unit()",
      "parameter-free module: .cuda() moves nothing and does not fail (unconfirmed in knowledge)"),
    C("self.transform = SpatialTransform_unit().cuda()  # warps at 1/2 resolution", "tensor_to_device", "replace",
      False, "self.transform = SpatialTransform_unit()  # warps at 1/2 resolution", "parameter-free module"),
    C("self.transform = SpatialTransform_unit().cuda()  # full resolution", "tensor_to_device", "replace", False,
      "self.transform = SpatialTransform_unit()  # full resolution", "parameter-free module"),
])

E("lap_functions", "Code/Functions.py", "explicit_replacement",
  "LapIRN Code/Functions.py (numpy grids, datasets, transform_unit_flow_to_flow_cuda)", [
])

E("lap_test", "Code/Test_LapIRN_disp.py", "explicit_replacement",
  "LapIRN Code/Test_LapIRN_disp.py (pretrained model inference, use_cuda device switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=range_flow=range_flow).cuda()", "tensor_to_device", "replace", True, "range_flow=range_flow).npu()",
      "lvl1 model"),
    C("model_lvl1=model_lvl1).cuda()", "tensor_to_device", "replace", True, "model_lvl1=model_lvl1).npu()",
      "lvl2 model"),
    C("model_lvl2=model_lvl2).cuda()", "tensor_to_device", "replace", True, "model_lvl2=model_lvl2).npu()",
      "lvl3 model"),
    C("transform = SpatialTransform_unit().cuda()", "tensor_to_device", "replace", False,
      "transform = SpatialTransform_unit()", "parameter-free module: .cuda() is a no-op (unconfirmed in knowledge)"),
    C("model.load_state_dict(torch.load(opt.modelpath))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(opt.modelpath, map_location='npu'))",
      "the released LapIRN weights were saved from CUDA tensors; without map_location loading fails without CUDA"),
    C("grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).cuda().float()", "tensor_to_device", "replace",
      True, "grid = torch.from_numpy(np.reshape(grid, (1,) + grid.shape)).npu().float()", "full-res grid"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "input volumes go to this device"),
])

E("lap_env", "environment.yml", "explicit_replacement",
  "LapIRN-era conda environment.yml (pytorch channel + cudatoolkit)", [
    C("- pytorch=1.7.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu exists for torch 1.7; torch must equal the torch-npu base version (CPU build)"),
    C("- torchvision=0.8.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision 0.8.2 pins pytorch 1.7.1; must follow the torch bump"),
    C("- cudatoolkit=10.2", "device_type", "removal", True, None,
      "pulls the CUDA variant of pytorch from the pytorch channel (and does not exist for aarch64 hosts)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post17",
      "torch-npu pin (pairs with torch 2.1.0)"),
])

# ---------------------------------------------------------------- uniGradICON / icon_registration
E("ugi_requirements", "requirements.txt", "explicit_replacement",
  "uniGradICON requirements.txt with cu118 wheel index", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on x86 torch_npu needs the CPU torch build"),
    C("torch==2.1.2+cu118", "device_type", "replace", True, "torch==2.1.0",
      "CUDA local-version wheel; torch-npu 2.1.0.postN pairs with torch 2.1.0 exactly"),
    C("torchvision==0.16.2+cu118", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build; must match torch 2.1.0"),
    C("icon_registration>=1.1.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch-npu pin added to the requirements (after the torch/torchvision block)"),
    C("nvidia-ml-py3", "device_type", "removal", False, None,
      "pure-python NVML binding: installs, but NVML cannot see Ascend devices (use torch.npu.utilization / npu-smi)"),
])

E("icon_config", "src/icon_registration/config.py", "device_branch_or_abstraction",
  "icon_registration config.py (package-wide device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.npu must exist when the package-wide device is chosen"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silently selects the CPU on an NPU host; every network/itk helper uses config.device"),
])

E("icon_train", "src/icon_registration/train.py", "device_branch_or_abstraction",
  "icon_registration train.py (train_batchfunction with torch.cuda.amp and memory logging)", [
    C("return torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
      "return torch.npu.max_memory_allocated() / 1024 ** 3",
      "CUDA allocator stats are empty on an NPU host: logs 0"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", "CUDA GradScaler disables itself without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=use_amp, dtype=config.amp_dtype):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp, dtype=config.amp_dtype):",
      "CUDA autocast does not cover NPU tensors: use_amp silently trains in fp32"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
    C('if config.device.type == "cuda":', "device_type", "replace", True, 'if config.device.type == "npu":',
      "after the device port this is False, so the timer stops before queued NPU work has finished"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached once the device check is ported; raises without CUDA"),
])

E("icon_itk", "src/icon_registration/itk_wrapper.py", "device_branch_or_abstraction",
  "icon_registration itk_wrapper.py (register_pair, instance optimisation)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only returns cached memory after IO"),
])

E("ugi_init", "src/unigradicon/__init__.py", "device_branch_or_abstraction",
  "uniGradICON src/unigradicon/__init__.py (model zoo, preprocessing, unigradicon-register CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if requested.startswith("cuda") and not torch.cuda.is_available():', "torch_cuda_api", "replace", True,
      'if requested.startswith("npu") and not torch.npu.is_available():',
      "with the CUDA check the CLI falls back to the CPU on an NPU host"),
    C('parser.add_argument("--device", required=False, default="cuda:0",', "device_type", "replace", True,
      'parser.add_argument("--device", required=False, default="npu:0",',
      "default device string; 'cuda:0' leads to the CPU fallback above"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=args.fp16):',
      "autocast('cuda') is disabled without CUDA: --fp16 silently does nothing"),
])

E("ugi_train", "training/train.py", "explicit_replacement",
  "uniGradICON training/train.py (DataParallel or DDP/nccl, .cuda() batches, pynvml logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(h)", "torch_cuda_api", "replace", False,
      "util = torch.npu.utilization(i)",
      "NVML cannot see Ascend devices; nvmlInit fails inside the guarded import, so logging is just skipped"),
    C("moving_image, fixed_image = moving_image.cuda(), fixed_image.cuda()", "tensor_to_device", "replace", True,
      "moving_image, fixed_image = moving_image.npu(), fixed_image.npu()", "batch to device"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA; binds each rank to its NPU"),
    C("net = net.cuda(local_rank)", "tensor_to_device", "replace", True, "net = net.npu(local_rank)",
      "DDP path model placement"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True, "if torch.npu.device_count() > 1:",
      "returns 0 on an NPU host: the default (non-DDP) run silently uses one device"),
    C("return torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True,
      "raise SystemExit('DataParallel is not supported on Ascend NPU; launch with torchrun ... --ddp')", DP_NOTE),
    C("return net.cuda()", "tensor_to_device", "replace", True, "return net.npu()", "single-device path"),
])

E("ugi_launch", "training/launch_ddp.sh", "explicit_replacement",
  "uniGradICON-style torchrun launcher with NCCL_* tuning and nvidia-smi", [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device list for the node; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-2}",
      "NCCL_* is ignored by HCCL; the CANN log level is the nearest knob (value mapping unconfirmed)"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "host NIC for HCCL's root-info bootstrap on multi-node runs; HCCL otherwise picks a NIC by its own "
      "priority, which can fail link setup — whether ib0 is the right NIC on the Ascend cluster is unconfirmed"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only transport switch; ignored by HCCL"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog counterpart (default already 1 per MindCluster docs)"),
    C("=nvidia-smi -L", "torch_cuda_api", "replace", False, "npu-smi info",
      "command missing on Ascend hosts; the script has no set -e, so it only prints an error"),
])

# ---------------------------------------------------------------- custom CUDA extension (cost volume)
E("corr_setup", "ext/corr3d/setup.py", "kernel_rewrite",
  "vendored 3D correlation/cost-volume CUDA extension (spatial_correlation_sampler-style setup.py)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension",
      "custom_cuda_extension", "replace", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "the import itself works with a CPU torch; only needed once the CUDA build is replaced"),
    C("Extension = CUDAExtension", "custom_cuda_extension", "replace", True, "Extension = NpuExtension",
      "default build path needs nvcc/CUDA_HOME and fails on an Ascend host; kernel needs an Ascend C rewrite"),
    C('source_files.append("corr3d_cuda_kernel.cu")', "custom_cuda_extension", "replace", True,
      'source_files.append("corr3d_ascendc_kernel.cpp")', ".cu kernel cannot be compiled for the NPU"),
    C('macro = [("USE_CUDA", None)]', "custom_cuda_extension", "replace", True, 'macro = [("USE_NPU", None)]',
      "USE_CUDA compiles the CUDA dispatch path in corr3d.cpp"),
    C('extra_compile_args = {"cxx": cxx_args, "nvcc": nvcc_args}', "custom_cuda_extension", "replace", False,
      'extra_compile_args = {"cxx": cxx_args}',
      "nvcc flags are meaningless without CUDA; whether NpuExtension tolerates the key is unconfirmed"),
])

E("corr_module", "models/correlation.py", "kernel_rewrite",
  "cost-volume registration decoder using the corr3d extension with a PyTorch fallback", [
    C("import corr3d_backend as _backend", "custom_cuda_extension", "replace", False,
      "import corr3d_npu as _backend",
      "guarded: on an NPU host the import fails and the (correct, slow) PyTorch fallback is used"),
    C('for f in ("corr3d.cpp", "corr3d_cpu.cpp", "corr3d_cuda_kernel.cu")]', "custom_cuda_extension", "replace",
      False, 'for f in ("corr3d.cpp", "corr3d_cpu.cpp", "corr3d_ascendc_kernel.cpp")]',
      "JIT source list names the .cu kernel; only used by the guarded CORR3D_JIT path"),
    C('_backend = load(name="corr3d_backend", sources=_SOURCES', "custom_cuda_extension", "replace", False,
      'raise ImportError("no nvcc JIT on Ascend: build ext/corr3d with NpuExtension")',
      "nvcc JIT build; cpp_extension.load is ✘ on A2/A3; only with CORR3D_JIT=1 and the failure is caught"),
    C("if self.use_cuda_kernel and _HAS_BACKEND and fea_fixed.is_cuda:", "device_type", "replace", False,
      "if self.use_cuda_kernel and _HAS_BACKEND and fea_fixed.is_npu:",
      "is_cuda is False for NPU tensors, so the fallback always runs: performance only"),
])

# ---------------------------------------------------------------- MONAI bundle (registration)
E("monai_train_cfg", "configs/train.yaml", "explicit_replacement",
  "MONAI model-zoo registration bundle train config (mednist_reg style, LocalNet + Warp)", [
    C("=- $import torch", "import_torch_npu", "npu_only_addition", True, "- $import torch_npu",
      "bundle expressions evaluate torch.npu.*; torch_npu must be imported by the config"),
    C("device: $torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device: $torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "silently trains on the CPU on an NPU host"),
    C("pin_memory: $torch.cuda.is_available()", "pin_memory", "replace", False, "pin_memory: true",
      "evaluates False on NPU: no pinned host memory, slower H2D copies only"),
])

E("monai_mgpu_cfg", "configs/multi_gpu_train.yaml", "explicit_replacement",
  "MONAI bundle multi_gpu_train override (DDP, nccl, torch.cuda.set_device)", [
    C("device: $torch.device(f'cuda:{dist.get_rank()}')", "device_type", "replace", True,
      "device: $torch.device(f'npu:{dist.get_rank()}')", "per-rank device"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "- $dist.is_initialized() or dist.init_process_group(backend='hccl')", "NCCL unavailable on Ascend"),
    C("$torch.cuda.set_device(@device)", "torch_cuda_api", "replace", True, "- $torch.npu.set_device(@device)",
      "raises without CUDA"),
])
