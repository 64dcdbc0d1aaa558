#!/usr/bin/env python3
"""Train SynthMorph (deformable, hyper-network) from label maps only.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node 4 scripts/train_synthmorph.py --labels /data/synth/labels --out runs/deform

Each process synthesises its own image pairs from random label-map pairs
(synthmorph.synth.LabelSynth), so the data loader only reads integer volumes.
"""

import argparse
import glob
import os
import random
import time

import nibabel as nib
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from synthmorph import losses, networks
from synthmorph.synth import LabelSynth

try:
    import pynvml
except ImportError:  # optional: only used for utilisation logging
    pynvml = None


def nvml_handle(index):
    if pynvml is None:
        return None
    try:
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--labels', required=True, help='directory of label maps (*.nii.gz), 256^3 1-mm')
    p.add_argument('--out', required=True)
    p.add_argument('--num-labels', type=int, default=26)
    p.add_argument('--batch-size', type=int, default=1, help='per GPU')
    p.add_argument('--steps', type=int, default=400000)
    p.add_argument('--lr', type=float, default=1e-4)
    p.add_argument('--extent', type=int, default=256)
    p.add_argument('--amp', action='store_true', help='mixed precision (fp16 autocast + GradScaler)')
    p.add_argument('--workers', type=int, default=4)
    p.add_argument('--resume', default=None)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--log-every', type=int, default=100)
    p.add_argument('--save-every', type=int, default=5000)
    return p.parse_args()


class LabelPairs(Dataset):
    def __init__(self, files, length):
        self.files = files
        self.length = length

    def __len__(self):
        return self.length

    def _load(self, f):
        x = np.asanyarray(nib.load(f).dataobj, dtype=np.int64)
        return torch.from_numpy(x)[None]

    def __getitem__(self, i):
        a, b = random.sample(self.files, 2)
        return self._load(a), self._load(b)


def setup_distributed():
    if 'RANK' not in os.environ:
        return 0, 0, 1
    rank = int(os.environ['RANK'])
    local_rank = int(os.environ['LOCAL_RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://')
    return rank, local_rank, world_size


def main():
    args = parse_args()
    rank, local_rank, world_size = setup_distributed()
    device = torch.device(f'cuda:{local_rank}')

    torch.manual_seed(args.seed + rank)
    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    files = sorted(glob.glob(os.path.join(args.labels, '*.nii.gz')))
    assert len(files) > 1, f'need at least two label maps in {args.labels}'
    ds = LabelPairs(files, length=args.steps * args.batch_size)
    sampler = DistributedSampler(ds, shuffle=True) if world_size > 1 else None
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                        num_workers=args.workers, pin_memory=True, drop_last=True, persistent_workers=True)

    in_shape = (args.extent,) * 3
    synth = LabelSynth(in_shape, args.num_labels, device=device, seed=args.seed + rank)
    model = networks.HyperVxmDense(in_shape=in_shape).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    core = model.module if world_size > 1 else model

    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    dice = losses.Dice()
    grad = losses.Grad('l2')

    step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f'cuda:{local_rank}')
        core.load_state_dict(ckpt['model'])
        opt.load_state_dict(ckpt['opt'])
        scaler.load_state_dict(ckpt['scaler'])
        step = ckpt['step']

    writer = SummaryWriter(args.out) if rank == 0 else None
    nvml = nvml_handle(local_rank) if rank == 0 else None
    model.train()
    t0 = time.time()
    for labels_a, labels_b in loader:
        labels_a = labels_a.to(device, non_blocking=True)
        labels_b = labels_b.to(device, non_blocking=True)
        with torch.no_grad():
            mov, fix, mov_lab, fix_lab = synth(labels_a, labels_b)

        # hyper-parameter lambda ~ U(0, 1) per batch
        lam = torch.rand(1, 1, device=device)

        with torch.cuda.amp.autocast(enabled=args.amp):
            disp = model(mov, fix, lam)
            # warp one-hot labels; similarity is label overlap only
            mov_oh = F.one_hot(mov_lab[:, 0], args.num_labels).permute(0, 4, 1, 2, 3).float()
            fix_oh = F.one_hot(fix_lab[:, 0], args.num_labels).permute(0, 4, 1, 2, 3).float()
            moved_oh = core.transform(mov_oh, disp)
            loss_sim = dice.loss(fix_oh, moved_oh)
            loss_reg = grad.loss(None, disp)
            loss = (1 - lam.squeeze()) * loss_sim + lam.squeeze() * loss_reg

        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        step += 1

        if rank == 0 and step % args.log_every == 0:
            torch.cuda.synchronize()
            dt = (time.time() - t0) / args.log_every
            mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
            util = pynvml.nvmlDeviceGetUtilizationRates(nvml).gpu if nvml is not None else -1
            print(f'step {step:7d}  loss {loss.item():.4f}  dice {loss_sim.item():.4f}  '
                  f'reg {loss_reg.item():.4f}  {dt:.2f} s/it  {mem:.1f} GiB', flush=True)
            writer.add_scalar('loss/total', loss.item(), step)
            writer.add_scalar('loss/dice', loss_sim.item(), step)
            writer.add_scalar('loss/reg', loss_reg.item(), step)
            writer.add_scalar('perf/sec_per_it', dt, step)
            writer.add_scalar('perf/gpu_util', util, step)
            torch.cuda.reset_peak_memory_stats(device)
            t0 = time.time()

        if rank == 0 and step % args.save_every == 0:
            torch.save({'model': core.state_dict(), 'opt': opt.state_dict(),
                        'scaler': scaler.state_dict(), 'step': step},
                       os.path.join(args.out, f'{step:07d}.pt'))

        if step >= args.steps:
            break

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
