"""GPU helpers shared by the avdiar tools.

The batch tools process hundreds of episodes on shared 8-GPU boxes, so they
pick the card with the most free memory instead of always using cuda:0.
"""

import os
import shutil
import logging
import subprocess
from typing import List, Optional

import torch

try:
    import pynvml
    _HAS_NVML = True
except ImportError:  # nvidia-ml-py not installed
    pynvml = None
    _HAS_NVML = False

logger = logging.getLogger(__name__)

_NVML_READY = False


def _nvml_init():
    global _NVML_READY
    if _HAS_NVML and not _NVML_READY:
        try:
            pynvml.nvmlInit()
            _NVML_READY = True
        except pynvml.NVMLError as e:
            logger.warning("NVML init failed: %s", e)
    return _NVML_READY


def visible_gpu_ids() -> List[int]:
    """Physical ids of the GPUs this process may use (honours CUDA_VISIBLE_DEVICES)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and env.strip() != "":
        return [int(x) for x in env.split(",") if x.strip() != ""]
    return list(range(torch.cuda.device_count()))


def free_memory_mb() -> List[int]:
    """Free memory per *visible* GPU, in MiB, in torch device order."""
    ids = visible_gpu_ids()
    if _nvml_init():
        out = []
        for i in ids:
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            out.append(pynvml.nvmlDeviceGetMemoryInfo(h).free // (1024 * 1024))
        return out
    if shutil.which("nvidia-smi"):
        res = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        allfree = [int(x) for x in res.stdout.strip().splitlines()]
        return [allfree[i] for i in ids]
    # last resort: ask the CUDA runtime (creates a context on every device)
    return [torch.cuda.mem_get_info(i)[0] // (1024 * 1024) for i in range(torch.cuda.device_count())]


def select_device(gpu: Optional[int] = None, min_free_mb: int = 4000) -> torch.device:
    """Return torch.device for `gpu`, or for the visible GPU with the most free memory.
    Falls back to CPU when no GPU is usable (e.g. on the login node)."""
    if not torch.cuda.is_available():
        logger.warning("CUDA not available, running on CPU (this will be slow)")
        return torch.device("cpu")
    if gpu is not None:
        torch.cuda.set_device(gpu)
        return torch.device(f"cuda:{gpu}")
    free = free_memory_mb()
    best = int(max(range(len(free)), key=lambda i: free[i]))
    if free[best] < min_free_mb:
        logger.warning("best GPU %d has only %d MiB free", best, free[best])
    torch.cuda.set_device(best)
    return torch.device("cuda", best)


def gpu_summary() -> str:
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return "no GPU"
    parts = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        parts.append("%d:%s(%.0fGB, sm_%d%d)" % (i, props.name, props.total_memory / 2**30, props.major, props.minor))
    return ", ".join(parts)


def supports_bf16(device: Optional[torch.device] = None) -> bool:
    """bf16 autocast needs Ampere (sm_80) or newer."""
    if device is not None and device.type == "cpu" or not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8


def autocast_dtype(device: Optional[torch.device] = None) -> torch.dtype:
    return torch.bfloat16 if supports_bf16(device) else torch.float16


def seed_everything(seed: int = 0, deterministic: bool = False):
    """Seeds python/numpy/torch. With deterministic=True the ASD scores are
    bit-identical between runs on the same card (needed for the regression tests)."""
    import random
    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)


def move_to(obj, device, non_blocking=True):
    """Recursively move tensors in nested containers to `device`."""
    if torch.is_tensor(obj):
        return obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, dict):
        return {k: move_to(v, device, non_blocking) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to(v, device, non_blocking) for v in obj)
    return obj


def release(device: Optional[torch.device] = None):
    """Give cached blocks back to the driver between long videos."""
    if device is not None and device.type == "cuda":
        with torch.cuda.device(device):
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()
