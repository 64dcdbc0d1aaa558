# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Run-time monitoring for long training jobs: device memory / utilisation / power sampled via
NVML, peak-memory bookkeeping, memory-snapshot capture and NVTX step markers for Nsight."""

import os
import time
import json
import logging
import threading
from contextlib import contextmanager
from typing import Dict, Optional

import torch
import pynvml

from makani.utils import comm


class DeviceMonitor:
    """Samples NVML counters of the local GPU in a background thread."""

    def __init__(self, interval: float = 5.0, log_dir: Optional[str] = None):
        self.interval = interval
        self.log_dir = log_dir
        self.samples = []
        self._stop = threading.Event()
        self._thread = None

        pynvml.nvmlInit()
        self.device_index = torch.cuda.current_device()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(self.device_index)
        self.device_name = pynvml.nvmlDeviceGetName(self.handle)
        if isinstance(self.device_name, bytes):
            self.device_name = self.device_name.decode()

    def _sample(self) -> Dict[str, float]:
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)
        power_w = pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
        return {
            "time": time.time(),
            "gpu_util": float(util.gpu),
            "mem_util": float(util.memory),
            "mem_used_gib": mem.used / 2**30,
            "power_w": power_w,
        }

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append(self._sample())
            except pynvml.NVMLError as err:
                logging.warning(f"NVML sampling failed: {err}")
            self._stop.wait(self.interval)

    def start(self):
        self._thread = threading.Thread(target=self._run, name="nvml-monitor", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        pynvml.nvmlShutdown()
        if self.log_dir is not None and len(self.samples) > 0:
            path = os.path.join(self.log_dir, f"device_monitor_rank{comm.get_world_rank()}.json")
            with open(path, "w") as f:
                json.dump({"device": self.device_name, "samples": self.samples}, f)

    def summary(self) -> Dict[str, float]:
        if not self.samples:
            return {}
        keys = [k for k in self.samples[0].keys() if k != "time"]
        return {f"avg_{k}": sum(s[k] for s in self.samples) / len(self.samples) for k in keys}


def get_memory_usage(device: Optional[torch.device] = None) -> Dict[str, float]:
    """Current / peak allocator statistics of this rank, in GiB."""
    free, total = torch.cuda.mem_get_info(device)
    return {
        "allocated_gib": torch.cuda.memory_allocated(device) / 2**30,
        "peak_allocated_gib": torch.cuda.max_memory_allocated(device) / 2**30,
        "device_free_gib": free / 2**30,
        "device_total_gib": total / 2**30,
    }


def log_memory_usage(step: int, device: Optional[torch.device] = None, prefix: str = ""):
    if comm.get_world_rank() != 0:
        return
    stats = get_memory_usage(device)
    logging.info(f"{prefix}step {step}: " + ", ".join(f"{k}={v:.2f}" for k, v in stats.items()))


class MemorySnapshot:
    """Records allocator history for the first steps and dumps a pickle readable by
    https://pytorch.org/memory_viz ."""

    def __init__(self, output_dir: str, max_entries: int = 100_000, enabled: bool = True):
        self.output_dir = output_dir
        self.max_entries = max_entries
        self.enabled = enabled and comm.get_world_rank() == 0

    def __enter__(self):
        if self.enabled:
            torch.cuda.memory._record_memory_history(max_entries=self.max_entries)
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.enabled:
            os.makedirs(self.output_dir, exist_ok=True)
            torch.cuda.memory._dump_snapshot(os.path.join(self.output_dir, "memory_snapshot.pickle"))
            torch.cuda.memory._record_memory_history(enabled=None)
        return False


@contextmanager
def nvtx_range(name: str, enabled: bool = True, sync: bool = False):
    """NVTX range around a code region; optionally synchronise so that the range covers the
    device work (useful for per-phase timings without Nsight)."""
    if not enabled:
        yield
        return
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if sync:
            torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


class StepTimer:
    """Device-side step timing with CUDA events (no host synchronisation per step)."""

    def __init__(self, window: int = 20):
        self.window = window
        self.events = []

    def start(self):
        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        self.events.append([ev, None])

    def stop(self):
        end = torch.cuda.Event(enable_timing=True)
        end.record()
        self.events[-1][1] = end

    def mean_ms(self) -> float:
        done = [(s, e) for s, e in self.events[-self.window:] if e is not None]
        if not done:
            return float("nan")
        done[-1][1].synchronize()
        return sum(s.elapsed_time(e) for s, e in done) / len(done)


def log_device_info():
    if comm.get_world_rank() != 0:
        return
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    logging.info(
        f"device: {props.name}, {props.total_memory / 2**30:.1f} GiB, "
        f"compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs"
    )
    logging.info(f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
                 f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}")
