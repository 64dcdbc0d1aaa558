# Copyright 2023-2024 SGLang Team
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
"""Device-memory helpers used by the model runner to size the KV cache."""

import gc
import logging
import time
from dataclasses import dataclass, field
from typing import Optional

import psutil
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

GiB = 1 << 30


def is_cuda() -> bool:
    return torch.cuda.is_available() and torch.version.cuda is not None


def is_hip() -> bool:
    return torch.version.hip is not None


def is_cuda_alike() -> bool:
    return is_cuda() or is_hip()


def get_device_name(device_id: int = 0) -> str:
    if hasattr(torch, "cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(device_id)
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return torch.xpu.get_device_name(device_id)
    return "cpu"


def get_compute_capability() -> tuple:
    major, minor = torch.cuda.get_device_capability()
    return major, minor


def is_sm90_supported() -> bool:
    return is_cuda() and get_compute_capability() >= (9, 0)


def get_available_gpu_memory(
    device: str,
    gpu_id: int,
    distributed: bool = False,
    empty_cache: bool = True,
    cpu_group=None,
) -> float:
    """
    Get available memory for `device:gpu_id`, in GiB.
    When distributed is True, the available memory is the minimum available memory of all GPUs.
    """
    if device == "cuda":
        num_gpus = torch.cuda.device_count()
        assert gpu_id < num_gpus

        if torch.cuda.current_device() != gpu_id:
            logger.warning(
                "current device is not %d, but %d, which may cause useless memory allocation for torch CUDA context.",
                gpu_id,
                torch.cuda.current_device(),
            )

        if empty_cache:
            torch.cuda.empty_cache()
        free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)

    elif device == "xpu":
        num_gpus = torch.xpu.device_count()
        assert gpu_id < num_gpus

        if torch.xpu.current_device() != gpu_id:
            logger.warning("current device is not %d, but %d", gpu_id, torch.xpu.current_device())

        if empty_cache:
            torch.xpu.empty_cache()
        used_memory = torch.xpu.memory_allocated()
        total_gpu_memory = torch.xpu.get_device_properties(gpu_id).total_memory
        free_gpu_memory = total_gpu_memory - used_memory

    elif device == "cpu":
        # TODO: rename the variables in the current function to be not GPU specific
        free_gpu_memory = psutil.virtual_memory().available

    if distributed:
        tensor = torch.tensor(free_gpu_memory, dtype=torch.float32)
        dist.all_reduce(tensor, op=dist.ReduceOp.MIN, group=cpu_group)
        free_gpu_memory = tensor.item()

    return free_gpu_memory / GiB


def get_device_total_memory(gpu_id: int) -> int:
    """Total memory of the device in bytes."""
    return torch.cuda.get_device_properties(gpu_id).total_memory


def set_memory_fraction(fraction: float, gpu_id: int) -> None:
    """Cap what the caching allocator may take so co-located processes keep their share."""
    torch.cuda.set_per_process_memory_fraction(fraction, gpu_id)


def free_device_memory() -> None:
    """Release everything the runtime still caches after a model has been dropped."""
    gc.collect()
    torch.cuda.empty_cache()  # drop cached blocks
    torch.cuda.ipc_collect()


@dataclass
class MemorySnapshot:
    """Memory snapshot of the current device."""

    torch_peak: int = 0
    free_memory: int = 0
    total_memory: int = 0
    cuda_memory: int = 0
    torch_memory: int = 0
    non_torch_memory: int = 0
    timestamp: float = 0.0
    auto_measure: bool = True

    def __post_init__(self):
        if self.auto_measure:
            self.measure()

    def measure(self):
        # we measure the torch peak memory usage via allocated_bytes,
        # rather than `torch.cuda.memory_reserved()` .
        # After `torch.cuda.reset_peak_memory_stats()`,
        # `torch.cuda.memory_reserved()` will keep growing, and only shrink
        # when we call `torch.cuda.empty_cache()` or OOM happens.
        self.torch_peak = torch.cuda.memory_stats().get("allocated_bytes.all.peak", 0)

        self.free_memory, self.total_memory = torch.cuda.mem_get_info()
        self.cuda_memory = self.total_memory - self.free_memory

        # torch.cuda.memory_reserved() is how many bytes
        # PyTorch gets from cuda (by calling cudaMalloc, etc.)
        # this is used to measure the non-torch memory usage
        self.torch_memory = torch.cuda.memory_reserved()

        self.non_torch_memory = self.cuda_memory - self.torch_memory
        self.timestamp = time.time()

    def __sub__(self, other: "MemorySnapshot") -> "MemorySnapshot":
        return MemorySnapshot(
            torch_peak=self.torch_peak - other.torch_peak,
            free_memory=self.free_memory - other.free_memory,
            total_memory=self.total_memory - other.total_memory,
            cuda_memory=self.cuda_memory - other.cuda_memory,
            torch_memory=self.torch_memory - other.torch_memory,
            non_torch_memory=self.non_torch_memory - other.non_torch_memory,
            timestamp=self.timestamp - other.timestamp,
            auto_measure=False,
        )


@dataclass
class MemoryProfilingResult:
    non_kv_cache_memory: int = 0
    torch_peak_increase: int = 0
    non_torch_increase: int = 0
    weights_memory: float = 0
    before_create: MemorySnapshot = field(default_factory=MemorySnapshot)
    before_profile: MemorySnapshot = field(default_factory=MemorySnapshot)
    after_profile: MemorySnapshot = field(default_factory=MemorySnapshot)
    profile_time: float = 0.0


class DeviceMemoryProfiler:
    """Measures how much device memory a block of code (usually model loading) allocates."""

    def __init__(self, device: Optional[torch.device] = None):
        self.device = device

    def current_memory_usage(self) -> float:
        # Return the memory usage in bytes.
        gc.collect()
        torch.cuda.reset_peak_memory_stats(self.device)
        return torch.cuda.max_memory_allocated(self.device)

    def __enter__(self):
        self.initial_memory = self.current_memory_usage()
        # This allows us to call methods of the context manager if needed
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.final_memory = self.current_memory_usage()
        self.consumed_memory = self.final_memory - self.initial_memory

        # Force garbage collection
        gc.collect()


def profile_kv_cache_budget(
    model_runner_forward,
    baseline: MemorySnapshot,
    weights_memory: int,
    gpu_memory_utilization: float,
) -> int:
    """Run one dummy forward and return how many bytes are left for the KV cache."""
    result = MemoryProfilingResult(before_create=baseline, weights_memory=weights_memory)
    gc.collect()
    torch.cuda.empty_cache()  # start from a clean allocator
    torch.cuda.reset_peak_memory_stats()
    result.before_profile.measure()
    t0 = time.time()
    model_runner_forward()
    torch.cuda.synchronize()
    result.profile_time = time.time() - t0
    result.after_profile.measure()

    diff_profile = result.after_profile - result.before_profile
    diff_from_create = result.after_profile - result.before_create
    result.torch_peak_increase = diff_profile.torch_peak
    result.non_torch_increase = diff_from_create.non_torch_memory
    result.non_kv_cache_memory = result.non_torch_increase + result.torch_peak_increase + result.weights_memory

    budget = int(baseline.total_memory * gpu_memory_utilization) - result.non_kv_cache_memory
    logger.info(
        "Memory profiling takes %.2f seconds; non-KV-cache memory %.2f GiB; KV cache budget %.2f GiB",
        result.profile_time,
        result.non_kv_cache_memory / GiB,
        budget / GiB,
    )
    return budget
