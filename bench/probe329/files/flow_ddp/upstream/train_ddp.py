#!/usr/bin/env python
"""
Multi-GPU training of the event-based optical-flow network on DSEC (DistributedDataParallel).

Launch with torchrun, one process per GPU:

    torchrun --standalone --nproc_per_node=4 train_ddp.py --config configs/dsec_tma.yaml --bf16 --compile

Set --nvtx to emit NVTX ranges for Nsight Systems.
"""
import argparse
import math
import os
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from core.model import build_flow_model
from core.loss import sequence_loss
from core.datasets import build_dsec_train, build_dsec_val
from core.utils.logger import Logger

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, required=True)
    parser.add_argument('--output', type=str, default='runs/ddp')
    parser.add_argument('--resume', type=str, default=None)
    parser.add_argument('--bf16', action='store_true', help='bf16 autocast (Ampere and newer)')
    parser.add_argument('--compile', action='store_true')
    parser.add_argument('--nvtx', action='store_true')
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--log_every', type=int, default=50)
    parser.add_argument('--val_every', type=int, default=5000)
    return parser.parse_args()


def setup_distributed():
    """Initialise the default process group from the torchrun environment."""
    if 'RANK' not in os.environ:
        # single-process fallback (debugging)
        os.environ.setdefault('RANK', '0')
        os.environ.setdefault('WORLD_SIZE', '1')
        os.environ.setdefault('LOCAL_RANK', '0')
        os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
        os.environ.setdefault('MASTER_PORT', '29500')
    local_rank = int(os.environ['LOCAL_RANK'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://', timeout=timedelta(minutes=30))
    return dist.get_rank(), dist.get_world_size(), local_rank


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def reduce_mean(t: torch.Tensor, world_size: int) -> torch.Tensor:
    rt = t.detach().clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def build_optimizer(model, cfg):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or n.endswith('.bias') else decay).append(p)
    groups = [{'params': decay, 'weight_decay': cfg['weight_decay']},
              {'params': no_decay, 'weight_decay': 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg['lr'], betas=(0.9, 0.999), eps=1e-8, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, cfg['lr'], cfg['num_steps'] + 100,
                                                    pct_start=0.05, cycle_momentum=False,
                                                    anneal_strategy='linear')
    return optimizer, scheduler


@torch.no_grad()
def validate(model, loader, device, amp_dtype, world_size):
    model.eval()
    epe_sum = torch.zeros(1, device=device)
    n_px = torch.zeros(1, device=device)
    for batch in loader:
        ev_old = batch['event_volume_old'].to(device, non_blocking=True)
        ev_new = batch['event_volume_new'].to(device, non_blocking=True)
        flow_gt = batch['flow'].to(device, non_blocking=True)
        valid = batch['valid'].to(device, non_blocking=True) > 0.5
        with torch.autocast('cuda', dtype=amp_dtype, enabled=amp_dtype is not None):
            flow_preds = model(ev_old, ev_new, iters=12)
        epe = torch.sum((flow_preds[-1].float() - flow_gt) ** 2, dim=1).sqrt()
        epe_sum += epe[valid].sum()
        n_px += valid.sum()
    dist.all_reduce(epe_sum)
    dist.all_reduce(n_px)
    model.train()
    return (epe_sum / n_px.clamp(min=1)).item()


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device('cuda', local_rank)
    is_main = rank == 0

    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    seed_everything(args.seed, rank)
    torch.backends.cudnn.benchmark = True

    amp_dtype = None
    if args.bf16:
        if torch.cuda.is_bf16_supported():
            amp_dtype = torch.bfloat16
        else:
            amp_dtype = torch.float16
            if is_main:
                print('bf16 not supported on this GPU, falling back to fp16 autocast')
    scaler = torch.amp.GradScaler('cuda', enabled=amp_dtype == torch.float16)

    model = build_flow_model(cfg['model']).to(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if args.resume is not None:
        state = torch.load(args.resume, map_location=f'cuda:{local_rank}')
        model.load_state_dict(state['model'])
    model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                find_unused_parameters=False, gradient_as_bucket_view=True)
    if args.compile:
        model = torch.compile(model)

    train_set = build_dsec_train(cfg['data'])
    val_set = build_dsec_val(cfg['data'])
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True)
    val_sampler = DistributedSampler(val_set, num_replicas=world_size, rank=rank, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=cfg['batch_size_per_gpu'], sampler=train_sampler,
                              num_workers=cfg.get('num_workers', 8), pin_memory=True, drop_last=True,
                              persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler, num_workers=2, pin_memory=True)

    optimizer, scheduler = build_optimizer(model, cfg['optim'])
    logger = Logger(args.output) if is_main else None

    step = 0
    epoch = 0
    t_last = time.time()
    while step < cfg['optim']['num_steps']:
        train_sampler.set_epoch(epoch)
        for batch in train_loader:
            ev_old = batch['event_volume_old'].to(device, non_blocking=True)
            ev_new = batch['event_volume_new'].to(device, non_blocking=True)
            flow_gt = batch['flow'].to(device, non_blocking=True)
            valid = batch['valid'].to(device, non_blocking=True)

            if args.nvtx:
                torch.cuda.nvtx.range_push('forward')
            with torch.autocast(device_type='cuda', dtype=amp_dtype, enabled=amp_dtype is not None):
                flow_preds = model(ev_old, ev_new, iters=cfg['model'].get('iters', 12))
                loss, metrics = sequence_loss(flow_preds, flow_gt, valid, gamma=cfg['optim']['gamma'])
            if args.nvtx:
                torch.cuda.nvtx.range_pop()

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg['optim']['clip'])
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1

            if step % args.log_every == 0:
                loss_avg = reduce_mean(loss, world_size)
                if is_main:
                    dt = (time.time() - t_last) / args.log_every
                    t_last = time.time()
                    mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                    logger.log({'loss': loss_avg.item(), 'grad_norm': grad_norm.item(),
                                'lr': scheduler.get_last_lr()[0], 's/it': dt, 'mem_gb': mem, **metrics}, step)

            if step % args.val_every == 0:
                epe = validate(model, val_loader, device, amp_dtype, world_size)
                if is_main:
                    logger.log({'val_epe': epe}, step)
                    torch.save({'model': model.module.state_dict() if hasattr(model, 'module') else model.state_dict(),
                                'step': step}, os.path.join(args.output, f'ckpt_{step:06d}.pth'))
                dist.barrier()

            if step >= cfg['optim']['num_steps']:
                break
        epoch += 1

    if is_main:
        logger.close()
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
