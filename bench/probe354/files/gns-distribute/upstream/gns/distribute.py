"""Helpers for multi-GPU training of the GNS with torch.multiprocessing + DDP.

Each spawned process owns exactly one GPU (rank == local GPU index). The
training data is sharded per rank with a DistributedSampler so every GPU sees a
different subset of the (position, particle_type, ...) windows.
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data.distributed import DistributedSampler

from gns import data_loader

# NCCL is the only backend we test multi-GPU runs with; gloo works for CPU debug runs.
DEFAULT_BACKEND = "nccl"


def setup(rank, world_size, device):
  """Initializes the distributed process group for this rank.

  Args:
    rank: unique identifier of each process (== GPU index on a single node)
    world_size: total number of processes
    device: torch device the run was started with ('cuda' for multi-GPU)
  """
  os.environ.setdefault("MASTER_ADDR", "localhost")
  os.environ.setdefault("MASTER_PORT", "29500")

  # Print which GPU each rank landed on; helpful when CUDA_VISIBLE_DEVICES is set.
  print(f"Initializing rank {rank}/{world_size} on {device}", flush=True)

  backend = os.environ.get("GNS_DIST_BACKEND", DEFAULT_BACKEND)
  dist.init_process_group(backend, rank=rank, world_size=world_size)
  torch.cuda.set_device(rank)


def cleanup():
  """Destroy the process group at the end of training."""
  dist.destroy_process_group()


def spawn_train(train_fxn, flags, world_size, device):
  """Spawns `world_size` processes that each run `train_fxn(rank, flags, world_size, device)`.

  Args:
    train_fxn: function that trains the model on one rank
    flags: dict of absl flags (absl FLAGS objects are not picklable)
    world_size: number of GPUs / processes
    device: torch device type
  """
  mp.spawn(train_fxn, args=(flags, world_size, device), nprocs=world_size, join=True)


def all_reduce_mean(value, world_size):
  """Average a python scalar (e.g. the loss) over all ranks for logging."""
  if world_size == 1 or not dist.is_initialized():
    return value
  t = torch.tensor([value], dtype=torch.float32, device=torch.cuda.current_device())
  dist.all_reduce(t, op=dist.ReduceOp.SUM)
  return (t / world_size).item()


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
