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
"""
Python registration for the hstu::* operators.

The heavy lifting lives in libhstu_ops.so (csrc/*.cu, built by setup.py next to
this file). This module loads the shared library, declares the schemas with
torch.library so that the ops are visible to torch.compile / torch.export, and
provides fake (meta) kernels plus a few pure-PyTorch CPU kernels for testing.
"""

import glob
import os
from typing import List, Optional, Tuple

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library() -> str:
    candidates = glob.glob(os.path.join(_HERE, "libhstu_ops*.so")) + glob.glob(
        os.path.join(_HERE, "..", "..", "..", "build", "lib*", "libhstu_ops*.so")
    )
    if not candidates:
        raise ImportError(
            "libhstu_ops.so not found; run `python setup.py build_ext --inplace` "
            "in generative_recommenders/ops/cpp"
        )
    return candidates[0]


torch.ops.load_library(_find_library())

_lib = torch.library.Library("hstu", "FRAGMENT")

_lib.define(
    "concat_1d_jagged_jagged(Tensor lengths_left, Tensor values_left, "
    "Tensor lengths_right, Tensor values_right) -> Tensor"
)
_lib.define(
    "expand_1d_jagged_to_dense(Tensor values, Tensor offsets, SymInt max_len) -> Tensor"
)
_lib.define(
    "batched_complete_cumsum(Tensor values) -> Tensor"
)


# ----------------------------------------------------------------------------
# fake kernels (shape propagation for torch.compile / export)
# ----------------------------------------------------------------------------


@torch.library.register_fake("hstu::concat_1d_jagged_jagged")
def _concat_1d_jagged_jagged_fake(
    lengths_left: torch.Tensor,
    values_left: torch.Tensor,
    lengths_right: torch.Tensor,
    values_right: torch.Tensor,
) -> torch.Tensor:
    L = values_left.shape[0] + values_right.shape[0]
    return values_left.new_empty((L,))


@torch.library.register_fake("hstu::expand_1d_jagged_to_dense")
def _expand_1d_jagged_to_dense_fake(
    values: torch.Tensor, offsets: torch.Tensor, max_len: int
) -> torch.Tensor:
    B = offsets.shape[0] - 1
    return values.new_empty((B, max_len))


@torch.library.register_fake("hstu::batched_complete_cumsum")
def _batched_complete_cumsum_fake(values: torch.Tensor) -> torch.Tensor:
    B, N = values.shape
    return values.new_empty((B, N + 1))


# ----------------------------------------------------------------------------
# device kernels
# ----------------------------------------------------------------------------


def _concat_1d_jagged_jagged_cuda(
    lengths_left: torch.Tensor,
    values_left: torch.Tensor,
    lengths_right: torch.Tensor,
    values_right: torch.Tensor,
) -> torch.Tensor:
    return torch.ops.hstu_cuda.concat_1d_jagged_jagged_cuda(
        lengths_left, values_left, lengths_right, values_right
    )


_lib.impl("concat_1d_jagged_jagged", _concat_1d_jagged_jagged_cuda, "CUDA")


@torch.library.impl("hstu::expand_1d_jagged_to_dense", "CUDA")
def _expand_1d_jagged_to_dense_cuda(
    values: torch.Tensor, offsets: torch.Tensor, max_len: int
) -> torch.Tensor:
    return torch.ops.hstu_cuda.expand_1d_jagged_to_dense_cuda(values, offsets, max_len)


@torch.library.impl("hstu::expand_1d_jagged_to_dense", "CPU")
def _expand_1d_jagged_to_dense_cpu(
    values: torch.Tensor, offsets: torch.Tensor, max_len: int
) -> torch.Tensor:
    B = offsets.numel() - 1
    out = values.new_zeros((B, max_len))
    lengths = offsets[1:] - offsets[:-1]
    for b in range(B):
        n = min(int(lengths[b]), max_len)
        start = int(offsets[b])
        out[b, :n] = values[start : start + n]
    return out


@torch.library.impl(_lib, "batched_complete_cumsum", "CUDA")
def _batched_complete_cumsum_cuda(values: torch.Tensor) -> torch.Tensor:
    return torch.ops.hstu_cuda.batched_complete_cumsum_cuda(values)


@torch.library.impl(_lib, "batched_complete_cumsum", "CPU")
def _batched_complete_cumsum_cpu(values: torch.Tensor) -> torch.Tensor:
    B, N = values.shape
    out = values.new_zeros((B, N + 1))
    out[:, 1:] = torch.cumsum(values, dim=1)
    return out


# ----------------------------------------------------------------------------
# ops defined with the newer custom_op API (PyTorch >= 2.4)
# ----------------------------------------------------------------------------


@torch.library.custom_op(
    "hstu::get_hstu_attn_sort_order", mutates_args=(), device_types="cuda"
)
def get_hstu_attn_sort_order(seq_offsets: torch.Tensor) -> torch.Tensor:
    """Longest-first order used by the attention kernels for load balancing."""
    return torch.ops.hstu_cuda.sort_by_length_cuda(seq_offsets)


@get_hstu_attn_sort_order.register_fake
def _(seq_offsets: torch.Tensor) -> torch.Tensor:
    return seq_offsets.new_empty((seq_offsets.shape[0] - 1,))


@torch.library.custom_op(
    "hstu::jagged_transpose_1d",
    mutates_args=(),
    device_types=("cpu", "cuda"),
)
def jagged_transpose_1d(
    values: torch.Tensor, offsets: torch.Tensor, num_segments: int
) -> torch.Tensor:
    if values.device.type == "cuda":
        return torch.ops.hstu_cuda.jagged_transpose_1d_cuda(values, offsets, num_segments)
    B = offsets.numel() - 1
    lengths = (offsets[1:] - offsets[:-1]).view(num_segments, B // num_segments)
    chunks = torch.split(values, lengths.view(-1).tolist())
    out: List[torch.Tensor] = []
    for j in range(B // num_segments):
        for i in range(num_segments):
            out.append(chunks[i * (B // num_segments) + j])
    return torch.cat(out)


@jagged_transpose_1d.register_fake
def _(values: torch.Tensor, offsets: torch.Tensor, num_segments: int) -> torch.Tensor:
    return torch.empty_like(values)


def sort_by_length(
    seq_offsets: torch.Tensor, enabled: bool = True
) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    if not enabled:
        return None
    order = get_hstu_attn_sort_order(seq_offsets)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel(), device=order.device, dtype=order.dtype)
    return order, inverse
