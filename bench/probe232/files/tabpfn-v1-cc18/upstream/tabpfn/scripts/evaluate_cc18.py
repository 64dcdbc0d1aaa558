"""Evaluate TabPFN (v1) against the OpenML-CC18 small-data suite.

Usage:
    python tabpfn/scripts/evaluate_cc18.py --device cuda --ensembles 32 --max-samples 1000

The numbers in the paper were produced on a single RTX 2080 Ti with
N_ensemble_configurations=32; a full sweep takes about 40 minutes on that card.
"""
import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import openml
import pandas as pd
import torch
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import LabelEncoder

from tabpfn import TabPFNClassifier
from tabpfn.scripts.tabular_baselines import catboost_metric, xgb_metric, transformer_metric
from tabpfn.scripts.tabular_metrics import calculate_score, time_metric

warnings.filterwarnings("ignore", category=UserWarning)

CC18_SMALL_TASK_IDS = [
    11, 14, 15, 16, 18, 22, 23, 29, 31, 37, 50, 54, 188, 458, 469, 1049, 1050,
    1063, 1068, 1462, 1464, 1480, 1494, 1510, 6332, 23381, 40966, 40975, 40982,
    40994,
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", type=str, default="cuda", help="torch device for TabPFN (cuda|cpu)")
    parser.add_argument("--ensembles", type=int, default=32, help="N_ensemble_configurations")
    parser.add_argument("--max-samples", type=int, default=1000)
    parser.add_argument("--max-features", type=int, default=100)
    parser.add_argument("--n-splits", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baselines", nargs="*", default=[], choices=["catboost", "xgb"])
    parser.add_argument("--out", type=Path, default=Path("results/cc18_tabpfn_v1.json"))
    parser.add_argument("--cache-dir", type=Path, default=Path(os.environ.get("OPENML_CACHE", "~/.openml")).expanduser())
    return parser.parse_args()


def load_task(task_id, max_samples, max_features, seed):
    task = openml.tasks.get_task(task_id, download_splits=False)
    dataset = task.get_dataset()
    X, y, categorical_indicator, _ = dataset.get_data(
        target=dataset.default_target_attribute, dataset_format="dataframe"
    )
    if X.shape[1] > max_features:
        return None
    if len(X) > max_samples:
        X = X.sample(n=max_samples, random_state=seed)
        y = y.loc[X.index]
    cat_idx = [i for i, c in enumerate(categorical_indicator) if c]
    for i in cat_idx:
        X.iloc[:, i] = X.iloc[:, i].cat.codes
    X = X.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float32)
    y = LabelEncoder().fit_transform(y.astype(str))
    return dataset.name, X, y, cat_idx


def sync(device):
    # Kernel launches are async: make sure the timings include the GPU work.
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def evaluate_tabpfn(X, y, cat_idx, args):
    skf = StratifiedKFold(n_splits=args.n_splits, shuffle=True, random_state=args.seed)
    accs, aucs, lls, fit_times, pred_times = [], [], [], [], []
    classifier = TabPFNClassifier(
        device=args.device,
        N_ensemble_configurations=args.ensembles,
        seed=args.seed,
        no_preprocess_mode=False,
        multiclass_decoder="permutation",
        feature_shift_decoder=True,
    )
    for fold, (tr, te) in enumerate(skf.split(X, y)):
        t0 = time.perf_counter()
        classifier.fit(X[tr], y[tr], overwrite_warning=True)
        sync(args.device)
        t1 = time.perf_counter()
        proba = classifier.predict_proba(X[te])
        sync(args.device)
        t2 = time.perf_counter()

        pred = proba.argmax(axis=1)
        accs.append(accuracy_score(y[te], pred))
        n_classes = len(np.unique(y))
        if n_classes == 2:
            aucs.append(roc_auc_score(y[te], proba[:, 1]))
        else:
            aucs.append(roc_auc_score(y[te], proba, multi_class="ovo", labels=np.arange(n_classes)))
        lls.append(log_loss(y[te], proba, labels=np.arange(n_classes)))
        fit_times.append(t1 - t0)
        pred_times.append(t2 - t1)
    return {
        "acc": float(np.mean(accs)),
        "roc_auc": float(np.mean(aucs)),
        "log_loss": float(np.mean(lls)),
        "fit_time": float(np.mean(fit_times)),
        "predict_time": float(np.mean(pred_times)),
    }


def evaluate_baseline(name, X, y, cat_idx, args):
    # Baselines run on the CPU; catboost/xgboost GPU training is slower than CPU for
    # datasets of this size.
    metric_used = calculate_score
    fn = {"catboost": catboost_metric, "xgb": xgb_metric}[name]
    n = len(X) // 2
    test_score, summary, _ = fn(
        X[:n], y[:n], X[n:], y[n:], cat_idx, metric_used, max_time=60, no_tune=None,
    )
    return {"roc_auc": float(test_score), "summary": summary}


def main():
    args = parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("CUDA requested but not available, falling back to CPU (this will be slow).")
        args.device = "cpu"
    if args.device.startswith("cuda"):
        print(f"Running on {torch.cuda.get_device_name(0)}")
        torch.backends.cudnn.benchmark = True

    openml.config.cache_directory = str(args.cache_dir)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    results = {}
    for task_id in CC18_SMALL_TASK_IDS:
        loaded = load_task(task_id, args.max_samples, args.max_features, args.seed)
        if loaded is None:
            continue
        name, X, y, cat_idx = loaded
        print(f"[{task_id}] {name}: {X.shape}, classes={len(np.unique(y))}")
        res = {"tabpfn": evaluate_tabpfn(X, y, cat_idx, args)}
        for b in args.baselines:
            res[b] = evaluate_baseline(b, X, y, cat_idx, args)
        results[name] = res
        print(json.dumps(res["tabpfn"], indent=None))
        if args.device.startswith("cuda"):  # release cached blocks between datasets
            torch.cuda.empty_cache()

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"args": {k: str(v) for k, v in vars(args).items()}, "results": results}, f, indent=2)

    mean_auc = np.mean([r["tabpfn"]["roc_auc"] for r in results.values()])
    mean_time = np.mean([r["tabpfn"]["fit_time"] + r["tabpfn"]["predict_time"] for r in results.values()])
    print(f"Mean ROC AUC over {len(results)} datasets: {mean_auc:.4f} ({mean_time:.2f}s per fold)")
    if args.device != "cpu":
        print(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
