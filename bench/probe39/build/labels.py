"""Labels for probe39 (hand-written synthetic upstream files, video understanding; see ../README.md).

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

IMPORT_NOTE = ("torch.npu.* / the npu device need torch_npu loaded (autoloaded since torch_npu 2.5.1, "
               "explicit import still recommended)")

E("slowfast_distributed", "slowfast/utils/distributed.py", "device_branch_or_abstraction",
  "facebookresearch/SlowFast slowfast/utils/distributed.py (process groups, gloo side group, pickled all_gather)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('dist_backend="nccl",', "dist_backend", R, True, 'dist_backend="hccl",',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "torch.cuda.set_device raises without a CUDA build; one process per NPU"),
    C('if dist.get_backend() == "nccl":', "dist_backend", R, True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten by transfer_to_npu (mstt README); with hccl the gloo side "
      "group is silently skipped and pickled objects go through HCCL"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", R, True, 'assert backend in ["gloo", "nccl", "hccl"]',
      "the assertion fails when the group's backend is hccl"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", R, True,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "non-gloo groups need the byte tensor on the accelerator; 'cuda' fails on an NPU host"),
])

E("slowfast_misc", "slowfast/utils/misc.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/utils/misc.py (model analysis inputs, memory stats, nvidia-smi dump)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("mem_usage_bytes = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "mem_usage_bytes = torch.npu.max_memory_allocated()",
      "on a build without CUDA the uninitialised CUDA allocator reports 0: memory logs silently wrong"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "the _cuda_resetPeakMemoryStats binding is missing without CUDA; NPU form exists"),
    C("model_inputs[i] = model_inputs[i].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "model_inputs[i] = model_inputs[i].npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("bbox = bbox.cuda()", "tensor_to_device", R, True, "bbox = bbox.npu()", "Tensor.cuda fails on an NPU host"),
    C('os.system("nvidia-smi")', "device_type", R, False, 'os.system("npu-smi info")',
      "only prints 'command not found' on an NPU host; npu-smi is the counterpart (knowledge §6)"),
])

E("slowfast_multigrid", "slowfast/utils/multigrid.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/utils/multigrid.py (long/short-cycle schedule; device-agnostic, no change needed)",
  [])

E("slowfast_test_net", "tools/test_net.py", "explicit_replacement",
  "facebookresearch/SlowFast tools/test_net.py (multi-view test, AVA detection branch, throughput timing)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("=inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs = inputs.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("labels = labels.cuda()", "tensor_to_device", R, True, "labels = labels.npu()",
      "Tensor.cuda fails on an NPU host"),
    C("video_idx = video_idx.cuda()", "tensor_to_device", R, True, "video_idx = video_idx.npu()",
      "Tensor.cuda fails on an NPU host"),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "val[i] = val[i].npu(non_blocking=True)", "AVA meta (boxes) to the device"),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "meta[key] = val.npu(non_blocking=True)", "AVA meta (boxes, ori_boxes, metadata) to the device"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize asserts 'Torch not compiled with CUDA' on an NPU host"),
    C("torch.cuda.synchronize()  # wait for the forward pass", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the forward pass",
      "NPU ops are queued asynchronously too; the timing needs the NPU sync"),
])

POOL3D_NOTE = ("nn.AvgPool3d is ✘ in Ascend's 2.7.1 API table and on msFmkTransplt's unsupported list, yet op-plugin "
               "registers avg_pool3d kernels — unconfirmed which holds on the target; optional rewrite")

E("slowfast_head_helper", "slowfast/models/head_helper.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/models/head_helper.py (AVA RoI head with detectron2 ROIAlign, 3D avg-pool heads)", [
    C("from detectron2.layers import ROIAlign", "unsupported_op_workaround", R, False,
      "from torchvision.ops import RoIAlign as ROIAlign; import torchvision_npu  # noqa",
      "detectron2's ROIAlign calls torchvision's roi_align; the NPU kernel comes from torchvision_npu (knowledge §6) — "
      "without it CPU fallback or failure, unconfirmed"),
    C("temporal_pool = nn.AvgPool3d([pool_size[pathway][0], 1, 1], stride=1)", "unsupported_op_workaround", R, False,
      "temporal_pool = nn.AdaptiveAvgPool3d((1, None, None))  # T-pool to 1 frame", POOL3D_NOTE),
    C("avg_pool = nn.AvgPool3d(pool_size[pathway], stride=1)", "unsupported_op_workaround", R, False,
      "avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1)) if self.training else nn.AvgPool3d(pool_size[pathway], stride=1)",
      POOL3D_NOTE),
])

E("slowfast_contrastive", "slowfast/models/contrastive.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/models/contrastive.py (MoCo video SSL with shuffle-BN and a feature queue)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.softmax = nn.Softmax(dim=1).cuda()", "tensor_to_device", R, True,
      "self.softmax = nn.Softmax(dim=1)", "Module.cuda fails without CUDA; Softmax has no state, so no device needed"),
    C("idx_randperm = torch.randperm(x.shape[0]).cuda()", "tensor_to_device", R, True,
      "idx_randperm = torch.randperm(x.shape[0], device=x.device)",
      "the permutation must live on the NPU for the HCCL broadcast; Tensor.cuda fails"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=False):',
      "disabling CUDA autocast does not leave an NPU autocast region: the logits would still be computed under "
      "NPU fp16 autocast"),
    C("labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()", "tensor_to_device", R, True,
      "labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)",
      "Tensor.cuda fails on an NPU host"),
])

E("slowfast_defaults", "slowfast/config/defaults.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/config/defaults.py (yacs/fvcore CfgNode defaults, reduced)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", R, True, '_C.DIST_BACKEND = "hccl"',
      "passed straight to init_process_group by launch_job/mpu.run; NCCL is not available on Ascend"),
])

E("slowfast_predictor", "slowfast/visualization/predictor.py", "explicit_replacement",
  "facebookresearch/SlowFast slowfast/visualization/predictor.py (demo predictor + Detectron2 person detector)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.gpu_id = torch.cuda.current_device() if gpu_id is None else gpu_id", "torch_cuda_api", R, True,
      "self.gpu_id = torch.npu.current_device() if gpu_id is None else gpu_id",
      "torch.cuda.current_device initialises CUDA and raises on an NPU host"),
    C("inputs[i] = inputs[i].cuda(", "tensor_to_device", R, True, "inputs[i] = inputs[i].npu(",
      "Tensor.cuda fails on an NPU host"),
    C("=device=torch.device(self.gpu_id), non_blocking=True", "device_type", R, True,
      'device=torch.device("npu", self.gpu_id), non_blocking=True',
      "torch.device(<int>) means cuda:<int>"),
    C("inputs = inputs.cuda(device=torch.device(self.gpu_id), non_blocking=True)", "tensor_to_device", R, True,
      'inputs = inputs.npu(device=torch.device("npu", self.gpu_id), non_blocking=True)',
      "Tensor.cuda and the int-indexed torch.device both resolve to CUDA"),
    C("=gpu_id = torch.cuda.current_device()", "torch_cuda_api", R, True, "gpu_id = torch.npu.current_device()",
      "torch.cuda.current_device raises on an NPU host"),
    C('self.cfg.MODEL.DEVICE = "cuda:{}".format(gpu_id)', "device_type", R, True,
      'self.cfg.MODEL.DEVICE = "npu:{}".format(gpu_id) if cfg.NUM_GPUS > 0 else "cpu"',
      "detectron2 moves the detector to MODEL.DEVICE; 'cuda:N' fails on an NPU host"),
])

E("mmaction_recognizer3d", "mmaction/models/recognizers/recognizer3d.py", "explicit_replacement",
  "open-mmlab/mmaction2 (1.x) models/recognizers/recognizer3d.py (device-agnostic; no change needed)", [])

E("mmaction_train_api", "mmaction/apis/train.py", "device_branch_or_abstraction",
  "open-mmlab/mmaction2 (0.x) mmaction/apis/train.py (mmcv MMDataParallel / MMDistributedDataParallel, Fp16OptimizerHook)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("def init_random_seed(seed=None, device='cuda', distributed=True):", "device_type", R, True,
      "def init_random_seed(seed=None, device='npu', distributed=True):",
      "tools/train.py calls it with the default device; the broadcast tensor is created on 'cuda' when world_size > 1"),
    C("model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = build_ddp(model, cfg.device, device_ids=[int(os.environ['LOCAL_RANK'])], ...)  # NPUDistributedDataParallel",
      "mmcv's scatter path builds CUDA streams; mmcv >= 1.7 ships an NPU DDP wrapper (mmcv.device.npu) — "
      "unconfirmed, not in the knowledge files"),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "Module.cuda fails on an NPU host"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device raises on an NPU host"),
    C("model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "distributed_framework", R, True,
      "model = build_dp(model, 'npu', device_ids=cfg.gpu_ids)  # single-NPU wrapper",
      "MMDataParallel is DataParallel (✘ on Ascend) and Module.cuda fails; NPU runs use one process per device"),
    C("optimizer_config = Fp16OptimizerHook(", "amp", R, False,
      "optimizer_config = Fp16OptimizerHook(  # mmcv build with NPU-aware GradScaler / loss scaling",
      "mmcv's Fp16OptimizerHook builds torch.cuda.amp.GradScaler on torch >= 1.6, which is disabled for NPU "
      "tensors — unconfirmed which mmcv version handles NPU"),
])

E("mmaction_videomaev2_cfg",
  "configs/recognition/videomaev2/vit-base-p16_videomaev2-vit-g-dist-k710-pre_16x4x1_kinetics-400.py",
  "explicit_replacement",
  "open-mmlab/mmaction2 (1.x) VideoMAE V2 fine-tune config with inlined default_runtime (env_cfg, AmpOptimWrapper)", [
    C("dist_cfg=dict(backend='nccl'))", "dist_backend", R, False, "dist_cfg=dict(backend='hccl'))",
      "NCCL is unavailable on Ascend, but mmengine's init_dist is believed to pick hccl itself when an NPU is "
      "present — unconfirmed, so labelled optional"),
])

E("videomae_run_pretraining", "run_mae_pretraining.py", "explicit_replacement",
  "MCG-NJU/VideoMAE run_mae_pretraining.py (argparse entry script, DDP, NativeScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C("parser.add_argument('--device', default='cuda',", "device_type", R, True,
      "parser.add_argument('--device', default='npu',",
      "torch.device(args.device) then model.to(device): 'cuda' fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "a silent no-op without CUDA; the NPU cache is simply not emptied"),
])

E("videomae_engine_pretrain", "engine_for_pretraining.py", "explicit_replacement",
  "MCG-NJU/VideoMAE engine_for_pretraining.py (tube-masked reconstruction loop under CUDA autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", R, True, 'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "CUDA autocast is inactive for NPU tensors: the model silently runs in fp32 while the GradScaler path "
      "expects fp16"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize asserts without a CUDA build"),
])

E("videomae_utils", "utils.py", "explicit_replacement",
  "MCG-NJU/VideoMAE utils.py (DeiT/BEiT-style metric logger, init_distributed_mode with SLURM/OMPI, NativeScaler)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "the metric all_reduce tensor is created on 'cuda'; fp64 over HCCL is unconfirmed (float32 would be safe)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "torch.cuda.set_device raises without a CUDA build"),
    C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'",
      "NCCL does not exist on Ascend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      'self._scaler = torch.amp.GradScaler("npu")  # or torch.npu.amp.GradScaler()',
      "the CUDA GradScaler disables itself without CUDA: fp16 training runs without loss scaling"),
])

FA_NOTE = ("flash-attn cannot be installed on Ascend (knowledge §6); varlen packed QKV maps to "
           "torch_npu.npu_fusion_attention with input_layout='TND' and cumulative actual_seq_qlen/kvlen")

E("internvideo2_flash_attn", "models/backbones/internvideo2/flash_attention_class.py", "kernel_rewrite",
  "OpenGVLab/InternVideo InternVideo2 flash_attention_class.py + ViT block (flash-attn varlen, fused RMSNorm)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the ported attention calls torch_npu.npu_fusion_attention"),
    C("from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func", "attention_kernel", X, True,
      None, FA_NOTE),
    C("from flash_attn.bert_padding import unpad_input, pad_input", "attention_kernel", R, True,
      "from .bert_padding import unpad_input, pad_input  # torch-only copies of the helpers",
      "unguarded flash-attn import: the module cannot be imported on an NPU host"),
    C("from flash_attn.ops.rms_norm import DropoutAddRMSNorm", "npu_fused_op", R, True,
      "from .npu_norm import DropoutAddRMSNorm  # prenorm residual add + torch_npu.npu_add_rms_norm",
      "flash-attn's fused dropout-add-RMSNorm is a Triton/CUDA kernel; npu_add_rms_norm returns (y, rstd, x1+x2)"),
    C("assert qkv.is_cuda", "device_type", R, True, 'assert qkv.device.type == "npu"',
      "is_cuda is False for NPU tensors, so the assertion fails"),
    C("=output = flash_attn_varlen_qkvpacked_func(", "attention_kernel", R, True,
      "output = torch_npu.npu_fusion_attention(q, k, v, nheads, 'TND', keep_prob=1 - dropout_p, "
      "scale=self.softmax_scale or d ** -0.5, actual_seq_qlen=cu_seqlens[1:].tolist(), "
      "actual_seq_kvlen=cu_seqlens[1:].tolist())[0]", FA_NOTE),
    C("output_unpad = flash_attn_varlen_qkvpacked_func(", "attention_kernel", R, True,
      "output_unpad = torch_npu.npu_fusion_attention(q, k, v, nheads, 'TND', ..., "
      "actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]", FA_NOTE),
    C("output = flash_attn_varlen_qkvpacked_func(  # already packed varlen", "attention_kernel", R, True,
      "output = torch_npu.npu_fusion_attention(*qkv.unbind(1), qkv.shape[-2], 'TND', ...)[0]  # already packed varlen",
      FA_NOTE),
])

E("timesformer_vit", "timesformer/models/vit.py", "explicit_replacement",
  "facebookresearch/TimeSformer timesformer/models/vit.py (divided space-time attention; here on F.scaled_dot_product_attention)",
  [])

E("uniformer_train_net", "video_classification/tools/train_net.py", "explicit_replacement",
  "Sense-X/UniFormer video_classification/tools/train_net.py (SlowFast trainer + timm NativeScaler AMP, MixUp, precise BN)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("inputs[i] = inputs[i].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs[i] = inputs[i].npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("=inputs = inputs.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs = inputs.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("=labels = labels.cuda()", "tensor_to_device", R, True, "labels = labels.npu()",
      "Tensor.cuda fails on an NPU host"),
    C("val[i] = val[i].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "val[i] = val[i].npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("meta[key] = val.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "meta[key] = val.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):", "amp", R, True,
      'with torch.autocast(device_type="npu", enabled=cfg.TRAIN.MIXED_PRECISION):',
      "CUDA autocast is inactive for NPU tensors: MIXED_PRECISION silently trains in fp32"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C("inputs[k] = inputs[k].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs[k] = inputs[k].npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("inputs = inputs.cuda(non_blocking=True)  # eval", "tensor_to_device", R, True,
      "inputs = inputs.npu(non_blocking=True)  # eval", "Tensor.cuda fails on an NPU host"),
    C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "labels = labels.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("inputs[j] = inputs[j].cuda(non_blocking=True)", "tensor_to_device", R, True,
      "inputs[j] = inputs[j].npu(non_blocking=True)", "precise-BN loader; Tensor.cuda fails on an NPU host"),
    C("inputs = inputs.cuda(non_blocking=True)  # precise bn", "tensor_to_device", R, True,
      "inputs = inputs.npu(non_blocking=True)  # precise bn", "Tensor.cuda fails on an NPU host"),
    C("loss_scaler = NativeScaler()", "amp", R, True,
      'loss_scaler = NativeScaler(device="npu")  # newer timm; or a wrapper over torch.amp.GradScaler("npu")',
      "timm's NativeScaler wraps torch.cuda.amp.GradScaler, which disables itself without CUDA (no loss scaling); "
      "the device argument exists only in newer timm releases (unconfirmed for the pinned version)"),
])

DECORD_NOTE = ("decord's gpu() context needs a decord build with CUDA/NVDEC; on Ascend decode on the CPU (or DVPP "
               "through torchvision_npu, unconfirmed) and move the clip to the NPU")

E("decord_gpu_dataset", "datasets/kinetics_gpu.py", "explicit_replacement",
  "VideoMAE/InternVideo-style Kinetics dataset decoding with decord NVDEC and nvJPEG (torchvision.io.decode_jpeg on CUDA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("self.gpu_id = torch.cuda.current_device() if gpu_id is None else gpu_id", "torch_cuda_api", R, True,
      "self.gpu_id = torch.npu.current_device() if gpu_id is None else gpu_id",
      "torch.cuda.current_device raises on an NPU host"),
    C('self.device = torch.device("cuda", self.gpu_id)', "device_type", R, True,
      'self.device = torch.device("npu", self.gpu_id)', "mean/std and clips are placed on this device"),
    C("vr = VideoReader(fname, num_threads=1, ctx=gpu(self.gpu_id))", "device_type", R, True,
      "vr = VideoReader(fname, num_threads=1, ctx=cpu(0))", DECORD_NOTE),
    C("buffer = vr.get_batch(list(all_index))", "tensor_to_device", R, True,
      "buffer = vr.get_batch(list(all_index)).to(self.device, non_blocking=True)",
      "once decoding is on the CPU the clip has to be moved before the NPU-side augmentation"),
    C("self.device = gpu_id if gpu_id is not None else 0", "device_type", R, True,
      'self.device = torch.device("npu", gpu_id if gpu_id is not None else 0)',
      "Tensor.to(<int>) targets cuda:<int>"),
    C('frames = decode_jpeg(datas, mode=ImageReadMode.RGB, device="cuda")', "device_type", R, True,
      "frames = [f.to(self.device) for f in decode_jpeg(datas, mode=ImageReadMode.RGB)]",
      "device='cuda' uses nvJPEG; decode on the CPU (torchvision_npu's DVPP backend is an option, unconfirmed)"),
])

DALI_NOTE = ("DALI's GPU/mixed operators need an NVIDIA GPU and DALI has no Ascend backend (not covered by the "
             "knowledge files); the port keeps DALI as a CPU-only pipeline and moves batches to the NPU")

E("dali_video_loader", "datasets/dali_video.py", "explicit_replacement",
  "NVIDIA DALI video_label / frame-folder pipelines as used by video-classification trainers (DALIGenericIterator)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("videos, label = fn.readers.video(", "unsupported_op_workaround", R, True,
      "videos, label = fn.experimental.readers.video(",
      "fn.readers.video decodes with NVDEC only; the CPU-capable reader is experimental and takes a reduced "
      "argument set (DALI-version dependent, unconfirmed)"),
    C('device="gpu",', "device_type", R, True, 'device="cpu",', DALI_NOTE),
    C('images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)', "device_type", R, True,
      'images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)',
      "'mixed' decoding uses nvJPEG on the GPU"),
    C("device_id=self.local_rank,", "device_type", R, True, "device_id=None,  # CPU-only DALI pipeline",
      "a DALI pipeline with a device_id initialises CUDA at build()"),
    C('data = batch[0]["data"]', "tensor_to_device", R, True,
      'data = batch[0]["data"].to(f"npu:{self.local_rank}", non_blocking=True)',
      "a CPU-only pipeline returns host tensors"),
    C("label = label.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "label = label.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "torch.cuda.set_device raises without a CUDA build"),
])

E("tv_gpu_extract_frames", "tools/data/extract_frames_gpu.py", "explicit_replacement",
  "MMAction2-style tools/data frame extraction rewritten on torchvision's NVDEC VideoReader + nvJPEG encode_jpeg", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C('parser.add_argument("--device", type=str, default="cuda:0"', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu:0"', "default device is CUDA"),
    C("encoded = encode_jpeg(list(frames), quality=quality)", "unsupported_op_workaround", R, False,
      "encoded = encode_jpeg([f.cpu() for f in frames], quality=quality)",
      "torchvision's JPEG encoder has CPU and CUDA (nvJPEG) paths only; what it does with NPU tensors "
      "(CPU fallback or error) is unconfirmed"),
    C('reader = VideoReader(path, "video", device=device)', "device_type", R, True,
      'reader = VideoReader(path, "video")  # decode on the CPU, frames moved with .to(device)',
      "GPU decoding in VideoReader is NVDEC-only"),
    C('torchvision.set_video_backend("cuda")', "unsupported_op_workaround", R, True,
      'torchvision.set_video_backend("pyav")',
      "the 'cuda' video backend needs torchvision built with NVDEC; there is no NPU video backend"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "torch.cuda.set_device raises without a CUDA build"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize asserts without a CUDA build"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize asserts without a CUDA build"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2**20", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated(device) / 2**20",
      "memory_stats of an NPU device through torch.cuda is invalid (uninitialised CUDA reports 0 or rejects the device)"),
])

E("video_reader_backends", "video_readers/backends.py", "device_branch_or_abstraction",
  "video-loading utility module in the pytorchvideo/decord style: PyAV/decord/VPF readers + side-stream prefetcher", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('=def __init__(self, path, device="cuda"):', "device_type", R, True,
      'def __init__(self, path, device="npu"):', "readers move clips to this default device; 'cuda' fails"),
    C('def __init__(self, path, device="cuda", num_threads=4):', "device_type", R, True,
      'def __init__(self, path, device="npu", num_threads=4):', "default device is CUDA"),
    C('def __init__(self, samples, backend=None, device="cuda", clip_len=16, stride=4):', "device_type", R, True,
      'def __init__(self, samples, backend=None, device="npu", clip_len=16, stride=4):', "default device is CUDA"),
    C("self.stream = torch.cuda.Stream(device=self.device)", "torch_cuda_api", R, True,
      "self.stream = torch.npu.Stream(device=self.device)", "CUDA streams cannot be created on an NPU host"),
    C("clip = reader.read(self._indices(n)).pin_memory()", "pin_memory", R, False,
      'clip = reader.read(self._indices(n)).pin_memory(device="npu")',
      "unconfirmed whether a bare Tensor.pin_memory() pins for the NPU under torch_npu (transfer_to_npu wraps it)"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "CUDA stream context on an NPU host fails"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)",
      "torch.cuda.current_stream with an NPU device fails"),
    C("clip.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "clip.record_stream(torch.npu.current_stream(self.device))",
      "the NPU tensor must be recorded on an NPU stream"),
])

E("alphaction_setup", "setup.py", "kernel_rewrite",
  "MVIG-SJTU/AlphAction setup.py (maskrcnn-benchmark-style CppExtension/CUDAExtension selection, FORCE_CUDA)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension", "custom_cuda_extension", A, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only needed if the ROIAlign3d/ROIPool3d kernels are re-written in Ascend C (knowledge §6: NpuExtension)"),
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", B, False,
      'elif os.getenv("BUILD_NPU", "0") == "1":  # NpuExtension + csrc/npu/*.cpp (Ascend C)',
      "on an NPU host the condition is False and the CPU-only _C still builds; the failure surfaces at the "
      "Python call sites (labelled in alphaction/layers/roi_align_3d.py)"),
])

C_NOTE = ("alphaction._C is a CUDA/C++ extension: built CPU-only on an NPU host, its CPU kernels cannot read NPU "
          "memory; re-express with torchvision/torch_npu ops (roi_align over T*C channels) or an Ascend C kernel")

E("alphaction_roi_align_3d", "alphaction/layers/roi_align_3d.py", "kernel_rewrite",
  "MVIG-SJTU/AlphAction alphaction/layers/roi_align_3d.py + roi_pool_3d.py (autograd Functions over the _C extension)", [
    C("from alphaction import _C", "custom_cuda_extension", R, True,
      "from torchvision.ops import roi_align, roi_pool; import torchvision_npu  # noqa", C_NOTE),
    C("output = _C.roi_align_3d_forward(", "custom_cuda_extension", R, True,
      "output = roi_align(input.flatten(1, 2), roi, output_size, spatial_scale, sampling_ratio, aligned=False)"
      ".view(roi.size(0), ch, l, *output_size)  # or torch_npu.npu_roi_align", C_NOTE),
    C("grad_input = _C.roi_align_3d_backward(", "custom_cuda_extension", R, True,
      "grad_input = None  # backward comes from autograd through roi_align once forward is re-expressed", C_NOTE),
    C("output, argmax = _C.roi_pool_3d_forward(", "custom_cuda_extension", R, True,
      "output = roi_pool(input.flatten(1, 2), roi, output_size, spatial_scale).view(roi.size(0), ch, l, *output_size)",
      C_NOTE),
    C("grad_input = _C.roi_pool_3d_backward(", "custom_cuda_extension", R, True,
      "grad_input = None  # autograd through roi_pool", C_NOTE),
])

LOAD_NOTE = ("checkpoints written on GPUs hold CUDA tensors; torch.load without map_location raises "
             "'Attempting to deserialize object on a CUDA device' on a host without CUDA")

E("tsm_main", "main.py", "explicit_replacement",
  "mit-han-lab/temporal-shift-module main.py (TSN/TSM trainer on nn.DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C("model = torch.nn.DataParallel(model, device_ids=args.gpus).cuda()", "distributed_framework", R, True,
      "model = torch.nn.parallel.DistributedDataParallel(model.npu(), device_ids=[local_rank])  "
      "# after torch.npu.set_device + init_process_group('hccl'); .module keeps working",
      "nn.DataParallel is ✘ on Ascend (knowledge §2.8/§3.7) and Module.cuda fails"),
    C("optimizer = torch.optim.SGD(policies,", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedSGD(policies,",
      "performance only: msFmkTransplt advises the NPU fused SGD"),
    C("checkpoint = torch.load(args.resume)", "device_type", R, True,
      "checkpoint = torch.load(args.resume, map_location='cpu')", LOAD_NOTE),
    C("sd = torch.load(args.tune_from)", "device_type", R, True,
      "sd = torch.load(args.tune_from, map_location='cpu')", LOAD_NOTE),
    C("criterion = torch.nn.CrossEntropyLoss().cuda()", "tensor_to_device", R, True,
      "criterion = torch.nn.CrossEntropyLoss().npu()", "Module.cuda fails on an NPU host"),
    C("=target = target.cuda()", "tensor_to_device", R, True, "target = target.npu(non_blocking=True)",
      "Tensor.cuda fails on an NPU host"),
    C("input_var = torch.autograd.Variable(input)", "tensor_to_device", R, True,
      "input_var = input.npu(non_blocking=True)",
      "DataParallel scattered the CPU batch itself; without it the clip batch must be moved explicitly"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "target = target.npu(non_blocking=True)", "Tensor.cuda fails on an NPU host"),
    C("=output = model(input)", "tensor_to_device", R, True, "output = model(input.npu(non_blocking=True))",
      "validation relied on DataParallel's scatter to move the CPU batch"),
])

TUNE_NOTE = ("num_warps/num_stages are GPU occupancy knobs; under triton-ascend the kernel needs porting and "
             "re-tuning (knowledge §6) — exact knobs unconfirmed, performance only")

E("tsm_triton_shift", "ops/temporal_shift_triton.py", "kernel_rewrite",
  "mit-han-lab/temporal-shift-module TemporalShift re-implemented as an autotuned Triton kernel with a custom autograd Function", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "the ported launcher uses torch.npu.device"),
    C('triton.Config({"BLOCK_HW": 256}, num_warps=2, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_HW": 256}),', TUNE_NOTE),
    C('triton.Config({"BLOCK_HW": 512}, num_warps=4, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_HW": 512}),', TUNE_NOTE),
    C('triton.Config({"BLOCK_HW": 1024}, num_warps=8, num_stages=3),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_HW": 1024}),', TUNE_NOTE),
    C('triton.Config({"BLOCK_HW": 2048}, num_warps=8, num_stages=4),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_HW": 2048}),', TUNE_NOTE),
    C('vals = tl.load(x_ptr + src, mask=mask & valid, other=0.0, eviction_policy="evict_first")',
      "triton_kernel_tuning", R, False, "vals = tl.load(x_ptr + src, mask=mask & valid, other=0.0)",
      "cache eviction hints are a GPU L2 detail; their meaning under triton-ascend is unconfirmed"),
    C('grid = lambda meta: (nt * c, triton.cdiv(hw, meta["BLOCK_HW"]))', "triton_kernel_tuning", R, False,
      "grid = (num_vector_cores,)  # loop over (plane, hw-block) pairs inside the kernel",
      "one program per plane launches N*T*C programs; triton-ascend is believed to prefer a grid near the "
      "AI-core count — unconfirmed"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", R, True, "with torch.npu.device(x.device):",
      "torch.cuda.device with an NPU tensor's device fails"),
    C("if torch.cuda.get_device_capability(x.device) < _MIN_CAPABILITY:", "device_capability_check", R, True,
      'if x.device.type != "npu":  # triton-ascend path only on the NPU',
      "compute capability is a CUDA notion; on NPU torch.cuda.get_device_capability fails (torch_npu's own "
      "returns None unless TORCH_NPU_DEVICE_CAPABILITY is set)"),
    C('x = torch.randn(2 * 8, 64, 14, 14, device="cuda", requires_grad=True)', "device_type", R, True,
      'x = torch.randn(2 * 8, 64, 14, 14, device="npu", requires_grad=True)', "self-test creates CUDA tensors"),
])

E("x3d_hub_benchmark", "demo/x3d_inference.py", "explicit_replacement",
  "facebookresearch/pytorchvideo X3D torch.hub tutorial turned into a latency benchmark (autocast, compile, CUDA events)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C('parser.add_argument("--device", default="cuda",', "device_type", R, True,
      'parser.add_argument("--device", default="npu",', "model.to('cuda') fails on an NPU host"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      "model = torch.compile(model)  # inductor on torch_npu >= 2.6, or backend=\"npugraphs\"",
      "torch.compile is ✔ on NPU; mode='max-autotune' leans on GPU Triton autotuning/CUDA graphs — NPU behaviour "
      "unconfirmed"),
    C('torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16)', "amp", R, True,
      'with torch.no_grad(), torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.fp16):',
      "a CUDA autocast region leaves NPU ops in fp32: --fp16 is silently ignored"),
    C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # finish warm-up", "torch.cuda.synchronize asserts without a CUDA build"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize asserts without a CUDA build"),
])

E("videomae_requirements", "requirements.txt", "explicit_replacement",
  "VideoMAE / InternVideo2-style requirements.txt pinned to cu118 wheels with flash-attn, DALI, cupy, pynvml", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "pulls CUDA wheels; Ascend x86 hosts use the CPU index, aarch64 plain PyPI (knowledge §1.1)"),
    C("torch==2.0.1+cu118", "import_torch_npu", R, True, "torch==2.1.0  +  torch-npu==2.1.0.post17",
      "torch_npu pairs with a same-version CPU/aarch64 torch (torch-npu 2.1.0.post17 <-> torch 2.1.0 per the matrix); "
      "no torch_npu exists for a +cu118 build"),
    C("torchvision==0.15.2+cu118", "device_type", R, True, "torchvision==0.16.0",
      "the +cu118 build drags CUDA torch 2.0.1 back in; torchvision_npu's table pairs 0.16.0 with torch 2.1"),
    C("torchaudio==2.0.2+cu118", "device_type", R, True, "torchaudio==2.1.0",
      "pins CUDA torch 2.0.1, conflicting with the torch/torch-npu pair"),
    C("deepspeed==0.9.5", "distributed_framework", R, False, "deepspeed>=0.10  # NPU accelerator (hccl)",
      "upstream DeepSpeed has an NPU accelerator; the legacy deepspeed_npu plugin pins 0.9.2 — which release "
      "first works on NPU is unconfirmed"),
    C("flash-attn==2.3.6", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on Ascend (it builds CUDA kernels); attention goes through torch_npu"),
    C("triton==2.0.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "only needed where Triton kernels are used; triton-ascend is the NPU backend (knowledge §6)"),
    C("nvidia-dali-cuda110>=1.28", "unsupported_op_workaround", R, False,
      "nvidia-dali-cuda110>=1.28  # CPU-only pipelines, or drop DALI for decord",
      "whether the CUDA DALI wheel is usable CPU-only on an Ascend host is unconfirmed"),
    C("cupy-cuda11x>=12.0", "custom_cuda_extension", X, False, None,
      "cupy has no Ascend support (knowledge §6); the wheel installs but every device call needs CUDA"),
    C("pynvml>=11.5", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart; torch.npu.utilization / mem_get_info or npu-smi instead (knowledge §6)"),
])

E("videomae_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "VideoMAE/InternVideo-style training Dockerfile (nvidia/cuda devel base, decord built with NVDEC, apex --cuda_ext)", [
    C("ARG CUDA_VERSION=11.8.0", "device_type", R, False, "ARG CANN_VERSION=8.0.0",
      "only feeds the CUDA base-image tag"),
    C("ARG CUDNN=8", "device_type", X, False, None, "only feeds the CUDA base-image tag"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn${CUDNN}-devel-ubuntu20.04", "device_type", R, True,
      "FROM <Ascend CANN / torch_npu base image for ${CANN_VERSION}>",
      "no CANN toolkit or NPU driver libraries in a CUDA image; exact Ascend image tag unconfirmed"),
    C("ENV DEBIAN_FRONTEND=noninteractive", "env_var", A, False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest  # + source set_env.sh in the entrypoint",
      "CANN's set_env.sh must be sourced unless the base image already does it"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX"', "custom_cuda_extension", X, False, None,
      "meaningless without nvcc"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", X, False, None,
      "forces CUDAExtension builds in FORCE_CUDA-aware setup.py files (mmcv/detectron2 style), which then fail "
      "without nvcc"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "read by the NVIDIA container runtime only; the Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video", "env_var", X, False, None,
      "NVIDIA container runtime setting"),
    C("RUN pip install torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118",
      "import_torch_npu", R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install torch-npu==2.1.0.post17",
      "CUDA torch wheels and no torch_npu"),
    C("COPY third_party/Video_Codec_SDK_12.0.16/Interface/ /usr/local/cuda/include/", "custom_cuda_extension", X,
      False, None, "NVDEC headers only serve the CUDA decord build"),
    C("COPY third_party/Video_Codec_SDK_12.0.16/Lib/linux/stubs/x86_64/ /usr/local/cuda/lib64/stubs/",
      "custom_cuda_extension", X, False, None, "NVDEC stubs only serve the CUDA decord build"),
    C("cmake .. -DUSE_CUDA=ON -DCMAKE_BUILD_TYPE=Release && \\", "custom_cuda_extension", R, True,
      "cmake .. -DUSE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release && \\",
      "the CUDA/NVDEC build of decord needs the CUDA toolkit: the image build fails"),
    C('--config-settings "--build-option=--cpp_ext" --config-settings "--build-option=--cuda_ext" ./',
      "fused_optimizer", R, True, '--config-settings "--build-option=--cpp_ext" ./  # or Ascend apex (patched build)',
      "apex --cuda_ext compiles CUDA kernels with nvcc: fails on an Ascend image; NPU fused optimizers come from "
      "torch_npu / Ascend apex"),
    C("ENV NCCL_DEBUG=WARN", "env_var", R, False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3",
      "ignored by HCCL"),
])

E("videomae_slurm_sh", "scripts/kinetics/slurm_finetune_vit_b.sh", "explicit_replacement",
  "MCG-NJU/VideoMAE scripts/*/slurm fine-tune launcher (srun, NCCL over InfiniBand)", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "unconfirmed: Slurm GRES naming for NPUs is site-specific (knowledge: no Ascend Slurm integration found)"),
    C("export OMP_NUM_THREADS=1", "env_var", A, False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment, unless the nodes' login profile already sources it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "the Ascend runtime reads ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not honoured"),
    C("export NCCL_DEBUG=INFO", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "ignored by HCCL"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "4-node job: without HCCL_SOCKET_IFNAME HCCL picks the first non-docker/lo NIC by name, which may not reach "
      "the root node (knowledge: HCCL env vars)"),
    C("export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "env_var", X, False, None,
      "HCCL uses the NPUs' own RoCE ports, not the host HCAs"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "no HCCL counterpart needed"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog switch is HCCL_ASYNC_ERROR_HANDLING"),
    C("export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=${DEBUG:-0}",
      "debug-only synchronous launch switch"),
    C("nvidia-smi --query-gpu=index,name,memory.used --format=csv", "device_type", R, False, "npu-smi info",
      "command not found on an NPU node: the job's last command fails, so the job ends with a non-zero status"),
])

E("videomae_k8s_job", "deploy/k8s/videomae-finetune-pytorchjob.yaml", "explicit_replacement",
  "Kubeflow PyTorchJob manifest for multi-node VideoMAE fine-tuning (NVIDIA device plugin, GPU node selector)", [
    C("runtimeClassName: nvidia", "device_type", R, True, "runtimeClassName: ascend  # if the cluster defines one",
      "pods are rejected on nodes without an 'nvidia' RuntimeClass; Ascend Docker Runtime naming is unconfirmed"),
    C("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "device_type", R, True,
      "accelerator: huawei-Ascend910",
      "this node selector never matches an NPU node, so the job stays Pending; label name unconfirmed"),
    C("- key: nvidia.com/gpu", "device_type", R, False, "- key: huawei.com/Ascend910",
      "a toleration that matches nothing is harmless"),
    C("image: registry.example.com/video/videomae:cu118-py39", "device_type", R, True,
      "image: registry.example.com/video/videomae:cann-torchnpu2.1-py39",
      "the CUDA image has no CANN / torch_npu"),
    C("- name: NCCL_DEBUG", "env_var", R, False, "- name: ASCEND_GLOBAL_LOG_LEVEL", "ignored by HCCL"),
    C("- name: NCCL_SOCKET_IFNAME", "env_var", R, False, "- name: HCCL_SOCKET_IFNAME",
      "multi-node NIC selection for HCCL"),
    C("nvidia.com/gpu: 8", "device_type", R, True, "huawei.com/Ascend910: 8",
      "extended-resource name of the NPU device plugin (Ascend Device Plugin; exact name unconfirmed); requesting "
      "nvidia.com/gpu never schedules on NPU nodes"),
])

E("actionformer_train_utils", "libs/utils/train_utils.py", "explicit_replacement",
  "happyharrycn/actionformer_release libs/utils/train_utils.py (seeding, optimizer groups, EMA, train/valid loops)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA; torch.manual_seed above already seeds registered device backends"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", X, False, None,
      "cuBLAS-only determinism switch; no effect on NPU"),
    C("optimizer = optim.SGD(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedSGD(",
      "performance only (msFmkTransplt advice)"),
    C("optimizer = optim.AdamW(", "fused_optimizer", R, False, "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "performance only; the fused AdamW is faster at a memory cost (msFmkTransplt advice)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize asserts without a CUDA build"),
])

E("videomaev2_extract_tad", "extract_tad_feature.py", "explicit_replacement",
  "OpenGVLab/VideoMAEv2 extract_tad_feature.py (sliding-window ViT-g feature extraction, here with bf16 autocast and SDPA backend pinning)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE + "; entry script"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "Module.cuda fails on an NPU host"),
    C("input_data = frame_q.unsqueeze(0).cuda()", "tensor_to_device", R, True,
      "input_data = frame_q.unsqueeze(0).npu()", "Tensor.cuda fails on an NPU host"),
    C('with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):', "amp", R, True,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.bfloat16, enabled=args.bf16):',
      "a CUDA autocast region does not cover NPU ops: --bf16 silently runs fp32"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):",
      "attention_kernel", X, True, None,
      "torch.backends.cuda.sdp_kernel is ✘ on Ascend (API table, msFmkTransplt list); SDPA already dispatches to "
      "the NPU fused attention, so the context manager is dropped"),
])
