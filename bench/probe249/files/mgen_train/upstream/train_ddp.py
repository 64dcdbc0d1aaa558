# -*- coding: utf-8 -*-
"""Multi-GPU trainer for the attribute-conditioned symbolic music generator.

Launch with torch.distributed.launch (one process per GPU):

    python -m torch.distributed.launch --nproc_per_node=8 train_ddp.py \
        --data_dir data/remi_bin --save_dir checkpoints/attr2music --fp16 --opt_level O1

Mixed precision uses NVIDIA apex (amp O1/O2) and apex's FusedAdam; pure fp32 runs without apex.
"""
import argparse
import json
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

try:
    from apex import amp
    from apex.optimizers import FusedAdam
    APEX_AVAILABLE = True
except ImportError:
    amp = None
    FusedAdam = None
    APEX_AVAILABLE = False

from musegen.data import RemiTokenDataset, collate_remi
from musegen.model import AttributeConditionedTransformer
from musegen.utils import AverageMeter, get_cosine_schedule_with_warmup, save_checkpoint

logger = logging.getLogger("train_ddp")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--save_dir", type=str, required=True)
    parser.add_argument("--vocab", type=str, default="data/remi_bin/dict.txt")
    parser.add_argument("--n_layers", type=int, default=16)
    parser.add_argument("--d_model", type=int, default=1024)
    parser.add_argument("--n_heads", type=int, default=16)
    parser.add_argument("--max_len", type=int, default=5120)
    parser.add_argument("--n_attributes", type=int, default=15)
    parser.add_argument("--batch_size", type=int, default=4, help="per-GPU batch size")
    parser.add_argument("--grad_accum", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--warmup_steps", type=int, default=4000)
    parser.add_argument("--max_steps", type=int, default=200000)
    parser.add_argument("--clip_norm", type=float, default=1.0)
    parser.add_argument("--log_every", type=int, default=50)
    parser.add_argument("--save_every", type=int, default=5000)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--fp16", action="store_true", help="use apex amp mixed precision")
    parser.add_argument("--opt_level", type=str, default="O1", choices=["O0", "O1", "O2", "O3"])
    parser.add_argument("--resume", type=str, default=None)
    # set by torch.distributed.launch
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(args):
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.distributed = args.world_size > 1
    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        dist.init_process_group(backend="nccl", init_method="env://")
        args.rank = dist.get_rank()
    else:
        args.rank = 0
    args.device = torch.device("cuda", args.local_rank)
    return args


def is_main(args):
    return args.rank == 0


def reduce_mean(value, args):
    """Average a python float over all ranks (for logging only)."""
    if not args.distributed:
        return value
    t = torch.tensor([value], dtype=torch.float32)
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.item() / args.world_size


def build_optimizer(model, args):
    no_decay = ("bias", "layer_norm.weight", "ln.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)],
         "weight_decay": 0.0},
    ]
    if args.fp16:
        if not APEX_AVAILABLE:
            raise RuntimeError("--fp16 requires NVIDIA apex (https://github.com/NVIDIA/apex)")
        return FusedAdam(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6, adam_w_mode=True)
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6)


def evaluate(model, loader, args):
    model.eval()
    meter = AverageMeter()
    with torch.no_grad():
        for batch in loader:
            tokens = batch["tokens"].to(args.device, non_blocking=True)
            attrs = batch["attributes"].to(args.device, non_blocking=True)
            logits = model(tokens[:, :-1], attrs)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1),
                                   ignore_index=0)
            meter.update(loss.item(), tokens.size(0))
    model.train()
    return reduce_mean(meter.avg, args)


def main():
    args = parse_args()
    args = setup_distributed(args)
    set_seed(args.seed + args.rank)
    torch.backends.cudnn.benchmark = True

    logging.basicConfig(level=logging.INFO if is_main(args) else logging.WARN,
                        format="%(asctime)s | %(levelname)s | %(message)s")
    if is_main(args):
        os.makedirs(args.save_dir, exist_ok=True)
        with open(os.path.join(args.save_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2, default=str)
        logger.info("world size %d, fp16=%s opt_level=%s", args.world_size, args.fp16, args.opt_level)

    # ---------------- data ----------------
    train_set = RemiTokenDataset(args.data_dir, split="train", max_len=args.max_len)
    valid_set = RemiTokenDataset(args.data_dir, split="valid", max_len=args.max_len)
    train_sampler = DistributedSampler(train_set, shuffle=True) if args.distributed else None
    valid_sampler = DistributedSampler(valid_set, shuffle=False) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=(train_sampler is None), num_workers=args.num_workers,
                              collate_fn=collate_remi, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, sampler=valid_sampler,
                              num_workers=args.num_workers, collate_fn=collate_remi)

    # ---------------- model ----------------
    model = AttributeConditionedTransformer(vocab_path=args.vocab, n_layers=args.n_layers, d_model=args.d_model,
                                            n_heads=args.n_heads, max_len=args.max_len,
                                            n_attributes=args.n_attributes)
    model.cuda(args.local_rank)
    optimizer = build_optimizer(model, args)

    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale="dynamic")

    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)

    step = 0
    if args.resume is not None:
        ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        if args.fp16 and "amp" in ckpt:
            amp.load_state_dict(ckpt["amp"])
        step = ckpt["step"]
        logger.info("resumed from %s at step %d", args.resume, step)

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False)

    # ---------------- train ----------------
    model.train()
    loss_meter = AverageMeter()
    epoch = 0
    t0 = time.time()
    while step < args.max_steps:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for i, batch in enumerate(train_loader):
            tokens = batch["tokens"].to(args.device, non_blocking=True)
            attrs = batch["attributes"].to(args.device, non_blocking=True)

            logits = model(tokens[:, :-1], attrs)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1),
                                   ignore_index=0) / args.grad_accum

            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            loss_meter.update(loss.item() * args.grad_accum, tokens.size(0))

            if (i + 1) % args.grad_accum != 0:
                continue

            if args.fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip_norm)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1

            if step % args.log_every == 0:
                torch.cuda.synchronize()
                elapsed = time.time() - t0
                avg = reduce_mean(loss_meter.avg, args)
                if is_main(args):
                    mem = torch.cuda.max_memory_allocated() / 2**30
                    logger.info("step %d | loss %.4f | ppl %.2f | lr %.2e | %.2f s/it | mem %.1f GiB",
                                step, avg, math.exp(min(avg, 20)), scheduler.get_last_lr()[0],
                                elapsed / args.log_every, mem)
                loss_meter.reset()
                t0 = time.time()

            if step % args.save_every == 0:
                valid_loss = evaluate(model, valid_loader, args)
                if is_main(args):
                    logger.info("step %d | valid loss %.4f", step, valid_loss)
                    state = {
                        "model": (model.module if hasattr(model, "module") else model).state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(),
                        "step": step,
                        "args": vars(args),
                    }
                    if args.fp16:
                        state["amp"] = amp.state_dict()
                    save_checkpoint(state, os.path.join(args.save_dir, f"checkpoint_{step}.pt"))
                if args.distributed:
                    dist.barrier()

            if step >= args.max_steps:
                break
        epoch += 1

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
