"""Multi-GPU (DDP) training of the DAE-MLP on the full feature set.

    torchrun --nproc_per_node=8 -m src.train_ddp --features v3 --epochs 40
    # or single GPU for debugging
    python -m src.train_ddp --features v3 --epochs 1 --backend gloo

Each rank loads the whole (small, ~2GB) feature matrix into host memory and a
DistributedSampler shards the rows. Validation predictions are gathered on rank 0.
"""
from __future__ import annotations

import argparse
import datetime
import json
import logging
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from src.utils import AverageMeter, seed_everything

logger = logging.getLogger("train_ddp")

# surface NCCL errors as exceptions instead of hanging the job
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--features", default="v3")
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=4096, help="per GPU")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", type=int, nargs="+", default=[1500, 1500, 1500])
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--amp", action="store_true")
    p.add_argument("--fp16-allreduce", action="store_true", help="compress gradients to fp16 for all-reduce")
    p.add_argument("--sync-bn", action="store_true")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--out", default="models/dae_mlp_ddp")
    p.add_argument("--resume", default=None)
    return p.parse_args()


def setup(backend: str):
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if world > 1:
        dist.init_process_group(backend=backend, init_method="env://", timeout=datetime.timedelta(minutes=30))
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    return rank, world, local_rank, device


def is_main(rank):
    return rank == 0


class DaeMLP(nn.Module):
    def __init__(self, n_in, hidden, dropout):
        super().__init__()
        layers, prev = [], n_in
        for h in hidden:
            layers += [nn.Linear(prev, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
            prev = h
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(prev, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def load(features, fold):
    root = Path("features") / features
    df = pd.read_parquet(root / "train_folds.parquet")
    feats = [c for c in df.columns if c.startswith(("f_", "dae_", "knn"))]
    tr, va = df[df.kfold != fold], df[df.kfold == fold]
    x_tr = tr[feats].values.astype(np.float32)
    x_va = va[feats].values.astype(np.float32)
    return x_tr, tr.target.values.astype(np.float32), x_va, va.target.values.astype(np.float32), feats


def gather_predictions(pred: torch.Tensor, world: int, backend: str) -> torch.Tensor:
    if world == 1:
        return pred
    if backend == "nccl" and not pred.is_cuda:
        pred = pred.cuda()
    sizes = [torch.zeros(1, dtype=torch.long, device=pred.device) for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([pred.numel()], device=pred.device))
    max_n = int(max(s.item() for s in sizes))
    padded = torch.zeros(max_n, device=pred.device, dtype=pred.dtype)
    padded[: pred.numel()] = pred
    out = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(out, padded)
    return torch.cat([o[: int(s.item())] for o, s in zip(out, sizes)])


def main():
    args = parse_args()
    rank, world, local_rank, device = setup(args.backend)
    logging.basicConfig(level=logging.INFO if is_main(rank) else logging.WARNING,
                        format=f"%(asctime)s [rank {rank}] %(message)s")
    seed_everything(1234 + rank)

    x_tr, y_tr, x_va, y_va, feats = load(args.features, args.fold)
    logger.info("world %d, train %s, valid %s, device %s", world, x_tr.shape, x_va.shape, device)

    train_ds = TensorDataset(torch.from_numpy(x_tr), torch.from_numpy(y_tr))
    valid_ds = TensorDataset(torch.from_numpy(x_va), torch.from_numpy(y_va))
    train_sampler = DistributedSampler(train_ds, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    valid_sampler = DistributedSampler(valid_ds, num_replicas=world, rank=rank, shuffle=False)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_ds, batch_size=args.batch_size * 4, sampler=valid_sampler,
                              num_workers=args.workers, pin_memory=True)

    model = DaeMLP(len(feats), args.hidden, args.dropout)
    if args.sync_bn and world > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    if args.resume:
        state = torch.load(args.resume, map_location={"cuda:0": f"cuda:{local_rank}"})
        model.load_state_dict(state["model"])
    if world > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, bucket_cap_mb=50,
                    gradient_as_bucket_view=True)
        if args.fp16_allreduce:
            model.register_comm_hook(state=None, hook=default_hooks.fp16_compress_hook)

    lr = args.lr * math.sqrt(world)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best_auc, history = 0.0, []
    out_dir = Path(args.out)
    if is_main(rank):
        out_dir.mkdir(parents=True, exist_ok=True)

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        meter = AverageMeter()
        t0 = time.time()
        for xb, yb in train_loader:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                loss = F.binary_cross_entropy_with_logits(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            meter.update(loss.item(), xb.size(0))
        sched.step()

        # average the epoch loss over ranks for logging
        loss_t = torch.tensor([meter.avg], device=device)
        if world > 1:
            dist.all_reduce(loss_t, op=dist.ReduceOp.SUM)
            loss_t /= world

        model.eval()
        preds, ys = [], []
        with torch.no_grad():
            for xb, yb in valid_loader:
                preds.append(torch.sigmoid(model(xb.to(device))).float())
                ys.append(yb.to(device))
        pred = gather_predictions(torch.cat(preds), world, args.backend)
        yall = gather_predictions(torch.cat(ys), world, args.backend)
        if is_main(rank):
            auc = roc_auc_score(yall.cpu().numpy(), pred.cpu().numpy())
            history.append({"epoch": epoch, "loss": loss_t.item(), "auc": auc, "sec": time.time() - t0})
            logger.info("epoch %02d loss %.5f auc %.5f (%.0fs)", epoch, loss_t.item(), auc, time.time() - t0)
            if auc > best_auc:
                best_auc = auc
                raw = model.module if isinstance(model, DDP) else model
                torch.save({"model": raw.state_dict(), "epoch": epoch, "auc": auc}, out_dir / f"fold{args.fold}.pt")
        if world > 1:
            dist.barrier()

    if is_main(rank):
        with open(out_dir / f"history_fold{args.fold}.json", "w") as f:
            json.dump(history, f, indent=1)
        logger.info("best auc %.5f", best_auc)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
