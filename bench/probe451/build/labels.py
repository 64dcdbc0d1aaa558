# Labels for probe451 (agricultural vision). One C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: import torch_npu before any torch.npu use; mandatory for torch_npu < 2.5.1, "
               "autoloaded afterwards but still the documented practice")
SEED_NOTE = ("torch.cuda.manual_seed is queued lazily and silently does nothing without CUDA, "
             "so the NPU generator would stay unseeded")
SEED_ALL_NOTE = ("each process trains on one device and the ported torch.npu.manual_seed already seeds it; "
                 "the unported CUDA call is a silent no-op, so leaving it changes nothing")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a no-op when CUDA was never initialised; porting only "
                    "restores the intended cache release (memory/perf, not correctness)")
PIN_NOTE = ("pin_memory kept but pinned for the NPU; whether the default pinning helps or hurts on "
            "torch_npu is version dependent (seed article reports slow-downs) -- unconfirmed, perf only")
AUTOCAST_NOTE = ("left as CUDA autocast it only disables itself on an NPU host (warning) and the model runs in "
                 "fp32 -- correct but slower, so perf-only")

# ------------------------------------------------------------------------------------------ AgML
E("agml_classification", "agml/models/classification.py", "device_branch_or_abstraction",
  "Project-AgML/AgML agml/models/classification.py (EfficientNetB4 transfer LightningModule)", [])

E("agml_detection", "agml/models/detection.py", "device_branch_or_abstraction",
  "Project-AgML/AgML agml/models/detection.py (EfficientDet-D4 + WBF detection model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (wrapped in try/except ImportError so CPU/CUDA installs keep working)",
      "library module called directly by users (model.predict); nothing upstream imports torch_npu before "
      "the ported torch.npu call"),
    C("return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "add_branch", True,
      "return torch.device('npu') if torch.npu.is_available() else (torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu'))",
      "without an NPU branch predict() silently runs on the CPU of an NPU host"),
])

E("agml_tools", "experiments/training/tools.py", "device_branch_or_abstraction",
  "Project-AgML/AgML experiments/training/tools.py (benchmark helpers: device count, checkpoint dirs)", [
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "    if torch.npu.is_available():",
      "decides how many accelerators Lightning gets; False on an NPU host -> CPU training"),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return torch.npu.device_count()", "device count for the Trainer"),
    C("return 'gpu' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "return 'npu' if torch.npu.is_available() else ('gpu' if torch.cuda.is_available() else 'cpu')",
      "Lightning accelerator string; 'npu' must be a registered third-party Lightning accelerator "
      "(Lightning core has none) -- the name is unconfirmed in the knowledge base"),
    C("['nvidia-smi', '--query-gpu=index,memory.used,memory.total',", "device_capability_check", "replace", False,
      "['npu-smi', 'info', '-t', 'usages', '-i', '0'],",
      "log-only report; FileNotFoundError is caught, and the npu-smi output format differs so the "
      "parsing below must follow"),
])

E("agml_train_cls", "experiments/training/train_classification.py", "device_branch_or_abstraction",
  "Project-AgML/AgML experiments/training/train_classification.py (Lightning benchmark trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus = gpus(None),", "device_type", "replace", True,
      "accelerator = 'npu', devices = max(gpus(None), 1),",
      "Lightning's gpus=N means CUDA and raises MisconfigurationException without CUDA; needs an NPU "
      "accelerator registered with Lightning (plugin name unconfirmed)"),
])

E("agml_train_seg", "experiments/training/train_segmentation.py", "device_branch_or_abstraction",
  "Project-AgML/AgML experiments/training/train_segmentation.py (DeepLabV3 crop/weed segmentation, Lightning DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("strategy = 'ddp' if n_devices > 1 else None,", "dist_backend", "replace", True,
      "strategy = DDPStrategy(process_group_backend = 'hccl') if n_devices > 1 else None,",
      "Lightning picks nccl only for cuda devices and falls back to gloo otherwise; gloo cannot reduce "
      "NPU tensors, so the backend must be set to hccl explicitly"),
])

E("agml_requirements", "requirements.txt", "device_branch_or_abstraction",
  "Project-AgML/AgML requirements.txt", [
    C("torch>=1.10.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu  # pinned to the torch version, e.g. torch==2.1.0 + torch-npu==2.1.0.post12",
      "the environment built from this file would otherwise lack torch_npu, which every ported "
      "import needs"),
])

