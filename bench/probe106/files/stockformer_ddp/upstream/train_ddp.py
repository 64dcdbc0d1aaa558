#!/usr/bin/env python
"""Distributed training of StockFormer on daily cross-sections.

One sample = one trading day: all stocks of the universe with a `lookback`-day
feature window.  The loss is the negative cross-sectional Pearson IC (plus a small
MSE term), evaluated per day and averaged over the batch of days.

    torchrun --nproc_per_node=8 train_ddp.py --config configs/stockformer_csi800.yaml
    python train_ddp.py --config configs/stockformer_csi800.yaml          # single GPU
"""
import argparse
import datetime
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from data.cross_section import DailyCrossSectionDataset, collate_daily
from models.stockformer import StockFormer
from utils.metrics import ic_summary, pearson_ic, rank_ic
from utils.optim import build_optimizer, build_scheduler

logger = logging.getLogger("train_ddp")

# NCCL watchdog: abort hung collectives instead of blocking forever
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--output_dir", default="runs/stockformer")
    parser.add_argument("--resume", default="")
    parser.add_argument("--amp", choices=["off", "fp16", "bf16"], default="bf16")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--log_every", type=int, default=20)
    parser.add_argument("--eval_only", action="store_true")
    return parser.parse_args()


def setup_distributed():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
    else:
        rank, world_size, local_rank = 0, 1, 0

    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(
            backend="nccl",
            init_method="env://",
            timeout=datetime.timedelta(minutes=30),
        )
        dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank


def seed_all(seed: int, rank: int):
    s = seed + rank
    random.seed(s)
    np.random.seed(s)
    torch.manual_seed(s)
    torch.cuda.manual_seed_all(s)


def is_main(rank):
    return rank == 0


def all_reduce_mean(t: torch.Tensor, world_size: int) -> torch.Tensor:
    if world_size > 1:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= world_size
    return t


def autocast_ctx(amp_dtype):
    """mixed precision for the forward pass; amp_dtype None disables it"""
    return torch.autocast(device_type="cuda", dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None)


def ic_loss(pred, target, mask, mse_weight=0.1):
    """negative mean daily Pearson IC + small MSE; pred/target/mask: [days, stocks]"""
    mask = mask.float()
    n = mask.sum(dim=1).clamp(min=2.0)
    p = (pred * mask).sum(1, keepdim=True) / n[:, None]
    t = (target * mask).sum(1, keepdim=True) / n[:, None]
    pc = (pred - p) * mask
    tc = (target - t) * mask
    cov = (pc * tc).sum(1)
    ic = cov / (pc.pow(2).sum(1).sqrt() * tc.pow(2).sum(1).sqrt() + 1e-8)
    mse = ((pred - target).pow(2) * mask).sum() / mask.sum().clamp(min=1.0)
    return -ic.mean() + mse_weight * mse, ic.detach()


def build_loaders(cfg, world_size, rank):
    train_set = DailyCrossSectionDataset(cfg["data"], split="train")
    valid_set = DailyCrossSectionDataset(cfg["data"], split="valid")
    test_set = DailyCrossSectionDataset(cfg["data"], split="test")

    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True)
    valid_sampler = DistributedSampler(valid_set, num_replicas=world_size, rank=rank, shuffle=False)

    common = dict(num_workers=cfg["data"].get("num_workers", 6), collate_fn=collate_daily, persistent_workers=True)
    train_loader = DataLoader(train_set, batch_size=cfg["train"]["days_per_batch"], sampler=train_sampler,
                              pin_memory=True, **common)
    valid_loader = DataLoader(valid_set, batch_size=1, sampler=valid_sampler, pin_memory=True, **common)
    test_loader = DataLoader(test_set, batch_size=1, shuffle=False, num_workers=2, collate_fn=collate_daily)
    return train_loader, valid_loader, test_loader, train_sampler


def train_one_epoch(model, loader, optimizer, scheduler, scaler, device, amp_dtype, epoch, args, cfg,
                    writer, rank, world_size):
    model.train()
    clip = cfg["train"].get("clip_grad", 1.0)
    running, running_ic, n = 0.0, 0.0, 0
    t0 = time.time()
    for step, batch in enumerate(loader):
        x = batch["x"].to(device, non_blocking=True)          # [days, stocks, lookback, feat]
        y = batch["y"].to(device, non_blocking=True)          # [days, stocks]
        mask = batch["mask"].to(device, non_blocking=True)    # [days, stocks]
        market = batch["market"].to(device, non_blocking=True)

        with autocast_ctx(amp_dtype):
            pred = model(x, market, mask)
            loss, ic = ic_loss(pred.float(), y, mask, cfg["train"].get("mse_weight", 0.1))

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()

        running += loss.item()
        running_ic += ic.mean().item()
        n += 1
        if is_main(rank) and step % args.log_every == 0:
            mem = torch.cuda.max_memory_allocated(device) / 2**30
            lr = optimizer.param_groups[0]["lr"]
            logger.info(
                f"epoch {epoch} step {step}/{len(loader)} loss {running / n:.4f} ic {running_ic / n:.4f} "
                f"gnorm {grad_norm:.3f} lr {lr:.2e} mem {mem:.1f}G"
            )
            global_step = epoch * len(loader) + step
            writer.add_scalar("train/loss", running / n, global_step)
            writer.add_scalar("train/ic", running_ic / n, global_step)
            writer.add_scalar("train/lr", lr, global_step)

    torch.cuda.synchronize(device)
    stats = torch.tensor([running / max(n, 1), running_ic / max(n, 1)], device=device)
    stats = all_reduce_mean(stats, world_size)
    return stats[0].item(), stats[1].item(), time.time() - t0


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype, world_size):
    model.eval()
    ics, rics = [], []
    for batch in loader:
        x = batch["x"].to(device, non_blocking=True)
        y = batch["y"].to(device, non_blocking=True)
        mask = batch["mask"].to(device, non_blocking=True)
        market = batch["market"].to(device, non_blocking=True)
        with autocast_ctx(amp_dtype):
            pred = model(x, market, mask).float()
        for d in range(pred.shape[0]):
            m = mask[d].bool()
            ics.append(pearson_ic(pred[d][m], y[d][m]).item())
            rics.append(rank_ic(pred[d][m], y[d][m]).item())
    local = torch.tensor([np.nanmean(ics), np.nanmean(rics), len(ics)], dtype=torch.float32, device=device)
    if world_size > 1:
        gathered = [torch.zeros_like(local) for _ in range(world_size)]
        dist.all_gather(gathered, local)
        g = torch.stack(gathered)
        w = g[:, 2] / g[:, 2].sum()
        return float((g[:, 0] * w).sum()), float((g[:, 1] * w).sum())
    return float(local[0]), float(local[1])


