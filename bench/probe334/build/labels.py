# Labels for probe334 (handwritten text / math-expression recognition, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter edits.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------
# PyLaia (0.x, pre-Lightning)
# ---------------------------------------------------------------------------
E("pylaia_arguments", "laia/common/arguments.py", "explicit_replacement",
  "PyLaia laia/common/arguments.py (shared argparse defaults, --gpu 1-based)",
  [
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host, so the default --gpu 1 makes the parser error out"),
  ])

E("pylaia_ctc_loss", "laia/losses/ctc_loss.py", "explicit_replacement",
  "PyLaia laia/losses/ctc_loss.py (native / cuDNN / warp-ctc CTC selection)",
  [
      C("from warpctc_pytorch import _CTC as _WarpCTC", "custom_cuda_extension", "removal", False, None,
        "warp-ctc has no NPU kernels and cannot be built for NPU; the import is guarded and the "
        "`logits.is_cuda` checks already route NPU tensors to F.ctc_loss (aten _ctc_loss has an NPU kernel), "
        "so dropping it is cleanup only"),
  ])

E("pylaia_pooling_sequencer", "laia/nn/image_pooling_sequencer.py", "kernel_rewrite",
  "PyLaia laia/nn/image_pooling_sequencer.py (nnutils-pytorch adaptive pooling of padded batches)",
  [
      C("from nnutils_pytorch import adaptive_avgpool_2d, adaptive_maxpool_2d", "custom_cuda_extension", "replace", True,
        "from laia.nn._masked_pooling import adaptive_avgpool_2d, adaptive_maxpool_2d  # pure-torch reimplementation",
        "nnutils-pytorch ships only CPU and CUDA kernels; the default avgpool-16 sequencer would be called "
        "on NPU tensors on every forward pass"),
  ])

E("pylaia_crnn", "laia/models/htr/laia_crnn.py", "kernel_rewrite",
  "PyLaia laia/models/htr/laia_crnn.py (LaiaCRNN / ConvBlock with nnutils masking)",
  [
      C("from nnutils_pytorch import mask_image_from_size", "custom_cuda_extension", "replace", True,
        "from laia.nn._masked_pooling import mask_image_from_size  # torch.arange-based mask, runs on NPU",
        "nnutils mask_image_from_size dispatches to CPU/CUDA kernels only; used whenever the model is "
        "created with --use_masks true (as the IAM recipe does)"),
  ])

E("pylaia_train_ctc", "laia/scripts/htr/train_ctc.py", "explicit_replacement",
  "PyLaia laia/scripts/htr/train_ctc.py (pylaia-htr-train-ctc entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script: register the NPU backend / torch.npu before any device call"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "on an NPU host this call is a lazy no-op; torch.manual_seed above should already seed custom "
        "devices (unconfirmed)"),
      C("if gpu > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if gpu > 0 and torch.npu.is_available():",
        "False on an NPU host: training silently falls back to the CPU"),
      C('return torch.device("cuda:{}".format(gpu - 1))', "device_type", "replace", True,
        'return torch.device("npu:{}".format(gpu - 1))', "cuda device string"),
      C('if device.type == "cuda":', "device_type", "replace", False,
        'if device.type == "npu":', "logging branch only; unchanged it just logs 'Using the CPU'"),
      C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", False,
        "props = torch.npu.get_device_properties(device)", "device info for the log line only"),
      C("props.major, props.minor,", "device_capability_check", "replace", False,
        "props.cube_core_num, props.vector_core_num,",
        "NPU device properties carry no major/minor (only name, total_memory, L2_cache_size, cube/vector core "
        "num); the log format would need changing too"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device)",
        "use_cuda is True for the default --gpu 1; torch.cuda.set_device raises without CUDA"),
      C('trainer.add_hook("on_start_iteration", ProgressBarGPUStats())', "torch_cuda_api", "removal", False, None,
        "GPU stats hook shells out to nvidia-smi, absent on Ascend hosts (use npu-smi); behaviour of the "
        "hook without nvidia-smi unconfirmed"),
      C("torch.cuda.max_memory_allocated(device) / 1024 ** 3,", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated(device) / 1024 ** 3,", "OOM diagnostics in an except path only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "silent no-op on an NPU host; only frees cached memory"),
  ])

