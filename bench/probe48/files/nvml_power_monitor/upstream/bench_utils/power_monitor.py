"""Background GPU power / utilisation sampler for energy-per-sample benchmarks.

Modelled on the Zeus / MLPerf-power style monitors: a daemon thread polls NVML every
`interval_s`, and `window()` returns the energy (J), mean power (W), mean SM utilisation and
peak memory for the code run inside it.

    monitor = PowerMonitor(interval_s=0.05)
    with monitor.window("train_epoch") as w:
        train_one_epoch(...)
    print(w.energy_j / samples, "J/sample")
"""
import contextlib
import dataclasses
import logging
import os
import threading
import time
from typing import Dict, List, Optional

import pynvml
import torch

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class Sample:
    t: float
    power_w: float
    util_pct: float
    mem_used_mb: float


@dataclasses.dataclass
class WindowResult:
    name: str
    start: float
    end: float = 0.0
    energy_j: float = 0.0
    mean_power_w: float = 0.0
    mean_util_pct: float = 0.0
    peak_mem_mb: float = 0.0
    samples: int = 0

    @property
    def seconds(self) -> float:
        return self.end - self.start


def _visible_physical_index(local_index: int) -> int:
    """NVML enumerates physical GPUs; map the process-local index through CUDA_VISIBLE_DEVICES."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return local_index
    ids = [int(x) for x in visible.split(",") if x.strip()]
    return ids[local_index]


class PowerMonitor:
    def __init__(self, device_index: Optional[int] = None, interval_s: float = 0.1, keep: int = 100_000):
        pynvml.nvmlInit()
        if device_index is None:
            device_index = torch.cuda.current_device()
        self.index = _visible_physical_index(device_index)
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(self.index)
        self.name = pynvml.nvmlDeviceGetName(self.handle)
        self.power_limit_w = pynvml.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1000.0
        self.interval_s = interval_s
        self.keep = keep
        self._samples: List[Sample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="power-monitor", daemon=True)
        # hardware energy counter (Volta+), in mJ since driver load
        try:
            self._energy_counter = pynvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            self.has_energy_counter = True
        except pynvml.NVMLError:
            self.has_energy_counter = False
        logger.info("PowerMonitor on %s (physical %d), limit %.0f W", self.name, self.index, self.power_limit_w)
        self._thread.start()

    def _read(self) -> Sample:
        power = pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)
        return Sample(time.time(), power, float(util.gpu), mem.used / 2**20)

    def _run(self):
        while not self._stop.is_set():
            s = self._read()
            with self._lock:
                self._samples.append(s)
                if len(self._samples) > self.keep:
                    del self._samples[: len(self._samples) - self.keep]
            self._stop.wait(self.interval_s)

    def _slice(self, start: float, end: float) -> List[Sample]:
        with self._lock:
            return [s for s in self._samples if start <= s.t <= end]

    def energy_counter_j(self) -> Optional[float]:
        if not self.has_energy_counter:
            return None
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) / 1000.0

    @contextlib.contextmanager
    def window(self, name: str):
        torch.cuda.synchronize()
        res = WindowResult(name=name, start=time.time())
        e0 = self.energy_counter_j()
        try:
            yield res
        finally:
            torch.cuda.synchronize()  # close the window only after the device is idle
            res.end = time.time()
            samples = self._slice(res.start, res.end)
            res.samples = len(samples)
            if samples:
                res.mean_power_w = sum(s.power_w for s in samples) / len(samples)
                res.mean_util_pct = sum(s.util_pct for s in samples) / len(samples)
                res.peak_mem_mb = max(s.mem_used_mb for s in samples)
            e1 = self.energy_counter_j()
            if e0 is not None and e1 is not None:
                res.energy_j = e1 - e0
            else:
                # trapezoidal integration of the sampled power
                res.energy_j = sum(0.5 * (a.power_w + b.power_w) * (b.t - a.t)
                                   for a, b in zip(samples, samples[1:]))
            logger.info("%s: %.1f s, %.1f J, %.0f W avg, %.0f%% util", name, res.seconds, res.energy_j,
                        res.mean_power_w, res.mean_util_pct)

    def summary(self) -> Dict[str, float]:
        with self._lock:
            samples = list(self._samples)
        if not samples:
            return {}
        return {
            "gpu_name": self.name,
            "power_limit_w": self.power_limit_w,
            "mean_power_w": sum(s.power_w for s in samples) / len(samples),
            "max_power_w": max(s.power_w for s in samples),
            "mean_util_pct": sum(s.util_pct for s in samples) / len(samples),
            "peak_mem_mb": max(s.mem_used_mb for s in samples),
        }

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2 * self.interval_s + 1)
        pynvml.nvmlShutdown()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()
