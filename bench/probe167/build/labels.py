# Labels for probe167 (self-supervised visual representation learning code, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
NPU_IMPORT_NOTE = ("entry script: torch_npu must be imported (mandatory before 2.5.1, still recommended after) "
                   "so that torch.npu and the NPU device exist")

# ---------------------------------------------------------------- MoCo v1/v2
E("moco-main-moco", "moco/main_moco.py", "explicit_replacement",
  "facebookresearch/moco main_moco.py (MoCo v1/v2 pre-training, mp.spawn + DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,",
      "default backend is used by init_process_group; NCCL does not exist on an NPU host"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 without CUDA: world_size becomes 0 and mp.spawn starts no workers"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "raises 'Torch not compiled with CUDA enabled' on an NPU host"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)",
      "model must live on the NPU of this rank"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "DDP branch without --gpu; .cuda() fails without CUDA"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU debugging only", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(args.gpu)  # single-device debugging only",
      "branch raises NotImplementedError right after; only matters when someone comments the raise out to debug"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", False, "model = model.npu(args.gpu)",
      "same debug-only branch as the line above"),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu(args.gpu)", ".cuda() on the loss module fails on an NPU host"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='npu')",
      "only the --gpu-less DDP path; fails only for checkpoints written on CUDA (NPU-written ones reload onto npu:0)"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location string names a CUDA device"),
    C("images[0] = images[0].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[0] = images[0].npu(args.gpu, non_blocking=True)", "query crop must be moved to the NPU"),
    C("images[1] = images[1].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[1] = images[1].npu(args.gpu, non_blocking=True)", "key crop must be moved to the NPU"),
])

E("moco-builder", "moco/moco/builder.py", "explicit_replacement",
  "facebookresearch/moco moco/builder.py (queue, DDP batch shuffle, concat_all_gather)", [
    C("idx_shuffle = torch.randperm(batch_size_all).cuda()", "tensor_to_device", "replace", True,
      "idx_shuffle = torch.randperm(batch_size_all).npu()",
      "shuffle index must be on the NPU before torch.distributed.broadcast over HCCL"),
    C("labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
      "labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)",
      "InfoNCE targets created with .cuda()"),
])

E("moco-main-lincls", "moco/main_lincls.py", "explicit_replacement",
  "facebookresearch/moco main_lincls.py (linear classification on frozen MoCo features)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default=\"nccl\"", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default=\"hccl\", type=str,", "NCCL is not available on Ascend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 without CUDA: no worker is spawned"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "move model to this rank's NPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP branch without --gpu"),
    C("torch.cuda.set_device(args.gpu)  # single process, single device", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single process, single device",
      "legitimate single-device path in lincls (no raise after it)"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
      "single-device path"),
    C("model.features = torch.nn.DataParallel(model.features)", "unsupported_op_workaround", "removal", True, None,
      "torch.nn.DataParallel is not supported on Ascend (✘ in the 2.7.1 API list); keep the trunk unwrapped or use DDP"),
    C("model.cuda()  # alexnet/vgg: only the conv trunk is replicated", "tensor_to_device", "replace", True,
      "model.npu()  # alexnet/vgg: single NPU, DataParallel is unsupported", ".cuda() fails on an NPU host"),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()  # nn.DataParallel is unsupported on NPU; use DDP for multi-device",
      "DataParallel unsupported on Ascend and .cuda() fails"),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu(args.gpu)", "loss module moved with .cuda()"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='npu')",
      "only without --gpu; fails only when resuming a checkpoint written on CUDA (NPU-written ones reload to their npu index)"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location names a CUDA device"),
    C("best_acc1 = best_acc1.to(args.gpu)", "tensor_to_device", "replace", True,
      "best_acc1 = best_acc1.to('npu:{}'.format(args.gpu))",
      "Tensor.to(<int>) means cuda:<int>; fails without CUDA"),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(args.gpu, non_blocking=True)", "train batch to NPU"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "train labels to NPU"),
    C("input = input.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(args.gpu, non_blocking=True)", "val batch to NPU"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "val labels to NPU"),
])

