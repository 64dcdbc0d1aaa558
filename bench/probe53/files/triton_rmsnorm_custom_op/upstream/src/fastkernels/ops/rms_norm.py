"""RMSNorm as a Triton kernel registered through torch.library, so torch.compile(fullgraph=True)
can trace through it (opaque custom op + fake impl) instead of graph-breaking on the autograd.Function.

Casting modes follow the HF conventions:
  llama: compute in fp32, cast the normalized x back before multiplying by weight
  gemma: everything in fp32, weight offset of 1.0
  none:  compute in the input dtype
"""
import math
from typing import Tuple

import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    # typical import path with dispatch available on triton>=3.0
    from triton.language.extra.libdevice import rsqrt
except ModuleNotFoundError:
    # for older triton versions
    from triton.language.math import rsqrt

_CASTING_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)
_CASTING_MODE_GEMMA: tl.constexpr = tl.constexpr(1)
_STR_TO_CASTING_MODE = {"none": -1, "llama": 0, "gemma": 1}


def is_hip() -> bool:
    return torch.version.hip is not None


def calculate_settings(n: int) -> Tuple[int, int]:
    # reference: https://github.com/unslothai/unsloth/blob/fd753fed99ed5f10ef8a9b7139588d9de9ddecfb/unsloth/kernels/utils.py#L43
    MAX_FUSED_SIZE = 65536
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize = {MAX_FUSED_SIZE}."
        )

    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32 if not is_hip() else 16
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr, Y_row_stride,
    X_ptr, X_row_stride,
    W_ptr, W_row_stride,
    RSTD_ptr, RSTD_row_stride,
    n_cols, eps, offset,
    casting_mode: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    RSTD_ptr += row_idx * RSTD_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    # On Llama, only rstd is computed on fp32
    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(tl.float32)

    # Gemma computes everything on fp32, and then casts back the output to the original dtype
    if casting_mode == _CASTING_MODE_GEMMA:
        W_row = W_row.to(tl.float32)
        X_row = X_row.to(tl.float32)

    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = rsqrt(mean_square + eps)

    # We can save time by caching rms with minimal memory overhead
    # because rms is much smaller compared to X_row, as rms is for each row.
    tl.store(RSTD_ptr, rstd)

    X_row = X_row * rstd

    # On Llama, the multiplication with the weight is done on the original dtype
    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(X_row_dtype)

    Y_row = X_row * (offset + W_row)

    if casting_mode == _CASTING_MODE_GEMMA:
        Y_row = Y_row.to(X_row_dtype)

    tl.store(Y_ptr + col_offsets, Y_row, mask=mask)


@triton.jit
def _rms_norm_backward_kernel(
    dY_ptr, dY_row_stride,
    dX_ptr, dX_row_stride,
    X_ptr, X_row_stride,
    X_dtype: tl.constexpr,
    W_ptr, W_row_stride,
    RSTD_ptr, RSTD_row_stride,
    dW_ptr, dW_row_stride,
    n_rows, n_cols, offset,
    rows_per_program: tl.constexpr,
    casting_mode: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    row_end = min((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)

    dY_ptr += row_start * dY_row_stride
    dX_ptr += row_start * dX_row_stride
    X_ptr += row_start * X_row_stride
    RSTD_ptr += row_start

    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0)
    W_row = W_row + offset

    for _ in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + col_offsets, mask=mask, other=0.0)
        X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0.0)
        rstd_row = tl.load(RSTD_ptr)
        X_row = X_row.to(tl.float32)

        if casting_mode == _CASTING_MODE_LLAMA:
            m = (dY_row * W_row).to(tl.float32)
        elif casting_mode == _CASTING_MODE_GEMMA:
            dY_row = dY_row.to(tl.float32)
            m = dY_row * W_row
        else:
            m = dY_row * W_row

        dX_row = rstd_row * m
        dX_row += (rstd_row) * (-(1 / n_cols) * rstd_row * rstd_row * tl.sum(m * X_row, axis=0) * X_row)

        if casting_mode == _CASTING_MODE_LLAMA:
            dW_row += dY_row * (X_row * rstd_row).to(X_dtype)
        else:
            dW_row += dY_row * (X_row * rstd_row)

        tl.store(dX_ptr + col_offsets, dX_row.to(X_dtype), mask=mask)

        dY_ptr += dY_row_stride
        dX_ptr += dX_row_stride
        X_ptr += X_row_stride
        RSTD_ptr += RSTD_row_stride

    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


