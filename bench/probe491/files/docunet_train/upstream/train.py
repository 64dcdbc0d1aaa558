# -*- coding: utf-8 -*-
"""
DocUNet: Document Image Unwarping via A Stacked U-Net (CVPR 2018)
Unofficial PyTorch re-implementation -- training script.

Usage:
    python train.py --config configs/docunet.yaml
    python train.py --config configs/docunet.yaml --gpu_ids 0,1 --resume checkpoints/last.pth
"""
import os
import sys
import time
import argparse
import subprocess
import random

import yaml
import numpy as np
import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from models.docunet import DocUNet
from models.loss import DocUNetLoss
from data.doc_dataset import SyntheticDocDataset
from utils.flow_inverse import flow_to_rgb


def parse_args():
    parser = argparse.ArgumentParser(description='Train DocUNet')
    parser.add_argument('--config', type=str, default='configs/docunet.yaml')
    parser.add_argument('--gpu_ids', type=str, default=None,
                        help='comma separated gpu ids, e.g. "0,1". Default: the freest gpu')
    parser.add_argument('--resume', type=str, default=None)
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--log_dir', type=str, default='runs/docunet')
    return parser.parse_args()


def pick_free_gpu():
    """Return the index of the GPU with the most free memory (asks nvidia-smi)."""
    out = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.free', '--format=csv,nounits,noheader'])
    free = [int(x) for x in out.decode().strip().split('\n')]
    return int(np.argmax(free))


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


def adjust_learning_rate(optimizer, epoch, cfg):
    lr = cfg['train']['lr'] * (cfg['train']['lr_decay'] ** (epoch // cfg['train']['lr_step']))
    for group in optimizer.param_groups:
        group['lr'] = lr
    return lr


def save_checkpoint(state, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(state, path)
    print('=> saved checkpoint to {}'.format(path))


def train_one_epoch(model, loader, criterion, optimizer, epoch, writer, cfg):
    model.train()
    loss_meter = AverageMeter()
    l1_meter = AverageMeter()
    t0 = time.time()
    for i, (img, flow) in enumerate(loader):
        img = img.cuda(non_blocking=True)
        flow = flow.cuda(non_blocking=True)

        pred1, pred2 = model(img)
        loss1, l1_1 = criterion(pred1, flow)
        loss2, l1_2 = criterion(pred2, flow)
        loss = loss1 + loss2

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        loss_meter.update(loss.item(), img.size(0))
        l1_meter.update(l1_2.item(), img.size(0))

        step = epoch * len(loader) + i
        if i % cfg['train']['print_freq'] == 0:
            print('Epoch [{}][{}/{}]  loss {:.4f} ({:.4f})  L1 {:.4f}  {:.2f}s/it'.format(
                epoch, i, len(loader), loss_meter.val, loss_meter.avg, l1_meter.avg,
                (time.time() - t0) / (i + 1)))
            writer.add_scalar('train/loss', loss_meter.val, step)
            writer.add_scalar('train/l1', l1_meter.val, step)
        if i % cfg['train']['vis_freq'] == 0:
            vis = flow_to_rgb(pred2[0].detach().cpu().numpy())
            writer.add_image('train/pred_flow', vis, step, dataformats='HWC')
    return loss_meter.avg


@torch.no_grad()
def validate(model, loader, criterion, epoch, writer):
    model.eval()
    meter = AverageMeter()
    for img, flow in loader:
        img = img.cuda()
        flow = flow.cuda()
        _, pred = model(img)
        _, l1 = criterion(pred, flow)
        meter.update(l1.item(), img.size(0))
    writer.add_scalar('val/l1', meter.avg, epoch)
    print('>> val epoch {}  L1 {:.4f}'.format(epoch, meter.avg))
    return meter.avg


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    if args.gpu_ids is None:
        args.gpu_ids = cfg['train'].get('gpus') or str(pick_free_gpu())
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids
    n_gpus = len(args.gpu_ids.split(','))
    print('using GPU(s): {}'.format(args.gpu_ids))

    set_seed(args.seed)
    cudnn.benchmark = True

    train_set = SyntheticDocDataset(cfg['data']['root'], split='train',
                                    img_size=cfg['data']['img_size'], augment=True)
    val_set = SyntheticDocDataset(cfg['data']['root'], split='val',
                                  img_size=cfg['data']['img_size'], augment=False)
    train_loader = DataLoader(train_set, batch_size=cfg['train']['batch_size'] * n_gpus,
                              shuffle=True, num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg['train']['batch_size'],
                            shuffle=False, num_workers=args.workers // 2)

    model = DocUNet(in_channels=3, out_channels=2,
                    base_channels=cfg['model']['base_channels'],
                    depth=cfg['model']['depth'])
    model = nn.DataParallel(model).cuda()
    criterion = DocUNetLoss(lam=cfg['loss']['lambda'])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg['train']['lr'],
                                 weight_decay=cfg['train']['weight_decay'])

    start_epoch = 0
    best = float('inf')
    if args.resume and os.path.isfile(args.resume):
        ckpt = torch.load(args.resume)
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch = ckpt['epoch'] + 1
        best = ckpt.get('best', best)
        print('=> resumed from {} (epoch {})'.format(args.resume, ckpt['epoch']))

    writer = SummaryWriter(args.log_dir)
    for epoch in range(start_epoch, cfg['train']['epochs']):
        lr = adjust_learning_rate(optimizer, epoch, cfg)
        writer.add_scalar('train/lr', lr, epoch)
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer, epoch, writer, cfg)
        val_l1 = validate(model, val_loader, criterion, epoch, writer)

        state = {'epoch': epoch, 'model': model.state_dict(),
                 'optimizer': optimizer.state_dict(), 'best': min(best, val_l1)}
        save_checkpoint(state, os.path.join(cfg['train']['ckpt_dir'], 'last.pth'))
        if val_l1 < best:
            best = val_l1
            save_checkpoint(state, os.path.join(cfg['train']['ckpt_dir'], 'best.pth'))
        print('epoch {} done: train loss {:.4f}, val L1 {:.4f}, best {:.4f}'.format(
            epoch, train_loss, val_l1, best))
    writer.close()


if __name__ == '__main__':
    main()
