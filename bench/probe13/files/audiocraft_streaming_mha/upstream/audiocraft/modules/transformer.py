# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Transformer model, with streaming support, xformer attention support
and easy causal attention with a potentially finite receptive field.

See `StreamingTransformer` for more information.

Unlike regular PyTorch Transformer, we make the hard choice that batches are first.
"""

import typing as tp

from einops import rearrange
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint as torch_checkpoint
from xformers import ops

from .rope import RotaryEmbedding
from .streaming import StreamingModule

_efficient_attention_backend: str = 'torch'


def set_efficient_attention_backend(backend: str = 'torch'):
    # Using torch by default, it seems a bit faster on older P100 GPUs (~20% faster).
    global _efficient_attention_backend
    assert _efficient_attention_backend in ['xformers', 'torch']
    _efficient_attention_backend = backend


def _get_attention_time_dimension(memory_efficient: bool) -> int:
    if _efficient_attention_backend == 'torch' and memory_efficient:
        return 2
    else:
        return 1


def _is_profiled() -> bool:
    # Return true if we are currently running with a xformers profiler activated.
    try:
        from xformers.profiler import profiler
    except ImportError:
        return False
    return profiler._Profiler._CURRENT_PROFILER is not None


def create_norm_fn(norm_type: str, dim: int, **kwargs) -> nn.Module:
    if norm_type == 'layer_norm':
        return nn.LayerNorm(dim, eps=1e-5, **kwargs)
    else:
        raise ValueError(f"Unknown norm type: {norm_type}")


class StreamingMultiheadAttention(StreamingModule):
    """Similar to `nn.MultiheadAttention` but with support for streaming, causal evaluation.

    Args:
        embed_dim (int): Dimension to project to.
        num_heads (int): Number of heads.
        dropout (float): Dropout level.
        causal (bool): Causal mask applied automatically.
        memory_efficient (bool): Use xformers based memory efficient attention.
        attention_as_float32 (bool): Perform the attention as float32
            (especially important with memory_efficient as autocast won't do this automatically).
    """
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 causal: bool = False, past_context: tp.Optional[int] = None, custom: bool = False,
                 memory_efficient: bool = False, attention_as_float32: bool = False,
                 rope: tp.Optional[RotaryEmbedding] = None, device=None, dtype=None):
        super().__init__()
        factory_kwargs = {'device': device, 'dtype': dtype}
        self.embed_dim = embed_dim
        self.causal = causal
        self.past_context = past_context
        self.memory_efficient = memory_efficient
        self.attention_as_float32 = attention_as_float32
        self.rope = rope
        self.num_heads = num_heads
        self.dropout = dropout
        self.in_proj_weight = nn.Parameter(torch.empty((3 * embed_dim, embed_dim), **factory_kwargs))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim, **factory_kwargs)) if bias else None
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory_kwargs)

    def _get_mask(self, current_steps: int, device: torch.device, dtype: torch.dtype):
        time_dim = _get_attention_time_dimension(self.memory_efficient)
        if self.memory_efficient:
            from xformers.ops import LowerTriangularMask
            if current_steps == 1:
                return None
            elif 'past_keys' in self._streaming_state:
                raise RuntimeError("Not supported at the moment")
            else:
                return LowerTriangularMask()
        if self._streaming_state:
            past_keys = self._streaming_state['past_keys']
            past_steps = past_keys.shape[time_dim]
        else:
            past_steps = 0
        queries_pos = torch.arange(past_steps, current_steps + past_steps, device=device).view(-1, 1)
        keys_pos = torch.arange(past_steps + current_steps, device=device).view(1, -1)
        delta = queries_pos - keys_pos
        valid = delta >= 0
        if self.past_context is not None:
            valid &= (delta <= self.past_context)
        return torch.where(valid, torch.zeros([], device=device, dtype=dtype),
                           torch.full([], float('-inf'), device=device, dtype=dtype))

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                key_padding_mask=None, need_weights=False, attn_mask=None, average_attn_weights=True,
                is_causal=False):
        assert not is_causal, ("New param added in torch 2.0.1 not supported, use the causal args in the constructor.")
        time_dim = _get_attention_time_dimension(self.memory_efficient)
        layout = "b h t d" if time_dim == 2 else "b t h d"
        dtype = query.dtype
        if self.causal:
            assert attn_mask is None
            attn_mask = self._get_mask(query.shape[1], query.device, query.dtype)

        projected = F.linear(query, self.in_proj_weight, self.in_proj_bias)
        bound_layout = "b h p t d" if time_dim == 2 else "b t p h d"
        packed = rearrange(projected, f"b t (p h d) -> {bound_layout}", p=3, h=self.num_heads)
        q, k, v = ops.unbind(packed, dim=2)

        if self.rope:
            q, k = self.rope.rotate_qk(q, k, time_dim=time_dim)

        if self.attention_as_float32:
            q, k, v = [x.float() for x in [q, k, v]]
        if self.memory_efficient:
            p = self.dropout if self.training else 0
            if _efficient_attention_backend == 'torch':
                with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                    x = torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, is_causal=attn_mask is not None, dropout_p=p)
            else:
                x = ops.memory_efficient_attention(q, k, v, attn_mask, p=p)
        else:
            q = q / q.shape[-1] ** 0.5
            key_layout = layout.replace('t', 'k')
            query_layout = layout
            pre_w = torch.einsum(f"{query_layout},{key_layout}-> b h t k", q, k)
            if attn_mask is not None:
                pre_w = pre_w + attn_mask
            w = torch.softmax(pre_w, dim=-1)
            w = F.dropout(w, self.dropout, training=self.training).to(v)
            x = torch.einsum(f"b h t k, {key_layout} -> {layout}", w, v)
        x = x.to(dtype)
        x = rearrange(x, f"{layout} -> b t (h d)", h=self.num_heads)
        x = self.out_proj(x)
        return x, None
