"""Noise2Void training (PyTorch re-implementation of the blind-spot scheme of Krull et al. 2019).

    python -m n2v_torch.train --data /data/flywing/train.tif --patch 64 --epochs 200 --out runs/n2v
"""
import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np
import tifffile
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

from .models import UNet
from .masking import uniform_withCP, get_stratified_coords


class N2VPatchDataset(Dataset):
    """Random patches from one or more noisy stacks; each item carries its own blind-spot mask."""

    def __init__(self, stack, patch=64, n_patches=4096, perc_pix=0.198, neighborhood=5,
                 axes="YX", augment=True):
        self.stack = stack.astype(np.float32)
        self.patch = patch
        self.n = n_patches
        self.perc_pix = perc_pix
        self.neighborhood = neighborhood
        self.augment = augment
        self.mean = float(self.stack.mean())
        self.std = float(self.stack.std())
        self.axes = axes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = self.stack[np.random.randint(len(self.stack))]
        y0 = np.random.randint(0, img.shape[0] - self.patch + 1)
        x0 = np.random.randint(0, img.shape[1] - self.patch + 1)
        p = img[y0:y0 + self.patch, x0:x0 + self.patch]
        if self.augment:
            p = np.rot90(p, k=np.random.randint(4))
            if random.random() < 0.5:
                p = p[:, ::-1]
        p = (np.ascontiguousarray(p) - self.mean) / self.std
        coords = get_stratified_coords(self.perc_pix, p.shape)
        target = p.copy()
        masked = uniform_withCP(p.copy(), coords, self.neighborhood)
        mask = np.zeros_like(p)
        mask[coords] = 1.0
        return (torch.from_numpy(masked)[None], torch.from_numpy(target)[None],
                torch.from_numpy(mask)[None])


def n2v_loss(pred, target, mask):
    return ((pred - target) ** 2 * mask).sum() / mask.sum().clamp_min(1.0)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--val", default=None)
    ap.add_argument("--out", default="runs/n2v")
    ap.add_argument("--patch", type=int, default=64)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=4e-4)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    return ap.parse_args()


def main():
    args = parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(vars(args), indent=2))

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)

    stack = tifffile.imread(args.data)
    if stack.ndim == 2:
        stack = stack[None]
    n_val = max(1, len(stack) // 10)
    train_ds = N2VPatchDataset(stack[n_val:], patch=args.patch, n_patches=args.steps * args.batch)
    val_ds = N2VPatchDataset(stack[:n_val], patch=args.patch, n_patches=8 * args.batch, augment=False)
    val_ds.mean, val_ds.std = train_ds.mean, train_ds.std

    train_dl = DataLoader(train_ds, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                          pin_memory=True, drop_last=True, persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch, num_workers=2, pin_memory=True)

    model = UNet(in_channels=1, out_channels=1, depth=args.depth, start_filts=args.features,
                 residual=False).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=10)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    writer = SummaryWriter(out / "tb")

    best = float("inf")
    step = 0
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for x, y, m in train_dl:
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            m = m.cuda(non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                pred = model(x)
                loss = n2v_loss(pred, y, m)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            running += loss.item()
            step += 1
        train_loss = running / len(train_dl)

        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for x, y, m in val_dl:
                x, y, m = x.to(device), y.to(device), m.to(device)
                with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                    val_loss += n2v_loss(model(x), y, m).item()
        val_loss /= len(val_dl)
        sched.step(val_loss)

        torch.cuda.synchronize()
        dt = time.time() - t0
        mem = torch.cuda.max_memory_allocated(device) / 2**20
        writer.add_scalar("loss/train", train_loss, epoch)
        writer.add_scalar("loss/val", val_loss, epoch)
        writer.add_scalar("sys/peak_mem_mb", mem, epoch)
        print(f"epoch {epoch:4d}  train {train_loss:.5f}  val {val_loss:.5f}  {dt:.1f}s  peak {mem:.0f} MiB")
        torch.cuda.reset_peak_memory_stats(device)

        ckpt = {"model": model.state_dict(), "mean": train_ds.mean, "std": train_ds.std,
                "epoch": epoch, "args": vars(args)}
        torch.save(ckpt, out / "last.pth")
        if val_loss < best:
            best = val_loss
            torch.save(ckpt, out / "best.pth")
    writer.close()


if __name__ == "__main__":
    main()
