"""Train the MeshGraphNets cloth model on the flag_simple dataset.

Usage:
    python -m meshgraphnets.train_cloth --data data/flag_simple --gpu 0
    python -m meshgraphnets.train_cloth --data data/flag_simple --compile --bf16
"""

import argparse
import json
import logging
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from meshgraphnets.model import ClothModel
from meshgraphnets.dataset import FlagSimpleDataset, collate_graphs, add_noise

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

log = logging.getLogger("mgn.train")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=str, required=True)
    p.add_argument("--out", type=str, default="checkpoints/cloth")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--steps", type=int, default=10_000_000)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--lr-decay-steps", type=int, default=5_000_000)
    p.add_argument("--noise-std", type=float, default=3e-3)
    p.add_argument("--noise-gamma", type=float, default=0.1)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast for the processor")
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--save-every", type=int, default=50_000)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def to_device(batch, device):
    return {k: (v.cuda(non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


def make_optimizer(model, lr):
    if HAS_APEX:
        log.info("using apex FusedAdam")
        return FusedAdam(model.parameters(), lr=lr, adam_w_mode=False)
    return torch.optim.Adam(model.parameters(), lr=lr, fused=True)


def accumulate_normalizers(model, loader, device, n_batches=1000):
    """MGN warms up the online normalizers before the first optimizer step."""
    model.train()
    with torch.no_grad():
        for i, batch in enumerate(loader):
            if i >= n_batches:
                break
            batch = to_device(batch, device)
            model(batch, is_training=True)
            model.loss(batch, torch.zeros_like(batch["world_pos"]))


def save_checkpoint(path: Path, model, optimizer, scheduler, step):
    path.parent.mkdir(parents=True, exist_ok=True)
    normalizers = {name: m.get_variable() for name, m in model.named_modules() if hasattr(m, "get_variable")}
    torch.save({
        "model": model.state_dict(),
        "normalizers": normalizers,
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "step": step,
    }, path)


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    log.info("training on %s (%s)", device, torch.cuda.get_device_name(device))

    train_ds = FlagSimpleDataset(args.data, split="train", add_targets=True, split_and_preprocess=True)
    loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        pin_memory=True, persistent_workers=args.workers > 0, collate_fn=collate_graphs)

    model = ClothModel(output_size=3, message_passing_steps=15).to(device)
    accumulate_normalizers(model, loader, device)

    optimizer = make_optimizer(model, args.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=(1e-2) ** (1.0 / args.lr_decay_steps))

    if args.compile:
        model.learned_model = torch.compile(model.learned_model, mode="max-autotune", dynamic=True)

    writer = SummaryWriter(os.path.join(args.out, "tb"))
    out_dir = Path(args.out)
    with open(out_dir / "args.json" if out_dir.exists() else os.devnull, "w") as f:
        json.dump(vars(args), f, indent=2)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    step = 0
    running = 0.0
    model.train()
    while step < args.steps:
        for batch in loader:
            batch = to_device(batch, device)
            batch = add_noise(batch, field="world_pos", scale=args.noise_std, gamma=args.noise_gamma)

            if step % args.log_every == 0:
                start_evt.record()

            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.bf16):
                prediction = model(batch, is_training=True)
            loss = model.loss(batch, prediction.float())

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            if step < args.lr_decay_steps:
                scheduler.step()

            running += loss.item()
            if step % args.log_every == 0:
                end_evt.record()
                torch.cuda.synchronize()
                ms = start_evt.elapsed_time(end_evt)
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                avg = running / max(1, args.log_every if step else 1)
                log.info("step %d loss %.5f lr %.2e %.1f ms/step peak-mem %.2f GiB", step, avg,
                         scheduler.get_last_lr()[0], ms, mem)
                writer.add_scalar("train/loss", avg, step)
                writer.add_scalar("perf/step_ms", ms, step)
                running = 0.0

            if step % args.save_every == 0 and step > 0:
                save_checkpoint(out_dir / f"model_{step:08d}.pt", model, optimizer, scheduler, step)

            step += 1
            if step >= args.steps:
                break

    save_checkpoint(out_dir / "model_final.pt", model, optimizer, scheduler, step)
    writer.close()


if __name__ == "__main__":
    main()
