# Labels for probe213 (face recognition / face analysis, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter edits; see README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: torch_npu must be imported before any torch.npu / 'npu' device use "
               "(autoload only from torch_npu 2.5.1; the torch pinned by these projects is older)")

# ---------------------------------------------------------------------------------------------
# insightface recognition/arcface_torch
# ---------------------------------------------------------------------------------------------

E("arcface_train_v2", "recognition/arcface_torch/train_v2.py", "explicit_replacement",
  "insightface arcface_torch train_v2.py (torchrun entry, PartialFC_V2, GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('distributed.init_process_group("nccl")', "dist_backend", "replace", True,
      'distributed.init_process_group("hccl")', "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",',
      "single-process fallback group also hard-codes nccl"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device raises on a host without CUDA; one NPU per rank"),
    C("cfg.network, dropout=0.0, fp16=cfg.fp16, num_features=cfg.embedding_size).cuda()", "tensor_to_device",
      "replace", True, "cfg.network, dropout=0.0, fp16=cfg.fp16, num_features=cfg.embedding_size).npu()",
      "Module.cuda() fails without CUDA"),
    C("module_partial_fc.train().cuda()", "tensor_to_device", "replace", True, "module_partial_fc.train().npu()",
      "PartialFC weight shard must live on the NPU (sgd branch)"),
    C('module_partial_fc.train().to(torch.device("cuda", local_rank))', "device_type", "replace", True,
      'module_partial_fc.train().to(torch.device("npu", local_rank))', "adamw branch builds an explicit cuda device"),
    C("dict_checkpoint = torch.load(", "tensor_to_device", "replace", False,
      'dict_checkpoint = torch.load(os.path.join(cfg.output, f"checkpoint_gpu_{rank}.pt"), map_location="cpu")',
      "resume checkpoint: only fails when resuming a run written on GPUs (tensors tagged cuda); NPU-written "
      "checkpoints reload as is"),
    C("amp = torch.cuda.amp.grad_scaler.GradScaler(growth_interval=100)", "amp", "replace", True,
      "amp = torch.npu.amp.GradScaler(growth_interval=100)",
      "cuda GradScaler disables itself without CUDA; with the backbone autocast on NPU the fp16 grads would go "
      "unscaled (underflow)"),
]),

E("arcface_partial_fc_v2", "recognition/arcface_torch/partial_fc_v2.py", "explicit_replacement",
  "insightface arcface_torch partial_fc_v2.py (PartialFC_V2, DistCrossEntropy, AllGather)", [
    C("positive = torch.unique(labels[index_positive], sorted=True).cuda()", "tensor_to_device", "replace", True,
      "positive = torch.unique(labels[index_positive], sorted=True).npu()", ".cuda() raises on NPU host"),
    C("perm = torch.rand(size=[self.num_local]).cuda()", "tensor_to_device", "replace", True,
      "perm = torch.rand(size=[self.num_local]).npu()", "negative-class sampling buffer"),
    C("index = torch.topk(perm, k=self.num_sample)[1].cuda()", "tensor_to_device", "replace", True,
      "index = torch.topk(perm, k=self.num_sample)[1]",
      "already on device; the redundant .cuda() still raises on NPU"),
    C("index = index.sort()[0].cuda()", "tensor_to_device", "replace", True, "index = index.sort()[0]",
      "redundant .cuda() on a device tensor raises on NPU"),
    C("torch.zeros((batch_size, self.embedding_size)).cuda()", "tensor_to_device", "replace", True,
      "torch.zeros((batch_size, self.embedding_size)).npu()", "all_gather receive buffers must be NPU tensors for HCCL"),
    C("torch.zeros(batch_size).long().cuda() for _ in range(self.world_size)", "tensor_to_device", "replace", True,
      "torch.zeros(batch_size).long().npu() for _ in range(self.world_size)", "label all_gather buffers"),
    C("with torch.cuda.amp.autocast(self.fp16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(self.fp16):",
      "train_v2 always builds PartialFC_V2 with fp16=False, so this autocast is disabled on every device; "
      "ported for the day fp16 is switched on"),
]),

