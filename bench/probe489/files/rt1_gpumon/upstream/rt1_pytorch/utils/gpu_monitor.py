"""Tiny NVML wrapper used by the training loop to print GPU utilisation / memory."""
import os
import subprocess

import pynvml


class GPUMonitor:
    def __init__(self, local_rank: int = 0):
        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            physical_index = int(visible.split(",")[local_rank])
        else:
            physical_index = local_rank
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(physical_index)
        self.name = pynvml.nvmlDeviceGetName(self.handle)

    def query(self) -> dict:
        util = pynvml.nvmlDeviceGetUtilizationRates(self.handle)
        mem = pynvml.nvmlDeviceGetMemoryInfo(self.handle)
        return {
            "util": util.gpu,
            "mem_used_gb": mem.used / 1024**3,
            "mem_total_gb": mem.total / 1024**3,
        }

    def close(self):
        pynvml.nvmlShutdown()


def driver_summary() -> str:
    """One-line summary of the driver / GPUs, written into the run directory for bookkeeping."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            text=True,
        )
        return out.strip().replace("\n", " | ")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
