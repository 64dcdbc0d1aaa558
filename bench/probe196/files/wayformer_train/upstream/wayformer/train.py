"""Distributed training entry point for Wayformer on the Waymo Open Motion Dataset.

Launch with torchrun, e.g.

    torchrun --nproc_per_node=8 -m wayformer.train --config configs/wayformer_waymo.yaml

Single-GPU debugging:  python -m wayformer.train --config configs/wayformer_waymo.yaml --no-ddp
"""
import argparse
import json
import logging
import math
import os
import random
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from wayformer.data.womd_dataset import WOMDDataset, womd_collate
from wayformer.models.wayformer import Wayformer, WayformerConfig, gmm_nll_loss

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

logger = logging.getLogger("wayformer.train")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--config", type=str, required=True)
    p.add_argument("--output_dir", type=str, default="runs/wayformer")
    p.add_argument("--resume", type=str, default=None)
    p.add_argument("--no-ddp", dest="ddp", action="store_false")
    p.add_argument("--amp", type=str, default="bf16", choices=["off", "fp16", "bf16"])
    p.add_argument("--compile", action="store_true", help="wrap the model in torch.compile")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--log_every", type=int, default=50)
    return p.parse_args()


def setup_distributed(use_ddp: bool):
    """Returns (rank, world_size, local_rank, device)."""
    if use_ddp and "RANK" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
        os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        device = torch.device("cuda", local_rank)
    else:
        rank, world_size, local_rank = 0, 1, 0
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    return rank, world_size, local_rank, device


def seed_everything(seed: int, rank: int):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def resolve_amp_dtype(amp: str):
    if amp == "off":
        return None
    if amp == "bf16":
        major, _ = torch.cuda.get_device_capability()
        if major < 8:
            logger.warning("bf16 autocast needs Ampere or newer (sm_80+); falling back to fp16")
            return torch.float16
        return torch.bfloat16
    return torch.float16


def build_optimizer(model, cfg):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in name or name.endswith(".bias") else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": cfg["weight_decay"]},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if HAS_APEX and cfg.get("fused_adam", True):
        return FusedAdam(groups, lr=cfg["lr"], betas=(0.9, 0.999), adam_w_mode=True)
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=(0.9, 0.999))


def cosine_with_warmup(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def move_batch(batch, device):
    return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


@torch.no_grad()
def evaluate(model, loader, device, amp_dtype, world_size):
    model.eval()
    totals = torch.zeros(3, device=device)
    for batch in loader:
        batch = move_batch(batch, device)
        ctx = torch.autocast(device_type="cuda", dtype=amp_dtype) if amp_dtype else nullcontext()
        with ctx:
            pred = model(batch)
        _, stats = gmm_nll_loss(pred, batch["gt_future"], batch["gt_future_mask"])
        totals += torch.tensor([stats["minADE"], stats["reg"], 1.0], device=device)
    if world_size > 1:
        dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    model.train()
    return {"val_minADE": (totals[0] / totals[2]).item(), "val_reg": (totals[1] / totals[2]).item()}


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank, device = setup_distributed(args.ddp)
    is_main = rank == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s")
    seed_everything(args.seed, rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    out_dir = Path(args.output_dir)
    if is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "config.json").write_text(json.dumps(cfg, indent=2))
    writer = SummaryWriter(out_dir / "tb") if is_main else None

    model_cfg = WayformerConfig(**cfg["model"])
    model = Wayformer(model_cfg).cuda()
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    gradient_as_bucket_view=True, static_graph=True)

    train_set = WOMDDataset(cfg["data"]["train_dir"], split="train", **cfg["data"].get("kwargs", {}))
    val_set = WOMDDataset(cfg["data"]["val_dir"], split="val", **cfg["data"].get("kwargs", {}))
    train_sampler = DistributedSampler(train_set, shuffle=True) if world_size > 1 else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=cfg["train"]["batch_size"], sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=cfg["train"]["num_workers"],
                              pin_memory=True, drop_last=True, collate_fn=womd_collate, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=cfg["train"]["batch_size"], sampler=val_sampler,
                            num_workers=cfg["train"]["num_workers"], collate_fn=womd_collate)

    optimizer = build_optimizer(model, cfg["optim"])
    amp_dtype = resolve_amp_dtype(args.amp)
    scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))

    total_steps = cfg["train"]["epochs"] * len(train_loader)
    warmup = cfg["optim"].get("warmup_steps", 1000)
    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        (model.module if world_size > 1 else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, step = ckpt["epoch"] + 1, ckpt["step"]

    for epoch in range(start_epoch, cfg["train"]["epochs"]):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        for batch in train_loader:
            lr_scale = cosine_with_warmup(step, total_steps, warmup)
            for g in optimizer.param_groups:
                g["lr"] = cfg["optim"]["lr"] * lr_scale
            batch = move_batch(batch, device)
            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
                pred = model(batch)
                loss, stats = gmm_nll_loss(pred, batch["gt_future"], batch["gt_future_mask"])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["optim"].get("clip", 5.0))
            scaler.step(optimizer)
            scaler.update()
            step += 1

            if is_main and step % args.log_every == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t0) / args.log_every
                mem_gb = torch.cuda.max_memory_allocated(device) / 1e9
                logger.info(f"ep {epoch} step {step} loss {loss.item():.4f} minADE {stats['minADE']:.3f} "
                            f"gnorm {grad_norm:.2f} {dt * 1000:.0f} ms/it mem {mem_gb:.1f} GB")
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/minADE", stats["minADE"], step)
                writer.add_scalar("train/lr", optimizer.param_groups[0]["lr"], step)
                t0 = time.time()

        metrics = evaluate(model, val_loader, device, amp_dtype, world_size)
        if is_main:
            logger.info(f"epoch {epoch} {metrics}")
            for k, v in metrics.items():
                writer.add_scalar(k, v, epoch)
            torch.save({
                "model": (model.module if world_size > 1 else model).state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "epoch": epoch,
                "step": step,
                "cfg": cfg,
            }, out_dir / f"ckpt_{epoch:03d}.pt")

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
