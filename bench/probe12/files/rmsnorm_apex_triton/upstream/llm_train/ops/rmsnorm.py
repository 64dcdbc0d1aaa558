"""RMSNorm with three backends: apex's fused CUDA kernel, a Triton kernel, and plain PyTorch.

Used by the InternLM / Qwen-style training framework in this repo. The backend is picked once at import:
apex when available (fastest backward), else Triton, else torch.
"""
import logging
import os

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)

try:
    from apex.normalization.fused_layer_norm import FusedRMSNormAffineMixedDtypesFunction
    HAS_APEX = True
except (ImportError, ModuleNotFoundError):
    HAS_APEX = False

try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False

RMSNORM_BACKEND = os.environ.get("RMSNORM_BACKEND", "auto")


def manual_rms_norm(x, normalized_shape, weight, eps):
    dims = tuple(i for i in range(-1, -len(normalized_shape) - 1, -1))
    variance = x.to(torch.float32).pow(2).mean(dims, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    if weight is None:
        return x
    if weight.dtype in [torch.float16, torch.bfloat16]:
        x = x.to(weight.dtype)
    return weight * x


if HAS_TRITON:

    @triton.jit
    def _rms_norm_fwd_kernel(X, Y, W, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        Y += row * stride
        X += row * stride
        _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for off in range(0, N, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
            _var += x * x
        var = tl.sum(_var, axis=0) / N
        rstd = 1 / tl.sqrt(var + eps)
        tl.store(Rstd + row, rstd)
        for off in range(0, N, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            mask = cols < N
            w = tl.load(W + cols, mask=mask)
            x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
            y = x * rstd * w
            tl.store(Y + cols, y, mask=mask)

    @triton.jit
    def _rms_norm_bwd_dx_kernel(DX, DY, DW, X, W, Rstd, stride, N, BLOCK_SIZE_N: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE_N)
        mask = cols < N
        X += row * stride
        DY += row * stride
        DX += row * stride
        DW += row * stride
        x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
        dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        rstd = tl.load(Rstd + row)
        xhat = x * rstd
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / N
        dx = (wdy - xhat * c1) * rstd
        tl.store(DX + cols, dx, mask=mask)
        tl.store(DW + cols, (dy * xhat).to(w.dtype), mask=mask)


def _launch_config(N, element_size):
    MAX_FUSED_SIZE = 65536 // element_size
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    if N > BLOCK_SIZE:
        raise RuntimeError("This rms norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    return BLOCK_SIZE, num_warps


class TritonRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        y = torch.empty_like(x)
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
        BLOCK_SIZE, num_warps = _launch_config(N, x.element_size())
        _rms_norm_fwd_kernel[(M,)](x_arg, y, weight, rstd, x_arg.stride(0), N, eps,
                                   BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
        ctx.save_for_backward(x, weight, rstd)
        ctx.BLOCK_SIZE, ctx.num_warps, ctx.eps = BLOCK_SIZE, num_warps, eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, rstd = ctx.saved_tensors
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        dx = torch.empty_like(dy)
        _dw = torch.empty((M, N), dtype=x.dtype, device=w.device)
        _rms_norm_bwd_dx_kernel[(M,)](dx, dy, _dw, x, w, rstd, x_arg.stride(0), N,
                                      BLOCK_SIZE_N=ctx.BLOCK_SIZE, num_warps=ctx.num_warps)
        dw = _dw.sum(0)
        return dx, dw, None


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (hidden_size,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))

    def forward(self, x):
        if HAS_APEX and RMSNORM_BACKEND in ("auto", "apex"):
            return FusedRMSNormAffineMixedDtypesFunction.apply(x, self.weight, self.normalized_shape, self.eps)
        if x.is_cuda and HAS_TRITON and RMSNORM_BACKEND in ("auto", "triton"):
            return TritonRMSNormFunction.apply(x, self.weight, self.eps)
        return manual_rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def reset_parameters(self):
        nn.init.ones_(self.weight)


def benchmark(hidden=4096, tokens=8192, dtype=torch.bfloat16, iters=50):
    norm = RMSNorm(hidden, device="cuda", dtype=dtype)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype, requires_grad=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        norm(x).sum().backward()
    start.record()
    for _ in range(iters):
        norm(x).sum().backward()
    end.record()
    torch.cuda.synchronize()
    logger.info("rmsnorm fwd+bwd: %.3f ms", start.elapsed_time(end) / iters)
