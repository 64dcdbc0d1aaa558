# Labels for probe263 (long-tailed visual recognition research code, CUDA -> Ascend NPU).
# One C(...) per line a careful porter edits; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported to register the npu device and torch.npu "
               "(mandatory before torch_npu 2.5.1, still recommended after)")
NOOP_LOSS_CUDA = ("loss module holds no parameters or buffers, so Module.cuda() touches no tensor and is a silent "
                  "no-op on an NPU host; changed for consistency only")
SEED_NOTE = ("torch.cuda seeding is lazily queued and never runs without CUDA (silent no-op); "
             "torch.manual_seed already seeds the npu generator")

# ---------------------------------------------------------------- LDAM-DRW
E("ldam_cifar_train", "cifar_train.py", "explicit_replacement",
  "LDAM-DRW cifar_train.py (kaidic/LDAM-DRW): --gpu flag, per-class weights, DataParallel fallback", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host, but this single-process script never uses the value"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "torch.cuda.set_device raises without CUDA"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True,
      "model = model.npu(args.gpu)", "Module.cuda with parameters raises without CUDA"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (use one card or DDP+HCCL); .cuda() also fails. "
      "Follow-on edit (unlabelled): inputs are only moved when --gpu is set, so that guard must go too"),
    C("checkpoint = torch.load(args.resume, map_location='cuda:0')", "device_type", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='npu:0')", "map_location 'cuda:0' fails without CUDA"),
    C("best_acc1 = best_acc1.to(args.gpu)", "tensor_to_device", "replace", True,
      "best_acc1 = best_acc1.to(f'npu:{args.gpu}')",
      "a bare int device in Tensor.to means cuda:N (transfer_to_npu rewrites ints for exactly this reason)"),
    C("per_cls_weights = torch.cuda.FloatTensor(per_cls_weights)", "torch_cuda_api", "replace", True,
      "per_cls_weights = torch.FloatTensor(per_cls_weights).npu(args.gpu)",
      "constructs a CUDA tensor; raises without CUDA (Reweight rule)"),
    C("per_cls_weights = torch.FloatTensor(per_cls_weights).cuda(args.gpu)", "tensor_to_device", "replace", True,
      "per_cls_weights = torch.FloatTensor(per_cls_weights).npu(args.gpu)", "DRW class weights moved to CUDA"),
    C("criterion = nn.CrossEntropyLoss(weight=per_cls_weights).cuda(args.gpu)", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss(weight=per_cls_weights).npu(args.gpu)",
      "CrossEntropyLoss registers weight as a buffer, so .cuda() moves a tensor and fails under Reweight/DRW"),
    C("criterion = LDAMLoss(cls_num_list=cls_num_list, max_m=0.5, s=30, weight=per_cls_weights).cuda(args.gpu)",
      "tensor_to_device", "replace", False,
      "criterion = LDAMLoss(cls_num_list=cls_num_list, max_m=0.5, s=30, weight=per_cls_weights).npu(args.gpu)",
      NOOP_LOSS_CUDA),
    C("criterion = FocalLoss(weight=per_cls_weights, gamma=1).cuda(args.gpu)", "tensor_to_device", "replace", False,
      "criterion = FocalLoss(weight=per_cls_weights, gamma=1).npu(args.gpu)", NOOP_LOSS_CUDA),
    C("input = input.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(args.gpu, non_blocking=True)", "training batch to device"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "training labels to device"),
    C("inputs = inputs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(args.gpu, non_blocking=True)", "validation batch to device"),
    C("targets = targets.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = targets.npu(args.gpu, non_blocking=True)", "validation labels to device"),
])

