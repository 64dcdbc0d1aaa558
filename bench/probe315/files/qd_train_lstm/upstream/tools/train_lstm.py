"""Train the VeloLSTM motion model of QD-3DT on tracked 3D boxes.

Example:
    python tools/train_lstm.py nuscenes train \
        --input_gt_path data/nuscenes/anns/tracking_train.json \
        --input_pd_path data/nuscenes/anns/tracking_output_train.json \
        --cache_name work_dirs/LSTM/nuscenes_train_pure_det_min_bbox.pkl \
        --loc_dim 7 -b 512 --is_plot --show_freq 500 --amp --gpu_ids 0,1
"""
import argparse
import os
import pickle
import random
import shutil
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

import qd3dt.models.detectrackers.tracker.tracker_utils as tu
from qd3dt.models.detectrackers.tracker.motion_lstm import VeloLSTM, load_lstm_checkpoint
from qd3dt.models.detectrackers.tracker.motion_dataset import SeqDataset

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False


def parse_args():
    parser = argparse.ArgumentParser(
        description='RNN depth motion estimation',
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('set', choices=['gta', 'kitti', 'nuscenes', 'waymo'], help='Dataset set')
    parser.add_argument('split', choices=['train', 'val', 'test'], help='Which data split to use in testing')
    parser.add_argument('--input_gt_path', default='data/nuscenes/anns/tracking_train.json', type=str)
    parser.add_argument('--input_pd_path', default='data/nuscenes/anns/tracking_output_train.json', type=str)
    parser.add_argument('--cache_name', default='work_dirs/LSTM/nuscenes_train_pure_det_min_bbox.pkl', type=str)
    parser.add_argument('--loc_dim', default=7, type=int, help='Input/Output dimension of the location')
    parser.add_argument('--ckpt_path', default='checkpoints/{}_{}_{:03d}_{}_linear.pth', type=str)
    parser.add_argument('--resume', default='', type=str, metavar='PATH', help='path to latest checkpoint')
    parser.add_argument('-j', '--workers', default=16, type=int, metavar='N',
                        help='number of data loading workers (default: 16)')
    parser.add_argument('--epochs', default=100, type=int, metavar='N', help='number of total epochs to run')
    parser.add_argument('--start_epoch', default=0, type=int, metavar='N',
                        help='manual epoch number (useful on restarts)')
    parser.add_argument('-b', '--batch_size', default=512, type=int, metavar='N', help='mini-batch size')
    parser.add_argument('--num_seq', default=10, type=int, help='number of frames per trajectory sample')
    parser.add_argument('--num_frames', default=5, type=int, help='velocity history length')
    parser.add_argument('--optim', default='adam', choices=['sgd', 'adam', 'adamw', 'fused_adam'],
                        help='fused_adam needs NVIDIA apex built with --cuda_ext')
    parser.add_argument('--lr', default=1e-3, type=float, metavar='LR', help='initial learning rate')
    parser.add_argument('--lr_adjust', default='step', choices=['step', 'cos'])
    parser.add_argument('--step_ratio', default=0.5, type=float)
    parser.add_argument('--lr_step', default=20, type=int)
    parser.add_argument('--momentum', default=0.9, type=float, metavar='M')
    parser.add_argument('--weight_decay', '--wd', default=1e-4, type=float, metavar='W')
    parser.add_argument('--depth_weight', default=0.1, type=float, help='weight of the depth term in the loss')
    parser.add_argument('--amp', action='store_true', help='mixed precision (torch.cuda.amp)')
    parser.add_argument('--show_freq', default=100, type=int, help='show frequency')
    parser.add_argument('--is_plot', action='store_true', help='plot the trajectories to tensorboard')
    parser.add_argument('--is_verbose', action='store_true', help='print more info')
    parser.add_argument('--gpu_ids', default='0', type=str, help='comma separated CUDA device ids')
    parser.add_argument('--seed', default=616, type=int)
    args = parser.parse_args()

    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return args


def linear_motion_loss(outputs, targets):
    # smooth the velocity term: neighbouring frames should move alike
    vel = outputs[1:] - outputs[:-1]
    return (vel[1:] - vel[:-1]).abs().mean()


def train_seq(model, train_loader, optimizer, scaler, epoch, args, writer):
    model.train()
    losses = tu.AverageMeter()
    batch_time = tu.AverageMeter()
    end = time.time()

    for iters, traj_out in enumerate(train_loader):
        (obj_obsv, obj_gt, obj_confs, valid_mask) = traj_out

        # move the trajectories to the GPU
        obj_obsv = obj_obsv.float().cuda(non_blocking=True)
        obj_gt = obj_gt.float().cuda(non_blocking=True)
        obj_confs = obj_confs.float().to(args.device, non_blocking=True)
        valid_mask = valid_mask.to(args.device, non_blocking=True)

        num_batch = obj_obsv.shape[0]
        m = model.module if isinstance(model, nn.DataParallel) else model
        hidden_predict = m.init_hidden(args.device, num_batch)
        hidden_refine = m.init_hidden(args.device, num_batch)

        with torch.cuda.amp.autocast(enabled=args.amp):
            vel_history = obj_obsv.new_zeros(args.num_frames, num_batch, args.loc_dim)
            prev_refine = obj_obsv[:, 0]
            loc_refines, loc_preds = [], []
            for i in range(1, args.num_seq):
                loc_pred, hidden_predict = m.predict(vel_history, prev_refine, hidden_predict)
                loc_refine, hidden_refine = m.refine(loc_pred, obj_obsv[:, i], prev_refine,
                                                    obj_confs[:, i, None], hidden_refine)
                vel_history = torch.cat([vel_history[1:], (loc_refine - prev_refine)[None]], dim=0)
                prev_refine = loc_refine
                loc_refines.append(loc_refine)
                loc_preds.append(loc_pred)

            loc_refines = torch.stack(loc_refines, dim=1)
            loc_preds = torch.stack(loc_preds, dim=1)
            mask = valid_mask[:, 1:, None].float()
            refine_loss = (torch.abs(loc_refines - obj_gt[:, 1:]) * mask).sum() / mask.sum().clamp(min=1)
            pred_loss = (torch.abs(loc_preds - obj_gt[:, 1:]) * mask).sum() / mask.sum().clamp(min=1)
            motion_loss = linear_motion_loss(loc_refines.transpose(0, 1), obj_gt[:, 1:].transpose(0, 1))
            loss = refine_loss + pred_loss + args.depth_weight * motion_loss

        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()

        losses.update(loss.item(), num_batch)
        batch_time.update(time.time() - end)
        end = time.time()

        if iters % args.show_freq == 0 and iters != 0:
            print('[{NAME} - {SESS}] Epoch: [{0}][{1}/{2}]\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                  'Time {batch_time.val:.3f}s\t'
                  'mem {mem:.0f}MB'.format(
                      epoch, iters, len(train_loader), NAME=args.set.upper(), SESS=args.split,
                      loss=losses, batch_time=batch_time,
                      mem=torch.cuda.max_memory_allocated() / 1024. / 1024.))
            writer.add_scalar('train/loss', losses.avg, epoch * len(train_loader) + iters)

    return losses.avg


@torch.no_grad()
def validate_seq(model, val_loader, epoch, args):
    model.eval()
    errors = tu.AverageMeter()
    for traj_out in val_loader:
        (obj_obsv, obj_gt, obj_confs, valid_mask) = [t.to(args.device) for t in traj_out]
        m = model.module if isinstance(model, nn.DataParallel) else model
        num_batch = obj_obsv.shape[0]
        hp = m.init_hidden(args.device, num_batch)
        hr = m.init_hidden(args.device, num_batch)
        vel_history = obj_obsv.new_zeros(args.num_frames, num_batch, args.loc_dim)
        prev = obj_obsv[:, 0]
        for i in range(1, args.num_seq):
            pred, hp = m.predict(vel_history, prev, hp)
            ref, hr = m.refine(pred, obj_obsv[:, i], prev, obj_confs[:, i, None], hr)
            vel_history = torch.cat([vel_history[1:], (ref - prev)[None]], dim=0)
            prev = ref
            err = (ref[:, :3] - obj_gt[:, i, :3]).norm(dim=-1)
            errors.update(err[valid_mask[:, i]].mean().item(), num_batch)
    print('[val] epoch {} - mean 3D center error {:.3f} m'.format(epoch, errors.avg))
    return errors.avg


def build_optimizer(model, args):
    if args.optim == 'sgd':
        return optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                         weight_decay=args.weight_decay, nesterov=True)
    elif args.optim == 'adam':
        return optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, amsgrad=True)
    elif args.optim == 'adamw':
        return optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    elif args.optim == 'fused_adam':
        assert HAS_APEX, 'apex is required for --optim fused_adam'
        return FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    raise ValueError(args.optim)


