# Labels for probe162 (video-text retrieval / video-language models, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


TNPU = "import torch_npu"
SETENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------------------------
# CLIP4Clip
# ---------------------------------------------------------------------------------------------
E("c4c_main", "main_task_retrieval.py", "explicit_replacement",
  "CLIP4Clip main_task_retrieval.py (DDP launcher, init_device, eval with manual multi-GPU split)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU,
      "entry script; project pins torch 1.x where the NPU backend is only registered by importing torch_npu (autoload only since 2.5.1)"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")',
      "module-level init; NCCL is not available on an Ascend host, HCCL is the collective backend"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)",
      "seeding the CUDA generator is a silent no-op on NPU; torch.manual_seed above probably seeds the NPU generator too (unconfirmed); reproducibility only"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", "silent no-op without CUDA; reproducibility only"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "torch.cuda.set_device raises on a host without CUDA; each rank must bind its NPU before HCCL work"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu", local_rank)',
      "is_available() is False on NPU so the model silently lands on CPU and DDP(device_ids=[rank]) then fails"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "n_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host; the next line divides batch_size by n_gpu (ZeroDivisionError) and eval splitting uses it"),
    C("optimizer = BertAdam(optimizer_grouped_parameters, lr=args.lr, warmup=args.warmup_proportion,", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedBertAdam(optimizer_grouped_parameters, lr=args.lr, warmup=args.warmup_proportion,",
      "performance only: torch_npu.optim.NpuFusedBertAdam has the same warmup/t_total/b1/b2/e signature; support for schedule='warmup_cosine' unconfirmed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; only frees cached NPU blocks after porting"),
    C("devc = torch.device('cuda:{}'.format(str(dev_id)))", "device_type", "replace", True,
      "devc = torch.device('npu:{}'.format(str(dev_id)))",
      "eval spreads the similarity computation over local devices; a cuda device string fails on NPU"),
])

E("c4c_util", "util.py", "explicit_replacement",
  "CLIP4Clip util.py (threaded parallel_apply over model replicas)", [
    C("modules = nn.parallel.replicate(model, device_ids)", "unsupported_op_workaround", "replace", True,
      'modules = [copy.deepcopy(model).to("npu:{}".format(d)) for d in device_ids]',
      "replicate() broadcasts parameters through torch.cuda.comm/_broadcast_coalesced, the same CUDA-only path that makes nn.DataParallel unsupported on NPU"),
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(device):", "torch.cuda.device context switches the CUDA current device and fails without CUDA"),
])

E("c4c_until", "modules/until_module.py", "explicit_replacement",
  "CLIP4Clip modules/until_module.py (losses, AllGather autograd function)", [
    C("labels = torch.arange(sim_matrix.size(0)).long().cuda()", "tensor_to_device", "replace", True,
      "labels = torch.arange(sim_matrix.size(0), device=sim_matrix.device).long()",
      "hard-coded .cuda() in the loss; use the logits' device"),
])

E("c4c_modeling", "modules/modeling.py", "explicit_replacement",
  "CLIP4Clip modules/modeling.py (CLIP4Clip model, seqLSTM/seqTransf similarity heads)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      'with torch.autocast(device_type="npu", enabled=False):',
      "guard meant to keep logits in fp32; a CUDA autocast context does not switch off NPU autocast, but CLIP4Clip never enables autocast so today it is a no-op either way"),
])

E("c4c_run_sh", "scripts/run_msrvtt_seqTransf.sh", "explicit_replacement",
  "CLIP4Clip MSR-VTT fine-tuning launcher (torch.distributed.launch)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", False, SETENV,
      "CANN environment must be sourced before torch_npu loads; not needed if the shell/container already did it"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the device restriction silently disappears"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* variables have no effect on HCCL; log-level mapping is approximate (unconfirmed)"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL reads HCCL_SOCKET_IFNAME for the host NIC; single-node runs work without it"),
])

