# SPDX-FileCopyrightText: Copyright (c) 2023 - 2024 NVIDIA CORPORATION & AFFILIATES.
# SPDX-FileCopyrightText: All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Lightweight profiling helpers used by the Modulus examples.

Two complementary mechanisms are supported:

* NVTX ranges (``annotate`` / ``range``) that show up in Nsight Systems when the
  script is launched under ``nsys profile -c cudaProfilerApi``. They are cheap
  enough to leave in production code.
* A ``torch.profiler`` wrapper (``Profiler``) that writes Chrome / TensorBoard
  traces for a window of training steps.

Enable with ``MODULUS_PROFILE=1`` (NVTX) or ``MODULUS_TORCH_PROFILE=1``.
"""

import contextlib
import functools
import logging
import os
from pathlib import Path
from typing import Callable, Optional

import nvtx
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

logger = logging.getLogger("modulus.profiling")

_NVTX_ENABLED = os.environ.get("MODULUS_PROFILE", "0") == "1"
_TORCH_PROFILE = os.environ.get("MODULUS_TORCH_PROFILE", "0") == "1"

# NVTX colours per subsystem, so datapipe / model / optimizer are easy to tell apart
_COLORS = {
    "datapipe": "green",
    "forward": "blue",
    "backward": "red",
    "optimizer": "purple",
    "io": "yellow",
}


def annotate(message: Optional[str] = None, domain: str = "modulus", color: str = "blue"):
    """Decorator that wraps a function in an NVTX range when profiling is on."""

    def decorator(fn: Callable) -> Callable:
        if not _NVTX_ENABLED:
            return fn
        name = message or fn.__qualname__
        return nvtx.annotate(message=name, color=color, domain=domain)(fn)

    return decorator


@contextlib.contextmanager
def range(name: str, subsystem: str = "forward"):
    """Context manager version of :func:`annotate` built on torch's NVTX bindings."""
    if not _NVTX_ENABLED:
        yield
        return
    torch.cuda.nvtx.range_push(f"{subsystem}:{name}")
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def mark(message: str):
    """Instantaneous NVTX marker (e.g. 'checkpoint written')."""
    if _NVTX_ENABLED:
        torch.cuda.nvtx.mark(message)


class CaptureRange:
    """Start/stop the CUDA profiler capture range between two iterations.

    Use together with ``nsys profile --capture-range=cudaProfilerApi`` so only
    steady-state iterations are recorded.
    """

    def __init__(self, start_step: int = 20, stop_step: int = 30):
        self.start_step = start_step
        self.stop_step = stop_step
        self._active = False

    def step(self, it: int):
        if not _NVTX_ENABLED:
            return
        if it == self.start_step and not self._active:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            self._active = True
            logger.info(f"CUDA profiler capture started at step {it}")
        elif it == self.stop_step and self._active:
            torch.cuda.synchronize()  # flush the captured window
            torch.cuda.cudart().cudaProfilerStop()
            self._active = False
            logger.info(f"CUDA profiler capture stopped at step {it}")


class Profiler:
    """Thin wrapper around ``torch.profiler.profile`` with Modulus defaults."""

    def __init__(
        self,
        output_dir: str = "./profiler_traces",
        wait: int = 5,
        warmup: int = 5,
        active: int = 5,
        record_shapes: bool = True,
        with_stack: bool = False,
    ):
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.enabled = _TORCH_PROFILE
        self._prof = None
        if self.enabled:
            self._prof = profile(
                activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                on_trace_ready=tensorboard_trace_handler(str(self.output_dir)),
                record_shapes=record_shapes,
                profile_memory=True,
                with_stack=with_stack,
            )

    def __enter__(self):
        if self._prof is not None:
            self._prof.__enter__()
        return self

    def __exit__(self, *exc):
        if self._prof is not None:
            self._prof.__exit__(*exc)
            self.summary()

    def step(self):
        if self._prof is not None:
            self._prof.step()

    def summary(self, row_limit: int = 25):
        if self._prof is None:
            return
        table = self._prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=row_limit)
        (self.output_dir / "summary.txt").write_text(table)
        logger.info("\n" + table)


def memory_snapshot(path: str = "memory_snapshot.pickle", max_entries: int = 100000):
    """Record allocator history for the CUDA caching allocator and dump it.

    Load the result at https://pytorch.org/memory_viz
    """
    torch.cuda.memory._record_memory_history(max_entries=max_entries)

    def _dump():
        try:
            torch.cuda.memory._dump_snapshot(path)
            logger.info(f"Wrote CUDA memory snapshot to {path}")
        except Exception as e:  # pragma: no cover
            logger.error(f"Failed to capture memory snapshot {e}")
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)

    return _dump


@functools.lru_cache(maxsize=None)
def device_summary() -> str:
    """One-line description of the accelerator, printed at the top of a run."""
    if not torch.cuda.is_available():
        return "cpu"
    idx = torch.cuda.current_device()
    name = torch.cuda.get_device_name(idx)
    free, total = torch.cuda.mem_get_info(idx)
    return f"{name} (device {idx}, {free / 2**30:.1f}/{total / 2**30:.1f} GiB free)"
