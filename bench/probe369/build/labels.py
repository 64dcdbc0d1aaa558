# Labels for probe369 (face anti-spoofing / presentation-attack detection, CUDA -> Ascend NPU).
# Target stack assumed throughout: torch 2.1.0 + torch_npu 2.1.0.post10 (CANN 8.0.0), i.e. a stack on
# which `import torch_npu` is still mandatory (device-backend autoload only arrived with 2.5.1).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


NOPARAM = ("loss module without parameters or buffers: Module.cuda() only walks params/buffers, so on an NPU host "
           "this is a silent no-op rather than a failure; ported for hygiene only")
TORCH_NPU = "entry script on torch 2.1: torch.npu / tensor.npu() only exist after `import torch_npu`"
SET_ENV = ("launchers need CANN's environment; not required when the container/login shell already sources it "
           "(unconfirmed for the target hosts)")

# ----------------------------------------------------------------------------------------------------------
# CDCN / CDCN++ (ZitongYu/CDCN, CVPR 2020) -- single-GPU depth-map supervision, `.cuda()` chains everywhere
# ----------------------------------------------------------------------------------------------------------
E("cdcn_train", "CVPR2020_paper_codes/train_CDCNpp_model1.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/train_CDCNpp_model1.py (OULU-NPU P1 training/val/test loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C("kernel_filter = torch.from_numpy(kernel_filter.astype(np.float32)).float().cuda()", "tensor_to_device",
      "replace", True, "kernel_filter = torch.from_numpy(kernel_filter.astype(np.float32)).float().npu()",
      "contrast-depth kernel is built on every loss call; .cuda() raises on a host without CUDA"),
    C("criterion_MSE = nn.MSELoss().cuda()", "tensor_to_device", "replace", False,
      "criterion_MSE = nn.MSELoss().npu()", NOPARAM),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "%d" % (args.gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "%d" % (args.gpu)',
      "--gpu picks the card; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the job silently lands on "
      "device 0. Set before the first device call; whether a value set after `import torch_npu` is still honoured "
      "is unconfirmed (safer: export it in the launcher)"),
    C("model = model.to(device[0])", "tensor_to_device", "replace", True,
      "model = model.to(f'npu:{device[0]}')",
      "finetune branch: an int passed to Module.to() means a CUDA ordinal"),
    C("model = nn.DataParallel(model, device_ids=device, output_device=device[0])", "distributed_framework",
      "removal", True, None,
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 support list marks it ✘); single-device finetune "
      "instead. xxx.pkl keys may then need their 'module.' prefix stripped"),
    C("model.load_state_dict(torch.load('xxx.pkl'))", "device_type", "replace", True,
      "model.load_state_dict(torch.load('xxx.pkl', map_location='cpu'))",
      "checkpoint written by a CUDA run holds cuda tensors; torch.load without map_location fails to restore them "
      "on an NPU host"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("criterion_absolute_loss = nn.MSELoss().cuda()", "tensor_to_device", "replace", False,
      "criterion_absolute_loss = nn.MSELoss().npu()", NOPARAM),
    C("criterion_contrastive_loss = Contrast_depth_loss().cuda()", "tensor_to_device", "replace", False,
      "criterion_contrastive_loss = Contrast_depth_loss().npu()", NOPARAM),
    C("inputs, map_label, spoof_label = sample_batched['image_x'].cuda()", "tensor_to_device", "replace", True,
      "inputs, map_label, spoof_label = sample_batched['image_x'].npu(), sample_batched['map_x'].npu(), "
      "sample_batched['spoofing_label'].npu()", ""),
    C("=inputs, spoof_label = sample_batched['image_x'].cuda(), sample_batched['spoofing_label'].cuda()",
      "tensor_to_device", "replace", True,
      "inputs, spoof_label = sample_batched['image_x'].npu(), sample_batched['spoofing_label'].npu()", "val loop"),
    C("val_maps = sample_batched['val_map_x'].cuda()", "tensor_to_device", "replace", True,
      "val_maps = sample_batched['val_map_x'].npu()   # binary map from PRNet", ""),
    C("[1, T, 3, 256, 256]", "tensor_to_device", "replace", True,
      "inputs, spoof_label = sample_batched['image_x'].npu(), sample_batched['spoofing_label'].npu()   # [1, T, 3, 256, 256]",
      "test loop"),
    C("test_maps = sample_batched['val_map_x'].cuda()", "tensor_to_device", "replace", True,
      "test_maps = sample_batched['val_map_x'].npu()   # binary map from PRNet", ""),
])

