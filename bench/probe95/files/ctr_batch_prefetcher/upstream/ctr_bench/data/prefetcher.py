"""Overlap host->device copies of CTR batches with compute.

A CTR batch is a dict of a few large tensors (dense floats, int64 sparse ids, offsets for multi-hot
fields, labels). With 16k-row batches the H2D copy is ~10-20% of a DCN step, so we issue it on a side
stream one batch ahead and make the compute stream wait on it.

    loader = DataLoader(ds, batch_size=16384, num_workers=8, pin_memory=True)
    for batch in CudaPrefetcher(loader, device):
        loss = model(batch) ...

`CudaPrefetcher` degrades to a synchronous `.to(device)` iterator on CPU-only machines.
"""
from typing import Dict, Iterable, Iterator, Optional

import torch

Batch = Dict[str, torch.Tensor]


def _pin(batch: Batch) -> Batch:
    out = {}
    for k, v in batch.items():
        if isinstance(v, torch.Tensor) and not v.is_pinned():
            v = v.pin_memory()
        out[k] = v
    return out


class CudaPrefetcher:
    def __init__(self, loader: Iterable[Batch], device: torch.device, pin: bool = True,
                 keys_to_half: Optional[Iterable[str]] = None):
        self.loader = loader
        self.device = torch.device(device)
        self.pin = pin
        self.keys_to_half = set(keys_to_half or ())
        self.enabled = self.device.type == "cuda"
        self.stream = torch.cuda.Stream(device=self.device) if self.enabled else None
        self._iter: Optional[Iterator[Batch]] = None
        self._next: Optional[Batch] = None
        self._event = None

    def __len__(self):
        return len(self.loader)

    def _copy(self, batch: Batch) -> Batch:
        out = {}
        for k, v in batch.items():
            if not isinstance(v, torch.Tensor):
                out[k] = v
                continue
            v = v.to(self.device, non_blocking=True)
            if k in self.keys_to_half and v.is_floating_point():
                v = v.half()
            out[k] = v
        return out

    def _preload(self):
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        if not self.enabled:
            self._next = self._copy(batch)
            return
        if self.pin:
            batch = _pin(batch)
        with torch.cuda.stream(self.stream):
            self._next = self._copy(batch)
            self._event = torch.cuda.Event()
            self._event.record(self.stream)

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        return self

    def __next__(self) -> Batch:
        if self._next is None:
            raise StopIteration
        batch = self._next
        if self.enabled:
            current = torch.cuda.current_stream(self.device)
            current.wait_event(self._event)
            # the tensors were allocated on the side stream: tell the caching allocator they are now
            # used by the compute stream so their memory is not recycled too early
            for v in batch.values():
                if isinstance(v, torch.Tensor):
                    v.record_stream(current)
        self._preload()
        return batch


class ShardedPrefetcher(CudaPrefetcher):
    """Same as CudaPrefetcher, but slices the batch for model-parallel embedding shards on the host first.

    `shard_fn(batch) -> batch` runs on the CPU worker thread before the copy is issued (e.g. bucketizing
    sparse ids by owning rank).
    """

    def __init__(self, loader, device, shard_fn, **kwargs):
        super().__init__(loader, device, **kwargs)
        self.shard_fn = shard_fn

    def _copy(self, batch: Batch) -> Batch:
        return super()._copy(self.shard_fn(batch))


def device_for_rank(local_rank: int) -> torch.device:
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def benchmark_h2d(batch_rows: int = 16384, num_sparse: int = 26, num_dense: int = 13, iters: int = 100) -> float:
    """Measured H2D bandwidth (GB/s) for one pinned CTR batch; used by `ctr-bench doctor`."""
    dev = device_for_rank(0)
    sparse = torch.randint(0, 1 << 30, (batch_rows, num_sparse)).pin_memory()
    dense = torch.randn(batch_rows, num_dense).pin_memory()
    nbytes = sparse.numel() * sparse.element_size() + dense.numel() * dense.element_size()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        sparse.to(dev, non_blocking=True)
        dense.to(dev, non_blocking=True)
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    return nbytes * iters / (ms / 1e3) / 1e9
