"""Attention blocks for irregularly sampled multi-band light curves (ELAsTiCC / ZTF alert streams).

Each alert history is a variable-length sequence of (mjd, band, flux, flux_err) tokens. Rather than
padding every batch to the longest light curve (some ELAsTiCC objects have >1000 epochs, most have
<60), we unpad the batch and call the FlashAttention-2 varlen kernel, which is ~4x faster than
padded SDPA at our batch sizes on A100. Falls back to torch SDPA with a key padding mask when
flash-attn is not installed (CPU, older GPUs, laptops).
"""
import math
import warnings
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_varlen_func
    from flash_attn.bert_padding import pad_input, unpad_input

    HAS_FLASH_ATTN = True
except ImportError:  # pragma: no cover - depends on the environment
    HAS_FLASH_ATTN = False
    warnings.warn("flash-attn not installed; using torch scaled_dot_product_attention (padded)")


def _flash_supported(x: torch.Tensor) -> bool:
    """FlashAttention-2 needs an Ampere+ GPU and fp16/bf16 activations."""
    if not HAS_FLASH_ATTN or x.device.type != "cuda":
        return False
    if x.dtype not in (torch.float16, torch.bfloat16):
        return False
    major, _ = torch.cuda.get_device_capability(x.device)
    return major >= 8


class FourierTimeEncoding(nn.Module):
    """Continuous-time positional encoding: sin/cos of (mjd - mjd_first) at learnable frequencies."""

    def __init__(self, d_model: int, max_period_days: float = 1000.0, learnable: bool = True):
        super().__init__()
        assert d_model % 2 == 0
        freqs = torch.exp(torch.linspace(0, -math.log(max_period_days), d_model // 2)) * 2 * math.pi
        if learnable:
            self.freqs = nn.Parameter(freqs)
        else:
            self.register_buffer("freqs", freqs)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        # t: (B, L) days since first detection
        angles = t[..., None] * self.freqs
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class LightCurveAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """
        Args:
            x: (B, L, D) token embeddings
            key_padding_mask: (B, L) bool, True where the token is *valid*
        """
        B, L, D = x.shape
        dropout_p = self.dropout if self.training else 0.0

        if key_padding_mask is not None and _flash_supported(x):
            # --- varlen FlashAttention path ---
            x_unpad, indices, cu_seqlens, max_seqlen, *_ = unpad_input(x, key_padding_mask)
            qkv = self.qkv(x_unpad).view(-1, 3, self.n_heads, self.head_dim)
            q, k, v = qkv.unbind(dim=1)
            out = flash_attn_varlen_func(
                q, k, v,
                cu_seqlens, cu_seqlens,
                max_seqlen, max_seqlen,
                dropout_p=dropout_p,
                softmax_scale=1.0 / math.sqrt(self.head_dim),
                causal=False,
            )
            out = pad_input(out.reshape(-1, D), indices, B, L)
            return self.out(out)

        # --- padded SDPA fallback ---
        qkv = self.qkv(x).view(B, L, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn_mask = None
        if key_padding_mask is not None:
            attn_mask = key_padding_mask[:, None, None, :]  # broadcast over heads and queries
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
        out = out.transpose(1, 2).reshape(B, L, D)
        return self.out(out)


class LightCurveBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, mlp_ratio: float = 4.0, dropout: float = 0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = LightCurveAttention(d_model, n_heads, dropout=dropout)
        self.norm2 = nn.LayerNorm(d_model)
        hidden = int(d_model * mlp_ratio)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, d_model),
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_padding_mask=None):
        x = x + self.drop(self.attn(self.norm1(x), key_padding_mask))
        x = x + self.drop(self.mlp(self.norm2(x)))
        return x


class LightCurveEncoder(nn.Module):
    """Transformer encoder over (time, band, flux) tokens with a [CLS] summary token."""

    def __init__(self, n_bands: int = 6, d_model: int = 192, n_heads: int = 6, depth: int = 6,
                 n_classes: int = 20, dropout: float = 0.1):
        super().__init__()
        self.band_embed = nn.Embedding(n_bands, d_model)
        self.flux_proj = nn.Linear(2, d_model)  # (asinh flux, log flux_err)
        self.time_enc = FourierTimeEncoding(d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))
        self.blocks = nn.ModuleList([LightCurveBlock(d_model, n_heads, dropout=dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)
        nn.init.trunc_normal_(self.cls, std=0.02)

    def forward(self, t, band, flux, flux_err, mask):
        tok = self.flux_proj(torch.stack([torch.asinh(flux), torch.log(flux_err.clamp_min(1e-3))], dim=-1))
        tok = tok + self.band_embed(band) + self.time_enc(t)
        B = tok.shape[0]
        tok = torch.cat([self.cls.expand(B, -1, -1), tok], dim=1)
        mask = torch.cat([torch.ones(B, 1, dtype=torch.bool, device=mask.device), mask], dim=1)
        for blk in self.blocks:
            tok = blk(tok, key_padding_mask=mask)
        return self.head(self.norm(tok[:, 0]))
