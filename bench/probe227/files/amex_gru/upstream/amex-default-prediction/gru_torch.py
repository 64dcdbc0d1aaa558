#!/usr/bin/env python
# coding: utf-8
"""AMEX Default Prediction - GRU on the 13 monthly statements of each customer (PyTorch).

Port of the popular "TensorFlow GRU Starter" notebook to PyTorch. Step 1 uses RAPIDS to
turn the raw statements into a [customers, 13, features] array (padding customers with
fewer statements), step 2 trains a 2-layer GRU with k-fold CV on the GPU.

    python gru_torch.py --fold-count 5 [--skip-preprocess]
"""
import argparse
import gc
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.model_selection import KFold

import cudf
import cupy

PATH_TO_DATA = "../input/amex-data-integer-dtypes-parquet-format/"
PATH_TO_PROCESSED = "./data_gru/"
T_STEPS = 13
NUM_FILES = 10
CAT_FEATURES = ["B_30", "B_38", "D_114", "D_116", "D_117", "D_120", "D_126", "D_63", "D_64", "D_66", "D_68"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fold-count", type=int, default=5)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--skip-preprocess", action="store_true")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


# ====================================================================================
# STEP 1: PREPROCESS (RAPIDS)
# ====================================================================================
def feature_engineer(train, PAD_CUSTOMER_TO_13_ROWS=True, targets=None):
    # REDUCE STRING COLUMNS
    train["customer_ID"] = train["customer_ID"].str[-16:].str.hex_to_int().astype("int64")
    train["S_2"] = cudf.to_datetime(train["S_2"])

    # ONE-HOT style encoding of categoricals -> integer codes + 1 (0 reserved for padding)
    for c in CAT_FEATURES:
        train[c] = train[c].astype("category").cat.codes + 1

    # NORMALIZE NUMERIC COLUMNS (numbers are already roughly in [0, 1])
    num_cols = [c for c in train.columns if c not in CAT_FEATURES + ["customer_ID", "S_2"]]
    train[num_cols] = train[num_cols].fillna(0).astype("float32")
    train[num_cols] = train[num_cols].clip(-5, 5)

    # PAD ROWS SO EACH CUSTOMER HAS 13 ROWS
    if PAD_CUSTOMER_TO_13_ROWS:
        tmp = train[["customer_ID"]].groupby("customer_ID").customer_ID.agg("count")
        more = cupy.array([], dtype="int64")
        for j in range(1, T_STEPS):
            i = tmp.loc[tmp == j].index.values
            more = cupy.concatenate([more, cupy.repeat(i, T_STEPS - j)])
        df = train.iloc[: len(more)].copy().fillna(0)
        df = df * 0 - 1  # pad value
        df["customer_ID"] = more
        train = cudf.concat([train, df], axis=0, ignore_index=True)

    # ADD TARGETS (and reduce to 1 byte)
    if targets is not None:
        train = train.merge(targets, on="customer_ID", how="left")
        train.target = train.target.astype("int8")

    # FILL NAN - CHANGE DTYPES - SORT
    train = train.fillna(-0.5)
    train = train.sort_values(["customer_ID", "S_2"])
    train = train.drop(["S_2"], axis=1)
    return train


def preprocess():
    os.makedirs(PATH_TO_PROCESSED, exist_ok=True)
    targets = cudf.read_csv(PATH_TO_DATA + "../amex-default-prediction/train_labels.csv")
    targets["customer_ID"] = targets["customer_ID"].str[-16:].str.hex_to_int().astype("int64")
    train = cudf.read_parquet(PATH_TO_DATA + "train.parquet")
    customers = train[["customer_ID"]].drop_duplicates().sort_index().values.flatten()
    rows = np.array_split(np.arange(len(customers)), NUM_FILES)
    for k, idx in enumerate(rows):
        t0 = time.time()
        part = train.loc[train.customer_ID.isin(customers[idx])]
        part = feature_engineer(part, targets=targets)
        tar = part[["customer_ID", "target"]].drop_duplicates().sort_index()
        np.save(f"{PATH_TO_PROCESSED}targets_{k}.npy", tar.target.values.get())
        data = part.drop(["customer_ID", "target"], axis=1).values.reshape((-1, T_STEPS, part.shape[1] - 2))
        np.save(f"{PATH_TO_PROCESSED}data_{k}.npy", cupy.asnumpy(data.astype("float32")))
        print(f"file {k}: {data.shape} in {time.time() - t0:.0f}s")
        del part, tar, data
        gc.collect()
    del train, targets


