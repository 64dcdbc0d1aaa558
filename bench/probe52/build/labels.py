"""Labels for probe52 (hand-written synthetic upstream files; see ../README.md).

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
EXPLICIT, TRANSFER, AGNOSTIC = "explicit_replacement", "transfer_to_npu", "device_branch_or_abstraction"

IMPORT_NOTE = ("torch.npu / the 'npu' device need torch_npu loaded (autoload since 2.5.1, explicit import "
               "still recommended)")
TRANSFER_NOTE = ("entry script: import torch_npu + transfer_to_npu so the .cuda()/'cuda'/torch.cuda.* lines "
                 "below run on the NPU unchanged")
SEED_NOTE = ("torch.cuda seeding without CUDA is a lazily queued no-op; torch.manual_seed already seeds the NPU "
             "generator, so only cosmetic/consistency")

# ----------------------------------------------------------------------------------------------------------
# meta-learning
# ----------------------------------------------------------------------------------------------------------

E("maml_omniglot_higher", "examples/maml-omniglot.py", EXPLICIT,
  "facebookresearch/higher examples/maml-omniglot.py (MAML via higher.innerloop_ctx, --device default)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("argparser.add_argument('--device', type=str, help='device', default='cuda')", "device_type", R, True,
      "argparser.add_argument('--device', type=str, help='device', default='npu')",
      "the default device string is used for the loader and the net; 'cuda' fails on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "seeding guard only; False on NPU so the seed call below is skipped (harmless)"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
])

E("l2l_maml_miniimagenet", "examples/vision/maml_miniimagenet.py", EXPLICIT,
  "learn2learn examples/vision/maml_miniimagenet.py (cuda flag + device_count() gate)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if cuda and torch.cuda.device_count():", "torch_cuda_api", R, True,
      "if cuda and torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an NPU host: the 10-hour run silently stays on the CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("device = torch.device('cuda')", "device_type", R, True, "device = torch.device('npu')",
      "device string"),
])

E("functorch_maml_vmap", "examples/maml_omniglot/maml-omniglot-transforms.py", EXPLICIT,
  "pytorch/functorch examples/maml_omniglot/maml-omniglot-transforms.py (torch.func grad + vmap over tasks)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('argparser.add_argument("--device", type=str, help="device", default="cuda")', "device_type", R, True,
      'argparser.add_argument("--device", type=str, help="device", default="npu")', "device string default"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "seeding guard only"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("qry_losses, qry_accs = vmap(compute_loss_for_task)(x_spt, y_spt, x_qry, y_qry)",
      "unsupported_op_workaround", R, False,
      "qry_losses, qry_accs = map(torch.stack, zip(*[compute_loss_for_task(*t) for t in zip(x_spt, y_spt, x_qry, y_qry)]))",
      "torch.func.vmap is ✘ in Ascend's 2.7.1 API list and in mstt's unsupported list, but torch.vmap (the same "
      "function object) is ✔; failure mode unconfirmed, so a per-task loop is the conservative port"),
])

E("protonet_few_shot", "protonets/models/few_shot.py", EXPLICIT,
  "jakesnell/prototypical-networks protonets/models/few_shot.py (is_cuda branch for the target indices)", [
    C("if xq.is_cuda:", "device_type", R, True, "if xq.is_npu:",
      "is_cuda is False for NPU tensors: target_inds stays on the CPU and log_p_y.gather(2, target_inds) raises "
      "a device mismatch"),
    C("target_inds = target_inds.cuda()", "tensor_to_device", R, True, "target_inds = target_inds.to(xq.device)",
      "must move together with the branch above"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()",
      "reached whenever the scripts pass --data.cuda (use_cuda=True)"),
    C("out[k] = v.cuda(non_blocking=True)", "tensor_to_device", R, True, "out[k] = v.npu(non_blocking=True)",
      "episode tensors"),
])

E("metaoptnet_train", "train.py", TRANSFER,
  "kjunelee/MetaOptNet train.py (embedding + SVM/ridge heads, CUDA_VISIBLE_DEVICES helper, 4-GPU DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "from torch_npu.contrib import transfer_to_npu",
      TRANSFER_NOTE),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = x", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = x.replace(' ', '')",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; transfer_to_npu does not translate the variable"),
    C("parser.add_argument('--gpu', default='0, 1, 2, 3')", "env_var", R, False,
      "parser.add_argument('--gpu', default='0,1,2,3')",
      "ASCEND_RT_VISIBLE_DEVICES parsing stops at the first invalid character ('1, 2,3' -> only 1), so the "
      "spaced default exposes a single card; harmless once DataParallel is gone"),
    C("network = torch.nn.DataParallel(network, device_ids=[0, 1, 2, 3])", "unsupported_op_workaround", R, True,
      "pass  # nn.DataParallel is not supported on NPU: single card, or DDP + hccl",
      "torch.nn.DataParallel ✘ in Ascend's API list; transfer_to_npu does not replace it"),
])

# ----------------------------------------------------------------------------------------------------------
# neural architecture search
# ----------------------------------------------------------------------------------------------------------

E("darts_train_search", "cnn/train_search.py", EXPLICIT,
  "quark0/darts cnn/train_search.py (bi-level search loop, exits without a GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "the search exits with 'no gpu device available' on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "torch.cuda call needs a CUDA build"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
    C("criterion = criterion.cuda()", "tensor_to_device", R, True, "criterion = criterion.npu()", ".cuda()"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda()"),
    C("input = Variable(input, requires_grad=False).cuda()", "tensor_to_device", R, True,
      "input = Variable(input, requires_grad=False).npu()", ".cuda()"),
    C("target = Variable(target, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device", R, True,
      "target = Variable(target, requires_grad=False).npu(non_blocking=True)", ".cuda()"),
    C("input_search = Variable(input_search, requires_grad=False).cuda()", "tensor_to_device", R, True,
      "input_search = Variable(input_search, requires_grad=False).npu()", ".cuda()"),
    C("target_search = Variable(target_search, requires_grad=False).cuda(non_blocking=True)", "tensor_to_device",
      R, True, "target_search = Variable(target_search, requires_grad=False).npu(non_blocking=True)", ".cuda()"),
    C("=input = input.cuda()", "tensor_to_device", R, True, "input = input.npu()", ".cuda()"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "target = target.npu(non_blocking=True)", ".cuda()"),
])

E("darts_model_search", "cnn/model_search.py", EXPLICIT,
  "quark0/darts cnn/model_search.py + architect.py (alphas created with .cuda(), unrolled model rebuilt on GPU)", [
    C("model_new = Network(self._C, self._num_classes, self._layers, self._criterion).cuda()", "tensor_to_device",
      R, True, "model_new = Network(self._C, self._num_classes, self._layers, self._criterion).npu()",
      "second-order search clones the network on the GPU"),
    C("self.alphas_normal = Variable(1e-3*torch.randn(k, num_ops).cuda(), requires_grad=True)", "tensor_to_device",
      R, True, "self.alphas_normal = Variable(1e-3*torch.randn(k, num_ops).npu(), requires_grad=True)",
      "architecture parameters are created on the GPU at construction"),
    C("self.alphas_reduce = Variable(1e-3*torch.randn(k, num_ops).cuda(), requires_grad=True)", "tensor_to_device",
      R, True, "self.alphas_reduce = Variable(1e-3*torch.randn(k, num_ops).npu(), requires_grad=True)", "same"),
    C("return model_new.cuda()", "tensor_to_device", R, True, "return model_new.npu()", ".cuda()"),
])

E("darts_search_sh", "scripts/search_and_eval.sh", EXPLICIT,
  "DARTS-style search -> train -> test driver script (nvidia-smi GPU picking, CUDA_VISIBLE_DEVICES)", [
    C("=import sys, torch", "import_torch_npu", R, True, "import sys, torch, torch_npu",
      "the inline check below calls torch.npu"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, True, "if not torch.npu.is_available():",
      "sanity check aborts the script on an NPU host"),
    C("GPU=$(nvidia-smi --query-gpu=index,memory.free", "torch_cuda_api", R, True,
      "GPU=$(python -c \"import torch, torch_npu; print(max(range(torch.npu.device_count()), key=lambda i: torch.npu.mem_get_info(i)[0]))\")",
      "nvidia-smi does not exist on an Ascend host (npu-smi has a different output); set -e stops the script"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "the NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C('nvidia-smi > "${EXP_ROOT}/gpu-state-${NAME}.txt"', "torch_cuda_api", R, True,
      'npu-smi info > "${EXP_ROOT}/npu-state-${NAME}.txt"', "nvidia-smi missing; set -e fails the last step"),
])

E("enas_trainer", "trainer.py", EXPLICIT,
  "carpedm20/ENAS-pytorch trainer.py (shared RNN + controller, num_gpu switch, map_location by num_gpu)", [
    C("=self.shared.cuda()", "tensor_to_device", R, True, "self.shared.npu()",
      "num_gpu defaults to 1, so this branch runs on an NPU host"),
    C("=self.controller.cuda()", "tensor_to_device", R, True, "self.controller.npu()", "same"),
    C("torch.nn.utils.clip_grad_norm(model.parameters(),", "unsupported_op_workaround", R, False,
      "torch.nn.utils.clip_grad_norm_(model.parameters(),",
      "torch.nn.utils.clip_grad_norm is ✘ in Ascend's 2.7.1 list (deprecated alias; clip_grad_norm_ is ✔); "
      "unconfirmed failure"),
    C("map_location = None", "tensor_to_device", R, False,
      "map_location = lambda storage, loc: storage.npu()",
      "only matters when resuming from checkpoints written on a CUDA machine"),
])

E("ofa_train", "train_ofa_net.py", EXPLICIT,
  "mit-han-lab/once-for-all train_ofa_net.py (progressive shrinking under Horovod, one GPU per process)", [
    C("=import horovod.torch as hvd", "distributed_framework", R, False,
      "import torch.distributed as dist",
      "Horovod has no NPU support documented in the knowledge (unconfirmed); the natural port is "
      "torch.distributed with hccl; remaining hvd.rank()/size() call sites follow"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=hvd.init()", "distributed_framework", R, False,
      "dist.init_process_group(backend='hccl')", "unconfirmed (see import)"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", R, True,
      "torch.npu.set_device(hvd.local_rank())", "torch.cuda call needs a CUDA build"),
    C("torch.cuda.manual_seed_all(args.manual_seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(args.manual_seed)", SEED_NOTE),
    C("args.teacher_model.cuda()", "tensor_to_device", R, True, "args.teacher_model.npu()",
      "teacher for knowledge distillation"),
    C("compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none",
      "distributed_framework", R, False, "compression = None  # DDP comm hook (fp16_compress_hook) instead",
      "Horovod gradient compression; unconfirmed on NPU"),
])

E("ofa_drm", "ofa/imagenet_classification/run_manager/distributed_run_manager.py", EXPLICIT,
  "mit-han-lab/once-for-all DistributedRunManager (hvd.DistributedOptimizer, broadcast, DistributedMetric)", [
    C("=self.net.cuda()", "tensor_to_device", R, True, "self.net.npu()", ".cuda()"),
    C("self.optimizer = hvd.DistributedOptimizer(", "distributed_framework", R, False,
      "self.net = DDP(self.net, device_ids=[torch.npu.current_device()])",
      "Horovod allreduce of NPU gradients is not documented (unconfirmed); DDP + hccl is the natural port"),
    C("hvd.broadcast_parameters(self.net.state_dict(), 0)", "distributed_framework", R, False,
      "# DDP broadcasts parameters at construction", "unconfirmed: Horovod broadcast of NPU tensors"),
    C("hvd.broadcast_optimizer_state(self.optimizer, 0)", "distributed_framework", R, False,
      "# optimizer state is identical on every rank after the DDP broadcast", "unconfirmed"),
    C("images, labels = images.cuda(), labels.cuda()", "tensor_to_device", R, True,
      "images, labels = images.npu(), labels.npu()", ".cuda()"),
    C("images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)", "tensor_to_device", R,
      True, "images, labels = images.npu(non_blocking=True), labels.npu(non_blocking=True)", ".cuda()"),
])

E("ofa_pytorch_utils", "ofa/utils/pytorch_utils.py", EXPLICIT,
  "mit-han-lab/once-for-all ofa/utils/pytorch_utils.py (hardware-aware latency measurement, CUDA events)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "reached for the default l_type 'gpu8'; torch.cuda.synchronize needs a CUDA build"),
    C("torch.cuda.synchronize()  # wait for the queued kernels", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the queued kernels", "without it the NPU latency is host dispatch time"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "ender = torch.npu.Event(enable_timing=True)", "same"),
    C("optimizer = torch.optim.SGD(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(", "performance only (supernet training)"),
])

E("ofa_dockerfile", "docker/Dockerfile", EXPLICIT,
  "once-for-all / Horovod-style training image (nvidia/cuda base, NCCL apt pins, HOROVOD_GPU_OPERATIONS=NCCL)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", R, True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "a CUDA image has no CANN toolkit, driver libs or torch_npu"),
    C("libnccl2=2.9.9-1+cuda11.3 libnccl-dev=2.9.9-1+cuda11.3 \\", "dist_backend", X, True, None,
      "NCCL packages come from NVIDIA's apt repo, absent on a CANN image: apt-get fails; HCCL ships with CANN"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", R, False,
      "ENV LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:$LD_LIBRARY_PATH",
      "CUDA paths are dead on the CANN image; its ENV lines (copied from set_env.sh) already set the CANN paths"),
    C("torch==1.11.0+cu113 \\", "device_type", R, True, "torch==2.1.0 \\",
      "CUDA wheel; torch_npu has no 1.11+cu113 pairing and needs the matching CPU/aarch64 torch"),
    C("torchvision==0.12.0+cu113 \\", "device_type", R, True, "torchvision==0.16.0 \\",
      "must match torch"),
    C("-f https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", R, True,
      "torch-npu==2.1.0.post8", "drop the CUDA wheel index, add the torch_npu wheel for the pinned torch"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6"', "custom_cuda_extension", X, False, None,
      "only read by nvcc extension builds; dead on NPU"),
    C("RUN HOROVOD_GPU_OPERATIONS=NCCL HOROVOD_NCCL_LINK=SHARED \\", "distributed_framework", R, True,
      "RUN python -m pip install --no-cache-dir 'torch-npu==2.1.0.post8'  # torchrun + hccl instead of horovod",
      "Horovod's NCCL GPU operations cannot be built without CUDA/NCCL"),
    C("ENV NCCL_DEBUG=INFO \\", "env_var", R, False, "ENV ASCEND_GLOBAL_LOG_LEVEL=1 \\",
      "debug logging only"),
    C("NCCL_SOCKET_IFNAME=eth0 \\", "env_var", R, False, "HCCL_SOCKET_IFNAME=eth0 \\",
      "NCCL_* is ignored by HCCL; HCCL_SOCKET_IFNAME picks the host NIC for multi-node rendezvous"),
    C("=NCCL_IB_DISABLE=1", "env_var", X, False, None, "no HCCL counterpart needed"),
    C('CMD ["horovodrun", "-np", "8"', "distributed_framework", R, False,
      'CMD ["torchrun", "--nproc_per_node", "8", "train_ofa_net.py", "--task", "kernel"]',
      "follows the Horovod -> torch.distributed port (unconfirmed that Horovod cannot run)"),
])

E("fbnet_supernet", "supernet_functions/supernet.py", EXPLICIT,
  "FBNet (AnnaAraslanova/FBNet-style) stochastic supernet: Gumbel-softmax mixed ops + latency LUT trainer", [
    C("soft_mask_variables = nn.functional.gumbel_softmax(self.thetas, temperature)",
      "unsupported_op_workaround", R, True,
      "soft_mask_variables = ((self.thetas - torch.empty_like(self.thetas).exponential_().log()) / temperature).softmax(-1)",
      "torch.nn.functional.gumbel_softmax is ✘ in Ascend's 2.7.1 list and in mstt's unsupported list; the "
      "hand-rolled Gumbel noise (as in HardMixedOperation) uses ops with NPU kernels"),
    C("X, y = X.cuda(non_blocking=True), y.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "X, y = X.npu(non_blocking=True), y.npu(non_blocking=True)", ".cuda()"),
    C("latency_to_accumulate = Variable(torch.Tensor([[0.0]]), requires_grad=True).cuda()", "tensor_to_device",
      R, True, "latency_to_accumulate = Variable(torch.Tensor([[0.0]]), requires_grad=True).npu()", ".cuda()"),
    C("=X, y = X.cuda(), y.cuda()", "tensor_to_device", R, True, "X, y = X.npu(), y.npu()", ".cuda()"),
    C("latency_to_accumulate = torch.Tensor([[0.0]]).cuda()", "tensor_to_device", R, True,
      "latency_to_accumulate = torch.Tensor([[0.0]]).npu()", ".cuda()"),
    C("model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).cuda()", "tensor_to_device", R, True,
      "model = FBNet_Stochastic_SuperNet(lookup_table, cnt_classes=10).npu()", ".cuda()"),
    C("model = nn.DataParallel(model, device_ids=[0])", "unsupported_op_workaround", X, True, None,
      "torch.nn.DataParallel ✘ on NPU (single-device wrapper here, simply dropped)"),
])

E("nas_environment_yml", "environment.yml", EXPLICIT,
  "AutoDL-Projects / NAS-Bench-201-style conda environment.yml (pytorch-cuda, nvidia channel, DALI, pynvml)", [
    C("=- nvidia", "device_type", X, False, None, "channel only serves pytorch-cuda"),
    C("=- pytorch=1.13.1", "device_type", R, True, "- pytorch=2.1.0  # CPU build; torch_npu from pip",
      "torch_npu has no 1.13 release (version matrix: 1.11, 2.1, 2.2, ...); torch must equal the torch_npu "
      "version"),
    C("=- torchvision=0.14.1", "device_type", R, True, "- torchvision=0.16.0", "must match torch"),
    C("=- pytorch-cuda=11.7", "device_type", X, True, None, "CUDA runtime metapackage"),
    C("=- nccl>=2.14", "dist_backend", X, False, None, "unused library on NPU; HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post8", "torch_npu itself"),
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "device_type", X, False, None,
      "NVIDIA index only serves DALI"),
    C("=- nvidia-dali-cuda110==1.22.0", "device_type", X, False, None,
      "DALI GPU pipelines need the CUDA driver; not covered by the knowledge (unconfirmed)"),
    C("=- pynvml==11.4.1", "torch_cuda_api", X, False, None,
      "NVML has no Ascend counterpart (use torch.npu.utilization / npu-smi)"),
    C("=- gpustat", "torch_cuda_api", X, False, None, "NVML-based"),
])

# ----------------------------------------------------------------------------------------------------------
# continual learning
# ----------------------------------------------------------------------------------------------------------

E("avalanche_gpu_usage", "avalanche/evaluation/metrics/gpu_usage.py", EXPLICIT,
  "ContinualAI/avalanche evaluation/metrics/gpu_usage.py (GPUtil-polling MaxGPU plugin metrics)", [
    C("=import GPUtil", "torch_cuda_api", X, False, None, "GPUtil shells out to nvidia-smi; replaced by torch.npu"),
    C("n_gpus = len(GPUtil.getGPUs())", "torch_cuda_api", R, True, "n_gpus = torch.npu.device_count()",
      "no nvidia-smi -> GPUtil returns [] -> 'Your system has no GPU!' and the metric silently stays 0"),
    C("gpu_perc = GPUtil.getGPUs()[self.gpu_id].load * 100", "torch_cuda_api", R, True,
      "gpu_perc = torch.npu.utilization(self.gpu_id)", "NPU utilisation"),
    C("torch.cuda.reset_peak_memory_stats(self.gpu_id)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(self.gpu_id)", "torch.cuda allocator call needs a CUDA build"),
    C("peak = torch.cuda.max_memory_allocated(self.gpu_id) / (1024 * 1024)", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(self.gpu_id) / (1024 * 1024)",
      "reads 0 without CUDA: the reported peak memory is silently wrong"),
])

E("avalanche_ewc_example", "examples/ewc_splitmnist.py", EXPLICIT,
  "ContinualAI/avalanche examples (EWC on Split/Permuted MNIST, --cuda device index, system metrics)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('f"cuda:{args.cuda}"', "device_type", R, True, 'f"npu:{args.cuda}"', "device string"),
    C("if torch.cuda.is_available() and args.cuda >= 0", "torch_cuda_api", R, True,
      "if torch.npu.is_available() and args.cuda >= 0",
      "False on an NPU host: the strategy silently trains on the CPU"),
])

E("mammoth_conf", "utils/conf.py", AGNOSTIC,
  "aimagelab/mammoth utils/conf.py (least-used-GPU device pick, pynvml memory, seeds)", [
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, True,
      "for i in range(torch.npu.device_count()):",
      "0 on NPU: the memory list is empty and np.argmin([]) raises once the branch below takes the NPU"),
    C("_ = torch.tensor([1]).to(i)", "tensor_to_device", R, True, "_ = torch.tensor([1]).to(f'npu:{i}')",
      "an int device in .to() means a CUDA index"),
    C("gpu_memory_reserved.append(torch.cuda.max_memory_reserved(i))", "torch_cuda_api", R, True,
      "gpu_memory_reserved.append(torch.npu.max_memory_reserved(i))",
      "reads 0 for every device without CUDA, so the 'least used' choice is always device 0"),
    C("gpu_memory_allocated.append(torch.cuda.max_memory_allocated(i))", "torch_cuda_api", R, False,
      "gpu_memory_allocated.append(torch.npu.max_memory_allocated(i))", "only reported with return_all"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() > 0 and len(os.environ.get('CUDA_VISIBLE_DEVICES'",
      "torch_cuda_api", B, True,
      "if torch.npu.is_available() and torch.npu.device_count() > 0 and len(os.environ.get('ASCEND_RT_VISIBLE_DEVICES', '').split(',')) > 0:",
      "without an NPU branch get_device() returns cpu (MPS check fails too)"),
    C("device = torch.device(f'cuda:{np.argmin(gpu_memory)}')", "device_type", R, True,
      "device = torch.device(f'npu:{np.argmin(gpu_memory)}')", "device string"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
])

E("mammoth_distributed", "utils/distributed.py", EXPLICIT,
  "aimagelab/mammoth utils/distributed.py (SLURM fork-per-GPU DDP on NCCL, CustomDP DataParallel)", [
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL"),
    C("if not torch.distributed.is_available() or not torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if not torch.distributed.is_available() or not torch.npu.is_available():",
      "raises 'DDP not available!' on an NPU host"),
    C("int(x.split('gpu:')[1].split('(')[0])", "device_type", R, False,
      "int(x.split('npu:')[1].split('(')[0])",
      "parses the SLURM GRES string; the GRES name on an Ascend cluster is site-specific (unconfirmed)"),
    C("=model.to(rankno)", "tensor_to_device", R, True, "model.to(f'npu:{rankno}')",
      "int device index means CUDA"),
    C('model.device = f"cuda:{rankno}"', "device_type", R, True, 'model.device = f"npu:{rankno}"',
      "device string used by the continual-learning model for its buffers"),
    C("=model.to(0)", "tensor_to_device", R, True, "model.to('npu:0')", "int device index means CUDA"),
    C('model.device = "cuda:0"', "device_type", R, True, 'model.device = "npu:0"', "device string"),
    C("return CustomDP(model, device_ids=range(torch.cuda.device_count())).to('cuda:0')",
      "unsupported_op_workaround", R, True,
      "return model.to('npu:0')  # DataParallel is not supported on NPU; use --distributed ddp",
      "torch.nn.DataParallel ✘; also device_count()==0 and 'cuda:0'"),
    C("t = torch.tensor([value], dtype=torch.float32, device=torch.device('cuda',", "device_type", R, True,
      "t = torch.tensor([value], dtype=torch.float32, device=torch.device('npu', int(os.environ.get('MAMMOTH_RANK', 0)) % torch.npu.device_count()))",
      "device string and CUDA device_count (modulo by zero)"),
])

E("gem_model", "model/gem.py", EXPLICIT,
  "facebookresearch/GradientEpisodicMemory model/gem.py (episodic memory on GPU, quadprog projection)", [
    C("self.memory_data = self.memory_data.cuda()", "tensor_to_device", R, True,
      "self.memory_data = self.memory_data.npu()", "run with --cuda yes"),
    C("self.memory_labs = self.memory_labs.cuda()", "tensor_to_device", R, True,
      "self.memory_labs = self.memory_labs.npu()", "same"),
    C("self.grads = self.grads.cuda()", "tensor_to_device", R, True, "self.grads = self.grads.npu()", "same"),
    C("indx = torch.cuda.LongTensor(self.observed_tasks[:-1]) if self.gpu", "torch_cuda_api", R, True,
      "indx = torch.tensor(self.observed_tasks[:-1], dtype=torch.long, device=self.grads.device) if self.gpu \\",
      "torch.cuda.LongTensor cannot be constructed without CUDA"),
])

# ----------------------------------------------------------------------------------------------------------
# adversarial robustness / certification
# ----------------------------------------------------------------------------------------------------------

E("autoattack_main", "autoattack/autoattack.py", AGNOSTIC,
  "fra31/auto-attack autoattack/autoattack.py (device='cuda' default threaded through every attack)", [
    C("device='cuda', log_path=None):", "device_type", R, True, "device=None, log_path=None):",
      "the README usage AutoAttack(model, norm=..., eps=...) never passes device: every attack moves its "
      "batches to 'cuda'"),
    C("=self.device = device", "device_type", R, True,
      "self.device = device if device is not None else next(model.parameters()).device",
      "pairs with the default above"),
    C("torch.cuda.random.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      SEED_NOTE),
])

E("robustbench_eval", "robustbench/eval.py", EXPLICIT,
  "RobustBench robustbench/eval.py (benchmark() + CLI with --device cuda:0)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda:0', help='device to use for computations')",
      "device_type", R, True,
      "parser.add_argument('--device', type=str, default='npu:0', help='device to use for computations')",
      "CLI default device"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
])

E("trades_loss", "trades.py", EXPLICIT,
  "yaodongyu/TRADES trades.py + YisenWang/MART mart_loss (random start drawn with .cuda())", [
    C("=x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device", R,
      True, "x_adv = x_natural.detach() + 0.001 * torch.randn_like(x_natural).detach()",
      "random start is created on CUDA regardless of the input's device"),
    C("delta = 0.001 * torch.randn(x_natural.shape).cuda().detach()", "tensor_to_device", R, True,
      "delta = 0.001 * torch.randn_like(x_natural).detach()", "l_2 branch"),
    C("torch.randn(x_natural.shape).cuda().detach()  # random start", "tensor_to_device", R, True,
      "x_adv = x_natural.detach() + 0.001 * torch.randn_like(x_natural).detach()  # random start", "MART"),
])

E("fast_adv_train_fgsm", "CIFAR10/train_fgsm.py", TRANSFER,
  "locuslab/fast_adversarial CIFAR10/train_fgsm.py + utils.py (FGSM-RS with apex.amp O2, module-level .cuda())", [
    C("=import torch", "import_torch_npu", A, True, "from torch_npu.contrib import transfer_to_npu",
      TRANSFER_NOTE + " (including the module-level mu/std tensors)"),
    C("=from apex import amp", "amp", R, True,
      "from apex import amp  # Ascend/apex build (apex patched for NPU), or torch.npu.amp",
      "NVIDIA apex is a CUDA library; amp.initialize/scale_loss need Ascend's apex patch (O1/O2, dynamic "
      "loss scale) or a rewrite to native AMP"),
    C("amp_args = dict(opt_level=args.opt_level, loss_scale=args.loss_scale, verbosity=False)", "amp", R, False,
      "amp_args = dict(opt_level=args.opt_level, loss_scale=args.loss_scale, verbosity=False, combine_grad=True)",
      "Ascend apex's combine_grad is a performance option"),
])

E("robustness_model_utils", "robustness/model_utils.py", EXPLICIT,
  "MadryLab/robustness robustness/model_utils.py (make_and_restore_model for released robust checkpoints)", [
    C("checkpoint = ch.load(resume_path, pickle_module=dill)", "tensor_to_device", R, True,
      "checkpoint = ch.load(resume_path, pickle_module=dill, map_location='cpu')",
      "the released robust ImageNet/CIFAR checkpoints were saved from CUDA; without map_location torch "
      "refuses to deserialize CUDA storages when CUDA is unavailable"),
    C("model = ch.nn.DataParallel(model)", "unsupported_op_workaround", R, True,
      "pass  # DataParallel is not supported on NPU", "torch.nn.DataParallel ✘ (parallel=True callers)"),
    C("=model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda()"),
])

E("ares_robust_train", "robust_training/adversarial_training.py", EXPLICIT,
  "thu-ml/ares robust_training-style ImageNet PGD/TRADES training on timm (torchrun, native AMP, yaml config)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("args.device = 'cuda:0'", "device_type", R, True, "args.device = 'npu:0'", "device string"),
    C("os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')", "env_var", X, False, None,
      "NCCL-only switch, ignored by HCCL"),
    C("args.device = 'cuda:%d' % args.local_rank", "device_type", R, True,
      "args.device = 'npu:%d' % args.local_rank", "device string"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "torch.cuda call needs a CUDA build"),
    C("dist.init_process_group(backend=getattr(args, 'dist_backend', 'nccl')", "dist_backend", R, False,
      "dist.init_process_group(backend=getattr(args, 'dist_backend', 'hccl'), init_method=getattr(args, 'dist_url', 'env://'))",
      "fallback only: the yaml config sets dist_backend (labelled there)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "called every iteration"),
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3", "log line only (reads 0 without CUDA)"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", ".cuda()"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", X, False, None,
      "mstt lists channels_last as not supported (use contiguous); behaviour on the NPU unconfirmed"),
    C("torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "if args.amp_dtype == 'bfloat16' or (args.amp_dtype == 'auto' and torch.npu.is_bf16_supported()):",
      "amp_dtype is 'auto' in the shipped config: torch.cuda.get_device_capability needs CUDA, and the NPU "
      "version returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so [0] fails either way"),
    C("amp_autocast = partial(torch.cuda.amp.autocast, dtype=amp_dtype)", "amp", R, True,
      "amp_autocast = partial(torch.npu.amp.autocast, dtype=amp_dtype)",
      "CUDA autocast is inactive for NPU tensors: the PGD steps and the update run in fp32"),
    C("loss_scaler = NativeScaler()", "amp", R, False, "loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler builds a CUDA GradScaler, which disables itself without CUDA (no loss scaling); "
      "only reached when bf16 is unavailable"),
    C("model = torch.compile(model, mode='max-autotune')", "compile_mode", R, False,
      "model = torch.compile(model, backend='npugraphs')",
      "max-autotune relies on Triton autotuning; unconfirmed on NPU (off by default in the config)"),
    C("train_loss_fn = train_loss_fn.cuda()", "tensor_to_device", R, True, "train_loss_fn = train_loss_fn.npu()",
      ".cuda()"),
])

E("ares_config", "robust_training/configs/swin_base_at.yaml", EXPLICIT,
  "ARES-style adversarial-training yaml config (env section exported by the trainer, dist_backend)", [
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "env_var", R, True,
      'ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "the NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C("NCCL_SOCKET_IFNAME: ib0", "env_var", R, False, "HCCL_SOCKET_IFNAME: ib0",
      "NIC selection for multi-node rendezvous"),
    C("NCCL_IB_DISABLE: 0", "env_var", X, False, None, "NCCL-only"),
    C("channels_last: true", "unsupported_op_workaround", R, False, "channels_last: false",
      "channels_last listed as unsupported by mstt; unconfirmed"),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl",
      "read into args.dist_backend and passed to init_process_group"),
])

E("smoothing_core", "code/core.py", EXPLICIT,
  "locuslab/smoothing code/core.py (Smooth.certify/predict) + certify.py driver", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("noise = torch.randn_like(batch, device='cuda') * self.sigma", "device_type", R, True,
      "noise = torch.randn_like(batch) * self.sigma",
      "Monte Carlo noise is drawn on CUDA whatever the input device"),
    C("checkpoint = torch.load(args.base_classifier)", "tensor_to_device", R, True,
      "checkpoint = torch.load(args.base_classifier, map_location='cpu')",
      "the released base classifiers were saved on CUDA"),
    C("=x = x.cuda()", "tensor_to_device", R, True, "x = x.npu()", ".cuda()"),
])

E("smoothing_train", "code/train.py", TRANSFER,
  "locuslab/smoothing code/train.py + architectures.py (Gaussian-augmentation training, --gpu -> CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", A, True, "from torch_npu.contrib import transfer_to_npu",
      TRANSFER_NOTE + " (randn_like(device='cuda') is rewritten by the wrapper)"),
    C("model = torch.nn.DataParallel(resnet50(pretrained=False)).cuda()", "unsupported_op_workaround", R, True,
      "model = resnet50(pretrained=False).cuda()", "torch.nn.DataParallel ✘; not replaced by transfer_to_npu"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", R, True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu", "not translated by transfer_to_npu"),
])

E("linf_norm_dist", "model/norm_dist.py", EXPLICIT,
  "zbh2047/L_inf-dist-net model/norm_dist.py (l_inf-dist neurons on a JIT-loaded CUDA kernel, IBP bounds)", [
    C("norm_dist_cpp = load(name='norm_dist',", "custom_cuda_extension", R, True,
      "norm_dist_cpp = None  # .cu kernels: use the torch path below (or an Ascend C op via NpuExtension)",
      "cpp_extension.load of .cu sources runs at import and needs nvcc; cpp_extension.load is ✘ on A2/A3"),
])

E("linf_setup", "setup.py", EXPLICIT,
  "setup.py building the l_inf-dist kernels ahead of time as a CUDAExtension", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R,
      True, "from torch.utils.cpp_extension import BuildExtension; from torch_npu.utils.cpp_extension import NpuExtension",
      "CUDAExtension/CUDA_HOME have no NPU meaning"),
    C("out = subprocess.check_output([os.path.join(CUDA_HOME, 'bin', 'nvcc'), '--version']).decode()",
      "custom_cuda_extension", X, True, None, "nvcc does not exist on an NPU host"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", R, True,
      "if not os.environ.get('ASCEND_HOME_PATH'):", "setup exits on an NPU host"),
    C("os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '7.0;7.5;8.0;8.6')", "custom_cuda_extension", X, False, None,
      "nvcc-only"),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "NpuExtension(",
      "kernels must be rewritten in Ascend C (or dropped for the torch fallback)"),
    C("os.path.join(KERNEL_DIR, 'norm_dist_cuda.cu'),", "custom_cuda_extension", R, True,
      "os.path.join(KERNEL_DIR, 'norm_dist_npu.cpp'),", ".cu source"),
    C("os.path.join(KERNEL_DIR, 'bound_inf_dist_cuda.cu'),", "custom_cuda_extension", R, True,
      "os.path.join(KERNEL_DIR, 'bound_inf_dist_npu.cpp'),", ".cu source"),
    C("'nvcc': ['-O3', '--use_fast_math', '-lineinfo', '--expt-relaxed-constexpr'],", "custom_cuda_extension", X,
      False, None, "nvcc flags are meaningless for NpuExtension"),
    C("version='0.2.0+cu' + get_cuda_version(),", "custom_cuda_extension", R, True, "version='0.2.0',",
      "calls nvcc"),
])

E("robust_requirements", "requirements.txt", EXPLICIT,
  "requirements.txt of an adversarial-robustness repo (cu118 wheels, NVIDIA apex, ffcv + cupy, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "with the cu118 index pip can still resolve a CUDA build of torch; x86 Ascend hosts use the CPU wheel"),
    C("torch==2.0.1+cu118", "device_type", R, True, "torch==2.1.0",
      "CUDA build; must equal the torch_npu version (no torch_npu for 2.0.1 in the active matrix)"),
    C("torchvision==0.15.2+cu118", "device_type", R, True, "torchvision==0.16.0", "must match torch"),
    C("# (keep torch and torchvision on the same CUDA tag)", "import_torch_npu", A, True,
      "torch-npu==2.1.0.post8", "torch_npu itself"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@22.04-dev", "amp", R, True,
      "# apex: build Ascend/apex (patch over NVIDIA apex) from source",
      "NVIDIA apex is CUDA-only; the fast-AT scripts keep apex.amp through Ascend's patched apex"),
    C("ffcv==1.0.2", "device_type", X, False, None,
      "FFCV's GPU-side pipeline assumes CUDA; not covered by the knowledge (unconfirmed)"),
    C("cupy-cuda11x>=12.0", "device_type", X, True, None, "cupy has no Ascend support"),
    C("nvidia-ml-py3==7.352.0", "torch_cuda_api", X, False, None, "NVML has no Ascend counterpart"),
    C("gpustat>=1.0", "torch_cuda_api", X, False, None, "NVML-based"),
])
