"""
Helpers for distributed training.

Adapted from openai/guided-diffusion. The original code spins up one process per GPU through
MPI; for MDM we mostly train on a single GPU, so most of the MPI plumbing is commented out and
`setup_dist` only remembers which device index the user asked for (``--device``).
When launched with torchrun (multi-GPU fine-tuning), RANK / WORLD_SIZE are read from the env.
"""

import io
import os
import socket

import blobfile as bf
import torch as th
import torch.distributed as dist

# Change this to reflect your cluster layout.
# The GPU for a given rank is (rank % GPUS_PER_NODE).
GPUS_PER_NODE = 8

SETUP_RETRY_COUNT = 3

used_device = 0


def is_torchrun():
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ


def setup_dist(device=0):
    """
    Setup a distributed process group.
    """
    global used_device
    used_device = device
    if dist.is_initialized():
        return

    if not is_torchrun():
        # single process, nothing to initialise.
        # os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"
        # comm = MPI.COMM_WORLD
        # backend = "gloo" if not th.cuda.is_available() else "nccl"
        return

    local_rank = int(os.environ["LOCAL_RANK"])
    used_device = local_rank
    if th.cuda.is_available():
        th.cuda.set_device(local_rank)

    backend = "gloo" if not th.cuda.is_available() else "nccl"
    if backend == "gloo":
        hostname = "localhost"
    else:
        hostname = socket.gethostbyname(socket.getfqdn())
    os.environ.setdefault("MASTER_ADDR", hostname)
    os.environ.setdefault("MASTER_PORT", str(_find_free_port()))

    dist.init_process_group(backend=backend, init_method="env://")


def world_size():
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


def get_rank():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


def is_main_process():
    return get_rank() == 0


def dev():
    """
    Get the device to use for torch.distributed.
    """
    global used_device
    if th.cuda.is_available() and used_device >= 0:
        return th.device(f"cuda:{used_device}")
    return th.device("cpu")


def load_state_dict(path, **kwargs):
    """
    Load a PyTorch file without redundant fetches across MPI ranks.
    """
    if world_size() == 1:
        return th.load(path, **kwargs)

    chunk_size = 2 ** 30  # MPI has a relatively small size limit
    if get_rank() == 0:
        with bf.BlobFile(path, "rb") as f:
            data = f.read()
        num_chunks = len(data) // chunk_size
        if len(data) % chunk_size:
            num_chunks += 1
        objs = [num_chunks]
    else:
        objs = [None]
    dist.broadcast_object_list(objs, src=0)
    num_chunks = objs[0]
    if get_rank() == 0:
        payload = [data]
    else:
        payload = [None]
    dist.broadcast_object_list(payload, src=0)
    data = payload[0]
    return th.load(io.BytesIO(data), **kwargs)


def sync_params(params):
    """
    Synchronize a sequence of Tensors across ranks from rank 0.
    """
    if world_size() == 1:
        return
    for p in params:
        with th.no_grad():
            dist.broadcast(p, 0)


def barrier():
    if world_size() > 1:
        dist.barrier()


def cleanup():
    if dist.is_initialized():
        dist.destroy_process_group()


def _find_free_port():
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("", 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        return s.getsockname()[1]
    finally:
        s.close()