E("arcface_dataset", "recognition/arcface_torch/dataset.py", "explicit_replacement",
  "insightface arcface_torch dataset.py (DataLoaderX with CUDA prefetch stream, MXFaceDataset, DALI iterator)", [
    C("=if dali:", "unsupported_op_workaround", "replace", True,
      "if dali and not hasattr(torch, 'npu'):  # nvidia-dali has no Ascend backend; use DataLoaderX",
      "DALI pipeline needs a CUDA device (device_id=local_rank, mixed decoder); with cfg.dali=True the job dies on "
      "NPU, so fall back to the torch DataLoader path"),
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.local_rank)", "prefetch thread binds its device"),
    C("self.stream = torch.cuda.Stream(local_rank)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(local_rank)", "side stream for H2D copies"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(self.stream):", "stream context"),
    C("self.batch[k] = self.batch[k].to(device=self.local_rank, non_blocking=True)", "tensor_to_device", "replace",
      True, "self.batch[k] = self.batch[k].to(device=f'npu:{self.local_rank}', non_blocking=True)",
      "a bare int device index means a CUDA device"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "stream sync before handing the batch out"),
    C("tensor_data = data_dict['data'].cuda()", "tensor_to_device", "replace", False,
      "tensor_data = data_dict['data'].npu()",
      "only reached through the DALI path, which is bypassed on NPU; ported so the class stays consistent"),
    C("tensor_label: torch.Tensor = data_dict['label'].cuda().long()", "tensor_to_device", "replace", False,
      "tensor_label: torch.Tensor = data_dict['label'].npu().long()", "same DALI-only path"),
]),

E("arcface_iresnet", "recognition/arcface_torch/backbones/iresnet.py", "explicit_replacement",
  "insightface arcface_torch backbones/iresnet.py", [
    C("with torch.cuda.amp.autocast(self.fp16):", "amp", "replace", True, "with torch.npu.amp.autocast(self.fp16):",
      "configs train with fp16=True; torch.cuda.amp.autocast disables itself (warning only) without CUDA, so the "
      "backbone silently runs fp32"),
]),

E("arcface_utils_amp", "recognition/arcface_torch/utils/utils_amp.py", "explicit_replacement",
  "insightface arcface_torch utils/utils_amp.py (MaxClipGradScaler, PartialFC v1 era)", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch_npu.npu.amp import GradScaler",
      "subclassing the cuda GradScaler: it disables itself on a host without CUDA"),
    C("assert master_tensor.is_cuda", "device_type", "replace", True, "assert master_tensor.is_npu",
      "is_cuda is False for NPU tensors -> AssertionError"),
    C("assert outputs.is_cuda", "device_type", "replace", True, "assert outputs.is_npu",
      "is_cuda is False for NPU tensors -> AssertionError on every scale()"),
]),

E("arcface_callbacks", "recognition/arcface_torch/utils/utils_callbacks.py", "explicit_replacement",
  "insightface arcface_torch utils/utils_callbacks.py (verification + speed logging)", [
    C("mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 silently when CUDA was never initialised; log value only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises on NPU host"),
]),

E("arcface_verification", "recognition/arcface_torch/eval/verification.py", "explicit_replacement",
  "insightface arcface_torch eval/verification.py (LFW/CFP/AgeDB .bin evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; also run standalone via __main__"),
    C("img = torch.from_numpy(_data.asnumpy()).float().cuda()", "tensor_to_device", "replace", True,
      "img = torch.from_numpy(_data.asnumpy()).float().npu()", "dumpR (mode 2) path"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "standalone evaluation entry"),
    C("backbone = backbone.cuda().eval()", "tensor_to_device", "replace", True, "backbone = backbone.npu().eval()",
      "model placement"),
]),

