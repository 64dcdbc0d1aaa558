#!/usr/bin/env python
"""
Fine-tune a CLIP ViT image encoder (+ linear head) for universal fake-image detection.

Trained on ProGAN (CNNDetection train split, 4/20 classes) and evaluated on the
UniversalFakeDetect benchmark (GANs, diffusion, DALL-E ...).  Supports
single-GPU and torchrun multi-GPU training:

    torchrun --nproc_per_node 8 scripts/train_clip_probe.py --cfg configs/vitl14_lora.yaml
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
import torch.nn.functional as F
import yaml
from sklearn.metrics import average_precision_score, roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data import build_train_set, build_eval_sets
from models.clip import clip
from models.lora import inject_lora, lora_state_dict

try:
    import wandb
except ImportError:  # logging is optional
    wandb = None


class CLIPDetector(nn.Module):
    def __init__(self, clip_model, embed_dim, n_classes=1, dropout=0.0):
        super().__init__()
        self.visual = clip_model.visual
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(embed_dim, n_classes))

    def forward(self, x):
        feats = self.visual(x.type(self.visual.conv1.weight.dtype))
        feats = F.normalize(feats.float(), dim=-1)
        return self.head(feats)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--cfg', type=str, required=True)
    p.add_argument('--out_dir', type=str, default='./runs')
    p.add_argument('--resume', type=str, default=None)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--compile', action='store_true', help='torch.compile the model (PyTorch >= 2.0)')
    p.add_argument('--no_wandb', action='store_true')
    return p.parse_args()


def setup_distributed():
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        rank = int(os.environ['RANK'])
        world_size = int(os.environ['WORLD_SIZE'])
        local_rank = int(os.environ['LOCAL_RANK'])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        dist.barrier()
        return rank, world_size, local_rank
    return 0, 1, 0


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def pick_amp_dtype(requested):
    """bf16 on Ampere+ (compute capability >= 8.0), fp16 otherwise."""
    if requested == 'fp32':
        return None
    if requested == 'bf16' or requested == 'auto':
        major, _ = torch.cuda.get_device_capability()
        if major >= 8:
            return torch.bfloat16
    return torch.float16


def cosine_lr(step, total, base_lr, warmup, min_lr=0.0):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * t))


@torch.no_grad()
def evaluate(model, loaders, device, amp_ctx):
    model.eval()
    results = {}
    for name, loader in loaders.items():
        ys, ps = [], []
        for img, label in loader:
            img = img.to(device, non_blocking=True)
            with amp_ctx():
                logit = model(img).squeeze(1)
            ps.append(torch.sigmoid(logit.float()).cpu())
            ys.append(label)
        y = torch.cat(ys).numpy()
        p = torch.cat(ps).numpy()
        acc = ((p > 0.5) == y).mean()
        results[name] = {'ap': average_precision_score(y, p), 'auc': roc_auc_score(y, p), 'acc': float(acc)}
    model.train()
    return results


def main():
    args = parse_args()
    with open(args.cfg) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank = setup_distributed()
    is_main = rank == 0
    device = torch.device('cuda', local_rank)
    seed_all(args.seed + rank)

    # TF32 matmuls are fine for this task and ~2x faster on A100
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    # ---------------- model ----------------
    clip_model, _ = clip.load(cfg['clip_arch'], device='cpu', jit=False)
    clip_model.float()
    if cfg.get('lora_rank', 0) > 0:
        inject_lora(clip_model.visual, rank=cfg['lora_rank'], alpha=cfg.get('lora_alpha', 16))
    else:
        for p_ in clip_model.visual.parameters():
            p_.requires_grad = cfg.get('finetune_backbone', False)
    model = CLIPDetector(clip_model, embed_dim=clip_model.visual.output_dim, dropout=cfg.get('dropout', 0.0))
    del clip_model.transformer  # text tower is not used
    model = model.to(device)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    raw_model = model.module if isinstance(model, DDP) else model
    if args.compile:
        model = torch.compile(model, mode='max-autotune')

    # ---------------- data ----------------
    train_set = build_train_set(cfg)
    sampler = DistributedSampler(train_set, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=cfg['batch_size'], shuffle=sampler is None, sampler=sampler,
                              num_workers=cfg.get('workers', 8), pin_memory=True, drop_last=True,
                              persistent_workers=True)
    eval_loaders = {k: DataLoader(v, batch_size=cfg['eval_batch_size'], shuffle=False, num_workers=4)
                    for k, v in build_eval_sets(cfg).items()} if is_main else {}

    # ---------------- optim ----------------
    params = [p_ for p_ in raw_model.parameters() if p_.requires_grad]
    decay = [p_ for p_ in params if p_.ndim >= 2]
    no_decay = [p_ for p_ in params if p_.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{'params': decay, 'weight_decay': cfg.get('weight_decay', 0.05)},
         {'params': no_decay, 'weight_decay': 0.0}],
        lr=cfg['lr'], betas=(0.9, 0.98), eps=1e-6,
        fused=torch.cuda.is_available(),
    )
    amp_dtype = pick_amp_dtype(cfg.get('precision', 'auto'))
    scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))

    def amp_ctx():
        if amp_dtype is None:
            return nullcontext()
        return torch.autocast(device_type='cuda', dtype=amp_dtype)

    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cpu')
        raw_model.load_state_dict(ckpt['model'], strict=False)
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch, step = ckpt['epoch'] + 1, ckpt['step']

    run_dir = os.path.join(args.out_dir, os.path.splitext(os.path.basename(args.cfg))[0])
    if is_main:
        os.makedirs(run_dir, exist_ok=True)
        props = torch.cuda.get_device_properties(device)
        print(f'[train] {world_size} x {props.name} ({props.total_memory / 2**30:.0f} GB), amp={amp_dtype}')
        if wandb is not None and not args.no_wandb:
            wandb.init(project='clip-fake-detect', config=cfg, dir=run_dir)

    total_steps = cfg['epochs'] * len(train_loader)
    criterion = nn.BCEWithLogitsLoss()
    best_map = 0.0
    for epoch in range(start_epoch, cfg['epochs']):
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        for img, label in train_loader:
            lr = cosine_lr(step, total_steps, cfg['lr'], cfg.get('warmup_steps', 500))
            for g in optimizer.param_groups:
                g['lr'] = lr
            img = img.to(device, non_blocking=True)
            label = label.float().to(device, non_blocking=True)
            with amp_ctx():
                logit = model(img).squeeze(1)
                loss = criterion(logit.float(), label)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if cfg.get('clip_grad', 0) > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, cfg['clip_grad'])
            scaler.step(optimizer)
            scaler.update()
            step += 1
            if is_main and step % 50 == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print(f'ep {epoch} step {step}/{total_steps} loss {loss.item():.4f} lr {lr:.2e} mem {mem:.1f}G')
                if wandb is not None and not args.no_wandb:
                    wandb.log({'loss': loss.item(), 'lr': lr}, step=step)

        if world_size > 1:
            dist.barrier()
        if is_main:
            res = evaluate(model, eval_loaders, device, amp_ctx)
            m_ap = float(np.mean([r['ap'] for r in res.values()]))
            print(f'[eval] epoch {epoch} mAP {m_ap * 100:.2f} ({time.time() - t0:.0f}s)')
            with open(os.path.join(run_dir, f'eval_ep{epoch}.json'), 'w') as f:
                json.dump(res, f, indent=2)
            state = {'model': lora_state_dict(raw_model) if cfg.get('lora_rank', 0) > 0 else raw_model.state_dict(),
                     'optimizer': optimizer.state_dict(), 'epoch': epoch, 'step': step, 'cfg': cfg}
            torch.save(state, os.path.join(run_dir, 'last.pth'))
            if m_ap > best_map:
                best_map = m_ap
                torch.save(state, os.path.join(run_dir, 'best.pth'))
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
