"""
Helpers to pick a device on our shared lab servers.

Typical use at the top of a training script, *before* torch initialises CUDA:

    from utils.gpu_select import auto_select_gpu, get_device
    auto_select_gpu(min_free_mb=12000)     # sets CUDA_VISIBLE_DEVICES
    device = get_device()
"""
import logging
import os
import subprocess

import torch

logger = logging.getLogger(__name__)

try:
    import pynvml
    _HAS_NVML = True
except ImportError:  # nvidia-ml-py not installed
    _HAS_NVML = False


def _query_free_memory_nvml():
    pynvml.nvmlInit()
    try:
        n = pynvml.nvmlDeviceGetCount()
        free = []
        for i in range(n):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            free.append((i, mem.free // 2 ** 20, util))
        return free
    finally:
        pynvml.nvmlShutdown()


def _query_free_memory_smi():
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=index,memory.free,utilization.gpu",
         "--format=csv,noheader,nounits"], text=True)
    free = []
    for line in out.strip().splitlines():
        idx, mem, util = [int(x) for x in line.split(",")]
        free.append((idx, mem, util))
    return free


def query_gpus():
    """[(index, free_MB, util_percent), ...] for every GPU on the host."""
    if _HAS_NVML:
        try:
            return _query_free_memory_nvml()
        except pynvml.NVMLError as e:
            logger.warning("NVML query failed (%s), falling back to nvidia-smi", e)
    return _query_free_memory_smi()


def auto_select_gpu(min_free_mb=8000, max_util=30, n=1):
    """Restrict this process to the n emptiest GPUs.

    Does nothing if CUDA_VISIBLE_DEVICES is already set (e.g. by SLURM).
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        logger.info("visible devices already restricted to %s", visible)
        return visible
    try:
        gpus = query_gpus()
    except (OSError, subprocess.CalledProcessError) as e:
        logger.warning("could not query GPUs (%s); using default device", e)
        return None
    ok = [g for g in gpus if g[1] >= min_free_mb and g[2] <= max_util]
    ok.sort(key=lambda g: -g[1])
    if len(ok) < n:
        raise RuntimeError("need {} free GPU(s) with >= {} MB, found: {}".format(n, min_free_mb, gpus))
    chosen = ",".join(str(g[0]) for g in ok[:n])
    os.environ["CUDA_VISIBLE_DEVICES"] = chosen
    logger.info("selected GPU(s) %s", chosen)
    return chosen


def get_device(prefer_gpu=True):
    if prefer_gpu and torch.cuda.is_available():
        return torch.device("cuda:0")
    if prefer_gpu and getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def describe(device):
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        return "{} ({:.1f} GB, sm_{}{})".format(p.name, p.total_memory / 2 ** 30, p.major, p.minor)
    return str(device)
