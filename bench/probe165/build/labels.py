# Labels for probe165: federated / split learning frameworks (CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit. See README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = "add `import torch_npu` so torch.npu / the 'npu' device exist (autoload only from torch_npu 2.5.1)"
SEED_NOTE = ("torch.cuda.manual_seed* is queued lazily and silently does nothing without CUDA; torch.manual_seed "
             "already seeds the NPU generator (unconfirmed in knowledge) - cosmetic for reproducibility")
CUDNN_NOTE = "torch.backends.cudnn flags have no effect on NPU (silent no-op)"

# ---------------------------------------------------------------------------------------------
# Flower
# ---------------------------------------------------------------------------------------------
E("flwr_quickstart_client", "examples/quickstart-pytorch/client.py", "device_branch_or_abstraction",
  "Flower quickstart-pytorch client (NumPyClient, module-level DEVICE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "torch.cuda.is_available() is False on an Ascend host, so the client silently trains on the CPU"),
])

E("flwr_simulation", "examples/simulation-pytorch/sim.py", "device_branch_or_abstraction",
  "Flower simulation-pytorch (start_simulation with Ray client_resources)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", False,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module constant is never used (clients and evaluate_fn pick their own device); edit for consistency only"),
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "virtual clients silently fall back to CPU on an NPU host"),
    C('=device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "centralised evaluation silently runs on CPU"),
    C('"num_gpus": args.num_gpus,', "distributed_framework", "replace", True,
      '"resources": {"NPU": args.num_gpus},',
      "run as documented (--num_gpus 0.25) Ray finds no GPU resource on an Ascend host and the actor pool stays empty; "
      "Ray exposes Ascend cards as the custom resource 'NPU' (ray-project/ray PR #41256, not in knowledge - unconfirmed)"),
    C('ray_init_args = {"include_dashboard": False, "num_gpus": torch.cuda.device_count()}', "torch_cuda_api", "replace", False,
      'ray_init_args = {"include_dashboard": False, "resources": {"NPU": torch.npu.device_count()}}',
      "tells Ray there are 0 GPUs; harmless once clients request the NPU resource (Ray auto-detects NPUs - unconfirmed)"),
])

E("flwr_fedprox_client", "baselines/fedprox/fedprox/client.py", "device_branch_or_abstraction",
  "Flower baselines FedProx client (gen_client_fn with stragglers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; client_fn runs inside Ray actor processes that import this module"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "each virtual client silently trains on the CPU"),
])

E("flwr_fedprox_models", "baselines/fedprox/fedprox/models.py", "device_branch_or_abstraction",
  "Flower baselines FedProx models/train/test (device passed in; nothing to port)", [])

E("flwr_fedprox_main", "baselines/fedprox/fedprox/main.py", "device_branch_or_abstraction",
  "Flower baselines FedProx hydra main (start_simulation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      IMPORT_NOTE + "; the server-side evaluate_fn uses cfg.server_device in this process"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guard is False on NPU so the seeding below is skipped; reproducibility only"),
    C("torch.cuda.manual_seed_all(cfg.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(cfg.seed)", SEED_NOTE),
    C('"num_gpus": cfg.client_resources.num_gpus,', "distributed_framework", "replace", False,
      '"resources": {"NPU": cfg.client_resources.num_gpus},',
      "the minimal port just sets num_gpus: 0.0 in conf/config.yaml; mapping the fraction onto Ray's 'NPU' "
      "custom resource gives NPU-aware packing (unconfirmed, not in knowledge)"),
])

E("flwr_fedprox_conf", "baselines/fedprox/fedprox/conf/config.yaml", "device_branch_or_abstraction",
  "Flower baselines FedProx hydra config", [
    C("num_gpus: 0.2", "distributed_framework", "replace", True,
      "num_gpus: 0.0 # Ascend host: Ray has no GPU resource; clients pick npu:0 themselves",
      "Ray sees no GPUs on an Ascend host, so a 0.2 GPU request can never be met and the simulation cannot start"),
    C("server_device: cuda", "device_type", "replace", True, "server_device: npu",
      "server-side evaluation moves the model to 'cuda', which fails with the CPU torch wheel used on Ascend hosts"),
])

