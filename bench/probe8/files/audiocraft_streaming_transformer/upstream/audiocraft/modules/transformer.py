# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Transformer model, with streaming support, xformers attention support
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

_efficient_attention_backend: str = 'xformers'


def set_efficient_attention_backend(backend: str = 'torch'):
    # Using torch by default, it seems a bit faster on older P100 GPUs (~20% faster).
    global _efficient_attention_backend
    assert _efficient_attention_backend in ['xformers', 'torch']
    _efficient_attention_backend = backend
    if backend == 'torch':
        torch.backends.cuda.enable_flash_sdp(True)
        torch.backends.cuda.enable_mem_efficient_sdp(True)


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


class TorchAutocast:
    """TorchAutocast utility class.
    Allows you to enable and disable autocast. This is specially useful
    when dealing with different architectures and clusters with different
    levels of support.
    """
    def __init__(self, enabled: bool, *args, **kwargs):
        self.autocast = torch.autocast(*args, **kwargs) if enabled else None

    def __enter__(self):
        if self.autocast is None:
            return
        try:
            self.autocast.__enter__()
        except RuntimeError:
            device = self.autocast.device
            dtype = self.autocast.fast_dtype
            raise RuntimeError(
                f"There was an error autocasting with dtype={dtype} device={device}\n"
                "If you are on the FAIR Cluster, you might need to use autocast_dtype=float16"
            )

    def __exit__(self, *args, **kwargs):
        if self.autocast is None:
            return
        self.autocast.__exit__(*args, **kwargs)


def create_norm_fn(norm_type: str, dim: int, **kwargs) -> nn.Module:
    if norm_type == 'layer_norm':
        return nn.LayerNorm(dim, eps=1e-5, **kwargs)
    else:
        raise ValueError(f"Unknown norm type: {norm_type}")


def create_sin_embedding(positions: torch.Tensor, dim: int, max_period: float = 10000,
                         dtype: torch.dtype = torch.float32) -> torch.Tensor:
    assert dim % 2 == 0
    half_dim = dim // 2
    positions = positions.to(dtype)
    adim = torch.arange(half_dim, device=positions.device, dtype=dtype).view(1, 1, -1)
    max_period_tensor = torch.full([], max_period, device=positions.device, dtype=dtype)
    phase = positions / (max_period_tensor ** (adim / (half_dim - 1)))
    return torch.cat([torch.cos(phase), torch.sin(phase)], dim=-1)


