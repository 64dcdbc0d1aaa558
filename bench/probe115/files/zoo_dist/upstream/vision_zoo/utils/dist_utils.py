# Distributed helpers (pytorch / slurm / mpi launchers), adapted from mmcv.runner.dist_utils.
import functools
import os
import pickle
import subprocess
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def init_dist(launcher: str, backend: str = "nccl", **kwargs) -> None:
    # surface NCCL errors as exceptions instead of hangs
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    if mp.get_start_method(allow_none=True) is None:
        mp.set_start_method("spawn")
    if launcher == "pytorch":
        _init_dist_pytorch(backend, **kwargs)
    elif launcher == "mpi":
        _init_dist_mpi(backend, **kwargs)
    elif launcher == "slurm":
        _init_dist_slurm(backend, **kwargs)
    else:
        raise ValueError(f"Invalid launcher type: {launcher}")


def _init_dist_pytorch(backend: str, **kwargs) -> None:
    # TODO: use local_rank instead of rank % num_gpus
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(backend=backend, **kwargs)


def _init_dist_mpi(backend: str, **kwargs) -> None:
    local_rank = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    if "MASTER_PORT" not in os.environ:
        # 29500 is torch.distributed default port
        os.environ["MASTER_PORT"] = "29500"
    if "MASTER_ADDR" not in os.environ:
        raise KeyError("The environment variable MASTER_ADDR is not set")
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
    dist.init_process_group(backend=backend, **kwargs)


def _init_dist_slurm(backend: str, port: Optional[int] = None) -> None:
    """Initialize slurm distributed training environment.

    If argument ``port`` is not specified, then the master port will be system
    environment variable ``MASTER_PORT``. If ``MASTER_PORT`` is not in system
    environment variable, then a default port ``29500`` will be used.
    """
    proc_id = int(os.environ["SLURM_PROCID"])
    ntasks = int(os.environ["SLURM_NTASKS"])
    node_list = os.environ["SLURM_NODELIST"]
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(proc_id % num_gpus)
    addr = subprocess.getoutput(f"scontrol show hostname {node_list} | head -n1")
    # specify master port
    if port is not None:
        os.environ["MASTER_PORT"] = str(port)
    elif "MASTER_PORT" in os.environ:
        pass  # use MASTER_PORT in the environment variable
    else:
        # 29500 is torch.distributed default port
        os.environ["MASTER_PORT"] = "29500"
    # use MASTER_ADDR in the environment variable if it already exists
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = addr
    os.environ["WORLD_SIZE"] = str(ntasks)
    os.environ["LOCAL_RANK"] = str(proc_id % num_gpus)
    os.environ["RANK"] = str(proc_id)
    dist.init_process_group(backend=backend)


def get_dist_info() -> Tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        rank = dist.get_rank()
        world_size = dist.get_world_size()
    else:
        rank = 0
        world_size = 1
    return rank, world_size


def master_only(func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        rank, _ = get_dist_info()
        if rank == 0:
            return func(*args, **kwargs)

    return wrapper


def is_nccl_backend() -> bool:
    return dist.is_initialized() and dist.get_backend() == "nccl"


def all_reduce_mean(values: List[float], device: torch.device) -> List[float]:
    """Average python floats (loss meters, accuracies) over all ranks."""
    _, world_size = get_dist_info()
    if world_size == 1:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return (t / world_size).tolist()


def broadcast_object(obj: Any, src: int = 0) -> Any:
    """Broadcast a picklable object. NCCL needs the payload on the GPU."""
    rank, world_size = get_dist_info()
    if world_size == 1:
        return obj
    device = torch.device("cuda", torch.cuda.current_device()) if is_nccl_backend() else torch.device("cpu")
    if rank == src:
        buf = torch.frombuffer(bytearray(pickle.dumps(obj)), dtype=torch.uint8).to(device)
        size = torch.tensor([buf.numel()], dtype=torch.long, device=device)
    else:
        size = torch.tensor([0], dtype=torch.long, device=device)
    dist.broadcast(size, src)
    if rank != src:
        buf = torch.empty(int(size.item()), dtype=torch.uint8, device=device)
    dist.broadcast(buf, src)
    return pickle.loads(buf.cpu().numpy().tobytes())


def sync_random_seed(seed: Optional[int] = None, device: str = "cuda") -> int:
    """Make sure different ranks share the same seed.

    All workers must call this function, otherwise it will deadlock.
    """
    if seed is None:
        seed = np.random.randint(2**31)
    assert isinstance(seed, int)

    rank, world_size = get_dist_info()

    if world_size == 1:
        return seed

    if rank == 0:
        random_num = torch.tensor(seed, dtype=torch.int32, device=device)
    else:
        random_num = torch.tensor(0, dtype=torch.int32, device=device)
    dist.broadcast(random_num, src=0)
    return random_num.item()


def barrier_on_gpu() -> None:
    """dist.barrier() with the NCCL device set explicitly (avoids the rank->GPU guess warning)."""
    if not dist.is_initialized():
        return
    if is_nccl_backend():
        dist.barrier(device_ids=[torch.cuda.current_device()])
    else:
        dist.barrier()
