#!/usr/bin/env python
"""
Multi-GPU (DistributedDataParallel) fine-tuning of XLS-R + SLS / AASIST back-ends
for speech deepfake detection (ASVspoof 2019 LA train -> 2021 LA/DF, In-the-Wild).

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=4 train_ddp.py --config conf/xlsr_sls.yaml --amp

Single-GPU runs also work (``python train_ddp.py ...``); the script falls back to
a world size of 1.
"""
import argparse
import json
import math
import os
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data_utils_SSL import Dataset_ASVspoof2019_train, genSpoof_list
from model import build_model


def get_args():
    p = argparse.ArgumentParser(description="DDP training for SSL-based spoofing CMs")
    p.add_argument("--config", type=str, required=True)
    p.add_argument("--database_path", type=str, default="/data/ASVspoof2019/LA/")
    p.add_argument("--protocols_path", type=str, default="/data/ASVspoof2019/LA/")
    p.add_argument("--out_dir", type=str, default="exp/xlsr_sls")
    p.add_argument("--batch_size", type=int, default=8, help="per-GPU batch size")
    p.add_argument("--num_epochs", type=int, default=50)
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--weight_decay", type=float, default=1e-4)
    p.add_argument("--grad_clip", type=float, default=5.0)
    p.add_argument("--accum_steps", type=int, default=1)
    p.add_argument("--num_workers", type=int, default=6)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16) training")
    p.add_argument("--resume", type=str, default=None)
    p.add_argument("--dist-backend", dest="dist_backend", type=str, default="nccl")
    p.add_argument("--dist-timeout-min", dest="dist_timeout_min", type=int, default=30)
    p.add_argument("--log_every", type=int, default=50)
    return p.parse_args()


