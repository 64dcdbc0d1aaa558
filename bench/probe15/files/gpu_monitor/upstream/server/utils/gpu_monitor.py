"""Background GPU telemetry for the serving engine: memory, utilization, temperature.

Exported to Prometheus and used by the scheduler to refuse new requests when the
device is close to OOM.
"""
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
import pynvml
from prometheus_client import Gauge

logger = logging.getLogger(__name__)

GPU_MEM_USED = Gauge("llm_gpu_memory_used_bytes", "device memory used", ["gpu"])
GPU_UTIL = Gauge("llm_gpu_utilization_percent", "device utilization", ["gpu"])
GPU_TEMP = Gauge("llm_gpu_temperature_celsius", "device temperature", ["gpu"])
TORCH_RESERVED = Gauge("llm_torch_reserved_bytes", "memory reserved by the torch caching allocator", ["gpu"])


@dataclass
class GpuSample:
    index: int
    name: str
    mem_used: int
    mem_total: int
    util: int
    temp: int


class GpuMonitor:
    def __init__(self, interval_s: float = 5.0, devices: Optional[List[int]] = None):
        pynvml.nvmlInit()
        self.interval_s = interval_s
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if devices is None:
            devices = [int(x) for x in visible.split(",")] if visible else list(range(pynvml.nvmlDeviceGetCount()))
        self.devices = devices
        self.handles = {i: pynvml.nvmlDeviceGetHandleByIndex(i) for i in self.devices}
        self.latest: Dict[int, GpuSample] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpu-monitor", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=self.interval_s * 2)
        pynvml.nvmlShutdown()

    def sample(self) -> List[GpuSample]:
        out = []
        for i, h in self.handles.items():
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
            name = pynvml.nvmlDeviceGetName(h)
            out.append(GpuSample(i, name if isinstance(name, str) else name.decode(), mem.used, mem.total,
                                 util.gpu, temp))
        return out

    def _run(self):
        while not self._stop.is_set():
            try:
                for s in self.sample():
                    self.latest[s.index] = s
                    GPU_MEM_USED.labels(gpu=str(s.index)).set(s.mem_used)
                    GPU_UTIL.labels(gpu=str(s.index)).set(s.util)
                    GPU_TEMP.labels(gpu=str(s.index)).set(s.temp)
                for local, _ in enumerate(self.devices):
                    TORCH_RESERVED.labels(gpu=str(local)).set(torch.cuda.memory_reserved(local))
            except pynvml.NVMLError as e:
                logger.warning("NVML query failed: %s", e)
            self._stop.wait(self.interval_s)

    def headroom_ok(self, local_index: int, min_free_fraction: float = 0.05) -> bool:
        """True if the device used by this process still has `min_free_fraction` of its memory free."""
        free, total = torch.cuda.mem_get_info(local_index)
        return free / total >= min_free_fraction

    def summary(self) -> str:
        rows = [f"GPU{s.index} {s.name}: {s.mem_used / 2**30:.1f}/{s.mem_total / 2**30:.1f} GiB, "
                f"{s.util}% util, {s.temp}C" for s in self.latest.values()]
        return "\n".join(rows) if rows else "no samples yet"
