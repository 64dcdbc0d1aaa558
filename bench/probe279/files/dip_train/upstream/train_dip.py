"""
PyTorch re-implementation of Deep Inertial Poser (DIP, Huang et al., SIGGRAPH Asia 2018).

Two training stages, as in the paper:
  1. pre-train the bidirectional RNN on synthetic IMU data generated from AMASS;
  2. fine-tune on the real DIP-IMU recordings (s_01 .. s_08), test on s_09 / s_10.

  python train_dip.py --data data/synthetic --save-dir runs/pretrain
  python train_dip.py --data data/dip_imu --finetune runs/pretrain/best.pth --lr 1e-4 --epochs 30
"""
from __future__ import print_function

import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from tensorboardX import SummaryWriter

from dip.data import DipImuDataset, collate_windows
from dip.model import BiRNN, pose_loss, acc_nll_loss

parser = argparse.ArgumentParser(description='Deep Inertial Poser (PyTorch)')
parser.add_argument('--data', type=str, required=True, help='directory with train/ and validation/ npz files')
parser.add_argument('--save-dir', type=str, default='runs/dip')
parser.add_argument('--finetune', type=str, default='', help='checkpoint to start from (stage 2)')
parser.add_argument('--batch-size', type=int, default=16, metavar='N')
parser.add_argument('--test-batch-size', type=int, default=16, metavar='N')
parser.add_argument('--epochs', type=int, default=100, metavar='N')
parser.add_argument('--lr', type=float, default=1e-3, metavar='LR')
parser.add_argument('--window', type=int, default=300, help='training window length (frames @60Hz)')
parser.add_argument('--hidden', type=int, default=512)
parser.add_argument('--layers', type=int, default=2)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--acc-weight', type=float, default=0.1, help='weight of the acceleration reconstruction loss')
parser.add_argument('--clip', type=float, default=1.0)
parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
parser.add_argument('--multi-gpu', action='store_true', default=False, help='wrap the model in nn.DataParallel')
parser.add_argument('--gpu', type=str, default='0', help='value for CUDA_VISIBLE_DEVICES')
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=20, metavar='N')
parser.add_argument('--workers', type=int, default=4)
args = parser.parse_args()

os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
args.cuda = not args.no_cuda and torch.cuda.is_available()

torch.manual_seed(args.seed)
np.random.seed(args.seed)
if args.cuda:
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

dtype = torch.cuda.FloatTensor if args.cuda else torch.FloatTensor

kwargs = {'num_workers': args.workers, 'pin_memory': True} if args.cuda else {}
train_set = DipImuDataset(os.path.join(args.data, 'train'), window=args.window, augment=True)
valid_set = DipImuDataset(os.path.join(args.data, 'validation'), window=None)
train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                          collate_fn=collate_windows, **kwargs)
valid_loader = DataLoader(valid_set, batch_size=args.test_batch_size, shuffle=False,
                          collate_fn=collate_windows, **kwargs)

model = BiRNN(input_size=72, output_size=135, hidden_size=args.hidden, num_layers=args.layers,
              dropout=args.dropout, predict_acc=True)
if args.finetune:
    state = torch.load(args.finetune)
    model.load_state_dict(state['model'])
    print('loaded pre-trained weights from %s (epoch %d)' % (args.finetune, state['epoch']))
if args.cuda:
    model.cuda()
if args.multi_gpu:
    model = nn.DataParallel(model)

optimizer = optim.Adam(model.parameters(), lr=args.lr)
scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=5)
writer = SummaryWriter(args.save_dir)
os.makedirs(args.save_dir, exist_ok=True)


