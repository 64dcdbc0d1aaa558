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

from typing import Optional, Tuple

import torch

# fbgemm_gpu registers torch.ops.fbgemm.{jagged_to_padded_dense,dense_to_jagged,...}
import fbgemm_gpu.sparse_ops  # noqa: F401

from generative_recommenders.common import HammerKernel
from generative_recommenders.ops.triton.triton_jagged import (
    triton_concat_2D_jagged,
    triton_jagged_dense_bmm_broadcast_add,
)

try:
    from generative_recommenders.ops.cpp import cuda_ops  # noqa: F401

    _HAS_CUDA_OPS = True
except (ImportError, OSError):
    _HAS_CUDA_OPS = False

torch.fx.wrap("triton_concat_2D_jagged")
torch.fx.wrap("triton_jagged_dense_bmm_broadcast_add")

# Default used by the research trainer when no kernel is configured explicitly.
DEFAULT_JAGGED_KERNEL: HammerKernel = (
    HammerKernel.TRITON if torch.cuda.is_available() else HammerKernel.PYTORCH
)


def _pytorch_concat_2D_jagged(
    max_seq_len: int,
    values_left: torch.Tensor,
    values_right: torch.Tensor,
    max_len_left: int,
    max_len_right: int,
    offsets_left: torch.Tensor,
    offsets_right: torch.Tensor,
) -> torch.Tensor:
    _, D = values_left.shape
    padded_left = torch.ops.fbgemm.jagged_to_padded_dense(
        values=values_left,
        offsets=[offsets_left],
        max_lengths=[max_len_left],
        padding_value=0.0,
    )
    padded_right = torch.ops.fbgemm.jagged_to_padded_dense(
        values=values_right,
        offsets=[offsets_right],
        max_lengths=[max_len_right],
        padding_value=0.0,
    )
    concatted_dense = torch.cat([padded_left, padded_right], dim=1)

    lengths_left = offsets_left[1:] - offsets_left[:-1]
    lengths_right = offsets_right[1:] - offsets_right[:-1]
    mask = torch.arange(
        max_len_left + max_len_right, device=values_left.device
    ).expand(lengths_left.numel(), -1)
    mask = torch.logical_or(
        mask < lengths_left.view(-1, 1),
        torch.logical_and(
            mask >= max_len_left,
            mask < max_len_left + lengths_right.view(-1, 1),
        ),
    )
    return concatted_dense.flatten(0, 1)[mask.view(-1), :]


