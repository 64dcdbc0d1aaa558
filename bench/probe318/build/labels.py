# Labels for probe318 (low-light enhancement / dehazing / deraining / underwater restoration, CUDA -> Ascend NPU).
# One C(...) per line a careful porter would edit. Target stack assumed throughout: torch 2.1.0 +
# torch_npu 2.1.0.post10 (CANN 8.0.x) -- i.e. a torch_npu older than 2.5.1, so `import torch_npu`
# is still needed explicitly (no device-backend autoload).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
NPU_PIN = "torch-npu==2.1.0.post10"

# ---------------------------------------------------------------------------------------------
# Zero-DCE / Zero-DCE++
# ---------------------------------------------------------------------------------------------
E("zdce_train", "Zero-DCE_code/lowlight_train.py", "explicit_replacement",
  "Zero-DCE lowlight_train.py (tab-indented, hard-coded CUDA_VISIBLE_DEVICES inside train(), .cuda() everywhere)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; torch_npu 2.1 has no autoload, must be imported before any .npu() call"),
      C("os.environ['CUDA_VISIBLE_DEVICES']='0'", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES']='0'",
        "CANN ignores CUDA_VISIBLE_DEVICES, the device mask is silently lost"),
      C("DCE_net = model.enhance_net_nopool().cuda()", "tensor_to_device", "replace", True,
        "DCE_net = model.enhance_net_nopool().npu()", "no CUDA device on an Ascend host"),
      C("DCE_net.load_state_dict(torch.load(config.pretrain_dir))", "device_type", "replace", True,
        "DCE_net.load_state_dict(torch.load(config.pretrain_dir, map_location='npu'))",
        "snapshots are saved straight from the CUDA model (CUDA storages); torch.load without map_location "
        "raises 'Attempting to deserialize object on a CUDA device' when CUDA is unavailable"),
      C("pin_memory=True)", "pin_memory", "replace", False,
        "train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=config.train_batch_size, shuffle=True, num_workers=config.num_workers, pin_memory=True, pin_memory_device='npu')",
        "performance only: without an NPU pin device the loader just skips pinning"),
      C("img_lowlight = img_lowlight.cuda()", "tensor_to_device", "replace", True,
        "img_lowlight = img_lowlight.npu()", "batch must go to the NPU"),
  ])

E("zdce_loss", "Zero-DCE_code/Myloss.py", "explicit_replacement",
  "Zero-DCE Myloss.py (spatial-consistency kernels built with torch.FloatTensor(...).cuda(), exposure loss with torch.cuda.FloatTensor)",
  [
      C("kernel_left = torch.FloatTensor( [[0,0,0],[-1,1,0],[0,0,0]]).cuda()", "tensor_to_device", "replace", True,
        "kernel_left = torch.FloatTensor( [[0,0,0],[-1,1,0],[0,0,0]]).npu().unsqueeze(0).unsqueeze(0)",
        "L_spa() is constructed unconditionally by the trainer; .cuda() fails on an Ascend host"),
      C("kernel_right = torch.FloatTensor( [[0,0,0],[0,1,-1],[0,0,0]]).cuda()", "tensor_to_device", "replace", True,
        "kernel_right = torch.FloatTensor( [[0,0,0],[0,1,-1],[0,0,0]]).npu().unsqueeze(0).unsqueeze(0)",
        "same as kernel_left"),
      C("kernel_up = torch.FloatTensor( [[0,-1,0],[0,1, 0 ],[0,0,0]]).cuda()", "tensor_to_device", "replace", True,
        "kernel_up = torch.FloatTensor( [[0,-1,0],[0,1, 0 ],[0,0,0]]).npu().unsqueeze(0).unsqueeze(0)",
        "same as kernel_left"),
      C("kernel_down = torch.FloatTensor( [[0,0,0],[0,1, 0],[0,-1,0]]).cuda()", "tensor_to_device", "replace", True,
        "kernel_down = torch.FloatTensor( [[0,0,0],[0,1, 0],[0,-1,0]]).npu().unsqueeze(0).unsqueeze(0)",
        "same as kernel_left"),
      C("weight_diff =torch.max(torch.FloatTensor([1]).cuda()", "tensor_to_device", "replace", True,
        "weight_diff =torch.max(torch.FloatTensor([1]).npu() + 10000*torch.min(org_pool - torch.FloatTensor([0.3]).npu(),torch.FloatTensor([0]).npu()),torch.FloatTensor([0.5]).npu())",
        "result is unused, but the line still executes every forward and .cuda() raises"),
      C("E_1 = torch.mul(torch.sign(enhance_pool - torch.FloatTensor([0.5]).cuda())", "tensor_to_device", "replace", True,
        "E_1 = torch.mul(torch.sign(enhance_pool - torch.FloatTensor([0.5]).npu()) ,enhance_pool-org_pool)",
        "dead value but executed each forward"),
      C("d = torch.mean(torch.pow(mean- torch.cuda.FloatTensor([self.mean_val] ),2))", "torch_cuda_api", "replace", True,
        "d = torch.mean(torch.pow(mean- torch.npu.FloatTensor([self.mean_val] ),2))",
        "constructing a torch.cuda legacy tensor type raises without CUDA; torch.npu.FloatTensor exists in torch_npu"),
  ])

