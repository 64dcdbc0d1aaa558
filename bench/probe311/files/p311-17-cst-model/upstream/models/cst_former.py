"""
CST-former: Transformer with Channel-Spectro-Temporal attention for SELD.

Input : (B, C_in, T, F) multichannel features (e.g. 7-ch SALSA-Lite or 7-ch logmel+IV)
Output: (B, T_label, 3 tracks * 3 axes * n_classes) multi-ACCDOA
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange

_HAS_SDPA = hasattr(F, 'scaled_dot_product_attention')


class ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch, pool=(1, 2), dropout=0.05):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.pool = nn.AvgPool2d(pool) if pool is not None else nn.Identity()
        self.drop = nn.Dropout2d(dropout)

    def forward(self, x):
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        return self.drop(self.pool(x))


class Attention(nn.Module):
    """Multi-head self attention; uses the fused SDPA kernels when available."""

    def __init__(self, dim, heads=8, dropout=0.0, use_flash=True):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.use_flash = use_flash and _HAS_SDPA

    def forward(self, x):
        B, N, D = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B, H, N, d)
        p = self.dropout if self.training else 0.0
        if self.use_flash and x.is_cuda:
            # flash attention requires fp16/bf16 and head_dim <= 128; the math kernel is slow for long T
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        elif _HAS_SDPA:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale
            attn = attn.softmax(dim=-1)
            attn = F.dropout(attn, p=p, training=self.training)
            out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(B, N, D)
        return self.proj(out)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, dim * mult),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(dim * mult, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class CSTBlock(nn.Module):
    """Channel attention -> spectral attention -> temporal attention, each with a pre-norm residual."""

    def __init__(self, dim, heads, n_channels, dropout=0.1, use_flash=True):
        super().__init__()
        self.n_channels = n_channels
        self.norm_c = nn.LayerNorm(dim)
        self.attn_c = Attention(dim, heads, dropout, use_flash)
        self.norm_f = nn.LayerNorm(dim)
        self.attn_f = Attention(dim, heads, dropout, use_flash)
        self.norm_t = nn.LayerNorm(dim)
        self.attn_t = Attention(dim, heads, dropout, use_flash)
        self.norm_ff = nn.LayerNorm(dim)
        self.ff = FeedForward(dim, 4, dropout)

    def forward(self, x):
        # x: (B, C, T, F, D)
        B, C, T, Fq, D = x.shape
        # channel attention: tokens are channels, for every (t, f)
        h = rearrange(x, 'b c t f d -> (b t f) c d')
        h = h + self.attn_c(self.norm_c(h))
        # spectral attention: tokens are frequency bins, for every (c, t)
        h = rearrange(h, '(b t f) c d -> (b c t) f d', b=B, t=T, f=Fq)
        h = h + self.attn_f(self.norm_f(h))
        # temporal attention: tokens are frames, for every (c, f)
        h = rearrange(h, '(b c t) f d -> (b c f) t d', b=B, c=C, t=T)
        h = h + self.attn_t(self.norm_t(h))
        h = h + self.ff(self.norm_ff(h))
        return rearrange(h, '(b c f) t d -> b c t f d', b=B, c=C, f=Fq)


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim, max_len=2000):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        pe = torch.zeros(max_len, dim)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer('pe', pe, persistent=False)

    def forward(self, t_len):
        return self.pe[:t_len]


class CSTFormer(nn.Module):
    def __init__(self, in_channels=7, n_mic_channels=4, n_classes=13, n_tracks=3, encoder_ch=(64, 128, 256),
                 dim=128, heads=8, depth=2, label_pool=5, dropout=0.1, use_flash=True):
        super().__init__()
        self.n_classes = n_classes
        self.n_tracks = n_tracks
        self.label_pool = label_pool
        self.n_mic = n_mic_channels
        # per-channel conv encoder (shared weights across mic channels, stacked spatial features as extra input)
        chs = [in_channels] + list(encoder_ch)
        self.encoder = nn.Sequential(*[
            ConvBlock(chs[i], chs[i + 1], pool=(1, 4) if i < 2 else (1, 2), dropout=0.05) for i in range(len(encoder_ch))
        ])
        self.to_tokens = nn.Linear(encoder_ch[-1] // n_mic_channels, dim)
        self.pos_t = SinusoidalPosEmb(dim)
        self.blocks = nn.ModuleList([
            CSTBlock(dim, heads, n_mic_channels, dropout, use_flash) for _ in range(depth)
        ])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Sequential(
            nn.Linear(dim * n_mic_channels, 256),
            nn.GELU(),
            nn.Linear(256, n_tracks * 3 * n_classes),
        )

    def forward(self, x):
        # x: (B, C_in, T, F)
        x = self.encoder(x)                                # (B, E, T, F')
        B, E, T, Fq = x.shape
        x = x.view(B, self.n_mic, E // self.n_mic, T, Fq)  # split feature maps into pseudo-channels
        x = rearrange(x, 'b c e t f -> b c t f e')
        x = self.to_tokens(x)
        x = x + self.pos_t(T)[None, None, :, None, :].to(x.dtype)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        x = x.mean(dim=3)                                   # pool frequency -> (B, C, T, D)
        x = rearrange(x, 'b c t d -> b t (c d)')
        # pool to the label frame rate (100 ms)
        x = F.avg_pool1d(x.transpose(1, 2), self.label_pool, self.label_pool).transpose(1, 2)
        out = torch.tanh(self.head(x))
        return out


def build_cst_former(cfg):
    return CSTFormer(**cfg)


if __name__ == '__main__':
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    m = CSTFormer().to(dev)
    feats = torch.randn(2, 7, 250, 64, device=dev)
    with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=dev == 'cuda'):
        y = m(feats)
    print(y.shape, sum(p.numel() for p in m.parameters()) / 1e6, 'M params')
