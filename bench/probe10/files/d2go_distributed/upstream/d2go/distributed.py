#!/usr/bin/env python3
# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.

"""
Similar to detectron2.engine.launch, may support a few more things:
    - support for get_local_rank.
    - support other backends like GLOO.
    - returning the outputs of every rank to the caller.
"""

import logging
import os
import socket
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

import detectron2.utils.comm as d2_comm
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

logger = logging.getLogger(__name__)

_RT = TypeVar("_RT")

DEFAULT_TIMEOUT = timedelta(minutes=30)
SUPPORTED_BACKENDS = ("NCCL", "GLOO")


@dataclass
class DistributedParams(object):
    """
    Parameters that fully describe one process of a distributed job.
    """

    local_rank: int
    machine_rank: int
    global_rank: int
    num_processes_per_machine: int
    world_size: int

    @staticmethod
    def from_environ() -> "DistributedParams":
        # Read environment variables according to the contract in:
        # https://pytorch.org/elastic/0.2.0rc1/distributed.html
        # Note that this is not a protocol, just the names used by torchrun / elastic.
        for var in ("LOCAL_RANK", "RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "WORLD_SIZE"):
            if var not in os.environ:
                raise RuntimeError(f"Environment variable {var} is not set")
        return DistributedParams(
            local_rank=int(os.environ["LOCAL_RANK"]),
            machine_rank=int(os.environ["GROUP_RANK"]),
            global_rank=int(os.environ["RANK"]),
            num_processes_per_machine=int(os.environ["LOCAL_WORLD_SIZE"]),
            world_size=int(os.environ["WORLD_SIZE"]),
        )


def get_num_processes_per_machine(backend: str) -> int:
    """Default number of workers per machine for a backend: one per GPU for NCCL,
    a single process for GLOO (CPU-only runs)."""
    if backend == "NCCL":
        return torch.cuda.device_count()
    return 1


def default_backend() -> str:
    """Backend used when the caller passes backend=None."""
    return "NCCL" if torch.cuda.is_available() else "GLOO"


def _find_free_port() -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Binding to port 0 will cause the OS to find an available port for us
    sock.bind(("", 0))
    port = sock.getsockname()[1]
    sock.close()
    # NOTE: there is still a chance the port could be taken by other processes.
    return port


def launch(
    main_func: Callable[..., _RT],
    num_processes_per_machine: int,
    num_machines: int = 1,
    machine_rank: int = 0,
    dist_url: Optional[str] = None,
    backend: Optional[str] = None,
    always_spawn: bool = False,
    timeout: timedelta = DEFAULT_TIMEOUT,
    args: Tuple[Any, ...] = (),
    kwargs: Optional[Dict[str, Any]] = None,
) -> Dict[int, _RT]:
    """
    Launch multi-process or distributed training.

    Args:
        main_func: a function that will be called by `main_func(*args, **kwargs)`
        num_processes_per_machine (int): number of processes per machine. When
            using GPUs, this should be the number of GPUs.
        num_machines (int): the total number of machines
        machine_rank (int): the rank of this machine
        dist_url (str): url to connect to for distributed jobs, including protocol
                       e.g. "tcp://127.0.0.1:8686".
                       Can be set to "auto" to automatically select a free port on localhost
        backend (str): "NCCL" or "GLOO"; None picks NCCL when a GPU is visible.
        always_spawn (bool): spawn a child process even for a single-process run.
        args (tuple): arguments passed to main_func

    Returns:
        a dict mapping each local rank (on machine 0 only) to the value returned by main_func.
    """
    kwargs = kwargs or {}
    backend = (backend or default_backend()).upper()
    if backend not in SUPPORTED_BACKENDS:
        raise ValueError(f"Unsupported backend {backend}, expected one of {SUPPORTED_BACKENDS}")

    world_size = num_machines * num_processes_per_machine
    if world_size > 1 or always_spawn:
        if dist_url == "auto":
            assert num_machines == 1, "dist_url=auto not supported in multi-machine jobs."
            port = _find_free_port()
            dist_url = f"tcp://127.0.0.1:{port}"
        if dist_url is None:
            dist_url = f"file://{tempfile.mkdtemp()}/rendezvous"
        if num_machines > 1 and dist_url.startswith("file://"):
            logger.warning("file:// is not a reliable init_method in multi-machine jobs. Prefer tcp://")

        return_file = tempfile.mktemp(suffix=".pth")
        mp.start_processes(
            _distributed_worker,
            nprocs=num_processes_per_machine,
            args=(
                main_func,
                world_size,
                num_processes_per_machine,
                machine_rank,
                dist_url,
                backend,
                return_file,
                timeout,
                args,
                kwargs,
            ),
            daemon=False,
        )
        if machine_rank == 0:
            return {
                i: torch.load(f"{return_file}.rank{i}")
                for i in range(num_processes_per_machine)
            }
        return {}
    else:
        return {0: main_func(*args, **kwargs)}


def _distributed_worker(
    local_rank: int,
    main_func: Callable[..., _RT],
    world_size: int,
    num_processes_per_machine: int,
    machine_rank: int,
    dist_url: str,
    backend: str,
    return_save_file: Optional[str],
    timeout: timedelta = DEFAULT_TIMEOUT,
    args: Tuple[Any, ...] = (),
    kwargs: Optional[Dict[str, Any]] = None,
) -> _RT:
    dist_params = DistributedParams(
        local_rank=local_rank,
        machine_rank=machine_rank,
        global_rank=machine_rank * num_processes_per_machine + local_rank,
        num_processes_per_machine=num_processes_per_machine,
        world_size=world_size,
    )
    ret = distributed_worker(
        main_func,
        args=args,
        kwargs=kwargs or {},
        backend=backend,
        init_method=dist_url,
        dist_params=dist_params,
        timeout=timeout,
    )
    if return_save_file is not None:
        # save results so the parent (rank 0 of machine 0) can read them back
        torch.save(ret, f"{return_save_file}.rank{local_rank}")
    return ret


def distributed_worker(
    main_func: Callable[..., _RT],
    args: Tuple[Any, ...],
    kwargs: Dict[str, Any],
    backend: str,
    init_method: Optional[str] = None,
    dist_params: Optional[DistributedParams] = None,
    return_save_file: Optional[str] = None,
    timeout: timedelta = DEFAULT_TIMEOUT,
) -> _RT:
    dist_params = dist_params or DistributedParams.from_environ()
    if backend == "NCCL":
        assert (
            dist_params.num_processes_per_machine <= torch.cuda.device_count()
        ), f"Only {torch.cuda.device_count()} GPUs visible, cannot start {dist_params.num_processes_per_machine} workers"

    # Set the device before init_process_group so that NCCL picks the right GPU for this rank.
    if backend == "NCCL":
        torch.cuda.set_device(dist_params.local_rank)

    logger.info(
        "Initializing process group: backend=%s, init_method=%s, world_size=%d, rank=%d",
        backend,
        init_method,
        dist_params.world_size,
        dist_params.global_rank,
    )
    dist.init_process_group(
        backend=backend,
        init_method=init_method,
        world_size=dist_params.world_size,
        rank=dist_params.global_rank,
        timeout=timeout,
    )

    # Setup the local process group (which contains ranks within the same machine)
    d2_comm.create_local_process_group(dist_params.num_processes_per_machine)

    # synchronize is needed here to prevent a possible timeout after calling init_process_group
    # See: https://github.com/facebookresearch/maskrcnn-benchmark/issues/172
    d2_comm.synchronize()

    if dist_params.global_rank == 0:
        logger.info("Process group initialized, running {}".format(main_func.__qualname__))

    try:
        return main_func(*args, **kwargs)
    finally:
        dist.barrier()
        dist.destroy_process_group()


def get_local_rank() -> int:
    """Local rank of this process, independent of how it was started."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    return d2_comm.get_local_rank()


def get_device_for_rank(backend: str) -> torch.device:
    """The device tensors of this rank should live on."""
    if backend == "NCCL":
        return torch.device("cuda", get_local_rank())
    return torch.device("cpu")
