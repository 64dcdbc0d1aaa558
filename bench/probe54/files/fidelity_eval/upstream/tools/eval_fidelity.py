#!/usr/bin/env python3
"""Evaluate a trained generator with torch-fidelity (IS / FID / KID / PRC).

Wraps the generator in torch_fidelity.GenerativeModelBase so that samples are
produced on the fly instead of being written to disk, and optionally runs the
sampling under fp16 autocast. Results are appended to a JSONL file next to
the checkpoint.

    python tools/eval_fidelity.py --ckpt runs/biggan128/G_ema.pth \
        --input2 cifar10-train --num-samples 50000 --batch-size 250
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn

import torch_fidelity
from torch_fidelity import GenerativeModelBase

from models import build_generator


class GeneratorWrapper(GenerativeModelBase):
    """Exposes a conditional or unconditional generator to torch-fidelity."""

    def __init__(self, G, z_dim, num_classes=0, truncation=1.0, use_amp=False):
        super().__init__()
        self.G = G
        self._z_dim = z_dim
        self._num_classes = num_classes
        self.truncation = truncation
        self.use_amp = use_amp

    @property
    def z_size(self):
        return self._z_dim

    @property
    def z_type(self):
        return 'normal'

    @property
    def num_classes(self):
        return self._num_classes

    def forward(self, z, *args):
        if self.truncation < 1.0:
            z = torch.clamp(z, -2.0 * self.truncation, 2.0 * self.truncation)
        with torch.cuda.amp.autocast(enabled=self.use_amp):
            if self._num_classes > 0:
                y = args[0] if args else torch.randint(0, self._num_classes, (z.shape[0],), device=z.device)
                img = self.G(z, y)
            else:
                img = self.G(z)
        # torch-fidelity expects uint8 images in [0, 255]
        img = (img.float().clamp(-1, 1) + 1) * 127.5
        return img.to(torch.uint8)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--ckpt', required=True, help='generator checkpoint (.pth)')
    p.add_argument('--arch', default='biggan', help='generator architecture name')
    p.add_argument('--input2', default='cifar10-train', help='registered torch-fidelity input or a folder of reference images')
    p.add_argument('--num-samples', type=int, default=50000)
    p.add_argument('--batch-size', type=int, default=250)
    p.add_argument('--truncation', type=float, default=1.0)
    p.add_argument('--amp', action='store_true', help='sample under fp16 autocast')
    p.add_argument('--kid-subset-size', type=int, default=1000)
    p.add_argument('--no-isc', action='store_true')
    p.add_argument('--prc', action='store_true', help='also compute precision / recall')
    p.add_argument('--cache-root', default=os.path.expanduser('~/.cache/torch-fidelity'))
    p.add_argument('--seed', type=int, default=2023)
    p.add_argument('--out', default=None, help='jsonl file for the results (default: next to --ckpt)')
    return p.parse_args()


def load_generator(args, device):
    ckpt = torch.load(args.ckpt, map_location='cpu')
    cfg = ckpt.get('config', {})
    G = build_generator(args.arch, **cfg)
    G.load_state_dict(ckpt['G_ema'] if 'G_ema' in ckpt else ckpt['G'])
    G = G.to(device).eval().requires_grad_(False)
    if torch.cuda.device_count() > 1:
        G = nn.DataParallel(G)
    return G, cfg


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
    if args.amp and not use_bf16:
        print('note: this GPU has no bf16 tensor cores, autocast will use fp16')

    G, cfg = load_generator(args, device)
    z_dim = cfg.get('dim_z', 128)
    num_classes = cfg.get('n_classes', 0)
    wrapped = GeneratorWrapper(G, z_dim, num_classes=num_classes,
                               truncation=args.truncation, use_amp=args.amp)

    t0 = time.time()
    metrics = torch_fidelity.calculate_metrics(
        input1=torch_fidelity.GenerativeModelModuleWrapper(wrapped, z_dim, 'normal', num_classes),
        input1_model_num_samples=args.num_samples,
        input2=args.input2,
        cuda=True,
        batch_size=args.batch_size,
        isc=not args.no_isc,
        fid=True,
        kid=True,
        prc=args.prc,
        kid_subset_size=args.kid_subset_size,
        cache_root=args.cache_root,
        save_cpu_ram=True,
        verbose=True,
    )
    elapsed = time.time() - t0

    peak_mem_gb = torch.cuda.max_memory_allocated() / 2 ** 30
    print(f'elapsed {elapsed:.1f}s, peak device memory {peak_mem_gb:.2f} GB')
    for k, v in sorted(metrics.items()):
        print(f'{k:>40s}: {v:.5f}')

    out = args.out or os.path.join(os.path.dirname(args.ckpt), 'fidelity.jsonl')
    with open(out, 'a') as f:
        f.write(json.dumps(dict(ckpt=args.ckpt, input2=args.input2, num_samples=args.num_samples,
                                truncation=args.truncation, amp=args.amp, elapsed=elapsed,
                                **{k: float(v) for k, v in metrics.items()})) + '\n')


if __name__ == '__main__':
    main()