E("flwrtune_llm_models", "examples/flowertune-llm/flowertune_llm/models.py", "explicit_replacement",
  "Flower flowertune-llm model builder (bitsandbytes 4/8-bit + PEFT LoRA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if model_cfg.get("bf16", True) and torch.cuda.is_bf16_supported():', "torch_cuda_api", "replace", True,
      'if model_cfg.get("bf16", True) and torch.npu.is_bf16_supported():',
      "returns False without CUDA, so the model silently computes in fp16 instead of bf16"),
    C("load_in_4bit=True,", "unsupported_op_workaround", "replace", True,
      "load_in_4bit=False,  # no NF4 kernels for Ascend in the pinned bitsandbytes 0.43; LoRA on a bf16 base",
      "Ascend NF4 support exists only in bitsandbytes' multi-backend branch (knowledge §6); the pinned release has none"),
    C("quantization_config = BitsAndBytesConfig(load_in_8bit=True)", "unsupported_op_workaround", "replace", True,
      "quantization_config = None  # LLM.int8 is not available on Ascend",
      "bitsandbytes LLM.int8 is not listed for NPU (knowledge §6)"),
    C('attn_implementation="flash_attention_2" if model_cfg.get("flash_attn", False) else "sdpa",', "attention_kernel", "replace", False,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; only taken when model.flash-attn=true (default false), SDPA dispatches to NPU FA"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "memory report silently returns {} on NPU; logging only"),
    C("allocated = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.max_memory_allocated() / 1024**3", "logging only (guarded above)"),
    C("reserved = torch.cuda.memory_reserved() / 1024**3", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 1024**3", "logging only (guarded above)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", False, "torch.npu.reset_peak_memory_stats()",
      "logging only (guarded above)"),
])

E("flwrtune_llm_pyproject", "examples/flowertune-llm/pyproject.toml", "explicit_replacement",
  "Flower flowertune-llm pyproject (flwr app config, federation resources)", [
    C('"bitsandbytes==0.43.0",', "unsupported_op_workaround", "removal", False, None,
      "no longer imported for quantisation after the port; installing it is harmless on x86 but it has no Ascend backend (unconfirmed for aarch64 wheels)"),
    C('"torch==2.3.1",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.3.1.post6",',
      "torch_npu wheel matching torch 2.3.1 (branch v2.3.1-7.0.0, CANN 8.1.RC1)"),
    C('"flash-attn==2.5.8",', "attention_kernel", "removal", False, None,
      "optional extra; flash-attn cannot be built on NPU - only pulled with [flash]"),
    C("options.backend.client-resources.num-gpus = 1.0", "distributed_framework", "replace", True,
      "options.backend.client-resources.num-gpus = 0.0",
      "Ray on an Ascend host has no GPU resource, so no ClientApp could ever be scheduled"),
])

E("flwr_docker_compose", "examples/flower-via-docker-compose-gpu/compose.yml", "explicit_replacement",
  "Flower deployment engine docker compose with NVIDIA device reservations", [
    C("- driver: nvidia", "device_type", "replace", True, "- /dev/davinci_manager",
      "no nvidia device driver on an Ascend host (compose fails to start); NPUs are passed as /dev/davinci* devices "
      "plus /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc and the driver mount"),
    C("count: 1", "device_type", "removal", True, None, "part of the NVIDIA device request"),
    C("capabilities: [gpu]", "device_type", "removal", True, None, "part of the NVIDIA device request"),
    C("FROM flwr/clientapp:${FLWR_VERSION:-1.13.0}", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "the ClientApp image has no CANN toolkit, so torch_npu cannot load (libhccl/libascendcl missing); image name illustrative, flwr installed on top"),
    C("RUN pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "RUN pip install --no-cache-dir torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.3.1.post6 \\",
      "CUDA 12.1 wheel index -> CPU torch plus the matching torch-npu wheel"),
    C("- supernode-1:9094", "device_type", "npu_only_addition", True, 'devices: ["/dev/davinci0"]',
      "each ClientApp needs its own NPU mounted (count-based GPU reservation has no Ascend equivalent)"),
    C("- supernode-2:9095", "device_type", "npu_only_addition", True, 'devices: ["/dev/davinci1"]',
      "each ClientApp needs its own NPU mounted"),
])