E("cdcn_test", "CVPR2020_paper_codes/test_CDCNpp_model1.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/test_CDCNpp_model1.py (score dump for val/test splits)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C("inputs = sample_batched['image_x'].cuda()", "tensor_to_device", "replace", True,
      "inputs = sample_batched['image_x'].npu()", ""),
    C("binary_mask, spoof_label = sample_batched['val_map_x'].cuda()", "tensor_to_device", "replace", True,
      "binary_mask, spoof_label = sample_batched['val_map_x'].npu(), sample_batched['spoofing_label']", ""),
    C("map_location='cuda:0'", "device_type", "replace", True,
      "model.load_state_dict(torch.load('CDCNpp_BinaryMask_P1_07/CDCNpp_BinaryMask_P1_07_30.pkl', map_location='cpu'))",
      "map_location names a CUDA device; 'cpu' (or 'npu:0') is needed on the NPU host"),
    C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ""),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
      "--gpus selection silently ignored otherwise (runs on device 0)"),
])

E("cdcn_models", "CVPR2020_paper_codes/models/CDCNs.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/models/CDCNs.py (Conv2d_cd, CDCN, CDCN++ with spatial attention)", [])

E("cdcn_load_train", "CVPR2020_paper_codes/Load_OULUNPU_train.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/Load_OULUNPU_train.py (OULU-NPU train dataset + augmentations)", [])

E("cdcn_load_valtest", "CVPR2020_paper_codes/Load_OULUNPU_valtest.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/Load_OULUNPU_valtest.py (8-frame val/test clips)", [])

