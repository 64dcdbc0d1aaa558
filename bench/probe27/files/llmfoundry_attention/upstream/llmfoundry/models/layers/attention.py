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
from torch import nn


def is_flash_v2_installed():
    try:
        import flash_attn as flash_attn
    except:
        return False
    return version.parse(flash_attn.__version__) >= version.parse('2.0.0')


def is_flash_v1_installed():
    try:
        import flash_attn as flash_attn
    except:
        return False
    return version.parse(flash_attn.__version__) < version.parse('2.0.0')


def scaled_multihead_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    softmax_scale: Optional[float] = None,
    attn_bias: Optional[torch.Tensor] = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    training: bool = False,
) -> torch.Tensor:
    q = rearrange(query, 'b s (h d) -> b h s d', h=n_heads)
    k = rearrange(key, 'b s (h d) -> b h d s', h=n_heads)
    v = rearrange(value, 'b s (h d) -> b h s d', h=n_heads)
    b, _, s_q, d = q.shape
    s_k = k.size(-1)
    if softmax_scale is None:
        softmax_scale = 1 / math.sqrt(d)
    attn_weight = q.matmul(k) * softmax_scale
    if attn_bias is not None:
        attn_weight = attn_weight + attn_bias
    min_val = torch.finfo(q.dtype).min
    if is_causal and (not q.size(2) == 1):
        s = max(s_q, s_k)
        causal_mask = attn_weight.new_ones(s, s, dtype=torch.float32)
        causal_mask = causal_mask.tril()
        causal_mask = causal_mask.to(torch.bool)
        causal_mask = ~causal_mask
        causal_mask = causal_mask[-s_q:, -s_k:]
        attn_weight = attn_weight.masked_fill(causal_mask.view(1, 1, s_q, s_k), min_val)
    attn_weight = torch.softmax(attn_weight, dim=-1)
    if dropout_p:
        attn_weight = torch.nn.functional.dropout(attn_weight, p=dropout_p, training=training, inplace=True)
    out = attn_weight.to(v.dtype).matmul(v)
    return rearrange(out, 'b h s d -> b s (h d)')


def check_valid_inputs(*tensors: torch.Tensor, valid_dtypes: Optional[list] = None):
    if valid_dtypes is None:
        valid_dtypes = [torch.float16, torch.bfloat16]
    for tensor in tensors:
        if tensor.dtype not in valid_dtypes:
            raise TypeError(f'tensor.dtype={tensor.dtype!r} must be in valid_dtypes={valid_dtypes!r}.')
        if not tensor.is_cuda:
            raise TypeError(f'Inputs must be cuda tensors (tensor.is_cuda={tensor.is_cuda!r}).')


def flash_attn_fn(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    softmax_scale: Optional[float] = None,
    attn_bias: Optional[torch.Tensor] = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    training: bool = False,
) -> torch.Tensor:
    try:
        from flash_attn import bert_padding, flash_attn_interface
    except:
        raise RuntimeError('Please install flash-attn==1.0.9 or flash-attn==2.3.6')
    check_valid_inputs(query, key, value)
    if attn_bias is not None:
        raise NotImplementedError('attn_bias not implemented for flash attn.')
    batch_size, seqlen = query.shape[:2]
    query = rearrange(query, 'b s (h d) -> b s h d', h=n_heads)
    key = rearrange(key, 'b s (h d) -> b s h d', h=n_heads)
    value = rearrange(value, 'b s (h d) -> b s h d', h=n_heads)
    dropout_p = dropout_p if training else 0.0
    output = flash_attn_interface.flash_attn_func(
        query, key, value, dropout_p=dropout_p, softmax_scale=softmax_scale, causal=is_causal)
    return rearrange(output, 'b s h d -> b s (h d)')


def triton_flash_attn_fn(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    n_heads: int,
    softmax_scale: Optional[float] = None,
    attn_bias: Optional[torch.Tensor] = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    training: bool = False,
) -> torch.Tensor:
    try:
        from llmfoundry.models.layers.flash_attn_triton import flash_attn_func
    except:
        raise RuntimeError('Requirements for `attn_impl: triton` not installed. Either (1) have a CUDA-compatible GPU '
                           'and `pip install .[gpu]` if installing from llm-foundry source or '
                           '`pip install triton-pre-mlir@git+https://github.com/vchiley/triton.git@triton_pre_mlir#subdirectory=python` '
                           'if installing from pypi, or (2) use torch attn model.attn_config.attn_impl=torch.')
    check_valid_inputs(query, key, value)
    if dropout_p:
        raise NotImplementedError('Dropout not implemented for attn_impl: triton.')
    query = rearrange(query, 'b s (h d) -> b s h d', h=n_heads)
    key = rearrange(key, 'b s (h d) -> b s h d', h=n_heads)
    value = rearrange(value, 'b s (h d) -> b s h d', h=n_heads)
    attn_output = flash_attn_func(query, key, value, attn_bias, is_causal, softmax_scale)
    return rearrange(attn_output, 'b s h d -> b s (h d)')


class GroupedQueryAttention(nn.Module):
    """Multi-head attention with the implementation picked by ``attn_impl``."""

    def __init__(self, d_model: int, n_heads: int, attn_impl: str = 'triton', softmax_scale: Optional[float] = None,
                 attn_pdrop: float = 0.0, device: Optional[str] = None):
        super().__init__()
        self.attn_impl = attn_impl
        self.d_model = d_model
        self.n_heads = n_heads
        self.softmax_scale = softmax_scale
        if self.softmax_scale is None:
            self.softmax_scale = 1 / math.sqrt(self.d_model / self.n_heads)
        self.attn_dropout_p = attn_pdrop
        self.Wqkv = nn.Linear(self.d_model, 3 * self.d_model, device=device)
        self.out_proj = nn.Linear(self.d_model, self.d_model, device=device)
        self.out_proj._is_residual = True
        if self.attn_impl == 'flash':
            self.attn_fn = flash_attn_fn
        elif self.attn_impl == 'triton':
            self.attn_fn = triton_flash_attn_fn
        elif self.attn_impl == 'torch':
            self.attn_fn = scaled_multihead_dot_product_attention
        else:
            raise ValueError(f'attn_impl={attn_impl!r} is an invalid setting.')

    def forward(self, x: torch.Tensor, attn_bias: Optional[torch.Tensor] = None, is_causal: bool = True) -> torch.Tensor:
        qkv = self.Wqkv(x)
        query, key, value = qkv.chunk(3, dim=2)
        context = self.attn_fn(query, key, value, self.n_heads, softmax_scale=self.softmax_scale,
                               attn_bias=attn_bias, is_causal=is_causal, dropout_p=self.attn_dropout_p,
                               training=self.training)
        return self.out_proj(context)


def attn_bias_shape(attn_impl: str, n_heads: int, seq_len: int, alibi: bool, causal: bool):
    if attn_impl == 'flash':
        return None
    elif attn_impl in ['torch', 'triton']:
        if alibi:
            return (1, n_heads, 1, seq_len)
        return None
    raise ValueError(f'attn_impl={attn_impl!r} is an invalid setting.')
