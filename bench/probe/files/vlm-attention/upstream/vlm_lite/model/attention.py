# Multi-head attention used by the vision tower and the language decoder.
# Picks flash-attn 2 when installed, otherwise PyTorch SDPA, otherwise eager.

import math
import warnings
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func, flash_attn_varlen_func
    from flash_attn.bert_padding import index_first_axis, pad_input, unpad_input
    FLASH_ATTN_AVAILABLE = True
except ImportError:
    FLASH_ATTN_AVAILABLE = False


def _get_unpad_data(attention_mask: torch.Tensor):
    seqlens_in_batch = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
    max_seqlen_in_batch = seqlens_in_batch.max().item()
    cu_seqlens = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
    return indices, cu_seqlens, max_seqlen_in_batch


class Attention(nn.Module):
    def __init__(
        self,
        dim: int,
        num_heads: int = 8,
        qkv_bias: bool = False,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
        causal: bool = False,
        attn_impl: str = "flash_attention_2",
    ):
        super().__init__()
        assert dim % num_heads == 0, "dim should be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.causal = causal
        if attn_impl == "flash_attention_2" and not FLASH_ATTN_AVAILABLE:
            warnings.warn("flash-attn is not installed, falling back to sdpa")
            attn_impl = "sdpa"
        self.attn_impl = attn_impl

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def _flash_forward(self, q, k, v, attention_mask: Optional[torch.Tensor]):
        # q, k, v: (B, S, H, D)
        dropout_p = self.attn_drop.p if self.training else 0.0
        if attention_mask is None:
            return flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=self.scale, causal=self.causal)

        batch_size, seqlen = q.shape[:2]
        indices, cu_seqlens, max_seqlen = _get_unpad_data(attention_mask)
        q_unpad = index_first_axis(q.reshape(batch_size * seqlen, self.num_heads, self.head_dim), indices)
        k_unpad = index_first_axis(k.reshape(batch_size * seqlen, self.num_heads, self.head_dim), indices)
        v_unpad = index_first_axis(v.reshape(batch_size * seqlen, self.num_heads, self.head_dim), indices)
        out_unpad = flash_attn_varlen_func(
            q_unpad, k_unpad, v_unpad,
            cu_seqlens_q=cu_seqlens,
            cu_seqlens_k=cu_seqlens,
            max_seqlen_q=max_seqlen,
            max_seqlen_k=max_seqlen,
            dropout_p=dropout_p,
            softmax_scale=self.scale,
            causal=self.causal,
        )
        return pad_input(out_unpad, indices, batch_size, seqlen)

    def _sdpa_forward(self, q, k, v, attention_mask: Optional[torch.Tensor]):
        # q, k, v: (B, H, S, D)
        attn_mask = None
        if attention_mask is not None:
            attn_mask = attention_mask[:, None, None, :].bool()
        return F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=attn_mask,
            dropout_p=self.attn_drop.p if self.training else 0.0,
            is_causal=self.causal and attn_mask is None,
        )

    def _eager_forward(self, q, k, v, attention_mask: Optional[torch.Tensor]):
        # q, k, v: (B, H, S, D)
        attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if self.causal:
            S = q.shape[-2]
            causal_mask = torch.full((S, S), float("-inf"), device=q.device, dtype=attn.dtype).triu(1)
            attn = attn + causal_mask
        if attention_mask is not None:
            extended = (1.0 - attention_mask[:, None, None, :].to(attn.dtype)) * torch.finfo(attn.dtype).min
            attn = attn + extended
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        return torch.matmul(attn, v)

    def forward(self, x: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        if self.attn_impl == "flash_attention_2":
            q, k, v = qkv.unbind(2)
            if q.dtype == torch.float32:
                q, k, v = q.half(), k.half(), v.half()
            x = self._flash_forward(q, k, v, attention_mask).to(x.dtype)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
            if self.attn_impl == "sdpa":
                x = self._sdpa_forward(q, k, v, attention_mask)
            else:
                x = self._eager_forward(q, k, v, attention_mask)
            x = x.transpose(1, 2)
        x = x.reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class CrossAttention(nn.Module):
    """Text queries attending to image patch tokens (eager only)."""

    def __init__(self, dim: int, context_dim: int, num_heads: int = 8):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_kv = nn.Linear(context_dim, dim * 2, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, context, context_mask=None):
        B, N, C = x.shape
        h = self.num_heads
        q = self.to_q(x).view(B, N, h, -1).transpose(1, 2)
        k, v = self.to_kv(context).view(B, context.shape[1], 2, h, -1).permute(2, 0, 3, 1, 4)
        sim = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        if context_mask is not None:
            sim = sim.masked_fill(~context_mask[:, None, None, :], float("-inf"))
        attn = sim.softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(B, N, C))
