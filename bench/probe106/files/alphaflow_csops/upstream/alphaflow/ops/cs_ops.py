"""Cross-sectional operators (per trading day, across stocks).

All functions take `[days, stocks]` tensors (NaN = stock not in universe that day).
They dispatch to the compiled `alphaflow._C` kernels when available and fall back
to pure torch otherwise, so results are identical on every backend (up to float
rounding in the regression).
"""
from typing import Optional

import torch
from torch import Tensor

try:
    from alphaflow import _C  # built by setup.py; CUDA kernels only if compiled WITH_CUDA

    _HAS_CUDA_KERNELS = bool(_C.with_cuda())
except ImportError:  # pragma: no cover - source checkout without build
    _C = None
    _HAS_CUDA_KERNELS = False


def cs_rank(x: Tensor, pct: bool = True) -> Tensor:
    """Rank within each day (average rank for ties), NaN stays NaN. pct=True scales to (0, 1]."""
    if _C is not None and x.is_cuda and _HAS_CUDA_KERNELS:
        return _C.cs_rank_cuda(x.contiguous(), pct)
    if _C is not None:
        return _C.cs_rank_cpu(x.detach().cpu().contiguous(), pct).to(x.device)
    return _cs_rank_torch(x, pct)


def cs_zscore(x: Tensor, clip: Optional[float] = 5.0) -> Tensor:
    mean = torch.nanmean(x, dim=1, keepdim=True)
    centered = x - mean
    std = torch.sqrt(torch.nanmean(centered * centered, dim=1, keepdim=True))
    z = centered / std.clamp_min(1e-12)
    if clip is not None:
        z = z.clamp(-clip, clip)
    return z


def cs_winsorize(x: Tensor, lower: float = 0.01, upper: float = 0.99) -> Tensor:
    lo = torch.nanquantile(x, lower, dim=1, keepdim=True)
    hi = torch.nanquantile(x, upper, dim=1, keepdim=True)
    return torch.minimum(torch.maximum(x, lo), hi)


def cs_neutralize(y: Tensor, exposures: Tensor, ridge: float = 1e-6) -> Tensor:
    """Residual of `y` after a per-day least-squares regression on `exposures`.

    y:          [days, stocks]
    exposures:  [days, stocks, k]  e.g. industry one-hot + log market cap
    """
    if _C is not None and y.is_cuda and _HAS_CUDA_KERNELS:
        stream = torch.cuda.current_stream(y.device).cuda_stream
        return _C.cs_neutralize_cuda(y.contiguous(), exposures.contiguous(), ridge, stream)
    return _cs_neutralize_torch(y, exposures, ridge)


def group_demean(x: Tensor, group: Tensor, n_groups: int) -> Tensor:
    """Subtract the per-day group (industry) mean. group: [days, stocks] int64 in [0, n_groups)."""
    valid = ~torch.isnan(x)
    xz = torch.where(valid, x, torch.zeros_like(x))
    days = x.shape[0]
    sums = torch.zeros(days, n_groups, dtype=x.dtype, device=x.device).scatter_add_(1, group, xz)
    cnts = torch.zeros(days, n_groups, dtype=x.dtype, device=x.device).scatter_add_(1, group, valid.to(x.dtype))
    means = sums / cnts.clamp_min(1.0)
    return torch.where(valid, x - means.gather(1, group), x)


# ---------------------------------------------------------------------------------------------
# torch reference implementations

def _cs_rank_torch(x: Tensor, pct: bool) -> Tensor:
    nan = torch.isnan(x)
    filled = torch.where(nan, torch.full_like(x, float("inf")), x)
    order = filled.argsort(dim=1)
    ranks = torch.empty_like(x)
    ar = torch.arange(1, x.shape[1] + 1, dtype=x.dtype, device=x.device).expand_as(x)
    ranks.scatter_(1, order, ar)
    # average ranks for ties: equal values share the mean of their ordinal ranks
    eq = filled[:, :, None] == filled[:, None, :]
    ranks = (eq.to(x.dtype) @ ranks[:, :, None]).squeeze(-1) / eq.sum(-1).to(x.dtype)
    if pct:
        ranks = ranks / (~nan).sum(dim=1, keepdim=True).clamp_min(1).to(x.dtype)
    return ranks.masked_fill(nan, float("nan"))


def _cs_neutralize_torch(y: Tensor, exposures: Tensor, ridge: float) -> Tensor:
    valid = ~torch.isnan(y) & ~torch.isnan(exposures).any(dim=-1)
    X = torch.where(valid[..., None], exposures, torch.zeros_like(exposures))
    Y = torch.where(valid, y, torch.zeros_like(y))[..., None]
    k = X.shape[-1]
    eye = torch.eye(k, dtype=X.dtype, device=X.device)
    Xr = torch.cat([X, (ridge ** 0.5) * eye.expand(X.shape[0], k, k)], dim=1)
    Yr = torch.cat([Y, torch.zeros(Y.shape[0], k, 1, dtype=Y.dtype, device=Y.device)], dim=1)
    beta = torch.linalg.lstsq(Xr, Yr).solution  # [days, k, 1]
    resid = (Y - X @ beta).squeeze(-1)
    return torch.where(valid, resid, torch.full_like(y, float("nan")))
