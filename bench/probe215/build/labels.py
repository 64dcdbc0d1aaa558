# Labels for probe215: referring-expression comprehension / segmentation and visual grounding
# (MDETR, TransVG, LAVT, CRIS, ReLA/GRES, one-stage grounding) moved from CUDA GPUs to Ascend NPUs.
#
# One label per line a careful porter would edit. "required" means the unchanged line fails, computes
# something wrong, or silently does the wrong thing on an NPU host (torch CPU build + torch_npu + CANN);
# performance-only edits, silent no-ops and anything not confirmable in /work/shared/knowledge are
# required=False (the note then says "unconfirmed").
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any 'npu' device, torch.npu.* call or hccl "
               "backend is used (autoload only exists from torch_npu 2.5.1; the ported stack pins 2.1.0)")

# ----------------------------------------------------------------------------------------------------------
# MDETR
# ----------------------------------------------------------------------------------------------------------
E("mdetr_main", "main.py", "device_branch_or_abstraction",
  "MDETR main.py (argparse with --device cuda, DETR-style training/eval driver)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help="device to use for training / testing")',
        "default device string; torch.device('cuda') and model.to(device) fail on a host without CUDA"),
      C("optimizer = torch.optim.SGD(param_dicts", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedSGD(param_dicts, lr=args.lr, momentum=0.9, weight_decay=args.weight_decay)",
        "performance only: tensor-fused SGD from torch_npu.optim"),
      C("optimizer = torch.optim.AdamW(param_dicts", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=args.lr, weight_decay=args.weight_decay)",
        "performance only: NpuFusedAdamW (msFmkTransplt advice; faster, more memory)"),
  ])

E("mdetr_dist", "util/dist.py", "device_branch_or_abstraction",
  "MDETR util/dist.py (detectron2-style comm helpers, init_distributed_mode with nccl)",
  [
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "backend-string comparison is not rewritten by any tool; with hccl it returns the HCCL WORLD group and the "
        "MDETR_CPU_REDUCE path then all_gathers CPU tensors over HCCL"),
      C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", True,
        'device = "npu" if cpu_group is None else "cpu"',
        "serialized pickles are moved to the accelerator for all_gather over the default (hccl) group"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "torch.cuda.set_device needs the CUDA runtime"),
      C('args.dist_backend = "nccl"', "dist_backend", "replace", True,
        'args.dist_backend = "hccl"', "NCCL is not available; HCCL is the collective backend on Ascend"),
  ])

E("mdetr_metrics", "util/metrics.py", "device_branch_or_abstraction",
  "MDETR util/metrics.py (SmoothedValue / MetricLogger with max-mem logging)",
  [
      C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "device_type", "replace", True,
        't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
        "metric sync tensor must live on the HCCL device; kept float64 (whether HCCL all_reduce takes fp64 is "
        "unconfirmed, float32 is the safe fallback)"),
      C("log_memory = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "log_memory = torch.npu.is_available()",
        "logging only: False on an NPU host, so the 'max mem' column silently disappears"),
      C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB,",
        "logging only; reached once the guard above is ported (torch.npu.max_memory_allocated is the NPU form)"),
  ])

E("mdetr_engine", "engine.py", "device_branch_or_abstraction",
  "MDETR engine.py (train_one_epoch / evaluate, everything via .to(device))",
  [])

E("mdetr_demo", "demo/refexp_demo.py", "transfer_to_npu",
  "MDETR colab demo (torch.hub.load('ashkamath/mdetr:main', ...) + .cuda() inference and plotting)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu; from torch_npu.contrib import transfer_to_npu",
        "throw-away demo ported with transfer_to_npu: .cuda(), torch.cuda.synchronize and get_device_name are "
        "redirected to the NPU, so no other line is edited"),
  ])

E("mdetr_submitit", "run_with_submitit.py", "device_branch_or_abstraction",
  "MDETR run_with_submitit.py (SLURM multi-node launcher)",
  [
      C("gpus_per_node=num_gpus_per_node,", "distributed_framework", "replace", False,
        'slurm_additional_parameters={"gres": f"npu:{num_gpus_per_node}"},',
        "SLURM GPU gres request; how NPUs are exposed to SLURM is site-specific (unconfirmed)"),
  ])

