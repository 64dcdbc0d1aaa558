"""Non-maximum suppression for star-convex polygons / polyhedra.

The heavy lifting is done by the compiled extension ``stardist_torch._C``
(CUDA kernels for GPU tensors, C++ for CPU tensors). A slow numpy reference
implementation is kept for testing.
"""
import warnings

import numpy as np
import torch

from .. import _C

__all__ = ["non_maximum_suppression", "polygons_to_label", "nms_reference"]


def _check_inputs(dist, prob, points):
    assert dist.ndim == 2 and prob.ndim == 1 and points.ndim == 2
    assert dist.shape[0] == prob.shape[0] == points.shape[0]
    return dist.contiguous().float(), prob.contiguous().float(), points.contiguous().float()


@torch.no_grad()
def non_maximum_suppression(dist, prob, points, prob_thresh=0.5, nms_thresh=0.4, max_candidates=None):
    """Greedy NMS of star-convex polygons, highest probability first.

    Args:
        dist: (N, n_rays) radial distances
        prob: (N,) object probabilities
        points: (N, 2) polygon centers (y, x)
    Returns:
        LongTensor with the indices of the kept polygons (on the input device)
    """
    dist, prob, points = _check_inputs(dist, prob, points)

    keep = prob > prob_thresh
    dist, prob, points = dist[keep], prob[keep], points[keep]
    if prob.numel() == 0:
        return torch.zeros((0,), dtype=torch.long, device=prob.device)

    order = torch.argsort(prob, descending=True)
    if max_candidates is not None:
        order = order[:max_candidates]
    dist, prob, points = dist[order], prob[order], points[order]

    if dist.is_cuda:
        suppressed = _C.poly_nms_cuda(dist, points, float(nms_thresh))
    else:
        suppressed = _C.poly_nms_cpu(dist, points, float(nms_thresh))

    kept = torch.nonzero(~suppressed.bool(), as_tuple=False).squeeze(1)
    idx_all = torch.nonzero(keep, as_tuple=False).squeeze(1)
    return idx_all[order[kept]]


@torch.no_grad()
def polygons_to_label(dist, points, shape, prob=None, thr=-np.inf):
    """Render polygons into an instance label image (higher prob painted last)."""
    dist = dist.contiguous().float()
    points = points.contiguous().float()
    if prob is not None:
        ind = prob > thr
        dist, points, prob = dist[ind], points[ind], prob[ind]
        order = torch.argsort(prob)
        dist, points = dist[order], points[order]
    if dist.device.type == "cuda":
        lbl = _C.render_polygons_cuda(dist, points, int(shape[0]), int(shape[1]))
    else:
        lbl = _C.render_polygons_cpu(dist, points, int(shape[0]), int(shape[1]))
    return lbl


def _polygon_area(coords):
    y, x = coords
    return 0.5 * np.abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))


def nms_reference(dist, prob, points, nms_thresh=0.4):
    """Pure numpy NMS, O(N^2) -- only for tests."""
    from skimage.draw import polygon as draw_polygon

    warnings.warn("nms_reference is very slow, use non_maximum_suppression instead")
    dist = np.asarray(dist)
    prob = np.asarray(prob)
    points = np.asarray(points)
    n_rays = dist.shape[1]
    phis = np.linspace(0, 2 * np.pi, n_rays, endpoint=False)
    order = np.argsort(prob)[::-1]
    kept = []
    masks = {}
    for i in order:
        coords = np.stack([points[i, 0] + dist[i] * np.sin(phis), points[i, 1] + dist[i] * np.cos(phis)])
        rr, cc = draw_polygon(coords[0], coords[1])
        masks[i] = set(zip(rr.tolist(), cc.tolist()))
        ok = True
        for j in kept:
            inter = len(masks[i] & masks[j])
            if inter / max(1, min(len(masks[i]), len(masks[j]))) > nms_thresh:
                ok = False
                break
        if ok:
            kept.append(i)
    return np.array(kept, dtype=np.int64)
