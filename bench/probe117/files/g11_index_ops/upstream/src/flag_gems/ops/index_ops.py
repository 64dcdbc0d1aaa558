"""gather / scatter / index_select.

gather and scatter support arbitrary (non-contiguous) index and source layouts by
flattening them into a 1-D task space and recomputing the N-d coordinates inside the
kernel, so the heuristics below only decide the tile size and the number of CTAs.
"""
import logging

import torch
import triton
import triton.language as tl

from ..utils import libentry
from ..utils import triton_lang_extension as tle
from ..utils.shape_utils import restride_dim

logger = logging.getLogger(__name__)

# CUDA limits gridDim.y/z to 65535, so we keep all index kernels on a 1-D grid.
MAX_GRID_X = 2**31 - 1


def _tile_for(numel: int) -> int:
    if numel <= 4096:
        return 256
    if numel <= 1 << 20:
        return 1024
    return 4096


def _warps_for(tile: int) -> int:
    return 4 if tile <= 1024 else 8


# ------------------------------------------------------------------------- gather
@libentry()
@triton.jit
def gather_kernel(
    inp,
    index,
    out,
    inp_stride_ptr,
    idx_shape_ptr,
    idx_stride_ptr,
    numel,
    dim,
    stride_dim,
    NDIM: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tle.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < numel

    inp_offsets = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    idx_offsets = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    rem = offsets
    for d in tl.static_range(NDIM - 1, -1, -1):
        size_d = tl.load(idx_shape_ptr + d)
        coord = rem % size_d
        rem = rem // size_d
        idx_offsets += coord * tl.load(idx_stride_ptr + d)
        if d != dim:
            inp_offsets += coord * tl.load(inp_stride_ptr + d)

    cur_index = tl.load(index + idx_offsets, mask=mask, other=0)
    inp_offsets += cur_index * stride_dim
    cur_inp = tl.load(inp + inp_offsets, mask=mask, other=0)
    tl.store(out + offsets, cur_inp, mask=mask)


def gather(inp, dim, index, out=None, sparse_grad=False):
    logger.debug("GEMS GATHER")
    dim = dim % inp.ndim
    if out is None:
        out = torch.empty_like(index, dtype=inp.dtype, device=inp.device)
    numel = index.numel()
    if numel == 0:
        return out
    inp_strided = restride_dim(inp, dim, index.shape)
    inp_stride = torch.tensor(inp_strided.stride(), dtype=torch.int64, device=inp.device)
    idx_shape = torch.tensor(index.shape, dtype=torch.int64, device=inp.device)
    idx_stride = torch.tensor(index.stride(), dtype=torch.int64, device=inp.device)

    BLOCK_SIZE = _tile_for(numel)
    grid = (min(triton.cdiv(numel, BLOCK_SIZE), MAX_GRID_X),)
    with torch.cuda.device(inp.device):
        gather_kernel[grid](
            inp_strided,
            index,
            out,
            inp_stride,
            idx_shape,
            idx_stride,
            numel,
            dim,
            inp.stride(dim),
            NDIM=index.ndim,
            BLOCK_SIZE=BLOCK_SIZE,
            num_warps=_warps_for(BLOCK_SIZE),
        )
    return out


# ------------------------------------------------------------------------- scatter
@libentry()
@triton.jit
def scatter_kernel(
    src,
    index,
    out,
    out_stride_ptr,
    idx_shape_ptr,
    idx_stride_ptr,
    src_stride_ptr,
    numel,
    dim,
    stride_dim,
    NDIM: tl.constexpr,
    REDUCE: tl.constexpr,  # 0: none, 1: add, 2: multiply
    BLOCK_SIZE: tl.constexpr,
):
    pid = tle.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < numel

    out_offsets = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    idx_offsets = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    src_offsets = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    rem = offsets
    for d in tl.static_range(NDIM - 1, -1, -1):
        size_d = tl.load(idx_shape_ptr + d)
        coord = rem % size_d
        rem = rem // size_d
        idx_offsets += coord * tl.load(idx_stride_ptr + d)
        src_offsets += coord * tl.load(src_stride_ptr + d)
        if d != dim:
            out_offsets += coord * tl.load(out_stride_ptr + d)

    cur_index = tl.load(index + idx_offsets, mask=mask, other=0)
    out_offsets += cur_index * stride_dim
    cur_src = tl.load(src + src_offsets, mask=mask, other=0)
    if REDUCE == 1:
        tl.atomic_add(out + out_offsets, cur_src, mask=mask, sem="relaxed")
    elif REDUCE == 2:
        # no native atomic_mul: emulate with a CAS loop on the 32-bit word
        old = tl.load(out + out_offsets, mask=mask, other=1)
        done = ~mask
        while not tl.min(done.to(tl.int32), 0):
            new = old * cur_src
            prev = tl.atomic_cas(out + out_offsets, old, new)
            done = done | (prev == old)
            old = prev
    else:
        tl.store(out + out_offsets, cur_src, mask=mask)


def _scatter_impl(inp, dim, index, src, reduce):
    dim = dim % inp.ndim
    out = inp.clone()
    numel = index.numel()
    if numel == 0:
        return out
    out_stride = torch.tensor(out.stride(), dtype=torch.int64, device=out.device)
    idx_shape = torch.tensor(index.shape, dtype=torch.int64, device=out.device)
    idx_stride = torch.tensor(index.stride(), dtype=torch.int64, device=out.device)
    src_stride = torch.tensor(src.stride(), dtype=torch.int64, device=out.device)
    reduce_code = {None: 0, "add": 1, "sum": 1, "multiply": 2, "prod": 2}[reduce]
    BLOCK_SIZE = _tile_for(numel)
    grid = (min(triton.cdiv(numel, BLOCK_SIZE), MAX_GRID_X),)
    with torch.cuda.device(out.device):
        scatter_kernel[grid](
            src,
            index,
            out,
            out_stride,
            idx_shape,
            idx_stride,
            src_stride,
            numel,
            dim,
            out.stride(dim),
            NDIM=index.ndim,
            REDUCE=reduce_code,
            BLOCK_SIZE=BLOCK_SIZE,
            num_warps=_warps_for(BLOCK_SIZE),
        )
    return out


def scatter(inp, dim, index, src, reduce=None):
    logger.debug("GEMS SCATTER")
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=inp.dtype, device=inp.device)
    return _scatter_impl(inp, dim, index, src, reduce)