E("ldam_losses", "losses.py", "explicit_replacement",
  "LDAM-DRW losses.py: LDAMLoss / FocalLoss with torch.cuda.FloatTensor margins", [
    C("m_list = torch.cuda.FloatTensor(m_list)", "torch_cuda_api", "replace", True,
      "m_list = torch.FloatTensor(m_list).npu()", "margins built directly as a CUDA tensor; raises without CUDA"),
    C("index_float = index.type(torch.cuda.FloatTensor)", "torch_cuda_api", "replace", True,
      "index_float = index.float()", "type() to a CUDA tensor type copies to CUDA; raises without CUDA"),
])

E("ldam_utils", "utils.py", "explicit_replacement",
  "LDAM-DRW utils.py: ImbalancedDatasetSampler, calc_confusion_mat, meters", [
    C("input = input.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(args.gpu, non_blocking=True)", "confusion-matrix pass moves the batch to CUDA"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "labels to device"),
])

E("ldam_imagenet_lt", "imagenet_lt_train.py", "explicit_replacement",
  "LDAM-DRW style ImageNet-LT trainer on the PyTorch ImageNet example (mp.spawn, nccl, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,",
      "NCCL backend does not exist on an NPU host; init_process_group fails"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host: mp.spawn starts no workers and world_size becomes 0"),
    C("torch.cuda.set_device(args.gpu)  # one process", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # one process <-> one NPU", "per-process device pinning under DDP"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "DDP branch"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "DDP branch without a fixed device"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "single-device branch"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
      "single-device branch"),
    C("model.features = torch.nn.DataParallel(model.features)", "distributed_framework", "replace", True,
      "model.features = model.features  # DataParallel is not supported on NPU; use DDP",
      "torch.nn.DataParallel is unsupported on Ascend"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "alexnet/vgg DataParallel branch"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", "DataParallel unsupported on Ascend; .cuda() also fails"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "without CUDA the CUDA GradScaler disables itself with a warning: --amp silently trains in fp32"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location string for resume"),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu(args.gpu)",
      "unweighted CrossEntropyLoss has no buffers, Module.cuda() is a silent no-op"),
    C("per_cls_weights = torch.FloatTensor(per_cls_weights).cuda(args.gpu)", "tensor_to_device", "replace", True,
      "per_cls_weights = torch.FloatTensor(per_cls_weights).npu(args.gpu)", "DRW weights to device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; NPU cache is simply not released"),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(args.gpu, non_blocking=True)", "training batch"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "training labels"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast disables itself without CUDA (warning only): mixed precision silently lost"),
    C("imgs = imgs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "imgs = imgs.npu(args.gpu, non_blocking=True)", "validation batch"),
    C("labels = labels.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(args.gpu, non_blocking=True)", "validation labels"),
])

E("ldam_resnet_cifar", "models/resnet_cifar.py", "explicit_replacement",
  "LDAM-DRW models/resnet_cifar.py (ResNet-32 with NormedLinear): pure model code, no device handling", [])

# ---------------------------------------------------------------- classifier-balancing (decoupling)
E("decouple_main", "main.py", "explicit_replacement",
  "facebookresearch/classifier-balancing main.py (cRT / LWS / tau-norm driver) with torch.distributed.launch", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist_backend', type=str, default='nccl')", "dist_backend", "replace", True,
      "parser.add_argument('--dist_backend', type=str, default='hccl')", "nccl backend unavailable on NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "per-rank device pinning under torch.distributed.launch"),
])