def expand_repeated_kv(x: torch.Tensor, n_rep: int, memory_efficient: bool) -> torch.Tensor:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep) from xlformers."""
    if n_rep == 1:
        return x
    if _efficient_attention_backend == 'torch' and memory_efficient:
        bs, n_kv_heads, slen, head_dim = x.shape
        return x[:, :, None, :, :].expand(bs, n_kv_heads, n_rep, slen, head_dim).reshape(bs, n_kv_heads * n_rep, slen, head_dim)
    else:
        bs, slen, n_kv_heads, head_dim = x.shape
        return x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(bs, slen, n_kv_heads * n_rep, head_dim)


class LayerScale(nn.Module):
    def __init__(self, channels: int, init: float = 1e-4, channel_last: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.channel_last = channel_last
        self.scale = nn.Parameter(torch.full((channels,), init, requires_grad=True, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor):
        if self.channel_last:
            return self.scale * x
        else:
            return self.scale[:, None] * x


class StreamingMultiheadAttention(StreamingModule):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 causal: bool = False, past_context: tp.Optional[int] = None, custom: bool = False,
                 memory_efficient: bool = False, rope: tp.Optional[RotaryEmbedding] = None,
                 cross_attention: bool = False, kv_repeat: int = 1, device=None, dtype=None):
        super().__init__()
        factory_kwargs = {'device': device, 'dtype': dtype}
        if past_context is not None:
            assert causal
        self.embed_dim = embed_dim
        self.causal = causal
        self.past_context = past_context
        self.memory_efficient = memory_efficient
        self.cross_attention = cross_attention
        self.num_heads = num_heads
        self.dropout = dropout
        self.kv_repeat = kv_repeat
        self.rope = rope
        if cross_attention:
            assert not causal, "Causal cannot work with cross attention."
            assert rope is None, "Rope cannot work with cross attention."
        if memory_efficient:
            assert custom, "memory_efficient requires custom=True"
        out_dim = embed_dim
        num_kv = num_heads // kv_repeat
        kv_dim = (embed_dim // num_heads) * num_kv
        out_dim += 2 * kv_dim
        self.in_proj = nn.Linear(embed_dim, out_dim, bias=bias, **factory_kwargs)
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
                key_padding_mask=None, need_weights=False, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        assert not is_causal, ("New param added in torch 2.0.1 not supported, use the causal args in the constructor.")
        time_dim = _get_attention_time_dimension(self.memory_efficient)
        layout = "b h t d" if time_dim == 2 else "b t h d"
        dtype = query.dtype
        if self.causal:
            assert attn_mask is None
            attn_mask = self._get_mask(query.shape[1], query.device, query.dtype)
        projected = nn.functional.linear(query, self.in_proj.weight, self.in_proj.bias)
        if self.kv_repeat == 1:
            bound_layout = "b h p t d" if time_dim == 2 else "b t p h d"
            packed = rearrange(projected, f"b t (p h d) -> {bound_layout}", p=3, h=self.num_heads)
            q, k, v = ops.unbind(packed, dim=2)
        else:
            embed_dim = self.embed_dim
            per_head_dim = (embed_dim // self.num_heads)
            kv_heads = self.num_heads // self.kv_repeat
            q = projected[:, :, :embed_dim]
            start = embed_dim
            end = start + per_head_dim * kv_heads
            k = projected[:, :, start: end]
            v = projected[:, :, end:]
            q = rearrange(q, f"b t (h d) -> {layout}", h=self.num_heads)
            k = rearrange(k, f"b t (h d) -> {layout}", h=kv_heads)
            v = rearrange(v, f"b t (h d) -> {layout}", h=kv_heads)
        k = expand_repeated_kv(k, self.kv_repeat, self.memory_efficient)
        v = expand_repeated_kv(v, self.kv_repeat, self.memory_efficient)
        if self.memory_efficient:
            p = self.dropout if self.training else 0
            if _efficient_attention_backend == 'torch':
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


class StreamingTransformer(StreamingModule):
    def __init__(self, d_model: int, num_heads: int, num_layers: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, causal: bool = False, memory_efficient: bool = True,
                 checkpointing: str = 'none', autocast: bool = True, device=None, dtype=None, **kwargs):
        super().__init__()
        assert d_model % num_heads == 0
        self.checkpointing = checkpointing
        self.layers = nn.ModuleList()
        for idx in range(num_layers):
            self.layers.append(
                nn.ModuleDict({
                    'norm1': create_norm_fn('layer_norm', d_model, device=device, dtype=dtype),
                    'attn': StreamingMultiheadAttention(d_model, num_heads, dropout=dropout, causal=causal,
                                                        custom=True, memory_efficient=memory_efficient,
                                                        device=device, dtype=dtype),
                    'norm2': create_norm_fn('layer_norm', d_model, device=device, dtype=dtype),
                    'ff': nn.Sequential(nn.Linear(d_model, dim_feedforward, device=device, dtype=dtype), nn.GELU(),
                                        nn.Linear(dim_feedforward, d_model, device=device, dtype=dtype)),
                }))
        self.autocast = TorchAutocast(enabled=autocast, device_type='cuda', dtype=torch.float16)

    def _apply_layer(self, layer, x):
        h = layer['norm1'](x)
        x = x + layer['attn'](h, h, h)[0]
        return x + layer['ff'](layer['norm2'](x))

    def forward(self, x: torch.Tensor, *args, **kwargs):
        with self.autocast:
            for layer in self.layers:
                if self.checkpointing == 'torch':
                    x = torch_checkpoint(self._apply_layer, layer, x, use_reentrant=False)
                else:
                    x = self._apply_layer(layer, x)
        return x
