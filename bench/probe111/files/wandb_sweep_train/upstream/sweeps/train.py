#!/usr/bin/env python
"""Sweep-able ViT/ConvNeXt fine-tuning on a folder dataset.

Every W&B agent runs this script with the hyper-parameters of one sweep run
injected through ``wandb.config``. ``launch_agents.sh`` starts one agent per
GPU, so the script itself always trains on a single device.

    wandb sweep sweeps/sweep_bayes.yaml
    bash sweeps/launch_agents.sh <entity/project/sweep_id>
"""
import argparse
import math
import os
import random
import time
from contextlib import nullcontext

import numpy as np
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
import wandb
from timm.data import create_transform, Mixup
from timm.loss import SoftTargetCrossEntropy
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

try:
    from apex.optimizers import FusedAdam, FusedLAMB
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

DEFAULTS = dict(
    model="convnext_tiny",
    pretrained=True,
    epochs=30,
    batch_size=128,
    lr=1e-3,
    min_lr=1e-6,
    weight_decay=0.05,
    warmup_epochs=3,
    optimizer="adamw",
    label_smoothing=0.1,
    mixup=0.8,
    cutmix=1.0,
    drop_path=0.1,
    amp_dtype="bf16",
    channels_last=True,
    compile=False,
    grad_accum=1,
    seed=0,
)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_loaders(cfg, data_dir, num_workers):
    train_tf = create_transform(224, is_training=True, auto_augment="rand-m9-mstd0.5-inc1")
    val_tf = create_transform(224, is_training=False)
    train_ds = ImageFolder(os.path.join(data_dir, "train"), transform=train_tf)
    val_ds = ImageFolder(os.path.join(data_dir, "val"), transform=val_tf)
    train_loader = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True,
                              num_workers=num_workers, pin_memory=True, persistent_workers=True)
    val_loader = DataLoader(val_ds, batch_size=cfg.batch_size * 2, shuffle=False,
                            num_workers=num_workers, pin_memory=True)
    return train_loader, val_loader, len(train_ds.classes)


def build_optimizer(cfg, model):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if cfg.optimizer == "fusedadam" and HAS_APEX:
        return FusedAdam(groups, lr=cfg.lr, adam_w_mode=True)
    if cfg.optimizer == "lamb" and HAS_APEX:
        return FusedLAMB(groups, lr=cfg.lr)
    return torch.optim.AdamW(groups, lr=cfg.lr, fused=True)


def cosine_lr(step, total, warmup, base_lr, min_lr):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def evaluate(model, loader, device, autocast_ctx):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with autocast_ctx():
            logits = model(images)
        loss_sum += F.cross_entropy(logits.float(), targets, reduction="sum").item()
        correct += (logits.argmax(1) == targets).sum().item()
        total += targets.numel()
    return correct / total, loss_sum / total


def save_checkpoint(path, model, optimizer, scaler, epoch, step, best_acc):
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "step": step,
        "best_acc": best_acc,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def maybe_resume(path, model, optimizer, scaler):
    """Resume a preempted sweep run (W&B agents re-run the same run id after preemption)."""
    if not os.path.exists(path):
        return 0, 0, 0.0
    state = torch.load(path, map_location="cuda")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scaler.load_state_dict(state["scaler"])
    return state["epoch"] + 1, state["step"], state["best_acc"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=os.environ.get("DATA_DIR", "/mnt/datasets/food101-folder"))
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--project", default="vision-sweeps")
    args, _ = parser.parse_known_args()

    run = wandb.init(project=args.project, config=DEFAULTS)
    cfg = wandb.config
    seed_everything(cfg.seed)

    assert torch.cuda.is_available(), "sweep runs are expected to get a GPU from launch_agents.sh"
    device = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    wandb.config.update({"gpu_name": torch.cuda.get_device_name(device),
                         "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "")},
                        allow_val_change=True)

    train_loader, val_loader, num_classes = build_loaders(cfg, args.data_dir, args.workers)

    model = timm.create_model(cfg.model, pretrained=cfg.pretrained, num_classes=num_classes,
                              drop_path_rate=cfg.drop_path)
    model = model.cuda()
    if cfg.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if cfg.compile:
        model = torch.compile(model, mode="max-autotune")

    optimizer = build_optimizer(cfg, model)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": None}[cfg.amp_dtype]
    if amp_dtype is None:
        autocast_ctx = nullcontext
    else:
        autocast_ctx = lambda: torch.autocast(device_type="cuda", dtype=amp_dtype)
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    mixup_fn = Mixup(mixup_alpha=cfg.mixup, cutmix_alpha=cfg.cutmix, label_smoothing=cfg.label_smoothing,
                     num_classes=num_classes) if cfg.mixup > 0 or cfg.cutmix > 0 else None
    criterion = SoftTargetCrossEntropy() if mixup_fn else nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)

    steps_per_epoch = len(train_loader) // cfg.grad_accum
    total_steps = cfg.epochs * steps_per_epoch
    warmup_steps = cfg.warmup_epochs * steps_per_epoch
    ckpt_path = os.path.join(run.dir, "last.pt")
    start_epoch, step, best_acc = maybe_resume(ckpt_path, model, optimizer, scaler)

    for epoch in range(start_epoch, cfg.epochs):
        model.train()
        t0 = time.time()
        torch.cuda.reset_peak_memory_stats()
        for it, (images, targets) in enumerate(train_loader):
            images = images.cuda(non_blocking=True)
            targets = targets.cuda(non_blocking=True)
            if cfg.channels_last:
                images = images.contiguous(memory_format=torch.channels_last)
            if mixup_fn is not None:
                images, targets = mixup_fn(images, targets)

            with autocast_ctx():
                loss = criterion(model(images), targets) / cfg.grad_accum
            scaler.scale(loss).backward()

            if (it + 1) % cfg.grad_accum == 0:
                lr = cosine_lr(step, total_steps, warmup_steps, cfg.lr, cfg.min_lr)
                for g in optimizer.param_groups:
                    g["lr"] = lr
                scaler.unscale_(optimizer)
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if step % 50 == 0:
                    wandb.log({"train/loss": loss.item() * cfg.grad_accum, "train/lr": lr,
                               "train/grad_norm": grad_norm.item()}, step=step)

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        val_acc, val_loss = evaluate(model, val_loader, device, autocast_ctx)
        best_acc = max(best_acc, val_acc)
        wandb.log({
            "val/acc": val_acc,
            "val/loss": val_loss,
            "val/best_acc": best_acc,
            "epoch": epoch,
            "perf/epoch_time_s": epoch_time,
            "perf/imgs_per_s": len(train_loader.dataset) / epoch_time,
            "perf/max_mem_gb": torch.cuda.max_memory_allocated() / 1e9,
        }, step=step)

        save_checkpoint(ckpt_path, model, optimizer, scaler, epoch, step, best_acc)

        if not math.isfinite(val_loss):
            wandb.run.summary["diverged"] = True
            break

    wandb.run.summary["best_acc"] = best_acc
    run.finish()


if __name__ == "__main__":
    main()
