"""Single-node training of a residual UNet that downscales ERA5 (0.25 deg) to a 2 km regional
reanalysis: 2 m temperature, 10 m winds and precipitation.

Uses every GPU of the node through nn.DataParallel (the fields fit in memory, so no DDP).
"""
import argparse
import json
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from downscale.data import ERA5RegionalDataset, Normalizer
from downscale.models import UNetSR
from downscale.metrics import rmse_per_channel, crps_ensemble

log = logging.getLogger("downscale")

CHANNELS_OUT = ["t2m", "u10", "v10", "tp"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/lustre/downscale/zarr")
    p.add_argument("--out", default="runs/unet_sr")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--workers", type=int, default=12)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16 autocast + GradScaler)")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", default="")
    return p.parse_args()


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def precip_loss(pred, target, eps=1e-3):
    """log-transformed L1 on precipitation, plain L1 on the other channels."""
    l_other = F.l1_loss(pred[:, :3], target[:, :3])
    l_tp = F.l1_loss(torch.log(pred[:, 3:].clamp_min(0) + eps), torch.log(target[:, 3:].clamp_min(0) + eps))
    return l_other + 0.5 * l_tp


def train_one_epoch(model, loader, optimizer, scaler, device, args, epoch):
    model.train()
    t0 = time.time()
    running = 0.0
    for it, batch in enumerate(loader):
        x = batch["coarse"].cuda(non_blocking=True)
        static = batch["static"].cuda(non_blocking=True)
        y = batch["fine"].cuda(non_blocking=True)
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
            y = y.contiguous(memory_format=torch.channels_last)

        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            pred = model(x, static)
            loss = precip_loss(pred, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()

        running += loss.item()
        if it % 50 == 0:
            log.info(f"epoch {epoch} it {it}/{len(loader)} loss {running / (it + 1):.4f} "
                     f"{(time.time() - t0) / (it + 1):.3f}s/it")
    return running / max(1, len(loader))


@torch.no_grad()
def validate(model, loader, normalizer, device, args):
    model.eval()
    sums = torch.zeros(len(CHANNELS_OUT), device=device)
    n = 0
    for batch in loader:
        x = batch["coarse"].to(device, non_blocking=True)
        static = batch["static"].to(device, non_blocking=True)
        y = batch["fine"].to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.amp):  # validation in the same precision
            pred = model(x, static)
        pred = normalizer.denormalize(pred.float())
        y = normalizer.denormalize(y)
        sums += rmse_per_channel(pred, y) * x.shape[0]
        n += x.shape[0]
    return (sums / n).cpu().tolist()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out, exist_ok=True)
    seed_all(args.seed)

    if not torch.cuda.is_available():
        raise SystemExit("this trainer needs at least one CUDA GPU")
    device = torch.device("cuda")
    ngpu = torch.cuda.device_count()
    log.info(f"{ngpu} GPU(s): {[torch.cuda.get_device_name(i) for i in range(ngpu)]}")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    normalizer = Normalizer.from_json(os.path.join(args.data, "stats.json"))
    train_ds = ERA5RegionalDataset(args.data, split="train", normalizer=normalizer, crop=256)
    valid_ds = ERA5RegionalDataset(args.data, split="valid", normalizer=normalizer, crop=None)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                              num_workers=args.workers, pin_memory=True, persistent_workers=True)
    valid_loader = DataLoader(valid_ds, batch_size=4, shuffle=False, num_workers=4, pin_memory=True)

    model = UNetSR(in_channels=train_ds.n_in, static_channels=train_ds.n_static,
                   out_channels=len(CHANNELS_OUT), base_channels=64, depth=4)
    model = model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if ngpu > 1:
        model = nn.DataParallel(model)
    if args.compile:
        model = torch.compile(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch, best = 0, math.inf
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cuda")
        (model.module if isinstance(model, nn.DataParallel) else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best = ckpt["epoch"] + 1, ckpt["best"]

    history = []
    for epoch in range(start_epoch, args.epochs):
        loss = train_one_epoch(model, train_loader, optimizer, scaler, device, args, epoch)
        scheduler.step()
        rmse = validate(model, valid_loader, normalizer, device, args)
        score = float(np.mean(rmse[:3]))
        history.append({"epoch": epoch, "loss": loss, "rmse": dict(zip(CHANNELS_OUT, rmse))})
        log.info(f"epoch {epoch}: train {loss:.4f} valid rmse {history[-1]['rmse']} "
                 f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
        state = {"model": (model.module if isinstance(model, nn.DataParallel) else model).state_dict(),
                 "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                 "epoch": epoch, "best": min(best, score)}
        torch.save(state, os.path.join(args.out, "last.pt"))
        if score < best:
            best = score
            torch.save(state, os.path.join(args.out, "best.pt"))

    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump(history, f, indent=1)


if __name__ == "__main__":
    main()
