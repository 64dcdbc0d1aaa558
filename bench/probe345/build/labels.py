# Labels for probe345 (image quality assessment, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SEED_NOTE = ("torch.manual_seed() in the same function already seeds the PrivateUse1 (npu) generator in torch>=2.1, "
             "so the cuda call is a silent no-op rather than a bug (from torch source, not stated in the knowledge notes)")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------- pyiqa library
E("pyiqa_misc", "pyiqa/utils/misc.py", "device_branch_or_abstraction",
  "pyiqa / BasicSR utils/misc.py (seeding, default-device helper, env info)", [
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "add_branch", False,
      "torch.npu.manual_seed(seed) if hasattr(torch, 'npu') else torch.cuda.manual_seed(seed)", SEED_NOTE),
    C("=torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "add_branch", False,
      "torch.npu.manual_seed_all(seed) if hasattr(torch, 'npu') else torch.cuda.manual_seed_all(seed)", SEED_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif hasattr(torch, 'npu') and torch.npu.is_available(): return torch.device('npu')",
      "without an npu branch the helper returns cpu on an Ascend host and every metric silently runs on the CPU"),
    C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "elif hasattr(torch, 'npu') and torch.npu.is_available(): msg += f'\\n\\tNPU: {torch.npu.get_device_name(0)} x {torch.npu.device_count()}'",
      "log text only: the device block is silently omitted on NPU"),
])

E("pyiqa_inference_model", "pyiqa/models/inference_model.py", "device_branch_or_abstraction",
  "pyiqa InferenceModel (create_metric backend)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (optional import guarded by try/except in practice)",
      "library entry used by create_metric(); users' scripts do not import torch_npu themselves"),
    C("self.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "add_branch", True,
      "self.device = torch.device('cuda') if torch.cuda.is_available() else (torch.device('npu') if torch.npu.is_available() else torch.device('cpu'))",
      "default device falls back to cpu on an Ascend host: metrics run, silently, on the CPU"),
])

E("pyiqa_dist_util", "pyiqa/utils/dist_util.py", "device_branch_or_abstraction",
  "BasicSR/pyiqa dist_util.py (init_dist for pytorch and slurm launchers)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "add_branch", True,
      "def init_dist(launcher, backend='hccl' if is_npu_available() else 'nccl', **kwargs):",
      "NCCL backend is not available with torch_npu; init_process_group fails"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "num_gpus = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "returns 0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "add_branch", True,
      "torch.npu.set_device(rank % num_gpus) if is_npu_available() else torch.cuda.set_device(rank % num_gpus)",
      "CUDA call raises without a CUDA driver"),
    C("num_gpus = torch.cuda.device_count()  # GPUs visible", "torch_cuda_api", "add_branch", True,
      "num_gpus = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()  # devices on this node",
      "0 on NPU host -> modulo by zero in the slurm path"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "add_branch", True,
      "torch.npu.set_device(proc_id % num_gpus) if is_npu_available() else torch.cuda.set_device(proc_id % num_gpus)",
      "CUDA call raises without a CUDA driver"),
])

E("pyiqa_base_model", "pyiqa/models/base_model.py", "device_branch_or_abstraction",
  "BasicSR-style BaseModel used by pyiqa training (model_to_device, optimizers, checkpoints)", [
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", "add_branch", False,
      "from torch_npu.optim import NpuFusedAdam, NpuFusedLamb",
      "guarded import, so it does not fail; apex CUDA kernels are unavailable on NPU, the NPU fused optimizers live in torch_npu.optim"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "add_branch", True,
      "self.device = torch.device(('npu' if is_npu_available() else 'cuda') if opt['num_gpu'] != 0 else 'cpu')",
      "every net.to(self.device) / data.to(self.device) targets cuda and fails"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if self.device.type == 'npu' else torch.cuda.empty_cache()",
      "silent no-op without CUDA initialised; NPU cache is simply not released"),
    C("net, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)", "torch_cuda_api",
      "add_branch", True,
      "net, device_ids=[torch.npu.current_device() if self.device.type == 'npu' else torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)",
      "torch.cuda.current_device() raises on an NPU host in dist mode"),
    C("=net = DataParallel(net)", "distributed_framework", "add_branch", True,
      "net = DataParallel(net) if self.device.type == 'cuda' else net  # DataParallel is not supported on NPU; use --launcher pytorch",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (its scatter uses CUDA comm)"),
    C("optimizer = FusedAdam(params, lr, **kwargs)", "fused_optimizer", "add_branch", True,
      "optimizer = NpuFusedAdam(params, lr, **kwargs) if self.device.type == 'npu' else FusedAdam(params, lr, **kwargs)",
      "reached when a config asks for FusedAdam: apex is not importable on NPU, the assert above fails"),
    C("optimizer = FusedLAMB(params, lr, **kwargs)", "fused_optimizer", "add_branch", True,
      "optimizer = NpuFusedLamb(params, lr, **kwargs) if self.device.type == 'npu' else FusedLAMB(params, lr, **kwargs)",
      "same as FusedAdam, for optim type fusedlamb"),
])

