"""Registration driver: load images, conform them to the network space, predict,
and write transforms and moved images back in the original geometry."""

import os
import time

import numpy as np
import nibabel as nib
import torch
import torch.nn.functional as F

from synthmorph import networks, utility


def conform(img, extent, device):
    """Resample a nibabel image to an isotropic 1-mm grid of `extent`^3 voxels,
    centred on the image, and min-max normalise intensities to [0, 1]."""
    data = np.asanyarray(img.dataobj, dtype=np.float32)
    if data.ndim == 4:
        data = data[..., 0]
    data = np.clip(data, 0, np.percentile(data, 99.5))
    data -= data.min()
    data /= max(data.max(), 1e-6)

    vox2ras = img.affine
    net2ras = utility.centered_affine(vox2ras, data.shape, extent)
    # net voxel -> image voxel
    net2vox = np.linalg.inv(vox2ras) @ net2ras

    x = torch.as_tensor(data, device=device)[None, None]
    grid = utility.affine_to_grid(net2vox, data.shape, (extent,) * 3, device=device)
    out = F.grid_sample(x, grid, mode='bilinear', padding_mode='zeros', align_corners=True)
    return out, net2ras


def load_model(method, weights, device, extent):
    if method in ('affine', 'rigid'):
        model = networks.AffineModel(in_shape=(extent,) * 3, rigid=method == 'rigid')
        model.load_state_dict(torch.load(weights[0], map_location='cpu'))
    elif method == 'deform':
        model = networks.HyperVxmDense(in_shape=(extent,) * 3)
        model.load_state_dict(torch.load(weights[0], map_location='cpu'))
    else:
        affine = networks.AffineModel(in_shape=(extent,) * 3)
        affine.load_state_dict(torch.load(weights[0], map_location='cpu'))
        deform = networks.HyperVxmDense(in_shape=(extent,) * 3)
        deform.load_state_dict(torch.load(weights[1], map_location='cpu'))
        model = networks.JointModel(affine, deform)
    return model.to(device).eval()


def register(arg, weights, device):
    mov_img = nib.load(arg.moving)
    fix_img = nib.load(arg.fixed)

    extent = arg.extent
    mov, mov2ras = conform(mov_img, extent, device)
    fix, fix2ras = conform(fix_img, extent, device)

    model = load_model(arg.model, weights, device, extent)

    if arg.verbose:
        print(f'Moving  {arg.moving}: shape {mov_img.shape}')
        print(f'Fixed   {arg.fixed}: shape {fix_img.shape}')
        if device.type == 'cuda':
            props = torch.cuda.get_device_properties(device)
            print(f'Using GPU {props.name} with {props.total_memory / 2 ** 30:.1f} GiB')

    lam = torch.tensor([[arg.smooth]], device=device)

    t0 = time.time()
    with torch.no_grad(), torch.autocast('cuda', dtype=torch.float16, enabled=arg.half):
        if arg.model in ('affine', 'rigid'):
            aff = model(mov, fix)
            field = None
        elif arg.model == 'deform':
            field = model(mov, fix, lam)
            aff = None
        else:
            aff, field = model(mov, fix, lam)
    if arg.gpu:
        torch.cuda.synchronize()
    if arg.verbose:
        print(f'Network inference: {time.time() - t0:.2f} s')
        if arg.gpu:
            peak = torch.cuda.max_memory_allocated() / 2 ** 30
            print(f'Peak GPU memory: {peak:.2f} GiB')

    # everything below runs on the host in float64 for exact header arithmetic
    if aff is not None:
        aff = aff.float().cpu().numpy()[0].astype(np.float64)
        # network works on centred voxel grids -> convert to world (RAS) matrix
        ras = fix2ras @ aff @ np.linalg.inv(mov2ras)
    else:
        ras = np.eye(4)

    if arg.trans:
        if field is None:
            utility.save_lta(arg.trans, ras, mov_img, fix_img)
        else:
            utility.save_warp(arg.trans, field.float().cpu().numpy()[0], fix2ras, ras)

    if arg.inverse:
        if field is None:
            utility.save_lta(arg.inverse, np.linalg.inv(ras), fix_img, mov_img)
        else:
            inv = utility.invert_warp(field.float(), steps=7)
            utility.save_warp(arg.inverse, inv.cpu().numpy()[0], mov2ras, np.linalg.inv(ras))

    if arg.out_moving:
        if arg.header_only:
            out = nib.Nifti1Image(np.asanyarray(mov_img.dataobj), ras @ mov_img.affine, mov_img.header)
        else:
            moved = utility.transform_image(mov_img, fix_img, ras, field, device=device)
            out = nib.Nifti1Image(moved, fix_img.affine, fix_img.header)
        nib.save(out, arg.out_moving)

    if arg.out_fixed:
        moved = utility.transform_image(fix_img, mov_img, np.linalg.inv(ras), None, device=device)
        nib.save(nib.Nifti1Image(moved, mov_img.affine, mov_img.header), arg.out_fixed)


def apply(arg):
    """Apply a saved transform on the CPU; no network needed."""
    img = nib.load(arg.image)
    if arg.trans.endswith('.lta'):
        ras, ref = utility.load_lta(arg.trans)
        field = None
    else:
        field, ras, ref = utility.load_warp(arg.trans)
    out = utility.transform_image(img, ref, ras, field, device=torch.device('cpu'),
                                  method=arg.method)
    nib.save(nib.Nifti1Image(out.astype(arg.type), ref.affine, ref.header), arg.output)
