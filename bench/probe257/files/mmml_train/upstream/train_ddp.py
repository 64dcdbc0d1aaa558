"""Multi-GPU training entry for MMML (text + audio multi-loss fusion) on MOSI/MOSEI/CH-SIMS.

    torchrun --nproc_per_node=4 train_ddp.py --config configs/mosei.yaml

Single GPU also works (no torchrun needed): python train_ddp.py --config configs/mosi.yaml
"""
import argparse
import datetime
import json
import logging
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import get_cosine_schedule_with_warmup

from data.msa_dataset import MSADataset, collate_fn
from models.mmml import MMML
from utils.metrics import eval_regression

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

logger = logging.getLogger("mmml")


def parse_args():
    parser = argparse.ArgumentParser(description="MMML distributed training")
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--resume", type=str, default="", help="checkpoint to resume from")
    parser.add_argument("--seed", type=int, default=None, help="override the seed in the config")
    parser.add_argument("--eval_only", action="store_true")
    return parser.parse_args()


def setup_logging(rank, save_dir):
    level = logging.INFO if rank == 0 else logging.WARNING
    handlers = [logging.StreamHandler()]
    if rank == 0:
        os.makedirs(save_dir, exist_ok=True)
        handlers.append(logging.FileHandler(os.path.join(save_dir, "train.log")))
    logging.basicConfig(level=level, format="%(asctime)s [%(levelname)s] %(message)s", handlers=handlers)


def setup_distributed(args, cfg):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
    args.distributed = args.world_size > 1

    torch.cuda.set_device(args.local_rank)
    args.device = torch.device(cfg["device"], args.local_rank)
    if args.distributed:
        dist.init_process_group(
            backend=cfg["dist"]["backend"],
            init_method=cfg["dist"]["init_method"],
            timeout=datetime.timedelta(minutes=cfg["dist"]["timeout_min"]),
        )
        dist.barrier()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_optimizer(model, cfg):
    no_decay = ["bias", "LayerNorm.weight", "layer_norm.weight"]
    encoder_names = ("text_encoder", "audio_encoder")
    groups = [
        {
            "params": [p for n, p in model.named_parameters()
                       if n.startswith(encoder_names) and not any(nd in n for nd in no_decay)],
            "weight_decay": cfg["optim"]["weight_decay"], "lr": cfg["optim"]["lr"],
        },
        {
            "params": [p for n, p in model.named_parameters()
                       if n.startswith(encoder_names) and any(nd in n for nd in no_decay)],
            "weight_decay": 0.0, "lr": cfg["optim"]["lr"],
        },
        {
            "params": [p for n, p in model.named_parameters() if not n.startswith(encoder_names)],
            "weight_decay": cfg["optim"]["weight_decay"], "lr": cfg["optim"]["lr_head"],
        },
    ]
    if cfg["optim"].get("fused", False) and HAS_APEX:
        return FusedAdam(groups, lr=cfg["optim"]["lr"], adam_w_mode=True)
    return torch.optim.AdamW(groups, lr=cfg["optim"]["lr"], fused=torch.cuda.is_available())


def build_loaders(cfg, args):
    train_set = MSADataset(cfg["data"], split="train")
    valid_set = MSADataset(cfg["data"], split="valid")
    test_set = MSADataset(cfg["data"], split="test")

    train_sampler = DistributedSampler(train_set, shuffle=True) if args.distributed else None
    loader_kwargs = dict(
        batch_size=cfg["train"]["batch_size"],
        num_workers=cfg["data"]["num_workers"],
        pin_memory=cfg["data"]["pin_memory"],
        collate_fn=collate_fn,
    )
    train_loader = DataLoader(train_set, sampler=train_sampler, shuffle=train_sampler is None,
                              drop_last=True, **loader_kwargs)
    valid_loader = DataLoader(valid_set, shuffle=False, **loader_kwargs)
    test_loader = DataLoader(test_set, shuffle=False, **loader_kwargs)
    return train_loader, valid_loader, test_loader, train_sampler


def move_to_device(batch, device):
    return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


