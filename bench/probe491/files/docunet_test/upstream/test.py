# -*- coding: utf-8 -*-
"""
Unwarp real photographs with a trained DocUNet.

    python test.py --ckpt checkpoints/best.pth --input benchmark/crop --output results/
"""
import os
import argparse
import time

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from models.docunet import DocUNet, unwarp
from data.doc_dataset import RealDocDataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--ckpt', required=True)
    p.add_argument('--input', default='benchmark/crop')
    p.add_argument('--output', default='results')
    p.add_argument('--img_size', type=int, default=256)
    p.add_argument('--base_channels', type=int, default=64)
    p.add_argument('--depth', type=int, default=4)
    p.add_argument('--save_flow', action='store_true')
    return p.parse_args()


def load_model(args):
    model = DocUNet(3, 2, base_channels=args.base_channels, depth=args.depth)
    ckpt = torch.load(args.ckpt)
    state = {k.replace('module.', ''): v for k, v in ckpt['model'].items()}
    model.load_state_dict(state)
    model.eval()
    return model.cuda()


def smooth_flow(flow, ksize=5):
    """Light box filter on the predicted map; removes the checkerboard from the deconvs."""
    weight = torch.ones(2, 1, ksize, ksize, device=flow.device) / float(ksize * ksize)
    return F.conv2d(F.pad(flow, [ksize // 2] * 4, mode='replicate'), weight, groups=2)


def main():
    args = get_args()
    os.makedirs(args.output, exist_ok=True)
    model = load_model(args)
    dataset = RealDocDataset(args.input, img_size=args.img_size)
    loader = DataLoader(dataset, batch_size=1, shuffle=False, num_workers=2)

    total = 0.0
    with torch.no_grad():
        for img, full, name in loader:
            t = time.time()
            img = img.cuda()
            full = full.cuda()
            _, flow = model(img)
            flow = smooth_flow(flow)
            out = unwarp(full, flow)
            torch.cuda.synchronize()
            total += time.time() - t

            out = (out[0].permute(1, 2, 0).cpu().numpy() * 255.0).clip(0, 255).astype(np.uint8)
            cv2.imwrite(os.path.join(args.output, name[0]), cv2.cvtColor(out, cv2.COLOR_RGB2BGR))
            if args.save_flow:
                np.save(os.path.join(args.output, os.path.splitext(name[0])[0] + '_bm.npy'),
                        flow[0].cpu().numpy())
            print('{:<30s} done'.format(name[0]))
    print('average time per image: {:.3f}s on {}'.format(total / max(len(dataset), 1),
                                                         torch.cuda.get_device_name(0)))


if __name__ == '__main__':
    main()
