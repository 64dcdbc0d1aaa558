"""K-fold XGBoost training for the AMEX default-prediction style competitions.

Reads the engineered parquet features, trains one booster per fold on the GPU and writes the
out-of-fold and test predictions next to the feature file.

    python src/train_xgb.py --features data/train_fe.parquet --test data/test_fe.parquet \
        --folds 5 --gpu 0 --rounds 9999
"""
import argparse
import gc
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.model_selection import StratifiedKFold

import cupy as cp
import cudf

from metrics import amex_metric
from utils import get_logger, seed_everything

VERSION = "xgb_v7"

# parameters found with tuning/optuna_study.py (GPU trials, 400 rounds of early stopping)
XGB_PARAMS = {
    "objective": "binary:logistic",
    "eval_metric": "logloss",
    "learning_rate": 0.03,
    "max_depth": 4,
    "subsample": 0.8,
    "colsample_bytree": 0.6,
    "min_child_weight": 8,
    "reg_lambda": 2.0,
    "tree_method": "gpu_hist",
    "predictor": "gpu_predictor",
    "sampling_method": "gradient_based",
    "max_bin": 256,
    "random_state": 42,
}

TARGET = "target"
ID_COL = "customer_ID"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--features", type=str, required=True)
    p.add_argument("--test", type=str, default=None)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--rounds", type=int, default=9999)
    p.add_argument("--early-stop", type=int, default=100)
    p.add_argument("--gpu", type=int, default=0, help="which GPU to train on")
    p.add_argument("--out", type=str, default="output")
    p.add_argument("--chunk", type=int, default=4, help="test set is predicted in chunks")
    return p.parse_args()


def read_features(path, logger):
    t0 = time.time()
    df = cudf.read_parquet(path)
    # cudf keeps float64 for the aggregations; the boosters only need float32
    float_cols = [c for c in df.columns if df[c].dtype == "float64"]
    df[float_cols] = df[float_cols].astype("float32")
    logger.info(f"read {path}: {df.shape} in {time.time() - t0:.1f}s")
    return df


def get_feature_columns(df):
    drop = {TARGET, ID_COL, "S_2", "fold"}
    return [c for c in df.columns if c not in drop]


def make_folds(train, n_folds, seed):
    # the split itself is tiny, do it on the host
    y = train[TARGET].to_pandas().values
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    fold = np.zeros(len(y), dtype=np.int8)
    for k, (_, va_idx) in enumerate(skf.split(np.zeros(len(y)), y)):
        fold[va_idx] = k
    return fold


class IterLoadForDMatrix(xgb.core.DataIter):
    """Feeds the training frame to XGBoost in chunks so the device never holds it twice."""

    def __init__(self, df, features, target, batch_size=256 * 1024):
        self.features = features
        self.target = target
        self.df = df
        self.it = 0
        self.batch_size = batch_size
        self.batches = int(np.ceil(len(df) / self.batch_size))
        super().__init__()

    def reset(self):
        self.it = 0

    def next(self, input_data):
        if self.it == self.batches:
            return 0
        a = self.it * self.batch_size
        b = min((self.it + 1) * self.batch_size, len(self.df))
        dt = self.df.iloc[a:b]
        input_data(data=dt[self.features], label=dt[self.target])
        self.it += 1
        return 1


def train_one_fold(train, fold_ids, k, features, params, args, logger):
    tr_mask = fold_ids != k
    va_mask = fold_ids == k
    tr = train.iloc[np.where(tr_mask)[0]]
    va = train.iloc[np.where(va_mask)[0]]

    it = IterLoadForDMatrix(tr, features, TARGET)
    dtrain = xgb.DeviceQuantileDMatrix(it, max_bin=params["max_bin"])
    dvalid = xgb.DMatrix(data=cp.asarray(va[features].values), label=cp.asarray(va[TARGET].values))

    t0 = time.time()
    bst = xgb.train(
        params,
        dtrain=dtrain,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        num_boost_round=args.rounds,
        early_stopping_rounds=args.early_stop,
        verbose_eval=200,
    )
    logger.info(f"fold {k}: best_iteration={bst.best_iteration} ({time.time() - t0:.0f}s)")
    bst.save_model(os.path.join(args.out, f"{VERSION}_fold{k}.json"))

    oof = bst.predict(dvalid, iteration_range=(0, bst.best_iteration + 1))
    y_va = va[TARGET].to_pandas().values
    score = amex_metric(y_va, oof)
    logger.info(f"fold {k}: amex={score:.5f}")

    importance = pd.DataFrame(
        {"feature": list(bst.get_score(importance_type="gain").keys()),
         "gain": list(bst.get_score(importance_type="gain").values()),
         "fold": k}
    )

    del dtrain, dvalid, it
    gc.collect()
    cp.get_default_memory_pool().free_all_blocks()
    return bst, np.where(va_mask)[0], oof, score, importance


def predict_test(models, test_path, features, args, logger):
    test = read_features(test_path, logger)
    ids = test[ID_COL].to_pandas().values
    n = len(test)
    step = int(np.ceil(n / args.chunk))
    preds = np.zeros(n, dtype=np.float32)
    for a in range(0, n, step):
        b = min(a + step, n)
        part = xgb.DMatrix(data=test[features].iloc[a:b])
        for bst in models:
            preds[a:b] += bst.predict(part, iteration_range=(0, bst.best_iteration + 1)) / len(models)
        del part
        gc.collect()
    return pd.DataFrame({ID_COL: ids, "prediction": preds})


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)
    os.makedirs(args.out, exist_ok=True)
    logger = get_logger(os.path.join(args.out, f"{VERSION}.log"))
    seed_everything(args.seed)

    params = dict(XGB_PARAMS)
    params["gpu_id"] = 0  # index inside CUDA_VISIBLE_DEVICES
    params["random_state"] = args.seed
    logger.info(json.dumps(params, indent=1))

    train = read_features(args.features, logger)
    features = get_feature_columns(train)
    logger.info(f"{len(features)} features")
    fold_ids = make_folds(train, args.folds, args.seed)

    oof = np.zeros(len(train), dtype=np.float32)
    models, scores, importances = [], [], []
    for k in range(args.folds):
        bst, va_idx, fold_oof, score, imp = train_one_fold(train, fold_ids, k, features, params, args, logger)
        oof[va_idx] = fold_oof
        models.append(bst)
        scores.append(score)
        importances.append(imp)

    y_all = train[TARGET].to_pandas().values
    cv = amex_metric(y_all, oof)
    logger.info(f"CV amex={cv:.5f}  folds={np.round(scores, 5).tolist()}")
    oof_df = pd.DataFrame({ID_COL: train[ID_COL].to_pandas().values, "oof": oof, TARGET: y_all})
    oof_df.to_csv(os.path.join(args.out, f"{VERSION}_oof.csv"), index=False)
    pd.concat(importances).to_csv(os.path.join(args.out, f"{VERSION}_importance.csv"), index=False)

    del train
    gc.collect()

    if args.test:
        sub = predict_test(models, args.test, features, args, logger)
        path = Path(args.out) / f"{VERSION}_test.csv"
        sub.to_csv(path, index=False)
        logger.info(f"wrote {path}")


if __name__ == "__main__":
    main()
