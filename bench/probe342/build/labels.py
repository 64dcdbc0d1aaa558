# Labels for probe342: unsupervised domain adaptation / domain generalization code (CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any NPU use (mandatory before torch_npu 2.5.1 "
               "autoload; these projects pin old torch)")
SEED_NOTE = ("torch.cuda seeding is a lazy no-op on a host without CUDA; the NPU generator is left to "
             "torch.manual_seed (covering it there is unconfirmed) - reproducibility only")
CVD0_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; with index 0 the job lands on NPU 0 anyway, "
             "so this is a silent no-op")
SETENV_NOTE = ("CANN environment: without it `import torch_npu` fails (libhccl.so / ASCEND_OPP_PATH) unless the "
               "shell or container already sourced set_env.sh")

# ---------------------------------------------------------------- Transfer-Learning-Library
E("tllib_dann", "examples/domain_adaptation/image_classification/dann.py", "device_branch_or_abstraction",
  "Transfer-Learning-Library examples/domain_adaptation/image_classification/dann.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "torch.cuda.is_available() is False on an NPU host, so everything silently trains on the CPU; "
        "all later .to(device) calls follow this one variable"),
  ])

E("tllib_utils", "examples/domain_adaptation/image_classification/utils.py", "device_branch_or_abstraction",
  "Transfer-Learning-Library examples/.../image_classification/utils.py (validate / ERM helpers taking `device`)", [])

E("tllib_data", "tllib/utils/data.py", "explicit_replacement",
  "Transfer-Learning-Library tllib/utils/data.py (ForeverDataIterator, send_to_device) plus a fork's CUDA-stream prefetcher", [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "creating a CUDA stream raises on the CPU-only torch build used with torch_npu"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "CUDA stream context; NPU has the same API under torch.npu"),
      C("t.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_batch = [t.npu(non_blocking=True) if isinstance(t, torch.Tensor) else t for t in batch]",
        ".cuda() fails without CUDA"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync must be on the NPU stream"),
      C("t.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "t.record_stream(torch.npu.current_stream())", "record_stream needs the NPU current stream"),
  ])

E("tllib_cdan_loss", "tllib/alignment/cdan.py", "device_branch_or_abstraction",
  "Transfer-Learning-Library tllib/alignment/cdan.py (ConditionalDomainAdversarialLoss, RandomizedMultiLinearMap)", [])

_sh = []
_sh.append(C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
             "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE))
for sub in ["=CUDA_VISIBLE_DEVICES=0 python dann.py data/office31 -d Office31 -s A -t W -a resnet50 --epochs 20 --seed 1 --log logs/dann/Office31_A2W",
            "Office31_D2W", "Office31_W2D", "Office31_A2D", "Office31_D2A", "Office31_W2A",
            "-s Ar -t Cl -a resnet50", "-s Ar -t Pr", "-s Ar -t Rw", "-s Cl -t Ar",
            "-d VisDA2017", "vit_base_patch16_224", "-s MNIST -t USPS", "-s USPS -t MNIST", "--phase analysis"]:
    _sh.append(C(sub, "env_var", "replace", False,
                 "ASCEND_RT_VISIBLE_DEVICES=0 python dann.py ...  (same arguments)", CVD0_NOTE))
for sub in ["DomainNet_c2p", "DomainNet_p2r"]:
    _sh.append(C(sub, "env_var", "replace", True,
                 "ASCEND_RT_VISIBLE_DEVICES=1 python dann.py data/domainnet ...  (same arguments)",
                 "CUDA_VISIBLE_DEVICES is ignored on Ascend, so the DomainNet jobs silently share NPU 0 with the "
                 "Office-Home jobs instead of using the second card"))
E("tllib_dann_sh", "examples/domain_adaptation/image_classification/dann.sh", "explicit_replacement",
  "Transfer-Learning-Library example launcher dann.sh (one CUDA_VISIBLE_DEVICES line per task)", _sh)

# ---------------------------------------------------------------- DeepDA (jindongwang/transferlearning)
E("deepda_main", "code/DeepDA/main.py", "device_branch_or_abstraction",
  "jindongwang/transferlearning code/DeepDA/main.py (configargparse, args.device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
      C('setattr(args, "device", torch.device(', "device_type", "replace", True,
        "setattr(args, \"device\", torch.device('npu' if torch.npu.is_available() else 'cpu'))",
        "falls back to CPU silently on an NPU host; every .to(args.device) follows it"),
  ])

E("deepda_lmmd", "code/DeepDA/loss_funcs/lmmd.py", "device_branch_or_abstraction",
  "jindongwang/transferlearning code/DeepDA/loss_funcs/lmmd.py (LMMD / DSAN loss)", [
      C("weight_ss = torch.from_numpy(weight_ss).cuda()", "tensor_to_device", "replace", True,
        "weight_ss = torch.from_numpy(weight_ss).to(source.device)  # B, B", ".cuda() fails without CUDA"),
      C("weight_tt = torch.from_numpy(weight_tt).cuda()", "tensor_to_device", "replace", True,
        "weight_tt = torch.from_numpy(weight_tt).to(source.device)", ".cuda() fails without CUDA"),
      C("weight_st = torch.from_numpy(weight_st).cuda()", "tensor_to_device", "replace", True,
        "weight_st = torch.from_numpy(weight_st).to(source.device)", ".cuda() fails without CUDA"),
      C("loss = torch.Tensor([0]).cuda()", "tensor_to_device", "replace", True,
        "loss = torch.zeros(1, device=source.device)", ".cuda() fails without CUDA"),
  ])

# ---------------------------------------------------------------- DomainBed
E("domainbed_train", "domainbed/scripts/train.py", "device_branch_or_abstraction",
  "facebookresearch/DomainBed domainbed/scripts/train.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: the whole sweep silently runs on CPU"),
      C('=device = "cuda"', "device_type", "replace", True, 'device = "npu"',
        "device string used for algorithm.to(device), every minibatch and misc.accuracy"),
      C("results['mem_gb'] = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
        "results['mem_gb'] = torch.npu.max_memory_allocated() / (1024.*1024.*1024.)",
        "returns 0 when CUDA was never initialised: wrong number in results.jsonl, nothing fails"),
  ])

