"""
Distributed training for CST-former style SELD models (multi-ACCDOA output) on STARSS23 + synthetic data.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=4 train_ddp.py --config configs/cst_former_mic.yaml --amp --compile

Single-GPU debugging also works: python train_ddp.py --config ... (falls back to world_size=1).
"""
import argparse
import json
import math
import os
import random
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, DistributedSampler

from data.seld_dataset import SeldChunkDataset, collate_seld
from models.cst_former import CSTFormer
from utils.losses import MSELoss_ADPIT
from utils.metrics import SELDMetrics, multi_accdoa_to_dcase
from utils.scheduler import WarmupCosine


def get_args():
    parser = argparse.ArgumentParser(description='CST-former SELD training (DDP)')
    parser.add_argument('--config', required=True)
    parser.add_argument('--out_dir', default='exp/cst_former')
    parser.add_argument('--resume', default='')
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--amp', action='store_true', help='mixed precision (bf16 on Ampere+, fp16 otherwise)')
    parser.add_argument('--compile', action='store_true', help='torch.compile the model (PyTorch >= 2.0)')
    parser.add_argument('--profile', action='store_true', help='profile 5 steps of the first epoch')
    parser.add_argument('--log_interval', type=int, default=50)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(args):
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args.rank = int(os.environ['RANK'])
        args.world_size = int(os.environ['WORLD_SIZE'])
        args.local_rank = int(os.environ['LOCAL_RANK'])
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
    args.distributed = args.world_size > 1

    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
        dist.init_process_group(backend='nccl', init_method='env://',
                                world_size=args.world_size, rank=args.rank)
        dist.barrier()
    return torch.device('cuda', args.local_rank)


def is_main(args):
    return args.rank == 0


def log(args, msg):
    if is_main(args):
        print('[{}] {}'.format(time.strftime('%H:%M:%S'), msg), flush=True)


def pick_amp_dtype():
    """bf16 needs compute capability >= 8.0 (A100/A6000/H100); V100/T4 fall back to fp16 + GradScaler."""
    major, minor = torch.cuda.get_device_capability()
    if major >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return torch.bfloat16
    return torch.float16


def reduce_mean(value, args):
    t = torch.tensor([value], dtype=torch.float32, device='cuda')
    if args.distributed:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= args.world_size
    return t.item()


def build_loaders(cfg, args):
    train_set = SeldChunkDataset(cfg['data'], split='train')
    val_set = SeldChunkDataset(cfg['data'], split='val')
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed) if args.distributed else None
    train_loader = DataLoader(train_set, batch_size=cfg['train']['batch_size'], shuffle=train_sampler is None,
                              sampler=train_sampler, num_workers=cfg['train']['num_workers'], pin_memory=True,
                              drop_last=True, persistent_workers=True, collate_fn=collate_seld)
    # validation runs on rank 0 only, full recordings, batch of 1
    val_loader = DataLoader(val_set, batch_size=1, shuffle=False, num_workers=2, collate_fn=collate_seld)
    return train_loader, val_loader, train_sampler


def save_checkpoint(path, model, optimizer, scheduler, scaler, epoch, best):
    state = {
        'model': model.module.state_dict() if hasattr(model, 'module') else model.state_dict(),
        'optimizer': optimizer.state_dict(),
        'scheduler': scheduler.state_dict(),
        'scaler': scaler.state_dict(),
        'epoch': epoch,
        'best': best,
    }
    torch.save(state, path)


@torch.no_grad()
def validate(model, loader, device, metrics, cfg, amp_ctx):
    model.eval()
    metrics.reset()
    for feats, targets, meta in loader:
        feats = feats.to(device, non_blocking=True)
        with amp_ctx():
            out = model(feats)
        out = out.float().cpu().numpy()
        pred_dict = multi_accdoa_to_dcase(out, cfg['data']['n_classes'], thresh_unify=cfg['eval']['thresh_unify'])
        metrics.update(pred_dict, meta['ref'][0])
    return metrics.compute()


