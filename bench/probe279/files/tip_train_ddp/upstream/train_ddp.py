"""
Distributed training of the transformer inertial poser (TIP-style: causal transformer over IMU windows,
predicting SMPL pose in 6D + root velocity + foot contacts + a learned stationary-point term).

Single node, 8 GPUs:
    torchrun --nproc_per_node=8 train_ddp.py --cfg configs/tip_amass.yaml
Single GPU (debug):
    python train_ddp.py --cfg configs/tip_amass.yaml --batch-size 32
"""
import argparse
import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from models.tip_transformer import TIPTransformer
from datasets.amass_windows import AmassIMUWindows, DipIMUWindows

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


class ModelEMA:
    """
    Exponential moving average of the weights (kept in fp32 on the same device as the model).
    """
    def __init__(self, model, decay=0.999):
        import copy
        self.ema = copy.deepcopy(model).eval()
        self.decay = decay
        for p_ in self.ema.parameters():
            p_.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        msd = model.state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v.mul_(self.decay).add_(msd[k].detach(), alpha=1 - self.decay)


def export_onnx(model, path, win=60):
    """
    Export the EMA model for the Unity / mobile demo (fixed window, opset 17).
    """
    model = model.eval().float().cpu()
    dummy = torch.randn(1, win, 72)
    torch.onnx.export(model, (dummy,), path, input_names=['imu'], output_names=['pose6d', 'root_vel', 'contact'],
                      dynamic_axes={'imu': {0: 'batch'}}, opset_version=17)
    print('exported', path)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--cfg', default='configs/tip_amass.yaml')
    p.add_argument('--batch-size', type=int, default=None, help='per-GPU batch size (overrides cfg)')
    p.add_argument('--epochs', type=int, default=None)
    p.add_argument('--compile', action='store_true', help='torch.compile the model (PyTorch >= 2.0)')
    p.add_argument('--resume', default='')
    p.add_argument('--out', default='output/tip')
    p.add_argument('--ema', type=float, default=0.999, help='EMA decay, 0 disables')
    p.add_argument('--export-onnx', action='store_true')
    return p.parse_args()


def setup_distributed():
    """
    Initialise NCCL from the torchrun environment. Falls back to single-process mode.
    """
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        rank = int(os.environ['RANK'])
        world_size = int(os.environ['WORLD_SIZE'])
        local_rank = int(os.environ['LOCAL_RANK'])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=rank)
        dist.barrier()
    else:
        rank, world_size, local_rank = 0, 1, 0
    return rank, world_size, local_rank


def is_main(rank):
    return rank == 0


def reduce_mean(t, world_size):
    if world_size == 1:
        return t
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / world_size


def cosine_lr(step, total, warmup, base_lr, min_lr):
    if step < warmup:
        return base_lr * step / max(1, warmup)
    p = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * p))


def losses_fn(out, batch, cfg):
    m = batch['mask'].unsqueeze(-1)
    denom = m.sum().clamp(min=1)
    l_pose = ((out['pose6d'] - batch['pose6d']) ** 2 * m).sum() / denom
    l_vel = ((out['root_vel'] - batch['root_vel']) ** 2 * m).sum() / denom
    l_contact = F.binary_cross_entropy_with_logits(out['contact'], batch['contact'], reduction='none')
    l_contact = (l_contact * m).sum() / denom
    total = cfg['w_pose'] * l_pose + cfg['w_vel'] * l_vel + cfg['w_contact'] * l_contact
    return total, {'pose': l_pose.detach(), 'vel': l_vel.detach(), 'contact': l_contact.detach()}