E("decouple_run_networks", "run_networks.py", "explicit_replacement",
  "classifier-balancing run_networks.py: model wrapper with DataParallel, centroids, KNN features", [
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "is_available() is False on an NPU host: eval tensors silently go to CPU while the networks sit on NPU"),
    C("self.num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "self.num_gpus = torch.npu.device_count()",
      "0 on an NPU host: torch.cat([centroids] * 0) gives empty centroids for the memory classifier"),
    C('print("Using", torch.cuda.device_count(), "GPUs.")', "torch_cuda_api", "replace", False,
      'print("Using", torch.npu.device_count(), "NPUs.")', "log line only (prints 0)"),
    C("net = self.networks[key].cuda(self.local_rank)", "tensor_to_device", "replace", True,
      "net = self.networks[key].npu(self.local_rank)", "DDP branch"),
    C("self.networks[key] = self.networks[key].cuda()", "tensor_to_device", "replace", True,
      "self.networks[key] = self.networks[key].npu()", "KNN classifier on one device"),
    C("self.networks[key] = nn.DataParallel(self.networks[key]).cuda()", "distributed_framework", "replace", True,
      "self.networks[key] = self.networks[key].npu()",
      "DataParallel unsupported on Ascend; note checkpoints then lose the 'module.' prefix"),
    C("self.criterions[key] = source_import(def_file).create_loss(*loss_args).cuda()", "tensor_to_device",
      "replace", True, "self.criterions[key] = source_import(def_file).create_loss(*loss_args).npu()",
      "some loss defs (DiscCentroidsLoss) own parameters, so .cuda() moves tensors and fails"),
    C("torch.cuda.empty_cache()  # release", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release cached blocks from the previous epoch", "silent no-op without CUDA"),
    C("inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "inputs, labels = inputs.npu(non_blocking=True), labels.npu(non_blocking=True)",
      "training batch"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("self.training_opt['feature_dim']).cuda()", "tensor_to_device", "replace", True,
      "self.training_opt['feature_dim']).npu()", "centroid accumulator allocated on CUDA"),
    C("inputs, labels = inputs.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu()", "centroid pass batch"),
    C("centroids /= torch.tensor(class_count(data)).float().unsqueeze(1).cuda()", "tensor_to_device", "replace",
      True, "centroids /= torch.tensor(class_count(data)).float().unsqueeze(1).npu()", "class counts to device"),
])

E("decouple_utils", "utils.py", "explicit_replacement",
  "classifier-balancing utils.py: source_import, init_weights, shot_acc, tau pnorm", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("torch.cuda.memory_allocated() / 1024 ** 2,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_allocated() / 1024 ** 2,", "debug print only; silently reports 0 without CUDA"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 2))", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 1024 ** 2))", "debug print only; silently reports 0 without CUDA"),
    C("weights = torch.load(weights_path)", "device_type", "replace", True,
      "weights = torch.load(weights_path, map_location='cpu')",
      "loads stage-1 / released checkpoints saved from CUDA tensors; without map_location torch raises "
      "'Attempting to deserialize object on a CUDA device'"),
])

E("decouple_tau_norm", "tools/tau_norm_eval.py", "explicit_replacement",
  "tau-normalisation sweep script in the style of classifier-balancing's tau-norm notebook", [
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "ignored by the Ascend runtime: --gpu silently stops selecting the card"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.backends.cuda.matmul.allow_tf32 = False", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = False",
      "CUDA-only flag, silent no-op on NPU; NPU analogue is HF32 (default unconfirmed in knowledge)"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "classifier weights moved to cuda:0"),
    C("feats = torch.from_numpy(data['feats']).float().cuda()", "tensor_to_device", "replace", True,
      "feats = torch.from_numpy(data['feats']).float().npu()", "features to device"),
    C("labels = torch.from_numpy(data['labels']).long().cuda()", "tensor_to_device", "replace", True,
      "labels = torch.from_numpy(data['labels']).long().npu()", "labels to device"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA (before --out is written)"),
])