# ---------------------------------------------------------------------------------------------
# FedML
# ---------------------------------------------------------------------------------------------
E("fedml_gpu_mapping", "python/fedml/core/distributed/gpu_mapping_mpi.py", "device_branch_or_abstraction",
  "FedML gpu_mapping.yaml process-to-GPU mapping for MPI simulation", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(gpu_util_map[process_id][1])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu_util_map[process_id][1])", "raises with the CPU torch build on an Ascend host"),
    C('device = torch.device("cuda:" + str(gpu_util_map[process_id][1]))', "device_type", "replace", True,
      'device = torch.device("npu:" + str(gpu_util_map[process_id][1]))', "'cuda' device unusable on NPU host"),
    C('device = torch.device("cuda:%d" % local_gpu if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:%d" % local_gpu if torch.npu.is_available() else "cpu")',
      "silently maps every process to the CPU"),
    C("if torch.cuda.is_available() and gpu_id < torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and gpu_id < torch.npu.device_count():", "silently falls back to CPU"),
    C('device = torch.device("cuda:" + str(gpu_id))', "device_type", "replace", True,
      'device = torch.device("npu:" + str(gpu_id))', "'cuda' device unusable on NPU host"),
])

E("fedml_device", "python/fedml/device/device.py", "device_branch_or_abstraction",
  "FedML get_device(args) dispatch over training types / scenarios", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "device_type 'gpu' silently degrades to 'cpu' on an Ascend host ('gpu' is kept as FedML's name for the accelerator)"),
    C('device_type = "gpu" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", "replace", True,
      'device_type = "gpu" if torch.npu.is_available() else "cpu"', "silently degrades to CPU"),
    C('return torch.device("cuda:" + str(device_id))', "device_type", "replace", True,
      'return torch.device("npu:" + str(device_id))', "the accelerator device is an NPU"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises with the CPU torch build"),
    C('return getattr(device, "type", str(device)).startswith("cuda")', "device_type", "replace", False,
      'return getattr(device, "type", str(device)).startswith(("cuda", "npu"))',
      "only decides whether trainers enable AMP; False on NPU just means fp32 training (performance)"),
])

E("fedml_config", "python/examples/federate/cross_silo/mqtt_s3_fedavg_hierarchical_mnist_lr_example/config/fedml_config.yaml",
  "device_branch_or_abstraction", "FedML cross-silo hierarchical fedml_config.yaml", [
    C('pg_backend: "nccl"', "dist_backend", "replace", True, 'pg_backend: "hccl"',
      "intra-silo DDP process group; NCCL does not exist on Ascend"),
])

E("fedml_mpi_launcher", "python/examples/federate/simulation/mpi_torch_fedavg_mnist_lr_example/run_step_by_step_example.sh",
  "explicit_replacement", "FedML MPI simulation launcher (mpirun + hostfile)", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load in the MPI ranks"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the restriction silently disappears"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "no effect on NPU (and the MPI simulator sends CPU messages, not NCCL collectives)"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", True,
      "npu-smi info", "nvidia-smi does not exist on an Ascend host and `set -e` aborts the script"),
    C("-x CUDA_VISIBLE_DEVICES -x NCCL_DEBUG -x OMP_NUM_THREADS", "env_var", "replace", True,
      "-x ASCEND_RT_VISIBLE_DEVICES -x OMP_NUM_THREADS \\", "forward the Ascend visibility variable to all ranks"),
])

E("fedml_trainer", "python/fedml/ml/trainer/my_model_trainer_classification.py", "device_branch_or_abstraction",
  "FedML ModelTrainerCLS classification trainer", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only the optional torch.npu.* edits below use it; the entry point already loads torch_npu"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "self.scaler = torch.npu.amp.GradScaler()",
      "reached only if is_gpu_device() accepts 'npu'; a CUDA GradScaler without CUDA disables itself -> fp32 training (performance)"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
      "with torch.autocast(device_type=device.type, enabled=use_amp):",
      "CUDA autocast silently disables itself on NPU; fp32 CNN training stays correct (performance only)"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type in ("cuda", "npu"):',
      "peak-memory log line is skipped on NPU; logging only"),
    C("% (self.id, torch.cuda.max_memory_allocated(device) / 2**20)", "torch_cuda_api", "replace", False,
      "% (self.id, torch.npu.max_memory_allocated(device) / 2**20)", "logging only"),
])

