import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data.distributed import DistributedSampler

from gns import data_loader


def setup(local_rank: int, world_size: int, backend: str = "nccl"):
    """Initializes distributed training (single node, one process per GPU).

    Args:
      local_rank: rank of this process on the node (== GPU index)
      world_size: number of processes
      backend: torch.distributed backend
    """
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    # Surface NCCL errors instead of hanging forever on a crashed rank.
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend, rank=local_rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    print(f"[rank {local_rank}] initialised {backend} process group with world size {world_size}", flush=True)


def cleanup():
    dist.destroy_process_group()


def spawn_train(train_fxn, flags, world_size):
    """Spawns `world_size` training processes, one per visible GPU."""
    mp.spawn(train_fxn, args=(flags, world_size), nprocs=world_size, join=True)


def is_main_process() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_mean(value: torch.Tensor) -> torch.Tensor:
    """All-reduce a scalar metric for logging."""
    if not dist.is_initialized():
        return value
    t = value.detach().clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t / dist.get_world_size()


def broadcast_object(obj, src: int = 0):
    """Broadcast a picklable object from `src` (uses the GPU as transport with NCCL)."""
    if not dist.is_initialized():
        return obj
    container = [obj]
    dist.broadcast_object_list(container, src=src, device=torch.device("cuda", torch.cuda.current_device()))
    return container[0]


def get_data_distributed_dataloader_by_samples(path, input_length_sequence, batch_size, shuffle=True):
    """Returns a distributed dataloader.

    Args:
      path (str): Path to dataset.
      input_length_sequence (int): Length of input sequence.
      batch_size (int): Batch size.
      shuffle (bool): Whether to shuffle dataset.
    """
    dataset = data_loader.SamplesDataset(path, input_length_sequence)
    sampler = DistributedSampler(
        dataset,
        num_replicas=dist.get_world_size(),
        rank=dist.get_rank(),
        shuffle=shuffle,
    )

    return torch.utils.data.DataLoader(
        dataset=dataset,
        sampler=sampler,
        batch_size=batch_size,
        pin_memory=True,
        collate_fn=data_loader.collate_fn,
    )
