# Labels for probe191: knowledge-graph embedding / link-prediction libraries (CUDA -> Ascend NPU).
# One careful porter's judgement; see README.md "How the labels were chosen".

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# --------------------------------------------------------------------------------------------
# PyKEEN
# --------------------------------------------------------------------------------------------

E("pykeen-utils", "src/pykeen/utils.py", "device_branch_or_abstraction",
  "PyKEEN utils.py (resolve_device, is_cuda_oom_error, env info)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "resolve_device is the library's single device helper and will call torch.npu.*; torch_npu must be imported "
        "so the npu device and torch.npu exist (mandatory before torch_npu 2.5.1 autoload)"),
      C('=device = "cuda"', "device_type", "replace", True,
        'device = "npu"',
        'device=None / "gpu" resolves to "cuda"; on an NPU host that is then silently downgraded to CPU'),
      C('if not torch.cuda.is_available() and device.type == "cuda":', "torch_cuda_api", "replace", True,
        'if not torch.npu.is_available() and device.type == "npu":',
        "torch.cuda.is_available() is False on an NPU host, so every cuda hint silently falls back to the CPU"),
      C('cuda_devices = {d for d in devices if d.type == "cuda"}', "device_type", "replace", True,
        'cuda_devices = {d for d in devices if d.type == "npu"}',
        "for a model split between host and accelerator the npu device is never picked and a ValueError is raised"),
      C('_CUDA_OOM_ERROR = "CUDA out of memory."', "torch_cuda_api", "replace", True,
        '_CUDA_OOM_ERROR = ("CUDA out of memory.", "NPU out of memory.")  # and use any(...) in _is_oom_message',
        "torch_npu reports 'NPU out of memory.'; the message test never matches, so the automatic batch-size / "
        "sub-batch search re-raises instead of halving the batch"),
      C("if isinstance(runtime_error, torch.cuda.OutOfMemoryError):", "torch_cuda_api", "replace", False,
        "if isinstance(runtime_error, getattr(torch, \"OutOfMemoryError\", torch.cuda.OutOfMemoryError)):",
        "newer torch_npu raises torch.OutOfMemoryError (which torch.cuda.OutOfMemoryError aliases on torch>=2.5), older "
        "ones a plain RuntimeError that the message check handles once ported; which one a given pair raises is unconfirmed"),
      C('"CUDA Available?": str(torch.cuda.is_available()),', "torch_cuda_api", "add_branch", False,
        '"NPU Available?": str(torch.npu.is_available()),',
        "environment report for bug reports only; add the NPU line next to the CUDA one"),
      C('if device.type != "cuda":', "device_type", "replace", False,
        'if device.type != "npu":',
        "memory summary is logging only; on NPU it silently returns an empty string"),
      C("allocated = torch.cuda.memory_allocated(device) / 2**20", "torch_cuda_api", "replace", False,
        "allocated = torch.npu.memory_allocated(device) / 2**20",
        "logging only; reached only once the guard above is ported"),
      C("reserved = torch.cuda.memory_reserved(device) / 2**20", "torch_cuda_api", "replace", False,
        "reserved = torch.npu.memory_reserved(device) / 2**20",
        "logging only; reached only once the guard above is ported"),
  ])

