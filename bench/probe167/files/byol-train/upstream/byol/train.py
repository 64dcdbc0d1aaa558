"""BYOL pre-training on ImageNet (PyTorch re-implementation).

Launch one process per GPU with torchrun, e.g. on one 8-GPU node:

    torchrun --nproc_per_node=8 train.py --config config/byol_r50_imagenet.yaml

Multi-node runs go through scripts/slurm_train.sh which exports the usual
MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE / LOCAL_RANK variables.
"""
import argparse
import datetime
import json
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision import datasets, models

from byol.lars import LARS, exclude_bias_and_norm
from byol.model import BYOLModel
from byol.transforms import get_byol_transforms, TwoViewTransform
from byol.utils.meters import AverageMeter, ProgressMeter
from byol.utils.prefetcher import DataPrefetcher

# surface NCCL errors as Python exceptions instead of hanging forever
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def get_args():
    parser = argparse.ArgumentParser("BYOL pre-training")
    parser.add_argument("--config", type=str, required=True, help="path to yaml config")
    parser.add_argument("--output-dir", type=str, default="./output")
    parser.add_argument("--resume", type=str, default="", help="checkpoint to resume from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-amp", action="store_true", help="disable mixed precision")
    parser.add_argument("--print-freq", type=int, default=50)
    return parser.parse_args()


