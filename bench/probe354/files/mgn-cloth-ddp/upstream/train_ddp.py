#!/usr/bin/env python
"""Multi-GPU MeshGraphNets training for FlagSimple / DeformingPlate (Lagrangian meshes).

Launched with torchrun, one process per GPU:

    torchrun --nproc_per_node=8 train_ddp.py --config configs/flag_simple.yaml
    torchrun --nnodes=2 --node_rank=$RANK --master_addr=$MASTER --nproc_per_node=8 train_ddp.py ...

Features: bf16 autocast, fused Adam, optional torch.compile of the processor,
gradient accumulation, EMA weights, wandb logging on rank 0.
"""
import argparse
import copy
import dataclasses
import math
import os
import time
from contextlib import nullcontext
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from meshgraphnets.data import LagrangianMeshDataset, collate_graphs
from meshgraphnets.models import MeshGraphNet
from meshgraphnets.utils import ema_update, get_logger, set_seed

try:
    import wandb
except ImportError:  # optional
    wandb = None


@dataclasses.dataclass
class TrainConfig:
    dataset: str = "flag_simple"
    data_dir: str = "data/flag_simple"
    out_dir: str = "outputs/flag_simple"
    hidden_dim: int = 128
    num_layers: int = 15
    batch_size: int = 4          # per GPU
    grad_accum: int = 1
    lr: float = 1e-4
    min_lr: float = 1e-6
    weight_decay: float = 0.0
    epochs: int = 200
    warmup_steps: int = 1000
    noise_std: float = 3e-3
    noise_gamma: float = 0.1
    ema_decay: float = 0.999
    precision: str = "bf16"      # "fp32" | "fp16" | "bf16"
    compile: bool = False
    fused_adam: bool = True
    num_workers: int = 8
    seed: int = 42
    log_every: int = 50
    ckpt_every: int = 2000
    wandb_project: Optional[str] = None


def load_config(path: Optional[str]) -> TrainConfig:
    cfg = TrainConfig()
    if path:
        with open(path) as f:
            for k, v in (yaml.safe_load(f) or {}).items():
                if not hasattr(cfg, k):
                    raise KeyError(f"unknown config key {k}")
                setattr(cfg, k, v)
    return cfg


def setup_distributed():
    """Initialise the default process group from torchrun's environment."""
    if "RANK" not in os.environ:
        # single-process debug run
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def cosine_lr(step, total, cfg: TrainConfig):
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, total - cfg.warmup_steps)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


def autocast_ctx(cfg: TrainConfig):
    if cfg.precision == "fp32":
        return nullcontext()
    dtype = torch.bfloat16 if cfg.precision == "bf16" else torch.float16
    return torch.autocast(device_type="cuda", dtype=dtype)


def build_optimizer(model: nn.Module, cfg: TrainConfig):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in n else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": cfg.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.999), fused=cfg.fused_adam)


def reduce_mean(t: torch.Tensor, world_size: int) -> torch.Tensor:
    if world_size == 1:
        return t
    t = t.detach().clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / world_size


def save_checkpoint(path, model, ema_model, optimizer, scaler, step, cfg):
    state = {
        "model": model.module.state_dict() if isinstance(model, DDP) else model.state_dict(),
        "ema": ema_model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
        "step": step,
        "config": dataclasses.asdict(cfg),
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default=None)
    parser.add_argument("--resume", type=str, default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)

    rank, local_rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    is_main = rank == 0
    log = get_logger("mgn", rank)
    set_seed(cfg.seed + rank)

    if is_main:
        os.makedirs(cfg.out_dir, exist_ok=True)
        log.info("world size %d, GPU: %s", world_size, torch.cuda.get_device_name(device))
        if cfg.precision == "bf16" and not torch.cuda.is_bf16_supported():
            log.warning("bf16 requested but not supported on this GPU, falling back to fp16")
            cfg.precision = "fp16"

    train_set = LagrangianMeshDataset(cfg.data_dir, split="train", noise_std=cfg.noise_std, noise_gamma=cfg.noise_gamma)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, seed=cfg.seed) if world_size > 1 else None
    loader = DataLoader(
        train_set,
        batch_size=cfg.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=cfg.num_workers,
        pin_memory=True,
        drop_last=True,
        collate_fn=collate_graphs,
        persistent_workers=cfg.num_workers > 0,
    )

    model = MeshGraphNet(
        node_in=train_set.node_feature_dim,
        edge_in=train_set.edge_feature_dim,
        out_dim=train_set.output_dim,
        hidden_dim=cfg.hidden_dim,
        num_layers=cfg.num_layers,
    ).to(device)
    ema_model = copy.deepcopy(model).eval().requires_grad_(False)

    if cfg.compile:
        # the processor has static shapes per mesh; CUDA graphs give ~1.4x on A100
        model.processor = torch.compile(model.processor, mode="reduce-overhead", dynamic=False)

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    broadcast_buffers=False, gradient_as_bucket_view=True)

    optimizer = build_optimizer(model, cfg)
    scaler = torch.cuda.amp.GradScaler(enabled=(cfg.precision == "fp16"))

    step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location={"cuda:0": f"cuda:{local_rank}"})
        (model.module if isinstance(model, DDP) else model).load_state_dict(ckpt["model"])
        ema_model.load_state_dict(ckpt["ema"])
        optimizer.load_state_dict(ckpt["optimizer"])
        if ckpt.get("scaler"):
            scaler.load_state_dict(ckpt["scaler"])
        step = ckpt["step"]

    if is_main and cfg.wandb_project and wandb is not None:
        wandb.init(project=cfg.wandb_project, config=dataclasses.asdict(cfg))

    total_steps = cfg.epochs * len(loader) // cfg.grad_accum
    model.train()
    t0 = time.time()
    for epoch in range(cfg.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for it, batch in enumerate(loader):
            batch = batch.to(device, non_blocking=True)
            sync = (it + 1) % cfg.grad_accum == 0
            ctx = model.no_sync() if (world_size > 1 and not sync) else nullcontext()
            with ctx:
                with autocast_ctx(cfg):
                    pred = model(batch.node_features, batch.edge_features, batch.edge_index)
                    loss = nn.functional.mse_loss(pred[batch.loss_mask].float(), batch.target[batch.loss_mask])
                scaler.scale(loss / cfg.grad_accum).backward()
            if not sync:
                continue

            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, cfg)
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            ema_update(ema_model, model.module if isinstance(model, DDP) else model, cfg.ema_decay)
            step += 1

            if step % cfg.log_every == 0:
                loss_avg = reduce_mean(loss.detach(), world_size).item()
                if is_main:
                    dt = (time.time() - t0) / cfg.log_every
                    mem = torch.cuda.max_memory_reserved(device) / 2 ** 30
                    log.info("ep %d step %d loss %.4e gnorm %.2f %.3fs/it mem %.1fG",
                             epoch, step, loss_avg, grad_norm.item(), dt, mem)
                    if wandb is not None and wandb.run is not None:
                        wandb.log({"loss": loss_avg, "lr": optimizer.param_groups[0]["lr"], "sec_per_it": dt}, step=step)
                t0 = time.time()

            if is_main and step % cfg.ckpt_every == 0:
                save_checkpoint(os.path.join(cfg.out_dir, f"ckpt_{step:07d}.pt"), model, ema_model, optimizer, scaler, step, cfg)

    if is_main:
        save_checkpoint(os.path.join(cfg.out_dir, "final.pt"), model, ema_model, optimizer, scaler, step, cfg)
    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