E("domainbed_algorithms", "domainbed/algorithms.py", "device_branch_or_abstraction",
  "facebookresearch/DomainBed domainbed/algorithms.py (ERM, DANN/CDANN, IRM, VREx, Mixup, GroupDRO, MLDG, MMD/CORAL, SagNet)", [
      C('=device = "cuda" if minibatches[0][0].is_cuda else "cpu"', "device_type", "replace", True,
        "device = minibatches[0][0].device",
        "is_cuda is False for NPU tensors, so disc_labels are built on the CPU and cross_entropy against the "
        "NPU logits fails with a device mismatch"),
      C('device = "cuda" if logits[0][0].is_cuda else "cpu"', "device_type", "replace", False,
        "device = logits.device",
        "resolves to 'cpu': the IRM scale becomes a 0-dim CPU tensor, which PyTorch lets mix with device tensors, "
        "so the penalty still computes (unconfirmed for NPU); edit for clarity/perf"),
      C("q and losses follow the batch", "device_type", "replace", False,
        "device = minibatches[0][0].device",
        "resolves to 'cpu': q/losses live on the host and get filled by cross-device scalar copies every step - "
        "works like VREx's CPU losses but syncs per group (unconfirmed on NPU)"),
  ])

E("domainbed_launchers", "domainbed/command_launchers.py", "explicit_replacement",
  "facebookresearch/DomainBed domainbed/command_launchers.py (multi_gpu_launcher) with a fork's greedy launcher", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "this module is imported by sweep.py, which never imports torch_npu; needed for torch.npu below"),
      C("env = os.environ.get('CUDA_VISIBLE_DEVICES')", "env_var", "replace", True,
        "env = os.environ.get('ASCEND_RT_VISIBLE_DEVICES')",
        "the NPU visibility variable is ASCEND_RT_VISIBLE_DEVICES"),
      C("range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "return [str(i) for i in range(torch.npu.device_count())]",
        "device_count() is 0 without CUDA, so multi_gpu_launcher loops forever without launching anything"),
      C("['nvidia-smi', '--query-gpu=memory.free'", "torch_cuda_api", "replace", True,
        "return [torch.npu.mem_get_info(i)[0] // 2 ** 20 for i in range(torch.npu.device_count())]",
        "nvidia-smi does not exist on an Ascend host (FileNotFoundError); npu-smi output differs, mem_get_info is in torch.npu"),
      C("f'CUDA_VISIBLE_DEVICES={gpu_idx} {cmd}'", "env_var", "replace", True,
        "f'ASCEND_RT_VISIBLE_DEVICES={gpu_idx} {cmd}', shell=True)",
        "ignored on Ascend: every job lands on NPU 0 and they run out of memory together"),
      C("env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu_idx)", "env_var", "replace", True,
        "env = dict(os.environ, ASCEND_RT_VISIBLE_DEVICES=gpu_idx)", "same: child pinning is silently lost"),
  ])