E("pylaia_decode_ctc", "laia/scripts/htr/decode_ctc.py", "explicit_replacement",
  "PyLaia laia/scripts/htr/decode_ctc.py (pylaia-htr-decode-ctc)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C('device = torch.device("cuda:{}".format(args_.gpu - 1) if args_.gpu else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:{}".format(args_.gpu - 1) if args_.gpu else "cpu")',
        "default --gpu 1 builds a cuda device; model.to() then fails"),
      C("with torch.cuda.amp.autocast(enabled=args_.fp16):", "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args_.fp16):',
        "with --fp16 the cuda autocast is disabled with a warning on an NPU host, silently decoding in fp32"),
  ])

E("pylaia_iam_train_sh", "egs/iam-htr/src/train.sh", "explicit_replacement",
  "PyLaia egs/iam-htr/src/train.sh (IAM recipe training launcher)",
  [
      C("=set -e;", "import_torch_npu", "npu_only_addition", True, SET_ENV,
        "CANN environment (library paths) must be loaded before pylaia imports torch_npu"),
      C('export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-$((gpu - 1))}";', "env_var", "replace", True,
        'export ASCEND_RT_VISIBLE_DEVICES="${ASCEND_RT_VISIBLE_DEVICES:-$((gpu - 1))}";',
        "ignored by the NPU runtime: every job would silently land on the first NPU"),
      C('nvidia-smi -i "$CUDA_VISIBLE_DEVICES"', "torch_cuda_api", "replace", True,
        'npu-smi info -t usages -i "$ASCEND_RT_VISIBLE_DEVICES" >&2 ||',
        "nvidia-smi does not exist on Ascend hosts; the || branch then exits 1"),
  ])

