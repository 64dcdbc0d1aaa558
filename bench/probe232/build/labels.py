# Labels for probe232 (tabular foundation models / AutoML for tabular data, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu  # noqa: F401"
IMPORT_NOTE = ("torch_npu must be imported before 'npu' devices / torch.npu exist; device-backend autoload only "
               "exists from torch_npu 2.5.1 and this stack pins older torch")

# ---------------------------------------------------------------------------------------------
# TabPFN v2
# ---------------------------------------------------------------------------------------------
E("tabpfn-utils", "src/tabpfn/utils.py", "device_branch_or_abstraction",
  "PriorLabs/TabPFN v2 src/tabpfn/utils.py (device/precision inference helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; this module becomes the place that names torch.npu"),
    C('device_type_ = "cuda" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", "replace", True,
      'device_type_ = "npu" if torch.npu.is_available() else "cpu"',
      'device="auto" silently picks the CPU on an NPU host (torch.cuda.is_available() is False)'),
    C('device_type == torch.device("cuda").type', "amp", "replace", True,
      'device_type in (torch.device("cuda").type, "npu")',
      "fallback used on torch without torch.amp.autocast_mode.is_autocast_available: 'npu' would be reported "
      "as having no autocast, so fp16/bf16 inference is silently switched off"),
    C('if device.type != "cuda":', "device_capability_check", "add_branch", False,
      'if device.type == "npu": return torch.npu.is_bf16_supported()',
      "bf16 support check is CUDA-only (compute capability); on NPU it just returns False - perf only"),
    C('if device.type == "cuda":', "torch_cuda_api", "add_branch", True,
      'if device.type == "npu": return torch.npu.get_device_properties(device).total_memory / 1e9',
      "NPU falls through to host RAM, so the memory-saving heuristics size chunks against the wrong memory"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "seeding guard; torch.manual_seed is expected to seed the NPU generator too (unconfirmed) - no-op otherwise"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "lazy on an NPU host (never runs); keep explicit NPU seeding - unconfirmed whether torch.manual_seed covers it"),
])

E("tabpfn-inference", "src/tabpfn/inference.py", "device_branch_or_abstraction",
  "PriorLabs/TabPFN v2 src/tabpfn/inference.py (InferenceEngine*, MemoryUsageEstimator)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('if device.type == "cuda":  # CPU / MPS: nothing to release', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu": torch.npu.empty_cache()',
      "between-member cache release is skipped on NPU; memory only"),
    C('elif device.type.startswith("cuda"):', "torch_cuda_api", "add_branch", True,
      'elif device.type.startswith("npu"): free_memory, _total = torch.npu.mem_get_info(device)',
      "save_peak_mem='auto' raises ValueError('Unknown device npu:0') without an NPU branch"),
    C('=if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu": torch.npu.synchronize(device); torch.npu.reset_peak_memory_stats(device)',
      "benchmark-only peak-memory tracking; on NPU it silently reports nan"),
    C("torch.cuda.max_memory_allocated(device) / 1e9", "torch_cuda_api", "replace", False,
      "getattr(torch, device.type).max_memory_allocated(device) / 1e9",
      "reporting only"),
    C('=if device.type == "cuda"', "device_type", "replace", False,
      'if device.type in ("cuda", "npu")',
      "reporting only; goes with the line above"),
])

E("tabpfn-mha", "src/tabpfn/model/multi_head_attention.py", "device_branch_or_abstraction",
  "PriorLabs/TabPFN v2 src/tabpfn/model/multi_head_attention.py", [
    C("ctx = torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "ctx = contextlib.nullcontext() if q.device.type == 'npu' else torch.backends.cuda.sdp_kernel(",
      "torch.backends.cuda.sdp_kernel is listed unsupported (mstt 2.7 / Ascend 2.7.1 table); it only toggles "
      "CUDA SDPA flags, so on NPU it is a silent no-op and SDPA dispatches to the NPU fused kernel anyway"),
])

E("tabpfn-v1-cc18", "tabpfn/scripts/evaluate_cc18.py", "explicit_replacement",
  "automl/TabPFN v1 evaluation scripts (TabPFNClassifier(device='cuda', N_ensemble_configurations=32) on OpenML-CC18)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda"', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu", help="torch device for TabPFN (npu|cpu)")',
      "default 'cuda' falls back to the CPU on an NPU host (main() checks torch.cuda.is_available())"),
    C('=if device.startswith("cuda"):', "device_type", "replace", False,
      'if device.startswith("npu"):',
      "timing barrier; without it NPU timings exclude queued kernels (reported numbers only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()", "goes with the guard above"),
    C('if args.device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
      'if args.device == "npu" and not torch.npu.is_available():',
      "fallback check; with --device npu it is simply skipped"),
    C('=if args.device.startswith("cuda"):', "device_type", "replace", False,
      'if args.device.startswith("npu"):', "only prints the device name and sets cudnn.benchmark"),
    C('print(f"Running on {torch.cuda.get_device_name(0)}")', "torch_cuda_api", "replace", False,
      'print(f"Running on {torch.npu.get_device_name(0)}")', "log only"),
    C('if args.device.startswith("cuda"):  # release cached blocks between datasets', "device_type", "replace", False,
      'if args.device.startswith("npu"):  # release cached blocks between datasets', "memory hygiene only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op on an NPU host; memory only"),
    C('print(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")', "torch_cuda_api", "replace", False,
      'print(f"Peak NPU memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")',
      "reached for --device npu; torch.cuda.max_memory_allocated() returns 0 when CUDA is uninitialised - wrong report only"),
])