# ---------------------------------------------------------------- MoCo v3
E("mocov3-main-moco", "moco-v3/main_moco.py", "explicit_replacement",
  "facebookresearch/moco-v3 main_moco.py (ViT/ResNet, LARS, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,", "NCCL is not available on Ascend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "0 without CUDA: nothing is spawned"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "False on an NPU host: SyncBN conversion and device placement are skipped and training silently falls to the CPU path"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "model to this rank's NPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP branch without --gpu"),
    C("torch.cuda.set_device(args.gpu)  # debugging path", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(args.gpu)  # debugging path", "branch raises NotImplementedError right after"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", False, "model = model.npu(args.gpu)",
      "debug-only branch"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: fp16 gradients are then never scaled"),
    C("checkpoint = torch.load(args.resume)", "device_type", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='npu')",
      "only without --gpu; fails only when resuming a checkpoint written on CUDA"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location names a CUDA device"),
    C("images[0] = images[0].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[0] = images[0].npu(args.gpu, non_blocking=True)", "view 1 to NPU"),
    C("images[1] = images[1].cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images[1] = images[1].npu(args.gpu, non_blocking=True)", "view 2 to NPU"),
    C("with torch.cuda.amp.autocast(True):", "amp", "replace", True, "with torch.npu.amp.autocast(True):",
      "CUDA autocast does not cover NPU ops (warns and disables itself): the fp16 recipe silently runs in fp32"),
])

E("mocov3-builder", "moco-v3/moco/builder.py", "explicit_replacement",
  "facebookresearch/moco-v3 moco/builder.py (symmetric contrastive loss)", [
    C("labels = (torch.arange(N, dtype=torch.long) + N * torch.distributed.get_rank()).cuda()", "tensor_to_device",
      "replace", True,
      "labels = (torch.arange(N, dtype=torch.long, device=logits.device) + N * torch.distributed.get_rank())",
      "targets created on CUDA"),
])

# ---------------------------------------------------------------- SimCLR
E("simclr-run", "SimCLR/run.py", "device_branch_or_abstraction",
  "sthalles/SimCLR run.py (args.device chosen from --disable-cuda / is_available)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("if not args.disable_cuda and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "elif not args.disable_cuda and torch.npu.is_available():",
      "is_available() is False on an NPU host: training silently runs on the CPU"),
    C("args.device = torch.device('cuda')", "device_type", "add_branch", True, "args.device = torch.device('npu')",
      "the device every .to(self.args.device) in simclr.py follows"),
    C("with torch.cuda.device(args.gpu_index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(args.gpu_index):",
      "entering torch.cuda.device(0) initialises CUDA and fails on an NPU host"),
])

E("simclr-trainer", "SimCLR/simclr.py", "device_branch_or_abstraction",
  "sthalles/SimCLR simclr.py (info_nce_loss, GradScaler/autocast imported from torch.cuda.amp)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA scaler/autocast disable themselves without CUDA: --fp16-precision is silently ignored; call sites need no change"),
])

# ---------------------------------------------------------------- BYOL
E("byol-train", "byol/train.py", "explicit_replacement",
  "BYOL re-implementation training script (torchrun, YAML config, LARS/LAMB, native amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL knob is a no-op under HCCL; HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog equivalent"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds the NPU generator"),
    C("local_rank = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "local_rank = rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError under srun"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "fails without CUDA"),
    C("from apex.optimizers import FusedLAMB", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedLamb",
      "apex FusedLAMB needs apex's CUDA kernels; only reached when the config selects 'lamb' (default is lars)"),
    C("optimizer = FusedLAMB(params, lr=base_lr, weight_decay=opt_cfg[\"weight_decay\"])", "fused_optimizer",
      "replace", False, "optimizer = NpuFusedLamb(params, lr=base_lr, weight_decay=opt_cfg[\"weight_decay\"])",
      "same non-default 'lamb' branch"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "model, resume map_location all follow this device"),
    C('if cfg["amp"].get("dtype", "fp16") == "bf16" and torch.cuda.is_bf16_supported():', "device_capability_check",
      "replace", False, 'if cfg["amp"].get("dtype", "fp16") == "bf16" and torch.npu.is_bf16_supported():',
      "only evaluated when the config asks for bf16 (default fp16); then it raises (torch 2.1) or returns False and silently falls back to fp16 (newer torch) - unconfirmed which"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)",
      "CUDA scaler disables itself without CUDA: fp16 run without loss scaling"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on an NPU host"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=use_amp):',
      "autocast for 'cuda' does not touch NPU ops: mixed precision silently off"),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3", "logging only; silently reports 0 without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "initialises CUDA and raises on an NPU host"),
])