E("arcface_eval_ijbc", "recognition/arcface_torch/eval_ijbc.py", "explicit_replacement",
  "insightface arcface_torch eval_ijbc.py (IJB-B/C 1:1 verification)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("weight = torch.load(prefix)", "tensor_to_device", "replace", True,
      "weight = torch.load(prefix, map_location='cpu')",
      "model.pt written by train_v2 from the GPU state_dict: deserialising cuda tensors fails without CUDA"),
    C("resnet = get_model(args.network, dropout=0, fp16=False).cuda()", "tensor_to_device", "replace", True,
      "resnet = get_model(args.network, dropout=0, fp16=False).npu()", "model placement"),
    C("model = torch.nn.DataParallel(resnet)", "distributed_framework", "replace", True, "model = resnet",
      "nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); single-device eval is enough"),
    C("imgs = torch.Tensor(batch_data).cuda()", "tensor_to_device", "replace", True,
      "imgs = torch.Tensor(batch_data).npu()", "input batch (DataParallel no longer moves it)"),
]),

E("arcface_onnx_ijbc", "recognition/arcface_torch/onnx_ijbc.py", "explicit_replacement",
  "insightface arcface_torch onnx_ijbc.py + onnx_helper.ArcFaceORT (onnxruntime-gpu IJB eval)", [
    C('self.providers = [("CUDAExecutionProvider", {"device_id": gpu_id}), "CPUExecutionProvider"]', "device_type",
      "replace", False,
      'self.providers = [("CANNExecutionProvider", {"device_id": gpu_id}), "CPUExecutionProvider"]',
      "unconfirmed: onnxruntime's CANN EP is not covered by the knowledge base; unchanged, ORT falls back to CPU "
      "with a warning (slow, not wrong)"),
]),

E("arcface_run_sh", "recognition/arcface_torch/run.sh", "explicit_replacement",
  "insightface arcface_torch run.sh (torchrun launcher, multi-node)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* is ignored by HCCL; log-level only"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no meaning for HCCL; harmless leftover"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL picks the root-info NIC by its own rule; only matters on multi-node hosts where that choice is wrong"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total", "torch_cuda_api", "replace", True,
      'npu-smi info > "$WORK_DIR/npus_node${NODE_RANK}.txt"',
      "nvidia-smi does not exist on an Ascend host; under set -e the launcher aborts before torchrun"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun \\", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun \\",
      "lists every device of an 8-card node, so ignoring it changes nothing (8 ranks use npu 0-7)"),
]),

E("arcface_requirements", "recognition/arcface_torch/requirement.txt", "explicit_replacement",
  "insightface arcface_torch requirement.txt", [
    C("=mxnet-cu112", "device_type", "replace", True, "mxnet",
      "mxnet is only used to read RecordIO; the CUDA 11.2 build needs libcudart at import and has no aarch64 wheel"),
    C("=onnxruntime-gpu", "device_type", "replace", False, "onnxruntime",
      "unconfirmed: CUDA build of ORT; on an NPU host it falls back to CPU (CANN EP build not covered by knowledge)"),
    C("--extra-index-url https://developer.download.nvidia.com/compute/redist", "unsupported_op_workaround",
      "removal", False, None, "NVIDIA index only serves DALI, which is bypassed on NPU"),
    C("=nvidia-dali-cuda110", "unsupported_op_workaround", "removal", False, None,
      "CUDA-only package with no Ascend build; optional (config.dali) and bypassed on NPU"),
]),

E("arcface_dist_sampler", "recognition/arcface_torch/utils/utils_distributed_sampler.py", "explicit_replacement",
  "insightface arcface_torch utils/utils_distributed_sampler.py (setup_seed, seed broadcast)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silently ignored without CUDA; torch.manual_seed above should already seed the NPU generator (unconfirmed)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "same: queued lazily and never run on an NPU host; reproducibility only"),
    C('def sync_random_seed(seed=None, device="cuda"):', "device_type", "replace", False,
      'def sync_random_seed(seed=None, device="npu"):',
      "default is never used by the in-file caller (it passes _comm_device()); other callers would hit it"),
    C('dist.get_backend() == "nccl"', "dist_backend", "replace", True,
      'if dist.is_available() and dist.is_initialized() and dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparison: on HCCL it is False, the seed tensor stays on CPU and dist.broadcast on the "
      "HCCL group fails (transfer_to_npu does not rewrite such comparisons)"),
    C('return torch.device("cuda", torch.cuda.current_device())', "device_type", "replace", True,
      'return torch.device("npu", torch.npu.current_device())', "collective tensor device"),
]),