E("decouple_dist_sh", "scripts/train_dist.sh", "explicit_replacement",
  "two-stage decoupling launcher (joint -> cRT -> LWS -> tau) with torch.distributed.launch", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_IDS}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_IDS}", "ignored on NPU: the gpu_ids argument silently stops working"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL logging knob has no effect on HCCL; log-level mapping unconfirmed"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; HCCL has no equivalent"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an NPU host; with set -e the script aborts here"),
    C("main.py --cfg ${STAGE1_CFG} --seed 0 --dist_backend nccl", "dist_backend", "replace", True,
      "main.py --cfg ${STAGE1_CFG} --seed 0 --dist_backend hccl \\", "explicit nccl overrides the default"),
    C("main.py --cfg ${CRT_CFG} --seed 0 --dist_backend nccl", "dist_backend", "replace", True,
      "main.py --cfg ${CRT_CFG} --seed 0 --dist_backend hccl \\", "explicit nccl overrides the default"),
    C("main.py --cfg ${LWS_CFG} --seed 0 --dist_backend nccl", "dist_backend", "replace", True,
      "main.py --cfg ${LWS_CFG} --seed 0 --dist_backend hccl \\", "explicit nccl overrides the default"),
    C("CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${CRT_CFG} --test", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${CRT_CFG} --test \\",
      "single-card evaluation would silently run on device 0 instead of FIRST_GPU"),
    C("CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${STAGE1_CFG} --test", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${STAGE1_CFG} --test --save_feat val \\",
      "feature dump pinned to FIRST_GPU"),
])

# ---------------------------------------------------------------- BBN
E("bbn_default_cfg", "lib/config/default.py", "device_branch_or_abstraction",
  "Megvii-Nanjing/BBN lib/config/default.py (yacs defaults with CPU_MODE / GPUS)", [])

E("bbn_train", "main/train.py", "device_branch_or_abstraction",
  "BBN main/train.py: yacs cfg, CPU_MODE device switch, auto-resume, DataParallel via get_model", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(i) for i in cfg.GPUS])', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(i) for i in cfg.GPUS])',
      "cfg.GPUS stops selecting cards on NPU"),
    C('device = torch.device("cpu" if cfg.CPU_MODE else "cuda")', "device_type", "replace", True,
      'device = torch.device("cpu" if cfg.CPU_MODE else "npu")', "device handed to losses/combiner"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.AMP)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=cfg.TRAIN.AMP)",
      "CUDA GradScaler disables itself without CUDA; TRAIN.AMP silently becomes fp32"),
    C('resume_model, map_location="cpu" if cfg.CPU_MODE else "cuda"', "device_type", "replace", True,
      'resume_model, map_location="cpu" if cfg.CPU_MODE else "npu"', "map_location 'cuda' fails without CUDA"),
])

E("bbn_utils", "lib/utils/utils.py", "device_branch_or_abstraction",
  "BBN lib/utils/utils.py: logger, optimizer/scheduler builders, get_model with DataParallel", [
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()",
      "DataParallel unsupported on Ascend (train.py also calls model.module.*, which must follow)"),
    C("if cfg.CPU_MODE or not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if cfg.CPU_MODE or not torch.npu.is_available():", "device-info logging only; wrongly logs 'Running on CPU'"),
    C("for idx in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for idx in range(torch.npu.device_count()):", "logging only"),
    C('logger.info("GPU {}: {}".format(idx, torch.cuda.get_device_name(idx)))', "torch_cuda_api", "replace",
      False, 'logger.info("NPU {}: {}".format(idx, torch.npu.get_device_name(idx)))',
      "logging only; unreachable while the guard above reports no CUDA"),
])

E("bbn_loss", "lib/loss/loss.py", "device_branch_or_abstraction",
  "BBN lib/loss/loss.py: CSCE / LDAM / focal losses taking the device from para_dict", [])

E("bbn_function", "lib/core/function.py", "device_branch_or_abstraction",
  "BBN lib/core/function.py: train_model / valid_model loops with optional torch.cuda.amp", [
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.AMP):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=cfg.TRAIN.AMP):",
      "CUDA autocast disables itself without CUDA: silently fp32"),
])

