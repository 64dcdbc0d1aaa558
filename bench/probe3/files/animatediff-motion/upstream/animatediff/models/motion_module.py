"""Temporal motion module inserted after every spatial transformer block of the SD UNet."""
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from diffusers.models.attention import FeedForward
from diffusers.utils import BaseOutput
from diffusers.utils.import_utils import is_xformers_available
from einops import rearrange, repeat
from torch import nn

if is_xformers_available():
    import xformers
    import xformers.ops
else:
    xformers = None


def zero_module(module):
    # Zero out the parameters of a module and return it.
    for p in module.parameters():
        p.detach().zero_()
    return module


@dataclass
class TemporalTransformer3DModelOutput(BaseOutput):
    sample: torch.FloatTensor


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0., max_len=32):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return self.dropout(x)


class VersatileAttention(nn.Module):
    """Self-attention over the frame axis with optional xformers kernels."""

    def __init__(self, query_dim, heads=8, dim_head=64, dropout=0.0, upcast_softmax=True,
                 temporal_position_encoding=True, temporal_position_encoding_max_len=32):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.upcast_softmax = upcast_softmax
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_k = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_v = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, query_dim), nn.Dropout(dropout))
        self.pos_encoder = PositionalEncoding(query_dim, dropout=0.,
                                              max_len=temporal_position_encoding_max_len) \
            if temporal_position_encoding else None
        self._use_memory_efficient_attention_xformers = False

    def set_use_memory_efficient_attention_xformers(self, use_memory_efficient_attention_xformers: bool):
        if use_memory_efficient_attention_xformers:
            if not is_xformers_available():
                raise ModuleNotFoundError(
                    "Refer to https://github.com/facebookresearch/xformers for more information on how to install"
                    " xformers", name="xformers")
            elif not torch.cuda.is_available():
                raise ValueError(
                    "torch.cuda.is_available() should be True but is False. xformers' memory efficient attention is"
                    " only available for GPU ")
            else:
                try:
                    # Make sure we can run the memory efficient attention
                    _ = xformers.ops.memory_efficient_attention(
                        torch.randn((1, 2, 40), device="cuda"),
                        torch.randn((1, 2, 40), device="cuda"),
                        torch.randn((1, 2, 40), device="cuda"),
                    )
                except Exception as e:
                    raise e
        self._use_memory_efficient_attention_xformers = use_memory_efficient_attention_xformers

    def reshape_heads_to_batch_dim(self, tensor):
        batch_size, seq_len, dim = tensor.shape
        head_size = self.heads
        tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
        return tensor.permute(0, 2, 1, 3).reshape(batch_size * head_size, seq_len, dim // head_size)

    def reshape_batch_dim_to_heads(self, tensor):
        batch_size, seq_len, dim = tensor.shape
        head_size = self.heads
        tensor = tensor.reshape(batch_size // head_size, head_size, seq_len, dim)
        return tensor.permute(0, 2, 1, 3).reshape(batch_size // head_size, seq_len, dim * head_size)

    def _attention(self, query, key, value, attention_mask=None):
        if self.upcast_softmax:
            query = query.float()
            key = key.float()
        attention_scores = torch.baddbmm(
            torch.empty(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device),
            query,
            key.transpose(-1, -2),
            beta=0,
            alpha=self.scale,
        )
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = attention_scores.softmax(dim=-1)
        # cast back to the original dtype
        attention_probs = attention_probs.to(value.dtype)
        hidden_states = torch.bmm(attention_probs, value)
        return self.reshape_batch_dim_to_heads(hidden_states)

    def _memory_efficient_attention_xformers(self, query, key, value, attention_mask):
        # TODO attention_mask
        query = query.contiguous()
        key = key.contiguous()
        value = value.contiguous()
        hidden_states = xformers.ops.memory_efficient_attention(query, key, value, attn_bias=attention_mask)
        return self.reshape_batch_dim_to_heads(hidden_states)

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, video_length=None):
        d = hidden_states.shape[1]
        hidden_states = rearrange(hidden_states, "(b f) d c -> (b d) f c", f=video_length)
        if self.pos_encoder is not None:
            hidden_states = self.pos_encoder(hidden_states)
        query = self.reshape_heads_to_batch_dim(self.to_q(hidden_states))
        key = self.reshape_heads_to_batch_dim(self.to_k(hidden_states))
        value = self.reshape_heads_to_batch_dim(self.to_v(hidden_states))

        if self._use_memory_efficient_attention_xformers:
            hidden_states = self._memory_efficient_attention_xformers(query, key, value, attention_mask)
            hidden_states = hidden_states.to(query.dtype)
        else:
            hidden_states = self._attention(query, key, value, attention_mask)

        hidden_states = self.to_out(hidden_states)
        return rearrange(hidden_states, "(b d) f c -> (b f) d c", d=d)


class TemporalTransformerBlock(nn.Module):
    def __init__(self, dim, num_attention_heads, attention_head_dim, num_layers=2, dropout=0.0,
                 temporal_position_encoding_max_len=32):
        super().__init__()
        self.attention_blocks = nn.ModuleList([
            VersatileAttention(dim, heads=num_attention_heads, dim_head=attention_head_dim, dropout=dropout,
                               temporal_position_encoding_max_len=temporal_position_encoding_max_len)
            for _ in range(num_layers)
        ])
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(num_layers)])
        self.ff = FeedForward(dim, dropout=dropout, activation_fn="geglu")
        self.ff_norm = nn.LayerNorm(dim)

    def forward(self, hidden_states, video_length=None):
        for attention_block, norm in zip(self.attention_blocks, self.norms):
            norm_hidden_states = norm(hidden_states)
            hidden_states = attention_block(norm_hidden_states, video_length=video_length) + hidden_states
        hidden_states = self.ff(self.ff_norm(hidden_states)) + hidden_states
        return hidden_states


class TemporalTransformer3DModel(nn.Module):
    def __init__(self, in_channels, num_attention_heads, attention_head_dim, num_layers=1, norm_num_groups=32):
        super().__init__()
        inner_dim = num_attention_heads * attention_head_dim
        self.norm = torch.nn.GroupNorm(num_groups=norm_num_groups, num_channels=in_channels, eps=1e-6, affine=True)
        self.proj_in = nn.Linear(in_channels, inner_dim)
        self.transformer_blocks = nn.ModuleList([
            TemporalTransformerBlock(inner_dim, num_attention_heads, attention_head_dim) for _ in range(num_layers)
        ])
        self.proj_out = zero_module(nn.Linear(inner_dim, in_channels))

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None):
        assert hidden_states.dim() == 5, f"Expected hidden_states to have ndim=5, but got ndim={hidden_states.dim()}."
        video_length = hidden_states.shape[2]
        hidden_states = rearrange(hidden_states, "b c f h w -> (b f) c h w")
        batch, channel, height, weight = hidden_states.shape
        residual = hidden_states
        hidden_states = self.norm(hidden_states)
        inner_dim = hidden_states.shape[1]
        hidden_states = hidden_states.permute(0, 2, 3, 1).reshape(batch, height * weight, inner_dim)
        hidden_states = self.proj_in(hidden_states)
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, video_length=video_length)
        hidden_states = self.proj_out(hidden_states)
        hidden_states = hidden_states.reshape(batch, height, weight, inner_dim).permute(0, 3, 1, 2).contiguous()
        output = hidden_states + residual
        return rearrange(output, "(b f) c h w -> b c f h w", f=video_length)