# ------------------------------------------------------------------------------------------ MinneApple
E("minneapple_train", "train_rcnn.py", "explicit_replacement",
  "nicolaihaeni/MinneApple train_rcnn.py (torchvision Mask/Faster R-CNN apple detection)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda', help='device')", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device')",
      "torch.device(args.device) is the only device the script uses"),
])

E("minneapple_predict", "predict_rcnn.py", "explicit_replacement",
  "nicolaihaeni/MinneApple predict_rcnn.py (writes challenge submission)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda'", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu', help='device to use. Either cpu or npu')",
      "default device string feeds torch.load(map_location=...) and img.to(device)"),
])

E("minneapple_utils", "utility/utils.py", "explicit_replacement",
  "nicolaihaeni/MinneApple utility/utils.py (copy of torchvision references/detection/utils.py)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device",
      "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "HCCL all_reduce needs an NPU tensor (fp64 all_reduce on HCCL is unconfirmed; float32 would be the "
      "safe fallback)"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "all_gather buffer for HCCL"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "all_gather size tensor"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device",
      "replace", True, 'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]',
      "all_gather size tensors"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))',
      "all_gather receive buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")',
      "tensor_to_device", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "padding is concatenated with an NPU tensor"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "log-only; recent torch returns 0 instead of raising when CUDA is not initialised (unconfirmed for "
      "old torch)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: device_count() == 0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "per-rank device binding"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL is not available on Ascend"),
])

E("minneapple_engine", "utility/engine.py", "explicit_replacement",
  "nicolaihaeni/MinneApple utility/engine.py (torchvision references/detection/engine.py)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded: torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host"),
])

E("minneapple_dataset", "data/apple_dataset.py", "explicit_replacement",
  "nicolaihaeni/MinneApple data/apple_dataset.py (instance masks -> boxes; counting patches)", [])

E("minneapple_launch", "scripts/train_multigpu.sh", "explicit_replacement",
  "nicolaihaeni/MinneApple multi-GPU launcher (torch.distributed.launch)", [
    C("=set -e", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the Ascend container profile"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "with the default value the ranks bind NPUs 0..NGPU-1 anyway; only a user-restricted mask is lost"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv", "device_capability_check", "replace", True,
      'npu-smi info | tee "${OUT}/npus.txt"',
      "script runs under set -e: nvidia-smi missing on an NPU host aborts the launcher"),
])

# ------------------------------------------------------------------------------------------ MSCG-Net
E("mscg_train", "tools/train_R50.py", "explicit_replacement",
  "samleoqh/MSCG-Net tools/train_R50.py (Agriculture-Vision field-anomaly segmentation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = train_args.gpu', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = train_args.gpu',
      "default gpu '0' equals the NPU default device; only non-default choices are lost"),
    C("torch.cuda.manual_seed(seed_value)", "torch_cuda_api", "replace", True,
      "torch.npu.manual_seed(seed_value)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed_value)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed_value)  # npu vars", SEED_ALL_NOTE),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "model placement"),
    C("criterion = ACW_loss().cuda()", "tensor_to_device", "replace", False,
      "criterion = ACW_loss().npu()",
      "ACW_loss registers no parameters or buffers, so Module.cuda() touches no tensor and does not "
      "fail; ported for consistency only"),
    C("inputs, labels = inputs.cuda(), labels.cuda(),", "tensor_to_device", "replace", True,
      "inputs, labels = inputs.npu(), labels.npu(),", "training batch"),
    C("inputs, gts = inputs.cuda(), gts.cuda()", "tensor_to_device", "replace", True,
      "inputs, gts = inputs.npu(), gts.npu()", "validation batch"),
])

E("mscg_test", "tools/test_submission.py", "explicit_replacement",
  "samleoqh/MSCG-Net tools/test_submission.py (TTA ensemble submission)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"', "device 0 is the default anyway"),
    C("nets.append(net1.cuda())", "tensor_to_device", "replace", True, "nets.append(net1.npu())", "model placement"),
    C("nets.append(net2.cuda())", "tensor_to_device", "replace", True, "nets.append(net2.npu())", "model placement"),
    C("image_patches = torch.from_numpy(image_patches).cuda()", "tensor_to_device", "replace", True,
      "image_patches = torch.from_numpy(image_patches).npu()", "input patches"),
])

