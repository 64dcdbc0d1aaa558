"""Backend selection and per-vendor tuning configs.

At import time we figure out which accelerator we are running on (by default by
asking the vendor's management tool) and load the heuristics module from
``runtime/backend/_<vendor>/``.  Autotune search spaces live in ``tune_configs.yaml``
next to this file.
"""
import functools
import importlib
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch
import triton
import yaml

logger = logging.getLogger(__name__)

_BACKEND_ROOT = Path(__file__).parent / "backend"


@dataclass
class DeviceInfo:
    vendor_name: str
    device_name: str
    dispatch_key: str
    device_query_cmd: str
    num_devices: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


def _query_with_tool(cmd: str) -> Optional[str]:
    exe = cmd.split()[0]
    if shutil.which(exe) is None:
        return None
    try:
        out = subprocess.run(
            cmd.split(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10,
            check=True, text=True,
        )
    except (subprocess.SubprocessError, OSError):
        return None
    return out.stdout


def _detect_vendor() -> DeviceInfo:
    forced = os.environ.get("GEMS_VENDOR")
    if forced:
        logger.info("vendor forced via GEMS_VENDOR=%s", forced)
        return _load_vendor_info(forced)

    out = _query_with_tool("nvidia-smi --query-gpu=name --format=csv,noheader")
    if out:
        info = _load_vendor_info("nvidia")
        info.extra["gpu_names"] = [line.strip() for line in out.splitlines() if line.strip()]
        return info
    if torch.version.hip is not None:
        return _load_vendor_info("amd")
    raise RuntimeError(
        "flag_gems could not detect a supported accelerator; set GEMS_VENDOR explicitly"
    )


def _load_vendor_info(vendor: str) -> DeviceInfo:
    table = {
        "nvidia": DeviceInfo("nvidia", "cuda", "CUDA", "nvidia-smi"),
        "amd": DeviceInfo("amd", "cuda", "CUDA", "rocm-smi"),
    }
    if vendor not in table:
        raise ValueError(f"unsupported vendor {vendor!r}; known: {sorted(table)}")
    info = table[vendor]
    info.num_devices = torch.cuda.device_count()
    return info


device = _detect_vendor()
torch_device_fn = getattr(torch, device.device_name)


def get_vendor_dir() -> Path:
    return _BACKEND_ROOT / f"_{device.vendor_name}"


@functools.lru_cache(maxsize=None)
def _load_yaml() -> Dict[str, Any]:
    path = Path(__file__).parent / "tune_configs.yaml"
    with open(path, "r") as f:
        return yaml.safe_load(f)


def _expand_gen(entry: Dict[str, Any]) -> List[triton.Config]:
    import itertools

    param_map = entry["param_map"]
    meta_map = param_map.get("META", {})
    keys = list(meta_map.values())
    extra_keys = [v for k, v in param_map.items() if k != "META"]
    axes = [entry[k] for k in keys + extra_keys]
    configs = []
    for values in itertools.product(*axes):
        vals = dict(zip(keys + extra_keys, values))
        meta = {name: vals[src] for name, src in meta_map.items()}
        kwargs = {k: vals[v] for k, v in param_map.items() if k != "META"}
        configs.append(triton.Config(meta, **kwargs))
    return configs


def get_tuned_config(op_name: str) -> List[triton.Config]:
    raw = _load_yaml().get(op_name)
    if raw is None:
        raise KeyError(f"no tune config for {op_name!r}")
    configs = []
    for entry in raw:
        if entry.get("gen"):
            configs += _expand_gen(entry)
        else:
            configs.append(
                triton.Config(
                    entry["META"],
                    num_warps=entry.get("num_warps", 4),
                    num_stages=entry.get("num_stages", 2),
                )
            )
    return configs


def get_heuristic_config(op_name: str) -> Dict[str, Any]:
    mod = importlib.import_module(
        f"flag_gems.runtime.backend._{device.vendor_name}.heuristics_config_utils"
    )
    return mod.HEURISTICS_CONFIGS[op_name]


def sm_count() -> int:
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(0).multi_processor_count
    return int(_load_yaml().get("heuristics", {}).get("fallback_sm_count", 108))


def get_device_name() -> str:
    return device.device_name


def get_dispatch_key() -> str:
    return device.dispatch_key


__all__ = [
    "device",
    "torch_device_fn",
    "get_tuned_config",
    "get_heuristic_config",
    "sm_count",
    "get_device_name",
    "get_dispatch_key",
]