E("pyiqa_general_iqa_model", "pyiqa/models/general_iqa_model.py", "device_branch_or_abstraction",
  "pyiqa GeneralIQAModel training step (optional AMP)", [
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "add_branch", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16) if self.device.type == 'npu' else torch.cuda.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)",
      "with use_amp: true the CUDA scaler disables itself on an NPU host, so fp16 NPU autocast would train without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):", "amp", "add_branch", True,
      "with torch.autocast(device_type=self.device.type, enabled=self.use_amp, dtype=self.amp_dtype):",
      "autocast('cuda') is disabled with a warning on an NPU host: configs with use_amp silently train in fp32"),
])

E("pyiqa_train", "pyiqa/train.py", "device_branch_or_abstraction",
  "pyiqa/BasicSR train.py (parse_options, resume, prefetcher, training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", "training entry point"),
    C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "opt['num_gpu'] = torch.npu.device_count() if is_npu_available() else torch.cuda.device_count()",
      "num_gpu: auto resolves to 0 on an NPU host -> model silently trained on cpu"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "add_branch", True,
      "device_id = torch.npu.current_device() if is_npu_available() else torch.cuda.current_device()",
      "raises when resuming on an NPU host"),
    C("map_location=lambda storage, loc: storage.cuda(device_id)", "tensor_to_device", "add_branch", True,
      "resume_state = torch.load(resume_state_path, map_location=lambda storage, loc: storage.npu(device_id) if is_npu_available() else storage.cuda(device_id))",
      "storage.cuda() fails without CUDA"),
    C("log_vars['gpu_mem_mb'] = torch.cuda.max_memory_allocated()", "torch_cuda_api", "add_branch", False,
      "log_vars['gpu_mem_mb'] = (torch.npu if is_npu_available() else torch.cuda).max_memory_allocated() / 1024**2",
      "returns 0 when CUDA was never initialised; logging only"),
])

E("pyiqa_prefetch", "pyiqa/data/prefetch_dataloader.py", "device_branch_or_abstraction",
  "BasicSR CUDAPrefetcher (side-stream H2D copies)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "add_branch", True,
      "self.stream = torch.npu.Stream() if is_npu_available() else torch.cuda.Stream()",
      "the yml uses prefetch_mode: cuda; creating a CUDA stream raises on an NPU host"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "add_branch", True,
      "self.device = torch.device(('npu' if is_npu_available() else 'cuda') if opt['num_gpu'] != 0 else 'cpu')",
      "batches would be copied to a cuda device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "add_branch", True,
      "with (torch.npu.stream(self.stream) if is_npu_available() else torch.cuda.stream(self.stream)):",
      "CUDA stream context on a non-CUDA host"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "add_branch", True,
      "(torch.npu if is_npu_available() else torch.cuda).current_stream().wait_stream(self.stream)",
      "without the NPU stream sync the consumer could read batches before the async copy lands"),
])

E("pyiqa_fid_arch", "pyiqa/archs/fid_arch.py", "device_branch_or_abstraction",
  "pyiqa FID / clean-fid folder feature extraction", [
    C('device=torch.device("cuda"),', "device_type", "replace", False,
      "device=get_default_device(),",
      "default only; FID.forward always passes device explicitly, but direct callers of get_folder_features would hit cuda"),
    C("device=torch.device('cuda'),", "device_type", "replace", False,
      "device=get_default_device(),",
      "default only; InferenceModel passes device=... for fid, direct FID() users would hit cuda"),
])

