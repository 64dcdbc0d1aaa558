# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the Apache License, Version 2.0
# found in the LICENSE file in the root directory of this source tree.

# References:
#   https://github.com/facebookresearch/dino/blob/master/vision_transformer.py
#   https://github.com/rwightman/pytorch-image-models/tree/master/timm/models/vision_transformer.py
#
# Vendored into open-metric-learning so that ViTExtractor can load DINOv2 checkpoints
# without torch.hub. Only the pieces the extractor needs are kept; the attention map
# accessor below is used by the retrieval visualisations.

import logging
import os
import warnings

import torch
from torch import Tensor, nn

logger = logging.getLogger("dinov2")


XFORMERS_ENABLED = os.environ.get("XFORMERS_DISABLED") is None
try:
    if XFORMERS_ENABLED:
        from xformers.ops import memory_efficient_attention, unbind

        XFORMERS_AVAILABLE = True
        warnings.warn("xFormers is available (Attention)")
    else:
        warnings.warn("xFormers is disabled (Attention)")
        raise ImportError
except ImportError:
    XFORMERS_AVAILABLE = False
    warnings.warn("xFormers is not available (Attention)")


class Attention(nn.Module):
    def __init__(
        self,
        dim: int,
        num_heads: int = 8,
        qkv_bias: bool = False,
        proj_bias: bool = True,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.proj_drop = nn.Dropout(proj_drop)

        # filled by forward() when the extractor asks for attention maps
        self.keep_attention_map = False
        self.last_attention_map = None

    def forward(self, x: Tensor) -> Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)

        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)

        attn = attn.softmax(dim=-1)
        if self.keep_attention_map:
            self.last_attention_map = attn.detach()
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class MemEffAttention(Attention):
    def forward(self, x: Tensor, attn_bias=None) -> Tensor:
        if not XFORMERS_AVAILABLE or self.keep_attention_map:
            if attn_bias is not None:
                raise AssertionError("xFormers is required for using nested tensors")
            return super().forward(x)

        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)

        q, k, v = unbind(qkv, 2)

        x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)
        x = x.reshape([B, N, C])

        x = self.proj(x)
        x = self.proj_drop(x)
        return x


@torch.no_grad()
def get_cls_attention_map(blocks: nn.ModuleList, x: Tensor, patch_grid: tuple) -> Tensor:
    """Runs the transformer blocks and returns the attention of the CLS token over the
    patches in the last block, averaged over heads, as a (B, H_p, W_p) map.

    Args:
        blocks: the transformer blocks of the extractor, each having an ``attn`` attribute
        x: tokens after patch embedding and positional encoding, shape (B, 1 + H_p * W_p, C)
        patch_grid: (H_p, W_p)
    """
    last_attn = blocks[-1].attn
    last_attn.keep_attention_map = True
    try:
        for blk in blocks:
            x = blk(x)
        attn = last_attn.last_attention_map
    finally:
        last_attn.keep_attention_map = False
        last_attn.last_attention_map = None

    cls_to_patches = attn[:, :, 0, 1:].mean(dim=1)
    return cls_to_patches.reshape(x.shape[0], *patch_grid)
