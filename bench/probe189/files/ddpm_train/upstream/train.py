"""
Train an unconditional DDPM on a folder of images.

    python train.py --data ./data/flowers-102 --image-size 128 --amp --gpus 0,1

multi-gpu is handled by accelerate:

    accelerate launch train.py --data ./data/flowers-102 --image-size 128 --amp
"""

import os
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--data', type = str, required = True)
parser.add_argument('--image-size', type = int, default = 128)
parser.add_argument('--dim', type = int, default = 64)
parser.add_argument('--batch-size', type = int, default = 32)
parser.add_argument('--grad-accum', type = int, default = 2)
parser.add_argument('--lr', type = float, default = 8e-5)
parser.add_argument('--steps', type = int, default = 700000)
parser.add_argument('--sampling-timesteps', type = int, default = 250)
parser.add_argument('--amp', action = 'store_true')
parser.add_argument('--bf16', action = 'store_true', help = 'use bf16 instead of fp16 for mixed precision (ampere+)')
parser.add_argument('--flash-attn', action = 'store_true')
parser.add_argument('--no-fid', action = 'store_true')
parser.add_argument('--gpus', type = str, default = None, help = 'comma separated list of gpu ids to make visible, eg 0,1')
parser.add_argument('--results', type = str, default = './results')
parser.add_argument('--seed', type = int, default = 42)
parser.add_argument('--resume', type = int, default = None, help = 'milestone to resume from')
args = parser.parse_args()

# must be set before torch initializes cuda

if args.gpus is not None:
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus

import torch
from denoising_diffusion_pytorch import Unet, GaussianDiffusion, Trainer

torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)

# speed things up on ampere

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

if torch.cuda.is_available():
    print(f'found {torch.cuda.device_count()} gpu(s), first one is {torch.cuda.get_device_name(0)}')

model = Unet(
    dim = args.dim,
    dim_mults = (1, 2, 4, 8),
    flash_attn = args.flash_attn
)

diffusion = GaussianDiffusion(
    model,
    image_size = args.image_size,
    timesteps = 1000,                               # number of steps
    sampling_timesteps = args.sampling_timesteps    # number of sampling timesteps (using ddim for faster inference [see citation for ddim paper])
)

trainer = Trainer(
    diffusion,
    args.data,
    train_batch_size = args.batch_size,
    train_lr = args.lr,
    train_num_steps = args.steps,                   # total training steps
    gradient_accumulate_every = args.grad_accum,    # gradient accumulation steps
    ema_decay = 0.995,                              # exponential moving average decay
    amp = args.amp,                                 # turn on mixed precision
    mixed_precision_type = 'bf16' if args.bf16 else 'fp16',
    calculate_fid = not args.no_fid,                # whether to calculate fid during training
    results_folder = args.results
)

if args.resume is not None:
    trainer.load(args.resume)

trainer.train()
