"""Labels for probe217 (crowd counting / class-agnostic counting, CUDA -> Ascend NPU).

Judgement rules used throughout (see README "How the labels were chosen"):
  * each line is judged as if every *other* labelled line had already been ported;
  * required=True  -> the unchanged line raises, computes a wrong value, or silently does the wrong thing on an
                      NPU host with torch_npu (CUDA absent);
  * required=False -> performance only, silent no-op (seeding, cache release, memory logging), or not confirmed in
                      /work/shared/knowledge (the note then says "unconfirmed").
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_ENTRY = "entry script: registers the npu device and torch.npu (autoload only from torch_npu 2.5.1; the torch 2.1 line pinned by this port still needs it)"
T21 = "torch==2.1.0"
TV016 = "torchvision==0.16.0"
TNPU = "torch-npu==2.1.0.post17"

# ----------------------------------------------------------------------------------------------------------------
# CSRNet-pytorch
# ----------------------------------------------------------------------------------------------------------------
E("csrnet_train", "train.py", "explicit_replacement",
  "CSRNet-pytorch train.py (positional gpu arg, model.cuda(), target.type(torch.FloatTensor).cuda())", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
        "the positional GPU id is the script's only device selection; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime so the job silently lands on NPU 0"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
        "lazy CUDA seeding is a silent no-op on an NPU host; NPU RNG stays unseeded (seed is time.time() anyway)"),
      C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
        "Module.cuda() needs a CUDA device"),
      C("criterion = nn.MSELoss(size_average=False).cuda()", "tensor_to_device", "replace", False,
        "criterion = nn.MSELoss(size_average=False).npu()",
        "MSELoss has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; edited for consistency only"),
      C("checkpoint = torch.load(args.pre)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.pre, map_location='cpu')",
        "--pre is the released / GPU-trained checkpoint whose tensors were saved on cuda; deserialising them without map_location fails when CUDA is absent"),
      C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "input batch to device"),
      C("target = target.type(torch.FloatTensor).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "target = target.type(torch.FloatTensor).unsqueeze(0).npu()",
        "the .type(torch.FloatTensor) part is a CPU cast and stays; only the .cuda() moves"),
      C("=im = im.cuda()", "tensor_to_device", "replace", True, "im = im.npu()", "validation input to device"),
      C("mae += abs(output.data.sum() - target.sum().type(torch.FloatTensor).cuda())", "tensor_to_device", "replace",
        True, "mae += abs(output.data.sum() - target.sum().type(torch.FloatTensor).npu())",
        "ground-truth count moved to the device to be compared with the prediction"),
  ])

E("csrnet_val", "val.py", "explicit_replacement",
  "CSRNet-pytorch val.ipynb converted to a script (model.cuda(), torch.load of the released checkpoint)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("=model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model to device"),
      C("checkpoint = torch.load(args.ckpt)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.ckpt, map_location='cpu')",
        "evaluation normally runs the authors' GPU-saved model_best.pth.tar; cuda storages cannot be restored without CUDA"),
      C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "input to device"),
  ])

E("csrnet_make_dataset", "make_dataset.py", "device_branch_or_abstraction",
  "CSRNet / MCNN make_dataset (geometry-adaptive Gaussian density maps with scipy KDTree), fork with optional GPU k-NN", [
      C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
        "only needed once the optional --use_gpu branch is pointed at the NPU; the script works unchanged on the CPU path"),
      C("if use_gpu and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if use_gpu and torch.npu.is_available():",
        "on an NPU host the guard is False and k-NN silently falls back to scipy KDTree: same result, slower"),
      C("p = torch.from_numpy(pts.astype(np.float32)).cuda()", "tensor_to_device", "replace", False,
        "p = torch.from_numpy(pts.astype(np.float32)).npu()",
        "only reached once the guard above is ported; performance-only path (cdist/topk have NPU kernels)"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# C^3 Framework (gjy3035)
# ----------------------------------------------------------------------------------------------------------------
E("c3f_train", "train.py", "explicit_replacement",
  "C^3-Framework train.py (cfg.GPU_ID list, torch.cuda.set_device, cudnn.benchmark)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
        "silent no-op without CUDA: NPU RNG is left unseeded, runs are not reproducible"),
      C("torch.cuda.set_device(gpus[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpus[0])",
        "initialises CUDA and raises on an NPU host"),
  ])

E("c3f_cc", "models/CC.py", "explicit_replacement",
  "C^3-Framework models/CC.py CrowdCounter wrapper (DataParallel over cfg.GPU_ID)", [
      C("self.CCN = torch.nn.DataParallel(self.CCN, device_ids=gpus).cuda()", "distributed_framework", "replace", True,
        "self.CCN = self.CCN.npu()  # nn.DataParallel is unsupported on NPU; use DDP (torchrun + hccl) for multi-card",
        "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (knowledge ops TSV, msFmkTransplt docs)"),
      C("self.CCN = self.CCN.cuda()", "tensor_to_device", "replace", True, "self.CCN = self.CCN.npu()",
        "single-card path"),
      C("self.loss_mse_fn = nn.MSELoss().cuda()", "tensor_to_device", "replace", False,
        "self.loss_mse_fn = nn.MSELoss().npu()",
        "parameter-free loss module: .cuda() moves nothing and cannot fail; consistency edit"),
  ])

E("c3f_trainer", "trainer.py", "explicit_replacement",
  "C^3-Framework trainer.py (Variable(img).cuda(), validate_V1/V2/V3 for SHHA/WE/GCC)", [
      C("self.net = CrowdCounter(cfg.GPU_ID, self.net_name).cuda()", "tensor_to_device", "replace", True,
        "self.net = CrowdCounter(cfg.GPU_ID, self.net_name).npu()", "outer .cuda() on the wrapper needs CUDA"),
      C("self.net.load_state_dict(torch.load(cfg.PRE_GCC_MODEL))", "tensor_to_device", "replace", True,
        "self.net.load_state_dict(torch.load(cfg.PRE_GCC_MODEL, map_location='cpu'))",
        "the GCC-pretrained weights are distributed as GPU-saved state dicts; restoring cuda storages fails without CUDA"),
      C("latest_state = torch.load(cfg.RESUME_PATH)", "tensor_to_device", "replace", False,
        "latest_state = torch.load(cfg.RESUME_PATH, map_location='cpu')",
        "resume checkpoints written by the ported trainer hold npu tensors and load as is; only GPU-era checkpoints need map_location"),
      C("=img = Variable(img).cuda()", "tensor_to_device", "replace", True, "img = Variable(img).npu()", "train input"),
      C("=gt_map = Variable(gt_map).cuda()", "tensor_to_device", "replace", True, "gt_map = Variable(gt_map).npu()",
        "train target"),
      C("img = Variable(img, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
        "img = Variable(img, requires_grad=False).npu()", "validate_V1 input"),
      C("gt_map = Variable(gt_map, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
        "gt_map = Variable(gt_map, requires_grad=False).npu()", "validate_V1 target"),
      C("img, gt_map = img.cuda(), gt_map.cuda()", "tensor_to_device", "replace", True,
        "img, gt_map = img.npu(), gt_map.npu()", "validate_V2 (WorldExpo) inputs"),
      C("=img = img.cuda()", "tensor_to_device", "replace", True, "img = img.npu()", "validate_V3 (GCC) input"),
      C("=gt_map = gt_map.cuda()", "tensor_to_device", "replace", True, "gt_map = gt_map.npu()",
        "validate_V3 (GCC) target"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# DM-Count
# ----------------------------------------------------------------------------------------------------------------
E("dmcount_train_helper", "train_helper.py", "device_branch_or_abstraction",
  "DM-Count train_helper.py Trainer (self.device, assert self.device_count == 1, OT + TV + count losses)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host, so setup() raises 'gpu is not available'"),
      C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
        "the one device object every .to(self.device) below uses"),
      C("self.device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "self.device_count = torch.npu.device_count()",
        "returns 0 without CUDA: the assert fails and num_workers becomes 0"),
  ])

E("dmcount_train", "train.py", "explicit_replacement",
  "DM-Count train.py argparse launcher (--device sets CUDA_VISIBLE_DEVICES)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.device.strip()", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.device.strip()  # set visible npu",
        "--device is the only card selection (the trainer asserts exactly one visible device); ignored on Ascend, so the assert sees every NPU"),
  ])

E("dmcount_test", "test.py", "explicit_replacement",
  "DM-Count test.py (module-level script, torch.load(model_path, device), optional density-map dump)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.device  # set vis gpu", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.device  # set visible npu",
        "user-selected card is silently ignored on Ascend"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "used for model.to, torch.load(map_location) and inputs"),
  ])

E("dmcount_dockerfile", "Dockerfile", "explicit_replacement",
  "Dockerfile of a DM-Count training/demo fork (pytorch/pytorch CUDA base image, NVIDIA runtime env)", [
      C("FROM pytorch/pytorch:1.10.0-cuda11.3-cudnn8-runtime", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA runtime image has no CANN toolkit and is x86-only; Atlas servers are usually aarch64"),
      C("RUN pip install --no-cache-dir -r requirements.txt && \\", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
        "the CANN base image ships no torch; torch_npu 2.1.0.post17 pairs with torch 2.1.0 and CANN 8.3.RC1 (knowledge §1.2)"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "hard-coded to card 0, which is also the default device, so ignoring it changes nothing"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
        "Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES; usually passed with docker run -e, so the image default is a convenience (unconfirmed that an image ENV is honoured)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container-runtime setting, meaningless on Ascend"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# Bayesian-Crowd-Counting (fork with optional AMP)
# ----------------------------------------------------------------------------------------------------------------
E("bl_regression_trainer", "utils/regression_trainer.py", "device_branch_or_abstraction",
  "Bayesian-Crowd-Counting utils/regression_trainer.py RegTrainer (+ a fork's --amp option and empty_cache)", [
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
        "False on an NPU host -> raise Exception('gpu is not available')"),
      C('self.device = torch.device("cuda")', "device_type", "replace", True, 'self.device = torch.device("npu")',
        "device object shared by model, Post_Prob and Bay_Loss"),
      C("self.device_count = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "self.device_count = torch.npu.device_count()", "0 without CUDA: assert fails"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)", "amp", "replace", True,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp)",
        "with --amp and the autocast ported, a CUDA GradScaler disables itself (no CUDA) and fp16 gradients go unscaled"),
      C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.use_amp):",
        "CUDA autocast just disables itself without CUDA: the VGG runs in fp32, slower but correct"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; NPU cached blocks are simply not released"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# OT-loss counting fork (geomloss / KeOps)
# ----------------------------------------------------------------------------------------------------------------
E("otc_geomloss", "losses/ot_geomloss.py", "device_branch_or_abstraction",
  "DM-Count-style OT counting loss rewritten on geomloss SamplesLoss (KeOps 'online' backend when available)", [
      C("backend = 'online' if HAS_KEOPS else 'tensorized'", "unsupported_op_workaround", "replace", False,
        "backend = 'tensorized'  # KeOps generates CUDA/CPU kernels only; NPU tensors need the dense backend",
        "unconfirmed: KeOps has no NPU backend, so with pykeops installed the online Sinkhorn would be handed NPU tensors"),
  ])

E("otc_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of the same OT-loss counting fork (cu113 wheels, geomloss + pykeops)", [
      C("-f https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; harmless once the pins below change, but x86 hosts should take the CPU torch build (knowledge §1.1)"),
      C("torch==1.11.0+cu113", "torch_cuda_api", "replace", True, T21,
        "+cu113 local-version wheel: no aarch64 build and not the build torch_npu pairs with; torch_npu wheel version must equal torch"),
      C("torchvision==0.12.0+cu113", "torch_cuda_api", "replace", True, TV016, "must match torch 2.1.0"),
      C("numpy>=1.20,<1.24", "import_torch_npu", "npu_only_addition", True, TNPU,
        "torch-npu pin added with the torch stack"),
      C("pykeops==2.1.2", "custom_cuda_extension", "removal", False, None,
        "unconfirmed: KeOps JIT-compiles CUDA kernels; no NPU support, the loss uses the tensorized backend"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# P2PNet (CrowdCounting-P2PNet)
# ----------------------------------------------------------------------------------------------------------------
E("p2pnet_train", "train.py", "explicit_replacement",
  "CrowdCounting-P2PNet train.py (--gpu_id -> CUDA_VISIBLE_DEVICES, device = torch.device('cuda'))", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '{}'.format(args.gpu_id)", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '{}'.format(args.gpu_id)",
        "--gpu_id silently ignored on Ascend; training lands on NPU 0"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "single device object passed to engine.train_one_epoch / evaluate"),
  ])

E("p2pnet_run_test", "run_test.py", "explicit_replacement",
  "CrowdCounting-P2PNet run_test.py single-image demo", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ[\"CUDA_VISIBLE_DEVICES\"] = '{}'.format(args.gpu_id)", "env_var", "replace", True,
        "os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = '{}'.format(args.gpu_id)", "--gpu_id silently ignored"),
      C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
        "model and sample device"),
  ])

E("p2pnet_engine", "engine.py", "explicit_replacement",
  "CrowdCounting-P2PNet engine.py (DETR-style train_one_epoch / evaluate_crowd_no_overlap) + FPS helper", [
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize initialises CUDA and raises without it"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "device is an npu device after the port; the CUDA call rejects it / raises without CUDA"),
  ])

E("p2pnet_misc", "util/misc.py", "explicit_replacement",
  "CrowdCounting-P2PNet util/misc.py (DETR misc: SmoothedValue, all_gather, MetricLogger, init_distributed_mode, FocalLoss)", [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
        "device string, and float64 is not in the HCCL all_reduce dtype list (bf16/fp16/fp32/int32/int64/bool, ops TSV)"),
      C("tensor = torch.ByteTensor(storage).to(\"cuda\")", "tensor_to_device", "replace", True,
        "tensor = torch.ByteTensor(storage).to(\"npu\").view(torch.int8)",
        "device string; HCCL all_gather takes int8 but not uint8 (ops TSV), reinterpret the bytes"),
      C("local_size = torch.tensor([tensor.numel()], device=\"cuda\")", "device_type", "replace", True,
        "local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device=\"npu\")",
        "device string; all_gather has no int64 on NPU (ops TSV)"),
      C("size_list = [torch.tensor([0], device=\"cuda\") for _ in range(world_size)]", "device_type", "replace", True,
        "size_list = [torch.tensor([0], dtype=torch.int32, device=\"npu\") for _ in range(world_size)]",
        "same as local_size"),
      C("tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device=\"cuda\"))", "device_type", "replace",
        True, "tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device=\"npu\"))",
        "receive buffers must match the int8 send tensor"),
      C("padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device=\"cuda\")", "device_type",
        "replace", True, "padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device=\"npu\")",
        "pad with the same dtype/device"),
      C("has_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "has_cuda = torch.npu.is_available()", "False on NPU: the 'max mem' column silently disappears from the log"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 without CUDA -> ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("if inputs.is_cuda and not self.alpha.is_cuda:", "device_type", "replace", True,
        "if inputs.is_npu and not self.alpha.is_npu:",
        "False for NPU inputs, so alpha stays on the CPU and the indexing below mixes devices"),
      C("self.alpha = self.alpha.cuda()", "tensor_to_device", "replace", True, "self.alpha = self.alpha.npu()",
        "move the class weights next to the logits"),
  ])

E("p2pnet_requirements", "requirements.txt", "explicit_replacement",
  "CrowdCounting-P2PNet requirements (PyTorch 1.5 / torchvision 0.6 era)", [
      C("=torch==1.5.0", "torch_cuda_api", "replace", True, T21,
        "torch 1.5 pairs only with an EOL torch_npu 1.5 / CANN 5.x-6.0; the port moves to torch 2.1 + torch_npu"),
      C("=torchvision==0.6.0", "torch_cuda_api", "replace", True, TV016, "must match torch 2.1.0"),
      C("=tensorboardX==2.0", "import_torch_npu", "npu_only_addition", True, TNPU, "torch-npu pin"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# CounTR
# ----------------------------------------------------------------------------------------------------------------
E("countr_finetune", "FSC_finetune_cross.py", "explicit_replacement",
  "CounTR FSC_finetune_cross.py (MAE-style finetune: --device cuda, .half() inputs under torch.cuda.amp.autocast, wandb)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("os.environ[\"CUDA_LAUNCH_BLOCKING\"] = '1'", "env_var", "replace", False,
        "os.environ[\"ASCEND_LAUNCH_BLOCKING\"] = '1'",
        "debug leftover: forces synchronous launches; ignored on Ascend, the NPU equivalent is ASCEND_LAUNCH_BLOCKING (or drop it)"),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "torch.device(args.device) is used for everything"),
      C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
        "inputs are cast with .half(); with CUDA autocast silently disabled the fp32 model gets fp16 inputs and the first conv raises a dtype mismatch"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA (called every iteration)"),
  ])

E("countr_misc", "util/misc.py", "explicit_replacement",
  "CounTR util/misc.py (MAE/DeiT misc: NativeScalerWithGradNormCount, init_distributed_mode, all_reduce_mean)", [
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace",
        True, "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
        "device string; HCCL all_reduce has no float64 (ops TSV)"),
      C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "log format only: drops the 'max mem' column"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
        "log only"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
        "memory=torch.npu.max_memory_allocated() / MB))", "log only"),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError under SLURM without CUDA"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", "HCCL on Ascend"),
      C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
        "self._scaler = torch.npu.amp.GradScaler()",
        "a CUDA GradScaler disables itself without CUDA; the finetune loop runs fp16 autocast, so gradients would go unscaled"),
      C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True, "x_reduce = torch.tensor(x).npu()",
        "called every iteration via all_reduce_mean when world_size > 1"),
  ])

E("countr_test", "FSC_test_cross.py", "explicit_replacement",
  "CounTR FSC_test_cross.py (sliding-window inference over 384-wide crops, test-time normalisation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
        "parser.add_argument('--device', default='npu',", "default device"),
      C("torch.cuda.synchronize(device=0)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device=0)",
        "raises without CUDA"),
  ])

E("countr_env", "environment.yml", "explicit_replacement",
  "conda environment.yml for a CounTR setup (cudatoolkit + pip cu113 wheels, timm 0.4.9)", [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA package channel, unused after the port"),
      C("cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
        "dead weight on Ascend (CANN is installed on the host / base image)"),
      C("--find-links https://download.pytorch.org/whl/cu113/torch_stable.html", "torch_cuda_api", "replace", False,
        "- --extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
      C("torch==1.10.0+cu113", "torch_cuda_api", "replace", True, "- " + T21,
        "+cu113 wheel; torch_npu needs the plain/CPU torch build of the same version"),
      C("torchvision==0.11.1+cu113", "torch_cuda_api", "replace", True, "- " + TV016, "must match torch"),
      C("timm==0.4.9", "import_torch_npu", "npu_only_addition", True, "- " + TNPU, "torch-npu pin"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# LOCA
# ----------------------------------------------------------------------------------------------------------------
E("loca_train", "train.py", "explicit_replacement",
  "LOCA train.py (SLURM/torchrun env parsing, torch.device(gpu), DDP, NCCL)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("gpu = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpu = rank % torch.npu.device_count()", "ZeroDivisionError under SLURM without CUDA"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C("device = torch.device(gpu)", "device_type", "replace", True, "device = torch.device('npu', gpu)",
        "a bare int index means a CUDA device here; the model and every batch would be sent to cuda:<gpu>"),
      C("backend='nccl', init_method='env://',", "dist_backend", "replace", True,
        "backend='hccl', init_method='env://',", "HCCL on Ascend"),
      C("checkpoint = torch.load(os.path.join(args.model_path, f'{args.model_name}.pt'))", "tensor_to_device",
        "replace", False,
        "checkpoint = torch.load(os.path.join(args.model_path, f'{args.model_name}.pt'), map_location='cpu')",
        "resume of a checkpoint written by this (ported) script holds npu tensors and loads fine; map_location only for GPU-era files"),
  ])

E("loca_evaluate", "evaluate.py", "explicit_replacement",
  "LOCA evaluate.py (distributed evaluation of the released model on FSC147 val/test)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("gpu = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpu = rank % torch.npu.device_count()", "ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C("device = torch.device(gpu)", "device_type", "replace", True, "device = torch.device('npu', gpu)",
        "int index is interpreted as a CUDA device"),
      C("backend='nccl', init_method='env://',", "dist_backend", "replace", True,
        "backend='hccl', init_method='env://',", "HCCL on Ascend"),
      C("state_dict = torch.load(os.path.join(args.model_path, f'{args.model_name}.pt'))['model']",
        "tensor_to_device", "replace", True,
        "state_dict = torch.load(os.path.join(args.model_path, f'{args.model_name}.pt'), map_location='cpu')['model']",
        "evaluates the authors' released loca_few_shot.pt, saved from GPU DDP training: cuda storages need map_location"),
  ])

E("loca_ope", "models/ope.py", "explicit_replacement",
  "LOCA models/ope.py object prototype extraction (torchvision roi_align on backbone features)", [
      C("from torchvision.ops import roi_align", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # registers NPU kernels for torchvision.ops (roi_align, nms, deform_conv2d)",
        "torchvision::roi_align has no NPU kernel; torch_npu's PrivateUse1 fallback runs it (and its backward) on the CPU, so it works but round-trips every step; torchvision_npu provides roi_align (knowledge §6, §3.8)"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# SAFECount
# ----------------------------------------------------------------------------------------------------------------
E("safecount_train_val", "tools/train_val.py", "explicit_replacement",
  "SAFECount tools/train_val.py (EasyDict yaml config, ModelHelper, DDP, dump/merge evaluation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_ENTRY),
      C("torch.cuda.device_count()))", "torch_cuda_api", "replace", False, "torch.npu.device_count()))",
        "log line only (prints 0)"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
        "needs the ModelHelper.npu() override added in models/model_helper.py"),
      C("mem=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
        "mem=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,", "log only"),
      C("total_num = torch.Tensor([losses.count]).cuda()", "tensor_to_device", "replace", True,
        "total_num = torch.Tensor([losses.count]).npu()", "all_reduce input must live on the HCCL device"),
      C("loss_sum = torch.Tensor([losses.avg * losses.count]).cuda()", "tensor_to_device", "replace", True,
        "loss_sum = torch.Tensor([losses.avg * losses.count]).npu()", "same"),
  ])

E("safecount_dist_helper", "utils/dist_helper.py", "explicit_replacement",
  "SAFECount / UniAD utils/dist_helper.py setup_distributed (slurm + torch.distributed.launch)", [
      C('def setup_distributed(backend="nccl", port=None):', "dist_backend", "replace", True,
        'def setup_distributed(backend="hccl", port=None):', "callers never pass backend, so the default is what runs"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()", "0 without CUDA -> ZeroDivisionError in rank % num_gpus"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "raises without CUDA"),
  ])

E("safecount_misc_helper", "utils/misc_helper.py", "explicit_replacement",
  "SAFECount / UniAD utils/misc_helper.py (load_state with storage.cuda() map_location, set_random_seed, to_device)", [
      C("return storage.cuda()", "tensor_to_device", "replace", True,
        "return storage  # keep on CPU; load_state_dict copies into the NPU params",
        "map_location callback restores every checkpoint tensor onto CUDA: fails on an NPU host"),
      C("torch.cuda.manual_seed(seed ** 3)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed ** 3)",
        "silent no-op: NPU RNG unseeded, the reproduce=True mode is no longer reproducible"),
      C('def to_device(input, device="cuda", dtype=None):', "device_type", "replace", False,
        'def to_device(input, device="npu", dtype=None):',
        "every in-repo caller (ModelHelper.forward) passes device explicitly; the default only bites external callers"),
  ])

E("safecount_model_helper", "models/model_helper.py", "device_branch_or_abstraction",
  "SAFECount / UniAD models/model_helper.py ModelHelper (cuda()/cpu() overrides that record self.device)", [
      C("def cuda(self):", "tensor_to_device", "add_branch", True,
        "def npu(self):  self.device = torch.device(\"npu\"); return super(ModelHelper, self).npu()",
        "forward() reads self.device, which only cuda()/cpu() set; calling the inherited Module.npu() leaves it unset (AttributeError)"),
  ])

E("safecount_train_sh", "experiments/FSC147/train_torch.sh", "explicit_replacement",
  "SAFECount experiments/*/train_torch.sh launcher (CUDA_VISIBLE_DEVICES + torch.distributed.launch)", [
      C("export PYTHONPATH=$ROOT:$PYTHONPATH", "import_torch_npu", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (libascendcl/libhccl paths) must be loaded before torch_npu is imported, unless the image/profile already does it"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only workaround for a GPU box; no HCCL counterpart needed"),
      C("CUDA_VISIBLE_DEVICES=$GPU_IDS \\", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES=$GPU_IDS \\",
        "the card list passed as $2 would be ignored; ranks would map onto NPUs 0..N-1 regardless"),
  ])

# ----------------------------------------------------------------------------------------------------------------
# CountGD (GroundingDINO multi-scale deformable attention)
# ----------------------------------------------------------------------------------------------------------------
E("countgd_msda", "models/GroundingDINO/ms_deform_attn.py", "device_branch_or_abstraction",
  "CountGD / GroundingDINO ms_deform_attn.py (MSDA CUDA op with pure-PyTorch grid_sample fallback)", [
      C("if torch.cuda.is_available() and value.is_cuda and MSDA is not None:", "npu_fused_op", "add_branch", False,
        "elif value.device.type == 'npu' and mx_driving is not None: output = mx_driving.multi_scale_deformable_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)",
        "NPU tensors already take the grid_sample fallback (correct, slower); an NPU kernel exists only outside torch_npu (mx_driving/DrivingSDK) - unconfirmed"),
  ])

E("countgd_ops_setup", "models/GroundingDINO/ops/setup.py", "kernel_rewrite",
  "CountGD / Deformable-DETR models/GroundingDINO/ops/setup.py (CUDAExtension MultiScaleDeformableAttention)", [
      C("raise NotImplementedError('Cuda is not availabel')", "custom_cuda_extension", "replace", True,
        "return []  # no nvcc on Ascend: build nothing, ms_deform_attn.py falls back to the PyTorch path",
        "on an NPU host torch.cuda.is_available() is False, so setup.py aborts the install step"),
  ])
