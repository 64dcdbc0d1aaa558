# Labels for probe296: NAS / weight-sharing supernets (OFA, ProxylessNAS, FBNet, DARTS, PC-DARTS, SPOS,
# AutoFormer, Cream, NNI) moved from NVIDIA CUDA to Ascend NPU (torch_npu).
#
# Target stack assumed by the ported lines: torch 2.1.0 + torch-npu 2.1.0.post17 (CANN 8.3.RC1),
# CANN environment from /usr/local/Ascend/ascend-toolkit/set_env.sh.

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------------------------
# Once-for-All (mit-han-lab/once-for-all)
# ---------------------------------------------------------------------------------------------------------------

E("ofa_train", "train_ofa_net.py", "explicit_replacement",
  "mit-han-lab/once-for-all train_ofa_net.py (horovod progressive-shrinking launcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry script; registers the npu device / torch.npu namespace before any device call"),
    C("=hvd.init()", "dist_backend", "npu_only_addition", False,
      "torch.distributed.init_process_group(backend='hccl', init_method=os.environ.get('DIST_URL', 'env://'), rank=hvd.rank(), world_size=hvd.size())",
      "horovod stays as launcher/CPU-side bookkeeping; an HCCL group is added for the NPU gradient allreduce that replaces "
      "hvd.DistributedOptimizer (unconfirmed: the knowledge base says nothing about horovod on Ascend)"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(hvd.local_rank())",
      "torch.cuda.set_device raises without CUDA; NPU form is torch.npu.set_device"),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)",
      "lazy no-op without CUDA; torch.manual_seed above already seeds the default generator - ported for clarity"),
    C("args.teacher_model.cuda()", "tensor_to_device", "replace", True,
      "args.teacher_model.npu()",
      "Module.cuda() on a module with parameters fails without CUDA"),
])

E("ofa_drm", "ofa/imagenet_classification/run_manager/distributed_run_manager.py", "explicit_replacement",
  "mit-han-lab/once-for-all ofa/imagenet_classification/run_manager/distributed_run_manager.py", [
    C("=self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()",
      "moves the OFA supernet to the local accelerator; fails without CUDA"),
    C("self.optimizer = hvd.DistributedOptimizer(", "distributed_framework", "replace", False,
      "self.net = torch.nn.parallel.DistributedDataParallel(self.net, device_ids=[torch.npu.current_device()])",
      "horovod gradient allreduce on NPU tensors is not an Ascend-supported path; porter switches to DDP over HCCL (unconfirmed)"),
    C("hvd.broadcast_parameters(self.net.state_dict(), 0)", "distributed_framework", "replace", False,
      "for t in self.net.state_dict().values(): dist.broadcast(t, src=0)",
      "broadcast of NPU-resident parameters through horovod (unconfirmed); DDP construction already syncs from rank 0"),
    C("hvd.broadcast_optimizer_state(self.optimizer, 0)", "distributed_framework", "removal", False, None,
      "horovod optimizer-state broadcast; not needed with DDP when every rank loads the same checkpoint (unconfirmed)"),
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(), labels.npu()",
      "validation batches are moved with .cuda(); fails without CUDA"),
    C("images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device",
      "replace", True,
      "images, labels = images.npu(non_blocking=True), labels.npu(non_blocking=True)",
      "training batches; Tensor.cuda fails without CUDA"),
])

E("ofa_ps", "ofa/imagenet_classification/elastic_nn/training/progressive_shrinking.py", "explicit_replacement",
  "mit-han-lab/once-for-all ofa/imagenet_classification/elastic_nn/training/progressive_shrinking.py", [
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", "replace", True,
      "images, labels = images.npu(), labels.npu()",
      "per-batch transfer in the elastic training loop; fails without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op when CUDA was never initialised; the NPU caching allocator is not released - memory only"),
])

