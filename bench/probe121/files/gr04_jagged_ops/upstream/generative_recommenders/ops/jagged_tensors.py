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

"""Dispatchers for the jagged-tensor ops used by HSTU.

Every public op takes a ``kernel: HammerKernel`` argument and routes to one of

* the Triton implementation in ``ops/triton/triton_jagged.py``,
* the hand-written CUDA kernels in ``ops/cpp`` (``torch.ops.my_ops.*``), or
* the PyTorch reference in ``ops/pytorch/pt_jagged.py``.
"""

from typing import Optional, Tuple

import torch

# fbgemm_gpu registers torch.ops.fbgemm.* (jagged <-> dense conversion, cumsum ...)
import fbgemm_gpu  # noqa: F401

from generative_recommenders.common import HammerKernel, switch_to_contiguous_if_needed
from generative_recommenders.ops.cpp import my_ops  # noqa: F401  registers torch.ops.my_ops
from generative_recommenders.ops.pytorch.pt_jagged import (
    pytorch_concat_2D_jagged,
    pytorch_hstu_split_l2_embeddings,
    pytorch_jagged_dense_bmm_broadcast_add,
    pytorch_split_2D_jagged,
)
from generative_recommenders.ops.triton.triton_jagged import (
    triton_concat_2D_jagged,
    triton_jagged_dense_bmm_broadcast_add,
    triton_split_2D_jagged,
)

torch.fx.wrap("triton_concat_2D_jagged")
torch.fx.wrap("triton_split_2D_jagged")


