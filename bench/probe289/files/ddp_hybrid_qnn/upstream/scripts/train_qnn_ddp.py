#!/usr/bin/env python
"""Multi-GPU training of a hybrid CNN + quantum-layer classifier.

Launch with torchrun (one process per GPU):

    torchrun --nproc_per_node=8 scripts/train_qnn_ddp.py \
        --data cifar10 --n-wires 10 --q-layers 4 --epochs 30 --amp

The classical backbone runs under autocast; the quantum layer is simulated
with torchquantum in complex64 and is explicitly excluded from autocast
(the simulator's complex kernels do not support half precision).
"""

import argparse
import json
import math
import os
import random
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

import torchquantum as tq


# --------------------------------------------------------------------------- #
# model
# --------------------------------------------------------------------------- #
class QuantumHead(tq.QuantumModule):
    def __init__(self, n_wires, n_layers):
        super().__init__()
        self.n_wires = n_wires
        self.encoder = tq.GeneralEncoder(
            [{"input_idx": [i], "func": "ry", "wires": [i]} for i in range(n_wires)]
        )
        self.layers = tq.QuantumModuleList(
            [tq.Op1QAllLayer(op=tq.U3, n_wires=n_wires, has_params=True, trainable=True)
             for _ in range(n_layers)]
        )
        self.ent = tq.Op2QAllLayer(op=tq.CNOT, n_wires=n_wires, circular=True)
        self.measure = tq.MeasureAll(tq.PauliZ)

    def forward(self, x):
        qdev = tq.QuantumDevice(n_wires=self.n_wires, bsz=x.shape[0], device=x.device)
        self.encoder(qdev, x)
        for layer in self.layers:
            layer(qdev)
            self.ent(qdev)
        return self.measure(qdev)


class HybridNet(nn.Module):
    def __init__(self, n_wires=8, q_layers=3, n_classes=10):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(128, n_wires),
        )
        self.qhead = QuantumHead(n_wires, q_layers)
        self.fc = nn.Linear(n_wires, n_classes)

    def forward(self, x):
        z = torch.tanh(self.backbone(x)) * math.pi
        # complex64 simulation must stay in fp32
        with torch.autocast(device_type="cuda", enabled=False):
            q = self.qhead(z.float())
        return self.fc(q)


# --------------------------------------------------------------------------- #
# distributed helpers
# --------------------------------------------------------------------------- #
def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def is_main(rank):
    return rank == 0


def reduce_mean(t, world_size):
    if world_size == 1:
        return t
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / world_size


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# --------------------------------------------------------------------------- #
# data
# --------------------------------------------------------------------------- #
def build_loaders(args, world_size, rank):
    norm = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4),
                                   transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.ToTensor(), norm])
    train_set = datasets.CIFAR10(args.data_dir, train=True, download=is_main(rank), transform=train_tf)
    if world_size > 1:
        dist.barrier()
    test_set = datasets.CIFAR10(args.data_dir, train=False, download=False, transform=test_tf)

    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True) \
        if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.workers,
                              pin_memory=True, drop_last=True, persistent_workers=args.workers > 0)
    test_loader = DataLoader(test_set, batch_size=args.batch_size * 2, shuffle=False,
                             num_workers=args.workers, pin_memory=True)
    return train_loader, test_loader, train_sampler


# --------------------------------------------------------------------------- #
# train / eval
# --------------------------------------------------------------------------- #
def train_one_epoch(model, loader, optimizer, scaler, device, args, epoch, world_size):
    model.train()
    total, correct, loss_sum = 0, 0, 0.0
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        ctx = torch.autocast(device_type="cuda", dtype=torch.float16) if args.amp else nullcontext()
        with ctx:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if args.clip > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        scaler.step(optimizer)
        scaler.update()

        loss_sum += loss.detach() * x.size(0)
        correct += (logits.argmax(1) == y).sum()
        total += x.size(0)
        if step % args.log_every == 0 and int(os.environ.get("RANK", 0)) == 0:
            print(f"epoch {epoch} step {step}/{len(loader)} loss {loss.item():.4f} "
                  f"({(time.time() - t0) / (step + 1):.3f}s/it)")

    stats = torch.tensor([loss_sum.item(), correct.item(), total], device=device, dtype=torch.float64)
    if world_size > 1:
        dist.all_reduce(stats)
    return stats[0].item() / stats[2].item(), stats[1].item() / stats[2].item()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        logits = model(x)
        correct += (logits.argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="cifar10")
    p.add_argument("--data-dir", default="./data")
    p.add_argument("--n-wires", type=int, default=8)
    p.add_argument("--q-layers", type=int, default=3)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--wd", type=float, default=5e-4)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--out", default="runs/hybrid_ddp")
    p.add_argument("--resume", default="")
    args = p.parse_args()

    rank, local_rank, world_size = setup_distributed()
    seed_all(args.seed + rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    train_loader, test_loader, train_sampler = build_loaders(args, world_size, rank)

    model = HybridNet(args.n_wires, args.q_layers).to(device)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    find_unused_parameters=False, gradient_as_bucket_view=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd, fused=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location={"cuda:0": f"cuda:{local_rank}"})
        (model.module if world_size > 1 else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"] + 1

    os.makedirs(args.out, exist_ok=True)
    history = []
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        tr_loss, tr_acc = train_one_epoch(model, train_loader, optimizer, scaler, device,
                                          args, epoch, world_size)
        scheduler.step()
        if is_main(rank):
            te_acc = evaluate(model.module if world_size > 1 else model, test_loader, device)
            rec = {"epoch": epoch, "train_loss": tr_loss, "train_acc": tr_acc, "test_acc": te_acc,
                   "lr": scheduler.get_last_lr()[0],
                   "max_mem_gb": torch.cuda.max_memory_allocated() / 2**30}
            history.append(rec)
            print(json.dumps(rec))
            torch.save({"model": (model.module if world_size > 1 else model).state_dict(),
                        "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
                        "epoch": epoch}, os.path.join(args.out, "last.pt"))
        if world_size > 1:
            dist.barrier()

    if is_main(rank):
        with open(os.path.join(args.out, "history.json"), "w") as f:
            json.dump(history, f, indent=1)
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
