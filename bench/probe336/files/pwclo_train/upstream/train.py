"""
PWCLO-Net (PyTorch re-implementation): training entry.

Single GPU:
    python train.py --cfg configs/kitti_odometry.yaml
Multi GPU (one process per GPU):
    bash scripts/dist_train.sh 4 configs/kitti_odometry.yaml
"""
import argparse
import datetime
import logging
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from datasets.kitti_odometry import KittiOdometry, collate_pairs
from models.pwclo import PWCLONet
from models.losses import MultiScalePoseLoss
from utils.pose import quat_to_mat, relative_pose_errors

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

# surface NCCL errors as exceptions instead of hanging the job
os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')

logger = logging.getLogger('pwclo')


def parse_args():
    parser = argparse.ArgumentParser('PWCLO-Net training')
    parser.add_argument('--cfg', type=str, default='configs/kitti_odometry.yaml')
    parser.add_argument('--data_root', type=str, default=None)
    parser.add_argument('--log_dir', type=str, default='log/pwclo')
    parser.add_argument('--resume', type=str, default=None)
    parser.add_argument('--epochs', type=int, default=None)
    parser.add_argument('--batch_size', type=int, default=None, help='batch size per GPU')
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--seed', type=int, default=3407)
    parser.add_argument('--amp', action='store_true', help='mixed precision training')
    parser.add_argument('--sync_bn', action='store_true')
    parser.add_argument('--dist_backend', type=str, default='nccl')
    parser.add_argument('--clip_grad', type=float, default=10.0)
    return parser.parse_args()


def load_cfg(args):
    with open(args.cfg, 'r') as f:
        cfg = yaml.safe_load(f)
    for key in ('data_root', 'epochs', 'batch_size'):
        value = getattr(args, key)
        if value is not None:
            cfg['train' if key != 'data_root' else 'data'][key] = value
    # command line wins over yaml for the launcher options
    cfg.setdefault('dist', {})
    cfg['dist'].setdefault('backend', args.dist_backend)
    return cfg


def setup_distributed(cfg):
    if 'LOCAL_RANK' not in os.environ:
        return False, 0, 0, 1
    local_rank = int(os.environ['LOCAL_RANK'])
    rank = int(os.environ['RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=cfg['dist']['backend'], init_method='env://',
                            timeout=datetime.timedelta(minutes=30))
    dist.barrier()
    return True, rank, local_rank, world_size


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def reduce_mean(tensor, world_size):
    rt = tensor.detach().clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def build_optimizer(cfg, model):
    opt_cfg = cfg['optim']
    params = [p for p in model.parameters() if p.requires_grad]
    if opt_cfg.get('fused', True) and HAS_APEX:
        return FusedAdam(params, lr=opt_cfg['lr'], betas=(0.9, 0.999), eps=1e-8,
                         weight_decay=opt_cfg['weight_decay'])
    return torch.optim.Adam(params, lr=opt_cfg['lr'], betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=opt_cfg['weight_decay'])


def main():
    args = parse_args()
    cfg = load_cfg(args)
    distributed, rank, local_rank, world_size = setup_distributed(cfg)
    device = torch.device('cuda', local_rank)

    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                        format='%(asctime)s %(levelname)s %(message)s')
    seed_everything(args.seed + rank)

    # Ampere and newer: TF32 matmuls are accurate enough for the cost volume
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    if rank == 0:
        os.makedirs(args.log_dir, exist_ok=True)
        logger.info('%d CUDA device(s) visible, world size %d', torch.cuda.device_count(), world_size)
        writer = SummaryWriter(args.log_dir)
    else:
        writer = None

    # ------------------------------------------------------------------ data
    train_set = KittiOdometry(cfg['data']['data_root'], seqs=cfg['data']['train_seqs'],
                              num_points=cfg['data']['num_points'], augment=True)
    val_set = KittiOdometry(cfg['data']['data_root'], seqs=cfg['data']['val_seqs'],
                            num_points=cfg['data']['num_points'], augment=False)
    train_sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    train_loader = DataLoader(train_set, batch_size=cfg['train']['batch_size'],
                              shuffle=(train_sampler is None), sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, drop_last=True,
                              collate_fn=collate_pairs, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=4,
                            collate_fn=collate_pairs)

    # ----------------------------------------------------------------- model
    model = PWCLONet(cfg['model'])
    if distributed and args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    if distributed:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    criterion = MultiScalePoseLoss(cfg['loss']).to(device)

    optimizer = build_optimizer(cfg, model)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg['optim']['step_size'],
                                                gamma=cfg['optim']['gamma'])

    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    start_epoch = 0
    if args.resume is not None:
        ckpt = torch.load(args.resume, map_location=f'cuda:{local_rank}')
        (model.module if distributed else model).load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        start_epoch = ckpt['epoch'] + 1
        logger.info('resumed from %s (epoch %d)', args.resume, ckpt['epoch'])

    # ----------------------------------------------------------------- train
    global_step = start_epoch * len(train_loader)
    best_ate = float('inf')
    for epoch in range(start_epoch, cfg['train']['epochs']):
        if distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for it, batch in enumerate(train_loader):
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
                preds = model(batch['pc1'], batch['pc2'], batch['feat1'], batch['feat2'])
                loss, loss_dict = criterion(preds, batch['q_gt'], batch['t_gt'])

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            scaler.step(optimizer)
            scaler.update()
            global_step += 1

            if distributed:
                loss = reduce_mean(loss, world_size)
            if rank == 0 and it % cfg['train']['log_every'] == 0:
                mem = torch.cuda.max_memory_allocated() / 2 ** 20
                logger.info('epoch %d it %d/%d loss %.4f lr %.2e mem %.0fMB %.2fs/it', epoch, it,
                            len(train_loader), loss.item(), optimizer.param_groups[0]['lr'], mem,
                            (time.time() - t0) / (it + 1))
                writer.add_scalar('train/loss', loss.item(), global_step)
                for k, v in loss_dict.items():
                    writer.add_scalar(f'train/{k}', v.item(), global_step)
        scheduler.step()

        # ------------------------------------------------------------ val
        if rank == 0 and (epoch + 1) % cfg['train']['val_every'] == 0:
            model.eval()
            errs = []
            with torch.no_grad():
                for batch in val_loader:
                    batch = {k: v.to(device) for k, v in batch.items()}
                    q, t = (model.module if distributed else model)(
                        batch['pc1'], batch['pc2'], batch['feat1'], batch['feat2'])[0]
                    R = quat_to_mat(q)
                    errs.append(relative_pose_errors(R, t, batch['q_gt'], batch['t_gt']))
            errs = np.array(errs)
            rre, rte = errs[:, 0].mean(), errs[:, 1].mean()
            logger.info('val epoch %d: RRE %.4f deg RTE %.4f m', epoch, rre, rte)
            writer.add_scalar('val/rre', rre, epoch)
            writer.add_scalar('val/rte', rte, epoch)
            state = {
                'epoch': epoch,
                'model': (model.module if distributed else model).state_dict(),
                'optimizer': optimizer.state_dict(),
                'scheduler': scheduler.state_dict(),
                'cfg': cfg,
            }
            torch.save(state, os.path.join(args.log_dir, 'last.pth'))
            if rte < best_ate:
                best_ate = rte
                torch.save(state, os.path.join(args.log_dir, 'best.pth'))

    if distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
