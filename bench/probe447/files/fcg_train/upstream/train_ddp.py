#!/usr/bin/env python
"""
Distributed training of FCG graph classifiers.

Single GPU:
    python train_ddp.py --config configs/gin_fcg.yaml
Multi GPU (one node):
    torchrun --standalone --nproc_per_node=4 train_ddp.py --config configs/gin_fcg.yaml
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from sklearn.metrics import f1_score, roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.loader import DataLoader

from data.fcg_dataset import FCGDataset, NODE_DIM, class_weights
from models.gnn import build_model
from utils.misc import AverageMeter, get_logger, gpu_mem_report, set_seed

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--resume", default="")
    p.add_argument("--eval-only", action="store_true")
    p.add_argument("--opts", nargs="*", default=[], help="key=value overrides, e.g. optim.lr=3e-4")
    return p.parse_args()


def apply_overrides(cfg, opts):
    for kv in opts:
        k, v = kv.split("=", 1)
        node = cfg
        keys = k.split(".")
        for kk in keys[:-1]:
            node = node[kk]
        node[keys[-1]] = yaml.safe_load(v)
    return cfg


def init_distributed(cfg):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend=cfg.get("dist_backend", "nccl"), init_method="env://")
        dist.barrier()
        device = torch.device(f"cuda:{local_rank}")
        return True, rank, world_size, local_rank, device
    device = torch.device(cfg.get("device", "cuda") if torch.cuda.is_available() else "cpu")
    return False, 0, 1, 0, device


def pick_amp_dtype(cfg):
    want = cfg.get("amp_dtype", "auto")
    if want == "bf16":
        return torch.bfloat16
    if want == "fp16":
        return torch.float16
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def build_optimizer(cfg, model):
    o = cfg["optim"]
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim == 1 or n.endswith(".bias") else decay).append(p)
    groups = [{"params": decay, "weight_decay": o["weight_decay"]},
              {"params": no_decay, "weight_decay": 0.0}]
    if o.get("fused", False) and HAS_APEX:
        return FusedAdam(groups, lr=o["lr"])  # apex FusedAdam defaults to AdamW mode
    return torch.optim.AdamW(groups, lr=o["lr"])


def cosine_lr(epoch, step, steps_per_epoch, cfg):
    o = cfg["optim"]
    t = epoch + step / max(1, steps_per_epoch)
    if t < o["warmup_epochs"]:
        return o["lr"] * t / o["warmup_epochs"]
    prog = (t - o["warmup_epochs"]) / max(1e-8, o["epochs"] - o["warmup_epochs"])
    return o["lr"] * 0.5 * (1.0 + math.cos(math.pi * prog))


def reduce_tensor(t, world_size):
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def gather_predictions(scores, labels, device, distributed):
    """Collect per-rank predictions on every rank for AUC / F1."""
    if not distributed:
        return scores, labels
    # NCCL can only all_gather device tensors; gloo needs host tensors
    comm_device = device if dist.get_backend() == "nccl" else torch.device("cpu")
    n = torch.tensor([scores.shape[0]], device=comm_device)
    sizes = [torch.zeros_like(n) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, n)
    max_n = int(max(s.item() for s in sizes))
    pad_s = torch.zeros((max_n,) + tuple(scores.shape[1:]), device=comm_device, dtype=scores.dtype)
    pad_l = torch.full((max_n,), -1, device=comm_device, dtype=labels.dtype)
    pad_s[: scores.shape[0]] = scores.to(comm_device)
    pad_l[: labels.shape[0]] = labels.to(comm_device)
    all_s = [torch.zeros_like(pad_s) for _ in sizes]
    all_l = [torch.zeros_like(pad_l) for _ in sizes]
    dist.all_gather(all_s, pad_s)
    dist.all_gather(all_l, pad_l)
    s = torch.cat([a[: int(k.item())] for a, k in zip(all_s, sizes)])
    l = torch.cat([a[: int(k.item())] for a, k in zip(all_l, sizes)])
    return s, l


@torch.no_grad()
def evaluate(model, loader, device, distributed, use_amp, amp_dtype, num_classes):
    model.eval()
    scores, labels = [], []
    for data in loader:
        data = data.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
            logits = model(data)
        scores.append(F.softmax(logits.float(), dim=-1))
        labels.append(data.y.view(-1))
    s, l = gather_predictions(torch.cat(scores), torch.cat(labels), device, distributed)
    s, l = s.cpu().numpy(), l.cpu().numpy()
    pred = s.argmax(-1)
    out = {"acc": float((pred == l).mean()), "macro_f1": float(f1_score(l, pred, average="macro"))}
    if num_classes == 2:
        out["auc"] = float(roc_auc_score(l, s[:, 1]))
    return out


def main():
    args = parse_args()
    with open(args.config) as fh:
        cfg = apply_overrides(yaml.safe_load(fh), args.opts)

    distributed, rank, world_size, local_rank, device = init_distributed(cfg)
    is_main = rank == 0
    logger = get_logger(cfg["log"]["dir"], is_main)
    set_seed(cfg["seed"] + rank)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    d = cfg["data"]
    train_ds = FCGDataset(d["root"], "train", d["task"], d["max_nodes"])
    val_ds = FCGDataset(d["root"], "val", d["task"], d["max_nodes"])
    num_classes = train_ds.num_classes_task

    train_sampler = DistributedSampler(train_ds, shuffle=True) if distributed else None
    val_sampler = DistributedSampler(val_ds, shuffle=False) if distributed else None
    train_loader = DataLoader(train_ds, batch_size=d["batch_size"], shuffle=train_sampler is None,
                              sampler=train_sampler, num_workers=d["num_workers"],
                              pin_memory=d.get("pin_memory", True), persistent_workers=d["num_workers"] > 0)
    val_loader = DataLoader(val_ds, batch_size=d["batch_size"], shuffle=False, sampler=val_sampler,
                            num_workers=d["num_workers"], pin_memory=d.get("pin_memory", True))

    model = build_model(cfg, NODE_DIM, num_classes, api_vocab=train_ds.api_vocab_size).to(device)
    if distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    if cfg.get("compile", False):
        model = torch.compile(model)

    optimizer = build_optimizer(cfg, model)
    use_amp = bool(cfg.get("amp", True))
    amp_dtype = pick_amp_dtype(cfg)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)
    weights = class_weights(train_ds).to(device)
    criterion = nn.CrossEntropyLoss(weight=weights)

    start_epoch, best = 0, -1.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        (model.module if distributed else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best = ckpt["epoch"] + 1, ckpt.get("best", -1.0)
        logger.info(f"resumed from {args.resume} (epoch {ckpt['epoch']})")

    if args.eval_only:
        metrics = evaluate(model, val_loader, device, distributed, use_amp, amp_dtype, num_classes)
        logger.info(json.dumps(metrics))
        return

    logger.info(f"world_size={world_size} device={device} amp={use_amp} ({amp_dtype}) apex_fused={HAS_APEX}")
    steps_per_epoch = len(train_loader)
    for epoch in range(start_epoch, cfg["optim"]["epochs"]):
        if distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        loss_m, t_m = AverageMeter(), AverageMeter()
        torch.cuda.synchronize()
        t_epoch = time.time()
        for step, data in enumerate(train_loader):
            t0 = time.time()
            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(epoch, step, steps_per_epoch, cfg)
            data = data.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
                logits = model(data)
                loss = criterion(logits.float(), data.y.view(-1))
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), cfg["optim"]["grad_clip"])
            scaler.step(optimizer)
            scaler.update()

            if distributed:
                loss = reduce_tensor(loss.detach(), world_size)
            loss_m.update(loss.item(), data.num_graphs)
            t_m.update(time.time() - t0)
            if is_main and step % cfg["log"]["every"] == 0:
                logger.info(f"ep {epoch} [{step}/{steps_per_epoch}] loss {loss_m.avg:.4f} "
                            f"lr {optimizer.param_groups[0]['lr']:.2e} {t_m.avg * 1000:.0f}ms/it "
                            f"mem {torch.cuda.max_memory_allocated(device) / 2 ** 30:.2f}GB")
        torch.cuda.synchronize(device)
        epoch_time = time.time() - t_epoch

        metrics = evaluate(model, val_loader, device, distributed, use_amp, amp_dtype, num_classes)
        score = metrics.get("auc", metrics["macro_f1"])
        if is_main:
            logger.info(f"epoch {epoch} done in {epoch_time:.1f}s val {json.dumps(metrics)} | {gpu_mem_report()}")
            state = {"model": (model.module if distributed else model).state_dict(),
                     "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                     "epoch": epoch, "best": max(best, score), "cfg": cfg}
            os.makedirs(cfg["log"]["dir"], exist_ok=True)
            if score > best:
                torch.save(state, os.path.join(cfg["log"]["dir"], "best.pt"))
            if (epoch + 1) % cfg["log"]["save_every"] == 0:
                torch.save(state, os.path.join(cfg["log"]["dir"], f"epoch_{epoch}.pt"))
        best = max(best, score)
        torch.cuda.empty_cache()

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
