"""Labels for probe445 (infrared small-target detection: DNANet, ACM, ISNet, UIU-Net, SCTransNet, BasicIRSTD)."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script; the project pins torch 1.x, where torch_npu is only registered by an explicit import "
               "(autoload exists only since torch_npu 2.5.1)")
GPU_CKPT = ("released/GPU-trained checkpoint holds CUDA storages; torch.load without map_location raises on a host "
            "without CUDA")
SEED_NOTE = ("unconfirmed: torch.manual_seed(...) is called next to it and, in torch>=2.1, also seeds the registered "
             "custom device (npu), so leaving the cuda call is redundant rather than wrong")
PIN_NOTE = ("performance only: without pin_memory_device='npu' the DataLoader silently skips pinning when CUDA is "
            "absent (unconfirmed for every torch version)")
VISIBLE0 = ("device 0 is torch_npu's default anyway; the cuda variable is inert on NPU, so leaving it changes nothing "
            "for this value")

# ----------------------------------------------------------------------------------------------- DNANet
E("dnanet_train", "train.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection (DNANet) train.py", [
    C("import torch.optim    as optim", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model           = model.cuda()", "tensor_to_device", "replace", True,
      "model           = model.npu()", "model must live on the NPU"),
    C("checkpoint = torch.load(args.resume, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='npu:0')",
      "explicit 'cuda:0' map_location fails without CUDA"),
    C("=data   = data.cuda()", "tensor_to_device", "replace", True, "data   = data.npu()", "training batch to NPU"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "training masks to NPU"),
    C("data, labels = data.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "data, labels = data.npu(), labels.npu()", "validation batch to NPU"),
])

E("dnanet_test", "test.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection (DNANet) test.py", [
    C("from torchvision      import transforms", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE),
    C("model           = model.cuda()", "tensor_to_device", "replace", True, "model           = model.npu()",
      "model to NPU"),
    C("checkpoint        = torch.load('result/' + args.model_dir)", "device_type", "replace", True,
      "checkpoint        = torch.load('result/' + args.model_dir, map_location='npu')", GPU_CKPT),
    C("=data   = data.cuda()", "tensor_to_device", "replace", True, "data   = data.npu()", "input batch to NPU"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
      "masks to NPU (metrics compare pred and labels on one device)"),
])

E("dnanet_visual", "visulization.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection (DNANet) visulization.py", [
    C("from torchvision      import transforms", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE),
    C("model           = model.cuda()", "tensor_to_device", "replace", True, "model           = model.npu()",
      "model to NPU"),
    C("checkpoint             = torch.load('result/' + args.model_dir)", "device_type", "replace", True,
      "checkpoint             = torch.load('result/' + args.model_dir, map_location='npu')", GPU_CKPT),
    C("=data   = data.cuda()", "tensor_to_device", "replace", True, "data   = data.npu()", "input to NPU"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "masks to NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()  # wait for the forward pass", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the forward pass before stopping the clock",
      "raises without CUDA; also needed for a correct NPU timing"),
])

E("dnanet_model", "model/model_DNANet.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection model/model_DNANet.py (device-agnostic)", [])
E("dnanet_utils", "model/utils.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection model/utils.py (datasets, checkpoint, visualisation helpers)", [])
E("dnanet_metric", "model/metric.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection model/metric.py (ROC, PD/FA, mIoU)", [])
E("dnanet_args", "model/parse_args_train.py", "explicit_replacement",
  "YeRen123455/Infrared-Small-Target-Detection model/parse_args_train.py (unused --gpus flag)", [])

E("dnanet_sh", "run_NUDT.sh", "explicit_replacement",
  "DNANet README train/test/visualise commands as a shell launcher", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (libs, ASCEND_OPP_PATH) must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0", VISIBLE0),
])

# ----------------------------------------------------------------------------------------------- ACM
E("acm_train", "train.py", "explicit_replacement",
  "YimianDai/open-acm PyTorch re-implementation train.py (ACM-FPN / ACM-UNet)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "otherwise args.cuda is False on an NPU host and training silently runs on the CPU"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "user-selected --gpus would be silently ignored on NPU (all devices visible, device 0 used)"),
    C("self.device = torch.device('cuda' if args.cuda else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if args.cuda else 'cpu')", "device string"),
    C("pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
    C("args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("print('Using %d GPUs' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "print('Using %d NPUs' % torch.npu.device_count())", "log only; returns 0 without CUDA"),
    C("net = nn.DataParallel(net)", "distributed_framework", "replace", True,
      "net = net  # nn.DataParallel is unsupported on Ascend: launch with torchrun and wrap in DistributedDataParallel",
      "torch.nn.DataParallel is listed unsupported on Atlas A2/A3 and by msFmkTransplt; multi-NPU needs DDP+hccl"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "resume checkpoints written by the GPU run hold CUDA storages"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; NPU cache simply is not released (memory/perf only)"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
])

E("acm_model", "model/segmentation.py", "explicit_replacement",
  "YimianDai/open-acm PyTorch port model/segmentation.py (ASKCResNetFPN, ASKCResUNet)", [
    C("net = ASKCResNetFPN([4, 4, 4], [8, 16, 32, 64]).cuda().eval()", "tensor_to_device", "replace", True,
      "net = ASKCResNetFPN([4, 4, 4], [8, 16, 32, 64]).npu().eval()", "__main__ speed self-test"),
    C("x = torch.rand(8, 3, 480, 480).cuda()", "tensor_to_device", "replace", True,
      "x = torch.rand(8, 3, 480, 480).npu()", "__main__ speed self-test"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.synchronize()  # make sure all kernels are done", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all kernels are done", "raises without CUDA"),
])

E("acm_fusion", "model/fusion.py", "explicit_replacement",
  "YimianDai/open-acm PyTorch port model/fusion.py (AsymBiChaFuse etc.)", [])
E("acm_data", "utils/data.py", "explicit_replacement", "YimianDai/open-acm PyTorch port utils/data.py (SIRST)", [])
E("acm_metrics", "utils/metrics.py", "explicit_replacement",
  "YimianDai/open-acm PyTorch port utils/metrics.py (IoU, nIoU)", [])

# ----------------------------------------------------------------------------------------------- ISNet
E("isnet_train", "train.py", "explicit_replacement",
  "RuiZhang97/ISNet train.py (with an optional DDP path)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu', help='npu or cpu')",
      "default device string feeds torch.device(args.device)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device binding"),
    C("dist.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL does not exist on Ascend"),
    C("self.device = torch.device(f'cuda:{args.local_rank}')", "device_type", "replace", True,
      "self.device = torch.device(f'npu:{args.local_rank}')", "per-rank device"),
    C("self.device = torch.device(args.device if torch.cuda.is_available() else 'cpu')", "torch_cuda_api",
      "replace", True, "self.device = torch.device(args.device if torch.npu.is_available() else 'cpu')",
      "would silently fall back to CPU"),
    C("num_workers=args.num_workers, pin_memory=True,", "pin_memory", "replace", False,
      "num_workers=args.num_workers, pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "cuda GradScaler disables itself without CUDA; with NPU fp16 autocast the loss would go unscaled"),
    C("map_location=lambda storage, loc: storage.cuda(args.local_rank)", "device_type", "replace", True,
      "ckpt = torch.load(args.resume, map_location=f'npu:{args.local_rank}')",
      "storage.cuda() raises without CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a log line only; unported it just skips the print"),
    C("torch.cuda.get_device_name(self.device)", "torch_cuda_api", "replace", True,
      "torch.npu.get_device_name(self.device)))", "raises once the guard above is true on NPU"),
    C("with torch.cuda.amp.autocast(enabled=self.args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.args.amp):",
      "cuda autocast is silently disabled on NPU tensors, so --amp would do nothing"),
    C("peak_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak_mem = torch.npu.max_memory_allocated() / 1024 ** 3", "log only; reports 0 without CUDA"),
    C("torch.cuda.manual_seed_all(42)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(42)",
      SEED_NOTE),
])

E("isnet_model", "model/ISNet.py", "explicit_replacement",
  "RuiZhang97/ISNet model/ISNet.py (TFD block, Gated-SCNN shape stream with host-side Canny)", [
    C("canny = torch.from_numpy(canny).cuda().float()", "tensor_to_device", "replace", True,
      "canny = torch.from_numpy(canny).npu().float()",
      "Canny prior is concatenated with NPU activations; a .cuda() here raises"),
])

E("isnet_gsc", "model/my_functionals/GatedSpatialConv.py", "explicit_replacement",
  "nv-tlabs/GSCNN my_functionals/GatedSpatialConv.py as vendored in ISNet", [])

E("isnet_loss", "utils/loss.py", "explicit_replacement",
  "RuiZhang97/ISNet utils/loss.py (SoftIoU, class-balanced edge BCE from Gated-SCNN)", [
    C("weight = weight.cuda()", "tensor_to_device", "replace", True, "weight = weight.npu()",
      "BCE weight must be on the same device as the logits"),
])

E("isnet_data", "utils/data.py", "explicit_replacement",
  "RuiZhang97/ISNet utils/data.py (IRSTD-1k loader, edge/gradient targets with OpenCV)", [])

E("isnet_sh", "scripts/train_irstd1k.sh", "explicit_replacement",
  "ISNet single/multi-GPU launcher (torch.distributed.launch)", [
    C("NGPUS=${1:-1}", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "local ranks 0..3 already map to logical devices 0..3, so leaving it is harmless here"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL variable is inert under HCCL; removed for clarity"),
])

# ----------------------------------------------------------------------------------------------- UIU-Net
E("uiunet_train", "uiunet_train.py", "device_branch_or_abstraction",
  "danfenghong/IEEE_TIP_UIU-Net uiunet_train.py (U^2-Net style loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("net.load_state_dict(torch.load(args.resume))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(args.resume, map_location='cpu'))", GPU_CKPT),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "otherwise both device branches silently take the CPU path"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
    C("Variable(inputs.cuda(), requires_grad=False), Variable(labels.cuda(),", "tensor_to_device", "replace", True,
      "inputs_v, labels_v = Variable(inputs.npu(), requires_grad=False), Variable(labels.npu(),",
      "batch to NPU"),
])

E("uiunet_test", "uiunet_test.py", "device_branch_or_abstraction",
  "danfenghong/IEEE_TIP_UIU-Net uiunet_test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise inference silently runs on the CPU branch"),
    C("net.load_state_dict(torch.load(model_dir))", "device_type", "replace", True,
      "net.load_state_dict(torch.load(model_dir, map_location='npu'))", GPU_CKPT),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model to NPU"),
    C("if next(net.parameters()).is_cuda:", "device_type", "replace", True, "if next(net.parameters()).is_npu:",
      "is_cuda is False for NPU parameters, so the input would stay on the CPU and the forward pass fails"),
    C("inputs_test = Variable(inputs_test.cuda())", "tensor_to_device", "replace", True,
      "inputs_test = Variable(inputs_test.npu())", "input to NPU"),
])

E("uiunet_model", "model/UIU_Net.py", "explicit_replacement",
  "danfenghong/IEEE_TIP_UIU-Net model/UIU_Net.py (RSU blocks, device-agnostic)", [])
E("uiunet_data", "data_loader.py", "explicit_replacement",
  "danfenghong/IEEE_TIP_UIU-Net data_loader.py (from U^2-Net)", [])

E("uiunet_req", "requirements.txt", "explicit_replacement", "UIU-Net dependency list", [
    C("torch>=1.8.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17  # must match the installed torch (torch==2.1.0)",
      "torch_npu is not pulled in by anything else; its version must equal torch's"),
])

# ----------------------------------------------------------------------------------------------- SCTransNet
E("sctrans_train", "train.py", "explicit_replacement",
  "xdFai/SCTransNet train.py (BasicIRSTD-derived)", [
    C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = \"0\"", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = \"0\"", VISIBLE0),
    C("shuffle=True, pin_memory=True)", "pin_memory", "replace", False,
      "shuffle=True, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("net = Net(model_name=opt.model_name, mode='train').cuda()", "tensor_to_device", "replace", True,
      "net = Net(model_name=opt.model_name, mode='train').npu()", "model to NPU"),
    C("ckpt = torch.load(resume_pth)", "device_type", "replace", True,
      "ckpt = torch.load(resume_pth, map_location='cpu')", GPU_CKPT),
    C("img, gt_mask = Variable(img).cuda(), Variable(gt_mask).cuda()", "tensor_to_device", "replace", True,
      "img, gt_mask = Variable(img).npu(), Variable(gt_mask).npu()", "batch to NPU"),
    C("net = Net(model_name=opt.model_name, mode='test').cuda()", "tensor_to_device", "replace", True,
      "net = Net(model_name=opt.model_name, mode='test').npu()", "eval model to NPU"),
    C("=img = Variable(img).cuda()", "tensor_to_device", "replace", True, "img = Variable(img).npu()",
      "eval input to NPU"),
])

E("sctrans_test", "test.py", "explicit_replacement", "xdFai/SCTransNet test.py (BasicIRSTD-derived)", [
    C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = \"0\"", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = \"0\"", VISIBLE0),
    C("net = Net(model_name=opt.model_name, mode='test').cuda()", "tensor_to_device", "replace", True,
      "net = Net(model_name=opt.model_name, mode='test').npu()", "model to NPU"),
    C("net.load_state_dict(torch.load(opt.pth_dir)['state_dict'])", "device_type", "replace", False,
      "net.load_state_dict(torch.load(opt.pth_dir, map_location='npu')['state_dict'])",
      "raises on CUDA storages, but the bare except below reloads with map_location, so not required"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", False,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "unported it maps to CPU and load_state_dict copies into the NPU model anyway: extra host copy only"),
    C("=img = Variable(img).cuda()", "tensor_to_device", "replace", True, "img = Variable(img).npu()",
      "input to NPU"),
])

E("sctrans_model", "model/SCTransNet.py", "explicit_replacement",
  "xdFai/SCTransNet model/SCTransNet.py (CCT, SSCA, CFN; thop self-test)", [
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "__main__ FLOPs self-test"),
    C("inputs = torch.rand(1, 1, 256, 256).cuda()", "tensor_to_device", "replace", True,
      "inputs = torch.rand(1, 1, 256, 256).npu()", "__main__ FLOPs self-test"),
])

E("sctrans_config", "model/Config.py", "explicit_replacement", "xdFai/SCTransNet model/Config.py", [
    C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"", "env_var", "replace", False,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = \"0\"", VISIBLE0),
])

E("sctrans_utils", "utils.py", "explicit_replacement", "xdFai/SCTransNet utils.py (seed, optimiser, crops)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
])

E("sctrans_loss", "loss.py", "explicit_replacement",
  "xdFai/SCTransNet / BasicIRSTD loss.py (SoftIoU, ISNet edge loss with fixed gradient kernels)", [
    C("self.weight_h = nn.Parameter(data=kernel_h, requires_grad=False).cuda()", "tensor_to_device", "replace",
      True, "self.weight_h = nn.Parameter(data=kernel_h, requires_grad=False).npu()",
      "attribute (not a registered buffer), so net.npu() does not move it; conv with a CUDA weight fails"),
    C("self.weight_v = nn.Parameter(data=kernel_v, requires_grad=False).cuda()", "tensor_to_device", "replace",
      True, "self.weight_v = nn.Parameter(data=kernel_v, requires_grad=False).npu()", "same as weight_h"),
])

E("sctrans_req", "requirements.txt", "explicit_replacement", "SCTransNet pinned CUDA 11.3 wheels", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post17", "torch_npu wheel matching the re-pinned torch 2.1.0"),
    C("torch==1.10.0+cu113", "device_type", "replace", True, "torch==2.1.0",
      "+cu113 build is CUDA-only and 1.10 has no torch_npu release"),
    C("torchvision==0.11.1+cu113", "device_type", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0; +cu113 build is CUDA-only"),
])

# ----------------------------------------------------------------------------------------------- BasicIRSTD
E("basic_inference", "inference.py", "explicit_replacement", "XinyiYing/BasicIRSTD inference.py", [
    C("=import argparse", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = \"1\"", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = \"1\"",
      "selects the second device; unported it is ignored and the run silently lands on device 0"),
    C("net = Net(model_name=opt.model_name, mode='test').cuda()", "tensor_to_device", "replace", True,
      "net = Net(model_name=opt.model_name, mode='test').npu()", "model to NPU"),
    C("net.load_state_dict(torch.load(opt.pth_dir)['state_dict'])", "device_type", "replace", True,
      "net.load_state_dict(torch.load(opt.pth_dir, map_location='npu')['state_dict'])", GPU_CKPT),
    C("img = Variable(img).cuda()", "tensor_to_device", "replace", True, "img = Variable(img).npu()",
      "input to NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory only"),
])

E("basic_net", "net.py", "explicit_replacement", "XinyiYing/BasicIRSTD net.py (model zoo wrapper)", [])
E("basic_dataset", "dataset.py", "explicit_replacement", "XinyiYing/BasicIRSTD dataset.py", [])

E("basic_calparams", "cal_params.py", "explicit_replacement",
  "XinyiYing/BasicIRSTD cal_params.py (thop params/FLOPs, extended with event-based FPS)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = \"0\"", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = \"0\"", VISIBLE0),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "same as starter"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("input_img = torch.rand(1, 1, opt.img_size, opt.img_size).cuda()", "tensor_to_device", "replace", True,
      "input_img = torch.rand(1, 1, opt.img_size, opt.img_size).npu()", "input to NPU"),
    C("print('Device: %s' % torch.cuda.get_device_name(0))", "torch_cuda_api", "replace", True,
      "print('Device: %s' % torch.npu.get_device_name(0))", "get_device_name initialises CUDA and raises"),
    C("net = Net(model_name, mode='test').cuda()", "tensor_to_device", "replace", True,
      "net = Net(model_name, mode='test').npu()", "model to NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; memory only"),
])