E("pyiqa_inference_cli", "inference_iqa.py", "device_branch_or_abstraction",
  "pyiqa inference_iqa.py command line tool", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", "CLI entry point"),
    C("args.device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "args.device = 'cuda' if torch.cuda.is_available() else ('npu' if torch.npu.is_available() else 'cpu')",
      "default device silently becomes cpu on an NPU host"),
    C("if device.type != 'cuda':", "device_type", "replace", True,
      "if device.type not in ('cuda', 'npu'):",
      "--half would be rejected on npu"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if device.type == 'npu' else torch.cuda.empty_cache()",
      "silent no-op on NPU host"),
])

E("pyiqa_dbcnn_yml", "options/train/DBCNN/train_DBCNN_koniq.yml", "explicit_replacement",
  "pyiqa/BasicSR training option file (DBCNN on KonIQ-10k)", [
    C("backend: nccl", "dist_backend", "replace", True,
      "backend: hccl",
      "passed to init_dist() by the slurm launcher path; NCCL is unavailable on NPU"),
])

E("pyiqa_dist_train_sh", "scripts/dist_train.sh", "explicit_replacement",
  "BasicSR/pyiqa scripts/dist_train.sh", [
    C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN runtime libraries must be on the environment for torch_npu to load"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS-1)))}",
      "ignored by the NPU runtime: a caller's device selection (e.g. 4,5,6,7) is silently lost"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob, ignored by HCCL"),
])

E("pyiqa_slurm_train_sh", "scripts/slurm_train.sh", "explicit_replacement",
  "BasicSR/pyiqa scripts/slurm_train.sh", [
    C("#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment for every srun task"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL has its own host-NIC selector; whether this cluster needs it is unconfirmed"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False,
      "--gres=npu:${GPUS_PER_NODE} \\",
      "unconfirmed: the knowledge notes found no Ascend Slurm gres convention; depends on the cluster's gres.conf"),
])

E("pyiqa_setup", "setup.py", "explicit_replacement",
  "BasicSR-derived setup.py with optional CUDA ops (deform_conv, fused_act, upfirdn2d)", [
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "replace", False,
      "if os.getenv('FORCE_CUDA', '0') == '1':",
      "extensions are opt-in (PYIQA_EXT / --cuda_ext); on NPU there is no nvcc path and the CPU fallback is taken"),
    C("extension = CUDAExtension", "custom_cuda_extension", "removal", False, None,
      "nvcc build path cannot be used on Ascend"),
    C("sources_cuda=['src/deform_conv_cuda.cpp', 'src/deform_conv_cuda_kernel.cu']),", "custom_cuda_extension",
      "removal", False, None,
      "deform_conv is re-implemented on torchvision.ops.deform_conv2d (torchvision_npu) instead"),
    C("sources_cuda=['src/fused_bias_act_kernel.cu']),", "custom_cuda_extension", "removal", False, None,
      ".cu kernel; would need an Ascend C rewrite or a pure-torch fallback"),
    C("sources_cuda=['src/upfirdn2d_kernel.cu']),", "custom_cuda_extension", "removal", False, None,
      ".cu kernel; would need an Ascend C rewrite or a pure-torch fallback"),
])

