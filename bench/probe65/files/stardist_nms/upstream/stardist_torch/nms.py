"""Non-maximum suppression of star-convex polygon / polyhedron candidates.

The CPU implementation (OpenMP, ``stardist_torch.lib._stardist_cpu``) mirrors the original
StarDist C++ code.  For large 3-D volumes the candidate count easily reaches 10^6, so there is also a
CUDA implementation (``stardist_torch._nms_cuda``) that computes the pairwise polygon overlaps on the
GPU in blocks and only runs the greedy sweep on the host.
"""
import warnings
from time import time

import numpy as np
import torch

from .geometry import polygons_to_label, dist_to_coord
from .lib import _stardist_cpu  # always built (pure C++ / OpenMP)

from . import _nms_cuda  # built by setup.py (CUDAExtension)

_BLOCK_SIZE = 4096


def _ind_prob_thresh(prob, prob_thresh, b=2):
    if b is not None and np.isscalar(b):
        b = ((b, b),) * prob.ndim
    ind_thresh = prob > prob_thresh
    if b is not None:
        _ind_thresh = np.zeros_like(ind_thresh)
        ss = tuple(slice(_bs[0] if _bs[0] > 0 else None,
                         -_bs[1] if _bs[1] > 0 else None) for _bs in b)
        _ind_thresh[ss] = True
        ind_thresh &= _ind_thresh
    return ind_thresh


def non_maximum_suppression(dist, prob, grid=(1, 1), b=2, nms_thresh=0.5, prob_thresh=0.5,
                            use_bbox=True, use_kdtree=True, verbose=False, use_gpu=False):
    """Non-Maximum-Supression of 2D polygons.

    Retains only polygons whose overlap is smaller than nms_thresh.

    Returns the indices of the selected polygons.
    """
    assert prob.ndim == 2 and dist.ndim == 3 and prob.shape == dist.shape[:2]
    n_rays = dist.shape[-1]
    grid = tuple(grid)

    mask = _ind_prob_thresh(prob, prob_thresh, b)
    points = np.stack(np.where(mask), axis=1)

    dist = dist[mask]
    scores = prob[mask]

    # sort scores descendingly
    ind = np.argsort(scores)[::-1]
    dist = dist[ind]
    scores = scores[ind]
    points = points[ind]
    points = (points * np.array(grid).reshape((1, 2)))

    if verbose:
        t = time()

    if use_gpu and torch.cuda.is_available():
        inds = non_maximum_suppression_gpu(dist, points, scores, thresh=nms_thresh, verbose=verbose)
    else:
        inds = _stardist_cpu.c_non_max_suppression_inds(
            dist.astype(np.float32), points.astype(np.int32), int(use_kdtree),
            int(use_bbox), int(verbose), np.float32(nms_thresh))

    if verbose:
        print("NMS took %.4f s" % (time() - t))

    return points[inds], scores[inds], dist[inds]


def non_maximum_suppression_gpu(dist, points, scores, thresh=0.5, verbose=False,
                                device="cuda", block_size=_BLOCK_SIZE):
    """Block-wise GPU overlap computation followed by a greedy sweep on the host.

    dist:   (n, n_rays) float32, sorted by decreasing score
    points: (n, 2) int32
    """
    n = len(dist)
    if n == 0:
        return np.zeros(0, dtype=int)
    dist_t = torch.as_tensor(dist, dtype=torch.float32).cuda()
    points_t = torch.as_tensor(points, dtype=torch.float32).cuda()

    coords = _nms_cuda.polygon_coords(dist_t, points_t)               # (n, n_rays, 2)
    areas = _nms_cuda.polygon_areas(coords)                            # (n,)
    bboxes = torch.stack([coords[..., 0].amin(1), coords[..., 1].amin(1),
                          coords[..., 0].amax(1), coords[..., 1].amax(1)], dim=1)

    suppressed = np.zeros(n, dtype=bool)
    keep = []
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for start in range(0, n, block_size):
            stop = min(n, start + block_size)
            # overlaps of the block against all later candidates; bbox pre-filter on device
            ov = _nms_cuda.block_overlap(coords, areas, bboxes, start, stop, float(thresh))
            ov = ov.cpu().numpy()                                       # (stop-start, n) bool
            for i in range(start, stop):
                if suppressed[i]:
                    continue
                keep.append(i)
                suppressed |= ov[i - start]
                suppressed[i] = True
    torch.cuda.synchronize()
    if verbose:
        print("gpu nms: kept %d of %d" % (len(keep), n))
    return np.asarray(keep, dtype=int)


def non_maximum_suppression_3d(dist, prob, rays, grid=(1, 1, 1), b=2, nms_thresh=0.5,
                               prob_thresh=0.5, use_bbox=True, use_kdtree=True, verbose=False,
                               use_gpu=False):
    """Non-Maximum-Supression of 3D polyhedra."""
    assert prob.ndim == 3 and dist.ndim == 4 and dist.shape[-1] == len(rays)
    grid = np.asarray(grid)
    mask = _ind_prob_thresh(prob, prob_thresh, b)
    points = np.stack(np.where(mask), axis=1)
    dist = dist[mask]
    scores = prob[mask]
    ind = np.argsort(scores)[::-1]
    dist, scores, points = dist[ind], scores[ind], points[ind]
    points = points * grid.reshape((1, 3))

    if use_gpu:
        dev = torch.device("cuda", torch.cuda.current_device())
        verts = torch.as_tensor(rays.vertices, dtype=torch.float32, device=dev)
        faces = torch.as_tensor(rays.faces, dtype=torch.int32, device=dev)
        d = torch.as_tensor(dist, dtype=torch.float32, device=dev)
        p = torch.as_tensor(points, dtype=torch.float32, device=dev)
        keep = _nms_cuda.polyhedron_nms(d, p, verts, faces, float(nms_thresh))
        inds = keep.cpu().numpy().astype(bool)
    else:
        inds = _stardist_cpu.c_non_max_suppression_inds_3d(
            dist.astype(np.float32), points.astype(np.float32),
            rays.vertices.astype(np.float32), rays.faces.astype(np.int32),
            scores.astype(np.float32), int(use_bbox), int(use_kdtree), int(verbose),
            np.float32(nms_thresh))
    return points[inds], scores[inds], dist[inds]


def labels_from_nms(dist, prob, shape, grid=(1, 1), **kwargs):
    """Convenience: run NMS and paint polygons into a label image."""
    points, scores, dist = non_maximum_suppression(dist, prob, grid=grid, **kwargs)
    coord = dist_to_coord(dist, points)
    labels = polygons_to_label(coord, prob=scores, shape=shape)
    return labels, dict(coord=coord, points=points, prob=scores)
