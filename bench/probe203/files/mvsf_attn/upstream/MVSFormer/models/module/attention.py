# Attention blocks shared by the DINOv2 backbone and the cost-volume transformer (CVT).
#
# DINOv2 layers follow facebookresearch/dinov2 (Apache-2.0); the CVT blocks can run
# FlashAttention-2 (needs an Ampere+ GPU and `pip install flash-attn --no-build-isolation`),
# plain SDPA, or linear attention as in LoFTR/TransMVSNet.
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

logger = logging.getLogger("mvsformer")

try:
    from xformers.ops import memory_efficient_attention, unbind, fmha

    XFORMERS_AVAILABLE = True
except ImportError:
    logger.warning("xFormers not available")
    XFORMERS_AVAILABLE = False

try:
    from flash_attn import flash_attn_func

    FLASH_AVAILABLE = True
except ImportError:
    flash_attn_func = None
    FLASH_AVAILABLE = False


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
        self.scale = head_dim ** -0.5

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


class MemEffAttention(Attention):
    def forward(self, x: Tensor, attn_bias=None) -> Tensor:
        if not XFORMERS_AVAILABLE:
            assert attn_bias is None, "xFormers is required for nested tensors usage"
            return super().forward(x)

        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)

        q, k, v = unbind(qkv, 2)

        x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)
        x = x.reshape([B, N, C])

        x = self.proj(x)
        x = self.proj_drop(x)
        return x


def elu_feature_map(x):
    return F.elu(x) + 1


class LinearAttention(nn.Module):
    """Linear attention (Katharopoulos et al.), O(N) memory. Used by TransMVSNet-style FMT."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.feature_map = elu_feature_map
        self.eps = eps

    def forward(self, queries, keys, values, q_mask=None, kv_mask=None):
        """ Multi-Head linear attention
        Args:
            queries: [N, L, H, D]
            keys: [N, S, H, D]
            values: [N, S, H, D]
            q_mask: [N, L]
            kv_mask: [N, S]
        Returns:
            queried_values: (N, L, H, D)
        """
        # the kv-sum below overflows in fp16 for large S (e.g. 1/8 res DTU), so keep it in fp32
        with torch.cuda.amp.autocast(enabled=False):
            queries, keys, values = queries.float(), keys.float(), values.float()
            Q = self.feature_map(queries)
            K = self.feature_map(keys)

            # set padded position to zero
            if q_mask is not None:
                Q = Q * q_mask[:, :, None, None]
            if kv_mask is not None:
                K = K * kv_mask[:, :, None, None]
                values = values * kv_mask[:, :, None, None]

            v_length = values.size(1)
            values = values / v_length  # prevent fp16 overflow
            KV = torch.einsum("nshd,nshv->nhdv", K, values)  # (S,D)' @ S,V
            Z = 1 / (torch.einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + self.eps)
            queried_values = torch.einsum("nlhd,nhdv,nlh->nlhv", Q, KV, Z) * v_length

        return queried_values.contiguous()


class FlashAttention2(nn.Module):
    """Softmax attention through FlashAttention-2. Inputs are [B, L, H, D] in fp16/bf16."""

    def __init__(self, softmax_scale=None, attention_dropout=0.0):
        super().__init__()
        self.softmax_scale = softmax_scale
        self.attn_drop = attention_dropout

    def forward(self, q, k, v, q_mask=None, kv_mask=None):
        assert q_mask is None and kv_mask is None, "padding masks are not supported by the flash path"
        dtype = q.dtype
        if dtype not in (torch.float16, torch.bfloat16):
            q, k, v = q.half(), k.half(), v.half()
        out = flash_attn_func(q, k, v, dropout_p=self.attn_drop if self.training else 0.0,
                              softmax_scale=self.softmax_scale, causal=False)
        return out.to(dtype)


class SDPAttention(nn.Module):
    """torch>=2.0 scaled_dot_product_attention, forced onto the flash backend when possible."""

    def __init__(self, softmax_scale=None, attention_dropout=0.0, force_flash=True):
        super().__init__()
        self.softmax_scale = softmax_scale
        self.attn_drop = attention_dropout
        self.force_flash = force_flash

    def forward(self, q, k, v, q_mask=None, kv_mask=None):
        # [B, L, H, D] -> [B, H, L, D]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        attn_mask = None
        if kv_mask is not None:
            attn_mask = kv_mask[:, None, None, :].bool()
        if self.force_flash and attn_mask is None:
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop if self.training else 0.0)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                                 dropout_p=self.attn_drop if self.training else 0.0)
        return out.transpose(1, 2).contiguous()


def build_attention(attn_type, head_dim, attention_dropout=0.0):
    softmax_scale = 1.0 / math.sqrt(head_dim)
    if attn_type == "FLASH2" and FLASH_AVAILABLE:
        return FlashAttention2(softmax_scale=softmax_scale, attention_dropout=attention_dropout)
    elif attn_type == "SDPA":
        return SDPAttention(softmax_scale=softmax_scale, attention_dropout=attention_dropout)
    else:
        if attn_type != "Linear":
            logger.warning("attention type %s unavailable, falling back to linear attention", attn_type)
        return LinearAttention()


class CVTLayer(nn.Module):
    """One cost-volume transformer layer: self attention along the depth axis + FFN."""

    def __init__(self, d_model, nhead, attn_type="Linear", ffn_ratio=2, dropout=0.0):
        super().__init__()
        self.dim = d_model // nhead
        self.nhead = nhead

        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.attention = build_attention(attn_type, self.dim, attention_dropout=dropout)
        self.merge = nn.Linear(d_model, d_model, bias=False)

        self.mlp = nn.Sequential(
            nn.Linear(d_model * 2, d_model * ffn_ratio, bias=False),
            nn.GELU(),
            nn.Linear(d_model * ffn_ratio, d_model, bias=False),
        )
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, source, x_mask=None, source_mask=None):
        """
        Args:
            x (torch.Tensor): [N, L, C]
            source (torch.Tensor): [N, S, C]
        """
        bs = x.size(0)
        query, key, value = x, source, source

        query = self.q_proj(query).view(bs, -1, self.nhead, self.dim)  # [N, L, (H, D)]
        key = self.k_proj(key).view(bs, -1, self.nhead, self.dim)  # [N, S, (H, D)]
        value = self.v_proj(value).view(bs, -1, self.nhead, self.dim)
        message = self.attention(query, key, value, q_mask=x_mask, kv_mask=source_mask)  # [N, L, (H, D)]
        message = self.merge(message.view(bs, -1, self.nhead * self.dim))  # [N, L, C]
        message = self.norm1(message)

        message = self.mlp(torch.cat([x, message], dim=2))
        message = self.norm2(message)

        return x + message


class CostVolumeTransformer(nn.Module):
    def __init__(self, d_model=64, nhead=4, num_layers=4, attn_type="Linear", dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList([CVTLayer(d_model, nhead, attn_type=attn_type, dropout=dropout)
                                     for _ in range(num_layers)])
        self._reset_parameters()

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, cost, depth_pos=None):
        # cost: [B, C, D, H, W] -> attention along D for every pixel
        B, C, D, H, W = cost.shape
        x = cost.permute(0, 3, 4, 2, 1).reshape(B * H * W, D, C)
        if depth_pos is not None:
            x = x + depth_pos
        for layer in self.layers:
            x = layer(x, x)
        return x.reshape(B, H, W, D, C).permute(0, 4, 3, 1, 2).contiguous()
