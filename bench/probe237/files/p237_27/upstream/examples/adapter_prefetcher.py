"""Asynchronous LoRA adapter prefetcher.

Keeps a bounded LRU of adapters resident on the GPU and copies the next
adapters (as predicted from the request queue) host->device on a dedicated
side stream, so the copy overlaps with the forward pass of the current batch.

Host copies are kept in pinned memory; the side stream records an event per
adapter and the compute stream waits on that event before first use.
"""
import collections
import logging
import threading
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

import torch
from safetensors.torch import load_file

logger = logging.getLogger(__name__)


@dataclass
class HostAdapter:
    name: str
    tensors: Dict[str, torch.Tensor]   # pinned CPU tensors
    nbytes: int


@dataclass
class DeviceAdapter:
    name: str
    tensors: Dict[str, torch.Tensor]
    ready: torch.cuda.Event
    nbytes: int


def load_host_adapter(name: str, path: str, dtype: torch.dtype = torch.float16) -> HostAdapter:
    raw = load_file(path, device="cpu")
    tensors = {}
    nbytes = 0
    for k, v in raw.items():
        t = v.to(dtype).contiguous().pin_memory()
        tensors[k] = t
        nbytes += t.numel() * t.element_size()
    return HostAdapter(name=name, tensors=tensors, nbytes=nbytes)


class AdapterPrefetcher:
    def __init__(
        self,
        host_adapters: Dict[str, HostAdapter],
        device: Optional[torch.device] = None,
        max_resident_bytes: Optional[int] = None,
        budget_fraction: float = 0.1,
    ):
        self.host = host_adapters
        self.device = device or torch.device("cuda", torch.cuda.current_device())
        if max_resident_bytes is None:
            total = torch.cuda.get_device_properties(self.device).total_memory
            max_resident_bytes = int(total * budget_fraction)
        self.max_resident_bytes = max_resident_bytes

        self.copy_stream = torch.cuda.Stream(device=self.device, priority=-1)
        self.resident: "collections.OrderedDict[str, DeviceAdapter]" = collections.OrderedDict()
        self.resident_bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # ------------------------------------------------------------ eviction
    def _evict_until(self, need: int, protect: Iterable[str] = ()):
        protect = set(protect)
        while self.resident_bytes + need > self.max_resident_bytes and self.resident:
            victim = next((n for n in self.resident if n not in protect), None)
            if victim is None:
                break
            dev = self.resident.pop(victim)
            self.resident_bytes -= dev.nbytes
            logger.debug("evict %s (%.1f MB)", victim, dev.nbytes / 2**20)

    # ------------------------------------------------------------- loading
    def _copy_async(self, name: str) -> DeviceAdapter:
        host = self.host[name]
        ready = torch.cuda.Event()
        with torch.cuda.stream(self.copy_stream):
            tensors = {k: v.to(self.device, non_blocking=True) for k, v in host.tensors.items()}
            ready.record(self.copy_stream)
        return DeviceAdapter(name=name, tensors=tensors, ready=ready, nbytes=host.nbytes)

    def prefetch(self, names: List[str], protect: Iterable[str] = ()):
        """Start copies for adapters that are not resident yet (non-blocking)."""
        with self._lock:
            for name in names:
                if name is None or name in self.resident:
                    continue
                if name not in self.host:
                    logger.warning("unknown adapter %s", name)
                    continue
                self._evict_until(self.host[name].nbytes, protect=list(protect) + names)
                self.resident[name] = self._copy_async(name)
                self.resident_bytes += self.resident[name].nbytes

    def get(self, name: str) -> Dict[str, torch.Tensor]:
        """Return device tensors of ``name``; the current stream waits for the copy."""
        with self._lock:
            dev = self.resident.get(name)
            if dev is None:
                self.misses += 1
                self._evict_until(self.host[name].nbytes, protect=[name])
                dev = self._copy_async(name)
                self.resident[name] = dev
                self.resident_bytes += dev.nbytes
            else:
                self.hits += 1
                self.resident.move_to_end(name)
        compute_stream = torch.cuda.current_stream(self.device)
        compute_stream.wait_event(dev.ready)
        for t in dev.tensors.values():
            # tensors were allocated on copy_stream but are consumed on compute_stream
            t.record_stream(compute_stream)
        return dev.tensors

    def synchronize(self):
        self.copy_stream.synchronize()

    def stats(self) -> dict:
        return {
            "resident": list(self.resident),
            "resident_mb": round(self.resident_bytes / 2**20, 1),
            "budget_mb": round(self.max_resident_bytes / 2**20, 1),
            "hits": self.hits,
            "misses": self.misses,
        }


def predict_next_adapters(queue: Iterable[dict], k: int = 4) -> List[str]:
    """Most frequent adapters among queued requests, in first-seen order."""
    counts = collections.Counter(r.get("adapter") for r in queue if r.get("adapter"))
    return [name for name, _ in counts.most_common(k)]


if __name__ == "__main__":
    import argparse
    import glob
    import os
    import time

    parser = argparse.ArgumentParser()
    parser.add_argument("adapter_dir", help="directory of <name>/adapter_model.safetensors")
    parser.add_argument("--budget-mb", type=int, default=512)
    args = parser.parse_args()

    hosts = {}
    for p in sorted(glob.glob(os.path.join(args.adapter_dir, "*", "adapter_model.safetensors"))):
        name = os.path.basename(os.path.dirname(p))
        hosts[name] = load_host_adapter(name, p)
    pf = AdapterPrefetcher(hosts, max_resident_bytes=args.budget_mb * 2**20)

    names = list(hosts)
    t0 = time.perf_counter()
    for i, name in enumerate(names):
        pf.prefetch(names[i + 1:i + 3])
        tensors = pf.get(name)
        s = sum(float(t.float().abs().mean()) for t in tensors.values())
    torch.cuda.synchronize()
    print(f"{len(names)} adapters in {time.perf_counter() - t0:.3f}s; {pf.stats()}")