E("zdcepp_test", "Zero-DCE++/lowlight_test.py", "explicit_replacement",
  "Zero-DCE++ lowlight_test.py (per-image CUDA_VISIBLE_DEVICES, scale_factor curve estimation, unsynchronised wall-clock timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script; explicit import needed with torch_npu 2.1"),
      C("os.environ['CUDA_VISIBLE_DEVICES']='0'", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES']='0'", "CUDA mask is ignored by the Ascend runtime"),
      C("data_lowlight = data_lowlight.cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
        "data_lowlight = data_lowlight.npu().unsqueeze(0)", "input must go to the NPU"),
      C("DCE_net = model.enhance_net_nopool(scale_factor).cuda()", "tensor_to_device", "replace", True,
        "DCE_net = model.enhance_net_nopool(scale_factor).npu()", "model must go to the NPU"),
      C("DCE_net.load_state_dict(torch.load(weights))", "device_type", "replace", True,
        "DCE_net.load_state_dict(torch.load(weights, map_location='npu'))",
        "released Epoch99.pth was saved from a CUDA model; loading without map_location fails without CUDA"),
  ])

# ---------------------------------------------------------------------------------------------
# Retinexformer (BasicSR fork)
# ---------------------------------------------------------------------------------------------
E("rxf_train", "basicsr/train.py", "device_branch_or_abstraction",
  "Retinexformer / Restormer basicsr/train.py (progressive patch training, auto-resume, prefetch modes)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "training entry point"),
      C("if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", False,
        "if torch.npu.is_available():  # no SM version on Ascend; TF32 switches are CUDA-only knobs",
        "short-circuits to False on an NPU host so nothing breaks; on NPU get_device_capability returns None, so the "
        "[0] index would crash if only the is_available half were ported"),
      C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "device_id = torch.npu.current_device()", "raises without CUDA when resuming"),
      C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
        "map_location=lambda storage, loc: storage.npu(device_id))", "resume-state storages must land on the NPU"),
      C("mini_gt_size, mini_batch_size * torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
        "mini_gt_size, mini_batch_size * torch.npu.device_count()))",
        "log message only; torch.cuda.device_count() returns 0 on an NPU host and the logged batch size becomes 0"),
  ])

E("rxf_dist", "basicsr/utils/dist_util.py", "device_branch_or_abstraction",
  "BasicSR basicsr/utils/dist_util.py (init_dist for pytorch/slurm launchers, mmcv-derived)",
  [
      C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist(launcher, backend='hccl', **kwargs):",
        "train.py calls init_dist(args.launcher) without a backend for the pytorch launcher, so the default is used; NCCL is absent on Ascend"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "returns 0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "raises without CUDA"),
      C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpus_per_node = torch.npu.device_count()", "slurm path; same ZeroDivisionError"),
      C("torch.cuda.set_device(proc_id % gpus_per_node)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % gpus_per_node)", "slurm path; raises without CUDA"),
      C("return dist.get_backend() == 'nccl'", "dist_backend", "replace", True,
        "return dist.get_backend() in ('nccl', 'hccl')",
        "backend-string comparison is not rewritten by any tool; with HCCL it returns False and CPU tensors are "
        "handed to an HCCL all_reduce, which needs device tensors"),
      C("if is_nccl_backend() and not tensor.is_cuda:", "device_type", "replace", False,
        "if is_nccl_backend() and not tensor.is_npu:",
        "is_cuda is False for NPU tensors, so NPU tensors get a redundant .npu() (a no-op); rename for clarity only"),
      C("tensor = tensor.cuda()", "tensor_to_device", "replace", True,
        "tensor = tensor.npu()", "host tensors must be moved to the NPU before the HCCL collective"),
  ])

E("rxf_prefetch", "basicsr/data/prefetch_dataloader.py", "explicit_replacement",
  "BasicSR basicsr/data/prefetch_dataloader.py (CUDAPrefetcher with a side stream)",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream()", "fails whenever prefetch_mode: cuda is selected"),
      C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "batches would be sent to a non-existent CUDA device"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "stream context must be the NPU one"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "raises without CUDA; NPU stream sync needed for correctness of the async copy"),
  ])