E("fedml_gpu_utils", "python/fedml/computing/scheduler/comm_utils/gpu_utils.py", "device_branch_or_abstraction",
  "FedML launcher/agent GPU discovery and reservation (GPUtil / pynvml / nvidia-smi)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("for g in GPUtil.getGPUs()", "device_capability_check", "add_branch", True,
      "if torch.npu.is_available(): return _npu_cards()  # torch.npu.device_count / get_device_name / mem_get_info",
      "GPUtil swallows the missing nvidia-smi and returns [] -> the agent reports zero accelerators; add an NPU branch before it"),
    C("return torch.cuda.device_count()", "torch_cuda_api", "replace", True, "return torch.npu.device_count()",
      "pynvml fails (no NVML) and the fallback returns 0 on an Ascend host"),
    C('return GPUtil.getAvailable(order="memory", limit=limit, maxLoad=max_load, maxMemory=max_memory)',
      "device_capability_check", "replace", True,
      "return [c.id for c in sorted(get_gpu_cards(), key=lambda c: c.memoryUsed) if c.load <= max_load and c.memoryUtil <= max_memory][:limit]",
      "GPUtil.getAvailable returns [] without nvidia-smi, so every job reservation fails"),
    C('env["CUDA_VISIBLE_DEVICES"] = gpu_ids', "env_var", "replace", True, 'env["ASCEND_RT_VISIBLE_DEVICES"] = gpu_ids',
      "job subprocesses would see every NPU and pile onto npu:0"),
])

E("fedml_splitnn_client", "python/fedml/simulation/mpi/split_nn/client.py", "device_branch_or_abstraction",
  "FedML split learning (SplitNN) client over MPI", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type in ("cuda", "npu"):',
      "without a sync on NPU the per-step compute_time only measures kernel launch; timing log only"),
    C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", False, "torch.npu.synchronize(self.device)",
      "timing only"),
    C("gpu_id = (rank - 1) % max(torch.cuda.device_count(), 1)", "torch_cuda_api", "replace", True,
      "gpu_id = (rank - 1) % max(torch.npu.device_count(), 1)", "device_count() is 0 on NPU -> every client would map to card 0"),
    C('device = torch.device("cuda:%d" % gpu_id if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:%d" % gpu_id if torch.npu.is_available() else "cpu")', "silently trains the bottom model on CPU"),
])

E("fedml_dockerfile", "installation/build_fedml_docker/Dockerfile", "explicit_replacement",
  "FedML Docker image (CUDA base, cu118 wheels, MPI)", [
    C("ARG BASE_IMAGE=nvidia/cuda:11.8.0-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
      "ARG BASE_IMAGE=ascendai/cann:7.0.0-910b-ubuntu20.04-py3.9",
      "needs a CANN toolkit base image so torch_npu can load (image tag illustrative)"),
    C("--index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels have no aarch64 build and are not what torch_npu pairs with; use CPU torch"),
    C("RUN pip install --no-cache-dir mpi4py==3.1.4 \\", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.0.1.post1 \\", "torch_npu wheel matching torch 2.0.1 (v2.0.1-5.0.0, CANN 7.0.0)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "only read by the NVIDIA container runtime; Ascend devices are mounted at run time (Ascend Docker Runtime / --device)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime only"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}", "env_var", "replace", False,
      "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}",
      "CANN base images already export the toolkit/driver paths; the CUDA entries are dead weight"),
    C("ENV NCCL_DEBUG=INFO", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=1", "logging only"),
])

# ---------------------------------------------------------------------------------------------
# FedLab
# ---------------------------------------------------------------------------------------------
E("fedlab_functional", "fedlab/utils/functional.py", "explicit_replacement",
  "FedLab utils.functional (setup_seed, evaluate, get_best_gpu via pynvml)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)", CUDNN_NOTE + "; determinism has to be requested differently"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
      "AssertionError on every NPU host"),
    C("pynvml.nvmlInit()", "device_capability_check", "removal", True, None, "NVML is not present on an Ascend host (NVMLError)"),
    C("deviceCount = pynvml.nvmlDeviceGetCount()", "device_capability_check", "replace", True,
      "deviceCount = torch.npu.device_count()", "NVML unavailable"),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ.keys():', "env_var", "removal", False, None,
      "torch.npu indices are already logical (re-indexed by ASCEND_RT_VISIBLE_DEVICES), so the physical-index remapping block goes"),
    C('int(device) for device in os.environ["CUDA_VISIBLE_DEVICES"].split(",")', "env_var", "removal", False, None,
      "part of the removed remapping block"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(i)", "device_capability_check", "removal", True, None, "NVML unavailable"),
    C("deviceMemory.append(pynvml.nvmlDeviceGetMemoryInfo(handle).free)", "device_capability_check", "replace", True,
      "deviceMemory.append(torch.npu.mem_get_info(i)[0])", "free memory from the NPU runtime instead of NVML"),
    C('return torch.device("cuda:%d" % (best_device_index))', "device_type", "replace", True,
      'return torch.device("npu:%d" % (best_device_index))', "'cuda' device unusable on NPU"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", True, "for i in range(torch.npu.device_count()):",
      "loop never runs on NPU and the function then returns cuda:0"),
    C("free, _ = torch.cuda.mem_get_info(i)", "torch_cuda_api", "replace", True, "free, _ = torch.npu.mem_get_info(i)",
      "CUDA runtime call"),
    C('return torch.device("cuda:%d" % best)', "device_type", "replace", True, 'return torch.device("npu:%d" % best)',
      "'cuda' device unusable on NPU"),
])

