# Copyright      2021  Xiaomi Corporation        (authors: Fangjun Kuang)
#
# See ../../LICENSE for clarification regarding multiple authors
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

import logging
import os
from datetime import timedelta
from typing import Optional

import torch
from torch import distributed as dist


def setup_dist(
    rank: Optional[int] = None,
    world_size: Optional[int] = None,
    master_port: Optional[int] = None,
    use_ddp_launch: bool = False,
    master_addr: Optional[str] = None,
    timeout_minutes: int = 30,
):
    """
    Initialize the default process group.

    rank and world_size are used only if use_ddp_launch is False.
    When the script is started by torchrun (use_ddp_launch is True),
    RANK/WORLD_SIZE/LOCAL_RANK are read from the environment.

    Each process drives exactly one GPU; the GPU index equals the rank
    on a single machine.
    """
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = (
            "localhost" if master_addr is None else str(master_addr)
        )

    if "MASTER_PORT" not in os.environ:
        os.environ["MASTER_PORT"] = "12354" if master_port is None else str(master_port)

    timeout = timedelta(minutes=timeout_minutes)
    if use_ddp_launch is False:
        dist.init_process_group(
            "nccl", rank=rank, world_size=world_size, timeout=timeout
        )
        torch.cuda.set_device(rank)
    else:
        dist.init_process_group("nccl", timeout=timeout)
        local_rank = get_local_rank()
        torch.cuda.set_device(local_rank)

    logging.info(
        f"Initialized process group: backend={dist.get_backend()}, "
        f"rank={dist.get_rank()}, world_size={dist.get_world_size()}"
    )


def cleanup_dist():
    dist.destroy_process_group()


def get_world_size() -> int:
    if "WORLD_SIZE" in os.environ:
        return int(os.environ["WORLD_SIZE"])
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    else:
        return 1


def get_rank() -> int:
    if "RANK" in os.environ:
        return int(os.environ["RANK"])
    elif dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    else:
        return 0


def get_local_rank() -> int:
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    elif dist.is_available() and dist.is_initialized():
        return dist.get_rank() % torch.cuda.device_count()
    else:
        return 0


def get_local_world_size() -> int:
    if "LOCAL_WORLD_SIZE" in os.environ:
        return int(os.environ["LOCAL_WORLD_SIZE"])
    return torch.cuda.device_count()


def barrier_if_distributed():
    """Synchronize all ranks. A no-op for single-process training."""
    if dist.is_available() and dist.is_initialized():
        if dist.get_backend() == "nccl":
            # NCCL barriers need to know which device to use, otherwise
            # rank 0 may pick GPU 0 for every process and hang.
            dist.barrier(device_ids=[torch.cuda.current_device()])
        else:
            dist.barrier()


def reduce_sum_scalar(value: float, device: torch.device) -> float:
    """All-reduce a Python float across ranks (used for logging only)."""
    if not (dist.is_available() and dist.is_initialized()):
        return value
    t = torch.tensor([value], dtype=torch.float32, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.item()