E("rxf_base_model", "basicsr/models/base_model.py", "device_branch_or_abstraction",
  "BasicSR basicsr/models/base_model.py (device from num_gpu, DDP/DataParallel wrapping, CPU-side checkpoint saving)",
  [
      C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
        "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')",
        "the single place every BasicSR model gets its device from"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "raises without CUDA under --launcher pytorch/slurm"),
      C("net = DataParallel(net)", "distributed_framework", "replace", True,
        "raise ValueError('DataParallel is not supported on Ascend NPU; launch with --launcher pytorch (DDP)')",
        "torch.nn.DataParallel is unsupported on NPU; reached when num_gpu > 1 without a launcher"),
  ])

E("rxf_irmodel", "basicsr/models/image_restoration_model.py", "device_branch_or_abstraction",
  "Retinexformer / Restormer ImageCleanModel (mixup augmentation, EMA, padded validation)",
  [
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op without CUDA (cache never initialised); only NPU memory housekeeping is lost"),
  ])

E("rxf_arch", "basicsr/models/archs/RetinexFormer_arch.py", "explicit_replacement",
  "Retinexformer RetinexFormer_arch.py (IG-MSA illumination-guided channel attention, fvcore FLOPs __main__)",
  [
      C("from fvcore.nn import FlopCountAnalysis", "import_torch_npu", "npu_only_addition", True,
        "    import torch_npu  # noqa: F401",
        "only the standalone __main__ FLOPs check touches a device; import torch_npu there, not at module level of an arch file"),
      C("model = RetinexFormer(stage=1, n_feat=40, num_blocks=[1, 2, 2]).cuda()", "tensor_to_device", "replace", True,
        "model = RetinexFormer(stage=1, n_feat=40, num_blocks=[1, 2, 2]).npu()", "standalone run fails without CUDA"),
      C("inputs = torch.randn((1, 3, 256, 256)).cuda()", "tensor_to_device", "replace", True,
        "inputs = torch.randn((1, 3, 256, 256)).npu()", "standalone run fails without CUDA"),
  ])

E("rxf_opt", "Options/RetinexFormer_LOL_v1.yml", "device_branch_or_abstraction",
  "Retinexformer Options/RetinexFormer_LOL_v1.yml (BasicSR options YAML)",
  [
      C("backend: nccl", "dist_backend", "replace", True, "  backend: hccl",
        "passed to init_dist(**dist_params) by the slurm launcher path; NCCL is absent on Ascend"),
  ])

