"""Damage / regeneration experiments with a trained growing NCA.

Loads a checkpoint written by training.py, grows the pattern from a single
seed, cuts holes into it and records how it heals. Writes an mp4 via imageio.

    python regenerate.py --model-path models/remaster_1.pth --steps 800
"""
import argparse
import os

import imageio
import numpy as np
import torch
import torch.nn.functional as F

from lib.CAModel import CAModel
from lib.utils_vis import make_seed, make_circle_masks, to_rgb, zoom, tile2d

parser = argparse.ArgumentParser()
parser.add_argument("--model-path", default="models/remaster_1.pth")
parser.add_argument("--channels", type=int, default=16)
parser.add_argument("--fire-rate", type=float, default=0.5)
parser.add_argument("--size", type=int, default=72)
parser.add_argument("--steps", type=int, default=800)
parser.add_argument("--damage-at", type=int, nargs="+", default=[200, 400, 600])
parser.add_argument("--n-patterns", type=int, default=4)
parser.add_argument("--out", default="videos/regeneration.mp4")
parser.add_argument("--rotate", type=float, default=0.0, help="rotate the perception filters (degrees)")
parser.add_argument("--gpu", type=str, default="0")
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
print("running on", torch.cuda.get_device_name(0) if use_cuda else "cpu")

ca = CAModel(args.channels, args.fire_rate, device)
state = torch.load(args.model_path, map_location=lambda storage, loc: storage.cuda() if use_cuda else storage)
if "state_dict" in state:
    state = state["state_dict"]
ca.load_state_dict(state)
ca.eval()


def grow(x, n_steps, angle=0.0):
    with torch.no_grad():
        for _ in range(n_steps):
            x = ca(x, steps=1, angle=angle)
    return x


def apply_damage(x, n):
    h, w = x.shape[1:3]
    mask = make_circle_masks(n, h, w)[..., None]
    mask = torch.from_numpy(1.0 - mask).float().to(device)
    return x * mask


def render(x):
    imgs = to_rgb(x.detach().cpu().numpy())
    imgs = np.clip(imgs, 0.0, 1.0)
    frame = tile2d(imgs, w=min(4, len(imgs)))
    return (zoom(frame, 4) * 255).astype(np.uint8)


def main():
    seed = make_seed((args.size, args.size), args.channels)
    x = np.repeat(seed[None, ...], args.n_patterns, 0)
    x = torch.from_numpy(x).to(device)

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    writer = imageio.get_writer(args.out, fps=30)
    for t in range(args.steps):
        if t in args.damage_at:
            x = apply_damage(x, args.n_patterns)
        x = grow(x, 1, angle=args.rotate)
        writer.append_data(render(x))
        if t % 100 == 0:
            alive = (x[..., 3] > 0.1).float().mean().item()
            print("step %4d  alive fraction %.3f" % (t, alive))
    writer.close()
    if use_cuda:
        print("peak memory: %.1f MB" % (torch.cuda.max_memory_allocated() / 2**20))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
