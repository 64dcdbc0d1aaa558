# Copyright 2022 MosaicML LLM Foundry authors
# SPDX-License-Identifier: Apache-2.0

"""Attention layers."""

import math
import warnings
from typing import Any, Optional

import torch
import torch.nn as nn
from einops import rearrange
from packaging import version

from llmfoundry.models.layers.fc import fc_type_registry
from llmfoundry.models.layers.norm import build_norm

__all__ = [
    'scaled_multihead_dot_product_attention',
    'flash_attn_fn',
    'GroupedQueryAttention',
    'MultiheadAttention',
    'MultiQueryAttention',
    'is_flash_v2_installed',
    'check_alibi_support',
]


def is_flash_v2_installed(v2_version: str = '2.0.0'):
    assert version.parse(v2_version) >= version.parse('2.0.0')
    try:
        import flash_attn as flash_attn
    except:
        return False
    return version.parse(flash_attn.__version__) >= version.parse(v2_version)


def check_alibi_support(attention_impl: str) -> bool:
    return attention_impl != 'flash' or is_flash_v2_installed(v2_version='v2.4.2')


def _check_flash_device(attn_impl: str) -> None:
    """FlashAttention-2 needs an Ampere (sm80) or newer GPU."""
    if attn_impl != 'flash':
        return
    major, _ = torch.cuda.get_device_capability()
    if major < 8:
        raise RuntimeError(
            'attn_impl="flash" requires an sm80+ GPU; use attn_impl="torch" on older hardware.',
        )