E("rxf_test", "Enhancement/test_from_dataset.py", "explicit_replacement",
  "Retinexformer Enhancement/test_from_dataset.py (SID/SMID/SDSD loaders, self-ensemble, GT-mean rectification)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "test entry point"),
      C("os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'", "env_var", "removal", False, None,
        "no meaning on Ascend; harmless if left"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list", "--gpus selection is silently ignored otherwise"),
      C("model_restoration.cuda()", "tensor_to_device", "replace", True,
        "model_restoration.npu()", "model must go to the NPU"),
      C("model_restoration = nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None,
        "DataParallel is unsupported on NPU (its scatter path is CUDA-only); single-device inference needs no wrapper"),
      C("=input_ = data_batch['lq']", "tensor_to_device", "replace", True,
        "input_ = data_batch['lq'].npu()",
        "this branch relied on DataParallel's scatter to move the CPU batch to cuda:0; once DataParallel is gone the "
        "batch has to be moved explicitly"),
      C("=torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True,
        "torch.npu.ipc_collect()", "lazy-initialises CUDA and raises on an Ascend host"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op without CUDA"),
      C("torch.cuda.ipc_collect()  # free IPC handles", "torch_cuda_api", "replace", True,
        "torch.npu.ipc_collect()  # free IPC handles left by the previous image", "raises without CUDA"),
      C("torch.cuda.empty_cache()  # and hand cached blocks back", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # and hand cached blocks back before the next one", "silent no-op without CUDA"),
      C("input_ = img.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "input_ = img.unsqueeze(0).npu()", "input must go to the NPU"),
  ])

E("rxf_sh", "train_multigpu.sh", "explicit_replacement",
  "Retinexformer train_multigpu.sh (torch.distributed.launch wrapper with CUDA_VISIBLE_DEVICES and NCCL env)",
  [
      C("=set -e", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "without the CANN environment import torch_npu fails ('Please run source set_env.sh')"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob; no HCCL equivalent needed, harmless if left"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "host NIC selection for HCCL root-info exchange; only matters multi-node"),
      C("CUDA_VISIBLE_DEVICES=${GPUS} \\", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS} \\",
        "otherwise every process sees all NPUs and LOCAL_RANK indexes the wrong cards"),
  ])

E("rxf_setup", "setup.py", "kernel_rewrite",
  "BasicSR setup.py (optional DCN / fused_act / upfirdn2d CUDAExtension build, --no_cuda_ext switch)",
  [
      C("if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':", "custom_cuda_extension", "replace", False,
        "if os.getenv('FORCE_CUDA', '0') == '1':  # no nvcc on Ascend hosts",
        "already falls to the CppExtension branch on an NPU host; the ops are only used by EDVR/StyleGAN archs, not by Retinexformer"),
      C("extension = CUDAExtension", "custom_cuda_extension", "replace", False,
        "extension = NpuExtension  # from torch_npu.utils.cpp_extension; kernels rewritten in Ascend C",
        "only needed if the DCN/upfirdn2d ops must run on the NPU (kernel rewrite); DCN can instead use torchvision_npu.deform_conv2d"),
      C("if '--no_cuda_ext' in sys.argv:", "custom_cuda_extension", "replace", False,
        "if '--cuda_ext' not in sys.argv:",
        "make skipping the CUDA ops the default; without the flag an Ascend build compiles CPU-only stubs whose .cu "
        "halves are missing (unconfirmed whether build or only import then fails)"),
  ])

E("rxf_req", "requirements.txt", "explicit_replacement",
  "Retinexformer / BasicSR requirements.txt pinned to the cu113 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "with the torch pin changed, pip would fall back to PyPI's CUDA-bundled wheel which still works, just heavier"),
      C("torch==1.11.0+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "torch_npu needs the exactly matching torch version; +cu113 wheels do not exist for aarch64 Ascend hosts"),
      C("torchvision==0.12.0+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0"),
      C("=pyyaml", "import_torch_npu", "npu_only_addition", True, NPU_PIN,
        "the NPU backend itself (pyyaml is one of its runtime deps, so it goes right after it)"),
  ])

# ---------------------------------------------------------------------------------------------
# SNR-Aware (mmsr / EDVR code base)
# ---------------------------------------------------------------------------------------------
E("snr_train", "codes/train.py", "explicit_replacement",
  "SNR-Aware low-light codes/train.py (mmsr/EDVR-style trainer with in-file init_dist and multi-GPU validation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "training entry point"),
      C("def init_dist(backend='nccl', **kwargs):", "dist_backend", "replace", True,
        "def init_dist(backend='hccl', **kwargs):", "main() calls init_dist() with the default backend"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "0 on an NPU host -> ZeroDivisionError"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "raises without CUDA"),
      C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "device_id = torch.npu.current_device()", "raises without CUDA when resuming"),
      C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
        "map_location=lambda storage, loc: storage.npu(device_id))", "resume state must land on the NPU"),
      C("message += 'mem: {:.2f}G '.format(torch.cuda.max_memory_allocated() / 1024 ** 3)", "torch_cuda_api", "replace", False,
        "message += 'mem: {:.2f}G '.format(torch.npu.max_memory_allocated() / 1024 ** 3)",
        "log only; silently reports 0 without CUDA"),
      C("device='cuda')", "device_type", "replace", True, "device='npu')",
        "distributed validation buffer; dist.reduce over HCCL needs it on the NPU"),
  ])

E("snr_model", "codes/models/video_base_model.py", "explicit_replacement",
  "SNR-Aware models/video_base_model.py (SNR-map computation, DDP/DataParallel wrapping, optional apex FusedAdam)",
  [
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
        "    from torch_npu.optim import NpuFusedAdam as FusedAdam",
        "guarded import, falls back to torch.optim.Adam; switching to the NPU fused Adam is a speed-up only"),
      C("self.netG = DistributedDataParallel(self.netG, device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", True,
        "self.netG = DistributedDataParallel(self.netG, device_ids=[torch.npu.current_device()])", "raises without CUDA"),
      C("self.netG = DataParallel(self.netG)", "distributed_framework", "replace", True,
        "self.netG = self.netG  # DataParallel is unsupported on Ascend; single-device training",
        "default non-distributed path always wraps in DataParallel, which is unsupported on NPU"),
  ])

E("snr_options", "codes/options/options.py", "explicit_replacement",
  "SNR-Aware / mmsr options/options.py (YAML gpu_ids exported as CUDA_VISIBLE_DEVICES)",
  [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list", "gpu_ids from the YAML would be silently ignored"),
  ])