def main():
    args = get_args()
    with open(args.cfg) as f:
        cfg = yaml.safe_load(f)
    bs = args.batch_size or cfg['train']['batch_size']
    epochs = args.epochs or cfg['train']['epochs']

    rank, world_size, local_rank = setup_distributed()
    device = torch.device('cuda', local_rank)
    torch.manual_seed(cfg['seed'] + rank)
    np.random.seed(cfg['seed'] + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    # bf16 autocast on Ampere and newer, fp16 + GradScaler otherwise
    use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    autocast = torch.autocast(device_type='cuda', dtype=amp_dtype) if cfg['train']['amp'] else nullcontext()
    scaler = torch.cuda.amp.GradScaler(enabled=cfg['train']['amp'] and not use_bf16)

    train_set = AmassIMUWindows(cfg['data']['amass_dir'], win=cfg['data']['win'], stride=cfg['data']['stride'])
    val_set = DipIMUWindows(cfg['data']['dip_dir'], split='validation', win=cfg['data']['win'])
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=bs, sampler=sampler, shuffle=sampler is None,
                              num_workers=cfg['train']['workers'], pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=bs, shuffle=False, num_workers=2, pin_memory=True)

    model = TIPTransformer(**cfg['model']).to(device)
    if args.compile:
        model = torch.compile(model, mode='max-autotune')
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    raw_model = model.module if world_size > 1 else model
    ema = ModelEMA(raw_model, args.ema) if args.ema > 0 and is_main(rank) else None

    decay, no_decay = [], []
    for n, p_ in raw_model.named_parameters():
        (no_decay if p_.ndim < 2 or 'norm' in n or 'pos_emb' in n else decay).append(p_)
    groups = [{'params': decay, 'weight_decay': cfg['train']['wd']}, {'params': no_decay, 'weight_decay': 0.0}]
    if HAS_APEX:
        optimizer = FusedAdam(groups, lr=cfg['train']['lr'], betas=(0.9, 0.95), adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(groups, lr=cfg['train']['lr'], betas=(0.9, 0.95))

    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        raw_model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optim'])
        start_epoch, step = ckpt['epoch'] + 1, ckpt['step']

    total_steps = epochs * len(train_loader)
    if is_main(rank):
        os.makedirs(args.out, exist_ok=True)
        print('world size %d, per-GPU batch %d, %d steps, bf16=%s' % (world_size, bs, total_steps, use_bf16))

    for epoch in range(start_epoch, epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for it, batch in enumerate(train_loader):
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            lr = cosine_lr(step, total_steps, cfg['train']['warmup'], cfg['train']['lr'], cfg['train']['min_lr'])
            for g in optimizer.param_groups:
                g['lr'] = lr
            with autocast:
                out = model(batch['imu'])
                loss, parts = losses_fn(out, batch, cfg['loss'])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg['train']['clip'])
            scaler.step(optimizer)
            scaler.update()
            if ema is not None:
                ema.update(raw_model)
            step += 1
            if it % 100 == 0:
                loss_avg = reduce_mean(loss.detach(), world_size)
                if is_main(rank):
                    print('ep %d it %d/%d loss %.4f lr %.2e %.1f it/s' % (
                        epoch, it, len(train_loader), loss_avg.item(), lr, (it + 1) / (time.time() - t0)))

        # validation (every rank evaluates its shard of nothing: val set is small, run it on all ranks)
        model.eval()
        err = torch.zeros(2, device='cuda')
        with torch.no_grad(), autocast:
            for batch in val_loader:
                batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                out = raw_model(batch['imu'])
                e = (out['pose6d'].float() - batch['pose6d']).pow(2).sum(-1).sqrt()
                err[0] += (e * batch['mask']).sum()
                err[1] += batch['mask'].sum()
        if world_size > 1:
            dist.all_reduce(err)
        if is_main(rank):
            print('epoch %d  val 6d-err %.4f  (%.0fs)' % (epoch, (err[0] / err[1]).item(), time.time() - t0))
            torch.save({'model': raw_model.state_dict(), 'optim': optimizer.state_dict(), 'epoch': epoch,
                        'step': step, 'cfg': cfg}, os.path.join(args.out, 'last.pt'))

    if is_main(rank) and ema is not None:
        torch.save({'model': ema.ema.state_dict(), 'cfg': cfg}, os.path.join(args.out, 'ema.pt'))
        if args.export_onnx:
            export_onnx(ema.ema, os.path.join(args.out, 'tip.onnx'), win=cfg['data']['win'])
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
