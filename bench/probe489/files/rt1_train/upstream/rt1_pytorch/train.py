"""
Train RT-1 (robotic_transformer_pytorch) on RLDS episodes exported to numpy shards.

Single GPU:
    python -m rt1_pytorch.train --data-dir data/fractal_npz --gpus 1
Multi GPU (one process per GPU, spawned here):
    python -m rt1_pytorch.train --data-dir data/fractal_npz --gpus 8 --batch-size 32
"""
import argparse
import json
import os
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from robotic_transformer_pytorch import MaxViT, RT1
from rt1_pytorch.data.npz_episodes import NpzEpisodeDataset
from rt1_pytorch.tokenizers.action_tokenizer import RT1ActionTokenizer
from rt1_pytorch.utils.gpu_monitor import GPUMonitor


def get_args():
    parser = argparse.ArgumentParser(description="RT-1 training")
    parser.add_argument("--data-dir", type=str, required=True)
    parser.add_argument("--out-dir", type=str, default="runs/rt1")
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--batch-size", type=int, default=16, help="per-GPU batch size")
    parser.add_argument("--frames", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--num-workers", type=int, default=6)
    parser.add_argument("--cond-drop-prob", type=float, default=0.2)
    parser.add_argument("--log-interval", type=int, default=20)
    parser.add_argument("--resume", type=str, default=None)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--master-port", type=str, default="29511")
    return parser.parse_args()


def build_model(args):
    vit = MaxViT(
        num_classes=1000,
        dim_conv_stem=64,
        dim=96,
        dim_head=32,
        depth=(2, 2, 5, 2),
        window_size=7,
        mbconv_expansion_rate=4,
        mbconv_shrinkage_rate=0.25,
        dropout=0.1,
    )
    model = RT1(
        vit=vit,
        num_actions=11,
        depth=6,
        heads=8,
        dim_head=64,
        cond_drop_prob=args.cond_drop_prob,
    )
    return model


def setup(rank, world_size, args):
    os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
    os.environ["MASTER_PORT"] = args.master_port
    dist.init_process_group("nccl", rank=rank, world_size=world_size, timeout=timedelta(minutes=30))
    torch.cuda.set_device(rank)


def cleanup():
    dist.destroy_process_group()


def reduce_mean(t, world_size):
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / world_size


def train_worker(rank, world_size, args):
    distributed = world_size > 1
    if distributed:
        setup(rank, world_size, args)
    device = torch.device(f"cuda:{rank}")
    is_main = rank == 0

    torch.manual_seed(1234 + rank)
    np.random.seed(1234 + rank)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True

    tokenizer = RT1ActionTokenizer(num_bins=256)
    dataset = NpzEpisodeDataset(args.data_dir, num_frames=args.frames, action_tokenizer=tokenizer)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True) if distributed else None
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=args.num_workers,
        pin_memory=True,
        drop_last=True,
    )

    model = build_model(args).to(device)
    if args.resume:
        state = torch.load(args.resume, map_location=f"cuda:{rank}")
        model.load_state_dict(state["model"])
        start_epoch = state["epoch"] + 1
    else:
        start_epoch = 0
    if distributed:
        model = DDP(model, device_ids=[rank], output_device=rank)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    monitor = GPUMonitor(rank) if is_main else None

    if is_main:
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, "args.json"), "w") as f:
            json.dump(vars(args), f, indent=2)
        print(f"training on {world_size} GPU(s), {len(dataset)} windows")

    step = 0
    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for batch in loader:
            video = batch["video"].to(device, non_blocking=True)          # (b, c, f, h, w) float in [0, 1]
            action_tokens = batch["action_tokens"].to(device, non_blocking=True)  # (b, f, 11) long
            texts = list(batch["instruction"])

            with torch.cuda.amp.autocast(enabled=args.fp16):
                logits = model(video, texts=texts, cond_drop_prob=args.cond_drop_prob)   # (b, f, 11, 256)
                loss = F.cross_entropy(logits.flatten(0, 2), action_tokens.flatten())

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            step += 1

            if step % args.log_interval == 0:
                loss_val = reduce_mean(loss.detach(), world_size) if distributed else loss.detach()
                torch.cuda.synchronize(device)
                if is_main:
                    dt = (time.time() - t0) / args.log_interval
                    stats = monitor.query()
                    print(
                        f"epoch {epoch} step {step} loss {loss_val.item():.4f} "
                        f"{dt * 1000:.0f} ms/it | gpu util {stats['util']}% mem {stats['mem_used_gb']:.1f}GB"
                    )
                t0 = time.time()

        if is_main:
            raw = model.module if distributed else model
            torch.save({"model": raw.state_dict(), "epoch": epoch}, os.path.join(args.out_dir, f"rt1_epoch{epoch}.pt"))

    if monitor is not None:
        monitor.close()
    if distributed:
        cleanup()


def main():
    args = get_args()
    world_size = args.gpus
    assert world_size >= 1, "RT-1 training needs at least one CUDA device"
    if world_size > 1:
        mp.spawn(train_worker, args=(world_size, args), nprocs=world_size, join=True)
    else:
        train_worker(0, 1, args)


if __name__ == "__main__":
    main()