E("cdcn_utils", "CVPR2020_paper_codes/utils.py", "explicit_replacement",
  "ZitongYu/CDCN CVPR2020_paper_codes/utils.py (ACER/APCER/BPCER metrics, DARTS leftovers)", [
    C("model.load_state_dict(torch.load(model_path))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "helper not called by the scripts in this probe; fails when it loads a state dict saved from a CUDA run"),
    C("torch.cuda.FloatTensor(x.size(0), 1, 1, 1)", "torch_cuda_api", "replace", True,
      "mask = Variable(torch.empty(x.size(0), 1, 1, 1, device=x.device).bernoulli_(keep_prob))",
      "DARTS drop_path leftover (unused by CDCN models); a CUDA tensor type fails when reached"),
])

# ----------------------------------------------------------------------------------------------------------
# SSDG (taylover-pei/SSDG-CVPR2020) -- module-level device string, seeds, per-tensor .cuda(), triplet masks
# ----------------------------------------------------------------------------------------------------------
E("ssdg_config", "experiment/I_C_M_to_O/config.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 experiment/I_C_M_to_O/config.py", [])

E("ssdg_train", "experiment/I_C_M_to_O/train_SSDG.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 experiment/I_C_M_to_O/train_SSDG.py (single-side adversarial + asymmetric triplet)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C("torch.cuda.manual_seed_all(config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(config.seed)",
      "torch.manual_seed on the line above already seeds registered accelerator backends (unconfirmed for "
      "torch 2.1 + torch_npu); torch.cuda.manual_seed_all is a lazy no-op without CUDA"),
    C("torch.cuda.manual_seed(config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(config.seed)", "same as above; reproducibility only"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config.gpus',
      "config.gpus = '3' picks a card; ignored by the Ascend runtime -> silently device 0"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "module-level device used by .to(device) for both networks"),
    C("'softmax': nn.CrossEntropyLoss().cuda(),", "tensor_to_device", "replace", False,
      "'softmax': nn.CrossEntropyLoss().npu(),", NOPARAM),
    C("'triplet': HardTripletLoss(margin=0.1, hardest=False).cuda()", "tensor_to_device", "replace", False,
      "'triplet': HardTripletLoss(margin=0.1, hardest=False).npu()", NOPARAM),
    C("net = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True, "net = net.npu()",
      "only reached with more than one id in config.gpus; DataParallel is ✘ on Ascend and .cuda() fails. "
      "save_checkpoint's len(gpus)>1 branch still works (it only renames '.module.' keys)"),
    C("src1_img_real = src1_img_real.cuda()", "tensor_to_device", "replace", True,
      "src1_img_real = src1_img_real.npu()", ""),
    C("src1_label_real = src1_label_real.cuda()", "tensor_to_device", "replace", True,
      "src1_label_real = src1_label_real.npu()", ""),
    C("src2_img_real = src2_img_real.cuda()", "tensor_to_device", "replace", True,
      "src2_img_real = src2_img_real.npu()", ""),
    C("src2_label_real = src2_label_real.cuda()", "tensor_to_device", "replace", True,
      "src2_label_real = src2_label_real.npu()", ""),
    C("src3_img_real = src3_img_real.cuda()", "tensor_to_device", "replace", True,
      "src3_img_real = src3_img_real.npu()", ""),
    C("src3_label_real = src3_label_real.cuda()", "tensor_to_device", "replace", True,
      "src3_label_real = src3_label_real.npu()", ""),
    C("src1_img_fake = src1_img_fake.cuda()", "tensor_to_device", "replace", True,
      "src1_img_fake = src1_img_fake.npu()", ""),
    C("src1_label_fake = src1_label_fake.cuda()", "tensor_to_device", "replace", True,
      "src1_label_fake = src1_label_fake.npu()", ""),
    C("src2_img_fake = src2_img_fake.cuda()", "tensor_to_device", "replace", True,
      "src2_img_fake = src2_img_fake.npu()", ""),
    C("src2_label_fake = src2_label_fake.cuda()", "tensor_to_device", "replace", True,
      "src2_label_fake = src2_label_fake.npu()", ""),
    C("src3_img_fake = src3_img_fake.cuda()", "tensor_to_device", "replace", True,
      "src3_img_fake = src3_img_fake.npu()", ""),
    C("src3_label_fake = src3_label_fake.cuda()", "tensor_to_device", "replace", True,
      "src3_label_fake = src3_label_fake.npu()", ""),
    C("real_domain_label_1 = torch.LongTensor(input1_real_shape, 1).fill_(0).cuda()", "tensor_to_device",
      "replace", True, "real_domain_label_1 = torch.LongTensor(input1_real_shape, 1).fill_(0).npu()", ""),
    C("real_domain_label_2 = torch.LongTensor(input2_real_shape, 1).fill_(0).cuda()", "tensor_to_device",
      "replace", True, "real_domain_label_2 = torch.LongTensor(input2_real_shape, 1).fill_(0).npu()", ""),
    C("real_domain_label_3 = torch.LongTensor(input3_real_shape, 1).fill_(0).cuda()", "tensor_to_device",
      "replace", True, "real_domain_label_3 = torch.LongTensor(input3_real_shape, 1).fill_(0).npu()", ""),
    C("fake_domain_label_1 = torch.LongTensor(input1_fake_shape, 1).fill_(1).cuda()", "tensor_to_device",
      "replace", True, "fake_domain_label_1 = torch.LongTensor(input1_fake_shape, 1).fill_(1).npu()", ""),
    C("fake_domain_label_2 = torch.LongTensor(input2_fake_shape, 1).fill_(2).cuda()", "tensor_to_device",
      "replace", True, "fake_domain_label_2 = torch.LongTensor(input2_fake_shape, 1).fill_(2).npu()", ""),
    C("fake_domain_label_3 = torch.LongTensor(input3_fake_shape, 1).fill_(3).cuda()", "tensor_to_device",
      "replace", True, "fake_domain_label_3 = torch.LongTensor(input3_fake_shape, 1).fill_(3).npu()", ""),
])