E("fedlab_client_trainer", "fedlab/core/client/trainer.py", "explicit_replacement",
  "FedLab ClientTrainer / SGDSerialClientTrainer (cuda flag + device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("data = data.cuda(self.device)", "tensor_to_device", "replace", True, "data = data.npu(self.device)",
      "Tensor.cuda fails with the CPU torch build"),
    C("target = target.cuda(self.device)", "tensor_to_device", "replace", True, "target = target.npu(self.device)",
      "Tensor.cuda fails with the CPU torch build"),
    C('cuda = bool(getattr(args, "cuda", False)) and torch.cuda.is_available()', "torch_cuda_api", "replace", True,
      'cuda = bool(getattr(args, "cuda", False)) and torch.npu.is_available()',
      "--cuda is silently ignored on NPU and everything runs on the CPU (FedLab keeps the flag name 'cuda')"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "0 on NPU -> all clients silently assigned to device 0"),
])

E("fedlab_scaffold", "fedlab/contrib/algorithm/scaffold.py", "explicit_replacement",
  "FedLab SCAFFOLD server handler and serial client trainer", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("global_c = global_c.cuda(self.device)", "tensor_to_device", "replace", True, "global_c = global_c.npu(self.device)",
      "Tensor.cuda fails on NPU host"),
    C("self.cs[id] = self.cs[id].cuda(self.device)", "tensor_to_device", "replace", True, "self.cs[id] = self.cs[id].npu(self.device)",
      "Tensor.cuda fails on NPU host"),
    C("frz_model = frz_model.cuda(self.device)", "tensor_to_device", "replace", True, "frz_model = frz_model.npu(self.device)",
      "Tensor.cuda fails on NPU host"),
    C("data, target = data.cuda(self.device), target.cuda(self.device)", "tensor_to_device", "replace", True,
      "data, target = data.npu(self.device), target.npu(self.device)", "Tensor.cuda fails on NPU host"),
    C("if use_cuda and torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if use_cuda and torch.npu.is_available():",
      "server control variate silently stays on CPU while the global model lives on the NPU -> device mismatch in global_update"),
    C("c = c.cuda()", "tensor_to_device", "replace", True, "c = c.npu()", "Tensor.cuda fails on NPU host"),
])

E("fedlab_env", "environment.yml", "explicit_replacement", "FedLab benchmarks conda environment", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel is unused once pytorch-cuda is gone"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.0.1.post1",
      "torch_npu wheel (pip only) matching pytorch 2.0.1 (v2.0.1-5.0.0, CANN 7.0.0)"),
    C("- pytorch-cuda=11.8", "device_type", "removal", True, None,
      "selects the CUDA build of pytorch; torch_npu pairs with the CPU build (and there is no aarch64 pytorch-cuda)"),
    C("- cudatoolkit=11.8", "device_type", "removal", False, None, "CUDA runtime is dead weight on an Ascend host"),
    C("=- pynvml", "device_capability_check", "removal", False, None,
      "get_best_gpu no longer uses NVML after the port; installing it is harmless"),
])

# ---------------------------------------------------------------------------------------------
# NVFlare
# ---------------------------------------------------------------------------------------------
E("nvflare_cifar10_learner", "examples/advanced/cifar10/pt/learners/cifar10_learner.py", "device_branch_or_abstraction",
  "NVFlare CIFAR-10 Learner (FedProx loss, SCAFFOLD helper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.device = torch.device("npu:0" if torch.npu.is_available() else "cpu")', "client silently trains on CPU"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "self.scaler = torch.npu.amp.GradScaler()",
      "use_amp defaults to False; a CUDA GradScaler disables itself on NPU -> fp32 training (performance)"),
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False, "pin_memory=torch.npu.is_available(),",
      "evaluates False on NPU, so host->device copies are unpinned (performance only)"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp):", "amp", "replace", False,
      "with torch.autocast(device_type=self.device.type, enabled=self.use_amp):", "CUDA autocast silently disabled on NPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "cache is not emptied at finalize on NPU; harmless"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
])

