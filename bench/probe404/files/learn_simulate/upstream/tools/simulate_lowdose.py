"""Simulate low-dose fan-beam projections from full-dose reconstructions.

Forward projects every reference slice with CTLIB, then inserts Poisson + Gaussian
(electronic) noise in the transmission domain:

    I = Poisson(I0 * exp(-p)) + N(0, sigma_e^2),    p_ld = -log(max(I, eps) / I0)

The noise insertion runs on the GPU through CuPy because the full AAPM set has
several hundred thousand projections.
"""
import os
import glob
import argparse
import numpy as np
import scipy.io as sio
import cupy as cp
import torch

import ctlib


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--src', type=str, required=True, help='folder with full-dose .mat slices (key "label")')
    p.add_argument('--dst', type=str, required=True)
    p.add_argument('--I0', type=float, default=1e5, help='incident photons per detector bin')
    p.add_argument('--sigma_e', type=float, default=10.0, help='electronic noise std')
    p.add_argument('--views', type=int, default=1024)
    p.add_argument('--dets', type=int, default=736)
    p.add_argument('--gpu', type=int, default=0)
    p.add_argument('--seed', type=int, default=2018)
    p.add_argument('--sparse_views', type=int, default=0,
                   help='if > 0, also store a view-subsampled copy of the noisy projections')
    p.add_argument('--dose_levels', type=str, default='',
                   help='comma separated list of I0 values; overrides --I0 and writes one folder per level')
    return p.parse_args()


def make_options(args):
    return torch.Tensor([args.views, args.dets, 512, 512, 0.006641, 0.0072, 0,
                         2 * np.pi / args.views, 5.95, 4.906, 0, 0])


def add_noise(proj, I0, sigma_e, eps=1.0):
    proj = cp.asarray(proj)
    transmission = I0 * cp.exp(-proj)
    counts = cp.random.poisson(transmission).astype(cp.float32)
    counts = counts + cp.random.normal(0.0, sigma_e, counts.shape).astype(cp.float32)
    counts = cp.maximum(counts, eps)
    noisy = -cp.log(counts / I0)
    return cp.asnumpy(noisy)


def subsample_views(proj, n_full, n_sparse):
    step = n_full // n_sparse
    return np.ascontiguousarray(proj[::step][:n_sparse])


def main():
    args = get_args()
    if args.dose_levels:
        levels = [float(v) for v in args.dose_levels.split(',')]
        root = args.dst
        for I0 in levels:
            args.I0 = I0
            args.dst = os.path.join(root, 'I0_{:.0e}'.format(I0))
            run(args)
        return
    run(args)


def run(args):
    os.makedirs(args.dst, exist_ok=True)
    cp.cuda.Device(args.gpu).use()
    cp.random.seed(args.seed)
    device = torch.device('cuda', args.gpu)
    options = make_options(args).to(device)

    files = sorted(glob.glob(os.path.join(args.src, '*.mat')))
    print('{} slices, I0={:.0e}, sigma_e={}'.format(len(files), args.I0, args.sigma_e))
    for i, f in enumerate(files):
        label = sio.loadmat(f)['label'].astype(np.float32)
        img = torch.from_numpy(label)[None, None].to(device)
        with torch.no_grad():
            proj = ctlib.projection(img, options)
        proj = proj[0, 0].cpu().numpy()
        noisy = add_noise(proj, args.I0, args.sigma_e)
        record = {'proj': noisy.astype(np.float32), 'proj_full': proj, 'label': label}
        if args.sparse_views > 0:
            record['proj_sparse'] = subsample_views(noisy, args.views, args.sparse_views)
        sio.savemat(os.path.join(args.dst, os.path.basename(f)), record)
        if i % 100 == 0:
            print('[{}/{}] {}'.format(i, len(files), os.path.basename(f)))


if __name__ == '__main__':
    main()