E("bbn_sh", "data_parallel_train.sh", "device_branch_or_abstraction",
  "BBN-style shell wrapper passing GPUS into the yacs config", [
    C("export PYTHONPATH=$PYTHONPATH:$(pwd)/lib", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
    C("export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}", "env_var", "replace", False,
      "export ASCEND_LAUNCH_BLOCKING=${DEBUG:-0}", "debugging aid only; ignored on NPU"),
    C("CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main/valid.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${FIRST_GPU} python main/valid.py \\",
      "evaluation silently stops being pinned to FIRST_GPU"),
])

# ---------------------------------------------------------------- RIDE (pytorch-template)
E("ride_base_trainer", "base/base_trainer.py", "device_branch_or_abstraction",
  "RIDE base/base_trainer.py (pytorch-template): _prepare_device(n_gpu), DataParallel for n_gpu > 1", [
    C("self.model = torch.nn.DataParallel(model, device_ids=self.device_ids)", "distributed_framework", "replace",
      True, "self.model = model  # DataParallel unsupported on NPU; multi-card needs DDP + HCCL",
      "DataParallel unsupported on Ascend when n_gpu > 1"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "add_branch", True,
      "n_gpu = torch.npu.device_count() if hasattr(torch, 'npu') and torch.npu.is_available() else torch.cuda.device_count()",
      "0 on an NPU host: training silently falls back to CPU"),
    C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "add_branch", True,
      "device = torch.device(('npu:0' if hasattr(torch, 'npu') and torch.npu.is_available() else 'cuda:0') if n_gpu_use > 0 else 'cpu')",
      "device string used for model/criterion/resume"),
])

E("ride_trainer", "trainer/trainer.py", "explicit_replacement",
  "RIDE trainer/trainer.py: expert training loop, optional fp16 via torch.cuda.amp, distillation teacher", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", False,
      "from torch.npu.amp import autocast, GradScaler",
      "only used when use_fp16 is flipped on; CUDA amp would silently run fp32 on NPU"),
    C("self.teacher_model = torch.nn.DataParallel(self.teacher_model, device_ids=self.device_ids)",
      "distributed_framework", "replace", True,
      "self.teacher_model = self.teacher_model  # no DataParallel on NPU; load without the 'module.' prefix",
      "DataParallel unsupported on Ascend (multi-card distillation)"),
])

E("ride_parse_config", "parse_config.py", "explicit_replacement",
  "RIDE parse_config.py (pytorch-template ConfigParser): -d/--device exported as CUDA_VISIBLE_DEVICES", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.device',
      "-d/--device is silently ignored on NPU (set before the device is first used; timing vs torch_npu "
      "initialisation unconfirmed)"),
])

E("ride_train", "train.py", "explicit_replacement",
  "RIDE train.py entry point (pytorch-template)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(SEED)",
      SEED_NOTE + " (and the block is disabled by default)"),
])

E("ride_test", "test.py", "explicit_replacement",
  "RIDE test.py: evaluate released checkpoints, many/medium/few accuracy", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("checkpoint = torch.load(config.resume)", "device_type", "replace", True,
      "checkpoint = torch.load(config.resume, map_location='cpu')",
      "evaluates released checkpoints saved from CUDA tensors; raises without CUDA"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = model  # no DataParallel on NPU: evaluate on a single device",
      "DataParallel unsupported on Ascend when the config asks for n_gpu > 1"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "silently evaluates on CPU on an NPU host"),
    C("confusion_matrix = torch.zeros(num_classes, num_classes).cuda()", "tensor_to_device", "replace", True,
      "confusion_matrix = torch.zeros(num_classes, num_classes).npu()", "raises without CUDA"),
])

