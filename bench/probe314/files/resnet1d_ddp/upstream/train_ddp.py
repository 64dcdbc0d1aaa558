"""Multi-GPU training of a 1D ResNet on a large time-series classification dataset.

Launch with torchrun (see launch_ddp.sh):
    torchrun --nproc_per_node=4 train_ddp.py --data_dir /data/InsectSound --epochs 60 --amp

The dataset is expected as x_train.npy (N, C, L) / y_train.npy (N,) and x_test.npy / y_test.npy.
"""
import argparse
import math
import os
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from resnet1d import ResNet1D


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--data_dir', type=str, required=True)
    p.add_argument('--epochs', type=int, default=60)
    p.add_argument('--batch_size', type=int, default=256, help='per-GPU batch size')
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--weight_decay', type=float, default=1e-2)
    p.add_argument('--base_filters', type=int, default=64)
    p.add_argument('--n_block', type=int, default=16)
    p.add_argument('--num_workers', type=int, default=8)
    p.add_argument('--amp', action='store_true', help='fp16 autocast + GradScaler')
    p.add_argument('--sync_bn', action='store_true')
    p.add_argument('--out_dir', type=str, default='./checkpoints')
    p.add_argument('--resume', type=str, default='')
    return p.parse_args()


class NpyDataset(Dataset):
    def __init__(self, x_path, y_path, mmap=True):
        self.x = np.load(x_path, mmap_mode='r' if mmap else None)
        self.y = np.load(y_path).astype(np.int64)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        x = np.asarray(self.x[i], dtype=np.float32)
        x = (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + 1e-6)
        return torch.from_numpy(x), self.y[i]


def setup_distributed():
    "Initialises the default process group from the env:// variables set by torchrun"
    rank = int(os.environ.get('RANK', 0))
    world_size = int(os.environ.get('WORLD_SIZE', 1))
    local_rank = int(os.environ.get('LOCAL_RANK', 0))
    os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank,
                            timeout=timedelta(minutes=30))
    dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_device():
    "Device for tensors that go through collectives (NCCL only works with GPU tensors)"
    if dist.get_backend() == 'nccl':
        return torch.device('cuda', torch.cuda.current_device())
    return torch.device('cpu')


def all_reduce_stats(loss_sum, correct, total):
    stats = torch.tensor([loss_sum, correct, total], dtype=torch.float64, device=reduce_device())
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    loss_sum, correct, total = stats.tolist()
    return loss_sum / total, correct / total


def cosine_lr(optimizer, base_lr, epoch, epochs, warmup=5):
    if epoch < warmup:
        lr = base_lr * (epoch + 1) / warmup
    else:
        lr = 0.5 * base_lr * (1 + math.cos(math.pi * (epoch - warmup) / (epochs - warmup)))
    for g in optimizer.param_groups:
        g['lr'] = lr
    return lr


def train_one_epoch(model, loader, optimizer, scaler, local_rank, amp):
    model.train()
    loss_sum, correct, total = 0.0, 0, 0
    for x, y in loader:
        x = x.cuda(local_rank, non_blocking=True)
        y = y.cuda(local_rank, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=amp):
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        loss_sum += loss.item() * y.size(0)
        correct += (logits.argmax(1) == y).sum().item()
        total += y.size(0)
    return all_reduce_stats(loss_sum, correct, total)


@torch.no_grad()
def evaluate(model, loader, local_rank, amp):
    model.eval()
    loss_sum, correct, total = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(local_rank, non_blocking=True), y.to(local_rank, non_blocking=True)
        with torch.autocast('cuda', dtype=torch.float16, enabled=amp):
            logits = model(x)
        loss_sum += F.cross_entropy(logits.float(), y, reduction='sum').item()
        correct += (logits.argmax(1) == y).sum().item()
        total += y.size(0)
    return all_reduce_stats(loss_sum, correct, total)


def main():
    args = get_args()
    rank, world_size, local_rank = setup_distributed()
    torch.manual_seed(1234 + rank)
    torch.backends.cudnn.benchmark = True

    train_ds = NpyDataset(os.path.join(args.data_dir, 'x_train.npy'), os.path.join(args.data_dir, 'y_train.npy'))
    test_ds = NpyDataset(os.path.join(args.data_dir, 'x_test.npy'), os.path.join(args.data_dir, 'y_test.npy'))
    n_classes = int(max(train_ds.y.max(), test_ds.y.max()) + 1)
    in_channels = train_ds.x.shape[1]

    train_sampler = DistributedSampler(train_ds, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True)
    test_sampler = DistributedSampler(test_ds, num_replicas=world_size, rank=rank, shuffle=False)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler, num_workers=args.num_workers,
                          pin_memory=True, drop_last=True, persistent_workers=True)
    test_dl = DataLoader(test_ds, batch_size=args.batch_size * 2, sampler=test_sampler,
                         num_workers=args.num_workers, pin_memory=True)

    model = ResNet1D(in_channels=in_channels, base_filters=args.base_filters, kernel_size=16, stride=2,
                     groups=32, n_block=args.n_block, n_classes=n_classes, downsample_gap=6, increasefilter_gap=12)
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.cuda(local_rank)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, broadcast_buffers=False)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f'cuda:{local_rank}')
        model.module.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch = ckpt['epoch'] + 1

    if is_main():
        n_params = sum(p.numel() for p in model.parameters())
        print(f'world size {world_size} | {n_params / 1e6:.2f}M params | {len(train_ds)} train samples')
        os.makedirs(args.out_dir, exist_ok=True)

    best_acc = 0.0
    for epoch in range(start_epoch, args.epochs):
        train_sampler.set_epoch(epoch)
        lr = cosine_lr(optimizer, args.lr, epoch, args.epochs)
        torch.cuda.synchronize()
        t0 = time.time()
        tr_loss, tr_acc = train_one_epoch(model, train_dl, optimizer, scaler, local_rank, args.amp)
        torch.cuda.synchronize(local_rank)
        epoch_time = time.time() - t0
        te_loss, te_acc = evaluate(model, test_dl, local_rank, args.amp)
        if is_main():
            mem = torch.cuda.max_memory_allocated() / 2**30
            print(f'epoch {epoch:3d} | lr {lr:.2e} | train {tr_loss:.4f}/{tr_acc:.4f} | '
                  f'test {te_loss:.4f}/{te_acc:.4f} | {epoch_time:.0f}s | mem {mem:.1f}G')
            ckpt = dict(model=model.module.state_dict(), optimizer=optimizer.state_dict(),
                        scaler=scaler.state_dict(), epoch=epoch, test_acc=te_acc)
            torch.save(ckpt, os.path.join(args.out_dir, 'last.pth'))
            if te_acc > best_acc:
                best_acc = te_acc
                torch.save(ckpt, os.path.join(args.out_dir, 'best.pth'))

    if is_main():
        print(f'best test accuracy: {best_acc:.4f}')
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
