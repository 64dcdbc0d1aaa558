"""Labels for probe22 (hand-written synthetic upstream files; see ../README.md).

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

TM = "torch-npu-migration.md"
TSV = "ops/torch_api_npu_support_2.7.1.tsv"
MSTT = "ops/mstt_unsupported_torch_apis_2.7.txt"
DIST = "ascend-distributed.md"
IMP = C  # alias kept short below

# ---------------------------------------------------------------- BERT
E("bert_run_pretraining", "PyTorch/LanguageModeling/BERT/run_pretraining.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples BERT run_pretraining.py (FusedLAMB, allreduce_post_accumulation, dllogger)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "ported file uses torch_npu.optim / npu device; " + TM + " §1.1"),
    C("=import amp_C", "custom_cuda_extension", X, True, None,
      "amp_C is an apex CUDA extension; not built by Ascend apex, msFmkTransplt deletes it (" + TM + " §3.4, §6)"),
    C("=import apex_C", "custom_cuda_extension", X, True, None,
      "apex C/CUDA extension, not part of Ascend apex patch (" + TM + " §6)"),
    C("from apex.optimizers import FusedLAMB", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedLamb",
      "FusedLAMB needs apex CUDA kernels; torch_npu.optim.NpuFusedLamb is the NPU counterpart (" + TM + " §5)"),
    C("from apex.multi_tensor_apply import multi_tensor_applier", "custom_cuda_extension", X, False, None,
      "import is pure Python and may succeed, but its only use is with amp_C kernels; removed together with them"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "BERT pretraining requires at least one NPU"',
      "torch.cuda.is_available() is False on an NPU host; assert aborts"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "cuda device string"),
    C("args.n_gpu = torch.cuda.device_count()", "torch_cuda_api", R, True, "args.n_gpu = torch.npu.device_count()",
      "returns 0 on NPU host"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "per-rank device binding; CUDA call fails / binds nothing on NPU"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", R, True,
      'device = torch.device("npu", args.local_rank)', "cuda device string"),
    C('backend="nccl"', "dist_backend", R, True, 'dist.init_process_group(backend="hccl", init_method="env://")',
      "NCCL unavailable; HCCL (" + TM + " §2.4)"),
    C("optimizer = FusedLAMB(", "fused_optimizer", R, True,
      "optimizer = NpuFusedLamb(optimizer_grouped_parameters, lr=args.learning_rate)",
      "apex FusedLAMB -> torch_npu.optim.NpuFusedLamb (" + TM + " §5)"),
    C("grad_scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      "grad_scaler = torch.npu.amp.GradScaler(init_scale=2 ** 20, enabled=args.amp)",
      "CUDA GradScaler does not scale NPU tensors; torch.npu.amp.GradScaler (" + TSV + "). Private _unscale_grads_/_get_scale_async use later is unconfirmed on NPU"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", R, True,
      "pass  # nn.DataParallel unsupported on NPU; single device or launch with torch.distributed",
      "torch.nn.DataParallel ✘ (" + TSV + ", " + MSTT + "); reached when >1 NPU visible without launcher"),
    C('flat_raw = torch.empty(flat_grad_size, device="cuda"', "device_type", R, True,
      'flat_raw = torch.empty(flat_grad_size, device="npu", dtype=allreduce_dtype)',
      "cuda device string on the allreduce_post_accumulation path used by the launch scripts"),
    C("allreduced_views = apex_C.unflatten(", "custom_cuda_extension", R, True,
      "allreduced_views = torch._utils._unflatten_dense_tensors(flat_raw, master_grads)",
      "apex_C removed; torch helper is device-agnostic"),
    C("[master_grads, allreduced_views],", "custom_cuda_extension", R, True,
      "torch._foreach_mul_(master_grads, loss_scale / (get_world_size() * args.gradient_accumulation_steps))",
      "amp_C.multi_tensor_scale is a CUDA kernel; foreach/plain torch ops instead (needs a copy into allreduced_views too)"),
    C("[allreduced_views, master_grads],", "custom_cuda_extension", R, True,
      "torch._foreach_mul_(allreduced_views, 1. / loss_scale)", "amp_C.multi_tensor_scale CUDA kernel"),
    C("=torch.manual_seed(args.seed + args.local_rank)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "binary (non-JIT) kernels for varying shapes; msFmkTransplt performance advice (" + TM + " §3.5)"),
    C("torch.cuda.manual_seed(args.seed + args.local_rank)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed(args.seed + args.local_rank)",
      "lazy CUDA seed is a silent no-op without CUDA; torch.manual_seed above already seeds (unconfirmed for every torch_npu version)"),
    C("overflow_buf = torch.cuda.IntTensor([0])", "torch_cuda_api", R, True,
      "overflow_buf = torch.npu.IntTensor([0]) if args.allreduce_post_accumulation else None",
      "typed CUDA tensor constructor fails without CUDA; torch.npu.IntTensor is in torch_npu.npu.__all__ (" + TM + " §2.1)"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "CUDA autocast is inactive for NPU tensors (" + TSV + ")"),
    C("average_loss = torch.tensor(average_loss, dtype=torch.float32).cuda()", "tensor_to_device", R, True,
      "average_loss = torch.tensor(average_loss, dtype=torch.float32).npu()", ".cuda() fails on NPU host"),
  ])

E("bert_modeling", "PyTorch/LanguageModeling/BERT/modeling.py", "explicit_replacement",
  "DeepLearningExamples BERT modeling.py (apex FusedLayerNorm, jit-scripted bias_gelu)", [
    C("class BertLayerNorm(apex.normalization.FusedLayerNorm):", "custom_cuda_extension", R, True,
      "class BertLayerNorm(torch.nn.LayerNorm):",
      "whenever apex imports (Ascend apex patch installed), FusedLayerNorm.__init__ imports fused_layer_norm_cuda, which Ascend apex does not build (" + TM + " §6)"),
    C("return FusedLayerNormAffineFunction.apply(", "custom_cuda_extension", X, False, None,
      "only reached for x.is_cuda, never on NPU; removed with the apex class"),
  ])

E("bert_pretrain_sh", "PyTorch/LanguageModeling/BERT/scripts/run_pretraining.sh", "explicit_replacement",
  "DeepLearningExamples BERT scripts/run_pretraining.sh launcher", [
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL_* variables are ignored on NPU; ASCEND_GLOBAL_LOG_LEVEL is the CANN log switch (ascend-host-formats.md)"),
    C("export NCCL_IB_HCA=mlx5", "env_var", X, False, None, "NCCL InfiniBand selection is meaningless with HCCL (" + DIST + " §1)"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA runtime variable, ignored on NPU"),
    C("export OMP_NUM_THREADS=1", "env_var", A, False, "export TASK_QUEUE_ENABLE=1",
      "msFmkTransplt performance advice TASK_QUEUE_ENABLE=1 (" + TM + " §3.5); added after this line"),
    C("nvidia-smi --query-gpu=name,clocks.max.sm --format=csv", "device_capability_check", R, False, "npu-smi info",
      "nvidia-smi absent on NPU host; script has no set -e so it only prints an error"),
  ])

E("bert_requirements", "PyTorch/LanguageModeling/BERT/requirements.txt", "explicit_replacement",
  "DeepLearningExamples BERT requirements", [
    C("=onnxruntime-gpu", "custom_cuda_extension", R, False, "onnxruntime",
      "CUDA build of onnxruntime; only used for export checks; aarch64 wheel availability unconfirmed"),
    C("=pynvml", "torch_cuda_api", X, False, None, "NVML has no NPU equivalent (" + TM + " §6); installs but fails when used"),
    C("git+https://github.com/NVIDIA/apex.git", "custom_cuda_extension", R, True,
      "apex @ file:///opt/ascend-apex/dist/apex-0.1+ascend-cp310-cp310-linux_aarch64.whl",
      "--cuda_ext build needs nvcc/CUDA_HOME; Ascend apex is built from Ascend/apex scripts/build.sh (" + TM + " §6); wheel path illustrative"),
    C("=nvidia-pyindex", "custom_cuda_extension", X, False, None, "NVIDIA package index helper, not needed on NPU host"),
    C("=six", "import_torch_npu", A, False, "torch-npu==2.1.0.post12",
      "torch_npu pinned to the container's torch (" + TM + " §1.2); usually preinstalled in the base image"),
  ])

# ---------------------------------------------------------------- ResNet50 / ConvNets
_T = "tensor_to_device"
E("rn50_dataloaders", "PyTorch/Classification/ConvNets/image_classification/dataloaders.py", "explicit_replacement",
  "DeepLearningExamples ConvNets dataloaders.py (DALI pipelines, PrefetchedWrapper with CUDA stream)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.Stream etc. need torch_npu registered"),
    C("mean = mean.cuda()", _T, R, True, "mean = mean.npu()", ".cuda() on NPU host (cuda=True is the default)"),
    C("std = std.cuda()", _T, R, True, "std = std.npu()", ".cuda()"),
    C("img = img.cuda()", _T, R, True, "img = img.npu()", ".cuda()"),
    C("mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).cuda()", _T, R, True,
      "mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255]).npu().view(1, 3, 1, 1)", ".cuda()"),
    C("std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).cuda()", _T, R, True,
      "std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255]).npu().view(1, 3, 1, 1)", ".cuda()"),
    C("stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "stream = torch.npu.Stream()",
      "side stream for H2D prefetch; torch.npu.Stream (" + TSV + ")"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", R, True, "with torch.npu.stream(stream):", "stream context"),
    C("next_input = next_input.cuda(non_blocking=True)", _T, R, True, "next_input = next_input.npu(non_blocking=True)", ".cuda()"),
    C("next_target = next_target.cuda(non_blocking=True)", _T, R, True, "next_target = next_target.npu(non_blocking=True)", ".cuda()"),
    C("torch.cuda.current_stream().wait_stream(stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(stream)", "stream sync"),
    C("memory_format=memory_format).cuda().normal_(0, 1.0)", _T, R, True,
      "memory_format=memory_format).npu().normal_(0, 1.0)", "synthetic loader .cuda()"),
    C("input_target = torch.empty(batch_size, num_classes).cuda()", _T, R, True,
      "input_target = torch.empty(batch_size, num_classes).npu()", ".cuda()"),
    C("input_target = input_target.cuda()", _T, R, True, "input_target = input_target.npu()", ".cuda()"),
  ])

E("rn50_training", "PyTorch/Classification/ConvNets/image_classification/training.py", "explicit_replacement",
  "DeepLearningExamples ConvNets training.py (Executor/Trainer, torch.cuda.amp, DDP on a side stream)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch.npu.amp import autocast",
      "CUDA autocast inactive for NPU tensors (" + TSV + ")"),
    C("m = m.cuda()", "tensor_to_device", R, True, "m = m.npu()", ".cuda() on module"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, True, "s = torch.npu.Stream()", "CUDA stream"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "s.wait_stream(torch.npu.current_stream())", "CUDA stream"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, True, "with torch.npu.stream(s):", "CUDA stream"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(s)", "CUDA stream"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "unguarded in Trainer.train_step; raises without a CUDA build"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "guarded sync is skipped on NPU: no crash, but latency timing becomes asynchronous"),
    C("torch.cuda.synchronize(input.device)", "torch_cuda_api", R, False, "torch.npu.synchronize(input.device)",
      "only reached when CUDA is present"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

# ---------------------------------------------------------------- SSD300
E("ssd_main", "PyTorch/Detection/SSD/main.py", "explicit_replacement",
  "DeepLearningExamples SSD300 main.py (apex amp O2, apex DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex.parallel DDP support in the Ascend apex patch is unconfirmed; native DDP works with HCCL"),
    C("mean = torch.tensor(mean_val).cuda()", "tensor_to_device", R, True, "mean = torch.tensor(mean_val).npu()", ".cuda()"),
    C("std = torch.tensor(std_val).cuda()", "tensor_to_device", R, True, "std = torch.tensor(std_val).npu()", ".cuda()"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", "device binding"),
    C('backend="nccl"', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C("=ssd300.cuda()", "tensor_to_device", R, True, "ssd300.npu()", ".cuda() on module"),
    C("=loss_func.cuda()", "tensor_to_device", R, True, "loss_func.npu()", ".cuda() on module"),
    C('ssd300, optimizer = amp.initialize(ssd300, optimizer, opt_level="O2")', "amp", R, False,
      'ssd300, optimizer = amp.initialize(ssd300, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True)',
      "Ascend apex keeps O1/O2 and adds combine_grad (" + TM + " §6); performance only"),
    C("=ssd300 = DDP(ssd300)", "distributed_framework", R, False,
      "ssd300 = DDP(ssd300, device_ids=[args.local_rank])", "follows the switch to native DDP"),
    C("map_location=lambda storage, loc: storage.cuda(torch.cuda.current_device()))", "tensor_to_device", R, True,
      "map_location=lambda storage, loc: storage.npu(torch.npu.current_device()))",
      "checkpoint resume maps storages onto CUDA; fails on NPU host"),
  ])

E("ssd_train", "PyTorch/Detection/SSD/ssd/train.py", "explicit_replacement",
  "DeepLearningExamples SSD300 ssd/train.py (apex amp.scale_loss, benchmark loops)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device used below"),
    C("label = label.type(torch.cuda.LongTensor)", "torch_cuda_api", R, True, "label = label.long().npu()",
      "typed CUDA tensor class fails without CUDA"),
    C("bbox_offsets = data[0][3][0].cuda()", "tensor_to_device", R, True, "bbox_offsets = data[0][3][0].npu()", ".cuda()"),
    C("img = img.cuda()", "tensor_to_device", R, True, "img = img.npu()", ".cuda() on the default (no_cuda=False) path"),
    C("bbox = bbox.cuda()", "tensor_to_device", R, True, "bbox = bbox.npu()", ".cuda()"),
    C("label = label.cuda()", "tensor_to_device", R, True, "label = label.npu()", ".cuda()"),
    C("bbox_offsets = bbox_offsets.cuda()", "tensor_to_device", R, True, "bbox_offsets = bbox_offsets.npu()", ".cuda()"),
    C("trans_bbox = bbox.transpose(1, 2).contiguous().cuda()", "tensor_to_device", R, True,
      "trans_bbox = bbox.transpose(1, 2).contiguous().npu()", ".cuda()"),
    C("result = torch.zeros((1,)).cuda()", "tensor_to_device", R, True, "result = torch.zeros((1,)).npu()", ".cuda()"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "CUDA sync for timing"),
    C("label = data[0][2][0].type(torch.cuda.LongTensor)", "torch_cuda_api", R, True,
      "label = data[0][2][0].long().npu()", "typed CUDA tensor class"),
    C("gloc = Variable(bbox.transpose(1, 2).contiguous().cuda(), requires_grad=False)", "tensor_to_device", R, True,
      "gloc = Variable(bbox.transpose(1, 2).contiguous().npu(), requires_grad=False)", ".cuda()"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", "CUDA stream sync"),
    C("od = torch.load(checkpoint)", "tensor_to_device", R, True, 'od = torch.load(checkpoint, map_location="cpu")',
      "checkpoints written on GPU hold CUDA storages; loading without map_location fails when CUDA is unavailable"),
  ])

# ---------------------------------------------------------------- Tacotron2 / WaveGlow
E("tacotron2_inference", "PyTorch/SpeechSynthesis/Tacotron2/inference.py", "explicit_replacement",
  "DeepLearningExamples Tacotron2 + WaveGlow inference.py (MeasureTime, dllogger)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device used below"),
    C('state_dict = torch.load(checkpoint)["state_dict"]', "tensor_to_device", R, True,
      'state_dict = torch.load(checkpoint, map_location="npu")["state_dict"]',
      "GPU-saved checkpoint deserialises onto CUDA without map_location"),
    C("text_padded = text_padded.cuda().long()", "tensor_to_device", R, True, "text_padded = text_padded.npu().long()", ".cuda()"),
    C("input_lengths = input_lengths.cuda().long()", "tensor_to_device", R, True,
      "input_lengths = input_lengths.npu().long()", ".cuda()"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "timing sync on default (non --cpu) path"),
    C("denoiser.cuda()", "tensor_to_device", R, True, "denoiser.npu()", ".cuda() on module"),
    C("sequence = sequence.cuda()", "tensor_to_device", R, True, "sequence = sequence.npu()", ".cuda()"),
    C("=input_lengths = input_lengths.cuda()", "tensor_to_device", R, True, "input_lengths = input_lengths.npu()", ".cuda()"),
  ])

_PPS = ("pack_padded_sequence / pad_packed_sequence are ✘ in Ascend's support list (" + TSV + ") and in " + MSTT +
        "; note _pack_padded_sequence does appear in ops/npu_native_ops_torch2.7.1_v7.3.0.base.txt, so the failure mode is unconfirmed")
E("tacotron2_model", "PyTorch/SpeechSynthesis/Tacotron2/tacotron2/model.py", "explicit_replacement",
  "DeepLearningExamples Tacotron2 tacotron2/model.py (packed bidirectional LSTM encoder)", [
    C("=x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, batch_first=True)", "unsupported_op_workaround", X, True, None,
      _PPS + "; porter runs the LSTM on the padded batch and masks outputs by length"),
    C("self.lstm.flatten_parameters()", "unsupported_op_workaround", X, False, None,
      "RNNBase.flatten_parameters listed in " + MSTT + "; stock PyTorch returns early for non-CUDA weights"),
    C("=outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)", "unsupported_op_workaround", X, True, None, _PPS),
    C("=x = pack_padded_sequence(x, input_lengths, batch_first=True)", "unsupported_op_workaround", X, True, None, _PPS),
    C("=outputs, _ = pad_packed_sequence(outputs, batch_first=True)", "unsupported_op_workaround", X, True, None, _PPS),
  ])

E("waveglow_model", "PyTorch/SpeechSynthesis/Tacotron2/waveglow/model.py", "explicit_replacement",
  "NVIDIA WaveGlow waveglow/model.py (type-string dispatch, torch.cuda.*Tensor noise)", [
    C('if z.type() == "torch.cuda.HalfTensor" or z.type() == "torch.HalfTensor":', "device_type", R, True,
      "if z.dtype == torch.float16:",
      "NPU half tensors report 'torch.npu.HalfTensor', so W_inverse stays fp32 and conv1d gets mixed dtypes under --fp16"),
    C('if spect.type() == "torch.cuda.HalfTensor":', "device_type", R, True, "if spect.dtype == torch.float16:",
      "type-string check never true on NPU; falls to the FloatTensor branch"),
    C("audio = torch.cuda.HalfTensor(", "torch_cuda_api", R, True,
      "audio = torch.randn(spect.size(0), self.n_remaining_channels, spect.size(2), device=spect.device, dtype=spect.dtype)",
      "typed CUDA constructor"),
    C("audio = torch.cuda.FloatTensor(", "torch_cuda_api", R, True,
      "audio = torch.randn(spect.size(0), self.n_remaining_channels, spect.size(2), device=spect.device, dtype=spect.dtype)",
      "typed CUDA constructor; the branch every NPU run takes"),
  ])

# ---------------------------------------------------------------- Transformer-XL
E("txl_train", "PyTorch/LanguageModeling/Transformer-XL/pytorch/train.py", "explicit_replacement",
  "DeepLearningExamples Transformer-XL pytorch/train.py (--cuda flag, apex/pytorch amp, dp/ddp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C('parser.add_argument("--affinity", type=str, default="socket_unique_interleaved",', "torch_cuda_api", R, True,
      'parser.add_argument("--affinity", type=str, default="disabled",',
      "default CPU-affinity path goes through utils.gpu_affinity (pynvml/NVML), which has no NPU equivalent (" + TM + " §6)"),
    C('backend = "nccl" if cuda else "gloo"', "dist_backend", R, True, 'backend = "hccl" if cuda else "gloo"',
      "launch scripts pass --cuda; NCCL -> HCCL"),
    C("with torch.cuda.amp.autocast(enable_autocast):", "amp", R, True, "with torch.npu.amp.autocast(enable_autocast):",
      "CUDA autocast inactive for NPU tensors"),
    C("nproc_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True, "nproc_per_node = torch.npu.device_count()",
      "returns 0 on NPU host"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "unconditional device binding"),
    C("=torch.manual_seed(args.seed)", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance only (" + TM + " §3.5)"),
    C("=l2_promote()", "torch_cuda_api", X, True, None,
      "DLE helper calling cudaDeviceSetLimit through libcudart via ctypes; no libcudart on an NPU host"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if args.cuda else "cpu")', "cuda device string"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler does not act on NPU grads (" + TSV + ")"),
    C("para_model = BalancedDataParallel(", "distributed_framework", R, True,
      "para_model = model  # BalancedDataParallel (DataParallel) unsupported on NPU; use --multi_gpu ddp",
      "reached with --multi_gpu dp --gpu0_bsz; DataParallel ✘ (" + TSV + ")"),
    C("para_model = nn.DataParallel(model, dim=1).to(device)", "distributed_framework", R, True,
      "para_model = model.to(device)  # nn.DataParallel unsupported on NPU",
      "reached with --multi_gpu dp; DataParallel ✘ (" + TSV + ", " + MSTT + ")"),
    C("max_mem = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", R, False,
      "max_mem = torch.npu.max_memory_allocated() / 2 ** 20", "returns 0 silently when CUDA is not initialised"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without a CUDA build"),
  ])

E("txl_data_parallel", "PyTorch/LanguageModeling/Transformer-XL/pytorch/utils/data_parallel.py", "explicit_replacement",
  "Transformer-XL utils/data_parallel.py (BalancedDataParallel, torch.cuda.comm)", [
    C("return torch.cuda.comm.gather(", "torch_cuda_api", R, True,
      "return torch.cat([o.view(-1).to(outputs[0].device) for o in outputs], dim)",
      "torch.cuda.comm.gather ✘ (" + TSV + ", " + MSTT + "); not aliased by transfer_to_npu (" + TM + " §2.1)"),
    C("return torch.cuda.comm.broadcast_coalesced(", "torch_cuda_api", R, True,
      "return [[p.detach().to(f'npu:{d}') for p in params] for d in device_ids]",
      "torch.cuda.comm.* is not in torch_npu.npu.__all__ (" + TM + " §2.1); fails on NPU"),
    C("class BalancedDataParallel(DataParallel):", "distributed_framework", R, True,
      "class BalancedDataParallel(torch.nn.Module):  # DataParallel is unsupported on NPU; DDP path used instead",
      "nn.DataParallel ✘ (" + TSV + "); the class is the --multi_gpu dp path"),
  ])

E("txl_vocabulary", "PyTorch/LanguageModeling/Transformer-XL/pytorch/utils/vocabulary.py", "explicit_replacement",
  "Transformer-XL utils/vocabulary.py (CPU-only tokenisation; deliberately no labels)", [])

# ---------------------------------------------------------------- Jasper / QuartzNet
E("jasper_features", "PyTorch/SpeechRecognition/Jasper/common/features.py", "explicit_replacement",
  "DeepLearningExamples Jasper common/features.py (FilterbankFeatures, fp32 island inside autocast)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "module file; the entry script's import (or autoload since torch_npu 2.5.1, " + TM + " §1.1) already registers torch.npu"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True, "with torch.npu.amp.autocast(enabled=False):",
      "a CUDA autocast(enabled=False) does not switch off the NPU autocast the training loop opened, so STFT power/filterbank matmul run in fp16 (torch.stft is fp32-only in " + TSV + ")"),
  ])

E("jasper_train_sh", "PyTorch/SpeechRecognition/Jasper/scripts/train.sh", "explicit_replacement",
  "DeepLearningExamples Jasper scripts/train.sh launcher", [
    C(': ${DALI_DEVICE:="gpu"}', "custom_cuda_extension", R, True, ': ${DALI_DEVICE:="none"}',
      "DALI GPU pipeline has no NPU build (" + TM + " §6 lists no DALI counterpart); fall back to the PyTorch loader"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime (" + DIST + " §1)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL_ASYNC_ERROR_HANDLING is the torch_npu watchdog switch, default 1 (" + DIST + " §1)"),
    C("export CUDA_LAUNCH_BLOCKING=", "env_var", R, False, "export ASCEND_LAUNCH_BLOCKING=${DEBUG_SYNC:-0}",
      "debug-only; ASCEND_LAUNCH_BLOCKING is the NPU counterpart (ascend-host-formats.md, torch_npu async-error hint)"),
  ])

E("quartznet_inference", "PyTorch/SpeechRecognition/QuartzNet/inference.py", "explicit_replacement",
  "DeepLearningExamples QuartzNet inference.py (DALI default, latency percentiles)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device used below"),
    C('io.add_argument("--dali_device", type=str, choices=["none", "cpu", "gpu"], default="gpu",', "custom_cuda_extension", R, True,
      'io.add_argument("--dali_device", type=str, choices=["none", "cpu", "gpu"], default="none",',
      "default DALI GPU pipeline cannot run on NPU"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", R, True, "assert torch.npu.is_available()", "aborts on NPU host"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "cuda device string"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", "device binding"),
    C('backend="nccl"', "dist_backend", R, True, 'distrib.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C('sync = lambda: torch.cuda.synchronize() if device.type == "cuda" else None', "torch_cuda_api", R, True,
      'sync = lambda: torch.npu.synchronize() if device.type == "npu" else None',
      "never syncs on NPU, so the reported latency percentiles measure only kernel launch"),
    C("batch = [t.cuda(non_blocking=True) for t in batch]", "tensor_to_device", R, True,
      "batch = [t.npu(non_blocking=True) for t in batch]", ".cuda()"),
  ])

# ---------------------------------------------------------------- nnU-Net
E("nnunet_trainer", "nnunet/training/network_training/nnUNetTrainerV2.py", "explicit_replacement",
  "nnU-Net v1 nnUNetTrainerV2 (3-D UNet, torch.cuda.amp, is_available guards)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch.npu.amp import autocast",
      "CUDA autocast inactive for NPU tensors"),
    C("self.amp_grad_scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "self.amp_grad_scaler = torch.npu.amp.GradScaler()", "CUDA GradScaler (" + TSV + ")"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True, "if torch.npu.is_available():",
      "False on NPU host: network silently stays on CPU"),
    C("=self.network.cuda()", "tensor_to_device", R, True, "self.network.npu()", ".cuda() (reached once the guard is ported)"),
    C("if next(self.network.parameters()).is_cuda:", "device_type", R, True,
      "if next(self.network.parameters()).is_npu:", "is_cuda is False for NPU parameters: batches stay on CPU"),
    C("data = to_cuda(data)", "tensor_to_device", R, True, "data = to_npu(data)",
      "nnunet.utilities.to_torch.to_cuda calls .cuda(gpu_id); porter adds a to_npu twin"),
    C("target = to_cuda(target)", "tensor_to_device", R, True, "target = to_npu(target)", "as above"),
    C('device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available()', "device_type", R, False,
      'device = torch.device("npu", torch.npu.current_device()) if torch.npu.is_available() else torch.device("cpu")',
      "CUDA check picks CPU on an NPU host; load_state_dict then copies onto the network's device, so this works unchanged (porter aligns it anyway)"),
    C("from nnunet.utilities.to_torch import maybe_to_torch, to_cuda", "tensor_to_device", R, True,
      "from nnunet.utilities.to_torch import maybe_to_torch, to_npu", "import of the NPU twin of to_cuda"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

# ---------------------------------------------------------------- Mask R-CNN (maskrcnn_benchmark)
E("maskrcnn_setup", "setup.py", "explicit_replacement",
  "maskrcnn_benchmark setup.py (CppExtension / CUDAExtension switch, nvcc flags)", [
    C("from torch.utils.cpp_extension import CUDA_HOME", "custom_cuda_extension", X, False, None,
      "only feeds the CUDA branch below"),
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", X, False, None,
      "no nvcc path on NPU (" + TM + " §6)"),
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", R, False, "if False:  # CUDA kernels are not built on NPU; ops come from torchvision_npu",
      "branch is never taken on an NPU host; the CPU-only CppExtension still builds, so unchanged code installs"),
  ])

E("maskrcnn_roi_align", "maskrcnn_benchmark/layers/roi_align.py", "explicit_replacement",
  "maskrcnn_benchmark layers/roi_align.py (_C ROIAlign / nms from the nvcc-built extension, apex amp.float_function)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu, torchvision_npu",
      "torchvision_npu registers NPU nms / roi_align for torchvision.ops (" + TM + " §6)"),
    C("from maskrcnn_benchmark import _C", "custom_cuda_extension", R, True,
      "from torchvision.ops import roi_align as tv_roi_align, nms as tv_nms",
      "_C has only CPU kernels on an NPU host, which would read NPU pointers; use torchvision ops backed by torchvision_npu"),
    C("output = _C.roi_align_forward(", "custom_cuda_extension", X, True, None, "call site of the extension; class replaced"),
    C("grad_input = _C.roi_align_backward(", "custom_cuda_extension", X, True, None, "call site of the extension; class replaced"),
    C("roi_align = _ROIAlign.apply", "custom_cuda_extension", R, True,
      "roi_align = lambda input, rois, output_size, spatial_scale, sampling_ratio, is_nhwc: tv_roi_align(input, rois, output_size, spatial_scale, sampling_ratio)",
      "torchvision roi_align ✔ with torchvision_npu (" + TM + " §6); NHWC variant dropped"),
    C("nms = amp.float_function(_C.nms)", "custom_cuda_extension", R, True, "nms = amp.float_function(tv_nms)",
      "extension nms -> torchvision nms (torchvision_npu)"),
  ])

E("maskrcnn_train_net", "tools/train_net.py", "explicit_replacement",
  "maskrcnn_benchmark tools/train_net.py (apex amp/DDP fallbacks, NCCL init)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C("model = DDP(model, delay_allreduce=True)", "distributed_framework", R, False,
      "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank, broadcast_buffers=False)",
      "taken whenever apex imports (Ascend apex installed); apex.parallel DDP on NPU unconfirmed"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", "device binding"),
    C('backend="nccl"', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

E("maskrcnn_config", "configs/e2e_mask_rcnn_R_50_FPN_1x.yaml", "explicit_replacement",
  "maskrcnn_benchmark (NVIDIA fork) configs/e2e_mask_rcnn_R_50_FPN_1x.yaml", [
    C('DEVICE: "cuda"', "device_type", R, True, 'DEVICE: "npu"', "feeds torch.device(cfg.MODEL.DEVICE) in tools/train_net.py"),
    C("NHWC: True", "custom_cuda_extension", R, True, "NHWC: False",
      "the NHWC path runs the fork's NHWC kernels from the nvcc-built _C; channels-last is also listed as unsupported under transfer_to_npu (" + TM + " §2.8)"),
  ])

# ---------------------------------------------------------------- GNMT
E("gnmt_attention", "PyTorch/Translation/GNMT/seq2seq/models/attention.py", "explicit_replacement",
  "DeepLearningExamples GNMT v2 seq2seq/models/attention.py (fused attn_score CUDA extension)", [
    C("from seq2seq.attn_score import AttentionScore", "custom_cuda_extension", X, True, None,
      "autograd wrapper around the nvcc-built attn_score_cuda extension; cannot build on NPU (" + TM + " §6)"),
    C("import seq2seq.attn_score_cuda as attn_score_cuda", "custom_cuda_extension", X, True, None,
      "nvcc-built extension import fails on NPU host"),
    C("fusion=True):", "custom_cuda_extension", R, True, "fusion=False):",
      "default must select the plain torch path (tanh + matmul)"),
    C("out = AttentionScore.apply(", "custom_cuda_extension", X, True, None, "extension call site"),
    C("out = attn_score_cuda.forward(", "custom_cuda_extension", X, True, None, "extension call site"),
  ])

E("gnmt_utils", "PyTorch/Translation/GNMT/seq2seq/utils.py", "explicit_replacement",
  "DeepLearningExamples GNMT seq2seq/utils.py (seed broadcast, all_reduce barrier, cuda/nccl helpers)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* used below"),
    C("torch.distributed.all_reduce(torch.cuda.FloatTensor(1))", "torch_cuda_api", R, True,
      "torch.distributed.all_reduce(torch.npu.FloatTensor(1))",
      "typed CUDA tensor; barrier() runs after every epoch (or simply torch.distributed.barrier(), which HCCL supports per " + TSV + ")"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "CUDA sync in barrier()"),
    C("sync_fn = torch.cuda.synchronize if sync else (lambda: None)", "torch_cuda_api", R, True,
      "sync_fn = torch.npu.synchronize if sync else (lambda: None)",
      "function reference, not a call; still raises on NPU host when timer(sync=True) runs"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "device binding"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', "cuda device string"),
    C('backend = "nccl" if cuda else "gloo"', "dist_backend", R, True, 'backend = "hccl" if cuda else "gloo"', "NCCL -> HCCL"),
  ])

# ---------------------------------------------------------------- shared DLE plumbing
E("dle_dockerfile", "PyTorch/Recommendation/NCF/Dockerfile", "explicit_replacement",
  "DeepLearningExamples Dockerfile on an NGC PyTorch image (apex rebuild, DALI wheel)", [
    C("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:21.04-py3", "import_torch_npu", R, True,
      "ARG FROM_IMAGE_NAME=ascendhub.huawei.com/public-ascendhub/ascend-pytorch:24.0.0-A2-2.1.0-ubuntu20.04",
      "NGC image ships CUDA torch; an Ascend image with CANN + torch_npu is needed (image name/tag illustrative, unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES (" + DIST + " §1); whether an image-level ENV is honoured is unconfirmed"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "nvidia-container-runtime only"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0 8.0+PTX"', "env_var", X, False, None, "nvcc arch list; unused on NPU"),
    C("RUN pip install --no-cache-dir -r requirements.txt", "import_torch_npu", A, False,
      "RUN pip install --no-cache-dir torch-npu==2.1.0.post12",
      "explicit torch_npu pin if the base image lacks it (" + TM + " §1.2)"),
    C("nvidia-dali-cuda110", "custom_cuda_extension", X, False, None,
      "DALI CUDA wheel: no NPU use; install failure on aarch64 hosts unconfirmed"),
    C("git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", R, True,
      "git clone https://gitee.com/ascend/apex /opt/apex && \\",
      "Ascend apex patch is built from its own repo (" + TM + " §6)"),
    C('pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension", R, True,
      "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc: docker build fails; Ascend apex uses scripts/build.sh (" + TM + " §6)"),
  ])

E("dle_gpu_affinity", "PyTorch/LanguageModeling/Transformer-XL/pytorch/utils/gpu_affinity.py", "explicit_replacement",
  "DeepLearningExamples gpu_affinity.py (pynvml CPU affinity per GPU)", [
    C("=import pynvml", "torch_cuda_api", X, True, None, "NVML has no NPU counterpart (" + TM + " §6)"),
    C("=pynvml.nvmlInit()", "torch_cuda_api", X, True, None,
      "module-level NVML init raises on an NPU host, so merely importing utils fails"),
    C("return pynvml.nvmlSystemGetDriverVersion()", "torch_cuda_api", R, False,
      "return subprocess.check_output(['npu-smi', 'info']).decode()", "unused helper; npu-smi is the NPU tool"),
    C("return pynvml.nvmlDeviceGetCount()", "torch_cuda_api", R, False, "return torch.npu.device_count()", "unused helper"),
    C("self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_idx)", "torch_cuda_api", R, True,
      "self.device_idx = device_idx", "NVML handle; reached by every set_affinity mode"),
    C("return pynvml.nvmlDeviceGetName(self.handle)", "torch_cuda_api", R, False,
      "return torch.npu.get_device_name(self.device_idx)", "unused in this file"),
    C("for j in pynvml.nvmlDeviceGetCpuAffinity(self.handle, device._nvml_affinity_elements):", "torch_cuda_api", R, True,
      "for j in _npu_numa_cpu_mask(self.device_idx, device._nvml_affinity_elements):",
      "CPU affinity must come from the NPU's NUMA node (e.g. npu-smi topology or sysfs); helper is the porter's own, approach unconfirmed"),
  ])

# ---------------------------------------------------------------- NCF
E("ncf_train", "PyTorch/Recommendation/NCF/ncf.py", "explicit_replacement",
  "DeepLearningExamples NCF ncf.py (apex FusedAdam, torch.cuda.amp, GPU-resident data)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch_npu.optim and npu device used below"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, True, "from torch_npu.optim import NpuFusedAdam",
      "apex FusedAdam needs CUDA kernels Ascend apex lacks (" + TM + " §6)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)", "device binding"),
    C('backend="nccl"', "dist_backend", R, True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C('global_hits = torch.tensor(hits, device="cuda")', "device_type", R, True,
      'global_hits = torch.tensor(hits, device="npu")', "cuda device string"),
    C('torch.distributed.broadcast(torch.tensor([1], device="cuda"), 0)', "device_type", R, True,
      'torch.distributed.broadcast(torch.tensor([1], device="npu"), 0)', "cuda device string"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "unguarded CUDA sync"),
    C("optimizer = FusedAdam(", "fused_optimizer", R, True,
      "optimizer = NpuFusedAdam(model.parameters(), lr=args.learning_rate, betas=(args.beta1, args.beta2), eps=args.eps)",
      "NpuFusedAdam (" + TM + " §5)"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda()"),
    C("criterion = criterion.cuda()", "tensor_to_device", R, True, "criterion = criterion.npu()", ".cuda()"),
    C("state_dict = torch.load(args.load_checkpoint_path)", "tensor_to_device", R, True,
      'state_dict = torch.load(args.load_checkpoint_path, map_location="cpu")',
      "GPU-saved checkpoint deserialises onto CUDA without map_location"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "CUDA GradScaler (" + TSV + ")"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):", "CUDA autocast inactive for NPU tensors"),
  ])

# ---------------------------------------------------------------- EfficientNet classify / TorchScript
E("efficientnet_classify", "PyTorch/Classification/ConvNets/classify.py", "explicit_replacement",
  "DeepLearningExamples ConvNets classify.py (EfficientNet, channels_last, TorchScript export)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "npu device used below"),
    C("mean = mean.cuda(non_blocking=True)", "tensor_to_device", R, True, "mean = mean.npu(non_blocking=True)", ".cuda() (default path)"),
    C("std = std.cuda(non_blocking=True)", "tensor_to_device", R, True, "std = std.npu(non_blocking=True)", ".cuda()"),
    C("img = img.cuda(non_blocking=True)", "tensor_to_device", R, True, "img = img.npu(non_blocking=True)", ".cuda()"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", ".cuda() on module"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", R, False,
      "model = model.to(memory_format=torch.contiguous_format)",
      "opt-in --channels-last; msFmkTransplt README: channel_last not supported, use contiguous (" + TM + " §2.8); runtime failure mode unconfirmed"),
    C("input = input.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", R, False,
      "input = input.contiguous()", "as above"),
    C('with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.precision == "AMP"):', "amp", R, True,
      'with torch.no_grad(), torch.npu.amp.autocast(enabled=args.precision == "AMP"):',
      "default precision AMP; CUDA autocast inactive for NPU tensors"),
  ])

# ---------------------------------------------------------------- FastPitch
E("fastpitch_inference", "PyTorch/SpeechSynthesis/FastPitch/inference.py", "explicit_replacement",
  "DeepLearningExamples FastPitch inference.py (NVTX ranges, cudaProfiler window, capability-gated TF32)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu / torch_npu.npu.mstx used below"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "timing sync (--cuda path)"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True, "torch.npu.current_stream().synchronize()", "timing sync"),
    C('device = torch.device("cuda" if args.cuda else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if args.cuda else "cpu")', "cuda device string"),
    C("if args.cuda and torch.cuda.get_device_capability(device)[0] >= 8:", "device_capability_check", R, True,
      "if args.cuda:",
      "torch_npu get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set (" + TM + " §2.8, " + TSV + "), so [0] raises"),
    C("torch.cuda.profiler.start()", "torch_cuda_api", R, True, "prof = torch_npu.profiler.profile(); prof.start()",
      "cudaProfilerStart via CUDA runtime; torch.cuda.profiler is not aliased (" + TM + " §2.1, §2.5); NPU capture goes through torch_npu.profiler/msprof"),
    C('torch.cuda.nvtx.range_push(f"fastpitch_batch_{rep}")', "torch_cuda_api", R, True,
      'rid = torch_npu.npu.mstx.range_start(f"fastpitch_batch_{rep}")',
      "torch.cuda.nvtx is not redirected; torch_npu.npu.mstx gives NVTX-style ranges (" + TM + " §2.1, §6); exact mstx signature unconfirmed"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(rid)", "as above"),
    C("torch.cuda.profiler.stop()", "torch_cuda_api", R, True, "prof.stop()", "pairs with the start above"),
    C('"max_mem_GiB": torch.cuda.max_memory_allocated() / 2 ** 30 if args.cuda else 0})', "torch_cuda_api", R, False,
      '"max_mem_GiB": torch.npu.max_memory_allocated() / 2 ** 30 if args.cuda else 0})', "silently reports 0 without CUDA"),
  ])
