"""Labels for probe24 (hand-written synthetic upstream files; see ../README.md).

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

# shared notes
IMP = ("torch_npu registers the 'npu' device and torch.npu; autoloaded since torch_npu 2.5.1 but still "
       "needed on the 2.1.x line that is still in the matrix (torch-npu-migration.md §1.1-1.2)")
AVAIL = "torch.cuda.is_available() is False on an NPU host, so this silently picks the CPU path"
DEV = "'cuda' device string: no CUDA device on an Ascend host; 'npu' is the torch_npu device (§2.2, §3.4)"
LAZY = ("needs a CUDA build/driver: on the CPU-only torch wheel used with torch_npu the call raises at "
        "lazy init; torch.npu.* has the same API (§2.1, §3.4 FuncNameModifyRule)")
EMPTY = "torch.cuda.empty_cache() is a silent no-op without CUDA; torch.npu.empty_cache() frees the NPU cache (§2.1)"
MEMSTAT = ("torch.cuda memory statistics return 0 when CUDA was never initialised, so the log is wrong but "
           "nothing fails; torch.npu has the same counters (§2.1)")
AMP = ("torch.cuda.amp autocast/GradScaler is inactive for NPU tensors (fp32 run, no loss scaling); "
       "torch.npu.amp.* is the NPU form (torch_api_npu_support_2.7.1.tsv rows torch.cuda.amp.*)")
DP = "torch.nn.DataParallel is unsupported on Ascend (✘ in torch_api_npu_support_2.7.1.tsv; mstt list; §2.8)"
HCCL = "NCCL does not exist on Ascend; HCCL is the collective backend (§2.4, ascend-distributed.md)"
VIS = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; ASCEND_RT_VISIBLE_DEVICES selects logical "
       "NPUs per process (ascend-distributed.md §1 table)")

# ---------------------------------------------------------------- MMOCR
E("mmocr_dbnet_cfg", "configs/textdet/dbnet/dbnet_resnet50-dcnv2_fpnc_1200e_icdar2015.py",
  "explicit_replacement", "MMOCR 1.x DBNet config (mmengine, DCNv2 backbone, AmpOptimWrapper)", [
      C("dist_cfg=dict(backend='nccl')", "dist_backend", R, False, "dist_cfg=dict(backend='hccl'),",
        HCCL + ". Not required: mmengine's init_dist switches to hccl by itself when torch_npu is available "
        "(from memory of mmengine.dist.utils; unconfirmed in the knowledge files)"),
  ])

E("mmocr_benchmark", "tools/analysis_tools/benchmark_textdet.py", "explicit_replacement",
  "MMOCR/MMDet tools/analysis_tools/benchmark.py (fps + peak memory)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", DEV),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()", LAZY),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", LAZY),
      C("with torch.cuda.amp.autocast(enabled=fp16):", "amp", R, True,
        "with torch.npu.amp.autocast(enabled=fp16):", AMP),
      C("torch.cuda.synchronize()  # wait", "torch_cuda_api", R, True,
        "torch.npu.synchronize()  # wait for the kernels before stopping the clock", LAZY),
      C("mem_mb = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
        "mem_mb = torch.npu.max_memory_allocated() / 1024 / 1024", MEMSTAT),
      C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
      C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
        "raises 'needs a CUDA device' on an NPU host; " + AVAIL),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
        "logger.info(f'Device: {torch.npu.get_device_name(0)}')", LAZY),
  ])

E("mmocr_dist_train_sh", "tools/dist_train.sh", "explicit_replacement",
  "MMOCR/OpenMMLab tools/dist_train.sh with NCCL tuning", [
      C('if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then', "env_var", R, False,
        'if [ -z "${ASCEND_RT_VISIBLE_DEVICES:-}" ]; then', VIS + "; harmless when unset"),
      C("export CUDA_VISIBLE_DEVICES=$(seq", "env_var", R, False,
        "    export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))",
        VIS + ". Not required: without it every NPU is visible and ranks pick LOCAL_RANK anyway"),
      C("export NCCL_DEBUG=", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
        "NCCL_* variables have no effect on HCCL; ASCEND_GLOBAL_LOG_LEVEL is the Ascend log knob "
        "(ascend-host-formats.md §3.8); exact level mapping unconfirmed"),
      C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL-only; no effect on HCCL"),
      C("export NCCL_SOCKET_IFNAME=", "env_var", R, False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
        "HCCL_SOCKET_IFNAME is the HCCL counterpart for the host NIC (ascend-distributed.md §1)"),
      C("nvidia-smi --query-gpu", "device_type", R, True, "npu-smi info",
        "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script here; npu-smi is the "
        "Ascend tool (ascend-host-formats.md §1)"),
  ])

E("mmocr_dbpp_head", "projects/dbnetpp_dcn/dbnetpp_dcn/dbpp_head.py", "explicit_replacement",
  "MMOCR project: DBNet++ head with mmcv DCNv2 and fp32 islands in the loss", [
      C("with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
        "with torch.autocast(device_type='npu', enabled=False):",
        "disabling CUDA autocast does not leave NPU autocast, so exp(-k(P-T)) runs in fp16 under "
        "AmpOptimWrapper and overflows; " + AMP),
      C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, True,
        "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
        "custom_fwd for 'cuda' checks the CUDA autocast state, so inputs are not cast to fp32 under NPU "
        "autocast; torch.npu.amp.custom_fwd is listed ✔ (torch_api_npu_support_2.7.1.tsv)"),
      C("from mmcv.ops import ModulatedDeformConv2dPack", "custom_cuda_extension", R, False,
        "from mmcv.ops import ModulatedDeformConv2dPack  # mmcv built with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "mmcv's DCNv2 needs an mmcv build with NPU ops (mmcv has an NPU branch for modulated deform conv, "
        "from memory; torch_npu.contrib.module.ModulatedDeformConv is the fallback, §5). Unconfirmed"),
  ])

# ---------------------------------------------------------------- docTR
E("doctr_train_reco", "references/recognition/train_pytorch.py", "explicit_replacement",
  "docTR references/recognition/train_pytorch.py (AMP, single-GPU)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", AMP),
      C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():", AVAIL),
      C("=images = images.cuda()", "tensor_to_device", R, True, "images = images.npu()", DEV),
      C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", AMP),
      C("if next(model.parameters()).is_cuda:", "device_type", R, True,
        "if next(model.parameters()).is_npu:",
        "is_cuda is False for NPU parameters, so validation images stay on the host while the model is on "
        "the NPU (device mismatch); is_npu is the NPU attribute (§2.3, §3.4 ReplaceAttributeRule)"),
      C("images = images.cuda(non_blocking=True)", "tensor_to_device", R, True,
        "images = images.npu(non_blocking=True)", DEV),
      C("with torch.cuda.amp.autocast(enabled=amp):", "amp", R, True,
        "with torch.npu.amp.autocast(enabled=amp):", AMP),
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", R, False, "pin_memory=torch.npu.is_available(),",
        "False on an NPU host, so batches are not pinned: slower host-to-device copies only"),
      C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
        "with --device N this raises 'PyTorch cannot access your GPU' on an NPU host"),
      C("if args.device >= torch.cuda.device_count():", "torch_cuda_api", R, True,
        "if args.device >= torch.npu.device_count():",
        "torch.cuda.device_count() is 0 on an NPU host, so every index is rejected"),
      C("elif torch.cuda.is_available():", "device_type", R, True, "elif torch.npu.is_available():", AVAIL),
      C("if torch.cuda.is_available() and args.device is not None:", "device_type", R, True,
        "if torch.npu.is_available() and args.device is not None:", AVAIL),
      C("torch.cuda.set_device(args.device)", "torch_cuda_api", R, True, "torch.npu.set_device(args.device)", LAZY),
      C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", DEV),
  ])

# ---------------------------------------------------------------- EasyOCR
E("easyocr_reader", "easyocr/easyocr.py", "device_branch_or_abstraction",
  "EasyOCR Reader.__init__ (gpu=True device selection)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
        "gpu=True on an NPU host falls through to MPS/CPU; " + AVAIL),
      C("self.device = 'cuda'", "device_type", R, True, "self.device = 'npu'", DEV),
  ])

E("easyocr_detection", "easyocr/detection.py", "explicit_replacement",
  "EasyOCR detection.py (CRAFT get_detector / test_net)", [
      C("net = torch.nn.DataParallel(net).to(device)", "device_type", R, True, "net = net.to(device)",
        DP + "; copyStateDict already strips the 'module.' prefix, so the plain module loads the same weights"),
      C("if device.startswith('cuda'):", "device_type", R, False, "if device.startswith(('cuda', 'npu')):",
        "warm-up sync is skipped for an 'npu' device; harmless, only the first request is slower"),
      C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
        "only reached once the guard above admits 'npu'"),
  ])

E("easyocr_recognition", "easyocr/recognition.py", "explicit_replacement",
  "EasyOCR recognition.py (get_recognizer with DataParallel, recognizer_predict)", [
      C("model = torch.nn.DataParallel(model).to(device)", "device_type", R, True, "model = model.to(device)", DP),
      C("model.load_state_dict(torch.load(model_path, map_location=device))", "device_type", R, True,
        "model.load_state_dict({k[7:]: v for k, v in torch.load(model_path, map_location=device).items()})",
        "the released weights carry the 'module.' prefix of the DataParallel wrapper (the CPU branch strips "
        "it); once DataParallel is gone the keys no longer match and load_state_dict raises"),
  ])

# ---------------------------------------------------------------- surya / marker
E("surya_settings", "surya/settings.py", "device_branch_or_abstraction",
  "surya settings.py (pydantic TORCH_DEVICE_MODEL / dtype / attention selection)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():", AVAIL),
      C('return "cuda"', "device_type", R, True, 'return "npu"', DEV),
      C('if self.TORCH_DEVICE_MODEL == "cuda" and torch.cuda.is_bf16_supported():', "device_type", R, False,
        'if self.TORCH_DEVICE_MODEL == "npu" and torch.npu.is_bf16_supported():',
        "falls back to fp32 on NPU: slower, not wrong; torch.npu.is_bf16_supported is in the §2.1 list"),
  ])

E("marker_convert", "marker/scripts/convert.py", "device_branch_or_abstraction",
  "marker scripts/convert.py (torch.multiprocessing spawn pool, VRAM-based worker count)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('if settings.TORCH_DEVICE_MODEL == "cuda":', "device_type", R, False,
        'if settings.TORCH_DEVICE_MODEL in ("cuda", "npu"):', "cache is not freed between files on NPU; memory only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
      C('if settings.TORCH_DEVICE_MODEL != "cuda":', "device_type", R, False,
        'if settings.TORCH_DEVICE_MODEL not in ("cuda", "npu"):',
        "one worker per NPU instead of VRAM/5GB: correct but slow"),
      C("total_gb = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", R, False,
        "total_gb = torch.npu.get_device_properties(0).total_memory / 1024**3",
        "only reached once the guard above admits 'npu'; total_memory is one of the properties NPU keeps "
        "(torch_api_npu_support_2.7.1.tsv, get_device_properties row)"),
      C('if settings.TORCH_DEVICE_MODEL == "mps":', "unsupported_op_workaround", R, True,
        'if settings.TORCH_DEVICE_MODEL in ("mps", "npu"):',
        "the else branch calls Module.share_memory() and ships device tensors to spawned children; "
        "torch.nn.Module.share_memory is in mstt_unsupported_torch_apis_2.7.txt and no NPU IPC path is "
        "documented, so each worker should load its own models as on MPS"),
  ])

E("marker_chunk_sh", "marker/scripts/chunk_convert.sh", "explicit_replacement",
  "marker scripts/chunk_convert.sh (one process per GPU via CUDA_VISIBLE_DEVICES)", [
      C("NUM_DEVICES=$(nvidia-smi --list-gpus | wc -l)", "device_type", R, True,
        'NUM_DEVICES=$(npu-smi info -l | grep -c "NPU ID")',
        "nvidia-smi is missing, NUM_DEVICES becomes 0 and the loop silently converts nothing; "
        "`npu-smi info -l` lists one 'NPU ID' per card (ascend-host-formats.md §2.5)"),
      C('cmd="CUDA_VISIBLE_DEVICES=$DEVICE_NUM TORCH_DEVICE=cuda', "env_var", R, True,
        'cmd="ASCEND_RT_VISIBLE_DEVICES=$DEVICE_NUM TORCH_DEVICE=npu marker $INPUT_FOLDER --output_dir '
        '$OUTPUT_FOLDER --num_chunks $NUM_DEVICES --chunk_idx $DEVICE_NUM --workers $NUM_WORKERS"',
        "TORCH_DEVICE=cuda forces a CUDA device that does not exist; " + VIS),
  ])

# ---------------------------------------------------------------- Nougat / Donut
E("nougat_predict", "nougat/predict.py", "device_branch_or_abstraction",
  "Nougat predict.py (default_batch_size / move_to_device / bf16 autocast)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
        "batch size falls to 1 with a 'No GPU found' warning; " + AVAIL),
      C("torch.cuda.get_device_properties(0).total_memory / 1024", "torch_cuda_api", R, True,
        "torch.npu.get_device_properties(0).total_memory / 1024 / 1024 / 1000 * 0.3",
        "body of the guard above; total_memory is kept on NPU (tsv get_device_properties row)"),
      C("if cuda and torch.cuda.is_available():", "device_type", R, True, "if cuda and torch.npu.is_available():",
        "model stays on the CPU; " + AVAIL),
      C('model = model.to("cuda")', "tensor_to_device", R, True, 'model = model.to("npu")', DEV),
      C("with torch.cuda.amp.autocast(enabled=not args.full_precision, dtype=torch.bfloat16):", "amp", R, False,
        "with torch.autocast('npu', enabled=not args.full_precision, dtype=torch.bfloat16):",
        "CUDA autocast is inactive for NPU tensors, but move_to_device already cast the weights to bf16 "
        "and the model casts its inputs (from memory of nougat; unconfirmed), so this is for consistency"),
  ])

E("donut_finetune", "scripts/train_donut_cord.py", "explicit_replacement",
  "Donut (VisionEncoderDecoder) CORD fine-tune with torch.cuda.amp and DDP", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", LAZY),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
        'dist.init_process_group(backend="hccl", init_method="env://")', HCCL),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
        "lazy no-op without CUDA; torch.manual_seed above also seeds the NPU generator (from memory; "
        "unconfirmed), so only for clarity"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
        'with torch.autocast(device_type="npu", dtype=torch.float16):',
        "autocast for 'cuda' does not cover NPU tensors: generation runs in fp32 (slow path)"),
      C('device = torch.device(f"cuda:{local_rank}")', "device_type", R, True,
        'device = torch.device(f"npu:{local_rank}")', DEV),
      C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", DEV),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", R, True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)", AMP),
      C("pixel_values = pixel_values.cuda(non_blocking=True)", "tensor_to_device", R, True,
        "pixel_values = pixel_values.npu(non_blocking=True)", DEV),
      C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", R, True,
        "labels = labels.npu(non_blocking=True)", DEV),
      C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", R, True,
        "with torch.npu.amp.autocast(enabled=args.fp16):", AMP),
      C("mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
        "mem = torch.npu.max_memory_allocated(device) / 2**30", MEMSTAT),
  ])

# ---------------------------------------------------------------- LayoutLMv3
E("layoutlmv3_det_train", "examples/object_detection/train_net.py", "explicit_replacement",
  "unilm LayoutLMv3 object_detection/train_net.py (detectron2 Cascade R-CNN, AMPTrainer, launch)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("self._trainer = (AMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(", "amp", R, True,
        "self._trainer = (NpuAMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(",
        "detectron2's AMPTrainer is written against torch.cuda.amp (autocast + GradScaler; older releases "
        "assert CUDA) -- from memory of detectron2; a subclass on torch.npu.amp is needed. " + AMP),
      C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():", AVAIL),
      C('cfg.MODEL.DEVICE = "cuda"', "device_type", R, True, 'cfg.MODEL.DEVICE = "npu"',
        DEV + "; detectron2 CUDA ops in _C have no NPU build, ROIAlign comes from torchvision(_npu) (§6)"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()", LAZY),
      C('logger.info("peak memory: %.0f MB", torch.cuda.max_memory_allocated() / 2**20)', "torch_cuda_api", R, False,
        'logger.info("peak memory: %.0f MB", torch.npu.max_memory_allocated() / 2**20)', MEMSTAT),
      C("=launch(", "dist_backend", R, True,
        "launch_npu(  # detectron2 launch with backend='hccl' and torch.npu.set_device(local_rank)",
        "detectron2's launch() chooses NCCL + set_device only when torch.cuda.is_available(), otherwise GLOO "
        "with no device binding (from memory of detectron2/engine/launch.py); multi-NPU runs need HCCL. " + HCCL),
  ])

E("layoutlmv3_funsd", "examples/run_funsd_cord.py", "explicit_replacement",
  "unilm LayoutLMv3 run_funsd_cord.py (HF Trainer token classification)", [
      C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

# ---------------------------------------------------------------- TrOCR / Table Transformer
E("trocr_beam_eval", "tools/eval_trocr.py", "explicit_replacement",
  "TrOCR (HF VisionEncoderDecoder) batch evaluation with beam search, CUDA-event timing", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
        'device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")', AVAIL),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
        "start = torch.npu.Event(enable_timing=True)",
        "torch.cuda.Event is a dummy class on a CPU-only torch build and raises when instantiated; "
        "torch.npu.Event ✔ (tsv)"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
        "end = torch.npu.Event(enable_timing=True)", "as above"),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)", LAZY),
      C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
        'print(f"peak memory: {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")', MEMSTAT),
  ])

E("tatr_misc", "src/util/misc.py", "explicit_replacement",
  "Table Transformer / DETR util/misc.py (all_gather via byte tensors, init_distributed_mode)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", R, True,
        "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
        DEV + "; whether HCCL all_reduce keeps fp64 exact is unconfirmed (fp64 is cast to fp32 by some "
        "NPU ops, ascend-host-formats.md §4.8)"),
      C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", R, True,
        'tensor = torch.ByteTensor(storage).to("npu")', DEV),
      C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", R, True,
        'local_size = torch.tensor([tensor.numel()], device="npu")', DEV),
      C('size_list = [torch.tensor([0], device="cuda")', "tensor_to_device", R, True,
        'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', DEV),
      C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", R, True,
        'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', DEV),
      C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
        R, True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', DEV),
      C("show_mem = torch.cuda.is_available()", "device_type", R, False, "show_mem = torch.npu.is_available()",
        "only drops the 'max mem' column from the log"),
      C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", R, False,
        "memory=torch.npu.max_memory_allocated() / MB))", "only reached once show_mem is ported; " + MEMSTAT),
      C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
        "args.gpu = args.rank % torch.npu.device_count()",
        "device_count() is 0 on an NPU host: ZeroDivisionError under SLURM"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", LAZY),
      C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'", HCCL),
  ])

E("tatr_inference", "src/inference.py", "explicit_replacement",
  "Table Transformer src/inference.py (TableExtractionPipeline, --*_device cuda)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("parser.add_argument('--detection_device', default=\"cuda\")", "device_type", R, True,
        "parser.add_argument('--detection_device', default=\"npu\")", DEV),
      C("parser.add_argument('--structure_device', default=\"cuda\")", "device_type", R, True,
        "parser.add_argument('--structure_device', default=\"npu\")", DEV),
      C('if self.half and str_device.startswith("cuda"):', "device_type", R, False,
        'if self.half and str_device.startswith(("cuda", "npu")):', "--half is silently ignored on NPU (fp32)"),
      C('if self.half and self.str_device.startswith("cuda"):', "device_type", R, False,
        'if self.half and self.str_device.startswith(("cuda", "npu")):',
        "must change together with the line above, or fp16 inputs meet fp32 weights"),
  ])

# ---------------------------------------------------------------- CTC recognizer
E("crnn_ctc_train", "train.py", "explicit_replacement",
  "clovaai deep-text-recognition-benchmark train.py (DataParallel, CTCLoss / warp-ctc, cudnn toggles)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", R, True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", AVAIL),
      C("model = torch.nn.DataParallel(model).to(device)", "device_type", R, True, "model = model.to(device)", DP),
      C("model.load_state_dict(torch.load(opt.saved_model), strict=False)", "device_type", R, True,
        "model.load_state_dict(strip_module(torch.load(opt.saved_model, map_location=device)), strict=False)",
        "checkpoints saved on GPU need map_location on a host without CUDA, and their 'module.' keys no "
        "longer match once DataParallel is gone -- with strict=False fine-tuning would silently start "
        "from scratch"),
      C("=model.load_state_dict(torch.load(opt.saved_model))", "device_type", R, True,
        "model.load_state_dict(strip_module(torch.load(opt.saved_model, map_location=device)))",
        "map_location for CUDA-saved checkpoints + 'module.' prefix after removing DataParallel"),
      C("from warpctc_pytorch import CTCLoss", "custom_cuda_extension", R, True,
        "from torch.nn import CTCLoss  # warp-ctc has no NPU build",
        "warp-ctc is a CUDA/CPU C++ extension with no NPU kernels; aten _ctc_loss has an NPU kernel "
        "(npu_native_ops_*.base.txt), fp32 input only (tsv nn.CTCLoss row)"),
      C("criterion = CTCLoss()", "custom_cuda_extension", R, True,
        "criterion = CTCLoss(zero_infinity=True).to(device)", "paired with the import above (--baiduCTC path)"),
      C("cost = criterion(preds, text, preds_size, length) / batch_size", "custom_cuda_extension", R, True,
        "cost = criterion(preds.log_softmax(2), text.to(device), preds_size.to(device), length.to(device))",
        "nn.CTCLoss wants log-probabilities and already averages; warp-ctc took raw activations and summed"),
      C("torch.cuda.manual_seed(opt.manualSeed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(opt.manualSeed)",
        "lazy no-op without CUDA; torch.manual_seed above also seeds the NPU (from memory; unconfirmed)"),
      C("opt.num_gpu = torch.cuda.device_count()", "torch_cuda_api", R, False, "opt.num_gpu = torch.npu.device_count()",
        "0 on NPU, so batch/worker scaling is skipped; with DataParallel removed the scaling is moot"),
  ])

E("crnn_ctc_modules", "modules/ctc_head.py", "explicit_replacement",
  "CRNN BiLSTM + CTC head with a warp-ctc / cuDNN / native CTC loss selector", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("self.rnn.flatten_parameters()", "unsupported_op_workaround", X, False, None,
        "RNNBase.flatten_parameters is ✘ in mstt_unsupported_torch_apis_2.7.txt; in practice it returns "
        "early for non-CUDA weights (from memory), so removal is hygiene only"),
      C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, True,
        "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
        "the CUDA decorator does not cast under NPU autocast, so ctc_loss can receive fp16; the tsv allows "
        "only fp32/fp64 input for ctc_loss / nn.CTCLoss"),
      C("dev = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", R, True,
        "dev = 'npu' if torch.npu.is_available() else 'cpu'", "self-test runs on the CPU; " + AVAIL),
  ])

# ---------------------------------------------------------------- services
E("celery_ocr_worker", "ocr_service/worker/tasks.py", "device_branch_or_abstraction",
  "Celery prefork OCR worker picking cuda:{idx} round-robin per child process", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C("n = torch.cuda.device_count()", "torch_cuda_api", R, True, "n = torch.npu.device_count()",
        "0 on an NPU host; every child then maps to index 0"),
      C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():", AVAIL),
      C('return torch.device(f"cuda:{idx}")', "device_type", R, True, 'return torch.device(f"npu:{idx}")', DEV),
      C('=if _DEVICE.type == "cuda":', "device_type", R, False, 'if _DEVICE.type in ("cuda", "npu"):',
        "without set_device a child may also open a context on npu:0 (unconfirmed); cudnn flag is moot"),
      C("torch.cuda.set_device(_DEVICE)", "torch_cuda_api", R, False, "torch.npu.set_device(_DEVICE)",
        "only reached once the guard above admits 'npu'"),
      C('if USE_FP16 and _DEVICE.type == "cuda":', "amp", R, True, 'if USE_FP16 and _DEVICE.type != "cpu":',
        "_to_tensor halves the inputs for every non-CPU device, so on NPU fp16 inputs meet fp32 weights "
        "and the first conv raises a dtype mismatch"),
      C("=if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():",
        "shutdown cache release only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
      C("autoretry_for=(torch.cuda.OutOfMemoryError,)", "torch_cuda_api", R, False,
        '@app.task(bind=True, name="ocr.page", autoretry_for=(torch.OutOfMemoryError, RuntimeError),',
        "which exception an NPU out-of-memory raises is unconfirmed; the CUDA class never matches it"),
      C('if _DEVICE is not None and _DEVICE.type == "cuda":', "device_type", R, False,
        'if _DEVICE is not None and _DEVICE.type == "npu":', "health endpoint omits memory info"),
      C("free, total = torch.cuda.mem_get_info(_DEVICE)", "torch_cuda_api", R, False,
        "free, total = torch.npu.mem_get_info(_DEVICE)", "only reached once the guard admits 'npu' (§2.1)"),
      C("name=torch.cuda.get_device_name(_DEVICE))", "torch_cuda_api", R, False,
        "name=torch.npu.get_device_name(_DEVICE))", "as above"),
      C("with torch.cuda.device(idx):", "torch_cuda_api", R, True, "with torch.npu.device(idx):", LAZY),
      C('torch.zeros(1, device="cuda").add_(1)', "tensor_to_device", R, True,
        'torch.zeros(1, device="npu").add_(1)', DEV),
      C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", LAZY),
  ])

E("rayserve_ocr", "serve/ocr_app.py", "device_branch_or_abstraction",
  "Ray Serve deployment with num_gpus=1 actors around a docTR predictor", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('ray_actor_options={"num_gpus": 1, "num_cpus": 4},', "device_type", R, True,
        'ray_actor_options={"resources": {"NPU": 1}, "num_cpus": 4},',
        "a node without GPUs can never place num_gpus=1, so replicas stay pending; Ray's 'NPU' accelerator "
        "resource is from memory (unconfirmed in the knowledge files)"),
      C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
        'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', AVAIL),
      C('if self.device.type == "cuda":', "device_type", R, False, 'if self.device.type in ("cuda", "npu"):',
        "fp16 weights skipped on NPU: slower only"),
      C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
        "guard is `!= 'cpu'`, so this runs for an NPU device and raises; " + LAZY),
      C('with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16,', "amp", R, False,
        'with torch.inference_mode(), torch.autocast("npu", dtype=torch.float16,',
        "disabled anyway for non-CUDA devices by the next line: fp32 inference, slower only"),
      C('enabled=self.device.type == "cuda"):', "amp", R, False, 'enabled=self.device.type == "npu"):', "as above"),
      C('if self.device.type != "cuda":', "device_type", R, False, 'if self.device.type != "npu":',
        "stats endpoint reports 'cpu'"),
      C('"allocated_mb": torch.cuda.memory_allocated()', "torch_cuda_api", R, False,
        '"allocated_mb": torch.npu.memory_allocated() // 2**20,', "only reached once the guard is ported"),
      C('"reserved_mb": torch.cuda.memory_reserved()', "torch_cuda_api", R, False,
        '"reserved_mb": torch.npu.memory_reserved() // 2**20,', "as above"),
      C("return ray.get_gpu_ids()", "device_type", R, False,
        'return ray.get_runtime_context().get_accelerator_ids().get("NPU", [])',
        "log only; Ray accelerator-id API for NPU from memory, unconfirmed"),
      C('return os.environ.get("CUDA_VISIBLE_DEVICES", "")', "env_var", R, False,
        'return os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "")', VIS + "; log only"),
  ])

E("bentoml_ocr", "service.py", "device_branch_or_abstraction",
  "BentoML 1.2 service wrapping TrOCR and an EasyOCR Reader(gpu=True)", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('resources={"gpu": 1, "gpu_type": "nvidia-l4"},', "device_type", R, False, 'resources={"cpu": "8"},',
        "BentoML has no NPU resource type as far as I know (unconfirmed); the gpu request only matters for "
        "BentoCloud scheduling and CUDA_VISIBLE_DEVICES assignment"),
      C('self.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
        'self.device = "npu" if torch.npu.is_available() else "cpu"', AVAIL),
      C('self.dtype = torch.float16 if self.device == "cuda" else torch.float32', "device_type", R, False,
        'self.dtype = torch.float16 if self.device == "npu" else torch.float32', "fp32 on NPU: slower only"),
      C("self.reader = easyocr.Reader(EASYOCR_LANGS, gpu=True, verbose=False)", "device_type", R, True,
        "self.reader = easyocr.Reader(EASYOCR_LANGS, gpu=self.device, verbose=False)",
        "EasyOCR's gpu=True checks torch.cuda.is_available() and falls back to CPU; a device string is "
        "passed through unchanged"),
      C("=if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():", "health info only"),
      C('info["gpu"] = torch.cuda.get_device_name(0)', "torch_cuda_api", R, False,
        'info["npu"] = torch.npu.get_device_name(0)', "only reached once the guard is ported"),
      C('info["mem_used_mb"] = torch.cuda.memory_allocated(0)', "torch_cuda_api", R, False,
        'info["mem_used_mb"] = torch.npu.memory_allocated(0) // 2**20', "as above"),
  ])

E("bentoml_bentofile", "bentofile.yaml", "explicit_replacement",
  "BentoML bentofile.yaml with docker.cuda_version and CUDA env", [
      C('cuda_version: "12.1.1"', "device_type", R, True,
        'base_image: "<CANN + torch_npu image, e.g. built from Ascend/cann-container-image>"',
        "the containerised bento would be built on a CUDA base without CANN/driver libraries "
        "(ascend-host-formats.md §3.7-3.9); exact base tag unconfirmed"),
      C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, False, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
        VIS + "; the service uses device 0 anyway"),
      C("NVIDIA_DRIVER_CAPABILITIES", "env_var", X, False, None, "read only by the NVIDIA container runtime"),
      C("PYTORCH_CUDA_ALLOC_CONF", "env_var", R, False, 'PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True"',
        "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF (expandable_segments, torch-npu-migration.md §1.6)"),
  ])

E("fastapi_batch_ocr", "app/main.py", "explicit_replacement",
  "FastAPI micro-batching endpoint with a side CUDA stream, inference_mode and torch.compile", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('DEVICE = os.environ.get("OCR_DEVICE", "cuda:0")', "device_type", R, True,
        'DEVICE = os.environ.get("OCR_DEVICE", "npu:0")', DEV),
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
        "torch.cuda.Stream is a dummy class on a CPU-only torch build; torch.npu.Stream ✔ (tsv)"),
      C("job = _Job(self._prep(img).pin_memory())", "pin_memory", R, False,
        'job = _Job(self._prep(img).pin_memory(device="npu"))',
        "which accelerator Tensor.pin_memory() targets by default without CUDA is unconfirmed; "
        "transfer_to_npu patches pin_memory (§2.2)"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):", LAZY),
      C("with torch.inference_mode(), torch.cuda.amp.autocast(enabled=USE_AMP):", "amp", R, True,
        "with torch.inference_mode(), torch.npu.amp.autocast(enabled=USE_AMP):", AMP),
      C('if DEVICE.startswith("cuda") and not torch.cuda.is_available():', "device_type", R, False,
        'if DEVICE.startswith("npu") and not torch.npu.is_available():',
        "start-up sanity check only; with an 'npu' DEVICE it is simply skipped"),
      C('model = torch.compile(model, mode="reduce-overhead", dynamic=False)', "compile_mode", R, False,
        'model = torch.compile(model, backend="npugraphs", dynamic=False)',
        "reduce-overhead means CUDA graphs; the tsv torch.compile row names backend npugraphs as the NPU "
        "counterpart of cudagraphs; how inductor's reduce-overhead behaves on NPU is unconfirmed"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
      C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
        "free, total = torch.npu.mem_get_info()", "health check raises (500) on an NPU host; " + LAZY),
  ])

E("mp_gpu_workers", "docpipe/gpu_pool.py", "explicit_replacement",
  "torch.multiprocessing spawn pool, CUDA_VISIBLE_DEVICES per worker, NVML free-memory filter", [
      C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
      C('env = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", R, True,
        'env = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
        "the user's NPU selection is ignored and logical indices from device_count() are later written back "
        "as if physical, so workers land on the wrong cards; " + VIS),
      C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", R, True,
        "return list(range(torch.npu.device_count()))", "0 on an NPU host: 'no GPU with enough free memory'"),
      C("=import pynvml", "torch_cuda_api", R, False,
        "import torch_npu  # no NVML on Ascend: use torch.npu.mem_get_info(i) per device",
        "NVML is NVIDIA-only (§6: pynvml has no NPU equivalent); default_pool swallows the error, so only "
        "the busy-card filter is lost"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(physical_id)', "env_var", R, True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(physical_id)', "every worker would use npu:0; " + VIS),
      C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256")', "env_var", R, False,
        'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "max_split_size_mb:256")',
        "allocator tuning only; max_split_size_mb support in PYTORCH_NPU_ALLOC_CONF unconfirmed"),
      C("torch.cuda.set_device(0)", "torch_cuda_api", R, True, "torch.npu.set_device(0)", LAZY),
      C('device = torch.device("cuda", 0)', "device_type", R, True, 'device = torch.device("npu", 0)', DEV),
      C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
        'log.info("worker %d on NPU %d (%s)", rank, physical_id, torch.npu.get_device_name(0))', LAZY),
      C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
        "torch.npu.current_stream().synchronize()", LAZY),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False, "except torch.OutOfMemoryError:",
        "which exception an NPU OOM raises is unconfirmed; otherwise it falls into the generic handler"),
      C("torch.cuda.empty_cache()  # drop", "torch_cuda_api", R, False,
        "torch.npu.empty_cache()  # drop cached blocks and keep serving", EMPTY),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY),
  ])

E("pdf_raster_clean", "docpipe/rasterize.py", "explicit_replacement",
  "CPU-only PDF rasteriser (pypdfium2) and OCR text cleaner; no labels by design", [])

# ---------------------------------------------------------------- packaging / deployment
E("ocr_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a GPU OCR service (cu121 torch, mmcv/detectron2, flash-attn, xformers, NVML)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts take the CPU torch wheel, aarch64 plain PyPI (§1.1)"),
      C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0  # + torch-npu==2.1.0.post17",
        "torch_npu wheels pair with torch x.y.z exactly (2.1.0 ↔ 2.1.0.postN, §1.1-1.2); +cu121 does not "
        "exist on the CPU index"),
      C("torchvision==0.16.2+cu121", "import_torch_npu", R, True, "torchvision==0.16.0  # + torchvision_npu",
        "Ascend/vision pairs torchvision 0.16.0 with torch 2.1 and adds nms/roi_align kernels (§6)"),
      C("torchaudio==2.1.2+cu121", "import_torch_npu", R, True, "torchaudio==2.1.0",
        "CUDA local version not resolvable on an NPU host; must match torch 2.1.0"),
      C("mmcv==2.1.0 -f https://download.openmmlab.com/mmcv/dist/cu121", "custom_cuda_extension", R, True,
        "mmcv==2.1.0  # built from source with MMCV_WITH_OPS=1 FORCE_NPU=1",
        "the cu121 wheel index has CUDA ops only; NPU ops need an NPU build of mmcv (build flags from memory, "
        "unconfirmed)"),
      C("detectron2 @ git+", "custom_cuda_extension", R, False,
        "detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6  # CPU build of _C",
        "builds without CUDA (CPU _C); its CUDA-only ops are unavailable on NPU (unconfirmed which ones the "
        "LayoutLMv3 config hits)"),
      C("warpctc-pytorch==0.2.1", "custom_cuda_extension", X, True, None,
        "prebuilt CUDA binary extension (from memory); no Ascend build -- nn.CTCLoss replaces it"),
      C("onnxruntime-gpu==1.17.1", "unsupported_op_workaround", R, False, "onnxruntime==1.17.1",
        "CUDA execution provider only; a CANN execution provider exists upstream as far as I know (unconfirmed)"),
      C("xformers==0.0.23.post1", "attention_kernel", X, True, None,
        "no NPU backend for xformers (§6); its wheel also pins the CUDA torch build"),
      C("flash-attn==2.5.6", "attention_kernel", X, True, None,
        "flash-attn cannot be installed on NPU (§6); use sdpa / npu_fusion_attention"),
      C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "NVML is NVIDIA-only (§6); harmless to install"),
      C("cupy-cuda12x==13.0.0", "unsupported_op_workaround", X, False, None,
        "no Ascend support for CuPy (§6); nothing in this service imports it at start-up"),
  ])

E("ocr_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile on nvidia/cuda runtime with cu121 torch, mmcv CUDA ops and a FORCE_CUDA build", [
      C("ARG CUDA_VERSION=12.1.1", "device_type", R, False, "ARG CANN_VERSION=8.3.rc1",
        "only feeds the FROM line; tag naming unconfirmed"),
      C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-runtime-ubuntu22.04", "device_type", R, True,
        "FROM <CANN ${CANN_VERSION} image with torch_npu, e.g. from Ascend/cann-container-image>",
        "no CANN toolkit / driver libraries in a CUDA image (ascend-host-formats.md §3.7-3.8)"),
      C("NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
        "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
      C('TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;8.9;9.0"', "env_var", X, False, None, "nvcc arch list; no effect without CUDA"),
      C("FORCE_CUDA=1", "env_var", X, True, None,
        "makes setup.py build the CUDAExtension targets, which needs nvcc/CUDA_HOME: the image build fails"),
      C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
        "import_torch_npu", R, True,
        "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
        "&& pip install torch-npu==2.1.0.post17",
        "CUDA torch wheels cannot drive an NPU; torch_npu must match torch x.y.z (§1.1-1.2)"),
      C('RUN pip install -U openmim && mim install "mmcv==2.1.0"', "custom_cuda_extension", R, True,
        "RUN git clone -b v2.1.0 https://github.com/open-mmlab/mmcv && cd mmcv && MMCV_WITH_OPS=1 FORCE_NPU=1 pip install -e .",
        "mim fetches the CUDA-op mmcv build; NPU build flags from memory, unconfirmed"),
      C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda)"', "import_torch_npu", R, False,
        'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.is_available())"',
        "prints None for CUDA; a build-time smoke test only"),
      C("HEALTHCHECK --interval=30s --timeout=5s CMD nvidia-smi", "device_type", R, True,
        "HEALTHCHECK --interval=30s --timeout=5s CMD npu-smi info > /dev/null || exit 1",
        "nvidia-smi is absent, so the container is always unhealthy and gets restarted; npu-smi must be "
        "mounted into the container (ascend-host-formats.md §3.9)"),
  ])

E("ocr_compose", "docker-compose.yml", "explicit_replacement",
  "docker-compose with NVIDIA device reservations, runtime: nvidia and CUDA env", [
      C('OCR_DEVICE: "cuda:0"', "device_type", R, True, 'OCR_DEVICE: "npu:0"', DEV),
      C('CUDA_VISIBLE_DEVICES: "0"', "env_var", R, False, 'ASCEND_RT_VISIBLE_DEVICES: "0"',
        VIS + "; only one NPU is mounted anyway"),
      C("- driver: nvidia", "device_type", R, True,
        "devices: [/dev/davinci0, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc]",
        "compose cannot select the nvidia device driver on an Ascend host; NPU containers mount the davinci "
        "nodes plus driver paths (ascend-host-formats.md §3.9)"),
      C('device_ids: ["0"]', "device_type", X, True, None, "part of the NVIDIA reservation block above"),
      C("capabilities: [gpu]", "device_type", X, True, None, "part of the NVIDIA reservation block above"),
      C('NVIDIA_VISIBLE_DEVICES: "1,2"', "env_var", R, True, 'ASCEND_VISIBLE_DEVICES: "1,2"',
        "with Ascend Docker Runtime, ASCEND_VISIBLE_DEVICES chooses the mounted NPUs (ascend-distributed.md §1)"),
      C("runtime: nvidia", "device_type", R, True, "runtime: ascend",
        "the nvidia runtime is not installed on an Ascend host; Ascend-Docker-Runtime registers 'ascend' "
        "(ascend-host-formats.md §3.9)"),
  ])

E("ocr_ext_setup", "setup.py", "explicit_replacement",
  "setup.py building a CPU CppExtension plus CUDA CTC-beam and DCNv2 CUDAExtensions", [
      C("else:", "custom_cuda_extension", B, False,
        "elif os.getenv('FORCE_NPU', '0') == '1': extensions.append(NpuExtension('docai._dcn', npu_sources))",
        "no nvcc path on Ascend; kernels must be rewritten in Ascend C and built with "
        "torch_npu.utils.cpp_extension.NpuExtension (§6). Not required for the build itself, which falls "
        "back to CPU-only extensions"),
      C('"torch>=2.1,<2.2",', "import_torch_npu", R, False, '"torch>=2.1,<2.2", "torch-npu>=2.1.0,<2.2",',
        "declares the torch_npu dependency (§1.1)"),
      C('"nvidia-cuda-runtime-cu12",', "device_type", X, False, None, "CUDA runtime wheel; dead weight on NPU"),
      C('"gpu": ["cupy-cuda12x>=12", "pynvml"],', "unsupported_op_workaround", R, False, '"npu": ["torch-npu"],',
        "CuPy and NVML have no Ascend support (§6)"),
  ])

E("ocr_service_cfg", "configs/service.yaml", "explicit_replacement",
  "service YAML: device, visible-devices env, CUDA beam-search decoder, flash_attention_2, nccl", [
      C("device: cuda", "device_type", R, True, "device: npu", DEV),
      C("visible_devices_env: CUDA_VISIBLE_DEVICES", "env_var", R, True,
        "visible_devices_env: ASCEND_RT_VISIBLE_DEVICES", "worker pinning uses this name; " + VIS),
      C("channels_last: true", "unsupported_op_workaround", R, False, "channels_last: false",
        "channel_last is listed as unsupported under transfer_to_npu (§2.8); for native torch_npu unconfirmed"),
      C("deformable: true", "custom_cuda_extension", R, False, "deformable: false",
        "docai._dcn is only built with CUDA (setup.py); the comment says the service falls back when it is missing"),
      C("decoder: ctc_beam_cuda", "custom_cuda_extension", R, True, "decoder: ctc_beam_cpu",
        "docai._ctc_beam is a CUDA-only extension that is not built on an NPU host"),
      C("attn_implementation: flash_attention_2", "attention_kernel", R, True, "attn_implementation: sdpa",
        "flash-attn cannot be installed on NPU; transformers recommends sdpa on NPU (§5-6, PR #36383)"),
      C("backend: nccl", "dist_backend", R, False, "backend: hccl", HCCL + "; distributed.enabled is false by default"),
      C("gpu_metrics: nvml", "torch_cuda_api", R, False, "gpu_metrics: npu-smi",
        "NVML has no NPU counterpart (§6); the service's accepted values are unknown"),
  ])
