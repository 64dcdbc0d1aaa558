#!/usr/bin/env python3

import math
import random
from contextlib import contextmanager
from typing import Generator, Optional

import numpy as np
import torch


def approx_equal(self: torch.Tensor, other: torch.Tensor, epsilon: float = 1e-4) -> bool:
    """
    Determines if two tensors are approximately equal

    Args:
        - self: tensor
        - other: tensor

    Returns:
        - bool
    """
    if self.size() != other.size():
        raise RuntimeError(
            "Size mismatch between self ({self}) and other ({other})".format(self=self.size(), other=other.size())
        )
    return torch.max((self - other).abs()).item() <= epsilon


def get_cuda_max_memory_allocations() -> torch.LongTensor:
    """Get the `max_memory_allocated` for each cuda device"""
    return torch.tensor([torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count())])


@contextmanager
def least_used_cuda_device() -> Generator:
    """Contextmanager for automatically selecting the cuda device
    with the least allocated memory"""
    mem_allocs = get_cuda_max_memory_allocations()
    least_used_device = torch.argmin(mem_allocs).item()
    with torch.cuda.device(least_used_device):
        yield


def set_seed(seed: int = 0, deterministic: bool = False) -> None:
    """Seed python, numpy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)


def sine_regression_data(
    n: int = 11, noise: float = 0.04, device: Optional[torch.device] = None, dtype: torch.dtype = torch.float
):
    """The 1-D toy problem used by most of the example tests."""
    train_x = torch.linspace(0, 1, n, device=device, dtype=dtype)
    train_y = torch.sin(train_x * (2 * math.pi)) + noise * torch.randn_like(train_x)
    test_x = torch.linspace(0, 1, 51, device=device, dtype=dtype)
    test_y = torch.sin(test_x * (2 * math.pi))
    return train_x, train_y, test_x, test_y


def mean_abs_error(pred: torch.Tensor, target: torch.Tensor) -> float:
    return torch.mean(torch.abs(pred - target)).item()
