"""Small helpers to find idle GPUs before launching vLLM workers on a shared node."""
import os
import subprocess
import time

import pynvml

from utils.logging_utils import get_logger

logger = get_logger(__name__)

MIN_FREE_MB = 60 * 1024  # a 7B policy + KV cache for 16 completions needs ~60 GB


def _query_nvml():
    pynvml.nvmlInit()
    try:
        n = pynvml.nvmlDeviceGetCount()
        stats = []
        for i in range(n):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            stats.append({"index": i, "free_mb": mem.free // (1024 * 1024), "total_mb": mem.total // (1024 * 1024)})
        return stats
    finally:
        pynvml.nvmlShutdown()


def _query_smi():
    """Fallback when NVML is unavailable inside some containers."""
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=index,memory.free,memory.total", "--format=csv,noheader,nounits"],
        text=True,
    )
    stats = []
    for line in out.strip().splitlines():
        idx, free, total = [x.strip() for x in line.split(",")]
        stats.append({"index": int(idx), "free_mb": int(free), "total_mb": int(total)})
    return stats


def gpu_stats():
    try:
        return _query_nvml()
    except pynvml.NVMLError as e:
        logger.warning(f"NVML query failed ({e}); falling back to nvidia-smi")
        return _query_smi()


def get_free_gpus(min_free_mb=MIN_FREE_MB):
    return [s["index"] for s in gpu_stats() if s["free_mb"] >= min_free_mb]


def wait_for_gpus(num_gpus, min_free_mb=MIN_FREE_MB, poll_seconds=60, max_wait_hours=12):
    """Block until `num_gpus` devices have at least `min_free_mb` free memory."""
    deadline = time.time() + max_wait_hours * 3600
    while True:
        free = get_free_gpus(min_free_mb)
        if len(free) >= num_gpus:
            logger.info(f"using GPUs {free[:num_gpus]}")
            return free[:num_gpus]
        if time.time() > deadline:
            raise TimeoutError(f"only {len(free)} free GPUs after {max_wait_hours}h")
        logger.info(f"{len(free)}/{num_gpus} GPUs free, sleeping {poll_seconds}s")
        time.sleep(poll_seconds)


def visible_device_list():
    """Indices the current process is allowed to use (respects an outer CUDA_VISIBLE_DEVICES)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return [int(x) for x in env.split(",") if x.strip() != ""]
    return [s["index"] for s in gpu_stats()]