E("ssdg_test", "experiment/I_C_M_to_O/dg_test.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 experiment/I_C_M_to_O/dg_test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = config.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = config.gpus', "card selection silently ignored otherwise"),
    C("input = Variable(input).cuda()", "tensor_to_device", "replace", True, "input = Variable(input).npu()", ""),
    C("target = Variable(torch.from_numpy(np.array(target)).long()).cuda()", "tensor_to_device", "replace", True,
      "target = Variable(torch.from_numpy(np.array(target)).long()).npu()", ""),
    C("net = DG_model(config.model).cuda()", "tensor_to_device", "replace", True,
      "net = DG_model(config.model).npu()", ""),
    C("net_ = torch.load(config.best_model_path + config.tgt_best_model_name)", "device_type", "replace", True,
      "net_ = torch.load(config.best_model_path + config.tgt_best_model_name, map_location='cpu')",
      "best-model checkpoint was saved from a CUDA state_dict"),
])

E("ssdg_evaluate", "utils/evaluate.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 utils/evaluate.py (video-level HTER/AUC)", [
    C("input = Variable(input).cuda()", "tensor_to_device", "replace", True, "input = Variable(input).npu()", ""),
    C("target = Variable(torch.from_numpy(np.array(target)).long()).cuda()", "tensor_to_device", "replace", True,
      "target = Variable(torch.from_numpy(np.array(target)).long()).npu()", ""),
])

E("ssdg_utils", "utils/utils.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 utils/utils.py (frame sampling, Logger, save_checkpoint)", [])

E("ssdg_models", "models/DGFAS.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 models/DGFAS.py (ResNet-18 / MADDG backbones, GRL discriminator)", [])

E("ssdg_triplet", "loss/hard_triplet_loss.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 loss/hard_triplet_loss.py", [
    C('device = torch.device("cuda:0" if labels.is_cuda else "cpu")', "device_type", "replace", True,
      "device = labels.device",
      "labels live on the NPU, is_cuda is False there, so the eye() mask is built on the CPU and the "
      "following multiply with the NPU tensor fails (device mismatch)"),
    C("device = torch.device('cuda:0' if labels.is_cuda else 'cpu')", "device_type", "replace", True,
      "device = labels.device", "same pattern in _get_triplet_mask, the path SSDG actually uses (hardest=False)"),
])

E("ssdg_adloss", "loss/AdLoss.py", "explicit_replacement",
  "taylover-pei/SSDG-CVPR2020 loss/AdLoss.py", [
    C("=ad_label = ad_label.cuda()", "tensor_to_device", "replace", True, "ad_label = ad_label.npu()", ""),
    C("view(-1).cuda()", "tensor_to_device", "replace", True,
      "ad_label = torch.cat([ad_label1, ad_label2, ad_label3], dim=0).view(-1).npu()",
      "Fake_AdLoss is imported nowhere in SSDG's own training script but fails the same way when used"),
])

# ----------------------------------------------------------------------------------------------------------
# Silent-Face-Anti-Spoofing (minivision-ai) -- "cuda:{}" device strings, DataParallel on one card
# ----------------------------------------------------------------------------------------------------------
E("sf_train", "train.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing train.py", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, cuda_devices))', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(map(str, cuda_devices))',
      "--device_ids '1' is remapped to logical 0 by this very line; without the Ascend variable the remap is "
      "lost and device 0 (not 1) is used"),
])

E("sf_config", "src/default_config.py", "device_branch_or_abstraction",
  "minivision-ai/Silent-Face-Anti-Spoofing src/default_config.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "this module is where the device is chosen with torch.npu.is_available(); importing torch_npu here covers "
      "train.py (torch 2.1)"),
    C('conf.device = "cuda:{}".format(conf.devices[0]) if torch.cuda.is_available() else "cpu"', "device_type",
      "add_branch", True,
      'conf.device = "npu:{}".format(conf.devices[0]) if torch.npu.is_available() else ("cuda:{}".format(conf.devices[0]) if torch.cuda.is_available() else "cpu")',
      "unported, torch.cuda.is_available() is False on the NPU host and training silently runs on the CPU"),
])

