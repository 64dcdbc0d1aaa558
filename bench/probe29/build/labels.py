"""Labels for probe29 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

K = "/work/shared/knowledge/torch-npu-migration.md"
TSV = "/work/shared/knowledge/ops/torch_api_npu_support_2.7.1.tsv"
DIST = "/work/shared/knowledge/ascend-distributed.md"

# reusable notes
N_IMPORT = "torch_npu must be imported to register the npu device before any npu call (" + K + " §1.1, recommended even with autoload)"
N_CUDA = ".cuda() needs a CUDA build; on an NPU host it raises; becomes .npu() (" + K + " §2.3, Tensor.cuda = Tensor.npu)"
N_SETDEV = "torch.cuda.set_device raises without CUDA; torch.npu.set_device (" + K + " §2.1)"
N_COUNT = "torch.cuda.device_count() is 0 on an NPU host, so nprocs=0 / world_size=0 silently; torch.npu.device_count() (" + K + " §2.1)"
N_NCCL = "NCCL is unavailable on Ascend; HCCL is the collective backend (" + K + " §2.4, " + DIST + " §6.1)"
N_MAPLOC = "map_location 'cuda:N' fails to deserialize on a host without CUDA; 'npu:N' (" + K + " §2.2)"
N_SCALER = "torch.cuda.amp.GradScaler is inactive without CUDA (warns and disables itself), so fp16 runs without loss scaling; torch.npu.amp.GradScaler (" + TSV + " row torch.cuda.amp.GradScaler)"
N_AUTOCAST = "torch.cuda.amp.autocast only affects CUDA tensors; on NPU the model silently runs fp32 (no mixed precision); torch.npu.amp.autocast (" + TSV + ")"
N_SYNC = "torch.cuda.synchronize raises without CUDA; torch.npu.synchronize (" + K + " §2.1)"
N_MAXMEM = "torch.cuda.max_memory_allocated silently reports 0 when CUDA is not initialised; torch.npu.max_memory_allocated for a real number (" + K + " §2.1)"
N_FUSEDOPT = "performance: torch_npu.optim.NpuFused* optimizer (msFmkTransplt api_performance_dict, " + K + " §3.5, §5)"
N_COMPILE = "performance: set jit_compile=False for dynamic shapes (msFmkTransplt performance_configuration_dict, " + K + " §3.5)"
N_DEVSTR = "'cuda' device string fails on an NPU host; 'npu' (" + K + " §2.2)"
N_AVAIL = "torch.cuda.is_available() is False on an NPU host, which sends the code down the CPU / non-distributed path; torch.npu.is_available() (" + K + " §2.1)"
N_CVD = "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES selects NPUs (" + DIST + ")"

E("moco_v2_main", "main_moco.py", "explicit_replacement", "MoCo v2 main_moco.py (mp.spawn, --gpu, shuffle-BN DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("'--dist-backend', default='nccl'", "dist_backend", R, True, "parser.add_argument('--dist-backend', default='hccl', type=str, help='distributed backend')", N_NCCL),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True, "ngpus_per_node = torch.npu.device_count()", N_COUNT),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
    C("=model.cuda(args.gpu)", "tensor_to_device", R, True, "model.npu(args.gpu)", N_CUDA),
    C("torch.cuda.set_device(args.gpu)  # single-gpu", "torch_cuda_api", R, False, "torch.npu.set_device(args.gpu)  # single-gpu debugging only", "branch ends in NotImplementedError; " + N_SETDEV),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", N_CUDA),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, False, "model = model.npu(args.gpu)", "unreachable in practice (the branch raises NotImplementedError right after); " + N_CUDA),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", R, True, "criterion = nn.CrossEntropyLoss().npu(args.gpu)", N_CUDA),
    C("optimizer = torch.optim.SGD(model.parameters(), args.lr,", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), args.lr,", N_FUSEDOPT),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", R, True, "loc = 'npu:{}'.format(args.gpu)", N_MAPLOC),
    C("images[0] = images[0].cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "images[0] = images[0].npu(args.gpu, non_blocking=True)", N_CUDA),
    C("images[1] = images[1].cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "images[1] = images[1].npu(args.gpu, non_blocking=True)", N_CUDA),
])

E("moco_v2_builder", "moco/builder.py", "explicit_replacement", "MoCo v2 moco/builder.py (queue buffer, shuffle-BN, concat_all_gather)", [
    C("idx_shuffle = torch.randperm(batch_size_all).cuda()", "tensor_to_device", R, True, "idx_shuffle = torch.randperm(batch_size_all).npu()", N_CUDA),
    C("labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()", "tensor_to_device", R, True, "labels = torch.zeros(logits.shape[0], dtype=torch.long).npu()", N_CUDA),
])

E("moco_v3_main", "main_moco.py", "explicit_replacement", "MoCo v3 main_moco.py (SyncBN, GradScaler, autocast, LARS)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("'--dist-backend', default='nccl'", "dist_backend", R, True, "parser.add_argument('--dist-backend', default='hccl', type=str)", N_NCCL),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True, "ngpus_per_node = torch.npu.device_count()", N_COUNT),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():", N_AVAIL + "; here the SyncBN/DDP setup is skipped and training runs on CPU"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
    C("=model.cuda(args.gpu)", "tensor_to_device", R, True, "model.npu(args.gpu)", N_CUDA),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", N_CUDA),
    C("torch.cuda.set_device(args.gpu)  # comment out", "torch_cuda_api", R, False, "torch.npu.set_device(args.gpu)  # comment out the following line for debugging", "branch ends in NotImplementedError; " + N_SETDEV),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, False, "model = model.npu(args.gpu)", "branch ends in NotImplementedError; " + N_CUDA),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", R, True, "loc = 'npu:{}'.format(args.gpu)", N_MAPLOC),
    C("images[0] = images[0].cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "images[0] = images[0].npu(args.gpu, non_blocking=True)", N_CUDA),
    C("images[1] = images[1].cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "images[1] = images[1].npu(args.gpu, non_blocking=True)", N_CUDA),
    C("with torch.cuda.amp.autocast(True):", "amp", R, True, "with torch.npu.amp.autocast(True):", N_AUTOCAST),
])

E("moco_v3_builder", "moco/builder.py", "explicit_replacement", "MoCo v3 moco/builder.py (contrastive loss over gathered keys)", [
    C("labels = (torch.arange(N, dtype=torch.long) + N * torch.distributed.get_rank()).cuda()", "tensor_to_device", R, True,
      "labels = (torch.arange(N, dtype=torch.long) + N * torch.distributed.get_rank()).npu()", N_CUDA),
])

E("moco_lincls", "main_lincls.py", "explicit_replacement", "MoCo main_lincls.py (linear probe, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("'--dist-backend', default='nccl'", "dist_backend", R, True, "parser.add_argument('--dist-backend', default='hccl', type=str)", N_NCCL),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True, "ngpus_per_node = torch.npu.device_count()", N_COUNT),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
    C("=model.cuda(args.gpu)", "tensor_to_device", R, True, "model.npu(args.gpu)", N_CUDA),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", N_CUDA),
    C("torch.cuda.set_device(args.gpu)  # evaluate", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)  # evaluate on one card", N_SETDEV + "; the single-card evaluation path is reachable here"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, True, "model = model.npu(args.gpu)", N_CUDA),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", R, True, "model = model.npu()  # torch.nn.DataParallel is not supported on NPU; single card or launch with DDP",
      "torch.nn.DataParallel is marked unsupported (" + TSV + ", mstt_unsupported_torch_apis_2.7.txt)"),
    C("criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "tensor_to_device", R, True, "criterion = nn.CrossEntropyLoss().npu(args.gpu)", N_CUDA),
    C("optimizer = torch.optim.SGD(parameters, args.lr", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedSGD(parameters, args.lr, momentum=0.9, weight_decay=0.)", N_FUSEDOPT),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "images = images.npu(args.gpu, non_blocking=True)", N_CUDA),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", R, True, "target = target.npu(args.gpu, non_blocking=True)", N_CUDA),
])

E("simclr_run", "run.py", "explicit_replacement", "sthalles/SimCLR run.py (--disable-cuda, torch.cuda.device context)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("if not args.disable_cuda and torch.cuda.is_available():", "torch_cuda_api", R, True, "if not args.disable_cuda and torch.npu.is_available():", N_AVAIL),
    C("args.device = torch.device('cuda')", "device_type", R, True, "args.device = torch.device('npu')", N_DEVSTR),
    C("optimizer = torch.optim.Adam(model.parameters()", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), args.lr, weight_decay=args.weight_decay)", N_FUSEDOPT),
    C("with torch.cuda.device(args.gpu_index):", "torch_cuda_api", R, True, "with torch.npu.device(args.gpu_index):",
      "torch.cuda.device(0) lazily initialises CUDA and raises without it (only a negative index is a no-op); torch.npu.device (" + K + " §2.1)"),
])

E("simclr_trainer", "simclr.py", "explicit_replacement", "sthalles/SimCLR simclr.py (torch.cuda.amp GradScaler/autocast)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True, "from torch.npu.amp import GradScaler, autocast",
      "the CUDA GradScaler/autocast do nothing for NPU tensors, so --fp16-precision silently trains fp32 without scaling; torch.npu.amp (" + TSV + ")"),
])

E("byol_trainer", "trainer.py", "explicit_replacement", "PyTorch-BYOL trainer.py + main (device string chosen once)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "torch.cuda.empty_cache() is a silent no-op without CUDA; torch.npu.empty_cache() releases the NPU cache (" + K + " §2.1)"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", R, True, "device = 'npu' if torch.npu.is_available() else 'cpu'",
      N_AVAIL + "; everything downstream uses this device string, so the whole run lands on CPU"),
])

E("swav_main", "main_swav.py", "explicit_replacement", "SwAV main_swav.py (apex LARC/amp, apex SyncBN, queue, distributed Sinkhorn)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("=init_distributed_mode(args)", "compile_mode", A, False, "torch.npu.set_compile_mode(jit_compile=False)", N_COMPILE + "; multi-crop feeds two crop sizes"),
    C("model = apex.parallel.convert_syncbn_model(model, process_group=process_group)", "distributed_framework", R, False,
      "model = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=process_group)",
      "non-default --sync_bn apex path; apex's optimized SyncBN relies on a CUDA extension, whether the Ascend apex patch keeps it is unconfirmed; torch SyncBatchNorm is supported (" + TSV + ")"),
    C("=model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", N_CUDA),
    C("optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=args.base_lr, momentum=0.9, weight_decay=args.wd)", N_FUSEDOPT + "; LARC wraps it unchanged (LARC on a fused optimizer: unconfirmed)"),
    C('model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")', "amp", R, False,
      'model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0, combine_grad=True)',
      "runs with the Ascend apex patch (O1/O2, static/dynamic loss scale, combine grad: " + K + " §6 apex row); combine_grad is the performance switch; exact kwargs unconfirmed"),
    C("=).cuda()", "tensor_to_device", R, True, ").npu()", "SwAV feature queue allocated on the GPU; " + N_CUDA),
])

E("swav_utils", "src/utils.py", "explicit_replacement", "SwAV src/utils.py (init_distributed_mode, restart_from_checkpoint)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT + "; this module calls torch.npu.* itself"),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', N_NCCL),
    C("args.gpu_to_work_on = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True, "args.gpu_to_work_on = args.rank % torch.npu.device_count()",
      "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError; torch.npu.device_count() (" + K + " §2.1)"),
    C("torch.cuda.set_device(args.gpu_to_work_on)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu_to_work_on)", N_SETDEV),
    C('ckp_path, map_location="cuda:"', "device_type", R, True, 'ckp_path, map_location="npu:" + str(torch.distributed.get_rank() % torch.npu.device_count())',
      N_MAPLOC + "; the device_count() in the same expression is 0 without CUDA"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is queued lazily and never reaches the NPU generator; torch.manual_seed above already seeds registered devices, so this is for clarity only (" + K + " §2.1)"),
])

E("dino_main", "main_dino.py", "explicit_replacement", "DINO v1 main_dino.py (multi-crop, fp16 GradScaler, teacher EMA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("=utils.init_distributed_mode(args)", "compile_mode", A, False, "torch.npu.set_compile_mode(jit_compile=False)", N_COMPILE + "; global (224) and local (96) crops give two input shapes"),
    C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", R, True, "student, teacher = student.npu(), teacher.npu()", N_CUDA),
    C("dino_loss = DINOLoss(", "tensor_to_device", R, True, "dino_loss = DINOLoss(args.out_dim, args.local_crops_number + 2, 0.04, 0.04, 30, args.epochs).npu()", N_CUDA + " (moves the center buffer)"),
    C("optimizer = torch.optim.AdamW(params_groups)", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(params_groups)  # to use with ViTs",
      N_FUSEDOPT + " (msFmkTransplt notes about +70% memory for AdamW)"),
    C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "fp16_scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", R, True, "images = [im.npu(non_blocking=True) for im in images]", N_CUDA),
    C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", R, True, "with torch.npu.amp.autocast(fp16_scaler is not None):", N_AUTOCAST),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", N_SYNC),
])

E("dino_utils", "utils.py", "explicit_replacement", "DINO utils.py (init_distributed_mode, MetricLogger, LARS, MultiCropWrapper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT + "; the module calls torch.npu.* itself"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazy CUDA seeding never reaches the NPU generator; torch.manual_seed already seeds registered devices"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "unsupported_op_workaround", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      N_DEVSTR + "; HCCL all_reduce lists bf16/fp16/fp32/int32/int64/bool only, not fp64 (" + TSV + " row torch.distributed.all_reduce)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():", "logging only: on NPU the memory column silently disappears; " + K + " §2.1"),
    C("torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", R, False, "torch.npu.max_memory_allocated() / MB))", N_MAXMEM),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True, "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError; torch.npu.device_count()"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", R, True, "elif torch.npu.is_available():", N_AVAIL + "; here the single-card launch exits with 'Does not support training without GPU'"),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', N_NCCL),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
])

E("mae_main_pretrain", "main_pretrain.py", "explicit_replacement", "MAE main_pretrain.py (--device cuda, NativeScaler, --dist_on_itp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("parser.add_argument('--device', default='cuda',", "device_type", R, True, "parser.add_argument('--device', default='npu',", N_DEVSTR + "; torch.device(args.device) then feeds every .to(device)"),
    C("=misc.init_distributed_mode(args)", "compile_mode", A, False, "torch.npu.set_compile_mode(jit_compile=False)",
      N_COMPILE + " (random masking keeps shapes static, so this is a tuning choice, not a fix)"),
    C("optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))", N_FUSEDOPT),
])

E("mae_engine_pretrain", "engine_pretrain.py", "explicit_replacement", "MAE engine_pretrain.py (autocast + synchronize in the loop)", [
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", N_AUTOCAST),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", N_SYNC),
])

E("mae_misc", "util/misc.py", "explicit_replacement", "MAE util/misc.py (init_distributed_mode, NativeScalerWithGradNormCount)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT + "; the module calls torch.npu.* itself"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True, "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError; torch.npu.device_count()"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
    C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'", N_NCCL),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "self._scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", R, True, "x_reduce = torch.tensor(x).npu()",
      N_CUDA + "; note the python float becomes fp32 here, which HCCL all_reduce accepts"),
])

E("ibot_main", "main_ibot.py", "explicit_replacement", "iBOT main_ibot.py (masked image modeling on DINO scaffolding)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("student, teacher = student.cuda(), teacher.cuda()", "tensor_to_device", R, True, "student, teacher = student.npu(), teacher.npu()", N_CUDA),
    C("args.global_crops_number, args.local_crops_number).cuda()", "tensor_to_device", R, True, "args.global_crops_number, args.local_crops_number).npu()", N_CUDA + " (center buffers)"),
    C("optimizer = torch.optim.AdamW(params_groups)", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(params_groups)", N_FUSEDOPT),
    C("fp16_scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "fp16_scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("images = [im.cuda(non_blocking=True) for im in images]", "tensor_to_device", R, True, "images = [im.npu(non_blocking=True) for im in images]", N_CUDA),
    C("masks = [msk.cuda(non_blocking=True) for msk in masks]", "tensor_to_device", R, True, "masks = [msk.npu(non_blocking=True) for msk in masks]", N_CUDA),
    C("with torch.cuda.amp.autocast(fp16_scaler is not None):", "amp", R, True, "with torch.npu.amp.autocast(fp16_scaler is not None):", N_AUTOCAST),
])

E("barlow_main", "main.py", "explicit_replacement", "Barlow Twins main.py (SLURM requeue, mp.spawn, LARS with torch.cuda.FloatTensor)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("args.ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True, "args.ngpus_per_node = torch.npu.device_count()", N_COUNT),
    C("backend='nccl', init_method=args.dist_url,", "dist_backend", R, True, "backend='hccl', init_method=args.dist_url,", N_NCCL),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)", N_SETDEV),
    C("model = BarlowTwins(args).cuda(gpu)", "tensor_to_device", R, True, "model = BarlowTwins(args).npu(gpu)", N_CUDA),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("y1 = y1.cuda(gpu, non_blocking=True)", "tensor_to_device", R, True, "y1 = y1.npu(gpu, non_blocking=True)", N_CUDA),
    C("y2 = y2.cuda(gpu, non_blocking=True)", "tensor_to_device", R, True, "y2 = y2.npu(gpu, non_blocking=True)", N_CUDA),
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", N_AUTOCAST),
    C("one = torch.cuda.FloatTensor([1.0]).squeeze()", "torch_cuda_api", R, True, "one = torch.ones_like(param_norm)",
      "legacy typed constructor torch.cuda.FloatTensor needs CUDA; torch.npu.FloatTensor exists (" + K + " §2.1) but a device-following ones_like is the usual rewrite"),
])

E("vicreg_main", "main_vicreg.py", "explicit_replacement", "VICReg main_vicreg.py (--device cuda, FullGatherLayer, amp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("parser.add_argument('--device', default='cuda'", "device_type", R, True, "parser.add_argument('--device', default='npu', help='device to use for training / testing')", N_DEVSTR),
    C("model = VICReg(args).cuda(gpu)", "tensor_to_device", R, True, "model = VICReg(args).npu(gpu)",
      ".cuda(torch.device('npu')) raises (Module.cuda expects a CUDA device); " + N_CUDA),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", N_SCALER),
    C("x = x.cuda(gpu, non_blocking=True)", "tensor_to_device", R, True, "x = x.npu(gpu, non_blocking=True)", N_CUDA),
    C("y = y.cuda(gpu, non_blocking=True)", "tensor_to_device", R, True, "y = y.npu(gpu, non_blocking=True)", N_CUDA),
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", N_AUTOCAST),
])

E("knn_eval", "eval_knn.py", "explicit_replacement", "DINO eval_knn.py (feature bank on GPU, all_gather of indices, weighted k-NN)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", N_CUDA),
    C("samples = samples.cuda(non_blocking=True)", "tensor_to_device", R, True, "samples = samples.npu(non_blocking=True)", N_CUDA),
    C("index = index.cuda(non_blocking=True)", "tensor_to_device", R, True, "index = index.npu(non_blocking=True)", N_CUDA),
    C("features = features.cuda(non_blocking=True)", "tensor_to_device", R, True, "features = features.npu(non_blocking=True)", N_CUDA),
    C("y_all_reduce = torch.distributed.all_gather(y_l, index, async_op=True)", "unsupported_op_workaround", R, False,
      "y_all_reduce = torch.distributed.all_gather(y_l, index.int(), async_op=True)  # y_all allocated as int32, cast back with .long() before index_copy_",
      "Ascend's list gives bf16/fp16/fp32/int8/int32/bool for all_gather, not int64 (" + TSV + " row torch.distributed.all_gather); whether int64 really fails is unconfirmed"),
    C("train_features = train_features.cuda()", "tensor_to_device", R, True, "train_features = train_features.npu()", N_CUDA),
    C("test_features = test_features.cuda()", "tensor_to_device", R, True, "test_features = test_features.npu()", N_CUDA),
    C("train_labels = train_labels.cuda()", "tensor_to_device", R, True, "train_labels = train_labels.npu()", N_CUDA),
    C("test_labels = test_labels.cuda()", "tensor_to_device", R, True, "test_labels = test_labels.npu()", N_CUDA),
])

E("convert_ckpt", "convert_to_torchvision.py", "explicit_replacement", "MoCo/DINO checkpoint conversion utility (CPU only; near-miss file, no labels)", [])

E("dino_vit", "vision_transformer.py", "explicit_replacement", "DINO vision_transformer.py (device-agnostic model code; no labels)", [])

E("submitit_launch", "run_with_submitit.py", "explicit_replacement", "DINO/DeiT run_with_submitit.py (SLURM via submitit)", [
    C("kwargs['slurm_constraint'] = 'volta32gb'", "distributed_framework", X, False, None,
      "only with --use_volta32: a V100-32GB node constraint means nothing on an Ascend partition (the job would sit pending); removed"),
    C("gpus_per_node=num_gpus_per_node,", "distributed_framework", R, False,
      "slurm_gres=f\"npu:{num_gpus_per_node}\",  # site-specific GRES name for Ascend nodes",
      "unconfirmed: no Ascend-specific Slurm GRES integration was found (" + DIST + " §7.2 'Slurm'); how a site exposes /dev/davinci* to Slurm varies"),
])

E("mae_pretrain_sh", "scripts/pretrain_vit_base.sh", "explicit_replacement", "MAE pre-train/fine-tune launch script (torch.distributed.launch, NCCL env)", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, False, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      N_CVD + " (" + DIST + " env-var table); not required here because the list names every card of an 8-card node anyway"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=eth0",
      "NCCL_* is ignored by HCCL; HCCL_SOCKET_IFNAME picks the host NIC (" + DIST + "); single-node run, so HCCL's own NIC choice works"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only knob, meaningless for HCCL; dropped"),
    C("export OMP_NUM_THREADS=8", "env_var", A, False, "export TASK_QUEUE_ENABLE=1",
      "performance: msFmkTransplt performance_configuration_dict recommends TASK_QUEUE_ENABLE=1 (" + K + " §3.5)"),
    C("=nvidia-smi", "device_capability_check", R, True, "npu-smi info", "nvidia-smi does not exist on an Ascend host and the script runs under set -e; npu-smi info (" + K + " §6 table)"),
])

E("moco_v3_sh", "scripts/train_moco_v3.sh", "explicit_replacement", "MoCo v3 README-style training/eval commands", [
    C("--dist-backend 'nccl'", "dist_backend", R, True, "--dist-backend 'hccl' \\", N_NCCL + "; the explicit flag overrides a ported default"),
    C("CUDA_VISIBLE_DEVICES=0 python main_lincls.py", "env_var", R, False, "ASCEND_RT_VISIBLE_DEVICES=0 python main_lincls.py \\",
      N_CVD + "; --gpu 0 already pins the single card, so ignoring it only exposes the other cards"),
])

E("requirements_txt", "requirements.txt", "explicit_replacement", "SSL repo requirements.txt (cu113 wheels, faiss-gpu, NVIDIA apex, pynvml)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", R, True, "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts install CPU torch for torch_npu; aarch64 uses plain PyPI torch (" + K + " §1.1)"),
    C("torch==1.12.1+cu113", "import_torch_npu", R, True, "torch==2.1.0", "no torch_npu release pairs with torch 1.12; torch_npu wheel version must equal the torch version (" + K + " §1.1, §1.2)"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", R, True, "torchvision==0.16.0", "torchvision must match torch 2.1 (torchvision_npu table pairs 0.16.0 with torch 2.1, " + K + " §6)"),
    C("numpy>=1.21,<1.24", "import_torch_npu", A, True, "torch-npu==2.1.0.post12", "torch_npu itself must be installed (" + K + " §1.2, 2.1.0.post12 pairs with CANN 8.1.RC1)"),
    C("faiss-gpu==1.7.2", "unsupported_op_workaround", R, True, "faiss-cpu==1.7.2", "faiss-gpu is CUDA-only (no Ascend build; not in the knowledge files, general fact)"),
    C("git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, True, "# apex: build Ascend/apex (scripts/build.sh patches NVIDIA apex for NPU) instead",
      "NVIDIA apex amp/SyncBN/fused kernels assume CUDA; Ascend apex is the patched build (" + K + " §6 apex row)"),
    C("pynvml==11.4.1", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent; npu-smi / torch.npu.utilization instead (" + K + " §6 table)"),
])

E("solo_byol_yaml", "scripts/pretrain/imagenet-100/byol.yaml", "explicit_replacement", "solo-learn BYOL pretrain config (Lightning accelerator, DALI loader)", [
    C('format: "dali"', "unsupported_op_workaround", R, True, 'format: "image_folder"',
      "NVIDIA DALI decodes on the GPU and needs CUDA (general fact, not in the knowledge files)"),
    C('accelerator: "gpu"', "device_type", R, True, 'accelerator: "npu"',
      "Lightning's gpu accelerator needs CUDA and fails on an NPU host; an 'npu' accelerator needs an Ascend Lightning plugin (name unconfirmed)"),
    C('strategy: "ddp"', "dist_backend", R, False, 'strategy: "ddp_hccl"  # DDPStrategy(process_group_backend="hccl") registered in main_pretrain.py',
      "unconfirmed: Lightning picks nccl only for cuda devices and otherwise falls back to gloo, so DDP on NPU would need an explicit hccl backend"),
])

E("setup_env_sh", "setup_env.sh", "explicit_replacement", "repo setup script (conda cudatoolkit, NVIDIA apex --cuda_ext build)", [
    C("conda install -y pytorch==1.12.1", "import_torch_npu", R, True, "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "cudatoolkit builds are useless on Ascend; torch + matching torch_npu wheel (" + K + " §1.1, §1.2)"),
    C("export CUDA_HOME=/usr/local/cuda-11.3", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced for torch_npu (/work/shared/knowledge/ascend-host-formats.md §3)"),
    C("git clone https://github.com/NVIDIA/apex /tmp/apex", "custom_cuda_extension", R, True, "git clone https://gitee.com/ascend/apex /tmp/apex",
      "Ascend apex patch repository (live on gitee/gitcode, " + K + " sources table and §6 apex row)"),
    C('--global-option="--cuda_ext"', "custom_cuda_extension", R, True, "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "the --cuda_ext build needs nvcc; Ascend apex builds through scripts/build.sh (" + K + " §6 apex row; exact flags unconfirmed)"),
    C("=nvcc --version", "device_capability_check", R, True, "npu-smi info", "no nvcc on an Ascend host and the script runs under set -e"),
    C("torch.cuda.is_available(), torch.cuda.device_count())", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available(), torch.npu.device_count())\"",
      "sanity print only: prints False/0 on NPU without failing"),
])

E("vicreg_distributed", "distributed.py", "explicit_replacement", "VICReg distributed.py (init_distributed_mode)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", N_IMPORT + "; the module calls torch.npu.* itself"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True, "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError; torch.npu.device_count()"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", N_SETDEV),
    C('args.dist_backend = "nccl"', "dist_backend", R, True, 'args.dist_backend = "hccl"', N_NCCL),
])