def save_checkpoint(state, is_best, filename):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, filename.replace('.pth', '_best.pth'))


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)

    print(' '.join(['{}: {}'.format(k, v) for k, v in vars(args).items()]))

    model = VeloLSTM(batch_size=args.batch_size, feature_dim=64, hidden_size=128, num_layers=2,
                     loc_dim=args.loc_dim).to(args.device)
    if len(args.gpu_ids.split(',')) > 1:
        model = nn.DataParallel(model)

    if args.resume:
        load_lstm_checkpoint(model.module if isinstance(model, nn.DataParallel) else model, args.resume)

    train_set = SeqDataset(args.set, args.input_gt_path, args.input_pd_path, args.cache_name, 'train',
                           args.num_seq, args.loc_dim)
    val_set = SeqDataset(args.set, args.input_gt_path.replace('train', 'val'),
                         args.input_pd_path.replace('train', 'val'), args.cache_name.replace('train', 'val'),
                         'val', args.num_seq, args.loc_dim)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.workers, pin_memory=True, drop_last=False)

    optimizer = build_optimizer(model, args)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step, gamma=args.step_ratio)
    writer = SummaryWriter(log_dir='work_dirs/LSTM/tb_{}_{}'.format(args.set, args.split))

    best_err = float('inf')
    for epoch in range(args.start_epoch, args.epochs):
        train_seq(model, train_loader, optimizer, scaler, epoch, args, writer)
        scheduler.step()
        err = validate_seq(model, val_loader, epoch, args)
        is_best = err < best_err
        best_err = min(err, best_err)
        state = {
            'epoch': epoch + 1,
            'state_dict': model.state_dict(),
            'optimizer': optimizer.state_dict(),
            'best_err': best_err,
        }
        save_checkpoint(state, is_best,
                        args.ckpt_path.format(args.set, args.split, epoch + 1, args.loc_dim))
    writer.close()


if __name__ == '__main__':
    main()