E("pykeen-training-loop", "src/pykeen/training/training_loop.py", "device_branch_or_abstraction",
  "PyKEEN training/training_loop.py (TrainingLoop, batch_size_search, checkpoints)",
  [
      C('if self.device.type == "cuda":', "device_type", "replace", False,
        'if self.device.type == "npu":',
        "cache release between Optuna trials; on NPU the guard just skips it (allocator still reuses cached blocks)"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on an NPU host; memory hygiene only"),
      C('pin_memory=pin_memory and self.device.type == "cuda",', "pin_memory", "replace", False,
        'pin_memory=pin_memory and self.device.type == "npu", pin_memory_device="npu",',
        "pinning is silently disabled for npu models; host-to-device copies are slower but correct"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
        "except torch.OutOfMemoryError:",
        "only catches NPU OOM where torch_npu raises torch.OutOfMemoryError (torch>=2.5); older versions raise "
        "RuntimeError and land in the next branch, which depends on utils.is_cuda_oom_error; unconfirmed per version"),
      C("# no-op if CUDA was never initialised", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "called after every probing run of the batch-size search; a silent no-op on NPU, so the search keeps cached "
        "blocks (perf / accuracy of the memory estimate only)"),
      C('"torch_cuda_random_state": torch.cuda.get_rng_state(),', "torch_cuda_api", "replace", True,
        '"torch_npu_random_state": torch.npu.get_rng_state(),',
        "get_rng_state initialises CUDA and raises on a host without CUDA, so every checkpoint save fails"),
      C('torch.cuda.set_rng_state(checkpoint["torch_cuda_random_state"].cpu())', "torch_cuda_api", "replace", True,
        'torch.npu.set_rng_state(checkpoint["torch_npu_random_state"].cpu())',
        "CUDA set_rng_state is queued lazily and never applied, so resumed runs are silently not reproducible on NPU "
        "(and the key is renamed by the save-side change)"),
  ])

E("pykeen-pipeline", "src/pykeen/pipeline/api.py", "device_branch_or_abstraction",
  "PyKEEN pipeline/api.py (pipeline(), _safe_evaluate)",
  [
      C('rv["gpu_name"] = torch.cuda.get_device_name(device) if device.type == "cuda" else None', "torch_cuda_api",
        "replace", False,
        'rv["gpu_name"] = torch.npu.get_device_name(device) if device.type == "npu" else None',
        "result metadata only; on NPU it is silently recorded as None"),
      C('=if device.type == "cuda":', "device_type", "replace", False,
        'if device.type == "npu":',
        "peak-memory metadata is silently skipped on NPU"),
      C('rv["gpu_peak_memory_mib"] = torch.cuda.max_memory_allocated(device) / 2**20', "torch_cuda_api", "replace", False,
        'rv["gpu_peak_memory_mib"] = torch.npu.max_memory_allocated(device) / 2**20',
        "metadata only; reached once the guard is ported"),
      C('if _device.type == "cuda":', "device_type", "replace", False,
        'if _device.type == "npu":',
        "peak-stat reset for the metadata; skipped on NPU"),
      C("torch.cuda.reset_peak_memory_stats(_device)", "torch_cuda_api", "replace", False,
        "torch.npu.reset_peak_memory_stats(_device)",
        "metadata only; reached once the guard is ported"),
      C('if model.device.type != "cuda" or not evaluation_fallback:', "device_type", "replace", True,
        'if model.device.type not in ("cuda", "npu") or not evaluation_fallback:',
        "with evaluation_fallback=True an NPU OOM is re-raised instead of retrying with memory optimisation / on CPU"),
  ])

E("pykeen-evaluator", "src/pykeen/evaluation/evaluator.py", "device_branch_or_abstraction",
  "PyKEEN evaluation/evaluator.py (evaluation batch-size search)",
  [
      C("torch.cuda.empty_cache()  # release cached blocks back to the driver", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # release cached blocks back to the driver",
        "silent no-op on NPU; memory hygiene after an OOM only"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on NPU; makes the probing less accurate, not wrong"),
  ])

E("pykeen-functional", "src/pykeen/nn/functional.py", "device_branch_or_abstraction",
  "PyKEEN nn/functional.py (interaction functions; device-agnostic)",
  [])

E("pykeen-lightning", "src/pykeen/contrib/lightning.py", "device_branch_or_abstraction",
  "PyKEEN contrib/lightning.py (PyTorch Lightning modules and CLI)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "module is also the CLI entry point (_main); NPU device must be registered before Lightning picks an accelerator"),
      C('if self.device.type == "cuda":', "device_type", "replace", False,
        'if self.device.type == "npu":',
        "peak-memory logging silently skipped on NPU"),
      C("peak = torch.cuda.max_memory_allocated(self.device) / 2**20", "torch_cuda_api", "replace", False,
        "peak = torch.npu.max_memory_allocated(self.device) / 2**20",
        "logging only; reached once the guard is ported"),
      C('@click.option("--accelerator", type=str, default="gpu"', "device_type", "replace", True,
        '@click.option("--accelerator", type=str, default="npu", show_default=True, help="The Lightning accelerator.")',
        "accelerator='gpu' fails on an NPU host (no CUDA); Lightning has no built-in NPU accelerator, so 'npu' needs a "
        "registered NPU accelerator plugin (unconfirmed)"),
      C('strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False)', "dist_backend", "replace",
        True,
        'strategy = DDPStrategy(process_group_backend="hccl", find_unused_parameters=False)',
        "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("pykeen-hpo-script", "scripts/run_hpo_fb15k237.py", "explicit_replacement",
  "user script running PyKEEN hpo_pipeline with one Optuna worker per GPU",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "entry script; npu device strings and torch.npu need torch_npu loaded"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "lazy no-op on NPU; torch.manual_seed on the line above also seeds registered custom devices in recent torch "
        "(unconfirmed in the knowledge base)"),
      C('parser.add_argument("--device", default="cuda"', "device_type", "replace", True,
        'parser.add_argument("--device", default="npu", help="Device for a single-process run")',
        "the single-process run would silently fall back to CPU via resolve_device"),
      C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_id)', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu_id)',
        "ignored on Ascend: every worker would run on npu:0 instead of its own card"),
      C('result = hpo_pipeline(device="cuda:0", **kwargs)', "device_type", "replace", True,
        'result = hpo_pipeline(device="npu:0", **kwargs)',
        "cuda:0 silently resolves to CPU on an NPU host"),
      C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
        "return list(range(torch.npu.device_count()))",
        "device_count() is 0 on an NPU host, so the default sweep runs single-process"),
  ])

