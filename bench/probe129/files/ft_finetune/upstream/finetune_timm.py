#!/usr/bin/env python3
"""Fine-tune a timm backbone on a custom ImageFolder dataset.

Single node, multi-GPU via torchrun:

    torchrun --nproc_per_node=8 finetune_timm.py --data /data/flowers102 \
        --model convnext_small.fb_in22k --epochs 30 --batch-size 64 --amp

Single GPU:

    python finetune_timm.py --data /data/flowers102 --model resnet50.a1_in1k --gpu 0
"""
import argparse
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets

import timm
from timm.data import Mixup, create_transform, resolve_data_config
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.optim import create_optimizer_v2
from timm.scheduler import CosineLRScheduler
from timm.utils import AverageMeter, ModelEmaV2, accuracy

logger = logging.getLogger('finetune')


def get_args():
    p = argparse.ArgumentParser('timm fine-tuning')
    p.add_argument('--data', required=True, help='ImageFolder root with train/ and val/')
    p.add_argument('--model', default='resnet50.a1_in1k')
    p.add_argument('--pretrained', action='store_true', default=True)
    p.add_argument('--num-classes', type=int, default=None)
    p.add_argument('--epochs', type=int, default=30)
    p.add_argument('--batch-size', type=int, default=64, help='per-GPU batch size')
    p.add_argument('--workers', type=int, default=8)
    p.add_argument('--opt', default='adamw')
    p.add_argument('--lr', type=float, default=5e-4)
    p.add_argument('--weight-decay', type=float, default=0.05)
    p.add_argument('--warmup-epochs', type=int, default=3)
    p.add_argument('--smoothing', type=float, default=0.1)
    p.add_argument('--mixup', type=float, default=0.0)
    p.add_argument('--cutmix', type=float, default=0.0)
    p.add_argument('--drop-path', type=float, default=0.1)
    p.add_argument('--clip-grad', type=float, default=None)
    p.add_argument('--amp', action='store_true', help='mixed precision (fp16 autocast + GradScaler)')
    p.add_argument('--model-ema', action='store_true')
    p.add_argument('--model-ema-decay', type=float, default=0.9998)
    p.add_argument('--gpu', type=int, default=0, help='GPU index for single-process runs')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--output', default='./output/finetune')
    p.add_argument('--resume', default='')
    p.add_argument('--log-every', type=int, default=50)
    return p.parse_args()


