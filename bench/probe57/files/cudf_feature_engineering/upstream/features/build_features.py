"""Feature engineering for the transactions competition.

Group statistics, smoothed target encoding, robust scaling and k-nearest-neighbour label features.
Frames stay on the GPU with cuDF when RAPIDS is installed; the heavy numeric parts run as torch
tensors on the same card.

    python features/build_features.py --train data/train.parquet --test data/test.parquet --out data/fe
"""
import argparse
import gc
import os
import time

import numpy as np
import torch

try:
    import cudf as xd  # RAPIDS frames when available
    ON_GPU_DF = True
except ImportError:  # plain pandas on CPU-only boxes
    import pandas as xd
    ON_GPU_DF = False

import cupy as cp

DEVICE = torch.device("cuda:0")
NUM_COLS = [f"V{i}" for i in range(1, 40)] + ["amount", "dist1", "dist2"]
CAT_COLS = ["card1", "card2", "card3", "card5", "addr1", "P_emaildomain", "ProductCD"]
GROUP_KEYS = ["card1", "addr1"]
TARGET = "isFraud"


def log(msg, t0=None):
    if t0 is not None:
        torch.cuda.synchronize()
        msg = f"{msg} ({time.time() - t0:.1f}s)"
    print(msg, flush=True)


def to_tensor(df, cols, dtype=torch.float32):
    arr = df[cols].to_numpy() if not ON_GPU_DF else df[cols].to_cupy()
    return torch.as_tensor(arr, dtype=dtype, device=DEVICE)


def to_frame(t, cols, index=None):
    arr = t.detach().cpu().numpy()
    return xd.DataFrame(arr, columns=cols, index=index)


def encode_categories(train, test, cols):
    """Label-encode categoricals over train+test so codes line up."""
    for c in cols:
        both = xd.concat([train[c], test[c]]).astype("str")
        codes, uniques = both.factorize()
        train[c] = codes[: len(train)]
        test[c] = codes[len(train):]
    return train, test


def robust_scale(x, q=0.01):
    """Clip every column to its [q, 1-q] quantiles (NaNs ignored), then standardise."""
    qs = torch.tensor([q, 1.0 - q], device=x.device)
    bounds = torch.nanquantile(x, qs, dim=0)
    x = torch.maximum(torch.minimum(x, bounds[1]), bounds[0])
    mean = torch.nanmean(x, dim=0)
    std = torch.sqrt(torch.nanmean((x - mean) ** 2, dim=0)).clamp_min(1e-6)
    return torch.nan_to_num((x - mean) / std, nan=0.0)


def group_stats(values, group_ids, n_groups):
    """Per-group mean / max / count of each numeric column, gathered back to the rows."""
    n, d = values.shape
    idx = group_ids.view(-1, 1).expand(n, d)
    vals = torch.nan_to_num(values, nan=0.0)
    sums = torch.zeros(n_groups, d, device=values.device).scatter_add(0, idx, vals)
    counts = torch.zeros(n_groups, device=values.device).index_add_(
        0, group_ids, torch.ones(n, device=values.device))
    maxes = torch.full((n_groups, d), float("-inf"), device=values.device)
    maxes = torch.scatter_reduce(maxes, 0, idx, vals, reduce="amax", include_self=True)
    means = sums / counts.clamp_min(1).unsqueeze(1)
    return means[group_ids], maxes[group_ids], counts[group_ids].unsqueeze(1)


def target_encode(train, test, col, smoothing=20.0):
    """Smoothed mean target per category (train statistics applied to both frames)."""
    codes = cp.asarray(train[col].to_numpy() if not ON_GPU_DF else train[col].values, dtype=cp.int64)
    y = cp.asarray(train[TARGET].to_numpy() if not ON_GPU_DF else train[TARGET].values, dtype=cp.float32)
    n_cat = int(codes.max()) + 1
    cnt = cp.bincount(codes, minlength=n_cat).astype(cp.float32)
    pos = cp.bincount(codes, weights=y, minlength=n_cat).astype(cp.float32)
    prior = float(y.mean())
    enc = (pos + prior * smoothing) / (cnt + smoothing)
    enc_t = torch.from_dlpack(enc)
    test_codes = torch.as_tensor(test[col].to_numpy(), device=DEVICE).clamp_max(n_cat - 1)
    return enc_t[torch.from_dlpack(codes)], enc_t[test_codes]


def knn_label_feature(x_train, y_train, x_query, k=32, chunk=8192, exclude_self=False):
    """Mean label of the k nearest training rows (cosine), computed in chunks on the GPU."""
    x_train = torch.nn.functional.normalize(x_train, dim=1)
    x_query = torch.nn.functional.normalize(x_query, dim=1)
    out = torch.empty(x_query.shape[0], device=x_query.device)
    for a in range(0, x_query.shape[0], chunk):
        q = x_query[a:a + chunk]
        sim = q @ x_train.T
        if exclude_self:
            rows = torch.arange(q.shape[0], device=q.device)
            sim[rows, rows + a] = -2.0
        top = sim.topk(k, dim=1).indices
        out[a:a + chunk] = y_train[top].float().mean(dim=1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--knn-k", type=int, default=32)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    t0 = time.time()
    train = xd.read_parquet(args.train)
    test = xd.read_parquet(args.test)
    log(f"read train {train.shape} test {test.shape}", t0)

    train, test = encode_categories(train, test, CAT_COLS)

    t0 = time.time()
    n_train = len(train)
    x = torch.cat([to_tensor(train, NUM_COLS), to_tensor(test, NUM_COLS)])
    x = robust_scale(x)
    keys = torch.cat([to_tensor(train, GROUP_KEYS, torch.int64), to_tensor(test, GROUP_KEYS, torch.int64)])
    feats = [x]
    names = [f"{c}_rs" for c in NUM_COLS]
    for j, key in enumerate(GROUP_KEYS):
        gid = keys[:, j] - keys[:, j].min()
        mean, mx, cnt = group_stats(x, gid, int(gid.max()) + 1)
        feats += [x - mean, mx, cnt]
        names += [f"{c}_minus_mean_{key}" for c in NUM_COLS]
        names += [f"{c}_max_{key}" for c in NUM_COLS]
        names += [f"count_{key}"]
    log("group statistics", t0)

    t0 = time.time()
    te_train, te_test = [], []
    for c in CAT_COLS:
        a, b = target_encode(train, test, c)
        te_train.append(a)
        te_test.append(b)
    feats_te = torch.cat([torch.stack(te_train, 1), torch.stack(te_test, 1)])
    names += [f"{c}_te" for c in CAT_COLS]
    log("target encoding", t0)

    t0 = time.time()
    y = torch.as_tensor(train[TARGET].to_numpy(), device=DEVICE)
    knn_tr = knn_label_feature(x[:n_train], y, x[:n_train], k=args.knn_k, exclude_self=True)
    knn_te = knn_label_feature(x[:n_train], y, x[n_train:], k=args.knn_k)
    names += ["knn_label_mean"]
    log("knn features", t0)

    full = torch.cat(feats + [feats_te, torch.cat([knn_tr, knn_te]).unsqueeze(1)], dim=1)
    fe_train = to_frame(full[:n_train], names)
    fe_test = to_frame(full[n_train:], names)
    fe_train[TARGET] = train[TARGET].values
    fe_train.to_parquet(os.path.join(args.out, "train_fe.parquet"))
    fe_test.to_parquet(os.path.join(args.out, "test_fe.parquet"))
    log(f"wrote {fe_train.shape} / {fe_test.shape} to {args.out}")

    del x, full, feats
    gc.collect()
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
