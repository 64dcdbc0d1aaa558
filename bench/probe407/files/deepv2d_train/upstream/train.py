import os
import sys
import time
import argparse
import numpy as np

import torch
import torch.nn as nn
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from deepv2d.deepv2d import DeepV2D
from deepv2d.data_layer import DepthVideoDataset
from deepv2d.losses import depth_loss, motion_loss
from utils.config import load_config

torch.backends.cudnn.benchmark = True

SUM_FREQ = 100
VAL_FREQ = 5000


class Logger:
    def __init__(self, name, rank):
        self.rank = rank
        self.total_steps = 0
        self.running_loss = {}
        self.writer = SummaryWriter(os.path.join('runs', name)) if rank == 0 else None

    def push(self, metrics):
        self.total_steps += 1
        for key in metrics:
            self.running_loss[key] = self.running_loss.get(key, 0.0) + metrics[key]

        if self.total_steps % SUM_FREQ == 0 and self.rank == 0:
            msg = "[%6d] " % self.total_steps
            for key in sorted(self.running_loss):
                val = self.running_loss[key] / SUM_FREQ
                msg += "%s=%.4f " % (key, val)
                self.writer.add_scalar(key, val, self.total_steps)
            print(msg, flush=True)
            self.running_loss = {}


def reduce_metrics(metrics, world_size):
    """ average scalar metrics over all workers """
    keys = sorted(metrics.keys())
    vals = torch.as_tensor([metrics[k] for k in keys], dtype=torch.float32, device='cuda')
    dist.all_reduce(vals, op=dist.ReduceOp.SUM)
    vals = (vals / world_size).tolist()
    return dict(zip(keys, vals))


def train(local_rank, cfg, args):
    world_size = int(os.environ.get('WORLD_SIZE', 1))
    rank = int(os.environ.get('RANK', local_rank))

    dist.init_process_group('nccl', rank=rank, world_size=world_size)
    device = torch.device(f'cuda:{local_rank}')
    torch.cuda.set_device(device)

    torch.manual_seed(1234 + rank)
    np.random.seed(1234 + rank)

    model = DeepV2D(cfg).to(device)
    if cfg.TRAIN.SYNC_BN:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)

    if args.ckpt is not None:
        checkpoint = torch.load(args.ckpt, map_location={'cuda:0': 'cuda:%d' % local_rank})
        model.load_state_dict(checkpoint['model'])

    db = DepthVideoDataset(cfg.INPUT.DATASET, cfg.INPUT.DATAPATH, n_frames=cfg.INPUT.FRAMES,
        scale=cfg.INPUT.SCALE, augment=True)

    sampler = DistributedSampler(db, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(db, batch_size=cfg.TRAIN.BATCH, sampler=sampler,
        num_workers=cfg.TRAIN.WORKERS, pin_memory=True, drop_last=True)

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.TRAIN.LR, eps=1e-6)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, cfg.TRAIN.LR, cfg.TRAIN.ITERS,
        pct_start=0.01, cycle_momentum=False)

    scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)
    logger = Logger(args.name, rank)

    total_steps = 0
    epoch = 0
    keep_training = True

    while keep_training:
        sampler.set_epoch(epoch)
        epoch += 1

        for data_blob in loader:
            images, depths, poses, intrinsics = [x.to(device, non_blocking=True) for x in data_blob]

            optimizer.zero_grad(set_to_none=True)

            with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):
                depth_preds, pose_preds = model(images, intrinsics, num_iters=cfg.TRAIN.ITERS_MOTION)

            # the geometry losses are evaluated in full precision
            d_loss, d_metrics = depth_loss(depth_preds, depths.float())
            m_loss, m_metrics = motion_loss(pose_preds, poses.float(), intrinsics.float())
            loss = cfg.TRAIN.DEPTH_WEIGHT * d_loss + cfg.TRAIN.MOTION_WEIGHT * m_loss

            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.TRAIN.CLIP)

            scaler.step(optimizer)
            scheduler.step()
            scaler.update()

            metrics = {'loss': loss.item()}
            metrics.update(d_metrics)
            metrics.update(m_metrics)
            metrics = reduce_metrics(metrics, world_size)

            if rank == 0:
                metrics['mem_gb'] = torch.cuda.max_memory_allocated(device) / 1024**3
                logger.push(metrics)

            total_steps += 1

            if total_steps % VAL_FREQ == 0 and rank == 0:
                path = os.path.join('checkpoints', '%s_%06d.pth' % (args.name, total_steps))
                torch.save({'model': model.state_dict(), 'step': total_steps}, path)

            if total_steps >= cfg.TRAIN.ITERS:
                keep_training = False
                break

    if rank == 0:
        torch.save({'model': model.state_dict(), 'step': total_steps},
            os.path.join('checkpoints', '%s.pth' % args.name))

    dist.barrier()
    dist.destroy_process_group()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg', default='cfgs/nyu.yaml', help='path to yaml config')
    parser.add_argument('--name', default='deepv2d_nyu', help='name of the experiment')
    parser.add_argument('--ckpt', default=None, help='checkpoint to resume from')
    args = parser.parse_args()

    cfg = load_config(args.cfg)

    if not os.path.isdir('checkpoints'):
        os.mkdir('checkpoints')

    if 'LOCAL_RANK' in os.environ:
        # launched with torchrun
        train(int(os.environ['LOCAL_RANK']), cfg, args)

    else:
        # single node, one process per visible GPU
        ngpus = torch.cuda.device_count()
        os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
        os.environ.setdefault('MASTER_PORT', '29500')
        os.environ['WORLD_SIZE'] = str(ngpus)
        mp.spawn(train, nprocs=ngpus, args=(cfg, args))
