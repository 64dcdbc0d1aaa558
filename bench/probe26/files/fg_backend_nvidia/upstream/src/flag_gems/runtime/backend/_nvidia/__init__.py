"""NVIDIA vendor backend for flag_gems.

Everything the generic runtime needs to know about the device lives here: the
torch device name, the torch device module, the dispatch key under which the
Triton implementations are registered, and how tuned configs are looked up.
"""
import functools
import os
import subprocess

import torch
import triton

from ..backend_utils import VendorInfoBase

vendor_info = VendorInfoBase(
    vendor_name="nvidia",
    device_name="cuda",
    device_query_cmd="nvidia-smi",
    dispatch_key="CUDA",
)

# ops that have a vendor specific implementation elsewhere and must not be
# registered from the common ops table
CUSTOMIZED_UNUSED_OPS = ()

# the torch device module used by every op wrapper (torch_device_fn.device(...))
torch_device_fn = torch.cuda

DEVICE_COUNT = torch.cuda.device_count()


def _query_driver():
    try:
        out = subprocess.run(
            [vendor_info.device_query_cmd, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None


@functools.lru_cache(maxsize=None)
def get_arch():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


@functools.lru_cache(maxsize=None)
def support_tma():
    return get_arch() >= 90


@functools.lru_cache(maxsize=None)
def support_fp64():
    # every NVIDIA part we ship for supports double precision natively
    return True


@functools.lru_cache(maxsize=None)
def get_sm_count(device=None):
    if device is None:
        device = torch.cuda.current_device()
    return torch.cuda.get_device_properties(device).multi_processor_count


def get_tuned_config_path(op_name):
    base = os.path.join(os.path.dirname(__file__), "tune_configs")
    name = torch.cuda.get_device_name().replace(" ", "_")
    candidate = os.path.join(base, f"{op_name}_{name}.yaml")
    if os.path.exists(candidate):
        return candidate
    return os.path.join(base, f"{op_name}.yaml")


def get_heuristic_config(op_name):
    from . import heuristics_config_utils

    return heuristics_config_utils.HEURISTICS_CONFIGS.get(op_name, {})


def set_triton_env():
    # the ptxas shipped with the toolkit is newer than triton's bundled copy
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    ptxas = os.path.join(cuda_home, "bin", "ptxas")
    if os.path.exists(ptxas):
        os.environ.setdefault("TRITON_PTXAS_PATH", ptxas)


def device_guard(tensor):
    return torch.cuda.device(tensor.device)


def is_triton_usable():
    return torch.cuda.is_available() and triton.__version__ >= "2.2"


__all__ = [
    "vendor_info",
    "CUSTOMIZED_UNUSED_OPS",
    "torch_device_fn",
    "get_sm_count",
    "get_tuned_config_path",
    "get_heuristic_config",
    "support_tma",
    "support_fp64",
]