# ---------------------------------------------------------------------------------------------
# X-CLIP
# ---------------------------------------------------------------------------------------------
E("xclip_main", "main.py", "explicit_replacement",
  "X-CLIP main.py (video recognition with apex amp, DDP, multi-view test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU,
      "entry script on torch 1.x (no backend autoload)"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("texts = text_labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "texts = text_labels.npu(non_blocking=True)", ".cuda() fails without CUDA"),
    C('images = batch_data["imgs"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'images = batch_data["imgs"].npu(non_blocking=True)', ".cuda() fails without CUDA"),
    C('label_id = batch_data["label"].cuda(non_blocking=True)', "tensor_to_device", "replace", True,
      'label_id = batch_data["label"].npu(non_blocking=True)', ".cuda() fails without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize() initialises CUDA and raises on an NPU host"),
    C("memory_used = torch.cuda.max_memory_allocated() / (1024.0 * 1024.0)", "torch_cuda_api", "replace", False,
      "memory_used = torch.npu.max_memory_allocated() / (1024.0 * 1024.0)", "log only; reports 0 instead of failing"),
    C("text_inputs = text_labels.cuda()", "tensor_to_device", "replace", True, "text_inputs = text_labels.npu()",
      ".cuda() fails without CUDA"),
    C("tot_similarity = torch.zeros((b, config.DATA.NUM_CLASSES)).cuda()", "tensor_to_device", "replace", True,
      "tot_similarity = torch.zeros((b, config.DATA.NUM_CLASSES)).npu()", ".cuda() fails without CUDA"),
    C("label_id = label_id.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "label_id = label_id.npu(non_blocking=True)", ".cuda() fails without CUDA"),
    C("image_input = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image_input = image.npu(non_blocking=True)", ".cuda() fails without CUDA"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA; ranks must bind their NPU"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank)", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)",
      "NCCL unavailable on Ascend; HCCL"),
    C("torch.distributed.barrier(device_ids=[args.local_rank])", "dist_backend", "replace", False,
      "torch.distributed.barrier()",
      "older torch rejects barrier(device_ids=...) for non-NCCL backends; whether torch_npu/HCCL accepts it is unconfirmed"),
])

E("xclip_tools", "utils/tools.py", "explicit_replacement",
  "X-CLIP utils/tools.py (AverageMeter.sync, checkpoint helpers)", [
    C("val = torch.tensor(self.val).cuda()", "tensor_to_device", "replace", True, "val = torch.tensor(self.val).npu()",
      "tensor handed to HCCL all_reduce must live on the NPU"),
    C("sum_v = torch.tensor(self.sum).cuda()", "tensor_to_device", "replace", True, "sum_v = torch.tensor(self.sum).npu()",
      "same"),
    C("count = torch.tensor(self.count).cuda()", "tensor_to_device", "replace", True, "count = torch.tensor(self.count).npu()",
      "same (int64 all_reduce is supported by HCCL)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; only frees the NPU cache after porting"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "debug helper silently returns without reporting on NPU"),
    C("alloc = torch.cuda.memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 2 ** 20", "log only"),
    C("reserved = torch.cuda.memory_reserved() / 2 ** 20", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 2 ** 20", "log only"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 20", "log only"),
])

E("xclip_clip", "clip/clip.py", "device_branch_or_abstraction",
  "OpenAI CLIP clip/clip.py as vendored by X-CLIP / CLIP4Clip (load with JIT device patching)", [
    C('def load(name: str, device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "device_type", "replace", True,
      'def load(name: str, device: Union[str, torch.device] = "npu" if torch.npu.is_available() else "cpu", jit: bool = False, download_root: str = None):',
      "default device silently resolves to CPU on an NPU host (and the model is then cast to fp32)"),
])

# ---------------------------------------------------------------------------------------------
# VideoMAE / VideoMAE V2
# ---------------------------------------------------------------------------------------------
E("vmae_finetune", "run_class_finetuning.py", "explicit_replacement",
  "VideoMAE V2 run_class_finetuning.py (timm + optional DeepSpeed fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU, "entry script"),
    C("default='cuda',", "device_type", "replace", True, "default='npu',",
      "--device default feeds torch.device(args.device) and model.to(device)"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = True",
      "Ascend lists allow_tf32 as accepted (fp32 only); the NPU speed knob is HF32 (name from torch_npu, unconfirmed in knowledge); performance only"),
    C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.conv.allow_hf32 = True", "performance only; unconfirmed equivalence"),
])

