ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

DBR = "device_branch_or_abstraction"
EXP = "explicit_replacement"

# ---------------- PaddleOCR2Pytorch ----------------
E("p2t_utility", "tools/infer/pytorchocr_utility.py", DBR, "PaddleOCR2Pytorch tools/infer/pytorchocr_utility.py", [
    C("if use_gpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if use_gpu and not torch.npu.is_available():",
      "on an NPU host torch.cuda.is_available() is False, so use_gpu is silently turned off and inference runs on CPU"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "always returns -1 (no accelerator) on an NPU host"),
    C('cmd = "env | grep CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      'cmd = "env | grep ASCEND_RT_VISIBLE_DEVICES"', "device visibility on Ascend is ASCEND_RT_VISIBLE_DEVICES; the CUDA variable is ignored"),
])
E("p2t_det", "tools/infer/predict_det.py", DBR, "PaddleOCR2Pytorch tools/infer/predict_det.py (TextDetector)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device and torch.npu"),
    C("self.use_gpu = torch.cuda.is_available() and use_gpu", "torch_cuda_api", "replace", True,
      "self.use_gpu = torch.npu.is_available() and use_gpu", "otherwise silently falls back to CPU on an NPU host"),
    C("self.net.cuda()", "tensor_to_device", "replace", True, "self.net.npu()", "model placement"),
    C("inp = inp.cuda()", "tensor_to_device", "replace", True, "inp = inp.npu()", "input placement must match model"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize raises without a CUDA driver"),
])
E("p2t_rec", "tools/infer/predict_rec.py", DBR, "PaddleOCR2Pytorch tools/infer/predict_rec.py (TextRecognizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("self.device = torch.device('cuda' if args.use_gpu and torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if args.use_gpu and torch.npu.is_available() else 'cpu')",
      "device string and availability check; everything downstream uses self.device"),
])
E("p2t_base", "pytorchocr/base_ocr_v20.py", DBR, "PaddleOCR2Pytorch pytorchocr/base_ocr_v20.py", [])
E("p2t_db_post", "pytorchocr/postprocess/db_postprocess.py", DBR, "PaddleOCR2Pytorch pytorchocr/postprocess/db_postprocess.py", [])
E("p2t_requirements", "requirements.txt", EXP, "PaddleOCR2Pytorch requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "custom_cuda_extension", "removal", True, None,
      "CUDA wheel index; NPU uses the CPU/aarch64 torch wheel from PyPI"),
    C("torch==2.1.2+cu118", "import_torch_npu", "replace", True, "torch==2.1.0",
      "+cu118 local version does not exist for the NPU stack; torch must match the torch_npu release"),
    C("torchvision==0.16.2+cu118", "custom_cuda_extension", "replace", True, "torchvision==0.16.0",
      "CUDA build of torchvision; 0.16.0 pairs with torch 2.1 (torchvision_npu table)"),
    C("opencv-contrib-python-headless==4.8.1.78", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch-npu pin added to the requirements (placed after the torch block)"),
    C("paddlepaddle-gpu==2.5.2", "custom_cuda_extension", "replace", False, "paddlepaddle==2.5.2",
      "only the weight converters need paddle; CPU build suffices there (unconfirmed which paddle build exists for the host arch)"),
    C("onnxruntime-gpu==1.16.3", "custom_cuda_extension", "replace", False, "onnxruntime==1.16.3",
      "CUDA execution provider is unusable on NPU; CPU EP (or a CANN EP build) instead - unconfirmed in knowledge base"),
])

