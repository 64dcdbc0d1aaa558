# Copyright (c) 2024 The SeqRec Authors. Licensed under the Apache License, Version 2.0.
"""
Jagged (variable-length) sequence ops used by the sequential recommender.

Every op has three implementations selected by ``KernelBackend``:

* ``TRITON``  - Triton kernels in ``seqrec/ops/triton`` (default on GPU)
* ``CUDA``    - hand-written CUDA kernels compiled into ``seqrec_cuda_ops.so`` and
                registered under ``torch.ops.seqrec``
* ``PYTORCH`` - reference implementation built from torch / fbgemm ops (CPU, tests)
"""
import enum
import logging
import os
from typing import List, Optional, Tuple

import torch

import fbgemm_gpu  # noqa: F401  registers torch.ops.fbgemm.*

logger = logging.getLogger(__name__)

_LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")
try:
    torch.ops.load_library(os.path.join(_LIB_DIR, "seqrec_cuda_ops.so"))
    _HAS_CUDA_OPS = True
except OSError as e:  # the .so is only built by `python setup.py build_ext` with nvcc
    logger.warning("seqrec CUDA ops not available: %s", e)
    _HAS_CUDA_OPS = False


class KernelBackend(enum.Enum):
    TRITON = "triton"
    CUDA = "cuda"
    PYTORCH = "pytorch"


def default_backend() -> KernelBackend:
    env = os.environ.get("SEQREC_KERNEL_BACKEND")
    if env:
        return KernelBackend(env.lower())
    if torch.cuda.is_available():
        return KernelBackend.TRITON
    return KernelBackend.PYTORCH


def _check_backend(backend: Optional[KernelBackend]) -> KernelBackend:
    backend = backend or default_backend()
    if backend == KernelBackend.CUDA and not _HAS_CUDA_OPS:
        raise RuntimeError("KernelBackend.CUDA requested but seqrec_cuda_ops.so failed to load")
    return backend


# ----------------------------------------------------------------------------------------------
# offsets helpers
# ----------------------------------------------------------------------------------------------


def lengths_to_offsets(lengths: torch.Tensor) -> torch.Tensor:
    """[B] lengths -> [B + 1] offsets with a leading zero."""
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)


def max_seq_len_from_offsets(offsets: torch.Tensor) -> int:
    return int((offsets[1:] - offsets[:-1]).max().item())


# ----------------------------------------------------------------------------------------------
# jagged <-> padded
# ----------------------------------------------------------------------------------------------


def jagged_to_padded_dense(
    values: torch.Tensor,
    offsets: torch.Tensor,
    max_len: int,
    padding_value: float = 0.0,
) -> torch.Tensor:
    """values [sum(L), D], offsets [B + 1] -> [B, max_len, D]."""
    return torch.ops.fbgemm.jagged_to_padded_dense(
        values, [offsets], [max_len], padding_value=padding_value
    )