E("vmae_engine", "engine_for_finetuning.py", "explicit_replacement",
  "VideoMAE V2 engine_for_finetuning.py (train/val/test loops)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "CUDA autocast warns and disables itself on an NPU host, so mixed precision silently turns off"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', "autocast for the wrong device type is a no-op on NPU tensors"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", "same as training autocast"),
])

E("vmae_utils", "utils.py", "explicit_replacement",
  "VideoMAE V2 utils.py (SmoothedValue, MetricLogger, init_distributed_mode, NativeScalerWithGradNormCount, DeepSpeed config)", [
    C("dtype=torch.float64,", "unsupported_op_workaround", "replace", True, "dtype=torch.float32,",
      "the buffer is all_reduce'd; Ascend's list gives HCCL all_reduce as bf16/fp16/fp32/int32/int64/bool only (no fp64)"),
    C("device='cuda')", "tensor_to_device", "replace", True, "device='npu')",
      "metric sync tensor on a cuda device fails on NPU"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "use_cuda = torch.npu.is_available()",
      "only controls whether max-mem is logged"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "log only"),
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "exports 0 under SLURM on NPU; nothing in this tree reads LOCAL_SIZE"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "backend string fed to init_process_group"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "self._scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself on an NPU host; state_dict() is then empty and the engine's loss_scaler.state_dict()['scale'] raises KeyError"),
])

