"""Triton kernels for heterogeneous-rank LoRA over the unified memory pool.

Adapter weights are *not* contiguous per adapter: each rank row lives in one
page of the unified pool (``key_buffer`` for A, ``value_buffer`` for B) and is
located through ``b_loc`` (page indices) + ``b_lora_start`` (offset of the
adapter's first row) + ``b_lora_ranks``.  The same kernels therefore serve any
mix of ranks in one launch (MBGMM for prefill, MBGMV for decode).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _shrink_kernel(
    X, W, Out,
    b_loc, b_lora_start, b_lora_ranks, b_start_loc, b_seq_len, b_indicies,
    stride_xm, stride_xk,
    stride_wp, stride_wh,
    stride_om, stride_on,
    hidden_size,
    qkvo_offset,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    start_m = tl.program_id(1)
    start_n = tl.program_id(2)

    lora_id = tl.load(b_indicies + cur_batch)
    rank = tl.load(b_lora_ranks + lora_id) // 4
    if start_n * BLOCK_N >= rank:
        return
    seq_len = tl.load(b_seq_len + cur_batch)
    if start_m * BLOCK_M >= seq_len:
        return
    seq_start = tl.load(b_start_loc + cur_batch)
    lora_start = tl.load(b_lora_start + lora_id)

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    # page index of every rank row of this adapter/projection
    page = tl.load(b_loc + lora_start + qkvo_offset * rank + offs_n, mask=offs_n < rank, other=0)

    x_ptrs = X + (seq_start + offs_m[:, None]) * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = W + page[None, :] * stride_wp + offs_k[:, None] * stride_wh

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(hidden_size, BLOCK_K)):
        k_mask = offs_k + k * BLOCK_K < hidden_size
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < seq_len) & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & (offs_n[None, :] < rank), other=0.0)
        acc += tl.dot(x, w)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wh

    out_ptrs = Out + (seq_start + offs_m[:, None]) * stride_om + offs_n[None, :] * stride_on
    tl.store(out_ptrs, acc.to(Out.dtype.element_ty), mask=(offs_m[:, None] < seq_len) & (offs_n[None, :] < rank))


@triton.jit
def _expand_kernel(
    X, W, Out,
    b_loc, b_lora_start, b_lora_ranks, b_start_loc, b_seq_len, b_indicies, b_scaling,
    stride_xm, stride_xr,
    stride_wp, stride_wh,
    stride_om, stride_oh,
    hidden_size,
    qkvo_offset,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    start_m = tl.program_id(1)
    start_n = tl.program_id(2)

    lora_id = tl.load(b_indicies + cur_batch)
    rank = tl.load(b_lora_ranks + lora_id) // 4
    seq_len = tl.load(b_seq_len + cur_batch)
    if start_m * BLOCK_M >= seq_len:
        return
    seq_start = tl.load(b_start_loc + cur_batch)
    lora_start = tl.load(b_lora_start + lora_id)
    scaling = tl.load(b_scaling + lora_id)

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_r = tl.arange(0, BLOCK_R)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for r in range(0, tl.cdiv(rank, BLOCK_R)):
        r_idx = r * BLOCK_R + offs_r
        r_mask = r_idx < rank
        page = tl.load(b_loc + lora_start + qkvo_offset * rank + r_idx, mask=r_mask, other=0)
        x = tl.load(X + (seq_start + offs_m[:, None]) * stride_xm + r_idx[None, :] * stride_xr,
                    mask=(offs_m[:, None] < seq_len) & r_mask[None, :], other=0.0)
        w = tl.load(W + page[:, None] * stride_wp + offs_n[None, :] * stride_wh,
                    mask=r_mask[:, None] & (offs_n[None, :] < hidden_size), other=0.0)
        acc += tl.dot(x, w)

    out_ptrs = Out + (seq_start + offs_m[:, None]) * stride_om + offs_n[None, :] * stride_oh
    mask = (offs_m[:, None] < seq_len) & (offs_n[None, :] < hidden_size)
    prev = tl.load(out_ptrs, mask=mask, other=0.0)
    tl.store(out_ptrs, (prev + acc * scaling).to(Out.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_N": 256, "BLOCK_K": 32}, num_warps=8, num_stages=4),
    ],
    key=["hidden_size", "max_rank"],
)
@triton.jit
def _bgmv_expand_kernel(
    X, W, Out,
    b_loc, b_lora_start, b_lora_ranks, b_indicies, b_scaling,
    stride_xb, stride_wp, stride_wh, stride_ob,
    hidden_size, max_rank,
    qkvo_offset,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """Decode path: one token per request (MBGMV)."""
    cur_batch = tl.program_id(0)
    start_n = tl.program_id(1)
    lora_id = tl.load(b_indicies + cur_batch)
    rank = tl.load(b_lora_ranks + lora_id) // 4
    lora_start = tl.load(b_lora_start + lora_id)
    scaling = tl.load(b_scaling + lora_id)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k in range(0, tl.cdiv(max_rank, BLOCK_K)):
        r_idx = k * BLOCK_K + offs_k
        r_mask = r_idx < rank
        page = tl.load(b_loc + lora_start + qkvo_offset * rank + r_idx, mask=r_mask, other=0)
        x = tl.load(X + cur_batch * stride_xb + r_idx, mask=r_mask, other=0.0).to(tl.float32)
        w = tl.load(W + page[:, None] * stride_wp + offs_n[None, :] * stride_wh,
                    mask=r_mask[:, None] & (offs_n[None, :] < hidden_size), other=0.0)
        acc += tl.sum(x[:, None] * w.to(tl.float32), axis=0)
    out_ptrs = Out + cur_batch * stride_ob + offs_n
    prev = tl.load(out_ptrs, mask=offs_n < hidden_size, other=0.0)
    tl.store(out_ptrs, (prev + acc * scaling).to(Out.dtype.element_ty), mask=offs_n < hidden_size)


def _check_inputs(*ts):
    for t in ts:
        assert t.is_cuda, "lora triton kernels expect CUDA tensors"
        assert t.is_contiguous() or t.dim() > 2


@torch.no_grad()
def lora_get_qkvo_fwd_shrink(x, w, o, b_loc, b_lora_start, b_lora_ranks, b_start_loc, b_seq_len,
                             b_indicies, hidden_size, qkvo, max_rank, max_input_len):
    """
    x: (total_token_num, hidden)            input activations
    w: (pool_size, head_num, head_dim)      key_buffer[layer] of the unified pool (A rows)
    o: (total_token_num, max_rank)          output, overwritten
    """
    _check_inputs(x, o)
    BLOCK_M = 32
    BLOCK_N = 16 if max_rank <= 16 else 32
    BLOCK_K = 64
    batch = b_seq_len.shape[0]
    grid = (batch, triton.cdiv(max_input_len, BLOCK_M), triton.cdiv(max_rank, BLOCK_N))
    num_warps = 4 if hidden_size <= 4096 else 8
    _shrink_kernel[grid](
        x, w, o,
        b_loc, b_lora_start, b_lora_ranks, b_start_loc, b_seq_len, b_indicies,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(2),
        o.stride(0), o.stride(1),
        hidden_size,
        qkvo,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=num_warps,
        num_stages=2,
    )
    return o


@torch.no_grad()
def lora_get_qkvo_fwd_expand(x, w, o, scale, b_loc, b_lora_start, b_lora_ranks, b_start_loc,
                             b_seq_len, b_indicies, hidden_size, qkvo, max_rank, max_input_len):
    """
    x: (total_token_num, max_rank)          shrink output
    w: (pool_size, head_num, head_dim)      value_buffer[layer] of the unified pool (B rows)
    o: (total_token_num, hidden)            accumulated in place
    """
    _check_inputs(x, o)
    BLOCK_M = 32
    BLOCK_N = 64
    BLOCK_R = 16
    batch = b_seq_len.shape[0]
    grid_expand = (batch, triton.cdiv(max_input_len, BLOCK_M), triton.cdiv(hidden_size, BLOCK_N))
    _expand_kernel[grid_expand](
        x, w, o,
        b_loc, b_lora_start, b_lora_ranks, b_start_loc, b_seq_len, b_indicies, scale,
        x.stride(0), x.stride(1),
        w.stride(0), w.stride(2),
        o.stride(0), o.stride(1),
        hidden_size,
        qkvo,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_R=BLOCK_R,
        num_warps=4,
        num_stages=1,
    )
    return o


@torch.no_grad()
def dispatch_bgmv_triton(o, x, w, b_loc, b_lora_start, b_lora_ranks, b_indicies, scale,
                         hidden_size, qkvo, max_rank):
    """Triton fallback for ``slora._kernels.dispatch_bgmv`` (decode, expand side)."""
    _check_inputs(x, o)
    batch = x.shape[0]
    grid = lambda meta: (batch, triton.cdiv(hidden_size, meta["BLOCK_N"]))  # noqa: E731
    _bgmv_expand_kernel[grid](
        x, w, o,
        b_loc, b_lora_start, b_lora_ranks, b_indicies, scale,
        x.stride(0), w.stride(0), w.stride(2), o.stride(0),
        hidden_size, max_rank,
        qkvo,
    )
    return o