E("arcface_speed_test", "recognition/arcface_torch/speed_test.py", "explicit_replacement",
  "arcface_torch backbone throughput benchmark (speed_test.py style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("major, minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "no SM capability on Ascend (CUDA call raises; the NPU one returns None and cannot be unpacked)"),
    C("if major >= 8 and torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported():", "ask the NPU directly whether bf16 is available"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
      "pass  # channels_last is not supported on NPU; keep contiguous NCHW",
      "msFmkTransplt lists channel_last as unsupported; opt-in flag, exact failure mode unconfirmed"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "unconfirmed: max-autotune relies on Triton autotuning of CUDA kernels; opt-in flag"),
    C('=with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.fp16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.fp16):',
      "cuda autocast is disabled on an NPU host, so --fp16 would silently benchmark fp32"),
    C('with torch.no_grad(), torch.autocast(device_type="cuda"', "amp", "replace", True,
      'with torch.no_grad(), torch.autocast(device_type="npu", dtype=amp_dtype, enabled=args.fp16):',
      "same for the inference timing path"),
    C('images = torch.randn(args.batch_size, 3, 112, 112, device="cuda")', "device_type", "replace", True,
      'images = torch.randn(args.batch_size, 3, 112, 112, device="npu")', "input tensor"),
    C("images = images.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace",
      False, "images = images.contiguous()", "paired with the channels_last model flag"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "timing events"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "timing events"),
    C('"peak_mem(GB)": torch.cuda.max_memory_allocated() / 1024 ** 3,', "torch_cuda_api", "replace", False,
      '"peak_mem(GB)": torch.npu.max_memory_allocated() / 1024 ** 3,', "reports 0 silently; log value only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "device selection"),
    C('print("device      :", torch.cuda.get_device_name(args.gpu))', "torch_cuda_api", "replace", True,
      'print("device      :", torch.npu.get_device_name(args.gpu))', "raises without CUDA"),
    C('print("torch       :", torch.__version__, "cuda", torch.version.cuda', "torch_cuda_api", "replace", False,
      'print("torch       :", torch.__version__, "torch_npu", torch_npu.__version__)',
      "prints None/None on the NPU host; cosmetic"),
]),

# ---------------------------------------------------------------------------------------------
# AdaFace (PyTorch Lightning)
# ---------------------------------------------------------------------------------------------

E("adaface_main", "AdaFace/main.py", "explicit_replacement",
  "mk-minchul/AdaFace main.py + config.py (pl.Trainer(gpus=..., accelerator='ddp'))", [
    C("from pytorch_lightning.plugins import DDPPlugin", "distributed_framework", "replace", False,
      "from pytorch_lightning.strategies import DDPStrategy",
      "only needed because the port moves to a Lightning version with strategies (unconfirmed path)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("gpus=hparams.gpus,", "device_type", "replace", True, "devices=hparams.gpus,",
      "Lightning refuses gpus=N when CUDA is unavailable (MisconfigurationException)"),
    C("accelerator=hparams.distributed_backend,", "distributed_framework", "replace", True,
      "accelerator=NPUAccelerator(),  # custom pl Accelerator over torch.npu",
      "'ddp' accelerator is CUDA-bound; Lightning has no built-in Ascend accelerator (replacement unconfirmed)"),
    C("precision=16 if hparams.use_16bit else 32,", "amp", "replace", True,
      'precision="16-mixed" if hparams.use_16bit else 32,',
      "Lightning 1.4 native AMP requires CUDA (raises on CPU/NPU); needs an NPU-aware precision plugin"),
    C("plugins=DDPPlugin(find_unused_parameters=False),", "dist_backend", "replace", True,
      'strategy=DDPStrategy(process_group_backend="hccl", find_unused_parameters=False),',
      "Lightning picks nccl/gloo itself; gloo cannot move NPU tensors, so name hccl explicitly"),
    C("args.gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpus = torch.npu.device_count()",
      "returns 0 on an NPU host -> batch size not split and training silently falls to CPU"),
]),