E("pylaia_requirements", "requirements.txt", "explicit_replacement",
  "PyLaia requirements.txt (CUDA torch wheel + nnutils/imgdistort)",
  [
      C("--find-links https://download.pytorch.org/whl/torch_stable.html", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts use CPU torch wheels; harmless once the +cu102 pin is gone"),
      C("torch==1.6.0+cu102", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA local-version wheel: no aarch64 build and no torch_npu release for torch 1.6"),
      C("torchvision>=0.7.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu wheel pinned to the torch version"),
      C("nnutils-pytorch>=1.6.0", "custom_cuda_extension", "removal", False, None,
        "dropped once its pooling/masking is reimplemented in torch; whether its CPU-only build installs on "
        "aarch64 is unconfirmed"),
  ])

E("warpctc_setup", "pytorch_binding/setup.py", "kernel_rewrite",
  "SeanNaren/warp-ctc pytorch_binding/setup.py (warpctc_pytorch build)",
  [
      C('if torch.cuda.is_available() or "CUDA_HOME" in os.environ:', "custom_cuda_extension", "replace", False,
        "if False:  # warp-ctc has no NPU backend; on NPU use torch.nn.CTCLoss instead of this package",
        "on an NPU host this already falls back to a CPU-only build, which cannot take NPU tensors; "
        "the real port drops warp-ctc, so nothing here fails"),
  ])

E("pylaia_train_config", "egs/iam-htr/configs/train_config.yaml", "device_branch_or_abstraction",
  "PyLaia 1.x jsonargparse train_config.yaml (pytorch-lightning 1.x trainer section)",
  [
      C("gpu_stats: true", "torch_cuda_api", "replace", False, "gpu_stats: false",
        "GPU stats monitor reads nvidia-smi; exact failure mode on Ascend unconfirmed"),
      C("gpus: 1", "device_type", "replace", True, "devices: 1",
        "Lightning counts CUDA devices (0 on an NPU host) and refuses gpus: 1"),
      C("auto_select_gpus: true", "device_type", "removal", False, None,
        "CUDA-only free-GPU picker; meaningless once gpus is replaced"),
      C("accelerator: null", "device_type", "replace", True, "accelerator: npu",
        "needs an NPU accelerator registered with Lightning (none built in; plugin/custom accelerator)"),
      C("precision: 16", "amp", "replace", False, "precision: 16-mixed",
        "PL 1.x native AMP is wired to torch.cuda.amp; must go through an NPU-aware precision plugin "
        "(behaviour on NPU unconfirmed)"),
  ])

# ---------------------------------------------------------------------------
# HTR-Flor (PyTorch port)
# ---------------------------------------------------------------------------
E("htrflor_main", "src/main.py", "explicit_replacement",
  "arthurflor23/handwritten-text-recognition src/main.py (CLI), PyTorch port",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("if gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if gpu >= 0 and torch.npu.is_available():", "False on NPU host: silent CPU training"),
      C('device = torch.device("cuda", gpu)', "device_type", "replace", True,
        'device = torch.device("npu", gpu)', "cuda device"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device)", "torch.cuda.set_device cannot take an NPU device"),
      C('print(f"GPU: {torch.cuda.get_device_name(device)}")', "torch_cuda_api", "replace", True,
        'print(f"NPU: {torch.npu.get_device_name(device)}")', "raises without CUDA"),
      C('pin_memory=device.type == "cuda",', "pin_memory", "replace", False,
        'pin_memory=device.type == "npu",', "unchanged it just disables pinned host memory (perf only)"),
      C('if device.type == "cuda":', "device_type", "replace", False,
        'if device.type == "npu":', "peak-memory report only; unchanged it prints 0"),
      C("peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", False,
        "peak_mem = torch.npu.max_memory_allocated(device) / 1024 ** 3", "report only"),
  ])

E("htrflor_model", "src/network/model.py", "explicit_replacement",
  "arthurflor23/handwritten-text-recognition src/network/model.py (HTRModel), PyTorch port",
  [
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "cuda autocast / GradScaler disable themselves without CUDA (--amp silently ignored)"),
      C('self.device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'self.device = device or torch.device("npu" if torch.npu.is_available() else "cpu")',
        "default device silently CPU on NPU host"),
      C('self.use_amp = use_amp and self.device.type == "cuda"', "amp", "replace", True,
        'self.use_amp = use_amp and self.device.type == "npu"',
        "AMP silently switched off on an NPU device"),
      C('xb = xb.cuda(non_blocking=True) if self.device.type == "cuda" else xb', "tensor_to_device", "replace", True,
        "xb = xb.to(self.device, non_blocking=True)",
        "on npu the else branch leaves the batch on the CPU and the NPU model rejects it"),
  ])

E("htrflor_generator", "src/data/generator.py", "explicit_replacement",
  "arthurflor23/handwritten-text-recognition src/data/generator.py (DataGenerator/Tokenizer), PyTorch port",
  [
      C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", "replace", True,
        "self.stream = torch.npu.Stream(device=device)", "CUDA stream"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "CUDA stream context"),
      C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream sync"),
      C("t.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
        "t.record_stream(torch.npu.current_stream(self.device))", "CUDA stream"),
  ])

E("htrflor_dockerfile", "Dockerfile", "explicit_replacement",
  "HTR-Flor-style Dockerfile on nvidia/cuda base with CUDA torch wheels",
  [
      C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "CUDA base image has no CANN toolkit; torch_npu cannot load"),
      C("RUN pip install --no-cache-dir torch==1.12.1+cu113 torchvision==0.13.1+cu113", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 \\",
        "+cu113 wheels: no aarch64 build, no matching torch_npu"),
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 hosts should take CPU torch for torch_npu (knowledge 1.1)"),
      C("RUN pip install --no-cache-dir -r /tmp/requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "RUN pip install --no-cache-dir torch-npu==2.1.0.post10", "torch_npu wheel"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "the script picks the card with --gpu anyway; only restricts visibility"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
        "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES"),
  ])

