"""Building blocks of the weather foundation model: per-variable tokenization, cross-attention
variable aggregation (ragged: each sample can carry a different set of variables), and
pre-norm transformer blocks with rotary position embeddings on the (lat, lon) token grid.
"""
import math
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex.normalization import FusedRMSNorm
from flash_attn import flash_attn_varlen_func

try:  # memory-efficient attention for the long (lat x lon) token sequences
    import xformers.ops as xops
except ImportError:  # falls back to PyTorch SDPA
    xops = None


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: [B, H, L, D]; cos/sin: [1, 1, L, D]
    return x * cos + rotate_half(x) * sin


class RotaryEmbedding2D(nn.Module):
    """Axial 2-D RoPE: half of the head dim encodes latitude, the other half longitude."""

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        assert head_dim % 4 == 0
        quarter = head_dim // 4
        inv_freq = 1.0 / (base ** (torch.arange(0, quarter, dtype=torch.float32) / quarter))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, n_lat: int, n_lon: int, device, dtype) -> Tuple[torch.Tensor, torch.Tensor]:
        lat = torch.arange(n_lat, device=device, dtype=torch.float32)
        lon = torch.arange(n_lon, device=device, dtype=torch.float32)
        f_lat = torch.outer(lat, self.inv_freq)  # [n_lat, D/4]
        f_lon = torch.outer(lon, self.inv_freq)  # [n_lon, D/4]
        f = torch.cat([f_lat[:, None, :].expand(-1, n_lon, -1), f_lon[None, :, :].expand(n_lat, -1, -1)], dim=-1)
        f = f.reshape(n_lat * n_lon, -1)
        emb = torch.cat([f, f], dim=-1)
        return emb.cos()[None, None].to(dtype), emb.sin()[None, None].to(dtype)


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w12 = nn.Linear(dim, 2 * hidden, bias=False)
        self.w3 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        x1, x2 = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(x1) * x2)


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float = 0.0):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x, cos, sin):
        B, L, C = x.shape
        q, k, v = self.qkv(x).reshape(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        p = self.dropout if self.training else 0.0
        if xops is not None and x.is_cuda:
            # xformers wants [B, L, H, D]
            out = xops.memory_efficient_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), p=p)
            out = out.reshape(B, L, C)
        else:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            out = out.transpose(1, 2).reshape(B, L, C)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: float = 4.0, dropout: float = 0.0):
        super().__init__()
        self.norm1 = FusedRMSNorm(dim, eps=1e-6)
        self.attn = SelfAttention(dim, heads, dropout)
        self.norm2 = FusedRMSNorm(dim, eps=1e-6)  # second pre-norm
        self.mlp = SwiGLU(dim, int(dim * mlp_ratio * 2 / 3))

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm1(x), cos, sin)
        x = x + self.mlp(self.norm2(x))
        return x


class VariableAggregation(nn.Module):
    """Cross-attention from one learned query per token position to the V variable tokens there.

    Samples in a batch carry different numbers of variables (stations, levels), so the variable
    axis is packed: tokens of all samples are concatenated and indexed by cumulative lengths.
    """

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.query = nn.Parameter(torch.randn(1, dim) * 0.02)
        self.kv = nn.Linear(dim, 2 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, tokens: torch.Tensor, n_vars: List[int], n_pos: int) -> torch.Tensor:
        # tokens: [sum_b(n_vars[b]) * n_pos, dim], ordered (sample, position, variable)
        device = tokens.device
        total_q = len(n_vars) * n_pos
        q = self.query.expand(total_q, -1).reshape(total_q, self.heads, self.head_dim)
        k, v = self.kv(tokens).reshape(-1, 2, self.heads, self.head_dim).unbind(1)
        seqlens_k = torch.tensor([nv for nv in n_vars for _ in range(n_pos)], dtype=torch.int32, device=device)
        cu_seqlens_k = F.pad(torch.cumsum(seqlens_k, 0, dtype=torch.int32), (1, 0))
        cu_seqlens_q = torch.arange(0, total_q + 1, dtype=torch.int32, device=device)
        out = flash_attn_varlen_func(
            q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16),
            cu_seqlens_q, cu_seqlens_k, 1, int(max(n_vars)),
            dropout_p=0.0, softmax_scale=1.0 / math.sqrt(self.head_dim), causal=False,
        )
        out = out.to(tokens.dtype).reshape(len(n_vars), n_pos, -1)
        return self.proj(out)


class WeatherBackbone(nn.Module):
    def __init__(self, dim=1024, depth=24, heads=16, n_lat=32, n_lon=64, dropout=0.0, compile_blocks=False):
        super().__init__()
        self.n_lat, self.n_lon = n_lat, n_lon
        self.agg = VariableAggregation(dim, heads)
        self.blocks = nn.ModuleList([Block(dim, heads, dropout=dropout) for _ in range(depth)])
        self.norm = FusedRMSNorm(dim, eps=1e-6)  # final norm
        self.rope = RotaryEmbedding2D(dim // heads)
        if compile_blocks:
            self.blocks = nn.ModuleList([torch.compile(b, mode="max-autotune", fullgraph=True) for b in self.blocks])

    def forward(self, tokens: torch.Tensor, n_vars: List[int]) -> torch.Tensor:
        n_pos = self.n_lat * self.n_lon
        x = self.agg(tokens, n_vars, n_pos)
        cos, sin = self.rope(self.n_lat, self.n_lon, x.device, x.dtype)
        for blk in self.blocks:
            x = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False) if self.training else blk(x, cos, sin)
        return self.norm(x)
