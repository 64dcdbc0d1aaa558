#!/usr/bin/env python
"""
Train a shape-aware SynthMorph model (PyTorch) on synthetic label maps only.

Images and label maps are synthesized on the GPU every step (see generators.py). Mixed precision
is enabled by default because the 3D U-Net at 160x160x192 does not fit in 24 GB in fp32 with
batch size 2. Use --no-amp on GPUs without fast fp16.

Example:
    python -m synthmorph.train_synthmorph --model-dir models/sm-shapes --gpu 0 --amp
"""

import argparse
import json
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F

from . import generators
from .networks import VxmDense
from .losses import Dice, Grad

# ---------------------------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------------------------
p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument('--model-dir', default='models', help='output directory for checkpoints')
p.add_argument('--gpu', type=int, default=0, help='CUDA device index')
p.add_argument('--inshape', type=int, nargs='+', default=[160, 160, 192])
p.add_argument('--num-labels', type=int, default=26, help='number of synthetic labels')
p.add_argument('--out-labels', type=int, default=16, help='labels used in the Dice loss')
p.add_argument('--batch-size', type=int, default=1)
p.add_argument('--steps', type=int, default=400000)
p.add_argument('--save-every', type=int, default=5000)
p.add_argument('--lr', type=float, default=1e-4)
p.add_argument('--lambda', dest='reg_weight', type=float, default=1.0, help='regularization weight')
p.add_argument('--int-steps', type=int, default=5)
p.add_argument('--enc', type=int, nargs='+', default=[256] * 4)
p.add_argument('--dec', type=int, nargs='+', default=[256] * 4)
p.add_argument('--amp', dest='amp', action='store_true', default=True, help='mixed precision (default)')
p.add_argument('--no-amp', dest='amp', action='store_false')
p.add_argument('--compile', action='store_true', help='torch.compile the model (PyTorch >= 2.0)')
p.add_argument('--resume', help='checkpoint to resume from')
p.add_argument('--seed', type=int, default=None)
p.add_argument('--log-every', type=int, default=100)
args = p.parse_args()

os.makedirs(args.model_dir, exist_ok=True)
with open(os.path.join(args.model_dir, 'args.json'), 'w') as f:
    json.dump(vars(args), f, indent=2)

# ---------------------------------------------------------------------------------------------
# device / reproducibility
# ---------------------------------------------------------------------------------------------
if not torch.cuda.is_available():
    raise SystemExit('SynthMorph training requires a CUDA GPU')

device = torch.device('cuda', args.gpu)
torch.cuda.set_device(device)

if args.seed is not None:
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

# TF32 matmuls/convs are fine for registration and ~2x faster on Ampere
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True

# bf16 autocast on Ampere and newer, fp16 (+ loss scaling) otherwise
if torch.cuda.get_device_capability(device)[0] >= 8:
    amp_dtype = torch.bfloat16
else:
    amp_dtype = torch.float16
use_scaler = args.amp and amp_dtype == torch.float16

props = torch.cuda.get_device_properties(device)
print(f'Using {props.name} ({props.total_memory / 2 ** 30:.1f} GiB), amp={args.amp} ({amp_dtype})')

# ---------------------------------------------------------------------------------------------
# model, losses, optimizer
# ---------------------------------------------------------------------------------------------
inshape = tuple(args.inshape)
model = VxmDense(inshape, nb_unet_features=[args.enc, args.dec], int_steps=args.int_steps,
                 int_downsize=2, bidir=False)
model.to(device)

if args.compile:
    model = torch.compile(model, mode='max-autotune')

dice = Dice()
grad = Grad('l2', loss_mult=2)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
scaler = torch.cuda.amp.GradScaler(enabled=use_scaler)

start_step = 0
if args.resume:
    ckpt = torch.load(args.resume, map_location='cuda:%d' % args.gpu)
    model.load_state_dict(ckpt['model'])
    optimizer.load_state_dict(ckpt['optimizer'])
    scaler.load_state_dict(ckpt['scaler'])
    start_step = ckpt['step']
    print(f'resumed from {args.resume} at step {start_step}')

gen = generators.SynthPairGenerator(inshape, num_labels=args.num_labels, batch_size=args.batch_size,
                                    seed=args.seed, device=device)


def save(step):
    path = os.path.join(args.model_dir, f'{step:06d}.pt')
    state = {
        'model': model.state_dict(),
        'optimizer': optimizer.state_dict(),
        'scaler': scaler.state_dict(),
        'step': step,
        'inshape': inshape,
    }
    torch.save(state, path)
    return path


# ---------------------------------------------------------------------------------------------
# training loop
# ---------------------------------------------------------------------------------------------
model.train()
t0 = time.time()
running = []
for step in range(start_step, args.steps):
    mov, fix, mov_lab, fix_lab = next(gen)

    # random subset of structures for the Dice loss
    mov_lab = generators.sample_label_subset(mov_lab, args.out_labels, args.num_labels)
    fix_lab = generators.sample_label_subset(fix_lab, args.out_labels, args.num_labels)
    mov_oh = generators.to_onehot(mov_lab, args.out_labels + 1)
    fix_oh = generators.to_onehot(fix_lab, args.out_labels + 1)

    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
        _, flow = model(mov, fix, registration=True)

    # warp the one-hot labels in fp32: grid_sample in half precision loses small structures
    moved_oh = model.transformer(mov_oh, flow.float())
    loss_sim = dice.loss(fix_oh, moved_oh)
    loss_reg = grad.loss(None, flow.float())
    loss = loss_sim + args.reg_weight * loss_reg

    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

    running.append([loss.item(), loss_sim.item(), loss_reg.item()])
    if (step + 1) % args.log_every == 0:
        torch.cuda.synchronize()
        elapsed = time.time() - t0
        m = np.mean(running, axis=0)
        mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
        print(f'step {step + 1:7d}  loss {m[0]:.4f}  dice {m[1]:.4f}  reg {m[2]:.4f}  '
              f'{elapsed / args.log_every:.3f} s/step  peak {mem:.1f} GiB', flush=True)
        running = []
        t0 = time.time()

    if (step + 1) % args.save_every == 0:
        print('saved', save(step + 1))

save(args.steps)