E("nvflare_resources", "examples/advanced/cifar10/workspaces/secure_workspace/site-1/local/resources.json.default",
  "explicit_replacement", "NVFlare site local resources.json (GPUResourceManager)", [
    C('"path": "nvflare.app_common.resource_managers.gpu_resource_manager.GPUResourceManager",', "distributed_framework", "replace", True,
      '"path": "nvflare.app_common.resource_managers.list_resource_manager.ListResourceManager",',
      "GPUResourceManager checks the requested GPUs against the host's NVIDIA cards at start-up (NVFlare behaviour from memory, "
      "not in knowledge); with 2 GPUs requested the client cannot start on an Ascend host"),
    C('"num_of_gpus": 2,', "distributed_framework", "replace", True, '"resources": {"npu": [0, 1]}',
      "arguments of the replacement resource manager"),
    C('"mem_per_gpu_in_GiB": 24', "distributed_framework", "removal", True, None, "GPUResourceManager-only argument"),
    C('"path": "nvflare.app_common.resource_consumers.gpu_resource_consumer.GPUResourceConsumer",', "env_var", "replace", True,
      '"path": "npu_resource_consumer.NPUResourceConsumer",',
      "the GPU consumer pins jobs through CUDA_VISIBLE_DEVICES, which the Ascend runtime ignores; a small custom consumer sets ASCEND_RT_VISIBLE_DEVICES"),
])

E("nvflare_sim_launcher", "examples/advanced/cifar10/cifar10-sim/run_simulator.sh", "explicit_replacement",
  "NVFlare CIFAR-10 simulator launcher", [
    C("export PYTHONPATH=${PWD}/..", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before the client processes import torch_npu"),
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", "removal", False, None, "no effect on NPU"),
    C('--gpu "${GPU_IDS}"', "env_var", "removal", False, None,
      "the simulator's --gpu pins client groups through CUDA_VISIBLE_DEVICES (ignored on NPU); with the default single id "
      "nothing changes, for several ids set ASCEND_RT_VISIBLE_DEVICES per run instead (unconfirmed whether the simulator has an NPU flag)"),
])

# ---------------------------------------------------------------------------------------------
# FedNova / NIID-Bench research code
# ---------------------------------------------------------------------------------------------
E("fednova_train", "train_LocalSGD.py", "explicit_replacement",
  "FedNova official train_LocalSGD.py (torch.distributed, one GPU per client)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--backend", default="nccl"', "dist_backend", "replace", True,
      'parser.add_argument("--backend", default="hccl", type=str, help="distributed backend")', "NCCL does not exist on Ascend"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "removal", False, None, CUDNN_NOTE),
    C("model = util.select_model(10, args).cuda()", "tensor_to_device", "replace", True, "model = util.select_model(10, args).npu()",
      "Module.cuda fails with the CPU torch build"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False, "criterion = nn.CrossEntropyLoss().npu()",
      "CrossEntropyLoss without class weights has no tensors, so .cuda() touches nothing and does not fail"),
    C("data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data, target = data.npu(non_blocking=True), target.npu(non_blocking=True)", "Tensor.cuda fails on NPU host"),
    C('torch.cuda.nvtx.range_push("step_%d" % batch_idx)', "torch_cuda_api", "replace", False,
      'rng = torch_npu.npu.mstx.range_start("step_%d" % batch_idx)',
      "NVTX is CUDA-only (use torch_npu.npu.mstx); only executed with --profile"),
    C("=data = data.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "data = data.npu(non_blocking=True)",
      "Tensor.cuda fails on NPU host"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "target = target.npu(non_blocking=True)",
      "Tensor.cuda fails on NPU host"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", False, "torch_npu.npu.mstx.range_end(rng)",
      "only executed with --profile"),
    C('os.environ["NCCL_SOCKET_IFNAME"] = args.ifname', "env_var", "replace", True, 'os.environ["HCCL_SOCKET_IFNAME"] = args.ifname',
      "multi-node runs: HCCL ignores NCCL_SOCKET_IFNAME and may pick the wrong host NIC for rendezvous"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() in ("nccl", "hccl"):',
      "get_backend() returns 'hccl', set_device is skipped and every rank of a node lands on device 0"),
    C("torch.cuda.set_device(rank % args.gpus)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank % args.gpus)",
      "CUDA runtime call"),
])