E("ofa_putils", "ofa/utils/pytorch_utils.py", "explicit_replacement",
  "mit-han-lab/once-for-all ofa/utils/pytorch_utils.py (measure_net_latency / get_net_info)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "barrier around the 'gpu' latency measurement; torch.cuda.synchronize raises without CUDA and NPU kernels are async too"),
    C("net = copy.deepcopy(net).cuda()", "tensor_to_device", "replace", True,
      "net = copy.deepcopy(net).npu()",
      "moves a CPU net to the accelerator for 'gpuN' latency; fails without CUDA"),
    C("net_info['%s device' % l_type] = torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api",
      "replace", True,
      "net_info['%s device' % l_type] = torch.npu.get_device_name(torch.npu.current_device())",
      "torch.cuda.current_device()/get_device_name raise without CUDA; both have torch.npu forms"),
])

E("ofa_latlut", "ofa/nas/efficiency_predictor/latency_lookup_table.py", "explicit_replacement",
  "mit-han-lab/once-for-all ofa/nas/efficiency_predictor/latency_lookup_table.py (+ a locally measured gpu64 table)", [
    C("module = module.cuda().eval()", "tensor_to_device", "replace", True,
      "module = module.npu().eval()", "op timed on the accelerator; Module.cuda fails without CUDA"),
    C("x = torch.randn(batch_size, *input_shape).cuda()", "tensor_to_device", "replace", True,
      "x = torch.randn(batch_size, *input_shape).npu()", "input tensor for the latency probe"),
    C("torch.cuda.synchronize()  # drain warmup kernels before timing", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # drain warmup kernels before timing",
      "raises without CUDA; NPU launches are asynchronous so the barrier is still needed"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "per-run barrier; without it the table would record launch time only"),
    C("% (len(lut), torch.cuda.get_device_name(0), save_path))", "torch_cuda_api", "replace", True,
      "% (len(lut), torch.npu.get_device_name(0), save_path))",
      "torch.cuda.get_device_name raises without CUDA"),
])

E("ofa_eval", "eval_ofa_net.py", "device_branch_or_abstraction",
  "mit-han-lab/once-for-all eval_ofa_net.py + the OFA tutorial's predictor/evolution search", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("device_list = range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "device_list = range(torch.npu.device_count())",
      "returns 0 on an NPU host: empty device list, batch size not scaled, device mask set to ''"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES is the process-level mask (must be set before the first device use)"),
    C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", True,
      "cuda_available = torch.cuda.is_available() or torch.npu.is_available()",
      "False on an NPU host: predictor silently runs on CPU"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "no-op without CUDA; torch.manual_seed already called above"),
    C("device='cuda:0' if cuda_available else 'cpu',", "device_type", "replace", True,
      "device='npu:0' if torch.npu.is_available() else 'cpu',",
      "hard-coded 'cuda:0' for the accuracy predictor; .to('cuda:0') fails without CUDA"),
])

E("ofa_run", "scripts/run_progressive_shrinking.sh", "explicit_replacement",
  "OFA progressive-shrinking launcher (horovodrun over 4x8 GPUs)", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "set +u; " + SET_ENV + "; set -u",
      "CANN env (libhccl, ASCEND_OPP_PATH) must be sourced; set_env.sh is known to fail under set -u, hence the +u/-u wrap"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL only reads HCCL_SOCKET_IFNAME; matters once the gradient allreduce runs over HCCL instead of horovod "
      "(that move is itself unconfirmed, see train_ofa_net.py)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent; HCCL uses the NPU's own RoCE NICs"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only tuning knob; ignored on Ascend"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL logging knob; ignored on Ascend"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "mask lists every card, so ignoring it changes nothing; renamed for correctness"),
    C("horovodrun -np \"${NP}\" -hostfile", "env_var", "replace", False,
      "horovodrun -np \"${NP}\" -hostfile \"${HOSTFILE}\" --mpi-args=\"-x HCCL_SOCKET_IFNAME -x MASTER_ADDR -x MASTER_PORT -x LD_LIBRARY_PATH\" \\",
      "forwards the HCCL/rendezvous variables instead of the NCCL ones to remote ranks (only needed with the HCCL group, unconfirmed)"),
    C("nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader || true", "torch_cuda_api", "replace",
      False, "npu-smi info || true", "diagnostic only (|| true); nvidia-smi does not exist on Ascend hosts"),
])