# ---------------- MMOCR 0.x ----------------
E("mmocr_train", "tools/train.py", DBR, "MMOCR 0.x tools/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("seed = init_random_seed(args.seed, device='cuda')", "device_type", "replace", True,
      "seed = init_random_seed(args.seed, device='npu')",
      "the seed tensor is created on this device before dist.broadcast; 'cuda' fails on an NPU host in distributed runs"),
])
E("mmocr_apis", "mmocr/apis/train.py", DBR, "MMOCR 0.x mmocr/apis/train.py (train_detector)", [
    C("model.cuda(),", "tensor_to_device", "replace", True, "model.npu(),", "model placement before DDP wrapping"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", "replace", True,
      "device_ids=[torch.npu.current_device()],", "torch.cuda.current_device() raises without CUDA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "only guards a version assert for CPU training; wrong but harmless on NPU"),
    C("model = MMDataParallel(model, device_ids=cfg.gpu_ids)", "distributed_framework", "replace", True,
      "model = NPUDataParallel(model.npu(), device_ids=cfg.gpu_ids)",
      "MMDataParallel silently runs on CPU when CUDA is absent; mmcv ships an NPU wrapper (mmcv.device.npu) - unconfirmed in knowledge base"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", "replace", True,
      "def init_random_seed(seed=None, device='npu'):", "default device for the broadcast seed tensor"),
])
E("mmocr_dist_sh", "tools/dist_train.sh", DBR, "MMOCR 0.x tools/dist_train.sh", [
    C('PYTHONPATH="$(dirname $0)/..":$PYTHONPATH', "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced before launching torch_npu"),
])
E("mmocr_slurm_sh", "tools/slurm_train.sh", DBR, "MMOCR 0.x tools/slurm_train.sh", [
    C("export PYTHONPATH=`pwd`:$PYTHONPATH", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob; HCCL has no equivalent, ignored on NPU"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
      "NIC selection for the collective library; NCCL_* is ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL logging knob; no-op on NPU"),
    C("--gres=gpu:${GPUS_PER_NODE}", "device_type", "replace", False, "--gres=npu:${GPUS_PER_NODE} \\",
      "GRES name depends on the cluster's slurm config for Ascend nodes - unconfirmed"),
])
E("mmocr_runtime_cfg", "configs/_base_/default_runtime.py", DBR, "MMOCR 0.x configs/_base_/default_runtime.py", [
    C("dist_params = dict(backend='nccl')", "dist_backend", "replace", True, "dist_params = dict(backend='hccl')",
      "init_dist(**cfg.dist_params) uses this backend; NCCL is unavailable on NPU"),
])
E("mmocr_pse_post", "mmocr/models/textdet/postprocess/pse_postprocessor.py", DBR,
  "MMOCR 0.x mmocr/models/textdet/postprocess/pse_postprocessor.py", [])
E("mmocr_docker", "docker/Dockerfile", EXP, "MMOCR 0.x docker/Dockerfile", [
    C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image; an Ascend CANN base image is needed"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"', "custom_cuda_extension", "removal", False, None, "nvcc arch list; meaningless without nvcc"),
    C('ENV TORCH_NVCC_FLAGS="-Xfatbin -compress-all"', "custom_cuda_extension", "removal", False, None, "nvcc flags"),
    C("3bf863cc.pub", "custom_cuda_extension", "removal", True, None, "NVIDIA apt key fetch; fails/meaningless on the Ascend image"),
    C("7fa2af80.pub", "custom_cuda_extension", "removal", True, None, "NVIDIA ML repo key"),
    C("RUN pip install mmcv-full -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.8.0/index.html", "custom_cuda_extension", "replace", True,
      "RUN MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2 --no-binary mmcv-full",
      "cu111 prebuilt mmcv-full has CUDA ops; must be built for NPU (build flag unconfirmed)"),
    C("=RUN conda clean --all", "import_torch_npu", "npu_only_addition", True, "RUN pip install torch==2.1.0 torch-npu==2.1.0.post10",
      "the torch-npu wheel has to be installed in the image"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", True, None, "forces nvcc builds of CUDA ops in pip install -e ."),
])

# ---------------- DocTR ----------------
E("doctr_train_det", "references/detection/train_pytorch.py", EXP, "DocTR references/detection/train_pytorch.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("        scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "        scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA, so --amp silently does nothing"),
    C("            images = images.cuda()", "tensor_to_device", "replace", True, "            images = images.npu()", "batch placement (LR finder)"),
    C("            with torch.cuda.amp.autocast():", "amp", "replace", True, "            with torch.npu.amp.autocast():",
      "autocast on 'cuda' is disabled on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler(init_scale=2.0**16)", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler(init_scale=2.0**16)", "as above"),
    C("if torch.cuda.is_available():  # host -> GPU copy", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "guard is False on NPU, batches would stay on CPU while the model is on NPU"),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "images = images.npu(non_blocking=True)", "batch placement"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True, "with torch.npu.amp.autocast(dtype=torch.float16):", "AMP"),
    C("if torch.cuda.is_available():  # eval batch", "torch_cuda_api", "replace", True, "if torch.npu.is_available():", "guard"),
    C('images = images.to("cuda", non_blocking=True)', "device_type", "replace", True, 'images = images.to("npu", non_blocking=True)', "device string"),
    C('with torch.autocast("cuda"):', "amp", "replace", True, 'with torch.autocast("npu"):', "device_type of autocast"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None,
      "cuDNN autotuner flag is accepted but has no effect on NPU (listed as supported no-op)"),
    C("pin_memory=torch.cuda.is_available(),  # val", "pin_memory", "replace", False, "pin_memory=torch.npu.is_available(),  # val",
      "evaluates False on NPU, so host memory is not pinned: perf only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "an explicit --device index is rejected on an NPU host"),
    C("if args.device >= torch.cuda.device_count():", "torch_cuda_api", "replace", True, "if args.device >= torch.npu.device_count():", "device count"),
    C("elif torch.cuda.is_available():", "torch_cuda_api", "replace", True, "elif torch.npu.is_available():", "silent default to accelerator"),
    C("if torch.cuda.is_available() and isinstance(args.device, int):", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and isinstance(args.device, int):", "guard around model placement"),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)", "device selection"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("=pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False, "        pin_memory=torch.npu.is_available(),", "perf only"),
    C('"gpu_mem_gb": torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
      '"gpu_mem_gb": torch.npu.max_memory_allocated() / 1024**3 if torch.npu.is_available() else 0.0,',
      "guarded by cuda.is_available(), so it logs 0.0 on NPU rather than failing: logging only"),
])
E("doctr_train_rec_ddp", "references/recognition/train_pytorch_ddp.py", EXP, "DocTR references/recognition/train_pytorch_ddp.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script (also needed in spawned workers; module import covers it)"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True, "scaler = torch.npu.amp.GradScaler()", "AMP scaler disabled otherwise"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():", "AMP"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', "AMP device_type"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, "no-op on NPU"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False, "pin_memory=torch.npu.is_available(),", "perf only"),
    C('device = torch.device("cuda", args.devices[rank])', "device_type", "replace", True,
      'device = torch.device("npu", args.devices[rank])', "per-rank device"),
    C("=pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "pinning targets the default accelerator; explicit device for NPU - unconfirmed whether needed with current torch_npu"),
    C('parser.add_argument("--backend", default="nccl"', "dist_backend", "replace", True,
      'parser.add_argument("--backend", default="hccl", type=str, help="backend to use for torch DDP")', "default process-group backend"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "the launcher refuses to start on an NPU host"),
    C("args.devices = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "args.devices = list(range(torch.npu.device_count()))", "device enumeration"),
])
E("doctr_db_model", "doctr/models/detection/differentiable_binarization/pytorch.py", DBR,
  "DocTR doctr/models/detection/differentiable_binarization/pytorch.py", [
    C("from torchvision.ops.deform_conv import DeformConv2d", "unsupported_op_workaround", "npu_only_addition", False,
      "import torchvision_npu  # registers NPU deform_conv2d",
      "only used when deform_conv=True (off by default); torchvision_npu provides deform_conv2d"),
])
E("doctr_demo_backend", "demo/backend/pytorch.py", DBR, "DocTR demo/backend/pytorch.py (Streamlit demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "the demo module picks the device at import time"),
    C('forward_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'forward_device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU fallback otherwise"),
])

# ---------------- Surya / Marker ----------------
E("surya_settings", "surya/settings.py", DBR, "Surya surya/settings.py (pydantic Settings, TORCH_DEVICE auto-detect)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "settings is imported first by every entry point; torch.npu must exist for the detection below"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return "npu"',
      "auto-detection otherwise silently resolves to cpu on an NPU host"),
    C("        return torch.float16", "device_type", "replace", False,
      '        return torch.bfloat16 if self.TORCH_DEVICE_MODEL == "npu" else torch.float16',
      "fp16 works on NPU; bf16 is a numerics preference - unconfirmed"),
])
E("surya_rec_loader", "surya/recognition/loader.py", DBR, "Surya surya/recognition/loader.py (RecognitionModelLoader)", [
    C('model.decoder = torch.compile(model.decoder, mode="reduce-overhead", fullgraph=True)', "compile_mode", "replace", False,
      'model.decoder = torch.compile(model.decoder, backend="npugraphs", fullgraph=True)',
      "reduce-overhead means CUDA graphs; on NPU the graph backend is npugraphs. Only when COMPILE_RECOGNITION is set"),
])
E("surya_rec_predict", "surya/recognition/__init__.py", DBR, "Surya surya/recognition/__init__.py (RecognitionPredictor, static cache)", [
    C('"cuda": 256,', "device_type", "add_branch", False, '"npu": 256,',
      "without an npu key the batch size falls back to the generic default: perf only"),
    C('encoder_chunk_sizes = {"cpu": 4096', "device_type", "replace", False,
      'encoder_chunk_sizes = {"cpu": 4096, "mps": 4096, "cuda": 32768, "npu": 32768, "xla": 32768}', "perf only"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "s = torch.npu.Stream()", "graph warm-up stream"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True, "s.wait_stream(torch.npu.current_stream())", "stream API"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", "replace", True, "with torch.npu.stream(s):", "stream API"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", "replace", True, "torch.npu.current_stream().wait_stream(s)", "stream API"),
    C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", "replace", True, "self.graph = torch.npu.NPUGraph()",
      "CUDA graph capture -> NPUGraph (inference only on NPU, which is this use)"),
    C("with torch.cuda.graph(self.graph):", "torch_cuda_api", "replace", True, "with torch.npu.graph(self.graph):", "graph capture context"),
    C('if settings.RECOGNITION_STATIC_CACHE and settings.TORCH_DEVICE_MODEL == "cuda" and self.graph is None:', "device_type", "replace", False,
      'if settings.RECOGNITION_STATIC_CACHE and settings.TORCH_DEVICE_MODEL in ("cuda", "npu") and self.graph is None:',
      "without it the graph is never captured on NPU and eager decode is used: perf only"),
    C('=if settings.TORCH_DEVICE_MODEL == "cuda":', "device_type", "replace", False,
      '                if settings.TORCH_DEVICE_MODEL == "npu":', "sync skipped on NPU; .item/int() sync anyway: harmless"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", "goes with the guard above"),
    C('if settings.TORCH_DEVICE_MODEL == "cuda":  # free activations between batches', "device_type", "replace", False,
      'if settings.TORCH_DEVICE_MODEL == "npu":  # free activations between batches', "cache release skipped on NPU: memory only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "goes with the guard above"),
])
E("surya_util", "surya/common/util.py", DBR, "Surya surya/common/util.py", [])
E("surya_attention", "surya/common/surya/decoder/attention.py", "kernel_rewrite", "Surya decoder attention (flash-attn / SDPA paths)", [
    C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", "replace", False,
      "import torch_npu",
      "guarded by is_flash_attn_2_available(), which is False on NPU (flash-attn cannot be installed); import torch_npu for npu_fusion_attention"),
    C("out = flash_attn_func(", "attention_kernel", "replace", False,
      'out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", keep_prob=1.0, scale=self.scaling)[0]',
      "flash path only reachable with flash-attn; NPU equivalent is npu_fusion_attention (optional, SDPA also works)"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):", "attention_kernel", "removal", True, None,
      "torch.backends.cuda.sdp_kernel is marked unsupported on Atlas A2/A3; SDPA itself dispatches to the NPU FA kernel"),
])
E("marker_convert", "marker/scripts/convert.py", DBR, "Marker marker/scripts/convert.py (multi-process batch convert)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C('if settings.TORCH_DEVICE_MODEL == "cuda":', "device_type", "replace", False, 'if settings.TORCH_DEVICE_MODEL == "npu":',
      "only logs VRAM; skipped on NPU"),
    C("total_vram = torch.cuda.get_device_properties(0).total_memory", "torch_cuda_api", "replace", False,
      "total_vram = torch.npu.get_device_properties(0).total_memory / 1024**3", "goes with the guard above"),
    C("torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", False,
      'logger.info(f"Detected {total_vram:.1f} GB of HBM on {torch.npu.get_device_name(0)}")', "logging only"),
])
E("marker_chunk_sh", "chunk_convert.sh", DBR, "Marker chunk_convert.sh (one process per GPU)", [
    C("trap 'pkill -P $$' SIGINT", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi is absent on NPU hosts; the script has no set -e but the line errors"),
    C('cmd="CUDA_VISIBLE_DEVICES=$DEVICE_NUM marker', "env_var", "replace", True,
      'cmd="ASCEND_RT_VISIBLE_DEVICES=$DEVICE_NUM marker $INPUT_FOLDER --output_dir $OUTPUT_FOLDER --num_chunks $NUM_DEVICES --chunk_idx $DEVICE_NUM --workers $NUM_WORKERS"',
      "otherwise every chunk process lands on NPU 0"),
])
E("marker_docker", "Dockerfile", EXP, "Marker/Surya style Dockerfile", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "custom_cuda_extension", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10", "CUDA base image"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None, "nvidia-container-runtime knob; Ascend devices are passed with --device /dev/davinciN"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "nvidia runtime knob"),
    C("--index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", "replace", True,
      "RUN pip3 install --no-cache-dir torch==2.3.1 torchvision==0.18.1 torch-npu==2.3.1", "CUDA wheel index; add the torch-npu wheel"),
    C("ENV TORCH_DEVICE=cuda", "env_var", "replace", True, "ENV TORCH_DEVICE=npu", "forces the cuda device string into surya/marker settings"),
    C("ENV COMPILE_ALL=true", "compile_mode", "replace", False, "ENV COMPILE_ALL=false",
      "compile path tuned for CUDA graphs; unconfirmed how well it runs under torch_npu inductor"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "ENV ASCEND_RT_VISIBLE_DEVICES=0", "device visibility"),
])