# ---------------------------------------------------------------- SHOT
_SHOT_TD = ".cuda() fails on the CPU-only torch build used with torch_npu"
E("shot_source", "object/image_source.py", "explicit_replacement",
  "tim-learn/SHOT object/image_source.py (source-model training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", _SHOT_TD),
      C("netF = network.ResBase(res_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.ResBase(res_name=args.net).npu()", _SHOT_TD),
      C("netF = network.VGGBase(vgg_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.VGGBase(vgg_name=args.net).npu()", _SHOT_TD),
      C("netB = network.feat_bootleneck(", "tensor_to_device", "replace", True,
        "netB = network.feat_bootleneck(type=args.classifier, feature_dim=netF.in_features, bottleneck_dim=args.bottleneck).npu()", _SHOT_TD),
      C("netC = network.feat_classifier(", "tensor_to_device", "replace", True,
        "netC = network.feat_classifier(type=args.layer, class_num=args.class_num, bottleneck_dim=args.bottleneck).npu()", _SHOT_TD),
      C("inputs_source, labels_source = inputs_source.cuda(), labels_source.cuda()", "tensor_to_device", "replace", True,
        "inputs_source, labels_source = inputs_source.npu(), labels_source.npu()", _SHOT_TD),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id is silently ignored on Ascend; the run always takes NPU 0"),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)", SEED_NOTE),
  ])

E("shot_target", "object/image_target.py", "explicit_replacement",
  "tim-learn/SHOT object/image_target.py (source-free adaptation with clustering pseudo-labels)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", _SHOT_TD),
      C("netF = network.ResBase(res_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.ResBase(res_name=args.net).npu()", _SHOT_TD),
      C("netF = network.VGGBase(vgg_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.VGGBase(vgg_name=args.net).npu()", _SHOT_TD),
      C("netB = network.feat_bootleneck(", "tensor_to_device", "replace", True,
        "netB = network.feat_bootleneck(type=args.classifier, feature_dim=netF.in_features, bottleneck_dim=args.bottleneck).npu()", _SHOT_TD),
      C("netC = network.feat_classifier(", "tensor_to_device", "replace", True,
        "netC = network.feat_classifier(type=args.layer, class_num=args.class_num, bottleneck_dim=args.bottleneck).npu()", _SHOT_TD),
      C("mem_label = torch.from_numpy(mem_label).cuda()", "tensor_to_device", "replace", True,
        "mem_label = torch.from_numpy(mem_label).npu()", _SHOT_TD),
      C("inputs_test = inputs_test.cuda()", "tensor_to_device", "replace", True, "inputs_test = inputs_test.npu()", _SHOT_TD),
      C("classifier_loss = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
        "classifier_loss = torch.tensor(0.0).npu()", _SHOT_TD),
      C("feas = netB(netF(inputs.cuda()))", "tensor_to_device", "replace", True, "feas = netB(netF(inputs.npu()))", _SHOT_TD),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id is silently ignored on Ascend; the run always takes NPU 0"),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)", SEED_NOTE),
  ])

