# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
"""Communicator set-up for combined data / model (spatial, matmul) parallelism.

The world is factored into a grid of ("h", "w", "fin", "fout", "ens", "batch") dimensions;
orthogonal process groups are created for every dimension so that the spatial transforms can
all-to-all within "h"/"w" while gradients are reduced over "batch" (and "ens").
"""

import os
import logging
import math
import datetime as dt
from typing import List, Union

import numpy as np
import torch
import torch.distributed as dist

# dummy placeholders
_COMM_LIST = []
_COMM_NAMES = {}
_COMM_ROOTS = {}

# world comm
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


def get_world_rank():
    if not dist.is_initialized():
        return 0
    else:
        return dist.get_rank()


def get_world_size():
    if not dist.is_initialized():
        return 1
    else:
        return dist.get_world_size()


def get_local_rank():
    if os.getenv("LOCAL_RANK") is not None:
        # Use PyTorch env var if available
        return int(os.getenv("LOCAL_RANK"))

    if not dist.is_initialized():
        return 0
    else:
        num_gpu = int(os.getenv("NGPU_PER_NODE", torch.cuda.device_count()))
        return get_world_rank() % num_gpu


def get_names():
    return _COMM_NAMES


def is_distributed(name: str):
    return name in _COMM_NAMES


# get
def init(model_parallel_sizes=[1, 1, 1, 1], model_parallel_names=["h", "w", "fin", "fout"], verbose=False):
    # call basic init first
    init_local_group()

    # set device
    local_rank = get_local_rank()
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)

    # select backend; fall back to gloo on CPU-only hosts
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    wireup_store = os.getenv("WIREUP_STORE", "tcp")
    world_size = int(os.getenv("WORLD_SIZE", 1))
    world_rank = int(os.getenv("RANK", 0))

    if world_size > 1:
        with torch.cuda.device(device):
            if wireup_store == "file":
                wireup_file_path = os.getenv("WIREUP_FILE_PATH")
                store = dist.FileStore(wireup_file_path, world_size)
            elif wireup_store == "tcp":
                # create tcp store
                master_address = os.getenv("MASTER_ADDR")
                master_port = int(os.getenv("MASTER_PORT"))
                store = dist.TCPStore(host_name=master_address, port=master_port, world_size=world_size,
                                      is_master=(world_rank == 0), timeout=dt.timedelta(seconds=900))
            else:
                raise ValueError(f"Unknown wireup store {wireup_store}")

            # initialize process groups; high-priority streams keep the spatial all-to-alls off
            # the critical path of the compute stream
            pg_options = None
            if backend == "nccl":
                pg_options = dist.ProcessGroupNCCL.Options()
                pg_options.is_high_priority_stream = True
            dist.init_process_group(backend=backend, rank=world_rank, world_size=world_size, store=store,
                                    pg_options=pg_options, device_id=device)

            # make sure every rank got here before creating the subgroups
            dist.barrier(device_ids=[local_rank])

    # get model groups
    init_model_parallel_info(model_parallel_sizes, model_parallel_names, verbose)


def init_local_group():
    """Node-local communicator, used for the shared-memory data loader and the intra-node
    all-to-all fast path."""
    global _COMM_ROOTS
    _COMM_ROOTS["local"] = 0


def init_model_parallel_info(model_parallel_sizes, model_parallel_names, verbose=False):
    world_size = get_world_size()
    world_rank = get_world_rank()

    model_parallel_size = math.prod(model_parallel_sizes)
    if world_size % model_parallel_size != 0:
        raise ValueError(f"world size {world_size} is not divisible by the model parallel size {model_parallel_size}")
    data_parallel_size = world_size // model_parallel_size

    names = list(model_parallel_names) + ["batch"]
    sizes = list(model_parallel_sizes) + [data_parallel_size]

    # rank grid: fastest varying dimension first
    grid = np.arange(world_size).reshape(list(reversed(sizes)))
    grid = np.transpose(grid, list(reversed(range(len(sizes)))))

    if verbose and world_rank == 0:
        print("Process grid:", dict(zip(names, sizes)))

    # create one orthogonal group family per dimension
    for dim, name in enumerate(names):
        if sizes[dim] == 1:
            continue
        moved = np.moveaxis(grid, dim, -1).reshape(-1, sizes[dim])
        for ranks in moved:
            ranks = ranks.tolist()
            tmp_group = dist.new_group(ranks=ranks)
            if world_rank in ranks:
                _COMM_LIST.append(tmp_group)
                _COMM_NAMES[name] = len(_COMM_LIST) - 1
                _COMM_ROOTS[name] = ranks[0]

    # matmul parallel group is the union of fin and fout
    if "fin" in _COMM_NAMES or "fout" in _COMM_NAMES:
        fin = sizes[names.index("fin")] if "fin" in names else 1
        fout = sizes[names.index("fout")] if "fout" in names else 1
        _COMM_NAMES["matmul"] = _COMM_NAMES.get("fin", _COMM_NAMES.get("fout"))

    # spatial is h x w
    if "h" in _COMM_NAMES or "w" in _COMM_NAMES:
        _COMM_NAMES["spatial"] = _COMM_NAMES.get("h", _COMM_NAMES.get("w"))

    # model is everything but batch
    _COMM_NAMES["model"] = _COMM_NAMES.get("spatial", _COMM_NAMES.get("matmul", len(_COMM_LIST)))

    if verbose:
        logging.info(f"rank {world_rank}: comms {sorted(_COMM_NAMES.keys())}")


def cleanup():
    if dist.is_initialized():
        dist.barrier(device_ids=[torch.cuda.current_device()])
        dist.destroy_process_group()
