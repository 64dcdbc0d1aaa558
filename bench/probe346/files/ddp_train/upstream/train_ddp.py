"""
DistributedDataParallel trainer for the Music Transformer (one process per GPU).

Launched by scripts/train_ddp.sh through torchrun; also runs as a single process
(python train_ddp.py ...) for debugging, in which case no process group is created.
"""
import os
import csv
import time
import random
from datetime import timedelta

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from dataset.e_piano import create_epiano_datasets, compute_epiano_accuracy
from model.music_transformer import MusicTransformer
from model.loss import SmoothCrossEntropyLoss
from utilities.argument_funcs import parse_train_args
from utilities.constants import *
from utilities.lr_scheduling import LrStepTracker, get_lr


def setup_distributed():
    """Returns (rank, world_size, local_rank, distributed)."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        torch.cuda.set_device(0)
        return 0, 1, 0, False

    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])

    # bind this process to its GPU *before* creating the communicator
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://",
                            timeout=timedelta(minutes=30))
    dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank, True


def seed_everything(seed, rank):
    random.seed(seed + rank)
    np.random.seed(seed + rank)
    torch.manual_seed(seed + rank)
    torch.cuda.manual_seed(seed + rank)


def is_main(rank):
    return rank == 0


def all_reduce_mean(values, device, distributed):
    t = torch.tensor(values, dtype=torch.float32, device=device)
    if distributed:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= dist.get_world_size()
    return t.tolist()


@torch.no_grad()
def evaluate(model, loader, loss_fn, device):
    model.eval()
    sum_loss, sum_acc, n = 0.0, 0.0, 0
    for x, tgt in loader:
        x = x.to(device, non_blocking=True)
        tgt = tgt.to(device, non_blocking=True)
        y = model(x)
        sum_acc += float(compute_epiano_accuracy(y, tgt))
        y = y.reshape(y.shape[0] * y.shape[1], -1)
        sum_loss += float(loss_fn(y, tgt.flatten()))
        n += 1
    model.train()
    return sum_loss / max(n, 1), sum_acc / max(n, 1)


def main():
    args = parse_train_args()
    rank, world_size, local_rank, distributed = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    seed_everything(args.seed, rank)

    torch.backends.cudnn.benchmark = True

    if is_main(rank):
        os.makedirs(os.path.join(args.output_dir, "weights"), exist_ok=True)
        print(f"world_size={world_size}  amp={args.amp}  rpr={args.rpr}")

    train_ds, val_ds, test_ds = create_epiano_datasets(args.input_dir, args.max_sequence)

    train_sampler = DistributedSampler(train_ds, shuffle=True, drop_last=True) if distributed else None
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        shuffle=(train_sampler is None),
        sampler=train_sampler,
        num_workers=args.n_workers,
        pin_memory=True,
        pin_memory_device=f"cuda:{local_rank}",
        persistent_workers=args.n_workers > 0,
        drop_last=True,
    )
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, num_workers=args.n_workers, pin_memory=True)

    model = MusicTransformer(n_layers=args.n_layers, num_heads=args.num_heads,
                             d_model=args.d_model, dim_feedforward=args.dim_feedforward,
                             dropout=args.dropout, max_sequence=args.max_sequence,
                             rpr=args.rpr).to(device)

    if distributed:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    find_unused_parameters=False, gradient_as_bucket_view=True)

    opt = torch.optim.Adam(model.parameters(), lr=LR_DEFAULT_START,
                           betas=(ADAM_BETA_1, ADAM_BETA_2), eps=ADAM_EPSILON, fused=True)
    stepper = LrStepTracker(args.d_model, SCHEDULER_WARMUP_STEPS, 0)
    scheduler = LambdaLR(opt, stepper.step)

    if args.ce_smoothing is None:
        train_loss_fn = nn.CrossEntropyLoss(ignore_index=TOKEN_PAD)
    else:
        train_loss_fn = SmoothCrossEntropyLoss(args.ce_smoothing, VOCAB_SIZE, ignore_index=TOKEN_PAD)
    eval_loss_fn = nn.CrossEntropyLoss(ignore_index=TOKEN_PAD)

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    results_path = os.path.join(args.output_dir, "results.csv")
    best_loss = float("inf")
    step = 0
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        model.train()
        for x, tgt in train_loader:
            x = x.to(device, non_blocking=True)
            tgt = tgt.to(device, non_blocking=True)

            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                y = model(x)
                loss = train_loss_fn(y.reshape(y.shape[0] * y.shape[1], -1), tgt.flatten())

            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            scheduler.step()
            step += 1

            if is_main(rank) and step % args.print_modulus == 0:
                print(f"epoch {epoch + 1} step {step} loss {loss.item():.4f} lr {get_lr(opt):.2e}")

        val_loss, val_acc = evaluate(model.module if distributed else model, val_loader, eval_loss_fn, device)
        val_loss, val_acc = all_reduce_mean([val_loss, val_acc], device, distributed)

        if is_main(rank):
            dt = time.time() - t0
            print(f"== epoch {epoch + 1}: val_loss {val_loss:.4f} val_acc {val_acc:.4f} ({dt:.0f}s)")
            state = (model.module if distributed else model).state_dict()
            if val_loss < best_loss:
                best_loss = val_loss
                torch.save(state, os.path.join(args.output_dir, "best_loss_weights.pickle"))
            if (epoch + 1) % args.weight_modulus == 0:
                torch.save(state, os.path.join(args.output_dir, "weights", f"epoch_{epoch + 1:04d}.pickle"))
            with open(results_path, "a", newline="") as f:
                csv.writer(f).writerow([epoch + 1, get_lr(opt), val_loss, val_acc])

    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