E("shot_loss", "object/loss.py", "explicit_replacement",
  "tim-learn/SHOT object/loss.py (Entropy, CDAN/DANN losses, CrossEntropyLabelSmooth with use_gpu)", [
      C("[[0]] * batch_size)).float().cuda()", "tensor_to_device", "replace", True,
        "dc_target = torch.from_numpy(np.array([[1]] * batch_size + [[0]] * batch_size)).float().npu()", _SHOT_TD),
      C("if self.use_gpu: targets = targets.cuda()", "tensor_to_device", "replace", True,
        "if self.use_gpu: targets = targets.npu()",
        "use_gpu defaults to True and every caller leaves it on, so this .cuda() runs"),
  ])

# ---------------------------------------------------------------- CDAN (thuml)
E("cdan_train", "pytorch/train_image.py", "explicit_replacement",
  "thuml/CDAN pytorch/train_image.py (CDAN / CDAN+E / DANN training with config dict)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("inputs[j] = inputs[j].cuda()", "tensor_to_device", "replace", True, "inputs[j] = inputs[j].npu()", _SHOT_TD),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", _SHOT_TD),
      C("=labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()", _SHOT_TD),
      C("base_network = base_network.cuda()", "tensor_to_device", "replace", True,
        "base_network = base_network.npu()", _SHOT_TD),
      C("=random_layer.cuda()", "tensor_to_device", "replace", True, "random_layer.npu()",
        "goes with renaming RandomLayer.cuda to npu in network.py so the random matrices move too"),
      C("ad_net = ad_net.cuda()", "tensor_to_device", "replace", True, "ad_net = ad_net.npu()", _SHOT_TD),
      C("ad_net = nn.DataParallel(ad_net", "distributed_framework", "replace", True,
        "ad_net = ad_net  # nn.DataParallel is not supported on NPU; use one DDP process per NPU",
        "torch.nn.DataParallel is marked unsupported on all Ascend products (knowledge 2.7.1 list)"),
      C("base_network = nn.DataParallel(base_network", "distributed_framework", "replace", True,
        "base_network = base_network  # nn.DataParallel is not supported on NPU",
        "torch.nn.DataParallel is marked unsupported on all Ascend products"),
      C("inputs_source, inputs_target, labels_source = inputs_source.cuda()", "tensor_to_device", "replace", True,
        "inputs_source, inputs_target, labels_source = inputs_source.npu(), inputs_target.npu(), labels_source.npu()", _SHOT_TD),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        "--gpu_id (also used for the DataParallel device list) is silently ignored on Ascend"),
  ])

E("cdan_network", "pytorch/network.py", "explicit_replacement",
  "thuml/CDAN pytorch/network.py (RandomLayer with a cuda() override, ResNetFc, AdversarialNetwork)", [
      C("def cuda(self):", "tensor_to_device", "replace", True, "def npu(self):",
        "the override must carry the NPU name; otherwise Module.npu() skips it and random_matrix stays on the "
        "host, so torch.mm in forward mixes CPU and NPU tensors"),
      C("super(RandomLayer, self).cuda()", "tensor_to_device", "replace", True, "super(RandomLayer, self).npu()",
        ".cuda() fails without CUDA"),
      C("self.random_matrix = [val.cuda() for val in self.random_matrix]", "tensor_to_device", "replace", True,
        "self.random_matrix = [val.npu() for val in self.random_matrix]", "plain tensor list, not buffers"),
  ])

# ---------------------------------------------------------------- MCD (mil-tokyo/MCD_DA)
E("mcd_main", "classification/main.py", "explicit_replacement",
  "mil-tokyo/MCD_DA classification/main.py (--no-cuda flag, args.cuda)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "args.cuda = not args.no_cuda and torch.npu.is_available()",
        "only gates the seeding just below; Solver moves everything with .cuda() regardless of args.cuda"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        SEED_NOTE),
  ])

