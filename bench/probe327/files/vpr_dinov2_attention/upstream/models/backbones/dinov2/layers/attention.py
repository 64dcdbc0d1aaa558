# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the Apache License, Version 2.0
# found in the LICENSE file in the root directory of this source tree.

# References:
#   https://github.com/facebookresearch/dino/blob/master/vision_transformer.py
#   https://github.com/rwightman/pytorch-image-models/tree/master/timm/models/vision_transformer.py
#
# Vendored into the VPR / landmark-retrieval repo so that the DINOv2 backbone can be
# fine-tuned with the aggregation head (the last blocks are trained, the rest frozen).

import logging
import os
import warnings

import torch
import torch.nn.functional as F
from torch import Tensor
from torch import nn


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


def _flash_sdp_supported() -> bool:
    """FlashAttention-2 kernels in PyTorch need sm80+ (A100/H100) and torch>=2.0."""
    if not hasattr(F, "scaled_dot_product_attention"):
        return False
    if not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability()
    return major >= 8


USE_FLASH_SDP = os.environ.get("VPR_FLASH_SDP", "1") == "1" and _flash_sdp_supported()


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

    def forward(self, x: Tensor) -> Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)

        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)

        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x

    def get_attention_map(self, x: Tensor) -> Tensor:
        """Returns the softmax attention of the CLS token (used for the attention-map figures)."""
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k = qkv[0] * self.scale, qkv[1]
        return (q @ k.transpose(-2, -1)).softmax(dim=-1)


class MemEffAttention(Attention):
    def forward(self, x: Tensor, attn_bias=None) -> Tensor:
        if not XFORMERS_AVAILABLE:
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


class FlashSDPAttention(Attention):
    """Attention through torch SDPA, pinned to the flash backend when the GPU has it.

    Used for the high-resolution (518px / 644px) retrieval fine-tuning where the
    token count makes the quadratic attention matrix the memory bottleneck.
    """

    def forward(self, x: Tensor, attn_bias=None) -> Tensor:
        if attn_bias is not None:
            raise AssertionError("FlashSDPAttention does not support nested tensors")
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        dropout_p = self.attn_drop.p if self.training else 0.0
        if USE_FLASH_SDP and q.dtype in (torch.float16, torch.bfloat16):
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
        else:
            x = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


def build_attention(attn_impl: str = "auto"):
    """Pick the attention class used by the transformer blocks.

    auto   -> xFormers if importable, else flash SDPA on sm80+, else the plain one
    xformers / sdpa / plain force a specific implementation.
    """
    if attn_impl == "xformers" or (attn_impl == "auto" and XFORMERS_AVAILABLE):
        return MemEffAttention
    if attn_impl == "sdpa" or (attn_impl == "auto" and USE_FLASH_SDP):
        return FlashSDPAttention
    logger.info("using plain attention (no xFormers, no flash SDPA)")
    return Attention
