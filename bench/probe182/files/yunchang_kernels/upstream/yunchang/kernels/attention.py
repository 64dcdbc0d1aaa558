"""Attention kernels used by yunchang's Ulysses / Ring implementations.

Every function returns ``(out, lse)`` where ``out`` is (bs, seqlen, nheads, headdim)
and ``lse`` is (bs, nheads, seqlen) in fp32, so the ring update can merge blocks.
"""
import math
from enum import Enum
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

try:
    import flash_attn
    from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward
    HAS_FLASH_ATTN = True
except ImportError:
    flash_attn = None
    _flash_attn_forward = None
    _flash_attn_backward = None
    HAS_FLASH_ATTN = False

try:
    from flash_attn_interface import _flash_attn_forward as flash_attn_forward_hopper
    from flash_attn_interface import flash_attn_func as flash3_attn_func
    HAS_FLASH_ATTN_HOPPER = True
except ImportError:
    flash_attn_forward_hopper = None
    flash3_attn_func = None
    HAS_FLASH_ATTN_HOPPER = False

try:
    from sageattention import sageattn, sageattn_qk_int8_pv_fp8_cuda
    HAS_SAGE_ATTN = True
except ImportError:
    HAS_SAGE_ATTN = False


class AttnType(Enum):
    FA = "fa"
    FA3 = "fa3"
    TORCH = "torch"
    SAGE_AUTO = "sage_auto"
    SAGE_FP8 = "sage_fp8"
    SPARSE_SAGE = "sparse_sage"

    @classmethod
    def from_string(cls, s: str):
        for member in cls:
            if member.value == s:
                return member
        raise ValueError(f"'{s}' is not a valid {cls.__name__}")


def pytorch_attn_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float = 0.0,
    softmax_scale: Optional[float] = None,
    causal: bool = True,
    window_size=(-1, -1),
    softcap=None,
    alibi_slopes=None,
    return_softmax=False,
    op_type="efficient",
):
    """
    q shape (bs, seqlen, nhead, hs)
    k shape (bs, seqlen, nhead, hs)
    v shape (bs, seqlen, nhead, hs)
    """
    assert op_type in ["flash", "efficient"], f"Invalid op_type: {op_type}"
    q = q.transpose(1, 2)
    k = k.transpose(1, 2)
    v = v.transpose(1, 2)
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5

    if op_type == "flash":
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, dropout_p=dropout_p, is_causal=causal, scale=softmax_scale
        )[:2]
    else:
        out, lse = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, attn_bias=None, compute_log_sumexp=True,
            dropout_p=dropout_p, is_causal=causal, scale=softmax_scale,
        )[:2]

    out = out.transpose(1, 2)
    lse = lse.to(q.dtype)
    return out, lse


def flash_attn_forward(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                       window_size=(-1, -1), softcap=None, alibi_slopes=None,
                       return_softmax=False):
    assert HAS_FLASH_ATTN, "FlashAttention is not available"
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** (-0.5)
    if flash_attn.__version__ <= "2.6.3":
        block_out, _, _, _, _, block_lse, _, _ = _flash_attn_forward(
            q, k, v, dropout_p=dropout_p, softmax_scale=softmax_scale, causal=causal,
            window_size=window_size, softcap=softcap, alibi_slopes=alibi_slopes,
            return_softmax=return_softmax,
        )
    else:
        block_out, block_lse, _, _ = _flash_attn_forward(
            q, k, v, dropout_p=dropout_p, softmax_scale=softmax_scale, causal=causal,
            window_size_left=window_size[0], window_size_right=window_size[1],
            softcap=softcap, alibi_slopes=alibi_slopes, return_softmax=return_softmax,
        )
    return block_out, block_lse


def flash_attn3_func_forward(q, k, v, dropout_p, softmax_scale, causal, window_size,
                             softcap, alibi_slopes, return_softmax):
    assert HAS_FLASH_ATTN_HOPPER, "flash_attn_interface (FA3) is not installed"
    out, lse, *rest = flash_attn_forward_hopper(
        q, k, v, None, None, None, None, None, None, None, None, None, None, None, None,
        None, None, None, softmax_scale, causal=causal,
        window_size=window_size, softcap=softcap,
    )
    return out, lse


def sage_attn_forward(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                      window_size=(-1, -1), softcap=None, alibi_slopes=None,
                      return_softmax=False, fp8=False):
    assert HAS_SAGE_ATTN, "sageattention is not installed"
    if fp8:
        out, lse = sageattn_qk_int8_pv_fp8_cuda(
            q, k, v, tensor_layout="NHD", is_causal=causal, sm_scale=softmax_scale,
            pv_accum_dtype="fp32+fp32", return_lse=True,
        )
    else:
        out, lse = sageattn(
            q, k, v, tensor_layout="NHD", is_causal=causal, sm_scale=softmax_scale,
            return_lse=True,
        )
    return out, lse


def select_flash_attn_impl(impl_type: AttnType, stage: str = "fwd-bwd", attn_processor=None):
    if impl_type == AttnType.FA:
        if stage == "fwd-only":
            return flash_attn_forward
        elif stage == "bwd-only":
            return _flash_attn_backward
        elif stage == "fwd-bwd":
            assert HAS_FLASH_ATTN
            from flash_attn import flash_attn_func
            return flash_attn_func
        else:
            raise ValueError(f"Unknown stage: {stage}")

    elif impl_type == AttnType.FA3:
        if stage == "fwd-only":
            return flash_attn3_func_forward
        elif stage == "fwd-bwd":
            return flash3_attn_func
        else:
            raise ValueError(f"FA3 does not support stage {stage}")

    elif impl_type == AttnType.TORCH:
        if stage == "fwd-only":
            return pytorch_attn_forward
        elif stage == "fwd-bwd":
            def fn(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
                out = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                    dropout_p=dropout_p, is_causal=causal, scale=softmax_scale,
                )
                return out.transpose(1, 2)
            return fn
        else:
            raise ValueError(f"Unknown stage: {stage}")

    elif impl_type == AttnType.SAGE_AUTO:
        return sage_attn_forward

    elif impl_type == AttnType.SAGE_FP8:
        def fn(*args, **kwargs):
            return sage_attn_forward(*args, fp8=True, **kwargs)
        return fn

    elif impl_type == AttnType.SPARSE_SAGE:
        if attn_processor is None:
            raise ValueError("SPARSE_SAGE requires an attn_processor")
        return attn_processor

    raise ValueError(f"Unknown flash attention implementation: {impl_type}")


def default_attn_type() -> AttnType:
    """FA3 on Hopper, FA2 on Ampere/Ada, plain torch everywhere else."""
    if not torch.cuda.is_available():
        return AttnType.TORCH
    major, _ = torch.cuda.get_device_capability()
    if major == 9 and HAS_FLASH_ATTN_HOPPER:
        return AttnType.FA3
    if major >= 8 and HAS_FLASH_ATTN:
        return AttnType.FA
    return AttnType.TORCH
