# Labels for probe312: few-shot semantic segmentation (PFENet / HSNet / BAM / PANet / ASGNet / CyCTR / DCAMA style)
# CUDA -> Ascend NPU (torch_npu). See ../README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SEED_NOTE = ("torch.cuda seeding is a lazy no-op without CUDA; torch.manual_seed on the neighbouring line already seeds "
             "the NPU generator through the PrivateUse1 hook (unconfirmed in knowledge) - kept for clarity, not required")
PIN_NOTE = ("pin_memory=True pins for CUDA only; without a CUDA device the DataLoader silently skips pinning. "
            "Performance only (pin_memory_device='npu' unconfirmed in knowledge)")

# ------------------------------------------------------------------------------------------------ PFENet
E("pfenet_train", "train.py", "explicit_replacement",
  "PFENet train.py (hszhao/semseg-derived: mp.spawn, train_gpu, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script: torch_npu must be imported before any torch.npu use (torch 2.1 pairing has no autoload)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(x) for x in args.train_gpu)",
      "train_gpu from the YAML selects the cards; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C("torch.cuda.manual_seed(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.manual_seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", SEED_NOTE),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "each spawned worker must bind its NPU; torch.cuda.set_device raises without CUDA"),
    C("DistributedDataParallel(model.cuda(), device_ids=[gpu])", "tensor_to_device", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[gpu])",
      ".cuda() fails on an NPU host; device_ids=[int] is fine once the module is on npu"),
    C("model = torch.nn.DataParallel(model.cuda())", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model.npu())  # keeps .module and the 'module.' state_dict keys",
      "the shipped config (4 train_gpu, multiprocessing_distributed False) takes this path; DataParallel is "
      "unsupported on NPU - run single-device behind a thin wrapper so checkpoints stay compatible "
      "(or switch the config to multiprocessing DDP)"),
    C("checkpoint = torch.load(args.weight)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.weight, map_location='cpu')",
      "checkpoints saved by this script hold CUDA tensors; loading them without map_location fails without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda()", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.npu())",
      "storage.cuda() raises on an NPU host"),
    C("num_workers=args.workers, pin_memory=True, sampler=train_sampler,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler,", PIN_NOTE),
    C("num_workers=args.workers, pin_memory=True, sampler=val_sampler)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=val_sampler)", PIN_NOTE),
    C("torch.cuda.manual_seed(args.manual_seed + epoch)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.manual_seed + epoch)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(args.manual_seed + epoch)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed + epoch)", SEED_NOTE),
    C("s_input = s_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_input = s_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_mask = s_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_mask = s_mask.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
      ".cuda() fails on an NPU host"),
    C("ori_label = ori_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ori_label = ori_label.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=output = model(s_x=s_input, s_y=s_mask, x=input, y=target)", "tensor_to_device", "replace", True,
      "output = model(s_x=s_input.npu(non_blocking=True), s_y=s_mask.npu(non_blocking=True), x=input, y=target)",
      "validation never moves the support tensors: DataParallel (and DDP) scattered them from the CPU. Once "
      "DataParallel is gone (non-distributed path of the shipped config) they reach the NPU model as CPU tensors"),
    C("longerside, longerside).cuda() * 255", "tensor_to_device", "replace", True,
      "backmask = torch.ones(ori_label.size(0), longerside, longerside, device=ori_label.device) * 255",
      ".cuda() fails on an NPU host"),
])

E("pfenet_test", "test.py", "explicit_replacement",
  "PFENet test.py (5 seeds x 1000 episodes, synchronised timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(x) for x in args.test_gpu)",
      "test_gpu picks the card; ignored by the Ascend runtime"),
    C("model = torch.nn.DataParallel(model.cuda())", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model.npu())  # keeps the 'module.' state_dict keys",
      "DataParallel unsupported on NPU; single-card test anyway - a thin wrapper keeps the 'module.' keys of "
      "the trained checkpoints loadable"),
    C("map_location='cuda:0'", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.weight, map_location='npu:0')", "'cuda:0' map_location fails on an NPU host"),
    C("pin_memory=True, sampler=None)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=None)", PIN_NOTE),
    C("torch.cuda.manual_seed(val_seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(val_seed)",
      SEED_NOTE),
    C("torch.cuda.manual_seed_all(val_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(val_seed)", SEED_NOTE),
    C("s_input = s_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_input = s_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_mask = s_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_mask = s_mask.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("ori_label = ori_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ori_label = ori_label.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("torch.cuda.synchronize()  # make the timing honest", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make the timing honest", "raises on an NPU host; NPU launches are async too"),
])