E("tabpfn-v1-train", "tabpfn/train.py", "explicit_replacement",
  "automl/TabPFN v1 tabpfn/train.py + utils.init_dist (prior-fitting with DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "torch.cuda.amp GradScaler/autocast disable themselves without CUDA: train_mixed_precision silently "
      "trains without autocast and without loss scaling"),
    C("        torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(rank)", "torch.cuda.set_device fails on an NPU host"),
    C("        os.environ['CUDA_VISIBLE_DEVICES'] = str(rank)", "env_var", "replace", False,
      "        os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(rank)",
      "set after set_device, so it only affects child processes; renamed to keep the intent"),
    C('torch.distributed.init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://", timeout=datetime.timedelta(seconds=20),',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("world_size=torch.cuda.device_count(), rank=rank)", "torch_cuda_api", "replace", True,
      "world_size=torch.npu.device_count(), rank=rank)",
      "torch.cuda.device_count() is 0 on an NPU host -> world_size=0 and init fails"),
    C('print(f"Distributed training on {torch.cuda.device_count()} GPUs', "torch_cuda_api", "replace", False,
      'print(f"Distributed training on {torch.npu.device_count()} NPUs, this is rank {rank}, "', "log only"),
    C("return True, rank, f'cuda:{rank}'", "device_type", "replace", True,
      "return True, rank, f'npu:{rank}'", "device string used for the model and the prior dataloader"),
    C("elif 'SLURM_PROCID' in os.environ and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "elif 'SLURM_PROCID' in os.environ and torch.npu.device_count() > 1:",
      "silently skips distributed training under SLURM/submitit on an NPU node"),
    C("torch.cuda.set_device(rank % 8)", "torch_cuda_api", "replace", True,
      "        torch.npu.set_device(int(os.environ.get('SLURM_LOCALID', rank % torch.npu.device_count())))",
      "fails on an NPU host; also avoid hard-coding 8 devices per node (A3 nodes expose 16)"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(rank % 8)", "env_var", "replace", False,
      "        os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(rank % 8)",
      "set after set_device; only affects child processes"),
    C("torch.distributed.init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method=\"env://\", timeout=datetime.timedelta(seconds=60),",
      "NCCL -> HCCL"),
    C("world_size=int(os.environ.get('SLURM_NTASKS', torch.cuda.device_count())), rank=rank)", "torch_cuda_api", "replace", False,
      "world_size=int(os.environ.get('SLURM_NTASKS', torch.npu.device_count())), rank=rank)",
      "fallback only used when SLURM_NTASKS is missing"),
    C("return True, rank, 'cuda:' + str(rank % 8)", "device_type", "replace", True,
      "return True, rank, 'npu:' + str(rank % 8)", "device string"),
    C("gpu_device='cuda:0',", "device_type", "replace", True,
      "load_weights_from_this_state_dict=None, validation_period=10, single_eval_pos_gen=None, bptt_extra_samples=None, gpu_device='npu:0',",
      "default device string of train()"),
    C("device = gpu_device if torch.cuda.is_available() else 'cpu:0'", "torch_cuda_api", "replace", True,
      "device = gpu_device if torch.npu.is_available() else 'cpu:0'",
      "silently trains on the CPU on an NPU host"),
    C("+ f' | max mem {torch.cuda.max_memory_allocated() / 2**30:.1f}GiB')", "torch_cuda_api", "replace", False,
      "+ f' | max mem {torch.npu.max_memory_allocated() / 2**30:.1f}GiB')",
      "log only; torch.cuda.max_memory_allocated() reports 0 without CUDA"),
])

E("tabpfn-finetune", "examples/finetune_classifier.py", "explicit_replacement",
  "PriorLabs/TabPFN v2 examples/finetune_classifier.py (+ a torchrun/DDP variant)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently fine-tunes on the CPU"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "fails on an NPU host"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL -> HCCL"),
    C('torch.device("cuda", local_rank)', "device_type", "replace", True,
      'return dist.get_rank(), dist.get_world_size(), torch.device("npu", local_rank)', "device for the DDP ranks"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "older torch DataLoaders only pin when torch.cuda.is_available(); perf only, unconfirmed for the pinned version"),
    C("fused=torch.cuda.is_available())", "fused_optimizer", "replace", False,
      "optimizer = AdamW(model.parameters(), lr=args.lr, weight_decay=0.0, fused=device.type in ('cuda', 'npu'))",
      "falls back to the foreach AdamW on NPU; _fused_adamw_ has an NPU kernel in the op lists - perf only, unconfirmed "
      "that torch's fused-device check accepts npu in the pinned version"),
    C('scaler = torch.cuda.amp.GradScaler(enabled=args.amp == "fp16")', "amp", "replace", True,
      'scaler = torch.npu.amp.GradScaler(enabled=args.amp == "fp16")',
      "torch.cuda.amp.GradScaler disables itself without CUDA: --amp fp16 silently trains without loss scaling"),
    C('partial(torch.autocast, device_type="cuda", dtype=amp_dtype)', "amp", "replace", True,
      'partial(torch.autocast, device_type="npu", dtype=amp_dtype)',
      "autocast('cuda') is disabled (with a warning) on an NPU host; the NPU ops run in fp32"),
    C('mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0', "torch_cuda_api", "replace", False,
      'mem = torch.npu.max_memory_allocated(device) / 2**30 if device.type == "npu" else 0.0', "log only"),
])