# ---------------------------------------------------------------------------------------------
# FFA-Net
# ---------------------------------------------------------------------------------------------
E("ffa_main", "net/main.py", "device_branch_or_abstraction",
  "FFA-Net net/main.py (tab-indented step-based trainer, opt.device from option.py, resume on by default)",
  [
      C("ckp=torch.load(opt.model_dir)", "device_type", "replace", True,
        "ckp=torch.load(opt.model_dir,map_location=opt.device)",
        "--resume defaults to True and the README puts the released GPU checkpoints into trained_models/, so a CUDA-"
        "serialised checkpoint is loaded without map_location"),
      C("net.load_state_dict(ckp['model'])", "distributed_framework", "replace", True,
        "net.load_state_dict({k.replace('module.', '', 1): v for k, v in ckp['model'].items()})",
        "GPU checkpoints were saved from the DataParallel wrapper ('module.' keys); on NPU the wrapper is not applied"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op without CUDA"),
      C("net=torch.nn.DataParallel(net)", "distributed_framework", "removal", False, None,
        "dead once opt.device is 'npu' (string compare against 'cuda'); must not be re-enabled, DataParallel is unsupported on NPU"),
  ])

E("ffa_option", "net/option.py", "device_branch_or_abstraction",
  "FFA-Net net/option.py (argparse + opt.device auto-detection at import time)",
  [
      C("import torch,os,sys,torchvision,argparse", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the device is decided here at import time, before main.py does anything, so torch.npu must exist already"),
      C("opt.device='cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "opt.device='npu' if torch.npu.is_available() else 'cpu'",
        "silently trains on CPU on an Ascend host"),
  ])

E("ffa_metrics", "net/metrics.py", "explicit_replacement",
  "FFA-Net net/metrics.py (pytorch-ssim copy with is_cuda-guarded window placement, numpy PSNR)",
  [
      C("\t\t\tif img1.is_cuda:", "device_type", "replace", False, "if img1.is_npu:",
        "False for NPU tensors; whether the following type_as(img1) then moves the CPU window to the NPU is unconfirmed"),
      C("\t\t\t\twindow = window.cuda(img1.get_device())", "tensor_to_device", "replace", False,
        "window = window.npu(img1.get_device())", "unconfirmed whether needed (see type_as above); safe form is window.to(img1.device)"),
      C("window = window.cuda(img1.get_device()) if img1.is_cuda else window", "tensor_to_device", "replace", False,
        "window = window.to(img1.device)",
        "is_cuda is False on NPU so the branch is skipped; correctness then rests on type_as moving the window (unconfirmed)"),
  ])

# ---------------------------------------------------------------------------------------------
# DehazeFormer
# ---------------------------------------------------------------------------------------------
E("dhf_train", "train.py", "explicit_replacement",
  "DehazeFormer train.py (torch.cuda.amp autocast + GradScaler, nn.DataParallel(...).cuda(), --gpu list)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "training entry point"),
      C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast, GradScaler",
        "the CUDA autocast/GradScaler silently disable themselves when CUDA is unavailable: mixed precision and loss "
        "scaling would be off without any error; changing the import is enough, the call sites stay"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "--gpu is silently ignored otherwise"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
      C("source_img = batch['source'].cuda()", "tensor_to_device", "replace", True,
        "source_img = batch['source'].npu()", "batch must go to the NPU"),
      C("target_img = batch['target'].cuda()", "tensor_to_device", "replace", True,
        "target_img = batch['target'].npu()", "batch must go to the NPU"),
      C("torch.cuda.empty_cache()  # drop the training activations", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # drop the training activations before eval", "silent no-op"),
      C("source_img, target_img = batch['source'].cuda(), batch['target'].cuda()", "tensor_to_device", "replace", True,
        "source_img, target_img = batch['source'].npu(), batch['target'].npu()", "validation batch must go to the NPU"),
      C("ckpt = torch.load(save_path)", "device_type", "replace", False,
        "ckpt = torch.load(save_path, map_location='cpu')",
        "opt-in --resume of this script's own checkpoint; only a GPU-era checkpoint would fail to deserialise"),
      C("print('==> Using {} GPU(s): {}'.format(torch.cuda.device_count(), torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
        "print('==> Using {} NPU(s): {}'.format(torch.npu.device_count(), torch.npu.get_device_name(0)))",
        "get_device_name lazily initialises CUDA and raises"),
      C("network = nn.DataParallel(network).cuda()", "distributed_framework", "replace", True,
        "network = network.npu()", "DataParallel is unsupported on NPU"),
      C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
        "performance only"),
      C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "performance only"),
  ])

