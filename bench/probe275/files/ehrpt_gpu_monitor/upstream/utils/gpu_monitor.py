"""Environment logging and GPU memory tracking for long pretraining runs."""
import json
import os
import platform
import socket
import subprocess
import sys

import torch

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # no driver / running on CPU-only CI
    _HAS_NVML = False


def _nvidia_smi():
    """Return `nvidia-smi` query output as a list of dicts (one per GPU)."""
    fields = ["index", "name", "driver_version", "memory.total", "memory.used", "utilization.gpu",
              "temperature.gpu"]
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
        universal_newlines=True)
    rows = []
    for line in out.strip().splitlines():
        rows.append(dict(zip(fields, [x.strip() for x in line.split(",")])))
    return rows


def log_environment(path=None):
    """Collect versions / hardware info into a dict (and optionally write it as JSON)."""
    info = {
        "host": socket.gethostname(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "num_gpus": torch.cuda.device_count(),
        "gpus": [],
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("CUDA_", "NCCL_", "OMP_", "MASTER_", "WORLD_SIZE", "RANK", "LOCAL_RANK"))},
    }
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        info["gpus"].append({
            "index": i,
            "name": props.name,
            "total_memory_gb": round(props.total_memory / 2 ** 30, 1),
            "capability": "{}.{}".format(props.major, props.minor),
            "multi_processor_count": props.multi_processor_count,
        })
    info["nvidia_smi"] = _nvidia_smi()
    if path:
        with open(path, "w") as f:
            json.dump(info, f, indent=2)
    return info


def gpu_utilization(index=None):
    """Percent utilisation of the current (or given) GPU via NVML; -1 if unavailable."""
    if not _HAS_NVML:
        return -1
    if index is None:
        index = torch.cuda.current_device()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


class MemoryTracker:
    """Tracks allocated / reserved / peak CUDA memory between snapshots."""

    def __init__(self, enabled=True, device=None):
        self.enabled = enabled and torch.cuda.is_available()
        self.device = device

    def snapshot(self, reset_peak=True):
        if not self.enabled:
            return {}
        gib = 2 ** 30
        stats = {
            "mem_alloc_gb": round(torch.cuda.memory_allocated(self.device) / gib, 2),
            "mem_reserved_gb": round(torch.cuda.memory_reserved(self.device) / gib, 2),
            "mem_peak_gb": round(torch.cuda.max_memory_allocated(self.device) / gib, 2),
            "gpu_util": gpu_utilization(),
        }
        if reset_peak:
            torch.cuda.reset_peak_memory_stats(self.device)
        return stats

    def summary(self):
        if not self.enabled:
            return ""
        return torch.cuda.memory_summary(self.device, abbreviated=True)