# ---------------------------------------------------------------------------
# TrOCR fine-tuning on IAM (HuggingFace)
# ---------------------------------------------------------------------------
E("trocr_train", "train_trocr_iam.py", "device_branch_or_abstraction",
  "NielsRogge Transformers-Tutorials TrOCR IAM fine-tuning (Seq2SeqTrainer + native loop)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "native loop uses the NPU directly; transformers also needs torch_npu importable"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)", "lazy no-op without CUDA; transformers' set_seed covers NPU"),
      C("tf32=True,", "device_capability_check", "replace", False, "tf32=False,",
        "TF32 is an Ampere capability check; transformers is believed to raise '--tf32 requires Ampere' when "
        "CUDA is absent (unconfirmed here; knowledge 2.7 only shows is_torch_tf32_available is patched by "
        "transfer_to_npu); HF32 on NPU is set via torch.npu.matmul.allow_hf32"),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU fallback"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
        "cuda GradScaler disables itself without CUDA; fp16 then trains without loss scaling"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", True,
        'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=args.fp16):',
        "cuda autocast is disabled on an NPU host"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "memory logging only"),
      C("torch.cuda.max_memory_allocated() / 2 ** 20,", "torch_cuda_api", "replace", False,
        "torch.npu.max_memory_allocated() / 2 ** 20,", "memory logging only"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats()", "memory logging only (guarded by the branch above)"),
  ])

E("trocr_inference", "inference.py", "explicit_replacement",
  "TrOCR batch inference script with device_map loading and CUDA-event benchmark",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if torch.npu.is_available():", "silent CPU inference on an NPU host"),
      C('device_map={"": f"cuda:{device_index}"},', "device_type", "replace", True,
        'device_map={"": f"npu:{device_index}"},', "cuda device string in device_map"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()", "--benchmark path; raises without CUDA"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA event"),
      C("torch.cuda.synchronize()  # wait for the last generate()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for the last generate() before reading the events", "CUDA sync"),
  ])

E("trocr_accelerate_cfg", "configs/accelerate_multi_gpu.yaml", "device_branch_or_abstraction",
  "HF accelerate config (accelerate config default) for 4-GPU TrOCR training",
  [
      C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False,
        "distributed_type: MULTI_NPU",
        "accelerate has a MULTI_NPU mode; whether MULTI_GPU is auto-corrected on an NPU host is unconfirmed"),
  ])

E("trocr_run_sh", "run_finetune.sh", "explicit_replacement",
  "torchrun launcher for TrOCR fine-tuning with NCCL tweaks",
  [
      C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment"),
      C("export CUDA_VISIBLE_DEVICES=$GPUS", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$GPUS", "card subset silently ignored on NPU"),
      C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
        "no effect with HCCL; CANN log level is the nearest knob"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround; no effect with HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only; no effect with HCCL"),
      C("nvidia-smi --query-gpu=index,name,driver_version,memory.total", "torch_cuda_api", "replace", True,
        'npu-smi info | tee "$OUT/npus.txt"',
        "nvidia-smi missing -> with set -e/pipefail the script aborts before training"),
      C("CUDA_VISIBLE_DEVICES=${GPUS%%,*} python inference.py", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${GPUS%%,*} python inference.py \\",
        "evaluation would silently run on NPU 0 instead of the first selected card"),
  ])

E("trocr_requirements", "requirements.txt", "explicit_replacement",
  "TrOCR fine-tuning requirements.txt with cu118 index",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "x86 Ascend hosts take CPU torch (knowledge 1.1); aarch64 falls back to PyPI anyway"),
      C("torch>=2.1,<2.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu pin (also forces torch==2.1.0)"),
      C("bitsandbytes==0.41.3", "custom_cuda_extension", "removal", False, None,
        "CUDA kernels; not imported by the scripts; NPU support only partial (knowledge 6)"),
  ])

# ---------------------------------------------------------------------------
# CoMER / BTTR / PosFormer (PyTorch Lightning 1.4, CROHME)
# ---------------------------------------------------------------------------
E("comer_config", "config.yaml", "device_branch_or_abstraction",
  "Green-Wood/CoMER config.yaml (LightningCLI, 4-GPU DDP)",
  [
      C("gpus: 0, 1, 2, 3", "device_type", "replace", True, "devices: [0, 1, 2, 3]",
        "Lightning sees no CUDA devices on an NPU host and rejects gpus"),
      C("accelerator: ddp", "distributed_framework", "replace", True,
        "accelerator: npu  # + strategy: ddp with an hccl process group",
        "PL 1.x 'ddp' accelerator is the GPU/NCCL DDP; NPU needs an NPU accelerator and hccl"),
  ])

