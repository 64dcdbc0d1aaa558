"""Labels for probe356 (image-to-image translation and neural style transfer, CUDA -> Ascend NPU).

One entry per upstream file. Each C(...) names one line (by a substring that occurs on exactly one line,
or "=text" for an exact stripped match) that a careful porter would edit for an explicit torch_npu port.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: torch_npu must be imported before any torch.npu.* call; mandatory before "
               "torch_npu 2.5.1 (autoload afterwards) and this project pins an older torch")
DP_NOTE = ("torch.nn.DataParallel is ✘ on Atlas A2/A3 in Ascend's 2.7.1 API list; its scatter goes through "
           "torch._C._scatter, which a CPU/NPU torch build does not have, so even a one-device wrapper fails")

# ---------------------------------------------------------------------------------------------------
# junyanz/pytorch-CycleGAN-and-pix2pix
# ---------------------------------------------------------------------------------------------------
E("cg_train", "train.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix train.py (device-agnostic training loop)", [])

E("cg_base_options", "options/base_options.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix options/base_options.py (--gpu_ids parsing + set_device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first torch import on the train.py/test.py path (options are parsed first); " + IMPORT_NOTE),
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])",
      "torch.cuda.set_device fails on a host without CUDA; --gpu_ids keeps its meaning as NPU indices"),
])

E("cg_base_model", "models/base_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/base_model.py (self.device, save/load of networks)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')  # get device name: CPU or NPU",
      "every set_input()/GANLoss .to(self.device) and the load map_location derive from this string"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "on an NPU host the CUDA check is False, the else branch saves with net.cpu() and never moves the "
      "net back, so training silently continues with CPU weights and NPU inputs (device mismatch)"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(net.cpu().state_dict(), save_path)",
      "consequence of dropping nn.DataParallel in networks.init_net: the bare module has no .module; the "
      "saved keys stay identical to the upstream checkpoints (which were saved from .module)"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True, "net.npu(self.gpu_ids[0])",
      "move the network back to its NPU after the CPU copy was saved"),
])

E("cg_networks", "models/networks.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/networks.py (init_net with DataParallel, ResNet/U-Net G, PatchGAN D)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())", "the assert fires on every NPU run with --gpu_ids >= 0"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True, "net.to(torch.device('npu', gpu_ids[0]))",
      "a bare int device in Module.to means a CUDA ordinal (transfer_to_npu rewrites exactly this case to 'npu:{i}')"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; the port runs single-device (multi-NPU would need a DDP/HCCL rewrite of the launcher)"),
])

E("cg_cycle_gan_model", "models/cycle_gan_model.py", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix models/cycle_gan_model.py (all device use goes through self.device)", [])

E("cg_environment", "environment.yml", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix environment.yml (conda env with cudatoolkit)", [
    C("- cudatoolkit=10.2", "env_var", "removal", False, None,
      "no CUDA runtime is used on an NPU host; leaving it only installs dead weight (x86) or fails to "
      "resolve on some aarch64 channels (unconfirmed)"),
    C("- wandb==0.12.18", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==<same x.y.z as the pinned pytorch>",
      "torch_npu wheel must be added and must match the torch version exactly (x.y.z[.postN]); CANN comes "
      "from the host, not from conda"),
])

E("cg_dockerfile", "docs/Dockerfile", "explicit_replacement",
  "junyanz/pytorch-CycleGAN-and-pix2pix docs/Dockerfile (nvidia/cuda base + conda pytorch)", [
    C("FROM nvidia/cuda:10.1-base", "env_var", "replace", True,
      "FROM <Ascend CANN base image for the host's NPU, e.g. an ascend-toolkit/cann image>",
      "the CUDA base image carries neither CANN nor the Ascend driver user-space libraries torch_npu links against"),
    C("RUN apt-key adv --fetch-keys", "env_var", "removal", False, None,
      "NVIDIA apt key is irrelevant without the CUDA repo; harmless if left"),
    C("RUN conda install -y pytorch torchvision -c pytorch", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "torch_npu is only on pip, and its wheel version must equal the torch version (pairing from the version matrix)"),
    C("=WORKDIR /workspace", "env_var", "npu_only_addition", False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> ~/.bashrc",
      "CANN environment must be sourced in the container; many CANN base images already do it (unconfirmed)"),
])

# ---------------------------------------------------------------------------------------------------
# NVIDIA/pix2pixHD
# ---------------------------------------------------------------------------------------------------
E("phd_train", "train.py", "explicit_replacement",
  "NVIDIA/pix2pixHD train.py (apex amp O1 under --fp16, DataParallel, .module everywhere)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; the --fp16 path keeps apex amp (Ascend apex patch supports O1) on the bare model"),
    C("optimizer_G, optimizer_D = model.module.optimizer_G, model.module.optimizer_D", "distributed_framework",
      "replace", True, "optimizer_G, optimizer_D = model.optimizer_G, model.optimizer_D",
      "consequence of the DataParallel removal in models.create_model: no .module attribute any more"),
    C("loss_dict = dict(zip(model.module.loss_names, losses))", "distributed_framework", "replace", True,
      "loss_dict = dict(zip(model.loss_names, losses))", "consequence of the DataParallel removal"),
    C("model.module.save('latest')  # rolling checkpoint", "distributed_framework", "replace", True,
      "model.save('latest')  # rolling checkpoint", "consequence of the DataParallel removal"),
    C("=model.module.save('latest')", "distributed_framework", "replace", True, "model.save('latest')",
      "consequence of the DataParallel removal"),
    C("model.module.save(epoch)", "distributed_framework", "replace", True, "model.save(epoch)",
      "consequence of the DataParallel removal"),
    C("model.module.update_fixed_params()", "distributed_framework", "replace", True, "model.update_fixed_params()",
      "consequence of the DataParallel removal"),
    C("model.module.update_learning_rate()", "distributed_framework", "replace", True,
      "model.update_learning_rate()", "consequence of the DataParallel removal"),
])

E("phd_models", "models/models.py", "explicit_replacement",
  "NVIDIA/pix2pixHD models/models.py (create_model wraps in DataParallel)", [
    C("model = torch.nn.DataParallel(model, device_ids=opt.gpu_ids)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; DDP is not a drop-in here because one forward feeds two separate backward passes (G and D)"),
])

E("phd_base_model", "models/base_model.py", "explicit_replacement",
  "NVIDIA/pix2pixHD models/base_model.py (self.Tensor = torch.cuda.FloatTensor, save_network)", [
    C("self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor", "torch_cuda_api", "replace", True,
      "self.Tensor = torch.npu.FloatTensor if self.gpu_ids else torch.Tensor",
      "legacy typed-tensor constructor; used for GAN labels and sampled features. torch.npu.FloatTensor exists in torch_npu.npu"),
    C("if len(gpu_ids) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(gpu_ids) and torch.npu.is_available():",
      "False on an NPU host: after network.cpu() for saving, the network would silently stay on the CPU"),
    C("network.cuda()", "tensor_to_device", "replace", True, "network.npu()",
      "move back to the current NPU (set by base_options) after saving"),
])

E("phd_model", "models/pix2pixHD_model.py", "explicit_replacement",
  "NVIDIA/pix2pixHD models/pix2pixHD_model.py (one-hot labels, edge maps and inputs built with .cuda())", [
    C("input_label = label_map.data.cuda()", "tensor_to_device", "replace", True,
      "input_label = label_map.data.npu()", "label_nc == 0 path"),
    C("torch.cuda.FloatTensor(torch.Size(oneHot_size))", "torch_cuda_api", "replace", True,
      "input_label = torch.npu.FloatTensor(torch.Size(oneHot_size)).zero_()",
      "one-hot buffer allocated directly on the device"),
    C("label_map.data.long().cuda()", "tensor_to_device", "replace", True,
      "input_label = input_label.scatter_(1, label_map.data.long().npu(), 1.0)", "scatter index must live on the NPU"),
    C("inst_map = inst_map.data.cuda()", "tensor_to_device", "replace", True, "inst_map = inst_map.data.npu()",
      "instance map feeds get_edges"),
    C("Variable(real_image.data.cuda())", "tensor_to_device", "replace", True,
      "real_image = Variable(real_image.data.npu())", "real image for D and the VGG loss"),
    C("Variable(feat_map.data.cuda())", "tensor_to_device", "replace", True,
      "feat_map = Variable(feat_map.data.npu())", "--load_features path"),
    C("inst_map = label_map.cuda()", "tensor_to_device", "replace", True, "inst_map = label_map.npu()",
      "--label_feat path"),
    C("Variable(image.cuda(), volatile=True)", "tensor_to_device", "replace", True,
      "image = Variable(image.npu(), volatile=True)", "encode_features (precompute_feature_maps.py)"),
    C("self.netE.forward(image, inst.cuda())", "tensor_to_device", "replace", True,
      "feat_map = self.netE.forward(image, inst.npu())", "encode_features"),
    C("torch.cuda.ByteTensor(t.size())", "torch_cuda_api", "replace", True,
      "edge = torch.npu.ByteTensor(t.size()).zero_()",
      "edge map allocated on the device; the | with a bool comparison then runs on the NPU"),
])

E("phd_networks", "models/networks.py", "explicit_replacement",
  "NVIDIA/pix2pixHD models/networks.py (define_G/define_D .cuda(gpu_ids[0]), VGGLoss)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True, "assert(torch.npu.is_available())",
      "define_G: assert fires on an NPU host"),
    C("netG.cuda(gpu_ids[0])", "tensor_to_device", "replace", True, "netG.npu(gpu_ids[0])", "define_G"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
      "define_D"),
    C("netD.cuda(gpu_ids[0])", "tensor_to_device", "replace", True, "netD.npu(gpu_ids[0])", "define_D"),
    C("self.vgg = Vgg19().cuda()", "tensor_to_device", "replace", True, "self.vgg = Vgg19().npu()",
      "VGG perceptual loss network"),
])

E("phd_base_options", "options/base_options.py", "explicit_replacement",
  "NVIDIA/pix2pixHD options/base_options.py (--gpu_ids, --fp16, set_device)", [
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])",
      "also makes the index-less .npu() calls in the model land on the chosen NPU"),
])

# ---------------------------------------------------------------------------------------------------
# NVlabs/imaginaire
# ---------------------------------------------------------------------------------------------------
E("im_train", "train.py", "explicit_replacement",
  "NVlabs/imaginaire train.py (NVML affinity, init_dist, autograd profiler)", [
    C("import torch.autograd.profiler as profiler", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "first torch import of the entry point; " + IMPORT_NOTE),
    C("from imaginaire.utils.gpu_affinity import set_affinity", "torch_cuda_api", "removal", True, None,
      "gpu_affinity imports pynvml and calls nvmlInit() at import time; NVML does not exist on an Ascend host "
      "(no NPU equivalent in torch_npu)"),
    C("set_affinity(args.local_rank)", "torch_cuda_api", "removal", True, None,
      "NVML-based CPU affinity; drop (or bind cores from npu-smi topology by hand)"),
    C("use_cuda=True,", "torch_cuda_api", "replace", False, "use_device='npu',",
      "only with --profile; with use_cuda on an NPU host the legacy profiler warns and records CPU only. "
      "NPU kernel times need torch_npu.profiler (unconfirmed for the legacy autograd profiler)"),
])

E("im_distributed", "imaginaire/utils/distributed.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/utils/distributed.py (nccl init + libcudart L2 fetch-granularity hack)", [
    C("def init_dist(local_rank, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(local_rank, backend='hccl', **kwargs):", "NCCL is unavailable; HCCL is the Ascend collective backend"),
    C("=return torch.cuda.current_device()", "torch_cuda_api", "replace", True, "return torch.npu.current_device()",
      "re-entry path when the process group already exists"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "per-rank device binding before init_process_group"),
    C("_libcudart = ctypes.CDLL('libcudart.so')", "torch_cuda_api", "removal", True, None,
      "dlopen of the CUDA runtime raises OSError on an NPU host; the L2 fetch-granularity tweak has no Ascend counterpart"),
    C("_libcudart.cudaDeviceSetLimit(", "torch_cuda_api", "removal", True, None, "goes with the libcudart removal"),
    C("_libcudart.cudaDeviceGetLimit(", "torch_cuda_api", "removal", True, None, "goes with the libcudart removal"),
    C("return torch.cuda.current_device() == 0", "torch_cuda_api", "replace", True,
      "return torch.npu.current_device() == 0",
      "is_local_master() gates per-node downloads/caching; torch.cuda.current_device() raises without CUDA"),
])

E("im_cudnn", "imaginaire/utils/cudnn.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/utils/cudnn.py (cudnn.benchmark/deterministic flags only)", [])

E("im_gpu_affinity", "imaginaire/utils/gpu_affinity.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/utils/gpu_affinity.py (pynvml CPU affinity; dead after the train.py edit)", [])

E("im_misc", "imaginaire/utils/misc.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/utils/misc.py (to_device/to_cuda helpers)", [
    C("assert device in ['cpu', 'cuda']", "device_type", "replace", True, "assert device in ['cpu', 'npu']",
      "the whitelist rejects 'npu' otherwise"),
    C("return to_device(data, 'cuda')", "device_type", "replace", True, "return to_device(data, 'npu')",
      "to_cuda() is what the trainer calls on every batch; the function name is left as is"),
])

E("im_trainer_utils", "imaginaire/utils/trainer.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/utils/trainer.py (seeding, model placement, DDP wrap, apex FusedAdam)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant: torch.manual_seed(seed) on the line above already seeds the registered privateuse1 "
      "device; the CUDA call is a queued no-op on an NPU host"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same as above"),
    C("net_G = net_G.to('cuda')", "tensor_to_device", "replace", True, "net_G = net_G.to('npu')",
      "generator placement (current device set in init_dist)"),
    C("net_D = net_D.to('cuda')", "tensor_to_device", "replace", True, "net_D = net_D.to('npu')",
      "discriminator placement"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "the try/except falls back to torch.optim.Adam when apex is absent; with the Ascend apex patch installed "
      "the import may succeed while FusedAdam's CUDA kernels are missing (unconfirmed), so the NPU fused "
      "optimizer is the safe and faster choice"),
    C("from apex.optimizers import FusedSGD", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedSGD as FusedSGD",
      "only reached when the FusedAdam import above succeeded and type == sgd"),
])

E("im_trainer_base", "imaginaire/trainers/base.py", "explicit_replacement",
  "NVlabs/imaginaire imaginaire/trainers/base.py (torch.cuda.amp GradScaler/autocast, speed benchmark)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "the shipped vid2vid config enables AMP; CUDA GradScaler/autocast disable themselves with a warning "
      "on an NPU host, so training silently runs fp32 without loss scaling"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "only with speed_benchmark=True, but then every timing hook raises (CUDA lazy init without CUDA)"),
    C("self.criteria[loss_name].to('cuda')", "tensor_to_device", "replace", True,
      "self.criteria[loss_name].to('npu')", "loss modules (VGG perceptual, flow) hold weights"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 ** 3))",
      "log line only: the CUDA allocator is never initialised on an NPU host, so it prints 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on an NPU host; releasing the NPU cache after metrics is a memory/performance nicety"),
])

E("im_resample2d_setup", "imaginaire/third_party/resample2d/setup.py", "kernel_rewrite",
  "NVlabs/imaginaire imaginaire/third_party/resample2d/setup.py (CUDAExtension with nvcc gencode list)", [
    C("CUDAExtension('resample2d_cuda', [", "custom_cuda_extension", "removal", True, None,
      "no nvcc/CUDA_HOME on an NPU host, so the build fails; with the grid_sample rewrite only "
      "py_modules=['resample2d'] is installed (the whole ext_modules block goes)"),
])

E("im_resample2d", "imaginaire/third_party/resample2d/resample2d.py", "kernel_rewrite",
  "NVlabs/imaginaire imaginaire/third_party/resample2d/resample2d.py (flow warping via a CUDA kernel)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch_npu.npu.amp import autocast",
      "@autocast(False) must disable the NPU autocast region; inputs are cast with .float() anyway, so "
      "results stay fp32 even if left"),
    C("import resample2d_cuda", "custom_cuda_extension", "removal", True, None,
      "the compiled extension cannot exist on an NPU host; importing it fails at module import"),
    C("resample2d_cuda.forward(input1, input2, output, kernel_size)", "custom_cuda_extension", "removal", False, None,
      "dead once Resample2d.forward no longer calls the Function (delete with it)"),
    C("=resample2d_cuda.backward(input1, input2, grad_output.data,", "custom_cuda_extension", "removal", False, None,
      "dead once Resample2d.forward no longer calls the Function (delete with it)"),
    C("=class Resample2d(Module):", "custom_cuda_extension", "npu_only_addition", True,
      "def _grid_sample_warp(img, flow): build a normalised base grid, add flow/((W-1)/2, (H-1)/2), "
      "return F.grid_sample(img, grid, mode='bilinear', padding_mode='border', align_corners=True)",
      "pure-torch replacement for the bilinear resample kernel (kernel_size=1); grid_sampler_2d and its "
      "backward have NPU kernels, autograd provides the gradients"),
    C("return Resample2dFunction.apply(input1_c, input2, self.kernel_size)", "custom_cuda_extension", "replace", True,
      "return _grid_sample_warp(input1_c, input2)", "route the warp through the grid_sample helper"),
])

E("im_install", "scripts/install.sh", "explicit_replacement",
  "NVlabs/imaginaire scripts/install.sh (builds CUDA third-party ops)", [
    C("nvcc --version", "custom_cuda_extension", "removal", False, None,
      "diagnostic only; the script has no set -e so it just prints 'command not found'"),
    C("for p in correlation channelnorm resample2d bias_act upfirdn2d; do", "custom_cuda_extension", "replace", True,
      "for p in resample2d; do  # only the pure-python grid_sample version; correlation/channelnorm/bias_act/upfirdn2d need NPU rewrites",
      "every listed setup.py is a CUDAExtension; the vid2vid flow network imports correlation/channelnorm "
      "and fails later unless they are rewritten too (outside this probe)"),
    C("make all", "custom_cuda_extension", "removal", False, None,
      "GANcraft voxlib is a CUDA library; irrelevant to the vid2vid config and the failure is non-fatal here"),
])

E("im_config", "configs/projects/vid2vid/cityscapes/ampO1.yaml", "explicit_replacement",
  "NVlabs/imaginaire configs/projects/vid2vid/cityscapes/ampO1.yaml (amp on, fused_opt, cudnn flags)", [])

# ---------------------------------------------------------------------------------------------------
# clovaai/stargan-v2
# ---------------------------------------------------------------------------------------------------
E("sg_main", "main.py", "explicit_replacement",
  "clovaai/stargan-v2 main.py (argparse entry point, cudnn.benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("sg_solver", "core/solver.py", "explicit_replacement",
  "clovaai/stargan-v2 core/solver.py (Solver device, CheckpointIO with data_parallel=True)", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "on an NPU host the CUDA probe is False and the whole model silently trains on the CPU"),
    C("=CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets.ckpt'), data_parallel=True, **self.nets),",
      "distributed_framework", "replace", True,
      "CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets.ckpt'), data_parallel=False, **self.nets),",
      "consequence of removing nn.DataParallel in build_model: module.module no longer exists; keys of the "
      "released checkpoints still match"),
    C("=CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets_ema.ckpt'), data_parallel=True, **self.nets_ema),",
      "distributed_framework", "replace", True,
      "CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets_ema.ckpt'), data_parallel=False, **self.nets_ema),",
      "same, EMA networks (train mode)"),
    C("self.ckptios = [CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets_ema.ckpt')", "distributed_framework",
      "replace", True,
      "self.ckptios = [CheckpointIO(ospj(args.checkpoint_dir, '{:06d}_nets_ema.ckpt'), data_parallel=False, **self.nets_ema)]",
      "same, sample/eval mode"),
])

E("sg_model", "core/model.py", "explicit_replacement",
  "clovaai/stargan-v2 core/model.py (Generator/HighPass, build_model wraps every net in nn.DataParallel)", [
    C("generator = nn.DataParallel(Generator(", "distributed_framework", "replace", True,
      "generator = Generator(args.img_size, args.style_dim, w_hpf=args.w_hpf)", DP_NOTE),
    C("mapping_network = nn.DataParallel(MappingNetwork(", "distributed_framework", "replace", True,
      "mapping_network = MappingNetwork(args.latent_dim, args.style_dim, args.num_domains)", DP_NOTE),
    C("style_encoder = nn.DataParallel(StyleEncoder(", "distributed_framework", "replace", True,
      "style_encoder = StyleEncoder(args.img_size, args.style_dim, args.num_domains)", DP_NOTE),
    C("discriminator = nn.DataParallel(Discriminator(", "distributed_framework", "replace", True,
      "discriminator = Discriminator(args.img_size, args.num_domains)", DP_NOTE),
    C("fan = nn.DataParallel(FAN(", "distributed_framework", "replace", True,
      "fan = FAN(fname_pretrained=args.wing_path).eval()", DP_NOTE + " (FAN face-landmark net, w_hpf > 0)"),
    C("fan.get_heatmap = fan.module.get_heatmap", "distributed_framework", "removal", True, None,
      "the unwrapped FAN already has get_heatmap; fan.module raises AttributeError"),
])

E("sg_checkpoint", "core/checkpoint.py", "explicit_replacement",
  "clovaai/stargan-v2 core/checkpoint.py (CheckpointIO; CPU map_location fallback works on NPU)", [])

E("sg_data_loader", "core/data_loader.py", "explicit_replacement",
  "clovaai/stargan-v2 core/data_loader.py (pin_memory loaders, InputFetcher device)", [
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "performance only: whether DataLoader pins for the NPU without an explicit pin_memory_device depends "
      "on the torch/torch_npu version (unconfirmed)"),
    C("pin_memory=True, drop_last=drop_last)", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', drop_last=drop_last)", "same, eval loader (unconfirmed)"),
    C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
      "same, test loader (unconfirmed)"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "batches would stay on the CPU while the nets are on the NPU"),
])

E("sg_eval", "metrics/eval.py", "explicit_replacement",
  "clovaai/stargan-v2 metrics/eval.py (LPIPS/FID evaluation loop)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "inputs would be sent to the CPU while nets_ema lives on the NPU (device mismatch)"),
])

# ---------------------------------------------------------------------------------------------------
# pytorch/examples fast_neural_style
# ---------------------------------------------------------------------------------------------------
E("fns_neural_style", "fast_neural_style/neural_style/neural_style.py", "explicit_replacement",
  "pytorch/examples fast_neural_style/neural_style/neural_style.py (--cuda flag, Johnson et al.)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "train with --cuda 1"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if args.cuda else "cpu")', "eval/stylize"),
    C("if args.cuda and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.cuda and not torch.npu.is_available():",
      "otherwise --cuda 1 exits with 'cuda is not available' on every NPU host"),
])

# ---------------------------------------------------------------------------------------------------
# naoto0804/pytorch-AdaIN
# ---------------------------------------------------------------------------------------------------
E("adain_train", "train.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN train.py (module-level device = torch.device('cuda'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded CUDA device for the whole script"),
])

E("adain_test", "test.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN test.py (style transfer / interpolation / color preservation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "otherwise the VGG encoder and decoder silently run on the CPU of an NPU host"),
])

E("adain_function", "function.py", "explicit_replacement",
  "naoto0804/pytorch-AdaIN function.py (calc_mean_std, AdaIN, CORAL on CPU tensors)", [])
