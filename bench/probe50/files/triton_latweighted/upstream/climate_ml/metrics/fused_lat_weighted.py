"""Fused latitude-weighted RMSE / ACC reductions for large ensembles.

Scoring a 50-member, 40-step, 73-channel 0.25-degree forecast with eager torch allocates
several [E, T, C, 721, 1440] temporaries; these Triton kernels stream over (lat, lon) once per
(member, step, channel) row and write only the per-row partial sums.
"""
import math
from typing import Tuple

import torch
import triton
import triton.language as tl


def _autotune_configs():
    cc_major, _ = torch.cuda.get_device_capability()
    if cc_major >= 9:  # Hopper: larger tiles, more stages to hide HBM3 latency
        return [
            triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK": 8192}, num_warps=16, num_stages=3),
        ]
    return [
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=3),
    ]


@triton.autotune(configs=_autotune_configs(), key=["n_lat", "n_lon"])
@triton.jit
def _lat_weighted_sq_err_kernel(
    pred_ptr, tgt_ptr, w_ptr, out_ptr,
    n_lat, n_lon,
    stride_row,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    n = n_lat * n_lon
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        p = tl.load(pred_ptr + row * stride_row + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        t = tl.load(tgt_ptr + row * stride_row + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + offs // n_lon, mask=mask, other=0.0)
        d = p - t
        acc += w * d * d
    tl.store(out_ptr + row, tl.sum(acc, axis=0) / n)


@triton.autotune(configs=_autotune_configs(), key=["n_lat", "n_lon"])
@triton.jit
def _lat_weighted_acc_kernel(
    pred_ptr, tgt_ptr, clim_ptr, w_ptr, out_ptr,
    n_lat, n_lon,
    stride_row, stride_clim,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    chan = tl.program_id(1)
    n = n_lat * n_lon
    s_pt = tl.zeros([BLOCK], dtype=tl.float32)
    s_pp = tl.zeros([BLOCK], dtype=tl.float32)
    s_tt = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        c = tl.load(clim_ptr + chan * stride_clim + offs, mask=mask, other=0.0, cache_modifier=".cg")
        p = tl.load(pred_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32) - c
        t = tl.load(tgt_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32) - c
        w = tl.load(w_ptr + offs // n_lon, mask=mask, other=0.0)
        s_pt += w * p * t
        s_pp += w * p * p
        s_tt += w * t * t
    num = tl.sum(s_pt, axis=0)
    den = tl.sqrt(tl.sum(s_pp, axis=0) * tl.sum(s_tt, axis=0))
    tl.store(out_ptr + row, num / den)


def lat_weights(lat_deg: torch.Tensor) -> torch.Tensor:
    w = torch.cos(torch.deg2rad(lat_deg.to(torch.float32)))
    return w / w.mean()


def lat_weighted_rmse(pred: torch.Tensor, target: torch.Tensor, lat_deg: torch.Tensor) -> torch.Tensor:
    """pred/target: [..., lat, lon] (any leading dims) -> RMSE per leading index."""
    assert pred.is_cuda and target.is_cuda, "fused metrics need CUDA tensors"
    assert pred.shape == target.shape
    n_lat, n_lon = pred.shape[-2:]
    lead = pred.shape[:-2]
    p = pred.reshape(-1, n_lat * n_lon).contiguous()
    t = target.reshape(-1, n_lat * n_lon).contiguous()
    w = lat_weights(lat_deg).to(pred.device)
    out = torch.empty(p.shape[0], device=pred.device, dtype=torch.float32)
    _lat_weighted_sq_err_kernel[(p.shape[0],)](p, t, w, out, n_lat, n_lon, p.stride(0))
    return out.sqrt().reshape(lead)


def lat_weighted_acc(pred: torch.Tensor, target: torch.Tensor, clim: torch.Tensor, lat_deg: torch.Tensor) -> torch.Tensor:
    """pred/target: [N, C, lat, lon]; clim: [C, lat, lon] -> ACC of shape [N, C]."""
    assert pred.is_cuda, "fused metrics need CUDA tensors"
    N, C, n_lat, n_lon = pred.shape
    p = pred.reshape(N * C, n_lat * n_lon).contiguous()
    t = target.reshape(N * C, n_lat * n_lon).contiguous()
    c = clim.reshape(C, n_lat * n_lon).contiguous().to(torch.float32)
    w = lat_weights(lat_deg).to(pred.device)
    out = torch.empty(N * C, device=pred.device, dtype=torch.float32)
    grid = lambda meta: (N * C, 1)
    # every row uses the climatology of its own channel: launch one program per (row), chan = row % C
    for ci in range(C):
        rows = slice(ci, N * C, C)
        _lat_weighted_acc_kernel[(N, 1)](p[rows], t[rows], c[ci:ci + 1], w, out[rows], n_lat, n_lon,
                                         p.stride(0) * C, c.stride(0))
    return out.reshape(N, C)


def lat_weighted_rmse_reference(pred, target, lat_deg):
    """Eager reference used by the unit tests (and on CPU)."""
    w = lat_weights(lat_deg).to(pred.device).view(-1, 1)
    return torch.sqrt(((pred - target) ** 2 * w).mean(dim=(-2, -1)))


def lat_weighted_acc_reference(pred, target, clim, lat_deg):
    w = lat_weights(lat_deg).to(pred.device).view(-1, 1)
    p = pred - clim
    t = target - clim
    return (w * p * t).sum(dim=(-2, -1)) / torch.sqrt((w * p * p).sum(dim=(-2, -1)) * (w * t * t).sum(dim=(-2, -1)))
