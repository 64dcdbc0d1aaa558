# Copyright (c) 2024 The SeqRec Authors. Licensed under the Apache License, Version 2.0.
"""
Multi-GPU trainer for the sequential recommender.

    python -m seqrec.train --gin-config configs/ml-20m/seqrec-large.gin --world-size 8
"""
import argparse
import logging
import os
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from seqrec.data.dataset import SequenceDataset, collate_jagged
from seqrec.modeling.model import SeqRecModel
from seqrec.ops.jagged import KernelBackend, default_backend

logger = logging.getLogger("seqrec.train")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="tmp/ml-20m")
    p.add_argument("--world-size", type=int, default=torch.cuda.device_count())
    p.add_argument("--master-port", type=int, default=12355)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--max-seq-len", type=int, default=200)
    p.add_argument("--embedding-dim", type=int, default=256)
    p.add_argument("--num-blocks", type=int, default=8)
    p.add_argument("--num-heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=101)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--backend", choices=[b.value for b in KernelBackend], default=None)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--eval-interval", type=int, default=5)
    return p.parse_args()


def setup(rank: int, world_size: int, master_port: int) -> None:
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(master_port)
    # initialize the process group
    dist.init_process_group("nccl", rank=rank, world_size=world_size, timeout=timedelta(minutes=30))


def cleanup() -> None:
    dist.destroy_process_group()


def seed_everything(seed: int, rank: int) -> None:
    random.seed(seed + rank)
    np.random.seed(seed + rank)
    torch.manual_seed(seed + rank)
    torch.cuda.manual_seed_all(seed + rank)


@torch.no_grad()
def evaluate(model, loader, device, k=(10, 50)):
    model.eval()
    hits = {kk: torch.zeros((), device=device) for kk in k}
    total = torch.zeros((), device=device)
    for batch in loader:
        batch = {name: t.to(device, non_blocking=True) for name, t in batch.items()}
        scores = model.module.score_all_items(batch)
        topk = scores.topk(max(k), dim=-1).indices
        target = batch["target_ids"].unsqueeze(-1)
        for kk in k:
            hits[kk] += (topk[:, :kk] == target).any(dim=-1).sum()
        total += target.shape[0]
    for kk in k:
        dist.all_reduce(hits[kk])
    dist.all_reduce(total)
    model.train()
    return {f"hr@{kk}": (hits[kk] / total).item() for kk in k}


def train_fn(rank: int, world_size: int, args) -> None:
    setup(rank, world_size, args.master_port)
    torch.cuda.set_device(rank)
    device = torch.device(f"cuda:{rank}")
    seed_everything(args.seed, rank)
    backend = KernelBackend(args.backend) if args.backend else default_backend()
    if rank == 0:
        logger.info("world_size=%d kernel backend=%s", world_size, backend.value)

    train_ds = SequenceDataset(args.data_dir, split="train", max_seq_len=args.max_seq_len)
    eval_ds = SequenceDataset(args.data_dir, split="eval", max_seq_len=args.max_seq_len)
    train_sampler = DistributedSampler(train_ds, num_replicas=world_size, rank=rank, shuffle=True)
    eval_sampler = DistributedSampler(eval_ds, num_replicas=world_size, rank=rank, shuffle=False)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=4, pin_memory=True, collate_fn=collate_jagged, drop_last=True)
    eval_loader = DataLoader(eval_ds, batch_size=args.batch_size, sampler=eval_sampler,
                             num_workers=2, pin_memory=True, collate_fn=collate_jagged)

    model = SeqRecModel(
        num_items=train_ds.num_items,
        embedding_dim=args.embedding_dim,
        num_blocks=args.num_blocks,
        num_heads=args.num_heads,
        max_seq_len=args.max_seq_len,
        kernel_backend=backend,
    ).to(device)
    model = DDP(model, device_ids=[rank], broadcast_buffers=False, find_unused_parameters=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.0, fused=True)

    step = 0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        t0 = time.time()
        for batch in train_loader:
            batch = {name: t.to(device, non_blocking=True) for name, t in batch.items()}
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
                torch.cuda.nvtx.range_push("forward")
                loss = model(batch)
                torch.cuda.nvtx.range_pop()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if rank == 0 and step % 100 == 0:
                mem = torch.cuda.max_memory_allocated() / 2**30
                logger.info("epoch %d step %d loss %.4f (%.1fs, %.2f GiB)", epoch, step, loss.item(), time.time() - t0, mem)
        if epoch % args.eval_interval == 0:
            metrics = evaluate(model, eval_loader, device)
            if rank == 0:
                logger.info("epoch %d eval %s", epoch, metrics)
                torch.save(model.module.state_dict(), os.path.join(args.data_dir, f"ckpt_ep{epoch}.pt"))
        dist.barrier()
    cleanup()


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    world_size = args.world_size
    if world_size < 1:
        raise SystemExit("no GPU found")
    mp.spawn(train_fn, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
