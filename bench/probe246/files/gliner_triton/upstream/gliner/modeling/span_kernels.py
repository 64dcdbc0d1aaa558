"""Fused span max-pooling for the "markerV1 + pooling" span representation.

For long documents (max_width=12, 1k+ words) the reference implementation materialises a
[B, L, K, W, D] tensor before the max, which dominates memory during training. The Triton
kernel below walks each span once and keeps only the running max in registers.

Enabled with ``span_kernels: triton`` in the training YAML. Requires a CUDA GPU; the
pure-PyTorch version is kept for CPU inference and for testing.
"""
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover
    HAS_TRITON = False


def span_maxpool_reference(x: torch.Tensor, span_idx: torch.Tensor, span_mask: torch.Tensor) -> torch.Tensor:
    """x: [B, L, D]; span_idx: [B, S, 2] (inclusive start, inclusive end); span_mask: [B, S]."""
    B, L, D = x.shape
    S = span_idx.shape[1]
    starts = span_idx[..., 0].clamp(min=0, max=L - 1)
    ends = span_idx[..., 1].clamp(min=0, max=L - 1)
    max_w = int((ends - starts).max().item()) + 1 if S > 0 else 1
    offsets = torch.arange(max_w, device=x.device)
    pos = starts.unsqueeze(-1) + offsets  # [B, S, W]
    valid = pos <= ends.unsqueeze(-1)
    pos = pos.clamp(max=L - 1)
    gathered = torch.gather(
        x.unsqueeze(1).expand(B, S, L, D), 2, pos.unsqueeze(-1).expand(B, S, max_w, D)
    )  # [B, S, W, D]
    gathered = gathered.masked_fill(~valid.unsqueeze(-1), float("-inf"))
    out = gathered.max(dim=2).values
    out = out.masked_fill(~span_mask.bool().unsqueeze(-1), 0.0)
    return out


if HAS_TRITON:

    _CONFIGS = [triton.Config({"BLOCK_D": bd}, num_warps=nw, num_stages=2) for bd in (64, 128, 256) for nw in (2, 4, 8)]

    @triton.autotune(configs=_CONFIGS, key=["D", "MAX_W"])
    @triton.jit
    def _span_maxpool_fwd_kernel(
        X,
        SPANS,
        MASK,
        OUT,
        ARGMAX,
        L,
        S,
        D,
        stride_xb,
        stride_xl,
        stride_sb,
        stride_ob,
        stride_os,
        MAX_W: tl.constexpr,
        BLOCK_D: tl.constexpr,
    ):
        pid_bs = tl.program_id(0)
        pid_d = tl.program_id(1)
        b = pid_bs // S
        s = pid_bs % S

        start = tl.load(SPANS + b * stride_sb + s * 2)
        end = tl.load(SPANS + b * stride_sb + s * 2 + 1)
        keep = tl.load(MASK + b * S + s)

        offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
        d_mask = offs_d < D

        acc = tl.full([BLOCK_D], float("-inf"), dtype=tl.float32)
        arg = tl.zeros([BLOCK_D], dtype=tl.int32)
        for w in range(MAX_W):
            p = start + w
            in_span = (p <= end) & (p < L)
            v = tl.load(X + b * stride_xb + p * stride_xl + offs_d, mask=d_mask & in_span, other=float("-inf"))
            v = v.to(tl.float32)
            better = v > acc
            acc = tl.where(better, v, acc)
            arg = tl.where(better, p, arg)

        acc = tl.where(keep != 0, acc, 0.0)
        tl.store(OUT + b * stride_ob + s * stride_os + offs_d, acc.to(OUT.dtype.element_ty), mask=d_mask)
        tl.store(ARGMAX + b * stride_ob + s * stride_os + offs_d, arg, mask=d_mask)

    @triton.jit
    def _span_maxpool_bwd_kernel(
        GRAD_OUT,
        ARGMAX,
        MASK,
        GRAD_X,
        S,
        D,
        stride_gb,
        stride_gs,
        stride_xb,
        stride_xl,
        BLOCK_D: tl.constexpr,
    ):
        pid_bs = tl.program_id(0)
        pid_d = tl.program_id(1)
        b = pid_bs // S
        s = pid_bs % S
        keep = tl.load(MASK + b * S + s)
        offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
        d_mask = (offs_d < D) & (keep != 0)
        g = tl.load(GRAD_OUT + b * stride_gb + s * stride_gs + offs_d, mask=d_mask, other=0.0)
        p = tl.load(ARGMAX + b * stride_gb + s * stride_gs + offs_d, mask=d_mask, other=0)
        tl.atomic_add(GRAD_X + b * stride_xb + p * stride_xl + offs_d, g.to(tl.float32), mask=d_mask)


