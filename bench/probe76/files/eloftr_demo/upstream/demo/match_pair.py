"""Match a single image pair with EfficientLoFTR and save a visualisation.

    python demo/match_pair.py assets/phototourism_sample_images/london_bridge_19481797_2295892421.jpg \
        assets/phototourism_sample_images/london_bridge_49190386_5209386933.jpg \
        --ckpt weights/eloftr_outdoor.ckpt --precision mp --bench 50
"""
import argparse
import os
import time
from copy import deepcopy

import cv2
import matplotlib.cm as cm
import numpy as np
import torch

from src.loftr import LoFTR, full_default_cfg, opt_default_cfg, reparameter
from src.utils.plotting import make_matching_figure


def parse_args():
    parser = argparse.ArgumentParser(description='EfficientLoFTR pair demo')
    parser.add_argument('img0', type=str)
    parser.add_argument('img1', type=str)
    parser.add_argument('--ckpt', type=str, default='weights/eloftr_outdoor.ckpt')
    parser.add_argument('--model_type', choices=['full', 'opt'], default='full',
                        help="'full' for best quality, 'opt' for best efficiency")
    parser.add_argument('--precision', choices=['fp32', 'mp', 'fp16'], default='fp32',
                        help="'mp' = autocast mixed precision, 'fp16' = pure half weights and inputs")
    parser.add_argument('--resize', type=int, nargs=2, default=[640, 480])
    parser.add_argument('--thr', type=float, default=0.2, help='coarse matching threshold')
    parser.add_argument('--bench', type=int, default=0, help='repeat the forward N times and report the latency')
    parser.add_argument('--out', type=str, default='match_pair.jpg')
    return parser.parse_args()


def load_gray(path, size):
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise FileNotFoundError(path)
    w, h = size
    # the coarse level works at 1/8 and the backbone down-samples by 32: keep sizes divisible by 32
    img = cv2.resize(img, (w // 32 * 32, h // 32 * 32))
    return img


def build_matcher(args):
    if args.model_type == 'full':
        _default_cfg = deepcopy(full_default_cfg)
    else:
        _default_cfg = deepcopy(opt_default_cfg)

    if args.precision == 'mp':
        _default_cfg['mp'] = True
    elif args.precision == 'fp16':
        _default_cfg['half'] = True
    _default_cfg['match_coarse']['thr'] = args.thr

    matcher = LoFTR(config=_default_cfg)
    ckpt = torch.load(args.ckpt)
    matcher.load_state_dict(ckpt['state_dict'])
    matcher = reparameter(matcher)  # no reparameterization will lead to low performance

    if args.precision == 'fp16':
        matcher = matcher.half()
    matcher = matcher.eval().cuda()
    return matcher


def to_batch(img0_raw, img1_raw, precision):
    if precision == 'fp16':
        img0 = torch.from_numpy(img0_raw)[None][None].half().cuda() / 255.
        img1 = torch.from_numpy(img1_raw)[None][None].half().cuda() / 255.
    else:
        img0 = torch.from_numpy(img0_raw)[None][None].cuda() / 255.
        img1 = torch.from_numpy(img1_raw)[None][None].cuda() / 255.
    return {'image0': img0, 'image1': img1}


def run(matcher, batch, precision):
    with torch.no_grad():
        if precision == 'mp':
            with torch.autocast(enabled=True, device_type='cuda'):
                matcher(batch)
        else:
            matcher(batch)


def main():
    args = parse_args()
    matcher = build_matcher(args)

    img0_raw = load_gray(args.img0, args.resize)
    img1_raw = load_gray(args.img1, args.resize)
    batch = to_batch(img0_raw, img1_raw, args.precision)

    run(matcher, batch, args.precision)
    mkpts0 = batch['mkpts0_f'].cpu().numpy()
    mkpts1 = batch['mkpts1_f'].cpu().numpy()
    mconf = batch['mconf'].float().cpu().numpy()
    print(f'{len(mkpts0)} matches')

    if args.bench > 0:
        for _ in range(5):  # warm-up
            run(matcher, batch, args.precision)
        torch.cuda.synchronize()  # make sure warm-up kernels are done
        t0 = time.time()
        for _ in range(args.bench):
            run(matcher, batch, args.precision)
        torch.cuda.synchronize()
        dt = (time.time() - t0) / args.bench
        print(f'average forward: {dt * 1000:.1f} ms  '
              f'(peak mem {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB)')

    # Draw
    if args.model_type == 'opt':
        mconf = (mconf - min(20.0, mconf.min())) / (max(30.0, mconf.max()) - min(20.0, mconf.min()))
    color = cm.jet(mconf)
    text = [
        'LoFTR',
        'Matches: {}'.format(len(mkpts0)),
    ]
    fig = make_matching_figure(img0_raw, img1_raw, mkpts0, mkpts1, color, text=text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, bbox_inches='tight', dpi=150)
    print(f'saved {args.out}')


if __name__ == '__main__':
    main()
