"""Labels for probe128 (classic ImageNet / detection / segmentation / CRNN trainers, CUDA -> Ascend NPU).

One entry per upstream file; one C(...) per line a careful porter would edit.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = "entry script: torch_npu must be imported to register the npu device (autoload only from torch_npu 2.5.1)"

# ---------------------------------------------------------------------------------------------
E("p128_01_imagenet_main", "imagenet/main.py", "explicit_replacement",
  "pytorch/examples imagenet/main.py (cuda/mps/cpu branches, mp.spawn, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,",
      "NCCL is not available on an NPU host; HCCL is the collective backend"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: ngpus_per_node silently falls back to 1"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()", "counts NPUs for mp.spawn nprocs"),
    C("if not torch.cuda.is_available() and not torch.backends.mps.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available() and not torch.backends.mps.is_available():",
      "otherwise the NPU host takes the 'using CPU' branch and trains on CPU"),
    C("if torch.cuda.is_available():  # one process per GPU", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # one process per NPU", "DDP placement branch is skipped on NPU host"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device fails without CUDA"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", ".cuda() fails without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", ".cuda() fails without CUDA"),
    C("elif args.gpu is not None and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "elif args.gpu is not None and torch.npu.is_available():", "single-device branch never taken on NPU host"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single-NPU, no DDP", "torch.cuda.set_device fails without CUDA"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
      ".cuda() fails without CUDA"),
    C("model.features = torch.nn.DataParallel(model.features)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU (Ascend API list); run single-device or DDP"),
    C("model.cuda()  # classifier stays", "tensor_to_device", "replace", True, "model.npu()",
      ".cuda() fails without CUDA"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True, "model = model.npu()",
      "DataParallel unsupported on NPU and .cuda() fails; single-device fallback"),
    C("if torch.cuda.is_available():  # device for the loss", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # device for the loss and the input batches",
      "otherwise device silently becomes cpu while the model is on npu"),
    C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
      "device = torch.device('npu:{}'.format(args.gpu))", "cuda device string"),
    C("=device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "cuda device string"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():",
      "resume with --gpu: otherwise checkpoint is never loaded (NameError)"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location to a cuda device fails without CUDA"),
    C("best_acc1 = best_acc1.to(args.gpu)", "tensor_to_device", "replace", True,
      "best_acc1 = best_acc1.to('npu:{}'.format(args.gpu))", "Tensor.to(int) means a CUDA device index (torch 2.1)"),
    C("=if args.gpu is not None and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.gpu is not None and torch.npu.is_available():", "validation batches stay on CPU otherwise"),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(args.gpu, non_blocking=True)", ".cuda() fails without CUDA"),
    C("if torch.cuda.is_available():  # target follows", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # target follows the model", "target stays on CPU otherwise"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", ".cuda() fails without CUDA"),
    C("if torch.cuda.is_available():  # reduce on the accelerator", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():  # reduce on the accelerator", "HCCL all_reduce needs an npu tensor, not cpu"),
    C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
      "cuda device string"),
]) 

# ---------------------------------------------------------------------------------------------
CANN_SOURCE_NOTE = ("CANN environment (set_env.sh) must be sourced before torch_npu can load libascendcl/libhccl; "
                    "not required when the image/profile already exports it (unconfirmed for this host)")

E("p128_02_imagenet_run8p", "imagenet/scripts/train_8p.sh", "explicit_replacement",
  "ModelZoo-style train_8p.sh launcher around pytorch/examples imagenet/main.py", [
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      CANN_SOURCE_NOTE + "; set_env.sh appends to possibly-unset variables, hence set +u under 'set -u'"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored by the Ascend runtime; lists all 8 devices so the unchanged line is a no-op"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* is ignored by HCCL; log level is an ASCEND_* variable"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored by HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P knob, meaningless on Ascend"),
    C("RANK_SIZE=$(nvidia-smi --query-gpu=name", "torch_cuda_api", "replace", False,
      "RANK_SIZE=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi absent on NPU host; RANK_SIZE is only echoed, so the failure is cosmetic"),
    C("nvidia-smi --query-gpu=index,name,driver_version", "torch_cuda_api", "replace", False, "npu-smi info",
      "informational device dump; command not found but the script continues (no set -e)"),
    C("--dist-backend 'nccl'", "dist_backend", "replace", True, "--dist-backend 'hccl' \\",
      "explicit nccl backend overrides the Python default; NCCL unavailable on NPU"),
    C("nvidia-smi --query-gpu=index,memory.used", "torch_cuda_api", "replace", False,
      "npu-smi info >> ${test_path_dir}/output/train_8p.log", "post-run memory dump only"),
])

# ---------------------------------------------------------------------------------------------
NVTX_NOTE = "torch.cuda.nvtx is not redirected on NPU (use torch_npu.npu.mstx); fails when --prof >= 0"
E("p128_03_apex_main_amp", "examples/imagenet/main_amp.py", "explicit_replacement",
  "NVIDIA/apex examples/imagenet/main_amp.py (amp O1/O2, apex DDP, data_prefetcher, nvtx)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", "replace", True,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex.parallel.DDP hard-codes torch.cuda streams/events; Ascend ports use torch DDP"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl',", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl',", "NCCL unavailable on NPU"),
    C("memory_format = torch.channels_last", "unsupported_op_workaround", "replace", False,
      "memory_format = torch.contiguous_format",
      "msFmkTransplt lists channels_last as unsupported on NPU; only behind --channels-last (default off)"),
    C("model = apex.parallel.convert_syncbn_model(model)", "distributed_framework", "replace", False,
      "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
      "apex SyncBN falls back to a Python implementation without the CUDA ext; torch SyncBatchNorm is supported on NPU (unconfirmed that apex's fallback fails)"),
    C("model = model.cuda().to(memory_format=memory_format)", "tensor_to_device", "replace", True,
      "model = model.npu().to(memory_format=memory_format)", ".cuda() fails without CUDA"),
    C("optimizer = optimizers.FusedSGD(", "fused_optimizer", "replace", True,
      "optimizer = optimizers.NpuFusedSGD(model.parameters(), args.lr,",
      "apex FusedSGD needs the amp_C CUDA kernels; Ascend apex provides NpuFusedSGD"),
    C("model, optimizer = amp.initialize(model, optimizer,", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, combine_grad=True,",
      "Ascend apex amp works as-is; combine_grad is the NPU performance option"),
    C("=model = DDP(model, delay_allreduce=True)", "distributed_framework", "replace", True,
      "model = DDP(model, device_ids=[args.gpu])", "torch DDP has no delay_allreduce argument"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu()", ".cuda() fails without CUDA"),
    C("map_location = lambda storage, loc: storage.cuda(args.gpu)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='npu:{}'.format(args.gpu))",
      "storage.cuda() fails without CUDA"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "CUDA stream cannot be created on NPU host"),
    C("self.mean = torch.tensor([0.485 * 255", "tensor_to_device", "replace", True,
      "self.mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1,3,1,1)", ".cuda() fails"),
    C("self.std = torch.tensor([0.229 * 255", "tensor_to_device", "replace", True,
      "self.std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1,3,1,1)", ".cuda() fails"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "side-stream copy"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_input = self.next_input.npu(non_blocking=True)", ".cuda() fails"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_target = self.next_target.npu(non_blocking=True)", ".cuda() fails"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "input.record_stream(torch.npu.current_stream())", "CUDA stream API"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "target.record_stream(torch.npu.current_stream())", "CUDA stream API"),
    C("torch.cuda.cudart().cudaProfilerStart()", "torch_cuda_api", "removal", True, None,
      "cudart profiler hook has no NPU counterpart (use torch_npu.profiler); fails when --prof >= 0"),
    C('range_push("Body of iteration', "torch_cuda_api", "replace", True,
      'if args.prof >= 0: rng_body = torch_npu.npu.mstx.range_start("Body of iteration {}".format(i))', NVTX_NOTE),
    C('range_push("forward")', "torch_cuda_api", "replace", True,
      'if args.prof >= 0: rng_fwd = torch_npu.npu.mstx.range_start("forward")', NVTX_NOTE),
    C("range_pop()  # forward", "torch_cuda_api", "replace", True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_fwd)", NVTX_NOTE),
    C('range_push("backward")', "torch_cuda_api", "replace", True,
      'if args.prof >= 0: rng_bwd = torch_npu.npu.mstx.range_start("backward")', NVTX_NOTE),
    C("range_pop()  # backward", "torch_cuda_api", "replace", True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_bwd)", NVTX_NOTE),
    C('range_push("optimizer.step()")', "torch_cuda_api", "replace", True,
      'if args.prof >= 0: rng_opt = torch_npu.npu.mstx.range_start("optimizer.step()")', NVTX_NOTE),
    C("range_pop()  # optimizer.step()", "torch_cuda_api", "replace", True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_opt)", NVTX_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and fails"),
    C('range_push("prefetcher.next()")', "torch_cuda_api", "replace", True,
      'if args.prof >= 0: rng_pf = torch_npu.npu.mstx.range_start("prefetcher.next()")', NVTX_NOTE),
    C("range_pop()  # prefetcher.next()", "torch_cuda_api", "replace", True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_pf)", NVTX_NOTE),
    C("range_pop()  # body", "torch_cuda_api", "replace", True,
      "if args.prof >= 0: torch_npu.npu.mstx.range_end(rng_body)", NVTX_NOTE),
    C("torch.cuda.cudart().cudaProfilerStop()", "torch_cuda_api", "removal", True, None,
      "cudart profiler hook has no NPU counterpart; fails when --prof >= 0"),
])

# ---------------------------------------------------------------------------------------------
APEX_AMP_NOTE = ("Ascend apex (patched NVIDIA apex) keeps amp.initialize/scale_loss working; "
                 "combine_grad=True is the NPU performance option, not a correctness fix")

E("p128_04_mobilenetv2_train", "mobilenetv2/train.py", "explicit_replacement",
  "ModelZoo-style MobileNetV2 trainer derived from pytorch/examples (apex amp, label smoothing, --device-list)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl'", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str)", "NCCL unavailable on NPU"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds the npu generator"),
    C("if ngpus_per_node > torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if ngpus_per_node > torch.npu.device_count():", "device_count() is 0 on an NPU host -> ValueError"),
    C("ngpus_per_node, torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "ngpus_per_node, torch.npu.device_count()))", "error-message text only"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "loc drives set_device, .to(loc) and map_location"),
    C("torch.cuda.set_device(loc)", "torch_cuda_api", "replace", True, "torch.npu.set_device(loc)",
      "fails without CUDA"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, combine_grad=True,",
      APEX_AMP_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "fails without CUDA (only with --benchmark 1)"),
])

# ---------------------------------------------------------------------------------------------
E("p128_05_mobilenetv2_model", "mobilenetv2/models/mobilenetv2.py", "device_branch_or_abstraction",
  "torchvision-style MobileNetV2 model definition (device-agnostic model code)", [
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", False,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "__main__ smoke test silently runs on CPU on an NPU host; result is still correct"),
])

# ---------------------------------------------------------------------------------------------
E("p128_06_shufflenetv2_train", "ShuffleNetV2/train.py", "explicit_replacement",
  "megvii-model/ShuffleNet-Series ShuffleNetV2 train.py (use_gpu flag, DataParallel, DataIterator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "use_gpu stays False on an NPU host -> silent CPU training"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU; single device (model.to(device) below)"),
    C("loss_function = criterion_smooth.cuda()", "tensor_to_device", "replace", True,
      "loss_function = criterion_smooth.npu()", ".cuda() fails"),
    C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
      "cuda device"),
    C("checkpoint = torch.load(args.eval_resume, map_location=None if use_gpu else 'cpu')", "device_type", "replace", False,
      "checkpoint = torch.load(args.eval_resume, map_location=device)",
      "map_location=None restores released GPU checkpoints onto cuda; fails only if the file stores CUDA tensors (unconfirmed); such files may also carry DataParallel 'module.' keys"),
])

# ---------------------------------------------------------------------------------------------
E("p128_07_shufflenetv2_network", "ShuffleNetV2/network.py", "explicit_replacement",
  "megvii-model/ShuffleNet-Series ShuffleNetV2 network.py / blocks.py (channel_shuffle)", [
    C("def channel_shuffle(self, x):", "npu_fused_op", "replace", False,
      "def channel_shuffle(self, x):  # -> torch_npu.contrib.module.ChannelShuffle",
      "msFmkTransplt affinity API: channel_shuffle -> torch_npu.contrib.module.ChannelShuffle; performance only"),
])

# ---------------------------------------------------------------------------------------------
AMP_NOTE = ("torch.cuda.amp on an NPU host disables itself with a warning: mixed precision silently not applied "
            "(GradScaler likewise)")
E("p128_08_detection_train", "references/detection/train.py", "explicit_replacement",
  "pytorch/vision references/detection/train.py (Faster/Mask R-CNN)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
      "torchvision nms/roi_align have no NPU kernel; torchvision_npu registers them (else CPU fallback, unconfirmed for torchvision ops)"),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="device (Use npu or cpu Default: npu)")',
      "default device string"),
    C("scaler = torch.cuda.amp.GradScaler() if args.amp else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if args.amp else None", AMP_NOTE),
])

# ---------------------------------------------------------------------------------------------
E("p128_09_detection_engine", "references/detection/engine.py", "explicit_replacement",
  "pytorch/vision references/detection/engine.py", [
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=scaler is not None):", AMP_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a timing sync only; outputs are moved to CPU right after, so results are unaffected"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "timing accuracy only (guarded by the is_available check above)"),
])

# ---------------------------------------------------------------------------------------------
E("p128_10_detection_utils", "references/detection/utils.py", "explicit_replacement",
  "pytorch/vision references/detection/utils.py (SmoothedValue, MetricLogger, init_distributed_mode)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "tensor_to_device", "replace", True,
      't = torch.tensor([self.count, self.total], dtype=torch.float32, device="npu")',
      "cuda device fails; HCCL all_reduce does not list fp64 (Ascend API table), so fp32"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "only adds the 'max mem' field to the log format; must change together with the print branch below"),
    C('if torch.cuda.is_available():  # log_msg has the "max mem" field', "torch_cuda_api", "replace", False,
      'if torch.npu.is_available():  # log_msg has the "max mem" field', "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB,", "logging only; would report 0 without CUDA"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 -> ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL unavailable on NPU"),
])

# ---------------------------------------------------------------------------------------------
GATHER_NOTE = "cuda device fails; HCCL all_gather lists bf16/fp16/fp32/int8/int32/bool only (no uint8/int64)"
E("p128_11_maskrcnn_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark maskrcnn_benchmark/utils/comm.py (pickle all_gather over ByteTensor)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu").view(torch.int8)', GATHER_NOTE),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.IntTensor([tensor.numel()]).to("npu")', GATHER_NOTE),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.IntTensor([0]).to("npu") for _ in range(world_size)]', GATHER_NOTE),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device="npu"))', GATHER_NOTE),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.empty((max_size - local_size,), dtype=torch.int8, device="npu")', GATHER_NOTE),
    C('data_to_communicate = torch.empty(256, dtype=torch.uint8, device="cuda")', "tensor_to_device", "replace", True,
      'data_to_communicate = torch.empty(256, dtype=torch.uint8, device="npu")',
      "cuda device fails; uint8 broadcast is supported by HCCL"),
    C('tensor = torch.ByteTensor(storage).to(device="cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to(device="npu")', "cuda device fails"),
])

# ---------------------------------------------------------------------------------------------
E("p128_12_maskrcnn_train_net", "tools/train_net.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark tools/train_net.py (apex amp, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=amp_opt_level, combine_grad=True)",
      APEX_AMP_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()  # TODO check if it helps",
      "silent no-op without CUDA; memory housekeeping only"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "fails without CUDA"),
    C('backend="nccl", init_method="env://"', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://"', "NCCL unavailable on NPU"),
])

# ---------------------------------------------------------------------------------------------
E("p128_13_maskrcnn_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark maskrcnn_benchmark/config/defaults.py (yacs defaults)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "default device for torch.device(cfg.MODEL.DEVICE) in train_net/inference"),
])

# ---------------------------------------------------------------------------------------------
EXT_NOTE = ("maskrcnn_benchmark._C is an nvcc-built extension; on an NPU host only the CPU kernels build and they "
            "would be handed npu tensors")
E("p128_14_maskrcnn_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "kernel_rewrite",
  "facebookresearch/maskrcnn-benchmark maskrcnn_benchmark/layers/roi_align.py + nms.py (_C CUDA kernels)", [
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", "replace", True, "import torch_npu", EXT_NOTE),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", "replace", True,
      "output = torch_npu.npu_roi_align(input, roi, spatial_scale, output_size[0], output_size[1], sampling_ratio, 0)",
      EXT_NOTE + "; torch_npu.npu_roi_align is the NPU kernel (roi layout assumed (K,5), unverified)"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", "replace", True,
      "grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, [bs, ch, h, w], output_size[1], output_size[0], spatial_scale, sampling_ratio)",
      EXT_NOTE + "; the CPU build has no roi_align backward at all"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", "replace", True,
      "nms = amp.float_function(torchvision.ops.nms)", EXT_NOTE + "; use torchvision(_npu) nms"),
])

# ---------------------------------------------------------------------------------------------
E("p128_15_maskrcnn_setup", "setup.py", "kernel_rewrite",
  "facebookresearch/maskrcnn-benchmark setup.py (CppExtension/CUDAExtension switch)", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "replace", False,
      "if torch.cuda.is_available() and CUDA_HOME is not None:",
      "without CUDA this silently builds the CPU-only _C (fails only when FORCE_CUDA=1); NPU kernels come from torch_npu in roi_align.py"),
])

# ---------------------------------------------------------------------------------------------
E("p128_16_maskrcnn_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "facebookresearch/maskrcnn-benchmark docker/Dockerfile (nvidia/cuda base, apex cuda_ext, FORCE_CUDA)", [
    C('ARG CUDA="11.3.1"', "torch_cuda_api", "removal", False, None, "only feeds the nvidia/cuda base tag"),
    C('ARG CUDNN="8"', "torch_cuda_api", "removal", False, None, "only feeds the nvidia/cuda base tag"),
    C("FROM nvidia/cuda:", "torch_cuda_api", "replace", True, "FROM ascendai/cann:8.0.0-910b-ubuntu20.04-py3.8",
      "CUDA base image has no CANN toolkit / driver libraries for torch_npu"),
    C("RUN pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113", "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 \\", "+cu113 wheels; torch_npu pairs with the plain/CPU torch build of the same version"),
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; x86 uses the cpu index for torch_npu"),
    C('RUN python -c "import torch, torchvision; print(', "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12", "torch_npu wheel pinned to the torch version, installed right after the torch/torchvision layer"),
    C("RUN git clone https://github.com/NVIDIA/apex.git", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex.git \\", "NVIDIA apex amp/fused kernels are CUDA-only; Ascend apex is the NPU patch of it"),
    C("&& git checkout 22.04-dev", "custom_cuda_extension", "removal", False, None,
      "Ascend apex build script pins its own upstream commit"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension", "replace", True,
      "&& bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc; build fails"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", True, None,
      "forces CUDAExtension in maskrcnn setup.py -> nvcc build fails"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "custom_cuda_extension", "removal", False, None, "ignored without nvcc"),
    C('ARG FORCE_CUDA="1"', "custom_cuda_extension", "removal", True, None,
      "same as ENV FORCE_CUDA for the RUN below"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "nvidia-container-runtime knob; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "nvidia-container-runtime knob, meaningless on Ascend"),
])

# ---------------------------------------------------------------------------------------------
E("p128_17_crnn_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a CRNN / text-recognition repo (cu102 wheels, warp-ctc, nvidia-ml-py)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu102", "torch_cuda_api", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; torch_npu pairs with the cpu build on x86"),
    C("torch==1.8.1+cu102", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu102 build; torch_npu needs the exact matching plain torch version"),
    C("torchvision==0.9.1+cu102", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "+cu102 build and must match the new torch"),
    C("=lmdb==1.2.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel pinned to torch 2.1.0 (line position is irrelevant to pip)"),
    C("git+https://github.com/SeanNaren/warp-ctc.git", "custom_cuda_extension", "removal", True, None,
      "warp-ctc pytorch binding compiles against CUDA; pip install -r fails; torch.nn.CTCLoss replaces it"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
      "installs, but NVML is absent on an NPU host; only used by a monitoring tool"),
    C("=gpustat", "torch_cuda_api", "removal", False, None, "nvidia-smi/NVML based monitoring tool"),
])

# ---------------------------------------------------------------------------------------------
WARPCTC_NOTE = ("warp-ctc is CUDA-built; torch.nn.CTCLoss expects log-probabilities and averages by default, "
                "so the call sites change with it")
E("p128_18_crnn_train", "crnn/train.py", "explicit_replacement",
  "meijieru/crnn.pytorch train.py (warp-ctc, --cuda flag, DataParallel, Variable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True,
      "from torch.nn import CTCLoss", "warp-ctc cannot be built without CUDA"),
    C("criterion = CTCLoss()", "custom_cuda_extension", "replace", True,
      "criterion = CTCLoss(reduction='sum', zero_infinity=True)", WARPCTC_NOTE),
    C("crnn.load_state_dict(torch.load(opt.pretrained))", "device_type", "replace", False,
      "crnn.load_state_dict(torch.load(opt.pretrained, map_location='cpu'))",
      "released crnn.pth may hold CUDA tensors -> deserialisation fails without CUDA (unconfirmed)"),
    C("=crnn.cuda()", "tensor_to_device", "replace", True, "crnn.npu()", ".cuda() fails"),
    C("crnn = torch.nn.DataParallel(crnn, device_ids=range(opt.ngpu))", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU"),
    C("image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", ".cuda() fails"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", True, "criterion = criterion.npu()",
      ".cuda() fails"),
    C("=cost = criterion(preds, text, preds_size, length) / batch_size", "custom_cuda_extension", "replace", True,
      "cost = criterion(preds.log_softmax(2), text, preds_size, length) / batch_size", WARPCTC_NOTE),
    C("# warp-ctc sums over the batch", "custom_cuda_extension", "replace", True,
      "cost = criterion(preds.log_softmax(2), text, preds_size, length) / batch_size", WARPCTC_NOTE),
])

# ---------------------------------------------------------------------------------------------
DP_KEYS_NOTE = ("after dropping DataParallel the checkpoint keys no longer carry 'module.'; "
                "strict load fails, strict=False (FT) silently loads nothing")
E("p128_19_str_train", "text_recognition/train.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark train.py (module-level device, DataParallel, CTC/Attn)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently trains on CPU otherwise"),
    C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
      "model = model.to(device)", "torch.nn.DataParallel is unsupported on NPU"),
    C("model.load_state_dict(torch.load(opt.saved_model), strict=False)", "distributed_framework", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()}, strict=False)",
      DP_KEYS_NOTE),
    C("=model.load_state_dict(torch.load(opt.saved_model))", "distributed_framework", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()})",
      DP_KEYS_NOTE),
    C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", "replace", True,
      "raise NotImplementedError('--baiduCTC needs warp-ctc (CUDA only); use the default torch.nn.CTCLoss on NPU')",
      "warp-ctc cannot be installed on an NPU host; only reached with --baiduCTC"),
    C("torch.cuda.manual_seed(opt.manualSeed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(opt.manualSeed)", "no-op without CUDA; torch.manual_seed already seeds the npu generator"),
    C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "opt.num_gpu = 1  # single NPU, DataParallel unsupported",
      "returns 0 on an NPU host, which skips the multi-GPU batch scaling - what the single-device port wants anyway"),
])

# ---------------------------------------------------------------------------------------------
E("p128_20_str_utils", "text_recognition/utils.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark utils.py (label converters with a module-level device)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "encoded labels would stay on CPU while the model output is on npu (device mismatch for the Attn loss)"),
])

# ---------------------------------------------------------------------------------------------
E("p128_21_str_demo", "text_recognition/demo.py", "explicit_replacement",
  "clovaai/deep-text-recognition-benchmark demo.py (inference on a folder of crops)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently runs on CPU otherwise"),
    C("model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True,
      "model = model.to(device)", "torch.nn.DataParallel is unsupported on NPU"),
    C("model.load_state_dict(torch.load(opt.saved_model, map_location=device))", "distributed_framework", "replace", True,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(opt.saved_model, map_location=device).items()})",
      "released checkpoints were saved from DataParallel ('module.' keys); strict load fails once DP is dropped"),
    C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "opt.num_gpu = torch.npu.device_count()", "value is never used in the demo"),
])

# ---------------------------------------------------------------------------------------------
E("p128_22_seg_train", "references/segmentation/train.py", "explicit_replacement",
  "pytorch/vision references/segmentation/train.py (FCN / DeepLabV3)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast(enabled=scaler is not None):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=scaler is not None):", AMP_NOTE),
    C("scaler = torch.cuda.amp.GradScaler() if args.amp else None", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler() if args.amp else None", AMP_NOTE),
    C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", type=str, help="device (Use npu or cpu Default: npu)")',
      "default device string"),
])

# ---------------------------------------------------------------------------------------------
E("p128_23_seg_utils", "references/segmentation/utils.py", "explicit_replacement",
  "pytorch/vision references/segmentation/utils.py (ConfusionMatrix, reduce_across_processes)", [
    C("memory=torch.cuda.max_memory_allocated() / MB,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB,", "logging only; reports 0 without CUDA"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "fails without CUDA"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL unavailable on NPU"),
    C('t = torch.tensor(val, device="cuda")', "tensor_to_device", "replace", True,
      't = torch.tensor(val, device="npu")', "cuda device fails; int64 / fp32 all_reduce is supported by HCCL"),
])

# ---------------------------------------------------------------------------------------------
E("p128_24_deeplab_main", "DeepLabV3Plus/main.py", "explicit_replacement",
  "VainF/DeepLabV3Plus-Pytorch main.py (CUDA_VISIBLE_DEVICES from --gpu_id, nn.DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_id", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opts.gpu_id",
      "ignored by the Ascend runtime: --gpu_id N would silently run on device 0"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silently trains on CPU otherwise"),
    C('"model_state": model.module.state_dict(),', "distributed_framework", "replace", True,
      '"model_state": model.state_dict(),', "model is no longer wrapped once DataParallel is dropped"),
    C("=model = nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU"),
    C("model = nn.DataParallel(model)  # multi-GPU even from scratch", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU"),
])

# ---------------------------------------------------------------------------------------------
E("p128_25_deeplab_network", "DeepLabV3Plus/network/_deeplab.py", "explicit_replacement",
  "VainF/DeepLabV3Plus-Pytorch network/_deeplab.py (ASPP heads; no device code)", [])

# ---------------------------------------------------------------------------------------------
E("p128_26_seg_launch", "references/segmentation/scripts/run_deeplabv3_8gpu.sh", "explicit_replacement",
  "torchrun launcher for the torchvision segmentation reference (NCCL RoCE tuning, nvidia-smi)", [
    C('export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}', "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}',
      "ignored on Ascend; the default lists every device so it is a no-op unless the user narrows it"),
    C("NGPUS=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      "NGPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi missing: with set -o pipefail the script exits (and nproc_per_node would be 0)"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_* is ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads its own NIC selector; matters for multi-node root-info setup only (default run is 1 node)"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1", "env_var", "removal", False, None,
      "HCCL uses the NPU's own RoCE ports (hccn_tool), not host HCAs"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only knob"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "watchdog knob; torch_npu reads the HCCL_ name"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL process-group knob (0 = default)"),
    C("export PYTHONUNBUFFERED=1", "env_var", "npu_only_addition", False,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      CANN_SOURCE_NOTE + "; set_env.sh appends to possibly-unset variables, hence set +u under 'set -u'"),
    C("nvidia-smi topo -m || true", "torch_cuda_api", "replace", False, "npu-smi info -t topo || true",
      "informational; guarded by || true"),
])

# ---------------------------------------------------------------------------------------------
E("p128_27_deeplab_config", "configs/deeplabv3plus_r101_voc_8gpu.yaml", "explicit_replacement",
  "YAML experiment config of a config-driven DeepLabV3+ trainer", [
    C("DEVICE: cuda", "device_type", "replace", True, "DEVICE: npu", "consumed as torch.device(cfg.SYSTEM.DEVICE)"),
    C("BACKEND: nccl", "dist_backend", "replace", True, "BACKEND: hccl", "NCCL unavailable on NPU"),
])

# ---------------------------------------------------------------------------------------------
E("p128_28_imagenet_benchmark", "imagenet/benchmark_inference.py", "explicit_replacement",
  "torchvision classification inference benchmark (CUDA events, device props, sm_70 fp16 gate, NVML)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("name = torch.cuda.get_device_name(device_id)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(device_id)", "fails without CUDA"),
    C("props = torch.cuda.get_device_properties(device_id)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device_id)", "fails without CUDA"),
    C("props.major, props.minor, props.multi_processor_count))", "device_capability_check", "replace", False,
      "device_id, name, props.total_memory / 1024 ** 3, props.cube_core_num, props.vector_core_num))",
      "NPU properties expose only name/total_memory/L2_cache_size/cube_core_num/vector_core_num; the rest print empty"),
    C("major, _ = torch.cuda.get_device_capability(args.device_id)", "device_capability_check", "replace", True,
      "major = 7  # fp16 is native on Ascend; get_device_capability() returns None on NPU",
      "fails without CUDA; the NPU form returns None (unless TORCH_NPU_DEVICE_CAPABILITY is set), so it cannot be unpacked"),
    C("memory_format = torch.channels_last if args.channels_last else torch.contiguous_format",
      "unsupported_op_workaround", "replace", False, "memory_format = torch.contiguous_format",
      "msFmkTransplt lists channels_last as unsupported; only with --channels-last"),
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():", AMP_NOTE),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "fails without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "resolves a CUDA device index and fails without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("with torch.cuda.amp.autocast():  # timed region", "amp", "replace", True,
      "with torch.npu.amp.autocast():  # timed region", AMP_NOTE),
    C('"peak_mem_mb": torch.cuda.max_memory_allocated(device) / 2 ** 20,', "torch_cuda_api", "replace", False,
      '"peak_mem_mb": torch.npu.max_memory_allocated(device) / 2 ** 20,', "reporting only; 0 without CUDA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "script exits on an NPU host"),
    C("torch.cuda.set_device(args.device_id)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.device_id)", "fails without CUDA"),
    C('device = torch.device("cuda", args.device_id)', "device_type", "replace", True,
      'device = torch.device("npu", args.device_id)', "cuda device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM handler housekeeping; silent no-op without CUDA"),
])

# ---------------------------------------------------------------------------------------------
E("p128_29_effnet_env", "environment.yml", "explicit_replacement",
  "conda environment.yml of an EfficientNet ConvNets trainer (pytorch + nvidia channels, cudatoolkit, DALI)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA conda channel (CUDA runtime packages)"),
    C("- pytorch=1.12.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=py3.8_cpu_0",
      "torch_npu needs the exact matching torch version; cudatoolkit pulls the CUDA build"),
    C("- torchvision=0.13.1", "torch_cuda_api", "replace", True, "- torchvision=0.16.0=py38_cpu",
      "must match the new torch"),
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None, "CUDA runtime; dead weight once torch is the cpu build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu wheel pinned to torch 2.1.0"),
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "torch_cuda_api", "removal", False, None,
      "only serves the DALI CUDA wheels"),
    C("nvidia-dali-cuda110==1.20.0", "torch_cuda_api", "removal", False, None,
      "optional GPU data backend (guarded import); aarch64 NPU hosts may lack a wheel (unconfirmed)"),
    C("pynvml==11.4.1", "torch_cuda_api", "removal", False, None, "NVML monitoring only"),
])

# ---------------------------------------------------------------------------------------------
E("p128_30_cls_dist_utils", "classification/utils/dist_utils.py", "device_branch_or_abstraction",
  "shared device/distributed helper module of a multi-model classification trainer (torchrun/SLURM)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): torch.npu.set_device(_LOCAL_RANK); return torch.device("npu", _LOCAL_RANK)',
      "without an NPU branch init_device falls back to CPU"),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "npu_only_addition", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "watchdog knob for HCCL"),
    C('backend = "nccl" if args.device.type == "cuda" else "gloo"', "dist_backend", "replace", True,
      'backend = {"cuda": "nccl", "npu": "hccl"}.get(args.device.type, "gloo")',
      "npu devices would get gloo, which cannot reduce npu tensors"),
    C('if args.device.type == "cuda":', "distributed_framework", "add_branch", False,
      'if args.device.type in ("cuda", "npu"):',
      "DDP without device_ids still works for a single-device module; branch only restores output_device/bucket_cap_mb"),
    C("return torch.cuda.amp.autocast(enabled=", "amp", "replace", True,
      'return torch.autocast(device_type=args.device.type, dtype=torch.float16, enabled=getattr(args, "amp", False))',
      AMP_NOTE),
    C("return torch.cuda.amp.GradScaler(enabled=", "amp", "replace", True,
      'return (torch.npu.amp.GradScaler if args.device.type == "npu" else torch.cuda.amp.GradScaler)(enabled=getattr(args, "amp", False),',
      AMP_NOTE),
    C('if device.type != "cuda":', "torch_cuda_api", "add_branch", False,
      'if device.type not in ("cuda", "npu"):', "memory line is only logging"),
    C("alloc = torch.cuda.memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated(device) / 2 ** 20", "logging only"),
    C("reserved = torch.cuda.memory_reserved(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved(device) / 2 ** 20", "logging only"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 20", "logging only"),
])

# ---------------------------------------------------------------------------------------------
E("p128_31_convnets_dataloaders", "ConvNets/image_classification/dataloaders.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets image_classification/dataloaders.py", [
    C("mean = mean.cuda()", "tensor_to_device", "replace", True, "mean = mean.npu()", ".cuda() fails"),
    C("std = std.cuda()", "tensor_to_device", "replace", True, "std = std.npu()", ".cuda() fails"),
    C("img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", ".cuda() fails"),
    C('e = torch.zeros(tensor.size(0), num_classes, dtype=dtype, device=torch.device("cuda"))', "device_type", "replace", True,
      'e = torch.zeros(tensor.size(0), num_classes, dtype=dtype, device=tensor.device)', "cuda device"),
    C("mean = torch.tensor([0.485 * 255", "tensor_to_device", "replace", True,
      "mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1, 3, 1, 1)", ".cuda() fails"),
    C("std = torch.tensor([0.229 * 255", "tensor_to_device", "replace", True,
      "std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1, 3, 1, 1)", ".cuda() fails"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "stream = torch.npu.Stream()",
      "CUDA stream cannot be created"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(stream):",
      "CUDA stream API"),
    C("next_input = next_input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_input = next_input.npu(non_blocking=True)", ".cuda() fails"),
    C("next_target = next_target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "next_target = next_target.npu(non_blocking=True)", ".cuda() fails"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(stream)", "CUDA stream API"),
    C(".contiguous(memory_format=memory_format).cuda().normal_(0, 1.0)", "tensor_to_device", "replace", True,
      "torch.randn(batch_size, num_channels, height, width).contiguous(memory_format=memory_format).npu().normal_(0, 1.0)",
      ".cuda() fails (synthetic backend)"),
    C("input_target = torch.empty(batch_size, num_classes).cuda()", "tensor_to_device", "replace", True,
      "input_target = torch.empty(batch_size, num_classes).npu()", ".cuda() fails"),
    C("input_target = input_target.cuda()", "tensor_to_device", "replace", True, "input_target = input_target.npu()",
      ".cuda() fails"),
])
