"""Labels for probe69 (hand-written synthetic upstream files; see ../README.md).

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
# the builder's name for a "device-agnostic" port (an NPU branch / abstraction next to the CUDA one)
AGNOSTIC = "device_branch_or_abstraction"

GUARD = ("reached only once the CUDA-availability guard in distribute() is ported (unchanged, an NPU host never "
         "takes the GPU path); ")

FAISS = ("faiss itself is not covered by /work/shared/knowledge; its GPU objects are CUDA-built (same footing as "
         "an nvcc extension, knowledge §6) and have no Ascend backend - Ascend's retrieval library is Mind SDK "
         "mxIndex (C++ AscendIndexFlat), so a port falls back to faiss-cpu or torch.cdist/topk on the NPU")

# ----------------------------------------------------------------------------------------------------------
# PatchCore (amazon-science/patchcore-inspection)
# ----------------------------------------------------------------------------------------------------------
E("patchcore_common", "src/patchcore/common.py", AGNOSTIC,
  "amazon-science/patchcore-inspection src/patchcore/common.py (FaissNN / ApproximateFaissNN on faiss-gpu)", [
    C("faiss.StandardGpuResources(), 0, index, self._gpu_cloner_options()", "custom_cuda_extension", R, True,
      "return index  # no GPU faiss on Ascend: keep the CPU index (faiss-cpu) or an NPU torch-kNN wrapper",
      "index_cpu_to_gpu with StandardGpuResources needs a CUDA device; reached whenever FaissNN(on_gpu=True), "
      "which the repo's own sample_training.sh requests with --faiss_on_gpu. " + FAISS),
    C("return faiss.GpuIndexFlatL2(", "custom_cuda_extension", R, True,
      "return faiss.IndexFlatL2(dimension)  # or NPU kNN: torch.cdist(q, ref).topk(k, largest=False)",
      "GPU flat L2 index (plus GpuIndexFlatConfig on the next line) for every fit()/run() with on_gpu=True. " + FAISS),
    C("return faiss.index_gpu_to_cpu(index)", "custom_cuda_extension", R, True,
      "return index",
      "save() with on_gpu=True: faiss-cpu has no index_gpu_to_cpu, so saving the memory bank raises once the "
      "GPU index creation above is ported"),
    C("return faiss.GpuClonerOptions()", "custom_cuda_extension", X, False, None,
      "only called from _index_to_gpu; dead once that branch is ported (attribute missing in faiss-cpu)"),
    C("cloner = faiss.GpuClonerOptions()", "custom_cuda_extension", R, False,
      "return None  # IVFPQ stays on the host",
      "ApproximateFaissNN fp16 lookup tables for the GPU clone; dead once _index_to_gpu is ported"),
  ])

E("patchcore_utils", "src/patchcore/utils.py", "explicit_replacement",
  "amazon-science/patchcore-inspection src/patchcore/utils.py (set_torch_device / fix_seeds)", [
    C('return torch.device("cuda:{}".format(gpu_ids[0]))', "device_type", R, True,
      'return torch.device("npu:{}".format(gpu_ids[0]))',
      "--gpu defaults to [0], so every run gets a CUDA device and the first .to(device) fails on an NPU host"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "without CUDA the seed is queued lazily and never reaches the NPU generator: runs stop being reproducible "
      "(sampler randomness), nothing fails"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "same as manual_seed: harmless no-op without CUDA"),
  ])

E("patchcore_run", "bin/run_patchcore.py", "explicit_replacement",
  "amazon-science/patchcore-inspection bin/run_patchcore.py (click pipeline, device context, faiss_on_gpu flag)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the ported device context / empty_cache use torch.npu.*; explicit import recommended even with autoload"),
    C('torch.cuda.device("cuda:{}".format(device.index))', "torch_cuda_api", R, False,
      'torch.npu.device("npu:{}".format(device.index))',
      "only built when device.type is cuda; with the ported set_torch_device the NPU run takes "
      "contextlib.suppress() and still works - the context only pins the current device"),
    C('if "cuda" in device.type.lower()', "device_type", R, False, 'if "npu" in device.type.lower()',
      "goes with the line above; the else branch is already correct on NPU"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA: the NPU caching allocator is not trimmed between MVTec categories"),
    C("torch.cuda.empty_cache()  # each ensemble member", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # each ensemble member starts from a clean cache", "as above"),
    C("torch.cuda.empty_cache()  # before inference", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # before inference over the test split", "as above"),
  ])

E("patchcore_requirements", "requirements.txt", "explicit_replacement",
  "patchcore-inspection-style pinned requirements.txt (cu113 torch, faiss-gpu, NVML monitors)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu  # x86 only; aarch64 Ascend hosts use PyPI torch",
      "cu113 wheels carry CUDA kernels; torch_npu pairs with the CPU build of torch (knowledge §1.1)"),
    C("torch==1.10.2+cu113", "import_torch_npu", R, True, "torch==2.1.0  # plus torch-npu==2.1.0.post12",
      "torch_npu's wheel version must equal the torch version, and torch 1.10 has no maintained torch_npu for "
      "current CANN (knowledge §1)"),
    C("torchvision==0.11.3+cu113", "import_torch_npu", R, True, "torchvision==0.16.0",
      "must follow the torch pin; the +cu113 local version is not on the CPU / PyPI index"),
    C("=faiss-gpu==1.7.2", "custom_cuda_extension", R, True, "faiss-cpu==1.7.2", FAISS),
    C("onnxruntime-gpu==1.10.0", "custom_cuda_extension", R, False, "onnxruntime==1.16.3",
      "CUDA execution provider; export demo only. Whether a CANN execution-provider build should be used "
      "instead is unconfirmed"),
    C("nvidia-ml-py3==7.352.0", "custom_cuda_extension", X, False, None,
      "NVML has no NPU counterpart (npu-smi / torch.npu.utilization, knowledge §6); notebooks only"),
    C("gpustat==0.6.0", "custom_cuda_extension", X, False, None, "NVML-based monitor; notebooks only"),
  ])

E("patchcore_sample_sh", "sample_training.sh", "explicit_replacement",
  "patchcore-inspection sample_training.sh (MVTec runs with --faiss_on_gpu, set -e)", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${NPU_ID:-0}",
      "not read by the NPU runtime (knowledge documents ASCEND_RT_VISIBLE_DEVICES), so the job is not pinned"),
    C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader",
      "device_capability_check", R, True, "npu-smi info",
      "no nvidia-smi on an Ascend host and the script runs under set -e: it stops before the first run"),
    C("-le layer3 --faiss_on_gpu \\", "custom_cuda_extension", R, True,
      "patch_core -b wideresnet50 -le layer2 -le layer3 \\",
      "selects FaissNN(on_gpu=True), i.e. the faiss-gpu path in common.py"),
    C("-le layer3 --faiss_on_gpu --pretrain", "custom_cuda_extension", R, True,
      "patch_core -b wideresnet50 -le layer2 -le layer3 --pretrain_embed_dimension 1024 \\", "as above"),
    C("--faiss_on_gpu --pretrain_embed_dimension 1024 --target_embed_dimension 384", "custom_cuda_extension", R, True,
      "--pretrain_embed_dimension 1024 --target_embed_dimension 384 \\", "as above (ensemble run)"),
    C("--anomaly_scorer_num_nn 1 --faiss_on_gpu", "custom_cuda_extension", R, True,
      "--target_embed_dimension 1024 --anomaly_scorer_num_nn 1 --patchsize 3 \\", "as above (IM320 run)"),
  ])

# ----------------------------------------------------------------------------------------------------------
# PaDiM (reference implementation) and FastFlow (unofficial implementation)
# ----------------------------------------------------------------------------------------------------------
E("padim_main", "main.py", "explicit_replacement",
  "xiahaifeng1995/PaDiM-Anomaly-Detection-Localization-master main.py (module-level use_cuda device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.is_available() / the npu device type need torch_npu loaded"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", R, True, "use_npu = torch.npu.is_available()",
      "False on an NPU host: the wide-ResNet feature extraction silently runs on the CPU"),
    C("device = torch.device('cuda' if use_cuda else 'cpu')", "device_type", R, True,
      "device = torch.device('npu' if use_npu else 'cpu')", "goes with the line above"),
    C("=model.eval()", "compile_mode", A, False, "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance setting msFmkTransplt always recommends (knowledge §3.5); the last test batch has a "
      "different shape"),
    C("torch.cuda.manual_seed_all(1024)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(1024)",
      "seeds the CUDA generators only; the feature subset idx is drawn on the CPU so results do not change"),
  ])

E("fastflow_main", "main.py", "transfer_to_npu",
  "gathierry/FastFlow main.py (unofficial FastFlow: .cuda() everywhere, checkpoint eval)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "the natural port of this small script: transfer_to_npu maps data.cuda()/model.cuda() to the NPU, so "
      "those lines stay as they are"),
    C("checkpoint = torch.load(args.checkpoint)", "device_type", R, True,
      'checkpoint = torch.load(args.checkpoint, map_location="cpu")',
      "train() saves CUDA tensors; without map_location they are restored to cuda:0 and PyTorch raises when CUDA "
      "is unavailable - transfer_to_npu only rewrites map_location when one is passed (knowledge §2.2)"),
    C("return torch.optim.Adam(", "fused_optimizer", R, False, "return torch_npu.optim.NpuFusedAdam(",
      "performance only (knowledge §3.5)"),
  ])

# ----------------------------------------------------------------------------------------------------------
# anomalib
# ----------------------------------------------------------------------------------------------------------
E("anomalib_torch_inferencer", "src/anomalib/deploy/inferencers/torch_inferencer.py", AGNOSTIC,
  "openvinotoolkit/anomalib deploy/inferencers/torch_inferencer.py (device validation and auto selection)", [
    C('if device not in ("auto", "cpu", "cuda", "gpu"):', "device_type", R, True,
      'if device not in ("auto", "cpu", "cuda", "gpu", "npu"):',
      "rejects device='npu' with ValueError"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", B, True,
      'device = "npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "the default 'auto' silently picks the CPU on an NPU host"),
    C('=device = "cuda"', "device_type", R, False, 'device = "npu" if torch.npu.is_available() else "cuda"',
      "only when the caller passes device='gpu'"),
  ])

E("anomalib_benchmark", "tools/benchmarking/benchmark.py", "explicit_replacement",
  "openvinotoolkit/anomalib tools/benchmarking/benchmark.py (per-GPU process pool sweep)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "timing sync only: without it the NPU test time may miss queued work"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "guarded by the line above, so never reached unported"),
    C("max_workers=torch.cuda.device_count(), mp_context", "torch_cuda_api", R, False,
      "max_workers=torch.npu.device_count(), mp_context",
      GUARD + "then 0 workers and ProcessPoolExecutor raises"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", R, False, "num_gpus = torch.npu.device_count()",
      GUARD + "then division by zero when splitting the run configs"),
    C('if not torch.cuda.is_available() and "gpu" in devices:', "torch_cuda_api", R, True,
      'if not torch.npu.is_available() and "gpu" in devices:',
      "on an NPU host the sweep is skipped with only a warning (not even the CPU runs happen): the one line "
      "of the GPU path the unchanged code takes"),
    C('model_config.trainer.accelerator = "gpu"', "device_type", R, False,
      'model_config.trainer.accelerator = "npu"  # an Ascend accelerator registered with Lightning',
      GUARD + "Lightning's 'gpu' accelerator is CUDA and refuses to start without a CUDA device (how Lightning "
      "is taught about the NPU is not covered in knowledge)"),
    C("torch.cuda.get_device_name(device - 1)", "torch_cuda_api", R, False, "torch.npu.get_device_name(device - 1)",
      GUARD + "then raises without a CUDA build"),
    C("=import pynvml", "custom_cuda_extension", R, False, "# (removed) NVML has no NPU counterpart",
      GUARD + "NVML needs the NVIDIA driver - use torch.npu.mem_get_info / npu-smi instead (knowledge §6)"),
    C("=pynvml.nvmlInit()", "custom_cuda_extension", X, False, None, "raises NVMLError without an NVIDIA driver"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)", "custom_cuda_extension", X, False, None,
      "NVML device handle"),
    C("used = pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20", "custom_cuda_extension", R, False,
      "free, total = torch.npu.mem_get_info(device_index); used = (total - free) / 2**20",
      "goes with the NVML calls above"),
    C("=pynvml.nvmlShutdown()", "custom_cuda_extension", X, False, None, "NVML teardown"),
  ])

E("anomalib_installation", "src/anomalib/cli/utils/installation.py", AGNOSTIC,
  "openvinotoolkit/anomalib cli/utils/installation.py (`anomalib install` picks the cuXXX torch wheel)", [
    C("=cuda_version = get_cuda_version()", "device_type", B, True,
      'if is_ascend_host(): return "npu"  # CANN found (ASCEND_HOME_PATH / npu-smi)',
      "an Ascend host has no CUDA toolkit, so the installer silently chooses the CPU wheel and never installs "
      "torch-npu; the CUDA_HOME / nvcc probing itself is harmless (OSError is caught)"),
    C('index_url = f"https://download.pytorch.org/whl/{hardware_suffix}"', "import_torch_npu", B, False,
      'index_url = "https://download.pytorch.org/whl/cpu" if hardware_suffix == "npu" else '
      'f"https://download.pytorch.org/whl/{hardware_suffix}"',
      "unchanged it yields whl/cpu, which is what the NPU branch wants on x86 (knowledge §1.1); it must change "
      "only once get_hardware_suffix can return 'npu'"),
    C("=torchvision_requirement,", "import_torch_npu", A, True, 'f"torch-npu=={version}",',
      "without it torch_npu is never installed; its version must equal torch's"),
    C('updated_version = version + f"+{hardware_suffix}"', "import_torch_npu", R, False,
      'updated_version = version if hardware_suffix == "npu" or version.startswith(("2.1", "2.2")) '
      'else version + f"+{hardware_suffix}"',
      "unconfirmed: a '+cpu' local version may not resolve on aarch64, where knowledge §1.1 says torch comes "
      "from plain PyPI"),
  ])

E("anomalib_mvg", "src/anomalib/models/components/stats/multi_variate_gaussian.py", "explicit_replacement",
  "openvinotoolkit/anomalib components/stats/multi_variate_gaussian.py (PaDiM Gaussian fit + inverse covariance)", [
    C("self.inv_covariance = torch.linalg.inv(covariance.permute(2, 0, 1))", "unsupported_op_workaround", R, False,
      "self.inv_covariance = torch.linalg.inv(covariance.permute(2, 0, 1).cpu()).to(device)",
      "linalg_inv_ex has no NPU kernel in the 2.1/2.7/2.9 op lists, so it already runs through the CPU fallback "
      "(knowledge §3.8); making the host round-trip explicit is a performance/clarity change"),
  ])

E("anomalib_fastflow_yaml", "src/anomalib/models/fastflow/config.yaml", "explicit_replacement",
  "openvinotoolkit/anomalib v0.x models/fastflow/config.yaml (Lightning trainer block)", [
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu  # Ascend accelerator registered with Lightning",
      "the 'gpu' accelerator means CUDA to Lightning; training cannot start on an NPU host"),
    C("precision: 16", "amp", R, False, "precision: 16  # check that the precision plugin autocasts on npu",
      "unconfirmed: whether Lightning's 16-bit plugin autocasts the NPU depends on the accelerator plugin used"),
  ])

# ----------------------------------------------------------------------------------------------------------
# pytorch-metric-learning
# ----------------------------------------------------------------------------------------------------------
E("pml_common_functions", "src/pytorch_metric_learning/utils/common_functions.py", AGNOSTIC,
  "KevinMusgrave/pytorch-metric-learning utils/common_functions.py (use_cuda_if_available, to_dtype)", [
    C('return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type", B, True,
      'return torch.device("npu") if torch.npu.is_available() else '
      '(torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))',
      "default data_device of every trainer, tester and InferenceModel: an NPU host silently computes on the CPU"),
    C("if not torch.is_autocast_enabled():", "amp", R, False, 'if not torch.is_autocast_enabled("npu"):',
      "unconfirmed: the argument-less form reports CUDA autocast only, so under NPU autocast to_dtype casts "
      "embeddings back to the reference dtype"),
    C("state_dict = torch.load(model_filename)", "device_type", R, True,
      "state_dict = torch.load(model_filename, map_location=device)",
      "fallback for DataParallel-era checkpoints: CUDA-saved tensors restore to cuda without map_location and "
      "PyTorch raises when CUDA is unavailable"),
  ])

E("pml_inference", "src/pytorch_metric_learning/utils/inference.py", AGNOSTIC,
  "KevinMusgrave/pytorch-metric-learning utils/inference.py (FaissKNN try_gpu, FaissKMeans, InferenceModel)", [
    C("FaissKNN(reset_before=False, reset_after=False)", "custom_cuda_extension", R, False,
      "CustomKNN(LpDistance(normalize_embeddings=True))",
      "performance only: NPU tensors are not is_cuda and faiss-cpu reports 0 GPUs, so try_gpu falls back to the "
      "CPU index cleanly (embeddings copied to host); CustomKNN keeps the search on the NPU (torch.topk)"),
  ])

E("pml_base_trainer", "src/pytorch_metric_learning/trainers/base_trainer.py", "explicit_replacement",
  "KevinMusgrave/pytorch-metric-learning trainers/base_trainer.py (use_amp with GradScaler / autocast)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "with use_amp=True the CUDA scaler disables itself without CUDA: fp16 runs without loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.use_amp):',
      "CUDA autocast does not cover NPU ops: use_amp silently trains in fp32"),
  ])

E("pml_ddp_example", "examples/distributed/train_mnist_ddp.py", "explicit_replacement",
  "pytorch-metric-learning distributed example (mp.spawn + DistributedLossWrapper/MinerWrapper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "torch.npu.* and the hccl backend need torch_npu loaded in the spawned workers"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL does not exist on Ascend"),
    C('os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"', "env_var", R, False,
      'os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"',
      "NCCL-only knob; torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (knowledge ascend-distributed §1, "
      "MindCluster default 1), so nothing breaks if it is left"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", R, True, "torch.npu.set_device(rank)",
      "raises without a CUDA build"),
    C('device = torch.device("cuda", rank)', "device_type", R, True, 'device = torch.device("npu", rank)',
      "model and batches are moved to this device"),
    C("optimizer = optim.Adam(ddp_model.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(ddp_model.parameters(), lr=args.lr)", "performance only"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", R, True, "world_size = torch.npu.device_count()",
      "0 on an NPU host: the assert on the next line stops the example"),
  ])

E("pml_setup", "setup.py", "explicit_replacement",
  "KevinMusgrave/pytorch-metric-learning setup.py (with-hooks extra pulls faiss-gpu)", [
    C('"faiss-gpu >= 1.6.3",', "custom_cuda_extension", R, True, '"faiss-cpu >= 1.6.3",', FAISS),
  ])

# ----------------------------------------------------------------------------------------------------------
# fast-reid
# ----------------------------------------------------------------------------------------------------------
E("fastreid_launch", "fastreid/engine/launch.py", "explicit_replacement",
  "JDAI-CV/fast-reid engine/launch.py (detectron2-style mp.spawn launcher, backend='NCCL')", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the spawned workers call torch.npu.* and initialise HCCL"),
    C('assert torch.cuda.is_available(), "cuda is not available', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "npu is not available. Please check your installation."',
      "fails in every worker on an NPU host"),
    C('backend="NCCL",', "dist_backend", R, True, 'backend="hccl",',
      "upper-case spelling of the NCCL backend; HCCL is the Ascend collective library"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", R, True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "device_count is 0 without CUDA"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without a CUDA build"),
  ])

E("fastreid_comm", "fastreid/utils/comm.py", "explicit_replacement",
  "JDAI-CV/fast-reid utils/comm.py (detectron2 comm: gloo side group chosen by backend string)", [
    C('if dist.get_backend() == "nccl":', "dist_backend", R, True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten even by transfer_to_npu (knowledge §2.4); under hccl the "
      "helper returns the HCCL WORLD group and all_gather/gather of Python objects trip the assert below"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", R, True, 'assert backend in ["gloo", "nccl", "hccl"]',
      "where the unported code actually fails (called with the HCCL group from the helper above)"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", R, True,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "serialised objects would be staged on a CUDA device for a non-gloo group"),
  ])

E("fastreid_train_loop", "fastreid/engine/train_loop.py", "explicit_replacement",
  "JDAI-CV/fast-reid engine/train_loop.py (SimpleTrainer metrics side stream, AMPTrainer)", [
    C('with torch.cuda.stream(torch.cuda.Stream() if device.type == "cuda" else None):', "torch_cuda_api", R, False,
      'with torch.npu.stream(torch.npu.Stream() if device.type == "npu" else None):',
      "on NPU the condition is False and torch.cuda.stream(None) is a no-op context, so the metric gather is "
      "just not overlapped with DDP (performance only)"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.npu.amp import GradScaler",
      "the CUDA scaler disables itself without CUDA: fp16 under NPU autocast would run without loss scaling"),
    C('assert torch.cuda.is_available(), "[AMPTrainer]', "torch_cuda_api", R, True,
      'assert torch.npu.is_available(), "[AMPTrainer] NPU is required for AMP training!"',
      "SOLVER.AMP.ENABLED runs (all SBS configs) stop here"),
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch.npu.amp import autocast",
      "CUDA autocast leaves NPU ops in fp32; after this import swap the `with autocast():` line needs no edit"),
  ])

E("fastreid_config_defaults", "fastreid/config/defaults.py", "explicit_replacement",
  "JDAI-CV/fast-reid config/defaults.py (yacs defaults, MODEL.DEVICE)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", R, True, '_C.MODEL.DEVICE = "npu"',
      "build_model moves the model and every batch to torch.device(cfg.MODEL.DEVICE)"),
  ])

E("fastreid_data_utils", "fastreid/data/data_utils.py", "explicit_replacement",
  "JDAI-CV/fast-reid data/data_utils.py (DataLoaderX: background thread + CUDA-stream prefetch)", [
    C("torch.cuda.set_device(self.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(self.local_rank)",
      "runs in the prefetch thread; raises without a CUDA build"),
    C("self.stream = torch.cuda.Stream(", "torch_cuda_api", R, True, "self.stream = torch.npu.Stream(",
      "torch.cuda.Stream needs CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self.stream):",
      "side-stream copy of the prefetched batch"),
    C("device=self.local_rank, non_blocking=True", "tensor_to_device", R, True,
      'device=f"npu:{self.local_rank}", non_blocking=True',
      "an int device means cuda:<int> to Tensor.to (transfer_to_npu has to rewrite such ints, knowledge §2.2), "
      "so every prefetched batch targets a CUDA device"),
    C("torch.cuda.current_stream().wait_stream(", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(",
      "the compute stream waits for the prefetch stream"),
  ])

E("fastreid_faiss_utils", "fastreid/utils/faiss_utils.py", AGNOSTIC,
  "JDAI-CV/fast-reid utils/faiss_utils.py (faiss on raw torch storage pointers, bruteForceKnn)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "search_index_pytorch is only used by re-ranking search_option=1; raises without CUDA when reached"),
    C("torch.cuda.synchronize()  # faiss wrote", "torch_cuda_api", R, False,
      "torch.npu.synchronize()  # faiss wrote D/I", "as above"),
    C("faiss.bruteForceKnn(", "custom_cuda_extension", R, True,
      "D, I = torch.cdist(xq, xb).topk(k, dim=1, largest=False)  # on the NPU",
      "GPU brute-force kNN over the tensors' raw device pointers; the default re-ranking path "
      "(search_option=0) ends here. torch.cdist is ✔ (fp32) in Ascend's 2.7.1 table. " + FAISS),
    C("res = [faiss.StandardGpuResources() for i in range(ngpus)]", "custom_cuda_extension", R, False,
      "return index_init_cpu(feat_dim)", "search_option=2 only"),
    C("cfg = faiss.GpuIndexFlatConfig()", "custom_cuda_extension", X, False, None, "search_option=2 only"),
    C("faiss.GpuIndexFlatL2(res[i], feat_dim, flat_config[i]) for i in range(ngpus)", "custom_cuda_extension", R,
      False, "faiss.IndexFlatL2(feat_dim) for i in range(ngpus)", "search_option=2 only"),
  ])

E("fastreid_compute_dist", "fastreid/utils/compute_dist.py", AGNOSTIC,
  "JDAI-CV/fast-reid utils/compute_dist.py (k-reciprocal jaccard distance with faiss GPU kNN)", [
    C("features = features.cuda()", "tensor_to_device", R, True, 'features = features.to("npu")',
      "re-ranking moves the query+gallery features to a CUDA device first"),
    C("=res = faiss.StandardGpuResources()", "custom_cuda_extension", R, True,
      "dist = torch.cdist(features, features)  # NPU kNN instead of GPU faiss",
      "default search_option=0 (build_dist passes 0: TEST.RERANK / metric='jaccard'). " + FAISS),
    C("res.setDefaultNullStreamAllDevices()", "custom_cuda_extension", X, True, None, "part of the same GPU path"),
    C("_, initial_rank = search_raw_array_pytorch(res, features, features, k1)", "custom_cuda_extension", R, True,
      "initial_rank = dist.topk(k1, dim=1, largest=False)[1]", "the call site of faiss.bruteForceKnn"),
    C("res = faiss.StandardGpuResources()  # one resource", "custom_cuda_extension", R, False,
      "index = faiss.IndexFlatL2(features.size(-1))", "search_option=1 only"),
    C("index = faiss.GpuIndexFlatL2(res, features.size(-1))", "custom_cuda_extension", R, False,
      "# (merged into the line above)", "search_option=1 only"),
    C("res.syncDefaultStreamCurrentDevice()", "custom_cuda_extension", X, False, None, "search_option=1 only"),
    C("index = index_init_gpu(ngpus, features.size(-1))", "custom_cuda_extension", R, False,
      "index = index_init_cpu(features.size(-1))", "search_option=2 only; ngpus is 0 with faiss-cpu"),
  ])

E("fastreid_collect_env", "fastreid/utils/collect_env.py", "explicit_replacement",
  "JDAI-CV/fast-reid utils/collect_env.py (detectron2 collect_env: GPU arch, CUDA_HOME, cuobjdump)", [
    C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", R, False,
      "has_gpu = torch.cuda.is_available() or torch.npu.is_available()",
      "diagnostics only: the environment report shows no accelerator on an NPU host"),
    C("for k in range(torch.cuda.device_count()):", "torch_cuda_api", R, False,
      "for k in range(torch.npu.device_count()):", "reached only once has_gpu sees NPUs"),
    C('cap = ".".join((str(x) for x in torch.cuda.get_device_capability(k)))', "device_capability_check", R, False,
      "cap = torch.npu.get_device_name(k)  # NPUs have no compute capability",
      "get_device_capability is None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set (knowledge §2.8), and "
      "the join then fails"),
    C('name = torch.cuda.get_device_name(k) + f" (arch={cap})"', "torch_cuda_api", R, False,
      "name = torch.npu.get_device_name(k)", "as above"),
  ])

E("fastreid_trt_inference", "tools/deploy/trt_inference.py", "explicit_replacement",
  "JDAI-CV/fast-reid tools/deploy/trt_inference.py (TensorRT engine run through pycuda)", [
    C("import pycuda.driver as cuda", "custom_cuda_extension", R, True,
      "from ais_bench.infer.interface import InferSession  # .om model; tooling unconfirmed",
      "pycuda needs the NVIDIA driver library to import; the Ascend path is ONNX -> ATC -> .om, which the "
      "knowledge does not cover"),
    C("import pycuda.autoinit", "custom_cuda_extension", X, True, None, "creates a CUDA context at import time"),
    C("import tensorrt as trt", "custom_cuda_extension", R, True, "# (removed) TensorRT is NVIDIA-only",
      "TensorRT engines only run on NVIDIA GPUs"),
    C("TRT_LOGGER = trt.Logger()", "custom_cuda_extension", X, True, None, "TensorRT runtime object"),
    C("=cuda.init()", "custom_cuda_extension", X, True, None, "initialises the CUDA driver API"),
    C("self._device_ctx = cuda.Device(gpu_idx).make_context()", "custom_cuda_extension", R, True,
      "self._session = InferSession(gpu_idx, trt_file)",
      "CUDA driver context for the engine"),
    C("=self._device_ctx.push()", "custom_cuda_extension", X, True, None, "pycuda context push"),
    C("=self._device_ctx.pop()", "custom_cuda_extension", X, True, None, "pycuda context pop"),
    C("self._device_ctx.detach()  # release device context", "custom_cuda_extension", X, True, None,
      "pycuda context release in __del__"),
    C("engine = runtime.deserialize_cuda_engine(f.read())", "custom_cuda_extension", R, True,
      "# engine loading folded into InferSession",
      "deserialises a TensorRT (CUDA) engine"),
    C("stream = cuda.Stream()", "custom_cuda_extension", X, True, None,
      "pycuda stream for the async copies; the whole buffer management goes"),
    C("host_mem = cuda.pagelocked_empty(size, dtype)", "custom_cuda_extension", X, True, None,
      "CUDA page-locked host buffers"),
    C("device_mem = cuda.mem_alloc(host_mem.nbytes)", "custom_cuda_extension", X, True, None,
      "CUDA device buffers bound to the engine"),
    C("[cuda.memcpy_htod_async(", "custom_cuda_extension", X, True, None, "host-to-device copy of the batch"),
    C("self._context.execute_async_v2(", "custom_cuda_extension", R, True,
      "outputs = self._session.infer([data])",
      "TensorRT execution on a CUDA stream"),
    C("[cuda.memcpy_dtoh_async(", "custom_cuda_extension", X, True, None, "device-to-host copy of the features"),
  ])

E("fastreid_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "JDAI-CV/fast-reid docker/Dockerfile (nvidia/cuda base, cu113 torch, faiss-gpu, TensorRT deploy tools)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "custom_cuda_extension", R, True,
      "FROM <CANN + torch_npu base image matching the host driver>",
      "no CANN runtime in the CUDA image, so torch_npu cannot load (exact Ascend image name unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES 0-7",
      "read by the NVIDIA container runtime only; NPUs are mounted by Ascend Docker Runtime "
      "(ASCEND_VISIBLE_DEVICES) or --device /dev/davinciN at docker run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES compute,utility", "env_var", X, False, None, "NVIDIA runtime only"),
    C("RUN pip install --user torch==1.10.1+cu113 torchvision==0.11.2+cu113", "import_torch_npu", R, True,
      "RUN pip install --user torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "CUDA wheels; torch_npu must match the torch version (knowledge §1)"),
    C("RUN pip install --user faiss-gpu==1.7.2", "custom_cuda_extension", R, True,
      "RUN pip install --user faiss-cpu==1.7.2", FAISS),
    C("onnxruntime-gpu==1.10.0", "custom_cuda_extension", R, False, "onnxruntime==1.16.3",
      "deployment tools only; CUDA execution provider"),
    C("RUN pip install --user pycuda==2021.1 nvidia-pyindex", "custom_cuda_extension", R, True,
      "RUN pip install --user ais_bench  # unconfirmed package name",
      "pycuda compiles against the CUDA headers, so the image build fails on a CANN base"),
    C("pip install --user nvidia-tensorrt==8.2.1.8", "custom_cuda_extension", X, True, None,
      "TensorRT is NVIDIA-only"),
    C('ENV FORCE_CUDA="1"', "env_var", X, False, None,
      "nothing CUDA is compiled (rank_cylib is Cython on the CPU); harmless leftover"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6+PTX"', "env_var", X, False, None, "as above"),
  ])

E("fastreid_train_sh", "scripts/train_sbs.sh", "explicit_replacement",
  "fast-reid-style SBS training / re-ranking evaluation launcher (multi-node, NCCL env, set -e)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "not read by the NPU runtime; the intended card subset is not applied"),
    C("export NCCL_SOCKET_IFNAME", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node only: HCCL picks its NIC by HCCL_IF_IP > HCCL_SOCKET_IFNAME > ... (knowledge "
      "ascend-distributed §1)"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only knob"),
    C("export NCCL_DEBUG=WARN", "env_var", X, False, None, "NCCL-only logging knob"),
    C('python3 -c "import torch; assert torch.cuda.device_count()', "torch_cuda_api", R, True,
      'python3 -c "import torch, torch_npu; assert torch.npu.device_count() >= ${NUM_GPUS}"',
      "device_count is 0 without CUDA and set -e aborts before training"),
    C('=MODEL.DEVICE "cuda:0" \\', "device_type", R, True, 'MODEL.DEVICE "npu:0" \\',
      "the command-line override beats the ported defaults.py"),
    C('model_final.pth" MODEL.DEVICE "cuda:0"', "device_type", R, True,
      'MODEL.WEIGHTS "${OUT}/model_final.pth" MODEL.DEVICE "npu:0" \\', "as above (evaluation)"),
    C("MODEL.DEVICE cuda \\", "device_type", R, True, "MODEL.WEIGHTS \"${OUT}/model_final.pth\" MODEL.DEVICE npu \\",
      "unquoted spelling; re-ranking evaluation"),
  ])

# ----------------------------------------------------------------------------------------------------------
# open-metric-learning
# ----------------------------------------------------------------------------------------------------------
E("oml_parse", "oml/lightning/pipelines/parse.py", "explicit_replacement",
  "OML-Team/open-metric-learning lightning/pipelines/parse.py (accelerator / DDP strategy from the config)", [
    C('accelerator = cfg.get("accelerator") or ("gpu" if torch.cuda.is_available() else "cpu")', "device_type", B,
      True,
      'accelerator = cfg.get("accelerator") or ("npu" if torch.npu.is_available() else '
      '("gpu" if torch.cuda.is_available() else "cpu"))',
      "configs without an accelerator silently train on the CPU on an NPU host"),
    C('strategy = DDPStrategy(find_unused_parameters=cfg.get("find_unused_parameters", False))', "dist_backend", R,
      False,
      'strategy = DDPStrategy(find_unused_parameters=cfg.get("find_unused_parameters", False), '
      'process_group_backend="hccl")',
      "unconfirmed: Lightning derives the default backend from the root device (nccl only for cuda), so NPU "
      "ranks would get gloo"),
    C('cfg.setdefault("accelerator", "gpu")', "device_type", R, False, 'cfg.setdefault("accelerator", "npu")',
      "legacy OML 1.x configs with a `gpus` key only"),
  ])

E("oml_train_yaml", "examples/cars/train_cars.yaml", "explicit_replacement",
  "OML-Team/open-metric-learning CARS196 pipeline config (hydra yaml: accelerator/devices/precision)", [
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "explicit accelerator: the Lightning trainer asks for CUDA devices"),
    C("precision: 16-mixed", "amp", R, False, "precision: 16-mixed  # with an NPU-aware precision plugin",
      "unconfirmed: Lightning's mixed-precision plugin autocasts 'cuda' unless the accelerator plugin says "
      "otherwise"),
  ])

E("oml_dinov2_attention", "oml/models/vit_dino/external_v2/dinov2/layers/attention.py", "explicit_replacement",
  "DINOv2 layers/attention.py as vendored by open-metric-learning (xformers MemEffAttention, guarded)", [
    C("attn = q @ k.transpose(-2, -1)", "attention_kernel", R, False,
      "x = F.scaled_dot_product_attention(q, k, v)  # when no attention map is requested (NPU FA inside)",
      "performance only: materialised softmax(QK^T). The xformers path is behind a guarded import with a clean "
      "fallback and never runs on NPU"),
  ])

E("oml_retrieval_example", "examples/train_val_retrieval.py", "explicit_replacement",
  "open-metric-learning README-style plain-PyTorch training + retrieval validation script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "torch.npu.* below needs torch_npu"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "harmless no-op without CUDA; the NPU generator simply stays unseeded (reproducibility only)"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "an NPU host silently trains on the CPU"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "the pin-memory thread asks for CUDA pinned memory and raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "calls torch._C._cuda_resetPeakMemoryStats, which the CPU build of torch that torch_npu runs on does not "
      "have"),
    C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.float16, enabled=args.amp):',
      "--amp silently trains in fp32 (CUDA autocast does not cover NPU ops)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without a CUDA build"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "torch.cuda.Event cannot be created without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "as above"),
    C("torch.cuda.synchronize()  # wait for the events", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for the events before reading them", "raises without a CUDA build"),
    C("time.time() - start, torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
      "time.time() - start, torch.npu.max_memory_allocated() / 2**30",
      "returns 0 while CUDA is uninitialised: wrong log line, no failure"),
    C("model = ViTExtractor.from_pretrained(args.weights).to(device)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "performance setting msFmkTransplt always recommends (knowledge §3.5)"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "unconfirmed: torch.compile is ✔ on NPU (Inductor graph mode in torch_npu >= 2.6, npugraphs ~ cudagraphs); "
      "whether max-autotune's Triton templates work there is not covered in knowledge"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", R, False, "if torch.npu.device_count() > 1:",
      "0 on an NPU host, so the DataParallel branch is skipped and training runs on one NPU"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", R, False,
      "# DataParallel is unsupported on NPU: launch with torchrun + DistributedDataParallel",
      "DataParallel is ✘ in Ascend's table (knowledge §2.8); reached only once the guard above is ported"),
    C("optimizer = Adam(model.parameters(), lr=args.lr)", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr)", "performance only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the CUDA scaler disables itself: --amp would run fp16 without loss scaling"),
  ])
