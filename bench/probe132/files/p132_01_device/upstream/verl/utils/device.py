# Copyright 2024 Bytedance Ltd. and/or its affiliates
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
"""
Tiny indirection layer so worker code does not have to spell ``torch.cuda``
everywhere. Everything in verl that needs the accelerator namespace, the
device type string or the collective backend should go through here.
"""

import logging
import os

import torch

logger = logging.getLogger(__file__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))


def is_cuda_available() -> bool:
    """Whether a CUDA device is visible to this process."""
    return torch.cuda.is_available()


def get_device_name() -> str:
    """Device type string, used for ``torch.device``, ``init_device_mesh`` and
    ``torch.autocast(device_type=...)``."""
    return "cuda"


def get_torch_device():
    """Return the torch accelerator namespace (``torch.cuda``).

    Callers use it as ``get_torch_device().empty_cache()`` or
    ``get_torch_device().current_device()``.
    """
    return torch.cuda


def get_device_id() -> int:
    """Index of the current accelerator in this process."""
    return torch.cuda.current_device()


def get_nccl_backend() -> str:
    """Collective backend name for ``torch.distributed.init_process_group``."""
    return "nccl"


def get_visible_devices_keyword() -> str:
    """Environment variable that controls device visibility for this process."""
    return "CUDA_VISIBLE_DEVICES"


def get_ray_resource_name() -> str:
    """Ray resource key that workers request in their placement-group bundles."""
    return "GPU"


def set_expandable_segments(enable: bool) -> None:
    """Toggle the caching-allocator expandable segments feature.

    Only has an effect when called before the first allocation on the device.
    """
    if not is_cuda_available():
        return
    try:
        torch.cuda.memory._set_allocator_settings(f"expandable_segments:{enable}")
    except Exception as e:  # older torch
        logger.warning(f"failed to set expandable_segments={enable}: {e}")


def device_summary() -> str:
    if not is_cuda_available():
        return "no accelerator"
    idx = get_device_id()
    props = torch.cuda.get_device_properties(idx)
    return f"{props.name} (device {idx}, {props.total_memory / 1024**3:.1f} GiB)"
