"""StockFormer: temporal self-attention per stock, then cross-sectional attention per day,
gated by market-level features (index returns, breadth, volatility regime).

Shapes used throughout:
    x       [days, stocks, T, F]   per-stock feature window
    market  [days, T_m, F_m]       market features
    mask    [days, stocks]         1 for stocks tradable on that day
"""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # optional: ~2x faster temporal attention on Ampere/Hopper
    from flash_attn import flash_attn_func

    HAS_FLASH_ATTN = True
except ImportError:
    flash_attn_func = None
    HAS_FLASH_ATTN = False
    warnings.warn("flash-attn not installed, falling back to torch SDPA")


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = x.float().pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()
        return (x.float() * norm).type_as(x) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, max_len: int = 512, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_len).float()
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, :, None, :], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, :, None, :], persistent=False)

    def forward(self, q, k):
        # q, k: [B, T, H, D]
        T = q.shape[1]
        cos = self.cos_cached[:, :T].to(q.dtype)
        sin = self.sin_cached[:, :T].to(q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class TemporalAttention(nn.Module):
    """Causal self-attention along the look-back window, independently for every stock."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.1, max_len: int = 512, use_flash: bool = True):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.dropout = dropout
        self.use_flash = use_flash
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model)
        self.rotary = RotaryEmbedding(self.head_dim, max_len=max_len)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)  # [B, T, H, D]
        q, k = self.rotary(q, k)
        drop = self.dropout if self.training else 0.0

        if self.use_flash and HAS_FLASH_ATTN and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            out = flash_attn_func(q, k, v, dropout_p=drop, softmax_scale=1.0 / math.sqrt(self.head_dim), causal=True)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, T, D]
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
            out = out.transpose(1, 2)
        return self.proj(out.reshape(B, T, C))


class CrossSectionAttention(nn.Module):
    """Attention across the stocks of one day; padded stocks are masked out as keys."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.1):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.dropout = dropout
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, h, mask):
        # h: [days, stocks, C]; mask: [days, stocks]
        D, S, C = h.shape
        q = self.q(h).view(D, S, self.n_heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).view(D, S, 2, self.n_heads, self.head_dim).unbind(dim=2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        attn_mask = mask.bool()[:, None, None, :]  # broadcast over heads and queries
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0
        )
        out = out.transpose(1, 2).reshape(D, S, C)
        return self.proj(out)


class FeedForward(nn.Module):
    def __init__(self, d_model: int, mult: int = 4, dropout: float = 0.1):
        super().__init__()
        hidden = int(2 * d_model * mult / 3)
        self.w1 = nn.Linear(d_model, hidden, bias=False)
        self.w3 = nn.Linear(d_model, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d_model, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.w2(F.silu(self.w1(x)) * self.w3(x)))


class TemporalBlock(nn.Module):
    def __init__(self, d_model, n_heads, dropout, max_len, use_flash):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = TemporalAttention(d_model, n_heads, dropout, max_len, use_flash)
        self.norm2 = RMSNorm(d_model)
        self.ff = FeedForward(d_model, dropout=dropout)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ff(self.norm2(x))


class CrossBlock(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = CrossSectionAttention(d_model, n_heads, dropout)
        self.norm2 = RMSNorm(d_model)
        self.ff = FeedForward(d_model, dropout=dropout)

    def forward(self, h, mask):
        h = h + self.attn(self.norm1(h), mask)
        return h + self.ff(self.norm2(h))


class MarketGate(nn.Module):
    """Feature-wise gate computed from market information (MASTER-style)."""

    def __init__(self, d_market: int, d_feat: int, beta: float = 5.0):
        super().__init__()
        self.fc = nn.Linear(d_market, d_feat)
        self.beta = beta
        self.d_feat = d_feat

    def forward(self, market):
        # market: [days, T_m, F_m] -> gate [days, 1, 1, F]
        g = self.fc(market[:, -1, :])
        return (self.d_feat * torch.softmax(g / self.beta, dim=-1))[:, None, None, :]


class StockFormer(nn.Module):
    def __init__(
        self,
        d_feat: int = 158,
        d_market: int = 63,
        d_model: int = 256,
        n_heads: int = 8,
        n_layers_t: int = 2,
        n_layers_s: int = 2,
        lookback: int = 20,
        dropout: float = 0.1,
        beta: float = 5.0,
        use_flash: bool = True,
    ):
        super().__init__()
        self.gate = MarketGate(d_market, d_feat, beta)
        self.inp = nn.Linear(d_feat, d_model)
        self.temporal = nn.ModuleList(
            [TemporalBlock(d_model, n_heads, dropout, lookback, use_flash) for _ in range(n_layers_t)]
        )
        self.pool_q = nn.Parameter(torch.randn(d_model) / math.sqrt(d_model))
        self.cross = nn.ModuleList([CrossBlock(d_model, n_heads, dropout) for _ in range(n_layers_s)])
        self.norm = RMSNorm(d_model)
        self.head = nn.Linear(d_model, 1)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, x, market, mask):
        D, S, T, F_ = x.shape
        x = x * self.gate(market)
        h = self.inp(x).reshape(D * S, T, -1)
        for blk in self.temporal:
            h = blk(h)
        # attention pooling over time with a learned query
        scores = torch.einsum("btc,c->bt", h, self.pool_q) / math.sqrt(h.shape[-1])
        h = torch.einsum("bt,btc->bc", scores.softmax(dim=-1), h).reshape(D, S, -1)
        for blk in self.cross:
            h = blk(h, mask)
        out = self.head(self.norm(h)).squeeze(-1)
        return out.masked_fill(~mask.bool(), 0.0)