# ---------------------------------------------------------------------------------------------
# AutoGluon-Tabular.  Porting strategy (see README): ResourceManager counts NPUs as AutoGluon
# "GPUs" so num_gpus keeps meaning "one accelerator"; torch-based models use npu; the CUDA-only
# learners (CatBoost GPU, LightGBM GPU, XGBoost CUDA) are moved to the CPU.
# ---------------------------------------------------------------------------------------------
E("ag-gpu-benchmark", "examples/tabular/tabular_gpu_benchmark.py", "explicit_replacement",
  "autogluon/autogluon tabular GPU benchmark script (TabularPredictor.fit(num_gpus=..., presets='best_quality'))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('{"device": "gpu", "gpu_use_dp": False, "max_bin": 63, "ag_args": {"name_suffix": "GPU"}},', "device_type", "replace", False,
      '{"max_bin": 63, "ag_args": {"name_suffix": "CPU"}},',
      "LightGBM GPU learner is CUDA/OpenCL only; the LGB model falls back to CPU after a failed attempt (ag-lgb) - wasted time only"),
    C('{"extra_trees": True, "device": "gpu", "max_bin": 63, "ag_args": {"name_suffix": "XTGPU"}},', "device_type", "replace", False,
      '{"extra_trees": True, "max_bin": 63, "ag_args": {"name_suffix": "XT"}},', "same as above"),
    C('"CAT": {"task_type": "GPU", "border_count": 254},', "device_type", "replace", True,
      '"CAT": {"task_type": "CPU", "border_count": 254},',
      "CatBoost GPU training needs CUDA ('GPU Device not found' / 'no CUDA-capable device', catboost#219/#2217); "
      "AutoGluon then drops the model from the ensemble"),
    C('"XGB": {"tree_method": "gpu_hist", "predictor": "gpu_predictor"},', "device_type", "replace", False,
      '"XGB": {"tree_method": "hist"},',
      "XGBoost GPU is CUDA-only; old xgboost raised 'no CUDA-capable device' (xgboost#3953), 2.x may fall back to CPU - unconfirmed"),
    C("num_gpus = args.num_gpus if args.num_gpus is not None else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = args.num_gpus if args.num_gpus is not None else torch.npu.device_count()",
      "0 on an NPU host: explicit num_gpus=0 keeps every torch model on the CPU"),
    C('"gpus": nvidia_smi_summary(),', "torch_cuda_api", "replace", False,
      '"npus": npu_smi_summary(),  # npu-smi info -l', "environment report only (nvidia-smi is caught and reported unavailable)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      'if torch.npu.is_available(): info["npu_name"] = torch.npu.get_device_name(0)', "environment report only"),
])

E("ag-nn-torch", "tabular/src/autogluon/tabular/models/tabular_nn/torch/tabular_nn_torch.py", "device_branch_or_abstraction",
  "autogluon/autogluon TabularNeuralNetTorchModel (NN_TORCH)", [
    C("=try_import_torch()", "import_torch_npu", "npu_only_addition", True,
      "        import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if torch.npu.is_available(): device = torch.device("npu")',
      "with num_gpus>=1 (NPUs counted by the ported ResourceManager) the model silently trains on the CPU"),
    C("torch.cuda.manual_seed_all(seed_value)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed_value)",
      "lazy no-op on an NPU host; torch.manual_seed is expected to cover the NPU generator (unconfirmed)"),
    C('if model.device is not None and model.device.type == "cuda" and not _cuda_available():', "device_type", "replace", False,
      'if model.device is not None and model.device.type in ("cuda", "npu") and not _accelerator_available(model.device.type):',
      "only matters when an NPU-trained predictor is loaded on a host without NPUs"),
])

