"""Train LightGBM and CatBoost on the engineered features (k-fold) and save OOF/test predictions.

    python -m src.models.train_gbdt --model lgb --features v3 --folds 5
    python -m src.models.train_gbdt --model cat --features v3 --folds 5 --gpu

GPU notes
---------
* LightGBM must be built with ``-DUSE_GPU=1`` (OpenCL) for ``device="gpu"``; on Kaggle
  the preinstalled wheel already is. ``gpu_use_dp=False`` keeps it in single precision.
* CatBoost on GPU ignores ``rsm`` and needs ``border_count<=254``.
* The DAE/KNN features from ``src/features`` are appended when ``--with-knn`` is passed.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import time
from pathlib import Path

import catboost as cb
import lightgbm as lgb
import numpy as np
import pandas as pd
import torch
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from src.utils import seed_everything, timer

logger = logging.getLogger(__name__)

# Use the GPU automatically when one is visible (the LightGBM OpenCL build also needs it)
USE_GPU = torch.cuda.is_available()

LGB_PARAMS = {
    "objective": "binary",
    "metric": "auc",
    "learning_rate": 0.03,
    "num_leaves": 127,
    "min_data_in_leaf": 200,
    "feature_fraction": 0.5,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 2.0,
    "max_bin": 255,
    "verbose": -1,
    "device": "gpu" if USE_GPU else "cpu",
    "gpu_platform_id": 0,
    "gpu_device_id": 0,
    "gpu_use_dp": False,
}

CAT_PARAMS = dict(
    iterations=20000,
    learning_rate=0.05,
    depth=8,
    l2_leaf_reg=3.0,
    border_count=254,
    loss_function="Logloss",
    eval_metric="AUC",
    od_type="Iter",
    od_wait=300,
    task_type="GPU",
    devices="0",
    gpu_ram_part=0.9,
    allow_writing_files=False,
    verbose=500,
)


def load_features(version: str, with_knn: bool = False):
    root = Path("features") / version
    train = pd.read_parquet(root / "train.parquet")
    test = pd.read_parquet(root / "test.parquet")
    if with_knn:
        knn_tr = pd.read_parquet("features/knn/knn_oof.parquet")
        knn_te = pd.read_parquet("features/knn/knn_test.parquet")
        train = train.merge(knn_tr, on="id", how="left")
        test = test.merge(knn_te, on="id", how="left")
    return train, test


def adversarial_validation(train: pd.DataFrame, test: pd.DataFrame, feats, n_rounds: int = 300, seed: int = 0):
    """Train LightGBM to tell train from test; returns (auc, per-feature gain). AUC ~0.5 means no shift."""
    both = pd.concat([train[feats], test[feats]], ignore_index=True)
    is_test = np.r_[np.zeros(len(train)), np.ones(len(test))]
    params = dict(LGB_PARAMS, learning_rate=0.1, num_leaves=31, seed=seed)
    skf = StratifiedKFold(n_splits=3, shuffle=True, random_state=seed)
    oof = np.zeros(len(both))
    gains = np.zeros(len(feats))
    for tr, va in skf.split(both, is_test):
        model = lgb.train(params, lgb.Dataset(both.iloc[tr], is_test[tr]), num_boost_round=n_rounds)
        oof[va] = model.predict(both.iloc[va])
        gains += model.feature_importance("gain")
    auc = roc_auc_score(is_test, oof)
    imp = pd.Series(gains / 3, index=feats).sort_values(ascending=False)
    logger.info("adversarial AUC %.4f; top shifted features: %s", auc, list(imp.index[:10]))
    return auc, imp


def select_features_by_importance(importance_csv: Path, keep_frac: float = 0.8):
    """Keep the top ``keep_frac`` features by mean gain from a previous run's importance file."""
    imp = pd.read_csv(importance_csv).groupby("feature")["gain"].mean().sort_values(ascending=False)
    n_keep = max(1, int(len(imp) * keep_frac))
    return list(imp.index[:n_keep])


