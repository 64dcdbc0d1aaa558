"""Pose-based isolated sign recognition (WLASL / AUTSL / MSASL) with a GCN encoder
and a small transformer head.  Launched with torchrun:

    torchrun --nproc_per_node=4 train_islr.py --cfg configs/wlasl2000_pose.yaml

Keypoints come from the HRNet/MMPose extraction in tools/extract_keypoints.py (133 whole-body
points, we keep 27: upper body + both hands).
"""
import argparse
import datetime
import json
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from datasets.pose_dataset import PoseSignDataset, collate_pose
from models.pose_islr import PoseISLR
from utils.meters import AverageMeter, accuracy
from utils.lr_sched import cosine_scheduler

# fp32 matmuls can use TF32 on Ampere: ~2x faster GCN layers, no measurable accuracy drop
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def get_args():
    p = argparse.ArgumentParser("pose ISLR")
    p.add_argument("--cfg", required=True)
    p.add_argument("--output_dir", default="./output/islr")
    p.add_argument("--resume", default="")
    p.add_argument("--eval", action="store_true")
    p.add_argument("--seed", type=int, default=3407)
    p.add_argument("--amp", action="store_true", default=True)
    p.add_argument("--bf16", action="store_true", help="autocast to bfloat16 instead of float16")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch 2.x)")
    p.add_argument("--dist_url", default="env://")
    return p.parse_args()


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
    else:
        print("Not using distributed mode")
        args.distributed = False
        args.rank, args.world_size, args.local_rank = 0, 1, 0
        return
    args.distributed = True
    torch.cuda.set_device(args.local_rank)
    print(f"| distributed init (rank {args.rank}): {args.dist_url}", flush=True)
    dist.init_process_group(backend="nccl", init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank,
                            timeout=datetime.timedelta(minutes=30))
    dist.barrier()


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def seed_everything(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def reduce_mean(t):
    if not dist.is_initialized():
        return t
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / dist.get_world_size()


def build_loaders(cfg, args):
    train_set = PoseSignDataset(cfg["data"], split="train")
    val_set = PoseSignDataset(cfg["data"], split="val")
    if args.distributed:
        train_sampler = DistributedSampler(train_set, shuffle=True)
        val_sampler = DistributedSampler(val_set, shuffle=False)
    else:
        train_sampler = torch.utils.data.RandomSampler(train_set)
        val_sampler = torch.utils.data.SequentialSampler(val_set)
    train_loader = DataLoader(train_set, batch_size=cfg["train"]["batch_size"], sampler=train_sampler,
                              num_workers=cfg["train"].get("num_workers", 8), pin_memory=True,
                              drop_last=True, collate_fn=collate_pose, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=cfg["train"]["batch_size"] * 2, sampler=val_sampler,
                            num_workers=cfg["train"].get("num_workers", 8), pin_memory=True,
                            collate_fn=collate_pose)
    return train_loader, val_loader, train_sampler


def train_one_epoch(model, loader, optimizer, scaler, lr_schedule, epoch, device, args, cfg):
    model.train()
    loss_meter, top1_meter = AverageMeter(), AverageMeter()
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    it0 = epoch * len(loader)
    t0 = time.time()
    for i, batch in enumerate(loader):
        for g in optimizer.param_groups:
            g["lr"] = lr_schedule[it0 + i] * g.get("lr_scale", 1.0)
        pose = batch["pose"].to(device, non_blocking=True)
        mask = batch["mask"].to(device, non_blocking=True)
        label = batch["label"].to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
            logits = model(pose, mask)
            loss = F.cross_entropy(logits, label, label_smoothing=cfg["train"].get("label_smoothing", 0.1))
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), cfg["train"].get("clip_grad", 1.0))
        scaler.step(optimizer)
        scaler.update()

        top1, = accuracy(logits.detach(), label, topk=(1,))
        loss_meter.update(reduce_mean(loss.detach()).item(), label.size(0))
        top1_meter.update(reduce_mean(top1).item(), label.size(0))
        if i % 50 == 0 and is_main():
            mem = torch.cuda.max_memory_reserved() / 2 ** 30
            print(f"ep {epoch} it {i}/{len(loader)} loss {loss_meter.avg:.4f} top1 {top1_meter.avg:.2f} "
                  f"lr {optimizer.param_groups[0]['lr']:.2e} mem {mem:.1f}G {time.time() - t0:.1f}s", flush=True)
    return {"loss": loss_meter.avg, "top1": top1_meter.avg}


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros(2, device=device)
    for batch in loader:
        pose = batch["pose"].to(device, non_blocking=True)
        mask = batch["mask"].to(device, non_blocking=True)
        label = batch["label"].to(device, non_blocking=True)
        logits = model(pose, mask)
        top1 = (logits.argmax(-1) == label).sum()
        top5 = (logits.topk(5, dim=-1).indices == label[:, None]).any(-1).sum()
        correct += torch.stack([top1, top5]).float()
    n = torch.tensor([len(loader.dataset)], device=device, dtype=torch.float)
    if dist.is_initialized():
        dist.all_reduce(correct)
    return (100.0 * correct / n).tolist()


def main():
    args = get_args()
    with open(args.cfg) as f:
        cfg = yaml.safe_load(f)
    setup_distributed(args)
    seed_everything(args.seed + args.rank)
    device = torch.device("cuda", args.local_rank)
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)

    train_loader, val_loader, train_sampler = build_loaders(cfg, args)
    model = PoseISLR(**cfg["model"]).to(device)
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], broadcast_buffers=False)
    model_without_ddp = model.module if args.distributed else model
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    decay, no_decay = [], []
    for n, p in model_without_ddp.named_parameters():
        (no_decay if p.ndim <= 1 or n.endswith(".bias") else decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["train"]["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=cfg["train"]["lr"], betas=(0.9, 0.98), fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)
    epochs = cfg["train"]["epochs"]
    lr_schedule = cosine_scheduler(cfg["train"]["lr"], cfg["train"].get("min_lr", 1e-6), epochs,
                                   len(train_loader), warmup_epochs=cfg["train"].get("warmup_epochs", 5))

    start_epoch, best = 0, 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model_without_ddp.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best = ckpt["epoch"] + 1, ckpt.get("best", 0.0)

    if args.eval:
        top1, top5 = evaluate(model, val_loader, device)
        print(f"val top1 {top1:.2f} top5 {top5:.2f}")
        return

    for epoch in range(start_epoch, epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        stats = train_one_epoch(model, train_loader, optimizer, scaler, lr_schedule, epoch, device, args, cfg)
        top1, top5 = evaluate(model, val_loader, device)
        if is_main():
            best = max(best, top1)
            torch.save({"model": model_without_ddp.state_dict(), "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(), "epoch": epoch, "best": best},
                       os.path.join(args.output_dir, "checkpoint.pth"))
            if best == top1:
                torch.save(model_without_ddp.state_dict(), os.path.join(args.output_dir, "best.pth"))
            with open(os.path.join(args.output_dir, "log.jsonl"), "a") as f:
                f.write(json.dumps({"epoch": epoch, **stats, "val_top1": top1, "val_top5": top5}) + "\n")
            print(f"epoch {epoch}: val top1 {top1:.2f} (best {best:.2f}) top5 {top5:.2f}")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