E("pyiqa_deform_conv", "pyiqa/ops/dcn/deform_conv.py", "kernel_rewrite",
  "BasicSR/mmcv deform_conv.py (DCNv1/v2 via compiled CUDA extension), used by an AHIQ-style head", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torchvision_npu  # noqa: F401  registers NPU kernels for torchvision.ops.deform_conv2d",
      "unconfirmed whether deform_conv2d would otherwise fall back to CPU or fail"),
    C("deform_conv_ext = load(", "custom_cuda_extension", "removal", True, None,
      "JIT branch (PYIQA_JIT=True) compiles .cu sources; cpp_extension.load is unsupported on A2/A3 and there is no nvcc"),
    C("from . import deform_conv_ext", "custom_cuda_extension", "replace", True,
      "from torchvision.ops import deform_conv2d",
      "the CUDA extension is never built on NPU; call sites would raise NameError"),
    C("if not input.is_cuda:", "custom_cuda_extension", "removal", True, None,
      "raises NotImplementedError for every npu tensor"),
    C("deform_conv_ext.deform_conv_forward(input, weight,", "custom_cuda_extension", "replace", True,
      "output = deform_conv2d(input, offset, weight, stride=ctx.stride, padding=ctx.padding, dilation=ctx.dilation)",
      "CUDA kernel call; torchvision op is differentiable, so the autograd.Function collapses to a plain call"),
    C("=if not grad_output.is_cuda:", "custom_cuda_extension", "removal", True, None,
      "hand-written backward is dropped together with the CUDA kernels"),
    C("deform_conv_ext.deform_conv_backward_input(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel; autograd of deform_conv2d replaces it"),
    C("deform_conv_ext.deform_conv_backward_parameters(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel; autograd of deform_conv2d replaces it"),
    C("if not input.is_cuda or not offset.is_cuda:", "custom_cuda_extension", "removal", True, None,
      "raises NotImplementedError for npu tensors"),
    C("deform_conv_ext.modulated_deform_conv_forward(", "custom_cuda_extension", "replace", True,
      "output = deform_conv2d(input, offset, weight, bias, stride=ctx.stride, padding=ctx.padding, dilation=ctx.dilation, mask=mask)",
      "DCNv2 = deform_conv2d with mask"),
    C("if not grad_output.is_cuda:  # only the CUDA kernels", "custom_cuda_extension", "removal", True, None,
      "hand-written backward dropped"),
    C("deform_conv_ext.modulated_deform_conv_backward(", "custom_cuda_extension", "removal", True, None,
      "CUDA backward kernel; autograd of deform_conv2d replaces it"),
])

# ---------------------------------------------------------------- MANIQA
E("maniqa_train", "train_maniqa.py", "explicit_replacement",
  "MANIQA train_maniqa.py (NTIRE22 NR-IQA winner)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "ignored on NPU, but the selection is device 0, which is also the NPU default"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("=torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("x_d = data['d_img_org'].cuda()", "tensor_to_device", "replace", True,
      "x_d = data['d_img_org'].npu()", ".cuda() fails without CUDA"),
    C("labels = torch.squeeze(labels.type(torch.FloatTensor)).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.squeeze(labels.type(torch.FloatTensor)).npu()", ".cuda() fails without CUDA"),
    C("d_img = data['d_img_org'].cuda()", "tensor_to_device", "replace", True,
      "d_img = data['d_img_org'].npu()", ".cuda() fails without CUDA"),
    C("gt = torch.squeeze(gt.type(torch.FloatTensor)).cuda()", "tensor_to_device", "replace", True,
      "gt = torch.squeeze(gt.type(torch.FloatTensor)).npu()", ".cuda() fails without CUDA"),
    C("net = nn.DataParallel(net)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU (scatter goes through CUDA comm)"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", ".cuda() fails without CUDA"),
    C("torch.save(net.module.state_dict(), model_save_path)", "distributed_framework", "replace", True,
      "torch.save(net.state_dict(), model_save_path)",
      "follows from dropping DataParallel: .module no longer exists"),
])

E("maniqa_inference", "inference.py", "transfer_to_npu",
  "MANIQA inference.py (PIPAL22 test submission)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "transfer_to_npu needs torch_npu imported first"),
    C("=import random", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu",
      "maps .cuda(), torch.cuda.* seeding and the cuda device strings below to npu"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '1'", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '1'",
      "transfer_to_npu does not translate env vars; the run would silently land on device 0 instead of 1"),
    C("net = torch.load(config.model_path)", "device_type", "replace", False,
      "net = torch.load(config.model_path, map_location='cpu')",
      "whole-model pickle saved from CUDA; unconfirmed whether transfer_to_npu's torch.load wrapper remaps it without map_location"),
])

