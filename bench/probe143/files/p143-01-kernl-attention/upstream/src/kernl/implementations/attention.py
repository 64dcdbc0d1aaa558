#  Copyright 2022 Lefebvre Sarrut
#
#  Licensed under the Apache License, Version 2.0 (the "License");
#  you may not use this file except in compliance with the License.
#  You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
#  limitations under the License.
#

"""
Fused attention (forward only) for inference.

Implementation follows the FlashAttention paper: the QK^T product is never materialized
in HBM, softmax is computed online block by block. Works with fp16 inputs on Ampere and
newer GPUs; on Turing (sm75) the block sizes are reduced because of the smaller shared memory.
"""

import math
from typing import Optional

import torch
import triton
import triton.language as tl


def _get_smem_budget() -> int:
    # A100 has 164KB of shared memory per SM, 3090 has 100KB, T4 only 64KB.
    major, minor = torch.cuda.get_device_capability()
    if major >= 8 and minor == 0:
        return 163 * 1024
    if major >= 8:
        return 99 * 1024
    return 64 * 1024


def closest_power_of_2(n: int, min_range: int = 16, max_range: int = 128) -> int:
    """return the closest power of 2 for n, in 16-128 range"""
    n = max(min(n, max_range), min_range)
    min_range = math.floor(math.log2(n - 1))
    max_range = math.ceil(math.log2(n))
    ranges = [2**i for i in range(min_range, max_range + 1)]
    return min(ranges, key=lambda x: abs(x - n))


def prune(configs, named_args):
    """remove block shapes unlikely to provide optimal speedup"""
    pruned_configs = []
    sizes_m = named_args["size_m"]
    size_n = named_args["size_n"]
    min_size_m = min(sizes_m, 128) if isinstance(sizes_m, int) else 128
    for c in configs:
        is_seq_len_compatible = c.kwargs["BLOCK_M"] <= max(min_size_m, 16)
        is_n_compatible = c.kwargs["BLOCK_N"] <= max(size_n, 16)
        if is_seq_len_compatible and is_n_compatible:
            pruned_configs.append(c)
    return pruned_configs


_ATTN_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=s, num_warps=w)
    for bm in [16, 32, 64, 128]
    for bn in [16, 32, 64, 128]
    for s, w in [(1, 4), (2, 4), (3, 4), (2, 8)]
]


