"""Attention processors and feed-forward blocks swapped into diffusers UNets.

The token-merging (ToMe) and DeepCache patches need to see the attention
probabilities in debug mode, so besides the SDPA / xformers fast paths we keep
the original LDM-style baddbmm implementation around.
"""
import logging
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from diffusers.utils import is_xformers_available

if is_xformers_available():
    import xformers
    import xformers.ops
else:
    xformers = None

logger = logging.getLogger(__name__)


class GEGLU(nn.Module):
    """GEGLU projection (Shazeer 2020) as used in the SD transformer blocks."""

    def __init__(self, dim_in: int, dim_out: int):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2)

    def gelu(self, gate: torch.Tensor) -> torch.Tensor:
        if gate.device.type != "mps":
            return F.gelu(gate)
        # mps: gelu is not implemented for float16
        return F.gelu(gate.to(dtype=torch.float32)).to(dtype=gate.dtype)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        return hidden_states * self.gelu(gate)


def _prepare(attn, hidden_states, encoder_hidden_states):
    if attn.spatial_norm is not None:
        raise NotImplementedError("spatial_norm attention is not used by SD1.x/SDXL UNets")
    input_ndim = hidden_states.ndim
    if input_ndim == 4:
        batch_size, channel, height, width = hidden_states.shape
        hidden_states = hidden_states.view(batch_size, channel, height * width).transpose(1, 2)
    if attn.group_norm is not None:
        hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
    query = attn.to_q(hidden_states)
    if encoder_hidden_states is None:
        encoder_hidden_states = hidden_states
    elif attn.norm_cross:
        encoder_hidden_states = attn.norm_encoder_hidden_states(encoder_hidden_states)
    key = attn.to_k(encoder_hidden_states)
    value = attn.to_v(encoder_hidden_states)
    return input_ndim, hidden_states, query, key, value


def _finish(attn, hidden_states, residual, input_ndim, shape):
    hidden_states = attn.to_out[0](hidden_states)
    hidden_states = attn.to_out[1](hidden_states)
    if input_ndim == 4:
        batch_size, channel, height, width = shape
        hidden_states = hidden_states.transpose(-1, -2).reshape(batch_size, channel, height, width)
    if attn.residual_connection:
        hidden_states = hidden_states + residual
    return hidden_states / attn.rescale_output_factor


class BaddbmmAttnProcessor:
    """Original LDM attention: explicit QK^T via baddbmm, softmax, then bmm. Slow, but exposes the probs."""

    def __init__(self, keep_probs: bool = False):
        self.keep_probs = keep_probs
        self.last_probs = None

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, scale: float = 1.0):
        residual = hidden_states
        shape = hidden_states.shape
        input_ndim, hidden_states, query, key, value = _prepare(attn, hidden_states, encoder_hidden_states)

        query = attn.head_to_batch_dim(query)
        key = attn.head_to_batch_dim(key)
        value = attn.head_to_batch_dim(value)

        if attention_mask is None:
            baddbmm_input = torch.empty(
                query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device
            )
            beta = 0
        else:
            baddbmm_input = attention_mask
            beta = 1

        attention_scores = torch.baddbmm(baddbmm_input, query, key.transpose(-1, -2), beta=beta, alpha=attn.scale)
        if attn.upcast_softmax:
            attention_scores = attention_scores.float()
        attention_probs = attention_scores.softmax(dim=-1).to(query.dtype)
        if self.keep_probs:
            self.last_probs = attention_probs.detach()

        hidden_states = torch.bmm(attention_probs, value)
        hidden_states = attn.batch_to_head_dim(hidden_states)
        return _finish(attn, hidden_states, residual, input_ndim, shape)


class XFormersAttnProcessor:
    def __init__(self, attention_op=None):
        self.attention_op = attention_op

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, scale: float = 1.0):
        residual = hidden_states
        shape = hidden_states.shape
        input_ndim, hidden_states, query, key, value = _prepare(attn, hidden_states, encoder_hidden_states)

        query = attn.head_to_batch_dim(query).contiguous()
        key = attn.head_to_batch_dim(key).contiguous()
        value = attn.head_to_batch_dim(value).contiguous()

        hidden_states = xformers.ops.memory_efficient_attention(
            query, key, value, attn_bias=attention_mask, op=self.attention_op, scale=attn.scale
        )
        hidden_states = hidden_states.to(query.dtype)
        hidden_states = attn.batch_to_head_dim(hidden_states)
        return _finish(attn, hidden_states, residual, input_ndim, shape)


class SDPAAttnProcessor:
    def __init__(self):
        if not hasattr(F, "scaled_dot_product_attention"):
            raise ImportError("SDPAAttnProcessor requires PyTorch 2.0")

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, scale: float = 1.0):
        residual = hidden_states
        shape = hidden_states.shape
        input_ndim, hidden_states, query, key, value = _prepare(attn, hidden_states, encoder_hidden_states)
        batch_size = hidden_states.shape[0]

        inner_dim = key.shape[-1]
        head_dim = inner_dim // attn.heads
        query = query.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)

        # the output of sdp = (batch, num_heads, seq_len, head_dim)
        hidden_states = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False
        )
        hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, attn.heads * head_dim)
        hidden_states = hidden_states.to(query.dtype)
        return _finish(attn, hidden_states, residual, input_ndim, shape)


def select_attn_processor(prefer: str = "auto"):
    """auto: xformers on CUDA if installed, else SDPA, else the baddbmm reference."""
    if prefer == "xformers":
        if xformers is None:
            raise ImportError("prefer='xformers' but xformers is not installed")
        return XFormersAttnProcessor()
    if prefer == "auto" and xformers is not None and torch.cuda.is_available():
        return XFormersAttnProcessor()
    if prefer in ("auto", "sdpa") and hasattr(F, "scaled_dot_product_attention"):
        return SDPAAttnProcessor()
    logger.warning("falling back to baddbmm attention; expect ~2x slower UNet")
    return BaddbmmAttnProcessor(keep_probs=(prefer == "debug"))


def set_attn_processor(unet, prefer: str = "auto"):
    proc = select_attn_processor(prefer)
    unet.set_attn_processor(proc)
    logger.info("attention processor: %s", type(proc).__name__)
    return proc


def head_dim_scale(head_dim: int, override: Optional[float] = None) -> float:
    return override if override is not None else 1.0 / math.sqrt(head_dim)
