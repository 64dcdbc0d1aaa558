# Copyright Universitat Pompeu Fabra 2020-2023  https://www.compscience.org
# Distributed under the MIT License.
# (See accompanying file README.md file or copy at http://opensource.org/licenses/MIT)

"""Python side of the compiled torchmdnet extensions.

The neighbour search kernels live in ``neighbors/*.cpp`` (CPU) and ``neighbors/*.cu`` (CUDA) and are
registered as ``torch.ops.torchmdnet_extensions.*``.  This module loads the shared library, provides
the autograd glue and a couple of helpers that are safe to call from inside a CUDA graph capture.
"""

import importlib.machinery
import os.path as osp
from typing import Tuple

import torch
from torch import Tensor


def _load_library(library):
    """Load a dynamic library containing torch extensions from the given path.

    Args:
        library (str): The name of the library to load.
    """
    # Find the specification for the library
    spec = importlib.machinery.PathFinder().find_spec(library, [osp.dirname(__file__)])
    # Check if the specification is found and load the library
    if spec is not None:
        torch.ops.load_library(spec.origin)
    else:
        raise ImportError(
            f"Could not find module '{library}' in {osp.dirname(__file__)}"
        )


_load_library("torchmdnet_extensions")


def is_current_stream_capturing():
    """Returns True if the current CUDA stream is capturing.

    Returns False if CUDA is not available or the current stream is not capturing.

    This utility is required because the builtin torch function that does this is not scriptable.
    """
    _is_current_stream_capturing = (
        torch.ops.torchmdnet_extensions.is_current_stream_capturing
    )
    return _is_current_stream_capturing()


def get_neighbor_pairs_kernel(
    strategy: str,
    positions: Tensor,
    batch: Tensor,
    box_vectors: Tensor,
    use_periodic: bool,
    cutoff_lower: float,
    cutoff_upper: float,
    max_num_pairs: int,
    loop: bool,
    include_transpose: bool,
) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Computes the neighbor pairs for a given set of atomic positions.

    The list is generated as a list of pairs (i,j) without any enforced ordering.
    The list is padded with -1 to the maximum number of pairs.

    Parameters
    ----------
    strategy : str
        Strategy to use for computing the neighbor list. Can be one of :code:`["shared", "brute", "cell"]`.
    positions : Tensor
        A tensor with shape (N, 3) representing the atomic positions.
    batch : Tensor
        A tensor with shape (N,). Specifies the batch for each atom.
    box_vectors : Tensor
        The vectors defining the periodic box with shape `(3, 3)` or `(max(batch)+1, 3, 3)`.
    use_periodic : bool
        Whether to apply periodic boundary conditions.
    cutoff_lower : float
        Lower cutoff for the neighbor list.
    cutoff_upper : float
        Upper cutoff for the neighbor list.
    max_num_pairs : int
        Maximum number of pairs to store.
    loop : bool
        Whether to include self-interactions.
    include_transpose : bool
        Whether to include the transpose of the neighbor list (pair (j,i) together with pair (i,j)).

    Returns
    -------
    neighbors : Tensor
        List of neighbors for each atom. Shape (2, max_num_pairs).
    distances : Tensor
        List of distances for each atom. Shape (max_num_pairs,).
    distance_vecs : Tensor
        List of distance vectors for each atom. Shape (max_num_pairs, 3).
    num_pairs : Tensor
        The number of pairs found.
    """
    if positions.device.type == "cpu" and strategy != "brute":
        # the cell and shared-memory algorithms only have GPU implementations
        strategy = "brute"
    return torch.ops.torchmdnet_extensions.get_neighbor_pairs(
        strategy,
        positions,
        batch,
        box_vectors,
        use_periodic,
        cutoff_lower,
        cutoff_upper,
        max_num_pairs,
        loop,
        include_transpose,
    )


@torch.jit.script
def _check_overflow(num_pairs: Tensor, max_num_pairs: int) -> Tensor:
    return num_pairs > max_num_pairs


class _NeighborCheck(torch.nn.Module):
    """Raises if the neighbour list overflowed, but never synchronises inside a graph capture."""

    def __init__(self, max_num_pairs: int, check_errors: bool = True):
        super().__init__()
        self.max_num_pairs = max_num_pairs
        self.check_errors = check_errors

    def forward(self, num_pairs: Tensor) -> Tensor:
        if not self.check_errors:
            return num_pairs
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            # a host sync would invalidate the capture; the kernel writes an error flag instead
            return num_pairs
        if bool(_check_overflow(num_pairs, self.max_num_pairs).any()):
            raise AssertionError(
                f"Found num_pairs({int(num_pairs.max())}) > max_num_pairs({self.max_num_pairs}). "
                "Increase max_num_neighbors or use a larger cutoff-independent estimate."
            )
        return num_pairs


def get_neighbor_pairs_reference(
    positions: Tensor,
    batch: Tensor,
    cutoff_lower: float,
    cutoff_upper: float,
    loop: bool = False,
) -> Tuple[Tensor, Tensor, Tensor]:
    """O(N^2) pure-PyTorch reference used by the tests (non-periodic only)."""
    same_batch = batch.unsqueeze(0) == batch.unsqueeze(1)
    vecs = positions.unsqueeze(1) - positions.unsqueeze(0)
    dist = torch.linalg.vector_norm(vecs, dim=-1)
    mask = same_batch & (dist < cutoff_upper) & (dist >= cutoff_lower)
    if not loop:
        mask.fill_diagonal_(False)
    i, j = torch.nonzero(mask, as_tuple=True)
    return torch.stack([i, j]), dist[i, j], vecs[i, j]
