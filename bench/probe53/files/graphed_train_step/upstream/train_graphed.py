#!/usr/bin/env python3
"""Encoder classifier training with CUDA-graph capture of the whole step (MLPerf-style).

--graph-mode full     capture forward + backward + clip + optimizer.step once, replay every iteration
--graph-mode partial  only graph the encoder stack with make_graphed_callables (loss/optimizer eager)
--graph-mode none     plain eager training (for A/B)

Static shapes are required: the loader drops the last batch and pads to --seq-len.
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from apex.optimizers import FusedLAMB
from apex.contrib.clip_grad import clip_grad_norm_

from data import build_dataloader
from model import EncoderClassifier


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--warmup-iters", type=int, default=11, help="eager iterations on a side stream before capture")
    p.add_argument("--optimizer", choices=["lamb", "adamw"], default="lamb")
    p.add_argument("--graph-mode", choices=["full", "partial", "none"], default="full")
    p.add_argument("--amp", action="store_true")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def init_distributed():
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        return True, local_rank
    return False, 0


def lr_at(step, total, base_lr, warmup=0.06):
    w = int(total * warmup)
    if step < w:
        return base_lr * step / max(1, w)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * (step - w) / max(1, total - w)))


def build_optimizer(model, args):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 or n.endswith(".bias") else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if args.optimizer == "lamb":
        return FusedLAMB(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-6, max_grad_norm=args.max_grad_norm)
    # lr must live in a tensor so a captured optimizer.step() sees schedule updates
    return torch.optim.AdamW(groups, lr=torch.tensor(args.lr), capturable=True, foreach=True)


def main():
    args = parse_args()
    distributed, local_rank = init_distributed()
    rank = dist.get_rank() if distributed else 0
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed + rank)

    loader = build_dataloader(args.data, args.batch_size, args.seq_len, drop_last=True,
                              distributed=distributed, num_workers=6, pin_memory=True)
    model = EncoderClassifier(vocab_size=32000, d_model=768, n_layers=12, n_heads=12, n_classes=2).to(device)

    if distributed:
        # static bucket views keep gradient addresses stable for graph replay
        model = DDP(model, device_ids=[local_rank], gradient_as_bucket_view=True, bucket_cap_mb=200)

    optimizer = build_optimizer(model, args)
    lr_is_tensor = isinstance(optimizer.param_groups[0]["lr"], torch.Tensor)

    static_input = torch.zeros(args.batch_size, args.seq_len, dtype=torch.long, device=device)
    static_mask = torch.ones(args.batch_size, args.seq_len, dtype=torch.bool, device=device)
    static_target = torch.zeros(args.batch_size, dtype=torch.long, device=device)

    inner = model.module if distributed else model
    if args.graph_mode == "partial":
        sample_h = torch.randn(args.batch_size, args.seq_len, 768, device=device, requires_grad=True)
        inner.encoder = torch.cuda.make_graphed_callables(inner.encoder, (sample_h, static_mask))

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.amp):
            logits = model(static_input, static_mask)
            loss = F.cross_entropy(logits.float(), static_target)
        loss.backward()
        clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        return loss.detach()

    graph, static_loss = None, None
    if args.graph_mode == "full":
        # warm up on a side stream so autograd / DDP / optimizer state is initialised outside capture
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(args.warmup_iters):
                optimizer.zero_grad(set_to_none=True)
                step()
        torch.cuda.current_stream().wait_stream(side)

        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = step()

    total_steps = args.epochs * len(loader)
    global_step = 0
    for epoch in range(args.epochs):
        if distributed:
            loader.sampler.set_epoch(epoch)
        model.train()
        t0 = time.perf_counter()
        for i, batch in enumerate(loader):
            lr = lr_at(global_step, total_steps, args.lr)
            for g in optimizer.param_groups:
                if lr_is_tensor:
                    g["lr"].fill_(lr)
                else:
                    g["lr"] = lr

            static_input.copy_(batch["input_ids"], non_blocking=True)
            static_mask.copy_(batch["attention_mask"], non_blocking=True)
            static_target.copy_(batch["labels"], non_blocking=True)

            if graph is not None:
                graph.replay()
                loss = static_loss
            else:
                optimizer.zero_grad(set_to_none=True)
                loss = step()

            global_step += 1
            if rank == 0 and i % args.log_every == 0:
                print(f"epoch {epoch} it {i}/{len(loader)} loss {loss.item():.4f} lr {lr:.2e}")

        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if rank == 0:
            print(f"epoch {epoch}: {len(loader) * args.batch_size / dt:.1f} samples/s ({args.graph_mode} graph)")

    if rank == 0:
        torch.save(inner.state_dict(), "encoder_cls.pt")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