# ---------------------------------------------------------------- PaCo
E("paco_main", "paco_lt.py", "explicit_replacement",
  "dvlab-research/Parametric-Contrastive-Learning paco_lt.py (MoCo-style DDP trainer, mp.spawn, fp16)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", False,
      "from torch.npu.amp import GradScaler, autocast",
      "CUDA amp disables itself without CUDA: --fp16 silently trains in fp32"),
    C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,", "nccl unavailable on NPU"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 on an NPU host: mp.spawn starts no workers"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "DDP worker device"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "DDP worker model"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP branch without a fixed device"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU debugging only", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(args.gpu)  # single-NPU debugging only",
      "branch ends in NotImplementedError anyway; matters only when debugging"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", False, "model = model.npu(args.gpu)",
      "same debugging-only branch"),
    C("criterion_ce = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", "replace", False,
      "criterion_ce = nn.CrossEntropyLoss().npu(args.gpu)", NOOP_LOSS_CUDA),
    C("K=args.moco_k, num_classes=args.num_classes).cuda(args.gpu)", "tensor_to_device", "replace", False,
      "K=args.moco_k, num_classes=args.num_classes).npu(args.gpu)", NOOP_LOSS_CUDA),
    C("checkpoint = torch.load(args.resume, map_location='cuda:{}'.format(args.gpu))", "device_type", "replace",
      True, "checkpoint = torch.load(args.resume, map_location='npu:{}'.format(args.gpu))",
      "auto-resume maps to cuda:N"),
    C("images[0] = images[0].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[0] = images[0].npu(args.gpu, non_blocking=True)", "query view"),
    C("images[1] = images[1].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[1] = images[1].npu(args.gpu, non_blocking=True)", "key view"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "labels"),
    C("total_logits = torch.empty((0, args.num_classes)).cuda()", "tensor_to_device", "replace", True,
      "total_logits = torch.empty((0, args.num_classes)).npu()", "eval accumulator"),
    C("total_labels = torch.empty(0, dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "total_labels = torch.empty(0, dtype=torch.long).npu()", "eval accumulator"),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(args.gpu, non_blocking=True)", "validation batch"),
    C("labels = labels.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(args.gpu, non_blocking=True)", "validation labels"),
])

E("paco_losses", "losses.py", "explicit_replacement",
  "PaCo losses.py: PaCoLoss and SupConLoss (device picked from features.is_cuda / hard .cuda())", [
    C("device = (torch.device('cuda')", "device_type", "replace", True, "device = (torch.device('npu')",
      "with the next line: must become npu, or simply device = features.device"),
    C("if features.is_cuda", "torch_cuda_api", "replace", True, "if features.is_npu",
      "is_cuda is False for NPU tensors: masks silently built on CPU, then the cat with NPU tensors fails"),
    C("mask = torch.eye(batch_size, dtype=torch.float32).cuda()", "tensor_to_device", "replace", True,
      "mask = torch.eye(batch_size, dtype=torch.float32).npu()", "SimCLR branch"),
    C("mask = torch.eq(labels, labels.T).float().cuda()", "tensor_to_device", "replace", True,
      "mask = torch.eq(labels, labels.T).float().npu()", "supervised mask"),
    C("mask = mask.float().cuda()", "tensor_to_device", "replace", True, "mask = mask.float().npu()",
      "user mask"),
    C("torch.arange(batch_size * anchor_count).view(-1, 1).cuda(),", "tensor_to_device", "replace", True,
      "torch.arange(batch_size * anchor_count).view(-1, 1).npu(),", "self-contrast mask index"),
])

E("paco_builder", "moco/builder.py", "explicit_replacement",
  "PaCo moco/builder.py (MoCo v2 builder with label queue, DDP batch shuffle, all_gather)", [
    C("idx_shuffle = torch.randperm(batch_size_all).cuda()", "tensor_to_device", "replace", True,
      "idx_shuffle = torch.randperm(batch_size_all).npu()", "shuffle index broadcast over HCCL must live on NPU"),
])

E("paco_sh", "sh/ImageNetLT_train_R50.sh", "explicit_replacement",
  "PaCo sh/ImageNetLT_train_R50.sh launcher with Slurm header and NCCL env", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "unconfirmed: NPU gres name depends on the cluster's Slurm setup (no Ascend Slurm integration in knowledge)"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "ignored by HCCL; multi-node runs lose the NIC choice and root-info link setup can fail"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "logging only; mapping unconfirmed"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "device visibility ignored on NPU"),
    C("=mkdir -p logs", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu"),
])