E("pykeen-requirements", "requirements-gpu.txt", "explicit_replacement",
  "requirements file for PyKEEN benchmark / HPO runs on GPU nodes",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu pairs with the CPU torch wheel (x86: cpu index; aarch64: plain PyPI); the cu118 index has no "
        "matching build for Ascend hosts"),
      C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True,
        "torch==2.1.0",
        "CUDA build; torch_npu is released for torch 2.1.0 (not 2.1.2), wheel version must equal the torch version"),
      C("pykeen[mlflow,wandb,plotting]==1.10.1", "import_torch_npu", "npu_only_addition", True,
        "torch-npu==2.1.0.post12",
        "the torch_npu pin that pairs with torch 2.1.0 (CANN 8.1.RC1 line) must be added"),
      C("nvidia-ml-py3==7.352.0", "torch_cuda_api", "removal", False, None,
        "installs but NVML is absent on Ascend hosts; only used by the sweep dashboard (use npu-smi)"),
      C("gpustat>=1.1", "torch_cuda_api", "removal", False, None,
        "NVIDIA-only monitoring tool; harmless to install, useless on NPU"),
  ])

# --------------------------------------------------------------------------------------------
# DGL-KE
# --------------------------------------------------------------------------------------------

E("dglke-train", "python/dglke/train.py", "device_branch_or_abstraction",
  "DGL-KE python/dglke/train.py (dglke_train entry point)",
  [
      C("import torch.multiprocessing as mp", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "dglke_train entry point; register the npu device before trainer processes are forked"),
  ])

E("dglke-train-pytorch", "python/dglke/train_pytorch.py", "device_branch_or_abstraction",
  "DGL-KE python/dglke/train_pytorch.py (train/test loops per process)",
  [
      C("th.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True,
        "th.npu.set_device(gpu_id)",
        "raises on a host without CUDA; every trainer process binds to its NPU here"),
      C("model.prepare_relation(th.device('cuda:' + str(gpu_id)))", "device_type", "replace", True,
        "model.prepare_relation(th.device('npu:' + str(gpu_id)))",
        "relation partitions would be allocated on a non-existent CUDA device"),
      C("th.cuda.memory_allocated(gpu_id) / 1024 / 1024,", "torch_cuda_api", "replace", False,
        "th.npu.memory_allocated(gpu_id) / 1024 / 1024,",
        "log line; returns 0 on NPU instead of failing"),
      C("th.cuda.max_memory_allocated(gpu_id) / 1024 / 1024))", "torch_cuda_api", "replace", False,
        "th.npu.max_memory_allocated(gpu_id) / 1024 / 1024))",
        "log line; returns 0 on NPU instead of failing"),
      C("device_ctx = th.cuda.device(gpu_id) if gpu_id >= 0 else contextlib.nullcontext()", "torch_cuda_api",
        "replace", True,
        "device_ctx = th.npu.device(gpu_id) if gpu_id >= 0 else contextlib.nullcontext()",
        "entering torch.cuda.device raises without CUDA, so evaluation fails"),
      C("model.load_relation(th.device('cuda:' + str(gpu_id)))", "device_type", "replace", True,
        "model.load_relation(th.device('npu:' + str(gpu_id)))",
        "relation embeddings would be copied to a CUDA device during evaluation"),
  ])