@torch.no_grad()
def evaluate(model, loader, args, cfg):
    model.eval()
    preds, labels = [], []
    for batch in loader:
        batch = move_to_device(batch, args.device)
        with autocast(enabled=cfg["train"]["fp16"]):
            out = model(batch)
        preds.append(out["M"].float().view(-1).cpu())
        labels.append(batch["label"].float().view(-1).cpu())
    preds = torch.cat(preds).numpy()
    labels = torch.cat(labels).numpy()
    return eval_regression(preds, labels)


def train_one_epoch(model, loader, optimizer, scheduler, scaler, epoch, args, cfg):
    model.train()
    accum = cfg["train"]["grad_accum"]
    loss_weights = dict(zip(cfg["model"]["multi_loss"], cfg["model"]["loss_weights"]))
    criterion = nn.L1Loss()
    running, n_steps = 0.0, 0
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    optimizer.zero_grad(set_to_none=True)
    for step, batch in enumerate(loader):
        batch = move_to_device(batch, args.device)
        with autocast(enabled=cfg["train"]["fp16"]):
            out = model(batch)
            loss = sum(w * criterion(out[k].view(-1), batch["label"].view(-1)) for k, w in loss_weights.items())
            loss = loss / accum
        scaler.scale(loss).backward()

        if (step + 1) % accum == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["train"]["grad_clip"])
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()

        running += loss.item() * accum
        n_steps += 1
        if args.rank == 0 and step % 50 == 0:
            torch.cuda.synchronize()
            elapsed = time.time() - t0
            mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
            logger.info(f"epoch {epoch} step {step}/{len(loader)} loss {running / n_steps:.4f} "
                        f"lr {scheduler.get_last_lr()[0]:.2e} {elapsed:.1f}s peak_mem {mem_gb:.1f}G")
    return running / max(n_steps, 1)


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    if args.seed is not None:
        cfg["seed"] = args.seed

    setup_distributed(args, cfg)
    setup_logging(args.rank, cfg["train"]["save_dir"])
    set_seed(cfg["seed"] + args.rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    train_loader, valid_loader, test_loader, train_sampler = build_loaders(cfg, args)

    model = MMML(cfg["model"]).to(args.device)
    if cfg["train"].get("compile", False):
        model = torch.compile(model, mode="max-autotune")
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=True)
    raw_model = model.module if args.distributed else model

    optimizer = build_optimizer(raw_model, cfg)
    total_steps = len(train_loader) * cfg["train"]["epochs"] // cfg["train"]["grad_accum"]
    scheduler = get_cosine_schedule_with_warmup(
        optimizer, int(cfg["optim"]["warmup_ratio"] * total_steps), total_steps)
    scaler = GradScaler(enabled=cfg["train"]["fp16"])

    start_epoch, best_valid = 0, -1.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")
        raw_model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_valid = ckpt["epoch"] + 1, ckpt["best_valid"]
        logger.info(f"resumed from {args.resume} (epoch {ckpt['epoch']})")

    if args.eval_only:
        if args.rank == 0:
            logger.info(json.dumps(evaluate(raw_model, test_loader, args, cfg), indent=2))
        return

    for epoch in range(start_epoch, cfg["train"]["epochs"]):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_loss = train_one_epoch(model, train_loader, optimizer, scheduler, scaler, epoch, args, cfg)

        if args.distributed:
            t = torch.tensor([train_loss], device=args.device)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            train_loss = t.item() / args.world_size

        if args.rank == 0 and (epoch + 1) % cfg["train"]["eval_every"] == 0:
            valid_res = evaluate(raw_model, valid_loader, args, cfg)
            test_res = evaluate(raw_model, test_loader, args, cfg)
            logger.info(f"epoch {epoch} train_loss {train_loss:.4f} valid {valid_res} test {test_res}")
            if valid_res["Corr"] > best_valid:
                best_valid = valid_res["Corr"]
                torch.save({
                    "model": raw_model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scaler": scaler.state_dict(),
                    "epoch": epoch,
                    "best_valid": best_valid,
                    "config": cfg,
                }, os.path.join(cfg["train"]["save_dir"], "best.pt"))
                logger.info(f"new best valid corr {best_valid:.4f}, checkpoint saved")
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