E("mdetr_sh", "scripts/finetune_refexp.sh", "explicit_replacement",
  "MDETR README fine-tuning commands for RefCOCO/+/g wrapped in a launcher script",
  [
      C("=set -e", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; without it import torch_npu fails with libhccl.so not found unless the login shell "
        "already sources it"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "the user-selectable card list is silently ignored by the Ascend runtime"),
      C("NGPUS=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", True,
        "NGPUS=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
        "process count is derived from the visible-device variable; must follow the rename or it reads as 1"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "NCCL_* is ignored by HCCL; closest knob is the CANN log level (value mapping unconfirmed)"),
  ])

# ----------------------------------------------------------------------------------------------------------
# TransVG
# ----------------------------------------------------------------------------------------------------------
E("transvg_train", "train.py", "device_branch_or_abstraction",
  "TransVG train.py (DETR-derived driver, poly lr, per-branch lr groups)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "default device string used for torch.device(args.device)"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "lazily queued and never run on a CUDA-less host; torch.manual_seed above already seeds the NPU generator"),
      C("optimizer = torch.optim.RMSprop(param_list", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedRMSprop(param_list, lr=args.lr, weight_decay=args.weight_decay)",
        "performance only"),
      C("optimizer = torch.optim.AdamW(param_list", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(param_list, lr=args.lr, weight_decay=args.weight_decay)",
        "performance only (default optimizer of TransVG)"),
      C("optimizer = torch.optim.Adam(param_list", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(param_list, lr=args.lr, weight_decay=args.weight_decay)",
        "performance only"),
      C("optimizer = torch.optim.SGD(param_list", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedSGD(param_list, lr=args.lr, weight_decay=args.weight_decay, momentum=0.9)",
        "performance only"),
      C("=pin_memory=True)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu")',
        "pinning targets CUDA by default; on NPU it is at best a no-op (unconfirmed), performance only"),
  ])

E("transvg_engine", "engine.py", "device_branch_or_abstraction",
  "TransVG engine.py (train_one_epoch / validate / evaluate)",
  [
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "initialises the CUDA runtime -> raises on an NPU host"),
  ])

E("transvg_misc", "utils/misc.py", "device_branch_or_abstraction",
  "TransVG utils/misc.py (DETR util/misc.py: pickle all_gather, NestedTensor, init_distributed_mode)",
  [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "metric sync tensor for all_reduce over hccl"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
        'tensor = torch.ByteTensor(storage).to("npu")', "pickled payload moved to the collective device"),
      C('local_size = torch.tensor([tensor.numel()], device="cuda")', "device_type", "replace", True,
        'local_size = torch.tensor([tensor.numel()], device="npu")', "hard-coded CUDA device"),
      C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "device_type", "replace", True,
        'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "hard-coded CUDA device"),
      C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "device_type", "replace", True,
        'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "hard-coded CUDA device"),
      C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "device_type",
        "replace", True,
        'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
        "hard-coded CUDA device"),
      C("on_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "on_gpu = torch.npu.is_available()", "logging only: max-mem column silently dropped on NPU"),
      C("extra = {'memory': torch.cuda.max_memory_allocated() / MB} if on_gpu else {}", "torch_cuda_api", "replace",
        False, "extra = {'memory': torch.npu.max_memory_allocated() / MB} if on_gpu else {}",
        "logging only; must follow the guard above"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "0 devices -> ZeroDivisionError on the SLURM path"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "needs the CUDA runtime"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
        "args.dist_backend = 'hccl'", "NCCL unavailable on Ascend"),
  ])

E("transvg_eval", "eval.py", "device_branch_or_abstraction",
  "TransVG eval.py (with a --gpu_id flag for single-card evaluation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "default device string"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu_id",
        "card selection silently ignored on NPU (evaluation always lands on card 0); must be set before the "
        "NPU is first used"),
  ])

E("transvg_sh", "train.sh", "explicit_replacement",
  "TransVG README training / evaluation commands (torch.distributed.launch)",
  [
      C("# pretrained DETR weights must be in ./saved_models", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment for torch_npu unless already sourced by the shell"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "ignored on NPU, but it lists all eight cards, which is what the runtime exposes anyway"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only switch, ignored by HCCL"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
        "NVLink P2P level for NCCL, meaningless on Ascend"),
      C("CUDA_VISIBLE_DEVICES=0 python eval.py", "env_var", "replace", False,
        "ASCEND_RT_VISIBLE_DEVICES=0 python eval.py --batch_size 32 --num_workers 4 \\",
        "single-process eval uses card 0 anyway, so ignoring the variable is harmless here"),
  ])

