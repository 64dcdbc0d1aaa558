import os
import sys
import time
import json
import random
import argparse
import datetime

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.cuda.amp import autocast, GradScaler
from torch.utils.tensorboard import SummaryWriter

import utils
from utils import AverageMeter, seed_everything, convert_state_dict
from models import restormer_arch
from data.docres_dataset import DocResTrainDataset, DocResValDataset
from loss.metrics import psnr, ssim_torch


TASKS = ['dewarping', 'deshadowing', 'appearance', 'deblurring', 'binarization']


def get_args():
    parser = argparse.ArgumentParser('DocRes training')
    parser.add_argument('--config', type=str, default='configs/train.json')
    parser.add_argument('--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))
    parser.add_argument('--batch_size', type=int, default=4, help='per GPU')
    parser.add_argument('--total_iter', type=int, default=100000)
    parser.add_argument('--lr', type=float, default=2e-4)
    parser.add_argument('--num_workers', type=int, default=8)
    parser.add_argument('--im_size', type=int, default=256)
    parser.add_argument('--resume', type=str, default=None)
    parser.add_argument('--amp', action='store_true', help='mixed precision training')
    parser.add_argument('--logdir', type=str, default='./checkpoints/')
    parser.add_argument('--val_interval', type=int, default=2000)
    parser.add_argument('--seed', type=int, default=42)
    return parser.parse_args()


def setup_distributed(args):
    args.world_size = int(os.environ.get('WORLD_SIZE', 1))
    args.distributed = args.world_size > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        args.rank = dist.get_rank()
    else:
        args.rank = 0
    args.device = torch.device('cuda', args.local_rank)
    return args


def is_main(args):
    return args.rank == 0


def build_model():
    return restormer_arch.Restormer(
        inp_channels=6,
        out_channels=3,
        dim=48,
        num_blocks=[2, 3, 3, 4],
        num_refinement_blocks=4,
        heads=[1, 2, 4, 8],
        ffn_expansion_factor=2.66,
        bias=False,
        LayerNorm_type='WithBias',
        dual_pixel_task=True,
    )


def task_loss(task, pred, gt, base_coord=None):
    if task == 'dewarping':
        # regress the backward map offsets on the first two channels
        return F.l1_loss(pred[:, :2], gt[:, :2])
    if task == 'binarization':
        return F.cross_entropy(pred[:, :2], gt[:, 0].long())
    return F.l1_loss(pred, gt)


def reduce_tensor(t, world_size):
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


@torch.no_grad()
def validate(model, loader, args):
    model.eval()
    scores = {t: AverageMeter() for t in TASKS}
    for batch in loader:
        in_im = batch['in_im'].to(args.device, non_blocking=True)
        gt = batch['gt'].to(args.device, non_blocking=True)
        task = batch['task'][0]
        with autocast(enabled=args.amp):
            pred = model(in_im)
        if task in ('deshadowing', 'appearance', 'deblurring'):
            scores[task].update(psnr(pred.float().clamp(0, 1), gt).item(), in_im.size(0))
        elif task == 'dewarping':
            scores[task].update(-F.l1_loss(pred[:, :2].float(), gt[:, :2]).item(), in_im.size(0))
    model.train()
    return {t: m.avg for t, m in scores.items() if m.count > 0}


def main():
    args = setup_distributed(get_args())
    seed_everything(args.seed + args.rank)
    with open(args.config) as f:
        cfg = json.load(f)

    if is_main(args):
        os.makedirs(args.logdir, exist_ok=True)
        writer = SummaryWriter(os.path.join(args.logdir, 'tb'))
        print(json.dumps(vars(args), indent=2, default=str))

    train_set = DocResTrainDataset(cfg['datasets'], im_size=args.im_size, tasks=TASKS)
    val_set = DocResValDataset(cfg['val_datasets'], im_size=args.im_size)
    sampler = DistributedSampler(train_set, shuffle=True) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              shuffle=(sampler is None), num_workers=args.num_workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2)

    model = build_model()
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(args.device)
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.total_iter, eta_min=1e-6)
    scaler = GradScaler(enabled=args.amp)

    start_iter = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=args.device)
        state = convert_state_dict(ckpt['model_state'])
        (model.module if args.distributed else model).load_state_dict(state)
        optimizer.load_state_dict(ckpt['optimizer_state'])
        scheduler.load_state_dict(ckpt['scheduler_state'])
        start_iter = ckpt['iter']
        if is_main(args):
            print('resumed from {} @ iter {}'.format(args.resume, start_iter))

    loss_meter = AverageMeter()
    epoch = 0
    it = start_iter
    t0 = time.time()
    model.train()
    while it < args.total_iter:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in train_loader:
            in_im = batch['in_im'].cuda(non_blocking=True)
            gt = batch['gt'].cuda(non_blocking=True)
            task = batch['task'][0]

            optimizer.zero_grad(set_to_none=True)
            with autocast(enabled=args.amp):
                pred = model(in_im)
                loss = task_loss(task, pred, gt)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            if args.distributed:
                loss = reduce_tensor(loss.detach(), args.world_size)
            loss_meter.update(loss.item(), in_im.size(0))
            it += 1

            if is_main(args) and it % 50 == 0:
                eta = (time.time() - t0) / (it - start_iter) * (args.total_iter - it)
                mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                print('[{}] iter {}/{}  task {:<12s} loss {:.4f} ({:.4f})  lr {:.2e}  mem {:.1f}G  eta {}'.format(
                    datetime.datetime.now().strftime('%m-%d %H:%M:%S'), it, args.total_iter, task,
                    loss_meter.val, loss_meter.avg, scheduler.get_last_lr()[0], mem,
                    str(datetime.timedelta(seconds=int(eta)))))
                writer.add_scalar('train/loss', loss_meter.val, it)
                writer.add_scalar('train/lr', scheduler.get_last_lr()[0], it)

            if it % args.val_interval == 0:
                if is_main(args):
                    scores = validate(model, val_loader, args)
                    for k, v in scores.items():
                        writer.add_scalar('val/' + k, v, it)
                    print('val @ {}: {}'.format(it, scores))
                    state = {'iter': it,
                             'model_state': model.state_dict(),
                             'optimizer_state': optimizer.state_dict(),
                             'scheduler_state': scheduler.state_dict()}
                    torch.save(state, os.path.join(args.logdir, 'docres_{}.pkl'.format(it)))
                if args.distributed:
                    dist.barrier()
            if it >= args.total_iter:
                break
        epoch += 1

    if is_main(args):
        torch.save({'iter': it, 'model_state': model.state_dict()}, os.path.join(args.logdir, 'docres.pkl'))
        writer.close()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
