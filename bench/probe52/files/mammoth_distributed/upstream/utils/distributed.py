# Copyright 2022-present, Lorenzo Bonicelli, Pietro Buzzega, Matteo Boschini, Angelo Porrello, Simone Calderara.
# All rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Multi-GPU helpers for Mammoth.

Two modes are supported through `--distributed`:

- ``dp``: single process, :class:`torch.nn.DataParallel` over every visible GPU;
- ``ddp``: one process per GPU on a SLURM allocation. The first process on
  each node forks one child per extra local GPU, every process joins the same
  process group and wraps the backbone in DistributedDataParallel.
"""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn import DataParallel
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank: int, world_size: int) -> None:
    """
    Set up the distributed environment for a SLURM job.

    Args:
        rank: the rank of the current process
        world_size: the total number of processes
    """
    host = os.environ['SLURM_NODELIST'].split(',')[0]
    ephemeral_port_range = 65535 - 32768
    port = 32768 + int(os.environ['SLURM_JOBID']) % ephemeral_port_range

    os.environ['MASTER_ADDR'] = host
    os.environ['MASTER_PORT'] = str(port)

    # initialize the process group
    print(f"Running basic DDP example on rank {rank}/{world_size} (host {host}, node {os.environ['SLURMD_NODENAME']} port {port}).")
    sys.stdout.flush()
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    print("Inited")
    sys.stdout.flush()


def wait_for_master() -> None:
    """
    Wait for the master process to arrive at the barrier.

    - This is a blocking call.
    - The function is a *no-op* if the current process is the master (or DDP is not used).
    """
    if dist.is_initialized():
        dist.barrier()


def make_ddp(model: torch.nn.Module) -> DDP:
    """
    Create a DistributedDataParallel (DDP) model.

    *Note*: *DDP is not compatible with `--savecheck` as it is not possible to save the model state dict from the slave processes.*

    Args:
        model: the model to be wrapped with DDP

    Returns:
        the DDP model
    """
    if not torch.distributed.is_available() or not torch.cuda.is_available():
        raise ValueError('DDP not available!')

    rank_command = f"scontrol show jobid -d {os.environ['SLURM_JOBID']} | grep ' Nodes='"
    rank_data = os.popen(rank_command).read().splitlines()
    world = {x.split("Nodes=")[1].split(" ")[0]: int(x.split('gpu:')[1].split('(')[0]) for x in rank_data}
    world_size = sum(world.values())
    os.environ['MAMMOTH_WORLD_SIZE'] = str(world_size)

    base_rank = sum([w for x, w in world.items() if x < os.environ['SLURMD_NODENAME']])
    local_gpus = world[os.environ['SLURMD_NODENAME']]

    rankno = 0
    for r in range(local_gpus - 1):
        if os.fork() == 0:
            rankno += 1
            setup(rankno + base_rank, world_size)
            model.to(rankno)
            model.device = f"cuda:{rankno}"
            os.environ['MAMMOTH_RANK'] = str(rankno + base_rank)
            os.environ['MAMMOTH_SLAVE'] = '1'
            ddp_model = DDP(model, device_ids=[rankno])
            return ddp_model

    setup(base_rank, world_size)
    model.to(0)
    model.device = "cuda:0"
    ddp_model = DDP(model, device_ids=[0])
    os.environ['MAMMOTH_RANK'] = str(base_rank)
    return ddp_model


class CustomDP(DataParallel):
    """
    Custom DataParallel class to avoid using `.module` when accessing `intercept_names` attributes.

    Attributes:
        intercept_names (list): List of attribute names to intercept.
    """

    intercept_names = ['classifier', 'num_classes', 'set_return_prerelu']

    def __getattr__(self, name: str):
        """
        Get attribute value.

        Args:
            name (str): The name of the attribute.

        Returns:
            The value of the attribute.
        """
        if name in self.intercept_names:
            return getattr(self.module, name)
        else:
            return super().__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        """
        Set attribute value.

        Args:
            name (str): The name of the attribute.
            value: The value to be assigned to the attribute.
        """
        if name in self.intercept_names:
            setattr(self.module, name, value)
        else:
            super().__setattr__(name, value)


def make_dp(model):
    """
    Create a DataParallel (DP) model.

    Args:
        model: the model to be wrapped with DP

    Returns:
        the DP model
    """
    return CustomDP(model, device_ids=range(torch.cuda.device_count())).to('cuda:0')


def is_master() -> bool:
    """True on the process that writes logs and checkpoints."""
    return os.environ.get('MAMMOTH_SLAVE', '0') != '1'


def gather_scalar(value: float) -> float:
    """Average a python float over all the DDP processes (no-op otherwise)."""
    if not dist.is_initialized():
        return value
    t = torch.tensor([value], dtype=torch.float32, device=torch.device('cuda', int(os.environ.get('MAMMOTH_RANK', 0)) % torch.cuda.device_count()))
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).item()