E("byol-prefetcher", "byol/byol/utils/prefetcher.py", "explicit_replacement",
  "apex-ImageNet-style data_prefetcher (side CUDA stream, record_stream) used by BYOL re-implementations", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "CUDA stream creation fails on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "stream context"),
    C("self.next_view1 = self.next_view1.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_view1 = self.next_view1.npu(non_blocking=True)", "H2D copy"),
    C("self.next_view2 = self.next_view2.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_view2 = self.next_view2.npu(non_blocking=True)", "H2D copy"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_target = self.next_target.npu(non_blocking=True)", "H2D copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
    C("view1.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "view1.record_stream(torch.npu.current_stream())", "record_stream needs an NPU stream for an NPU tensor"),
    C("view2.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "view2.record_stream(torch.npu.current_stream())", "as above"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "target.record_stream(torch.npu.current_stream())", "as above"),
])

E("byol-config", "byol/config/byol_r50_imagenet.yaml", "explicit_replacement",
  "YAML experiment config of a BYOL re-implementation (distributed/amp blocks)", [
    C("backend: nccl", "dist_backend", "replace", True, "backend: hccl",
      "read by train.py and passed to init_process_group"),
])

E("byol-pytorch-lib", "byol-pytorch/byol_pytorch/byol_pytorch.py", "device_branch_or_abstraction",
  "lucidrains/byol-pytorch byol_pytorch.py (device-agnostic library code; no change needed)", [])

# ---------------------------------------------------------------- SwAV
E("swav-main", "swav/main_swav.py", "explicit_replacement",
  "facebookresearch/swav main_swav.py (apex amp O1, LARC, apex/pytorch SyncBN, queue on GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("model = apex.parallel.convert_syncbn_model(model, process_group=process_group)", "distributed_framework",
      "replace", False, "model = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=process_group)",
      "only with --sync_bn apex (default is pytorch); unconfirmed whether Ascend's apex patch keeps apex.parallel SyncBatchNorm working"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to NPU"),
    C('model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")', "amp", "replace", False,
      'model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0, combine_grad=True)',
      "works once Ascend's apex build is installed (O1 supported); combine_grad is the NPU performance option - exact kwargs unconfirmed"),
    C('queue = torch.load(queue_path)["queue"]', "device_type", "replace", False,
      'queue = torch.load(queue_path, map_location="npu")["queue"]',
      "fails only when resuming queue files written by a CUDA run; NPU-written queues reload onto the same npu index"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "the feature queue is allocated on the device"),
])

E("swav-utils", "swav/src/utils.py", "explicit_replacement",
  "facebookresearch/swav src/utils.py (init_distributed_mode for SLURM/launch, restart_from_checkpoint)", [
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "hard-coded NCCL backend"),
    C("args.gpu_to_work_on = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu_to_work_on = args.rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu_to_work_on)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu_to_work_on)", "fails without CUDA"),
    C('ckp_path, map_location="cuda:" + str(torch.distributed.get_rank() % torch.cuda.device_count())',
      "device_type", "replace", True,
      'ckp_path, map_location="npu:" + str(torch.distributed.get_rank() % torch.npu.device_count())',
      "CUDA map_location and CUDA device_count in the same expression"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed on the previous line already seeds the NPU"),
])

E("swav-resnet", "swav/src/resnet50.py", "explicit_replacement",
  "facebookresearch/swav src/resnet50.py (multi-resolution forward moves crops to GPU inside the model)", [
    C("_out = self.forward_backbone(torch.cat(inputs[start_idx: end_idx]).cuda(non_blocking=True))",
      "tensor_to_device", "replace", True,
      "_out = self.forward_backbone(torch.cat(inputs[start_idx: end_idx]).npu(non_blocking=True))",
      "the CPU crops from the loader are moved to the device inside forward()"),
])

E("swav-eval-linear", "swav/eval_linear.py", "explicit_replacement",
  "facebookresearch/swav eval_linear.py (RegLog on frozen ResNet-50)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "frozen trunk to NPU"),
    C("linear_classifier = linear_classifier.cuda()", "tensor_to_device", "replace", True,
      "linear_classifier = linear_classifier.npu()", "classifier to NPU"),
    C('state_dict = torch.load(args.pretrained, map_location="cuda:" + str(args.gpu_to_work_on))', "device_type",
      "replace", True, 'state_dict = torch.load(args.pretrained, map_location="npu:" + str(args.gpu_to_work_on))',
      "map_location names a CUDA device"),
    C("=criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu()", "train criterion"),
    C("inp = inp.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "inp = inp.npu(non_blocking=True)",
      "train batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "train labels"),
    C("criterion = nn.CrossEntropyLoss().cuda()  # val criterion", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu()  # val criterion", "val criterion"),
    C("inp, target = inp.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace",
      True, "inp, target = inp.npu(non_blocking=True), target.npu(non_blocking=True)", "val batch and labels"),
])

E("swav-slurm-script", "swav/scripts/main_swav/swav_800ep_pretrain.sh", "explicit_replacement",
  "facebookresearch/swav scripts/main_swav/*.sh (sbatch + srun launcher)", [
    C("#SBATCH --gres=gpu:8", "distributed_framework", "replace", False, "#SBATCH --gres=npu:8",
      "generic resource name is site configuration; unconfirmed (no Ascend Slurm integration found in the knowledge base)"),
    C("module load cuda/10.1 cudnn/v7.6.5.32-cuda.10.1 NCCL/2.5.6-1-cuda.10.1", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA/cuDNN/NCCL modules are meaningless on the NPU nodes; the CANN environment must be sourced instead"),
    C("export NCCL_SOCKET_IFNAME=^docker0,lo", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=^docker0,lo",
      "ignored by HCCL; HCCL_SOCKET_IFNAME accepts the same ^exclude form. Multi-node NIC choice, not confirmed to break"),
])

E("swav-env", "swav/environment.yml", "explicit_replacement",
  "conda environment for SwAV (PyTorch 1.4 + cudatoolkit 10.1 + NVIDIA apex)", [
    C("- cudatoolkit=10.1", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime is dead weight on an NPU host; unconfirmed whether it also breaks the solve on aarch64"),
    C("- pytorch=1.4.0", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
      "no torch_npu exists for torch 1.4; torch_npu needs the matching CPU torch (2.1.0 here)"),
    C("- torchvision=0.5.0", "torch_cuda_api", "replace", True, "- torchvision=0.16.0=*cpu*",
      "must match the bumped torch (0.16 <-> 2.1)"),
    C("- submitit", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu wheel pinned to the torch version (x.y.z[.postN] == torch x.y.z)"),
    C("- git+https://github.com/NVIDIA/apex.git@4a1aa97e31ca87514e17c3cd3bbc03f4204579d0#egg=apex",
      "custom_cuda_extension", "replace", True,
      "- ./third_party/ascend-apex/dist/apex-0.1+ascend-cp38-cp38-linux_aarch64.whl  # built from Ascend/apex",
      "NVIDIA apex.amp checks for torch.cuda tensors and its --cuda_ext build needs nvcc; SwAV needs Ascend's patched apex"),
])

# ---------------------------------------------------------------- DINO
E("dino-main", "dino/main_dino.py", "explicit_replacement",
  "facebookresearch/dino main_dino.py (student/teacher, DINOLoss, fp16_scaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", "replace", True,
      "student, teacher = student.npu(), teacher.npu()", "networks to NPU"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "DINOLoss (center buffer) to NPU"),
    C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "fp16_scaler = torch.npu.amp.GradScaler()",
      "CUDA scaler disables itself without CUDA: --use_fp16 runs unscaled"),
    C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", "replace", True,
      "images = [im.npu(non_blocking=True) for im in images]", "multi-crop batch to NPU"),
    C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(fp16_scaler is not None):", "CUDA autocast is a no-op for NPU ops"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

E("dino-utils", "dino/utils.py", "explicit_replacement",
  "facebookresearch/dino utils.py (init_distributed_mode, MetricLogger, SmoothedValue, PCA, LARS)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "lazy no-op without CUDA; torch.manual_seed already seeds the NPU"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "CUDA device string, and all_reduce over HCCL does not list fp64 (bf16/fp16/fp32/int32/int64/bool only)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only decides whether 'max mem' is logged; silently omitted on NPU"),
    C("log_msg has a 'max mem' field only in that case", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # log_msg has a 'max mem' field only in that case", "same logging-only guard"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only (would report 0)"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "submitit/SLURM path: ZeroDivisionError without CUDA"),
    C("=elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "single-device launch otherwise hits 'Does not support training without GPU.' and exits"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "hard-coded NCCL"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C("if x.is_cuda:", "device_type", "replace", True, "if x.is_npu:",
      "NPU tensors report is_cuda False and fall into the CPU branch, which multiplies a CPU matrix with an NPU tensor"),
    C("x -= torch.cuda.FloatTensor(self.mean)", "tensor_to_device", "replace", True,
      "x -= torch.tensor(self.mean, dtype=torch.float32, device=x.device)", "legacy CUDA tensor type"),
    C("return torch.mm(torch.cuda.FloatTensor(self.dvt), x.transpose(0, 1)).transpose(0, 1)", "tensor_to_device",
      "replace", True,
      "return torch.mm(torch.tensor(self.dvt, dtype=torch.float32, device=x.device), x.transpose(0, 1)).transpose(0, 1)",
      "legacy CUDA tensor type"),
])

E("dino-eval-knn", "dino/eval_knn.py", "explicit_replacement",
  "facebookresearch/dino eval_knn.py (distributed feature extraction + weighted k-NN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "backbone to NPU"),
    C("samples = samples.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "samples = samples.npu(non_blocking=True)", "batch to NPU"),
    C("index = index.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "index = index.npu(non_blocking=True)", "sample indices must be on the device for all_gather"),
    C("features = features.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "features = features.npu(non_blocking=True)", "--use_cuda (default True) keeps the feature bank on the device"),
    C("y_all = torch.empty(dist.get_world_size(), index.size(0), dtype=index.dtype, device=index.device)",
      "unsupported_op_workaround", "replace", False,
      "y_all = torch.empty(dist.get_world_size(), index.size(0), dtype=torch.int32, device=index.device)",
      "Ascend's 2.7.1 list gives all_gather dtypes without int64; unconfirmed whether HCCL rejects int64 at runtime"),
    C("y_all_reduce = torch.distributed.all_gather(y_l, index, async_op=True)", "unsupported_op_workaround",
      "replace", False, "y_all_reduce = torch.distributed.all_gather(y_l, index.int(), async_op=True)",
      "same int64 all_gather caveat (unconfirmed)"),
    C("index_all = torch.cat(y_l)", "unsupported_op_workaround", "replace", False, "index_all = torch.cat(y_l).long()",
      "index_copy_ needs int64 indices again after the int32 gather (only if the two lines above are changed)"),
    C("train_features = train_features.cuda()", "tensor_to_device", "replace", True,
      "train_features = train_features.npu()", "k-NN runs on the device"),
    C("test_features = test_features.cuda()", "tensor_to_device", "replace", True,
      "test_features = test_features.npu()", "k-NN runs on the device"),
    C("train_labels = train_labels.cuda()", "tensor_to_device", "replace", True, "train_labels = train_labels.npu()",
      "k-NN runs on the device"),
    C("test_labels = test_labels.cuda()", "tensor_to_device", "replace", True, "test_labels = test_labels.npu()",
      "k-NN runs on the device"),
])

E("dino-eval-linear", "dino/eval_linear.py", "explicit_replacement",
  "facebookresearch/dino eval_linear.py (linear probe on [CLS] tokens of the last n blocks)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "frozen backbone to NPU"),
    C("linear_classifier = linear_classifier.cuda()", "tensor_to_device", "replace", True,
      "linear_classifier = linear_classifier.npu()", "classifier to NPU"),
    C("=inp = inp.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "inp = inp.npu(non_blocking=True)",
      "train batch"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "train labels"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("inp = inp.cuda(non_blocking=True)  # val batch", "tensor_to_device", "replace", True,
      "inp = inp.npu(non_blocking=True)  # val batch", "val batch"),
    C("target = target.cuda(non_blocking=True)  # val labels", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)  # val labels", "val labels"),
])

E("dino-submitit", "dino/run_with_submitit.py", "explicit_replacement",
  "facebookresearch/dino run_with_submitit.py (submitit SLURM launcher)", [
    C("gpus_per_node=num_gpus_per_node,", "distributed_framework", "replace", False,
      "slurm_gres=f\"npu:{num_gpus_per_node}\",",
      "submitit turns gpus_per_node into --gpus-per-node; how NPUs are exposed as Slurm gres is site configuration (unconfirmed)"),
])

E("dino-visualize-attention", "dino/visualize_attention.py", "device_branch_or_abstraction",
  "facebookresearch/dino visualize_attention.py (self-attention maps of the last block)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "add_branch", True,
      'device = torch.device("cuda") if torch.cuda.is_available() else (torch.device("npu") if torch.npu.is_available() else torch.device("cpu"))',
      "without an NPU branch the script silently runs on the CPU"),
])

# ---------------------------------------------------------------- iBOT
E("ibot-main", "ibot/main_ibot.py", "explicit_replacement",
  "bytedance/ibot main_ibot.py (masked image modeling + self-distillation, DINO-derived)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", "replace", True,
      "student, teacher = student.npu(), teacher.npu()", "networks to NPU"),
    C("=).cuda()", "tensor_to_device", "replace", True, ").npu()", "iBOTLoss centers to NPU"),
    C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "fp16_scaler = torch.npu.amp.GradScaler()",
      "CUDA scaler disables itself without CUDA"),
    C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", "replace", True,
      "images = [im.npu(non_blocking=True) for im in images]", "crops to NPU"),
    C("masks = [msk.cuda(non_blocking=True) for msk in masks]", "tensor_to_device", "replace", True,
      "masks = [msk.npu(non_blocking=True) for msk in masks]", "MIM masks to NPU"),
    C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(fp16_scaler is not None):", "CUDA autocast is a no-op for NPU ops"),
    C("pred1 = utils.concat_all_gather(probs1[0].max(dim=1)[1])", "unsupported_op_workaround", "replace", False,
      "pred1 = utils.concat_all_gather(probs1[0].max(dim=1)[1].int())",
      "argmax indices are int64; Ascend's all_gather dtype list omits int64 (unconfirmed at runtime)"),
    C("pred2 = utils.concat_all_gather(probs2[1].max(dim=1)[1])", "unsupported_op_workaround", "replace", False,
      "pred2 = utils.concat_all_gather(probs2[1].max(dim=1)[1].int())", "same int64 all_gather caveat"),
    C("real_labels.append(utils.concat_all_gather(labels.to(pred1.device)))", "unsupported_op_workaround", "replace",
      False, "real_labels.append(utils.concat_all_gather(labels.to(pred1.device).int()))",
      "same int64 all_gather caveat (labels are int64)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
])

