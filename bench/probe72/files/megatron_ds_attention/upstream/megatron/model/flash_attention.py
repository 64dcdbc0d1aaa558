# Copyright (c) 2023, NVIDIA CORPORATION.  All rights reserved.
# Copyright (c) Microsoft Corporation. SPDX-License-Identifier: Apache-2.0

"""FlashAttention-backed core attention for Megatron-DeepSpeed, with DeepSpeed-Ulysses
sequence parallelism (all-to-all over the sequence-parallel group around the local kernel)."""

import torch
from deepspeed.accelerator import get_accelerator
from deepspeed.sequence.layer import DistributedAttention
from einops import rearrange

from megatron import get_args
from megatron.core import mpu

try:
    from flash_attn.flash_attn_interface import flash_attn_unpadded_func
except ImportError:
    try:
        from flash_attn.flash_attn_interface import flash_attn_varlen_func as flash_attn_unpadded_func
    except ImportError:
        flash_attn_unpadded_func = None

try:
    from flash_attn.flash_attn_triton import flash_attn_func as flash_attn_triton_func
except ImportError:
    flash_attn_triton_func = None

# flash-attn 2 dense kernel, used when no padding mask is needed
from flash_attn import flash_attn_func


class FlashSelfAttention(torch.nn.Module):
    """Implement the scaled dot product attention with softmax.
    Arguments
    ---------
        softmax_scale: The temperature to use for the softmax attention.
                      (default: 1/sqrt(d_keys) where d_keys is computed at
                      runtime)
        attention_dropout: The dropout rate to apply to the attention
                           (default: 0.0)
    """

    def __init__(self, causal=False, softmax_scale=None, attention_dropout=0.0, device=None, dtype=None):
        super().__init__()
        assert flash_attn_unpadded_func is not None or flash_attn_func is not None, (
            "Please install FlashAttention first, e.g., with pip install flash-attn"
        )
        assert rearrange is not None, "Please install einops first, e.g., with pip install einops"
        self.causal = causal
        self.softmax_scale = softmax_scale
        self.dropout_p = attention_dropout

        # Use FlashAttention-2 when args.use_flash_attn_v2 is True
        args = get_args()
        self.use_flash_attn_builder_v1 = False
        self.use_flash_attn_builder_v2 = False
        self.use_flash_attn = False
        if args.use_flash_attn_builder:
            # ROCm / Intel builds ship the kernel as a DeepSpeed op builder
            self.flash_attn_func = get_accelerator().create_op_builder("FlashAttentionBuilder").load().flash_attn_func
            self.use_flash_attn_builder_v2 = True
        else:
            self.flash_attn_func = flash_attn_unpadded_func
            self.use_flash_attn = True

    def forward(self, q, k, v):
        """Implements the multihead softmax attention.
        Arguments
        ---------
            q, k, v: The tensor containing the query, key, and value. (B, S, H, D)
        """

        assert all((i.dtype in [torch.float16, torch.bfloat16] for i in (q, k, v)))
        assert all((i.is_cuda for i in (q, k, v)))

        batch_size, seqlen_q = q.shape[0], q.shape[1]
        seqlen_k = k.shape[1]

        if self.use_flash_attn:
            q, k, v = [rearrange(x, "b s ... -> (b s) ...") for x in [q, k, v]]
            cu_seqlens_q = torch.arange(
                0, (batch_size + 1) * seqlen_q, step=seqlen_q, dtype=torch.int32, device=q.device
            )
        elif self.use_flash_attn_builder_v1:
            q, k, v = [rearrange(x, "b s h d -> b h s d").contiguous() for x in [q, k, v]]
        else:
            # use_flash_attn_builder_v2
            q, k, v = [rearrange(x, "b s h d -> b h s d") for x in [q, k, v]]

        if self.training:
            # during training q,k,v always have same seqlen
            assert seqlen_k == seqlen_q

            is_causal = self.causal
            cu_seqlens_k = cu_seqlens_q if get_accelerator().device_name() == "cuda" else None
            dropout_p = self.dropout_p
        else:
            # turn off FA causal mask after first inference autoregressive iteration
            # only on first autoregressive step q,k,v have same seqlen
            is_causal = seqlen_q == seqlen_k
            cu_seqlens_k = (
                torch.arange(0, (batch_size + 1) * seqlen_k, step=seqlen_k, dtype=torch.int32, device=q.device)
                if get_accelerator().device_name() == "cuda"
                else None
            )
            dropout_p = 0

        if self.use_flash_attn:
            output = self.flash_attn_func(
                q, k, v, cu_seqlens_q, cu_seqlens_k, seqlen_q, seqlen_k,
                dropout_p,
                softmax_scale=self.softmax_scale, causal=is_causal
            )
        else:
            # use_flash_attn_builder
            output = self.flash_attn_func(
                q, k, v, self.dropout_p, self.softmax_scale, is_causal
            )

        if self.use_flash_attn:
            output = rearrange(output, "(b s) ... -> b s ...", b=batch_size)
        elif self.use_flash_attn_builder_v2:
            output = rearrange(output, "b h s d -> b s h d").contiguous()

        return output


class DenseFlashAttention(torch.nn.Module):
    """flash-attn 2 dense path (no cu_seqlens), the default for long-sequence Ulysses runs."""

    def __init__(self, causal=True, softmax_scale=None, attention_dropout=0.0):
        super().__init__()
        self.causal = causal
        self.softmax_scale = softmax_scale
        self.dropout_p = attention_dropout

    def forward(self, q, k, v):
        # q, k, v: (B, S_local_or_full, H_local, D) after the Ulysses all-to-all
        return flash_attn_func(
            q, k, v,
            dropout_p=self.dropout_p if self.training else 0.0,
            softmax_scale=self.softmax_scale,
            causal=self.causal,
        )


def build_core_attention(layer_number, attn_mask_type, args):
    """Wrap the local attention kernel with DeepSpeed-Ulysses when sequence parallelism is on."""
    local_attn = DenseFlashAttention(causal=True, attention_dropout=args.attention_dropout)
    if args.use_flash_attn_v1:
        local_attn = FlashSelfAttention(causal=True, attention_dropout=args.attention_dropout)

    enable_ds_sequence_parallel = mpu.get_sequence_parallel_world_size() > 1 or args.force_ds_sequence_parallel
    if enable_ds_sequence_parallel:
        assert args.num_attention_heads % mpu.get_sequence_parallel_world_size() == 0
        # scatter heads (dim 2), gather sequence (dim 1) for [b, s, h, d] inputs
        return DistributedAttention(local_attn, mpu.get_sequence_parallel_group(), scatter_idx=2, gather_idx=1)
    return local_attn
