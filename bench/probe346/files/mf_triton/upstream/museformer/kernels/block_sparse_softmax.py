"""
Triton kernels for the block-sparse fine/coarse-grained attention of Museformer.

The attention layout is a (n_heads, n_row_blocks, n_col_blocks) 0/1 tensor. Scores are only
materialised for the non-zero blocks, stored "packed" as (batch, n_nnz_blocks, BLOCK, BLOCK).
This module provides the masked softmax over packed blocks (forward + backward); the two
matmuls (SDD for Q.K^T, DSD for P.V) live in block_sparse_matmul.py and follow the same
lookup-table convention.

Requires triton>=2.0 and an NVIDIA GPU with compute capability >= 7.0.
"""
import math

import torch
import triton
import triton.language as tl


def next_power_of_2(n):
    n -= 1
    n |= n >> 1
    n |= n >> 2
    n |= n >> 4
    n |= n >> 8
    n |= n >> 16
    n += 1
    return n


def num_warps_for(n_cols):
    # one warp handles 32 columns per pass; beyond 2048 columns the register file spills
    if n_cols <= 128:
        return 2
    if n_cols <= 1024:
        return 4
    if n_cols <= 2048:
        return 8
    return 16


def make_row_lut(layout, block):
    """
    Build a per-(head, row-block) lookup table: for every block row, the packed offsets of its
    non-zero blocks, the column-block index of each, and the row width (number of blocks).
    Built on the host once per layout and cached by the caller.
    """
    n_heads, n_rows, n_cols = layout.shape
    nnz_per_row = layout.sum(-1)                      # (H, R)
    max_nnz = int(nnz_per_row.max())
    offsets = torch.cumsum(layout.reshape(-1), 0).reshape(layout.shape) - 1
    lut = torch.full((n_heads, n_rows, max_nnz, 2), -1, dtype=torch.int32)
    for h in range(n_heads):
        for r in range(n_rows):
            cols = torch.nonzero(layout[h, r], as_tuple=False).flatten()
            lut[h, r, :cols.numel(), 0] = offsets[h, r, cols].int()
            lut[h, r, :cols.numel(), 1] = cols.int()
    return lut, nnz_per_row.int(), max_nnz


@triton.jit
def _blocksparse_softmax_fwd(
    X, OUT, LUT, NNZ, KEY_PAD_MASK,
    stride_xz, stride_lut_h, stride_lut_r, stride_mz,
    scale, n_row_blocks,
    BLOCK: tl.constexpr, MAX_NNZ_COLS: tl.constexpr, USE_KP_MASK: tl.constexpr,
):
    pid_row = tl.program_id(0)          # row inside the (head, row-block) tile
    pid_hr = tl.program_id(1)           # head * n_row_blocks + row-block
    pid_z = tl.program_id(2)            # batch
    h = pid_hr // n_row_blocks
    rb = pid_hr % n_row_blocks

    nnz = tl.load(NNZ + pid_hr)
    cols = tl.arange(0, MAX_NNZ_COLS)
    blk = cols // BLOCK
    within = cols % BLOCK
    valid = blk < nnz

    lut_ptr = LUT + h * stride_lut_h + rb * stride_lut_r + blk * 2
    packed_off = tl.load(lut_ptr, mask=valid, other=0)
    col_blk = tl.load(lut_ptr + 1, mask=valid, other=0)

    x_ptrs = X + pid_z * stride_xz + packed_off * BLOCK * BLOCK + pid_row * BLOCK + within
    x = tl.load(x_ptrs, mask=valid, other=-float("inf")).to(tl.float32)
    x = x * scale

    if USE_KP_MASK:
        kp = tl.load(KEY_PAD_MASK + pid_z * stride_mz + col_blk * BLOCK + within, mask=valid, other=1)
        x = tl.where(kp != 0, -float("inf"), x)

    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    y = num / den

    out_ptrs = OUT + pid_z * stride_xz + packed_off * BLOCK * BLOCK + pid_row * BLOCK + within
    tl.store(out_ptrs, y.to(OUT.dtype.element_ty), mask=valid)


