# Copyright 2022-present, Lorenzo Bonicelli, Pietro Buzzega, Matteo Boschini, Angelo Porrello, Simone Calderara.
# All rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Helpers to run a continual model on several GPUs.

Two modes are supported (``--distributed``):

* ``dp``:  single process, ``torch.nn.DataParallel`` over every visible GPU.
           The replay buffer must live on ``cuda:0`` in this mode.
* ``ddp``: one process per GPU, launched through SLURM (``srun``). The buffer
           is synchronised across processes after each task.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DataParallel
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank: int, world_size: int) -> None:
    """
    Set up the process group for distributed training using TCP.

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
    Wait for the master process to arrive.
    """
    if dist.is_initialized():
        dist.barrier()


def make_ddp(model: torch.nn.Module) -> torch.nn.Module:
    """
    Create a DistributedDataParallel (DDP) model.

    *Note*: *DDP is not fully supported yet and may have bugs.*

    Args:
        model: the model to be wrapped with DDP

    Returns:
        the model wrapped with DDP
    """
    if not torch.distributed.is_available() or not torch.cuda.is_available():
        raise ValueError('DDP not available!')

    rank_command = f"scontrol show jobid -d {os.environ['SLURM_JOBID']} | grep ' Nodes='"
    rank_data = os.popen(rank_command).read().splitlines()
    world = {x.split("Nodes=")[1].split(" ")[0]: int(x.split('GRES=gpu:')[1].split('(')[0]) for x in rank_data}
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
    """

    intercept_names = ['classifier', 'num_classes', 'set_return_prerelu']

    def __getattr__(self, name: str):
        """
        Distributes the `getattr` call to the `module` attribute of the DataParallel.

        Args:
            name: the name of the attribute to be accessed

        Returns:
            the attribute of the `module` attribute
        """
        if name in self.intercept_names:
            return getattr(self.module, name)
        else:
            return super().__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        """
        Distributes the `setattr` call to the `module` attribute of the DataParallel.

        Args:
            name: the name of the attribute to be set
            value: the value to be set
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
        the model wrapped with DP
    """
    return CustomDP(model, device_ids=range(torch.cuda.device_count())).to('cuda:0')


def sync_buffer(buffer, device) -> None:
    """
    Broadcast the replay buffer of rank 0 to every other process so that all
    replicas rehearse on the same examples.

    Args:
        buffer: the replay buffer (``utils.buffer.Buffer``)
        device: the device of the current process
    """
    if not dist.is_initialized():
        return
    for attr_str in buffer.attributes:
        if hasattr(buffer, attr_str):
            tensor = getattr(buffer, attr_str).to(device)
            dist.broadcast(tensor, src=0)
            setattr(buffer, attr_str, tensor)
    num_seen = torch.tensor([buffer.num_seen_examples], device=device)
    dist.broadcast(num_seen, src=0)
    buffer.num_seen_examples = int(num_seen.item())
