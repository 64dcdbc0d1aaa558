# SPDX-License-Identifier: Apache-2.0
"""Communicator bookkeeping for model-parallel weather models (spatial h/w, matmul, ensemble).

Wire-up can come from torchrun (env), from SLURM (srun) or from MPI (mpirun/mpiexec);
the MPI path uses mpi4py only to exchange the rendezvous address.
"""

import os
import logging
import math
import socket
from typing import List, Optional, Union

import torch
import torch.distributed as dist

import datetime as dt

# dummy placeholders
_COMM_LIST = []
_COMM_NAMES = {}
_COMM_ROOTS = {}

# world comm
_DATA_PARALLEL_GROUP = None
_MODEL_PARALLEL_GROUP = None
_LOCAL_RANK = 0
_WORLD_SIZE = 1


def get_size(comm_id: Union[str, int]) -> int:
    if isinstance(comm_id, int):
        cid = comm_id
    else:
        cid = _COMM_NAMES[comm_id] if (comm_id in _COMM_NAMES) else len(_COMM_LIST)

    if not dist.is_initialized() or (cid >= len(_COMM_LIST)):
        return 1
    else:
        return dist.get_world_size(group=_COMM_LIST[cid])


def get_rank(comm_id: Union[str, int]) -> int:
    if isinstance(comm_id, int):
        cid = comm_id
    else:
        cid = _COMM_NAMES[comm_id] if (comm_id in _COMM_NAMES) else len(_COMM_LIST)

    if not dist.is_initialized() or (cid >= len(_COMM_LIST)):
        return 0
    else:
        return dist.get_rank(group=_COMM_LIST[cid])


def get_group(comm_id: Union[str, int]):
    if isinstance(comm_id, int):
        cid = comm_id
    else:
        cid = _COMM_NAMES[comm_id] if (comm_id in _COMM_NAMES) else len(_COMM_LIST)

    if not dist.is_initialized() or (cid >= len(_COMM_LIST)):
        raise IndexError(f"Error, comm with id {comm_id} not available.")
    else:
        return _COMM_LIST[cid]


def get_root(comm_id: Union[str, int]) -> int:
    if isinstance(comm_id, str):
        cname = comm_id
    else:
        cname = _COMM_NAMES[comm_id] if (comm_id < len(_COMM_LIST)) else ""

    if not dist.is_initialized() or (cname not in _COMM_ROOTS):
        return 0
    else:
        return _COMM_ROOTS[cname]


def get_world_rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def get_world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def get_local_rank() -> int:
    return _LOCAL_RANK


def get_names() -> List[str]:
    return _COMM_NAMES


def is_distributed(name: str) -> bool:
    return name in _COMM_NAMES


def _wireup_env():
    world_size = int(os.getenv("WORLD_SIZE", 1))
    world_rank = int(os.getenv("RANK", 0))
    local_rank = int(os.getenv("LOCAL_RANK", 0))
    port = int(os.getenv("MASTER_PORT", 29500))
    master_address = os.getenv("MASTER_ADDR", "localhost")
    return world_size, world_rank, local_rank, master_address, port


def _wireup_slurm():
    world_size = int(os.getenv("SLURM_NTASKS"))
    world_rank = int(os.getenv("SLURM_PROCID"))
    local_rank = int(os.getenv("SLURM_LOCALID"))
    port = int(os.getenv("MASTER_PORT", 29500))
    # the first host in the allocation hosts the TCP store
    master_address = os.getenv("SLURM_LAUNCH_NODE_IPADDR", None)
    if master_address is None:
        master_address = os.getenv("MASTER_ADDR", "localhost")
    return world_size, world_rank, local_rank, master_address, port


def _wireup_mpi():
    from mpi4py import MPI

    mpi_comm = MPI.COMM_WORLD.Dup()
    world_size = mpi_comm.Get_size()
    world_rank = mpi_comm.Get_rank()
    my_host = socket.gethostname()
    # local rank from a shared-memory split of the world communicator
    local_comm = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED, key=world_rank)
    local_rank = local_comm.Get_rank()
    local_comm.Free()
    port = 29500
    master_address = my_host if world_rank == 0 else None
    master_address = mpi_comm.bcast(master_address, root=0)
    mpi_comm.Barrier()
    mpi_comm.Free()
    return world_size, world_rank, local_rank, master_address, port