E("comer_env", "environment.yml", "explicit_replacement",
  "CoMER/BTTR conda environment (pytorch 1.8.1 + cudatoolkit 11.1)",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel; nothing needed from it"),
      C("- pytorch=1.8.1", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "conda pytorch 1.8.1 build is CUDA-linked, and no current torch_npu exists for 1.8"),
      C("- cudatoolkit=11.1", "torch_cuda_api", "removal", False, None,
        "CUDA runtime package; useless on Ascend (solvability on aarch64 unconfirmed)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
        "torch_npu wheel goes in the pip section"),
      C("- pytorch-lightning==1.4.9", "distributed_framework", "replace", False,
        "- pytorch-lightning==2.1.4",
        "PL 1.4 has no way to plug in an NPU accelerator and does not support torch 2.1; needed for the "
        "config changes, but Lightning NPU support is not covered by the knowledge base (unconfirmed)"),
  ])

E("comer_test", "scripts/test/test.py", "explicit_replacement",
  "Green-Wood/CoMER scripts/test/test.py (typer CLI, writes result.zip)",
  [
      C("from pytorch_lightning import Trainer, seed_everything", "import_torch_npu", "npu_only_addition", True,
        IMPORT_NPU, "entry script; no torch import of its own"),
      C("trainer = Trainer(logger=False, gpus=[gpu])", "device_type", "replace", True,
        'trainer = Trainer(logger=False, accelerator="npu", devices=[gpu])',
        "gpus= is validated against CUDA devices"),
  ])

E("comer_lit", "comer/lit_comer.py", "device_branch_or_abstraction",
  "Green-Wood/CoMER comer/lit_comer.py (LightningModule, bi-directional training, beam search)",
  [
      C('if self.device.type == "cuda":', "device_type", "replace", False,
        'if self.device.type == "npu":', "per-epoch cache flush is skipped on NPU unchanged; perf/memory only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()", "memory hygiene only"),
  ])

E("comer_datamodule", "comer/datamodule/datamodule.py", "device_branch_or_abstraction",
  "Green-Wood/CoMER comer/datamodule/datamodule.py (CROHME zip loading, bucketed batches)",
  [
      C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
        "pin_memory=torch.npu.is_available(),", "unchanged: no pinned memory on NPU (perf only)"),
  ])

E("posformer_generation", "Pos_Former/utils/generation_utils.py", "explicit_replacement",
  "SJTU-DeepVisionLab PosFormer utils/generation_utils.py (bi-directional beam search)",
  [
      C("beam_scores = torch.zeros(batch_size, dtype=torch.float).cuda()", "tensor_to_device", "replace", True,
        "beam_scores = torch.zeros(batch_size, dtype=torch.float, device=self.device)", ".cuda() in beam search"),
      C("layer_state = torch.zeros(batch_size, dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "layer_state = torch.zeros(batch_size, dtype=torch.long, device=self.device)", ".cuda() in beam search"),
      C("return masks.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "return masks.to(layer_ids.device, non_blocking=True)", ".cuda()"),
  ])

# ---------------------------------------------------------------------------
# CAN (Counting-Aware Network, CROHME)
# ---------------------------------------------------------------------------
E("can_train", "train.py", "explicit_replacement",
  "LBH1024/CAN train.py",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.manual_seed(params['seed'])", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(params['seed'])", "lazy no-op without CUDA"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpus",
        "--gpus silently ignored on NPU (must be set before the first NPU call)"),
      C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
        "device = torch.device('npu' if torch.npu.is_available() else 'cpu')", "silent CPU fallback"),
      C("visible GPUs: {torch.cuda.device_count()}", "torch_cuda_api", "replace", False,
        "print(f'device: {device}, visible NPUs: {torch.npu.device_count()}')", "log only"),
      C("if torch.cuda.device_count() > 1 and params.get('multi_gpu', False):", "torch_cuda_api", "replace", False,
        "if torch.npu.device_count() > 1 and params.get('multi_gpu', False):",
        "returns 0 on NPU so the multi-card branch is silently skipped (which also avoids DataParallel)"),
      C("print(f'使用 {torch.cuda.device_count()} 张GPU训练')", "torch_cuda_api", "replace", False,
        "print(f'使用 {torch.npu.device_count()} 张NPU训练')", "log only"),
      C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
        "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])",
        "torch.nn.DataParallel is unsupported on NPU (knowledge 2.8/3.7); needs DDP + a launcher"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():", "per-epoch memory log only"),
      C("f'max mem: {torch.cuda.max_memory_allocated() / 1024 ** 2:.0f}MB')", "torch_cuda_api", "replace", False,
        "f'max mem: {torch.npu.max_memory_allocated() / 1024 ** 2:.0f}MB')", "log only"),
  ])

