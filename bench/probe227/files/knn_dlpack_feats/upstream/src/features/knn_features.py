"""Nearest-neighbour target features computed from learned embeddings.

Pipeline:
  1. an autoencoder (``DenoisingAE``) trained on the numeric columns gives a 64-d embedding per row
  2. cuML NearestNeighbors (brute force, cosine) finds the K closest *training* rows for every row
  3. we aggregate the neighbours' targets (mean / std / weighted mean) as out-of-fold features

Everything stays on the GPU: cuDF -> CuPy -> torch via DLPack (zero copy) and back.
"""
from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.dlpack import from_dlpack, to_dlpack

import cudf
import cupy as cp
from cuml.neighbors import NearestNeighbors
from cuml.preprocessing import StandardScaler

logger = logging.getLogger(__name__)


@dataclass
class KNNConfig:
    train_path: str = "data/train_folds.parquet"
    test_path: str = "data/test.parquet"
    out_dir: str = "features/knn"
    target: str = "target"
    fold_col: str = "kfold"
    n_folds: int = 5
    k_list: List[int] = field(default_factory=lambda: [5, 20, 50])
    emb_dim: int = 64
    ae_epochs: int = 12
    ae_batch_size: int = 4096
    ae_lr: float = 3e-3
    swap_noise: float = 0.15
    seed: int = 42
    device: str = "cuda:0"


class DenoisingAE(nn.Module):
    """Swap-noise DAE as used by the Porto Seguro 1st place solution."""

    def __init__(self, n_in: int, hidden: int = 512, emb_dim: int = 64, dropout: float = 0.1):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(n_in, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(hidden, emb_dim),
        )
        self.decoder = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Linear(emb_dim, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, n_in),
        )

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z

    @torch.no_grad()
    def embed(self, x):
        return self.encoder(x)


def swap_noise(x: torch.Tensor, p: float) -> torch.Tensor:
    """Replace a fraction ``p`` of every column with values from other random rows."""
    n, d = x.shape
    mask = torch.rand(n, d, device=x.device) < p
    idx = torch.randint(0, n, (n, d), device=x.device)
    shuffled = torch.gather(x, 0, idx)
    return torch.where(mask, shuffled, x)


def cudf_to_torch(df: "cudf.DataFrame", cols: List[str]) -> torch.Tensor:
    """Zero-copy cuDF -> torch through DLPack (float32, row major)."""
    arr = df[cols].astype("float32").to_cupy()
    arr = cp.ascontiguousarray(arr)
    return from_dlpack(arr.toDlpack())


def torch_to_cupy(t: torch.Tensor) -> "cp.ndarray":
    return cp.from_dlpack(to_dlpack(t.contiguous()))


def train_autoencoder(x: torch.Tensor, cfg: KNNConfig) -> DenoisingAE:
    torch.manual_seed(cfg.seed)
    model = DenoisingAE(x.shape[1], emb_dim=cfg.emb_dim).to(x.device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.ae_lr)
    n = x.shape[0]
    steps = (n + cfg.ae_batch_size - 1) // cfg.ae_batch_size
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(cfg.ae_epochs):
        model.train()
        perm = torch.randperm(n, device=x.device)
        tot = 0.0
        t0 = time.time()
        for s in range(steps):
            idx = perm[s * cfg.ae_batch_size:(s + 1) * cfg.ae_batch_size]
            xb = x[idx]
            xn = swap_noise(xb, cfg.swap_noise)
            with torch.cuda.amp.autocast():
                rec, _ = model(xn)
                loss = F.mse_loss(rec, xb)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            tot += loss.item()
        logger.info("dae epoch %d loss %.5f (%.1fs)", epoch, tot / steps, time.time() - t0)
    model.eval()
    return model


