# Copyright (c) Kyutai, all rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Streaming transformer used by Mimi (encoder/decoder) and Moshi."""
from dataclasses import dataclass
import typing as tp

from einops import rearrange
import torch
import torch.nn as nn
from torch.nn import functional as F

from ..utils.compile import no_compile
from .rope import RotaryEmbedding
from .streaming import StreamingModule, StreamingContainer

try:
    # Only used for the long-context training runs on H100.
    from flash_attn import flash_attn_func
    _HAS_FLASH_ATTN = True
except ImportError:
    flash_attn_func = None
    _HAS_FLASH_ATTN = False


class LayerNormF32(nn.LayerNorm):
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        x_f32 = input.float()
        out_f32 = super().forward(x_f32)
        return out_f32.to(input.dtype)


def _rms_norm(x: torch.Tensor, alpha: torch.Tensor, dtype: tp.Optional[torch.dtype], eps: float):
    assert x.dim() == 3, f"RMSNorm expects 3D inputs but got {x.shape}"
    x_dtype = x.dtype
    if dtype is not None:
        x = x.to(dtype)
    var = eps + torch.mean(x**2, dim=2, keepdim=True)
    y = (x * (alpha.to(var) * torch.rsqrt(var))).to(x_dtype)
    return y


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5, dtype: tp.Optional[torch.dtype] = None,
                 device=None):
        super().__init__()
        self.eps = eps
        self.dtype = dtype
        self.alpha = nn.Parameter(torch.full((1, 1, dim), 1.0, requires_grad=True, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor):
        return _rms_norm(x, self.alpha, self.dtype, self.eps)


def create_norm_fn(norm_type: str, dim: int, **kwargs) -> nn.Module:
    if norm_type == "layer_norm":
        return nn.LayerNorm(dim, eps=1e-5, **kwargs)
    elif norm_type == "layer_norm_f32":
        kwargs.pop("dtype", None)
        return LayerNormF32(dim, eps=1e-8, **kwargs)
    elif norm_type in {"rms_norm"}:
        return RMSNorm(dim, eps=1e-5, **kwargs)
    elif norm_type in {"rms_norm_f32"}:
        kwargs.pop("dtype", None)
        return RMSNorm(dim, eps=1e-8, dtype=torch.float, **kwargs)
    else:
        raise ValueError(f"Unknown norm type: {norm_type}")


@dataclass
class _MHAState:
    batch_size: int
    device: torch.device
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    offset: torch.Tensor

    def reset(self):
        self.offset.zero_()


class StreamingMultiheadAttention(StreamingModule[_MHAState]):
    """Similar to `nn.MultiheadAttention` but with support for streaming, causal evaluation.

    Args:
        embed_dim (int): Dimension to project to.
        num_heads (int): Number of heads.
        causal (bool): Causal mask applied automatically.
        context (int, optional): Number of time steps the attention can access to.
        rope (`RotaryEmbedding`, optional): Rope embedding to use.
        use_flash (bool): use the flash-attn kernel during training (GPU only).
        device (torch.device, optional): Device on which to initialize.
        dtype (torch.dtype, optional): dtype to use.
    """

    def __init__(self, embed_dim: int, num_heads: int, causal: bool = False,
                 context: tp.Optional[int] = None, rope: tp.Optional[RotaryEmbedding] = None,
                 use_flash: bool = False, device=None, dtype=None):
        super().__init__()
        factory_kwargs = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.causal = causal
        self.context = context
        self.rope = rope
        self.num_heads = num_heads
        self.use_flash = use_flash and _HAS_FLASH_ATTN
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim, bias=False, **factory_kwargs)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=False, **factory_kwargs)

    def _init_streaming_state(self, batch_size: int) -> _MHAState:
        capacity = self.context if self.context is not None else 4096
        device = self.in_proj.weight.device
        dtype = self.in_proj.weight.dtype
        dim_per_head = self.embed_dim // self.num_heads
        k_cache = torch.zeros((batch_size, self.num_heads, capacity, dim_per_head), device=device, dtype=dtype)
        v_cache = torch.zeros_like(k_cache)
        return _MHAState(batch_size, device, k_cache, v_cache,
                         torch.zeros(1, device=device, dtype=torch.long))

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        state = self._streaming_state
        T = query.shape[1]
        offset = state.offset if state is not None else torch.zeros(1, device=query.device, dtype=torch.long)

        projected = self.in_proj(query)
        q, k, v = rearrange(projected, "b t (p h d) -> p b h t d", p=3, h=self.num_heads)
        if self.rope:
            q, k = self.rope(q, k, offset, time_before_heads=False)

        if self.use_flash and state is None and self.training:
            # flash-attn wants [B, T, H, D] in fp16/bf16.
            x = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                causal=self.causal, window_size=(self.context or -1, 0))
            x = x.transpose(1, 2)
        else:
            if state is not None:
                idx = int(offset.item()) % state.k_cache.shape[2]
                state.k_cache[:, :, idx: idx + T] = k
                state.v_cache[:, :, idx: idx + T] = v
                k, v = state.k_cache, state.v_cache
            attn_mask = None
            if self.causal:
                pos_k = torch.arange(k.shape[2], device=q.device)
                pos_q = offset + torch.arange(T, device=q.device)
                delta = pos_q[:, None] - pos_k[None, :]
                attn_mask = (delta >= 0)
                if self.context is not None:
                    attn_mask = attn_mask & (delta < self.context)
            x = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p=0.0)

        x = rearrange(x, "b h t d -> b t (h d)")
        x = self.out_proj(x)
        if state is not None:
            state.offset.add_(T)
        return x


def sdpa_backend_context(force_math: bool = False):
    """On GPU, the efficient kernels don't support all the masks we use; allow forcing math."""
    if force_math:
        return torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True,
                                              enable_mem_efficient=False)
    return torch.backends.cuda.sdp_kernel()
