#!/usr/bin/env python
"""Train the strong-lensing image emulator.

The emulator maps (lens mass parameters, source parameters, PSF FWHM) -> 64x64 lensed image, replacing
the ray-tracing forward model (ops/ray_trace.py) inside MCMC / HMC fits, where it is ~200x faster per
likelihood evaluation. Architecture: parameter MLP -> 4x4 seed -> upsampling conv decoder with FiLM
conditioning (a small "StyleGAN-lite" generator), trained with L1 + multi-scale SSIM.

Single GPU:
    python lens_emulator/train_emulator.py --data /scratch/lens_sims/train_2M.h5 --amp
Multi-GPU on one node:
    bash scripts/launch_ddp.sh lens_emulator/train_emulator.py --data ... --amp
"""
import argparse
import json
import logging
import math
import os
import time
from pathlib import Path

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

try:
    from apex.optimizers import FusedAdam  # ~8% faster step on V100/A100
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

from lens_emulator.losses import ms_ssim_loss

logger = logging.getLogger("lens_emulator")

PARAM_NAMES = ["theta_e", "q", "phi", "x0", "y0", "gamma1", "gamma2",
               "src_amp", "src_reff", "src_n", "src_q", "src_phi", "src_x0", "src_y0", "psf_fwhm"]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--val-data", default=None)
    p.add_argument("--out", default="runs/emulator")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=256, help="per GPU")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true", help="mixed precision (bf16 on Ampere+, fp16 otherwise)")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--data-parallel", action="store_true",
                   help="legacy single-process multi-GPU (nn.DataParallel); prefer torchrun + DDP")
    p.add_argument("--gpus", type=int, default=1, help="only used with --data-parallel")
    p.add_argument("--ssim-weight", type=float, default=0.2)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


class LensSimDataset(Dataset):
    """HDF5 with datasets 'params' (N, 15) float32 and 'images' (N, 64, 64) float32."""

    def __init__(self, path, param_stats=None):
        self.path = path
        with h5py.File(path, "r") as f:
            self.n = f["params"].shape[0]
            if param_stats is None:
                params = f["params"][: min(self.n, 200_000)]
                param_stats = {"mean": params.mean(0).tolist(), "std": (params.std(0) + 1e-8).tolist()}
        self.param_stats = param_stats
        self.mean = np.asarray(param_stats["mean"], dtype=np.float32)
        self.std = np.asarray(param_stats["std"], dtype=np.float32)
        self._h5 = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self._h5 is None:  # open lazily in each worker
            self._h5 = h5py.File(self.path, "r")
        params = (self._h5["params"][i] - self.mean) / self.std
        img = self._h5["images"][i]
        return torch.from_numpy(params), torch.from_numpy(img)[None]


class FiLMBlock(nn.Module):
    def __init__(self, cin, cout, cond_dim):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.film = nn.Linear(cond_dim, 2 * cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, h, c):
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        gamma, beta = self.film(c).chunk(2, dim=1)
        y = F.silu(self.conv1(h))
        y = self.conv2(y) * (1 + gamma[..., None, None]) + beta[..., None, None]
        return F.silu(y + self.skip(h))


