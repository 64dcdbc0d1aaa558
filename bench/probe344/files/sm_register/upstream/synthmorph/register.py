#!/usr/bin/env python
"""
Register a moving to a fixed brain image with a pretrained SynthMorph model.

    python -m synthmorph.register -m moving.nii.gz -f fixed.nii.gz -o moved.nii.gz -t trans.nii.gz -g

Both images are conformed to 1-mm isotropic 256^3 space, min-max normalized and cropped to the
model shape before prediction. By default the model runs on the CPU with all available threads;
pass -g/--gpu to use the GPU (set CUDA_VISIBLE_DEVICES to pick one).
"""

import argparse
import os
import sys
import time

import numpy as np
import nibabel as nib
import torch
import torch.nn.functional as F

from .networks import VxmDense
from .layers import SpatialTransformer

DEFAULT_WEIGHTS = {
    'deform': 'synthmorph.deform.3.pt',
    'affine': 'synthmorph.affine.2.pt',
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('-m', '--moving', required=True, help='moving input image')
    p.add_argument('-f', '--fixed', required=True, help='fixed input image')
    p.add_argument('-o', '--out-moving', help='output moved image')
    p.add_argument('-t', '--trans', help='output displacement field')
    p.add_argument('-w', '--weights', help='model weights (default: bundled deform model)')
    p.add_argument('-j', '--threads', type=int, help='number of CPU threads')
    p.add_argument('-g', '--gpu', action='store_true', help='use the GPU')
    p.add_argument('-r', '--regularization', type=float, default=0.5, help='hyper-parameter lambda in [0, 1]')
    p.add_argument('-s', '--steps', type=int, default=5, help='integration steps')
    p.add_argument('-v', '--verbose', action='store_true')
    return p.parse_args(argv)


def conform(path, shape=(256, 256, 256)):
    """Load, reorient to RAS, pad/crop to `shape` and min-max normalize."""
    img = nib.as_closest_canonical(nib.load(path))
    data = np.asarray(img.dataobj, dtype=np.float32)
    out = np.zeros(shape, dtype=np.float32)
    sl_in, sl_out = [], []
    for n, s in zip(data.shape, shape):
        lo = max((n - s) // 2, 0)
        lo_out = max((s - n) // 2, 0)
        size = min(n, s)
        sl_in.append(slice(lo, lo + size))
        sl_out.append(slice(lo_out, lo_out + size))
    out[tuple(sl_out)] = data[tuple(sl_in)]
    out -= out.min()
    out /= max(out.max(), 1e-6)
    return out, img.affine


def pick_device(use_gpu, threads=None):
    """Return the torch device to run on. Threads only matter on the CPU."""
    if use_gpu:
        if not torch.cuda.is_available():
            print('warning: --gpu given but no CUDA device found, falling back to CPU', file=sys.stderr)
            return torch.device('cpu')
        # honour CUDA_VISIBLE_DEVICES; the first visible GPU is always index 0
        return torch.device('cuda:0')
    if threads:
        torch.set_num_threads(threads)
    return torch.device('cpu')


def load_model(weights, device, inshape, int_steps):
    model = VxmDense(inshape, nb_unet_features=[[256] * 4, [256] * 4], int_steps=int_steps,
                     int_downsize=2, bidir=True, hyper=True)
    ckpt = torch.load(weights, map_location=device)
    state = ckpt['model'] if 'model' in ckpt else ckpt
    model.load_state_dict(state)
    model.to(device)
    model.eval()
    return model


def main(argv=None):
    arg = parse_args(argv)

    if arg.gpu:
        os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')
    device = pick_device(arg.gpu, arg.threads)

    weights = arg.weights
    if weights is None:
        fs = os.environ.get('FREESURFER_HOME', '')
        weights = os.path.join(fs, 'models', DEFAULT_WEIGHTS['deform'])
    if not os.path.isfile(weights):
        sys.exit(f'error: cannot find model weights {weights}')

    mov, mov_affine = conform(arg.moving)
    fix, fix_affine = conform(arg.fixed)
    inshape = mov.shape

    model = load_model(weights, device, inshape, arg.steps)

    mov_t = torch.from_numpy(mov)[None, None].to(device)
    fix_t = torch.from_numpy(fix)[None, None].to(device)
    hyp = torch.tensor([[arg.regularization]], dtype=torch.float32, device=device)

    t0 = time.time()
    with torch.inference_mode():
        moved, disp = model(mov_t, fix_t, hyp, registration=True)
    if device.type == 'cuda':
        torch.cuda.synchronize()
    if arg.verbose:
        print(f'prediction took {time.time() - t0:.2f} s on {device}')

    if arg.out_moving:
        out = moved[0, 0].float().cpu().numpy()
        nib.save(nib.Nifti1Image(out, fix_affine), arg.out_moving)

    if arg.trans:
        # store as [x, y, z, 3] in voxel units
        out = disp[0].permute(1, 2, 3, 0).float().cpu().numpy()
        nib.save(nib.Nifti1Image(out, fix_affine), arg.trans)

    if arg.verbose and device.type == 'cuda':
        peak = torch.cuda.max_memory_allocated() / 2 ** 30
        print(f'peak GPU memory: {peak:.2f} GiB')


if __name__ == '__main__':
    main()
