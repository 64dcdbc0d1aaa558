"""Small shared helpers for the tabular pipeline (seeding, devices, timing, memory)."""
from __future__ import annotations

import gc
import importlib.util
import logging
import os
import platform
import random
import sys
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Optional

import numpy as np
import pandas as pd
import torch

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------------------
def is_kaggle() -> bool:
    return "KAGGLE_KERNEL_RUN_TYPE" in os.environ


def is_rapids_available() -> bool:
    """True when cuDF can be imported (RAPIDS image / Kaggle GPU notebook)."""
    return importlib.util.find_spec("cudf") is not None


def log_env() -> None:
    logger.info("python %s on %s", sys.version.split()[0], platform.platform())
    logger.info("torch %s, CUDA %s, cuDNN %s", torch.__version__, torch.version.cuda, torch.backends.cudnn.version())
    logger.info("numpy %s, pandas %s, RAPIDS: %s", np.__version__, pd.__version__, is_rapids_available())


# --------------------------------------------------------------------------------------
# reproducibility
# --------------------------------------------------------------------------------------
def seed_everything(seed: int = 42, deterministic: bool = False) -> None:
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True
    try:  # RAPIDS notebooks also sample with CuPy
        import cupy as cp

        cp.random.seed(seed)
    except ImportError:
        pass


# --------------------------------------------------------------------------------------
# devices
# --------------------------------------------------------------------------------------
def get_device(prefer_gpu: bool = True) -> torch.device:
    """cuda:<LOCAL_RANK> when a GPU is visible, else CPU."""
    if prefer_gpu and torch.cuda.is_available():
        return torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}")
    logger.warning("no GPU visible, falling back to CPU")
    return torch.device("cpu")


def to_device(batch: Any, device: torch.device, non_blocking: bool = True) -> Any:
    """Recursively move tensors in (nested) lists / tuples / dicts to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, non_blocking) for v in batch)
    return batch


def count_parameters(model: torch.nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


# --------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------
def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


@contextmanager
def timer(name: str, sync: bool = True):
    """Context manager printing wall time; synchronises the GPU so async kernels are counted."""
    if sync:
        _sync()
    t0 = time.time()
    yield
    if sync:
        _sync()
    logger.info("[%s] done in %.1f s", name, time.time() - t0)


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val: float, n: int = 1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


# --------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------
def gpu_memory_report(index: int = 0) -> str:
    """Used/total memory of GPU ``index`` as reported by the driver (NVML)."""
    try:
        import pynvml
    except ImportError:
        return "pynvml not installed"
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return f"GPU{index}: {info.used / 2 ** 30:.1f}/{info.total / 2 ** 30:.1f} GB used"


def torch_memory_report(device: Optional[torch.device] = None) -> Dict[str, float]:
    return {
        "allocated_gb": torch.cuda.memory_allocated(device) / 2 ** 30,
        "reserved_gb": torch.cuda.memory_reserved(device) / 2 ** 30,
        "max_allocated_gb": torch.cuda.max_memory_allocated(device) / 2 ** 30,
    }


def free_memory(*objs: Iterable[Any]) -> None:
    for o in objs:
        del o
    gc.collect()
    torch.cuda.empty_cache()


def save_json(obj: Dict[str, Any], path: str) -> None:
    import json

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)


def load_json(path: str) -> Dict[str, Any]:
    import json

    with open(path) as f:
        return json.load(f)


def get_logger(name: str, log_file: Optional[str] = None, level: int = logging.INFO) -> logging.Logger:
    """Logger writing to stderr and optionally to ``log_file`` (one handler each, idempotent)."""
    log = logging.getLogger(name)
    log.setLevel(level)
    if not log.handlers:
        fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        sh = logging.StreamHandler()
        sh.setFormatter(fmt)
        log.addHandler(sh)
        if log_file:
            fh = logging.FileHandler(log_file)
            fh.setFormatter(fmt)
            log.addHandler(fh)
    return log


def reduce_mem_usage(df: pd.DataFrame, verbose: bool = True) -> pd.DataFrame:
    """Downcast numeric columns (the classic Kaggle helper)."""
    numerics = ["int16", "int32", "int64", "float16", "float32", "float64"]
    start_mem = df.memory_usage().sum() / 1024 ** 2
    for col in df.columns:
        col_type = df[col].dtypes
        if str(col_type) in numerics:
            c_min = df[col].min()
            c_max = df[col].max()
            if str(col_type)[:3] == "int":
                if c_min > np.iinfo(np.int8).min and c_max < np.iinfo(np.int8).max:
                    df[col] = df[col].astype(np.int8)
                elif c_min > np.iinfo(np.int16).min and c_max < np.iinfo(np.int16).max:
                    df[col] = df[col].astype(np.int16)
                elif c_min > np.iinfo(np.int32).min and c_max < np.iinfo(np.int32).max:
                    df[col] = df[col].astype(np.int32)
                else:
                    df[col] = df[col].astype(np.int64)
            else:
                if c_min > np.finfo(np.float32).min and c_max < np.finfo(np.float32).max:
                    df[col] = df[col].astype(np.float32)
                else:
                    df[col] = df[col].astype(np.float64)
    end_mem = df.memory_usage().sum() / 1024 ** 2
    if verbose:
        logger.info("Mem. usage decreased to %.2f Mb (%.1f%% reduction)", end_mem, 100 * (start_mem - end_mem) / start_mem)
    return df
