# -*- coding: utf-8 -*-
"""
PyTorch re-implementation of "Instance-level Human Parsing via Part Grouping Network" (CIHP-PGN, ECCV'18).

Distributed training entry point:

    python -m torch.distributed.launch --nproc_per_node=4 train_pgn.py \
        --data-root ./datasets/CIHP --batch-size 4 --sync-bn --amp native

Single GPU runs work as well (WORLD_SIZE unset -> no process group).
"""
import argparse
import logging
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP

try:
    from apex import amp as apex_amp
    from apex.parallel import convert_syncbn_model
    HAS_APEX = True
except ImportError:
    apex_amp = None
    HAS_APEX = False

from networks.pgn import PGNNet
from dataset.cihp import CIHPDataset, CIHPValDataset
from utils.loss import PGNLoss
from utils.lr_scheduler import PolyLR
from utils.metrics import fast_hist, per_class_iu

logger = logging.getLogger('pgn')


def parse_args():
    parser = argparse.ArgumentParser(description='Part Grouping Network training')
    parser.add_argument('--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))
    parser.add_argument('--data-root', default='./datasets/CIHP')
    parser.add_argument('--backbone', default='resnet101', choices=['resnet50', 'resnet101'])
    parser.add_argument('--pretrained', default='./pretrained/resnet101-5d3b4d8f.pth')
    parser.add_argument('--num-classes', type=int, default=20)
    parser.add_argument('--crop-size', type=int, nargs=2, default=[512, 512])
    parser.add_argument('--batch-size', type=int, default=4, help='images per GPU')
    parser.add_argument('--workers', type=int, default=4)
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--lr', type=float, default=1e-2)
    parser.add_argument('--momentum', type=float, default=0.9)
    parser.add_argument('--weight-decay', type=float, default=5e-4)
    parser.add_argument('--edge-weight', type=float, default=1.0)
    parser.add_argument('--offset-weight', type=float, default=0.05)
    parser.add_argument('--sync-bn', action='store_true')
    parser.add_argument('--amp', choices=['none', 'apex', 'native'], default='native')
    parser.add_argument('--amp-dtype', choices=['fp16', 'bf16'], default='fp16')
    parser.add_argument('--opt-level', default='O1', help='apex opt level')
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--save-dir', default='./checkpoints/pgn')
    parser.add_argument('--resume', default='')
    parser.add_argument('--print-freq', type=int, default=20)
    parser.add_argument('--eval-every', type=int, default=5)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def setup_logger(save_dir):
    logger.setLevel(logging.INFO)
    fmt = logging.Formatter('[%(asctime)s] %(message)s', datefmt='%m-%d %H:%M:%S')
    sh = logging.StreamHandler()
    sh.setFormatter(fmt)
    logger.addHandler(sh)
    if is_main_process():
        os.makedirs(save_dir, exist_ok=True)
        fh = logging.FileHandler(os.path.join(save_dir, 'train.log'))
        fh.setFormatter(fmt)
        logger.addHandler(fh)


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def instance_vote(parsing, instance_map, num_instances):
    """Assign every grouped instance the majority part label inside it (used to
    build the instance-level parsing maps for the AP^r evaluation)."""
    inst_labels = torch.zeros(num_instances + 1, dtype=torch.long, device=parsing.device)
    for k in range(1, num_instances + 1):
        mask = instance_map == k
        if mask.any():
            votes = parsing[mask]
            votes = votes[votes > 0]
            if votes.numel() > 0:
                inst_labels[k] = votes.mode()[0]
    return inst_labels


@torch.no_grad()
def validate(model, loader, device, num_classes):
    model.eval()
    hist = torch.zeros(num_classes, num_classes, dtype=torch.float64)
    for batch in loader:
        image = batch['image'].to(device, non_blocking=True)
        label = batch['parsing']
        out = model(image)
        parsing_logits = F.interpolate(out['parsing'], size=label.shape[-2:], mode='bilinear',
                                       align_corners=True)
        pred = parsing_logits.argmax(1).cpu()
        hist += fast_hist(label.flatten(), pred.flatten(), num_classes)
    if dist.is_initialized():
        hist = hist.to(device)
        dist.all_reduce(hist)
        hist = hist.cpu()
    iou = per_class_iu(hist)
    model.train()
    return float(np.nanmean(iou.numpy()))


def main():
    args = parse_args()
    args.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1

    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        world_size = dist.get_world_size()
    else:
        world_size = 1
    device = torch.device('cuda', args.local_rank)

    setup_logger(args.save_dir)
    set_seed(args.seed + args.local_rank)
    cudnn.benchmark = True

    if args.amp == 'native' and args.amp_dtype == 'bf16':
        major, _ = torch.cuda.get_device_capability(device)
        if major < 8:
            logger.warning('bf16 autocast needs sm_80 or newer, falling back to fp16')
            args.amp_dtype = 'fp16'
    amp_dtype = torch.bfloat16 if args.amp_dtype == 'bf16' else torch.float16

    # ----------------------------------------------------------------- data
    train_set = CIHPDataset(args.data_root, split='train', crop_size=args.crop_size)
    val_set = CIHPValDataset(args.data_root, split='val')
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=(train_sampler is None),
                              sampler=train_sampler, num_workers=args.workers, pin_memory=True,
                              drop_last=True)
    val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler, num_workers=2)

    # ---------------------------------------------------------------- model
    model = PGNNet(num_classes=args.num_classes, backbone=args.backbone, pretrained=args.pretrained)
    if args.sync_bn and args.distributed:
        if args.amp == 'apex':
            model = convert_syncbn_model(model)
        else:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)

    params = [
        {'params': model.backbone.parameters(), 'lr': args.lr},
        {'params': model.heads.parameters(), 'lr': args.lr * 10},
    ]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)

    if args.amp == 'apex':
        assert HAS_APEX, 'NVIDIA apex is required for --amp apex (pip install -v --no-cache-dir ./apex)'
        model, optimizer = apex_amp.initialize(model, optimizer, opt_level=args.opt_level)
    scaler = torch.cuda.amp.GradScaler(enabled=(args.amp == 'native' and args.amp_dtype == 'fp16'))

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=True)

    criterion = PGNLoss(num_classes=args.num_classes, edge_weight=args.edge_weight,
                        offset_weight=args.offset_weight).to(device)
    iters_per_epoch = len(train_loader)
    scheduler = PolyLR(optimizer, max_iters=args.epochs * iters_per_epoch, power=0.9)

    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        (model.module if args.distributed else model).load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch = ckpt['epoch'] + 1
        if 'scaler' in ckpt:
            scaler.load_state_dict(ckpt['scaler'])
        logger.info('resumed from %s (epoch %d)', args.resume, start_epoch)

    # ---------------------------------------------------------------- train
    model.train()
    best_miou = 0.0
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        tic = time.time()
        for it, batch in enumerate(train_loader):
            image = batch['image'].to(device, non_blocking=True)
            parsing = batch['parsing'].to(device, non_blocking=True)
            edge = batch['edge'].to(device, non_blocking=True)

            with torch.cuda.amp.autocast(enabled=(args.amp == 'native'), dtype=amp_dtype):
                outputs = model(image)
                loss, loss_dict = criterion(outputs, parsing, edge)

            optimizer.zero_grad(set_to_none=True)
            if args.amp == 'apex':
                with apex_amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                optimizer.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            scheduler.step()

            if it % args.print_freq == 0:
                if args.distributed:
                    loss = reduce_tensor(loss.detach(), world_size)
                if is_main_process():
                    mem = torch.cuda.max_memory_allocated() / 1024.0 ** 3
                    logger.info('epoch %d [%d/%d] loss %.4f (parsing %.4f edge %.4f offset %.4f) '
                                'lr %.5f mem %.1fG %.2fs/it',
                                epoch, it, iters_per_epoch, loss.item(), loss_dict['parsing'],
                                loss_dict['edge'], loss_dict['offset'], optimizer.param_groups[0]['lr'],
                                mem, (time.time() - tic) / (it + 1))

        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            miou = validate(model, val_loader, device, args.num_classes)
            if is_main_process():
                logger.info('epoch %d val mIoU %.2f', epoch, miou * 100)
                state = {
                    'epoch': epoch,
                    'model': (model.module if args.distributed else model).state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'scaler': scaler.state_dict(),
                    'miou': miou,
                }
                torch.save(state, os.path.join(args.save_dir, 'latest.pth'))
                if miou > best_miou:
                    best_miou = miou
                    torch.save(state, os.path.join(args.save_dir, 'best.pth'))

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