# ---------------------------------------------------------------- HyperIQA / DBCNN / TReS / MUSIQ
E("hyperiqa_solver", "HyerIQASolver.py", "explicit_replacement",
  "hyperIQA HyerIQASolver.py (+ demo.py logic)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the train_test_IQA.py entry script is not part of this file; make sure torch_npu is loaded before .npu()"),
    C("self.model_hyper = models.HyperNet(16, 112, 224, 112, 56, 28, 14, 7).cuda()", "tensor_to_device", "replace",
      True, "self.model_hyper = models.HyperNet(16, 112, 224, 112, 56, 28, 14, 7).npu()", ".cuda() fails"),
    C("self.l1_loss = torch.nn.L1Loss().cuda()", "tensor_to_device", "replace", True,
      "self.l1_loss = torch.nn.L1Loss().npu()", ".cuda() fails"),
    C("=img = torch.tensor(img.cuda())", "tensor_to_device", "replace", True,
      "img = torch.tensor(img.npu())", ".cuda() fails"),
    C("label = torch.tensor(label.cuda())", "tensor_to_device", "replace", True,
      "label = torch.tensor(label.npu())", ".cuda() fails"),
    C("TargetNet(paras).cuda()  # target net", "tensor_to_device", "replace", True,
      "model_target = models.TargetNet(paras).npu()  # target net is rebuilt for every batch", ".cuda() fails"),
    C("img = torch.as_tensor(img.cuda())", "tensor_to_device", "replace", True,
      "img = torch.as_tensor(img.npu())", ".cuda() fails"),
    C("label = torch.as_tensor(label.cuda())", "tensor_to_device", "replace", True,
      "label = torch.as_tensor(label.npu())", ".cuda() fails"),
    C("=model_target = models.TargetNet(paras).cuda()", "tensor_to_device", "replace", True,
      "model_target = models.TargetNet(paras).npu()", ".cuda() fails"),
    C("=model_hyper = models.HyperNet(16, 112, 224, 112, 56, 28, 14, 7).cuda()", "tensor_to_device", "replace", True,
      "model_hyper = models.HyperNet(16, 112, 224, 112, 56, 28, 14, 7).npu()", ".cuda() fails"),
    C("model_hyper.load_state_dict((torch.load(pretrained)))", "device_type", "replace", True,
      "model_hyper.load_state_dict(torch.load(pretrained, map_location='cpu'))",
      "released koniq_pretrained.pkl holds CUDA tensors: deserialising without map_location fails when CUDA is unavailable"),
    C("img = torch.tensor(img.cuda()).unsqueeze(0)", "tensor_to_device", "replace", True,
      "img = torch.tensor(img.npu()).unsqueeze(0)", ".cuda() fails"),
    C("TargetNet(paras).cuda().eval()", "tensor_to_device", "replace", True,
      "model_target = models.TargetNet(paras).npu().eval()", ".cuda() fails"),
])

E("dbcnn_trainer", "DBCNN.py", "explicit_replacement",
  "DBCNN-PyTorch DBCNN.py (bilinear VGG16 + SCNN, two-stage training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '2'", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '2'",
      "ignored on NPU: the job silently runs on device 0 instead of the chosen card 2"),
    C("scnn = torch.nn.DataParallel(scnn).cuda()", "distributed_framework", "replace", True,
      "scnn = scnn.npu()", "DataParallel unsupported on NPU; .cuda() fails"),
    C("scnn.load_state_dict(torch.load(scnn_root))", "device_type", "replace", True,
      "scnn.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(scnn_root, map_location='cpu').items()})",
      "scnn.pkl was saved from a CUDA DataParallel model: needs map_location and the 'module.' prefix stripped"),
    C("self.features2 = scnn.module.features", "distributed_framework", "replace", True,
      "self.features2 = scnn.features", "follows from dropping DataParallel"),
    C("self._net = torch.nn.DataParallel(DBCNN(", "distributed_framework", "replace", True,
      "self._net = DBCNN(self._path['scnn_root'], self._options).npu()",
      "DataParallel unsupported on NPU; .cuda() fails"),
    C("self._net.load_state_dict(torch.load(path['fc_root']))", "device_type", "replace", True,
      "self._net.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(path['fc_root'], map_location='cpu').items()})",
      "fc checkpoint from a CUDA DataParallel run: map_location + prefix"),
    C("self._criterion = torch.nn.MSELoss().cuda()", "tensor_to_device", "replace", True,
      "self._criterion = torch.nn.MSELoss().npu()", ".cuda() fails"),
    C("self._net.module.fc.parameters(), lr=self._options['base_lr'],", "distributed_framework", "replace", True,
      "self._net.fc.parameters(), lr=self._options['base_lr'],", "follows from dropping DataParallel"),
    C("self._net.module.parameters(), lr=self._options['base_lr'],", "distributed_framework", "replace", True,
      "self._net.parameters(), lr=self._options['base_lr'],", "follows from dropping DataParallel"),
    C("X = torch.tensor(X.cuda())", "tensor_to_device", "replace", True, "X = torch.tensor(X.npu())", ".cuda() fails"),
    C("y = torch.tensor(y.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
      "y = torch.tensor(y.npu(non_blocking=True))", ".cuda() fails"),
    C("X = torch.tensor(X.cuda(), requires_grad=False)", "tensor_to_device", "replace", True,
      "X = torch.tensor(X.npu(), requires_grad=False)", ".cuda() fails"),
    C("y = y.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "y = y.type(torch.npu.FloatTensor)", "CUDA tensor type cannot be created without CUDA"),
])

