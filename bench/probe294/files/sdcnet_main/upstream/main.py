#!/usr/bin/env python3
"""Train / validate SDC-Net (video prediction by spatially-displaced convolution).

Single node, multi GPU:
    python -m torch.distributed.launch --nproc_per_node=8 main.py --distributed --fp16 ...
"""
import argparse
import os
import sys
import time
from glob import glob

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tensorboardX import SummaryWriter

import datasets
import models
from utils import tools

try:
    from apex import amp
except ImportError:
    amp = None

parser = argparse.ArgumentParser(description='A PyTorch Implementation of SDCNet2D')

parser.add_argument('--model', metavar='MODEL', default='SDCNet2D',
                    help='model architecture (default: SDCNet2D)')
parser.add_argument('-s', '--save', '--save_root', default='./', type=str,
                    help='directory for saving')
parser.add_argument('-n', '--name', default='sdc_run', type=str,
                    help='experiment name')
parser.add_argument('--dataset', default='FrameLoader', type=str,
                    help='which dataset class to use')
parser.add_argument('--train_file', type=str, help='path to training video folders')
parser.add_argument('--val_file', type=str, help='path to validation video folders')
parser.add_argument('--flownet2_checkpoint', default='./flownet2_pytorch/FlowNet2_checkpoint.pth.tar', type=str)
parser.add_argument('--sequence_length', default=2, type=int, help='number of interframes')
parser.add_argument('--rgb_max', default=255., type=float)
parser.add_argument('--stride', default=64, type=int)
parser.add_argument('--crop_size', type=int, nargs='+', default=[448, 448])
parser.add_argument('--sample_rate', type=int, default=1)
parser.add_argument('--start_index', type=int, default=0)
parser.add_argument('--epochs', default=500, type=int, help='number of total epochs to run')
parser.add_argument('--initial_lr', default=1e-4, type=float)
parser.add_argument('--wd', default=0., type=float)
parser.add_argument('--batch_size', default=2, type=int, help='batch size per GPU')
parser.add_argument('--val_batch_size', default=1, type=int)
parser.add_argument('--workers', default=8, type=int, help='number of data loading workers')
parser.add_argument('--print_freq', default=100, type=int)
parser.add_argument('--save_freq', default=20, type=int)
parser.add_argument('--val_freq', default=10, type=int)
parser.add_argument('--resume', default='', type=str, metavar='PATH',
                    help='path to latest checkpoint (default: none)')
parser.add_argument('--seed', default=1, type=int)
parser.add_argument('--fp16', action='store_true', help='Run model in pseudo-fp16 mode (fp16 storage fp32 math).')
parser.add_argument('--amp_opt_level', default='O1', type=str)
parser.add_argument('--distributed', action='store_true')
parser.add_argument('--local_rank', default=0, type=int)
parser.add_argument('--eval', action='store_true', help='only run validation')
parser.add_argument('--skip_aug', action='store_true')


def get_model(args):
    model = models.__dict__[args.model](args)
    return model


def get_train_and_valid_data_loaders(args):
    train_dataset = datasets.__dict__[args.dataset](args, root=args.train_file, is_training=True)
    val_dataset = datasets.__dict__[args.dataset](args, root=args.val_file, is_training=False)

    if args.distributed:
        train_sampler = DistributedSampler(train_dataset)
        val_sampler = DistributedSampler(val_dataset, shuffle=False)
    else:
        train_sampler = None
        val_sampler = None

    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
                              num_workers=args.workers, pin_memory=True, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_dataset, batch_size=args.val_batch_size, shuffle=False,
                            num_workers=args.workers, pin_memory=True, sampler=val_sampler)
    return train_loader, train_sampler, val_loader


def get_optimizer(model, args):
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(parameters, lr=args.initial_lr, weight_decay=args.wd)
    return optimizer


def save_model(model, optimizer, epoch, global_iteration, args, is_best=False):
    save_dict = {
        'arch': args.model,
        'epoch': epoch,
        'global_iteration': global_iteration,
        'state_dict': model.module.state_dict() if args.distributed else model.state_dict(),
        'optimizer': optimizer.state_dict(),
    }
    if args.fp16:
        save_dict['amp'] = amp.state_dict()
    file_name = os.path.join(args.save_root, '_ckpt_epoch_%03d_iter_%07d.pt.tar' % (epoch, global_iteration))
    torch.save(save_dict, file_name)
    if is_best:
        torch.save(save_dict, os.path.join(args.save_root, 'best.pt.tar'))