# ----------------------------------------------------------------------------------------------------------
# LAVT
# ----------------------------------------------------------------------------------------------------------
E("lavt_args", "args.py", "device_branch_or_abstraction",
  "LAVT args.py (argparse for train.py / test.py)",
  [
      C("parser.add_argument('--device', default='cuda:0', help='device')", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu:0', help='device')",
        "test.py builds torch.device(args.device) from this default"),
  ])

E("lavt_train", "train.py", "device_branch_or_abstraction",
  "LAVT train.py (Swin + BERT, SyncBatchNorm, DDP, per-iteration empty_cache)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("weight = torch.FloatTensor([0.9, 1.1]).cuda()", "tensor_to_device", "replace", True,
        "weight = torch.FloatTensor([0.9, 1.1]).npu()", "class weights of the CE loss"),
      C("image, sentences, attentions = image.cuda(non_blocking=True), \\", "tensor_to_device", "replace", True,
        "image, sentences, attentions = image.npu(non_blocking=True), \\", "evaluate(): batch to device"),
      C("sentences.cuda(non_blocking=True), attentions.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "sentences.npu(non_blocking=True), attentions.npu(non_blocking=True)", "evaluate(): batch to device"),
      C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "evaluate(): batch to device"),
      C("=image, target, sentences, attentions = image.cuda(non_blocking=True),\\", "tensor_to_device", "replace",
        True, "image, target, sentences, attentions = image.npu(non_blocking=True),\\", "train: batch to device"),
      C("=target.cuda(non_blocking=True),\\", "tensor_to_device", "replace", True,
        "target.npu(non_blocking=True),\\", "train: batch to device"),
      C("=sentences.cuda(non_blocking=True),\\", "tensor_to_device", "replace", True,
        "sentences.npu(non_blocking=True),\\", "train: batch to device"),
      C("=attentions.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "attentions.npu(non_blocking=True)", "train: batch to device"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "initialises CUDA -> raises on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op when CUDA was never initialised; the NPU cache is what LAVT meant to release "
        "(per-iteration emptying is itself a slowdown)"),
      C("torch.cuda.synchronize()  # make sure the cached blocks", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # make sure the cached blocks are really released before the next batch",
        "initialises CUDA -> raises on an NPU host"),
      C("pin_memory=args.pin_mem, drop_last=True)", "pin_memory", "replace", False,
        'sampler=train_sampler, num_workers=args.workers, pin_memory=args.pin_mem, pin_memory_device="npu", drop_last=True)',
        "performance only (--pin_mem); pinning for NPU unconfirmed"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model to device"),
      C("=bert_model.cuda()", "tensor_to_device", "replace", True, "bert_model.npu()", "BERT to device"),
      C("optimizer = torch.optim.AdamW(params_to_optimize,", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdamW(params_to_optimize,", "performance only"),
  ])

E("lavt_utils", "utils.py", "device_branch_or_abstraction",
  "LAVT utils.py (torchvision-reference MetricLogger, init_distributed_mode with --local_rank)",
  [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')", "metric sync tensor"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))",
        "logging only: expected to read 0 on a host where CUDA is never initialised (unconfirmed)"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "needs the CUDA runtime"),
      C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)",
        "NCCL unavailable on Ascend"),
  ])

E("lavt_test", "test.py", "device_branch_or_abstraction",
  "LAVT test.py (single-device evaluation with --device)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if device.type == 'cuda':", "device_type", "replace", False,
        "if device.type == 'npu':", "logging only: peak-memory print silently skipped"),
      C("print('peak GPU memory: %.0f MB' % (torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace",
        False, "print('peak NPU memory: %.0f MB' % (torch.npu.max_memory_allocated(device) / 1024. / 1024.))",
        "logging only; must change together with the guard (torch.cuda.* rejects an npu device)"),
  ])