E("ibot-run-sh", "ibot/run.sh", "explicit_replacement",
  "bytedance/ibot run.sh (torch.distributed.launch wrapper for pretrain / eval)", [
    C("=set -x", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths, ASCEND_* variables) must be sourced before torch_npu can load"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored on NPU: a user restricting the cards silently gets all of them"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob; no effect under HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL-only knob; HCCL logging goes through ASCEND_GLOBAL_LOG_LEVEL / plog instead"),
])

E("ibot-requirements", "ibot/requirements.txt", "explicit_replacement",
  "requirements.txt of an iBOT/DINO-style repo pinning CUDA 11.1 wheels", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 NPU hosts should take CPU torch wheels (aarch64 uses plain PyPI); the old find-links page only serves the +cuXXX pins"),
    C("torch==1.8.1+cu111", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu111 wheels do not exist for aarch64 and torch_npu pairs with a plain torch of the same version"),
    C("torchvision==0.9.1+cu111", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA build, and must match the bumped torch"),
    C("timm==0.4.12", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "add the torch_npu wheel matching torch 2.1.0"),
    C("mmcv-full==1.3.9 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.8.0/index.html",
      "custom_cuda_extension", "replace", False, "# mmcv-full (optional transfer): build from source for NPU, no CUDA wheel",
      "optional detection/segmentation transfer only; CUDA-compiled wheel index; unconfirmed what the NPU build path is for this mmcv version"),
])

# ---------------------------------------------------------------- MAE linear probing
E("mae-linprobe", "mae/main_linprobe.py", "device_branch_or_abstraction",
  "facebookresearch/mae main_linprobe.py (--device flag, LARS, NativeScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, NPU_IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "every .to(device) in this file and engine_finetune.py follows this default"),
])

