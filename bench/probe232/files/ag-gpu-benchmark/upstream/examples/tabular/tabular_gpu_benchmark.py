"""Benchmark AutoGluon-Tabular with GPU-accelerated model families.

Trains a TabularPredictor with `presets="best_quality"` on a handful of AutoML
Benchmark datasets and records per-model fit/inference time. GBMs, CatBoost and
XGBoost are configured for their GPU learners, the neural nets (NN_TORCH,
FASTAI) and the tabular foundation models (TABPFNV2, MITRA) take a full GPU each.

Example:
    CUDA_VISIBLE_DEVICES=0,1 python tabular_gpu_benchmark.py --datasets adult bank-marketing --time-limit 3600
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import subprocess
import time
from pathlib import Path

import pandas as pd
import torch

from autogluon.common.utils.resource_utils import ResourceManager
from autogluon.core.metrics import get_metric
from autogluon.tabular import TabularDataset, TabularPredictor

logger = logging.getLogger(__name__)

S3_ROOT = "https://autogluon.s3.amazonaws.com/datasets"
DATASETS = {
    "adult": ("Inc/train.csv", "Inc/test.csv", "class", "roc_auc"),
    "bank-marketing": ("BankMarketing/train.csv", "BankMarketing/test.csv", "y", "roc_auc"),
    "covertype": ("CoverType/train.csv", "CoverType/test.csv", "Cover_Type", "accuracy"),
    "house-prices": ("AmesHousingPriceRegression/train_data.csv", "AmesHousingPriceRegression/test_data.csv", "SalePrice", "root_mean_squared_error"),
}

GPU_HYPERPARAMETERS = {
    "GBM": [
        {"device": "gpu", "gpu_use_dp": False, "max_bin": 63, "ag_args": {"name_suffix": "GPU"}},
        {"extra_trees": True, "device": "gpu", "max_bin": 63, "ag_args": {"name_suffix": "XTGPU"}},
    ],
    "CAT": {"task_type": "GPU", "border_count": 254},
    "XGB": {"tree_method": "gpu_hist", "predictor": "gpu_predictor"},
    "NN_TORCH": {"num_epochs": 500, "use_batchnorm": True},
    "FASTAI": {"bs": 1024},
    "TABPFNV2": {"n_estimators": 8},
    "RF": {},
    "XT": {},
}


def nvidia_smi_summary() -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=True, timeout=10,
        )
        return out.stdout.strip()
    except (FileNotFoundError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return "nvidia-smi unavailable"


def describe_environment() -> dict:
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "num_cpus": ResourceManager.get_cpu_count(),
        "num_gpus": ResourceManager.get_gpu_count(),
        "gpus": nvidia_smi_summary(),
    }
    if torch.cuda.is_available():
        info["cudnn"] = torch.backends.cudnn.version()
        info["gpu_name"] = torch.cuda.get_device_name(0)
    return info


def load(name: str):
    train_path, test_path, label, metric = DATASETS[name]
    train = TabularDataset(f"{S3_ROOT}/{train_path}")
    test = TabularDataset(f"{S3_ROOT}/{test_path}")
    return train, test, label, metric


def run_one(name: str, args) -> dict:
    train, test, label, metric = load(name)
    if args.subsample and len(train) > args.subsample:
        train = train.sample(n=args.subsample, random_state=0)

    save_path = Path(args.output_dir) / f"ag-{name}-{int(time.time())}"
    predictor = TabularPredictor(label=label, eval_metric=metric, path=str(save_path), verbosity=2)

    num_gpus = args.num_gpus if args.num_gpus is not None else torch.cuda.device_count()
    t0 = time.time()
    predictor.fit(
        train_data=train,
        presets=args.presets,
        time_limit=args.time_limit,
        hyperparameters=GPU_HYPERPARAMETERS if args.gpu_models else "default",
        num_gpus=num_gpus,
        num_cpus="auto",
        ag_args_fit={"num_gpus": 1, "num_early_stopping_rounds": 100},
        ag_args_ensemble={"fold_fitting_strategy": "sequential_local"},
        num_bag_folds=args.num_bag_folds,
        num_stack_levels=1 if args.presets == "best_quality" else 0,
        dynamic_stacking=False,
    )
    fit_time = time.time() - t0

    t1 = time.time()
    leaderboard = predictor.leaderboard(test, extra_info=True, silent=True)
    score = predictor.evaluate(test, silent=True)[metric if metric != "root_mean_squared_error" else "root_mean_squared_error"]
    infer_time = time.time() - t1

    metric_fn = get_metric(metric)
    result = {
        "dataset": name,
        "score": float(score),
        "metric": metric_fn.name,
        "fit_time_s": fit_time,
        "predict_time_s": infer_time,
        "best_model": predictor.model_best,
        "num_models": len(leaderboard),
    }
    leaderboard.to_csv(save_path / "leaderboard.csv", index=False)
    if not args.keep_models:
        predictor.delete_models(models_to_keep="best", dry_run=False)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--presets", default="best_quality")
    parser.add_argument("--time-limit", type=int, default=3600)
    parser.add_argument("--num-gpus", type=int, default=None, help="defaults to all visible GPUs")
    parser.add_argument("--num-bag-folds", type=int, default=8)
    parser.add_argument("--subsample", type=int, default=None)
    parser.add_argument("--gpu-models", action="store_true", default=True)
    parser.add_argument("--keep-models", action="store_true")
    parser.add_argument("--output-dir", default="AutogluonModels/gpu_bench")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO)
    env = describe_environment()
    logger.info("environment: %s", json.dumps(env, indent=2))
    if env["num_gpus"] == 0:
        logger.warning("No CUDA GPU detected - GPU hyperparameters will fail for CatBoost/LightGBM")

    results = [run_one(name, args) for name in args.datasets]
    df = pd.DataFrame(results)
    out = Path(args.output_dir) / "results.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    print(df.to_markdown(index=False))
    print(json.dumps(env))


if __name__ == "__main__":
    main()
