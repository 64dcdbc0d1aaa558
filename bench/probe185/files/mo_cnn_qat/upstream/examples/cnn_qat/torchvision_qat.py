# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: MIT
"""Quantization-aware training of a torchvision ResNet with ModelOpt.

    torchrun --nproc_per_node 8 torchvision_qat.py --train-data-path /data/imagenet/train \
        --val-data-path /data/imagenet/val --epochs 2 --lr 1e-4 --output-dir ./qat_out

Steps: (1) PTQ calibrate with mtq.quantize, (2) fine-tune with fake quant enabled,
(3) save the ModelOpt state so the model can be restored and exported for TensorRT.
"""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

import modelopt.torch.opt as mto
import modelopt.torch.quantization as mtq


def get_args():
    p = argparse.ArgumentParser(description="ModelOpt QAT for torchvision classifiers")
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--train-data-path", required=True)
    p.add_argument("--val-data-path", required=True)
    p.add_argument("--batch-size", type=int, default=64, help="per-GPU batch size")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=1e-5)
    p.add_argument("--calib-batches", type=int, default=32)
    p.add_argument("--quant-cfg", default="INT8_DEFAULT_CFG", choices=["INT8_DEFAULT_CFG", "FP8_DEFAULT_CFG"])
    p.add_argument("--bf16", action="store_true", help="Run QAT under bf16 autocast")
    p.add_argument("--output-dir", default="./qat_out")
    p.add_argument("--resume", default="", help="restore a ModelOpt checkpoint instead of calibrating")
    return p.parse_args()


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    dist.barrier()
    return rank, world_size, local_rank


def is_main(rank):
    return rank == 0


def build_loaders(args, world_size, rank):
    normalize = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), normalize])
    val_tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), normalize])
    train_set = torchvision.datasets.ImageFolder(args.train_data_path, train_tf)
    val_set = torchvision.datasets.ImageFolder(args.val_data_path, val_tf)

    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank) if world_size > 1 else None
    val_sampler = DistributedSampler(val_set, num_replicas=world_size, rank=rank, shuffle=False) if world_size > 1 else None

    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=args.workers, pin_memory=True,
                              drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=val_sampler, shuffle=False,
                            num_workers=args.workers, pin_memory=True)
    return train_loader, val_loader, train_sampler


def calibrate(model, loader, num_batches, device):
    def forward_loop(m):
        for i, (images, _) in enumerate(loader):
            if i >= num_batches:
                break
            m(images.to(device, non_blocking=True))

    return forward_loop


def train_one_epoch(model, loader, optimizer, scheduler, criterion, device, epoch, args, rank):
    model.train()
    t0 = time.time()
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float32
    for step, (images, target) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.bf16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 50 == 0 and is_main(rank):
            mem = torch.cuda.max_memory_allocated() / 2**30
            print(f"epoch {epoch} step {step}/{len(loader)} loss {loss.item():.4f} "
                  f"lr {scheduler.get_last_lr()[0]:.2e} mem {mem:.1f}GiB {time.time() - t0:.1f}s")


@torch.no_grad()
def evaluate(model, loader, device, world_size):
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for images, target in loader:
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            pred = model(images).argmax(dim=1)
        correct += (pred == target).sum()
        total += target.numel()
    if world_size > 1:
        dist.all_reduce(correct)
        dist.all_reduce(total)
    return (correct / total).item() * 100.0


def main():
    args = get_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    torch.backends.cudnn.benchmark = True

    train_loader, val_loader, train_sampler = build_loaders(args, world_size, rank)

    model = torchvision.models.__dict__[args.arch](weights="DEFAULT").to(device)
    criterion = nn.CrossEntropyLoss().to(device)

    if args.resume:
        model = mto.restore(model, args.resume)
    else:
        quant_cfg = getattr(mtq, args.quant_cfg)
        forward_loop = calibrate(model, train_loader, args.calib_batches, device)
        model = mtq.quantize(model, quant_cfg, forward_loop)
    if is_main(rank):
        mtq.print_quant_summary(model)
        print(f"PTQ top-1: {evaluate(model, val_loader, device, 1):.2f}")

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=args.weight_decay)
    total_steps = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / max(total_steps, 1))))

    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer, scheduler, criterion, device, epoch, args, rank)
        acc = evaluate(model, val_loader, device, world_size)
        if is_main(rank):
            print(f"epoch {epoch}: QAT top-1 {acc:.2f}")

    if is_main(rank):
        os.makedirs(args.output_dir, exist_ok=True)
        unwrapped = model.module if isinstance(model, DDP) else model
        mto.save(unwrapped, os.path.join(args.output_dir, f"{args.arch}_qat.pth"))
        print("saved ModelOpt checkpoint; export with torch_quant_to_onnx.py then trtexec")

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
