"""TrainerCallbacks shared by our fine-tuning scripts.

GpuMemoryCallback     - peak/reserved memory per logging window (torch allocator view)
ThroughputCallback    - tokens/s and samples/s measured with CUDA events
NvmlUtilCallback      - SM utilisation / power from NVML, sampled in a background thread
TorchProfilerCallback - a short torch.profiler window around steps [wait+warmup, wait+warmup+active)
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Dict, List, Optional

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

try:
    import pynvml

    _HAS_NVML = True
except ImportError:  # pragma: no cover
    _HAS_NVML = False

logger = logging.getLogger(__name__)

GiB = float(2**30)


class GpuMemoryCallback(TrainerCallback):
    """Adds ``mem/peak_alloc_gb`` etc. to every log dict and resets the peak counters."""

    def __init__(self, reset_every_log: bool = True):
        self.reset_every_log = reset_every_log

    def on_train_begin(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            name = torch.cuda.get_device_name(torch.cuda.current_device())
            total = torch.cuda.get_device_properties(0).total_memory / GiB
            logger.info(f"[rank{args.process_index}] training on {name} ({total:.1f} GiB)")

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None:
            return
        logs["mem/alloc_gb"] = round(torch.cuda.memory_allocated() / GiB, 3)
        logs["mem/peak_alloc_gb"] = round(torch.cuda.max_memory_allocated() / GiB, 3)
        logs["mem/reserved_gb"] = round(torch.cuda.memory_reserved() / GiB, 3)
        logs["mem/peak_reserved_gb"] = round(torch.cuda.max_memory_reserved() / GiB, 3)
        if self.reset_every_log:
            torch.cuda.reset_peak_memory_stats()


class ThroughputCallback(TrainerCallback):
    """Measures step time with device events (host timers lie when kernels are async)."""

    def __init__(self, seq_len: int, warmup_steps: int = 5):
        self.seq_len = seq_len
        self.warmup_steps = warmup_steps
        self._start_evt = None
        self._end_evt = None
        self._times: List[float] = []

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step < self.warmup_steps:
            return
        self._start_evt = torch.cuda.Event(enable_timing=True)
        self._end_evt = torch.cuda.Event(enable_timing=True)
        self._start_evt.record()

    def on_step_end(self, args, state, control, **kwargs):
        if self._start_evt is None:
            return
        self._end_evt.record()
        torch.cuda.synchronize()
        self._times.append(self._start_evt.elapsed_time(self._end_evt) / 1000.0)
        self._start_evt = self._end_evt = None

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self._times or logs is None:
            return
        step_time = sum(self._times) / len(self._times)
        samples = args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size
        logs["perf/step_time_s"] = round(step_time, 4)
        logs["perf/samples_per_s"] = round(samples / step_time, 2)
        logs["perf/tokens_per_s"] = round(samples * self.seq_len / step_time, 1)
        self._times.clear()


class NvmlUtilCallback(TrainerCallback):
    """Samples GPU utilisation and power draw of the local device every ``interval`` seconds."""

    def __init__(self, interval: float = 2.0):
        self.interval = interval
        self._samples: List[Dict[str, float]] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._handle = None

    def _poll(self):
        while not self._stop.is_set():
            util = pynvml.nvmlDeviceGetUtilizationRates(self._handle)
            power = pynvml.nvmlDeviceGetPowerUsage(self._handle) / 1000.0
            self._samples.append({"util": float(util.gpu), "mem_util": float(util.memory), "power_w": power})
            time.sleep(self.interval)

    def on_train_begin(self, args, state, control, **kwargs):
        if not _HAS_NVML:
            logger.warning("pynvml not installed; NvmlUtilCallback disabled")
            return
        pynvml.nvmlInit()
        local_rank = max(args.local_rank, 0)
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self._samples or logs is None:
            return
        n = len(self._samples)
        logs["gpu/util_pct"] = round(sum(s["util"] for s in self._samples) / n, 1)
        logs["gpu/mem_util_pct"] = round(sum(s["mem_util"] for s in self._samples) / n, 1)
        logs["gpu/power_w"] = round(sum(s["power_w"] for s in self._samples) / n, 1)
        self._samples.clear()

    def on_train_end(self, args, state, control, **kwargs):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            pynvml.nvmlShutdown()


class TorchProfilerCallback(TrainerCallback):
    """Profiles a few optimizer steps and writes a TensorBoard trace to ``<output_dir>/profile``."""

    def __init__(self, wait: int = 10, warmup: int = 2, active: int = 3, record_shapes: bool = False):
        self.schedule = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=1)
        self.record_shapes = record_shapes
        self.prof = None

    def on_train_begin(self, args, state, control, **kwargs):
        if args.process_index != 0:
            return
        trace_dir = os.path.join(args.output_dir, "profile")
        self.prof = torch.profiler.profile(
            activities=[
                torch.profiler.ProfilerActivity.CPU,
                torch.profiler.ProfilerActivity.CUDA,
            ],
            schedule=self.schedule,
            on_trace_ready=torch.profiler.tensorboard_trace_handler(trace_dir),
            record_shapes=self.record_shapes,
            profile_memory=True,
            with_stack=False,
        )
        self.prof.start()

    def on_step_end(self, args, state, control, **kwargs):
        if self.prof is not None:
            self.prof.step()

    def on_train_end(self, args, state, control, **kwargs):
        if self.prof is not None:
            self.prof.stop()
            self.prof = None


class MemorySnapshotOnOOM(TrainerCallback):
    """Dump the last training state to json if a step blew past ``budget_gb`` (helps bisect OOMs)."""

    def __init__(self, budget_gb: float):
        self.budget_gb = budget_gb

    def on_step_end(self, args, state, control, **kwargs):
        peak = torch.cuda.max_memory_reserved() / GiB
        if peak > self.budget_gb and args.process_index == 0:
            path = os.path.join(args.output_dir, f"mem_overrun_step{state.global_step}.json")
            with open(path, "w") as f:
                json.dump({"step": state.global_step, "peak_reserved_gb": peak, "log_history": state.log_history[-5:]}, f)
            logger.warning(f"peak reserved {peak:.1f} GiB exceeded budget {self.budget_gb} GiB at step {state.global_step}")


def default_callbacks(args: TrainingArguments, seq_len: int, profile: bool = False) -> List[TrainerCallback]:
    cbs: List[TrainerCallback] = [GpuMemoryCallback(), ThroughputCallback(seq_len=seq_len)]
    if _HAS_NVML and os.environ.get("LOG_NVML", "1") == "1":
        cbs.append(NvmlUtilCallback())
    if profile:
        cbs.append(TorchProfilerCallback())
    return cbs