E("ag-resource-utils", "common/src/autogluon/common/utils/resource_utils.py", "device_branch_or_abstraction",
  "autogluon/autogluon autogluon.common.utils.resource_utils.ResourceManager", [
    C("import torch  # lazy: keep autogluon.common importable without torch", "import_torch_npu", "npu_only_addition", True,
      "            import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "AutoGluon sees 0 GPUs on an NPU host: every num_gpus request is clamped to 0 or asserts (autogluon#4654)"),
    C('nvidia_smi = shutil.which("nvidia-smi")', "torch_cuda_api", "replace", False,
      'npu_smi = shutil.which("npu-smi")  # parse `npu-smi info -t usages -i <id>`',
      "free-memory ranking returns {} and falls back to range(); placement heuristic only"),
    C('visible = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", False,
      'visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")', "goes with the npu-smi rewrite; heuristic only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():", "returns None (unknown) on NPU; callers treat it as unknown"),
    C("free_bytes, _total = torch.cuda.mem_get_info(device_index)", "torch_cuda_api", "replace", False,
      "free_bytes, _total = torch.npu.mem_get_info(device_index)", "goes with the guard above"),
    C('return int(ray.cluster_resources().get("GPU", 0))', "device_type", "replace", False,
      'return int(ray.cluster_resources().get("NPU", 0))',
      "Ray only counts CUDA GPUs as 'GPU'; whether/how it registers Ascend devices is unconfirmed"),
    C('return int(RayResourceManager._get_cluster_resources("GPU"))', "device_type", "replace", False,
      'return int(RayResourceManager._get_cluster_resources("NPU"))', "same as above, unconfirmed"),
    C('env["CUDA_VISIBLE_DEVICES"] = visible', "env_var", "replace", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = visible',
      "fold-fitting child processes ignore CUDA_VISIBLE_DEVICES on Ascend: every fold lands on NPU 0"),
])

E("ag-catboost", "tabular/src/autogluon/tabular/models/catboost/catboost_model.py", "explicit_replacement",
  "autogluon/autogluon CatBoostModel", [
    C('params["task_type"] = "GPU"', "device_type", "replace", True,
      'params["task_type"] = "CPU"  # CatBoost has no Ascend backend; keep it on the CPU when NPUs are assigned',
      "once NPUs are counted as AutoGluon GPUs, num_gpus>0 reaches CatBoost, whose GPU mode needs CUDA "
      "('GPU Device not found', catboost#219) -> model skipped"),
])

E("ag-lgb", "tabular/src/autogluon/tabular/models/lgb/lgb_model.py", "explicit_replacement",
  "autogluon/autogluon LGBModel", [
    C('params["device"] = "gpu"', "device_type", "replace", False,
      'params["device"] = "cpu"  # LightGBM has no Ascend learner',
      "LightGBM's GPU learner is OpenCL/CUDA only; this file already retries on CPU when the GPU learner is "
      "missing, so the edit only avoids a failed first attempt"),
])

E("ag-fastai", "tabular/src/autogluon/tabular/models/fastainn/tabular_nn_fastai.py", "device_branch_or_abstraction",
  "autogluon/autogluon NNFastAiTabularModel (FASTAI)", [
    C("=try_import_fastai()", "import_torch_npu", "npu_only_addition", True,
      "        import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("if num_gpus > 0 and torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if num_gpus > 0 and torch.npu.is_available(): return torch.device("npu")',
      "silently trains on the CPU when NPUs are assigned"),
    C('pin_memory=device.type == "cuda")', "pin_memory", "replace", False,
      'dls = data.dataloaders(bs=bs, num_workers=0, device=device, pin_memory=device.type in ("cuda", "npu"))',
      "no pinned host buffers for NPU batches; perf only"),
    C('if device.type == "cuda":  # free memory for the next model in the stack', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu": torch.npu.empty_cache()', "memory hygiene between stacked models only"),
])

E("ag-mitra-tab2d", "tabular/src/autogluon/tabular/models/mitra/_internal/models/tab2d.py", "kernel_rewrite",
  "autogluon/autogluon Mitra foundation model (_internal/models/tab2d.py, flash-attn varlen path)", [
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", False,
      "from ..._internal.models.padding import pad_input, unpad_input  # torch re-implementation",
      "flash-attn cannot be installed on Ascend; the import is guarded and the padded SDPA path is used instead"),
    C("from flash_attn.flash_attn_interface import flash_attn_varlen_func", "attention_kernel", "replace", False,
      "from torch_npu import npu_fusion_attention",
      "guarded; replacing it restores the unpadded (varlen) fast path via npu_fusion_attention(input_layout='TND')"),
    C('return FLASH_ATTN_AVAILABLE and x.is_cuda and os.environ.get("MITRA_DISABLE_FLASH_ATTN", "0") != "1"', "device_type", "replace", False,
      'return FLASH_ATTN_AVAILABLE and x.device.type in ("cuda", "npu") and os.environ.get("MITRA_DISABLE_FLASH_ATTN", "0") != "1"',
      "is_cuda is False for NPU tensors, so only the slower padded path runs - perf only"),
    C('device: str = "cuda",', "device_type", "replace", False,
      'device: str = "npu",', "default only; AutoGluon passes the device explicitly"),
    C('self.load_state_dict(load_file(path_to_weights, device="cuda"))', "tensor_to_device", "replace", True,
      "self.load_state_dict(load_file(path_to_weights, device=device))",
      "any non-CPU device takes this branch; safetensors cannot place tensors on 'cuda' on an NPU host"),
    C("out = flash_attn_varlen_func(", "attention_kernel", "replace", False,
      "out = npu_fusion_attention(q, k, v, self.n_heads, 'TND', actual_seq_qlen=cu_q[1:].tolist(), actual_seq_kvlen=cu_k[1:].tolist(), scale=q.shape[-1] ** -0.5)[0]",
      "only reached when the varlen path is enabled for NPU (see above); perf rewrite"),
])

E("ag-gpu-config", "examples/tabular/configs/gpu_best_quality.yaml", "explicit_replacement",
  "AutoGluon-Tabular YAML run config (hyperparameters with GPU learners)", [
    C("- device: gpu", "device_type", "replace", False,
      "    - max_bin: 63",
      "LightGBM GPU learner unavailable on Ascend; AutoGluon's LGB model retries on CPU - wasted attempt only"),
    C("task_type: GPU", "device_type", "replace", True,
      "    task_type: CPU", "CatBoost GPU needs CUDA ('GPU Device not found'); the model would be dropped"),
    C("gpu_ram_part: 0.9", "device_type", "removal", False, None,
      "GPU-only CatBoost option; unconfirmed whether CPU mode rejects it"),
    C('device: "cuda:0"', "device_type", "replace", False,
      "    device: cpu", "XGBoost CUDA; 2.x is believed to fall back to CPU with a warning - unconfirmed"),
    C("=device: cuda", "device_type", "replace", True,
      "    device: npu", "Mitra is a torch model and would build torch.device('cuda') on an NPU host"),
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "env_var", "replace", False,
      '  ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"',
      "lists every device, which is the default visibility anyway"),
    C('NCCL_P2P_DISABLE: "1"', "env_var", "removal", False, None,
      "NCCL-only knob; bagging uses no collectives, HCCL has no direct equivalent"),
    C('PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"', "env_var", "replace", False,
      '  PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True"',
      "allocator config is silently ignored on NPU; PYTORCH_NPU_ALLOC_CONF supports expandable_segments"),
])

# ---------------------------------------------------------------------------------------------
# TabR / TabM / rtdl (yandex-research)
# ---------------------------------------------------------------------------------------------
E("tabr-lib-util", "lib/util.py", "device_branch_or_abstraction",
  "yandex-research/tabular-dl-tabr lib/util.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("return torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "torch_cuda_api", "replace", True,
      "return torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "every experiment silently runs on the CPU on an NPU host"),
    C("'CUDA error: out of memory',", "torch_cuda_api", "npu_only_addition", False,
      "            'NPU out of memory',",
      "OOM detection drives the eval batch-size halving; NPU OOM message text is not in the knowledge base (unconfirmed)"),
    C("torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())", "torch_cuda_api", "replace", False,
      "torch.npu.get_device_name(i) for i in range(torch.npu.device_count())",
      "report only; returns [] on an NPU host"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "free_memory() is a no-op on NPU; memory only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()", "goes with the guard above"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "goes with the guard above"),
    C("if torch.cuda.is_available():  # this is mainly for reproducibility reasons", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): environment['ASCEND_RT_VISIBLE_DEVICES'] = os.environ.get('ASCEND_RT_VISIBLE_DEVICES'); environment['npus'] = [torch.npu.get_device_name(i) for i in range(torch.npu.device_count())]",
      "environment.json is empty on NPU; reproducibility report only"),
])

