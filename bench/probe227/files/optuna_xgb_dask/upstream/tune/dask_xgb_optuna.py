"""Distributed XGBoost hyper-parameter search with Dask-CUDA + Optuna.

One Dask worker per GPU holds a partition of the training data (dask_cudf); every Optuna
trial trains ``xgb.dask.train`` across all workers. Based on the RAPIDS HPO examples.

    python tune/dask_xgb_optuna.py --data data/train_folds.parquet --n-trials 100
"""
from __future__ import annotations

import argparse
import logging
import os
import time

import numpy as np
import optuna
import xgboost as xgb

import dask
import dask_cudf
from dask.distributed import Client, wait
from dask_cuda import LocalCUDACluster

logger = logging.getLogger("dask_xgb_optuna")

BASE_PARAMS = {
    "objective": "binary:logistic",
    "eval_metric": "auc",
    "tree_method": "gpu_hist",
    "max_bin": 256,
    "verbosity": 0,
}


def start_cluster(n_workers: int | None, rmm_pool: str, spill: str):
    cluster = LocalCUDACluster(
        n_workers=n_workers,
        rmm_pool_size=rmm_pool,
        device_memory_limit=spill,
        jit_unspill=True,
        threads_per_worker=1,
    )
    client = Client(cluster)
    logger.info("dashboard: %s", client.dashboard_link)
    logger.info("workers: %s", list(client.scheduler_info()["workers"].keys()))
    return client


def load(client, path, fold, target="target", fold_col="kfold"):
    ddf = dask_cudf.read_parquet(path)
    feats = [c for c in ddf.columns if c not in ("id", target, fold_col)]
    ddf = ddf.persist()
    wait(ddf)
    tr = ddf[ddf[fold_col] != fold]
    va = ddf[ddf[fold_col] == fold]
    dtrain = xgb.dask.DaskQuantileDMatrix(client, tr[feats], tr[target], max_bin=BASE_PARAMS["max_bin"])
    dvalid = xgb.dask.DaskQuantileDMatrix(client, va[feats], va[target], ref=dtrain)
    y_valid = va[target].compute().values_host
    return dtrain, dvalid, y_valid, feats


def objective_factory(client, dtrain, dvalid, y_valid, num_boost_round):
    def objective(trial: optuna.Trial) -> float:
        params = dict(BASE_PARAMS)
        params.update(
            {
                "learning_rate": trial.suggest_float("learning_rate", 0.01, 0.3, log=True),
                "max_depth": trial.suggest_int("max_depth", 3, 12),
                "min_child_weight": trial.suggest_float("min_child_weight", 1e-2, 100, log=True),
                "subsample": trial.suggest_float("subsample", 0.5, 1.0),
                "colsample_bytree": trial.suggest_float("colsample_bytree", 0.3, 1.0),
                "reg_alpha": trial.suggest_float("reg_alpha", 1e-8, 10.0, log=True),
                "reg_lambda": trial.suggest_float("reg_lambda", 1e-8, 10.0, log=True),
                "gamma": trial.suggest_float("gamma", 1e-8, 1.0, log=True),
            }
        )
        t0 = time.time()
        out = xgb.dask.train(
            client,
            params,
            dtrain,
            num_boost_round=num_boost_round,
            evals=[(dvalid, "valid")],
            early_stopping_rounds=100,
            verbose_eval=False,
        )
        booster = out["booster"]
        auc = out["history"]["valid"]["auc"][-1]
        trial.set_user_attr("best_iteration", booster.best_iteration)
        trial.set_user_attr("seconds", time.time() - t0)
        logger.info("trial %d auc %.5f in %.0fs", trial.number, auc, time.time() - t0)
        return auc

    return objective


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/train_folds.parquet")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--n-trials", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3000)
    ap.add_argument("--n-workers", type=int, default=None, help="default: one per visible GPU")
    ap.add_argument("--rmm-pool", default="24GB")
    ap.add_argument("--spill", default="28GB")
    ap.add_argument("--storage", default=os.environ.get("OPTUNA_STORAGE", "sqlite:///optuna/xgb_dask.db"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    dask.config.set({"dataframe.backend": "cudf"})
    client = start_cluster(args.n_workers, args.rmm_pool, args.spill)
    dtrain, dvalid, y_valid, feats = load(client, args.data, args.fold)
    logger.info("%d features, %d valid rows", len(feats), len(y_valid))

    study = optuna.create_study(
        study_name=f"xgb_dask_fold{args.fold}",
        storage=args.storage,
        load_if_exists=True,
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=42),
    )
    study.optimize(objective_factory(client, dtrain, dvalid, y_valid, args.rounds), n_trials=args.n_trials)

    best = study.best_trial
    logger.info("best auc %.5f params %s", best.value, best.params)
    np.save("optuna/xgb_dask_best.npy", best.params, allow_pickle=True)
    client.close()


if __name__ == "__main__":
    main()
