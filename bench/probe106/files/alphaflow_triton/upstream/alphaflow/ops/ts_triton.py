"""Rolling-window (time-series) operators for alpha expressions, fused with Triton.

All operators take `[days, stocks]` float32 tensors and roll along dim 0 (time).
NaN handling follows pandas `rolling(window, min_periods=window)`: a result is NaN
unless the whole window is observed.

On CPU tensors, or when Triton is not installed, the pure-torch reference
implementations at the bottom of this file are used instead.
"""
from typing import Tuple

import torch
from torch import Tensor

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover - CPU-only installs
    triton = None
    tl = None
    HAS_TRITON = False


if HAS_TRITON:

    @triton.autotune(
        configs=[
            triton.Config({"BLOCK_S": 128}, num_warps=4),
            triton.Config({"BLOCK_S": 256}, num_warps=4),
            triton.Config({"BLOCK_S": 512}, num_warps=8, num_stages=2),
        ],
        key=["n_stocks", "window"],
    )
    @triton.jit
    def _ts_mean_std_kernel(
        x_ptr, mean_ptr, std_ptr,
        n_days, n_stocks, window, stride_d,
        BLOCK_S: tl.constexpr,
    ):
        pid_d = tl.program_id(0)
        pid_s = tl.program_id(1)
        offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
        mask_s = offs_s < n_stocks

        acc = tl.zeros([BLOCK_S], dtype=tl.float32)
        acc2 = tl.zeros([BLOCK_S], dtype=tl.float32)
        cnt = tl.zeros([BLOCK_S], dtype=tl.float32)
        for k in range(0, window):
            d = pid_d - k
            valid = mask_s & (d >= 0)
            v = tl.load(x_ptr + d * stride_d + offs_s, mask=valid, other=float("nan"))
            ok = v == v  # NaN != NaN
            v = tl.where(ok, v, 0.0)
            acc += v
            acc2 += v * v
            cnt += ok.to(tl.float32)

        mean = acc / cnt
        var = (acc2 / cnt - mean * mean) * cnt / (cnt - 1.0)
        full = cnt >= window
        mean = tl.where(full, mean, float("nan"))
        std = tl.where(full, tl.sqrt(tl.maximum(var, 0.0)), float("nan"))
        tl.store(mean_ptr + pid_d * stride_d + offs_s, mean, mask=mask_s)
        tl.store(std_ptr + pid_d * stride_d + offs_s, std, mask=mask_s)

    @triton.jit
    def _ts_corr_kernel(
        x_ptr, y_ptr, out_ptr,
        n_days, n_stocks, window, stride_d,
        BLOCK_S: tl.constexpr,
    ):
        pid_d = tl.program_id(0)
        pid_s = tl.program_id(1)
        offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
        mask_s = offs_s < n_stocks

        sx = tl.zeros([BLOCK_S], dtype=tl.float32)
        sy = tl.zeros([BLOCK_S], dtype=tl.float32)
        sxx = tl.zeros([BLOCK_S], dtype=tl.float32)
        syy = tl.zeros([BLOCK_S], dtype=tl.float32)
        sxy = tl.zeros([BLOCK_S], dtype=tl.float32)
        cnt = tl.zeros([BLOCK_S], dtype=tl.float32)
        for k in range(0, window):
            d = pid_d - k
            valid = mask_s & (d >= 0)
            a = tl.load(x_ptr + d * stride_d + offs_s, mask=valid, other=float("nan"))
            b = tl.load(y_ptr + d * stride_d + offs_s, mask=valid, other=float("nan"))
            ok = (a == a) & (b == b)
            a = tl.where(ok, a, 0.0)
            b = tl.where(ok, b, 0.0)
            sx += a
            sy += b
            sxx += a * a
            syy += b * b
            sxy += a * b
            cnt += ok.to(tl.float32)

        cov = sxy / cnt - (sx / cnt) * (sy / cnt)
        vx = sxx / cnt - (sx / cnt) * (sx / cnt)
        vy = syy / cnt - (sy / cnt) * (sy / cnt)
        corr = cov / tl.sqrt(vx * vy)
        corr = tl.where((cnt >= window) & (vx > 1e-12) & (vy > 1e-12), corr, float("nan"))
        tl.store(out_ptr + pid_d * stride_d + offs_s, corr, mask=mask_s)


