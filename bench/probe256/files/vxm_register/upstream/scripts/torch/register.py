#!/usr/bin/env python

"""
Register a moving volume to a fixed volume with a trained VoxelMorph model.

    python scripts/torch/register.py --moving moving.nii.gz --fixed atlas.nii.gz \
        --model model.pt --moved moved.nii.gz --warp warp.nii.gz

The moving and fixed volumes must be preprocessed the same way as the training data
(affine alignment, cropping, [0, 1] intensities). Use --gpu to pick a GPU; leave it out
(or pass -1) to run on the CPU, which is slow but works for a handful of subjects.
"""

import os
import argparse

# third party
import numpy as np
import nibabel as nib
import torch

# import voxelmorph with pytorch backend
os.environ['NEURITE_BACKEND'] = 'pytorch'
os.environ['VXM_BACKEND'] = 'pytorch'
import voxelmorph as vxm   # nopep8

# parse commandline args
parser = argparse.ArgumentParser()
parser.add_argument('--moving', required=True, help='moving image (source) filename')
parser.add_argument('--fixed', required=True, help='fixed image (target) filename')
parser.add_argument('--moved', required=True, help='warped image output filename')
parser.add_argument('--model', required=True, help='pytorch model for nonlinear registration')
parser.add_argument('--warp', help='output warp deformation filename')
parser.add_argument('--moving-seg', help='optional segmentation to warp with nearest neighbour')
parser.add_argument('--moved-seg', help='output filename for the warped segmentation')
parser.add_argument('-g', '--gpu', help='GPU number(s) - if not supplied, CPU is used')
parser.add_argument('--multichannel', action='store_true',
                    help='specify that data has multiple channels')
args = parser.parse_args()

# device handling
if args.gpu and (args.gpu != '-1'):
    device = 'cuda'
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
    torch.backends.cudnn.deterministic = True
else:
    device = 'cpu'
    os.environ['CUDA_VISIBLE_DEVICES'] = '-1'

# load moving and fixed images
add_feat_axis = not args.multichannel
moving = vxm.py.utils.load_volfile(args.moving, add_batch_axis=True, add_feat_axis=add_feat_axis)
fixed, fixed_affine = vxm.py.utils.load_volfile(
    args.fixed, add_batch_axis=True, add_feat_axis=add_feat_axis, ret_affine=True)

# load and set up model
model = vxm.networks.VxmDense.load(args.model, device)
model.to(device)
model.eval()

# set up tensors and permute
input_moving = torch.from_numpy(moving).to(device).float().permute(0, 4, 1, 2, 3)
input_fixed = torch.from_numpy(fixed).to(device).float().permute(0, 4, 1, 2, 3)

# predict
with torch.no_grad():
    moved, warp = model(input_moving, input_fixed, registration=True)

# save moved image
if args.moved:
    moved = moved.detach().cpu().numpy().squeeze()
    vxm.py.utils.save_volfile(moved, args.moved, fixed_affine)

# save warp
if args.warp:
    warp = warp.detach().cpu().numpy().squeeze()
    vxm.py.utils.save_volfile(warp, args.warp, fixed_affine)

# optionally warp a label map with the same deformation
if args.moving_seg:
    seg = vxm.py.utils.load_volfile(args.moving_seg, add_batch_axis=True, add_feat_axis=True)
    transformer = vxm.layers.SpatialTransformer(seg.shape[1:-1], mode='nearest').to(device)
    seg_t = torch.from_numpy(seg).to(device).float().permute(0, 4, 1, 2, 3)
    flow_t = torch.from_numpy(warp[np.newaxis]).to(device).float() \
        if isinstance(warp, np.ndarray) else warp
    with torch.no_grad():
        moved_seg = transformer(seg_t, flow_t)
    moved_seg = moved_seg.cpu().numpy().squeeze().astype(np.int16)
    out = args.moved_seg or args.moving_seg.replace('.nii', '_moved.nii')
    nib.save(nib.Nifti1Image(moved_seg, fixed_affine), out)
