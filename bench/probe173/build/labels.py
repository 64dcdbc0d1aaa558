"""Labels for probe173: image restoration (Restormer / NAFNet / Uformer / MPRNet / HINet, BasicSR family).

One careful porter's judgement of what must change to run these files on Ascend NPU with torch_npu.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------------------------------------------------------
E("restormer_train", "basicsr/train.py", "explicit_replacement",
  "swz30/Restormer basicsr/train.py (progressive-patch training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry point: load the NPU backend before anything touches the device"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()",
      "torch.cuda.current_device() initialises CUDA and raises on a host without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
      "map_location=f'npu:{device_id}')",
      "resume state is mapped onto a CUDA storage; storage.cuda() fails on the NPU host"),
    C("mini_gt_size, mini_batch_size * torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "mini_gt_size, mini_batch_size * torch.npu.device_count()))",
      "log-only: torch.cuda.device_count() is 0 on an NPU host, so the logged effective batch size reads 0"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_dist_util", "basicsr/utils/dist_util.py", "explicit_replacement",
  "swz30/Restormer basicsr/utils/dist_util.py (mmcv-derived init_dist / get_dist_info)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher, backend='hccl', **kwargs):",
      "NCCL is not available in the NPU build; the collective backend is HCCL"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "returns 0 on an NPU host, so rank % num_gpus divides by zero"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "bind each rank to its NPU"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "slurm path: same device-count problem"),
    C("torch.cuda.set_device(proc_id % ngpus_per_node)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % ngpus_per_node)", "slurm path: bind rank to its NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_prefetch", "basicsr/data/prefetch_dataloader.py", "explicit_replacement",
  "swz30/Restormer basicsr/data/prefetch_dataloader.py (CPUPrefetcher / CUDAPrefetcher)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()",
      "side copy stream must be an NPU stream; torch.cuda.Stream cannot be created without CUDA"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "batches would be copied to a CUDA device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "stream context for the async H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)",
      "compute stream must wait for the NPU copy stream"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_base_model", "basicsr/models/base_model.py", "explicit_replacement",
  "swz30/Restormer basicsr/models/base_model.py (BasicSR BaseModel: device, DDP wrap, save/load)", [
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
      "every model/tensor move in the subclasses goes through self.device"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id must come from the NPU runtime"),
    C("net = DataParallel(net)", "unsupported_op_workaround", "replace", True,
      "raise NotImplementedError('DataParallel is not supported on NPU; launch with --launcher pytorch (DDP)')",
      "torch.nn.DataParallel is marked unsupported on Ascend; multi-card runs must use DDP"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_ir_model", "basicsr/models/image_restoration_model.py", "explicit_replacement",
  "swz30/Restormer basicsr/models/image_restoration_model.py (ImageCleanModel, Mixing_Augment, grad clip)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed here if the fused NPU optimizer below is adopted"),
    C("self.optimizer_g = torch.optim.Adam(optim_params, **train_opt['optim_g'])", "fused_optimizer", "replace",
      False, "self.optimizer_g = torch_npu.optim.NpuFusedAdam(optim_params, **train_opt['optim_g'])",
      "performance only: tensor-fused Adam on NPU (msFmkTransplt performance advice)"),
    C("self.optimizer_g = torch.optim.AdamW(optim_params, **train_opt['optim_g'])", "fused_optimizer", "replace",
      False, "self.optimizer_g = torch_npu.optim.NpuFusedAdamW(optim_params, **train_opt['optim_g'])",
      "performance only: Restormer configs use AdamW; NpuFusedAdamW is faster but uses more memory"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op without CUDA; NPU cache is just not released between val images"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Pure model code: device-agnostic; GDFN gelu-gate and MDTA channel attention left as they are (see README).
E("restormer_arch", "basicsr/models/archs/restormer_arch.py", "explicit_replacement",
  "swz30/Restormer basicsr/models/archs/restormer_arch.py (MDTA + GDFN U-Net transformer)", [])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_test_deraining", "Deraining/test.py", "explicit_replacement",
  "swz30/Restormer Deraining/test.py (standalone evaluation script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry script"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()",
      "Module.cuda() fails on a host without CUDA"),
    C("model_restoration = nn.DataParallel(model_restoration)", "unsupported_op_workaround", "removal", True, None,
      "DataParallel is unsupported on Ascend; single-device inference does not need it"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()",
      "ipc_collect lazily initialises CUDA and raises without it"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only memory headroom on large test images"),
    C("input_ = img.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input_ = img.unsqueeze(0).npu()", "input must be on the NPU with the model"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_demo", "demo.py", "device_branch_or_abstraction",
  "swz30/Restormer demo.py (run a task on your own images, optional tiled inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "torch.cuda.is_available() is False on an NPU host, so the demo silently runs on CPU"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif torch.npu.is_available(): torch.npu.empty_cache()",
      "guard is False on NPU, so the per-image cache cleanup is silently skipped (memory headroom only); "
      "the CUDA branch itself stays valid and needs no edit"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_train_sh", "train.sh", "explicit_replacement",
  "swz30/Restormer train.sh (torch.distributed.launch wrapper)", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu can be imported"),
    C("GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}", "device_type", "replace", True,
      "GPUS=${GPUS:-$(npu-smi info -l | awk '/Total Count/ {print $NF}')}",
      "nvidia-smi does not exist on an Ascend host, so the default process count is 0 and the launch fails"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so device selection silently stops working"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_yml", "Motion_Deblurring/Options/Deblurring_Restormer.yml", "explicit_replacement",
  "swz30/Restormer Motion_Deblurring/Options/Deblurring_Restormer.yml (BasicSR option file)", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "dist_params are passed to init_dist on the slurm launcher path; nccl is not available on NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Device-agnostic model; the __main__ block counts MACs on CPU with ptflops.
E("nafnet_arch", "basicsr/models/archs/NAFNet_arch.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/models/archs/NAFNet_arch.py (NAFBlock, SimpleGate, NAFNetLocal)", [])

# ---------------------------------------------------------------------------------------------------------------
# TLC helpers: the calibration forward runs on CPU before the model is moved; cumsum / replicate pad have NPU kernels.
E("nafnet_local_arch", "basicsr/models/archs/local_arch.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/models/archs/local_arch.py (TLC AvgPool2d / Local_Base)", [])

# ---------------------------------------------------------------------------------------------------------------
E("nafnet_ir_model", "basicsr/models/image_restoration_model.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/models/image_restoration_model.py (grids / grids_inverse TLC tiling, dist_validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed here if the fused NPU optimizers below are adopted"),
    C("self.optimizer_g = torch.optim.Adam([{'params': optim_params}],", "fused_optimizer", "replace", False,
      "self.optimizer_g = torch_npu.optim.NpuFusedAdam([{'params': optim_params}],",
      "performance only: tensor-fused Adam on NPU"),
    C("self.optimizer_g = torch.optim.AdamW([{'params': optim_params}],", "fused_optimizer", "replace", False,
      "self.optimizer_g = torch_npu.optim.NpuFusedAdamW([{'params': optim_params}],",
      "performance only: tensor-fused AdamW on NPU (NAFNet SIDD/GoPro configs use AdamW)"),
    C("self.optimizer_g = torch.optim.SGD(optim_params,", "fused_optimizer", "replace", False,
      "self.optimizer_g = torch_npu.optim.NpuFusedSGD(optim_params,",
      "performance only: tensor-fused SGD on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache not released between validation images"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("nafnet_options", "basicsr/utils/options.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/utils/options.py (YAML option parsing, num_gpu auto, legacy gpu_ids)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list",
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so gpu_ids silently stops restricting devices"),
    C("opt['num_gpu'] = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "opt['num_gpu'] = torch.npu.device_count()",
      "returns 0 on an NPU host, which BasicSR reads as CPU mode"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("nafnet_misc", "basicsr/utils/misc.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/utils/misc.py (set_random_seed, exp dirs, scandir)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "queued lazily and never run without CUDA (silent no-op); torch.manual_seed above is expected to seed "
      "the NPU generator as well (unconfirmed in the knowledge notes)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above for all devices (unconfirmed)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("nafnet_logger", "basicsr/utils/logger.py", "explicit_replacement",
  "megvii-research/NAFNet basicsr/utils/logger.py (MessageLogger, wandb/tb loggers, get_env_info)", [
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "log-only: CUDA allocator stats read 0 on an NPU host (no error), so the memory column is meaningless"),
    C("gpu_name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'None'", "torch_cuda_api",
      "replace", False, "gpu_name = torch.npu.get_device_name(0) if torch.npu.is_available() else 'None'",
      "log-only: environment banner would report no accelerator"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("nafnet_requirements", "requirements.txt", "explicit_replacement",
  "megvii-research/NAFNet requirements.txt (BasicSR deps + pinned CUDA torch wheel)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on the CPU torch build (x86 from the cpu index, aarch64 from PyPI); the cu113 index has no aarch64 wheels"),
    C("torch==1.11.0+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "a +cu113 build cannot pair with torch_npu; torch must match the torch-npu wheel version"),
    C("torchvision>=0.12.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the NPU adapter itself; wheel version must equal the torch version (+.postN)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("hinet_setup", "setup.py", "kernel_rewrite",
  "megvii-model/HINet setup.py (BasicSR make_cuda_ext for deform_conv / fused_act / upfirdn2d, --cuda_ext)", [
    C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "replace",
      True, "if torch.cuda.is_available():  # Ascend: never build the nvcc sources; ops are ported in Python",
      "FORCE_CUDA=1 (set by the Docker image) selects CUDAExtension/nvcc, which has no NPU path and fails; "
      "the three .cu kernels are replaced at the Python call sites instead"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("hinet_dcn", "basicsr/models/ops/dcn/deform_conv.py", "kernel_rewrite",
  "megvii-model/HINet basicsr/models/ops/dcn/deform_conv.py (BasicSR/mmcv DCNv1/v2 autograd Functions over an nvcc extension)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the rewritten Functions call torch_npu.npu_deformable_conv2d / npu_deformable_conv2dbk directly"),
    C("from . import deform_conv_ext", "custom_cuda_extension", "removal", False, None,
      "guarded import of the nvcc-built extension; harmless once no call site uses it, so porters delete it"),
    C("deform_conv_ext = load(", "custom_cuda_extension", "removal", False, None,
      "BASICSR_JIT=True path JIT-compiles .cu sources with nvcc; cannot work on NPU, only reached when that env var is set"),
    C("if not input.is_cuda:", "device_type", "replace", True, "if not input.is_npu:",
      "NPU tensors report is_cuda=False, so DCN forward raises NotImplementedError"),
    C("deform_conv_ext.deform_conv_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, offset, None, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "CUDA kernel call; torch_npu ships a deformable conv forward kernel"),
    C("if not grad_output.is_cuda:", "device_type", "replace", True, "if not grad_output.is_npu:",
      "backward raises on NPU tensors"),
    C("deform_conv_ext.deform_conv_backward_input(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset, _ = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, offset, kernel_size=[weight.size(2), weight.size(3)], stride=[1, 1, ctx.stride[0], ctx.stride[1]], padding=[ctx.padding[0], ctx.padding[0], ctx.padding[1], ctx.padding[1]], dilation=[1, 1, ctx.dilation[0], ctx.dilation[1]], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=False)",
      "CUDA backward kernel; NPU backward kernel returns input, weight and offset grads together"),
    C("deform_conv_ext.deform_conv_backward_parameters(", "custom_cuda_extension", "removal", True, None,
      "weight grad already produced by npu_deformable_conv2dbk; the CUDA call would hit an undefined extension"),
    C("assert input.is_cuda, 'ModulatedDeformConv only supports CUDA tensors'", "device_type", "replace", True,
      "assert input.is_npu, 'ModulatedDeformConv only supports NPU tensors'", "assert fails for NPU tensors"),
    C("deform_conv_ext.modulated_deform_conv_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], dim=1), bias if ctx.with_bias else None, kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 CUDA kernel; NPU kernel takes offsets and mask concatenated (layout details unconfirmed)"),
    C("assert grad_output.is_cuda, 'ModulatedDeformConv backward needs CUDA'", "device_type", "replace", True,
      "assert grad_output.is_npu, 'ModulatedDeformConv backward needs NPU'", "assert fails for NPU tensors"),
    C("deform_conv_ext.modulated_deform_conv_backward(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset_all, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, torch.cat([offset, mask], dim=1), kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "DCNv2 CUDA backward kernel -> NPU backward kernel (split grad_offset_all into offset / mask grads afterwards)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("hinet_fused_act", "basicsr/models/ops/fused_act/fused_act.py", "device_branch_or_abstraction",
  "megvii-model/HINet basicsr/models/ops/fused_act/fused_act.py (StyleGAN2 fused bias + leaky ReLU extension)", [
    C("if input.device.type == 'cpu':", "custom_cuda_extension", "replace", True,
      "if input.device.type in ('cpu', 'npu'):",
      "every non-CPU tensor is sent to the nvcc-built fused_act_ext, which does not exist on NPU; "
      "route NPU to the plain leaky_relu path (leaky_relu has an NPU kernel)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("hinet_upfirdn2d", "basicsr/models/ops/upfirdn2d/upfirdn2d.py", "device_branch_or_abstraction",
  "megvii-model/HINet basicsr/models/ops/upfirdn2d/upfirdn2d.py (StyleGAN2 upfirdn2d extension + native fallback)", [
    C("if input.device.type == 'cpu':", "custom_cuda_extension", "replace", True,
      "if input.device.type in ('cpu', 'npu'):",
      "non-CPU tensors go to UpFirDn2d.apply -> upfirdn2d_ext (nvcc only); NPU must take upfirdn2d_native"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("hinet_slurm_sh", "scripts/slurm_train.sh", "explicit_replacement",
  "megvii-model/HINet scripts/slurm_train.sh (mmcv-style srun launcher for --launcher slurm)", [
    C("=#!/usr/bin/env bash", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded on every node before torch_npu is imported"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only knob, ignored by HCCL (which uses the NPU RoCE NICs for inter-node traffic)"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "the host NIC choice is silently ignored under HCCL; HCCL_SOCKET_IFNAME is the equivalent"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "log verbosity only (HCCL logs through the CANN plog; level mapping unconfirmed)"),
    C("--gres=gpu:${GPUS_PER_NODE} \\", "device_type", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
      "GRES name is site configuration; Ascend Slurm sites commonly register npu (unconfirmed in the knowledge notes)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("mprnet_train", "Deblurring/train.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/train.py (single-process DataParallel training, CUDA_VISIBLE_DEVICES from training.yml)", [
    C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None,
      "CUDA-only enumeration order; ignored by the Ascend runtime"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpus',
      "opt.GPU silently stops selecting devices; must be set before torch_npu initialises"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry script"),
    C("torch.cuda.manual_seed_all(1234)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1234)",
      "silent no-op without CUDA; torch.manual_seed above is expected to cover the NPU (unconfirmed)"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()",
      "Module.cuda() fails without CUDA"),
    C("device_ids = [i for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", True,
      "device_ids = [i for i in range(torch.npu.device_count())]",
      "empty list on an NPU host, so the multi-device branch silently never runs"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False, "if torch.npu.device_count() > 1:",
      "only guards a log message"),
    C("print(\"\\n\\nLet's use\", torch.cuda.device_count(), \"GPUs!\\n\\n\")", "torch_cuda_api", "replace", False,
      "print(\"\\n\\nLet's use\", torch.npu.device_count(), \"NPUs!\\n\\n\")", "log-only"),
    C("optimizer = optim.Adam(model_restoration.parameters(), lr=new_lr, betas=(0.9, 0.999),eps=1e-8)",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model_restoration.parameters(), lr=new_lr, betas=(0.9, 0.999),eps=1e-8)",
      "performance only"),
    C("model_restoration = nn.DataParallel(model_restoration, device_ids = device_ids)", "unsupported_op_workaround",
      "replace", True,
      "model_restoration = nn.parallel.DistributedDataParallel(model_restoration, device_ids=[local_rank])",
      "DataParallel is unsupported on Ascend; multi-NPU training needs DDP (plus an init_process_group('hccl') and a launcher)"),
    C("target = data[0].cuda()", "tensor_to_device", "replace", True, "target = data[0].npu()", "train batch to NPU"),
    C("input_ = data[1].cuda()", "tensor_to_device", "replace", True, "input_ = data[1].npu()", "train batch to NPU"),
    C("target = data_val[0].cuda()", "tensor_to_device", "replace", True, "target = data_val[0].npu()",
      "val batch to NPU"),
    C("input_ = data_val[1].cuda()", "tensor_to_device", "replace", True, "input_ = data_val[1].npu()",
      "val batch to NPU"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("mprnet_losses", "Deblurring/losses.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/losses.py (Charbonnier + Laplacian EdgeLoss with a hard-wired CUDA kernel)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the Gaussian kernel stays on CPU and F.conv2d gets a device mismatch"),
    C("self.kernel = self.kernel.cuda()", "tensor_to_device", "replace", True, "self.kernel = self.kernel.npu()",
      "kernel must live on the NPU with the images"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("mprnet_model_utils", "utils/model_utils.py", "explicit_replacement",
  "swz30/MPRNet utils/model_utils.py (checkpoint load/save helpers)", [
    C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(weights, map_location='cpu')",
      "released MPRNet checkpoints were saved from CUDA tensors; without map_location torch.load tries to "
      "restore them on CUDA and fails on an NPU host"),
    C("checkpoint = torch.load(weights, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(weights, map_location='npu:0')", "explicit CUDA map_location"),
    C('epoch = torch.load(weights)["epoch"]', "tensor_to_device", "replace", False,
      'epoch = torch.load(weights, map_location=\'cpu\')["epoch"]',
      "resume path: only fails when resuming a run whose checkpoint was written on a GPU"),
    C("optimizer.load_state_dict(torch.load(weights)['optimizer'])", "tensor_to_device", "replace", False,
      "optimizer.load_state_dict(torch.load(weights, map_location='cpu')['optimizer'])",
      "resume path: same as above; load_state_dict moves optimizer state to the param device"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("uformer_train", "train/train_denoise.py", "explicit_replacement",
  "ZhendongWang6/Uformer train/train_denoise.py (DataParallel + torch.cuda.amp + timm NativeScaler)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu',
      "--gpu silently stops selecting devices on the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "training entry script"),
    C("torch.cuda.manual_seed_all(1234)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1234)",
      "silent no-op without CUDA (torch.manual_seed above expected to seed the NPU; unconfirmed)"),
    C("optimizer = optim.Adam(model_restoration.parameters(), lr=opt.lr_initial,", "fused_optimizer", "replace",
      False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model_restoration.parameters(), lr=opt.lr_initial, betas=(0.9, 0.999),eps=1e-8, weight_decay=opt.weight_decay)",
      "performance only"),
    C("optimizer = optim.AdamW(model_restoration.parameters(), lr=opt.lr_initial,", "fused_optimizer", "replace",
      False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(model_restoration.parameters(), lr=opt.lr_initial, betas=(0.9, 0.999),eps=1e-8, weight_decay=opt.weight_decay)",
      "performance only (Uformer's default optimizer is AdamW)"),
    C("model_restoration = torch.nn.DataParallel (model_restoration)", "unsupported_op_workaround", "removal", True,
      None, "DataParallel is unsupported on Ascend; single-NPU training drops it, multi-NPU needs a DDP rewrite"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()",
      "Module.cuda() fails without CUDA"),
    C("criterion = CharbonnierLoss().cuda()", "tensor_to_device", "replace", True,
      "criterion = CharbonnierLoss().npu()", "Module.cuda() fails without CUDA"),
    C("target, input_ = data_val[0].cuda(), data_val[1].cuda()", "tensor_to_device", "replace", True,
      "target, input_ = data_val[0].npu(), data_val[1].npu()", "initial validation batch to NPU"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=True):",
      "CUDA autocast is disabled with a warning on an NPU host, so AMP silently turns off"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True, "loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler wraps a CUDA GradScaler, which disables itself without CUDA; fp16 training on NPU then "
      "runs unscaled (device argument exists in newer timm only; unconfirmed)"),
    C("torch.cuda.empty_cache()  # drop what the initial validation pass cached", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop what the initial validation pass cached", "silent no-op without CUDA"),
    C("target = data[0].cuda()", "tensor_to_device", "replace", True, "target = data[0].npu()", "train batch to NPU"),
    C("input_ = data[1].cuda()", "tensor_to_device", "replace", True, "input_ = data[1].npu()", "train batch to NPU"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "training autocast silently disabled on an NPU host"),
    C("target = data_val[0].cuda()", "tensor_to_device", "replace", True, "target = data_val[0].npu()",
      "val batch to NPU"),
    C("input_ = data_val[1].cuda()", "tensor_to_device", "replace", True, "input_ = data_val[1].npu()",
      "val batch to NPU"),
    C("with torch.cuda.amp.autocast(enabled=not opt.fp32_val):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=not opt.fp32_val):", "validation autocast silently disabled"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
  ])

# ---------------------------------------------------------------------------------------------------------------
# Window attention with relative-position bias and shift masks, written with plain matmul/softmax; device-agnostic.
E("uformer_model", "model.py", "explicit_replacement",
  "ZhendongWang6/Uformer model.py (LeWin transformer blocks, window partition, LeFF)", [])

# ---------------------------------------------------------------------------------------------------------------
E("uformer_test", "test/test_sidd.py", "explicit_replacement",
  "ZhendongWang6/Uformer test/test_sidd.py (SIDD validation with expand2square padding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "evaluation entry script"),
    C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None,
      "CUDA-only enumeration order; ignored on Ascend"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus', "--gpus silently stops selecting the device"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()",
      "Module.cuda() fails without CUDA"),
    C("rgb_noisy, mask = expand2square(data_test[1].cuda(), factor=128)", "tensor_to_device", "replace", True,
      "rgb_noisy, mask = expand2square(data_test[1].npu(), factor=128)",
      "input to NPU; expand2square then follows it via type_as"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("uformer_env", "environment.yml", "explicit_replacement",
  "ZhendongWang6/Uformer-style conda environment.yml (pytorch + cudatoolkit from the pytorch/nvidia channels)", [
    C("  - nvidia", "import_torch_npu", "removal", False, None,
      "channel only serves CUDA runtime packages; unused on an Ascend host"),
    C("- python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "torch 2.1 / torch-npu 2.1.0.postN wheels need Python 3.8-3.11"),
    C("- pytorch=1.9.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch version must match an available torch-npu release"),
    C("- torchvision=0.10.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must follow the torch upgrade"),
    C("- cudatoolkit=11.1", "import_torch_npu", "replace", False, "- cpuonly",
      "select the CPU build of pytorch; torch_npu documents CPU torch as the base (whether a CUDA build breaks it is unconfirmed)"),
    C("  - pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "the Ascend adapter, version-matched to torch 2.1.0 (needs CANN installed on the host)"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("swinir_test", "main_test_swinir.py", "explicit_replacement",
  "JingyunLiang/SwinIR main_test_swinir.py (KAIR-family test script with tile-by-tile inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "test entry script"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "silently falls back to CPU on an NPU host"),
    C("with torch.no_grad(), torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16):", "amp",
      "replace", True,
      "with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.fp16):",
      "--fp16 would autocast for CUDA only; on NPU the flag silently does nothing"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("restormer_dockerfile", "Dockerfile", "explicit_replacement",
  "Restormer/BasicSR-style training Dockerfile (CUDA devel base, cu113 wheels, --cuda_ext build)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the image needs CANN (driver mounted from the host) instead of the CUDA toolkit"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "custom_cuda_extension", "removal", False, None,
      "nvcc arch list; meaningless without nvcc"),
    C("ENV FORCE_CUDA=1", "custom_cuda_extension", "removal", True, None,
      "forces setup.py onto CUDAExtension/nvcc, which fails in an Ascend image"),
    C("RUN pip install --no-cache-dir torch==1.11.0+cu113 torchvision==0.12.0+cu113 --extra-index-url https://download.pytorch.org/whl/cu113",
      "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels -> CPU torch plus the matching torch-npu wheel"),
    C("RUN python setup.py develop --cuda_ext", "custom_cuda_extension", "replace", False,
      "RUN python setup.py develop",
      "without FORCE_CUDA this only builds CPU stubs that the ported Python ops no longer call"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "read by the NVIDIA container runtime only; NPUs are mounted with --device /dev/davinciN or ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
  ])

# ---------------------------------------------------------------------------------------------------------------
E("benchmark_runtime", "scripts/benchmark_runtime.py", "explicit_replacement",
  "NAFNet/Restormer-style scripts/benchmark_runtime.py (CUDA-event timing, MACs, peak memory for the model-zoo table)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "benchmark entry script"),
    C("torch.cuda.synchronize()  # finish warm-up kernels", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # finish warm-up kernels", "synchronize initialises CUDA and raises without it"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "timing events must be NPU events on the NPU stream"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "timing events must be NPU events on the NPU stream"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-iteration sync before reading the event timer"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)", "model and input are placed on this device"),
    C("net = net.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "channels_last is listed as unsupported in the Ascend migration notes; an NPU port keeps contiguous NCHW "
      "(whether it errors or only runs slowly is unconfirmed)"),
    C("x = x.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "same as above for the input tensor"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "CUDA allocator call; fails for an NPU (or missing CUDA) device"),
    C("peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated(device) / 1024 ** 2",
      "the script's reported peak memory would come from the (empty) CUDA allocator"),
    C("f'{\"fp16\" if args.fp16 else \"fp32\"}  device: {torch.cuda.get_device_name(args.gpu)}')", "torch_cuda_api",
      "replace", True, "f'{\"fp16\" if args.fp16 else \"fp32\"}  device: {torch.npu.get_device_name(args.gpu)}')",
      "unguarded get_device_name initialises CUDA and raises"),
  ])
