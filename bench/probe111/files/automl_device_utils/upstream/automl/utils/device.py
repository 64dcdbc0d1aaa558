"""Device helpers shared by all trial entry points.

Trials never hard-code a device: they call :func:`get_device` and pass the
result around, and use :func:`autocast` / :func:`grad_scaler` for mixed
precision so that the same trial code runs on a laptop (MPS/CPU) and on the
GPU cluster.
"""

import contextlib
import logging
import os
import random
from typing import Optional

import numpy as np
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

_DEVICE: Optional[torch.device] = None


def get_device(prefer: Optional[str] = None) -> torch.device:
    """Pick the best available device once per process.

    ``prefer`` (or the ``AUTOML_DEVICE`` env var) may force ``cpu``/``cuda``/``mps``.
    """
    global _DEVICE
    if _DEVICE is not None:
        return _DEVICE
    prefer = prefer or os.environ.get("AUTOML_DEVICE")
    if prefer:
        _DEVICE = torch.device(prefer)
    elif torch.cuda.is_available():
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        _DEVICE = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(_DEVICE)
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        _DEVICE = torch.device("mps")
    else:
        _DEVICE = torch.device("cpu")
    logger.info("using device %s", _DEVICE)
    return _DEVICE


def device_name(device: Optional[torch.device] = None) -> str:
    device = device or get_device()
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type


def set_seed(seed: int, deterministic: bool = False) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        torch.backends.cudnn.benchmark = True


def supports_bf16(device: Optional[torch.device] = None) -> bool:
    device = device or get_device()
    if device.type == "cuda" and torch.cuda.is_available():
        major, _ = torch.cuda.get_device_capability(device)
        return major >= 8
    return device.type == "cpu"


def amp_dtype(device: Optional[torch.device] = None) -> torch.dtype:
    return torch.bfloat16 if supports_bf16(device) else torch.float16


def autocast(enabled: bool = True, device: Optional[torch.device] = None):
    device = device or get_device()
    if not enabled or device.type not in ("cuda", "cpu"):
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=amp_dtype(device))


def grad_scaler(enabled: bool = True, device: Optional[torch.device] = None):
    device = device or get_device()
    use = enabled and device.type == "cuda" and amp_dtype(device) == torch.float16
    return torch.cuda.amp.GradScaler(enabled=use)


def dist_backend(device: Optional[torch.device] = None) -> str:
    device = device or get_device()
    return "nccl" if device.type == "cuda" else "gloo"


def init_distributed(timeout_min: int = 30) -> bool:
    """Initialise torch.distributed from torchrun env vars if present."""
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) <= 1:
        return False
    if dist.is_initialized():
        return True
    import datetime

    dist.init_process_group(backend=dist_backend(),
                            timeout=datetime.timedelta(minutes=timeout_min))
    logger.info("rank %d/%d initialised with %s", dist.get_rank(), dist.get_world_size(), dist.get_backend())
    return True


def memory_stats(device: Optional[torch.device] = None) -> dict:
    device = device or get_device()
    if device.type != "cuda" or not torch.cuda.is_initialized():
        return {}
    return {
        "mem/allocated_gb": torch.cuda.memory_allocated(device) / 2 ** 30,
        "mem/reserved_gb": torch.cuda.memory_reserved(device) / 2 ** 30,
        "mem/peak_gb": torch.cuda.max_memory_allocated(device) / 2 ** 30,
    }


def free_memory(device: Optional[torch.device] = None) -> None:
    """Release cached blocks between trials that share one process (Optuna n_jobs>1)."""
    device = device or get_device()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def max_batch_size_hint(bytes_per_sample: int, safety: float = 0.8,
                        device: Optional[torch.device] = None) -> Optional[int]:
    """Rough upper bound on the batch size that fits in free device memory."""
    device = device or get_device()
    if device.type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(device)
    return max(1, int(free * safety) // bytes_per_sample)


def describe_environment() -> dict:
    """Collected once per trial and logged as run metadata (W&B config / Optuna user attrs)."""
    import platform
    import subprocess

    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "hostname": platform.node(),
        "device": str(get_device()),
        "device_name": device_name(),
        "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "world_size": int(os.environ.get("WORLD_SIZE", 1)),
    }
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        info["driver"] = out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (FileNotFoundError, subprocess.TimeoutExpired, IndexError):
        info["driver"] = None
    return info


def autotune_batch_size(step_fn, start: int = 512, min_bs: int = 8,
                        device: Optional[torch.device] = None) -> int:
    """Largest power-of-two batch size for which ``step_fn(bs)`` runs without OOM.

    ``step_fn`` must run one full forward/backward at the given batch size.
    Used by trials whose search space includes the model width, so that a wide
    model does not simply crash with the batch size the sampler picked.
    """
    device = device or get_device()
    bs = start
    while bs >= min_bs:
        try:
            step_fn(bs)
            free_memory(device)
            logger.info("batch size %d fits on %s", bs, device_name(device))
            return bs
        except torch.cuda.OutOfMemoryError:
            logger.info("batch size %d does not fit, halving", bs)
            free_memory(device)
            bs //= 2
    raise RuntimeError(f"even batch size {min_bs} does not fit on {device}")