E("dhf_test", "test.py", "explicit_replacement",
  "DehazeFormer test.py ('module.'-stripping single(), pytorch_msssim SSIM, plus a latency helper)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "test entry point"),
      C("state_dict = torch.load(save_dir)['state_dict']", "device_type", "replace", True,
        "state_dict = torch.load(save_dir, map_location='cpu')['state_dict']",
        "released checkpoints were saved from the CUDA DataParallel model; no map_location fails without CUDA"),
      C("name = k[7:]", "distributed_framework", "replace", True,
        "name = k[7:] if k.startswith('module.') else k",
        "consequence of dropping DataParallel in train.py: NPU-trained checkpoints have no 'module.' prefix, so blindly "
        "cutting 7 characters corrupts every key and load_state_dict fails"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
      C("input = batch['source'].cuda()", "tensor_to_device", "replace", True,
        "input = batch['source'].npu()", "batch must go to the NPU"),
      C("target = batch['target'].cuda()", "tensor_to_device", "replace", True,
        "target = batch['target'].npu()", "batch must go to the NPU"),
      C("x = torch.randn(*size).cuda()", "tensor_to_device", "replace", True,
        "x = torch.randn(*size).npu()", "benchmark() is always called at the end of the script"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for the last forward", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last forward before stopping the clock",
        "raises without CUDA; NPU kernels are asynchronous too"),
      C("=network.cuda()", "tensor_to_device", "replace", True, "network.npu()", "model must go to the NPU"),
      C("pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "performance only"),
  ])

E("dhf_env", "environment.yml", "explicit_replacement",
  "DehazeFormer conda environment (pytorch/nvidia channels, cudatoolkit=11.3)",
  [
      C("- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; unused once cudatoolkit is gone"),
      C("- pytorch=1.10.2", "torch_cuda_api", "replace", True,
        "  - pytorch=2.1.0  # CPU build; the NPU backend comes from torch-npu below",
        "torch_npu needs exactly torch 2.1.0; 1.10.2 has no torch_npu release"),
      C("- torchvision=0.11.3", "torch_cuda_api", "replace", True, "  - torchvision=0.16.0", "must match torch 2.1.0"),
      C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
        "CUDA-only runtime, dead weight on an Ascend host (unconfirmed whether it even resolves on aarch64)"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True, "    - " + NPU_PIN, "the NPU backend"),
  ])

# ---------------------------------------------------------------------------------------------
# MPRNet deraining
# ---------------------------------------------------------------------------------------------
E("mpr_train", "Deraining/train.py", "explicit_replacement",
  "MPRNet Deraining/train.py (env set before import torch, device_ids from device_count, multi-stage losses)",
  [
      C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None, "no meaning on Ascend"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = gpus', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpus', "GPU list from training.yml silently ignored otherwise"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "training entry point"),
      C("torch.cuda.manual_seed_all(1234)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(1234)", "silent no-op without CUDA; reproducibility only"),
      C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()",
        "model must go to the NPU"),
      C("device_ids = [i for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", False,
        "device_ids = [i for i in range(torch.npu.device_count())]",
        "returns 0 on NPU, so DataParallel below is skipped -- which is the behaviour NPU needs anyway; if ported, the "
        "DataParallel line must go too"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() > 1:", "log message only"),
      C("model_restoration = nn.DataParallel(model_restoration, device_ids = device_ids)", "distributed_framework", "removal", False, None,
        "unreachable while device_ids is CUDA-derived; DataParallel is unsupported on NPU (multi-NPU needs a DDP rewrite)"),
      C("pin_memory=True)", "pin_memory", "replace", False,
        "train_loader = DataLoader(dataset=train_dataset, batch_size=opt.OPTIM.BATCH_SIZE, shuffle=True, num_workers=16, drop_last=False, pin_memory=True, pin_memory_device='npu')",
        "performance only"),
      C("target = data[0].cuda()", "tensor_to_device", "replace", True, "target = data[0].npu()", "batch to NPU"),
      C("input_ = data[1].cuda()", "tensor_to_device", "replace", True, "input_ = data[1].npu()", "batch to NPU"),
      C("target = data_val[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = data_val[0].npu(non_blocking=True)", "validation batch to NPU"),
      C("input_ = data_val[1].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input_ = data_val[1].npu(non_blocking=True)", "validation batch to NPU"),
  ])

