import atexit
import time
from collections import defaultdict

import numpy as np
import torch

cuda_timers = defaultdict(list)
timers = defaultdict(list)


class CudaTimer:
    """Measures the GPU time of a code block with CUDA events (asynchronous launches are accounted for).

        with CudaTimer('Inference'):
            output = model(input)
    """

    def __init__(self, timer_name=''):
        self.timer_name = timer_name

        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        self.start.record()
        return self

    def __exit__(self, *args):
        self.end.record()
        torch.cuda.synchronize()
        cuda_timers[self.timer_name].append(self.start.elapsed_time(self.end))


class Timer:
    """Measures the wall-clock time of a code block on the host."""

    def __init__(self, timer_name=''):
        self.timer_name = timer_name

    def __enter__(self):
        self.start = time.time()
        return self

    def __exit__(self, *args):
        self.end = time.time()
        self.interval = self.end - self.start  # measured in seconds
        self.interval *= 1000.0  # convert to milliseconds
        timers[self.timer_name].append(self.interval)


class TimerStats:
    """Keeps running statistics of named timers without storing every sample (for long event streams)."""

    def __init__(self):
        self.count = defaultdict(int)
        self.total = defaultdict(float)
        self.total_sq = defaultdict(float)

    def add(self, name, value_ms):
        self.count[name] += 1
        self.total[name] += value_ms
        self.total_sq[name] += value_ms * value_ms

    def mean(self, name):
        return self.total[name] / max(self.count[name], 1)

    def std(self, name):
        n = max(self.count[name], 1)
        m = self.mean(name)
        return max(self.total_sq[name] / n - m * m, 0.0) ** 0.5


def print_timing_info():
    print('== Timing statistics ==')
    skip_warmup = 10
    for timer_name, timing_values in [*cuda_timers.items(), *timers.items()]:
        if len(timing_values) <= skip_warmup:
            continue
        values = timing_values[skip_warmup:]
        timing_value = np.mean(np.array(values))
        if timing_value < 1000.0:
            print('{}: {:.2f} ms ({} samples)'.format(timer_name, timing_value, len(values)))
        else:
            print('{}: {:.2f} s ({} samples)'.format(timer_name, timing_value / 1000.0, len(values)))


def gpu_memory_report(tag=''):
    """Prints the allocator statistics, used to size the number of event windows reconstructed per batch."""
    if not torch.cuda.is_available():
        return
    allocated = torch.cuda.memory_allocated() / 2 ** 20
    reserved = torch.cuda.memory_reserved() / 2 ** 20
    peak = torch.cuda.max_memory_allocated() / 2 ** 20
    print(f'[{tag}] allocated {allocated:.1f} MiB, reserved {reserved:.1f} MiB, peak {peak:.1f} MiB')


# this will print all the timer values upon termination of any program that imported this file
atexit.register(print_timing_info)
