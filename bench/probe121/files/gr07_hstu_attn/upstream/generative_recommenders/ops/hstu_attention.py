# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# pyre-strict

import logging
from typing import Optional

import torch

from generative_recommenders.common import HammerKernel, is_sm90
from generative_recommenders.ops.pytorch.pt_hstu_attention import (
    pytorch_cached_hstu_mha,
    pytorch_hstu_mha,
)
from generative_recommenders.ops.triton.triton_hstu_attention import (
    triton_cached_hstu_mha,
    triton_hstu_mha,
)

logger: logging.Logger = logging.getLogger(__name__)

try:
    # FlashAttention-3 based HSTU kernels (Hopper / Ampere), built from
    # generative_recommenders/ops/cpp/hstu_attention with nvcc.
    from hstu_attn import hstu_attn_varlen_func

    HAS_HSTU_CUDA = True
except ImportError:
    hstu_attn_varlen_func = None
    HAS_HSTU_CUDA = False


def _check_inputs(
    max_seq_len: int,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
) -> None:
    torch._assert(max_seq_len > 0, "max_seq_len must be larger than 0")
    torch._assert(q.dim() == 3, "q must be 3-D")
    torch._assert(k.shape == q.shape, "k must be the same shape as q")
    torch._assert(v.dim() == 3, "v must be 3-D")
    torch._assert(v.shape[0] == q.shape[0], "wrong v shape[0]")
    torch._assert(v.shape[1] == q.shape[1], "wrong v shape[1]")
    torch._assert(seq_offsets.dim() == 1, "seq_offsets must be 1-D")
    torch._assert(q.is_cuda, "q must be a CUDA tensor")


def hstu_mha(
    max_seq_len: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    causal: bool = True,
    dropout_pr: float = 0.0,
    training: bool = True,
    num_targets: Optional[torch.Tensor] = None,
    max_attn_len: int = 0,
    contextual_seq_len: int = 0,
    min_full_attn_seq_len: int = 0,
    sort_by_length: bool = False,
    kernel: HammerKernel = HammerKernel.PYTORCH,
    enable_tma: bool = False,
) -> torch.Tensor:
    _, H, _ = q.shape
    if not torch.jit.is_scripting():
        _check_inputs(max_seq_len, q, k, v, seq_offsets)
    if dropout_pr > 0.0 and training:
        q = torch.nn.functional.dropout(q, p=dropout_pr, training=training)

    if kernel == HammerKernel.CUDA:
        assert HAS_HSTU_CUDA, "hstu_attn CUDA extension is not installed"
        # fa3-style kernel expects [L, H, D] and int32 cu_seqlens
        return hstu_attn_varlen_func(
            q=q,
            k=k,
            v=v,
            cu_seqlens_q=seq_offsets.to(torch.int32),
            cu_seqlens_k=seq_offsets.to(torch.int32),
            max_seqlen_q=max_seq_len,
            max_seqlen_k=max_seq_len,
            num_contexts=None,
            num_targets=num_targets,
            target_group_size=1,
            window_size=(max_attn_len - 1 if max_attn_len > 0 else -1, 0),
            alpha=alpha,
            rab=None,
            has_drab=False,
        )
    elif kernel in [HammerKernel.TRITON, HammerKernel.TRITON_CC]:
        if not is_sm90():
            enable_tma = False
        return triton_hstu_mha(
            N=max_seq_len,
            alpha=alpha,
            q=q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            causal=causal,
            num_targets=num_targets,
            max_attn_len=max_attn_len,
            contextual_seq_len=contextual_seq_len,
        )
    else:
        return pytorch_hstu_mha(
            max_seq_len=max_seq_len,
            alpha=alpha,
            q=q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            causal=causal,
            dropout_pr=0.0,
            training=training,
            num_targets=num_targets,
            max_attn_len=max_attn_len,
            contextual_seq_len=contextual_seq_len,
            min_full_attn_seq_len=min_full_attn_seq_len,
        )


def delta_hstu_mha(
    max_seq_len: int,
    alpha: float,
    delta_q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    num_targets: Optional[torch.Tensor] = None,
    max_attn_len: int = 0,
    contextual_seq_len: int = 0,
    kernel: HammerKernel = HammerKernel.PYTORCH,
    enable_tma: bool = False,
) -> torch.Tensor:
    """Attention for the newly appended (delta) rows against a cached K/V.

    Used by incremental inference: only the last ``delta_size`` positions of
    every sequence are recomputed.
    """
    L, H, D = delta_q.shape
    B = seq_offsets.size(0) - 1
    DeltaSize = L // B
    if not torch.jit.is_scripting():
        torch._assert(max_seq_len > 0, "max_seq_len must be larger than 0")
        torch._assert(delta_q.dim() == 3, "delta_q must be 3-D")
        torch._assert(L % B == 0, "delta_q must be padded")
        torch._assert(k.dim() == 3, "k must be 3-D")
        torch._assert(k.shape[1] == H, "wrong k shape[1]")
        torch._assert(k.shape[2] == D, "wrong k shape[2]")
        torch._assert(v.dim() == 3, "v must be 3-D")
        torch._assert(v.shape[1] == H, "wrong v shape[1]")
    if kernel in [HammerKernel.TRITON, HammerKernel.TRITON_CC]:
        if not is_sm90():
            enable_tma = False
        return triton_cached_hstu_mha(
            N=max_seq_len,
            alpha=alpha,
            delta_q=delta_q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            num_targets=num_targets,
            max_attn_len=max_attn_len,
            contextual_seq_len=contextual_seq_len,
            enable_tma=enable_tma,
        )
    else:
        return pytorch_cached_hstu_mha(
            max_seq_len=max_seq_len,
            alpha=alpha,
            delta_q=delta_q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            num_targets=num_targets,
            max_attn_len=max_attn_len,
            contextual_seq_len=contextual_seq_len,
        )


def hstu_mha_dense_fallback(
    max_seq_len: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
) -> torch.Tensor:
    """Dense (padded) evaluation of HSTU attention for debugging.

    silu(QK^T) is *not* a softmax, so there is no flash / SDPA kernel that
    computes it; this materialises the [B, H, N, N] score tensor.
    """
    B = seq_offsets.size(0) - 1
    L, H, D = q.shape
    padded_q = torch.ops.fbgemm.jagged_to_padded_dense(
        values=q.view(L, H * D),
        offsets=[seq_offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    ).view(B, max_seq_len, H, D)
    padded_k = torch.ops.fbgemm.jagged_to_padded_dense(
        values=k.view(L, H * D),
        offsets=[seq_offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    ).view(B, max_seq_len, H, D)
    padded_v = torch.ops.fbgemm.jagged_to_padded_dense(
        values=v.reshape(L, -1),
        offsets=[seq_offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    ).view(B, max_seq_len, H, -1)
    qk = torch.einsum("bnhd,bmhd->bhnm", padded_q, padded_k) * alpha
    attn = torch.nn.functional.silu(qk) / max_seq_len
    causal_mask = torch.tril(
        torch.ones((max_seq_len, max_seq_len), dtype=torch.bool, device=q.device)
    )
    attn = attn * causal_mask.view(1, 1, max_seq_len, max_seq_len)
    out = torch.einsum("bhnm,bmhd->bnhd", attn, padded_v)
    return torch.ops.fbgemm.dense_to_jagged(
        out.reshape(B, max_seq_len, -1), [seq_offsets]
    )[0].view(L, H, -1)
