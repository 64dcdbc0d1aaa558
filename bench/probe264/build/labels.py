# Labels for probe264 (test-time adaptation / source-free DA, CUDA -> Ascend NPU).
# One entry per upstream file; one change per line a careful porter would edit.
# Policy and the judgement calls behind `required` are written up in ../README.md.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Recurring notes -----------------------------------------------------------------------------
IMPORT_NOTE = ("entry script: torch_npu must be imported before any NPU call for the torch versions these "
               "projects pin (autoload only from torch_npu 2.5.1)")
CUDA_MOVE = "Tensor/Module.cuda() raises on a torch build without CUDA; move to the NPU instead"
SEED_NOTE = ("torch.cuda.manual_seed* is a lazy no-op without CUDA (no error). torch.manual_seed on the line above "
             "already seeds custom devices in torch>=2.1, so the NPU RNG is seeded anyway; unconfirmed in the "
             "knowledge notes, so not required")
VISIBLE_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every NPU stays visible and the job "
                "silently lands on device 0 instead of the requested one")
SETENV_NOTE = ("CANN environment (set_env.sh) must be sourced before python imports torch_npu; not required "
               "if the host already sources it in the login shell (unconfirmed which)")

# ------------------------------------------------------------------------------------------------
# TENT
# ------------------------------------------------------------------------------------------------
E("tent_cifar10c", "tent/cifar10c.py", "explicit_replacement",
  "TENT cifar10c.py (yacs cfg.MODEL.ADAPTATION, RobustBench load_model(...).cuda())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("cfg.CORRUPTION.DATASET, ThreatModel.corruptions).cuda()", "tensor_to_device", "replace", True,
        "cfg.CORRUPTION.DATASET, ThreatModel.corruptions).npu()",
        "continuation line of load_model(...).cuda(); " + CUDA_MOVE),
      C("x_test, y_test = x_test.cuda(), y_test.cuda()", "tensor_to_device", "replace", True,
        "x_test, y_test = x_test.npu(), y_test.npu()",
        CUDA_MOVE + "; clean_accuracy() then follows x.device, so nothing else changes"),
  ])

E("tent_tent", "tent/tent.py", "explicit_replacement",
  "TENT tent.py (entropy minimisation on BN affine params; device-agnostic)",
  [])

E("tent_conf", "tent/conf.py", "explicit_replacement",
  "TENT conf.py (yacs defaults, CUDNN.BENCHMARK, seeding, version log)",
  [
      C("torch.cuda.manual_seed_all(cfg.RNG_SEED)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(cfg.RNG_SEED)", SEED_NOTE),
  ])

E("tent_env", "tent/environment.yml", "explicit_replacement",
  "TENT environment.yml (conda export pinned to cudatoolkit 10.1 / pytorch 1.6 CUDA build)",
  [
      C("- cudatoolkit=10.1.243=h6bb024c_0", "torch_cuda_api", "removal", False, None,
        "CUDA runtime is dead weight on an Ascend host (the export is linux-64 only, so it still installs)"),
      C("- pytorch=1.6.0=py3.8_cuda10.1.243_cudnn7.6.3_0", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0=py3.8_cpu_0",
        "CUDA build of torch 1.6; no torch_npu exists for 1.6, use a CPU torch matching the torch-npu wheel"),
      C("- torchvision=0.7.0=py38_cu101", "torch_cuda_api", "replace", True,
        "- torchvision=0.16.0=py38_cpu",
        "cu101 torchvision must follow the torch version change (0.16 pairs with torch 2.1)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch_npu wheel pin (pairs with torch 2.1.0 and a CANN 8.x toolkit)"),
  ])

# ------------------------------------------------------------------------------------------------
# CoTTA
# ------------------------------------------------------------------------------------------------
E("cotta_cotta", "cotta/cotta.py", "explicit_replacement",
  "CoTTA cotta.py (EMA teacher, augmentation averaging, stochastic restore)",
  [
      C("mask = (torch.rand(p.shape) < self.rst).float().cuda()", "tensor_to_device", "replace", True,
        "mask = (torch.rand(p.shape) < self.rst).float().to(p.device)",
        "stochastic-restore mask is drawn on the CPU and pushed with .cuda(); raises on NPU host"),
  ])

