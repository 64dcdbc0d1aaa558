"""Fused temporal shift (TSM) forward/backward as a Triton kernel.

The eager implementation allocates a zero tensor and does three slice copies per call;
the kernel reads each element once and writes the shifted output directly. Used as a
drop-in replacement for ``TemporalShift.shift`` in ops/temporal_shift.py.
"""
import warnings

import torch
import torch.nn as nn
import triton
import triton.language as tl

_MIN_CAPABILITY = (7, 0)


def _configs():
    return [
        triton.Config({"BLOCK_HW": 256}, num_warps=2, num_stages=2),
        triton.Config({"BLOCK_HW": 512}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_HW": 1024}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_HW": 2048}, num_warps=8, num_stages=4),
    ]


@triton.autotune(configs=_configs(), key=["HW", "C"])
@triton.jit
def _tsm_kernel(
    x_ptr,
    y_ptr,
    T,
    C,
    HW,
    fold,
    direction,
    BLOCK_HW: tl.constexpr,
):
    # one program per (n, t, c) plane and HW block
    pid_plane = tl.program_id(0)
    pid_hw = tl.program_id(1)

    c = pid_plane % C
    t = (pid_plane // C) % T
    n = pid_plane // (C * T)

    # channels [0, fold) read from t+1, [fold, 2*fold) read from t-1, the rest stay
    shift = tl.where(c < fold, 1, tl.where(c < 2 * fold, -1, 0)) * direction
    src_t = t + shift
    valid = (src_t >= 0) & (src_t < T)

    offs = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    mask = offs < HW
    src = ((n * T + src_t) * C + c) * HW + offs
    dst = pid_plane * HW + offs

    vals = tl.load(x_ptr + src, mask=mask & valid, other=0.0, eviction_policy="evict_first")
    tl.store(y_ptr + dst, vals, mask=mask)


def _launch(x, n_segment, fold_div, direction):
    nt, c, h, w = x.shape
    assert nt % n_segment == 0, "batch*segments must be divisible by n_segment"
    x = x.contiguous()
    y = torch.empty_like(x)
    fold = c // fold_div
    hw = h * w
    grid = lambda meta: (nt * c, triton.cdiv(hw, meta["BLOCK_HW"]))  # noqa: E731
    with torch.cuda.device(x.device):
        _tsm_kernel[grid](x, y, n_segment, c, hw, fold, direction)
    return y


class _TemporalShiftFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, n_segment, fold_div):
        ctx.n_segment = n_segment
        ctx.fold_div = fold_div
        return _launch(x, n_segment, fold_div, 1)

    @staticmethod
    def backward(ctx, grad_out):
        # the adjoint of a shift is the opposite shift
        return _launch(grad_out, ctx.n_segment, ctx.fold_div, -1), None, None


def _shift_eager(x, n_segment, fold_div=8):
    nt, c, h, w = x.size()
    n_batch = nt // n_segment
    x = x.view(n_batch, n_segment, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(x)
    out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
    out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]  # shift right
    out[:, :, 2 * fold:] = x[:, :, 2 * fold:]  # not shift
    return out.view(nt, c, h, w)


def temporal_shift(x, n_segment, fold_div=8):
    if torch.cuda.get_device_capability(x.device) < _MIN_CAPABILITY:
        warnings.warn("fused temporal shift needs sm70+, using the eager path")
        return _shift_eager(x, n_segment, fold_div)
    return _TemporalShiftFn.apply(x, n_segment, fold_div)


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8, inplace=False):
        super(TemporalShift, self).__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div
        if inplace:
            warnings.warn("inplace shift is not supported by the fused kernel; ignoring")
        print('=> Using fold div: {}'.format(self.fold_div))

    def forward(self, x):
        x = temporal_shift(x, self.n_segment, fold_div=self.fold_div)
        return self.net(x)


if __name__ == "__main__":
    # correctness check against the eager reference
    torch.manual_seed(0)
    x = torch.randn(2 * 8, 64, 14, 14, device="cuda", requires_grad=True)
    y_ref = _shift_eager(x, 8)
    y = temporal_shift(x, 8)
    torch.testing.assert_close(y, y_ref)
    g = torch.randn_like(y)
    (gx,) = torch.autograd.grad(y, x, g)
    (gx_ref,) = torch.autograd.grad(y_ref, x, g)
    torch.testing.assert_close(gx, gx_ref)
    print("ok")
