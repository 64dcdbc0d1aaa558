import time

import torch


class CudaTimer:
    def __init__(self, enabled=True):
        self.enabled = enabled
        self.start = None
        self.end = None
        self.timings = {}

    def reset(self):
        if self.enabled:
            self.start = torch.cuda.Event(enable_timing=True)
            self.start.record()
            self.prev_time_gpu = self.start
        self.timings = {}

    def check(self, name=None):
        if self.enabled:
            self.end = torch.cuda.Event(enable_timing=True)
            self.end.record()
            torch.cuda.synchronize()
            gpu_time = self.prev_time_gpu.elapsed_time(self.end)
            if name is not None:
                self.timings[name] = gpu_time
            self.prev_time_gpu = self.end


class Timer:
    """Host-side wall-clock timer used by the data loaders."""

    def __init__(self):
        self.t0 = time.time()

    def elapsed(self):
        return time.time() - self.t0