E("cotta_transforms", "cotta/my_transforms.py", "explicit_replacement",
  "CoTTA my_transforms.py (GaussianNoise/Clip/ColorJitterPro on tensors; follows img.device)",
  [])

E("cotta_run", "cotta/run_cifar10.sh", "explicit_replacement",
  "CoTTA run_cifar10.sh (conda activate + CUDA_VISIBLE_DEVICES sweep)",
  [
      C("=conda activate cotta", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU}", VISIBLE_NOTE),
  ])

# ------------------------------------------------------------------------------------------------
# EATA
# ------------------------------------------------------------------------------------------------
E("eata_main", "eata/main.py", "explicit_replacement",
  "EATA main.py (ImageNet-C, --gpu flag, Fisher information on GPU, empty_cache)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(args.gpu, non_blocking=True)", CUDA_MOVE),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():",
        "False on the NPU host, so target stays on the CPU and accuracy(output, target) hits a device mismatch"),
      C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(args.gpu, non_blocking=True)", CUDA_MOVE),
      C("train_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
        "train_loss_fn = nn.CrossEntropyLoss().npu()",
        "CrossEntropyLoss has no parameters or buffers, so Module.cuda() moves nothing and does not raise; "
        "edited for consistency only"),
      C("images, targets = images.cuda(args.gpu, non_blocking=True), targets.cuda(args.gpu, non_blocking=True)",
        "tensor_to_device", "replace", True,
        "images, targets = images.npu(args.gpu, non_blocking=True), targets.npu(args.gpu, non_blocking=True)",
        "Fisher estimation batch; " + CUDA_MOVE),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", SEED_NOTE),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "initialises CUDA -> raises without CUDA"),
      C("subnet = subnet.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "subnet = subnet.npu(args.gpu)", CUDA_MOVE),
      C("subnet = torch.nn.DataParallel(subnet).cuda()", "unsupported_op_workaround", "replace", True,
        "subnet = subnet.npu()",
        "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's API list; run single-device (or DDP)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "no-op without CUDA (is_initialized() is False); NPU cache simply is not released between corruptions"),
  ])

E("eata_eata", "eata/eata.py", "explicit_replacement",
  "EATA eata.py (reliable/non-redundant sample filtering, Fisher regulariser; device-agnostic)",
  [])

E("eata_dataset", "eata/dataset/selectedRotateImageFolder.py", "explicit_replacement",
  "EATA/TTT dataset/selectedRotateImageFolder.py (ImageFolder + rotation labels, pin_memory loaders)",
  [])

E("eata_run", "eata/scripts/run_imagenet_c.sh", "explicit_replacement",
  "EATA/SAR style ImageNet-C sweep (nvidia-smi check, CUDA_VISIBLE_DEVICES per run)",
  [
      C("export OMP_NUM_THREADS=4", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv -i ${GPU}", "device_capability_check",
        "replace", True, "npu-smi info -t usages -i ${GPU}",
        "nvidia-smi is absent on an Ascend host and the script runs under set -e, so the sweep aborts here"),
      C("    CUDA_VISIBLE_DEVICES=${GPU} python3 main.py \\", "env_var", "replace", True,
        "    ASCEND_RT_VISIBLE_DEVICES=${GPU} python3 main.py \\", VISIBLE_NOTE),
      C("  CUDA_VISIBLE_DEVICES=${GPU} python3 main.py --data ${DATA}", "env_var", "replace", True,
        "  ASCEND_RT_VISIBLE_DEVICES=${GPU} python3 main.py --data ${DATA} --data_corruption ${DATA_C} \\",
        VISIBLE_NOTE),
  ])

