#!/usr/bin/env python
"""Masked-code pretraining of an EHR transformer (CEHR-BERT / CORE-BEHRT style) with DDP.

Single node:
    torchrun --nproc_per_node=8 train_ddp.py --data /data/ehr/pretrain --out runs/ehr_base
Multi node: see scripts/pretrain_multinode.sh
"""
import argparse
import datetime
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data.pretrain_dataset import ParquetPatientDataset, MLMCollator
from models.attention import EHRTransformerConfig, EHRTransformerForMLM
from utils.gpu_monitor import log_environment, MemoryTracker


def get_args():
    p = argparse.ArgumentParser("EHR transformer pretraining")
    p.add_argument("--data", required=True)
    p.add_argument("--vocab", default=None)
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch_size", type=int, default=64, help="per GPU")
    p.add_argument("--max_len", type=int, default=512)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--min_lr", type=float, default=1e-5)
    p.add_argument("--warmup_steps", type=int, default=2000)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--grad_clip", type=float, default=1.0)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--attn_impl", default="sdpa", choices=["eager", "sdpa", "flash"])
    p.add_argument("--precision", default="bf16", choices=["fp32", "fp16", "bf16"])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--dist_url", default="env://")
    p.add_argument("--resume", default="")
    return p.parse_args()


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        args.rank = int(os.environ["SLURM_PROCID"])
        args.gpu = args.rank % torch.cuda.device_count()
        args.world_size = int(os.environ["SLURM_NTASKS"])
    else:
        print("Not using distributed mode")
        args.distributed = False
        args.rank, args.world_size, args.gpu = 0, 1, 0
        return

    args.distributed = True
    torch.cuda.set_device(args.gpu)
    args.dist_backend = "nccl"
    print("| distributed init (rank {}): {}, gpu {}".format(args.rank, args.dist_url, args.gpu), flush=True)
    dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank,
                            timeout=datetime.timedelta(minutes=60))
    dist.barrier()


def is_main(args):
    return args.rank == 0


def cosine_lr(step, total, args):
    if step < args.warmup_steps:
        return args.lr * step / max(1, args.warmup_steps)
    progress = (step - args.warmup_steps) / max(1, total - args.warmup_steps)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))


def reduce_mean(value, args):
    t = torch.tensor([value], dtype=torch.float32, device="cuda")
    if args.distributed:
        if args.dist_backend == "nccl":
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
        else:
            dist.all_reduce(t)
            t /= args.world_size
    return t.item()


def main():
    args = get_args()
    init_distributed_mode(args)
    device = torch.device("cuda", args.gpu)
    torch.manual_seed(args.seed + args.rank)
    np.random.seed(args.seed + args.rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if is_main(args):
        Path(args.out).mkdir(parents=True, exist_ok=True)
        log_environment(os.path.join(args.out, "env.json"))

    # mixed precision: bf16 needs Ampere or newer
    if args.precision == "bf16" and torch.cuda.get_device_capability()[0] < 8:
        print("bf16 not supported on this GPU, falling back to fp16")
        args.precision = "fp16"
    amp_dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    use_amp = args.precision != "fp32"

    dataset = ParquetPatientDataset(args.data, max_len=args.max_len, vocab_path=args.vocab)
    collator = MLMCollator(dataset.vocab, mask_prob=0.15)
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed) if args.distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                        num_workers=args.num_workers, pin_memory=True, drop_last=True,
                        collate_fn=collator, persistent_workers=True)

    config = EHRTransformerConfig(vocab_size=len(dataset.vocab), hidden_size=args.hidden,
                                  num_layers=args.layers, num_heads=args.heads, max_len=args.max_len,
                                  attn_impl=args.attn_impl)
    model = EHRTransformerForMLM(config)
    model.cuda(args.gpu)
    if args.distributed:
        model = DDP(model, device_ids=[args.gpu], find_unused_parameters=False)
    raw_model = model.module if args.distributed else model
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    decay, no_decay = [], []
    for n, p in raw_model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in n or "bias" in n else decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98), eps=1e-6,
                                  fused=torch.cuda.is_available())
    scaler = torch.cuda.amp.GradScaler(enabled=(args.precision == "fp16"))

    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        raw_model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, step = ckpt["epoch"] + 1, ckpt["step"]

    total_steps = args.epochs * len(loader)
    mem = MemoryTracker(enabled=is_main(args))
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        start_evt.record()
        tokens_seen = 0
        for it, batch in enumerate(loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            lr = cosine_lr(step, total_steps, args)
            for g in optimizer.param_groups:
                g["lr"] = lr

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                out = model(input_ids=batch["input_ids"], ages=batch["ages"], visit_segments=batch["segments"],
                            attention_mask=batch["attention_mask"], labels=batch["labels"])
                loss = out["loss"]

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            step += 1
            tokens_seen += int(batch["attention_mask"].sum())

            if step % args.log_every == 0:
                end_evt.record()
                torch.cuda.synchronize()
                elapsed = start_evt.elapsed_time(end_evt) / 1000.0
                loss_avg = reduce_mean(loss.item(), args)
                if is_main(args):
                    print(json.dumps({"epoch": epoch, "step": step, "lr": lr, "loss": round(loss_avg, 4),
                                      "grad_norm": float(gnorm), "tok/s": int(tokens_seen * args.world_size / elapsed),
                                      **mem.snapshot()}), flush=True)
                start_evt.record()
                tokens_seen = 0

        if is_main(args):
            torch.save({"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(), "epoch": epoch, "step": step, "args": vars(args)},
                       os.path.join(args.out, "checkpoint_{:03d}.pt".format(epoch)))
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
