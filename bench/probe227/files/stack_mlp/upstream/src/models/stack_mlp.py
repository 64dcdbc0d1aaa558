"""Level-2 stacker: a small PyTorch MLP on top of the level-1 OOF predictions.

Inputs are the OOF / test predictions written by the GBDT, TabNet and DAE-MLP runs
(``models/<name>/oof.npy`` and ``test.npy``) plus a handful of raw features. Predictions
are rank-gauss transformed, then a 3-layer MLP is trained with k-fold CV and several seeds.

    python -m src.models.stack_mlp --config configs/stack_mlp.yaml
"""
from __future__ import annotations

import argparse
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from scipy.special import erfinv
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, TensorDataset

from src.utils import AverageMeter, get_device, seed_everything

logger = logging.getLogger(__name__)

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


@dataclass
class StackConfig:
    level1: List[str] = field(default_factory=lambda: ["xgb_v1", "lgb_v3", "cat_v3", "tabnet_v2", "dae_mlp_v1"])
    raw_features: List[str] = field(default_factory=list)
    train_path: str = "features/v3/train.parquet"
    test_path: str = "features/v3/test.parquet"
    folds: int = 5
    seeds: List[int] = field(default_factory=lambda: [0, 1, 2])
    hidden: List[int] = field(default_factory=lambda: [256, 128, 64])
    dropout: float = 0.2
    lr: float = 2e-3
    weight_decay: float = 1e-5
    epochs: int = 30
    batch_size: int = 2048
    patience: int = 5
    amp: bool = True
    compile: bool = False
    num_workers: int = 2
    out_dir: str = "models/stack_mlp"


def rank_gauss(x: np.ndarray) -> np.ndarray:
    """Rank -> uniform(-1, 1) -> inverse erf, column-wise."""
    out = np.empty_like(x, dtype=np.float32)
    n = x.shape[0]
    for j in range(x.shape[1]):
        r = x[:, j].argsort().argsort().astype(np.float64)
        r = (r / (n - 1) - 0.5) * 2
        r = np.clip(r, -1 + 1e-6, 1 - 1e-6)
        out[:, j] = erfinv(r)
    return out


def load_level1(cfg: StackConfig):
    oofs, tests = [], []
    for name in cfg.level1:
        d = Path("models") / name
        oofs.append(np.load(d / "oof.npy").reshape(-1, 1))
        tests.append(np.load(d / "test.npy").reshape(-1, 1))
    oof = np.hstack(oofs)
    test = np.hstack(tests)
    train_df = pd.read_parquet(cfg.train_path, columns=["id", "target"] + cfg.raw_features)
    test_df = pd.read_parquet(cfg.test_path, columns=["id"] + cfg.raw_features)
    if cfg.raw_features:
        oof = np.hstack([oof, train_df[cfg.raw_features].values])
        test = np.hstack([test, test_df[cfg.raw_features].values])
    both = rank_gauss(np.vstack([oof, test]))
    return both[: len(oof)], both[len(oof):], train_df["target"].values.astype(np.float32), test_df["id"].values


class StackMLP(nn.Module):
    def __init__(self, n_in: int, hidden: List[int], dropout: float):
        super().__init__()
        layers = []
        prev = n_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.BatchNorm1d(h), nn.SiLU(), nn.Dropout(dropout)]
            prev = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(prev, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


def make_loader(x, y, batch_size, shuffle, num_workers):
    ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    return DataLoader(ds, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers, pin_memory=True,
                      drop_last=shuffle, persistent_workers=num_workers > 0)


def amp_dtype():
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def train_one(cfg, x_tr, y_tr, x_va, y_va, device, seed):
    seed_everything(seed)
    model = StackMLP(x_tr.shape[1], cfg.hidden, cfg.dropout).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)
    steps_per_epoch = math.ceil(len(x_tr) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=cfg.epochs * steps_per_epoch)
    dtype = amp_dtype()
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp and dtype == torch.float16)
    tr_loader = make_loader(x_tr, y_tr, cfg.batch_size, True, cfg.num_workers)
    va_x = torch.from_numpy(x_va).to(device)

    best, best_state, bad = -1.0, None, 0
    for epoch in range(cfg.epochs):
        model.train()
        meter = AverageMeter()
        t0 = time.time()
        for xb, yb in tr_loader:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=dtype, enabled=cfg.amp):
                loss = F.binary_cross_entropy_with_logits(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(opt)
            scaler.update()
            sched.step()
            meter.update(loss.item(), xb.size(0))
        model.eval()
        with torch.no_grad():
            pv = torch.sigmoid(model(va_x)).float().cpu().numpy()
        auc = roc_auc_score(y_va, pv)
        logger.info("seed %d epoch %02d loss %.5f val auc %.5f (%.1fs)", seed, epoch, meter.avg, auc, time.time() - t0)
        if auc > best:
            best, bad = auc, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            bad += 1
            if bad >= cfg.patience:
                break
    model.load_state_dict(best_state)
    return model, best


@torch.no_grad()
def predict(model, x, device, compile_model=False, batch_size=65536):
    model.eval()
    if compile_model:
        model = torch.compile(model, mode="reduce-overhead")
    out = []
    for i in range(0, len(x), batch_size):
        xb = torch.from_numpy(x[i:i + batch_size]).to(device)
        out.append(torch.sigmoid(model(xb)).float().cpu().numpy())
    return np.concatenate(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=None)
    args = ap.parse_args()
    cfg = StackConfig()
    if args.config:
        with open(args.config) as f:
            for k, v in (yaml.safe_load(f) or {}).items():
                setattr(cfg, k, v)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    device = get_device()
    logger.info("device: %s", device)

    x, y, x_test, test_ids = load_level1(cfg)
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    oof = np.zeros(len(x))
    pred = np.zeros(len(x_test))
    torch.cuda.reset_peak_memory_stats()
    for seed in cfg.seeds:
        skf = StratifiedKFold(n_splits=cfg.folds, shuffle=True, random_state=seed)
        for fold, (tr, va) in enumerate(skf.split(x, y)):
            model, best = train_one(cfg, x[tr], y[tr], x[va], y[va], device, seed * 100 + fold)
            oof[va] += predict(model, x[va], device) / len(cfg.seeds)
            pred += predict(model, x_test, device, compile_model=cfg.compile) / (len(cfg.seeds) * cfg.folds)
            torch.save(model.state_dict(), out_dir / f"mlp_s{seed}_f{fold}.pt")
            logger.info("seed %d fold %d best auc %.5f", seed, fold, best)

    score = roc_auc_score(y, oof)
    logger.info("stack CV AUC %.5f, peak mem %.0f MB", score, torch.cuda.max_memory_allocated() / 2 ** 20)
    np.save(out_dir / "oof.npy", oof)
    np.save(out_dir / "test.npy", pred)
    pd.DataFrame({"id": test_ids, "target": pred}).to_csv(out_dir / "submission.csv", index=False)


if __name__ == "__main__":
    main()
