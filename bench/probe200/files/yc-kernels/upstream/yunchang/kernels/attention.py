import math
from enum import Enum
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from yunchang.globals import (
    HAS_FLASH_ATTN,
    HAS_FLASH_ATTN_HOPPER,
    HAS_FLASHINFER,
    HAS_SAGE_ATTENTION,
    HAS_SPARSE_SAGE_ATTENTION,
)

if HAS_FLASH_ATTN:
    import flash_attn
    from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_backward
    from flash_attn import flash_attn_func
else:
    flash_attn = None
    flash_attn_func = None

if HAS_FLASH_ATTN_HOPPER:
    from flash_attn_interface import _flash_attn_forward as flash_attn_forward_hopper
    from flash_attn_interface import _flash_attn_backward as flash_attn_func_hopper_backward
    from flash_attn_interface import flash_attn_func as flash3_attn_func

if HAS_SAGE_ATTENTION:
    import sageattention

if HAS_SPARSE_SAGE_ATTENTION:
    from spas_sage_attn.autotune import SparseAttentionMeansim


class AttnType(Enum):
    FA = "fa"
    FA3 = "fa3"
    FLASHINFER = "flashinfer"
    TORCH = "torch"
    SAGE_AUTO = "sage_auto"
    SAGE_FP16 = "sage_fp16"
    SAGE_FP16_TRITON = "sage_fp16_triton"
    SAGE_FP8 = "sage_fp8"
    SAGE_FP8_SM90 = "sage_fp8_sm90"
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
    dropout_p=0.0,
    softmax_scale=None,
    causal=True,
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

    if op_type == "flash":
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q,
            k,
            v,
            dropout_p=dropout_p,
            is_causal=causal,
            scale=softmax_scale,
        )[:2]
    elif op_type == "efficient":
        out, lse = torch.ops.aten._scaled_dot_product_efficient_attention(
            q,
            k,
            v,
            attn_bias=None,
            compute_log_sumexp=True,
            dropout_p=dropout_p,
            is_causal=causal,
            scale=softmax_scale,
        )[:2]
    else:
        raise ValueError(f"Invalid op_type: {op_type}")

    out = out.transpose(1, 2)
    lse = lse.to(q.dtype)

    return out, lse


def pytorch_attn_backward(
    dout,
    q,
    k,
    v,
    out,
    softmax_lse,
    block_dq_buffer,
    block_dk_buffer,
    block_dv_buffer,
    dropout_p,
    softmax_scale,
    bwd_causal=None,
    window_size=(-1, -1),
    softcap=None,
    alibi_slopes=None,
    deterministic=False,
    rng_state=None,
    *args,
    **kwargs,
):
    # TODO(optim): use pure pytorch backward with fewer transposes
    q = q.transpose(1, 2)
    k = k.transpose(1, 2)
    v = v.transpose(1, 2)
    out = out.transpose(1, 2)
    dout = dout.transpose(1, 2)

    philox_seed = torch.tensor(0, dtype=torch.int64)
    philox_offset = torch.tensor(0, dtype=torch.int64)
    dq, dk, dv, _ = torch.ops.aten._scaled_dot_product_efficient_attention_backward(
        dout,
        q,
        k,
        v,
        None,
        out,
        softmax_lse.float(),
        philox_seed,
        philox_offset,
        dropout_p,
        [True, True, True, False],
        bwd_causal,
        scale=softmax_scale,
    )

    block_dq_buffer.copy_(dq.transpose(1, 2))
    block_dk_buffer.copy_(dk.transpose(1, 2))
    block_dv_buffer.copy_(dv.transpose(1, 2))
    return block_dq_buffer, block_dk_buffer, block_dv_buffer


def torch_attn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    *args,
    **kwargs,
):
    """Reference path through F.scaled_dot_product_attention, pinned to the flash backend."""
    batch_size, seq_len, hs, hd = q.size()
    query = q.view(batch_size, -1, hs, hd).transpose(1, 2)
    key = k.view(batch_size, -1, hs, hd).transpose(1, 2)
    value = v.view(batch_size, -1, hs, hd).transpose(1, 2)

    # the output of sdp = (batch, num_heads, seq_len, head_dim)
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
        hidden_states = F.scaled_dot_product_attention(
            query, key, value, dropout_p=dropout_p, is_causal=causal, scale=softmax_scale
        )

    hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, hs, hd)
    hidden_states = hidden_states.to(query.dtype)
    return hidden_states


