"""
Small torch utilities shared by the SeisBench training examples and the
pick-benchmark scripts.
"""
import logging
import os
import random
from contextlib import nullcontext

import numpy as np
import torch

logger = logging.getLogger("seisbench")


def worker_seeding(wid):
    """
    When using numpy random inside multiple workers in the data loader, they all produce the same output,
    as the numpy random state is copied into every worker. This function fixes the seed for every worker.
    """
    seed = np.random.get_state()[1][0] + wid
    np.random.seed(seed)
    random.seed(int(seed))


def seed_everything(seed: int = 42, deterministic: bool = False):
    """Seed python, numpy and torch (CPU and all GPUs)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        # cuDNN picks non-deterministic conv algorithms by default
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device(device=None) -> torch.device:
    """
    Resolve the device string used by the command line tools.

    :param device: "cpu", "cuda", "cuda:1", ... or None for automatic selection
    """
    if device is None or device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        logger.warning("CUDA requested but not available, falling back to CPU")
        device = torch.device("cpu")
    return device


def describe_device(device: torch.device) -> str:
    if device.type == "cuda":
        idx = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(idx)
        return f"{props.name} ({props.total_memory / 1024 ** 3:.1f} GiB)"
    return str(device)


def autocast_if(enabled: bool, device: torch.device, dtype=torch.float16):
    """
    Mixed precision context for inference. On CPU this is a no-op context, since
    bfloat16 autocast on CPU is usually slower for the small conv nets we use.
    """
    if not enabled or device.type == "cpu":
        return nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def output_shape_conv(in_samples, kernel_size, stride=1, padding=0, dilation=1):
    return (in_samples + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1


def min_max_normalization(x, eps=1e-10):
    x = x - x.mean(dim=-1, keepdim=True)
    peak = x.abs().amax(dim=(-1, -2), keepdim=True)
    return x / (peak + eps)


def std_normalization(x, eps=1e-10):
    x = x - x.mean(dim=-1, keepdim=True)
    std = x.std(dim=-1, keepdim=True)
    return x / (std + eps)


def count_parameters(model, trainable_only=True):
    params = model.parameters()
    if trainable_only:
        params = (p for p in params if p.requires_grad)
    return sum(p.numel() for p in params)


def move_batch(batch, device, non_blocking=True):
    """Move a dict/list/tensor batch as produced by the SeisBench generators to a device."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, np.ndarray):
        return torch.from_numpy(batch).to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: move_batch(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_batch(v, device, non_blocking) for v in batch)
    return batch


def free_gpu_memory():
    """Release cached blocks between large annotate() calls in the notebooks."""
    torch.cuda.empty_cache()
