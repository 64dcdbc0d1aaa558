"""Labels for probe319: depth completion / LiDAR-camera fusion (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit. `sub` names the line (a substring
that occurs on exactly one line, or "=text" for an exact stripped match).
See ../README.md ("How the labels were chosen") for the policy behind required/optional.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported in the entry script to register the 'npu' device "
               "(mandatory before torch_npu 2.5.1; still recommended after)")
SET_ENV_NOTE = "CANN environment (libs, ASCEND_* paths) must be sourced before torch_npu can load"
PARAM_FREE_NOTE = ("parameter/buffer-free module: nn.Module.cuda() only walks parameters and buffers, so this "
                   "is a silent no-op on an NPU host; edited for consistency only")

# ---------------------------------------------------------------------------------------------
# PENet / ENet (JUGGHM/PENet_ICRA2021 style)
# ---------------------------------------------------------------------------------------------
E("penet_main", "penet/main.py", "device_branch_or_abstraction",
  "PENet/ENet main.py: argparse, --cpu flag, cuda/device pick, DataParallel, iterate() loop",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
        "cuda = torch.npu.is_available() and not args.cpu",
        "torch.cuda.is_available() is False on an Ascend host: the script silently trains on the CPU"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "every later .to(device) / map_location=device follows this variable"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "CUDA not initialised on an NPU host, so empty_cache() is a silent no-op; the NPU cache is never released"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises (no CUDA driver) when --evaluate is set; needed so gpu_time measures NPU execution"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = ModuleHolder(model)  # nn.DataParallel is unsupported on NPU; thin wrapper keeps .module",
        "torch.nn.DataParallel is marked unsupported (x) for Atlas A2/A3 in Ascend's 2.7.1 API list; "
        "the rest of the file relies on model.module, so a single-device wrapper (or DDP) replaces it"),
  ])

E("penet_model", "penet/model.py", "explicit_replacement",
  "PENet model.py: ENet two-branch backbone, PENet_C2 with DA-CSPN++ and fixed kernel encoders",
  [
      C("encoder = torch.zeros(ks * ks, ks * ks, ks, ks).cuda()", "tensor_to_device", "replace", True,
        "encoder = torch.zeros(ks * ks, ks * ks, ks, ks).npu()",
        "built at model construction time: .cuda() raises on an NPU host before the model is even moved"),
      C("encoder3 = torch.zeros(9, 9, 3, 3).cuda()", "tensor_to_device", "replace", True,
        "encoder3 = torch.zeros(9, 9, 3, 3).npu()",
        "same construction-time .cuda() in the dilation-1 inference variant"),
  ])

E("penet_basic", "penet/basic.py", "explicit_replacement",
  "PENet basic.py: conv blocks, SparseDownSampleClose, CSPNAccelerate (unfold + einsum), GeometryFeature",
  [])

E("penet_kitti_loader", "penet/dataloaders/kitti_loader.py", "explicit_replacement",
  "PENet / self-supervised-depth-completion KITTI loader (numpy/PIL, returns CPU tensors)",
  [])

E("penet_helper", "penet/helper.py", "explicit_replacement",
  "PENet helper.py: csv logger, checkpointing, lr schedule, multiscale avg-pool helper",
  [
      C('if torch.cuda.is_available() and mode != "train":', "torch_cuda_api", "replace", False,
        'if torch.npu.is_available() and mode != "train":',
        "only gates a peak-memory print; silently skipped on NPU"),
      C("torch.cuda.max_memory_allocated() / 1024.0 / 1024.0))", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 1024.0 / 1024.0))",
        "logging only; dead code on NPU until the guard above is ported"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "device-info file would record device=cpu on an NPU host; informational only"),
      C('f.write("device_count={}\\n".format(torch.cuda.device_count()))', "torch_cuda_api", "replace", False,
        'f.write("device_count={}\\n".format(torch.npu.device_count()))', "informational log line"),
      C('f.write("device_name={}\\n".format(torch.cuda.get_device_name(0)))', "torch_cuda_api", "replace", False,
        'f.write("device_name={}\\n".format(torch.npu.get_device_name(0)))', "informational log line"),
      C("avgpool = torch.nn.AvgPool2d(kernel_size=2, stride=2).cuda()", "tensor_to_device", "replace", False,
        "avgpool = torch.nn.AvgPool2d(kernel_size=2, stride=2)", PARAM_FREE_NOTE),
  ])

E("penet_run_sh", "penet/scripts/train_penet.sh", "explicit_replacement",
  "PENet three-stage training launcher (CUDA_VISIBLE_DEVICES=... python main.py)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("python main.py -b 6 -n e", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python main.py -b 6 -n e \\",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: device selection silently lost"),
      C("python main.py -b 6 -f -n pe", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python main.py -b 6 -f -n pe \\", "as above"),
      C("python main.py -b 10 -n pe", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} python main.py -b 10 -n pe \\", "as above"),
      C("CUDA_VISIBLE_DEVICES=0 python main.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=0 python main.py -b 1 -n pe --evaluate ../results/pe.pth.tar \\",
        "as above; evaluation must be pinned to one device"),
  ])

E("penet_env", "penet/environment.yml", "explicit_replacement",
  "conda environment.yml of a PENet/ENet reproduction (pytorch 1.6 + cudatoolkit 10.2)",
  [
      C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "no torch_npu release pairs with torch 1.6; torch must match a torch-npu wheel (e.g. 2.1.0)"),
      C("- cudatoolkit=10.2", "import_torch_npu", "removal", True, None,
        "CUDA-only package; not built for linux-aarch64 Ascend hosts, so the env does not solve"),
      C("- cudnn=7.6.5", "import_torch_npu", "removal", True, None, "CUDA-only package, as above"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
        "torch-npu pin (must equal the torch version) added to the pip section"),
      C("- pynvml==8.0.4", "import_torch_npu", "removal", False, None,
        "NVML binding; installs fine but has no Ascend backend (npu-smi instead)"),
  ])

# ---------------------------------------------------------------------------------------------
# sparse-to-dense / self-supervised-depth-completion (fangchangma)
# ---------------------------------------------------------------------------------------------
E("s2d_main", "sparse-to-dense/main.py", "explicit_replacement",
  "sparse-to-dense.pytorch main.py: whole-model checkpoints, model.cuda(), timed train/validate loops",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("checkpoint = torch.load(args.evaluate)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.evaluate, map_location='npu')",
        "checkpoint pickles the whole CUDA model/optimizer; without map_location torch.load tries to "
        "restore CUDA storages and fails on a host without CUDA"),
      C("checkpoint = torch.load(chkpt_path)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(chkpt_path, map_location='npu')",
        "same for resume; mapping to npu also keeps SGD momentum buffers on the device"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() raises on NPU host"),
      C("criterion = criteria.MaskedMSELoss().cuda()", "tensor_to_device", "replace", False,
        "criterion = criteria.MaskedMSELoss().npu()", PARAM_FREE_NOTE),
      C("criterion = criteria.MaskedL1Loss().cuda()", "tensor_to_device", "replace", False,
        "criterion = criteria.MaskedL1Loss().npu()", PARAM_FREE_NOTE),
      C("=input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "input, target = input.npu(), target.npu()", "batch transfer"),
      C("torch.cuda.synchronize()  # make sure the H2D copy is finished", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the H2D copy is finished", "raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for backward/step", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for backward/step before stopping the timer", "raises without CUDA"),
      C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
        "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
        "validation batch transfer"),
      C("torch.cuda.synchronize()  # val: H2D copy", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # val: H2D copy", "raises without CUDA"),
      C("torch.cuda.synchronize()  # val: forward finished", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # val: forward finished", "raises without CUDA"),
  ])

E("ssdc_main", "self-supervised-depth-completion/main.py", "device_branch_or_abstraction",
  "self-supervised-depth-completion main.py: --cpu flag, device pick, Intrinsics, photometric loss",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("cuda = torch.cuda.is_available() and not args.cpu", "torch_cuda_api", "replace", True,
        "cuda = torch.npu.is_available() and not args.cpu",
        "False on an Ascend host: silently falls back to CPU training"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "device variable used by all transfers"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = ModuleHolder(model)  # keeps .module; DataParallel unsupported on NPU",
        "torch.nn.DataParallel unsupported on Atlas A2/A3 per Ascend's API list"),
  ])

E("ssdc_inverse_warp", "self-supervised-depth-completion/inverse_warp.py", "explicit_replacement",
  "self-supervised-depth-completion inverse_warp.py: Intrinsics with cached pixel grid, grid_sample warping",
  [
      C("self.X_cam.data = self.X_cam.data.cuda()", "tensor_to_device", "replace", True,
        "self.X_cam.data = self.X_cam.data.npu()", "the project-defined Intrinsics.cuda() moves the grid with .cuda()"),
      C("self.Y_cam.data = self.Y_cam.data.cuda()", "tensor_to_device", "replace", True,
        "self.Y_cam.data = self.Y_cam.data.npu()", "as above"),
  ])

# ---------------------------------------------------------------------------------------------
# NLSPN (zzangjinsun/NLSPN_ECCV20 style)
# ---------------------------------------------------------------------------------------------
E("nlspn_main", "NLSPN/src/main.py", "explicit_replacement",
  "NLSPN main.py: mp.spawn one process per GPU, NCCL, apex amp + apex DDP + convert_syncbn_model",
  [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args_config.gpus', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args_config.gpus',
        "--gpus selects devices through CUDA_VISIBLE_DEVICES, which Ascend ignores"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=import apex", "distributed_framework", "removal", False, None,
        "apex is only used for convert_syncbn_model below; import itself works with a Python-only apex"),
      C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "replace", True,
        "from torch.nn.parallel import DistributedDataParallel as DDP",
        "NVIDIA apex DDP buckets gradients by torch.cuda.*Tensor type strings and CUDA streams; use torch DDP"),
      C("from apex import amp", "amp", "replace", True, "from torch.npu.amp import GradScaler",
        "NVIDIA apex amp.initialize requires CUDA parameters; port to native torch.npu.amp"),
      C("torch.cuda.manual_seed_all(args_config.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args_config.seed)", "silent no-op on NPU host: NPU RNG left unseeded"),
      C("=checkpoint = torch.load(args.pretrain)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.pretrain, map_location='cpu')",
        "check_args loads a full checkpoint saved from CUDA tensors; fails without CUDA unless mapped"),
      C("dist.init_process_group(backend='nccl', init_method='env://',", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://',", "NCCL unavailable; HCCL is the Ascend backend"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C("=net.cuda(gpu)", "tensor_to_device", "replace", True, "net.npu(gpu)", "model transfer"),
      C("map_location='cuda:{}'.format(gpu)", "device_type", "replace", True,
        "checkpoint = torch.load(args.pretrain, map_location='npu:{}'.format(gpu))", "'cuda:N' map_location"),
      C("=loss.cuda(gpu)", "tensor_to_device", "replace", False, "loss.npu(gpu)", PARAM_FREE_NOTE),
      C("net = apex.parallel.convert_syncbn_model(net)", "distributed_framework", "replace", False,
        "net = nn.SyncBatchNorm.convert_sync_batchnorm(net)",
        "unconfirmed whether apex's Python SyncBatchNorm fallback runs on NPU; torch SyncBatchNorm is supported"),
      C("net, optimizer = amp.initialize(net, optimizer, opt_level=args.opt_level,", "amp", "replace", True,
        "scaler = GradScaler(enabled=args.opt_level != 'O0')",
        "apex amp.initialize errors on non-CUDA parameters at any opt_level (incl. O0)"),
      C("amp.load_state_dict(checkpoint['amp'])", "amp", "replace", True,
        "scaler.load_state_dict(checkpoint['amp'])", "follows the amp -> GradScaler port"),
      C("sample = {key: val.cuda(gpu) for key, val in sample.items()", "tensor_to_device", "replace", True,
        "sample = {key: val.npu(gpu) for key, val in sample.items()", "train batch transfer"),
      C("with amp.scale_loss(loss_sum, optimizer) as scaled_loss:", "amp", "replace", True,
        "scaler.scale(loss_sum).backward()", "apex loss scaling -> GradScaler"),
      C("=scaled_loss.backward()", "amp", "removal", True, None,
        "folded into scaler.scale(...).backward(); would otherwise be an orphaned indented block"),
      C("=optimizer.step()", "amp", "replace", True, "scaler.step(optimizer); scaler.update()",
        "with GradScaler enabled, a bare optimizer.step() would apply scaled gradients"),
      C("'amp': amp.state_dict(),", "amp", "replace", True, "'amp': scaler.state_dict(),", "follows the port"),
      C("sample = {k: v.cuda(gpu) for k, v in sample.items()", "tensor_to_device", "replace", True,
        "sample = {k: v.npu(gpu) for k, v in sample.items()", "val batch transfer"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "test(): model transfer"),
      C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
        "net = ModuleHolder(net)  # DataParallel unsupported on NPU",
        "torch.nn.DataParallel unsupported on Atlas A2/A3 per Ascend's API list"),
      C("sample = {key: val.cuda() for key, val in sample.items()", "tensor_to_device", "replace", True,
        "sample = {key: val.npu() for key, val in sample.items()", "test batch transfer"),
  ])

E("nlspn_config", "NLSPN/src/config.py", "explicit_replacement",
  "NLSPN config.py: argparse with --gpus/--port/--opt_level hardware options",
  [])

E("nlspn_model", "NLSPN/src/model/nlspnmodel.py", "kernel_rewrite",
  "NLSPN nlspnmodel.py: non-local propagation via ModulatedDeformConvFunction (DCNv2)",
  [])

E("nlspn_dcn_func", "NLSPN/src/model/modulated_deform_conv_func.py", "kernel_rewrite",
  "DCNv2 autograd wrapper (ModulatedDeformConvFunction) bound to the nvcc-built MDCN extension",
  [
      C("=import MDCN", "custom_cuda_extension", "replace", True, "import torch_npu",
        "MDCN is an nvcc-built extension; cannot be built or imported on an Ascend host"),
      C("if not input.is_cuda:", "device_type", "replace", True, "if not input.is_npu:",
        "NPU tensors report is_cuda == False, so the guard would always raise"),
      C("output = MDCN.modulated_deform_conv_forward(", "custom_cuda_extension", "replace", True,
        "output, offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat((offset, mask), 1), bias, "
        "kernel_size=list(ctx.kernel_size), stride=[1, 1, *ctx.stride], padding=[ctx.padding[0]] * 2 + "
        "[ctx.padding[1]] * 2, dilation=[1, 1, *ctx.dilation], groups=ctx.groups, "
        "deformable_groups=ctx.deformable_groups, modulated=True)",
        "torch_npu ships a modulated deformable conv (npu_deformable_conv2d); offset channel order differs "
        "from DCNv2 and must be re-laid out (not verified here). Continuation lines of the call go with it."),
      C("MDCN.modulated_deform_conv_backward(", "custom_cuda_extension", "replace", True,
        "torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, "
        "torch.cat((offset, mask), 1), kernel_size=list(ctx.kernel_size), stride=[1, 1, *ctx.stride], "
        "padding=[ctx.padding[0]] * 2 + [ctx.padding[1]] * 2, dilation=[1, 1, *ctx.dilation], "
        "groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
        "backward kernel of the extension -> npu_deformable_conv2dbk; grad_offset then split into offset/mask"),
      C("x = torch.randn(N, inC, inH, inW).cuda()", "tensor_to_device", "replace", False,
        "x = torch.randn(N, inC, inH, inW).npu()", "self-test only (not on the training path)"),
      C("offset = torch.zeros(N, deformable_groups * 2 * kH * kW, inH, inW, device='cuda')", "device_type",
        "replace", False, "offset = torch.zeros(N, deformable_groups * 2 * kH * kW, inH, inW, device='npu')",
        "self-test only"),
      C("mask = torch.ones(N, deformable_groups * kH * kW, inH, inW, device='cuda')", "device_type",
        "replace", False, "mask = torch.ones(N, deformable_groups * kH * kW, inH, inW, device='npu')",
        "self-test only"),
      C("groups=1, deformable_groups=deformable_groups, im2col_step=1).cuda()", "tensor_to_device", "replace",
        False, "groups=1, deformable_groups=deformable_groups, im2col_step=1).npu()", "self-test only"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "self-test is skipped (prints a message) on NPU hosts"),
  ])

E("nlspn_dcn_setup", "NLSPN/src/model/deformconv/setup.py", "kernel_rewrite",
  "DCNv2 setup.py (CppExtension/CUDAExtension switch, nvcc gencode flags) as vendored by NLSPN",
  [
      C("from torch.utils.cpp_extension import CUDA_HOME", "custom_cuda_extension", "removal", False, None,
        "import works (CUDA_HOME is None) but is meaningless for an NPU build"),
      C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "replace", True,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "Ascend builds go through torch_npu's NpuExtension (adds ACL/torch_npu include and lib dirs)"),
      C("if torch.cuda.is_available() and CUDA_HOME is not None:", "custom_cuda_extension", "replace", True,
        "if torch.npu.is_available():",
        "false on an Ascend host, so the build stops at raise NotImplementedError('Cuda is not available')"),
      C("extension = CUDAExtension", "custom_cuda_extension", "replace", True, "extension = NpuExtension",
        "see import"),
      C("sources += source_cuda", "custom_cuda_extension", "replace", True, "sources += source_npu",
        ".cu kernels have to be re-implemented (Ascend C / torch ops); nvcc is not available"),
      C('define_macros += [("WITH_CUDA", None)]', "custom_cuda_extension", "replace", False,
        'define_macros += [("WITH_NPU", None)]', "project-internal dispatch macro; renamed with the rewrite"),
      C('extra_compile_args["nvcc"] = [', "custom_cuda_extension", "removal", False, None,
        "nvcc flags/gencode list are ignored for non-.cu sources; dead after the port (continuation lines go too)"),
  ])

E("nlspn_dcn_make", "NLSPN/src/model/deformconv/make.sh", "kernel_rewrite",
  "NLSPN deformconv/make.sh (CUDA_HOME/CUDNN paths, TORCH_CUDA_ARCH_LIST, setup.py build develop)",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "NpuExtension build needs the CANN headers/libs from set_env.sh (ASCEND_TOOLKIT_HOME)"),
      C("CUDA_HOME=/usr/local/cuda-10.2", "env_var", "removal", False, None, "ignored by an NPU build"),
      C("CUDNN_INCLUDE_DIR=", "env_var", "removal", False, None, "ignored by an NPU build"),
      C("CUDNN_LIB_DIR=", "env_var", "removal", False, None, "ignored by an NPU build"),
      C('TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5"', "env_var", "removal", False, None, "CUDA arch list; ignored"),
  ])

E("nlspn_dockerfile", "NLSPN/docker/Dockerfile", "explicit_replacement",
  "NLSPN/CompletionFormer-style dev Dockerfile: nvidia/cuda base, conda pytorch+cudatoolkit, apex --cuda_ext",
  [
      C("FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
        "base image must provide CANN (driver mounted from host) instead of the CUDA toolkit"),
      C("RUN conda install -y pytorch==1.6.0 torchvision==0.7.0 cudatoolkit=10.2 -c pytorch", "import_torch_npu",
        "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 torchvision_npu && \\",
        "CUDA build of torch 1.6 + cudatoolkit; torch must pair with a torch-npu wheel"),
      C('ENV TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5"', "env_var", "removal", False, None, "CUDA arch list; unused"),
      C('pip install -v --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./', "amp",
        "removal", True, None,
        "apex --cuda_ext needs nvcc, so the image build fails; the NPU port uses torch.npu.amp instead"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "NVIDIA container-runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime variable; no Ascend meaning"),
  ])

E("nlspn_train_sh", "NLSPN/src/scripts/train_kitti.sh", "explicit_replacement",
  "NLSPN KITTI DC training/test launcher with NCCL tuning exports",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; ignored by HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob; ignored by HCCL"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only knob; ignored by HCCL"),
  ])

# ---------------------------------------------------------------------------------------------
# CompletionFormer (youmi-zym/CompletionFormer style)
# ---------------------------------------------------------------------------------------------
E("cformer_requirements", "CompletionFormer/requirements.txt", "explicit_replacement",
  "CompletionFormer-style requirements.txt pinning cu113 wheels and mmcv-full CUDA wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; Ascend docs install CPU torch from the cpu index on x86 (plain PyPI on aarch64)"),
      C("=torch==1.10.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
        "+cu113 wheel does not exist for aarch64 and no torch_npu pairs with 1.10"),
      C("=torchvision==0.11.2+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA build tag; must match the new torch"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10/index.html", "import_torch_npu", "removal",
        False, None, "CUDA wheel index for mmcv-full"),
      C("=mmcv-full==1.4.0", "custom_cuda_extension", "replace", False, "mmcv==1.7.2",
        "unconfirmed: mmcv-full compiles CUDA ops; the Lite build is enough for the checkpoint loader"),
      C("=einops==0.4.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch-npu pin (equal to the torch version) appended to the dependency list"),
      C("=nvidia-ml-py3==7.352.0", "import_torch_npu", "removal", False, None,
        "NVML binding; no Ascend backend"),
  ])

E("cformer_train", "CompletionFormer/src/train_amp.py", "explicit_replacement",
  "CompletionFormer-derived training script with torch.cuda.amp, torchrun DDP, TF32 flags",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op on NPU host: NPU RNG left unseeded"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("dist.init_process_group(backend='nccl', init_method='env://',", "dist_backend", "replace", True,
        "dist.init_process_group(backend='hccl', init_method='env://',", "NCCL unavailable"),
      C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
        "unconfirmed: older torch rejects device_ids for non-NCCL backends"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 7",
        "CUDA compute capability query raises on NPU host; torch_npu's version returns None unless "
        "TORCH_NPU_DEVICE_CAPABILITY is set, so ask bf16 support directly"),
      C("device = torch.device('cuda', local_rank)", "device_type", "replace", True,
        "device = torch.device('npu', local_rank)", "device variable used by all transfers"),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=extra.amp and amp_dtype == torch.float16)",
        "torch.cuda.amp.GradScaler disables itself (warning) without CUDA: training still runs, unscaled"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)",
        "unlike the stats getters it has no 'not initialised' short-circuit: rejects the npu device / needs CUDA"),
      C("=with torch.cuda.amp.autocast(enabled=extra.amp, dtype=amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=extra.amp, dtype=amp_dtype):",
        "cuda autocast warns and disables itself: silently fp32 (speed/memory only)"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
        "log only: torch.cuda memory_stats short-circuits to {} while CUDA is uninitialised, so this prints 0"),
      C("dtype=amp_dtype):  # same precision as training", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=extra.amp, dtype=amp_dtype):  # same precision as training",
        "as above, validation"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU host"),
      C("os.environ.get('CUDA_VISIBLE_DEVICES', 'all')", "env_var", "replace", False,
        "print('NPU devices visible: {}'.format(os.environ.get('ASCEND_RT_VISIBLE_DEVICES', 'all')))",
        "log line only"),
  ])

E("cformer_backbone", "CompletionFormer/src/model/pvt.py", "explicit_replacement",
  "CompletionFormer PVTv2 blocks with an SDPA fast path gated on x.is_cuda and sdp_kernel()",
  [
      C("if self.use_sdpa and x.is_cuda:", "device_type", "replace", False,
        "if self.use_sdpa and x.device.type in ('cuda', 'npu'):",
        "on NPU the explicit softmax(QK^T)V path runs: correct but slower/more memory; SDPA dispatches to "
        "NPU flash attention"),
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_mem_efficient=True,", "attention_kernel",
        "removal", False, None,
        "torch.backends.cuda.sdp_kernel is unsupported (x) on NPU; only reached once the gate above admits NPU "
        "(continuation line and indentation go with it)"),
  ])

# ---------------------------------------------------------------------------------------------
# CSPN (XinJCheng/CSPN, PyTorch 0.4 era)
# ---------------------------------------------------------------------------------------------
E("cspn_train", "CSPN/cspn_pytorch/train.py", "explicit_replacement",
  "CSPN cspn_pytorch training script (use_cuda flag, DataParallel, Variable, whole-file globals)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()", "False on NPU host: model and data silently stay on CPU"),
      C("best_model_dict = torch.load(best_model_path)", "tensor_to_device", "replace", True,
        "best_model_dict = torch.load(best_model_path, map_location='cpu')",
        "state dict saved from CUDA tensors; fails to deserialize without CUDA"),
      C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model transfer"),
      C("assert torch.cuda.device_count() == 1, 'only support single gpu'", "torch_cuda_api", "replace", True,
        "assert torch.npu.device_count() >= 1, 'no NPU found'", "device_count() is 0 on NPU host: assertion fails"),
      C("net = torch.nn.DataParallel(net, device_ids=range(torch.cuda.device_count()))", "distributed_framework",
        "removal", True, None,
        "DataParallel unsupported on NPU and single-device anyway; drop it (state-dict keys lose 'module.')"),
      C("criterion = my_loss.Wighted_L1_Loss().cuda()", "tensor_to_device", "replace", False,
        "criterion = my_loss.Wighted_L1_Loss().npu()", PARAM_FREE_NOTE),
      C("=inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
        "inputs, targets = inputs.npu(), targets.npu()", "train batch transfer"),
      C("inputs, targets = inputs.cuda(), targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "inputs, targets = inputs.npu(), targets.npu(non_blocking=True)", "val batch transfer"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op on NPU host"),
  ])

E("cspn_model", "CSPN/cspn_pytorch/models/torch_resnet_cspn_nyu.py", "explicit_replacement",
  "CSPN ResNet-50 UpProj model with Affinity_Propagate and the zero-insertion Unpool",
  [
      C("weight = torch.ones(1, 8, 1, 1, 1).cuda()", "tensor_to_device", "replace", True,
        "weight = torch.ones(1, 8, 1, 1, 1).to(guidance.device)",
        "built inside forward with .cuda(); follow the input's device instead"),
      C("self.weights = torch.autograd.Variable(torch.zeros(num_channels, 1, stride, stride).cuda())",
        "tensor_to_device", "replace", True,
        "self.weights = torch.zeros(num_channels, 1, stride, stride).npu()",
        "plain attribute (not a buffer) created with .cuda() at construction; raises on NPU host"),
  ])

# ---------------------------------------------------------------------------------------------
# GuideNet (kakaxi314/GuideNet style)
# ---------------------------------------------------------------------------------------------
E("guidenet_train", "GuideNet/train.py", "explicit_replacement",
  "GuideNet train.py: YAML/easydict config, CUDA_VISIBLE_DEVICES from gpu_ids, train/test loops",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=rgb, lidar, depth = rgb.cuda(), lidar.cuda(), depth.cuda()", "tensor_to_device", "replace", True,
        "rgb, lidar, depth = rgb.npu(), lidar.npu(), depth.npu()", "train batch transfer"),
      C("torch.cuda.memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", False,
        "torch.npu.memory_allocated() / 1024 ** 2))", "log only: reports 0 MiB on NPU host"),
      C("rgb, lidar, depth = rgb.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "rgb, lidar, depth = rgb.npu(non_blocking=True), lidar.npu(non_blocking=True), depth.npu(non_blocking=True)",
        "test batch transfer"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = \',\'.join([str(gpu_id) for gpu_id in config.gpu_ids])',
        "gpu_ids from the YAML select devices through CUDA_VISIBLE_DEVICES, ignored on Ascend"),
      C("torch.cuda.device_count(), config.world_size, config.batch_size))", "torch_cuda_api", "replace", False,
        "torch.npu.device_count(), config.world_size, config.batch_size))", "print only: shows 0 devices"),
  ])

E("guidenet_utils", "GuideNet/utils.py", "explicit_replacement",
  "GuideNet utils.py: init_* factories (seed, dist, cuda, optim incl. apex FusedAdam), resume/save",
  [
      C("t = torch.tensor([self.sum, self.count], dtype=torch.float64,", "unsupported_op_workaround", "replace",
        False, "t = torch.tensor([self.sum, self.count], dtype=torch.float32,",
        "unconfirmed: fp64 collectives/compute are a known weak spot on Ascend; fp32 is enough for a meter"),
      C("device=torch.device('cuda', torch.cuda.current_device()))", "device_type", "replace", True,
        "device=torch.device('npu', torch.npu.current_device()))", "runs in DDP evaluation (all_reduce of meters)"),
      C("torch.cuda.manual_seed_all(config.manual_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(config.manual_seed)", "silent no-op on NPU host: NPU RNG left unseeded"),
      C("torch.cuda.set_device(config.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(config.local_rank)", "raises without CUDA"),
      C("net = net.cuda(config.local_rank)", "tensor_to_device", "replace", True, "net = net.npu(config.local_rank)",
        "DDP branch model transfer"),
      C("net = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True, "net = net.npu()",
        "DataParallel unsupported on NPU; single-device path (multi-device goes through the DDP branch)"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        PARAM_FREE_NOTE),
      C("metric = metric.cuda()", "tensor_to_device", "replace", False, "metric = metric.npu()", PARAM_FREE_NOTE),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "only taken when the YAML selects optim: FusedAdam (default AdamW); apex fused kernels need CUDA"),
      C("map_location=lambda storage, loc: storage.cuda())", "tensor_to_device", "replace", True,
        "cp = torch.load(config.resume, map_location=lambda storage, loc: storage.npu())",
        "map_location moves every storage with .cuda()"),
  ])

E("guidenet_config", "GuideNet/configs/GN.yaml", "explicit_replacement",
  "GuideNet-style YAML config (gpu_ids, dist_backend, cudnn flags, schedule, dataset params)",
  [
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
        "passed to init_process_group by utils.init_dist when launched with dist_train.sh"),
  ])

E("guidenet_dist_sh", "GuideNet/dist_train.sh", "explicit_replacement",
  "GuideNet multi-GPU launcher (torch.distributed.launch + NCCL env)",
  [
      C("GPUS=${GPUS:-0,1,2,3}", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}", "ignored by the Ascend runtime"),
      C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "NCCL-only; ignored by HCCL"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL reads HCCL_SOCKET_IFNAME; matters only for multi-node (script is single node)"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog variable (default already 1 per MindCluster doc)"),
      C("assert torch.cuda.device_count() >= ${NGPUS}", "torch_cuda_api", "replace", False,
        "python -c \"import torch, torch_npu; assert torch.npu.device_count() >= ${NGPUS}, 'not enough NPUs'\"",
        "sanity check fails on NPU host, but the script has no `set -e`, so it only prints a traceback"),
  ])

E("guidenet_ext_setup", "GuideNet/exts/setup.py", "kernel_rewrite",
  "GuideNet exts/setup.py building the GuideConv CUDA extension",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace",
        True, "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
        "no nvcc on Ascend; NpuExtension is torch_npu's extension builder"),
      C("CUDAExtension('GuideConv', [", "custom_cuda_extension", "replace", True, "NpuExtension('GuideConv', [",
        "see import"),
      C("'guideconv_kernel.cu',", "custom_cuda_extension", "replace", True, "'guideconv_kernel_npu.cpp',",
        "CUDA kernel must be re-implemented (Ascend C or torch ops)"),
      C("'nvcc': ['-O3', '--use_fast_math']}),", "custom_cuda_extension", "removal", False, None,
        "nvcc flags unused after the port"),
  ])

E("guidenet_models", "GuideNet/models.py", "kernel_rewrite",
  "GuideNet models.py: Conv2dLocal autograd Function bound to GuideConv, Guide module, GuideNet",
  [
      C("=import GuideConv", "custom_cuda_extension", "removal", True, None,
        "nvcc-built extension; not importable on Ascend"),
      C("output = GuideConv.Conv2dLocal_F(input, weight)", "custom_cuda_extension", "replace", True,
        "output = (F.unfold(input, 3, padding=1).view(input.size(0), input.size(1), 9, -1) * "
        "weight.view(input.size(0), input.size(1), 9, -1)).sum(2).view_as(input)",
        "per-pixel 3x3 local conv expressed with F.unfold (supported on NPU); autograd then covers backward"),
      C("grad_input, grad_weight = GuideConv.Conv2dLocal_B(input, weight, grad_output)", "custom_cuda_extension",
        "replace", True,
        "grad_input, grad_weight = torch.autograd.grad(conv2d_local_unfold(input, weight), (input, weight), grad_output)",
        "backward kernel of the extension (or drop the Function and let autograd differentiate unfold)"),
  ])

E("guidenet_test", "GuideNet/test.py", "explicit_replacement",
  "GuideNet test.py: KITTI submission writer with CUDA-event runtime measurement",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(args.gpu))", "device string"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU stream"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "as above"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("torch.cuda.max_memory_allocated(device) / 1024 ** 2, torch.cuda.get_device_name(args.gpu)))",
        "torch_cuda_api", "replace", True,
        "torch.npu.max_memory_allocated(device) / 1024 ** 2, torch.npu.get_device_name(args.gpu)))",
        "get_device_name() initialises CUDA and raises at the end of the run (max_memory_allocated alone "
        "would silently return 0)"),
  ])

# ---------------------------------------------------------------------------------------------
# LiDAR-camera fusion: on-line projection of raw sweeps
# ---------------------------------------------------------------------------------------------
E("fusion_projection", "lidar_camera_fusion/lidar_projection.py", "explicit_replacement",
  "on-line LiDAR->camera sparse-depth rasteriser with a CUDA side-stream prefetcher (DeepLiDAR/BP-Net-era idioms)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "library module; the training entry point imports torch_npu. Needed only for the __main__ self-test"),
      C("torch.cuda.nvtx.range_push(msg)", "torch_cuda_api", "replace", False,
        "_rid = torch.npu.mstx.range_start(msg)",
        "only with DC_NVTX=1; torch.cuda.nvtx is not redirected by torch_npu (use mstx)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", False, "torch.npu.mstx.range_end(_rid)",
        "as above"),
      C("depth.scatter_reduce_(0, flat_idx, z, reduce='amin', include_self=True)", "unsupported_op_workaround",
        "replace", False,
        "order = torch.argsort(z, descending=True); depth.index_put_((flat_idx[order],), z[order])",
        "scatter_reduce is x in Ascend's 2.7.1 list and has no NPU kernel: CPU fallback (host round-trip); "
        "replacement assumes last-write-wins index_put, not verified"),
      C("def project_lidar_batch(points_list, calibs, img_h, img_w, crop=(0, 0), device='cuda'):", "device_type",
        "replace", True,
        "def project_lidar_batch(points_list, calibs, img_h, img_w, crop=(0, 0), device='npu'):",
        "callers that omit device get 'cuda'"),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "created in __init__: raises without CUDA"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "side-stream upload"),
      C("pts_t = torch.from_numpy(pts).pin_memory().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "pts_t = torch.from_numpy(pts).pin_memory().npu(non_blocking=True)",
        "H2D copy; whether pin_memory() without a device argument pins for NPU is unconfirmed"),
      C("T = torch.from_numpy(velo2cam).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "T = torch.from_numpy(velo2cam).npu(non_blocking=True)", "H2D copy"),
      C("P_t = torch.from_numpy(P).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "P_t = torch.from_numpy(P).npu(non_blocking=True)", "H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("pts_t.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "pts_t.record_stream(torch.npu.current_stream())", "allocator stream bookkeeping"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
        "__main__ self-test only"),
  ])