E("dglke-tensor-models", "python/dglke/models/pytorch/tensor_models.py", "device_branch_or_abstraction",
  "DGL-KE models/pytorch/tensor_models.py (ExternalEmbedding, async sparse Adagrad)",
  [
      C("return th.device('cpu') if gpu < 0 else th.device('cuda:' + str(gpu))", "device_type", "replace", True,
        "return th.device('cpu') if gpu < 0 else th.device('npu:' + str(gpu))",
        "device helper used for edge-importance weights"),
      C("return th.device('cpu') if args.gpu[0] < 0 else th.device('cuda:' + str(args.gpu[0]))", "device_type",
        "replace", True,
        "return th.device('cpu') if args.gpu[0] < 0 else th.device('npu:' + str(args.gpu[0]))",
        "device on which the embedding tables are allocated in single-GPU mode"),
      C("cuda = lambda arr, gpu: arr.cuda(gpu)", "tensor_to_device", "replace", True,
        "cuda = lambda arr, gpu: arr.npu(gpu)",
        "the helper every model uses to move index / bias tensors to the accelerator"),
      C("=std = std.cuda(gpu_id)", "tensor_to_device", "replace", True,
        "std = std.npu(gpu_id)",
        "async updater moves the Adagrad state rows to the trainer's device"),
      C("grad_values.share_memory_()", "unsupported_op_workaround", "replace", False,
        "grad_values = grad_values.cpu().share_memory_()",
        "the async update queue passes accelerator tensors between processes (CUDA IPC); MSTT lists "
        "Tensor.share_memory_ as unsupported and NPU tensor IPC through torch.multiprocessing is unconfirmed - "
        "staging the gradients on the host is the safe port"),
      C("if self.emb.is_cuda:", "device_type", "replace", False,
        'if self.emb.device.type != "cpu":',
        "only reached with --pin_embeddings --mix_cpu_gpu where the table is on the host anyway"),
      C("self.emb = self.emb.pin_memory()", "pin_memory", "replace", False,
        'self.emb = self.emb.pin_memory("npu")',
        "default pin_memory() targets CUDA in older torch; whether it pins for NPU without a device argument is "
        "unconfirmed (opt-in flag)"),
      C("self.state_sum = self.state_sum.pin_memory()", "pin_memory", "replace", False,
        'self.state_sum = self.state_sum.pin_memory("npu")',
        "same as the embedding table; opt-in flag only"),
      C("self.emb[cpu_idx] = cpu_emb.cuda(gpu_id)", "tensor_to_device", "replace", True,
        "self.emb[cpu_idx] = cpu_emb.npu(gpu_id)",
        "soft relation partitioning copies cross-partition rows to the device"),
      C("s = s.cuda(gpu_id, non_blocking=self.emb.is_pinned())", "tensor_to_device", "replace", True,
        "s = s.npu(gpu_id, non_blocking=self.emb.is_pinned())",
        "gathered embedding rows are moved to the trainer's accelerator on every step"),
      C("std = std.cuda(gpu_id, non_blocking=True)", "tensor_to_device", "replace", True,
        "std = std.npu(gpu_id, non_blocking=True)",
        "synchronous sparse Adagrad update moves state rows to the device"),
  ])

E("dglke-general-models", "python/dglke/models/general_models.py", "device_branch_or_abstraction",
  "DGL-KE models/general_models.py (KEModel)",
  [
      C("edge_weight = F.copy_to(pos_g.edata['impts'], get_dev(gpu_id)) if self.has_edge_importance else None",
        "tensor_to_device", "replace", False,
        "edge_weight = pos_g.edata['impts'].to(get_dev(gpu_id)) if self.has_edge_importance else None",
        "dgl.backend.copy_to only knows cpu/cuda contexts and raises for others in the DGL versions I know; "
        "not covered by the knowledge base (unconfirmed); only with --has_edge_importance"),
      C("self.relation_emb.emb = F.copy_to(self.global_relation_emb.emb, device)", "tensor_to_device", "replace",
        False,
        "self.relation_emb.emb = self.global_relation_emb.emb.to(device)",
        "same DGL copy_to limitation (unconfirmed); used with relation partitioning in evaluation"),
  ])

E("dglke-score-fun", "python/dglke/models/pytorch/score_fun.py", "device_branch_or_abstraction",
  "DGL-KE models/pytorch/score_fun.py (TransE/DistMult/ComplEx/RotatE scorers)",
  [
      C("squared_res = th.baddbmm(", "unsupported_op_workaround", "replace", False,
        "squared_res = (th.bmm(a, b.transpose(-2, -1)) * -2 + b_squared.unsqueeze(-2)).add_(a_squared.unsqueeze(-1))",
        "msFmkTransplt precision advice: torch.baddbmm can overflow on NPU, split into bmm + add; accuracy advice, "
        "not a hard failure"),
  ])

E("dglke-eval", "python/dglke/eval.py", "device_branch_or_abstraction",
  "DGL-KE python/dglke/eval.py (dglke_eval entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "dglke_eval entry point"),
      C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "0 on an NPU host, so any --gpu id is rejected"),
  ])

