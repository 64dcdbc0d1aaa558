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

"""Loads the project's compiled operators into ``torch.ops.my_ops``.

The ops are implemented in ``csrc/*.cu`` and registered with
``TORCH_LIBRARY(my_ops, m)`` / ``TORCH_LIBRARY_IMPL(my_ops, CUDA, m)``; see
setup.py (extension ``generative_recommenders._my_ops_cuda``). This module also
registers fake (meta) kernels so the ops can be traced by torch.compile /
torch.export without a GPU.

Set ``GR_REQUIRE_MY_OPS=0`` to import the package on machines without the
compiled library (CPU-only CI); the CUDA HammerKernel is then unavailable.
"""

import glob
import logging
import os
from typing import Callable, List, Tuple, TypeVar

import torch

logger: logging.Logger = logging.getLogger(__name__)

_LIB_LOADED: bool = False
_F = TypeVar("_F", bound=Callable[..., object])


def _load_library() -> None:
    global _LIB_LOADED
    if _LIB_LOADED:
        return
    try:
        # Built by `pip install -e .` (setup.py -> CUDAExtension)
        import generative_recommenders._my_ops_cuda  # noqa: F401

        _LIB_LOADED = True
        return
    except ImportError as e:
        logger.warning(f"prebuilt my_ops extension not importable ({e}); trying build dir")
    here = os.path.dirname(os.path.abspath(__file__))
    candidates: List[str] = sorted(
        glob.glob(
            os.path.join(
                here, "..", "..", "..", "build", "lib*", "generative_recommenders", "_my_ops_cuda*.so"
            )
        )
    )
    if not candidates:
        if os.environ.get("GR_REQUIRE_MY_OPS", "1") == "1":
            raise ImportError(
                "my_ops CUDA library not found. Run `pip install -e .` on a machine with nvcc, "
                "or set GR_REQUIRE_MY_OPS=0."
            )
        logger.warning("my_ops library not found; HammerKernel.CUDA is disabled")
        return
    torch.ops.load_library(candidates[-1])
    _LIB_LOADED = True


_load_library()


def _register_fake(qualname: str) -> Callable[[_F], _F]:
    def wrap(fn: _F) -> _F:
        if _LIB_LOADED:
            torch.library.register_fake(qualname)(fn)
        return fn

    return wrap


# ---------------------------------------------------------------------------
# Fake kernels (shape propagation only, device agnostic)
# ---------------------------------------------------------------------------


@_register_fake("my_ops::concat_2d_jagged")
def _concat_2d_jagged_fake(
    max_seq_len: int,
    values_left: torch.Tensor,
    offsets_left: torch.Tensor,
    values_right: torch.Tensor,
    offsets_right: torch.Tensor,
) -> torch.Tensor:
    L = values_left.shape[0] + values_right.shape[0]
    return values_left.new_empty((L, values_left.shape[1]))


@_register_fake("my_ops::split_2d_jagged")
def _split_2d_jagged_fake(
    max_seq_len: int,
    values: torch.Tensor,
    offsets_left: torch.Tensor,
    offsets_right: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    ctx = torch.library.get_ctx()
    L_left = ctx.new_dynamic_size()
    L_right = ctx.new_dynamic_size()
    D = values.shape[1]
    return values.new_empty((L_left, D)), values.new_empty((L_right, D))


@_register_fake("my_ops::jagged_index_select")
def _jagged_index_select_fake(
    values: torch.Tensor,
    seq_offsets: torch.Tensor,
    row_index: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    ctx = torch.library.get_ctx()
    L_out = ctx.new_dynamic_size()
    return (
        seq_offsets.new_empty((row_index.numel() + 1,)),
        values.new_empty((L_out,) + tuple(values.shape[1:])),
    )


@_register_fake("my_ops::blockwise_topk")
def _blockwise_topk_fake(
    scores: torch.Tensor,
    k: int,
    sorted: bool,
) -> Tuple[torch.Tensor, torch.Tensor]:
    B = scores.shape[0]
    return (
        scores.new_empty((B, k)),
        scores.new_empty((B, k), dtype=torch.int64),
    )


@_register_fake("my_ops::hash_bucketize")
def _hash_bucketize_fake(
    ids: torch.Tensor,
    num_buckets: int,
) -> torch.Tensor:
    return torch.empty_like(ids)


_M1: int = 0xFF51AFD7ED558CCD - (1 << 64)  # fmix64 constants as signed int64
_M2: int = 0xC4CEB9FE1A85EC53 - (1 << 64)


def _fmix64_torch(h: torch.Tensor) -> torch.Tensor:
    # Same finalizer as csrc/hash_bucketize.cu; int64 multiplication wraps.
    h = h ^ ((h >> 33) & ((1 << 31) - 1))
    h = h * _M1
    h = h ^ ((h >> 33) & ((1 << 31) - 1))
    h = h * _M2
    h = h ^ ((h >> 33) & ((1 << 31) - 1))
    return h


def hash_bucketize(ids: torch.Tensor, num_buckets: int) -> torch.Tensor:
    """Maps raw (int64) feature ids to [0, num_buckets) with a murmur3 finalizer."""
    if not ids.is_cuda:
        # Tensor-op path used by the offline preprocessing scripts; bit-exact
        # with the CUDA kernel but ~20x slower.
        return torch.remainder(_fmix64_torch(ids), num_buckets)
    return torch.ops.my_ops.hash_bucketize(ids, num_buckets)


def my_ops_available() -> bool:
    return _LIB_LOADED and hasattr(torch.ops.my_ops, "concat_2d_jagged")