@triton.autotune(
    configs=_ATTN_CONFIGS,
    prune_configs_by={"early_config_prune": prune, "perf_model": None, "top_k": None},
    key=["size_m_cache_key", "size_n", "head_size", "is_causal", "NEED_LOAD_MASK_SIZE_N"],
)
@triton.heuristics(
    {
        "EVEN_N": lambda args: args["size_n"] % args["BLOCK_N"] == 0,
    }
)
@triton.jit
def _fwd_kernel(
    heads,
    size_m,
    size_n,
    size_m_cache_key,
    Q,
    K,
    V,
    sm_scale,
    attention_mask,
    output,
    q_batch_stride,
    q_head_stride,
    q_m_stride,
    q_k_stride,
    k_batch_stride,
    k_head_stride,
    k_n_stride,
    k_k_stride,
    v_batch_stride,
    v_head_stride,
    v_k_stride,
    v_n_stride,
    o_batch_stride,
    o_head_stride,
    o_m_stride,
    o_n_stride,
    attention_mask_batch_stride,
    attention_mask_head_stride,
    attention_mask_m_stride,
    attention_mask_n_stride,
    min_clamp_value,
    MASK_BATCH_SIZE: tl.constexpr,
    MASK_HEAD_SIZE: tl.constexpr,
    MASK_M_SIZE: tl.constexpr,
    MASK_N_SIZE: tl.constexpr,
    NEED_LOAD_MASK_SIZE_N: tl.constexpr,
    NEED_LOAD_MASK_SIZE_M: tl.constexpr,
    head_size: tl.constexpr,
    is_causal: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_DHEAD: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    block_m_idx = tl.program_id(0)
    head_idx = tl.program_id(1)

    current_batch_idx = head_idx // heads
    current_head_idx = head_idx % heads

    range_offs_m = tl.arange(0, BLOCK_M)
    range_offs_n = tl.arange(0, BLOCK_N)
    range_offs_d = tl.arange(0, BLOCK_DHEAD)

    offs_m = block_m_idx * BLOCK_M + range_offs_m

    offs_q = (
        current_batch_idx * q_batch_stride
        + current_head_idx * q_head_stride
        + (offs_m[:, None] * q_m_stride + range_offs_d[None, :] * q_k_stride)
    )
    offs_k = (
        current_batch_idx * k_batch_stride
        + current_head_idx * k_head_stride
        + (range_offs_n[:, None] * k_n_stride + range_offs_d[None, :] * k_k_stride)
    )
    offs_v = (
        current_batch_idx * v_batch_stride
        + current_head_idx * v_head_stride
        + (range_offs_n[:, None] * v_k_stride + range_offs_d[None, :] * v_n_stride)
    )

    ptrs_q = Q + offs_q
    ptrs_k = K + offs_k
    ptrs_v = V + offs_v

    # running max, normalizer and accumulator, kept in registers
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - float("inf")
    d_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_DHEAD), dtype=tl.float32)

    if NEED_LOAD_MASK_SIZE_M:
        q = tl.load(ptrs_q, mask=offs_m[:, None] < size_m, other=0.0)
    else:
        q = tl.load(ptrs_q)

    block_n_end = size_n
    if is_causal:
        block_n_end = (block_m_idx + 1) * BLOCK_M

    if MASK_BATCH_SIZE > 1:
        attention_mask_batch_idx = current_batch_idx
    else:
        attention_mask_batch_idx = 0
    if MASK_HEAD_SIZE > 1:
        attention_mask_head_idx = current_head_idx
    else:
        attention_mask_head_idx = 0

    attention_mask_off = (
        attention_mask_batch_idx * attention_mask_batch_stride + attention_mask_head_idx * attention_mask_head_stride
    )

    for block_start_n in range(0, block_n_end, BLOCK_N):
        block_start_n = tl.multiple_of(block_start_n, BLOCK_N)

        if NEED_LOAD_MASK_SIZE_N:
            load_mask = (block_start_n + range_offs_n)[:, None] < size_n
            k = tl.load(ptrs_k + block_start_n * k_n_stride, mask=load_mask, other=0.0)
        else:
            k = tl.load(ptrs_k + block_start_n * k_n_stride)
        qk = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

        if NEED_LOAD_MASK_SIZE_N:
            qk = tl.where(range_offs_n[None, :] + block_start_n < size_n, qk, float("-inf"))
        qk += tl.dot(q, tl.trans(k))
        qk *= sm_scale

        if is_causal:
            offs_n = block_start_n + range_offs_n
            qk += tl.where(offs_m[:, None] >= offs_n[None, :], 0, float("-inf"))

        if MASK_M_SIZE > 0:
            offs_mask = attention_mask_off + (block_start_n + range_offs_n[None, :]) * attention_mask_n_stride
            if MASK_M_SIZE == 1:
                m = tl.load(attention_mask + offs_mask, mask=(block_start_n + range_offs_n[None, :]) < size_n)
            else:
                offs_mask += offs_m[:, None] * attention_mask_m_stride
                m = tl.load(attention_mask + offs_mask, eviction_policy="evict_first")
            # Avoids NaN
            m = tl.where(m == float("-inf"), min_clamp_value, m)
            qk += m

        l_j = tl.max(qk, 1)
        numerators = tl.exp(qk - l_j[:, None])
        d_j = tl.sum(numerators, 1)
        l_new = tl.maximum(l_i, l_j)
        alpha = tl.exp(l_i - l_new)
        beta = tl.exp(l_j - l_new)
        d_new = alpha * d_i + beta * d_j

        p_scale = beta / d_new
        p = numerators * p_scale[:, None]
        acc_scale = d_i / d_new * alpha
        acc = acc * acc_scale[:, None]

        if NEED_LOAD_MASK_SIZE_N:
            load_mask = (block_start_n + range_offs_n)[:, None] < size_n
            v = tl.load(ptrs_v + block_start_n * v_k_stride, mask=load_mask, other=0.0)
        else:
            v = tl.load(ptrs_v + block_start_n * v_k_stride)
        p = p.to(Q.dtype.element_ty)

        acc += tl.dot(p, v)

        d_i = d_new
        l_i = l_new

    off_o = (
        current_batch_idx * o_batch_stride
        + current_head_idx * o_head_stride
        + (offs_m[:, None] * o_m_stride + range_offs_d[None, :] * o_n_stride)
    )

    out_ptrs = output + off_o
    tl.store(out_ptrs, acc, mask=offs_m[:, None] < size_m)


def attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    output: torch.Tensor,
    sm_scale: float,
    is_causal: bool = False,
    attention_mask: Optional[torch.Tensor] = None,
):
    """
    Computes attention.
    It takes the same arguments as the original attention layer, but returns the result in the output parameter.

    @param q: Query matrix size (batch, heads, size_m, dhead)
    @param k: Key matrix size (batch, heads, size_n, dhead)
    @param v: Value matrix size (batch, heads, size_n, dhead)
    @param output: Output matrix size (batch, heads, size_m, dhead)
    @param sm_scale: Scaling factor applied after operation QxK
    @param is_causal: Whether to apply causal attention
    @param attention_mask: Attention mask matrix broadcastable to (batch, heads, size_m, size_n)
    @return:
    """
    assert q.is_cuda and k.is_cuda and v.is_cuda, "attention kernel requires CUDA tensors"
    assert q.dtype == k.dtype == v.dtype == torch.float16, f"only fp16 is supported, got {q.dtype}"
    batch, heads, size_m, dhead = q.size()
    size_n = k.size(2)

    # Although we support BLOCK_DHEAD=128 on A100, 3090 runs out of shared memory with it
    if dhead > 64 and _get_smem_budget() < 100 * 1024:
        raise NotImplementedError(f"head size {dhead} is not supported on this GPU")

    grid = lambda args: (triton.cdiv(size_m, args["BLOCK_M"]), batch * heads)  # noqa: E731
    # tweak to allow to use the same cache for all sequence lengths > 128
    size_m_cache_key = min(size_m, 128)

    if attention_mask is not None:
        assert attention_mask.dtype == q.dtype, "attention mask must have the same dtype as q"
        assert attention_mask.dim() == 4, f"attention mask must have 4 dims, got {attention_mask.dim()}"
        if attention_mask.stride(-1) != 1:
            attention_mask = attention_mask.contiguous()
        mask_batch_size, mask_head_size, mask_m_size, mask_n_size = attention_mask.size()
        min_clamp_value = torch.finfo(attention_mask.dtype).min
        mask_strides = attention_mask.stride()
    else:
        mask_batch_size, mask_head_size, mask_m_size, mask_n_size = 0, 0, 0, 0
        min_clamp_value = 0.0
        mask_strides = (0, 0, 0, 0)

    _fwd_kernel[grid](
        heads,
        size_m,
        size_n,
        size_m_cache_key,
        q,
        k,
        v,
        sm_scale,
        attention_mask,
        output,
        *q.stride(),
        *k.stride(),
        *v.stride(),
        *output.stride(),
        *mask_strides,
        min_clamp_value,
        MASK_BATCH_SIZE=mask_batch_size,
        MASK_HEAD_SIZE=mask_head_size,
        MASK_M_SIZE=mask_m_size,
        MASK_N_SIZE=mask_n_size,
        NEED_LOAD_MASK_SIZE_N=size_n % 16 != 0,
        NEED_LOAD_MASK_SIZE_M=size_m % 16 != 0,
        head_size=dhead,
        is_causal=is_causal,
        BLOCK_DHEAD=dhead,
    )


class Attention(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        output: torch.Tensor,
        sm_scale: float,
        is_causal: bool,
        attention_mask: Optional[torch.Tensor] = None,
    ):
        attention_forward(q, k, v, output, sm_scale, is_causal, attention_mask)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("kernl attention is inference only")


def attention_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    output: torch.Tensor,
    sm_scale: float,
    is_causal: bool,
    attention_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    """Naive PyTorch implementation, used in tests and as a fallback on CPU."""
    p = torch.matmul(q, k.transpose(2, 3)) * sm_scale
    if attention_mask is not None:
        p += attention_mask
    if is_causal:
        size_m = q.size(2)
        size_n = k.size(2)
        causal = torch.tril(torch.ones((size_m, size_n), device=q.device, dtype=torch.bool))
        p = p.masked_fill(~causal, float("-inf"))
    p = torch.nn.functional.softmax(p.float(), dim=-1).to(q.dtype)
    ref_out = torch.matmul(p, v, out=output)
    return ref_out


def attention_wrapper(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    output: torch.Tensor,
    sm_scale: float,
    is_causal: bool,
    attention_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    if not q.is_cuda:
        # the dynamo pass may leave CPU graphs untouched (e.g. during tracing on meta/cpu)
        return attention_reference(q, k, v, output, sm_scale, is_causal, attention_mask)
    return Attention.apply(q, k, v, output, sm_scale, is_causal, attention_mask)
