# MIT License
# Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES
#
# Process-group bookkeeping for data / model parallel training of neural
# operators. Adapted from the FourCastNet / makani communicator.

import os
import logging
import datetime as dt
from typing import Union

import torch
import torch.distributed as dist

# dummy placeholders
_DATA_PARALLEL_GROUP = None
_MODEL_PARALLEL_GROUP = None

# world comm
def get_world_size():
    if not dist.is_initialized():
        return 1
    else:
        return dist.get_world_size()


def get_world_rank():
    if not dist.is_initialized():
        return 0
    else:
        return dist.get_rank()


def get_local_rank():
    if not dist.is_initialized():
        return 0
    else:
        if os.getenv("LOCAL_RANK") is not None:
            # Use env var if available
            return int(os.getenv("LOCAL_RANK"))
        else:
            return get_world_rank() % torch.cuda.device_count()


# data parallel
def get_data_parallel_size():
    if not dist.is_initialized():
        return 1
    else:
        return dist.get_world_size(group=_DATA_PARALLEL_GROUP)


def get_data_parallel_rank():
    if not dist.is_initialized():
        return 0
    else:
        return dist.get_rank(group=_DATA_PARALLEL_GROUP)


def get_data_parallel_group():
    assert dist.is_initialized(), "Error, initialize torch.distributed first"
    return _DATA_PARALLEL_GROUP


# model parallel
def get_model_parallel_size():
    if not dist.is_initialized() or (_MODEL_PARALLEL_GROUP is None):
        return 1
    else:
        return dist.get_world_size(group=_MODEL_PARALLEL_GROUP)


def get_model_parallel_rank():
    if not dist.is_initialized() or (_MODEL_PARALLEL_GROUP is None):
        return 0
    else:
        return dist.get_rank(group=_MODEL_PARALLEL_GROUP)


def get_model_parallel_group():
    assert dist.is_initialized(), "Error, initialize torch.distributed first"
    return _MODEL_PARALLEL_GROUP


# get
def init(config, verbose=False):
    """Initialise torch.distributed from either MPI (mpirun / srun with PMI) or
    torchrun-style environment variables, then build the data- and
    model-parallel sub-groups described by ``config.distributed``."""

    # set up global and local communicator
    if config.distributed.wireup_info == "env":
        world_size = int(os.getenv("WORLD_SIZE", 1))
        world_rank = int(os.getenv("RANK", 0))
        if os.getenv("MASTER_PORT", None) is not None:
            port = int(os.getenv("MASTER_PORT"))
        else:
            port = 29500
        master_address = os.getenv("MASTER_ADDR")
    elif config.distributed.wireup_info == "mpi":
        from mpi4py import MPI

        mpi_comm = MPI.COMM_WORLD.Dup()
        world_size = mpi_comm.Get_size()
        world_rank = mpi_comm.Get_rank()

        my_host = MPI.Get_processor_name()
        try:
            master_address = MPI.COMM_WORLD.bcast(my_host if world_rank == 0 else None, root=0)
        except Exception:
            master_address = None
        port = 29500
        # every rank on a node sees the same GPU set, bind by node-local rank
        local_comm = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        os.environ["LOCAL_RANK"] = str(local_comm.Get_rank())
    else:
        raise ValueError(f"Error, wireup-info {config.distributed.wireup_info} not supported")

    # set local rank to 0 if env var not available
    local_rank = int(os.getenv("LOCAL_RANK", 0))

    if world_size > 1:
        # bind this process to its GPU before creating the NCCL communicator,
        # otherwise every rank opens a context on device 0
        torch.cuda.set_device(local_rank)

        # surface NCCL errors as exceptions instead of hangs
        os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")

        with disable_logging():
            if config.distributed.wireup_store == "file":
                wireup_file_path = os.getenv("WIREUP_FILE_PATH")
                wireup_store = dist.FileStore(wireup_file_path, world_size)
            elif config.distributed.wireup_store == "tcp":
                # create tcp store
                wireup_store = dist.TCPStore(
                    host_name=master_address,
                    port=port,
                    world_size=world_size,
                    is_master=(world_rank == 0),
                    timeout=dt.timedelta(seconds=900),
                )
            else:
                wireup_store = None

            # initialize process groups
            dist.init_process_group(
                backend="nccl",
                rank=world_rank,
                world_size=world_size,
                store=wireup_store,
            )

            # get sizes
            world_size = get_world_size()
            world_rank = get_world_rank()
            local_rank = get_local_rank()

            # barrier
            dist.barrier(device_ids=[torch.cuda.current_device()])

    # process 0 is logger
    is_logger = get_world_rank() == 0

    # get model groups
    model_group_size = config.distributed.get("model_parallel_size", 1)

    # compute data parallel size
    data_group_size = world_size // model_group_size

    if is_logger and verbose:
        print(f"Using {world_size} in {model_group_size} x {data_group_size} decomposition (#model-ranks x #data-ranks)")

    assert (model_group_size <= world_size) and (
        world_size % model_group_size == 0
    ), "Error, please make sure matmul_parallel_size * spatial_parallel_size <= world size and that world size is evenly divisible by matmul_parallel_size * spatial_parallel_size"

    # number of model groups
    num_model_groups = world_size // model_group_size

    global _DATA_PARALLEL_GROUP
    global _MODEL_PARALLEL_GROUP

    if is_logger and verbose:
        print("Starting Wireup")

    if world_size > 1:
        if model_group_size > 1:
            model_groups = []
            for i in range(num_model_groups):
                start = i * model_group_size
                end = start + model_group_size
                model_groups.append(list(range(start, end)))

            data_groups = [sorted(list(i)) for i in zip(*model_groups)]

            if is_logger and verbose:
                print("Model Parallel Groups w/ respect to world rank:")
                for grp in model_groups:
                    print(grp)

            if is_logger and verbose:
                print("Data Parallel Groups w/ respect to world rank:")
                for grp in data_groups:
                    print(grp)

            # initialize groups
            with disable_logging():
                # data groups
                for grp in data_groups:
                    tmp_group = dist.new_group(ranks=grp)
                    if world_rank in grp:
                        _DATA_PARALLEL_GROUP = tmp_group
                # model groups
                for grp in model_groups:
                    tmp_group = dist.new_group(ranks=grp)
                    if world_rank in grp:
                        _MODEL_PARALLEL_GROUP = tmp_group
        else:
            # technically unnecessary but we do it to be clean
            with disable_logging():
                _MODEL_PARALLEL_GROUP = dist.new_group(ranks=[world_rank])
                _SPATIAL_PARALLEL_GROUP = _MODEL_PARALLEL_GROUP
                _MATMUL_PARALLEL_GROUP = _MODEL_PARALLEL_GROUP
                _DATA_PARALLEL_GROUP = dist.new_group(ranks=list(range(world_size)))

    # barrier
    if dist.is_initialized():
        if dist.get_backend() == "nccl":
            dist.barrier(device_ids=[local_rank])
        else:
            dist.barrier()

    if is_logger and verbose:
        print("Finished Wireup")

    return


class disable_logging(object):
    def __init__(self, level=logging.ERROR):
        logging.disable(level=level)

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        logging.disable(level=logging.NOTSET)


def cleanup():
    """Tear down the process group at the end of training."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def all_reduce_mean(tensor: torch.Tensor, group=None) -> torch.Tensor:
    """Average ``tensor`` across ``group`` in place (no-op when not distributed)."""
    if not dist.is_initialized():
        return tensor
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=group)
    tensor /= dist.get_world_size(group=group)
    return tensor
