"""Train / fine-tune the BirdNET-style classifier on labelled 3 s clips.

Data layout follows BirdNET-Analyzer's custom-classifier training:
    train_data/<Scientific name_Common name>/*.wav
plus an optional "Noise"/"Background" folder used as negatives.

Multi-GPU: launch with torchrun, e.g.
    torchrun --nproc_per_node 4 -m birdnet_pt.train --i train_data/ --o checkpoints/ --amp
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
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from birdnet_pt import config as cfg
from birdnet_pt.audio import MelFrontend, SpecAugment, load_clip
from birdnet_pt.model import BirdNetClassifier

logger = logging.getLogger("birdnet_pt.train")


class ClipDataset(Dataset):
    def __init__(self, root, labels, sample_rate, clip_seconds, augment=False):
        self.items = []
        for ci, lab in enumerate(labels):
            d = os.path.join(root, lab)
            if not os.path.isdir(d):
                continue
            for f in sorted(os.listdir(d)):
                if f.lower().endswith(cfg.ALLOWED_FILETYPES):
                    self.items.append((os.path.join(d, f), ci))
        self.labels = labels
        self.sr = sample_rate
        self.n = int(sample_rate * clip_seconds)
        self.augment = augment

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, ci = self.items[i]
        x = load_clip(path, self.sr, self.n, random_offset=self.augment)
        if self.augment:
            gain = 10 ** (random.uniform(-6, 6) / 20)
            x = x * gain
            if random.random() < 0.3:
                x = x + np.random.randn(len(x)).astype(np.float32) * random.uniform(0.001, 0.01)
        y = np.zeros(len(self.labels), dtype=np.float32)
        if self.labels[ci] not in cfg.NON_EVENT_CLASSES:
            y[ci] = 1.0
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


def mixup(x, y, alpha=0.4):
    lam = np.random.beta(alpha, alpha)
    idx = torch.randperm(x.size(0), device=x.device)
    return lam * x + (1 - lam) * x[idx], torch.clamp(y + y[idx], max=1.0)


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    return rank, local_rank, world


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--i", required=True, help="training data root")
    p.add_argument("--val", default=None, help="optional validation root")
    p.add_argument("--o", default="checkpoints/")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch_size", type=int, default=64, help="per GPU")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--wd", type=float, default=1e-4)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--mixup", action="store_true")
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16 + GradScaler)")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--pretrained", default=cfg.MODEL_PATH)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    rank, local_rank, world = setup_distributed()
    device = torch.device("cuda", local_rank)
    is_main = rank == 0

    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.manual_seed(args.seed + rank)

    labels = sorted(d for d in os.listdir(args.i) if os.path.isdir(os.path.join(args.i, d)))
    if is_main:
        os.makedirs(args.o, exist_ok=True)
        with open(os.path.join(args.o, "labels.json"), "w") as f:
            json.dump(labels, f, indent=1)
        logger.info("%d classes, world size %d", len(labels), world)

    train_ds = ClipDataset(args.i, labels, cfg.SAMPLE_RATE, cfg.SIG_LENGTH, augment=True)
    sampler = DistributedSampler(train_ds, shuffle=True) if world > 1 else None
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                          num_workers=args.workers, pin_memory=True, drop_last=True,
                          persistent_workers=args.workers > 0, pin_memory_device="cuda")
    val_dl = None
    if args.val and is_main:
        val_ds = ClipDataset(args.val, labels, cfg.SAMPLE_RATE, cfg.SIG_LENGTH, augment=False)
        val_dl = DataLoader(val_ds, batch_size=args.batch_size * 2, num_workers=args.workers, pin_memory=True)

    frontend = MelFrontend(sample_rate=cfg.SAMPLE_RATE, n_fft=cfg.N_FFT, hop_length=cfg.HOP_LENGTH,
                           n_mels=cfg.N_MELS, fmin=cfg.SIG_FMIN, fmax=cfg.SIG_FMAX).to(device)
    specaug = SpecAugment(freq_mask=12, time_mask=24).to(device)

    model = BirdNetClassifier.from_checkpoint(args.pretrained, num_classes=len(labels), strict=False)
    model = model.to(device)
    if world > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    if args.compile:
        model = torch.compile(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd, fused=True)
    steps = args.epochs * len(train_dl)
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=steps, pct_start=0.1)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    crit = nn.BCEWithLogitsLoss()

    best = math.inf
    for epoch in range(args.epochs):
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        running = 0.0
        for step, (x, y) in enumerate(train_dl):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.no_grad():
                spec = specaug(frontend(x))
            if args.mixup:
                spec, y = mixup(spec, y)
            with torch.cuda.amp.autocast(enabled=args.amp):
                loss = crit(model(spec), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            sched.step()
            running += loss.item()
            if is_main and step % 50 == 0:
                logger.info("epoch %d step %d/%d loss %.4f lr %.2e", epoch, step, len(train_dl),
                            running / (step + 1), sched.get_last_lr()[0])
        torch.cuda.synchronize()
        if is_main:
            logger.info("epoch %d done in %.1fs, train loss %.4f, max mem %.2f GB", epoch, time.time() - t0,
                        running / len(train_dl), torch.cuda.max_memory_allocated() / 1e9)

        if val_dl is not None:
            model.eval()
            vloss, n = 0.0, 0
            with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp):
                for x, y in val_dl:
                    x, y = x.to(device), y.to(device)
                    vloss += crit(model(frontend(x)), y).item() * len(x)
                    n += len(x)
            vloss /= max(n, 1)
            logger.info("epoch %d val loss %.4f", epoch, vloss)
            if vloss < best:
                best = vloss
                state = (model.module if hasattr(model, "module") else model).state_dict()
                torch.save({"model": state, "labels": labels, "epoch": epoch}, os.path.join(args.o, "best.pt"))

    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
