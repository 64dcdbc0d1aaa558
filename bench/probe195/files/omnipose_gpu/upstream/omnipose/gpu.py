"""Device helpers for omnipose.

Most of omnipose runs in torch on whatever device the user asked for. These helpers
decide which device that is, and keep the CUDA / Apple-silicon special cases in one
place so the rest of the code can just pass ``device`` around.
"""
import os
import platform
import logging

import numpy as np
import torch

omnipose_logger = logging.getLogger(__name__)

# Apple silicon: torch has the "mps" backend but a few ops (e.g. some scatter
# reductions) are still missing, so we fall back to CPU for those.
ARM = 'arm' in platform.processor() and platform.system() == 'Darwin'

torch_GPU = torch.device('mps') if ARM else torch.device('cuda')
torch_CPU = torch.device('cpu')

# optional: GPU memory reporting through NVML
try:
    import GPUtil
    GPUTIL_ENABLED = True
except ImportError:
    GPUTIL_ENABLED = False


def get_device(gpu_number=0, use_torch=True):
    """Return (device, gpu_available) for the requested GPU index.

    On Apple silicon this returns the mps device; otherwise ``cuda:<gpu_number>``
    if CUDA works, falling back to the CPU.
    """
    if not use_torch:
        raise ValueError('omnipose only supports the torch backend')
    if ARM:
        if torch.backends.mps.is_available():
            return torch.device('mps'), True
        return torch_CPU, False

    if torch.cuda.is_available():
        n_devices = torch.cuda.device_count()
        if gpu_number >= n_devices:
            omnipose_logger.warning(
                f'requested GPU {gpu_number} but only {n_devices} visible; using GPU 0')
            gpu_number = 0
        device = torch.device(f'cuda:{gpu_number}')
        return device, True
    return torch_CPU, False


def use_gpu(gpu_number=0, use_torch=True):
    """Check whether a working GPU is available for torch."""
    if use_torch:
        return _use_gpu_torch(gpu_number)
    else:
        raise ValueError('cellpose_omni only runs with torch')


def _use_gpu_torch(gpu_number=0):
    try:
        if ARM:
            device = torch.device('mps')
        else:
            device = torch.device('cuda:' + str(gpu_number))
        _ = torch.zeros([1, 2, 3]).to(device)
        omnipose_logger.info('** TORCH GPU version installed and working. **')
        return True
    except Exception as e:
        omnipose_logger.info('TORCH GPU version not installed/working: %s' % e)
        return False


def assign_device(use_torch=True, gpu=False, device=0):
    """Resolve the ``gpu`` flag / ``device`` index from the CLI into a torch.device."""
    if isinstance(device, str):
        if device == 'mps':
            gpu_number = 0
        elif device.isdigit():
            gpu_number = int(device)
        else:
            gpu_number = 0
    else:
        gpu_number = int(device) if device is not None else 0

    if gpu and use_gpu(gpu_number, use_torch=True):
        device, gpu = get_device(gpu_number)
        omnipose_logger.info(f'>>>> using GPU: {device}')
    else:
        device = torch_CPU
        omnipose_logger.info('>>>> using CPU')
        gpu = False
    return device, gpu


def empty_cache():
    """Release cached allocator blocks (useful between large 3D volumes)."""
    if ARM:
        torch.mps.empty_cache()
    else:
        torch.cuda.empty_cache()


def gpu_memory_report(device=None):
    """Return a short string describing memory on the current GPU."""
    if device is None or device.type == 'cpu':
        return 'CPU'
    if device.type == 'mps':
        return 'MPS (memory stats not available)'
    idx = device.index if device.index is not None else 0
    allocated = torch.cuda.memory_allocated(idx) / 1024 ** 3
    reserved = torch.cuda.memory_reserved(idx) / 1024 ** 3
    name = torch.cuda.get_device_name(idx)
    report = f'{name}: {allocated:.2f} GB allocated / {reserved:.2f} GB reserved'
    if GPUTIL_ENABLED:
        try:
            g = GPUtil.getGPUs()[idx]
            report += f' | load {g.load * 100:.0f}% | {g.memoryUsed:.0f}/{g.memoryTotal:.0f} MB'
        except Exception:
            pass
    return report


def torch_and(*tensors):
    """Logical and over a list of boolean tensors (mps does not support torch.logical_and on bool)."""
    out = tensors[0]
    for t in tensors[1:]:
        out = out & t
    return out


def to_device(x, device=torch_GPU, dtype=torch.float32):
    """numpy -> torch on the given device (no-op for tensors already there)."""
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x).to(device=device, dtype=dtype)
    return x.to(device=device, dtype=dtype)


def from_device(X):
    return X.detach().cpu().numpy()


def set_seed(seed=0, deterministic=False):
    """Seed numpy and torch; optionally make cuDNN deterministic (slower)."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # safe to call without a GPU, it is lazy
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True


def default_batch_size(device, default=8):
    """Guess a tile batch size from free GPU memory (224x224 tiles, ~150 MB each in fp32)."""
    if device is None or device.type != 'cuda':
        return default
    try:
        free, total = torch.cuda.mem_get_info(device)
    except Exception:
        return default
    n = int(free / (150 * 1024 ** 2))
    return int(np.clip(n, 1, 64))