# ---------------------------------------------------------------- MiSLAS
E("mislas_stage1", "train_stage1.py", "explicit_replacement",
  "dvlab-research/MiSLAS train_stage1.py (mixup stage-1, yacs config, mp.spawn, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 on an NPU host"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "on an NPU host this raises NotImplementedError before training"),
    C("=torch.cuda.set_device(config.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(config.gpu)",
      "DDP worker device"),
    C("=model.cuda(config.gpu)", "tensor_to_device", "replace", True, "model.npu(config.gpu)", "DDP model"),
    C("=classifier.cuda(config.gpu)", "tensor_to_device", "replace", True, "classifier.npu(config.gpu)",
      "DDP classifier"),
    C("=block.cuda(config.gpu)", "tensor_to_device", "replace", True, "block.npu(config.gpu)", "Places block"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP without fixed device"),
    C("=classifier.cuda()", "tensor_to_device", "replace", True, "classifier.npu()", "DDP without fixed device"),
    C("=block.cuda()", "tensor_to_device", "replace", True, "block.npu()", "DDP without fixed device"),
    C("torch.cuda.set_device(config.gpu)  # single GPU, no DDP", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.gpu)  # single NPU, no DDP", "single-device branch"),
    C("model = model.cuda(config.gpu)", "tensor_to_device", "replace", True, "model = model.npu(config.gpu)",
      "single-device branch"),
    C("classifier = classifier.cuda(config.gpu)", "tensor_to_device", "replace", True,
      "classifier = classifier.npu(config.gpu)", "single-device branch"),
    C("block = block.cuda(config.gpu)", "tensor_to_device", "replace", True, "block = block.npu(config.gpu)",
      "single-device branch"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()", "DataParallel unsupported on Ascend"),
    C("classifier = torch.nn.DataParallel(classifier).cuda()", "distributed_framework", "replace", True,
      "classifier = classifier.npu()", "DataParallel unsupported on Ascend"),
    C("block = torch.nn.DataParallel(block).cuda()", "distributed_framework", "replace", True,
      "block = block.npu()", "DataParallel unsupported on Ascend"),
    C("loc = 'cuda:{}'.format(config.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(config.gpu)",
      "resume map_location"),
    C("best_acc1 = best_acc1.to(config.gpu)", "tensor_to_device", "replace", True,
      "best_acc1 = best_acc1.to(f'npu:{config.gpu}')", "a bare int device in Tensor.to means cuda:N"),
    C("criterion = nn.CrossEntropyLoss().cuda(config.gpu)", "tensor_to_device", "replace", False,
      "criterion = nn.CrossEntropyLoss().npu(config.gpu)", NOOP_LOSS_CUDA),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: the batch silently stays on CPU while the model is on NPU"),
    C("images = images.cuda(config.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(config.gpu, non_blocking=True)", "training batch"),
    C("target = target.cuda(config.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(config.gpu, non_blocking=True)", "training labels"),
    C("class_num = torch.zeros(config.num_classes).cuda()", "tensor_to_device", "replace", True,
      "class_num = torch.zeros(config.num_classes).npu()", "per-class counters"),
    C("correct = torch.zeros(config.num_classes).cuda()", "tensor_to_device", "replace", True,
      "correct = torch.zeros(config.num_classes).npu()", "per-class counters"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()", "False on NPU: labels stay on CPU, loss/one_hot mix devices"),
    C("inputs = inputs.cuda(config.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = inputs.npu(config.gpu, non_blocking=True)", "validation batch"),
    C("labels = labels.cuda(config.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "labels = labels.npu(config.gpu, non_blocking=True)", "validation labels"),
])

E("mislas_yaml", "config/imagenet/imagenet_resnet50_stage1_mixup.yaml", "explicit_replacement",
  "MiSLAS config/imagenet/*.yaml (distributed block with dist_backend)", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "dist_backend: 'hccl'",
      "read into config.dist_backend and passed to init_process_group"),
])