def train_one_epoch(model, loader, optimizer, scheduler, scaler, criterion, device, args, epoch, amp_ctx, prof=None):
    model.train()
    t0 = time.time()
    running = 0.
    for step, (feats, targets, _) in enumerate(loader):
        feats = feats.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)

        if args.profile:
            torch.cuda.nvtx.range_push('step{}'.format(step))
        with amp_ctx():
            out = model(feats)
            loss = criterion(out.float(), targets)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        if args.profile:
            torch.cuda.nvtx.range_pop()
        if prof is not None:
            prof.step()

        running += loss.item()
        if (step + 1) % args.log_interval == 0:
            avg = reduce_mean(running / args.log_interval, args)
            log(args, 'epoch {} step {}/{} loss {:.4f} gnorm {:.2f} lr {:.2e} {:.1f} it/s'.format(
                epoch, step + 1, len(loader), avg, float(grad_norm), scheduler.get_last_lr()[0],
                args.log_interval / (time.time() - t0)))
            running = 0.
            t0 = time.time()


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    device = setup_distributed(args)
    seed_everything(args.seed + args.rank)
    os.makedirs(args.out_dir, exist_ok=True)

    amp_dtype = pick_amp_dtype() if args.amp else torch.float32
    if args.amp:
        amp_ctx = lambda: torch.autocast(device_type='cuda', dtype=amp_dtype)
    else:
        amp_ctx = nullcontext
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)
    log(args, 'world_size={} amp={} dtype={}'.format(args.world_size, args.amp, amp_dtype))

    train_loader, val_loader, train_sampler = build_loaders(cfg, args)

    model = CSTFormer(**cfg['model'])
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    log(args, 'model: {:.2f} M parameters'.format(n_params / 1e6))

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg['train']['lr'], weight_decay=cfg['train']['weight_decay'], fused=True)
    total_steps = cfg['train']['epochs'] * len(train_loader)
    scheduler = WarmupCosine(optimizer, warmup_steps=cfg['train']['warmup_steps'], total_steps=total_steps)
    criterion = MSELoss_ADPIT()

    start_epoch, best = 0, math.inf
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cuda:{}'.format(args.local_rank))
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch, best = ckpt['epoch'] + 1, ckpt['best']
        log(args, 'resumed from {} (epoch {})'.format(args.resume, ckpt['epoch']))

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False, gradient_as_bucket_view=True)
    if args.compile:
        model = torch.compile(model, mode='max-autotune')

    metrics = SELDMetrics(n_classes=cfg['data']['n_classes'], doa_threshold=20, average='macro')
    history = []
    for epoch in range(start_epoch, cfg['train']['epochs']):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        torch.cuda.reset_peak_memory_stats()

        prof = None
        if args.profile and epoch == start_epoch and is_main(args):
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           schedule=schedule(wait=2, warmup=2, active=5, repeat=1),
                           on_trace_ready=tensorboard_trace_handler(os.path.join(args.out_dir, 'tb_prof')),
                           record_shapes=True, with_stack=False)
            prof.start()
        train_one_epoch(model, train_loader, optimizer, scheduler, scaler, criterion, device, args, epoch, amp_ctx, prof)
        if prof is not None:
            prof.stop()

        if is_main(args):
            scores = validate(model, val_loader, device, metrics, cfg, amp_ctx)
            peak = torch.cuda.max_memory_allocated() / 2 ** 30
            log(args, 'epoch {} | ER {:.3f} F {:.3f} LE {:.2f} LR {:.3f} SELD {:.4f} | peak mem {:.1f} GB'.format(
                epoch, scores['ER'], scores['F'], scores['LE'], scores['LR'], scores['seld'], peak))
            history.append({'epoch': epoch, **scores})
            with open(os.path.join(args.out_dir, 'history.json'), 'w') as f:
                json.dump(history, f, indent=1)
            save_checkpoint(os.path.join(args.out_dir, 'last.pt'), model, optimizer, scheduler, scaler, epoch, best)
            if scores['seld'] < best:
                best = scores['seld']
                save_checkpoint(os.path.join(args.out_dir, 'best.pt'), model, optimizer, scheduler, scaler, epoch, best)
                log(args, 'new best SELD score {:.4f}'.format(best))
        if args.distributed:
            dist.barrier()

    if args.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