E("mae-engine-finetune", "mae/engine_finetune.py", "device_branch_or_abstraction",
  "facebookresearch/mae engine_finetune.py (train_one_epoch/evaluate used by linprobe and finetune)", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast does not cover NPU ops: silently fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "raises without CUDA"),
    C("with torch.cuda.amp.autocast():  # eval also runs in fp16", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # eval also runs in fp16", "same for evaluation"),
])

E("mae-misc", "mae/util/misc.py", "explicit_replacement",
  "facebookresearch/mae util/misc.py (DETR-style SmoothedValue/MetricLogger, NativeScalerWithGradNormCount)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace",
      True, "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "CUDA device string, and HCCL all_reduce does not list fp64"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "logging only: 'max mem' column silently dropped"),
    C("if torch.cuda.is_available():  # same condition as above", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # same condition as above", "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "SLURM path: ZeroDivisionError without CUDA"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "hard-coded NCCL"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()", "CUDA scaler disables itself without CUDA"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
      "tensor for the HCCL all_reduce must be on the NPU"),
])

# ---------------------------------------------------------------- packaging / kernels
E("ssl-dockerfile", "ssl-pretrain/Dockerfile", "explicit_replacement",
  "Dockerfile of an SSL pre-training repo (CUDA 11.3 devel base, cu113 wheels, apex, faiss-gpu)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "the image must carry CANN (toolkit + set_env exports) instead of the CUDA toolkit"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "custom_cuda_extension", "removal", False, None,
      "only steers nvcc builds; dead on NPU"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime knob; NPUs are passed with --device /dev/davinciN or Ascend Docker Runtime's ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime knob"),
    C("RUN pip install --no-cache-dir torch==1.10.1+cu113 torchvision==0.11.2+cu113 \\", "torch_cuda_api", "replace",
      True, "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
      "CUDA builds; torch_npu pairs with plain torch 2.1.0"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex && cd /opt/apex && git checkout 22.03 && \\",
      "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && \\",
      "NVIDIA apex with --cuda_ext cannot build without nvcc; Ascend's apex patch is built instead"),
    C('pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./',
      "custom_cuda_extension", "replace", True,
      "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl", "CUDA extension build"),
    C("RUN pip install --no-cache-dir -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post17", "torch_npu wheel matching torch 2.1.0"),
    C("RUN pip install --no-cache-dir faiss-gpu==1.7.2", "custom_cuda_extension", "replace", True,
      "RUN pip install --no-cache-dir faiss-cpu==1.7.2",
      "faiss-gpu wheels are x86 CUDA builds (no Ascend backend); the k-NN eval falls back to CPU faiss"),
])

E("dinov2-attention", "dinov2/dinov2/layers/attention.py", "kernel_rewrite",
  "facebookresearch/dinov2 dinov2/layers/attention.py (xFormers memory_efficient_attention with fallback)", [
    C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "replace", False,
      "from torch_npu import npu_fusion_attention",
      "import is guarded: without xFormers (no NPU backend) the plain Attention path is used; rewrite is for speed"),
    C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", False, "q, k, v = qkv.unbind(2)",
      "xformers.ops.unbind goes away with the xFormers import"),
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
      'x = npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale)[0]',
      "q/k/v are [B, N, H, D] = BSND; fused NPU FlashAttention instead of the unfused fallback (performance). A block-diagonal attn_bias (nested crops) would need input_layout='TND' with actual_seq_qlen/kvlen"),
])
