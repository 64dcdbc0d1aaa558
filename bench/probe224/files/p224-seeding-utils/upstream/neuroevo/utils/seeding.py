"""Seeding, RNG-state checkpointing and device parsing helpers.

Evolutionary runs are long and are frequently pre-empted on shared clusters;
to resume bit-for-bit we store every RNG state (Python, NumPy, torch CPU and
all CUDA devices) in the checkpoint together with the search distribution.
"""

from __future__ import annotations

import contextlib
import os
import random
from typing import Any, Dict, Optional, Union

import numpy as np
import torch

DeviceLike = Union[str, int, torch.device, None]


def seed_everything(seed: int, deterministic: bool = False) -> int:
    """Seeds python, numpy and torch (CPU + all GPUs). Returns the seed."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        # cuBLAS needs a fixed workspace for deterministic GEMMs (CUDA >= 10.2)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed


def worker_init_fn(worker_id: int):
    """DataLoader worker seeding (each worker gets a distinct numpy/python seed)."""
    s = torch.initial_seed() % 2**32
    np.random.seed(s + worker_id)
    random.seed(s + worker_id)


def get_rng_state() -> Dict[str, Any]:
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all(),
    }


def set_rng_state(state: Dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state.get("cuda"):
        torch.cuda.set_rng_state_all(state["cuda"])


def make_generator(seed: Optional[int], device: DeviceLike = "cpu") -> torch.Generator:
    g = torch.Generator(device=parse_device(device))
    if seed is not None:
        g.manual_seed(seed)
    else:
        g.seed()
    return g


def parse_device(device: DeviceLike) -> torch.device:
    """Accepts "cpu", "gpu", "cuda", "cuda:1", 1, torch.device or None (auto)."""
    if device is None or device == "auto":
        return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    if isinstance(device, torch.device):
        return device
    if isinstance(device, int):
        return torch.device("cuda", device)
    if device == "gpu":
        return torch.device("cuda")
    return torch.device(device)


def describe_device(device: torch.device) -> str:
    """Human-readable device description for log headers."""
    if device.type == "cpu":
        return f"cpu ({os.cpu_count()} threads)"
    return f"{device} ({torch.cuda.get_device_name(device)})"


def autocast_ctx(device: torch.device, enabled: bool = True, dtype: torch.dtype = torch.bfloat16):
    """Mixed-precision context for policy forward passes on the given device."""
    if not enabled:
        return contextlib.nullcontext()
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=dtype)
    if device.type == "cpu":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def maybe_compile(fn, device: torch.device, mode: str = "default"):
    """torch.compile only where it pays off (Volta+ GPUs); eager elsewhere."""
    if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 7:
        return torch.compile(fn, mode=mode)
    return fn