def knn_target_stats(emb_fit, y_fit, emb_query, k_list, exclude_self=False):
    """Return dict name -> cupy array with neighbour target statistics."""
    k_max = max(k_list) + int(exclude_self)
    nn_model = NearestNeighbors(n_neighbors=k_max, metric="cosine", algorithm="brute")
    nn_model.fit(emb_fit)
    dist, ind = nn_model.kneighbors(emb_query)
    dist = cp.asarray(dist)
    ind = cp.asarray(ind)
    if exclude_self:
        dist, ind = dist[:, 1:], ind[:, 1:]
    yn = y_fit[ind]
    out = {}
    for k in k_list:
        w = 1.0 / (dist[:, :k] + 1e-6)
        out[f"knn{k}_mean"] = yn[:, :k].mean(axis=1)
        out[f"knn{k}_std"] = yn[:, :k].std(axis=1)
        out[f"knn{k}_wmean"] = (yn[:, :k] * w).sum(axis=1) / w.sum(axis=1)
        out[f"knn{k}_dist"] = dist[:, :k].mean(axis=1)
    return out


def build_features(cfg: KNNConfig) -> None:
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    train = cudf.read_parquet(cfg.train_path)
    test = cudf.read_parquet(cfg.test_path)
    num_cols = [c for c in test.columns if c.startswith("f_") and test[c].dtype.kind in "fi"]
    logger.info("%d numeric columns, train %s, test %s", len(num_cols), train.shape, test.shape)

    full = cudf.concat([train[num_cols], test[num_cols]], ignore_index=True)
    full = full.fillna(full.mean())
    scaler = StandardScaler()
    full[num_cols] = scaler.fit_transform(full[num_cols])

    x_all = cudf_to_torch(full, num_cols).to(cfg.device)
    dae = train_autoencoder(x_all, cfg)
    with torch.no_grad():
        emb_parts = [dae.embed(x_all[i:i + 65536]) for i in range(0, x_all.shape[0], 65536)]
    emb_all = F.normalize(torch.cat(emb_parts), dim=1)
    emb_cp = torch_to_cupy(emb_all)

    n_train = len(train)
    emb_tr, emb_te = emb_cp[:n_train], emb_cp[n_train:]
    y = train[cfg.target].astype("float32").values
    folds = train[cfg.fold_col].values

    oof = {}
    for fold in range(cfg.n_folds):
        trn_idx = cp.where(folds != fold)[0]
        val_idx = cp.where(folds == fold)[0]
        stats = knn_target_stats(emb_tr[trn_idx], y[trn_idx], emb_tr[val_idx], cfg.k_list)
        for name, arr in stats.items():
            if name not in oof:
                oof[name] = cp.zeros(n_train, dtype=cp.float32)
            oof[name][val_idx] = arr
        logger.info("fold %d done", fold)

    test_stats = knn_target_stats(emb_tr, y, emb_te, cfg.k_list)

    oof_df = cudf.DataFrame({k: v for k, v in oof.items()})
    oof_df["id"] = train["id"].values
    te_df = cudf.DataFrame({k: v for k, v in test_stats.items()})
    te_df["id"] = test["id"].values
    oof_df.to_parquet(out_dir / "knn_oof.parquet")
    te_df.to_parquet(out_dir / "knn_test.parquet")

    # keep a CPU copy of the embeddings for the GBDT notebooks
    np.save(out_dir / "emb_train.npy", cp.asnumpy(emb_tr))
    np.save(out_dir / "emb_test.npy", cp.asnumpy(emb_te))
    torch.save(dae.state_dict(), out_dir / "dae.pt")
    logger.info("peak GPU memory %.2f GB", torch.cuda.max_memory_allocated() / 1024 ** 3)


def parse_args() -> KNNConfig:
    p = argparse.ArgumentParser()
    p.add_argument("--train", default=KNNConfig.train_path)
    p.add_argument("--test", default=KNNConfig.test_path)
    p.add_argument("--out", default=KNNConfig.out_dir)
    p.add_argument("--epochs", type=int, default=KNNConfig.ae_epochs)
    p.add_argument("--gpu", type=int, default=0, help="GPU ordinal to run the autoencoder on")
    a = p.parse_args()
    cfg = KNNConfig(train_path=a.train, test_path=a.test, out_dir=a.out, ae_epochs=a.epochs)
    cfg.device = f"cuda:{a.gpu}"
    return cfg


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    cfg = parse_args()
    cp.cuda.Device(int(cfg.device.split(":")[1])).use()
    build_features(cfg)
