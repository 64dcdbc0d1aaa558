"""Small helpers for choosing and describing the compute device.

Used by the examples and the benchmark scripts so that ``--device auto``
behaves the same everywhere:

* ``auto``  -> first CUDA GPU if available, else CPU
* ``cuda``  -> current CUDA device (error if none)
* ``cuda:N`` / ``cpu`` -> as given
"""

import os
import platform
import random
import subprocess
from typing import Dict, Optional, Union

import numpy as np
import torch

__all__ = [
    "get_device",
    "seed_everything",
    "device_summary",
    "supports_tf32",
    "supports_bf16",
    "default_complex_dtype",
    "gpu_memory_report",
    "nvidia_smi_snapshot",
]


def get_device(spec: Union[str, torch.device, None] = "auto") -> torch.device:
    if isinstance(spec, torch.device):
        return spec
    if spec is None or spec == "auto":
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    if spec == "gpu":
        spec = "cuda"
    dev = torch.device(spec)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {spec!r} requested but CUDA is not available")
    return dev


def seed_everything(seed: int, deterministic: bool = False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        # cuBLAS needs this for deterministic complex matmuls
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)


def supports_tf32(device: Optional[torch.device] = None) -> bool:
    """TF32 tensor cores exist from Ampere (sm_80) on."""
    if not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8


def supports_bf16(device: Optional[torch.device] = None) -> bool:
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def default_complex_dtype(device: torch.device) -> torch.dtype:
    """complex64 on GPUs with poor fp64 throughput, complex128 elsewhere.

    Consumer/workstation cards have 1/32 or 1/64 rate fp64, so double
    precision simulation is only worth it on data-centre parts (V100, A100,
    H100) which report ``major`` 7.0 / 8.0 / 9.0.
    """
    if device.type != "cuda":
        return torch.complex128
    props = torch.cuda.get_device_properties(device)
    if (props.major, props.minor) in [(7, 0), (8, 0), (9, 0)]:
        return torch.complex128
    return torch.complex64


def device_summary(device: Optional[torch.device] = None) -> Dict[str, object]:
    info = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if device is None:
        device = get_device("auto")
    info["device"] = str(device)
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update({
            "gpu_name": props.name,
            "compute_capability": f"{props.major}.{props.minor}",
            "total_memory_gb": round(props.total_memory / 2**30, 2),
            "multi_processor_count": props.multi_processor_count,
            "cuda_runtime": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
        })
    return info


def gpu_memory_report(device: Optional[torch.device] = None, prefix: str = "") -> str:
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return f"{prefix}no GPU in use"
    alloc = torch.cuda.memory_allocated(device) / 2**20
    reserved = torch.cuda.memory_reserved(device) / 2**20
    peak = torch.cuda.max_memory_allocated(device) / 2**20
    return f"{prefix}alloc {alloc:.0f} MiB | reserved {reserved:.0f} MiB | peak {peak:.0f} MiB"


def nvidia_smi_snapshot() -> str:
    """Raw ``nvidia-smi`` query, handy to paste into bug reports."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=index,name,memory.used,memory.total,utilization.gpu",
             "--format=csv,noheader"],
            universal_newlines=True, timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return f"nvidia-smi unavailable: {err}"
    return out.strip()