def _pytorch_split_2D_jagged(
    max_seq_len: int,
    values: torch.Tensor,
    max_len_left: Optional[int],
    max_len_right: Optional[int],
    offsets_left: Optional[torch.Tensor],
    offsets_right: Optional[torch.Tensor],
) -> Tuple[torch.Tensor, torch.Tensor]:
    if offsets_left is None:
        assert max_len_left is not None
        assert offsets_right is not None
        offsets_left = torch.arange(
            0,
            (offsets_right.numel()) * max_len_left,
            max_len_left,
            device=values.device,
        )
    elif offsets_right is None:
        assert max_len_right is not None
        offsets_right = torch.arange(
            0,
            (offsets_left.numel()) * max_len_right,
            max_len_right,
            device=values.device,
        )
    lengths_left = offsets_left[1:] - offsets_left[:-1]
    lengths_right = offsets_right[1:] - offsets_right[:-1]
    offsets = offsets_left + offsets_right
    padded_values = torch.ops.fbgemm.jagged_to_padded_dense(
        values=values,
        offsets=[offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    ).flatten(0, 1)
    lengths = lengths_left + lengths_right
    mask = torch.arange(max_seq_len, device=values.device).expand(
        lengths.numel(), -1
    )
    mask_left = mask < lengths_left.view(-1, 1)
    mask_right = torch.logical_and(
        mask >= lengths_left.view(-1, 1), mask < lengths.view(-1, 1)
    )
    return padded_values[mask_left.view(-1), :], padded_values[mask_right.view(-1), :]


def concat_2D_jagged(
    max_seq_len: int,
    values_left: torch.Tensor,
    values_right: torch.Tensor,
    max_len_left: int,
    max_len_right: int,
    offsets_left: torch.Tensor,
    offsets_right: torch.Tensor,
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
            values_a=values_left,
            values_b=values_right,
            offsets_a=offsets_left,
            offsets_b=offsets_right,
        )
    return _pytorch_concat_2D_jagged(
        max_seq_len=max_seq_len,
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
    max_len_left: Optional[int],
    max_len_right: Optional[int],
    offsets_left: Optional[torch.Tensor],
    offsets_right: Optional[torch.Tensor],
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _pytorch_split_2D_jagged(
        max_seq_len=max_seq_len,
        values=values,
        max_len_left=max_len_left,
        max_len_right=max_len_right,
        offsets_left=offsets_left,
        offsets_right=offsets_right,
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
    if kernel == HammerKernel.TRITON:
        return triton_jagged_dense_bmm_broadcast_add(
            max_seq_len=max_seq_len,
            seq_offsets=seq_offsets,
            jagged=jagged,
            dense=dense,
            bias=bias,
        )
    B, K, N = dense.shape
    padded_jagged = torch.ops.fbgemm.jagged_to_padded_dense(
        values=jagged,
        offsets=[seq_offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    )
    bmm_out = torch.bmm(padded_jagged, dense)
    jagged_out = torch.ops.fbgemm.dense_to_jagged(
        bmm_out + bias.unsqueeze(1), [seq_offsets], total_L=jagged.shape[0]
    )[0]
    return jagged_out


def concat_1D_jagged_jagged(
    lengths_left: torch.Tensor,
    values_left: torch.Tensor,
    lengths_right: torch.Tensor,
    values_right: torch.Tensor,
) -> torch.Tensor:
    # the CUDA op avoids a host sync on lengths.sum(); CPU / other devices use
    # the reference implementation below
    if _HAS_CUDA_OPS and values_left.is_cuda:
        return torch.ops.hstu.concat_1d_jagged_jagged(
            lengths_left, values_left, lengths_right, values_right
        )
    B = lengths_left.numel()
    values = torch.cat([values_left, values_right])
    batch_ids = torch.arange(B, device=values.device)
    seg_left = torch.repeat_interleave(batch_ids * 2, lengths_left)
    seg_right = torch.repeat_interleave(batch_ids * 2 + 1, lengths_right)
    order = torch.argsort(torch.cat([seg_left, seg_right]), stable=True)
    return values[order]


def jagged_index_select(
    values: torch.Tensor,
    lengths: torch.Tensor,
    indices: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Select whole sequences (rows of a jagged tensor) by batch index."""
    offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
    selected, _ = torch.ops.fbgemm.jagged_index_select(values, offsets, indices)
    return selected, lengths.index_select(0, indices)


def hstu_split_l2_embeddings(
    max_seq_len: int,
    x: torch.Tensor,
    prefix_offsets: torch.Tensor,
    l2_offsets: torch.Tensor,
    contextual_seq_len: int,
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> Tuple[torch.Tensor, torch.Tensor]:
    x_offsets = prefix_offsets + l2_offsets
    x_lengths = x_offsets[1:] - x_offsets[:-1]
    padded_x = torch.ops.fbgemm.jagged_to_padded_dense(
        values=x,
        offsets=[x_offsets],
        max_lengths=[max_seq_len],
        padding_value=0.0,
    )
    prefix_lengths = prefix_offsets[1:] - prefix_offsets[:-1]
    mask = torch.arange(max_seq_len, device=x_offsets.device).unsqueeze(0)
    mask = torch.logical_and(
        mask >= prefix_lengths.unsqueeze(1) - contextual_seq_len,
        mask < x_lengths.unsqueeze(1),
    )
    if contextual_seq_len > 0:
        mask[:, :contextual_seq_len] = True
    l2_x = padded_x[mask].view(-1, x.shape[-1])
    prefix_x = padded_x[torch.logical_not(mask)][: int(prefix_offsets[-1])]
    return prefix_x, l2_x
