"""LightGBM cross-validation on the GPU learner (Optiver / Ubiquant style time-id group folds).

    python src/train_lgbm.py --train data/train_feats.parquet --n-folds 5 --seeds 0 1 2
"""
import argparse
import gc
import logging
import os
import pickle
import time

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold

logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
log = logging.getLogger("lgbm")

BASE_PARAMS = {
    "objective": "rmse",
    "boosting_type": "gbdt",
    "learning_rate": 0.05,
    "num_leaves": 255,
    "min_data_in_leaf": 200,
    "feature_fraction": 0.5,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "max_bin": 63,  # 63 bins is the sweet spot for the GPU histogram kernels
    "device_type": "gpu",
    "gpu_platform_id": 0,
    "gpu_device_id": 0,
    "gpu_use_dp": False,
    "num_threads": 8,
    "verbose": -1,
}


def rmspe(y_true, y_pred):
    return np.sqrt(np.mean(np.square((y_true - y_pred) / y_true)))


def feval_rmspe(y_pred, lgb_train):
    y_true = lgb_train.get_label()
    return "RMSPE", rmspe(y_true, y_pred), False


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", default=None)
    ap.add_argument("--n-folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--rounds", type=int, default=5000)
    ap.add_argument("--out", default="models/lgbm")
    ap.add_argument("--cuda-learner", action="store_true",
                    help="use the CUDA tree learner of LightGBM 4 instead of the OpenCL one")
    ap.add_argument("--shap", action="store_true")
    return ap.parse_args()


def load(path):
    t0 = time.time()
    df = pd.read_parquet(path)
    for c in df.columns:
        if df[c].dtype == np.float64:
            df[c] = df[c].astype(np.float32)
    log.info("loaded %s %s in %.1fs", path, df.shape, time.time() - t0)
    return df


def select_features(df):
    return [c for c in df.columns if c not in ("row_id", "time_id", "stock_id_str", "target")]


def make_params(args, seed):
    params = dict(BASE_PARAMS)
    params["seed"] = seed
    params["bagging_seed"] = seed
    params["feature_fraction_seed"] = seed
    if args.cuda_learner:
        params["device_type"] = "cuda"
        params.pop("gpu_platform_id")
        params.pop("gpu_use_dp")
    return params


def run_cv(df, features, args, seed):
    params = make_params(args, seed)
    y = df["target"].values
    w = 1.0 / np.square(y)
    groups = df["time_id"].values
    oof = np.zeros(len(df), dtype=np.float32)
    boosters = []
    gkf = GroupKFold(n_splits=args.n_folds)
    for fold, (tr_idx, va_idx) in enumerate(gkf.split(df, y, groups)):
        t0 = time.time()
        dtrain = lgb.Dataset(df.iloc[tr_idx][features], y[tr_idx], weight=w[tr_idx],
                             categorical_feature=["stock_id"], free_raw_data=False)
        dvalid = lgb.Dataset(df.iloc[va_idx][features], y[va_idx], weight=w[va_idx],
                             categorical_feature=["stock_id"], reference=dtrain)
        booster = lgb.train(
            params,
            dtrain,
            num_boost_round=args.rounds,
            valid_sets=[dtrain, dvalid],
            valid_names=["train", "valid"],
            feval=feval_rmspe,
            callbacks=[lgb.early_stopping(200, verbose=False), lgb.log_evaluation(250)],
        )
        oof[va_idx] = booster.predict(df.iloc[va_idx][features], num_iteration=booster.best_iteration)
        score = rmspe(y[va_idx], oof[va_idx])
        log.info("seed %d fold %d: rmspe=%.5f iters=%d (%.0fs on GPU)",
                 seed, fold, score, booster.best_iteration, time.time() - t0)
        boosters.append(booster)
        del dtrain, dvalid
        gc.collect()
    log.info("seed %d CV rmspe=%.5f", seed, rmspe(y, oof))
    return boosters, oof


def shap_importance(booster, df, features, n_rows=20000):
    # TreeSHAP runs on the host; the GPU learner settings are irrelevant here
    sample = df.sample(n=min(n_rows, len(df)), random_state=0)[features]
    contrib = booster.predict(sample, pred_contrib=True)
    imp = np.abs(contrib[:, :-1]).mean(axis=0)
    return pd.Series(imp, index=features).sort_values(ascending=False)


def refit_full(df, features, args, seed, n_rounds):
    """Refit on all rows with the sklearn API (used for the final submission)."""
    model = lgb.LGBMRegressor(
        n_estimators=n_rounds,
        learning_rate=BASE_PARAMS["learning_rate"],
        num_leaves=BASE_PARAMS["num_leaves"],
        min_child_samples=BASE_PARAMS["min_data_in_leaf"],
        colsample_bytree=BASE_PARAMS["feature_fraction"],
        subsample=BASE_PARAMS["bagging_fraction"],
        subsample_freq=1,
        reg_lambda=BASE_PARAMS["lambda_l2"],
        max_bin=BASE_PARAMS["max_bin"],
        device="gpu",
        random_state=seed,
        n_jobs=8,
    )
    y = df["target"].values
    model.fit(df[features], y, sample_weight=1.0 / np.square(y), categorical_feature=["stock_id"])
    return model


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    df = load(args.train)
    features = select_features(df)
    log.info("%d features", len(features))

    all_oof = []
    best_iters = []
    for seed in args.seeds:
        boosters, oof = run_cv(df, features, args, seed)
        all_oof.append(oof)
        best_iters += [b.best_iteration for b in boosters]
        with open(os.path.join(args.out, f"boosters_seed{seed}.pkl"), "wb") as f:
            pickle.dump(boosters, f)
        if args.shap and seed == args.seeds[0]:
            imp = shap_importance(boosters[0], df, features)
            imp.to_csv(os.path.join(args.out, "shap_importance.csv"))

    blend = np.mean(all_oof, axis=0)
    log.info("blend CV rmspe=%.5f", rmspe(df["target"].values, blend))

    n_rounds = int(np.mean(best_iters) * 1.1)
    final = refit_full(df, features, args, args.seeds[0], n_rounds)
    final.booster_.save_model(os.path.join(args.out, "lgbm_full.txt"))
    log.info("saved full refit with %d rounds", n_rounds)


if __name__ == "__main__":
    main()