E("ofa_docker", "docker/Dockerfile", "explicit_replacement",
  "horovod/NCCL training image used for OFA (nvidia/cuda base)", [
    C("FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "CUDA base image has no CANN toolkit/driver libs; an Ascend CANN image is needed for torch_npu"),
    C("ENV TORCH_VERSION=1.6.0", "import_torch_npu", "replace", True, "ENV TORCH_VERSION=2.1.0",
      "no torch_npu release exists for torch 1.6.0; torch must match a torch-npu wheel"),
    C("ENV TORCHVISION_VERSION=0.7.0", "import_torch_npu", "replace", True, "ENV TORCHVISION_VERSION=0.16.0",
      "torchvision must match the bumped torch"),
    C("libnccl2=2.7.8-1+cuda10.2 \\", "dist_backend", "removal", True, None,
      "NCCL apt package comes from the CUDA repo; not installable on a CANN image (HCCL ships with CANN)"),
    C("libnccl-dev=2.7.8-1+cuda10.2 \\", "dist_backend", "removal", True, None, "same as libnccl2"),
    C("RUN pip install --no-cache-dir torch==${TORCH_VERSION} torchvision==${TORCHVISION_VERSION}",
      "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post17",
      "torch-npu wheel paired with torch 2.1.0"),
    C("RUN ldconfig /usr/local/cuda/targets/x86_64-linux/lib/stubs && \\", "torch_cuda_api", "replace", False,
      "RUN ldconfig && \\", "CUDA stub path does not exist on the CANN image; harmless but dead"),
    C("HOROVOD_GPU_OPERATIONS=NCCL HOROVOD_WITH_PYTORCH=1", "env_var", "replace", True,
      "HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 \\",
      "building horovod with NCCL GPU ops needs CUDA+NCCL, absent on Ascend; build fails"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}", "torch_cuda_api",
      "removal", False, None, "dead CUDA paths; the CANN image sets its own LD_LIBRARY_PATH"),
    C("ENV NCCL_DEBUG=INFO", "env_var", "removal", False, None, "NCCL-only knob"),
])

# ---------------------------------------------------------------------------------------------------------------
# ProxylessNAS (mit-han-lab/proxylessnas)
# ---------------------------------------------------------------------------------------------------------------

E("pxl_search", "search/imagenet_arch_search.py", "explicit_replacement",
  "mit-han-lab/proxylessnas search/imagenet_arch_search.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu device selection silently ignored on Ascend; DataParallel in RunManager would see every card"),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.manual_seed)", "no-op without CUDA; torch.manual_seed already seeds"),
])

E("pxl_runmgr", "search/run_manager.py", "device_branch_or_abstraction",
  "mit-han-lab/proxylessnas search/run_manager.py (RunConfig / RunManager / net_latency)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "False on an NPU host -> the else branch raises ValueError"),
    C("self.device = torch.device('cuda:0')", "device_type", "replace", True,
      "self.device = torch.device('npu:0')", "hard-coded CUDA device"),
    C("self.net = torch.nn.DataParallel(self.net)", "distributed_framework", "replace", True,
      "self.net = SingleDeviceWrapper(self.net)  # keeps .module; DataParallel is unsupported on Ascend",
      "torch.nn.DataParallel is marked unsupported in Ascend's API list; the code relies on .module, so a thin wrapper or DDP replaces it"),
    C("if self.device.type == 'cuda':", "device_type", "replace", True,
      "if self.device.type in ('cuda', 'npu'):",
      "after porting the device is 'npu', the barrier would be skipped and 'gpu' latencies would measure launch time only"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(self.device)",
      "raises without CUDA"),
])

E("pxl_mixop", "search/modules/mix_op.py", "explicit_replacement",
  "mit-han-lab/proxylessnas search/modules/mix_op.py (MixedEdge binary gates, ArchGradientFunction)", [])

# ---------------------------------------------------------------------------------------------------------------
# FBNet (AnnaAraslanova/FBNet style PyTorch re-implementation)
# ---------------------------------------------------------------------------------------------------------------

