"""Varlen flash attention for the continuous-batching server.

Sequences of a batch are packed back to back (no padding); ``cu_seqlens``
holds the cumulative lengths.  Prefers flash-attn v2 (Ampere+), falls back to
v1 on Turing, and to xformers' memory-efficient attention when neither is
installed (e.g. on V100).
"""
import os
from typing import Optional

import torch
from loguru import logger
from packaging import version

if os.getenv("USE_FLASH_ATTENTION", "").lower() == "false":
    raise ImportError("`USE_FLASH_ATTENTION` is false.")

if not torch.cuda.is_available():
    raise ImportError("CUDA is not available")

major, minor = torch.cuda.get_device_capability()
is_sm75 = major == 7 and minor == 5
is_sm8x = major == 8 and minor >= 0
is_sm90 = major == 9 and minor == 0

HAS_FLASH_ATTN = False
HAS_FLASH_ATTN_V2 = False
HAS_XFORMERS = False

try:
    try:
        import flash_attn
        from flash_attn import flash_attn_varlen_func
    except ImportError:
        raise ImportError(
            "Flash Attention V2 is not installed.\n"
            "Use the official Docker image (ghcr.io/predibase/lorax:latest) "
            "or install flash attention v2 with `cd server && make install install-flash-attention-v2`"
        )
    if version.parse(flash_attn.__version__) < version.parse("2.3.0"):
        raise ImportError(f"flash-attn {flash_attn.__version__} is too old, sliding windows need >= 2.3.0")
    if not (is_sm8x or is_sm90):
        raise ImportError(
            f"GPU with CUDA capability {major} {minor} is not supported for Flash Attention V2"
        )
    HAS_FLASH_ATTN_V2 = True
except ImportError as e:
    try:
        import flash_attn_cuda
    except ImportError:
        logger.warning(
            "Unable to use Flash Attention V2: {}\n"
            "Trying xformers memory-efficient attention instead.",
            e,
        )
        try:
            import xformers.ops as xops

            HAS_XFORMERS = True
        except ImportError:
            raise ImportError(
                "Neither Flash Attention nor xformers is installed."
            ) from e
    else:
        if not (is_sm75 or is_sm8x or is_sm90):
            raise ImportError(
                f"GPU with CUDA capability {major} {minor} is not supported"
            ) from e
        logger.warning(f"Unable to use Flash Attention V2: {e}")
        HAS_FLASH_ATTN = True


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    cu_seqlens: torch.Tensor,
    max_s: int,
    softmax_scale: float,
    window_size_left: int = -1,
    causal: bool = True,
) -> torch.Tensor:
    """q: [total_tokens, num_heads, head_size]; k/v: [total_tokens, num_kv_heads, head_size]."""
    if window_size_left <= 0 and window_size_left != -1:
        raise ValueError("`window_size_left` must be > 0 or -1")

    if HAS_FLASH_ATTN_V2:
        return flash_attn_varlen_func(
            q,
            k,
            v,
            cu_seqlens,
            cu_seqlens,
            max_s,
            max_s,
            dropout_p=0.0,
            softmax_scale=softmax_scale,
            causal=causal,
            window_size=(window_size_left, 0),
            out=out,
        ) if _supports_out_kwarg() else out.copy_(
            flash_attn_varlen_func(
                q, k, v, cu_seqlens, cu_seqlens, max_s, max_s,
                dropout_p=0.0, softmax_scale=softmax_scale, causal=causal,
                window_size=(window_size_left, 0),
            )
        )

    if window_size_left != -1:
        raise NotImplementedError("window_size_left is only available with flash attn v2")

    if HAS_FLASH_ATTN:
        # Flash attention v1 requires q, k and v to have the same number of heads
        if k.shape[1] != q.shape[1]:
            # MQA expand
            if k.shape[1] == 1:
                k = k.expand(-1, q.shape[1], -1)
            # Grouped attention reshape
            else:
                original_shape = k.shape
                k = (
                    k.unsqueeze(2)
                    .expand(-1, -1, q.shape[1] // k.shape[1], -1)
                    .reshape(original_shape[0], -1, original_shape[2])
                )
        if v.shape[1] != q.shape[1]:
            if v.shape[1] == 1:
                v = v.expand(-1, q.shape[1], -1)
            else:
                original_shape = v.shape
                v = (
                    v.unsqueeze(2)
                    .expand(-1, -1, q.shape[1] // v.shape[1], -1)
                    .reshape(original_shape[0], -1, original_shape[2])
                )
        return flash_attn_cuda.fwd(
            q, k, v, out, cu_seqlens, cu_seqlens, max_s, max_s,
            0.0, softmax_scale, False, causal, False, 0, None,
        )

    # xformers fallback (V100 / no flash-attn build)
    seqlens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    attn_bias = xops.fmha.attn_bias.BlockDiagonalCausalMask.from_seqlens(seqlens)
    if k.shape[1] != q.shape[1]:
        rep = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    res = xops.memory_efficient_attention(
        q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
        attn_bias=attn_bias, scale=softmax_scale,
    )
    return out.copy_(res.squeeze(0))


_OUT_KWARG: Optional[bool] = None


def _supports_out_kwarg() -> bool:
    global _OUT_KWARG
    if _OUT_KWARG is None:
        import inspect

        _OUT_KWARG = "out" in inspect.signature(flash_attn_varlen_func).parameters
    return _OUT_KWARG
