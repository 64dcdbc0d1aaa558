"""
Small helpers for picking a GPU, seeding and memory logging, shared by the training and
evaluation scripts in regkit.

Typical use at the top of a script:

    from regkit.utils.gpu_utils import setup_device, seed_everything
    device = setup_device(args.gpu)          # 'auto' picks the GPU with the most free memory
    seed_everything(args.seed, deterministic=args.deterministic)
"""

import logging
import os
import random

import numpy as np
import torch

logger = logging.getLogger(__name__)

try:
    import pynvml
    _HAS_NVML = True
except ImportError:  # nvidia-ml-py not installed
    pynvml = None
    _HAS_NVML = False


def get_free_gpu(min_free_gb=4.0):
    """Index of the GPU with the most free memory (via NVML), or None if none qualifies."""
    if not _HAS_NVML:
        return 0 if torch.cuda.is_available() else None
    pynvml.nvmlInit()
    try:
        best, best_free = None, 0
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            info = pynvml.nvmlDeviceGetMemoryInfo(handle)
            free_gb = info.free / 2 ** 30
            if free_gb >= min_free_gb and free_gb > best_free:
                best, best_free = i, free_gb
        return best
    finally:
        pynvml.nvmlShutdown()


def setup_device(gpu="auto", min_free_gb=4.0):
    """
    Resolve a --gpu argument to a torch.device.

    gpu: 'auto' | 'cpu' | an integer index (as int or str) | a comma-separated list, in which case
         CUDA_VISIBLE_DEVICES is restricted to that list and the first entry is used.
    """
    if gpu is None or str(gpu).lower() == "cpu" or not torch.cuda.is_available():
        logger.info("running on CPU")
        return torch.device("cpu")

    gpu = str(gpu)
    if gpu == "auto":
        idx = get_free_gpu(min_free_gb)
        if idx is None:
            logger.warning("no GPU with %.1f GB free, falling back to CPU", min_free_gb)
            return torch.device("cpu")
    elif "," in gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
        idx = 0
    else:
        idx = int(gpu)

    device = torch.device("cuda", idx)
    torch.cuda.set_device(device)
    logger.info("running on %s (%s)", device, torch.cuda.get_device_name(device))
    return device


def seed_everything(seed, deterministic=False):
    """Seed python, numpy and torch (CPU and all GPUs)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        # needed for deterministic cuBLAS matmuls (CUDA >= 10.2)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        torch.backends.cudnn.benchmark = True


def gpu_memory_str(device=None):
    """Short 'alloc / reserved / peak' memory string for log lines."""
    if device is None or torch.device(device).type != "cuda":
        return "cpu"
    alloc = torch.cuda.memory_allocated(device) / 2 ** 30
    reserved = torch.cuda.memory_reserved(device) / 2 ** 30
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
    return f"{alloc:.2f}/{reserved:.2f}/{peak:.2f} GiB"


def to_device(batch, device, non_blocking=True):
    """Recursively move tensors in (nested) dicts / lists / tuples to `device`."""
    if torch.is_tensor(batch):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, non_blocking) for v in batch)
    return batch


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def gpu_info():
    """Dict with basic info about the visible GPUs, written next to checkpoints."""
    info = {"cuda_available": torch.cuda.is_available(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}
    if torch.cuda.is_available():
        info["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info