E("fbn_lut", "supernet_functions/lookup_table_builder.py", "explicit_replacement",
  "FBNet PyTorch re-implementation supernet_functions/lookup_table_builder.py (latency LUT, GPU-event timed fork)", [
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)",
      "torch.cuda.Event cannot be instantiated without CUDA; torch.npu.Event supports enable_timing/elapsed_time"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "same as start_event"),
    C("input_sample = torch.randn((LATENCY_BATCH_SIZE, *layers_input_shapes[layer_id]), device='cuda')",
      "device_type", "replace", True,
      "input_sample = torch.randn((LATENCY_BATCH_SIZE, *layers_input_shapes[layer_id]), device='npu')",
      "hard-coded 'cuda' device string"),
    C("op = operations[op_name](*layers_parameters[layer_id]).cuda().eval()", "tensor_to_device", "replace", True,
      "op = operations[op_name](*layers_parameters[layer_id]).npu().eval()", "candidate op moved with .cuda()"),
    C("torch.cuda.synchronize()  # warmup done, queue empty", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # warmup done, queue empty", "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "needed before elapsed_time; raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init; NPU cache not released between layers - memory only"),
])

E("fbn_main", "supernet_main_file.py", "explicit_replacement",
  "FBNet PyTorch re-implementation supernet_main_file.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("torch.cuda.manual_seed_all(manual_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(manual_seed)", "no-op without CUDA; torch.manual_seed already called"),
    C("torch.cuda.set_device(gpu_ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_ids[0])",
      "raises without CUDA"),
    C("=model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).cuda()", "tensor_to_device", "replace", True,
      "model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).npu()", "supernet has parameters; .cuda() fails"),
    C("model = nn.DataParallel(model, device_ids=gpu_ids)", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model)  # keeps .module; nn.DataParallel is unsupported on Ascend",
      "nn.DataParallel is unsupported on Ascend (API list); the trainer and sampler use model.module"),
    C("criterion = SupernetLoss().cuda()", "tensor_to_device", "replace", False,
      "criterion = SupernetLoss().npu()",
      "SupernetLoss holds no parameters/buffers, so Module.cuda() touches no tensor and does not fail; ported for consistency"),
    C("model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).cuda().eval()", "tensor_to_device", "replace",
      True, "model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).npu().eval()",
      "sampling path also builds the supernet on the device"),
    C("=model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = SingleDeviceWrapper(model)  # only needed for the 'module.' state-dict prefix",
      "DataParallel unsupported on Ascend; here it only provides the 'module.' key prefix for load()"),
])