E("mscg_net", "lib/net/scg_gcn.py", "explicit_replacement",
  "samleoqh/MSCG-Net lib/net/scg_gcn.py (self-constructing graph block + GCN head)", [
    C("A = A + torch.eye(A.size(1)).cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "A = A + torch.eye(A.size(1), device=A.device).unsqueeze(0)",
      "hard-coded .cuda() inside the model's forward path (Laplacian self-loop)"),
])

E("mscg_loss", "lib/loss/acw_loss.py", "explicit_replacement",
  "samleoqh/MSCG-Net lib/loss/acw_loss.py (adaptive class weighting loss)", [])

E("mscg_model", "tools/model.py", "explicit_replacement",
  "samleoqh/MSCG-Net tools/model.py (model factory / snapshot loader)", [])

E("mscg_config", "config/configs_kf.py", "explicit_replacement",
  "samleoqh/MSCG-Net config/configs_kf.py (dataset paths, k-fold split, resume)", [
    C("net.load_state_dict(torch.load(os.path.join(self.save_path, self.snapshot)))", "tensor_to_device",
      "replace", True,
      "net.load_state_dict(torch.load(os.path.join(self.save_path, self.snapshot), map_location='cpu'))",
      "snapshots written on GPU carry CUDA storages; torch.load without map_location raises on a host "
      "without CUDA (resuming the published GPU snapshots is the documented workflow)"),
])

# ------------------------------------------------------------------------------------------ bonnetal (crop/weed)
E("bonnetal_trainer", "train/tasks/segmentation/modules/trainer.py", "explicit_replacement",
  "PRBonn/bonnetal train/tasks/segmentation/modules/trainer.py (sugar-beet crop/weed segmentation)", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      True, 'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "used for the criterion and the IoU evaluator"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:",
      "otherwise self.gpu stays False and training silently runs on the CPU"),
    C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model placement"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and int(os.environ.get('WORLD_SIZE', 1)) > 1:",
      "multi-device branch is driven by the launcher's world size once DataParallel becomes DDP"),
    C('print("Let\'s use", torch.cuda.device_count(), "GPUs!")', "torch_cuda_api", "replace", False,
      'print("Let\'s use", torch.npu.device_count(), "NPUs!")', "log-only"),
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "self.model = nn.SyncBatchNorm.convert_sync_batchnorm(self.model).npu()",
      "nn.DataParallel is unsupported on NPU; the two lines swap roles: BN conversion must happen before "
      "the DDP wrap"),
    C("self.model = convert_model(self.model).cuda()", "distributed_framework", "replace", True,
      "self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[torch.npu.current_device()])",
      "vendored sync_batchnorm's convert_model relies on DataParallelWithCallback; DDP + nn.SyncBatchNorm "
      "(HCCL) replaces it; needs the process group created in train.py"),
    C("self.n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "self.n_gpus = torch.npu.device_count()",
      "after the port n_gpus only gates the (removed) DataParallel criterion; 0 is harmless"),
    C("self.criterion = nn.DataParallel(self.criterion).cuda()", "distributed_framework", "replace", True,
      "self.criterion = self.criterion.to(self.device)",
      "no DataParallel on NPU; with DDP each rank evaluates its own loss"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()  # free the training activations first", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the training activations first", EMPTY_CACHE_NOTE),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "training batch"),
    C("mask = mask.cuda(non_blocking=True).long()", "tensor_to_device", "replace", True,
      "mask = mask.npu(non_blocking=True).long()", "training labels"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", "validation batch"),
    C("mask = mask.long().cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "mask = mask.long().npu(non_blocking=True)", "validation labels"),
])

E("bonnetal_user", "train/tasks/segmentation/modules/user.py", "explicit_replacement",
  "PRBonn/bonnetal train/tasks/segmentation/modules/user.py (inference wrapper used by infer_img.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "inference entry scripts (not part of this probe) only import this module"),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace",
      False, 'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "here self.device is only printed; placement is done by the .cuda() calls below"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0:", "otherwise inference silently stays on CPU"),
    C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model placement"),
    C("self.means = self.means.cuda()", "tensor_to_device", "replace", True, "self.means = self.means.npu()",
      "normalisation constants meet the NPU image tensor"),
    C("self.stds = self.stds.cuda()", "tensor_to_device", "replace", True, "self.stds = self.stds.npu()",
      "normalisation constants meet the NPU image tensor"),
    C("rgb_tensor = rgb_tensor.cuda()", "tensor_to_device", "replace", True, "rgb_tensor = rgb_tensor.npu()",
      "input image"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "reached whenever self.gpu is True; torch.cuda.synchronize raises without CUDA"),
])

