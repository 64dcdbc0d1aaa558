# -*- coding: utf-8 -*-
# Copyright (c) 2023-2024, Songlin Yang, Yu Zhang

from typing import Optional, Tuple

import torch
import triton
import triton.language as tl
from einops import rearrange
from packaging import version
from torch.cuda.amp import custom_bwd, custom_fwd

from fla.ops.utils import chunk_local_cumsum
from fla.utils import contiguous

if version.parse(triton.__version__) < version.parse("2.2.0"):
    import warnings
    warnings.warn(
        "Detected Triton version < 2.2.0. Chunked GLA kernels may produce wrong results; "
        "please upgrade Triton to >= 2.2.0 (or use fused_recurrent_gla)."
    )


def get_block_sizes(device_index: int) -> Tuple[int, int]:
    """Pick (BT, BK) from the shared-memory budget of the current GPU."""
    major, minor = torch.cuda.get_device_capability(device_index)
    if major >= 9:  # Hopper: 228KB smem per SM
        return 128, 64
    if (major, minor) == (8, 0):  # A100: 164KB
        return 64, 64
    return 64, 32  # consumer Ampere / Ada: ~100KB


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=1),
        triton.Config({}, num_warps=2),
        triton.Config({}, num_warps=4),
        triton.Config({}, num_warps=8),
    ],
    key=["BT", "BK", "BV"],
)
@triton.jit
def chunk_gla_fwd_kernel_h(
    k, v, g, h, h0, ht,
    s_k_h, s_k_t, s_k_d,
    s_v_h, s_v_t, s_v_d,
    s_h_h, s_h_t, s_h_d,
    T: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, NT: tl.constexpr,
    USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr,
):
    i_v, i_k, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)

    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h = tl.make_block_ptr(h0 + i_bh * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_h += tl.load(p_h, boundary_check=(0, 1)).to(tl.float32)
    for i_t in range(NT):
        p_k = tl.make_block_ptr(k + i_bh * s_k_h, (K, T), (s_k_d, s_k_t), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        p_v = tl.make_block_ptr(v + i_bh * s_v_h, (T, V), (s_v_t, s_v_d), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_h = tl.make_block_ptr(h + i_bh * s_h_h + i_t * K * V, (K, V), (s_h_t, s_h_d), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        p_g = tl.make_block_ptr(g + i_bh * s_k_h, (K, T), (s_k_d, s_k_t), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        p_gn = tl.make_block_ptr(g + i_bh * s_k_h, (T * K,), (s_k_d,), ((i_t * BT + BT - 1) * K + i_k * BK,), (BK,), (0,))

        tl.store(p_h, b_h.to(p_h.dtype.element_ty), boundary_check=(0, 1))
        # [BK, BT]
        b_k = tl.load(p_k, boundary_check=(0, 1))
        # [BT, BV]
        b_v = tl.load(p_v, boundary_check=(0, 1))
        # [BK,]
        b_gn = tl.load(p_gn, boundary_check=(0,))
        # [BK, BV]
        b_h *= tl.exp(b_gn)[:, None]
        # [BK, BT]
        b_g = tl.load(p_g, boundary_check=(0, 1))
        b_k = (b_k * tl.exp(b_gn[:, None] - b_g)).to(b_k.dtype)
        # [BK, BV]
        b_h += tl.dot(b_k, b_v, allow_tf32=False)

    if STORE_FINAL_STATE:
        p_h = tl.make_block_ptr(ht + i_bh * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        tl.store(p_h, b_h.to(p_h.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_gla_fwd_kernel_o(
    q, v, g, h, o, A,
    s_k_h, s_k_t, s_k_d,
    s_v_h, s_v_t, s_v_d,
    s_h_h, s_h_t, s_h_d,
    scale,
    T: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    m_s = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]

    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q + i_bh * s_k_h, (T, K), (s_k_t, s_k_d), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_g = tl.make_block_ptr(g + i_bh * s_k_h, (T, K), (s_k_t, s_k_d), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_h = tl.make_block_ptr(h + i_bh * s_h_h + i_t * K * V, (K, V), (s_h_t, s_h_d), (i_k * BK, i_v * BV), (BK, BV), (1, 0))

        # [BT, BK]
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_q = (b_q * scale).to(b_q.dtype)
        # [BT, BK]
        b_g = tl.load(p_g, boundary_check=(0, 1))
        # [BT, BK]
        b_qg = (b_q * tl.exp(b_g)).to(b_q.dtype)
        # [BK, BV]
        b_h = tl.load(p_h, boundary_check=(0, 1))
        # works but dkw, owing to divine benevolence
        # [BT, BV]
        if i_k >= 0:
            b_o += tl.dot(b_qg, b_h.to(b_qg.dtype), allow_tf32=False)
    p_v = tl.make_block_ptr(v + i_bh * s_v_h, (T, V), (s_v_t, s_v_d), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_o = tl.make_block_ptr(o + i_bh * s_v_h, (T, V), (s_v_t, s_v_d), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_A = tl.make_block_ptr(A + i_bh * T * BT, (T, BT), (BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    # [BT, BV]
    b_v = tl.load(p_v, boundary_check=(0, 1))
    # [BT, BT]
    b_A = tl.load(p_A, boundary_check=(0, 1))
    b_A = tl.where(m_s, b_A, 0.).to(b_v.dtype)
    b_o += tl.dot(b_A, b_v, allow_tf32=False)
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def chunk_fwd_h_fn(k, v, g, BT, BK, initial_state=None, output_final_state=False):
    B, H, T, K, V = *k.shape, v.shape[-1]
    final_state = None
    if output_final_state:
        final_state = k.new_empty(B, H, K, V, dtype=torch.float)

    BV = min(64, triton.next_power_of_2(V))
    NT, NK, NV = triton.cdiv(T, BT), triton.cdiv(K, BK), triton.cdiv(V, BV)
    h = k.new_empty(B, H, NT * K, V)
    grid = (NV, NK, B * H)
    chunk_gla_fwd_kernel_h[grid](
        k, v, g, h, initial_state, final_state,
        k.stride(1), k.stride(2), k.stride(3),
        v.stride(1), v.stride(2), v.stride(3),
        h.stride(1), h.stride(2), h.stride(3),
        T=T, K=K, V=V, BT=BT, BK=BK, BV=BV, NT=NT,
        USE_INITIAL_STATE=initial_state is not None,
        STORE_FINAL_STATE=output_final_state,
    )
    return h, final_state


def chunk_fwd_o_fn(h, A, q, k, v, g, BT, BK, scale):
    B, H, T, K, V = *k.shape, v.shape[-1]
    o = torch.empty_like(v)
    BV = min(32, triton.next_power_of_2(V))
    NV = triton.cdiv(V, BV)
    NT = triton.cdiv(T, BT)
    grid = (NV, NT, B * H)
    chunk_gla_fwd_kernel_o[grid](
        q, v, g, h, o, A,
        q.stride(1), q.stride(2), q.stride(3),
        v.stride(1), v.stride(2), v.stride(3),
        h.stride(1), h.stride(2), h.stride(3),
        scale,
        T=T, K=K, V=V, BT=BT, BK=BK, BV=BV,
        num_warps=8 if BT == 128 else 4,
        num_stages=2,
    )
    return o


def intra_chunk_attn_ref(q, k, g, BT, scale):
    """Intra-chunk gated attention scores A (B, H, T, BT) computed with torch ops."""
    B, H, T, K = q.shape
    NT = T // BT
    qc = rearrange(q, "b h (n c) k -> b h n c k", c=BT).float()
    kc = rearrange(k, "b h (n c) k -> b h n c k", c=BT).float()
    gc = rearrange(g, "b h (n c) k -> b h n c k", c=BT).float()
    A = torch.einsum("bhnik,bhnjk->bhnij", qc * gc.exp() * scale, kc * (-gc).exp())
    mask = torch.tril(torch.ones(BT, BT, dtype=torch.bool, device=q.device))
    A = A.masked_fill(~mask, 0.)
    return rearrange(A, "b h n i j -> b h (n i) j").to(q.dtype)


class ChunkGLAFunction(torch.autograd.Function):

    @staticmethod
    @custom_fwd
    @contiguous
    def forward(ctx, q, k, v, g, scale, initial_state, output_final_state, checkpoint_level):
        T = q.shape[-2]
        BT, BK = get_block_sizes(q.device.index)
        assert T % BT == 0, f"sequence length {T} must be a multiple of the chunk size {BT}"
        g_cumsum = chunk_local_cumsum(g, BT=BT)
        g_org, g = g, g_cumsum

        h, ht = chunk_fwd_h_fn(
            k=k, v=v, g=g, BT=BT, BK=BK,
            initial_state=initial_state,
            output_final_state=output_final_state,
        )
        A = intra_chunk_attn_ref(q, k, g, BT, scale)
        o = chunk_fwd_o_fn(h, A, q, k, v, g, BT, BK, scale)
        if checkpoint_level >= 1:
            del g
            g = g_org
        if checkpoint_level > 1:
            del h
            h = None

        ctx.save_for_backward(q, k, v, g, h, initial_state, A)
        ctx.BT = BT
        ctx.scale = scale
        ctx.checkpoint_level = checkpoint_level
        return o, ht

    @staticmethod
    @custom_bwd
    @contiguous
    def backward(ctx, do, dht):
        raise NotImplementedError("backward kernels live in chunk_bwd.py in the full package")


def chunk_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    scale: Optional[int] = None,
    initial_state: torch.Tensor = None,
    output_final_state: bool = False,
    checkpoint_level: Optional[int] = 2,
    head_first: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor]:
    r"""
    Args:
        q (torch.Tensor): queries of shape `[B, H, T, K]` (`[B, T, H, K]` if `head_first=False`).
        k (torch.Tensor): keys of the same shape as `q`.
        v (torch.Tensor): values of shape `[B, H, T, V]`.
        g (torch.Tensor): forget gates of shape `[B, H, T, K]` applied to keys (log space).
        scale (Optional[int]): scale factor of attention scores, defaults to `1 / sqrt(K)`.
        checkpoint_level (Optional[int]):
            0: store forward hidden states for backprop.
            1: recompute the fp32 cumulative values during backward.
            2: recompute the fp32 cumulative values and forward hidden states during backward.
    """
    assert checkpoint_level in [0, 1, 2]
    if not head_first:
        q, k, v, g = map(lambda x: rearrange(x, "b t h d -> b h t d"), (q, k, v, g))
    if scale is None:
        scale = q.shape[-1] ** -0.5
    if initial_state is not None:
        initial_state = initial_state.detach()
    o, final_state = ChunkGLAFunction.apply(q, k, v, g, scale, initial_state, output_final_state, checkpoint_level)
    if not head_first:
        o = rearrange(o, "b h t d -> b t h d")
    return o, final_state