E("sf_train_main", "src/train_main.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing src/train_main.py (TrainMain, MultiFTNet + Fourier loss)", [
    C("self.optimizer = optim.SGD(self.model.module.parameters(),", "distributed_framework", "replace", True,
      "self.optimizer = optim.SGD(self.model.parameters(),",
      "consequence of dropping DataParallel below: the bare model has no .module"),
    C("model = torch.nn.DataParallel(model, self.conf.devices)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is ✘ on Ascend (single-device DP may happen to pass through, but it is unsupported); "
      "anti_spoof_predict already accepts state dicts with or without 'module.'"),
])

E("sf_predict", "src/anti_spoof_predict.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing src/anti_spoof_predict.py (RetinaFace caffe detector + MiniFASNet)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "test.py never imports torch itself; this module is the first torch user"),
    C('self.device = torch.device("cuda:{}".format(device_id)', "device_type", "replace", True,
      'self.device = torch.device("npu:{}".format(device_id)', "first line of a two-line expression"),
    C('if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'if torch.npu.is_available() else "cpu")',
      "second line: unported, inference silently falls back to the CPU"),
])

E("sf_test", "test.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing test.py (multi-model fusion on one image)", [])

E("sf_loader", "src/data_io/dataset_loader.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing src/data_io/dataset_loader.py", [])

E("sf_model", "src/model_lib/MiniFASNet.py", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing src/model_lib/MiniFASNet.py", [])

E("sf_requirements", "requirements.txt", "explicit_replacement",
  "minivision-ai/Silent-Face-Anti-Spoofing requirements.txt", [
    C("=torch==1.2.0", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post10",
      "no torch_npu exists for torch 1.2; the torch pin on this line must also move to 2.1.0 (torchvision to "
      "0.16.0) -- a plain version bump, so not labelled separately; 2.1.0.post10 pairs with CANN 8.0.0"),
])

# ----------------------------------------------------------------------------------------------------------
# CelebA-Spoof AENet (ZhangYuanhan-AI/CelebA-Spoof) -- DataParallel over 4 GPUs, shell-level device selection
# ----------------------------------------------------------------------------------------------------------
E("celeba_main", "intra_dataset_code/main.py", "explicit_replacement",
  "ZhangYuanhan-AI/CelebA-Spoof intra_dataset_code (AENet multi-task training; file layout from memory)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
      "DataParallel is ✘ on Ascend; single device here (a DDP/HCCL rewrite would be needed to keep 4 cards). "
      "Resuming an old DataParallel checkpoint then needs 'module.' stripped"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')", "resume checkpoint holds cuda tensors"),
    C("'cls': nn.CrossEntropyLoss().cuda(),", "tensor_to_device", "replace", False,
      "'cls': nn.CrossEntropyLoss().npu(),", NOPARAM),
    C("'depth': nn.MSELoss().cuda(),", "tensor_to_device", "replace", False, "'depth': nn.MSELoss().npu(),", NOPARAM),
    C("'reflect': nn.MSELoss().cuda(),", "tensor_to_device", "replace", False,
      "'reflect': nn.MSELoss().npu(),", NOPARAM),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "without CUDA initialised torch.cuda.empty_cache() returns quietly; memory hygiene only"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ""),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ""),
    C("aux = [t.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "aux = [t.npu(non_blocking=True) for t in (spoof_type, illum, env, depth, reflect)]", ""),
    C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)", "validate()"),
])

