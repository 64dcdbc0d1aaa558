# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0

"""
Python side of the dynamic (hash-table backed) embedding storage.

Each table is a GPU hash map (HierarchicalKV) from int64 feature ids to
embedding rows plus optimizer state. Rows that do not fit in HBM spill to pinned
host memory managed by the same table. All kernels are launched on the caller's
current CUDA stream, which is passed down explicitly as a raw cudaStream_t.
"""

import enum
import logging
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import torch

from dynamicemb_extensions import (  # built by setup.py (CUDA + HierarchicalKV)
    DynamicEmbTable,
    EvictStrategy,
    count_matched,
    dyn_emb_capacity,
    find_or_insert,
    insert_or_assign,
    lookup_backward_dense,
    lookup_forward_dense,
)

logger = logging.getLogger(__name__)

_ALIGN_ROWS = 128


class DynamicEmbEvictStrategy(enum.Enum):
    LRU = EvictStrategy.KLru
    LFU = EvictStrategy.KLfu
    EPOCH_LRU = EvictStrategy.KEpochLru
    CUSTOMIZED = EvictStrategy.KCustomized


@dataclass
class DynamicEmbTableOptions:
    dim: int = 128
    init_capacity: int = 1 << 20
    max_capacity: int = 1 << 26
    evict_strategy: DynamicEmbEvictStrategy = DynamicEmbEvictStrategy.LRU
    embedding_dtype: torch.dtype = torch.float32
    # fraction of the rows kept in device memory; the rest spill to host
    hbm_ratio: float = 1.0
    global_hbm_for_values: int = 0  # bytes; 0 = derive from free memory
    initializer_std: float = 0.01
    safe_check_mode: bool = False
    device_id: Optional[int] = None
    extra: Dict[str, float] = field(default_factory=dict)


def _current_stream_handle() -> int:
    # cudaStream_t of the current stream, handed to the C++ side as an int
    return torch.cuda.current_stream().cuda_stream


def _round_up(x: int, align: int) -> int:
    return (x + align - 1) // align * align


def _derive_hbm_budget(options: DynamicEmbTableOptions, num_tables: int) -> int:
    if options.global_hbm_for_values > 0:
        return options.global_hbm_for_values
    free_bytes, total_bytes = torch.cuda.mem_get_info()
    budget = int(free_bytes * 0.8) // max(1, num_tables)
    logger.info(
        f"dynamicemb: free {free_bytes / 2**30:.1f}/{total_bytes / 2**30:.1f} GiB, "
        f"{budget / 2**30:.2f} GiB per table for values"
    )
    return budget


class KeyValueTable:
    """One dynamic embedding table + its optimizer state."""

    def __init__(
        self,
        name: str,
        options: DynamicEmbTableOptions,
        optimizer_state_dim: int = 1,
        num_tables_on_device: int = 1,
    ) -> None:
        self.name = name
        self.options = options
        device_id = (
            options.device_id
            if options.device_id is not None
            else torch.cuda.current_device()
        )
        self.device = torch.device(f"cuda:{device_id}")
        self.value_dim = options.dim + optimizer_state_dim
        row_bytes = self.value_dim * torch.tensor([], dtype=options.embedding_dtype).element_size()
        hbm_budget = _derive_hbm_budget(options, num_tables_on_device)
        max_rows_in_hbm = hbm_budget // row_bytes
        init_capacity = _round_up(
            min(options.init_capacity, options.max_capacity), _ALIGN_ROWS
        )
        self._table = DynamicEmbTable(
            key_type=torch.int64,
            value_type=options.embedding_dtype,
            evict_type=options.evict_strategy.value,
            dim=self.value_dim,
            init_capacity=init_capacity,
            max_capacity=_round_up(options.max_capacity, _ALIGN_ROWS),
            max_hbm_for_vectors=int(min(max_rows_in_hbm, options.max_capacity) * row_bytes),
            device_id=device_id,
        )
        self._initializer_std = options.initializer_std
        self._step = 0
        logger.info(
            f"table {name}: dim={options.dim} capacity={init_capacity} "
            f"(max {options.max_capacity}) on {torch.cuda.get_device_name(device_id)}"
        )

    # ------------------------------------------------------------------
    def capacity(self) -> int:
        return dyn_emb_capacity(self._table)

    def lookup(self, keys: torch.Tensor, training: bool = True) -> torch.Tensor:
        """Return the embedding rows for `keys`; unseen keys are inserted (training)."""
        assert keys.is_cuda and keys.dtype == torch.int64
        unique_keys, inverse = torch.unique(keys, return_inverse=True)
        num_unique = unique_keys.numel()
        values = torch.empty(
            (num_unique, self.value_dim), dtype=self.options.embedding_dtype, device=self.device
        )
        founds = torch.empty((num_unique,), dtype=torch.bool, device=self.device)
        stream = _current_stream_handle()
        if training:
            find_or_insert(self._table, num_unique, unique_keys, values, founds, stream)
            if not bool(founds.all()):
                fresh = ~founds
                values[fresh, : self.options.dim] = (
                    torch.randn(
                        (int(fresh.sum()), self.options.dim),
                        device=self.device,
                        dtype=self.options.embedding_dtype,
                    )
                    * self._initializer_std
                )
                values[fresh, self.options.dim :] = 0
                insert_or_assign(self._table, int(fresh.sum()), unique_keys[fresh], values[fresh], stream)
        else:
            count_matched(self._table, num_unique, unique_keys, founds, stream)
            values.zero_()
            lookup_forward_dense(self._table, unique_keys, values, founds, stream)
        return values[inverse, : self.options.dim]

    def apply_rowwise_adagrad(
        self,
        keys: torch.Tensor,
        grads: torch.Tensor,
        lr: float,
        eps: float = 1e-8,
    ) -> None:
        unique_keys, inverse = torch.unique(keys, return_inverse=True)
        grad_sum = torch.zeros(
            (unique_keys.numel(), self.options.dim), dtype=grads.dtype, device=grads.device
        )
        grad_sum.index_add_(0, inverse, grads)
        lookup_backward_dense(
            self._table,
            unique_keys,
            grad_sum,
            lr,
            eps,
            self._step,
            _current_stream_handle(),
        )
        self._step += 1

    def export(self, batch: int = 1 << 16) -> Tuple[torch.Tensor, torch.Tensor]:
        """Dump all (key, embedding) pairs to host memory (for checkpoints)."""
        keys_out: List[torch.Tensor] = []
        vals_out: List[torch.Tensor] = []
        n = self.capacity()
        for start in range(0, n, batch):
            k, v = self._table.export_batch(start, min(batch, n - start), _current_stream_handle())
            keys_out.append(k.cpu())
            vals_out.append(v[:, : self.options.dim].cpu())
        torch.cuda.synchronize(self.device)
        return torch.cat(keys_out), torch.cat(vals_out)


def create_tables(
    names: List[str], options: DynamicEmbTableOptions, optimizer_state_dim: int = 1
) -> Dict[str, KeyValueTable]:
    torch.cuda.set_device(options.device_id or 0)
    return {
        n: KeyValueTable(n, options, optimizer_state_dim, num_tables_on_device=len(names))
        for n in names
    }


def estimate_rows_per_gb(dim: int, dtype: torch.dtype = torch.float32, optimizer_state_dim: int = 1) -> int:
    row_bytes = (dim + optimizer_state_dim) * torch.tensor([], dtype=dtype).element_size()
    return math.floor(2**30 / row_bytes)
