"""
Self-supervised training of the DAS denoiser.

    python -m dasdenoise.train --config configs/train_unet.yaml
    torchrun --nproc_per_node 4 -m dasdenoise.train --config configs/train_unet.yaml

Mixed precision (fp16 with loss scaling, or bf16 on Ampere and newer) is on by
default because the 2048x2048 patches of the Ridgecrest / Sanriku arrays do not
fit in 24 GB otherwise.
"""
import argparse
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from dasdenoise.data import DASPatchDataset, load_file_list
from dasdenoise.models.unet import build_model, masked_mse, random_channel_mask
from dasdenoise.utils.fk import fk_filter_torch

try:
    from apex.optimizers import FusedAdam  # noqa: F401
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

log = logging.getLogger("dasdenoise.train")


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    return rank, world_size, local_rank


def set_seed(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def pick_amp_dtype(cfg):
    mode = cfg["train"].get("amp", "auto")
    if mode in (False, "off", "fp32"):
        return None
    if mode == "bf16":
        return torch.bfloat16
    if mode == "fp16":
        return torch.float16
    # auto: bf16 needs compute capability >= 8.0 (Ampere)
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


def make_optimizer(cfg, params):
    opt_cfg = cfg["optim"]
    if opt_cfg.get("fused", True) and HAS_APEX:
        return FusedAdam(params, lr=opt_cfg["lr"], weight_decay=opt_cfg.get("weight_decay", 0.0))
    return torch.optim.AdamW(params, lr=opt_cfg["lr"], weight_decay=opt_cfg.get("weight_decay", 0.0))


def cosine_lr(step, total, warmup, base_lr, min_lr=1e-6):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * p))


@torch.no_grad()
def validate(model, loader, device, amp_dtype, n_masked):
    model.eval()
    total, count = 0.0, 0
    for batch in loader:
        x = batch["x"].to(device, non_blocking=True)
        mask = random_channel_mask(x, n_masked=n_masked)
        with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            pred = model(x, mask)
        total += masked_mse(pred.float(), x, mask).item() * x.shape[0]
        count += x.shape[0]
    model.train()
    t = torch.tensor([total, count], device=device)
    if dist.is_initialized():
        dist.all_reduce(t)
    return (t[0] / t[1]).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--out", default="runs/das_unet")
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank = setup_distributed()
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                        format=f"[rank {rank}] %(asctime)s %(message)s")
    set_seed(cfg["train"].get("seed", 0), rank)

    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    files = load_file_list(cfg["data"]["file_list"])
    n_val = max(1, int(len(files) * cfg["data"].get("val_fraction", 0.05)))
    train_set = DASPatchDataset(files[n_val:], patch=tuple(cfg["data"]["patch"]),
                                bandpass=tuple(cfg["data"]["bandpass"]), augment=True)
    val_set = DASPatchDataset(files[:n_val], patch=tuple(cfg["data"]["patch"]),
                              bandpass=tuple(cfg["data"]["bandpass"]), augment=False)

    train_sampler = DistributedSampler(train_set, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(
        train_set,
        batch_size=cfg["train"]["batch_size"],
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=cfg["data"].get("workers", 8),
        pin_memory=True,
        persistent_workers=True,
        drop_last=True,
    )
    val_loader = DataLoader(val_set, batch_size=cfg["train"]["batch_size"], num_workers=4, pin_memory=True)

    model = build_model(cfg).to(device)
    if cfg["train"].get("channels_last", False):
        model = model.to(memory_format=torch.channels_last)
    if world_size > 1:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, bucket_cap_mb=100)
    if cfg["train"].get("compile", False):
        model = torch.compile(model, mode="reduce-overhead")

    optimizer = make_optimizer(cfg, model.parameters())
    amp_dtype = pick_amp_dtype(cfg)
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    start_step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        (model.module if world_size > 1 else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_step = ckpt["step"]

    out = Path(args.out)
    writer = SummaryWriter(out / "tb") if rank == 0 else None
    total_steps = cfg["train"]["steps"]
    warmup = cfg["train"].get("warmup", 1000)
    n_masked = cfg["train"].get("n_masked", 1)
    log_every = cfg["train"].get("log_every", 50)
    val_every = cfg["train"].get("val_every", 2000)
    base_lr = cfg["optim"]["lr"]

    step = start_step
    epoch = 0
    t_last = time.time()
    while step < total_steps:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for batch in train_loader:
            x = batch["x"].to(device, non_blocking=True)
            if cfg["train"].get("fk_prefilter", False):
                x = fk_filter_torch(x, vmin=cfg["data"]["vmin"], dx=cfg["data"]["dx"], dt=cfg["data"]["dt"])
            mask = random_channel_mask(x, n_masked=n_masked)

            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, warmup, base_lr)

            with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                pred = model(x, mask)
                loss = masked_mse(pred.float(), x, mask)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["optim"].get("clip", 1.0))
            scaler.step(optimizer)
            scaler.update()

            if rank == 0 and step % log_every == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t_last) / log_every
                t_last = time.time()
                mem = torch.cuda.max_memory_allocated() / 2 ** 30
                log.info(f"step {step} loss {loss.item():.4e} gnorm {grad_norm:.3f} "
                         f"{dt * 1000:.0f} ms/it mem {mem:.1f} GB scale {scaler.get_scale():.0f}")
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/lr", optimizer.param_groups[0]["lr"], step)

            if step % val_every == 0 and step > 0:
                val_loss = validate(model, val_loader, device, amp_dtype, n_masked)
                if rank == 0:
                    log.info(f"step {step} val_loss {val_loss:.4e}")
                    writer.add_scalar("val/loss", val_loss, step)
                    torch.save({
                        "model": (model.module if world_size > 1 else model).state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(),
                        "step": step,
                        "cfg": cfg,
                    }, out / f"ckpt_{step:07d}.pt")

            step += 1
            if step >= total_steps:
                break
        epoch += 1

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