E("celeba_predict", "intra_dataset_code/tsn_predict.py", "explicit_replacement",
  "ZhangYuanhan-AI/CelebA-Spoof intra_dataset_code/tsn_predict.py (TSNPredictor used by client.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the challenge client imports this module as its only torch user"),
    C("checkpoint = torch.load('./ckpt_iter.pth.tar')", "device_type", "replace", True,
      "checkpoint = torch.load('./ckpt_iter.pth.tar', map_location='cpu')",
      "released checkpoint was saved from a DataParallel CUDA model"),
    C("self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()", ""),
    C("input_var = data.view(-1, channel, data.size(2), data.size(3)).cuda()", "tensor_to_device", "replace", True,
      "input_var = data.view(-1, channel, data.size(2), data.size(3)).npu()", ""),
])

E("celeba_run", "intra_dataset_code/run.sh", "explicit_replacement",
  "ZhangYuanhan-AI/CelebA-Spoof intra_dataset_code training launcher (shell wrapper, from memory)", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "after the single-device port main.py only uses device 0, and with the variable ignored device 0 is still "
      "card 0 -- same result, so hygiene only"),
])

# ----------------------------------------------------------------------------------------------------------
# FLIP (koushiksrivats/FLIP, ICCV 2023) -- CLIP ViT-B/16 fine-tuning, AMP, hard-coded 'cuda:0'
# ----------------------------------------------------------------------------------------------------------
E("flip_train", "train_flip.py", "explicit_replacement",
  "koushiksrivats/FLIP train_flip.py (FLIP-MCL, 5 seeded runs per protocol; AMP flag added in this imitation)", [
    C("=import sys", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "must precede `from fas import flip_mcl`: fas imports the vendored clip, whose load() default argument is "
      "evaluated at import time and (once ported) calls torch.npu.is_available()"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "module-level device used by to_device() and flip_mcl"),
    C("torch.cuda.get_device_name(0), config.amp", "torch_cuda_api", "replace", True,
      "log.write('Running on %s, amp=%s\\n' % (torch.npu.get_device_name(0), config.amp))",
      "get_device_name initialises CUDA and raises on the NPU host"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=config.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=config.amp)",
      "the CUDA scaler disables itself (with a warning) when CUDA is absent: fp16 grads unscaled with --amp"),
    C("with torch.cuda.amp.autocast(enabled=config.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.amp):",
      "CUDA autocast is a warning-and-disable on the NPU host: --amp silently trains in fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize lazily initialises CUDA and raises"),
    C("torch.cuda.synchronize()  # make sure", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure all eval kernels finished before reading the clock", ""),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3))", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 1024 ** 3))",
      "reports 0 (or raises, depending on the torch version) on the NPU host; the logged memory is wrong either way"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "quiet no-op without CUDA; memory hygiene only"),
    C("torch.cuda.manual_seed_all(i)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(i)",
      "torch.manual_seed(i) above already seeds the accelerator (unconfirmed for torch 2.1 + torch_npu)"),
])