E("dglke-multi-gpu-sh", "examples/freebase/multi_gpu.sh", "explicit_replacement",
  "DGL-KE examples: 8-GPU Freebase training launcher",
  [
      C("export DGLBACKEND=pytorch", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment (library paths for torch_npu / HCCL) must be sourced before launching"),
      C("export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
      C('AVAILABLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)', "torch_cuda_api", "replace", True,
        'AVAILABLE=$(npu-smi info -l | grep -c "NPU ID")',
        "nvidia-smi does not exist; with set -euo pipefail the script aborts here"),
      C('nvidia-smi > "${LOG_DIR}/${MODEL}_nvidia_smi.txt"', "torch_cuda_api", "replace", True,
        'npu-smi info > "${LOG_DIR}/${MODEL}_npu_smi.txt"',
        "fails under set -e and makes the run exit non-zero"),
  ])

E("dglke-dockerfile", "docker/Dockerfile", "explicit_replacement",
  "DGL-KE GPU Docker image",
  [
      C("FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
        "CUDA base image carries no CANN toolkit; an Ascend CANN image is needed (tag illustrative)"),
      C("RUN pip install --no-cache-dir torch==1.6.0 torchvision==0.7.0 -f https://download.pytorch.org/whl/torch_stable.html",
        "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12 torchvision==0.16.0",
        "there is no torch_npu for torch 1.6; the port needs a torch/torch-npu pair"),
      C("RUN pip install --no-cache-dir dgl-cu102==0.4.3.post2", "torch_cuda_api", "replace", True,
        "RUN pip install --no-cache-dir dgl==0.4.3.post2",
        "CUDA 10.2 build of DGL; the CPU build is used for sampling on Ascend (compatibility of DGL 0.4.3 with "
        "torch 2.1 unconfirmed)"),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
        "ASCEND_VISIBLE_DEVICES=0-7 \\",
        "NVIDIA container runtime variable, ignored on Ascend; devices are mounted by the Ascend Docker Runtime "
        "or --device /dev/davinciN"),
  ])

# --------------------------------------------------------------------------------------------
# LibKGE
# --------------------------------------------------------------------------------------------

E("libkge-train-job", "kge/job/train.py", "device_branch_or_abstraction",
  "LibKGE kge/job/train.py (TrainingJob with subbatch auto-tuning)",
  [
      C('"CUDA out of memory" not in str(e)', "torch_cuda_api", "replace", True,
        'not any(m in str(e) for m in ("CUDA out of memory", "NPU out of memory"))',
        "NPU OOM messages say 'NPU out of memory', so subbatch_auto_tune never triggers and the job dies"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "silent no-op on NPU after an OOM"),
      C('if self.device.startswith("cuda"):', "device_type", "replace", False,
        'if self.device.startswith(("cuda", "npu")):',
        "timing sync skipped on NPU; batch times become inaccurate (async launch), results are unaffected"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
        "torch.npu.synchronize()",
        "timing only; reached once the guard is ported"),
      C('if "cuda" in self.device:', "device_type", "replace", False,
        'if "npu" in self.device:',
        "peak-memory trace entry silently missing on NPU"),
      C("dict(max_memory_mib=torch.cuda.max_memory_allocated(self.device) / 2 ** 20)", "torch_cuda_api", "replace",
        False,
        "dict(max_memory_mib=torch.npu.max_memory_allocated(self.device) / 2 ** 20)",
        "trace only; reached once the guard is ported"),
  ])

E("libkge-cli", "kge/cli.py", "device_branch_or_abstraction",
  "LibKGE kge/cli.py (kge command entry point)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "'kge' console entry point; job.device: npu needs torch_npu registered"),
      C('if device.startswith("cuda"):', "device_type", "add_branch", False,
        'elif device.startswith("npu") and not torch.npu.is_available(): raise ValueError("no NPU available")',
        "early validation only; for npu devices it is silently skipped, the CUDA branch stays as is"),
      C('if pool_device.startswith("cuda") and torch.device(pool_device).index is None:', "device_type", "replace",
        False,
        'if pool_device.startswith(("cuda", "npu")) and torch.device(pool_device).index is None:',
        "validation of search.device_pool only"),
  ])

E("libkge-config-default", "kge/config-default.yaml", "explicit_replacement",
  "LibKGE kge/config-default.yaml",
  [
      C("device: 'cuda'", "device_type", "replace", True,
        "device: 'npu'",
        "default job.device; every job would try to allocate on CUDA"),
  ])

E("libkge-example-search", "examples/fb15k-237-complex-sparse-search.yaml", "explicit_replacement",
  "LibKGE example search config with a GPU device pool",
  [
      C("job.device: cuda:0", "device_type", "replace", True,
        "job.device: npu:0",
        "CUDA device string in the job config"),
      C("search.device_pool: [ cuda:0, cuda:1, cuda:2, cuda:3 ]", "device_type", "replace", True,
        "search.device_pool: [ npu:0, npu:1, npu:2, npu:3 ]",
        "parallel search jobs are placed on these devices"),
      C("sparse: True", "unsupported_op_workaround", "replace", False,
        "sparse: False",
        "sparse embedding gradients: the knowledge base only says sparse ops without NPU kernels raise instead of "
        "falling back; whether nn.Embedding(sparse=True) + Adagrad works on NPU is unconfirmed"),
  ])