E("fbn_trainer", "supernet_functions/training_functions_supernet.py", "explicit_replacement",
  "FBNet PyTorch re-implementation supernet_functions/training_functions_supernet.py", [
    C("torch.cuda.memory_allocated() / 2 ** 20, torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api",
      "replace", False,
      "torch.npu.memory_allocated() / 2 ** 20, torch.npu.max_memory_allocated() / 2 ** 20))",
      "returns 0 silently when CUDA is not initialised; logging only"),
    C("X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "X, y = X.npu(non_blocking=True), y.npu(non_blocking=True)", "per-batch transfer"),
    C("latency_to_accumulate = Variable(torch.Tensor([[0.0]]), requires_grad=True).cuda()", "tensor_to_device",
      "replace", True,
      "latency_to_accumulate = Variable(torch.Tensor([[0.0]]), requires_grad=True).npu()",
      "latency accumulator must live on the same device as the model"),
    C("X, y = X.cuda(), y.cuda()", "tensor_to_device", "replace", True, "X, y = X.npu(), y.npu()",
      "validation transfer"),
    C("latency_to_accumulate = torch.Tensor([[0.0]]).cuda()", "tensor_to_device", "replace", True,
      "latency_to_accumulate = torch.Tensor([[0.0]]).npu()", "validation latency accumulator"),
])

E("fbn_model", "supernet_functions/model_supernet.py", "explicit_replacement",
  "FBNet PyTorch re-implementation supernet_functions/model_supernet.py (MixedOperation / SupernetLoss)", [
    C("soft_mask_variables = nn.functional.gumbel_softmax(self.thetas, temperature)", "unsupported_op_workaround",
      "replace", False,
      "soft_mask_variables = F.softmax((self.thetas - torch.empty_like(self.thetas).exponential_().log()) / temperature, dim=-1)",
      "F.gumbel_softmax is marked unsupported in Ascend's 2.7.1 API list and by msFmkTransplt; it is a Python composite of "
      "exponential_/softmax (both have NPU kernels) so it likely runs - explicit Gumbel noise is the safe rewrite (unconfirmed)"),
])

# ---------------------------------------------------------------------------------------------------------------
# DARTS (quark0/darts) and PC-DARTS (yuhuixu1993/PC-DARTS)
# ---------------------------------------------------------------------------------------------------------------

E("darts_search", "cnn/train_search.py", "explicit_replacement",
  "quark0/darts cnn/train_search.py (py3 / torch>=1.x fork)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "False on an NPU host -> logs 'no gpu device available' and exits"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "no-op without CUDA; torch.manual_seed already called"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
      "nn.CrossEntropyLoss has no tensors, Module.cuda() is a silent no-op; ported for consistency"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "search network has parameters"),
    C("input = Variable(input, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "input = Variable(input, requires_grad=False).npu()", "train batch"),
    C("target = Variable(target, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = Variable(target, requires_grad=False).npu(non_blocking=True)", "train labels"),
    C("input_search = Variable(input_search, requires_grad=False).cuda()", "tensor_to_device", "replace", True,
      "input_search = Variable(input_search, requires_grad=False).npu()", "architecture (search) batch"),
    C("target_search = Variable(target_search, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device",
      "replace", True, "target_search = Variable(target_search, requires_grad=False).npu(non_blocking=True)",
      "architecture (search) labels"),
    C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "validation batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "validation labels"),
])

E("darts_model", "cnn/model_search.py", "explicit_replacement", "quark0/darts cnn/model_search.py", [
    C("model_new = Network(self._C, self._num_classes, self._layers, self._criterion).cuda()", "tensor_to_device",
      "replace", True,
      "model_new = Network(self._C, self._num_classes, self._layers, self._criterion).npu()",
      "unrolled (2nd-order) step clones the network onto the device"),
    C("self.alphas_normal = Variable(1e-3*torch.randn(k, num_ops).cuda(), requires_grad=True)", "tensor_to_device",
      "replace", True,
      "self.alphas_normal = Variable(1e-3*torch.randn(k, num_ops).npu(), requires_grad=True)",
      "alphas are plain leaf tensors (not registered), so model.npu() would not move them - they must be created on the NPU"),
    C("self.alphas_reduce = Variable(1e-3*torch.randn(k, num_ops).cuda(), requires_grad=True)", "tensor_to_device",
      "replace", True,
      "self.alphas_reduce = Variable(1e-3*torch.randn(k, num_ops).npu(), requires_grad=True)", "same as alphas_normal"),
])

E("darts_utils", "cnn/utils.py", "explicit_replacement", "quark0/darts cnn/utils.py", [
    C("model.load_state_dict(torch.load(model_path))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "used with the released GPU-trained checkpoints (cifar10_model.pt); CUDA storages cannot be deserialised on a host without CUDA"),
    C("mask = Variable(torch.cuda.FloatTensor(x.size(0), 1, 1, 1).bernoulli_(keep_prob))", "torch_cuda_api",
      "replace", True,
      "mask = torch.empty(x.size(0), 1, 1, 1, device=x.device).bernoulli_(keep_prob)",
      "torch.cuda.FloatTensor type is unavailable without CUDA; bernoulli_ has an NPU kernel"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "log helper only: on NPU it just prints 'cuda not available'"),
    C("torch.cuda.memory_allocated() / 2 ** 20,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_allocated() / 2 ** 20,", "logging only"),
    C("torch.cuda.memory_reserved() / 2 ** 20,", "torch_cuda_api", "replace", False,
      "torch.npu.memory_reserved() / 2 ** 20,", "logging only"),
    C("torch.cuda.max_memory_allocated() / 2 ** 20)", "torch_cuda_api", "replace", False,
      "torch.npu.max_memory_allocated() / 2 ** 20)", "logging only"),
])

E("darts_rnn", "rnn/train_search.py", "explicit_replacement", "quark0/darts rnn/train_search.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: set_device/seeding skipped while args.cuda stays True, so the run lands on device 0 whatever --gpu says"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", "no-op without CUDA; torch.manual_seed already called"),
    C("parallel_model = model.cuda()", "tensor_to_device", "replace", True, "parallel_model = model.npu()",
      "default single-device path"),
    C("parallel_model = nn.DataParallel(model, dim=1).cuda()", "distributed_framework", "replace", True,
      "parallel_model = model.npu()  # nn.DataParallel is unsupported on Ascend",
      "multi-GPU path (--single_gpu passed): DataParallel + .cuda() both fail on NPU"),
    C("torch.nn.utils.clip_grad_norm(model.parameters(), args.clip)", "unsupported_op_workaround", "replace", False,
      "torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)",
      "deprecated alias marked unsupported in Ascend's API list (clip_grad_norm_ is supported); the alias just forwards, so it likely still runs (unconfirmed)"),
])