def flash_attn_forward(
    q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, return_softmax
):
    assert HAS_FLASH_ATTN, "FlashAttention is not available"
    if flash_attn.__version__ < "2.6.3":
        block_out, _, _, _, _, block_lse, _, _ = _flash_attn_forward(
            q,
            k,
            v,
            dropout_p=dropout_p,
            softmax_scale=softmax_scale,
            causal=causal,
            window_size=window_size,
            softcap=softcap,
            alibi_slopes=alibi_slopes,
            return_softmax=return_softmax,
        )
    else:
        block_out, block_lse, _, _ = _flash_attn_forward(
            q,
            k,
            v,
            dropout_p=dropout_p,
            softmax_scale=softmax_scale,
            causal=causal,
            window_size_left=window_size[0],
            window_size_right=window_size[1],
            softcap=softcap,
            alibi_slopes=alibi_slopes,
            return_softmax=return_softmax,
        )
    return block_out, block_lse


def flash_attn_backward(
    dout,
    q,
    k,
    v,
    out,
    softmax_lse,
    block_dq_buffer,
    block_dk_buffer,
    block_dv_buffer,
    dropout_p,
    softmax_scale,
    bwd_causal,
    window_size,
    softcap,
    alibi_slopes,
    deterministic,
    rng_state,
):
    assert HAS_FLASH_ATTN, "FlashAttention is not available"
    if flash_attn.__version__ < "2.6.3":
        _flash_attn_backward(
            dout, q, k, v, out, softmax_lse,
            block_dq_buffer, block_dk_buffer, block_dv_buffer,
            dropout_p, softmax_scale, bwd_causal, window_size,
            softcap, alibi_slopes, deterministic, rng_state,
        )
    else:
        _flash_attn_backward(
            dout, q, k, v, out, softmax_lse,
            block_dq_buffer, block_dk_buffer, block_dv_buffer,
            dropout_p, softmax_scale, bwd_causal,
            window_size[0], window_size[1],
            softcap, alibi_slopes, deterministic, rng_state,
        )
    return block_dq_buffer, block_dk_buffer, block_dv_buffer


def flash_attn3_func_forward(
    q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, return_softmax
):
    assert HAS_FLASH_ATTN_HOPPER, "FlashAttention-3 requires an sm90 GPU and the hopper/ build"
    out, softmax_lse, *rest = flash_attn_forward_hopper(
        q, k, v, None, None, None, None, None, None, None, None, None, None,
        None, None, None, None, None, None, None,
        softmax_scale, causal=causal, window_size=window_size, softcap=softcap,
    )
    return out, softmax_lse


def select_flash_attn_impl(
    impl_type: AttnType, stage: str = "fwd-bwd", attn_processor: Optional[torch.nn.Module] = None
):
    if impl_type == AttnType.FA:
        if stage == "fwd-only":
            return flash_attn_forward
        elif stage == "bwd-only":
            return flash_attn_backward
        elif stage == "fwd-bwd":
            assert flash_attn_func is not None, "flash_attn is not installed"
            return flash_attn_func
        else:
            raise ValueError(f"Unknown stage: {stage}")

    elif impl_type == AttnType.FA3:
        if stage == "fwd-only":
            return flash_attn3_func_forward
        elif stage == "bwd-only":
            return flash_attn_func_hopper_backward
        elif stage == "fwd-bwd":

            def fn(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
                assert dropout_p == 0.0, "FA3 does not support dropout"
                return flash3_attn_func(q, k, v, softmax_scale=softmax_scale, causal=causal)[0]

            return fn
        else:
            raise ValueError(f"Unknown stage: {stage}")

    elif impl_type == AttnType.TORCH:
        if stage == "fwd-only":
            return pytorch_attn_forward
        elif stage == "bwd-only":
            return pytorch_attn_backward
        elif stage == "fwd-bwd":
            return torch_attn
        else:
            raise ValueError(f"Unknown stage: {stage}")

    elif impl_type == AttnType.SAGE_AUTO:
        if not HAS_SAGE_ATTENTION:
            raise ImportError("SageAttention is not available!")
        return lambda q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs: sageattention.sageattn(
            q, k, v, tensor_layout="NHD", is_causal=causal, sm_scale=softmax_scale
        )

    elif impl_type == AttnType.SAGE_FP8_SM90:
        if not HAS_SAGE_ATTENTION:
            raise ImportError("SageAttention is not available!")
        return lambda q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs: sageattention.sageattn_qk_int8_pv_fp8_cuda_sm90(
            q, k, v, tensor_layout="NHD", is_causal=causal, sm_scale=softmax_scale, pv_accum_dtype="fp32+fp32"
        )

    elif impl_type == AttnType.SPARSE_SAGE:
        if not HAS_SPARSE_SAGE_ATTENTION:
            raise ImportError("SparseSageAttention is not available!")
        if not isinstance(attn_processor, SparseAttentionMeansim):
            raise ImportError("SparseSageAttention is only available with a SparseAttentionProcessor class passed in")

        def fn(q, k, v, causal=False, softmax_scale=None, *args, **kwargs):
            return attn_processor(q, k, v, is_causal=causal, scale=softmax_scale, tensor_layout="NHD")

        return fn

    elif attn_processor is not None:
        return attn_processor

    else:
        raise ValueError(f"Unknown flash attention implementation: {impl_type}")