E("tres_models", "models.py", "explicit_replacement",
  "TReS models.py (ResNet50 + DETR-style transformer, relative ranking / consistency losses)", [
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
      "0 on an NPU host, so the DataParallel branch is silently skipped and single-device training still works; drop it rather than port it"),
    C("print(\"Let's use\", torch.cuda.device_count(), \"GPUs!\")", "torch_cuda_api", "removal", False, None,
      "removed with the branch"),
    C("self.net = nn.DataParallel(self.net)", "distributed_framework", "removal", False, None,
      "unreachable on NPU as written; DataParallel is unsupported there, so the branch goes"),
])

E("tres_run", "run.py", "explicit_replacement",
  "TReS run.py / args.py launcher", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config.gpunum', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config.gpunum',
      "--gpunum is ignored on NPU; the run silently lands on device 0"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "falls back to cpu silently on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "log line only"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", False,
      "print('visible NPUs: {} ({})'.format(torch.npu.device_count(), torch.npu.get_device_name(0)))",
      "guarded by the check above; log only"),
    C("torch.cuda.manual_seed(config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(config.seed)", SEED_NOTE),
])

E("musiq_train", "train.py", "explicit_replacement",
  "MUSIQ PyTorch re-implementation train.py (Config object, multi-scale patches)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("config.device = torch.device('cuda:%s' % config.gpu_id if torch.cuda.is_available() else 'cpu')",
      "device_type", "replace", True,
      "config.device = torch.device('npu:%s' % config.gpu_id if torch.npu.is_available() else 'cpu')",
      "falls back to cpu silently on an NPU host"),
    C("torch.cuda.manual_seed_all(config.seed)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed_all(config.seed)",
      "the only torch seeding call here (no torch.manual_seed): on NPU nothing seeds the device RNG, so runs are silently not reproducible"),
    C("checkpoint = torch.load(config.checkpoint)", "device_type", "replace", True,
      "checkpoint = torch.load(config.checkpoint, map_location=config.device)",
      "resume/fine-tune checkpoints from GPU runs hold CUDA tensors and fail to deserialise"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

# ---------------------------------------------------------------- LIQE / CLIP-IQA / Q-Align
E("liqe_train", "train_liqe.py", "explicit_replacement",
  "LIQE train_unique_clip_weight.py (CLIP ViT-B/32 multitask fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "cpu fallback on an NPU host (CLIP then loads in fp32 on cpu)"),
    C("torch.cuda.manual_seed_all(seed_value)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed_value)", SEED_NOTE),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):",
      "cuda autocast is disabled on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "CUDA scaler disables itself without CUDA: the fp16 CLIP weights would be trained with unscaled fp16 gradients"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

E("liqe_demo", "demo.py", "device_branch_or_abstraction",
  "LIQE demo.py (single-image quality / scene / distortion prediction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")', "device_type",
      "add_branch", True,
      'device = torch.device("cpu" if args.cpu else ("cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")))',
      "silently runs on cpu on an NPU host"),
])

E("clipiqa_config", "configs/clipiqa/clipiqa_coop_koniq.py", "explicit_replacement",
  "CLIP-IQA (mmediting 0.x) training config", [
    C("evaluation = dict(interval=5000, save_image=False, gpu_collect=True)", "device_type", "replace", False,
      "evaluation = dict(interval=5000, save_image=False, gpu_collect=False)",
      "unconfirmed: mmcv's collect_results_gpu builds tensors on 'cuda'; tmpdir collection is device-neutral"),
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True,
      "dist_params = dict(backend='hccl')", "NCCL unavailable with torch_npu"),
])

