# Growing Neural Cellular Automata -- PyTorch training script
# Port of the Distill notebook (https://distill.pub/2020/growing-ca/).
# Tested on a single RTX 2080Ti, ~25 minutes for 8000 steps.

import os
import time
import argparse

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from lib.CAModel import CAModel, PerceptionCA
from lib.utils_vis import (
    SamplePool,
    to_rgb,
    make_seed,
    make_circle_masks,
    load_emoji,
    load_local_image,
    visualize_batch,
    plot_loss,
)

parser = argparse.ArgumentParser(description="Train a growing NCA on a single emoji")
parser.add_argument("--target-emoji", type=str, default="🦎")
parser.add_argument("--target-image", type=str, default=None, help="local RGBA png instead of an emoji")
parser.add_argument("--experiment", type=str, default="Regenerating", choices=["Growing", "Persistent", "Regenerating"])
parser.add_argument("--channels", type=int, default=16)
parser.add_argument("--fire-rate", type=float, default=0.5)
parser.add_argument("--target-size", type=int, default=40)
parser.add_argument("--padding", type=int, default=16)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--pool-size", type=int, default=1024)
parser.add_argument("--lr", type=float, default=2e-3)
parser.add_argument("--n-epoch", type=int, default=8000)
parser.add_argument("--isotropic", action="store_true")
parser.add_argument("--model-path", type=str, default="models/remaster_1.pth")
parser.add_argument("--resume", action="store_true")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--gpus", type=str, default="0", help="comma separated GPU ids; more than one enables DataParallel")
args = parser.parse_args()

gpu_ids = [int(g) for g in args.gpus.split(",") if g.strip() != ""]
device = torch.device("cuda:%d" % gpu_ids[0])

CHANNEL_N = args.channels  # Number of CA state channels
TARGET_PADDING = args.padding  # Number of pixels used to pad the target image border
TARGET_SIZE = args.target_size

lr = args.lr
lr_gamma = 0.9999
betas = (0.5, 0.5)
n_epoch = args.n_epoch

BATCH_SIZE = args.batch_size
POOL_SIZE = args.pool_size
CELL_FIRE_RATE = args.fire_rate

EXPERIMENT_TYPE = args.experiment
EXPERIMENT_MAP = {"Growing": 0, "Persistent": 1, "Regenerating": 2}
EXPERIMENT_N = EXPERIMENT_MAP[EXPERIMENT_TYPE]

USE_PATTERN_POOL = [0, 1, 1][EXPERIMENT_N]
DAMAGE_N = [0, 0, 3][EXPERIMENT_N]  # Number of patterns to damage in a batch

np.random.seed(args.seed)
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)

os.makedirs(os.path.dirname(args.model_path) or ".", exist_ok=True)
os.makedirs("train_log", exist_ok=True)


def load_target():
    if args.target_image is not None:
        img = load_local_image(args.target_image, TARGET_SIZE)
    else:
        img = load_emoji(args.target_emoji, TARGET_SIZE)
    return img


target_img = load_target()
plt.figure(figsize=(4, 4))
plt.imshow(to_rgb(target_img))
plt.savefig("train_log/target.png")
plt.close()

p = TARGET_PADDING
pad_target = np.pad(target_img, [(p, p), (p, p), (0, 0)])
h, w = pad_target.shape[:2]
pad_target = np.expand_dims(pad_target, axis=0)
pad_target = torch.from_numpy(pad_target.astype(np.float32)).to(device)

seed = make_seed((h, w), CHANNEL_N)
pool = SamplePool(x=np.repeat(seed[None, ...], POOL_SIZE, 0))
batch = pool.sample(BATCH_SIZE).x

if args.isotropic:
    ca = PerceptionCA(CHANNEL_N, CELL_FIRE_RATE, device).to(device)
else:
    ca = CAModel(CHANNEL_N, CELL_FIRE_RATE, device).to(device)

if args.resume and os.path.exists(args.model_path):
    ca.load_state_dict(torch.load(args.model_path))
    print("resumed from", args.model_path)

if len(gpu_ids) > 1:
    print("Let's use", len(gpu_ids), "GPUs!")
    ca = nn.DataParallel(ca, device_ids=gpu_ids)

optimizer = torch.optim.Adam(ca.parameters(), lr=lr, betas=betas)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, lr_gamma)

loss_log = []


def unwrap(model):
    return model.module if isinstance(model, nn.DataParallel) else model


def train(x, target, steps, optimizer, scheduler):
    x = ca(x, steps=steps)
    loss = F.mse_loss(x[:, :, :, :4], target)
    optimizer.zero_grad()
    loss.backward()
    # per-parameter gradient normalisation from the original notebook
    for p_ in ca.parameters():
        if p_.grad is not None:
            p_.grad.data = p_.grad.data / (p_.grad.data.norm() + 1e-8)
    optimizer.step()
    scheduler.step()
    return x, loss


def loss_f(x, target):
    return torch.mean(torch.pow(x[..., :4] - target, 2), [-2, -3, -1])


t_start = time.time()
for i in range(n_epoch + 1):
    if USE_PATTERN_POOL:
        batch = pool.sample(BATCH_SIZE)
        x0 = torch.from_numpy(batch.x.astype(np.float32)).to(device)
        loss_rank = loss_f(x0, pad_target).detach().cpu().numpy().argsort()[::-1]
        x0 = batch.x[loss_rank]
        x0[:1] = seed
        if DAMAGE_N:
            damage = 1.0 - make_circle_masks(DAMAGE_N, h, w)[..., None]
            x0[-DAMAGE_N:] *= damage
    else:
        x0 = np.repeat(seed[None, ...], BATCH_SIZE, 0)
    x0 = torch.from_numpy(x0.astype(np.float32)).to(device)

    x, loss = train(x0, pad_target, np.random.randint(64, 96), optimizer, scheduler)

    if USE_PATTERN_POOL:
        batch.x[:] = x.detach().cpu().numpy()
        batch.commit()

    step_i = len(loss_log)
    loss_log.append(loss.item())

    if step_i % 100 == 0:
        elapsed = time.time() - t_start
        print(
            "step %d, loss = %.6f, lr = %.2e, %.1fs"
            % (step_i, np.log10(loss.item()), scheduler.get_last_lr()[0], elapsed)
        )
        visualize_batch(x0.detach().cpu().numpy(), x.detach().cpu().numpy(), step_i)
        plot_loss(loss_log, "train_log/loss.png")
        torch.save(unwrap(ca).state_dict(), args.model_path)

print("done in %.1f minutes" % ((time.time() - t_start) / 60.0))
