# Modified from PyTorch nn.Transformer
# Query/object transformer layers of the object transformer.
# Attention is computed with F.scaled_dot_product_attention; on Ampere+ GPUs we force the
# flash kernel (the masked-attention path falls back to the efficient kernel).

from typing import List, Callable, Optional
import warnings

import torch
from torch import Tensor
import torch.nn as nn
import torch.nn.functional as F
from omegaconf import DictConfig

from cutie.model.channel_attn import CAResBlock


def get_sdp_settings():
    """Returns (old_gpu, use_flash_attn, math_kernel_on)."""
    if not torch.cuda.is_available():
        return True, False, True
    props = torch.cuda.get_device_properties(0)
    old_gpu = props.major < 7
    # flash attention needs sm80+ and fp16/bf16 inputs
    use_flash_attn = props.major >= 8
    # the math kernel is kept on for old GPUs and as a fallback for masked attention
    math_kernel_on = old_gpu or not use_flash_attn
    return old_gpu, use_flash_attn, math_kernel_on


OLD_GPU, USE_FLASH_ATTN, MATH_KERNEL_ON = get_sdp_settings()
if OLD_GPU:
    warnings.warn('Pre-Volta GPU detected; scaled_dot_product_attention will use the math kernel.')


class MultiheadSDPA(nn.Module):
    """Drop-in for nn.MultiheadAttention (batch_first=True) using SDPA."""
    def __init__(self, dim: int, nhead: int, dropout: float = 0.0, kdim: int = None, vdim: int = None):
        super().__init__()
        self.dim = dim
        self.nhead = nhead
        self.head_dim = dim // nhead
        assert self.head_dim * nhead == dim, 'dim must be divisible by nhead'
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(kdim or dim, dim)
        self.v_proj = nn.Linear(vdim or dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        self.dropout_p = dropout

    def _split(self, x: Tensor) -> Tensor:
        b, n, _ = x.shape
        return x.view(b, n, self.nhead, self.head_dim).transpose(1, 2)

    def forward(self,
                q: Tensor,
                k: Tensor,
                v: Tensor,
                attn_mask: Optional[Tensor] = None,
                need_weights: bool = False) -> (Tensor, Optional[Tensor]):
        q = self._split(self.q_proj(q))
        k = self._split(self.k_proj(k))
        v = self._split(self.v_proj(v))
        dropout_p = self.dropout_p if self.training else 0.0

        if need_weights:
            # visualization path (aux outputs): explicit softmax so that we can return the weights
            scale = self.head_dim**-0.5
            attn = (q @ k.transpose(-2, -1)) * scale
            if attn_mask is not None:
                attn = attn.masked_fill(attn_mask, float('-inf'))
            weights = attn.softmax(dim=-1)
            out = weights @ v
        else:
            if attn_mask is not None:
                # SDPA expects True = take part in attention
                attn_mask = ~attn_mask
            with torch.backends.cuda.sdp_kernel(
                    enable_flash=USE_FLASH_ATTN and attn_mask is None,
                    enable_math=MATH_KERNEL_ON or attn_mask is not None,
                    enable_mem_efficient=not OLD_GPU,
            ):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
            weights = None

        b, _, n, _ = out.shape
        out = out.transpose(1, 2).reshape(b, n, self.dim)
        return self.out_proj(out), weights


class SelfAttention(nn.Module):
    def __init__(self,
                 dim: int,
                 nhead: int,
                 dropout: float = 0.0,
                 batch_first: bool = True,
                 add_pe_to_qkv: List[bool] = [True, True, False]):
        super().__init__()
        assert batch_first, 'only batch_first layout is supported'
        self.self_attn = MultiheadSDPA(dim, nhead, dropout=dropout)
        self.norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.add_pe_to_qkv = add_pe_to_qkv

    def forward(self,
                x: torch.Tensor,
                pe: torch.Tensor,
                attn_mask: bool = None,
                key_padding_mask: bool = None) -> torch.Tensor:
        x = self.norm(x)
        if any(self.add_pe_to_qkv):
            x_with_pe = x + pe
            q = x_with_pe if self.add_pe_to_qkv[0] else x
            k = x_with_pe if self.add_pe_to_qkv[1] else x
            v = x_with_pe if self.add_pe_to_qkv[2] else x
        else:
            q = k = v = x

        r = x
        x = self.self_attn(q, k, v, attn_mask=attn_mask)[0]
        return r + self.dropout(x)


class CrossAttention(nn.Module):
    def __init__(self,
                 dim: int,
                 nhead: int,
                 dropout: float = 0.0,
                 batch_first: bool = True,
                 add_pe_to_qkv: List[bool] = [True, True, False],
                 residual: bool = True,
                 norm: bool = True):
        super().__init__()
        assert batch_first, 'only batch_first layout is supported'
        self.cross_attn = MultiheadSDPA(dim, nhead, dropout=dropout)
        if norm:
            self.norm = nn.LayerNorm(dim)
        else:
            self.norm = nn.Identity()
        self.dropout = nn.Dropout(dropout)
        self.add_pe_to_qkv = add_pe_to_qkv
        self.residual = residual

    def forward(self,
                x: torch.Tensor,
                mem: torch.Tensor,
                x_pe: torch.Tensor,
                mem_pe: torch.Tensor,
                attn_mask: bool = None,
                *,
                need_weights: bool = False) -> (torch.Tensor, torch.Tensor):
        x = self.norm(x)
        if self.add_pe_to_qkv[0]:
            q = x + x_pe
        else:
            q = x

        if any(self.add_pe_to_qkv[1:]):
            mem_with_pe = mem + mem_pe
            k = mem_with_pe if self.add_pe_to_qkv[1] else mem
            v = mem_with_pe if self.add_pe_to_qkv[2] else mem
        else:
            k = v = mem
        r = x
        x, weights = self.cross_attn(q, k, v, attn_mask=attn_mask, need_weights=need_weights)

        if self.residual:
            return r + self.dropout(x), weights
        else:
            return self.dropout(x), weights


class FFN(nn.Module):
    def __init__(self, dim_in: int, dim_ff: int, activation=F.relu):
        super().__init__()
        self.linear1 = nn.Linear(dim_in, dim_ff)
        self.linear2 = nn.Linear(dim_ff, dim_in)
        self.norm = nn.LayerNorm(dim_in)

        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r = x
        x = self.norm(x)
        x = self.linear2(self.activation(self.linear1(x)))
        x = r + x
        return x


class PixelFFN(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.conv = CAResBlock(dim, dim)

    def forward(self, pixel: torch.Tensor, pixel_flat: torch.Tensor) -> torch.Tensor:
        # pixel: batch_size * num_objects * dim * H * W
        # pixel_flat: (batch_size*num_objects) * (H*W) * dim
        bs, num_objects, _, h, w = pixel.shape
        pixel_flat = pixel_flat.view(bs * num_objects, h, w, self.dim)
        pixel_flat = pixel_flat.permute(0, 3, 1, 2).contiguous()

        x = self.conv(pixel_flat)
        x = x.view(bs, num_objects, self.dim, h, w)
        return x


class OutputFFN(nn.Module):
    def __init__(self, dim_in: int, dim_out: int, activation=F.relu):
        super().__init__()
        self.linear1 = nn.Linear(dim_in, dim_out)
        self.linear2 = nn.Linear(dim_out, dim_out)

        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear2(self.activation(self.linear1(x)))
        return x


def _get_activation_fn(activation: str) -> Callable[[torch.Tensor], torch.Tensor]:
    if activation == "relu":
        return F.relu
    elif activation == "gelu":
        return F.gelu

    raise RuntimeError("activation should be relu/gelu, not {}".format(activation))
