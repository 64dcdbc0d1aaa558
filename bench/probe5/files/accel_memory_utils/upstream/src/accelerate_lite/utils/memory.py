# Copyright 2022 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

"""
Memory and RNG helpers: free device memory, retry a function with a smaller batch size on
OOM, size the per-device memory budget used by big-model dispatch, and keep RNG states in sync
across processes.
"""

import functools
import gc
import inspect
import logging
import random
from enum import Enum
from typing import Dict, List, Optional, Union

import numpy as np
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


class RNGType(Enum):
    TORCH = "torch"
    CUDA = "cuda"
    XLA = "xla"
    GENERATOR = "generator"


def clear_device_cache(garbage_collection: bool = False):
    """Empty the caching allocator of whatever accelerator is present."""
    if garbage_collection:
        gc.collect()
    if torch.backends.mps.is_available():
        torch.mps.empty_cache()
    elif torch.cuda.is_available():
        torch.cuda.empty_cache()


def release_memory(*objects):
    """
    Releases memory from `objects` by setting them to `None` and calls `gc.collect()` and
    `clear_device_cache()`. Returned objects should be reassigned to the same variables.
    """
    if not isinstance(objects, list):
        objects = list(objects)
    for i in range(len(objects)):
        objects[i] = None
    clear_device_cache(garbage_collection=True)
    return objects


def should_reduce_batch_size(exception: Exception) -> bool:
    """True if `exception` is an out-of-memory style error that a smaller batch could avoid."""
    _statements = [
        "CUDA out of memory.",  # CUDA OOM
        "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED.",  # CUDNN SNAFU
        "DefaultCPUAllocator: can't allocate memory",  # CPU OOM
    ]
    if isinstance(exception, RuntimeError) and len(exception.args) == 1:
        return any(err in exception.args[0] for err in _statements)
    return False


def find_executable_batch_size(function=None, starting_batch_size: int = 128):
    """
    Decorator that retries `function` with half the batch size every time it raises an OOM.
    `function` must take `batch_size` as its first argument.
    """
    if function is None:
        return functools.partial(find_executable_batch_size, starting_batch_size=starting_batch_size)

    batch_size = starting_batch_size

    def decorator(*args, **kwargs):
        nonlocal batch_size
        clear_device_cache(garbage_collection=True)
        params = list(inspect.signature(function).parameters.keys())
        if len(params) < (len(args) + 1):
            arg_str = ", ".join([f"{arg}={value}" for arg, value in zip(params[1:], args[1:])])
            raise TypeError(
                f"Batch size was passed into `{function.__name__}` as the first argument when called."
                f"Remove this as the decorator already does so: `{function.__name__}({arg_str})`"
            )
        while True:
            if batch_size == 0:
                raise RuntimeError("No executable batch size found, reached zero.")
            try:
                return function(batch_size, *args, **kwargs)
            except Exception as e:
                if should_reduce_batch_size(e):
                    clear_device_cache(garbage_collection=True)
                    batch_size //= 2
                    logger.info(f"OOM caught, retrying with batch_size={batch_size}")
                else:
                    raise

    return decorator


def get_max_memory(max_memory: Optional[Dict[Union[int, str], Union[int, str]]] = None):
    """
    Get the maximum memory available, in bytes, for each accelerator and the CPU.
    Keys are device indices plus "cpu".
    """
    import psutil

    if max_memory is None:
        if not torch.cuda.is_available():
            max_memory = {}
        else:
            # make sure a context exists on every device before asking the driver
            for i in range(torch.cuda.device_count()):
                _ = torch.tensor([0], device=i)
            max_memory = {i: torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count())}
        max_memory["cpu"] = psutil.virtual_memory().available
        return max_memory

    for key in max_memory:
        if isinstance(max_memory[key], str):
            max_memory[key] = convert_file_size_to_int(max_memory[key])

    gpu_devices = [k for k in max_memory.keys() if isinstance(k, int)]
    gpu_devices.sort()
    num_devices = torch.cuda.device_count()
    for device in gpu_devices:
        if device >= num_devices or device < 0:
            logger.warning(f"Device {device} is not available, available devices are {list(range(num_devices))}")
    all_devices = gpu_devices + [k for k in ["mps", "cpu", "disk"] if k in max_memory.keys()]
    for k in max_memory.keys():
        if k not in all_devices:
            raise ValueError(f"Device {k} is not recognized, available devices are integers (for GPU/XPU), 'mps', 'cpu' and 'disk'")
    return {k: max_memory[k] for k in all_devices}


def convert_file_size_to_int(size: Union[int, str]) -> int:
    """Converts a size expressed as a string with digits and a unit (like `"5MB"`) to an integer (in bytes)."""
    mem_size = -1
    err_msg = f"`size` {size} is not in a valid format. Use an integer for bytes, or a string with a unit."
    try:
        if isinstance(size, int):
            mem_size = size
        elif size.upper().endswith("GIB"):
            mem_size = int(float(size[:-3]) * (2**30))
        elif size.upper().endswith("MIB"):
            mem_size = int(float(size[:-3]) * (2**20))
        elif size.upper().endswith("GB"):
            int_size = int(float(size[:-2]) * (10**9))
            mem_size = int_size // 8 if size.endswith("b") else int_size
        elif size.upper().endswith("MB"):
            int_size = int(float(size[:-2]) * (10**6))
            mem_size = int_size // 8 if size.endswith("b") else int_size
    except ValueError:
        raise ValueError(err_msg)
    if mem_size < 0:
        raise ValueError(err_msg)
    return mem_size


def set_seed(seed: int, device_specific: bool = False, deterministic: bool = False):
    """Seed python, numpy and torch (all devices); optionally offset by the process rank."""
    if device_specific and dist.is_initialized():
        seed += dist.get_rank()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)


def default_rng_types() -> List[RNGType]:
    """RNG states worth synchronizing for the current hardware."""
    rng_types = [RNGType.TORCH, RNGType.GENERATOR]
    if torch.cuda.is_available() and dist.is_initialized():
        rng_types.append(RNGType.CUDA)
    return rng_types


def synchronize_rng_state(rng_type: Optional[RNGType] = None, generator: Optional[torch.Generator] = None):
    """Broadcast the RNG state of rank 0 to every other rank."""
    if rng_type == RNGType.TORCH:
        rng_state = torch.get_rng_state()
    elif rng_type == RNGType.CUDA:
        rng_state = torch.cuda.get_rng_state()
    elif rng_type == RNGType.GENERATOR:
        assert generator is not None, "Need a generator to synchronize its seed."
        rng_state = generator.get_state()
    else:
        return

    if dist.is_initialized():
        # the state is a uint8 CPU tensor; NCCL only moves device tensors
        backend_is_nccl = dist.get_backend() == "nccl"
        rng_state = rng_state.to("cuda") if backend_is_nccl else rng_state
        dist.broadcast(rng_state, src=0)
        rng_state = rng_state.cpu()

    if rng_type == RNGType.TORCH:
        torch.set_rng_state(rng_state)
    elif rng_type == RNGType.CUDA:
        torch.cuda.set_rng_state(rng_state)
    elif rng_type == RNGType.GENERATOR:
        generator.set_state(rng_state)


def synchronize_rng_states(rng_types: Optional[List[Union[str, RNGType]]] = None, generator=None):
    if rng_types is None:
        rng_types = default_rng_types()
    for rng_type in rng_types:
        synchronize_rng_state(RNGType(rng_type), generator=generator)
