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
"""Utilities for distributed training."""

import os
from datetime import timedelta


def initialize_global_process_group(timeout_second=36000):
    """Initialize the default process group from the torchrun environment.

    Returns (local_rank, rank, world_size). The current CUDA device is pinned to
    LOCAL_RANK so that subsequent ``.cuda()`` calls land on the right GPU.
    """
    import torch
    import torch.distributed

    torch.distributed.init_process_group("nccl", timeout=timedelta(seconds=timeout_second))
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    if torch.distributed.is_initialized():
        torch.cuda.set_device(local_rank)
    return local_rank, rank, world_size


def destroy_global_process_group():
    import torch.distributed

    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def is_nccl_backend() -> bool:
    """Some collectives (e.g. all_gather_into_tensor on uneven shapes) are only
    safe on NCCL; callers fall back to all_gather_object otherwise."""
    import torch.distributed

    return torch.distributed.get_backend() == "nccl"


def barrier_if_initialized():
    import torch.distributed

    if torch.distributed.is_initialized():
        torch.distributed.barrier()