E("libkge-kge-model", "kge/model/kge_model.py", "device_branch_or_abstraction",
  "LibKGE kge/model/kge_model.py (KgeModel, LookupEmbedder; device from config)",
  [])

# --------------------------------------------------------------------------------------------
# OpenKE
# --------------------------------------------------------------------------------------------

E("openke-trainer", "openke/config/Trainer.py", "explicit_replacement",
  "OpenKE openke/config/Trainer.py (use_gpu flag, to_var helper)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "OpenKE examples never import torch themselves; the Trainer module is where the npu calls live"),
      C("self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model.npu()",
        "use_gpu=True moves the model to CUDA"),
      C("return Variable(torch.from_numpy(x).cuda())", "tensor_to_device", "replace", True,
        "return Variable(torch.from_numpy(x).npu())",
        "every training batch is moved with .cuda()"),
  ])

E("openke-tester", "openke/config/Tester.py", "explicit_replacement",
  "OpenKE openke/config/Tester.py",
  [
      C("=self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model.npu()",
        "Tester moves the model in its constructor when use_gpu=True"),
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model = self.model.npu()",
        "set_use_gpu path"),
      C("return Variable(torch.from_numpy(x).cuda())", "tensor_to_device", "replace", True,
        "return Variable(torch.from_numpy(x).npu())",
        "every test batch is moved with .cuda()"),
  ])

E("openke-example", "examples/train_rotate_WN18RR_adv.py", "explicit_replacement",
  "OpenKE example training script (RotatE on WN18RR)",
  [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', "env_var", "replace", True,
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "1"',
        "card selection on a shared server; ignored on Ascend so the run lands on card 0"),
  ])

# --------------------------------------------------------------------------------------------
# TorchKGE
# --------------------------------------------------------------------------------------------

E("torchkge-data", "torchkge/utils/data.py", "explicit_replacement",
  "TorchKGE torchkge/utils/data.py (DataLoader with use_cuda='all'/'batch', Trainer)",
  [
      C("from torch.cuda import is_available as cuda_is_available", "torch_cuda_api", "replace", True,
        "from torch_npu.npu import is_available as cuda_is_available",
        "the use_cuda check raises 'CUDA is not available' on an NPU host"),
      C("self.h = self.h.cuda()", "tensor_to_device", "replace", True,
        "self.h = self.h.npu()",
        "use_cuda='all' moves the whole dataset to the accelerator"),
      C("self.t = self.t.cuda()", "tensor_to_device", "replace", True,
        "self.t = self.t.npu()",
        "use_cuda='all'"),
      C("self.r = self.r.cuda()", "tensor_to_device", "replace", True,
        "self.r = self.r.npu()",
        "use_cuda='all'"),
      C("return tmp_h.cuda(), tmp_t.cuda(), tmp_r.cuda()", "tensor_to_device", "replace", True,
        "return tmp_h.npu(), tmp_t.npu(), tmp_r.npu()",
        "use_cuda='batch' moves every batch"),
      C("self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model.npu()",
        "model to accelerator"),
      C("self.criterion.cuda()", "tensor_to_device", "replace", False,
        "self.criterion.npu()",
        "TorchKGE losses have no parameters or buffers, so Module.cuda() touches no tensor and is a silent no-op"),
  ])

E("torchkge-link-prediction", "torchkge/evaluation/link_prediction.py", "explicit_replacement",
  "TorchKGE evaluation/link_prediction.py (LinkPredictionEvaluator)",
  [
      C("use_cuda = next(self.model.parameters()).is_cuda", "device_type", "replace", True,
        "use_cuda = next(self.model.parameters()).is_npu",
        "is_cuda is False for an npu model, so CPU batches are fed to an NPU model -> device mismatch error"),
      C("self.rank_true_heads = self.rank_true_heads.cuda()", "tensor_to_device", "replace", True,
        "self.rank_true_heads = self.rank_true_heads.npu()",
        "rank buffers must live with the scores"),
      C("self.rank_true_tails = self.rank_true_tails.cuda()", "tensor_to_device", "replace", True,
        "self.rank_true_tails = self.rank_true_tails.npu()",
        "rank buffers must live with the scores"),
      C("self.filt_rank_true_heads = self.filt_rank_true_heads.cuda()", "tensor_to_device", "replace", True,
        "self.filt_rank_true_heads = self.filt_rank_true_heads.npu()",
        "rank buffers must live with the scores"),
      C("self.filt_rank_true_tails = self.filt_rank_true_tails.cuda()", "tensor_to_device", "replace", True,
        "self.filt_rank_true_tails = self.filt_rank_true_tails.npu()",
        "rank buffers must live with the scores"),
  ])