E("can_inference", "inference.py", "explicit_replacement",
  "LBH1024/CAN inference.py (CROHME ExpRate evaluation)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.gpu)", "raises without CUDA"),
      C("device = torch.device('cuda:{}'.format(args.gpu))", "device_type", "replace", True,
        "device = torch.device('npu:{}'.format(args.gpu))", "cuda device string"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.to(device)", ".cuda()"),
      C("map_location=lambda storage, loc: storage.cuda(args.gpu)", "tensor_to_device", "replace", True,
        "state = torch.load(path, map_location='cpu')",
        "map_location moves every storage with .cuda(); load on CPU, load_state_dict copies onto the NPU"),
      C("img = img.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "img = img.to(device, non_blocking=True)", ".cuda()"),
      C("torch.cuda.synchronize()  # 计时前先同步", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # 计时前先同步, 否则统计的只是kernel launch时间", "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
  ])

E("can_infer_model", "models/infer_model.py", "device_branch_or_abstraction",
  "LBH1024/CAN models/infer_model.py (Inference wrapper + attention decoder)",
  [])

# ---------------------------------------------------------------------------
# DAN (Document Attention Network, Coquenet et al.)
# ---------------------------------------------------------------------------
E("dan_training_manager", "basic/generic_training_manager.py", "explicit_replacement",
  "FactoDeepLearning/DAN basic/generic_training_manager.py (DDP via mp.spawn, AMP, GPU info)",
  [
      C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import GradScaler, autocast",
        "use_amp=True by default; cuda GradScaler/autocast silently disable on an NPU host"),
      C('"backend": "nccl" if "ddp_backend"', "dist_backend", "replace", True,
        '"backend": "hccl" if "ddp_backend" not in self.params["training_params"].keys() else self.params["training_params"]["ddp_backend"],',
        "NCCL is unavailable on Ascend"),
      C('self.device = torch.device(self.ddp_config["rank"])', "device_type", "replace", True,
        'self.device = torch.device("npu", self.ddp_config["rank"])',
        "torch.device(<int>) means a CUDA device"),
      C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silent CPU fallback"),
      C('print("Rank {}: {} {}".format(i, torch.cuda.get_device_name(i), torch.cuda.get_device_properties(i)))',
        "torch_cuda_api", "replace", True,
        'print("Rank {}: {} {}".format(i, torch.npu.get_device_name(i), torch.npu.get_device_properties(i)))',
        "runs on every start (when nb_gpu > 0); raises without CUDA"),
      C('torch.cuda.get_device_name(), torch.cuda.get_device_properties(self.device)))', "torch_cuda_api", "replace", True,
        'print("Rank {}: {} {}".format(self.params["training_params"]["ddp_rank"], torch.npu.get_device_name(), torch.npu.get_device_properties(self.device)))',
        "raises without CUDA"),
      C('torch.cuda.set_device(self.ddp_config["rank"])', "torch_cuda_api", "replace", True,
        'torch.npu.set_device(self.ddp_config["rank"])', "raises without CUDA"),
      C("torch.cuda.manual_seed(self.manual_seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(self.manual_seed)", "lazy no-op without CUDA; torch.manual_seed precedes it"),
      C('map_location="cuda:{}".format(self.ddp_config["rank"])', "device_type", "replace", True,
        'checkpoint = torch.load(path, map_location="npu:{}".format(self.ddp_config["rank"]) if self.params["training_params"]["use_ddp"] else self.device)',
        "transfer-learning checkpoint (line-level pretraining) is mapped to a cuda device"),
      C('params["hardware"][str(i)] = "{} {}".format(torch.cuda.get_device_name(i), torch.cuda.get_device_properties(i))',
        "torch_cuda_api", "replace", True,
        'params["hardware"][str(i)] = "{} {}".format(torch.npu.get_device_name(i), torch.npu.get_device_properties(i))',
        "save_params runs at train start on the master; raises without CUDA"),
      C("self.max_mem_usage_by_epoch.append(torch.cuda.max_memory_allocated())", "torch_cuda_api", "replace", False,
        "self.max_mem_usage_by_epoch.append(torch.npu.max_memory_allocated())",
        "believed to return 0 when CUDA was never initialised (memory.txt would log zeros; unconfirmed)"),
      C("torch.cuda.reset_max_memory_allocated()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_max_memory_allocated()",
        "called every epoch; resolves the current CUDA device and raises without CUDA"),
  ])

