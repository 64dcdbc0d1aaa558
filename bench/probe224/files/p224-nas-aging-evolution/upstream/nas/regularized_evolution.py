"""
Regularized (aging) evolution for CNN cell search, after Real et al. 2019.

Each candidate architecture is trained for a few epochs on CIFAR-10 with
mixed precision and evaluated on a held-out split; the population is a FIFO
queue and tournament selection picks the parent to mutate. Peak GPU memory
of each child is recorded and used as a soft constraint in the fitness, so
that the search prefers cells that fit the deployment budget.

    python nas/regularized_evolution.py --gpus 0 --cycles 2000 --amp
"""

import argparse
import collections
import copy
import json
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

from nas.search_space import NASBench201Cell, Genotype, mutate_genotype, random_genotype

try:
    from apex.optimizers import FusedAdam  # NVIDIA apex, built with --cuda_ext

    HAS_APEX = True
except ImportError:
    HAS_APEX = False


# ---------------------------------------------------------------------------
# model built from a genotype
# ---------------------------------------------------------------------------
class CellNetwork(nn.Module):
    def __init__(self, genotype: Genotype, C: int = 16, N: int = 5, num_classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, C, 3, padding=1, bias=False), nn.BatchNorm2d(C))
        layers = []
        c_prev = C
        for stage, mult in enumerate([1, 2, 4]):
            c = C * mult
            if stage > 0:
                layers.append(
                    nn.Sequential(
                        nn.ReLU(inplace=False),
                        nn.Conv2d(c_prev, c, 3, stride=2, padding=1, bias=False),
                        nn.BatchNorm2d(c),
                    )
                )
            for _ in range(N):
                layers.append(NASBench201Cell(genotype, c))
            c_prev = c
        self.cells = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.BatchNorm2d(c_prev), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(c_prev, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.cells(x)
        x = self.head(x).flatten(1)
        return self.classifier(x)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def make_loaders(root, batch_size, workers, val_size=5000, seed=0):
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean, std),
    ])
    eval_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    full = datasets.CIFAR10(root, train=True, download=True, transform=train_tf)
    full_eval = datasets.CIFAR10(root, train=True, download=True, transform=eval_tf)
    idx = np.random.default_rng(seed).permutation(len(full))
    train_set = Subset(full, idx[val_size:])
    val_set = Subset(full_eval, idx[:val_size])
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=workers,
                              pin_memory=True, drop_last=True, persistent_workers=workers > 0)
    val_loader = DataLoader(val_set, batch_size=512, shuffle=False, num_workers=workers, pin_memory=True)
    return train_loader, val_loader


# ---------------------------------------------------------------------------
# training of one child
# ---------------------------------------------------------------------------
def train_and_eval(genotype, args, train_loader, val_loader):
    model = CellNetwork(genotype, C=args.init_channels, N=args.cells_per_stage)
    model = model.cuda()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)

    if HAS_APEX:
        optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.wd, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    total_steps = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=total_steps)
    scaler = GradScaler(enabled=args.amp)

    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    model.train()
    for epoch in range(args.epochs):
        for images, labels in train_loader:
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with autocast(enabled=args.amp):
                loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
    train_time = time.time() - t0

    model.eval()
    correct = total = 0
    with torch.no_grad(), autocast(enabled=args.amp):
        for images, labels in val_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            correct += (model(images).argmax(1) == labels).sum().item()
            total += labels.numel()
    peak_mem_mb = torch.cuda.max_memory_allocated() / 2**20
    n_params = sum(p.numel() for p in model.parameters()) / 1e6

    del model, optimizer, scaler
    torch.cuda.empty_cache()
    return {"val_acc": correct / total, "peak_mem_mb": peak_mem_mb, "params_m": n_params, "train_s": train_time}


def fitness(result, mem_budget_mb):
    penalty = max(0.0, result["peak_mem_mb"] - mem_budget_mb) / mem_budget_mb
    return result["val_acc"] - 0.1 * penalty


# ---------------------------------------------------------------------------
# search loop
# ---------------------------------------------------------------------------
def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--gpus", default="0", help="comma-separated GPU ids to use")
    p.add_argument("--population", type=int, default=100)
    p.add_argument("--sample-size", type=int, default=25)
    p.add_argument("--cycles", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--wd", type=float, default=5e-4)
    p.add_argument("--init-channels", type=int, default=16)
    p.add_argument("--cells-per-stage", type=int, default=3)
    p.add_argument("--mem-budget-mb", type=float, default=2048)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/aging_evo")
    p.add_argument("--resume", default=None)
    return p.parse_args()


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train_loader, val_loader = make_loaders(args.data, args.batch_size, args.workers, seed=args.seed)

    population = collections.deque()
    history = []
    if args.resume:
        state = torch.load(args.resume, map_location="cuda")
        history = state["history"]
        for h in history[-args.population:]:
            population.append(h)
        print(f"Resumed with {len(history)} evaluated architectures")

    def evaluate(genotype):
        try:
            res = train_and_eval(genotype, args, train_loader, val_loader)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()  # drop the half-built child before moving on
            res = {"val_acc": 0.0, "peak_mem_mb": float("inf"), "params_m": 0.0, "train_s": 0.0}
        rec = {"genotype": genotype.to_str(), "fitness": fitness(res, args.mem_budget_mb), **res}
        history.append(rec)
        return rec

    while len(population) < args.population:
        population.append(evaluate(random_genotype()))
        print(f"[init {len(population)}/{args.population}] acc={population[-1]['val_acc']:.4f}")

    while len(history) < args.cycles:
        sample = random.sample(list(population), args.sample_size)
        parent = max(sample, key=lambda r: r["fitness"])
        child_geno = mutate_genotype(Genotype.from_str(parent["genotype"]))
        child = evaluate(child_geno)
        population.append(child)
        population.popleft()
        best = max(history, key=lambda r: r["fitness"])
        print(f"[cycle {len(history)}] child acc={child['val_acc']:.4f} mem={child['peak_mem_mb']:.0f}MB "
              f"best={best['val_acc']:.4f}")
        if len(history) % 50 == 0:
            torch.save({"history": history, "args": vars(args)}, out / "search_state.pt")

    with open(out / "history.json", "w") as f:
        json.dump(history, f, indent=1)
    best = max(history, key=lambda r: r["fitness"])
    print("Best architecture:", best["genotype"], "val acc", best["val_acc"])


if __name__ == "__main__":
    main()