E("lavt_req", "requirements.txt", "explicit_replacement",
  "LAVT requirements (CUDA 11.1 torch wheels, mmcv-full from the OpenMMLab cu111 index)",
  [
      C("=-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; x86 Ascend hosts take the CPU torch build (aarch64: plain PyPI)"),
      C("torch==1.8.1+cu111", "import_torch_npu", "replace", True, "torch==2.1.0",
        "CUDA build of torch, and 1.8.1 has no maintained torch_npu; torch must match the torch-npu pin"),
      C("torchvision==0.9.1+cu111", "import_torch_npu", "replace", True, "torchvision==0.16.0",
        "CUDA build; torchvision must match torch 2.1.0"),
      C("-f https://download.openmmlab.com/mmcv/dist/cu111/torch1.8.0/index.html", "custom_cuda_extension", "removal",
        False, None, "CUDA-specific mmcv wheel index"),
      C("mmcv-full==1.3.12", "custom_cuda_extension", "replace", False, "mmcv==1.7.2",
        "mmcv-full ships CUDA ops LAVT does not use (only the checkpoint/runner helpers); lite build avoids an "
        "nvcc-less source build (unconfirmed)"),
      C("=yacs", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
        "the NPU backend itself; pin pairs with torch 2.1.0"),
  ])

