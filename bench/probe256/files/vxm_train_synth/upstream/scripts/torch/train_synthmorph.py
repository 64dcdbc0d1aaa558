#!/usr/bin/env python

"""
Train a contrast-agnostic SynthMorph registration network with PyTorch.

No real images are needed: every step synthesises a pair of label maps and turns them into
random-contrast images on the GPU (see voxelmorph/torch/synth.py). The network is trained
with a label-overlap (Dice) loss on the warped label maps plus a smoothness penalty.

Example (one A100, 160^3 volumes, mixed precision):

    python scripts/torch/train_synthmorph.py --model-dir models/synthmorph \
        --inshape 160 160 192 --gpu 0 --amp --compile
"""

import os
import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F

os.environ['NEURITE_BACKEND'] = 'pytorch'
os.environ['VXM_BACKEND'] = 'pytorch'
import voxelmorph as vxm  # nopep8
from voxelmorph.torch import synth  # nopep8


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument('--model-dir', default='models/synthmorph')
    p.add_argument('--inshape', type=int, nargs='+', default=[160, 160, 192])
    p.add_argument('--num-labels', type=int, default=26)
    p.add_argument('--gpu', type=int, default=0, help='index of the GPU to train on')
    p.add_argument('--batch-size', type=int, default=1)
    p.add_argument('--steps', type=int, default=400000)
    p.add_argument('--save-every', type=int, default=5000)
    p.add_argument('--lr', type=float, default=1e-4)
    p.add_argument('--lambda', dest='reg_weight', type=float, default=1.0)
    p.add_argument('--int-steps', type=int, default=5)
    p.add_argument('--enc', type=int, nargs='+', default=[256] * 4)
    p.add_argument('--dec', type=int, nargs='+', default=[256] * 4 + [256] * 3)
    p.add_argument('--amp', action='store_true', help='train with float16 autocast + GradScaler')
    p.add_argument('--compile', action='store_true', help='wrap the model in torch.compile')
    p.add_argument('--resume', default=None, help='checkpoint to resume from')
    p.add_argument('--seed', type=int, default=42)
    return p.parse_args()


def setup_device(args):
    if not torch.cuda.is_available():
        raise RuntimeError('SynthMorph training needs a CUDA GPU; generating images on the '
                           'CPU is far too slow.')
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)

    # Ampere and newer: TF32 matmuls/convs are ~2x faster and accurate enough here
    major, _ = torch.cuda.get_device_capability(device)
    if major >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    print(f'training on {torch.cuda.get_device_name(device)} (sm_{major}x)')
    return device


def seed_everything(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_model(args):
    model = vxm.networks.VxmDense(
        inshape=args.inshape,
        nb_unet_features=[args.enc, args.dec],
        int_steps=args.int_steps,
        int_downsize=2,
        src_feats=1,
        trg_feats=1,
    )
    return model


def dice_loss(warped_onehot, fixed_onehot):
    dims = list(range(2, warped_onehot.ndim))
    top = 2 * (warped_onehot * fixed_onehot).sum(dim=dims)
    bottom = (warped_onehot + fixed_onehot).sum(dim=dims).clamp_min(1e-5)
    return 1 - (top / bottom)[:, 1:].mean()


def main():
    args = parse_args()
    os.makedirs(args.model_dir, exist_ok=True)
    with open(os.path.join(args.model_dir, 'config.json'), 'w') as f:
        json.dump(vars(args), f, indent=2)

    device = setup_device(args)
    seed_everything(args.seed)

    generator = synth.synth_pair_generator(args.inshape, batch_size=args.batch_size,
                                           num_labels=args.num_labels, device=device)

    model = build_model(args).to(device)
    warp_labels = vxm.layers.SpatialTransformer(args.inshape, mode='bilinear').to(device)
    grad_loss = vxm.losses.Grad('l2', loss_mult=2).loss

    # fused AdamW kernels only exist for CUDA tensors
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=torch.cuda.is_available())
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_step = 0
    if args.resume:
        state = torch.load(args.resume, map_location=f'cuda:{args.gpu}')
        model.load_state_dict(state['model'])
        optimizer.load_state_dict(state['optimizer'])
        scaler.load_state_dict(state['scaler'])
        start_step = state['step']
        print(f'resumed from {args.resume} at step {start_step}')

    train_model = torch.compile(model, mode='max-autotune') if args.compile else model
    model.train()

    t0 = time.time()
    running = []
    for step in range(start_step, args.steps):
        moving, fixed, lab_m, lab_f = next(generator)
        moving_oh = synth.one_hot(lab_m, args.num_labels)
        fixed_oh = synth.one_hot(lab_f, args.num_labels)

        with torch.cuda.amp.autocast(enabled=args.amp):
            _, flow = train_model(moving, fixed, registration=True)

        # the warp of the one-hot maps and the losses run in float32
        flow = flow.float()
        warped_oh = warp_labels(moving_oh, flow)
        loss_sim = dice_loss(warped_oh, fixed_oh)
        loss_reg = grad_loss(None, flow)
        loss = loss_sim + args.reg_weight * loss_reg

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        running.append([loss.item(), loss_sim.item(), loss_reg.item()])

        if (step + 1) % 100 == 0:
            mean = np.mean(running, axis=0)
            mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
            rate = 100 / (time.time() - t0)
            print(f'step {step + 1:7d}  loss {mean[0]:.4f}  dice {mean[1]:.4f}  '
                  f'reg {mean[2]:.4f}  {rate:.2f} it/s  peak mem {mem:.1f} GiB', flush=True)
            running = []
            t0 = time.time()

        if (step + 1) % args.save_every == 0 or step + 1 == args.steps:
            ckpt = {
                'model': model.state_dict(),
                'optimizer': optimizer.state_dict(),
                'scaler': scaler.state_dict(),
                'step': step + 1,
                'config': vars(args),
            }
            path = os.path.join(args.model_dir, f'{step + 1:07d}.pt')
            torch.save(ckpt, path)
            torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
