"""SAINT+ on EdNet-KT1, multi-GPU training with DistributedDataParallel.

Launch with scripts/train_ednet_ddp.sh (torchrun, one process per GPU).
Single-GPU debugging: python train_ddp.py --config configs/saint_ednet.yaml --no-ddp
"""
import argparse
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from sklearn.metrics import roc_auc_score
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from ednet_dataset import EdNetDataset, collate_fn
from saint_model import SAINTPlus

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="configs/saint_ednet.yaml")
    parser.add_argument("--no-ddp", action="store_true", help="run a single process on cuda:0")
    parser.add_argument("--resume", type=str, default="")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(backend):
    rank = int(os.environ.get("RANK", 0))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world_size)
    dist.barrier()
    return rank, local_rank, world_size


def is_main(rank):
    return rank == 0


def build_loaders(cfg, rank, world_size, distributed):
    data_cfg = cfg["data"]
    train_set = EdNetDataset(data_cfg["train_path"], max_seq=cfg["model"]["max_seq"], n_skill=cfg["model"]["n_skill"])
    valid_set = EdNetDataset(data_cfg["valid_path"], max_seq=cfg["model"]["max_seq"], n_skill=cfg["model"]["n_skill"])
    if distributed:
        train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
        valid_sampler = DistributedSampler(valid_set, num_replicas=world_size, rank=rank, shuffle=False)
    else:
        train_sampler, valid_sampler = None, None
    train_loader = DataLoader(train_set, batch_size=cfg["train"]["batch_size"], sampler=train_sampler,
                              shuffle=(train_sampler is None), num_workers=data_cfg["num_workers"],
                              pin_memory=True, drop_last=True, collate_fn=collate_fn)
    valid_loader = DataLoader(valid_set, batch_size=cfg["train"]["eval_batch_size"], sampler=valid_sampler,
                              shuffle=False, num_workers=data_cfg["num_workers"],
                              pin_memory=True, collate_fn=collate_fn)
    return train_loader, valid_loader, train_sampler


def build_optimizer(cfg, model):
    opt_cfg = cfg["optim"]
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim == 1 or name.endswith(".bias") or "norm" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [{"params": decay, "weight_decay": opt_cfg["weight_decay"]},
              {"params": no_decay, "weight_decay": 0.0}]
    if opt_cfg.get("fused_adam", False) and HAS_APEX:
        return FusedAdam(groups, lr=opt_cfg["lr"], betas=tuple(opt_cfg["betas"]), eps=opt_cfg["eps"])
    return torch.optim.AdamW(groups, lr=opt_cfg["lr"], betas=tuple(opt_cfg["betas"]), eps=opt_cfg["eps"])


def noam_lambda(warmup, d_model):
    def fn(step):
        step = max(step, 1)
        return (d_model ** -0.5) * min(step ** -0.5, step * warmup ** -1.5)
    return fn


def train_one_epoch(model, loader, optimizer, scheduler, scaler, criterion, local_rank, use_amp, log_every, rank):
    model.train()
    total_loss, n_batches = 0.0, 0
    t0 = time.time()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda(local_rank, non_blocking=True) for k, v in batch.items()}
        optimizer.zero_grad(set_to_none=True)
        with autocast(enabled=use_amp):
            logits = model(batch["exercise"], batch["part"], batch["response"], batch["elapsed"], batch["lag"])
            mask = batch["label_mask"]
            loss = criterion(logits[mask], batch["answered_correctly"][mask].float())
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        total_loss += loss.item()
        n_batches += 1
        if is_main(rank) and step % log_every == 0:
            elapsed = time.time() - t0
            print(f"step {step:6d} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e} "
                  f"{elapsed / max(step, 1) * 1000:.0f} ms/step")
    return total_loss / max(n_batches, 1)


