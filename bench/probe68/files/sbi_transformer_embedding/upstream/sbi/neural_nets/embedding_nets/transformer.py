# This file is part of sbi, a toolkit for simulation-based inference. sbi is licensed
# under the Apache License Version 2.0, see <https://www.apache.org/licenses/>

"""Transformer embedding net for sets / time series of observations.

Used to summarise variable-length i.i.d. trials or long time series before they are passed to
the density estimator.  Attention goes through ``F.scaled_dot_product_attention``; on recent
GPUs we force the flash kernel for the (unmasked) self-attention, because the memory-efficient
kernel is noticeably slower for the short sequences typical in SBI.
"""
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

try:  # optional, only used for very long sequences
    from xformers.ops import memory_efficient_attention as _xformers_attention
except ImportError:  # pragma: no cover
    _xformers_attention = None


def _flash_supported(x: Tensor) -> bool:
    """Flash attention needs sm80+ and half precision inputs."""
    if not x.is_cuda:
        return False
    major, _ = torch.cuda.get_device_capability(x.device)
    return major >= 8 and x.dtype in (torch.float16, torch.bfloat16)


class RotaryEmbedding(nn.Module):
    """Rotary position embedding applied to queries and keys."""

    def __init__(self, head_dim: int, base: float = 10_000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        # x: (batch, heads, seq, head_dim)
        seq = x.shape[-2]
        t = torch.arange(seq, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x1, x2 = x.chunk(2, dim=-1)
        rotated = torch.cat((-x2, x1), dim=-1)
        return (x * cos.to(x.dtype)) + (rotated * sin.to(x.dtype))


class MultiheadSelfAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int, dropout: float = 0.0, rotary: bool = True):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.rotary = RotaryEmbedding(self.head_dim) if rotary else None

    def forward(self, x: Tensor, key_padding_mask: Optional[Tensor] = None) -> Tensor:
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.rotary is not None:
            q, k = self.rotary(q), self.rotary(k)

        attn_mask = None
        if key_padding_mask is not None:
            # True = keep, broadcast over heads and queries
            attn_mask = (~key_padding_mask)[:, None, None, :]

        dropout_p = self.dropout if self.training else 0.0
        if attn_mask is None and _flash_supported(q):
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
                                                enable_mem_efficient=False):
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
        elif _xformers_attention is not None and n > 4096 and attn_mask is None:
            out = _xformers_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                      p=dropout_p).transpose(1, 2)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
        out = out.transpose(1, 2).reshape(b, n, d)
        return self.proj(out)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4.0, dropout: float = 0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiheadSelfAttention(dim, num_heads, dropout)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, dim), nn.Dropout(dropout))

    def forward(self, x: Tensor, key_padding_mask: Optional[Tensor] = None) -> Tensor:
        x = x + self.attn(self.norm1(x), key_padding_mask)
        return x + self.mlp(self.norm2(x))


class TransformerEmbedding(nn.Module):
    """Embedding net: per-token linear projection, transformer blocks, mean or [CLS] pooling.

    Args:
        input_dim: dimension of a single observation / time step.
        output_dim: dimension of the summary statistic passed to the density estimator.
        dim, depth, num_heads: transformer width, number of blocks and heads.
        pooling: "mean" (permutation invariant, for i.i.d. trials) or "cls".
        max_len: only used for the learned positional encoding when ``rotary=False``.
    """

    def __init__(
        self,
        input_dim: int,
        output_dim: int = 20,
        dim: int = 128,
        depth: int = 4,
        num_heads: int = 4,
        dropout: float = 0.0,
        pooling: str = "mean",
        use_amp: bool = True,
    ):
        super().__init__()
        self.input_proj = nn.Linear(input_dim, dim)
        self.blocks = nn.ModuleList([TransformerBlock(dim, num_heads, dropout=dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, output_dim)
        self.pooling = pooling
        self.use_amp = use_amp
        if pooling == "cls":
            self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
            nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, x: Tensor, key_padding_mask: Optional[Tensor] = None) -> Tensor:
        if x.ndim == 2:  # (batch, seq) -> (batch, seq, 1)
            x = x.unsqueeze(-1)
        h = self.input_proj(x)
        if self.pooling == "cls":
            h = torch.cat([self.cls_token.expand(h.shape[0], -1, -1), h], dim=1)
            if key_padding_mask is not None:
                pad = torch.zeros(h.shape[0], 1, dtype=torch.bool, device=h.device)
                key_padding_mask = torch.cat([pad, key_padding_mask], dim=1)

        with torch.autocast(device_type="cuda", dtype=torch.bfloat16,
                            enabled=self.use_amp and h.is_cuda):
            for blk in self.blocks:
                h = blk(h, key_padding_mask)
        h = self.norm(h.float())

        if self.pooling == "cls":
            pooled = h[:, 0]
        elif key_padding_mask is not None:
            keep = (~key_padding_mask).unsqueeze(-1).to(h.dtype)
            pooled = (h * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        else:
            pooled = h.mean(1)
        return self.head(pooled)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight, gain=1 / math.sqrt(2))
        if module.bias is not None:
            nn.init.zeros_(module.bias)