class LensEmulator(nn.Module):
    def __init__(self, n_params=15, width=256, cond_dim=256):
        super().__init__()
        self.cond = nn.Sequential(nn.Linear(n_params, cond_dim), nn.SiLU(),
                                  nn.Linear(cond_dim, cond_dim), nn.SiLU(),
                                  nn.Linear(cond_dim, cond_dim))
        self.seed = nn.Linear(cond_dim, width * 4 * 4)
        self.blocks = nn.ModuleList([
            FiLMBlock(width, width, cond_dim),            # 8
            FiLMBlock(width, width // 2, cond_dim),       # 16
            FiLMBlock(width // 2, width // 4, cond_dim),  # 32
            FiLMBlock(width // 4, width // 8, cond_dim),  # 64
        ])
        self.to_img = nn.Conv2d(width // 8, 1, 1)
        self.width = width

    def forward(self, params):
        c = self.cond(params)
        h = self.seed(c).view(-1, self.width, 4, 4)
        for blk in self.blocks:
            h = blk(h, c)
        return self.to_img(h)


def setup_distributed():
    """torchrun sets RANK / WORLD_SIZE / LOCAL_RANK; otherwise run single-process."""
    if "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        return True, dist.get_rank(), dist.get_world_size(), local_rank
    return False, 0, 1, 0


def build_optimizer(model, lr):
    if HAS_APEX:
        return FusedAdam(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.0)
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.99))


@torch.no_grad()
def evaluate(model, loader, device, amp_ctx):
    model.eval()
    total, n = 0.0, 0
    for params, img in loader:
        params = params.to(device, non_blocking=True)
        img = img.to(device, non_blocking=True)
        with amp_ctx():
            pred = model(params)
        total += F.l1_loss(pred.float(), img, reduction="sum").item()
        n += img.numel()
    model.train()
    return total / max(n, 1)


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    distributed, rank, world_size, local_rank = setup_distributed()
    is_main = rank == 0

    torch.manual_seed(args.seed + rank)
    np.random.seed(args.seed + rank)

    if distributed:
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logger.info("rank %d/%d on %s", rank, world_size, device)

    torch.backends.cudnn.benchmark = True

    amp_dtype = torch.float32
    if args.amp:
        # bf16 is only fast on Ampere (sm_80) and newer; V100s in the old partition need fp16 + loss scaling
        amp_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    def amp_ctx():
        return torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype)

    train_set = LensSimDataset(args.data)
    val_set = LensSimDataset(args.val_data, train_set.param_stats) if args.val_data else None

    sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                              num_workers=args.workers, pin_memory=True, drop_last=True,
                              persistent_workers=args.workers > 0)
    val_loader = None
    if val_set is not None and is_main:
        val_loader = DataLoader(val_set, batch_size=2 * args.batch_size, shuffle=False,
                                num_workers=args.workers, pin_memory=True)

    model = LensEmulator(n_params=len(PARAM_NAMES), width=args.width).to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    if args.data_parallel:
        model = nn.DataParallel(model, device_ids=list(range(args.gpus)))
    elif distributed:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    optimizer = build_optimizer(model, args.lr * world_size ** 0.5)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr * world_size ** 0.5,
                                                    total_steps=args.epochs * len(train_loader), pct_start=0.05)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    writer = SummaryWriter(args.out) if is_main else None
    if is_main:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        with open(Path(args.out) / "param_stats.json", "w") as f:
            json.dump(train_set.param_stats, f)
        with open(Path(args.out) / "args.json", "w") as f:
            json.dump(vars(args), f, indent=2)

    step = 0
    best_val = math.inf
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        for params, img in train_loader:
            params = params.to(device, non_blocking=True)
            img = img.to(device, non_blocking=True)
            if args.channels_last:
                img = img.contiguous(memory_format=torch.channels_last)

            with amp_ctx():
                pred = model(params)
                l1 = F.l1_loss(pred, img)
            # SSIM in fp32: the variance terms underflow in half precision
            loss = l1 + args.ssim_weight * ms_ssim_loss(pred.float(), img)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            if is_main and step % 100 == 0:
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/l1", l1.item(), step)
                writer.add_scalar("train/lr", scheduler.get_last_lr()[0], step)
            step += 1

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        if is_main:
            mem = torch.cuda.max_memory_allocated(device) / 2**30
            logger.info("epoch %d  %.1fs  %.0f img/s/gpu  peak mem %.1f GiB", epoch, epoch_time,
                        len(train_loader) * args.batch_size / epoch_time, mem)
            if val_loader is not None:
                val = evaluate(model, val_loader, device, amp_ctx)
                writer.add_scalar("val/l1", val, step)
                if val < best_val:
                    best_val = val
                    state = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
                    torch.save({"model": state, "epoch": epoch, "val_l1": val}, Path(args.out) / "best.pt")

    if is_main:
        writer.close()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
