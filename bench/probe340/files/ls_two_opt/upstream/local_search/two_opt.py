"""Python front-end for the batched local-search kernels in csrc/.

If the compiled extension is missing we try a JIT build (needs nvcc); if that is not possible
(e.g. CPU-only CI) a vectorised PyTorch implementation is used instead. The PyTorch version is
~30x slower for n=500 but gives identical tours.
"""
import os
import warnings

import torch

_EXT = None
_TRIED = False
_CSRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc")


def _load_extension():
    global _EXT, _TRIED
    if _TRIED:
        return _EXT
    _TRIED = True
    try:
        import batched_two_opt_cuda as ext
    except ImportError:
        ext = None
        if os.getenv("TWO_OPT_JIT", "1") == "1" and torch.cuda.is_available():
            from torch.utils.cpp_extension import load
            ext = load(
                name="batched_two_opt_cuda",
                sources=[os.path.join(_CSRC, f) for f in ("two_opt.cpp", "two_opt_kernel.cu", "or_opt_kernel.cu")],
                extra_include_paths=[os.path.join(_CSRC, "include")],
                extra_cuda_cflags=["-O3", "--use_fast_math"],
                verbose=False,
            )
    _EXT = ext
    return ext


def tour_cost(dist, tours):
    """dist: (B, N, N), tours: (B, N+1) closed tours -> (B,) lengths."""
    b = torch.arange(tours.size(0), device=tours.device)[:, None]
    return dist[b, tours[:, :-1], tours[:, 1:]].sum(-1)


def two_opt_torch(dist, tours, max_iterations=1000, eps=1e-6):
    """Reference implementation: best-improvement 2-opt, batched over B tours.

    dist: (B, N, N) float tensor, tours: (B, N+1) long tensor (closed: tours[:, 0] == tours[:, -1]).
    """
    tours = tours.clone()
    B, n_plus_1 = tours.shape
    n = n_plus_1 - 1
    arange_b = torch.arange(B, device=tours.device)
    it = 0
    for it in range(1, max_iterations + 1):
        a = tours[:, :-1]
        b = tours[:, 1:]
        d_ab = dist[arange_b[:, None], a, b]  # (B, n)
        # gain of reversing segment (i+1 .. j): d(a_i, a_j) + d(b_i, b_j) - d(a_i, b_i) - d(a_j, b_j)
        d_aa = dist[arange_b[:, None, None], a[:, :, None], a[:, None, :]]
        d_bb = dist[arange_b[:, None, None], b[:, :, None], b[:, None, :]]
        delta = d_aa + d_bb - d_ab[:, :, None] - d_ab[:, None, :]
        delta = torch.triu(delta, diagonal=2)
        best, flat = delta.view(B, -1).min(dim=1)
        improving = best < -eps
        if not improving.any():
            break
        i = torch.div(flat, n, rounding_mode="floor")
        j = flat % n
        for bi in torch.nonzero(improving).flatten().tolist():
            s, e = int(i[bi]) + 1, int(j[bi]) + 1
            tours[bi, s:e] = tours[bi, s:e].flip(0)
    return tours, it


def batched_two_opt(dist, tours, max_iterations=1000):
    """Refine `tours` in place on the device of `dist`. Returns (tours, n_iterations)."""
    ext = _load_extension()
    if ext is not None and dist.is_cuda:
        dist_c = dist.contiguous().float()
        tours_c = tours.contiguous().int()
        n_iter = ext.two_opt(dist_c, tours_c, int(max_iterations))
        return tours_c.long(), int(n_iter)
    if dist.is_cuda:
        warnings.warn("batched_two_opt_cuda is not available, using the slow PyTorch fallback")
    return two_opt_torch(dist, tours, max_iterations)


def batched_or_opt(dist, tours, segment_lengths=(1, 2, 3), max_iterations=1000):
    """Or-opt (move a segment of 1..3 nodes elsewhere). Only implemented in the CUDA extension."""
    ext = _load_extension()
    if ext is None or not dist.is_cuda:
        warnings.warn("Or-opt needs the CUDA extension; returning tours unchanged")
        return tours, 0
    tours_c = tours.contiguous().int()
    n_iter = ext.or_opt(dist.contiguous().float(), tours_c, list(segment_lengths), int(max_iterations))
    return tours_c.long(), int(n_iter)


def refine(coords, tours, max_iterations=1000, use_or_opt=True):
    """coords: (B, N, 2) tensor, tours: (B, N+1). Euclidean instances only."""
    dist = torch.cdist(coords, coords)
    tours, it2 = batched_two_opt(dist, tours, max_iterations)
    it3 = 0
    if use_or_opt:
        tours, it3 = batched_or_opt(dist, tours, max_iterations=max_iterations)
    return tours, tour_cost(dist, tours), (it2, it3)