E("adaface_train_val", "AdaFace/train_val.py", "explicit_replacement",
  "mk-minchul/AdaFace train_val.py (LightningModule)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; only returns cached blocks"),
]),

E("adaface_utils", "AdaFace/utils.py", "explicit_replacement",
  "mk-minchul/AdaFace utils.py (maskrcnn-benchmark style pickled all_gather)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL collectives need NPU tensors"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device="npu")',
      "device string; int32 also keeps the size exchange inside the dtypes Ascend lists for all_gather"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", "replace",
      True, 'size_list = [torch.tensor([0], dtype=torch.int32, device="npu") for _ in range(world_size)]',
      "receive buffers"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device",
      "replace", True, 'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))',
      "receive buffers"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      "replace", True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")',
      "padding tensor"),
    C("dist.all_gather(tensor_list, tensor)", "unsupported_op_workaround", "replace", False,
      "dist.all_gather([t.view(torch.int8) for t in tensor_list], tensor.view(torch.int8))",
      "unconfirmed: Ascend's 2.7.1 table lists all_gather dtypes as bf16/fp16/fp32/int8/int32/bool (no uint8); "
      "gathering int8 views is bit-identical"),
]),

E("adaface_head", "AdaFace/head.py", "device_branch_or_abstraction",
  "mk-minchul/AdaFace head.py (AdaFace / ArcFace / CosFace margin heads)", []),

E("adaface_inference", "AdaFace/inference.py", "device_branch_or_abstraction",
  "mk-minchul/AdaFace inference.py + face_alignment.align (MTCNN on cuda:0)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("_mtcnn_model = mtcnn.MTCNN(device='cuda:0', crop_size=(112, 112))", "device_type", "replace", True,
      "_mtcnn_model = mtcnn.MTCNN(device='npu:0', crop_size=(112, 112))",
      "MTCNN moves its P/R/O-nets to this device string"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "device = 'cuda' if torch.cuda.is_available() else ('npu' if torch.npu.is_available() else 'cpu')",
      "unchanged it silently runs the whole model on CPU on an NPU host"),
]),

E("adaface_env", "AdaFace/environment.yml", "explicit_replacement",
  "mk-minchul/AdaFace environment.yml (conda, pytorch 1.8 + cudatoolkit 10.2)", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel is useless on Ascend"),
    C("- pytorch=1.8.0=py3.8_cuda10.2_cudnn7.6.5_0", "device_type", "replace", True, "- pytorch=2.1.0=*cpu*",
      "CUDA build string; torch_npu needs the CPU torch of exactly its own version (no torch_npu for 1.8.0)"),
    C("- torchvision=0.9.0=py38_cu102", "device_type", "replace", True, "- torchvision=0.16.0=*cpu*",
      "must match torch 2.1.0 and not be a CUDA build"),
    C("- cudatoolkit=10.2.89", "device_type", "removal", False, None,
      "CUDA runtime is dead weight on an NPU host (may also fail to resolve on aarch64 — unconfirmed)"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch_npu wheel paired with torch 2.1.0 (CANN 8.1.RC1)"),
    C("- pytorch-lightning==1.4.4", "distributed_framework", "replace", False, "- pytorch-lightning==2.1.4",
      "unconfirmed: 1.4.x predates pluggable accelerators/strategies needed for an NPU accelerator"),
]),

# ---------------------------------------------------------------------------------------------
# MagFace
# ---------------------------------------------------------------------------------------------