E("tabr-bin", "bin/tabr.py", "kernel_rewrite",
  "yandex-research/tabular-dl-tabr bin/tabr.py (retrieval model with faiss search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("if self.search_index is None:", "unsupported_op_workaround", "add_branch", True,
      "if device.type == 'npu': distances, context_idx = torch.cdist(k, candidate_k).square().topk(context_size + int(is_train), dim=-1, largest=False)",
      "faiss has no Ascend backend; with an NPU device the CPU IndexFlatL2 is fed NPU tensors through "
      "faiss.contrib.torch_utils, which treats them as host pointers. Exact search via cdist+topk (both have NPU kernels)"),
    C("model = torch.compile(model)", "compile_mode", "replace", False,
      "model = torch.compile(model, backend='npugraphs') if device.type == 'npu' else torch.compile(model)",
      "off by default (compile=False); Inductor for NPU needs torch_npu>=2.6 - unconfirmed for the pinned stack"),
    C("model, **config.optimizer, fused=device.type == 'cuda'", "fused_optimizer", "replace", False,
      "model, **config.optimizer, fused=device.type in ('cuda', 'npu')",
      "falls back to the non-fused optimizer on NPU; perf only (_fused_adamw_ has an NPU kernel, acceptance by torch's check unconfirmed)"),
    C("torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "torch.npu.amp.GradScaler()",
      "disables itself without CUDA: amp_dtype=float16 silently trains without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=config.amp, dtype=amp_dtype):", "amp", "replace", True,
      "with torch.autocast(device.type, enabled=config.amp, dtype=amp_dtype):",
      "torch.cuda.amp.autocast is CUDA-only: amp=true silently runs in fp32 on NPU"),
    C("delu.cuda.free_memory()", "torch_cuda_api", "replace", False,
      "lib.free_memory()  # gc + torch.npu.empty_cache()",
      "delu's helper only empties the CUDA cache; after an NPU OOM the cache is kept - memory only"),
    C("report['gpu_max_memory_gb'] = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "report['gpu_max_memory_gb'] = torch.npu.max_memory_allocated() / 2**30",
      "report only; reads 0 on NPU"),
])

