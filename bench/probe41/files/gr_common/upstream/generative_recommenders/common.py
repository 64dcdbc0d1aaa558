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
import os
from enum import Enum, unique
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

# @manual=//triton:triton
import triton

# triton.autotune is expensive at startup; allow turning it off in CI / benchmarks
ENABLE_FULL_TURN_SPACE = os.environ.get("GR_ENABLE_FULL_TURN_SPACE", "0") == "1"
_AUTOTUNE_DISABLED = os.environ.get("GR_DISABLE_AUTOTUNE", "0") == "1"


@unique
class HammerKernel(Enum):
    TRITON = "TRITON"
    PYTORCH = "PYTORCH"
    CUDA = "CUDA"
    TRITON_CC = "TRITON_CC"


class HammerModule(torch.nn.Module, abc.ABC):
    _is_inference: bool = False
    _use_triton_cc: bool = True
    _training_dtype: torch.dtype = torch.float32
    _hammer_kernel: Optional[HammerKernel] = None

    def __init__(
        self,
        is_inference: bool,
        training_dtype: torch.dtype = torch.float32,
        use_triton_cc: bool = _use_triton_cc,
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
            return HammerKernel.TRITON  # default kernel for training and eager eval

    # pyre-ignore[2]
    def recursive_setattr(self, name: str, value: Any) -> None:
        for _, module in self.named_modules():
            if hasattr(module, name):
                setattr(module, name, value)

    def set_is_inference(self, is_inference: bool) -> None:
        self._is_inference = is_inference
        self.recursive_setattr("_is_inference", is_inference)

    def set_training_dtype(self, training_dtype: torch.dtype) -> None:
        self._training_dtype = training_dtype
        self.recursive_setattr("_training_dtype", training_dtype)

    def set_hammer_kernel(self, hammer_kernel: HammerKernel) -> None:
        self._hammer_kernel = hammer_kernel
        self.recursive_setattr("_hammer_kernel", hammer_kernel)

    @property
    def is_inference(self) -> bool:
        return self._is_inference

    @property
    def is_eval(self) -> bool:
        return (not self._is_inference) and (not self.training)

    @property
    def is_train(self) -> bool:
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


def is_sm90() -> bool:
    # Hopper-only paths (TMA descriptors, wgmma) are gated on this.
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


def is_sm100() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10


def gpu_unavailable() -> Tuple[bool, str]:
    # used as @unittest.skipIf(*gpu_unavailable) across ops/tests
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return True, "CUDA is not available or no GPUs detected"
    return False, ""


@lru_cache
def get_num_sms() -> int:
    # number of streaming multiprocessors, used to size persistent grids
    return torch.cuda.get_device_properties("cuda").multi_processor_count


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
    if not torch.jit.is_scripting() and not torch.compiler.is_compiling():
        # Tell Dynamo this data-dependent value is in the range [0, 10**9)
        torch._check_is_size(max_len)
        torch._check(max_len < 10**9)
    return max_len


@torch.fx.wrap
def fx_arange(len: int, device: torch.device) -> torch.Tensor:
    return torch.arange(len, device=device)


def prev_power_of_2(x: int) -> int:
    if torch.compiler.is_compiling():
        # Re-write to make Dynamo happy
        x_tensor = torch.scalar_tensor(x, dtype=torch.int64)  # type: ignore[arg-type]
        x_tensor_orig = x_tensor.clone()
        out = triton.next_power_of_2(x_tensor)  # type: ignore[arg-type]
        return int(torch.where(torch.lt(x_tensor_orig, out), out // 2, out).item())
    else:
        out = triton.next_power_of_2(x)
        return out // 2 if out > x else out


STATIC_MAX_SEQ_LENS: List[int] = []
USE_RUNTIME_MAX_SEQ_LEN: bool = True


def set_static_max_seq_lens(max_seq_lens: List[int]) -> None:
    global STATIC_MAX_SEQ_LENS
    STATIC_MAX_SEQ_LENS = copy.deepcopy(max_seq_lens)
    STATIC_MAX_SEQ_LENS.sort()


def set_use_runtime_max_seq_len(use_runtime_max_seq_len: bool) -> None:
    global USE_RUNTIME_MAX_SEQ_LEN
    USE_RUNTIME_MAX_SEQ_LEN = use_runtime_max_seq_len


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


def triton_autotune(
    configs: List[triton.Config],
    key: List[str],
    # pyre-ignore
    prune_configs_by=None,
    # pyre-ignore
    restore_value=None,
    warmup: int = 25,
    rep: int = 100,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    # pyre-ignore
    def decorator(fn):
        if _AUTOTUNE_DISABLED:
            return triton.autotune(
                configs=configs[:1],
                key=key,
                prune_configs_by=prune_configs_by,
                restore_value=restore_value,
            )(fn)
        return triton.autotune(
            configs=configs,
            key=key,
            prune_configs_by=prune_configs_by,
            restore_value=restore_value,
            warmup=warmup,
            rep=rep,
        )(fn)

    return decorator


def init_mlp_weights_optional_bias(
    m: torch.nn.Module,
) -> None:
    if isinstance(m, torch.nn.Linear):
        # Always initialize weights with xavier_uniform
        torch.nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(0.0)


def dense_to_jagged_lengths(lengths: torch.Tensor) -> Dict[str, torch.Tensor]:
    offsets = torch.zeros(
        (lengths.numel() + 1,), dtype=lengths.dtype, device=lengths.device
    )
    offsets[1:] = torch.cumsum(lengths, dim=0)
    return {"lengths": lengths, "offsets": offsets}
