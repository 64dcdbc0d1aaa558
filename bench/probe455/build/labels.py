"""Labels for probe455 (semantic image synthesis from label maps: SPADE/GauGAN, pix2pixHD, OASIS,
SEAN, CC-FPSE, NVlabs imaginaire). One C(...) per upstream line a careful porter edits for
Ascend NPU + torch_npu, written as an explicit port (torch.npu.*, 'npu', hccl)."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


EX = "explicit_replacement"
DP_NOTE = ("torch.nn.DataParallel (and DataParallelWithCallback, its subclass) is marked unsupported on Ascend "
           "(torch_api_npu_support_2.7.1.tsv, mstt unsupported list); replaced by DDP, which needs an hccl process "
           "group and one process per NPU")

# ----------------------------------------------------------------------------------------- SPADE
E("spade_train", "train.py", EX, "NVlabs/SPADE train.py", [])

E("spade_base_options", "options/base_options.py", EX, "NVlabs/SPADE options/base_options.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "this module is the first to call torch.npu.* (set_device); on torch_npu < 2.5.1 torch.npu only exists after "
      "import torch_npu"),
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])",
      "torch.cuda.set_device initialises CUDA and raises on a host without CUDA"),
])

E("spade_pix2pix_model", "models/pix2pix_model.py", EX, "NVlabs/SPADE models/pix2pix_model.py", [
    C("self.FloatTensor = torch.cuda.FloatTensor if self.use_gpu()", "torch_cuda_api", "replace", True,
      "self.FloatTensor = torch.npu.FloatTensor if self.use_gpu() \\",
      "legacy typed-tensor constructor used for the one-hot label map and as GANLoss's tensor factory; "
      "torch.npu.FloatTensor is in torch_npu.npu.__all__"),
    C("self.ByteTensor = torch.cuda.ByteTensor if self.use_gpu()", "torch_cuda_api", "replace", True,
      "self.ByteTensor = torch.npu.ByteTensor if self.use_gpu() \\",
      "instance-edge map buffer"),
    C("data['label'] = data['label'].cuda()", "tensor_to_device", "replace", True,
      "data['label'] = data['label'].npu()", "input batch to device"),
    C("data['instance'] = data['instance'].cuda()", "tensor_to_device", "replace", True,
      "data['instance'] = data['instance'].npu()", "input batch to device"),
    C("data['image'] = data['image'].cuda()", "tensor_to_device", "replace", True,
      "data['image'] = data['image'].npu()", "input batch to device"),
])

E("spade_networks_init", "models/networks/__init__.py", EX, "NVlabs/SPADE models/networks/__init__.py", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())", "assert is False on an NPU host and aborts network creation"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "G/D/E moved to the device"),
])

E("spade_loss", "models/networks/loss.py", EX, "NVlabs/SPADE models/networks/loss.py", [
    C("self.vgg = VGG19().cuda()", "tensor_to_device", "replace", True, "self.vgg = VGG19().npu()",
      "perceptual-loss VGG19 placed on the device regardless of gpu_ids"),
])

E("spade_sync_bn", "models/networks/sync_batchnorm/batchnorm.py", EX,
  "vacancy/Synchronized-BatchNorm-PyTorch as vendored in NVlabs/SPADE models/networks/sync_batchnorm/batchnorm.py", [])

E("spade_trainer", "trainers/pix2pix_trainer.py", EX, "NVlabs/SPADE trainers/pix2pix_trainer.py", [
    C("self.pix2pix_model = DataParallelWithCallback(self.pix2pix_model,", "distributed_framework", "replace", True,
      "self.pix2pix_model = torch.nn.parallel.DistributedDataParallel(self.pix2pix_model,", DP_NOTE),
    C("device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
      "device_ids=[opt.gpu_ids[0]])",
      "DDP takes exactly one device per process; the list of all gpu_ids only made sense for DataParallel"),
])

E("spade_util", "util/util.py", EX, "NVlabs/SPADE util/util.py", [
    C("if len(opt.gpu_ids) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(opt.gpu_ids) and torch.npu.is_available():",
      "save_network moves the net to CPU before torch.save; left unchanged the condition is False on NPU, the net "
      "stays on CPU and the next step fails with a device mismatch"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "move back after saving"),
])

# ------------------------------------------------------------------------------------- pix2pixHD
E("p2phd_train", "train.py", EX, "NVIDIA/pix2pixHD train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the options module calls torch.npu.set_device"),
    C("model, [optimizer_G, optimizer_D] = amp.initialize(", "amp", "replace", False,
      "model, [optimizer_G, optimizer_D] = amp.initialize(model, [model.optimizer_G, model.optimizer_D], "
      "opt_level='O1', combine_grad=True)",
      "Ascend apex (apex + npu.patch) keeps amp.initialize/scale_loss for O1/O2 and adds combined-grad unscale; "
      "performance only"),
    C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[opt.gpu_ids[0]])",
      DP_NOTE + "; this is the --fp16 branch"),
])

E("p2phd_models", "models/models.py", EX, "NVIDIA/pix2pixHD models/models.py", [
    C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[opt.gpu_ids[0]])",
      DP_NOTE + "; this is the default fp32 training path, even with a single device"),
])

E("p2phd_model", "models/pix2pixHD_model.py", EX, "NVIDIA/pix2pixHD models/pix2pixHD_model.py", [
    C("input_label = label_map.data.cuda()", "tensor_to_device", "replace", True,
      "input_label = label_map.data.npu()", "label_nc == 0 path"),
    C("input_label = torch.cuda.FloatTensor(torch.Size(oneHot_size)).zero_()", "torch_cuda_api", "replace", True,
      "input_label = torch.npu.FloatTensor(torch.Size(oneHot_size)).zero_()", "one-hot buffer"),
    C("input_label = input_label.scatter_(1, label_map.data.long().cuda(), 1.0)", "tensor_to_device", "replace",
      True, "input_label = input_label.scatter_(1, label_map.data.long().npu(), 1.0)", "index tensor to device"),
    C("inst_map = inst_map.data.cuda()", "tensor_to_device", "replace", True, "inst_map = inst_map.data.npu()", ""),
    C("real_image = Variable(real_image.data.cuda())", "tensor_to_device", "replace", True,
      "real_image = Variable(real_image.data.npu())", ""),
    C("feat_map = Variable(feat_map.data.cuda())", "tensor_to_device", "replace", True,
      "feat_map = Variable(feat_map.data.npu())", "precomputed feature maps"),
    C("inst_map = label_map.cuda()", "tensor_to_device", "replace", True, "inst_map = label_map.npu()", ""),
    C("image = Variable(image.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "image = Variable(image.npu(), volatile=True)", "encode_features (feature clustering)"),
    C("feat_map = self.netE.forward(image, inst.cuda())", "tensor_to_device", "replace", True,
      "feat_map = self.netE.forward(image, inst.npu())", ""),
    C("edge = torch.cuda.ByteTensor(t.size()).zero_()", "torch_cuda_api", "replace", True,
      "edge = torch.npu.ByteTensor(t.size()).zero_()", "instance-boundary map"),
])

E("p2phd_base_model", "models/base_model.py", EX, "NVIDIA/pix2pixHD models/base_model.py", [
    C("self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor", "torch_cuda_api", "replace", True,
      "self.Tensor = torch.npu.FloatTensor if self.gpu_ids else torch.Tensor",
      "tensor factory handed to GANLoss and sample_features"),
    C("if len(gpu_ids) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(gpu_ids) and torch.npu.is_available():",
      "same save-then-move-back pattern as SPADE: unchanged, the network silently stays on CPU after a checkpoint"),
    C("=network.cuda()", "tensor_to_device", "replace", True, "network.npu()", ""),
])

E("p2phd_networks", "models/networks.py", EX, "NVIDIA/pix2pixHD models/networks.py", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
      "define_G"),
    C("netG.cuda(gpu_ids[0])", "tensor_to_device", "replace", True, "netG.npu(gpu_ids[0])", ""),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
      "define_D"),
    C("netD.cuda(gpu_ids[0])", "tensor_to_device", "replace", True, "netD.npu(gpu_ids[0])", ""),
    C("self.vgg = Vgg19().cuda()", "tensor_to_device", "replace", True, "self.vgg = Vgg19().npu()", "VGG loss"),
])

E("p2phd_base_options", "options/base_options.py", EX, "NVIDIA/pix2pixHD options/base_options.py", [
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])", ""),
])

E("p2phd_run_engine", "run_engine.py", EX, "NVIDIA/pix2pixHD run_engine.py (TensorRT/pycuda inference)", [])

# ------------------------------------------------------------------------------------------ OASIS
E("oasis_train", "train.py", EX, "boschresearch/OASIS train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
])

E("oasis_models", "models/models.py", EX, "boschresearch/OASIS models/models.py", [
    C('state_dict = torch.load(path + "G.pth")', "tensor_to_device", "replace", True,
      'state_dict = torch.load(path + "G.pth", map_location="cpu")',
      "OASIS saves state_dicts of the CUDA model (no .cpu()), so released GPU checkpoints hold CUDA storages; "
      "torch.load without map_location raises on a host without CUDA"),
    C('state_dict = torch.load(path + "EMA.pth")', "tensor_to_device", "replace", True,
      'state_dict = torch.load(path + "EMA.pth", map_location="cpu")', "test-time EMA generator"),
    C('self.netG.load_state_dict(torch.load(path + "G.pth"))', "tensor_to_device", "replace", True,
      'self.netG.load_state_dict(torch.load(path + "G.pth", map_location="cpu"))', "--continue_train"),
    C('self.netD.load_state_dict(torch.load(path + "D.pth"))', "tensor_to_device", "replace", True,
      'self.netD.load_state_dict(torch.load(path + "D.pth", map_location="cpu"))', "--continue_train"),
    C('self.netEMA.load_state_dict(torch.load(path + "EMA.pth"))', "tensor_to_device", "replace", True,
      'self.netEMA.load_state_dict(torch.load(path + "EMA.pth", map_location="cpu"))', "--continue_train"),
    C("model = DataParallelWithCallback(model, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[gpus[0]])", DP_NOTE),
    C("data['label'] = data['label'].cuda()", "tensor_to_device", "replace", True,
      "data['label'] = data['label'].npu()", ""),
    C("data['image'] = data['image'].cuda()", "tensor_to_device", "replace", True,
      "data['image'] = data['image'].npu()", ""),
    C("input_label = torch.cuda.FloatTensor(bs, nc, h, w).zero_()", "torch_cuda_api", "replace", True,
      "input_label = torch.npu.FloatTensor(bs, nc, h, w).zero_()", "one-hot semantics"),
    C("target_map[target_map == c] = torch.randint(0,2,(1,)).cuda()", "tensor_to_device", "replace", True,
      "target_map[target_map == c] = torch.randint(0,2,(1,)).npu()", "LabelMix regularisation (default on)"),
])

E("oasis_losses", "models/losses.py", EX, "boschresearch/OASIS models/losses.py", [
    C("torch.cuda.FloatTensor(1).fill_(1.0)", "torch_cuda_api", "replace", True,
      "return torch.npu.FloatTensor(1).fill_(1.0).requires_grad_(False).expand_as(input)", "N+1 loss target"),
    C("torch.cuda.FloatTensor(1).fill_(0.0)", "torch_cuda_api", "replace", True,
      "return torch.npu.FloatTensor(1).fill_(0.0).requires_grad_(False).expand_as(input)", ""),
    C("self.vgg = VGG19().cuda()", "tensor_to_device", "replace", True, "self.vgg = VGG19().npu()",
      "only with --add_vgg_loss"),
])

E("oasis_generator", "models/generator.py", EX, "boschresearch/OASIS models/generator.py", [
    C("=seg.cuda()", "tensor_to_device", "replace", True, "seg.npu()",
      "result is discarded upstream (no-op on GPU), but the call still initialises CUDA and raises on an NPU host"),
    C('dev = seg.get_device() if self.opt.gpu_ids != "-1" else "cpu"', "tensor_to_device", "replace", True,
      'dev = seg.device if self.opt.gpu_ids != "-1" else "cpu"',
      "get_device() yields a bare ordinal and torch.randn(device=<int>) reads it as a CUDA ordinal on the torch "
      "versions torch_npu 2.1 pairs with (transfer_to_npu rewrites int device kwargs for this reason); newer torch "
      "may map ints to the current accelerator - unconfirmed"),
])

E("oasis_fid", "utils/fid_scores.py", EX, "boschresearch/OASIS utils/fid_scores.py", [
    C("self.model_inc.cuda()", "tensor_to_device", "replace", True, "self.model_inc.npu()",
      "InceptionV3 for FID, built at start-up"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()",
      "real-image statistics pass"),
])

E("oasis_utils", "utils/utils.py", EX, "boschresearch/OASIS utils/utils.py", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy call, silently queued and never run without CUDA; torch.manual_seed above also seeds registered "
      "privateuse1 devices (unconfirmed in the knowledge base), so only reproducibility hygiene"),
])

E("oasis_env", "environment.yml", EX, "boschresearch/OASIS conda environment file", [
    C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu wheel exists for torch 1.6.0 (matrix: 1.5.0, 1.8.1, 1.11.0, 2.x); pin a torch that has one"),
    C("- torchvision=0.7.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision must match the new torch (Ascend/vision pairs 0.16.0 with torch 2.1)"),
    C("- tqdm", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "add the torch_npu wheel matching torch 2.1.0 (CANN 8.3.RC1 line) to the pip section"),
])

# ------------------------------------------------------------------------------------------- SEAN
E("sean_normalization", "models/networks/normalization.py", EX, "ZPdesu/SEAN models/networks/normalization.py", [
    C("added_noise = (torch.randn(x.shape[0], x.shape[3], x.shape[2], 1).cuda() * self.noise_var)",
      "tensor_to_device", "replace", True,
      "added_noise = (torch.randn(x.shape[0], x.shape[3], x.shape[2], 1, device=x.device) * self.noise_var)"
      ".transpose(1, 3)",
      "per-pixel noise in every ACE block, every forward"),
])

E("sean_architecture", "models/networks/architecture.py", EX, "ZPdesu/SEAN models/networks/architecture.py", [])

E("sean_launch", "scripts/train_celebamask.sh", EX,
  "launcher in the style of the ZPdesu/SEAN README training commands", [
    C("export CUDA_VISIBLE_DEVICES=4,5,6,7", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
      "ignored on Ascend: --gpu_ids 0,1,2,3 would silently land on physical NPUs 0-3 instead of 4-7"),
    C("NGPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "device_capability_check", "replace",
      True, 'NGPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "no nvidia-smi on an NPU host -> NGPUS=0 and the guard exits; device_count also honours "
      "ASCEND_RT_VISIBLE_DEVICES (npu-smi would list every card)"),
])

# ---------------------------------------------------------------------------------------- CC-FPSE
E("ccfpse_generator", "models/networks/generator.py", EX, "xh-liu/CC-FPSE models/networks/generator.py", [
    C("dtype=torch.float32, device=input.get_device())", "tensor_to_device", "replace", True,
      "dtype=torch.float32, device=input.device)",
      "VAE branch: integer ordinal from get_device() is read as a CUDA device (see oasis_generator)"),
])

# ------------------------------------------------------------------------------ imaginaire (GauGAN)
E("imag_train", "train.py", EX, "NVlabs/imaginaire train.py", [
    C("import torch.autograd.profiler as profiler", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry script; distributed.py uses torch.npu.* and hccl"),
    C("from imaginaire.utils.gpu_affinity import set_affinity", "device_capability_check", "removal", True, None,
      "gpu_affinity calls pynvml.nvmlInit() at import time; NVML is absent on an NPU host"),
    C("set_affinity(args.local_rank)", "device_capability_check", "removal", True, None,
      "NVML CPU-affinity lookup has no torch_npu counterpart; drop (or bind cores by NUMA by hand)"),
    C("use_cuda=True,", "torch_cuda_api", "replace", False, "use_device='npu',",
      "--profile only; autograd profiler warns and drops device timing without CUDA. torch_npu.profiler is the "
      "fuller replacement"),
])

E("imag_distributed", "imaginaire/utils/distributed.py", EX, "NVlabs/imaginaire imaginaire/utils/distributed.py", [
    C("def init_dist(local_rank, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(local_rank, backend='hccl', **kwargs):", "NCCL does not exist on Ascend"),
    C("=return torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "return torch.npu.current_device()", "re-init path"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)", ""),
    C("_libcudart = ctypes.CDLL('libcudart.so')", "custom_cuda_extension", "removal", True, None,
      "OSError: libcudart.so is not present on an NPU host"),
    C("_libcudart.cudaDeviceSetLimit(ctypes.c_int(0x05), ctypes.c_int(128))", "custom_cuda_extension", "removal",
      True, None, "L2 fetch-granularity tweak is CUDA-only"),
    C("_libcudart.cudaDeviceGetLimit(pValue, ctypes.c_int(0x05))", "custom_cuda_extension", "removal", True, None,
      "goes with the removed CDLL handle"),
    C("torch.cuda.current_device() == 0", "torch_cuda_api", "replace", True,
      "return torch.npu.current_device() == 0", "is_local_master"),
])

E("imag_gpu_affinity", "imaginaire/utils/gpu_affinity.py", EX, "NVlabs/imaginaire imaginaire/utils/gpu_affinity.py",
  [])

E("imag_trainer_utils", "imaginaire/utils/trainer.py", EX, "NVlabs/imaginaire imaginaire/utils/trainer.py", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed on the line above covers the device generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "as above"),
    C("net_G = net_G.to('cuda')", "tensor_to_device", "replace", True, "net_G = net_G.to('npu')", ""),
    C("net_D = net_D.to('cuda')", "tensor_to_device", "replace", True, "net_D = net_D.to('npu')", ""),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "NVIDIA apex FusedAdam is unavailable on NPU; the except branch silently falls back to torch Adam, so this is "
      "a performance change (fused_opt: True in the SPADE configs)"),
    C("from apex.optimizers import FusedSGD", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedSGD as FusedSGD",
      "not guarded by try/except: once the FusedAdam import succeeds (ported line) fused_opt stays True and an "
      "sgd config would hit ImportError here"),
])

E("imag_misc", "imaginaire/utils/misc.py", EX, "NVlabs/imaginaire imaginaire/utils/misc.py", [
    C("assert device in ['cpu', 'cuda']", "device_type", "replace", True, "assert device in ['cpu', 'npu']",
      "whitelist rejects 'npu'"),
    C("return to_device(data, 'cuda')", "device_type", "replace", True, "return to_device(data, 'npu')",
      "to_cuda is called on every batch by the trainer"),
])

E("imag_base_trainer", "imaginaire/trainers/base.py", EX, "NVlabs/imaginaire imaginaire/trainers/base.py", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch.npu.amp import GradScaler, autocast",
      "config enables AMP; the CUDA autocast/GradScaler disable themselves with a warning when CUDA is absent, so "
      "training would silently run fp32 without loss scaling"),
    C("self.criteria[loss_name].to('cuda')", "tensor_to_device", "replace", True,
      "self.criteria[loss_name].to('npu')", "perceptual-loss VGG etc."),
    C("torch.cuda.max_memory_allocated() / (1024 ** 3)))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / (1024 ** 3)))", "log line only; reports 0 without CUDA"),
    C("cal_data = to_device(cal_data, 'cuda')", "device_type", "replace", True,
      "cal_data = to_device(cal_data, 'npu')", "BN re-estimation for the EMA generator; 'cuda' now fails the "
      "ported whitelist in misc.to_device"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without an initialised CUDA context; memory hygiene after FID"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "speed_benchmark timing helper; torch.cuda.synchronize raises without CUDA"),
])

E("imag_config", "configs/projects/spade/cocostuff/base128_bs4.yaml", EX,
  "NVlabs/imaginaire configs/projects/spade/cocostuff/base128_bs4.yaml", [])

E("imag_dockerfile", "Dockerfile", EX, "NVlabs/imaginaire Dockerfile", [
    C("FROM nvcr.io/nvidia/pytorch:21.06-py3", "import_torch_npu", "replace", True,
      "FROM ascendhub.huawei.com/public-ascendhub/ascend-pytorch:24.0.RC1-A2-2.1.0-ubuntu20.04",
      "NGC CUDA image; needs an Ascend base image with CANN + torch + torch_npu (tag illustrative, unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "inert without nvcc"),
    C("cd /tmp/third_party/${p} && python setup.py install && cd -; \\", "custom_cuda_extension", "replace", True,
      'echo "skip ${p}: CUDA-only op, not used by SPADE/GauGAN"; \\',
      "CUDAExtension build needs nvcc/CUDA_HOME and fails the image build; the GauGAN path imports none of these "
      "ops (a full port would rewrite them as Ascend C + NpuExtension)"),
])

E("imag_install", "scripts/install.sh", EX, "NVlabs/imaginaire scripts/install.sh", [
    C("=nvcc --version", "custom_cuda_extension", "replace", True,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
      "set -e: missing nvcc aborts the install"),
    C("=python setup.py install;", "custom_cuda_extension", "replace", True,
      'echo "skip ${p}: CUDA-only op, not used by SPADE/GauGAN";',
      "same as the Dockerfile loop"),
])