E("clipiqa_demo", "demo/clipiqa_single_image_demo.py", "explicit_replacement",
  "CLIP-IQA demo/clipiqa_single_image_demo.py (mmedit init_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("args.config, args.checkpoint, device=torch.device('cuda', args.device))", "device_type", "replace", True,
      "args.config, args.checkpoint, device=torch.device('npu', args.device))", "cuda device cannot be used"),
    C("model = init_model(config, checkpoint, device=torch.device('cuda', device_id))", "device_type", "replace", True,
      "model = init_model(config, checkpoint, device=torch.device('npu', device_id))", "cuda device cannot be used"),
])

E("qalign_flash_attn", "q_align/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "Q-Align / LLaVA llama_flash_attn_monkey_patch.py (flash-attn varlen for mPLUG-Owl2 LLaMA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten forward calls torch_npu.npu_fusion_attention"),
    C("=from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal",
      True, None, "flash-attn cannot be installed on NPU"),
    C("flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal", True,
      None, "fallback import fails too, so the module import raises"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from q_align.train.bert_padding import unpad_input, pad_input  # vendored pure-torch copy",
      "bert_padding is pure torch but lives in the flash-attn package"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'TND', atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "flash-attn varlen kernel -> npu_fusion_attention TND layout with cumulative lengths"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'TND', atten_mask=causal_mask, scale=self.head_dim ** -0.5, sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "same, padded-batch path"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "get_device_capability raises without CUDA (and returns None on NPU even via transfer_to_npu)"),
    C("if cuda_major < 8:", "device_capability_check", "removal", True, None,
      "Ampere check is meaningless on NPU; goes with the line above"),
])

E("qalign_ft_sh", "scripts/l1_ft.sh", "explicit_replacement",
  "Q-Align fine-tuning launcher (deepspeed + HF Trainer flags)", [
    C("#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for the deepspeed workers"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("--tf32 True \\", "device_capability_check", "removal", False, None,
      "unconfirmed: transformers checks is_torch_tf32_available() (CUDA Ampere) for --tf32 and is expected to raise on an NPU host; TF32 is a CUDA notion"),
])

# ---------------------------------------------------------------- tools
E("lpips_2dirs", "lpips_2dirs.py", "transfer_to_npu",
  "PerceptualSimilarity lpips_2dirs.py (LPIPS between two folders, --use_gpu flag)", [
    C("=import os", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the script never imports torch itself; torch_npu must come before transfer_to_npu"),
    C("=import lpips", "import_torch_npu", "npu_only_addition", True,
      "from torch_npu.contrib import transfer_to_npu",
      "turns loss_fn.cuda() / img.cuda() under --use_gpu into npu calls without editing them"),
])

E("iqa_speed_bench", "benchmark/speed_benchmark.py", "device_branch_or_abstraction",
  "pyiqa-style metric speed/memory benchmark (CUDA events, NVTX, NVML)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "add_branch", False,
      "if is_npu_available(): return torch.npu.utilization(index)",
      "fails only if pynvml happens to be installed (NVMLError, caught by main and the metric is skipped); not a dependency here"),
    C("parser.add_argument('--device', type=str, default='cuda', help='torch device string')", "device_type",
      "add_branch", True,
      "parser.add_argument('--device', type=str, default='npu' if is_npu_available() else 'cuda', help='torch device string')",
      "default device cannot be used on an NPU host"),
    C("metric.net = torch.compile(metric.net, mode='max-autotune')", "compile_mode", "add_branch", False,
      "metric.net = torch.compile(metric.net, backend='npugraphs') if device.type == 'npu' else torch.compile(metric.net, mode='max-autotune')",
      "only with --compile; unconfirmed how max-autotune (Triton/CUDA graphs) behaves on torch_npu"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "add_branch", True,
      "with torch.autocast(device_type=device.type, enabled=args.fp16):",
      "--fp16 would silently measure fp32 on NPU"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "add_branch", True,
      "torch.npu.synchronize(device) if device.type == 'npu' else torch.cuda.synchronize(device)", "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "add_branch", True,
      "torch.npu.reset_peak_memory_stats(device) if device.type == 'npu' else torch.cuda.reset_peak_memory_stats(device)",
      "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "add_branch", True,
      "start = (torch.npu if device.type == 'npu' else torch.cuda).Event(enable_timing=True)", "CUDA event on NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "add_branch", True,
      "end = (torch.npu if device.type == 'npu' else torch.cuda).Event(enable_timing=True)", "CUDA event on NPU host"),
    C("torch.cuda.nvtx.range_push(", "torch_cuda_api", "add_branch", True,
      "rid = torch_npu.npu.mstx.range_start(f'{name}_iter{i}') if device.type == 'npu' else torch.cuda.nvtx.range_push(f'{name}_iter{i}')",
      "torch.cuda.nvtx is not redirected by torch_npu; mstx is the NPU counterpart (only with --nvtx)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "add_branch", True,
      "torch_npu.npu.mstx.range_end(rid) if device.type == 'npu' else torch.cuda.nvtx.range_pop()",
      "same as range_push"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "add_branch", True,
      "torch.npu.synchronize() if device.type == 'npu' else torch.cuda.synchronize()", "raises without CUDA"),
    C("peak_mb = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "add_branch", False,
      "peak_mb = (torch.npu if device.type == 'npu' else torch.cuda).max_memory_allocated(device) / 2**20",
      "reads 0 when CUDA was never initialised: the reported peak memory is silently wrong, but nothing fails"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
      "torch.npu.empty_cache() if device.type == 'npu' else torch.cuda.empty_cache()", "silent no-op on NPU"),
    C("'gpu': torch.cuda.get_device_name(device),", "torch_cuda_api", "add_branch", True,
      "'gpu': torch.npu.get_device_name(device) if device.type == 'npu' else torch.cuda.get_device_name(device),",
      "raises without CUDA"),
])