def setup_distributed(args):
    """Initialise torch.distributed from torchrun env vars; returns (distributed, rank, world_size, local_rank)."""
    if 'RANK' not in os.environ or 'WORLD_SIZE' not in os.environ:
        torch.cuda.set_device(args.gpu)
        return False, 0, 1, args.gpu
    rank = int(os.environ['RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    local_rank = int(os.environ['LOCAL_RANK'])
    os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank)
    dist.barrier()
    return True, rank, world_size, local_rank


def is_main(rank):
    return rank == 0


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_loaders(args, data_config, distributed):
    train_tf = create_transform(**data_config, is_training=True, auto_augment='rand-m9-mstd0.5-inc1')
    val_tf = create_transform(**data_config, is_training=False)
    train_set = datasets.ImageFolder(os.path.join(args.data, 'train'), transform=train_tf)
    val_set = datasets.ImageFolder(os.path.join(args.data, 'val'), transform=val_tf)

    train_sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if distributed else None

    train_loader = DataLoader(
        train_set,
        batch_size=args.batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=args.workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=args.workers > 0,
    )
    val_loader = DataLoader(
        val_set,
        batch_size=args.batch_size * 2,
        shuffle=False,
        sampler=val_sampler,
        num_workers=args.workers,
        pin_memory=True,
    )
    return train_set, train_loader, train_sampler, val_loader


def train_one_epoch(model, loader, optimizer, criterion, scaler, lr_scheduler, epoch, args,
                    mixup_fn=None, model_ema=None, rank=0):
    model.train()
    loss_m = AverageMeter()
    batch_time = AverageMeter()
    num_steps = len(loader)
    end = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        if mixup_fn is not None:
            images, targets = mixup_fn(images, targets)

        with torch.cuda.amp.autocast(enabled=args.amp):
            outputs = model(images)
            loss = criterion(outputs, targets)

        if not math.isfinite(loss.item()):
            raise RuntimeError(f'Loss is {loss.item()}, stopping training')

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if args.clip_grad is not None:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        scaler.step(optimizer)
        scaler.update()
        lr_scheduler.step_update(epoch * num_steps + step)

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()
        loss_m.update(loss.item(), images.size(0))
        batch_time.update(time.time() - end)
        end = time.time()

        if is_main(rank) and step % args.log_every == 0:
            lr = optimizer.param_groups[0]['lr']
            mem = torch.cuda.max_memory_allocated() / (1024 ** 3)
            logger.info(
                f'epoch {epoch} [{step}/{num_steps}] loss {loss_m.val:.4f} ({loss_m.avg:.4f}) '
                f'lr {lr:.2e} time {batch_time.avg:.3f}s mem {mem:.1f}G')
    return loss_m.avg


@torch.no_grad()
def evaluate(model, loader, distributed, device):
    model.eval()
    correct1 = torch.zeros(1, device=device)
    correct5 = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            outputs = model(images)
        acc1, acc5 = accuracy(outputs, targets, topk=(1, 5))
        n = images.size(0)
        correct1 += acc1 * n / 100.
        correct5 += acc5 * n / 100.
        total += n
    if distributed:
        for t in (correct1, correct5, total):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (100. * correct1 / total).item(), (100. * correct5 / total).item()


def save_checkpoint(path, model, optimizer, scaler, epoch, best_acc, model_ema=None):
    state = {
        'epoch': epoch,
        'model': model.module.state_dict() if hasattr(model, 'module') else model.state_dict(),
        'optimizer': optimizer.state_dict(),
        'scaler': scaler.state_dict(),
        'best_acc': best_acc,
    }
    if model_ema is not None:
        state['model_ema'] = model_ema.module.state_dict()
    torch.save(state, path)


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')

    distributed, rank, world_size, local_rank = setup_distributed(args)
    device = torch.device('cuda', local_rank)
    seed_everything(args.seed, rank)
    cudnn.benchmark = True

    if is_main(rank):
        Path(args.output).mkdir(parents=True, exist_ok=True)
        logger.info(f'world size {world_size}, device {torch.cuda.get_device_name(local_rank)}')

    num_classes = args.num_classes or len(os.listdir(os.path.join(args.data, 'train')))
    model = timm.create_model(
        args.model,
        pretrained=args.pretrained,
        num_classes=num_classes,
        drop_path_rate=args.drop_path,
    )
    data_config = resolve_data_config({}, model=model)
    model.cuda()

    model_ema = None
    if args.model_ema:
        model_ema = ModelEmaV2(model, decay=args.model_ema_decay)

    if distributed:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)
    model_without_ddp = model.module if distributed else model

    train_set, train_loader, train_sampler, val_loader = build_loaders(args, data_config, distributed)

    mixup_fn = None
    if args.mixup > 0 or args.cutmix > 0:
        mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix,
                         label_smoothing=args.smoothing, num_classes=num_classes)
        criterion = SoftTargetCrossEntropy()
    elif args.smoothing > 0:
        criterion = LabelSmoothingCrossEntropy(smoothing=args.smoothing)
    else:
        criterion = nn.CrossEntropyLoss()
    criterion = criterion.cuda()

    # linear lr scaling w.r.t. a reference global batch of 512
    lr = args.lr * args.batch_size * world_size / 512
    optimizer = create_optimizer_v2(model_without_ddp, opt=args.opt, lr=lr, weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    steps_per_epoch = len(train_loader)
    lr_scheduler = CosineLRScheduler(
        optimizer,
        t_initial=args.epochs * steps_per_epoch,
        lr_min=1e-6,
        warmup_t=args.warmup_epochs * steps_per_epoch,
        warmup_lr_init=1e-6,
        t_in_epochs=False,
    )

    start_epoch = 0
    best_acc = 0.
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cpu')
        model_without_ddp.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch = ckpt['epoch'] + 1
        best_acc = ckpt.get('best_acc', 0.)
        if model_ema is not None and 'model_ema' in ckpt:
            model_ema.module.load_state_dict(ckpt['model_ema'])
        del ckpt
        torch.cuda.empty_cache()

    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        t0 = time.time()
        train_loss = train_one_epoch(
            model, train_loader, optimizer, criterion, scaler, lr_scheduler, epoch, args,
            mixup_fn=mixup_fn, model_ema=model_ema, rank=rank)
        top1, top5 = evaluate(model, val_loader, distributed, device)
        ema_top1 = None
        if model_ema is not None:
            ema_top1, _ = evaluate(model_ema.module, val_loader, distributed, device)

        if is_main(rank):
            logger.info(
                f'epoch {epoch} done in {time.time() - t0:.0f}s: train_loss {train_loss:.4f} '
                f'top1 {top1:.2f} top5 {top5:.2f}' + (f' ema_top1 {ema_top1:.2f}' if ema_top1 else ''))
            save_checkpoint(os.path.join(args.output, 'last.pth'), model, optimizer, scaler, epoch, best_acc,
                            model_ema)
            if top1 > best_acc:
                best_acc = top1
                save_checkpoint(os.path.join(args.output, 'best.pth'), model, optimizer, scaler, epoch, best_acc,
                                model_ema)
            with open(os.path.join(args.output, 'log.jsonl'), 'a') as f:
                f.write(json.dumps(dict(epoch=epoch, train_loss=train_loss, top1=top1, top5=top5,
                                        ema_top1=ema_top1)) + '\n')

    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    if is_main(rank):
        logger.info(f'best top1 {best_acc:.2f}')


if __name__ == '__main__':
    main()
