#!/usr/bin/env python
"""Profile a few training steps and write a TensorBoard trace (torch-tb-profiler plugin).

Usage:
    python tools/profile_train_step.py --config configs/base.yaml --steps 12 --logdir runs/profile
    tensorboard --logdir runs/profile
"""
import argparse
import os

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

from trainer.builder import build_dataloader, build_model, build_optimizer
from trainer.config import load_config


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", required=True)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--logdir", default="runs/profile")
    p.add_argument("--with-stack", action="store_true", help="record Python stacks (slow on GPU runs)")
    p.add_argument("--memory", action="store_true", help="profile CUDA caching-allocator events")
    return p.parse_args()


def main():
    args = parse_args()
    cfg = load_config(args.config)
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True

    model = build_model(cfg).to(device)
    optimizer = build_optimizer(cfg, model.parameters())
    loader = build_dataloader(cfg, split="train")
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.fp16)
    criterion = nn.CrossEntropyLoss()

    prof_schedule = schedule(wait=1, warmup=2, active=args.steps - 4, repeat=1)
    os.makedirs(args.logdir, exist_ok=True)

    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=prof_schedule,
        on_trace_ready=tensorboard_trace_handler(args.logdir, worker_name="rank0"),
        record_shapes=True,
        profile_memory=args.memory,
        with_stack=args.with_stack,
    ) as prof:
        for step, (images, targets) in enumerate(loader):
            if step >= args.steps:
                break
            with record_function("h2d"):
                images = images.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
            with record_function("forward"):
                with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg.train.fp16):
                    logits = model(images)
                    loss = criterion(logits, targets)
            with record_function("backward"):
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
            with record_function("optimizer"):
                scaler.step(optimizer)
                scaler.update()
            prof.step()

    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
    if args.memory:
        print(prof.key_averages().table(sort_by="self_cuda_memory_usage", row_limit=15))
        torch.cuda.memory._dump_snapshot(os.path.join(args.logdir, "mem_snapshot.pickle"))
    print(f"max allocated: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")
    print(f"trace written to {args.logdir}; open with: tensorboard --logdir {args.logdir}")


if __name__ == "__main__":
    main()
