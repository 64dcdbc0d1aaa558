"""Background GPU/system monitor that streams metrics to Weights & Biases and TensorBoard.

Modeled on the system-metrics thread W&B runs internally: a daemon thread samples NVML
every `interval` seconds and pushes averaged values at each training log step.
"""
import os
import threading
import time
from collections import defaultdict
from typing import Dict, List, Optional

import psutil
import pynvml
import torch
import wandb
from torch.utils.tensorboard import SummaryWriter


class GPUMonitor:
    def __init__(self, interval: float = 2.0, device_ids: Optional[List[int]] = None,
                 tb_dir: Optional[str] = None, use_wandb: bool = True):
        pynvml.nvmlInit()
        self.interval = interval
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if device_ids is None:
            if visible:
                device_ids = [int(x) for x in visible.split(",") if x.strip()]
            else:
                device_ids = list(range(pynvml.nvmlDeviceGetCount()))
        self.device_ids = device_ids
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in device_ids]
        self.driver = pynvml.nvmlSystemGetDriverVersion()
        self.names = [pynvml.nvmlDeviceGetName(h) for h in self.handles]
        self._samples: Dict[str, List[float]] = defaultdict(list)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpu-monitor", daemon=True)
        self.writer = SummaryWriter(log_dir=tb_dir) if tb_dir else None
        self.use_wandb = use_wandb and wandb.run is not None

    def start(self):
        self._thread.start()
        return self

    def _sample_once(self):
        out = {}
        for idx, h in zip(self.device_ids, self.handles):
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
            power = pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0
            out[f"system/gpu.{idx}.gpu"] = float(util.gpu)
            out[f"system/gpu.{idx}.memoryAllocated"] = 100.0 * mem.used / mem.total
            out[f"system/gpu.{idx}.temp"] = float(temp)
            out[f"system/gpu.{idx}.powerWatts"] = power
        out["system/cpu"] = psutil.cpu_percent()
        out["system/memory"] = psutil.virtual_memory().percent
        return out

    def _run(self):
        while not self._stop.is_set():
            try:
                sample = self._sample_once()
            except pynvml.NVMLError as err:
                print(f"[gpu-monitor] NVML error: {err}")
                break
            with self._lock:
                for k, v in sample.items():
                    self._samples[k].append(v)
            self._stop.wait(self.interval)

    def torch_memory(self) -> Dict[str, float]:
        if not torch.cuda.is_available():
            return {}
        dev = torch.cuda.current_device()
        return {
            "torch/allocated_gb": torch.cuda.memory_allocated(dev) / 2**30,
            "torch/reserved_gb": torch.cuda.memory_reserved(dev) / 2**30,
            "torch/max_allocated_gb": torch.cuda.max_memory_allocated(dev) / 2**30,
        }

    def flush(self, step: int) -> Dict[str, float]:
        with self._lock:
            agg = {k: sum(v) / len(v) for k, v in self._samples.items() if v}
            self._samples.clear()
        agg.update(self.torch_memory())
        if self.use_wandb:
            wandb.log(agg, step=step)
        if self.writer is not None:
            for k, v in agg.items():
                self.writer.add_scalar(k, v, global_step=step)
        return agg

    def summary(self) -> str:
        lines = [f"NVIDIA driver {self.driver}"]
        for idx, name in zip(self.device_ids, self.names):
            lines.append(f"  gpu {idx}: {name}")
        return "\n".join(lines)

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()
        pynvml.nvmlShutdown()


def log_step_time(step: int, step_start: float, monitor: Optional[GPUMonitor] = None):
    """Call at the end of every optimizer step."""
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - step_start
    metrics = {"perf/step_time_s": elapsed}
    if monitor is not None:
        metrics.update(monitor.flush(step))
    elif wandb.run is not None:
        wandb.log(metrics, step=step)
    return metrics
