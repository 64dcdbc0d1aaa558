"""
Device helpers for the Music Transformer port.

Everything in the repo asks get_device() for the device to put tensors on, so that
``--force_cpu`` only has to flip a single global. The default is the first CUDA GPU.
"""
import os

import torch

# CPU is always there; dataset tensors are built on it and moved later
TORCH_CPU_DEVICE = torch.device("cpu")

_GPU_ID = int(os.environ.get("MT_GPU_ID", "0"))

if(torch.cuda.device_count() > 0):
    TORCH_CUDA_DEVICE = torch.device("cuda", _GPU_ID)
else:
    print("----- WARNING: CUDA devices not detected. This will cause the model to run very slow! -----")
    print("")
    TORCH_CUDA_DEVICE = None

USE_CUDA = True


# use_cuda
def use_cuda(cuda_bool):
    """
    ----------
    Author: Damon Gwinn
    ----------
    Sets whether to use CUDA (if available), or use the CPU (not recommended)
    ----------
    """

    global USE_CUDA
    USE_CUDA = cuda_bool


# get_device
def get_device():
    """
    ----------
    Author: Damon Gwinn
    ----------
    Grabs the default device. Default device is CUDA if available and use_cuda is not False, CPU otherwise.
    ----------
    """

    if((not USE_CUDA) or (TORCH_CUDA_DEVICE is None)):
        return TORCH_CPU_DEVICE
    else:
        return TORCH_CUDA_DEVICE


# cuda_device
def cuda_device():
    """
    Grabs the cuda device (may be None if CUDA is not available)
    """

    return TORCH_CUDA_DEVICE


# cpu_device
def cpu_device():
    """
    Grabs the cpu device
    """

    return TORCH_CPU_DEVICE


def device_summary():
    """Human readable one-liner for the training log."""
    dev = get_device()
    if dev.type == "cuda":
        name = torch.cuda.get_device_name(dev)
        total = torch.cuda.get_device_properties(dev).total_memory / (1024 ** 3)
        return "%s (%s, %.1f GiB)" % (str(dev), name, total)
    return str(dev)
