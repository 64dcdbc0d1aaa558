"""Distributed training of the Pangu-Weather re-implementation on ERA5.

Launch with torchrun (see scripts/train_pangu.sh):

    torchrun --nproc_per_node=8 train_pangu_ddp.py --data_root /data/era5_0.25 --lead 24

The paper trained each lead-time model for 100 epochs on 192 V100s; with bf16 and
activation checkpointing a single 8xA100-80GB node reaches ~1 epoch/day.
"""
import argparse
import json
import logging
import math
import os
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data.era5 import ERA5PairDataset, load_normalization
from models.pangu_weather import PanguWeather

logger = logging.getLogger("pangu")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_root", type=str, required=True)
    p.add_argument("--out_dir", type=str, default="./runs/pangu")
    p.add_argument("--lead", type=int, default=24, choices=[1, 3, 6, 24])
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch_size", type=int, default=1, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight_decay", type=float, default=3e-6)
    p.add_argument("--warmup_steps", type=int, default=2000)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--amp", action="store_true", help="mixed precision (bf16 on Ampere+, fp16 otherwise)")
    p.add_argument("--checkpoint_activations", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0)")
    p.add_argument("--resume", type=str, default="")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--dist_backend", type=str, default="nccl")
    return p.parse_args()


def setup_distributed(backend):
    if "RANK" not in os.environ:
        # single-GPU debugging
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, init_method="env://", timeout=timedelta(minutes=60))
    dist.barrier()
    return rank, local_rank, world_size


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def latitude_weights(n_lat=721, device=None):
    lat = torch.linspace(90.0, -90.0, n_lat, device=device)
    w = torch.cos(torch.deg2rad(lat))
    return (w / w.mean()).view(1, 1, -1, 1)


def pangu_loss(pred_upper, pred_surface, tgt_upper, tgt_surface, lat_w):
    # MAE, surface loss weighted 0.25 as in the paper
    loss_upper = (torch.abs(pred_upper - tgt_upper) * lat_w.unsqueeze(2)).mean()
    loss_surface = (torch.abs(pred_surface - tgt_surface) * lat_w).mean()
    return loss_upper + 0.25 * loss_surface


def cosine_lr(step, total, warmup, base_lr):
    if step < warmup:
        return base_lr * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1.0 + math.cos(math.pi * progress))


def save_checkpoint(path, model, optimizer, scaler, epoch, step):
    state = {
        "model": model.module.state_dict() if isinstance(model, DDP) else model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "step": step,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    args = get_args()
    rank, local_rank, world_size = setup_distributed(args.dist_backend)
    device = torch.device(f"cuda:{local_rank}")
    seed_everything(args.seed, rank)

    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                        format="%(asctime)s [%(levelname)s] %(message)s")
    os.makedirs(args.out_dir, exist_ok=True)
    if rank == 0:
        with open(os.path.join(args.out_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)
        logger.info("world size %d, device %s (%s)", world_size, device, torch.cuda.get_device_name(device))

    # TF32 matmuls are fine for the transformer blocks; the loss is computed in fp32
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if args.amp:
        amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    else:
        amp_dtype = torch.float32

    # ---------------- data ----------------
    mean_upper, std_upper, mean_surface, std_surface = load_normalization(args.data_root)
    train_set = ERA5PairDataset(args.data_root, years=range(1979, 2018), lead_hours=args.lead)
    valid_set = ERA5PairDataset(args.data_root, years=[2019], lead_hours=args.lead, stride=12)
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.num_workers,
                              pin_memory=True, persistent_workers=True, prefetch_factor=2, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=1, shuffle=False, num_workers=2, pin_memory=True)

    norm = {k: torch.as_tensor(v).to(device) for k, v in dict(mu=mean_upper, su=std_upper,
                                                              ms=mean_surface, ss=std_surface).items()}
    const = torch.from_numpy(np.load(os.path.join(args.data_root, "constant_masks.npy"))).float().to(device)
    lat_w = latitude_weights(721, device=device)

    # ---------------- model ----------------
    model = PanguWeather(use_checkpoint=args.checkpoint_activations).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("parameters: %.1fM", n_params / 1e6)

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or "earth_specific_bias" in n else decay).append(p)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.999), fused=True,
    )
    scaler = torch.cuda.amp.GradScaler(enabled=(args.amp and amp_dtype == torch.float16))

    start_epoch, global_step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, global_step = ckpt["epoch"] + 1, ckpt["step"]
        logger.info("resumed from %s (epoch %d)", args.resume, start_epoch)

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    gradient_as_bucket_view=True, static_graph=args.checkpoint_activations)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    total_steps = args.epochs * len(train_loader)
    best_valid = float("inf")

    for epoch in range(start_epoch, args.epochs):
        model.train()
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        torch.cuda.reset_peak_memory_stats()
        t_epoch = time.time()
        t_log = time.time()

        for it, batch in enumerate(train_loader):
            upper, surface, tgt_upper, tgt_surface = (b.to(device, non_blocking=True) for b in batch)
            upper = (upper - norm["mu"]) / norm["su"]
            surface = (surface - norm["ms"]) / norm["ss"]
            tgt_upper = (tgt_upper - norm["mu"]) / norm["su"]
            tgt_surface = (tgt_surface - norm["ms"]) / norm["ss"]

            lr = cosine_lr(global_step, total_steps, args.warmup_steps, args.lr)
            for g in optimizer.param_groups:
                g["lr"] = lr

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
                pred_upper, pred_surface = model(upper, surface, const)
            loss = pangu_loss(pred_upper.float(), pred_surface.float(), tgt_upper, tgt_surface, lat_w)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            global_step += 1

            if global_step % args.log_every == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t_log) / args.log_every
                t_log = time.time()
                loss_val = loss.detach()
                if world_size > 1:
                    dist.all_reduce(loss_val)
                    loss_val /= world_size
                logger.info("ep %d it %d/%d loss %.4f gnorm %.3f lr %.2e %.2fs/it mem %.1fGB",
                            epoch, it, len(train_loader), loss_val.item(), grad_norm.item(), lr, dt,
                            torch.cuda.max_memory_allocated(device) / 2**30)

        # ---------------- validation ----------------
        model.eval()
        val_loss = torch.zeros(2, device=device)
        with torch.no_grad():
            for batch in valid_loader:
                upper, surface, tgt_upper, tgt_surface = (b.to(device, non_blocking=True) for b in batch)
                upper = (upper - norm["mu"]) / norm["su"]
                surface = (surface - norm["ms"]) / norm["ss"]
                with torch.autocast("cuda", dtype=amp_dtype, enabled=args.amp):
                    pred_upper, pred_surface = model(upper, surface, const)
                pred_upper = pred_upper.float() * norm["su"] + norm["mu"]
                pred_surface = pred_surface.float() * norm["ss"] + norm["ms"]
                val_loss[0] += pangu_loss(pred_upper, pred_surface, tgt_upper, tgt_surface, lat_w)
                val_loss[1] += 1
        if world_size > 1:
            dist.all_reduce(val_loss)
        val = (val_loss[0] / val_loss[1]).item()
        logger.info("epoch %d done in %.1f min, valid MAE %.4f", epoch, (time.time() - t_epoch) / 60, val)

        if rank == 0:
            save_checkpoint(os.path.join(args.out_dir, "last.pt"), model, optimizer, scaler, epoch, global_step)
            if val < best_valid:
                best_valid = val
                save_checkpoint(os.path.join(args.out_dir, "best.pt"), model, optimizer, scaler, epoch, global_step)

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