# ------------------------------------------------------------------------------------------------
# SAR
# ------------------------------------------------------------------------------------------------
E("sar_main", "sar/main.py", "explicit_replacement",
  "SAR main.py (timm ResNet50-GN / ViT-B, SAM optimizer, mix_shifts / bs1 / label_shifts)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", CUDA_MOVE),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on the NPU host: target is left on the CPU and accuracy() fails with a device mismatch"),
      C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", CUDA_MOVE),
      C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", CUDA_MOVE),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", SEED_NOTE),
      C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(args.gpu, non_blocking=True)", CUDA_MOVE),
      C("if torch.cuda.is_available(): target = target.cuda(args.gpu, non_blocking=True)", "torch_cuda_api",
        "replace", True, "if torch.npu.is_available(): target = target.npu(args.gpu, non_blocking=True)",
        "one-line guard + move: guard is False on NPU and .cuda() would raise anyway"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; the freed model's NPU blocks stay cached (memory only)"),
  ])

E("sar_sar", "sar/sar.py", "explicit_replacement",
  "SAR sar.py + SAM (sharpness-aware entropy, model recovery; shared_device follows params)",
  [])

E("sar_utils", "sar/utils/utils.py", "explicit_replacement",
  "SAR/EATA utils (logger, seeding, env report with get_device_properties, GPU timer / peak memory)",
  [
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", SEED_NOTE),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "only decides whether the hardware is logged; unchanged it warns 'running on CPU' and returns"),
      C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
        "for i in range(torch.npu.device_count()):", "returns 0 without CUDA -> nothing logged (log only)"),
      C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(i)", "initialises CUDA -> raises once the loop runs"),
      C('f"sm_{props.major}{props.minor}, {props.multi_processor_count} SMs")', "device_capability_check",
        "replace", False, 'f"{props.cube_core_num} cube / {props.vector_core_num} vector cores")',
        "NPU device properties only carry name, total_memory, L2_cache_size, cube_core_num, vector_core_num; "
        "the other fields come back empty (log only)"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA -> raises; on NPU the sync is needed for honest timings"),
      C("torch.cuda.synchronize()  # wait for queued kernels", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for queued kernels before stopping the clock",
        "initialises CUDA -> raises"),
      C("return torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", True,
        "return torch.npu.max_memory_allocated() / 1024 ** 2",
        "returns 0 without CUDA: the reported peak memory is silently wrong"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device -> raises"),
  ])

E("sar_reqs", "sar/requirements.txt", "explicit_replacement",
  "SAR requirements.txt (cu113 wheel index, +cu113 torch/torchvision pins)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu docs install CPU torch from whl/cpu on x86 (plain PyPI on aarch64)"),
      C("torch==1.12.1+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu113 build does not exist for aarch64 and there is no torch_npu for 1.12; pin a torch_npu-supported torch"),
      C("torchvision==0.13.1+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "must match the new torch version"),
      C("timm==0.6.12", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu wheel pin, added with the torch block"),
  ])

# ------------------------------------------------------------------------------------------------
# SHOT
# ------------------------------------------------------------------------------------------------
E("shot_source", "shot/object/image_source.py", "explicit_replacement",
  "SHOT object/image_source.py (source training, os.environ CUDA_VISIBLE_DEVICES = args.gpu_id)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", CUDA_MOVE),
      C("outputs = netC(netB(netF(inputs.cuda())))", "tensor_to_device", "replace", True,
        "outputs = netC(netB(netF(inputs.npu())))", CUDA_MOVE),
      C("netF = network.ResBase(res_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.ResBase(res_name=args.net).npu()", CUDA_MOVE),
      C("netF = network.VGGBase(vgg_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.VGGBase(vgg_name=args.net).npu()", CUDA_MOVE),
      C("netB = network.feat_bootleneck(type=args.classifier, feature_dim=netF.in_features, bottleneck_dim=args.bottleneck).cuda()",
        "tensor_to_device", "replace", True,
        "netB = network.feat_bootleneck(type=args.classifier, feature_dim=netF.in_features, bottleneck_dim=args.bottleneck).npu()",
        CUDA_MOVE),
      C("netC = network.feat_classifier(type=args.layer, class_num=args.class_num, bottleneck_dim=args.bottleneck).cuda()",
        "tensor_to_device", "replace", True,
        "netC = network.feat_classifier(type=args.layer, class_num=args.class_num, bottleneck_dim=args.bottleneck).npu()",
        CUDA_MOVE),
      C("inputs_source, labels_source = inputs_source.cuda(), labels_source.cuda()", "tensor_to_device", "replace",
        True, "inputs_source, labels_source = inputs_source.npu(), labels_source.npu()", CUDA_MOVE),
      C("netF, netB, netC = netF.cuda(), netB.cuda(), netC.cuda()", "tensor_to_device", "replace", True,
        "netF, netB, netC = netF.npu(), netB.npu(), netC.npu()", CUDA_MOVE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id', VISIBLE_NOTE),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
        SEED_NOTE),
  ])