def train_lgb(X, y, X_test, folds, seed, out_dir):
    oof = np.zeros(len(X))
    pred = np.zeros(len(X_test))
    importances = []
    for fold, (tr, va) in enumerate(folds):
        params = dict(LGB_PARAMS, seed=seed + fold)
        dtr = lgb.Dataset(X.iloc[tr], y[tr])
        dva = lgb.Dataset(X.iloc[va], y[va], reference=dtr)
        with timer(f"lgb fold {fold}"):
            model = lgb.train(
                params,
                dtr,
                num_boost_round=20000,
                valid_sets=[dtr, dva],
                valid_names=["train", "valid"],
                callbacks=[lgb.early_stopping(300), lgb.log_evaluation(500)],
            )
        oof[va] = model.predict(X.iloc[va], num_iteration=model.best_iteration)
        pred += model.predict(X_test, num_iteration=model.best_iteration) / len(folds)
        imp = pd.DataFrame({"feature": X.columns, "gain": model.feature_importance("gain"), "fold": fold})
        importances.append(imp)
        model.save_model(str(out_dir / f"lgb_fold{fold}.txt"))
        logger.info("fold %d auc %.5f", fold, roc_auc_score(y[va], oof[va]))
    pd.concat(importances).to_csv(out_dir / "lgb_importance.csv", index=False)
    return oof, pred


def train_cat(X, y, X_test, folds, seed, out_dir, use_gpu=True):
    oof = np.zeros(len(X))
    pred = np.zeros(len(X_test))
    cat_cols = [c for c in X.columns if c.startswith("cat_")]
    for fold, (tr, va) in enumerate(folds):
        params = dict(CAT_PARAMS, random_seed=seed + fold)
        if not use_gpu:
            params.update(task_type="CPU", rsm=0.5)
            params.pop("devices")
            params.pop("gpu_ram_part")
        model = cb.CatBoostClassifier(**params)
        with timer(f"cat fold {fold}"):
            model.fit(
                X.iloc[tr],
                y[tr],
                eval_set=(X.iloc[va], y[va]),
                cat_features=cat_cols,
                use_best_model=True,
            )
        oof[va] = model.predict_proba(X.iloc[va])[:, 1]
        pred += model.predict_proba(X_test)[:, 1] / len(folds)
        model.save_model(str(out_dir / f"cat_fold{fold}.cbm"))
        logger.info("fold %d auc %.5f (best it %d)", fold, roc_auc_score(y[va], oof[va]), model.get_best_iteration())
    return oof, pred


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["lgb", "cat"], default="lgb")
    p.add_argument("--features", default="v3")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=2022)
    p.add_argument("--with-knn", action="store_true")
    p.add_argument("--gpu", action="store_true", help="train CatBoost on the GPU (task_type=GPU)")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    seed_everything(args.seed)

    train, test = load_features(args.features, args.with_knn)
    feats = [c for c in test.columns if c not in ("id", "target")]
    X, y, X_test = train[feats], train["target"].values, test[feats]
    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    folds = list(skf.split(X, y))

    out_dir = Path("models") / f"{args.model}_{args.features}"
    out_dir.mkdir(parents=True, exist_ok=True)
    logger.info("train %s test %s, %d features, gpu=%s", X.shape, X_test.shape, len(feats), USE_GPU)

    t0 = time.time()
    if args.model == "lgb":
        oof, pred = train_lgb(X, y, X_test, folds, args.seed, out_dir)
    else:
        oof, pred = train_cat(X, y, X_test, folds, args.seed, out_dir, use_gpu=args.gpu)

    score = roc_auc_score(y, oof)
    logger.info("%s CV AUC %.5f in %.0fs", args.model, score, time.time() - t0)
    np.save(out_dir / "oof.npy", oof)
    np.save(out_dir / "test.npy", pred)
    with open(out_dir / "score.json", "w") as f:
        json.dump({"auc": score, "features": args.features, "n_features": len(feats)}, f, indent=2)
    if os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):
        pd.DataFrame({"id": test["id"], "target": pred}).to_csv("submission.csv", index=False)


if __name__ == "__main__":
    main()