E("tabm-bin-model", "bin/model.py", "device_branch_or_abstraction",
  "yandex-research/tabm bin/model.py (MLP/TabM training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("if device.type != 'cuda':", "amp", "add_branch", True,
      "if device.type == 'npu': return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "amp=true is silently ignored on NPU (no AMP dtype), training runs in fp32"),
    C("grad_scaler = torch.cuda.amp.GradScaler() if amp_enabled and amp_dtype is torch.float16 else None", "amp", "replace", True,
      "grad_scaler = torch.npu.amp.GradScaler() if amp_enabled and amp_dtype is torch.float16 else None",
      "fp16 path (NPUs without bf16, e.g. Ascend 910) would run without working loss scaling"),
    C("model = torch.compile(model)", "compile_mode", "replace", False,
      "model = torch.compile(model, backend='npugraphs') if device.type == 'npu' else torch.compile(model)",
      "only with compile=true; NPU Inductor needs torch_npu>=2.6 and requirements pin torch 2.3.1 - unconfirmed"),
    C("report['max_memory_allocated_gb'] = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None", "torch_cuda_api", "replace", False,
      "report['max_memory_allocated_gb'] = torch.npu.max_memory_allocated() / 2**30 if torch.npu.is_available() else None",
      "report only"),
])

E("tabm-lib-deep", "lib/deep.py", "device_branch_or_abstraction",
  "yandex-research/tabm lib/deep.py (TabM layers, optimizer helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("if fused and type in ('Adam', 'AdamW') and torch.cuda.is_available():", "fused_optimizer", "replace", False,
      "if fused and type in ('Adam', 'AdamW') and (torch.cuda.is_available() or torch.npu.is_available()):",
      "fused kernels silently not used on NPU; perf only (acceptance of npu by torch's fused check unconfirmed)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "raises on an NPU host (not an OOM, so it is re-raised and the batch-size probe crashes)"),
    C("=delu.cuda.free_memory()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "memory hygiene after an OOM only"),
])

E("tabr-environment", "environment.yaml", "explicit_replacement",
  "yandex-research/tabular-dl-tabr environment.yaml (conda)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "channel only needed for pytorch-cuda"),
    C("=- pytorch=2.0.1", "import_torch_npu", "replace", True,
      "  # torch comes from pip below: torch==2.1.0 + torch-npu==2.1.0.post12",
      "torch_npu wheels pair with plain PyPI torch of the same version; 2.0.1 only pairs with EOL CANN 7.0"),
    C("=- pytorch-cuda=11.7", "import_torch_npu", "removal", False, None,
      "CUDA runtime meta-package; dead weight once torch comes from pip (availability on aarch64 unconfirmed)"),
    C("=- cudatoolkit=11.7", "import_torch_npu", "removal", False, None, "CUDA toolkit not used on Ascend"),
    C("=- faiss-gpu=1.7.4", "unsupported_op_workaround", "replace", False,
      "  - faiss-cpu=1.7.4",
      "no Ascend build of faiss; the ported tabr.py searches with torch on NPU. Whether faiss-gpu installs/imports on the host is unconfirmed"),
    C("=- nvidia-ml-py==11.525.112", "torch_cuda_api", "removal", False, None,
      "NVML bindings install anywhere but have no driver to talk to on Ascend"),
    C("=- tomli-w==1.0.0", "import_torch_npu", "npu_only_addition", True,
      "      - torch==2.1.0", "plain torch matching the torch-npu wheel"),
    C("=- tqdm==4.65.0", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post12", "torch_npu for torch 2.1.0 (CANN 8.1.RC1 line)"),
])

E("tabm-requirements", "requirements.txt", "explicit_replacement",
  "yandex-research/tabm requirements (CUDA 12.1 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the cu121 index would still win the resolution with a +cu121 build; NPU hosts need the CPU/PyPI torch"),
    C("torch==2.3.1+cu121", "import_torch_npu", "replace", True,
      "torch==2.3.1", "CUDA local-version wheel; torch_npu requires the matching plain torch"),
    C("=numpy>=1.26,<2", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.3.1.post6", "torch_npu wheel for torch 2.3.1 (CANN 8.1.RC1 line); listed with the core deps"),
    C("nvidia-ml-py>=12.535", "torch_cuda_api", "removal", False, None,
      "pure-Python NVML bindings install anywhere; the tuning report switches to torch.npu queries"),
    C("faiss-gpu-cu12==1.8.0.2", "unsupported_op_workaround", "replace", False,
      "faiss-cpu==1.8.0", "no Ascend build of faiss; CUDA-12 wheels are dead weight (install on aarch64 unconfirmed)"),
])

