"""
Device monitoring helpers for long training jobs.

* pick_free_devices(): choose the N least-used devices on a shared box before the job starts
  (reads nvidia-smi) and restrict the process to them.
* DeviceMonitor: background thread sampling utilisation and memory of the visible devices
  through NVML, exposing running averages for the logger and flagging stalls.
* describe_devices(): one line per device for the run header.
"""
import logging
import os
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pynvml
import torch

logger = logging.getLogger(__name__)


@dataclass
class DeviceSample:
    index: int
    util_pct: float
    mem_used_mb: float
    mem_total_mb: float
    t: float = field(default_factory=time.time)


def _query_smi() -> List[Dict[str, float]]:
    """Rows of index / memory / utilisation as reported by the driver tool."""
    cmd = [
        "nvidia-smi",
        "--query-gpu=index,memory.used,memory.total,utilization.gpu",
        "--format=csv,noheader,nounits",
    ]
    out = subprocess.check_output(cmd, text=True, timeout=20)
    rows = []
    for line in out.strip().splitlines():
        idx, used, total, util = [x.strip() for x in line.split(",")]
        rows.append({"index": int(idx), "used": float(used), "total": float(total), "util": float(util)})
    return rows


def pick_free_devices(n: int, max_used_frac: float = 0.1, max_util: float = 10.0) -> List[int]:
    """Select n idle devices and expose only those to this process (call before any CUDA work)."""
    rows = _query_smi()
    idle = [r for r in rows if r["used"] / max(r["total"], 1.0) <= max_used_frac and r["util"] <= max_util]
    idle.sort(key=lambda r: (r["util"], r["used"]))
    if len(idle) < n:
        raise RuntimeError(f"wanted {n} idle devices, found {len(idle)}: {rows}")
    chosen = [r["index"] for r in idle[:n]]
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in chosen)
    logger.info("using devices %s", chosen)
    return chosen


class DeviceMonitor:
    """Samples every `interval` seconds; keeps the last `window` samples per device."""

    def __init__(self, interval: float = 5.0, window: int = 60, stall_util: float = 5.0, stall_after: int = 12):
        self.interval = interval
        self.stall_util = stall_util
        self.stall_after = stall_after
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._samples: Dict[int, deque] = {}
        self._window = window
        self._handles = []

    def start(self):
        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        indices = [int(x) for x in visible.split(",")] if visible else list(range(pynvml.nvmlDeviceGetCount()))
        for idx in indices:
            self._handles.append((idx, pynvml.nvmlDeviceGetHandleByIndex(idx)))
            self._samples[idx] = deque(maxlen=self._window)
        self._thread = threading.Thread(target=self._run, name="device-monitor", daemon=True)
        self._thread.start()
        return self

    def _sample_once(self):
        for idx, handle in self._handles:
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            util = pynvml.nvmlDeviceGetUtilizationRates(handle)
            s = DeviceSample(idx, float(util.gpu), mem.used / 2**20, mem.total / 2**20)
            with self._lock:
                self._samples[idx].append(s)

    def _run(self):
        while not self._stop.is_set():
            try:
                self._sample_once()
            except Exception as e:  # never kill training because of monitoring
                logger.warning("device sampling failed: %s", e)
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * self.interval)
        pynvml.nvmlShutdown()

    def summary(self) -> Dict[str, float]:
        """Mean utilisation / memory over the window, for the metrics logger."""
        out = {}
        with self._lock:
            for idx, q in self._samples.items():
                if not q:
                    continue
                out[f"dev{idx}/util"] = sum(s.util_pct for s in q) / len(q)
                out[f"dev{idx}/mem_gb"] = q[-1].mem_used_mb / 1024
        return out

    def stalled(self) -> List[int]:
        """Devices whose utilisation stayed below stall_util for the last stall_after samples."""
        bad = []
        with self._lock:
            for idx, q in self._samples.items():
                recent = list(q)[-self.stall_after:]
                if len(recent) == self.stall_after and all(s.util_pct < self.stall_util for s in recent):
                    bad.append(idx)
        return bad

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def describe_devices() -> List[str]:
    lines = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        lines.append(
            f"[{i}] {props.name}, {props.total_memory / 2**30:.1f} GiB, "
            f"sm_{props.major}{props.minor}, {props.multi_processor_count} SMs"
        )
    return lines


def log_allocator_state(prefix: str = ""):
    """Allocator view of the current device (complements the driver view from NVML)."""
    if not torch.cuda.is_available():
        return
    alloc = torch.cuda.memory_allocated() / 2**30
    reserved = torch.cuda.memory_reserved() / 2**30
    logger.info("%sallocated %.2f GiB, reserved %.2f GiB", prefix, alloc, reserved)
