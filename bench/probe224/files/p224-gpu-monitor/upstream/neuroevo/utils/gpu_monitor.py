"""Background GPU monitor for long evolutionary runs.

Samples utilisation, memory, temperature and power of every visible GPU every
few seconds (NVML) and appends them to a CSV next to the run's logs, so that
under-utilised evaluation phases (e.g. CPU-bound simulators) are easy to spot.

    mon = GPUMonitor(run_dir, interval=5.0)
    mon.start()
    ... evolution ...
    mon.stop()
"""

from __future__ import annotations

import csv
import os
import threading
import time
from dataclasses import dataclass
from typing import List, Optional

import pynvml
import torch


@dataclass
class GPUSample:
    t: float
    index: int
    util_pct: float
    mem_used_mb: float
    mem_total_mb: float
    temp_c: float
    power_w: float
    torch_alloc_mb: float


def visible_gpu_indices() -> List[int]:
    """Physical NVML indices of the GPUs visible to this process."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None or env.strip() == "":
        return list(range(pynvml.nvmlDeviceGetCount()))
    return [int(x) for x in env.split(",") if x.strip().isdigit()]


class GPUMonitor:
    def __init__(self, run_dir: str, interval: float = 5.0, filename: str = "gpu_usage.csv"):
        self.path = os.path.join(run_dir, filename)
        self.interval = interval
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        pynvml.nvmlInit()
        self.indices = visible_gpu_indices()
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices]
        self.names = [pynvml.nvmlDeviceGetName(h) for h in self.handles]
        self.samples: List[GPUSample] = []

    def _query(self, logical: int, handle) -> GPUSample:
        util = pynvml.nvmlDeviceGetUtilizationRates(handle)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        temp = pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
        power = pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
        alloc = torch.cuda.memory_allocated(logical) / 2**20 if torch.cuda.is_initialized() else 0.0
        return GPUSample(
            t=time.time(),
            index=self.indices[logical],
            util_pct=float(util.gpu),
            mem_used_mb=mem.used / 2**20,
            mem_total_mb=mem.total / 2**20,
            temp_c=float(temp),
            power_w=power,
            torch_alloc_mb=alloc,
        )

    def sample_once(self) -> List[GPUSample]:
        batch = [self._query(i, h) for i, h in enumerate(self.handles)]
        self.samples.extend(batch)
        return batch

    def _run(self):
        new_file = not os.path.exists(self.path)
        with open(self.path, "a", newline="") as f:
            writer = csv.writer(f)
            if new_file:
                writer.writerow(list(GPUSample.__dataclass_fields__))
            while not self._stop.is_set():
                for s in self.sample_once():
                    writer.writerow([getattr(s, k) for k in GPUSample.__dataclass_fields__])
                f.flush()
                self._stop.wait(self.interval)

    def start(self):
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="gpu-monitor", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * self.interval)
            self._thread = None
        pynvml.nvmlShutdown()

    def summary(self) -> dict:
        if not self.samples:
            return {}
        out = {}
        for idx, name in zip(self.indices, self.names):
            ss = [s for s in self.samples if s.index == idx]
            out[f"gpu{idx}"] = {
                "name": name,
                "mean_util": sum(s.util_pct for s in ss) / len(ss),
                "max_mem_mb": max(s.mem_used_mb for s in ss),
                "max_temp_c": max(s.temp_c for s in ss),
                "mean_power_w": sum(s.power_w for s in ss) / len(ss),
            }
        return out

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def log_gpu_summary(logger, monitor: GPUMonitor):
    for k, v in monitor.summary().items():
        logger.info(
            "%s (%s): util %.0f%%, peak mem %.0f MiB, peak temp %.0f C, power %.0f W",
            k, v["name"], v["mean_util"], v["max_mem_mb"], v["max_temp_c"], v["mean_power_w"],
        )