E("flip_fas", "fas.py", "explicit_replacement",
  "koushiksrivats/FLIP fas.py (flip_v / flip_mcl heads over CLIP)", [
    C("self.model, _ = clip.load(\"ViT-B/16\", 'cuda:0')", "device_type", "replace", True,
      "self.model, _ = clip.load(\"ViT-B/16\", 'npu:0')", "flip_v variant"),
    C("self.model, _ = clip.load(\"ViT-B/16\", device='cuda:0')", "device_type", "replace", True,
      "self.model, _ = clip.load(\"ViT-B/16\", device=device)",
      "flip_mcl already receives `device`; hard-coded cuda:0 fails on the NPU host"),
    C("spoof_texts = clip.tokenize(spoof_templates).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "spoof_texts = clip.tokenize(spoof_templates).to(self.device, non_blocking=True)", ""),
    C("real_texts = clip.tokenize(real_templates).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "real_texts = clip.tokenize(real_templates).to(self.device, non_blocking=True)", ""),
])

E("flip_clip", "third_party/clip/clip.py", "explicit_replacement",
  "openai/CLIP clip/clip.py as vendored by FLIP", [
    C('device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type",
      "replace", False,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default only; every FLIP caller passes an explicit device, so leaving it costs nothing here (other callers "
      "would silently get the CPU)"),
])

E("flip_run", "scripts/run_flip_mcl.sh", "explicit_replacement",
  "koushiksrivats/FLIP README commands wrapped in a launcher (from memory)", [
    C("=GPU=${1:-0}", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "the script's <gpu_id> argument would be silently ignored: every run lands on card 0"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "informational print; no `set -e`, so a missing nvidia-smi only prints an error. No closer kind for a CLI tool"),
])

# ----------------------------------------------------------------------------------------------------------
# SAFAS (sunyiyou/SAFAS, CVPR 2023) -- torchrun + DDP + NCCL, autocast, capability gate, all_gather of ids
# ----------------------------------------------------------------------------------------------------------
E("safas_train", "train.py", "explicit_replacement",
  "sunyiyou/SAFAS train.py (layout from memory; the torchrun/DDP launcher is this imitation's variant)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", TORCH_NPU),
    C("labels.append(label.to(device))", "unsupported_op_workaround", "replace", True,
      "labels.append(label.to(device, dtype=torch.int32))",
      "labels are int64 and are all_gather'ed in evaluate(); Ascend's 2.7.1 support list restricts "
      "torch.distributed.all_gather to bf16/fp16/fp32/int8/int32/bool"),
    C("video_ids.append(vid.to(device))", "unsupported_op_workaround", "replace", True,
      "video_ids.append(vid.to(device, dtype=torch.int32))", "same all_gather dtype restriction"),
    C("device = torch.device(f'cuda:{args.local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.local_rank}')", ""),
    C("use_amp = args.amp and torch.cuda.get_device_capability(device)[0] >= 7", "device_capability_check",
      "replace", True, "use_amp = args.amp",
      "tensor-core gate is meaningless on Ascend; torch_npu's get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set, so [0] would raise"),
    C("torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
      "logger.info('world size %d, amp %s, device %s', get_world_size(), use_amp, torch.npu.get_device_name(device))",
      ""),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)", "CUDA scaler disables itself without CUDA"),
    C("map_location=f'cuda:{args.local_rank}'", "device_type", "replace", True,
      "ckpt = torch.load(args.resume, map_location=f'npu:{args.local_rank}')", ""),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)", ""),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=use_amp):",
      "device_type='cuda' autocast is disabled with a warning on the NPU host: fp32 instead of fp16"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", ""),
])

E("safas_misc", "utils/misc.py", "explicit_replacement",
  "sunyiyou/SAFAS utils (DeiT-style distributed helpers; from memory)", [
    C("def init_distributed(args, backend='nccl'):", "dist_backend", "replace", False,
      "def init_distributed(args, backend='hccl'):",
      "default only; train.py always passes cfg['dist_backend'] (labelled in the YAML)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "unported, set_device is skipped and every rank piles onto device 0"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", ""),
    C("local_size = torch.tensor([tensor.shape[0]], device=tensor.device)", "unsupported_op_workaround", "replace",
      True, "local_size = torch.tensor([tensor.shape[0]], device=tensor.device, dtype=torch.int32)",
      "int64 size tensor goes through all_gather; int64 is not in the all_gather dtype list for Ascend"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "torch.manual_seed above seeds the accelerator too (unconfirmed for torch 2.1 + torch_npu)"),
    C("return torch.cuda.max_memory_allocated() / 1024.0 / 1024.0", "torch_cuda_api", "replace", True,
      "return torch.npu.max_memory_allocated() / 1024.0 / 1024.0",
      "peak-memory log would read 0 (or raise); wrong number either way"),
])

E("safas_config", "configs/ICM2O.yaml", "explicit_replacement",
  "sunyiyou/SAFAS configs (ICM->O protocol; YAML layout is this imitation's)", [
    C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
      "flows into dist.init_process_group(backend=...); NCCL does not exist on Ascend"),
])

E("safas_launch", "scripts/train_dist.sh", "explicit_replacement",
  "sunyiyou/SAFAS multi-GPU launcher (torchrun; from memory)", [
    C("=set -x", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "user-overridable card selection: a caller asking for cards 4-7 would silently get 0-3"),
])
