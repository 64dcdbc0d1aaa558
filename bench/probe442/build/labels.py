"""Labels for probe442 (zero-shot / generalized zero-shot learning, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`sub` must match exactly one line of the upstream file ("=text" = whole stripped line).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


EXP = "explicit_replacement"

IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu/.npu() use; "
               "autoload exists only from torch_npu 2.5.1, and the pinned stacks of this project predate it")
SEED_NOTE = ("torch.cuda.manual_seed_all is lazy and silently does nothing on a host without CUDA, "
             "so the NPU generator stays unseeded and runs are no longer reproducible")
WARN_NOTE = ("only gates a warning print; on an NPU host torch.cuda.is_available() is False so the warning "
             "never fires - cosmetic")
LOSS_CUDA_NOTE = ("NLLLoss without a weight owns no parameters or buffers, so Module.cuda() touches no tensor "
                  "and does not fail on an NPU host; ported only for consistency")

# ---------------------------------------------------------------------------------------------
# f-CLSWGAN (PyTorch reimplementation lineage: clswgan.py / classifier.py / classifier2.py)
# ---------------------------------------------------------------------------------------------
E("fcls_main", "clswgan.py", EXP,
  "f-CLSWGAN (Xian et al., CVPR'18) PyTorch code: clswgan.py training script", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(opt.manualSeed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed_all(opt.manualSeed)", SEED_NOTE),
      C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.cuda:", WARN_NOTE),
      C("netD.cuda()", "tensor_to_device", "replace", True, "netD.npu()", "critic parameters must live on the NPU"),
      C("netG.cuda()", "tensor_to_device", "replace", True, "netG.npu()", "generator parameters must live on the NPU"),
      C("input_res = input_res.cuda()", "tensor_to_device", "replace", True, "input_res = input_res.npu()",
        "persistent batch buffer; .cuda() raises on a host without CUDA"),
      C("noise, input_att = noise.cuda(), input_att.cuda()", "tensor_to_device", "replace", True,
        "noise, input_att = noise.npu(), input_att.npu()", "noise and attribute buffers"),
      C("one = one.cuda()", "tensor_to_device", "replace", True, "one = one.npu()",
        "gradient seed passed to backward(); must be on the same device as the critic output"),
      C("mone = mone.cuda()", "tensor_to_device", "replace", True, "mone = mone.npu()", "as above"),
      C("cls_criterion.cuda()", "tensor_to_device", "replace", False, "cls_criterion.npu()", LOSS_CUDA_NOTE),
      C("input_label = input_label.cuda()", "tensor_to_device", "replace", True, "input_label = input_label.npu()",
        "label buffer for the classification loss"),
      C("syn_att = syn_att.cuda()", "tensor_to_device", "replace", True, "syn_att = syn_att.npu()",
        "feature synthesis buffers"),
      C("syn_noise = syn_noise.cuda()", "tensor_to_device", "replace", True, "syn_noise = syn_noise.npu()",
        "feature synthesis buffers"),
      C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()",
        "WGAN-GP interpolation weights"),
      C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
        "interpolates = interpolates.npu()", "already on the NPU after alpha is ported, but .cuda() still raises"),
      C("ones = ones.cuda()", "tensor_to_device", "replace", True, "ones = ones.npu()",
        "grad_outputs of autograd.grad must match the critic output device"),
  ])

E("fcls_model", "model.py", EXP,
  "f-CLSWGAN model.py (MLP_G / MLP_CRITIC and variants) - pure nn.Module code", [])

E("fcls_util", "util.py", EXP,
  "f-CLSWGAN util.py (DATA_LOADER over xlsa17 .mat splits) - CPU tensors only", [])

E("fcls_cls", "classifier.py", EXP,
  "f-CLSWGAN classifier.py (pre-trained seen-class softmax used in the cls loss)", [
      C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "classifier weights"),
      C("self.criterion.cuda()", "tensor_to_device", "replace", False, "self.criterion.npu()", LOSS_CUDA_NOTE),
      C("self.input = self.input.cuda()", "tensor_to_device", "replace", True, "self.input = self.input.npu()",
        "batch buffer"),
      C("self.label = self.label.cuda()", "tensor_to_device", "replace", True, "self.label = self.label.npu()",
        "batch buffer"),
      C("output = self.model(Variable(test_X[start:end].cuda(), volatile=True))", "tensor_to_device", "replace",
        True, "output = self.model(Variable(test_X[start:end].npu(), volatile=True))", "evaluation batch"),
  ])

E("fcls_cls2", "classifier2.py", EXP,
  "f-CLSWGAN classifier2.py (final ZSL / GZSL softmax on real + synthetic features)", [
      C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "classifier weights"),
      C("self.criterion.cuda()", "tensor_to_device", "replace", False, "self.criterion.npu()", LOSS_CUDA_NOTE),
      C("self.input = self.input.cuda()", "tensor_to_device", "replace", True, "self.input = self.input.npu()",
        "batch buffer"),
      C("self.label = self.label.cuda()", "tensor_to_device", "replace", True, "self.label = self.label.npu()",
        "batch buffer"),
      C("output = self.model(Variable(test_X[start:end].cuda(), volatile=True))", "tensor_to_device", "replace",
        True, "output = self.model(Variable(test_X[start:end].npu(), volatile=True))", "GZSL evaluation batch"),
      C("test_X[start:end].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "output = self.model(Variable(test_X[start:end].npu(non_blocking=True), volatile=True))",
        "ZSL evaluation batch"),
  ])

E("fcls_sh", "scripts/reproduce.sh", EXP,
  "f-CLSWGAN reproduction launcher (per-dataset hyper-parameters, one GPU)", [
      C("GPU=${1:-0}", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; usually already sourced in the login shell or container, so not strictly needed here"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "card is user-chosen; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the run silently lands on "
        "logical NPU 0 instead of the requested one"),
      C("nvidia-smi --query-gpu=name,memory.used --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info >> ${LOGDIR}/npu_usage.txt",
        "nvidia-smi does not exist on an Ascend host: the last command fails and the script exits non-zero"),
  ])

# ---------------------------------------------------------------------------------------------
# TF-VAEGAN (akshitac8/tfvaegan, ECCV'20)
# ---------------------------------------------------------------------------------------------
E("tfv_config", "image-scripts/config.py", EXP,
  "akshitac8/tfvaegan image-scripts/config.py (argparse options shared by the image scripts)", [])

E("tfv_train", "image-scripts/train_images.py", EXP,
  "akshitac8/tfvaegan image-scripts/train_images.py (VAE-GAN + feedback module training loop)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu",
        "set before torch is imported; the Ascend runtime ignores CUDA_VISIBLE_DEVICES so --gpu would silently "
        "stop selecting the card"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(opt.manualSeed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed_all(opt.manualSeed)", SEED_NOTE),
      C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.cuda:", WARN_NOTE),
      C("netD.cuda()", "tensor_to_device", "replace", True, "netD.npu()", "discriminator"),
      C("netE.cuda()", "tensor_to_device", "replace", True, "netE.npu()", "VAE encoder"),
      C("netF.cuda()", "tensor_to_device", "replace", True, "netF.npu()", "feedback module"),
      C("netG.cuda()", "tensor_to_device", "replace", True, "netG.npu()", "generator / VAE decoder"),
      C("netDec.cuda()", "tensor_to_device", "replace", True, "netDec.npu()", "semantic embedding decoder"),
      C("input_res = input_res.cuda()", "tensor_to_device", "replace", True, "input_res = input_res.npu()",
        "batch buffer"),
      C("noise, input_att = noise.cuda(), input_att.cuda()", "tensor_to_device", "replace", True,
        "noise, input_att = noise.npu(), input_att.npu()", "batch buffers"),
      C("one = one.cuda()", "tensor_to_device", "replace", True, "one = one.npu()", "backward() gradient seed"),
      C("mone = mone.cuda()", "tensor_to_device", "replace", True, "mone = mone.npu()", "backward() gradient seed"),
      C("syn_att = syn_att.cuda()", "tensor_to_device", "replace", True, "syn_att = syn_att.npu()",
        "synthesis buffers"),
      C("syn_noise = syn_noise.cuda()", "tensor_to_device", "replace", True, "syn_noise = syn_noise.npu()",
        "synthesis buffers"),
      C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()", "WGAN-GP"),
      C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
        "interpolates = interpolates.npu()", "WGAN-GP"),
      C("ones = ones.cuda()", "tensor_to_device", "replace", True, "ones = ones.npu()", "WGAN-GP grad_outputs"),
      C("eps = Variable(eps).cuda()", "tensor_to_device", "replace", True, "eps = Variable(eps).npu()",
        "reparameterisation noise (--encoded_noise branch, enabled by the launcher)"),
      C("eps = Variable(eps.cuda())", "tensor_to_device", "replace", True, "eps = Variable(eps.npu())",
        "reparameterisation noise in the generator step; unconditional .cuda(), ignores --cuda"),
  ])

E("tfv_model", "image-scripts/model.py", EXP,
  "akshitac8/tfvaegan image-scripts/model.py (Encoder, Generator, Discriminator_D1, Feedback, AttDec)", [])

E("tfv_cls", "image-scripts/classifier.py", EXP,
  "akshitac8/tfvaegan image-scripts/classifier.py (softmax on [x, dec(x), dec hidden] features)", [
      C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "classifier weights"),
      C("self.criterion.cuda()", "tensor_to_device", "replace", False, "self.criterion.npu()", LOSS_CUDA_NOTE),
      C("self.input = self.input.cuda()", "tensor_to_device", "replace", True, "self.input = self.input.npu()",
        "batch buffer"),
      C("self.label = self.label.cuda()", "tensor_to_device", "replace", True, "self.label = self.label.npu()",
        "batch buffer"),
      C("inputX = Variable(test_X[start:end].cuda())", "tensor_to_device", "replace", True,
        "inputX = Variable(test_X[start:end].npu())", "GZSL evaluation batch"),
      C("inputX = Variable(test_X[start:end]).cuda()", "tensor_to_device", "replace", True,
        "inputX = Variable(test_X[start:end]).npu()", "ZSL evaluation batch"),
      C("inputX = test_X[start:end].cuda()", "tensor_to_device", "replace", True,
        "inputX = test_X[start:end].npu()", "feature transformation through the (NPU-resident) decoder"),
  ])

E("tfv_run", "scripts/run_cub_tfvaegan.py", EXP,
  "akshitac8/tfvaegan scripts/run_cub_tfvaegan.py (os.system launcher)", [
      C("OMP_NUM_THREADS=4 CUDA_VISIBLE_DEVICES=0 python", "env_var", "replace", False,
        "os.system('''OMP_NUM_THREADS=4 ASCEND_RT_VISIBLE_DEVICES=0 python image-scripts/train_images.py --gammaD 10 \\",
        "selects card 0, which is the default anyway, and train_images.py re-sets the variable from --gpu "
        "(default '0'); editing it keeps the launcher honest but changes nothing at runtime"),
  ])

E("tfv_env", "environment.yml", EXP,
  "akshitac8/tfvaegan environment.yml (conda export, pytorch 1.2 + cudatoolkit 10.0)", [
      C("- cudatoolkit=10.0.130=0", "import_torch_npu", "removal", False, None,
        "CUDA runtime is dead weight on an Ascend host; harmless on x86 (on aarch64 the whole x86 export "
        "would need regenerating anyway)"),
      C("- python=3.6.10=", "import_torch_npu", "replace", True, "- python=3.9.18",
        "ripple of the torch bump: torch 2.1 / torch_npu 2.1.0 need Python 3.8-3.11"),
      C("- pytorch=1.2.0=py3.6_cuda10.0.130_cudnn7.6.2_0", "import_torch_npu", "replace", True,
        "- pytorch=2.1.0=py3.9_cpu_0",
        "torch_npu wheels pair with an exact CPU torch build; the CUDA 10.0 build of torch 1.2 has no torch_npu"),
      C("- torchvision=0.4.0=py36_cu100", "import_torch_npu", "replace", True, "- torchvision=0.16.0=py39_cpu",
        "the cu100 torchvision build pins the CUDA pytorch build and would not solve next to a CPU torch"),
      C("- h5py==2.10.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
        "torch_npu comes from pip; pairs with torch 2.1.0 (CANN 8.0.0 per the version matrix)"),
  ])

# ---------------------------------------------------------------------------------------------
# CADA-VAE (edgarschnfld/CADA-VAE-PyTorch, CVPR'19)
# ---------------------------------------------------------------------------------------------
E("cada_single", "model/single_experiment.py", EXP,
  "edgarschnfld/CADA-VAE-PyTorch model/single_experiment.py (hyperparameter dict + entry point)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("'device': 'cuda',", "device_type", "replace", True, "'device': 'npu',",
        "the single device string flows into Model, DATA_LOADER, encoder/decoder templates and the final classifier"),
  ])

E("cada_vaemodel", "model/vaemodel.py", EXP,
  "edgarschnfld/CADA-VAE-PyTorch model/vaemodel.py (cross-aligned VAEs, warm-up schedule, latent classifier)", [
      C("eps = torch.cuda.FloatTensor(logvar.size()[0], 1).normal_(0, 1)", "tensor_to_device", "replace", True,
        "eps = torch.empty(logvar.size()[0], 1, device=logvar.device).normal_(0, 1)",
        "legacy torch.cuda.FloatTensor constructor raises without CUDA; allocate on the input's device"),
      C("cross_reconstruction_factor = torch.cuda.FloatTensor(", "tensor_to_device", "replace", True,
        "cross_reconstruction_factor = torch.tensor([min(max(f1, 0), self.warmup['cross_reconstruction']['factor'])], "
        "device=self.device)", "warm-up weight tensor"),
      C("beta = torch.cuda.FloatTensor(", "tensor_to_device", "replace", True,
        "beta = torch.tensor([min(max(f2, 0), self.warmup['beta']['factor'])], device=self.device)",
        "KL warm-up weight"),
      C("distance_factor = torch.cuda.FloatTensor(", "tensor_to_device", "replace", True,
        "distance_factor = torch.tensor([min(max(f3, 0), self.warmup['distance']['factor'])], device=self.device)",
        "distribution-alignment warm-up weight"),
      C("self.dataset.novelclasses = self.dataset.novelclasses.long().cuda()", "tensor_to_device", "replace", True,
        "self.dataset.novelclasses = self.dataset.novelclasses.long().npu()",
        "hard-coded .cuda() next to otherwise device-agnostic code"),
      C("self.dataset.seenclasses = self.dataset.seenclasses.long().cuda()", "tensor_to_device", "replace", True,
        "self.dataset.seenclasses = self.dataset.seenclasses.long().npu()", "as above"),
      C("multiplier = torch.ceil(torch.cuda.FloatTensor(", "tensor_to_device", "replace", True,
        "multiplier = torch.ceil(torch.tensor(",
        "only read back with .item(); any device works, but the CUDA type constructor raises"),
      C("return torch.cuda.FloatTensor([]), torch.cuda.LongTensor([])", "tensor_to_device", "replace", True,
        "return torch.empty(0, device=self.device), torch.empty(0, dtype=torch.long, device=self.device)",
        "reached in the default setting (0 seen-attribute samples per class)"),
      C("=return torch.cuda.FloatTensor([])", "tensor_to_device", "replace", True,
        "return torch.empty(0, device=self.device)", "empty latent batch for modalities with zero samples"),
  ])

E("cada_models", "model/models.py", EXP,
  "edgarschnfld/CADA-VAE-PyTorch model/models.py (encoder/decoder templates taking a device argument)", [])

E("cada_loader", "model/data_loader.py", EXP,
  "edgarschnfld/CADA-VAE-PyTorch model/data_loader.py (features moved to self.device at load time)", [
      C("def __init__(self, dataset, aux_datasource, device='cuda'):", "device_type", "replace", False,
        "def __init__(self, dataset, aux_datasource, device='npu'):",
        "default only; the only caller (vaemodel.Model) always passes device=self.device"),
  ])

E("cada_final", "model/final_classifier.py", EXP,
  "edgarschnfld/CADA-VAE-PyTorch model/final_classifier.py (device-agnostic softmax on latent features)", [])

E("cada_req", "requirements.txt", EXP,
  "CADA-VAE-PyTorch style requirements (torch 1.0.1, numpy, scipy, sklearn)", [
      C("torch==1.0.1", "import_torch_npu", "replace", True, "torch==2.1.0",
        "torch_npu exists only for specific torch releases; 1.0.1 has none"),
      C("numpy>=1.15", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the NPU backend itself; pairs with torch 2.1.0"),
  ])

# ---------------------------------------------------------------------------------------------
# APN (wenjiaXu/APN-ZSL, NeurIPS'20) - end-to-end ResNet-101 fine-tuning on images
# ---------------------------------------------------------------------------------------------
E("apn_opt", "model/opt.py", EXP,
  "wenjiaXu/APN-ZSL model/opt.py (argparse; sets the visible device inside get_opt)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu",
        "--gpu would silently stop selecting the card; it is set after import torch/torch_npu but before the first "
        "device use (that the NPU runtime reads it lazily at first use is unconfirmed in the knowledge base)"),
  ])

E("apn_main", "model/main.py", EXP,
  "wenjiaXu/APN-ZSL model/main.py (attribute prototype network training / evaluation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("attribute_zsl = prepare_attri_label(class_attribute, data.unseenclasses).cuda()", "tensor_to_device",
        "replace", True, "attribute_zsl = prepare_attri_label(class_attribute, data.unseenclasses).npu()",
        "class-attribute matrix"),
      C("attribute_seen = prepare_attri_label(class_attribute, data.seenclasses).cuda()", "tensor_to_device",
        "replace", True, "attribute_seen = prepare_attri_label(class_attribute, data.seenclasses).npu()",
        "class-attribute matrix"),
      C("attribute_gzsl = torch.transpose(class_attribute, 1, 0).cuda()", "tensor_to_device", "replace", True,
        "attribute_gzsl = torch.transpose(class_attribute, 1, 0).npu()", "class-attribute matrix"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "gate for moving the model: left as is, it is False on an NPU host and the ResNet stays on the CPU while "
        "the inputs are on the NPU"),
      C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "ResNet-101 backbone + prototypes"),
      C("attribute_zsl = attribute_zsl.cuda()", "tensor_to_device", "replace", True,
        "attribute_zsl = attribute_zsl.npu()", "redundant second move, but .cuda() still raises"),
      C("attribute_seen = attribute_seen.cuda()", "tensor_to_device", "replace", True,
        "attribute_seen = attribute_seen.npu()", "as above"),
      C("attribute_gzsl = attribute_gzsl.cuda()", "tensor_to_device", "replace", True,
        "attribute_gzsl = attribute_gzsl.npu()", "as above"),
      C("model.load_state_dict(torch.load(opt.resume))", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(opt.resume, map_location='cpu'))",
        "--only_evaluate is the documented way to score the released checkpoints, which hold CUDA tensors; "
        "torch.load raises without map_location on a host without CUDA"),
      C("input_v = batch_input.cuda()", "tensor_to_device", "replace", True, "input_v = batch_input.npu()",
        "image batch; unconditional .cuda()"),
      C("label_v = batch_target.cuda()", "tensor_to_device", "replace", True, "label_v = batch_target.npu()",
        "labels"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; the NPU cache just "
        "is not trimmed (memory hygiene only)"),
  ])

E("apn_utils", "model/main_utils.py", EXP,
  "wenjiaXu/APN-ZSL model/main_utils.py (seeding, loaders, CPT loss, ZSL/GZSL evaluation)", [
      C("torch.cuda.manual_seed_all(opt.manualSeed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed_all(opt.manualSeed)", SEED_NOTE),
      C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.cuda:", WARN_NOTE),
      C("num_workers=opt.workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=opt.workers, pin_memory=True, pin_memory_device='npu')",
        "without pin_memory_device the DataLoader pins only when CUDA is available, so pinning is silently "
        "dropped - performance only"),
      C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=4, pin_memory=True, pin_memory_device='npu')", "as above (default 'random' train mode)"),
      C("middle_graph = middle_graph.cuda()", "tensor_to_device", "replace", True,
        "middle_graph = middle_graph.npu()", "CPT mask indexed with peak ids computed on the NPU"),
      C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "ZSL test batch"),
      C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()",
        "value unused afterwards, but the line executes and .cuda() raises"),
      C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input = input.npu(non_blocking=True)", "GZSL test batch"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "executes and raises; value unused"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "called after every epoch; torch.cuda.synchronize() initialises CUDA and raises"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", True,
        "% (tag, elapsed, elapsed / max(loader_len, 1), torch.npu.max_memory_allocated() / 1024 ** 2))",
        "does not raise (memory stats of an uninitialised CUDA are empty) but silently reports 0 MB"),
  ])

E("apn_util", "model/util.py", EXP,
  "wenjiaXu/APN-ZSL model/util.py (ImageFilelist dataset, DATA_LOADER for image paths + attributes)", [])

E("apn_model", "model/model_proto.py", EXP,
  "wenjiaXu/APN-ZSL model/model_proto.py (resnet_proto_IoU: ResNet-101 + attribute prototypes)", [])

E("apn_sh", "script/CUB_GZSL.sh", EXP,
  "wenjiaXu/APN-ZSL script/CUB_GZSL.sh launcher", [
      C("cd \"$(dirname \"$0\")/..\" || exit 1", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; usually already sourced in the login shell or container"),
  ])

# ---------------------------------------------------------------------------------------------
# CE-GZSL (Hanzy1996/CE-GZSL, CVPR'21) - hybrid embedding + contrastive losses
# ---------------------------------------------------------------------------------------------
E("ce_main", "CE_GZSL.py", EXP,
  "Hanzy1996/CE-GZSL CE_GZSL.py (WGAN + embedding net + instance/class contrastive losses)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("os.environ[\"CUDA_DEVICE_ORDER\"] = \"PCI_BUS_ID\"", "env_var", "removal", False, None,
        "CUDA-only enumeration order; inert on Ascend (logical ids come from the runtime)"),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = opt.gpus", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = opt.gpus",
        "--gpus would silently stop selecting the card"),
      C("torch.cuda.manual_seed_all(opt.manualSeed)", "torch_cuda_api", "replace", True,
        "torch.npu.manual_seed_all(opt.manualSeed)", SEED_NOTE),
      C("if torch.cuda.is_available() and not opt.cuda:", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available() and not opt.cuda:", WARN_NOTE),
      C("netG = nn.DataParallel(netG)", "distributed_framework", "replace", False,
        "pass  # nn.DataParallel is unsupported on Ascend; use DDP with hccl for several cards",
        "nn.DataParallel is listed as unsupported on NPU; only reached when --gpus lists several cards"),
      C("netD = nn.DataParallel(netD)", "distributed_framework", "removal", False, None, "as above"),
      C("netMap = nn.DataParallel(netMap)", "distributed_framework", "removal", False, None, "as above"),
      C("F_ha = nn.DataParallel(F_ha)", "distributed_framework", "removal", False, None, "as above"),
      C("netG.cuda()", "tensor_to_device", "replace", True, "netG.npu()", "generator"),
      C("netD.cuda()", "tensor_to_device", "replace", True, "netD.npu()", "critic"),
      C("netMap.cuda()", "tensor_to_device", "replace", True, "netMap.npu()", "embedding network"),
      C("F_ha.cuda()", "tensor_to_device", "replace", True, "F_ha.npu()", "comparator network"),
      C("input_res = input_res.cuda()", "tensor_to_device", "replace", True, "input_res = input_res.npu()",
        "batch buffer"),
      C("noise_gen, input_att = noise_gen.cuda(), input_att.cuda()", "tensor_to_device", "replace", True,
        "noise_gen, input_att = noise_gen.npu(), input_att.npu()", "batch buffers"),
      C("input_label = input_label.cuda()", "tensor_to_device", "replace", True,
        "input_label = input_label.npu()", "label buffer"),
      C("syn_att = syn_att.cuda()", "tensor_to_device", "replace", True, "syn_att = syn_att.npu()", "synthesis"),
      C("syn_noise = syn_noise.cuda()", "tensor_to_device", "replace", True, "syn_noise = syn_noise.npu()",
        "synthesis"),
      C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()", "WGAN-GP"),
      C("interpolates = interpolates.cuda()", "tensor_to_device", "replace", True,
        "interpolates = interpolates.npu()", "WGAN-GP"),
      C("ones = ones.cuda()", "tensor_to_device", "replace", True, "ones = ones.npu()", "WGAN-GP grad_outputs"),
      C("all_scores = torch.FloatTensor(embed.shape[0], opt.nclass_seen).cuda()", "tensor_to_device", "replace",
        True, "all_scores = torch.FloatTensor(embed.shape[0], opt.nclass_seen).npu()",
        "class-level contrastive scores (class_scores_for_loop is the variant in use)"),
      C("data.attribute_seen.cuda()", "tensor_to_device", "replace", True,
        "all_scores[i] = (torch.div(relation_net(torch.cat((expand_embed, data.attribute_seen.npu()), dim=1)),",
        "seen-class attributes concatenated with NPU embeddings"),
      C("mask = F.one_hot(input_label, num_classes=opt.nclass_seen).float().cuda()", "tensor_to_device", "replace",
        True, "mask = F.one_hot(input_label, num_classes=opt.nclass_seen).float().npu()", "positive-class mask"),
      C("embed.shape[0] * opt.nclass_seen, -1).cuda()", "tensor_to_device", "replace", False,
        "embed.shape[0] * opt.nclass_seen, -1).npu()",
        "class_scores_in_matrix is never called (the loop variant is used), so this cannot fail at runtime"),
      C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
        "print('max GPU memory so far: %.1f GB' % (torch.npu.max_memory_allocated() / 1024 ** 3))",
        "does not raise but silently reports 0 GB"),
  ])

E("ce_model", "model.py", EXP,
  "Hanzy1996/CE-GZSL model.py (MLP_G, MLP_CRITIC, Embedding_Net, Dis_Embed_Att)", [])

E("ce_losses", "losses.py", EXP,
  "Hanzy1996/CE-GZSL losses.py (SupConLoss from Khosla et al. + SupConLoss_clear)", [
      C("device = torch.device('cuda') if features.is_cuda else torch.device('cpu')", "device_type", "replace",
        False, "device = features.device",
        "SupConLoss is kept from the SupContrast code but never instantiated in CE-GZSL - dead code here"),
      C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
        "with is_cuda False on NPU tensors the masks would be built on the CPU and mixed with NPU logits"),
      C("=if features.is_cuda", "device_type", "replace", True, "if features.is_npu",
        "is_cuda is False for NPU tensors; both halves of the conditional must change (or use features.device)"),
  ])

E("ce_cls", "classifier_embed_contras.py", EXP,
  "Hanzy1996/CE-GZSL classifier_embed_contras.py (softmax on the learned embedding h)", [
      C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "classifier weights"),
      C("self.criterion.cuda()", "tensor_to_device", "replace", False, "self.criterion.npu()", LOSS_CUDA_NOTE),
      C("self.input = self.input.cuda()", "tensor_to_device", "replace", True, "self.input = self.input.npu()",
        "batch buffer"),
      C("self.label = self.label.cuda()", "tensor_to_device", "replace", True, "self.label = self.label.npu()",
        "batch buffer"),
      C("embed, _ = self.MapNet(test_X[start:end].cuda())", "tensor_to_device", "replace", True,
        "embed, _ = self.MapNet(test_X[start:end].npu())", "GZSL evaluation batch through the NPU embedding net"),
      C("embed, _ = self.MapNet(test_X[start:end].cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "embed, _ = self.MapNet(test_X[start:end].npu(non_blocking=True))", "ZSL evaluation batch"),
  ])

E("ce_util", "util.py", EXP,
  "Hanzy1996/CE-GZSL util.py (DATA_LOADER with attribute_seen / attribute_unseen)", [])

E("ce_sh", "scripts/run_all.sh", EXP,
  "CE-GZSL multi-dataset launcher (one background run per GPU)", [
      C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; usually already sourced in the login shell or container"),
      C("nvidia-smi -L", "torch_cuda_api", "replace", True, "npu-smi info",
        "under set -e the missing nvidia-smi aborts the script before any run starts"),
      C("CUDA_VISIBLE_DEVICES=${GPUS[0]}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS[0]} nohup python CE_GZSL.py --dataset CUB --class_embedding sent --syn_num 100 \\",
        "ignored by the Ascend runtime: all four background runs would pile onto logical NPU 0"),
      C("CUDA_VISIBLE_DEVICES=${GPUS[1]}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS[1]} nohup python CE_GZSL.py --dataset AWA2 --class_embedding att --syn_num 2400 \\",
        "as above"),
      C("CUDA_VISIBLE_DEVICES=${GPUS[2]}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS[2]} nohup python CE_GZSL.py --dataset SUN --class_embedding att --syn_num 100 \\",
        "as above"),
      C("CUDA_VISIBLE_DEVICES=${GPUS[3]}", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS[3]} nohup python CE_GZSL.py --dataset FLO --class_embedding sent --syn_num 1200 \\",
        "as above"),
  ])