# --------------------------------------------------------------------------------------------
# NBFNet (PyG) / TorchDrug-style
# --------------------------------------------------------------------------------------------

E("nbfnet-rspmm", "nbfnet/rspmm/rspmm.py", "kernel_rewrite",
  "NBFNet-PyG nbfnet/rspmm/rspmm.py (JIT-built generalized relational SpMM CUDA kernel)",
  [
      C("forward = rspmm.rspmm_add_mul_forward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif input.device.type == "npu": forward = rspmm_add_mul_forward_torch  # scatter/index_add fallback',
        "npu tensors fall through to the CPU kernel, which cannot read device memory; needs a PyTorch-op (or "
        "Ascend C) implementation"),
      C("backward = rspmm.rspmm_add_mul_backward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif output_grad.device.type == "npu": backward = rspmm_add_mul_backward_torch',
        "same dispatch in the backward pass"),
      C("forward = rspmm.rspmm_min_mul_forward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif input.device.type == "npu": forward = rspmm_min_mul_forward_torch',
        "npu tensors would reach the CPU kernel"),
      C("backward = rspmm.rspmm_min_mul_backward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif output_grad.device.type == "npu": backward = rspmm_min_mul_backward_torch',
        "backward dispatch"),
      C("forward = rspmm.rspmm_max_mul_forward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif input.device.type == "npu": forward = rspmm_max_mul_forward_torch',
        "is_cuda is False for npu tensors, so they reach the CPU kernel"),
      C("backward = rspmm.rspmm_max_mul_backward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif output_grad.device.type == "npu": backward = rspmm_max_mul_backward_torch',
        "backward dispatch"),
      C("forward = rspmm.rspmm_add_add_forward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif input.device.type == "npu": forward = rspmm_add_add_forward_torch',
        "npu tensors would reach the CPU kernel"),
      C("backward = rspmm.rspmm_add_add_backward_cuda", "custom_cuda_extension", "add_branch", True,
        'elif output_grad.device.type == "npu": backward = rspmm_add_add_backward_torch',
        "backward dispatch"),
      C("return cpp_extension.load(name, sources, extra_cflags, extra_cuda_cflags, **kwargs)",
        "custom_cuda_extension", "replace", False,
        "return cpp_extension.load(name, sources, extra_cflags, None, **kwargs)  # CPU kernels only; NPU uses the torch fallback",
        "on an NPU host the loader already drops rspmm.cu and JIT-builds the CPU kernels; Ascend's list marks "
        "cpp_extension.load as unsupported for NPU extensions - a real NPU kernel would need NpuExtension/Ascend C"),
  ])

E("nbfnet-util", "nbfnet/util.py", "device_branch_or_abstraction",
  "NBFNet-PyG nbfnet/util.py (device selection, process group)",
  [
      C("device = torch.device(cfg.train.gpus[get_rank()])", "device_type", "replace", True,
        'device = torch.device("npu", cfg.train.gpus[get_rank()])',
        "torch.device(int) means a CUDA device in the torch versions torch_npu pairs with (newer torch may map ints "
        "to the current accelerator - unconfirmed)"),
      C('dist.init_process_group("nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group("hccl", init_method="env://")',
        "NCCL is not available on Ascend"),
  ])

E("nbfnet-run", "script/run.py", "device_branch_or_abstraction",
  "NBFNet-PyG script/run.py (training / evaluation driver)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "entry script"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
        "on an NPU host the CUDA GradScaler disables itself with a warning; training stays correct in fp32"),
      C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=use_amp):",
        "CUDA autocast does not apply to npu tensors; silently fp32 (performance only)"),
      C('if device.type == "cuda":', "device_type", "replace", True,
        'if device.type == "npu":',
        "without binding each rank to its NPU all ranks create their context on npu:0 before HCCL init"),
      C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(device)",
        "raises once the guard above is ported"),
  ])

E("nbfnet-environment", "environment.yml", "explicit_replacement",
  "NBFNet conda environment.yml",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None,
        "NVIDIA conda channel only serves CUDA runtime packages"),
      C("- pytorch=1.12.1", "torch_cuda_api", "replace", True,
        "- pytorch=2.1.0=*cpu*",
        "no torch_npu exists for torch 1.12; torch must match the torch-npu wheel (CPU build)"),
      C("- pytorch-cuda=11.6", "torch_cuda_api", "removal", True, None,
        "CUDA runtime metapackage; not resolvable / not usable on an Ascend (usually aarch64) host"),
      C("- cudatoolkit-dev=11.6", "custom_cuda_extension", "removal", True, None,
        "nvcc for JIT-building rspmm.cu; no CUDA toolkit on Ascend hosts (CANN is installed system-wide)"),
      C("- pip:", "import_torch_npu", "npu_only_addition", True,
        "    - torch-npu==2.1.0.post12",
        "torch_npu is only distributed via pip"),
      C("- nvidia-ml-py", "torch_cuda_api", "removal", False, None,
        "NVML bindings; installs fine but has nothing to talk to"),
  ])

