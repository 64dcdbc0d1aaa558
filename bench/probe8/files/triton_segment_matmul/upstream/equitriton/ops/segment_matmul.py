"""Segment matmul: out[ptr[i]:ptr[i+1]] = x[ptr[i]:ptr[i+1]] @ W[i].

Used by heterogeneous GNN / equivariant layers where every node (or edge) type has its own
weight matrix. The Triton kernel is persistent: one program per SM walks over all
(segment, row-tile, col-tile) work items, which keeps tiny segments from wasting launches.
"""
import math
from typing import Optional, Tuple

import torch

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover
    HAS_TRITON = False


def segment_matmul_reference(x: torch.Tensor, ptr: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    out = x.new_empty(x.size(0), weight.size(-1))
    bounds = ptr.tolist()
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        if hi > lo:
            out[lo:hi] = x[lo:hi] @ weight[i]
    return out


if HAS_TRITON:

    @triton.autotune(
        configs=[
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=5),
            triton.Config({"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=2, num_stages=5),
        ],
        key=["N", "K", "AVG_ROWS"],
    )
    @triton.jit
    def _segment_matmul_kernel(
        x_ptr, w_ptr, out_ptr, seg_ptr, tile_offsets_ptr,
        num_segments, total_tiles, N, K, AVG_ROWS,
        stride_xm, stride_xk, stride_ws, stride_wk, stride_wn, stride_om, stride_on,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
        ALLOW_TF32: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
    ):
        pid = tl.program_id(0)
        tiles_n = tl.cdiv(N, BLOCK_N)
        for work in range(pid, total_tiles, NUM_PROGRAMS):
            # find the segment owning this work item (linear scan; segments are few)
            seg = 0
            for s in range(0, num_segments):
                start_tile = tl.load(tile_offsets_ptr + s)
                seg = tl.where(work >= start_tile, s, seg)
            local = work - tl.load(tile_offsets_ptr + seg)
            tile_m = local // tiles_n
            tile_n = local % tiles_n
            row_lo = tl.load(seg_ptr + seg)
            row_hi = tl.load(seg_ptr + seg + 1)
            offs_m = row_lo + tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                a_mask = (offs_m[:, None] < row_hi) & ((k0 + offs_k)[None, :] < K)
                b_mask = ((k0 + offs_k)[:, None] < K) & (offs_n[None, :] < N)
                a = tl.load(x_ptr + offs_m[:, None] * stride_xm + (k0 + offs_k)[None, :] * stride_xk,
                            mask=a_mask, other=0.0)
                b = tl.load(w_ptr + seg * stride_ws + (k0 + offs_k)[:, None] * stride_wk
                            + offs_n[None, :] * stride_wn, mask=b_mask, other=0.0)
                acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)
            o_mask = (offs_m[:, None] < row_hi) & (offs_n[None, :] < N)
            tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
                     acc.to(out_ptr.dtype.element_ty), mask=o_mask)


_NUM_SMS = {}


def _num_programs(device: torch.device) -> int:
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _NUM_SMS:
        _NUM_SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _NUM_SMS[idx]


def _tile_offsets(ptr: torch.Tensor, block_m: int, n_tiles_n: int) -> Tuple[torch.Tensor, int]:
    rows = ptr[1:] - ptr[:-1]
    tiles = (rows + block_m - 1) // block_m * n_tiles_n
    offsets = torch.zeros_like(ptr)
    offsets[1:] = torch.cumsum(tiles, 0)
    return offsets[:-1].contiguous(), int(offsets[-1])


def segment_matmul_triton(x: torch.Tensor, ptr: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2 and weight.dim() == 3 and ptr.dim() == 1
    M, K = x.shape
    S, K2, N = weight.shape
    assert K == K2 and ptr.numel() == S + 1
    out = torch.empty(M, N, device=x.device, dtype=x.dtype)
    # tile offsets are computed for the smallest BLOCK_M so any config covers every row
    tile_offsets, total_tiles = _tile_offsets(ptr, 32, math.ceil(N / 32))
    nprog = min(_num_programs(x.device), max(total_tiles, 1))
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32 and x.dtype == torch.float32
    with torch.cuda.device(x.device):
        _segment_matmul_kernel[(nprog,)](
            x, weight, out, ptr, tile_offsets,
            S, total_tiles, N, K, max(M // max(S, 1), 1),
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), weight.stride(2),
            out.stride(0), out.stride(1),
            ALLOW_TF32=allow_tf32, NUM_PROGRAMS=nprog,
        )
    return out


class SegmentMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ptr, weight):
        ctx.save_for_backward(x, ptr, weight)
        if HAS_TRITON and x.device.type != "cpu":
            return segment_matmul_triton(x, ptr, weight)
        return segment_matmul_reference(x, ptr, weight)

    @staticmethod
    def backward(ctx, grad_out):
        x, ptr, weight = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            wt = weight.transpose(1, 2).contiguous()
            if HAS_TRITON and grad_out.device.type != "cpu":
                grad_x = segment_matmul_triton(grad_out.contiguous(), ptr, wt)
            else:
                grad_x = segment_matmul_reference(grad_out, ptr, wt)
        if ctx.needs_input_grad[2]:
            grad_w = torch.zeros_like(weight)
            bounds = ptr.tolist()
            for i in range(len(bounds) - 1):
                lo, hi = bounds[i], bounds[i + 1]
                if hi > lo:
                    grad_w[i] = x[lo:hi].t() @ grad_out[lo:hi]
        return grad_x, None, grad_w


def segment_matmul(x: torch.Tensor, ptr: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return SegmentMatmul.apply(x, ptr, weight)


def benchmark(num_types: int = 16, rows: int = 20000, k: int = 128, n: int = 128, iters: int = 50):
    dev = torch.device("cuda")
    counts = torch.randint(1, 2 * rows // num_types, (num_types,))
    ptr = torch.zeros(num_types + 1, dtype=torch.long)
    ptr[1:] = torch.cumsum(counts, 0)
    x = torch.randn(int(ptr[-1]), k, device=dev, dtype=torch.float16)
    w = torch.randn(num_types, k, n, device=dev, dtype=torch.float16)
    ptr = ptr.to(dev)
    for fn in (segment_matmul_reference, segment_matmul_triton):
        fn(x, ptr, w)
        torch.cuda.synchronize()
        import time

        t0 = time.perf_counter()
        for _ in range(iters):
            fn(x, ptr, w)
        torch.cuda.synchronize()  # wait for the timed launches
        dt = (time.perf_counter() - t0) / iters
        flops = 2 * x.shape[0] * k * n
        print(f"{fn.__name__:28s} {dt * 1e3:7.3f} ms  {flops / dt / 1e12:6.2f} TFLOP/s")


if __name__ == "__main__":
    benchmark()