E("shot_target", "shot/object/image_target.py", "explicit_replacement",
  "SHOT object/image_target.py (IM loss + self-supervised pseudo labels via obtain_label clustering)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", CUDA_MOVE),
      C("netF = network.ResBase(res_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.ResBase(res_name=args.net).npu()", CUDA_MOVE),
      C("netF = network.VGGBase(vgg_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.VGGBase(vgg_name=args.net).npu()", CUDA_MOVE),
      C("netB = network.feat_bootleneck(", "tensor_to_device", "replace", True,
        "netB = network.feat_bootleneck(type=args.classifier, feature_dim=netF.in_features, bottleneck_dim=args.bottleneck).npu()",
        CUDA_MOVE),
      C("netC = network.feat_classifier(", "tensor_to_device", "replace", True,
        "netC = network.feat_classifier(type=args.layer, class_num=args.class_num, bottleneck_dim=args.bottleneck).npu()",
        CUDA_MOVE),
      C("mem_label = torch.from_numpy(mem_label).cuda()", "tensor_to_device", "replace", True,
        "mem_label = torch.from_numpy(mem_label).npu()", CUDA_MOVE),
      C("inputs_test = inputs_test.cuda()", "tensor_to_device", "replace", True,
        "inputs_test = inputs_test.npu()", CUDA_MOVE),
      C("classifier_loss = torch.tensor(0.0).cuda()", "tensor_to_device", "replace", True,
        "classifier_loss = torch.tensor(0.0).npu()", "only on the cls_par == 0 ablation path; " + CUDA_MOVE),
      C("feas = netB(netF(inputs.cuda()))", "tensor_to_device", "replace", True,
        "feas = netB(netF(inputs.npu()))", CUDA_MOVE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id', VISIBLE_NOTE),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
        SEED_NOTE),
  ])

E("shot_network", "shot/object/network.py", "explicit_replacement",
  "SHOT network.py (ResBase/VGGBase, bottleneck, weight-norm classifier, DANN discriminator)",
  [])

E("shot_loss", "shot/object/loss.py", "explicit_replacement",
  "SHOT loss.py (Entropy, CDAN/DANN, CrossEntropyLabelSmooth with use_gpu)",
  [
      C("dc_target = torch.from_numpy(np.array([[1]] * batch_size + [[0]] * batch_size)).float().cuda()",
        "tensor_to_device", "replace", True,
        "dc_target = torch.from_numpy(np.array([[1]] * batch_size + [[0]] * batch_size)).float().to(ad_out.device)",
        "CDAN baseline loss; " + CUDA_MOVE),
      C("if self.use_gpu: targets = targets.cuda()", "tensor_to_device", "replace", True,
        "if self.use_gpu: targets = targets.to(log_probs.device)",
        "use_gpu defaults to True and image_source.py relies on the default; " + CUDA_MOVE),
  ])