E("tabm-run-sh", "scripts/run_all_tuning.sh", "explicit_replacement",
  "yandex-research/tabm style multi-GPU tuning launcher (bash)", [
    C("=conda activate tabm", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries (libascendcl, libhccl) must be on the path before torch_npu is imported"),
    C("export CUBLAS_WORKSPACE_CONFIG=:4096:8", "env_var", "removal", False, None,
      "cuBLAS-only determinism knob; no effect on Ascend"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "silently ignored on NPU; fragmentation only"),
    C('n=$(nvidia-smi --id="$gpu" --query-compute-apps=pid --format=csv,noheader | wc -l)', "torch_cuda_api", "replace", True,
      'n=$(npu-smi info -t proc-mem -i "$gpu" | grep -c "Process id")',
      "nvidia-smi is missing, the count is 0, every device looks free and all jobs are sent to the first one"),
    C('CUDA_VISIBLE_DEVICES=$gpu nohup python bin/go.py "$exp_dir" \\', "env_var", "replace", True,
      'ASCEND_RT_VISIBLE_DEVICES=$gpu nohup python bin/go.py "$exp_dir" \\',
      "ignored on Ascend: every job would run on NPU 0"),
    C("nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info", "final status print only (fails after all jobs have finished)"),
])

E("tabm-tune", "bin/tune.py", "explicit_replacement",
  "yandex-research/tabm bin/tune.py (Optuna tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("if not _NVML_OK or not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if torch.npu.is_available(): return {'npu_util': float(torch.npu.utilization()), 'torch_reserved_gb': torch.npu.memory_reserved() / 2**30}",
      "NVML is absent on Ascend; hardware section of the tuning report is empty - report only"),
    C("torch.cuda.empty_cache()  # free the failed trial's tensors", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the failed trial's tensors", "no-op on NPU; memory only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op on NPU; memory only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "needs the current CUDA device -> raises on an NPU host after the first trial"),
])

# ---------------------------------------------------------------------------------------------
# CARTE / TabLLM
# ---------------------------------------------------------------------------------------------
E("carte-estimator", "carte_ai/src/carte_estimator.py", "device_branch_or_abstraction",
  "soda-inria/carte carte_ai/src/carte_estimator.py (bagged CARTE models with joblib)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      IMPORT_NOTE + "; joblib/loky workers unpickle npu models and devices, so the module itself must import it"),
    C('if self.device_.type == "cuda" and torch.cuda.device_count() > 1:', "torch_cuda_api", "replace", False,
      'if self.device_.type == "npu" and torch.npu.device_count() > 1:',
      "bagged models are not spread over NPUs; all run on one device - perf only"),
    C('devices = [torch.device(f"cuda:{i % torch.cuda.device_count()}") for i in range(len(splits))]', "device_type", "replace", False,
      'devices = [torch.device(f"npu:{i % torch.npu.device_count()}") for i in range(len(splits))]',
      "goes with the line above"),
    C('pin_memory=device.type == "cuda")', "pin_memory", "replace", False,
      'train_loader = DataLoader(ds_train, batch_size=batch_size, shuffle=False, pin_memory=device.type in ("cuda", "npu"))',
      "perf only"),
    C('=if device.type == "cuda":', "torch_cuda_api", "add_branch", False,
      'if device.type == "npu": torch.npu.empty_cache()', "memory hygiene in the worker only"),
    C('device: str = "cuda",', "device_type", "replace", True,
      'device: str = "npu",', "default device of CARTERegressor; torch.device('cuda') fails at .to() on an NPU host"),
])

E("carte-example", "examples/carte_singletable_wine.py", "explicit_replacement",
  "soda-inria/carte example notebook turned script (wina_pl regression)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "torch_cuda_api", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "silently runs embeddings and CARTE training on the CPU"),
    C('print(f"device={device}, visible GPUs={torch.cuda.device_count()}")', "torch_cuda_api", "replace", False,
      'print(f"device={device}, visible NPUs={torch.npu.device_count()}")', "log only"),
    C('=if device == "cuda":', "device_type", "replace", False,
      'if device == "npu":', "timing barrier; models are already back on the host - timing only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize()", "goes with the guard above"),
])