# ---------------- EasyOCR ----------------
E("easyocr_reader", "easyocr/easyocr.py", DBR, "EasyOCR easyocr/easyocr.py (Reader(gpu=True))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "library entry point; Reader selects the device"),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      "if hasattr(torch, 'npu') and torch.npu.is_available(): self.device = 'npu'",
      "gpu=True otherwise silently falls back to CPU on an NPU host"),
])
E("easyocr_detection", "easyocr/detection.py", DBR, "EasyOCR easyocr/detection.py (CRAFT loader)", [
    C("net = torch.nn.DataParallel(net).to(device)", "distributed_framework", "replace", True, "net = net.to(device)",
      "torch.nn.DataParallel is unsupported on NPU"),
])
E("easyocr_train", "trainer/train.py", EXP, "EasyOCR trainer/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry module"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True, "from torch.npu.amp import autocast, GradScaler",
      "the CUDA amp versions disable themselves on NPU"),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "module-level device"),
    C("collate_fn=AlignCollate_valid, pin_memory=True)", "pin_memory", "replace", False,
      'collate_fn=AlignCollate_valid, pin_memory=True, pin_memory_device="npu")', "perf only - unconfirmed whether needed"),
    C("=model = torch.nn.DataParallel(model).to(device)", "distributed_framework", "replace", True, "model = model.to(device)",
      "DataParallel unsupported on NPU; the later model.module.* accesses and 'module.' checkpoint keys need matching edits"),
    C("model = torch.nn.DataParallel(model).to(device)  # multi-GPU via DP", "distributed_framework", "replace", True,
      "model = model.to(device)", "DataParallel unsupported on NPU"),
])