E("mcd_solver", "classification/solver.py", "explicit_replacement",
  "mil-tokyo/MCD_DA classification/solver.py (G / C1 / C2 maximum classifier discrepancy)", [
      C("self.G.cuda()", "tensor_to_device", "replace", True, "self.G.npu()", _SHOT_TD),
      C("self.C1.cuda()", "tensor_to_device", "replace", True, "self.C1.npu()", _SHOT_TD),
      C("self.C2.cuda()", "tensor_to_device", "replace", True, "self.C2.npu()", _SHOT_TD),
      C("=criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "criterion = nn.CrossEntropyLoss().npu()",
        "CrossEntropyLoss without weight has no parameters or buffers, so Module.cuda() never touches CUDA: a "
        "silent no-op, edited only for consistency"),
      C("torch.cuda.manual_seed(1)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(1)", SEED_NOTE),
      C("img_s = img_s.cuda()", "tensor_to_device", "replace", True, "img_s = img_s.npu()", _SHOT_TD),
      C("img_t = img_t.cuda()", "tensor_to_device", "replace", True, "img_t = img_t.npu()", _SHOT_TD),
      C("label_s = Variable(label_s.long().cuda())", "tensor_to_device", "replace", True,
        "label_s = Variable(label_s.long().npu())", _SHOT_TD),
      C("criterion = nn.CrossEntropyLoss(reduction='mean').cuda()", "tensor_to_device", "replace", False,
        "criterion = nn.CrossEntropyLoss(reduction='mean').npu()", "parameterless module: silent no-op"),
      C("img_s = Variable(img_s.cuda())", "tensor_to_device", "replace", True, "img_s = Variable(img_s.npu())", _SHOT_TD),
      C("img_t = Variable(img_t.cuda())", "tensor_to_device", "replace", True, "img_t = Variable(img_t.npu())", _SHOT_TD),
      C("label_s = Variable(label_s.long()).cuda()", "tensor_to_device", "replace", True,
        "label_s = Variable(label_s.long()).npu()", _SHOT_TD),
      C("img, label = img.cuda(), label.long().cuda()", "tensor_to_device", "replace", True,
        "img, label = img.npu(), label.long().npu()", _SHOT_TD),
  ])

# ---------------------------------------------------------------- MDD (thuml)
E("mdd_model", "model/MDD.py", "explicit_replacement",
  "thuml/MDD model/MDD.py (MDDNet + MDD wrapper with use_gpu)", [
      C("self.c_net = self.c_net.cuda()", "tensor_to_device", "replace", True, "self.c_net = self.c_net.npu()",
        "use_gpu=True is passed by the trainer, so this runs and fails without CUDA"),
  ])

E("mdd_train", "trainer/train.py", "explicit_replacement",
  "thuml/MDD trainer/train.py (evaluate / train loop gated on use_gpu)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("inputs = Variable(inputs.cuda())", "tensor_to_device", "replace", True, "inputs = Variable(inputs.npu())", _SHOT_TD),
      C("labels = Variable(labels.cuda())", "tensor_to_device", "replace", True, "labels = Variable(labels.npu())", _SHOT_TD),
      C("Variable(inputs_source).cuda(), Variable(", "tensor_to_device", "replace", True,
        "inputs_source, inputs_target, labels_source = Variable(inputs_source).npu(), Variable(", _SHOT_TD),
      C("inputs_target).cuda(), Variable(labels_source).cuda()", "tensor_to_device", "replace", True,
        "inputs_target).npu(), Variable(labels_source).npu()", "continuation of the same statement"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "--gpu is silently ignored on Ascend"),
  ])

