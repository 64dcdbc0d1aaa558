"""Labels for probe57 (hand-written synthetic upstream files; see ../README.md).

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

XGB_FALLBACK = ("unconfirmed: /work/shared/knowledge has no XGBoost entry; XGBoost has no NPU backend and >=2.0 "
                "warns 'No visible GPU is found, setting device to CPU' and trains on the CPU (dmlc/xgboost #11482), "
                "so the edit is the port's intent, not a crash fix")
CUPY = "CuPy has no Ascend support (knowledge §6, cupy #9379): the import fails on an NPU host"
RAPIDS = ("RAPIDS (cuDF/cuML/RMM/dask-cuda) is built on CUDA + CuPy, which an Ascend host does not have "
          "(knowledge §6 lists CuPy as unsupported); import or call fails")

E("xgb_kfold_gpu", "src/train_xgb.py", "explicit_replacement",
  "Kaggle AMEX-style k-fold XGBoost trainer (cuDF frames, CuPy DMatrix, gpu_hist, DeviceQuantileDMatrix iterator)", [
    C("=import cupy as cp", "custom_cuda_extension", X, True, None, CUPY),
    C("=import cudf", "custom_cuda_extension", R, True, "import pandas as cudf  # host frames; or drop cudf entirely", RAPIDS),
    C('"tree_method": "gpu_hist"', "device_type", R, False, '"tree_method": "hist",', XGB_FALLBACK),
    C('"predictor": "gpu_predictor"', "device_type", X, False, None, XGB_FALLBACK),
    C('"sampling_method": "gradient_based"', "unsupported_op_workaround", R, False, '"sampling_method": "uniform",',
      "unconfirmed: gradient-based sampling is documented for the GPU hist updater only (dmlc/xgboost #7419); "
      "once training runs on the CPU it is ignored or rejected depending on the XGBoost version"),
    C("df = cudf.read_parquet(path)", "custom_cuda_extension", R, True, "df = pd.read_parquet(path)", RAPIDS),
    C("y = train[TARGET].to_pandas().values", "custom_cuda_extension", R, True, "y = train[TARGET].values",
      "follow-on of dropping cuDF: a pandas Series has no .to_pandas()"),
    C("dtrain = xgb.DeviceQuantileDMatrix(", "device_type", R, False, "dtrain = xgb.QuantileDMatrix(it, max_bin=params[\"max_bin\"])",
      "unconfirmed: DeviceQuantileDMatrix is the GPU-input quantile matrix (an alias of QuantileDMatrix in 1.7+)"),
    C("dvalid = xgb.DMatrix(data=cp.asarray(", "custom_cuda_extension", R, True,
      "dvalid = xgb.DMatrix(data=va[features].values, label=va[TARGET].values)", CUPY),
    C("y_va = va[TARGET].to_pandas().values", "custom_cuda_extension", R, True, "y_va = va[TARGET].values",
      "follow-on of dropping cuDF"),
    C("cp.get_default_memory_pool().free_all_blocks()", "custom_cuda_extension", X, True, None, CUPY),
    C("ids = test[ID_COL].to_pandas().values", "custom_cuda_extension", R, True, "ids = test[ID_COL].values",
      "follow-on of dropping cuDF"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)', "env_var", X, False, None,
      "nothing in this script runs on the NPU, so the variable is dead weight rather than a fault"),
    C('params["gpu_id"] = 0', "device_type", X, False, None, XGB_FALLBACK),
    C("y_all = train[TARGET].to_pandas().values", "custom_cuda_extension", R, True, "y_all = train[TARGET].values",
      "follow-on of dropping cuDF"),
    C("oof_df = pd.DataFrame({ID_COL: train[ID_COL].to_pandas().values", "custom_cuda_extension", R, True,
      'oof_df = pd.DataFrame({ID_COL: train[ID_COL].values, "oof": oof, TARGET: y_all})', "follow-on of dropping cuDF"),
  ])

LGBM_FATAL = ("not in /work/shared/knowledge; LightGBM has no NPU learner and stops with 'GPU Tree Learner was not "
              "enabled in this build' (or finds no OpenCL device) on a host without the NVIDIA/OpenCL stack "
              "(LightGBM issues #2222, #3696)")
LGBM_DEAD = "ignored by the CPU learner; removed with the GPU learner (cosmetic)"

E("lgbm_gpu_cv", "src/train_lgbm.py", "explicit_replacement",
  "Optiver/Ubiquant-style LightGBM GroupKFold trainer on the OpenCL GPU learner (plus LightGBM 4 CUDA learner switch)", [
    C('"device_type": "gpu",', "device_type", R, True, '"device_type": "cpu",', LGBM_FATAL),
    C('"gpu_platform_id": 0,', "device_type", X, False, None, LGBM_DEAD),
    C('"gpu_device_id": 0,', "device_type", X, False, None, LGBM_DEAD),
    C('"gpu_use_dp": False,', "device_type", X, False, None, LGBM_DEAD),
    C('params["device_type"] = "cuda"', "device_type", X, False, None,
      "only reached with --cuda-learner (off by default); the CUDA learner needs a CUDA build and device"),
    C('device="gpu",', "device_type", R, True, 'device="cpu",', LGBM_FATAL),
  ])

CATBOOST_FATAL = ("not in /work/shared/knowledge; CatBoost's GPU trainer is CUDA-only and raises 'GPU Device not "
                  "found' on a host without an NVIDIA GPU (catboost #219, #246)")

E("catboost_gpu_trainer", "src/models/catboost_model.py", "explicit_replacement",
  "Kaggle-pipeline CatBoost model wrapper (task_type='GPU', Poisson bootstrap, multi-card devices string)", [
    C('"bootstrap_type": "Poisson",', "unsupported_op_workaround", R, False, '"bootstrap_type": "Bernoulli",',
      "unconfirmed: CatBoost documents Poisson bootstrap as GPU-only (the file's own CPU branch swaps it for "
      "Bernoulli); needed once training moves to the CPU"),
    C('"task_type": "GPU",', "device_type", R, True, '"task_type": "CPU",', CATBOOST_FATAL),
    C('"devices": "0",', "device_type", X, False, None, "GPU-only option; dropped with task_type='GPU'"),
    C('"gpu_ram_part": 0.95,', "device_type", X, False, None, "GPU-only option; dropped with task_type='GPU'"),
    C('"gpu_cat_features_storage": "GpuRam",', "device_type", X, False, None,
      "GPU-only option; dropped with task_type='GPU'"),
    C("return dict(DEFAULT_PARAMS, devices=devices, gpu_ram_part=0.9)", "device_type", R, False,
      "return dict(DEFAULT_PARAMS, thread_count=-1)",
      "unconfirmed: multi-card devices string for the GPU refit; meaningless for the CPU trainer"),
  ])

CUML_SK = "cuML estimators need a CUDA device (RAPIDS, see knowledge §6 CuPy); the scikit-learn class is the drop-in"

E("cuml_stacking_pipeline", "pipelines/cuml_stack.py", "explicit_replacement",
  "RAPIDS cuML 'SVC + KNN + RF' Kaggle stacking kernel as a script (RMM pool, cupy output type, UMAP meta-features)", [
    C("=import cudf", "custom_cuda_extension", X, True, None, RAPIDS),
    C("=import cupy as cp", "custom_cuda_extension", X, True, None, CUPY),
    C("=import rmm", "custom_cuda_extension", X, True, None, RAPIDS),
    C("=import cuml", "custom_cuda_extension", X, True, None, RAPIDS),
    C("from cuml.ensemble import RandomForestClassifier as cuRF", "custom_cuda_extension", R, True,
      "from sklearn.ensemble import RandomForestClassifier as cuRF", CUML_SK),
    C("from cuml.linear_model import LogisticRegression", "custom_cuda_extension", R, True,
      "from sklearn.linear_model import LogisticRegression", CUML_SK),
    C("from cuml.manifold import UMAP", "custom_cuda_extension", R, True, "from umap import UMAP  # umap-learn", CUML_SK),
    C("from cuml.neighbors import KNeighborsClassifier", "custom_cuda_extension", R, True,
      "from sklearn.neighbors import KNeighborsClassifier", CUML_SK),
    C("from cuml.preprocessing import StandardScaler", "custom_cuda_extension", R, True,
      "from sklearn.preprocessing import StandardScaler", CUML_SK),
    C("from cuml.svm import SVC", "custom_cuda_extension", R, True, "from sklearn.svm import SVC", CUML_SK),
    C("rmm.reinitialize(pool_allocator=True", "custom_cuda_extension", X, True, None, RAPIDS),
    C('cuml.set_global_output_type("cupy")', "custom_cuda_extension", X, True, None, RAPIDS),
    C("n_bins=128,", "custom_cuda_extension", X, True, None,
      "cuML-only RandomForest argument; scikit-learn's RandomForestClassifier rejects it (TypeError)"),
    C("n_streams=4,", "custom_cuda_extension", X, True, None,
      "cuML-only RandomForest argument (CUDA streams); scikit-learn rejects it (TypeError)"),
    C("if isinstance(a, cp.ndarray):", "custom_cuda_extension", X, True, None, CUPY),
    C("return cp.asnumpy(a)", "custom_cuda_extension", X, True, None, CUPY),
    C("if isinstance(a, (cudf.Series, cudf.DataFrame)):", "custom_cuda_extension", R, True,
      "if isinstance(a, (pd.Series, pd.DataFrame)):", RAPIDS),
    C("return cudf.DataFrame(emb, columns=cols)", "custom_cuda_extension", R, True,
      "return pd.DataFrame(emb, columns=cols)", RAPIDS),
    C("train, test = (cudf.read_csv(p)", "custom_cuda_extension", R, True,
      "train, test = (pd.read_csv(p) for p in (args.train, args.test))", RAPIDS),
    C("x_all = cudf.concat([train[feats]", "custom_cuda_extension", R, True,
      'x_all = pd.concat([train[feats], test[feats]], ignore_index=True).astype("float32")', RAPIDS),
    C("x_all = cudf.DataFrame(scaler.fit_transform", "custom_cuda_extension", R, True,
      "x_all = pd.DataFrame(scaler.fit_transform(x_all), columns=feats)", RAPIDS),
    C("x_all = cudf.concat([x_all, emb], axis=1)", "custom_cuda_extension", R, True,
      "x_all = pd.concat([x_all, emb], axis=1)", RAPIDS),
    C("cp.get_default_memory_pool().free_all_blocks()", "custom_cuda_extension", X, True, None, CUPY),
    C("ids = test[args.id_col].to_pandas()", "custom_cuda_extension", R, True, "ids = test[args.id_col]",
      "follow-on of dropping cuDF: pandas has no .to_pandas()"),
  ])

E("dask_cuda_xgb", "scripts/dask_xgb_multi_gpu.py", "explicit_replacement",
  "dask-cuda / XGBoost multi-GPU example (LocalCUDACluster with RMM pool, UCX + NVLink, dask-cuDF partitions)", [
    C("=import dask_cudf", "custom_cuda_extension", R, True, "import dask.dataframe as dd", RAPIDS),
    C("from dask_cuda import LocalCUDACluster", "custom_cuda_extension", R, True,
      "from dask.distributed import LocalCluster", RAPIDS),
    C("cluster = LocalCUDACluster(", "custom_cuda_extension", R, True, "cluster = LocalCluster(", RAPIDS),
    C("CUDA_VISIBLE_DEVICES=args.gpus,", "env_var", X, True, None,
      "LocalCUDACluster-only argument (pins one GPU per worker); the CPU LocalCluster has no such parameter"),
    C('rmm_pool_size="24GB",', "custom_cuda_extension", X, True, None,
      "RMM device-memory pool: LocalCUDACluster-only argument, RAPIDS-only allocator"),
    C('protocol="ucx",', "custom_cuda_extension", X, False, None,
      "unconfirmed: UCX transport needs ucx-py; on a CPU cluster the default tcp transport is the natural choice"),
    C("enable_nvlink=True,", "custom_cuda_extension", X, True, None,
      "NVLink transport flag of LocalCUDACluster; not a LocalCluster parameter and no NVLink on an Ascend host"),
    C("ddf = dask_cudf.read_parquet(path", "custom_cuda_extension", R, True,
      'ddf = dd.read_parquet(path, blocksize="512MiB")', RAPIDS),
    C('"tree_method": "gpu_hist",', "device_type", R, False, '"tree_method": "hist",', XGB_FALLBACK),
  ])

E("cudf_feature_engineering", "features/build_features.py", "explicit_replacement",
  "Kaggle IEEE-fraud-style feature builder: cuDF frames (guarded), CuPy target encoding, torch group statistics on the GPU", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "the tensors move to npu:0 and torch.npu.synchronize is used"),
    C("=import cupy as cp", "custom_cuda_extension", X, True, None, CUPY),
    C('DEVICE = torch.device("cuda:0")', "device_type", R, True, 'DEVICE = torch.device("npu:0")',
      "a 'cuda' device fails on a torch build without CUDA"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "torch.cuda.synchronize needs a CUDA build ('Torch not compiled with CUDA enabled')"),
    C("bounds = torch.nanquantile(x, qs, dim=0)", "unsupported_op_workaround", R, True,
      "bounds = torch.nanquantile(x.cpu(), qs.cpu(), dim=0).to(x.device)",
      "torch.nanquantile is ✘ in Ascend's 2.7.1 API list and in msFmkTransplt's unsupported list"),
    C("maxes = torch.scatter_reduce(", "unsupported_op_workaround", R, True,
      "maxes = torch.scatter_reduce(maxes.cpu(), 0, idx.cpu(), vals.cpu(), reduce=\"amax\", include_self=True).to(values.device)",
      "torch.scatter_reduce is ✘ in Ascend's 2.7.1 list / msFmkTransplt unsupported list and has no NPU kernel"),
    C("codes = cp.asarray(", "custom_cuda_extension", R, True,
      "codes = torch.as_tensor(train[col].to_numpy(), dtype=torch.int64, device=DEVICE)", CUPY),
    C("y = cp.asarray(", "custom_cuda_extension", R, True,
      "y = torch.as_tensor(train[TARGET].to_numpy(), dtype=torch.float32, device=DEVICE)", CUPY),
    C("cnt = cp.bincount(", "custom_cuda_extension", R, True,
      "cnt = torch.bincount(codes, minlength=n_cat).float()", CUPY),
    C("pos = cp.bincount(", "custom_cuda_extension", R, True,
      "pos = torch.bincount(codes, weights=y, minlength=n_cat).float()", CUPY),
    C("enc_t = torch.from_dlpack(enc)", "custom_cuda_extension", R, False, "enc_t = enc",
      "unconfirmed: the DLPack hop existed to share CuPy memory with torch; DLPack export of NPU tensors is not documented in knowledge"),
    C("return enc_t[torch.from_dlpack(codes)], enc_t[test_codes]", "custom_cuda_extension", R, False,
      "return enc_t[codes], enc_t[test_codes]", "unconfirmed: same DLPack hop as above"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only frees the NPU cache once renamed"),
  ])

E("tabnet_utils", "pytorch_tabnet/utils.py", "device_branch_or_abstraction",
  "dreamquark-ai/tabnet pytorch_tabnet/utils.py (datasets, samplers, define_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu  # noqa: F401",
      "the new branch in define_device queries torch.npu"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      'if torch.cuda.is_available():\n            return "cuda"\n        elif torch.npu.is_available():\n            return "npu"',
      "device_name='auto' (the fit() default) resolves to 'cpu' on an NPU host: silent CPU training"),
    C('elif device_name == "cuda" and not torch.cuda.is_available():', "device_type", B, False,
      'elif device_name == "cuda" and not torch.cuda.is_available():\n        return "npu" if torch.npu.is_available() else "cpu"',
      "lets existing device_name='cuda' configs land on the NPU instead of the CPU; explicit 'npu' already passes through"),
  ])

E("tabnet_pretrain_script", "scripts/pretrain_tabnet.py", "explicit_replacement",
  "pytorch-tabnet census pretraining example notebook as a script (TabNetPretrainer -> TabNetClassifier)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "torch.npu is referenced by the ported DEVICE line"),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "on an NPU host this silently picks the CPU for every TabNet model"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA; the NPU generators stay unseeded until renamed"),
    C('if DEVICE == "cuda":', "device_type", R, False, 'if DEVICE == "npu":', "log line only"),
    C('print(f"training on {torch.cuda.get_device_name(0)}")', "torch_cuda_api", R, False,
      'print(f"training on {torch.npu.get_device_name(0)}")', "only reached inside the branch above"),
    C('device_name="cuda",', "device_type", R, True, 'device_name=DEVICE,',
      "pytorch-tabnet's define_device turns 'cuda' into 'cpu' when CUDA is absent: the regressor silently trains on the CPU"),
  ])

E("rtdl_lib_util", "lib/util.py", "explicit_replacement",
  "yandex-research/rtdl revisiting-models lib/util.py (get_device, NVML environment report, OOM detection)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "get_device and the memory helpers move to torch.npu"),
    C('return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'return torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "every bin/*.py script takes its device from here: silent CPU training on an NPU host"),
    C("pynvml.nvmlInit()", "torch_cuda_api", R, False,
      "props = [torch.npu.get_device_properties(i) for i in range(torch.npu.device_count())]",
      "NVML has no NPU counterpart (knowledge §6); only reached from the CUDA-guarded report block, so never on an NPU host"),
    C('"CUDA out of memory",', "torch_cuda_api", B, False, '"NPU out of memory",',
      "unconfirmed: the NPU OOM message text is not in knowledge; without it the eval-batch halving never triggers on NPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued and harmless without CUDA"),
    C("return torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", R, False,
      "return torch.npu.max_memory_allocated() / 2 ** 20",
      "without CUDA initialised memory_stats() is empty and this reports 0: wrong figure, no crash"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device first: raises 'Torch not compiled with CUDA enabled'"),
    C("if torch.cuda.is_available():  # type: ignore[code]", "device_type", R, False,
      "if torch.npu.is_available():",
      "environment report only: on an NPU host the block is skipped and runs record no device information"),
    C('"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),', "env_var", R, False,
      '"ASCEND_RT_VISIBLE_DEVICES": os.environ.get("ASCEND_RT_VISIBLE_DEVICES"),', "report metadata only"),
    C('"adamw": torch.optim.AdamW,', "fused_optimizer", R, False, '"adamw": torch_npu.optim.NpuFusedAdamW,',
      "performance only (msFmkTransplt advice)"),
  ])

E("rtdl_ft_transformer_bin", "bin/ft_transformer.py", "explicit_replacement",
  "yandex-research/rtdl revisiting-models bin/ft_transformer.py (FT-Transformer model + zero training loop)", [
    C("return a * F.gelu(b)", "npu_fused_op", R, False, "return torch_npu.npu_geglu(x, dim=-1, approximate=0)[0]",
      "performance only; unconfirmed which half npu_geglu activates (activate_left=False assumed to match a * gelu(b))"),
    C("if torch.cuda.device_count() > 1:  # type: ignore[code]", "torch_cuda_api", X, False, None,
      "returns 0 on an NPU host, so the multi-card branch is silently skipped (one NPU used)"),
    C("model = nn.DataParallel(model)", "distributed_framework", X, False, None,
      "nn.DataParallel is ✘ on NPU; only reached through the branch above, which the unchanged code never takes there"),
    C("grad_scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", R, True,
      "grad_scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "with training.amp = true the CUDA scaler disables itself on an NPU host, so the amp option silently does nothing"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=use_amp):',
      "CUDA autocast does not cover NPU tensors: the amp option silently runs fp32"),
  ])

E("saint_train", "train.py", "explicit_replacement",
  "somepago/saint train.py (OpenML datasets, contrastive pre-training switch, row-level mixup helper)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu",
      "needed for the npu device chosen below"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silent CPU training on an NPU host"),
    C("index = torch.randperm(batch_size).cuda()", "tensor_to_device", R, True,
      "index = torch.randperm(batch_size, device=x1.device)",
      "use_cuda defaults to True and the call site does not pass it: .cuda() fails without a CUDA build "
      "(reached whenever --pt_aug mixup is given)"),
  ])

E("pytorch_tabular_example", "examples/covertype_gandalf.py", "transfer_to_npu",
  "manujosephv/pytorch_tabular example script (GANDALF / FT-Transformer on Covertype, Lightning accelerator='gpu')", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "without it Lightning's accelerator='gpu' finds no CUDA device and raises; with it torch.cuda.*, "
      "'cuda' devices, map_location and CUDA autocast are routed to the NPU (knowledge §2)"),
    C('torch.cuda.nvtx.range_push(f"epoch{trainer.current_epoch}")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start(f"epoch{trainer.current_epoch}")',
      "torch.cuda.nvtx is not aliased by transfer_to_npu (knowledge §2.1) and raises without a CUDA build; "
      "mstx method names unconfirmed"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(range_id)",
      "same as range_push"),
  ])

E("skorch_gridsearch", "examples/skorch_tabular_search.py", "explicit_replacement",
  "skorch tabular example: NeuralNetClassifier in a scikit-learn GridSearchCV pipeline (+ AccelerateMixin fp16 refit)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "needed for the npu device below"),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "skorch moves the module to DEVICE: the whole grid search silently runs on the CPU on an NPU host"),
    C('device="cuda:0",', "device_type", R, True, 'device="npu:0",',
      "skorch calls module.to('cuda:0'): fails on a torch build without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
  ])

E("optuna_gpu_study", "tuning/optuna_study.py", "explicit_replacement",
  "Optuna GPU-per-trial study (XGBoost pruning callback + residual MLP, round-robin cards, RDB worker mode)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = sys.argv[sys.argv.index("--worker-gpu") + 1]',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (knowledge: ascend-distributed §1): every worker would land on npu:0"),
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "torch.npu is used below"),
    C("N_GPUS = torch.cuda.device_count()", "torch_cuda_api", R, True, "N_GPUS = torch.npu.device_count()",
      "0 on an NPU host: trial.number % N_GPUS raises ZeroDivisionError and study.optimize gets n_jobs=0"),
    C('"tree_method": "gpu_hist",', "device_type", R, False, '"tree_method": "hist",', XGB_FALLBACK),
    C('"gpu_id": gpu,', "device_type", X, False, None, XGB_FALLBACK),
    C('device = torch.device(f"cuda:{gpu}")', "device_type", R, True, 'device = torch.device(f"npu:{gpu}")',
      "a 'cuda' device fails on a torch build without CUDA"),
    C("with torch.cuda.device(gpu):", "torch_cuda_api", R, True, "with torch.npu.device(gpu):",
      "torch.cuda.device needs a CUDA build"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False,
      'except RuntimeError as err:  # NPU OOM is not torch.cuda.OutOfMemoryError',
      "unconfirmed: the exception type raised on NPU OOM is not in knowledge; OOM trials would fail instead of being pruned"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "silent no-op without CUDA"),
  ])

RAY_RES = ("Ray finds no GPUs on an Ascend host, so work that asks for one stays PENDING forever; Ray's 'NPU' "
           "resource name comes from Ray's accelerator support, not from knowledge (unconfirmed)")

E("ray_tune_tabular", "tuning/ray_tune_ft.py", "explicit_replacement",
  "Ray Tune ASHA search over rtdl FTTransformer + Ray Train TorchTrainer DDP refit", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "torch.npu is used below"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU trials on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "the CUDA scaler disables itself without CUDA: no loss scaling"),
    C("with torch.cuda.amp.autocast():", "amp", R, True, 'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "CUDA autocast does not cover NPU tensors: silent fp32"),
    C("model = ray.train.torch.prepare_model(model)", "distributed_framework", R, False,
      'model = DDP(model.to(f"npu:{local_rank}"), device_ids=[local_rank])',
      "unconfirmed: whether Ray Train's prepare_model / get_device place modules on NPUs is not in knowledge"),
    C('trainable = tune.with_resources(trainable, {"cpu": 4, "gpu": 1})', "device_type", R, True,
      'trainable = tune.with_resources(trainable, {"cpu": 4, "NPU": 1})', RAY_RES),
    C('state = torch.load(os.path.join(d, "model.pt"), map_location="cuda")', "device_type", R, True,
      'state = torch.load(os.path.join(d, "model.pt"), map_location="cpu")',
      "deserialising onto 'cuda' fails when torch.cuda.is_available() is False"),
    C("scaling_config=ScalingConfig(num_workers=args.refit_workers, use_gpu=True),", "device_type", R, True,
      'scaling_config=ScalingConfig(num_workers=args.refit_workers, resources_per_worker={"NPU": 1}),', RAY_RES),
    C('torch_config=TorchConfig(backend="nccl"),', "dist_backend", R, True, 'torch_config=TorchConfig(backend="hccl"),',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
  ])

E("kaggle_moa_notebook", "notebooks/moa-pytorch-rankgauss-resnet.py", "explicit_replacement",
  "Kaggle MoA (lish-moa) public notebook exported with nbconvert: RankGauss + PCA + weight-normed MLP with AMP", [
    C("get_ipython().system('nvidia-smi')", "torch_cuda_api", R, False, "get_ipython().system('npu-smi info')",
      "prints 'command not found' on an Ascend host and the notebook carries on (knowledge §6: npu-smi replaces nvidia-smi)"),
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "needed for the npu DEVICE"),
    C('DEVICE = ("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'DEVICE = ("npu" if torch.npu.is_available() else "cpu")', "silent CPU training on an NPU host"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA"),
    C("with torch.cuda.amp.autocast():", "amp", R, True, 'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "CUDA autocast does not cover NPU tensors: silent fp32 while the scaler is configured for fp16"),
    C("nn.utils.clip_grad_norm(model.parameters(), 1000)", "unsupported_op_workaround", R, False,
      "nn.utils.clip_grad_norm_(model.parameters(), 1000)",
      "the deprecated alias is ✘ in Ascend's 2.7.1 list while clip_grad_norm_ is ✔; unconfirmed that the alias actually fails"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()",
      "the CUDA scaler disables itself without CUDA: no loss scaling"),
    C("model.load_state_dict(torch.load(path))", "tensor_to_device", R, True,
      "model.load_state_dict(torch.load(path, map_location=DEVICE))",
      "with TRAIN = False the weights come from a Kaggle dataset saved from CUDA tensors: deserialising them "
      "fails when torch.cuda.is_available() is False"),
  ])

E("ft_transformer_ddp", "train_ddp.py", "explicit_replacement",
  "torchrun DDP trainer for an FT-Transformer-style CTR model (memmap data, bf16 autocast, SDPA flash kernel, CUDA events)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "hccl and torch.npu need torch_npu"),
    C("with torch.backends.cuda.sdp_kernel(enable_flash=True", "attention_kernel", X, True, None,
      "torch.backends.cuda.sdp_kernel is ✘ in Ascend's list and msFmkTransplt's unsupported list; SDPA alone dispatches to NPU FA"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", R, True, 'dist.init_process_group(backend="hccl")',
      "no NCCL on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "needs a CUDA build"),
    C('return torch.device("cuda") if dist.get_backend() == "nccl" else torch.device("cpu")', "dist_backend", R, True,
      'return torch.device("npu") if dist.get_backend() == "hccl" else torch.device("cpu")',
      "backend-string comparisons are not rewritten (knowledge §2.4): with hccl this would hand HCCL host tensors"),
    C('=with torch.autocast(device_type="cuda", dtype=torch.bfloat16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):',
      "autocast for 'cuda' does not touch NPU tensors: evaluation silently runs fp32"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True, 'device = torch.device("npu", local_rank)',
      "a 'cuda' device fails without a CUDA build"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", R, False,
      'model = torch.compile(model, backend="npugraphs")',
      "only with --compile; max-autotune's Triton autotuning targets CUDA (knowledge: npugraphs backend on NPU)"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):  # bf16 on A100/H100', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.bfloat16):',
      "autocast for 'cuda' does not touch NPU tensors: training silently runs fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C("peak mem {torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      'f"(wall {time.time() - t0:.0f}s, peak mem {torch.npu.max_memory_allocated() / 2**30:.1f} GiB)")',
      "reports 0 without CUDA initialised: wrong log figure, no crash"),
  ])

TRITON_TUNE = ("performance only, unconfirmed: triton-ascend runs Triton kernels on NPU but warp / stage "
               "semantics and good tile sizes differ (knowledge §6 only says kernels need porting)")

E("triton_ple_embedding", "tabkit/kernels/ple_embedding.py", "kernel_rewrite",
  "Triton fused piecewise-linear-encoding embedding for numerical features (rtdl / tabular-dl-num-embeddings PLE)", [
    C('triton.Config({"BLOCK_B": 32, "BLOCK_D": 64}, num_warps=4, num_stages=2),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_B": 32, "BLOCK_D": 64}),', TRITON_TUNE),
    C('triton.Config({"BLOCK_B": 64, "BLOCK_D": 64}, num_warps=4, num_stages=3),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_B": 64, "BLOCK_D": 64}),', TRITON_TUNE),
    C('triton.Config({"BLOCK_B": 64, "BLOCK_D": 128}, num_warps=8, num_stages=3),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_B": 64, "BLOCK_D": 128}),', TRITON_TUNE),
    C('triton.Config({"BLOCK_B": 128, "BLOCK_D": 128}, num_warps=8, num_stages=4),', "triton_kernel_tuning", R, False,
      'triton.Config({"BLOCK_B": 128, "BLOCK_D": 128}),', TRITON_TUNE),
    C("return torch.cuda.get_device_properties(device).multi_processor_count", "device_capability_check", R, True,
      "return torch.npu.get_device_properties(device).vector_core_num",
      "NPU device properties have no multi_processor_count (knowledge §2.8: name, total_memory, L2_cache_size, "
      "cube_core_num, vector_core_num only); torch.cuda.* needs a CUDA build anyway"),
    C("major, _ = torch.cuda.get_device_capability(x.device)", "device_capability_check", R, True,
      "return torch.bfloat16  # Atlas A2/A3 support bf16",
      "get_device_capability returns None on NPU unless TORCH_NPU_DEVICE_CAPABILITY is set (knowledge §2.8): unpacking fails"),
    C('assert x.is_cuda, "the Triton PLE kernel runs on CUDA tensors only"', "device_type", R, True,
      'assert x.device.type in ("cuda", "npu"), "the Triton PLE kernel needs an accelerator tensor"',
      "is_cuda is False for NPU tensors: every fused forward on NPU hits the assertion"),
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", R, False,
      "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "unconfirmed: the CUDA decorator does not see NPU autocast, so fp16 inputs would reach the fp32 kernel uncast"),
    C("@torch.cuda.amp.custom_bwd", "amp", R, False, "@torch.npu.amp.custom_bwd", "pairs with custom_fwd"),
  ])

NO_NVCC = ("custom CUDA extensions have no nvcc path on Ascend (knowledge §6): the .cu kernels need an Ascend C / "
           "NpuExtension rewrite; the port builds the C++ CPU kernels and lets the wrapper fall back to torch ops on NPU")

E("tabkit_setup", "setup.py", "explicit_replacement",
  "setup.py of a tabular-kernels package building a CUDAExtension (nvcc version probe, arch list, triton dependency)", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME", "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension", NO_NVCC),
    C('os.environ.setdefault("TORCH_CUDA_ARCH_LIST"', "env_var", X, False, None, "ignored once nothing is built with nvcc"),
    C("cuda_ver = nvcc_version()", "custom_cuda_extension", X, True, None,
      "raises 'tabkit needs the CUDA toolkit' on a host without CUDA_HOME: the install fails"),
    C('print(f"building tabkit._C with nvcc {cuda_ver}"', "custom_cuda_extension", X, True, None,
      "follow-on of removing the nvcc probe (cuda_ver no longer exists)"),
    C('"csrc/cuda/quantile_bin_kernel.cu",', "custom_cuda_extension", X, True, None, NO_NVCC),
    C('"csrc/cuda/histogram_kernel.cu",', "custom_cuda_extension", X, True, None, NO_NVCC),
    C('"csrc/cuda/ple_backward_kernel.cu",', "custom_cuda_extension", X, True, None, NO_NVCC),
    C("=CUDAExtension(", "custom_cuda_extension", R, True, "CppExtension(", NO_NVCC),
    C('define_macros=[("WITH_CUDA", None)],', "custom_cuda_extension", X, True, None,
      "the binding would register the CUDA launchers that are no longer compiled (undefined symbols)"),
    C('"triton>=2.1",', "triton_kernel_tuning", R, True, '"triton-ascend",',
      "NVIDIA Triton has no NPU driver; triton-ascend is the package that runs Triton kernels on Ascend (knowledge §6)"),
    C('"rapids": ["cudf-cu12>=24.02"', "custom_cuda_extension", X, False, None,
      "optional extra, not installed by default; RAPIDS/CuPy have no Ascend build"),
  ])

E("tabkit_binning_ext", "tabkit/ops/binning.py", "explicit_replacement",
  "Python wrapper over a compiled tabular-kernels extension (quantile binning, GBDT gradient histograms on a side stream)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu  # noqa: F401",
      "the ported branches use torch.npu streams"),
    C("if x.is_cuda:", "custom_cuda_extension", B, True,
      'if x.device.type == "npu":\n        return torch.searchsorted(edges.contiguous(), x.t().contiguous(), right=True).t().to(torch.uint8)',
      "NPU tensors are not is_cuda, so they reach the CPU kernel of tabkit._C, which rejects device tensors; "
      "searchsorted is ✔ on NPU"),
    C("if grad.is_cuda:", "custom_cuda_extension", B, True,
      'if grad.device.type == "npu":\n        return histogram_reference(grad, hess, bins, node_ids, n_nodes, n_bins)',
      "same: the CUDA histogram kernel has no NPU build; the index_add_ reference runs on NPU"),
    C("self._side_stream = torch.cuda.Stream(device=device)", "torch_cuda_api", R, True,
      "self._side_stream = torch.npu.Stream(device=device)", "CUDA streams need a CUDA build"),
    C("self._side_stream.wait_stream(torch.cuda.current_stream(self.device))", "torch_cuda_api", R, True,
      "self._side_stream.wait_stream(torch.npu.current_stream(self.device))", "CUDA streams need a CUDA build"),
    C("with torch.cuda.stream(self._side_stream):", "torch_cuda_api", R, True, "with torch.npu.stream(self._side_stream):",
      "CUDA streams need a CUDA build"),
    C("torch.cuda.current_stream(self.device).wait_stream(self._side_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.device).wait_stream(self._side_stream)", "CUDA streams need a CUDA build"),
  ])

FAISS_HOST = ("faiss has no NPU build (not in knowledge): on an npu device the code takes the CPU IndexFlatL2 branch, and "
              "faiss.contrib.torch_utils passes the tensor's data_ptr straight to it, i.e. NPU memory read as host memory; "
              "keys must be copied to the host and the results moved back")

E("tabr_faiss_retrieval", "lib/tabr.py", "explicit_replacement",
  "yandex-research/tabular-dl-tabr TabR model (faiss GPU flat-L2 context retrieval through faiss.contrib.torch_utils)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "torch.npu is used by get_device"),
    C('return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'return torch.device("npu:0" if torch.npu.is_available() else "cpu")', "silent CPU training on an NPU host"),
    C("return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16", "amp", R, False,
      "return torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
      "unconfirmed: without CUDA recent torch reports no bf16 and amp silently uses fp16 (older torch raises)"),
    C("self.search_index.add(candidate_k)", "unsupported_op_workaround", R, True,
      "self.search_index.add(candidate_k.float().cpu())", FAISS_HOST),
    C("distances, context_idx = self.search_index.search(k, context_size", "unsupported_op_workaround", R, True,
      "distances, context_idx = (t.to(device) for t in self.search_index.search(k.float().cpu(), context_size + (1 if is_train else 0)))",
      FAISS_HOST),
  ])

E("gbdt_inference_server", "serving/gbdt_server.py", "explicit_replacement",
  "FastAPI scoring service: XGBoost compiled to tensors with microsoft/hummingbird on the GPU (cuML FIL behind a flag)", [
    C('os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")', "env_var", X, False, None, "CUDA-runtime setting, inert on Ascend"),
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu", "the compiled trees run on npu"),
    C('self.booster.set_param({"device": "cuda"})', "device_type", R, False, 'self.booster.set_param({"device": "cpu"})',
      XGB_FALLBACK),
    C('self.hb.to("cuda")', "tensor_to_device", R, True, 'self.hb.to("npu")',
      "moving the Hummingbird container to 'cuda' fails without CUDA; unconfirmed that Hummingbird's own device "
      "checks accept 'npu' (else move self.hb.model)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "needs a CUDA build"),
    C('return torch.from_numpy(arr).pin_memory().to("cuda", non_blocking=True)', "tensor_to_device", R, True,
      'return torch.from_numpy(arr).pin_memory().to("npu", non_blocking=True)', "a 'cuda' target fails without CUDA"),
    C("with torch.inference_mode(), torch.cuda.amp.autocast(dtype=torch.float16):", "amp", R, True,
      'with torch.inference_mode(), torch.autocast(device_type="npu", dtype=torch.float16):',
      "CUDA autocast does not cover NPU tensors: silent fp32 scoring"),
    C('"gpu": torch.cuda.is_available(),', "torch_cuda_api", R, False, '"npu": torch.npu.is_available(),',
      "health report only"),
  ])

E("ctgan_synthesizer", "ctgan/synthesizers/ctgan.py", "device_branch_or_abstraction",
  "sdv-dev/CTGAN ctgan/synthesizers/ctgan.py (cuda=True constructor flag, gumbel-softmax activations, WGAN-GP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch\nimport torch_npu  # noqa: F401",
      "the new device branch queries torch.npu"),
    C("if not cuda or not torch.cuda.is_available():", "device_type", B, True,
      'if cuda and hasattr(torch, "npu") and torch.npu.is_available():\n            device = cuda if isinstance(cuda, str) else "npu"\n        elif not cuda or not torch.cuda.is_available():',
      "CTGAN(cuda=True) (the default) silently trains on the CPU on an NPU host"),
    C("transformed = functional.gumbel_softmax(logits, tau=tau, hard=hard, eps=eps, dim=dim)",
      "unsupported_op_workaround", R, True,
      "transformed = functional.softmax((logits - torch.empty_like(logits).exponential_().log()) / tau, dim=dim)",
      "F.gumbel_softmax is ✘ in Ascend's 2.7.1 list and in msFmkTransplt's unsupported list"),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "a loaded synthesizer is moved to the CPU on an NPU host"),
  ])

E("tabular_gpu_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a Kaggle tabular stack pinned to cu121 torch wheels plus RAPIDS, faiss-gpu and Triton", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheels of torch are the wrong build for torch_npu, which pairs with the CPU torch wheel on x86 (knowledge §1.1)"),
    C("torch==2.1.2+cu121", "import_torch_npu", R, True, "torch==2.1.0\ntorch-npu==2.1.0.post17",
      "torch_npu ships for 2.1.0 (not 2.1.2) and its wheel version must equal torch's (knowledge §1.1-1.2)"),
    C("lightgbm==4.3.0 --config-settings=cmake.define.USE_CUDA=ON", "custom_cuda_extension", R, True, "lightgbm==4.3.0",
      "the CUDA learner build needs the CUDA toolkit: the install fails on an Ascend host"),
    C("=cudf-cu12==24.2.*", "custom_cuda_extension", X, True, None, RAPIDS),
    C("cuml-cu12==24.2.*", "custom_cuda_extension", X, True, None, RAPIDS),
    C("dask-cudf-cu12==24.2.*", "custom_cuda_extension", X, True, None, RAPIDS),
    C("dask-cuda==24.2.*", "custom_cuda_extension", X, True, None, RAPIDS),
    C("cupy-cuda12x==13.0.0", "custom_cuda_extension", X, True, None, CUPY),
    C("faiss-gpu==1.7.2", "custom_cuda_extension", R, True, "faiss-cpu==1.7.4",
      "the GPU faiss build needs CUDA; the CPU build is what the ported TabR retrieval uses"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "NVIDIA Triton has no NPU driver; triton-ascend runs Triton kernels on Ascend (knowledge §6)"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart (knowledge §6); only the CUDA-guarded report path imports it"),
  ])

E("rapids_conda_env", "environment.yml", "explicit_replacement",
  "RAPIDS + PyTorch conda environment.yml (rapidsai / nvidia channels, pytorch-cuda, py-xgboost-gpu, faiss-gpu)", [
    C("=- rapidsai", "custom_cuda_extension", X, False, None, "channel only needed for the RAPIDS packages removed below"),
    C("=- nvidia", "custom_cuda_extension", X, False, None, "CUDA runtime channel; nothing from it is needed on Ascend"),
    C("=- cuda-version=12.0", "custom_cuda_extension", X, False, None, "CUDA runtime pin, meaningless on Ascend"),
    C("=- cudf=24.02", "custom_cuda_extension", X, True, None, RAPIDS),
    C("=- cuml=24.02", "custom_cuda_extension", X, True, None, RAPIDS),
    C("=- dask-cuda=24.02", "custom_cuda_extension", X, True, None, RAPIDS),
    C("=- cupy>=12.0", "custom_cuda_extension", X, True, None, CUPY),
    C("=- pytorch=2.1.2", "import_torch_npu", R, True, "- pytorch=2.1.0=*cpu*",
      "torch_npu needs the CPU build of torch at a version it ships for (2.1.0, not 2.1.2; knowledge §1.2)"),
    C("=- pytorch-cuda=12.1", "import_torch_npu", R, True, "- cpuonly",
      "selects the CUDA build of pytorch; torch-npu==2.1.0.post17 goes into the pip list instead"),
    C("=- nccl", "dist_backend", X, False, None, "NCCL is unused on Ascend (HCCL comes with CANN)"),
    C("=- py-xgboost-gpu=2.0.3", "device_type", R, False, "- py-xgboost=2.0.3", XGB_FALLBACK),
    C("=- faiss-gpu=1.7.4", "custom_cuda_extension", R, True, "- faiss-cpu=1.7.4",
      "the GPU faiss build needs CUDA"),
    C("=- pip:", "import_torch_npu", A, True, "- pip:\n      - torch-npu==2.1.0.post17",
      "torch_npu is a pip wheel (knowledge §1.1); added at the top of the pip list"),
    C("=- triton==2.1.0", "triton_kernel_tuning", R, True, "- triton-ascend",
      "NVIDIA Triton has no NPU driver (knowledge §6)"),
  ])

E("kaggle_gpu_dockerfile", "docker/Dockerfile.gpu", "explicit_replacement",
  "GPU training Dockerfile for a tabular pipeline (NGC PyTorch base, OpenCL ICD for LightGBM, RAPIDS from pypi.nvidia.com)", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "import_torch_npu", R, True,
      "FROM <CANN + torch + torch_npu base image for the target Atlas host>",
      "the NGC image carries CUDA torch; the Ascend image must bring CANN, the CPU torch build and torch_npu"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, True, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; the Ascend Docker Runtime mounts NPUs from ASCEND_VISIBLE_DEVICES "
      "(knowledge: ascend-distributed §1)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container runtime setting"),
    C("ENV CUDA_MODULE_LOADING=LAZY", "env_var", X, False, None, "CUDA runtime setting, inert on Ascend"),
    C('RUN mkdir -p /etc/OpenCL/vendors && echo "libnvidia-opencl.so.1"', "device_type", X, False, None,
      "registers the NVIDIA OpenCL driver for LightGBM's GPU learner; nothing to register on Ascend"),
    C("RUN pip install --no-binary lightgbm lightgbm==4.3.0 --config-settings=cmake.define.USE_GPU=ON", "device_type", R, False,
      "RUN pip install lightgbm==4.3.0",
      "the OpenCL build compiles without a GPU; it is the device='gpu' parameter that fails at run time"),
    C("RUN pip install --extra-index-url=https://pypi.nvidia.com", "custom_cuda_extension", X, True, None, RAPIDS),
    C("cudf-cu12==24.2.* cuml-cu12==24.2.* dask-cuda==24.2.*", "custom_cuda_extension", X, True, None,
      "continuation of the RAPIDS install line"),
    C("HEALTHCHECK --interval=60s --timeout=10s CMD nvidia-smi", "torch_cuda_api", R, True,
      "HEALTHCHECK --interval=60s --timeout=10s CMD npu-smi info > /dev/null || exit 1",
      "no nvidia-smi on an Ascend host: the container is always reported unhealthy (knowledge §6: npu-smi)"),
  ])

SMI = ("nvidia-smi does not exist on an Ascend host (knowledge §6: npu-smi); under set -euo pipefail the failed "
       "command substitution aborts the script. npu-smi query flags in the ported line are unconfirmed")

E("optuna_multi_gpu_launch", "scripts/launch_optuna_workers.sh", "explicit_replacement",
  "shell launcher starting one Optuna RDB worker per free GPU (nvidia-smi queries, CUDA_VISIBLE_DEVICES pinning)", [
    C("export CUDA_DEVICE_ORDER=PCI_BUS_ID", "env_var", X, False, None, "CUDA enumeration setting, inert on Ascend"),
    C("N_GPUS=$(nvidia-smi --query-gpu=name", "torch_cuda_api", R, True,
      'N_GPUS=$(npu-smi info -l | grep -c "NPU ID")', SMI),
    C("free=$(nvidia-smi --query-gpu=memory.free", "torch_cuda_api", R, True,
      'free=$(python -c "import torch, torch_npu; print(torch.npu.mem_get_info(${i})[0] // 2**20)")', SMI),
    C("CUDA_VISIBLE_DEVICES=${i} nohup python tuning/optuna_study.py", "env_var", R, True,
      "ASCEND_RT_VISIBLE_DEVICES=${i} nohup python tuning/optuna_study.py \\",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES (knowledge: ascend-distributed §1)"),
    C("nvidia-smi --query-compute-apps=pid,used_memory --format=csv", "torch_cuda_api", R, False, "npu-smi info",
      "runs after all workers finished; only turns the exit status into 127"),
  ])

E("build_gbdt_cuda", "scripts/build_gbdt_cuda.sh", "explicit_replacement",
  "shell script building XGBoost (CUDA + NCCL) and LightGBM (CUDA learner) from source with an arch list and build-info check", [
    C("export PATH=${CUDA_HOME}/bin:${PATH}", "env_var", X, False, None, "CUDA toolkit path, nothing to find on Ascend"),
    C("CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}", "env_var", X, False, None, "CUDA toolkit location"),
    C("export LD_LIBRARY_PATH=${CUDA_HOME}/lib64", "env_var", X, False, None, "CUDA toolkit path"),
    C("NCCL_ROOT=${NCCL_ROOT:-/usr/lib/x86_64-linux-gnu}", "dist_backend", X, False, None, "NCCL location for the XGBoost build"),
    C('GPU_ARCHS=${GPU_ARCHS:-"70;75;80;86;90"}', "device_capability_check", X, False, None, "CUDA SM list, no meaning on Ascend"),
    C("=nvcc --version", "custom_cuda_extension", X, True, None, "nvcc is not installed on an Ascend host: set -e aborts the script"),
    C("cmake .. -GNinja -DUSE_CUDA=ON -DUSE_NCCL=ON", "custom_cuda_extension", R, True, "cmake .. -GNinja -DUSE_OPENMP=ON",
      "CMake cannot find a CUDA compiler / NCCL: configure fails (XGBoost has no NPU backend, so the port builds the CPU library)"),
    C("-DBUILD_WITH_CUDA_CUB=ON -DUSE_OPENMP=ON", "custom_cuda_extension", X, True, None, "continuation of the CUDA configure line"),
    C("cmake -B build -S . -DUSE_CUDA=1", "custom_cuda_extension", R, True, "cmake -B build -S . -DCMAKE_BUILD_TYPE=Release",
      "the LightGBM CUDA learner needs the CUDA toolkit: configure fails"),
    C('sys.exit(0 if info.get("USE_CUDA") and info.get("USE_NCCL") else 1)', "custom_cuda_extension", R, True,
      "sys.exit(0)", "a CPU build reports USE_CUDA False: the check exits 1 and set -e stops the script"),
  ])

E("hydra_gbdt_gpu_conf", "conf/config.yaml", "explicit_replacement",
  "Hydra conf/config.yaml of a Kaggle tabular pipeline (cuDF backend, GPU params for XGBoost / LightGBM / CatBoost, DDP nn)", [
    C("=device: cuda", "device_type", R, True, "device: npu",
      "consumed as torch.device(cfg.device) by the nn models: 'cuda' fails without a CUDA build"),
    C("backend: cudf", "custom_cuda_extension", R, True, "backend: pandas          # cudf | pandas", RAPIDS),
    C("=tree_method: gpu_hist", "device_type", R, False, "tree_method: hist", XGB_FALLBACK),
    C("=predictor: gpu_predictor", "device_type", X, False, None, XGB_FALLBACK),
    C("=device_type: cuda", "device_type", R, True, "device_type: cpu",
      "not in /work/shared/knowledge; LightGBM's CUDA tree learner needs a CUDA build and device and stops with a "
      "fatal 'not enabled in this build' error otherwise (same family as LightGBM #2222)"),
    C("=task_type: GPU", "device_type", R, True, "task_type: CPU", CATBOOST_FATAL),
    C('devices: "0-3"', "device_type", X, False, None, "GPU-only CatBoost option"),
    C("=dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", "no NCCL on Ascend"),
  ])

E("ray_cluster_gpu_yaml", "cluster/ray-gpu-cluster.yaml", "explicit_replacement",
  "Ray cluster launcher YAML for on-prem GPU workers (ray-ml GPU image, docker --gpus, --num-gpus)", [
    C("image: rayproject/ray-ml:2.9.2-py310-gpu", "import_torch_npu", R, True,
      "image: <ray image built on a CANN + torch + torch_npu base>",
      "the -gpu image carries CUDA torch; NPU workers need CANN, the CPU torch build and torch_npu"),
    C("=- --gpus all", "device_type", R, True, "- --runtime=ascend -e ASCEND_VISIBLE_DEVICES=0-3",
      "--gpus needs the NVIDIA container toolkit: docker refuses to start the container; the Ascend Docker Runtime "
      "mounts NPUs from ASCEND_VISIBLE_DEVICES (knowledge: ascend-distributed §1)"),
    C("- pip install cupy-cuda12x==13.0.0 faiss-gpu==1.7.2", "custom_cuda_extension", R, True,
      "- pip install faiss-cpu==1.7.4", CUPY),
    C("ray start --address=$RAY_HEAD_IP:6379 --num-gpus=4", "device_type", R, True,
      "- ulimit -n 65536; ray start --address=$RAY_HEAD_IP:6379 --resources='{\"NPU\": 4}' --object-manager-port=8076",
      RAY_RES),
  ])
