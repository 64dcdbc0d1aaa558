"""Labels for probe91 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = ("the port calls torch.npu.* / uses 'npu' devices and hccl, which need torch_npu loaded "
               "(explicit import recommended even with autoload)")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported (✘) in Ascend's PyTorch API list; replace with "
           "single-device or DistributedDataParallel")
MANUAL_SEED_NOTE = "torch.cuda.manual_seed_all is queued lazily and harmless without CUDA; cosmetic rename"
EMPTY_CACHE_NOTE = "torch.cuda.empty_cache() is a silent no-op without CUDA; the NPU cache is never released"
MEMSTAT_NOTE = ("torch.cuda memory statistics return 0 when CUDA was never initialised: the log is wrong, "
                "nothing fails")
FUSED_SGD_NOTE = "performance only: torch_npu.optim.NpuFusedSGD (msFmkTransplt performance advice)"
MMCV_DDP_NOTE = ("unconfirmed: mmcv 1.x MM(Distributed)DataParallel scatters inputs through CUDA streams; "
                 "mmcv builds with NPU support ship NPUDistributedDataParallel (not in the knowledge base)")
TRANSFER_NOTE = ("works unchanged once transfer_to_npu is imported (torch.cuda.* -> torch.npu, "
                 "Tensor/Module.cuda -> npu); an explicit port would rewrite it")

# --------------------------------------------------------------------------------------------- ST-GCN

E("stgcn_processor_io", "processor/io.py", "explicit_replacement",
  "yysijie/st-gcn processor/io.py (torchlight IO, use_gpu / device list, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.dev = "cuda:0"', "device_type", R, True, 'self.dev = "npu:0"',
      "hard-coded CUDA device string; every .to(self.dev) in the processors follows it"),
    C("self.model = nn.DataParallel(self.model, device_ids=self.gpus)", "distributed_framework", R, True,
      "# multi-card: launch with torchrun and wrap in DistributedDataParallel(device_ids=[local_rank])", DP_NOTE),
])

E("stgcn_torchlight_gpu", "torchlight/torchlight/gpu.py", "explicit_replacement",
  "yysijie/st-gcn torchlight/gpu.py (visible_gpu / occupy_gpu helpers, plus nvidia-smi and memory helpers)", [
    C("os.environ['CUDA_VISIBLE_DEVICES']", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = ','.join(list(map(str, gpus)))",
      "the NPU runtime selects devices with ASCEND_RT_VISIBLE_DEVICES; with CUDA_VISIBLE_DEVICES ignored the "
      "re-indexed ids returned below point at the wrong cards"),
    C("=torch.zeros(1).cuda()", "tensor_to_device", R, True, "torch.zeros(1).npu()",
      "Tensor.cuda() needs a CUDA build"),
    C("=torch.zeros(1).cuda(g)", "tensor_to_device", R, True, "torch.zeros(1).npu(g)",
      "Tensor.cuda(int) needs a CUDA build"),
    C("['nvidia-smi', '--query-gpu=index,memory.free',", "torch_cuda_api", R, False,
      "free = [torch.npu.mem_get_info(i)[0] // 2**20 for i in range(torch.npu.device_count())]",
      "nvidia-smi is absent on an NPU host; the OSError branch returns [] (sweeps then start nothing) - "
      "npu-smi or torch.npu.mem_get_info instead"),
    C("allocated = torch.cuda.memory_allocated(device)", "torch_cuda_api", R, False,
      "allocated = torch.npu.memory_allocated(device) / 1024 ** 2", MEMSTAT_NOTE),
    C("reserved = torch.cuda.memory_reserved(device)", "torch_cuda_api", R, False,
      "reserved = torch.npu.memory_reserved(device) / 1024 ** 2", MEMSTAT_NOTE),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_allocated(device) / 1024 ** 2", MEMSTAT_NOTE),
])

E("stgcn_recognition", "processor/recognition.py", "explicit_replacement",
  "yysijie/st-gcn processor/recognition.py (REC_Processor train/test loops on self.dev)", [
    C("torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", R, False,
      "torch.npu.max_memory_allocated() / 1024 ** 2))", MEMSTAT_NOTE),
    C("self.optimizer = optim.SGD(", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedSGD(", FUSED_SGD_NOTE),
])

# --------------------------------------------------------------------------------------------- MS-G3D

E("msg3d_main", "main.py", "explicit_replacement",
  "kenziyuliu/MS-G3D main.py (apex amp --half, forward-batch-size accumulation, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=import apex", "amp", X, True, None,
      "NVIDIA apex (built with its CUDA extensions) is not installable on the NPU host; Ascend ships a patched "
      "apex, but the natural port moves --half to torch.npu.amp"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      MANUAL_SEED_NOTE),
    C("self.model, self.optimizer = apex.amp.initialize(", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "apex.amp.initialize patches CUDA tensor types and expects CUDA params; replace with native NPU AMP"),
    C("self.model = nn.DataParallel(", "distributed_framework", R, True,
      "# single card, or DistributedDataParallel under torchrun", DP_NOTE),
    C("self.model = Model(**self.arg.model_args).cuda(output_device)", "tensor_to_device", R, True,
      "self.model = Model(**self.arg.model_args).npu(output_device)", "Module.cuda(int) needs a CUDA build"),
    C("self.loss = nn.CrossEntropyLoss().cuda(output_device)", "tensor_to_device", R, True,
      "self.loss = nn.CrossEntropyLoss().npu(output_device)", "Module.cuda(int) needs a CUDA build"),
    C("v.cuda(output_device)] for k, v in weights.items()])", "tensor_to_device", R, True,
      "v.npu(output_device)] for k, v in weights.items()])", "Tensor.cuda(int) on every loaded weight"),
    C("self.optimizer = optim.SGD(params", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedSGD(params, lr=self.arg.base_lr, momentum=0.9,",
      FUSED_SGD_NOTE),
    C("self.optimizer.load_state_dict(torch.load(self.arg.checkpoint)['optimizer_states'])", "device_type", R,
      True, "self.optimizer.load_state_dict(torch.load(self.arg.checkpoint, map_location='cpu')['optimizer_states'])",
      "the training checkpoint holds SGD momentum buffers saved from CUDA tensors; torch.load without "
      "map_location tries to restore them on CUDA and fails on an NPU host"),
    C("scheduler_states = torch.load(self.arg.checkpoint)['lr_scheduler_states']", "device_type", R, True,
      "scheduler_states = torch.load(self.arg.checkpoint, map_location='cpu')['lr_scheduler_states']",
      "same checkpoint file: unpickling restores its CUDA tensors even though only the scheduler part is used"),
    C("data = data.float().cuda(self.output_device)", "tensor_to_device", R, True,
      "data = data.float().npu(self.output_device)", "training batch moved with .cuda(int)"),
    C("label = label.long().cuda(self.output_device)", "tensor_to_device", R, True,
      "label = label.long().npu(self.output_device)", "training labels moved with .cuda(int)"),
    C("output = self.model(batch_data)", "amp", A, False,
      "with torch.npu.amp.autocast(enabled=self.arg.half):\n    output = self.model(batch_data)",
      "only needed to keep --half meaningful once apex is gone (apex O1 patched the casts globally)"),
    C("with apex.amp.scale_loss(loss, self.optimizer) as scaled_loss:", "amp", R, True,
      "self.scaler.scale(loss).backward()",
      "apex loss scaling; the ported path uses the NPU GradScaler (and scaler.step/update at optimizer.step)"),
    C("self.model = self.model.cuda(self.output_device)", "tensor_to_device", R, True,
      "self.model = self.model.npu(self.output_device)", "Module.cuda(int) at the start of eval"),
    C("inputs = data.float().cuda(self.output_device)", "tensor_to_device", R, True,
      "inputs = data.float().npu(self.output_device)", "eval batch moved with .cuda(int)"),
    C("label = label.long().cuda(self.output_device, non_blocking=True)", "tensor_to_device", R, True,
      "label = label.long().npu(self.output_device, non_blocking=True)", "eval labels moved with .cuda(int)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("msg3d_model", "model/msg3d.py", "explicit_replacement",
  "kenziyuliu/MS-G3D model/msg3d.py (G3D unfold windows, adjacency moved with x.get_device())", [
    C("A = self.A_scales.to(x.dtype).to(x.get_device())", "device_type", R, True,
      "A = self.A_scales.to(dtype=x.dtype, device=x.device)",
      "x.get_device() returns a bare ordinal and .to(int) is read as a CUDA ordinal (msFmkTransplt and "
      "transfer_to_npu both rewrite int device arguments of .to)"),
    C("A = A + self.A_res.to(x.dtype).to(x.get_device())", "device_type", R, True,
      "A = A + self.A_res.to(dtype=x.dtype, device=x.device)", "same int-ordinal .to() as the line above"),
])

# --------------------------------------------------------------------------------------------- CTR-GCN

E("ctrgcn_main", "main.py", "explicit_replacement",
  "Uason-Chen/CTR-GCN main.py (2s-AGCN lineage processor, Variable(...).cuda, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      MANUAL_SEED_NOTE + " (also runs as worker_init_fn)"),
    C("self.model = self.model.cuda(self.output_device)", "tensor_to_device", R, True,
      "self.model = self.model.npu(self.output_device)", "Module.cuda(int) needs a CUDA build"),
    C("self.model = nn.DataParallel(", "distributed_framework", R, True,
      "# single card, or DistributedDataParallel under torchrun", DP_NOTE),
    C("self.loss = nn.CrossEntropyLoss().cuda(output_device)", "tensor_to_device", R, True,
      "self.loss = nn.CrossEntropyLoss().npu(output_device)", "Module.cuda(int) needs a CUDA build"),
    C("[[k.split('module.')[-1], v.cuda(output_device)]", "tensor_to_device", R, True,
      "weights = OrderedDict([[k.split('module.')[-1], v.npu(output_device)] for k, v in weights.items()])",
      "Tensor.cuda(int) on every loaded weight"),
    C("self.optimizer = optim.SGD(", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedSGD(", FUSED_SGD_NOTE),
    C("data = data.float().cuda(self.output_device)", "tensor_to_device", R, True,
      "data = data.float().npu(self.output_device)", "training batch moved with .cuda(int)"),
    C("label = label.cuda(self.output_device)", "tensor_to_device", R, True,
      "label = label.npu(self.output_device)", "training labels moved with .cuda(int)"),
    C("data = Variable(data.float().cuda(self.output_device), requires_grad=False)", "tensor_to_device", R, True,
      "data = Variable(data.float().npu(self.output_device), requires_grad=False)", "eval batch"),
    C("label = Variable(label.long().cuda(self.output_device), requires_grad=False)", "tensor_to_device", R, True,
      "label = Variable(label.long().npu(self.output_device), requires_grad=False)", "eval labels"),
    C("['module.'+k, v.cuda(self.output_device)]", "tensor_to_device", R, True,
      "weights = OrderedDict([['module.'+k, v.npu(self.output_device)] for k, v in weights.items()])",
      "reloading the best weights for the final test (multi-device path)"),
])

E("ctrgcn_model", "model/ctrgcn.py", "explicit_replacement",
  "Uason-Chen/CTR-GCN model/ctrgcn.py (CTRGC channel-wise topology refinement, static-A path)", [
    C("A = self.A.cuda(x.get_device())", "tensor_to_device", R, True, "A = self.A.to(x.device)",
      "Tensor.cuda(int) on the non-learnable adjacency; reached with model_args adaptive=False"),
])

# --------------------------------------------------------------------------------------------- Shift-GCN

E("shiftgcn_model", "model/shift_gcn.py", "explicit_replacement",
  "kchengiva/Shift-GCN model/shift_gcn.py (spatial shift via index_select, CUDA temporal shift op)", [
    C('sys.path.append("./model/Temporal_shift/")', "custom_cuda_extension", X, False, None,
      "only there to import the compiled CUDA package; dropped with it"),
    C("from cuda.shift import Shift", "custom_cuda_extension", R, True,
      "from model.temporal_shift_torch import Shift  # pure-PyTorch re-implementation",
      "the Shift module wraps the nvcc-built shift_cuda_linear_cpp extension"),
    C("self.Linear_weight = nn.Parameter(torch.zeros(in_channels, out_channels, requires_grad=True, device='cuda')",
      "device_type", R, True,
      "self.Linear_weight = nn.Parameter(torch.zeros(in_channels, out_channels), requires_grad=True)",
      "parameters allocated directly on CUDA at construction; fails before the model is ever moved"),
    C("self.Linear_bias = nn.Parameter(torch.zeros(1, 1, out_channels, requires_grad=True, device='cuda')",
      "device_type", R, True, "self.Linear_bias = nn.Parameter(torch.zeros(1, 1, out_channels), requires_grad=True)",
      "device='cuda' parameter"),
    C("self.Feature_Mask = nn.Parameter(torch.ones(1, 25, in_channels, requires_grad=True, device='cuda')",
      "device_type", R, True, "self.Feature_Mask = nn.Parameter(torch.ones(1, 25, in_channels), requires_grad=True)",
      "device='cuda' parameter"),
])

E("shiftgcn_shift_op", "model/Temporal_shift/cuda/shift.py", "explicit_replacement",
  "kchengiva/Shift-GCN Temporal_shift/cuda/shift.py (autograd Function over the shift_cuda_linear_cpp extension)", [
    C("=import shift_cuda_linear_cpp", "custom_cuda_extension", X, True, None,
      "nvcc-built extension; no NPU build - rewrite the linear-interpolated shift with gather/lerp in PyTorch "
      "(or an Ascend C kernel)"),
    C("if not input.is_cuda:", "device_type", R, True, "if input.device.type not in ('npu', 'cpu'):",
      "NPU tensors are rejected by the CUDA-only guard"),
    C("output = shift_cuda_linear_cpp.forward(", "custom_cuda_extension", R, True,
      "output = _shift_forward_torch(input.contiguous(), xpos, ypos, stride)", "extension call site"),
    C("grad_input, grad_xpos, grad_ypos = shift_cuda_linear_cpp.backward(", "custom_cuda_extension", R, True,
      "grad_input, grad_xpos, grad_ypos = _shift_backward_torch(", "extension call site"),
    C("self.xpos = Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)", "device_type", R, True,
      "self.xpos = Parameter(torch.zeros(channel) * 1.5)", "device='cuda' parameter"),
    C("self.ypos = Parameter(torch.zeros(channel, requires_grad=True, device='cuda') * 1.5)", "device_type", R, True,
      "self.ypos = Parameter(torch.zeros(channel) * 1.5)", "device='cuda' parameter"),
    C("x = torch.randn(2, 8, 16, 25).cuda()", "tensor_to_device", R, False, "x = torch.randn(2, 8, 16, 25).npu()",
      "self-test under __main__ only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "self-test under __main__ only"),
])

E("shiftgcn_setup", "model/Temporal_shift/cuda/setup.py", "explicit_replacement",
  "kchengiva/Shift-GCN Temporal_shift/cuda/setup.py (CUDAExtension build of the temporal shift kernel)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R,
      True, "from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension needs nvcc; an Ascend C kernel would be bound with torch_npu's NpuExtension"),
    C("out = subprocess.check_output([os.path.join(CUDA_HOME, 'bin', 'nvcc'), '-V'])", "custom_cuda_extension", X,
      False, None, "nvcc version banner only"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", R, True, "if os.environ.get('ASCEND_TOOLKIT_HOME') is None:",
      "exits the build on any host without a CUDA toolkit"),
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST'", "env_var", X, False, None,
      "nvcc arch list; meaningless without nvcc"),
    C("'nvcc': [", "custom_cuda_extension", X, False, None, "nvcc flags go with the CUDA build"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(",
      "the extension type that invokes nvcc"),
    C("os.path.join(HERE, 'shift_cuda_kernel.cu'),", "custom_cuda_extension", R, True,
      "os.path.join(HERE, 'shift_npu_kernel.cpp'),", ".cu source has no NPU compiler"),
])

# --------------------------------------------------------------------------------------------- PYSKL

E("pyskl_tools_train", "tools/train.py", "explicit_replacement",
  "kennymckormick/pyskl tools/train.py (mmcv init_dist, memcached, torch.distributed.launch entry)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("cfg.dist_params = dict(backend='nccl')", "dist_backend", R, True, "cfg.dist_params = dict(backend='hccl')",
      "NCCL is not available on Ascend; the default reaches dist.init_process_group through mmcv"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", R, False,
      "init_dist(args.launcher, **cfg.dist_params)  # needs an mmcv build with NPU support",
      "unconfirmed: mmcv 1.x's pytorch launcher calls torch.cuda.set_device(rank % torch.cuda.device_count()); "
      "later mmcv releases branch to torch.npu"),
])

E("pyskl_apis_train", "pyskl/apis/train.py", "explicit_replacement",
  "kennymckormick/pyskl pyskl/apis/train.py (init_random_seed broadcast, MMDistributedDataParallel, EpochBasedRunner)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", R, True,
      "def init_random_seed(seed=None, device='npu'):",
      "the seed tensor broadcast to all ranks is created on device='cuda' (every multi-process run)"),
    C("=model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = NPUDistributedDataParallel(", MMCV_DDP_NOTE),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "Module.cuda() needs a CUDA build"),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
    C("optimizer_config = Fp16OptimizerHook(", "amp", R, False,
      "optimizer_config = Fp16OptimizerHook(  # mmcv build with NPU amp",
      "unconfirmed: mmcv's Fp16OptimizerHook uses torch.cuda.amp's GradScaler on torch>=1.6 (inactive for NPU "
      "tensors) unless the mmcv build has NPU support"),
])

E("pyskl_tools_test", "tools/test.py", "explicit_replacement",
  "kennymckormick/pyskl tools/test.py (single_gpu_test / multi_gpu_test, fuse_conv_bn, fp16 wrap)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("wrap_fp16_model(model)", "amp", R, False, "wrap_fp16_model(model)  # mmcv build with NPU amp",
      "unconfirmed: mmcv's auto_fp16 path autocasts through torch.cuda.amp"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", R, True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "MMDataParallel subclasses torch.nn.DataParallel, which Ascend marks unsupported"),
    C("=model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = NPUDistributedDataParallel(", MMCV_DDP_NOTE),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "Module.cuda() needs a CUDA build"),
    C("=device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
    C("cfg.dist_params = dict(backend='nccl')", "dist_backend", R, True, "cfg.dist_params = dict(backend='hccl')",
      "NCCL is not available on Ascend"),
    C("init_dist(args.launcher, **cfg.dist_params)", "distributed_framework", R, False,
      "init_dist(args.launcher, **cfg.dist_params)  # needs an mmcv build with NPU support",
      "unconfirmed: mmcv 1.x's pytorch launcher calls torch.cuda.set_device"),
])

E("mmaction_apis_test", "mmaction/apis/test.py", "explicit_replacement",
  "open-mmlab/mmaction2 0.x mmaction/apis/test.py (multi_gpu_test, collect_results_cpu/gpu over uint8 tensors)", [
    C("=device='cuda')", "device_type", R, True, "device='npu')",
      "tmpdir name broadcast buffer when no --tmpdir is given (pyskl tools/test.py default)"),
    C("bytearray(tmpdir.encode()), dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "bytearray(tmpdir.encode()), dtype=torch.uint8, device='npu')", "rank-0 tmpdir tensor"),
    C("bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device='npu')",
      "gpu_collect=True (the default of multi_gpu_test) pickles results into a CUDA tensor"),
    C("shape_tensor = torch.tensor(part_tensor.shape, device='cuda')", "device_type", R, True,
      "shape_tensor = torch.tensor(part_tensor.shape, device='npu')", "gpu_collect path"),
    C("part_send = torch.zeros(shape_max, dtype=torch.uint8, device='cuda')", "device_type", R, True,
      "part_send = torch.zeros(shape_max, dtype=torch.uint8, device='npu')", "gpu_collect path"),
])

E("pyskl_gcn_utils", "pyskl/models/gcns/utils/gcn.py", "explicit_replacement",
  "kennymckormick/pyskl models/gcns/utils/gcn.py (unit_gcn / unit_aagcn / CTRGC einsum graph convs)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type=x.device.type, enabled=False):",
      "disabling CUDA autocast does not disable NPU autocast: under the ported fp16 path the V x V attention "
      "matmul runs in half precision again and overflows (silently wrong logits)"),
])

E("pyskl_resnet3d", "pyskl/models/cnns/resnet3d.py", "explicit_replacement",
  "kennymckormick/pyskl models/cnns/resnet3d.py (PoseC3D ResNet3d / SlowOnly backbone on heatmap volumes)", [
    C("self.maxpool = nn.MaxPool3d(", "unsupported_op_workaround", R, False,
      "self.maxpool = nn.MaxPool3d(  # keep; verify on the target torch_npu",
      "unconfirmed: Ascend's 2.7.1 list marks torch.nn.MaxPool3d ✘ (and msFmkTransplt lists it) while "
      "F.max_pool3d is ✔ and op-plugin registers max_pool3d_with_indices"),
    C("self.pool2 = nn.MaxPool3d(kernel_size=(2, 1, 1), stride=(2, 1, 1))", "unsupported_op_workaround", R, False,
      "self.pool2 = nn.MaxPool3d(kernel_size=(2, 1, 1), stride=(2, 1, 1))  # verify on NPU",
      "same nn.MaxPool3d question as the stem pool"),
])

E("pyskl_posec3d_config", "configs/posec3d/slowonly_r50_ntu60_xsub/joint.py", "explicit_replacement",
  "kennymckormick/pyskl PoseC3D SlowOnly-R50 NTU60 X-Sub config (mmcv Config, dist_params, gpu_collect)", [
    C("fp16 = dict(loss_scale='dynamic')", "amp", R, False, "fp16 = dict(loss_scale='dynamic')  # needs NPU-aware mmcv",
      "unconfirmed: routes through mmcv's Fp16OptimizerHook (torch.cuda.amp inside)"),
    C("topk=(1, 5), gpu_collect=True)", "device_type", R, True,
      "evaluation = dict(interval=1, metrics=['top_k_accuracy', 'mean_class_accuracy'], topk=(1, 5), gpu_collect=False)",
      "gpu_collect=True makes the eval hook collect results through device='cuda' uint8 tensors (see "
      "mmaction_apis_test)"),
    C("dist_params = dict(backend='nccl')", "dist_backend", R, True, "dist_params = dict(backend='hccl')",
      "NCCL is not available on Ascend"),
])

E("pyskl_custom_2d_skeleton", "tools/data/custom_2d_skeleton.py", "explicit_replacement",
  "kennymckormick/pyskl tools/data/custom_2d_skeleton.py (distributed mmdet + mmpose keypoint extraction)", [
    C("=import torch.distributed as dist", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("init_dist('pytorch', backend='nccl')", "dist_backend", R, True, "init_dist('pytorch', backend='hccl')",
      "NCCL is not available on Ascend"),
    C("det_model = init_detector(args.det_config, args.det_ckpt, 'cuda')", "device_type", R, True,
      "det_model = init_detector(args.det_config, args.det_ckpt, 'npu')", "hard-coded CUDA device for the detector"),
    C("pose_model = init_pose_model(args.pose_config, args.pose_ckpt, 'cuda')", "device_type", R, True,
      "pose_model = init_pose_model(args.pose_config, args.pose_ckpt, 'npu')",
      "hard-coded CUDA device for the pose model"),
])

E("pyskl_heatmap_cupy", "pyskl/datasets/pipelines/heatmap_related_gpu.py", "device_branch_or_abstraction",
  "pyskl-style GeneratePoseTarget with a CuPy RawKernel fast path (RGBPoseConv3D heatmap rendering)", [
    C("self.use_cupy = _HAS_CUPY and gpu_id >= 0", "device_type", B, False,
      "self.use_cupy = _HAS_CUPY and gpu_id >= 0 and cp.cuda.runtime.getDeviceCount() > 0",
      "unconfirmed: cupy has no Ascend support; aarch64 hosts have no cupy-cuda wheel so the ImportError "
      "fallback is taken, but an x86 host with cupy installed and no NVIDIA driver takes the kernel path and fails"),
    C("self._kernel = cp.RawKernel(_RENDER_KP_SRC, 'render_kp')", "custom_cuda_extension", X, False, None,
      "inline CUDA C compiled by NVRTC; only reached when use_cupy is true"),
])

# --------------------------------------------------------------------------------------------- MMAction2

E("mmaction_apis_inference", "mmaction/apis/inference.py", "explicit_replacement",
  "open-mmlab/mmaction2 0.x mmaction/apis/inference.py (init_recognizer, is_cuda + mmcv scatter, inference_skeleton)", [
    C("def init_recognizer(config, checkpoint=None, device='cuda:0', **kwargs):", "device_type", R, True,
      "def init_recognizer(config, checkpoint=None, device='npu:0', **kwargs):",
      "callers that rely on the default get a CUDA device"),
    C("if next(model.parameters()).is_cuda:", "device_type", R, True,
      "if next(model.parameters()).device.type != 'cpu':",
      "False for an NPU model, so the batch is never moved and the forward pass mixes CPU inputs with NPU weights"),
    C("data = scatter(data, [device])[0]", "tensor_to_device", R, True,
      "data = scatter(data, [-1])[0]  # unwrap DataContainers on CPU, then move tensors with .to(device)",
      "mmcv.parallel.scatter to a device id goes through torch.cuda.comm / CUDA streams "
      "(torch.cuda.comm.scatter is ✘ in Ascend's list)"),
])

E("mmaction_demo_skeleton", "demo/demo_skeleton.py", "explicit_replacement",
  "open-mmlab/mmaction2 0.x demo/demo_skeleton.py (Faster R-CNN + HRNet + PoseC3D video demo)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("'--device', type=str, default='cuda:0', help='CPU/CUDA device option')", "device_type", R, True,
      "'--device', type=str, default='npu:0', help='CPU/NPU device option')",
      "the default device for the detector, pose model and recognizer"),
    C("torch.cuda.empty_cache()  # release the detector", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release the detector's activations before pose estimation", EMPTY_CACHE_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("mmaction2_v1_posec3d_config", "configs/skeleton/posec3d/slowonly_r50_8xb16-u48-240e_ntu60-xsub-keypoint.py",
  "explicit_replacement",
  "open-mmlab/mmaction2 1.x PoseC3D config with the MMEngine runtime (env_cfg, AmpOptimWrapper) inlined", [
    C("dist_cfg=dict(backend='nccl'))", "dist_backend", R, False, "dist_cfg=dict(backend='hccl'))",
      "unconfirmed: MMEngine's init_dist picks hccl by itself when torch_npu is importable; edited for clarity"),
    C("compile = dict(backend='inductor', mode='max-autotune')", "compile_mode", R, False,
      "compile = False  # or dict(backend='npugraphs') on torch_npu >= 2.6",
      "max-autotune relies on Triton autotuning; Inductor on NPU is torch_npu graph mode (performance only)"),
])

E("mmaction_benchmark", "tools/analysis/benchmark.py", "explicit_replacement",
  "open-mmlab/mmaction2 0.x tools/analysis/benchmark.py (+ CUDA-event network-only timing for skeleton models)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("x = torch.randn(*shape).cuda()", "tensor_to_device", R, True, "x = torch.randn(*shape).npu()",
      "Tensor.cuda() needs a CUDA build"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C("torch.cuda.synchronize()  # wait for the events", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the events", "torch.cuda.synchronize() raises without CUDA"),
    C("print(f'{torch.cuda.get_device_name(0)}:", "torch_cuda_api", R, True,
      "print(f'{torch.npu.get_device_name(0)}: {mean_ms:.2f} ms / batch, '",
      "torch.cuda.get_device_name raises without CUDA"),
    C("torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", R, False,
      "f'peak mem {torch.npu.max_memory_allocated() / 2**20:.0f} MiB')", MEMSTAT_NOTE),
    C("wrap_fp16_model(model)", "amp", R, False, "wrap_fp16_model(model)  # mmcv build with NPU amp",
      "unconfirmed: mmcv's auto_fp16 path autocasts through torch.cuda.amp"),
    C("model = MMDataParallel(model, device_ids=[0])", "distributed_framework", R, True,
      "model = NPUDataParallel(model.npu(), device_ids=[0])",
      "MMDataParallel subclasses torch.nn.DataParallel, which Ascend marks unsupported"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() raises without CUDA"),
    C("torch.cuda.synchronize()  # make sure the forward pass finished", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # make sure the forward pass finished", "torch.cuda.synchronize() raises without CUDA"),
])

# --------------------------------------------------------------------------------------------- others

E("motionbert_train_action", "train_action.py", "transfer_to_npu",
  "Walter0807/MotionBERT train_action.py (DSTformer ActionNet fine-tuning on NTU, is_available-guarded .cuda())", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "transfer_to_npu redirects the torch.cuda calls below; without it torch.cuda.is_available() is False and "
      "training silently runs on the CPU"),
    C("if torch.cuda.is_available():  # eval batch", "device_type", R, False,
      "if torch.npu.is_available():  # eval batch", TRANSFER_NOTE),
    C("=batch_gt = batch_gt.cuda()", "tensor_to_device", R, False, "batch_gt = batch_gt.npu()", TRANSFER_NOTE),
    C("=batch_input = batch_input.cuda()", "tensor_to_device", R, False, "batch_input = batch_input.npu()",
      TRANSFER_NOTE),
    C("=if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():", TRANSFER_NOTE),
    C("model = nn.DataParallel(model)", "distributed_framework", R, True,
      "# model = nn.DataParallel(model)  (single NPU; use DDP for several)",
      DP_NOTE + "; transfer_to_npu does not make it work"),
    C("=model = model.cuda()", "tensor_to_device", R, False, "model = model.npu()", TRANSFER_NOTE),
    C("criterion = criterion.cuda()", "tensor_to_device", R, False, "criterion = criterion.npu()", TRANSFER_NOTE),
    C("model.module.backbone.parameters()", "distributed_framework", R, True,
      "[{\"params\": filter(lambda p: p.requires_grad, model.backbone.parameters()), \"lr\": args.lr_backbone},",
      "model.module only exists on the DataParallel wrapper that the port removes"),
    C("model.module.head.parameters()", "distributed_framework", R, True,
      "{\"params\": filter(lambda p: p.requires_grad, model.head.parameters()), \"lr\": args.lr_head}],",
      "same .module dependency"),
    C("model.load_state_dict(checkpoint['model'], strict=True)", "distributed_framework", R, False,
      "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['model'].items()}, strict=True)",
      "only when resuming a checkpoint written by the DataParallel version ('module.' prefixed keys)"),
    C("optimizer = optim.AdamW(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "performance only: NpuFusedAdamW (msFmkTransplt notes faster, +70% memory)"),
    C("if torch.cuda.is_available():  # train batch", "device_type", R, False,
      "if torch.npu.is_available():  # train batch", TRANSFER_NOTE),
    C("batch_gt = batch_gt.cuda()  # (N,)", "tensor_to_device", R, False, "batch_gt = batch_gt.npu()  # (N,)",
      TRANSFER_NOTE),
    C("batch_input = batch_input.cuda()  # (N, 2, T, 17, 3)", "tensor_to_device", R, False,
      "batch_input = batch_input.npu()  # (N, 2, T, 17, 3)", TRANSFER_NOTE),
])

E("skeletonclr_net", "net/skeletonclr.py", "explicit_replacement",
  "SkeletonCLR / AimCLR net/skeletonclr.py (MoCo-v2 queue on an ST-GCN encoder, DDP batch shuffle, NNM)", [
    C("idx_shuffle = torch.randperm(batch_size_all).cuda()", "tensor_to_device", R, True,
      "idx_shuffle = torch.randperm(batch_size_all, device=x.device)",
      "shuffle-BN index created with .cuda() (shuffle_bn=True under DDP)"),
    C("labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()", "tensor_to_device", R, True,
      "labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)",
      "contrastive targets created with .cuda() on every pre-training step"),
    C("pos_mask = torch.cat([torch.ones(topk_onehot.size(0), 1).cuda(), topk_onehot], dim=1)", "tensor_to_device",
      R, True, "pos_mask = torch.cat([torch.ones(topk_onehot.size(0), 1, device=l_neg.device), topk_onehot], dim=1)",
      "nearest-neighbour-mining positives mask"),
])

E("fewshot_soft_dtw_cuda", "utils/soft_dtw_cuda.py", "explicit_replacement",
  "Maghoumi pytorch-softdtw-cuda as vendored by few-shot skeleton action recognition repos (numba CUDA kernels)", [
    C("=from numba import cuda", "custom_cuda_extension", X, False, None,
      "importing numba.cuda works without a GPU; dropped together with the kernels below"),
    C("gamma = torch.cuda.FloatTensor([gamma])", "torch_cuda_api", R, True,
      "gamma = torch.tensor([gamma], device=D.device, dtype=torch.float32)",
      "legacy torch.cuda tensor type needs a CUDA build"),
    C("bandwidth = torch.cuda.FloatTensor([bandwidth])", "torch_cuda_api", R, True,
      "bandwidth = torch.tensor([bandwidth], device=D.device, dtype=torch.float32)",
      "legacy torch.cuda tensor type needs a CUDA build"),
    C("compute_softdtw_cuda[B, threads_per_block](cuda.as_cuda_array(D.detach()),", "custom_cuda_extension", R, True,
      "R = _softdtw_forward_torch(D, gamma.item(), bandwidth.item())  # anti-diagonal loop in PyTorch",
      "numba CUDA kernel launch; as_cuda_array only accepts CUDA tensors"),
    C("compute_softdtw_backward_cuda[B, threads_per_block](cuda.as_cuda_array(D_),", "custom_cuda_extension", R,
      True, "E = _softdtw_backward_torch(D_, R, 1.0 / gamma.item(), bandwidth.item())",
      "numba CUDA kernel launch in backward; the CPU fallback has no backward, so training needs a rewrite"),
    C("=use_cuda = self.use_cuda", "device_type", B, True, "use_cuda = self.use_cuda and x.is_cuda",
      "NPU tensors are sent down the CUDA path whenever the caller asked for use_cuda"),
    C("self.sdtw = SoftDTW(use_cuda=True, gamma=gamma, normalize=normalize, bandwidth=bandwidth)", "device_type", R,
      True, "self.sdtw = SoftDTW(use_cuda=False, gamma=gamma, normalize=normalize, bandwidth=bandwidth)",
      "hard-wired use_cuda=True"),
])

E("skeleton_ddp_amp_main", "main_ddp.py", "explicit_replacement",
  "InfoGCN / HD-GCN-style processor rewritten for torchrun DDP with native AMP, CUDA-stream prefetcher", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      MANUAL_SEED_NOTE),
    C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", R, True,
      "self.stream = torch.npu.Stream(device=device)", "CUDA streams need a CUDA build"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream API"),
    C("data.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "data.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
    C("label.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "label.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
      "exits on an NPU host"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(self.local_rank)",
      "torch.cuda.set_device raises without CUDA"),
    C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", R, False,
      "os.environ.setdefault('HCCL_ASYNC_ERROR_HANDLING', '1')",
      "NCCL variable is ignored by HCCL; the torch_npu watchdog variable is HCCL_ASYNC_ERROR_HANDLING (default 1)"),
    C("major, _ = torch.cuda.get_device_capability(self.device)", "device_capability_check", R, True,
      "self.amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "get_device_capability has no meaningful NPU answer (None unless TORCH_NPU_DEVICE_CAPABILITY is set); "
      "the CUDA call raises without CUDA"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", R, True, "self.scaler = torch.npu.amp.GradScaler(",
      "CUDA GradScaler disables itself without CUDA: fp16 training loses loss scaling"),
    C("model = torch.compile(model, mode='max-autotune')", "compile_mode", R, False,
      "model = torch.compile(model, backend='npugraphs')",
      "performance only; max-autotune's Triton templates are CUDA-side (compile: false in the shipped yaml)"),
    C("self.optimizer = torch.optim.SGD(groups", "fused_optimizer", R, False,
      "self.optimizer = torch_npu.optim.NpuFusedSGD(groups, lr=self.cfg.base_lr, momentum=0.9, nesterov=True)",
      FUSED_SGD_NOTE),
    C("=with torch.cuda.amp.autocast(enabled=self.cfg.amp, dtype=self.amp_dtype):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.cfg.amp, dtype=self.amp_dtype):",
      "CUDA autocast is inactive for NPU tensors: the amp: true run trains in fp32"),
    C("mem = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated(self.device) / 2 ** 30", MEMSTAT_NOTE),
    C("dtype=self.amp_dtype):  # eval", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.cfg.amp, dtype=self.amp_dtype):  # eval",
      "CUDA autocast is inactive for NPU tensors"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("skeleton_ddp_yaml", "config/nturgbd120-cross-subject/joint.yaml", "explicit_replacement",
  "HD-GCN / InfoGCN-style NTU120 X-Sub yaml config read by main_ddp.py (device and backend from config)", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "main_ddp.py builds torch.device(f'{cfg.device}:{local_rank}') from this value"),
    C("=dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl",
      "passed straight to dist.init_process_group"),
])

# --------------------------------------------------------------------------------------------- files around code

E("pyskl_requirements", "requirements.txt", "explicit_replacement",
  "kennymckormick/pyskl requirements.txt extended with the CUDA wheel indexes and pins of a cu113 install", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu   # x86 only; aarch64 uses PyPI torch",
      "CUDA 11.3 wheel index"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html", "custom_cuda_extension", X, True,
      None, "pre-built mmcv-full wheels compiled against CUDA 11.3"),
    C("=torch==1.11.0+cu113", "device_type", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA build of torch; the NPU stack pairs a plain torch with the matching torch-npu wheel"),
    C("=torchvision==0.12.0+cu113", "device_type", R, True, "torchvision==0.16.0", "CUDA build of torchvision"),
    C("=mmcv-full==1.5.0", "custom_cuda_extension", R, True,
      "mmcv==1.7.2  # built from source with MMCV_WITH_OPS=1 and NPU ops",
      "mmcv-full's ops are compiled CUDA kernels; an NPU host needs an mmcv build with NPU support "
      "(exact build flags unconfirmed)"),
    C("cupy-cuda113>=10.0", "custom_cuda_extension", X, True, None,
      "cupy has no Ascend support and cupy-cuda wheels do not exist for aarch64 hosts"),
    C("pynvml>=11.0", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart in torch_npu; only the monitoring script uses it"),
])

E("msg3d_environment_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for MS-G3D / CTR-GCN era GCN training (pytorch + cudatoolkit, apex with --cuda_ext)", [
    C("=- nvidia", "device_type", X, False, None, "nvidia channel only serves CUDA packages"),
    C("=- pytorch=1.7.1", "device_type", R, True, "- pip: [torch==2.1.0, torch-npu==2.1.0.post12]",
      "conda pytorch build tied to cudatoolkit; torch 1.7 has no torch_npu release"),
    C("=- torchvision=0.8.2", "device_type", R, True, "torchvision==0.16.0 (pip)", "paired with the CUDA pytorch"),
    C("=- cudatoolkit=10.2", "device_type", X, True, None, "CUDA toolkit; CANN is installed outside conda"),
    C("=- cudnn=7.6.5", "device_type", X, True, None, "cuDNN"),
    C("git+https://github.com/NVIDIA/apex.git@22.03", "amp", R, True,
      "# apex dropped: --half uses torch.npu.amp (or Ascend's patched apex)",
      "building apex with --cuda_ext needs nvcc"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None, "NVML bindings; no NPU counterpart"),
    C("=- gpustat", "torch_cuda_api", X, False, None, "NVML-based monitor; npu-smi on Ascend hosts"),
])

E("mmaction_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "open-mmlab/mmaction2 docker/Dockerfile extended with mmdet/mmpose and pyskl for skeleton pipelines", [
    C('ARG CUDA="10.2"', "device_type", X, False, None, "CUDA version argument of the base image"),
    C('ARG CUDNN="7"', "device_type", X, False, None, "cuDNN version argument of the base image"),
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "device_type", R, True,
      "FROM <CANN base image for the target Ascend product> (then pip install torch==2.1.0 torch-npu)",
      "CUDA runtime image; the NPU image needs CANN + torch_npu (exact image name unconfirmed)"),
    C("ENV TORCH_CUDA_ARCH_LIST", "env_var", X, False, None, "nvcc arch list"),
    C("ENV TORCH_NVCC_FLAGS", "env_var", X, False, None, "nvcc flags"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES "
      "(usually passed at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES", "env_var", X, False, None, "NVIDIA container runtime setting"),
    C("3bf863cc.pub", "device_type", X, False, None, "NVIDIA CUDA apt repository key"),
    C("7fa2af80.pub", "device_type", X, False, None, "NVIDIA machine-learning apt repository key"),
    C("mmcv-full==1.5.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.8.0/index.html",
      "custom_cuda_extension", R, True,
      "RUN MMCV_WITH_OPS=1 pip install --no-cache-dir mmcv==1.7.2  # source build with NPU ops",
      "pre-built CUDA 10.2 mmcv-full wheel"),
    C('ENV FORCE_CUDA="1"', "env_var", X, False, None,
      "mmaction2's own setup.py builds no extension, so the flag is inert here; only matters for source builds of "
      "mmcv"),
])

E("pyskl_benchmark_sh", "tools/run_ntu_benchmark.sh", "explicit_replacement",
  "pyskl/mmaction2 dist_train.sh + slurm_train.sh folded into a per-model NTU benchmark runner", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "device selection variable of the NPU runtime"),
    C("NUM_VISIBLE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)", "torch_cuda_api", R, True,
      "NUM_VISIBLE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is missing: NUM_VISIBLE becomes 0 and the script exits"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads HCCL_SOCKET_IFNAME; only matters when the default NIC choice is wrong (multi-node)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "ignored by HCCL"),
    C("while nvidia-smi --query-compute-apps=pid", "torch_cuda_api", R, False,
      "while npu-smi info | grep -q 'Process id'; do",
      "without nvidia-smi the loop never waits (command not found, grep sees nothing)"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", R, False, "--gres=npu:${GPUS_PER_NODE}",
      "unconfirmed: no Ascend-specific Slurm gres integration is documented in the knowledge base"),
])
