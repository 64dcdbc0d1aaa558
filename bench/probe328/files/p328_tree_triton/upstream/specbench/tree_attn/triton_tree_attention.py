"""Triton kernels for SpecInfer-style token-tree verification.

The target model verifies a whole token tree in one forward pass: every tree token
attends to the full KV prefix plus its own ancestors inside the tree (given as a
dense [N_TREE, N_TREE] ancestor mask). After verification, the KV entries of the
accepted path are compacted to the front of the tree region.

Both kernels assume the usual [B, H, N, D] layout and fp16/bf16 inputs.
"""
import math

import torch
import triton
import triton.language as tl


def _block_m():
    # Ampere and newer have enough shared memory for 128-row Q tiles at D=128.
    major, _ = torch.cuda.get_device_capability()
    return 128 if major >= 8 else 64


@triton.jit
def _tree_attn_fwd_kernel(
    Q,
    K,
    V,
    sm_scale,
    TreeMask,
    Out,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_qk,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_kk,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_vk,
    stride_ob,
    stride_oh,
    stride_om,
    stride_ok,
    stride_mm,
    stride_mn,
    H,
    N_PREFIX,
    N_TREE,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hb = tl.program_id(1)
    off_b = off_hb // H
    off_h = off_hb % H

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)

    q_ptrs = Q + off_b * stride_qb + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_TREE, other=0.0)

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e)

    k_base = K + off_b * stride_kb + off_h * stride_kh
    v_base = V + off_b * stride_vb + off_h * stride_vh

    # 1) prefix: every tree token sees the whole (already verified) prefix
    for start_n in range(0, N_PREFIX, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(
            k_base + cols[None, :] * stride_kn + offs_d[:, None] * stride_kk,
            mask=cols[None, :] < N_PREFIX,
            other=0.0,
        )
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(cols[None, :] < N_PREFIX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(
            v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk,
            mask=cols[:, None] < N_PREFIX,
            other=0.0,
        )
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    # 2) tree block: only ancestors (and self) are visible
    for start_n in range(0, N_TREE, BLOCK_N):
        cols = start_n + offs_n
        kv_cols = N_PREFIX + cols
        k = tl.load(
            k_base + kv_cols[None, :] * stride_kn + offs_d[:, None] * stride_kk,
            mask=cols[None, :] < N_TREE,
            other=0.0,
        )
        qk = tl.dot(q, k) * qk_scale
        tm = tl.load(
            TreeMask + offs_m[:, None] * stride_mm + cols[None, :] * stride_mn,
            mask=(offs_m[:, None] < N_TREE) & (cols[None, :] < N_TREE),
            other=0,
        )
        qk = tl.where(tm != 0, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(
            v_base + kv_cols[:, None] * stride_vn + offs_d[None, :] * stride_vk,
            mask=cols[:, None] < N_TREE,
            other=0.0,
        )
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    acc = acc / l_i[:, None]
    o_ptrs = Out + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_TREE)


def tree_attention(q, k, v, tree_mask, n_prefix, sm_scale=None):
    """q: [B, H, N_TREE, D]; k, v: [B, H, n_prefix + N_TREE, D]; tree_mask: [N_TREE, N_TREE] (int8/bool)."""
    assert q.is_cuda and k.is_cuda and v.is_cuda, "tree_attention expects CUDA tensors"
    B, H, N_TREE, D = q.shape
    assert D in (64, 128), "head_dim must be 64 or 128"
    assert k.shape[2] == n_prefix + N_TREE
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    tree_mask = tree_mask.to(torch.int8).contiguous()
    o = torch.empty_like(q)

    BLOCK_M = _block_m()
    BLOCK_N = 64
    num_warps = 4 if D <= 64 else 8
    grid = (triton.cdiv(N_TREE, BLOCK_M), B * H)
    _tree_attn_fwd_kernel[grid](
        q,
        k,
        v,
        sm_scale,
        tree_mask,
        o,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        q.stride(3),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        k.stride(3),
        v.stride(0),
        v.stride(1),
        v.stride(2),
        v.stride(3),
        o.stride(0),
        o.stride(1),
        o.stride(2),
        o.stride(3),
        tree_mask.stride(0),
        tree_mask.stride(1),
        H,
        n_prefix,
        N_TREE,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_DMODEL=D,
        num_warps=num_warps,
        num_stages=2,
    )
    return o


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_D": 64}, num_warps=2, num_stages=1),
        triton.Config({"BLOCK_D": 128}, num_warps=4, num_stages=1),
    ],
    key=["D"],
)
@triton.jit
def _compact_kv_kernel(
    Cache,
    SelectIdx,
    stride_l,
    stride_h,
    stride_n,
    stride_d,
    prefix_len,
    n_sel,
    D,
    BLOCK_D: tl.constexpr,
):
    """Cache[l, h, prefix_len + i, :] = Cache[l, h, prefix_len + SelectIdx[i], :] for the accepted path."""
    pid_lh = tl.program_id(0)
    i = tl.program_id(1)
    src = tl.load(SelectIdx + i)
    base = Cache + pid_lh * stride_h
    for d0 in range(0, D, BLOCK_D):
        offs = d0 + tl.arange(0, BLOCK_D)
        row = tl.load(base + (prefix_len + src) * stride_n + offs * stride_d, mask=offs < D)
        tl.store(base + (prefix_len + i) * stride_n + offs * stride_d, row, mask=offs < D)


def compact_accepted_kv(cache, select_idx, prefix_len):
    """cache: [L*2, H, N_MAX, D] contiguous per (layer*kv, head); select_idx: accepted tree positions (sorted)."""
    LK, H, N_MAX, D = cache.shape
    n_sel = select_idx.numel()
    if n_sel == 0:
        return cache
    # rows are processed in order; sources are never behind their destination because indices are sorted
    grid = (LK * H, n_sel)
    _compact_kv_kernel[grid](
        cache,
        select_idx,
        cache.stride(0),
        cache.stride(1),
        cache.stride(2),
        cache.stride(3),
        prefix_len,
        n_sel,
        D,
    )
    return cache


def tree_attention_ref(q, k, v, tree_mask, n_prefix, sm_scale=None):
    """Eager reference used by tests/benchmarks."""
    B, H, N_TREE, D = q.shape
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    full = torch.ones(N_TREE, n_prefix + N_TREE, dtype=torch.bool, device=q.device)
    full[:, n_prefix:] = tree_mask.bool()
    s = torch.matmul(q.float(), k.float().transpose(-1, -2)) * sm_scale
    s = s.masked_fill(~full, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v.float()).to(q.dtype)
