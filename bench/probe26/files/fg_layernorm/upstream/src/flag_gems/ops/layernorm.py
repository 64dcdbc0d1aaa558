import logging
import math

import torch
import triton
import triton.language as tl

from ..utils import libentry
from ..utils.type_utils import get_accumulator_dtype

logger = logging.getLogger(__name__)


def cfggen():
    block_m = [1, 2, 4]
    block_n = [1024, 2048, 4096]
    warps = [4, 8, 16]
    configs = [
        triton.Config({"BLOCK_ROW_SIZE": m, "BLOCK_COL_SIZE": n}, num_warps=w)
        for m in block_m
        for n in block_n
        for w in warps
    ]
    return configs


@libentry()
@triton.jit(do_not_specialize=["eps"])
def layer_norm_persistent_kernel(
    in_ptr,
    out_ptr,
    weight_ptr,
    bias_ptr,
    out_mean_ptr,
    out_rstd_ptr,
    M,
    N,
    eps,
    TILE_N: tl.constexpr,
):
    pid = tl.program_id(0)
    n_offsets = tl.arange(0, TILE_N)
    mask = n_offsets < N
    x = tl.load(in_ptr + pid * N + n_offsets, mask, other=0.0).to(tl.float32)
    m = tl.sum(x) / N
    d = x - m
    s = tl.where(mask, d * d, 0)
    sum_square = tl.sum(s)
    var = sum_square / N
    rstd = tl.math.rsqrt(var + eps)
    tl.store(out_mean_ptr + pid, m)
    tl.store(out_rstd_ptr + pid, rstd)
    if weight_ptr is None:
        w = 1
    else:
        w = tl.load(weight_ptr + n_offsets, mask=mask)
    if bias_ptr is None:
        b = 0
    else:
        b = tl.load(bias_ptr + n_offsets, mask=mask)
    out = (x - m) * rstd * w + b
    tl.store(out_ptr + pid * N + n_offsets, out, mask=mask)


@libentry()
@triton.autotune(configs=cfggen(), key=["M", "N"])
@triton.jit(do_not_specialize=["eps"])
def layer_norm_loop_kernel(
    in_ptr,
    out_ptr,
    weight_ptr,
    bias_ptr,
    out_mean_ptr,
    out_rstd_ptr,
    M,
    N,
    eps,
    BLOCK_ROW_SIZE: tl.constexpr,
    BLOCK_COL_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    row = pid * BLOCK_ROW_SIZE + tl.arange(0, BLOCK_ROW_SIZE)[:, None]
    row_mask = row < M
    in_ptr += row * N
    out_ptr += row * N
    _sum = tl.zeros([BLOCK_ROW_SIZE, BLOCK_COL_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_COL_SIZE):
        cols = off + tl.arange(0, BLOCK_COL_SIZE)[None, :]
        a = tl.load(in_ptr + cols, row_mask & (cols < N), other=0.0).to(tl.float32)
        _sum += a
    mean = tl.sum(_sum, axis=1) / N
    _var = tl.zeros([BLOCK_ROW_SIZE, BLOCK_COL_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_COL_SIZE):
        cols = off + tl.arange(0, BLOCK_COL_SIZE)[None, :]
        a = tl.load(in_ptr + cols, row_mask & (cols < N), other=0.0).to(tl.float32)
        a = tl.where(row_mask & (cols < N), a - mean[:, None], 0.0)
        _var += a * a
    var = tl.sum(_var, axis=1) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(out_mean_ptr + row, mean[:, None], row_mask)
    tl.store(out_rstd_ptr + row, rstd[:, None], row_mask)
    for off in range(0, N, BLOCK_COL_SIZE):
        cols = off + tl.arange(0, BLOCK_COL_SIZE)[None, :]
        col_mask = cols < N
        w = tl.load(weight_ptr + cols, col_mask)
        b = tl.load(bias_ptr + cols, col_mask)
        x = tl.load(in_ptr + cols, row_mask & col_mask, other=0.0).to(tl.float32)
        out = (x - mean[:, None]) * rstd[:, None] * w + b
        tl.store(out_ptr + cols, out, row_mask & col_mask)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    logger.debug("GEMS LAYERNORM FORWARD")
    N = math.prod(normalized_shape)
    M = input.numel() // N
    input = input.contiguous()
    weight = None if weight is None else weight.contiguous()
    bias = None if bias is None else bias.contiguous()
    y = torch.empty_like(input)
    acc_type = get_accumulator_dtype(input.dtype)
    mean = torch.empty(M, dtype=acc_type, device=input.device)
    rstd = torch.empty(M, dtype=acc_type, device=input.device)
    with torch.cuda.device(input.device):
        if N <= 65536:
            TILE_N = triton.next_power_of_2(N)
            num_warps = 8 if TILE_N <= 4096 else 16
            layer_norm_persistent_kernel[(M,)](
                input, y, weight, bias, mean, rstd, M, N, eps,
                TILE_N=TILE_N,
                num_warps=num_warps,
            )
        else:
            grid = lambda META: (triton.cdiv(M, META["BLOCK_ROW_SIZE"]),)
            layer_norm_loop_kernel[grid](input, y, weight, bias, mean, rstd, M, N, eps)
    return y, mean, rstd
