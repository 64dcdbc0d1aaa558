"""GPU helpers for omnipose: device selection, memory housekeeping and a few torch utilities.

Most of omnipose runs on torch tensors so that the same code works on CUDA, Apple silicon (MPS)
and CPU.  Anything platform specific should live in this module.
"""
import os
import platform
import logging

import numpy as np
import torch

omnipose_logger = logging.getLogger(__name__)

ARM = "arm" in platform.processor()  # the backend chack for apple silicon does not work on intel macs

try:
    ARM = torch.backends.mps.is_available() and ARM
    torch_GPU = torch.device("mps" if ARM else "cuda")
    torch_CPU = torch.device("cpu")
except Exception as e:
    ARM = False
    torch_GPU = torch.device("cuda")
    torch_CPU = torch.device("cpu")
    omnipose_logger.warning("Error in checking for MPS backend: %s", e)

# cudnn autotuning: the network input sizes are fixed tiles (224 x 224 by default)
torch.backends.cudnn.benchmark = True


def get_device(gpu_number=0, use_torch=True):
    """Return (device, gpu_available) for the preferred accelerator."""
    if ARM:
        device = torch_GPU
        gpu = True
    elif torch.cuda.is_available():
        device = torch.device("cuda:{}".format(gpu_number))
        gpu = True
    else:
        device = torch_CPU
        gpu = False
    return device, gpu


def use_gpu(gpu_number=0, use_torch=True):
    """Check if gpu works"""
    if use_torch:
        return _use_gpu_torch(gpu_number)
    raise ValueError("omnipose only supports PyTorch")


def _use_gpu_torch(gpu_number=0):
    try:
        device = torch.device("mps") if ARM else torch.device("cuda:" + str(gpu_number))
        _ = torch.zeros([1, 2, 3]).to(device)
        omnipose_logger.info("** TORCH GPU version installed and working. **")
        return True
    except Exception:
        omnipose_logger.info("TORCH GPU version not installed/working.")
        return False


def empty_cache():
    """Release cached allocator blocks (CUDA or MPS)."""
    if ARM:
        torch.mps.empty_cache()
    else:
        torch.cuda.empty_cache()


def gpu_memory_report(device=None):
    """Return a dict of allocated / reserved / total memory in GB for logging."""
    if device is None:
        device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    total = props.total_memory / 1024**3
    allocated = torch.cuda.memory_allocated(device) / 1024**3
    reserved = torch.cuda.memory_reserved(device) / 1024**3
    return {
        "name": props.name,
        "total_gb": round(total, 2),
        "allocated_gb": round(allocated, 2),
        "reserved_gb": round(reserved, 2),
        "sm_count": props.multi_processor_count,
    }


def suggest_batch_size(tile_size=224, nchan=2, device=None, safety=0.6):
    """Rough batch size for tiled inference, scaled by free device memory."""
    if device is not None and device.type == "cpu":
        return 8
    free, total = torch.cuda.mem_get_info()
    bytes_per_tile = tile_size * tile_size * (nchan + 4) * 4 * 40  # activations, empirically ~40x
    n = int(free * safety // bytes_per_tile)
    return int(np.clip(n, 1, 256))


def torch_and(a, b):
    """Element-wise logical and that also works on MPS (no bool kernels on older torch)."""
    if ARM:
        return (a.int() & b.int()).bool()
    return torch.logical_and(a, b)


def to_device(x, device, dtype=torch.float32):
    """Move numpy arrays or tensors to device, honouring MPS' lack of float64."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if device.type == "mps" and x.dtype == torch.float64:
        x = x.float()
    return x.to(device=device, dtype=dtype, non_blocking=True)


def from_device(X):
    """Detach, move to CPU and convert to numpy."""
    return X.detach().cpu().numpy()


def set_seed(seed=0):
    """Seed numpy / torch / CUDA generators for reproducible flows."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)


def parse_device_arg(value):
    """Turn a CLI value ('0', 'cuda:1', 'mps', 'cpu') into a torch.device."""
    if value is None:
        return get_device()[0]
    value = str(value)
    if value.isdigit():
        return torch.device("cuda", int(value))
    return torch.device(value)
