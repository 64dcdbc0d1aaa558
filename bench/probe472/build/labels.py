"""Labels for probe472 (image and video deblurring, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` uses the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401  registers the 'npu' device and torch.npu"
DP_NOTE = ("torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's PyTorch 2.7.1 API list "
           "(msFmkTransplt: 'use DDP'); on an NPU host DataParallel picks the privateuse1 device and fails in "
           "device-property balance checks / comm.scatter")
PIN_NOTE = ("performance only: before torch 2.6 the DataLoader pins only when CUDA is available unless "
            "pin_memory_device is given, so pinning is silently skipped on an NPU host (unconfirmed for every "
            "torch/torch_npu pair)")
LOAD_NOTE = ("checkpoint holds CUDA tensors (saved from a GPU run); torch.load without map_location raises "
             "'Attempting to deserialize object on a CUDA device' on a host without CUDA")

# ---------------------------------------------------------------- DeblurGAN-v2 (VITA-Group/DeblurGANv2)
E("dgan_train", "train.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 train.py (Trainer with GANFactory, yaml config, warm-up unfreeze)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script; torch.npu / .npu() need torch_npu loaded (autoload only from torch_npu 2.5.1)"),
    C("self.netG.module.unfreeze()", "distributed_framework", "replace", True,
      "self.netG.unfreeze()",
      "follows from dropping nn.DataParallel in models/networks.py: the bare generator has no .module; hit at "
      "epoch == warmup_num (3 in the shipped config)"),
    C("self.netG.cuda()", "tensor_to_device", "replace", True, "self.netG.npu()",
      "Module.cuda() fails on a host without CUDA"),
])

E("dgan_networks", "models/networks.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 models/networks.py (get_generator / get_discriminator wrap everything in nn.DataParallel)", [
    C("return nn.DataParallel(model_g)", "distributed_framework", "replace", True, "return model_g",
      DP_NOTE + "; single-NPU generator (checkpoint keys lose the 'module.' prefix, handled in predict.py)"),
    C("model_d = nn.DataParallel(model_d)", "distributed_framework", "removal", True, None,
      DP_NOTE + " (patch_gan branch)"),
    C("patch_gan = nn.DataParallel(patch_gan)", "distributed_framework", "removal", True, None,
      DP_NOTE + " (double_gan, the default d_name)"),
    C("full_gan = nn.DataParallel(full_gan)", "distributed_framework", "removal", True, None,
      DP_NOTE + " (double_gan, the default d_name)"),
    C("model_d = nn.DataParallel(MultiScaleDiscriminator(", "distributed_framework", "replace", True,
      "model_d = MultiScaleDiscriminator(norm_layer=get_norm_layer(norm_type=model_config['norm_layer']))",
      DP_NOTE + " (multi_scale branch)"),
])

E("dgan_losses", "models/losses.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 models/losses.py (VGG perceptual loss, GANLoss, WGAN-GP penalty)", [
    C("cnn = cnn.cuda()", "tensor_to_device", "replace", True, "cnn = cnn.npu()",
      "VGG19 features for the perceptual loss must live on the NPU with the generator output"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      ".cuda() raises on a host without CUDA even for the empty Sequential"),
    C("return target_tensor.cuda()", "tensor_to_device", "replace", True, "return target_tensor.npu()",
      "label tensors are built as CPU torch.FloatTensor and moved per call"),
    C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()",
      "WGAN-GP interpolation weight"),
    C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
      "interpolates = interpolates.npu()",
      "redundant after alpha/real/fake are on the NPU, but .cuda() itself raises without CUDA"),
    C("grad_outputs=torch.ones(disc_interpolates.size()).cuda(),", "tensor_to_device", "replace", True,
      "grad_outputs=torch.ones(disc_interpolates.size()).npu(),",
      "grad_outputs must be on the device of disc_interpolates"),
])

E("dgan_models", "models/models.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 models/models.py (DeblurModel.get_input, PSNR/SSIM on host)", [
    C("inputs, targets = inputs.cuda(), targets.cuda()", "tensor_to_device", "replace", True,
      "inputs, targets = inputs.npu(), targets.npu()",
      "every training/validation batch enters the device here"),
])

E("dgan_adv", "adversarial_trainer.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 adversarial_trainer.py (NoGAN / SingleGAN / DoubleGAN factories)", [
    C("self.net_d = self.net_d.cuda()", "tensor_to_device", "replace", True,
      "self.net_d = self.net_d.npu()", "patch_gan / multi_scale discriminator"),
    C("self.patch_d = net_d['patch'].cuda()", "tensor_to_device", "replace", True,
      "self.patch_d = net_d['patch'].npu()", "double_gan (default config)"),
    C("self.full_d = net_d['full'].cuda()", "tensor_to_device", "replace", True,
      "self.full_d = net_d['full'].npu()", "double_gan (default config)"),
])

E("dgan_predict", "predict.py", "explicit_replacement",
  "VITA-Group/DeblurGANv2 predict.py (Predictor for images and videos, Fire CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "inference entry script"),
    C("model.load_state_dict(torch.load(weights_path)['model'])", "tensor_to_device", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(weights_path, map_location='cpu')['model'].items()})",
      LOAD_NOTE + "; the released fpn_inception.h5 was saved from the DataParallel wrapper, so the 'module.' "
      "prefix must go now that get_generator returns the bare model"),
    C("self.model = model.cuda()", "tensor_to_device", "replace", True, "self.model = model.npu()", ""),
    C("inputs = [img.cuda()]", "tensor_to_device", "replace", True, "inputs = [img.npu()]",
      "the optional mask is never moved upstream either (ignore_mask=True by default); left as is"),
])

E("dgan_requirements", "requirements.txt", "explicit_replacement",
  "VITA-Group/DeblurGANv2 requirements.txt", [
    C("torch==1.0.1", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu build exists for torch 1.0.1; pin a matrix pair (torch 2.1.0 + torch-npu==2.1.0.post12, "
      "CANN 8.1.RC1) and add the torch-npu line below it - one label for the pair; torchvision then resolves "
      "to 0.16.x"),
])

# ---------------------------------------------------------------- MPRNet (swz30/MPRNet, Deblurring/)
E("mpr_train", "Deblurring/train.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/train.py (module-level script, GPU list from training.yml, DataParallel)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = gpus',
      "device selection from training.yml GPU list; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "inserted after the env var is set, before any device use"),
    C("torch.cuda.manual_seed_all(1234)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(1234)",
      "torch.manual_seed(1234) on the line above already seeds the privateuse1 device on torch >= 2.1; "
      "torch.cuda.manual_seed_all is lazily queued and silent without CUDA"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()", ""),
    C("device_ids = [i for i in range(torch.cuda.device_count())]", "torch_cuda_api", "replace", False,
      "device_ids = [i for i in range(torch.npu.device_count())]",
      "with DataParallel dropped the list only feeds the len() check; torch.cuda.device_count() returns 0 "
      "silently"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if torch.npu.device_count() > 1:", "log message only"),
    C("model_restoration = nn.DataParallel(model_restoration, device_ids = device_ids)", "distributed_framework",
      "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend; multi-NPU training needs a DDP rewrite",
      DP_NOTE + "; once device_ids is ported this branch is taken on any multi-NPU host"),
    C("num_workers=16, drop_last=False, pin_memory=True", "pin_memory", "replace", False,
      "train_loader = DataLoader(dataset=train_dataset, batch_size=opt.OPTIM.BATCH_SIZE, shuffle=True, num_workers=16, drop_last=False, pin_memory=True, pin_memory_device='npu')",
      PIN_NOTE),
    C("num_workers=8, drop_last=False, pin_memory=True", "pin_memory", "replace", False,
      "val_loader = DataLoader(dataset=val_dataset, batch_size=16, shuffle=False, num_workers=8, drop_last=False, pin_memory=True, pin_memory_device='npu')",
      PIN_NOTE),
    C("target = data[0].cuda()", "tensor_to_device", "replace", True, "target = data[0].npu()", ""),
    C("input_ = data[1].cuda()", "tensor_to_device", "replace", True, "input_ = data[1].npu()", ""),
    C("target = data_val[0].cuda()", "tensor_to_device", "replace", True, "target = data_val[0].npu()", ""),
    C("input_ = data_val[1].cuda()", "tensor_to_device", "replace", True, "input_ = data_val[1].npu()", ""),
])

E("mpr_test", "Deblurring/test.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/test.py (--gpus -> CUDA_VISIBLE_DEVICES, pad to multiple of 8)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "--gpus picks the card; unported, --gpus 1 silently runs on device 0"),
    C("=model_restoration.cuda()", "tensor_to_device", "replace", True, "model_restoration.npu()", ""),
    C("model_restoration = nn.DataParallel(model_restoration)", "distributed_framework", "removal", True, None,
      DP_NOTE + "; load_checkpoint already strips 'module.' so the bare model is fine"),
    C("pin_memory=True)", "pin_memory", "replace", False,
      "test_loader  = DataLoader(dataset=test_dataset, batch_size=1, shuffle=False, num_workers=4, drop_last=False, pin_memory=True, pin_memory_device='npu')",
      PIN_NOTE),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", True, "torch.npu.ipc_collect()",
      "ipc_collect lazily initialises CUDA and raises without it; torch.npu.ipc_collect exists in torch_npu"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a silent no-op when CUDA is not initialised; freeing the NPU cache is hygiene only"),
    C("input_    = data_test[0].cuda()", "tensor_to_device", "replace", True, "input_    = data_test[0].npu()", ""),
])

E("mpr_losses", "Deblurring/losses.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/losses.py (CharbonnierLoss, EdgeLoss with a fixed Gaussian kernel)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unported, the guard is False on an NPU host and the kernel stays on the CPU -> conv2d device mismatch "
      "in the edge loss"),
    C("self.kernel = self.kernel.cuda()", "tensor_to_device", "replace", True, "self.kernel = self.kernel.npu()", ""),
])

E("mpr_arch", "Deblurring/MPRNet.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/MPRNet.py (CAB / SAM / ORSNet multi-stage network)", [])

E("mpr_model_utils", "Deblurring/utils/model_utils.py", "explicit_replacement",
  "swz30/MPRNet Deblurring/utils/model_utils.py (checkpoint helpers)", [
    C("checkpoint = torch.load(weights)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(weights, map_location='cpu')",
      LOAD_NOTE + " (model_deblurring.pth and resumed checkpoints)"),
    C('epoch = torch.load(weights)["epoch"]', "tensor_to_device", "replace", True,
      'epoch = torch.load(weights, map_location=\'cpu\')["epoch"]',
      "loads the whole GPU checkpoint just for the epoch number; fails the same way"),
    C("optimizer.load_state_dict(torch.load(weights)['optimizer'])", "tensor_to_device", "replace", True,
      "optimizer.load_state_dict(torch.load(weights, map_location='cpu')['optimizer'])",
      "Adam state tensors are CUDA tensors; Optimizer.load_state_dict moves them to the params' device"),
])

# ---------------------------------------------------------------- DeepDeblur-PyTorch (SeungjunNah/DeepDeblur-PyTorch)
E("dd_option", "src/option.py", "device_branch_or_abstraction",
  "SeungjunNah/DeepDeblur-PyTorch src/option.py (--device_type/--dist_backend flags, setup())", [
    C("choices=('cpu', 'cuda'), default='cuda'", "device_type", "replace", True,
      "group_device.add_argument('--device_type', type=str, choices=('cpu', 'npu'), default='npu', help='device to run models')",
      "the whole project keys off args.device_type; torch.device('npu', idx) then flows everywhere"),
    C("default='nccl'", "dist_backend", "replace", True,
      "group_device.add_argument('--dist_backend', type=str, default='hccl', help='distributed backend')",
      "--distributed runs init_process_group(args.dist_backend); NCCL does not exist on Ascend"),
    C("if args.device_type == 'cuda' and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if args.device_type == 'npu' and not torch.npu.is_available():",
      "sanity check only: once device_type is 'npu' the unported test is simply False"),
    C("=if args.device_type == 'cuda':", "device_type", "replace", True, "if args.device_type == 'npu':",
      "unported, set_device is skipped, so every DDP rank's HCCL communicator binds to NPU 0"),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)", ""),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "torch.manual_seed(args.seed) above already seeds the NPU generator (torch >= 2.1)"),
])

E("dd_main", "src/main.py", "device_branch_or_abstraction",
  "SeungjunNah/DeepDeblur-PyTorch src/main.py (main_worker)", [
    C("from utils import interact", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "must precede `from option import args`, which builds torch.device('npu', idx) at setup()"),
])

E("dd_train", "src/train.py", "device_branch_or_abstraction",
  "SeungjunNah/DeepDeblur-PyTorch src/train.py (Trainer with amp.GradScaler/autocast)", [
    C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
      "one import covers amp.GradScaler(init_scale, enabled) and amp.autocast(enabled); torch.cuda.amp on an "
      "NPU host warns and disables itself, so --amp true would silently train in fp32"),
])

E("dd_model", "src/model/__init__.py", "device_branch_or_abstraction",
  "SeungjunNah/DeepDeblur-PyTorch src/model/__init__.py (Model.parallelize: DDP or DataParallel)", [
    C("if self.args.device_type == 'cuda':", "distributed_framework", "replace", True,
      "if self.args.device_type == 'npu' and self.args.distributed:  # nn.DataParallel is unsupported on Ascend",
      "unported, --distributed runs never wrap DDP (ranks only sync once at epoch 0 and then drift); the "
      "extra condition also keeps the non-distributed path off nn.DataParallel. " + DP_NOTE),
])

E("dd_data", "src/data/__init__.py", "device_branch_or_abstraction",
  "SeungjunNah/DeepDeblur-PyTorch src/data/__init__.py (DistributedSampler / DistributedEvalSampler loaders)", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
])

# ---------------------------------------------------------------- MIMO-UNet (chosj95/MIMO-UNet)
E("mimo_main", "main.py", "device_branch_or_abstraction",
  "chosj95/MIMO-UNet main.py (build_net, cudnn.benchmark, train/test switch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unported, the model silently stays on the CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ""),
])

E("mimo_train", "train.py", "device_branch_or_abstraction",
  "chosj95/MIMO-UNet train.py (multi-scale L1 + FFT loss)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "unported, batches go to the CPU while main.py moved the model to the NPU"),
    C("state = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "state = torch.load(args.resume, map_location='cpu')", LOAD_NOTE + " (--resume model.pkl)"),
])

E("mimo_eval", "eval.py", "device_branch_or_abstraction",
  "chosj95/MIMO-UNet eval.py (GoPro test with warm-up and timing)", [
    C("state_dict = torch.load(args.test_model)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.test_model, map_location='cpu')", LOAD_NOTE + " (weights/MIMO-UNet.pkl)"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", ""),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; nothing cached yet at this point anyway"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; also needed for the per-image runtime to mean anything on an async NPU stream"),
])

E("mimo_data", "data/data_load.py", "explicit_replacement",
  "chosj95/MIMO-UNet data/data_load.py (train/test/valid dataloaders, DeblurDataset)", [
    C("=pin_memory=True", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu'", PIN_NOTE),
    C("=pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
])

E("mimo_arch", "models/MIMOUNet.py", "explicit_replacement",
  "chosj95/MIMO-UNet models/MIMOUNet.py (MIMO-UNet / MIMO-UNet+)", [])

# ---------------------------------------------------------------- Stripformer (pp00704/Stripformer)
E("strip_train", "train_Stripformer_gopro.py", "explicit_replacement",
  "pp00704/Stripformer train_Stripformer_gopro.py (DeblurGAN-v2-style trainer, resume from last_*.pth)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("training_state = (torch.load('last_Stripformer_gopro.pth'))", "tensor_to_device", "replace", True,
      "training_state = (torch.load('last_Stripformer_gopro.pth', map_location='cpu'))",
      LOAD_NOTE + " (model, optimizer and scheduler state)"),
    C("pretrained = torch.load('./pretrained/Stripformer_pretrained.pth')", "tensor_to_device", "replace", True,
      "pretrained = torch.load('./pretrained/Stripformer_pretrained.pth', map_location='cpu')",
      LOAD_NOTE + " (GoPro stage starts from the pre-trained weights)"),
    C("self.netG.cuda()", "tensor_to_device", "replace", True, "self.netG.npu()", ""),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed(seed) on the line above already seeds the NPU generator (torch >= 2.1)"),
])

E("strip_predict", "predict_GoPro_test_results.py", "explicit_replacement",
  "pp00704/Stripformer predict_GoPro_test_results.py (tab-indented test script with runtime report)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("model.load_state_dict(torch.load(args.weights_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.weights_path, map_location='cpu'))", LOAD_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("img_tensor = Variable(img_tensor.unsqueeze(0)).cuda()", "tensor_to_device", "replace", True,
      "img_tensor = Variable(img_tensor.unsqueeze(0)).npu()", "warm-up loop"),
    C("img_tensor = img_tensor.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "img_tensor = img_tensor.unsqueeze(0).npu()", "timed loop"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; keeps the reported CNN runtime honest on the NPU"),
])

E("strip_losses", "models/losses.py", "explicit_replacement",
  "pp00704/Stripformer models/losses.py (Charbonnier + edge + VGG contrastive loss)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "same EdgeLoss pattern as MPRNet: unported, the Gaussian kernel stays on the CPU"),
    C("self.kernel = self.kernel.cuda()", "tensor_to_device", "replace", True, "self.kernel = self.kernel.npu()", ""),
    C("self.vgg = Vgg19().cuda()", "tensor_to_device", "replace", True, "self.vgg = Vgg19().npu()",
      "contrastive loss VGG19"),
])

E("strip_arch", "models/Stripformer.py", "explicit_replacement",
  "pp00704/Stripformer models/Stripformer.py (intra/inter strip attention)", [])

# ---------------------------------------------------------------- EDVR (xinntao/EDVR, pre-BasicSR codes/ layout)
E("edvr_dcn", "codes/models/archs/dcn/deform_conv.py", "kernel_rewrite",
  "xinntao/EDVR codes/models/archs/dcn/deform_conv.py (mmdet-style DCNv1/DCNv2 autograd Functions over a CUDA extension)", [
    C("from . import deform_conv_cuda", "custom_cuda_extension", "replace", True,
      "import torchvision, torchvision_npu  # noqa: F401  NPU deform_conv2d kernel replaces the deform_conv_cuda extension",
      "the nvcc-built deform_conv_cuda cannot exist on Ascend; ImportError here makes EDVR_arch raise "
      "'Failed to import DCNv2 module.'. torchvision_npu lists deform_conv2d as supported"),
    C("return modulated_deform_conv(x, offset, mask, self.weight, self.bias, self.stride, self.padding,",
      "custom_cuda_extension", "replace", True,
      "return torchvision.ops.deform_conv2d(x, offset, self.weight, self.bias, self.stride, self.padding,",
      "ModulatedDeformConvPack.forward is the only path PCD_Align uses (extra_offset_mask=True); torchvision's "
      "modulated deform_conv2d takes the same offset/mask layout (BasicSR switches between the two with the "
      "same weights) and has autograd, so the custom Function/backward is bypassed"),
    C("self.dilation, self.groups, self.deformable_groups)", "custom_cuda_extension", "replace", True,
      "self.dilation, mask)",
      "continuation of the call above; groups / offset groups are inferred from weight and offset shapes "
      "(EDVR uses groups=1, deformable_groups=8)"),
])

E("edvr_dcn_setup", "codes/models/archs/dcn/setup.py", "explicit_replacement",
  "xinntao/EDVR codes/models/archs/dcn/setup.py (CUDAExtension build of deform_conv_cuda)", [])

E("edvr_dcn_cpp", "codes/models/archs/dcn/src/deform_conv_cuda.cpp", "explicit_replacement",
  "xinntao/EDVR codes/models/archs/dcn/src/deform_conv_cuda.cpp (host side of the DCN CUDA extension, PYBIND11_MODULE)", [])

E("edvr_arch", "codes/models/archs/EDVR_arch.py", "explicit_replacement",
  "xinntao/EDVR codes/models/archs/EDVR_arch.py (Predeblur, PCD alignment with DCN, TSA fusion)", [])

E("edvr_train", "codes/train.py", "explicit_replacement",
  "xinntao/EDVR codes/train.py (init_dist, resume, distributed video validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("def init_dist(backend='nccl', **kwargs):", "dist_backend", "replace", True,
      "def init_dist(backend='hccl', **kwargs):", "init_dist() is called without arguments"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "returns 0 without CUDA -> ZeroDivisionError in rank % num_gpus"),
    C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % num_gpus)", ""),
    C("device_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device_id = torch.npu.current_device()", ""),
    C("map_location=lambda storage, loc: storage.cuda(device_id))", "tensor_to_device", "replace", True,
      "map_location='npu:{}'.format(device_id))",
      "the lambda calls storage.cuda(); a device string is the safe explicit NPU form"),
    C("=device='cuda')", "device_type", "replace", True, "device='npu')",
      "PSNR buffers are reduced with dist.reduce over HCCL, so they must be NPU tensors"),
])

E("edvr_video_model", "codes/models/Video_base_model.py", "explicit_replacement",
  "xinntao/EDVR codes/models/Video_base_model.py (DDP / DataParallel wrapping, Charbonnier loss)", [
    C("device_ids=[torch.cuda.current_device()]", "torch_cuda_api", "replace", True,
      "self.netG = DistributedDataParallel(self.netG, device_ids=[torch.npu.current_device()])", ""),
    C("self.netG = DataParallel(self.netG)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is unsupported on Ascend; non-distributed runs use the bare network",
      DP_NOTE + "; save_network/load_network/print_network already handle an unwrapped module"),
])

E("edvr_base_model", "codes/models/base_model.py", "explicit_replacement",
  "xinntao/EDVR codes/models/base_model.py (device, save/load network, training state)", [
    C("self.device = torch.device('cuda' if opt['gpu_ids'] is not None else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if opt['gpu_ids'] is not None else 'cpu')",
      "every .to(self.device) in the video model follows this"),
])

E("edvr_options", "codes/options/options.py", "explicit_replacement",
  "xinntao/EDVR codes/options/options.py (YAML option parsing, exports the GPU list)", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = gpu_list", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = gpu_list",
      "gpu_ids from the option file select the cards; assumes the NPU runtime is not initialised before "
      "parse() runs (torch_npu initialises lazily - unconfirmed for every version)"),
])

E("edvr_test", "codes/test_Vid4_REDS4_with_GT.py", "explicit_replacement",
  "xinntao/EDVR codes/test_Vid4_REDS4_with_GT.py (REDS4 deblur / Vid4 SR evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')", ""),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "env_var", "replace", False,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = '0'",
      "pins physical card 0, which is also the default device; unported, all NPUs stay visible but npu:0 is "
      "still used, so nothing goes wrong"),
])

E("edvr_run", "codes/run_scripts.sh", "explicit_replacement",
  "xinntao/EDVR codes/run_scripts.sh (torch.distributed.launch commands)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; required only if the login shell does not already source it"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "under `set -e` a missing nvidia-smi aborts the whole script before training starts"),
    C("CUDA_VISIBLE_DEVICES=4,5,6,7 python", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=4,5,6,7 python -m torch.distributed.launch --nproc_per_node=4 --master_port=4322 train.py -opt options/train/train_EDVR_L_deblur_REDS.yml --launcher pytorch",
      "options.parse() overwrites the variable in-process from gpu_ids (upstream and port alike), so the shell "
      "value never takes effect; port for consistency"),
])
