# -*- coding: utf-8 -*-

"""Utilities for PyKEEN."""

import ftplib
import functools
import itertools as itt
import json
import logging
import math
import operator
import os
import platform
import random
import re
import time
from io import BytesIO
from pathlib import Path
from typing import (
    Any,
    Callable,
    Collection,
    Dict,
    Generic,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

import numpy as np
import torch
import torch.nn

from .constants import PYKEEN_BENCHMARKS
from .typing import DeviceHint, MappedTriples, TorchRandomHint

__all__ = [
    "compose",
    "clamp_norm",
    "ensure_torch_random_state",
    "format_relative_comparison",
    "get_devices",
    "get_preferred_device",
    "get_env_info",
    "is_cuda_oom_error",
    "is_cudnn_error",
    "is_nonzero_larger_than_maxint_error",
    "normalize_string",
    "random_non_negative_int",
    "resolve_device",
    "set_random_seed",
    "split_complex",
    "combine_complex",
    "tensor_sum",
    "tensor_product",
    "upgrade_to_sequence",
]

logger = logging.getLogger(__name__)

X = TypeVar("X")

#: An error that occurs because the input in CUDA is too big. See ConvE for an example.
_CUDNN_ERROR = "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."

_CUDA_OOM_ERROR = "CUDA out of memory."

_CUDA_NONZERO_ERROR = "nonzero is not supported for tensors with more than INT_MAX elements"


def resolve_device(device: DeviceHint = None) -> torch.device:
    """Resolve a torch.device given a desired device (string).

    :param device: Either ``None`` (use a GPU if one is available), a string like ``"cpu"``,
        ``"cuda"``, or ``"cuda:1"``, or a :class:`torch.device` instance.
    :return: The resolved device.
    """
    if device is None or device == "gpu":
        device = "cuda"
    if isinstance(device, str):
        device = torch.device(device)
    if not torch.cuda.is_available() and device.type == "cuda":
        device = torch.device("cpu")
        logger.warning("No cuda devices were available. The model runs on CPU")
    return device


def get_devices(module: torch.nn.Module) -> Collection[torch.device]:
    """Return the device(s) from each components of the model."""
    return {tensor.device for tensor in itt.chain(module.parameters(), module.buffers())}


def get_preferred_device(module: torch.nn.Module, allow_ambiguity: bool = True) -> torch.device:
    """Return the preferred device of a module.

    If all parameters and buffers live on the same device, this device is returned. Otherwise,
    a GPU device is preferred over the CPU if ``allow_ambiguity`` is enabled.
    """
    devices = get_devices(module=module)
    if len(devices) == 0:
        raise ValueError("Could not infer device, since there are neither parameters nor buffers.")
    if len(devices) == 1:
        return next(iter(devices))
    device_info = ", ".join(map(str, devices))
    if not allow_ambiguity:
        raise ValueError(f"Ambiguous device! Found: {device_info}")
    # try to resolve ambiguous device; there has to be at least one cuda device
    cuda_devices = {d for d in devices if d.type == "cuda"}
    if len(cuda_devices) == 1:
        return next(iter(cuda_devices))
    raise ValueError(f"Could not resolve device among {device_info}")


def _is_oom_message(message: str) -> bool:
    return _CUDA_OOM_ERROR in message


def is_cuda_oom_error(runtime_error: RuntimeError) -> bool:
    """Check whether the caught RuntimeError was due to CUDA being out of memory."""
    if isinstance(runtime_error, torch.cuda.OutOfMemoryError):
        return True
    if not isinstance(runtime_error, RuntimeError):
        return False
    if not runtime_error.args:
        return False
    return _is_oom_message(runtime_error.args[0])


def is_cudnn_error(runtime_error: RuntimeError) -> bool:
    """Check whether the caught RuntimeError was due to a CUDNN error."""
    if not runtime_error.args:
        return False
    return _CUDNN_ERROR in runtime_error.args[0]


def is_nonzero_larger_than_maxint_error(runtime_error: RuntimeError) -> bool:
    """Determine if a runtime error was caused by applying nonzero to a GPU tensor with more than MAX_INT entries.

    .. seealso:: https://github.com/pytorch/pytorch/issues/51871
    """
    return _CUDA_NONZERO_ERROR in runtime_error.args[0]


def get_env_info() -> Dict[str, Any]:
    """Collect information about the environment for bug reports."""
    info: Dict[str, Any] = {
        "OS": os.name,
        "Platform": platform.system(),
        "Release": platform.release(),
        "Time": str(time.asctime()),
        "Python": f"{platform.python_version()}",
        "PyTorch": torch.__version__,
        "CUDA Available?": str(torch.cuda.is_available()),
        "CUDA Version": torch.version.cuda or "N/A",
        "cuDNN Version": str(torch.backends.cudnn.version()) if torch.backends.cudnn.is_available() else "N/A",
    }
    return info


def set_random_seed(seed: int) -> Tuple[None, torch._C.Generator, None]:
    """Set the random seed on numpy, torch, and python.

    :param seed: The seed that will be used in :func:`np.random.seed`, :func:`torch.manual_seed`,
        and :func:`random.seed`.
    :returns: A three tuple with None, the torch generator, and None.
    """
    np.random.seed(seed=seed)
    generator = torch.manual_seed(seed=seed)
    random.seed(seed)
    return None, generator, None


def ensure_torch_random_state(random_state: TorchRandomHint) -> torch.Generator:
    """Prepare a random state for PyTorch."""
    if random_state is None:
        random_state = random_non_negative_int()
        logger.warning(f"using automatically assigned random_state={random_state}")
    if isinstance(random_state, int):
        random_state = torch.manual_seed(seed=random_state)
    if not isinstance(random_state, torch.Generator):
        raise TypeError
    return random_state


def random_non_negative_int() -> int:
    """Generate a random positive integer."""
    sq = np.random.SeedSequence(np.random.randint(0, np.iinfo(np.int_).max))
    return int(sq.generate_state(1)[0])


def compose(*op_: Callable[[X], X], name: str) -> Callable[[X], X]:
    """Compose functions working on a single argument."""

    def chained_op(x: X):
        for op in op_:
            x = op(x)
        return x

    chained_op.__name__ = name
    return chained_op


def clamp_norm(
    x: torch.Tensor,
    maxnorm: float,
    p: Union[str, int] = "fro",
    dim: Union[None, int, Iterable[int]] = None,
) -> torch.Tensor:
    """Ensure that a tensor's norm does not exceeds some threshold.

    :param x: The vector.
    :param maxnorm: The maximum norm (>0).
    :param p: The norm type.
    :param dim: The dimension(s).
    :return: A vector with $|x| <= maxnorm$.
    """
    norm = x.norm(p=p, dim=dim, keepdim=True)
    mask = (norm < maxnorm).type_as(x)
    return mask * x + (1 - mask) * (x / norm.clamp_min(1.0e-05) * maxnorm)


def format_relative_comparison(part: int, total: int) -> str:
    """Format a relative comparison."""
    return f"{part}/{total} ({part / total:2.2%})"


def normalize_string(s: str, *, suffix: Optional[str] = None) -> str:
    """Normalize a string for lookup."""
    s = s.lower().replace("-", "").replace("_", "").replace(" ", "")
    if suffix is not None and s.endswith(suffix.lower()):
        return s[: -len(suffix)]
    return s


def upgrade_to_sequence(x: Union[X, Sequence[X]]) -> Sequence[X]:
    """Ensure that the input is a sequence."""
    return x if isinstance(x, (list, tuple)) else (x,)  # type: ignore


def split_complex(x: torch.FloatTensor) -> Tuple[torch.FloatTensor, torch.FloatTensor]:
    """Split a complex tensor into real and imaginary part."""
    x = torch.view_as_real(x)
    return x[..., 0], x[..., 1]


def combine_complex(x_re: torch.FloatTensor, x_im: torch.FloatTensor) -> torch.FloatTensor:
    """Combine a complex tensor from real and imaginary part."""
    return torch.view_as_complex(torch.stack([x_re, x_im], dim=-1))


def _reorder(tensors: Tuple[torch.FloatTensor, ...]) -> Tuple[torch.FloatTensor, ...]:
    """Reorder tensors such that the largest ones are multiplied first."""
    if len(tensors) < 3:
        return tensors
    # determine independent dimensions
    shape = list(max(x.shape[i] for x in tensors) for i in range(tensors[0].ndimension()))
    order = sorted(range(len(tensors)), key=lambda i: -sum(s for s, t in zip(shape, tensors[i].shape) if s == t))
    return tuple(tensors[i] for i in order)


def tensor_sum(*x: torch.FloatTensor) -> torch.FloatTensor:
    """Compute element-wise sum of tensors in broadcastable shape."""
    return sum(_reorder(tensors=x))


def tensor_product(*x: torch.FloatTensor) -> torch.FloatTensor:
    """Compute element-wise product of tensors in broadcastable shape."""
    head, *rest = _reorder(tensors=x)
    return functools.reduce(operator.mul, rest, head)


def estimate_cost_of_sequence(shape: Tuple[int, ...], *other_shapes: Tuple[int, ...]) -> int:
    """Cost of a sequence of broadcasted element-wise operations of tensors, given their shapes."""
    return sum(map(np.prod, itt.islice(itt.accumulate((shape,) + other_shapes, lambda a, b: tuple(max(x, y) for x, y in zip(a, b))), 1, None)))


def get_batchnorm_modules(module: torch.nn.Module) -> List[torch.nn.Module]:
    """Return all submodules which are batch normalization layers."""
    return [submodule for submodule in module.modules() if isinstance(submodule, torch.nn.modules.batchnorm._BatchNorm)]


def get_memory_summary(device: torch.device) -> str:
    """Summarize the accelerator memory of a device, or return an empty string on CPU."""
    if device.type != "cuda":
        return ""
    allocated = torch.cuda.memory_allocated(device) / 2**20
    reserved = torch.cuda.memory_reserved(device) / 2**20
    return f"allocated={allocated:.1f}MiB reserved={reserved:.1f}MiB"


def nonzero_chunked(x: torch.BoolTensor, chunk_size: int = 2**30) -> torch.LongTensor:
    """Compute nonzero indices in chunks to work around the INT_MAX limitation on GPUs."""
    if x.numel() < chunk_size:
        return x.nonzero(as_tuple=False)
    flat = x.view(-1)
    parts = []
    for start in range(0, flat.numel(), chunk_size):
        idx = flat[start : start + chunk_size].nonzero(as_tuple=False)
        parts.append(idx + start)
    flat_idx = torch.cat(parts, dim=0).view(-1)
    return torch.stack(torch.unravel_index(flat_idx, x.shape), dim=-1) if hasattr(torch, "unravel_index") else flat_idx
