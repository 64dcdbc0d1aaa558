"""Temporal transformer head used by FTCN-TT.

The fully temporal convolution backbone (a 3D ResNet-50 with all spatial kernels
set to 1) produces a feature map of shape [B, C, T, H, W]; this module pools the
spatial dimensions away and runs a light transformer over the T tokens.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, dropout=0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64, dropout=0.0):
        super().__init__()
        inner_dim = dim_head * heads
        project_out = not (heads == 1 and dim_head == dim)

        self.heads = heads
        self.scale = dim_head ** -0.5

        self.attend = nn.Softmax(dim=-1)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)

        self.to_out = nn.Sequential(
            nn.Linear(inner_dim, dim),
            nn.Dropout(dropout),
        ) if project_out else nn.Identity()

    def forward(self, x):
        b, n, _, h = *x.shape, self.heads
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), qkv)

        dots = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale

        attn = self.attend(dots)

        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_dim, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(
                nn.ModuleList(
                    [
                        PreNorm(dim, Attention(dim, heads=heads, dim_head=dim_head, dropout=dropout)),
                        PreNorm(dim, FeedForward(dim, mlp_dim, dropout=dropout)),
                    ]
                )
            )

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x


class TimeTransformer(nn.Module):
    def __init__(
        self,
        *,
        num_patches,
        num_classes,
        dim,
        depth,
        heads,
        mlp_dim,
        pool="cls",
        channels=2048,
        dim_head=64,
        dropout=0.0,
        emb_dropout=0.0,
    ):
        super().__init__()
        assert pool in {"cls", "mean"}, "pool type must be either cls (cls token) or mean (mean pooling)"

        self.to_patch_embedding = nn.Sequential(
            nn.Linear(channels, dim),
        )

        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim, dropout)

        self.pool = pool
        self.to_latent = nn.Identity()

        self.mlp_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def forward(self, x):
        # x: [B, T, C]
        x = self.to_patch_embedding(x)
        b, n, _ = x.shape

        cls_tokens = repeat(self.cls_token, "() n d -> b n d", b=b)
        x = torch.cat((cls_tokens, x), dim=1)
        x += self.pos_embedding[:, : (n + 1)]
        x = self.dropout(x)

        x = self.transformer(x)

        x = x.mean(dim=1) if self.pool == "mean" else x[:, 0]

        x = self.to_latent(x)
        return self.mlp_head(x)


class RandomPatchPool(nn.Module):
    """During training pick one random spatial location per clip; at test time average them all."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        # b,c,t,h,w
        x = rearrange(x, "b c t h w -> b (h w) t c")
        if self.training:
            idx = torch.randint(x.shape[1], (x.shape[0],), device=x.device)
            x = x[torch.arange(x.shape[0], device=x.device), idx]
        else:
            x = x.mean(dim=1)
        return x


def valid_idx(idx, h):
    i = idx // h
    j = idx % h
    return j < h - 1 and i < h - 1 and j > 0 and i > 0


class TransformerHead(nn.Module):
    def __init__(self, spatial_size=7, time_size=8, in_channels=2048):
        super().__init__()
        self.pool = RandomPatchPool()
        self.temporal_T = TimeTransformer(
            num_patches=time_size,
            num_classes=1,
            dim=512,
            depth=6,
            heads=16,
            mlp_dim=2048,
            dim_head=64,
            channels=in_channels,
            dropout=0.1,
            emb_dropout=0.1,
        )
        self.spatial_size = spatial_size

    def forward(self, x):
        x = self.pool(x)
        return self.temporal_T(x)


class I3DHead(nn.Module):
    """Plain global-average-pool classifier kept for the FTCN (non-TT) ablation."""

    def __init__(self, in_channels=2048, num_classes=1, dropout_ratio=0.5):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.dropout = nn.Dropout(p=dropout_ratio) if dropout_ratio > 0 else nn.Identity()
        self.fc = nn.Linear(in_channels, num_classes)
        nn.init.normal_(self.fc.weight, 0, 0.01)
        nn.init.constant_(self.fc.bias, 0)

    def forward(self, x):
        x = self.avg_pool(x)
        x = self.dropout(x)
        x = x.view(x.shape[0], -1)
        return self.fc(x)