def concat_2D_jagged(
    max_seq_len: int,
    values_left: torch.Tensor,
    values_right: torch.Tensor,
    max_len_left: Optional[int],
    max_len_right: Optional[int],
    offsets_left: Optional[torch.Tensor],
    offsets_right: Optional[torch.Tensor],
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> torch.Tensor:
    if not torch.jit.is_scripting():
        torch._assert(values_left.dim() == 2, "values_left must be 2D")
        torch._assert(values_right.dim() == 2, "values_right must be 2D")
        torch._assert(
            values_right.shape[1] == values_left.shape[1],
            f"values_left shape[1] must be equal to values_right shape[1] {values_left.shape[1]} vs {values_right.shape[1]}",
        )
    if kernel == HammerKernel.TRITON:
        return triton_concat_2D_jagged(
            max_seq_len=max_seq_len,
            values_a=values_left,
            values_b=values_right,
            offsets_a=offsets_left,
            offsets_b=offsets_right,
            max_len_a=max_len_left,
            max_len_b=max_len_right,
        )
    elif kernel == HammerKernel.CUDA:
        assert offsets_left is not None and offsets_right is not None
        return torch.ops.my_ops.concat_2d_jagged(
            max_seq_len, values_left, offsets_left, values_right, offsets_right
        )
    else:
        return pytorch_concat_2D_jagged(
            values_left=values_left,
            values_right=values_right,
            max_len_left=max_len_left,
            max_len_right=max_len_right,
            offsets_left=offsets_left,
            offsets_right=offsets_right,
        )


def split_2D_jagged(
    max_seq_len: int,
    values: torch.Tensor,
    total_len_left: Optional[int],
    total_len_right: Optional[int],
    max_len_left: Optional[int],
    max_len_right: Optional[int],
    offsets_left: Optional[torch.Tensor],
    offsets_right: Optional[torch.Tensor],
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> Tuple[torch.Tensor, torch.Tensor]:
    if not torch.jit.is_scripting():
        torch._assert(values.dim() == 2, "values must be 2D")
        torch._assert(
            offsets_left is not None or offsets_right is not None,
            "offsets_left and offsets_right cannot be None at the same time",
        )
        if offsets_left is None:
            torch._assert(max_len_left is not None, "max_len_left must be provided")
        if offsets_right is None:
            torch._assert(max_len_right is not None, "max_len_right must be provided")
    if kernel == HammerKernel.TRITON:
        return triton_split_2D_jagged(
            max_seq_len=max_seq_len,
            values=values,
            max_len_a=max_len_left,
            max_len_b=max_len_right,
            offsets_a=offsets_left,
            offsets_b=offsets_right,
        )
    elif kernel == HammerKernel.CUDA:
        assert offsets_left is not None and offsets_right is not None
        left, right = torch.ops.my_ops.split_2d_jagged(
            max_seq_len, values, offsets_left, offsets_right
        )
        return left, right
    else:
        return pytorch_split_2D_jagged(
            max_seq_len=max_seq_len,
            values=values,
            max_len_left=max_len_left,
            max_len_right=max_len_right,
            offsets_left=offsets_left,
            offsets_right=offsets_right,
        )


def hstu_split_l2_embeddings(
    max_seq_len: int,
    x: torch.Tensor,
    prefix_offsets: torch.Tensor,
    l2_offsets: torch.Tensor,
    contextual_seq_len: int,
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> Tuple[torch.Tensor, torch.Tensor]:
    if kernel == HammerKernel.TRITON:
        return triton_split_2D_jagged(
            max_seq_len=max_seq_len,
            values=x,
            max_len_a=None,
            max_len_b=None,
            offsets_a=prefix_offsets,
            offsets_b=l2_offsets,
            n_prefix_from_B=contextual_seq_len,
        )
    else:
        return pytorch_hstu_split_l2_embeddings(
            max_seq_len=max_seq_len,
            x=x,
            prefix_offsets=prefix_offsets,
            l2_offsets=l2_offsets,
            contextual_seq_len=contextual_seq_len,
        )


def jagged_dense_bmm_broadcast_add(
    max_seq_len: int,
    seq_offsets: torch.Tensor,
    jagged: torch.Tensor,
    dense: torch.Tensor,
    bias: torch.Tensor,
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> torch.Tensor:
    """
    Computing out = jagged x dense + bias
    jagged has shape (sum_B(M_i), K), dense has shape (B, K, N), and bias has shape (B, N)
    out has shape (sum_B(M_i), N)
    """
    if not torch.jit.is_scripting():
        _, K = jagged.shape
        B, _, N = dense.shape
        torch._assert(dense.shape[1] == K, "wrong dense shape[1]")
        torch._assert(seq_offsets.shape[0] == B + 1, "wrong seq_offsets shape[0]")
        torch._assert(bias.shape[0] == B, "wrong bias shape[0]")
        torch._assert(bias.shape[1] == N, "wrong bias shape[1]")
    if kernel == HammerKernel.TRITON:
        return triton_jagged_dense_bmm_broadcast_add(
            max_seq_len=max_seq_len,
            seq_offsets=seq_offsets,
            jagged=jagged,
            dense=dense,
            bias=bias,
        )
    else:
        return pytorch_jagged_dense_bmm_broadcast_add(
            max_seq_len=max_seq_len,
            seq_offsets=seq_offsets,
            jagged=jagged,
            dense=dense,
            bias=bias,
        )


def jagged_to_padded_nested(
    values: torch.Tensor,
    seq_offsets: torch.Tensor,
    max_seq_len: int,
    padding_value: float = 0.0,
) -> torch.Tensor:
    """Padded view of a jagged tensor built through torch.nested.

    Used by the eval path which is not perf critical; avoids a dependency on
    the fbgemm dense-conversion kernel for odd dtypes (e.g. bool masks).
    """
    nt = torch.nested.nested_tensor_from_jagged(values, offsets=seq_offsets)
    padded = torch.nested.to_padded_tensor(nt, padding_value, (nt.size(0), max_seq_len) + tuple(values.shape[1:]))
    return padded


def jagged_lengths_to_offsets(lengths: torch.Tensor) -> torch.Tensor:
    # fbgemm's complete cumsum prepends a zero: [3, 2] -> [0, 3, 5]
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)


def jagged_row_gather(
    values: torch.Tensor,
    seq_offsets: torch.Tensor,
    row_index: torch.Tensor,
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> torch.Tensor:
    """Gathers whole jagged rows (users) selected by ``row_index``.

    The CUDA gather kernel is always used here: the PyTorch fallback needs a
    host sync to size its output and is too slow for the retrieval path.
    """
    values = switch_to_contiguous_if_needed(values)
    out_offsets, out_values = torch.ops.my_ops.jagged_index_select(
        values, seq_offsets, row_index
    )
    return out_values


def jagged_remove_first_or_last_1D(
    values: torch.Tensor,
    lengths: torch.Tensor,
    offsets: torch.Tensor,
    max_seq_len: int,
) -> torch.Tensor:
    values = values.view(-1, 1)
    shrunk_lengths = lengths - 1
    k_lengths = torch.stack([shrunk_lengths, torch.ones_like(lengths)], dim=1).view(-1)
    q_lengths = torch.stack([torch.ones_like(lengths), shrunk_lengths], dim=1).view(-1)
    all_indices = torch.arange(
        start=0, end=q_lengths.numel(), device=values.device
    ).reshape(-1, 2)
    q_indices, k_indices = all_indices[:, 1], all_indices[:, 0]
    values_no_first, _ = torch.ops.fbgemm.jagged_index_select(
        values, q_lengths, q_indices
    )
    values_no_last, _ = torch.ops.fbgemm.jagged_index_select(
        values, k_lengths, k_indices
    )
    return values_no_first.squeeze(), values_no_last.squeeze()