E("shot_run", "shot/object/run.sh", "explicit_replacement",
  "SHOT run.sh (source then target stage per domain; device via --gpu_id)",
  [
      C("gpu=${GPU:-0}", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
  ])

# ------------------------------------------------------------------------------------------------
# NRC
# ------------------------------------------------------------------------------------------------
E("nrc_visda", "nrc/train_tar_visda.py", "explicit_replacement",
  "NRC train_tar_visda.py (feature/score banks, kNN affinity with topk, SHOT source checkpoints)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=inputs = inputs.cuda()", "tensor_to_device", "replace", True, "inputs = inputs.npu()", CUDA_MOVE),
      C("netF = network.ResBase(res_name=args.net).cuda()", "tensor_to_device", "replace", True,
        "netF = network.ResBase(res_name=args.net).npu()", CUDA_MOVE),
      C("=bottleneck_dim=args.bottleneck).cuda()", "tensor_to_device", "replace", True,
        "bottleneck_dim=args.bottleneck).npu()", "continuation line of feat_bootleneck(...).cuda(); " + CUDA_MOVE),
      C("class_num=args.class_num, bottleneck_dim=args.bottleneck).cuda()", "tensor_to_device", "replace", True,
        "class_num=args.class_num, bottleneck_dim=args.bottleneck).npu()",
        "continuation line of feat_classifier(...).cuda(); " + CUDA_MOVE),
      C("netF.load_state_dict(torch.load(modelpath))", "device_type", "replace", True,
        "netF.load_state_dict(torch.load(modelpath, map_location='cpu'))",
        "SHOT's released source models were saved from CUDA tensors; torch.load without map_location fails "
        "('Attempting to deserialize object on a CUDA device') when CUDA is unavailable"),
      C("netB.load_state_dict(torch.load(modelpath))", "device_type", "replace", True,
        "netB.load_state_dict(torch.load(modelpath, map_location='cpu'))", "same CUDA-saved checkpoint issue"),
      C("netC.load_state_dict(torch.load(modelpath))", "device_type", "replace", True,
        "netC.load_state_dict(torch.load(modelpath, map_location='cpu'))", "same CUDA-saved checkpoint issue"),
      C("score_bank = torch.randn(num_sample, 12).cuda()", "tensor_to_device", "replace", True,
        "score_bank = torch.randn(num_sample, 12).npu()", "score bank lives on the device; " + CUDA_MOVE),
      C("output = netB(netF(inputs.cuda()))", "tensor_to_device", "replace", True,
        "output = netB(netF(inputs.npu()))", CUDA_MOVE),
      C("inputs_test = inputs_test.cuda()", "tensor_to_device", "replace", True,
        "inputs_test = inputs_test.npu()", CUDA_MOVE),
      C("weight_kk.cuda()).sum(1))", "tensor_to_device", "replace", True,
        "weight_kk.npu()).sum(1))  # kl_div here equals to dot product since we do not use log for score_near_kk",
        "weights are computed from the CPU feature bank and moved for the KL term; " + CUDA_MOVE),
      C("weight.cuda()).sum(1))", "tensor_to_device", "replace", True, "weight.npu()).sum(1))", CUDA_MOVE),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu_id',
        VISIBLE_NOTE + " (default gpu_id is '8', which would also be out of range on an 8-NPU box once renamed)"),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
        SEED_NOTE),
  ])

# ------------------------------------------------------------------------------------------------
# RobustBench
# ------------------------------------------------------------------------------------------------
E("rb_utils", "robustbench/utils.py", "device_branch_or_abstraction",
  "RobustBench utils.py (load_model with map_location=cpu, clean_accuracy following x.device, CLI args)",
  [
      C("parser.add_argument('--device', type=str, default='cuda:0'", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu:0', help='device to use for computations')",
        "default device string flows into torch.device(args.device) and model.to(device) in eval.py"),
  ])

E("rb_eval", "robustbench/eval.py", "device_branch_or_abstraction",
  "RobustBench eval.py (benchmark(): device passed around, AutoAttack, corruption sweep)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "python -m robustbench.eval entry point; " + IMPORT_NOTE),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(args.seed)", SEED_NOTE),
  ])

# ------------------------------------------------------------------------------------------------
# test-time-adaptation benchmark (classification/)
# ------------------------------------------------------------------------------------------------
E("tta_test_time", "classification/test_time.py", "device_branch_or_abstraction",
  "test-time-adaptation benchmark classification/test_time.py (registry of methods, settings, device var)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
        "silently falls back to the CPU on an NPU host"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "only gates the hardware report / TF32 toggles; unchanged it just logs 'No GPU found'"),
      C("name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", True,
        "name = torch.npu.get_device_name(0)", "initialises CUDA -> raises"),
      C("cap = torch.cuda.get_device_capability(0)", "device_capability_check", "replace", True,
        "cap = (0, 0)  # no CUDA compute capability on Ascend; torch.npu.get_device_capability() returns None",
        "raises without CUDA; the NPU form returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, "
        "so cap[0] below would fail"),
      C('logger.info(f"Running on {torch.cuda.device_count()} x {name}', "torch_cuda_api", "replace", False,
        'logger.info(f"Running on {torch.npu.device_count()} x {name}")',
        "device_count() is 0 without CUDA: wrong number in a log line only"),
      C("peak GPU memory: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GB", "torch_cuda_api", "replace",
        True, 'f"peak NPU memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GB")',
        "returns 0 without CUDA: the reported peak memory is silently wrong"),
  ])

