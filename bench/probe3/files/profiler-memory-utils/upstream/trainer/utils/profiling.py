"""Profiling helpers shared by the training entry points.

* maybe_enable_profiling  - torch.profiler with a wait/warmup/active schedule, one trace per rank
* MemoryProfiler          - allocator history + snapshots for pytorch.org/memory_viz
* DeviceMemoryMonitor     - peak active/reserved memory, allocator retries and OOM counters
* nvtx_range / timed      - lightweight markers and event-based timing for nsys sessions
"""
import contextlib
import logging
import os
import pickle
import time
from collections import namedtuple

import torch

logger = logging.getLogger(__name__)

# the number of warmup steps before the active step in each profiling cycle
WARMUP = 3
# how much memory allocation/free ops to record in memory snapshots
MEMORY_SNAPSHOT_MAX_ENTRIES = 100000


@contextlib.contextmanager
def maybe_enable_profiling(config, *, global_step: int = 0):
    enable_profiling = config.profiling.enable_profiling
    if not enable_profiling:
        yield None
        return

    dump_dir = config.job.dump_folder
    trace_dir = os.path.join(dump_dir, config.profiling.save_traces_folder)
    profile_freq = config.profiling.profile_freq
    rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0

    def trace_handler(prof):
        curr_trace_dir_name = "iteration_" + str(prof.step_num)
        curr_trace_dir = os.path.join(trace_dir, curr_trace_dir_name)
        os.makedirs(curr_trace_dir, exist_ok=True)
        logger.info(f"Dumping profiler traces at step {prof.step_num}")
        begin = time.monotonic()
        prof.export_chrome_trace(f"{curr_trace_dir}/rank{rank}_trace.json")
        logger.info(f"Finished dumping profiler traces in {time.monotonic() - begin:.2f} seconds")
        if rank == 0:
            logger.info(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))

    logger.info(f"Profiling active. Traces will be saved at {trace_dir}")
    os.makedirs(trace_dir, exist_ok=True)
    warmup, active = WARMUP, 1
    wait = profile_freq - (active + warmup)
    assert wait >= 0, "profile_freq must be greater than or equal to warmup + active"
    with torch.profiler.profile(
        activities=[
            torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA,
        ],
        schedule=torch.profiler.schedule(wait=wait, warmup=warmup, active=active),
        on_trace_ready=trace_handler,
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
    ) as torch_profiler:
        torch_profiler.step_num = global_step
        yield torch_profiler


class MemoryProfiler:
    def __init__(self, step_num: int, freq: int, snapshot_dir: str):
        torch.cuda.memory._record_memory_history(max_entries=MEMORY_SNAPSHOT_MAX_ENTRIES)
        # when resume training, we start from the last step
        self.step_num = step_num
        self.freq = freq
        self.snapshot_dir = snapshot_dir

    def step(self, exit_ctx: bool = False):
        self.step_num += 1
        if not exit_ctx and self.step_num % self.freq != 0:
            return
        if not exit_ctx:
            curr_step = self.step_num
            dir_name = f"iteration_{curr_step}"
        else:
            # dump as iteration_0_exit if OOM at iter 1
            curr_step = self.step_num - 1
            dir_name = f"iteration_{curr_step}_exit"
        curr_snapshot_dir = os.path.join(self.snapshot_dir, dir_name)
        os.makedirs(curr_snapshot_dir, exist_ok=True)
        rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
        logger.info(f"Dumping memory snapshot at step {curr_step}")
        begin = time.monotonic()
        with open(f"{curr_snapshot_dir}/rank{rank}_memory_snapshot.pickle", "wb") as output:
            pickle.dump(torch.cuda.memory._snapshot(), output)
        logger.info(f"Finished dumping memory snapshot in {time.monotonic() - begin:.2f} seconds")
        if torch.distributed.is_initialized():
            torch.distributed.barrier()


DeviceMemStats = namedtuple("DeviceMemStats", ["max_active_gib", "max_active_pct", "max_reserved_gib",
                                               "max_reserved_pct", "num_alloc_retries", "num_ooms"])


class DeviceMemoryMonitor:
    def __init__(self, device: str = "cuda:0"):
        self.device = torch.device(device)  # device object
        self.device_name = torch.cuda.get_device_name(self.device)
        self.device_index = torch.cuda.current_device()
        self.device_capacity = torch.cuda.get_device_properties(self.device).total_memory
        self.device_capacity_gib = self._to_gib(self.device_capacity)
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.empty_cache()

    def _to_gib(self, memory_in_bytes):
        # NOTE: GiB (gibibyte) is 1024, vs GB is 1000
        return memory_in_bytes / (1024 * 1024 * 1024)

    def _to_pct(self, memory):
        return 100 * memory / self.device_capacity

    def get_peak_stats(self):
        device_info = torch.cuda.memory_stats(self.device)

        max_active = device_info["active_bytes.all.peak"]
        max_active_gib = self._to_gib(max_active)
        max_active_pct = self._to_pct(max_active)

        max_reserved = device_info["reserved_bytes.all.peak"]
        max_reserved_gib = self._to_gib(max_reserved)
        max_reserved_pct = self._to_pct(max_reserved)

        num_retries = device_info["num_alloc_retries"]
        num_ooms = device_info["num_ooms"]
        if num_retries > 0:
            logger.warning(f"{num_retries} allocator retries (cudaMalloc retries), consider smaller batches")
        if num_ooms > 0:
            logger.warning(f"{num_ooms} OOM errors thrown")
        return DeviceMemStats(max_active_gib, max_active_pct, max_reserved_gib, max_reserved_pct, num_retries,
                              num_ooms)

    def reset_peak_stats(self):
        torch.cuda.reset_peak_memory_stats(self.device)


def get_peak_flops(device_name: str) -> float:
    """Dense bf16 peak of the accelerator, used for MFU."""
    if "A100" in device_name:
        # data from https://www.nvidia.com/en-us/data-center/a100/
        return 312e12
    elif "H100" in device_name:
        # data from https://www.nvidia.com/en-us/data-center/h100/
        return 989e12 if "SXM" in device_name or "HBM3" in device_name else 756e12
    elif "A10G" in device_name:
        return 125e12
    else:  # for other GPU types, assume A100
        logger.warning(f"Peak flops undefined for: {device_name}, fallback to A100")
        return 312e12


@contextlib.contextmanager
def nvtx_range(msg: str):
    torch.cuda.nvtx.range_push(msg)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def timed(fn, *args, warmup: int = 3, iters: int = 20, **kwargs):
    """Average device time of fn(*args) in milliseconds, measured with events."""
    for _ in range(warmup):
        fn(*args, **kwargs)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn(*args, **kwargs)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def nsys_capture(model, batch, steps: int = 5):
    """Run a few steps with autograd ops annotated as NVTX ranges (use under `nsys profile -c cudaProfilerApi`)."""
    torch.cuda.cudart().cudaProfilerStart()
    with torch.autograd.profiler.emit_nvtx():
        for i in range(steps):
            with nvtx_range(f"step_{i}"):
                loss = model(**batch).loss
                loss.backward()
    torch.cuda.cudart().cudaProfilerStop()