# --------------------------------------------------------------------------------------------
# GraphVite-style launcher (PyTorch re-implementation consuming GraphVite YAML)
# --------------------------------------------------------------------------------------------

E("kgrun-launch", "kgrun/launch.py", "explicit_replacement",
  "GraphVite-style partitioned KGE launcher (resource.gpus, gpu_memory_limit, cpu_per_gpu)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True,
        "import torch_npu  # noqa: F401",
        "entry point; spawned workers re-import this module"),
      C("gpus = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
        "gpus = list(range(torch.npu.device_count()))",
        "0 on an NPU host -> 'needs at least one GPU' error when resource.gpus is empty"),
      C('self.backend = cfg.get("backend", "nccl")', "dist_backend", "replace", True,
        'self.backend = cfg.get("backend", "hccl")',
        "default collective backend"),
      C("free = min(torch.cuda.mem_get_info(g)[0] for g in gpus)", "torch_cuda_api", "replace", True,
        "free = min(torch.npu.mem_get_info(g)[0] for g in gpus)",
        "gpu_memory_limit: auto queries CUDA and raises on an NPU host"),
      C("major, minor = torch.cuda.get_device_capability(gpu)", "device_capability_check", "replace", True,
        "major, minor = 8, 0  # Ascend A2/A3 support bf16; no CUDA compute capability",
        "raises without CUDA; even via torch.npu it returns None unless TORCH_NPU_DEVICE_CAPABILITY is set"),
      C('self.device = torch.device("cuda", self.gpu)', "device_type", "replace", True,
        'self.device = torch.device("npu", self.gpu)',
        "worker device"),
      C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)", "amp",
        "replace", False,
        "self.scaler = torch.npu.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)",
        "disables itself on an NPU host; with bf16 the scaler is off anyway"),
      C('torch.cuda.nvtx.range_push("episode%d_b%d_%d" % (episode, head_block, tail_block))', "torch_cuda_api",
        "replace", True,
        'range_id = torch_npu.npu.mstx.range_start("episode%d_b%d_%d" % (episode, head_block, tail_block))',
        "NVTX stub raises on non-CUDA builds when train.profile is on; mstx is the Ascend counterpart (exact call "
        "shape unconfirmed)"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)",
        "CUDA events cannot be created without CUDA; every episode fails"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)",
        "as above"),
      C('ctx = torch.autocast("cuda", dtype=self.amp_dtype) if self.use_amp else nullcontext()', "amp", "replace",
        False,
        'ctx = torch.autocast("npu", dtype=self.amp_dtype) if self.use_amp else nullcontext()',
        "autocast('cuda') is disabled with a warning on an NPU host; fp32 is correct but slower"),
      C("torch.cuda.synchronize(self.device)", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize(self.device)",
        "raises without CUDA"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
        "torch_npu.npu.mstx.range_end(range_id)",
        "profile path only (see range_push)"),
      C("torch.cuda.set_device(resource.gpus[rank])", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(resource.gpus[rank])",
        "raises without CUDA; binds each spawned worker to its NPU before HCCL init"),
      C('logger.info("max memory allocated: %.2f GiB", torch.cuda.max_memory_allocated() / 2 ** 30)',
        "torch_cuda_api", "replace", False,
        'logger.info("max memory allocated: %.2f GiB", torch.npu.max_memory_allocated() / 2 ** 30)',
        "log line; reports 0 on NPU"),
      C('os.environ.setdefault("NCCL_P2P_DISABLE", "1")', "env_var", "removal", False, None,
        "NCCL tuning knob; no effect on HCCL"),
      C('os.environ.setdefault("NCCL_DEBUG", "WARN")', "env_var", "removal", False, None,
        "NCCL logging knob; no effect on HCCL (CANN logging uses ASCEND_GLOBAL_LOG_LEVEL)"),
      C('device = torch.device("cuda", resource.gpus[0])', "device_type", "replace", True,
        'device = torch.device("npu", resource.gpus[0])',
        "evaluation device"),
  ])

E("kgrun-config", "config/kg/rotate_wikidata5m.yaml", "explicit_replacement",
  "GraphVite-format knowledge-graph YAML config",
  [
      C("backend: nccl", "dist_backend", "replace", True,
        "backend: hccl",
        "explicit NCCL backend for the relation all-reduce"),
  ])
