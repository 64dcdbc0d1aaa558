import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def get_alibi_slopes(n_heads: int) -> list:
    """
    ALiBi slopes from "Train Short, Test Long" (Press et al.)
    https://github.com/ofirpress/attention_with_linear_biases
    """

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return get_slopes_power_of_2(n_heads)
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_alibi_slopes(2 * closest_power_of_2)[0::2][: n_heads - closest_power_of_2]
    )


def get_relative_bias_matrix(n: int, num_heads: int, device="cpu") -> Tensor:
    """Relative Bias matrix for ALiBi (causal: only the past is attended)"""
    slopes = torch.tensor(get_alibi_slopes(num_heads), device=device)
    pos = torch.arange(n, device=device)
    rel = (pos[None, :] - pos[:, None]).abs().neg().float()  # (n, n)
    alibi = slopes[:, None, None] * rel[None]  # (heads, n, n)
    future_mask = torch.triu(torch.ones(n, n, device=device, dtype=torch.bool), diagonal=1)
    alibi = alibi.masked_fill(future_mask, float("-inf"))
    return alibi.unsqueeze(0)  # (1, heads, n, n)


class MultiHeadAttentionAlibi(nn.Module):
    def __init__(self, dim: int, num_heads: int, dropout: float = 0.1, context_limit: int = -1):
        super().__init__()
        assert dim % num_heads == 0, "dim must be divisible by num_heads"
        self.dim = dim
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.dropout = dropout
        self.context_limit = context_limit

        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("alibi_cache", torch.zeros(0), persistent=False)

    def get_alibi_mask(self, T: int, device) -> Tensor:
        if self.alibi_cache.shape[-1] < T or self.alibi_cache.device != device:
            self.alibi_cache = get_relative_bias_matrix(max(T, 1000), self.num_heads, device=device)
        return self.alibi_cache[..., :T, :T]

    def _split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, Q: Tensor, K: Tensor, V: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        B, T, D = Q.shape
        q, k, v = self._split(self.q(Q)), self._split(self.k(K)), self._split(self.v(V))

        attn_bias = self.get_alibi_mask(T, q.device).to(q.dtype)
        if mask is not None:
            attn_bias = attn_bias + mask

        # The ALiBi bias is an arbitrary float mask: flash attention can not take it, so we
        # force the memory-efficient / math kernels.
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=True):
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=attn_bias, dropout_p=self.dropout if self.training else 0.0
            )
        y = y.transpose(1, 2).contiguous().view(B, T, D)
        return self.proj(y), attn_bias


class FFN(nn.Module):
    def __init__(self, dim: int, dff: int, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dff), nn.GELU(), nn.Dropout(dropout), nn.Linear(dff, dim))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class TransformerLayer(nn.Module):
    """Pre-LN transformer layer, optionally with cross-attention to the other speaker channel"""

    def __init__(self, dim: int = 256, ffn_dim: int = 512, num_heads: int = 4, dropout: float = 0.1, cross_attention: bool = False):
        super().__init__()
        self.ln_self = nn.LayerNorm(dim)
        self.self_attn = MultiHeadAttentionAlibi(dim, num_heads, dropout)
        self.cross_attention = cross_attention
        if cross_attention:
            self.ln_cross = nn.LayerNorm(dim)
            self.cross_attn = MultiHeadAttentionAlibi(dim, num_heads, dropout)
        self.ln_ffn = nn.LayerNorm(dim)
        self.ffn = FFN(dim, ffn_dim, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, src: Optional[Tensor] = None, mask: Optional[Tensor] = None) -> Tuple[Tensor, Dict]:
        h = self.ln_self(x)
        sa, sa_w = self.self_attn(h, h, h, mask)
        x = x + self.dropout(sa)
        attn = {"self": sa_w}
        if self.cross_attention and src is not None:
            h = self.ln_cross(x)
            ca, ca_w = self.cross_attn(h, src, src, mask)
            x = x + self.dropout(ca)
            attn["cross"] = ca_w
        x = x + self.dropout(self.ffn(self.ln_ffn(x)))
        return x, attn


class GPT(nn.Module):
    def __init__(self, dim: int, dff_factor: int = 3, num_layers: int = 4, num_heads: int = 4, dropout: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList(
            [TransformerLayer(dim, dim * dff_factor, num_heads, dropout) for _ in range(num_layers)]
        )
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, x: Tensor, attention: bool = False) -> Dict[str, Tensor]:
        all_attention = []
        for layer in self.layers:
            x, attn = layer(x)
            if attention:
                all_attention.append(attn["self"])
        ret = {"x": self.ln_f(x)}
        if attention:
            ret["attn"] = torch.stack(all_attention, dim=1)
        return ret


class TransformerStereo(nn.Module):
    """Self-attention on each channel, then cross-attention between the two speaker channels"""

    def __init__(
        self,
        dim: int = 256,
        self_layers: int = 1,
        cross_layers: int = 3,
        num_heads: int = 4,
        dff_factor: int = 2,
        dropout: float = 0.1,
        num_layers: int = 4,
    ):
        super().__init__()
        self.ar_channel = GPT(dim, dff_factor, self_layers, num_heads, dropout)
        self.cross = nn.ModuleList(
            [TransformerLayer(dim, dim * dff_factor, num_heads, dropout, cross_attention=True) for _ in range(cross_layers)]
        )
        self.combinator = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU())

    def forward(self, x1: Tensor, x2: Tensor, attention: bool = False) -> Dict[str, Tensor]:
        o1 = self.ar_channel(x1, attention=attention)
        o2 = self.ar_channel(x2, attention=attention)
        h1, h2 = o1["x"], o2["x"]
        for layer in self.cross:
            n1, _ = layer(h1, src=h2)
            n2, _ = layer(h2, src=h1)
            h1, h2 = n1, n2
        out = self.combinator(torch.cat([h1, h2], dim=-1))
        return {"x": out, "x1": h1, "x2": h2}