E("tta_base", "classification/methods/base.py", "device_branch_or_abstraction",
  "test-time-adaptation benchmark methods/base.py (TTAMethod, sliding window, GradScaler/autocast)",
  [
      C('self.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'self.device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
        "becomes 'cpu' on an NPU host while the model is on the NPU; subclasses .to(self.device) their masks"),
      C("self.pointer = torch.tensor([0], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "self.pointer = torch.tensor([0], dtype=torch.long).to(self.device)", CUDA_MOVE),
      C("self.scaler = torch.cuda.amp.GradScaler(init_scale=1024)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(init_scale=1024) if self.mixed_precision else None",
        "CUDA GradScaler disables itself without CUDA; once autocast runs fp16 on the NPU, gradients are then "
        "unscaled and can underflow"),
      C("with torch.cuda.amp.autocast(enabled=self.mixed_precision):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.mixed_precision):",
        "CUDA autocast silently disables itself on a host without CUDA: runs fp32 (perf only)"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.mixed_precision):', "amp",
        "replace", False,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.mixed_precision):',
        "device_type='cuda' autocast is disabled with a warning without CUDA: fp32 fallback, perf only"),
  ])

E("tta_rmt", "classification/methods/rmt.py", "device_branch_or_abstraction",
  "test-time-adaptation benchmark methods/rmt.py (RMT: source prototypes, contrastive loss, mean teacher)",
  [
      C("tmp_features = self.feature_extractor(x.cuda())", "tensor_to_device", "replace", True,
        "tmp_features = self.feature_extractor(x.to(self.device))", CUDA_MOVE),
      C("self.prototypes_src = self.prototypes_src.cuda().unsqueeze(1)", "tensor_to_device", "replace", True,
        "self.prototypes_src = self.prototypes_src.to(self.device).unsqueeze(1)", CUDA_MOVE),
      C("step=1).cuda().long()", "tensor_to_device", "replace", True,
        "self.prototype_labels_src = torch.arange(start=0, end=self.num_classes, step=1).to(self.device).long()",
        CUDA_MOVE),
      C("nn.Linear(self.projection_dim, self.projection_dim)).cuda()", "tensor_to_device", "replace", True,
        "nn.Linear(self.projection_dim, self.projection_dim)).to(self.device)", CUDA_MOVE),
      C("imgs_src = batch[0].cuda()", "tensor_to_device", "replace", True,
        "imgs_src = batch[0].to(self.device)", CUDA_MOVE),
      C('if self.mixed_precision and self.device == "cuda":', "device_type", "replace", False,
        'if self.mixed_precision and self.device in ("cuda", "npu"):',
        "string comparison against 'cuda': once self.device is 'npu' the AMP branch is silently skipped (perf only)"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
        "CUDA autocast disables itself without CUDA: fp32 fallback, perf only"),
      C("features_src = self.feature_extractor(imgs_src.cuda())", "tensor_to_device", "replace", True,
        "features_src = self.feature_extractor(imgs_src.to(self.device))", CUDA_MOVE),
      C("loss_ce_src = F.cross_entropy(outputs_src, labels_src.cuda().long())", "tensor_to_device", "replace",
        True, "loss_ce_src = F.cross_entropy(outputs_src, labels_src.to(self.device).long())", CUDA_MOVE),
  ])