def scatter_(inp, dim, index, src, reduce=None):
    logger.debug("GEMS SCATTER_")
    out = scatter(inp, dim, index, src, reduce)
    inp.copy_(out)
    return inp


# ------------------------------------------------------------------------- index_select
@libentry()
@triton.heuristics(
    values={
        "BLOCK_M": lambda args: min(4, triton.next_power_of_2(args["M"])),
        "BLOCK_N": lambda args: min(2048, triton.next_power_of_2(args["N"])),
    }
)
@triton.jit
def index_select_kernel(
    inp, out, M, N, index, index_len, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_x = tle.program_id(axis=0)
    pid_y = tle.program_id(axis=1)
    rows_offsets = pid_x * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    rows_mask = rows_offsets < M
    cols_offsets = pid_y * BLOCK_N + tl.arange(0, BLOCK_N)
    cols_mask = cols_offsets < index_len

    out_mask = rows_mask and cols_mask

    indices = tl.load(index + cols_offsets, mask=cols_mask, other=0)
    inp_off = rows_offsets * N + indices[None, :]
    out_off = rows_offsets * index_len + cols_offsets[None, :]

    selected = tl.load(inp + inp_off, mask=rows_mask, other=0.0)
    tl.store(out + out_off, selected, mask=out_mask)


def index_select(inp, dim, index):
    logger.debug("GEMS INDEX SELECT")
    assert dim >= -inp.ndim and dim < inp.ndim, "Invalid dim"
    assert index.ndim <= 1, "Index should have dimension 1 or 0"
    assert ((i >= 0 and i < inp.size(dim)) for i in index), "Index out of range"

    if index.ndim == 0:
        index = index.unsqueeze(0)
    dim = dim % inp.ndim
    inp_shape = list(inp.shape)
    index_len = index.numel()

    # with dim_compress
    inp = inp.movedim(dim, -1).contiguous()
    N = inp_shape[dim]
    M = inp.numel() // N
    out_shape = list(inp.shape)
    out_shape[-1] = index_len
    out = torch.empty(out_shape, dtype=inp.dtype, device=inp.device)

    grid = lambda meta: (
        triton.cdiv(M, meta["BLOCK_M"]),
        triton.cdiv(index_len, meta["BLOCK_N"]),
    )
    with torch.cuda.device(index.device):
        index_select_kernel[grid](inp, out, M, N, index, index_len)
    if dim != out.ndim - 1:
        order = [i for i in range(out.ndim - 1)]
        order.insert(dim, out.ndim - 1)
        return out.permute(order).contiguous()
    else:
        return out
