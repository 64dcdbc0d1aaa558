"""Train a network with the Generalized Jensen-Shannon (GJS) loss on noisy labels.

Single GPU / DataParallel:
    python train.py --config configs/cifar100/gjs_sym40.json
Multi-GPU (one process per GPU):
    python -m torch.distributed.launch --nproc_per_node=4 train.py --config configs/webvision/gjs.json
"""
import argparse
import json
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data import get_dataset
from losses import get_criterion
from models import get_model
from utils.util import prepare_device, AverageMeter, accuracy, save_checkpoint, setup_logger


def parse_args():
    parser = argparse.ArgumentParser(description='GJS training')
    parser.add_argument('--config', required=True, type=str)
    parser.add_argument('--resume', default='', type=str)
    parser.add_argument('--seed', default=None, type=int)
    parser.add_argument('--local_rank', default=int(os.environ.get('LOCAL_RANK', 0)), type=int)
    parser.add_argument('--out', default='results', type=str)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def init_distributed(cfg, local_rank):
    """Returns (is_distributed, rank, world_size). Launched via torch.distributed.launch/torchrun."""
    if 'WORLD_SIZE' not in os.environ or int(os.environ['WORLD_SIZE']) <= 1:
        return False, 0, 1
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=cfg['dist']['backend'], init_method=cfg['dist'].get('init_method', 'env://'))
    dist.barrier()
    return True, dist.get_rank(), dist.get_world_size()


def reduce_mean(t, world_size):
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def build_optimizer(cfg, model):
    opt = cfg['optimizer']
    if opt['type'] == 'SGD':
        return torch.optim.SGD(model.parameters(), lr=opt['lr'], momentum=opt.get('momentum', 0.9),
                               weight_decay=opt.get('weight_decay', 5e-4), nesterov=opt.get('nesterov', True))
    if opt['type'] == 'Adam':
        return torch.optim.Adam(model.parameters(), lr=opt['lr'], weight_decay=opt.get('weight_decay', 0.0))
    raise ValueError('unknown optimizer %s' % opt['type'])


def train_epoch(epoch, model, loader, criterion, optimizer, scaler, device, cfg, distributed, world_size, logger):
    model.train()
    losses = AverageMeter()
    top1 = AverageMeter()
    t0 = time.time()
    for i, (x, y, idx) in enumerate(loader):
        # GJS consumes several augmented views of every image
        if isinstance(x, (list, tuple)):
            x = [v.to(device, non_blocking=True) for v in x]
        else:
            x = [x.to(device, non_blocking=True)]
        y = y.to(device, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=cfg['amp']):
            logits = [model(v) for v in x]
            loss = criterion(logits, y)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        acc1 = accuracy(logits[0].detach(), y, topk=(1,))[0]
        if distributed:
            loss_v = reduce_mean(loss.detach(), world_size)
            acc1 = reduce_mean(acc1, world_size)
        else:
            loss_v = loss.detach()
        losses.update(loss_v.item(), y.size(0))
        top1.update(acc1.item(), y.size(0))

        if i % cfg['log_interval'] == 0 and logger is not None:
            logger.info('epoch %d [%d/%d] loss %.4f acc@1 %.2f (%.1fs)'
                        % (epoch, i, len(loader), losses.avg, top1.avg, time.time() - t0))
    if distributed:
        torch.cuda.synchronize()
    return losses.avg, top1.avg


@torch.no_grad()
def evaluate(model, loader, device, distributed, world_size):
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for x, y, _ in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        pred = model(x).argmax(dim=1)
        correct += (pred == y).sum()
        total += y.numel()
    if distributed:
        dist.all_reduce(correct)
        dist.all_reduce(total)
    return (100.0 * correct / total).item()


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    if args.seed is not None:
        cfg['seed'] = args.seed

    distributed, rank, world_size = init_distributed(cfg, args.local_rank)
    set_seed(cfg['seed'] + rank)
    torch.backends.cudnn.benchmark = True

    if distributed:
        device = torch.device('cuda', args.local_rank)
        device_ids = [args.local_rank]
    else:
        device, device_ids = prepare_device(cfg['n_gpu'])

    out_dir = os.path.join(args.out, cfg['name'])
    logger = setup_logger(out_dir) if rank == 0 else None
    if logger is not None:
        logger.info(json.dumps(cfg, indent=2))

    train_set, test_set = get_dataset(cfg)
    train_sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    test_sampler = DistributedSampler(test_set, shuffle=False) if distributed else None
    train_loader = DataLoader(train_set, batch_size=cfg['batch_size'] // world_size, shuffle=(train_sampler is None),
                              sampler=train_sampler, num_workers=cfg['num_workers'], drop_last=True,
                              pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=256, shuffle=False, sampler=test_sampler,
                             num_workers=cfg['num_workers'])

    model = get_model(cfg['arch'], num_classes=cfg['num_classes']).to(device)
    if distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=device_ids, output_device=args.local_rank)
    elif len(device_ids) > 1:
        model = nn.DataParallel(model, device_ids=device_ids)

    criterion = get_criterion(cfg)
    optimizer = build_optimizer(cfg, model)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=cfg['milestones'], gamma=0.1)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg['amp'])

    start_epoch = 0
    best_acc = 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cpu')
        (model.module if hasattr(model, 'module') else model).load_state_dict(ckpt['state_dict'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        start_epoch = ckpt['epoch'] + 1
        best_acc = ckpt.get('best_acc', 0.0)

    for epoch in range(start_epoch, cfg['epochs']):
        if distributed:
            train_sampler.set_epoch(epoch)
        train_loss, train_acc = train_epoch(epoch, model, train_loader, criterion, optimizer, scaler, device, cfg,
                                            distributed, world_size, logger)
        scheduler.step()
        test_acc = evaluate(model, test_loader, device, distributed, world_size)

        if rank == 0:
            is_best = test_acc > best_acc
            best_acc = max(best_acc, test_acc)
            logger.info('epoch %d train_loss %.4f train_acc %.2f test_acc %.2f best %.2f max_mem %.0fMiB'
                        % (epoch, train_loss, train_acc, test_acc, best_acc,
                           torch.cuda.max_memory_allocated() / 2 ** 20))
            save_checkpoint({'epoch': epoch,
                             'state_dict': (model.module if hasattr(model, 'module') else model).state_dict(),
                             'optimizer': optimizer.state_dict(),
                             'scheduler': scheduler.state_dict(),
                             'best_acc': best_acc}, is_best, out_dir)

    if distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
