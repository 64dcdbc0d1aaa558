"""
l2hmc/utils/dist.py

Distributed helpers shared by the lattice trainers.  A run can be launched with
`mpiexec`/`srun`/`torchrun` and use one of three backends:

    * DDP        - torch.distributed, rendezvous through MPI (mpi4py)
    * horovod    - horovod.torch
    * deepspeed  - deepspeed.init_distributed
"""
from __future__ import absolute_import, annotations, division, print_function

import datetime
import logging
import os
import socket
from typing import Any, Optional

import torch
import torch.distributed as tdist
from mpi4py import MPI

log = logging.getLogger(__name__)

BACKENDS = {
    'pytorch': ['ddp', 'DDP', 'deepspeed', 'horovod', 'hvd', 'DS'],
    'tensorflow': ['hvd', 'horovod'],
}

# module-level default device, used by the lattice and sampler code
DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'
DEVICE_TYPE = torch.device(DEVICE).type


def seed_everything(seed: int) -> None:
    import random
    import numpy as np
    os.environ['PYTHONHASHSEED'] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():  # seed the device RNGs too
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_rank() -> int:
    return MPI.COMM_WORLD.Get_rank()


def get_world_size() -> int:
    return MPI.COMM_WORLD.Get_size()


def get_local_rank() -> int:
    return int(os.environ.get(
        'PMI_LOCAL_RANK',  # PMI_* for Polaris (MPICH)
        os.environ.get(
            'OMPI_COMM_WORLD_LOCAL_RANK',  # Open MPI
            os.environ.get('SLURM_LOCALID', os.environ.get('LOCAL_RANK', '0'))
        )
    ))


def query_environment() -> dict[str, int]:
    """Query environment variables for info about distributed setup"""
    ws = os.environ.get('WORLD_SIZE', None)
    r = os.environ.get('RANK', None)
    lr = os.environ.get('LOCAL_RANK', None)
    if ws is not None and r is not None and lr is not None:
        return {
            'world_size': int(ws),
            'rank': int(r),
            'local_rank': int(lr),
        }
    return {
        'world_size': int(get_world_size()),
        'rank': int(get_rank()),
        'local_rank': int(get_local_rank()),
    }


def get_gpus_per_node() -> int:
    # return torch.cuda.device_count() if torch.cuda.is_available() else 0
    return torch.cuda.device_count()


def init_process_group(
        rank: int | str,
        world_size: int | str,
        timeout: str | int | datetime.timedelta,
        backend: Optional[str] = None,
) -> None:
    backend = (
        backend if backend is not None
        else 'nccl' if torch.cuda.is_available()
        else 'gloo'
    )
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=int(timeout))
    if not tdist.is_initialized():
        tdist.init_process_group(
            backend=backend,
            timeout=timeout,
            rank=int(rank),
            world_size=int(world_size),
            init_method='env://',
        )


def run_ddp(fn, world_size: int) -> None:
    import torch.multiprocessing as mp
    mp.spawn(fn, args=(world_size,), nprocs=world_size, join=True)


def setup_torch_DDP(port: str = '2345', timeout: int = 3600) -> dict[str, int]:
    rank = os.environ.get('RANK', None)
    world_size = os.environ.get('WORLD_SIZE', None)
    local_rank = os.environ.get('LOCAL_RANK', None)

    size = MPI.COMM_WORLD.Get_size()
    rank = MPI.COMM_WORLD.Get_rank()
    local_rank = get_local_rank()
    os.environ['WORLD_SIZE'] = str(size)
    os.environ['RANK'] = str(rank)
    os.environ['LOCAL_RANK'] = str(local_rank)
    # -- rank 0 publishes its hostname as the rendezvous address ---------
    if rank == 0:
        master_addr = socket.gethostname()
    else:
        master_addr = None
    master_addr = MPI.COMM_WORLD.bcast(master_addr, root=0)
    os.environ['MASTER_ADDR'] = master_addr
    if (eport := os.environ.get('MASTER_PORT', None)) is None:
        os.environ['MASTER_PORT'] = port
    else:
        os.environ['MASTER_PORT'] = eport
    init_process_group(
        rank=rank,
        world_size=size,
        timeout=timeout,
    )
    return {'world_size': size, 'rank': rank, 'local_rank': local_rank}


def setup_torch_distributed(
        backend: str,
        port: str = '2345',
        timeout: int = 3600,
) -> dict:
    """Returns {'world_size': int, 'rank': int, 'local_rank': int}"""
    rank = os.environ.get('RANK', None)
    size = os.environ.get('WORLD_SIZE', None)
    local_rank = os.environ.get('LOCAL_RANK', None)
    be = backend.lower()
    assert be in BACKENDS['pytorch']
    if be in ['ddp', 'DDP']:
        dsetup = setup_torch_DDP(port, timeout)
        size = dsetup['world_size']
        rank = dsetup['rank']
        local_rank = dsetup['local_rank']
    elif be in ['deepspeed', 'ds']:
        import deepspeed
        deepspeed.init_distributed(dist_backend='nccl', timeout=datetime.timedelta(seconds=timeout))
        size = tdist.get_world_size()
        rank = tdist.get_rank()
        local_rank = get_local_rank()
    elif be in ['horovod', 'hvd']:
        import horovod.torch as hvd
        if not hvd.is_initialized():
            hvd.init()
        rank = hvd.rank()
        size = hvd.size()
        local_rank = hvd.local_rank()
    else:
        raise ValueError(f'Unable to parse backend: {be}')

    if torch.cuda.is_available():
        torch.cuda.set_device(int(local_rank))
    return {'world_size': int(size), 'rank': int(rank), 'local_rank': int(local_rank)}


def setup_torch(
        backend: str = 'DDP',
        seed: Optional[int] = None,
        port: Optional[str] = '2345',
) -> int:
    import numpy as np
    dsetup = setup_torch_distributed(backend, port=str(port))
    rank = dsetup['rank']
    size = dsetup['world_size']
    local_rank = dsetup['local_rank']
    nthreads = os.environ.get('OMP_NUM_THREADS', None)
    if nthreads is not None:
        torch.set_num_threads(int(nthreads))
    # use the fp64 default throughout; gauge links are accumulated in double precision
    torch.set_default_dtype(torch.float64)
    if seed is not None:
        seed_everything(seed * (rank + 1) * (local_rank + 1))
    if rank == 0:
        log.info(f'Using device: {DEVICE}')
        log.info(f'Global Rank: {rank} / {size - 1}')
        log.info(f'[{rank}]: Local rank: {local_rank}, gpus_per_node: {get_gpus_per_node()}')
        log.info(f'[{rank}]: numpy version: {np.__version__}')
    return rank


def cleanup() -> None:
    if tdist.is_initialized():
        tdist.destroy_process_group()
