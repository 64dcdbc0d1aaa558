"""
Attention backend selection for SimpleTuner.

`--attention_mechanism` chooses what `F.scaled_dot_product_attention` resolves to while
training and/or validating:

  diffusers                         torch SDPA (default)
  xformers                          xformers memory_efficient_attention via diffusers
  sageattention                     SageAttention, auto-selected kernel
  sageattention-int8-fp16-triton    SageAttention INT8 QK / FP16 PV, Triton kernel
  sageattention-int8-fp16-cuda      SageAttention INT8 QK / FP16 PV, CUDA kernel (sm80+)
  sageattention-int8-fp8-cuda       SageAttention INT8 QK / FP8 PV, CUDA kernel (sm89+)
  flash-attn-3                      FlashAttention-3 (Hopper only)

SageAttention does not support backward, so anything but inference will produce wrong
gradients; it is mostly used with `--sageattention_usage=inference` to speed up validation.
"""

import logging
import os
from typing import Optional

import torch
import torch.nn.functional as F

logger = logging.getLogger("AttentionBackend")
logger.setLevel(os.environ.get("SIMPLETUNER_LOG_LEVEL", "INFO"))

_ORIGINAL_SDPA = F.scaled_dot_product_attention
_ACTIVE_BACKEND: Optional[str] = None

SAGEATTENTION_MECHANISMS = (
    "sageattention",
    "sageattention-int8-fp16-triton",
    "sageattention-int8-fp16-cuda",
    "sageattention-int8-fp8-cuda",
)


def _cuda_capability() -> tuple:
    major, minor = torch.cuda.get_device_capability()
    return major, minor


def _resolve_sageattention_kernel(mechanism: str):
    try:
        from sageattention import (
            sageattn,
            sageattn_qk_int8_pv_fp16_triton,
            sageattn_qk_int8_pv_fp16_cuda,
            sageattn_qk_int8_pv_fp8_cuda,
        )
    except ImportError as e:
        raise ImportError(
            "Could not import SageAttention. Please install it to use this --attention_mechanism=sageattention."
        ) from e

    if mechanism == "sageattention":
        return sageattn
    if mechanism == "sageattention-int8-fp16-triton":
        return sageattn_qk_int8_pv_fp16_triton
    if mechanism == "sageattention-int8-fp16-cuda":
        if _cuda_capability() < (8, 0):
            raise ValueError("sageattention-int8-fp16-cuda requires an Ampere (sm80) or newer GPU.")
        return sageattn_qk_int8_pv_fp16_cuda
    if mechanism == "sageattention-int8-fp8-cuda":
        if _cuda_capability() < (8, 9):
            raise ValueError("sageattention-int8-fp8-cuda requires an Ada (sm89) or Hopper GPU.")
        return sageattn_qk_int8_pv_fp8_cuda
    raise ValueError(f"Unknown SageAttention mechanism: {mechanism}")


def _make_sage_sdpa(kernel):
    def sage_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        # SageAttention only supports fp16/bf16 without masks or dropout; anything else goes to SDPA.
        if (
            attn_mask is not None
            or dropout_p > 0.0
            or query.dtype not in (torch.float16, torch.bfloat16)
            or query.shape[-1] not in (64, 96, 128)
        ):
            return _ORIGINAL_SDPA(
                query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale
            )
        try:
            return kernel(query, key, value, tensor_layout="HND", is_causal=is_causal, sm_scale=scale)
        except Exception as e:
            logger.error(f"SageAttention failed, falling back to SDPA: {e}")
            return _ORIGINAL_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)

    return sage_sdpa


def enable_sageattention(mechanism: str = "sageattention"):
    global _ACTIVE_BACKEND
    if mechanism not in SAGEATTENTION_MECHANISMS:
        raise ValueError(f"{mechanism} is not a SageAttention mechanism; choose from {SAGEATTENTION_MECHANISMS}")
    if not torch.cuda.is_available() or torch.version.cuda is None:
        raise RuntimeError("SageAttention requires a CUDA device.")
    kernel = _resolve_sageattention_kernel(mechanism)
    F.scaled_dot_product_attention = _make_sage_sdpa(kernel)
    torch.nn.functional.scaled_dot_product_attention = F.scaled_dot_product_attention
    _ACTIVE_BACKEND = mechanism
    logger.info(f"Enabled {mechanism} for F.scaled_dot_product_attention.")


def disable_sageattention():
    global _ACTIVE_BACKEND
    F.scaled_dot_product_attention = _ORIGINAL_SDPA
    torch.nn.functional.scaled_dot_product_attention = _ORIGINAL_SDPA
    _ACTIVE_BACKEND = None


def enable_flash_attn_3():
    """Route SDPA calls without a mask to FlashAttention-3 (hopper wheel: flash_attn_interface)."""
    global _ACTIVE_BACKEND
    major, _ = torch.cuda.get_device_capability()
    if major < 9:
        raise ValueError("FlashAttention-3 requires a Hopper (sm90) GPU.")
    from flash_attn_interface import flash_attn_func

    def fa3_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        if attn_mask is not None or dropout_p > 0.0:
            return _ORIGINAL_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
        # flash_attn_interface expects (batch, seqlen, heads, head_dim)
        q, k, v = (t.transpose(1, 2) for t in (query, key, value))
        out = flash_attn_func(q, k, v, softmax_scale=scale, causal=is_causal)
        if isinstance(out, tuple):
            out = out[0]
        return out.transpose(1, 2)

    F.scaled_dot_product_attention = fa3_sdpa
    torch.nn.functional.scaled_dot_product_attention = fa3_sdpa
    _ACTIVE_BACKEND = "flash-attn-3"


def get_active_backend() -> str:
    return _ACTIVE_BACKEND or "diffusers"


def attention_backend_summary() -> str:
    if not torch.cuda.is_available():
        return f"backend={get_active_backend()} (no CUDA device)"
    name = torch.cuda.get_device_name()
    major, minor = _cuda_capability()
    return f"backend={get_active_backend()} device={name} sm{major}{minor}"