def set_seed(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(cfg):
    """Initialise torch.distributed from the environment set by torchrun / srun."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        rank = int(os.environ["SLURM_PROCID"])
        world_size = int(os.environ["SLURM_NTASKS"])
        local_rank = rank % torch.cuda.device_count()
    else:
        rank, world_size, local_rank = 0, 1, 0

    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(
            backend=cfg["distributed"]["backend"],
            init_method=cfg["distributed"].get("init_method", "env://"),
            world_size=world_size,
            rank=rank,
            timeout=datetime.timedelta(minutes=cfg["distributed"].get("timeout_min", 30)),
        )
        dist.barrier()
    return rank, world_size, local_rank


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def build_model(cfg):
    backbone = models.__dict__[cfg["model"]["backbone"]](zero_init_residual=True)
    feat_dim = backbone.fc.in_features
    backbone.fc = nn.Identity()
    model = BYOLModel(
        backbone,
        feat_dim=feat_dim,
        proj_hidden_dim=cfg["model"]["proj_hidden_dim"],
        proj_dim=cfg["model"]["proj_dim"],
        pred_hidden_dim=cfg["model"]["pred_hidden_dim"],
    )
    return model


def build_optimizer(cfg, model, world_size):
    opt_cfg = cfg["optimizer"]
    base_lr = opt_cfg["base_lr"] * cfg["data"]["batch_size_per_gpu"] * world_size / 256
    params = [
        {"params": [p for n, p in model.named_parameters() if not exclude_bias_and_norm(n, p)]},
        {"params": [p for n, p in model.named_parameters() if exclude_bias_and_norm(n, p)],
         "weight_decay": 0.0, "lars_exclude": True},
    ]
    if opt_cfg["name"] == "lars":
        optimizer = LARS(params, lr=base_lr, momentum=opt_cfg["momentum"],
                         weight_decay=opt_cfg["weight_decay"], eta=opt_cfg.get("eta", 1e-3))
    elif opt_cfg["name"] == "lamb":
        # apex's fused LAMB is ~2x faster than a python LAMB at bs=4096
        from apex.optimizers import FusedLAMB
        optimizer = FusedLAMB(params, lr=base_lr, weight_decay=opt_cfg["weight_decay"])
    elif opt_cfg["name"] == "sgd":
        optimizer = torch.optim.SGD(params, lr=base_lr, momentum=opt_cfg["momentum"],
                                    weight_decay=opt_cfg["weight_decay"])
    else:
        raise ValueError(f"unknown optimizer {opt_cfg['name']}")
    return optimizer, base_lr


def cosine_lr(step, total_steps, warmup_steps, base_lr):
    if step < warmup_steps:
        return base_lr * step / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def target_momentum(step, total_steps, base_m):
    return 1.0 - (1.0 - base_m) * (math.cos(math.pi * step / total_steps) + 1.0) / 2.0


def regression_loss(p, z):
    p = F.normalize(p, dim=-1, p=2)
    z = F.normalize(z, dim=-1, p=2)
    return 2 - 2 * (p * z).sum(dim=-1)


def save_checkpoint(state, output_dir, epoch):
    path = os.path.join(output_dir, f"checkpoint_{epoch:04d}.pth")
    torch.save(state, path)
    torch.save(state, os.path.join(output_dir, "checkpoint_last.pth"))


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank = setup_distributed(cfg)
    device = torch.device("cuda", local_rank)
    set_seed(args.seed, rank)

    torch.backends.cudnn.benchmark = True
    # TF32 on Ampere: negligible effect on BYOL accuracy, ~1.3x faster convs
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    use_amp = cfg["amp"]["enabled"] and not args.no_amp
    if cfg["amp"].get("dtype", "fp16") == "bf16" and torch.cuda.is_bf16_supported():
        amp_dtype = torch.bfloat16
    else:
        amp_dtype = torch.float16

    if is_main_process():
        os.makedirs(args.output_dir, exist_ok=True)
        print(json.dumps(cfg, indent=2))
        print(f"world size {world_size}, amp={use_amp} ({amp_dtype})")

    # ------------------------------------------------------------------ data
    transform = TwoViewTransform(*get_byol_transforms(cfg["data"]["image_size"]))
    dataset = datasets.ImageFolder(os.path.join(cfg["data"]["root"], "train"), transform)
    sampler = torch.utils.data.distributed.DistributedSampler(
        dataset, num_replicas=world_size, rank=rank, shuffle=True) if world_size > 1 else None
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=cfg["data"]["batch_size_per_gpu"],
        shuffle=sampler is None,
        sampler=sampler,
        num_workers=cfg["data"]["num_workers"],
        pin_memory=True,
        drop_last=True,
        persistent_workers=True,
    )

    # ----------------------------------------------------------------- model
    model = build_model(cfg)
    if world_size > 1 and cfg["model"].get("sync_bn", True):
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    optimizer, base_lr = build_optimizer(cfg, model, world_size)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    broadcast_buffers=False)
    raw_model = model.module if isinstance(model, DDP) else model

    scaler = torch.cuda.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)

    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        ckpt = torch.load(args.resume, map_location=device)
        raw_model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"]
        if is_main_process():
            print(f"resumed from {args.resume} at epoch {start_epoch}")

    epochs = cfg["schedule"]["epochs"]
    steps_per_epoch = len(loader)
    total_steps = epochs * steps_per_epoch
    warmup_steps = cfg["schedule"]["warmup_epochs"] * steps_per_epoch

    for epoch in range(start_epoch, epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        batch_time = AverageMeter("Time", ":6.3f")
        losses = AverageMeter("Loss", ":.4f")
        progress = ProgressMeter(steps_per_epoch, [batch_time, losses], prefix=f"Epoch [{epoch}]")

        torch.cuda.reset_peak_memory_stats()
        prefetcher = DataPrefetcher(loader)
        (view1, view2), _ = prefetcher.next()
        it = 0
        end = time.time()
        while view1 is not None:
            step = epoch * steps_per_epoch + it
            lr = cosine_lr(step, total_steps, warmup_steps, base_lr)
            for group in optimizer.param_groups:
                group["lr"] = lr
            m = target_momentum(step, total_steps, cfg["model"]["base_momentum"])

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                p1, p2, z1, z2 = model(view1, view2)
                loss = (regression_loss(p1, z2) + regression_loss(p2, z1)).mean()

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if cfg["optimizer"].get("clip_grad", 0) > 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), cfg["optimizer"]["clip_grad"])
            scaler.step(optimizer)
            scaler.update()
            raw_model.update_target(m)

            losses.update(loss.item(), view1.size(0))
            batch_time.update(time.time() - end)
            end = time.time()
            if it % args.print_freq == 0 and is_main_process():
                progress.display(it)
                mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                print(f"  lr {lr:.4f}  m {m:.5f}  peak mem {mem:.1f}G")
            it += 1
            (view1, view2), _ = prefetcher.next()

        torch.cuda.synchronize()
        if is_main_process():
            save_checkpoint({
                "epoch": epoch + 1,
                "model": raw_model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "config": cfg,
            }, args.output_dir, epoch)
            # only the online backbone is needed for linear evaluation
            torch.save(raw_model.online_backbone.state_dict(),
                       os.path.join(args.output_dir, "backbone_last.pth"))

    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