E("dan_main", "OCR/document_OCR/dan/main_dan.py", "explicit_replacement",
  "FactoDeepLearning/DAN OCR/document_OCR/dan/main_dan.py (params dict, mp.spawn per GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "entry script (spawned workers re-import the module)"),
      C("torch.cuda.manual_seed(0)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed(0)", "lazy no-op without CUDA"),
      C('"nb_gpu": torch.cuda.device_count(),', "torch_cuda_api", "replace", True,
        '"nb_gpu": torch.npu.device_count(),',
        "0 on an NPU host: mp.spawn(nprocs=0) starts no worker and nothing trains"),
  ])

# ---------------------------------------------------------------------------
# HTR-VT (Vision Transformer HTR)
# ---------------------------------------------------------------------------
E("htrvt_train", "train.py", "explicit_replacement",
  "YutingLi0606/HTR-VT train.py (SAM optimizer, EMA, CTC)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, "entry script"),
      C("preds_size = torch.IntTensor([preds.size(1)] * batch_size).cuda()", "tensor_to_device", "replace", True,
        "preds_size = torch.IntTensor([preds.size(1)] * batch_size).to(preds.device)", ".cuda()"),
      C("loss = criterion(preds, text.cuda(), preds_size, length.cuda()).mean()", "tensor_to_device", "replace", True,
        "loss = criterion(preds, text.to(preds.device), preds_size, length.to(preds.device)).mean()", ".cuda()"),
      C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(args.seed)", "lazy no-op without CUDA"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "exits immediately on an NPU host"),
      C("torch.cuda.get_device_name(0), torch.version.cuda, torch.backends.cudnn.version()))", "torch_cuda_api", "replace", True,
        "torch.npu.get_device_name(0), torch_npu.__version__, None))", "get_device_name raises without CUDA"),
      C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda()"),
      C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
        "model = torch.compile(model)",
        "--compile only; max-autotune depends on CUDA Triton GEMM templates; Inductor on NPU runs without "
        "them (has_triton forced False by transfer_to_npu); behaviour of this mode on NPU unconfirmed"),
      C("image = batch[0].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "image = batch[0].npu(non_blocking=True)", ".cuda()"),
      C("f'mem : {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f}G')", "torch_cuda_api", "replace", False,
        "f'mem : {torch.npu.max_memory_allocated() / 1024 ** 3:.2f}G')", "log only"),
  ])

E("htrvt_model", "model/HTR_VT.py", "device_branch_or_abstraction",
  "YutingLi0606/HTR-VT model/HTR_VT.py (MAE-style ViT with span masking)",
  [
      C("with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):",
        "attention_kernel", "removal", False, None,
        "torch.backends.cuda.sdp_kernel is listed unsupported on NPU (knowledge 3.7 / mstt list); it only "
        "selects CUDA SDPA backends, the SDPA call inside is supported on NPU; runtime effect unconfirmed"),
  ])