E("darts_run", "scripts/run_search.sh", "explicit_replacement", "DARTS multi-seed search launcher", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment must be sourced"),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup python train_search.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python train_search.py --unrolled --seed ${seed} --gpu 0 \\",
      "per-seed device pinning is ignored on Ascend: all four searches would share NPU 0"),
    C("CUDA_VISIBLE_DEVICES=${GPUS[0]} python train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPUS[0]} python train.py --auxiliary --cutout --arch DARTS_V2 --gpu 0 \\",
      "with GPUS overridden the retrain would silently run on NPU 0"),
])

E("darts_env", "environment.yml", "explicit_replacement", "DARTS conda environment", [
    C("- pytorch=1.4.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu exists for torch 1.4; torch must equal the torch-npu wheel's version"),
    C("- torchvision=0.5.0", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must match torch 2.1.0"),
    C("- cudatoolkit=10.1", "torch_cuda_api", "replace", False, "- cpuonly",
      "CUDA runtime is useless on Ascend; cpuonly keeps conda from pulling a CUDA pytorch build (unconfirmed that cudatoolkit breaks the solve)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "torch-npu is pip-only"),
    C("- gpustat", "torch_cuda_api", "removal", False, None, "NVML-based GPU monitor; installs but is useless on NPU"),
])

E("pcdarts_imagenet", "train_search_imagenet.py", "explicit_replacement",
  "yuhuixu1993/PC-DARTS train_search_imagenet.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "exits on an NPU host"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "no-op without CUDA; torch.manual_seed already called"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 on NPU -> total batch size 0 and lr 0"),
    C("criterion = criterion.cuda()", "tensor_to_device", "replace", False, "criterion = criterion.npu()",
      "loss without tensors: silent no-op; ported for consistency"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[local_rank])",
      "nn.DataParallel is unsupported on Ascend; 8-card search needs DDP over HCCL (plus torchrun), or one NPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "search network"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(non_blocking=True)", "train batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "train labels"),
    C("input_search = input_search.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "input_search = input_search.npu(non_blocking=True)", "search batch"),
    C("target_search = target_search.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target_search = target_search.npu(non_blocking=True)", "search labels"),
    C("input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "validation batch"),
    C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "validation labels"),
])

# ---------------------------------------------------------------------------------------------------------------
# Single Path One-Shot (megvii-model/SinglePathOneShot)
# ---------------------------------------------------------------------------------------------------------------

E("spos_train", "Supernet/train.py", "device_branch_or_abstraction",
  "megvii-model/SinglePathOneShot src/Supernet/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "False on NPU: use_gpu stays False and the supernet silently trains on the CPU"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", True,
      "model = model  # nn.DataParallel is unsupported on Ascend; single NPU (or DDP+hccl)",
      "DataParallel unsupported on Ascend; also changes the 'module.' prefix of saved state dicts"),
    C("loss_function = criterion_smooth.cuda()", "tensor_to_device", "replace", False,
      "loss_function = criterion_smooth.npu()",
      "CrossEntropyLabelSmooth holds no tensors: silent no-op; ported for consistency"),
    C("device = torch.device(\"cuda\")", "device_type", "replace", True, "device = torch.device(\"npu\")",
      "device used for model.to(device) and every batch"),
    C("checkpoint = torch.load(args.eval_resume, map_location=None if use_gpu else 'cpu')", "tensor_to_device",
      "replace", True,
      "checkpoint = torch.load(args.eval_resume, map_location='cpu')",
      "once use_gpu is True on NPU, map_location=None restores the released GPU checkpoint (snet_detnas.pkl) onto CUDA and fails"),
])