E("magface_trainer", "MagFace/run/trainer.py", "explicit_replacement",
  "IrvingMeng/MagFace run/trainer.py (imagenet-example style mp.spawn trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,",
      "default flows into dist.init_process_group(backend=args.dist_backend)"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "0 on an NPU host -> world_size 0 and mp.spawn(nprocs=0) starts nothing"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "distributed branch"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "distributed branch"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP without device_ids branch"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single-NPU, non-distributed", "single device branch"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
      "single device branch"),
    C("model = torch.nn.DataParallel(model).cuda()", "distributed_framework", "replace", True,
      "model = model.npu()  # nn.DataParallel is unsupported on Ascend; use --multiprocessing-distributed",
      "DataParallel ✘ on Ascend"),
    C("scale=args.arc_scale).cuda(args.gpu)", "tensor_to_device", "replace", False,
      "criterion = magface.MagLoss(args.l_a, args.u_a, args.l_margin, args.u_margin, scale=args.arc_scale).npu(args.gpu)",
      "MagLoss has no parameters or buffers, so Module.cuda() never touches CUDA and does not fail; ported for "
      "clarity"),
    C("from apex.optimizers import FusedSGD as SGD", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedSGD as SGD",
      "--fused-sgd path: CUDA apex is not installable on Ascend (ImportError)"),
    C("=checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "resume checkpoint: fails only if it was written on GPUs"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location string"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()",
      "disabled without CUDA -> fp16 grads unscaled once autocast runs on NPU"),
    C("input = input.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "input = input.npu(args.gpu, non_blocking=True)", "batch transfer"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "batch transfer"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "--amp-mode silently trains fp32 otherwise"),
]),

E("magface_models", "MagFace/models/magface.py", "explicit_replacement",
  "IrvingMeng/MagFace models/magface.py + inference/network_inf.py helpers", [
    C("=checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "released / trained MagFace weights are GPU-saved DDP state_dicts; non-cpu-mode load fails without CUDA"),
]),

E("magface_gen_feat", "MagFace/inference/gen_feat.py", "explicit_replacement",
  "IrvingMeng/MagFace inference/gen_feat.py (feature extraction to text list)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "ngpus_per_node = torch.npu.device_count()", "printed only; shows 0"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend; single-device feature extraction"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("embedding_feat = model(input[0])", "tensor_to_device", "replace", True,
      "embedding_feat = model(input[0] if args.cpu_mode else input[0].npu(non_blocking=True))",
      "DataParallel used to scatter the CPU batch onto the device; without it the input must be moved"),
]),

# ---------------------------------------------------------------------------------------------
# RetinaFace (biubug6/Pytorch_Retinaface)
# ---------------------------------------------------------------------------------------------

E("retinaface_train", "Pytorch_Retinaface/train.py", "explicit_replacement",
  "biubug6/Pytorch_Retinaface train.py (cfg['gpu_train'], DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("state_dict = torch.load(args.resume_net)", "tensor_to_device", "replace", False,
      "state_dict = torch.load(args.resume_net, map_location='cpu')",
      "resume weights: fail only when they were saved from GPU tensors"),
    C("net = torch.nn.DataParallel(net).cuda()", "distributed_framework", "replace", True,
      "net = net.npu()  # nn.DataParallel is unsupported on Ascend; use DDP for multi-card",
      "cfg_re50 sets ngpu=4, so this branch is the default for resnet50"),
    C("net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "model placement"),
    C("priors = priors.cuda()", "tensor_to_device", "replace", True, "priors = priors.npu()", "anchors"),
    C("images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()", "batch"),
    C("targets = [anno.cuda() for anno in targets]", "tensor_to_device", "replace", True,
      "targets = [anno.npu() for anno in targets]", "ground truth boxes"),
]),

E("retinaface_detect", "Pytorch_Retinaface/detect.py", "device_branch_or_abstraction",
  "biubug6/Pytorch_Retinaface detect.py (--cpu flag, device variable)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "device = torch.npu.current_device()", "raises without CUDA"),
    C("map_location=lambda storage, loc: storage.cuda(device))", "tensor_to_device", "replace", True,
      "pretrained_dict = torch.load(pretrained_path, map_location=f'npu:{device}')",
      "storage.cuda() fails on an NPU host"),
    C('device = torch.device("cpu" if args.cpu else "cuda")', "device_type", "replace", True,
      'device = torch.device("cpu" if args.cpu else "npu")', "everything below follows this variable"),
]),

