"""
Finetune a pretrained Octo checkpoint (converted to PyTorch) on a new robot dataset.

Example:
    python scripts/finetune.py --pretrained_path checkpoints/octo-small-torch.pt \
        --data_dir ./data/aloha_sim --window_size 2 --action_horizon 50 --batch_size 64

Multi-GPU:
    torchrun --nproc_per_node 8 scripts/finetune.py ...
"""
import argparse
import logging
import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from octo_pytorch.data.hdf5_dataset import HDF5TrajectoryDataset, collate_trajectories
from octo_pytorch.model.octo_model import OctoModel
from octo_pytorch.utils.schedules import warmup_rsqrt_schedule
from octo_pytorch.utils.logging_utils import AverageMeter, setup_wandb

logger = logging.getLogger("octo.finetune")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pretrained_path", type=str, required=True)
    p.add_argument("--data_dir", type=str, required=True)
    p.add_argument("--save_dir", type=str, default="./finetune_runs")
    p.add_argument("--device", type=str, default="cuda")
    p.add_argument("--window_size", type=int, default=2)
    p.add_argument("--action_horizon", type=int, default=4)
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--warmup_steps", type=int, default=2000)
    p.add_argument("--num_steps", type=int, default=50000)
    p.add_argument("--grad_clip", type=float, default=1.0)
    p.add_argument("--freeze_transformer", action="store_true")
    p.add_argument("--amp", action="store_true", help="use mixed precision")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast instead of fp16 (Ampere+ GPUs)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--save_every", type=int, default=5000)
    p.add_argument("--wandb_project", type=str, default=None)
    return p.parse_args()


def setup_distributed(args):
    if "RANK" not in os.environ:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
        args.distributed = False
        return
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.local_rank = int(os.environ["LOCAL_RANK"])
    args.distributed = True
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl")
    args.device = f"cuda:{args.local_rank}"


def seed_everything(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_optimizer(model, args):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim < 2 or "pos_embedding" in name or "norm" in name:
            no_decay.append(param)
        else:
            decay.append(param)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95))


def main():
    args = parse_args()
    setup_distributed(args)
    seed_everything(args.seed + args.rank)
    is_main = args.rank == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING)

    # TF32 matmuls are fine for transformer training on Ampere
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    device = torch.device(args.device)

    # ---------------- model ----------------
    model = OctoModel.load_pretrained(args.pretrained_path, device=args.device)
    model.train()
    if args.freeze_transformer:
        for p in model.octo_transformer.parameters():
            p.requires_grad_(False)
        logger.info("Froze transformer; training tokenizers + heads only")
    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    logger.info(f"trainable params: {n_trainable / 1e6:.1f}M")

    if args.compile:
        model = torch.compile(model)
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], find_unused_parameters=args.freeze_transformer)
    raw_model = model.module if args.distributed else model

    # ---------------- data ----------------
    dataset = HDF5TrajectoryDataset(
        args.data_dir,
        window_size=args.window_size,
        action_horizon=args.action_horizon,
        dataset_statistics=raw_model.dataset_statistics,
    )
    sampler = DistributedSampler(dataset, shuffle=True) if args.distributed else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size // args.world_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=args.num_workers,
        pin_memory=True,
        persistent_workers=args.num_workers > 0,
        drop_last=True,
        collate_fn=collate_trajectories,
    )

    optimizer = build_optimizer(raw_model, args)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_rsqrt_schedule(step, args.warmup_steps, timescale=10000)
    )

    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)

    if is_main and args.wandb_project:
        setup_wandb(args.wandb_project, vars(args))
    os.makedirs(args.save_dir, exist_ok=True)

    # ---------------- train ----------------
    loss_meter = AverageMeter()
    step = 0
    epoch = 0
    t0 = time.time()
    while step < args.num_steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in loader:
            obs = {k: v.to(device, non_blocking=True) for k, v in batch["observation"].items()}
            task = {k: v.to(device, non_blocking=True) for k, v in batch["task"].items()}
            actions = batch["action"].to(device, non_blocking=True)
            pad_mask = batch["observation"]["timestep_pad_mask"].to(device, non_blocking=True)

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
                transformer_out = model(obs, task, pad_mask, train=True)
                loss, metrics = raw_model.heads["action"].loss(
                    transformer_out, actions, pad_mask, action_pad_mask=batch["action_pad_mask"].to(device)
                )

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            loss_meter.update(loss.item())
            step += 1

            if is_main and step % args.log_every == 0:
                elapsed = time.time() - t0
                mem_gb = torch.cuda.max_memory_allocated() / 1e9
                logger.info(
                    f"step {step:6d} | loss {loss_meter.avg:.4f} | mse {metrics['mse'].item():.4f} "
                    f"| grad_norm {grad_norm.item():.2f} | lr {scheduler.get_last_lr()[0]:.2e} "
                    f"| {args.log_every / elapsed:.2f} it/s | peak mem {mem_gb:.1f} GB"
                )
                loss_meter.reset()
                t0 = time.time()

            if is_main and step % args.save_every == 0:
                path = os.path.join(args.save_dir, f"octo_finetuned_{step}.pt")
                raw_model.save_pretrained(path)
                logger.info(f"saved {path}")

            if step >= args.num_steps:
                break
        epoch += 1

    if is_main:
        raw_model.save_pretrained(os.path.join(args.save_dir, "octo_finetuned_final.pt"))
    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