@torch.library.custom_op("fastkernels::rms_norm_fwd", mutates_args=(), device_types="cuda")
def rms_norm_fwd(X: torch.Tensor, W: torch.Tensor, eps: float, offset: float, casting_mode: int) -> Tuple[torch.Tensor, torch.Tensor]:
    shape = X.shape
    dim = shape[-1]
    X = X.view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)

    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    # RSTD is to cache rstd for each row
    # RSTD is always computed/stored in fp32 if we are using Llama or Gemma casting mode
    rstd_dtype = torch.float32 if casting_mode in (0, 1) else X.dtype
    RSTD = torch.empty(n_rows, dtype=rstd_dtype, device=X.device)

    # Check constraints.
    assert X.shape[1] == W.shape[0], "Incompatible hidden size dimension between tensor1.shape[1] and tensor2.shape[0]"

    with torch.cuda.device(X.device):
        _rms_norm_forward_kernel[(n_rows,)](
            Y, Y.stride(0),
            X, X.stride(0),
            W, W.stride(0),
            RSTD, RSTD.stride(0),
            n_cols, eps, offset, casting_mode,
            BLOCK_SIZE=BLOCK_SIZE,
            num_warps=num_warps,
        )
    return Y.view(*shape), RSTD


@rms_norm_fwd.register_fake
def _(X, W, eps, offset, casting_mode):
    rstd_dtype = torch.float32 if casting_mode in (0, 1) else X.dtype
    return torch.empty_like(X), X.new_empty(X.numel() // X.shape[-1], dtype=rstd_dtype)


@torch.library.custom_op("fastkernels::rms_norm_bwd", mutates_args=(), device_types="cuda")
def rms_norm_bwd(dY: torch.Tensor, X: torch.Tensor, W: torch.Tensor, RSTD: torch.Tensor, offset: float,
                 casting_mode: int) -> Tuple[torch.Tensor, torch.Tensor]:
    shape = dY.shape
    dim = shape[-1]
    dY = dY.view(-1, dim)
    X = X.view(-1, dim)
    n_rows, n_cols = dY.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)

    # one partial dW row per SM, reduced on the host side
    sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count
    _dW = torch.empty((sm_count, n_cols), dtype=torch.float32, device=W.device)
    dX = torch.empty_like(dY)

    rows_per_program = math.ceil(n_rows / sm_count)
    grid = (sm_count,)
    with torch.cuda.device(dY.device):
        _rms_norm_backward_kernel[grid](
            dY, dY.stride(0),
            dX, dX.stride(0),
            X, X.stride(0),
            torch_to_triton_dtype[X.dtype],
            W, W.stride(0),
            RSTD, RSTD.stride(0),
            _dW, _dW.stride(0),
            n_rows, n_cols, offset,
            rows_per_program,
            casting_mode,
            BLOCK_SIZE=BLOCK_SIZE,
            num_warps=num_warps,
        )
    dX = dX.view(*shape)
    dW = _dW.sum(dim=0).to(W.dtype)
    return dX, dW


@rms_norm_bwd.register_fake
def _(dY, X, W, RSTD, offset, casting_mode):
    return torch.empty_like(dY), torch.empty_like(W)


torch_to_triton_dtype = {
    torch.float32: tl.float32,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
}


def _setup_context(ctx, inputs, output):
    X, W, eps, offset, casting_mode = inputs
    _, RSTD = output
    ctx.offset = offset
    ctx.casting_mode = casting_mode
    ctx.save_for_backward(X, W, RSTD)


def _backward(ctx, dY, dRSTD):
    X, W, RSTD = ctx.saved_tensors
    dX, dW = rms_norm_bwd(dY.contiguous(), X, W, RSTD, ctx.offset, ctx.casting_mode)
    return dX, dW, None, None, None


rms_norm_fwd.register_autograd(_backward, setup_context=_setup_context)


class FastRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6, offset=0.0, casting_mode="llama", init_fn="ones"):
        super().__init__()
        assert init_fn in ["ones", "zeros"], f"init_fn must be either 'ones' or 'zeros', got {init_fn}"
        self.weight = nn.Parameter(torch.ones(hidden_size) if init_fn == "ones" else torch.zeros(hidden_size))
        self.variance_epsilon, self.offset, self.casting_mode = eps, offset, casting_mode

    def forward(self, hidden_states):
        y, _ = rms_norm_fwd(
            hidden_states.contiguous(), self.weight, self.variance_epsilon, self.offset,
            _STR_TO_CASTING_MODE[self.casting_mode],
        )
        return y

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}, offset={self.offset}, casting_mode={self.casting_mode}"
