"""Labels for probe438 (deep active learning frameworks). One C(...) per upstream line a porter edits."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: load the Ascend backend before any torch.npu.* use; torch_npu>=2.5.1 autoloads, "
               "older pairings (2.1.0.postN) need the import")

# --------------------------------------------------------------------------------------------
# BAAL (baal-org/baal)
# --------------------------------------------------------------------------------------------
E("baal_modelwrapper", "baal/modelwrapper.py", "explicit_replacement",
  "baal-org/baal baal/modelwrapper.py (ModelWrapper: train/test/predict_on_dataset with use_cuda flags)", [])

E("baal_cuda_utils", "baal/utils/cuda_utils.py", "device_branch_or_abstraction",
  "baal-org/baal baal/utils/cuda_utils.py (recursive to_cuda helper)", [
    C("return data.cuda()", "tensor_to_device", "replace", True,
      "return data.npu()",
      "single choke point: every use_cuda/cuda=True path of ModelWrapper goes through to_cuda; Tensor/Module.cuda() "
      "fails on a host without CUDA. The helper name and the use_cuda flags can stay."),
])

E("baal_dropout", "baal/bayesian/dropout.py", "explicit_replacement",
  "baal-org/baal baal/bayesian/dropout.py (MC-Dropout patching)", [])

E("baal_heuristics", "baal/active/heuristics/heuristics.py", "explicit_replacement",
  "baal-org/baal baal/active/heuristics/heuristics.py (BALD/Entropy/Margin/Variance on numpy)", [])

E("baal_calibration", "baal/calibration/calibration.py", "explicit_replacement",
  "baal-org/baal baal/calibration/calibration.py (DirichletCalibrator)", [
    C("self.dirichlet_linear.cuda()", "tensor_to_device", "replace", True,
      "self.dirichlet_linear.npu()",
      "Module.cuda() on the calibration layer; fails without CUDA and the layer must sit with the NPU-resident backbone"),
])

E("baal_vgg_exp", "experiments/vgg_mcdropout_cifar10.py", "explicit_replacement",
  "baal-org/baal experiments/vgg_mcdropout_cifar10.py (MC-Dropout VGG16 + ActiveLearningLoop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "gate for every device move in the run (passed as use_cuda to ModelWrapper/ActiveLearningLoop); unchanged it is "
      "False on an NPU host and the whole experiment silently runs on CPU"),
    C("model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "model placement; must match to_cuda (ported to .npu()) inputs"),
])

E("baal_hf_trainer", "baal/transformers_trainer_wrapper.py", "explicit_replacement",
  "baal-org/baal baal/transformers_trainer_wrapper.py (BaalTransformersTrainer, HF Trainer subclass)", [])

E("baal_dockerfile", "Dockerfile", "explicit_replacement",
  "baal-org/baal Dockerfile (pytorch/pytorch CUDA runtime base + poetry install)", [
    C("ARG IMAGE_TAG=1.13.1-cuda11.6-cudnn8-runtime", "import_torch_npu", "replace", True,
      "ARG IMAGE_TAG=8.0.0-910b-ubuntu22.04-py3.10",
      "tag selects the CUDA runtime image; an Ascend image carrying CANN 8.0.0 is needed instead (image name/tag "
      "unconfirmed in the knowledge base)"),
    C("FROM pytorch/pytorch:${IMAGE_TAG} as base_baal", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:${IMAGE_TAG} as base_baal",
      "CUDA base image has no CANN/driver user-space; base on a CANN image (repository name unconfirmed)"),
    C("RUN pip install --no-cache-dir poetry==1.5.1", "import_torch_npu", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post10 poetry==1.5.1",
      "a CANN image has no torch; pin torch 2.1.0 + torch_npu 2.1.0.post10 (v2.1.0-6.0.0, CANN 8.0.0 per the version matrix)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=all",
      "container-runtime device exposure; only read by the NVIDIA runtime, Ascend docker runtime uses "
      "ASCEND_VISIBLE_DEVICES (unconfirmed); devices are usually passed with --device at docker run"),
])

# --------------------------------------------------------------------------------------------
# BADGE (JordanAsh/badge) -- includes its CoreSet strategy
# --------------------------------------------------------------------------------------------
E("badge_run", "run.py", "explicit_replacement",
  "JordanAsh/badge run.py (argparse driver, openml/torchvision data, strategy selection, AL rounds)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opts.gpu",
      "--gpu pins each of several side-by-side runs to one card; CUDA_VISIBLE_DEVICES is ignored by the NPU runtime, "
      "so every run would silently land on device 0. Set before the first NPU use (torch_npu init is lazy - unconfirmed)"),
])

E("badge_strategy", "query_strategies/strategy.py", "explicit_replacement",
  "JordanAsh/badge query_strategies/strategy.py (Strategy base: train/predict/embeddings/grad embeddings)", [
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = torch.npu.is_available()",
      "dead local in __init__ (never read); edited for consistency only"),
    C("=x, y = Variable(x.cuda()), Variable(y.cuda())", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())", "training batch to device"),
    C("self.net.apply(weight_reset).cuda()", "tensor_to_device", "replace", True,
      "self.clf =  self.net.apply(weight_reset).npu()",
      "classifier placement (the reset branch re-uses the same, already moved, module)"),
    C("=x = Variable(x.cuda())", "tensor_to_device", "replace", True, "x = Variable(x.npu())", "predict batch"),
    C("=x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()", "predict_prob batch"),
    C("# same weights, fresh dropout mask", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu())  # same weights, fresh dropout mask", "MC-dropout batch"),
    C("=x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "MC-dropout split batch"),
    C("x, y = Variable(x.cuda()), y.cuda()", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), y.npu()", "penultimate embedding batch (CoreSet/KMeans)"),
    C("Variable(y.cuda()).long()", "tensor_to_device", "replace", True,
      "x, y = Variable(x.npu()), Variable(y.npu()).long()", "BADGE gradient-embedding batch"),
])

E("badge_sampling", "query_strategies/badge_sampling.py", "explicit_replacement",
  "JordanAsh/badge query_strategies/badge_sampling.py (k-means++ seeding on gradient embeddings, numpy/scipy)", [])

E("badge_coreset", "query_strategies/core_set.py", "explicit_replacement",
  "JordanAsh/badge query_strategies/core_set.py (greedy k-center + MIP dump, numpy)", [])

E("badge_resnet", "resnet.py", "explicit_replacement",
  "JordanAsh/badge resnet.py (CIFAR ResNet returning (logits, embedding))", [])

# --------------------------------------------------------------------------------------------
# Learning Loss for Active Learning (Mephisto405/Learning-Loss-for-Active-Learning)
# --------------------------------------------------------------------------------------------
E("ll4al_main", "main.py", "explicit_replacement",
  "Mephisto405/Learning-Loss-for-Active-Learning main.py (ResNet18 + LossNet, AL cycles)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("inputs = data[0].cuda()", "tensor_to_device", "replace", True, "inputs = data[0].npu()", "train batch"),
    C("labels = data[1].cuda()", "tensor_to_device", "replace", True, "labels = data[1].npu()", "train labels"),
    C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", "test batch"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
      "test labels (the commented-out copy in get_uncertainty stays as is)"),
    C("uncertainty = torch.tensor([]).cuda()", "tensor_to_device", "replace", True,
      "uncertainty = torch.tensor([]).npu()",
      "accumulator concatenated with NPU pred_loss; a CPU/NPU torch.cat mismatch otherwise"),
    C("inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(non_blocking=True)", "unlabelled subset batch"),
    C("resnet.ResNet18(num_classes=10).cuda()", "tensor_to_device", "replace", True,
      "resnet18    = resnet.ResNet18(num_classes=10).npu()", "backbone placement"),
    C("lossnet.LossNet().cuda()", "tensor_to_device", "replace", True,
      "loss_module = lossnet.LossNet().npu()", "loss-prediction module placement"),
])

E("ll4al_config", "config.py", "explicit_replacement",
  "Mephisto405/Learning-Loss-for-Active-Learning config.py (constants)", [])

E("ll4al_lossnet", "models/lossnet.py", "explicit_replacement",
  "Mephisto405/Learning-Loss-for-Active-Learning models/lossnet.py", [])

E("ll4al_sampler", "data/sampler.py", "explicit_replacement",
  "Mephisto405/Learning-Loss-for-Active-Learning data/sampler.py (SubsetSequentialSampler)", [])

# --------------------------------------------------------------------------------------------
# VAAL (sinhasam/vaal)
# --------------------------------------------------------------------------------------------
E("vaal_main", "main.py", "explicit_replacement",
  "sinhasam/vaal main.py (splits loop: VGG task model, VAE, discriminator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = args.cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = args.cuda and torch.npu.is_available()",
      "single gate for all device moves in Solver/AdversarySampler; unchanged, --cuda silently degrades to CPU"),
    C("if args.cuda and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if args.cuda and torch.npu.device_count() > 1:",
      "with the DataParallel line neutralised the branch is inert; edited for consistency"),
    C("task_model = nn.DataParallel(task_model)", "distributed_framework", "replace", True,
      "task_model = task_model  # nn.DataParallel is unsupported on Ascend: train on one NPU (DDP for multi-card)",
      "torch.nn.DataParallel is marked unsupported (A2/A3) in Ascend's API list; with the guard ported it would be "
      "taken on any multi-NPU host"),
])

E("vaal_solver", "solver.py", "explicit_replacement",
  "sinhasam/vaal solver.py (task/VAE/discriminator training loop)", [
    C("vae = vae.cuda()", "tensor_to_device", "replace", True, "vae = vae.npu()", "VAE placement"),
    C("discriminator = discriminator.cuda()", "tensor_to_device", "replace", True,
      "discriminator = discriminator.npu()", "discriminator placement"),
    C("task_model = task_model.cuda()", "tensor_to_device", "replace", True,
      "task_model = task_model.npu()", "task model placement"),
    C("=labeled_imgs = labeled_imgs.cuda()", "tensor_to_device", "replace", True,
      "labeled_imgs = labeled_imgs.npu()", "labelled batch"),
    C("=unlabeled_imgs = unlabeled_imgs.cuda()", "tensor_to_device", "replace", True,
      "unlabeled_imgs = unlabeled_imgs.npu()", "unlabelled batch"),
    C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", "labels"),
    C("=lab_real_preds = lab_real_preds.cuda()", "tensor_to_device", "replace", True,
      "lab_real_preds = lab_real_preds.npu()", "BCE targets created on host"),
    C("unlab_real_preds = unlab_real_preds.cuda()", "tensor_to_device", "replace", True,
      "unlab_real_preds = unlab_real_preds.npu()", "BCE targets created on host"),
    C("# fresh labelled batch", "tensor_to_device", "replace", True,
      "labeled_imgs = labeled_imgs.npu()  # fresh labelled batch for the next VAE step", "re-sampled batch"),
    C("# fresh unlabelled batch", "tensor_to_device", "replace", True,
      "unlabeled_imgs = unlabeled_imgs.npu()  # fresh unlabelled batch", "re-sampled batch"),
    C("unlab_fake_preds.cuda()", "tensor_to_device", "replace", True,
      "lab_real_preds, unlab_fake_preds = lab_real_preds.npu(), unlab_fake_preds.npu()", "discriminator targets"),
    C("labeled_imgs, unlabeled_imgs = labeled_imgs.cuda()", "tensor_to_device", "replace", True,
      "labeled_imgs, unlabeled_imgs = labeled_imgs.npu(), unlabeled_imgs.npu()", "re-sampled adversary batch"),
    C("best_model = best_model.cuda()", "tensor_to_device", "replace", True,
      "best_model = best_model.npu()", "deep-copied best model placement"),
    C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "validation batch"),
    C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "imgs = imgs.npu(non_blocking=True)", "test batch"),
])

E("vaal_sampler", "sampler.py", "explicit_replacement",
  "sinhasam/vaal sampler.py (AdversarySampler: discriminator-score top-k query)", [
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()",
      "pool batch fed to the NPU-resident VAE"),
])

E("vaal_arguments", "arguments.py", "explicit_replacement",
  "sinhasam/vaal arguments.py (argparse incl. --cuda flag)", [])

E("vaal_model", "model.py", "explicit_replacement",
  "sinhasam/vaal model.py (VAE with reparameterisation, Discriminator)", [
    C("if mu.is_cuda:", "device_type", "replace", True, "if mu.is_npu:",
      "is_cuda is False for NPU tensors: epsilon would stay on the host and epsilon * stds + mu mixes CPU and NPU "
      "tensors (runtime error)"),
    C("stds, epsilon = stds.cuda(), epsilon.cuda()", "tensor_to_device", "replace", True,
      "stds, epsilon = stds.npu(), epsilon.npu()", "host-sampled noise to device"),
])

# --------------------------------------------------------------------------------------------
# deep-active-learning-pytorch (acl21), pycls-based toolkit; TypiClust fork
# --------------------------------------------------------------------------------------------
E("deepal_train", "tools/train_al.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch tools/train_al.py (episodes: train, test, query; pycls meters)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "GradScaler/autocast come from this module; the shipped ENS config sets MIXED_PRECISION: True and the CUDA "
      "GradScaler/autocast disable themselves without CUDA, silently training in fp32"),
    C("os.environ.setdefault('CUDA_VISIBLE_DEVICES', str(cfg.GPU_ID))", "env_var", "replace", True,
      "os.environ.setdefault('ASCEND_RT_VISIBLE_DEVICES', str(cfg.GPU_ID))",
      "device pinning (launcher sets it per job, otherwise --gpu); ignored by the NPU runtime"),
    C("print(\"Using GPU : {}.\\n\".format(os.environ['CUDA_VISIBLE_DEVICES']))", "env_var", "replace", True,
      "print(\"Using NPU : {}.\\n\".format(os.environ['ASCEND_RT_VISIBLE_DEVICES']))",
      "reads the variable just set; after the port CUDA_VISIBLE_DEVICES is normally unset -> KeyError"),
    C("use_cuda = (cfg.NUM_GPUS > 0) and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "use_cuda = (cfg.NUM_GPUS > 0) and torch.npu.is_available()",
      "only feeds the unused device/kwargs locals; consistency edit"),
    C("device = torch.device(\"cuda\" if use_cuda else \"cpu\")", "device_type", "replace", False,
      "device = torch.device(\"npu\" if use_cuda else \"cpu\")", "unused local; consistency edit"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "guards model placement in train_epoch; unchanged the model stays on CPU while batches go to the NPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "train_epoch model placement"),
    C("=inputs = inputs.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "inputs = inputs.type(torch.npu.FloatTensor)",
      "legacy CUDA tensor type; not available without CUDA (torch.npu.FloatTensor exists in torch_npu.npu)"),
    C("inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu(non_blocking=True)", "train batch"),
    C("# evaluation always runs on the local GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # evaluation always runs on the local NPU", "guards test model placement"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "test model placement"),
    C("inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, labels = inputs.npu(non_blocking=True), labels.npu(non_blocking=True)", "test batch"),
    C("# keep dtype in line with the weights", "torch_cuda_api", "replace", True,
      "inputs = inputs.type(torch.npu.FloatTensor)  # keep dtype in line with the weights", "legacy CUDA tensor type"),
])

E("deepal_config", "pycls/core/config.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/core/config.py (yacs defaults)", [
    C("_C.DIST_BACKEND = 'nccl'", "dist_backend", "replace", True, "_C.DIST_BACKEND = 'hccl'",
      "default backend handed to init_process_group in pycls/utils/distributed.py; NCCL does not exist on Ascend"),
])

E("deepal_builders", "pycls/core/builders.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/core/builders.py (model registry + placement/DDP)", [
    C("assert cfg.NUM_GPUS <= torch.cuda.device_count(), err_str", "torch_cuda_api", "replace", True,
      "assert cfg.NUM_GPUS <= torch.npu.device_count(), err_str",
      "torch.cuda.device_count() is 0 on an NPU host -> assertion always fails"),
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "raises without CUDA"),
    C("model = model.cuda(device=cur_device)", "tensor_to_device", "replace", True,
      "model = model.npu(device=cur_device)", "model placement before DDP"),
])

E("deepal_distributed", "pycls/utils/distributed.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/utils/distributed.py (pycls multi-proc helpers)", [
    C("torch.cuda.set_device(proc_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(proc_rank)",
      "per-rank device binding before HCCL init"),
    C("device=torch.device(\"cuda\", torch.cuda.current_device()))", "device_type", "replace", True,
      "local = torch.as_tensor(local_idx, dtype=torch.long, device=torch.device(\"npu\", torch.npu.current_device()))",
      "HCCL all_gather needs NPU tensors; cuda device and current_device both fail"),
])

E("deepal_sampling", "pycls/al/Sampling.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/al/Sampling.py (CoreSet k-center greedy on GPU, BALD, uncertainty/entropy/margin)", [
    C("self.cuda_id = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "self.cuda_id = torch.npu.current_device()", "raises without CUDA"),
    C("=clf_model.cuda(self.cuda_id)", "tensor_to_device", "replace", True, "clf_model.npu(self.cuda_id)",
      "CoreSet representation model"),
    C("=x = x.cuda(self.cuda_id)", "tensor_to_device", "replace", True, "x = x.npu(self.cuda_id)", "pool batch"),
    C("x = x.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "x = x.type(torch.npu.FloatTensor)", "legacy CUDA tensor type"),
    C("labeled = torch.from_numpy(labeled).cuda(0)", "tensor_to_device", "replace", True,
      "labeled = torch.from_numpy(labeled).npu(0)", "k-center greedy distance computation on device"),
    C("unlabeled = torch.from_numpy(unlabeled).cuda(0)", "tensor_to_device", "replace", True,
      "unlabeled = torch.from_numpy(unlabeled).npu(0)", "k-center greedy distance computation on device"),
    C("else torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "self.cuda_id = 0 if cfg.ACTIVE_LEARNING.SAMPLING_FN.startswith(\"ensemble\") else torch.npu.current_device()",
      "raises without CUDA for non-ensemble strategies"),
    C("# predictions are gathered", "tensor_to_device", "replace", True,
      "clf_model.npu(self.cuda_id)  # predictions are gathered on this process' NPU", "BALD/DBAL prediction model"),
    C("x = x.cuda(self.cuda_id).type(torch.cuda.FloatTensor)", "tensor_to_device", "replace", True,
      "x = x.npu(self.cuda_id).type(torch.npu.FloatTensor)", "device move and legacy CUDA tensor type on one line"),
    C("clf_model = clf_model.cuda(self.cuda_id)", "tensor_to_device", "replace", True,
      "clf_model = clf_model.npu(self.cuda_id)", "BALD model"),
    C("clf = model.cuda()", "tensor_to_device", "replace", True, "clf = model.npu()", "uncertainty model"),
    C("=x_u = x_u.cuda(0)", "tensor_to_device", "replace", True, "x_u = x_u.npu(0)", "uncertainty batch"),
    C("clf = model.cuda(self.cuda_id)", "tensor_to_device", "replace", True, "clf = model.npu(self.cuda_id)",
      "entropy model"),
    C("x_u = x_u.cuda(self.cuda_id)", "tensor_to_device", "replace", True, "x_u = x_u.npu(self.cuda_id)",
      "entropy batch"),
    C("clf = model.cuda(0)", "tensor_to_device", "replace", True, "clf = model.npu(0)", "margin model"),
    C("x_u = x_u.cuda(0, non_blocking=True)", "tensor_to_device", "replace", True,
      "x_u = x_u.npu(0, non_blocking=True)", "margin batch"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "torch.cuda.empty_cache is a no-op when CUDA is not initialised; only memory headroom between episodes"),
])

E("deepal_meters", "pycls/utils/meters.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/utils/meters.py (pycls Train/Test meters, gpu_mem_usage)", [
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      "mem_usage_bytes = torch.npu.max_memory_allocated()",
      "CUDA memory stats return {} when CUDA is uninitialised, so every logged 'mem' would silently be 0"),
])

E("deepal_checkpoint", "pycls/utils/checkpoint.py", "explicit_replacement",
  "acl21/deep-active-learning-pytorch pycls/utils/checkpoint.py (save/load, plus a load-on-device helper)", [
    C("cur_device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "cur_device = torch.npu.current_device()", "raises without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda(cur_device)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(checkpoint_file, map_location=f\"npu:{cur_device}\")",
      "map_location callback materialises storages with .cuda(); use an npu device string"),
])

E("deepal_yaml", "configs/cifar10/al/RESNET18_ENS.yaml", "explicit_replacement",
  "acl21/deep-active-learning-pytorch configs/cifar10/al/RESNET18.yaml (experiment config)", [])

E("deepal_script", "scripts/al_cifar10.sh", "explicit_replacement",
  "launcher in the style of acl21/deep-active-learning-pytorch scripts (one strategy per GPU)", [
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", False, "npu-smi info",
      "status print only; nvidia-smi is absent on an NPU host (script has no set -e, so it just prints an error)"),
    C("cd \"$(dirname \"$0\")/../tools\" || exit 1", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for the python jobs, unless the login shell already sources it"),
    C("CUDA_VISIBLE_DEVICES=${gpu} python train_al.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} python train_al.py \\",
      "round-robin card assignment; unchanged, all jobs default to device 0 on NPU"),
])

E("deepal_requirements", "requirements.txt", "explicit_replacement",
  "acl21/deep-active-learning-pytorch requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu sits on a CPU build of torch (CPU index on x86, plain PyPI on aarch64)"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu for 1.12; pick a torch with a torch_npu pairing"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match torch 2.1.0"),
    C("numpy>=1.21", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "add the adapter (2.1.0.post10 <-> CANN 8.0.0 per the version matrix)"),
    C("faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", True, "faiss-cpu==1.7.4",
      "faiss-gpu is CUDA-only (no aarch64/Ascend build); TypiClust's kNN moves to faiss CPU"),
])

E("typiclust_al", "deep-al/pycls/al/typiclust.py", "explicit_replacement",
  "avihu111/TypiClust deep-al/pycls/al/typiclust.py (typicality-based cold-start query on SimCLR features)", [
    C("gpu_index = faiss.index_cpu_to_all_gpus(cpu_index)", "unsupported_op_workaround", "replace", True,
      "gpu_index = cpu_index  # faiss-gpu is not available on Ascend hosts: exact L2 search on CPU",
      "unguarded faiss GPU call; fails with faiss-cpu"),
])

# --------------------------------------------------------------------------------------------
# modAL + skorch (modAL-python/modAL examples), ALiPy-style pool loop
# --------------------------------------------------------------------------------------------
E("modal_pytorch", "examples/pytorch_integration.py", "explicit_replacement",
  "modAL-python/modAL examples/pytorch_integration.py (skorch NeuralNetClassifier in ActiveLearner)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device='cuda')", "device_type", "replace", True, "device='npu')",
      "skorch moves module and batches to this device string"),
])

E("modal_dbal", "examples/deep_bayesian_active_learning.py", "device_branch_or_abstraction",
  "modAL-python/modAL examples/deep_bayesian_active_learning.py (MC-dropout BALD/max-entropy/var-ratios query loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
      "device = \"npu\" if torch.npu.is_available() else \"cpu\"",
      "module-level device used by skorch and by mc_predictions; unchanged it silently falls back to CPU"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "lazy no-op without CUDA; torch.manual_seed on the line above is expected to seed the NPU generators too "
      "(unconfirmed)"),
])
