"""Labels for probe429 (low-light enhancement / shadow removal, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter edits. `required` = with every other labelled line
already ported, would leaving this one line unchanged fail, compute something wrong, or silently do
the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: torch.npu / Tensor.npu only exist after torch_npu is imported "
               "(autoload only from torch_npu 2.5.1; these projects pin far older torch)")
DP_NOTE = ("torch.nn.DataParallel is listed as unsupported (✘) on Atlas A2/A3 in Ascend's 2.7.1 API list; "
           "its scatter goes through CUDA comm, so the wrapper is dropped (single NPU) — multi-device needs DDP+hccl")
MASK_TRUE = ("device mask chosen by the user (--gpu/--gpus/gpu_ids); CUDA_VISIBLE_DEVICES is ignored by the NPU "
             "runtime, so the job would silently land on NPU 0 instead of the requested device")
CKPT_NOTE = ("checkpoint written from CUDA tensors (state_dict of a .cuda() model); torch.load without "
             "map_location tries to restore them on a CUDA device and raises on an NPU host")

# ---------------------------------------------------------------- Zero-DCE
E("zdce_train", "Zero-DCE_code/lowlight_train.py", "explicit_replacement",
  "Li-Chongyi/Zero-DCE Zero-DCE_code/lowlight_train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "hard-coded '0' equals the device the code uses anyway; leaving the CUDA mask is inert on NPU"),
    C("DCE_net = model.enhance_net_nopool().cuda()", "tensor_to_device", "replace", True,
      "DCE_net = model.enhance_net_nopool().npu()", "model to NPU"),
    C("DCE_net.load_state_dict(torch.load(config.pretrain_dir))", "tensor_to_device", "replace", True,
      "DCE_net.load_state_dict(torch.load(config.pretrain_dir, map_location='cpu'))",
      CKPT_NOTE + " (snapshots/EpochNN.pth are saved from the cuda model)"),
    C("shuffle=True, num_workers=config.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=config.train_batch_size, shuffle=True, num_workers=config.num_workers, pin_memory=True, pin_memory_device='npu')",
      "performance only: without an NPU pin device the loader falls back to pageable memory (unconfirmed in knowledge)"),
    C("img_lowlight = img_lowlight.cuda()", "tensor_to_device", "replace", True,
      "img_lowlight = img_lowlight.npu()", "batch to NPU"),
])

E("zdce_test", "Zero-DCE_code/lowlight_test.py", "explicit_replacement",
  "Li-Chongyi/Zero-DCE Zero-DCE_code/lowlight_test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "hard-coded '0' equals the default device; inert either way"),
    C("data_lowlight = data_lowlight.cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "data_lowlight = data_lowlight.npu().unsqueeze(0)", "input to NPU"),
    C("DCE_net = model.enhance_net_nopool().cuda()", "tensor_to_device", "replace", True,
      "DCE_net = model.enhance_net_nopool().npu()", "model to NPU"),
    C("DCE_net.load_state_dict(torch.load('snapshots/Epoch99.pth'))", "tensor_to_device", "replace", True,
      "DCE_net.load_state_dict(torch.load('snapshots/Epoch99.pth', map_location='cpu'))",
      CKPT_NOTE + " (the released Epoch99.pth was saved from a cuda model)"),
])

E("zdce_loss", "Zero-DCE_code/Myloss.py", "explicit_replacement",
  "Li-Chongyi/Zero-DCE Zero-DCE_code/Myloss.py", [
    C("kernel_left = torch.FloatTensor([[0, 0, 0], [-1, 1, 0], [0, 0, 0]]).cuda()", "tensor_to_device", "replace", True,
      "kernel_left = torch.FloatTensor([[0, 0, 0], [-1, 1, 0], [0, 0, 0]]).npu().unsqueeze(0).unsqueeze(0)",
      "fixed difference kernel built on the device in __init__"),
    C("kernel_right = torch.FloatTensor([[0, 0, 0], [0, 1, -1], [0, 0, 0]]).cuda()", "tensor_to_device", "replace", True,
      "kernel_right = torch.FloatTensor([[0, 0, 0], [0, 1, -1], [0, 0, 0]]).npu().unsqueeze(0).unsqueeze(0)", "as above"),
    C("kernel_up = torch.FloatTensor([[0, -1, 0], [0, 1, 0], [0, 0, 0]]).cuda()", "tensor_to_device", "replace", True,
      "kernel_up = torch.FloatTensor([[0, -1, 0], [0, 1, 0], [0, 0, 0]]).npu().unsqueeze(0).unsqueeze(0)", "as above"),
    C("kernel_down = torch.FloatTensor([[0, 0, 0], [0, 1, 0], [0, -1, 0]]).cuda()", "tensor_to_device", "replace", True,
      "kernel_down = torch.FloatTensor([[0, 0, 0], [0, 1, 0], [0, -1, 0]]).npu().unsqueeze(0).unsqueeze(0)", "as above"),
    C("weight_diff = torch.max(torch.FloatTensor([1]).cuda()", "tensor_to_device", "replace", True,
      "weight_diff = torch.max(torch.FloatTensor([1]).npu() + 10000 * torch.min(org_pool - torch.FloatTensor([0.3]).npu(), torch.FloatTensor([0]).npu()), torch.FloatTensor([0.5]).npu())",
      "four scalar constants created on cuda inside forward; one line, one edit"),
    C("E_1 = torch.mul(torch.sign(enhance_pool - torch.FloatTensor([0.5]).cuda())", "tensor_to_device", "replace", True,
      "E_1 = torch.mul(torch.sign(enhance_pool - torch.FloatTensor([0.5]).npu()), enhance_pool - org_pool)", "scalar constant on device"),
    C("d = torch.mean(torch.pow(mean - torch.FloatTensor([self.mean_val]).cuda(), 2))", "tensor_to_device", "replace", True,
      "d = torch.mean(torch.pow(mean - torch.FloatTensor([self.mean_val]).npu(), 2))", "exposure target constant on device"),
])

E("zdce_model", "Zero-DCE_code/model.py", "explicit_replacement",
  "Li-Chongyi/Zero-DCE Zero-DCE_code/model.py (DCE-Net, device-agnostic)", [])

# ---------------------------------------------------------------- Retinex-Net (PyTorch port)
E("rnet_model", "model.py", "explicit_replacement",
  "aasharma90/RetinexNet_PyTorch model.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "train.py/predict.py never import torch themselves; model.py is the first torch import of both entry points"),
    C("input_low = Variable(torch.FloatTensor(torch.from_numpy(input_low))).cuda()", "tensor_to_device", "replace", True,
      "input_low = Variable(torch.FloatTensor(torch.from_numpy(input_low))).npu()", "numpy batch to NPU inside forward"),
    C("input_high = Variable(torch.FloatTensor(torch.from_numpy(input_high))).cuda()", "tensor_to_device", "replace", True,
      "input_high = Variable(torch.FloatTensor(torch.from_numpy(input_high))).npu()", "as above"),
    C("self.smooth_kernel_x = torch.FloatTensor([[0, 0], [-1, 1]]).view((1, 1, 2, 2)).cuda()", "tensor_to_device", "replace", True,
      "self.smooth_kernel_x = torch.FloatTensor([[0, 0], [-1, 1]]).view((1, 1, 2, 2)).npu()",
      "gradient kernel rebuilt on device at every call; kernel_y is derived from it"),
    C("ckpt_dict = torch.load(load_dir + load_ckpt)", "tensor_to_device", "replace", True,
      "ckpt_dict = torch.load(load_dir + load_ckpt, map_location='cpu')",
      CKPT_NOTE + " (save() stores DecomNet/RelightNet.state_dict() of the cuda model, incl. the shipped ckpts/)"),
])

E("rnet_train", "train.py", "explicit_replacement",
  "aasharma90/RetinexNet_PyTorch train.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id', MASK_TRUE),
    C("model = RetinexNet().cuda()", "tensor_to_device", "replace", True,
      "model = RetinexNet().npu()", "model to NPU"),
])

E("rnet_predict", "predict.py", "explicit_replacement",
  "aasharma90/RetinexNet_PyTorch predict.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id', MASK_TRUE),
    C("model = RetinexNet().cuda()", "tensor_to_device", "replace", True,
      "model = RetinexNet().npu()", "model to NPU"),
])

# ---------------------------------------------------------------- EnlightenGAN
E("egan_networks", "models/networks.py", "explicit_replacement",
  "VITA-Group/EnlightenGAN models/networks.py", [
    C("=assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())", "define_G asserts a CUDA device whenever gpu_ids is non-empty"),
    C("netG.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
      "netG.npu(gpu_ids[0])", "generator to NPU"),
    C("netG = torch.nn.DataParallel(netG, gpu_ids)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; checkpoint keys lose the 'module.' prefix (see egan_base_model load_network)"),
    C("assert(torch.cuda.is_available())  # discriminator", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())  # discriminator", "same assert in define_D"),
    C("netD.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
      "netD.npu(gpu_ids[0])", "discriminator to NPU"),
    C("netD = torch.nn.DataParallel(netD, gpu_ids)", "distributed_framework", "removal", True, None, DP_NOTE),
    C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()",
      "WGAN-GP path (--use_wgan); fails when that loss is selected"),
    C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
      "interpolates = interpolates.npu()", "WGAN-GP path"),
    C("grad_outputs=torch.ones(disc_interpolates.size()).cuda(),", "tensor_to_device", "replace", True,
      "grad_outputs=torch.ones(disc_interpolates.size()).npu(),", "WGAN-GP path"),
    C("vgg.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
      "vgg.npu(gpu_ids[0])", "perceptual-loss VGG16 to NPU"),
    C("vgg = torch.nn.DataParallel(vgg, gpu_ids)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; vgg16.weight keys have no 'module.' prefix so nothing else changes"),
])

E("egan_base_model", "models/base_model.py", "explicit_replacement",
  "VITA-Group/EnlightenGAN models/base_model.py", [
    C("self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor", "torch_cuda_api", "replace", True,
      "self.Tensor = torch.npu.FloatTensor if self.gpu_ids else torch.Tensor",
      "legacy typed-tensor constructor used for every input buffer and GAN label; torch.npu.FloatTensor is in torch_npu.npu.__all__"),
    C("if len(gpu_ids) and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(gpu_ids) and torch.npu.is_available():",
      "save_network moves the net to CPU first; with the CUDA check it would never move back and training continues on CPU weights vs NPU inputs"),
    C("network.cuda(device=gpu_ids[0])", "tensor_to_device", "replace", True,
      "network.npu(gpu_ids[0])", "move back to NPU after saving"),
    C("network.load_state_dict(torch.load(save_path))", "distributed_framework", "replace", True,
      "network.load_state_dict({k[7:] if k.startswith('module.') else k: v for k, v in torch.load(save_path).items()})",
      "released/earlier checkpoints were saved from the DataParallel wrapper ('module.' keys); with DP removed the keys must be stripped. The tensors themselves were saved via network.cpu(), so no map_location is needed"),
])

E("egan_single_model", "models/single_model.py", "explicit_replacement",
  "VITA-Group/EnlightenGAN models/single_model.py", [
    C("self.vgg_patch_loss.cuda()", "tensor_to_device", "replace", False, "self.vgg_patch_loss.npu()",
      "PerceptualLoss owns only a non-affine InstanceNorm (no params/buffers): .cuda() moves nothing and does not fail; changed for consistency"),
    C("self.vgg_loss.cuda()", "tensor_to_device", "replace", False, "self.vgg_loss.npu()", "as above"),
    C("self.fcn_loss.cuda()", "tensor_to_device", "replace", False, "self.fcn_loss.npu()",
      "semantic-loss path (--fcn), same parameter-free wrapper; not required"),
    C("std=self.opt.noise / 255.))", "torch_cuda_api", "replace", True,
      "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise / 255.))",
      "torch.cuda.FloatTensor constructor raises without CUDA (test(), --noise > 0)"),
    C("std=self.opt.noise/255.))", "torch_cuda_api", "replace", True,
      "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise/255.))",
      "same in predict()"),
    C("std=self.opt.noise / 255.0))", "torch_cuda_api", "replace", True,
      "self.noise = Variable(torch.npu.FloatTensor(self.real_A.size()).normal_(mean=0, std=self.opt.noise / 255.0))",
      "same in forward()"),
])

E("egan_base_options", "options/base_options.py", "explicit_replacement",
  "VITA-Group/EnlightenGAN options/base_options.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "train.py/predict.py have no torch import of their own; options are parsed first, so torch_npu goes here"),
    C("torch.cuda.set_device(self.opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.opt.gpu_ids[0])", "select the NPU named by --gpu_ids"),
])

E("egan_script", "scripts/script.py", "explicit_replacement",
  "VITA-Group/EnlightenGAN scripts/script.py (os.system launcher)", [])

# ---------------------------------------------------------------- SNR-aware low-light enhancement
E("snr_train", "train.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance train.py (mmsr/EDVR style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("def init_dist(backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(backend='hccl', **kwargs):", "NCCL does not exist on Ascend; HCCL"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on an NPU host -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "bind rank to NPU"),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", "resume path"),
    C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
      "map_location=f'npu:{device_id}')", "training-state optimizer tensors restored onto the NPU"),
])

E("snr_options", "options/options.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance options/options.py", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list",
      MASK_TRUE + " (gpu_ids comes from the YAML option file)"),
])

E("snr_base_model", "models/base_model.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance models/base_model.py", [
    C("self.device = torch.device('cuda' if opt['gpu_ids'] is not None else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['gpu_ids'] is not None else 'cpu')",
      "single device handle used by every .to(self.device) in the models"),
])

E("snr_video_model", "models/video_base_model4_m.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance models/video_base_model4_m.py", [
    C("self.netG = DistributedDataParallel(self.netG, device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", True,
      "self.netG = DistributedDataParallel(self.netG, device_ids=[torch.npu.current_device()])", "DDP device id"),
    C("self.netG = DataParallel(self.netG)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend; non-distributed runs use a single NPU",
      DP_NOTE + "; load_network already strips 'module.' so old checkpoints still load"),
])

E("snr_arch", "models/archs/low_light_transformer.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance models/archs/low_light_transformer.py (device-agnostic)", [])

E("snr_test", "test_LOLv1_v2_real.py", "explicit_replacement",
  "dvlab-research/SNR-Aware-Low-Light-Enhance test_LOLv1_v2_real.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.synchronize()  # make sure the H2D copies have landed", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure the H2D copies have landed",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()  # wait for the kernels before reading the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the kernels before reading the clock", "as above; also needed for a correct per-image time"),
])

# ---------------------------------------------------------------- Retinexformer (BasicSR/Restormer code base)
E("rfmr_train", "basicsr/train.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer basicsr/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", "automatic-resume path"),
    C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
      "map_location=f'npu:{device_id}')", "training state restored onto the NPU"),
    C("mini_gt_size, mini_batch_size * torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "mini_gt_size, mini_batch_size * torch.npu.device_count()))",
      "log message only: torch.cuda.device_count() returns 0 without raising"),
])

E("rfmr_dist", "basicsr/utils/dist_util.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer basicsr/utils/dist_util.py (BasicSR)", [
    C("def init_dist(launcher, backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(launcher, backend='hccl', **kwargs):", "HCCL instead of NCCL (pytorch launcher)"),
    C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", "bind rank to NPU"),
    C("num_gpus = torch.cuda.device_count()  # devices on this node", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()  # devices on this node", "slurm path"),
    C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(proc_id % num_gpus)", "slurm path"),
])

E("rfmr_prefetch", "basicsr/data/prefetch_dataloader.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer basicsr/data/prefetch_dataloader.py (BasicSR CUDAPrefetcher)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream()",
      "only reached with prefetch_mode: cuda (shipped configs use ~); fails as soon as the mode is selected"),
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "prefetch target device"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "side-stream H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "ordering between copy stream and compute stream"),
])

E("rfmr_base_model", "basicsr/models/base_model.py", "device_branch_or_abstraction",
  "caiyuanhao1998/Retinexformer basicsr/models/base_model.py (BasicSR)", [
    C("self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['num_gpu'] != 0 else 'cpu')", "model device handle"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "DDP device id"),
    C("net = DataParallel(net)", "distributed_framework", "replace", True,
      "net = net  # nn.DataParallel is unsupported on Ascend: use --launcher pytorch (DDP/hccl) for several NPUs",
      DP_NOTE + " (reached when num_gpu > 1 without a launcher)"),
])

E("rfmr_ir_model", "basicsr/models/image_restoration_model.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer basicsr/models/image_restoration_model.py (ImageCleanModel)", [
    C("self.optimizer_g = torch.optim.Adam(optim_params, **train_opt['optim_g'])", "fused_optimizer", "replace", False,
      "self.optimizer_g = torch_npu.optim.NpuFusedAdam(optim_params, **train_opt['optim_g'])",
      "performance only (msFmkTransplt advice); the shipped LOL configs use Adam"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "per-image cache release during validation; torch.cuda.empty_cache is a silent no-op when CUDA is uninitialised, so only memory headroom is affected"),
])

E("rfmr_arch", "basicsr/models/archs/RetinexFormer_arch.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer basicsr/models/archs/RetinexFormer_arch.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "only for the __main__ FLOPs self-test, which runs the file standalone"),
    C("model = RetinexFormer(stage=1, n_feat=40, num_blocks=[1, 2, 2]).cuda()", "tensor_to_device", "replace", True,
      "model = RetinexFormer(stage=1, n_feat=40, num_blocks=[1, 2, 2]).npu()", "__main__ FLOPs self-test"),
    C("inputs = torch.randn((1, 3, 256, 256)).cuda()", "tensor_to_device", "replace", True,
      "inputs = torch.randn((1, 3, 256, 256)).npu()", "__main__ FLOPs self-test"),
])

E("rfmr_setup", "setup.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer setup.py (BasicSR ops, installed with --no_cuda_ext)", [])

E("rfmr_test", "Enhancement/test_from_dataset.py", "explicit_replacement",
  "caiyuanhao1998/Retinexformer Enhancement/test_from_dataset.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list", MASK_TRUE),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True,
      "model_restoration.npu()", "model to NPU"),
    C("model_restoration = nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None, DP_NOTE),
    C("=model_restoration.eval()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "every test image has its own (padded) size: dynamic shapes; perf advice from msFmkTransplt, not needed for correctness"),
    C("=torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True,
      "torch.npu.ipc_collect()", "ipc_collect lazily initialises CUDA and raises on an NPU host (unlike empty_cache)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "silent no-op when CUDA is uninitialised; memory headroom only"),
    C("input_ = data_batch['lq']", "tensor_to_device", "replace", True,
      "input_ = data_batch['lq'].npu()",
      "upstream left the SID/SMID/SDSD batch on the CPU and relied on nn.DataParallel's scatter to move it to cuda:0; once DP is removed the batch must be moved explicitly"),
    C("torch.cuda.ipc_collect()  # per-image", "torch_cuda_api", "replace", True,
      "torch.npu.ipc_collect()  # per-image", "as above (LOL/FiveK branch)"),
    C("torch.cuda.empty_cache()  # per-image", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # per-image", "no-op on NPU host; memory only"),
    C("input_ = img.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input_ = img.unsqueeze(0).npu()", "input to NPU"),
])

E("rfmr_yml", "Options/RetinexFormer_LOL_v1.yml", "explicit_replacement",
  "caiyuanhao1998/Retinexformer Options/RetinexFormer_LOL_v1.yml", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "with --launcher slurm, train.py passes dist_params to init_dist, so this explicit backend overrides the ported 'hccl' default"),
])

E("rfmr_sh", "train_multigpu.sh", "explicit_replacement",
  "caiyuanhao1998/Retinexformer train_multigpu.sh / BasicSR scripts/dist_train.sh", [
    C("#!/usr/bin/env bash", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; host-dependent (often already sourced by the login shell or image), so not counted as required"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "masks devices 0-3, which the 4 ranks select anyway via set_device(rank % num_gpus): inert, not required"),
])

# ---------------------------------------------------------------- ShadowFormer (Uformer code base)
E("sfmr_train", "train.py", "explicit_replacement",
  "GuoLanqing/ShadowFormer train.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.gpu', MASK_TRUE),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(1234)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(1234)",
      "torch.manual_seed(1234) on the line above already seeds registered accelerator generators (unconfirmed in knowledge); the cuda call is queued and never fails"),
    C("model_restoration = torch.nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; utils.load_checkpoint already strips 'module.' so resumed/released weights still load"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()", "model to NPU"),
    C("criterion = CharbonnierLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = CharbonnierLoss().npu()",
      "CharbonnierLoss holds only a Python float eps: .cuda() moves nothing and does not fail"),
    C("num_workers=opt.train_workers, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
      "num_workers=opt.train_workers, pin_memory=True, pin_memory_device='npu', drop_last=False)",
      "performance only (unconfirmed in knowledge)"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True,
      "loss_scaler = NativeScaler(device='npu')  # timm<0.9: wrap torch.npu.amp.GradScaler() in the same __call__",
      "timm's NativeScaler builds torch.cuda.amp.GradScaler(), which disables itself without CUDA: fp16 autocast would then train with no loss scaling (silent underflow). Whether a given timm release takes a device kwarg is unconfirmed; the portable fix is a local scaler over torch.npu.amp.GradScaler"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op without CUDA; memory only"),
    C("target = data[0].cuda()", "tensor_to_device", "replace", True, "target = data[0].npu()", "batch to NPU"),
    C("input_ = data[1].cuda()", "tensor_to_device", "replace", True, "input_ = data[1].npu()", "batch to NPU"),
    C("mask = data[2].cuda()", "tensor_to_device", "replace", True, "mask = data[2].npu()", "shadow mask to NPU"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "torch.cuda.amp.autocast disables itself (warning) without CUDA: mixed precision silently lost on NPU"),
    C("target = data_val[0].cuda()", "tensor_to_device", "replace", True, "target = data_val[0].npu()", "val batch"),
    C("input_ = data_val[1].cuda()", "tensor_to_device", "replace", True, "input_ = data_val[1].npu()", "val batch"),
    C("mask = data_val[2].cuda()", "tensor_to_device", "replace", True, "mask = data_val[2].npu()", "val mask"),
    C("with torch.cuda.amp.autocast():  # fp16 eval, same as training", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # fp16 eval, same as training", "as above (validation)"),
    C("torch.cuda.empty_cache()  # drop eval activations", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop eval activations", "no-op without CUDA; memory only"),
])

E("sfmr_test", "test.py", "explicit_replacement",
  "GuoLanqing/ShadowFormer test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus', MASK_TRUE),
    C("model_restoration = torch.nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; load_checkpoint falls back to stripping 'module.'"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()", "model to NPU"),
    C("rgb_noisy = data_test[1].cuda()", "tensor_to_device", "replace", True, "rgb_noisy = data_test[1].npu()", "input"),
    C("mask = data_test[2].cuda()", "tensor_to_device", "replace", True, "mask = data_test[2].npu()", "shadow mask"),
])

E("sfmr_model_utils", "utils/model_utils.py", "explicit_replacement",
  "GuoLanqing/ShadowFormer utils/model_utils.py (Uformer)", [
    C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(weights, map_location='cpu')",
      CKPT_NOTE + " (train.py saves model_restoration.state_dict() of the cuda DataParallel model)"),
    C("checkpoint = torch.load(weights, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(weights, map_location='npu:0')", "explicit cuda map_location"),
    C("ckpt = torch.load(weights)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(weights, map_location='cpu')",
      "only the epoch is read, but the whole checkpoint (cuda tensors) is deserialised first"),
    C("checkpoint = torch.load(weights, map_location=torch.device('cuda'))", "device_type", "replace", True,
      "checkpoint = torch.load(weights, map_location=torch.device('npu'))", "optimizer state onto NPU"),
])

E("sfmr_dataset_utils", "utils/dataset_utils.py", "explicit_replacement",
  "GuoLanqing/ShadowFormer utils/dataset_utils.py (Uformer MixUp_AUG)", [
    C("lam = self.dist.rsample((bs, 1)).view(-1, 1, 1, 1).cuda()", "tensor_to_device", "replace", True,
      "lam = self.dist.rsample((bs, 1)).view(-1, 1, 1, 1).npu()",
      "mix-up weights sampled on CPU and moved to the device; used from epoch 6 on"),
])

E("sfmr_losses", "losses.py", "device_branch_or_abstraction",
  "GuoLanqing/ShadowFormer losses.py (MPRNet/Uformer losses)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "EdgeLoss: on an NPU host the CUDA check is False, the kernel silently stays on the CPU and conv2d with NPU images fails; EdgeLoss is not used by the default train.py"),
    C("self.kernel = self.kernel.cuda()", "tensor_to_device", "replace", True,
      "self.kernel = self.kernel.npu()", "paired with the check above"),
])

E("sfmr_model", "model.py", "explicit_replacement",
  "GuoLanqing/ShadowFormer model.py (shadow-interaction window attention, device-agnostic)", [])

E("sfmr_reqs", "requirements.txt", "explicit_replacement",
  "GuoLanqing/ShadowFormer requirements (pip list in README)", [
    C("torch>=1.7.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10  # pin torch==2.1.0 to match",
      "every ported entry point imports torch_npu; the wheel must match the torch version exactly"),
])