def train_epoch(epoch, args, model, optimizer, train_loader, train_logger, global_iteration):
    model.train()
    losses = tools.AverageMeter()
    batch_time = tools.AverageMeter()
    end = time.time()

    for batch_idx, batch in enumerate(train_loader):
        # Set up data dictionary; 'file_names' stay on the host
        inputs = {k: [b.cuda(non_blocking=True) for b in batch[k]] for k in batch if k != 'file_names'}

        optimizer.zero_grad()
        loss, outputs, _ = model(inputs)
        loss = loss.mean()

        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()

        if args.distributed:
            reduced_loss = loss.detach().clone()
            torch.distributed.all_reduce(reduced_loss)
            reduced_loss /= args.world_size
        else:
            reduced_loss = loss.detach()
        losses.update(reduced_loss.item(), args.batch_size)

        global_iteration += 1
        if batch_idx % args.print_freq == 0 and args.rank == 0:
            torch.cuda.synchronize()
            batch_time.update((time.time() - end) / args.print_freq)
            end = time.time()
            train_logger.add_scalar('train/loss', losses.avg, global_iteration)
            train_logger.add_scalar('train/lr', optimizer.param_groups[0]['lr'], global_iteration)
            print('Epoch [{0}][{1}/{2}]  Time {batch_time.avg:.3f}  Loss {loss.val:.4f} ({loss.avg:.4f})  '
                  'Mem {mem:.1f}G'.format(epoch, batch_idx, len(train_loader), batch_time=batch_time,
                                          loss=losses, mem=torch.cuda.max_memory_allocated() / 1e9))

    return global_iteration


def evaluate(args, model, val_loader, val_logger, epoch):
    model.eval()
    loss_meter = tools.AverageMeter()
    psnr_meter = tools.AverageMeter()
    with torch.no_grad():
        for batch_idx, batch in enumerate(val_loader):
            val_inputs = {k: [b.cuda() for b in batch[k]] for k in batch if k != 'file_names'}
            loss, outputs, targets = model(val_inputs)
            loss_meter.update(loss.mean().item(), args.val_batch_size)

            mse = ((outputs.clamp(0, args.rgb_max) - targets) ** 2).mean(dim=(1, 2, 3))
            psnr = 10. * torch.log10(args.rgb_max ** 2 / mse)
            psnr_meter.update(psnr.mean().item(), args.val_batch_size)

    if args.rank == 0:
        val_logger.add_scalar('val/loss', loss_meter.avg, epoch)
        val_logger.add_scalar('val/psnr', psnr_meter.avg, epoch)
        print('Validation epoch {}: loss {:.4f} psnr {:.3f}'.format(epoch, loss_meter.avg, psnr_meter.avg))
    return psnr_meter.avg


def main():
    args = parser.parse_args()

    args.world_size = int(os.environ.get('WORLD_SIZE', 1))
    args.distributed = args.distributed or args.world_size > 1
    args.rank = 0
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        args.rank = torch.distributed.get_rank()
        args.world_size = torch.distributed.get_world_size()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.benchmark = True

    args.save_root = os.path.join(args.save, args.name)
    if args.rank == 0:
        os.makedirs(args.save_root, exist_ok=True)
    train_logger = SummaryWriter(log_dir=os.path.join(args.save_root, 'train'), comment='training')
    val_logger = SummaryWriter(log_dir=os.path.join(args.save_root, 'validation'), comment='validation')

    train_loader, train_sampler, val_loader = get_train_and_valid_data_loaders(args)

    model = get_model(args).cuda()
    optimizer = get_optimizer(model, args)

    if args.fp16:
        assert amp is not None, 'apex is required for --fp16 (pip install -v --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./apex)'
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.amp_opt_level)

    start_epoch, global_iteration = 0, 0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        if args.fp16 and 'amp' in checkpoint:
            amp.load_state_dict(checkpoint['amp'])
        start_epoch = checkpoint['epoch'] + 1
        global_iteration = checkpoint['global_iteration']
        print("Loaded checkpoint '{}' (at epoch {})".format(args.resume, checkpoint['epoch']))

    if args.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                    output_device=args.local_rank)

    if args.eval:
        evaluate(args, model, val_loader, val_logger, start_epoch)
        return

    best_psnr = 0.
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        global_iteration = train_epoch(epoch, args, model, optimizer, train_loader, train_logger, global_iteration)

        if (epoch + 1) % args.val_freq == 0:
            psnr = evaluate(args, model, val_loader, val_logger, epoch)
            if args.rank == 0:
                save_model(model, optimizer, epoch, global_iteration, args, is_best=psnr > best_psnr)
                best_psnr = max(best_psnr, psnr)
        elif (epoch + 1) % args.save_freq == 0 and args.rank == 0:
            save_model(model, optimizer, epoch, global_iteration, args)

        if args.distributed:
            torch.distributed.barrier()


if __name__ == '__main__':
    main()