# ---------------------------------------------------------------- AdaMatch (community re-implementation)
E("adamatch_train", "train_adamatch.py", "explicit_replacement",
  "community PyTorch AdaMatch re-implementation (torchrun DDP, AMP, EMA, optional torch.compile)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "raises on the CPU-only torch build; runs on every launch"),
      C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend; HCCL is the backend"),
      C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'args.device = torch.device("npu", args.local_rank)', "every batch, model and metric tensor follows args.device"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C('torch.cuda.get_device_name(args.local_rank)', "torch_cuda_api", "replace", True,
        'logger.info("NPU: %s", torch.npu.get_device_name(args.local_rank))',
        "get_device_name initialises CUDA and raises; on rank 0 of every run"),
      C("acc = torch.tensor([top1.sum, top1.count], device=args.device, dtype=torch.float64)",
        "unsupported_op_workaround", "replace", False,
        "acc = torch.tensor([top1.sum, top1.count], device=args.device, dtype=torch.float32)",
        "fp64 support on NPU/HCCL is limited (transfer_to_npu maps DoubleTensor to fp32); sample counts fit in fp32 - "
        "whether fp64 all_reduce fails is unconfirmed"),
      C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16",
        "device_capability_check", "replace", True,
        "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        "torch.cuda.is_bf16_supported() queries the current CUDA device and raises without CUDA; runs even without --amp"),
      C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
        "a CUDA GradScaler warns and disables itself without CUDA: fp16 runs lose loss scaling silently"),
      C("map_location=lambda storage, loc: storage.cuda(args.local_rank)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location=f'npu:{args.local_rank}')", "storage.cuda() fails on --resume"),
      C("model = torch.compile(model)", "compile_mode", "replace", False,
        "model = model  # keep eager: Inductor has no NPU codegen before torch_npu 2.6",
        "opt-in --compile; the pinned 2.1 stack predates NPU Inductor support (knowledge section 6); exact failure mode unconfirmed"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "synchronize initialises CUDA and raises; runs every epoch"),
      C("torch.cuda.synchronize(args.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(args.device)  # finish queued kernels before reading the clock",
        "raises without CUDA; timing would also be wrong without a device sync"),
      C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp, dtype=amp_dtype):",
        "CUDA autocast disables itself (warning) when CUDA is unavailable: --amp silently trains in fp32"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; NPU cache is simply not released"),
      C("mem = torch.cuda.max_memory_allocated(args.device)", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(args.device) / 2 ** 30",
        "returns 0 without CUDA initialised: wrong log value only"),
  ])

E("adamatch_sh", "scripts/run_digits.sh", "explicit_replacement",
  "AdaMatch re-implementation launcher (single GPU runs and torchrun, NCCL env)", [
      C("=set -e", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* is ignored by HCCL; CANN's log level is the closest knob (2 = warning)"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL reads HCCL_SOCKET_IFNAME; --standalone single-node runs work without it"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "no HCCL counterpart: HCCL uses the NPUs' own RoCE ports; silently ignored"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
        "nvidia-smi is not installed on an Ascend host; under set -e the script aborts here"),
      C("CUDA_VISIBLE_DEVICES=0 python train_adamatch.py --source mnist", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python train_adamatch.py --source mnist --target usps --amp \\", CVD0_NOTE),
      C("CUDA_VISIBLE_DEVICES=0 python train_adamatch.py --source usps", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python train_adamatch.py --source usps --target mnist --amp \\", CVD0_NOTE),
      C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPUS - 1)))",
        "ignored on Ascend; torchrun ranks map to NPU 0..N-1, which is what the mask selects anyway"),
  ])

E("adamatch_env", "environment.yml", "explicit_replacement",
  "AdaMatch re-implementation conda environment.yml (pytorch + nvidia channels)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "channel only serves pytorch-cuda / CUDA runtime packages"),
      C("- pytorch-cuda=11.8", "torch_cuda_api", "replace", True, "  - cpuonly",
        "selects the CUDA build of PyTorch; torch_npu runs on the CPU build, and aarch64 Ascend servers have no "
        "pytorch-cuda package to solve against"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post17",
        "torch-npu wheel pinned to the same torch version (2.1.0)"),
  ])

# ---------------------------------------------------------------- DAFormer / HRDA (mmseg 0.x)
E("daformer_train_tool", "tools/train.py", "explicit_replacement",
  "lhoyer/DAFormer tools/train.py (mmseg 0.16 fork building the UDA model)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", "replace", False,
        "torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(backend='hccl')",
        "mmcv 1.3 init_dist picks the device with torch.cuda.device_count()/set_device internally (from memory; "
        "unconfirmed in knowledge) - only used with --launcher"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; between run_experiments jobs the NPU cache just stays allocated"),
  ])

