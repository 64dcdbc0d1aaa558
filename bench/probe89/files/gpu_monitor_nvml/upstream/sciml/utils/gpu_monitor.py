"""Background sampler of accelerator utilization / memory / power for long HPC jobs.

One thread per rank samples the device the rank is bound to every `interval` seconds and keeps
a ring buffer; the training loop pulls summaries for wandb / the job log. Energy-to-solution
is reported at the end of the run (integrated board power), which our allocation reports need.
"""
import atexit
import collections
import json
import logging
import os
import threading
import time
from typing import Dict, List, Optional

import pynvml
import torch

log = logging.getLogger(__name__)

Sample = collections.namedtuple("Sample", "t util_gpu util_mem mem_used_gb power_w temp_c")


def _physical_index(local_index: int) -> int:
    """Map the torch device index to the NVML index (NVML ignores CUDA_VISIBLE_DEVICES)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return local_index
    ids = [v.strip() for v in visible.split(",") if v.strip()]
    try:
        return int(ids[local_index])
    except (ValueError, IndexError):
        return local_index


class GPUMonitor:
    def __init__(self, device_index: Optional[int] = None, interval: float = 5.0, maxlen: int = 100000):
        self.interval = interval
        self.samples: collections.deque = collections.deque(maxlen=maxlen)
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

        if device_index is None:
            device_index = torch.cuda.current_device()
        self.device_index = device_index

        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(_physical_index(device_index))
        self.name = pynvml.nvmlDeviceGetName(self.handle)
        if isinstance(self.name, bytes):
            self.name = self.name.decode()
        self.total_mem_gb = pynvml.nvmlDeviceGetMemoryInfo(self.handle).total / 2**30
        atexit.register(self.stop)

    # ------------------------------------------------------------------ sampling
    def _sample(self) -> Sample:
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)
        try:
            power = pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0  # mW -> W
        except pynvml.NVMLError:
            power = float("nan")
        temp = pynvml.nvmlDeviceGetTemperature(self.handle, pynvml.NVML_TEMPERATURE_GPU)
        return Sample(time.time(), util.gpu, util.memory, mem.used / 2**30, power, temp)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append(self._sample())
            except pynvml.NVMLError as err:  # transient driver hiccups on busy nodes
                log.debug(f"nvml sample failed: {err}")
            self._stop.wait(self.interval)

    def start(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gpu-monitor", daemon=True)
            self._thread.start()
        return self

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=2 * self.interval)
            self._thread = None
            try:
                pynvml.nvmlShutdown()
            except pynvml.NVMLError:
                pass

    # ------------------------------------------------------------------ reporting
    def summary(self, since: float = 0.0) -> Dict[str, float]:
        recent = [s for s in list(self.samples) if s.t >= since]
        if not recent:
            return {}
        out = {
            "gpu/util_mean": sum(s.util_gpu for s in recent) / len(recent),
            "gpu/mem_util_mean": sum(s.util_mem for s in recent) / len(recent),
            "gpu/mem_used_gb_max": max(s.mem_used_gb for s in recent),
            "gpu/power_w_mean": sum(s.power_w for s in recent) / len(recent),
            "gpu/temp_c_max": max(s.temp_c for s in recent),
        }
        # torch's own view of the caching allocator
        out["gpu/torch_reserved_gb"] = torch.cuda.memory_reserved(self.device_index) / 2**30
        out["gpu/torch_peak_alloc_gb"] = torch.cuda.max_memory_allocated(self.device_index) / 2**30
        return out

    def energy_kwh(self) -> float:
        s = list(self.samples)
        if len(s) < 2:
            return 0.0
        joules = 0.0
        for a, b in zip(s[:-1], s[1:]):
            joules += 0.5 * (a.power_w + b.power_w) * (b.t - a.t)
        return joules / 3.6e6

    def dump(self, path: str):
        with open(path, "w") as f:
            json.dump({"device": self.name, "total_mem_gb": self.total_mem_gb,
                       "energy_kwh": self.energy_kwh(),
                       "samples": [s._asdict() for s in self.samples]}, f)


def maybe_start_monitor(rank: int, local_rank: int, enabled: bool = True, interval: float = 5.0):
    """Start a monitor on every rank (each rank watches its own device)."""
    if not enabled:
        return None
    mon = GPUMonitor(device_index=local_rank, interval=interval).start()
    if rank == 0:
        log.info(f"monitoring {mon.name} ({mon.total_mem_gb:.0f} GiB) every {interval}s")
    return mon
