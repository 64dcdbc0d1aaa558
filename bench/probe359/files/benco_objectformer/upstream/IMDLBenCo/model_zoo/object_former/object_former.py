"""
ObjectFormer re-implementation for IMDL-BenCo.

The original paper (Wang et al., CVPR 2022) did not release code. This version follows the
description: an RGB patch embedding and a high-frequency patch embedding (from a DCT/FFT
high-pass of the image) are fused, a set of learnable object prototypes attend to the patches,
and a boundary-sensitive contextual incoherence module (BCIM) refines the patch features
before the mask decoder.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from timm.models.layers import trunc_normal_, DropPath
from IMDLBenCo.registry import MODELS


def high_pass_fft(x, radius_ratio=0.25):
    """Keep only the high-frequency part of each channel (centred FFT, circular mask)."""
    B, C, H, W = x.shape
    freq = torch.fft.fft2(x.float(), norm="ortho")
    freq = torch.fft.fftshift(freq, dim=(-2, -1))

    yy = torch.arange(H, device=x.device).view(H, 1) - H // 2
    xx = torch.arange(W, device=x.device).view(1, W) - W // 2
    dist = torch.sqrt(yy.float() ** 2 + xx.float() ** 2)
    radius = radius_ratio * min(H, W) / 2
    mask = (dist > radius).to(freq.real.dtype)

    freq = freq * mask
    freq = torch.fft.ifftshift(freq, dim=(-2, -1))
    out = torch.fft.ifft2(freq, norm="ortho").real
    return out.to(x.dtype)


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)
        return x.flatten(2).transpose(1, 2)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, drop=0.):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        x = self.drop(self.act(self.fc1(x)))
        return self.drop(self.fc2(x))


class CrossAttention(nn.Module):
    """Queries from one token set, keys/values from another."""

    def __init__(self, dim, num_heads=8, qkv_bias=True, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x, context):
        B, N, C = x.shape
        M = context.shape[1]
        q = self.q(x).reshape(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        kv = self.kv(context).reshape(B, M, 2, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop if self.training else 0.)
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., drop_path=0.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = CrossAttention(dim, num_heads)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x, context=None):
        context = x if context is None else context
        x = x + self.drop_path(self.attn(self.norm1(x), self.norm1(context)))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class BCIM(nn.Module):
    """Boundary-sensitive contextual incoherence modelling on the patch grid."""

    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm = nn.BatchNorm2d(dim)

    def forward(self, x, hw):
        B, N, C = x.shape
        h, w = hw
        grid = x.transpose(1, 2).reshape(B, C, h, w)
        sim = F.cosine_similarity(grid, F.avg_pool2d(grid, 3, 1, 1), dim=1, eps=1e-6).unsqueeze(1)
        grid = grid + self.norm(self.conv(grid * (1 - sim)))
        return grid.flatten(2).transpose(1, 2)


@MODELS.register_module()
class ObjectFormer(nn.Module):
    def __init__(self, img_size=224, patch_size=16, embed_dim=384, depth=8, num_heads=6,
                 num_queries=16, drop_path_rate=0.1, init_weight_path=None):
        super().__init__()
        self.img_size = img_size
        self.patch_size = patch_size
        self.rgb_embed = PatchEmbed(img_size, patch_size, 3, embed_dim)
        self.freq_embed = PatchEmbed(img_size, patch_size, 3, embed_dim)
        num_patches = self.rgb_embed.num_patches
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim))
        self.object_queries = nn.Parameter(torch.zeros(1, num_queries, embed_dim))

        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.encoder = nn.ModuleList([Block(embed_dim, num_heads, drop_path=dpr[i]) for i in range(depth)])
        self.obj_attn = nn.ModuleList([Block(embed_dim, num_heads) for _ in range(depth)])
        self.patch_attn = nn.ModuleList([Block(embed_dim, num_heads) for _ in range(depth)])
        self.bcim = nn.ModuleList([BCIM(embed_dim) for _ in range(depth)])

        self.mask_head = nn.Sequential(
            nn.Conv2d(embed_dim, embed_dim // 2, 3, padding=1), nn.BatchNorm2d(embed_dim // 2), nn.ReLU(True),
            nn.Conv2d(embed_dim // 2, 1, 1))
        self.cls_head = nn.Linear(embed_dim, 1)
        self.bce = nn.BCEWithLogitsLoss()

        trunc_normal_(self.pos_embed, std=.02)
        trunc_normal_(self.object_queries, std=.02)
        if init_weight_path:
            state = torch.load(init_weight_path, map_location="cpu")
            msg = self.load_state_dict(state.get("model", state), strict=False)
            print("ObjectFormer init from {}: {}".format(init_weight_path, msg))

    def forward(self, image, mask, label, *args, **kwargs):
        B = image.shape[0]
        h = w = self.img_size // self.patch_size

        rgb_tokens = self.rgb_embed(image)
        freq_tokens = self.freq_embed(high_pass_fft(image))
        x = rgb_tokens + freq_tokens + self.pos_embed

        for blk in self.encoder:
            x = blk(x)

        queries = self.object_queries.expand(B, -1, -1)
        for obj_blk, patch_blk, bcim in zip(self.obj_attn, self.patch_attn, self.bcim):
            queries = obj_blk(queries, x)
            x = patch_blk(x, queries)
            x = bcim(x, (h, w))

        grid = x.transpose(1, 2).reshape(B, -1, h, w)
        mask_logits = F.interpolate(self.mask_head(grid), size=image.shape[-2:], mode="bilinear", align_corners=False)
        cls_logits = self.cls_head(x.mean(dim=1)).squeeze(-1)

        mask_loss = self.bce(mask_logits, mask)
        cls_loss = self.bce(cls_logits, label.float())
        combined_loss = mask_loss + cls_loss

        return {
            "backward_loss": combined_loss,
            "pred_mask": torch.sigmoid(mask_logits),
            "pred_label": torch.sigmoid(cls_logits),
            "visual_loss": {
                "mask_loss": mask_loss,
                "cls_loss": cls_loss,
                "combined_loss": combined_loss,
            },
            "visual_image": {
                "pred_mask": torch.sigmoid(mask_logits),
            },
        }
