"""Pre-train the 3-D Earth transformer on ERA5 (1979-2017) with a 1-hour / 6-hour / 24-hour lead.

    torchrun --nnodes=4 --nproc_per_node=8 -m pangu.train --lead-hours 24 --amp bf16

Loss: latitude-weighted MAE on the normalised upper-air and surface fields, surface weighted x0.25
as in the paper.
"""
import argparse
import json
import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from pangu.data.era5 import ERA5PairDataset
from pangu.models.earth_transformer import PanguModel
from pangu.utils.logging import MetricLogger, setup_logger

UPPER_WEIGHTS = torch.tensor([3.00, 0.60, 1.50, 0.77, 0.54]).view(1, 5, 1, 1, 1)   # Z Q T U V
SURFACE_WEIGHTS = torch.tensor([1.50, 0.77, 0.66, 3.00]).view(1, 4, 1, 1)         # MSLP U10 V10 T2M


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", default="/lustre/era5/zarr")
    p.add_argument("--out-dir", default="runs/pangu")
    p.add_argument("--lead-hours", type=int, default=24, choices=[1, 3, 6, 24])
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=1, help="per GPU")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight-decay", type=float, default=3e-6)
    p.add_argument("--amp", choices=["none", "fp16", "bf16"], default="bf16")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--profile-steps", type=int, default=0, help="emit NVTX ranges for the first N steps")
    p.add_argument("--memory-snapshot", action="store_true")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def lat_weights(n_lat: int, device) -> torch.Tensor:
    lat = torch.linspace(90.0, -90.0, n_lat, dtype=torch.float64)
    w = torch.cos(torch.deg2rad(lat))
    w = w / w.mean()
    return w.to(device=device, dtype=torch.float32)


def weighted_mae(pred_air, pred_sfc, tgt_air, tgt_sfc, w_lat):
    w_air = w_lat.view(1, 1, 1, -1, 1)
    w_sfc = w_lat.view(1, 1, -1, 1)
    loss_air = ((pred_air - tgt_air).abs() * w_air * UPPER_WEIGHTS.to(pred_air.device)).mean()
    loss_sfc = ((pred_sfc - tgt_sfc).abs() * w_sfc * SURFACE_WEIGHTS.to(pred_sfc.device)).mean()
    return loss_air + 0.25 * loss_sfc


def init_distributed():
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, local_rank, dist.get_world_size()


def main():
    args = parse_args()
    rank, local_rank, world_size = init_distributed()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed + rank)
    torch.cuda.manual_seed_all(args.seed + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    logger = setup_logger(args.out_dir, rank)
    if rank == 0:
        props = torch.cuda.get_device_properties(device)
        logger.info("world=%d device=%s mem=%.1f GiB", world_size, props.name, props.total_memory / 2**30)

    # large all-reduces of the 3-D bias tables: give NCCL bigger buckets
    bucket_mb = 100 if dist.get_backend() == "nccl" else 25

    train_set = ERA5PairDataset(args.data_root, years=range(1979, 2018), lead_hours=args.lead_hours)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers,
                        pin_memory=True, persistent_workers=True, prefetch_factor=2, drop_last=True)

    model = PanguModel(use_checkpoint=True).cuda()
    model.load_constant_masks(os.path.join(args.data_root, "constant_masks.npy"))
    if args.compile:
        model = torch.compile(model)
    model = DDP(model, device_ids=[local_rank], bucket_cap_mb=bucket_mb, gradient_as_bucket_view=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    steps_per_epoch = len(loader)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * steps_per_epoch)

    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.amp)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp == "fp16")
    w_lat = lat_weights(721, device)

    if args.memory_snapshot and rank == 0:
        torch.cuda.memory._record_memory_history(max_entries=100_000)

    metrics = MetricLogger(args.out_dir, rank)
    global_step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for step, (x_air, x_sfc, y_air, y_sfc) in enumerate(loader):
            profiling = global_step < args.profile_steps
            x_air = x_air.cuda(non_blocking=True)
            x_sfc = x_sfc.cuda(non_blocking=True)
            y_air = y_air.cuda(non_blocking=True)
            y_sfc = y_sfc.cuda(non_blocking=True)

            if profiling:
                torch.cuda.nvtx.range_push(f"step{global_step}")
            amp_ctx = torch.cuda.amp.autocast(dtype=amp_dtype) if amp_dtype is not None else nullcontext()
            with amp_ctx:
                p_air, p_sfc = model(x_air, x_sfc)
                loss = weighted_mae(p_air.float(), p_sfc.float(), y_air, y_sfc, w_lat)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if profiling:
                torch.cuda.nvtx.range_pop()

            if global_step % 50 == 0:
                loss_t = loss.detach().clone()
                dist.all_reduce(loss_t, op=dist.ReduceOp.AVG)
                if rank == 0:
                    torch.cuda.synchronize()
                    dt = (time.time() - t0) / (step + 1)
                    metrics.log(global_step, loss=loss_t.item(), grad_norm=float(gnorm),
                                lr=scheduler.get_last_lr()[0], sec_per_step=dt,
                                max_mem_gib=torch.cuda.max_memory_allocated(device) / 2**30)
            global_step += 1

        if args.memory_snapshot and rank == 0 and epoch == 0:
            torch.cuda.memory._dump_snapshot(os.path.join(args.out_dir, "mem_snapshot.pickle"))
            torch.cuda.memory._record_memory_history(enabled=None)

        if rank == 0:
            ckpt = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch, "step": global_step,
                    "args": vars(args)}
            torch.save(ckpt, os.path.join(args.out_dir, f"pangu_{args.lead_hours}h_ep{epoch:03d}.pt"))
        dist.barrier()

    metrics.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