E("tta_norm", "classification/methods/norm.py", "device_branch_or_abstraction",
  "test-time-adaptation benchmark methods/norm.py (BN-test, AlphaBN, DUA running-stat updates)",
  [
      C("b_var, b_mean = torch.var_mean(x, dim=[0, 2, 3], unbiased=False)", "unsupported_op_workaround", "replace",
        False, "b_mean = x.mean(dim=[0, 2, 3]); b_var = x.var(dim=[0, 2, 3], unbiased=False)",
        "Ascend's 2.7.1 API list and msFmkTransplt mark torch.var_mean unsupported, yet var_mean has an aten "
        "kernel in the op-plugin lists; unconfirmed, so split into mean/var defensively"),
  ])

E("tta_bench", "classification/benchmark_efficiency.py", "device_branch_or_abstraction",
  "efficiency benchmark script (CUDA events, peak memory, get_device_name) for TTA methods",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('DEVICE = torch.device("cuda:0")', "device_type", "replace", True, 'DEVICE = torch.device("npu:0")',
        "hard-coded CUDA device used for model placement and inputs"),
      C('y = torch.randint(0, num_classes, (batch_size,), device="cuda")', "device_type", "replace", True,
        'y = torch.randint(0, num_classes, (batch_size,), device=DEVICE)', "literal 'cuda' device string"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA event cannot be recorded without CUDA"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA event cannot be recorded without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA -> raises"),
      C("torch.cuda.synchronize(DEVICE)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(DEVICE)",
        "initialises CUDA -> raises"),
      C("base_model = base_model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace",
        False, "base_model = base_model.contiguous() if hasattr(base_model, 'contiguous') else base_model",
        "msFmkTransplt README lists channels_last as unsupported on NPU (use contiguous); optional flag, "
        "exact failure mode unconfirmed"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; memory only"),
      C("torch.cuda.reset_peak_memory_stats(DEVICE)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(DEVICE)", "raises without CUDA (and rejects an npu device)"),
      C("peak_gb = torch.cuda.max_memory_allocated(DEVICE) / 1024 ** 3", "torch_cuda_api", "replace", True,
        "peak_gb = torch.npu.max_memory_allocated(DEVICE) / 1024 ** 3",
        "reports 0 / rejects the npu device: the efficiency table would be wrong"),
      C('"gpu": torch.cuda.get_device_name(DEVICE),', "torch_cuda_api", "replace", True,
        '"gpu": torch.npu.get_device_name(DEVICE),', "initialises CUDA -> raises"),
  ])

E("tta_docker", "classification/Dockerfile", "explicit_replacement",
  "Dockerfile for the TTA benchmark (nvidia/cuda base, cu118 torch wheels, NVIDIA_* env)",
  [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image; needs a CANN base (driver mounted from the host) - tag illustrative"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "NVIDIA container-runtime variable is ignored; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime knob, meaningless on Ascend"),
      C("--index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu",
        "cu118 wheels: torch_npu needs the CPU build on x86 (PyPI on aarch64) and a torch_npu-supported version"),
      C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post10", "install the torch_npu wheel"),
      C("ENV CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
        "cuBLAS determinism knob, ignored on NPU"),
  ])