# ====================================================================================
# STEP 2: GRU (PyTorch)
# ====================================================================================
class AmexGRU(nn.Module):
    def __init__(self, n_features, hidden=128, num_layers=2, dropout=0.2):
        super().__init__()
        self.in_proj = nn.Linear(n_features, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=num_layers, batch_first=True, dropout=dropout)
        self.head = nn.Sequential(nn.Linear(hidden, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        h = torch.relu(self.in_proj(x))
        out, _ = self.gru(h)
        return self.head(out[:, -1]).squeeze(-1)


def amex_metric(y_true, y_pred):
    labels = np.transpose(np.array([y_true, y_pred]))
    labels = labels[labels[:, 1].argsort()[::-1]]
    weights = np.where(labels[:, 0] == 0, 20, 1)
    cut_vals = labels[np.cumsum(weights) <= int(0.04 * np.sum(weights))]
    top_four = np.sum(cut_vals[:, 0]) / np.sum(labels[:, 0])
    gini = [0, 0]
    for i in [1, 0]:
        labels = np.transpose(np.array([y_true, y_pred]))
        labels = labels[labels[:, i].argsort()[::-1]]
        weight = np.where(labels[:, 0] == 0, 20, 1)
        weight_random = np.cumsum(weight / np.sum(weight))
        total_pos = np.sum(labels[:, 0] * weight)
        cum_pos_found = np.cumsum(labels[:, 0] * weight)
        lorentz = cum_pos_found / total_pos
        gini[i] = np.sum((lorentz - weight_random) * weight)
    return 0.5 * (gini[1] / gini[0] + top_four)


def train_fold(X_tr, y_tr, X_va, y_va, args, fold):
    device = torch.device("cuda")
    model = AmexGRU(X_tr.shape[2], hidden=args.hidden).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)
    loss_fn = nn.BCEWithLogitsLoss()
    scaler = torch.cuda.amp.GradScaler()
    Xt = torch.tensor(X_tr).cuda()
    yt = torch.tensor(y_tr, dtype=torch.float32).cuda()
    Xv = torch.tensor(X_va).cuda()
    best, best_pred = -1, None
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(Xt), device=device)
        t0 = time.time()
        for i in range(0, len(Xt), args.batch_size):
            idx = perm[i:i + args.batch_size]
            with torch.cuda.amp.autocast():
                loss = loss_fn(model(Xt[idx]), yt[idx])
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        sched.step()
        model.eval()
        with torch.no_grad(), torch.cuda.amp.autocast():
            pv = torch.cat([torch.sigmoid(model(Xv[i:i + 4096])).float() for i in range(0, len(Xv), 4096)])
        pv = pv.cpu().numpy()
        score = amex_metric(y_va, pv)
        print(f"fold {fold} epoch {epoch} loss {loss.item():.4f} val amex {score:.4f} ({time.time() - t0:.0f}s)")
        if score > best:
            best, best_pred = score, pv
            torch.save(model.state_dict(), f"gru_fold{fold}.pt")
    del Xt, yt, Xv
    torch.cuda.empty_cache()
    return best, best_pred


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if not args.skip_preprocess:
        preprocess()

    X = np.concatenate([np.load(f"{PATH_TO_PROCESSED}data_{k}.npy") for k in range(NUM_FILES)])
    y = np.concatenate([np.load(f"{PATH_TO_PROCESSED}targets_{k}.npy") for k in range(NUM_FILES)])
    print("data", X.shape, "targets", y.shape)

    oof = np.zeros(len(y))
    kf = KFold(n_splits=args.fold_count, shuffle=True, random_state=args.seed)
    for fold, (tr, va) in enumerate(kf.split(X)):
        score, pred = train_fold(X[tr], y[tr], X[va], y[va], args, fold)
        oof[va] = pred
        print(f"fold {fold} best amex {score:.4f}")
    print("OVERALL CV amex", amex_metric(y, oof))
    os.makedirs("oof", exist_ok=True)
    np.save("oof/oof_gru_v1.npy", oof)
    pd.DataFrame({"oof": oof, "target": y}).to_csv("oof/oof_gru_v1.csv", index=False)


if __name__ == "__main__":
    main()