E("fednova_optim", "distoptim/FedNova.py", "explicit_replacement",
  "FedNova optimizer (normalized averaging with dist.all_reduce)", [
    C('device = "cuda" if self.param_groups[0]["params"][0].is_cuda else "cpu"', "device_type", "replace", False,
      'device = "npu" if self.param_groups[0]["params"][0].is_npu else "cpu"', "unused local variable; consistency only"),
    C("tau_eff_cuda = torch.tensor(self.local_steps * self.ratio).cuda()", "tensor_to_device", "replace", True,
      "tau_eff_cuda = torch.tensor(self.local_steps * self.ratio).npu()", "HCCL all_reduce needs an NPU tensor; .cuda() fails"),
    C("tau_eff_cuda = torch.tensor(self.local_normalizing_vec * self.ratio).cuda()", "tensor_to_device", "replace", True,
      "tau_eff_cuda = torch.tensor(self.local_normalizing_vec * self.ratio).npu()", "HCCL all_reduce needs an NPU tensor"),
])

E("niid_bench_experiments", "experiments.py", "explicit_replacement",
  "NIID-Bench experiments.py (FedAvg / FedProx / SCAFFOLD / FedNova in one script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', type=str, default='cuda:0'", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu:0', help='The device to run the program')",
      "default device string"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", False, "criterion = nn.CrossEntropyLoss().to(device)",
      "loss module holds no tensors, .cuda() is a no-op that does not fail"),
    C("global_weight_collector = list(global_net.cuda().parameters())", "tensor_to_device", "replace", True,
      "global_weight_collector = list(global_net.to(device).parameters())", "Module.cuda fails on NPU host"),
    C("x, target = x.cuda(), target.cuda()", "tensor_to_device", "replace", True, "x, target = x.to(device), target.to(device)",
      "Tensor.cuda fails on NPU host"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.to(device)", "Module.cuda fails on NPU host"),
    C("elif c_global_para[key].type() == 'torch.cuda.LongTensor':", "device_type", "replace", True,
      "elif c_global_para[key].type() == 'torch.npu.LongTensor':",
      "on NPU the type string is torch.npu.LongTensor; the else branch then adds float into num_batches_tracked (error for BN models)"),
    C("c_global_para[key] += total_delta[key].type(torch.cuda.LongTensor)", "torch_cuda_api", "replace", True,
      "c_global_para[key] += total_delta[key].type(torch.npu.LongTensor)", "CUDA tensor type"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("frozen_global = copy.deepcopy(global_model).cuda()", "tensor_to_device", "replace", True,
      "frozen_global = copy.deepcopy(global_model).to(device)", "Module.cuda fails on NPU host"),
    C("=global_model.cuda()", "tensor_to_device", "replace", True, "global_model.to(device)", "Module.cuda fails on NPU host"),
    C("elif updated_model[key].type() == 'torch.cuda.LongTensor':", "device_type", "replace", True,
      "elif updated_model[key].type() == 'torch.npu.LongTensor':",
      "same type-string check in the FedNova server update"),
    C("updated_model[key] -= (coeff * d_total_round[key]).type(torch.cuda.LongTensor)", "torch_cuda_api", "replace", True,
      "updated_model[key] -= (coeff * d_total_round[key]).type(torch.npu.LongTensor)", "CUDA tensor type"),
])

# ---------------------------------------------------------------------------------------------
# FedIT (Shepherd) / FATE-LLM / secure aggregation
# ---------------------------------------------------------------------------------------------
E("fedit_main", "main.py", "explicit_replacement",
  "FedIT / Shepherd federated instruction tuning main (LLaMA 8-bit + LoRA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}', "device_type", "replace", False,
      'device_map = {"": f"npu:{int(os.environ.get(\'LOCAL_RANK\') or 0)}"}',
      "accelerate maps bare ints to the NPU when torch_npu is present (unconfirmed); explicit string is safer"),
    C("load_in_8bit=True,", "unsupported_op_workaround", "replace", True, "load_in_8bit=False,",
      "bitsandbytes LLM.int8 is not available on Ascend (knowledge §6); load the fp16 base instead"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if not ddp and torch.npu.device_count() > 1:",
      "flags only matter for model-parallel device_map='auto'; Trainer infers model parallelism from hf_device_map anyway"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; cached blocks are not returned between clients (memory headroom only)"),
])

