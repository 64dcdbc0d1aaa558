"""PyTorch re-implementation of WHENet (Zhou & Gregson, BMVC 2020) training.

Full-range yaw (120 bins of 3 deg) + pitch/roll (66 bins of 3 deg) on an
EfficientNet-B0 backbone, trained on 300W-LP + CMU Panoptic crops.

    python whenet_torch/train.py --gpu_id 0 --data_dir data/combined --batch_size 64 --amp
    python whenet_torch/train.py --gpu_id 0,1 --batch_size 128 --amp      # nn.DataParallel
"""
import argparse
import os
import time
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader
from torchvision import transforms
import timm

from whenet_torch.datasets import PoseDataset, FullRangeAugment
from whenet_torch.utils import AverageMeter, wrapped_mae, save_checkpoint

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


YAW_BINS = 120
PR_BINS = 66


class WHENet(nn.Module):
    def __init__(self, backbone='efficientnet_b0', pretrained=True, drop_rate=0.2):
        super().__init__()
        self.backbone = timm.create_model(backbone, pretrained=pretrained, num_classes=0, global_pool='avg')
        feat = self.backbone.num_features
        self.drop = nn.Dropout(drop_rate)
        self.fc_yaw = nn.Linear(feat, YAW_BINS)
        self.fc_pitch = nn.Linear(feat, PR_BINS)
        self.fc_roll = nn.Linear(feat, PR_BINS)

    def forward(self, x):
        f = self.drop(self.backbone(x))
        return self.fc_yaw(f), self.fc_pitch(f), self.fc_roll(f)


def parse_args():
    p = argparse.ArgumentParser(description='WHENet training')
    p.add_argument('--gpu_id', type=str, default='0', help='GPU id(s), e.g. 0 or 0,1,2,3')
    p.add_argument('--data_dir', type=str, default='data/combined')
    p.add_argument('--train_list', type=str, default='data/combined/train.txt')
    p.add_argument('--val_list', type=str, default='data/combined/val.txt')
    p.add_argument('--epochs', type=int, default=50)
    p.add_argument('--batch_size', type=int, default=64)
    p.add_argument('--lr', type=float, default=1e-4)
    p.add_argument('--alpha', type=float, default=1.0, help='regression loss weight (pitch/roll)')
    p.add_argument('--beta', type=float, default=1.0, help='wrapped regression loss weight (yaw)')
    p.add_argument('--amp', action='store_true', help='mixed precision (torch.cuda.amp)')
    p.add_argument('--fused_adam', action='store_true', help='use apex FusedAdam if available')
    p.add_argument('--workers', type=int, default=8)
    p.add_argument('--output', type=str, default='output/whenet')
    p.add_argument('--resume', type=str, default='')
    p.add_argument('--seed', type=int, default=42)
    return p.parse_args()


def expectation(logits, n_bins, bin_width=3.0, offset=None):
    """Softmax expectation over bin indices -> degrees."""
    idx = torch.arange(n_bins, dtype=torch.float32, device=logits.device)
    if offset is None:
        offset = n_bins * bin_width / 2.0
    prob = F.softmax(logits.float(), dim=1)
    return torch.sum(prob * idx, dim=1) * bin_width - offset + bin_width / 2.0


def wrapped_loss(pred_deg, gt_deg):
    """min(|d|, 360-|d|)^2 for full-range yaw."""
    d = torch.abs(pred_deg - gt_deg)
    d = torch.min(d, 360.0 - d)
    return torch.mean(d * d)


def make_loaders(args):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_tf = transforms.Compose([
        FullRangeAugment(),
        transforms.Resize((224, 224)),
        transforms.ColorJitter(0.2, 0.2, 0.2, 0.05),
        transforms.ToTensor(),
        normalize,
    ])
    val_tf = transforms.Compose([transforms.Resize((224, 224)), transforms.ToTensor(), normalize])
    train_set = PoseDataset(args.data_dir, args.train_list, train_tf, yaw_bins=YAW_BINS, pr_bins=PR_BINS)
    val_set = PoseDataset(args.data_dir, args.val_list, val_tf, yaw_bins=YAW_BINS, pr_bins=PR_BINS)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.workers, pin_memory=True)
    return train_loader, val_loader


