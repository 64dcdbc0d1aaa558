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

# pyre-unsafe

"""Small helpers shared by the trainers and the offline eval scripts.

Works both under ``mp.spawn`` (rank passed explicitly) and under ``torchrun``
(rank read from the environment).
"""

import datetime
import logging
import os
from typing import Any, List, Optional

import torch
import torch.distributed as dist

logger: logging.Logger = logging.getLogger(__name__)

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))


def get_rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def get_world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def is_main_process() -> bool:
    return get_rank() == 0


def num_accelerators() -> int:
    """Number of devices this process may use (respects CUDA_VISIBLE_DEVICES)."""
    return torch.cuda.device_count()


def get_device(local_rank: Optional[int] = None) -> torch.device:
    if torch.cuda.is_available():
        idx = get_local_rank() if local_rank is None else local_rank
        return torch.device("cuda", idx)
    return torch.device("cpu")


def default_backend() -> str:
    return "nccl" if torch.cuda.is_available() else "gloo"


def init_distributed_from_env(
    backend: Optional[str] = None,
    timeout: datetime.timedelta = _DEFAULT_TIMEOUT,
) -> torch.device:
    """torchrun entry: reads RANK / WORLD_SIZE / LOCAL_RANK / MASTER_* from env."""
    device = get_device()
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        backend = backend or default_backend()
        dist.init_process_group(backend=backend, timeout=timeout)
        logger.info(
            f"initialized {backend} process group: rank {dist.get_rank()}/"
            f"{dist.get_world_size()} on {device}"
        )
    if backend == "nccl":
        # NCCL needs a device-side barrier to finish communicator setup early
        # (otherwise the first collective pays ~seconds of lazy init).
        dist.barrier(device_ids=[device.index])
    return device


def all_gather_object_list(obj: Any) -> List[Any]:
    world_size = get_world_size()
    if world_size == 1:
        return [obj]
    out: List[Any] = [None] * world_size
    dist.all_gather_object(out, obj)
    return out


def all_reduce_mean(t: torch.Tensor) -> torch.Tensor:
    if get_world_size() == 1:
        return t
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / get_world_size()


def broadcast_seed(seed: int, device: torch.device) -> int:
    """Makes every rank use rank 0's seed (e.g. when seed comes from time())."""
    t = torch.tensor([seed], dtype=torch.int64, device=device)
    if get_world_size() > 1:
        dist.broadcast(t, src=0)
    return int(t.item())


def print_rank0(msg: str) -> None:
    if is_main_process():
        logger.info(msg)


def barrier() -> None:
    if get_world_size() > 1:
        dist.barrier()


def cleanup() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
