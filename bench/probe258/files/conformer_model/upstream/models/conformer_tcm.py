"""
XLS-R + Conformer back-end with temporal-channel modelling (TCM) heads for
speech deepfake detection.

Attention uses FlashAttention-2 when it is installed and the inputs are fp16/bf16
CUDA tensors, otherwise PyTorch SDPA. Both paths are numerically equivalent
up to kernel tolerance, so checkpoints are interchangeable.
"""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func
    HAS_FLASH_ATTN = True
except ImportError:  # CPU boxes / old GPUs
    flash_attn_func = None
    HAS_FLASH_ATTN = False


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, dim * mult),
            Swish(),
            nn.Dropout(dropout),
            nn.Linear(dim * mult, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads=4, dropout=0.1, use_flash=True):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.head_dim = dim // heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.out_drop = nn.Dropout(dropout)
        self.use_flash = use_flash

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None):
        """x: (B, T, D); key_padding_mask: (B, T) bool, True = keep."""
        B, T, D = x.shape
        h = self.norm(x)
        q, k, v = self.qkv(h).view(B, T, 3, self.heads, self.head_dim).unbind(dim=2)  # (B, T, H, Dh)
        p = self.dropout if self.training else 0.0

        if (self.use_flash and HAS_FLASH_ATTN and key_padding_mask is None
                and q.is_cuda and q.dtype in (torch.float16, torch.bfloat16)):
            out = flash_attn_func(q, k, v, dropout_p=p, softmax_scale=None, causal=False)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, Dh)
            attn_mask = None
            if key_padding_mask is not None:
                attn_mask = key_padding_mask[:, None, None, :]  # broadcast over heads / queries
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
            out = out.transpose(1, 2)
        out = out.reshape(B, T, D)
        return self.out_drop(self.proj(out))


class ConvModule(nn.Module):
    def __init__(self, dim, kernel_size=31, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pw1 = nn.Conv1d(dim, dim * 2, 1)
        self.dw = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.act = Swish()
        self.pw2 = nn.Conv1d(dim, dim, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = self.norm(x).transpose(1, 2)
        x = F.glu(self.pw1(x), dim=1)
        x = self.act(self.bn(self.dw(x)))
        x = self.pw2(x)
        return self.drop(x.transpose(1, 2))


class ConformerBlock(nn.Module):
    def __init__(self, dim, heads=4, ff_mult=4, kernel_size=31, dropout=0.1):
        super().__init__()
        self.ff1 = FeedForward(dim, ff_mult, dropout)
        self.mhsa = MultiHeadSelfAttention(dim, heads, dropout)
        self.conv = ConvModule(dim, kernel_size, dropout)
        self.ff2 = FeedForward(dim, ff_mult, dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, key_padding_mask=None):
        x = x + 0.5 * self.ff1(x)
        x = x + self.mhsa(x, key_padding_mask)
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.norm(x)


class TCMHead(nn.Module):
    """Temporal-channel modelling head: attention over time, then a small
    channel MLP on the pooled vector."""

    def __init__(self, dim, n_classes=2):
        super().__init__()
        self.time_att = nn.Linear(dim, 1)
        self.channel = nn.Sequential(
            nn.Linear(dim, dim // 4), nn.ReLU(inplace=True), nn.Linear(dim // 4, dim), nn.Sigmoid())
        self.out = nn.Linear(dim, n_classes)

    def forward(self, x):
        w = torch.softmax(self.time_att(x).squeeze(-1), dim=-1)  # (B, T)
        pooled = torch.bmm(w.unsqueeze(1), x).squeeze(1)  # (B, D)
        pooled = pooled * self.channel(pooled)
        return self.out(pooled)


class ConformerTCM(nn.Module):
    def __init__(self, in_dim=1024, dim=144, n_blocks=4, heads=4, kernel_size=31, dropout=0.1):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList(
            [ConformerBlock(dim, heads, 4, kernel_size, dropout) for _ in range(n_blocks)])
        self.head_cls = nn.Linear(dim, 2)
        self.head_tcm = TCMHead(dim)

    def forward(self, feats, lengths=None):
        x = self.proj(feats)
        B, T, _ = x.shape
        x = torch.cat([self.cls.expand(B, -1, -1), x], dim=1)
        mask = None
        if lengths is not None:
            idx = torch.arange(T + 1, device=x.device)[None, :]
            mask = idx < (lengths[:, None] + 1)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.head_cls(x[:, 0]), self.head_tcm(x[:, 1:])


class Model(nn.Module):
    def __init__(self, args, device, ssl_model):
        super().__init__()
        self.device = device
        self.ssl_model = ssl_model
        self.backend = ConformerTCM(in_dim=ssl_model.out_dim, dim=args.emb_size,
                                    n_blocks=args.num_encoders, heads=args.heads,
                                    kernel_size=args.kernel_size)
        self.alpha = getattr(args, "tcm_weight", 0.5)

    def forward(self, wav, lengths=None):
        feats = self.ssl_model.extract_feat(wav.squeeze(-1))
        if lengths is not None:
            # wav2vec 2.0 CNN stride is 320 samples
            lengths = torch.div(lengths, 320, rounding_mode="floor").clamp(max=feats.size(1))
        logits_cls, logits_tcm = self.backend(feats, lengths)
        return (1 - self.alpha) * logits_cls + self.alpha * logits_tcm


def flash_available():
    """Used by the training script to decide whether to cast the back-end to bf16."""
    if not (HAS_FLASH_ATTN and torch.cuda.is_available()):
        return False
    major, _ = torch.cuda.get_device_capability()
    return major >= 8  # FlashAttention-2 needs Ampere or newer
