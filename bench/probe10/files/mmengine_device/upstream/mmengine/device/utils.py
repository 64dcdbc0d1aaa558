# Copyright (c) OpenMMLab. All rights reserved.
"""Helpers that tell the rest of the library which accelerator it runs on.

Everything that needs to know "where do tensors go" (the runner, the
optimizer wrappers, the logger's memory column, ``MMDistributedDataParallel``)
asks this module instead of calling ``torch.cuda`` directly, so adding a new
backend should only ever touch this file and ``mmengine/dist/utils.py``.
"""
import os
from collections import abc
from typing import Any, Optional, Sequence, Union

import torch

try:
    import torch_mlu  # noqa: F401
    IS_MLU_AVAILABLE = hasattr(torch, 'is_mlu_available') and \
        torch.is_mlu_available()
except Exception:
    IS_MLU_AVAILABLE = False

try:
    import torch_dipu  # noqa: F401
    IS_DIPU_AVAILABLE = True
except Exception:
    IS_DIPU_AVAILABLE = False

try:
    import torch_musa  # noqa: F401
    IS_MUSA_AVAILABLE = True
except Exception:
    IS_MUSA_AVAILABLE = False

DeviceType = Union[str, torch.device]


def get_max_cuda_memory(device: Optional[torch.device] = None) -> int:
    """Returns the maximum GPU memory occupied by tensors in megabytes (MB) for
    a given device. By default, this returns the peak allocated memory since
    the beginning of this program.

    Args:
        device (torch.device, optional): selected device. Returns
            statistic for the current device, given by
            :func:`~torch.cuda.current_device`, if ``device`` is None.
            Defaults to None.

    Returns:
        int: The maximum GPU memory occupied by tensors in megabytes
        for a given device.
    """
    mem = torch.cuda.max_memory_allocated(device=device)
    mem_mb = torch.tensor([int(mem) // (1024 * 1024)],
                          dtype=torch.int,
                          device=device)
    torch.cuda.reset_peak_memory_stats()
    return int(mem_mb.item())


def get_max_memory_mb(device: Optional[torch.device] = None) -> Optional[int]:
    """Peak memory of whatever accelerator is in use, or None on CPU/MPS.

    Used by ``LogProcessor`` to fill the ``memory`` column of the training
    log. Returning None makes the column disappear instead of printing 0.
    """
    if is_cuda_available():
        return get_max_cuda_memory(device)
    if is_musa_available():
        mem = torch.musa.max_memory_allocated(device=device)
        torch.musa.reset_peak_memory_stats()
        return int(mem) // (1024 * 1024)
    return None


def is_cuda_available() -> bool:
    """Returns True if cuda devices exist."""
    return torch.cuda.is_available()


def is_mlu_available() -> bool:
    """Returns True if Cambricon PyTorch and mlu devices exist."""
    return IS_MLU_AVAILABLE


def is_mps_available() -> bool:
    """Return True if mps devices exist.

    It's specialized for mac m1 chips and require torch version 1.12 or higher.
    """
    return hasattr(torch.backends, 'mps') and torch.backends.mps.is_available()


def is_dipu_available() -> bool:
    return IS_DIPU_AVAILABLE


def is_musa_available() -> bool:
    return IS_MUSA_AVAILABLE


def get_device() -> str:
    """Returns the currently existing device type.

    Returns:
        str: cuda | mlu | mps | musa | cpu.
    """
    if is_cuda_available():
        return 'cuda'
    elif is_mlu_available():
        return 'mlu'
    elif is_mps_available():
        return 'mps'
    elif is_dipu_available():
        return 'dipu'
    elif is_musa_available():
        return 'musa'
    else:
        return 'cpu'


def get_device_count(device_type: Optional[str] = None) -> int:
    """Number of visible devices of ``device_type`` (default: the current
    device type). CPU and MPS count as a single device."""
    device_type = device_type or get_device()
    if device_type in ('cpu', 'mps'):
        return 1
    module = getattr(torch, device_type, None)
    if module is None or not hasattr(module, 'device_count'):
        raise RuntimeError(f'Unknown device type {device_type!r}')
    return module.device_count()


def canonical_device(device: DeviceType) -> torch.device:
    """Turn ``'cuda'``, ``'cuda:1'``, ``1`` or a :class:`torch.device` into a
    fully indexed :class:`torch.device` of the current backend."""
    if isinstance(device, int):
        return torch.device(get_device(), device)
    device = torch.device(device)
    if device.type != 'cpu' and device.index is None:
        module = getattr(torch, device.type)
        return torch.device(device.type, module.current_device())
    return device


def to_device(data: Any, device: DeviceType, non_blocking: bool = False) -> Any:
    """Recursively move tensors in ``data`` (dicts, lists, tuples, namedtuples)
    to ``device``. Non-tensor leaves are returned unchanged."""
    if isinstance(data, torch.Tensor):
        return data.to(device, non_blocking=non_blocking)
    if isinstance(data, abc.Mapping):
        return type(data)(
            {k: to_device(v, device, non_blocking)
             for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, '_fields'):
        return type(data)(*(to_device(v, device, non_blocking) for v in data))
    if isinstance(data, abc.Sequence) and not isinstance(data, str):
        return type(data)(to_device(v, device, non_blocking) for v in data)
    return data


def get_visible_device_env() -> Optional[str]:
    """Name of the environment variable that restricts visible devices for
    the current backend, used by the launcher when ``gpu_ids`` is given."""
    device = get_device()
    if device == 'cuda':
        return 'CUDA_VISIBLE_DEVICES'
    if device == 'mlu':
        return 'MLU_VISIBLE_DEVICES'
    if device == 'musa':
        return 'MUSA_VISIBLE_DEVICES'
    return None


def set_visible_devices(ids: Sequence[int]) -> None:
    """Export ``ids`` through the backend's visibility variable so that
    freshly spawned workers only see those devices."""
    env = get_visible_device_env()
    if env is None:
        return
    os.environ[env] = ','.join(str(i) for i in ids)


def empty_device_cache() -> None:
    """Release cached blocks of the current backend's allocator (between
    validation and training, for example)."""
    device = get_device()
    if device == 'cuda':
        torch.cuda.empty_cache()
    elif device == 'musa':
        torch.musa.empty_cache()
    elif device == 'mps':
        torch.mps.empty_cache()