E("retinaface_multibox", "Pytorch_Retinaface/layers/modules/multibox_loss.py", "explicit_replacement",
  "biubug6/Pytorch_Retinaface layers/modules/multibox_loss.py (GPU = cfg['gpu_train'])", [
    C("loc_t = loc_t.cuda()", "tensor_to_device", "replace", True, "loc_t = loc_t.npu()",
      "matched targets built on CPU then moved; GPU flag stays True in the config"),
    C("conf_t = conf_t.cuda()", "tensor_to_device", "replace", True, "conf_t = conf_t.npu()", "matched targets"),
    C("landm_t = landm_t.cuda()", "tensor_to_device", "replace", True, "landm_t = landm_t.npu()", "matched targets"),
    C("zeros = torch.tensor(0).cuda()", "tensor_to_device", "replace", True, "zeros = torch.tensor(0).npu()",
      "unconditional .cuda()"),
]),

# ---------------------------------------------------------------------------------------------
# SCRFD (insightface detection/scrfd, mmdet 2.x fork)
# ---------------------------------------------------------------------------------------------

E("scrfd_apis_train", "detection/scrfd/mmdet/apis/train.py", "explicit_replacement",
  "insightface detection/scrfd mmdet/apis/train.py (MMDataParallel / MMDistributedDataParallel)", [
    C("from mmcv.parallel import MMDataParallel, MMDistributedDataParallel", "distributed_framework", "replace",
      False, "from mmcv.device.npu import NPUDataParallel, NPUDistributedDataParallel",
      "unconfirmed: mmcv's CUDA wrappers scatter with CUDA streams; newer mmcv ships NPU wrappers"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silently ignored without CUDA; reproducibility only"),
    C("model = MMDistributedDataParallel(", "distributed_framework", "replace", False,
      "model = NPUDistributedDataParallel(", "unconfirmed, see import"),
    C("=model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model placement"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "raises without CUDA"),
    C("model = MMDataParallel(", "distributed_framework", "replace", False, "model = NPUDataParallel(",
      "unconfirmed, see import"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", "replace", True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "model placement"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "fps helper"),
    C("start_time = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_time = torch.npu.Event(enable_timing=True)", "fps helper"),
    C("end_time = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_time = torch.npu.Event(enable_timing=True)", "fps helper"),
]),

E("scrfd_runtime_cfg", "detection/scrfd/configs/_base_/default_runtime.py", "explicit_replacement",
  "insightface detection/scrfd configs/_base_/default_runtime.py (mmdet runtime config)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "passed to mmcv init_dist -> init_process_group(backend=...)"),
]),

# ---------------------------------------------------------------------------------------------
# insightface python package / face analysis / deployment
# ---------------------------------------------------------------------------------------------

E("insightface_model_zoo", "python-package/insightface/model_zoo/model_zoo.py", "device_branch_or_abstraction",
  "insightface python-package model_zoo/model_zoo.py (onnxruntime sessions, default providers)", [
    C("return ['CUDAExecutionProvider', 'CPUExecutionProvider']", "device_type", "replace", False,
      "return ['CANNExecutionProvider', 'CPUExecutionProvider']",
      "unconfirmed: ORT CANN EP not covered by knowledge; unchanged, ORT silently drops CUDA EP and runs on CPU"),
]),

E("face_pipeline_demo", "examples/face_search/face_search.py", "device_branch_or_abstraction",
  "FaceAnalysis(buffalo_l) detection + arcface_torch PyTorch embeddings gallery search", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("providers = [('CUDAExecutionProvider', {'device_id': args.gpu}), 'CPUExecutionProvider']", "device_type",
      "replace", False,
      "providers = [('CANNExecutionProvider', {'device_id': args.gpu}), 'CPUExecutionProvider']",
      "unconfirmed (ORT CANN EP); unchanged detection runs on CPU"),
    C("batch = batch.pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace", False,
      "batch = batch.to(self.device, non_blocking=True)",
      "unconfirmed: argument-less pin_memory() targets the CUDA host allocator in older torch; torch_npu "
      "(transfer_to_npu) has to rewrite it"),
    C("device = torch.device('cuda:%d' % args.gpu if args.gpu >= 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:%d' % args.gpu if args.gpu >= 0 else 'cpu')", "model / feature device"),
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "only gates a log line and the cudnn flag; unchanged they are skipped"),
    C("print('using', torch.cuda.get_device_name(device))", "torch_cuda_api", "replace", True,
      "print('using', torch.npu.get_device_name(device))", "raises whenever reached"),
]),

