"""Optuna search over XGBoost and a residual MLP, one GPU per concurrent trial.

Single process, threads share the cards round-robin:
    python tuning/optuna_study.py --model xgb --trials 200 --data data/fe
Several worker processes on one RDB study (see scripts/launch_optuna_workers.sh):
    python tuning/optuna_study.py --model mlp --trials 50 --storage sqlite:///study.db --worker-gpu 3
"""
import argparse
import os
import sys

# a worker pins itself to one card before torch / xgboost initialise CUDA
if "--worker-gpu" in sys.argv:
    os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[sys.argv.index("--worker-gpu") + 1]

import numpy as np
import optuna
import pandas as pd
import torch
import torch.nn as nn
import xgboost as xgb
from optuna.integration import XGBoostPruningCallback
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, TensorDataset

N_GPUS = torch.cuda.device_count()


def load(data_dir):
    tr = pd.read_parquet(os.path.join(data_dir, "train_fe.parquet"))
    va = pd.read_parquet(os.path.join(data_dir, "valid_fe.parquet"))
    feats = [c for c in tr.columns if c != "target"]
    return (tr[feats].values.astype(np.float32), tr["target"].values,
            va[feats].values.astype(np.float32), va["target"].values, feats)


def gpu_for(trial, worker_gpu):
    return 0 if worker_gpu is not None else trial.number % N_GPUS


# ----------------------------------------------------------------------------- XGBoost
def xgb_objective(trial, data, worker_gpu):
    X_tr, y_tr, X_va, y_va, _ = data
    gpu = gpu_for(trial, worker_gpu)
    params = {
        "objective": "binary:logistic",
        "eval_metric": "auc",
        "tree_method": "gpu_hist",
        "gpu_id": gpu,
        "max_depth": trial.suggest_int("max_depth", 3, 12),
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 0.3, log=True),
        "subsample": trial.suggest_float("subsample", 0.5, 1.0),
        "colsample_bytree": trial.suggest_float("colsample_bytree", 0.3, 1.0),
        "min_child_weight": trial.suggest_float("min_child_weight", 1e-2, 100, log=True),
        "reg_alpha": trial.suggest_float("reg_alpha", 1e-8, 10.0, log=True),
        "reg_lambda": trial.suggest_float("reg_lambda", 1e-8, 10.0, log=True),
        "max_bin": trial.suggest_categorical("max_bin", [64, 128, 256, 512]),
    }
    dtrain = xgb.DMatrix(X_tr, label=y_tr)
    dvalid = xgb.DMatrix(X_va, label=y_va)
    pruning = XGBoostPruningCallback(trial, "valid-auc")
    bst = xgb.train(params, dtrain, num_boost_round=5000, evals=[(dvalid, "valid")],
                    early_stopping_rounds=100, callbacks=[pruning], verbose_eval=False)
    trial.set_user_attr("best_iteration", bst.best_iteration)
    return bst.best_score


# ----------------------------------------------------------------------------- MLP
class ResBlock(nn.Module):
    def __init__(self, d, dropout):
        super().__init__()
        self.net = nn.Sequential(nn.BatchNorm1d(d), nn.Linear(d, d), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d, d))

    def forward(self, x):
        return x + self.net(x)


class ResMLP(nn.Module):
    def __init__(self, d_in, d, n_blocks, dropout):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = nn.Sequential(*[ResBlock(d, dropout) for _ in range(n_blocks)])
        self.out = nn.Sequential(nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)


def mlp_objective(trial, data, worker_gpu):
    X_tr, y_tr, X_va, y_va, _ = data
    gpu = gpu_for(trial, worker_gpu)
    device = torch.device(f"cuda:{gpu}")
    d = trial.suggest_categorical("d", [128, 256, 512])
    n_blocks = trial.suggest_int("n_blocks", 1, 6)
    dropout = trial.suggest_float("dropout", 0.0, 0.5)
    lr = trial.suggest_float("lr", 1e-4, 3e-3, log=True)
    wd = trial.suggest_float("weight_decay", 1e-6, 1e-3, log=True)
    batch_size = trial.suggest_categorical("batch_size", [256, 512, 1024, 2048])

    loader = DataLoader(TensorDataset(torch.from_numpy(X_tr), torch.from_numpy(y_tr).float()),
                        batch_size=batch_size, shuffle=True, drop_last=True, num_workers=2, pin_memory=True)
    x_va = torch.from_numpy(X_va)
    try:
        with torch.cuda.device(gpu):
            model = ResMLP(X_tr.shape[1], d, n_blocks, dropout).to(device)
            opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
            loss_fn = nn.BCEWithLogitsLoss()
            best = 0.0
            for epoch in range(40):
                model.train()
                for xb, yb in loader:
                    xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
                    opt.zero_grad(set_to_none=True)
                    loss_fn(model(xb), yb).backward()
                    opt.step()
                model.eval()
                with torch.no_grad():
                    pred = torch.cat([model(x_va[i:i + 8192].to(device)).sigmoid().cpu()
                                      for i in range(0, len(x_va), 8192)]).numpy()
                auc = roc_auc_score(y_va, pred)
                best = max(best, auc)
                trial.report(auc, epoch)
                if trial.should_prune():
                    raise optuna.TrialPruned()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        raise optuna.TrialPruned("out of memory")
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["xgb", "mlp"], required=True)
    ap.add_argument("--data", default="data/fe")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--storage", default=None)
    ap.add_argument("--study-name", default=None)
    ap.add_argument("--worker-gpu", type=int, default=None)
    args = ap.parse_args()

    data = load(args.data)
    objective = xgb_objective if args.model == "xgb" else mlp_objective
    study = optuna.create_study(
        study_name=args.study_name or f"{args.model}-search",
        storage=args.storage,
        load_if_exists=True,
        direction="maximize",
        sampler=optuna.samplers.TPESampler(multivariate=True, seed=None if args.storage else 0),
        pruner=optuna.pruners.HyperbandPruner(),
    )
    n_jobs = 1 if args.worker_gpu is not None else N_GPUS
    study.optimize(lambda t: objective(t, data, args.worker_gpu), n_trials=args.trials, n_jobs=n_jobs,
                   gc_after_trial=True)
    print(f"best value {study.best_value:.5f}")
    print(study.best_params)
    study.trials_dataframe().to_csv(f"{study.study_name}_trials.csv", index=False)


if __name__ == "__main__":
    main()