E("mpr_test", "Deraining/test.py", "explicit_replacement",
  "MPRNet Deraining/test.py (--gpus env, DataParallel inference, ipc_collect per image, synchronize timing)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "test entry point"),
      C('os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"', "env_var", "removal", False, None, "no meaning on Ascend"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus', "--gpus silently ignored otherwise"),
      C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()", "model to NPU"),
      C("model_restoration = nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None,
        "DataParallel is unsupported on NPU; load_checkpoint already loaded into the bare model"),
      C("pin_memory=True)", "pin_memory", "replace", False,
        "test_loader  = DataLoader(dataset=test_dataset, batch_size=1, shuffle=False, num_workers=4, drop_last=False, pin_memory=True, pin_memory_device='npu')",
        "performance only"),
      C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()", "raises without CUDA"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op"),
      C("input_    = data_test[0].cuda()", "tensor_to_device", "replace", True, "input_    = data_test[0].npu()",
        "batch to NPU"),
      C("torch.cuda.synchronize()  # make sure the H2D copy is done", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the H2D copy is done", "--timing path; raises without CUDA"),
      C("torch.cuda.synchronize()  # wait for all three stages", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for all three stages to finish",
        "--timing path; raises without CUDA, and without an NPU sync the timing would be meaningless"),
  ])

E("mpr_losses", "Deraining/losses.py", "explicit_replacement",
  "MPRNet Deraining/losses.py (Charbonnier, Laplacian EdgeLoss with is_available-guarded kernel, PSNR/FFT losses)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: the Gaussian kernel stays on the CPU and conv2d with NPU images fails on device mismatch"),
      C("self.kernel = self.kernel.cuda()", "tensor_to_device", "replace", True, "self.kernel = self.kernel.npu()",
        "kernel must live with the images"),
  ])

# ---------------------------------------------------------------------------------------------
# Restormer
# ---------------------------------------------------------------------------------------------
E("rst_demo", "demo.py", "device_branch_or_abstraction",
  "Restormer demo.py (task-selected weights, device variable, tiled inference, optional CUDA-event benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
        "silently runs the (large) transformer on the CPU of an Ascend host"),
      C("starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter, ender = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)",
        "--benchmark path; CUDA events cannot be created without CUDA"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guard short-circuits on NPU, only cache housekeeping is skipped; if ported, the two calls below must be ported too"),
      C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", False, "torch.npu.ipc_collect()",
        "unreachable behind the CUDA guard unless the guard is ported"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "guarded and a no-op anyway"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "--benchmark path; raises without CUDA"),
  ])

E("rst_docker", "Dockerfile", "explicit_replacement",
  "Restormer/BasicSR-style Dockerfile on nvidia/cuda with cu113 wheels and setup.py develop --no_cuda_ext",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "the image needs the CANN toolkit (and its environment) for torch_npu to import"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "read only by the NVIDIA container runtime; the Ascend Docker runtime uses ASCEND_VISIBLE_DEVICES (or pass /dev/davinci* with --device)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "nvcc arch list; nothing is compiled with nvcc"),
      C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None,
        "irrelevant with --no_cuda_ext; would force CUDAExtension in setup.py otherwise"),
      C("RUN pip install --no-cache-dir torch==1.11.0+cu113 torchvision==0.12.0+cu113 \\", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
        "torch_npu needs exactly torch 2.1.0; +cu113 wheels do not exist for aarch64"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "        --extra-index-url https://download.pytorch.org/whl/cpu", "CPU wheels suffice; PyPI fallback would also work"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir " + NPU_PIN, "the NPU backend"),
      C("""RUN python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"""", "torch_cuda_api", "replace", False,
        """RUN python -c "import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"""",
        "sanity print only; prints cuda None on the Ascend image"),
  ])

# ---------------------------------------------------------------------------------------------
# EnlightenGAN
# ---------------------------------------------------------------------------------------------
E("egan_networks", "models/networks.py", "explicit_replacement",
  "EnlightenGAN models/networks.py (define_G/define_D with assert+cuda+DataParallel, WGAN-GP, VGG perceptual loss)",
  [
      C("=assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
        "assert(torch.npu.is_available())", "--gpu_ids defaults to '0', so the assert fires on an Ascend host"),
      C("netG.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
        "netG.npu(gpu_ids[0])", "generator to NPU"),
      C("netG = torch.nn.DataParallel(netG, gpu_ids)", "distributed_framework", "removal", True, None,
        "DataParallel is unsupported on NPU"),
      C("if use_gpu: assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
        "if use_gpu: assert(torch.npu.is_available())", "fires on an Ascend host"),
      C("netD.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
        "netD.npu(gpu_ids[0])", "discriminator to NPU"),
      C("netD = torch.nn.DataParallel(netD, gpu_ids)", "distributed_framework", "removal", True, None,
        "DataParallel is unsupported on NPU"),
      C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()", "--use_wgan path"),
      C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
        "interpolates = interpolates.npu()", "--use_wgan path"),
      C("grad_outputs=torch.ones(disc_interpolates.size()).cuda(),", "tensor_to_device", "replace", True,
        "grad_outputs=torch.ones(disc_interpolates.size()).npu(),", "--use_wgan path"),
      C("mean = tensortype(batch.data.size()).cuda()", "tensor_to_device", "replace", True,
        "mean = tensortype(batch.data.size()).to(batch.device)", "--vgg_mean path"),
      C("vgg.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
        "vgg.npu(gpu_ids[0])", "VGG for the perceptual loss (used by the released --vgg 1 recipe)"),
      C("vgg = torch.nn.DataParallel(vgg, gpu_ids)", "distributed_framework", "removal", True, None,
        "DataParallel is unsupported on NPU"),
  ])

