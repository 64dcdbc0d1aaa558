"""Vision transformer backbones (DINOv2-style ViT-S/14 and ViT-B/14).

The heatmap heads expect a (B, C, H/s, W/s) feature map, so the patch tokens of
the last block are reshaped back onto the patch grid. Attention goes through
``F.scaled_dot_product_attention`` (flash / memory-efficient kernels on recent
GPUs) unless xFormers or flash-attn are installed, which are slightly faster for
the long token sequences of 518x518 inputs.
"""

import math
from functools import partial
from typing import Callable, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from xformers.ops import memory_efficient_attention

    XFORMERS_AVAILABLE = True
except ImportError:
    XFORMERS_AVAILABLE = False

try:
    from flash_attn import flash_attn_func

    FLASH_ATTN_AVAILABLE = True
except ImportError:
    FLASH_ATTN_AVAILABLE = False


class PatchEmbed(nn.Module):
    """2D image to patch embedding: (B, C, H, W) -> (B, N, D)"""

    def __init__(
        self,
        img_size: int = 224,
        patch_size: int = 14,
        in_chans: int = 3,
        embed_dim: int = 768,
    ) -> None:
        super().__init__()
        self.img_size = (img_size, img_size)
        self.patch_size = (patch_size, patch_size)
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.proj(x)  # B C H W
        return x.flatten(2).transpose(1, 2)  # B HW C


class Mlp(nn.Module):
    def __init__(self, in_features: int, hidden_features: int, act_layer: Callable = nn.GELU, drop: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class LayerScale(nn.Module):
    def __init__(self, dim: int, init_values: float = 1e-5) -> None:
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma


class Attention(nn.Module):
    def __init__(
        self,
        dim: int,
        num_heads: int = 8,
        qkv_bias: bool = True,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
        use_flash_attn: bool = True,
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.use_flash_attn = use_flash_attn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        dropout_p = self.attn_drop if self.training else 0.0

        if self.use_flash_attn and FLASH_ATTN_AVAILABLE and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            # flash-attn wants (B, N, heads, head_dim)
            q, k, v = qkv.unbind(2)
            out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale)
            out = out.reshape(B, N, C)
        elif XFORMERS_AVAILABLE and x.is_cuda:
            q, k, v = qkv.unbind(2)
            out = memory_efficient_attention(q, k, v, p=dropout_p, scale=self.scale)
            out = out.reshape(B, N, C)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, heads, N, head_dim)
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=self.scale)
            out = out.transpose(1, 2).reshape(B, N, C)

        out = self.proj(out)
        return self.proj_drop(out)


class Block(nn.Module):
    def __init__(
        self,
        dim: int,
        num_heads: int,
        mlp_ratio: float = 4.0,
        qkv_bias: bool = True,
        drop_path: float = 0.0,
        init_values: Optional[float] = 1e-5,
        norm_layer: Callable = partial(nn.LayerNorm, eps=1e-6),
    ) -> None:
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias)
        self.ls1 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))
        self.ls2 = LayerScale(dim, init_values) if init_values else nn.Identity()
        self.drop_path = drop_path

    def _drop_path(self, x: torch.Tensor) -> torch.Tensor:
        if self.drop_path == 0.0 or not self.training:
            return x
        keep = 1 - self.drop_path
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self._drop_path(self.ls1(self.attn(self.norm1(x))))
        x = x + self._drop_path(self.ls2(self.mlp(self.norm2(x))))
        return x


class VisionTransformer(nn.Module):
    """ViT returning a spatial feature map for the heatmap heads"""

    def __init__(
        self,
        img_size: int = 518,
        patch_size: int = 14,
        embed_dim: int = 768,
        depth: int = 12,
        num_heads: int = 12,
        mlp_ratio: float = 4.0,
        drop_path_rate: float = 0.0,
        use_sdpa_flash: bool = True,
    ) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.embed_dim = embed_dim
        self.num_features = embed_dim
        self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, embed_dim=embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList(
            [Block(embed_dim, num_heads, mlp_ratio=mlp_ratio, drop_path=dpr[i]) for i in range(depth)]
        )
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.use_sdpa_flash = use_sdpa_flash
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.normal_(self.cls_token, std=1e-6)

    def interpolate_pos_encoding(self, x: torch.Tensor, h: int, w: int) -> torch.Tensor:
        previous_dtype = x.dtype
        npatch = x.shape[1] - 1
        N = self.pos_embed.shape[1] - 1
        if npatch == N and w == h:
            return self.pos_embed
        class_pos_embed = self.pos_embed[:, 0]
        patch_pos_embed = self.pos_embed[:, 1:]
        dim = x.shape[-1]
        w0 = w // self.patch_size
        h0 = h // self.patch_size
        M = int(math.sqrt(N))
        # bicubic interpolation is done in fp32 even under autocast
        with torch.cuda.amp.autocast(enabled=False):
            patch_pos_embed = F.interpolate(
                patch_pos_embed.float().reshape(1, M, M, dim).permute(0, 3, 1, 2),
                size=(h0, w0),
                mode="bicubic",
                align_corners=False,
            )
        patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
        return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1).to(previous_dtype)

    def _forward_blocks(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, _, h, w = x.shape
        tokens = self.patch_embed(x)
        tokens = torch.cat((self.cls_token.expand(B, -1, -1), tokens), dim=1)
        tokens = tokens + self.interpolate_pos_encoding(tokens, h, w)

        if self.use_sdpa_flash and tokens.is_cuda:
            # force the fused SDPA kernels; the math fallback is ~3x slower here
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                tokens = self._forward_blocks(tokens)
        else:
            tokens = self._forward_blocks(tokens)

        tokens = self.norm(tokens)
        patch_tokens = tokens[:, 1:]
        h0, w0 = h // self.patch_size, w // self.patch_size
        return patch_tokens.transpose(1, 2).reshape(B, self.embed_dim, h0, w0)


def vit_s14(**kwargs) -> VisionTransformer:
    return VisionTransformer(embed_dim=384, depth=12, num_heads=6, **kwargs)


def vit_b14(**kwargs) -> VisionTransformer:
    return VisionTransformer(embed_dim=768, depth=12, num_heads=12, **kwargs)


def load_dinov2_weights(model: VisionTransformer, variant: str = "dinov2_vitb14") -> VisionTransformer:
    """Copy the pretrained DINOv2 weights from torch.hub into our ViT"""
    hub_model = torch.hub.load("facebookresearch/dinov2", variant)
    state = {k: v for k, v in hub_model.state_dict().items() if not k.startswith(("mask_token", "register_tokens"))}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing:
        print(f"load_dinov2_weights: missing keys {missing}")
    return model
