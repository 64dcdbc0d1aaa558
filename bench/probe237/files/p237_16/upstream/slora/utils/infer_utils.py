import functools
import os
import random
import time
from collections import defaultdict

import numpy as np
import torch
import torch.distributed as dist

is_show_cost_time = os.environ.get("SLORA_SHOW_COST_TIME", "0") == "1"

_time_stats = defaultdict(list)


def _rank0() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def _sync():
    """Host-device fence used by all timers below (no-op on CPU-only runs)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def mark_cost_time(func_name):
    def inner_func(func):
        @functools.wraps(func)
        def time_func(*args, **kwargs):
            if dist.get_rank() in [0, 1] and is_show_cost_time:
                _sync()
                start_time = time.time()
                ans = func(*args, **kwargs)
                _sync()
                print(func_name, "cost time:", (time.time() - start_time) * 1000)
                return ans
            else:
                _sync()
                ans = func(*args, **kwargs)
                _sync()
                return ans

        return time_func

    return inner_func


time_mark = {}


def mark_start(key):
    _sync()
    global time_mark
    time_mark[key] = time.time()
    return


def mark_end(key, print_min_cost=0.0):
    _sync()
    global time_mark
    cost_time = (time.time() - time_mark[key]) * 1000
    if cost_time > print_min_cost:
        print(f"cost {key}:", cost_time)


def calculate_time(show=False, min_cost_ms=0.0):
    def wrapper(func):
        @functools.wraps(func)
        def inner_func(*args, **kwargs):
            _sync()
            if show:
                start_time = time.time()
            result = func(*args, **kwargs)
            _sync()
            if show:
                cost_time = (time.time() - start_time) * 1000
                _time_stats[func.__name__].append(cost_time)
                if cost_time > min_cost_ms:
                    print(f"Function {func.__name__} took {cost_time} ms to run.")
            return result

        return inner_func

    return wrapper


class CudaTimer:
    """Event-based timer: does not force a host sync on ``start``."""

    def __init__(self, name: str, enabled: bool = True):
        self.name = name
        self.enabled = enabled
        self.elapsed_ms = None

    def __enter__(self):
        if self.enabled:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
            self._start.record()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._end.record()
            self._end.synchronize()
            self.elapsed_ms = self._start.elapsed_time(self._end)
            _time_stats[self.name].append(self.elapsed_ms)
        return False


def dump_time_stats(path=None):
    lines = []
    for name, values in sorted(_time_stats.items()):
        arr = np.asarray(values)
        lines.append(f"{name:<40} n={len(arr):<6} mean={arr.mean():8.3f}ms p99={np.percentile(arr, 99):8.3f}ms")
    text = "\n".join(lines)
    if path is not None and _rank0():
        with open(path, "w") as f:
            f.write(text + "\n")
    return text


def set_random_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def gpu_mem_gb() -> float:
    return torch.cuda.max_memory_allocated() / 1024 ** 3
