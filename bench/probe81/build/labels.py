"""Labels for probe81 (hand-written synthetic upstream files; see ../README.md).

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

LIGHTNING_NPU = ("Lightning has no built-in NPU accelerator: 'gpu'/'cuda' selects CUDAAccelerator, which raises "
                 "MisconfigurationException on a host without CUDA; the port registers an NPU Accelerator "
                 "(class name in the ported line is illustrative)")

# ---------------------------------------------------------------------------------------------- Chronos
E("chronos_pipeline", "src/chronos/chronos.py", "device_branch_or_abstraction",
  "amazon-science/chronos-forecasting src/chronos/chronos.py (tokenizer, ChronosModel, ChronosPipeline.from_pretrained)", [
    C('if kwargs.get("device_map") == "auto" and not torch.cuda.is_available():', "device_type", R, True,
      'if kwargs.get("device_map") == "auto" and not (torch.cuda.is_available() or (hasattr(torch, "npu") and torch.npu.is_available())):',
      "the 'no GPU' fallback rewrites device_map='auto' to 'cpu' on an NPU host, so the model silently runs on the "
      "host CPU although accelerate would have placed it on the NPU"),
])

E("chronos_train", "scripts/training/train.py", "explicit_replacement",
  "amazon-science/chronos-forecasting scripts/training/train.py (HF Trainer, typer, tf32 guard, job-info dump)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu  # noqa: F401",
      "transformers' is_torch_npu_available() imports torch_npu itself, so the Trainer finds the NPU without it; "
      "needed here once the job-info block calls torch.npu.*"),
    C('job_info["cuda_available"] = torch.cuda.is_available()', "torch_cuda_api", R, False,
      'job_info["npu_available"] = torch.npu.is_available()',
      "documentation only (training_info.json records cuda_available=False on an NPU host)"),
    C("if torch.cuda.is_available():", "torch_cuda_api", R, False, "if torch.npu.is_available():",
      "job-info block silently skipped on NPU; no effect on training"),
    C('job_info["device_count"] = torch.cuda.device_count()', "torch_cuda_api", R, False,
      'job_info["device_count"] = torch.npu.device_count()', "job info only"),
    C("idx: torch.cuda.get_device_name(idx)", "torch_cuda_api", R, False, "idx: torch.npu.get_device_name(idx)",
      "job info only; only reached inside the CUDA branch"),
    C("idx: torch.cuda.mem_get_info(device=idx)", "torch_cuda_api", R, False,
      "idx: torch.npu.mem_get_info(device=idx)", "job info only; only reached inside the CUDA branch"),
    C("torch_compile: bool = True,", "compile_mode", R, False, "torch_compile: bool = False,",
      "TrainingArguments(torch_compile=True) compiles with Inductor; NPU Inductor support depends on the torch_npu "
      "version (graph mode from 2.6) - unconfirmed for T5 on the versions this script pins; disable or use a NPU backend"),
])

E("chronos_evaluate", "scripts/evaluation/evaluate.py", "explicit_replacement",
  "amazon-science/chronos-forecasting scripts/evaluation/evaluate.py (device='cuda' default, timing extension)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401",
      "device_map='npu' and torch.npu.* need the NPU backend registered (explicit import recommended even with autoload)"),
    C('device: str = "cuda",', "device_type", R, True, 'device: str = "npu",',
      "default device_map='cuda' fails on an NPU host (Torch not compiled with CUDA enabled)"),
    C('use_device_timers = report_timing and device.startswith("cuda")', "device_type", R, False,
      'use_device_timers = report_timing and device.startswith(("cuda", "npu"))',
      "with device='npu' the branch is simply skipped: timing still correct (predict() syncs via .numpy()), "
      "peak memory reported as NaN"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, False, "torch.npu.reset_peak_memory_stats()",
      "only reached inside the device-timer branch"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, False, "torch.npu.synchronize()",
      "only reached inside the device-timer branch"),
    C("peak_mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
      "peak_mem_gb = torch.npu.max_memory_allocated() / 2**30", "only reached inside the device-timer branch"),
])

E("chronos_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Chronos / Chronos-Bolt serving image (nvidia/cuda base, cu121 torch wheel, nvidia-smi healthcheck)", [
    C("ARG CUDA_VERSION=12.1.1", "torch_cuda_api", R, False, "ARG CANN_VERSION=8.0.0",
      "only feeds the base-image tag"),
    C("FROM nvidia/cuda:", "torch_cuda_api", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu${UBUNTU_VERSION}-py3.10 AS base",
      "a CUDA runtime image has no CANN toolkit, so torch_npu cannot load (exact Ascend image name unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; the Ascend Docker Runtime mounts /dev/davinci* from "
      "ASCEND_VISIBLE_DEVICES (or devices are passed with --device), so the effect depends on how the image is run"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "no effect on Ascend"),
    C("ARG TORCH_VERSION=2.2.2", "torch_cuda_api", R, True, "ARG TORCH_VERSION=2.1.0",
      "torch_npu wheels exist only for specific torch releases (2.1.0, 2.3.1, 2.4.0, 2.5.1, ...); none pairs with 2.2.2"),
    C("ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu",
      "CUDA 12.1 wheels; torch_npu expects the CPU build on x86 (plain PyPI torch on aarch64)"),
    C('&& python -m pip install "torch==${TORCH_VERSION}" --index-url ${TORCH_INDEX_URL}', "import_torch_npu", A, True,
      '&& python -m pip install "torch-npu==${TORCH_NPU_VERSION}"',
      "torch_npu must be installed next to the matching torch"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", R, False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored by the NPU runtime; the single-process server uses device 0 anyway, only isolation is lost"),
    C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator tuning only; the CUDA variable is ignored"),
    C("CMD nvidia-smi > /dev/null && curl", "torch_cuda_api", R, True,
      "CMD npu-smi info > /dev/null && curl -fsS http://localhost:8080/health || exit 1",
      "nvidia-smi does not exist in an Ascend image, so the health check always fails and the container is "
      "reported unhealthy"),
    C('CMD ["python", "-m", "serving.app"', "device_type", R, True,
      'CMD ["python", "-m", "serving.app", "--host", "0.0.0.0", "--port", "8080", "--device", "npu"]',
      "server started with --device cuda"),
])

# ---------------------------------------------------------------------------------------------- TimesFM
E("timesfm_decoder", "src/timesfm/pytorch_patched_decoder.py", "explicit_replacement",
  "google-research/timesfm src/timesfm/pytorch_patched_decoder.py (Pax-style decoder in PyTorch)", [
    C("output = self._norm(x.float())", "npu_fused_op", R, False,
      "output = torch_npu.npu_rms_norm(x.float(), torch.ones_like(self.weight, dtype=torch.float32), self.eps)[0]",
      "performance only: fused RMSNorm (the unit-offset weight is applied afterwards as before)"),
    C("scores = torch.matmul(q, k.transpose(2, 3))", "attention_kernel", R, False,
      "output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))  # NPU FA inside SDPA",
      "performance only: hand-written softmax attention; the returned scores are unused by StackedDecoder"),
])

E("timesfm_torch", "src/timesfm/timesfm_torch.py", "device_branch_or_abstraction",
  "google-research/timesfm src/timesfm/timesfm_torch.py (TimesFmTorch, backend='gpu' hparam)", [
    C("=import torch", "import_torch_npu", A, True,
      "try:\n  import torch_npu  # noqa: F401\nexcept ImportError:\n  torch_npu = None",
      "the NPU branch of the device selection needs torch.npu"),
    C('if self.backend not in ("cpu", "gpu"):', "device_type", R, False,
      'if self.backend not in ("cpu", "gpu", "npu"):',
      "only if an explicit 'npu' backend name is wanted; backend='gpu' maps to the NPU once the device line is fixed"),
    C('self._device = torch.device("cuda:0" if (', "device_type", B, True,
      'self._device = torch.device("cuda:0" if torch.cuda.is_available() and self.backend == "gpu" else '
      '"npu:0" if torch_npu is not None and torch.npu.is_available() and self.backend in ("gpu", "npu") else "cpu")',
      "backend='gpu' on an NPU host silently runs the decoder on the CPU"),
    C('if self._device.type == "cuda":', "device_type", R, False, 'if self._device.type in ("cuda", "npu"):',
      "performance only: the bf16 cast is skipped on NPU, so inference runs in fp32"),
])

E("timesfm_finetune", "src/finetuning/finetuning_torch.py", "explicit_replacement",
  "google-research/timesfm finetuning_torch.py (TimesFMFinetuner, mp.spawn DDP, AMP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.* and hccl"),
    C('device: str = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device: str = "npu" if torch.npu.is_available() else "cpu"',
      "default silently picks the CPU on an NPU host"),
    C('self.device = torch.device(f"cuda:{config.gpu_ids[rank]}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{config.gpu_ids[rank]}")', "distributed path hard-codes CUDA"),
    C('backend="nccl",', "dist_backend", R, True, 'backend="hccl",', "NCCL is unavailable on Ascend"),
    C("torch.cuda.set_device(self.device)", "torch_cuda_api", R, True, "torch.npu.set_device(self.device)",
      "fails without CUDA"),
    C('pin_memory_device="cuda",', "pin_memory", R, True, 'pin_memory_device="npu",',
      "pinning for the CUDA device needs a CUDA build"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.config.use_amp):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.config.use_amp):',
      "CUDA autocast is disabled without CUDA, so NPU tensors run in fp32 silently"),
    C("scaler: torch.cuda.amp.GradScaler) -> float:", "amp", R, False,
      "scaler: torch.npu.amp.GradScaler) -> float:", "type annotation only"),
    C("optimizer = torch.optim.Adam(", "fused_optimizer", R, False,
      "optimizer = torch_npu.optim.NpuFusedAdam(", "performance only (msFmkTransplt advice)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=self.config.use_amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=self.config.use_amp)",
      "the CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C('"peak_mem_gb": torch.cuda.max_memory_allocated(self.device) / 2**30,', "torch_cuda_api", R, False,
      '"peak_mem_gb": torch.npu.max_memory_allocated(self.device) / 2**30,',
      "logging only; expected to report 0 without CUDA initialised (unconfirmed)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C("torch.cuda.set_device(config.gpu_ids[rank])", "torch_cuda_api", R, True,
      "torch.npu.set_device(config.gpu_ids[rank])", "spawned worker fails without CUDA"),
    C("assert world_size <= torch.cuda.device_count(), (", "torch_cuda_api", R, True,
      "assert world_size <= torch.npu.device_count(), (",
      "device_count() is 0 on an NPU host, so the distributed path always asserts"),
    C("only {torch.cuda.device_count()} visible", "torch_cuda_api", R, False,
      'f"Requested {world_size} NPUs but only {torch.npu.device_count()} visible"',
      "assertion message only"),
])

E("timesfm_pyproject", "pyproject.toml", "explicit_replacement",
  "google-research/timesfm pyproject.toml (pax/torch extras, uv CUDA index for torch)", [
    C('"torch>=2.0.0",', "import_torch_npu", A, True, '"torch-npu==2.4.0.post4",  # pin torch to the matching 2.4.0',
      "the torch extra installs no NPU backend; torch_npu must match the torch version exactly"),
    C('{ index = "pytorch-cu121", marker = "sys_platform == \'linux\'" },', "torch_cuda_api", R, True,
      '{ index = "pytorch-cpu", marker = "sys_platform == \'linux\' and platform_machine == \'x86_64\'" },',
      "uv resolves torch from the CUDA 12.1 index on every Linux host (no aarch64 wheels there; x86 gets a CUDA build)"),
    C('name = "pytorch-cu121"', "torch_cuda_api", R, False, 'name = "pytorch-cpu"', "index rename only"),
    C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", R, True,
      'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index"),
])

# ---------------------------------------------------------------------------------------------- uni2ts / Moirai
E("uni2ts_cli_train", "cli/train.py", "explicit_replacement",
  "SalesforceAIResearch/uni2ts cli/train.py (hydra + Lightning pre-training entry point)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu  # noqa: F401  (also registers the NPU Lightning accelerator used in conf/)",
      "the NPU accelerator named in the trainer config needs torch_npu"),
])

E("uni2ts_pretrain_yaml", "cli/conf/pretrain/default.yaml", "explicit_replacement",
  "SalesforceAIResearch/uni2ts cli/conf/pretrain/default.yaml (Lightning trainer + DDP strategy)", [
    C("accelerator: gpu", "device_type", R, True,
      "accelerator:\n    _target_: uni2ts.common.npu.NPUAccelerator", LIGHTNING_NPU),
    C("process_group_backend: nccl", "dist_backend", R, True, "process_group_backend: hccl",
      "NCCL is unavailable on Ascend"),
])

# ---------------------------------------------------------------------------------------------- Lag-Llama
E("lagllama_run", "run.py", "explicit_replacement",
  "time-series-foundation-models/lag-llama run.py (pre-training / fine-tuning driver, batch-size search)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.* below"),
    C('if "CUDA out of memory" not in str(e):', "torch_cuda_api", R, False,
      'if "out of memory" not in str(e):',
      "the batch-size search only catches the CUDA OOM message; an NPU OOM would be re-raised instead of halving "
      "the batch (torch_npu's OOM text is unconfirmed)"),
    C("torch.cuda.empty_cache()  # release the failed allocation", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # release the failed allocation", "silent no-op without CUDA"),
    C("torch.cuda.get_device_name(args.gpu),", "torch_cuda_api", R, True, "torch.npu.get_device_name(args.gpu),",
      "fails at start-up without CUDA"),
    C('f"({torch.cuda.get_device_properties(args.gpu).total_memory', "torch_cuda_api", R, True,
      'f"({torch.npu.get_device_properties(args.gpu).total_memory / 2**30:.1f} GiB)",',
      "fails without CUDA (total_memory is one of the properties NPU does report)"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", R, True,
      'device = torch.device(f"npu:{args.gpu}")', "predictor / kv-cache device"),
    C('accelerator="gpu",', "device_type", R, True, "accelerator=NPUAccelerator(),", LIGHTNING_NPU),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("lagllama_estimator", "lag_llama/gluon/estimator.py", "explicit_replacement",
  "time-series-foundation-models/lag-llama lag_llama/gluon/estimator.py (LagLlamaEstimator device default)", [
    C('device: torch.device = torch.device("cuda"),', "device_type", R, True,
      'device: torch.device = torch.device("npu"),',
      "default used for map_location and the PyTorchPredictor; loading the checkpoint to 'cuda' fails"),
])

E("lagllama_module", "lag_llama/model/module.py", "explicit_replacement",
  "time-series-foundation-models/lag-llama lag_llama/model/module.py (LLaMA-style decoder with RoPE, SDPA, kv-cache)", [
    C("from torch.nn import functional as F", "import_torch_npu", A, False, "import torch_npu",
      "only needed for the optional fused ops below"),
    C("x_normed = x * torch.rsqrt(norm_x + self.eps)", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(x, self.scale, self.eps)[0]", "performance only: fused RMSNorm"),
    C("q_embed = (q * cos) + (rotate_half(q) * sin)", "npu_fused_op", R, False,
      "q_embed = torch_npu.npu_rotary_mul(q, cos, sin)", "performance only: fused RoPE (k likewise)"),
])

E("lagllama_finetune_sh", "scripts/finetune.sh", "explicit_replacement",
  "time-series-foundation-models/lag-llama scripts/finetune.sh + pretrain.sh (per-dataset seeds loop, torchrun)", [
    C("nvidia-smi --query-gpu=index,name,memory.total,memory.used", "torch_cuda_api", R, True,
      'npu-smi info -t usages -i "${GPU}"', "command not found aborts the script under set -e"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "ignored by the NPU runtime: every run lands on NPU 0 (--gpu 0) instead of the requested card"),
    C("export NVIDIA_TF32_OVERRIDE=1", "env_var", X, False, None, "no effect on Ascend"),
    C('NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)', "torch_cuda_api", R, True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi missing: with pipefail the pretraining branch aborts"),
    C("unset CUDA_VISIBLE_DEVICES", "env_var", R, True, "unset ASCEND_RT_VISIBLE_DEVICES",
      "once the fine-tuning loop exports ASCEND_RT_VISIBLE_DEVICES, pretraining would otherwise see one NPU "
      "while launching NUM_GPUS processes"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL equivalent (already default 1 per MindCluster docs)"),
    C("export NCCL_P2P_DISABLE=0", "env_var", X, False, None, "NCCL-only tuning"),
])

# ---------------------------------------------------------------------------------------------- NeuralForecast
E("nf_base_model", "neuralforecast/common/_base_model.py", "device_branch_or_abstraction",
  "Nixtla/neuralforecast common/_base_model.py (trainer_kwargs defaults, Spark TorchDistributor path)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\ntry:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "the NPU branch below needs torch.npu"),
    C("=if torch.cuda.is_available():", "device_type", B, True,
      'if torch.cuda.is_available():\n    trainer_kwargs["accelerator"] = "gpu"\nelif hasattr(torch, "npu") and torch.npu.is_available():\n    trainer_kwargs["accelerator"] = NPUAccelerator()',
      "no accelerator set on an NPU host: Lightning's 'auto' does not know NPUs, so every model trains on the CPU"),
    C("if torch.cuda.is_available():  # use every visible GPU", "device_type", B, False,
      'if torch.cuda.is_available() or (hasattr(torch, "npu") and torch.npu.is_available()):  # every visible device',
      "Lightning's default devices='auto' already uses all devices of the chosen accelerator"),
    C('strategy="ddp",', "dist_backend", R, False,
      'strategy=DDPStrategy(process_group_backend="hccl"),',
      "Lightning picks nccl only for cuda devices and falls back to gloo otherwise; gloo with NPU tensors is "
      "expected to fail (unconfirmed for the Lightning versions NeuralForecast pins)"),
])

E("nf_base_auto", "neuralforecast/common/_base_auto.py", "device_branch_or_abstraction",
  "Nixtla/neuralforecast common/_base_auto.py (BaseAuto: ray tune / optuna, gpus=torch.cuda.device_count())", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\ntry:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "torch.npu.device_count() in the default below"),
    C("gpus=torch.cuda.device_count(),", "torch_cuda_api", R, True,
      'gpus=torch.npu.device_count() if hasattr(torch, "npu") else torch.cuda.device_count(),',
      "evaluated once at import: 0 on an NPU host, so every Auto* model tunes on CPU-only ray trials"),
    C('device_dict = {"gpu": gpus}', "distributed_framework", R, True,
      'device_dict = {"NPU": gpus} if hasattr(torch, "npu") and torch.npu.is_available() else {"gpu": gpus}',
      "ray schedules NPUs as the custom resource 'NPU'; a trial requesting 'gpu' on an NPU node stays pending"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA (optuna path)"),
])

E("nf_gru", "neuralforecast/models/gru.py", "explicit_replacement",
  "Nixtla/neuralforecast models/gru.py (multi-layer nn.GRU encoder + MLP decoder)", [
    C("dropout=self.encoder_dropout,", "unsupported_op_workaround", R, True,
      "dropout=0.0,  # NPU: stack single-layer GRUs with nn.Dropout in between instead",
      "Ascend's API list marks nn.GRU's dropout argument unsupported (encoder_n_layers defaults to 2; "
      "Auto configs sample encoder_dropout > 0)"),
])

E("nf_env_cuda", "environment-cuda.yml", "explicit_replacement",
  "Nixtla/neuralforecast environment-cuda.yml (conda env with pytorch-cuda from the nvidia channel)", [
    C("=- pytorch", "torch_cuda_api", X, False, None, "channel not needed once torch comes from pip"),
    C("=- nvidia", "torch_cuda_api", X, False, None, "CUDA runtime channel"),
    C("- pytorch>=2.0.0,<2.5", "torch_cuda_api", R, True, "# torch is installed with pip below (torch==2.4.0)",
      "conda's pytorch build cannot be paired with a torch_npu wheel, which needs an exact torch version"),
    C("- pytorch-cuda>=11.8", "torch_cuda_api", X, True, None, "CUDA runtime metapackage"),
    C("=- pip:", "import_torch_npu", A, True, "    - torch==2.4.0\n    - torch-npu==2.4.0.post4",
      "the env has no NPU backend otherwise"),
    C("- nvidia-ml-py>=12.535.77", "torch_cuda_api", X, False, None, "NVML bindings, useless on Ascend"),
    C("=- gpustat", "torch_cuda_api", X, False, None, "NVML-based monitor, useless on Ascend"),
])

E("nf_run_auto", "experiments/long_horizon/run_auto.py", "explicit_replacement",
  "Nixtla/neuralforecast experiments/long_horizon (AutoNHITS/AutoTFT/AutoPatchTST with ray tune)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.device_count()"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "device selection ignored on NPU (ray also reads ASCEND_RT_VISIBLE_DEVICES to find NPUs)"),
    C("num_gpus=torch.cuda.device_count(),", "distributed_framework", R, True,
      'resources={"NPU": torch.npu.device_count()},',
      "ray gets 0 GPUs, so trials that request accelerators never start"),
    C('"precision": tune.choice(["bf16-mixed"]),', "amp", R, False,
      '"precision": tune.choice(["32-true"]),',
      "Lightning's mixed-precision plugin autocasts for the accelerator it knows; with a custom NPU accelerator "
      "the autocast device is unconfirmed"),
])

# ---------------------------------------------------------------------------------------------- Darts
E("darts_tfm", "darts/models/forecasting/torch_forecasting_model.py", "device_branch_or_abstraction",
  "unit8co/darts models/forecasting/torch_forecasting_model.py (trainer set-up, precision from series dtype)", [
    C('precision = "64-true"', "unsupported_op_workaround", R, True,
      'precision = "32-true"  # NPU: fp64 training unsupported; series are cast to float32',
      "darts series are float64 by default, so models train with Lightning '64-true' (model.double()); Ascend lists "
      "nn.LSTM (RNNModel/BlockRNN/TFT) as fp32-only and transfer_to_npu maps DoubleTensor to float"),
])

E("darts_utils_torch", "darts/utils/torch.py", "explicit_replacement",
  "unit8co/darts utils/torch.py (random_method decorator with torch.random.fork_rng)", [
    C("with fork_rng():", "device_type", R, False, 'with fork_rng(device_type="npu"):',
      "fork_rng saves/restores CUDA generators by default; on NPU only the CPU state is restored, so each "
      "decorated call leaves the NPU generator re-seeded (reproducibility only; msFmkTransplt maps fork_rng to "
      "torch_npu.npu.random.fork_rng)"),
])

E("darts_rnn_model", "darts/models/forecasting/rnn_model.py", "explicit_replacement",
  "unit8co/darts models/forecasting/rnn_model.py (getattr(nn, 'RNN' / 'GRU' / 'LSTM'))", [
    C("self.rnn = getattr(nn, name)(", "unsupported_op_workaround", R, True,
      'self.rnn = getattr(nn, "LSTM" if name == "RNN" else name)(  # NPU: nn.RNN unsupported',
      "default model='RNN' builds nn.RNN, which Ascend marks unsupported (no rnn_tanh kernel); GRU/LSTM are listed"),
    C("self.input_size, self.hidden_dim, self.num_layers, batch_first=True, dropout=self.dropout", "unsupported_op_workaround",
      R, True, "self.input_size, self.hidden_dim, self.num_layers, batch_first=True, dropout=0.0 if name == 'GRU' else self.dropout",
      "nn.GRU's dropout argument is marked unsupported on Ascend"),
])

E("darts_tft_example", "examples/tft_electricity.py", "explicit_replacement",
  "unit8co/darts TFT electricity example (pl_trainer_kwargs on GPU, load_from_checkpoint map_location)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.* below"),
    C('series = [s.resample("h") for s in series]', "unsupported_op_workaround", R, False,
      'series = [s.resample("h").astype(np.float32) for s in series]',
      "alternative to patching darts: float32 series train with '32-true' (TFT's LSTM is fp32-only on Ascend)"),
    C("if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "the NPU host silently trains on the CPU"),
    C('"accelerator": "gpu",', "device_type", R, True, '"accelerator": NPUAccelerator(),', LIGHTNING_NPU),
    C('map_location="cuda:0"', "device_type", R, True,
      'best_model = TFTModel.load_from_checkpoint(model_name="tft_electricity", best=True, map_location="npu:0")',
      "deserialising to cuda:0 fails without CUDA"),
    C('if pl_trainer_kwargs["accelerator"] == "gpu":', "device_type", R, False,
      'if torch.npu.is_available():', "only the memory printout is skipped"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False, "torch.npu.max_memory_allocated()",
      "only reached inside the branch above"),
])

# ---------------------------------------------------------------------------------------------- GluonTS
E("gluonts_predictor", "src/gluonts/torch/model/predictor.py", "device_branch_or_abstraction",
  "awslabs/gluonts src/gluonts/torch/model/predictor.py (PyTorchPredictor, device='auto')", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\ntry:\n    import torch_npu  # noqa: F401\nexcept ImportError:\n    pass",
      "torch.npu for the branch below"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      'if torch.cuda.is_available():\n            return torch.device("cuda")\n        if hasattr(torch, "npu") and torch.npu.is_available():\n            return torch.device("npu")',
      "device='auto' resolves to the CPU on an NPU host"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = resolve_device("auto")', "deserialised predictors land on the CPU on an NPU host"),
])

E("gluonts_estimator", "src/gluonts/torch/model/estimator.py", "device_branch_or_abstraction",
  "awslabs/gluonts src/gluonts/torch/model/estimator.py (PyTorchLightningEstimator.train_model)", [
    C('"accelerator": "auto",', "device_type", R, True,
      '"accelerator": NPUAccelerator() if hasattr(torch, "npu") and torch.npu.is_available() else "auto",',
      "Lightning's 'auto' chooses among cuda/mps/xla/hpu/cpu, so every GluonTS torch model trains on the CPU "
      "of an NPU host"),
])

E("gluonts_backtest", "examples/backtest_deepar_moirai.py", "explicit_replacement",
  "GluonTS DeepAR vs uni2ts Moirai zero-shot backtest script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "npu device / autocast"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued without CUDA; torch.manual_seed already seeds the NPU generator"),
    C('"accelerator": "gpu",', "device_type", R, True, '"accelerator": NPUAccelerator(),', LIGHTNING_NPU),
    C('"precision": "16-mixed",', "amp", R, False, '"precision": "32-true",',
      "unconfirmed which device Lightning's mixed-precision plugin autocasts with a custom accelerator; DeepAR's "
      "nn.LSTM is fp32-only on Ascend, so fp16 autocast of the LSTM would not be supported either"),
    C('return model.create_predictor(batch_size=args.batch_size, device="cuda")', "device_type", R, True,
      'return model.create_predictor(batch_size=args.batch_size, device="npu")', "fails without CUDA"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast does not apply to NPU tensors: Moirai runs in fp32 silently"),
])

# ---------------------------------------------------------------------------------------------- Time-MoE
E("timemoe_modeling", "time_moe/models/modeling_time_moe.py", "device_branch_or_abstraction",
  "Time-MoE/Time-MoE time_moe/models/modeling_time_moe.py (eager + flash_attention_2 attention, sparse experts)", [
    C("=import torch", "import_torch_npu", A, False,
      "import torch\ntry:\n    import torch_npu\nexcept ImportError:\n    torch_npu = None",
      "only needed for the optional NPU attention / norm branches"),
    C("hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", "npu_fused_op", R, False,
      "return torch_npu.npu_rms_norm(hidden_states.to(input_dtype), self.weight, self.variance_epsilon)[0]",
      "performance only"),
    C("target_dtype = torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else torch.bfloat16", "amp", R, False,
      'target_dtype = torch.get_autocast_dtype("npu") if torch.is_autocast_enabled("npu") else torch.bfloat16',
      "only on the flash-attention path; reads the CUDA autocast state"),
    C("attn_unpad = flash_attn_varlen_func(", "attention_kernel", B, False,
      'attn_unpad = torch_npu.npu_fusion_attention(query_unpad, key_unpad, value_unpad, self.num_heads, "TND", '
      "actual_seq_qlen=cu_seqlens_q[1:].tolist(), actual_seq_kvlen=cu_seqlens_k[1:].tolist(), "
      "keep_prob=1 - dropout_rate, sparse_mode=3, atten_mask=causal_mask)[0]",
      "flash-attn cannot be installed on NPU; the import is guarded and 'eager' works, so this is the fast path only"),
    C("attn_output = flash_attn_func(query_states, key_states, value_states, dropout_rate,", "attention_kernel", B, False,
      'attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, "BSND", '
      "keep_prob=1 - dropout_rate, scale=1 / math.sqrt(self.head_dim), sparse_mode=3, atten_mask=causal_mask)[0]",
      "fast path only (see above)"),
])

E("timemoe_run_eval", "run_eval.py", "explicit_replacement",
  "Time-MoE/Time-MoE run_eval.py (torchrun evaluation, setup_nccl, flash_attention_2)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "hccl + npu device map"),
    C('dist.init_process_group("nccl"', "dist_backend", R, True,
      'dist.init_process_group("hccl", init_method="tcp://{}:{}".format(master_addr, master_port), rank=rank,',
      "NCCL is unavailable on Ascend"),
    C('=attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="eager",',
      "flash-attn is not installable on NPU: transformers raises at from_pretrained; Time-MoE has no sdpa path"),
    C('attn_implementation="flash_attention_2",  # remote-code fallback', "attention_kernel", R, True,
      'attn_implementation="eager",  # remote-code fallback',
      "the except branch retries with flash_attention_2 and fails the same way"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "NPU host falls through to single-process CPU evaluation"),
    C('device = f"cuda:{local_rank}"', "device_type", R, True, 'device = f"npu:{local_rank}"', "device map"),
    C("if torch.cuda.is_available() and dist.is_initialized():", "device_type", R, False,
      "if dist.is_initialized():",
      "without the sampler every rank evaluates the full set; the summed metrics are unchanged, only work is duplicated"),
])

E("timemoe_dist_run", "torch_dist_run.py", "explicit_replacement",
  "Time-MoE/Time-MoE torch_dist_run.py (torchrun launcher counting GPUs, NCCL env defaults)", [
    C('visible = os.getenv("CUDA_VISIBLE_DEVICES")', "env_var", R, False,
      'visible = os.getenv("ASCEND_RT_VISIBLE_DEVICES")',
      "unset on an NPU host, so the count falls through to device_count()"),
    C('out = subprocess.check_output(["nvidia-smi", "--list-gpus"], stderr=subprocess.DEVNULL)', "torch_cuda_api", R, False,
      'out = subprocess.check_output(["npu-smi", "info", "-l"], stderr=subprocess.DEVNULL)',
      "missing binary is caught and falls through (the parsing below would change with it)"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.device_count()"),
    C("return torch.cuda.device_count()", "torch_cuda_api", R, True, "return torch.npu.device_count()",
      "returns 0 on an NPU host, so the launcher raises 'No GPU found'"),
    C('os.environ.setdefault("NCCL_DEBUG", "WARN")', "env_var", X, False, None, "no HCCL equivalent needed"),
    C('os.environ.setdefault("NCCL_IB_DISABLE", "0")', "env_var", X, False, None, "NCCL-only"),
    C('os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")', "env_var", R, False,
      'os.environ.setdefault("HCCL_SOCKET_IFNAME", "eth0")',
      "HCCL picks the root NIC itself; matters only on multi-NIC hosts"),
    C('os.environ.setdefault("NCCL_IB_TIMEOUT", "22")', "env_var", X, False, None, "NCCL-only"),
    C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", R, False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")', "torch_npu watchdog equivalent"),
])

E("timemoe_requirements", "requirements.txt", "explicit_replacement",
  "Time-MoE-style requirements.txt (cu121 index, flash-attn, deepspeed)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.4.1+cu121", "torch_cuda_api", R, True, "torch==2.4.0",
      "CUDA local-version wheel; torch_npu 2.4.0.post4 pairs with torch 2.4.0"),
    C("transformers==4.40.1", "import_torch_npu", A, True, "torch-npu==2.4.0.post4", "NPU backend"),
    C("=flash-attn==2.6.3", "attention_kernel", X, True, None,
      "building flash-attn needs nvcc/CUDA, so pip install -r fails on an NPU host"),
    C("triton==3.0.0", "torch_cuda_api", X, False, None,
      "nothing imports triton directly; the NVIDIA wheel is unused on Ascend (triton-ascend is the NPU build)"),
    C("nvidia-ml-py==12.555.43", "torch_cuda_api", X, False, None, "NVML bindings, useless on Ascend"),
])

# ---------------------------------------------------------------------------------------------- MOMENT
E("moment_finetune", "tutorials/finetune_demo/forecasting_finetune.py", "transfer_to_npu",
  "moment-timeseries-foundation-model/moment forecasting fine-tuning tutorial (AMP, DataParallel, NVTX)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu  # noqa: F401",
      "transfer_to_npu redirects the torch.cuda / .cuda / autocast calls of this script"),
    C("use_bf16 = torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, True,
      "use_bf16 = True  # Atlas A2 supports bf16; NPU properties have no major/minor",
      "get_device_properties on NPU reports name/total_memory/cores only, so .major fails"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", X, False, None,
      "removed together with DataParallel below"),
    C("model = nn.DataParallel(model)", "distributed_framework", X, True, None,
      "nn.DataParallel is unsupported on Ascend; with transfer_to_npu device_count() > 1 takes this branch "
      "(use DDP via torchrun for multi-card)"),
    C('torch.cuda.nvtx.range_push(f"step{step}")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start(f"step{step}")',
      "torch.cuda.nvtx is not redirected by transfer_to_npu and needs a CUDA build (only with --nvtx)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "as above"),
])

# ---------------------------------------------------------------------------------------------- Timer / OpenLTM
E("timer_exp_forecast", "exp/exp_forecast.py", "explicit_replacement",
  "thuml/OpenLTM (Timer / Timer-XL) exp/exp_forecast.py (torchrun DDP, DataParallel, AMP, int device ids)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu  # noqa: F401", "torch.npu.* and hccl"),
    C("gpus = torch.cuda.device_count()", "torch_cuda_api", R, False, "gpus = torch.npu.device_count()",
      "printed only"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method=f"tcp://{ip}:{port}", world_size=hosts, rank=rank)',
      "NCCL is unavailable on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "fails without CUDA"),
    C('self.device = torch.device("cuda:{}".format(self.args.local_rank))', "device_type", R, True,
      'self.device = torch.device("npu:{}".format(self.args.local_rank))', "DDP device"),
    C("=self.device = self.args.gpu", "device_type", R, True, 'self.device = f"npu:{self.args.gpu}"',
      "args.gpu is an int: .to(0) means cuda:0 and fails without CUDA"),
    C("model = DDP(model.cuda(), device_ids=[self.args.local_rank])", "tensor_to_device", R, True,
      "model = DDP(model.npu(), device_ids=[self.args.local_rank])", ".cuda() fails without CUDA"),
    C("model = DataParallel(model, device_ids=self.args.device_ids).to(self.device)", "distributed_framework", R, True,
      "model = model.to(self.device)  # NPU: DataParallel unsupported, use --ddp",
      "nn.DataParallel is unsupported on Ascend"),
    C("self.device = self.args.gpu  # single-device run", "device_type", R, True,
      'self.device = f"npu:{self.args.gpu}"  # single-device run', "int device index means CUDA"),
    C("model.load_state_dict(torch.load(self.args.pretrain_model_path))", "device_type", R, True,
      'model.load_state_dict(torch.load(self.args.pretrain_model_path, map_location="cpu"))',
      "the released Timer checkpoints were saved from GPU tensors; without map_location they deserialise to CUDA"),
    C("with torch.cuda.amp.autocast():  # validation", "amp", R, True,
      "with torch.npu.amp.autocast():  # validation", "CUDA autocast inactive for NPU tensors"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "the CUDA GradScaler disables itself without CUDA: fp16 training without loss scaling"),
    C("with torch.cuda.amp.autocast():  # training", "amp", R, True, "with torch.npu.amp.autocast():  # training",
      "CUDA autocast inactive for NPU tensors"),
    C('print(f"\\tmax mem: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")', "torch_cuda_api", R, False,
      'print(f"\\tmax mem: {torch.npu.max_memory_allocated() / 2**30:.1f} GiB")', "logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
    C('map_location="cuda:0"', "device_type", R, True,
      'checkpoint = torch.load(os.path.join(self.args.checkpoints, setting, best_model_path), map_location=self.device)',
      "deserialising to cuda:0 fails without CUDA"),
])
