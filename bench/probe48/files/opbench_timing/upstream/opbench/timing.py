"""Kernel-level timing primitives for opbench.

`bench_kernel` times a callable with device events, flushing the L2 cache before every repetition so
that memory-bound kernels are measured cold (the same methodology as triton.testing.do_bench and
nvbench). The L2 flush and the spin kernel come from the compiled `opbench._C` extension; the pure
PyTorch fallback is used when the extension was not built.
"""
import statistics
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import torch

try:
    from opbench import _C  # built from csrc/*.cu by setup.py
    HAS_EXT = True
except ImportError:  # pragma: no cover - editable installs without a build
    _C = None
    HAS_EXT = False


@dataclass
class Timing:
    name: str
    times_ms: List[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times_ms)

    def quantiles(self, qs: Sequence[float] = (0.2, 0.5, 0.8)) -> List[float]:
        xs = sorted(self.times_ms)
        return [xs[min(len(xs) - 1, int(q * len(xs)))] for q in qs]

    def tflops(self, flop: float) -> float:
        return flop / (self.median * 1e-3) / 1e12

    def gbps(self, nbytes: float) -> float:
        return nbytes / (self.median * 1e-3) / 1e9


class L2Flusher:
    """Owns a buffer at least as large as the L2 cache and overwrites it before each repetition."""

    def __init__(self, device: Optional[torch.device] = None):
        self.device = device or torch.device("cuda", torch.cuda.current_device())
        props = torch.cuda.get_device_properties(self.device)
        # 2x the L2 so that nothing from the previous repetition survives
        self.nbytes = max(2 * props.L2_cache_size, 64 * 2**20)
        self.buffer = torch.empty(self.nbytes // 4, dtype=torch.int32, device=self.device)

    def __call__(self):
        if HAS_EXT:
            _C.l2_flush(self.buffer)
        else:
            self.buffer.zero_()


def spin(us: float):
    """Queue a kernel that busy-waits `us` microseconds, hiding launch latency of what follows."""
    if HAS_EXT:
        _C.gpu_sleep_us(float(us))
    else:
        torch.cuda._sleep(int(us * 1000))


def sm_count(device: Optional[torch.device] = None) -> int:
    return torch.cuda.get_device_properties(device or torch.cuda.current_device()).multi_processor_count


def bench_kernel(fn: Callable[[], object], name: str = "", warmup: int = 25, rep: int = 100,
                 flush_l2: bool = True, device: Optional[torch.device] = None) -> Timing:
    flusher = L2Flusher(device) if flush_l2 else None
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    # hide the launch latency of the first repetitions behind a 1 ms spin
    spin(1000.0)
    for i in range(rep):
        if flusher is not None:
            flusher()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()  # collect all events
    return Timing(name=name or getattr(fn, "__name__", "fn"),
                  times_ms=[s.elapsed_time(e) for s, e in zip(starts, ends)])


def grid_for_waves(n_tiles: int, waves: int = 1, device: Optional[torch.device] = None) -> int:
    """Persistent-kernel grid: `waves` full waves over all SMs, but never more tiles than exist."""
    return min(n_tiles, waves * sm_count(device))
