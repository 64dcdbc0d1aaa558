import gc
from typing import Optional

import torch


def is_cuda_available() -> bool:
    return torch.cuda.is_available()


def get_torch_device_name() -> str:
    """Return the device name based on GPU availability."""
    return "cuda" if is_cuda_available() else "cpu"


def get_torch_device() -> torch.device:
    """Checks if CUDA is available on the machine and returns PyTorch device."""
    return torch.device(get_torch_device_name())


def empty_cuda_cache() -> None:
    """Empties the CUDA cache."""
    gc.collect()
    if is_cuda_available():
        torch.cuda.empty_cache()


def get_device_count(default: Optional[int] = None) -> int:
    """Number of local accelerators, used to size the per-run worker pool."""
    if is_cuda_available():
        return torch.cuda.device_count()
    return default if default is not None else 0