def train(epoch):
    model.train()
    running, seen = 0.0, 0
    t0 = time.time()
    for batch_idx, (x, y, acc, mask) in enumerate(train_loader):
        x, y, acc, mask = x.type(dtype), y.type(dtype), acc.type(dtype), mask.type(dtype)
        optimizer.zero_grad()
        pose_pred, acc_mean, acc_logvar = model(x)
        loss_pose = pose_loss(pose_pred, y, mask)
        loss_acc = acc_nll_loss(acc_mean, acc_logvar, acc, mask)
        loss = loss_pose + args.acc_weight * loss_acc
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()

        running += loss.item() * x.size(0)
        seen += x.size(0)
        if batch_idx % args.log_interval == 0:
            step = epoch * len(train_loader) + batch_idx
            writer.add_scalar('train/loss', loss.item(), step)
            writer.add_scalar('train/loss_pose', loss_pose.item(), step)
            writer.add_scalar('train/loss_acc', loss_acc.item(), step)
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}\t{:.1f} seq/s'.format(
                epoch, batch_idx * len(x), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item(), seen / (time.time() - t0)))
    return running / max(seen, 1)


def validate(epoch):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y, acc, mask in valid_loader:
            if args.cuda:
                x, y, mask = x.cuda(non_blocking=True), y.cuda(non_blocking=True), mask.cuda(non_blocking=True)
            pose_pred = model(x)[0]
            total += pose_loss(pose_pred, y, mask).item() * x.size(0)
            count += x.size(0)
    val = total / max(count, 1)
    writer.add_scalar('valid/loss_pose', val, epoch)
    print('\nValidation set: average pose loss: {:.6f}\n'.format(val))
    return val


def save(epoch, val, name):
    net = model.module if isinstance(model, nn.DataParallel) else model
    torch.save({'model': net.state_dict(), 'epoch': epoch, 'val': val, 'args': vars(args)},
               os.path.join(args.save_dir, name))


def angle_error_deg(pred, target):
    """
    Geodesic angle (degrees) between predicted (orthonormalised) and target rotation matrices [..., 3, 3].
    """
    rel = pred.transpose(-1, -2) @ target
    cos = ((rel.diagonal(dim1=-2, dim2=-1).sum(-1) - 1) / 2).clamp(-1 + 1e-7, 1 - 1e-7)
    return torch.rad2deg(torch.acos(cos))


def test(ckpt_path, past=20, future=5):
    """
    Offline and online (20 past / 5 future frames) evaluation on the DIP-IMU test subjects s_09, s_10.
    """
    from dip.model import orthonormalize
    state = torch.load(ckpt_path, map_location=lambda storage, loc: storage)
    net = BiRNN(input_size=72, output_size=135, hidden_size=args.hidden, num_layers=args.layers,
                dropout=0., predict_acc=True)
    net.load_state_dict(state['model'])
    net = net.cuda().eval() if args.cuda else net.eval()
    test_set = DipImuDataset(os.path.join(args.data, 'test'), window=None)
    errs_off, errs_on = [], []
    with torch.no_grad():
        for i in range(len(test_set)):
            x, y, _, mask = test_set[i]
            x, y = x.type(dtype), y.type(dtype)
            valid = mask.bool()
            R_t = y.view(-1, 15, 3, 3)[valid]
            pred = net(x.unsqueeze(0))[0][0]
            R_p = orthonormalize(pred.view(-1, 15, 3, 3))[valid]
            errs_off.append(angle_error_deg(R_p, R_t).mean().item())
            pred_on = net.forward_online(x, past=past, future=future)
            R_p = orthonormalize(pred_on.view(-1, 15, 3, 3))[valid]
            errs_on.append(angle_error_deg(R_p, R_t).mean().item())
    print('test offline angle error: %.2f deg (+/- %.2f)' % (np.mean(errs_off), np.std(errs_off)))
    print('test online  angle error: %.2f deg (+/- %.2f)' % (np.mean(errs_on), np.std(errs_on)))


if __name__ == '__main__':
    best = float('inf')
    for epoch in range(1, args.epochs + 1):
        tr = train(epoch)
        val = validate(epoch)
        scheduler.step(val)
        save(epoch, val, 'last.pth')
        if val < best:
            best = val
            save(epoch, val, 'best.pth')
            print('new best: %.6f' % best)
    writer.close()
    if os.path.isdir(os.path.join(args.data, 'test')):
        test(os.path.join(args.save_dir, 'best.pth'))
