"""GPU feature pipeline: cuDF/cuML preprocessing that hands tensors to PyTorch without leaving the device.

Reads the raw click logs with cuDF, engineers aggregate features, scales / reduces them with cuML,
and returns zero-copy torch tensors via DLPack for the tabular model in `models/tabnet.py`.
"""
import argparse
import logging
import os
import time

import cudf
import cupy as cp
import numpy as np
import torch
from cuml.decomposition import PCA
from cuml.preprocessing import StandardScaler, TargetEncoder
from torch.utils.dlpack import from_dlpack

log = logging.getLogger("features")

CAT_COLS = ["site_id", "app_id", "device_model", "banner_pos"]
NUM_COLS = ["hour", "C14", "C17", "C20", "C21"]


def load_frame(path: str) -> "cudf.DataFrame":
    t0 = time.time()
    df = cudf.read_parquet(path, columns=CAT_COLS + NUM_COLS + ["click", "user_id"])
    log.info("loaded %d rows in %.1fs on GPU", len(df), time.time() - t0)
    return df


def add_aggregates(df: "cudf.DataFrame") -> "cudf.DataFrame":
    grp = df.groupby("user_id").agg({"click": ["mean", "count"], "C14": "nunique"})
    grp.columns = ["user_ctr", "user_n", "user_c14_nuniq"]
    df = df.merge(grp.reset_index(), on="user_id", how="left")
    df["hour_of_day"] = (df["hour"] % 100).astype("int32")
    df["log_user_n"] = cp.log1p(df["user_n"].values)
    return df


def encode_categoricals(df, target="click"):
    enc = TargetEncoder(n_folds=5, smooth=20, seed=42)
    for col in CAT_COLS:
        df[f"{col}_te"] = enc.fit_transform(df[col], df[target])
    return df


def to_torch(df: "cudf.DataFrame", cols):
    """Zero-copy hand-off: cuDF -> DLPack capsule -> torch CUDA tensor."""
    mat = df[cols].astype("float32")
    return from_dlpack(mat.to_dlpack())


def build_features(path: str, n_components: int = 16):
    df = load_frame(path)
    df = add_aggregates(df)
    df = encode_categoricals(df)
    feat_cols = NUM_COLS + ["user_ctr", "log_user_n", "user_c14_nuniq", "hour_of_day"] + [f"{c}_te" for c in CAT_COLS]
    df[feat_cols] = df[feat_cols].fillna(0)

    scaler = StandardScaler()
    scaled = scaler.fit_transform(df[feat_cols])
    pca = PCA(n_components=n_components, random_state=0)
    reduced = pca.fit_transform(scaled)
    log.info("PCA explained variance: %.3f", float(cp.asnumpy(pca.explained_variance_ratio_.values).sum()))

    reduced = cudf.DataFrame(reduced)
    reduced.columns = [f"pc{i}" for i in range(n_components)]
    x_dense = to_torch(scaled, feat_cols)
    x_pca = to_torch(reduced, list(reduced.columns))
    y = torch.as_tensor(cp.asarray(df["click"].values), device="cuda").float()
    x = torch.cat([x_dense, x_pca], dim=1)
    assert x.is_cuda and y.is_cuda
    return x, y


def train_val_split(x, y, val_frac=0.1, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    perm = torch.randperm(x.shape[0], device=x.device, generator=g)
    n_val = int(val_frac * x.shape[0])
    return (x[perm[n_val:]], y[perm[n_val:]]), (x[perm[:n_val]], y[perm[:n_val]])


def save_npz(x, y, out):
    np.savez_compressed(out, x=x.cpu().numpy(), y=y.cpu().numpy())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/clicks.parquet")
    ap.add_argument("--out", default="data/features.npz")
    ap.add_argument("--pca", type=int, default=16)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    cp.cuda.Device(int(os.environ.get("LOCAL_RANK", 0))).use()
    x, y = build_features(args.data, args.pca)
    (xtr, ytr), (xva, yva) = train_val_split(x, y)
    log.info("train %s val %s, positives %.3f", tuple(xtr.shape), tuple(xva.shape), ytr.mean().item())
    save_npz(x, y, args.out)


if __name__ == "__main__":
    main()