E("pfenet_model", "model/PFENet.py", "explicit_replacement",
  "PFENet model/PFENet.py (prior mask, feature enrichment module)", [
    C("def forward(self, x, s_x=torch.FloatTensor(1, 1, 3, 473, 473).cuda()", "tensor_to_device", "replace", True,
      "def forward(self, x, s_x=torch.FloatTensor(1, 1, 3, 473, 473).npu(), s_y=torch.FloatTensor(1, 1, 473, 473).npu(), y=None):",
      "default arguments are evaluated at import time: importing the model already fails on an NPU host"),
    C("aux_loss = torch.zeros_like(main_loss).cuda()", "tensor_to_device", "replace", True,
      "aux_loss = torch.zeros_like(main_loss)", "zeros_like already follows main_loss; .cuda() raises on NPU"),
])

E("pfenet_util", "util/util.py", "explicit_replacement",
  "PFENet/BAM util/util.py (AverageMeter, poly LR, intersectionAndUnionGPU)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("cur = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "cur = torch.npu.memory_allocated() / 1024. / 1024.",
      "log only: without CUDA initialised the CUDA allocator stats read 0 instead of failing"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024. / 1024.", "log only: silently reports 0 MB on NPU"),
])

E("pfenet_config", "config/pascal/pascal_split0_resnet50.yaml", "explicit_replacement",
  "PFENet config/pascal/pascal_split0_resnet50.yaml", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", False, "  dist_backend: 'hccl'",
      "with multiprocessing_distributed False and world_size 1 this config never initialises a process group; "
      "needed only once someone enables DDP"),
])

E("pfenet_trainsh", "train.sh", "explicit_replacement", "PFENet train.sh launcher", [
    C("=#!/bin/sh", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN environment (ACL/HCCL libraries) must be sourced before python imports torch_npu"),
])

# ------------------------------------------------------------------------------------------------ HSNet
DP_NOTE = ("nn.DataParallel is unsupported on NPU; the rest of the script calls model.module.* and the released "
           "checkpoints carry 'module.' keys, so the port uses a thin single-device wrapper exposing .module "
           "(or moves to DDP with hccl)")
E("hsnet_train", "train.py", "device_branch_or_abstraction", "HSNet train.py (Logger, DataParallel, model.to(device))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "is_available() is False on an NPU host: training silently runs on CPU"),
    C("Logger.info('# available GPUs: %d' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "Logger.info('# available NPUs: %d' % torch.npu.device_count())", "log only; prints 0 on an NPU host"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model)  # exposes .module like DataParallel", DP_NOTE),
])

E("hsnet_test", "test.py", "device_branch_or_abstraction", "HSNet test.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("=model.eval()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "with --use_original_imgsize every episode has a new shape; jit_compile=False avoids per-shape operator "
      "compilation (msFmkTransplt performance advice) - performance only"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently falls back to CPU"),
    C("Logger.info('# available GPUs: %d' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "Logger.info('# available NPUs: %d' % torch.npu.device_count())", "log only"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model)  # exposes .module like DataParallel", DP_NOTE),
    C("model.load_state_dict(torch.load(args.load))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.load, map_location='cpu'))",
      "released checkpoints were saved from a CUDA DataParallel model; deserialising CUDA storages fails without CUDA"),
])

E("hsnet_utils", "common/utils.py", "device_branch_or_abstraction", "HSNet common/utils.py (fix_randseed, to_cuda)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("batch[key] = value.cuda()", "tensor_to_device", "replace", True, "batch[key] = value.npu()",
      "every train/test batch goes through here; the callers (utils.to_cuda) keep their name"),
    C("return torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
      "return torch.cuda.is_available() or torch.npu.is_available()",
      "only chooses the visualiser's device; CPU fallback is slow but correct"),
])

