"""Small helpers shared by the multi-GPU temporal GNN trainers.

Launch with torchrun (one process per GPU):

    torchrun --nproc_per_node=8 train_dist_mem.py --data GDELT --config config/dist/TGN.yml

The trainers keep one memory-daemon group on gloo (CPU tensors of the node memory live in
shared host memory) and one NCCL group for gradient all-reduce.
"""
import datetime
import os
import socket

import torch
import torch.distributed as dist

_MEM_GROUP = None


def get_local_rank():
    return int(os.environ.get('LOCAL_RANK', 0))


def get_world_size():
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ.get('WORLD_SIZE', 1))


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def init_distributed(timeout_minutes=60):
    """Initialise torch.distributed from the torchrun environment and pin this process to its GPU.

    Returns the torch.device this rank should use.
    """
    global _MEM_GROUP
    if 'RANK' not in os.environ:
        # single process fallback (python train.py ...)
        return torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

    local_rank = get_local_rank()
    if local_rank >= torch.cuda.device_count():
        raise RuntimeError('LOCAL_RANK {} but only {} GPUs visible on {}'.format(
            local_rank, torch.cuda.device_count(), socket.gethostname()))
    torch.cuda.set_device(local_rank)

    # surface NCCL hangs as exceptions instead of blocking forever on a dead peer
    os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
    dist.init_process_group(backend='nccl', init_method='env://',
                            timeout=datetime.timedelta(minutes=timeout_minutes))
    # node memory / mailbox live in host shared memory -> their collectives go through gloo
    _MEM_GROUP = dist.new_group(backend='gloo')

    if is_main_process():
        print('initialised {} ranks, backend={}, master={}:{}'.format(
            dist.get_world_size(), dist.get_backend(), os.environ.get('MASTER_ADDR'), os.environ.get('MASTER_PORT')))
    return torch.device('cuda', local_rank)


def memory_group():
    return _MEM_GROUP


def barrier():
    if dist.is_initialized():
        if dist.get_backend() == 'nccl':
            # NCCL barrier needs to know which device to use, otherwise it guesses from the rank
            dist.barrier(device_ids=[get_local_rank()])
        else:
            dist.barrier()


def all_reduce_mean(value):
    """average a python float / 0-d tensor over all trainers (used for loss and AP logging)"""
    if not dist.is_initialized():
        return float(value)
    t = torch.tensor([float(value)], dtype=torch.float64).cuda()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).item()


def all_gather_numpy(arr):
    """gather variable-length numpy arrays from all ranks (evaluation scores)"""
    if not dist.is_initialized():
        return [arr]
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, arr, group=_MEM_GROUP)
    return out


def broadcast_state_dict(model, src=0):
    """make sure every trainer starts from identical weights (DDP does this too, but the memory
    updater is outside DDP in the memory-parallel variant)"""
    for p in model.state_dict().values():
        dist.broadcast(p, src=src)


def cleanup():
    if dist.is_initialized():
        barrier()
        dist.destroy_process_group()
    torch.cuda.empty_cache()
