# Copyright (c) Meta Platforms, Inc. and affiliates.
# Licensed under the BSD-style license.

"""
Sparse / jagged feature preprocessing used by the ranking models.

All functions take KJT-style (lengths, values[, weights]) triples and run on the
device the tensors live on. The fbgemm kernels avoid host syncs; the few places
that need a host value (max length for padding) say so explicitly.
"""

from typing import Dict, List, Optional, Tuple

import torch

import fbgemm_gpu  # noqa: F401  registers torch.ops.fbgemm.* (CUDA + CPU kernels)


def complete_cumsum(lengths: torch.Tensor) -> torch.Tensor:
    """[l0, l1, ...] -> [0, l0, l0 + l1, ...] without a device->host sync."""
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)


def permute_features(
    permute: torch.Tensor,
    lengths: torch.Tensor,
    values: torch.Tensor,
    weights: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """Reorder features (rows of a [F, B] lengths matrix) by `permute`."""
    permuted_lengths, permuted_values, permuted_weights = (
        torch.ops.fbgemm.permute_2D_sparse_data(
            permute, lengths, values, weights, None
        )
    )
    return permuted_lengths, permuted_values, permuted_weights


def bucketize_by_rank(
    lengths: torch.Tensor,
    values: torch.Tensor,
    world_size: int,
    block_sizes: torch.Tensor,
    weights: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """Row-wise sharding: route every id to the rank that owns its row block."""
    (
        bucketized_lengths,
        bucketized_indices,
        bucketized_weights,
        _pos,
        _unbucketize_permute,
    ) = torch.ops.fbgemm.block_bucketize_sparse_features(
        lengths.view(-1),
        values,
        bucketize_pos=False,
        sequence=False,
        block_sizes=block_sizes,
        my_size=world_size,
        weights=weights,
    )
    return bucketized_lengths, bucketized_indices, bucketized_weights


def pad_jagged(
    values: torch.Tensor,
    lengths: torch.Tensor,
    max_len: int,
    padding_value: float = 0.0,
) -> torch.Tensor:
    """[sum(L), D] jagged -> [B, max_len, D] dense (truncating)."""
    offsets = complete_cumsum(lengths)
    return torch.ops.fbgemm.jagged_to_padded_dense(
        values, [offsets], [max_len], padding_value=padding_value
    )


def unpad_dense(
    dense: torch.Tensor, lengths: torch.Tensor, total_len: Optional[int] = None
) -> torch.Tensor:
    offsets = complete_cumsum(lengths)
    return torch.ops.fbgemm.dense_to_jagged(dense, [offsets], total_L=total_len)[0]


def segment_sum(values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Per-bag sum pooling of a 1-D jagged tensor (e.g. per-id counts / weights)."""
    csr_seg = complete_cumsum(lengths).to(torch.int32)
    return torch.ops.fbgemm.segment_sum_csr(1, csr_seg, values)


def to_nested(values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Wrap a jagged batch as a jagged-layout nested tensor (for torch.compile'd models)."""
    offsets = complete_cumsum(lengths)
    return torch.nested.nested_tensor_from_jagged(values, offsets=offsets)


def nested_to_padded(
    nt: torch.Tensor, max_len: int, padding_value: float = 0.0
) -> torch.Tensor:
    B = nt.size(0)
    return torch.nested.to_padded_tensor(
        nt, padding_value, output_size=(B, max_len, nt.size(-1))
    )


def truncate_history(
    values: torch.Tensor,
    lengths: torch.Tensor,
    max_len: int,
    keep_last: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Keep at most `max_len` items per user (most recent ones by default)."""
    new_lengths = torch.clamp(lengths, max=max_len)
    offsets = complete_cumsum(lengths)
    new_offsets = complete_cumsum(new_lengths)
    B = lengths.numel()
    row_ids = torch.repeat_interleave(
        torch.arange(B, device=values.device), new_lengths
    )
    pos_in_row = torch.arange(new_offsets[-1].item(), device=values.device) - new_offsets[row_ids]
    if keep_last:
        src = offsets[row_ids] + (lengths[row_ids] - new_lengths[row_ids]) + pos_in_row
    else:
        src = offsets[row_ids] + pos_in_row
    return values[src], new_lengths


def dedup_ids(values: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Unique ids + inverse map, used before the embedding all-to-all."""
    unique_ids, inverse = torch.unique(values, sorted=False, return_inverse=True)
    return unique_ids, inverse


class FeatureProcessor(torch.nn.Module):
    """
    Applies per-feature preprocessing to a dict of jagged features:
    truncation of long histories, row-wise bucketization for sharded tables.
    """

    def __init__(
        self,
        max_lengths: Dict[str, int],
        feature_order: List[str],
        world_size: int = 1,
        rows_per_rank: Optional[Dict[str, int]] = None,
    ) -> None:
        super().__init__()
        self._max_lengths = max_lengths
        self._feature_order = feature_order
        self._world_size = world_size
        self._rows_per_rank = rows_per_rank or {}

    def forward(
        self, features: Dict[str, Tuple[torch.Tensor, torch.Tensor]]
    ) -> Dict[str, Tuple[torch.Tensor, torch.Tensor]]:
        out: Dict[str, Tuple[torch.Tensor, torch.Tensor]] = {}
        for name in self._feature_order:
            lengths, values = features[name]
            if name in self._max_lengths:
                values, lengths = truncate_history(
                    values, lengths, self._max_lengths[name]
                )
            if self._world_size > 1 and name in self._rows_per_rank:
                block_sizes = torch.tensor(
                    [self._rows_per_rank[name]], dtype=values.dtype, device=values.device
                )
                lengths, values, _ = bucketize_by_rank(
                    lengths, values, self._world_size, block_sizes
                )
            out[name] = (lengths, values)
        return out