E("hsnet_logger", "common/logger.py", "device_branch_or_abstraction",
  "HSNet common/logger.py (AverageMeter with device buffers, tensorboardX Logger)", [
    C("self.class_ids_interest = torch.tensor(self.class_ids_interest).cuda()", "tensor_to_device", "replace", True,
      "self.class_ids_interest = torch.tensor(self.class_ids_interest).npu()", ".cuda() fails on an NPU host"),
    C("self.intersection_buf = torch.zeros([2, self.nclass]).float().cuda()", "tensor_to_device", "replace", True,
      "self.intersection_buf = torch.zeros([2, self.nclass]).float().npu()",
      "buffer receives index_add_ of NPU tensors; must live on the NPU"),
    C("self.union_buf = torch.zeros([2, self.nclass]).float().cuda()", "tensor_to_device", "replace", True,
      "self.union_buf = torch.zeros([2, self.nclass]).float().npu()", ".cuda() fails on an NPU host"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif torch.npu.is_available():  cls.info('Device: %s' % torch.npu.get_device_name())",
      "log only: NPU branch added next to the CUDA one (the CUDA lines inside stay as they are)"),
])

E("hsnet_env", "environment.yml", "explicit_replacement", "HSNet conda environment (pytorch channel, cudatoolkit)", [
    C("- python=3.7", "import_torch_npu", "replace", True, "  - python=3.9",
      "torch 2.1 / torch-npu 2.1.0 need Python 3.8-3.11"),
    C("- pytorch=1.5.1", "import_torch_npu", "replace", True, "    - torch==2.1.0",
      "no torch_npu exists for 1.5.1; the conda pytorch build is a CUDA build - install torch via pip next to torch-npu"),
    C("- torchvision=0.6.1", "import_torch_npu", "replace", True, "    - torchvision==0.16.0",
      "torchvision must match torch 2.1.0"),
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", False, None,
      "dead weight on an NPU host (CANN provides the runtime); whether it even resolves on aarch64 is unconfirmed"),
    C("=- cudnn", "import_torch_npu", "removal", False, None, "CUDA-only library, unused on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "the Ascend adapter itself (pairs with torch 2.1.0, CANN 8.1.RC1)"),
])

E("hsnet_testsh", "scripts/test_all.sh", "explicit_replacement", "HSNet evaluation loop over the four folds", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}", "GPU=<n> would silently be ignored and NPU 0 used"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and set -e aborts the script"),
])

# ------------------------------------------------------------------------------------------------ BAM
E("bam_train", "train.py", "explicit_replacement",
  "BAM train.py (torch.distributed.launch, --local_rank, SyncBN, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("from torch.cuda.amp import autocast as autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast as autocast",
      "with --fp16, torch.cuda.amp.autocast warns and disables itself on an NPU host: fp32 runs silently"),
    C("from torch.cuda import amp", "amp", "replace", True, "from torch_npu.npu import amp",
      "GradScaler from torch.cuda.amp disables itself without CUDA; scaler must be the NPU one when --fp16"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      ".cuda() fails on an NPU host"),
    C("args.distributed = True if torch.cuda.device_count() > 1 else False", "torch_cuda_api", "replace", True,
      "args.distributed = True if torch.npu.device_count() > 1 else False",
      "device_count() is 0 on an NPU host: four launched processes would each train undistributed"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("device = torch.device('cuda', args.local_rank)", "device_type", "replace", True,
      "device = torch.device('npu', args.local_rank)", "'cuda' device type fails on an NPU host"),
    C("num_workers=args.workers, pin_memory=True, sampler=train_sampler,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler,", PIN_NOTE),
    C("s_input = s_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_input = s_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_mask = s_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_mask = s_mask.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("target_b = target_b.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target_b = target_b.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_input, s_mask = s_input.cuda(non_blocking=True), s_mask.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "s_input, s_mask = s_input.npu(non_blocking=True), s_mask.npu(non_blocking=True)",
      ".cuda() fails on an NPU host"),
    C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
      ".cuda() fails on an NPU host"),
    C("ori_label = ori_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ori_label = ori_label.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
])

E("bam_test", "test.py", "explicit_replacement", "BAM test.py (multi-seed evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      ".cuda() fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only frees cached NPU memory between seeds"),
    C("s_input = s_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_input = s_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_mask = s_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_mask = s_mask.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("ori_label = ori_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ori_label = ori_label.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("longerside, longerside).cuda() * 255", "tensor_to_device", "replace", True,
      "backmask = torch.ones(ori_label.size(0), longerside, longerside, device=ori_label.device) * 255",
      ".cuda() fails on an NPU host"),
])

