# Copyright (c) OpenMMLab. All rights reserved.
from typing import Optional

import torch

try:
    import torch_mlu  # noqa: F401
    IS_MLU_AVAILABLE = hasattr(torch, 'is_mlu_available') and \
        torch.is_mlu_available()
except Exception:
    IS_MLU_AVAILABLE = False


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
    try:
        return hasattr(torch.backends,
                       'mps') and torch.backends.mps.is_available()
    except Exception:
        return False


def is_dipu_available() -> bool:
    """Returns True if the DeepLink deeplink.framework (dipu) is installed.

    DIPU registers itself as a replacement for the CUDA runtime, so the
    ordinary ``cuda`` code paths below are used for it as well.
    """
    try:
        import torch_dipu  # noqa: F401
    except ImportError:
        return False
    return True


def get_device() -> str:
    """Returns the currently existing device type.

    The order matters: on a host that has both a GPU and an accelerator
    plugin installed, the GPU wins.

    Returns:
        str: cuda | mlu | mps | cpu.
    """
    if is_cuda_available():
        return 'cuda'
    elif is_mlu_available():
        return 'mlu'
    elif is_mps_available():
        return 'mps'
    else:
        return 'cpu'


def get_device_count() -> int:
    """Number of accelerator devices visible to this process.

    Used by the launchers and by ``auto_scale_lr`` to compute the real batch
    size when ``WORLD_SIZE`` is not exported.
    """
    device = get_device()
    if device == 'cuda':
        return torch.cuda.device_count()
    elif device == 'mlu':
        return torch.mlu.device_count()
    return 1
