"""Throughput / MFU monitor used by the OLMo trainer.

Keeps a rolling window of per-step timings and token counts and reports
tokens/sec, batches/sec and an estimate of model FLOPs utilisation.
"""

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, Optional

import torch

from .config import SpeedMonitorConfig

log = logging.getLogger(__name__)

__all__ = ["SpeedMonitor", "LRMonitor", "GPU_FLOPS"]

# peak bf16 dense throughput per device (FLOP/s), used for the MFU estimate
GPU_FLOPS = {
    "NVIDIA A100-SXM4-40GB": 312e12,
    "NVIDIA A100-SXM4-80GB": 312e12,
    "NVIDIA H100 80GB HBM3": 989e12,
    "NVIDIA A10G": 125e12,
}


def get_device_peak_flops(device: torch.device) -> Optional[float]:
    name = torch.cuda.get_device_name(device)
    for key, flops in GPU_FLOPS.items():
        if key in name:
            return flops
    log.warning(f"Unknown device '{name}', MFU will not be reported")
    return None


@dataclass
class SpeedMonitor:
    cfg: SpeedMonitorConfig
    start_times: Deque[float] = field(default_factory=lambda: deque([]))
    global_total_tokens: int = 0
    device_interval_tokens: Deque[int] = field(default_factory=lambda: deque([]))
    step_events: Deque[Any] = field(default_factory=lambda: deque([]))
    flops_per_token: Optional[float] = None
    peak_flops: Optional[float] = None

    def attach(self, device: torch.device, flops_per_token: float) -> None:
        self.flops_per_token = flops_per_token
        self.peak_flops = get_device_peak_flops(device)

    def batch_start(
        self,
        global_total_tokens: int,
        device_batch_num_tokens: int,
        record: bool = True,
    ) -> None:
        self.global_total_tokens = global_total_tokens
        if record:
            if len(self.start_times) >= self.cfg.window_size:
                self.start_times.popleft()
                self.device_interval_tokens.popleft()
            self.start_times.append(time.monotonic())
            self.device_interval_tokens.append(device_batch_num_tokens)

    def step_begin(self) -> None:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        self.step_events.append((start, end))
        if len(self.step_events) > self.cfg.window_size:
            self.step_events.popleft()

    def step_end(self) -> None:
        if self.step_events:
            _, end = self.step_events[-1]
            end.record()

    def device_step_time_ms(self) -> Optional[float]:
        if not self.step_events:
            return None
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in self.step_events]
        return sum(times) / len(times)

    def reset(self) -> None:
        self.start_times.clear()
        self.device_interval_tokens.clear()
        self.step_events.clear()

    def check(self) -> Dict[str, float]:
        metrics: Dict[str, float] = {"throughput/total_tokens": self.global_total_tokens}
        if self.start_times:
            interval_seconds = time.monotonic() - self.start_times[0]
            interval_batches = len(self.start_times)
            interval_tokens = sum(self.device_interval_tokens)
            metrics["throughput/device/tokens_per_second"] = interval_tokens / interval_seconds
            metrics["throughput/device/batches_per_second"] = interval_batches / interval_seconds
            if self.flops_per_token is not None and self.peak_flops:
                achieved = self.flops_per_token * interval_tokens / interval_seconds
                metrics["throughput/device/mfu"] = achieved / self.peak_flops
        step_ms = self.device_step_time_ms()
        if step_ms is not None:
            metrics["throughput/device/step_time_ms"] = step_ms
        metrics["System/Peak GPU Memory (MB)"] = torch.cuda.max_memory_allocated() / 1e6
        metrics["System/GPU Memory Reserved (MB)"] = torch.cuda.memory_reserved() / 1e6
        return metrics


@dataclass
class LRMonitor:
    optim: torch.optim.Optimizer

    def check(self) -> Dict[str, float]:
        lrs = [group["lr"] for group in self.optim.param_groups]
        return {f"optim/learning_rate_group{idx}": lr for idx, lr in enumerate(lrs)}
