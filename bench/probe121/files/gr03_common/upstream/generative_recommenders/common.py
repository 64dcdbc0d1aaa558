# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# pyre-strict

import abc
import copy
import logging
import os
from enum import Enum, unique
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

try:
    from triton.runtime.autotuner import autotune as triton_autotune  # noqa
except ImportError:
    triton_autotune = None  # pyre-ignore [9]

logger: logging.Logger = logging.getLogger(__name__)

# @manual=//triton:triton
import triton

# When dev mode is on, autotuning is restricted to a single config so that
# unit tests run fast on the GPU.
ENABLE_DEV_MODE: bool = os.environ.get("GR_DEV_MODE", "0") == "1"
USE_RUNTIME_MAX_SEQ_LEN: bool = False
ENABLE_VERBOSE_AUTOTUNE: bool = False


def set_dev_mode(val: bool) -> None:
    global ENABLE_DEV_MODE
    ENABLE_DEV_MODE = val


def set_use_runtime_max_seq_len(use_runtime_max_seq_len: bool) -> None:
    global USE_RUNTIME_MAX_SEQ_LEN
    USE_RUNTIME_MAX_SEQ_LEN = use_runtime_max_seq_len


def use_runtime_max_seq_len() -> bool:
    return USE_RUNTIME_MAX_SEQ_LEN


def set_verbose_autotune(val: bool) -> None:
    global ENABLE_VERBOSE_AUTOTUNE
    ENABLE_VERBOSE_AUTOTUNE = val


@unique
class HammerKernel(Enum):
    """Which implementation a HammerModule dispatches its hot ops to.

    TRITON     -- Triton kernels under generative_recommenders/ops/triton
    TRITON_CC  -- AOT-compiled Triton kernels (inference only)
    PYTORCH    -- reference implementation in plain PyTorch (slow, any device)
    CUDA       -- hand-written CUDA kernels registered as torch.ops.my_ops.*
    """

    TRITON = "TRITON"
    TRITON_CC = "TRITON_CC"
    PYTORCH = "PYTORCH"
    CUDA = "CUDA"


# Global default, used by modules that were not given an explicit kernel.
_DEFAULT_HAMMER_KERNEL: HammerKernel = HammerKernel.TRITON


def set_default_hammer_kernel(kernel: HammerKernel) -> None:
    global _DEFAULT_HAMMER_KERNEL
    _DEFAULT_HAMMER_KERNEL = kernel


class HammerModule(torch.nn.Module, abc.ABC):
    _is_inference: bool = False
    _use_triton_cc: bool = True
    _training_dtype: torch.dtype = torch.float32
    _hammer_kernel: Optional[HammerKernel] = None

    def __init__(
        self,
        is_inference: bool,
        training_dtype: torch.dtype = torch.float32,
        use_triton_cc: bool = True,
        hammer_kernel: Optional[HammerKernel] = None,
    ) -> None:
        super().__init__()
        self._is_inference = is_inference
        self._training_dtype = training_dtype
        self._hammer_kernel = hammer_kernel
        self._use_triton_cc = use_triton_cc

    def hammer_kernel(self) -> HammerKernel:
        kernel = self._hammer_kernel
        if kernel is not None:
            return kernel
        if self._is_inference and self._use_triton_cc:
            return HammerKernel.TRITON_CC
        else:
            return _DEFAULT_HAMMER_KERNEL

    # pyre-ignore[2]
    def recursive_setattr(self, name: str, value: Any) -> None:
        for _, module in self.named_modules():
            if hasattr(module, name):
                setattr(module, name, value)

    def set_hammer_kernel(self, kernel: HammerKernel) -> None:
        self.recursive_setattr("_hammer_kernel", kernel)

    @property
    def predict_mode(self) -> bool:
        return self._is_inference

    @property
    def eval_mode(self) -> bool:
        return (not self._is_inference) and (not self.training)

    @property
    def train_mode(self) -> bool:
        return (not self._is_inference) and self.training


def generate_sparse_seq_len(
    size: int,
    max_seq_len: int,
    sparsity: float,
    device: torch.device,
) -> torch.Tensor:
    if sparsity == 0.0:
        return torch.zeros(size=(size,), device=device, dtype=torch.int)
    elif sparsity == 1.0:
        return torch.ones(size=(size,), device=device, dtype=torch.int) * max_seq_len
    elif sparsity >= 0.5:
        min_seq_len: int = int((2 * sparsity - 1.0) * max_seq_len)
        return torch.randint(
            low=min_seq_len,
            high=max_seq_len,
            size=(size,),
            device=device,
            dtype=torch.int,
        )
    else:
        min_seq_len: int = 0
        max_seq_len: int = int(2 * sparsity * max_seq_len)
        return torch.randint(
            low=min_seq_len,
            high=max_seq_len,
            size=(size,),
            device=device,
            dtype=torch.int,
        )


def apply_sampling(
    lengths: torch.Tensor,
    alpha: float,
    max_seq_len: int,
) -> torch.Tensor:
    threshold = int(max_seq_len ** (alpha / 2))
    no_sample_prob = (max_seq_len**alpha) / torch.pow(lengths, 2)
    users_to_sample = torch.logical_and(
        lengths > threshold,
        torch.rand_like(no_sample_prob) < 1 - no_sample_prob,
    )
    lengths = torch.where(users_to_sample, threshold, lengths)
    return lengths


