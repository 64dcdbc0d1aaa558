"""Lightweight profiling helpers for the training loops.

* `annotate("name")`      - NVTX range, visible in Nsight Systems timelines (no-op when disabled)
* `CudaTimer`             - event-based timing of a region on the current stream
* `capture_window(...)`   - torch.profiler over a window of steps, Chrome trace + TensorBoard
* `nsys_window(...)`      - cudaProfilerStart/Stop around a window, for `nsys -c cudaProfilerApi`
"""
import contextlib
import functools
import logging
import os
import time
from typing import Callable, Optional

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

log = logging.getLogger(__name__)

_NVTX_ENABLED = os.environ.get("SCIML_NVTX", "0") == "1"


@contextlib.contextmanager
def annotate(name: str, enabled: Optional[bool] = None):
    """NVTX range around a code region."""
    if enabled is None:
        enabled = _NVTX_ENABLED
    if not enabled:
        yield
        return
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def nvtx_wrap(fn: Callable) -> Callable:
    """Decorator version of `annotate`, named after the function."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with annotate(fn.__qualname__):
            return fn(*args, **kwargs)
    return wrapper


class CudaTimer:
    """Accumulates the device time of a region using CUDA events."""

    def __init__(self, name: str):
        self.name = name
        self.total_ms = 0.0
        self.count = 0
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        self._start.record()
        return self

    def __exit__(self, *exc):
        self._end.record()
        self._end.synchronize()
        self.total_ms += self._start.elapsed_time(self._end)
        self.count += 1
        return False

    @property
    def mean_ms(self) -> float:
        return self.total_ms / max(1, self.count)

    def report(self) -> str:
        return f"{self.name}: {self.mean_ms:.3f} ms/call over {self.count} calls"


class WallTimer:
    """Host wall-clock timer (synchronizes nothing)."""

    def __init__(self):
        self.t0 = time.perf_counter()

    def lap(self) -> float:
        t = time.perf_counter()
        dt, self.t0 = t - self.t0, t
        return dt


def capture_window(log_dir: str, wait: int = 5, warmup: int = 2, active: int = 5, repeat: int = 1,
                   record_shapes: bool = False, with_stack: bool = False):
    """Return a torch.profiler.profile context; call `.step()` once per training step."""
    os.makedirs(log_dir, exist_ok=True)
    return profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=tensorboard_trace_handler(log_dir),
        record_shapes=record_shapes,
        profile_memory=True,
        with_stack=with_stack,
    )


def print_top_kernels(prof, n: int = 25):
    """Print the most expensive device kernels of a finished profile."""
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=n)
    log.info("\n" + table)


@contextlib.contextmanager
def nsys_window(start_step: int, stop_step: int, step: int):
    """Enable the CUDA profiler API between two steps (use `nsys profile -c cudaProfilerApi`)."""
    if step == start_step:
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        log.info(f"cudaProfilerStart at step {step}")
    try:
        yield
    finally:
        if step == stop_step:
            torch.cuda.synchronize()  # flush before stopping the capture
            torch.cuda.cudart().cudaProfilerStop()
            log.info(f"cudaProfilerStop at step {step}")


def memory_report(device=None) -> str:
    free, total = torch.cuda.mem_get_info(device)
    alloc = torch.cuda.memory_allocated(device)
    reserved = torch.cuda.memory_reserved(device)
    return (f"allocated {alloc / 2**30:.2f} GiB, reserved {reserved / 2**30:.2f} GiB, "
            f"free {free / 2**30:.2f} / {total / 2**30:.2f} GiB")