E("daformer_test_tool", "tools/test.py", "transfer_to_npu",
  "lhoyer/DAFormer / HRDA tools/test.py (mmseg 0.16 test script with inference-mode and HRDA flags)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "transfer_to_npu patches torch.cuda / .cuda() / current_device() used below and inside mmcv"),
      C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", "replace", True,
        "model = NPUDataParallel(model, device_ids=[0])  # mmcv.device.npu, mmcv>=1.7",
        "MMDataParallel is a torch.nn.DataParallel, which Ascend lists as unsupported; transfer_to_npu does not "
        "cover it (the mmcv NPU class is from memory)"),
      C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(",
        "unconfirmed whether mmcv 1.3's MMDistributedDataParallel internals work on torch_npu; mmcv>=1.7 ships an NPU variant"),
  ])

E("daformer_apis_train", "mmseg/apis/train.py", "explicit_replacement",
  "lhoyer/DAFormer mmseg/apis/train.py (set_random_seed, MMDataParallel / MMDistributedDataParallel)", [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("=model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
        "model = NPUDistributedDataParallel(",
        "unconfirmed whether mmcv 1.3's MMDistributedDataParallel works on torch_npu; mmcv>=1.7 ships an NPU variant"),
      C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", ".cuda() fails without CUDA"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "current_device() initialises CUDA and raises"),
      C("=model = MMDataParallel(", "distributed_framework", "replace", True, "model = NPUDataParallel(",
        "DataParallel subclass; torch.nn.DataParallel is unsupported on Ascend"),
      C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
        "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "the default single-card path; .cuda() fails"),
  ])

_COLLECT = "CUDA tensor creation fails without CUDA; HCCL needs the buffers on the NPU for broadcast/all_gather"
E("daformer_apis_test", "mmseg/apis/test.py", "explicit_replacement",
  "mmsegmentation 0.x / DAFormer mmseg/apis/test.py (single/multi GPU test, collect_results_cpu/gpu)", [
      C("=device='cuda')", "device_type", "replace", True, "device='npu')", _COLLECT),
      C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", _COLLECT),
      C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')", _COLLECT),
      C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", "replace", True,
        "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", _COLLECT),
      C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", "replace", True,
        "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", _COLLECT),
  ])

E("daformer_dacs", "mmseg/models/uda/dacs.py", "explicit_replacement",
  "lhoyer/DAFormer mmseg/models/uda/dacs.py (DACS self-training with EMA teacher and ImageNet feature distance)", [
      C("f'{torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GiB',", "torch_cuda_api", "replace", False,
        "f'{torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GiB',",
        "debug print behind print_grad_magnitude; reports 0 without CUDA"),
  ])

E("daformer_transforms", "mmseg/models/utils/dacs_transforms.py", "device_branch_or_abstraction",
  "lhoyer/DAFormer mmseg/models/utils/dacs_transforms.py (ClassMix, kornia color jitter / blur)", [])

E("daformer_runtime_cfg", "configs/_base_/default_runtime.py", "explicit_replacement",
  "mmsegmentation 0.x / DAFormer configs/_base_/default_runtime.py", [
      C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
        "passed straight to init_process_group by the dist launcher; no NCCL on Ascend"),
  ])