E("bam_model", "model/BAM.py", "explicit_replacement", "BAM model/BAM.py (base/meta learner ensemble, gram matrix)", [
    C("c_id_array = torch.arange(self.base_classes + 1, device='cuda')", "device_type", "replace", True,
      "c_id_array = torch.arange(self.base_classes + 1, device=base_out_soft.device)",
      "hard-coded 'cuda' device in the training-only branch fails on an NPU host"),
    C("aux_loss2 = torch.zeros_like(main_loss).cuda()", "tensor_to_device", "replace", True,
      "aux_loss2 = torch.zeros_like(main_loss)", ".cuda() fails on an NPU host"),
])

E("bam_trainsh", "train.sh", "explicit_replacement", "BAM train.sh (torch.distributed.launch, NCCL tweaks)", [
    C("=#!/bin/sh", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-specific workaround for a PCIe GPU box; no HCCL counterpart needed"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging verbosity only; ignored by HCCL"),
    C("CUDA_VISIBLE_DEVICES=${GPU_ID} python3 -m torch.distributed.launch", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU_ID} python3 -m torch.distributed.launch --nproc_per_node=${NUM_GPU} --master_port=1234 train.py \\",
      "GPU_ID is the script's device knob; the Ascend runtime ignores CUDA_VISIBLE_DEVICES"),
])

E("bam_req", "requirements.txt", "explicit_replacement", "BAM requirements.txt (CUDA 11.1 wheels)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "removal", False, None,
      "CUDA wheel index; harmless once the pins no longer carry +cu111"),
    C("torch==1.8.1+cu111", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch-npu goes right after the torch pin, which itself becomes torch==2.1.0 (no +cu111 wheel, and "
      "torch-npu must match the torch version)"),
    C("torchvision==0.9.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA-local wheel; torchvision must match torch 2.1.0"),
])

E("bam_fps", "tools/fps_benchmark.py", "explicit_replacement",
  "FPS / memory benchmark tool (CUDA events, device capability, torch.profiler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("name = torch.cuda.get_device_name(index)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(index)", "raises without CUDA"),
    C("major, minor = torch.cuda.get_device_capability(index)", "device_capability_check", "replace", True,
      "major, minor = torch.npu.get_device_capability(index) or (0, 0)",
      "no SM capability on Ascend (NPU form returns None) - the unpacking must not fail"),
    C("total = torch.cuda.get_device_properties(index).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(index).total_memory / 1024 ** 3",
      "raises without CUDA; total_memory is one of the properties NPU keeps"),
    C("from torch.profiler import profile, ProfilerActivity", "torch_cuda_api", "replace", False,
      "from torch_npu.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler",
      "--profile only: torch.profiler records no NPU kernels"),
    C("with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],", "torch_cuda_api", "replace", False,
      "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],",
      "--profile only: CUDA activity yields a CPU-only trace on NPU"),
    C("sort_by='self_cuda_time_total'", "torch_cuda_api", "replace", False,
      "print(prof.key_averages().table(sort_by='self_npu_time_total', row_limit=25))",
      "--profile only: sort key of the printed summary"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpu))", "'cuda' device fails on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "needs a CUDA device index and raises on an NPU host"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("torch.cuda.synchronize()  # wait for ender", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for ender before reading the timer", "raises without CUDA"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "print('peak memory: {:.0f} MB'.format(torch.npu.max_memory_allocated(device) / 1024 ** 2))",
      "device is an npu device after the port; the CUDA allocator rejects a non-CUDA device"),
])

# ------------------------------------------------------------------------------------------------ PANet
PANET_DP = ("DataParallel is unsupported on NPU (single device_ids here anyway); a thin wrapper keeps the 'module.' "
            "state_dict keys so train/test snapshots stay compatible")