E("fedit_client", "fed_utils/client.py", "explicit_replacement", "FedIT GeneralClient and FedAvg over LoRA adapters", [
    C('def resume_adapter(model, path, device="cuda"):', "device_type", "replace", True,
      'def resume_adapter(model, path, device="npu"):', "default map_location='cuda' fails on the NPU host"),
])

E("fedit_requirements", "requirements.txt", "explicit_replacement", "FedIT requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "pip would pick the +cu118 wheel; torch_npu pairs with the CPU build"),
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "torch_npu wheel matching torch 2.0.1"),
    C("accelerate==0.18.0", "distributed_framework", "replace", True, "accelerate>=0.22.0",
      "NPU support in accelerate starts at 0.22.0 (knowledge §6)"),
    C("bitsandbytes==0.37.2", "unsupported_op_workaround", "removal", False, None,
      "8-bit loading is dropped in main.py; the package itself only matters for CUDA"),
    C("peft==0.3.0", "distributed_framework", "replace", False, "peft>=0.5.0",
      "peft NPU device inference from 0.5.0 (knowledge §6); not exercised by this script - unconfirmed need"),
    C("transformers==4.28.1", "distributed_framework", "replace", True, "transformers>=4.32.0",
      "TrainingArguments(fp16=True) refuses non-CUDA devices before native NPU support in 4.32.0"),
])

E("fate_llm_trainer", "python/fate_llm/trainer/fedavg_trainer.py", "explicit_replacement",
  "FATE / FATE-LLM homo FedAVGTrainer (cuda ids, DataParallel, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available() and self.cuda is not None:", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available() and self.cuda is not None:",
      "raises 'Cuda is not available' for every job that sets cuda=<id> on an NPU host"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "CUDA GradScaler disables itself without CUDA; training stays fp32-correct (performance/memory)"),
    C("self.model = self.model.cuda(self.cuda_main_device)", "tensor_to_device", "replace", True,
      "self.model = self.model.npu(self.cuda_main_device)", "Module.cuda fails on NPU host"),
    C("self.parallel_model = torch.nn.DataParallel(model, device_ids=self.cuda, output_device=self.cuda_main_device)",
      "unsupported_op_workaround", "replace", True,
      "self.parallel_model = self.model  # nn.DataParallel is unsupported on Ascend; use DDP via torchrun for multi-NPU",
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 (knowledge §3.7)"),
    C("return var.cuda(device)", "tensor_to_device", "replace", True, 'return var.to(f"npu:{device}")',
      "Tensor.cuda fails on NPU host (the hasattr(var, 'cuda') test above is still true for tensors)"),
    C("with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', enabled=self.use_amp, dtype=torch.float16):",
      "CUDA autocast silently disabled on NPU -> fp32 (performance/memory)"),
    C("torch.cuda.reset_peak_memory_stats(self.cuda_main_device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(self.cuda_main_device)",
      "not guarded by an initialisation check; calls into missing CUDA bindings of the CPU build"),
    C("peak = torch.cuda.max_memory_allocated(self.cuda_main_device) / 1024 ** 3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.cuda_main_device) / 1024 ** 3", "returns 0 without CUDA; logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)", SEED_NOTE),
])

E("secagg_masking", "flsec/secagg/masking.py", "device_branch_or_abstraction",
  "pairwise-mask secure aggregation helper (Bonawitz et al.) with GPU mask expansion", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed if mask expansion is moved to the NPU"),
    C("if cfg.use_cuda and torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'if cfg.use_cuda and torch.npu.is_available(): return torch.device("npu", torch.npu.current_device())',
      "on NPU the CPU fallback is already correct; an NPU branch is a speed-up that is only safe when every party "
      "expands masks on the same device type (Philox streams differ across devices)"),
    C('gen = torch.Generator(device="cuda" if device.type == "cuda" else "cpu")', "device_type", "replace", False,
      'gen = torch.Generator(device=device.type if device.type in ("cuda", "npu") else "cpu")',
      "needed together with the optional NPU branch above"),
    C('if self.device.type == "cuda":', "device_type", "replace", False, 'if self.device.type in ("cuda", "npu"):',
      "timing log only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize() if self.device.type == \"npu\" else torch.cuda.synchronize()", "timing log only"),
])