E("mislas_methods", "methods.py", "explicit_replacement",
  "MiSLAS methods.py: mixup, label-aware smoothing, learnable weight scaling", [
    C("index = torch.randperm(batch_size).cuda()", "tensor_to_device", "replace", True,
      "index = torch.randperm(batch_size).npu()", "mixup permutation on CUDA; raises without CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: smoothing table stays on CPU and smooth[target] with NPU targets fails"),
    C("self.smooth = self.smooth.cuda()", "tensor_to_device", "replace", True, "self.smooth = self.smooth.npu()",
      "smoothing table to device"),
])

# ---------------------------------------------------------------- LiVT / MAE-style util
E("livt_misc", "util/misc.py", "explicit_replacement",
  "MAE/DeiT-derived util/misc.py as used by long-tailed ViT code (LiVT): distributed init, NativeScaler, TF32", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "raises without CUDA; fp64 all_reduce support on HCCL not confirmed (float32 would be safer)"),
    C("log_mem = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "log_mem = torch.npu.is_available()", "logging only: the max-mem column silently disappears"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError on an NPU host (Slurm path)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "per-rank device"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "hard-coded backend"),
    C("if torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
      "if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:",
      "get_device_capability raises without CUDA; TF32 is a CUDA-only knob"),
    C("if getattr(args, 'bf16', False) and torch.cuda.is_bf16_supported():", "device_capability_check", "replace",
      False, "if getattr(args, 'bf16', False) and torch.npu.is_bf16_supported():",
      "returns False without CUDA: silently picks fp16 instead of bf16"),
    C("self._scaler = torch.cuda.amp.GradScaler(enabled=enabled)", "amp", "replace", False,
      "self._scaler = torch.npu.amp.GradScaler(enabled=enabled)",
      "CUDA GradScaler disables itself without CUDA (no loss scaling; fp32 path)"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "tensor for HCCL all_reduce must be on NPU"),
])

# ---------------------------------------------------------------- environment files
E("env_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt pinning CUDA 11.3 torch wheels, as in ViT-based long-tail repos", [
    C("# PyTorch (CUDA 11.3 wheels)", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel matching torch 2.1.0"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; NPU hosts use CPU torch (x86) or plain PyPI torch (aarch64)"),
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu113 build; torch must equal the torch_npu version"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "+cu113 build; pair with torch 2.1.0"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
      "NVML has no NPU equivalent; only an auxiliary monitoring tool uses it"),
])

E("env_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml of 2019-2020 long-tail repos (pytorch 1.4 + cudatoolkit 10.1)", [
    C("- python=3.7", "import_torch_npu", "replace", True, "- python=3.9",
      "no torch_npu wheel for Python 3.7 (torch 2.1 needs 3.8-3.11)"),
    C("- pytorch=1.4.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch must match the torch_npu version"),
    C("- torchvision=0.5.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0", "pair with torch 2.1.0"),
    C("- cudatoolkit=10.1", "import_torch_npu", "replace", True, "- cpuonly",
      "otherwise conda resolves the CUDA build of pytorch"),
    C("- yacs", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch_npu comes from PyPI"),
])

E("env_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "docker/Dockerfile on an nvidia/cuda base image, as shipped by RIDE-style repos", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (tag illustrative, unconfirmed)"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "nothing is compiled with nvcc; harmless leftover"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", True, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container runtime variable is ignored; Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime only"),
    C("RUN pip3 install --no-cache-dir torch==1.10.1+cu113 torchvision==0.11.2+cu113", "import_torch_npu",
      "replace", True, "RUN pip3 install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
      "CUDA builds of torch/torchvision"),
    C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("RUN pip3 install --no-cache-dir -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip3 install --no-cache-dir torch-npu==2.1.0.post10", "install torch_npu into the image"),
])