# ---------------------------------------------------------------- packaging
E("maniqa_requirements", "requirements.txt", "explicit_replacement",
  "MANIQA-style requirements.txt pinned to CUDA 11.3 wheels", [
    C("# CUDA 11.3 wheels", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 (x.y.z[.postN] must equal the torch version)"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts take CPU torch from the cpu index"),
    C("torch==1.10.0+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu build exists for torch 1.10, and +cu113 wheels do not exist for aarch64"),
    C("torchvision==0.11.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build; must match torch 2.1.0"),
    C("pynvml==11.4.1", "torch_cuda_api", "removal", False, None,
      "installs fine but NVML has no NPU counterpart; monitoring moves to torch.npu.utilization / npu-smi"),
])

E("tres_environment", "environment.yml", "explicit_replacement",
  "TReS/HyperIQA conda environment.yml (pytorch + cudatoolkit)", [
    C("  - nvidia", "import_torch_npu", "removal", False, None, "CUDA channel no longer needed"),
    C("pytorch=1.12.1=py3.8_cuda11.3_cudnn8.3.2_0", "import_torch_npu", "removal", True, None,
      "CUDA build of torch 1.12; moved to pip as torch==2.1.0 so torch-npu (built against PyPI torch) matches"),
    C("torchvision=0.13.1=py38_cu113", "import_torch_npu", "removal", True, None, "CUDA build; moved to pip"),
    C("cudatoolkit=11.3.1", "import_torch_npu", "removal", False, None,
      "unneeded on Ascend; unconfirmed whether it even solves on aarch64"),
    C("  - pip:", "import_torch_npu", "npu_only_addition", True, "    - torch==2.1.0", "PyPI torch for torch-npu"),
    C("opencv-python==4.6.0.66", "import_torch_npu", "npu_only_addition", True, "    - torchvision==0.16.0",
      "torchvision matching torch 2.1.0"),
    C("tensorboardX==2.5.1", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "the NPU backend itself"),
])

E("pyiqa_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "IQA-PyTorch Dockerfile on nvidia/cuda base", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an image carrying CANN (driver mounted from the host) is needed for torch_npu. Image tag is illustrative"),
    C('ENV TORCH_CUDA_ARCH_LIST=', "custom_cuda_extension", "removal", False, None, "nvcc arch list, meaningless on Ascend"),
    C("ENV CUDA_HOME=/usr/local/cuda", "custom_cuda_extension", "removal", False, None, "no CUDA toolkit in the image"),
    C("ENV FORCE_CUDA=1", "custom_cuda_extension", "removal", False, None,
      "only matters together with the PYIQA_EXT build below"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or pass --device /dev/davinciN)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
    C("--index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "RUN python -m pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; NPU needs CPU torch + matching torch-npu"),
    C("RUN PYIQA_EXT=True python setup.py develop", "custom_cuda_extension", "replace", True,
      "RUN python setup.py develop",
      "with FORCE_CUDA=1 this compiles the .cu ops with nvcc, which is absent in an Ascend image: the build fails"),
])
