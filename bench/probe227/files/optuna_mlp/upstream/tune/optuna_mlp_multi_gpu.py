"""Optuna search for the DAE-MLP / TabNet hyper-parameters, one trial per GPU.

Two ways of spreading trials over the GPUs of the box:

  --mode threads : a single process, ``study.optimize(n_jobs=<num gpus>)``; every trial
                   borrows a GPU id from a queue and trains on ``cuda:<id>``.
  --mode procs   : one worker *process* per GPU, each started with CUDA_VISIBLE_DEVICES
                   set to its GPU and sharing the study through the RDB storage.

    python tune/optuna_mlp_multi_gpu.py --study dae_mlp_v2 --n-trials 300 --mode procs
"""
from __future__ import annotations

import argparse
import logging
import os
import queue
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from optuna.pruners import HyperbandPruner
from optuna.samplers import TPESampler
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from src.utils import seed_everything  # noqa: E402

logger = logging.getLogger("optuna_mlp")

N_GPUS = torch.cuda.device_count()
GPU_QUEUE: "queue.Queue[int]" = queue.Queue()
for _i in range(N_GPUS):
    GPU_QUEUE.put(_i)


def load_data(features: str):
    root = Path("features") / features
    train = pd.read_parquet(root / "train.parquet")
    feats = [c for c in train.columns if c not in ("id", "target")]
    x = train[feats].fillna(0).values.astype(np.float32)
    mu, sd = x.mean(0), x.std(0) + 1e-6
    x = (x - mu) / sd
    return x, train["target"].values.astype(np.float32)


class MLP(nn.Module):
    def __init__(self, n_in, n_layers, width, dropout, act):
        super().__init__()
        acts = {"relu": nn.ReLU, "silu": nn.SiLU, "gelu": nn.GELU}
        layers, prev = [], n_in
        for i in range(n_layers):
            w = max(32, int(width / (2 ** i)))
            layers += [nn.Linear(prev, w), nn.BatchNorm1d(w), acts[act](), nn.Dropout(dropout)]
            prev = w
        layers.append(nn.Linear(prev, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def fit_fold(x_tr, y_tr, x_va, y_va, hp, device, trial=None, fold=0):
    model = MLP(x_tr.shape[1], hp["n_layers"], hp["width"], hp["dropout"], hp["act"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=hp["lr"], weight_decay=hp["wd"])
    xt = torch.tensor(x_tr, device=device)
    yt = torch.tensor(y_tr, device=device)
    xv = torch.tensor(x_va, device=device)
    n = len(xt)
    best = 0.0
    for epoch in range(hp["epochs"]):
        model.train()
        perm = torch.randperm(n, device=device)
        for i in range(0, n, hp["batch_size"]):
            idx = perm[i:i + hp["batch_size"]]
            with torch.cuda.amp.autocast(enabled=hp["amp"]):
                loss = F.binary_cross_entropy_with_logits(model(xt[idx]), yt[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            pv = torch.sigmoid(model(xv)).cpu().numpy()
        auc = roc_auc_score(y_va, pv)
        best = max(best, auc)
        if trial is not None and fold == 0:
            trial.report(auc, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
    return best


def suggest(trial):
    return {
        "n_layers": trial.suggest_int("n_layers", 2, 5),
        "width": trial.suggest_categorical("width", [256, 512, 1024, 2048]),
        "dropout": trial.suggest_float("dropout", 0.0, 0.5),
        "act": trial.suggest_categorical("act", ["relu", "silu", "gelu"]),
        "lr": trial.suggest_float("lr", 1e-4, 1e-2, log=True),
        "wd": trial.suggest_float("wd", 1e-7, 1e-3, log=True),
        "batch_size": trial.suggest_categorical("batch_size", [1024, 2048, 4096]),
        "epochs": trial.suggest_int("epochs", 5, 30),
        "amp": trial.suggest_categorical("amp", [True, False]),
    }


def make_objective(x, y, n_folds, fixed_device=None):
    def objective(trial):
        hp = suggest(trial)
        gpu_id = None
        if fixed_device is None:
            gpu_id = GPU_QUEUE.get()
            device = torch.device(f"cuda:{gpu_id}")
        else:
            device = torch.device(fixed_device)
        trial.set_user_attr("device", str(device))
        try:
            seed_everything(trial.number)
            skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=42)
            scores = []
            for fold, (tr, va) in enumerate(skf.split(x, y)):
                scores.append(fit_fold(x[tr], y[tr], x[va], y[va], hp, device, trial, fold))
            return float(np.mean(scores))
        except torch.cuda.OutOfMemoryError:
            logger.warning("trial %d OOM on %s with %s", trial.number, device, hp)
            raise optuna.TrialPruned()
        finally:
            if gpu_id is not None:
                with torch.cuda.device(gpu_id):
                    torch.cuda.empty_cache()
                GPU_QUEUE.put(gpu_id)

    return objective


def create_study(name, storage):
    return optuna.create_study(
        study_name=name,
        storage=storage,
        load_if_exists=True,
        direction="maximize",
        sampler=TPESampler(seed=0, multivariate=True),
        pruner=HyperbandPruner(min_resource=2, max_resource=30),
    )


def run_worker(args):
    """Worker process: sees exactly one GPU (CUDA_VISIBLE_DEVICES set by the parent)."""
    x, y = load_data(args.features)
    study = create_study(args.study, args.storage)
    study.optimize(make_objective(x, y, args.folds, fixed_device="cuda:0"), n_trials=args.trials_per_worker)


def launch_procs(args):
    procs = []
    for gpu in range(N_GPUS):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        cmd = [sys.executable, __file__, "--worker", "--study", args.study, "--storage", args.storage,
               "--features", args.features, "--folds", str(args.folds),
               "--trials-per-worker", str(int(np.ceil(args.n_trials / N_GPUS)))]
        logger.info("GPU %d: %s", gpu, " ".join(cmd))
        procs.append(subprocess.Popen(cmd, env=env))
        time.sleep(2)  # stagger the sqlite schema creation
    for p in procs:
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--study", default="dae_mlp_v2")
    ap.add_argument("--storage", default="sqlite:///optuna/optuna.db")
    ap.add_argument("--features", default="v3")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--n-trials", type=int, default=200)
    ap.add_argument("--mode", choices=["threads", "procs"], default="threads")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--trials-per-worker", type=int, default=50)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(processName)s %(message)s")
    Path("optuna").mkdir(exist_ok=True)

    if args.worker:
        run_worker(args)
        return
    if N_GPUS == 0:
        raise SystemExit("no GPU found - this tuner needs at least one CUDA device")
    logger.info("tuning on %d GPUs (%s)", N_GPUS, torch.cuda.get_device_name(0))
    if args.mode == "procs":
        launch_procs(args)
    else:
        x, y = load_data(args.features)
        study = create_study(args.study, args.storage)
        study.optimize(make_objective(x, y, args.folds), n_trials=args.n_trials, n_jobs=N_GPUS, gc_after_trial=True)

    study = optuna.load_study(study_name=args.study, storage=args.storage)
    print("best value", study.best_value)
    print("best params", study.best_params)
    df = study.trials_dataframe()
    df.to_csv(Path("optuna") / f"{args.study}_trials.csv", index=False)


if __name__ == "__main__":
    main()
