"""Device helpers shared by the train / eval / benchmark entry points.

Everything in vision_zoo should ask this module for a device instead of
hard-coding ``"cuda"`` so that the same scripts run on a laptop (cpu / mps)
and on the GPU cluster.
"""
import logging
import os
from typing import Any, Dict, Optional, Sequence, Union

import torch

logger = logging.getLogger(__name__)

_GPU_MEM_FMT = "{:.0f}MB"


def get_device(name: Optional[str] = None, local_rank: int = 0) -> torch.device:
    """Resolve ``name`` ("auto", "cpu", "cuda", "cuda:1", "mps") to a torch.device.

    "auto" picks the first available accelerator.
    """
    if name is None or name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", local_rank)
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", local_rank)
    return device


def setup_device(cfg) -> torch.device:
    """Pick the device from the config and make it current for this process."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = get_device(cfg.device, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = cfg.get("cudnn_benchmark", True)
        torch.backends.cuda.matmul.allow_tf32 = cfg.get("allow_tf32", True)
        torch.backends.cudnn.allow_tf32 = cfg.get("allow_tf32", True)
    logger.info("Using device %s", device)
    return device


def to_device(batch: Any, device: Union[str, torch.device], non_blocking: bool = True) -> Any:
    """Recursively move tensors in (nested) lists / tuples / dicts to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        moved = [to_device(v, device, non_blocking) for v in batch]
        return type(batch)(moved) if isinstance(batch, tuple) else moved
    return batch


def num_gpus() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_mem_usage() -> str:
    """Peak memory of the current device, for the log line."""
    if not torch.cuda.is_available():
        return "n/a"
    return _GPU_MEM_FMT.format(torch.cuda.max_memory_allocated() / 1024 ** 2)


def reset_peak_memory(device: torch.device) -> None:
    if device.type != "cuda":
        return
    torch.cuda.reset_peak_memory_stats(device)


def empty_cache(device: torch.device) -> None:
    if torch.cuda.is_available() and device.type == "cuda":
        torch.cuda.empty_cache()


def describe_devices(indices: Optional[Sequence[int]] = None) -> Dict[int, str]:
    """Human readable names of the visible GPUs (used in the run summary)."""
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return {}
    if indices is None:
        indices = range(torch.cuda.device_count())
    out = {}
    for i in indices:
        props = torch.cuda.get_device_properties(i)
        out[i] = f"{props.name} ({props.total_memory / 1024 ** 3:.1f} GB, sm_{props.major}{props.minor})"
    return out


def amp_dtype(requested: str = "float16") -> torch.dtype:
    """bf16 only on Ampere or newer, otherwise fall back to fp16."""
    if requested == "bfloat16":
        major, _ = torch.cuda.get_device_capability()
        if major >= 8:
            return torch.bfloat16
        logger.warning("bfloat16 requested but GPU is pre-Ampere; using float16")
    return torch.float16
