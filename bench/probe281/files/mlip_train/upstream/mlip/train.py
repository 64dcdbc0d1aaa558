#!/usr/bin/env python
"""Train an E(3)-equivariant interatomic potential on relaxation trajectories.

This is the model-update step of the active-learning loop: after every DFT
round the new trajectories are appended to the training set and the potential
is re-trained (or fine-tuned) on all of them, GNoME-style.

Single GPU:
    python mlip/train.py --data data/round3 --out runs/round3
Multi GPU (one node):
    torchrun --standalone --nproc_per_node=8 mlip/train.py --data data/round3 --out runs/round3
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler
from torch_geometric.loader import DataLoader

from mlip.data import TrajectoryDataset, split_by_composition
from mlip.ema import ExponentialMovingAverage
from mlip.models import build_model
from mlip.utils import AverageMeter, count_parameters, cosine_with_warmup

logger = logging.getLogger("mlip.train")

# NCCL watchdog: surface hangs in the collective instead of waiting forever
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--model", default="nequip_l2", help="architecture preset from mlip.models")
    p.add_argument("--cutoff", type=float, default=5.0)
    p.add_argument("--batch-size", type=int, default=32, help="per device")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--warmup-steps", type=int, default=2000)
    p.add_argument("--energy-weight", type=float, default=1.0)
    p.add_argument("--force-weight", type=float, default=10.0)
    p.add_argument("--stress-weight", type=float, default=1.0)
    p.add_argument("--ema-decay", type=float, default=0.999)
    p.add_argument("--clip-grad", type=float, default=10.0)
    p.add_argument("--amp", action="store_true", help="mixed precision for the message-passing layers")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.1)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--num-workers", type=int, default=6)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--resume", type=Path, default=None)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=1, help="epochs")
    return p.parse_args(argv)


def setup_distributed(args) -> torch.device:
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
    args.distributed = args.world_size > 1

    if args.device == "cuda":
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device(args.device)

    if args.distributed:
        dist.init_process_group(
            backend="nccl" if args.device == "cuda" else "gloo",
            init_method="env://",
            world_size=args.world_size,
            rank=args.rank,
        )
        dist.barrier()
    return device


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def is_main(args) -> bool:
    return args.rank == 0


def reduce_mean(value: float, device: torch.device, args) -> float:
    if not args.distributed:
        return value
    # NCCL can only reduce device tensors; gloo is happy with host tensors
    reduce_device = device if dist.get_backend() == "nccl" else torch.device("cpu")
    t = torch.tensor([value], dtype=torch.float32, device=reduce_device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / args.world_size).item()


def build_optimizer(model: torch.nn.Module, args, device: torch.device) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    use_fused = fused_available and device.type == "cuda"
    extra = dict(fused=True) if use_fused else dict()
    if is_main(args):
        logger.info("AdamW fused=%s", use_fused)
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), amsgrad=True, **extra)


def compute_loss(out: dict, batch, args) -> tuple[torch.Tensor, dict]:
    n_atoms = batch.natoms.to(out["energy"].dtype)
    e_loss = F.huber_loss(out["energy"] / n_atoms, batch.energy / n_atoms, delta=0.01)
    f_loss = F.huber_loss(out["forces"], batch.forces, delta=0.01)
    loss = args.energy_weight * e_loss + args.force_weight * f_loss
    parts = {"e": e_loss.detach(), "f": f_loss.detach()}
    if args.stress_weight > 0 and "stress" in out:
        s_loss = F.huber_loss(out["stress"], batch.stress, delta=0.01)
        loss = loss + args.stress_weight * s_loss
        parts["s"] = s_loss.detach()
    return loss, parts


def forward(model, batch, training: bool):
    # forces are -dE/dR: positions must require grad, also during evaluation
    batch.pos.requires_grad_(True)
    out = model(batch)
    grads = torch.autograd.grad(
        out["energy"].sum(), [batch.pos], create_graph=training, retain_graph=training
    )
    out["forces"] = -grads[0]
    return out


def evaluate(model, loader, device, args) -> dict:
    model.eval()
    meters = {k: AverageMeter() for k in ("loss", "e_mae", "f_mae")}
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        with torch.enable_grad():
            out = forward(model, batch, training=False)
        loss, _ = compute_loss(out, batch, args)
        e_mae = ((out["energy"] - batch.energy).abs() / batch.natoms).mean()
        f_mae = (out["forces"] - batch.forces).abs().mean()
        n = batch.num_graphs
        meters["loss"].update(loss.item(), n)
        meters["e_mae"].update(e_mae.item(), n)
        meters["f_mae"].update(f_mae.item(), n)
    return {k: reduce_mean(m.avg, device, args) for k, m in meters.items()}


def save_checkpoint(path: Path, model, ema, optimizer, scheduler, scaler, epoch, step, args, best):
    raw = model.module if isinstance(model, DDP) else model
    state = {
        "model": raw.state_dict(),
        "ema": ema.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "step": step,
        "best": best,
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def main(argv=None):
    args = parse_args(argv)
    device = setup_distributed(args)
    logging.basicConfig(
        level=logging.INFO if is_main(args) else logging.WARNING,
        format=f"%(asctime)s [rank {args.rank}] %(message)s",
    )
    seed_all(args.seed + args.rank)

    # equivariant tensor products are matmul-heavy; TF32 is accurate enough for
    # training (evaluation of the final model is done in fp32 by relax_mace.py)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    args.out.mkdir(parents=True, exist_ok=True)
    if is_main(args):
        (args.out / "args.json").write_text(json.dumps({k: str(v) for k, v in vars(args).items()}, indent=2))

    # ---------------------------------------------------------------- data
    full = TrajectoryDataset(args.data, cutoff=args.cutoff)
    train_set, val_set = split_by_composition(full, val_fraction=0.05, seed=args.seed)
    train_sampler = DistributedSampler(train_set, shuffle=True) if args.distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if args.distributed else None
    train_loader = DataLoader(
        train_set,
        batch_size=args.batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=args.num_workers,
        pin_memory=True,
        persistent_workers=args.num_workers > 0,
        drop_last=True,
    )
    val_loader = DataLoader(
        val_set,
        batch_size=args.batch_size * 2,
        sampler=val_sampler,
        num_workers=max(1, args.num_workers // 2),
    )

    # --------------------------------------------------------------- model
    model = build_model(args.model, cutoff=args.cutoff, avg_num_neighbors=full.avg_num_neighbors)
    model.to(device)
    if is_main(args):
        logger.info("%s with %.2fM parameters", args.model, count_parameters(model) / 1e6)

    ema = ExponentialMovingAverage(model.parameters(), decay=args.ema_decay)
    optimizer = build_optimizer(model, args, device)
    steps_per_epoch = len(train_loader)
    scheduler = cosine_with_warmup(optimizer, args.warmup_steps, args.epochs * steps_per_epoch)

    amp_dtype = torch.float32
    if args.amp:
        amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    start_epoch, step, best = 0, 0, math.inf
    if args.resume is not None:
        ckpt = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")
        model.load_state_dict(ckpt["model"])
        ema.load_state_dict(ckpt["ema"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, step, best = ckpt["epoch"] + 1, ckpt["step"], ckpt["best"]
        logger.info("resumed from %s (epoch %d)", args.resume, start_epoch)

    if args.compile:
        model = torch.compile(model, mode="max-autotune", dynamic=True)

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False, gradient_as_bucket_view=True)

    # ---------------------------------------------------------------- loop
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        meters = {k: AverageMeter() for k in ("loss", "e", "f", "s")}
        torch.cuda.synchronize()
        t_epoch = time.perf_counter()

        for batch in train_loader:
            batch = batch.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
                out = forward(model, batch, training=True)
                loss, parts = compute_loss(out, batch, args)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            ema.update()
            step += 1

            n = batch.num_graphs
            meters["loss"].update(loss.item(), n)
            for k, v in parts.items():
                meters[k].update(v.item(), n)

            if step % args.log_every == 0 and is_main(args):
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                logger.info(
                    "ep %d step %d loss %.4f e %.4f f %.4f lr %.2e mem %.1fG",
                    epoch, step, meters["loss"].avg, meters["e"].avg, meters["f"].avg,
                    scheduler.get_last_lr()[0], mem,
                )

        torch.cuda.synchronize(device)
        epoch_time = time.perf_counter() - t_epoch

        if (epoch + 1) % args.eval_every == 0:
            with ema.average_parameters():
                metrics = evaluate(model, val_loader, device, args)
            if is_main(args):
                logger.info(
                    "ep %d val loss %.4f  E-MAE %.2f meV/atom  F-MAE %.1f meV/A  (%.0fs)",
                    epoch, metrics["loss"], 1e3 * metrics["e_mae"], 1e3 * metrics["f_mae"], epoch_time,
                )
                if metrics["loss"] < best:
                    best = metrics["loss"]
                    save_checkpoint(args.out / "best.pt", model, ema, optimizer, scheduler, scaler,
                                    epoch, step, args, best)
        if is_main(args):
            save_checkpoint(args.out / "last.pt", model, ema, optimizer, scheduler, scaler,
                            epoch, step, args, best)

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