E("spos_search", "Search/search.py", "device_branch_or_abstraction",
  "megvii-model/SinglePathOneShot src/Search/search.py + tester.py (evolutionary search with BN recalibration)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "False on NPU: batches go to CPU while the model is on the NPU -> device mismatch"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded CUDA device"),
    C("self.model = torch.nn.DataParallel(self.model).cuda()", "distributed_framework", "replace", True,
      "self.model = self.model.npu()  # strip 'module.' from the supernet state dict before loading",
      "DataParallel unsupported on Ascend and .cuda() fails without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA init; memory only"),
])

# ---------------------------------------------------------------------------------------------------------------
# AutoFormer (microsoft/Cream AutoFormer)
# ---------------------------------------------------------------------------------------------------------------

E("af_train", "supernet_train.py", "explicit_replacement", "microsoft/Cream AutoFormer/supernet_train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default device string feeds torch.device(args.device) -> model.to(device) fails without CUDA"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True,
      "loss_scaler = NpuNativeScaler()  # same call API, wraps torch.npu.amp.GradScaler()",
      "timm 0.3.2 NativeScaler hard-codes torch.cuda.amp.GradScaler, which disables itself without CUDA: fp16 autocast on NPU would run without loss scaling"),
])

E("af_engine", "supernet_engine.py", "explicit_replacement", "microsoft/Cream AutoFormer/supernet_engine.py", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast is disabled (warning) without CUDA: mixed precision silently off on NPU"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "called every step; raises without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=amp):", "evaluation autocast, same as training"),
    C("torch.cuda.synchronize(device)  # finish warmup before starting the clock", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device)  # finish warmup before starting the clock", "raises without CUDA"),
    C("=torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "throughput measurement barrier"),
])

E("af_utils", "lib/utils.py", "explicit_replacement", "microsoft/Cream AutoFormer/lib/utils.py (DeiT utils)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "metric all_reduce buffer created on 'cuda'; HCCL needs it on the NPU (fp64 kept - float32 is the safer choice if HCCL rejects fp64, unconfirmed)"),
    C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_gpu = torch.npu.is_available()", "only controls the 'max mem' log column"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "logging only"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: modulo by 0 -> ZeroDivisionError on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL backend is unavailable on Ascend; HCCL is the collective backend"),
])

E("af_script", "scripts/train_supernet.sh", "explicit_replacement", "AutoFormer supernet launch script", [
    C("=set -x", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment must be sourced"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "default mask is every card, so ignoring it is harmless by default"),
    C("NGPUS=$(nvidia-smi -L | wc -l)", "torch_cuda_api", "replace", True,
      "NGPUS=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent -> NGPUS=0 -> --nproc_per_node=0"),
    C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "NCCL-only logging knob"),
])

