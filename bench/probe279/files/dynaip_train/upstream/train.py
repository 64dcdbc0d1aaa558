"""
DynaIP training script.

    python train.py --config configs/dynaip_xsens.yaml
    python train.py --config configs/dynaip_xsens.yaml --gpu 1 --resume work_dirs/dynaip/last.pth
"""
import argparse
import os
import os.path as osp
import random
import shutil
import time

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from easydict import EasyDict
from torch.utils.data import DataLoader
from tqdm import tqdm

from data.dataset import XsensMixDataset, DIPEvalDataset, pad_collate
from model.dynaip import DynaIP
from utils.misc import AverageMeter, get_logger, set_random_seed, setup_device, to_device
from utils.rotation import r6d_to_rotation_matrix, rotation_matrix_to_r6d, angle_error_deg

try:
    import wandb
except ImportError:
    wandb = None


def parse_args():
    parser = argparse.ArgumentParser(description='Train DynaIP')
    parser.add_argument('--config', type=str, default='configs/dynaip_xsens.yaml')
    parser.add_argument('--gpu', type=int, default=None, help='overrides cfg.gpu')
    parser.add_argument('--resume', type=str, default=None)
    parser.add_argument('--work-dir', type=str, default=None)
    parser.add_argument('--no-wandb', action='store_true')
    parser.add_argument('--eval-only', action='store_true', help='run validation of --resume and exit')
    parser.add_argument('--finetune-dip', action='store_true',
                        help='stage 2: fine-tune on DIP-IMU train split with a 10x smaller learning rate')
    return parser.parse_args()


def load_config(path, args):
    with open(path) as f:
        cfg = EasyDict(yaml.safe_load(f))
    if args.gpu is not None:
        cfg.gpu = args.gpu
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    cfg.work_dir = cfg.get('work_dir', osp.join('work_dirs', osp.splitext(osp.basename(path))[0]))
    return cfg


def build_loaders(cfg):
    train_set = XsensMixDataset(cfg.data.root, cfg.data.train_sets, seq_len=cfg.data.seq_len,
                                stride=cfg.data.stride, synthetic_ratio=cfg.data.synthetic_ratio)
    val_set = DIPEvalDataset(cfg.data.dip_root, split='test')
    train_loader = DataLoader(train_set, batch_size=cfg.train.batch_size, shuffle=True, drop_last=True,
                              num_workers=cfg.train.num_workers, pin_memory=True, persistent_workers=True,
                              collate_fn=pad_collate)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, pin_memory=True,
                            collate_fn=pad_collate)
    return train_loader, val_loader


def compute_loss(cfg, out, batch):
    """
    Part-based losses: each body part (upper / lower / root) predicts its own 6D rotations, plus the
    pseudo-velocity regression of the leaf joints used by the dynamics branch.
    """
    mask = batch['mask'].unsqueeze(-1)
    losses = {}
    for part, idx in cfg.model.parts.items():
        pred = out['pose_r6d'][:, :, idx]
        gt = batch['pose_r6d'][:, :, idx]
        losses['pose_' + part] = ((pred - gt).pow(2).sum(-1) * mask).sum() / mask.sum().clamp(min=1) / len(idx)
    losses['vel'] = ((out['leaf_vel'] - batch['leaf_vel']).pow(2).sum(-1) * mask).sum() / mask.sum().clamp(min=1)
    losses['total'] = sum(cfg.loss.weights.get(k, 1.0) * v for k, v in losses.items())
    return losses


@torch.no_grad()
def validate(model, loader, device, cfg):
    model.eval()
    ang_err, jitter = AverageMeter(), AverageMeter()
    for batch in loader:
        batch = to_device(batch, device)
        out = model(batch['imu'])
        R_p = r6d_to_rotation_matrix(out['pose_r6d']).view(-1, 24, 3, 3)
        R_t = r6d_to_rotation_matrix(batch['pose_r6d']).view(-1, 24, 3, 3)
        err = angle_error_deg(R_p[:, cfg.eval.joints], R_t[:, cfg.eval.joints])
        ang_err.update(err.mean().item(), R_p.shape[0])
        if R_p.shape[0] > 3:
            j = out['pose_r6d'][0]
            jitter.update((j[3:] - 3 * j[2:-1] + 3 * j[1:-2] - j[:-3]).norm(dim=-1).mean().item(), j.shape[0])
    model.train()
    return {'val/angle_err_deg': ang_err.avg, 'val/jitter': jitter.avg}


