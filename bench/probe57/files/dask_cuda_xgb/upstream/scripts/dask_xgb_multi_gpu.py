"""Multi-GPU XGBoost on one node with Dask: one worker per GPU, data partitioned with dask-cuDF.

    python scripts/dask_xgb_multi_gpu.py --data 's3://bucket/higgs/*.parquet' --gpus 0,1,2,3

Follows the structure of the dask-cuda / XGBoost "distributed GPU training" examples.
"""
import argparse
import json
import os
import time

import dask
import dask_cudf
import numpy as np
import xgboost as xgb
from dask.distributed import Client, wait
from dask_cuda import LocalCUDACluster

LABEL = "label"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="parquet glob")
    ap.add_argument("--valid-frac", type=float, default=0.1)
    ap.add_argument("--gpus", default="0,1,2,3")
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--max-depth", type=int, default=8)
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--out", default="models/dask_xgb.json")
    ap.add_argument("--dashboard", default=":8787")
    return ap.parse_args()


def make_cluster(args):
    n_workers = len(args.gpus.split(","))
    cluster = LocalCUDACluster(
        n_workers=n_workers,
        CUDA_VISIBLE_DEVICES=args.gpus,
        rmm_pool_size="24GB",
        protocol="ucx",
        enable_nvlink=True,
        dashboard_address=args.dashboard,
        threads_per_worker=1,
    )
    return cluster


def load(client, path, valid_frac):
    t0 = time.time()
    ddf = dask_cudf.read_parquet(path, blocksize="512MiB")
    ddf = ddf.dropna(subset=[LABEL])
    train, valid = ddf.random_split([1 - valid_frac, valid_frac], random_state=0)
    train, valid = client.persist([train, valid])
    wait([train, valid])
    print(f"loaded {len(train)} train / {len(valid)} valid rows in {time.time() - t0:.0f}s "
          f"({train.npartitions} partitions)")
    return train, valid


def train(client, train_df, valid_df, args):
    features = [c for c in train_df.columns if c != LABEL]
    dtrain = xgb.dask.DaskQuantileDMatrix(client, train_df[features], train_df[LABEL], max_bin=256)
    dvalid = xgb.dask.DaskQuantileDMatrix(client, valid_df[features], valid_df[LABEL], ref=dtrain)
    params = {
        "objective": "binary:logistic",
        "eval_metric": ["logloss", "auc"],
        "max_depth": args.max_depth,
        "eta": args.eta,
        "subsample": 0.8,
        "colsample_bytree": 0.8,
        "tree_method": "gpu_hist",
    }
    t0 = time.time()
    out = xgb.dask.train(
        client,
        params,
        dtrain,
        num_boost_round=args.rounds,
        evals=[(dtrain, "train"), (dvalid, "valid")],
        early_stopping_rounds=50,
        verbose_eval=100,
    )
    elapsed = time.time() - t0
    booster = out["booster"]
    hist = out["history"]
    print(f"trained {booster.num_boosted_rounds()} rounds in {elapsed:.0f}s, "
          f"valid auc={hist['valid']['auc'][-1]:.5f}")
    return booster, features, hist


def evaluate(client, booster, valid_df, features):
    pred = xgb.dask.inplace_predict(client, booster, valid_df[features])
    y = valid_df[LABEL].values
    y_np, p_np = dask.compute(y, pred)
    y_np = y_np.get() if hasattr(y_np, "get") else np.asarray(y_np)
    p_np = p_np.get() if hasattr(p_np, "get") else np.asarray(p_np)
    acc = float(((p_np > 0.5) == y_np).mean())
    print(f"valid accuracy {acc:.4f}")
    return acc


def main():
    args = parse_args()
    with make_cluster(args) as cluster, Client(cluster) as client:
        print(client)
        train_df, valid_df = load(client, args.data, args.valid_frac)
        booster, features, hist = train(client, train_df, valid_df, args)
        acc = evaluate(client, booster, valid_df, features)
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        booster.save_model(args.out)
        with open(args.out.replace(".json", "_history.json"), "w") as f:
            json.dump({"history": hist, "valid_acc": acc}, f)


if __name__ == "__main__":
    main()