E("tabllm-finetune", "tabllm/finetune_llm.py", "explicit_replacement",
  "clinicalml/TabLLM-style LoRA fine-tuning on serialized rows (transformers Trainer + peft)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('return_tensors="pt", padding=True).to("cuda")', "tensor_to_device", "replace", True,
      'enc = tokenizer([p + " " + choice for p in prompts], return_tensors="pt", padding=True).to(model.device)',
      "hard-coded 'cuda' transfer fails on an NPU host"),
    C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
      'with torch.autocast("npu", dtype=torch.bfloat16):', "autocast('cuda') is disabled without CUDA; scoring silently in fp32"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "fails on an NPU host"),
    C("quant_config = BitsAndBytesConfig(load_in_8bit=True) if args.load_in_8bit else None", "unsupported_op_workaround", "replace", False,
      "quant_config = None  # LLM.int8 is not available on Ascend; train LoRA in bf16",
      "only with --load-in-8bit; bitsandbytes on NPU covers NF4 only (8-bit not listed)"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on Ascend; transformers refuses flash_attention_2 without it (use sdpa -> NPU FA)"),
    C('device_map={"": f"cuda:{local_rank}"},', "device_type", "replace", True,
      'device_map={"": f"npu:{local_rank}"},', "device map places the weights on a CUDA device"),
    C("=tf32=True,", "device_capability_check", "replace", True,
      "tf32=False,",
      "TrainingArguments checks is_torch_tf32_available() (CUDA/Ampere) and raises for tf32=True without it "
      "(same check transfer_to_npu patches, §2.7); behaviour on NPU-aware transformers versions not confirmed"),
    C('optim="adamw_torch_fused",', "fused_optimizer", "replace", False,
      'optim="adamw_torch_npu_fused",',
      "perf: NpuFusedAdamW via transformers' NPU optimizer name (name unconfirmed in the knowledge base); "
      "adamw_torch_fused itself may work through _fused_adamw_"),
    C('ddp_backend="nccl",', "dist_backend", "replace", True,
      'ddp_backend="hccl",', "NCCL -> HCCL"),
    C('"peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9}, f)', "torch_cuda_api", "replace", False,
      '"peak_mem_gb": torch.npu.max_memory_allocated() / 1e9}, f)', "report only (reads 0 on NPU)"),
])

E("tabllm-run-sh", "scripts/run_fewshot_sweep.sh", "explicit_replacement",
  "TabLLM few-shot sweep launcher (accelerate, bash)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu / HCCL"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device selection is silently ignored on Ascend (a user override would not be honoured)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2", "logging only"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL transport knob; no HCCL meaning"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL knob"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1", "HCCL watchdog switch (defaults to 1 per MindCluster docs)"),
    C("=nvidia-smi -L", "torch_cuda_api", "replace", True,
      "npu-smi info -l", "command not found under set -e aborts the sweep"),
    C("assert torch.cuda.is_available(), 'no GPU'", "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; assert torch.npu.is_available(), 'no NPU'; print(torch.npu.device_count(), 'NPUs')\"",
      "pre-flight assertion fails on an NPU host and aborts the sweep"),
])

E("tabarena-dockerfile", "docker/Dockerfile.gpu", "explicit_replacement",
  "tabular benchmark runner image (AutoGluon/TabPFN/TabM/CARTE on nvidia/cuda)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "base image must provide CANN (set_env.sh exports baked into ENV) for torch_npu"),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime knob; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA runtime knob"),
    C('TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "env_var", "removal", False, None, "only affects nvcc extension builds"),
    C("--index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "&& python -m pip install torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels; torch_npu needs the plain/CPU torch of the same version"),
    C('"autogluon.tabular[all]==1.1.1" \\', "import_torch_npu", "npu_only_addition", True,
      '        "torch-npu==2.3.1.post6" \\', "torch_npu matching torch 2.3.1"),
    C("cmake.define.USE_CUDA=ON", "custom_cuda_extension", "removal", True, None,
      "builds LightGBM's CUDA tree learner with nvcc; the image has no CUDA toolkit, the build fails"),
    C("pip install flash-attn==2.5.9.post1", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed on Ascend (needs nvcc); Mitra falls back to SDPA"),
])

E("tabicl-throughput", "scripts/bench_inference.py", "explicit_replacement",
  "soda-inria/tabicl + TabPFN v2 inference-throughput benchmark", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "same"),
    C("torch.cuda.synchronize()  # finish warm-up before timing", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # finish warm-up before timing", "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "raises without CUDA"),
    C('"peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,', "torch_cuda_api", "replace", False,
      '"peak_mem_gb": torch.npu.max_memory_allocated() / 1e9,', "report only (reads 0 on NPU)"),
    C('assert torch.cuda.is_available(), "this benchmark needs a CUDA GPU"', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "this benchmark needs an Ascend NPU"', "assertion fails on an NPU host"),
    C('device = torch.device("cuda:0")', "device_type", "replace", True,
      'device = torch.device("npu:0")', "device for both models"),
    C("gpu_name = torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
      "gpu_name = torch.npu.get_device_name(device)", "raises without CUDA"),
    C("major, minor = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", True,
      "major, minor = (8, 0) if torch.npu.is_bf16_supported() else (7, 0)  # get_device_capability() is None on NPU",
      "raises without CUDA; the torch.npu version returns None unless TORCH_NPU_DEVICE_CAPABILITY is set, so the unpack fails too"),
    C('n_estimators=min(args.n_estimators, 8), device="cuda", fit_mode="fit_with_cache",', "device_type", "replace", True,
      'n_estimators=min(args.n_estimators, 8), device="npu", fit_mode="fit_with_cache",', "TabPFN baseline device"),
    C('clf.model_ = torch.compile(clf.model_, mode="max-autotune", dynamic=True)', "compile_mode", "replace", False,
      "clf.model_ = torch.compile(clf.model_, dynamic=True)",
      "only with --compile; max-autotune is Triton autotuning (no Triton on Ascend), NPU Inductor needs torch_npu>=2.6"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "rejects an npu device / needs CUDA -> raises"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()", "no-op on NPU; memory only"),
])
