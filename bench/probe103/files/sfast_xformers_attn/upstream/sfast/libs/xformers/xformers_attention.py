"""TorchScript-friendly wrapper around ``xformers.ops.memory_efficient_attention``.

xformers chooses its operator (CUTLASS, FlashAttention, Triton, small-K) at
runtime by inspecting the inputs, which ``torch.jit.trace`` cannot see through:
the trace would bake in Python-side dispatch.  We register the attention as a
real custom op so it shows up as one node in the traced graph, and pick the
xformers operator ourselves from the GPU's compute capability.
"""
import logging
from typing import Optional

import torch
from xformers.ops import memory_efficient_attention as _memory_efficient_attention
from xformers.ops import fmha

logger = logging.getLogger(__name__)

_FLASH_MAX_HEAD_DIM = 128


def _pick_op(q: torch.Tensor):
    """FlashAttention-2 on Ampere+ for fp16/bf16 and head_dim <= 128, CUTLASS otherwise."""
    major, minor = torch.cuda.get_device_capability(q.device)
    if major >= 8 and q.dtype in (torch.float16, torch.bfloat16) and q.shape[-1] <= _FLASH_MAX_HEAD_DIM:
        return fmha.MemoryEfficientAttentionFlashAttentionOp
    return fmha.MemoryEfficientAttentionCutlassOp


def _mea_cuda(query: torch.Tensor,
              key: torch.Tensor,
              value: torch.Tensor,
              attn_bias: Optional[torch.Tensor] = None,
              p: float = 0.0,
              scale: Optional[float] = None) -> torch.Tensor:
    # xformers layout is [B, M, H, K]
    if attn_bias is not None and attn_bias.dtype != query.dtype:
        attn_bias = attn_bias.to(query.dtype)
    return _memory_efficient_attention(query, key, value, attn_bias=attn_bias, p=p, scale=scale, op=_pick_op(query))


def _mea_meta(query, key, value, attn_bias=None, p=0.0, scale=None):
    return torch.empty(query.shape[:-1] + (value.shape[-1],), dtype=query.dtype, device=query.device)


lib = torch.library.Library("sfast_xformers", "DEF")
lib.define(
    "memory_efficient_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias=None, float p=0.0, float? scale=None) -> Tensor"
)
lib.impl("memory_efficient_attention", _mea_cuda, "CUDA")
lib.impl("memory_efficient_attention", _mea_meta, "Meta")


def xformers_memory_efficient_attention(query: torch.Tensor,
                                        key: torch.Tensor,
                                        value: torch.Tensor,
                                        attn_bias=None,
                                        p: float = 0.0,
                                        scale: Optional[float] = None,
                                        *,
                                        op=None):
    """Drop-in replacement for ``xformers.ops.memory_efficient_attention``.

    Only tensor biases (or None) are supported; xformers' AttentionBias objects
    (e.g. ``LowerTriangularMask``) can't cross the TorchScript boundary.
    """
    if op is not None:
        logger.debug("explicit xformers op %s ignored, selecting by compute capability", op)
    if attn_bias is not None and not isinstance(attn_bias, torch.Tensor):
        raise TypeError(f"attn_bias of type {type(attn_bias).__name__} is not supported when tracing")
    if query.dim() == 3:
        # [B*H, M, K] inputs coming from old diffusers attention processors
        query, key, value = (t.unsqueeze(2) for t in (query, key, value))
        out = torch.ops.sfast_xformers.memory_efficient_attention(query, key, value, attn_bias, p, scale)
        return out.squeeze(2)
    return torch.ops.sfast_xformers.memory_efficient_attention(query, key, value, attn_bias, p, scale)


def is_available():
    try:
        return torch.cuda.is_available() and fmha is not None
    except Exception:  # pragma: no cover
        return False