def _launch_fwd(x, span_idx, span_mask, max_w):
    assert x.is_cuda, "span_maxpool_triton expects CUDA tensors"
    B, L, D = x.shape
    S = span_idx.shape[1]
    x = x.contiguous()
    span_idx = span_idx.to(torch.int32).contiguous()
    span_mask = span_mask.to(torch.int32).contiguous()
    out = torch.empty((B, S, D), device=x.device, dtype=x.dtype)
    argmax = torch.empty((B, S, D), device=x.device, dtype=torch.int32)

    grid = lambda meta: (B * S, triton.cdiv(D, meta["BLOCK_D"]))  # noqa: E731
    with torch.cuda.device(x.device.index):
        _span_maxpool_fwd_kernel[grid](
            x,
            span_idx,
            span_mask,
            out,
            argmax,
            L,
            S,
            D,
            x.stride(0),
            x.stride(1),
            span_idx.stride(0),
            out.stride(0),
            out.stride(1),
            MAX_W=max_w,
        )
    return out, argmax


def _launch_bwd(grad_out, argmax, span_mask, x_shape, x_dtype):
    B, L, D = x_shape
    S = grad_out.shape[1]
    grad_out = grad_out.contiguous()
    grad_x = torch.zeros((B, L, D), device=grad_out.device, dtype=torch.float32)
    block_d = 128
    # one program per (span, D-tile); enough programs to fill every SM at least twice
    sm_count = torch.cuda.get_device_properties(grad_out.device).multi_processor_count
    if B * S * triton.cdiv(D, block_d) < 2 * sm_count:
        block_d = 64
    grid = (B * S, triton.cdiv(D, block_d))
    _span_maxpool_bwd_kernel[grid](
        grad_out,
        argmax,
        span_mask.to(torch.int32).contiguous(),
        grad_x,
        S,
        D,
        grad_out.stride(0),
        grad_out.stride(1),
        grad_x.stride(0),
        grad_x.stride(1),
        BLOCK_D=block_d,
        num_warps=4,
    )
    return grad_x.to(x_dtype)


class SpanMaxPoolFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, span_idx, span_mask, max_w):
        out, argmax = _launch_fwd(x, span_idx, span_mask, max_w)
        ctx.save_for_backward(argmax, span_mask)
        ctx.x_shape = x.shape
        ctx.x_dtype = x.dtype
        return out

    @staticmethod
    def backward(ctx, grad_out):
        argmax, span_mask = ctx.saved_tensors
        grad_x = _launch_bwd(grad_out, argmax, span_mask, ctx.x_shape, ctx.x_dtype)
        return grad_x, None, None, None


class SpanMaxPool(nn.Module):
    def __init__(self, hidden_size: int, max_width: int, use_triton: Optional[bool] = None, dropout: float = 0.4):
        super().__init__()
        self.max_width = max_width
        self.out_project = nn.Sequential(
            nn.Linear(hidden_size, hidden_size * 4),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_size * 4, hidden_size),
        )
        if use_triton is None:
            use_triton = HAS_TRITON and torch.cuda.is_available()
        if use_triton:
            assert HAS_TRITON and torch.cuda.is_available(), "span_kernels=triton needs triton and a CUDA device"
        self.use_triton = use_triton

    def forward(self, h: torch.Tensor, span_idx: torch.Tensor, span_mask: torch.Tensor) -> torch.Tensor:
        B, L, D = h.shape
        if self.use_triton:
            pooled = SpanMaxPoolFunction.apply(h, span_idx, span_mask, self.max_width)
        else:
            pooled = span_maxpool_reference(h, span_idx, span_mask)
        out = self.out_project(pooled)
        K = span_idx.shape[1] // L if L > 0 else 0
        return out.view(B, L, max(K, 1), D) if K * L == span_idx.shape[1] else out