@torch.no_grad()
def predict_test(model, loader, device, amp_dtype):
    model.eval()
    frames = []
    for batch in loader:
        x = batch["x"].to(device)
        market = batch["market"].to(device)
        mask = batch["mask"].to(device)
        with autocast_ctx(amp_dtype):
            pred = model(x, market, mask).float()
        for d, (date, tickers) in enumerate(zip(batch["dates"], batch["tickers"])):
            m = mask[d].bool().cpu().numpy()
            frames.append(pd.DataFrame({"datetime": date, "instrument": np.asarray(tickers)[m],
                                        "score": pred[d].cpu().numpy()[m]}))
    return pd.concat(frames).set_index(["datetime", "instrument"]).sort_index()


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank = setup_distributed()
    device = torch.device("cuda", local_rank)
    seed_all(args.seed, rank)

    logging.basicConfig(
        level=logging.INFO if is_main(rank) else logging.WARNING,
        format=f"[%(asctime)s][rank {rank}] %(message)s",
    )
    out_dir = Path(args.output_dir)
    if is_main(rank):
        out_dir.mkdir(parents=True, exist_ok=True)
        with open(out_dir / "config.json", "w") as f:
            json.dump({"args": vars(args), "cfg": cfg}, f, indent=2)
        logger.info(f"world_size={world_size}, device={torch.cuda.get_device_name(local_rank)}")

    # TF32 is fine for this model: IC is insensitive to the last mantissa bits
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    train_loader, valid_loader, test_loader, train_sampler = build_loaders(cfg, world_size, rank)

    model = StockFormer(**cfg["model"]).to(device)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    raw_model = model.module if isinstance(model, DDP) else model

    optimizer = build_optimizer(raw_model, cfg["optim"])
    total_steps = cfg["train"]["epochs"] * len(train_loader)
    scheduler = build_scheduler(optimizer, cfg["optim"], total_steps)

    amp_dtype = {"off": None, "fp16": torch.float16, "bf16": torch.bfloat16}[args.amp]
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    start_epoch, best_ic = 0, -math.inf
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        raw_model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_ic = ckpt["epoch"] + 1, ckpt["best_ic"]
        logger.info(f"resumed from {args.resume} @ epoch {start_epoch}")

    writer = SummaryWriter(out_dir / "tb") if is_main(rank) else None

    if not args.eval_only:
        patience, bad = cfg["train"].get("patience", 8), 0
        for epoch in range(start_epoch, cfg["train"]["epochs"]):
            train_sampler.set_epoch(epoch)
            torch.cuda.reset_peak_memory_stats(device)
            loss, ic, secs = train_one_epoch(model, train_loader, optimizer, scheduler, scaler, device, amp_dtype,
                                             epoch, args, cfg, writer, rank, world_size)
            v_ic, v_ric = evaluate(model, valid_loader, device, amp_dtype, world_size)
            if is_main(rank):
                logger.info(f"epoch {epoch}: loss {loss:.4f} train_ic {ic:.4f} valid_ic {v_ic:.4f} "
                            f"valid_rank_ic {v_ric:.4f} ({secs:.0f}s)")
                writer.add_scalar("valid/ic", v_ic, epoch)
                writer.add_scalar("valid/rank_ic", v_ric, epoch)
                state = {
                    "model": raw_model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "scaler": scaler.state_dict(),
                    "epoch": epoch,
                    "best_ic": max(best_ic, v_ric),
                }
                torch.save(state, out_dir / "last.pt")
                if v_ric > best_ic:
                    torch.save(state, out_dir / "best.pt")
            if v_ric > best_ic:
                best_ic, bad = v_ric, 0
            else:
                bad += 1
                if bad >= patience:
                    logger.info(f"early stop at epoch {epoch}")
                    break

    if world_size > 1:
        dist.barrier()
    if is_main(rank):
        best = torch.load(out_dir / "best.pt", map_location="cpu")
        raw_model.load_state_dict(best["model"])
        pred = predict_test(raw_model, test_loader, device, amp_dtype)
        pred.to_pickle(out_dir / "pred_test.pkl")
        summary = ic_summary(pred, test_loader.dataset.labels())
        logger.info("test summary:\n" + summary.to_string())
        writer.close()
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
