# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

"""CIFAR-10 example with MS-AMP (FP8 weights / FP8 optimizer states).

Single GPU:
    python cifar10.py --enable-msamp --opt-level O2
Multi GPU:
    torchrun --nproc_per_node=8 cifar10.py --enable-msamp --opt-level O2 --dist
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms
from torch.utils.data.distributed import DistributedSampler

import msamp
from msamp.common.dtype import Dtypes


def get_args():
    parser = argparse.ArgumentParser(description='PyTorch CIFAR-10 Example with MS-AMP')
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--test-batch-size', type=int, default=512)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--weight-decay', type=float, default=0.05)
    parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--log-interval', type=int, default=50)
    parser.add_argument('--data-dir', type=str, default='./data')
    parser.add_argument('--dist', action='store_true', default=False, help='use DistributedDataParallel')
    parser.add_argument('--enable-msamp', action='store_true', default=False, help='enable MS-AMP')
    parser.add_argument('--opt-level', type=str, default='O1', choices=['O1', 'O2'], help='MS-AMP optimization level')
    parser.add_argument('--amp-dtype', type=str, default='bf16', choices=['fp16', 'bf16'])
    return parser.parse_args()


class PatchEmbed(nn.Module):
    def __init__(self, img_size=32, patch_size=4, in_chans=3, embed_dim=384):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, num_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


class TinyViT(nn.Module):
    def __init__(self, num_classes=10, dim=384, depth=6, num_heads=6):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, dim))
        self.blocks = nn.Sequential(*[Block(dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward(self, x):
        x = self.patch_embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x)[:, 0])


def build_loaders(args, rank, world_size, use_cuda):
    normalize = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        normalize,
    ])
    test_tf = transforms.Compose([transforms.ToTensor(), normalize])
    train_set = torchvision.datasets.CIFAR10(args.data_dir, train=True, download=(rank == 0), transform=train_tf)
    if args.dist:
        dist.barrier()
    test_set = torchvision.datasets.CIFAR10(args.data_dir, train=False, download=False, transform=test_tf)

    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True) if args.dist else None
    kwargs = {'num_workers': 4, 'pin_memory': True} if use_cuda else {}
    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, shuffle=(sampler is None), sampler=sampler, drop_last=True, **kwargs
    )
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.test_batch_size, shuffle=False, **kwargs)
    return train_loader, test_loader, sampler


def train_one_epoch(args, model, device, loader, optimizer, scaler, epoch, amp_dtype, rank):
    model.train()
    start = time.time()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(dtype=amp_dtype):
            output = model(data)
            loss = F.cross_entropy(output, target)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if batch_idx % args.log_interval == 0 and rank == 0:
            elapsed = time.time() - start
            print(f'Train Epoch: {epoch} [{batch_idx}/{len(loader)}] loss={loss.item():.4f} ({elapsed:.1f}s)')


@torch.no_grad()
def evaluate(model, device, loader, amp_dtype):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        with torch.autocast('cuda', dtype=amp_dtype):
            output = model(data)
        loss_sum += F.cross_entropy(output.float(), target, reduction='sum').item()
        correct += (output.argmax(dim=1) == target).sum().item()
        total += target.numel()
    return loss_sum / total, correct / total


def main():
    args = get_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()

    rank, world_size, local_rank = 0, 1, 0
    if args.dist:
        dist.init_process_group(backend='nccl')
        rank = dist.get_rank()
        world_size = dist.get_world_size()
        local_rank = int(os.environ['LOCAL_RANK'])
        torch.cuda.set_device(local_rank)

    torch.manual_seed(args.seed)
    device = torch.device(f'cuda:{local_rank}' if use_cuda else 'cpu')

    train_loader, test_loader, sampler = build_loaders(args, rank, world_size, use_cuda)

    model = TinyViT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    if args.enable_msamp:
        if rank == 0:
            print(f'msamp is enabled, opt_level: {args.opt_level}')
        model, optimizer = msamp.initialize(model, optimizer, opt_level=args.opt_level)
        if rank == 0:
            n_fp8 = sum(1 for p in model.parameters() if getattr(p, 'qtype', None) == Dtypes.kfloat8_e4m3)
            print(f'{n_fp8} parameters are stored as FP8 (e4m3) ScalingTensors')

    amp_dtype = torch.bfloat16 if args.amp_dtype == 'bf16' else torch.float16
    scaler = torch.cuda.amp.GradScaler() if amp_dtype == torch.float16 else None

    if args.dist:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])

    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    best_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train_one_epoch(args, model, device, train_loader, optimizer, scaler, epoch, amp_dtype, rank)
        test_loss, acc = evaluate(model, device, test_loader, amp_dtype)
        scheduler.step()
        best_acc = max(best_acc, acc)
        if rank == 0:
            mem = torch.cuda.max_memory_allocated(device) / 2**20 if use_cuda else 0.0
            print(f'Epoch {epoch}: test loss {test_loss:.4f}, acc {acc * 100:.2f}% (best {best_acc * 100:.2f}%), '
                  f'peak GPU memory {mem:.0f} MiB')

    if args.dist:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
