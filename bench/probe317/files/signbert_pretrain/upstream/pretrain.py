"""SignBERT-style self-supervised pre-training on hand poses.

Masked hand-pose modelling: 2D hand keypoints (21 per hand, from MMPose) are tokenised per frame,
a fraction of the frames / joints is masked, a transformer encoder predicts the MANO pose & shape
parameters and the decoded 3D hand mesh is projected back to 2D to supervise the masked joints.

Multi-GPU:
    python -m torch.distributed.launch --nproc_per_node=8 pretrain.py --cfg configs/pretrain_hand.yaml
"""
import argparse
import math
import os
import random
import sys
import time
from collections import defaultdict

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from manopth.manolayer import ManoLayer

from data.hand_pose_dataset import HandPoseDataset, hand_collate
from models.signbert import SignBertEncoder, HandModelAwareDecoder
from utils.masking import random_mask_frames, random_mask_joints
from utils.misc import AverageMeter, save_on_master

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--cfg', default='configs/pretrain_hand.yaml')
    p.add_argument('--local_rank', type=int, default=0)
    p.add_argument('--out', default='./work_dirs/signbert_pretrain')
    p.add_argument('--resume', default=None)
    p.add_argument('--profile', action='store_true', help='annotate steps with NVTX ranges for nsys')
    return p.parse_args()


class SignBertPretrainer(nn.Module):
    def __init__(self, cfg, mano_root):
        super().__init__()
        self.encoder = SignBertEncoder(**cfg['encoder'])
        self.decoder = HandModelAwareDecoder(**cfg['decoder'])
        # MANO is used as a differentiable, frozen hand model
        self.mano_left = ManoLayer(mano_root=mano_root, side='left', use_pca=True,
                                   ncomps=cfg['decoder']['n_pose'], flat_hand_mean=False)
        self.mano_right = ManoLayer(mano_root=mano_root, side='right', use_pca=True,
                                    ncomps=cfg['decoder']['n_pose'], flat_hand_mean=False)
        for p in list(self.mano_left.parameters()) + list(self.mano_right.parameters()):
            p.requires_grad = False

    def project(self, joints3d, cam):
        # weak perspective camera: s, tx, ty
        s, t = cam[..., :1], cam[..., 1:]
        return s.unsqueeze(-2) * joints3d[..., :2] + t.unsqueeze(-2)

    def forward(self, kps, conf, mask, side):
        B, T, J, _ = kps.shape
        feats = self.encoder(kps, conf, mask)
        pose, shape, cam = self.decoder(feats)
        pose, shape, cam = pose.flatten(0, 1), shape.flatten(0, 1), cam.flatten(0, 1)
        mano = self.mano_left if side == 'left' else self.mano_right
        _, joints3d = mano(pose, shape)
        joints2d = self.project(joints3d / 1000.0, cam).view(B, T, J, 2)
        return joints2d, pose, shape


def pretrain_loss(pred2d, target, conf, mask, pose, shape, cfg):
    w = (conf * mask).unsqueeze(-1)
    rec = (F.smooth_l1_loss(pred2d, target, reduction='none') * w).sum() / w.sum().clamp(min=1.0)
    reg = cfg['w_pose'] * (pose ** 2).mean() + cfg['w_shape'] * (shape ** 2).mean()
    return rec + reg, rec


def main():
    args = parse_args()
    cfg = yaml.safe_load(open(args.cfg))

    distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    if distributed:
        local_rank = int(os.environ.get('LOCAL_RANK', args.local_rank))
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        rank, world_size = dist.get_rank(), dist.get_world_size()
    else:
        local_rank, rank, world_size = 0, 0, 1
    device = torch.device('cuda', local_rank)

    seed = cfg.get('seed', 0) + rank
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)

    dataset = HandPoseDataset(**cfg['data'])
    sampler = DistributedSampler(dataset) if distributed else None
    loader = DataLoader(dataset, batch_size=cfg['train']['batch_size'], sampler=sampler,
                        shuffle=sampler is None, num_workers=cfg['train']['workers'],
                        pin_memory=True, drop_last=True, collate_fn=hand_collate)

    model = SignBertPretrainer(cfg['model'], cfg['mano_root']).cuda()
    if distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank],
                                                    find_unused_parameters=False)
        if dist.get_backend() == 'nccl':
            # fp16 gradient compression halves the all-reduce volume on the 8-card nodes
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            model.register_comm_hook(state=None, hook=default_hooks.fp16_compress_hook)
    model_without_ddp = model.module if distributed else model

    params = [p for p in model_without_ddp.parameters() if p.requires_grad]
    if HAS_APEX and cfg['train'].get('fused_adam', True):
        optimizer = FusedAdam(params, lr=cfg['train']['lr'], betas=(0.9, 0.98),
                              weight_decay=cfg['train']['wd'], adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(params, lr=cfg['train']['lr'], betas=(0.9, 0.98),
                                      weight_decay=cfg['train']['wd'])
    scaler = torch.cuda.amp.GradScaler()
    total_steps = cfg['train']['epochs'] * len(loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg['train']['lr'],
                                                    total_steps=total_steps, pct_start=0.05)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cpu')
        model_without_ddp.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        start_epoch = ckpt['epoch'] + 1

    writer = SummaryWriter(os.path.join(args.out, 'tb')) if rank == 0 else None
    step = start_epoch * len(loader)
    for epoch in range(start_epoch, cfg['train']['epochs']):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        meters = defaultdict(AverageMeter)
        t0 = time.time()
        for it, batch in enumerate(loader):
            if args.profile:
                torch.cuda.nvtx.range_push('step{}'.format(step))
            kps = batch['kps'].cuda(non_blocking=True)          # B,T,21,2 (normalised to the hand box)
            conf = batch['conf'].cuda(non_blocking=True)        # B,T,21
            mask = random_mask_joints(random_mask_frames(conf, cfg['mask']['frame_ratio']),
                                      cfg['mask']['joint_ratio'])
            masked_kps = kps * (1 - mask).unsqueeze(-1)
            with torch.cuda.amp.autocast():
                pred2d, pose, shape = model(masked_kps, conf, mask, batch['side'][0])
                loss, rec = pretrain_loss(pred2d.float(), kps, conf, mask, pose, shape, cfg['loss'])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, cfg['train']['clip'])
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            if args.profile:
                torch.cuda.nvtx.range_pop()
            meters['loss'].update(loss.item())
            meters['rec'].update(rec.item())
            if rank == 0 and it % 100 == 0:
                print('ep {} it {}/{} loss {:.4f} rec {:.4f} lr {:.2e} {:.1f} it/s'.format(
                    epoch, it, len(loader), meters['loss'].avg, meters['rec'].avg,
                    scheduler.get_last_lr()[0], (it + 1) / (time.time() - t0)))
                writer.add_scalar('train/loss', meters['loss'].avg, step)
            step += 1
        if rank == 0:
            save_on_master({'model': model_without_ddp.state_dict(), 'optimizer': optimizer.state_dict(),
                            'scheduler': scheduler.state_dict(), 'epoch': epoch},
                           os.path.join(args.out, 'checkpoint_{:03d}.pth'.format(epoch)))
    if writer is not None:
        writer.close()


if __name__ == '__main__':
    main()
