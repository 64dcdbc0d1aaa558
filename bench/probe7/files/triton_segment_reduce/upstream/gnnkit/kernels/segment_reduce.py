"""CSR segment reductions for message passing (sum / mean / max over the incoming edges of each node).

Triton kernels, registered as torch custom ops so they compose with torch.compile and autograd:

    out = torch.ops.gnnkit.segment_csr(src, indptr, "sum")

`src` is [E, F] edge messages sorted by destination, `indptr` is [N + 1] int64.
A persistent grid with one program per SM walks the segments; features are processed in BLOCK_F chunks.
"""
import functools
import math
from typing import Tuple

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

_REDUCE = {"sum": 0, "mean": 1, "max": 2}


@functools.lru_cache(maxsize=None)
def _num_sms(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def _autotune_configs():
    configs = []
    for block_f in (32, 64, 128, 256):
        for num_warps in (2, 4, 8):
            for num_stages in (1, 2, 3):
                configs.append(triton.Config({"BLOCK_F": block_f}, num_warps=num_warps, num_stages=num_stages))
    return configs


@triton.autotune(configs=_autotune_configs(), key=["F", "REDUCE"])
@triton.jit
def _segment_csr_fwd_kernel(
    src_ptr, indptr_ptr, out_ptr, arg_ptr,
    N, F,
    stride_src, stride_out,
    REDUCE: tl.constexpr, BLOCK_F: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
):
    pid = tl.program_id(0)
    num_fb = tl.cdiv(F, BLOCK_F)
    total = N * num_fb
    for tile in range(pid, total, NUM_PROGRAMS):
        node = tile // num_fb
        fb = tile % num_fb
        offs_f = fb * BLOCK_F + tl.arange(0, BLOCK_F)
        mask_f = offs_f < F
        start = tl.load(indptr_ptr + node)
        end = tl.load(indptr_ptr + node + 1)
        if REDUCE == 2:
            acc = tl.full([BLOCK_F], float("-inf"), tl.float32)
            arg = tl.full([BLOCK_F], -1, tl.int64)
        else:
            acc = tl.zeros([BLOCK_F], tl.float32)
        for e in range(start, end):
            x = tl.load(src_ptr + e * stride_src + offs_f, mask=mask_f, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            if REDUCE == 2:
                better = x > acc
                acc = tl.where(better, x, acc)
                arg = tl.where(better, e, arg)
            else:
                acc += x
        deg = end - start
        if REDUCE == 1:
            acc = acc / tl.maximum(deg, 1).to(tl.float32)
        if REDUCE == 2:
            acc = tl.where(deg > 0, acc, 0.0)
            tl.store(arg_ptr + node * stride_out + offs_f, arg, mask=mask_f)
        tl.store(out_ptr + node * stride_out + offs_f, acc.to(out_ptr.dtype.element_ty), mask=mask_f)


@triton.jit
def _softmax_csr_kernel(src_ptr, indptr_ptr, out_ptr, F, stride, BLOCK_F: tl.constexpr):
    """Edge softmax within each destination segment (attention-style GNN layers)."""
    node = tl.program_id(0)
    fb = tl.program_id(1)
    offs_f = fb * BLOCK_F + tl.arange(0, BLOCK_F)
    mask_f = offs_f < F
    start = tl.load(indptr_ptr + node)
    end = tl.load(indptr_ptr + node + 1)
    m = tl.full([BLOCK_F], float("-inf"), tl.float32)
    for e in range(start, end):
        x = tl.load(src_ptr + e * stride + offs_f, mask=mask_f, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    s = tl.zeros([BLOCK_F], tl.float32)
    for e in range(start, end):
        x = tl.load(src_ptr + e * stride + offs_f, mask=mask_f, other=float("-inf")).to(tl.float32)
        s += libdevice.exp(x - m)
    for e in range(start, end):
        x = tl.load(src_ptr + e * stride + offs_f, mask=mask_f, other=float("-inf")).to(tl.float32)
        y = libdevice.exp(x - m) / s
        tl.store(out_ptr + e * stride + offs_f, y.to(out_ptr.dtype.element_ty), mask=mask_f)


@torch.library.custom_op("gnnkit::segment_csr", mutates_args=(), device_types="cuda")
def segment_csr(src: torch.Tensor, indptr: torch.Tensor, reduce: str) -> Tuple[torch.Tensor, torch.Tensor]:
    assert src.dim() == 2 and indptr.dim() == 1
    src = src.contiguous()
    N = indptr.numel() - 1
    E, F = src.shape
    out = torch.empty((N, F), dtype=src.dtype, device=src.device)
    arg = torch.empty((N, F) if reduce == "max" else (0,), dtype=torch.int64, device=src.device)
    num_programs = min(_num_sms(src.device.index) * 4, max(1, N * triton.cdiv(F, 32)))
    _segment_csr_fwd_kernel[(num_programs,)](
        src, indptr, out, arg, N, F, src.stride(0), out.stride(0),
        REDUCE=_REDUCE[reduce], NUM_PROGRAMS=num_programs,
    )
    return out, arg


@segment_csr.register_fake
def _(src, indptr, reduce):
    N = indptr.shape[0] - 1
    out = src.new_empty((N, src.shape[1]))
    arg = src.new_empty((N, src.shape[1]) if reduce == "max" else (0,), dtype=torch.int64)
    return out, arg


def _segment_csr_setup_context(ctx, inputs, output):
    src, indptr, reduce = inputs
    _, arg = output
    ctx.reduce = reduce
    ctx.num_edges = src.shape[0]
    ctx.save_for_backward(indptr, arg)


def _segment_csr_backward(ctx, grad_out, grad_arg):
    indptr, arg = ctx.saved_tensors
    deg = indptr[1:] - indptr[:-1]
    if ctx.reduce == "max":
        grad_src = grad_out.new_zeros((ctx.num_edges + 1, grad_out.shape[1]))
        idx = torch.where(arg < 0, ctx.num_edges, arg)
        grad_src.scatter_(0, idx, grad_out)
        return grad_src[:-1], None, None
    dst = torch.repeat_interleave(torch.arange(deg.numel(), device=deg.device), deg)
    g = grad_out.index_select(0, dst)
    if ctx.reduce == "mean":
        g = g / deg.clamp(min=1).index_select(0, dst).unsqueeze(-1).to(g.dtype)
    return g, None, None


segment_csr.register_autograd(_segment_csr_backward, setup_context=_segment_csr_setup_context)


def edge_softmax_csr(src: torch.Tensor, indptr: torch.Tensor) -> torch.Tensor:
    src = src.contiguous()
    N = indptr.numel() - 1
    F = src.shape[1]
    out = torch.empty_like(src)
    BLOCK_F = min(128, triton.next_power_of_2(F))
    grid = (N, triton.cdiv(F, BLOCK_F))
    _softmax_csr_kernel[grid](src, indptr, out, F, src.stride(0), BLOCK_F=BLOCK_F, num_warps=4)
    return out


def segment_csr_reference(src: torch.Tensor, indptr: torch.Tensor, reduce: str = "sum") -> torch.Tensor:
    """Pure PyTorch reference (used by the tests and for CPU tensors)."""
    deg = indptr[1:] - indptr[:-1]
    dst = torch.repeat_interleave(torch.arange(deg.numel(), device=src.device), deg)
    out = src.new_zeros((deg.numel(), src.shape[1]))
    if reduce == "max":
        out = out.fill_(float("-inf")).index_reduce_(0, dst, src, "amax", include_self=True)
        return torch.where(deg.unsqueeze(-1) > 0, out, torch.zeros_like(out))
    out.index_add_(0, dst, src)
    if reduce == "mean":
        out = out / deg.clamp(min=1).unsqueeze(-1).to(out.dtype)
    return out


def aggregate(messages: torch.Tensor, indptr: torch.Tensor, reduce: str = "sum") -> torch.Tensor:
    if messages.device.type == "cpu":
        return segment_csr_reference(messages, indptr, reduce)
    return torch.ops.gnnkit.segment_csr(messages, indptr, reduce)[0]
