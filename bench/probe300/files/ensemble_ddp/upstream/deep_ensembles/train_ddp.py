"""Multi-GPU / multi-node training of one ensemble member (or a BatchEnsemble) with DDP.

Launch with torchrun, e.g.
    torchrun --nproc_per_node=8 deep_ensembles/train_ddp.py --arch wrn28 --member 3
See scripts/launch_ddp_multinode.sh for the SLURM version.
"""
import argparse
import datetime
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

import torchvision
import torchvision.transforms as T

from models import ResNet18, WideResNet28, BatchEnsembleWRN


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="wrn28", choices=["resnet18", "wrn28", "be_wrn28"])
    p.add_argument("--ensemble-size", type=int, default=4, help="BatchEnsemble members (be_wrn28 only)")
    p.add_argument("--member", type=int, default=0)
    p.add_argument("--epochs", type=int, default=250)
    p.add_argument("--batch-size", type=int, default=64, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--wd", type=float, default=5e-4)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--dist-backend", default="nccl")
    p.add_argument("--data", default="./data")
    p.add_argument("--out", default="./checkpoints/ddp")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def setup_distributed(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.local_rank = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        args.rank = int(os.environ["SLURM_PROCID"])
        args.world_size = int(os.environ["SLURM_NTASKS"])
        args.local_rank = args.rank % torch.cuda.device_count()
    else:
        print("Not using distributed mode")
        args.distributed = False
        args.rank, args.world_size, args.local_rank = 0, 1, 0
        return
    args.distributed = True

    torch.cuda.set_device(args.local_rank)
    print(f"| distributed init (rank {args.rank}/{args.world_size}, local {args.local_rank})", flush=True)
    dist.init_process_group(
        backend=args.dist_backend,
        init_method="env://",
        world_size=args.world_size,
        rank=args.rank,
        timeout=datetime.timedelta(minutes=30),
    )
    dist.barrier()


def is_main(args):
    return args.rank == 0


def build_loaders(args):
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    tr = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)])
    te = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
    # only rank 0 downloads
    if is_main(args):
        torchvision.datasets.CIFAR10(args.data, train=True, download=True)
    if args.distributed:
        dist.barrier()
    train_set = torchvision.datasets.CIFAR10(args.data, train=True, transform=tr)
    test_set = torchvision.datasets.CIFAR10(args.data, train=False, transform=te)
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed) if args.distributed else None
    test_sampler = DistributedSampler(test_set, shuffle=False) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, sampler=train_sampler, shuffle=train_sampler is None,
        num_workers=8, pin_memory=True, drop_last=True, persistent_workers=True,
    )
    test_loader = torch.utils.data.DataLoader(
        test_set, batch_size=256, sampler=test_sampler, num_workers=4, pin_memory=True,
    )
    return train_loader, test_loader, train_sampler


def build_model(args):
    if args.arch == "resnet18":
        return ResNet18(num_classes=10)
    if args.arch == "be_wrn28":
        return BatchEnsembleWRN(depth=28, widen_factor=10, num_classes=10, ensemble_size=args.ensemble_size)
    return WideResNet28(widen_factor=10, num_classes=10)


def reduce_metrics(correct, total, loss_sum, device):
    t = torch.tensor([correct, total, loss_sum], dtype=torch.float32, device="cuda")
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t[0].item(), t[1].item(), t[2].item()


def train_one_epoch(model, loader, optimizer, scaler, device, args, epoch):
    model.train()
    correct, total, loss_sum = 0, 0, 0.0
    for step, (x, y) in enumerate(loader):
        x = x.cuda(args.local_rank, non_blocking=True)
        y = y.cuda(args.local_rank, non_blocking=True)
        if args.arch == "be_wrn28":
            # BatchEnsemble: every member sees the same mini-batch
            y = y.repeat(args.ensemble_size)
        with torch.cuda.amp.autocast(enabled=args.amp):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()
        correct += (logits.argmax(1) == y).sum().item()
        total += y.numel()
        loss_sum += loss.item() * y.numel()
    return reduce_metrics(correct, total, loss_sum, device)


@torch.no_grad()
def evaluate(model, loader, device, args):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x)
        if args.arch == "be_wrn28":
            probs = logits.softmax(-1).view(args.ensemble_size, -1, logits.shape[-1]).mean(0)
        else:
            probs = logits.softmax(-1)
        loss_sum += F.nll_loss(torch.log(probs + 1e-12), y, reduction="sum").item()
        correct += (probs.argmax(1) == y).sum().item()
        total += y.numel()
    return reduce_metrics(correct, total, loss_sum, device)


def main():
    args = parse_args()
    setup_distributed(args)
    device = torch.device("cuda", args.local_rank)
    torch.manual_seed(args.seed + 1000 * args.member + args.rank)
    torch.backends.cudnn.benchmark = True

    train_loader, test_loader, train_sampler = build_loaders(args)
    model = build_model(args).to(device)
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)

    lr = args.lr * args.batch_size * args.world_size / 128
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=args.wd, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        c, n, l = train_one_epoch(model, train_loader, optimizer, scaler, device, args, epoch)
        scheduler.step()
        if is_main(args):
            print(f"epoch {epoch:3d} train acc {100 * c / n:.2f} loss {l / n:.4f} ({time.time() - t0:.0f}s)")
        if epoch % 10 == 9 or epoch == args.epochs - 1:
            c, n, l = evaluate(model, test_loader, device, args)
            if is_main(args):
                print(f"          test  acc {100 * c / n:.2f} nll {l / n:.4f}")
                state = model.module.state_dict() if args.distributed else model.state_dict()
                torch.save({"net": state, "epoch": epoch, "member": args.member},
                           os.path.join(args.out, f"{args.arch}_m{args.member}.pth"))

    if args.distributed:
        if args.dist_backend == "nccl":
            # make sure all NCCL kernels have finished before tearing down the group
            torch.cuda.synchronize()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
