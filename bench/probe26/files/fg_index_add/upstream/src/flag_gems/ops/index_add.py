import logging

import torch
import triton
import triton.language as tl

from ..utils import dim_compress, libentry

logger = logging.getLogger(__name__)


def cfggen():
    block_m = [1, 2, 4, 8]
    configs = [
        triton.Config({"BLOCK_M": m, "BLOCK_N": 1024}, num_warps=4, num_stages=2)
        for m in block_m
    ]
    return configs


@libentry()
@triton.autotune(configs=cfggen(), key=["M", "N"], reset_to_zero=["out"])
@triton.jit
def index_add_kernel(
    index,
    src,
    out,
    N,
    inp_len,
    M,
    alpha,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_x = tl.program_id(axis=0)
    pid_y = tl.program_id(axis=1)
    rows_offset = pid_x * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols_offset = pid_y * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    rows_mask = rows_offset < M
    cols_mask = cols_offset < N
    block_mask = rows_mask & cols_mask

    cur_indices = tl.load(index + cols_offset, mask=cols_mask, other=0)
    inp_off = rows_offset * inp_len + cur_indices
    src_off = rows_offset * N + cols_offset
    cur_src = tl.load(src + src_off, mask=block_mask, other=0.0)
    tl.atomic_add(out + inp_off, cur_src * alpha, mask=block_mask, sem="relaxed")


@triton.jit
def index_add_deterministic_kernel(
    index,
    src,
    out,
    lock,
    N,
    inp_len,
    M,
    alpha,
    BLOCK_N: tl.constexpr,
):
    # one program per source row; serialises colliding writes with a spin lock
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    dst_row = tl.load(index + pid)
    vals = tl.load(src + pid * N + cols, mask=mask, other=0.0)
    lock_ptr = lock + dst_row
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    cur = tl.load(out + dst_row * N + cols, mask=mask, other=0.0, cache_modifier=".cg")
    tl.store(out + dst_row * N + cols, cur + vals * alpha, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def index_add(inp, dim, index, src, alpha=1):
    logger.debug("GEMS INDEX ADD")
    assert ((0 <= index) * (index < inp.size(dim))).equal(
        torch.ones(tuple(index.shape), dtype=torch.bool, device=inp.device)
    ), "0 <= index < self.size(dim)"
    assert dim >= -inp.ndim and dim < inp.ndim, "Invalid dim"
    assert index.numel() == src.size(dim), "The dimth dimension of source must have the same size as the length of index"

    out = inp.clone()
    dim %= inp.ndim
    src_shape = list(src.shape)
    inp = dim_compress(inp, dim)
    src = dim_compress(src, dim)
    out = dim_compress(out, dim)
    N = src_shape[dim]
    M = src.numel() // N
    inp_len = inp.size(-1)

    if torch.are_deterministic_algorithms_enabled() and dim == 0 and src.dim() == 2:
        lock = torch.zeros(inp.size(0), dtype=torch.int32, device=inp.device)
        BLOCK_N = triton.next_power_of_2(src.size(1))
        with torch.cuda.device(inp.device):
            index_add_deterministic_kernel[(src.size(0),)](
                index, src, out, lock, src.size(1), inp_len, M, alpha,
                BLOCK_N=BLOCK_N, num_warps=8,
            )
        return out

    grid = lambda meta: (
        triton.cdiv(M, meta["BLOCK_M"]),
        triton.cdiv(N, meta["BLOCK_N"]),
    )
    with torch.cuda.device(inp.device.index):
        index_add_kernel[grid](index, src, out, N, inp_len, M, alpha)
    if dim != out.ndim - 1:
        order = [i for i in range(out.ndim - 1)]
        order.insert(dim, out.ndim - 1)
        return out.permute(order).contiguous()
    return out