@triton.jit
def _blocksparse_softmax_bwd(
    Y, DY, DX, LUT, NNZ,
    stride_xz, stride_lut_h, stride_lut_r,
    scale, n_row_blocks,
    BLOCK: tl.constexpr, MAX_NNZ_COLS: tl.constexpr,
):
    pid_row = tl.program_id(0)
    pid_hr = tl.program_id(1)
    pid_z = tl.program_id(2)
    h = pid_hr // n_row_blocks
    rb = pid_hr % n_row_blocks

    nnz = tl.load(NNZ + pid_hr)
    cols = tl.arange(0, MAX_NNZ_COLS)
    blk = cols // BLOCK
    within = cols % BLOCK
    valid = blk < nnz

    lut_ptr = LUT + h * stride_lut_h + rb * stride_lut_r + blk * 2
    packed_off = tl.load(lut_ptr, mask=valid, other=0)
    off = pid_z * stride_xz + packed_off * BLOCK * BLOCK + pid_row * BLOCK + within

    y = tl.load(Y + off, mask=valid, other=0.).to(tl.float32)
    dy = tl.load(DY + off, mask=valid, other=0.).to(tl.float32)
    dx = y * (dy - tl.sum(y * dy, axis=0)) * scale
    tl.store(DX + off, dx.to(DX.dtype.element_ty), mask=valid)


class _BlockSparseSoftmax(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, scale, lut, nnz, max_nnz, n_row_blocks, block, key_padding_mask):
        assert x.is_cuda, "block-sparse softmax is only implemented for CUDA tensors"
        x = x.contiguous()
        out = torch.empty_like(x)
        n_heads = lut.shape[0]
        max_cols = next_power_of_2(max_nnz * block)
        use_kp = key_padding_mask is not None
        kp = key_padding_mask if use_kp else x.new_zeros(1, dtype=torch.uint8)

        grid = (block, n_heads * n_row_blocks, x.shape[0])
        with torch.cuda.device(x.device):
            _blocksparse_softmax_fwd[grid](
                x, out, lut, nnz, kp,
                x.stride(0), lut.stride(0), lut.stride(1), kp.stride(0) if use_kp else 0,
                scale, n_row_blocks,
                BLOCK=block, MAX_NNZ_COLS=max_cols, USE_KP_MASK=use_kp,
                num_warps=num_warps_for(max_cols),
            )

        ctx.save_for_backward(out, lut, nnz)
        ctx.scale = scale
        ctx.block = block
        ctx.max_cols = max_cols
        ctx.n_row_blocks = n_row_blocks
        return out

    @staticmethod
    def backward(ctx, dy):
        out, lut, nnz = ctx.saved_tensors
        dy = dy.contiguous()
        dx = torch.empty_like(dy)
        grid = (ctx.block, lut.shape[0] * ctx.n_row_blocks, dy.shape[0])
        with torch.cuda.device(dy.device):
            _blocksparse_softmax_bwd[grid](
                out, dy, dx, lut, nnz,
                dy.stride(0), lut.stride(0), lut.stride(1),
                ctx.scale, ctx.n_row_blocks,
                BLOCK=ctx.block, MAX_NNZ_COLS=ctx.max_cols,
                num_warps=num_warps_for(ctx.max_cols), num_stages=1,
            )
        return dx, None, None, None, None, None, None, None


class BlockSparseSoftmax(object):
    """
    Callable wrapper that caches the lookup table per (layout, device).

        softmax = BlockSparseSoftmax(layout, block=64)
        probs = softmax(scores_packed, scale=1/sqrt(d), key_padding_mask=kpm)
    """

    def __init__(self, layout, block):
        if block not in (16, 32, 64, 128):
            raise ValueError("block size must be one of 16/32/64/128, got %d" % block)
        self.layout = layout
        self.block = block
        self.n_row_blocks = layout.shape[1]
        self._lut_cache = {}
        lut, nnz, max_nnz = make_row_lut(layout.cpu(), block)
        self._host_lut = (lut, nnz, max_nnz)

    def _device_lut(self, device):
        key = str(device)
        if key not in self._lut_cache:
            lut, nnz, max_nnz = self._host_lut
            self._lut_cache[key] = (lut.to(device), nnz.reshape(-1).to(device), max_nnz)
        return self._lut_cache[key]

    def __call__(self, x, scale=1.0, key_padding_mask=None):
        lut, nnz, max_nnz = self._device_lut(x.device)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.to(torch.uint8).contiguous()
        return _BlockSparseSoftmax.apply(x, scale, lut, nnz, max_nnz, self.n_row_blocks,
                                         self.block, key_padding_mask)


def supports_bf16():
    """bf16 blocks need sm_80+ (A100); on V100 we keep fp16."""
    major, _ = torch.cuda.get_device_capability()
    return major >= 8


def reference_softmax(x_dense, layout, block, scale=1.0):
    """Dense reference used by the unit tests: expand layout to a mask and call torch.softmax."""
    mask = layout.repeat_interleave(block, dim=1).repeat_interleave(block, dim=2)
    mask = mask[None].to(x_dense.device).bool()
    x = x_dense.float() * scale
    x = x.masked_fill(~mask, float("-inf"))
    return torch.softmax(x, dim=-1).nan_to_num(0.0).to(x_dense.dtype)