def repeat_kv_for_gqa(hidden: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Perform repeat of kv heads along a particular dimension.

    hidden.shape expected to be: (batch size, seq len, kv_n_heads, head_dim)
    n_rep: amount of repetitions of kv_n_heads
    Unlike torch.repeat_interleave, this function avoids allocating new memory.
    """
    if n_rep == 1:
        return hidden

    b, s, kv_n_heads, d = hidden.shape

    hidden = hidden[:, :, :, None, :].expand(b, s, kv_n_heads, n_rep, d)

    return hidden.reshape(b, s, kv_n_heads * n_rep, d)


def scaled_multihead_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    kv_n_heads: int,
    softmax_scale: Optional[float] = None,
    attn_bias: Optional[torch.Tensor] = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    training: bool = False,
    **kwargs: Any,
) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    q = rearrange(query, 'b s (h d) -> b h s d', h=n_heads)
    k = rearrange(key, 'b s (h d) -> b h s d', h=kv_n_heads)
    v = rearrange(value, 'b s (h d) -> b h s d', h=kv_n_heads)

    if kv_n_heads > 1 and kv_n_heads < n_heads:
        k = k.repeat_interleave(n_heads // kv_n_heads, dim=1)
        v = v.repeat_interleave(n_heads // kv_n_heads, dim=1)

    b, _, s_q, d = q.shape
    s_k = k.size(-2)

    if softmax_scale is None:
        softmax_scale = 1 / math.sqrt(d)

    attn_weight = q.matmul(k.transpose(-1, -2)) * softmax_scale

    if attn_bias is not None:
        attn_weight = attn_weight + attn_bias

    if is_causal and (not q.size(2) == 1):
        s = max(s_q, s_k)
        causal_mask = attn_weight.new_ones(s, s, dtype=torch.float32)
        causal_mask = causal_mask.tril()
        causal_mask = causal_mask.to(torch.bool)
        causal_mask = ~causal_mask
        causal_mask = causal_mask[-s_q:, -s_k:]
        attn_weight = attn_weight.masked_fill(
            causal_mask.view(1, 1, s_q, s_k),
            torch.finfo(q.dtype).min,
        )

    attn_weight = torch.softmax(attn_weight, dim=-1)

    if dropout_p:
        attn_weight = torch.nn.functional.dropout(
            attn_weight,
            p=dropout_p,
            training=training,
            inplace=True,
        )

    out = attn_weight.to(v.dtype).matmul(v)
    out = rearrange(out, 'b h s d -> b s (h d)')
    return out, None


def flash_attn_fn(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    kv_n_heads: int,
    softmax_scale: Optional[float] = None,
    dropout_p: float = 0.0,
    training: bool = False,
    is_causal: bool = False,
    flash_attn_padding_info: Optional[dict[str, torch.Tensor]] = None,
    sliding_window_size: int = -1,
    **kwargs: Any,
) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    try:
        from flash_attn import bert_padding, flash_attn_interface  # type: ignore # yapf: disable # isort: skip
    except:
        raise RuntimeError(
            'Please install flash-attn==1.0.9 or flash-attn==2.3.6',
        )

    if flash_attn_padding_info is None:
        raise ValueError('flash_attn_padding_info is required for flash attn.')

    batch_size, seqlen = query.shape[:2]
    indices_q = flash_attn_padding_info['indices_q']
    indices_k = flash_attn_padding_info['indices_k']
    indices_v = flash_attn_padding_info['indices_v']
    cu_seqlens_q = flash_attn_padding_info['cu_seqlens_q']
    cu_seqlens_k = flash_attn_padding_info['cu_seqlens_k']
    max_seqlen_q = flash_attn_padding_info['max_seqlen_q']
    max_seqlen_k = flash_attn_padding_info['max_seqlen_k']

    query_unpad = bert_padding.index_first_axis(
        rearrange(query, 'b s ... -> (b s) ...'),
        indices_q,
    )
    query_unpad = rearrange(query_unpad, 'nnz (h d) -> nnz h d', h=n_heads)

    key_unpad = bert_padding.index_first_axis(
        rearrange(key, 'b s ... -> (b s) ...'),
        indices_k,
    )
    key_unpad = rearrange(key_unpad, 'nnz (h d) -> nnz h d', h=kv_n_heads)

    value_unpad = bert_padding.index_first_axis(
        rearrange(value, 'b s ... -> (b s) ...'),
        indices_v,
    )
    value_unpad = rearrange(value_unpad, 'nnz (h d) -> nnz h d', h=kv_n_heads)

    dropout_p = dropout_p if training else 0.0

    alibi_kwargs = {}
    if check_alibi_support('flash'):
        alibi_kwargs = {'alibi_slopes': kwargs.get('alibi_slopes', None)}

    output_unpad = flash_attn_interface.flash_attn_varlen_func(
        q=query_unpad,
        k=key_unpad,
        v=value_unpad,
        cu_seqlens_q=cu_seqlens_q,
        cu_seqlens_k=cu_seqlens_k,
        max_seqlen_q=max_seqlen_q,
        max_seqlen_k=max_seqlen_k,
        dropout_p=dropout_p,
        softmax_scale=softmax_scale,
        causal=is_causal,
        window_size=(sliding_window_size, sliding_window_size),
        **alibi_kwargs,
    )

    output = bert_padding.pad_input(
        rearrange(output_unpad, 'nnz h d -> nnz (h d)'),
        indices_q,
        batch_size,
        seqlen,
    )
    return output, None


class GroupedQueryAttention(nn.Module):
    """Grouped Query Attention (GQA) is a generalization of Multi-head (MHA).

    and Multi-query attention (MQA).

    This allows the user to set a variable of number of kv_n_heads, rather than
    just n_heads or 1, as in MHA and MQA. Using torch attention
    implementation enables user to also use additive bias.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        kv_n_heads: int,
        attn_impl: str = 'flash',
        clip_qkv: Optional[float] = None,
        qk_ln: bool = False,
        softmax_scale: Optional[float] = None,
        attn_pdrop: float = 0.0,
        norm_type: str = 'low_precision_layernorm',
        fc_type: Optional[dict[str, Any]] = None,
        device: Optional[str] = None,
        bias: bool = True,
        sliding_window_size: int = -1,
    ):
        super().__init__()

        self.attn_impl = attn_impl
        self.clip_qkv = clip_qkv
        self.qk_ln = qk_ln
        self.d_model = d_model
        self.n_heads = n_heads
        self.kv_n_heads = kv_n_heads
        self.sliding_window_size = sliding_window_size
        self.head_dim = d_model // n_heads

        if self.kv_n_heads <= 0:
            raise ValueError('kv_n_heads should be greater than zero.')
        if self.kv_n_heads > self.n_heads:
            raise ValueError('The number of KV heads should be less than or equal to Q heads.')
        if self.n_heads % self.kv_n_heads != 0:
            raise ValueError('Each Q head should get the same number of KV heads.')

        _check_flash_device(attn_impl)

        self.softmax_scale = softmax_scale
        if self.softmax_scale is None:
            self.softmax_scale = 1 / math.sqrt(self.d_model / self.n_heads)
        self.attn_dropout_p = attn_pdrop

        if fc_type is None:
            fc_type = {'name': 'torch'}
        fc_type_name = fc_type['name']
        fc_kwargs = {k: v for k, v in fc_type.items() if k != 'name'}
        fc_kwargs['bias'] = bias
        if fc_type_name != 'te':
            fc_kwargs['device'] = device

        self.Wqkv = fc_type_registry.build(
            fc_type_name,
            kwargs=dict(
                in_features=self.d_model,
                out_features=self.d_model + 2 * self.kv_n_heads * self.head_dim,
                **fc_kwargs,
            ),
        )
        self.out_proj = fc_type_registry.build(
            fc_type_name,
            kwargs=dict(in_features=self.d_model, out_features=self.d_model, **fc_kwargs),
        )
        self.out_proj._is_residual = True

        if self.qk_ln:
            self.q_ln = build_norm(name=norm_type.lower(), normalized_shape=self.d_model, device=device)
            self.k_ln = build_norm(
                name=norm_type.lower(),
                normalized_shape=self.kv_n_heads * self.head_dim,
                device=device,
            )

        if self.attn_impl == 'flash':
            self.attn_fn = flash_attn_fn
        elif self.attn_impl == 'torch':
            self.attn_fn = scaled_multihead_dot_product_attention
        else:
            raise ValueError(f'{attn_impl=} is an invalid setting.')

    def forward(
        self,
        x: torch.Tensor,
        past_key_value: Optional[tuple[torch.Tensor, torch.Tensor]] = None,
        attn_bias: Optional[torch.Tensor] = None,
        is_causal: bool = True,
        flash_attn_padding_info: Optional[dict[str, torch.Tensor]] = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, Optional[torch.Tensor], Optional[tuple[torch.Tensor, torch.Tensor]]]:
        qkv = self.Wqkv(x)
        if self.clip_qkv:
            qkv = qkv.clamp(min=-self.clip_qkv, max=self.clip_qkv)

        query, key, value = qkv.split(
            [self.d_model, self.kv_n_heads * self.head_dim, self.kv_n_heads * self.head_dim],
            dim=2,
        )
        if self.qk_ln:
            dtype = query.dtype
            query = self.q_ln(query).to(dtype)
            key = self.k_ln(key).to(dtype)

        extra_attn_kwargs = {}
        if self.attn_impl == 'flash':
            extra_attn_kwargs = {
                'flash_attn_padding_info': flash_attn_padding_info,
                'sliding_window_size': self.sliding_window_size,
            }

        context, attn_weights = self.attn_fn(
            query,
            key,
            value,
            n_heads=self.n_heads,
            kv_n_heads=self.kv_n_heads,
            softmax_scale=self.softmax_scale,
            attn_bias=attn_bias,
            is_causal=is_causal,
            dropout_p=self.attn_dropout_p,
            training=self.training,
            **extra_attn_kwargs,
        )
        return self.out_proj(context), attn_weights, past_key_value


class MultiheadAttention(GroupedQueryAttention):
    """Multi-head self attention."""

    def __init__(self, d_model: int, n_heads: int, **kwargs: Any):
        super().__init__(d_model=d_model, n_heads=n_heads, kv_n_heads=n_heads, **kwargs)


class MultiQueryAttention(GroupedQueryAttention):
    """Multi-Query self attention."""

    def __init__(self, d_model: int, n_heads: int, **kwargs: Any):
        super().__init__(d_model=d_model, n_heads=n_heads, kv_n_heads=1, **kwargs)
