"""
Copyright © 2023 Howard Hughes Medical Institute, Authored by Carsen Stringer and Marius Pachitariu.
"""
import logging

import numpy as np
import fastremap
from scipy.ndimage import find_objects, maximum_filter1d
import torch
import torch.nn.functional as F

from . import utils

dynamics_logger = logging.getLogger(__name__)

# default device used when flows are computed "on the GPU"
if torch.cuda.is_available():
    torch_GPU = torch.device("cuda")
else:
    torch_GPU = torch.device("cpu")
torch_CPU = torch.device("cpu")


def _extend_centers_gpu(neighbors, meds, isneighbor, shape, n_iter=200,
                        device=torch.device("cuda")):
    """Runs diffusion on GPU to generate flows for training images or quality control.

    Args:
        neighbors (torch.Tensor): 9 x pixels in masks.
        meds (torch.Tensor): Mask centers.
        isneighbor (torch.Tensor): Valid neighbor boolean 9 x pixels.
        shape (tuple): Shape of the tensor.
        n_iter (int, optional): Number of iterations. Defaults to 200.
        device (torch.device, optional): Device to run the computation on.

    Returns:
        torch.Tensor: Generated flows.
    """
    if device is None:
        device = torch.device("cuda")

    T = torch.zeros(shape, dtype=torch.double, device=device)
    for i in range(n_iter):
        T[tuple(meds.T)] += 1
        Tneigh = T[tuple(neighbors)]
        Tneigh *= isneighbor
        T[tuple(neighbors[:, 0])] = Tneigh.mean(axis=0)
    del meds, isneighbor, Tneigh

    if T.ndim == 2:
        grads = T[neighbors[0, [2, 1, 4, 3]], neighbors[1, [2, 1, 4, 3]]]
        del neighbors
        dy = grads[0] - grads[1]
        dx = grads[2] - grads[3]
        del grads
        mu_torch = np.stack((dy.cpu().squeeze(0), dx.cpu().squeeze(0)), axis=-2)
    else:
        grads = T[tuple(neighbors[:, 1:])]
        del neighbors
        dz = grads[0] - grads[1]
        dy = grads[2] - grads[3]
        dx = grads[4] - grads[5]
        del grads
        mu_torch = np.stack(
            (dz.cpu().squeeze(0), dy.cpu().squeeze(0), dx.cpu().squeeze(0)), axis=-2)
    return mu_torch


def masks_to_flows_gpu(masks, device=None, niter=None):
    """Convert masks to flows using diffusion from center pixel.

    Center of masks where diffusion starts is defined by pixel closest to median within the mask.
    """
    if device is None:
        device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")

    Ly0, Lx0 = masks.shape
    Ly, Lx = Ly0 + 2, Lx0 + 2

    masks_padded = torch.from_numpy(masks.astype("int64")).to(device)
    masks_padded = F.pad(masks_padded, (1, 1, 1, 1))

    # get mask pixel neighbors
    y, x = torch.nonzero(masks_padded, as_tuple=True)
    neighborsY = torch.stack((y, y - 1, y + 1, y, y, y - 1, y - 1, y + 1, y + 1), dim=0)
    neighborsX = torch.stack((x, x, x, x - 1, x + 1, x - 1, x + 1, x - 1, x + 1), dim=0)
    neighbors = torch.stack((neighborsY, neighborsX), dim=0)
    neighbor_masks = masks_padded[neighbors[0], neighbors[1]]
    isneighbor = neighbor_masks == neighbor_masks[0]

    slices = find_objects(masks)
    centers = np.zeros((masks.max(), 2), "int")
    for i, si in enumerate(slices):
        if si is not None:
            sr, sc = si
            ly, lx = sr.stop - sr.start + 1, sc.stop - sc.start + 1
            yi, xi = np.nonzero(masks[sr, sc] == (i + 1))
            yi = yi.astype(np.int32) + 1
            xi = xi.astype(np.int32) + 1
            ymed = np.median(yi)
            xmed = np.median(xi)
            imin = np.argmin((xi - xmed)**2 + (yi - ymed)**2)
            xmed = xi[imin]
            ymed = yi[imin]
            centers[i, 0] = ymed + sr.start
            centers[i, 1] = xmed + sc.start

    slices = find_objects(masks)
    ext = np.array([[sr.stop - sr.start + 1, sc.stop - sc.start + 1] for sr, sc in slices])
    n_iter = 2 * (ext.sum(axis=1)).max() if niter is None else niter

    meds_p = torch.from_numpy(centers).to(device).long() + 1
    mu = _extend_centers_gpu(neighbors, meds_p, isneighbor, shape=(Ly, Lx),
                             n_iter=n_iter, device=device)
    mu = mu.astype("float64")
    mu /= (1e-60 + (mu**2).sum(axis=0)**0.5)

    mu0 = np.zeros((2, Ly0, Lx0))
    mu0[:, y.cpu().numpy() - 1, x.cpu().numpy() - 1] = mu
    return mu0