E("bonnetal_traincli", "train/tasks/segmentation/train.py", "explicit_replacement",
  "PRBonn/bonnetal train/tasks/segmentation/train.py (training CLI)", [
    C("from tasks.segmentation.modules.trainer import *", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", IMPORT_NOTE),
    C("trainer = Trainer(CFG, FLAGS.log, FLAGS.path, FLAGS.eval, FLAGS.no_batchnorm)", "dist_backend",
      "npu_only_addition", True,
      "if int(os.environ.get('WORLD_SIZE', 1)) > 1: torch.npu.set_device(int(os.environ['LOCAL_RANK'])); torch.distributed.init_process_group(backend='hccl')",
      "the DataParallel -> DDP port in trainer.py needs a torchrun launch and an HCCL process group"),
])

E("bonnetal_cfg", "train/tasks/segmentation/config/sugarbeets_mobilenetv2_aspp_res.yaml",
  "explicit_replacement", "PRBonn/bonnetal segmentation arch config (sugar beets crop/weed, MobileNetV2 + ASPP)", [])

E("bonnetal_docker", "docker/Dockerfile", "explicit_replacement",
  "PRBonn/bonnetal docker/Dockerfile (CUDA + TensorRT image)", [
    C("FROM nvidia/cuda:10.1-cudnn7-devel-ubuntu18.04", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must provide CANN (+ driver mounts) instead of CUDA/cuDNN; tag illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES 0-7",
      "device exposure is decided by the Ascend Docker runtime / run flags; inert in the image"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility,graphics", "env_var", "removal", False, None,
      "NVIDIA container-runtime hint, inert elsewhere"),
    C("libnvinfer6=6.0.1-1+cuda10.1", "custom_cuda_extension", "removal", True, None,
      "TensorRT packages come from NVIDIA's CUDA apt repo; the build fails on a CANN base image"),
    C("RUN pip3 install torch==1.4.0 torchvision==0.5.0", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "torch 1.4 has no torch_npu; CUDA wheels replaced by CPU torch + torch_npu"),
    C("catkin build bonnetal_segmentation_standalone", "custom_cuda_extension", "removal", True, None,
      "the C++ deploy library links TensorRT/CUDA and cannot build here (an ACL/OM deploy path would be a "
      "separate port)"),
])

# ------------------------------------------------------------------------------------------ YOLOv5 orchard fork
E("fruit_torch_utils", "utils/torch_utils.py", "explicit_replacement",
  "ultralytics/yolov5 utils/torch_utils.py as used by orchard fruit-detection forks", [
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "barrier(device_ids=...) was NCCL-only in older torch; behaviour with HCCL unconfirmed"),
    C("dist.barrier(device_ids=[0])", "dist_backend", "replace", False, "dist.barrier()",
      "same as above, unconfirmed"),
    C("cmd = 'nvidia-smi -L | wc -l'", "device_capability_check", "replace", False,
      "cmd = 'npu-smi info -l | grep -c \"NPU ID\"'",
      "device_count() helper swallows errors and returns 0; not on the paths of this probe"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = device  # set environment variable", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device  # set environment variable - must be before assert is_available()",
      "--device 2 relies on the mask so that 'npu:0' is physical device 2; without it the wrong NPU is used"),
    C("assert torch.cuda.is_available() and torch.cuda.device_count() >= len(", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available() and torch.npu.device_count() >= len(device.replace(',', '')), \\",
      "assert fails on every NPU host when --device is given"),
    C("if not cpu and not mps and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not cpu and not mps and torch.npu.is_available():  # prefer NPU if available",
      "otherwise select_device silently returns cpu"),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
      "p = torch.npu.get_device_properties(i)",
      "name and total_memory are among the properties torch_npu reports"),
    C("arg = 'cuda:0'", "device_type", "replace", True, "arg = 'npu:0'", "the device every caller uses"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "timing-only: without it time_sync skips the device sync and reported speeds are wrong"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "timing-only, guarded by the line above"),
    C("mem = torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0  # (GB)", "torch_cuda_api",
      "replace", False, "mem = torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0  # (GB)",
      "profiler printout only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(seed)",
      SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)  # for Multi-GPU", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)  # for Multi-NPU, exception safe", SEED_ALL_NOTE),
])

