"""Labels for probe209 (knowledge-distillation research frameworks, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
Target stack assumed by the notes: torch 2.1.0 + torch-npu 2.1.0.postN + CANN 8.x on Atlas A2
(the pairing most KD repos of this vintage would be moved to), native torch_npu APIs (no transfer_to_npu).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
NOTE_IMPORT = ("entry script: torch_npu must be imported before any 'npu' device/torch.npu use "
               "(autoloaded only from torch_npu 2.5.1; the 2.1 line needs the explicit import)")
NOTE_BENCHMARK = "cudnn.benchmark is a cuDNN autotuner flag; on NPU it is a silent no-op, so the line is just dropped"
NOTE_SEED_ALL = ("torch.manual_seed() already seeds every registered accelerator generator (privateuse1 included) in "
                 "torch>=2.1, so the cuda call is only a silent no-op on NPU; edited for clarity (unconfirmed in knowledge)")
NOTE_LOGONLY = ("only feeds a logged/printed number: on an NPU host torch.cuda memory queries return 0 without "
                "initialising CUDA, so nothing fails; porter switches it to torch.npu")

# ----------------------------------------------------------------------------------------------
# RepDistiller / CRD
# ----------------------------------------------------------------------------------------------
E("rd_train_student", "train_student.py", "explicit_replacement",
  "RepDistiller/CRD train_student.py (teacher snapshot load, criterion_list, module_list.cuda(), cudnn.benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C("model.load_state_dict(torch.load(model_path)['model'])", "tensor_to_device", "replace", True,
        "model.load_state_dict(torch.load(model_path, map_location='cpu')['model'])",
        "released teacher snapshots hold CUDA tensors; torch.load without map_location raises "
        "'Attempting to deserialize object on a CUDA device' when CUDA is unavailable"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: student, teacher and CRD memory would silently stay on the CPU"),
      C("module_list.cuda()", "tensor_to_device", "replace", True, "module_list.npu()",
        "moves student, teacher and connector modules to the accelerator"),
      C("criterion_list.cuda()", "tensor_to_device", "replace", True, "criterion_list.npu()",
        "criterion_list carries parameters/buffers (CRD embeddings + ContrastMemory, VID, connectors)"),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
  ])

E("rd_train_teacher", "train_teacher.py", "explicit_replacement",
  "RepDistiller train_teacher.py (fork with --gpu_id -> CUDA_VISIBLE_DEVICES and an nn.DataParallel branch)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu_id", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.gpu_id",
        "the NPU runtime ignores CUDA_VISIBLE_DEVICES; without the rename every job lands on NPU 0"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host: the teacher would silently train on the CPU"),
      C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
        "returns 0 on an NPU host so the DataParallel branch is dead; porter drops it together with the DP line"),
      C("model = nn.DataParallel(model)", "distributed_framework", "removal", False, None,
        "nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); unreachable unchanged, so removal is "
        "clean-up (use DDP for multi-NPU)"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() raises without CUDA"),
      C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
        "CrossEntropyLoss() has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; "
        "edited for consistency only"),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
  ])

E("rd_loops", "helper/loops.py", "explicit_replacement",
  "RepDistiller helper/loops.py (train_vanilla / train_distill / validate with per-batch .cuda())",
  [
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on NPU: batches stay on the CPU while the model is on the NPU -> device mismatch"),
      C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "batch to device"),
      C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "batch to device"),
      C("if torch.cuda.is_available():  # move the whole batch", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():  # move the whole batch, incl. sample indices", "same guard in train_distill"),
      C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "input = input.npu(non_blocking=True)", "batch to device"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "batch to device"),
      C("index = index.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "index = index.npu(non_blocking=True)", "CRD sample index must live with the memory bank"),
      C("contrast_idx = contrast_idx.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "contrast_idx = contrast_idx.npu(non_blocking=True)", "CRD negative indices"),
      C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_gpu = torch.npu.is_available()", "validation guard; False on NPU -> CPU batch vs NPU model"),
      C("input, target = input.cuda(), target.cuda()", "tensor_to_device", "replace", True,
        "input, target = input.npu(), target.npu()", "validation batch to device"),
  ])

E("rd_crd_memory", "crd/memory.py", "explicit_replacement",
  "CRD crd/memory.py (ContrastMemory + AliasMethod sampler with its own .cuda() method)",
  [
      C("self.prob = self.prob.cuda()", "tensor_to_device", "replace", True, "self.prob = self.prob.npu()",
        "AliasMethod.cuda() is called unconditionally from ContrastMemory.__init__; the tensor .cuda() raises on NPU"),
      C("self.alias = self.alias.cuda()", "tensor_to_device", "replace", True, "self.alias = self.alias.npu()",
        "same"),
  ])

E("rd_kdsvd", "distiller_zoo/KDSVD.py", "explicit_replacement",
  "RepDistiller distiller_zoo KDSVD/FSP losses (host-side SVD, factors moved back with .cuda())",
  [
      C("if x.is_cuda:", "device_type", "replace", False, "if x.device.type != 'cpu':",
        "is_cuda is False for NPU tensors, so the SVD factors and the whole KDSVD loss stay on the host; the 0-dim "
        "CPU loss still mixes with NPU losses, so it runs, just slowly (unconfirmed for torch_npu scalar mixing)"),
      C("u, s, v = u.cuda(), s.cuda(), v.cuda()", "tensor_to_device", "replace", False,
        "u, s, v = u.to(x.device), s.to(x.device), v.to(x.device)",
        "unreachable while the is_cuda guard is unchanged; must change together with it"),
  ])

E("rd_run_sh", "scripts/run_cifar_distill.sh", "explicit_replacement",
  "RepDistiller scripts/run_distill.sh (CUDA_VISIBLE_DEVICES + one train_student.py line per method)",
  [
      C("GPU=${GPU:-0}", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment (LD_LIBRARY_PATH, ASCEND_OPP_PATH ...) must be sourced or import torch_npu fails "
        "(libhccl.so / libascendcl.so not found)"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU}", "card selection is ignored by the NPU runtime otherwise"),
      C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
        "no nvidia-smi on an Ascend host; the script has no 'set -e', so it only prints an error and continues"),
  ])

E("rd_imagenet", "dataset/imagenet.py", "explicit_replacement",
  "RepDistiller dataset/imagenet.py (ImageFolderInstance/Sample, DataLoader(pin_memory=True))",
  [
      C("=pin_memory=True)", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu')",
        "torch 2.1's DataLoader pins only when torch.cuda.is_available(); on NPU pinning is silently skipped "
        "(performance only; newer torch picks the accelerator itself)"),
      C("num_workers=num_workers, pin_memory=True, sampler=train_sampler)", "pin_memory", "replace", False,
        "num_workers=num_workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler)", "same"),
      C("num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
        "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", "same"),
      C("pin_memory=True,  # GPU pinned staging", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu',  # pinned staging for H2D", "same"),
      C("pin_memory=True, sampler=test_sampler)", "pin_memory", "replace", False,
        "pin_memory=True, pin_memory_device='npu', sampler=test_sampler)", "same"),
  ])

# ----------------------------------------------------------------------------------------------
# mdistiller (DKD)
# ----------------------------------------------------------------------------------------------
E("md_train", "tools/train.py", "explicit_replacement",
  "mdistiller tools/train.py (module-level cudnn.benchmark, DataParallel(distiller.cuda()), DDP launcher variant)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
      C("distiller.cuda(),", "tensor_to_device", "replace", True, "distiller.npu(),", "DDP path: module to NPU"),
      C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
        "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() initialises CUDA and raises"),
      C("distiller = torch.nn.DataParallel(distiller.cuda())", "distributed_framework", "replace", True,
        "distiller = torch.nn.parallel.DistributedDataParallel(distiller.npu(), device_ids=[local_rank])",
        "nn.DataParallel is unsupported on Ascend and .cuda() raises; the trainer relies on .module, so a DDP "
        "wrapper (single-process group for one card) keeps that interface"),
  ])

E("md_trainer", "mdistiller/engine/trainer.py", "explicit_replacement",
  "mdistiller engine/trainer.py (BaseTrainer/CRDTrainer/AugTrainer, fork with torch.cuda.amp and memory logging)",
  [
      C("return [t.cuda(non_blocking=True) for t in tensors]", "tensor_to_device", "replace", True,
        "return [t.npu(non_blocking=True) for t in tensors]", "CRDTrainer batch transfer"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "with SOLVER.AMP on, torch.cuda.amp.GradScaler warns and disables itself on a host without CUDA: "
        "mixed precision silently off"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "with no device argument it resolves torch.cuda.current_device(), which initialises CUDA and raises"),
      C('"max_mem_gb": torch.cuda.max_memory_allocated() / 1024 ** 3,', "torch_cuda_api", "replace", False,
        '"max_mem_gb": torch.npu.max_memory_allocated() / 1024 ** 3,', NOTE_LOGONLY),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA when LOG.SYNC_TIME is on"),
      C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "image = image.npu(non_blocking=True)", "batch to device"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "batch to device"),
      C("index = index.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "index = index.npu(non_blocking=True)", "batch to device"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=self.use_amp):",
        "torch.cuda.amp.autocast disables itself (warning only) without CUDA: fp16 silently off"),
      C("with torch.cuda.amp.autocast(self.use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(self.use_amp):", "same, CRDTrainer"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):', "amp", "replace",
        True, 'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_amp):',
        "device_type='cuda' autocast is disabled on a host without CUDA; NPU ops run in fp32"),
  ])

E("md_cfg", "mdistiller/engine/cfg.py", "explicit_replacement",
  "mdistiller engine/cfg.py (yacs CfgNode defaults, fork adding CFG.DEVICE and CFG.DIST)",
  [
      C('CFG.DEVICE = "cuda"', "device_type", "replace", True, 'CFG.DEVICE = "npu"',
        "AugTrainer moves batches with .to(cfg.DEVICE); 'cuda' raises on an NPU host"),
      C('CFG.DIST.BACKEND = "nccl"', "dist_backend", "replace", True, 'CFG.DIST.BACKEND = "hccl"',
        "NCCL is not available with torch_npu; collectives on NPU go through HCCL"),
  ])

E("md_dkd", "mdistiller/distillers/DKD.py", "explicit_replacement",
  "mdistiller distillers/DKD.py (decoupled KD loss + logit standardization); device-agnostic, no change",
  [])

E("md_dist", "mdistiller/engine/dist_utils.py", "explicit_replacement",
  "mmcv-style dist_utils used by mdistiller forks (init_dist pytorch/slurm, reduce_mean, all_gather_object)",
  [
      C('def init_dist(launcher, backend="nccl", **kwargs):', "dist_backend", "replace", False,
        'def init_dist(launcher, backend="hccl", **kwargs):',
        "default only: the only caller (tools/train.py) passes cfg.DIST.BACKEND explicitly"),
      C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "0 on an NPU host -> ZeroDivisionError in local_rank % num_gpus"),
      C("torch.cuda.set_device(local_rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank % num_gpus)", "bind each rank to its NPU before init_process_group"),
      C("num_gpus = torch.cuda.device_count()  # GPUs per node", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()  # NPUs per node", "slurm path, same failure"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", "slurm path"),
      C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
        'if dist.get_backend() in ("nccl", "hccl"):',
        "backend-string comparisons are not rewritten by anything; with 'hccl' the helper would hand CPU "
        "tensors to an HCCL all_gather, which needs device tensors"),
      C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
        'return torch.device("npu", torch.npu.current_device())', "communication buffers on the current NPU"),
  ])

E("md_eval", "tools/eval.py", "explicit_replacement",
  "mdistiller tools/eval.py (Vanilla(model).cuda() wrapped in DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to device"),
      C("model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "removal", True,
        None, "nn.DataParallel is unsupported on Ascend (its scatter/gather use CUDA comm kernels); evaluate the "
        "Vanilla wrapper directly on one NPU"),
  ])

E("md_utils", "mdistiller/engine/utils.py", "explicit_replacement",
  "mdistiller engine/utils.py (validate, accuracy, checkpoint helpers)",
  [
      C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "image = image.npu(non_blocking=True)", "validation batch to device"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "validation batch to device"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if not torch.npu.is_available():",
        "progress-bar string only: shows 'n/a' on an NPU host instead of failing"),
      C('return "{:.1f}G".format(torch.cuda.memory_reserved() / 1024 ** 3)', "torch_cuda_api", "replace", False,
        'return "{:.1f}G".format(torch.npu.memory_reserved() / 1024 ** 3)',
        "unreachable until the guard above is ported; display only"),
  ])

E("md_requirements", "requirements.txt", "explicit_replacement",
  "mdistiller-style requirements.txt pinned to the cu113 wheel index",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend installs take the CPU torch wheel; the pins below carry the hard failure"),
      C("torch==1.11.0+cu113", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "+cu113 local versions do not exist for aarch64 and torch_npu needs the matching plain torch release"),
      C("torchvision==0.12.0+cu113", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "must match torch 2.1.0"),
      C("numpy<1.24", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "the torch_npu wheel (paired with torch 2.1.0) has to be installed"),
      C("pynvml>=11.0.0", "torch_cuda_api", "removal", False, None,
        "NVML binding; installs but has nothing to talk to on an Ascend host (use npu-smi / torch.npu APIs)"),
      C("=gpustat", "torch_cuda_api", "removal", False, None, "NVML-based monitor, same"),
  ])

# ----------------------------------------------------------------------------------------------
# torchdistill
# ----------------------------------------------------------------------------------------------
E("td_image_cls", "examples/torchvision/image_classification.py", "explicit_replacement",
  "torchdistill examples/torchvision/image_classification.py (--device default 'cuda', init_distributed_mode, "
  "evaluate() with DDP/DataParallel)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu', help='device (overridden by `device` in the yaml, if any)')",
        "default device string; torch.device('cuda') tensors fail on an NPU host"),
      C("cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
  ])

E("td_main_util", "torchdistill/common/main_util.py", "explicit_replacement",
  "torchdistill common/main_util.py (set_seed, init_distributed_mode with nccl, load/save ckpt)",
  [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "guards only the redundant cuda seeding below"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        NOTE_SEED_ALL),
      C("device_id = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "device_id = rank % torch.npu.device_count()", "SLURM path: 0 devices -> ZeroDivisionError"),
      C("torch.cuda.set_device(device_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device_id)",
        "bind the rank to its NPU"),
      C("dist_backend = 'nccl'", "dist_backend", "replace", True, "dist_backend = 'hccl'", "NCCL -> HCCL"),
      C("model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])", "torch_cuda_api",
        "replace", True, "model = DistributedDataParallel(model, device_ids=[torch.npu.current_device()])",
        "torch.cuda.current_device() raises without CUDA"),
      C("elif torch.cuda.device_count() > 1:", "torch_cuda_api", "removal", False, None,
        "0 on NPU, so the DataParallel branch is dead; dropped with it"),
      C("model = DataParallel(model)", "distributed_framework", "removal", False, None,
        "nn.DataParallel is unsupported on Ascend; unreachable unchanged"),
  ])

E("td_log", "torchdistill/misc/log.py", "explicit_replacement",
  "torchdistill misc/log.py (torchvision-reference SmoothedValue / MetricLogger with 'max mem')",
  [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        "hard-coded 'cuda' tensor for the metric all_reduce raises on NPU (note: NPU casts fp64 to fp32 for most "
        "ops; counts stay exact below 2**24)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "only decides whether a 'max mem' column is printed"),
      C("if torch.cuda.is_available():  # must match", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():  # must match the log_msg choice above", "same, log-only"),
      C("memory=torch.cuda.max_memory_allocated() / mega_bytes))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / mega_bytes))", NOTE_LOGONLY),
  ])

E("td_forward_hook", "torchdistill/core/forward_hook.py", "explicit_replacement",
  "torchdistill core/forward_hook.py (ForwardHookManager, io_dict keyed by device index, gather for DataParallel)",
  [])

E("td_yaml", "configs/sample/ilsvrc2012/kd/resnet18_from_resnet34.yaml", "explicit_replacement",
  "torchdistill sample yaml (ILSVRC2012 KD resnet34->resnet18) in a fork that adds top-level device and amp blocks",
  [
      C("device: 'cuda'", "device_type", "replace", True, "device: 'npu'",
        "read by image_classification.py as torch.device(config.get('device', ...)); overrides --device"),
      C("pin_memory: True", "pin_memory", "npu_only_addition", False, "    pin_memory_device: 'npu'",
        "performance only; pinning is skipped on NPU by torch 2.1's DataLoader unless the device is named "
        "(unconfirmed that the loader builder forwards the key)"),
      C("device_type: 'cuda'", "amp", "replace", True, "device_type: 'npu'",
        "autocast with device_type 'cuda' disables itself on an NPU host: AMP silently off"),
  ])

E("td_run_sh", "script/ilsvrc2012/run_kd_multi_node.sh", "explicit_replacement",
  "multi-node torchrun launcher for torchdistill (NCCL_* tuning, CUDA_VISIBLE_DEVICES, nvidia-smi under set -e)",
  [
      C("set -euo pipefail", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before torchrun starts the workers"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
        "log verbosity only; HCCL has no NCCL_DEBUG"),
      C("export NCCL_SOCKET_IFNAME=ens3f0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ens3f0",
        "multi-node: HCCL ignores NCCL_*; if it picks a NIC that cannot reach the root node, link setup fails"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "no HCCL meaning; RoCE is HCCL's default"),
      C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None, "CUDA-only knob, ignored on NPU"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
        "restricts the job to 4 cards; the NPU runtime ignores the CUDA name (8/16-card Atlas nodes)"),
      C("nvidia-smi -L", "torch_cuda_api", "replace", True, "npu-smi info -l",
        "command not found under 'set -e' aborts the launcher before torchrun"),
  ])

# ----------------------------------------------------------------------------------------------
# TinyBERT
# ----------------------------------------------------------------------------------------------
E("tb_general_distill", "general_distill.py", "explicit_replacement",
  "TinyBERT general_distill.py (n_gpu = torch.cuda.device_count(), nccl, apex FusedAdam/FP16_Optimizer for --fp16)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
        "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
        "otherwise the whole distillation silently runs on the CPU"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "n_gpu would be 0 on NPU and every n_gpu-guarded path takes the CPU branch"),
      C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.local_rank)", "distributed path"),
      C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", args.local_rank)', "distributed path"),
      C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
        "torch.distributed.init_process_group(backend='hccl')", "NCCL -> HCCL"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", NOTE_SEED_ALL),
      C("student_model.half()", "amp", "removal", True, None,
        "with FP16_Optimizer gone (see below) the port uses torch.npu.amp; GradScaler refuses to unscale fp16 "
        "gradients, so the student must stay fp32 (the frozen teacher may stay half)"),
      C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "replace", False,
        "from torch.nn.parallel import DistributedDataParallel as DDP",
        "NVIDIA apex DDP is built around CUDA streams; whether Ascend's apex patch covers apex.parallel is "
        "unconfirmed, torch DDP (hccl) is the safe replacement"),
      C("student_model = torch.nn.DataParallel(student_model)", "distributed_framework", "removal", True, None,
        "once n_gpu counts NPUs this branch runs and nn.DataParallel is unsupported on Ascend"),
      C("teacher_model = torch.nn.DataParallel(teacher_model)", "distributed_framework", "removal", True, None,
        "same"),
      C("from apex.optimizers import FP16_Optimizer", "amp", "removal", True, None,
        "apex FP16_Optimizer needs the amp_C CUDA extension, which does not exist for NPU"),
      C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
        "from torch_npu.optim import NpuFusedAdam", "apex FusedAdam is a CUDA kernel (fused_adam_cuda)"),
      C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=args.learning_rate", "fused_optimizer", "replace",
        True, "optimizer = NpuFusedAdam(optimizer_grouped_parameters, lr=args.learning_rate)",
        "NpuFusedAdam has no bias_correction/max_grad_norm arguments; clip gradients explicitly if needed"),
      C("optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler()", "dynamic loss scaling through the native NPU GradScaler"),
      C("optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.loss_scale)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(init_scale=args.loss_scale, growth_interval=2 ** 31 - 1)",
        "static loss scale emulated by a scaler that never grows"),
      C("=rep_loss = 0.", "amp", "npu_only_addition", True,
        "with torch.npu.amp.autocast(enabled=args.fp16):",
        "forward + MSE under autocast (body re-indented): fp32 student vs half teacher outputs only mix inside "
        "autocast, where mse_loss runs in fp32"),
      C("optimizer.backward(loss)", "amp", "replace", True, "scaler.scale(loss).backward()",
        "FP16_Optimizer.backward no longer exists"),
      C("=optimizer.step()", "amp", "replace", True,
        "(scaler.step(optimizer), scaler.update()) if args.fp16 else optimizer.step()",
        "step/update through the scaler on the fp16 path"),
  ])

E("tb_task_distill", "task_distill.py", "explicit_replacement",
  "TinyBERT task_distill.py (GLUE intermediate/prediction-layer distillation; fork with apex.amp --fp16)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
        "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
        "otherwise the run silently stays on the CPU"),
      C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
        "0 on NPU: logged wrong and n_gpu-guarded paths take the CPU branch"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", NOTE_SEED_ALL),
      C("student_model, optimizer = amp.initialize(student_model, optimizer, opt_level=args.fp16_opt_level)", "amp",
        "replace", False,
        "student_model, optimizer = amp.initialize(student_model, optimizer, opt_level=args.fp16_opt_level, "
        "combine_grad=True)",
        "Ascend's apex patch keeps the apex.amp API (O1/O2); combine_grad is its optional fused-unscale speed-up"),
      C("student_model = torch.nn.DataParallel(student_model)", "distributed_framework", "removal", True, None,
        "reachable once n_gpu counts NPUs; nn.DataParallel is unsupported on Ascend"),
      C("teacher_model = torch.nn.DataParallel(teacher_model)", "distributed_framework", "removal", True, None,
        "same"),
  ])

# ----------------------------------------------------------------------------------------------
# DistilBERT (transformers research_projects/distillation)
# ----------------------------------------------------------------------------------------------
E("db_distiller", "distillation/distiller.py", "explicit_replacement",
  "transformers research_projects/distillation/distiller.py (DistilBERT Distiller: f'cuda:{local_rank}', apex amp)",
  [
      C('self.pred_probs = self.pred_probs.to(f"cuda:{params.local_rank}")', "tensor_to_device", "replace", True,
        'self.pred_probs = self.pred_probs.to(f"npu:{params.local_rank}") if params.n_gpu > 0 else self.pred_probs',
        "hard-coded cuda device string"),
      C('self.token_probs = token_probs.to(f"cuda:{params.local_rank}")', "tensor_to_device", "replace", True,
        'self.token_probs = token_probs.to(f"npu:{params.local_rank}") if params.n_gpu > 0 else token_probs',
        "hard-coded cuda device string"),
      C("self.student, self.optimizer, opt_level=self.params.fp16_opt_level", "amp", "replace", False,
        "self.student, self.optimizer, opt_level=self.params.fp16_opt_level, combine_grad=True",
        "Ascend apex keeps amp.initialize/scale_loss; combine_grad is an optional speed-up"),
      C("from apex.parallel import DistributedDataParallel", "distributed_framework", "replace", False,
        "from torch.nn.parallel import DistributedDataParallel",
        "fp16 + multi-GPU path; apex.parallel DDP relies on CUDA streams, Ascend apex coverage unconfirmed"),
      C('batch = tuple(t.to(f"cuda:{self.params.local_rank}") for t in batch)', "tensor_to_device", "replace", True,
        'batch = tuple(t.to(f"npu:{self.params.local_rank}") for t in batch)', "batch to device"),
      C("scalar_value=torch.cuda.memory_allocated() / 1_000_000,", "torch_cuda_api", "replace", False,
        "scalar_value=torch.npu.memory_allocated() / 1_000_000,", NOTE_LOGONLY),
  ])

E("db_utils", "distillation/utils.py", "explicit_replacement",
  "transformers research_projects/distillation/utils.py (init_gpu_params with N_GPU_NODE env, set_seed)",
  [
      C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
        "AssertionError on every NPU run with n_gpu > 0"),
      C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(params.local_rank)", "bind the rank to its NPU"),
      C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL -> HCCL"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", NOTE_SEED_ALL),
      C("props = torch.cuda.get_device_properties(params.local_rank)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(params.local_rank)", "raises without CUDA"),
      C('return f"{props.name} ({props.total_memory / 1024 ** 3:.0f} GiB, sm_{props.major}{props.minor})"',
        "device_capability_check", "replace", True,
        'return f"{props.name} ({props.total_memory / 1024 ** 3:.0f} GiB)"',
        "NPU device properties have name/total_memory but no major/minor (AttributeError)"),
  ])

E("db_train", "distillation/train.py", "explicit_replacement",
  "transformers research_projects/distillation/train.py (student/teacher .to(f'cuda:{local_rank}'))",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C('student.to(f"cuda:{args.local_rank}")', "tensor_to_device", "replace", True,
        'student.to(f"npu:{args.local_rank}")', "hard-coded cuda device string"),
      C('teacher.to(f"cuda:{args.local_rank}")', "tensor_to_device", "replace", True,
        'teacher.to(f"npu:{args.local_rank}")', "hard-coded cuda device string"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op on a host where CUDA was never initialised; NPU cache simply not released"),
  ])

E("db_launch", "distillation/scripts/distill_distilbert.sh", "explicit_replacement",
  "DistilBERT README launch recipe as a script (N_GPU_NODE/WORLD_SIZE exports, torch.distributed.launch)",
  [
      C("export MASTER_ADDR=127.0.0.1", "env_var", "npu_only_addition", True, SET_ENV,
        "CANN environment must be sourced before the launcher"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
        "lists every card of an 8-card node, which is what the NPU runtime exposes anyway; renamed for clarity"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING, whose default is already 1"),
  ])

# ----------------------------------------------------------------------------------------------
# shared infrastructure of a KD benchmark repo
# ----------------------------------------------------------------------------------------------
E("kd_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "KD-benchmark Dockerfile on nvidia/cuda with cu117 torch wheels, NVIDIA apex --cuda_ext and DALI",
  [
      C("FROM nvidia/cuda:11.7.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.9",
        "base image must carry CANN (and the set_env exports) instead of the CUDA toolkit"),
      C("ENV CUDA_HOME=/usr/local/cuda", "env_var", "removal", False, None, "unused without a CUDA toolkit"),
      C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", "removal", False, None,
        "only read by nvcc extension builds"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "device mounting on Ascend is done by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) or --device flags at "
        "docker run; an image default is optional"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "nvidia-container-runtime knob"),
      C("RUN pip install --no-cache-dir torch==1.13.1+cu117 torchvision==0.14.1+cu117", "torch_cuda_api",
        "replace", True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10 \\",
        "CUDA wheels; torch_npu has no 1.13 release and needs the plain torch build it pairs with"),
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; CPU index on x86 hosts"),
      C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "amp", "replace", True,
        "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && bash scripts/build.sh --python=3.9 && \\",
        "apex.amp on NPU comes from Ascend's apex patch build, not NVIDIA apex"),
      C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension", "replace", True,
        "/opt/apex/apex/dist/apex-*.whl", "--cuda_ext builds amp_C/fused kernels with nvcc: fails without CUDA"),
      C("nvidia-dali-cuda110", "torch_cuda_api", "removal", False, None,
        "GPU JPEG decoding package, optional per the comment; no Ascend build (unconfirmed whether the install "
        "itself fails on the aarch64 hosts)"),
  ])

E("kd_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a KD repo (pytorch + cudatoolkit from the pytorch/nvidia channels)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA package channel, not needed"),
      C("- pytorch=1.12.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "torch_npu has no 1.12 release (1.11 / 2.0.1 / 2.1 lines); torch must match the torch-npu wheel"),
      C("- torchvision=0.13.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0", "must match torch 2.1.0"),
      C("- cudatoolkit=11.3", "torch_cuda_api", "removal", True, None,
        "makes conda resolve the CUDA variant of pytorch; Ascend pairs torch_npu with the CPU torch build"),
      C("- tensorboard_logger", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
        "torch_npu wheel in the pip section"),
      C("=- pynvml", "torch_cuda_api", "removal", False, None, "NVML binding, nothing to talk to on Ascend"),
  ])

E("kd_prefetcher", "utils/prefetcher.py", "explicit_replacement",
  "apex-ImageNet-style CUDA-stream data_prefetcher used by ImageNet KD repos",
  [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "side stream for the H2D copy; torch.cuda.Stream raises without CUDA"),
      C("self.mean = torch.tensor(IMAGENET_MEAN).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.mean = torch.tensor(IMAGENET_MEAN).npu().view(1, 3, 1, 1)", "normalisation constants on device"),
      C("self.std = torch.tensor(IMAGENET_STD).cuda().view(1, 3, 1, 1)", "tensor_to_device", "replace", True,
        "self.std = torch.tensor(IMAGENET_STD).npu().view(1, 3, 1, 1)", "same"),
      C("self.memory_format = torch.channels_last if channels_last else torch.contiguous_format",
        "unsupported_op_workaround", "replace", False, "self.memory_format = torch.contiguous_format",
        "channels_last is listed as unsupported by the Ascend migration notes; only used with --channels-last"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "stream context"),
      C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True)", "async H2D copy"),
      C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True)", "async H2D copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "input.record_stream(torch.npu.current_stream())", "caching-allocator bookkeeping for the side stream"),
      C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target.record_stream(torch.npu.current_stream())", "same"),
  ])

E("kd_benchmark", "tools/benchmark_students.py", "explicit_replacement",
  "latency/throughput/memory benchmark for teacher and student nets (cuda Events, autocast, capability query)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NOTE_IMPORT),
      C('"cuda": torch.version.cuda,', "torch_cuda_api", "replace", False,
        '"torch_npu": torch_npu.__version__,', "None on an NPU build; report the torch_npu version instead"),
      C('"cudnn": torch.backends.cudnn.version(),', "torch_cuda_api", "removal", False, None,
        "returns None without cuDNN, harmless"),
      C('"device": torch.cuda.get_device_name(gpu),', "torch_cuda_api", "replace", True,
        '"device": torch.npu.get_device_name(gpu),', "raises without CUDA"),
      C("major, minor = torch.cuda.get_device_capability(gpu)", "device_capability_check", "replace", True,
        "major, minor = 0, 0  # no CUDA compute capability on NPU",
        "raises without CUDA; the NPU equivalent returns None, so the tuple unpack fails either way"),
      C('info["bf16_ok"] = major >= 8', "device_capability_check", "replace", False,
        'info["bf16_ok"] = torch.npu.is_bf16_supported()', "metadata field only; would read False on NPU"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=use_amp):", "--amp would silently benchmark fp32"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "device-side timing events"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "same"),
      C('with torch.autocast("cuda", enabled=use_amp):', "amp", "replace", True,
        'with torch.autocast("npu", enabled=use_amp):', "timed loop autocast, silently fp32 otherwise"),
      C("torch.cuda.synchronize()  # wait for the GPU", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the NPU to finish before reading the timer", "raises"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "the benchmark exits immediately on an NPU host"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises"),
      C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, NOTE_BENCHMARK),
      C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.matmul.allow_hf32 = True",
        "TF32 flag is a no-op on NPU; the nearest knob is HF32 (unconfirmed in knowledge)"),
      C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
        "torch.npu.conv.allow_hf32 = True", "same for convolutions (unconfirmed)"),
      C('device = torch.device("cuda:{}".format(args.gpu))', "device_type", "replace", True,
        'device = torch.device("npu:{}".format(args.gpu))', "device string"),
      C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
        "channels_last listed as unsupported on Ascend; --channels-last only"),
      C("x = x.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None, "same"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        'model = torch.compile(model, backend="npugraphs")',
        "max-autotune relies on Triton autotuning + CUDA graphs; only with --compile (behaviour on torch 2.1 + "
        "torch_npu unconfirmed)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "raises (CUDA device index required)"),
      C("peak_mb = torch.cuda.max_memory_allocated(device) / 1024 ** 2", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated(device) / 1024 ** 2",
        "peak memory is one of the columns this tool exists to report; on NPU it would silently be 0"),
  ])

E("kd_feat_hooks", "utils/feature_hooks.py", "explicit_replacement",
  "feature-map hook utilities (FeatureExtractor, AT loss, CKA analysis) with NVTX ranges",
  [
      C('DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'DEFAULT_DEVICE = "npu" if torch.npu.is_available() else "cpu"',
        "module-level default for to_device/cka_matrix: silently CPU on an NPU host"),
      C('torch.cuda.nvtx.range_push("forward:{}".format(type(self.model).__name__))', "torch_cuda_api", "replace",
        True, 'self._mstx_id = torch.npu.mstx.range_start("forward:{}".format(type(self.model).__name__))',
        "torch.cuda.nvtx is not redirected to NPU and raises 'NVTX functions not installed' on non-CUDA builds; "
        "mstx is the Ascend equivalent"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch.npu.mstx.range_end(self._mstx_id)", "same"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; memory is just not returned before the CKA pass"),
      C('"is_cuda": bool(f.is_cuda),', "device_type", "replace", False, '"device": str(f.device),',
        "statistics field only; reads False for NPU tensors"),
  ])