E("panet_train", "train.py", "explicit_replacement", "PANet train.py (sacred experiment, episodic VOC loader)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = _config['cuda_visable']", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = _config['cuda_visable'].replace(' ', '')",
      "config-driven card selection is ignored by the Ascend runtime"),
    C("torch.cuda.set_device(device=_config['gpu_id'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(_config['gpu_id'])", "raises without CUDA"),
    C("model = nn.DataParallel(model.cuda(), device_ids=[_config['gpu_id'], ])", "distributed_framework", "replace",
      True, "model = SingleDeviceWrapper(model.npu())", PANET_DP),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',", PIN_NOTE),
    C("support_images = [[shot.cuda() for shot in way]", "tensor_to_device", "replace", True,
      "support_images = [[shot.npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("support_fg_mask = [[shot[f'fg_mask'].float().cuda() for shot in way]", "tensor_to_device", "replace", True,
      "support_fg_mask = [[shot[f'fg_mask'].float().npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("support_bg_mask = [[shot[f'bg_mask'].float().cuda() for shot in way]", "tensor_to_device", "replace", True,
      "support_bg_mask = [[shot[f'bg_mask'].float().npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("query_images = [query_image.cuda()", "tensor_to_device", "replace", True,
      "query_images = [query_image.npu()", ".cuda() fails on an NPU host"),
    C("[query_label.long().cuda() for query_label in", "tensor_to_device", "replace", True,
      "[query_label.long().npu() for query_label in sample_batched['query_labels']], dim=0)",
      ".cuda() fails on an NPU host"),
])

E("panet_test", "test.py", "explicit_replacement", "PANet test.py (n_runs evaluation, bbox/scribble supervision)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if mask.is_cuda:", "device_type", "replace", True, "if mask.device.type != 'cpu':",
      "is_cuda is False for NPU tensors, so the .cpu() is skipped and np.array() on an NPU tensor fails"),
    C("torch.cuda.set_device(device=_config['gpu_id'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(_config['gpu_id'])", "raises without CUDA"),
    C("model = nn.DataParallel(model.cuda(), device_ids=[_config['gpu_id'], ])", "distributed_framework", "replace",
      True, "model = SingleDeviceWrapper(model.npu())", PANET_DP),
    C("num_workers=1, pin_memory=True, drop_last=False)", "pin_memory", "replace", False,
      "num_workers=1, pin_memory=True, pin_memory_device='npu', drop_last=False)", PIN_NOTE),
    C("support_images = [[shot.cuda() for shot in way]", "tensor_to_device", "replace", True,
      "support_images = [[shot.npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("fg_masks.append(fg_mask.float().cuda())", "tensor_to_device", "replace", True,
      "fg_masks.append(fg_mask.float().npu())", ".cuda() fails on an NPU host"),
    C("bg_masks.append(bg_mask.float().cuda())", "tensor_to_device", "replace", True,
      "bg_masks.append(bg_mask.float().npu())", ".cuda() fails on an NPU host"),
    C("support_fg_mask = [[shot[f'fg_{suffix}'].float().cuda() for shot in way]", "tensor_to_device", "replace",
      True, "support_fg_mask = [[shot[f'fg_{suffix}'].float().npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("support_bg_mask = [[shot[f'bg_{suffix}'].float().cuda() for shot in way]", "tensor_to_device", "replace",
      True, "support_bg_mask = [[shot[f'bg_{suffix}'].float().npu() for shot in way]", ".cuda() fails on an NPU host"),
    C("query_images = [query_image.cuda()", "tensor_to_device", "replace", True,
      "query_images = [query_image.npu()", ".cuda() fails on an NPU host"),
    C("[query_label.cuda() for query_label in", "tensor_to_device", "replace", True,
      "[query_label.npu() for query_label in sample_batched['query_labels']], dim=0)",
      ".cuda() fails on an NPU host"),
])

E("panet_fewshot", "models/fewshot.py", "explicit_replacement", "PANet models/fewshot.py (prototype alignment)", [])