def train_one_epoch(model, loader, optimizer, scaler, args, epoch, gpu):
    model.train()
    ce = nn.CrossEntropyLoss().cuda(gpu)
    mse = nn.MSELoss().cuda(gpu)
    losses = AverageMeter()
    t0 = time.time()
    for i, (images, bins, cont) in enumerate(loader):
        images = images.cuda(gpu, non_blocking=True)
        bins = bins.cuda(gpu, non_blocking=True)
        cont = cont.cuda(gpu, non_blocking=True)

        with torch.cuda.amp.autocast(enabled=args.amp):
            yaw, pitch, roll = model(images)
            loss_cls = ce(yaw, bins[:, 0]) + ce(pitch, bins[:, 1]) + ce(roll, bins[:, 2])

        # regression terms in fp32
        yaw_deg = expectation(yaw, YAW_BINS)
        pitch_deg = expectation(pitch, PR_BINS)
        roll_deg = expectation(roll, PR_BINS)
        loss_reg = args.beta * wrapped_loss(yaw_deg, cont[:, 0]) + \
            args.alpha * (mse(pitch_deg, cont[:, 1]) + mse(roll_deg, cont[:, 2]))
        loss = loss_cls + loss_reg

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()

        losses.update(loss.item(), images.size(0))
        if (i + 1) % 50 == 0:
            print('Epoch [%d] Iter [%d/%d] loss %.4f (cls %.3f reg %.3f) %.1f img/s' % (
                epoch, i + 1, len(loader), losses.avg, loss_cls.item(), loss_reg.item(),
                (i + 1) * images.size(0) / (time.time() - t0)))
    return losses.avg


@torch.no_grad()
def validate(model, loader, gpu, amp):
    model.eval()
    errs = []
    for images, bins, cont in loader:
        images = images.cuda(gpu)
        with torch.cuda.amp.autocast(enabled=amp):
            yaw, pitch, roll = model(images)
        pred = torch.stack([expectation(yaw, YAW_BINS),
                            expectation(pitch, PR_BINS),
                            expectation(roll, PR_BINS)], dim=1).cpu()
        errs.append(wrapped_mae(pred, cont))
    errs = torch.cat(errs, 0)
    return errs.mean(0).tolist()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    cudnn.enabled = True
    cudnn.benchmark = True

    gpu_ids = [int(g) for g in args.gpu_id.split(',')]
    gpu = gpu_ids[0]
    torch.cuda.set_device(gpu)

    model = WHENet()
    model.cuda(gpu)
    if len(gpu_ids) > 1:
        model = torch.nn.DataParallel(model, device_ids=gpu_ids)
    else:
        model = torch.nn.DataParallel(model, device_ids=[gpu])
    raw_model = model.module if isinstance(model, torch.nn.DataParallel) else model

    if args.fused_adam and HAS_APEX:
        optimizer = FusedAdam(model.parameters(), lr=args.lr, adam_w_mode=False)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20, 35, 45], gamma=0.3)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cuda:%d' % gpu)
        raw_model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch = ckpt['epoch'] + 1

    train_loader, val_loader = make_loaders(args)
    os.makedirs(args.output, exist_ok=True)
    best = float('inf')
    for epoch in range(start_epoch, args.epochs):
        tl = train_one_epoch(model, train_loader, optimizer, scaler, args, epoch, gpu)
        scheduler.step()
        yaw_e, pitch_e, roll_e = validate(model, val_loader, gpu, args.amp)
        mae = (yaw_e + pitch_e + roll_e) / 3.0
        print('Epoch %d: train loss %.4f | val MAE yaw %.2f pitch %.2f roll %.2f (mean %.2f) | peak mem %.0f MB' % (
            epoch, tl, yaw_e, pitch_e, roll_e, mae, torch.cuda.max_memory_allocated(gpu) / 2 ** 20))
        state = {'model': raw_model.state_dict(), 'optimizer': optimizer.state_dict(),
                 'scaler': scaler.state_dict(), 'epoch': epoch, 'mae': mae}
        save_checkpoint(state, os.path.join(args.output, 'last.pth'))
        if mae < best:
            best = mae
            save_checkpoint(state, os.path.join(args.output, 'best.pth'))
    print('best mean MAE %.3f' % best)


if __name__ == '__main__':
    main()