E("embedding_server", "deploy/embedding_server.py", "explicit_replacement",
  "FastAPI face-embedding service (insightface detector + arcface_torch recognizer, pynvml health)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "only a default, and the service uses device 0 either way"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "replace", False,
      "torch.npu.init()  # no NVML on Ascend; memory comes from torch.npu.mem_get_info",
      "guarded by try/except: /health just loses its GPU fields"),
    C('device = torch.device(f"cuda:{cfg.device_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{cfg.device_id}")', "module-level device used everywhere below"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "warm-up sync"),
    C('with self.lock, torch.autocast("cuda", dtype=torch.float16, enabled=cfg.fp16):', "amp", "replace", True,
      'with self.lock, torch.autocast("npu", dtype=torch.float16, enabled=cfg.fp16):',
      "FACE_FP16=1 default would silently serve fp32"),
    C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
      'providers = ["CANNExecutionProvider", "CPUExecutionProvider"]', "unconfirmed (ORT CANN EP)"),
    C('"allocated_mb": torch.cuda.memory_allocated(device) / 2 ** 20,', "torch_cuda_api", "replace", False,
      '"allocated_mb": torch.npu.memory_allocated(device) / 2 ** 20,', "returns 0 silently; health info"),
    C('"reserved_mb": torch.cuda.memory_reserved(device) / 2 ** 20,', "torch_cuda_api", "replace", False,
      '"reserved_mb": torch.npu.memory_reserved(device) / 2 ** 20,', "returns 0 silently; health info"),
    C('"device": torch.cuda.get_device_name(device),', "torch_cuda_api", "replace", True,
      '"device": torch.npu.get_device_name(device),', "/health would 500"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM handler; no-op without CUDA"),
]),

E("deploy_dockerfile", "deploy/Dockerfile", "explicit_replacement",
  "NGC-based Dockerfile for the face service (DALI, mmcv-full CUDA ops)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "NGC image has CUDA torch and no CANN; base image name/tag unconfirmed"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or --device)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
    C("RUN grep -v -E '^(torch|torchvision)==' /tmp/requirements-gpu.txt > /tmp/req.txt \\", "device_type",
      "replace", False, "RUN cp /tmp/requirements-gpu.txt /tmp/req.txt \\",
      "assumes the base image ships torch; a CANN-only base image does not, so torch/torch-npu must come from "
      "the requirements (depends on the chosen image)"),
    C("RUN pip install --extra-index-url https://developer.download.nvidia.com/compute/redist nvidia-dali-cuda120",
      "unsupported_op_workaround", "removal", False, None, "DALI is bypassed on NPU"),
    C("RUN pip install mmcv-full==1.7.1 -f https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html",
      "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.1 --no-binary mmcv-full",
      "cu121 wheel carries nvcc-built ops linked to libcudart; SCRFD imports mmcv.ops and fails. NPU build "
      "switch unconfirmed"),
    C("CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ASCEND_RT_VISIBLE_DEVICES=0",
      "device 0 is the default anyway"),
]),

E("deploy_requirements", "deploy/requirements-gpu.txt", "explicit_replacement",
  "requirements-gpu.txt of the face service (cu121 wheels, onnxruntime-gpu, nvidia-ml-py)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on the CPU torch build (x86 from the cpu index, aarch64 from PyPI)"),
    C("=# deep learning stack", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0"),
    C("torch==2.1.2+cu121", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build, and torch_npu pairs only with exact torch versions (2.1.0, not 2.1.2)"),
    C("torchvision==0.16.2+cu121", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build; follows torch 2.1.0"),
    C("onnxruntime-gpu==1.17.1", "device_type", "replace", False, "onnxruntime==1.17.1",
      "unconfirmed: CUDA build of ORT; falls back to CPU on an NPU host"),
    C("nvidia-ml-py==12.535.133", "unsupported_op_workaround", "removal", False, None,
      "NVML has no Ascend counterpart; the server guards its import"),
]),