# ----------------------------------------------------------------------------------------------------------
# CRIS
# ----------------------------------------------------------------------------------------------------------
E("cris_train", "train.py", "device_branch_or_abstraction",
  "CRIS train.py (mp.spawn per GPU, AMP GradScaler, SyncBN, DDP, wandb)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
        "amp.GradScaler() below is the CUDA scaler: disabled with a warning when CUDA is absent, so loss "
        "scaling silently stops"),
      C("args.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.ngpus_per_node = torch.npu.device_count()",
        "0 on an NPU host: mp.spawn starts no workers and the batch-size division fails"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "needs the CUDA runtime"),
      C("model = nn.parallel.DistributedDataParallel(model.cuda(),", "tensor_to_device", "replace", True,
        "model = nn.parallel.DistributedDataParallel(model.npu(),", "model to device before DDP"),
      C("optimizer = torch.optim.Adam(param_list,", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam(param_list,", "performance only"),
      C("=pin_memory=True,", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu",', "performance only (unconfirmed)"),
      C("pin_memory=True, sampler=val_sampler, drop_last=False)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", sampler=val_sampler, drop_last=False)',
        "performance only (unconfirmed)"),
      C("args.resume, map_location=lambda storage: storage.cuda())", "tensor_to_device", "replace", True,
        "args.resume, map_location='cpu')", "storage.cuda() raises without CUDA; load to CPU, load_state_dict copies"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on an NPU host; end-of-epoch cache release"),
  ])

E("cris_engine", "engine/engine.py", "device_branch_or_abstraction",
  "CRIS engine/engine.py (train with amp.autocast + GradScaler, validate, inference with cv2 warps)",
  [
      C("import torch.cuda.amp as amp", "amp", "replace", True, "import torch_npu.npu.amp as amp",
        "amp.autocast() under this import is the CUDA autocast: disabled on an NPU host, so training silently "
        "runs in fp32; the autocast call sites then need no edit"),
      C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "image = image.npu(non_blocking=True)", "batch to device"),
      C("text = text.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "text = text.npu(non_blocking=True)", "batch to device"),
      C("target = target.cuda(non_blocking=True).unsqueeze(1)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True).unsqueeze(1)", "batch to device"),
      C("imgs = imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "imgs = imgs.npu(non_blocking=True)", "validation batch to device"),
      C("texts = texts.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "texts = texts.npu(non_blocking=True)", "validation batch to device"),
      C("=img = img.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "img = img.npu(non_blocking=True)", "inference image to device"),
      C("text = tokenize(sent, args.word_len, True).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "text = tokenize(sent, args.word_len, True).npu(non_blocking=True)", "inference tokens to device"),
  ])

E("cris_misc", "utils/misc.py", "device_branch_or_abstraction",
  "CRIS utils/misc.py (mmcv-style seeding helpers, GPU metrics, loguru setup)",
  [
      C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", False,
        "def init_random_seed(seed=None, device='npu'):",
        "CRIS calls it before the process group exists (world_size 1 -> early return), so the device is never "
        "used in this project; would fail if called after init"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", "queued lazily and never applied; torch.manual_seed covers the NPU"),
      C("if not torch.cuda.is_available() or get_dist_info()[0] != 0:", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available() or get_dist_info()[0] != 0:",
        "debug helper: silently returns on NPU, logging only"),
      C("alloc = torch.cuda.memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "alloc = torch.npu.memory_allocated() / 1024 ** 3", "logging only, follows the guard"),
      C("reserved = torch.cuda.memory_reserved() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved() / 1024 ** 3", "logging only, follows the guard"),
  ])

E("cris_clip", "clip/clip.py", "device_branch_or_abstraction",
  "openai/CLIP clip/clip.py as vendored by CLIP-based referring-segmentation repos (load / tokenize)",
  [
      C('device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu"', "device_type",
        "replace", True,
        'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
        "default silently resolves to CPU on an NPU host (and then casts the model to fp32)"),
  ])

E("cris_cfg", "config/refcoco/cris_r50.yaml", "explicit_replacement",
  "CRIS config/refcoco/cris_r50.yaml (DATA / TRAIN / Distributed / TEST sections)",
  [
      C("dist_backend: 'nccl'", "dist_backend", "replace", True, "dist_backend: 'hccl'",
        "read by train.py for dist.init_process_group"),
  ])

# ----------------------------------------------------------------------------------------------------------
# ReLA / GRES (detectron2 + MSDeformAttn)
# ----------------------------------------------------------------------------------------------------------
E("rela_train", "train_net.py", "device_branch_or_abstraction",
  "ReLA/GRES train_net.py (Mask2Former-style detectron2 DefaultTrainer, launch())",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
        'if torch.npu.is_available(): cfg.MODEL.DEVICE = "npu"  # new branch ahead of the CPU fallback below',
        "on an NPU host this branch forces cfg.MODEL.DEVICE='cpu', so training silently runs on the CPU"),
      C("optimizer = maybe_add_full_model_gradient_clipping(torch.optim.SGD)(", "fused_optimizer", "replace", False,
        "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedSGD)(", "performance only"),
      C("optimizer = maybe_add_full_model_gradient_clipping(torch.optim.AdamW)(", "fused_optimizer", "replace", False,
        "optimizer = maybe_add_full_model_gradient_clipping(torch_npu.optim.NpuFusedAdamW)(", "performance only"),
      C("=launch(", "distributed_framework", "replace", False, "npu_launch(",
        "detectron2.engine.launch initialises NCCL and calls torch.cuda.set_device internally (from memory, "
        "unconfirmed); needs an hccl-aware launcher for --num-gpus > 1"),
  ])

E("rela_msfunc", "gres_model/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py", "kernel_rewrite",
  "Deformable-DETR / Mask2Former MSDeformAttnFunction wrapper around the MultiScaleDeformableAttention CUDA op",
  [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", False,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "only matters if an NPU kernel is put behind MSDeformAttnFunction; with the PyTorch fallback the "
        "Function is dead code"),
      C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", "replace", True,
        "MSDA = None  # no CUDA op on Ascend: MSDeformAttn uses ms_deform_attn_core_pytorch (grid_sample has an NPU kernel)",
        "the extension cannot be built without nvcc; re-raising makes the whole model package unimportable"),
  ])

E("rela_msmod", "gres_model/modeling/pixel_decoder/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "Deformable-DETR / Mask2Former MSDeformAttn module (CUDA op with bare-except PyTorch fallback)",
  [
      C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", "replace", False,
        "output = ms_deform_attn_core_pytorch(",
        "call site of the CUDA op; once MSDA is None the bare except already falls back, so calling the PyTorch "
        "path directly only removes one raised exception per layer per step"),
  ])

E("rela_setup", "gres_model/modeling/pixel_decoder/ops/setup.py", "kernel_rewrite",
  "Deformable-DETR ops/setup.py (CUDAExtension build of MultiScaleDeformableAttention)",
  [
      C("raise NotImplementedError('CUDA_HOME is None. Please set environment variable CUDA_HOME.')",
        "custom_cuda_extension", "replace", False,
        "return []  # Ascend: nothing to build, MSDeformAttn runs ms_deform_attn_core_pytorch",
        "only reached through make.sh, whose call is removed in the port; keeps installs that still run setup.py "
        "from failing"),
  ])

E("rela_make", "gres_model/modeling/pixel_decoder/ops/make.sh", "kernel_rewrite",
  "Deformable-DETR ops/make.sh",
  [
      C("export TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "CUDA arch list, meaningless on Ascend"),
      C("python setup.py build install", "custom_cuda_extension", "removal", True, None,
        "setup.py raises NotImplementedError without CUDA_HOME (or fails in nvcc); no build on Ascend"),
  ])

E("rela_eval", "gres_model/evaluation/refer_evaluation.py", "device_branch_or_abstraction",
  "ReLA/GRES ReferEvaluator (gIoU / cIoU / N-acc over gRefCOCO, detectron2 comm.gather)",
  [])

E("rela_docker", "Dockerfile", "explicit_replacement",
  "GRES/ReLA-style training Dockerfile (nvidia/cuda devel base, detectron2 from source, make.sh)",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "no CANN toolkit in the CUDA image, so torch_npu cannot load"),
      C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", False, None,
        "makes source builds (detectron2, the ops) pick CUDAExtension and call nvcc; likely fatal in a CANN image "
        "(unconfirmed for detectron2)"),
      C('ENV TORCH_CUDA_ARCH_LIST="Pascal;Volta;Turing;Ampere"', "env_var", "removal", False, None,
        "CUDA arch list, meaningless on Ascend"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None,
        "points at a toolkit that does not exist in the CANN image"),
      C("RUN pip install torch==1.10.1+cu113", "import_torch_npu", "replace", True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheels; no torch_npu exists for torch 1.10"),
      C("RUN cd gres_model/modeling/pixel_decoder/ops && sh make.sh", "custom_cuda_extension", "removal", True, None,
        "the MSDeformAttn CUDA build fails without nvcc and stops the image build"),
      C("ENV NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "ENV HCCL_SOCKET_IFNAME=eth0",
        "NIC selection for the collective bootstrap; only matters for multi-node runs"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; NPUs are mounted by Ascend Docker Runtime "
        "(ASCEND_VISIBLE_DEVICES at run time)"),
  ])