E("daformer_requirements", "requirements.txt", "explicit_replacement",
  "lhoyer/DAFormer requirements.txt (torch 1.7.1+cu110, mmcv-full 1.3.7)", [
      C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts take the CPU torch wheel (aarch64 uses plain PyPI); avoids pulling CUDA libraries"),
      C("--find-links https://download.openmmlab.com/mmcv/dist/cu110/torch1.7.0/index.html", "custom_cuda_extension",
        "removal", False, None, "index of CUDA-built mmcv-full wheels; useless once mmcv is built for NPU"),
      C("=mmcv-full==1.3.7", "custom_cuda_extension", "replace", True,
        "mmcv==1.7.2  # build with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "prebuilt cu110 mmcv-full ops need CUDA and torch 1.7; NPU build flag from memory (unconfirmed)"),
      C("torch==1.7.1+cu110", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA wheel, and no torch_npu exists for torch 1.7"),
      C("torchvision==0.8.2+cu110", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA wheel matching torch 1.7; must follow the torch bump"),
      C("tqdm==4.48.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch-npu pinned to the torch version (2.1.0); position in the list is arbitrary"),
  ])

E("daformer_dockerfile", "Dockerfile", "explicit_replacement",
  "mmsegmentation-style Dockerfile for DAFormer (pytorch/pytorch CUDA devel base, mmcv-full wheel)", [
      C('=ARG CUDA="11.0"', "torch_cuda_api", "removal", False, None, "only feeds the CUDA base-image tag"),
      C('=ARG CUDNN="8"', "torch_cuda_api", "removal", False, None, "only feeds the CUDA base-image tag"),
      C("FROM pytorch/pytorch:", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA devel image has no CANN; an Ascend CANN base image is needed (tag illustrative)"),
      C("ENV TORCH_CUDA_ARCH_LIST", "custom_cuda_extension", "removal", False, None, "nvcc arch list; meaningless without nvcc"),
      C("ENV TORCH_NVCC_FLAGS", "custom_cuda_extension", "removal", False, None, "nvcc flags; meaningless without nvcc"),
      C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "replace", True, 'ENV FORCE_NPU="1"',
        "forces CUDAExtension builds; the ported image builds mmcv from source, which would then look for nvcc "
        "(FORCE_NPU name from memory, unconfirmed)"),
      C("3bf863cc.pub", "torch_cuda_api", "removal", False, None, "NVIDIA apt key; irrelevant on a CANN base image"),
      C("7fa2af80.pub", "torch_cuda_api", "removal", False, None, "NVIDIA apt key; irrelevant on a CANN base image"),
      C("&& rm -rf /var/lib/apt/lists/*", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17 pyyaml decorator attrs",
        "the CANN base image carries no PyTorch; torch_npu must be installed next to the CPU torch build"),
      C("RUN pip install --no-cache-dir mmcv-full==1.3.7", "custom_cuda_extension", "replace", True,
        "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install --no-cache-dir mmcv==1.7.2",
        "cu110 wheel contains CUDA kernels; mmcv ops must be built for NPU (flags from memory, unconfirmed)"),
  ])

# ---------------------------------------------------------------- FDA
_FFT_NOTE = ("torch.fft.fftshift/ifftshift are marked unsupported on all Ascend products in the 2.7.1 list and by "
             "msFmkTransplt; runtime behaviour unconfirmed - torch.roll (NPU kernel) is the drop-in")
_ABS_NOTE = ("Ascend's 2.7.1 list gives torch.abs no complex dtypes; behaviour on complex64 (CPU fallback or error) "
             "unconfirmed")
E("fda_utils", "utils/fda.py", "explicit_replacement",
  "YanchaoYang/FDA utils (FDA_source_to_target) as ported to torch.fft in later forks", [
      C("amp_src, pha_src = torch.abs(fft_src), torch.angle(fft_src)", "unsupported_op_workaround", "replace", False,
        "amp_src, pha_src = torch.sqrt(fft_src.real ** 2 + fft_src.imag ** 2), torch.atan2(fft_src.imag, fft_src.real)",
        _ABS_NOTE),
      C("amp_trg = torch.abs(fft_trg)", "unsupported_op_workaround", "replace", False,
        "amp_trg = torch.sqrt(fft_trg.real ** 2 + fft_trg.imag ** 2)", _ABS_NOTE),
      C("amp_src = torch.fft.fftshift(amp_src, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
        "amp_src = torch.roll(amp_src, shifts=(amp_src.shape[-2] // 2, amp_src.shape[-1] // 2), dims=(-2, -1))", _FFT_NOTE),
      C("amp_trg = torch.fft.fftshift(amp_trg, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
        "amp_trg = torch.roll(amp_trg, shifts=(amp_trg.shape[-2] // 2, amp_trg.shape[-1] // 2), dims=(-2, -1))", _FFT_NOTE),
      C("amp_src_ = torch.fft.ifftshift(amp_src_, dim=(-2, -1))", "unsupported_op_workaround", "replace", False,
        "amp_src_ = torch.roll(amp_src_, shifts=(-(amp_src_.shape[-2] // 2), -(amp_src_.shape[-1] // 2)), dims=(-2, -1))",
        _FFT_NOTE),
      C("self.mean_img = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1).cuda()", "tensor_to_device",
        "replace", True, "self.mean_img = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1).npu()",
        ".cuda() fails without CUDA"),
  ])