# ------------------------------------------------------------------------------------------------
# AdaContrast
# ------------------------------------------------------------------------------------------------
E("ada_main", "adacontrast/main_adacontrast.py", "explicit_replacement",
  "AdaContrast main (hydra, mp.spawn one process per GPU, DDP, MoCo queue, kNN pseudo-label refinement)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('os.environ.setdefault("NCCL_P2P_DISABLE", "1")', "env_var", "removal", False, None,
        "NCCL-only workaround; HCCL ignores it"),
      C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
        'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
        "HCCL has its own variable (torch_npu watchdog; default already 1 per MindCluster doc)"),
      C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "ngpus_per_node = torch.npu.device_count()",
        "0 without CUDA -> mp.spawn(nprocs=0) and world_size 0"),
      C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "initialises CUDA -> raises"),
      C("=src_model.cuda(args.gpu)", "tensor_to_device", "replace", True, "src_model.npu(args.gpu)", CUDA_MOVE),
      C("=momentum_model.cuda(args.gpu)", "tensor_to_device", "replace", True, "momentum_model.npu(args.gpu)",
        CUDA_MOVE),
      C("=src_model.cuda()", "tensor_to_device", "replace", True, "src_model.npu()", CUDA_MOVE),
      C("=momentum_model.cuda()", "tensor_to_device", "replace", True, "momentum_model.npu()", CUDA_MOVE),
      C("torch.cuda.set_device(args.gpu)  # single device", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)  # single device, no DDP", "initialises CUDA -> raises"),
      C("src_model = src_model.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "src_model = src_model.npu(args.gpu)", CUDA_MOVE),
      C("momentum_model = momentum_model.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "momentum_model = momentum_model.npu(args.gpu)", CUDA_MOVE),
      C("=).cuda()", "tensor_to_device", "replace", True, ").npu()",
        "closing line of AdaMoCo(...).cuda(); " + CUDA_MOVE),
      C("imgs = imgs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.npu(args.gpu, non_blocking=True)", CUDA_MOVE),
      C('gt_labels = torch.cat(gt_labels).to("cuda")', "device_type", "replace", True,
        'gt_labels = torch.cat(gt_labels).to("npu")', "literal 'cuda' device string"),
      C('indices = torch.cat(indices).to("cuda")', "device_type", "replace", True,
        'indices = torch.cat(indices).to("npu")', "literal 'cuda' device string"),
      C("rand_idxs = torch.randperm(len(features)).cuda()", "tensor_to_device", "replace", True,
        "rand_idxs = torch.randperm(len(features)).npu()", CUDA_MOVE),
      C('idxs_replace = torch.arange(start, end).cuda() % len(banks["features"])', "tensor_to_device", "replace",
        True, 'idxs_replace = torch.arange(start, end).npu() % len(banks["features"])', CUDA_MOVE),
      C('zero_tensor = torch.tensor([0.0]).to("cuda")', "device_type", "replace", True,
        'zero_tensor = torch.tensor([0.0]).to("npu")', "literal 'cuda' device string"),
      C('idxs = idxs.to("cuda")', "device_type", "replace", True, 'idxs = idxs.to("npu")',
        "literal 'cuda' device string"),
      C('images[0].to("cuda"),', "device_type", "replace", True, 'images[0].to("npu"),',
        "literal 'cuda' device string"),
      C('images[1].to("cuda"),', "device_type", "replace", True, 'images[1].to("npu"),',
        "literal 'cuda' device string"),
      C('images[2].to("cuda"),', "device_type", "replace", True, 'images[2].to("npu"),',
        "literal 'cuda' device string"),
      C("labels_ins = torch.zeros(logits_ins.shape[0], dtype=torch.long).cuda()", "tensor_to_device", "replace",
        True, "labels_ins = torch.zeros(logits_ins.shape[0], dtype=torch.long).npu()", CUDA_MOVE),
      C('torch.tensor([float("-inf")]).cuda())', "tensor_to_device", "replace", True,
        'logits_ins = torch.where(mask, logits_ins, torch.tensor([float("-inf")]).npu())', CUDA_MOVE),
  ])

E("ada_config", "adacontrast/configs/root.yaml", "explicit_replacement",
  "AdaContrast hydra root config (dist_backend / dist_url / multiprocessing_distributed)",
  [
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl",
        "feeds dist.init_process_group(backend=args.dist_backend); NCCL is not available on Ascend"),
  ])

E("ada_run", "adacontrast/scripts/train_visda_target.sh", "explicit_replacement",
  "AdaContrast VisDA-C target launcher (4-GPU DDP, NCCL env, hydra overrides)",
  [
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "ignored on Ascend: all NPUs stay visible, device_count() spawns one rank per NPU and the "
        "per-rank batch size changes silently"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
        "NCCL logging knob; HCCL logging goes through ASCEND_GLOBAL_LOG_LEVEL"),
      C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
        "HCCL equivalent for host-NIC selection; single-node run works without it"),
      C("export OMP_NUM_THREADS=8", "import_torch_npu", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
      C("dist_backend=nccl", "dist_backend", "replace", True,
        '        dist_url="tcp://localhost:${PORT}" dist_backend=hccl multiprocessing_distributed=true \\',
        "command-line override wins over the yaml; NCCL is not available on Ascend"),
  ])