def main():
    args = parse_args()
    cfg = load_config(args.config, args)
    os.makedirs(cfg.work_dir, exist_ok=True)
    shutil.copy(args.config, osp.join(cfg.work_dir, 'config.yaml'))
    logger = get_logger(osp.join(cfg.work_dir, 'train.log'))

    set_random_seed(cfg.seed, deterministic=cfg.get('deterministic', False))
    device = setup_device(cfg.gpu, cfg.get('device', 'cuda'))
    torch.backends.cudnn.benchmark = not cfg.get('deterministic', False)
    if device.type == 'cuda':
        logger.info('Using GPU %d: %s' % (cfg.gpu, torch.cuda.get_device_name(cfg.gpu)))

    train_loader, val_loader = build_loaders(cfg)
    model = DynaIP(**cfg.model.args).to(device)
    logger.info('#params: %.2fM' % (sum(p.numel() for p in model.parameters()) / 1e6))

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.train.epochs, eta_min=cfg.train.lr * 0.01)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)

    start_epoch, best = 0, float('inf')
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch, best = ckpt['epoch'] + 1, ckpt.get('best', best)
        logger.info('resumed from %s (epoch %d)' % (args.resume, ckpt['epoch']))

    if args.eval_only:
        res = validate(model, val_loader, device, cfg)
        logger.info('eval: ' + '  '.join('%s %.4f' % kv for kv in res.items()))
        return

    if args.finetune_dip:
        # stage 2: real DIP-IMU data only, lower LR, freeze the velocity head (no velocity GT in DIP-IMU)
        train_loader = DataLoader(DIPEvalDataset(cfg.data.dip_root, split='train', seq_len=cfg.data.seq_len),
                                  batch_size=cfg.train.batch_size, shuffle=True, drop_last=True,
                                  num_workers=cfg.train.num_workers, collate_fn=pad_collate)
        for g in optimizer.param_groups:
            g['lr'] = cfg.train.lr * 0.1
        for p in model.encoder.vel_head.parameters():
            p.requires_grad_(False)
        cfg.loss.weights['vel'] = 0.0
        logger.info('fine-tuning on DIP-IMU: %d windows' % len(train_loader.dataset))

    use_wandb = wandb is not None and not args.no_wandb and cfg.get('wandb', None)
    if use_wandb:
        wandb.init(project=cfg.wandb.project, name=osp.basename(cfg.work_dir), config=cfg)

    for epoch in range(start_epoch, cfg.train.epochs):
        meters = {}
        t0 = time.time()
        pbar = tqdm(train_loader, desc='epoch %d' % epoch, ncols=100)
        for it, batch in enumerate(pbar):
            batch = to_device(batch, device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=cfg.train.amp):
                out = model(batch['imu'])
                losses = compute_loss(cfg, out, batch)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(losses['total']).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.train.grad_clip)
            scaler.step(optimizer)
            scaler.update()

            for k, v in losses.items():
                meters.setdefault(k, AverageMeter()).update(v.item(), batch['imu'].shape[0])
            if it % cfg.train.log_interval == 0:
                pbar.set_postfix(loss='%.4f' % meters['total'].avg)
        scheduler.step()

        mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3
        log = {('train/' + k): m.avg for k, m in meters.items()}
        log.update(validate(model, val_loader, device, cfg))
        log['lr'] = optimizer.param_groups[0]['lr']
        logger.info('epoch %d  %s  mem %.1fG  %.0fs' % (epoch, '  '.join('%s %.4f' % kv for kv in log.items()),
                                                       mem, time.time() - t0))
        if use_wandb:
            wandb.log(log, step=epoch)
        torch.cuda.empty_cache()

        state = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'scheduler': scheduler.state_dict(),
                 'scaler': scaler.state_dict(), 'epoch': epoch, 'best': best, 'cfg': dict(cfg)}
        torch.save(state, osp.join(cfg.work_dir, 'last.pth'))
        if log['val/angle_err_deg'] < best:
            best = log['val/angle_err_deg']
            state['best'] = best
            torch.save(state, osp.join(cfg.work_dir, 'best.pth'))
            logger.info('new best %.3f deg' % best)


if __name__ == '__main__':
    main()
