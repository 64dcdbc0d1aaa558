"""Small fastai v2 callbacks we use in every experiment to keep an eye on the GPU.

    from utils.gpu_callbacks import GPUMemTrace, BatchTimer, NvmlLogger, free_gpu_mem
    learn = vision_learner(dls, resnet50, cbs=[GPUMemTrace(), BatchTimer()])

Everything here is best-effort: a missing `pynvml` or no GPU just disables the callback.
"""
import gc
import os
import subprocess
import time
from collections import defaultdict

import torch
from fastai.callback.core import Callback
from fastcore.basics import store_attr

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # ImportError, or NVMLError when there is no NVIDIA driver
    _HAS_NVML = False

__all__ = ['GPUMemTrace', 'BatchTimer', 'NvmlLogger', 'free_gpu_mem', 'gpu_summary', 'b2mb']


def b2mb(num):
    "convert bytes to MiB, rounded"
    return int(num / 2**20)


def free_gpu_mem(*objs):
    "Delete `objs`, run the garbage collector and release the cached blocks back to the driver"
    for o in objs: del o
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.ipc_collect()


def gpu_summary(device=None):
    "One line with used/free memory of `device` as seen by the caching allocator and by the driver"
    if not torch.cuda.is_available(): return "no GPU"
    device = device if device is not None else torch.cuda.current_device()
    free, total = torch.cuda.mem_get_info(device)
    alloc, reserved = torch.cuda.memory_allocated(device), torch.cuda.memory_reserved(device)
    return (f"gpu{device}: alloc {b2mb(alloc)}MB | reserved {b2mb(reserved)}MB | "
            f"free {b2mb(free)}MB / {b2mb(total)}MB")


class GPUMemTrace(Callback):
    "Record peak allocated memory per epoch (and optionally per batch)"
    order = 100
    def __init__(self, per_batch=False, device=None): store_attr()

    def before_fit(self):
        self.enabled = torch.cuda.is_available()
        if not self.enabled: return
        self.dev = self.device if self.device is not None else self.dls.device
        self.epoch_peaks, self.batch_peaks = [], defaultdict(list)

    def before_epoch(self):
        if self.enabled: torch.cuda.reset_peak_memory_stats(self.dev)

    def after_batch(self):
        if self.enabled and self.per_batch:
            self.batch_peaks[self.epoch].append(b2mb(torch.cuda.max_memory_allocated(self.dev)))

    def after_epoch(self):
        if not self.enabled: return
        peak = b2mb(torch.cuda.max_memory_allocated(self.dev))
        self.epoch_peaks.append(peak)
        print(f"epoch {self.epoch}: peak {peak}MB | {gpu_summary(self.dev)}")


class BatchTimer(Callback):
    "Time forward+backward of every training batch with CUDA events (python timers lie on async GPUs)"
    order = 99
    def __init__(self, skip_first=5): store_attr()

    def before_fit(self):
        self.times = []
        self.use_events = self.dls.device.type == 'cuda'

    def before_batch(self):
        if not self.training: return
        if self.use_events:
            self.start_ev = torch.cuda.Event(enable_timing=True)
            self.end_ev = torch.cuda.Event(enable_timing=True)
            self.start_ev.record()
        else:
            self.t0 = time.perf_counter()

    def after_batch(self):
        if not self.training: return
        if self.use_events:
            self.end_ev.record()
            self.end_ev.synchronize()
            ms = self.start_ev.elapsed_time(self.end_ev)
        else:
            ms = (time.perf_counter() - self.t0) * 1000
        if self.iter >= self.skip_first: self.times.append(ms)

    def after_fit(self):
        if self.times:
            t = torch.tensor(self.times)
            print(f"batch time: {t.mean():.1f}ms ± {t.std():.1f} (n={len(t)}), "
                  f"{self.dls.bs / (t.mean() / 1000):.0f} img/s")


class NvmlLogger(Callback):
    "Log GPU utilisation and temperature from NVML every `every` batches"
    order = 101
    def __init__(self, every=50, gpu_index=None): store_attr()

    def before_fit(self):
        self.enabled = _HAS_NVML
        if not self.enabled:
            print("NvmlLogger: pynvml not available, disabled")
            return
        idx = self.gpu_index
        if idx is None:
            visible = os.environ.get('CUDA_VISIBLE_DEVICES')
            idx = int(visible.split(',')[0]) if visible else torch.cuda.current_device()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
        self.log = []

    def after_batch(self):
        if not self.enabled or not self.training or self.iter % self.every: return
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        temp = pynvml.nvmlDeviceGetTemperature(self.handle, pynvml.NVML_TEMPERATURE_GPU)
        mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)
        self.log.append(dict(iter=self.train_iter, gpu=util.gpu, mem=util.memory, temp=temp,
                             used_mb=b2mb(mem.used)))

    def after_fit(self):
        if self.enabled and self.log:
            avg = sum(o['gpu'] for o in self.log) / len(self.log)
            print(f"mean GPU utilisation {avg:.0f}% over {len(self.log)} samples, "
                  f"max temp {max(o['temp'] for o in self.log)}C")


def nvidia_smi_query(fields=('name', 'memory.used', 'memory.total', 'utilization.gpu')):
    "Parse `nvidia-smi --query-gpu` into a list of dicts (empty list if nvidia-smi is missing)"
    cmd = ['nvidia-smi', f"--query-gpu={','.join(fields)}", '--format=csv,noheader,nounits']
    try:
        out = subprocess.check_output(cmd, text=True)
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []
    return [dict(zip(fields, [v.strip() for v in line.split(',')])) for line in out.strip().splitlines()]