def steps_interp(dP, inds, niter, device=torch.device("cpu")):
    """Run dynamics of pixels to recover masks in 2D or 3D, with interpolation between pixel values.

    Euler integration of dynamics dP for niter steps.
    """
    shape = dP.shape[1:]
    ndim = len(shape)

    pt = torch.zeros((*[1] * ndim, len(inds[0]), ndim), dtype=torch.float32, device=device)
    im = torch.zeros((1, ndim, *shape), dtype=torch.float32, device=device)
    # Y and X dimensions, flipped X-1, Y-1
    for n in range(ndim):
        if ndim == 3:
            pt[0, 0, :, :, ndim - n - 1] = torch.from_numpy(inds[n]).to(device, torch.float32)
        else:
            pt[0, :, :, ndim - n - 1] = torch.from_numpy(inds[n]).to(device, torch.float32)
        im[0, ndim - n - 1] = torch.from_numpy(dP[n]).to(device, torch.float32)
    shape = np.array(shape)[::-1].astype("float") - 1

    # normalize pt between  0 and  1, normalize the flow
    for k in range(ndim):
        im[:, k] *= 2. / shape[k]
        pt[..., k] /= shape[k]

    # normalize to between -1 and 1
    pt = pt * 2 - 1

    # dynamics
    for t in range(niter):
        dPt = F.grid_sample(im, pt, align_corners=False)
        for k in range(ndim):
            pt[..., k] = torch.clamp(pt[..., k] + dPt[:, k], -1., 1.)

    # undo the normalization from before, reverse order of operations
    pt = (pt + 1) * 0.5
    for k in range(ndim):
        pt[..., k] *= shape[k]

    if ndim == 3:
        pt = pt[..., [2, 1, 0]].squeeze()
        pt = pt.unsqueeze(0) if pt.ndim == 1 else pt
        return pt.T
    else:
        pt = pt[..., [1, 0]].squeeze()
        pt = pt.unsqueeze(0) if pt.ndim == 1 else pt
        return pt.T


def follow_flows(dP, mask=None, niter=200, interp=True, device=torch.device("cpu")):
    """Run dynamics to recover masks in 2D or 3D."""
    shape = np.array(dP.shape[1:]).astype(np.int32)
    niter = np.uint32(niter)
    ndim = len(shape)
    inds = np.array(np.nonzero(mask if mask is not None else np.abs(dP[0]) > 1e-3)).astype(np.int32)

    if inds.ndim < 2 or inds.shape[0] < 5:
        dynamics_logger.warning("WARNING: no mask pixels found")
        return None

    if not interp:
        dynamics_logger.warning("WARNING: not interp is deprecated, using interp")
    p_interp = steps_interp(dP, inds, niter, device=device)
    p = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    p = np.array(p).astype(np.float32)
    for n in range(ndim):
        p[n, inds[0], inds[1]] = p_interp[n].cpu().numpy() if ndim == 2 else p[n]
    return p, inds


def get_masks_torch(pt, inds, shape0, rpad=20, max_size_fraction=0.4):
    """Create masks using pixel convergence after running dynamics (torch histogram version)."""
    ndim = len(shape0)
    device = pt.device

    rpad = 20
    pt += rpad
    pt = torch.clamp(pt, min=0)
    for i in range(pt.shape[0]):
        pt[i] = torch.clamp(pt[i], max=shape0[i] + rpad - 1)

    # # add extra padding to make divisible by 5
    shape = tuple((np.ceil((shape0 + 2 * rpad) / 5) * 5).astype(int))

    # sparse coo torch
    coo = torch.sparse_coo_tensor(pt, torch.ones(pt.shape[1], device=device, dtype=torch.int),
                                  shape)
    h1 = coo.to_dense()
    del coo

    hmax1 = F.max_pool2d(h1.unsqueeze(0).float(), kernel_size=5, stride=1, padding=2).squeeze()
    seeds1 = torch.nonzero((h1 - hmax1 > -1e-6) * (h1 > 10))
    del hmax1
    if len(seeds1) == 0:
        dynamics_logger.warning("no seeds found in get_masks_torch - no masks found.")
        return np.zeros(shape0, dtype="uint16")

    npts = h1[tuple(seeds1.T)]
    isort1 = npts.argsort()
    seeds1 = seeds1[isort1]

    M1 = torch.zeros(shape, dtype=torch.int, device=device)
    for k in range(len(seeds1)):
        M1[tuple(seeds1[k])] = 1 + k
    M1 = M1[tuple(pt)]
    M1 = M1.cpu().numpy()

    dtype = "uint16" if seeds1.shape[0] < 2**16 else "uint32"
    M0 = np.zeros(shape0, dtype=dtype)
    M0[inds] = M1

    # remove big masks
    uniq, counts = fastremap.unique(M0, return_counts=True)
    big = np.prod(shape0) * max_size_fraction
    bigc = uniq[counts > big]
    if len(bigc) > 0 and (len(bigc) > 1 or bigc[0] != 0):
        M0 = fastremap.mask(M0, bigc)
    fastremap.renumber(M0, in_place=True)
    M0 = np.reshape(M0, shape0)
    return M0