E("af_reqs", "requirements.txt", "explicit_replacement", "AutoFormer requirements.txt", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel page; on x86 Ascend hosts the CPU torch wheel is the recommended base for torch_npu"),
    C("torch==1.7.1+cu110", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA 11.0 build, and no torch_npu release for 1.7.1"),
    C("torchvision==0.8.2+cu110", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build matching the old torch"),
    C("=thop", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch-npu pin paired with torch 2.1.0"),
])

# ---------------------------------------------------------------------------------------------------------------
# Cream (microsoft/Cream, NeurIPS 2020)
# ---------------------------------------------------------------------------------------------------------------

E("cream_train", "tools/train.py", "explicit_replacement", "microsoft/Cream tools/train.py (supernet training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("optimizer = FusedSGD(param_groups, lr=cfg.LR, momentum=cfg.OPTIMIZER.MOMENTUM, nesterov=True)",
      "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedSGD(param_groups, lr=cfg.LR, momentum=cfg.OPTIMIZER.MOMENTUM, nesterov=True)",
      "opt-in via config; apex FusedSGD needs CUDA kernels, NpuFusedSGD is the Ascend fused counterpart"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable on Ascend"),
    C("torch.cuda.manual_seed_all(cfg.SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(cfg.SEED)",
      "no-op without CUDA; torch.manual_seed already called"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "supernet to device"),
    C("from apex import amp", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "NVIDIA apex amp requires CUDA params (and cannot be built with CUDA ext on Ascend); switch to native torch.npu.amp "
      "(Ascend's apex patch is the alternative, but it would also switch on the apex DDP branch above)"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.AMP_OPT_LEVEL)", "amp", "removal", True, None,
      "replaced by torch.npu.amp autocast + GradScaler in train_epoch"),
    C("smoothing=cfg.AUGMENTATION.SMOOTHING).cuda()", "tensor_to_device", "replace", False,
      "smoothing=cfg.AUGMENTATION.SMOOTHING).npu()", "parameter-free loss: Module.cuda() is a no-op; consistency"),
    C("validate_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "validate_loss_fn = nn.CrossEntropyLoss().npu()", "parameter-free loss: no-op; consistency"),
    C("train_loss_fn = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False,
      "train_loss_fn = nn.CrossEntropyLoss().npu()", "parameter-free loss: no-op; consistency"),
    C("logger.info('GPU0 peak memory: %.0f MB', torch.cuda.max_memory_allocated() / 1024 ** 2)", "torch_cuda_api",
      "replace", False,
      "logger.info('NPU0 peak memory: %.0f MB', torch.npu.max_memory_allocated() / 1024 ** 2)",
      "returns 0 without CUDA init; logging only"),
])

# ---------------------------------------------------------------------------------------------------------------
# NNI (microsoft/nni, NAS v1 API)
# ---------------------------------------------------------------------------------------------------------------

E("nni_trainer", "nni/nas/pytorch/trainer.py", "device_branch_or_abstraction",
  "microsoft/nni nni/nas/pytorch/trainer.py (one-shot NAS Trainer base class)", [
    C("self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\") if device is None else device",
      "device_type", "add_branch", True,
      "self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"npu\" if torch.npu.is_available() else \"cpu\") if device is None else device",
      "default device silently resolves to CPU on an NPU host (DARTS/ENAS/SPOS trainers pass device=None)"),
    C("return batch.to(self.device, non_blocking=self.device.type == \"cuda\")", "device_type", "replace", False,
      "return batch.to(self.device, non_blocking=self.device.type in (\"cuda\", \"npu\"))",
      "performance only: async H2D copies disabled on NPU"),
    C("pin_memory=torch.cuda.is_available())", "pin_memory", "replace", False,
      "pin_memory=torch.cuda.is_available() or torch.npu.is_available())",
      "performance only: host memory not pinned on NPU hosts"),
])

E("nni_proxyless", "examples/nas/proxylessnas/main.py", "device_branch_or_abstraction",
  "microsoft/nni examples/nas/oneshot/proxylessnas/main.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      "if torch.cuda.is_available() or torch.npu.is_available():",
      "False on NPU: search silently runs on CPU"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "hard-coded CUDA device"),
    C("if args.multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if args.multi_gpu and torch.npu.device_count() > 1:",
      "unchanged it is simply False on NPU (single-device retrain); only matters together with the DataParallel line"),
    C("logger.info('Retraining on %d GPUs with DataParallel', torch.cuda.device_count())", "torch_cuda_api",
      "replace", False, "logger.info('Retraining on %d NPUs', torch.npu.device_count())", "logging only"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", False, None,
      "unreachable on NPU while the guard uses torch.cuda; DataParallel is unsupported on Ascend, so it must go if the guard is ported"),
])