E("rela_env", "environment.yml", "explicit_replacement",
  "ReLA/GRES conda environment (pytorch + cudatoolkit 11.3, detectron2 cu113 wheels)",
  [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel, not needed"),
      C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
        "CUDA runtime package; useless on Ascend (may not even resolve on aarch64, unconfirmed)"),
      C("- pytorch=1.10.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0=*cpu*",
        "no torch_npu for torch 1.10; CPU build of the matching torch"),
      C("- torchvision=0.11.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "must match torch 2.1.0"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
        "the NPU backend itself"),
      C("- -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu113/torch1.10/index.html", "custom_cuda_extension",
        "removal", False, None, "CUDA-built detectron2 wheel index for torch 1.10"),
      C("- detectron2==0.6", "custom_cuda_extension", "replace", True,
        "- git+https://github.com/facebookresearch/detectron2.git@v0.6",
        "only cu113/torch1.10 wheels exist for this pin; on the new torch it has to be built from source"),
      C("- nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
        "pynvml has no NPU counterpart (use npu-smi / torch.npu.mem_get_info); harmless but useless"),
  ])

# ----------------------------------------------------------------------------------------------------------
# One-stage visual grounding (ReSC / onestage_grounding style)
# ----------------------------------------------------------------------------------------------------------
E("onestage_train", "train_yolo.py", "explicit_replacement",
  "zyang-ur onestage_grounding train_yolo.py (YOLOv3 + BERT/LSTM, DataParallel, --gpu)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("pred_bbox = Variable(torch.zeros(batch, 4).cuda())", "tensor_to_device", "replace", True,
        "pred_bbox = Variable(torch.zeros(batch, 4).npu())", "loss buffers on device"),
      C("gt_bbox = Variable(torch.zeros(batch, 4).cuda())", "tensor_to_device", "replace", True,
        "gt_bbox = Variable(torch.zeros(batch, 4).npu())", "loss buffers on device"),
      C("coord = Variable(torch.zeros(raw_coord.size(0), raw_coord.size(1)).cuda())", "tensor_to_device", "replace",
        True, "coord = Variable(torch.zeros(raw_coord.size(0), raw_coord.size(1)).npu())", "target building"),
      C("torch.ones(1).cuda().squeeze()", "tensor_to_device", "replace", True,
        "bbox_list[best_scale][ii, best_n % 3, :, gj, gi] = torch.stack([tx, ty, tw, th, torch.ones(1).npu().squeeze()])",
        "target building"),
      C("bbox_list[ii] = Variable(bbox_list[ii].cuda())", "tensor_to_device", "replace", True,
        "bbox_list[ii] = Variable(bbox_list[ii].npu())", "target building"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "--gpu card selection silently ignored on NPU"),
      C("torch.cuda.manual_seed_all(args.seed+3)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed+3)",
        "lazily queued and never applied on a CUDA-less host; torch.manual_seed above seeds the NPU too"),
      C("=pin_memory=True, drop_last=True, num_workers=args.workers)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", drop_last=True, num_workers=args.workers)',
        "performance only (unconfirmed)"),
      C("val_loader = DataLoader(val_dataset", "pin_memory", "replace", False,
        'val_loader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False, pin_memory=True, pin_memory_device="npu", drop_last=True, num_workers=args.workers)',
        "performance only (unconfirmed)"),
      C("pin_memory=True, drop_last=True, num_workers=0)", "pin_memory", "replace", False,
        'pin_memory=True, pin_memory_device="npu", drop_last=True, num_workers=0)', "performance only (unconfirmed)"),
      C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
        "model = SingleDeviceWrapper(model).npu()  # keeps .module and the 'module.' checkpoint keys",
        "torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 list, msFmkTransplt: use DDP); a thin "
        "wrapper keeps model.module.* and checkpoint keys working"),
      C("pretrained_dict = torch.load(args.pretrain)['state_dict']", "tensor_to_device", "replace", True,
        "pretrained_dict = torch.load(args.pretrain, map_location='cpu')['state_dict']",
        "released checkpoints were saved from CUDA tensors; without map_location torch.load tries to restore "
        "them on CUDA and raises"),
      C("checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.resume, map_location='cpu')",
        "same: GPU-saved checkpoints need map_location on an NPU host"),
      C("optimizer = torch.optim.Adam([{'params': rest_param},", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedAdam([{'params': rest_param},", "performance only"),
      C("optimizer = torch.optim.SGD([{'params': rest_param},", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedSGD([{'params': rest_param},", "performance only"),
      C("optimizer = torch.optim.RMSprop([{'params': rest_param},", "fused_optimizer", "replace", False,
        "optimizer = torch_npu.optim.NpuFusedRMSprop([{'params': rest_param},", "performance only (default optimizer)"),
      C("=imgs = imgs.cuda()", "tensor_to_device", "replace", True, "imgs = imgs.npu()", "train batch to device"),
      C("=word_id = word_id.cuda()", "tensor_to_device", "replace", True, "word_id = word_id.npu()",
        "train batch to device"),
      C("=word_mask = word_mask.cuda()", "tensor_to_device", "replace", True, "word_mask = word_mask.npu()",
        "train batch to device"),
      C("=bbox = bbox.cuda()", "tensor_to_device", "replace", True, "bbox = bbox.npu()", "train batch to device"),
      C("imgs, word_id, word_mask, bbox = imgs.cuda(), word_id.cuda(), word_mask.cuda(), bbox.cuda()",
        "tensor_to_device", "replace", True,
        "imgs, word_id, word_mask, bbox = imgs.npu(), word_id.npu(), word_mask.npu(), bbox.npu()",
        "validation batch to device"),
  ])

E("onestage_model", "model/grounding_model.py", "explicit_replacement",
  "onestage_grounding model/grounding_model.py (coord map, MAttNet-style RNNEncoder, BERT text branch)",
  [
      C("return coord.cuda()", "tensor_to_device", "replace", True, "return coord.npu()",
        "coordinate map built on CPU and moved to the accelerator"),
      C("embedded = nn.utils.rnn.pack_padded_sequence(embedded, sorted_input_lengths_list, batch_first=True)",
        "unsupported_op_workaround", "replace", False,
        "lengths = torch.tensor(sorted_input_lengths_list)  # NPU: run the LSTM on the padded batch, mask afterwards",
        "--lstm branch only; pack_padded_sequence is ✘ in Ascend's 2.7.1 API list although _pack_padded_sequence "
        "has an NPU kernel entry (conflicting, unconfirmed)"),
      C("embedded, _ = nn.utils.rnn.pad_packed_sequence(embedded, batch_first=True)", "unsupported_op_workaround",
        "replace", False, "embedded = embedded  # already padded when packing is skipped",
        "--lstm branch only; pad_packed_sequence ✘ in the 2.7.1 list (unconfirmed)"),
      C("output, _ = nn.utils.rnn.pad_packed_sequence(output, batch_first=True)", "unsupported_op_workaround",
        "replace", False,
        "output = output * (torch.arange(output.size(1), device=output.device)[None, :] < lengths.to(output.device)[:, None]).unsqueeze(-1)",
        "--lstm branch only; pad_packed_sequence ✘ in the 2.7.1 list (unconfirmed); also the final hidden state "
        "then has to be gathered at length-1"),
  ])
