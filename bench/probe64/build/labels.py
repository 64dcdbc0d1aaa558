"""Labels for probe64 (hand-written synthetic upstream files; see ../README.md).

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
T, F = True, False
DBA = "device_branch_or_abstraction"
EXP = "explicit_replacement"
TTN = "transfer_to_npu"
KRW = "kernel_rewrite"

IMPORT_NOTE = "torch.npu.* / 'npu' devices / hccl need torch_npu loaded (explicit import after torch)"

# ----------------------------------------------------------------------------------------------- torchgeo
E("torchgeo_seg_trainer", "torchgeo/trainers/segmentation.py", DBA,
  "microsoft/torchgeo trainers/segmentation.py (SemanticSegmentationTask, fused AdamW, peak-mem logging)", [
    C('fused = self.hparams["fused_adamw"] and torch.cuda.is_available()', "fused_optimizer", R, F,
      'fused = self.hparams["fused_adamw"] and (torch.cuda.is_available() or torch.npu.is_available())',
      "False on NPU so the plain foreach AdamW runs: correct but slower; fused AdamW on NPU unconfirmed (or NpuFusedAdamW)"),
    C('if self.device.type == "cuda":', "device_type", B, F, 'if self.device.type in ("cuda", "npu"):',
      "else-path only skips a log line on NPU; cosmetic"),
    C("peak = torch.cuda.max_memory_allocated(self.device) / 2**30", "torch_cuda_api", R, F,
      "peak = torch.npu.max_memory_allocated(self.device) / 2**30", "only reached on the cuda branch"),
    C("torch.cuda.reset_peak_memory_stats(self.device)", "torch_cuda_api", R, F,
      "torch.npu.reset_peak_memory_stats(self.device)", "only reached on the cuda branch"),
])

E("torchgeo_train_cli", "train.py", EXP,
  "microsoft/torchgeo train.py (OmegaConf experiment runner, Lightning DDP)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C("num_devices = torch.cuda.device_count()", "torch_cuda_api", R, T, "num_devices = torch.npu.device_count()",
      "returns 0 on an NPU host: no DDP, single device"),
    C('process_group_backend="nccl", find_unused_parameters=False', "dist_backend", R, T,
      'process_group_backend="hccl", find_unused_parameters=False', "NCCL is not available on Ascend"),
    C('trainer_args.setdefault("accelerator", "gpu")', "device_type", R, T,
      'trainer_args.setdefault("accelerator", "npu")',
      "Lightning's gpu accelerator requires CUDA/MPS; an NPU accelerator (plugin or custom Accelerator) is needed (registration name unconfirmed)"),
])

E("torchgeo_datamodule", "torchgeo/datamodules/geo.py", DBA,
  "microsoft/torchgeo datamodules/geo.py (BaseDataModule / GeoDataModule / NonGeoDataModule)", [
    C("local_gpus = max(1, torch.cuda.device_count())", "torch_cuda_api", R, F,
      "local_gpus = max(1, torch.npu.device_count())", "only sizes num_workers; too many workers per rank on NPU is perf-only"),
    C('non_blocking = device.type == "cuda"', "device_type", R, F, 'non_blocking = device.type in ("cuda", "npu")',
      "synchronous H2D copies on NPU; perf-only"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", R, F,
      "pin_memory=torch.cuda.is_available() or torch.npu.is_available(),", "unpinned host memory on NPU; perf-only"),
])

E("torchgeo_landcoverai_cfg", "experiments/torchgeo/conf/landcoverai.yaml", EXP,
  "torchgeo LightningCLI benchmark config (landcoverai.yaml)", [
    C("accelerator: gpu", "device_type", R, T, "accelerator: npu",
      "gpu accelerator fails without CUDA; NPU accelerator name depends on the Lightning NPU plugin (unconfirmed)"),
])

# ----------------------------------------------------------------------------------------------- BIT / ChangeFormer
E("bit_networks", "models/networks.py", EXP,
  "justchenhao/BIT_CD models/networks.py (init_net with gpu_ids, DataParallel)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", R, T, "assert(torch.npu.is_available())",
      "AssertionError on an NPU host whenever gpu_ids is non-empty"),
    C("net.to(gpu_ids[0])", "tensor_to_device", R, T, 'net.to(f"npu:{gpu_ids[0]}")',
      "an int device index means cuda:N"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", R, T,
      "net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[gpu_ids[0]])",
      "torch.nn.DataParallel is unsupported on Ascend; a real port switches to DDP (launcher change) or single device"),
])

E("bit_trainer", "models/trainer.py", EXP, "justchenhao/BIT_CD models/trainer.py (CDTrainer)", [
    C('self.device = torch.device("cuda:%s" % args.gpu_ids[0] if torch.cuda.is_available()', "device_type", R, T,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0] if torch.npu.is_available()',
      "silently trains on CPU on an NPU host while init_net moved the net elsewhere"),
])

E("bit_evaluator", "models/evaluator.py", EXP, "justchenhao/BIT_CD models/evaluator.py (CDEvaluator)", [
    C('self.device = torch.device("cuda:%s" % args.gpu_ids[0]', "device_type", R, T,
      'self.device = torch.device("npu:%s" % args.gpu_ids[0]', "cuda:N device string"),
    C("if torch.cuda.is_available() and len(args.gpu_ids) > 0 else", "torch_cuda_api", R, T,
      'if torch.npu.is_available() and len(args.gpu_ids) > 0 else "cpu")',
      "False on NPU: evaluation silently falls back to CPU"),
])

E("bit_main_cd", "main_cd.py", EXP, "justchenhao/BIT_CD main_cd.py (gpu_ids parsing, set_device)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C("print(torch.cuda.is_available())", "torch_cuda_api", R, F, "print(torch.npu.is_available())",
      "diagnostic print only"),
    C("torch.cuda.set_device(args.gpu_ids[0])", "torch_cuda_api", R, T, "torch.npu.set_device(args.gpu_ids[0])",
      "needs a CUDA build"),
])

E("bit_train_script", "scripts/run_cd.sh", EXP, "BIT_CD / ChangeFormer scripts/run_cd.sh launch script", [
    C("export CUDA_VISIBLE_DEVICES=${gpus}", "env_var", R, T, "export ASCEND_RT_VISIBLE_DEVICES=${gpus}",
      "NPU runtime uses ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES is not documented as honoured"),
    C('echo "Using GPU(s): ${CUDA_VISIBLE_DEVICES}"', "env_var", R, F,
      'echo "Using NPU(s): ${ASCEND_RT_VISIBLE_DEVICES}"', "log line only"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", R, T, "npu-smi info",
      "nvidia-smi is absent on an Ascend host; with set -e the script aborts"),
    C("CUDA_VISIBLE_DEVICES=0,1 python main_cd.py", "env_var", R, T, "ASCEND_RT_VISIBLE_DEVICES=0,1 python main_cd.py",
      "device masking for the DataParallel run"),
])

E("changeformer_model", "models/ChangeFormer.py", DBA,
  "wgcban/ChangeFormer models/ChangeFormer.py (SegFormer-style encoder, difference decoder)", [
    C("attn = (q @ k.transpose(-2, -1)) * self.scale", "attention_kernel", R, F,
      "x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0, scale=self.scale)",
      "hand-written attention; SDPA dispatches to the NPU fused attention; perf-only"),
    C("self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()", "npu_fused_op", R, F,
      "self.drop_path = NpuDropPath(drop_path) if drop_path > 0. else nn.Identity()",
      "torch_npu.contrib.module.NpuDropPath; perf-only"),
])

E("changeformer_reqs", "requirements.txt", EXP, "ChangeFormer / ChangeMamba-style requirements.txt pinned to cu117", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "custom_cuda_extension", R, T,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==1.13.1+cu117", "custom_cuda_extension", R, T, "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA build of torch; torch_npu wheels pair with specific CPU torch versions (1.13 is EOL in the matrix)"),
    C("torchvision==0.14.1+cu117", "custom_cuda_extension", R, T, "torchvision==0.16.0", "CUDA build"),
    C("-f https://download.openmmlab.com/mmcv/dist/cu117/torch1.13/index.html", "custom_cuda_extension", R, T,
      "# mmcv must be built from source with MMCV_WITH_OPS=1 on Ascend", "CUDA-specific mmcv wheel index"),
    C("mmcv-full==1.7.1", "custom_cuda_extension", R, T, "mmcv==2.1.0  # built from source for NPU",
      "CUDA-built mmcv-full ops; NPU ops need an Ascend build (version unconfirmed)"),
    C("causal-conv1d>=1.1.0", "custom_cuda_extension", X, T, None, "nvcc-built CUDA package"),
    C("mamba-ssm==1.1.1", "custom_cuda_extension", X, T, None, "nvcc-built selective-scan CUDA package"),
    C("triton==2.1.0", "triton_kernel_tuning", R, F, "triton-ascend",
      "triton-ascend replaces triton on NPU; kernels need porting"),
    C("cupy-cuda11x==12.2.0", "custom_cuda_extension", X, T, None, "CuPy has no Ascend support"),
    C("=pynvml", "torch_cuda_api", X, F, None, "NVML only; unused on NPU (npu-smi / torch.npu.utilization instead)"),
])

# ----------------------------------------------------------------------------------------------- segment-geospatial
E("samgeo_core", "samgeo/samgeo.py", DBA, "opengeos/segment-geospatial samgeo/samgeo.py (SamGeo)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, T,
      'device = "npu" if torch.npu.is_available() else "cpu"', "SAM ViT-H silently runs on CPU on an NPU host"),
    C('if device == "cuda":', "device_type", R, F, 'if device == "npu":', "cache flush only"),
    C("torch.cuda.empty_cache()  # free memory", "torch_cuda_api", R, F, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, F, "if torch.npu.is_available():",
      "clear_cuda_cache silently does nothing on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, F, "torch.npu.empty_cache()", "no-op without CUDA"),
])

E("samgeo_text_sam", "samgeo/text_sam.py", DBA,
  "opengeos/segment-geospatial samgeo/text_sam.py (LangSAM = GroundingDINO + SAM)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, T,
      'self.device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently CPU on NPU"),
])

E("samgeo_env", "environment.yml", EXP, "segment-geospatial / geoai conda environment.yml", [
    C("=- nvidia", "device_type", X, T, None, "NVIDIA conda channel (CUDA runtime packages)"),
    C("pytorch=2.3.1", "import_torch_npu", R, T, "pytorch=2.3.1  # CPU build; torch-npu==2.3.1 via pip",
      "conda pytorch + pytorch-cuda pulls the CUDA build"),
    C("torchvision=0.18.1", "custom_cuda_extension", R, F, "torchvision=0.18.1  # CPU build",
      "pytorch-channel torchvision follows the CUDA pytorch variant; CPU build pairing unconfirmed"),
    C("pytorch-cuda=12.1", "custom_cuda_extension", X, T, None, "CUDA runtime metapackage"),
    C("cudatoolkit-dev=11.7", "custom_cuda_extension", X, T, None, "nvcc toolkit"),
    C("=- cupy", "custom_cuda_extension", X, T, None, "CuPy has no Ascend support"),
    C("groundingdino-py", "custom_cuda_extension", R, F, "groundingdino-py  # builds without _C; PyTorch deformable-attn fallback",
      "its CUDA op falls back to the PyTorch path when _C is missing; perf-only"),
    C("xformers==0.0.27", "attention_kernel", X, T, None, "no NPU backend for xformers"),
    C("nvidia-ml-py", "torch_cuda_api", X, F, None, "NVML; no NPU equivalent needed"),
])

# ----------------------------------------------------------------------------------------------- GeoTIFF tiling
E("geotiff_tiled_infer", "tools/predict_large_tiff.py", EXP,
  "large-scene sliding-window GeoTIFF inference script (rasterio windows + torchgeo checkpoint)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C("model = model.cuda(device)", "tensor_to_device", R, T, "model = model.npu(device)", "needs CUDA"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", R, T, 'device = torch.device(f"npu:{args.gpu}")',
      "cuda device string"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, T, "torch.npu.set_device(device)", "needs CUDA"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, F,
      'model = torch.compile(model, backend="npugraphs")',
      "Inductor max-autotune on NPU unconfirmed; only with --compile"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, T,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, T,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("x = torch.stack(tiles).pin_memory().cuda(non_blocking=True)", "tensor_to_device", R, T,
      "x = torch.stack(tiles).pin_memory().npu(non_blocking=True)", "needs CUDA"),
    C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):", "amp", R, T,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.float16, enabled=args.fp16):',
      "CUDA autocast does not cover NPU tensors: --fp16 silently runs fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()", "needs CUDA"),
    C('print(f"peak memory: {torch.cuda.max_memory_allocated()', "torch_cuda_api", R, T,
      'print(f"peak memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', "needs CUDA (raises in the report)"),
])

E("gpu_raster_preprocess", "rsutils/gpu_preprocess.py", KRW,
  "CuPy-based scene preprocessing (percentile stretch, SCL cloud mask, RawKernel NDVI, DLPack hand-off)", [
    C("import cupy as cp", "custom_cuda_extension", R, T, "import numpy as cp  # torch/numpy rewrite on NPU",
      "CuPy has no Ascend support; the module raises ImportError"),
    C("from cupyx.scipy import ndimage as cndi", "custom_cuda_extension", R, T, "from scipy import ndimage as cndi",
      "cupyx is CUDA-only"),
    C("_stretch_kernel = cp.ElementwiseKernel(", "custom_cuda_extension", R, T,
      "def _stretch_kernel(x, lo, hi): return torch.clamp((x.float() - lo) / (hi - lo + 1e-6), 0, 1)",
      "CUDA C elementwise kernel"),
    C("_ndi_kernel = cp.RawKernel(r'''", "custom_cuda_extension", R, T,
      "# normalized difference as torch ops on the NPU", "raw CUDA C kernel"),
    C("_ndi_kernel((blocks,), (threads,), (a, b, out, cp.int32(n)))", "custom_cuda_extension", R, T,
      "out = torch.where(a + b == 0, torch.zeros_like(a), (a - b) / (a + b))", "CUDA kernel launch"),
    C("return from_dlpack(arr.toDlpack())", "custom_cuda_extension", R, T, "return torch.from_numpy(arr).npu()",
      "DLPack from a CUDA CuPy array"),
    C("with cp.cuda.Device(device_id):", "torch_cuda_api", R, T, "with torch.npu.device(device_id):", "CuPy CUDA device"),
    C("cp.cuda.Stream.null.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()", "CuPy CUDA stream"),
    C("return cp.asarray(arr), profile", "tensor_to_device", R, T, "return torch.from_numpy(arr).npu(), profile",
      "host-to-GPU copy through CuPy"),
    C("return cp.from_dlpack(to_dlpack(t.contiguous()))", "custom_cuda_extension", R, T, "return t.contiguous()",
      "DLPack into a CUDA CuPy array"),
    C("mempool = cp.get_default_memory_pool()", "torch_cuda_api", X, T, None, "CuPy CUDA memory pool"),
    C("mempool.free_all_blocks()", "torch_cuda_api", R, T, "torch.npu.empty_cache()", "CuPy CUDA memory pool"),
    C("assert t.is_cuda", "device_type", R, T, 'assert t.device.type == "npu"', "is_cuda is False for NPU tensors"),
    C('print("memory allocated by torch:", torch.cuda.memory_allocated(a.gpu))', "torch_cuda_api", R, F,
      'print("memory allocated by torch:", torch.npu.memory_allocated(a.gpu))', "report line; returns 0 without CUDA (unconfirmed whether it raises)"),
])

# ----------------------------------------------------------------------------------------------- SatMAE
E("satmae_misc", "util/misc.py", EXP, "sustainlab-group/SatMAE util/misc.py (MAE-style distributed utils)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "device_type", R, T,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "cuda device string; fp64 all_reduce over HCCL unconfirmed"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, T,
      "args.gpu = args.rank % torch.npu.device_count()", "ZeroDivisionError under SLURM on NPU"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, T, "torch.npu.set_device(args.gpu)", "needs CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", R, T, "args.dist_backend = 'hccl'", "NCCL unavailable"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", R, T, 'self._scaler = torch.amp.GradScaler("npu")',
      "CUDA GradScaler does not scale NPU losses (disables itself without CUDA)"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", R, T, "x_reduce = torch.tensor(x).npu()", "needs CUDA"),
])

E("satmae_finetune", "main_finetune.py", TTN, "sustainlab-group/SatMAE main_finetune.py", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda'", "device_type", R, T,
      "parser.add_argument('--device', default='npu', help='device to use for training / testing')",
      "default device string"),
    C("optimizer = torch.optim.AdamW(param_groups, lr=args.lr)", "fused_optimizer", R, F,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_groups, lr=args.lr)", "perf-only"),
])

E("satmae_engine", "engine_finetune.py", EXP, "sustainlab-group/SatMAE engine_finetune.py", [
    C("=with torch.cuda.amp.autocast():", "amp", R, T, 'with torch.autocast("npu", dtype=torch.float16):',
      "CUDA autocast inactive for NPU tensors while the GradScaler path assumes fp16"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()", "needs CUDA"),
    C("with torch.cuda.amp.autocast():  # eval", "amp", R, T,
      'with torch.autocast("npu", dtype=torch.float16):  # eval under fp16 as well',
      "CUDA autocast inactive for NPU tensors"),
])

E("satmae_pretrain_launch", "scripts/pretrain_fmow_sentinel.sh", EXP,
  "SatMAE multi-node pre-training / fine-tuning launch script", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, T,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "NPU device masking"),
    C("export NCCL_DEBUG=WARN", "env_var", R, F, "export ASCEND_GLOBAL_LOG_LEVEL=3", "NCCL-only, ignored"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, F, None, "NCCL-only, ignored"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", R, T, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node: HCCL picks its host NIC from HCCL_SOCKET_IFNAME/HCCL_IF_IP; a wrong NIC fails link setup"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", X, F, None, "NVLink-only setting"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", R, F, "export ASCEND_LAUNCH_BLOCKING=0", "debug knob; default anyway"),
    C("--device cuda", "device_type", R, T, "--device npu", "passed to torch.device(args.device)"),
])

# ----------------------------------------------------------------------------------------------- Prithvi / terratorch
E("prithvi_mae", "prithvi/prithvi_mae.py", DBA, "NASA-IMPACT / IBM Prithvi-EO prithvi_mae.py (3D patch embed, time/location encoders)", [
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", X, T, None,
      "torch.backends.cuda.sdp_kernel is unsupported on Ascend; drop the context manager and call SDPA directly"),
    C("omega = torch.arange(embed_dim // 2, dtype=torch.float64, device=pos.device)", "unsupported_op_workaround", R, F,
      "omega = torch.arange(embed_dim // 2, dtype=torch.float32, device=pos.device) / (embed_dim / 2.0)",
      "fp64 on the NPU is slow / partially supported; unconfirmed"),
])

E("prithvi_hls_inference", "inference.py", EXP, "Prithvi-EO-2.0 inference.py (HLS masked reconstruction)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, T, "if torch.npu.is_available():",
      "selects CPU on an NPU host"),
    C('device = torch.device("cuda")', "device_type", R, T, 'device = torch.device("npu")', "cuda device string"),
    C("model = model.half() if torch.cuda.is_available() else model", "torch_cuda_api", R, T,
      "model = model.half() if torch.npu.is_available() else model", "fp16 path silently skipped"),
    C("if torch.cuda.is_available():  # fp16 inputs", "torch_cuda_api", R, T, "if torch.npu.is_available():  # fp16 inputs for the fp16 model",
      "input stays fp32 while the ported model is fp16 (dtype mismatch)"),
])

E("terratorch_cli", "terratorch/cli_tools.py", EXP, "IBM/terratorch cli_tools.py (LightningCLI, prediction writer)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu", IMPORT_NOTE),
    C('os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")', "env_var", R, F,
      'os.environ.setdefault("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True")',
      "CUDA allocator knob ignored on NPU; memory-only; NPU name unconfirmed in the knowledge"),
    C("if torch.cuda.is_available() and torch.cuda.is_bf16_supported():", "torch_cuda_api", R, T,
      "if torch.npu.is_available() and torch.npu.is_bf16_supported():",
      "silently trains in fp32 on NPU (no bf16-mixed)"),
    C('"accelerator": "cuda",', "device_type", R, T, '"accelerator": "npu",',
      "cuda accelerator fails without CUDA; NPU accelerator registration unconfirmed"),
])

E("prithvi_sen1floods11_cfg", "configs/prithvi_v2_300_sen1floods11.yaml", EXP,
  "terratorch Prithvi-EO-2.0 Sen1Floods11 fine-tuning config (LightningCLI yaml)", [
    C("accelerator: gpu", "device_type", R, T, "accelerator: npu", "gpu accelerator needs CUDA"),
    C("process_group_backend: nccl", "dist_backend", R, T, "process_group_backend: hccl", "NCCL unavailable"),
    C("backbone_use_flash_attn: true", "attention_kernel", R, F, "backbone_use_flash_attn: false",
      "flash-attn cannot be installed on NPU; whether the backbone falls back cleanly is unconfirmed"),
    C("backbone_compile_mode: max-autotune", "compile_mode", R, F, "backbone_compile_mode: default",
      "max-autotune relies on Triton autotuning; NPU behaviour unconfirmed"),
])

# ----------------------------------------------------------------------------------------------- VMamba / ChangeMamba
E("vmamba_selective_scan_setup", "kernels/selective_scan/setup.py", KRW,
  "MzeroMiko/VMamba (ChangeMamba) kernels/selective_scan/setup.py (nvcc CUDAExtension)", [
    C("=CUDAExtension,", "custom_cuda_extension", R, T, "CppExtension,",
      "CUDAExtension needs nvcc; NPU builds use torch_npu.utils.cpp_extension.NpuExtension + Ascend C"),
    C('check_if_cuda_home_none("selective_scan")', "custom_cuda_extension", X, T, None,
      "raises RuntimeError when nvcc is absent"),
    C("_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", X, T, None,
      "runs nvcc -V"),
    C('if bare_metal_version < Version("11.6"):', "custom_cuda_extension", X, T, None,
      "depends on the nvcc version probe removed above"),
    C('cc_flag.append("arch=compute_70,code=sm_70")', "custom_cuda_extension", X, F, None, "gencode flag; dead without nvcc"),
    C('cc_flag.append("arch=compute_80,code=sm_80")', "custom_cuda_extension", X, F, None, "gencode flag; dead without nvcc"),
    C('cc_flag.append("arch=compute_90,code=sm_90")', "custom_cuda_extension", X, F, None, "gencode flag; dead without nvcc"),
    C('"csrc/selective_scan/cusoflex/selective_scan_core_fwd.cu",', "custom_cuda_extension", R, T,
      '"csrc/selective_scan/ascend/selective_scan_fwd.cpp",', ".cu source"),
    C('"csrc/selective_scan/cusoflex/selective_scan_core_bwd.cu",', "custom_cuda_extension", R, T,
      '"csrc/selective_scan/ascend/selective_scan_bwd.cpp",', ".cu source"),
    C("=CUDAExtension(", "custom_cuda_extension", R, T, "NpuExtension(", "nvcc build"),
    C('"nvcc": append_nvcc_threads(', "custom_cuda_extension", X, T, None, "nvcc flags (gencode, half operators)"),
])

E("vmamba_csms6s", "classification/models/csms6s.py", DBA,
  "MzeroMiko/VMamba classification/models/csms6s.py (selective-scan backends)", [
    C("=@torch.cuda.amp.custom_fwd", "amp", R, F, '@torch.amp.custom_fwd(device_type="npu")',
      "only used when a CUDA backend imported"),
    C("=@torch.cuda.amp.custom_bwd", "amp", R, F, '@torch.amp.custom_bwd(device_type="npu")',
      "only used when a CUDA backend imported"),
    C('fn = selective_scan_torch if backend == "torch" or (not WITH_CUDA) else SelectiveScanCuda.apply',
      "custom_cuda_extension", B, F,
      'fn = selective_scan_npu if is_npu_available() else (selective_scan_torch if ... else SelectiveScanCuda.apply)',
      "falls back to the per-timestep Python loop on NPU: correct, very slow"),
    C('def params(B, K, C, N, L, device=torch.device("cuda"), itype=torch.float):', "device_type", R, T,
      'def params(B, K, C, N, L, device=torch.device("npu"), itype=torch.float):', "benchmark __main__"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, T, "torch.npu.synchronize()", "benchmark __main__"),
    C("torch.cuda.synchronize()  # wait", "torch_cuda_api", R, T, "torch.npu.synchronize()  # wait for the timed runs",
      "benchmark __main__"),
])

E("vmamba_csm_triton", "classification/models/csm_triton.py", KRW,
  "MzeroMiko/VMamba csm_triton.py (cross-scan / cross-merge Triton kernels)", [
    C("=import triton", "triton_kernel_tuning", R, F, "import triton  # triton-ascend",
      "needs triton (triton-ascend on NPU); unconfirmed whether plain triton is present on an NPU host"),
    C('_x = tl.load(p_x + _idx, mask=_mask_hw, eviction_policy="evict_first")', "triton_kernel_tuning", R, F,
      "_x = tl.load(p_x + _idx, mask=_mask_hw)", "cache/eviction hints on triton-ascend unconfirmed"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", R, F, "with torch.npu.device(x.device):",
      "only on the Triton path, which is not taken on NPU"),
    C("triton_cross_scan[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW, num_warps=8)", "triton_kernel_tuning", R, F,
      "triton_cross_scan[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW)",
      "num_warps is a GPU notion; tuning for triton-ascend unconfirmed"),
    C("num_warps=4, num_stages=3)", "triton_kernel_tuning", R, F,
      "triton_cross_merge[(NH * NW, NC, B)](x, y, BC, BH, BW, C, H, W, NH, NW)", "GPU tuning knobs"),
    C("if use_triton and x.is_cuda:", "device_type", B, F, 'if use_triton and x.device.type in ("cuda", "npu"):',
      "is_cuda False on NPU: pure-torch path (correct, slower)"),
    C("if use_triton and y.is_cuda:", "device_type", B, F, 'if use_triton and y.device.type in ("cuda", "npu"):',
      "is_cuda False on NPU: pure-torch path (correct, slower)"),
])

# ----------------------------------------------------------------------------------------------- Open-CD
E("opencd_runtime_cfg", "configs/_base_/default_runtime.py", EXP,
  "likyoo/open-cd configs/_base_/default_runtime.py (mmengine env_cfg, AMP, apex wrapper)", [
    C("dist_cfg=dict(backend='nccl'),", "dist_backend", R, T, "dist_cfg=dict(backend='hccl'),", "NCCL unavailable"),
    C("type='ApexOptimWrapper',", "amp", R, T, "type='AmpOptimWrapper',",
      "NVIDIA apex amp is not available (Ascend apex patch is a separate build)"),
    C("optimizer=dict(type='FusedAdam', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01))", "fused_optimizer", R, T,
      "optimizer=dict(type='NpuFusedAdamW', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01))",
      "apex FusedAdam is a CUDA kernel (must be edited by hand)"),
    C("optimizer=dict(type='AdamW', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01),", "fused_optimizer", R, F,
      "optimizer=dict(type='NpuFusedAdamW', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01),",
      "perf-only (registration of NpuFusedAdamW in the mmengine registry unconfirmed)"),
    C("crossattn_cfg = dict(type='DCNv2', deform_groups=4)", "custom_cuda_extension", R, T,
      "crossattn_cfg = dict(type='DCNv2', deform_groups=4)  # needs mmcv built for NPU",
      "mmcv's DCNv2 is a CUDA op in the CUDA mmcv build"),
])

E("opencd_train", "tools/train.py", TTN, "likyoo/open-cd tools/train.py (mmengine Runner)", [
    C("=import torch", "import_torch_npu", A, T, "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      IMPORT_NOTE),
    C("if args.launcher == 'none' or torch.cuda.device_count() < 2:", "torch_cuda_api", R, T,
      "if args.launcher == 'none' or torch.npu.device_count() < 2:",
      "device_count() is 0 on NPU: SyncBN silently replaced by BN in multi-NPU runs"),
])

# ----------------------------------------------------------------------------------------------- Docker
E("geoai_dockerfile", "Dockerfile", EXP, "GPU Dockerfile for a geospatial DL stack (torchgeo, samgeo, GroundingDINO, VMamba kernels)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", R, T,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image"),
    C("ENV CUDA_HOME=/usr/local/cuda", "env_var", X, T, None, "CUDA toolkit path"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;9.0+PTX"', "env_var", X, F, None, "nvcc arch list; ignored without CUDA"),
    C("ENV FORCE_CUDA=1", "env_var", X, T, None, "forces CUDA builds of GroundingDINO/mmcv, which then fail"),
    C("RUN pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cu121",
      "import_torch_npu", R, T,
      "RUN pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 torch-npu==2.3.1 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu needed"),
    C("&& cd /opt/GroundingDINO && pip install --no-cache-dir -e .", "custom_cuda_extension", R, F,
      "&& cd /opt/GroundingDINO && FORCE_CUDA=0 pip install --no-cache-dir -e .",
      "without CUDA the _C op is skipped and the PyTorch fallback is used"),
    C("RUN cd /opt/selective_scan && pip install --no-cache-dir .", "custom_cuda_extension", X, T, None,
      "nvcc build fails on an Ascend image"),
    C("RUN pip install --no-cache-dir xformers==0.0.27", "attention_kernel", X, T, None, "no NPU xformers"),
    C("RUN pip install --no-cache-dir mmcv==2.1.0 -f https://download.openmmlab.com/mmcv/dist/cu121", "custom_cuda_extension", R, T,
      "RUN MMCV_WITH_OPS=1 pip install --no-cache-dir mmcv==2.1.0 --no-binary mmcv \\",
      "CUDA mmcv wheels"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, F, None, "nvidia-container-runtime only"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, F, None, "nvidia-container-runtime only"),
])
