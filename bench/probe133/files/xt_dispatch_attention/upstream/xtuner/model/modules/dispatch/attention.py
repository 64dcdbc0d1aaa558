# Copyright (c) OpenMMLab. All rights reserved.
"""Thin wrappers around the flash-attn kernels used by the dispatched
attention forwards (llama / internlm2 / mistral / mixtral / qwen2).

Three entry points are provided:

* ``flash_attn_wo_mask``   -- dense [b, s, h, d] inputs, no padding
* ``flash_attn_w_mask``    -- dense inputs + a 2-D padding mask; the
                              tokens are un-padded and the varlen kernel
                              is used
* ``varlen_flash_attn``    -- packed inputs (``use_varlen_attn=True``),
                              the sequence boundaries are given by
                              ``cumulative_len`` from the message hub
"""
import math

import torch
import torch.nn.functional as F

from .utils import upad_qkv

try:
    from flash_attn import flash_attn_func, flash_attn_varlen_func
    from flash_attn.bert_padding import pad_input
except ImportError:
    pass


def _repeat_kv_bnsd(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(batch, num_key_value_heads, seqlen, head_dim) ->
    (batch, num_attention_heads, seqlen, head_dim)"""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen,
                                 head_dim)


def flash_attn_wo_mask(
        query_states,
        key_states,
        value_states,
        dropout_p=0.0,
        softmax_scale=None,
        causal=True,
        window_size=(-1, -1),  # -1 means infinite context window
):
    """query/key/value: [bsz, q_len, num_heads, head_dim]"""
    attn_output = flash_attn_func(
        query_states,
        key_states,
        value_states,
        dropout_p=dropout_p,
        softmax_scale=softmax_scale,
        causal=causal,
        window_size=window_size)
    return attn_output


def flash_attn_w_mask(
        query_states,  # bs, q_len, nhead, h_dim
        key_states,
        value_states,
        attention_mask,
        softmax_scale=None,
        causal=True,
        dropout_p=0.0,
        window_size=(-1, -1),  # -1 means infinite context window
):
    batch_size, q_len = query_states.shape[:2]
    query_states, key_states, value_states, indices_q, \
        cu_seq_lens, max_seq_lens = upad_qkv(
            query_states, key_states, value_states, attention_mask, q_len)

    cu_seqlens_q, cu_seqlens_k = cu_seq_lens
    max_seqlen_in_batch_q, max_seqlen_in_batch_k = max_seq_lens
    attn_output_unpad = flash_attn_varlen_func(
        query_states,
        key_states,
        value_states,
        cu_seqlens_q=cu_seqlens_q,
        cu_seqlens_k=cu_seqlens_k,
        max_seqlen_q=max_seqlen_in_batch_q,
        max_seqlen_k=max_seqlen_in_batch_k,
        softmax_scale=softmax_scale,
        dropout_p=dropout_p,
        causal=causal,
        window_size=window_size)
    attn_output = pad_input(attn_output_unpad, indices_q, batch_size, q_len)
    return attn_output


def varlen_flash_attn(
        query_states,
        key_states,
        value_states,
        cumulative_len,
        max_seqlen,
        softmax_scale=None,
        dropout_p=0.,
        causal=True,
        window_size=(-1, -1),  # -1 means infinite context window
):
    """Packed-sequence attention.

    ``cumulative_len`` is an int32 tensor ``[0, l0, l0 + l1, ...]`` that
    lives on the same device as the activations (it is moved there by
    ``VarlenAttnArgsToMessageHubHook``).
    """
    q_unpad, k_unpad, v_unpad = query_states.flatten(0, 1), key_states.flatten(
        0, 1), value_states.flatten(0, 1)
    attn_output = flash_attn_varlen_func(
        q_unpad,
        k_unpad,
        v_unpad,
        cumulative_len,
        cumulative_len,
        max_seqlen,
        max_seqlen,
        softmax_scale=softmax_scale,
        dropout_p=dropout_p,
        return_attn_probs=False,
        causal=causal,
        window_size=window_size)
    attn_output = attn_output.unsqueeze(0)
    return attn_output


def sdpa_attn_w_mask(query_states,
                     key_states,
                     value_states,
                     attention_mask=None,
                     num_key_value_groups=1,
                     dropout_p=0.0,
                     causal=True):
    """Fallback used when flash-attn is not installed (e.g. V100 or CPU
    debugging). Inputs are [bsz, num_heads, q_len, head_dim]."""
    key_states = _repeat_kv_bnsd(key_states, num_key_value_groups)
    value_states = _repeat_kv_bnsd(value_states, num_key_value_groups)

    if attention_mask is not None and attention_mask.dim() == 2:
        bsz, q_len = attention_mask.shape
        # [bsz, 1, q_len, kv_len], True means "keep"
        attention_mask = attention_mask[:, None, None, :].bool()
        if causal:
            causal_mask = torch.ones(
                q_len, q_len, dtype=torch.bool,
                device=query_states.device).tril()
            attention_mask = attention_mask & causal_mask
        causal = False

    # SDPA with memory-efficient attention backend is currently (torch==2.1.2)
    # bugged with non-contiguous inputs with custom attn_mask.
    query_states = query_states.contiguous()
    key_states = key_states.contiguous()
    value_states = value_states.contiguous()

    attn_output = F.scaled_dot_product_attention(
        query_states,
        key_states,
        value_states,
        attn_mask=attention_mask,
        dropout_p=dropout_p,
        is_causal=causal and attention_mask is None)
    return attn_output


def naive_attn(query_states, key_states, value_states, attention_mask=None):
    """Reference implementation, only used by the unit tests to compare
    against the kernels above.  [bsz, num_heads, q_len, head_dim]"""
    head_dim = query_states.shape[-1]
    attn_weights = torch.matmul(query_states, key_states.transpose(
        2, 3)) / math.sqrt(head_dim)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    # upcast attention to fp32
    attn_weights = F.softmax(
        attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
    return torch.matmul(attn_weights, value_states)