E("egan_options", "options/base_options.py", "explicit_replacement",
  "EnlightenGAN options/base_options.py (pix2pix/CycleGAN-style --gpu_ids parsing)",
  [
      C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(self.opt.gpu_ids[0])", "runs for the default --gpu_ids 0 and raises without CUDA"),
  ])

E("egan_single", "models/single_model.py", "explicit_replacement",
  "EnlightenGAN models/single_model.py (unpaired single-direction GAN with patch discriminators and self-feature-preserving loss)",
  [
      C("self.vgg_patch_loss.cuda()", "tensor_to_device", "replace", False, "self.vgg_patch_loss.npu()",
        "PerceptualLoss only holds InstanceNorm2d(affine=False): no parameters or buffers, so .cuda() is a silent no-op"),
      C("self.vgg_loss.cuda()", "tensor_to_device", "replace", False, "self.vgg_loss.npu()",
        "same: nothing to move, no-op on an NPU host"),
      C("self.fcn_loss.cuda()", "tensor_to_device", "replace", False, "self.fcn_loss.npu()",
        "--fcn path; SemanticLoss is not shown here, unconfirmed whether it holds tensors"),
      C("=self.noise = Variable(torch.cuda.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise / 255.))", "torch_cuda_api", "replace", True,
        "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise / 255.))",
        "--noise path in test(); torch.cuda legacy constructor raises without CUDA"),
      C("std=self.opt.noise/255.))", "torch_cuda_api", "replace", True,
        "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise/255.))",
        "--noise path in predict()"),
      C("# training-time noise augmentation", "torch_cuda_api", "replace", True,
        "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise / 255.)) # training-time noise augmentation",
        "--noise path in forward()"),
  ])

# ---------------------------------------------------------------------------------------------
# FUnIE-GAN (underwater)
# ---------------------------------------------------------------------------------------------
E("funie_train", "PyTorch/train_funiegan.py", "device_branch_or_abstraction",
  "FUnIE-GAN PyTorch/train_funiegan.py (paired underwater enhancement, pix2pix-style Tensor alias switch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "training entry point"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an Ascend host: the whole GAN silently trains on the CPU"),
      C("generator = generator.cuda()", "tensor_to_device", "replace", True, "generator = generator.npu()",
        "inside the device branch"),
      C("discriminator = discriminator.cuda()", "tensor_to_device", "replace", True,
        "discriminator = discriminator.npu()", "inside the device branch"),
      C("Adv_cGAN.cuda()", "tensor_to_device", "replace", False, "Adv_cGAN.npu()",
        "MSELoss has no parameters/buffers: .cuda() is a no-op even without CUDA"),
      C("L1_G = L1_G.cuda()", "tensor_to_device", "replace", False, "L1_G = L1_G.npu()",
        "L1Loss has no parameters/buffers: no-op"),
      C("L_vgg = L_vgg.cuda()", "tensor_to_device", "replace", True, "L_vgg = L_vgg.npu()",
        "VGG19 feature extractor holds weights"),
      C("Tensor = torch.cuda.FloatTensor", "torch_cuda_api", "replace", True, "Tensor = torch.npu.FloatTensor",
        "used for every .type(Tensor) and target construction; the CUDA legacy type cannot be instantiated"),
      C('generator.load_state_dict(torch.load("checkpoints/FunieGAN/%s/generator_%d.pth" % (dataset_name, args.epoch)))', "device_type", "replace", False,
        'generator.load_state_dict(torch.load("checkpoints/FunieGAN/%s/generator_%d.pth" % (dataset_name, args.epoch), map_location="cpu"))',
        "resume of this script's own checkpoints; only fails for checkpoints written on a CUDA host"),
      C('discriminator.load_state_dict(torch.load("checkpoints/FunieGAN/%s/discriminator_%d.pth" % (dataset_name, epoch)))', "device_type", "replace", False,
        'discriminator.load_state_dict(torch.load("checkpoints/FunieGAN/%s/discriminator_%d.pth" % (dataset_name, epoch), map_location="cpu"))',
        "as above"),
  ])
