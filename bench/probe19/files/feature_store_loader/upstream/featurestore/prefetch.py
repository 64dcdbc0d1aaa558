"""Host -> device prefetching for feature-store batches.

The feature store hands us column-major numpy blocks (dense floats, sparse ids
+ offsets, labels). We copy them into pinned staging buffers on a background
thread and launch the H2D copies on a side stream, so that the copy of batch
i+1 overlaps with the forward/backward of batch i.
"""
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Dict, Iterator, Optional

import numpy as np
import torch

_PREFETCH_DEPTH = int(os.environ.get("FS_PREFETCH_DEPTH", "2"))
_USE_NVTX = os.environ.get("FS_NVTX", "0") == "1"


@dataclass
class DeviceBatch:
    dense: torch.Tensor
    sparse_ids: Dict[str, torch.Tensor]
    sparse_offsets: Dict[str, torch.Tensor]
    labels: torch.Tensor
    ready: Optional[torch.cuda.Event] = None

    def record_stream(self, stream):
        for t in self.tensors():
            t.record_stream(stream)

    def tensors(self):
        yield self.dense
        yield self.labels
        yield from self.sparse_ids.values()
        yield from self.sparse_offsets.values()


class PinnedPool:
    """A small ring of pinned host buffers keyed by (name, shape, dtype)."""

    def __init__(self, slots=4):
        self.slots = slots
        self._bufs = {}
        self._next = 0

    def get(self, name, shape, dtype):
        key = (name, tuple(shape), dtype, self._next % self.slots)
        buf = self._bufs.get(key)
        if buf is None:
            buf = torch.empty(shape, dtype=dtype, pin_memory=True)
            self._bufs[key] = buf
        return buf

    def advance(self):
        self._next += 1


class CudaPrefetcher:
    def __init__(self, source: Iterator[dict], device=None, depth=_PREFETCH_DEPTH):
        self.device = torch.device(device or f"cuda:{torch.cuda.current_device()}")
        self.source = source
        self.pool = PinnedPool(slots=depth + 2)
        self.stream = torch.cuda.Stream(device=self.device)
        self.q = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._worker, daemon=True)
        self._thread.start()
        self.copy_ms = []

    def _to_pinned(self, name, arr, dtype):
        t = torch.from_numpy(np.ascontiguousarray(arr))
        buf = self.pool.get(name, t.shape, dtype)
        buf.copy_(t)
        return buf

    def _stage(self, raw):
        dense = self._to_pinned("dense", raw["dense"], torch.float32)
        labels = self._to_pinned("labels", raw["labels"], torch.float32)
        ids = {k: self._to_pinned("ids/" + k, v, torch.int64) for k, v in raw["sparse_ids"].items()}
        offs = {k: self._to_pinned("off/" + k, v, torch.int64) for k, v in raw["sparse_offsets"].items()}
        self.pool.advance()
        return dense, labels, ids, offs

    def _worker(self):
        torch.cuda.set_device(self.device)
        for raw in self.source:
            if self._stop.is_set():
                break
            if _USE_NVTX:
                torch.cuda.nvtx.range_push("fs.stage")
            dense, labels, ids, offs = self._stage(raw)
            start = torch.cuda.Event(enable_timing=True)
            done = torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(self.stream):
                start.record()
                batch = DeviceBatch(
                    dense=dense.to(self.device, non_blocking=True),
                    sparse_ids={k: v.to(self.device, non_blocking=True) for k, v in ids.items()},
                    sparse_offsets={k: v.to(self.device, non_blocking=True) for k, v in offs.items()},
                    labels=labels.to(self.device, non_blocking=True),
                )
                done.record()
            batch.ready = done
            self.q.put((batch, start))
            if _USE_NVTX:
                torch.cuda.nvtx.range_pop()
        self.q.put(None)

    def __iter__(self):
        return self

    def __next__(self) -> DeviceBatch:
        item = self.q.get()
        if item is None:
            raise StopIteration
        batch, start = item
        cur = torch.cuda.current_stream(self.device)
        cur.wait_event(batch.ready)
        batch.record_stream(cur)
        if len(self.copy_ms) < 10_000:
            batch.ready.synchronize()
            self.copy_ms.append(start.elapsed_time(batch.ready))
        return batch

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)

    def stats(self):
        if not self.copy_ms:
            return {}
        a = np.asarray(self.copy_ms)
        return {"h2d_ms_p50": float(np.percentile(a, 50)), "h2d_ms_p99": float(np.percentile(a, 99)),
                "n": int(a.size)}


def benchmark(source, steps=200, device=None):
    """Measure how long the consumer waits on the prefetcher (should be ~0)."""
    pf = CudaPrefetcher(source, device=device)
    waits = []
    for i, batch in enumerate(pf):
        t0 = time.perf_counter()
        _ = batch.dense.sum()
        torch.cuda.synchronize()
        waits.append(time.perf_counter() - t0)
        if i + 1 >= steps:
            break
    pf.close()
    out = pf.stats()
    out["consumer_wait_ms_mean"] = 1000 * float(np.mean(waits)) if waits else 0.0
    out["device"] = str(pf.device)
    out["max_reserved_mib"] = torch.cuda.max_memory_reserved(pf.device) / 2**20
    return out
