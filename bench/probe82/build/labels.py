"""Labels for probe82 (hand-written synthetic upstream files; see ../README.md).

Domain: Kaggle-style competition solution code (multi-fold training with AMP / EMA / SWA / TTA,
pseudo-labelling, timm / segmentation_models_pytorch backbones, offline inference kernels, RAPIDS /
DALI / faiss / CuPy helpers, the solution's requirements / conda env / Dockerfile / launch script).

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

IMPORT_NOTE = ("torch.npu.* / the 'npu' device need torch_npu loaded (autoload exists since 2.5.1, the explicit "
               "import is still recommended)")
AUTOCAST_NOTE = ("CUDA autocast is inactive for NPU tensors (disabled with a warning when CUDA is absent): "
                 "the step silently runs without mixed precision")
SCALER_NOTE = ("torch.cuda.amp.GradScaler disables itself without CUDA: fp16 training would run "
               "without loss scaling; torch.npu.amp.GradScaler / torch.amp.GradScaler('npu')")
CKPT_NOTE = ("checkpoint written from CUDA tensors; torch.load without map_location fails to deserialize "
             "CUDA storages when torch.cuda.is_available() is False")
EMPTY_CACHE_NOTE = "silent no-op without CUDA; torch.npu.empty_cache() actually releases NPU cache (optional)"

# ------------------------------------------------------------------------------------------------
E("rsna_25d_train", "train.py", "explicit_replacement",
  "RSNA 2022 cervical-spine 2.5D stage-2 trainer (timm CNN + LSTM over slices, CFG class, ModelEmaV2, "
  "torch.cuda.amp imports, DataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", R, True,
      "from torch.npu.amp import autocast, GradScaler",
      "the imported names drive every autocast()/GradScaler() below: " + AUTOCAST_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = CFG.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = CFG.gpus',
      "the NPU runtime selects devices with ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is ignored"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")',
      "every .to(device) in the script targets this device"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "silently ignored without CUDA: the NPU generator stays unseeded (reproducibility only)"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", R, True, "if torch.npu.device_count() > 1:",
      "returns 0 on an NPU host, so the multi-device branch is silently skipped"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", X, True, None,
      "torch.nn.DataParallel is unsupported on Ascend (use DDP via torchrun); reached once the count is fixed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", R, True,
      'LOGGER.info(f"device: {torch.npu.get_device_name(0)} x{torch.npu.device_count()}")',
      "torch.cuda.get_device_name initialises CUDA and raises on a torch build without CUDA"),
])

E("cassava_train_notebook", "cassava-leaf-disease-training.py", "transfer_to_npu",
  "Cassava Leaf Disease 'PyTorch EfficientNet baseline [Train] AMP+Aug' notebook export (CFG dict, fmix/cutmix, "
  "torch.cuda.amp, Kaggle 2xT4 DataParallel)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "notebook-style script: transfer_to_npu remaps torch.cuda / 'cuda:0' / torch.cuda.amp at runtime; "
      "it must precede 'from torch.cuda.amp import ...'"),
    C("'channels_last': True,", "unsupported_op_workaround", R, False, "'channels_last': False,",
      "msFmkTransplt documents channels_last as unsupported under transfer_to_npu (use contiguous); "
      "actual failure mode unconfirmed"),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", X, True, None,
      "transfer_to_npu makes device_count() report the NPUs, so this branch is taken, and DataParallel is "
      "unsupported on Ascend"),
])

E("cassava_infer_tta", "cassava-inference-tta.py", "explicit_replacement",
  "Cassava Leaf Disease inference kernel (offline timm, 5 folds x 2 archs, random-aug TTA, hard vote)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda:0')", "device_type", R, True, "device = torch.device('npu:0')",
      "module-level device used for models and batches"),
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", AUTOCAST_NOTE),
    C("model.load_state_dict(strip_prefix(torch.load(ckpt)))", "tensor_to_device", R, True,
      "model.load_state_dict(strip_prefix(torch.load(ckpt, map_location='cpu')))", CKPT_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("voted = labels.mode(dim=0).values", "unsupported_op_workaround", R, False,
      "voted = labels.cpu().mode(dim=0).values",
      "torch.Tensor.mode is in msFmkTransplt's unsupported list; the managed CPU fallback probably runs it "
      "(unconfirmed), so only a host round-trip is at stake"),
])

E("hubmap_smp_train", "hubmap/train_smp.py", "explicit_replacement",
  "HuBMAP Hacking-the-Kidney smp Unet/Unet++ tile trainer (torch.autocast('cuda'), SWA with update_bn, "
  "threshold search)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "images = images.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
    C("masks = masks.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "masks = masks.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg["train"]["amp"]):', "amp", R,
      True, 'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=cfg["train"]["amp"]):',
      AUTOCAST_NOTE),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA (lazy init)"),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 when CUDA was never initialised: log line only"),
    C("dice_sum = torch.zeros(1).cuda()", "tensor_to_device", R, True, "dice_sum = torch.zeros(1).npu()",
      ".cuda() needs a CUDA build"),
    C("images, masks = images.cuda(non_blocking=True), masks.cuda(non_blocking=True)", "tensor_to_device", R,
      True, "images, masks = images.npu(non_blocking=True), masks.npu(non_blocking=True)",
      ".cuda() needs a CUDA build"),
    C('with torch.autocast("cuda", enabled=cfg["train"]["amp"]):', "amp", R, True,
      'with torch.autocast("npu", enabled=cfg["train"]["amp"]):', AUTOCAST_NOTE),
    C("model = build_model(cfg).cuda()", "tensor_to_device", R, True, "model = build_model(cfg).npu()",
      ".cuda() needs a CUDA build"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", R, True,
      'scaler = torch.npu.amp.GradScaler(enabled=cfg["train"]["amp"])', SCALER_NOTE),
    C('update_bn(trn_loader, swa_model, device=torch.device("cuda"))', "tensor_to_device", R, True,
      'update_bn(trn_loader, swa_model, device=torch.device("npu"))',
      "swa_utils.update_bn moves every batch to this device"),
])

E("hubmap_tile_infer", "hubmap/inference_tiles.py", "explicit_replacement",
  "HuBMAP inference kernel (rasterio sliding window, 5-fold x 8-way dihedral TTA, on-device stitching, RLE)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "is_available() is False on an NPU host: the whole ensemble silently runs on the CPU"),
    C("state = torch.load(path, map_location=lambda storage, loc: storage.cuda())", "tensor_to_device", R, True,
      'state = torch.load(path, map_location="cpu")', "storage.cuda() fails without CUDA"),
    C('preds = torch.zeros((h // REDUCE, w // REDUCE), dtype=torch.float16, device="cuda")', "device_type", R,
      True, "preds = torch.zeros((h // REDUCE, w // REDUCE), dtype=torch.float16, device=DEVICE)",
      "hard-coded 'cuda' stitching buffer"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("models = load_models()", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "the last batch of every image has a different size: binary (non-JIT) kernels avoid recompiles; "
      "performance only"),
])

E("siim_apex_ddp", "siim/train_apex.py", "explicit_replacement",
  "SIIM-ACR Pneumothorax 2019-era trainer on NVIDIA apex (amp O1, apex DDP, convert_syncbn_model, FusedAdam, "
  "torch.distributed.launch --local_rank)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from apex import amp", "amp", R, True, "from torch.npu.amp import GradScaler, autocast",
      "NVIDIA apex amp is not usable on NPU tensors (Ascend ships its own apex patch); port to native AMP"),
    C("from apex.parallel import DistributedDataParallel as DDP", "distributed_framework", R, True,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "apex.parallel is part of the CUDA apex build; native DDP over HCCL instead"),
    C("from apex.parallel import convert_syncbn_model", "distributed_framework", X, True, None,
      "removed with apex; nn.SyncBatchNorm.convert_sync_batchnorm below"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedAdam",
      "apex FusedAdam needs the amp_C / fused CUDA kernels, not available on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend: HCCL"),
    C("model = convert_syncbn_model(model)", "distributed_framework", R, True,
      "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", "apex SyncBN -> torch SyncBatchNorm"),
    C("self.model = model.cuda()", "tensor_to_device", R, True, "self.model = model.npu()",
      ".cuda() needs a CUDA build"),
    C("self.optimizer = FusedAdam(", "fused_optimizer", R, True,
      'self.optimizer = NpuFusedAdam(self.model.parameters(), lr=lr, weight_decay=cfg["optim"]["wd"])',
      "FusedAdam construction fails without its CUDA extension"),
    C("self.model, self.optimizer = amp.initialize(", "amp", R, True,
      "self.scaler = GradScaler(enabled=args.opt_level != 'O0')",
      "apex amp.initialize expects CUDA parameters; replaced by a native GradScaler"),
    C("self.model = DDP(self.model, delay_allreduce=True)", "distributed_framework", R, True,
      "self.model = DDP(self.model, device_ids=[args.local_rank])", "apex DDP -> torch DDP"),
    C("self.criterion = ComboLoss(", "tensor_to_device", R, True,
      'self.criterion = ComboLoss({"bce": 3, "dice": 1, "focal": 4}, per_image=False).npu()',
      ".cuda() needs a CUDA build"),
    C("ckpt = torch.load(path, map_location=lambda storage, loc: storage.cuda(args.local_rank))",
      "tensor_to_device", R, True, 'ckpt = torch.load(path, map_location=f"npu:{args.local_rank}")',
      "storage.cuda() fails without CUDA"),
    C('amp.load_state_dict(ckpt["amp"])', "amp", R, True, 'self.scaler.load_state_dict(ckpt["amp"])',
      "apex amp state replaced by the GradScaler state"),
    C('"amp": amp.state_dict(),', "amp", R, True, '"amp": self.scaler.state_dict(),',
      "apex amp state replaced by the GradScaler state"),
    C("with amp.scale_loss(loss, self.optimizer) as scaled_loss:", "amp", R, True,
      "self.scaler.scale(loss).backward()", "native loss scaling (forward also wrapped in autocast('npu'))"),
    C("scaled_loss.backward()", "amp", X, True, None, "folded into scaler.scale(loss).backward()"),
    C("=self.optimizer.step()", "amp", R, True, "self.scaler.step(self.optimizer); self.scaler.update()",
      "the step must go through the scaler once apex amp is gone"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA (master rank, every 50 steps)"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "images = images.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
    C("masks = masks.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "masks = masks.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
])

E("swa_checkpoint_utils", "src/utils/swa.py", "device_branch_or_abstraction",
  "competition 'offline SWA' helper (average best-k checkpoints, BN recalibration, AveragedModel wrapper)", [
    C('def average_checkpoints(paths, device="cuda"):', "device_type", R, True,
      'def average_checkpoints(paths, device="cpu"):',
      "default map_location 'cuda' fails on an NPU host (average on CPU, then load into the NPU model)"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "input = input.to(next(model.parameters()).device, non_blocking=True)", ".cuda() needs a CUDA build"),
])

E("model_ema", "src/utils/ema.py", "device_branch_or_abstraction",
  "YOLOv5 / timm ModelEmaV2-style EMA helper (device-agnostic; deliberate near-misses only)", [])

E("pseudo_label_gen", "tools/make_pseudo_labels.py", "explicit_replacement",
  "RANZCR CLiP noisy-student pseudo-labelling of NIH ChestX-ray14 with a fold ensemble, one process per GPU "
  "via mp.spawn", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('p.add_argument("--gpus", type=int, default=torch.cuda.device_count())', "torch_cuda_api", R, True,
      'p.add_argument("--gpus", type=int, default=torch.npu.device_count())',
      "0 on an NPU host: the job silently shrinks to one worker"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", R, True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", AUTOCAST_NOTE),
    C('device = torch.device(f"cuda:{rank}")', "device_type", R, True, 'device = torch.device(f"npu:{rank}")',
      "per-worker device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "raises without CUDA"),
])

E("birdclef_gpu_features", "birdclef/gpu_features.py", "explicit_replacement",
  "BirdCLEF on-device feature extraction (torchaudio log-mel, PCEN as a CuPy RawKernel via DLPack, "
  "SpecAugment, mixup)", [
    C("import cupy as cp", "custom_cuda_extension", X, True, None,
      "CuPy has no Ascend backend; PCEN is rewritten with torch ops"),
    C("from torch.utils.dlpack import from_dlpack, to_dlpack", "unsupported_op_workaround", X, True, None,
      "torch.utils.dlpack.from_dlpack / to_dlpack are unsupported on Ascend (and only served the CuPy bridge)"),
    C('_pcen_kernel = cp.RawKernel(_PCEN_SRC, "pcen_rows")', "custom_cuda_extension", X, True, None,
      "CUDA C kernel compiled by CuPy/NVRTC"),
    C("e = cp.fromDlpack(to_dlpack(mel))", "custom_cuda_extension", R, True,
      "m = pcen_iir_torch(mel, s)  # first-order IIR over time in torch",
      "CuPy view of the torch tensor"),
    C("out = cp.empty_like(e)", "custom_cuda_extension", R, True,
      "out = (mel / (eps + m) ** alpha + delta) ** r - delta ** r", "CuPy allocation"),
    C("_pcen_kernel((blocks,), (threads,), (e, out,", "custom_cuda_extension", X, True, None,
      "CUDA kernel launch"),
    C("return from_dlpack(out.toDlpack())", "unsupported_op_workaround", R, True, "return out",
      "DLPack exchange unsupported on Ascend"),
    C("return extractor.cuda()", "tensor_to_device", R, True, "return extractor.npu()",
      ".cuda() needs a CUDA build"),
    C('y = torch.zeros((len(primary), n_classes), device="cuda")', "device_type", R, True,
      'y = torch.zeros((len(primary), n_classes), device="npu")', "hard-coded 'cuda' tensor"),
])

E("birdclef_sed_train", "birdclef/train_sed.py", "explicit_replacement",
  "BirdCLEF 2023 SED trainer (PANNs attention head on timm CNN, nullcontext-or-autocast AMP switch, "
  "peak-memory logging)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:%d" % args.gpu)', "device_type", R, True,
      'device = torch.device("npu:%d" % args.gpu)', "device for model and batches"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=bool(args.amp))", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=bool(args.amp))", SCALER_NOTE),
    C('amp_ctx = (lambda: torch.autocast(device_type="cuda", dtype=torch.float16))', "amp", R, True,
      'amp_ctx = (lambda: torch.autocast(device_type="npu", dtype=torch.float16)) if args.amp '
      'else contextlib.nullcontext', AUTOCAST_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "returns 0 when CUDA was never initialised: log line only"),
])

E("rsna_dali_dicom", "tools/dicom_to_png_dali.py", "explicit_replacement",
  "RSNA Screening Mammography DICOM->PNG preprocessing (dicomsdl j2k extraction + NVIDIA DALI nvJPEG2000 "
  "'mixed' decode, feed_ndarray into torch on the GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the windowing / crop / resize stays on the accelerator (torch on NPU)"),
    C("import nvidia.dali.fn as fn", "custom_cuda_extension", X, True, None,
      "NVIDIA DALI decodes on CUDA GPUs only; decode with dicomsdl / pylibjpeg on the CPU instead"),
    C("import nvidia.dali.types as types", "custom_cuda_extension", X, True, None, "DALI removed"),
    C("from nvidia.dali import pipeline_def", "custom_cuda_extension", X, True, None, "DALI removed"),
    C("from nvidia.dali.plugin.pytorch import feed_ndarray", "custom_cuda_extension", X, True, None,
      "DALI removed"),
    C('images = fn.experimental.decoders.image(jpegs, device="mixed", output_type=types.ANY_DATA,',
      "custom_cuda_extension", X, True, None, "'mixed' = nvJPEG2000 on the GPU"),
    C("pipe = j2k_decode_pipeline(j2k_files, batch_size=len(j2k_files), num_threads=2, device_id=0,",
      "custom_cuda_extension", R, True, "for src, meta in zip(srcs, metas): decode_cpu(src, meta, args)",
      "DALI pipeline bound to CUDA device 0"),
    C('buf = torch.empty(out.shape(), dtype=torch.int16, device="cuda")', "device_type", R, True,
      'buf = torch.empty(out.shape(), dtype=torch.int16, device="npu")', "hard-coded 'cuda' buffer"),
    C("feed_ndarray(out, buf, cuda_stream=torch.cuda.current_stream(device=0))", "custom_cuda_extension", R,
      True, "buf.copy_(torch.from_numpy(arr))", "DALI -> torch copy on the current CUDA stream"),
    C("img = process_tensor(torch.from_numpy(arr.astype(np.float32)), meta, args.size)", "tensor_to_device", R,
      False, "img = process_tensor(torch.from_numpy(arr.astype(np.float32)).npu(), meta, args.size)",
      "with every file now on this path, move the array to the NPU for the resize (performance)"),
])

E("shopee_rapids_knn", "shopee-rapids-inference.py", "explicit_replacement",
  "Shopee Price Match inference kernel (cuDF / cuML TfidfVectorizer + NearestNeighbors, CuPy chunked "
  "similarity, ArcFace eca_nfnet_l0 image embeddings)", [
    C("=import cudf", "custom_cuda_extension", X, True, None, "RAPIDS cuDF requires an NVIDIA GPU; pandas"),
    C("=import cuml", "custom_cuda_extension", X, True, None, "RAPIDS cuML requires an NVIDIA GPU; scikit-learn"),
    C("=import cupy", "custom_cuda_extension", X, True, None,
      "CuPy has no Ascend backend; the chunked similarity falls back to numpy on the host"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from cuml.feature_extraction.text import TfidfVectorizer", "custom_cuda_extension", R, True,
      "from sklearn.feature_extraction.text import TfidfVectorizer", "cuML -> scikit-learn"),
    C("from cuml.neighbors import NearestNeighbors", "custom_cuda_extension", R, True,
      "from sklearn.neighbors import NearestNeighbors", "cuML -> scikit-learn"),
    C("print('RAPIDS', cuml.__version__)", "custom_cuda_extension", X, True, None, "cuml no longer imported"),
    C("DEVICE = torch.device('cuda')", "device_type", R, True, "DEVICE = torch.device('npu')",
      "image model device"),
    C("df_cu = cudf.DataFrame(df)", "custom_cuda_extension", R, True, "df_cu = df", "cuDF -> pandas"),
    C("model.load_state_dict(torch.load(MODEL_PATH), strict=False)", "tensor_to_device", R, True,
      "model.load_state_dict(torch.load(MODEL_PATH, map_location='cpu'), strict=False)", CKPT_NOTE),
    C("img = img.cuda()", "tensor_to_device", R, True, "img = img.npu()", ".cuda() needs a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("cts = cupy.matmul(text_embeddings, text_embeddings[a:b].T).T", "custom_cuda_extension", R, True,
      "cts = np.matmul(text_embeddings, text_embeddings[a:b].T).T",
      "CuPy matmul (scikit-learn's TfidfVectorizer output is a host matrix)"),
    C("idx = cupy.where(cts[k, ] > TXT_THR)[0]", "custom_cuda_extension", R, True,
      "idx = np.where(cts[k, ] > TXT_THR)[0]", "CuPy where"),
    C("o = df.iloc[cupy.asnumpy(idx)].posting_id.values", "custom_cuda_extension", R, True,
      "o = df.iloc[idx].posting_id.values", "CuPy -> host copy"),
    C("cupy.get_default_memory_pool().free_all_blocks()", "custom_cuda_extension", X, True, None,
      "CuPy memory pool"),
])

E("landmark_faiss_retrieval", "landmark/retrieval.py", "explicit_replacement",
  "Google Landmark Retrieval 2021 embedding + faiss search (GeM/Mish neck, @torch.cuda.amp.autocast "
  "decorator, multi-scale TTA, GPU IVF-PQ via index_cpu_to_all_gpus, alpha-QE/DBA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("return x * torch.tanh(F.softplus(x))", "npu_fused_op", R, False, "return torch_npu.npu_mish(x)",
      "fused Mish kernel (performance only)"),
    C("@torch.cuda.amp.autocast()", "amp", R, True, "@torch.npu.amp.autocast()", AUTOCAST_NOTE),
    C("images = images.cuda()", "tensor_to_device", R, True, "images = images.npu()",
      ".cuda() needs a CUDA build"),
    C("return model.cuda().eval()", "tensor_to_device", R, True, "return model.npu().eval()",
      ".cuda() needs a CUDA build"),
    C("co = faiss.GpuMultipleClonerOptions()", "custom_cuda_extension", X, True, None,
      "faiss GPU classes exist only in the CUDA build of faiss (faiss-cpu on the NPU host)"),
    C("co.useFloat16 = True", "custom_cuda_extension", X, True, None, "GPU cloner options removed"),
    C("co.shard = True", "custom_cuda_extension", X, True, None, "GPU cloner options removed"),
    C("index = faiss.index_cpu_to_all_gpus(index, co=co)", "custom_cuda_extension", X, True, None,
      "unconditional GPU cloning (exact_index above already falls back to IndexFlatIP)"),
    C('faiss.GpuParameterSpace().set_index_parameter(index, "nprobe", nprobe)', "custom_cuda_extension", R, True,
      'faiss.ParameterSpace().set_index_parameter(index, "nprobe", nprobe)', "CPU ParameterSpace"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("lyft3d_iou3d_nms", "lib/ops/iou3d_nms/iou3d_nms_utils.py", "explicit_replacement",
  "Lyft 3D detection solution, OpenPCDet-style iou3d_nms wrapper over a compiled CUDA extension "
  "(torch.cuda.FloatTensor outputs)", [
    C("from . import iou3d_nms_cuda", "custom_cuda_extension", R, True,
      "from . import iou3d_nms_npu as iou3d_nms_cuda  # Ascend C port / DrivingSDK op",
      "nvcc-built extension; needs an NPU implementation"),
    C("ans_iou = torch.cuda.FloatTensor(torch.Size((boxes_a.shape[0], boxes_b.shape[0]))).zero_()",
      "torch_cuda_api", R, True, "ans_iou = boxes_a.new_zeros((boxes_a.shape[0], boxes_b.shape[0]))",
      "legacy CUDA tensor type"),
    C("iou3d_nms_cuda.boxes_iou_bev_gpu(", "custom_cuda_extension", R, True,
      "iou3d_nms_cuda.boxes_iou_bev_npu(boxes_a.contiguous(), boxes_b.contiguous(), ans_iou)",
      "CUDA kernel entry point"),
    C("bev_overlap = torch.cuda.FloatTensor(", "torch_cuda_api", R, True,
      "bev_overlap = boxes_a.new_zeros((boxes_a.shape[0], boxes_b.shape[0]))", "legacy CUDA tensor type"),
    C("iou3d_nms_cuda.boxes_overlap_bev_gpu(", "custom_cuda_extension", R, True,
      "iou3d_nms_cuda.boxes_overlap_bev_npu(boxes_a.contiguous(), boxes_b.contiguous(), bev_overlap)",
      "CUDA kernel entry point"),
    C("num_out = iou3d_nms_cuda.nms_gpu(boxes, keep, thresh)", "custom_cuda_extension", R, True,
      "num_out = iou3d_nms_cuda.nms_npu(boxes, keep, thresh)", "CUDA kernel entry point"),
    C("return order[keep[:num_out].cuda()].contiguous(), None", "tensor_to_device", R, True,
      "return order[keep[:num_out].to(order.device)].contiguous(), None", ".cuda() needs a CUDA build"),
    C("num_out = iou3d_nms_cuda.nms_normal_gpu(boxes, keep, thresh)", "custom_cuda_extension", R, True,
      "num_out = iou3d_nms_cuda.nms_normal_npu(boxes, keep, thresh)", "CUDA kernel entry point"),
    C("return order[keep[:num_out].cuda(non_blocking=True)].contiguous(), None", "tensor_to_device", R, True,
      "return order[keep[:num_out].to(order.device, non_blocking=True)].contiguous(), None",
      ".cuda() needs a CUDA build"),
])

E("lyft3d_setup", "setup.py", "explicit_replacement",
  "OpenPCDet-style setup.py of a Lyft 3D solution (CUDAExtension per op, nvcc flags, spconv/cumm cu113 pins)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension\nfrom torch_npu.utils.cpp_extension import NpuExtension",
      "no nvcc on the NPU host; torch_npu's NpuExtension links torch_npu / ACL"),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")', "env_var", X, False, None,
      "read only by CUDA builds: dead once the extensions are NPU ones"),
    C("return CUDAExtension(", "custom_cuda_extension", R, True, "return NpuExtension(",
      "CUDAExtension requires CUDA_HOME / nvcc"),
    C('"nvcc": ["-O3", "--use_fast_math"', "custom_cuda_extension", X, False, None,
      "nvcc flags are ignored without .cu sources (cleanup)"),
    C('"spconv-cu113",', "custom_cuda_extension", X, True, None, "CUDA 11.3 build of spconv, no Ascend build"),
    C('"cumm-cu113",', "custom_cuda_extension", X, True, None, "CUDA 11.3 build of cumm (spconv's kernel library)"),
    C('"src/iou3d_nms_kernel.cu",', "custom_cuda_extension", R, True, '"src/iou3d_nms_kernel_npu.cpp",',
      ".cu source cannot be compiled without nvcc: Ascend C kernel"),
    C('"src/roiaware_pool3d_kernel.cu",', "custom_cuda_extension", R, True,
      '"src/roiaware_pool3d_kernel_npu.cpp",', ".cu source"),
    C('"src/ball_query_gpu.cu",', "custom_cuda_extension", R, True, '"src/ball_query_npu.cpp",', ".cu source"),
    C('"src/group_points_gpu.cu",', "custom_cuda_extension", R, True, '"src/group_points_npu.cpp",', ".cu source"),
    C('"src/sampling_gpu.cu",', "custom_cuda_extension", R, True, '"src/sampling_npu.cpp",', ".cu source"),
])

E("ranzcr_ddp_train", "ranzcr/train_ddp.py", "explicit_replacement",
  "RANZCR CLiP stage-2 torchrun DDP student (timm 'fusedlamb', bf16 capability probe, pin_memory_device, "
  "CUDA events, torch.compile max-autotune, variable-length all_gather)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('p.add_argument("--opt", default="fusedlamb")', "fused_optimizer", R, True,
      'p.add_argument("--opt", default="lamb")',
      "timm's fused* optimizers are apex FusedLAMB/FusedAdam (CUDA kernels)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "HCCL"),
    C("total = torch.cuda.get_device_properties(local_rank).total_memory / 1024 ** 3", "torch_cuda_api", R, True,
      "total = torch.npu.get_device_properties(local_rank).total_memory / 1024 ** 3",
      "raises without CUDA; total_memory is among the properties the NPU form provides"),
    C('n = torch.tensor([t.shape[0]], device="cuda")', "device_type", R, True,
      'n = torch.tensor([t.shape[0]], device="npu")', "all_gather size buffer must live on the HCCL device"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "per-rank device"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16",
      "device_capability_check", R, True,
      "amp_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "CUDA capability probe; raises without CUDA"),
    C('pin_memory_device=f"cuda:{local_rank}"', "pin_memory", R, True,
      'num_workers=8, pin_memory=True, pin_memory_device=f"npu:{local_rank}",',
      "the pin thread pins for the named device: 'cuda' fails on an NPU host"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "max-autotune relies on Inductor's Triton templates; NPU graph-mode options differ (unconfirmed)"),
    C('scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)', "amp", R, True,
      'scaler = torch.amp.GradScaler("npu", enabled=amp_dtype == torch.float16)', SCALER_NOTE),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA event"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA event"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C('=with torch.autocast("cuda", dtype=amp_dtype):', "amp", R, True,
      'with torch.autocast("npu", dtype=amp_dtype):', AUTOCAST_NOTE),
    C('with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype):', "amp", R, True,
      'with torch.no_grad(), torch.autocast("npu", dtype=amp_dtype):', AUTOCAST_NOTE),
])

E("pawpularity_lightning", "pawpularity/train_pl.py", "explicit_replacement",
  "PetFinder Pawpularity PyTorch Lightning trainer (swin regression with BCE, DDPStrategy, hflip TTA)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("peak = torch.cuda.max_memory_reserved() / 2 ** 30", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_reserved() / 2 ** 30",
      "returns 0 when CUDA was never initialised: log line only"),
    C('model = PawpularityModel.load_from_checkpoint(path, cfg=cfg).to("cuda").eval()', "device_type", R, True,
      'model = PawpularityModel.load_from_checkpoint(path, cfg=cfg).to("npu").eval()', "hard-coded 'cuda'"),
    C('strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False)', "dist_backend", R, True,
      'strategy = DDPStrategy(process_group_backend="hccl", find_unused_parameters=False) if n_dev > 1 else "auto"',
      "explicit NCCL process-group backend"),
])

E("pawpularity_config", "configs/pawpularity_swin.yaml", "explicit_replacement",
  "Pawpularity Lightning/OmegaConf experiment config (accelerator gpu, 16-mixed)", [
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu   # NPU Accelerator registered with Lightning",
      "Lightning's 'gpu' accelerator is CUDA (or MPS) only and refuses to start without a CUDA device"),
    C("precision: 16-mixed", "amp", R, False, "precision: 16-mixed  # check the plugin autocasts on 'npu'",
      "unconfirmed: Lightning's mixed-precision plugin picks its autocast device from the accelerator"),
])

E("lmsys_qlora_train", "llm/train_qlora.py", "explicit_replacement",
  "LMSYS Chatbot Arena Gemma-2-9b QLoRA sequence-classifier fine-tune (bnb NF4, flash_attention_2, "
  "paged 8-bit AdamW, tf32, capability probe)", [
    C('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"', "env_var", R, False,
      'os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"',
      "allocator tuning; the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("compute_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", R, True,
      "compute_dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "get_device_capability raises without CUDA (and returns None on NPU unless TORCH_NPU_DEVICE_CAPABILITY "
      "is set)"),
    C("quantization_config=bnb_config,", "custom_cuda_extension", X, False, None,
      "unconfirmed: bitsandbytes NF4 on Ascend needs its multi-backend build; bf16 LoRA fits a 64 GB NPU"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="eager",',
      "flash-attn cannot be installed on NPU (sdpa / eager; Gemma-2 logit soft-capping prefers eager)"),
    C('optim="paged_adamw_8bit",', "fused_optimizer", R, False, 'optim="adamw_torch",',
      "unconfirmed: bitsandbytes 8-bit / paged optimizers are not listed for NPU"),
    C("tf32=True,", "device_capability_check", X, True, None,
      "TrainingArguments raises when tf32=True and TF32 (Ampere CUDA) is unavailable"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("lmsys_dual_gpu_infer", "llm/infer_dual_t4.py", "explicit_replacement",
  "LMSYS inference kernel: one 4-bit Gemma-2 copy per T4 run in two threads, swap-TTA", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("assert torch.cuda.device_count() == 2,", "torch_cuda_api", R, True,
      'assert torch.npu.device_count() >= 2, "expects two NPUs"', "0 without CUDA: the assert fails"),
    C('gemma_dir = "/kaggle/input/gemma-2/transformers/gemma-2-9b-it-4bit/1/gemma-2-9b-it-4bit"',
      "custom_cuda_extension", R, False,
      'gemma_dir = "/kaggle/input/gemma-2/transformers/gemma-2-9b-it/2"  # bf16 weights',
      "pre-quantised bitsandbytes 4-bit checkpoint; NF4 on Ascend needs the multi-backend build (unconfirmed)"),
    C('device_0 = torch.device("cuda:0")', "device_type", R, True, 'device_0 = torch.device("npu:0")',
      "device_map / inputs target"),
    C('device_1 = torch.device("cuda:1")', "device_type", R, True, 'device_1 = torch.device("npu:1")',
      "device_map / inputs target"),
    C("@torch.cuda.amp.autocast()", "amp", R, True, "@torch.npu.amp.autocast()", AUTOCAST_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("aimo_vllm_infer", "llm/infer_vllm.py", "explicit_replacement",
  "AI Mathematical Olympiad vLLM inference kernel (AWQ model, TP over both T4s, XFORMERS backend, "
  "tool-integrated self-consistency)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"', "the NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C('os.environ["VLLM_ATTENTION_BACKEND"] = "XFORMERS"', "attention_kernel", X, False, None,
      "xformers has no NPU backend; whether vllm-ascend reads this variable is unconfirmed"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('quantization="awq",', "custom_cuda_extension", R, False, "quantization=None,",
      "AWQ GEMM kernels are CUDA; vllm-ascend's quantisation formats differ (unconfirmed)"),
    C("tensor_parallel_size=torch.cuda.device_count(),", "torch_cuda_api", R, True,
      "tensor_parallel_size=torch.npu.device_count(),", "0 without CUDA: invalid tensor-parallel size"),
    C('print(torch.cuda.get_device_name(0), torch.cuda.device_count(), "GPUs")', "torch_cuda_api", R, True,
      'print(torch.npu.get_device_name(0), torch.npu.device_count(), "NPUs")', "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("seg_losses", "src/losses.py", "explicit_replacement",
  "shared segmentation/classification losses (Lovasz hinge in an fp32 custom_fwd Function, ComboLoss, "
  "focal with torch.cuda.FloatTensor one-hots)", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, True,
      "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "the CUDA custom_fwd only casts when CUDA autocast is on: under NPU autocast the sort-based Lovasz "
      "silently runs in fp16"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch.npu.amp.custom_bwd",
      "paired with custom_fwd; the backward only rescales a saved fp32 gradient"),
    C("self.alpha = torch.cuda.FloatTensor(alpha)", "torch_cuda_api", R, True,
      "self.register_buffer('alpha', torch.tensor(alpha, dtype=torch.float32))", "legacy CUDA tensor type"),
    C("one_hot = torch.cuda.FloatTensor(n, self.n_classes).zero_()", "torch_cuda_api", R, True,
      "one_hot = logits.new_zeros((n, self.n_classes), dtype=torch.float32)", "legacy CUDA tensor type"),
    C("return torch.from_numpy(w).type(torch.cuda.FloatTensor)", "torch_cuda_api", R, True,
      "return torch.from_numpy(w).float().npu()", "legacy CUDA tensor type"),
])

E("cuda_prefetcher", "src/data/prefetcher.py", "explicit_replacement",
  "apex ImageNet-example style side-stream data prefetcher (fast_collate uint8 batches, normalise on device)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream()",
      "CUDA stream (torch_npu.contrib.module.Prefetcher is the packaged alternative)"),
    C("self.mean = torch.tensor(mean).cuda().view(1, 3, 1, 1)", "tensor_to_device", R, True,
      "self.mean = torch.tensor(mean).npu().view(1, 3, 1, 1)", ".cuda() needs a CUDA build"),
    C("self.std = torch.tensor(std).cuda().view(1, 3, 1, 1)", "tensor_to_device", R, True,
      "self.std = torch.tensor(std).npu().view(1, 3, 1, 1)", ".cuda() needs a CUDA build"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("self.next_input = self.next_input.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_input = self.next_input.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
    C("self.next_target = self.next_target.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "self.next_target = self.next_target.npu(non_blocking=True)", ".cuda() needs a CUDA build"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(self.stream)", "CUDA stream API"),
    C("input.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "input.record_stream(torch.npu.current_stream())", "CUDA stream API"),
    C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "target.record_stream(torch.npu.current_stream())", "CUDA stream API"),
])

E("common_utils", "src/utils/common.py", "device_branch_or_abstraction",
  "solution-wide helpers (seed_everything with CUBLAS_WORKSPACE_CONFIG, get_device, timer, nvidia-smi "
  "memory map, env logging)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "silently ignored without CUDA: NPU generators stay unseeded (reproducibility only)"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", X, False, None,
      "cuBLAS-only setting, no effect on NPU"),
    C("=if torch.cuda.is_available():", "device_type", B, True,
      'if hasattr(torch, "npu") and torch.npu.is_available():\n'
      '        return torch.device("npu" if index is None else f"npu:{index}")',
      "without an NPU branch every caller of get_device() silently falls back to the CPU"),
    C("torch.cuda.synchronize() if torch.cuda.is_available() else None", "torch_cuda_api", R, False,
      "torch.npu.synchronize() if torch.npu.is_available() else None",
      "timings silently include only the launch, not NPU execution (cosmetic)"),
    C('["nvidia-smi", "--query-gpu=memory.used", "--format=csv,nounits,noheader"], encoding="utf-8"',
      "torch_cuda_api", R, False,
      "used = [torch.npu.memory_reserved(i) // 2 ** 20 for i in range(torch.npu.device_count())]",
      "nvidia-smi is absent on an NPU host (FileNotFoundError), but log_env only calls it when the CUDA "
      "device count is non-zero"),
    C('f"cuda {torch.version.cuda} | cudnn {torch.backends.cudnn.version()}")', "torch_cuda_api", R, False,
      'f"torch_npu {torch_npu.__version__}")', "prints None on an NPU host (cosmetic)"),
    C("names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]", "torch_cuda_api", R,
      False, "names = [torch.npu.get_device_name(i) for i in range(torch.npu.device_count())]",
      "device_count() is 0 on an NPU host, so the listing is silently empty (logging only)"),
])

E("tta_predictor", "src/tta.py", "explicit_replacement",
  "TTA predictor for classification/segmentation ensembles (flips, rot90, multi-scale, optional ttach)", [
    C('merge_mode: str = "mean", amp: bool = True, device: str = "cuda"):', "device_type", R, True,
      'merge_mode: str = "mean", amp: bool = True, device: str = "npu"):',
      "default device used by every caller that does not pass one"),
    C("with torch.cuda.amp.autocast(enabled=self.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=self.amp):", AUTOCAST_NOTE),
])

E("wheat_effdet_infer", "wheat/predict.py", "explicit_replacement",
  "Global Wheat Detection EfficientDet-D5 inference (effdet DetBenchPredict, flip/rot TTA, JIT-loaded "
  "soft-NMS CUDA extension with numpy fallback, torchvision batched_nms, WBF)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from torchvision.ops import batched_nms", "import_torch_npu", A, False, "import torchvision_npu",
      "torchvision_npu registers NPU kernels for torchvision.ops.nms; without it the op presumably takes "
      "torch_npu's CPU fallback (unconfirmed)"),
    C("_ext = load(", "custom_cuda_extension", R, False, "_ext = False  # no nvcc on NPU: numpy soft-NMS",
      "cpp_extension.load is unsupported on A2/A3 and the .cu source needs nvcc; the except clause already "
      "falls back to numpy, so this is performance only"),
    C("checkpoint = torch.load(checkpoint_path)", "tensor_to_device", R, True,
      'checkpoint = torch.load(checkpoint_path, map_location="cpu")', CKPT_NOTE),
    C("return net.cuda()", "tensor_to_device", R, True, "return net.npu()", ".cuda() needs a CUDA build"),
    C("images = torch.stack(images).cuda().float()", "tensor_to_device", R, True,
      "images = torch.stack(images).npu().float()", ".cuda() needs a CUDA build"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("solution_requirements", "requirements.txt", "explicit_replacement",
  "RSNA 2023 solution requirements.txt pinned to cu118 wheels (DALI, CuPy, faiss-gpu, xformers, triton, "
  "pynvml)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch build (x86) or plain PyPI torch (aarch64)"),
    C("--extra-index-url https://pypi.nvidia.com", "custom_cuda_extension", X, False, None,
      "only serves the NVIDIA packages removed below"),
    C("=# core", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "the NPU adapter itself must be installed, version-matched to torch"),
    C("torch==2.0.1+cu118", "device_type", R, True, "torch==2.1.0", "+cu118 local version is a CUDA build"),
    C("torchvision==0.15.2+cu118", "device_type", R, True, "torchvision==0.16.0", "CUDA build"),
    C("torchaudio==2.0.2+cu118", "device_type", R, True, "torchaudio==2.1.0", "CUDA build"),
    C("nvidia-dali-cuda110==1.29.0", "custom_cuda_extension", X, True, None, "NVIDIA DALI, CUDA only"),
    C("cupy-cuda11x==12.2.0", "custom_cuda_extension", X, True, None, "CuPy has no Ascend support"),
    C("faiss-gpu==1.7.2", "custom_cuda_extension", R, True, "faiss-cpu==1.7.4", "CUDA build of faiss"),
    C("xformers==0.0.21", "attention_kernel", X, True, None,
      "xformers has no NPU backend (and pins a CUDA torch)"),
    C("triton==2.0.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "only needed if Triton kernels are kept; triton-ascend is the NPU build (unconfirmed need)"),
    C("pynvml==11.5.0", "torch_cuda_api", X, False, None, "NVML bindings, useless on NPU (monitoring only)"),
])

E("rapids_environment", "environment.yml", "explicit_replacement",
  "conda environment.yml mixing RAPIDS 23.08 (rapidsai/nvidia channels, cudf/cuml/cupy) with pytorch-cuda "
  "and faiss-gpu", [
    C("=- rapidsai", "custom_cuda_extension", X, False, None, "channel only needed for the RAPIDS packages"),
    C("=- nvidia", "device_type", X, False, None, "channel only needed for pytorch-cuda / CUDA libraries"),
    C("=- cudf=23.08", "custom_cuda_extension", X, True, None, "RAPIDS cuDF needs an NVIDIA GPU"),
    C("=- cuml=23.08", "custom_cuda_extension", X, True, None, "RAPIDS cuML needs an NVIDIA GPU"),
    C("=- cupy>=12.0", "custom_cuda_extension", X, True, None, "CuPy has no Ascend support"),
    C("=- pytorch=2.0.1", "device_type", R, False, "- pytorch=2.1.0",
      "torch must match the torch-npu wheel; conda vs pip torch ABI for torch_npu unconfirmed"),
    C("=- pytorch-cuda=11.8", "device_type", X, True, None, "selects the CUDA build of pytorch"),
    C("=- faiss-gpu=1.7.4", "custom_cuda_extension", R, True, "- faiss-cpu=1.7.4", "CUDA build of faiss"),
    C("=- pip:", "import_torch_npu", A, True, "- torch-npu==2.1.0.post12",
      "the NPU adapter (pip only)"),
    C("- nvidia-ml-py==12.535.108", "torch_cuda_api", X, False, None, "NVML bindings (monitoring only)"),
])

E("solution_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "NGC-based training Dockerfile (nvcr.io pytorch base, apex --cuda_ext build, CuPy/DALI, CUDA env, "
  "offline-wheel stage for Kaggle)", [
    C("=FROM nvcr.io/nvidia/pytorch:23.05-py3", "device_type", R, True,
      "FROM <Ascend base image with CANN 8.x + torch 2.1.0 + torch_npu>", "NGC image = CUDA stack"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", R, False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "NVIDIA container runtime variable; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
    C('TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0 8.6+PTX" \\', "env_var", X, False, None,
      "read only by CUDA extension builds"),
    C("CUDA_HOME=/usr/local/cuda", "env_var", X, False, None,
      "no CUDA toolkit in the image (Ascend toolkit env comes from set_env.sh)"),
    C("RUN git clone https://github.com/NVIDIA/apex /opt/apex", "amp", R, True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && cd /opt/apex && bash scripts/build.sh",
      "NVIDIA apex -> Ascend apex patch (or drop apex for native AMP)"),
    C('--global-option="--cpp_ext" --global-option="--cuda_ext" ./', "amp", R, True,
      "pip install /opt/apex/apex/dist/apex-*.whl", "--cuda_ext needs nvcc"),
    C("pip install --no-cache-dir cupy-cuda12x==12.2.0 && \\", "custom_cuda_extension", X, True, None,
      "CuPy has no Ascend support"),
    C("pip install --no-cache-dir --extra-index-url https://pypi.nvidia.com nvidia-dali-cuda120==1.29.0",
      "custom_cuda_extension", X, True, None, "NVIDIA DALI, CUDA only"),
    C('RUN python -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"',
      "import_torch_npu", R, False,
      'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
      "sanity check prints None for CUDA/cuDNN on NPU (cosmetic)"),
    C("FROM nvcr.io/nvidia/pytorch:23.05-py3 AS wheels", "device_type", R, True,
      "FROM <Ascend base image with CANN 8.x + torch 2.1.0 + torch_npu> AS wheels",
      "the wheel stage builds the package's extensions against CUDA"),
])

E("train_folds_sh", "scripts/train_folds.sh", "explicit_replacement",
  "8-GPU node pipeline script (CUDA_VISIBLE_DEVICES per fold, NCCL_* exports, nvidia-smi queries under set -e, "
  "torchrun students with --opt fusedlamb)", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "the NPU runtime ignores CUDA_VISIBLE_DEVICES"),
    C("export NCCL_P2P_DISABLE=", "env_var", X, False, None, "NCCL tuning; no effect with HCCL"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL tuning; no effect with HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL logging; no effect with HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version", "torch_cuda_api", R, True,
      'npu-smi info | tee -a "${OUT}/logs/pipeline.log"',
      "nvidia-smi is absent on an NPU host and set -euo pipefail aborts the pipeline"),
    C("assert torch.cuda.is_available(), 'no CUDA device visible'", "torch_cuda_api", R, True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(); print(torch.npu.device_count(), 'devices')\"",
      "the assert fails on an NPU host"),
    C("CUDA_VISIBLE_DEVICES=${GPU} python train.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU} python train.py --fold \"${FOLD}\" --backbone \"${ARCH}\" --gpus 0 \\",
      "per-fold device pinning"),
    C("--opt fusedlamb --compile", "fused_optimizer", R, True,
      '--fold "${FOLD}" --arch "${ARCH}" --size "${SIZE}" --opt lamb --compile \\',
      "timm fused optimizers need apex CUDA kernels"),
    C("nvidia-smi --query-gpu=index,memory.used", "torch_cuda_api", R, True,
      'npu-smi info | tee -a "${OUT}/logs/pipeline.log"', "nvidia-smi absent; set -e aborts at the end"),
])

E("rsna_seg_config", "configs/rsna_seg_stage1.yaml", "explicit_replacement",
  "RSNA 2023 3D segmentation OmegaConf config (runtime.device, dist_backend, apex amp backend, fusedadam, "
  "channels_last_3d, compile mode)", [
    C("name: fusedadam", "fused_optimizer", R, True, "name: adamw          # or torch_npu.optim.NpuFusedAdamW",
      "apex FusedAdam needs CUDA kernels"),
    C("device: cuda:0", "device_type", R, True, "device: npu:0", "runtime device"),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", "HCCL"),
    C("channels_last_3d: true", "unsupported_op_workaround", R, False, "channels_last_3d: false",
      "channels_last is documented as unsupported by msFmkTransplt; 3-D variant unconfirmed"),
    C("mode: max-autotune", "compile_mode", R, False, "mode: default",
      "max-autotune relies on Inductor Triton templates (unconfirmed on NPU)"),
    C("backend: apex", "amp", R, True, "backend: native       # torch.npu.amp",
      "NVIDIA apex amp does not work on NPU tensors"),
])
