"""Triton prefill attention over a paged KV cache with a shared prefix (prefix caching).

Queries of the new tokens attend to (a) the cached prefix, read block-by-block through the block
table, and (b) the new tokens themselves with a causal mask. One program = one (seq, head, q-block).
"""
import torch
import triton
import triton.language as tl

IS_AMPERE_OR_NEWER = torch.cuda.get_device_capability()[0] >= 8
NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def _fwd_kernel(Q, K, V, K_cache, V_cache, B_Loc, sm_scale, B_Start_Loc, B_Seqlen, B_Ctxlen, Out,
                stride_b_loc_b, stride_b_loc_s,
                stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh, stride_obs, stride_oh,
                stride_k_cache_bs, stride_k_cache_h, stride_k_cache_bl,
                stride_v_cache_bs, stride_v_cache_h, stride_v_cache_bl,
                num_queries_per_kv: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_m = tl.program_id(2)
    cur_kv_head = cur_head // num_queries_per_kv

    cur_batch_ctx_len = tl.load(B_Ctxlen + cur_batch)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)
    cur_batch_query_len = cur_batch_seq_len - cur_batch_ctx_len

    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    off_q = (cur_batch_in_all_start_index + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :]
    q = tl.load(Q + off_q, mask=offs_m[:, None] < cur_batch_query_len, other=0.0)

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)

    # (a) cached prefix through the block table
    for start_n in range(0, cur_batch_ctx_len, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        bn = tl.load(B_Loc + cur_batch * stride_b_loc_b + ((start_n + offs_n) // BLOCK_SIZE) * stride_b_loc_s,
                     mask=(start_n + offs_n) < cur_batch_ctx_len, other=0)
        off_k = (bn[None, :] * stride_k_cache_bs + cur_kv_head * stride_k_cache_h + offs_d[:, None]
                 + ((start_n + offs_n[None, :]) % BLOCK_SIZE) * stride_k_cache_bl)
        off_v = (bn[:, None] * stride_v_cache_bs + cur_kv_head * stride_v_cache_h + offs_d[None, :]
                 + ((start_n + offs_n[:, None]) % BLOCK_SIZE) * stride_v_cache_bl)
        k = tl.load(K_cache + off_k, mask=(start_n + offs_n[None, :]) < cur_batch_ctx_len, other=0.0,
                    cache_modifier=".cg")
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where((start_n + offs_n[None, :]) < cur_batch_ctx_len, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V_cache + off_v, mask=(start_n + offs_n[:, None]) < cur_batch_ctx_len, other=0.0,
                    cache_modifier=".cg")  # v
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    # (b) new tokens, causal
    block_mask = tl.where(start_m * BLOCK_M < cur_batch_query_len, 1, 0)
    for start_n in range(0, block_mask * (start_m + 1) * BLOCK_M, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        off_k = (cur_batch_in_all_start_index + start_n + offs_n[None, :]) * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None]
        off_v = (cur_batch_in_all_start_index + start_n + offs_n[:, None]) * stride_vbs + cur_kv_head * stride_vh + offs_d[None, :]
        k = tl.load(K + off_k, mask=(start_n + offs_n[None, :]) < cur_batch_query_len, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + off_v, mask=(start_n + offs_n[:, None]) < cur_batch_query_len, other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    acc = acc / l_i[:, None]
    off_o = (cur_batch_in_all_start_index + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_d[None, :]
    tl.store(Out + off_o, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < cur_batch_query_len)


@torch.inference_mode()
def context_attention_fwd(q, k, v, o, k_cache, v_cache, b_loc, b_start_loc, b_seq_len, b_ctx_len,
                          max_input_len, sm_scale=None):
    """q/k/v: [num_new_tokens, heads, head_dim]; k_cache/v_cache: [num_blocks, kv_heads, block_size, head_dim]."""
    BLOCK = 128 if IS_AMPERE_OR_NEWER else 64
    Lq, Lk = q.shape[-1], k.shape[-1]
    assert Lq == Lk and Lk in {16, 32, 64, 128, 256}
    sm_scale = sm_scale or 1.0 / (Lq ** 0.5)
    batch, head = b_seq_len.shape[0], q.shape[1]
    num_queries_per_kv = q.shape[1] // k.shape[1]
    grid = (batch, head, triton.cdiv(max_input_len, BLOCK))
    num_warps = 8 if Lk > 64 else 4
    block_size = k_cache.shape[2]
    _fwd_kernel[grid](
        q, k, v, k_cache, v_cache, b_loc, sm_scale, b_start_loc, b_seq_len, b_ctx_len, o,
        b_loc.stride(0), b_loc.stride(1),
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1), o.stride(0), o.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        num_queries_per_kv=num_queries_per_kv, BLOCK_SIZE=block_size,
        BLOCK_M=BLOCK, BLOCK_DMODEL=Lk, BLOCK_N=BLOCK,
        num_warps=num_warps, num_stages=1 if Lk > 128 else 2,
    )
    return o


def test_small():
    torch.manual_seed(0)
    heads, kv_heads, d, bs = 8, 2, 64, 16
    ctx, new = 48, 32
    k_cache = torch.randn(8, kv_heads, bs, d, device="cuda", dtype=torch.float16)
    v_cache = torch.randn_like(k_cache)
    q = torch.randn(new, heads, d, device="cuda", dtype=torch.float16)
    k = torch.randn(new, kv_heads, d, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    o = torch.empty_like(q)
    b_loc = torch.arange(8, device="cuda", dtype=torch.int32)[None]
    ints = dict(device="cuda", dtype=torch.int32)
    context_attention_fwd(q, k, v, o, k_cache, v_cache, b_loc, torch.tensor([0], **ints),
                          torch.tensor([ctx + new], **ints), torch.tensor([ctx], **ints), new)
    return o