E("fruit_train", "train.py", "explicit_replacement",
  "ultralytics/yolov5 train.py in an orchard fruit-detection fork (apple/citrus/mango)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=import torch.distributed as dist", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "perf-only: mosaic/rect batches and tiles give varying shapes; binary (non-JIT) kernels avoid "
      "per-shape operator compilation (msFmkTransplt advice; gain unconfirmed here)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp)",
      "a CUDA GradScaler disables itself without CUDA; with NPU autocast active the fp16 gradients "
      "would go unscaled (underflow)"),
    C("with torch.cuda.amp.autocast(amp):", "amp", "replace", False, "with torch.npu.amp.autocast(amp):",
      AUTOCAST_NOTE),
    C("mem = f'{torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0:.3g}G'", "torch_cuda_api",
      "replace", False,
      "mem = f'{torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0:.3g}G'  # (GB)",
      "progress-bar text only (shows 0G otherwise)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("assert torch.cuda.device_count() > LOCAL_RANK", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() > LOCAL_RANK, 'insufficient NPU devices for DDP command'",
      "device_count() is 0 on an NPU host -> every DDP launch aborts"),
    C("torch.cuda.set_device(LOCAL_RANK)", "torch_cuda_api", "replace", True, "torch.npu.set_device(LOCAL_RANK)",
      "per-rank device binding"),
    C("device = torch.device('cuda', LOCAL_RANK)", "device_type", "replace", True,
      "device = torch.device('npu', LOCAL_RANK)", "DDP device"),
    C("dist.init_process_group(backend='nccl' if dist.is_nccl_available() else 'gloo')", "dist_backend",
      "replace", True, "dist.init_process_group(backend='hccl')",
      "is_nccl_available() is False with CPU torch, so this silently picks gloo, which cannot reduce NPU tensors"),
])

E("fruit_dataloaders", "utils/dataloaders.py", "explicit_replacement",
  "ultralytics/yolov5 utils/dataloaders.py (orchard fork with tiled loading)", [
    C("nd = torch.cuda.device_count()  # number of CUDA devices", "torch_cuda_api", "replace", False,
      "nd = torch.npu.device_count()  # number of NPU devices",
      "only sizes the worker pool (0 devices -> more workers per rank); perf only"),
    C("pin_memory=PIN_MEMORY,", "pin_memory", "replace", False,
      "pin_memory=PIN_MEMORY, pin_memory_device='npu',", PIN_NOTE),
])

E("fruit_yield", "yield_estimate.py", "explicit_replacement",
  "orchard yield-estimation script built on YOLOv5 (detect + IoU tracking + count-to-kg)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # NPU kernels for torchvision.ops.nms used by non_max_suppression",
      "without it torchvision::nms on NPU tensors relies on torch_npu's CPU fallback (perf); unconfirmed "
      "for every torchvision version"),
    C("torch.cuda.nvtx.range_push('yolov5_forward')", "torch_cuda_api", "replace", True,
      "rid = torch_npu.npu.mstx.range_start('yolov5_forward')",
      "--profile path: CPU torch builds have no NVTX ('NVTX functions not installed'); mstx is the NPU "
      "counterpart (exact mstx signature unconfirmed)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rid)",
      "pairs with range_start"),
])