@torch.no_grad()
def evaluate(model, loader, use_amp, world_size, distributed):
    model.eval()
    preds, labels = [], []
    for batch in loader:
        batch = {k: v.to("cuda", non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            logits = model(batch["exercise"], batch["part"], batch["response"], batch["elapsed"], batch["lag"])
        mask = batch["label_mask"]
        preds.append(torch.sigmoid(logits[mask].float()))
        labels.append(batch["answered_correctly"][mask].float())
    preds = torch.cat(preds)
    labels = torch.cat(labels)
    if distributed:
        # gather variable-length predictions from all ranks
        sizes = [torch.zeros(1, dtype=torch.long, device=preds.device) for _ in range(world_size)]
        dist.all_gather(sizes, torch.tensor([preds.numel()], device=preds.device))
        max_size = int(max(s.item() for s in sizes))
        pad = max_size - preds.numel()
        preds_p = torch.cat([preds, preds.new_zeros(pad)])
        labels_p = torch.cat([labels, labels.new_zeros(pad)])
        all_preds = [torch.zeros_like(preds_p) for _ in range(world_size)]
        all_labels = [torch.zeros_like(labels_p) for _ in range(world_size)]
        dist.all_gather(all_preds, preds_p)
        dist.all_gather(all_labels, labels_p)
        preds = torch.cat([p[:int(s.item())] for p, s in zip(all_preds, sizes)])
        labels = torch.cat([l[:int(s.item())] for l, s in zip(all_labels, sizes)])
    return roc_auc_score(labels.cpu().numpy(), preds.cpu().numpy())


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    distributed = not args.no_ddp and int(os.environ.get("WORLD_SIZE", 1)) > 1
    if distributed:
        backend = cfg.get("dist", {}).get("backend", "nccl")
        rank, local_rank, world_size = setup_distributed(backend)
    else:
        rank, local_rank, world_size = 0, 0, 1
        torch.cuda.set_device(0)
    set_seed(args.seed + rank)

    if is_main(rank):
        print(f"world_size={world_size} device={torch.cuda.get_device_name(local_rank)} amp={cfg['train']['amp']}")

    train_loader, valid_loader, train_sampler = build_loaders(cfg, rank, world_size, distributed)

    mcfg = cfg["model"]
    model = SAINTPlus(n_skill=mcfg["n_skill"], n_part=mcfg["n_part"], max_seq=mcfg["max_seq"],
                      d_model=mcfg["d_model"], n_heads=mcfg["n_heads"], n_layers=mcfg["n_layers"],
                      dropout=mcfg["dropout"]).cuda(local_rank)
    if distributed:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    optimizer = build_optimizer(cfg, model)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam_lambda(cfg["optim"]["warmup"], mcfg["d_model"]))
    scaler = GradScaler(enabled=cfg["train"]["amp"])
    criterion = nn.BCEWithLogitsLoss()

    start_epoch, best_auc = 0, 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        (model.module if distributed else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_auc = ckpt["epoch"] + 1, ckpt["best_auc"]

    for epoch in range(start_epoch, cfg["train"]["epochs"]):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        train_loss = train_one_epoch(model, train_loader, optimizer, scheduler, scaler, criterion, local_rank,
                                     cfg["train"]["amp"], cfg["train"]["log_every"], rank)
        torch.cuda.synchronize()
        auc = evaluate(model, valid_loader, cfg["train"]["amp"], world_size, distributed)
        if is_main(rank):
            mem = torch.cuda.max_memory_allocated(local_rank) / 1024 ** 3
            print(f"epoch {epoch} train_loss {train_loss:.4f} valid_auc {auc:.4f} "
                  f"time {time.time() - t0:.0f}s peak_mem {mem:.1f}GB")
            if auc > best_auc:
                best_auc = auc
                os.makedirs(cfg["train"]["out_dir"], exist_ok=True)
                torch.save({"model": (model.module if distributed else model).state_dict(),
                            "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                            "epoch": epoch, "best_auc": best_auc},
                           os.path.join(cfg["train"]["out_dir"], "saint_best.pt"))
        torch.cuda.reset_peak_memory_stats(local_rank)

    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
