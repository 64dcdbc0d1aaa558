"""HugeCTR-style hybrid embedding: hot rows cached in GPU memory, the full table in pinned host memory.

Misses are gathered on the host and copied in on a dedicated H2D stream so that the copy of step
i+1 overlaps the dense forward/backward of step i. Updates of cached rows are written back lazily.
"""
import math
import threading
from typing import Optional, Tuple

import torch
import torch.nn as nn

from . import _embcache_cuda as _C  # compiled from csrc/cache_kernels.cu


class HostTable:
    """Full embedding table on the host, in page-locked memory for async DMA."""

    def __init__(self, num_rows: int, dim: int, init_std: float = 0.01):
        self.weight = torch.empty(num_rows, dim).normal_(0, init_std).pin_memory()
        self.lock = threading.Lock()

    def gather(self, rows: torch.Tensor, out: torch.Tensor):
        with self.lock:
            torch.index_select(self.weight, 0, rows, out=out)

    def scatter(self, rows: torch.Tensor, values: torch.Tensor):
        with self.lock:
            self.weight.index_copy_(0, rows, values)


class HybridEmbedding(nn.Module):
    def __init__(self, num_rows: int, dim: int, cache_ratio: float = 0.1, device: Optional[torch.device] = None):
        super().__init__()
        self.num_rows = num_rows
        self.dim = dim
        self.device = device or torch.device("cuda", torch.cuda.current_device())
        self.cache_rows = int(math.ceil(num_rows * cache_ratio))
        self.host = HostTable(num_rows, dim)
        self.cache = nn.Parameter(torch.zeros(self.cache_rows, dim, device=self.device))
        # slot -> row id (-1 = empty) and row id -> slot (-1 = not cached)
        self.register_buffer("slot_to_row", torch.full((self.cache_rows,), -1, dtype=torch.long, device=self.device))
        self.register_buffer("row_to_slot", torch.full((num_rows,), -1, dtype=torch.int32, device=self.device))
        self.register_buffer("freq", torch.zeros(self.cache_rows, dtype=torch.int32, device=self.device))
        self.h2d_stream = torch.cuda.Stream()
        self.d2h_stream = torch.cuda.Stream()
        self.staging = torch.empty(65536, dim).pin_memory()
        self.ready = torch.cuda.Event()
        self.pending = None

    @torch.no_grad()
    def prefetch(self, ids: torch.Tensor):
        """Start bringing the rows of the next batch into the cache (call one step ahead)."""
        uniq = torch.unique(ids)
        slots = self.row_to_slot[uniq.to(self.device)]
        miss = uniq[(slots < 0).cpu()]
        if miss.numel() == 0:
            self.pending = None
            return
        n = miss.numel()
        buf = self.staging[:n]
        self.host.gather(miss, buf)
        with torch.cuda.stream(self.h2d_stream):
            dev_rows = buf.to(self.device, non_blocking=True)
            dev_ids = miss.to(self.device, non_blocking=True)
            victims = _C.lfu_select_victims(self.freq, n)
            evicted = self.slot_to_row[victims]
            self.ready.record(self.h2d_stream)
        self.pending = (dev_ids, dev_rows, victims, evicted)

    @torch.no_grad()
    def _apply_pending(self):
        if self.pending is None:
            return
        torch.cuda.current_stream().wait_event(self.ready)
        dev_ids, dev_rows, victims, evicted = self.pending
        valid = evicted >= 0
        if valid.any():
            self._write_back(evicted[valid], self.cache.data[victims[valid]])
            self.row_to_slot[evicted[valid]] = -1
        self.cache.data[victims] = dev_rows
        self.slot_to_row[victims] = dev_ids
        self.row_to_slot[dev_ids] = victims.int()
        self.freq[victims] = 0
        dev_rows.record_stream(torch.cuda.current_stream())
        self.pending = None

    def _write_back(self, rows: torch.Tensor, values: torch.Tensor):
        with torch.cuda.stream(self.d2h_stream):
            self.d2h_stream.wait_stream(torch.cuda.current_stream())
            host_vals = values.to("cpu", non_blocking=True)
            host_rows = rows.to("cpu", non_blocking=True)
        self.d2h_stream.synchronize()
        self.host.scatter(host_rows, host_vals)

    def forward(self, ids: torch.Tensor, offsets: Optional[torch.Tensor] = None) -> torch.Tensor:
        self._apply_pending()
        ids = ids.to(self.device, non_blocking=True)
        slots = self.row_to_slot[ids]
        if (slots < 0).any():
            raise RuntimeError("embedding rows requested that were not prefetched")
        self.freq.index_add_(0, slots.long(), torch.ones_like(slots))
        if offsets is None:
            return self.cache[slots.long()]
        return _C.segment_sum(self.cache, slots, offsets.to(self.device))

    @torch.no_grad()
    def flush(self):
        """Write every cached row back to the host table (before checkpointing)."""
        self._apply_pending()
        valid = self.slot_to_row >= 0
        self._write_back(self.slot_to_row[valid], self.cache.data[valid])
        torch.cuda.synchronize()

    def state_dict_host(self):
        self.flush()
        return {"weight": self.host.weight.clone()}


def estimate_cache_ratio(num_rows: int, dim: int, reserve_gib: float = 8.0, dtype_bytes: int = 4) -> float:
    free, total = torch.cuda.mem_get_info()
    budget = max(free - reserve_gib * 2**30, 0)
    return min(1.0, budget / (num_rows * dim * dtype_bytes))


def make_tables(specs, device=None) -> Tuple[nn.ModuleList, list]:
    tables, ratios = nn.ModuleList(), []
    for num_rows, dim in specs:
        ratio = estimate_cache_ratio(num_rows, dim) / max(len(specs), 1)
        tables.append(HybridEmbedding(num_rows, dim, cache_ratio=ratio, device=device))
        ratios.append(ratio)
    return tables, ratios


class SparseSGDForCache(torch.optim.Optimizer):
    """Row-wise SGD on the cache parameter (dense grad, but only touched rows are non-zero)."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                rows = p.grad.abs().sum(dim=1).nonzero().squeeze(1)
                p.index_add_(0, rows, p.grad[rows], alpha=-group["lr"])
        return None
