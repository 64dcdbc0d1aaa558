"""Allocator statistics for the benchmark harness.

`MemoryReporter` is attached to a run and prints, per phase, what the caching allocator holds,
how fragmented it is, and how close the run got to OOM. On an OOM it dumps an allocator
snapshot that can be dropped into https://pytorch.org/memory_viz.

The allocator config must be set before the first CUDA allocation, hence the env var below.
"""
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,garbage_collection_threshold:0.8")

import json  # noqa: E402
import logging  # noqa: E402
import pickle  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from typing import Dict, Optional  # noqa: E402

import torch  # noqa: E402

logger = logging.getLogger(__name__)
MiB = 2 ** 20


def _fmt(nbytes: float) -> str:
    return f"{nbytes / MiB:,.0f} MiB"


class MemoryReporter:
    def __init__(self, out_dir: str = "mem_reports", device: Optional[int] = None, history: bool = False,
                 history_entries: int = 200_000):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.device = device if device is not None else torch.cuda.current_device()
        self.history = history
        self.phases: Dict[str, Dict[str, float]] = {}
        if history:
            torch.cuda.memory._record_memory_history(max_entries=history_entries, stacks="python")
        free, total = torch.cuda.mem_get_info(self.device)
        self.total = total
        logger.info("device %d: %s total, %s free at start", self.device, _fmt(total), _fmt(free))

    def stats(self) -> Dict[str, float]:
        s = torch.cuda.memory_stats(self.device)
        allocated = s.get("allocated_bytes.all.current", 0)
        reserved = s.get("reserved_bytes.all.current", 0)
        inactive_split = s.get("inactive_split_bytes.all.current", 0)
        return {
            "allocated": allocated,
            "reserved": reserved,
            "peak_allocated": s.get("allocated_bytes.all.peak", 0),
            "peak_reserved": s.get("reserved_bytes.all.peak", 0),
            "fragmentation": (inactive_split / reserved) if reserved else 0.0,
            "num_alloc_retries": s.get("num_alloc_retries", 0),
            "num_ooms": s.get("num_ooms", 0),
            "headroom": self.total - s.get("reserved_bytes.all.peak", 0),
        }

    @contextmanager
    def phase(self, name: str):
        torch.cuda.reset_peak_memory_stats(self.device)
        t0 = time.perf_counter()
        try:
            yield
        except torch.cuda.OutOfMemoryError:
            self.dump(f"oom_{name}")
            logger.error("OOM in phase %s\n%s", name, torch.cuda.memory_summary(self.device, abbreviated=True))
            raise
        finally:
            st = self.stats()
            st["seconds"] = time.perf_counter() - t0
            self.phases[name] = st
            logger.info("[%s] peak alloc %s, peak reserved %s, frag %.1f%%, retries %d, headroom %s",
                        name, _fmt(st["peak_allocated"]), _fmt(st["peak_reserved"]), 100 * st["fragmentation"],
                        st["num_alloc_retries"], _fmt(st["headroom"]))

    def dump(self, tag: str) -> Optional[str]:
        if not self.history:
            return None
        path = os.path.join(self.out_dir, f"{tag}_{os.getpid()}.pickle")
        snapshot = torch.cuda.memory._snapshot()
        with open(path, "wb") as f:
            pickle.dump(snapshot, f)
        logger.info("allocator snapshot written to %s", path)
        return path

    def processes(self) -> str:
        """Who else is holding memory on this device (reads NVML)."""
        return torch.cuda.list_gpu_processes(self.device)

    def write(self):
        with open(os.path.join(self.out_dir, "phases.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(self.device), "total": self.total,
                       "phases": self.phases}, f, indent=2)

    def close(self):
        self.write()
        if self.history:
            torch.cuda.memory._record_memory_history(enabled=None)
        torch.cuda.empty_cache()