E("fruit_docker", "utils/docker/Dockerfile", "explicit_replacement",
  "ultralytics/yolov5 utils/docker/Dockerfile (NGC PyTorch base) in an orchard fork", [
    C("FROM nvcr.io/nvidia/pytorch:22.12-py3", "env_var", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "NGC image is CUDA-only; base must ship CANN (tag illustrative)"),
    C("RUN pip uninstall -y Pillow torchtext torch torchvision", "import_torch_npu", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "the CANN base has no torch; torch + matching torch_npu must be installed explicitly"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch is already pinned by the line above, so the cu113 index is not consulted for it"),
])

# ------------------------------------------------------------------------------------------ Plant Pathology 2021
E("plantpath_train", "train.py", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 Kaggle solution repos (timm 5-fold multi-label training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdamW",
      "apex FusedAdam needs CUDA kernels (amp_C); the ported constructor below needs this import"),
    C("assert HAS_APEX, 'fused_adam needs NVIDIA apex", "fused_optimizer", "removal", False, None,
      "the NPU fused optimizer comes from torch_npu, so apex is no longer a prerequisite; only bites when "
      "Ascend apex is not installed (environment dependent)"),
    C("return FusedAdam(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)",
      "fused_optimizer", "replace", True,
      "return NpuFusedAdamW(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)",
      "apex FusedAdam defaults to adam_w_mode=True, so AdamW semantics are kept"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      AUTOCAST_NOTE),
    C("num_workers=cfg.num_workers, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "num_workers=cfg.num_workers, pin_memory=True, pin_memory_device='npu', drop_last=True)", PIN_NOTE),
    C("num_workers=cfg.num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=cfg.num_workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA -> unscaled fp16 gradients under NPU autocast"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      EMPTY_CACHE_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
      "logger.write(f'Using {torch.npu.get_device_name(args.gpu)} for {cfg.model.name}')",
      "log line, but torch.cuda.get_device_name initialises CUDA and raises on an NPU host"),
])

E("plantpath_cfg", "configs/effnet_b4_ns.yaml", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution config (EfficientNet-B4 NS)", [
    C("device: cuda", "device_type", "replace", True, "device: npu",
      "train.py builds torch.device(f'{cfg.device}:{gpu}') from this value"),
])

E("plantpath_utils", "src/utils.py", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution src/utils.py (seeding, NVML memory, cutmix)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", True, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("import pynvml", "device_capability_check", "removal", True, None,
      "pynvml/NVML has no Ascend backend; called every log interval from train.py"),
    C("pynvml.nvmlInit()", "device_capability_check", "removal", True, None, "NVMLError without an NVIDIA driver"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)", "device_capability_check", "removal", True, None,
      "NVML handle no longer needed"),
    C("info = pynvml.nvmlDeviceGetMemoryInfo(handle)", "device_capability_check", "replace", True,
      "free, total = torch.npu.mem_get_info(device_index)",
      "device-wide free/total bytes from the runtime, the closest NPU equivalent of NVML memory info"),
    C("return info.used / 1024 ** 2, info.total / 1024 ** 2", "device_capability_check", "replace", True,
      "return (total - free) / 1024 ** 2, total / 1024 ** 2", "follows the ported query"),
    C("indices = torch.randperm(data.size(0)).cuda()", "tensor_to_device", "replace", True,
      "indices = torch.randperm(data.size(0), device=data.device)", "cutmix permutation index"),
])

E("plantpath_infer", "inference.py", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution inference.py (fold ensemble + flip TTA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "module-level device global; otherwise inference silently runs on CPU"),
    C("state = torch.load(path, map_location='cuda')", "tensor_to_device", "replace", True,
      "state = torch.load(path, map_location='npu')", "map_location='cuda' raises without CUDA"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():", AUTOCAST_NOTE),
    C("num_workers=4, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=4, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("plantpath_dataset", "src/dataset.py", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution src/dataset.py (albumentations datasets)", [])

E("plantpath_run", "run.sh", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution run.sh (two-GPU fold training + ensemble)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced by the Ascend container profile"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "--gpu 0/1 already addresses NPUs 0/1 without a mask"),
    C("=nvidia-smi", "device_capability_check", "replace", True, "npu-smi info",
      "set -e: a missing nvidia-smi aborts the run before training starts"),
])

E("plantpath_req", "requirements.txt", "explicit_replacement",
  "Plant Pathology 2021 FGVC8 solution requirements.txt", [
    C("# CUDA 11.3 wheels:", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu must be installed next to a matching CPU torch wheel"),
    C("torch==1.10.2+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release pairs with torch 1.10; the +cu113 local version is a CUDA build"),
    C("torchvision==0.11.3+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "must match the torch version"),
    C("nvidia-ml-py3==7.352.0", "device_capability_check", "removal", False, None,
      "installs fine but is unused after the NVML code is ported"),
])