E("vmae_slurm_sh", "scripts/finetune/vit_b_k400_ft.sh", "explicit_replacement",
  "VideoMAE V2 SLURM fine-tuning launcher (srun, DeepSpeed)", [
    C("export OMP_NUM_THREADS=1", "import_torch_npu", "npu_only_addition", False, SETENV,
      "srun propagates the sourced CANN environment to the tasks; unnecessary if the job environment already has it"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", "removal", False, None,
      "NCCL InfiniBand tuning has no HCCL effect (HCCL uses the NPU's own RoCE NICs)"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no effect on HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING"),
    C("--gres=gpu:${GPUS_PER_NODE} \\", "device_type", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
      "GRES name is cluster-specific; Ascend Slurm sites usually define an npu GRES (unconfirmed)"),
])

# ---------------------------------------------------------------------------------------------
# VideoCLIP / MMPT (fairseq examples)
# ---------------------------------------------------------------------------------------------
E("mmpt_extract", "scripts/video_feature_extractor/extract.py", "explicit_replacement",
  "VideoCLIP (fairseq examples/MMPT) S3D/ResNet feature extractor, HowTo100M style", [
    C("=import torch as th", "import_torch_npu", "npu_only_addition", True, TNPU, "entry script"),
    C("model_data = th.load(args.resnext101_model_path)", "tensor_to_device", "replace", True,
      "model_data = th.load(args.resnext101_model_path, map_location='cpu')",
      "the released 3D-ResNeXt checkpoint holds CUDA tensors; deserialising without map_location fails when CUDA is unavailable"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("features = th.cuda.FloatTensor(n_chunk, 512).fill_(0)", "torch_cuda_api", "replace", True,
      "features = th.zeros(n_chunk, 512, device='npu')", "torch.cuda tensor types allocate on a CUDA device"),
    C("features = th.cuda.LongTensor(n_chunk, 1024).fill_(0)", "torch_cuda_api", "replace", True,
      "features = th.zeros(n_chunk, 1024, dtype=th.long, device='npu')", "same"),
    C("features = th.cuda.FloatTensor(n_chunk, 2048).fill_(0)", "torch_cuda_api", "replace", True,
      "features = th.zeros(n_chunk, 2048, device='npu')", "same"),
    C("video_batch = video[min_ind:max_ind:factor].cuda()", "tensor_to_device", "replace", True,
      "video_batch = video[min_ind:max_ind:factor].npu()", ".cuda() fails without CUDA"),
])

E("mmpt_retri", "mmpt/modules/retri.py", "device_branch_or_abstraction",
  "VideoCLIP (MMPT) mmpt/modules/retri.py (faiss vector retriever with optional GPU index)", [])

E("mmpt_retritask", "mmpt/tasks/retritask.py", "explicit_replacement",
  "VideoCLIP (MMPT) mmpt/tasks/retritask.py (retrieval-augmented batch construction)", [
    C("sample = fairseq_utils.move_to_cuda(sample)", "tensor_to_device", "replace", True,
      'sample = fairseq_utils.apply_to_sample(lambda t: t.to("npu", non_blocking=True), sample)',
      "fairseq's move_to_cuda calls tensor.cuda() (device defaults to torch.cuda.current_device())"),
])

# ---------------------------------------------------------------------------------------------
# Frozen in Time
# ---------------------------------------------------------------------------------------------
E("frozen_base_trainer", "base/base_trainer.py", "explicit_replacement",
  "Frozen-in-Time base/base_trainer.py (pytorch-template trainer with DataParallel)", [
    C("self.model = torch.nn.DataParallel(model, device_ids=device_ids)", "distributed_framework", "replace", True,
      "self.model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[self.device.index])",
      "nn.DataParallel is unsupported on NPU (Ascend list ✘); reached as soon as the device count is ported; needs a DDP launch"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "returns 0, so training silently runs on CPU"),
    C("device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if n_gpu_use > 0 else 'cpu')", "cuda device string"),
    C("checkpoint = torch.load(resume_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(resume_path, map_location='cpu')",
      "checkpoints were saved from a CUDA model; torch.load without map_location fails on a host without CUDA"),
])

E("frozen_parse_config", "parse_config.py", "explicit_replacement",
  "Frozen-in-Time parse_config.py (ConfigParser, -d/--device flag)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.device',
      "the -d flag silently stops restricting devices on NPU"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<all>")', "env_var", "replace", False,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "<all>")', "only a summary string"),
])

E("frozen_env", "environment.yml", "explicit_replacement",
  "Frozen-in-Time conda environment.yml", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only serves CUDA packages"),
    C("=- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "there is no torch_npu release for torch 1.12 (compatibility matrix: 1.11.0, 2.1.0, ...); use the CPU build"),
    C("=- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "must match the torch bump"),
    C("=- cudatoolkit=11.3", "import_torch_npu", "removal", True, None,
      "makes conda resolve the CUDA build of pytorch; torch_npu pairs with the CPU build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "torch_npu wheel matching torch 2.1.0"),
    C("=- pynvml==11.4.1", "import_torch_npu", "removal", False, None,
      "NVML needs the NVIDIA driver; nothing in this probe calls it"),
])

# ---------------------------------------------------------------------------------------------
# ALPRO
# ---------------------------------------------------------------------------------------------
E("alpro_ret", "src/tasks/run_video_retrieval.py", "explicit_replacement",
  "ALPRO src/tasks/run_video_retrieval.py (Horovod + apex amp fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU, "entry script"),
    C("import horovod.torch as hvd", "distributed_framework", "replace", False,
      "import torch.distributed as dist  # Horovod -> torch.distributed with hccl",
      "Horovod has no HCCL backend as far as I know; not covered by the knowledge base (unconfirmed)"),
    C('device = torch.device("cuda", hvd.local_rank())', "device_type", "replace", True,
      'device = torch.device("npu", hvd.local_rank())', "cuda device"),
    C("torch.cuda.set_device(hvd.local_rank())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(hvd.local_rank())", "raises without CUDA"),
    C('LOGGER.info(f"peak GPU mem {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")', "torch_cuda_api", "replace", False,
      'LOGGER.info(f"peak NPU mem {torch.npu.max_memory_allocated() / 2 ** 30:.2f} GiB")', "log only"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "cuda device"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("hvd.init()", "distributed_framework", "replace", False,
      'dist.init_process_group(backend="hccl")', "follows the Horovod decision above (unconfirmed)"),
])

E("alpro_dataloader", "src/datasets/dataloader.py", "explicit_replacement",
  "ALPRO/UNITER src/datasets/dataloader.py (MetaLoader, CUDA-stream PrefetchLoader)", [
    C("return batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "return batch.npu(non_blocking=True)", ".cuda() fails without CUDA"),
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream())", "CUDA stream API"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "CUDA stream API"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream API"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
])

E("alpro_distributed", "src/utils/distributed.py", "explicit_replacement",
  "ALPRO/UNITER src/utils/distributed.py (Horovod all_gather_list / any_broadcast)", [
    C("from horovod import torch as hvd", "distributed_framework", "replace", False,
      "import torch.distributed as dist",
      "same Horovod decision as the task script (unconfirmed); a torch.distributed port must also avoid uint8 all_gather, which Ascend does not list"),
    C("buffer_ = torch.cuda.ByteTensor(max_size+enc_byte)", "torch_cuda_api", "replace", True,
      "buffer_ = torch.zeros(max_size+enc_byte, dtype=torch.uint8, device='npu')", "torch.cuda tensor type"),
    C("buffer_ = torch.cuda.ByteTensor(enc_size+enc_byte)", "torch_cuda_api", "replace", True,
      "buffer_ = torch.zeros(enc_size+enc_byte, dtype=torch.uint8, device='npu')", "torch.cuda tensor type"),
    C("max_size = hvd.allgather(torch.tensor([enc_size]).cuda()).max().item()", "tensor_to_device", "replace", True,
      "max_size = hvd.allgather(torch.tensor([enc_size]).npu()).max().item()", ".cuda() fails without CUDA"),
    C("max_size = hvd.allgather(torch.tensor([len(enc)]).cuda()).max().item()", "tensor_to_device", "replace", True,
      "max_size = hvd.allgather(torch.tensor([len(enc)]).npu()).max().item()", ".cuda() fails without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# Video-LLaVA / Video-ChatGPT
# ---------------------------------------------------------------------------------------------
E("vllava_builder", "videollava/model/builder.py", "device_branch_or_abstraction",
  "Video-LLaVA videollava/model/builder.py (load_pretrained_model, bitsandbytes, towers)", [
    C('def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map="auto", device="cuda", cache_dir=None, use_flash_attn=False, **kwargs):',
      "device_type", "replace", True,
      'def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map="auto", device="npu", cache_dir=None, use_flash_attn=False, **kwargs):',
      "default device is used for image_tower/video_tower .to(device=...)"),
    C('if device != "cuda":', "device_type", "replace", False, 'if device != "npu":',
      "with the literal left as 'cuda' every NPU run pins the whole model to one device instead of device_map='auto'"),
    C("kwargs['load_in_8bit'] = True", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('LLM.int8 is not available on Ascend NPU; use --load-4bit')",
      "only with --load-8bit; bitsandbytes NPU work covers NF4 only, 8-bit is not listed (unconfirmed either way)"),
    C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", "replace", True,
      "kwargs['attn_implementation'] = 'sdpa'",
      "flash-attn cannot be installed on NPU; transformers recommends sdpa there (PR #36383)"),
])

E("vllava_cli", "videollava/serve/cli.py", "explicit_replacement",
  "Video-LLaVA videollava/serve/cli.py (interactive video chat)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU, "entry script on torch 2.0.1 (no autoload)"),
    C("input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).cuda()",
      "tensor_to_device", "replace", True,
      "input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).to(model.device)",
      ".cuda() fails without CUDA"),
    C('parser.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu")', "default device flag"),
])

E("vllava_finetune_sh", "scripts/v1_5/finetune_lora.sh", "explicit_replacement",
  "Video-LLaVA LoRA fine-tuning launcher (deepspeed + HF Trainer flags)", [
    C("cd /path/to/Video-LLaVA", "import_torch_npu", "npu_only_addition", False, SETENV,
      "CANN environment; unnecessary if already sourced"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "no effect on HCCL"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator setting is ignored on NPU; torch_npu reads PYTORCH_NPU_ALLOC_CONF (memory/fragmentation only)"),
    C("--tf32 True \\", "device_capability_check", "replace", True, "--tf32 False \\",
      "TrainingArguments raises '--tf32 requires Ampere or a newer GPU arch' when the CUDA TF32 check fails (transfer_to_npu patches is_torch_tf32_available for this reason)"),
])

E("vllava_pyproject", "pyproject.toml", "explicit_replacement",
  "Video-LLaVA / LLaVA pyproject.toml", [
    C('"torch==2.0.1", "torchvision==0.15.2",', "import_torch_npu", "npu_only_addition", True,
      '"torch-npu==2.0.1.post1",', "torch_npu wheel for torch 2.0.1 (v2.0.1-5.0.0 line; EOL, a torch bump is advisable)"),
    C('"transformers==4.31.0", "tokenizers>=0.12.1,<0.14", "sentencepiece==0.1.99", "shortuuid",', "distributed_framework", "replace", True,
      '"transformers==4.32.0", "tokenizers>=0.12.1,<0.14", "sentencepiece==0.1.99", "shortuuid",',
      "native NPU support in transformers starts at 4.32.0; 4.31's Trainer never selects an NPU"),
    C('"accelerate==0.21.0", "peft==0.4.0", "bitsandbytes==0.41.0",', "distributed_framework", "replace", True,
      '"accelerate==0.22.0", "peft==0.5.0", "bitsandbytes==0.41.0",',
      "accelerate >= 0.22.0 / peft >= 0.5.0 are the first NPU-aware releases (device_map={'': 'npu'}, infer_device)"),
    C('train = ["deepspeed==0.9.5", "ninja", "wandb"]', "distributed_framework", "replace", False,
      'train = ["deepspeed>=0.10.1", "ninja", "wandb"]',
      "deepspeed_npu only supports 0.9.2; the first upstream release with the NPU accelerator is unconfirmed"),
    C('flash = ["flash-attn==2.3.3"]', "attention_kernel", "removal", False, None,
      "flash-attn cannot be installed on NPU; optional extra, fails only if requested"),
])

E("vchatgpt_flash", "video_chatgpt/train/llama_flash_attn_monkey_patch.py", "kernel_rewrite",
  "Video-ChatGPT (FastChat-derived) LLaMA flash-attention monkey patch", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU,
      "the rewritten forward calls torch_npu.npu_fusion_attention directly"),
    C("from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU"),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", "replace", True,
      "from video_chatgpt.train.bert_padding import unpad_input, pad_input",
      "the padding helpers are pure torch but ship inside flash-attn; vendor them"),
    C("output = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output = torch_npu.npu_fusion_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2], self.num_heads, "TND", atten_mask=torch.triu(torch.ones(2048, 2048, device=qkv.device), 1).bool(), scale=self.head_dim ** -0.5, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist(), sparse_mode=3)[0]',
      "varlen causal FA -> npu_fusion_attention TND layout with cumulative seq lengths"),
    C("output_unpad = flash_attn_unpadded_qkvpacked_func(", "attention_kernel", "replace", True,
      'output_unpad = torch_npu.npu_fusion_attention(x_unpad[:, 0], x_unpad[:, 1], x_unpad[:, 2], nheads, "TND", atten_mask=torch.triu(torch.ones(2048, 2048, device=x_unpad.device), 1).bool(), scale=x_unpad.shape[-1] ** -0.5, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist(), sparse_mode=3)[0]',
      "same, padded path"),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "cuda_major, cuda_minor = 8, 0  # SM capability check is CUDA-only; npu_fusion_attention handles D <= 768",
      "raises without CUDA (and returns None under transfer_to_npu, which breaks the tuple unpacking)"),
])

E("vchatgpt_model_utils", "video_chatgpt/eval/model_utils.py", "explicit_replacement",
  "Video-ChatGPT video_chatgpt/eval/model_utils.py (decord loading, model init, inference)", [
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("low_cpu_mem_usage=True).cuda()", "tensor_to_device", "replace", True, "low_cpu_mem_usage=True).npu()",
      ".cuda() fails without CUDA"),
    C("image_tensor = image_tensor.half().cuda()", "tensor_to_device", "replace", True,
      "image_tensor = image_tensor.half().npu()", ".cuda() fails without CUDA"),
    C("input_ids = torch.as_tensor(inputs.input_ids).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.as_tensor(inputs.input_ids).npu()", ".cuda() fails without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# InternVideo2 (multi_modality) + video decoding
# ---------------------------------------------------------------------------------------------
E("iv2_retrieval", "tasks/retrieval.py", "device_branch_or_abstraction",
  "InternVideo2 multi_modality tasks/retrieval.py (stage-2 / retrieval fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, TNPU, "entry script (__main__)"),
    C('device = config.get("device", "cuda")', "device_type", "replace", True, 'device = config.get("device", "npu")',
      "default accelerator name; with 'cuda' the helper falls back to CPU on an NPU host"),
    C('if device.startswith("cuda") and not torch.cuda.is_available():', "device_type", "add_branch", False,
      'if device.startswith("npu") and not torch.npu.is_available():',
      "add the NPU availability check next to the CUDA one; with device='npu' the CUDA branch is simply skipped"),
    C('if device == "cuda" and config.distributed:', "device_type", "add_branch", False,
      'if device in ("cuda", "npu") and config.distributed:',
      "torch.device('npu') already resolves to the device bound by set_device, so the explicit index is cosmetic"),
    C('fused=config.optimizer.get("fused", True),', "fused_optimizer", "replace", False,
      'fused=False,  # or torch_npu.optim.NpuFusedAdamW',
      "torch 2.1 AdamW(fused=True) checks p.is_cuda; an NPU _fused_adamw_ kernel exists, but whether the Python check accepts NPU params is unconfirmed"),
    C('with torch.autocast(device_type="cuda", enabled=config.use_half_precision, dtype=data_type):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", enabled=config.use_half_precision, dtype=data_type):',
      "cuda autocast does not cast NPU ops; bf16/fp16 training silently runs in fp32"),
    C("torch.backends.cuda.enable_flash_sdp(enabled=True)", "attention_kernel", "removal", False, None,
      "Ascend marks enable_flash_sdp ✘; the flag has no effect there (SDPA picks the NPU FA itself)"),
    C("torch.backends.cuda.enable_mem_efficient_sdp(enabled=True)", "attention_kernel", "removal", False, None,
      "✘ on NPU; no effect"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = True", "performance only; HF32 knob name unconfirmed in knowledge"),
    C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.conv.allow_hf32 = True", "performance only; unconfirmed"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune relies on Triton GEMM templates (has_triton is False for NPU inductor); behaviour unconfirmed, opt-in flag"),
    C("loss_scaler = NativeScaler()", "amp", "replace", True, 'loss_scaler = NativeScaler(device="npu")',
      "timm's NativeScaler builds a CUDA GradScaler that disables itself on NPU, so the fp16 path trains without loss scaling (needs a timm with the device argument)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("with torch.cuda.amp.autocast(enabled=config.use_half_precision, dtype=data_type):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.use_half_precision, dtype=data_type):",
      "evaluation silently in fp32 otherwise"),
])

E("iv2_video_utils", "dataset/video_utils.py", "explicit_replacement",
  "InternVideo2 / Frozen-in-Time dataset/video_utils.py (av/decord/gif readers plus NVDEC readers)", [
    C("video_reader = VideoReader(video_path, ctx=decord.gpu(local_rank), num_threads=1)", "device_type", "replace", True,
      "video_reader = VideoReader(video_path, ctx=decord.cpu(0), num_threads=1)",
      "decord's GPU context needs a CUDA (NVDEC) build of decord; no Ascend backend, decode on CPU"),
    C('reader = torchvision.io.VideoReader(video_path, "video", device="cuda")', "device_type", "replace", True,
      'reader = torchvision.io.VideoReader(video_path, "video")',
      "torchvision GPU decoding needs an NVDEC-enabled CUDA build"),
])

E("iv2_dali", "dataset/dali_loader.py", "explicit_replacement",
  "NVIDIA DALI GPU video pipeline (fn.readers.video) as used for fast video pre-training", [
    C("from nvidia.dali import pipeline_def", "unsupported_op_workaround", "replace", False,
      "from dataset.video_utils import VIDEO_READER_FUNCS  # DALI GPU decoding -> decord CPU workers",
      "DALI has no Ascend backend; whether the import itself succeeds on an NPU host is unconfirmed, the GPU pipeline below cannot run"),
    C('device="gpu",', "device_type", "replace", True, 'device="cpu",',
      "the GPU (NVDEC) video reader needs a CUDA device"),
    C("device_id=local_rank,", "device_type", "replace", True, "device_id=None,",
      "DALI device_id selects a CUDA device; a CPU-only pipeline needs None"),
    C("local_rank = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "local_rank = torch.npu.current_device()", "raises without CUDA"),
])

E("iv2_requirements", "requirements.txt", "explicit_replacement",
  "InternVideo2-style requirements.txt (CUDA wheels, kernels, DALI, faiss-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs install the CPU torch wheel on x86 (plain PyPI on aarch64); that a cu118 build actually breaks torch_npu is unconfirmed"),
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "torch_npu wheel matching torch 2.1.0"),
    C("=flash-attn==2.3.6", "attention_kernel", "removal", True, None, "cannot be installed on NPU"),
    C("=xformers==0.0.23", "attention_kernel", "removal", False, None,
      "no NPU backend; dead dependency unless model code calls memory_efficient_attention"),
    C("=triton==2.1.0", "triton_kernel_tuning", "removal", False, None,
      "no Triton kernels in this tree; triton-ascend is the NPU counterpart if any are added"),
    C("apex @ git+https://github.com/NVIDIA/apex.git@23.08", "custom_cuda_extension", "replace", False,
      "apex @ git+https://gitee.com/ascend/apex.git",
      "NVIDIA apex fused kernels are CUDA extensions; Ascend's apex patch is the NPU build (URL illustrative)"),
    C("=nvidia-dali-cuda110==1.31.0", "unsupported_op_workaround", "removal", False, None,
      "DALI GPU decoding cannot run on NPU; removal goes with the dali_loader port"),
    C("=faiss-gpu==1.7.2", "unsupported_op_workaround", "replace", False, "faiss-cpu==1.7.4",
      "GPU faiss is CUDA-only; the retriever already falls back to a CPU index"),
    C("=nvidia-ml-py==12.535.108", "torch_cuda_api", "removal", False, None, "NVML has no NPU equivalent; unused here"),
])

E("iv2_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "InternVideo2-style training Dockerfile on the NGC PyTorch image", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", "replace", True,
      "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "NGC image carries CUDA torch and no CANN; start from a CANN image and pip-install torch + torch_npu"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6 9.0+PTX"', "env_var", "removal", False, None, "CUDA build knob, no effect"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "CUDA build knob, no effect once CUDA extensions are gone"),
    C("RUN pip install --no-cache-dir flash-attn==2.3.6 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on NPU"),
    C("csrc/layer_norm", "custom_cuda_extension", "removal", True, None, "nvcc-built fused layer-norm kernel"),
    C("csrc/rotary", "custom_cuda_extension", "removal", True, None, "nvcc-built rotary kernel"),
    C("cmake .. -DUSE_CUDA=ON -DCMAKE_BUILD_TYPE=Release && \\", "custom_cuda_extension", "replace", True,
      "cmake .. -DUSE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release && \\",
      "NVDEC build needs the CUDA toolkit, absent from a CANN image"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "no effect on HCCL"),
    C("ENV NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "no effect on HCCL"),
])
