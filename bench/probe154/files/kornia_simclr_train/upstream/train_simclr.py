#!/usr/bin/env python
"""SimCLR pre-training with augmentations done on the GPU by kornia.

Data loading only decodes and resizes to a fixed size on the CPU workers; all
stochastic augmentation (crop, flip, colour jitter, blur, solarize) runs as a
batched kornia pipeline on the accelerator, which removes the usual CPU
bottleneck of torchvision transforms.

Single GPU:   python train_simclr.py --data /datasets/imagenet100
Multi GPU:    torchrun --nproc_per_node=8 train_simclr.py --data ... --batch-size 256
"""
import argparse
import inspect
import math
import os
import time
from contextlib import nullcontext

import kornia.augmentation as K
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=256, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=0.3)
    p.add_argument("--wd", type=float, default=1e-6)
    p.add_argument("--temperature", type=float, default=0.2)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--amp", choices=["off", "fp16", "bf16"], default="bf16")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out", default="checkpoints/simclr")
    p.add_argument("--log-every", type=int, default=50)
    return p.parse_args()


def setup_distributed():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.barrier()
    else:
        rank, local_rank, world_size = 0, 0, 1
    return rank, local_rank, world_size


def gpu_augmentation(image_size):
    """Two-view SimCLR augmentation as a kornia pipeline (runs on device)."""
    return nn.Sequential(
        K.RandomResizedCrop((image_size, image_size), scale=(0.08, 1.0)),
        K.RandomHorizontalFlip(),
        K.ColorJitter(0.4, 0.4, 0.2, 0.1, p=0.8),
        K.RandomGrayscale(p=0.2),
        K.RandomGaussianBlur((23, 23), (0.1, 2.0), p=0.5),
        K.RandomSolarize(thresholds=0.1, additions=0.1, p=0.2),
        K.Normalize(mean=torch.tensor([0.485, 0.456, 0.406]),
                    std=torch.tensor([0.229, 0.224, 0.225])),
    )


class SimCLR(nn.Module):
    def __init__(self, arch="resnet50", proj_dim=128, hidden=2048):
        super().__init__()
        backbone = getattr(torchvision.models, arch)(weights=None)
        feat_dim = backbone.fc.in_features
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.projector = nn.Sequential(
            nn.Linear(feat_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True),
            nn.Linear(hidden, proj_dim),
        )

    def forward(self, x):
        return self.projector(self.backbone(x))


def nt_xent(z1, z2, temperature, rank, world_size):
    """NT-Xent over the global batch (gathered across GPUs)."""
    z1 = F.normalize(z1, dim=1)
    z2 = F.normalize(z2, dim=1)
    if world_size > 1:
        z2_all = [torch.zeros_like(z2) for _ in range(world_size)]
        dist.all_gather(z2_all, z2)
        z2_all[rank] = z2
        z2_all = torch.cat(z2_all)
    else:
        z2_all = z2
    logits = z1 @ z2_all.t() / temperature
    labels = torch.arange(z1.size(0), device=z1.device) + rank * z1.size(0)
    return F.cross_entropy(logits, labels)


def configure_optimizer(model, lr, wd, device_type):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}]
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    use_fused = fused_available and device_type == "cuda"
    extra = dict(fused=True) if use_fused else dict()
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), **extra)


def cosine_lr(step, total, base_lr, warmup):
    if step < warmup:
        return base_lr * step / warmup
    q = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1 + math.cos(math.pi * q))


def main():
    args = parse_args()
    rank, local_rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    if args.amp == "bf16" and not torch.cuda.is_bf16_supported():
        if rank == 0:
            print("bf16 not supported on this GPU, falling back to fp16")
        args.amp = "fp16"
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.amp)
    autocast = torch.cuda.amp.autocast(dtype=amp_dtype) if amp_dtype else nullcontext()
    scaler = torch.cuda.amp.GradScaler(enabled=(args.amp == "fp16"))

    # CPU side: decode + fixed resize only.
    base_tf = transforms.Compose([
        transforms.Resize((args.image_size + 32, args.image_size + 32)),
        transforms.ToTensor(),
    ])
    dataset = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), base_tf)
    sampler = DistributedSampler(dataset, shuffle=True) if world_size > 1 else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                        shuffle=sampler is None, num_workers=args.workers,
                        pin_memory=True, drop_last=True, persistent_workers=True)

    aug = gpu_augmentation(args.image_size).to(device)
    model = SimCLR(args.arch).to(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model) if world_size > 1 else model
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)

    optimizer = configure_optimizer(model, args.lr, args.wd, device.type)
    total_steps = args.epochs * len(loader)
    warmup = 10 * len(loader)
    step = 0

    os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for images, _ in loader:
            images = images.cuda(non_blocking=True)
            with torch.no_grad():
                v1, v2 = aug(images), aug(images)

            lr = cosine_lr(step, total_steps, args.lr, warmup)
            for g in optimizer.param_groups:
                g["lr"] = lr

            with autocast:
                z1, z2 = model(v1), model(v2)
                loss = 0.5 * (nt_xent(z1, z2, args.temperature, rank, world_size)
                              + nt_xent(z2, z1, args.temperature, rank, world_size))

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1

            if rank == 0 and step % args.log_every == 0:
                mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                print(f"ep {epoch} step {step}/{total_steps} loss {loss.item():.4f} "
                      f"lr {lr:.4f} mem {mem:.1f}G {(time.time() - t0) / args.log_every:.3f}s/it")
                t0 = time.time()

        if rank == 0:
            state = model.module.state_dict() if world_size > 1 else model.state_dict()
            torch.save({"epoch": epoch, "model": state, "optimizer": optimizer.state_dict()},
                       os.path.join(args.out, "last.pth"))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