def _corr_block_size(device: torch.device) -> int:
    # Ampere and newer have enough registers for the wider tile
    major, _ = torch.cuda.get_device_capability(device)
    return 512 if major >= 8 else 256


def _use_triton(*tensors: Tensor) -> bool:
    return HAS_TRITON and all(t.is_cuda for t in tensors)


def ts_mean_std(x: Tensor, window: int) -> Tuple[Tensor, Tensor]:
    """Rolling mean and (sample) standard deviation over `window` days."""
    if not _use_triton(x):
        return _ts_mean_std_torch(x, window)
    x = x.contiguous().float()
    mean = torch.empty_like(x)
    std = torch.empty_like(x)
    n_days, n_stocks = x.shape
    grid = lambda meta: (n_days, triton.cdiv(n_stocks, meta["BLOCK_S"]))  # noqa: E731
    _ts_mean_std_kernel[grid](x, mean, std, n_days, n_stocks, window, x.stride(0))
    return mean, std


def ts_corr(x: Tensor, y: Tensor, window: int) -> Tensor:
    """Rolling Pearson correlation between two panels."""
    assert x.shape == y.shape
    if not _use_triton(x, y):
        return _ts_corr_torch(x, y, window)
    x = x.contiguous().float()
    y = y.contiguous().float()
    out = torch.empty_like(x)
    n_days, n_stocks = x.shape
    block_s = _corr_block_size(x.device)
    grid = (n_days, triton.cdiv(n_stocks, block_s))
    _ts_corr_kernel[grid](x, y, out, n_days, n_stocks, window, x.stride(0), BLOCK_S=block_s, num_warps=4)
    return out


def ts_zscore(x: Tensor, window: int) -> Tensor:
    mean, std = ts_mean_std(x, window)
    return (x - mean) / std


# ---------------------------------------------------------------------------------------------
# pure torch reference implementations (CPU, tests, and GPUs without Triton)

def _rolling_view(x: Tensor, window: int) -> Tensor:
    pad = torch.full((window - 1, x.shape[1]), float("nan"), dtype=x.dtype, device=x.device)
    xp = torch.cat([pad, x], dim=0)
    return xp.unfold(0, window, 1)  # [days, stocks, window]


def _ts_mean_std_torch(x: Tensor, window: int) -> Tuple[Tensor, Tensor]:
    w = _rolling_view(x.float(), window)
    full = ~torch.isnan(w).any(dim=-1)
    mean = w.mean(dim=-1)
    std = w.std(dim=-1, unbiased=True)
    nan = torch.tensor(float("nan"), device=x.device)
    return torch.where(full, mean, nan), torch.where(full, std, nan)


def _ts_corr_torch(x: Tensor, y: Tensor, window: int) -> Tensor:
    wx = _rolling_view(x.float(), window)
    wy = _rolling_view(y.float(), window)
    full = ~(torch.isnan(wx).any(dim=-1) | torch.isnan(wy).any(dim=-1))
    wx = wx - wx.mean(dim=-1, keepdim=True)
    wy = wy - wy.mean(dim=-1, keepdim=True)
    cov = (wx * wy).mean(dim=-1)
    vx = wx.pow(2).mean(dim=-1)
    vy = wy.pow(2).mean(dim=-1)
    corr = cov / (vx * vy).sqrt()
    ok = full & (vx > 1e-12) & (vy > 1e-12)
    return torch.where(ok, corr, torch.tensor(float("nan"), device=x.device))


if __name__ == "__main__":
    import time

    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(2500, 5000, device=dev).cumsum(0)
    b = torch.randn(2500, 5000, device=dev).cumsum(0)
    a[torch.rand_like(a) < 0.01] = float("nan")
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    for name, fn in [("mean_std", lambda: ts_mean_std(a, 20)), ("corr", lambda: ts_corr(a, b, 20))]:
        fn()
        sync()
        t0 = time.perf_counter()
        for _ in range(10):
            fn()
        sync()
        print(f"{name:10s} {(time.perf_counter() - t0) / 10 * 1e3:8.2f} ms on {dev}")
    ref = _ts_corr_torch(a, b, 20)
    got = ts_corr(a, b, 20)
    print("max abs diff vs torch:", torch.nan_to_num((ref - got).abs(), 0.0).max().item())