def dense_to_jagged(dense: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """[B, N, D] padded -> [sum(L), D] jagged values."""
    return torch.ops.fbgemm.dense_to_jagged(dense, [offsets])[0]


# ----------------------------------------------------------------------------------------------
# jagged x dense bmm: out[b] = jagged[b] @ dense[b]
# ----------------------------------------------------------------------------------------------


def _jagged_dense_bmm_pytorch(
    max_seq_len: int, offsets: torch.Tensor, jagged: torch.Tensor, dense: torch.Tensor
) -> torch.Tensor:
    padded = jagged_to_padded_dense(jagged, offsets, max_seq_len)
    out = torch.bmm(padded, dense)
    return dense_to_jagged(out, offsets)


def jagged_dense_bmm(
    max_seq_len: int,
    offsets: torch.Tensor,
    jagged: torch.Tensor,
    dense: torch.Tensor,
    backend: Optional[KernelBackend] = None,
) -> torch.Tensor:
    backend = _check_backend(backend)
    if backend == KernelBackend.TRITON:
        from seqrec.ops.triton.jagged_bmm import triton_jagged_dense_bmm

        return triton_jagged_dense_bmm(max_seq_len, offsets, jagged, dense)
    if backend == KernelBackend.CUDA:
        return torch.ops.seqrec.jagged_dense_bmm(max_seq_len, offsets, jagged, dense)
    return _jagged_dense_bmm_pytorch(max_seq_len, offsets, jagged, dense)


# ----------------------------------------------------------------------------------------------
# segment softmax over jagged rows (used by the target-aware attention)
# ----------------------------------------------------------------------------------------------


def _jagged_softmax_pytorch(values: torch.Tensor, offsets: torch.Tensor, max_len: int) -> torch.Tensor:
    padded = jagged_to_padded_dense(values.unsqueeze(-1), offsets, max_len, padding_value=float("-inf"))
    probs = torch.softmax(padded.squeeze(-1).float(), dim=-1).to(values.dtype)
    return dense_to_jagged(probs.unsqueeze(-1), offsets).squeeze(-1)


def jagged_softmax(
    values: torch.Tensor,
    offsets: torch.Tensor,
    max_len: int,
    backend: Optional[KernelBackend] = None,
) -> torch.Tensor:
    backend = _check_backend(backend)
    if backend == KernelBackend.CUDA:
        return torch.ops.seqrec.jagged_softmax(values, offsets, max_len)
    if backend == KernelBackend.TRITON:
        from seqrec.ops.triton.jagged_softmax import triton_jagged_softmax

        return triton_jagged_softmax(values, offsets, max_len)
    return _jagged_softmax_pytorch(values, offsets, max_len)


# ----------------------------------------------------------------------------------------------
# concat two jagged tensors row by row (history ++ candidates)
# ----------------------------------------------------------------------------------------------


def concat_2d_jagged(
    max_len_left: int,
    offsets_left: torch.Tensor,
    values_left: torch.Tensor,
    max_len_right: int,
    offsets_right: torch.Tensor,
    values_right: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:
    lengths = (offsets_left[1:] - offsets_left[:-1]) + (offsets_right[1:] - offsets_right[:-1])
    offsets = lengths_to_offsets(lengths)
    left = jagged_to_padded_dense(values_left, offsets_left, max_len_left)
    right = jagged_to_padded_dense(values_right, offsets_right, max_len_right)
    dense = torch.cat([left, right], dim=1)
    # rows are left-aligned: drop the padding between the two halves
    lengths_left = (offsets_left[1:] - offsets_left[:-1]).tolist()
    lengths_right = (offsets_right[1:] - offsets_right[:-1]).tolist()
    pieces: List[torch.Tensor] = []
    for b, (ll, lr) in enumerate(zip(lengths_left, lengths_right)):
        pieces.append(dense[b, :ll])
        pieces.append(dense[b, max_len_left : max_len_left + lr])
    return torch.cat(pieces, dim=0), offsets


def benchmark_backends(max_seq_len: int = 256, batch: int = 64, dim: int = 128) -> None:
    """Quick timing of every available backend for jagged_dense_bmm (run on a GPU box)."""
    device = torch.device("cuda")
    lengths = torch.randint(1, max_seq_len, (batch,), device=device)
    offsets = lengths_to_offsets(lengths)
    jagged = torch.randn(int(lengths.sum()), dim, device=device, dtype=torch.bfloat16)
    dense = torch.randn(batch, dim, dim, device=device, dtype=torch.bfloat16)
    for backend in KernelBackend:
        if backend == KernelBackend.CUDA and not _HAS_CUDA_OPS:
            continue
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            jagged_dense_bmm(max_seq_len, offsets, jagged, dense, backend=backend)
        end.record()
        torch.cuda.synchronize()
        logger.info("%s: %.3f ms/iter", backend.value, start.elapsed_time(end) / 20)