# ------------------------------------------------------------------------------------------------ ASGNet
E("asgnet_train", "train.py", "explicit_replacement",
  "ASGNet train.py (semseg lineage: apex amp/DDP/SyncBN, mp.spawn, find_free_port)", [
    C("=import apex", "amp", "removal", True, None,
      "NVIDIA apex cannot be built for NPU (Ascend apex is a separate patched build); the port drops apex for "
      "native DDP / SyncBatchNorm, and opt_level O0 means apex.amp was fp32 anyway"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C('os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = ','.join(str(x) for x in args.train_gpu)",
      "card selection ignored by the Ascend runtime"),
    C("torch.cuda.manual_seed(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.manual_seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", SEED_NOTE),
    C("BatchNorm = apex.parallel.SyncBatchNorm", "distributed_framework", "replace", True,
      "BatchNorm = nn.SyncBatchNorm", "the shipped config (sync_bn + multiprocessing DDP) takes this path"),
    C("from lib.sync_bn.modules import BatchNorm2d", "custom_cuda_extension", "replace", True,
      "BatchNorm2d = nn.BatchNorm2d  # lib.sync_bn JIT-compiles CUDA kernels",
      "single-node non-DDP sync_bn path loads a JIT-built CUDA extension; no nvcc on NPU"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
      "raises without CUDA"),
    C("model, optimizer = apex.amp.initialize(model.cuda(), optimizer", "amp", "replace", True,
      "model = model.npu()  # opt_level O0 == fp32; torch.npu.amp if mixed precision is wanted",
      "apex.amp removed with apex; .cuda() fails on an NPU host"),
    C("model = apex.parallel.DistributedDataParallel(model)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])", "apex DDP removed with apex"),
    C("model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[gpu])", "tensor_to_device",
      "replace", True, "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[gpu])",
      "use_apex False path"),
    C("model = torch.nn.DataParallel(model.cuda())", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model.npu())", "DataParallel unsupported on NPU (single-process path)"),
    C("map_location=lambda storage, loc: storage.cuda(gpu)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.npu(gpu))",
      "storage.cuda() raises on an NPU host"),
    C("num_workers=args.workers, pin_memory=True, sampler=train_sampler,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler,", PIN_NOTE),
    C("num_workers=args.workers, pin_memory=True, sampler=val_sampler)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=val_sampler)", PIN_NOTE),
    C("s_input = s_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_input = s_input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_mask = s_mask.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_mask = s_mask.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("s_init_seed = s_init_seed.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_init_seed = s_init_seed.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("with apex.amp.scale_loss(loss, optimizer) as scaled_loss:", "amp", "replace", True,
      "loss.backward()  # apex removed; plain fp32 backward (was O0)", "apex removed"),
    C("s_input, s_mask, s_init_seed = s_input.cuda(non_blocking=True), s_mask.cuda(non_blocking=True), \\",
      "tensor_to_device", "replace", True,
      "s_input, s_mask, s_init_seed = s_input.npu(non_blocking=True), s_mask.npu(non_blocking=True), \\",
      ".cuda() fails on an NPU host"),
    C("=s_init_seed.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "s_init_seed.npu(non_blocking=True)", "continuation line of the statement above"),
    C("input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "input, target = input.npu(non_blocking=True), target.npu(non_blocking=True)",
      ".cuda() fails on an NPU host"),
    C("ori_label = ori_label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "ori_label = ori_label.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("longerside, longerside).cuda() * 255", "tensor_to_device", "replace", True,
      "backmask = torch.ones(ori_label.size(0), longerside, longerside, device=ori_label.device) * 255",
      ".cuda() fails on an NPU host"),
])

E("asgnet_config", "config/pascal/pascal_asgnet_split0_resnet50.yaml", "explicit_replacement",
  "ASGNet config/pascal YAML (4 GPUs, multiprocessing DDP, apex flags)", [
    C("dist_backend: 'nccl'", "dist_backend", "replace", True, "  dist_backend: 'hccl'",
      "multiprocessing_distributed True: train.py passes this string to init_process_group"),
])

E("asgnet_model", "model/ASGNet.py", "explicit_replacement",
  "ASGNet model (superpixel-guided clustering + guided prototype allocation)", [
    C("yy = torch.arange(H, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
      "yy = torch.arange(H, dtype=torch.float, device=feat.device).view(H, 1).expand(H, W) / H",
      ".cuda() fails on an NPU host"),
    C("xx = torch.arange(W, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
      "xx = torch.arange(W, dtype=torch.float, device=feat.device).view(1, W).expand(H, W) / W",
      ".cuda() fails on an NPU host"),
])

# ------------------------------------------------------------------------------------------------ CyCTR (MSDeformAttn)
E("cyctr_setup", "model/ops/setup.py", "kernel_rewrite", "CyCTR model/ops/setup.py (Deformable-DETR MSDA CUDA op)", [
    C("extension = CUDAExtension", "custom_cuda_extension", "removal", False, None,
      "the NPU port does not build this op (the PyTorch grid_sample path is used instead); setup.py is simply no "
      "longer run - the failing invocation is the Dockerfile's make.sh line"),
])

E("cyctr_msda_func", "model/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "Deformable-DETR ms_deform_attn_func.py as vendored by CyCTR", [
    C("import MultiScaleDeformableAttention as MSDA", "custom_cuda_extension", "removal", True, None,
      "the nvcc-built extension does not exist on NPU, so importing the package fails; the autograd Function that "
      "uses MSDA becomes dead code once the call site switches to ms_deform_attn_core_pytorch"),
])

E("cyctr_msda_module", "model/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "Deformable-DETR ms_deform_attn.py module as vendored by CyCTR", [
    C("from ..functions import MSDeformAttnFunction", "custom_cuda_extension", "replace", True,
      "from ..functions.ms_deform_attn_func import ms_deform_attn_core_pytorch",
      "call site moves to the pure-PyTorch implementation"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", True,
      "output = ms_deform_attn_core_pytorch(",
      "CUDA kernel call site; the PyTorch version (F.grid_sample, supported on NPU) is slower but runs"),
    C("value, input_spatial_shapes, input_level_start_index, sampling_locations, attention_weights, self.im2col_step)",
      "custom_cuda_extension", "replace", True,
      "value, input_spatial_shapes, sampling_locations, attention_weights)",
      "argument list of the replacement (no level_start_index / im2col_step)"),
])

E("cyctr_docker", "Dockerfile", "explicit_replacement", "CyCTR Dockerfile (pytorch CUDA devel image, builds MSDA)", [
    C("FROM pytorch/pytorch:1.8.1-cuda11.1-cudnn8-devel", "import_torch_npu", "replace", True,
      "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.0-A2-2.1.0-ubuntu20.04",
      "CUDA base image has no CANN/torch_npu; an Ascend PyTorch image (tag unconfirmed) replaces it"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C('ENV FORCE_CUDA="1"', "env_var", "removal", False, None, "only read by CUDA extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "container device exposure: read by the Ascend Docker Runtime only; with plain docker the devices are "
      "passed with --device /dev/davinciN instead"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container toolkit setting; meaningless on Ascend"),
    C("RUN cd model/ops && sh make.sh && python test.py", "custom_cuda_extension", "removal", True, None,
      "setup.py raises NotImplementedError without CUDA, so the image build fails"),
])

# ------------------------------------------------------------------------------------------------ DCAMA
E("dcama_train", "train.py", "explicit_replacement",
  "DCAMA train.py (HSNet lineage with DDP --local_rank and torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "scripts/train.sh passes --amp: CUDA autocast/GradScaler disable themselves on an NPU host (silent fp32)"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "'cuda' device fails on an NPU host"),
    C("Logger.info('# available GPUs: %d' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "Logger.info('# available NPUs: %d' % torch.npu.device_count())", "log only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; the comment's OOM workaround needs the NPU call to take effect"),
])

E("dcama_utils", "common/utils.py", "explicit_replacement", "DCAMA common/utils.py (DDP helpers, reduce_metric)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("batch[key] = value.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "batch[key] = value.npu(non_blocking=True)", ".cuda() fails on an NPU host"),
    C("metric = torch.tensor(metric, dtype=torch.float32, device='cuda')", "device_type", "replace", True,
      "metric = torch.tensor(metric, dtype=torch.float32, device='npu')",
      "'cuda' device fails; HCCL all_reduce also needs the tensor on the NPU"),
    C("args.local_rank = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.local_rank = args.rank % torch.npu.device_count()",
      "device_count() is 0 on an NPU host: ZeroDivisionError under SLURM"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", False, "args.dist_backend = 'hccl'",
      "train.py hard-codes its backend and never reads args.dist_backend; fixed for consistency only"),
])

E("dcama_trainsh", "scripts/train.sh", "explicit_replacement", "DCAMA scripts/train.sh (4-GPU DDP launch)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "hard-coded to the first four cards, which local_rank 0-3 pick anyway; only matters to restrict visibility"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single-node launch; NIC selection matters only multi-node"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only switch, no HCCL counterpart needed"),
])

E("dcama_dataset", "data/dataset.py", "explicit_replacement", "DCAMA/HSNet data/dataset.py (PASCAL-5i episodes)", [
    C("num_workers=nworker, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=nworker, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
])