def init_distributed(args):
    """Initialise torch.distributed from the torchrun environment."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0

    args.distributed = args.world_size > 1
    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        # surface NCCL errors as exceptions instead of hanging forever
        os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
        dist.init_process_group(
            backend=args.dist_backend,
            init_method="env://",
            world_size=args.world_size,
            rank=args.rank,
            timeout=timedelta(minutes=args.dist_timeout_min),
        )
        dist.barrier()
    return torch.device("cuda", args.local_rank)


def is_main(args):
    return args.rank == 0


def seed_everything(seed, rank):
    s = seed + rank
    random.seed(s)
    np.random.seed(s)
    torch.manual_seed(s)
    torch.cuda.manual_seed(s)


def reduce_mean(value, device, world_size):
    t = torch.tensor([value], dtype=torch.float32, device=device)
    if world_size > 1:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= world_size
    return t.item()


def build_loaders(args, cfg):
    prefix_2019 = "ASVspoof2019.LA"
    d_label_trn, file_train = genSpoof_list(
        dir_meta=os.path.join(args.protocols_path,
                              "ASVspoof2019_LA_cm_protocols/{}.cm.train.trn.txt".format(prefix_2019)),
        is_train=True, is_eval=False)
    d_label_dev, file_dev = genSpoof_list(
        dir_meta=os.path.join(args.protocols_path,
                              "ASVspoof2019_LA_cm_protocols/{}.cm.dev.trl.txt".format(prefix_2019)),
        is_train=False, is_eval=False)

    rb = argparse.Namespace(**cfg.get("rawboost", {}))
    train_set = Dataset_ASVspoof2019_train(
        rb, list_IDs=file_train, labels=d_label_trn,
        base_dir=os.path.join(args.database_path, "ASVspoof2019_LA_train/"),
        algo=cfg.get("rawboost_algo", 3))
    dev_set = Dataset_ASVspoof2019_train(
        rb, list_IDs=file_dev, labels=d_label_dev,
        base_dir=os.path.join(args.database_path, "ASVspoof2019_LA_dev/"),
        algo=0)

    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True) if args.distributed else None
    dev_sampler = DistributedSampler(dev_set, shuffle=False) if args.distributed else None

    train_loader = DataLoader(train_set, batch_size=args.batch_size,
                              shuffle=(train_sampler is None), sampler=train_sampler,
                              num_workers=args.num_workers, pin_memory=True,
                              drop_last=True, persistent_workers=args.num_workers > 0)
    dev_loader = DataLoader(dev_set, batch_size=args.batch_size * 2,
                            shuffle=False, sampler=dev_sampler,
                            num_workers=args.num_workers, pin_memory=True)
    return train_loader, dev_loader, train_sampler


def train_one_epoch(epoch, model, loader, optimizer, scheduler, scaler, criterion, device, args):
    model.train()
    running, n_seen = 0.0, 0
    t0 = time.time()
    optimizer.zero_grad(set_to_none=True)
    for step, (batch_x, batch_y) in enumerate(loader):
        batch_x = batch_x.to(device, non_blocking=True)
        batch_y = batch_y.view(-1).long().to(device, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=args.amp):
            out = model(batch_x)
            loss = criterion(out, batch_y) / args.accum_steps

        scaler.scale(loss).backward()
        if (step + 1) % args.accum_steps == 0:
            if args.grad_clip > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if scheduler is not None:
                scheduler.step()

        running += loss.item() * args.accum_steps * batch_x.size(0)
        n_seen += batch_x.size(0)

        if is_main(args) and step % args.log_every == 0:
            torch.cuda.synchronize()
            elapsed = time.time() - t0
            mem = torch.cuda.max_memory_allocated() / 2 ** 30
            print("ep {:03d} it {:05d} loss {:.4f} lr {:.2e} {:.1f} utt/s mem {:.1f}G".format(
                epoch, step, running / max(n_seen, 1), optimizer.param_groups[0]["lr"],
                n_seen * args.world_size / max(elapsed, 1e-6), mem), flush=True)

    return reduce_mean(running / max(n_seen, 1), device, args.world_size)


@torch.no_grad()
def validate(model, loader, criterion, device, args):
    model.eval()
    tot_loss, tot_n, correct = 0.0, 0, 0
    for batch_x, batch_y in loader:
        batch_x = batch_x.to(device, non_blocking=True)
        batch_y = batch_y.view(-1).long().to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.amp):  # same precision as training
            out = model(batch_x)
            loss = criterion(out, batch_y)
        tot_loss += loss.item() * batch_x.size(0)
        tot_n += batch_x.size(0)
        correct += (out.argmax(dim=1) == batch_y).sum().item()

    stats = torch.tensor([tot_loss, tot_n, correct], dtype=torch.float64, device=device)
    if args.world_size > 1:
        dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    tot_loss, tot_n, correct = stats.tolist()
    return tot_loss / max(tot_n, 1), 100.0 * correct / max(tot_n, 1)


def save_checkpoint(path, model, optimizer, scaler, epoch, best):
    state = {
        "model": model.module.state_dict() if hasattr(model, "module") else model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "best": best,
    }
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    device = init_distributed(args)
    seed_everything(args.seed, args.rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if is_main(args):
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)

    model_args = argparse.Namespace(**cfg.get("model", {}))
    model = build_model(model_args, device).to(device)
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=True)

    train_loader, dev_loader, train_sampler = build_loaders(args, cfg)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    steps_per_epoch = math.ceil(len(train_loader) / args.accum_steps)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr * 10, total_steps=steps_per_epoch * args.num_epochs,
        pct_start=0.1, anneal_strategy="cos")
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    weight = torch.tensor([0.1, 0.9], device=device)
    criterion = nn.CrossEntropyLoss(weight=weight)

    start_epoch, best_loss = 0, float("inf")
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        (model.module if hasattr(model, "module") else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_loss = ckpt["epoch"] + 1, ckpt["best"]
        if is_main(args):
            print("resumed from {} (epoch {})".format(args.resume, ckpt["epoch"]))

    for epoch in range(start_epoch, args.num_epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        tr_loss = train_one_epoch(epoch, model, train_loader, optimizer, scheduler,
                                  scaler, criterion, device, args)
        dev_loss, dev_acc = validate(model, dev_loader, criterion, device, args)

        if is_main(args):
            print("== epoch {:03d} train {:.4f} dev {:.4f} acc {:.2f}%".format(
                epoch, tr_loss, dev_loss, dev_acc), flush=True)
            save_checkpoint(os.path.join(args.out_dir, "last.pth"), model, optimizer, scaler, epoch, best_loss)
            if dev_loss < best_loss:
                best_loss = dev_loss
                save_checkpoint(os.path.join(args.out_dir, "best.pth"), model, optimizer, scaler, epoch, best_loss)
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
