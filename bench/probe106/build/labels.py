"""Labels for probe106 (quant-finance deep learning: Qlib, FinRL, pytorch-forecasting, research repos).

Each E(...) names one upstream file; each C(...) one line a careful porter edits for Ascend NPU (torch_npu).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


AUTOLOAD = "needed before any 'npu' device use on torch_npu < 2.5.1; autoloaded afterwards but still recommended"

# ---------------------------------------------------------------------------------------------------------------
E("qlib_lstm", "qlib/contrib/model/pytorch_lstm.py", "device_branch_or_abstraction",
  "microsoft/qlib contrib LSTM model (GPU index -> torch.device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "model module is loaded by qrun, there is no user entry script to import torch_npu in; " + AUTOLOAD),
    C('self.device = torch.device("cuda:%d" % (GPU)', "device_type", "replace", True,
      'self.device = torch.device("npu:%d" % (GPU) if torch.npu.is_available() and GPU >= 0 else "cpu")',
      "torch.cuda.is_available() is False on an Ascend host, so training silently falls back to CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "CUDA never initialised on NPU host -> silent no-op; NPU cache is not released (memory hygiene only)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_gats", "qlib/contrib/model/pytorch_gats_ts.py", "device_branch_or_abstraction",
  "microsoft/qlib contrib GATs (time-series dataset variant, pretrained GRU/LSTM base model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "loaded by qrun; " + AUTOLOAD),
    C('self.device = torch.device("cuda:%d" % (GPU)', "device_type", "replace", True,
      'self.device = torch.device("npu:%d" % (GPU) if torch.npu.is_available() and GPU >= 0 else "cpu")',
      "CUDA check is False on Ascend -> silent CPU training; everything else follows self.device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; memory hygiene only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_tra", "qlib/contrib/model/pytorch_tra.py", "device_branch_or_abstraction",
  "microsoft/qlib contrib TRA (Temporal Routing Adaptor) with module-level device selection", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "loaded by qrun; " + AUTOLOAD),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "module-level device drives every .to(device) below; CUDA check False on Ascend -> silent CPU. "
      "(MTSDatasetH in qlib/contrib/data/dataset.py carries the same line and must match)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_hist", "qlib/contrib/model/pytorch_hist.py", "device_branch_or_abstraction",
  "microsoft/qlib contrib HIST (concept-oriented shared information) model", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "loaded by qrun; " + AUTOLOAD),
    C('self.device = torch.device("cuda:%d" % (GPU)', "device_type", "replace", True,
      'self.device = torch.device("npu:%d" % (GPU) if torch.npu.is_available() and GPU >= 0 else "cpu")',
      "CUDA check False on Ascend -> silent CPU"),
    C("pretrained_model.load_state_dict(torch.load(self.model_path))", "tensor_to_device", "replace", True,
      "pretrained_model.load_state_dict(torch.load(self.model_path, map_location=self.device))",
      "the benchmark's pretrained GRU/LSTM weights were saved from CUDA tensors; without map_location "
      "torch.load tries to restore them onto a CUDA device and raises on an NPU host"),
    C("device = torch.device(torch.get_device(x))", "device_type", "replace", False, "device = x.device",
      "torch.get_device returns a bare ordinal and torch.device(int) historically meant a CUDA ordinal; "
      "newer torch maps it to the current accelerator - unconfirmed for the torch_npu-paired versions"),
])

# ---------------------------------------------------------------------------------------------------------------
# Deliberately change-free: `GPU: 0` is only an ordinal that the (ported) model class turns into "npu:0".
E("qlib_gats_yaml", "examples/benchmarks/GATs/workflow_config_gats_Alpha158.yaml", "device_branch_or_abstraction",
  "microsoft/qlib benchmark workflow YAML for GATs (qrun config with `GPU: 0`)", [])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_bench_sh", "examples/benchmarks/run_pytorch_benchmarks.sh", "explicit_replacement",
  "microsoft/qlib examples/benchmarks batch runner (qrun per workflow YAML, one card per copy)", [
    C("set -euo pipefail", "env_var", "npu_only_addition", True,
      "set +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u",
      "CANN libraries must be on the path before torch_npu loads; set_env.sh touches unset variables, "
      "so it has to run with nounset relaxed"),
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}",
      "ignored by the Ascend runtime: every copy would land on npu:0 because the YAMLs keep GPU: 0"),
    C("nvidia-smi --query-gpu=", "torch_cuda_api", "replace", True, "npu-smi info",
      "nvidia-smi does not exist on an Ascend host and `set -e` aborts the whole run on exit 127"),
    C("nvidia-smi dmon", "torch_cuda_api", "replace", False,
      'npu-smi info watch -i ${GPU_ID} > "${LOG_DIR}/npu_util.log" 2>&1 &',
      "background monitor only; its failure does not stop the script (npu-smi watch syntax unconfirmed)"),
    C('print("torch", torch.__version__, "| cuda"', "torch_cuda_api", "replace", False,
      'print("torch", torch.__version__, "| npu visible", torch.npu.device_count())',
      "diagnostic print: torch.version.cuda is None and the CUDA count is 0 on NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_hist_req", "examples/benchmarks/HIST/requirements.txt", "explicit_replacement",
  "microsoft/qlib per-benchmark requirements.txt pinning a CUDA torch build", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu is installed over the CPU torch wheel (x86) / plain PyPI torch (aarch64). "
      "Once the pin below changes this index simply stops matching, so not fatal by itself"),
    C("torch==1.12.1+cu113", "device_type", "replace", True, "torch==2.1.0",
      "no torch_npu release pairs with torch 1.12.1 and the +cu113 local build is CUDA-only; "
      "torch_npu wheels require the exact torch x.y.z they were built for"),
    C("=requests", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the NPU backend itself (pairs with torch 2.1.0, CANN 8.1.RC1); appended because the torch line "
      "itself is already being replaced"),
])

# ---------------------------------------------------------------------------------------------------------------
E("qlib_daily_infer", "examples/online_srv/daily_inference.py", "device_branch_or_abstraction",
  "Qlib-based daily signal + backtest script reloading a qrun-trained model from the MLflow recorder", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "queued no-op without CUDA; torch.manual_seed above already seeds the registered custom device"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cuDNN flag has no effect on NPU, so the 'identical signals on re-run' intent is silently lost"),
    C("if gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu >= 0 and torch.npu.is_available():", "False on Ascend -> inference silently on CPU"),
    C("if gpu >= torch.cuda.device_count():", "torch_cuda_api", "replace", True,
      "if gpu >= torch.npu.device_count():",
      "CUDA count is 0 on NPU: every requested card would be remapped to 0"),
    C('return torch.device(f"cuda:{gpu}")', "device_type", "replace", True, 'return torch.device(f"npu:{gpu}")',
      "model.device and every module are moved to this device"),
    C('on_gpu = device.type == "cuda"', "device_type", "replace", False, 'on_gpu = device.type == "npu"',
      "guard only skips timing sync / memory logging when left as is"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "raises once the guard admits NPU devices"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "CUDA lazy init raises on an NPU host"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(device) / 1024**2",
      "returns 0 silently when CUDA is not initialised; logging only"),
    C('=if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "guards only the cache release below"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; memory hygiene at exit only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("finrl_sb3", "finrl/agents/stablebaselines3/models.py", "device_branch_or_abstraction",
  "AI4Finance FinRL DRLAgent / DRLEnsembleAgent over stable-baselines3 (fork with explicit device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "DEVICE is computed with torch.npu at import time, before any entry script code runs; " + AUTOLOAD),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "SB3's get_device() maps an unavailable 'cuda' to CPU without error, so agents silently train on CPU"),
    C("model = MODELS[model_name].load(cwd)", "device_type", "replace", False,
      "model = MODELS[model_name].load(cwd, device=DEVICE)",
      "SB3 load(device='auto') resolves to CPU on an Ascend host; small MLP policy inference, perf only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("erl_agentbase", "elegantrl/agents/AgentBase.py", "device_branch_or_abstraction",
  "AI4Finance ElegantRL AgentBase (gpu_id -> torch.device, optional AMP GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module; the launcher (run.py) imports torch_npu first, so this is belt-and-braces only"),
    C('self.device = torch.device(f"cuda:{gpu_id}" if (torch.cuda.is_available()', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{gpu_id}" if (torch.npu.is_available() and (gpu_id >= 0)) else "cpu")',
      "CUDA check False on Ascend -> learner silently on CPU"),
    C("self.amp_scaler = torch.cuda.amp.GradScaler(enabled=self.if_use_amp)", "amp", "replace", False,
      "self.amp_scaler = torch.npu.amp.GradScaler(enabled=self.if_use_amp)",
      "off by default; when enabled the CUDA scaler disables itself with a warning on NPU (fp32 fallback, no error)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("erl_run", "elegantrl/train/run.py", "device_branch_or_abstraction",
  "AI4Finance ElegantRL train/run.py (single process, learner/worker/evaluator processes, multi-GPU learners)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "training entry module; forkserver children re-import it, so the backend is registered in every process; "
      + AUTOLOAD),
    C("if gpu_id >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu_id >= 0 and torch.npu.is_available():",
      "False on Ascend, so set_device is skipped and every worker also opens a context on card 0"),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_id)",
      "CUDA lazy init raises on an NPU host once the guard above admits NPUs"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None,
      "cuDNN autotuner flag; no effect on NPU"),
    C("if agent.device.type == 'cuda':", "device_type", "replace", False, "if agent.device.type == 'npu':",
      "guards a log line only"),
    C("print(f'| GPU max memory: {torch.cuda.max_memory_allocated", "torch_cuda_api", "replace", False,
      "print(f'| NPU max memory: {torch.npu.max_memory_allocated(agent.device) / 2 ** 30:.2f} GB', flush=True)",
      "would report 0 GB on NPU; logging only"),
    C("assert len(learner_gpu_ids) <= torch.cuda.device_count(), \\", "torch_cuda_api", "replace", True,
      "assert len(learner_gpu_ids) <= torch.npu.device_count(), \\",
      "CUDA device count is 0 on an Ascend host, so the multi-learner path always aborts"),
    C('f"| need {len(learner_gpu_ids)} GPUs for the learners, found {torch.cuda.device_count()}"',
      "torch_cuda_api", "replace", False,
      'f"| need {len(learner_gpu_ids)} NPUs for the learners, found {torch.npu.device_count()}"',
      "assert message only"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(self.learner_gpu_id)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(self.learner_gpu_id)",
      "CUDA mask ignored on Ascend -> every learner runs on npu:0. Unconfirmed whether the Ascend runtime still "
      "reads the variable this late in the child; torch.npu.set_device(real id) is the safer port"),
])

# ---------------------------------------------------------------------------------------------------------------
E("erl_vecenv", "elegantrl/envs/StockTradingEnv.py", "device_branch_or_abstraction",
  "AI4Finance ElegantRL China A-share StockTradingEnv + GPU-vectorised StockTradingVecEnv", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module is also run directly (__main__ self-test); " + AUTOLOAD),
    C('self.device = torch.device(f"cuda:{gpu_id}" if (torch.cuda.is_available()', "device_type", "replace", True,
      'self.device = torch.device(f"npu:{gpu_id}" if (torch.npu.is_available() and (gpu_id >= 0)) else "cpu")',
      "all market state tensors follow self.device; CUDA check False -> thousands of envs silently on CPU"),
    C("if env.device.type == 'cuda':", "device_type", "replace", False, "if env.device.type == 'npu':",
      "guards the timing sync only; without it the steps/s figure measures launch time, not compute"),
    C("torch.cuda.synchronize(env.device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(env.device)",
      "raises on an NPU host once the guard admits NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("finrl_papertrade", "examples/FinRL_PaperTrading_Demo.py", "device_branch_or_abstraction",
  "AI4Finance FinRL paper-trading demo (ElegantRL PPO train/test, Alpaca live loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("if gpu_id >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if gpu_id >= 0 and torch.npu.is_available():", "False on Ascend -> live policy silently on CPU"),
    C("torch.cuda.get_device_name(gpu_id)", "torch_cuda_api", "replace", True,
      'print(f"| using NPU {gpu_id}: {torch.npu.get_device_name(gpu_id)}")',
      "CUDA lazy init raises on an NPU host once the guard admits NPU"),
    C('return torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True, 'return torch.device(f"npu:{gpu_id}")',
      "actor weights (map_location) and observation tensors follow this device"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards only the cache release after training"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU; memory hygiene only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("finrl_docker", "docker/Dockerfile", "explicit_replacement",
  "AI4Finance FinRL GPU Dockerfile (nvidia/cuda base, cu118 torch wheel)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "no CANN runtime in the CUDA image, so torch_npu cannot load (Ascend base image tag is illustrative)"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "read only by the NVIDIA container runtime; on Ascend the chips are mounted by Ascend Docker Runtime "
      "(ASCEND_VISIBLE_DEVICES) or --device /dev/davinciN at `docker run` time"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA-runtime-only setting, ignored elsewhere"),
    C("RUN pip install --no-cache-dir torch==2.0.1 torchvision==0.15.2 --index-url", "device_type", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install --no-cache-dir torch-npu==2.1.0.post12",
      "CUDA wheel; torch_npu installs over the CPU torch build and needs the exact paired torch version"),
    C("=RUN pip install --no-cache-dir -e .", "env_var", "npu_only_addition", True,
      'ENTRYPOINT ["/bin/bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec \\"$@\\"", "--"]',
      "CMD runs python non-interactively, so the CANN environment must be sourced by the entrypoint"),
    C("""RUN python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"""",
      "import_torch_npu", "replace", False,
      """RUN python -c "import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"""",
      "build-time sanity print only (torch.version.cuda is None, not an error)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("finrl_envyml", "environment.yml", "explicit_replacement",
  "AI4Finance FinRL conda environment.yml with CUDA torch wheels in the pip section", [
    C("=- nvidia", "device_type", "removal", False, None,
      "NVIDIA conda channel only serves CUDA runtime packages"),
    C("- cudatoolkit=11.8", "device_type", "removal", False, None,
      "CUDA runtime libraries, unused on an Ascend host (CANN is installed outside conda)"),
    C("- --extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "- --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu sits on the CPU torch build (x86). Not fatal once the pins below change"),
    C("- torch==2.0.1+cu118", "device_type", "replace", True, "- torch==2.1.0",
      "CUDA local build; torch_npu needs the exact paired torch version"),
    C("- torchvision==0.15.2+cu118", "device_type", "replace", True, "- torchvision==0.16.0",
      "the +cu118 torchvision pins torch 2.0.1+cu118 and conflicts with the torch pin above"),
    C("- tensorboard>=2.12", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "the NPU backend (pairs with torch 2.1.0); placed after the torch block"),
    C("- nvidia-ml-py>=12.535", "device_type", "removal", False, None,
      "pynvml has no NPU counterpart; installs fine but nvmlInit() fails on Ascend - callers must move to "
      "npu-smi / torch.npu.utilization"),
])

LIGHTNING_NPU = ("Lightning ships no Ascend accelerator; a custom Accelerator subclass / third-party NPU plugin "
                 "is needed (not covered by the knowledge base)")

# ---------------------------------------------------------------------------------------------------------------
E("tft_stock", "examples/stock_returns_tft.py", "explicit_replacement",
  "pytorch-forecasting TemporalFusionTransformer tutorial adapted to daily stock returns (Lightning trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "unchanged it returns '32-true' on NPU: full-precision training, slower but correct"),
    C('return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"', "device_capability_check", "replace",
      True, 'return "bf16-mixed" if torch.npu.is_bf16_supported() else "16-mixed"',
      "torch.cuda.is_bf16_supported() queries the current CUDA device and raises without CUDA"),
    C("train=True, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True", "pin_memory",
      "replace", False,
      'train=True, batch_size=args.batch_size, num_workers=args.num_workers, pin_memory=True, pin_memory_device="npu"',
      "CUDA-targeted pinning is skipped without CUDA (perf only); NPU pinning via pin_memory_device unconfirmed"),
    C("train=False, batch_size=args.batch_size * 4, num_workers=args.num_workers, pin_memory=True", "pin_memory",
      "replace", False,
      'train=False, batch_size=args.batch_size * 4, num_workers=args.num_workers, pin_memory=True, pin_memory_device="npu"',
      "same as the training loader; perf only, unconfirmed"),
    C('trainer_kwargs=dict(limit_train_batches=100, accelerator="gpu", devices=1),', "device_type", "replace", True,
      'trainer_kwargs=dict(limit_train_batches=100, accelerator=NPUAccelerator(), devices=1),',
      "Lightning raises when accelerator='gpu' finds no CUDA device. " + LIGHTNING_NPU),
    C('lr_trainer = pl.Trainer(accelerator="gpu", devices=1', "device_type", "replace", True,
      'lr_trainer = pl.Trainer(accelerator=NPUAccelerator(), devices=1, gradient_clip_val=hp["gradient_clip_val"])',
      "same failure in the LR-finder trainer. " + LIGHTNING_NPU),
    C('=accelerator="gpu",', "device_type", "replace", True, "accelerator=NPUAccelerator(),",
      "main trainer. " + LIGHTNING_NPU),
    C('strategy="ddp" if len(args.gpus) > 1 else "auto",', "dist_backend", "replace", True,
      'strategy=DDPStrategy(process_group_backend="hccl") if len(args.gpus) > 1 else "auto",',
      "Lightning derives the DDP backend from the device type: nccl for cuda, otherwise gloo, which cannot "
      "reduce NPU tensors; HCCL has to be named explicitly"),
    C('val_dataloader, return_y=True, trainer_kwargs=dict(accelerator="gpu", devices=1)', "device_type", "replace",
      True, 'val_dataloader, return_y=True, trainer_kwargs=dict(accelerator=NPUAccelerator(), devices=1)',
      "prediction trainer raises the same way. " + LIGHTNING_NPU),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "guards a log line"),
    C('print(f"peak GPU memory: {torch.cuda.max_memory_allocated()', "torch_cuda_api", "replace", False,
      'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', "logging only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("tft_cli_yaml", "configs/tft_csi300_ddp.yaml", "explicit_replacement",
  "LightningCLI YAML for a pytorch-forecasting TFT run with DDP on a 4-GPU node", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: stockcast.accelerators.NPUAccelerator",
      "'gpu' resolves to CUDA and raises without CUDA devices. " + LIGHTNING_NPU),
    C("process_group_backend: nccl", "dist_backend", "replace", True, "process_group_backend: hccl",
      "NCCL is unavailable on Ascend; HCCL is the collective backend"),
    C("precision: 16-mixed", "amp", "replace", False, "precision: bf16-mixed",
      "Lightning builds its autocast device from the accelerator; with a custom NPU accelerator fp16 autocast "
      "may silently stay off - unconfirmed, perf only"),
    C("benchmark: true", "torch_cuda_api", "removal", False, None,
      "Trainer(benchmark=True) only toggles torch.backends.cudnn.benchmark, a no-op on NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("stockformer_ddp", "train_ddp.py", "explicit_replacement",
  "research-repo torchrun/DDP trainer for a cross-sectional stock Transformer (IC loss, AMP, TensorBoard)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C('os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", False,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL variable is ignored on Ascend; the HCCL watchdog equivalent already defaults to 1"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "CUDA lazy init raises on an NPU host"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL does not exist on Ascend"),
    C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
      "older torch releases accept device_ids only for the NCCL backend - unconfirmed for the torch_npu-paired "
      "versions"),
    C("torch.cuda.manual_seed_all(s)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(s)",
      "queued no-op without CUDA; torch.manual_seed already seeds the custom device"),
    C('return torch.autocast(device_type="cuda", dtype=amp_dtype or torch.bfloat16', "amp", "replace", False,
      'return torch.autocast(device_type="npu", dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None)',
      "autocast('cuda') without CUDA warns and disables itself: training silently in fp32 (perf only)"),
    C("=pin_memory=True, **common)", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu", **common)',
      "CUDA-targeted pinning skipped without CUDA; perf only, NPU pinning path unconfirmed"),
    C("sampler=valid_sampler, pin_memory=True, **common)", "pin_memory", "replace", False,
      'valid_loader = DataLoader(valid_set, batch_size=1, sampler=valid_sampler, pin_memory=True, '
      'pin_memory_device="npu", **common)',
      "same as the training loader"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2**30", "reports 0 on NPU; logging only"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises on an NPU host"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "model and every batch follow this device"),
    C("torch.cuda.get_device_name(local_rank)", "torch_cuda_api", "replace", True,
      'logger.info(f"world_size={world_size}, device={torch.npu.get_device_name(local_rank)}")',
      "raises on an NPU host (rank 0 only, but it kills the job)"),
    C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "removal", False, None,
      "cuDNN flag, no effect on NPU (the matmul TF32 flag above is listed as supported and stays)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "only active for --amp fp16; the CUDA scaler disables itself on NPU, so fp16 would run unscaled"),
    C('ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")', "tensor_to_device", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")',
      "mapping onto a CUDA device raises on an NPU host"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA"),
])

# ---------------------------------------------------------------------------------------------------------------
E("stockformer_model", "models/stockformer.py", "explicit_replacement",
  "research-repo stock Transformer (MASTER-style market gate, RoPE temporal attention, optional flash-attn)", [
    C("from flash_attn import flash_attn_func", "attention_kernel", "replace", False, "import torch_npu",
      "flash-attn cannot be installed on Ascend; the guarded import just fails and the SDPA path is used, "
      "so swapping in torch_npu is only needed for the fused-attention fast path below"),
    C("if self.use_flash and HAS_FLASH_ATTN and x.is_cuda", "attention_kernel", "replace", False,
      "if self.use_flash and x.is_npu and x.dtype in (torch.float16, torch.bfloat16):",
      "x.is_cuda is False on NPU, so unchanged the branch is skipped (correct, just not the fused kernel)"),
    C("out = flash_attn_func(q, k, v, dropout_p=drop", "attention_kernel", "replace", False,
      'out = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, "BSND", atten_mask=self.causal_mask, '
      "scale=1.0 / math.sqrt(self.head_dim), keep_prob=1.0 - drop, sparse_mode=3)[0]",
      "perf only: NPU training flash attention, causal via a 2048x2048 upper-triangular bool mask + sparse_mode"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", "removal", False, None,
      "sdp_kernel is on the unsupported list for NPU; it only toggles CUDA SDPA backend flags - drop the "
      "context manager and keep the SDPA call (whether it raises on NPU is unconfirmed)"),
    C("return (x.float() * norm).type_as(x) * self.weight", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "optional fused RMSNorm; hand-written version is correct on NPU"),
])

# ---------------------------------------------------------------------------------------------------------------
E("stockformer_launch", "scripts/run_ddp.sh", "explicit_replacement",
  "research-repo multi-node torchrun launcher with NCCL/InfiniBand tuning variables", [
    C("=shift || true", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (LD_LIBRARY_PATH etc.) must be set before torchrun imports torch_npu"),
    C("GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi -L | wc -l)}", "torch_cuda_api", "replace", True,
      'GPUS_PER_NODE=${GPUS_PER_NODE:-$(npu-smi info -l | grep -c "NPU ID")}',
      "no nvidia-smi on Ascend: the count becomes 0 and torchrun refuses --nproc_per_node=0"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "a user-supplied card mask is silently ignored by the Ascend runtime"),
    C("export NCCL_DEBUG=", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}",
      "NCCL log level, ignored on Ascend; closest knob is the CANN global log level"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-bond0}",
      "ignored on Ascend; HCCL picks the root-info NIC by its own order unless HCCL_SOCKET_IFNAME/HCCL_IF_IP "
      "is set - matters only if that default NIC cannot reach the master"),
    C("export NCCL_IB_DISABLE=", "env_var", "removal", False, None,
      "InfiniBand switch; HCCL traffic goes over the NPUs' own RoCE ports, no equivalent"),
    C("export NCCL_IB_HCA=", "env_var", "removal", False, None, "Mellanox HCA selection, meaningless for HCCL"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only RoCE GID setting"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink P2P policy, no NPU meaning"),
])

# ---------------------------------------------------------------------------------------------------------------
NPU_CALL = "Tensor.cuda() raises on an NPU host"
E("thgnn_train", "train_thgnn.py", "explicit_replacement",
  "research-repo THGNN (temporal + heterogeneous graph) stock model with PyG GATConv and torch_scatter", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("from torch_scatter import scatter_mean", "custom_cuda_extension", "replace", False,
      "from torch_geometric.utils import scatter",
      "torch_scatter is a compiled CPU/CUDA extension with no NPU kernels; NPU tensors would at best hit the "
      "CPU fallback (unconfirmed for extension ops). PyG's pure-torch scatter(mean) uses scatter_add, which has "
      "an NPU kernel"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.device',
      "--device would be ignored and every run would use NPU 0"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "no-op without CUDA; torch.manual_seed already seeds the custom device"),
    C("ind = scatter_mean(h, industry_index, dim=0)[industry_index]", "custom_cuda_extension", "replace", False,
      'ind = scatter(h, industry_index, dim=0, reduce="mean")[industry_index]  # industry context per stock',
      "call site of the extension op above"),
    C('features = g["features"].float().cuda()', "tensor_to_device", "replace", True,
      'features = g["features"].float().npu()  # [N, T, F]', NPU_CALL),
    C('pos_edge_index = g["pos_edge_index"].long().cuda()', "tensor_to_device", "replace", True,
      'pos_edge_index = g["pos_edge_index"].long().npu()', NPU_CALL),
    C('neg_edge_index = g["neg_edge_index"].long().cuda()', "tensor_to_device", "replace", True,
      'neg_edge_index = g["neg_edge_index"].long().npu()', NPU_CALL),
    C('industry_index = g["industry"].long().cuda()', "tensor_to_device", "replace", True,
      'industry_index = g["industry"].long().npu()', NPU_CALL),
    C('label = g["label"].float().cuda()', "tensor_to_device", "replace", True,
      'label = g["label"].float().npu()  # next-day return, cross-sectionally ranked', NPU_CALL),
    C('=g["features"].float().cuda(),', "tensor_to_device", "replace", True, 'g["features"].float().npu(),', NPU_CALL),
    C('=g["pos_edge_index"].long().cuda(),', "tensor_to_device", "replace", True,
      'g["pos_edge_index"].long().npu(),', NPU_CALL),
    C('=g["neg_edge_index"].long().cuda(),', "tensor_to_device", "replace", True,
      'g["neg_edge_index"].long().npu(),', NPU_CALL),
    C('=g["industry"].long().cuda(),', "tensor_to_device", "replace", True, 'g["industry"].long().npu(),', NPU_CALL),
    C("dropout=args.dropout).cuda()", "tensor_to_device", "replace", True,
      "model = THGNN(in_features=in_features, hidden=args.hidden, heads=args.heads, dropout=args.dropout).npu()",
      "Module.cuda() raises on an NPU host"),
])

# ---------------------------------------------------------------------------------------------------------------
E("thgnn_req", "requirements.txt", "explicit_replacement",
  "research-repo requirements for PyG-based stock graph models (CUDA torch + PyG extension wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; harmless once the +cu118 pins are gone"),
    C("-f https://data.pyg.org/whl/torch-2.0.0+cu118.html", "custom_cuda_extension", "replace", False,
      "-f https://data.pyg.org/whl/torch-2.1.0+cpu.html",
      "find-links page for the CUDA builds of the PyG extensions; only used by the pins below"),
    C("torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.1.0",
      "CUDA build; torch_npu needs the exact paired CPU torch build"),
    C("torch_geometric==2.3.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "the NPU backend, pinned to the torch version above"),
    C("torch_scatter==2.1.1+pt20cu118", "custom_cuda_extension", "replace", True, "torch_scatter==2.1.2",
      "CUDA-compiled extension built for torch 2.0 + CUDA 11.8: fails to load next to a CPU torch 2.1; "
      "the CPU build (pt21cpu) still has no NPU kernels"),
    C("torch_sparse==0.6.17+pt20cu118", "custom_cuda_extension", "replace", True, "torch_sparse==0.6.18",
      "same as torch_scatter"),
    C("pyg_lib==0.2.0+pt20cu118", "custom_cuda_extension", "replace", True, "pyg_lib==0.3.1",
      "same as torch_scatter (CUDA-compiled sampling/segment kernels)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("rsr_relational", "train_rsr.py", "explicit_replacement",
  "PyTorch port of Temporal Relational Stock Ranking (RSR, Feng et al.) in 2019-era research style", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("if args.gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.gpu >= 0 and torch.npu.is_available():", "False on Ascend -> USE_GPU False, silent CPU run"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C('torch.set_default_tensor_type("torch.cuda.FloatTensor")', "device_type", "replace", True,
      'torch.set_default_device(f"npu:{args.gpu}")',
      "CUDA tensor type is unavailable on an NPU host; rank_loss relies on torch.ones landing on the device"),
    C("return t.cuda() if self.gpu else t", "tensor_to_device", "replace", True, "return t.npu() if self.gpu else t",
      "Tensor.cuda() raises on an NPU host"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "Module.cuda() raises on an NPU host"),
    C("rel_mask = torch.cuda.FloatTensor(self.rel_mask) if self.gpu", "tensor_to_device", "replace", True,
      'rel_mask = torch.tensor(self.rel_mask, dtype=torch.float32, device="npu") if self.gpu '
      "else torch.FloatTensor(self.rel_mask)",
      "legacy CUDA tensor constructor raises on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on NPU; memory hygiene only"),
])

# ---------------------------------------------------------------------------------------------------------------
E("alphagen_data", "alphagen_qlib/stock_data.py", "explicit_replacement",
  "RL-MLDM/alphagen StockData (qlib price cube on GPU) + batched Pearson/Spearman IC helpers", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the default argument below builds an 'npu' device at import time, before any entry script code "
      "could register the backend (" + AUTOLOAD + ")"),
    C('device: torch.device = torch.device("cuda:0"),', "device_type", "replace", True,
      'device: torch.device = torch.device("npu:0"),',
      "callers rely on the default; torch.tensor(..., device='cuda:0') raises on an NPU host"),
])

# ---------------------------------------------------------------------------------------------------------------
E("alphagen_rl", "scripts/rl.py", "explicit_replacement",
  "RL-MLDM/alphagen scripts/rl.py (MaskablePPO formulaic-alpha mining with a GPU alpha pool)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "no-op without CUDA; torch.manual_seed already seeds the custom device"),
    C("torch.backends.cudnn.deterministic = True", "torch_cuda_api", "replace", False,
      "torch.use_deterministic_algorithms(True)",
      "cuDNN flag has no effect on NPU (reproducibility intent silently lost)"),
    C("self.logger.record('sys/gpu_mem_gb', torch.cuda.memory_allocated() / 2 ** 30)", "torch_cuda_api", "replace",
      False, "self.logger.record('sys/npu_mem_gb', torch.npu.memory_allocated() / 2 ** 30)",
      "would log 0 on NPU"),
    C("return self.model.device.type == 'cuda'", "device_type", "replace", False,
      "return self.model.device.type == 'npu'", "guards the memory log only"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(device)", "CUDA query raises on an NPU host"),
    C("device = torch.device('cuda:0')", "device_type", "replace", True, "device = torch.device('npu:0')",
      "StockData, alpha pool, env and the SB3 policy all take this device; 'cuda:0' tensors cannot be created"),
])

# ---------------------------------------------------------------------------------------------------------------
TRITON_NOTE = ("num_warps / num_stages are CUDA SM scheduling knobs; kernels must be re-tuned for triton-ascend "
               "(its migration guide), exact NPU meaning unconfirmed - perf only")
E("alphaflow_triton", "alphaflow/ops/ts_triton.py", "kernel_rewrite",
  "alpha-factor library rolling-window operators (ts_mean/std, ts_corr) fused in Triton with a torch fallback", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module has a __main__ benchmark; " + AUTOLOAD),
    C('triton.Config({"BLOCK_S": 128}, num_warps=4),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_S": 128}),', TRITON_NOTE),
    C('triton.Config({"BLOCK_S": 256}, num_warps=4),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_S": 256}),', TRITON_NOTE),
    C('triton.Config({"BLOCK_S": 512}, num_warps=8, num_stages=2),', "triton_kernel_tuning", "replace", False,
      'triton.Config({"BLOCK_S": 512}),', TRITON_NOTE),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major = 0  # no SM capability on Ascend: torch.npu.get_device_capability() returns None",
      "raises without CUDA, and the NPU counterpart returns None (only configurable via "
      "TORCH_NPU_DEVICE_CAPABILITY), so tuple unpacking would fail too"),
    C("return HAS_TRITON and all(t.is_cuda for t in tensors)", "device_type", "replace", False,
      "return HAS_TRITON and all(t.is_npu for t in tensors)",
      "unchanged, NPU tensors take the pure-torch fallback: correct, only slower"),
    C("BLOCK_S=block_s, num_warps=4)", "triton_kernel_tuning", "replace", False,
      "_ts_corr_kernel[grid](x, y, out, n_days, n_stocks, window, x.stride(0), BLOCK_S=block_s)", TRITON_NOTE),
    C('dev = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'dev = "npu" if torch.npu.is_available() else "cpu"', "benchmark would silently measure the CPU"),
    C('sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)', "torch_cuda_api", "replace", True,
      'sync = torch.npu.synchronize if dev == "npu" else (lambda: None)',
      "without an NPU sync the timings only measure kernel launch"),
])

# ---------------------------------------------------------------------------------------------------------------
E("alphaflow_setup", "setup.py", "kernel_rewrite",
  "alpha-factor library setup.py building a CUDAExtension (CPU-only CppExtension when no CUDA toolkit)", [
    C("if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:", "custom_cuda_extension",
      "add_branch", False,
      'elif os.getenv("BUILD_NPU", "0") == "1":  # Ascend C kernels via torch_npu.utils.cpp_extension.NpuExtension',
      "on an Ascend host this silently builds the CPU-only extension, which works; NPU kernels would need an "
      "Ascend C rewrite bound with NpuExtension (perf only)"),
    C('"gpu": ["cupy-cuda12x>=12.0", "triton>=2.1"],', "custom_cuda_extension", "replace", False,
      '"npu": ["triton-ascend"],',
      "optional extra: CuPy has no Ascend backend; Triton kernels need triton-ascend"),
])

# ---------------------------------------------------------------------------------------------------------------
E("alphaflow_csops", "alphaflow/ops/cs_ops.py", "kernel_rewrite",
  "alpha-factor library cross-sectional ops dispatching to compiled _C kernels with torch fallbacks", [
    C("if _C is not None and x.is_cuda and _HAS_CUDA_KERNELS:", "custom_cuda_extension", "add_branch", False,
      "if x.is_npu: return _cs_rank_torch(x, pct)  # no NPU kernels in _C; argsort/scatter run natively",
      "unchanged, NPU tensors go through the CPU kernel with a device->host->device copy per call (correct, slow)"),
    C("beta = torch.linalg.lstsq(Xr, Yr).solution", "unsupported_op_workaround", "replace", False,
      "beta = torch.cholesky_solve(Xr.transpose(1, 2) @ Yr, torch.linalg.cholesky(Xr.transpose(1, 2) @ Xr))",
      "Ascend's API list marks linalg.lstsq as 'may fall back to CPU'; the ridge term keeps the normal "
      "equations positive definite, so a Cholesky solve stays on the NPU (fp32 only)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("vec_backtest", "backtest/vector_backtest.py", "explicit_replacement",
  "research-repo vectorised long-short factor backtest with GPU block bootstrap and NVTX ranges", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; also provides torch_npu.npu.mstx used below; " + AUTOLOAD),
    C('p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])', "device_type", "replace", True,
      'p.add_argument("--device", default="npu", choices=["npu", "cpu"])',
      "the CLI cannot even express an NPU run; default would fall through to CPU"),
    C('if name == "cuda" and torch.cuda.is_available():', "torch_cuda_api", "replace", True,
      'if name == "npu" and torch.npu.is_available():', "CUDA check False on Ascend -> silent CPU backtest"),
    C('return torch.device("cuda")', "device_type", "replace", True, 'return torch.device("npu")',
      "all panels are created on this device"),
    C("torch.cuda.nvtx.range_push(self.name)", "torch_cuda_api", "replace", True,
      "self.rid = torch_npu.npu.mstx.range_start(self.name)",
      "torch.cuda.nvtx is not redirected by torch_npu and fails without a CUDA build (--profile only); "
      "mstx is the NPU range API"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(self.rid)",
      "pairs with range_push above"),
    C("nav = torch.cumprod(1.0 + net.double(), dim=0)", "unsupported_op_workaround", "replace", False,
      "nav = torch.cumprod(1.0 + net.double().cpu(), dim=0)",
      "fp64 NAV feeds torch.cummax in max_drawdown, which Ascend lists for fp16/fp32/int types only; "
      "a 2,500-element vector is cheaper on the host - outcome on NPU (error vs CPU fallback) unconfirmed"),
    C('(f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")', "torch_cuda_api", "replace",
      False,
      'print(f"device: {device}" + (f" ({torch.npu.get_device_name(device)})" if device.type == "npu" else ""))',
      "cosmetic: unchanged it just omits the device name"),
    C('on_gpu = device.type == "cuda"', "device_type", "replace", False, 'on_gpu = device.type == "npu"',
      "unchanged, the host timer branch is used and mislabels the timing as CPU"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "same"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
])

# ---------------------------------------------------------------------------------------------------------------
DP_NOTE = ("torch.nn.DataParallel is unsupported on Ascend; the CUDA count guard returns 0 there so the branch is "
           "dead - remove it (multi-NPU needs DDP) rather than port the guard")
E("alpha_mlp", "examples/alpha_mlp/train_alpha_mlp.py", "explicit_replacement",
  "Alpha360 MLP trainer with pinned host batches, side-stream CUDA prefetcher, DataParallel, torch.compile", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; also needed for torch_npu.optim below; " + AUTOLOAD),
    C("xb = torch.from_numpy(self.x[b]).pin_memory()", "pin_memory", "replace", False,
      'xb = torch.from_numpy(self.x[b]).pin_memory(device="npu")',
      "older torch pins for CUDA by default and may raise without it; newer torch pins for the current "
      "accelerator - unconfirmed for the torch_npu-paired versions"),
    C("yb = torch.from_numpy(self.y[b]).pin_memory()", "pin_memory", "replace", False,
      'yb = torch.from_numpy(self.y[b]).pin_memory(device="npu")', "same as above"),
    C("self.stream = torch.cuda.Stream(device=device)", "torch_cuda_api", "replace", True,
      "self.stream = torch.npu.Stream(device=device)", "CUDA stream creation raises on an NPU host"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "CUDA stream context"),
    C("torch.cuda.current_stream(self.device).wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream(self.device).wait_stream(self.stream)", "CUDA stream API"),
    C("xb.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "xb.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
    C("yb.record_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", "replace", True,
      "yb.record_stream(torch.npu.current_stream(self.device))", "CUDA stream API"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "CUDA check False on Ascend"),
    C("torch.backends.cudnn.benchmark = True", "torch_cuda_api", "removal", False, None, "cuDNN flag, no-op on NPU"),
    C("if torch.cuda.device_count() > 1:", "distributed_framework", "removal", False, None, DP_NOTE),
    C('print(f"using DataParallel over {torch.cuda.device_count()} GPUs")', "distributed_framework", "removal",
      False, None, "part of the DataParallel branch"),
    C("model = nn.DataParallel(model)", "distributed_framework", "removal", False, None, DP_NOTE),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune leans on Triton GPU autotuning and CUDA graphs; NPU Inductor (torch_npu >= 2.6) should use "
      "the default mode - unconfirmed, perf only"),
    C("fused=True)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)",
      "the op lists carry an NPU _fused_adamw_ kernel but no _fused_adam_, so fused Adam would hit the CPU "
      "fallback or fail (unconfirmed); torch_npu's NpuFusedAdam is the supported fused path"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "--amp only; CUDA scaler disables itself on NPU (would leave fp16 grads unscaled once autocast is ported)"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "--amp only; CUDA autocast is a warning + no-op on NPU (fp32, slower)"),
])

# ---------------------------------------------------------------------------------------------------------------
E("stockmamba_pyproject", "pyproject.toml", "explicit_replacement",
  "research-repo pyproject for Mamba/attention stock models (CUDA-only kernel packages, uv cu121 index)", [
    C('"torch==2.1.2",', "device_type", "replace", True, '"torch==2.1.0",',
      "resolved from the cu121 index below; torch_npu 2.1.0.postN pairs only with torch 2.1.0 exactly"),
    C('"numpy>=1.24,<2",', "import_torch_npu", "npu_only_addition", True, '"torch-npu==2.1.0.post12",',
      "the NPU backend itself, added right after the torch pin"),
    C('"mamba-ssm>=1.2.0",', "custom_cuda_extension", "removal", True, None,
      "builds selective-scan CUDA kernels with nvcc at install time: pip install fails on an Ascend host; "
      "the model code must fall back to a pure-torch selective scan"),
    C('"causal-conv1d>=1.2.0",', "custom_cuda_extension", "removal", True, None,
      "CUDA-only extension, same install failure; replace with nn.Conv1d + left padding in the model"),
    C('"flash-attn>=2.5.0",', "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU; attention should go through SDPA / torch_npu.npu_fusion_attention"),
    C('monitor = ["nvidia-ml-py>=12.535", "gpustat>=1.1"]', "device_type", "replace", False, "monitor = []",
      "optional extra; NVML-based tools cannot see Ascend devices (npu-smi instead)"),
    C('url = "https://download.pytorch.org/whl/cu121"', "device_type", "replace", False,
      'url = "https://download.pytorch.org/whl/cpu"',
      "CUDA wheel index; torch_npu installs over the CPU torch build (x86)"),
    C('no-build-isolation-package = ["mamba-ssm", "causal-conv1d", "flash-attn"]', "custom_cuda_extension",
      "removal", False, None, "only meaningful for the CUDA extension packages removed above"),
])
