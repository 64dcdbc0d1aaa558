"""
Trains a vision transformer built from attorch layers on ImageNet (or a subset of it)
and optionally compares it against the equivalent PyTorch model.

Single GPU:
    python main.py --data-dir /data/imagenet --model vit_s16 --amp
Multi GPU:
    torchrun --nproc_per_node 8 main.py --data-dir /data/imagenet --model vit_b16 --amp
"""


import argparse
import os
import time
from contextlib import nullcontext
from typing import Callable, Tuple

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

from .vit import vit_b16, vit_s16, vit_ti16


MODELS = {'vit_ti16': vit_ti16, 'vit_s16': vit_s16, 'vit_b16': vit_b16}


class AverageMeter:
    """
    Keeps track of running averages.
    """
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sum = 0.
        self.count = 0

    def update(self, value: float, n: int = 1) -> None:
        self.sum += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)


def setup_distributed(backend: str) -> Tuple[int, int, int]:
    """
    Initializes the process group when launched with torchrun, returns
    (rank, local_rank, world_size).
    """
    if 'RANK' not in os.environ:
        return 0, 0, 1

    rank = int(os.environ['RANK'])
    local_rank = int(os.environ['LOCAL_RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)
    if backend == 'nccl':
        # make sure all NCCL communicators are created before the first step
        dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def create_dataloaders(
    data_dir: str,
    batch_size: int,
    num_workers: int,
    distributed: bool,
    ) -> Tuple[DataLoader, DataLoader]:
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                     std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        os.path.join(data_dir, 'train'),
        transforms.Compose([transforms.RandomResizedCrop(224),
                            transforms.RandomHorizontalFlip(),
                            transforms.ToTensor(),
                            normalize]))
    valid_dataset = datasets.ImageFolder(
        os.path.join(data_dir, 'val'),
        transforms.Compose([transforms.Resize(256),
                            transforms.CenterCrop(224),
                            transforms.ToTensor(),
                            normalize]))

    train_sampler = DistributedSampler(train_dataset) if distributed else None
    train_loader = DataLoader(train_dataset, batch_size=batch_size,
                              shuffle=train_sampler is None, sampler=train_sampler,
                              num_workers=num_workers, pin_memory=True,
                              drop_last=True, persistent_workers=num_workers > 0)
    valid_loader = DataLoader(valid_dataset, batch_size=batch_size,
                              shuffle=False, num_workers=num_workers,
                              pin_memory=True)
    return train_loader, valid_loader


def train(
    model: nn.Module,
    loader: DataLoader,
    optim: torch.optim.Optimizer,
    scaler: torch.cuda.amp.GradScaler,
    loss_fn: Callable,
    amp_dtype: torch.dtype,
    amp: bool,
    log_every: int,
    profile: bool,
    ) -> float:
    model.train()
    avg_loss = AverageMeter()
    start = time.time()

    for ind, (input, target) in enumerate(loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        if profile:
            torch.cuda.nvtx.range_push(f'step {ind}')

        with torch.autocast('cuda', dtype=amp_dtype, enabled=amp):
            output = model(input)
            loss = loss_fn(output, target)

        optim.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()

        if profile:
            torch.cuda.nvtx.range_pop()

        avg_loss.update(loss.item(), len(input))
        if ind % log_every == 0:
            throughput = avg_loss.count / (time.time() - start)
            print(f'[{ind}/{len(loader)}] loss {avg_loss.avg:.4f} '
                  f'({throughput:.1f} img/s, '
                  f'{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)')

    return avg_loss.avg


@torch.no_grad()
def validate(model: nn.Module, loader: DataLoader, amp_dtype: torch.dtype, amp: bool) -> float:
    model.eval()
    correct = torch.zeros((), device='cuda')
    total = 0
    for input, target in loader:
        input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
        with torch.autocast(device_type='cuda', dtype=amp_dtype, enabled=amp):
            output = model(input)
        correct += (output.argmax(dim=-1) == target).sum()
        total += len(target)
    if dist.is_initialized():
        dist.all_reduce(correct)
        total *= dist.get_world_size()
    return correct.item() / total


def main(args: argparse.Namespace) -> None:
    rank, local_rank, world_size = setup_distributed(args.backend)
    torch.manual_seed(args.seed + rank)
    torch.backends.cudnn.benchmark = True

    # bf16 needs Ampere; fall back to fp16 + loss scaling otherwise
    use_bf16 = args.amp and torch.cuda.get_device_capability()[0] >= 8
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16

    model = MODELS[args.model](num_classes=1000, attorch=not args.pytorch).cuda()
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], bucket_cap_mb=64)

    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1).cuda()
    optim = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05,
                              fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not use_bf16)

    train_loader, valid_loader = create_dataloaders(args.data_dir, args.batch_size,
                                                    args.num_workers, world_size > 1)

    for epoch in range(args.epochs):
        if world_size > 1:
            train_loader.sampler.set_epoch(epoch)
        profile_ctx = (torch.autograd.profiler.emit_nvtx() if args.profile
                       else nullcontext())
        with profile_ctx:
            loss = train(model, train_loader, optim, scaler, loss_fn, amp_dtype,
                         args.amp, args.log_every, args.profile)
        acc = validate(model, valid_loader, amp_dtype, args.amp)
        if rank == 0:
            print(f'epoch {epoch}: train loss {loss:.4f}, valid acc {100 * acc:.2f}%')
            torch.save(model.state_dict(), os.path.join(args.out_dir, f'{args.model}_{epoch}.pt'))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Trains a ViT with attorch layers.')
    parser.add_argument('--data-dir', type=str, required=True)
    parser.add_argument('--out-dir', type=str, default='.')
    parser.add_argument('--model', type=str, default='vit_s16', choices=list(MODELS))
    parser.add_argument('--pytorch', action='store_true',
                        help='Use PyTorch layers instead of attorch (baseline).')
    parser.add_argument('--epochs', type=int, default=90)
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--num-workers', type=int, default=8)
    parser.add_argument('--amp', action='store_true', help='Mixed precision training.')
    parser.add_argument('--backend', type=str, default='nccl',
                        help='torch.distributed backend (nccl or gloo).')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--log-every', type=int, default=50)
    parser.add_argument('--profile', action='store_true',
                        help='Emit NVTX ranges for Nsight Systems.')
    main(parser.parse_args())
