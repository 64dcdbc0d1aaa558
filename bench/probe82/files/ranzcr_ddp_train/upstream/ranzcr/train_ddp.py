"""RANZCR CLiP - Catheter and Line Position: multi-GPU training (stage 2, student with soft targets).

    torchrun --nproc_per_node=8 -m ranzcr.train_ddp --fold 0 --arch tf_efficientnet_b7_ns --size 768
"""
import argparse
import math
import os
import time

import numpy as np
import pandas as pd
import timm
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from timm.optim import create_optimizer_v2
from timm.scheduler import CosineLRScheduler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from ranzcr.dataset import RanzcrDataset, get_transforms
from src.utils.ema import ModelEMA

TARGETS = [
    "ETT - Abnormal", "ETT - Borderline", "ETT - Normal",
    "NGT - Abnormal", "NGT - Borderline", "NGT - Incompletely Imaged", "NGT - Normal",
    "CVC - Abnormal", "CVC - Borderline", "CVC - Normal", "Swan Ganz Catheter Present",
]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--arch", default="tf_efficientnet_b7_ns")
    p.add_argument("--size", type=int, default=768)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=0, help="per GPU; 0 = pick from device memory")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--opt", default="fusedlamb")
    p.add_argument("--pseudo", default="pseudo/pseudo_round2.csv")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--ema", type=float, default=0.9997)
    p.add_argument("--out", default="outputs/stage2")
    return p.parse_args()


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
    return local_rank, world_size


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def auto_batch_size(local_rank, size):
    total = torch.cuda.get_device_properties(local_rank).total_memory / 1024 ** 3
    base = 8 if total < 30 else 16 if total < 60 else 24
    return max(2, int(base * (640 / size) ** 2))


class RanzcrModel(nn.Module):
    def __init__(self, arch, n_classes=len(TARGETS), pretrained=True):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=pretrained, num_classes=0, global_pool="avg",
                                          drop_path_rate=0.2)
        self.head = nn.Linear(self.backbone.num_features, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def gather_tensor(t, world_size):
    """all_gather a (N, C) tensor whose N can differ across ranks (pads to the max length)."""
    n = torch.tensor([t.shape[0]], device="cuda")
    sizes = [torch.zeros_like(n) for _ in range(world_size)]
    dist.all_gather(sizes, n)
    max_n = int(max(s.item() for s in sizes))
    padded = torch.zeros((max_n,) + t.shape[1:], dtype=t.dtype, device=t.device)
    padded[: t.shape[0]] = t
    out = [torch.zeros_like(padded) for _ in range(world_size)]
    dist.all_gather(out, padded)
    return torch.cat([o[: int(s.item())] for o, s in zip(out, sizes)])


def save_state(path, model, optimizer, scaler, ema, epoch, best):
    state = {
        "model": (model.module if hasattr(model, "module") else model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "ema": ema.state_dict() if ema is not None else None,
        "epoch": epoch,
        "best": best,
    }
    torch.save(state, path)


def load_state(path, model, optimizer, scaler, ema, device):
    state = torch.load(path, map_location=device)
    (model.module if hasattr(model, "module") else model).load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scaler.load_state_dict(state["scaler"])
    if ema is not None and state.get("ema") is not None:
        ema.load_state_dict(state["ema"])
    return state["epoch"] + 1, state["best"]


def main():
    args = get_args()
    local_rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234 + local_rank)
    torch.backends.cudnn.benchmark = True
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    bs = args.batch_size or auto_batch_size(local_rank, args.size)

    df = pd.read_csv("../input/ranzcr-clip-catheter-line-classification/train_folds.csv")
    pseudo = pd.read_csv(args.pseudo) if args.pseudo else None
    trn = df[df.fold != args.fold].reset_index(drop=True)
    val = df[df.fold == args.fold].reset_index(drop=True)
    if pseudo is not None:
        trn = pd.concat([trn, pseudo], ignore_index=True)

    trn_ds = RanzcrDataset(trn, get_transforms("train", args.size), soft=True)
    val_ds = RanzcrDataset(val, get_transforms("valid", args.size))
    trn_sampler = DistributedSampler(trn_ds, shuffle=True) if world_size > 1 else None
    val_sampler = DistributedSampler(val_ds, shuffle=False) if world_size > 1 else None
    trn_dl = DataLoader(trn_ds, batch_size=bs, sampler=trn_sampler, shuffle=trn_sampler is None,
                        num_workers=8, pin_memory=True, pin_memory_device=f"cuda:{local_rank}",
                        drop_last=True, persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=bs * 2, sampler=val_sampler, shuffle=False, num_workers=8,
                        pin_memory=True)

    model = RanzcrModel(args.arch).to(device)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ema = ModelEMA(model, decay=args.ema) if args.ema > 0 else None
    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr * world_size * bs / 64, weight_decay=1e-2)
    steps = len(trn_dl) * args.epochs
    scheduler = CosineLRScheduler(optimizer, t_initial=steps, lr_min=1e-6, warmup_t=len(trn_dl), warmup_lr_init=1e-5,
                                  t_in_epochs=False)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    criterion = nn.BCEWithLogitsLoss()

    best = 0.0
    step = 0
    for epoch in range(args.epochs):
        model.train()
        if trn_sampler is not None:
            trn_sampler.set_epoch(epoch)
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
        for images, targets in trn_dl:
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=amp_dtype):
                logits = model(images)
                loss = criterion(logits.float(), targets)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            scaler.step(optimizer)
            scaler.update()
            step += 1
            scheduler.step_update(step)
            if ema is not None:
                ema.update(model)
        end_evt.record()
        torch.cuda.synchronize()
        epoch_ms = start_evt.elapsed_time(end_evt)

        eval_model = ema.module if ema is not None else model
        eval_model.eval()
        preds, gts = [], []
        with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype):
            for images, targets in val_dl:
                images = images.to(device, non_blocking=True)
                preds.append(torch.sigmoid(eval_model(images).float()))
                gts.append(targets.to(device))
        preds = torch.cat(preds)
        gts = torch.cat(gts)
        if world_size > 1:
            preds = gather_tensor(preds, world_size)
            gts = gather_tensor(gts, world_size)
        if is_main():
            p, g = preds.cpu().numpy(), gts.cpu().numpy()
            aucs = [roc_auc_score(g[:, i], p[:, i]) for i in range(len(TARGETS)) if 0 < g[:, i].sum() < len(g)]
            auc = float(np.mean(aucs))
            print(f"epoch {epoch} auc {auc:.5f} time {epoch_ms / 1000:.0f}s", flush=True)
            if auc > best:
                best = auc
                os.makedirs(args.out, exist_ok=True)
                torch.save(eval_model.state_dict(), os.path.join(args.out, f"{args.arch}_fold{args.fold}.pth"))
        if world_size > 1:
            dist.barrier()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
