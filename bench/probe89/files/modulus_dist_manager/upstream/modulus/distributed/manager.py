# SPDX-License-Identifier: Apache-2.0
"""Distributed manager: a singleton that owns the process groups of a run.

It can be initialised from torchrun-style environment variables, from SLURM, or from
Open MPI (mpirun), so the same training script runs under `torchrun`, `srun` and
`mpirun` on the supercomputers we target.
"""

import atexit
import os
import queue
import socket
import warnings
from typing import Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist

from modulus.distributed.config import ProcessGroupConfig, ProcessGroupNode


class ModulusUndefinedGroupError(Exception):
    def __init__(self, name: str):
        super().__init__(f"Cannot find process group '{name}' in the DistributedManager")


class ModulusUninitializedDistributedManagerWarning(Warning):
    pass


class DistributedManager(object):
    """Distributed Manager for setting up distributed training environment.

    Example
    -------
    >>> DistributedManager.initialize()
    >>> manager = DistributedManager()
    >>> manager.rank
    0
    >>> manager.world_size
    1
    """

    _shared_state = {}

    def __new__(cls):
        obj = super(DistributedManager, cls).__new__(cls)
        obj.__dict__ = cls._shared_state

        # Set the defaults
        if not hasattr(obj, "_rank"):
            obj._rank = 0
        if not hasattr(obj, "_world_size"):
            obj._world_size = 1
        if not hasattr(obj, "_local_rank"):
            obj._local_rank = 0
        if not hasattr(obj, "_distributed"):
            obj._distributed = False
        if not hasattr(obj, "_device"):
            obj._device = torch.device(
                f"cuda:0" if torch.cuda.is_available() else "cpu"
            )
        if not hasattr(obj, "_cuda"):
            obj._cuda = torch.cuda.is_available()
        if not hasattr(obj, "_broadcast_buffers"):
            obj._broadcast_buffers = False
        if not hasattr(obj, "_find_unused_parameters"):
            obj._find_unused_parameters = False
        if not hasattr(obj, "_initialization_method"):
            obj._initialization_method = "None"
        if not hasattr(obj, "_groups"):
            obj._groups = {}
        if not hasattr(obj, "_group_ranks"):
            obj._group_ranks = {}
        if not hasattr(obj, "_group_names"):
            obj._group_names = {}
        if not hasattr(obj, "_is_initialized"):
            obj._is_initialized = False

        return obj

    @property
    def rank(self):
        return self._rank

    @property
    def local_rank(self):
        return self._local_rank

    @property
    def world_size(self):
        return self._world_size

    @property
    def device(self):
        return self._device

    @property
    def distributed(self):
        return self._distributed

    @property
    def cuda(self):
        """If cuda is available"""
        return self._cuda

    @property
    def group_names(self):
        return self._group_names.keys()

    def group(self, name=None):
        if name in self._groups.keys():
            return self._groups[name]
        elif name is None:
            return None
        raise ModulusUndefinedGroupError(name)

    def group_size(self, name=None):
        if name is None:
            return self._world_size
        group = self.group(name)
        return dist.get_world_size(group=group)

    def group_rank(self, name=None):
        if name is None:
            return self._rank
        group = self.group(name)
        return dist.get_rank(group=group)

    def __str__(self):
        output = (
            f"Initialized process {self.rank} of {self.world_size} using "
            f"method '{self._initialization_method}'. Device set to {str(self.device)}"
        )
        return output

    @classmethod
    def is_initialized(cls) -> bool:
        return cls._shared_state.get("_is_initialized", False)

    @staticmethod
    def get_available_backend():
        """Get communication backend"""
        if torch.cuda.is_available() and torch.distributed.is_nccl_available():
            return "nccl"
        else:
            return "gloo"

    @staticmethod
    def initialize_env():
        """Setup method using generic initialization"""
        rank = int(os.environ.get("RANK"))
        world_size = int(os.environ.get("WORLD_SIZE"))
        if "LOCAL_RANK" in os.environ:
            local_rank = int(os.environ.get("LOCAL_RANK"))
        else:
            local_rank = rank % torch.cuda.device_count()

        # Read env variables
        addr = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")

        DistributedManager.setup(
            rank=rank,
            world_size=world_size,
            local_rank=local_rank,
            addr=addr,
            port=port,
            backend=DistributedManager.get_available_backend(),
        )

    @staticmethod
    def initialize_open_mpi(addr, port):
        """Setup method using OpenMPI initialization"""
        rank = int(os.environ.get("OMPI_COMM_WORLD_RANK"))
        world_size = int(os.environ.get("OMPI_COMM_WORLD_SIZE"))
        local_rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK"))

        DistributedManager.setup(
            rank=rank,
            world_size=world_size,
            local_rank=local_rank,
            addr=addr,
            port=port,
            backend=DistributedManager.get_available_backend(),
            method="openmpi",
        )

    @staticmethod
    def initialize_slurm(port):
        """Setup method using SLURM initialization"""
        rank = int(os.environ.get("SLURM_PROCID"))
        world_size = int(os.environ.get("SLURM_NPROCS"))
        local_rank = int(os.environ.get("SLURM_LOCALID"))
        addr = os.environ.get("SLURM_LAUNCH_NODE_IPADDR")

        DistributedManager.setup(
            rank=rank,
            world_size=world_size,
            local_rank=local_rank,
            addr=addr,
            port=port,
            backend=DistributedManager.get_available_backend(),
            method="slurm",
        )

    @staticmethod
    def initialize():
        """Initialize distributed manager

        Current supported initialization methods are:
            `ENV`: PyTorch environment variable initialization
            `SLURM`: Initialization on SLURM systems.
            `OPENMPI`: Initialization for OpenMPI launchers.
        """
        if DistributedManager.is_initialized():
            warnings.warn("Distributed manager is already intialized")
            return

        addr = os.getenv("MASTER_ADDR", "localhost")
        port = os.getenv("MASTER_PORT", "12355")
        # https://pytorch.org/docs/master/notes/cuda.html#id5
        os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0"
        initialization_method = os.getenv("MODULUS_DISTRIBUTED_INITIALIZATION_METHOD")
        if initialization_method is None:
            try:
                DistributedManager.initialize_env()
            except TypeError:
                if "SLURM_PROCID" in os.environ:
                    DistributedManager.initialize_slurm(port)
                elif "OMPI_COMM_WORLD_RANK" in os.environ:
                    DistributedManager.initialize_open_mpi(addr, port)
                else:
                    warnings.warn(
                        "Could not initialize using ENV, SLURM or OPENMPI methods. "
                        "Assuming this is a single process job"
                    )
                    DistributedManager._shared_state["_is_initialized"] = True
        elif initialization_method == "ENV":
            DistributedManager.initialize_env()
        elif initialization_method == "SLURM":
            DistributedManager.initialize_slurm(port)
        elif initialization_method == "OPENMPI":
            DistributedManager.initialize_open_mpi(addr, port)
        else:
            raise RuntimeError(
                "Unknown initialization method "
                f"{initialization_method}. "
                "Supported values for "
                "MODULUS_DISTRIBUTED_INITIALIZATION_METHOD are "
                "ENV, SLURM and OPENMPI"
            )

        # Set per rank numpy random seed for data sampling
        np.random.seed(seed=DistributedManager().rank)

    @staticmethod
    def setup(
        rank=0,
        world_size=1,
        local_rank=None,
        addr="localhost",
        port="12355",
        backend="nccl",
        method="env",
    ):
        """Set up PyTorch distributed process group and update manager attributes"""
        os.environ["MASTER_ADDR"] = addr
        os.environ["MASTER_PORT"] = str(port)

        DistributedManager._shared_state["_is_initialized"] = True
        manager = DistributedManager()

        manager._distributed = torch.distributed.is_available()
        if manager._distributed:
            # Update rank and world_size if using distributed
            manager._rank = rank
            manager._world_size = world_size
            if local_rank is None:
                manager._local_rank = rank % torch.cuda.device_count()
            else:
                manager._local_rank = local_rank

        manager._device = torch.device(
            f"cuda:{manager.local_rank}" if torch.cuda.is_available() else "cpu"
        )

        if manager._distributed:
            # Setup distributed process group
            try:
                dist.init_process_group(
                    backend,
                    rank=manager.rank,
                    world_size=manager.world_size,
                    device_id=manager.device,
                )
            except TypeError:
                # device_id only introduced in PyTorch 2.3
                dist.init_process_group(
                    backend,
                    rank=manager.rank,
                    world_size=manager.world_size,
                )

        if torch.cuda.is_available():
            # Set device for this process and empty cache to optimize memory usage
            torch.cuda.set_device(manager.device)
            torch.cuda.device(manager.device)
            torch.cuda.empty_cache()

        manager._initialization_method = method

    @staticmethod
    def create_process_subgroup(
        name: str, size: int, group_name: Optional[str] = None, verbose: bool = False
    ):
        """Create a process subgroup of a parent process group."""
        manager = DistributedManager()
        if not manager.distributed:
            raise AssertionError(
                "torch.distributed is unavailable. "
                "Check pytorch version to ensure distributed is available."
            )
        if name in manager._groups:
            raise AssertionError(f"Group with name {name} already exists")

        group = manager._groups[group_name] if group_name else None
        group_size = dist.get_world_size(group=group)
        num_groups = manager.world_size // group_size

        manager._group_names[name] = name
        for i in range(num_groups):
            for j in range(group_size // size):
                ranks = list(range(i * group_size + j * size, i * group_size + (j + 1) * size))
                tmp_group = dist.new_group(ranks=ranks)
                if manager.rank in ranks:
                    manager._groups[name] = tmp_group
                    manager._group_ranks[name] = ranks

        if verbose and manager.rank == 0:
            print(f"Process group '{name}' with size {size} created")

    @staticmethod
    def create_groups_from_config(config: ProcessGroupConfig, verbose: bool = False):
        q = queue.Queue()
        for node in config.get_root_nodes():
            q.put(node)
        while not q.empty():
            node = q.get()
            parent = config.get_parent(node)
            DistributedManager.create_process_subgroup(
                node, config.get_size(node), group_name=parent, verbose=verbose
            )
            for child in config.get_children(node):
                q.put(child)

    @atexit.register
    @staticmethod
    def cleanup():
        """Clean up distributed group and singleton"""
        if "_is_initialized" in DistributedManager._shared_state:
            if DistributedManager._shared_state["_is_initialized"]:
                if (
                    "_distributed" in DistributedManager._shared_state
                    and DistributedManager._shared_state["_distributed"]
                ):
                    if torch.cuda.is_available():  # NCCL barrier wants device ids
                        dist.barrier(device_ids=[DistributedManager().local_rank])
                    else:
                        dist.barrier()
                    dist.destroy_process_group()
        DistributedManager._shared_state = {}
