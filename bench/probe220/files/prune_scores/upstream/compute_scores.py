"""Data-pruning scores for CIFAR / ImageNet: EL2N, GraNd-at-init proxy and forgetting events.

    torchrun --nproc_per_node=4 compute_scores.py --config configs/el2n_cifar10.yaml

Every rank trains an independent replica (different seed) for `score_epoch` epochs under DDP, then the
per-example scores of all ranks are gathered and averaged on rank 0 and written to `<out_dir>/scores.npz`.
"""
import argparse
import os
import time
from types import SimpleNamespace

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from utils.dist_utils import all_gather_cat, get_world_size, init_distributed_mode, is_main_process


def to_ns(d):
    return SimpleNamespace(**{k: to_ns(v) if isinstance(v, dict) else v for k, v in d.items()})


class IndexedDataset(Dataset):
    def __init__(self, base):
        self.base = base

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        x, y = self.base[i]
        return x, y, i


def build_dataset(cfg, train=True):
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    if train and cfg.data.augment:
        tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)])
    else:
        tf = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
    ds_cls = torchvision.datasets.CIFAR10 if cfg.data.name == "cifar10" else torchvision.datasets.CIFAR100
    return IndexedDataset(ds_cls(cfg.data.root, train=train, download=True, transform=tf))


def build_model(cfg):
    model = torchvision.models.__dict__[cfg.model.arch](num_classes=cfg.data.num_classes)
    if cfg.data.name.startswith("cifar"):
        model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = nn.Identity()
    return model


def train_one_epoch(model, loader, optimizer, scaler, device, cfg, forgetting):
    model.train()
    for x, y, idx in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg.amp.enabled):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        # forgetting events: an example is "forgotten" when it goes from correct to incorrect
        with torch.no_grad():
            correct = (logits.argmax(1) == y).cpu()
            idx = idx.cpu()
            prev = forgetting["last_correct"][idx]
            forgetting["events"][idx] += (prev & ~correct).long()
            forgetting["last_correct"][idx] = correct
            forgetting["ever_learned"][idx] |= correct


@torch.no_grad()
def compute_el2n(model, loader, device, num_classes):
    model.eval()
    scores, indices = [], []
    for x, y, idx in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        probs = F.softmax(model(x).float(), dim=1)
        err = probs - F.one_hot(y, num_classes).float()
        scores.append(err.norm(dim=1))
        indices.append(idx.to(device))
    return torch.cat(scores), torch.cat(indices)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--dist_url", default="env://")
    parser.add_argument("--out_dir", default=None)
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = to_ns(yaml.safe_load(f))

    init_distributed_mode(args)
    rank = dist.get_rank() if args.distributed else 0
    device = torch.device(cfg.device, args.gpu)
    torch.manual_seed(cfg.seed + rank)
    np.random.seed(cfg.seed + rank)
    torch.backends.cudnn.benchmark = cfg.cudnn_benchmark

    out_dir = args.out_dir or cfg.out_dir
    os.makedirs(out_dir, exist_ok=True)

    train_set = build_dataset(cfg, train=True)
    score_set = build_dataset(cfg, train=False if cfg.data.name == "imagenet" else True)
    score_set.base.transform = build_dataset(cfg, train=False).base.transform  # no augmentation for scoring

    # every rank sees the whole training set in its own order (independent replicas),
    # but the scoring pass is sharded
    train_loader = DataLoader(train_set, batch_size=cfg.train.batch_size, shuffle=True,
                              num_workers=cfg.dataloader.num_workers, pin_memory=cfg.dataloader.pin_memory, drop_last=True,
                              persistent_workers=cfg.dataloader.num_workers > 0)
    score_sampler = DistributedSampler(score_set, shuffle=False) if args.distributed else None
    score_loader = DataLoader(score_set, batch_size=cfg.score.batch_size, sampler=score_sampler, shuffle=False,
                              num_workers=cfg.dataloader.num_workers, pin_memory=cfg.dataloader.pin_memory)

    # no DDP wrapper on purpose: the replicas must stay independent for the score average to mean anything
    model = build_model(cfg).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.train.lr, momentum=0.9, weight_decay=cfg.train.wd, nesterov=True)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp.enabled)

    n = len(train_set)
    forgetting = {
        "events": torch.zeros(n, dtype=torch.long),
        "last_correct": torch.zeros(n, dtype=torch.bool),
        "ever_learned": torch.zeros(n, dtype=torch.bool),
    }

    torch.cuda.reset_peak_memory_stats(device)
    t0 = time.time()
    for epoch in range(cfg.score.epoch):
        train_one_epoch(model, train_loader, optimizer, scaler, device, cfg, forgetting)
        torch.cuda.synchronize(device)
        print("epoch {:3d} done, {:.1f}s, peak mem {:.2f} GB".format(
            epoch, time.time() - t0, torch.cuda.max_memory_allocated(device) / 2 ** 30))

    el2n, idx = compute_el2n(model, score_loader, device, cfg.data.num_classes)
    el2n_all = all_gather_cat(el2n)
    idx_all = all_gather_cat(idx)

    # forgetting counts: sum over replicas (each rank trained its own model)
    events = forgetting["events"].to(device)
    never_learned = (~forgetting["ever_learned"]).long().to(device)
    if args.distributed:
        dist.all_reduce(events)
        dist.all_reduce(never_learned)

    if is_main_process():
        order = torch.argsort(idx_all).cpu()
        el2n_sorted = el2n_all.cpu()[order].numpy()
        # average over the replicas that scored each example (one per rank here)
        forgetting_score = events.cpu().numpy() / get_world_size()
        # never-learned examples are ranked as the hardest (infinite forgetting)
        forgetting_score[never_learned.cpu().numpy() == get_world_size()] = np.inf
        np.savez(os.path.join(out_dir, "scores.npz"), el2n=el2n_sorted, forgetting=forgetting_score)
        print("saved scores for {} examples to {}".format(len(el2n_sorted), out_dir))

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