def init(model_parallel_sizes=[1, 1, 1, 1], model_parallel_names=["h", "w", "fin", "fout"],
         data_parallel_sizes=[1, -1], data_parallel_names=["ensemble", "batch"], verbose=False):
    """Initialise torch.distributed and the model/data parallel communicators."""
    global _LOCAL_RANK, _WORLD_SIZE, _DATA_PARALLEL_GROUP, _MODEL_PARALLEL_GROUP

    wireup_info = os.getenv("WIREUP_INFO", "env")
    wireup_store = os.getenv("WIREUP_STORE", "tcp")

    if wireup_info == "mpi":
        world_size, world_rank, local_rank, master_address, port = _wireup_mpi()
    elif wireup_info == "slurm":
        world_size, world_rank, local_rank, master_address, port = _wireup_slurm()
    elif wireup_info == "env":
        world_size, world_rank, local_rank, master_address, port = _wireup_env()
    else:
        raise ValueError(f"Error, wireup-info {wireup_info} not supported")

    _LOCAL_RANK = local_rank
    _WORLD_SIZE = world_size

    # pin the device before creating any NCCL communicator
    if torch.cuda.is_available():
        device_count = torch.cuda.device_count()
        torch.cuda.set_device(local_rank % device_count)
        device = torch.device(f"cuda:{local_rank % device_count}")
    else:
        device = torch.device("cpu")

    if world_size > 1:
        with torch.no_grad():
            if wireup_store == "file":
                wireup_file_path = os.getenv("WIREUP_FILE_PATH")
                store = dist.FileStore(wireup_file_path, world_size)
            elif wireup_store == "tcp":
                store = dist.TCPStore(host_name=master_address, port=port, world_size=world_size,
                                      is_master=(world_rank == 0), timeout=dt.timedelta(seconds=900))

            dist.init_process_group(backend="nccl", store=store, rank=world_rank, world_size=world_size)

            # warmup barrier, forces NCCL communicator creation on the right device
            dist.barrier(device_ids=[device.index])

    # process 0 is logger
    is_logger = get_world_rank() == 0

    # do individual wireup for model parallel comms:
    model_parallel_size = math.prod(model_parallel_sizes)
    num_data_parallel = world_size // model_parallel_size
    data_parallel_sizes = [s if s > 0 else num_data_parallel // max(1, math.prod([x for x in data_parallel_sizes if x > 0]))
                           for s in data_parallel_sizes]

    if verbose and is_logger:
        print(f"Using model parallel sizes {model_parallel_sizes} ({model_parallel_names})")
        print(f"Using data parallel sizes {data_parallel_sizes} ({data_parallel_names})")

    if world_size > 1:
        # model parallel groups: consecutive ranks
        for i in range(num_data_parallel):
            ranks = list(range(i * model_parallel_size, (i + 1) * model_parallel_size))
            tmp_group = dist.new_group(ranks=ranks)
            if world_rank in ranks:
                _MODEL_PARALLEL_GROUP = tmp_group
        # data parallel groups: strided ranks
        for i in range(model_parallel_size):
            ranks = list(range(i, world_size, model_parallel_size))
            tmp_group = dist.new_group(ranks=ranks)
            if world_rank in ranks:
                _DATA_PARALLEL_GROUP = tmp_group

        _COMM_LIST.append(_MODEL_PARALLEL_GROUP)
        _COMM_NAMES["model"] = len(_COMM_LIST) - 1
        _COMM_LIST.append(_DATA_PARALLEL_GROUP)
        _COMM_NAMES["data"] = len(_COMM_LIST) - 1

        if verbose and is_logger:
            print("Finished creating communicators: ", list(_COMM_NAMES.keys()))

    # make sure every rank finished the wireup
    if dist.is_initialized():
        dist.barrier(device_ids=[device.index])  # all ranks done

    return device


def cleanup():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