nv_gpu_unavailable: Tuple[bool, str] = (
    not torch.cuda.is_available() or torch.cuda.device_count() == 0,
    "CUDA is not available or no GPUs detected",
)
nv_gpu_available: bool = not nv_gpu_unavailable[0]


def is_sm90() -> bool:
    # Hopper-only kernels (TMA, warp specialization) are gated on this.
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


def gpu_memory_gb(device: Optional[torch.device] = None) -> float:
    """Total device memory, used to size the jagged-attention workspace."""
    props = torch.cuda.get_device_properties(device or torch.cuda.current_device())
    return props.total_memory / 1024**3


def switch_to_contiguous_if_needed(x: torch.Tensor) -> torch.Tensor:
    if not torch.jit.is_scripting() and torch.compiler.is_compiling():
        # Tell Dynamo this data-dependent value is in the range (0, 10**9)
        torch._check(x.size(0) > 0)
        torch._check(x.size(0) < 10**9)
    if x.stride(-1) == 1:
        return x
    return x.contiguous()


@torch.fx.wrap
def fx_infer_max_len(
    lengths: torch.Tensor,
) -> int:
    max_len = int(lengths.max())
    if not torch.jit.is_scripting() and torch.compiler.is_compiling():
        # Tell Dynamo this data-dependent value is in the range [0, 10**9)
        torch._check_is_size(max_len)
        torch._check(max_len < 10**9)
        torch._check(max_len > 0)
    return max_len


@torch.fx.wrap
def fx_mark_length_features(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


@torch.fx.wrap
def fx_torch_ones(
    shape: List[int],
    device: torch.device,
    dtype: torch.dtype,
) -> torch.Tensor:
    return torch.ones(shape, device=device, dtype=dtype)


@torch.fx.wrap
def fx_torch_zeros(shape: List[int], device: torch.device) -> torch.Tensor:
    return torch.zeros(shape, device=device)


@torch.fx.wrap
def fx_unwrap_optional_tensor(optional: Optional[torch.Tensor]) -> torch.Tensor:
    assert optional is not None, "Expected optional to be non-None Tensor"
    return optional


@torch.fx.wrap
def fx_arange(len: int, device: torch.device) -> torch.Tensor:
    return torch.arange(len, device=device)


@torch.fx.wrap
def fx_seq_len(x: torch.Tensor) -> int:
    return x.size(1)


@torch.fx.wrap
def jagged_to_padded_dense(
    values: torch.Tensor,
    offsets: List[torch.Tensor],
    max_lengths: List[int],
    padding_value: float,
) -> torch.Tensor:
    return torch.ops.fbgemm.jagged_to_padded_dense(
        values=values,
        offsets=offsets,
        max_lengths=max_lengths,
        padding_value=padding_value,
    )


@torch.fx.wrap
def dense_to_jagged(
    dense: torch.Tensor,
    x_offsets: List[torch.Tensor],
) -> torch.Tensor:
    return torch.ops.fbgemm.dense_to_jagged(
        dense=dense,
        x_offsets=x_offsets,
    )[0]


def init_mlp_weights_optional_bias(
    m: torch.nn.Module,
) -> None:
    if isinstance(m, torch.nn.Linear):
        # Always initialize weights with xavier_uniform
        torch.nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(0.0)


def prev_power_of_2(x: int) -> int:
    if torch.compiler.is_compiling():
        # Re-write to make Dynamo happy
        x_tensor = torch.scalar_tensor(x, dtype=torch.int64)  # type: ignore[arg-type]
        x_tensor_orig = x_tensor.clone()
        out = triton.next_power_of_2(x_tensor)  # type: ignore[arg-type]
        return int(torch.where(torch.lt(x_tensor_orig, out), out // 2, out).item())  # type: ignore[return-value]
    else:
        out = triton.next_power_of_2(x)
        return out // 2 if out > x else out


STATIC_MAX_SEQ_LENS: List[int] = []
USE_RUNTIME_MAX_SEQ_LEN_AUTOTUNE_KEY: bool = False


def autotune_max_seq_len(runtime_max_seq_len: int) -> int:
    global USE_RUNTIME_MAX_SEQ_LEN
    if USE_RUNTIME_MAX_SEQ_LEN:
        return prev_power_of_2(runtime_max_seq_len)
    else:
        if STATIC_MAX_SEQ_LENS == []:
            return 1
        for max_len in STATIC_MAX_SEQ_LENS:
            if max_len >= runtime_max_seq_len:
                return max_len
        return STATIC_MAX_SEQ_LENS[-1]


def maybe_triton_autotune(
    configs: List["triton.Config"],
    key: List[str],
    **kwargs: Any,  # pyre-ignore [2]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Autotune decorator that collapses to the first config in dev mode."""
    if ENABLE_DEV_MODE:
        configs = configs[:1]
    if triton_autotune is None:
        raise RuntimeError("triton is required for the TRITON hammer kernel")
    return triton_autotune(configs=configs, key=key, **kwargs)


def copy_kwargs_to_device(
    kwargs: Dict[str, Any],  # pyre-ignore [2]
    device: torch.device,
) -> Dict[str, Any]:  # pyre-ignore [3]
    out = copy.copy(kwargs)
    for k, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            out[k] = v.to(device, non_blocking=True)
    return out
