import os
from typing import Optional

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from .logging import LOG

__all__ = [
    "init_process_group",
    "destroy_process_group",
    "get_rank",
    "get_world_size",
    "is_main_process",
    "wrap_model_by_ddp",
    "unwrap_model_by_ddp",
    "barrier",
]


def init_process_group(backend: str) -> int:
    """Initializes process group of distributed workers.

    Internally, distributed worker ranks are assigned to GPUs by
    ``LOCAL_RANK``: rank ``i`` on a node trains on ``cuda:i``.

    .. code-block:: python

        rank = d3rlpy.distributed.init_process_group("nccl")
        device = f"cuda:{rank}"

    Args:
        backend: Backend of communication. Available options are ``gloo``,
            ``mpi`` and ``nccl``.

    Returns:
        Rank of the current process.
    """
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if backend == "nccl":
        # bind this process to its GPU before NCCL creates its communicators
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend)
    LOG.info(
        "Process group initialized",
        backend=backend,
        rank=rank,
        local_rank=local_rank,
        world_size=dist.get_world_size(),
    )
    return rank


def destroy_process_group() -> None:
    """Destroys process group of distributed workers."""
    dist.destroy_process_group()


def get_rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def get_world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def is_main_process() -> bool:
    return get_rank() == 0


def barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def wrap_model_by_ddp(model: nn.Module) -> nn.Module:
    device = next(model.parameters()).device
    device_ids = [device.index] if device.type == "cuda" else None
    return DDP(model, device_ids=device_ids)  # type: ignore


def unwrap_model_by_ddp(model: nn.Module) -> nn.Module:
    if isinstance(model, DDP):
        return model.module
    return model


def all_reduce_mean(value: torch.Tensor, device: Optional[str] = None) -> torch.Tensor:
    """Averages a scalar metric over all workers (used for logging only)."""
    if not dist.is_initialized():
        return value
    tensor = value.detach().clone()
    if device is not None:
        tensor = tensor.to(device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor / dist.get_world_size()
